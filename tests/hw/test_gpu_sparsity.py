"""2:4 structured sparsity on the tensor-core GPU model: two of every four weights along K are
kept with a 2-bit index each; the sparse tensor cores run at twice the dense rate (A100,
H100, H200 datasheets) and execute half the MACs; the weight operand moves its kept values
plus the metadata. A V100 has no sparse tensor cores and refuses."""

from __future__ import annotations

import json

import pytest

from accelsim.api.gpu import simulate_op
from accelsim.config.registry import load_machine
from accelsim.errors import UnsupportedError
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.gemm import plan_gemm
from accelsim.hw.gpu.kernel import estimate_s
from accelsim.hw.gpu.sparsity import Pattern, pattern, sparse_peak_flops
from accelsim.workload.ops import Conv2d, Gemm


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def _time(m, op, sparsity=None, **kw) -> float:
    return sum(estimate_s(k, m) for k in plan_op(m, op, sparsity=sparsity, **kw).kernels)


def _hbm(m, op, sparsity=None, **kw) -> float:
    return sum(k.hbm_bytes for k in plan_op(m, op, sparsity=sparsity, **kw).kernels)


def test_pattern_2_4_keeps_half_with_a_4_bit_tag_per_block():
    p = pattern("2:4")
    assert p.density == 0.5
    assert p.index_bits == 2 and p.metadata_bits_per_block == 4
    # fp16: 2 x 16 + 4 = 36 bits per block of 4 instead of 64
    assert p.value_fraction("fp16") == 0.5
    assert p.weight_fraction("fp16") == pytest.approx(36 / 64)
    # int8: metadata weighs more against narrower values: 2 x 8 + 4 = 20 of 32 bits
    assert p.weight_fraction("int8") == pytest.approx(20 / 32)
    values, meta = p.weight_bytes(4096, 1024, "fp16")
    assert values == 4096 * 1024 * 2 / 2 and meta == 4096 / 4 * 1024 * 4 / 8


def test_a_pattern_needs_fewer_kept_values_than_its_block():
    with pytest.raises(ValueError):
        Pattern(4, 4)
    assert Pattern(1, 8).index_bits == 3


@pytest.mark.parametrize("name", ["a100", "h100", "h200"])
def test_sparse_peak_is_twice_the_dense_datasheet_peak(name):
    m = load_machine(name)
    for prec in ("fp16", "bf16", "tf32", "int8"):
        assert sparse_peak_flops(m, prec, "2:4") == pytest.approx(2 * m.peak_flops(prec))
    assert sparse_peak_flops(m, "fp16", None) == m.peak_flops("fp16")


def test_h100_fp8_sparse_peak_is_the_datasheet_3958_tflops():
    assert sparse_peak_flops(load_machine("h100"), "fp8", "2:4") / 1e12 == pytest.approx(3957.8,
                                                                                        rel=1e-3)


def test_large_gemm_runs_up_to_twice_as_fast_and_never_faster(h200):
    g = Gemm(name="g", m=8192, n=8192, k=8192, dtype="fp16")
    speedup = _time(h200, g) / _time(h200, g, "2:4")
    assert 1.5 < speedup <= 2.0


def test_a100_compute_bound_gemm_gets_almost_the_full_2x():
    a100 = load_machine("a100")
    g = Gemm(name="g", m=8192, n=8192, k=8192, dtype="bf16")
    assert _time(a100, g) / _time(a100, g, "2:4") == pytest.approx(2.0, rel=0.05)


def test_decode_gemv_moves_the_compressed_weights_from_hbm(h200):
    """Batch 1 in a decode step (``cold_cache``: other layers' traffic between its calls): the
    weights are nearly all the traffic, so HBM bytes fall to 36/64 of dense."""
    g = Gemm(name="gemv", m=1, n=8192, k=8192, dtype="fp16")
    step = {"cold_cache": True}
    assert _hbm(h200, g, "2:4", **step) / _hbm(h200, g, **step) \
        == pytest.approx(36 / 64, rel=0.01)
    # memory-bound, so the time falls by about the same factor, not by the 2x peak
    assert _time(h200, g, "2:4", **step) / _time(h200, g, **step) \
        == pytest.approx(36 / 64, rel=0.1)


def test_simulate_op_reports_dense_equivalent_flops_and_executed_macs(h200):
    g = Gemm(name="g", m=4096, n=4096, k=4096, dtype="bf16")
    dense = simulate_op(h200, g)
    sparse = simulate_op(h200, g, sparsity="2:4")
    assert dense["sparsity"] == "dense" and sparse["sparsity"] == "2:4"
    assert sparse["flops"] == dense["flops"]
    assert sparse["macs"] == g.macs and sparse["macs_executed"] == g.macs / 2
    assert dense["macs_executed"] == g.macs
    assert sparse["peak_tflops"] == pytest.approx(2 * dense["peak_tflops"])
    assert sparse["tflops"] <= sparse["peak_tflops"]
    # compulsory bytes: the weight matrix counted compressed
    w = 4096 * 4096 * 2
    assert dense["bytes"] - sparse["bytes"] == pytest.approx(w * (1 - 36 / 64))
    assert sparse["density"] == 0.5 and sparse["weight_fraction"] == pytest.approx(36 / 64)


def test_dense_plans_are_unchanged_by_the_option(h200):
    g = Gemm(name="g", m=1000, n=3000, k=2048, dtype="bf16")
    a = plan_op(h200, g)
    b = plan_op(h200, g, sparsity="dense")
    assert [estimate_s(k, h200) for k in a.kernels] == [estimate_s(k, h200) for k in b.kernels]
    assert "sparsity" not in a.explain


def test_v100_has_no_sparse_tensor_cores():
    with pytest.raises(UnsupportedError, match="v100 has no sparse tensor cores"):
        simulate_op("v100", Gemm(name="g", m=256, n=256, k=256, dtype="fp16"), sparsity="2:4")


@pytest.mark.parametrize("kwargs, needle", [
    ({"precision": "fp32"}, "CUDA cores"),
    ({"k": 4100}, "multiples of 8 fp16"),
    ({"sparsity": "1:4"}, "not modelled"),
])
def test_unsupported_sparse_gemms_are_refused(h200, kwargs, needle):
    dims = {"M": 256, "N": 256, "K": kwargs.get("k", 256)}
    with pytest.raises(UnsupportedError, match=needle):
        plan_gemm(h200, dims["M"], dims["N"], dims["K"], kwargs.get("precision", "fp16"),
                  sparsity=kwargs.get("sparsity", "2:4"))


def test_sparsity_is_for_gemms_only(h200):
    conv = Conv2d(name="c", n=1, c=64, h=28, w=28, k=64, r=3, s=3, pad=1, dtype="fp16")
    with pytest.raises(UnsupportedError, match="GEMMs only"):
        plan_op(h200, conv, sparsity="2:4")


def test_cli_sparsity_option(capsys):
    from accelsim.cli import build_parser

    args = build_parser().parse_args(["op", "a100", "gemm", "--m", "2048", "--n", "2048",
                                      "--k", "2048", "--dtype", "fp16", "--sparsity", "2:4",
                                      "--json"])
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["sparsity"] == "2:4" and doc["macs_executed"] == 2048 ** 3 / 2
