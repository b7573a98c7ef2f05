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
                  clock_hz: float | None = None, meta: dict | None = None) -> Kernel:
    """A memory-bound kernel that streams ``read_bytes`` in and ``write_bytes`` out.

    ``reread_bytes``: extra reads that hit on-chip (a second pass over a row held in L1/L2).
    ``simt_flops`` / ``sfu_ops``: arithmetic on FP32 lanes / special-function units.
    """
    hit = l2_hit_fraction(m, read_bytes, write_bytes)
    moved = read_bytes + write_bytes
    n = max(1, min(STREAM_GRID_CTAS_PER_SM * m.sm_count, math.ceil(moved / CHUNK_BYTES)))
    clk = clock_hz or m.compute.max_clock_hz
    c = m.compute
    simt_rate = c.simt_flop_per_clk_per_sm * clk * c.simt_elementwise_efficiency
    sfu_rate = c.sfu_ops_per_clk_per_sm * clk
    alu_s = simt_flops / n / simt_rate
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
    ``compute.transcendental_instr`` FP32-lane instructions besides the op's arithmetic.
    The exact GELU (``gelu_erf``, PyTorch's default ``F.gelu``) calls ``erff`` instead, a
    longer polynomial routine: ``compute.erf_instr`` instructions and one SFU op.
    """
    sfu = elements if fn in ("gelu", "gelu_erf", "silu") else 0.0
    per_call = m.compute.erf_instr if fn == "gelu_erf" else m.compute.transcendental_instr
    instr = flops_per_element * elements + sfu * per_call
    return stream_kernel(m, fn, read_bytes=inputs * elements * elem_bytes,
                         write_bytes=elements * elem_bytes,
                         simt_flops=instr, sfu_ops=sfu, meta={"fn": fn})
