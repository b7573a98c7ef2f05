"""One writer per results file, columns matched by name, and only regular files as stores.

A store is locked while it is open (``.NAME.lock`` beside it, holding the writer's pid): a
second writer is refused in one line naming the store and the holder's pid, and a lock left by
a writer that died is taken over with a note. Resuming a CSV file whose header lists the same
columns in another order appends under the file's own header; a file of other columns is
refused and left byte for byte as it was. The property at the end runs two real ``accelsim
sweep`` processes onto one store.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweep_stubs import GATE_ENV, TINY_WORKLOAD, fast_eval

from accelsim.cli import build_parser, main
from accelsim.errors import ConfigError
from accelsim.sweep.evaluate import SweepContext
from accelsim.sweep.runner import run_sweep
from accelsim.sweep.space import load_spec
from accelsim.sweep.store import ResultStore, read_results

COLUMNS = ["x", "y", "point_id", "error"]


def rows(ids):
    return [{"x": i, "y": 2.0 * i, "point_id": f"p{i}", "error": ""} for i in ids]


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def lock_of(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


# --- columns by name -------------------------------------------------------------------------

def test_resume_onto_a_csv_of_another_column_order_writes_under_its_header(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("point_id,y,error,x\np0,0.0,,0\np1,2.0,,1\n")
    store = ResultStore(path, COLUMNS, resume=True)
    assert store.done == {"p0", "p1"}
    store.add(rows([2, 3]))
    store.close()
    assert path.read_text().splitlines()[0] == "point_id,y,error,x"  # the header is kept
    df = read_results(path)
    assert list(df["point_id"]) == ["p0", "p1", "p2", "p3"]
    assert df["x"].tolist() == [0, 1, 2, 3]  # each value under its own name
    assert df["y"].tolist() == [0.0, 2.0, 4.0, 6.0]


@pytest.mark.parametrize("body", [
    "x,z,point_id,error\np0,1,p0,\n",          # another column
    "x,point_id,error\n0,p0,\n",               # one missing
    "x,y,point_id,error,extra\n0,0.0,p0,,1\n",  # one more
    "x,y,y,point_id\n",                        # a header only, one name twice
], ids=["other", "missing", "extra", "header_only"])
def test_resume_refuses_a_csv_of_other_columns_and_leaves_it_untouched(tmp_path, body):
    path = tmp_path / "r.csv"
    path.write_bytes(body.encode() + b"torn,row")  # damage that a repair would cut
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="other parameters or metrics") as err:
        ResultStore(path, COLUMNS, resume=True)
    assert str(path) in str(err.value)
    assert path.read_bytes() == before
    assert not lock_of(path).exists()


def test_resume_refuses_a_parquet_of_other_columns_and_leaves_it_untouched(tmp_path):
    path = tmp_path / "r.parquet"
    pd.DataFrame({"x": [1], "z": [2.0], "point_id": ["p1"], "error": [""]}).to_parquet(path)
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="columns"):
        ResultStore(path, COLUMNS, resume=True)
    assert path.read_bytes() == before


def test_a_foreign_one_line_file_is_refused_not_emptied(tmp_path):
    """A torn header of ours (a kill while writing it) starts afresh; any other one-line file
    without a newline is not a results file and is left alone."""
    path = tmp_path / "r.csv"
    path.write_bytes(b"hello, this is my file")
    with pytest.raises(ConfigError, match="not a sweep results file"):
        ResultStore(path, COLUMNS, resume=True)
    assert path.read_bytes() == b"hello, this is my file"


# --- the lock ---------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_second_writer_is_refused_naming_the_store_and_the_holder(tmp_path, suffix):
    path = tmp_path / f"r{suffix}"
    first = ResultStore(path, COLUMNS)
    assert lock_of(path).read_text().strip() == str(os.getpid())
    with pytest.raises(ConfigError) as err:
        ResultStore(path, COLUMNS, resume=True)
    line = str(err.value)
    assert str(path) in line and f"pid {os.getpid()}" in line and "\n" not in line
    first.add(rows([0]))
    first.close()
    assert not lock_of(path).exists()  # given back on close
    again = ResultStore(path, COLUMNS, resume=True)
    assert again.done == {"p0"}
    again.close()


def test_a_refused_open_gives_the_lock_back(tmp_path):
    path = tmp_path / "r.csv"
    ResultStore(path, COLUMNS).close()
    with pytest.raises(ConfigError, match="already exists"):
        ResultStore(path, COLUMNS)
    assert not lock_of(path).exists()


def test_a_stale_lock_of_a_dead_writer_is_taken_over_with_a_note(tmp_path):
    path = tmp_path / "r.csv"
    pid = dead_pid()
    lock_of(path).write_text(f"{pid}\n")
    store = ResultStore(path, COLUMNS)
    assert store.lock_note is not None and f"pid {pid}" in store.lock_note
    assert lock_of(path).read_text().strip() == str(os.getpid())
    store.close()
    assert not lock_of(path).exists()


def test_a_lock_file_holding_garbage_is_taken_over(tmp_path):
    path = tmp_path / "r.parquet"
    lock_of(path).write_bytes(b"\x00\xffnot a pid")
    store = ResultStore(path, COLUMNS)
    assert store.lock_note is None
    store.close()


def test_the_run_prints_the_takeover_note(tmp_path, write_spec, capsys):
    spec = write_spec({"hardware": "scalesim_default", "workload": "tiny",
                       "parameters": {"compute.array.rows": [8, 16]}})
    out = tmp_path / "r.csv"
    pid = dead_pid()
    lock_of(out).write_text(f"{pid}\n")
    run_sweep(spec, out, workers=1, evaluator=fast_eval, progress=False)
    err = capsys.readouterr().err
    assert f"pid {pid}" in err and "stale lock" in err
    assert len(read_results(out)) == 2


# --- special files ------------------------------------------------------------------------------

@pytest.mark.parametrize("resume", [False, True])
def test_a_fifo_is_refused_as_a_store_without_blocking(tmp_path, resume):
    path = tmp_path / "r.csv"
    os.mkfifo(path)
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="FIFO"):
        ResultStore(path, COLUMNS, resume=resume)
    assert time.monotonic() - t0 < 1.0
    assert not lock_of(path).exists()


def test_devices_and_sockets_are_refused_as_stores(tmp_path):
    with pytest.raises(ConfigError, match="character device"):
        ResultStore("/dev/zero", COLUMNS, force=True)
    with pytest.raises(ConfigError, match="regular file"):  # a tty, a pipe or a file: refused
        ResultStore("/dev/stdout", COLUMNS, resume=True)
    sock_path = tmp_path / "s.parquet"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        with pytest.raises(ConfigError, match="socket"):
            ResultStore(sock_path, COLUMNS, resume=True)


@pytest.mark.parametrize("flags", [{}, {"force": True}, {"resume": True}])
def test_dev_null_as_a_store_discards_the_rows_and_stays_a_device(flags):
    before = set(os.listdir("/dev"))
    store = ResultStore(os.devnull, COLUMNS, min_interval_s=0, **flags)
    assert store.add(rows([0, 1])) == 2
    store.close()
    assert len(store) == 2  # counted, not kept anywhere
    assert not os.path.isfile(os.devnull) and os.path.exists(os.devnull)
    assert set(os.listdir("/dev")) == before  # no lock or temporary file made there


def test_a_sweep_onto_dev_null_runs_every_point(write_spec):
    spec = write_spec({"hardware": "scalesim_default", "workload": "tiny",
                       "parameters": {"compute.array.rows": [8, 16, 32]}})
    summary = run_sweep(spec, os.devnull, workers=1, evaluator=fast_eval, progress=False)
    assert summary.evaluated == 3 and summary.errors == 0


def test_a_fifo_is_refused_as_a_spec_without_blocking(tmp_path):
    path = tmp_path / "s.yaml"
    os.mkfifo(path)
    with pytest.raises(ConfigError, match="FIFO"):
        load_spec(path)


# --- two real sweeps onto one store (property) ---------------------------------------------------

PARAMS = {"compute.array.rows": [8, 16, 32], "compute.array.cols": [8, 16]}
N_POINTS = 6


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("two_writers")
    build_parser()  # import every subcommand once, here, not in each forked child
    (d / "w.yaml").write_text(yaml.safe_dump(TINY_WORKLOAD))
    (d / "s.yaml").write_text(yaml.safe_dump({"hardware": "scalesim_default",
                                              "workload": str(d / "w.yaml"),
                                              "parameters": PARAMS}))
    return d / "s.yaml"


def _child(argv: list[str], err_path: str, gate: str) -> None:
    """A forked ``accelsim`` process: stderr to a file, exit with main's code."""
    os.environ[GATE_ENV] = gate
    with open(err_path, "w") as err:
        sys.stderr = err
        rc = main(argv)
        err.flush()
    os._exit(rc)


def _prefill(spec_file: Path, out: Path, keep: int, shuffle: bool) -> None:
    """A store holding the last ``keep`` points (so the first two are still to do)."""
    run_sweep(spec_file, out, workers=1, evaluator=fast_eval, progress=False)
    if out.suffix == ".csv":
        df = pd.read_csv(out, dtype={"point_id": str, "error": str}, keep_default_na=False)
        df = df.iloc[len(df) - keep:]
        if shuffle:
            df = df[list(reversed(df.columns))]
        df.to_csv(out, index=False)
    else:
        df = pd.read_parquet(out)
        df.iloc[len(df) - keep:].to_parquet(out, index=False)


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(["csv", "parquet"]), keep=st.integers(0, N_POINTS - 2),
       shuffle=st.booleans(), stale=st.booleans(), resume=st.booleans())
def test_two_sweeps_onto_one_store_one_wins_and_no_row_is_lost_or_doubled(
        spec_file, tmp_path_factory, fmt, keep, shuffle, stale, resume):
    d = tmp_path_factory.mktemp("run")
    out = d / f"r.{fmt}"
    if keep:
        _prefill(spec_file, out, keep, shuffle)
        resume = True
    if stale:
        lock_of(out).write_text(f"{dead_pid()}\n")
    gate = d / "gate"
    argv = ["sweep", str(spec_file), "--out", str(out), "--workers", "1", "--quiet",
            "--evaluator", "sweep_stubs:gated_eval"] + (["--resume"] if resume else [])
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_child, args=(argv, str(d / f"err{i}"), str(gate)))
             for i in range(2)]
    for p in procs:
        p.start()
    # the winner waits at its second point (store open, lock held) until the gate opens
    deadline = time.monotonic() + 30
    while all(p.exitcode is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.005)
    gate.touch()
    for p in procs:
        p.join(30)
    codes = sorted(p.exitcode for p in procs)
    assert codes == [0, 2], codes
    winner = next(p for p in procs if p.exitcode == 0)
    loser = next(i for i, p in enumerate(procs) if p.exitcode == 2)
    lines = [ln for ln in (d / f"err{loser}").read_text().splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert str(out) in lines[0] and f"pid {winner.pid}" in lines[0]
    expected = {SweepContext.from_spec(load_spec(spec_file), fast_eval).point_id(p)
                for p in load_spec(spec_file).points()}
    df = read_results(out)
    assert set(df["point_id"]) == expected and len(expected) == N_POINTS
    # every value under its own name, whatever the column order on disk
    want = [fast_eval(None, {"compute.array.rows": r, "compute.array.cols": c})["cycles"]
            for r, c in zip(df["compute.array.rows"], df["compute.array.cols"])]
    assert df["cycles"].tolist() == pytest.approx(want)
    if fmt == "csv":
        assert len(out.read_text().splitlines()) == 1 + N_POINTS
    else:
        assert len(pd.read_parquet(out)) == N_POINTS
    assert not lock_of(out).exists()
