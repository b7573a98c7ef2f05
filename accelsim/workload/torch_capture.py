"""Capture a PyTorch program: run a callable once under a torch-function mode and record its calls.

The mode (:class:`torch.overrides.TorchFunctionMode`) sees every call at the torch-function
level (``F.linear``, ``F.rms_norm``, ``F.scaled_dot_product_attention``, ``Tensor.add``,
``Tensor.view``, ``Tensor.__setitem__``...) *before* PyTorch chooses a device's kernels, and
does not see the calls a function makes inside itself (the mode is off while a call runs),
so ``F.rms_norm`` is one call on every device even though ``meta``/CPU decompose it. Each
tensor is numbered by object (``TensorInfo.tensor_id``): a call's input carries the number of
the call output it is, the dataflow a compiler fuses along. Module
boundaries come from global forward hooks: each ``nn.Module.__call__`` is recorded as a
``module`` call with its path (``layers.0.attn.q_proj``). Example tensors may live on the
``meta`` device: nothing is allocated and no weights are needed.

**Known values.** Model code computes small index tensors from Python numbers (``torch.arange``
of the positions, ``cache_position``, a mask's length) and sometimes branches on them (Hugging
Face's packed-sequence check ``(position_diff != 1).cumsum(-1)[:, -1] == 0).all()``, a cache's
length). A tensor made by a call whose tensor inputs all have known values, of at most
:data:`KNOWN_MAX_ELEMENTS` elements, gets its value computed once more on the CPU beside the
meta result (weights and activations never do: they descend from meta parameters or inputs);
``bool()``, ``.item()``, ``.tolist()``, ``int()`` of such a tensor answer from it, as the real
run would, so the branch the real run takes is the one captured. The recorded calls are
unchanged (meta shapes and strides).

**Convolution output layout.** On CUDA a convolution whose input or weight is channels-last
returns a channels-last tensor; the ``meta`` kernel returns a contiguous one. Capture gives it
the CUDA layout, so a channels-last CNN stays channels-last call after call and an NCHW one
NCHW (the GPU lowering prices a convolution on an NCHW tensor as ``F.conv2d:nchw``:
``accelsim.workload.op_calls``).

**SDPA's output layout.** ``F.scaled_dot_product_attention`` on an H100/H200 runs cuDNN's
kernel, which allocates its output in the query's memory layout: for the usual query
``x.view(b, s, h, d).transpose(1, 2)``, a ``(batch, heads, seq, dim)`` view of a
``(batch, seq, heads, dim)`` buffer; the ``meta`` kernel always returns a contiguous tensor.
Capture gives a 4-D meta result the query's layout, so the ``out.transpose(1, 2)
.contiguous()`` / ``.reshape(b, s, -1)`` that follows is the view it is on the GPU (run 1's
prefill profiles: no copy kernel after SDPA), not a copy.

**PyTorch's fused paths.** In inference on a GPU, ``nn.TransformerEncoderLayer`` and
``nn.MultiheadAttention`` run one fused C++ call, a path PyTorch refuses on ``meta`` and under
this mode. Capture decides as the GPU run would (:mod:`accelsim.workload.torch_fused_paths`):
a module that may take it has its calls held until it returns; then either the fused call's
own calls are recorded in their place (marked ``args["fused"]``, the module call
``args["fastpath"]``), or, masked, the held calls of its Python path are kept.
``F.multi_head_attention_forward`` itself is recorded as a host-only call followed by the
calls its Python makes.

A call that still fails while capturing (data-dependent control flow on an activation, such as
``.item()`` or ``if tensor:`` of a meta tensor without a known value, a custom extension op
without a meta kernel) is a one-line
:class:`~accelsim.errors.WorkloadError` naming the call and what to do. ``torch`` is an
optional extra (``pip install accelsim[torch]``).

Imports: torch (lazily), errors, workload.program, workload.torch_fused_paths.
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Callable
from typing import Any

from accelsim.errors import WorkloadError
from accelsim.workload.program import MAX_CALLS, Call, Program, TensorInfo

_DUNDER = {"__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
           "__rsub__": "sub", "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul",
           "__imul__": "mul_", "__truediv__": "div", "__rtruediv__": "div",
           "__itruediv__": "div_", "__matmul__": "matmul", "__rmatmul__": "matmul",
           "__neg__": "neg", "__pow__": "pow", "__rpow__": "pow", "__getitem__": "getitem",
           "__setitem__": "setitem", "__and__": "logical_and", "__or__": "logical_or",
           "__invert__": "logical_not", "__eq__": "eq", "__ne__": "ne", "__lt__": "lt",
           "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__floordiv__": "floor_divide",
           "__mod__": "remainder"}
"""Operator methods -> the function they call."""

_SKIP = {"__get__", "__set__", "_set_grad_enabled", "dim", "size", "numel", "is_contiguous",
         "__len__", "__format__", "__repr__", "__bool__", "stride", "storage_offset",
         "element_size", "is_floating_point", "__hash__", "data_ptr", "get_device",
         "requires_grad_", "__iter__", "__index__", "__int__", "__float__", "__contains__",
         "is_complex", "__reduce_ex__", "__deepcopy__", "_is_view", "untyped_storage"}
"""Calls that compute nothing on a device (shape queries, grad mode, printing)."""

_ARG_NAMES = {
    "scaled_dot_product_attention": ("query", "key", "value", "attn_mask", "dropout_p",
                                     "is_causal", "scale", "enable_gqa"),
    "conv2d": ("input", "weight", "bias", "stride", "padding", "dilation", "groups"),
    "max_pool2d": ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"),
    "avg_pool2d": ("input", "kernel_size", "stride", "padding", "ceil_mode"),
    "adaptive_avg_pool2d": ("input", "output_size"),
    "softmax": ("input", "dim"), "log_softmax": ("input", "dim"),
    "layer_norm": ("input", "normalized_shape", "weight", "bias", "eps"),
    "rms_norm": ("input", "normalized_shape", "weight", "eps"),
    "gelu": ("input", "approximate"),
    "mean": ("input", "dim", "keepdim"), "sum": ("input", "dim", "keepdim"),
    "amax": ("input", "dim", "keepdim"), "cat": ("tensors", "dim"),
    "to": ("dtype",), "transpose": ("input", "dim0", "dim1")}
"""Positional argument names of the calls whose scalar arguments the lowering reads."""

KNOWN_MAX_ELEMENTS = 1 << 16
"""Largest tensor (elements) whose value capture keeps (see "Known values" above)."""

_READS = frozenset({"__bool__", "item", "tolist", "__int__", "__float__", "__index__",
                    "__len__", "__iter__", "numpy"})
"""Calls that read a tensor's value on the host (answered from a known value)."""


def _torch() -> Any:
    try:
        import torch
    except ModuleNotFoundError:
        raise ModuleNotFoundError("capturing a PyTorch program needs torch: "
                                  "pip install 'accelsim[torch]'") from None
    return torch


def canonical_name(func: Any) -> tuple[str, str]:
    """(canonical name, qualified name) of a torch function or Tensor method."""
    raw = getattr(func, "__name__", None) or type(func).__name__
    qual = getattr(func, "__qualname__", None) or raw
    name = _DUNDER.get(raw, raw)
    return name, str(qual)


def _flat(values: Any, out: list) -> None:
    if isinstance(values, (list, tuple)):
        for v in values:
            _flat(v, out)
    elif isinstance(values, dict):
        for v in values.values():
            _flat(v, out)
    else:
        out.append(values)


def _scalar(value: Any) -> Any:
    torch = _torch()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value if not isinstance(value, str) or len(value) <= 200 else value[:200]
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, (list, tuple, torch.Size)) and len(value) <= 16 and all(
            isinstance(v, (bool, int, float)) for v in value):
        return list(value)
    return _MISSING


_MISSING = object()


@dataclasses.dataclass
class _Held:
    """A module call that may be on PyTorch's fused path: its calls wait here until it returns."""

    module: Any
    kind: str
    """:func:`~accelsim.workload.torch_fused_paths.fast_path`'s answer at the call."""
    index: int
    """Where its ``module`` call sits in the enclosing list."""
    x: Any
    """Its first input (the tensor the fused call reads)."""
    calls: list = dataclasses.field(default_factory=list)
    mha: dict | None = None
    """The arguments of the ``F.multi_head_attention_forward`` it made (masks, weights)."""


class _Recorder:
    """Tensor metadata and the module stack while a program runs."""

    def __init__(self, params: set[int], names: dict[int, str]) -> None:
        self.calls: list[Call] = []
        self.params = params
        self.names = names
        self.stack: list[str] = []
        self.ids: dict[int, tuple[Any, int]] = {}
        self.next_id = 0
        self.known: dict[int, tuple[Any, Any]] = {}
        """id of a meta tensor -> (a weak reference to it, its value on the CPU): see the
        module's "Known values"."""
        self.held: list[_Held] = []
        """Modules that may run PyTorch's fused inference path, innermost last: their calls
        are held until the module returns (module doc, "PyTorch's fused paths")."""
        self.views: dict[int, bool] = {}
        """Program tensor number -> whether the call that made it made a view."""
        self.fused = ""
        """While non-empty: the calls recorded are ones a fused C++ call makes (their
        ``args["fused"]``)."""

    def shadow(self, value: Any) -> Any:
        """``value`` with each tensor replaced by its known CPU value (``_MISSING`` when a
        meta tensor has none) and ``device=`` arguments by the CPU."""
        torch = _torch()
        if isinstance(value, torch.Tensor):
            if value.device.type != "meta":
                return value
            hit = self.known.get(id(value))
            return hit[1] if hit is not None and hit[0]() is value else _MISSING
        if isinstance(value, torch.device) or (isinstance(value, str) and value == "meta"):
            return torch.device("cpu")
        if isinstance(value, (list, tuple)):
            items = [self.shadow(v) for v in value]
            if any(v is _MISSING for v in items):
                return _MISSING
            return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
        if isinstance(value, dict):
            items = {k: self.shadow(v) for k, v in value.items()}
            return _MISSING if any(v is _MISSING for v in items.values()) else items
        return value

    def propagate(self, func: Any, args: tuple, kwargs: dict, out: Any) -> None:
        """Keep the CPU value of each small tensor ``out`` holds when every tensor ``func``
        read has one (module doc, "Known values")."""
        torch = _torch()
        outs: list = []
        _flat(out, outs)
        metas = [t for t in outs if isinstance(t, torch.Tensor) and t.device.type == "meta"]
        if not metas or any(t.numel() > KNOWN_MAX_ELEMENTS for t in metas):
            return
        sargs, skw = self.shadow(args), self.shadow(kwargs)
        if sargs is _MISSING or skw is _MISSING:
            return
        try:
            value = func(*sargs, **skw)
        except Exception:  # noqa: BLE001 (no value: the call stays meta-only)
            return
        vals: list = []
        _flat(value, vals)
        if len(vals) != len(outs):
            return
        for t, v in zip(outs, vals, strict=True):
            if isinstance(t, torch.Tensor) and t.device.type == "meta" and isinstance(
                    v, torch.Tensor) and tuple(v.shape) == tuple(t.shape):
                try:
                    self.known[id(t)] = (weakref.ref(t), v)
                except TypeError:
                    continue

    def ident(self, t: Any) -> int:
        """The program's number of tensor object ``t`` (a new one for a new object, even when
        Python reuses a dead tensor's ``id``)."""
        hit = self.ids.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        try:
            ref = weakref.ref(t)
        except TypeError:  # no weak references: keep it alive so its id is not reused
            ref = (lambda obj: (lambda: obj))(t)
        n = self.next_id
        self.next_id += 1
        self.ids[id(t)] = (ref, n)
        return n

    def info(self, t: Any, inputs: tuple[Any, ...] | None = None) -> TensorInfo:
        """``t`` as a call's result (``inputs``: the call's tensor inputs) or, ``None``, as
        an input (its flags as the call that made it recorded them)."""
        n = self.ident(t)
        if inputs is None:
            view = self.views.get(n, bool(t._is_view()))
        elif any(t is x for x in inputs):  # the input itself (in place, a no-op .to())
            view = True
        else:
            key = _storage_key(t)
            view = _shares_storage(key, t, inputs) if key is not None else bool(t._is_view())
            self.views[n] = view
        return TensorInfo(tuple(int(s) for s in t.shape), str(t.dtype).removeprefix("torch."),
                          tuple(int(s) for s in t.stride()), view=view,
                          param=id(t) in self.params, tensor_id=n)

    def target(self) -> list[Call]:
        """Where the next call goes: the innermost held module's calls, else the program's."""
        return self.held[-1].calls if self.held else self.calls

    def add(self, call: Call) -> None:
        if self.fused:
            call = dataclasses.replace(call, args={**call.args, "fused": self.fused})
        total = len(self.calls) + sum(len(h.calls) for h in self.held)
        if total >= MAX_CALLS:
            raise WorkloadError("capture", "calls", total,
                                f"more than {MAX_CALLS:,} calls in one step")
        self.target().append(call)

    def module(self) -> str:
        return self.stack[-1] if self.stack else ""


def _storage_key(t: Any) -> int | None:
    """The identity of ``t``'s storage (None when it has none, e.g. a nested tensor)."""
    try:
        return int(t.untyped_storage()._cdata)
    except (RuntimeError, AttributeError, NotImplementedError):
        return None


def _shares_storage(key: int, t: Any, inputs: tuple[Any, ...]) -> bool:
    """Whether result ``t`` (storage ``key``) lives in an input's storage: a view of it.
    ``_is_view()`` does not tell: under ``torch.inference_mode()`` PyTorch keeps no view
    metadata (False for ``x.transpose(0, 1)`` of an inference tensor), and a result PyTorch
    reshapes from a buffer of its own is a view of that buffer, not of an input (True for
    ``F.linear`` of a 3-D input: ``addmm`` on the flattened rows, then ``view``)."""
    torch = _torch()
    return any(isinstance(x, torch.Tensor) and x is not t and _storage_key(x) == key
               for x in inputs)


def _args(name: str, args: tuple, kwargs: dict) -> dict[str, Any]:
    torch = _torch()
    names = _ARG_NAMES.get(name, ())
    out: dict[str, Any] = {}
    for i, v in enumerate(args):
        if isinstance(v, torch.Tensor):
            if i < len(names):
                out[f"has_{names[i]}"] = True
            continue
        s = _scalar(v)
        if s is not _MISSING and not (isinstance(v, (list, tuple)) and any(
                isinstance(x, torch.Tensor) for x in v)):
            out[names[i] if i < len(names) else f"arg{i}"] = s
    for k, v in kwargs.items():
        if isinstance(v, torch.Tensor):
            out[f"has_{k}"] = True
            continue
        s = _scalar(v)
        if s is not _MISSING:
            out[str(k)] = s
    return out


def _cuda_sdpa_layout(out: Any, query: Any) -> Any:
    """A 4-D meta SDPA result in its query's layout, as cuDNN allocates it: dense, its
    dimensions in the order of the query's strides (module doc): for the usual query, and one
    sliced from a fused QKV buffer, a ``(batch, heads, seq, dim)`` view of a ``(batch, seq,
    heads, dim)`` buffer; for ``F.multi_head_attention_forward``'s a view of a ``(seq, batch,
    heads, dim)`` one (run 24's profiles, ``h200_torch_transformer_run24.json``: no copy after
    the SDPA kernel of either). A contiguous query, another rank: unchanged."""
    torch = _torch()
    if not isinstance(out, torch.Tensor) or out.device.type != "meta" or out.dim() != 4 \
            or not isinstance(query, torch.Tensor) or query.dim() != 4 \
            or query.is_contiguous():
        return out
    order = sorted(range(4), key=lambda i: (-query.stride(i), i))
    if order == [0, 1, 2, 3]:
        return out
    buf = torch.empty([out.shape[i] for i in order], dtype=out.dtype, device=out.device)
    return buf.permute([order.index(i) for i in range(4)])


def _cuda_conv_layout(out: Any, inp: Any, weight: Any) -> Any:
    """A 4-D meta convolution result in the memory format CUDA gives it: channels-last when
    the input or the weight is (PyTorch's ``cudnn_conv_suggest_memory_format``), so the
    BatchNorm, ReLU and next convolution after it see the strides they see on the GPU; the
    ``meta`` kernel always returns a contiguous tensor. Else unchanged."""
    torch = _torch()

    def channels_last(t: Any) -> bool:
        return isinstance(t, torch.Tensor) and t.dim() == 4 and not t.is_contiguous() \
            and t.is_contiguous(memory_format=torch.channels_last)

    if not isinstance(out, torch.Tensor) or out.device.type != "meta" or out.dim() != 4 \
            or not (channels_last(inp) or channels_last(weight)) or channels_last(out):
        return out
    return torch.empty(out.shape, dtype=out.dtype, device=out.device,
                       memory_format=torch.channels_last)


def _mode_class() -> type:
    torch = _torch()
    from torch.overrides import TorchFunctionMode

    class CaptureMode(TorchFunctionMode):
        """Records each torch-function call (outermost only) into a :class:`_Recorder`."""

        def __init__(self, rec: _Recorder) -> None:
            super().__init__()
            self.rec = rec

        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            kwargs = kwargs or {}
            name, qual = canonical_name(func)
            rec = self.rec
            if name == "multi_head_attention_forward":
                return self._python_mha(func, qual, args, kwargs)
            if name in _READS:  # a host read of a tensor's value: its known value, if any
                sargs = rec.shadow(args)
                if sargs is not _MISSING:
                    return func(*sargs, **kwargs)
            try:
                out = func(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 (one line naming the call)
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
                raise WorkloadError(
                    "capture", qual, None,
                    f"the call failed on the example tensors ({first}); data-dependent "
                    "control flow (.item(), if tensor:) cannot be captured on meta tensors: "
                    "capture with small CPU example tensors, or move the data-dependent part "
                    "out of the captured function; a custom op needs a meta kernel "
                    "(torch.library register_fake)") from None
            if name == "scaled_dot_product_attention":
                out = _cuda_sdpa_layout(out, args[0] if args else kwargs.get("query"))
            elif name == "conv2d":
                out = _cuda_conv_layout(out, args[0] if args else kwargs.get("input"),
                                        args[1] if len(args) > 1 else kwargs.get("weight"))
            rec.propagate(func, args, kwargs, out)
            if name in _SKIP:
                return out
            ins: list = []
            _flat((args, kwargs), ins)
            tin = tuple(x for x in ins if isinstance(x, torch.Tensor))
            outs: list = []
            _flat(out, outs)
            tout = [x for x in outs if isinstance(x, torch.Tensor)]
            mutates = name == "setitem" or name.endswith("_")
            if not tout and not mutates:
                return out
            rec.add(Call(fn=name, inputs=tuple(rec.info(t) for t in tin),
                         outputs=tuple(rec.info(t, tin) for t in tout),
                         args=_args(name, args, kwargs), module=rec.module(), qualname=qual))
            return out

        def _python_mha(self, func, qual, args, kwargs):  # noqa: ANN001, ANN202
            """``F.multi_head_attention_forward``: a host-only call of its own (its Python),
            then the calls its Python path makes, recorded one by one (the function is
            Python: its ``has_torch_function`` check is answered False while it runs under
            this mode). Its masks and weights decide an enclosing fused path (``_Held``)."""
            import torch.nn.functional as F

            rec = self.rec
            scal = _args("multi_head_attention_forward", args, kwargs)
            info = {"need_weights": bool(scal.get("need_weights", True)),
                    "average": bool(scal.get("average_attn_weights", True)),
                    "masked": bool(scal.get("has_attn_mask") or scal.get("has_key_padding_mask")
                                   or scal.get("is_causal"))}
            for held in rec.held:
                if held.mha is None:
                    held.mha = info
            rec.add(Call(fn="multi_head_attention_forward", module=rec.module(), qualname=qual,
                         args={k: info[k] for k in ("need_weights", "masked")}))
            saved = F.has_torch_function
            F.has_torch_function = lambda *_a, **_k: False
            try:
                with self:
                    return func(*args, **kwargs)
            finally:
                F.has_torch_function = saved

    return CaptureMode


def _fused_kind(held: _Held) -> str:
    """The path a held module took, now that its ``F.multi_head_attention_forward`` is known:
    its fused one, or ``""`` (masked, nested: the Python path, recorded as it ran)."""
    from accelsim.workload import torch_fused_paths as fp

    info = held.mha
    if info is None or info["masked"]:
        return ""
    if held.kind == fp.FUSED_MHA and info["need_weights"]:
        return fp.FUSED_MHA_WEIGHTS
    return held.kind


def _record_fused(rec: _Recorder, held: _Held, kind: str) -> None:
    """Record the calls of the fused C++ call ``held`` makes (``kind``), in its place."""
    from accelsim.workload import torch_fused_paths as fp

    parent = rec.target()
    parent[held.index] = dataclasses.replace(parent[held.index], args={"fastpath": kind})
    start = len(parent)
    rec.fused = kind
    try:
        if kind == fp.FUSED_LAYER:
            fp.record_layer(held.module, held.x)
        else:
            info = held.mha or {}
            fp.record_mha(held.module, held.x, need_weights=kind == fp.FUSED_MHA_WEIGHTS,
                          average=info.get("average", True))
    finally:
        rec.fused = ""
    if kind == fp.FUSED_LAYER:  # the FFN activation is the first FFN GEMM's epilogue
        linears = [i for i in range(start, len(parent)) if parent[i].fn == "linear"]
        if len(linears) >= 3:
            c = parent[linears[2]]
            parent[linears[2]] = dataclasses.replace(
                c, args={**c.args, "epilogue": fp.activation(held.module)})


def capture_program(fn: Callable[..., Any], *args: Any, name: str | None = None,
                    **kwargs: Any) -> Program:
    """Run ``fn(*args, **kwargs)`` once (no gradients) and return the calls it made."""
    torch = _torch()
    if not callable(fn):
        raise WorkloadError("capture", "fn", type(fn).__name__, "expected a callable "
                            "(an nn.Module, its forward, or a function)")
    root = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    names: dict[int, str] = {}
    params: set[int] = set()
    if isinstance(root, torch.nn.Module):
        names = {id(m): path for path, m in root.named_modules()}
        params = {id(p) for p in root.parameters()} | {id(b) for b in root.buffers()}
    rec = _Recorder(params, names)

    from accelsim.workload.torch_fused_paths import fast_path

    def pre(module: Any, inputs: Any) -> None:
        path = names.get(id(module), type(module).__name__)
        kind = fast_path(module, tuple(inputs)) if not rec.fused else ""
        rec.add(Call(fn="module", module=path, qualname=type(module).__name__))
        rec.stack.append(path)
        if kind:  # its calls wait until it returns (torch_fused_paths)
            rec.held.append(_Held(module, kind, len(rec.target()) - 1, inputs[0]))

    def post(module: Any, _inputs: Any, _out: Any) -> None:
        if rec.held and rec.held[-1].module is module:
            held = rec.held.pop()
            kind = _fused_kind(held)
            if kind:
                _record_fused(rec, held, kind)
            else:
                rec.target().extend(held.calls)
        if rec.stack:
            rec.stack.pop()

    from torch.nn.modules import module as nn_module

    hooks = [nn_module.register_module_forward_pre_hook(pre),
             nn_module.register_module_forward_hook(post)]
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.no_grad())
            stack.enter_context(_mode_class()(rec))
            fn(*args, **kwargs)
    finally:
        for h in hooks:
            h.remove()
    label = name or getattr(root, "__class__", type(fn)).__name__
    if not isinstance(root, torch.nn.Module):
        label = name or getattr(fn, "__name__", "program")
    if not rec.calls:
        raise WorkloadError("capture", label, None, "the callable made no torch calls")
    return Program(name=label, calls=tuple(rec.calls), framework=f"torch {torch.__version__}",
                   source=f"capture({label})")


__all__ = ["canonical_name", "capture_program"]
