"""The seed chapter's energy cases, computed by the energy model (one function per case).

Each function returns ``{quantity: value}`` with the quantity names of
``accelsim/data/seed_cases.json`` (``expected`` keys), so the validation suite can compare
them. Array cases run the real model: the machine is loaded from its YAML, the layer is
mapped and replayed by the engine, its action records are tabulated, and the records are
priced with an energy table. Non-array baselines (the chapter's "DRAM streaming" machine)
are action records built from the operator's MACs by a stated access rule, priced by the same
table. Nothing here returns a stored result.

Imports: units, precision, config.energy, config.energy_scaling, config.registry,
engine.systolic_run, mapping.row_stationary, mapping.systolic, workload.ops, report.energy,
report.rs_tables, report.tables. No api: this module sits under it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from accelsim.config.energy import load_energy_table
from accelsim.config.energy_scaling import scale_dynamic_energy
from accelsim.config.registry import load_machine
from accelsim.engine.systolic_run import run_layer
from accelsim.mapping.row_stationary import plan_rs
from accelsim.mapping.systolic import plan_layer
from accelsim.precision import PRECISION_BYTES
from accelsim.report.energy import ACTION_COLUMNS, compute_energy, price_actions
from accelsim.report.rs_tables import rs_actions, rs_layer_row
from accelsim.report.tables import actions_table, layer_row
from accelsim.units import BITS_PER_BYTE
from accelsim.workload.ops import Gemm

SEED_TABLE = "seed_napkin"
"""The seed's own figures: 640 pJ per 32-bit DRAM word, 1 pJ per op, 0.5 pJ per SRAM access."""


def run_gemm_energy(machine: Any, gemm: Gemm, dataflow: str, table_name: str | None = None,
                    ) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """Map, replay and price one GEMM: (layers table, action records, EnergyReport)."""
    if dataflow == "rs":    # row-stationary machines (Eyeriss): the spatial mapping
        run = run_layer(machine, plan_rs(machine, gemm), "analytic")
        row = rs_layer_row(machine, run)
        layers = pd.DataFrame([row])
        actions = pd.DataFrame(rs_actions(machine, run, row["total_cycles"]))
    else:
        plan = plan_layer(machine, gemm, dataflow)
        run = run_layer(machine, plan, "analytic")
        layers = pd.DataFrame([layer_row(machine, run)])
        actions = actions_table(machine, [run])
    table = load_energy_table(table_name) if table_name else None
    return layers, actions, compute_energy(actions, layers, machine, table)


def streaming_actions(gemm: Gemm, precision: str) -> pd.DataFrame:
    """Action records of the chapter's no-reuse baseline: per MAC, DRAM reads of A, B and C,
    a DRAM write of C, and the MAC itself (``4`` DRAM word accesses per op)."""
    w = PRECISION_BYTES[precision] * BITS_PER_BYTE
    n = float(gemm.macs)
    recs = [{"layer": gemm.name, "level": "mac", "operand": "-", "direction": "compute",
             "count": n, "bits": 0.0}]
    for operand, direction in (("input", "read"), ("weight", "read"), ("psum", "read"),
                               ("output", "write")):
        recs.append({"layer": gemm.name, "level": "dram", "operand": operand,
                     "direction": direction, "count": n, "bits": n * w})
    df = pd.DataFrame(recs)
    (df["precision"], df["technology"], df["capacity_bytes"],
     df["word_bits"]) = precision, "DDR3", 0.0, w
    return df[ACTION_COLUMNS]


def nm1_1(k: int = 65536) -> dict[str, float]:
    """Napkin Math 1.1: DRAM-streaming vs a 128x128 systolic array, pJ per op (= per MAC).

    The array is TPU v4's MXU (one 128x128 array, 32-bit words so that a word fetch is the
    text's 640 pJ) running an output-stationary ``128 x k x 128`` GEMM; ``k`` is long so the
    one-off output write (``640/k`` pJ/op) is negligible, as the text ignores it.
    """
    machine = load_machine("tpu_v4", {"compute.array.count": 1,
                                      "compute.array.precision": "fp32",
                                      "energy.table": SEED_TABLE,
                                      "energy.idle_w": None})  # the text counts accesses only
    gemm = Gemm(name="nm1_1", m=128, n=128, k=k)
    layers, actions, rep = run_gemm_energy(machine, gemm, "os")
    macs = float(layers["macs"].sum())
    dram = actions[actions["level"] == "dram"]
    loads = (float(dram[dram["direction"] == "read"]["bits"].sum())
             / (8 * machine.array.operand_bytes))
    base = price_actions(streaming_actions(gemm, "fp32"), rep.table)
    e_base = float(base["pj"].sum()) / macs
    e_sys = rep.summary["pj_per_mac"]
    return {"E_baseline_pJ_per_op": e_base, "DRAM_accesses_per_op_systolic": loads / macs,
            "E_systolic_pJ_per_op": e_sys, "ratio_x": e_base / e_sys,
            "MACs_per_cycle": float(machine.array.pes)}


def _word_pj(table: Any, level: str, bits: float = 32, capacity: float = 64 * 1024,
             technology: str = "DDR3", direction: str = "read", precision: str = "fp32") -> float:
    """Price one access of ``bits`` at a level through :func:`price_actions`."""
    rec = pd.DataFrame([{"layer": "x", "level": level, "operand": "input",
                         "direction": direction, "count": 1.0, "bits": float(bits),
                         "precision": precision,
                         "technology": technology if level == "dram" else "",
                         "capacity_bytes": capacity if level == "sram" else 0.0,
                         "word_bits": float(bits)}])
    return float(price_actions(rec, table)["pj"].sum())


def en_dram_l1() -> dict[str, float]:
    """Pitfall: a DRAM operand fetch (640 pJ) vs an on-chip L1 SRAM access (0.5 pJ)."""
    t = load_energy_table(SEED_TABLE)
    return {"ratio_x_derived": _word_pj(t, "dram") / _word_pj(t, "sram")}


def en_ratios(table_name: str = "horowitz_45nm") -> dict[str, float]:
    """The chapter's order-of-magnitude ratios, from the 45 nm table (DRAM word = 32 bits)."""
    t = load_energy_table(table_name)
    dram = _word_pj(t, "dram")
    rf = _word_pj(t, "rf")
    return {"DRAM_32b_pJ": dram,
            "DRAM_32b_vs_FP32_mult_x": dram / t.require("mult.fp32"),
            "DRAM_vs_low_precision_op_x": dram / t.require("mac.int8"),
            "DRAM_vs_local_int_MAC_45nm_x": dram / t.require("mac.int32"),
            "DRAM_vs_INT8_add_45nm_x": dram / t.require("add.int8"),
            "DRAM_vs_regfile_orders": math.log10(dram / rf),
            "DRAM_vs_fp32_MAC_orders": math.log10(dram / t.require("mac.fp32")),
            "FP_op_pJ": t.require("mult.fp32"),
            "arith_op_on_chip_fJ": 1e3 * t.require("add.int8")}


def en_levels(table_name: str = "horowitz_45nm") -> dict[str, Any]:
    """Per-level access energy of a 32-bit word: register, on-chip SRAM (8 KiB..1 MiB), DRAM."""
    t = load_energy_table(table_name)
    return {"register_pJ": _word_pj(t, "rf"),
            "on_chip_SRAM_pJ": [_word_pj(t, "sram", capacity=8 * 1024),
                                _word_pj(t, "sram", capacity=2**20)],
            "DRAM_pJ": _word_pj(t, "dram")}


def lh1_2(samples: int = 16000, dtype_bytes: int = 2, hbm_pj_per_bit: float = 20.0,
          register_pj_per_bit: float = 0.1) -> dict[str, float]:
    """Lighthouse 1.2: energy to move a 16,000-sample fp16 tensor from HBM vs from registers."""
    t = load_energy_table(SEED_TABLE).with_overrides(
        {"dram.HBM2": f"{hbm_pj_per_bit} pJ", "rf.read": f"{register_pj_per_bit} pJ"})
    bits = samples * dtype_bytes * BITS_PER_BYTE
    e_hbm = _word_pj(t, "dram", bits=bits, technology="HBM2")
    e_reg = _word_pj(t, "rf", bits=bits)
    return {"tensor_KB": samples * dtype_bytes / 1e3, "E_HBM_uJ_derived": e_hbm * 1e-6,
            "E_register_nJ_derived": e_reg * 1e-3,
            "HBM_over_register_energy_x_derived": e_hbm / e_reg}


def operating_energy_kwh(power_w: float, hours: float, count: int = 1) -> float:
    """Energy of ``count`` devices drawing ``power_w`` for ``hours``, kWh."""
    return power_w * count * hours / 1e3


def nm1_10(cpu_tflops: float = 1, cpu_w: float = 100, npu_tflops: float = 10, npu_w: float = 5,
           n_cpu: int = 1000, n_npu: int = 100, hours_per_day: float = 24,
           kg_co2_per_kwh: float = 0.429) -> dict[str, float]:
    """Napkin Math 1.10: a CPU fleet vs an NPU fleet at constant power."""
    cpu_day = operating_energy_kwh(cpu_w, hours_per_day, n_cpu)
    npu_day = operating_energy_kwh(npu_w, hours_per_day, n_npu)
    return {"cpu_eff_TFLOPs_per_W": cpu_tflops / cpu_w, "npu_eff_TFLOPs_per_W": npu_tflops / npu_w,
            "eff_gap_x": (npu_tflops / npu_w) / (cpu_tflops / cpu_w),
            "cpu_kWh_per_day": cpu_day, "npu_kWh_per_day": npu_day,
            "CO2_saved_t_per_year": (cpu_day - npu_day) * 365 * kg_co2_per_kwh / 1e3,
            "aggregate_TFLOPs_each_fleet_derived": cpu_tflops * n_cpu}


def dynamic_power(power_w: float, *, f_ratio: float, v_ratio: float) -> float:
    """Dynamic power after DVFS: energy per op scales as V^2 (same node), ops per s as f."""
    return scale_dynamic_energy(power_w, node_from=1, node_to=1, v_from=1, v_to=v_ratio) * f_ratio


DVFS_MACHINE = "scalesim_default"
"""Machine whose clock the DVFS case scales: a 32x32 array whose DRAM keeps up with the
array on :data:`DVFS_FRAME`, so the frame is compute-bound (as the text's example assumes)."""

DVFS_FRAME = Gemm(name="frame", m=1024, n=1024, k=1024)
"""One frame of the DVFS case's workload: a 1024^3 GEMM."""


def frame_time_s(machine: Any, frame: Gemm = DVFS_FRAME, dataflow: str | None = None) -> float:
    """Seconds the engine takes for one frame on ``machine`` (analytic fold schedule)."""
    layers, _, _ = run_gemm_energy(machine, frame, dataflow or machine.array.dataflow)
    return float(layers["time_s"].sum())


def dvfs(fps: float = 30.0, f_ratio: float = 0.5, machine: str = DVFS_MACHINE,
         frame: Gemm = DVFS_FRAME, dataflow: str | None = None) -> dict[str, float]:
    """DVFS: P_dyn ~ V^2 f. The clock of ``machine`` is scaled by ``f_ratio`` and the frame
    is run by the engine at both clocks: the throttled frame rate is ``fps`` times the ratio
    of the frame times (a compute-bound frame slows by 1/f_ratio; a DRAM-bound one less,
    since DRAM bandwidth does not scale with the array clock). Power at the lower clock:
    constant V scales as f, V scaled with f as f^3. ``dataflow``: default the machine's."""
    base = load_machine(machine)
    slow = load_machine(machine, {"clock_hz": base.clock_hz * f_ratio})
    f = slow.clock_hz / base.clock_hz
    t_base, t_slow = frame_time_s(base, frame, dataflow), frame_time_s(slow, frame, dataflow)
    return {"P_half_f_const_V_ratio": dynamic_power(1.0, f_ratio=f, v_ratio=1.0),
            "P_half_f_half_V_ratio": dynamic_power(1.0, f_ratio=f, v_ratio=f),
            "frame_time_s": t_base, "throttled_frame_time_s": t_slow,
            "throttle_fps": fps * t_base / t_slow}


CASES: dict[str, Callable[[], dict[str, Any]]] = {
    "NM1.1": nm1_1, "EN-DRAM-L1": en_dram_l1, "EN-RATIOS": en_ratios, "EN-LEVELS": en_levels,
    "NM1.10": nm1_10, "DVFS": dvfs, "LH1.2": lh1_2,
}
"""Seed case id -> function computing its quantities."""
