"""Mechanisms behind short GPU kernels (``h200_linear_dw_pool_run4b.json``): ``nn.Linear`` with bias
at encoder shapes (cuBLASLt's ``nvjet`` tiles, the K-block hand-off of skinny tiles, the bias
epilogue), PyTorch's launch of the global average pool (``Reduce.cuh``), the depthwise
kernel's fixed cost and the softmax's ``expf``. Properties of the model, never measured
numbers (those are in ``scripts/validate/validate_gpu.py --small`` and ``validate_gpu_conv.py``)."""

from __future__ import annotations

import math

import pytest

from accelsim.api.gpu import simulate_op
from accelsim.config.registry import load_machine
from accelsim.hw.gpu.cnn_glue import avgpool_launch
from accelsim.hw.gpu.gemm import plan_gemm
from accelsim.hw.gpu.kernel import estimate_s
from accelsim.workload.models.transformer import (
    BERT_BASE,
    GPT2_SMALL,
    LLAMA3_8B,
    build_transformer,
)
from accelsim.workload.nn_ops import Pool2d, Softmax
from accelsim.workload.ops import Conv2d, Gemm


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def plan_s(m, M, N, K, bias=False):
    plan = plan_gemm(m, M, N, K, "bf16", bias=bias)
    return plan, sum(estimate_s(k, m) for k in plan.kernels)


def time_s(m, op) -> float:
    return simulate_op(m, op, mode="analytic")["time_s"]


@pytest.mark.parametrize("M", [192, 3072])
def test_the_bias_epilogue_costs_a_kernel_once(h200, M):
    # one wave or several: earlier tiles' epilogues hide behind later main loops, the last
    # tiles' does not
    plan, with_bias = plan_s(h200, M, 3072, 768, bias=True)
    _, without = plan_s(h200, M, 3072, 768)
    assert with_bias - without == pytest.approx(h200.compute.gemm_bias_epilogue_s, rel=0.05)
    assert plan.kernels[0].startup_s >= h200.compute.gemm_bias_epilogue_s


def test_simulate_op_reads_the_bias_flag_of_the_gemm(h200):
    plain = Gemm(name="g", m=64, n=2304, k=768, dtype="bf16")
    linear = Gemm(name="g", m=64, n=2304, k=768, dtype="bf16", bias=True)
    assert time_s(h200, linear) > time_s(h200, plain) + 0.5 * h200.compute.gemm_bias_epilogue_s


def test_skinny_tiles_wait_on_the_k_block_handoff(h200):
    # a 64-row tile over K = 3072 is 48 K blocks: the barrier hand-off, not the MMAs, bounds it
    plan, _ = plan_s(h200, 64, 768, 3072)
    cta = plan.kernels[0].groups[0][1]
    k_iters = math.ceil(math.ceil(3072 / plan.split_k) / plan.tile[2])
    assert cta.parts["kblock_s"] == pytest.approx(k_iters * h200.compute.gemm_kblock_s)
    free = load_machine("h200", {"compute.gemm_kblock_s": 0.0})
    assert plan_s(free, 64, 768, 3072)[1] < plan_s(h200, 64, 768, 3072)[1]
    # a big tile's main loop is far above the hand-off: a square GEMM does not notice it
    assert plan_s(free, 4096, 4096, 4096)[1] == pytest.approx(plan_s(h200, 4096, 4096, 4096)[1])


def test_one_wave_of_narrow_tiles_beats_split_k_like_cublaslt(h200):
    # cuBLASLt runs 1536 x 768 x 3072 as 72x128 tiles: 22 x 6 = 132 CTAs, one wave, no
    # split-K; with only power-of-two tiles the model split K (192x192 x 4)
    plan, _ = plan_s(h200, 1536, 768, 3072, bias=True)
    assert plan.split_k == 1 and plan.ctas <= h200.sm_count
    assert any(d not in (8, 16, 32, 64, 128, 256) for d in plan.tile[:2])  # an odd-sized tile
    # a GEMM of many waves keeps tiles of two warpgroups or more a side (run 19: 128x152 ...
    # 256x160 from 2.4 waves up), not the skinny 64-row ones that would double its L2 reads
    big, _ = plan_s(h200, 8192, 8192, 8192)
    assert min(big.tile[:2]) >= 128


def test_zoo_encoders_carry_their_linear_biases_and_llama_does_not():
    def gemms(spec, **kw):
        g = build_transformer(spec, **kw)
        return {n.op.name.split(".")[-1]: n.op.bias for n in g.nodes if isinstance(n.op, Gemm)}

    bert = gemms(BERT_BASE, mode="encoder", batch=1, seq=128)
    assert bert["q_proj"] and bert["fc1"] and bert["fc2"] and bert["o_proj"]
    assert not bert["qk"] and not bert["av"]  # attention score GEMMs have no bias
    gpt2 = gemms(GPT2_SMALL, mode="decode", batch=1, context=128)
    assert gpt2["qkv_proj"] and not gpt2["lm_head"]
    assert not any(gemms(LLAMA3_8B, mode="decode", batch=1, context=128).values())


@pytest.mark.parametrize("n, c, hw, expect", [
    (8, 1280, 49, (20, 128, 49)),      # 49 positions < 4 warps x 16: each warp its outputs
    (128, 2048, 49, (512, 128, 49)),
    (4, 512, 196, (16, 128, 49)),      # 196 >= 64: the block's 4 warps split the positions
])
def test_average_pool_launch_follows_reduce_cuh(n, c, hw, expect):
    assert avgpool_launch(n, c, hw, 132) == expect


def test_a_long_average_pool_splits_across_blocks():
    ctas, threads, per_thread = avgpool_launch(1, 64, 56 * 56, 132)
    assert ctas > 1 and per_thread <= 256
    assert ctas * threads * per_thread >= 64 // 4 * 56 * 56


def test_average_pool_steps_slow_down_with_ctas_sharing_an_sm(h200):
    def t(n):
        return time_s(h200, Pool2d(name="p", n=n, c=2048, h=7, w=7, mode="global_avg"))
    assert t(16) == pytest.approx(t(1), rel=0.02)  # <= 1 CTA per SM: the same chain
    assert t(128) > t(16) + 0.5e-6  # 4 CTAs per SM: every step shares the SM's L2 port
    # 196 positions split over the block's warps: no longer than 49 positions per thread
    wide = time_s(h200, Pool2d(name="p", n=4, c=512, h=14, w=14, mode="global_avg"))
    assert wide == pytest.approx(t(1), rel=0.05)


def test_depthwise_kernel_pays_its_fixed_cost_before_the_first_output(h200):
    op = Conv2d(name="c", n=1, c=960, h=7, w=7, k=960, r=3, s=3, stride=1, pad=1, groups=960,
                dtype="bf16")
    free = load_machine("h200", {"conv.depthwise_fixed_s": 0.0})
    assert time_s(h200, op) - time_s(free, op) == pytest.approx(h200.conv.depthwise_fixed_s,
                                                                rel=0.01)


def test_softmax_pays_expf_not_tanhf(h200):
    op = Softmax(name="s", rows=16384, cols=1024, dtype="bf16")
    tanh_cost = load_machine("h200", {"compute.exp_instr": 0.0})  # 0: falls back to tanhf's
    cheap = load_machine("h200", {"compute.exp_instr": 4.0})
    assert h200.compute.exp_instr < h200.compute.transcendental_instr
    assert time_s(cheap, op) < time_s(h200, op) < time_s(tanh_cost, op)
