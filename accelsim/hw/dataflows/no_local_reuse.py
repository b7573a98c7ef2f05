"""No-local-reuse (NLR; DianNao-style, the fourth dataflow of Chen et al., ISCA 2016).

The PEs keep nothing: every cycle ``cm x cc`` PEs multiply ``cc`` input channels by the
weights of ``cm`` filters. Each ifmap value is read once from the global buffer and multicast
to the ``cm`` PEs that use it; each weight is read from the buffer for every MAC (unicast);
an adder tree reduces the ``cc`` products of a filter, and the partial sum is read from and
written back to the buffer once per ``cc`` MACs. On-chip storage is all global buffer.

Global buffer and DRAM: the buffer holds ``n`` images' ifmaps (when they fit; otherwise an
``R``-row window per channel and the ifmap is re-read for every filter block), the weights of
a block of ``mb`` filters and their psums (``n * mb * E * F``); filters are read once per
image group, the ifmap once (or once per filter block), each output written once.

Time: one MAC per PE per cycle, ``N E F R S * ceil(M / cm) * ceil(C / cc)`` cycles; the
buffer is assumed to deliver the ``cm cc`` weights a cycle needs (the ISCA comparison is at
equal throughput). The search keeps the ``(cm, cc, n, mb)`` with the lowest objective of
:meth:`RsCost.objective`.

Imports: hw.dataflows.row_stationary, errors.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from accelsim.errors import ConfigError
from accelsim.hw.dataflows.row_stationary import ConvShape, RsCost, RsHardware


@dataclass(frozen=True, slots=True)
class NlrMapping:
    """PEs per filter block (``cm``) and per channel block (``cc``), images ``n`` and the
    filter block ``mb`` whose weights and psums the buffer holds."""

    cm: int
    cc: int
    n: int
    mb: int

    def as_dict(self) -> dict[str, int]:
        """The parameters as a plain mapping (for tables)."""
        return {"cm": self.cm, "cc": self.cc, "n": self.n, "mb": self.mb}


def cost(hw: RsHardware, s: ConvShape, mp: NlrMapping) -> RsCost | None:
    """Cycles and per-level words of ``s`` under ``mp``; None if the buffer cannot hold it."""
    cap = hw.glb_fmap + hw.glb_filter
    whole = mp.n * s.c * s.h * s.w * s.raw_fraction
    window = mp.n * s.c * s.r * s.w * s.raw_fraction
    rest = mp.mb * s.c * s.r * s.s + mp.n * mp.mb * s.e * s.f
    if whole + rest <= cap:
        ifmap_reads = 1
    elif window + rest <= cap:
        ifmap_reads = math.ceil(s.m / mp.mb)
    else:
        return None
    macs = s.n * s.m * s.c * s.e * s.f * s.r * s.s
    steps = s.n * s.e * s.f * s.r * s.s * math.ceil(s.m / mp.cm) * math.ceil(s.c / mp.cc)
    nb = math.ceil(s.n / mp.n)
    out = s.n * s.m * s.e * s.f
    dram_ifmap = ifmap_reads * s.n * s.c * s.h * s.w * s.raw_fraction
    dram_filter = nb * s.m * s.c * s.r * s.s
    psum_updates = macs / mp.cc
    w = {
        "macs": macs, "dram_ifmap": dram_ifmap, "dram_filter": dram_filter, "dram_ofmap": out,
        "glb_ifmap_write": dram_ifmap, "glb_ifmap_read": macs / mp.cm,
        "glb_filter_write": dram_filter, "glb_filter_read": macs,
        "glb_psum_write": psum_updates, "glb_psum_read": max(psum_updates - out, 0) + out,
        "spad_filter_write": 0.0, "spad_filter_read": 0.0, "spad_ifmap_write": 0.0,
        "spad_ifmap_read": 0.0, "spad_psum_read": 0.0, "spad_psum_write": 0.0,
        "noc_filter": macs, "noc_ifmap": macs, "noc_psum": macs * (mp.cc - 1) / mp.cc,
    }
    g = s.groups
    passes = math.ceil(s.m / mp.mb) * nb
    return RsCost(mp, passes * g, steps / passes, mp.cm * mp.cc, {k: v * g for k, v in w.items()})


@functools.lru_cache(maxsize=256)
def best_mapping(hw: RsHardware, shape: ConvShape) -> RsCost:
    """The lowest-objective NLR mapping of ``shape`` on ``hw`` (all buffer, no scratchpads)."""
    pes = hw.rows * hw.cols
    best: RsCost | None = None
    for cm in range(1, min(pes, shape.m) + 1):
        cc = min(pes // cm, shape.c)
        for n in sorted({math.ceil(shape.n / k) for k in range(1, shape.n + 1)}):
            for mb in range(cm * math.ceil(shape.m / cm), 0, -cm):
                c = cost(hw, shape, NlrMapping(cm, cc, n, min(mb, shape.m)))
                if c is None:
                    continue
                if best is None or c.objective(pes, shape) < best.objective(pes, shape):
                    best = c
                break
    if best is None:
        raise ConfigError(hw.name, "memory.sram.capacity_bytes", f"{hw.glb_fmap} words",
                          f"no no-local-reuse mapping of {shape} fits the global buffer")
    return best


@dataclass(frozen=True, slots=True)
class NoLocalReuse:
    """The registered ``nlr`` strategy (spatial; uses no scratchpads)."""

    name: str = "nlr"
    title: str = "no local reuse"
    kind: str = "spatial"
    stationary: str | None = None
    needs_scratchpads: bool = False

    def map(self, hw: RsHardware, shape: ConvShape) -> RsCost:
        """Best mapping of ``shape`` (see :func:`best_mapping`)."""
        return best_mapping(hw, shape)


STRATEGY = NoLocalReuse()
