"""The layering of DESIGN.md holds (import-linter contract in pyproject.toml) and the code is
ruff clean. Both run as tests so that CI fails on a violation."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return str(exe)
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def test_layers_contract_is_kept():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([_tool("lint-imports")], cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout[-3000:]


def test_ruff_is_clean():
    r = subprocess.run([_tool("ruff"), "check", "accelsim", "tests", "scripts"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]
