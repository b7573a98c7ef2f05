"""CPU energy from the same mechanisms as the other kinds (issue 24 point 6): MACs, caches and
DRAM from the table, the busy cores' clocked energy per cycle, the package's idle power; and
an energy efficiency beyond what a chip's TDP and peak allow is flagged where it is shown."""

from __future__ import annotations

import pytest

from accelsim.api.compare import compare
from accelsim.config.registry import load_machine
from accelsim.devices import device_for
from accelsim.devices.cpu import core_clocked_j
from accelsim.report.power import MIN_POWER_FRACTION_AT_PEAK, energy_flag, gflop_per_j_ceiling
from accelsim.workload.ops import Gemm

GEMM = Gemm(name="g", m=4096, n=4096, k=4096, dtype="bf16")


def test_cpu_energy_charges_busy_cores_per_cycle_and_the_idle_package():
    m = load_machine("spr_cpu")
    dev = device_for(m)
    cost = dev.cost(GEMM)
    e = dev.energy_j(cost)
    clocked = core_clocked_j(m, cost)
    assert clocked == pytest.approx(cost.detail.cores_used * m.compute.clock_hz * cost.time_s
                                    * m.energy.core_pj_per_cycle * 1e-12)
    assert e > clocked + 0.9 * m.energy.idle_w * cost.time_s
    # at its load the package draws about its TDP (the constants' derivation), not 35 W
    assert 0.7 * m.tdp_w < e / cost.time_s < 1.2 * m.tdp_w


def test_spr_cpu_efficiency_lies_below_what_its_tdp_and_peak_allow():
    m = load_machine("spr_cpu")
    row = device_for(m).op_row(GEMM)
    ceiling = gflop_per_j_ceiling(m, row["peak_tflops"] * 1e12)
    assert ceiling == pytest.approx(row["peak_tflops"] * 1e3 / (MIN_POWER_FRACTION_AT_PEAK
                                                                 * m.tdp_w))
    assert row["gflops_per_j"] < ceiling
    assert energy_flag(m, row["gflops_per_j"], row["peak_tflops"] * 1e12) == ""


def test_an_efficiency_beyond_the_ceiling_is_flagged_in_compare():
    m = load_machine("spr_cpu")
    peak = m.peak_flops("bf16")
    flag = energy_flag(m, 2 * gflop_per_j_ceiling(m, peak), peak)
    assert flag.startswith("implausible") and "350 W TDP" in flag
    table = compare([GEMM], "spr_cpu").table
    assert "energy_flag" in table.columns and table["energy_flag"].iloc[0] == ""
