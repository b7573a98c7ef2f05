"""A sweep point is ``accelsim run`` with its parameters.

On every machine kind (a TPU's systolic array, an NPU's cube and vector unit, Eyeriss's
row-stationary array, a GPU, a CPU), each row of a real sweep (spec file -> ``run_sweep`` ->
results file) has the latency and the energy that :func:`accelsim.api.simulate` (what
``accelsim run`` calls) gives for the same machine overrides, workload and run options. The
sweep's fast paths (table-free fold streams, chunk-priced actions) are held to it here too.

Run options, workload parameters and duplicate keys are checked when the spec is read, each
refusal one line naming the spec field.
"""

from __future__ import annotations

import math

import pytest
import yaml

from accelsim.api import simulate
from accelsim.errors import ConfigError
from accelsim.sweep.runner import run_sweep
from accelsim.sweep.space import load_spec
from accelsim.sweep.store import read_results

GPT2 = "gpt2_small_decode:context=64"
"""A small zoo model: a GPU lowers its graph (fused attention), as ``accelsim run`` does."""

RUN_KWARGS = {"exec": "exec_mode", "dataflow": "dataflow", "sparsity": "sparsity",
              "loop_order": "loop_order"}
"""Sweep parameter -> the keyword of ``simulate`` it is (written out here, not derived)."""

CASES = {
    "tpu_v4": {"workload": GPT2, "parameters": {
        "compute.array.rows": [64, 128], "dataflow": ["os", "ws"], "workload.batch": [1, 2]}},
    "npu_ascend910": {"workload": "tiny", "parameters": {
        "memory.dram.bandwidth_bytes_per_s": ["600 GB/s", "1.2 TB/s"], "dataflow": ["os", "is"],
        "loop_order": ["auto", "sc_outer"]}},
    "eyeriss": {"workload": "tiny", "parameters": {
        "dataflow": ["rs", "os"], "sparsity": [0.0, 0.5]}},
    "h200": {"workload": GPT2, "parameters": {
        "memory.hbm.bandwidth_bytes_per_s": ["4.8 TB/s", "9.6 TB/s"],
        "exec": ["eager", "graph"], "workload.batch": [4]}},
    "spr_cpu": {"workload": "tiny", "parameters": {"memory.dram.channels": [4, 8]}},
}
"""Machine -> a small sweep over a hardware field, the run options its kind takes, and (where
the workload is a zoo model) a workload parameter."""


def run_of(hw: str, base_workload: str, row: dict, params: dict):
    """What ``accelsim run HW WORKLOAD --set ... [--exec/--dataflow/...]`` gives for ``row``."""
    overrides = {k: row[k] for k in params if "." in k and not k.startswith("workload.")}
    kwargs = {RUN_KWARGS[k]: row[k] for k in params if k in RUN_KWARGS}
    workload = base_workload
    if "workload.batch" in params:
        workload = f"{base_workload},batch={int(row['workload.batch'])}"
    return simulate(hw, workload, overrides=overrides, **kwargs)


@pytest.mark.parametrize("hw", sorted(CASES))
def test_every_sweep_row_is_accelsim_run_of_its_point(hw, write_spec, tmp_path):
    case = CASES[hw]
    spec = write_spec({"hardware": hw, "workload": case["workload"],
                       "parameters": case["parameters"]})
    base_workload = str(tmp_path / "tiny.yaml") if case["workload"] == "tiny" \
        else case["workload"]
    out = tmp_path / "rows.csv"
    run_sweep(spec, out, workers=1, progress=False)
    rows = read_results(out).to_dict("records")
    assert len(rows) == math.prod(len(v) for v in case["parameters"].values())
    for row in rows:
        assert row["error"] == "" or (isinstance(row["error"], float) and math.isnan(row["error"]))
        ran = run_of(hw, base_workload, row, case["parameters"])
        assert row["time_s"] == pytest.approx(ran.totals["time_s"], rel=1e-12), row
        assert row["energy_j"] == pytest.approx(ran.energy.total_pj * 1e-12, rel=1e-9), row


def test_the_sweep_of_an_unchanged_gpu_is_its_run(write_spec, tmp_path):
    """The case issue 25 found: a GPU sweep flattened a zoo model into another op list (no
    fused attention) and disagreed with ``accelsim run`` by 4 %."""
    spec = write_spec({"hardware": "h200", "workload": "gpt2_small_decode:batch=8,context=512",
                       "parameters": {"exec": "eager"}})
    out = tmp_path / "rows.csv"
    run_sweep(spec, out, workers=1, progress=False)
    row = read_results(out).to_dict("records")[0]
    ran = simulate("h200", "gpt2_small_decode:batch=8,context=512")
    assert row["time_s"] == pytest.approx(ran.totals["time_s"], rel=1e-12)
    assert row["energy_j"] == pytest.approx(ran.totals["energy_j"], rel=1e-12)


def test_a_workload_parameter_axis_runs_the_zoo_spec_with_it(write_spec, tmp_path):
    """``dtype`` (``workload.dtype``) varies the model's precision as ``NAME:dtype=...``."""
    spec = write_spec({"hardware": "h200", "workload": GPT2,
                       "parameters": {"dtype": ["bf16", "fp8"], "exec": "graph"}})
    out = tmp_path / "rows.csv"
    run_sweep(spec, out, workers=1, progress=False)
    rows = {r["dtype"]: r for r in read_results(out).to_dict("records")}
    for dtype, row in rows.items():
        ran = simulate("h200", f"{GPT2},dtype={dtype}", exec_mode="graph")
        assert row["time_s"] == pytest.approx(ran.totals["time_s"], rel=1e-12)
    assert rows["bf16"]["time_s"] != rows["fp8"]["time_s"]


@pytest.mark.parametrize(("hw", "params", "field", "says"), [
    ("tpu_v4", {"exec": ["graph"]}, "parameters.exec", "applies to GPUs, not systolic machines"),
    ("h200", {"dataflow": ["os"]}, "parameters.dataflow", "applies to systolic machines"),
    ("spr_cpu", {"sparsity": [0.5]}, "parameters.sparsity", "not CPUs"),
    ("h200", {"exec": ["warp"]}, "parameters.exec", "unknown execution mode"),
    ("tpu_v4", {"loop_order": ["sideways"]}, "parameters.loop_order", "must be one of"),
    ("eyeriss", {"sparsity": [1.5]}, "parameters.sparsity", "within [0, 1]"),
    ("h200", {"exec": ["graph"], "exec_mode": ["eager"]}, "parameters.exec_mode",
     "the same parameter as parameters.exec"),
    ("h200", {"trace": ["t.json"]}, "parameters.trace", "an output of accelsim run"),
    ("h200", {"mode": ["event"]}, "parameters.mode", "top-level 'mode'"),
    ("tpu_v4", {"workload.batch": [2]}, "parameters.workload.batch", "takes no parameters"),
])
def test_run_options_a_machine_does_not_take_are_refused_naming_the_field(
        hw, params, field, says, write_spec):
    spec = write_spec({"hardware": hw, "workload": "tiny", "parameters": params})
    with pytest.raises(ConfigError) as err:
        load_spec(spec)
    line = str(err.value)
    assert "\n" not in line
    assert field in line and says in line, line


@pytest.mark.parametrize("text", [
    "hardware: tpu_v4\nworkload: alexnet\nhardware: h200\nparameters: {dataflow: [os]}\n",
    "hardware: tpu_v4\nworkload: alexnet\nparameters:\n  compute.array.rows: [64]\n"
    "  compute.array.rows: [128]\n",
])
def test_a_key_written_twice_is_refused_in_one_line(text, tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_spec(path)
    line = str(err.value)
    assert "\n" not in line and "duplicate key" in line, line
    assert ("compute.array.rows" in line) == ("compute.array.rows" in text), line


def test_a_fixed_run_option_is_one_column_of_every_row(write_spec, tmp_path):
    spec = write_spec({"hardware": "tpu_v4", "workload": "tiny",
                       "parameters": {"compute.array.rows": [32, 64], "dataflow": "ws"}})
    out = tmp_path / "rows.csv"
    run_sweep(spec, out, workers=1, progress=False)
    rows = read_results(out)
    assert set(rows["dataflow"]) == {"ws"} and len(rows) == 2
    assert yaml.safe_load(spec.read_text())["parameters"]["dataflow"] == "ws"
