"""Hostile sweep stores, scheduler addresses and sweep sizes: one line, exit 2, fast.

Cases of the hostile-input corpus (same :class:`~hostile_files.Case` table and same in-process
runner as ``test_corpus.py``, kept in a file of their own): a FIFO, a device (``/dev/null``
excepted: it discards the rows) or a socket as the results file or the spec, or a store path
under ``/dev`` or ``/proc`` (refused before they are opened, so nothing blocks), a store of other
columns (refused, left untouched), a store another writer holds (named with its pid), malformed
or refused Dask scheduler addresses (checked before connecting; a refused port is told at once),
and grids too large to enumerate, refused from the spec alone before any value is built. Each
case must finish within :data:`CASE_S`.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
import yaml
from hostile_driver import run_case
from hostile_files import TINY, Case, FileBody, _dump

from accelsim.sweep.lock import StoreLock

CASE_S = 2.0
"""Wall-time bound of one case (s)."""

_HELD: list[StoreLock] = []
"""Locks held by this process for the ``locked`` cases (given back after each test)."""


def _fifo(p: Path) -> None:
    os.mkfifo(p)


def _socket(p: Path) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(p))  # the socket file stays after the socket is closed


def _held_store(p: Path) -> None:
    p.write_text("compute.array.rows,point_id,error\n")
    lock = StoreLock(p)
    lock.acquire()
    _HELD.append(lock)


SPEC = {"hardware": "scalesim_default", "workload": "{d}/w.yaml",
        "parameters": {"compute.array.rows": [16, 32]}}


def _spec(**kw: object) -> dict[str, FileBody]:
    return {"s.yaml": _dump({**SPEC, **kw}), "w.yaml": TINY}


def _sweep(out: str, *extra: str) -> tuple[str, ...]:
    return ("sweep", "{d}/s.yaml", "--out", out, "--workers", "1", "--quiet", *extra)


def store_cases() -> list[Case]:
    """Special files, foreign and locked stores."""
    other_parquet = {"x": [1], "point_id": ["p"], "error": [""]}

    def parquet(p: Path) -> None:
        import pandas as pd

        pd.DataFrame(other_parquet).to_parquet(p)

    table = {
        "fifo_resume": (_sweep("{d}/r.csv", "--resume"), {"r.csv": _fifo}, ("r.csv", "FIFO")),
        "fifo_new": (_sweep("{d}/r.parquet"), {"r.parquet": _fifo}, ("r.parquet", "FIFO")),
        "fifo_force": (_sweep("{d}/r.csv", "--force"), {"r.csv": _fifo}, ("r.csv", "FIFO")),
        "dev_zero": (_sweep("/dev/zero", "--force"), {}, ("/dev/zero", "character device")),
        "dev_zero_resume": (_sweep("/dev/zero", "--resume"), {}, ("/dev/zero", "device")),
        "dev_stdout": (_sweep("/dev/stdout"), {}, ("/dev/stdout", "regular file")),
        "proc_fd": (_sweep("/proc/self/fd/1", "--resume"), {}, ("/proc/self/fd/1", "regular file")),
        "socket": (_sweep("{d}/r.csv", "--resume"), {"r.csv": _socket}, ("r.csv", "socket")),
        "spec_fifo": (_sweep("{d}/r.csv"), {"s.yaml": _fifo}, ("s.yaml", "FIFO")),
        "other_columns_csv": (_sweep("{d}/r.csv", "--resume"),
                              {"r.csv": "x,point_id,error\n1,p,\n"}, ("r.csv", "columns")),
        "other_columns_parquet": (_sweep("{d}/r.parquet", "--resume"), {"r.parquet": parquet},
                                  ("r.parquet", "columns")),
        "foreign_one_line": (_sweep("{d}/r.csv", "--resume"), {"r.csv": "my notes, no newline"},
                             ("r.csv", "not a sweep results file")),
        "locked": (_sweep("{d}/r.csv", "--resume"), {"r.csv": _held_store},
                   ("r.csv", f"pid {os.getpid()}", "another sweep")),
        "locked_force": (_sweep("{d}/r.csv", "--force"), {"r.csv": _held_store},
                         ("r.csv", f"pid {os.getpid()}")),
    }
    return [Case("store", name, argv, {**_spec(), **files}, expect)
            for name, (argv, files, expect) in table.items()]


def scheduler_cases() -> list[Case]:
    """Malformed and refused Dask scheduler addresses."""
    table = {
        "refused": ("tcp://127.0.0.1:1", ("tcp://127.0.0.1:1", "connection refused")),
        "scheme": ("foo://x:1", ("--scheduler", "scheme")),
        "port_high": ("tcp://127.0.0.1:99999", ("--scheduler", "65535")),
        "port_zero": ("tcp://127.0.0.1:0", ("--scheduler", "65535")),
        "no_port": ("tcp://127.0.0.1", ("--scheduler", "PORT")),
        "no_host": ("tcp://:8786", ("--scheduler", "host")),
        "space": ("tcp://a b:1", ("--scheduler", "spaces")),
        "control": ("tcp://a\x1b[2J:1", ("--scheduler", "control")),
        "ipv6_open": ("tcp://[::1", ("--scheduler", "unclosed")),
        "inproc_other": ("inproc://10.0.0.1/1/1", ("--scheduler", "not this one")),
        "long": ("tcp://" + "a." * 400 + "b:1", ("--scheduler", "longer")),
        "path": ("tcp://host:1/x?y", ("--scheduler", "path")),
    }
    return [Case("scheduler", name, _sweep("{d}/r.csv", "--scheduler", address), _spec(), expect)
            for name, (address, expect) in table.items()]


def size_cases() -> list[Case]:
    """Grids refused from the spec alone: no machine or workload is built for them."""
    models = [f"no_such_model_{i}" for i in range(1000)]  # would fail if one were loaded
    table = {
        "thousand_models_by_range": {"workload": models,
                                     "compute.array.rows": {"start": 1, "stop": 10_000, "step": 1}},
        "three_long_lists": {f"compute.array.{k}": list(range(1, 10_001))
                             for k in ("rows", "cols", "word_bytes")},
        "geometric_and_num": {"memory.sram.capacity_bytes": {"start": 1, "stop": 1e12,
                                                             "factor": 1.01},
                              "compute.array.rows": {"low": 1, "high": 4096, "num": 10_000},
                              "dataflow": ["os", "ws", "is"]},
    }
    cases = []
    for name, params in table.items():
        files = {"s.yaml": yaml.safe_dump({"hardware": "scalesim_default",
                                           "workload": "{d}/w.yaml", "parameters": params}),
                 "w.yaml": TINY}
        cases.append(Case("size", name, _sweep("{d}/r.csv"), files, ("s.yaml", "grid points")))
    return cases


CASES = store_cases() + scheduler_cases() + size_cases()


@pytest.fixture
def held_locks():
    yield
    while _HELD:
        _HELD.pop().release()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_store_input_is_one_line_exit_2_and_fast(case, tmp_path, held_locks):
    rec = run_case(case, tmp_path, timeout_s=10 * CASE_S)
    assert rec["rc"] != "traceback", rec.get("traceback")
    assert rec["rc"] != "timeout", "blocked or ran past the time bound"
    lines = [ln for ln in rec["stderr"].splitlines() if ln.strip()]
    assert rec["rc"] == 2, rec["stderr"]
    assert len(lines) == 1, rec["stderr"]
    assert lines[0].startswith("accelsim: error: "), lines[0]
    for word in case.expect:
        assert word in lines[0], f"{word!r} not named in: {lines[0]}"
    assert rec["wall_s"] < CASE_S, rec["wall_s"]


def test_refused_stores_are_left_as_they_were(tmp_path, held_locks):
    """The locked and foreign-column stores keep their bytes; the device is still a device."""
    for case in CASES:
        if case.id in ("store/locked", "store/other_columns_csv", "store/foreign_one_line"):
            d = tmp_path / case.id.replace("/", "__")
            rec = run_case(case, tmp_path, timeout_s=10 * CASE_S)
            assert rec["rc"] == 2
            body = case.files["r.csv"]
            want = body if isinstance(body, str) else "compute.array.rows,point_id,error\n"
            assert (d / "r.csv").read_text() == want, case.id
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
