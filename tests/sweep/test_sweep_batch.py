"""The sweep's bookkeeping, done per batch of points, gives what it gives point by point:
keys, batch metrics (engine batch evaluator + vectorised area model) and rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim import __version__
from accelsim.sweep.evaluate import (
    SweepContext,
    batch_metrics,
    evaluate_chunk,
    evaluate_point,
    stable_hash,
)
from accelsim.sweep.space import spec_from_dict

LAYER = {"op": "gemm", "name": "ffn", "m": 96, "n": 300, "k": 200}


@pytest.fixture
def ctx(tmp_path):
    import yaml

    wl = tmp_path / "one.yaml"
    wl.write_text(yaml.safe_dump({"name": "one", "ops": [LAYER]}))
    spec = spec_from_dict({
        "name": "b", "hardware": "tpu_v4", "workload": str(wl), "mode": "analytic",
        "sampling": {"method": "random", "samples": 40, "seed": 3},
        "parameters": {"compute.array.rows": {"low": 8, "high": 256},
                       "compute.array.cols": {"low": 8, "high": 256},
                       "memory.sram.capacity_bytes": {"low": "64 KiB", "high": "64 MiB", "log": True},
                       "dataflow": ["os", "ws", "is"]},
        "metrics": ["total_cycles", "stall_cycles", "dram_bytes", "area_mm2", "area_pe_mm2",
                    "area_sram_mm2"]}, file="<test>")
    return SweepContext.from_spec(spec), spec.points()


values = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                   st.text(max_size=6), st.sampled_from([np.float64(2.0), np.int64(3), None]))


@settings(max_examples=200, deadline=None)
@given(point=st.dictionaries(st.sampled_from(["a.b", "dataflow", "z", "rows", "é"]), values,
                             min_size=1))
def test_batch_keys_are_the_documented_hash_of_each_point(point):
    ctx = SweepContext(base_hw={}, hw_file="x", workloads={"w": None}, default_workload="w",
                       mode="analytic", metrics=None, evaluator=batch_metrics, hw_id="h",
                       workload_ids={"w": "wid"})
    doc = {"params": dict(point), "hw": "h", "workload": "wid", "mode": "analytic",
           "version": __version__}
    assert ctx.point_ids([point, point])[1] == ctx.point_id(point) == stable_hash(doc)


def test_batch_rows_equal_point_by_point_rows(ctx):
    c, points = ctx
    assert batch_metrics(c, points) is not None  # the batch path applies to this sweep
    batch = evaluate_chunk(c, points)
    for row, point in zip(batch, points, strict=True):
        one = evaluate_point(c, point)  # simulate(), area_breakdown(machine): the reference
        assert row.keys() == one.keys()
        for key, value in one.items():
            if isinstance(value, float) and not math.isnan(value):
                assert row[key] == pytest.approx(value, rel=1e-12), key
            else:
                assert row[key] == value, key


def test_batch_path_declines_what_it_cannot_take(ctx):
    c, points = ctx
    assert batch_metrics(c, [{**points[0], "memory.dram.efficiency": 0.5}]) is None
    assert batch_metrics(c, []) is None
