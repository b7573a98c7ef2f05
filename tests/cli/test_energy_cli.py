"""``accelsim energy HW WORKLOAD --dataflows ...``: side-by-side dataflow energies."""

from __future__ import annotations

import json

import pandas as pd
import pytest


def test_energy_prints_one_row_per_dataflow_and_writes_plot_and_csv(cli, tmp_path):
    plot = tmp_path / "e.png"
    r = cli("energy", "eyeriss", "alexnet", "--dataflows", "os,ws,is", "--plot", str(plot),
            "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "energy table eyeriss_65nm" in lines[0]
    for flow in ("os", "ws", "is"):
        assert any(line.startswith(flow + " ") for line in lines)
    assert "pJ/MAC" in r.stdout and "energy (mJ)" in r.stdout and "lowest energy:" in r.stdout
    assert plot.stat().st_size > 1000
    comp = pd.read_csv(tmp_path / "energy-dataflows.csv")
    assert list(comp["dataflow"]) == ["os", "ws", "is"]
    levels = comp[["mac_pj", "rf_pj", "sram_pj", "dram_pj"]].sum(axis=1)
    assert (levels <= comp["energy_pj"] * (1 + 1e-9)).all()  # leakage is the rest
    breakdown = pd.read_csv(tmp_path / "energy-breakdown.csv")
    assert set(breakdown["dataflow"]) == {"os", "ws", "is"}
    for flow, total in zip(comp["dataflow"], comp["energy_pj"], strict=True):
        assert breakdown[breakdown["dataflow"] == flow]["pj"].sum() == pytest.approx(total)


def test_energy_json_and_table_swap(cli_in_process):
    r = cli_in_process("energy", "tpu_v4", "resnet18", "--dataflows", "ws,os", "--json",
                       "--table", "scaled_7nm")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["table"] == "scaled_7nm"
    assert [d["dataflow"] for d in doc["dataflows"]] == ["ws", "os"]
    assert all(d["tops_per_w"] > 0 for d in doc["dataflows"])


def test_run_json_includes_energy(cli_in_process, tmp_path):
    r = cli_in_process("run", "scalesim_default", "alexnet", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["energy"]["total_pj"] > 0 and doc["energy"]["table"] == "horowitz_45nm"
    layers = pd.read_csv(tmp_path / "scalesim_default-alexnet-os-layers.csv")
    assert {"energy_pj", "pj_per_mac"} <= set(layers.columns)


@pytest.mark.parametrize("args, needle", [
    (["energy", "tpu_v4", "alexnet", "--dataflows", "rs"],
     "tpu_v4: compute.array.scratchpads: row-stationary (rs) needs per-PE scratchpads"),
    (["energy", "eyeriss", "alexnet", "--dataflows", "os,xs"],
     "'xs': must be among os, ws, is, rs"),
    (["energy", "eyeriss", "alexnet", "--table", "horowitz"], "did you mean"),
    (["energy", "tpu_v4", "alexnet", "--set", "energy.overrides={mac.bf16: -1 pJ}"], ">= 0"),
])
def test_bad_input_is_one_line_and_exit_2(cli_in_process, args, needle):
    r = cli_in_process(*args)
    assert r.returncode == 2
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
