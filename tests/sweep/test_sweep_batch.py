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
                       "memory.sram.capacity_bytes": {"low": "64 KiB", "high": "64 MiB",
                                                      "log": True},
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


def test_energy_chunks_priced_in_one_batch_equal_simulate_point_by_point(tmp_path):
    """A sweep with energy metrics prices each chunk's actions at once (priced_metrics); rows
    equal simulate() with its pandas energy pricing, the area model and the same keys; a point
    on a spatial dataflow (rs) takes its own path inside the same chunk."""
    import yaml

    from accelsim.api import simulate
    from accelsim.sweep.area import area_breakdown
    from accelsim.sweep.evaluate import energy_metrics, priced_metrics

    wl = tmp_path / "two.yaml"
    # LAYER with 16 rows, not 96: the rs points' mapping search (the test's cost) shrinks ~6x;
    # the GEMM still stalls on DRAM and spans fitting and not fitting the sampled SRAMs
    wl.write_text(yaml.safe_dump({"name": "two", "ops": [
        {**LAYER, "m": 16},
        {"op": "conv2d", "name": "conv", "c": 8, "h": 12, "w": 12, "k": 16, "r": 3, "s": 3},
        {"op": "softmax", "name": "sm", "rows": 96, "cols": 300}]}))
    metrics = ["total_cycles", "time_s", "energy_j", "pj_per_mac", "tops_per_w", "avg_power_w",
               "energy_sram_j", "energy_dram_j", "energy_vector_j", "area_mm2"]
    spec = spec_from_dict({
        "name": "e", "hardware": "eyeriss", "workload": str(wl), "mode": "analytic",
        "sampling": {"method": "random", "samples": 24, "seed": 5},
        "parameters": {"compute.array.rows": {"low": 6, "high": 40},
                       "compute.array.cols": {"low": 6, "high": 40},
                       "memory.sram.capacity_bytes": {"low": "32 KiB", "high": "4 MiB",
                                                      "log": True},
                       "dataflow": ["os", "ws", "is", "rs"]},
        "metrics": metrics}, file="<test>")
    c = SweepContext.from_spec(spec)
    points = spec.points()
    assert sum(m is not None for m in priced_metrics(c, points)) < len(points)  # rs: alone
    rows = evaluate_chunk(c, points)
    for row, point in zip(rows, points, strict=True):
        machine = c.machine(point)
        ref = simulate(machine, c.workload(point), dataflow=point["dataflow"], mode="analytic")
        expect = {**ref.totals, **energy_metrics(ref.energy), **area_breakdown(machine)}
        assert row["point_id"] == c.point_id(point) and row["error"] == ""
        for name in metrics:
            assert row[name] == pytest.approx(float(expect[name]), rel=1e-12, abs=0.0), name


def test_gpu_and_cpu_sweeps_dispatch_through_their_device(tmp_path):
    """Sweeps ask accelsim.devices.device_for: a GPU or CPU sweep's rows are what its device's
    run_model (accelsim run) reports; a dataflow, which only systolic machines take, is the
    one-line error of accelsim run --dataflow, given when the spec is read."""
    import yaml

    from accelsim.api import load_hw
    from accelsim.devices import device_for
    from accelsim.errors import ConfigError
    from accelsim.sweep.runner import run_sweep
    from accelsim.sweep.store import read_results

    wl = tmp_path / "two.yaml"
    wl.write_text(yaml.safe_dump({"name": "two", "ops": [
        LAYER, {"op": "softmax", "name": "sm", "rows": 8192, "cols": 4096}]}))
    for hw, field, values in (("a100", "compute.sm_count", [27, 108]),
                              ("spr_cpu", "compute.cores", [8, 56])):
        spec = spec_from_dict({"name": "g", "hardware": hw, "workload": str(wl),
                               "parameters": {field: values},
                               "metrics": ["time_s", "gpu_busy_s", "flops", "energy_j"]},
                              file="<test>")
        out = tmp_path / f"{hw}.parquet"
        run_sweep(spec, out, workers=1, progress=False)
        df = read_results(out)
        assert len(df) == 2 and (df["error"] == "").all()
        for _, row in df.iterrows():
            wl_obj = spec.workloads[spec.default_workload]
            ref = device_for(load_hw(hw, {field: row[field]})).run_model(wl_obj).totals
            for name in ("time_s", "gpu_busy_s", "flops", "energy_j"):
                assert row[name] == pytest.approx(ref[name], rel=1e-12), (hw, name)
        # more SMs / cores: the device is busy for less time (the step may be host-bound)
        assert df["gpu_busy_s"].iloc[0] > df["gpu_busy_s"].iloc[1]
    with pytest.raises(ConfigError, match="parameters.dataflow.*applies to systolic"):
        spec_from_dict({"name": "g", "hardware": "a100", "workload": str(wl),
                        "parameters": {"dataflow": ["os"]}, "metrics": ["time_s"]}, file="<test>")


@pytest.mark.parametrize("hw", ["tpu_v4", "tpu_v1", "npu_ascend910", "eyeriss", "scalesim_default"])
@pytest.mark.parametrize("layer", [LAYER, {"op": "conv2d", "name": "conv", "c": 24, "h": 14,
                                           "w": 14, "k": 40, "r": 3, "s": 3, "pad": 1}])
def test_single_layer_energy_priced_per_batch_equals_point_by_point(tmp_path, hw, layer):
    """A single-layer sweep with energy metrics takes the batch evaluator (its action
    figures, detail=True) and prices the chunk at once: every metric equals simulate() with its
    pandas energy pricing, point by point, over os/ws/is, GEMMs and convolutions, machines with
    and without operand staging and measured idle power."""
    import yaml

    from accelsim.api import simulate
    from accelsim.sweep.area import area_breakdown
    from accelsim.sweep.evaluate import energy_metrics

    wl = tmp_path / "one.yaml"
    wl.write_text(yaml.safe_dump({"name": "one", "ops": [layer]}))
    spec = spec_from_dict({
        "name": "e", "hardware": hw, "workload": str(wl), "mode": "analytic",
        "sampling": {"method": "random", "samples": 18, "seed": 7},
        "parameters": {"compute.array.rows": {"low": 4, "high": 160},
                       "compute.array.cols": {"low": 4, "high": 160},
                       "memory.sram.capacity_bytes": {"low": "8 KiB", "high": "32 MiB",
                                                      "log": True},
                       "dataflow": ["os", "ws", "is"]},
        "metrics": None}, file="<test>")
    c = SweepContext.from_spec(spec)
    points = spec.points()
    got = batch_metrics(c, points)
    assert got is not None and "energy_j" in got  # the batch path took the energy sweep
    rows = evaluate_chunk(c, points)
    for row, point in zip(rows, points, strict=True):
        machine = c.machine(point)
        ref = simulate(machine, c.workload(point), dataflow=point["dataflow"], mode="analytic",
                       energy=True)
        expect = {**{k: v for k, v in ref.totals.items() if isinstance(v, (int, float))},
                  **energy_metrics(ref.energy), **area_breakdown(machine)}
        energy_names = {k for k in expect if k.startswith("energy_")} | {"pj_per_mac",
                                                                         "tops_per_w",
                                                                         "avg_power_w"}
        assert energy_names <= row.keys()
        for name, value in expect.items():
            assert row[name] == pytest.approx(float(value), rel=1e-12, abs=0.0), (name, point)
