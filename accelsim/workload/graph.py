"""Model graphs: operators in execution order, the tensors that flow between them
(producer -> consumer edges) and a component tag per operator.

The operator dataclasses of :mod:`accelsim.workload.ops` and :mod:`accelsim.workload.nn_ops`
know their shape, FLOPs and tensor sizes in elements; a :class:`ModelGraph` adds what a pass
over a whole model needs: which tensor each op reads and writes, which are weights, which
layer (block) an op belongs to, and a component tag (``attention``, ``ffn``, ``norm``,
``embedding``, ``other``) for cost breakdowns.

Byte counting (used by :func:`op_bytes`, :func:`breakdown` and the passes): an op's DRAM
traffic, unfused, is every tensor it touches read or written once, i.e. the sum of its
``tensor_elements()`` times the bytes per element of its ``dtype`` (decimal bytes). The one
exception is :class:`~accelsim.workload.nn_ops.Embedding`, whose ``weight`` (the whole table)
is storage, not traffic: a lookup moves only the gathered rows.

Imports: errors, limits, precision, workload.ops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from accelsim.errors import WorkloadError
from accelsim.limits import MAX_GRAPH_OPS
from accelsim.precision import PRECISION_BYTES
from accelsim.workload.ops import Workload

COMPONENTS = ("attention", "ffn", "norm", "embedding", "other")
"""Component tags of :func:`breakdown`, in report order."""


TENSOR_KINDS = ("activation", "input", "weight", "kv_cache")
"""``input``: fed to the graph from outside; ``weight`` and ``kv_cache``: persistent state."""


class ParamError(ValueError):
    """A model builder's parameter that the model refuses (a mode it has not, a value that
    contradicts another): :func:`accelsim.workload.models.params.build_checked` turns it into a
    one-line :class:`~accelsim.errors.WorkloadError` naming the file, ``field`` and ``value``."""

    def __init__(self, field: str, value: Any, reason: str) -> None:
        super().__init__(f"{field}={value}: {reason}")
        self.field, self.value, self.reason = field, value, reason


def dtype_bytes(dtype: str | None, default: str = "fp32") -> float:
    """Bytes per element of ``dtype`` (``None`` means ``default``)."""
    name = dtype or default
    if name not in PRECISION_BYTES:
        raise WorkloadError(None, "dtype", name,
                            f"unknown precision (known: {', '.join(PRECISION_BYTES)})")
    return PRECISION_BYTES[name]


def op_traffic_elements(op: Any) -> int:
    """Elements an op reads and writes when it runs alone (see the module docstring)."""
    te = op.tensor_elements()
    if getattr(op, "kind", "") == "embedding":
        te = {k: v for k, v in te.items() if k != "weight"}
    return int(sum(te.values()))


def op_bytes(op: Any, default_dtype: str = "fp32") -> float:
    """DRAM bytes an op moves when it runs alone: traffic elements x bytes per element."""
    return op_traffic_elements(op) * dtype_bytes(getattr(op, "dtype", None), default_dtype)


@dataclass(frozen=True, slots=True, kw_only=True)
class Tensor:
    """A named tensor of ``elements`` elements of ``dtype``; ``kind`` in :data:`TENSOR_KINDS`."""

    name: str
    elements: int
    dtype: str
    kind: str = "activation"

    @property
    def bytes(self) -> float:
        """Size in bytes."""
        return self.elements * PRECISION_BYTES[self.dtype]


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """One operator in a graph: the op, what it reads and writes, its component and layer."""

    op: Any
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    component: str = "other"
    layer: int | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    """Model-level facts a pass may need (e.g. heads, seq_q, causal on an attention GEMM)."""

    @property
    def name(self) -> str:
        """The op's name (unique in a graph)."""
        return self.op.name


@dataclass(frozen=True, slots=True)
class ModelGraph:
    """Nodes in execution order plus every tensor they name. Build with :class:`GraphBuilder`."""

    name: str
    nodes: tuple[Node, ...]
    tensors: dict[str, Tensor]
    outputs: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    spec: Any = field(default=None, compare=False, repr=False)
    """The architecture the graph was built from (a zoo
    :class:`~accelsim.workload.models.transformer.TransformerSpec`), None for any other
    graph, a pass's output among them: what lets a GPU lower a Llama-family decoder through
    the calls Hugging Face's model makes (:mod:`accelsim.workload.models.transformer_program`)."""

    def __len__(self) -> int:
        return len(self.nodes)

    def node(self, name: str) -> Node:
        """The node whose op is called ``name``."""
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def producers(self) -> dict[str, int]:
        """Tensor name -> index of the node that writes it."""
        return {t: i for i, n in enumerate(self.nodes) for t in n.outputs}

    def consumers(self) -> dict[str, list[int]]:
        """Tensor name -> indices of the nodes that read it, in order."""
        out: dict[str, list[int]] = {t: [] for t in self.tensors}
        for i, n in enumerate(self.nodes):
            for t in n.inputs:
                out[t].append(i)
        return out

    def edges(self) -> list[tuple[str, str, str]]:
        """``(producer op, consumer op, tensor)`` for every activation edge."""
        prod = self.producers()
        return [(self.nodes[prod[t]].name, n.name, t)
                for n in self.nodes for t in n.inputs if t in prod]

    def parameter_count(self) -> int:
        """Elements of all weight tensors."""
        return sum(t.elements for t in self.tensors.values() if t.kind == "weight")

    @property
    def ops(self) -> tuple:
        """The operators in execution order."""
        return tuple(n.op for n in self.nodes)

    @property
    def flops(self) -> int:
        """Total FLOPs."""
        return sum(getattr(op, "flops", 0) for op in self.ops)

    @property
    def macs(self) -> int:
        """Total MACs."""
        return sum(getattr(op, "macs", 0) for op in self.ops)

    def bytes(self) -> float:
        """Total DRAM bytes, every op run alone (unfused)."""
        return sum(op_bytes(op) for op in self.ops)

    def to_workload(self) -> Workload:
        """The ops as a :class:`~accelsim.workload.ops.Workload` (what the engines run)."""
        return Workload(self.name, self.ops, f"zoo:{self.name}")


class GraphBuilder:
    """Builds a :class:`ModelGraph` op by op, checking tensor sizes against the ops.

    ``add(op, inputs, component=...)`` creates the op's weight tensor (``<op>.weight``) when
    the op has a weight that is not given as an input, and its output tensor (named after the
    op, unless ``output=`` names it) sized from ``op.tensor_elements()['output']``.
    """

    def __init__(self, name: str, dtype: str, **params: Any) -> None:
        dtype_bytes(dtype)
        self.name = name
        self.dtype = dtype
        self.params = dict(params, dtype=dtype)
        self._nodes: list[Node] = []
        self._tensors: dict[str, Tensor] = {}
        self.layer: int | None = None

    def __contains__(self, name: str) -> bool:
        """Whether a tensor called ``name`` is declared."""
        return name in self._tensors

    def __len__(self) -> int:
        """Ops added so far."""
        return len(self._nodes)

    def tensor(self, name: str, elements: int, kind: str = "input") -> str:
        """Declare a graph input, weight or KV cache; returns its name."""
        if kind not in TENSOR_KINDS:
            raise ValueError(f"kind must be one of {TENSOR_KINDS}")
        if name in self._tensors:
            raise ValueError(f"tensor {name!r} declared twice")
        self._tensors[name] = Tensor(name=name, elements=int(elements), dtype=self.dtype, kind=kind)
        return name

    def size(self, name: str) -> int:
        """Elements of a declared tensor."""
        return self._tensors[name].elements

    def add(self, op: Any, inputs: Sequence[str], *, component: str,
            output: str | None = None, output_kind: str = "activation",
            weight: str | None = None, auto_weight: bool = True,
            attrs: dict[str, Any] | None = None) -> str:
        """Append ``op`` reading ``inputs``; returns the name of its output tensor.

        A weight tensor is created for ops whose ``tensor_elements()`` has a ``weight`` that
        is a parameter (not for a GEMM with ``shared_weights=False``, whose second operand is
        an activation passed in ``inputs``). ``weight=`` names an existing weight tensor to
        use instead (tied embeddings); ``auto_weight=False`` creates none (the caller passes
        every operand, as the ONNX reader does).
        """
        if component not in COMPONENTS:
            raise ValueError(f"component must be one of {COMPONENTS}")
        if len(self._nodes) >= MAX_GRAPH_OPS:
            raise WorkloadError(self.name, "ops", f"more than {MAX_GRAPH_OPS:,} operators",
                                f"more than the limit of {MAX_GRAPH_OPS:,} operators")
        for t in inputs:
            if t not in self._tensors:
                raise ValueError(f"{op.name}: input tensor {t!r} not declared")
        te = op.tensor_elements()
        ins = list(inputs)
        if weight is not None:
            ins.append(weight)
        elif auto_weight and te.get("weight", 0) and getattr(op, "shared_weights", True):
            ins.append(self.tensor(f"{op.name}.weight", te["weight"], "weight"))
        out = output or op.name
        self.tensor(out, te["output"], output_kind)
        self._nodes.append(Node(op=op, inputs=tuple(ins), outputs=(out,), component=component,
                                layer=self.layer, attrs=dict(attrs or {})))
        return out

    def build(self, outputs: Iterable[str] = (), *, spec: Any = None) -> ModelGraph:
        """The finished graph; ``outputs`` are tensors that leave it (default: the last op's);
        ``spec``: the architecture it was built from (:attr:`ModelGraph.spec`)."""
        outs = tuple(outputs) or self._nodes[-1].outputs
        return ModelGraph(self.name, tuple(self._nodes), dict(self._tensors), outs, self.params,
                          spec)


def breakdown(graph: ModelGraph, time_fn: Callable[[Any], float] | None = None) -> pd.DataFrame:
    """Per-component totals: one row per component in :data:`COMPONENTS` that has ops.

    Columns: ``ops``, ``macs``, ``flops``, ``bytes`` (unfused DRAM traffic),
    ``flop_share``, ``byte_share`` (fractions of the graph total) and, when ``time_fn(op)``
    (seconds) is given, ``time_s`` and ``time_share``.
    """
    rows: dict[str, dict[str, float]] = {}
    for n in graph.nodes:
        r = rows.setdefault(n.component, {"ops": 0, "macs": 0, "flops": 0, "bytes": 0.0,
                                          "time_s": 0.0})
        r["ops"] += 1
        r["macs"] += getattr(n.op, "macs", 0)
        r["flops"] += getattr(n.op, "flops", 0)
        r["bytes"] += op_bytes(n.op)
        if time_fn is not None:
            r["time_s"] += float(time_fn(n.op))
    df = pd.DataFrame.from_dict(rows, orient="index")
    df = df.reindex([c for c in COMPONENTS if c in rows])
    df.index.name = "component"
    df["flop_share"] = df["flops"] / max(df["flops"].sum(), 1)
    df["byte_share"] = df["bytes"] / max(df["bytes"].sum(), 1)
    if time_fn is None:
        df = df.drop(columns="time_s")
    else:
        df["time_share"] = df["time_s"] / max(df["time_s"].sum(), 1e-300)
    return df.astype({"ops": int, "macs": "int64", "flops": "int64"})
