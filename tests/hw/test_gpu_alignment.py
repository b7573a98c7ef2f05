"""The tensor-core alignment contract: leading dimensions must be multiples of one 16-byte
row (8 fp16/bf16, 16 int8/fp8, 4 tf32 elements), else the GEMM falls back to slower kernels."""

from __future__ import annotations

import pytest

from accelsim.config.registry import load_machine
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.gemm import ALIGN_BYTES, alignment_elements, is_aligned, plan_gemm
from accelsim.hw.gpu.kernel import estimate_s
from accelsim.workload.ops import Conv2d


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


@pytest.mark.parametrize("prec, elements", [("fp16", 8), ("bf16", 8), ("int8", 16), ("fp8", 16),
                                            ("tf32", 4)])
def test_one_16_byte_row(prec, elements):
    assert ALIGN_BYTES == 16
    assert alignment_elements(prec) == elements
    assert is_aligned(prec, elements, 4 * elements)
    assert not is_aligned(prec, elements + elements // 2)


@pytest.mark.parametrize("prec", ["fp16", "bf16", "fp8"])
def test_the_gemm_path_follows_the_rule(h200, prec):
    a = alignment_elements(prec)
    assert plan_gemm(h200, 512, 512, 64 * a, prec).path == "tensor_core"
    for k, n in ((64 * a + a // 2, 512), (64 * a, 64 * a - 1)):
        plan = plan_gemm(h200, 512, n, k, prec)
        assert plan.path != "tensor_core" and not plan.aligned


def test_misaligned_gemm_is_slower(h200):
    def t(k: int) -> float:
        return sum(estimate_s(x, h200) for x in plan_gemm(h200, 4096, 4096, k, "bf16").kernels)

    assert t(4095) > 1.5 * t(4096)


def test_nhwc_convolution_aligns_its_channels(h200):
    def path(c: int) -> str:
        op = Conv2d(name="c", n=8, c=c, h=28, w=28, k=64, r=3, s=3, pad=1, dtype="fp16")
        return plan_op(h200, op).explain["path"]

    assert path(64) == "tensor_core" and path(8) == "tensor_core"
    assert path(3) != "tensor_core" and path(60) != "tensor_core"
