"""Static power of a machine: what leaks (MAC lanes, SRAM) and how much, from its energy table.

Average power of a run = dynamic energy / time + static power; the energy report prices the
static part as per-cycle leakage records (``accelsim/report/ENERGY.md`` section 7), and
:func:`static_power_w` gives it in watts for machines whose models emit no leakage records
(GPUs, CPUs) and for the TDP check of ``accelsim validate``.

Imports: units, errors, config.cpu, config.energy.
"""

from __future__ import annotations

from typing import Any

from accelsim.config.cpu import CPU_PRECISIONS
from accelsim.config.energy import EnergyTable
from accelsim.errors import ConfigError
from accelsim.units import FLOP_PER_MAC


def machine_clock_hz(machine: Any) -> float | None:
    """The clock of a systolic (``clock_hz``), GPU or CPU (``compute.clock_hz``) machine, Hz."""
    clock = getattr(machine, "clock_hz", None) or getattr(getattr(machine, "compute", None),
                                                          "clock_hz", None)
    return float(clock) if clock else None


def static_inventory(machine: Any) -> dict[str, float]:
    """What leaks in ``machine``: ``pes`` (MAC lanes of its matrix units at 16-bit precision:
    systolic PEs, GPU tensor-core lanes, CPU AMX + SIMD lanes) and ``sram_bytes`` (on-chip SRAM:
    the systolic buffer; GPU L2 + per-SM register file and L1/shared memory; CPU L3 + per-core
    L1 and L2). Off-chip DRAM, PHYs, clock tree and control are not counted (ENERGY.md)."""
    kind = getattr(machine, "kind", "")
    if kind == "systolic":
        cores = machine.compute.cores  # a chip's cores each hold the arrays and the SRAM
        return {"pes": float(machine.array.pes * cores),
                "sram_bytes": float(machine.memory.sram.capacity_bytes * cores)}
    if kind == "gpu":
        c, mem = machine.compute, machine.memory
        rates = c.tensor_flop_per_clk_per_sm
        flop16 = max(float(rates.get(p, 0.0)) for p in ("fp16", "bf16"))
        return {"pes": c.sm_count * flop16 / 2,
                "sram_bytes": float(mem.l2_bytes) + c.sm_count * (c.sm_register_file_bytes
                                                                  + c.sm_l1_bytes)}
    if kind == "cpu":
        c, mem = machine.compute, machine.memory
        matrix = float(c.matrix.macs_per_cycle.get("bf16", 0.0)) if c.matrix else 0.0
        per_core = matrix + c.simd.macs_per_cycle("bf16")
        return {"pes": c.cores * per_core,
                "sram_bytes": float(mem.l3.capacity_bytes) + c.cores * (
                    mem.l1.capacity_bytes + mem.l2.capacity_bytes)}
    return {"pes": 0.0, "sram_bytes": 0.0}


def static_power_w(machine: Any, table: EnergyTable) -> dict[str, float]:
    """Static power of ``machine`` per component, W: ``{"pe": W, "sram": W}`` (the table's
    ``static.*`` or per-cycle ``leak.*`` entries times :func:`static_inventory`), and
    ``"idle"``: what the part draws idle beyond that cell leakage (clocked logic that does not
    stop, DRAM background and PHYs, host interface, board). For a GPU it is
    ``static.gpu_idle_pe`` W per tensor-core MAC lane, calibrated on the H200's measured idle
    power; for a machine whose YAML gives its measured idle power (``energy.idle_w``) it is
    that power less the modelled leakage (:func:`idle_beyond_leakage_w`); see
    ``accelsim/report/ENERGY.md`` section 7."""
    inv = static_inventory(machine)
    out = table.static_power_w(pes=inv["pes"], sram_bytes=inv["sram_bytes"],
                               clock_hz=machine_clock_hz(machine))
    measured = getattr(getattr(machine, "energy", None), "idle_w", None)
    if getattr(machine, "kind", "") == "gpu":
        per_pe = (table.get("static.gpu_idle_pe", 0.0) if measured is not None
                  else table.require_gpu_idle(getattr(machine, "name", "?")))
        out["idle"] = inv["pes"] * (per_pe or 0.0)
    idle = idle_beyond_leakage_w(machine, sum(out.values()))
    if idle is not None:
        out["idle"] = out.get("idle", 0.0) + idle
    return out


def idle_beyond_leakage_w(machine: Any, leakage_w: float) -> float | None:
    """``energy.idle_w`` less ``leakage_w`` (the modelled static power), W; ``None`` when the
    machine gives no idle power. A measured idle power below the modelled leakage is a
    :class:`ConfigError`: the table's leakage, or the figure, is wrong."""
    idle_w = getattr(getattr(machine, "energy", None), "idle_w", None)
    if idle_w is None:
        return None
    if idle_w < leakage_w:
        raise ConfigError(f"hardware '{getattr(machine, 'name', '?')}'", "energy.idle_w", idle_w,
                          f"measured idle power is below the {leakage_w:.3g} W of static power "
                          "the energy table already models for this machine")
    return float(idle_w - leakage_w)


MIN_POWER_FRACTION_AT_PEAK = 1.0
"""A chip running at its peak arithmetic rate draws its TDP (the H200 draws 692 of its 700 W
on the back-to-back GEMMs of ``scripts/data/h200_heldout.json``; a CPU's all-core AMX load is
held at its TDP by the PL1 limit at base clock; TPU v4's 192 W is its measured maximum). With
power at least idle + util x (TDP - idle) (dynamic power in proportion to the arithmetic
rate), ``util x peak / power <= peak / TDP`` at every utilization, so no workload can be more
efficient than ``peak / TDP`` (:func:`gflop_per_j_ceiling`): a figure above it means the
model leaves out power the part draws (fixed power: PHYs, uncore, clock tree, idle)."""


def machine_tdp_w(machine: Any) -> float | None:
    """The published TDP of a machine (a CPU's ``tdp_w``, else ``energy.tdp_w``), W."""
    tdp = getattr(machine, "tdp_w", None) or getattr(getattr(machine, "energy", None),
                                                      "tdp_w", None)
    return float(tdp) if tdp else None


def gflop_per_j_ceiling(machine: Any, peak_flop_per_s: float | None) -> float | None:
    """The most GFLOP/J the chip's TDP and peak allow: ``peak / (MIN_POWER_FRACTION_AT_PEAK x
    TDP)``; None without a TDP or a peak."""
    tdp = machine_tdp_w(machine)
    if not tdp or not peak_flop_per_s:
        return None
    return peak_flop_per_s / (MIN_POWER_FRACTION_AT_PEAK * tdp) / 1e9


def machine_peak_flop_per_s(machine: Any) -> float | None:
    """The machine's highest dense peak over the precisions it runs, FLOP/s (systolic: its
    array; GPU: tensor cores or fp32 SIMT; CPU: matrix unit or SIMD); None for other kinds.
    The most lenient ceiling for a run that mixes precisions."""
    kind = getattr(machine, "kind", "")
    if kind == "systolic":
        return FLOP_PER_MAC * float(machine.peak_macs_per_s)
    if kind == "gpu":
        precisions = [*machine.compute.tensor_flop_per_clk_per_sm, "fp32"]
    elif kind == "cpu":
        precisions = [p for p in CPU_PRECISIONS if machine.supports(p)]
    else:
        return None
    return max((float(machine.peak_flops(p)) for p in precisions), default=None)


def energy_flag(machine: Any, gflops_per_j: float, peak_flop_per_s: float | None) -> str:
    """``""``, or one line saying why ``gflops_per_j`` is implausible for ``machine`` (above
    :func:`gflop_per_j_ceiling`): the one rule every table and document showing an energy
    efficiency applies (``accelsim compare``, ``accelsim run`` and its JSON)."""
    ceiling = gflop_per_j_ceiling(machine, peak_flop_per_s)
    if ceiling is None or not gflops_per_j == gflops_per_j or gflops_per_j <= ceiling:
        return ""
    return (f"implausible: {gflops_per_j:.4g} GFLOP/J > {ceiling:.4g} (peak "
            f"{peak_flop_per_s / 1e12:.4g} TFLOP/s / {MIN_POWER_FRACTION_AT_PEAK:g} x the "
            f"{machine_tdp_w(machine):.4g} W TDP)")


def run_energy_flag(machine: Any, flops: float, energy_j: float) -> str:
    """:func:`energy_flag` of a whole run (``flops`` FLOP in ``energy_j`` J) against the
    machine's highest peak (:func:`machine_peak_flop_per_s`); ``""`` without energy."""
    if not energy_j or not flops or energy_j != energy_j:
        return ""
    return energy_flag(machine, flops / energy_j / 1e9, machine_peak_flop_per_s(machine))
