"""Convolution kernels pay the stream's launch gap but not ``host.kernel_tail_s`` (run 6's
profiled ResNet-50 graph: cuDNN/cuBLAS conv kernels show no drain), in a whole model and as a
single op; PyTorch's native kernels around them (BatchNorm, ReLU) still pay it."""

from __future__ import annotations

import pytest

from accelsim.api.gpu import simulate_op
from accelsim.api.model_run import run_model
from accelsim.config.registry import load_machine
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.kernel import pays_tail
from accelsim.workload.ops import Conv2d

CONVS = [Conv2d(name="pw", n=1, c=64, h=56, w=56, k=256, r=1, s=1),
         Conv2d(name="c3", n=1, c=64, h=56, w=56, k=64, r=3, s=3, pad=1),
         Conv2d(name="dw", n=1, c=144, h=56, w=56, k=144, r=3, s=3, pad=1, groups=144),
         Conv2d(name="stem", n=1, c=3, h=224, w=224, k=64, r=7, s=7, stride=2, pad=3)]


def _machines():
    # two tails close enough that no plan choice (split-K, tiny-C family) flips between them
    return (load_machine("h200", {"host.kernel_tail_s": 0.9e-6}),
            load_machine("h200", {"host.kernel_tail_s": 1.1e-6}))


@pytest.mark.parametrize("op", CONVS, ids=[c.name for c in CONVS])
def test_conv_kernels_carry_launch_but_not_the_tail(op):
    low, high = _machines()
    for k in plan_op(low, op, "bf16").kernels:
        assert not pays_tail(k)
        assert k.launch_s == pytest.approx(low.host.launch_s)
    # a single conv op: the same time whatever the tail
    assert simulate_op(low, op, mode="analytic", precision="bf16")["time_s"] == pytest.approx(
        simulate_op(high, op, mode="analytic", precision="bf16")["time_s"])


def test_whole_cnn_charges_the_tail_to_native_kernels_only():
    low, high = _machines()
    runs = [run_model(m, "resnet50:batch=1", exec_mode="graph").calls for m in (low, high)]
    gpu = [c.groupby("op")["gpu_s"].sum() for c in runs]
    kernels = runs[0].groupby("op")["kernels"].sum()
    assert gpu[1]["conv2d"] == pytest.approx(gpu[0]["conv2d"])
    # BatchNorm's three native kernels each pay the 0.2 us difference in the tail
    assert gpu[1]["batchnorm"] - gpu[0]["batchnorm"] == pytest.approx(
        kernels["batchnorm"] * 0.2e-6, rel=1e-6)
