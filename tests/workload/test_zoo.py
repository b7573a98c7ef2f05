"""The model zoo: every model builds from its name, carries FLOPs and bytes per op, has the
published parameter count, scales with its parameters, and tags ops by component."""

from __future__ import annotations

import pytest

from accelsim.errors import WorkloadError
from accelsim.workload.graph import COMPONENTS, breakdown, op_bytes
from accelsim.workload.models import zoo
from accelsim.workload.nn_ops import Attention
from accelsim.workload.ops import Conv2d, Gemm
from accelsim.workload.readers import load_workload

PUBLISHED_PARAMS = {
    # weights only (biases, BN/LN parameters aside); the published total within 1 %
    "resnet50": 25.56e6,      # torchvision
    "mobilenet_v2": 3.50e6,   # torchvision
    "bert_base": 110e6,       # Devlin et al. 2019 (incl. pooler 0.6M)
    "gpt2_small": 124e6,      # Radford et al. 2019 / HF
    "gpt2_xl": 1.558e9,       # HF gpt2-xl
    "llama3_8b": 8.03e9,      # Meta Llama 3 model card
    "llama3_70b": 70.6e9,     # Meta Llama 3 model card
}


@pytest.mark.parametrize("name", zoo.names())
def test_every_zoo_model_builds_and_every_op_has_flops_and_bytes(name: str) -> None:
    g = zoo.get(name)
    assert len(g) > 0
    for node in g.nodes:
        assert node.component in COMPONENTS
        assert getattr(node.op, "flops", None) is not None
        assert op_bytes(node.op) > 0
        assert node.op.dtype == g.params["dtype"]
    assert g.to_workload().macs == g.macs > 0


@pytest.mark.parametrize("name, expected", sorted(PUBLISHED_PARAMS.items()))
def test_parameter_counts_match_the_published_models(name: str, expected: float) -> None:
    assert zoo.get(name).parameter_count() == pytest.approx(expected, rel=0.012)


def test_zoo_cnns_have_the_same_convs_as_the_workload_files() -> None:
    for name in ("resnet50", "mobilenet_v2"):
        zoo_gemms = [op.lower() for op in zoo.get(name).ops if isinstance(op, (Gemm, Conv2d))]
        file_gemms = [op.lower() for op in load_workload(f"{name}_convs").ops]
        assert zoo_gemms == file_gemms


def test_bert_base_layer_gemms_equal_the_encoder_file() -> None:
    g = zoo.get("bert_base", seq=512, batch=1)
    layer0 = [n.op for n in g.nodes if n.layer == 0 and isinstance(n.op, Gemm)]
    mine = sorted((op.lower().m, op.lower().n, op.lower().k, op.lower().repeat) for op in layer0)
    ref = sorted((op.lower().m, op.lower().n, op.lower().k, op.lower().repeat)
                 for op in load_workload("bert_base_encoder").ops)
    assert mine == ref


def test_decode_flops_are_two_per_parameter_per_token_plus_attention() -> None:
    """A decode step does ~2 FLOP per weight per token; the rest is attention over the cache."""
    g = zoo.get("llama3_8b_decode", batch=1, context=1)
    embed = 128256 * 4096  # the embedding table is gathered, not multiplied
    assert g.flops == pytest.approx(2 * (g.parameter_count() - embed), rel=0.01)


def test_llama_uses_grouped_query_attention_and_swiglu() -> None:
    g = zoo.get("llama3_8b_decode", batch=4, context=1024)
    qk = g.node("layers.0.qk").op
    assert qk.batch == 4 * 8 and qk.m == 4 * 1 and qk.n == 1024 and qk.k == 128
    names = {n.name for n in g.nodes if n.layer == 0}
    assert {"layers.0.ffn.gate_proj", "layers.0.ffn.up_proj", "layers.0.ffn.silu",
            "layers.0.ffn.mul", "layers.0.ffn.down_proj"} <= names
    assert g.node("layers.0.attn_norm").op.rms


def test_kv_cache_read_grows_linearly_with_context() -> None:
    from accelsim.workload.passes.memory import kv_cache_bytes

    sizes = [kv_cache_bytes(zoo.get("llama3_8b_decode", context=c)) for c in (1024, 2048, 4096)]
    # 2 (K, V) x 32 layers x 8 KV heads x 128 x context x 2 B
    assert sizes == [2 * 32 * 8 * 128 * c * 2 for c in (1024, 2048, 4096)]


def test_prefill_cost_grows_with_sequence_and_batch() -> None:
    a = zoo.get("gpt2_small", seq=256)
    b = zoo.get("gpt2_small", seq=512)
    c = zoo.get("gpt2_small", seq=256, batch=2)
    assert 2 * a.flops < b.flops < 2.2 * a.flops      # linear + quadratic attention
    assert c.flops == pytest.approx(2 * a.flops, rel=0.01)


def test_precision_sets_bytes_not_flops() -> None:
    a, b = zoo.get("bert_base", dtype="fp32"), zoo.get("bert_base", dtype="fp16")
    assert a.flops == b.flops
    assert a.bytes() == pytest.approx(2 * b.bytes())


def test_breakdown_is_one_call_and_shares_sum_to_one() -> None:
    df = breakdown(zoo.get("bert_base"))
    assert list(df.index) == ["attention", "ffn", "norm", "embedding", "other"]
    assert df["flop_share"].sum() == pytest.approx(1.0)
    assert df["byte_share"].sum() == pytest.approx(1.0)
    assert df.loc["ffn", "flops"] > df.loc["attention", "flops"] > df.loc["norm", "flops"]


def test_breakdown_takes_a_time_function() -> None:
    df = breakdown(zoo.get("gpt2_small_decode"), time_fn=lambda op: 1e-6)
    assert df["time_share"].sum() == pytest.approx(1.0)
    assert df["time_s"].sum() == pytest.approx(1e-6 * len(zoo.get("gpt2_small_decode")))


def test_dlrm_lookups_are_embedding_ops_that_move_rows_not_tables() -> None:
    g = zoo.get("dlrm", batch=1024, tables=8, rows=10_000_000, dim=64)
    embeds = [n.op for n in g.nodes if n.component == "embedding"]
    assert len(embeds) == 8
    assert op_bytes(embeds[0]) == 2 * 1024 * 64 * 4  # gathered rows in and out, fp32
    assert g.parameter_count() > 8 * 10_000_000 * 64


def test_edges_go_from_producer_to_consumer_in_execution_order() -> None:
    g = zoo.get("gpt2_small_decode")
    index = {n.name: i for i, n in enumerate(g.nodes)}
    edges = g.edges()
    assert ("layers.0.qkv_proj", "layers.0.qk", "layers.0.qkv_proj") in edges  # GPT-2's c_attn
    assert all(index[p] < index[c] for p, c, _ in edges)


def test_a_typo_in_a_zoo_name_suggests_the_closest() -> None:
    with pytest.raises(WorkloadError, match="did you mean 'llama3_8b_decode'"):
        zoo.get("llama3_8b_decod")


def test_an_unknown_parameter_or_bad_value_is_a_workload_error() -> None:
    with pytest.raises(WorkloadError, match="did you mean 'batch'"):
        zoo.get("gpt2_small", bach=2)
    with pytest.raises(WorkloadError, match="dtype"):
        zoo.get("gpt2_small", dtype="fp12")
    with pytest.raises(WorkloadError, match="exceeds"):
        zoo.get("gpt2_small", seq=4096)
    with pytest.raises(WorkloadError, match="batch"):
        zoo.get("resnet50", batch=0)


def test_spec_strings_carry_parameters() -> None:
    g = zoo.from_spec("llama3_8b_decode:batch=8,context=4096,dtype=fp8")
    assert (g.params["batch"], g.params["context"], g.params["dtype"]) == (8, 4096, "fp8")
    assert zoo.is_zoo_spec("gpt2_xl") and zoo.is_zoo_spec("gpt2_xl:batch=2")
    assert not zoo.is_zoo_spec("workloads/resnet50_convs.yaml")
    with pytest.raises(WorkloadError, match="key=value"):
        zoo.parse_spec("gpt2_xl:batch")
    w = zoo.workload("bert_base:seq=128")
    assert any(isinstance(op, Gemm) and op.m == 128 for op in w.ops)


def test_fused_attention_of_a_causal_prefill_skips_the_masked_half() -> None:
    from accelsim.workload.passes import fuse

    fused = fuse(zoo.get("gpt2_small", seq=1024)).graph
    attn = [n.op for n in fused.nodes if isinstance(n.op, Attention)]
    assert len(attn) == 12 and all(a.causal for a in attn)
    assert attn[0].score_fraction == pytest.approx((1024 + 1) / (2 * 1024))
