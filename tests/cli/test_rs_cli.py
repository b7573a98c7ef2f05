"""Row-stationary from the command line: ``run --dataflow rs`` and ``energy --dataflows ...rs``."""

from __future__ import annotations

import pandas as pd


def test_run_eyeriss_alexnet_row_stationary(cli, tmp_path):
    r = cli("run", "eyeriss", "alexnet", "--dataflow", "rs", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "on eyeriss (" in r.stdout and ", rs," in r.stdout
    layers = pd.read_csv(tmp_path / "eyeriss-alexnet-rs-layers.csv")
    assert (layers["dataflow"] == "rs").all()
    assert {"rs_p", "rs_q", "rs_r", "rs_t", "active_pes", "io_cycles"} <= set(layers.columns)
    actions = pd.read_csv(tmp_path / "eyeriss-alexnet-rs-actions.csv")
    assert {"mac", "rf", "noc", "sram", "dram"} <= set(actions["level"])


def test_energy_compares_all_four_dataflows_on_eyeriss(cli_in_process, tmp_path):
    r = cli_in_process("energy", "eyeriss", "alexnet", "--dataflows", "os,ws,is,rs",
                       "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    comp = pd.read_csv(tmp_path / "energy-dataflows.csv").set_index("dataflow")
    assert list(comp.index) == ["os", "ws", "is", "rs"]
    assert comp.loc["rs", "noc_pj"] > 0 and comp.loc["os", "noc_pj"] == 0
    assert "lowest energy:" in r.stdout


def test_rs_refusals_are_one_line_with_exit_2(cli_in_process):
    r = cli_in_process("run", "scalesim_default", "alexnet", "--dataflow", "rs")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "scalesim_default: compute.array.scratchpads: row-stationary" in r.stderr
    r = cli_in_process("run", "eyeriss", "alexnet", "--dataflow", "rs",
                       "--set", "compute.array.scratchpads.ifmap_bytes=8 B")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "eyeriss: compute.array.scratchpads.ifmap_bytes = '4 words'" in r.stderr


def test_sparsity_is_a_fraction(cli_in_process, tmp_path):
    """In-process (the real process: the tests above)."""
    r = cli_in_process("run", "eyeriss", "alexnet", "--sparsity", "1.5")
    assert r.returncode == 2 and "--sparsity = '1.5': must be a fraction within [0, 1]" in r.stderr
    r = cli_in_process("run", "eyeriss", "alexnet", "--sparsity", "0.5", "--mode", "analytic",
            "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
