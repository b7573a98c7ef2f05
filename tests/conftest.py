"""Shared fixtures: run the CLI in-process or as a subprocess."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cli():
    """Run ``accelsim ARGS`` as a subprocess; returns CompletedProcess (text)."""

    def _run(*args: str, cwd: Path | None = None,
             timeout: float = 300) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env.setdefault("MPLBACKEND", "Agg")
        return subprocess.run([sys.executable, "-m", "accelsim", *args], capture_output=True,
                              text=True, cwd=cwd or ROOT, env=env, timeout=timeout)

    return _run


@pytest.fixture
def cli_in_process(capsys, monkeypatch):
    """Run ``accelsim ARGS`` in this process (:func:`accelsim.cli.main`, cwd: the checkout as
    for :func:`cli`): a CompletedProcess like :func:`cli`'s, without a process start and its
    imports (~1.5 s). For checks of a command whose file tests the real process in one test
    (each command keeps at least one subprocess test); an uncaught exception fails the test
    (where a process would print a traceback). ``cwd``: the folder it runs in, as for cli.
    """
    from accelsim.cli import main

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")

    def _run(*args: str, cwd: Path | None = None,
             timeout: float | None = None) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd or ROOT)  # as cli's process starts in cwd (timeout: unused)
        capsys.readouterr()
        try:
            rc = main(list(args))
        except SystemExit as exc:  # argparse errors and --help
            rc = int(exc.code or 0)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), rc, out.out, out.err)

    return _run


def once_per_session(tmp_path_factory: pytest.TempPathFactory, name: str,
                     produce: Callable[[], object]) -> object:
    """``produce()`` once per test session, whatever the number of pytest-xdist workers: the
    first worker to ask computes it under a file lock and leaves it as JSON beside the workers'
    temporary folders; the others read that file. ``produce`` must return JSON-able data."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return produce()
    shared = tmp_path_factory.getbasetemp().parent / f"once-{name}.json"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.is_file():
            return json.loads(shared.read_text())
        data = produce()
        shared.write_text(json.dumps(data))
        return data


@pytest.fixture(scope="session")
def once(tmp_path_factory):
    """``once(name, produce)``: :func:`once_per_session` for a module- or session-scoped
    fixture (an expensive shared setup paid once, not once per xdist worker)."""
    return lambda name, produce: once_per_session(tmp_path_factory, name, produce)


def _peer_missing(reason: str) -> None:
    if os.environ.get("ACCELSIM_REQUIRE_PEERS") == "1":
        pytest.fail(f"{reason} (ACCELSIM_REQUIRE_PEERS=1: peers are required)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def peer_missing():
    """``peer_missing(reason)``: a parity peer (SCALE-Sim, ZigZag) is not available: skip the
    test, or fail it when ``ACCELSIM_REQUIRE_PEERS=1`` (CI sets it, so a parity break cannot
    hide as a skip)."""
    return _peer_missing
