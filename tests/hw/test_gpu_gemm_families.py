"""GEMM mechanisms behind the H200 kernel families (``h200_gemm_rows_run4.json`` gemm_cal): batched
small GEMMs that cannot keep their operands in L2, epilogue stores that write back through an
overflowing L2, and the fixed tiles of the CUTLASS fallback and legacy kernels."""

from __future__ import annotations

import re

import pytest

from accelsim.config.registry import load_machine
from accelsim.errors import ConfigError
from accelsim.hw.gpu.gemm import plan_gemm
from accelsim.hw.gpu.kernel import estimate_s


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def gemm_s(m, M, N, K, prec="bf16", batch=1, tiles=None):
    plan = plan_gemm(m, M, N, K, prec, batch=batch, shared_weights=batch == 1, tiles=tiles)
    return plan, sum(estimate_s(k, m) for k in plan.kernels)


def test_batched_small_gemms_are_slower_per_flop_than_one_big_gemm(h200):
    # b512 128^3 has the MACs of one 1024^3 GEMM, but every matrix is read once by a couple
    # of CTAs and the 50 MB sweep stays out of L2: it runs at HBM speed (measured 15.3 us
    # against 5.4 us for 1024^3)
    _, batched = gemm_s(h200, 128, 128, 128, batch=512)
    _, big = gemm_s(h200, 1024, 1024, 1024)
    assert batched > 2.0 * big
    hbm_s = 3 * 512 * 128 * 128 * 2 / h200.memory.hbm.sustained_bytes_per_s
    assert batched > hbm_s


def test_operands_cached_in_both_l2_partitions_halve_the_residency(h200):
    # b256 256x64x256: 42 MB of operands + 8 MB of output. With one copy it would fit the
    # 60 MiB L2; counted twice (both partitions) it streams from HBM
    one = load_machine("h200", {"compute.gemm_l2_operand_copies": 1})
    p2, t2 = gemm_s(h200, 256, 64, 256, batch=256)
    p1, t1 = gemm_s(one, 256, 64, 256, batch=256)
    assert p1.l2_hit == 1.0 and p2.l2_hit < 0.2
    assert t2 > 1.5 * t1


def test_epilogue_stores_wait_for_write_backs_once_the_l2_overflows(h200):
    # same CTA tile (fixed) and waves; only the output's L2 residency differs
    small, _ = gemm_s(h200, 1024, 1024, 128, batch=4, tiles=((128, 256),))
    large, _ = gemm_s(h200, 1024, 1024, 128, batch=64, tiles=((128, 256),))
    assert small.tile == large.tile
    post = [p.kernels[0].groups[0][1].post_s for p in (small, large)]
    assert small.l2_hit == 1.0 and large.l2_hit == 0.0
    assert post[1] > 2.0 * post[0]


@pytest.mark.parametrize(("M", "N", "K", "path", "tiles"), [
    (3071, 3071, 3071, "unaligned", {(128, 128), (256, 128), (128, 256)}),
    (3000, 3000, 3002, "narrow", {(256, 128), (128, 256)}),
    (3072, 3072, 3072, "legacy", {(128, 64), (64, 128), (128, 256), (256, 128)}),
])
def test_fallback_and_legacy_kernels_use_the_library_tiles(h200, M, N, K, path, tiles):
    prec = "int8" if path == "legacy" else "bf16"
    plan, _ = gemm_s(h200, M, N, K, prec)
    assert plan.path == path
    assert tuple(plan.tile[:2]) in tiles


def test_misaligned_n_and_k_are_slower_than_aligned(h200):
    _, aligned = gemm_s(h200, 3000, 3000, 3000)
    _, odd_n = gemm_s(h200, 3000, 3001, 3000)
    _, odd_k = gemm_s(h200, 3000, 3000, 3001)
    _, narrow_k = gemm_s(h200, 3000, 3000, 3002)
    _, odd_m = gemm_s(h200, 3001, 3000, 3000)  # M is no leading dimension
    assert odd_n > 4 * aligned and odd_k > 4 * aligned
    assert aligned < narrow_k < odd_k
    assert odd_m < 1.2 * aligned


def test_a_big_fixed_tile_quantises_waves(h200):
    # 2048 x 2050 x 2048: 256x128 tiles give 144 CTAs on 132 SMs, two rounds; with K = 2050
    # the same tiles give 128 CTAs, one round (measured 105.5 vs 70.1 us)
    p_n, t_n = gemm_s(h200, 2048, 2050, 2048)
    p_k, t_k = gemm_s(h200, 2048, 2048, 2050)
    assert p_n.path == p_k.path == "narrow"
    assert p_n.ctas > h200.sm_count >= p_k.ctas
    assert t_n > 1.3 * t_k


def test_bad_operand_copies_names_file_field_and_value():
    with pytest.raises(ConfigError, match=r"h200\.yaml: compute\.gemm_l2_operand_copies = 0\.5"):
        load_machine("h200", {"compute.gemm_l2_operand_copies": 0.5})


def test_non_persistent_kernels_pay_a_prologue_and_epilogue_per_cta(h200):
    # int8 runs CUTLASS 2.x kernels (one CTA per tile); fp8 runs persistent nvjet kernels
    free = load_machine("h200", {"compute.gemm_nonpersistent_cta_s": 0.0})
    fixed = h200.compute.gemm_nonpersistent_cta_s
    assert fixed > 0
    p8, t8 = gemm_s(h200, 2048, 2048, 2048, "int8")
    _, t8_free = gemm_s(free, 2048, 2048, 2048, "int8")
    rounds = -(-p8.ctas // h200.sm_count)
    assert t8 - t8_free == pytest.approx(rounds * fixed, rel=0.05)
    _, f8 = gemm_s(h200, 2048, 2048, 2048, "fp8")
    _, f8_free = gemm_s(free, 2048, 2048, 2048, "fp8")
    assert f8 == f8_free


def test_fp8_runs_the_scaled_mm_tiles(h200):
    for n in (1536, 3072, 6144):
        plan, _ = gemm_s(h200, n, n, n, "fp8")
        assert tuple(plan.tile[:2]) in {(128, 128), (144, 128), (128, 144)}
    bf16, _ = gemm_s(h200, 6144, 6144, 6144)
    assert tuple(bf16.tile[:2]) not in {(128, 128), (144, 128), (128, 144)}


def test_negative_per_cta_cost_is_rejected():
    with pytest.raises(ConfigError, match=r"compute\.gemm_nonpersistent_cta_s = -1"):
        load_machine("h200", {"compute.gemm_nonpersistent_cta_s": -1})


def _run4_gemms() -> list[dict]:
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "scripts" / "data" / "h200_gemm_rows_run4.json"
    return [r for r in json.loads(data.read_text())["sections"]["gemm_cal"] if "kernels" in r]


def _family_of(kernel_names: list[str]) -> str:
    main = " ".join(n for n in kernel_names if "Memset" not in n and "splitK" not in n)
    for key, fam in ((r"_align1(?!\d)", "unaligned"), (r"_align2(?!\d)", "narrow"),
                     ("i16832gemm_s8", "legacy"), ("nvjet_sm90", "tensor_core")):
        if re.search(key, main):
            return fam
    raise AssertionError(main)


def test_model_runs_the_kernel_family_cublas_launched_on_every_run4_gemm(h200):
    rows = _run4_gemms()
    assert len(rows) == 36
    for r in rows:
        plan = plan_gemm(h200, r["M"], r["N"], r["K"], r["dtype"], batch=r["batch"],
                         shared_weights=r["batch"] == 1)
        assert plan.path == _family_of([k[0] for k in r["kernels"]]), r
