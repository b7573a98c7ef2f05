"""Operator fusion and the DRAM traffic it saves.

Three rules, applied in this order to a :class:`~accelsim.workload.graph.ModelGraph` whose
nodes are in execution order:

1. **Attention**: ``QK^T -> softmax -> AV`` (an unshared-operand GEMM, a softmax and a GEMM,
   each intermediate read only by the next) becomes one
   :class:`~accelsim.workload.nn_ops.Attention` kernel (FlashAttention-style: the score and
   probability matrices stay on chip). A causal fused kernel skips the masked half of the
   scores, so its FLOPs are those of :class:`Attention` (the unfused GEMMs compute them all).
2. **Horizontal GEMM fusion**: consecutive weight GEMMs that read the same activation
   (Q/K/V projections, gate/up projections) become one kernel that reads it once.
3. **Epilogues**: a pointwise op (:class:`~accelsim.workload.nn_ops.Elementwise`, or an
   inference :class:`~accelsim.workload.nn_ops.BatchNorm2d`, a per-channel affine map) joins the
   kernel that produces one of its inputs when that tensor has no other reader, is not a
   graph output and is not persistent (weights, KV cache). Chains of pointwise ops fuse the
   same way (ReLU -> BN -> affine), and Linear + SiLU + Mul becomes one kernel with rule 2.

Traffic model (decimal bytes): unfused, every op reads and writes each of its tensors once
(:func:`~accelsim.workload.graph.op_bytes`). A fused kernel does not write or re-read a
tensor produced and consumed only inside it, and reads an outside tensor once however many
of its members read it.

Imports: workload.ops, workload.nn_ops, workload.graph.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from accelsim.workload.graph import ModelGraph, Node, op_bytes, op_traffic_elements
from accelsim.workload.nn_ops import Attention, BatchNorm2d, Elementwise, Softmax
from accelsim.workload.ops import Conv2d, Gemm, GemmShape


@dataclass(frozen=True, slots=True, kw_only=True)
class FusedOp:
    """Several ops run as one kernel (``members``, in order). Traffic is the kernel's
    external reads and writes; FLOPs and MACs are the members'. A kernel with a GEMM or conv
    in it is a :class:`FusedGemm`.
    """

    name: str
    members: tuple
    read_elements: int
    write_elements: int
    dtype: str | None = None

    kind = "fused"

    @property
    def main(self):
        """The first GEMM-like member (or the first member): it sets the kernel's shape."""
        for op in self.members:
            if isinstance(op, (Gemm, Conv2d, Attention)):
                return op
        return self.members[0]

    @property
    def macs(self) -> int:
        """MACs of all members."""
        return sum(getattr(op, "macs", 0) for op in self.members)

    @property
    def flops(self) -> int:
        """FLOPs of all members."""
        return sum(getattr(op, "flops", 0) for op in self.members)

    def tensor_elements(self) -> dict[str, int]:
        """External elements read (``input``) and written (``output``)."""
        return {"input": self.read_elements, "output": self.write_elements}


@dataclass(frozen=True, slots=True, kw_only=True)
class FusedGemm(FusedOp):
    """A fused kernel built around GEMMs/convs (epilogues, horizontally fused projections).
    ``lower()`` is the array-level GEMM, so engines that run GEMMs can run it; the other
    members are its epilogue."""

    def lower(self) -> GemmShape:
        """The GEMM of the kernel: horizontally fused GEMMs with equal M, K and repeat are
        one GEMM with their N summed; otherwise the first GEMM's."""
        shapes = [op.lower() for op in self.members if isinstance(op, (Gemm, Conv2d))]
        first = shapes[0]
        if all((s.m, s.k, s.repeat) == (first.m, first.k, first.repeat) for s in shapes):
            return GemmShape(first.m, sum(s.n for s in shapes), first.k, first.repeat)
        return first


@dataclass(frozen=True, slots=True)
class FusionResult:
    """A fused graph, what was fused, and the traffic saved (bytes, decimal)."""

    graph: ModelGraph
    groups: tuple[tuple[str, ...], ...]
    bytes_before: float
    bytes_after: float
    saved: pd.DataFrame
    """One row per tensor that fusion kept off DRAM: ``tensor, kernel, bytes_saved, why``."""

    @property
    def bytes_saved(self) -> float:
        """Traffic removed by fusion."""
        return self.bytes_before - self.bytes_after

    @property
    def kernels_before(self) -> int:
        """Kernels launched unfused (one per op)."""
        return sum(len(g) for g in self.groups)

    @property
    def kernels_after(self) -> int:
        """Kernels launched fused."""
        return len(self.groups)


def _is_weight_gemm(op) -> bool:
    return isinstance(op, Gemm) and op.shared_weights


def _only_reader(graph: ModelGraph, consumers: dict[str, list[int]], i: int) -> int | None:
    readers = consumers[graph.nodes[i].outputs[0]]
    return readers[0] if len(readers) == 1 else None


def _attention_triples(graph: ModelGraph, consumers: dict[str, list[int]]) -> dict[int, tuple]:
    """Index of a QK^T node -> (qk, [pointwise...,] softmax, av) indices of an attention
    pattern (scale or mask ops between QK^T and the softmax are absorbed), and its facts."""
    found = {}
    for i, n in enumerate(graph.nodes):
        meta = n.attrs.get("attention")
        if meta is None or not isinstance(n.op, Gemm) or n.op.shared_weights:
            continue
        chain = [i]
        j = _only_reader(graph, consumers, i)
        while j is not None and isinstance(graph.nodes[j].op, Elementwise) and len(chain) < 4:
            chain.append(j)
            j = _only_reader(graph, consumers, j)
        if j is None or not isinstance(graph.nodes[j].op, Softmax):
            continue
        chain.append(j)
        a = _only_reader(graph, consumers, j)
        if a is None or not isinstance(graph.nodes[a].op, Gemm) or graph.nodes[a].op.shared_weights:
            continue
        found[a] = (tuple(chain), a, meta)
    return found


def fuse(graph: ModelGraph, *, attention: bool = True, horizontal: bool = True,
         epilogues: bool = True) -> FusionResult:
    """Fuse ``graph`` with the rules in the module docstring (each can be switched off)."""
    nodes = list(graph.nodes)
    consumers = graph.consumers()
    outputs = set(graph.outputs)
    persistent = {t for t, v in graph.tensors.items() if v.kind in ("weight", "kv_cache")}

    # rule 1: replace each attention triple by one node
    triples = _attention_triples(graph, consumers) if attention else {}
    drop: set[int] = set()
    attn_groups: dict[int, tuple[str, ...]] = {}
    for ai, (chain, _, meta) in triples.items():
        qk, av = nodes[chain[0]], nodes[ai]
        op = Attention(name=qk.name.rsplit(".", 1)[0] + ".attention", batch=meta["batch"],
                       heads=meta["heads"], kv_heads=meta["kv_heads"], seq_q=meta["seq_q"],
                       seq_kv=meta["seq_kv"], head_dim=meta["head_dim"],
                       causal=meta["causal"], dtype=qk.op.dtype)
        ins = (qk.inputs[0], qk.inputs[1], av.inputs[1])
        nodes[ai] = Node(op=op, inputs=ins, outputs=av.outputs, component=qk.component,
                         layer=qk.layer)
        attn_groups[ai] = tuple(nodes[c].name for c in chain) + (av.name,)
        drop |= set(chain)
    order = [i for i in range(len(nodes)) if i not in drop]

    # rules 2 and 3: grow groups over the remaining nodes in order
    group_of: dict[int, int] = {}
    groups: dict[int, list[int]] = {}
    producer = {t: i for i in order for t in nodes[i].outputs}
    readers: dict[str, list[int]] = {t: [] for t in graph.tensors}
    for i in order:
        for t in nodes[i].inputs:
            readers[t].append(i)
    prev = None
    for i in order:
        op = nodes[i].op
        target = None
        if (horizontal and prev is not None and _is_weight_gemm(op)
                and _is_weight_gemm(nodes[prev].op)
                and nodes[prev].inputs[0] == nodes[i].inputs[0]
                and all(_is_weight_gemm(nodes[j].op) for j in groups[group_of[prev]])):
            target = group_of[prev]
        elif epilogues and isinstance(op, (Elementwise, BatchNorm2d)):
            for t in nodes[i].inputs:
                if (t in producer and readers[t] == [i] and t not in outputs
                        and t not in persistent):
                    target = group_of[producer[t]]
                    break
        if target is None:
            target = i
            groups[i] = []
        groups[target].append(i)
        group_of[i] = target
        prev = i

    # traffic of each group and the fused graph
    new_nodes: list[Node] = []
    saved_rows: list[dict] = []
    names: list[tuple[str, ...]] = []
    before = sum(op_bytes(op) for op in graph.ops)
    after = 0.0
    for root in sorted(groups, key=lambda r: groups[r][-1]):
        members = groups[root]
        node_list = [nodes[j] for j in members]
        member_names = tuple(n for j in members for n in attn_groups.get(j, (nodes[j].name,)))
        names.append(member_names)
        if len(members) == 1:
            node = node_list[0]
            new_nodes.append(node)
            after += op_bytes(node.op)
            if members[0] in attn_groups:
                _record_attention(saved_rows, graph, attn_groups[members[0]], node)
            continue
        produced = {t for n in node_list for t in n.outputs}
        reads = Counter(t for n in node_list for t in n.inputs)
        reads_elems = sum(op_traffic_elements(n.op) - n.op.tensor_elements()["output"]
                          for n in node_list)
        write_elems = sum(n.op.tensor_elements()["output"] for n in node_list)
        kname = node_list[0].name
        for t, k in reads.items():
            size = graph.tensors[t].elements
            if t in produced:
                escapes = t in outputs or t in persistent or any(
                    r not in members for r in readers[t])
                reads_elems -= k * size
                saved = k * size
                if not escapes:
                    write_elems -= size
                    saved += size
                why = "intermediate kept on chip" if not escapes else "re-read avoided"
            elif k > 1:
                reads_elems -= (k - 1) * size
                saved, why = (k - 1) * size, "shared input read once"
            else:
                continue
            saved_rows.append({"tensor": t, "kernel": kname, "why": why,
                               "bytes_saved": saved * graph.tensors[t].bytes / size})
        cls = FusedGemm if any(isinstance(n.op, (Gemm, Conv2d)) for n in node_list) else FusedOp
        fop = cls(name=kname, members=tuple(n.op for n in node_list),
                      read_elements=reads_elems, write_elements=write_elems,
                      dtype=node_list[0].op.dtype)
        for j in members:
            if j in attn_groups:
                _record_attention(saved_rows, graph, attn_groups[j], nodes[j])
        outs = tuple(t for n in node_list for t in n.outputs
                     if t in outputs or t in persistent
                     or any(r not in members for r in readers[t]))
        ins = tuple(dict.fromkeys(t for n in node_list for t in n.inputs if t not in produced))
        new_nodes.append(Node(op=fop, inputs=ins, outputs=outs, component=node_list[0].component,
                              layer=node_list[0].layer))
        after += op_bytes(fop)
    fused = ModelGraph(graph.name + "_fused", tuple(new_nodes), graph.tensors, graph.outputs,
                       dict(graph.params, fused=True))
    saved = pd.DataFrame(saved_rows, columns=["tensor", "kernel", "bytes_saved", "why"])
    return FusionResult(fused, tuple(names), before, after, saved)


def _record_attention(rows: list[dict], graph: ModelGraph, names: tuple[str, ...],
                      fused: Node) -> None:
    """The saved-traffic row of one attention pattern: the unfused ops' traffic minus the
    fused kernel's (the score/probability matrices' writes and reads, masks, scales)."""
    members = [graph.node(n) for n in names]
    saved = sum(op_bytes(n.op) for n in members) - op_bytes(fused.op)
    rows.append({"tensor": ",".join(n.outputs[0] for n in members[:-1]), "kernel": fused.name,
                 "why": "attention matrices kept on chip", "bytes_saved": saved})
