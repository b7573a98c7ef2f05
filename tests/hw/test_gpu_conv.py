"""Convolutions and the CNN glue kernels on a GPU: the kernel family a library picks for each
kind of convolution, the kernels it launches, and physical properties of their costs
(never measured numbers: those are in ``scripts/validate/validate_gpu_conv.py``)."""

from __future__ import annotations

import pytest

from accelsim.api.gpu import load_gpu, simulate_op
from accelsim.errors import UnsupportedError
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.cnn_glue import batchnorm_kernels, last_pow2, maxpool_kernel
from accelsim.hw.gpu.conv import conv_family, plan_conv2d
from accelsim.hw.gpu.gemm import plan_gemm
from accelsim.hw.gpu.kernel import bandwidth_floor_s, estimate_s
from accelsim.workload.nn_ops import BatchNorm2d, Pool2d
from accelsim.workload.ops import Conv2d


@pytest.fixture(scope="module")
def h200():
    return load_gpu("h200")


def conv(n=1, c=64, h=56, k=64, r=3, stride=1, groups=1, dtype="bf16") -> Conv2d:
    return Conv2d(name="c", n=n, c=c, h=h, w=h, k=k, r=r, s=r, stride=stride, pad=r // 2,
                  groups=groups, dtype=dtype)


def time_s(m, op) -> float:
    return simulate_op(m, op, mode="analytic")["time_s"]


@pytest.mark.parametrize("op, family", [
    (conv(c=256, k=64, r=1), "gemm_1x1"),
    (conv(c=64, k=64, r=3), "implicit_gemm"),
    (conv(c=256, k=512, r=1, stride=2), "implicit_gemm"),   # strided 1x1: a gather, no GEMM
    (conv(c=3, h=224, k=64, r=7, stride=2), "tiny_c"),
    (conv(c=144, k=144, groups=144), "depthwise"),
    (conv(c=128, k=128, groups=32), "grouped"),
])
def test_each_kind_of_convolution_gets_its_library_family(op, family):
    assert conv_family(op, "bf16") == family


def test_a_1x1_convolution_is_the_plain_gemm_over_all_pixels(h200):
    op = conv(n=8, c=256, h=28, k=512, r=1)
    plan = plan_conv2d(h200, op, "bf16")
    gemm = plan_gemm(h200, 8 * 28 * 28, 512, 256, "bf16")
    assert plan.family == "gemm_1x1" and len(plan.kernels) == 1
    assert plan.tile == gemm.tile and plan.ctas == gemm.ctas
    # the same kernel, plus the library kernel's fixed costs
    assert estimate_s(plan.kernels[0], h200) > estimate_s(gemm.kernels[0], h200)


def test_implicit_gemm_tiles_are_a_warpgroup_high_and_never_split_k(h200):
    for op in (conv(n=1, c=256, h=14, k=256), conv(n=32, c=512, h=7, k=512)):
        plan = plan_conv2d(h200, op, "bf16")
        assert plan.tile[0] >= 64 and plan.tile[1] >= 64 and plan.split_k == 1


def test_the_c3_stem_runs_direct_at_batch_1_and_padded_at_large_batch(h200):
    small = plan_conv2d(h200, conv(n=1, c=3, h=224, k=64, r=7, stride=2), "bf16")
    big = plan_conv2d(h200, conv(n=32, c=3, h=224, k=64, r=7, stride=2), "bf16")
    assert small.family == "tiny_c_direct" and len(small.kernels) == 1
    assert big.family == "tiny_c_padded"
    names = [k.name for k in big.kernels]
    assert names[-1] == "conv2d.implicit_gemm"
    assert {"conv2d.memset_input", "conv2d.pad_input", "conv2d.pad_filter"} <= set(names)


def test_depthwise_runs_on_cuda_cores_not_tensor_cores(h200):
    doc = simulate_op(h200, conv(n=32, c=144, k=144, groups=144), mode="analytic")
    assert doc["family"] == "depthwise" and doc["path"] == "simt"
    assert doc["bound"] in ("simt", "hbm", "l2", "launch")
    assert len(doc["kernels"]) == 1


def test_a_grouped_conv_is_one_kernel_whatever_the_group_count(h200):
    for g in (2, 8, 32):
        plan = plan_conv2d(h200, conv(n=32, c=256, h=28, k=256, groups=g), "bf16")
        assert plan.family == "grouped" and len(plan.kernels) == 1


def test_narrow_groups_waste_the_mma_atom(h200):
    """Fewer channels per group -> fewer MACs, but the per-group MMAs are padded to the
    m16n8k16 atom and the gathers get smaller: MACs per second fall."""
    rates = []
    for g in (4, 16, 64):
        op = conv(n=32, c=256, h=28, k=256, groups=g)
        rates.append(op.macs / time_s(h200, op))
    assert rates[0] > rates[1] > rates[2]


@pytest.mark.parametrize("make", [
    lambda n: conv(n=n, c=256, k=64, r=1), lambda n: conv(n=n, c=64, k=64),
    lambda n: conv(n=n, c=3, h=224, k=64, r=7, stride=2),
    lambda n: conv(n=n, c=96, h=112, k=96, stride=2, groups=96),
    lambda n: conv(n=n, c=128, k=128, groups=32),
    lambda n: BatchNorm2d(name="bn", n=n, c=64, h=112, w=112, dtype="bf16"),
    lambda n: Pool2d(name="p", n=n, c=64, h=112, w=112, dtype="bf16"),
    lambda n: Pool2d(name="p", n=n, c=2048, h=7, w=7, mode="global_avg", dtype="bf16"),
])
def test_time_never_falls_as_the_batch_grows(h200, make):
    times = [time_s(h200, make(n)) for n in (1, 2, 8, 32, 128, 512)]
    assert all(b >= a * 0.999 for a, b in zip(times, times[1:]))
    assert times[-1] > times[0]


@pytest.mark.parametrize("op", [
    conv(n=32, c=256, k=64, r=1), conv(n=32, c=64, k=64), conv(n=8, c=3, h=224, k=64, r=7,
                                                                  stride=2),
    conv(n=32, c=144, k=144, groups=144), conv(n=32, c=128, k=128, groups=32),
    BatchNorm2d(name="bn", n=32, c=64, h=112, w=112, dtype="bf16"),
    Pool2d(name="p", n=32, c=64, h=112, w=112, dtype="bf16"),
    Pool2d(name="p", n=256, c=2048, h=7, w=7, mode="global_avg", dtype="bf16"),
])
def test_no_kernel_beats_its_bandwidth_floor_and_eager_pays_the_host(h200, op):
    plan = plan_op(h200, op, "bf16")
    for k in plan.kernels:
        assert estimate_s(k, h200) >= bandwidth_floor_s(k, h200)
    doc = simulate_op(h200, op, mode="analytic")
    eager = simulate_op(h200, op, mode="analytic", exec="eager")
    assert eager["time_s"] >= max(eager["host_s"], doc["time_s"]) > 0
    assert eager["gpu_s"] == doc["time_s"]
    assert doc["hbm_bytes"] >= 0 and doc["flops"] > 0


def test_batchnorm_launches_three_kernels_with_pytorchs_grid(h200):
    ks = batchnorm_kernels(h200, 32, 64, 112, 112, 2)
    assert [k.name for k in ks] == ["batchnorm.cast_stats", "batchnorm.invstd",
                                    "batchnorm.transform"]
    tr = ks[-1]
    assert tr.meta["block"] == (32, 16) and tr.meta["grid"] == (2, 128)
    # 401408 pixels over 16 x 128 threads, 4 loads each per iteration
    assert tr.meta["iterations"] == 49
    plan = plan_op(h200, BatchNorm2d(name="bn", n=32, c=64, h=112, w=112), "bf16")
    assert plan.op_kind == "batchnorm" and len(plan.kernels) == 3


def test_batchnorm_transform_is_latency_bound_below_the_copy_rate(h200):
    """Scalar loads, at most 128 blocks along the pixels: slower than a copy of its bytes."""
    bn = plan_op(h200, BatchNorm2d(name="bn", n=32, c=64, h=112, w=112), "bf16").kernels[-1]
    assert estimate_s(bn, h200) > 1.5 * bandwidth_floor_s(bn, h200)


def test_maxpool_grid_is_one_block_per_image_and_two_output_rows(h200):
    k = maxpool_kernel(h200, 32, 64, 112, 112, 3, 2, 1, 2)
    assert k.meta["ctas"] == 32 * 28 and k.meta["positions"] == 4
    one, many = (estimate_s(maxpool_kernel(h200, n, 64, 112, 112, 3, 2, 1, 2), h200)
                 for n in (1, 32))
    assert many > 5 * one  # 896 one-per-SM blocks take ~7 rounds


def test_global_avgpool_is_latency_bound_small_and_bandwidth_bound_large(h200):
    def t(n):
        return time_s(h200, Pool2d(name="p", n=n, c=2048, h=7, w=7, mode="global_avg"))
    assert t(32) == pytest.approx(t(1), rel=0.05)
    assert t(1024) > 4 * t(32)


def test_pool_and_batchnorm_ops_count_their_work():
    bn = BatchNorm2d(name="bn", n=2, c=8, h=4, w=4)
    assert bn.flops == 2 * 2 * 8 * 16 and bn.macs == 0
    assert bn.tensor_elements() == {"input": 256, "weight": 32, "output": 256}
    mp = Pool2d(name="p", n=1, c=64, h=112, w=112)
    assert (mp.out_h, mp.out_w) == (56, 56) and mp.flops == 64 * 56 * 56 * 9
    gap = Pool2d(name="g", n=2, c=2048, h=7, w=7, mode="global_avg")
    assert gap.tensor_elements()["output"] == 2 * 2048 and gap.flops == 2 * 2048 * 50
    with pytest.raises(ValueError, match="mode"):
        Pool2d(name="p", n=1, c=1, h=4, w=4, mode="median")
    assert [last_pow2(v) for v in (1, 3, 64, 100)] == [1, 2, 64, 64]


def test_a_windowed_average_pool_is_refused_by_name(h200):
    with pytest.raises(UnsupportedError, match="avg"):
        plan_op(h200, Pool2d(name="p", n=1, c=64, h=56, w=56, mode="avg"), "bf16")


@pytest.mark.parametrize("gpu", ["v100", "a100", "h100"])
def test_every_gpu_config_costs_the_cnn_kernels(gpu):
    m = load_gpu(gpu)
    for op in (conv(n=8, c=3, h=224, k=64, r=7, stride=2, dtype="fp16"),
               conv(n=8, c=32, k=32, groups=32, dtype="fp16"),
               BatchNorm2d(name="bn", n=8, c=64, h=56, w=56, dtype="fp16"),
               Pool2d(name="p", n=8, c=64, h=112, w=112, dtype="fp16")):
        assert time_s(m, op) > 0


KERNEL_FAMILY = (("convolve_common_engine", "tiny_c_direct"),
                 ("nhwcAddPadding", "tiny_c_padded"), ("conv2d_c1_k1", "depthwise"),
                 ("_g16_", "grouped"), ("_g4_", "grouped"), ("nvjet", "gemm_1x1"),
                 ("implicit_gemm", "implicit_gemm"), ("fprop", "implicit_gemm"))


def test_the_model_picks_the_family_the_h200_profiler_shows(h200):
    """Every conv of ``scripts/data/h200_e2e.json`` (kernel names from torch.profiler)."""
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "scripts" / "data" / "h200_e2e.json"
    seen = 0
    for r in json.loads(data.read_text())["ops"]:
        if r["op"] != "conv2d":
            continue
        names = " ".join(k[0] for k in r["kernels"])
        shown = next(f for key, f in KERNEL_FAMILY if key in names)
        op = conv(n=r["n"], c=r["c"], h=r["h"], k=r["k"], r=r["r"], stride=r["stride"],
                  groups=r["groups"])
        assert plan_conv2d(h200, op, "bf16").family == shown, r["case"]
        seen += 1
    assert seen >= 20
