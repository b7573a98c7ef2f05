"""ONNX import (optional extra: ``pip install 'accelsim[onnx]'``): an ONNX model file ->
:class:`~accelsim.workload.graph.ModelGraph` / :class:`~accelsim.workload.ops.Workload`.

Shapes come from ONNX shape inference (with data propagation, so a reshape target computed
from ``Shape`` is known) after every dynamic (symbolic) input dimension has been given a
value (``dims={"batch": 8}``); one that is not given is an error naming it.

Mapping (every op costed as the zoo costs the same op):

* ``Conv`` (2-D) -> :class:`~accelsim.workload.ops.Conv2d`; ``Gemm`` and ``MatMul`` ->
  :class:`~accelsim.workload.ops.Gemm` (a constant right operand is a weight; batched
  ``MatMul`` of two activations has a separate operand per batch entry);
* ``MaxPool``, ``AveragePool`` (2-D, square window, equal strides, symmetric pads),
  ``GlobalAveragePool`` and ``GlobalMaxPool`` (square input) ->
  :class:`~accelsim.workload.nn_ops.Pool2d`; ``BatchNormalization`` (4-D) ->
  :class:`~accelsim.workload.nn_ops.BatchNorm2d`;
* ``Softmax``/``LogSoftmax`` -> :class:`~accelsim.workload.nn_ops.Softmax`;
  ``LayerNormalization``/``RMSNormalization``, ``InstanceNormalization`` and
  ``GroupNormalization`` -> :class:`~accelsim.workload.nn_ops.LayerNorm` (rows: one per
  normalised group);
* ``Gather`` from a constant table -> :class:`~accelsim.workload.nn_ops.Embedding`;
* pointwise ops -> :class:`~accelsim.workload.nn_ops.Elementwise` at the FLOPs per element
  of the zoo op of their class (:data:`ELEMENTWISE`: binary ops as ``add``/``mul``, one-FLOP
  unary ops as ``relu``, transcendental ones (``Sigmoid``, ``Tanh``, ``Exp``, ``Erf``, ...) as
  ``silu``, ``Gelu`` as ``gelu``);
* reductions (``ReduceMean``, ``ReduceSum``, ``ReduceMax``, ...) -> a
  :class:`~accelsim.workload.nn_ops.Pool2d` ``global_avg`` with the same input and output
  sizes (one FLOP per input element, the input read once, the result written once);
* data movement (:data:`COPIES`: ``Transpose``, ``Concat``, ``Split``, ``Slice``, ``Pad``,
  ``Expand``, ``Tile``, ``Resize``, a ``Gather`` of activations, ...) -> a copy of the
  elements it writes (one read, one write);
* views (:data:`VIEWS`: ``Reshape``, ``Flatten``, ``Squeeze``, ``Identity``, ``Cast``, ...)
  cost nothing; so does a node that reads no activation (only weights, constants or shapes:
  :data:`METADATA`), which is folded at load as ONNX Runtime folds it.

Attention written out as ``MatMul(Q, K^T) -> [scale/mask] -> Softmax -> MatMul(P, V)`` is
tagged so the fusion pass makes it one kernel. Any other op (or one of the above in a form
not modelled, such as a non-square pooling window) is costed as a memory-bound copy (read
and write ``max(input, output)`` elements, no FLOPs), never dropped, and listed in the
workload's ``unmodelled`` (:class:`OnnxWorkload`; ``accelsim run`` prints it as a table and
a JSON field); nothing is printed or warned while reading.

Imports: errors, limits, workload.ops, workload.nn_ops, workload.graph.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim.errors import WorkloadError
from accelsim.limits import MAX_DIM, check_file_size
from accelsim.workload.graph import GraphBuilder, ModelGraph
from accelsim.workload.nn_ops import BatchNorm2d, Elementwise, Embedding, LayerNorm, Pool2d, Softmax
from accelsim.workload.ops import Conv2d, Gemm, Workload

VIEWS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Constant", "Cast", "Dropout",
         "CastLike"}
METADATA = {"Shape", "Size"}
"""Ops whose output describes a tensor (its shape), not its data: the shape arithmetic after
them (``Gather``, ``Concat``, ``Unsqueeze`` of shapes) reads no activation and is folded."""
ELEMENTWISE = {
    **dict.fromkeys(("Add", "Sub", "Max", "Min", "Equal", "Less", "Greater", "LessOrEqual",
                     "GreaterOrEqual", "And", "Or", "Xor", "Where", "Mod"), "add"),
    **dict.fromkeys(("Mul", "Div", "Pow", "PRelu"), "mul"),
    **dict.fromkeys(("Relu", "Clip", "LeakyRelu", "Abs", "Neg", "Sqrt", "Reciprocal", "Floor",
                     "Ceil", "Round", "Sign", "Not", "IsNaN", "IsInf"), "relu"),
    **dict.fromkeys(("Sigmoid", "Tanh", "Exp", "Log", "Erf", "Softplus", "Softsign", "HardSigmoid",
                     "HardSwish", "Mish", "Elu", "Selu", "Celu", "Sin", "Cos"), "silu"),
    "Gelu": "gelu"}
"""ONNX pointwise op -> the zoo's :class:`Elementwise` ``fn`` whose FLOPs per element it costs."""
COPIES = {"Transpose", "Concat", "Split", "Slice", "Pad", "Expand", "Tile", "Resize", "Upsample",
          "DepthToSpace", "SpaceToDepth", "Gather", "GatherElements", "GatherND", "ScatterND",
          "ScatterElements", "ConstantOfShape", "Range", "Trilu", "OneHot"}
"""Data movement: a copy of the elements the op writes."""
REDUCTIONS = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
              "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ArgMax", "ArgMin"}
"""Reductions: a ``global_avg`` pool of the same input and output sizes."""
POOLS = {"MaxPool": "max", "AveragePool": "avg"}
_DTYPES = {1: "fp32", 10: "fp16", 16: "bf16", 3: "int8", 2: "int8", 5: "int16", 6: "int32",
           11: "fp32"}


@dataclass(frozen=True, slots=True)
class OnnxWorkload(Workload):
    """An ONNX model's ops with the ops it has no cost model for: ``unmodelled`` rows
    ``{"op": type, "count": n, "nodes": "first node names"}`` (each such node is costed as a
    memory-bound copy)."""

    unmodelled: tuple = ()


def _onnx():
    try:
        import onnx
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "ONNX import needs the 'onnx' package: pip install 'accelsim[onnx]' "
            "(or pip install onnx)") from None
    return onnx


def _load(path: str | os.PathLike, dims: dict[str, int]) -> Any:
    onnx = _onnx()
    file = str(path)
    if not Path(file).is_file():
        raise WorkloadError(file, None, None, "no such file")
    check_file_size(file)
    try:
        model = onnx.load(file, load_external_data=False)  # shapes only: weights never read
    except Exception as exc:  # protobuf raises several types for garbage input
        raise WorkloadError(file, None, None, f"not an ONNX model ({type(exc).__name__})") from None
    if model.ir_version == 0 or not model.graph.node:
        raise WorkloadError(file, None, None, "not an ONNX model (no IR version or no nodes)")
    _check_order(model.graph, file)
    inits = {i.name for i in model.graph.initializer}
    used: set[str] = set()
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        for axis, d in enumerate(inp.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                continue
            key = d.dim_param if d.HasField("dim_param") else f"{inp.name}[{axis}]"
            if key not in dims:
                raise WorkloadError(file, f"input '{inp.name}' dim {axis}", key or "?",
                                    f"dynamic dimension not given (pass dims={{'{key}': N}})")
            d.dim_value = int(dims[key])
            used.add(key)
    for key in dims:
        if key not in used:
            raise WorkloadError(file, key, dims[key], "names no dynamic dimension of the model's "
                                f"inputs ({', '.join(sorted(used)) or 'it has none'})")
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as exc:
        raise WorkloadError(file, None, None, f"ONNX shape inference failed: {exc}") from None


def _check_order(g: Any, file: str) -> None:
    """Refuse a graph whose nodes read a tensor before it is computed (a cycle, or nodes out
    of the topological order that ONNX requires) or that no node, input or weight defines."""
    produced_at = {o: i for i, n in enumerate(g.node) for o in n.output if o}
    defined = {i.name for i in g.input} | {i.name for i in g.initializer}
    for i, node in enumerate(g.node):
        for t in node.input:
            if not t or t in defined:
                continue
            name = node.name or f"{node.op_type}_{i}"
            if t in produced_at:
                raise WorkloadError(file, f"node '{name}'", t, "reads a tensor computed by a later "
                                    "node: the graph has a cycle or is not topologically sorted")
            raise WorkloadError(file, f"node '{name}'", t, "reads a tensor that nothing defines")
        defined.update(o for o in node.output if o)


def _shapes(model: Any, file: str) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape; a dimension beyond :data:`~accelsim.limits.MAX_DIM` is refused."""
    g = model.graph
    out: dict[str, tuple[int, ...]] = {}
    for vi in (*g.input, *g.value_info, *g.output):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            out[vi.name] = tuple(d.dim_value for d in dims)
    for init in g.initializer:
        out[init.name] = tuple(init.dims)
    for name, shape in out.items():
        for d in shape:
            if d > MAX_DIM:
                raise WorkloadError(file, f"tensor '{name}'", d, f"a dimension larger than the "
                                    f"limit of {MAX_DIM:,}")
    return out


def _attr(node: Any, name: str, default: Any) -> Any:
    for a in node.attribute:
        if a.name == name:
            return {1: a.f, 2: a.i, 3: a.s, 7: list(a.ints), 6: list(a.floats)}.get(a.type, default)
    return default


def _prod(xs) -> int:
    return int(math.prod(xs))


def read_onnx_graph(path: str | os.PathLike, dims: dict[str, int] | None = None) -> ModelGraph:
    """An ONNX file -> :class:`ModelGraph` (see the module docstring)."""
    file = str(path)
    model = _load(path, dict(dims or {}))
    g = model.graph
    shape = _shapes(model, file)
    inits = {i.name: i for i in g.initializer}
    elem_types = [i.data_type for i in g.initializer] + [
        i.type.tensor_type.elem_type for i in g.input]
    dtype = next((_DTYPES[t] for t in elem_types if t in (1, 10, 16, 11)), "fp32")
    b = GraphBuilder(g.name or Path(file).stem, dtype, source=file)
    alias: dict[str, str] = {}
    for inp in g.input:
        if inp.name not in inits:
            alias[inp.name] = b.tensor(inp.name, _prod(shape.get(inp.name, (1,))), "input")
    consumers: dict[str, list[Any]] = {}
    for node in g.node:
        for t in node.input:
            consumers.setdefault(t, []).append(node)
    attention, in_attention = _attention_matmuls(g.node, consumers, shape, inits)
    unsupported: dict[str, list[str]] = {}

    def need(name: str, node: Any) -> tuple[int, ...]:
        if name not in shape:
            raise WorkloadError(file, f"node '{node.name or node.op_type}'", name,
                                "shape unknown after shape inference")
        return shape[name]

    def weight(name: str) -> str:
        if name not in b:
            b.tensor(name, _prod(shape[name]), "weight")
        return name

    for i, node in enumerate(g.node):
        op_t, name = node.op_type, node.name or f"{node.op_type}_{i}"
        acts = [alias[t] for t in node.input if t in alias]
        out = node.output[0] if node.output else name
        comp = "other"
        if op_t in METADATA or not acts:  # shapes, or constants only: folded at load
            continue
        if op_t in VIEWS:
            for o in node.output:
                alias[o] = acts[0]
            continue
        op: Any = None
        extra: dict[str, Any] = {}
        if op_t == "Conv" and len(need(node.input[0], node)) == 4:
            op = _conv(node, name, shape, need)
            if op is not None:
                extra["weight"] = weight(node.input[1])
        elif op_t in ("Gemm", "MatMul"):
            a, w = need(node.input[0], node), need(node.input[1], node)
            if op_t == "Gemm":
                m, k = (a[1], a[0]) if _attr(node, "transA", 0) else a
                n = w[0] if _attr(node, "transB", 0) else w[1]
                batch, shared = 1, True
            else:
                a2 = (1, *a) if len(a) == 1 else a
                w2 = (*w, 1) if len(w) == 1 else w
                m, k, n = a2[-2], a2[-1], w2[-1]
                batch = _prod(need(out, node)[:-2]) if len(need(out, node)) > 2 else 1
                shared = node.input[1] in inits or len(w2) == 2
            op = Gemm(name=name, m=m, n=n, k=k, batch=batch, shared_weights=shared, dtype=dtype)
            if node.input[1] in inits:
                extra["weight"] = weight(node.input[1])
            if out in attention:
                extra["attrs"] = {"attention": attention[out]}
        elif op_t in ("Softmax", "LogSoftmax"):
            s = need(out, node)
            op = Softmax(name=name, rows=_prod(s) // s[-1], cols=s[-1], dtype=dtype)
        elif op_t in ("LayerNormalization", "RMSNormalization"):
            s = need(out, node)
            axis = _attr(node, "axis", -1) % len(s)
            op = LayerNorm(name=name, rows=_prod(s[:axis]), cols=_prod(s[axis:]),
                           rms=op_t == "RMSNormalization", dtype=dtype)
            comp = "norm"
        elif op_t in ("InstanceNormalization", "GroupNormalization") and len(need(out, node)) >= 3:
            s = need(out, node)
            groups = s[1] if op_t == "InstanceNormalization" else _attr(node, "num_groups", 1)
            if groups > 0 and s[1] % groups == 0:
                op = LayerNorm(name=name, rows=s[0] * groups, cols=_prod(s) // (s[0] * groups),
                               dtype=dtype)
            comp = "norm"
        elif op_t == "BatchNormalization" and len(need(node.input[0], node)) == 4:
            n, c, h, w = need(node.input[0], node)
            op = BatchNorm2d(name=name, n=n, c=c, h=h, w=w, dtype=dtype)
            stats = f"{name}.weight"
            if stats not in b:
                b.tensor(stats, 4 * c, "weight")
            extra["weight"] = stats
            comp = "norm"
        elif (op_t in POOLS or op_t in ("GlobalAveragePool", "GlobalMaxPool")) \
                and len(need(node.input[0], node)) == 4:
            op = _pool(node, name, need, dtype)
        elif op_t in REDUCTIONS and out in shape:
            elements, kept = _prod(need(node.input[0], node)), max(1, _prod(shape[out]))
            if elements % kept == 0:
                op = Pool2d(name=name, n=1, c=kept, h=1, w=elements // kept, mode="global_avg",
                            dtype=dtype)
        elif op_t == "Gather" and node.input[0] in inits and len(shape[node.input[0]]) == 2:
            rows, dim = shape[node.input[0]]
            op = Embedding(name=name, tokens=_prod(need(node.input[1], node)), dim=dim,
                           table_rows=rows, dtype=dtype)
            extra["weight"] = weight(node.input[0])
            comp = "embedding"
        elif op_t in COPIES and all(o in shape for o in node.output if o):
            written = sum(_prod(shape[o]) for o in node.output if o)
            op = Elementwise(name=name, rows=1, cols=max(1, written), fn="copy", dtype=dtype)
        elif op_t in ELEMENTWISE and out in shape:
            s = shape[out]
            fn = ELEMENTWISE[op_t]
            if fn in ("add", "mul") and len(acts) < 2:  # one operand is a constant (bias, scale)
                fn = "bias" if fn == "add" else "scale"
            op = Elementwise(name=name, rows=_prod(s[:-1]) if len(s) > 1 else 1,
                             cols=s[-1] if s else 1, fn=fn, dtype=dtype)
        if out in in_attention:
            comp = "attention"
        if op is None:
            unsupported.setdefault(op_t, []).append(name)
            sizes = [_prod(shape[t]) for t in (*node.input, *node.output) if t in shape]
            op = Elementwise(name=name, rows=1, cols=max(sizes or [1]), fn="copy", dtype=dtype)
        alias[out] = b.add(op, acts, component=comp, output=out, auto_weight=False, **extra)
        for o in node.output[1:]:
            alias[o] = alias[out]
    if not len(b):
        raise WorkloadError(file, None, None, "no computing ops found")
    outs = [alias[o.name] for o in g.output if o.name in alias]
    graph = b.build(outs)
    listed = [{"op": k, "count": len(v),
               "nodes": ", ".join(v[:3]) + (", ..." if len(v) > 3 else "")}
              for k, v in sorted(unsupported.items())]
    return dataclasses.replace(graph, params={**graph.params, "unmodelled": listed})


def unmodelled_ops(graph: ModelGraph) -> tuple[dict[str, Any], ...]:
    """The ops of an ONNX graph without a cost model: rows ``{op, count, nodes}``."""
    return tuple(dict(r) for r in graph.params.get("unmodelled", ()))


def _pool(node: Any, name: str, need, dtype: str) -> Pool2d | None:
    """A 2-D pooling node as :class:`Pool2d`, or None when its form is not modelled (a
    non-square window, unequal strides or pads, dilations) or the shapes disagree."""
    n, c, h, w = need(node.input[0], node)
    _, _, ho, wo = need(node.output[0], node)
    if node.op_type.startswith("Global"):
        if node.op_type == "GlobalAveragePool":
            return Pool2d(name=name, n=n, c=c, h=h, w=w, mode="global_avg", dtype=dtype)
        return Pool2d(name=name, n=n, c=c, h=h, w=w, mode="max", r=h, stride=1, pad=0,
                      dtype=dtype) if h == w else None
    kernel = _attr(node, "kernel_shape", [])
    strides = _attr(node, "strides", [1, 1])
    pads = _attr(node, "pads", [0, 0, 0, 0])
    if len(kernel) != 2 or kernel[0] != kernel[1] or len(strides) != 2 \
            or strides[0] != strides[1] or len(set(pads)) > 1 \
            or any(d != 1 for d in _attr(node, "dilations", [1, 1])):
        return None
    try:
        op = Pool2d(name=name, n=n, c=c, h=h, w=w, mode=POOLS[node.op_type], r=kernel[0],
                    stride=strides[0], pad=pads[0] if pads else 0, dtype=dtype)
    except ValueError:
        return None
    return op if (op.out_h, op.out_w) == (ho, wo) else None


def _conv(node: Any, name: str, shape: dict, need) -> Conv2d | None:
    n, c, h, w = need(node.input[0], node)
    k, _, r, s = need(node.input[1], node)
    _, _, ho, wo = need(node.output[0], node)
    strides = _attr(node, "strides", [1, 1])
    dil = _attr(node, "dilations", [1, 1])
    group = _attr(node, "group", 1)
    if strides[0] != strides[1] or any(d != 1 for d in dil):
        return None
    pads = _attr(node, "pads", [0, 0, 0, 0])
    for pad in sorted({pads[0], pads[2], (pads[0] + pads[2] + 1) // 2}):
        try:
            op = Conv2d(name=name, n=n, c=c, h=h, w=w, k=k, r=r, s=s, stride=strides[0],
                        pad=pad, groups=group)
        except ValueError:
            continue
        if (op.out_h, op.out_w) == (ho, wo):
            return op
    return None


def _attention_matmuls(nodes, consumers, shape, inits
                       ) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """For each ``MatMul -> [pointwise] -> Softmax -> MatMul``: the QK^T output name -> the
    attention's facts; and the output names of every node of the patterns."""
    found: dict[str, dict[str, Any]] = {}
    members: set[str] = set()
    for node in nodes:
        if node.op_type != "MatMul" or node.input[1] in inits:
            continue
        q, out = shape.get(node.input[0]), shape.get(node.output[0])
        if q is None or out is None or len(q) < 3:
            continue
        t = node.output[0]
        chain = [t]
        for _ in range(4):
            nxt = consumers.get(t, [])
            if len(nxt) != 1:
                break
            if nxt[0].op_type == "Softmax":
                after = consumers.get(nxt[0].output[0], [])
                if len(after) == 1 and after[0].op_type == "MatMul":
                    heads = q[-3] if len(q) >= 4 else 1
                    found[node.output[0]] = {
                        "batch": _prod(q[:-3]) if len(q) >= 4 else q[0], "heads": heads,
                        "kv_heads": heads, "seq_q": q[-2], "seq_kv": out[-1],
                        "head_dim": q[-1], "causal": False}
                    members.update(chain, (nxt[0].output[0], after[0].output[0]))
                break
            if nxt[0].op_type not in ELEMENTWISE:
                break
            t = nxt[0].output[0]
            chain.append(t)
    return found, members


def read_onnx(path: str | os.PathLike, dims: dict[str, int] | None = None) -> OnnxWorkload:
    """An ONNX file -> :class:`OnnxWorkload` (the ops of :func:`read_onnx_graph` and what it
    has no cost model for)."""
    g = read_onnx_graph(path, dims)
    return OnnxWorkload(g.name, g.ops, str(path), unmodelled=unmodelled_ops(g))
