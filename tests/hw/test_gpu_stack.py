"""The library stack is data: GEMM kernel families, tile sets, split-K, TMA multicast and
dependent launch come from the GPU's ``configs/software/<stack>.yaml``, not from code."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accelsim.config.registry import load_machine
from accelsim.errors import ConfigError
from accelsim.hw.gpu.conv import plan_conv2d
from accelsim.hw.gpu.gemm import gemm_path, plan_gemm
from accelsim.workload.ops import Conv2d


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def with_gemm(m, **changes):
    """``m`` with its stack's GEMM rules changed."""
    return replace(m, stack=replace(m.stack, gemm=replace(m.stack.gemm, **changes)))


def test_each_gpu_names_the_stack_of_its_architecture():
    for name, stack in (("h200", "hopper"), ("h100", "hopper"), ("a100", "ampere"),
                        ("v100", "volta")):
        m = load_machine(name)
        assert m.stack.name == stack and m.stack.architecture == m.architecture


def test_split_k_factors_come_from_the_stack(h200):
    """A deep GEMM of few tiles splits K on the H200's stack; a stack without split-K never
    does."""
    assert plan_gemm(h200, 128, 128, 65536, "bf16").split_k > 1
    no_split = with_gemm(h200, split_k=(1,))
    assert plan_gemm(no_split, 128, 128, 65536, "bf16").split_k == 1


def test_the_tile_set_comes_from_the_stack(h200):
    one_tile = with_gemm(h200, tensor_core_tiles=("128x128",), wave_fitting_precisions=())
    for shape in ((512, 512, 512), (4096, 4096, 4096), (64, 4096, 4096)):
        assert plan_gemm(one_tile, *shape, "bf16").tile[:2] == (128, 128)
    assert {plan_gemm(h200, *s, "bf16").tile[:2] for s in ((64, 4096, 4096), (4096, 4096, 4096))} \
        != {(128, 128)}


def test_legacy_precisions_come_from_the_stack(h200):
    """int8 runs Hopper's mma.sync (legacy) kernels; Ampere's stack runs its own."""
    assert gemm_path(h200, "int8", 4096, 4096) == "legacy"
    assert gemm_path(load_machine("a100"), "int8", 4096, 4096) == "tensor_core"
    assert gemm_path(with_gemm(h200, legacy_precisions=()), "int8", 4096, 4096) == "tensor_core"


def test_dependent_launch_is_a_stack_feature(h200):
    # the hopper stack measures none in PyTorch's CUDA graphs (run 30); a stack that has it
    # marks its GEMMs, as a machine that names it says
    assert plan_gemm(h200, 1024, 1024, 1024, "bf16").kernels[0].meta["pdl"] is False
    pdl = load_machine("h200", {"stack.gemm.dependent_launch": True})
    assert plan_gemm(pdl, 1024, 1024, 1024, "bf16").kernels[0].meta["pdl"] is True
    a100 = load_machine("a100")
    assert plan_gemm(a100, 1024, 1024, 1024, "bf16").kernels[0].meta["pdl"] is False


def test_tma_multicast_halves_the_shared_operand_reads(h200):
    """With 2-CTA multicast the larger operand tile is read from L2 once per cluster."""
    plan = plan_gemm(h200, 4096, 4096, 4096, "bf16")
    solo = plan_gemm(with_gemm(h200, multicast_ctas=1, tensor_core_tiles=(
        "x".join(map(str, plan.tile[:2])),), wave_fitting_precisions=()), 4096, 4096, 4096, "bf16")
    assert solo.tile == plan.tile
    l2 = plan.kernels[0].groups[0][1].l2_bytes
    assert solo.kernels[0].groups[0][1].l2_bytes > 1.2 * l2


def test_cudnn_implicit_gemm_tiles_come_from_the_stack(h200):
    op = Conv2d(name="c", n=8, c=256, h=28, w=28, k=256, r=3, s=3, stride=1, pad=1, groups=1,
                dtype="bf16")
    assert plan_conv2d(h200, op, "bf16").family == "implicit_gemm"
    small = replace(h200, stack=replace(h200.stack, conv=replace(
        h200.stack.conv, implicit_gemm_tiles=("64x64",))))
    assert plan_conv2d(small, op, "bf16").tile[:2] == (64, 64)


def test_a_stack_with_a_bad_tile_is_refused_naming_the_stack_file(tmp_path):
    bad = tmp_path / "odd.yaml"
    bad.write_text("kind: gpu_stack\ninherit: hopper\nname: odd\n"
                   "gemm: {simt_batched_tiles: [128by128]}\nprovenance: {default: estimated}\n")
    gpu = tmp_path / "g.yaml"
    gpu.write_text(f"kind: gpu\ninherit: h200\nname: g\nstack: {bad}\n"
                   "provenance: {default: datasheet}\n")
    with pytest.raises(ConfigError) as exc:
        load_machine(str(gpu))
    assert "odd.yaml" in str(exc.value) and "gemm.simt_batched_tiles[0]" in str(exc.value)
