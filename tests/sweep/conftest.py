"""Fixtures of the sweep tests: spec files written to a temporary folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the stub evaluators must import by name in worker processes
    sys.path.insert(0, str(HERE))

from sweep_stubs import TINY_WORKLOAD  # noqa: E402


@pytest.fixture
def write_spec(tmp_path):
    """``write_spec(dict) -> Path`` of a spec YAML; ``workload: tiny`` means a 2-layer file."""

    def _write(spec: dict, name: str = "spec.yaml") -> Path:
        spec = dict(spec)
        if spec.get("workload") == "tiny":
            wl = tmp_path / "tiny.yaml"
            wl.write_text(yaml.safe_dump(TINY_WORKLOAD))
            spec["workload"] = str(wl)
        path = tmp_path / name
        path.write_text(yaml.safe_dump(spec, sort_keys=False))
        return path

    return _write
