"""Lowering tables (configs/lowering) turn framework ops into the calls each execution mode
makes: eager Hugging Face RMSNorm is eight kernels, a compiler fuses it into one, a CUDA
graph keeps eager's kernels; bad tables are refused naming file, field and value."""

import pytest

from accelsim.config.lowering import load_lowering
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.mapping.gpu_lowering import StreamWork, lower, op_key
from accelsim.workload.nn_ops import Attention, Elementwise, LayerNorm
from accelsim.workload.ops import Gemm

RMS = LayerNorm(name="n", rows=4, cols=4096, rms=True, dtype="bf16")


def _kernels(calls):
    return [c for c in calls if c.work is not None]


def test_eager_rmsnorm_is_eight_kernels_and_compiled_one():
    eager = _kernels(lower([(RMS, 0)], load_lowering("eager")))
    compiled = _kernels(lower([(RMS, 0)], load_lowering("compiled")))
    assert len(eager) == 8 and all(isinstance(c.work, StreamWork) for c in eager)
    assert len(compiled) == 1
    # the fp32 round trip of the eager form moves several times the compiled kernel's bytes
    moved = sum(c.work.read_bytes + c.work.write_bytes for c in eager)
    assert moved > 4 * (compiled[0].work.read_bytes + compiled[0].work.write_bytes)


def test_graph_mode_replays_eagers_kernels_with_one_launch():
    ops = [(Gemm(name="g", m=1, n=4096, k=4096, dtype="bf16"), 0), (RMS, 0)]
    eager, graph = load_lowering("eager"), load_lowering("graph")
    assert graph.submit == "graph" and eager.submit == "per_call"
    assert [c.work for c in lower(ops, graph)] == [c.work for c in lower(ops, eager)]


def test_attention_is_one_sdpa_call_with_its_views():
    att = Attention(name="a", batch=1, heads=32, kv_heads=8, seq_q=1, seq_kv=2048,
                    head_dim=128, dtype="bf16")
    calls = lower([(att, 0)], load_lowering("eager"))
    assert [c.call for c in calls if c.work is not None] == ["sdpa"]
    assert all(c.kernel_class == "attention" for c in calls)


def test_op_keys():
    assert op_key(RMS) == "rmsnorm"
    assert op_key(Elementwise(name="x", rows=1, cols=2, fn="silu")) == "elementwise.silu"
    assert op_key(Gemm(name="g", m=1, n=1, k=1)) == "gemm"


def test_compiled_fuses_silu_into_the_mul():
    silu = Elementwise(name="s", rows=1, cols=14336, fn="silu", dtype="bf16")
    assert lower([(silu, 0)], load_lowering("compiled")) == []
    assert len(lower([(silu, 0)], load_lowering("eager"))) == 1


def test_unknown_mode_and_op_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="unknown execution mode"):
        load_lowering("turbo")
    bad = tmp_path / "bad.yaml"
    bad.write_text("submit: per_call\nops:\n  gemm:\n    - {call: linear, kernel: fast}\n")
    with pytest.raises(ConfigError, match=r"ops\.gemm\[0\]\.kernel.*fast"):
        load_lowering(str(bad))
    empty = tmp_path / "empty.yaml"
    empty.write_text("submit: per_call\nops: {}\n")
    with pytest.raises(UnsupportedError, match="no entry for gemm"):
        lower([(Gemm(name="g", m=1, n=1, k=1), 0)], load_lowering(str(empty)))
