"""Eyeriss (row-stationary) against the chip: JSSC 2017 Table V and the ISCA 2016 comparison.

The measured numbers live in accelsim/data/eyeriss_jssc2017.json with their source; the model
predicts from the mapping it searches. Two energy constants are fitted on CONV1 and CONV5
power and one DRAM rate on CONV1's waiting time; the rest is held out.
"""

from __future__ import annotations

import pytest

from accelsim.api import load_hw, simulate
from accelsim.api.eyeriss import (
    alexnet_workload,
    dataflow_energy,
    fit_power_constants,
    load_measurements,
    validation_table,
)
from accelsim.config.energy import load_energy_table
from accelsim.errors import ConfigError
from accelsim.workload.ops import Conv2d


@pytest.fixture(scope="module")
def data():
    return load_measurements()


@pytest.fixture(scope="module")
def table(data):
    return validation_table(data).set_index("layer")


def test_the_measured_rows_add_up_to_the_papers_totals(data):
    """A transcription check: per-layer latency, DRAM, GLB and MACs sum to the totals row, and
    the latency-weighted power and active PEs are its 278 mW and 148 PE averages."""
    m, t = data["measured"], data["totals"]
    assert sum(r["total_latency_ms"] for r in m) == pytest.approx(t["total_latency_ms"], abs=0.05)
    assert sum(r["processing_latency_ms"] for r in m) == pytest.approx(t["processing_latency_ms"],
                                                                        abs=0.05)
    assert sum(r["dram_accesses_mb"] for r in m) == pytest.approx(t["dram_accesses_mb"], abs=0.05)
    assert sum(r["glb_accesses_mb"] for r in m) == pytest.approx(t["glb_accesses_mb"], abs=0.15)
    power = sum(r["power_mw"] * r["total_latency_ms"] for r in m) / t["total_latency_ms"]
    assert power == pytest.approx(t["power_mw"], abs=0.5)
    pes = sum(r["active_pes"] * r["total_latency_ms"] for r in m) / t["total_latency_ms"]
    assert pes == pytest.approx(t["active_pes"], abs=0.5)
    assert sum(r["macs_m"] for r in m) / 1e3 == pytest.approx(t["macs_g"], abs=0.005)
    macs = alexnet_workload(data).ops
    for op, row in zip(macs, m, strict=True):
        assert op.macs / 1e6 == pytest.approx(row["macs_m"], abs=0.5)


@pytest.mark.parametrize("layer", ["CONV1", "CONV2", "CONV3", "CONV4", "CONV5"])
def test_latency_within_15_percent_and_dram_per_mac_within_20(table, layer):
    row = table.loc[layer]
    assert abs(row["total_latency_ms_err"]) <= 0.15
    assert abs(row["processing_latency_ms_err"]) <= 0.15
    assert abs(row["dram_access_per_mac_err"]) <= 0.20


def test_power_within_15_percent_on_the_held_out_layers_and_in_total(table):
    for layer in ("CONV2", "CONV3", "CONV4", "total"):
        assert abs(table.loc[layer, "power_mw_err"]) <= 0.15
    assert table.loc["total", "dram_access_per_mac_pred"] == pytest.approx(0.0029, rel=0.2)


def test_the_mapper_finds_the_chips_pe_utilisation(table):
    """154 active PEs on CONV1 and 156 on CONV3-5, as the chip (JSSC Table V)."""
    for layer in ("CONV1", "CONV3", "CONV4", "CONV5"):
        assert table.loc[layer, "active_pes_pred"] == table.loc[layer, "active_pes_meas"]


def test_the_shipped_energy_table_is_the_fit_on_conv1_and_conv5(data):
    """eyeriss_65nm.yaml holds what fit_power_constants derives (so the calibration is
    reproducible) and keeps the ISCA 2016 ratios: RF 1x, array 2x, buffer 6x, DRAM 200x."""
    fit = fit_power_constants(data)
    t = load_energy_table("eyeriss_65nm")
    u = t.require("mac.int16")
    assert u == pytest.approx(fit["mac_pj"], rel=0.01)
    assert t.require("leak.pe") == pytest.approx(fit["pe_per_cycle_pj"], rel=0.01)
    assert t.require("rf.read") * 16 == pytest.approx(u, rel=0.01)
    assert t.require("noc") * 16 == pytest.approx(2 * u, rel=0.01)
    assert t.sram_access_pj(108e3, 16, "read") == pytest.approx(6 * u, rel=0.01)
    assert t.require("dram.DDR3") * 16 == pytest.approx(200 * u, rel=0.01)


def test_the_dram_rate_in_the_yaml_is_the_fit_on_conv1(data):
    from accelsim.api.eyeriss import fit_dram_rate
    from accelsim.config.registry import load_machine

    yaml_rate = load_machine("eyeriss").memory.dram.bandwidth_bytes_per_s
    assert fit_dram_rate(data) == pytest.approx(yaml_rate, rel=0.02)


def test_row_stationary_beats_the_other_dataflows_as_in_isca_2016(data):
    """Same storage budget, dense data: RS lowest energy per MAC, WS, OS, NLR (and IS)
    1.4-2.5x above; NLR pays in the global buffer and network what RS keeps in scratchpads."""
    d = dataflow_energy(data).set_index("dataflow")
    assert set(d.index) == {"rs", "ws", "os", "nlr", "is"}
    assert d.loc["nlr", "rf_pj_per_mac"] == 0
    assert d.loc["nlr", "sram_pj_per_mac"] > 10 * d.loc["rs", "sram_pj_per_mac"]
    lo, hi = data["isca2016"]["ratio_range"]
    assert d["pj_per_mac"].idxmin() == "rs"
    others = d.drop(index="rs")["vs_rs"]
    assert others.min() >= lo * 0.95 and others.max() <= hi
    # RS moves less through the global buffer and DRAM than any systolic dataflow
    assert (d.drop(index="rs")["sram_pj_per_mac"] > d.loc["rs", "sram_pj_per_mac"]).all()
    assert (d.drop(index="rs")["dram_pj_per_mac"] > d.loc["rs", "dram_pj_per_mac"]).all()


def test_zeros_gate_energy_and_shrink_dram_but_not_time(data):
    wl = alexnet_workload(data)
    dense = simulate("eyeriss", wl, dataflow="rs", mode="analytic")
    sparse = simulate("eyeriss", wl, dataflow="rs", mode="analytic", sparsity=0.6)
    # gating saves no cycles; cheaper coded fmaps only nudge the mapper's choice
    assert list(sparse.layers["processing_cycles"]) == pytest.approx(
        list(dense.layers["processing_cycles"]), rel=0.05)
    assert (sparse.layers["compute_cycles"] >= 0.95 * dense.layers["compute_cycles"]).all()
    assert sparse.energy.summary["by_level_pj"]["mac"] < dense.energy.summary["by_level_pj"]["mac"]
    # the first layer's input is not coded; every other fmap shrinks
    assert (sparse.layers["dram_ifmap_read_bytes"].iloc[0]
            == dense.layers["dram_ifmap_read_bytes"].iloc[0])
    assert (sparse.layers["dram_ofmap_write_bytes"] < dense.layers["dram_ofmap_write_bytes"]).all()


def test_other_conv_networks_run_on_eyeriss():
    """ResNet-18 (7x7 stride-2 stem, 1x1 downsamples, fc) maps and runs with rs."""
    r = simulate("eyeriss", "resnet18", dataflow="rs", mode="analytic")
    assert len(r.layers) == 21 and (r.layers["dataflow"] == "rs").all()
    assert (r.layers["active_pes"] > 0).all() and r.energy.summary["pj_per_mac"] > 0


def test_bad_input_names_machine_field_and_value():
    with pytest.raises(ConfigError, match=r"tpu_v4: compute.array.scratchpads: row-stationary"):
        simulate("tpu_v4", "alexnet", dataflow="rs", mode="analytic")
    tall = Conv2d(name="tall", c=3, h=64, w=64, k=8, r=13, s=3)
    with pytest.raises(ConfigError, match=r"eyeriss: compute.array.rows = 12"):
        simulate("eyeriss", [tall], dataflow="rs", mode="analytic")
    with pytest.raises(ConfigError, match=r"sparsity.tall = 1.5"):
        simulate("eyeriss", [tall], dataflow="rs", sparsity={"tall": 1.5})
    tiny = {"compute.array.scratchpads.filter_bytes": "4 B"}
    with pytest.raises(ConfigError, match=r"eyeriss: compute.array.scratchpads.filter_bytes"):
        simulate("eyeriss", "alexnet", dataflow="rs", overrides=tiny)


def test_vgg16_dev_frame_rate_gap_narrowed_by_full_height_sets(data):
    """VGG-16 (dev data: its gap guided the search; nothing fitted on it). With the chip's
    full-height PE sets its CONV3-5 layers (E <= 56: the folded 3 x E set fits the array) are
    bound by psum read-back; the model still runs faster than the chip (the strip-mined
    E = 112, 224 layers, scripts/validate/validate_eyeriss.py), but no longer 2.4x."""
    from accelsim.api.eyeriss import vgg16_heldout

    g = vgg16_heldout(data).set_index("quantity")
    free = vgg16_heldout(data, load_hw("eyeriss", {
        "compute.array.network.full_height_sets": False})).set_index("quantity")
    fps, fps_free = g.loc["frames_per_s", "pred"], free.loc["frames_per_s", "pred"]
    assert g.loc["frames_per_s", "meas"] < fps < fps_free
    assert fps_free / fps > 1.3
    assert abs(g.loc["dram_access_per_mac", "err"]) <= 0.40


def test_full_height_sets_give_alexnet_conv2_its_135_active_pes(table):
    """JSSC Table V: CONV2 runs on 135 PEs, its 5 x 27 set folded in two segments; a free
    strip width would cut it (the model searched e = 14 before the rule: 140 PEs)."""
    assert table.loc["CONV2", "active_pes_pred"] == 135


def test_vgg16_table_vi_rows_add_up_and_locate_the_gap(data):
    """Table VI per layer (dev, nothing fitted): the rows as held sum to the totals row (the
    doubtful cells resolved in the data file's note); CONV3-5 are within 10 % of the chip
    (the frame-rate gap sits in the strip-mined CONV1-x and CONV2-x, open:
    docs/gpu_findings_log.md), and every layer that is not MAC-bound ran its GLB at
    2.9-3.1 GB/s."""
    from accelsim.api.eyeriss import vgg16_layers

    v = data["vgg16_heldout"]
    rows, tot = v["measured_layers"], v["measured"]
    for key in ("processing_latency_ms", "total_latency_ms", "glb_accesses_mb"):
        assert sum(r[key] for r in rows) == pytest.approx(tot[key], rel=0.002)
    t = vgg16_layers(data).set_index("layer")
    ratio = t["processing_ms_meas"] / t["processing_ms_pred"]
    assert ((ratio[[n for n in t.index if n.startswith(("CONV3", "CONV4", "CONV5"))]] - 1)
            .abs() < 0.10).all()
    rate = t.loc[[n for n in t.index if not n.startswith("CONV5")], "glb_gb_per_s_meas"]
    assert rate.between(2.9, 3.1).all()
