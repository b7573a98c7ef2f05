"""L2 residency and memory-bound (streaming) kernels: elementwise (row-wise kernels:
:mod:`accelsim.hw.gpu.rows`).

Residency model (steady state of an op called repeatedly, as it is measured and as it runs
inside a model): the bytes an op touches form a footprint ``F = read + w * written``
(``w = l2_write_weight``: a written line holds its L2 slot until written back). With
``r = L2 capacity / F``, the fraction of accesses that hit L2 is
``h = clip((r - r0) / (1 - r0), 0, 1)`` (``r0 = l2_thrash_ratio``): everything hits when the
footprint fits, nothing once it is well past the capacity (LRU-like streams thrash).

A streaming kernel moves its bytes through L2 (all of them) and HBM (the misses), runs its
arithmetic on CUDA cores and special-function units, and is split into grid-stride chunks
over the SMs. Units: bytes, seconds.

Imports: config.gpu, hw.gpu.kernel.
"""

from __future__ import annotations

import math

from accelsim.config.gpu import GpuMachine
from accelsim.hw.gpu.kernel import CtaCost, Kernel

CHUNK_BYTES = 4 * 1024
"""Bytes one CTA of a streaming kernel moves per grid-stride step (128 threads x 2 x 16 B)."""

STREAM_GRID_CTAS_PER_SM = 4
"""Model choice, not a hardware limit: the grid a streaming (grid-stride) kernel launches is at
most this many CTAs per SM, each looping over its share of :data:`CHUNK_BYTES` chunks (a
grid of a few resident blocks per SM, as grid-stride kernels size it; in the model since
c306788, no fit or measurement behind the 4). Not the residency limit
(``hw/gpu/kernel.py`` ``MAX_CTAS_PER_SM``)."""


def l2_hit_fraction(m: GpuMachine, read_bytes: float, write_bytes: float) -> float:
    """Fraction of accesses served by L2 for a repeatedly-run op (0..1)."""
    mem = m.memory
    footprint = read_bytes + mem.l2_write_weight * write_bytes
    if footprint <= 0:
        return 1.0
    ratio = mem.l2_bytes / footprint
    r0 = mem.l2_thrash_ratio
    if ratio >= 1.0:
        return 1.0
    if r0 >= 1.0:
        return 0.0
    return min(1.0, max(0.0, (ratio - r0) / (1.0 - r0)))


def startup_s(m: GpuMachine, hit: float) -> float:
    """Time to the first bytes: an L2 round trip if the data is resident, else HBM's."""
    lat_l2 = m.memory.l2_latency_s
    return lat_l2 if hit >= 1.0 else m.memory.hbm.latency_s


def stream_kernel(m: GpuMachine, name: str, *, read_bytes: float, write_bytes: float,
                  simt_flops: float = 0.0, sfu_ops: float = 0.0, reread_bytes: float = 0.0,
                  fp32_flops: float | None = None, clock_hz: float | None = None,
                  meta: dict | None = None) -> Kernel:
    """A memory-bound kernel that streams ``read_bytes`` in and ``write_bytes`` out.

    ``reread_bytes``: extra reads that hit on-chip (a second pass over a row held in L1/L2).
    ``simt_flops``: thread instructions of the kernel's arithmetic (1 a FLOP, the library
    routines' counts included), each needing an issue slot (``issue_per_clk_per_sm``); of
    them ``fp32_flops`` (default: all) also run on the FP32 lanes
    (``simt_flop_per_clk_per_sm / 2``): the row kernels' issue model (``rows.py``). The two
    rates are equal on sm_90, so there only the count matters; on sm_80/sm_70 (64 lanes, a
    fitted issue rate above them) a routine whose instructions are not all FP32 issues faster
    than the lanes alone allow. Both rates are scaled by ``2 x simt_elementwise_efficiency``
    (1 at the 0.5 every machine inherits: one instruction a lane or slot a clock).
    ``sfu_ops``: special-function unit results.
    """
    hit = l2_hit_fraction(m, read_bytes, write_bytes)
    moved = read_bytes + write_bytes
    n = max(1, min(STREAM_GRID_CTAS_PER_SM * m.sm_count, math.ceil(moved / CHUNK_BYTES)))
    clk = clock_hz or m.compute.max_clock_hz
    c = m.compute
    share = 2.0 * c.simt_elementwise_efficiency
    issue_rate = c.issue_per_clk_per_sm * clk * share
    lane_rate = c.simt_flop_per_clk_per_sm / 2.0 * clk * share
    on_lanes = simt_flops if fp32_flops is None else min(fp32_flops, simt_flops)
    sfu_rate = c.sfu_ops_per_clk_per_sm * clk
    alu_s = max(simt_flops / issue_rate, on_lanes / lane_rate) / n
    sfu_s = sfu_ops / n / sfu_rate
    cta = CtaCost(compute_s=alu_s + sfu_s, l2_bytes=(moved + reread_bytes) / n,
                  hbm_bytes=(1.0 - hit) * moved / n,
                  parts={"alu_s": alu_s, "sfu_s": sfu_s})
    info = {"l2_hit": hit, "chunks": n, **(meta or {})}
    return Kernel(name=name, groups=((n, cta),), launch_s=m.host.kernel_launch_s,
                  startup_s=startup_s(m, hit), meta=info)


def elementwise_kernel(m: GpuMachine, fn: str, elements: int, inputs: int, elem_bytes: int,
                       flops_per_element: float) -> Kernel:
    """``add``/``relu``/``gelu``...: read ``inputs`` tensors, write one, pointwise math.

    GELU (tanh form) and SiLU (exp) call one transcendental per element: the frameworks'
    ``tanhf``/``expf`` are software routines around one SFU op, costing
    ``compute.transcendental_instr`` instructions besides the op's arithmetic.
    The exact GELU (``gelu_erf``, PyTorch's default ``F.gelu``) calls ``erff`` instead, a
    longer polynomial routine: ``compute.erf_instr`` instructions and one SFU op.
    The routines' counts were fitted on the H200, where an issue slot and an FP32 lane are
    the same rate, so they are issue slots whose FP32 share is unknown: only the op's own
    arithmetic (``flops_per_element``) is held to the FP32 lanes (:func:`stream_kernel`).
    """
    sfu = elements if fn in ("gelu", "gelu_erf", "silu") else 0.0
    per_call = m.compute.erf_instr if fn == "gelu_erf" else m.compute.transcendental_instr
    instr = flops_per_element * elements + sfu * per_call
    return stream_kernel(m, fn, read_bytes=inputs * elements * elem_bytes,
                         write_bytes=elements * elem_bytes,
                         simt_flops=instr, fp32_flops=flops_per_element * elements,
                         sfu_ops=sfu, meta={"fn": fn})
