"""What each call of a captured program computes: the op, its tensors' bytes, its launch family.

:func:`call_sites` turns a :class:`~accelsim.workload.program.Program` into one
:class:`CallSite` per call, hardware-agnostic:

* a **lowering key** ``call.<fn>`` (``call.linear``, ``call.rms_norm``, ``call.view``...):
  the execution mode's table (``configs/lowering/<mode>.yaml``) says which host cost class the
  call pays and which kernel it launches on a GPU;
* the **op** it computes (an accelsim op: ``Gemm`` for ``linear``/``matmul``/``bmm``,
  ``Attention`` for SDPA, ``LayerNorm`` for ``layer_norm``/``rms_norm``, ``Softmax``,
  ``Conv2d``, ``Pool2d``, ``BatchNorm2d``, ``Embedding``, ``Elementwise`` for pointwise and
  copy work): what every other machine kind (systolic arrays, CPUs) runs; ``None`` for
  host-only calls (``module``, views);
* the **bytes** its kernel reads and writes and the elements it walks, exactly from the
  captured shapes and dtypes (for stream kernels: casts, broadcasts, reductions, copies);
* its **launch family**: ``strided`` when an operand is non-contiguous, broadcast or of
  another dtype than the result (PyTorch's non-vectorized ``elementwise_kernel``), else
  ``vectorized``.

Views launch nothing (a result flagged ``view``), ``reshape``/``contiguous`` of a
non-contiguous tensor copy, ``x[...] = y`` is a slice copy of ``y``'s elements. A call this
module does not know becomes ``call.<fn>`` with ``modelled = False``: the lowering costs it by
a stated fallback (a stream kernel over its own tensors) and lists it as unmodelled.
Units: bytes (decimal), elements.

Imports: workload.program, workload.ops, workload.nn_ops.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any

from accelsim.workload.nn_ops import (
    Attention,
    BatchNorm2d,
    Elementwise,
    Embedding,
    LayerNorm,
    Pool2d,
    Softmax,
)
from accelsim.workload.ops import Conv2d, Gemm, Workload
from accelsim.workload.program import Call, Program, TensorInfo

VIEW_CALLS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "transpose", "permute", "t", "unsqueeze",
    "squeeze", "expand", "expand_as", "flatten", "unflatten", "split", "chunk", "narrow",
    "select", "as_strided", "contiguous", "detach", "getitem", "unbind", "movedim", "swapaxes",
    "T", "mT", "H", "real", "split_with_sizes", "alias", "dropout", "identity", "clone_view",
    "view_as_complex", "view_as_real"})
"""Calls whose result is a view (or the input itself) unless the capture says otherwise."""

POINTWISE = {
    # fn: (FP32-lane instructions per output element, transcendentals per element)
    "add": (1, 0), "add_": (1, 0), "sub": (1, 0), "sub_": (1, 0), "mul": (1, 0),
    "mul_": (1, 0), "div": (1, 0), "div_": (1, 0), "neg": (1, 0), "abs": (1, 0),
    "relu": (1, 0), "relu_": (1, 0), "clamp": (2, 0), "clamp_": (2, 0), "maximum": (1, 0),
    "minimum": (1, 0), "where": (1, 0), "masked_fill": (1, 0), "masked_fill_": (1, 0),
    "pow": (1, 0), "square": (1, 0), "rsqrt": (4, 0), "sqrt": (4, 0), "reciprocal": (4, 0),
    "exp": (2, 1), "log": (2, 1), "sigmoid": (4, 1), "tanh": (4, 1), "silu": (4, 1),
    "gelu": (8, 1), "sin": (4, 1), "cos": (4, 1), "erf": (8, 1), "softplus": (6, 1),
    "eq": (1, 0), "ne": (1, 0), "lt": (1, 0), "le": (1, 0), "gt": (1, 0), "ge": (1, 0),
    "logical_and": (1, 0), "logical_or": (1, 0), "logical_not": (1, 0), "tril": (1, 0),
    "triu": (1, 0), "floor_divide": (2, 0), "remainder": (2, 0), "addcmul": (2, 0),
    "lerp": (2, 0), "baddbmm_scale": (1, 0), "fill_": (0, 0), "zero_": (0, 0),
    "diff": (1, 0)}
"""Pointwise calls, with their instructions and transcendentals per output element."""

HOST_CREATORS = frozenset({"empty", "empty_like", "new_empty", "empty_strided"})
"""Calls that allocate without writing (host only: the caching allocator)."""

COPIES = frozenset({"to", "type", "type_as", "float", "half", "bfloat16", "double", "int", "long",
                    "clone", "copy_", "contiguous", "reshape", "flatten", "cat", "stack",
                    "setitem", "index_copy_", "index_put_", "repeat", "repeat_interleave",
                    "pad", "roll", "flip", "tile", "gather", "index_select", "getitem",
                    "scatter", "scatter_", "masked_scatter_", "narrow_copy", "zeros_like",
                    "ones_like", "full_like", "zeros", "ones", "full",
                    "arange", "tensor", "new_zeros", "new_ones",
                    "new_full", "new_tensor", "view_copy"})
"""Calls that move or fill memory (a copy or fill kernel; the creators launch a fill)."""

SLICE_WRITES = frozenset({"index_copy_", "index_put_", "scatter_",
                          "masked_scatter_"})
"""In-place writes of a source into some rows of a tensor (``cache.index_copy_(2, pos, k)``,
Hugging Face's ``StaticCache``): the kernel moves the source (and reads the index), not the
destination."""

REDUCTIONS = frozenset({"mean", "sum", "amax", "amin", "max", "min", "var", "std", "norm",
                        "argmax", "argmin", "prod", "logsumexp", "cumsum", "all", "any",
                        "topk", "sort"})
"""Reductions (a reduce kernel over the input, writing the reduced result)."""

GEMMS = frozenset({"linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum"})
NORMS = frozenset({"layer_norm", "rms_norm", "group_norm"})
SOFTMAX = frozenset({"softmax", "log_softmax", "_softmax"})
POOLS = frozenset({"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d"})
HOST_ONLY = frozenset({"module"})

_LAYER = re.compile(r"(?:^|\.)(\d+)(?:\.|$)")

FUSED_PATHS = frozenset({"encoder_layer_fast", "mha_fast", "mha_fast_weights"})
"""The fused paths a module call or a call inside one may name (``args["fastpath"]``,
``args["fused"]``: :mod:`accelsim.workload.torch_fused_paths`); any other value read from a
program file is ignored (the call lowers as an ordinary one)."""


@dataclass(frozen=True, slots=True)
class CallSite:
    """One captured call, ready to lower: its key, op, bytes and launch family."""

    index: int
    """Position of the call in the program."""
    fn: str
    key: str
    """Lowering key: ``call.<fn>`` (``call.view`` for every host-only view)."""
    name: str
    """A readable label: ``<module path>.<fn>`` (``layers.0.attn.q_proj.linear``)."""
    op: Any = None
    """The accelsim op it computes (None: host-only)."""
    read_bytes: float = 0.0
    write_bytes: float = 0.0
    elements: float = 0.0
    """Elements of the result (the unit of a stream kernel's per-element counts)."""
    flop_per_element: float = 0.0
    sfu_per_element: float = 0.0
    family: str = "vectorized"
    layer: int | None = None
    modelled: bool = True
    """False: a call this module does not know, costed by the stream fallback."""
    rows: int = 0
    """Rows of a reduction over the last dimension (0: not a last-dim reduction)."""
    group: str = ""
    """``pointwise``, ``copy``, ``reduction``: the table entry a key falls back to."""
    sfu_routine: str = ""
    """``transcendental`` or ``erf`` (exact GELU, ``erf``): the software routine around each
    transcendental (``""``: none)."""
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HostCall:
    """A call that launches nothing (a module call, a view): a row of the layer table."""

    name: str
    kind: str

    def tensor_elements(self) -> dict[str, int]:
        """No tensors of its own."""
        return {}


def _prec(t: TensorInfo | None) -> str | None:
    return None if t is None else t.precision


def _rows_cols(t: TensorInfo) -> tuple[int, int]:
    if not t.shape:
        return 1, 1
    cols = max(1, t.shape[-1])
    return max(1, t.elements // cols), cols


def _elementwise(name: str, out: TensorInfo, fn: str) -> Elementwise:
    rows, cols = _rows_cols(out)
    return Elementwise(name=name, rows=rows, cols=cols, fn=fn, dtype=_prec(out))


_NARROWING = {("float32", "bfloat16"), ("float32", "float16")}
"""Casts PyTorch's CUDA copy runs as a vectorized kernel of their own
(``direct_copy_kernel_cuda``: ``bfloat16_copy_kernel_cuda``/``float16_copy_kernel_cuda``,
``gpu_kernel_nocast``); every other cast copies with a dynamic cast (``unrolled_elementwise``:
the strided family). Run 1's profiles: RMSNorm's fp32->bf16 cast launches
``vectorized_elementwise_kernel<8, bfloat16_copy_kernel_cuda>``, its bf16->fp32 cast
``unrolled_elementwise_kernel<direct_copy_kernel_cuda>``."""


def _same_layout(t: TensorInfo, out: TensorInfo) -> bool:
    """``t`` is laid out as ``out``: both row-major, or both dense with the same strides (a
    channels-last operand of a channels-last result: TensorIterator coalesces them into one
    vectorized loop)."""
    return t.contiguous and out.contiguous or t.dense and tuple(t.stride) == tuple(out.stride)


def _strided(call: Call, out: TensorInfo | None) -> bool:
    if out is None:
        return False
    for t in call.inputs:
        if t.elements <= 1 or t.param and t.elements == out.elements and t.contiguous:
            continue
        cast = t.dtype != out.dtype and not (call.fn in COPIES
                                             and (t.dtype, out.dtype) in _NARROWING)
        if t.shape != out.shape or cast or not _same_layout(t, out):
            return True
    return not (out.contiguous or out.dense)


def _gemm(call: Call, name: str) -> Gemm | None:
    ins, out = call.inputs, call.outputs[0] if call.outputs else None
    if out is None or len(ins) < 2:
        return None
    a, b = ins[0], ins[1]
    if call.fn in ("addmm", "baddbmm") and len(ins) >= 3:
        a, b = ins[1], ins[2]
    prec = _prec(a)
    if call.fn == "linear":
        k = a.shape[-1] if a.shape else 1
        return Gemm(name=name, m=max(1, a.elements // max(1, k)), n=b.shape[0], k=k,
                    bias=len(ins) > 2, dtype=prec)
    if call.fn == "einsum" or len(a.shape) < 1 or len(b.shape) < 1:
        return None
    k = a.shape[-1]
    n = b.shape[-1] if len(b.shape) >= 2 else 1
    if len(b.shape) <= 2:  # a shared right operand (x @ W): the batch folds into M
        return Gemm(name=name, m=max(1, a.elements // max(1, k)), n=n, k=k, dtype=prec,
                    bias=call.fn == "addmm")
    m = a.shape[-2] if len(a.shape) >= 2 else 1
    batch = max(1, out.elements // max(1, m * n))
    return Gemm(name=name, m=m, n=n, k=k, batch=batch, shared_weights=False, dtype=prec)


def _merges_as_view(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Whether dimensions ``shape`` (with ``stride``) merge into one without a copy, as
    ``reshape`` decides it (PyTorch's ``computeStride``): size-1 dimensions aside, each
    dimension's stride is the next one's stride times its size."""
    kept = [(n, s) for n, s in zip(shape, stride, strict=True) if n != 1]
    return all(s == s2 * n2 for (_, s), (n2, s2) in zip(kept, kept[1:]))


def _matrix_usable(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Whether the last two dimensions are a matrix cuBLAS reads in place: row- or
    column-major with a leading dimension at least the row (column) length
    (``prepare_batch_matrix_for_cublas``)."""
    r, c = shape[-2], shape[-1]
    sr, sc = stride[-2], stride[-1]
    return (sc == 1 or c == 1) and sr >= max(1, c) or (sr == 1 or r == 1) and sc >= max(1, r)


def matmul_operand_copies(call: Call) -> tuple[TensorInfo, ...]:
    """The operands PyTorch's ``matmul`` copies before its ``mm``/``bmm`` (ATen's
    ``_matmul_impl``): a left operand of 3 or more dimensions times a matrix is folded to 2-D
    (``reshape(-1, k)``), and batched operands are broadcast and folded to 3-D (``expand``,
    then ``reshape(-1, rows, cols)``); a reshape that cannot be a view copies the operand
    contiguous, and a folded matrix cuBLAS cannot read in place is copied too. The plain
    attention ``q @ k.transpose(-1, -2)`` over ``(batch, heads, seq, dim)`` views of a
    ``(batch, seq, heads * dim)`` projection copies both operands at batch > 1 (at batch 1
    the heads alone merge as a view): run 28's CUDA-graph traces
    (``scripts/data/h200_program_graph_kernels_run28.json``), three ``direct_copy`` kernels a
    layer at batch 12 and none at batch 1."""
    ins = call.inputs
    if call.fn != "matmul" or len(ins) < 2:
        return ()
    a, b = ins[0], ins[1]
    da, db = len(a.shape), len(b.shape)
    if da < 1 or db < 1 or len(a.stride) != da or len(b.stride) != db:
        return ()
    if db <= 2:  # x @ W: the batch folds into the rows of one mm
        if da >= 3 and not (_merges_as_view(a.shape[:-1], a.stride[:-1])
                            and _matrix_usable((math.prod(a.shape[:-1]), a.shape[-1]),
                                               (a.stride[-2], a.stride[-1]))):
            return (a,)
        return ()
    out = call.outputs[0] if call.outputs else None
    if out is None or len(out.shape) < 3:
        return ()
    batch = tuple(out.shape[:-2])
    copies = []
    for t, mat in ((a, da >= 2), (b, True)):
        if not mat:
            continue
        pad = len(batch) - (len(t.shape) - 2)
        shape = (1,) * pad + tuple(t.shape[:-2])
        stride = (0,) * pad + tuple(t.stride[:-2])
        # broadcast batch dimensions are expanded: stride 0 over the output's size
        shape_b = tuple(batch)
        stride_b = tuple(0 if n == 1 and nb != 1 else s
                         for n, nb, s in zip(shape, shape_b, stride, strict=True))
        if not (_merges_as_view(shape_b, stride_b) and _matrix_usable(t.shape, t.stride)):
            copies.append(t)
    return tuple(copies)


def _attention(call: Call, name: str) -> Attention | None:
    if len(call.inputs) < 3 or any(len(t.shape) < 3 for t in call.inputs[:3]):
        return None
    q, k = call.inputs[0], call.inputs[1]
    batch = max(1, math.prod(q.shape[:-3]) if len(q.shape) > 3 else 1)
    heads = q.shape[-3]
    kv_heads = k.shape[-3]
    return Attention(name=name, batch=batch, heads=heads, seq_q=q.shape[-2],
                     seq_kv=k.shape[-2], head_dim=q.shape[-1],
                     kv_heads=kv_heads if kv_heads != heads else None,
                     causal=bool(call.args.get("is_causal", False)), dtype=_prec(q))


def _norm(call: Call, name: str) -> LayerNorm | None:
    x = call.inputs[0] if call.inputs else None
    if x is None or not x.shape:
        return None
    shape = call.args.get("normalized_shape")
    cols = math.prod(shape) if isinstance(shape, list) and shape else x.shape[-1]
    if call.fn == "group_norm":
        cols = x.elements // max(1, x.shape[0])
    cols = max(1, cols)
    return LayerNorm(name=name, rows=max(1, x.elements // cols), cols=cols,
                     rms=call.fn == "rms_norm", dtype=_prec(x))


def _softmax(call: Call, name: str) -> Softmax | None:
    x = call.inputs[0] if call.inputs else None
    if x is None or not x.shape:
        return None
    dim = call.args.get("dim", -1)
    dim = dim if isinstance(dim, int) and -len(x.shape) <= dim < len(x.shape) else -1
    cols = max(1, x.shape[dim])
    return Softmax(name=name, rows=max(1, x.elements // cols), cols=cols, dtype=_prec(x))


def _pair(v: Any, default: int) -> int:
    if isinstance(v, list) and v:
        v = v[0]
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default


def _conv(call: Call, name: str) -> Conv2d | None:
    if len(call.inputs) < 2 or len(call.inputs[0].shape) != 4 or len(call.inputs[1].shape) != 4:
        return None
    x, w = call.inputs[0], call.inputs[1]
    groups = _pair(call.args.get("groups"), 1)
    r, s = w.shape[2], w.shape[3]
    padding = call.args.get("padding", 0)
    pad = (r - 1) // 2 if padding == "same" else _pair(padding, 0)
    try:
        return Conv2d(name=name, n=x.shape[0], c=x.shape[1], h=x.shape[2], w=x.shape[3],
                      k=w.shape[0], r=r, s=s, stride=_pair(call.args.get("stride"), 1),
                      pad=pad, groups=groups, dtype=_prec(x))
    except ValueError:
        return None


NCHW = ":nchw"
"""Suffix of a convolution call made on an NCHW (contiguous, not channels-last) tensor
(``F.conv2d:nchw``; :mod:`accelsim.workload.op_calls`)."""


def nchw_input(x: TensorInfo) -> bool:
    """Whether a 4-D tensor is laid out NCHW (contiguous, not channels-last): its strides are
    the contiguous ones and the two layouts differ (C > 1 and H x W > 1)."""
    if len(x.shape) != 4:
        return False
    n, c, h, w = x.shape
    return c > 1 and h * w > 1 and tuple(x.stride) == (c * h * w, h * w, w, 1)


def _pool(call: Call, name: str) -> Pool2d | None:
    x = call.inputs[0] if call.inputs else None
    if x is None or len(x.shape) != 4:
        return None
    n, c, h, w = x.shape
    if call.fn.startswith("adaptive"):
        return Pool2d(name=name, n=n, c=c, h=h, w=w, mode="global_avg", dtype=_prec(x))
    r = _pair(call.args.get("kernel_size"), 2)
    stride = call.args.get("stride")
    stride = r if stride in (None, []) else _pair(stride, r)
    try:
        return Pool2d(name=name, n=n, c=c, h=h, w=w, r=r, stride=stride,
                      pad=_pair(call.args.get("padding"), 0),
                      mode="max" if call.fn.startswith("max") else "avg", dtype=_prec(x))
    except ValueError:
        return None


def _io(call: Call) -> tuple[float, float]:
    """Bytes a stream kernel over this call's tensors reads and writes (views read nothing
    twice: each distinct input counted once)."""
    if call.fn == "setitem":
        value = call.inputs[1] if len(call.inputs) > 1 else None
        if value is None:  # a fill (x[...] = 0): the slice's size is not captured
            return 0.0, 0.0
        return value.nbytes, value.nbytes
    if call.fn in SLICE_WRITES and len(call.inputs) > 1:  # only the source's rows move
        source = call.inputs[-1]
        return float(sum(t.nbytes for t in call.inputs[1:])), source.nbytes
    read = sum(t.nbytes for t in call.inputs if not (call.fn.endswith("_") and t is call.inputs[0]
                                                      and call.fn in ("fill_", "zero_")))
    write = sum(t.nbytes for t in call.outputs if not t.view)
    if call.fn.endswith("_") and not write and call.inputs:
        write = call.inputs[0].nbytes
    return float(read), float(write)


def _site(i: int, call: Call) -> CallSite:
    fn = call.fn
    label = f"{call.module}.{fn}" if call.module else fn
    m = _LAYER.search(call.module or "")
    layer = int(m.group(1)) if m else None
    out = call.outputs[0] if call.outputs else None
    base = {"index": i, "fn": fn, "name": label, "layer": layer}
    if fn in HOST_ONLY:
        if call.args.get("fastpath") in FUSED_PATHS:  # PyTorch's fused path
            return CallSite(key=f"call.module.{call.args['fastpath']}", **base)
        if call.qualname == "TransformerEncoderLayer":
            return CallSite(key="call.module.encoder_layer", **base)
        return CallSite(key="call.module", **base)
    if fn == "multi_head_attention_forward":  # its Python; the calls it makes follow
        return CallSite(key="call.mha_python", **base)
    if fn in HOST_CREATORS:
        return CallSite(key="call.empty", **base)
    if fn in ("split", "chunk", "split_with_sizes", "unbind") and all(t.view for t in call.outputs):
        return CallSite(key="call.split", **base)
    if fn in VIEW_CALLS and (out is None or out.view) and fn != "setitem":
        return CallSite(key="call.view", **base)
    if fn == "getitem" and out is not None and not out.view:  # advanced indexing: a gather
        fn = "index"
    op: Any = None
    if fn in GEMMS:
        op = _gemm(call, label)
    elif fn == "scaled_dot_product_attention":
        op = _attention(call, label)
    elif fn in NORMS:
        op = _norm(call, label)
    elif fn in SOFTMAX:
        op = _softmax(call, label)
    elif fn == "conv2d":
        op = _conv(call, label)
    elif fn in POOLS:
        op = _pool(call, label)
    elif fn == "batch_norm" and call.inputs and len(call.inputs[0].shape) == 4:
        n, c, h, w = call.inputs[0].shape
        op = BatchNorm2d(name=label, n=n, c=c, h=h, w=w, dtype=_prec(call.inputs[0]))
    elif fn == "embedding" and len(call.inputs) >= 2 and len(call.inputs[1].shape) == 2:
        op = Embedding(name=label, tokens=max(1, call.inputs[0].elements),
                       dim=call.inputs[1].shape[1], table_rows=call.inputs[1].shape[0],
                       dtype=_prec(call.inputs[1]))
    read, write = _io(call)
    target = out if out is not None else (call.inputs[0] if call.inputs else None)
    elements = float(target.elements) if target is not None else 0.0
    if fn == "setitem" and len(call.inputs) > 1:
        elements = float(call.inputs[1].elements)
    elif fn in SLICE_WRITES and len(call.inputs) > 1:
        elements = float(call.inputs[-1].elements)
    copies = matmul_operand_copies(call) if isinstance(op, Gemm) else ()
    if fn == "matmul" and isinstance(op, Gemm) and not op.shared_weights:
        fn = "bmm"  # a batched right operand: aten::bmm
    if op is not None:
        # a convolution on an NCHW tensor is the user call F.conv2d:nchw: cuDNN's layout
        # transposes, cuBLAS or PyTorch's own NCHW kernels (accelsim.workload.op_calls)
        meta: dict[str, Any] = {"call": "F.conv2d" + NCHW} \
            if fn == "conv2d" and nchw_input(call.inputs[0]) else {}
        if copies:  # matmul's folding copies: (elements, bytes) of each, and which input
            meta["operand_copies"] = tuple((t.elements, t.nbytes) for t in copies)
            meta["operand_copy_inputs"] = tuple(
                next(i for i, x in enumerate(call.inputs) if x is t) for t in copies)
        return CallSite(key=f"call.{fn}", op=op, read_bytes=read, write_bytes=write,
                        elements=elements, family="vectorized", meta=meta, **base)
    known = fn in POINTWISE or fn in COPIES or fn in REDUCTIONS or fn == "index"
    if target is None or elements <= 0 or (read + write) <= 0 and fn not in COPIES:
        # nothing to compute (an empty tensor, a host-side creator): host only
        return CallSite(key=f"call.{fn}" if known else "call.unmodelled", modelled=known,
                        **base)
    flop, sfu = POINTWISE.get(fn, (0, 0))
    carrier_fn = "copy"
    if fn in POINTWISE:
        carrier_fn = {"add": "add", "sub": "add", "mul": "mul", "div": "mul", "relu": "relu",
                      "gelu": "gelu_erf", "silu": "silu"}.get(fn.rstrip("_"), "mul")
    shape_of = call.inputs[0] if fn in REDUCTIONS and call.inputs else target
    if fn == "setitem" and len(call.inputs) > 1:
        shape_of = call.inputs[1]
    elif fn in SLICE_WRITES and len(call.inputs) > 1:
        shape_of = call.inputs[-1]
    carrier = _elementwise(label, shape_of, carrier_fn) if shape_of.elements > 0 else None
    rows = 0
    if fn in REDUCTIONS and call.inputs and out is not None and call.inputs[0].shape:
        x = call.inputs[0]
        if out.elements * x.shape[-1] == x.elements:  # over the last dimension
            rows = out.elements
    family = "strided" if fn in ("setitem", "cat", "stack", "index_copy_") or (
        fn not in REDUCTIONS and _strided(call, target)) else "vectorized"
    group = ("pointwise" if fn in POINTWISE else "copy" if fn in COPIES or fn == "index"
             else "reduction" if fn in REDUCTIONS else "")
    routine = ("erf" if fn == "erf" or fn == "gelu" and call.args.get("approximate") != "tanh"
               else "transcendental" if sfu else "")
    return CallSite(key=f"call.{fn}" if known else "call.unmodelled", op=carrier,
                    read_bytes=read, write_bytes=write, elements=elements,
                    flop_per_element=float(flop), sfu_per_element=float(sfu), family=family,
                    modelled=known, rows=rows, group=group, sfu_routine=routine,
                    meta={"fn": fn}, **base)


def call_sites(program: Program) -> list[CallSite]:
    """One :class:`CallSite` per call of ``program``, in order. A call made inside a fused
    C++ call (``args["fused"]``: :mod:`accelsim.workload.torch_fused_paths`) carries
    ``meta["fused"]``: its host time is the fused call's."""
    sites = [_site(i, c) for i, c in enumerate(program.calls)]
    sites = [dataclasses.replace(s, meta={**s.meta, "fused": c.args["fused"]})
             if c.args.get("fused") in FUSED_PATHS else s
             for s, c in zip(sites, program.calls, strict=True)]
    seen: dict[str, int] = {}
    out = []
    for s in sites:  # unique labels: the second rms_norm of a module is "<path>.rms_norm#2"
        n = seen.get(s.name, 0) + 1
        seen[s.name] = n
        if n > 1:
            label = f"{s.name}#{n}"
            op = dataclasses.replace(s.op, name=label) if dataclasses.is_dataclass(s.op) \
                and hasattr(s.op, "name") else s.op
            s = dataclasses.replace(s, name=label, op=op)
        out.append(s)
    return out


@dataclass(frozen=True, slots=True)
class CapturedWorkload(Workload):
    """A captured program as a workload: ``ops`` are the ops its calls compute (what any
    machine kind runs), ``program`` the calls themselves (what a GPU's lowering reads)."""

    program: Program | None = None


def program_workload(program: Program) -> CapturedWorkload:
    """The workload of a captured program (ops of the calls that compute)."""
    sites = call_sites(program)
    ops = tuple(s.op for s in sites if s.op is not None)
    return CapturedWorkload(program.name, ops, program.source, program=program)


def unmodelled_calls(program: Program) -> dict[str, int]:
    """Calls the lowering does not know, with their counts (costed by the stream fallback)."""
    counts: dict[str, int] = {}
    for call, site in zip(program.calls, call_sites(program), strict=True):
        if not site.modelled:
            label = call.qualname or call.fn
            counts[label] = counts.get(label, 0) + 1
    return counts


__all__ = ["COPIES", "FUSED_PATHS", "NCHW", "POINTWISE", "REDUCTIONS", "VIEW_CALLS", "CallSite",
           "CapturedWorkload", "HostCall", "call_sites", "matmul_operand_copies", "nchw_input",
           "program_workload", "unmodelled_calls"]
