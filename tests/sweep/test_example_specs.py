"""The example specs in workloads/sweeps/ are valid (checked, not run: they are benchmarks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelsim.sweep.space import load_spec

SPECS = sorted((Path(__file__).resolve().parents[2] / "workloads" / "sweeps").glob("*.yaml"))


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_example_spec_is_valid(path):
    spec = load_spec(path)
    points = spec.points()
    assert points and all(spec.satisfies(p) for p in points)


def test_the_benchmark_sweep_has_1000_points():
    spec = load_spec(next(p for p in SPECS if p.stem == "resnet50_tpu_v4_array_sram"))
    assert len(spec.points()) == 1000
