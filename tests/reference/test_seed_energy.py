"""The seed chapter's energy cases, reproduced by the energy model (accelsim.report.energy_cases).

Expected values and tolerances are read from the case file (accelsim/data/seed_cases.json, a
copy of shared/reference/seed_cases.json); the functions under test run the model.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from accelsim.report import energy_cases

CASES = {c["id"]: c for c in json.loads(
    (Path(__file__).resolve().parents[2] / "accelsim" / "data" / "seed_cases.json").read_text())}


def expected(case_id: str) -> tuple[dict, float]:
    c = CASES[case_id]
    return c["expected"], c["tolerance_rel"]


def test_every_energy_case_has_a_function():
    energy_ids = {cid for cid, c in CASES.items() if c["kind"] == "energy"}
    assert energy_ids <= set(energy_cases.CASES)


def test_nm1_1_systolic_array_vs_dram_streaming():
    """A 128x128 array loads A and B once at its edge (2 DRAM words per 128 MACs): ~11 pJ/op,
    against 2561 pJ/op for streaming every operand from DRAM; 232.8x."""
    exp, tol = expected("NM1.1")
    got = energy_cases.nm1_1()
    assert got["E_baseline_pJ_per_op"] == pytest.approx(exp["E_baseline_pJ_per_op"], rel=tol)
    assert got["E_systolic_pJ_per_op"] == pytest.approx(exp["E_systolic_pJ_per_op"], rel=tol)
    assert got["ratio_x"] == pytest.approx(exp["ratio_x"], rel=tol)
    assert got["MACs_per_cycle"] == exp["MACs_per_cycle"]
    # the text prints 0.016, the rounding of the exact 2/128 the engine moves
    assert got["DRAM_accesses_per_op_systolic"] == 2 / 128
    assert round(got["DRAM_accesses_per_op_systolic"], 3) == exp["DRAM_accesses_per_op_systolic"]


def test_nm1_1_energy_falls_as_the_output_write_is_amortised():
    """The engine also writes the 128x128 outputs; a short K pays for it (640/K pJ/op)."""
    short, long_ = energy_cases.nm1_1(k=512), energy_cases.nm1_1(k=65536)
    assert short["E_systolic_pJ_per_op"] > long_["E_systolic_pJ_per_op"] + 640 / 512 * 0.9


def test_en_dram_l1_ratio():
    exp, _ = expected("EN-DRAM-L1")
    assert energy_cases.en_dram_l1()["ratio_x_derived"] == exp["ratio_x_derived"]


def test_en_ratios_orders_of_magnitude():
    """The 45 nm table reproduces the chapter's ratios: a 32-bit DRAM fetch is ~10^2 x an fp32
    multiply, ~200x a 32-bit integer MAC, >20000x an int8 add, 2-3 orders above registers;
    an fp32 op costs a few pJ and an int8 add tens of fJ."""
    got = energy_cases.en_ratios()
    assert round(math.log10(got["DRAM_32b_vs_FP32_mult_x"])) == 2
    assert got["DRAM_vs_low_precision_op_x"] > 100
    assert got["DRAM_vs_local_int_MAC_45nm_x"] == pytest.approx(200, rel=0.05)
    assert got["DRAM_vs_INT8_add_45nm_x"] > 20000
    assert 2 <= got["DRAM_vs_fp32_MAC_orders"] < 4 and 2 <= got["DRAM_vs_regfile_orders"] < 4
    assert 1 < got["FP_op_pJ"] < 10
    assert 10 <= got["arith_op_on_chip_fJ"] < 100


def test_en_levels_bands():
    """Register < 1 pJ; on-chip SRAM single-digit to tens of pJ; DRAM hundreds of pJ."""
    exp, _ = expected("EN-LEVELS")
    got = energy_cases.en_levels()
    assert got["register_pJ"] < 1
    lo, hi = exp["on_chip_SRAM_pJ"]
    assert all(lo <= e <= hi for e in got["on_chip_SRAM_pJ"])
    assert 100 <= got["DRAM_pJ"] < 1000


def test_lh1_2_tensor_energy_per_level():
    exp, tol = expected("LH1.2")
    got = energy_cases.lh1_2()
    for key in ("tensor_KB", "E_HBM_uJ_derived", "E_register_nJ_derived",
                "HBM_over_register_energy_x_derived"):
        assert got[key] == pytest.approx(exp[key], rel=tol), key


def test_nm1_10_fleets():
    exp, tol = expected("NM1.10")
    got = energy_cases.nm1_10()
    for key, value in got.items():
        assert value == pytest.approx(exp[key], rel=tol), key


def test_dvfs_power_scaling():
    """P_dyn ~ V^2 f: half the clock at the same voltage halves power; scaling the voltage
    with the clock gives f^3. The frame rate follows the engine's frame time at both clocks:
    a compute-bound frame halves it (30 -> 15 fps)."""
    exp, _ = expected("DVFS")
    got = energy_cases.dvfs(fps=exp["throttle_fps"][0])
    assert got["P_half_f_const_V_ratio"] == pytest.approx(0.5)
    assert got["P_half_f_half_V_ratio"] == pytest.approx(0.5 ** 3)
    assert got["throttled_frame_time_s"] == pytest.approx(2 * got["frame_time_s"], rel=0.01)
    assert got["throttle_fps"] == pytest.approx(exp["throttle_fps"][1], rel=0.01)


def test_dvfs_frame_rate_comes_from_the_simulated_frame_time():
    """A DRAM-bound frame (Eyeriss run weight-stationary, 775 MB/s) barely slows when only the
    array clock halves: the throttled rate is a model result, not fps / 2."""
    got = energy_cases.dvfs(fps=30.0, machine="eyeriss", dataflow="ws")
    assert got["throttle_fps"] == pytest.approx(30.0 * got["frame_time_s"]
                                                / got["throttled_frame_time_s"])
    assert got["throttle_fps"] > 25.0
    assert got["P_half_f_const_V_ratio"] == pytest.approx(0.5)
