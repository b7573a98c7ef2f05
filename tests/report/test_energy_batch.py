"""Batch energy pricing (many runs' actions priced as numpy arrays) equals the per-run pandas
pricing of ``simulate(...).energy``, over machines, energy tables, dataflows, array and SRAM
sizes, and workloads with array layers and vector-unit ops."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.api import load_hw, simulate
from accelsim.api.systolic import plan_workload
from accelsim.engine.systolic_run import run_layers
from accelsim.errors import ConfigError
from accelsim.report.energy_batch import action_totals, price_batch, summary_metrics
from accelsim.report.tables import layer_row
from accelsim.workload.ops import Workload
from accelsim.workload.readers import op_from_dict

MACHINES = ("tpu_v4", "tpu_v1", "npu_ascend910", "eyeriss", "scalesim_default")
TABLES = (None, "horowitz_45nm", "scaled_28nm", "scaled_7nm", "eyeriss_65nm", "seed_napkin")
WORKLOAD = {"name": "mix", "ops": [
    {"op": "gemm", "name": "fc", "m": 70, "n": 130, "k": 90},
    {"op": "conv2d", "name": "conv", "c": 12, "h": 14, "w": 14, "k": 20, "r": 3, "s": 3},
    {"op": "softmax", "name": "sm", "rows": 64, "cols": 200},
    {"op": "layernorm", "name": "ln", "rows": 32, "cols": 96},
    {"op": "gemm", "name": "fc_again", "m": 70, "n": 130, "k": 90}]}


def _workload(ops: list[dict]) -> Workload:
    return Workload("mix", tuple(op_from_dict(dict(d), file="<test>", where=f"ops[{i}]")
                                 for i, d in enumerate(ops)))


def _batch_input(machine, wl, dataflow):
    runs = run_layers(machine, plan_workload(machine, wl, dataflow), "analytic")
    return machine, action_totals(machine, runs, [layer_row(machine, r) for r in runs])


def _assert_same(got: dict[str, float], ref: dict[str, float]) -> None:
    assert got.keys() == ref.keys()
    for k, v in ref.items():
        if math.isnan(v):
            assert math.isnan(got[k]), k
        else:
            assert got[k] == pytest.approx(v, rel=1e-12, abs=0.0), k


def _row(batch: dict, i: int) -> dict[str, float]:
    out = {}
    for k, v in batch.items():
        x = float(v[i])
        if not (k.startswith("energy_") and k != "energy_j" and math.isnan(x)):
            out[k] = x
    return out


@pytest.mark.parametrize("hw", MACHINES)
@pytest.mark.parametrize("dataflow", ["os", "ws", "is"])
def test_batch_pricing_equals_simulate_energy_on_every_machine(hw, dataflow):
    wl = _workload(WORKLOAD["ops"])
    machine = load_hw(hw)
    ref = summary_metrics(simulate(machine, wl, dataflow=dataflow, mode="analytic").energy.summary)
    _assert_same(_row(price_batch([_batch_input(machine, wl, dataflow)]), 0), ref)
    # the vector unit and the PE registers are priced too
    assert {"energy_vector_j", "energy_rf_j", "energy_mac_j"} <= ref.keys()


point = st.fixed_dictionaries({
    "hw": st.sampled_from(MACHINES),
    "table": st.sampled_from(TABLES),
    "dataflow": st.sampled_from(["os", "ws", "is"]),
    "rows": st.integers(4, 160), "cols": st.integers(4, 160),
    "sram": st.integers(16, 64 * 1024).map(lambda kib: kib * 1024),
    "ops": st.lists(st.sampled_from(WORKLOAD["ops"]), min_size=1, max_size=4, unique_by=str)})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points=st.lists(point, min_size=1, max_size=4))
def test_one_batch_of_mixed_points_equals_each_point_priced_alone(points):
    """Machines, tables (through ``energy.table``), array and SRAM sizes differ point to point;
    one price_batch call prices each with its own table and capacities."""
    inputs, refs = [], []
    for p in points:
        overrides = {"compute.array.rows": p["rows"], "compute.array.cols": p["cols"],
                     "memory.sram.capacity_bytes": p["sram"]}
        if p["table"]:
            overrides["energy.table"] = p["table"]
        machine = load_hw(p["hw"], overrides)
        wl = _workload(p["ops"])
        try:
            ref = simulate(machine, wl, dataflow=p["dataflow"], mode="analytic").energy.summary
        except ConfigError:  # a table without an entry this machine needs: the batch refuses too
            with pytest.raises(ConfigError):
                price_batch([_batch_input(machine, wl, p["dataflow"])])
            continue
        inputs.append(_batch_input(machine, wl, p["dataflow"]))
        refs.append(summary_metrics(ref))
    if not inputs:
        return
    batch = price_batch(inputs)
    for i, ref in enumerate(refs):
        _assert_same(_row(batch, i), ref)
