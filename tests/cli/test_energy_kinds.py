"""``accelsim energy`` on every machine kind: what each kind can vary, its help, its errors,
and GPU figures equal to ``simulate(...).energy`` at the same precision and mode."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from accelsim.api import simulate
from accelsim.api.energy import GPU_PARTS, run_energy_parts


def test_gpu_default_compares_precisions_and_equals_simulate(cli_in_process, tmp_path):
    r = cli_in_process("energy", "h200", "resnet50", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    comp = pd.read_csv(tmp_path / "energy-precisions.csv")
    assert {"bf16", "fp16", "fp8", "tf32", "fp32"} <= set(comp["precision"])
    assert set(comp["exec"]) == {"eager"}
    for prec in ("bf16", "fp8"):
        row = comp[comp["precision"] == prec].iloc[0]
        ref = simulate("h200", f"resnet50:dtype={prec}").energy
        assert row["energy_pj"] == pytest.approx(ref.total_pj, rel=1e-9)
        assert row["pj_per_mac"] == pytest.approx(ref.pj_per_mac, rel=1e-9)
        assert sum(row[p] for p in GPU_PARTS) == pytest.approx(ref.total_pj, rel=1e-9)
        printed = next(x.split() for x in r.stdout.splitlines() if x.startswith(prec + " "))
        assert float(printed[3].replace(",", "")) == pytest.approx(ref.total_pj / 1e9, rel=1e-3)
    assert "energy (mJ)" in r.stdout and "host idle" in r.stdout and "lowest energy:" in r.stdout


def test_gpu_exec_modes_equal_simulate(cli_in_process):
    r = cli_in_process("energy", "h200", "resnet50", "--precisions", "bf16",
                       "--exec", "eager,graph", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["runs"]
    assert [(x["precision"], x["exec"]) for x in rows] == [("bf16", "eager"), ("bf16", "graph")]
    for x in rows:
        ref = simulate("h200", "resnet50:dtype=bf16", exec_mode=x["exec"])
        assert x["energy_pj"] == pytest.approx(ref.energy.total_pj, rel=1e-9)
        assert x["host_idle_pj"] == pytest.approx(run_energy_parts(ref)["host_idle_pj"])
    assert rows[1]["host_idle_pj"] < rows[0]["host_idle_pj"]  # a graph barely waits for the host


def test_cpu_parts_sum_to_the_run_energy(cli_in_process):
    r = cli_in_process("energy", "spr_cpu", "resnet50", "--json")
    assert r.returncode == 0, r.stderr
    rows = {x["precision"]: x for x in json.loads(r.stdout)["runs"]}
    assert {"fp32", "bf16", "int8"} <= set(rows)
    ref = simulate("spr_cpu", "resnet50:dtype=bf16").energy.total_pj
    parts = ("mac_pj", "l1_pj", "l2_pj", "l3_pj", "dram_pj", "issue_pj", "core_pj", "static_pj")
    assert rows["bf16"]["energy_pj"] == pytest.approx(ref, rel=1e-9)
    assert sum(rows["bf16"][p] for p in parts) == pytest.approx(ref, rel=1e-9)


def test_array_defaults_to_its_own_dataflow_first(cli_in_process, tmp_path):
    r = cli_in_process("energy", "eyeriss", "alexnet", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    flows = list(pd.read_csv(tmp_path / "energy-dataflows.csv")["dataflow"])
    assert flows[0] == "rs" and {"os", "ws", "is"} <= set(flows)
    r = cli_in_process("energy", "tpu_v4", "resnet18", "--json")
    flows = [d["dataflow"] for d in json.loads(r.stdout)["dataflows"]]
    assert flows[0] == "ws" and sorted(flows) == ["is", "os", "ws"]  # no rs without scratchpads


@pytest.mark.parametrize("hw, shown, hidden", [
    ("h200", ["--precisions", "--exec"], ["--dataflows"]),
    ("spr_cpu", ["--precisions"], ["--dataflows", "--exec"]),
    ("eyeriss", ["--dataflows"], ["--precisions", "--exec"]),
])
def test_help_lists_only_the_kinds_options(cli_in_process, hw, shown, hidden):
    r = cli_in_process("energy", hw, "--help")
    assert r.returncode == 0
    options = r.stdout.split("options:")[1]
    for flag in shown:
        assert flag in options
    for flag in hidden:
        assert flag not in options
    full = cli_in_process("energy", "--help").stdout
    assert all(f in full for f in ("--dataflows", "--precisions", "--exec"))


@pytest.mark.parametrize("args, needle", [
    (["h200", "resnet50", "--dataflows", "os"], "--dataflows = 'os': applies to systolic"),
    (["h200", "resnet50", "--precisions", "fp7"], "'fp7': h200 runs fp32"),
    (["spr_cpu", "resnet50", "--precisions", "fp8"], "'fp8': spr_cpu runs"),
    (["spr_cpu", "resnet50", "--exec", "graph"], "--exec = 'graph': applies to GPUs"),
    (["tpu_v4", "resnet50", "--precisions", "bf16"], "applies to GPUs and CPUs"),
    (["h200", "resnet50", "--exec", "foo"], "'foo': unknown execution mode"),
    (["h200", "workloads/resnet18.yaml", "--precisions", "bf16"], "fixes its own precisions"),
])
def test_bad_input_is_one_line_exit_2(cli_in_process, args, needle):
    r = cli_in_process("energy", *args)
    assert r.returncode == 2
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
