"""A whole model's weights come from HBM once per step; a repeated op keeps them in L2.

``plan_gemm(cold_weight_fraction=)`` and ``devices/gpu_model.py``
``step_cold_weight_fraction`` (ARCHITECTURE.md, "GPU per-kernel costs": the two contexts
differ in cache state)."""

from __future__ import annotations

import dataclasses

import pytest

from accelsim.api.model_run import run_model
from accelsim.config.registry import load_machine
from accelsim.devices.gpu_model import step_cold_weight_fraction
from accelsim.devices.memory_check import MemoryCheck
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.gemm import plan_gemm
from accelsim.workload.ops import Conv2d, Gemm


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def _hbm(plan) -> float:
    return sum(k.hbm_bytes for k in plan.kernels)


def test_a_repeated_gemm_that_fits_l2_reads_nothing_from_hbm_a_cold_one_its_weights(h200):
    """768 x 3072 x 512 bf16 (bert-base fc1 at 512 tokens): ~7 MB of operands fit the 60 MiB
    L2, so back to back it moves no HBM bytes; with its weights cold it reads them once."""
    weights = 768 * 3072 * 2
    hot = plan_gemm(h200, 512, 3072, 768, "bf16")
    cold = plan_gemm(h200, 512, 3072, 768, "bf16", cold_weight_fraction=1.0)
    half = plan_gemm(h200, 512, 3072, 768, "bf16", cold_weight_fraction=0.5)
    assert hot.l2_hit == 1.0 and _hbm(hot) == 0.0
    assert _hbm(cold) == pytest.approx(weights)
    assert _hbm(half) == pytest.approx(weights / 2)


def test_a_streamed_operand_is_not_counted_twice(h200):
    """A decode GEMV's weights already come from HBM on every call (evict-first): cold adds
    nothing to them."""
    hot = plan_gemm(h200, 8, 4096, 4096, "bf16")
    cold = plan_gemm(h200, 8, 4096, 4096, "bf16", cold_weight_fraction=1.0)
    assert _hbm(cold) == pytest.approx(_hbm(hot))
    assert _hbm(hot) >= 4096 * 4096 * 2


def _with_share(m, share: float):
    gemm = dataclasses.replace(m.stack.gemm, stream_l2_share=share)
    return dataclasses.replace(m, stack=dataclasses.replace(m.stack, gemm=gemm))


def test_back_to_back_a_streamed_operand_keeps_its_evict_first_share_of_l2(h200):
    """A skinny GEMM called back to back with itself (one op timed in a loop) keeps the
    stack's ``gemm.stream_l2_share`` of its footprint's hit: 33.5 MB of weights fit the 60 MiB
    L2 once (one partition copy: one CTA reads each line), so at share s it reads (1 - s) of
    them from HBM; in a step (``back_to_back=False``), or at share 0, every call reads them
    all; a cold share still comes from HBM once; weights far over L2 keep nothing."""
    weights = 4096 * 4096 * 2
    share = h200.stack.gemm.stream_l2_share
    assert 0 < share < 1

    def hbm(m, mm=8, n=4096, **kw):
        return _hbm(plan_gemm(m, mm, n, 4096, "bf16", **kw))

    step = hbm(h200)
    assert hbm(h200, back_to_back=True) == pytest.approx(step - share * weights, rel=0.01)
    assert hbm(_with_share(h200, 0.0), back_to_back=True) == pytest.approx(step)
    assert hbm(h200, back_to_back=True, cold_weight_fraction=1.0) == pytest.approx(step)
    assert hbm(h200, n=16384, back_to_back=True) == pytest.approx(hbm(h200, n=16384))
    # plan_op: a single op is back to back, a whole model's op (cold_cache) is not
    gemv = Gemm(name="fc", m=8, n=4096, k=4096, dtype="bf16")
    assert _hbm(plan_op(h200, gemv)) == pytest.approx(hbm(h200, back_to_back=True))
    assert _hbm(plan_op(h200, gemv, cold_cache=True)) == pytest.approx(step)


def test_plan_op_applies_cold_weights_to_weight_gemms_and_convs_only(h200):
    lin = Gemm(name="fc", m=512, n=3072, k=768, dtype="bf16")
    qk = Gemm(name="qk", m=512, n=512, k=64, batch=12, shared_weights=False, dtype="bf16")
    conv = Conv2d(name="c", n=1, c=256, h=14, w=14, k=256, r=3, s=3, stride=1, pad=1,
                  dtype="fp16")
    assert _hbm(plan_op(h200, lin, cold_weight_fraction=1.0)) == pytest.approx(768 * 3072 * 2)
    assert _hbm(plan_op(h200, qk, cold_weight_fraction=1.0)) == _hbm(plan_op(h200, qk))
    assert _hbm(plan_op(h200, conv)) == 0.0
    assert _hbm(plan_op(h200, conv, cold_weight_fraction=1.0)) >= 256 * 256 * 9 * 2


def test_cold_fraction_out_of_range_is_refused(h200):
    with pytest.raises(ValueError, match="cold_weight_fraction"):
        plan_gemm(h200, 64, 64, 64, "bf16", cold_weight_fraction=1.5)


def _mem(weights: float, kv: float = 0.0) -> MemoryCheck:
    return MemoryCheck(weights_bytes=weights, kv_cache_bytes=kv, activation_bytes=0,
                       workspace_bytes=0.0, capacity_bytes=141e9)


def test_step_cold_fraction_follows_the_l2_fit(h200):
    """Weights (x2 L2 copies) well inside L2 stay there between steps; far beyond it, all are
    cold; the KV cache competes for the same L2."""
    assert step_cold_weight_fraction(h200, _mem(10e6)) == 0.0
    assert step_cold_weight_fraction(h200, _mem(16e9)) == 1.0
    assert step_cold_weight_fraction(h200, _mem(10e6, kv=200e6)) == 1.0
    between = step_cold_weight_fraction(h200, _mem(40e6))
    assert 0.0 < between < 1.0
    assert step_cold_weight_fraction(h200, None) == 1.0


def test_a_whole_model_step_reads_its_weights_from_hbm(h200):
    """bert-base (218 MB of bf16 weights, > L2) in a CUDA graph: its GEMMs read at least
    their encoder weights from HBM each step (they reported 0 B while every op was planned
    with a hot L2)."""
    r = run_model(h200, "bert_base", exec_mode="graph")
    layers = r.layers
    gemm_dram = layers.loc[layers["op"] == "gemm", "dram_bytes"].sum()
    encoder_weights = 12 * (4 * 768 * 768 + 2 * 768 * 3072) * 2
    assert gemm_dram >= encoder_weights
    assert r.totals["dram_bytes"] >= encoder_weights
