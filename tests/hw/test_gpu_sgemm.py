"""The SIMT SGEMM kernel family of the Ampere/Volta stacks (``configs/software/ampere.yaml``
``simt_kernels``, ``simt_batched_tiles``; ``hw/gpu/gemm.py``): fp32 GEMMs as cuBLAS's
``ampere_sgemm_*`` / ``volta_sgemm_*`` kernels run them."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from accelsim.config.gpu_stack import SimtKernel
from accelsim.config.registry import load_machine
from accelsim.hw.gpu.gemm import plan_gemm, simt_lane_fraction, simt_variants


@pytest.fixture(scope="module")
def a100():
    return load_machine("a100_pcie")


def test_volta_inherits_amperes_sgemm_family(a100):
    v100 = load_machine("v100")
    assert v100.stack.gemm.simt_kernels == a100.stack.gemm.simt_kernels
    assert v100.stack.gemm.simt_batched_tiles == ("128x128",)


def test_bmm_runs_only_the_batched_128x128_kernel_padding_included(a100):
    # cuBLAS 12.1's strided-batched SGEMM ran ampere_sgemm_128x128_nn for every bmm of the
    # calibration split, a 64-row operand padded to 128 rows
    plan = plan_gemm(a100, 64, 2048, 2048, "fp32", batch=32, shared_weights=False)
    assert plan.tile[:2] == (128, 128) and plan.ctas == 1 * 16 * 32
    full = plan_gemm(a100, 128, 2048, 2048, "fp32", batch=32, shared_weights=False)
    t = sum(k.groups[0][1].compute_s for k in plan.kernels)
    assert t == pytest.approx(sum(k.groups[0][1].compute_s for k in full.kernels))
    # one GEMM (not batched) chooses among every kernel of the family
    one = plan_gemm(a100, 64, 2048, 2048, "fp32")
    assert one.tile[:2] != (128, 128)


def test_hopper_has_no_batched_rule():
    h200 = load_machine("h200")
    assert h200.stack.gemm.simt_batched_tiles == ()
    plan = plan_gemm(h200, 64, 2048, 2048, "fp32", batch=32, shared_weights=False)
    assert plan.tile[:2] != (128, 128)


def test_a_tile_with_a_sliced_kernel_has_both_variants(a100):
    kinds = {k.k_slices for k in simt_variants(a100, 128, 32)}
    assert kinds == {1, 4}
    assert {k.k_slices for k in simt_variants(a100, 32, 128)} == {1, 4}  # a transpose too
    assert {k.k_slices for k in simt_variants(a100, 64, 64)} == {1}


def test_a_lone_two_warp_cta_feeds_half_the_fp32_lanes(a100):
    small = SimtKernel(tile="128x32", threads=64, registers=128)
    assert simt_lane_fraction(a100, small, ctas=a100.sm_count) == 0.5
    # two resident per SM (a grid of 2 x SMs) fill the four schedulers
    assert simt_lane_fraction(a100, small, ctas=2 * a100.sm_count) == 1.0
    big = SimtKernel(tile="128x128", threads=256, registers=128)
    assert simt_lane_fraction(a100, big, ctas=1) == 1.0


def test_occupancy_is_capped_by_the_register_file(a100):
    # 64 K registers / (64 threads x 255 registers) = 4 CTAs of 2 warps: all 4 schedulers fed
    fat = SimtKernel(tile="32x32", threads=32, registers=255)
    regs = a100.compute.sm_register_file_bytes / 4
    resident = int(regs // (32 * 255))
    assert simt_lane_fraction(a100, fat, ctas=10 ** 6) == min(1.0, resident / 4)


def test_a_sliced_kernel_reads_more_shared_memory_per_mac_than_its_plain_twin(a100):
    # the same 128x32 tile: 256 threads over 4 K slices hold 8x8 register tiles like the
    # plain 64-thread kernel, plus the partial tiles' sum through shared memory
    stack = a100.stack
    only = {s: replace(a100, stack=replace(stack, gemm=replace(stack.gemm, simt_kernels=(
        SimtKernel(tile="128x32", threads=64 * s, k_slices=s, registers=128),))))
        for s in (1, 4)}
    smem = {s: plan_gemm(m, 1024, 1024, 4096, "fp32").kernels[0].groups[0][1].parts["smem_s"]
            for s, m in only.items()}
    assert smem[4] > smem[1]
    assert math.isclose(smem[4] - smem[1], 2 * 3 * 128 * 32 * 4 / (
        a100.compute.sm_smem_bytes_per_clk * a100.load_clock_hz("fp32")), rel_tol=1e-6)


def test_the_plan_names_its_sgemm_kernel(a100):
    plan = plan_gemm(a100, 4096, 4096, 4096, "fp32")
    name = plan.kernels[0].meta["simt_kernel"]
    assert name.split("_")[0] in {k.tile for k in a100.stack.gemm.simt_kernels}
