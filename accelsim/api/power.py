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
maximum 192 W), so one far below it means the model misses most of the energy.

**Power cap.** A part cannot draw more than its TDP: when the predicted power at the clock
the model runs at (the *demand*, :attr:`PeakPower.demand_w`) exceeds it, the cap lowers the
clock until it fits (:attr:`PeakPower.clock_scale`; dynamic power and throughput scale with
the clock, the supply voltage held: the largest clock cut that can be needed). The check
stays one that can fail: a part whose static power alone reaches its TDP fails, and so does one
whose capped clock falls below the floor its YAML states (``energy.min_clock_hz``: a GPU's
base clock, which the vendor holds under the TDP) or that states no floor.

GPUs price their datapath overhead and board idle power with two constants of the tables
fitted on the measured H200 (``scripts/fit_gpu_power.py``); other machines give their measured
idle power in their YAML (``energy.idle_w``) and a cube-style matrix unit its operand staging
(``energy.staging``).

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
from accelsim.report.power import machine_clock_hz, static_power_w
from accelsim.report.staging import STAGING_TAG
from accelsim.workload.ops import Gemm, Workload

PEAK_GEMM = 8192
"""Side of the square GEMM that stands for peak throughput (M = N = K)."""

TDP_BAND = (0.4, 1.0)
"""Predicted power at peak throughput must lie within this fraction of the published TDP."""

PARTS = ("mac", "operand", "core", "memory")
"""Dynamic power parts the check shows, W: ``mac`` (MACs and other arithmetic), ``operand``
(register files, GPU shared-memory staging, a cube's operand buffers), ``core`` (GPU datapath
overhead ``core.gpu_mac``, CPU core and instruction issue), ``memory`` (on-chip
SRAM/caches/L2, DRAM, links)."""

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
    """Dynamic power by part (:data:`PARTS`) at the load clock, W; sums to :attr:`dynamic_w`."""
    static_parts_w: Mapping[str, float] = field(default_factory=dict)
    """Static power by component (``pe``, ``sram`` leakage; ``idle``: the rest of the part's
    idle draw), W."""
    load_clock_hz: float = 0.0
    """Clock the model ran the GEMM at (a GPU's clock under load), Hz."""
    min_clock_hz: float | None = None
    """Floor of the power cap's clock (``energy.min_clock_hz``), Hz."""

    @property
    def demand_w(self) -> float:
        """Dynamic + static power at the load clock, before any power cap, W."""
        return self.dynamic_w + self.static_w

    @property
    def clock_scale(self) -> float:
        """Share of the load clock the power cap leaves: 1 when the demand fits the TDP, else
        ``(TDP - static) / dynamic`` (0 when the static power alone reaches the TDP)."""
        if not self.tdp_w or self.demand_w <= self.tdp_w:
            return 1.0
        if self.static_w >= self.tdp_w or self.dynamic_w <= 0:
            return 0.0
        return (self.tdp_w - self.static_w) / self.dynamic_w

    @property
    def clock_hz(self) -> float:
        """Clock under the power cap, Hz."""
        return self.load_clock_hz * self.clock_scale

    @property
    def capped(self) -> bool:
        """Whether the power cap lowers the clock."""
        return self.clock_scale < 1.0

    @property
    def total_w(self) -> float:
        """Power at peak throughput under the cap (dynamic power scaled with the clock), W."""
        return self.dynamic_w * self.clock_scale + self.static_w

    @property
    def ratio(self) -> float | None:
        """``total_w / tdp_w`` (``None`` without a published TDP)."""
        return self.total_w / self.tdp_w if self.tdp_w else None

    @property
    def demand_ratio(self) -> float | None:
        """``demand_w / tdp_w``: above 1 the power cap lowers the clock."""
        return self.demand_w / self.tdp_w if self.tdp_w else None

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
    """Dynamic joules (``pj`` less ``static_pj``) of priced records summed per part (a cube's
    operand staging, SRAM records tagged :data:`~accelsim.report.staging.STAGING_TAG`, is
    ``operand``)."""
    dyn = (priced["pj"] - priced["static_pj"]) * 1e-12
    part = priced["level"].map(lambda lv: _PART_OF_LEVEL.get(str(lv), "memory"))
    part = part.where(priced["technology"] != STAGING_TAG, "operand")
    out = dict.fromkeys(PARTS, 0.0)
    for name, j in dyn.groupby(part).sum().items():
        out[str(name)] += float(j)
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
                     parts_w=parts, static_parts_w=static_parts,
                     load_clock_hz=load_clock_hz(machine, row["precision"]),
                     min_clock_hz=getattr(sel, "min_clock_hz", None))


def load_clock_hz(machine: Any, precision: str) -> float:
    """The clock the machine's model runs a dense GEMM at, Hz: a GPU's clock under load at
    ``precision``, else the machine's clock."""
    if getattr(machine, "kind", "") == "gpu":
        return float(machine.load_clock_hz(precision))
    return float(machine_clock_hz(machine) or 0.0)


def tdp_table(checks: list[tuple[PeakPower, str]] | None = None) -> pd.DataFrame:
    """:func:`tdp_checks` as a table: one row per machine (W, pJ/MAC; the parts, ``dynamic_w``
    and ``demand_w`` at the load clock; ``clock_hz`` and ``total_w`` under the power cap;
    ``ratio`` = total / TDP, ``verdict``, ``gap``)."""
    rows = [{"machine": p.machine, "table": p.table, "node_nm": p.node_nm,
             "precision": p.precision, "util": p.util, "dynamic_pj_per_mac": p.dynamic_pj_per_mac,
             **{f"{k}_w": p.parts_w.get(k, 0.0) for k in PARTS},
             "dynamic_w": p.dynamic_w, **{f"static_{k}_w": w for k, w in p.static_parts_w.items()},
             "static_w": p.static_w, "demand_w": p.demand_w, "load_clock_hz": p.load_clock_hz,
             "clock_hz": p.clock_hz, "min_clock_hz": p.min_clock_hz, "total_w": p.total_w,
             "tdp_w": p.tdp_w, "ratio": p.ratio, "verdict": v, "gap": p.gap}
            for p, v in (tdp_checks() if checks is None else checks)]
    return pd.DataFrame(rows)


def tdp_verdict(p: PeakPower) -> str:
    """``pass``, ``FAIL`` or ``known gap`` for one machine (see :func:`tdp_checks`)."""
    lo, hi = TDP_BAND
    r = p.ratio
    if r is None or p.static_w >= p.tdp_w:  # no TDP; or the part could not run at all
        return "FAIL"
    if p.capped and (p.min_clock_hz is None or p.clock_hz < p.min_clock_hz):
        return "FAIL"  # the cap would hold the clock below its floor: the model over-prices
    if lo <= r <= hi:
        return "FAIL" if p.gap else "pass"  # a gap documented but gone: the note is stale
    return "known gap" if p.gap else "FAIL"


def tdp_checks(names: list[str] | None = None) -> list[tuple[PeakPower, str]]:
    """:func:`peak_power` and its verdict for every shipped kernel platform (systolic, GPU,
    CPU machine) that publishes a TDP (``energy.tdp_w``, or a CPU's ``tdp_w``).

    Verdicts: ``pass`` (under the power cap, within :data:`TDP_BAND`); ``FAIL`` (static power
    at or above the TDP; a demand above the TDP that the cap can meet only below the machine's
    ``energy.min_clock_hz``, or with no floor stated; below the band without a documented
    reason; in the band while the YAML still documents a gap); ``known gap`` (below the band,
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
