"""The library choices of the Hopper stack (configs/software/hopper.yaml): when cuBLAS splits
K and when SDPA (cuDNN) splits the K/V sequence of decode attention, as run 9 measured them
on one H200 (scripts/data/h200_library_run9.json, calibration part: Llama-3-8B shapes)."""

from __future__ import annotations

import pytest

from accelsim.config.registry import load_machine
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.attention import kv_splits
from accelsim.hw.gpu.gemm import fitted_tiles, plan_gemm
from accelsim.workload.nn_ops import Attention


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def test_split_k_at_small_m_and_large_k_not_at_large_m(h200):
    """Run 9 (calibration): F.linear 1 x 4096 x 14336 (Llama-3-8B down projection, decode)
    runs nvjet_sm90_tst_128x8 ..._splitK + splitKreduce_kernel; at M = 512 one 128x128
    kernel (32 x 4 = 128 tiles already fill the 132 SMs)."""
    small = plan_gemm(h200, 1, 4096, 14336, "bf16")
    assert small.split_k > 1 and len(small.kernels) == 2
    assert small.kernels[1].name.endswith("splitk_reduce")
    large = plan_gemm(h200, 512, 4096, 14336, "bf16")
    assert large.split_k == 1 and len(large.kernels) == 1


def test_split_k_only_fills_one_wave(h200):
    """The mechanism: split-K fills SMs the tiles leave idle and never makes a second wave.
    Run 9: 4096 x 4096 at M = 1 (64 tiles of 64 weights) splits; 6144 x 4096 (96 tiles: a
    split by 2 would need 192 CTAs) does not, nor 14336 x 4096 (224 tiles)."""
    for n, k in ((4096, 4096), (1024, 4096), (4096, 14336)):
        plan = plan_gemm(h200, 1, n, k, "bf16")
        assert plan.split_k > 1
        assert plan.ctas <= h200.sm_count
        assert plan.ctas // plan.split_k * 2 <= h200.sm_count
    for n in (6144, 14336, 28672):
        assert plan_gemm(h200, 1, n, 4096, "bf16").split_k == 1


def test_skinny_tiles_cover_m_without_padding():
    """cuBLASLt runs 8, 16, 32 token rows per tile at M = 1..8, 16, 32 (run 9 kernel names
    nvjet_sm90_tst_64x8 / 64x16 / 64x32): tiles of mostly padding are not candidates."""
    cands = [(8, 64, 64), (16, 64, 64), (32, 64, 64), (64, 48, 64), (64, 64, 64),
             (128, 128, 64)]
    assert {t[0] for t in fitted_tiles(cands, 1, 4096, 32)} == {8}
    assert {t[0] for t in fitted_tiles(cands, 16, 4096, 32)} == {16}
    # past single_tile_max any side up to M rounded up to a power of two
    assert {t[0] for t in fitted_tiles(cands, 64, 4096, 32)} == {8, 16, 32, 64}


def _decode(batch: int, context: int) -> Attention:
    return Attention(name="a", batch=batch, heads=32, seq_q=1, seq_kv=context, head_dim=128,
                     kv_heads=8)


def test_split_kv_at_small_batch_and_long_context_only(h200):
    """Run 9 (calibration, 32 heads / 8 KV heads): cuDNN adds its lean_reduction_kernel at
    batch 1 and 4 from 2048 keys, not at 512 keys (4 K/V blocks), never at batch 16 or 64."""
    def kernels(b: int, ctx: int) -> int:
        return len(plan_op(h200, _decode(b, ctx), "bf16").kernels)

    assert kernels(1, 2048) == kernels(4, 8192) == 2
    assert kernels(1, 512) == kernels(4, 512) == 1
    assert kernels(16, 2048) == kernels(64, 32768) == 1


def test_split_kv_needs_enough_kv_blocks(h200):
    """The mechanism: a split needs idle SMs and at least split_kv_min_blocks K/V blocks."""
    least = h200.stack.attention.split_kv_min_blocks
    assert kv_splits(h200, ctas=8, q_blocks=1, kv_blocks=least - 1) == 1
    assert kv_splits(h200, ctas=8, q_blocks=1, kv_blocks=least) > 1
    assert kv_splits(h200, ctas=h200.sm_count, q_blocks=1, kv_blocks=256) == 1



def test_split_k_reduce_keeps_the_dependent_launch_chain(h200):
    """cuBLASLt's splitKreduce_kernel keeps its GEMM's dependent launch: a GEMM after the
    reduce launches early as after a GEMM (run 5: the gap after a reduce is a GEMM's
    0.26 us); the reduce still pays its own completion."""
    from accelsim.hw.gpu.kernel import pays_tail

    pdl = load_machine("h200", {"stack.gemm.dependent_launch": True})
    main, reduce = plan_gemm(pdl, 1, 4096, 4096, "bf16").kernels
    assert main.meta["pdl"] and reduce.meta["pdl"]
    assert pays_tail(reduce)
