"""Models across GPUs and batches of many requests: what one GPU of a parallel model runs.

**Tensor parallelism** (Megatron-LM, as vLLM and TensorRT-LLM shard a decoder):
:func:`shard_spec` gives one rank's slice of a :class:`TransformerSpec`:

* q/k/v (or GPT-2's fused qkv), FFN gate/up/fc1: column-parallel (``heads / tp`` query heads,
  ``max(1, kv_heads / tp)`` key/value heads: when ``tp > kv_heads`` each KV head is
  replicated on ``tp / kv_heads`` ranks, as vLLM does; ``ffn / tp`` FFN columns);
* attention output projection and FFN down/fc2: row-parallel, each followed by an
  **all-reduce** of the ``tokens x hidden`` activations (:class:`Collective`);
* token embedding: vocabulary-parallel (``vocab / tp`` rows), then an all-reduce;
* LM head: vocabulary-parallel (``vocab / tp`` columns), then an **all-gather** of the logits;
* norms, residual adds, rotary embedding: replicated (every rank, full hidden).

A mixture-of-experts FFN under tensor parallelism (vLLM's default): the router is replicated,
every routed expert's and the shared experts' MLP is column/row-parallel (``expert_ffn / tp``,
``shared_ffn / tp``), and one all-reduce follows the MoE block's combine.

**Expert parallelism** (``ep``; Megatron-LM's expert parallel over the data-parallel
dimension, SGLang's/vLLM's data-parallel attention with expert-parallel MoE): a pipeline stage
uses ``tp x ep`` GPUs, ``ep`` attention groups of ``tp`` GPUs each. Attention, norms,
embedding and LM head stay TP-sharded inside a group, and the ``ep`` groups split the step's
sequences (data parallel: group 0, the one timed, runs ``ceil(batch / ep)`` of them). The
routed experts are split over the ``ep`` groups (``experts / ep`` each, ``ep`` must divide
the experts), each expert still TP-sharded ``tp`` ways; GPU ``i`` of every group forms an EP
group. Around the experts' grouped GEMMs each rank calls an **all-to-all dispatch** (its
tokens' hidden states to the ranks holding their ``k`` experts: ``tokens x k x hidden``
elements, NCCL's per-rank send buffer) and an **all-to-all combine** (the rows its experts
computed back to their tokens' ranks: ``ceil(routed tokens x k / ep) x hidden``); the shared
experts run on every rank, unsharded over EP. Uniform, balanced routing (no expert is hotter
than another, no capacity drop). ``ep = 1`` is exactly tensor parallelism alone.

:func:`tensor_parallel` inserts the collectives into a rank's graph. **Pipeline parallelism**:
:func:`pipeline_stages` splits the layers into ``pp`` contiguous stages (embedding on the first,
final norm and LM head on the last); a stage boundary sends ``tokens x hidden`` activations to
the next stage (a :class:`Collective` ``send``).

**A batch of many requests** (continuous batching, chunked prefill): :func:`step_graph` builds
the graph of one engine iteration over :class:`StepBatch` -- decode sequences (one token each,
against their cached context) and prefill chunks (``tokens`` new tokens after ``cached``
positions) -- as the engines run it: every token-wise op (projections, FFN, norms, adds,
embedding) runs once over all the iteration's tokens; attention runs per group of sequences
(one decode group at its mean context, one group per shape of prefill chunk).

Collective sizes follow NCCL conventions (:mod:`accelsim.engine.collectives`): ``bytes`` is
the all-reduce buffer, the gathered output of an all-gather, the message of a send. Units:
elements, bytes (decimal).

Imports: errors, precision, workload.graph, workload.models.transformer, workload.ops.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelsim.errors import WorkloadError
from accelsim.precision import PRECISION_BYTES
from accelsim.workload.graph import ModelGraph, Node, Tensor
from accelsim.workload.models.transformer import TransformerSpec, build_transformer
from accelsim.workload.ops import GroupedGemm

COLLECTIVES = ("allreduce", "allgather", "send", "alltoall")
"""The collectives a parallel model's rank calls."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Collective:
    """A collective one rank calls: ``collective`` over ``ranks`` GPUs on a ``bytes`` buffer
    (NCCL's size convention) of ``dtype`` elements."""

    name: str
    collective: str
    bytes: float
    ranks: int
    dtype: str | None = None
    group: str = "tp"
    """Which of the rank's groups calls it: ``tp`` (its tensor-parallel group) or ``ep`` (its
    expert-parallel group)."""

    kind = "collective"

    def __post_init__(self) -> None:
        if self.collective not in COLLECTIVES:
            raise ValueError(f"collective must be one of {', '.join(COLLECTIVES)}")
        if self.group not in ("tp", "ep"):
            raise ValueError("group must be tp or ep")
        if self.ranks < 2 or self.bytes < 0:
            raise ValueError("a collective needs >= 2 ranks and bytes >= 0")

    @property
    def elements(self) -> int:
        """Elements of the buffer."""
        return int(self.bytes / PRECISION_BYTES[self.dtype or "bf16"])

    @property
    def macs(self) -> int:
        """No MACs (the reduction's adds are not counted as model FLOP)."""
        return 0

    @property
    def flops(self) -> int:
        """No model FLOP."""
        return 0

    def tensor_elements(self) -> dict[str, int]:
        """The buffer in and out (in place for an all-reduce)."""
        return {"input": self.elements, "output": self.elements}


def check_tp(spec: TransformerSpec, tp: Any, *, source: str = "command line") -> int:
    """``tp`` as an int after checking that it shards ``spec`` (one-line error otherwise)."""
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1:
        raise WorkloadError(source, "tp", tp, "must be a positive integer")
    if tp == 1:
        return 1
    if spec.heads % tp:
        raise WorkloadError(source, "tp", tp, f"does not divide {spec.name}'s {spec.heads} "
                            "attention heads")
    if spec.kv % tp and tp % spec.kv:
        raise WorkloadError(source, "tp", tp, f"{spec.name}'s {spec.kv} key/value heads can "
                            "be neither split nor replicated evenly over it")
    widths = ([("expert FFN width", spec.ef)]
              + ([("shared-expert FFN width", spec.shared_ffn)] if spec.shared_ffn else [])
              if spec.is_moe else [("FFN width", spec.ffn)])
    for label, width in widths:
        if width % tp:
            raise WorkloadError(source, "tp", tp, f"does not divide {spec.name}'s {label} "
                                f"{width}")
    return tp


def check_ep(spec: TransformerSpec, ep: Any, *, source: str = "command line") -> int:
    """``ep`` as an int after checking that it splits ``spec``'s experts (one-line error
    otherwise)."""
    if isinstance(ep, bool) or not isinstance(ep, int) or ep < 1:
        raise WorkloadError(source, "ep", ep, "must be a positive integer")
    if ep == 1:
        return 1
    if not spec.is_moe:
        raise WorkloadError(source, "ep", ep, f"expert parallelism splits a mixture-of-experts "
                            f"model's experts; {spec.name} has a dense FFN")
    if spec.experts % ep:
        raise WorkloadError(source, "ep", ep, f"does not divide {spec.name}'s {spec.experts} "
                            "routed experts")
    return ep


def shard_spec(spec: TransformerSpec, tp: int, ep: int = 1) -> TransformerSpec:
    """One tensor- (and expert-) parallel rank's slice of ``spec`` (see the module doc)."""
    tp = check_tp(spec, tp)
    ep = check_ep(spec, ep)
    if ep > 1:
        spec = dataclasses.replace(spec, expert_ranks=ep)
    if tp == 1:
        return spec
    moe = {"expert_ffn": spec.ef // tp, "shared_ffn": spec.shared_ffn // tp} \
        if spec.is_moe else {}
    return dataclasses.replace(
        spec, heads=spec.heads // tp, kv_heads=max(1, spec.kv // tp), head_dim=spec.dh,
        ffn=spec.ffn // tp, vocab=math.ceil(spec.vocab / tp), **moe)


ROW_PARALLEL = ("o_proj", "down_proj", "fc2", "combine")
"""Row-parallel linears (and a MoE block's combine, which sums its row-parallel experts): an
all-reduce of their output follows each."""

DISPATCH, COMBINE = "experts_gate_up", "experts_down"
"""Expert-parallel all-to-alls: a dispatch before the first grouped GEMM, a combine after the
second."""


def tensor_parallel(graph: ModelGraph, spec: TransformerSpec, tp: int,
                    ep: int = 1) -> ModelGraph:
    """``graph`` (built from ``shard_spec(spec, tp, ep)``) with the collectives each rank
    calls."""
    if tp == 1 and ep == 1:
        return graph
    dtype = graph.params.get("dtype", "bf16")
    width = PRECISION_BYTES[dtype]
    nodes: list[Node] = []
    tensors = dict(graph.tensors)
    renamed: dict[str, str] = {}
    for node in graph.nodes:
        node = dataclasses.replace(node, inputs=tuple(renamed.get(t, t) for t in node.inputs))
        last = node.name.rsplit(".", 1)[-1]
        if ep > 1 and last == DISPATCH:  # the tokens' hidden states to their experts' ranks
            x = node.inputs[0]
            elements = tensors[x].elements * spec.top_k
            op = Collective(name=f"{node.name}.dispatch", collective="alltoall",
                            bytes=elements * width, ranks=ep, dtype=dtype, group="ep")
            tensors[op.name] = Tensor(name=op.name, elements=elements, dtype=dtype)
            nodes.append(Node(op=op, inputs=(x,), outputs=(op.name,), component="other",
                              layer=node.layer))
            node = dataclasses.replace(node, inputs=(op.name, *node.inputs[1:]))
        nodes.append(node)
        kind, ranks, group = None, tp, "tp"
        if ep > 1 and last == COMBINE:
            kind, ranks, group = "alltoall", ep, "ep"
            elements = tensors[node.outputs[0]].elements
        elif tp == 1:
            continue
        elif last in ROW_PARALLEL or node.name == "tok_embed":
            kind, elements = "allreduce", tensors[node.outputs[0]].elements
        elif node.name == "lm_head":
            kind, elements = "allgather", tensors[node.outputs[0]].elements * tp
        if kind is None:
            continue
        op = Collective(name=f"{node.name}.{kind}", collective=kind, bytes=elements * width,
                        ranks=ranks, dtype=dtype, group=group)
        out = op.name
        tensors[out] = Tensor(name=out, elements=elements, dtype=dtype)
        renamed[node.outputs[0]] = out
        nodes.append(Node(op=op, inputs=node.outputs, outputs=(out,), component="other",
                          layer=node.layer))
    outputs = tuple(renamed.get(t, t) for t in graph.outputs)
    params = dict(graph.params, tp=tp, **({"ep": ep} if ep > 1 else {}))
    return ModelGraph(graph.name, tuple(nodes), tensors, outputs, params)


def pipeline_stages(layers: int, pp: Any, *, source: str = "command line") -> list[range]:
    """The layers of each of ``pp`` pipeline stages, contiguous and as even as possible
    (the first stages take one more when ``pp`` does not divide ``layers``)."""
    if isinstance(pp, bool) or not isinstance(pp, int) or pp < 1:
        raise WorkloadError(source, "pp", pp, "must be a positive integer")
    if pp > layers:
        raise WorkloadError(source, "pp", pp, f"more pipeline stages than the model's {layers} "
                            "layers")
    base, extra = divmod(layers, pp)
    out, start = [], 0
    for s in range(pp):
        n = base + (1 if s < extra else 0)
        out.append(range(start, start + n))
        start += n
    return out


def stage_graph(graph: ModelGraph, stages: list[range], stage: int) -> ModelGraph:
    """The nodes of pipeline stage ``stage`` (its layers; embedding on the first stage, the
    final norm and LM head on the last), with the send of its activations to the next stage."""
    layers = stages[stage]
    first, last = stage == 0, stage == len(stages) - 1
    seen_layer = False
    keep: list[Node] = []
    for node in graph.nodes:
        if node.layer is None:
            if (not seen_layer and first) or (seen_layer and last):
                keep.append(node)
            continue
        seen_layer = True
        if node.layer in layers:
            keep.append(node)
    if not last:
        dtype = graph.params.get("dtype", "bf16")
        tokens = int(graph.params.get("batch", 1)) * int(graph.params.get("seq", 1))
        hidden = graph.params.get("hidden")
        if hidden is None:
            raise ValueError("stage_graph needs the graph's 'hidden' parameter")
        nbytes = tokens * int(hidden) * PRECISION_BYTES[dtype]
        op = Collective(name=f"stage{stage}.send", collective="send", bytes=nbytes, ranks=2,
                        dtype=dtype)
        keep.append(Node(op=op, inputs=keep[-1].outputs, outputs=(op.name,), component="other",
                         layer=layers[-1]))
    used = {t for n in keep for t in (*n.inputs, *n.outputs)}
    tensors = {k: v for k, v in graph.tensors.items() if k in used}
    for n in keep:
        for t in n.outputs:
            if t not in tensors:
                tensors[t] = Tensor(name=t, elements=n.op.tensor_elements()["output"],
                                    dtype=graph.params.get("dtype", "bf16"))
    name = f"{graph.name}.stage{stage}" if len(stages) > 1 else graph.name
    return ModelGraph(name, tuple(keep), tensors, keep[-1].outputs,
                      dict(graph.params, pp=len(stages), stage=stage))


# --- one engine iteration over many requests ------------------------------------------------

@dataclass(frozen=True, slots=True)
class PrefillChunk:
    """``tokens`` new prompt tokens of one request after ``cached`` positions already in its
    KV cache (chunked prefill: ``cached > 0`` for every chunk after the first)."""

    tokens: int
    cached: int = 0


@dataclass(frozen=True, slots=True)
class StepBatch:
    """What one engine iteration computes: ``decode`` sequences (one new token each) whose
    contexts, the new token included, sum to ``decode_context``; and ``prefill`` chunks."""

    decode: int = 0
    decode_context: int = 0
    prefill: tuple[PrefillChunk, ...] = ()

    @property
    def tokens(self) -> int:
        """Tokens the iteration processes (rows of every token-wise op)."""
        return self.decode + sum(c.tokens for c in self.prefill)

    @property
    def sequences(self) -> int:
        """Sequences in the batch."""
        return self.decode + len(self.prefill)

    def __post_init__(self) -> None:
        if self.decode < 0 or self.decode_context < self.decode:
            raise ValueError("decode sequences need a context of at least one position each")
        if self.decode == 0 and not self.prefill:
            raise ValueError("an iteration needs at least one sequence")


_TOKENWISE_SUMS = {"Gemm": "m", "LayerNorm": "rows", "Elementwise": "rows",
                   "Embedding": "tokens", "Softmax": "rows"}


def _is_tokenwise(op: Any) -> bool:
    """Ops that run once over all the iteration's tokens (weights shared across sequences;
    a MoE layer's routing and its experts' grouped GEMMs, over all the tokens routed)."""
    if isinstance(op, GroupedGemm):
        return True
    kind = type(op).__name__
    if kind == "Gemm":
        return bool(op.shared_weights) and op.batch == 1
    if kind == "Softmax":
        return op.name.endswith(".topk")  # a router's; attention's runs per group
    return kind in _TOKENWISE_SUMS and not op.name.endswith("_append")


def _merged_op(old: Any, new: Any) -> Any:
    """One token-wise op over both ops' tokens."""
    if isinstance(old, GroupedGemm):
        return old.merged(new)
    field = _TOKENWISE_SUMS[type(old).__name__]
    return dataclasses.replace(old, **{field: getattr(old, field) + getattr(new, field)})


def step_graph(spec: TransformerSpec, batch: StepBatch, *, dtype: str = "bf16",
               tp: int = 1) -> ModelGraph:
    """The graph one tensor-parallel rank runs for one engine iteration over ``batch``
    (see the module doc). Token-wise ops are merged over the groups; each group keeps its own
    attention (decode at the group's mean context, rounded up)."""
    rank = shard_spec(spec, tp)
    groups: list[ModelGraph] = []
    if batch.decode:
        ctx = -(-batch.decode_context // batch.decode)
        groups.append(build_transformer(rank, batch=batch.decode, mode="decode", context=ctx,
                                        dtype=dtype))
    shapes: dict[PrefillChunk, int] = {}
    for chunk in batch.prefill:  # chunks of one shape: one attention call over all of them
        shapes[chunk] = shapes.get(chunk, 0) + 1
    for chunk, count in shapes.items():
        groups.append(build_transformer(rank, batch=count, seq=chunk.tokens, mode="prefill",
                                        context=chunk.cached + chunk.tokens, dtype=dtype))
    graph = groups[0] if len(groups) == 1 else _merge(groups)
    graph = ModelGraph(f"{spec.name}_step", graph.nodes, graph.tensors, graph.outputs,
                       dict(graph.params, batch=1, seq=batch.tokens, hidden=spec.hidden,
                            sequences=batch.sequences))
    return tensor_parallel(graph, rank, tp)


def _merge(groups: Sequence[ModelGraph]) -> ModelGraph:
    """One graph: token-wise ops summed over ``groups``, per-group ops kept (renamed
    ``<layer prefix>.g<i>.<op>``, with their tensors)."""
    merged: dict[str, tuple[tuple, Node]] = {}
    tensors: dict[str, Tensor] = {}
    for g, graph in enumerate(groups):
        rename: dict[str, str] = {}
        seen_layer = False
        starts: dict[int, int] = {}
        for j, node in enumerate(graph.nodes):
            seen_layer = seen_layer or node.layer is not None
            layer_rank = node.layer if node.layer is not None else (
                10**9 if seen_layer else -1)
            i = j - starts.setdefault(layer_rank, j)  # position inside its layer
            ins = tuple(rename.get(t, t) for t in node.inputs)
            if _is_tokenwise(node.op) or (node.op.name == "lm_head"):
                key = node.name
                if key in merged:
                    order, old = merged[key]
                    op = _merged_op(old.op, node.op)
                    extra = tuple(t for t in ins if t not in old.inputs)
                    merged[key] = (order, dataclasses.replace(old, op=op,
                                                              inputs=old.inputs + extra))
                    for t in node.outputs:
                        tensors[t] = dataclasses.replace(
                            tensors[t], elements=tensors[t].elements + graph.tensors[t].elements)
                    continue
                merged[key] = ((layer_rank, i, g), dataclasses.replace(node, inputs=ins))
                for t in (*node.inputs, *node.outputs):
                    tensors.setdefault(t, graph.tensors[t])
                continue
            prefix, _, last = node.name.rpartition(".")
            new_name = f"{prefix}.g{g}.{last}" if prefix else f"g{g}.{last}"
            outs = []
            for t in node.outputs:
                rename[t] = f"{t}@g{g}"
                outs.append(rename[t])
                tensors[rename[t]] = dataclasses.replace(graph.tensors[t], name=rename[t])
            for t, new in zip(node.inputs, ins, strict=True):
                if t == new and t not in tensors:
                    src = graph.tensors[t]
                    if src.kind == "kv_cache":   # a group's own cache
                        rename[t] = new = f"{t}@g{g}"
                        ins = tuple(new if x == t else x for x in ins)
                        tensors[new] = dataclasses.replace(src, name=new)
                    else:
                        tensors[t] = src
            merged[new_name] = ((layer_rank, i, g),
                                dataclasses.replace(node, op=dataclasses.replace(node.op,
                                                                                 name=new_name),
                                                    inputs=ins, outputs=tuple(outs)))
    nodes = tuple(n for _, n in sorted(merged.values(), key=lambda item: item[0]))
    first = groups[0]
    return ModelGraph(first.name, nodes, tensors, nodes[-1].outputs, dict(first.params))


__all__ = ["COLLECTIVES", "Collective", "PrefillChunk", "StepBatch", "check_ep", "check_tp",
           "pipeline_stages", "shard_spec", "stage_graph", "step_graph", "tensor_parallel"]
