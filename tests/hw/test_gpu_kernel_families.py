"""Kernel families the libraries actually pick: legacy mma.sync int8 GEMMs on Hopper, the
4-byte ("narrow") and element-aligned fallbacks, and PyTorch's row-wise kernels."""

from __future__ import annotations

import pytest

from accelsim.config.registry import load_machine
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.gemm import alignment_bytes, gemm_path, plan_gemm
from accelsim.hw.gpu.kernel import estimate_s
from accelsim.hw.gpu.rows import layernorm_shape, softmax_shape
from accelsim.workload.nn_ops import Elementwise, LayerNorm, Softmax
from accelsim.workload.ops import Gemm

HOPPER = load_machine("h200").stack.rows
"""PyTorch 2.11's row-kernel dispatch (configs/software/hopper.yaml)."""


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def gemm_s(m, M, N, K, prec="bf16"):
    plan = plan_gemm(m, M, N, K, prec)
    return plan, sum(estimate_s(k, m) for k in plan.kernels)


def test_alignment_bytes_is_the_widest_load_all_rows_allow():
    assert alignment_bytes("bf16", 4096, 4096) == 16
    assert alignment_bytes("bf16", 4100, 4096) == 8
    assert alignment_bytes("bf16", 4098, 4096) == 4
    assert alignment_bytes("bf16", 4097, 4096) == 2
    assert alignment_bytes("int8", 4097) == 1


def test_int8_on_hopper_runs_the_legacy_mma_sync_kernels(h200):
    assert gemm_path(h200, "int8", 4096, 4096) == "legacy"
    assert gemm_path(h200, "fp8", 4096, 4096) == "tensor_core"
    assert gemm_path(load_machine("a100"), "int8", 4096, 4096) == "tensor_core"
    _, t_int8 = gemm_s(h200, 8192, 8192, 8192, "int8")
    _, t_fp8 = gemm_s(h200, 8192, 8192, 8192, "fp8")
    _, t_bf16 = gemm_s(h200, 8192, 8192, 8192, "bf16")
    assert 1.5 < t_int8 / t_fp8 < 2.2  # half-rate mma.sync, not the datasheet int8 rate
    assert t_int8 < t_bf16


def test_four_byte_aligned_rows_take_the_narrow_fallback(h200):
    _, t16 = gemm_s(h200, 4096, 4096, 4096)
    narrow, t4 = gemm_s(h200, 4096, 4096, 4100)
    odd, t2 = gemm_s(h200, 4096, 4096, 4097)
    assert narrow.path == "narrow" and odd.path == "unaligned"
    assert t16 < t4 < t2
    assert t2 / t4 > 1.4  # 4-byte cp.async vs 2-byte loads staged through registers


def test_softmax_dispatch_follows_row_length():
    assert softmax_shape(1024, 2, HOPPER).family == "softmax_warp"
    assert softmax_shape(2048, 2, HOPPER).family == "softmax_warp"
    assert softmax_shape(2048, 4, HOPPER).family == "softmax_reg"
    assert softmax_shape(8192, 2, HOPPER).family == "softmax_reg"
    long = softmax_shape(32768, 2, HOPPER)
    assert long.family == "softmax_block" and long.passes == ("mem", "l2", "l2")
    assert softmax_shape(128, 2, HOPPER).rows_per_cta == 8
    assert layernorm_shape(4096, 2).threads == 128


def test_one_cta_per_row_holds_few_rows_per_sm():
    assert softmax_shape(8192, 2, HOPPER).ctas_per_sm == 1  # 1024 threads x (26 + 8) registers
    assert layernorm_shape(4096, 2).ctas_per_sm == 16  # 2048 threads / 128


def test_row_kernels_run_well_below_copy_bandwidth(h200):
    """The latency chain and the per-element instructions, not HBM, bound them."""
    relu = plan_op(h200, Elementwise(name="r", rows=16384, cols=8192, fn="relu"), "bf16")
    t_relu = estimate_s(relu.kernels[0], h200)
    for op in (Softmax(name="s", rows=16384, cols=8192),
               LayerNorm(name="l", rows=16384, cols=8192)):
        p = plan_op(h200, op, "bf16")
        t = estimate_s(p.kernels[0], h200)
        assert t > 1.4 * t_relu
        assert p.bytes / t < 3.0e12


def test_short_rows_cost_per_row_not_per_byte(h200):
    """128-element layernorm rows: a CTA each, its fixed cost dominates."""
    short = plan_op(h200, LayerNorm(name="l", rows=1 << 20, cols=128), "bf16")
    wide = plan_op(h200, LayerNorm(name="l", rows=1 << 13, cols=1 << 14), "bf16")
    assert estimate_s(short.kernels[0], h200) > 2 * estimate_s(wide.kernels[0], h200)


def test_row_kernels_scale_linearly_once_many_rounds(h200):
    t1 = estimate_s(plan_op(h200, Softmax(name="s", rows=1 << 16, cols=512), "bf16")
                    .kernels[0], h200)
    t2 = estimate_s(plan_op(h200, Softmax(name="s", rows=1 << 17, cols=512), "bf16")
                    .kernels[0], h200)
    assert t2 / t1 == pytest.approx(2.0, rel=0.1)


def test_gelu_pays_a_software_tanh_per_element(h200):
    """PyTorch's tanhf is ~20 FP32-lane instructions: GELU is issue-bound where relu streams."""
    def t(fn):
        p = plan_op(h200, Elementwise(name=fn, rows=16384, cols=8192, fn=fn), "bf16")
        return estimate_s(p.kernels[0], h200)
    assert 1.05 < t("gelu") / t("relu") < 1.4


def test_attention_pays_one_unoverlapped_block_per_cta(h200):
    """Pipeline fill and drain: short sequences run at a lower fraction of the MMA rate."""
    from accelsim.workload.nn_ops import Attention

    def tflops(seq):
        op = Attention(name="a", batch=4096 // seq, heads=32, seq_q=seq, seq_kv=seq,
                       head_dim=128)
        p = plan_op(h200, op, "bf16")
        return p.flops / estimate_s(p.kernels[0], h200)
    assert tflops(512) < 0.9 * tflops(4096)


def _decode(batch, ctx):
    from accelsim.workload.nn_ops import Attention

    return Attention(name="a", batch=batch, heads=32, kv_heads=8, seq_q=1, seq_kv=ctx,
                     head_dim=128)


def test_small_batch_decode_splits_the_kv_sequence_and_combines(h200):
    """Flash-decoding: 8 packed K/V heads leave 124 SMs idle, so each head's 16 K/V blocks are
    split over 16 CTAs and a second kernel combines the partials; at batch 16 the heads fill
    the SMs (128 CTAs) and there is one kernel, as cuDNN's SDPA does on the H200."""
    small = plan_op(h200, _decode(1, 2048), "bf16")
    assert [k.name for k in small.kernels] == ["attention", "attention.combine"]
    assert small.kernels[0].meta["kv_splits"] == 16 and small.kernels[0].ctas == 128
    big = plan_op(h200, _decode(16, 2048), "bf16")
    assert len(big.kernels) == 1 and big.kernels[0].meta["kv_splits"] == 1
    one_block = plan_op(h200, _decode(1, 128), "bf16")
    assert len(one_block.kernels) == 1


def test_split_kv_decode_is_faster_than_walking_the_cache_on_eight_sms(h200, monkeypatch):
    import accelsim.hw.gpu.attention as attention

    assert attention.kv_splits(h200, ctas=8, q_blocks=1, kv_blocks=64) == 16
    assert attention.kv_splits(h200, ctas=8, q_blocks=1, kv_blocks=12) == 12
    # fewer K/V blocks than the stack's split_kv_min_blocks: one kernel (run 9, 512 keys)
    assert attention.kv_splits(h200, ctas=8, q_blocks=1, kv_blocks=4) == 1
    assert attention.kv_splits(h200, ctas=8, q_blocks=2, kv_blocks=64) == 1
    split = plan_op(h200, _decode(1, 8192), "bf16")
    t_split = sum(estimate_s(k, h200) for k in split.kernels)
    monkeypatch.setattr(attention, "kv_splits", lambda *a: 1)
    walk = plan_op(h200, _decode(1, 8192), "bf16")
    assert walk.kernels[0].ctas == 8
    assert t_split < 0.5 * estimate_s(walk.kernels[0], h200)


def test_a_whole_models_cached_kv_comes_from_hbm(h200):
    """A decode step's K/V cache was last touched a step ago: cold in a whole model; one op
    repeated back to back finds its 8 MB cache in L2."""
    warm = plan_op(h200, _decode(1, 2048), "bf16")
    cold = plan_op(h200, _decode(1, 2048), "bf16", cold_cache=True)
    kv = 2 * 8 * 2048 * 128 * 2
    assert warm.kernels[0].hbm_bytes < 0.01 * kv
    assert cold.kernels[0].hbm_bytes >= 0.99 * kv
    assert estimate_s(cold.kernels[0], h200) > estimate_s(warm.kernels[0], h200)


def test_align1_gemms_split_into_the_two_measured_pitch_classes(h200):
    """Run 6: one cutlass_75 align1 kernel is slower when B/C rows are 16-byte but not
    128-byte aligned (A's not), or A's rows are 4-byte aligned and B/C's are not."""
    from accelsim.hw.gpu.gemm import unaligned_pitch_class

    assert not unaligned_pitch_class("bf16", 3071, 3071)      # all odd
    assert not unaligned_pitch_class("bf16", 3071, 3072)      # K odd, N 128-byte rows
    assert not unaligned_pitch_class("bf16", 3071, 3070)      # K odd, N 4-byte rows
    assert unaligned_pitch_class("bf16", 3071, 3040)          # K odd, N 64-byte rows
    assert unaligned_pitch_class("bf16", 3072, 3071)          # K even, N odd
    fast = plan_op(h200, Gemm(name="g", m=3072, n=3072, k=3071), "bf16")
    slow = plan_op(h200, Gemm(name="g", m=3072, n=3071, k=3072), "bf16")
    assert fast.explain["path"] == slow.explain["path"] == "unaligned"
    t = [sum(estimate_s(k, h200) for k in p.kernels) for p in (fast, slow)]
    assert t[1] > 1.05 * t[0]
