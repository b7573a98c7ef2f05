"""``accelsim sweep``: writes the results file; bad input is one line; Ctrl-C leaves a resumable
file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from sweep_stubs import grid_spec

from accelsim.cli import main
from accelsim.sweep.evaluate import SweepContext
from accelsim.sweep.space import load_spec
from accelsim.sweep.store import read_results

ROOT = Path(__file__).resolve().parents[2]



def default_sigint() -> None:
    """In the child: SIGINT back to its default, so Python installs its KeyboardInterrupt
    handler even when this test runs under a shell that ignores SIGINT (a background job)."""
    import signal as _signal

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)

def test_cli_sweep_writes_one_row_per_point(cli, write_spec, tmp_path, capsys):
    spec = write_spec(grid_spec(metrics=["total_cycles", "area_mm2"]))
    out = tmp_path / "r.csv"
    done = cli("sweep", str(spec), "--out", str(out), "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert "24 points evaluated (0 already done)" in done.stderr
    assert "pt/s" in done.stderr and "ETA" in done.stderr  # the progress bar
    df = read_results(out)
    assert len(df) == 24 and (df["error"] == "").all() and (df["total_cycles"] > 0).all()

    # the same command again, in this process (faster than a new interpreter)
    assert main(["sweep", str(spec), "--out", str(out)]) == 2
    assert "already exists; pass --resume" in capsys.readouterr().err
    assert main(["sweep", str(spec), "--out", str(out), "--resume", "--quiet"]) == 0
    assert "0 points evaluated (24 already done)" in capsys.readouterr().err


def test_cli_bad_input_is_one_line_and_exit_2(write_spec, tmp_path, capsys):
    spec = write_spec(grid_spec(parameters={"compute.array.rowz": [8]}))
    out = tmp_path / "r.parquet"
    assert main(["sweep", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "compute.array.rowz" in err and str(spec) in err
    assert not out.exists()
    good = write_spec(grid_spec(), name="good.yaml")
    for args, message in [(["--workers", "0"], "--workers = 0: must be within 1.."),
                          (["--evaluator", "nowhere:f"],
                           "--evaluator = 'nowhere:f': cannot import"),
                          (["--resume", "--force"], "choose one of --resume and --force")]:
        assert main(["sweep", str(good), "--out", str(out), *args]) == 2
        assert message in capsys.readouterr().err
    assert not out.exists()


def test_cli_scheduler_without_a_cluster_is_one_line(write_spec, tmp_path, capsys):
    dask = pytest.importorskip("dask")
    spec = write_spec(grid_spec())
    out = tmp_path / "r.parquet"
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main(["sweep", str(spec), "--out", str(out),
                     "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("accelsim: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert err.count("\n") == 1 and not out.exists()


def test_ctrl_c_leaves_a_valid_resumable_file(write_spec, tmp_path):
    """SIGINT to a running ``accelsim sweep``: exit 130, a readable file of unique finished
    rows, and ``--resume`` completes the sweep without evaluating those rows again.

    The points are evaluated by a stub that sleeps 50 ms each (``--evaluator``), so that the
    sweep (120 points, ~3 s on 2 workers) is still running when the signal comes."""
    spec_path = write_spec(grid_spec(constraints=None, parameters={
        "compute.array.rows": [8, 16, 32, 64, 128], "compute.array.cols": [8, 16, 32, 64],
        "memory.sram.capacity_bytes": ["1 MiB", "2 MiB"], "dataflow": ["os", "ws", "is"]}))
    out = tmp_path / "r.parquet"
    here = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(here)])}
    cmd = [sys.executable, "-m", "accelsim", "sweep", str(spec_path), "--out", str(out),
           "--workers", "2", "--evaluator", "sweep_stubs:sleepy_eval"]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the sweep finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "rerun with --resume" in err and "Traceback" not in err
    partial = pd.read_parquet(out)  # a valid Parquet file, readable by anyone
    spec = load_spec(spec_path)
    total = len(spec.points())
    assert 0 < len(partial) < total and partial["point_id"].is_unique
    resumed = subprocess.run(cmd + ["--resume", "--quiet"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert (f"{total - len(partial)} points evaluated ({len(partial)} already done)"
            in resumed.stderr)
    df = read_results(out)
    ctx = SweepContext.from_spec(spec)
    assert len(df) == total and set(df["point_id"]) == {ctx.point_id(p) for p in spec.points()}
    assert len(pd.read_parquet(out)) == total  # no duplicates on disk either
