"""Predicted power at peak throughput, held against each machine's published TDP.

    >>> from accelsim.api.power import peak_power
    >>> p = peak_power("h100")
    >>> p.total_w, p.tdp_w, p.ratio

How: one large square GEMM (:data:`PEAK_GEMM` per side, the machine's matrix precision) runs
through the machine's own model (:func:`accelsim.api.compare.run_kernel`) and is priced with
the machine's default energy table: its dynamic energy over its time is the dynamic power at
the highest throughput the model reaches (``util`` says what share of the dense peak that
is), and the table's static power (:func:`accelsim.report.power.static_power_w`: cell
leakage, and for a GPU the board's idle draw) is added. The dynamic energy is not scaled up to
100 % of peak: a GEMM held back by DRAM bandwidth (TPU v1's DDR3) would then be charged more
DRAM traffic per second than its memory can move. :func:`dynamic_parts_j` splits the dynamic
part (:data:`PARTS`: MACs, operand staging, datapath overhead, memory) for the table
``accelsim validate`` prints.

The band (:data:`TDP_BAND`, 0.4-1.0 x TDP) and why it is that wide are in
``accelsim/report/ENERGY.md`` section 7: a chip running dense GEMMs at full rate sits at or
near its power limit (an H100 SXM at its 700 W cap, clocks lowered to hold it; TPU v4's
maximum 192 W), so a prediction above the TDP is impossible (beyond a documented held-out
prediction's :data:`OVER_TDP_TOLERANCE`) and one far below it means the model misses most of
the energy. GPUs price their datapath overhead and board idle power with two constants of the
tables fitted on the measured H200 (``scripts/fit_gpu_power.py``); systolic arrays and CPUs
have no such anchor and leave out their clock tree, control, DRAM background and PHY power.

Imports: api.compare, config, report, workload.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from accelsim.api.compare import load_platform, run_kernel, with_fallback
from accelsim.config.energy import EnergyTable
from accelsim.report.energy import compute_energy, energy_table_for, price_actions
from accelsim.report.gpu_power import gpu_energy_parts
from accelsim.report.power import static_power_w
from accelsim.workload.ops import Gemm, Workload

PEAK_GEMM = 8192
"""Side of the square GEMM that stands for peak throughput (M = N = K)."""

TDP_BAND = (0.4, 1.0)
"""Predicted power at peak throughput must lie within this fraction of the published TDP."""

OVER_TDP_TOLERANCE = 0.10
"""How far above its TDP a machine may be predicted and still be listed as a known gap (its
YAML's ``energy.tdp_gap`` saying why) rather than fail: the prediction error of constants
carried from the H200 to another GPU by the scaling law (the H200's own GEMM time in the model
is 7 % shorter than measured; ENERGY.md section 7). Beyond it, or undocumented, above the TDP
fails: the model over-prices (the 45 nm table put TPU v4 at 1.9 x its TDP)."""

PARTS = ("mac", "operand", "core", "memory")
"""Dynamic power parts the check shows, W: ``mac`` (MACs and other arithmetic), ``operand``
(register files, GPU shared-memory staging), ``core`` (GPU datapath overhead ``core.gpu_mac``,
CPU instruction issue ``instruction_pj``), ``memory`` (on-chip SRAM/caches/L2, DRAM, links)."""

_PART_OF_LEVEL = {"mac": "mac", "vector": "mac", "rf": "operand", "sram": "memory",
                  "noc": "memory", "dram": "memory", "link": "memory"}


@dataclass(frozen=True, slots=True, kw_only=True)
class PeakPower:
    """Power of one machine at its dense peak MAC rate, W, and its published TDP."""

    machine: str
    table: str
    node_nm: float
    precision: str
    util: float
    """Share of the dense peak MAC rate the model reaches on the GEMM."""
    dynamic_pj_per_mac: float
    peak_macs_per_s: float
    """Dense peak of the matrix unit at ``precision``, MAC/s."""
    dynamic_w: float
    static_w: float
    tdp_w: float | None
    gap: str = ""
    """The machine's documented reason for lying outside the band (``energy.tdp_gap``)."""
    parts_w: Mapping[str, float] = field(default_factory=dict)
    """Dynamic power by part (:data:`PARTS`), W; sums to :attr:`dynamic_w`."""
    static_parts_w: Mapping[str, float] = field(default_factory=dict)
    """Static power by component (``pe``, ``sram`` leakage; a GPU's board ``idle``), W."""

    @property
    def total_w(self) -> float:
        """Dynamic + static power at peak throughput, W."""
        return self.dynamic_w + self.static_w

    @property
    def ratio(self) -> float | None:
        """``total_w / tdp_w`` (``None`` without a published TDP)."""
        return self.total_w / self.tdp_w if self.tdp_w else None

    @property
    def in_band(self) -> bool | None:
        """Whether :attr:`ratio` lies within :data:`TDP_BAND` (``None`` without a TDP)."""
        r = self.ratio
        return None if r is None else TDP_BAND[0] <= r <= TDP_BAND[1]


def matrix_precision(machine: Any) -> str:
    """The precision a machine's matrix unit runs GEMMs at: the systolic array's, else bf16
    (fp16 where a GPU lacks bf16), else the machine's default."""
    if getattr(machine, "kind", "") == "systolic":
        return machine.array.precision
    supports = getattr(machine, "supports", None)
    for p in ("bf16", "fp16"):
        if supports is not None and supports(p):
            return p
    return getattr(machine, "default_precision", "fp32")


def dynamic_parts_j(machine: Any, op: Any, table: EnergyTable) -> dict[str, float]:
    """Dynamic energy of ``op`` on ``machine`` by part (:data:`PARTS`), joules, priced as
    :func:`accelsim.api.compare.run_kernel` prices it (its total less static power)."""
    op = with_fallback(machine, op)
    kind = getattr(machine, "kind", "")
    if kind == "gpu":
        from accelsim.api.gpu import simulate_op

        doc = simulate_op(machine, op, mode="analytic")
        p = gpu_energy_parts(machine, table, macs=float(op.macs), flops=doc["flops"],
                             l2_bytes=doc["l2_bytes"], hbm_bytes=doc["hbm_bytes"],
                             precision=doc["precision"])
        return {"mac": p["mac"] + p["vector"], "operand": p["rf"] + p["smem"],
                "core": p["core"], "memory": p["l2"] + p["hbm"]}
    if kind == "cpu":
        from accelsim.hw.cpu import cost_actions, op_cost

        recs = pd.DataFrame(cost_actions(machine, op_cost(machine, op)))
        issue = (recs["level"] == "mac") & (recs["direction"] == "issue")
        out = _by_part(price_actions(recs[~issue], table))
        out["core"] = float(recs.loc[issue, "count"].sum()) * machine.energy.instruction_pj * 1e-12
        return out
    from accelsim.api.systolic import simulate

    r = simulate(machine, Workload(op.name, (op,)), mode="analytic", energy=False)
    vec = r.actions["level"] == "vector"
    priced = [price_actions(r.actions[vec].assign(level="mac"), table)]
    if (~vec).any():
        priced.append(compute_energy(r.actions[~vec].reset_index(drop=True), r.layers, machine,
                                     table).priced)
    return _by_part(pd.concat(priced, ignore_index=True))


def _by_part(priced: pd.DataFrame) -> dict[str, float]:
    """Dynamic joules (``pj`` less ``static_pj``) of priced records summed per part."""
    dyn = (priced["pj"] - priced["static_pj"]) * 1e-12
    out = dict.fromkeys(PARTS, 0.0)
    for level, j in dyn.groupby(priced["level"]).sum().items():
        out[_PART_OF_LEVEL.get(str(level), "memory")] += float(j)
    return out


def peak_power(hw: Any, *, size: int = PEAK_GEMM) -> PeakPower:
    """Power of ``hw`` (name, path or machine) at peak throughput; see the module docstring."""
    machine = load_platform(hw) if isinstance(hw, str) else hw
    table = energy_table_for(machine)
    prec = matrix_precision(machine)
    op = Gemm(name="peak_gemm", m=size, n=size, k=size, dtype=prec)
    row = run_kernel(machine, op, table=table)
    static_parts = static_power_w(machine, table)
    static = sum(static_parts.values())
    macs = float(op.macs)
    dyn_pj = (row["energy_j"] - static * row["time_s"]) * 1e12 / macs
    peak_macs = row["peak_tflops"] * 1e12 / 2
    parts = {k: j / row["time_s"] for k, j in dynamic_parts_j(machine, op, table).items()}
    sel = getattr(machine, "energy", None)
    tdp = getattr(sel, "tdp_w", None) or getattr(machine, "tdp_w", None)
    return PeakPower(machine=machine.name, table=table.name, node_nm=table.node_nm,
                     precision=row["precision"], util=float(row["util"]),
                     dynamic_pj_per_mac=dyn_pj, peak_macs_per_s=peak_macs,
                     dynamic_w=dyn_pj * 1e-12 * macs / row["time_s"], static_w=static,
                     tdp_w=float(tdp) if tdp else None, gap=str(getattr(sel, "tdp_gap", "") or ""),
                     parts_w=parts, static_parts_w=static_parts)


def tdp_table(checks: list[tuple[PeakPower, str]] | None = None) -> pd.DataFrame:
    """:func:`tdp_checks` as a table: one row per machine (W, pJ/MAC, ``ratio`` = total / TDP,
    ``verdict``, ``gap``)."""
    rows = [{"machine": p.machine, "table": p.table, "node_nm": p.node_nm,
             "precision": p.precision, "util": p.util, "dynamic_pj_per_mac": p.dynamic_pj_per_mac,
             **{f"{k}_w": p.parts_w.get(k, 0.0) for k in PARTS},
             "dynamic_w": p.dynamic_w, **{f"static_{k}_w": w for k, w in p.static_parts_w.items()},
             "static_w": p.static_w, "total_w": p.total_w,
             "tdp_w": p.tdp_w, "ratio": p.ratio, "verdict": v, "gap": p.gap}
            for p, v in (tdp_checks() if checks is None else checks)]
    return pd.DataFrame(rows)


def tdp_verdict(p: PeakPower) -> str:
    """``pass``, ``FAIL`` or ``known gap`` for one machine (see :func:`tdp_checks`)."""
    lo, hi = TDP_BAND
    r = p.ratio
    if r is None:
        return "FAIL"
    if r > hi:  # above the TDP: the part would throttle; the model over-prices
        return "known gap" if p.gap and r <= hi + OVER_TDP_TOLERANCE else "FAIL"
    if r >= lo:
        return "FAIL" if p.gap else "pass"  # a gap documented but gone: the note is stale
    return "known gap" if p.gap else "FAIL"


def tdp_checks(names: list[str] | None = None) -> list[tuple[PeakPower, str]]:
    """:func:`peak_power` and its verdict for every shipped kernel platform (systolic, GPU,
    CPU machine) that publishes a TDP (``energy.tdp_w``, or a CPU's ``tdp_w``).

    Verdicts: ``pass`` (within :data:`TDP_BAND`); ``FAIL`` (outside the band without a
    documented reason; above it by more than :data:`OVER_TDP_TOLERANCE`; in the band while the
    YAML still documents a gap); ``known gap`` (outside the band, within that tolerance above,
    the reason in the machine's ``energy.tdp_gap``)."""
    from accelsim.files import builtin_names

    out = []
    for name in names if names is not None else builtin_names("hardware"):
        machine = load_platform(name)
        if getattr(machine, "kind", "") not in ("systolic", "gpu", "cpu"):
            continue
        sel = getattr(machine, "energy", None)
        if not (getattr(sel, "tdp_w", None) or getattr(machine, "tdp_w", None)):
            continue
        p = peak_power(machine)
        out.append((p, tdp_verdict(p)))
    return out
