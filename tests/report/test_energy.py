"""Energy report: pricing action records, breakdowns, summaries, conservation, plots."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from accelsim.api import simulate
from accelsim.config.energy import load_energy_table, table_from_dict
from accelsim.errors import ConfigError
from accelsim.report.energy import (
    ACTION_COLUMNS,
    attach_energy,
    compute_energy,
    conservation,
    energy_breakdown,
    energy_summary,
    energy_table_for,
    pe_register_actions,
    price_actions,
)


def rec(level, operand, direction, count, bits=0.0, *, layer="L", precision="int8",
        technology="", capacity=0.0, word_bits=8.0):
    return {"layer": layer, "level": level, "operand": operand, "direction": direction,
            "count": float(count), "bits": float(bits), "precision": precision,
            "technology": technology, "capacity_bytes": float(capacity),
            "word_bits": float(word_bits)}


@pytest.fixture
def table():
    return load_energy_table("horowitz_45nm")


@pytest.fixture
def actions():
    """A hand-made run: 1000 int8 MACs, SRAM traffic, DRAM (HBM2) traffic."""
    return pd.DataFrame([
        rec("mac", "-", "compute", 1000),
        rec("mac", "-", "idle", 500),
        rec("sram", "input", "read", 100, 800, capacity=8192),
        rec("sram", "input", "write", 50, 400, capacity=8192),
        rec("dram", "input", "read", 50, 400, technology="HBM2"),
        rec("dram", "output", "write", 10, 320, technology="HBM2", word_bits=32),
    ], columns=ACTION_COLUMNS)


def test_each_record_is_priced_by_its_level_rule(actions, table):
    """MAC: count x pJ/MAC; SRAM: accesses x pJ/access(capacity, width); DRAM: bits x pJ/bit.
    Idle PE-cycles cost nothing without a leakage entry."""
    p = price_actions(actions, table)
    assert list(p["pj"]) == pytest.approx([
        1000 * 0.3, 0.0, 100 * 10.0 / 8, 50 * 10.0 / 8, 400 * 3.9, 320 * 3.9])


def test_sram_access_width_sets_the_number_of_accesses(actions, table):
    """With a linear width rule the SRAM energy depends on bits only, whatever the width."""
    a = price_actions(actions, table, sram_word_bits=64)
    b = price_actions(actions, table, sram_word_bits=8)
    assert a["pj"].sum() == pytest.approx(b["pj"].sum())


def test_leakage_charges_busy_and_idle_pe_cycles():
    t = table_from_dict({"name": "leaky", "node_nm": 45, "voltage_v": 0.9,
                         "mac": {"int8": "1 pJ"}, "leakage": {"pe_per_cycle": "0.1 pJ"}})
    p = price_actions(pd.DataFrame([rec("mac", "-", "compute", 10), rec("mac", "-", "idle", 5)]), t)
    assert list(p["pj"]) == pytest.approx([10 * 1.1, 5 * 0.1])


def test_a_precision_missing_from_the_table_is_a_clear_error(actions):
    t = table_from_dict({"name": "tiny", "node_nm": 45, "voltage_v": 0.9,
                         "mac": {"fp16": "1 pJ"}}, file="tiny.yaml")
    with pytest.raises(ConfigError, match=r"tiny.yaml: mac.int8 = 'int8': energy table 'tiny'"):
        price_actions(actions, t)


def test_a_dram_technology_missing_from_the_table_is_a_clear_error(table):
    t = table.with_overrides({})  # an empty override is the same table
    bad = pd.DataFrame([rec("dram", "input", "read", 1, 8, technology="HBM2")])
    t2 = table_from_dict({"name": "nodram", "node_nm": 45, "voltage_v": 0.9,
                          "mac": {"int8": "1 pJ"}, "dram_per_bit": {"DDR4": "10 pJ/bit"}})
    assert price_actions(bad, t)["pj"].sum() == pytest.approx(8 * 3.9)
    with pytest.raises(ConfigError, match=r"nodram: dram.HBM2 = 'HBM2'.*listed: dram.DDR4"):
        price_actions(bad, t2)


def test_summary_units(actions, table):
    """pJ/MAC = total / MACs; TOPS/W = 2 MACs / pJ; average power = J / s."""
    p = price_actions(actions, table)
    s = energy_summary(p, macs=1000, time_s=1e-6)
    total = p["pj"].sum()
    assert s["total_pj"] == pytest.approx(total)
    assert s["pj_per_mac"] == pytest.approx(total / 1000)
    assert s["tops_per_w"] == pytest.approx((2 * 1000 / 1e-6) / (total * 1e-12 / 1e-6) / 1e12)
    assert s["avg_power_w"] == pytest.approx(total * 1e-12 / 1e-6)
    assert sum(s["by_level_pj"].values()) == pytest.approx(total)
    assert list(s["by_level_pj"]) == ["mac", "sram", "dram"]


def test_breakdown_sums_to_the_total_per_layer_level_operand(actions, table):
    p = price_actions(actions, table)
    b = energy_breakdown(p)
    assert list(b.columns) == ["layer", "level", "operand", "pj"]
    assert b["pj"].sum() == pytest.approx(p["pj"].sum())
    assert b.groupby("level")["pj"].sum()["sram"] == pytest.approx(150 * 10 / 8)


def test_pe_registers_follow_the_dataflow(actions):
    """OS: input and weight move (1 read + 1 write per MAC each), the 32-bit accumulator is read
    and written per MAC. WS: weights stay (written once per word loaded from SRAM), psums move."""
    os_ = pe_register_actions(actions, pd.DataFrame({"layer": ["L"], "dataflow": ["os"]}))
    got = {(r.operand, r.direction): (r.count, r.bits) for r in os_.itertuples()}
    assert got[("input", "read")] == (1000, 8000) and got[("weight", "write")] == (1000, 8000)
    assert got[("output", "write")] == (1000, 32000)
    ws = pe_register_actions(actions, pd.DataFrame({"layer": ["L"], "dataflow": ["ws"]}))
    got = {(r.operand, r.direction): r.count for r in ws.itertuples()}
    assert got[("weight", "write")] == 0  # no weight SRAM reads in this hand-made run
    assert got[("psum", "read")] == 1000 and got[("input", "write")] == 1000


# ------------------------------------------------------------------ through the engine


@pytest.fixture(scope="module")
def run_tpu():
    return simulate("tpu_v4", "resnet18", mode="analytic")


def test_every_run_carries_energy_by_default(run_tpu):
    r = run_tpu
    assert r.energy is not None
    assert {"energy_pj", "pj_per_mac"} <= set(r.layers.columns)
    assert r.layers["energy_pj"].sum() == pytest.approx(r.energy.summary["total_pj"])
    doc = r.to_dict()["energy"]
    assert doc["table"] == "scaled_7nm"  # TPU v4 is a 7 nm chip
    assert doc["total_pj"] == pytest.approx(r.layers["energy_pj"].sum())
    assert {d["level"] for d in doc["by_level_operand_pj"]} >= {"mac", "rf", "sram", "dram"}
    assert "pJ/MAC" in r.energy.summary_line()


def test_mac_energy_is_macs_times_the_table(run_tpu):
    r = run_tpu
    mac = r.energy.priced.query("level == 'mac'")
    dynamic = (mac["pj"] - mac["static_pj"]).sum()  # the PEs' leakage is the rest
    assert dynamic == pytest.approx(r.layers["macs"].sum()
                                    * load_energy_table("scaled_7nm").require("mac.bf16"))
    assert mac["static_pj"].sum() > 0


def test_dram_energy_is_bytes_moved_times_pj_per_bit(run_tpu):
    """HBM2 at 3.9 pJ/bit: DRAM energy = 8 x dram_bytes x 3.9 (the engine's own byte count)."""
    r = run_tpu
    assert r.energy.summary["by_level_pj"]["dram"] == pytest.approx(
        8 * r.layers["dram_bytes"].sum() * 3.9)


@pytest.mark.parametrize("hw, wl, flow", [("tpu_v4", "resnet18", "ws"),
                                          ("eyeriss", "alexnet", "os"),
                                          ("scalesim_default", "alexnet", "is"),
                                          ("tpu_v1", "bert_base_encoder", "ws")])
def test_bytes_that_leave_dram_arrive_in_sram(hw, wl, flow):
    """Conservation: per layer and operand, DRAM read bits == SRAM fill (write) bits for inputs,
    weights and partial sums, and DRAM write bits == SRAM drain (read) bits for outputs."""
    r = simulate(hw, wl, dataflow=flow, mode="analytic", energy=False)
    c = conservation(r.actions)
    fills = c[c["operand"].isin(["input", "weight", "psum"])]
    assert (fills["dram_read_bits"] > 0).any()
    assert list(fills["dram_read_bits"]) == pytest.approx(list(fills["sram_fill_bits"]))
    drains = c[c["operand"] == "output"]
    assert list(drains["dram_write_bits"]) == pytest.approx(list(drains["sram_drain_bits"]))
    assert r.layers["dram_bytes"].sum() * 8 == pytest.approx(
        r.actions[r.actions["level"] == "dram"]["bits"].sum())


def test_machine_overrides_change_the_price():
    """A hardware YAML override of the table (energy.overrides) reaches the report."""
    base = simulate("tpu_v4", "resnet18", mode="analytic")
    cheap = simulate("tpu_v4", "resnet18", mode="analytic",
                     overrides={"energy.overrides": {"dram.HBM2": "0 pJ/bit"}})
    assert cheap.energy.summary["by_level_pj"]["dram"] == 0
    assert (base.energy.summary["total_pj"] - cheap.energy.summary["total_pj"]
            == pytest.approx(base.energy.summary["by_level_pj"]["dram"]))
    assert energy_table_for(cheap.machine).require("dram.HBM2") == 0


def test_a_bigger_sram_costs_more_per_access_but_saves_dram():
    """Eyeriss on AlexNet: 16x the global buffer cuts DRAM energy and raises pJ per SRAM bit."""
    like = {"energy.table": "eyeriss_like"}   # its SRAM rule spans 384 B - 128 KiB
    small = simulate("eyeriss", "alexnet", dataflow="ws", mode="analytic", overrides=like)
    big = simulate("eyeriss", "alexnet", dataflow="ws", mode="analytic",
                   overrides={**like, "memory.sram.capacity_bytes": "1728 kB"})
    s, b = small.energy.summary["by_level_pj"], big.energy.summary["by_level_pj"]
    assert b["dram"] < s["dram"]
    per_bit = [r.energy.priced.query("level == 'sram' and direction == 'read'")["pj_per_unit"].max()
               for r in (small, big)]
    assert per_bit[1] > per_bit[0]


def test_leakage_appears_for_tables_that_have_it():
    r = simulate("eyeriss", "alexnet", dataflow="ws", mode="analytic",
                 overrides={"energy.table": "eyeriss_like"})
    leak = r.energy.priced.query("direction == 'leak'")
    cycles = r.layers["total_cycles"].sum()
    assert leak["count"].sum() == cycles
    assert leak["pj"].sum() == pytest.approx(cycles * 108e3 / 1024 * 0.00004416)


def test_compute_energy_with_another_table_is_cheaper_at_7nm():
    r = simulate("tpu_v4", "resnet18", mode="analytic", energy=False)
    e45 = compute_energy(r.actions, r.layers, r.machine, load_energy_table("horowitz_45nm"))
    e7 = compute_energy(r.actions, r.layers, r.machine, load_energy_table("scaled_7nm"))
    assert e7.summary["total_pj"] < e45.summary["total_pj"]
    # off-chip energy does not scale with the node: the same pJ in both
    assert e7.summary["by_level_pj"]["dram"] == pytest.approx(e45.summary["by_level_pj"]["dram"])


def test_attach_energy_is_idempotent(run_tpu):
    before = run_tpu.energy.summary["total_pj"]
    attach_energy(run_tpu)
    assert run_tpu.energy.summary["total_pj"] == before
    assert math.isfinite(run_tpu.layers["pj_per_mac"].iloc[0])


def test_plots_are_built_from_the_tables(run_tpu, tmp_path):
    pytest.importorskip("matplotlib")
    from accelsim.report.energy import dataflow_comparison
    from accelsim.report.plots_energy import plot_energy_by_dataflow, plot_energy_by_layer, save

    breakdown = run_tpu.energy.breakdown()
    ax = plot_energy_by_layer(breakdown)
    levels = breakdown["level"].nunique()  # mac, rf, sram, dram and chip (tpu_v4's idle floor)
    assert levels == 5 and len(ax.patches) == len(run_tpu.layers) * levels  # a bar per level
    assert save(ax, tmp_path / "layers.png").stat().st_size > 0
    comp = dataflow_comparison({"ws": (run_tpu.layers, run_tpu.energy)})
    ax = plot_energy_by_dataflow(comp)
    assert save(ax, tmp_path / "flows.svg").stat().st_size > 0


@pytest.mark.slow
def test_zigzag_agrees_on_the_same_accelerator_and_loop_order(peer_missing):
    """scripts/bench/compare_zigzag.py: with the same per-access costs and loop order, accelsim's
    and ZigZag's (3.9.1) energies agree within 1 % per level and operand (ENERGY.md sec. 6)."""
    import importlib.util
    import os
    from pathlib import Path

    zz_python = Path(os.environ.get("ACCELSIM_ZIGZAG_PYTHON", "/work/zzvenv/bin/python"))
    if not zz_python.exists():
        peer_missing("needs a Python with zigzag-dse==3.9.1 and six: set ACCELSIM_ZIGZAG_PYTHON")
    path = Path(__file__).resolve().parents[2] / "scripts" / "bench" / "compare_zigzag.py"
    spec = importlib.util.spec_from_file_location("compare_zigzag", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    table = mod.compare(mod.run_zigzag(str(zz_python)), mod.run_accelsim()[0])
    assert (table["pj_rel_diff"].abs() <= 0.01).all(), table


def test_energy_attributes_are_the_summary(run_tpu):
    e = run_tpu.energy
    assert e.total_pj == e.summary["total_pj"] > 0
    assert e.pj_per_mac == pytest.approx(e.total_pj / run_tpu.layers["macs"].sum())
    assert e.tops_per_w == pytest.approx(2 * run_tpu.layers["macs"].sum() / e.total_pj)
    assert e.average_power_w == pytest.approx(e.total_pj * 1e-12 / run_tpu.totals["time_s"])
    assert 0 < e.static_power_w < e.average_power_w


def test_static_power_of_a_run_is_the_machines_leakage(run_tpu):
    """Every PE and the whole SRAM leak for the whole run: the run's static power equals the
    machine's leakage inventory x the table's W per PE and per KiB, plus what its measured
    floor (``energy.idle_w``: 45 W, half of TPU v4's 90 W minimum) holds beyond them."""
    from accelsim.report.power import static_inventory, static_power_w

    m = run_tpu.machine
    inv = static_inventory(m)
    assert inv == {"pes": 4 * 128 * 128, "sram_bytes": 32 * 2**20}
    w = static_power_w(m, load_energy_table("scaled_7nm"))
    assert run_tpu.energy.static_power_w == pytest.approx(w["pe"] + w["sram"] + w["idle"],
                                                          rel=1e-9)
    assert w["pe"] + w["sram"] + w["idle"] == pytest.approx(m.energy.idle_w)


def test_results_print_a_short_summary(run_tpu):
    text = repr(run_tpu)
    lines = text.splitlines()
    assert 3 <= len(lines) <= 5
    assert lines[0].startswith("Result(tpu_v4 x resnet18")
    assert "cycles" in lines[1] and "utilization" in lines[1]
    assert "pJ/MAC" in lines[2] and "W average" in lines[2] and "scaled_7nm" in lines[2]
    assert repr(run_tpu.energy).startswith("EnergyReport(table='scaled_7nm'")
