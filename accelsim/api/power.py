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

**The check is a prediction with a band that can fail both ways.** The figure checked is the
*demand* (:attr:`PeakPower.demand_w`): the predicted power at the clock the model runs at,
never capped. Its band (:attr:`PeakPower.band_w`) is ``TDP_BAND[0] x TDP`` below (why 0.4:
``accelsim/report/ENERGY.md`` section 7; a chip running dense GEMMs at full rate sits at or
near its power limit, so one far below it means the model misses most of the energy) and,
above, the most a power cap can absorb (:attr:`PeakPower.max_demand_w`): the TDP itself for a
part that states no clock floor, else the demand at which the cap's clock reaches the floor
its YAML states (``energy.min_clock_hz``: a GPU's base clock, which the vendor holds under
the TDP). A demand above that over-prices and fails; one below the band under-prices and
fails unless the YAML documents why (``energy.tdp_gap``).

**Power cap** (what the part then draws, shown, not checked): when the demand exceeds the
TDP, the cap lowers the clock until it fits (:attr:`PeakPower.clock_scale`; dynamic power and
throughput scale with the clock, the supply voltage held: the largest clock cut that can be
needed), and :attr:`PeakPower.total_w` is the TDP.

**Fit reproductions are not validation.** A machine whose energy constants were fitted on the
very GEMM the check runs (:data:`REPRODUCES_FIT`: the H200, whose ``core.gpu_mac`` and
``static.gpu_idle_pe`` come from its measured board power on this GEMM) gets the verdict
``reproduces fit`` when in its band, and is counted neither as a pass nor as evidence.

GPUs price their datapath overhead and board idle power with two constants of the tables
fitted on the measured H200 (``scripts/fit/fit_gpu_power.py``); other machines give their measured
idle power in their YAML (``energy.idle_w``) and a cube-style matrix unit its operand staging
(``energy.staging``).

Imports: files, config.energy, devices.cpu, hw.cpu, report.*, workload.ops, api.compare, api.gpu,
api.simulate.
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
"""Predicted demand at peak throughput must lie within this fraction of the published TDP; the
upper end is raised, for a part stating a clock floor, to what its power cap can absorb
(:attr:`PeakPower.max_demand_w`)."""

REPRODUCES_FIT = {
    "h200": "core.gpu_mac and static.gpu_idle_pe are fitted on this GEMM's measured board power "
            "and idle power (scripts/fit/fit_gpu_power.py; scripts/data/h200_heldout.json parts "
            "clock_under_load, env)",
}
"""Machines whose check reproduces a fit (verdict ``reproduces fit``), with what was fitted."""

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
    def max_demand_w(self) -> float | None:
        """The most demand a power cap can absorb, W: the TDP without a clock floor, else
        ``static + (TDP - static) x load clock / floor`` (the cap's clock reaches the floor
        there); ``None`` without a TDP."""
        if not self.tdp_w:
            return None
        if not self.min_clock_hz or not self.load_clock_hz or self.static_w >= self.tdp_w:
            return self.tdp_w * TDP_BAND[1]
        stretch = max(1.0, self.load_clock_hz / self.min_clock_hz)
        return self.static_w + (self.tdp_w * TDP_BAND[1] - self.static_w) * stretch

    @property
    def band_w(self) -> tuple[float, float] | None:
        """(lowest, highest) demand that passes, W (``None`` without a TDP)."""
        hi = self.max_demand_w
        return None if hi is None else (TDP_BAND[0] * self.tdp_w, hi)

    @property
    def in_band(self) -> bool | None:
        """Whether the uncapped :attr:`demand_w` lies within :attr:`band_w` (``None`` without
        a TDP). Either side can fail."""
        band = self.band_w
        return None if band is None else band[0] <= self.demand_w <= band[1]


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
        from accelsim.devices.cpu import core_clocked_j
        from accelsim.hw.cpu import cost_actions, op_cost

        recs = pd.DataFrame(cost_actions(machine, op_cost(machine, op)))
        issue = (recs["level"] == "mac") & (recs["direction"] == "issue")
        out = _by_part(price_actions(recs[~issue], table))
        out["core"] = float(recs.loc[issue, "count"].sum()) * machine.energy.instruction_pj * 1e-12
        out["core"] += core_clocked_j(machine, op_cost(machine, op))
        return out
    from accelsim.api.simulate import simulate

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
    and ``demand_w`` at the load clock, the checked figure, with ``demand_ratio`` = demand /
    TDP and its band ``band_lo_w``-``band_hi_w``; ``clock_hz`` and ``total_w`` under the power
    cap, ``ratio`` = total / TDP; ``verdict``, ``gap``)."""
    rows = [{"machine": p.machine, "table": p.table, "node_nm": p.node_nm,
             "precision": p.precision, "util": p.util, "dynamic_pj_per_mac": p.dynamic_pj_per_mac,
             **{f"{k}_w": p.parts_w.get(k, 0.0) for k in PARTS},
             "dynamic_w": p.dynamic_w, **{f"static_{k}_w": w for k, w in p.static_parts_w.items()},
             "static_w": p.static_w, "demand_w": p.demand_w, "load_clock_hz": p.load_clock_hz,
             "clock_hz": p.clock_hz, "min_clock_hz": p.min_clock_hz, "total_w": p.total_w,
             "tdp_w": p.tdp_w, "ratio": p.ratio, "demand_ratio": p.demand_ratio,
             "band_lo_w": p.band_w[0] if p.band_w else None,
             "band_hi_w": p.band_w[1] if p.band_w else None, "verdict": v, "gap": p.gap}
            for p, v in (tdp_checks() if checks is None else checks)]
    return pd.DataFrame(rows)


def tdp_verdict(p: PeakPower) -> str:
    """``pass``, ``FAIL``, ``known gap`` or ``reproduces fit`` for one machine (see
    :func:`tdp_checks`), judged on the uncapped demand against :attr:`PeakPower.band_w`."""
    band = p.band_w
    if band is None or p.static_w >= p.tdp_w:  # no TDP; or the part could not run at all
        return "FAIL"
    if p.demand_w > band[1]:
        return "FAIL"  # more than the cap can absorb above the clock floor: over-priced
    if p.demand_w >= band[0]:
        if p.gap:
            return "FAIL"  # a gap documented but gone: the note is stale
        return "reproduces fit" if p.machine in REPRODUCES_FIT else "pass"
    return "known gap" if p.gap else "FAIL"


def tdp_checks(names: list[str] | None = None) -> list[tuple[PeakPower, str]]:
    """:func:`peak_power` and its verdict for every shipped kernel platform (systolic, GPU,
    CPU machine) that publishes a TDP (``energy.tdp_w``, or a CPU's ``tdp_w``).

    Verdicts, on the uncapped demand: ``pass`` (within :attr:`PeakPower.band_w`); ``FAIL``
    (static power at or above the TDP; a demand above the band, i.e. above the TDP with no
    clock floor stated or more than the cap can absorb above the floor; below the band without
    a documented reason; in the band while the YAML still documents a gap); ``known gap``
    (below the band, the reason in the machine's ``energy.tdp_gap``); ``reproduces fit`` (in
    the band, but the machine's constants were fitted on this GEMM: :data:`REPRODUCES_FIT`)."""
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
