"""The CPU model: a roofline with caches. Peaks follow the datasheet arithmetic; GEMMs are
compute-bound when large and square, memory-bound when skinny; streaming ops are DRAM-bound;
the matrix unit (AMX) beats the SIMD units where it runs the precision."""

import math

import pytest

from accelsim.config.cpu import CpuMachine
from accelsim.config.registry import load_machine, machine_from_dict
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.hw.cpu import block_edge, cost_actions, op_cost, simd_lanes
from accelsim.workload.nn_ops import Attention, LayerNorm, Softmax
from accelsim.workload.ops import Conv2d, Gemm


@pytest.fixture(scope="module")
def spr() -> CpuMachine:
    import accelsim.config.cpu  # noqa: F401

    return load_machine("spr_cpu")


def test_peaks_follow_cores_times_rate_times_clock(spr):
    # AMX: 512 bf16 MACs/cycle/core x 2 FLOP x 56 cores x 2.0 GHz
    assert spr.peak_flops("bf16") == pytest.approx(512 * 2 * 56 * 2.0e9)
    # fp32 runs on AVX-512: 2 FMA pipes x 16 lanes x 2 FLOP
    assert spr.peak_flops("fp32") == pytest.approx(2 * 16 * 2 * 56 * 2.0e9)
    assert spr.memory.dram.bandwidth_bytes_per_s == pytest.approx(8 * 38.4e9)


def test_simd_lanes_are_register_bits_over_element_bits(spr):
    """AVX-512: 16 fp32, 32 bf16/fp16, 64 int8 lanes; an fp32 GEMM on the SIMD engine issues
    one FMA instruction per 16 MACs (16x fewer instructions to fetch and decode)."""
    assert [simd_lanes(spr, p) for p in ("fp32", "bf16", "fp16", "int8")] == [16, 32, 32, 64]
    c = op_cost(spr, Gemm(name="g", m=64, n=64, k=64, dtype="fp32"))
    assert c.engine == "simd" and c.macs / c.instructions == simd_lanes(spr, "fp32")


def test_large_square_gemm_is_compute_bound_below_peak(spr):
    c = op_cost(spr, Gemm(name="g", m=4096, n=4096, k=4096, dtype="bf16"))
    assert c.engine == "matrix"
    assert c.bound == "compute"
    achieved = c.flops / c.time_s
    assert 0.4 * spr.peak_flops("bf16") < achieved < spr.peak_flops("bf16")


def test_amx_beats_avx512_on_the_same_gemm(spr):
    bf16 = op_cost(spr, Gemm(name="g", m=2048, n=2048, k=2048, dtype="bf16"))
    fp32 = op_cost(spr, Gemm(name="g", m=2048, n=2048, k=2048, dtype="fp32"))
    assert fp32.engine == "simd"
    assert fp32.time_s > 4 * bf16.time_s


def test_gemv_is_memory_bound_and_moves_the_weights_once(spr):
    c = op_cost(spr, Gemm(name="gemv", m=1, n=8192, k=8192, dtype="bf16"))
    assert c.bound == "dram"
    assert c.dram_bytes >= 8192 * 8192 * 2
    assert c.dram_bytes < 1.01 * (8192 * 8192 * 2 + 2 * 8192 * 2)


def test_layernorm_streams_every_element_once_at_dram_speed(spr):
    op = LayerNorm(name="ln", rows=4096, cols=4096, dtype="bf16")
    c = op_cost(spr, op)
    moved = sum(op.tensor_elements().values()) * 2
    assert c.dram_bytes == pytest.approx(moved)
    assert c.bound == "dram"
    assert c.time_s == pytest.approx(moved / spr.memory.dram.sustained_bytes_per_s
                                     + c.overhead_s)


def test_small_gemm_leaves_cores_idle(spr):
    small = op_cost(spr, Gemm(name="g", m=64, n=64, k=4096, dtype="bf16"))
    assert small.cores_used < spr.compute.cores


def test_conv_reads_its_input_once_not_its_im2col_copy(spr):
    conv = Conv2d(name="c", n=8, c=64, h=56, w=56, k=64, r=3, s=3, pad=1, dtype="bf16")
    c = op_cost(spr, conv)
    el = conv.tensor_elements()
    assert c.dram_bytes <= 1.5 * sum(el.values()) * 2


def test_attention_is_its_pieces_in_sequence(spr):
    att = Attention(name="a", batch=1, heads=8, seq_q=512, seq_kv=512, head_dim=64, dtype="bf16")
    c = op_cost(spr, att)
    assert len(c.pieces) == 3
    assert c.time_s == pytest.approx(sum(p.time_s for p in c.pieces))
    assert c.flops == att.flops


def test_larger_cache_gives_larger_blocks(spr):
    l2 = spr.memory.l2
    assert block_edge(l2, 1, 2, 4) > block_edge(spr.memory.l1, 1, 2, 4)


def test_action_records_carry_macs_and_dram_bits(spr):
    c = op_cost(spr, Gemm(name="g", m=512, n=512, k=512, dtype="bf16"))
    recs = cost_actions(spr, c)
    macs = sum(r["count"] for r in recs if r["level"] == "mac" and r["direction"] == "compute")
    dram_bits = sum(r["bits"] for r in recs if r["level"] == "dram")
    assert macs == 512 ** 3
    assert dram_bits == pytest.approx(c.dram_bytes * 8)


def test_unsupported_precision_is_named(spr):
    with pytest.raises(UnsupportedError, match="fp8"):
        op_cost(spr, Gemm(name="g", m=64, n=64, k=64, dtype="fp8"))


def test_bad_config_names_the_field():
    import accelsim.config.cpu  # noqa: F401

    data = {"kind": "cpu", "name": "x", "default_precision": "fp32",
            "compute": {"cores": -4, "clock_hz": "2 GHz"},
            "memory": {"l1": {"capacity_bytes": "48 KiB", "bytes_per_cycle_per_core": 128},
                       "l2": {"capacity_bytes": "2 MiB", "bytes_per_cycle_per_core": 64},
                       "l3": {"capacity_bytes": "105 MB", "bytes_per_cycle_per_core": 16},
                       "dram": {"channels": 8, "channel_bytes_per_s": "38.4 GB/s"}}}
    with pytest.raises(ConfigError, match=r"compute\.cores = -4"):
        machine_from_dict(data, file="x.yaml")
    data["compute"]["cores"] = 4
    m = machine_from_dict(data, file="x.yaml")
    assert not math.isnan(op_cost(m, Softmax(name="s", rows=4, cols=4, dtype="fp32")).time_s)
