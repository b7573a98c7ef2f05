"""Seed cases of kind ``energy``: each computed once, by :mod:`accelsim.report.energy_cases`
(the engine's action counts priced with the energy tables, or the tables themselves), fed the
case's inputs.

Imports: report.energy_cases, validation.seed_cases.
"""

from __future__ import annotations

import math

from accelsim.report import energy_cases as ec
from accelsim.validation.seed_cases import CaseContext, case

ENGINE = "report.energy_cases.{}: engine actions priced with configs/energy/seed_napkin.yaml"
TABLE = "report.energy_cases.{}: configs/energy/horowitz_45nm.yaml (32-bit words)"


@case("NM1.1", tag="model")
def _nm11(c: CaseContext) -> None:
    got = ec.nm1_1()
    via = ENGINE.format("nm1_1") + " (tpu_v4 MXU, output stationary)"
    for key in ("E_baseline_pJ_per_op", "E_systolic_pJ_per_op", "ratio_x", "MACs_per_cycle"):
        c.check(key, got[key], via=via)
    c.check("DRAM_accesses_per_op_systolic", got["DRAM_accesses_per_op_systolic"], via=via,
            printed=True, note="exact 2/128 = 0.015625, printed 0.016")


@case("EN-DRAM-L1", tag="config")
def _endraml1(c: CaseContext) -> None:
    c.check("ratio_x_derived", ec.en_dram_l1()["ratio_x_derived"],
            via="report.energy_cases.en_dram_l1: seed_napkin DRAM word / SRAM access")


@case("EN-RATIOS", tag="config")
def _enratios(c: CaseContext) -> None:
    got = ec.en_ratios()
    via = TABLE.format("en_ratios")
    for key in ("DRAM_32b_vs_FP32_mult_x", "DRAM_vs_low_precision_op_x",
                "DRAM_vs_local_int_MAC_45nm_x", "DRAM_vs_INT8_add_45nm_x"):
        c.check(key, got[key], via=via)
    c.check("DRAM_vs_arith_or_regfile", got["DRAM_vs_fp32_MAC_orders"], via=via,
            expected=[2, 3], within=True, note="orders of magnitude vs an fp32 MAC")
    c.check("arith_op_on_chip", got["arith_op_on_chip_fJ"], via=via + " (int8 add, fJ)",
            expected=[10, 99], within=True, note="'tens of fJ'")
    c.check("DRAM_operand_fetch", got["DRAM_32b_pJ"], via=via, expected=640,
            note="the case file's canonical 640 pJ per 32-bit word")
    c.skip("FP_op_pJ", f"the text's round 3 pJ; the table's fp32 multiply is {got['FP_op_pJ']} pJ")
    c.skip("CPU_control_energy_per_instr_pJ", "no CPU front-end energy model")


@case("EN-LEVELS", tag="config")
def _enlevels(c: CaseContext) -> None:
    got = ec.en_levels()
    via = TABLE.format("en_levels")
    c.check("register_pJ", got["register_pJ"], via=via)
    c.check("on_chip_SRAM_pJ", max(got["on_chip_SRAM_pJ"]), via=via + " (1 MiB SRAM, the largest)",
            within=True)
    c.check("DRAM_pJ", got["DRAM_pJ"], via=via, expected=[100, 999], within=True,
            note="'hundreds (640 used in examples)'")


@case("NM1.10", tag="law")
def _nm110(c: CaseContext) -> None:
    i = c.inputs
    got = ec.nm1_10(cpu_tflops=i["cpu_TFLOPs"], cpu_w=i["cpu_W"], npu_tflops=i["npu_TFLOPs"],
                    npu_w=i["npu_W"], n_cpu=i["n_cpu"], n_npu=i["n_npu"],
                    hours_per_day=i["hours_per_day"], kg_co2_per_kwh=i["kgCO2_per_kWh"])
    via = "report.energy_cases.nm1_10: rate / power, power x time"
    for key, value in got.items():
        c.check(key, value, via=via)
    per_day = got["aggregate_TFLOPs_each_fleet_derived"] * 1e12 * i["hours_per_day"] * 3600
    c.check("FLOP_per_inference_at_full_util_derived", per_day / i["inferences_per_day"],
            via="fleet FLOP/s x seconds per day / inferences per day")


@case("DVFS", tag="model")
def _dvfs(c: CaseContext) -> None:
    fps = c.expected["throttle_fps"][0]
    vals = ec.dvfs(fps=fps)
    via = ("report.energy_cases.dvfs: P_dyn = V^2 f at half the clock; frame time from the "
           "engine at both clocks")
    law = (math.isclose(vals["P_half_f_const_V_ratio"], 0.5)
           and math.isclose(vals["P_half_f_half_V_ratio"], 0.125))
    c.check("P_dyn_scaling", "V^2 * f" if law else "other", via=via + "; halving f, then V and f",
            tag="law")
    c.check("throttle_fps", [fps, vals["throttle_fps"]], via=via)


@case("LH1.2", tag="law")
def _lh12(c: CaseContext) -> None:
    i = c.inputs
    got = ec.lh1_2(samples=i["samples"], dtype_bytes=i["dtype_bytes"],
                   hbm_pj_per_bit=i["HBM_energy_pJ_per_bit"],
                   register_pj_per_bit=i["register_energy_pJ_per_bit"])
    via = "report.energy_cases.lh1_2: bits x pJ/bit (the case's HBM and register figures)"
    for key, value in got.items():
        c.check(key, value, via=via)
    for key in ("HBM_fetch_latency_ns", "L2_latency_ns", "L1_latency_ns"):
        c.skip(key, "restates an input latency")
