"""Mixture-of-experts models: the MoE layer's ops, FLOP counted by hand, the distinct-experts
formula, every expert's weights in the memory check, the zoo entries, serving steps."""

from __future__ import annotations

import dataclasses
import math

import pytest

from accelsim.config.registry import load_machine
from accelsim.devices.gpu_model import framework_ops, run_gpu_model
from accelsim.devices.memory_check import check_memory
from accelsim.workload.models import zoo
from accelsim.workload.models.transformer import (
    LLAMA3_8B,
    MIXTRAL_8X7B,
    QWEN15_MOE_A27B,
    TransformerSpec,
    build_transformer,
)
from accelsim.workload.models.transformer_program import is_llama_family
from accelsim.workload.ops import Gemm, GroupedGemm, experts_touched
from accelsim.workload.parallel import PrefillChunk, StepBatch, step_graph

D, H, E, K, FE, SF, V = 64, 4, 8, 2, 48, 96, 100
TINY = TransformerSpec(name="tiny_moe", layers=2, hidden=D, heads=H, ffn=FE, vocab=V,
                       norm="rmsnorm", ffn_act="swiglu", rotary=True, experts=E, top_k=K,
                       expert_ffn=FE)
SHARED = dataclasses.replace(TINY, name="tiny_shared", shared_ffn=SF, shared_gate=True)


def _moe_nodes(graph, layer: int = 0) -> dict:
    return {n.name.rsplit(".", 1)[-1]: n for n in graph.nodes
            if n.layer == layer and ".moe." in n.name}


def test_moe_layer_ops_and_flops_by_hand():
    t = 16  # prefill of 16 tokens
    g = build_transformer(TINY, mode="prefill", batch=2, seq=8)
    ops = {k: n.op for k, n in _moe_nodes(g).items()}
    assert list(ops) == ["router", "topk", "experts_gate_up", "experts_silu", "experts_mul",
                         "experts_down", "combine"]
    assert ops["router"].flops == 2 * t * D * E
    # each token through its k experts: gate+up (d -> 2 fe) and down (fe -> d), 1 MAC = 2 FLOP
    assert ops["experts_gate_up"].flops == 2 * t * K * D * 2 * FE
    assert ops["experts_down"].flops == 2 * t * K * FE * D
    assert ops["experts_silu"].rows == ops["experts_mul"].rows == t * K
    assert (ops["topk"].rows, ops["topk"].cols) == (t, E)
    # combine: the k outputs of each token summed, (k - 1) hidden-wide adds
    assert (ops["combine"].rows, ops["combine"].cols, ops["combine"].fn) == (t, D, "add")
    # a dense FFN of the same width does one expert's work per token: the MoE does k
    dense = build_transformer(dataclasses.replace(TINY, experts=0, top_k=0), mode="prefill",
                              batch=2, seq=8)
    ffn = sum(n.op.flops for n in dense.nodes if n.layer == 0 and isinstance(n.op, Gemm)
              and ".ffn." in n.name)
    assert ops["experts_gate_up"].flops + ops["experts_down"].flops == K * ffn


def test_shared_experts_and_their_gate():
    t = 4
    ops = {k: n.op for k, n in _moe_nodes(build_transformer(SHARED, mode="decode", batch=t,
                                                            context=32)).items()}
    assert ops["shared_gate_proj"].flops == ops["shared_up_proj"].flops == 2 * t * D * SF
    assert ops["shared_down"].flops == 2 * t * SF * D
    assert (ops["shared_expert_gate"].n, ops["shared_scale"].fn) == (1, "mul")
    assert ops["combine"].cols == K * D  # k routed outputs + the shared one: k adds


def test_distinct_experts_touched_limits():
    assert experts_touched(1, 8, 2) == pytest.approx(2)      # one token: its k experts
    assert experts_touched(10_000, 8, 2) == pytest.approx(8)  # many: all of them
    assert experts_touched(8, 8, 2) == pytest.approx(8 * (1 - 0.75 ** 8))
    one = GroupedGemm.routed(name="g", rows=2, n=4, k=4, experts=8, top_k=2, routed_tokens=1)
    assert (one.batch, one.m) == (2, 1)
    many = GroupedGemm.routed(name="g", rows=2 * 4096, n=4, k=4, experts=8, top_k=2,
                              routed_tokens=4096)
    assert (many.batch, many.m) == (8, 1024)
    with pytest.raises(ValueError):
        experts_touched(1, 8, 9)


def test_decode_reads_the_touched_experts_weights_only():
    e_bytes = 2 * 3 * MIXTRAL_8X7B.hidden * MIXTRAL_8X7B.ef  # one expert's MLP, bf16
    for batch, touched in ((1, 2), (4, 5), (64, 8)):  # 8 (1 - 0.75^4) = 5.47
        g = build_transformer(MIXTRAL_8X7B, mode="decode", batch=batch, context=512)
        gemms = [n.op for n in g.nodes if isinstance(n.op, GroupedGemm) and n.layer == 0]
        assert {op.batch for op in gemms} == {touched}
        assert touched == round(experts_touched(batch, 8, 2))
        read = sum(op.tensor_elements()["weight"] for op in gemms) * 2
        assert read == touched * e_bytes


def test_memory_check_counts_every_expert():
    h200 = load_machine("h200")
    g = zoo.get("mixtral_8x7b_decode", batch=1, context=512)
    d, f, s = MIXTRAL_8X7B.hidden, MIXTRAL_8X7B.ef, MIXTRAL_8X7B
    attn = d * s.heads * s.dh * 2 + 2 * d * s.kv * s.dh
    per_layer = attn + 8 * 3 * d * f + d * 8 + 2 * d  # experts, router, two norms
    params = s.layers * per_layer + 2 * s.vocab * d + d
    assert g.parameter_count() == params
    assert 46.6e9 < params < 46.8e9  # Mixtral 8x7B: 46.7 B parameters
    _, ops, _ = framework_ops(g)
    mem = check_memory(h200, g, ops, graph=g)
    assert mem.weights_bytes == params * 2
    run = run_gpu_model(h200, g, exec_mode="graph")
    assert run.totals["memory"]["weights_bytes"] == params * 2
    # a step reads two experts per layer (batch 1), not all eight
    assert run.totals["dram_bytes"] < params * 2 / 3


def test_moe_models_lower_op_by_op_and_dense_ones_keep_their_program():
    assert not is_llama_family(MIXTRAL_8X7B) and not is_llama_family(QWEN15_MOE_A27B)
    assert is_llama_family(LLAMA3_8B)


def test_zoo_entries_take_the_llama_parameters():
    for name in ("mixtral_8x7b", "qwen1_5_moe_a2_7b"):
        for suffix in ("", "_prefill", "_decode"):
            assert zoo.parameters(name + suffix) == zoo.parameters("llama3_8b" + suffix)
    g = zoo.from_spec("qwen1_5_moe_a2_7b_decode:batch=4,context=256")
    assert 14.2e9 < g.parameter_count() < 14.4e9  # Qwen1.5-MoE-A2.7B: 14.3 B parameters
    assert zoo.SPECS["mixtral_8x7b_decode"] is MIXTRAL_8X7B


@pytest.mark.parametrize("hw", ["tpu_v4", "spr_cpu"])
def test_other_machine_kinds_run_a_moe_model(hw):
    from accelsim.api import simulate

    r = simulate(hw, "qwen1_5_moe_a2_7b_decode:batch=2,context=128")
    assert r.totals["flops"] > 0


def test_a_serving_step_routes_all_its_tokens_through_one_grouped_gemm():
    batch = StepBatch(decode=6, decode_context=6 * 100,
                      prefill=(PrefillChunk(32), PrefillChunk(16, cached=8)))
    g = step_graph(TINY, batch)
    gemms = [n.op for n in g.nodes if isinstance(n.op, GroupedGemm) and n.layer == 0]
    assert len(gemms) == 2  # gate/up and down, once over the iteration's 54 tokens
    up = next(op for op in gemms if op.name.endswith("experts_gate_up"))
    assert (up.rows, up.routed_tokens) == (54 * K, 54)
    assert up.batch == min(E, round(experts_touched(54, E, K)))
    assert up.m == math.ceil(54 * K / up.batch)
    topk = [n for n in g.nodes if n.name.endswith(".topk") and n.layer == 0]
    assert len(topk) == 1 and topk[0].op.rows == 54
    weights = [t for t in g.tensors if t.startswith("layers.0.moe.experts_")]
    assert sorted(weights) == sorted({"layers.0.moe.experts_gate_up.weight",
                                      "layers.0.moe.experts_down.weight",
                                      "layers.0.moe.experts_gate_up", "layers.0.moe.experts_down",
                                      "layers.0.moe.experts_silu", "layers.0.moe.experts_mul"})


def test_bad_moe_specs_are_refused():
    with pytest.raises(ValueError, match="top_k"):
        dataclasses.replace(TINY, top_k=9)
    with pytest.raises(ValueError, match="expert_ranks"):
        dataclasses.replace(TINY, expert_ranks=3)
