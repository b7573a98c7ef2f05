"""cuDNN's Winograd convolutions on Volta (``configs/software/volta.yaml``
``conv.fprop_algorithms``, ``hw/gpu/winograd.py``, the choice in ``hw/gpu/conv.py``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accelsim.config.registry import load_machine
from accelsim.hw.gpu.conv import plan_conv2d
from accelsim.hw.gpu.kernel import estimate_s
from accelsim.hw.gpu.winograd import applies, multiply_fraction, plan_winograd, tiles
from accelsim.workload.ops import Conv2d

BIG = Conv2d(name="c", n=32, c=256, h=56, w=56, k=256, r=3, s=3, pad=1)
"""A ResNet-50 stage-1-sized 3x3 convolution at batch 32."""


@pytest.fixture(scope="module")
def v100():
    return load_machine("v100")


def total_s(m, plan) -> float:
    return sum(estimate_s(k, m) for k in plan.kernels)


def without_winograd(m):
    return replace(m, stack=replace(m.stack, conv=replace(m.stack.conv, fprop_algorithms=())))


def test_the_multiply_saving_is_a2_over_m2_r2(v100):
    f2, f4, f25 = v100.stack.conv.fprop_algorithms
    assert (f2.output_tile, f4.output_tile, f25.filter) == (2, 4, 5)
    assert multiply_fraction(f2) == pytest.approx(16 / 36)
    assert multiply_fraction(f4) == pytest.approx(36 / 144)
    gemm, _ = plan_winograd(v100, BIG, "fp32", f4)
    # a^2 GEMMs of [T x C] @ [C x K], T = N ceil(Ho/4) ceil(Wo/4)
    t = tiles(BIG, 4)
    assert t == 32 * 14 * 14
    assert gemm.ctas == 36 * (t // 128 + (t % 128 > 0)) * 2


def test_the_rules_are_cudnns_documented_support(v100):
    f2, f4, f25 = v100.stack.conv.fprop_algorithms
    assert applies(f2, BIG, "fp32") and applies(f4, BIG, "fp32")
    assert not applies(f25, BIG, "fp32")                       # a 5x5 rule
    assert not applies(f2, replace(BIG, stride=2), "fp32")     # stride 1 only
    assert not applies(f2, BIG, "fp16")                        # fp16 runs the tensor cores
    assert not applies(f2, replace(BIG, groups=2), "fp32")     # ungrouped only
    assert applies(f25, replace(BIG, r=5, s=5, pad=2), "fp32")


def test_a_large_fp32_3x3_conv_on_v100_runs_winograd_faster_than_implicit_gemm(v100):
    plan = plan_conv2d(v100, BIG, "fp32")
    implicit = plan_conv2d(without_winograd(v100), BIG, "fp32")
    assert plan.family in ("winograd", "winograd_nonfused")
    assert implicit.family == "implicit_gemm"
    assert total_s(v100, plan) < 0.8 * total_s(v100, implicit)


def test_non_fused_winograd_streams_its_transforms_through_hbm(v100):
    _, f4, _ = v100.stack.conv.fprop_algorithms
    _, kernels = plan_winograd(v100, BIG, "fp32", f4)
    names = [k.name for k in kernels]
    assert names[0] == "conv2d.winograd_input" and names[-1] == "conv2d.winograd_output"
    t = tiles(BIG, 4)
    written = kernels[0].groups[0][0] * kernels[0].groups[0][1].l2_bytes
    x = BIG.n * BIG.h * BIG.w * BIG.c * 4
    assert written == pytest.approx(x + 36 * t * BIG.c * 4)


def test_strided_and_fp16_convs_keep_implicit_gemm_on_v100(v100):
    assert plan_conv2d(v100, replace(BIG, stride=2), "fp32").family == "implicit_gemm"
    assert plan_conv2d(v100, BIG, "fp16").family == "implicit_gemm"


@pytest.mark.parametrize("name", ["h200", "h100", "a100"])
def test_hopper_and_ampere_keep_implicit_gemm_unchanged(name):
    m = load_machine(name)
    assert m.stack.conv.fprop_algorithms == ()
    for prec in ("fp32", "bf16"):
        plan = plan_conv2d(m, BIG, prec)
        assert plan.family == "implicit_gemm"
        assert [k.name for k in plan.kernels] == ["conv2d.implicit_gemm"]
