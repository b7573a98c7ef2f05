"""GEMM on a tensor-core GPU: tile choice, split-K, waves, per-CTA main loop and traffic.

How a library (cuBLAS / CUTLASS) runs ``C[M,N] = A[M,K] @ B[K,N]`` and what this model keeps:

* **Path** by precision and alignment. fp32 runs an SGEMM on CUDA cores (``simt``). Other
  precisions run the tensor-core kernels (``tensor_core``: TMA loads, warpgroup MMAs on
  Hopper) when every leading dimension (K of A, N of B and C) is a multiple of 16 bytes
  (8 bf16 elements). Otherwise it falls back to Ampere/Turing-style CUTLASS kernels (names
  seen on the H200: ``cutlass_80_tensorop_*_align2``, ``cutlass_75_*_align1``): ``narrow``
  when every row is a multiple of 4 bytes (4-byte ``cp.async`` loads, ``mma.sync``) at
  ``narrow_mma_fraction`` of the rate, else ``unaligned`` (2-byte loads staged through
  registers) at ``unaligned_mma_fraction`` (``unaligned_pitch_mma_fraction`` in the slower
  pitch class, :func:`unaligned_pitch_class`). Precisions in ``legacy_mma_precisions`` run,
  even aligned, on the library's ``mma.sync`` kernels (``legacy``: int8 ``torch._int_mm`` on
  Hopper picks ``cutlass_80_tensorop_i16832gemm_s8``, no warpgroup MMA; the stack's
  ``gemm.legacy_precisions``) at
  ``legacy_mma_fraction`` of the rate.
* **Tile** ``BM x BN x BK`` and **split-K** are chosen like a library heuristic: among the
  tiles of the path, the one (with split-K when the tiles are too few to fill the SMs) whose
  predicted time is least; ties go to fewer CTAs. On the persistent tensor-core path split-K
  only fills the SMs of one wave (``tiles x split <= gemm.split_k_max_waves x SMs``) of a K
  of at least ``gemm.split_k_min_k_blocks`` blocks, and a skinny GEMM's tile covers M
  without padding (:func:`fitted_tiles`): cuBLASLt's choices in run 9
  (``h200_library_run9.json``, docs/gpu_findings_log.md "Run 9: library choices"). The kernel
  families, their tile sets, K blocks and split-K factors are the GPU's library stack
  (``m.stack.gemm``, from ``configs/software/<stack>.yaml``): on Hopper the fallback and
  legacy paths have the few tiles of their CUTLASS 2.x kernels (align1: 128x128, 256x128;
  align2: 256x128; int8: 128x64, 128x256), fp8 ``_scaled_mm`` those of its
  ``nvjet_sm90_qqtst`` kernels (144x128, 128x128, and skinny tiles), so their wave
  quantization is the library's.
* **Waves**: one CTA per SM; ``ceil(CTAs / SMs)`` rounds of the same tile time (wave
  quantization), a persistent tile scheduler behaves the same.
* **Main loop** per CTA: ``k_iters * BK`` deep; bounded by the tensor cores
  (``MACs / (FLOP/clk/SM / 2 * clock under load * mma_efficiency)``) and by shared-memory
  reads of the operand tiles (``smem_bytes_per_clk``), whichever is longer. An SGEMM reads
  ``2t`` words per k from shared memory for the ``t x t`` outputs each thread holds, so small
  tiles are shared-memory bound.
* **Traffic**: per CTA, the A and B tiles from L2 (halved for the operand shared by a
  cluster through TMA multicast, the stack's ``gemm.multicast_ctas``) and the C tile back; HBM sees
  each operand once (more if the per-wave panels do not fit in L2), scaled by the L2 miss fraction
  of the op's footprint (``accelsim.hw.gpu.memory.l2_hit_fraction``), in which the input operands
  count ``compute.gemm_l2_operand_copies`` times (a two-partition L2 caches a line read by
  SMs on both sides in both halves: a batched ``bmm`` of 50-59 MB runs at HBM speed).
* **Prologue / epilogue**: the kernel waits one HBM round trip before its first MMA; later
  tiles' loads are prefetched during the previous tile's main loop, so only a main loop
  shorter than that latency leaves part of it exposed per tile. Each CTA ends by storing its
  C tile (fp32 partials when split-K, then a reduce kernel): into L2 at its latency, or, for
  the miss share of an op that overflows L2, after a dirty line's write-back at HBM's.
  Non-persistent kernels (the CUTLASS 2.x fallback and legacy paths) start one CTA per tile,
  each paying ``compute.gemm_nonpersistent_cta_s`` of pipeline fill and epilogue.
* **Cold weights** (``cold_weight_fraction``, a whole model's step): that share of B was
  last touched a step ago and has left L2 since; it comes from HBM once on this call,
  whatever the op's own footprint (a repeated op's hot-L2 hit applies to the rest).
* **Streamed operands**: an operand read by a single CTA (one row of tiles: a skinny GEMM's
  weights) is loaded with an evict-first hint and comes from HBM on every call of a whole
  model's step. Called back to back with nothing in between (``back_to_back``: one op timed
  in a loop), evict-first lines compete only with each other and keep the stack's
  ``gemm.stream_l2_share`` of the hit the op's footprint would have (one partition copy: one
  CTA reads each line).
* **Launch**: ``host.launch_s`` per kernel.
* **2:4 sparsity** (``sparsity="2:4"``, :mod:`accelsim.hw.gpu.sparsity`): the weight
  operand B is stored compressed (kept values + 2-bit indices: every byte of B in HBM, L2
  and shared memory scaled by ``Pattern.weight_fraction``), the main loop runs
  ``compute.sparse_speedup`` times faster, half the MACs are executed.

Units: seconds, bytes, MACs. Imports: config, hw.gpu.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from accelsim.config.gpu import OPERAND_BYTES, OUTPUT_BYTES, GpuMachine
from accelsim.config.gpu_stack import SimtKernel, parse_tiles
from accelsim.errors import UnsupportedError
from accelsim.hw.gpu.kernel import (
    EXTRA_LAUNCH,
    MAX_CTAS_PER_SM,
    MAX_THREADS_PER_SM,
    CtaCost,
    Kernel,
    estimate_s,
    sm_bandwidth_caps,
)
from accelsim.hw.gpu.memory import l2_hit_fraction, stream_kernel
from accelsim.hw.gpu.sparsity import check_sparse

ALIGN_BYTES = 16
"""Leading dimensions must be multiples of this many bytes for the fast (TMA) path."""
NARROW_ALIGN_BYTES = 4
"""Rows aligned to this many bytes (not 16) get the ``narrow`` kernels (4-byte cp.async)."""

NONPERSISTENT_PATHS = ("unaligned", "narrow", "legacy")
"""Paths whose kernels (CUTLASS 2.x) start one CTA per tile: each pays its own prologue and
epilogue (``compute.gemm_nonpersistent_cta_s``), unlike the persistent Hopper kernels."""
WAVE_TILE = 128
"""Tile side by which a GEMM's waves are counted for the stack's ``wave_fitting_max_waves``."""
SM_SUBPARTITIONS = 4
"""Warp schedulers (processing blocks) of an SM, each feeding a quarter of its FP32 lanes
(CUDA C++ Programming Guide, compute capabilities 7.x-9.x): a CTA of fewer than 4 warps alone
on an SM leaves some of them idle."""


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
    sparsity: str | None = None
    """``"2:4"`` when B is structured-sparse, else None (dense)."""
    density: float = 1.0
    """Fraction of the dense GEMM's MACs the tensor cores execute."""


def alignment_elements(precision: str) -> int:
    """Elements per 16-byte row at ``precision`` (8 fp16/bf16, 16 fp8/int8, 4 tf32/fp32): the
    multiple every leading dimension needs for the tensor-core path."""
    return max(1, ALIGN_BYTES // OPERAND_BYTES[precision])


def is_aligned(precision: str, *leading_dims: int) -> bool:
    """Whether all leading dimensions are multiples of :func:`alignment_elements`."""
    a = alignment_elements(precision)
    return all(d % a == 0 for d in leading_dims)


def mma_rate_macs_per_s(m: GpuMachine, precision: str, path: str,
                        sparse: bool = False, pitch_class: bool = False) -> float:
    """MACs per second one SM sustains in a GEMM main loop on ``path`` (dense-equivalent
    MACs, ``compute.sparse_speedup`` times the dense rate, when ``sparse``; ``pitch_class``:
    an ``unaligned`` GEMM in the slower pitch class, :func:`unaligned_pitch_class`)."""
    c = m.compute
    base = m.flop_per_clk_per_sm(precision) / 2.0 * m.load_clock_hz(precision)
    if path == "simt":
        return base * c.simt_efficiency
    rate = base * c.mma_efficiency
    if path == "unaligned":
        slow = c.unaligned_pitch_mma_fraction if pitch_class else 0.0
        return rate * (slow or c.unaligned_mma_fraction)
    if path == "narrow":
        return rate * c.narrow_mma_fraction
    if path == "legacy":
        return rate * c.legacy_mma_fraction
    return rate * c.sparse_speedup if sparse else rate


def alignment_bytes(precision: str, *leading_dims: int) -> int:
    """Largest of 16, 8, 4, 2, 1 bytes that divides every leading dimension's row, in bytes
    (the widest vector load a kernel may use on all operands)."""
    e = OPERAND_BYTES[precision]
    for b in (16, 8, 4, 2):
        if all((d * e) % b == 0 for d in leading_dims):
            return b
    return 1


def gemm_path(m: GpuMachine, precision: str, *leading_dims: int, sparse: bool = False) -> str:
    """Kernel family a library runs (see the module doc): ``simt`` for fp32; ``tensor_core``
    (16-byte aligned, the generation's own MMA); ``legacy`` (16-byte aligned, but the library
    only has previous-generation ``mma.sync`` kernels for this precision); ``narrow``
    (rows 4-byte aligned: 4-byte ``cp.async`` loads); ``unaligned`` (element-aligned)."""
    if precision == "fp32":
        return "simt"
    c = m.compute
    align = alignment_bytes(precision, *leading_dims)
    if align >= ALIGN_BYTES:
        legacy = precision in m.stack.gemm.legacy_precisions and not sparse
        return "legacy" if legacy else "tensor_core"
    if align >= NARROW_ALIGN_BYTES and c.narrow_mma_fraction > 0:
        return "narrow"
    return "unaligned"


def unaligned_pitch_class(precision: str, k: int, n: int) -> bool:
    """Whether an element-aligned (``unaligned`` path) GEMM with leading dimensions K (rows of
    A) and N (rows of B and C) falls in the slower of the two pitch classes the H200 showed on
    one and the same ``cutlass_75 ... align1`` kernel and tile (``h200_graph_align_run6.json``
    ``align_probe``, ``h200_gemm_rows_run4.json`` gemm_cal; 3072-sized: 460-474 us against 513-590
    us): B/C rows 16-byte but not 128-byte aligned while A's are not, or A's rows 4-byte aligned
    while B/C's are not. An empirical rule: the cause (the kernel's loads against the L2/DRAM
    address interleave, or a variant cuBLAS does not name) is not identified."""
    e = OPERAND_BYTES[precision]
    a, b = k * e, n * e
    return (a % 4 == 0 and b % 4 != 0) or (a % 4 != 0 and b % 16 == 0 and b % 128 != 0)


def simt_lane_fraction(m: GpuMachine, kernel: SimtKernel, ctas: int) -> float:
    """Share of an SM's FP32 lanes an SGEMM kernel's resident warps can feed: the CTAs one
    SM holds at once (``min`` of the grid's CTAs per SM and the occupancy limits: register
    file / (threads x registers), :data:`MAX_THREADS_PER_SM`, :data:`MAX_CTAS_PER_SM`) times
    the warps of one, over :data:`SM_SUBPARTITIONS` (1 when every scheduler has a warp)."""
    regs = m.compute.sm_register_file_bytes / 4
    occupancy = max(1, min(int(regs // (kernel.threads * kernel.registers)),
                           MAX_THREADS_PER_SM // kernel.threads, MAX_CTAS_PER_SM))
    resident = min(occupancy, math.ceil(ctas / m.sm_count))
    return min(1.0, resident * math.ceil(kernel.threads / 32) / SM_SUBPARTITIONS)


def _cta(m: GpuMachine, precision: str, path: str, bm: int, bn: int, bk: int, kc: int,
         hbm_share: float, out_bytes_per_elem: float, ctas: int, wf: float = 1.0,
         hit: float = 1.0, pitch_class: bool = False,
         simt: SimtKernel | None = None) -> CtaCost:
    """Cost of one CTA computing a ``bm x bn`` tile over ``kc`` of K.

    ``wf``: bytes of the B (weight) tile over its dense bytes (< 1 for sparse weights, whose
    main loop then runs at the sparse rate). ``hit``: the op's L2 hit fraction; the C tile's
    stores land in L2 at its latency, except the ``1 - hit`` share that first evicts a dirty
    line of an L2 the op overflows (a write-back to HBM, at HBM's latency). ``simt``: the
    SGEMM kernel of the ``simt`` path (threads, K slices, registers)."""
    e = OPERAND_BYTES[precision]
    k_iters = max(1, math.ceil(kc / bk))
    depth = k_iters * bk
    macs = bm * bn * depth
    mma_s = macs / mma_rate_macs_per_s(m, precision, path, sparse=wf < 1.0,
                                       pitch_class=pitch_class)
    if simt is not None:
        mma_s /= simt_lane_fraction(m, simt, ctas)
    clock = m.load_clock_hz(precision)
    a_w, b_w = float(bm), bn * wf  # widths of the A and B tiles in dense elements
    big, small = (a_w, b_w) if bm >= bn else (b_w, a_w)
    if path != "simt":  # warpgroup MMAs read both operand tiles from shared memory
        groups = max(1, max(bm, bn) // 128)
        smem = depth * (big + small * groups) * e
    else:  # SGEMM: each thread holds a t x t register tile and reads 2t words per k; the
        # operand tiles are staged through registers (global loads through L1, then shared-
        # memory stores: the one L1/shared-memory data path twice); the k_slices thread groups
        # of a sliced kernel each cover the whole tile over a slice of K, then sum their
        # partial tiles through shared memory (written and read once each)
        assert simt is not None
        t = math.sqrt(bm * bn * simt.k_slices / simt.threads)
        smem = (depth * (bm * bn * (2.0 / t) + 2 * (bm + bn)) * e
                + 2 * (simt.k_slices - 1) * bm * bn * 4)
    smem_s = smem / (m.compute.sm_smem_bytes_per_clk * clock)
    # a warp-specialised pipeline hands each K block from the TMA producer to the MMA
    # warpgroups through barriers: a block takes at least gemm_kblock_s (skinny tiles)
    kblock_s = k_iters * m.compute.gemm_kblock_s if path == "tensor_core" else 0.0
    mc = m.stack.gemm.multicast_ctas if ctas >= 2 and path == "tensor_core" else 1
    l2_in = depth * (big / mc + small) * e
    out = bm * bn * out_bytes_per_elem
    l2_cap, hbm_cap = sm_bandwidth_caps(m)
    post_s = out * (hit / l2_cap + (1.0 - hit) / hbm_cap)
    key = {"tensor_core": "mma_s", "unaligned": "legacy_mma_s", "simt": "simt_s",
           "narrow": "narrow_mma_s", "legacy": "mma_sync_s"}[path]
    return CtaCost(compute_s=max(mma_s, smem_s, kblock_s), l2_bytes=l2_in + out,
                   hbm_bytes=hbm_share, post_s=post_s,
                   parts={key: mma_s, "smem_s": smem_s, "kblock_s": kblock_s})


def _candidates(m: GpuMachine, path: str, precision: str, wave_fitting: bool = True
                ) -> list[tuple[int, int, int]]:
    g = m.stack.gemm
    bk = {"unaligned": g.unaligned_k_block, "narrow": g.narrow_k_block}.get(
        path, g.k_block[precision])
    if path == "tensor_core":
        tiles = g.tiles_for(precision)
        if wave_fitting and precision in g.wave_fitting_precisions:
            tiles = tiles + parse_tiles(g.wave_fitting_tiles)
    elif path == "simt":
        tiles = tuple(k.shape() for k in g.simt_kernels)
    else:
        tiles = parse_tiles({"unaligned": g.unaligned_tiles, "narrow": g.narrow_tiles,
                             "legacy": g.legacy_tiles}[path])
    out = []
    for bm, bn in tiles:
        out.append((bm, bn, bk))
        if bm != bn:
            out.append((bn, bm, bk))
    return sorted(set(out))


def simt_variants(m: GpuMachine, bm: int, bn: int) -> tuple[SimtKernel, ...]:
    """The stack's SGEMM kernels with a ``bm x bn`` tile (or its transpose): several when a
    tile has a plain and a K-sliced kernel (cuBLAS's 128x32 and 128x32_sliced1x4); a tile
    the stack lacks (one a caller imposes) runs as its nearest kernel by area."""
    kernels = m.stack.gemm.simt_kernels
    same = tuple(k for k in kernels if k.shape() in ((bm, bn), (bn, bm)))
    if same:
        return same
    return (min(kernels, key=lambda k: abs(k.shape()[0] * k.shape()[1] - bm * bn)),)


def fitted_tiles(cands: list[tuple[int, int, int]], M: int, N: int, single_max: int
                 ) -> list[tuple[int, int, int]]:
    """The tiles of ``cands`` no longer along M (or N) than that dimension rounded up to a
    power of two (at least the smallest tile side there): a library does not run a tile that
    is mostly padding; a dimension of at most ``single_max`` gets one tile along it, the
    smallest that covers it (each weight element read by one CTA). cuBLASLt on the H200 runs
    8, 16, 32 rows of tokens per tile at M = 1..8, 16, 32 and 32 or 64 at M = 64 (run 9,
    ``h200_library_run9.json`` calibration part: ``nvjet_sm90_tst_64x8``, ``64x16``,
    ``64x32``, the warpgroup MMA's 64 along the weights); a 64-row tile at M = 1 would fill
    the SMs without split-K where cuBLAS splits. The whole set when none fits."""
    def keep(side: int, d: int, sides: set[int]) -> bool:
        cap = max(min(sides), 1 << max(0, d - 1).bit_length())
        if d <= single_max:
            cover = min((s for s in sides if s >= d), default=cap)
            return side == cover
        return side <= cap

    ms, ns = {t[0] for t in cands}, {t[1] for t in cands}
    kept = [t for t in cands if keep(t[0], M, ms) and keep(t[1], N, ns)]
    return kept or cands


def plan_gemm(m: GpuMachine, M: int, N: int, K: int, precision: str, *, batch: int = 1,
              shared_weights: bool = True, hbm_unique_bytes: float | None = None,
              leading_dims: tuple[int, ...] | None = None, name: str = "gemm",
              sparsity: str | None = None,
              tiles: tuple[tuple[int, int], ...] | None = None,
              max_split: int | None = None, cta_fixed_s: float = 0.0,
              dependent_launch: bool = True, bias: bool = False,
              out_stored_bytes: float | None = None,
              cold_weight_fraction: float = 0.0, back_to_back: bool = False) -> GemmPlan:
    """Plan ``batch`` GEMMs of ``M x N x K`` at ``precision``: the fastest tile and split-K.

    ``shared_weights``: B is one ``K x N`` matrix for all batch entries (folded into M).
    ``hbm_unique_bytes``: bytes of the operands as stored, when they are not A, B and C
    themselves (an implicit-GEMM convolution reads its input, not the im2col matrix).
    ``leading_dims``: the dimensions whose alignment matters (default K and N).
    ``sparsity``: ``"2:4"`` for structured-sparse weights B (:mod:`accelsim.hw.gpu.sparsity`).
    ``tiles``: the ``(BM, BN)`` tiles the library has for this op (default: the path's set);
    ``max_split``: the largest split-K it uses (default: the path's set, up to 16).
    ``cta_fixed_s``: serial time every CTA adds (a non-persistent kernel's per-tile prologue
    and epilogue, e.g. cuDNN's implicit GEMMs), seconds.
    ``bias``: a bias vector is added in the epilogue (``nn.Linear``): the kernel adds
    ``compute.gemm_bias_epilogue_s`` once.
    ``out_stored_bytes``: bytes of the output as stored, when it is not C itself (a fused
    Winograd kernel writes the inverse-transformed output, not the transformed products).
    ``cold_weight_fraction``: the share (0..1) of B that is not in L2 when the kernel starts
    (a whole model's weights, read once per step: ``devices/gpu_model.py``); it is read from
    HBM once however well the op's own footprint fits L2.
    ``back_to_back``: the GEMM is called back to back with itself (one op timed in a loop,
    nothing else between its calls): a streamed weight operand keeps the stack's
    ``gemm.stream_l2_share`` of L2 across calls. False (default): other traffic runs between
    calls (a whole model's step) and a streamed operand comes from HBM on every call.
    """
    m.check_precision(precision)
    if not 0.0 <= cold_weight_fraction <= 1.0:
        raise ValueError(f"cold_weight_fraction must be in 0..1 (got {cold_weight_fraction})")
    for label, v in (("M", M), ("N", N), ("K", K), ("batch", batch)):
        if v <= 0:
            raise ValueError(f"{label} must be > 0 (got {v})")
    pat = check_sparse(m, precision, sparsity)
    if shared_weights and batch > 1:
        M, batch = M * batch, 1
    e = OPERAND_BYTES[precision]
    oe = OUTPUT_BYTES[precision]
    dims = leading_dims or (K, N)
    aligned = is_aligned(precision, *dims)
    if pat is not None and not aligned:
        raise UnsupportedError(
            f"{m.name}: {pat.name} sparse GEMM needs leading dimensions {dims} that are "
            f"multiples of {alignment_elements(precision)} {precision} elements (16 bytes); "
            "the sparse kernels have no unaligned fallback")
    path = gemm_path(m, precision, *dims, sparse=pat is not None)
    pitch = path == "unaligned" and len(dims) == 2 and unaligned_pitch_class(precision, *dims)
    wf = 1.0 if pat is None else pat.weight_fraction(precision)
    a_bytes = batch * M * K * e
    b_bytes = batch * K * N * e * wf
    c_bytes = batch * M * N * oe if out_stored_bytes is None else out_stored_bytes
    unique_in = hbm_unique_bytes if hbm_unique_bytes is not None else a_bytes + b_bytes
    cold_bytes = cold_weight_fraction * min(b_bytes, unique_in)
    hit = l2_hit_fraction(m, m.compute.gemm_l2_operand_copies * unique_in, c_bytes)
    best: tuple[float, int, GemmPlan] | None = None
    # cuBLASLt's odd-sized tiles fit a GEMM of a few waves into whole waves of the SMs
    waves = math.ceil(M / WAVE_TILE) * math.ceil(N / WAVE_TILE) * batch
    max_waves = m.stack.gemm.wave_fitting_max_waves
    few_waves = max_waves is None or waves <= max_waves * m.sm_count
    cands = _candidates(m, path, precision, few_waves)
    if tiles is not None:
        cands = [(bm, bn, cands[0][2]) for bm, bn in tiles]
    elif path == "simt" and batch > 1 and m.stack.gemm.simt_batched_tiles:
        # the strided-batched SGEMM (bmm) has its own kernel set (cuBLAS 12 on sm_80: only
        # ampere_sgemm_128x128_nn, whatever the shape)
        own = parse_tiles(m.stack.gemm.simt_batched_tiles)
        cands = [(bm, bn, cands[0][2]) for bm, bn in own]
    if path == "tensor_core" and tiles is None and m.stack.gemm.fit_tiles_to_problem:
        cands = fitted_tiles(cands, M, N, m.stack.gemm.single_tile_max)
    splits = [s for s in m.stack.gemm.split_k if max_split is None or s <= max_split]
    # cuBLASLt's persistent nvjet kernels split K only to fill one wave, and only a deep K
    # (run 9); the CUTLASS 2.x fallbacks split while their tiles are fewer than the SMs
    nvjet = path == "tensor_core"
    fill = m.stack.gemm.split_k_max_waves * m.sm_count if nvjet else None
    min_k = m.stack.gemm.split_k_min_k_blocks if nvjet else 2
    if path in NONPERSISTENT_PATHS:
        cta_fixed_s += m.compute.gemm_nonpersistent_cta_s
    epilogue_s = m.compute.gemm_bias_epilogue_s if bias else 0.0
    for bm, bn, bk in cands:
        n_tiles = math.ceil(M / bm) * math.ceil(N / bn) * batch
        variants = simt_variants(m, bm, bn) if path == "simt" else (None,)
        for split in splits:
            kc = math.ceil(K / split)
            over = n_tiles * split > fill if fill is not None else n_tiles >= m.sm_count
            if split > 1 and (over or kc < 2 * bk or K < min_k * bk):
                break
            for simt in variants:
                plan = _plan(m, precision, path, bm, bn, bk, split, M, N, K, batch, n_tiles,
                             kc, unique_in, c_bytes, hit, aligned, name, wf, cta_fixed_s,
                             dependent_launch, epilogue_s, pitch, simt, cold_bytes,
                             back_to_back)
                t = sum(estimate_s(k, m) for k in plan.kernels)
                key = (t * (1 - 1e-9), plan.ctas)
                if best is None or key < (best[0], best[1]):
                    best = (key[0], key[1], plan)
    assert best is not None
    if pat is None:
        return best[2]
    return replace(best[2], sparsity=pat.name, density=pat.density)


def _plan(m: GpuMachine, precision: str, path: str, bm: int, bn: int, bk: int, split: int,
          M: int, N: int, K: int, batch: int, tiles: int, kc: int, unique_in: float,
          c_bytes: float, hit: float, aligned: bool, name: str, wf: float = 1.0,
          cta_fixed_s: float = 0.0, dependent_launch: bool = True,
          epilogue_s: float = 0.0, pitch_class: bool = False,
          simt: SimtKernel | None = None, cold_bytes: float = 0.0,
          back_to_back: bool = False) -> GemmPlan:
    e = OPERAND_BYTES[precision]
    oe = OUTPUT_BYTES[precision]
    ctas = tiles * split
    n_waves = math.ceil(ctas / m.sm_count)
    # HBM reads: each operand once, unless one wave's A and B panels overflow L2
    side = max(1, int(math.sqrt(min(ctas, m.sm_count))))
    panel = (side * bm + side * bn * wf) * kc * e
    reads = unique_in
    if unique_in > m.memory.l2_bytes * m.memory.l2_thrash_ratio:
        reads = max(unique_in, n_waves * panel)
    # with M within one MMA height every weight element is used once (no reuse across CTAs)
    # is streamed with an evict-first hint; called back to back, it keeps across calls only
    # the share of L2 that evict-first lines hold against each other (gemm.stream_l2_share)
    a_bytes = batch * M * K * OPERAND_BYTES[precision]
    streamed = 0.0
    if M <= m.stack.gemm.stream_max_m and unique_in > a_bytes:
        streamed = unique_in - a_bytes
    # (one CTA reads each streamed line: one partition holds it, not both)
    stream_hit = m.stack.gemm.stream_l2_share * l2_hit_fraction(m, unique_in, c_bytes) \
        if streamed and back_to_back else 0.0
    # cold weights come from HBM once, streamed or not; the warm rest of a streamed operand
    # misses at the evict-first share's rate
    cold_streamed = min(cold_bytes, streamed)
    streamed_hbm = cold_streamed + (streamed - cold_streamed) * (1.0 - stream_hit)
    cold = max(0.0, cold_bytes - streamed)
    hbm_total = (1.0 - hit) * (reads - streamed - cold + (c_bytes if split == 1 else 0.0)) \
        + streamed_hbm + cold
    partial_bytes = M * N * batch * 4 * split if split > 1 else 0.0
    out_elem = 4.0 if split > 1 else oe
    cta = _cta(m, precision, path, bm, bn, bk, kc, hbm_total / ctas, out_elem, ctas, wf, hit,
               pitch_class, simt)
    startup = m.memory.hbm.latency_s if hit < 1.0 or streamed_hbm or cold \
        else m.memory.l2_latency_s
    # the producer prefetches the next tile while this one computes; a main loop shorter
    # than the load latency leaves the rest of the latency exposed on every tile
    exposed = max(0.0, startup - cta.compute_s) if ctas > m.sm_count else 0.0
    if exposed or cta_fixed_s:
        cta = CtaCost(compute_s=cta.compute_s, l2_bytes=cta.l2_bytes, hbm_bytes=cta.hbm_bytes,
                      pre_s=exposed + cta_fixed_s, post_s=cta.post_s, parts=cta.parts)
    meta = {"path": path, "tile": (bm, bn, bk), "split_k": split, "tiles": tiles,
            "weight_fraction": wf, "pdl": m.stack.gemm.dependent_launch and dependent_launch}
    if simt is not None:
        meta["simt_kernel"] = simt.tile + (f"_sliced1x{simt.k_slices}" if simt.k_slices > 1
                                           else "")
    # the bias epilogue of the last tiles is not hidden behind any main loop: once a kernel
    kernels = [Kernel(name=name, groups=((ctas, cta),), launch_s=m.host.kernel_launch_s,
                      startup_s=startup + epilogue_s, meta=meta)]
    if split > 1:
        # cuBLASLt's splitKreduce_kernel keeps its GEMM's dependent launch: a GEMM after it
        # launches early as after a GEMM (run 5's switch probe, h200_switch_l2_dw_run5.json: the gap
        # after a split-K reduce is a GEMM's 0.26 us); the reduce pays its own completion
        kernels.append(stream_kernel(m, f"{name}.splitk_reduce", read_bytes=partial_bytes,
                                     write_bytes=c_bytes, simt_flops=M * N * batch * split,
                                     meta={"split_k": split, "pdl": meta["pdl"],
                                           EXTRA_LAUNCH: True}))
    return GemmPlan(path=path, tile=(bm, bn, bk), split_k=split, kernels=tuple(kernels),
                    waves=ctas / m.sm_count, ctas=ctas, aligned=aligned, l2_hit=hit)
