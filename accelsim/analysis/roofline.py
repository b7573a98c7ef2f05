"""Hierarchical roofline: FLOPs, bytes per memory level, arithmetic intensity, ridge points,
the attainable bound, the simulated performance and which bound holds. Tables first.

Conventions (see ``accelsim/analysis/README.md``):

* FLOPs count 1 MAC = 2 FLOP (:data:`accelsim.units.FLOP_PER_MAC`).
* Bytes are decimal; bandwidths are bytes/s; performance is FLOP/s.
* Arithmetic intensity at a level is ``I = FLOPs / bytes moved across that level``
  (FLOP/byte). No bytes and some FLOPs is ``inf``; no FLOPs is ``0`` (never an error).
* Attainable performance: ``min(peak, min over levels of BW_level x I_level)``; the bound
  that holds is the level whose roof is lowest, or ``"compute"`` when the peak is.
* Ridge point of a level: ``peak / BW_level`` (FLOP/byte).
* The analytical (compulsory) traffic of an operator moves every tensor across the
  off-chip level once: input(s) read, weights read, output written.

Imports: numpy, pandas, units, precision.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from accelsim.precision import PRECISION_BYTES
from accelsim.units import FLOP_PER_MAC

LEVEL_ORDER = ("rf", "sram", "l1", "l2", "l3", "dram", "hbm", "host")
"""Memory levels from the compute units outwards (names used in columns ``bytes_<level>``)."""


ADVICE_BANDS = ((200.0, "high", "maximise compute utilisation (tensor cores, tiling, occupancy)"),
                (20.0, "medium", "balance: batch, register tiling, fusion"),
                (2.0, "low", "cut traffic: fusion, lower precision, algorithm changes"),
                (0.0, "very_low", "fuse with neighbours, work in place"))
"""Optimisation priority by intensity band, FLOP/byte (seed Table 14): (lower edge, band, hint)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Roof:
    """One memory level's roof: the bandwidth at which it feeds the compute units."""

    level: str
    bandwidth_bytes_per_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class MachineRoofs:
    """The roofs of one machine at one precision: a compute peak and one roof per level."""

    name: str
    peak_flops_per_s: float
    precision: str = ""
    roofs: tuple[Roof, ...] = ()

    def roof(self, level: str) -> Roof:
        """The roof of ``level``; ``KeyError`` naming the known levels otherwise."""
        for r in self.roofs:
            if r.level == level:
                return r
        raise KeyError(f"{self.name} has no level {level!r} (levels: {self.levels})")

    @property
    def levels(self) -> tuple[str, ...]:
        """Level names, compute side first."""
        return tuple(r.level for r in self.roofs)

    @property
    def offchip_level(self) -> str:
        """The device-memory level (``hbm`` or ``dram``) used for analytical traffic."""
        for name in ("hbm", "dram"):
            if name in self.levels:
                return name
        return self.roofs[-1].level if self.roofs else "dram"

    def ridge(self, level: str | None = None) -> float:
        """Ridge point of ``level`` (default: the off-chip level), FLOP/byte."""
        return ridge_point(self.peak_flops_per_s,
                           self.roof(level or self.offchip_level).bandwidth_bytes_per_s)

    def ridge_table(self) -> pd.DataFrame:
        """One row per level: ``level, bandwidth_bytes_per_s, ridge_flop_per_byte``."""
        return pd.DataFrame([{"machine": self.name, "precision": self.precision,
                              "level": r.level, "bandwidth_bytes_per_s": r.bandwidth_bytes_per_s,
                              "peak_flops_per_s": self.peak_flops_per_s,
                              "ridge_flop_per_byte": self.ridge(r.level)} for r in self.roofs])


# --- scalar laws -------------------------------------------------------------------------

def ridge_point(peak_flops_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """``I_ridge = R_peak / BW`` (FLOP/byte); ``inf`` for a level with no bandwidth."""
    if bandwidth_bytes_per_s <= 0:
        return math.inf
    return peak_flops_per_s / bandwidth_bytes_per_s


def arithmetic_intensity(flops: float, nbytes: float) -> float:
    """``FLOPs / bytes`` (FLOP/byte): ``inf`` when nothing moves, ``0`` when nothing is computed."""
    if flops <= 0:
        return 0.0
    if nbytes <= 0:
        return math.inf
    return flops / nbytes


def attainable(peak_flops_per_s: float, bandwidth_bytes_per_s: float, intensity: float) -> float:
    """``R_attain = min(R_peak, BW x I)`` (FLOP/s)."""
    if intensity == 0:
        return 0.0
    if math.isinf(intensity):
        return peak_flops_per_s
    return min(peak_flops_per_s, bandwidth_bytes_per_s * intensity)


def bound_of(peak_flops_per_s: float, bandwidth_bytes_per_s: float, intensity: float) -> str:
    """``"compute"`` when ``I >= I_ridge``, else ``"memory"``."""
    return "compute" if intensity >= ridge_point(peak_flops_per_s, bandwidth_bytes_per_s) \
        else "memory"


def implied_bandwidth(peak_flops_per_s: float, ridge_flop_per_byte: float) -> float:
    """The bandwidth (bytes/s) a stated peak and ridge point imply: ``R_peak / I_ridge``."""
    return peak_flops_per_s / ridge_flop_per_byte


def compute_time(flops: float, peak_flops_per_s: float, efficiency: float = 1.0) -> float:
    """Iron-law compute term ``O / (R_peak x eta)`` (seconds)."""
    return flops / (peak_flops_per_s * efficiency)


def roofline_time(flops: float, nbytes: float, peak_flops_per_s: float,
                  bandwidth_bytes_per_s: float) -> float:
    """Lower bound on time with compute/transfer overlap: ``max(O / R_peak, D / BW)`` (s)."""
    t_mem = nbytes / bandwidth_bytes_per_s if bandwidth_bytes_per_s > 0 else 0.0
    return max(flops / peak_flops_per_s, t_mem)


def advice(intensity: float) -> str:
    """The optimisation band of seed Table 14 for an intensity (FLOP/byte)."""
    for lower, band, _hint in ADVICE_BANDS:
        if intensity > lower:
            return band
    return ADVICE_BANDS[-1][1]


def hierarchical_bound(roofs: MachineRoofs, flops: float,
                       bytes_per_level: dict[str, float]) -> tuple[float, str]:
    """(attainable FLOP/s, bound) over the levels whose bytes are known (not NaN)."""
    best, which = roofs.peak_flops_per_s, "compute"
    for level, nbytes in bytes_per_level.items():
        if nbytes is None or (isinstance(nbytes, float) and math.isnan(nbytes)):
            continue
        i = arithmetic_intensity(flops, nbytes)
        a = attainable(roofs.peak_flops_per_s, roofs.roof(level).bandwidth_bytes_per_s, i)
        if a < best:
            best, which = a, level
    if flops <= 0:
        return 0.0, "no compute"
    return best, which


# --- operators ---------------------------------------------------------------------------

_NOT_MOVED = {"embedding": ("weight",)}
"""Tensors an operator does not stream whole (an embedding gathers rows, not the table)."""


def dtype_bytes(op: object, default_precision: str) -> float:
    """Bytes per element for ``op``: its own ``dtype`` if set, else the machine's precision."""
    return PRECISION_BYTES[getattr(op, "dtype", None) or default_precision]


def op_traffic(op: object, element_bytes: float) -> dict[str, float]:
    """Compulsory off-chip bytes of ``op`` per tensor (each moved once) and their total.

    Keys: the tensor names of ``op.tensor_elements()`` (``input``, ``weight``, ``output``,
    ``kv``...) in bytes, plus ``total``.
    """
    skip = _NOT_MOVED.get(getattr(op, "kind", ""), ())
    out = {name: n * element_bytes for name, n in op.tensor_elements().items() if name not in skip}
    out["total"] = sum(out.values())
    return out


def op_row(op: object, roofs: MachineRoofs, precision: str | None = None) -> dict:
    """One analytical roofline row for ``op`` on ``roofs`` (compulsory off-chip traffic)."""
    eb = dtype_bytes(op, precision or roofs.precision)
    nbytes = op_traffic(op, eb)["total"]
    flops = float(getattr(op, "flops", 0))
    level = roofs.offchip_level
    att, bound = hierarchical_bound(roofs, flops, {level: nbytes})
    i = arithmetic_intensity(flops, nbytes)
    return {"layer": getattr(op, "name", ""), "op": getattr(op, "kind", type(op).__name__),
            "flops": flops, f"bytes_{level}": nbytes, f"intensity_{level}": i,
            "attainable_flops_per_s": att, "bound": bound,
            "time_bound_s": flops / att if att > 0 else roofline_time(
                flops, nbytes, roofs.peak_flops_per_s, roofs.roof(level).bandwidth_bytes_per_s),
            "advice": advice(i)}


def workload_table(ops: Iterable[object], roofs: MachineRoofs,
                   precision: str | None = None) -> pd.DataFrame:
    """Analytical roofline of every operator (one row per op)."""
    return pd.DataFrame([op_row(op, roofs, precision) for op in ops])


# --- simulated results -------------------------------------------------------------------

_SRAM_READS = ("sram_ifmap_reads", "sram_filter_reads")
_DRAM_COLS = ("dram_ifmap_read_bytes", "dram_filter_read_bytes", "dram_psum_read_bytes",
              "dram_ofmap_write_bytes", "dram_psum_write_bytes")


def level_bytes(layers: pd.DataFrame, machine: object) -> pd.DataFrame:
    """Bytes each simulated layer moved at each level it reports (columns ``bytes_<level>``).

    Systolic results: ``sram`` = array-side SRAM words x word bytes; ``dram`` = the sum of the
    ``dram_*_bytes`` columns. Other results may already carry ``bytes_<level>`` columns.
    """
    out = pd.DataFrame(index=layers.index)
    for level in LEVEL_ORDER:
        if f"bytes_{level}" in layers:
            out[f"bytes_{level}"] = layers[f"bytes_{level}"].astype(float)
    if all(c in layers for c in _SRAM_READS) and "bytes_sram" not in out:  # words -> bytes
        arr = getattr(getattr(machine, "compute", None), "array", None)
        wb = float(getattr(arr, "operand_bytes", 1.0))
        ob = float(getattr(arr, "output_bytes", wb))
        words_in = sum(layers[c].astype(float) for c in _SRAM_READS)
        writes = layers["sram_ofmap_writes"].astype(float) if "sram_ofmap_writes" in layers else 0.0
        psum = layers["sram_ofmap_reads"].astype(float) if "sram_ofmap_reads" in layers else 0.0
        out["bytes_sram"] = words_in * wb + (writes + psum) * ob
    present = [c for c in _DRAM_COLS if c in layers]
    if present and "bytes_dram" not in out and "bytes_hbm" not in out:
        out["bytes_dram"] = sum(layers[c].astype(float) for c in present)
    return out


def simulated_table(layers: pd.DataFrame, machine: object, roofs: MachineRoofs) -> pd.DataFrame:
    """Roofline of a simulated run: one row per layer with bytes and intensity per level,
    attainable bound, the bound that holds, simulated FLOP/s and fraction of the bound.

    ``layers`` needs ``layer``, ``flops`` and ``time_s`` (``Result.layers``).
    """
    lb = level_bytes(layers, machine)
    rows = []
    for idx, rec in layers.iterrows():
        flops = float(rec.get("flops", 0.0))
        per_level = {c.removeprefix("bytes_"): float(lb.at[idx, c]) for c in lb.columns
                     if c.removeprefix("bytes_") in roofs.levels}
        att, bound = hierarchical_bound(roofs, flops, per_level)
        time_s = float(rec.get("time_s", math.nan))
        achieved = flops / time_s if time_s > 0 else math.nan
        row = {"layer": rec.get("layer", idx), "op": rec.get("op", ""), "flops": flops}
        for level, nbytes in per_level.items():
            row[f"bytes_{level}"] = nbytes
            row[f"intensity_{level}"] = arithmetic_intensity(flops, nbytes)
        main = roofs.offchip_level
        i_main = row.get(f"intensity_{main}", math.nan)
        row.update({"attainable_flops_per_s": att, "bound": bound, "time_s": time_s,
                    "achieved_flops_per_s": achieved,
                    "fraction_of_peak": achieved / roofs.peak_flops_per_s,
                    "fraction_of_attainable": achieved / att if att > 0 else math.nan,
                    "advice": advice(i_main) if not math.isnan(i_main) else ""})
        rows.append(row)
    return pd.DataFrame(rows)


def roofs_table(roofs: MachineRoofs) -> pd.DataFrame:
    """Alias of :meth:`MachineRoofs.ridge_table` (the roofs a plot draws)."""
    return roofs.ridge_table()


def format_intensity(i: float) -> str:
    """Intensity for display: ``inf`` and ``0`` spelled out, else 4 significant figures."""
    if math.isinf(i):
        return "inf"
    if math.isnan(i):
        return "-"
    return "0" if i == 0 else f"{i:.4g}"


def macs_to_flops(macs: float) -> float:
    """FLOPs of ``macs`` multiply-accumulates (1 MAC = 2 FLOP)."""
    return FLOP_PER_MAC * macs


def levels_sorted(levels: Sequence[str]) -> list[str]:
    """Level names in :data:`LEVEL_ORDER` (unknown names last, in their order)."""
    rank = {n: i for i, n in enumerate(LEVEL_ORDER)}
    return sorted(levels, key=lambda n: rank.get(n, len(rank)))


def bound_at_ridge(intensity: float, ridge_flop_per_byte: float) -> str:
    """``"compute"`` when the intensity reaches a stated ridge point, else ``"memory"``."""
    return "compute" if intensity >= ridge_flop_per_byte else "memory"


def utilization(achieved_flops_per_s: float, peak_flops_per_s: float) -> float:
    """Fraction of peak a sustained rate reaches (MFU when the rate counts model FLOPs)."""
    return achieved_flops_per_s / peak_flops_per_s


_TIME_SCALES = ((1.0, "seconds"), (1e-3, "milliseconds"), (1e-6, "microseconds"),
                (1e-9, "nanoseconds"))


def time_scale(seconds: float) -> str:
    """The order of magnitude of a duration in words: ``2.6e-5 -> "microseconds"``."""
    for factor, name in _TIME_SCALES:
        if seconds >= factor:
            return name
    return "picoseconds"
