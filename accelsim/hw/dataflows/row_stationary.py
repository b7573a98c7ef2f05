"""Row-stationary (Eyeriss; Chen et al., ISCA 2016 and JSSC 2017): the spatial dataflow.

**Primitive.** A PE runs 1-D convolutions: one filter row (``S`` weights) stays in its filter
scratchpad, an ifmap row slides through its ifmap scratchpad, one row of partial sums
accumulates in its psum scratchpad. A *logical PE set* of ``R x E`` PEs computes one 2-D
convolution: filter rows are reused across a PE row, ifmap rows diagonally, and psums are
accumulated up each PE column.

**Fitting the array** (JSSC Sec. IV-A). ``e`` ofmap rows are processed per pass: ``e <= E``
strip-mines a set that is too wide; a set wider than the array is *folded* into
``g = ceil(e / cols)`` segments stacked vertically; small sets are *replicated* ``r x t``
times (``r`` channel groups accumulated in the array, ``t`` filter groups sharing one
multicast ifmap). Each PE interleaves ``p`` filters and ``q`` channels, limited by its
scratchpads: ``p*q*S <= filter``, ``q*S <= ifmap``, ``p <= psum`` words.

**Passes and the global buffer** (JSSC Fig. 7). A pass processes ``n`` images, ``q*r``
channels, ``p*t`` filters and ``e`` ofmap rows. The buffer holds the ifmap block
(``n*q*r`` channels of ``(e-1)U+R`` rows; zero padding is neither stored nor sent, the
PEs insert it) and the psums of ``m`` ofmap channels
(``n*m*e*F`` words) so psums never leave the chip; loop order ``for images, strips, filter
blocks of m: for channel groups: load ifmap block; for filter groups in the block: pass``.
DRAM: each filter is read once per (image group, strip), the ifmap once per filter block
(halo rows included), each ofmap written once.

**Time.** A pass loads its filters into the PEs over the filter network
(``p t q r R S / filter_words_per_cycle`` cycles), reads its psums back when a channel group
continues an accumulation, computes ``n p q F S`` MACs per PE (1 per cycle) while the
ifmap network streams ``n q r ((e-1)U+R) W`` distinct words (multicast: a word reaches all
its PEs in one cycle) and the psum networks read back and drain ``n p t e F`` psums as the
columns produce them (the slowest of the three streams sets the pass); plus
``pass_setup_cycles``.

**Set width.** With ``full_height_sets`` (the chip) a set spans the layer's full ofmap
height ``E`` whenever its folded form fits the array (AlexNet CONV2's 5 x 27 set in two
segments: 135 active PEs, JSSC Table V); only a set that does not fit is strip-mined, to any
width. Without it every strip width is searched.

**Mapping search.** Every ``(e, n, p, q, r)`` (block sizes that give distinct block counts)
with the most filter sets ``t`` and then the largest psum block ``m`` that fit is costed,
and the one with the lowest energy in the ISCA 2016 normalised units
(:data:`NORMALISED_COST`; feature maps in DRAM at their run-length-coded size) plus
:data:`CYCLE_COST` per PE-cycle (clock and leakage) is kept; ties keep the fewer cycles.

Counts are words of the operand precision; cycles are array clock cycles.

Imports: errors.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from accelsim.errors import ConfigError

NORMALISED_COST = {"mac": 1.0, "rf": 1.0, "noc": 2.0, "glb": 6.0, "dram": 200.0}
"""Energy per access relative to a 16-bit MAC at 65 nm (Chen et al., ISCA 2016, Table IV)."""

CYCLE_COST = 2.0
"""Clock and leakage of one PE for one cycle, in the same units: the calibrated 3.66 pJ per
PE-cycle of ``configs/energy/eyeriss_65nm.yaml`` is about two 1.79 pJ MACs."""


@dataclass(frozen=True, slots=True)
class ConvShape:
    """One group of a convolution as the RS dataflow sees it (``h, w`` include padding)."""

    n: int
    c: int
    m: int
    h: int
    w: int
    r: int
    s: int
    e: int
    f: int
    u: int = 1
    groups: int = 1
    raw_fraction: float = 1.0
    """Unpadded / padded ifmap area: the share of delivered ifmap words stored in DRAM."""
    ifmap_code_ratio: float = 1.0
    """DRAM bits per raw ifmap bit (run-length coding; 1 = uncoded)."""
    ofmap_code_ratio: float = 1.0
    """DRAM bits per raw ofmap bit."""

    @property
    def macs(self) -> int:
        """MACs of all groups."""
        return self.groups * self.n * self.m * self.c * self.e * self.f * self.r * self.s


@dataclass(frozen=True, slots=True)
class RsHardware:
    """What the RS mapping needs to know about the array (words and words per cycle)."""

    name: str
    rows: int
    cols: int
    filter_spad: int
    ifmap_spad: int
    psum_spad: int
    glb_fmap: int
    glb_filter: int
    filter_bw: float
    ifmap_bw: float
    psum_bw: float
    setup_cycles: int
    full_height_sets: bool = False
    """Map a layer's full ofmap height ``E`` in one set whenever the folded set fits the array
    (strip-mine only when it does not), as the chip does; False: search every strip width."""


@dataclass(frozen=True, slots=True)
class RsMapping:
    """RS mapping parameters (JSSC Table II) and the set placement they imply."""

    e: int
    n: int
    p: int
    q: int
    r: int
    t: int
    m: int
    segments: int

    def as_dict(self) -> dict[str, int]:
        """The parameters as a plain mapping (for tables)."""
        return {"e": self.e, "n": self.n, "p": self.p, "q": self.q, "r": self.r, "t": self.t,
                "m": self.m, "segments": self.segments}


@dataclass(frozen=True, slots=True)
class RsCost:
    """One layer (all groups) under one mapping: passes, cycles and words per level."""

    mapping: Any
    """The strategy's mapping parameters (:class:`RsMapping`; ``as_dict()`` for tables)."""
    passes: int
    pass_cycles: float
    active_pes: int
    words: dict[str, float] = field(default_factory=dict)
    """Per-level counts: ``dram_{ifmap,filter,ofmap}``, ``glb_{ifmap,filter,psum}_{read,write}``,
    ``spad_{filter,ifmap}_{read,write}``, ``spad_psum_{read,write}``, ``noc_{ifmap,filter,psum}``,
    ``macs`` (all of them, zero or not)."""

    @property
    def cycles(self) -> int:
        """Processing cycles of the layer (passes one after another)."""
        return int(math.ceil(self.passes * self.pass_cycles))

    def objective(self, pes: int, shape: ConvShape | None = None) -> float:
        """Energy in ISCA 2016 units plus :data:`CYCLE_COST` per PE-cycle (the search's score).

        DRAM feature-map words count at their coded size when ``shape`` gives code ratios.
        """
        w = self.words
        c = NORMALISED_COST
        level_sums = {"spad": 0, "glb_": 0, "noc_": 0}  # one pass, the words' order kept
        for k, v in w.items():
            part = k[:4]
            if part in level_sums:
                level_sums[part] += v
        rf, glb, noc = level_sums["spad"], level_sums["glb_"], level_sums["noc_"]
        ri = shape.ifmap_code_ratio if shape else 1.0
        ro = shape.ofmap_code_ratio if shape else 1.0
        dram = w["dram_ifmap"] * ri + w["dram_filter"] + w["dram_ofmap"] * ro
        return (c["mac"] * w["macs"] + c["rf"] * rf + c["noc"] * noc + c["glb"] * glb
                + c["dram"] * dram + CYCLE_COST * pes * self.cycles)


def placement(hw: RsHardware, shape: ConvShape, e: int) -> tuple[int, int] | None:
    """``(segments, sets that fit)`` for ``e`` ofmap rows per pass, or None if it cannot fit."""
    seg = max(1, math.ceil(e / hw.cols))
    height = shape.r * seg
    width = math.ceil(e / seg)
    if height > hw.rows:
        return None
    return seg, (hw.rows // height) * (hw.cols // width)


def cost(hw: RsHardware, shape: ConvShape, mp: RsMapping) -> RsCost | None:
    """Passes, cycles and per-level words of ``shape`` under ``mp``; None if it does not fit."""
    s = shape
    rows_in = (mp.e - 1) * s.u + s.r
    ifm_block = mp.n * mp.q * mp.r * rows_in * s.w * s.raw_fraction   # padding is not stored
    psum_block = mp.n * mp.m * mp.e * s.f
    flt_pass = mp.p * mp.t * mp.q * mp.r * s.r * s.s
    fmap_need = ifm_block + psum_block + (flt_pass if hw.glb_filter == 0 else 0)
    if fmap_need > hw.glb_fmap or (hw.glb_filter and flt_pass > hw.glb_filter):
        return None
    nb, eb = math.ceil(s.n / mp.n), math.ceil(s.e / mp.e)
    fg, cg = math.ceil(s.m / (mp.p * mp.t)), math.ceil(s.c / (mp.q * mp.r))
    mb = math.ceil(s.m / mp.m)
    passes = nb * eb * fg * cg
    strip_rows = (s.e - eb) * s.u + eb * s.r          # ifmap rows over all strips (halos)
    psum_pass = mp.n * mp.p * mp.t * mp.e * s.f
    compute = mp.n * mp.p * mp.q * s.f * s.s
    stream = ifm_block / hw.ifmap_bw
    psum_stream = psum_pass / hw.psum_bw * (1 + (cg - 1) / cg)
    pass_cycles = hw.setup_cycles + flt_pass / hw.filter_bw + max(compute, stream, psum_stream)
    active = mp.r * mp.t * s.r * mp.e
    macs = s.n * s.m * s.c * s.e * s.f * s.r * s.s
    ifmap_dram = mb * s.n * s.c * strip_rows * s.w * s.raw_fraction
    filter_dram = nb * eb * s.m * s.c * s.r * s.s
    glb_ifmap_read = passes * ifm_block
    pe_rows = passes * active                          # PE-passes
    w = {
        "macs": macs,
        "dram_ifmap": ifmap_dram, "dram_filter": filter_dram, "dram_ofmap": s.n * s.m * s.e * s.f,
        "glb_ifmap_write": ifmap_dram, "glb_ifmap_read": glb_ifmap_read,
        "glb_filter_write": filter_dram, "glb_filter_read": passes * flt_pass,
        "glb_psum_write": passes * psum_pass,
        "glb_psum_read": passes * psum_pass * (cg - 1) / cg + s.n * s.m * s.e * s.f,
        "spad_filter_write": pe_rows * mp.p * mp.q * s.s,
        "spad_filter_read": macs,
        "spad_ifmap_write": pe_rows * mp.n * mp.q * s.w,
        "spad_ifmap_read": macs,
        "spad_psum_read": macs, "spad_psum_write": macs,
        "noc_filter": pe_rows * mp.p * mp.q * s.s,
        "noc_ifmap": pe_rows * mp.n * mp.q * s.w,
        # psums passed up each column (R-1 hops) and across the r channel sets
        "noc_psum": passes * mp.t * mp.e * mp.n * mp.p * s.f * (mp.r * s.r - 1),
    }
    g = s.groups
    return RsCost(mp, passes * g, pass_cycles, active, {k: v * g for k, v in w.items()})


@functools.lru_cache(maxsize=4096)
def _divisor_steps(total: int, limit: int) -> tuple[int, ...]:
    """Balanced block sizes ``ceil(total / k) <= limit``, one per block count ``k``, largest
    first."""
    return tuple(sorted({math.ceil(total / k) for k in range(1, total + 1)
                         if math.ceil(total / k) <= limit}, reverse=True))


@functools.lru_cache(maxsize=512)
def best_mapping(hw: RsHardware, shape: ConvShape) -> RsCost:
    """The lowest-objective feasible mapping of ``shape`` on ``hw`` (see the module doc)."""
    check_fits(hw, shape)
    pes = hw.rows * hw.cols
    best: RsCost | None = None
    best_objective = math.inf
    qmax = min(hw.ifmap_spad // shape.s, shape.c)
    for e in strip_widths(hw, shape):
        seg, sets = placement(hw, shape, e)
        for q in range(1, qmax + 1):
            pmax = min(hw.psum_spad, hw.filter_spad // (q * shape.s), shape.m)
            for p in _divisor_steps(shape.m, pmax):
                for r in _divisor_steps(math.ceil(shape.c / q), sets):
                    tmax = min(sets // r, math.ceil(shape.m / p))
                    for n in _divisor_steps(shape.n, shape.n):
                        c = _largest_fit(hw, shape, e, n, p, q, r, tmax, seg)
                        if c is None:
                            continue
                        o = c.objective(pes, shape)
                        if best is None or _better_objective(o, c, best_objective, best):
                            best, best_objective = c, o
    if best is None:
        raise ConfigError(hw.name, "memory.sram.capacity_bytes", f"{hw.glb_fmap} words",
                          f"no row-stationary mapping of {shape} fits the global buffer")
    return best


def strip_widths(hw: RsHardware, shape: ConvShape) -> list[int]:
    """The ofmap rows per set ``e`` the search tries, widest first: every balanced strip width
    that fits the array, or ``E`` alone when ``hw.full_height_sets`` and the folded full-height
    set fits (JSSC 2017 Sec. IV-A: a set too wide for the array is folded, one with more PEs
    than the array strip-mined)."""
    widths = [e for e in _divisor_steps(shape.e, hw.cols * max(1, hw.rows // shape.r))
              if placement(hw, shape, e) is not None]
    if hw.full_height_sets and widths and widths[0] == shape.e:
        return widths[:1]
    return widths


def _largest_fit(hw: RsHardware, shape: ConvShape, e: int, n: int, p: int, q: int, r: int,
                 tmax: int, seg: int) -> RsCost | None:
    """The mapping with the most filter sets ``t <= tmax`` and then the largest psum block
    ``m`` (a multiple of ``p t``) that fit the buffers: more of either only removes passes and
    DRAM reads."""
    s = shape
    ifm_block = n * q * r * ((e - 1) * s.u + s.r) * s.w * s.raw_fraction
    for t in range(tmax, 0, -1):
        step = p * t
        flt_pass = step * q * r * s.r * s.s
        if hw.glb_filter and flt_pass > hw.glb_filter:
            continue
        free = hw.glb_fmap - ifm_block - (0 if hw.glb_filter else flt_pass)
        m = min(s.m, int(free // (n * e * s.f)) // step * step)
        if m >= min(step, s.m):
            return cost(hw, shape, RsMapping(e, n, p, q, r, t, m, seg))
    return None


def _better_objective(oa: float, a: RsCost, ob: float, b: RsCost) -> bool:
    """``a`` (objective ``oa``) beats ``b``: a lower objective, or an equal one and fewer
    cycles."""
    return oa < ob - 1e-9 or (abs(oa - ob) <= 1e-9 and a.cycles < b.cycles)


def check_fits(hw: RsHardware, shape: ConvShape) -> None:
    """Refuse shapes no RS mapping can hold (filter taller than the array, rows too wide)."""
    if shape.r > hw.rows:
        raise ConfigError(hw.name, "compute.array.rows", hw.rows,
                          f"row-stationary needs the filter height R={shape.r} to fit the "
                          "PE rows (a PE set is R PEs tall)")
    if shape.s > hw.ifmap_spad:
        raise ConfigError(hw.name, "compute.array.scratchpads.ifmap_bytes",
                          f"{hw.ifmap_spad} words",
                          f"an ifmap scratchpad must hold one filter-row window (S={shape.s})")
    if shape.s > hw.filter_spad:
        raise ConfigError(hw.name, "compute.array.scratchpads.filter_bytes",
                          f"{hw.filter_spad} words",
                          f"a filter scratchpad must hold one filter row (S={shape.s})")


@dataclass(frozen=True, slots=True)
class RowStationary:
    """The registered ``rs`` strategy (spatial: needs per-PE scratchpads)."""

    name: str = "rs"
    title: str = "row-stationary"
    kind: str = "spatial"
    stationary: str | None = "filter row"
    needs_scratchpads: bool = True

    def map(self, hw: RsHardware, shape: ConvShape) -> RsCost:
        """Best mapping of ``shape`` (see :func:`best_mapping`)."""
        return best_mapping(hw, shape)


STRATEGY = RowStationary()
