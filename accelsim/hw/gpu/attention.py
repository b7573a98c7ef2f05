"""Fused attention (FlashAttention-style tiling).

Attention: one CTA per (batch, head, block of ``Br`` queries). It keeps its Q block and
output accumulator on chip and walks the K/V sequence in blocks of ``Bc`` keys: per block
two tensor-core GEMMs (``S = Q K^T`` and ``O += P V``, ``2 * Br * Bc * d`` MACs) and the
online softmax (one exp per score on the SFU plus a few FP32 operations on CUDA cores).
Warp-specialised kernels (FlashAttention-3, cuDNN) overlap the softmax of one block with the
GEMMs of the next, so a block costs ``max(mma, softmax)``, except one block per CTA (the
pipeline's fill and drain) that costs ``mma + softmax``. Causal masking skips the blocks
above the diagonal, so CTAs differ in length; they start in launch order, query blocks
ascending, the longest last (cuDNN's causal flash kernel on the H200 is not scheduled longest
first: run 11's causal SDPA, ``docs/gpu_findings_log.md`` 2026-12-03). K and V of a
head are read from HBM once (later query blocks find them in L2); Q and O once. Each block
also rescales the output accumulator (``Br * d`` FP32 multiplies). In decode with
grouped-query attention the query heads that share a K/V head are packed into one CTA, so
K and V are read once per K/V head.

Split-KV ("flash-decoding"): when one query block per head leaves SMs idle (fewer CTAs than
SMs, as in decode at small batch) and the sequence has at least the stack's
``attention.split_kv_min_blocks`` K/V blocks (run 9: 512 keys are not split), the K/V sequence of
each head is split over ``sm_count // CTAs`` CTAs (at most one per K/V block), each writing an FP32
partial output and its log-sum-exp, and a second kernel combines the partials (PyTorch's SDPA on the
H200 runs cuDNN's ``sdpa_..._flash_fprop`` plus ``lean_reduction_kernel`` exactly in those cases:
Llama-3-8B decode at batch 1 from 2048 keys and batch 4, not at batch >= 16; h200_e2e.json
profiles).

Memset: an attention of at least the stack's ``attention.fprop_memset_min_seq_q`` queries
runs the library's prefill kernel (cuDNN's ``sdpa_sm90_flash_fprop`` on Hopper), which a
memset of its workspace precedes (run 28's CUDA-graph traces): a tiny kernel of its own,
counted apart from the launched kernels (profiles list memsets apart).

Units: seconds, bytes. Imports: config, workload, hw.gpu.
"""

from __future__ import annotations

import math

from accelsim.config.gpu import OPERAND_BYTES, GpuMachine
from accelsim.hw.gpu.gemm import is_aligned, mma_rate_macs_per_s
from accelsim.hw.gpu.kernel import EXTRA_LAUNCH, MEMSET, CtaCost, Kernel
from accelsim.hw.gpu.memory import l2_hit_fraction, startup_s, stream_kernel
from accelsim.workload.nn_ops import Attention

SOFTMAX_ALU_OPS = 4
"""FP32 operations per score besides the exp: scale, running max, subtract, running sum."""


def attention_blocks(op: Attention) -> tuple[int, int]:
    """(Br, Bc): query and key block sizes (smaller query blocks for decode, 64 for d > 128).

    The kernel PyTorch's SDPA runs on the H200 (cuDNN
    ``sdpa_sm90_flash_fprop_wgmma_..._64x128x{d}``, 384 threads, h200_kernel_probe2.json) gives each
    of its two consumer warpgroups 64 queries: 128 per CTA share the K/V loads."""
    br = 64 if op.head_dim > 128 or op.seq_q <= 64 else 128
    return br, 128


def kv_splits(m: GpuMachine, ctas: int, q_blocks: int, kv_blocks: int) -> int:
    """How many CTAs share one head's K/V sequence (split-KV): enough to fill the SMs in one
    wave, at most one per K/V block; 1 when the heads already fill the SMs, a head has
    several query blocks (prefill) or the sequence is shorter than the stack's
    ``attention.split_kv_min_blocks`` K/V blocks (cuDNN does not split 512 keys: run 9)."""
    min_blocks = max(2, m.stack.attention.split_kv_min_blocks)
    if q_blocks != 1 or kv_blocks < min_blocks or ctas >= m.sm_count:
        return 1
    return max(1, min(kv_blocks, m.sm_count // ctas))


def plan_attention(m: GpuMachine, op: Attention, precision: str, *,
                   cold_cache: bool = False) -> tuple[Kernel, ...]:
    """The fused attention kernel of ``op`` at ``precision`` (a tensor-core precision), plus
    the combine kernel of split-KV decode when the K/V sequence is split.

    ``cold_cache``: the K/V of the ``seq_kv - seq_q`` cached positions come from HBM, as in a
    whole model's decode step (every layer's cache was last touched a step ago); by default
    the op's own footprint decides L2 residency, as when one op is repeated back to back."""
    m.check_precision(precision)
    e = OPERAND_BYTES[precision]
    br, bc = attention_blocks(op)
    d = op.head_dim
    group = op.heads // op.n_kv_heads
    # decode with grouped-query heads: the query heads sharing one K/V head share a CTA
    packed = group > 1 and op.seq_q * group <= br
    rows = op.seq_q * group if packed else op.seq_q
    q_blocks = math.ceil(rows / br)
    path = "tensor_core" if is_aligned(precision, d) else "unaligned"
    if precision == "fp32":
        path = "simt"
    rate = mma_rate_macs_per_s(m, precision, path)
    clock = m.load_clock_hz(precision)
    sfu_rate = m.compute.sfu_ops_per_clk_per_sm * clock
    alu_rate = m.compute.simt_flop_per_clk_per_sm * clock * m.compute.simt_elementwise_efficiency
    q_bytes = op.batch * op.heads * op.seq_q * d * e
    kv_bytes = 2 * op.batch * op.n_kv_heads * op.seq_kv * d * e
    hit = l2_hit_fraction(m, q_bytes + kv_bytes, q_bytes)
    hbm_total = (1.0 - hit) * (2 * q_bytes + kv_bytes)
    if cold_cache and op.seq_kv > op.seq_q:
        cached = kv_bytes * (op.seq_kv - op.seq_q) / op.seq_kv
        hbm_total += hit * cached
        hit = min(hit, 1.0 - cached / (2 * q_bytes + kv_bytes))
    heads = op.batch * (op.n_kv_heads if packed else op.heads)
    counts: dict[int, int] = {}
    for i in range(q_blocks):
        if op.causal and not packed:
            visible = min(op.seq_kv, (i + 1) * br + op.seq_kv - op.seq_q)
        else:
            visible = op.seq_kv
        nb = max(1, math.ceil(visible / bc))
        counts[nb] = counts.get(nb, 0) + heads
    ctas = sum(counts.values())
    splits = kv_splits(m, ctas, q_blocks, max(counts))
    if splits > 1:
        counts = {math.ceil(max(counts) / splits): ctas * splits}
        ctas *= splits
    groups = []
    # launch order: equal CTAs (no mask) in any order; under a causal mask the query blocks
    # ascending, the shortest CTAs first (h200_single_ops_run11.json, calibration)
    for nb in sorted(counts, reverse=not op.causal):
        scores = br * bc * nb
        mma_s = 2 * scores * d / rate
        sfu_s = scores / sfu_rate
        alu_s = (scores * SOFTMAX_ALU_OPS + nb * br * d) / alu_rate  # + rescale of O
        l2 = 2 * br * d * e + 2 * nb * bc * d * e
        key = "mma_s" if path == "tensor_core" else "legacy_mma_s"
        # pipeline fill and drain: the first block's S = QK^T has no softmax to hide behind
        # and the last block's softmax and O += PV no next GEMM: one block, not overlapped
        fill_s = (mma_s + sfu_s + alu_s) / nb
        cost = CtaCost(compute_s=max(mma_s, sfu_s + alu_s), l2_bytes=l2,
                       hbm_bytes=hbm_total / ctas, pre_s=fill_s,
                       parts={key: mma_s, "sfu_s": sfu_s, "alu_s": alu_s})
        groups.append((counts[nb], cost))
    meta = {"path": path, "tile": (br, bc, d), "q_blocks": q_blocks, "l2_hit": hit,
            "causal": op.causal, "gqa_packed": packed, "kv_splits": splits}
    main = Kernel(name="attention", groups=tuple(groups), launch_s=m.host.kernel_launch_s,
                  startup_s=startup_s(m, hit), meta=meta)
    kernels = [main]
    if splits > 1:
        # combine: read each split's FP32 partial output and log-sum-exp, rescale, sum, write O
        partials = splits * op.batch * op.heads * op.seq_q * (d + 1) * 4
        kernels.append(stream_kernel(m, "attention.combine", read_bytes=partials,
                                     write_bytes=q_bytes, simt_flops=3.0 * partials / 4,
                                     sfu_ops=partials / 4 / (d + 1),
                                     meta={"kv_splits": splits, EXTRA_LAUNCH: True}))
    memset_q = m.stack.attention.fprop_memset_min_seq_q
    if memset_q is not None and op.seq_q >= memset_q:
        # the prefill kernel's workspace memset (a graph node of its own; it runs first, listed
        # last so that the attention kernel stays first: the order changes no time), the size
        # of one FP32 statistic per query row (its contents are not in the traces)
        stats = op.batch * op.heads * op.seq_q * 4
        kernels.append(stream_kernel(m, "attention.memset", read_bytes=0.0, write_bytes=stats,
                                     meta={MEMSET: True}))
    return tuple(kernels)
