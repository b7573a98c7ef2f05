"""Operator fusion: which ops fuse, what traffic it saves, and that it never changes the work
(except a causal fused attention skipping masked scores)."""

from __future__ import annotations

import pytest

from accelsim.workload.graph import GraphBuilder, op_bytes
from accelsim.workload.models import zoo
from accelsim.workload.nn_ops import Attention, Elementwise, Softmax
from accelsim.workload.ops import Gemm
from accelsim.workload.passes import FusedOp, fuse


def _chain(fns: list[str], rows: int = 64, cols: int = 64, dtype: str = "fp32"):
    b = GraphBuilder("chain", dtype)
    x = b.tensor("x", rows * cols)
    for i, fn in enumerate(fns):
        x = b.add(Elementwise(name=f"op{i}", rows=rows, cols=cols, fn=fn, dtype=dtype), [x],
                  component="other")
    return b.build()


def test_a_pointwise_chain_reads_its_input_once_and_writes_its_output_once() -> None:
    g = _chain(["relu", "scale", "scale", "relu"])
    r = fuse(g)
    assert r.kernels_before == 4 and r.kernels_after == 1
    assert r.bytes_before == 4 * 2 * 64 * 64 * 4
    assert r.bytes_after == 2 * 64 * 64 * 4
    assert set(r.saved["why"]) == {"intermediate kept on chip"}


def test_gemm_epilogue_saves_the_gemm_output_round_trip() -> None:
    b = GraphBuilder("mlp", "bf16")
    x = b.tensor("x", 128 * 256)
    h = b.add(Gemm(name="fc1", m=128, n=512, k=256, dtype="bf16"), [x], component="ffn")
    h = b.add(Elementwise(name="gelu", rows=128, cols=512, fn="gelu", dtype="bf16"), [h],
              component="ffn")
    r = fuse(b.build())
    assert r.groups == (("fc1", "gelu"),)
    assert r.bytes_saved == 2 * 128 * 512 * 2            # fc1's output: one write, one read
    (node,) = r.graph.nodes
    assert isinstance(node.op, FusedOp) and node.op.lower() == Gemm(
        name="fc1", m=128, n=512, k=256).lower()
    assert node.op.flops == 2 * 128 * 512 * 256 + 8 * 128 * 512


def test_a_tensor_with_two_readers_is_not_fused_away() -> None:
    b = GraphBuilder("fork", "fp32")
    x = b.tensor("x", 100)
    y = b.add(Elementwise(name="relu", rows=10, cols=10, fn="relu"), [x], component="other")
    b.add(Elementwise(name="a", rows=10, cols=10, fn="scale"), [y], component="other")
    b.add(Elementwise(name="b", rows=10, cols=10, fn="scale"), [y], component="other")
    r = fuse(b.build(["a", "b"]))
    assert r.bytes_saved == 0 and r.kernels_after == 3


def test_linear_silu_mul_is_one_kernel_that_reads_its_input_once() -> None:
    g = zoo.get("llama3_8b", seq=128)
    r = fuse(g)
    group = next(gr for gr in r.groups if "layers.0.ffn.gate_proj" in gr)
    assert group == ("layers.0.ffn.gate_proj", "layers.0.ffn.up_proj", "layers.0.ffn.silu",
                     "layers.0.ffn.mul")
    t, f, d = 128, 14336, 4096
    saved = r.saved[r.saved["kernel"] == "layers.0.ffn.gate_proj"]["bytes_saved"].sum()
    # gate, silu and up outputs each skip a write and a read; x is read once, not twice
    assert saved == 2 * (3 * 2 * t * f + t * d)


def test_qkv_projections_fuse_horizontally() -> None:
    r = fuse(zoo.get("bert_base", seq=128))
    assert ("layers.0.q_proj", "layers.0.k_proj", "layers.0.v_proj") in r.groups
    fused = r.graph.node("layers.0.q_proj").op
    shape = fused.lower()
    assert (shape.m, shape.n, shape.k) == (128, 3 * 768, 768)


def test_attention_becomes_one_kernel_without_the_score_matrix() -> None:
    g = zoo.get("bert_base", batch=2, seq=256)
    r = fuse(g)
    attn = r.graph.node("layers.0.attention").op
    assert isinstance(attn, Attention)
    assert (attn.batch, attn.heads, attn.seq_q, attn.seq_kv, attn.head_dim) == (2, 12, 256, 256, 64)
    scores = 2 * 12 * 256 * 256 * 2                      # bytes of one score matrix (fp16/bf16)
    row = r.saved[r.saved["kernel"] == "layers.0.attention"]
    assert row["bytes_saved"].sum() == 4 * scores      # QK^T write, softmax r+w, AV read
    assert r.graph.flops == g.flops                      # bidirectional: same work


def test_saved_rows_add_up_to_the_traffic_difference_on_every_zoo_model() -> None:
    for name in ("resnet50", "mobilenet_v2", "bert_base", "gpt2_small_decode", "dlrm",
                 "llama3_8b_decode"):
        r = fuse(zoo.get(name))
        assert r.saved["bytes_saved"].sum() == pytest.approx(r.bytes_saved), name
        assert r.bytes_after < r.bytes_before, name
        assert sum(op_bytes(op) for op in r.graph.ops) == pytest.approx(r.bytes_after)


def test_fused_graph_keeps_execution_order_and_work() -> None:
    g = zoo.get("resnet50")
    r = fuse(g)
    assert r.graph.macs == g.macs and r.graph.flops == g.flops
    ready = {t for t, v in g.tensors.items() if v.kind in ("input", "weight")}
    for node in r.graph.nodes:
        assert set(node.inputs) <= ready, node.name
        ready |= set(node.outputs)
    conv1 = r.graph.node("conv1").op
    assert [op.name for op in conv1.members] == ["conv1", "conv1.bn", "conv1.relu"]


def test_decode_writes_new_keys_into_the_cache_from_the_projection_kernel() -> None:
    # Llama: k = rope(k_proj(x)) is appended to the cache by the projection's epilogue
    r = fuse(zoo.get("llama3_8b_decode", context=512), horizontal=False)
    group = next(gr for gr in r.groups if "layers.0.k_proj" in gr)
    assert "layers.0.k_rope" in group and "layers.0.k_append" in group
    # the appended rows are persistent state: still written
    node = r.graph.node("layers.0.k_proj")
    assert "layers.0.k_append" in node.outputs


def test_rules_can_be_switched_off() -> None:
    g = zoo.get("bert_base", seq=128)
    none = fuse(g, attention=False, horizontal=False, epilogues=False)
    assert none.bytes_saved == 0 and none.kernels_after == len(g)
    only_attn = fuse(g, horizontal=False, epilogues=False)
    ops = [n.op for n in only_attn.graph.nodes]
    assert sum(isinstance(op, Attention) for op in ops) == 12
    assert not any(isinstance(op, (FusedOp, Softmax)) for op in ops)
    assert only_attn.kernels_after == len(g) - 2 * 12
