"""Shared fixtures: run the CLI in-process or as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cli():
    """Run ``accelsim ARGS`` as a subprocess; returns CompletedProcess (text)."""

    def _run(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env.setdefault("MPLBACKEND", "Agg")
        return subprocess.run([sys.executable, "-m", "accelsim", *args], capture_output=True,
                              text=True, cwd=cwd or ROOT, env=env, timeout=timeout)

    return _run


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
