"""Property: however a sweep is interrupted and resumed — Ctrl-C (SIGINT) after any number of
rows, a hard kill (SIGKILL) leaving a file cut at any byte, garbage appended to its tail — the
finished results hold every point exactly once.

The property runs in-process on many generated histories (Ctrl-C is the ``KeyboardInterrupt``
that SIGINT raises; a kill is simulated by cutting the file where a kill during an append could
leave it, or, for Parquet's atomic rewrites, by a stray temporary file); one test sends real
SIGINT and SIGKILL to a real ``accelsim sweep`` process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.sweep.evaluate import SweepContext
from accelsim.sweep.runner import run_sweep
from accelsim.sweep.space import load_spec
from accelsim.sweep.store import read_results

ROOT = Path(__file__).resolve().parents[2]
PARAMS = {"compute.array.rows": [8, 16, 32, 64, 128], "compute.array.cols": [8, 16, 32, 64],
          "dataflow": ["os", "ws"]}
"""40 points."""



def default_sigint() -> None:
    """In the child: SIGINT back to its default, so Python installs its KeyboardInterrupt
    handler even when this test runs under a shell that ignores SIGINT (a background job)."""
    import signal as _signal

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)

def toy_eval(ctx, point):
    """A deterministic made-up metric (no simulator: the property is about the store)."""
    return {"cycles": float(point["compute.array.rows"] * 1000 + point["compute.array.cols"])}


class Interrupt:
    """Raise KeyboardInterrupt (what SIGINT raises) once ``after`` rows have arrived."""

    def __init__(self, after: int) -> None:
        self.after, self.seen = after, 0

    def __call__(self, rows) -> None:
        self.seen += len(rows)
        if self.seen >= self.after:
            raise KeyboardInterrupt


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("resume")
    (d / "w.yaml").write_text("name: w\nops:\n  - {op: gemm, name: g, m: 64, n: 64, k: 64}\n")
    (d / "s.yaml").write_text(yaml.safe_dump({"hardware": "scalesim_default",
                                              "workload": str(d / "w.yaml"),
                                              "parameters": PARAMS}))
    return d / "s.yaml"


EVENT = st.one_of(
    st.tuples(st.just("sigint"), st.integers(1, 45)),
    st.tuples(st.just("kill_cut"), st.floats(0.0, 1.0)),
    st.tuples(st.just("garbage"), st.binary(min_size=1, max_size=300)),
)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(["csv", "parquet"]), history=st.lists(EVENT, min_size=1, max_size=5))
def test_any_interrupted_history_ends_with_every_point_once(spec_file, tmp_path_factory, fmt,
                                                             history):
    spec = load_spec(spec_file)
    out = tmp_path_factory.mktemp("run") / f"r.{fmt}"
    for kind, arg in history:
        if kind == "sigint":
            try:
                run_sweep(spec, out, workers=1, resume=out.exists(), evaluator=toy_eval,
                          progress=False, on_rows=Interrupt(arg))
            except KeyboardInterrupt:
                pass
        elif not out.exists():
            continue
        elif kind == "kill_cut" and fmt == "csv":  # a kill during an append: any prefix
            data = out.read_bytes()
            out.write_bytes(data[: int(len(data) * arg)])
        elif kind == "kill_cut":  # Parquet is rewritten atomically: a kill leaves the temp file
            out.with_name(f".{out.name}.tmp").write_bytes(b"PAR1 half" * int(1 + arg * 50))
        elif fmt == "csv":
            with open(out, "ab") as fh:
                fh.write(arg)
    run_sweep(spec, out, workers=1, resume=out.exists(), evaluator=toy_eval, progress=False)
    ctx = SweepContext.from_spec(spec, toy_eval)
    expected = {ctx.point_id(p) for p in spec.points()}
    df = read_results(out)
    assert set(df["point_id"]) == expected
    if fmt == "csv":  # no duplicate row on disk either
        with open(out, newline="") as fh:
            lines = fh.read().splitlines()
        assert len(lines) == 1 + len(expected)
    else:
        import pandas as pd

        assert len(pd.read_parquet(out)) == len(expected)


def test_real_sigint_sigkill_and_garbage_keep_every_point_once(tmp_path):
    """A real ``accelsim sweep`` (CSV store, a sleepy evaluator): SIGINT, then SIGKILL of the
    resumed run, then a garbage tail without a newline; the last resume completes the sweep
    with every point exactly once."""
    (tmp_path / "w.yaml").write_text("name: w\nops:\n"
                                     "  - {op: gemm, name: g, m: 64, n: 64, k: 64}\n")
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({
        "hardware": "scalesim_default", "workload": str(tmp_path / "w.yaml"),
        "parameters": PARAMS}))
    (tmp_path / "sleepy.py").write_text(
        "import time\n\ndef evaluate(ctx, point):\n    time.sleep(0.05)\n"
        "    return {'cycles': float(point['compute.array.rows'])}\n")
    out = tmp_path / "r.csv"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    cmd = [sys.executable, "-m", "accelsim", "sweep", str(tmp_path / "s.yaml"), "--out", str(out),
           "--workers", "1", "--quiet", "--evaluator", "sleepy:evaluate"]

    def start_and_signal(sig: int, extra: list[str], min_lines: int) -> subprocess.Popen:
        proc = subprocess.Popen(cmd + extra, env=env, stderr=subprocess.PIPE, text=True,
                                preexec_fn=default_sigint)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= min_lines:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the sweep finished before it could be interrupted"
        proc.send_signal(sig)
        _, proc.err_text = proc.communicate(timeout=60)
        return proc

    first = start_and_signal(signal.SIGINT, [], 3)
    assert first.returncode == 130, first.err_text
    n_after_int = out.read_bytes().count(b"\n")
    second = start_and_signal(signal.SIGKILL, ["--resume"], n_after_int + 2)
    assert second.returncode == -signal.SIGKILL
    with open(out, "ab") as fh:
        fh.write(b"\x00\xffgarbage without a newline" * 5000)
    done = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    spec = load_spec(tmp_path / "s.yaml")
    df = read_results(out)
    assert len(df) == len(spec.points()) == 40
    lines = out.read_bytes().splitlines()
    assert len(lines) == 41 and len(set(lines)) == 41
