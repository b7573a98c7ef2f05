"""The seed chapter's fusion, memory-planning and Transformer-structure cases, reproduced
through the zoo and the graph passes (:mod:`accelsim.workload.passes`).

Expected values and tolerances come from the case file (accelsim/data/seed_cases.json, a copy
of shared/reference/seed_cases.json); the numbers under test are computed by the passes.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from accelsim.validation import suite
from accelsim.validation.seed_cases_other import relu_bn_affine
from accelsim.workload.graph import breakdown, op_bytes
from accelsim.workload.models import zoo
from accelsim.workload.passes import fuse
from accelsim.workload.passes.memory import plan_memory
from accelsim.workload.passes.training import training_memory

CASES = {c["id"]: c for c in json.loads(
    (Path(__file__).resolve().parents[2] / "accelsim" / "data" / "seed_cases.json").read_text())}
MB = 1e6


def case(cid: str) -> tuple[dict, dict, float]:
    c = CASES[cid]
    return c["inputs"], c["expected"], c["tolerance_rel"] or 0.01


def test_t19_t20_three_pointwise_kernels_fused_move_a_third_of_the_bytes() -> None:
    """ReLU -> BN(frozen) -> affine on 1024^2 fp32: 25.2 MB unfused, 8.4 MB fused; four
    tensors (16.8 MB) without buffer reuse, two (8.4 MB) with it. The numbers are the seed
    case's own (``accelsim validate``'s T19-T20); on its graph, the structure they rest on:
    three kernels fuse into one and buffer reuse keeps two tensors live."""
    inp, _, _ = case("T19-T20")
    r = suite.run_case("T19-T20")
    assert r.passed, [c for c in r.checks if not c.passed] or r.error
    assert {"tensor_MB", "footprint_naive_MB", "traffic_naive_MB", "traffic_fused_MB",
            "traffic_reduction_x"} <= {c.quantity for c in r.checks}
    graph = relu_bn_affine(inp)
    fused = fuse(graph)
    assert fused.kernels_before == inp["kernels"] and fused.kernels_after == 1
    plan = plan_memory(graph)
    assert plan.pool_bytes == plan.peak_bytes == 2 * graph.tensors["x"].bytes


def test_fa_traffic_fused_attention_never_writes_the_score_matrix() -> None:
    """BERT-base layer at batch 32, seq 512, fp16: the softmax alone moves 402.7 MB of score
    matrix; the fused kernel also skips the QK^T write and the AV read (the case's note)."""
    inp, exp, tol = case("FA-TRAFFIC")
    g = zoo.get("bert_base", batch=inp["batch"], seq=inp["seq"], dtype="fp16")
    scores = g.tensors["layers.0.qk"].bytes
    assert scores / MB == pytest.approx(exp["score_tensor_MB_derived"], rel=tol)
    softmax = g.node("layers.0.softmax").op
    assert op_bytes(softmax) / MB == pytest.approx(exp["softmax_traffic_avoided_MB_derived"],
                                                   rel=tol)
    r = fuse(g, horizontal=False, epilogues=False)
    saved = r.saved.set_index("kernel").loc["layers.0.attention", "bytes_saved"]
    assert saved == 2 * op_bytes(softmax) == 4 * scores
    assert r.graph.flops == g.flops  # exp["FLOPs_change"] == "none"
    assert exp["FLOPs_change"].startswith("none")


def test_nm1_4a_fused_qkv_projection_traffic() -> None:
    """Input read once, three weight matrices, three outputs: 104.2 MB, 58.0 GFLOP."""
    inp, exp, tol = case("NM1.4a")
    g = zoo.get("bert_base", batch=inp["batch"], seq=inp["seq"], dtype="fp16")
    r = fuse(g, attention=False, epilogues=False)
    qkv = r.graph.node("layers.0.q_proj").op
    assert len(qkv.members) == inp["n_proj"]
    assert qkv.flops / 1e9 == pytest.approx(exp["FLOPs_G"], rel=tol)
    assert op_bytes(qkv) / MB == pytest.approx(exp["bytes_MB"], rel=tol)
    assert qkv.flops / op_bytes(qkv) == pytest.approx(exp["I_FLOP_per_B"], rel=tol)


def test_nm1_7_standalone_layernorm_bytes_and_flops() -> None:
    inp, exp, tol = case("NM1.7")
    g = zoo.get("bert_base", batch=inp["batch"], seq=inp["seq"], dtype="fp16")
    ln = g.node("layers.0.attn_norm").op
    assert ln.flops / MB == pytest.approx(exp["FLOPs_M"], rel=tol)
    assert op_bytes(ln) / MB == pytest.approx(exp["total_MB"], rel=tol)
    assert ln.flops / op_bytes(ln) == pytest.approx(exp["I_FLOP_per_B"], rel=tol)


def test_nm1_9_gpt2_xl_decode_streams_every_weight_once_per_token() -> None:
    """Batch-1 decode does one FLOP per weight byte (fp16). The text rounds GPT-2 XL to
    1.5 B parameters (3 GB); the model has 1.557 B, so its 3.11 GB is 4 % above the text."""
    _, exp, tol = case("NM1.9")
    g = zoo.get("gpt2_xl_decode", batch=1, context=1, dtype="fp16")
    flops, traffic = g.flops, g.bytes()
    assert flops / traffic == pytest.approx(exp["I_FLOP_per_B"], rel=tol)
    assert traffic / 1e9 == pytest.approx(exp["bytes_per_token_GB"], rel=0.04)
    assert flops / 1e9 == pytest.approx(exp["FLOPs_per_token_G"], rel=0.04)


def test_s002_ckpt_checkpointing_takes_activation_memory_from_n_to_sqrt_n() -> None:
    """Same transformer at 12 and 48 layers (4x): activations grow 4x stored, ~2x with
    sqrt(n) checkpointing."""
    from accelsim.workload.models.transformer import GPT2_SMALL, build_transformer

    def acts(layers: int, ckpt: str | None) -> float:
        g = build_transformer(replace(GPT2_SMALL, layers=layers), batch=1, seq=256,
                              mode="prefill", dtype="bf16")
        m = training_memory(g, checkpoint=ckpt)
        return m.activations_bytes

    assert acts(48, None) / acts(12, None) == pytest.approx(4, rel=0.05)
    assert acts(48, "sqrt") / acts(12, "sqrt") == pytest.approx(2, rel=0.15)


def test_s004_tfmr_bert_base_flops_split_between_attention_and_ffn() -> None:
    """Attention 30-40 %, FFN 50-60 % of a BERT-base layer's FLOPs at seq 512 (the bands'
    edges: 40.0 % and 59.9 %); norms are a sliver of the FLOPs (0.1 %) but 4.6 % of the bytes,
    which is why their time share (5-10 %) exceeds their FLOP share."""
    _, exp, _ = case("S004-TFMR")
    df = breakdown(zoo.get("bert_base", seq=512))
    lo, hi = exp["attention_share"]
    assert lo * 0.99 <= df.loc["attention", "flop_share"] <= hi * 1.01
    lo, hi = exp["ffn_share"]
    assert lo * 0.99 <= df.loc["ffn", "flop_share"] <= hi * 1.01
    assert df.loc["norm", "flop_share"] < 0.01 < df.loc["norm", "byte_share"]
