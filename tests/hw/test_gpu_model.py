"""The tensor-core SM model as a specification: waves, alignment, bounds, operators."""

from __future__ import annotations

import math

import pytest

from accelsim.config.registry import load_machine
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.gemm import is_aligned, plan_gemm
from accelsim.hw.gpu.kernel import (
    CtaCost,
    Kernel,
    bound_of,
    closed_form_s,
    estimate_s,
    list_schedule_s,
)
from accelsim.hw.gpu.memory import l2_hit_fraction
from accelsim.workload.nn_ops import Attention, Elementwise, LayerNorm, Softmax
from accelsim.workload.ops import Conv2d, Gemm


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def gemm_s(m, M, N, K, prec="bf16", **kw):
    plan = plan_gemm(m, M, N, K, prec, **kw)
    return plan, sum(estimate_s(k, m) for k in plan.kernels)


def test_list_schedule_is_wave_quantized():
    """n equal CTAs on s SMs take ceil(n/s) rounds: 132 and 133 CTAs differ by a whole wave."""
    assert list_schedule_s([(132, 1.0)], 132) == 1.0
    assert list_schedule_s([(133, 1.0)], 132) == 2.0
    assert list_schedule_s([(264, 1.0)], 132) == 2.0


def test_list_schedule_of_mixed_lengths_runs_longest_first():
    assert list_schedule_s([(1, 3.0), (3, 1.0)], 2) == 3.0


def test_one_more_row_of_tiles_costs_a_wave(h200):
    """A fixed tile: 132 tiles fill the SMs once; one tile more needs a second wave. The
    library, free to pick its tile, re-tiles (cuBLASLt's odd-sized nvjet tiles, run 19) and
    softens the blow."""
    k, fixed = 4096, ((128, 256),)
    ok = plan_gemm(h200, 128 * 11, 256 * 12, k, "bf16", tiles=fixed)
    assert ok.ctas <= h200.sm_count
    _, t_fit = gemm_s(h200, 128 * 11, 256 * 12, k, tiles=fixed)
    more, t_more = gemm_s(h200, 128 * 11 + 1, 256 * 12, k, tiles=fixed)
    assert more.ctas > h200.sm_count
    # time jumps far more than the 0.07% of work
    assert t_more / t_fit > 1.10
    _, t_free = gemm_s(h200, 128 * 11 + 1, 256 * 12, k)
    assert t_fit < t_free < t_more


def test_alignment_contract_is_16_bytes():
    assert is_aligned("bf16", 4096, 8) and not is_aligned("bf16", 4095)
    assert is_aligned("fp8", 16) and not is_aligned("fp8", 8)
    assert is_aligned("tf32", 4) and not is_aligned("tf32", 2)


def test_misaligned_dimension_takes_the_slow_path(h200):
    aligned, t_al = gemm_s(h200, 4096, 4096, 4096)
    slow, t_mis = gemm_s(h200, 4096, 4096, 4095)
    assert aligned.path == "tensor_core" and slow.path == "unaligned"
    assert t_mis / t_al > 3.0


def test_m_alone_does_not_break_alignment(h200):
    """Row-major A (M x K) and B (K x N): only K and N are leading dimensions."""
    assert plan_gemm(h200, 4095, 4096, 4096, "bf16").path == "tensor_core"


def test_gemm_moves_from_memory_bound_to_compute_bound_as_m_grows(h200):
    bounds, tflops = {}, {}
    for M in (1, 16, 4096):
        p = plan_op(h200, Gemm(name="g", m=M, n=14336, k=4096), "bf16")
        bounds[M] = bound_of(max(p.kernels, key=lambda k: estimate_s(k, h200)), h200)
        tflops[M] = 2 * M * 14336 * 4096 / sum(estimate_s(k, h200) for k in p.kernels) / 1e12
    assert bounds[1] == "hbm" and bounds[16] == "hbm"
    # at M = 4096 the tensor cores (or the L2 feeding them, for the tile that best fills the
    # waves) bind: near the load-clock peak, where an HBM-bound GEMM is far below it
    peak_at_load = h200.sm_count * 4096 * h200.load_clock_hz("bf16") / 1e12
    assert bounds[4096] != "hbm" and tflops[4096] > 0.85 * peak_at_load > 5 * tflops[16]


def test_large_gemm_runs_near_but_below_the_load_clock_peak(h200):
    _, t = gemm_s(h200, 8192, 8192, 8192)
    tflops = 2 * 8192**3 / t / 1e12
    peak_at_load = h200.sm_count * 4096 * h200.load_clock_hz("bf16") / 1e12
    assert 0.8 * peak_at_load < tflops < peak_at_load


def test_fp8_is_faster_than_bf16_is_faster_than_tf32(h200):
    ts = [gemm_s(h200, 8192, 8192, 8192, p)[1] for p in ("fp8", "bf16", "tf32", "fp32")]
    assert ts == sorted(ts)


def test_skinny_gemm_splits_k_to_fill_the_sms(h200):
    # cuBLASLt: 64 x 768 x 3072 runs a split-K nvjet kernel + splitKreduce
    # (h200_linear_dw_pool_run4b.json); 128 x 4096 x 4096 has enough narrow tiles (64x64: 128 CTAs,
    # h200_heldout.json) not to
    plan = plan_gemm(h200, 64, 768, 3072, "bf16")
    assert plan.split_k > 1 and len(plan.kernels) == 2  # main kernel + split-K reduce
    wide = plan_gemm(h200, 128, 4096, 4096, "bf16")
    assert wide.split_k == 1 and wide.ctas >= h200.sm_count // 2


def test_l2_residency_is_full_below_capacity_and_gone_far_above(h200):
    assert l2_hit_fraction(h200, 10e6, 0) == 1.0
    assert l2_hit_fraction(h200, 1e9, 1e9) == 0.0
    assert 0 < l2_hit_fraction(h200, 70 * 2**20, 0) < 1


def test_elementwise_is_hbm_bound_when_large_and_launch_bound_when_tiny(h200):
    big = plan_op(h200, Elementwise(name="a", rows=65536, cols=4096, fn="add"), "bf16")
    tiny = plan_op(h200, Elementwise(name="a", rows=1, cols=8, fn="add"), "bf16")
    assert bound_of(big.kernels[0], h200) == "hbm"
    assert bound_of(tiny.kernels[0], h200) == "launch"
    t = estimate_s(big.kernels[0], h200)
    assert big.bytes / t == pytest.approx(h200.memory.hbm.sustained_bytes_per_s, rel=0.05)


def test_layernorm_and_softmax_cost_at_least_their_bytes(h200):
    for op in (LayerNorm(name="l", rows=8192, cols=8192), Softmax(name="s", rows=8192, cols=8192)):
        p = plan_op(h200, op, "bf16")
        assert estimate_s(p.kernels[0], h200) >= p.bytes / h200.memory.hbm.sustained_bytes_per_s


def test_causal_attention_costs_about_half(h200):
    full = plan_op(h200, Attention(name="a", batch=4, heads=32, seq_q=4096, seq_kv=4096,
                                   head_dim=128), "bf16")
    causal = plan_op(h200, Attention(name="a", batch=4, heads=32, seq_q=4096, seq_kv=4096,
                                     head_dim=128, causal=True), "bf16")
    ratio = estimate_s(causal.kernels[0], h200) / estimate_s(full.kernels[0], h200)
    assert 0.45 < ratio < 0.6
    assert causal.flops < full.flops


def test_conv2d_is_an_implicit_gemm_over_nhwc(h200):
    op = Conv2d(name="c", n=8, c=512, h=64, w=64, k=512, r=3, s=3, pad=1)
    p = plan_op(h200, op, "bf16")
    assert p.explain["gemm_m"] == 8 * 64 * 64 and p.explain["gemm_k"] == 512 * 9
    assert p.explain["path"] == "tensor_core"
    # C = 3 is never a 16-byte row: cuDNN pads it (or runs a direct kernel), no unaligned GEMM
    odd = plan_op(h200, Conv2d(name="c", n=8, c=3, h=64, w=64, k=64, r=7, s=7), "bf16")
    assert odd.explain["family"] in ("tiny_c_padded", "tiny_c_direct")


def test_closed_form_equals_waves_times_cta_time(h200):
    cta = CtaCost(compute_s=1e-6, l2_bytes=0.0, hbm_bytes=0.0)
    k = Kernel(name="k", groups=((300, cta),), launch_s=1e-6, startup_s=0.0)
    assert closed_form_s(k, h200) == pytest.approx(1e-6 + math.ceil(300 / 132) * 1e-6)


def test_fp32_attention_runs_on_cuda_cores_as_an_estimate():
    """A user's fp32 ``nn.TransformerEncoder`` calls SDPA in fp32: priced on the CUDA cores
    (PyTorch's memory-efficient kernel), slower than bf16 on the tensor cores, and marked as
    never measured."""
    from accelsim.api import simulate_op

    kw = dict(batch=4, heads=8, seq_q=512, seq_kv=512, head_dim=64)
    fp32 = simulate_op("h200", "attention", dtype="fp32", **kw)
    bf16 = simulate_op("h200", "attention", dtype="bf16", **kw)
    assert fp32["time_s"] > 2 * bf16["time_s"]
    assert "estimated" in fp32 and "estimated" not in bf16 and fp32["path"] == "simt"
