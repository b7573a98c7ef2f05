"""PyTorch 2.11's row-wise kernels on the GPU model (``accelsim.hw.gpu.rows``) and the
exact-GELU pointwise kernel: mechanisms, each checked where it changes the answer."""

from __future__ import annotations

import dataclasses

import pytest

from accelsim.config.registry import load_machine
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.kernel import estimate_s
from accelsim.hw.gpu.rows import softmax_shape
from accelsim.workload.nn_ops import Elementwise, LayerNorm, Softmax

HOPPER = load_machine("h200").stack.rows
"""PyTorch 2.11's row-kernel dispatch (configs/software/hopper.yaml)."""


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def t_op(m, op) -> float:
    """Seconds of the op's kernels, back to back."""
    return sum(estimate_s(k, m) for k in plan_op(m, op, "bf16").kernels)


def test_rmsnorm_is_cheaper_than_layernorm_on_the_same_kernel(h200):
    """F.rms_norm runs vectorized_layer_norm_kernel<..., true>: no mean, no Welford
    division, no beta. Measured (h200_gemm_rows_run4.json) 16384 x 4096: 81 vs 105 us."""
    ln = t_op(h200, LayerNorm(name="l", rows=16384, cols=4096))
    rms = t_op(h200, LayerNorm(name="r", rows=16384, cols=4096, rms=True))
    assert rms < 0.9 * ln
    assert plan_op(h200, LayerNorm(name="r", rows=8, cols=4096, rms=True),
                   "bf16").kernels[0].name == "rmsnorm"
    # the per-CTA Welford combine is what separates them on short rows
    no_welford = load_machine("h200", {"compute.welford_cta_instr": 0})
    short = LayerNorm(name="l", rows=16384, cols=256)
    assert t_op(no_welford, short) < 0.9 * t_op(h200, short)


@pytest.mark.parametrize(("cols", "elem", "family"), [
    (2048, 2, "softmax_warp"),     # <= 2048 elements and 4 KiB: a warp per row
    (2049, 2, "softmax_reg"),      # 1024 threads, 3 elements each in registers
    (2048, 4, "softmax_reg"),      # fp32 2048 is 8 KiB: not the warp kernel
    (9216, 2, "softmax_reg"),      # ceil(9216 / 1024) = 9 < 10
    (9217, 2, "softmax_smem"),     # 10 per thread: the row goes to shared memory
    (14336, 2, "softmax_smem"),    # as measured (cunn_SoftMaxForwardSmem)
    (24576, 2, "softmax_block"),   # 48 KiB plus the reduction buffer: 3 passes
])
def test_softmax_family_switches_by_row_length(cols, elem, family):
    assert softmax_shape(cols, elem, HOPPER).family == family


def test_register_softmax_recomputes_the_exp(h200):
    """cunn_SoftMaxForwardReg's epilogue calls exp again (2 per element), the warp kernel
    keeps it (1): per element the 3072-column rows cost more than the 2048-column ones
    (measured 16384 rows: 3.5 vs 2.4 ns per element)."""
    assert softmax_shape(3072, 2, HOPPER).exps == 2 and softmax_shape(2048, 2, HOPPER).exps == 1
    per_el = [t_op(h200, Softmax(name="s", rows=16384, cols=c)) / c for c in (2048, 3072)]
    assert per_el[1] > 1.25 * per_el[0]
    cheap = load_machine("h200", {"compute.exp_instr": 1})  # softmax calls expf
    per_el_cheap = [t_op(cheap, Softmax(name="s", rows=16384, cols=c)) / c
                    for c in (2048, 3072)]
    assert per_el_cheap[1] < per_el[1] * 0.9


def test_register_softmax_occupancy_halves_past_the_register_budget(h200):
    """1024 threads x (26 + ceil(cols / 1024)) registers: 2 CTAs per SM up to 6 values
    per thread, then 1 (the measured step from 5120 to 8192 columns)."""
    assert softmax_shape(5120, 2, HOPPER).ctas_per_sm == 2
    assert softmax_shape(8192, 2, HOPPER).ctas_per_sm == 1
    per_el = [t_op(h200, Softmax(name="s", rows=16384, cols=c)) / c for c in (5120, 8192)]
    assert per_el[1] > 1.2 * per_el[0]


def test_warp_softmax_computes_the_padded_row(h200):
    """The unrolled warp kernel runs its arithmetic on pow2(cols) slots, predicating only
    loads and stores: 1600 columns cost more than 1600/2048 of 2048 columns."""
    assert softmax_shape(1600, 2, HOPPER).computed_cols == 2048
    t1600 = t_op(h200, Softmax(name="s", rows=16384, cols=1600))
    t2048 = t_op(h200, Softmax(name="s", rows=16384, cols=2048))
    assert t1600 / t2048 > 1600 / 2048 + 0.03


def test_layernorm_rereads_from_l2_once_resident_rows_overflow_l1(h200):
    """16 CTAs x 8 KiB rows (+ gamma, beta) fit the 256 KiB L1; 16 x 16 KiB do not: the
    normalise pass then re-reads x from L2 (bytes and latency)."""
    k4 = plan_op(h200, LayerNorm(name="l", rows=16384, cols=4096), "bf16").kernels[0]
    k8 = plan_op(h200, LayerNorm(name="l", rows=16384, cols=8192), "bf16").kernels[0]
    assert k4.meta["reread_from"] == "l1" and k8.meta["reread_from"] == "l2"
    x4, x8 = 16384 * 4096 * 2, 16384 * 8192 * 2
    assert k4.l2_bytes < 2.1 * x4 + 1e6
    assert k8.l2_bytes > 2.9 * x8


def test_row_chains_wait_on_the_loaded_hbm_latency(h200):
    """Row kernels whose rows come from HBM are bound by their serial load chains, at the
    round trip seen under load, not the idle latency."""
    op = LayerNorm(name="r", rows=16384, cols=4096, rms=True)
    idle = dataclasses.replace(h200, memory=dataclasses.replace(h200.memory,
                                                                loaded_hbm_latency_s=0.0))
    assert t_op(h200, op) > 1.1 * t_op(idle, op)


def test_exact_gelu_costs_more_than_the_tanh_form(h200):
    """F.gelu (erf) vs F.gelu(approximate='tanh') vs relu at 100 M elements: measured
    131 us (ops4), ~117 us (h200_e2e, scaled) and 96 us."""
    def t(fn):
        return t_op(h200, Elementwise(name=fn, rows=12288, cols=8192, fn=fn))
    assert t("relu") < t("gelu") < t("gelu_erf")
    assert 1.2 < t("gelu_erf") / t("relu") < 1.5
