"""A torch.profiler (Kineto) trace as a captured program: real traces in (issue 23 point 3).

``torch.profiler.profile(record_shapes=True)`` exported with ``export_chrome_trace`` (a
Chrome-trace JSON, optionally gzipped) records, per step, the aten ops the host ran
(``cat: cpu_op``, with ``Input Dims``/``Input type``/``Input Strides``/``Concrete Inputs``),
the CUDA launches (``cuda_runtime``/``cuda_driver``) and the kernels they started (``kernel``,
``gpu_memset``, ``gpu_memcpy``), linked by ``External id`` and ``correlation``.
:func:`read_trace` turns the step into accelsim's captured-program representation
(:class:`~accelsim.workload.program.Program`), so the one lowering that prices captured
programs (:mod:`accelsim.workload.program_ops`, ``configs/lowering/``) prices it on every
machine; no kernel duration of the trace is used.

* **Calls**: the top-level CPU ops (a ``cpu_op`` with no enclosing ``cpu_op`` on its thread,
  nested by ``ts``/``dur``; of the last ``ProfilerStep#N`` when a scheduled profile holds
  several steps), in time order, each mapped to the torch-function call it stands
  for (``aten::linear`` -> ``linear``, ``aten::matmul`` -> ``matmul``/``bmm``,
  ``aten::scaled_dot_product_attention`` and the flash/efficient/cuDNN variants -> SDPA,
  ``aten::rms_norm``, ``aten::layer_norm``, pointwise ops, ``aten::conv2d``,
  ``aten::batch_norm``, pooling, ``aten::embedding``, ``aten::copy_``, views...). Outputs are
  not in a trace: their shapes are inferred from the inputs and the scalar arguments (linear,
  matmul broadcasting, conv/pool output sizes, reductions), their strides follow the first
  input's dense layout (channels-last stays channels-last) as PyTorch's TensorIterator does.
* **Views and copies**: a view-like op (``view``, ``transpose``, ``slice``, ``alias``,
  ``reshape``, ``flatten``, ``contiguous``...) is a view unless its op tree holds a copy that
  launched a kernel (``reshape`` of a transposed tensor clones): then it is a copy of the
  nested ``copy_``'s tensors. A GEMM whose op tree holds such copies (``matmul`` of
  transposed batched operands) gets one extra ``contiguous`` call per copy, before it: those
  are PyTorch's dispatch decisions, the same on every GPU, read from the tree; their host
  dispatch is part of their parent's (other ops' helper kernels are their lowering's:
  ``batch_norm``'s parameter cast is one of its three kernels).
* **Weights**: a trace does not say which tensors are parameters; the weight slots of
  ``linear``, ``conv``, ``embedding``, the norms and a 2-D right operand of ``matmul``/``mm``
  are taken as parameters (for the memory check). Each call's ``module`` is ``op<N>`` (N: the
  top-level op's index), so a weight is counted once per call site.
* **Host time** (:data:`HOST_MODES`): ``modelled`` (default) -- the target machine's host
  table prices each call by its class, as for any captured program; ``measured`` -- each
  top-level op keeps the host time the trace recorded, from its start to the next top-level
  op's start (the Python between ops included; the last op: its own duration). A profiled
  step is slower on the host than the same step unprofiled (the profiler records every op):
  measured host times are reported as recorded, with no correction factor.
* **Unknown ops** become calls :mod:`~accelsim.workload.program_ops` does not know
  (``qualname`` ``aten::<name>``): costed by the ``call.unmodelled`` fallback and listed.

Every read is bounded (:data:`~accelsim.limits.MAX_FILE_BYTES` compressed and decompressed,
the JSON nesting limit, :data:`~accelsim.workload.program.MAX_CALLS`, each dimension within
:data:`~accelsim.limits.MAX_DIM` and each tensor within
:data:`~accelsim.limits.MAX_TENSOR_ELEMENTS`); a bad file is a one-line
:class:`~accelsim.errors.WorkloadError` naming the file, the field and the value. Units:
seconds (the trace's microseconds converted), elements, decimal bytes.

Imports: errors, limits, files, workload.program, workload.program_ops.
"""

from __future__ import annotations

import dataclasses
import gzip
import math
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelsim.errors import WorkloadError
from accelsim.limits import MAX_DIM, MAX_FILE_BYTES, MAX_TENSOR_ELEMENTS, parse_json
from accelsim.workload.program import MAX_CALLS, MAX_RANK, Call, Program, TensorInfo, file_head
from accelsim.workload.program_ops import (
    COPIES,
    POINTWISE,
    REDUCTIONS,
    CapturedWorkload,
    program_workload,
)

HOST_MODES = ("modelled", "measured")
"""How a trace's host time is replayed (the ``host`` parameter: ``trace.json.gz:host=measured``)."""

DEFAULT_HOST = "modelled"
"""The default: the target machine's host table (a trace replayed on another machine)."""

STEP_PREFIX = "ProfilerStep#"
"""Name of the annotation a scheduled profiler puts around each step (the last is replayed)."""

MAX_TRACE_EVENTS = 5_000_000
"""Most events one trace may hold (a 32-layer decoder step is about 7,000)."""

DEVICE_CATS = frozenset({"kernel", "gpu_memset", "gpu_memcpy"})
"""Event categories of work on the GPU (kernels, memsets, memcpys)."""

LAUNCH_CATS = frozenset({"cuda_runtime", "cuda_driver"})
"""Event categories of host-side CUDA calls (launches carry the ``correlation`` id)."""

TYPE_DTYPES: dict[str, str] = {
    "c10::BFloat16": "bfloat16", "c10::Half": "float16", "float": "float32",
    "double": "float64", "long int": "int64", "long": "int64", "int": "int32",
    "short int": "int16", "short": "int16", "signed char": "int8", "unsigned char": "uint8",
    "bool": "bool", "c10::Float8_e4m3fn": "float8_e4m3fn", "c10::Float8_e5m2": "float8_e5m2",
    "c10::Float8_e4m3fnuz": "float8_e4m3fnuz", "c10::Float8_e5m2fnuz": "float8_e5m2fnuz",
    "c10::complex<float>": "complex64"}
"""``Input type`` names of tensors -> torch dtype names (others are scalars or lists)."""

SCALAR_TYPES: dict[int, str] = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
    7: "float64", 11: "bool", 15: "bfloat16", 23: "float8_e5m2", 24: "float8_e4m3fn"}
"""c10 ``ScalarType`` codes (a ``dtype`` argument in ``Concrete Inputs``) -> torch dtype names."""

VIEW_OPS = frozenset({
    "view", "_unsafe_view", "_reshape_alias", "transpose", "t", "permute", "unsqueeze",
    "squeeze", "expand", "expand_as", "alias", "slice", "select", "as_strided", "narrow",
    "detach", "view_as", "unflatten", "movedim", "swapaxes", "numpy_T", "unfold", "lift_fresh",
    "split", "split_with_sizes", "chunk", "unbind", "reshape", "reshape_as", "flatten",
    "contiguous", "dropout", "_unsafe_split", "real", "imag"})
"""Top-level ops that are views unless their op tree copies."""

SPLIT_OPS = frozenset({"split", "split_with_sizes", "chunk", "unbind", "_unsafe_split"})

RESHAPING = frozenset({"reshape", "reshape_as", "flatten", "contiguous"})
"""View-like ops that copy when their input cannot be viewed (a copy in their op tree)."""

GEMM_OPS = frozenset({"linear", "matmul", "mm", "bmm", "addmm", "baddbmm"})
GEMM_CALLS = GEMM_OPS
"""Calls whose op tree's copies become calls of their own (a GEMM's own kernels are the GEMM's;
the other ops' lowering counts their helper kernels: ``batch_norm``'s parameter cast is one of
its three)."""
SDPA_CAUSAL_ARG = {
    "scaled_dot_product_attention": 5, "_scaled_dot_product_flash_attention": 4,
    "_scaled_dot_product_efficient_attention": 6, "_scaled_dot_product_cudnn_attention": 6,
    "_scaled_dot_product_flash_attention_for_cpu": 4}
"""SDPA ops, with the position of their ``is_causal`` argument."""

NORM_OPS = {"rms_norm": "rms_norm", "_fused_rms_norm": "rms_norm", "layer_norm": "layer_norm",
            "native_layer_norm": "layer_norm", "group_norm": "group_norm",
            "native_group_norm": "group_norm"}
SOFTMAX_OPS = {"softmax": "softmax", "_softmax": "softmax", "log_softmax": "log_softmax",
               "_log_softmax": "log_softmax"}
CONV_OPS = {"conv2d": 6, "convolution": 8, "_convolution": 8, "cudnn_convolution": 5}
"""Convolution ops, with the position of their ``groups`` argument (stride, padding, dilation
follow the weight and bias at 3, 4, 5; ``cudnn_convolution`` has no bias: padding 2, stride 3,
dilation 4)."""
POOL_OPS = frozenset({"max_pool2d", "max_pool2d_with_indices", "avg_pool2d",
                      "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "adaptive_max_pool2d"})
CREATORS = frozenset({"zeros", "ones", "full", "empty", "empty_strided", "arange", "randn",
                      "rand", "scalar_tensor"})
"""Factory ops: their size is their first argument."""


def _fail(file: str, where: str | None, value: Any, reason: str) -> WorkloadError:
    return WorkloadError(file, where, value, reason)


@dataclass(frozen=True, slots=True)
class TraceOp:
    """One top-level CPU op of the trace and the GPU work it launched (for reports)."""

    name: str
    """The aten op (``aten::linear``)."""
    ts_s: float
    """Start on the host, seconds from the step's first op."""
    host_s: float
    """Measured host time: to the next top-level op's start (the last op: its duration)."""
    kernels: tuple[str, ...] = ()
    """Names of the kernels (and memsets/memcpys) it launched, in launch order."""
    kernel_s: float = 0.0
    """Their summed duration on the source GPU, seconds."""
    calls: tuple[int, ...] = ()
    """Indices of the program calls it became (inner copies first)."""
    call_kernels: tuple[int, ...] = ()
    """Kernels (not memsets/memcpys) attributed to each of ``calls``."""


@dataclass(frozen=True, slots=True)
class KinetoTrace:
    """A trace read: the program of its step, each call's measured host time, its ops."""

    program: Program
    host_s: tuple[float, ...]
    """Measured host seconds per program call (inner copies: 0, inside their parent)."""
    inner: tuple[bool, ...]
    """Per call: an inner copy (its host dispatch is part of its parent call's)."""
    ops: tuple[TraceOp, ...]
    step_s: float
    """The trace's own step: first top-level op's start to the last GPU activity's end."""
    device: str = ""
    """The profiled GPU (``deviceProperties[0].name``), if recorded."""

    @property
    def kernel_count(self) -> int:
        """Kernels in the step (memsets and memcpys excepted)."""
        return sum(sum(o.call_kernels) for o in self.ops)

    @property
    def kernel_s(self) -> float:
        """Summed duration of the GPU activity of the step on the source GPU, seconds."""
        return sum(o.kernel_s for o in self.ops)


@dataclass(frozen=True, slots=True)
class TraceWorkload(CapturedWorkload):
    """A trace's program as a workload: ``host_s`` (per call: measured seconds, or None for
    the machine's host table) is what a GPU's replay reads in place of the table's classes."""

    host_s: tuple[float | None, ...] | None = None
    host: str = DEFAULT_HOST
    trace: KinetoTrace | None = field(default=None, repr=False, compare=False)


def _open_text(path: Path, file: str) -> str:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _fail(file, None, f"{size} bytes", f"larger than {MAX_FILE_BYTES} bytes")
    with open(path, "rb") as fh:
        head = fh.read(2)
    try:
        if head == b"\x1f\x8b":
            with gzip.open(path, "rb") as fh:
                raw = fh.read(MAX_FILE_BYTES + 1)
            if len(raw) > MAX_FILE_BYTES:
                raise _fail(file, None, "decompressed", f"larger than {MAX_FILE_BYTES} bytes "
                            "once decompressed")
        else:
            raw = path.read_bytes()
        return raw.decode("utf-8")
    except (EOFError, OSError, zlib.error) as exc:
        raise _fail(file, None, None, f"not a readable gzip file ({exc})") from None
    except UnicodeDecodeError as exc:
        raise _fail(file, None, None, f"not valid JSON ({str(exc).splitlines()[0]})") from None


def _split_spec(spec: str | os.PathLike) -> tuple[str, dict[str, str]]:
    text = str(spec)
    name, colon, rest = text.partition(":")
    if not colon or "=" not in rest:
        return text.strip(), {}
    params: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise _fail(name.strip(), item, None, "parameters are given as NAME=VALUE")
        params[key.strip()] = value.strip()
    return name.strip(), params


def is_trace_path(name: str | os.PathLike) -> bool:
    """Whether ``name`` (``FILE[.json|.json.gz][:host=...]``) is a Chrome-trace file from
    torch.profiler: JSON (or gzipped JSON) whose first 4 KiB hold ``"traceEvents"`` or
    ``"schemaVersion"``."""
    text = str(name).partition(":")[0].strip()
    low = text.lower()
    if not (low.endswith(".json") or low.endswith(".json.gz") or low.endswith(".gz")):
        return False
    head = file_head(text, 4096, gunzip=True)
    if head is None:
        return False
    return b'"traceEvents"' in head or b'"schemaVersion"' in head


def _number(file: str, where: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise _fail(file, where, v, "expected a finite number >= 0")
    return float(v)


def _scalar(text: Any) -> Any:
    """A ``Concrete Inputs`` string as a Python value (None, bool, int, float, list, str)."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if s == "":
        return None
    if s in ("True", "False"):
        return s == "True"
    if s.startswith("[") and s.endswith("]"):
        items = [x.strip() for x in s[1:-1].split(",") if x.strip()]
        out = [_scalar(x) for x in items[:MAX_RANK]]
        return out if all(isinstance(x, (int, float)) and not isinstance(x, bool)
                          for x in out) else None
    try:
        return int(s)
    except ValueError:
        pass
    try:
        v = float(s)
        return v if math.isfinite(v) else None
    except ValueError:
        return s[:200]


def _dims(file: str, where: str, raw: Any) -> tuple[int, ...]:
    if not isinstance(raw, list) or len(raw) > MAX_RANK:
        raise _fail(file, where, raw, f"expected a list of at most {MAX_RANK} integers")
    for v in raw:
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_DIM:
            raise _fail(file, where, v, f"expected an integer 0..{MAX_DIM}")
    if math.prod(raw) > MAX_TENSOR_ELEMENTS:
        raise _fail(file, where, raw, f"more than the limit of {MAX_TENSOR_ELEMENTS:,} elements")
    return tuple(raw)


def _contiguous(shape: Sequence[int]) -> tuple[int, ...]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(1, s)
    return tuple(reversed(out))


def _dense_like(shape: tuple[int, ...], like: TensorInfo) -> tuple[int, ...]:
    """Strides of a new tensor of ``shape`` laid out as ``like`` (same rank and shape and a
    dense permuted layout, e.g. channels-last), else row-major."""
    if like.shape != shape or len(shape) < 2:
        return _contiguous(shape)
    order = sorted(range(len(shape)), key=lambda d: (like.stride[d], -d))
    acc, out = 1, [0] * len(shape)
    for d in order:
        if like.stride[d] != acc and shape[d] != 1:
            return _contiguous(shape)
        out[d] = acc
        acc *= max(1, shape[d])
    return tuple(out)


@dataclass
class _Op:
    """A cpu_op being read: its event, parsed inputs, children and launched GPU work."""

    index: int
    name: str
    ts: float
    dur: float
    tid: Any
    ext: Any
    args: Mapping[str, Any]
    children: list[_Op] = field(default_factory=list)
    gpu: list[Mapping[str, Any]] = field(default_factory=list)

    def subtree(self) -> list[_Op]:
        out, stack = [], [self]
        while stack:
            op = stack.pop()
            out.append(op)
            stack.extend(reversed(op.children))
        return out

    def launched(self) -> bool:
        return any(o.gpu for o in self.subtree())


def _inputs(file: str, op: _Op) -> tuple[list[TensorInfo | None], list[Any]]:
    """Per argument: its tensor (or None) and its concrete scalar value (or None)."""
    where = f"traceEvents[{op.index}].args"
    dims = op.args.get("Input Dims", [])
    types = op.args.get("Input type", [])
    strides = op.args.get("Input Strides", [])
    concrete = op.args.get("Concrete Inputs", [])
    for key, v in (("Input Dims", dims), ("Input type", types), ("Input Strides", strides),
                   ("Concrete Inputs", concrete)):
        if not isinstance(v, list) or len(v) > 4096:
            raise _fail(file, f"{where}.{key}", v, "expected a list (one entry per argument)")
    tensors: list[TensorInfo | None] = []
    values: list[Any] = []
    for j, d in enumerate(dims):
        typ = types[j] if j < len(types) else ""
        value = _scalar(concrete[j]) if j < len(concrete) else None
        dtype = TYPE_DTYPES.get(typ) if isinstance(typ, str) else None
        if isinstance(d, list) and d and all(isinstance(x, list) for x in d):  # a TensorList
            shapes = [_dims(file, f"{where}.Input Dims[{j}][{i}]", x) for i, x in enumerate(d)]
            tensors.append(None)
            values.append([TensorInfo(s, "bfloat16", _contiguous(s)) for s in shapes])
            continue
        shape = _dims(file, f"{where}.Input Dims[{j}]", d)
        if dtype is None:
            tensors.append(None)
            values.append(value)
            continue
        st = strides[j] if j < len(strides) else None
        if isinstance(st, list) and len(st) == len(shape) and all(
                isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_DIM for x in st):
            stride = tuple(st)
        else:
            stride = _contiguous(shape)
        tensors.append(TensorInfo(shape, dtype, stride))
        values.append(value)
    return tensors, values


def _param(t: TensorInfo | None) -> TensorInfo | None:
    if t is None:
        return None
    return TensorInfo(t.shape, t.dtype, t.stride, param=True)


def _new(shape: Sequence[int], dtype: str, like: TensorInfo | None = None) -> TensorInfo:
    shape = tuple(int(s) for s in shape)
    stride = _dense_like(shape, like) if like is not None else _contiguous(shape)
    return TensorInfo(shape, dtype, stride)


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        size = 1
        for s in shapes:
            k = i - (rank - len(s))
            if k >= 0 and s[k] != 1:
                size = s[k]
        out.append(size)
    return tuple(out)


def _pair(v: Any, default: int) -> tuple[int, int]:
    if isinstance(v, list) and v:
        v = v if len(v) > 1 else [v[0], v[0]]
        return int(v[0]), int(v[1])
    if isinstance(v, int) and not isinstance(v, bool):
        return v, v
    return default, default


def _matmul_shape(a: TensorInfo, b: TensorInfo) -> tuple[int, ...]:
    if len(b.shape) == 1:
        return a.shape[:-1]
    if len(a.shape) == 1:
        return (*b.shape[:-2], b.shape[-1])
    batch = _broadcast([a.shape[:-2], b.shape[:-2]])
    return (*batch, a.shape[-2], b.shape[-1])


def _pool_size(h: int, r: int, s: int, p: int, d: int = 1, ceil: bool = False) -> int:
    span = h + 2 * p - d * (r - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= h + p:
        out -= 1
    return max(0, out)


def _reduce_shape(x: TensorInfo, dim: Any, keepdim: bool) -> tuple[int, ...]:
    rank = len(x.shape)
    if dim is None or dim == []:
        dims = set(range(rank))
    else:
        dims = {(d % rank) if rank else 0 for d in (dim if isinstance(dim, list) else [dim])
                if isinstance(d, int)}
    return tuple(1 if i in dims else s for i, s in enumerate(x.shape) if keepdim or i not in dims)


def _main_call(op: _Op, base: str, ts: list[TensorInfo | None], vals: list[Any],
               module: str) -> Call:
    """The torch-function call a top-level op stands for (its inputs and inferred output)."""
    tensors = [t for t in ts if t is not None]
    qual = op.name
    first = tensors[0] if tensors else None

    def call(fn: str, inputs: Sequence[TensorInfo | None], outputs: Sequence[TensorInfo] = (),
             args: Mapping[str, Any] | None = None) -> Call:
        return Call(fn, tuple(t for t in inputs if t is not None), tuple(outputs),
                    dict(args or {}), module, qual)

    def val(i: int) -> Any:
        return vals[i] if i < len(vals) else None

    def arg(i: int) -> TensorInfo | None:
        return ts[i] if i < len(ts) else None

    if base in GEMM_OPS and len(tensors) >= 2:
        if base == "linear":
            x, w, b = arg(0), arg(1), arg(2)
            if x is not None and w is not None and len(w.shape) == 2 and x.shape:
                return call("linear", [x, _param(w), _param(b)],
                            [_new((*x.shape[:-1], w.shape[0]), x.dtype)])
        elif base in ("addmm", "baddbmm") and len(tensors) >= 3:
            c, a, b = tensors[0], tensors[1], tensors[2]
            if len(a.shape) >= 2 and len(b.shape) >= 2:
                return call(base, [c, a, b], [_new(_matmul_shape(a, b), a.dtype)])
        else:
            a, b = tensors[0], tensors[1]
            if a.shape and b.shape:
                wb = _param(b) if len(b.shape) == 2 and base in ("matmul", "mm") else b
                fn = "matmul" if base == "mm" else base
                return call(fn, [a, wb], [_new(_matmul_shape(a, b), a.dtype)])
    if base in SDPA_CAUSAL_ARG and len(tensors) >= 3:
        q, v = tensors[0], tensors[2]
        if all(len(t.shape) >= 3 for t in tensors[:3]):
            causal = val(SDPA_CAUSAL_ARG[base]) is True
            return call("scaled_dot_product_attention", tensors[:3],
                        [_new((*q.shape[:-1], v.shape[-1]), q.dtype)], {"is_causal": causal})
    if base in NORM_OPS and first is not None:
        fn = NORM_OPS[base]
        args: dict[str, Any] = {}
        if fn != "group_norm" and isinstance(val(1), list):
            args["normalized_shape"] = val(1)
        return call(fn, [first, *(_param(t) for t in tensors[1:3])],
                    [_new(first.shape, first.dtype, first)], args)
    if base in SOFTMAX_OPS and first is not None:
        dim = val(1) if isinstance(val(1), int) else -1
        return call(SOFTMAX_OPS[base], [first], [_new(first.shape, first.dtype, first)],
                    {"dim": dim})
    if base == "embedding" and len(tensors) >= 2 and len(tensors[0].shape) == 2:
        w, ids = tensors[0], tensors[1]
        return call("embedding", [ids, _param(w)], [_new((*ids.shape, w.shape[1]), w.dtype)])
    if base in CONV_OPS and len(tensors) >= 2 and len(tensors[0].shape) == 4 \
            and len(tensors[1].shape) == 4:
        x, w = tensors[0], tensors[1]
        if base == "cudnn_convolution":
            pad, stride, dil = _pair(val(2), 0), _pair(val(3), 1), _pair(val(4), 1)
        else:
            stride, pad, dil = _pair(val(3), 1), _pair(val(4), 0), _pair(val(5), 1)
        groups = val(CONV_OPS[base])
        groups = groups if isinstance(groups, int) and not isinstance(groups, bool) \
            and groups > 0 else 1
        oh = _pool_size(x.shape[2], w.shape[2], stride[0], pad[0], dil[0])
        ow = _pool_size(x.shape[3], w.shape[3], stride[1], pad[1], dil[1])
        out = (x.shape[0], w.shape[0], oh, ow)
        strides = _channels_last(out) if _is_channels_last(x) else _contiguous(out)
        bias = arg(2) if base != "cudnn_convolution" else None
        return call("conv2d", [x, _param(w), _param(bias)], [TensorInfo(out, x.dtype, strides)],
                    {"stride": list(stride), "padding": list(pad), "groups": groups})
    if base == "batch_norm" or base == "native_batch_norm" or base == "_batch_norm_impl_index":
        if first is not None and len(first.shape) == 4:
            return call("batch_norm", [first, *(_param(t) for t in tensors[1:5])],
                        [_new(first.shape, first.dtype, first)])
    if base in POOL_OPS and first is not None and len(first.shape) == 4:
        n, c, h, w = first.shape
        if base.lstrip("_").startswith("adaptive"):
            size = _pair(val(1), 1)
            out = (n, c, size[0], size[1])
            fn = "adaptive_avg_pool2d" if "avg" in base else "adaptive_max_pool2d"
            return call(fn, [first], [_shaped(out, first)], {"output_size": list(size)})
        r = _pair(val(1), 2)
        s = _pair(val(2), r[0]) if val(2) not in (None, []) else r
        p = _pair(val(3), 0)
        mx = base.startswith("max")
        d = _pair(val(4), 1) if mx else (1, 1)
        ceil = bool(val(5) if mx else val(4))
        out = (n, c, _pool_size(h, r[0], s[0], p[0], d[0], ceil),
               _pool_size(w, r[1], s[1], p[1], d[1], ceil))
        return call("max_pool2d" if mx else "avg_pool2d", [first], [_shaped(out, first)],
                    {"kernel_size": list(r), "stride": list(s), "padding": list(p)})
    if base == "copy_" and len(tensors) >= 2:
        dst, src = tensors[0], tensors[1]
        return call("copy_", [src], [dst])
    fn = base
    if fn in POINTWISE and tensors:
        inplace = fn.endswith("_")
        shapes = [t.shape for t in tensors if t.shape or len(tensors) == 1]
        shape = _broadcast(shapes) if shapes else ()
        lead = next((t for t in tensors if t.shape == shape), tensors[0])
        args = {"approximate": val(1)} if fn == "gelu" and isinstance(val(1), str) else {}
        if inplace:
            return call(fn, tensors, [], args)
        return call(fn, tensors, [_new(shape, lead.dtype, lead)], args)
    if fn in REDUCTIONS and first is not None:
        keep = val(2) is True
        return call(fn, [first], [_new(_reduce_shape(first, val(1), keep), first.dtype)],
                    {"dim": val(1)} if isinstance(val(1), (int, list)) else {})
    if fn in ("clone", "_to_copy", "to") and first is not None:
        dtype = first.dtype
        code = val(1)
        if fn != "clone" and isinstance(code, int) and code in SCALAR_TYPES:
            dtype = SCALAR_TYPES[code]
        return call("clone" if fn == "clone" else "to", [first],
                    [_new(first.shape, dtype, first)])
    if fn == "cat" and vals and isinstance(vals[0], list) and vals[0] \
            and all(isinstance(t, TensorInfo) for t in vals[0]):
        parts: list[TensorInfo] = vals[0]
        dim = val(1) if isinstance(val(1), int) else 0
        rank = len(parts[0].shape)
        if rank and all(len(t.shape) == rank for t in parts):
            d = dim % rank
            shape = list(parts[0].shape)
            shape[d] = sum(t.shape[d] for t in parts)
            return call("cat", parts, [_new(shape, parts[0].dtype)], {"dim": dim})
    if fn == "index_select" and len(tensors) >= 2 and isinstance(val(1), int):
        x, idx = tensors[0], tensors[1]
        shape = list(x.shape)
        if shape:
            shape[val(1) % len(shape)] = idx.elements
        return call("index_select", [x, idx], [_new(shape, x.dtype)])
    if fn in ("fill_", "zero_") and first is not None:
        return call(fn, [first])
    if fn in CREATORS and isinstance(val(0), list):
        code = val(1)
        dtype = SCALAR_TYPES.get(code, "float32") if isinstance(code, int) else "float32"
        try:
            shape = _dims("", "", val(0))
        except WorkloadError:
            shape = ()
        return call("empty" if fn.startswith("empty") else "zeros" if fn != "full"
                    else "full", [], [_new(shape, dtype)])
    if fn in COPIES and first is not None:
        return call(fn, [first], [_new(first.shape, first.dtype, first)])
    return call(fn, tensors)


def _is_channels_last(t: TensorInfo) -> bool:
    return len(t.shape) == 4 and t.stride == _channels_last(t.shape) and not t.contiguous


def _channels_last(shape: tuple[int, ...]) -> tuple[int, ...]:
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def _shaped(shape: tuple[int, ...], like: TensorInfo) -> TensorInfo:
    strides = _channels_last(shape) if _is_channels_last(like) else _contiguous(shape)
    return TensorInfo(tuple(shape), like.dtype, strides)


def _copies(file: str, op: _Op) -> list[tuple[_Op, TensorInfo, TensorInfo]]:
    """The kernel-launching ``copy_`` ops of ``op``'s tree: (op, destination, source)."""
    out = []
    for o in op.subtree()[1:]:
        if o.name == "aten::copy_" and o.gpu:
            ts, _ = _inputs(file, o)
            tensors = [t for t in ts if t is not None]
            if len(tensors) >= 2:
                out.append((o, tensors[0], tensors[1]))
    return out


def _calls_of(file: str, op: _Op, index: int) -> tuple[list[Call], list[_Op | None]]:
    """The calls one top-level op becomes and, per call, the op whose kernels it stands for
    (None: the whole tree)."""
    base = op.name.removeprefix("aten::")
    module = f"op{index}"
    ts, vals = _inputs(file, op)
    copies = _copies(file, op)
    first = next((t for t in ts if t is not None), None)
    if base in VIEW_OPS:
        if copies and base in RESHAPING:
            _, dst, src = copies[-1]
            out = TensorInfo(dst.shape, dst.dtype, dst.stride)
            fn = "reshape" if base.startswith("reshape") else base
            return [Call(fn, (src,), (out,), {}, module, op.name)], [None]
        if not op.launched():
            fn = "split" if base in SPLIT_OPS else "view"
            return [Call(fn, (first,) if first is not None else (), (), {}, module,
                         op.name)], [None]
    main = _main_call(op, base, ts, vals, module)
    if main.fn not in GEMM_CALLS or not copies:
        if main.fn in ("to", "clone", "contiguous") and not op.launched():
            return [Call("view", main.inputs, (), {}, module, op.name)], [None]
        return [main], [None]
    inner = [Call("contiguous", (src,), (TensorInfo(dst.shape, dst.dtype, dst.stride),), {},
                  module, "aten::copy_") for _, dst, src in copies]
    # the GEMM reads the copies: its operands are their contiguous results (so the lowering
    # does not derive matmul's folding copies a second time: program_ops.matmul_operand_copies)
    made = {(src.shape, src.stride, src.dtype): c.outputs[0]
            for c, (_, _, src) in zip(inner, copies, strict=True)}
    main = dataclasses.replace(main, inputs=tuple(
        made.get((t.shape, t.stride, t.dtype), t) for t in main.inputs))
    return [*inner, main], [o for o, _, _ in copies] + [None]


def _events(file: str, doc: Any) -> list[Any]:
    if not isinstance(doc, Mapping):
        raise _fail(file, None, type(doc).__name__, "expected a JSON object (a Chrome trace)")
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        raise _fail(file, "traceEvents", None if events is None else type(events).__name__,
                    "expected a list of trace events (a torch.profiler Chrome trace)")
    if len(events) > MAX_TRACE_EVENTS:
        raise _fail(file, "traceEvents", f"{len(events)} events",
                    f"at most {MAX_TRACE_EVENTS:,} events")
    return events


def trace_from_json(doc: Any, *, file: str = "<trace>", name: str | None = None) -> KinetoTrace:
    """A :class:`KinetoTrace` from a parsed Chrome-trace document, every used field checked."""
    events = _events(file, doc)
    cpu: list[_Op] = []
    gpu: list[tuple[int, Mapping[str, Any]]] = []
    launches: dict[Any, Any] = {}
    steps: list[tuple[float, float]] = []
    for i, e in enumerate(events):
        if not isinstance(e, Mapping):
            continue
        cat = e.get("cat")
        step = str(e.get("name", "")).startswith(STEP_PREFIX)
        if cat not in ("cpu_op", *DEVICE_CATS, *LAUNCH_CATS) and not step:
            continue
        where = f"traceEvents[{i}]"
        ts = _number(file, f"{where}.ts", e.get("ts"))
        dur = _number(file, f"{where}.dur", e.get("dur", 0.0))
        args = e.get("args", {})
        if not isinstance(args, Mapping):
            raise _fail(file, f"{where}.args", args, "expected an object")
        if step:
            if cat in ("cpu_op", "user_annotation"):  # (not its GPU-side twin)
                steps.append((ts, ts + dur))
        elif cat == "cpu_op":
            nm = e.get("name")
            if not isinstance(nm, str) or not nm or len(nm) > 1000:
                raise _fail(file, f"{where}.name", nm, "expected an op name")
            cpu.append(_Op(i, nm, ts, dur, e.get("tid"), args.get("External id"), args))
        elif cat in LAUNCH_CATS:
            launches[args.get("correlation")] = args.get("External id")
        else:
            gpu.append((i, e))
    if steps:  # a scheduled profile of several steps: the last one
        lo, hi = max(steps)
        cpu = [o for o in cpu if lo <= o.ts < hi]
    if not cpu:
        raise _fail(file, "traceEvents", "no cpu_op events",
                    "expected the host's aten ops (torch.profiler with ProfilerActivity.CPU)")
    cpu.sort(key=lambda o: (o.ts, -o.dur, o.index))
    tops: list[_Op] = []
    stacks: dict[Any, list[_Op]] = {}
    by_ext: dict[Any, _Op] = {}
    for o in cpu:
        stack = stacks.setdefault(o.tid, [])
        while stack and o.ts >= stack[-1].ts + stack[-1].dur:
            stack.pop()
        if stack:
            stack[-1].children.append(o)
        else:
            tops.append(o)
        stack.append(o)
        if o.ext is not None:
            by_ext.setdefault(o.ext, o)
    if len(tops) > MAX_CALLS:
        raise _fail(file, "traceEvents", f"{len(tops)} top-level ops", f"at most {MAX_CALLS:,}")
    last_end = 0.0
    for _, e in gpu:
        args = e.get("args", {})
        ext = args.get("External id")
        owner = by_ext.get(ext)
        if owner is None:
            owner = by_ext.get(launches.get(args.get("correlation")))
        if owner is not None:
            owner.gpu.append(e)
            last_end = max(last_end, float(e["ts"]) + float(e.get("dur", 0.0)))
    t0 = tops[0].ts
    calls: list[Call] = []
    host: list[float] = []
    inner: list[bool] = []
    ops: list[TraceOp] = []
    for n, o in enumerate(tops):
        made, owners = _calls_of(file, o, n)
        nxt = tops[n + 1].ts if n + 1 < len(tops) else o.ts + o.dur
        host_s = max(0.0, nxt - o.ts) * 1e-6
        tree = o.subtree()
        claimed = {id(w) for w in owners if w is not None}
        per = []
        for w in owners:
            src = [w] if w is not None else [x for x in tree if id(x) not in claimed]
            per.append(sum(1 for x in src for g in x.gpu if g.get("cat") == "kernel"))
        work = sorted((g for x in tree for g in x.gpu), key=lambda g: g.get("ts", 0.0))
        start = len(calls)
        calls.extend(made)
        for k in range(len(made)):
            main = k == len(made) - 1
            host.append(host_s if k == 0 else 0.0)
            inner.append(not main)
        ops.append(TraceOp(o.name, (o.ts - t0) * 1e-6, host_s,
                           tuple(str(g.get("name", ""))[:200] for g in work),
                           sum(float(g.get("dur", 0.0)) for g in work) * 1e-6,
                           tuple(range(start, len(calls))), tuple(per)))
    if not calls:
        raise _fail(file, "traceEvents", "no top-level cpu_op", "nothing to replay")
    end = max(last_end, max(o.ts + o.dur for o in tops))
    device = ""
    props = doc.get("deviceProperties")
    if isinstance(props, list) and props and isinstance(props[0], Mapping):
        device = str(props[0].get("name", ""))[:200]
    label = name or Path(file).name.removesuffix(".gz").removesuffix(".json")
    program = Program(name=label, calls=tuple(calls),
                      framework=f"torch.profiler trace ({device})" if device else
                      "torch.profiler trace", source=file)
    return KinetoTrace(program, tuple(host), tuple(inner), tuple(ops), (end - t0) * 1e-6,
                       device)


def read_trace(path: str | os.PathLike) -> KinetoTrace:
    """Read and check a torch.profiler Chrome trace (``.json`` or ``.json.gz``)."""
    from accelsim.files import resolve_path

    p = resolve_path(str(path), "workloads", suffixes=("",))
    file = str(p)
    doc = parse_json(_open_text(p, file), file=file, error=WorkloadError)
    return trace_from_json(doc, file=file)


def trace_workload(spec: str | os.PathLike, host: str | None = None) -> TraceWorkload:
    """The workload of a trace spec ``FILE[:host=modelled|measured]`` (``host`` overrides)."""
    name, params = _split_spec(spec)
    unknown = sorted(set(params) - {"host"})
    if unknown:
        raise _fail(name, unknown[0], params[unknown[0]],
                    "a Kineto trace takes one parameter: host=modelled|measured")
    mode = host or params.get("host", DEFAULT_HOST)
    if mode not in HOST_MODES:
        raise _fail(name, "host", mode, f"expected one of {', '.join(HOST_MODES)}")
    trace = read_trace(name)
    wl = program_workload(trace.program)
    if mode == "measured":
        host_s: tuple[float | None, ...] = trace.host_s
    else:  # the machine's table; an inner copy's dispatch is inside its parent call's class
        host_s = tuple(0.0 if i else None for i in trace.inner)
    return TraceWorkload(wl.name, wl.ops, wl.source, program=wl.program, host_s=host_s,
                         host=mode, trace=trace)


__all__ = ["DEFAULT_HOST", "HOST_MODES", "KinetoTrace", "TraceOp", "TraceWorkload",
           "is_trace_path", "read_trace", "trace_from_json", "trace_workload"]
