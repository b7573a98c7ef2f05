"""GEMM on a tensor-core GPU: tile choice, split-K, waves, per-CTA main loop and traffic.

How a library (cuBLAS / CUTLASS) runs ``C[M,N] = A[M,K] @ B[K,N]`` and what this model keeps:

* **Path** by precision and alignment. fp32 runs an SGEMM on CUDA cores (``simt``). Other
  precisions run the tensor-core kernels (``tensor_core``: TMA loads, warpgroup MMAs on
  Hopper) when every leading dimension (K of A, N of B and C) is a multiple of 16 bytes
  (8 bf16 elements); otherwise the library falls back to element-aligned kernels
  (``unaligned``: scalar loads, legacy MMA) at ``unaligned_mma_fraction`` of the rate.
* **Tile** ``BM x BN x BK`` and **split-K** are chosen like a library heuristic: among the
  tiles of the path, the one (with split-K when the tiles are too few to fill the SMs) whose
  predicted time is least; ties go to fewer CTAs.
* **Waves**: one CTA per SM; ``ceil(CTAs / SMs)`` rounds of the same tile time (wave
  quantization), a persistent tile scheduler behaves the same.
* **Main loop** per CTA: ``k_iters * BK`` deep; bounded by the tensor cores
  (``MACs / (FLOP/clk/SM / 2 * clock under load * mma_efficiency)``) and by shared-memory
  reads of the operand tiles (``smem_bytes_per_clk``), whichever is longer. An SGEMM reads
  ``2t`` words per k from shared memory for the ``t x t`` outputs each thread holds, so small
  tiles are shared-memory bound.
* **Traffic**: per CTA, the A and B tiles from L2 (halved for the operand shared by a
  2-CTA cluster through TMA multicast on Hopper) and the C tile back; HBM sees each operand
  once (more if the per-wave panels do not fit in L2), scaled by the L2 miss fraction of the
  op's footprint (``accelsim.hw.gpu.memory.l2_hit_fraction``).
* **Prologue / epilogue**: the kernel waits one HBM round trip before its first MMA; later
  tiles' loads are prefetched during the previous tile's main loop, so only a main loop
  shorter than that latency leaves part of it exposed per tile. Each CTA ends by storing its
  C tile (fp32 partials when split-K, then a reduce kernel).
* **Streamed operands**: an operand read by a single CTA (one row of tiles: a skinny GEMM's
  weights) is loaded with an evict-first hint and comes from HBM on every call.
* **Launch**: ``host.launch_s`` per kernel.

Units: seconds, bytes, MACs. Imports: config, hw.gpu.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accelsim.config.gpu import OPERAND_BYTES, OUTPUT_BYTES, GpuMachine
from accelsim.hw.gpu.kernel import CtaCost, Kernel, estimate_s, sm_bandwidth_caps
from accelsim.hw.gpu.memory import l2_hit_fraction, stream_kernel

ALIGN_BYTES = 16
"""Leading dimensions must be multiples of this many bytes for the fast (TMA) path."""

_TC_TILES = ((64, 8), (64, 16), (64, 32), (64, 64), (128, 64), (64, 128), (128, 128),
             (128, 256), (256, 128), (192, 192))
_BK = {"tf32": 32, "fp16": 64, "bf16": 64, "fp8": 128, "int8": 128, "fp32": 8}
_UNALIGNED_TILES = ((64, 64), (128, 128), (256, 128), (128, 256))
_SIMT_TILES = ((64, 64), (128, 64), (128, 128), (256, 128), (128, 256))
_SPLITS = (1, 2, 3, 4, 6, 8, 12, 16)
STREAM_M = 64
"""GEMMs with M up to one warpgroup MMA's height read each weight once: streamed, not kept."""
SIMT_THREADS = 256
"""Threads of an SGEMM CTA (each computes a square register tile of the CTA tile)."""


@dataclass(frozen=True, slots=True)
class GemmPlan:
    """The chosen way to run one GEMM, and the kernels it launches."""

    path: str
    tile: tuple[int, int, int]
    split_k: int
    kernels: tuple[Kernel, ...]
    waves: float
    ctas: int
    aligned: bool
    l2_hit: float


def is_aligned(precision: str, *leading_dims: int) -> bool:
    """Whether all leading dimensions are multiples of 16 bytes at ``precision``."""
    e = OPERAND_BYTES[precision]
    return all((d * e) % ALIGN_BYTES == 0 for d in leading_dims)


def mma_rate_macs_per_s(m: GpuMachine, precision: str, path: str) -> float:
    """MACs per second one SM sustains in a GEMM main loop on ``path``."""
    c = m.compute
    base = m.flop_per_clk_per_sm(precision) / 2.0 * m.load_clock_hz(precision)
    if path == "simt":
        return base * c.simt_efficiency
    rate = base * c.mma_efficiency
    return rate * c.unaligned_mma_fraction if path == "unaligned" else rate


def _multicast(m: GpuMachine) -> int:
    return 2 if "fp8" in m.compute.tensor_flop_per_clk_per_sm else 1  # Hopper clusters


def _cta(m: GpuMachine, precision: str, path: str, bm: int, bn: int, bk: int, kc: int,
         hbm_share: float, out_bytes_per_elem: float, ctas: int) -> CtaCost:
    """Cost of one CTA computing a ``bm x bn`` tile over ``kc`` of K."""
    e = OPERAND_BYTES[precision]
    k_iters = max(1, math.ceil(kc / bk))
    depth = k_iters * bk
    macs = bm * bn * depth
    mma_s = macs / mma_rate_macs_per_s(m, precision, path)
    clock = m.load_clock_hz(precision)
    big, small = max(bm, bn), min(bm, bn)
    if path != "simt":  # warpgroup MMAs read both operand tiles from shared memory
        groups = max(1, big // 128)
        smem = depth * (big + small * groups) * e
    else:  # SGEMM: each of 256 threads holds a t x t register tile and reads 2t words per k
        t = math.sqrt(bm * bn / SIMT_THREADS)
        smem = depth * bm * bn * (2.0 / t) * e
    smem_s = smem / (m.compute.sm_smem_bytes_per_clk * clock)
    mc = _multicast(m) if ctas >= 2 and path == "tensor_core" else 1
    l2_in = depth * (big / mc + small) * e
    out = bm * bn * out_bytes_per_elem
    _, hbm_cap = sm_bandwidth_caps(m)
    l2_cap, _ = sm_bandwidth_caps(m)
    post_s = out / l2_cap
    key = {"tensor_core": "mma_s", "unaligned": "legacy_mma_s", "simt": "simt_s"}[path]
    return CtaCost(compute_s=max(mma_s, smem_s), l2_bytes=l2_in + out, hbm_bytes=hbm_share,
                   post_s=post_s, parts={key: mma_s, "smem_s": smem_s})


def _candidates(path: str, precision: str) -> list[tuple[int, int, int]]:
    bk = _BK[precision] if path != "unaligned" else 32
    tiles = {"tensor_core": _TC_TILES, "unaligned": _UNALIGNED_TILES, "simt": _SIMT_TILES}[path]
    out = []
    for bm, bn in tiles:
        out.append((bm, bn, bk))
        if bm != bn:
            out.append((bn, bm, bk))
    return sorted(set(out))


def plan_gemm(m: GpuMachine, M: int, N: int, K: int, precision: str, *, batch: int = 1,
              shared_weights: bool = True, hbm_unique_bytes: float | None = None,
              leading_dims: tuple[int, ...] | None = None, name: str = "gemm") -> GemmPlan:
    """Plan ``batch`` GEMMs of ``M x N x K`` at ``precision``: the fastest tile and split-K.

    ``shared_weights``: B is one ``K x N`` matrix for all batch entries (folded into M).
    ``hbm_unique_bytes``: bytes of the operands as stored, when they are not A, B and C
    themselves (an implicit-GEMM convolution reads its input, not the im2col matrix).
    ``leading_dims``: the dimensions whose alignment matters (default K and N).
    """
    m.check_precision(precision)
    for label, v in (("M", M), ("N", N), ("K", K), ("batch", batch)):
        if v <= 0:
            raise ValueError(f"{label} must be > 0 (got {v})")
    if shared_weights and batch > 1:
        M, batch = M * batch, 1
    e = OPERAND_BYTES[precision]
    oe = OUTPUT_BYTES[precision]
    aligned = is_aligned(precision, *(leading_dims or (K, N)))
    path = "simt" if precision == "fp32" else ("tensor_core" if aligned else "unaligned")
    a_bytes = batch * M * K * e
    b_bytes = batch * K * N * e
    c_bytes = batch * M * N * oe
    unique_in = hbm_unique_bytes if hbm_unique_bytes is not None else a_bytes + b_bytes
    hit = l2_hit_fraction(m, unique_in, c_bytes)
    best: tuple[float, int, GemmPlan] | None = None
    for bm, bn, bk in _candidates(path, precision):
        tiles = math.ceil(M / bm) * math.ceil(N / bn) * batch
        for split in _SPLITS:
            kc = math.ceil(K / split)
            if split > 1 and (tiles >= m.sm_count or kc < 2 * bk):
                break
            plan = _plan(m, precision, path, bm, bn, bk, split, M, N, K, batch, tiles, kc,
                         unique_in, c_bytes, hit, aligned, name)
            t = sum(estimate_s(k, m) for k in plan.kernels)
            key = (t * (1 - 1e-9), plan.ctas)
            if best is None or key < (best[0], best[1]):
                best = (key[0], key[1], plan)
    assert best is not None
    return best[2]


def _plan(m: GpuMachine, precision: str, path: str, bm: int, bn: int, bk: int, split: int,
          M: int, N: int, K: int, batch: int, tiles: int, kc: int, unique_in: float,
          c_bytes: float, hit: float, aligned: bool, name: str) -> GemmPlan:
    e = OPERAND_BYTES[precision]
    oe = OUTPUT_BYTES[precision]
    ctas = tiles * split
    n_waves = math.ceil(ctas / m.sm_count)
    # HBM reads: each operand once, unless one wave's A and B panels overflow L2
    side = max(1, int(math.sqrt(min(ctas, m.sm_count))))
    panel = (side * bm + side * bn) * kc * e
    reads = unique_in
    if unique_in > m.memory.l2_bytes * m.memory.l2_thrash_ratio:
        reads = max(unique_in, n_waves * panel)
    # with M within one MMA height every weight element is used once (no reuse across CTAs)
    # is streamed with an evict-first hint: it stays out of L2 across calls
    a_bytes = batch * M * K * OPERAND_BYTES[precision]
    streamed = 0.0
    if M <= STREAM_M and unique_in > a_bytes:
        streamed = unique_in - a_bytes
    hbm_total = (1.0 - hit) * (reads - streamed + (c_bytes if split == 1 else 0.0)) + streamed
    partial_bytes = M * N * batch * 4 * split if split > 1 else 0.0
    out_elem = 4.0 if split > 1 else oe
    cta = _cta(m, precision, path, bm, bn, bk, kc, hbm_total / ctas, out_elem, ctas)
    startup = m.memory.hbm.latency_s if hit < 1.0 or streamed else m.memory.l2_latency_s
    # the producer prefetches the next tile while this one computes; a main loop shorter
    # than the load latency leaves the rest of the latency exposed on every tile
    if ctas > m.sm_count:
        exposed = max(0.0, startup - cta.compute_s)
        cta = CtaCost(compute_s=cta.compute_s, l2_bytes=cta.l2_bytes, hbm_bytes=cta.hbm_bytes,
                      pre_s=exposed, post_s=cta.post_s, parts=cta.parts)
    meta = {"path": path, "tile": (bm, bn, bk), "split_k": split, "tiles": tiles}
    kernels = [Kernel(name=name, groups=((ctas, cta),), launch_s=m.host.launch_s,
                      startup_s=startup, meta=meta)]
    if split > 1:
        kernels.append(stream_kernel(m, f"{name}.splitk_reduce", read_bytes=partial_bytes,
                                     write_bytes=c_bytes, simt_flops=M * N * batch * split,
                                     meta={"split_k": split}))
    return GemmPlan(path=path, tile=(bm, bn, bk), split_k=split, kernels=tuple(kernels),
                    waves=ctas / m.sm_count, ctas=ctas, aligned=aligned, l2_hit=hit)
