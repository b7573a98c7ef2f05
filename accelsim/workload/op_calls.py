"""One op as a user calls it: the framework calls of a one-op program.

An accelsim op (``Gemm``, ``Conv2d``, ``LayerNorm``...) says what is computed; a user computes
it through a call (``nn.Linear``, ``F.linear`` or ``x @ W`` for a GEMM; ``nn.Conv2d`` for a
convolution; ``F.rms_norm``...). :func:`op_call_sites` gives that call as the
:class:`~accelsim.workload.program_ops.CallSite` sequence a captured program of it would
hold (an ``nn.Module`` call is a ``call.module`` site, then the functional call it makes),
so an execution mode's lowering table (``configs/lowering/*.yaml``, ``call.*`` entries) prices
it as it prices a captured program. The site that computes carries the op itself.

:data:`USER_CALLS` lists, per op kind, the calls that compute it (the first is the default,
:func:`default_call`); a GEMM over independent batched operands is ``matmul`` only (``x @ W``
with a 3-D ``W``: ``bmm``), an RMS norm is ``F.rms_norm`` by default. A convolution called on
an NCHW (contiguous) tensor is a call of its own, ``nn.Conv2d:nchw`` / ``F.conv2d:nchw``: cuDNN
runs its NHWC kernels between layout transposes (:func:`layout_copies`).

Imports: errors, workload.graph, workload.ops, workload.program_ops.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from accelsim.errors import ConfigError
from accelsim.workload.graph import dtype_bytes
from accelsim.workload.ops import Gemm, NchwConv2d
from accelsim.workload.program_ops import NCHW, CallSite

USER_CALLS: dict[str, tuple[str, ...]] = {
    "gemm": ("nn.Linear", "F.linear", "matmul"),
    "conv2d": ("nn.Conv2d", "F.conv2d", "nn.Conv2d" + NCHW, "F.conv2d" + NCHW),
    "layernorm": ("nn.LayerNorm", "F.layer_norm", "F.rms_norm", "nn.RMSNorm"),
    "softmax": ("torch.softmax",),
    "attention": ("F.scaled_dot_product_attention",),
    "embedding": ("nn.Embedding", "F.embedding"),
    "batchnorm": ("nn.BatchNorm2d", "F.batch_norm"),
}
"""Op kind -> the calls a user computes it with (first: the default). An elementwise op is
called through its own function (``torch.add``, ``F.gelu``...), a pooling op through the
function of its mode (``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d``)."""

_MODULE_FN = {"Linear": "linear", "Conv2d": "conv2d", "LayerNorm": "layer_norm",
              "RMSNorm": "rms_norm", "Embedding": "embedding", "BatchNorm2d": "batch_norm"}
"""An ``nn`` module -> the function its forward calls."""

MODULE_HOST_CLASS = {"nn.Linear": "linear", "nn.LayerNorm": "layer_norm", "nn.Conv2d": "conv",
                     "nn.Embedding": "embedding", "nn.BatchNorm2d": "batch_norm"}
"""An ``nn`` module call -> the host class measured as the whole module call (the machine's
``host.eager_call_s``: ``scripts/measure/e2e.py`` timed ``nn.Linear``, ``nn.LayerNorm``,
``nn.Conv2d``... as module calls). A parameterised module costs more than ``call.module``'s
identity module: its forward reads its parameters and attributes through
``Module.__getattr__`` before the functional call (h200: ``nn.Linear`` 20.7 us against
``F.linear`` 18.6 us, ``nn.LayerNorm`` 13.8 against ``F.layer_norm`` 11.1, both 2.2-2.7 us over
the functional call where the identity module costs 0.95 us)."""

_POINTWISE_FN = {"add": "torch.add", "mul": "torch.mul", "relu": "F.relu", "gelu": "F.gelu",
                 "gelu_erf": "F.gelu", "silu": "F.silu", "scale": "torch.mul",
                 "bias": "torch.add", "rope": "torch.mul", "copy": "Tensor.copy_"}
"""An elementwise op's ``fn`` -> the torch function a user calls for it."""

_POOL_FN = {"max": "max_pool2d", "avg": "avg_pool2d", "global_avg": "adaptive_avg_pool2d"}


def user_calls(op: Any) -> tuple[str, ...]:
    """The calls that compute ``op`` (an accelsim op), default first."""
    kind = getattr(op, "kind", type(op).__name__.lower())
    if kind == "elementwise":
        return (_POINTWISE_FN.get(getattr(op, "fn", "add"), "torch.mul"),)
    if kind == "pool":
        return ("F." + _POOL_FN.get(getattr(op, "mode", "max"), "max_pool2d"),)
    calls = USER_CALLS.get(kind)
    if calls is None:
        raise ConfigError(None, "call", kind, "no user call is known for this op kind (known: "
                          f"{', '.join(USER_CALLS)})")
    if kind == "gemm" and getattr(op, "batch", 1) > 1 and not getattr(op, "shared_weights", True):
        return ("matmul",)  # independent right operands: x @ W with a batched W (bmm)
    if kind == "layernorm":
        return calls[2:] if getattr(op, "rms", False) else calls[:2]
    return calls


def default_call(op: Any) -> str:
    """The call a user makes for ``op`` when none is named (the first of :func:`user_calls`)."""
    return user_calls(op)[0]


def _function(op: Any, call: str) -> str:
    """The torch function (program call ``fn``) that computes ``op`` through ``call``."""
    kind = getattr(op, "kind", "")
    if kind == "elementwise":
        return call.rsplit(".", 1)[-1]
    if kind == "gemm" and call == "matmul" and getattr(op, "batch", 1) > 1 \
            and not getattr(op, "shared_weights", True):
        return "bmm"
    name = call.removesuffix(NCHW).split(".", 1)[-1]
    return _MODULE_FN.get(name, name)


def module_call(call: str) -> str:
    """``call`` without its layout suffix (``nn.Conv2d:nchw`` -> ``nn.Conv2d``)."""
    return call.removesuffix(NCHW)


def _pointwise_conv(op: Any) -> bool:
    """A 1x1, stride-1, unpadded, ungrouped convolution (a GEMM over the channels)."""
    return (getattr(op, "kind", "") == "conv2d" and op.groups == 1 and op.r == op.s == 1
            and op.stride == 1 and op.pad == 0)


NCHW_POINTWISE_ALGORITHMS = ("batched_gemm", "transposed")
"""How cuDNN runs an NCHW pointwise convolution: cuBLAS's batched GEMM on the NCHW rows, or
its NHWC kernel between transposes of the input and the output; the faster is taken
(:func:`accelsim.devices.gpu.op_document`)."""


def computed_op(op: Any, call: str, pointwise: str = "batched_gemm") -> Any:
    """The op ``call`` has the GPU compute for ``op``: ``op`` itself, except a pointwise
    convolution on an NCHW tensor, which cuDNN hands to cuBLAS as a GEMM per image on the
    NCHW layout, ``out[k x h*w] = W[k x c] @ x[c x h*w]`` batched over the images (a
    :class:`~accelsim.workload.ops.Gemm` ``m=k, n=h*w, k=c, batch=n`` with an operand per
    image). Its rows are ``h*w`` elements long, so its kernels follow that alignment (14x14
    bf16 rows are not 16-byte aligned: run 11 profiles cuBLAS's ``cutlass_80`` ``align2``
    kernels there and ``nvjet`` at 56x56). Same MACs as ``op``. A depthwise convolution on
    an NCHW tensor is PyTorch's own NCHW depthwise kernel
    (:class:`~accelsim.workload.ops.NchwConv2d`; run 11 profiles
    ``conv_depthwise2d_forward_kernel``). ``pointwise`` (:data:`NCHW_POINTWISE_ALGORITHMS`):
    ``transposed`` computes an NCHW pointwise convolution as the NHWC one (``op`` itself)."""
    if call.endswith(NCHW) and getattr(op, "kind", "") == "conv2d" \
            and op.groups == op.c and op.groups > 1:
        return NchwConv2d(**{f.name: getattr(op, f.name) for f in fields(op)})
    if not call.endswith(NCHW) or not _pointwise_conv(op) or pointwise == "transposed":
        return op
    return Gemm(name=op.name, m=op.k, n=op.h * op.w, k=op.c, batch=op.n, shared_weights=False,
                dtype=op.dtype)


def layout_copies(op: Any, call: str,
                  pointwise: str = "batched_gemm") -> tuple[tuple[str, float], ...]:
    """The layout transposes a call launches around ``op``'s kernels, as ``(name, bytes)``:
    each kernel reads and writes ``bytes`` (the tensor, in the op's dtype, bf16 when unset).

    An ungrouped, not pointwise (1x1 stride 1 unpadded) convolution on an NCHW tensor:
    cuDNN's NHWC kernels between ``nchwToNhwcKernel`` on the input and on the filter (each
    call) and ``nhwcToNchwKernel`` on the output (the profiled kernels of
    ``scripts/data/h200_single_ops_run11.json``, torch 2.11 / cuDNN 9). A 1x1 convolution
    runs as a cuBLAS GEMM on the NCHW tensor itself (no copies, :func:`computed_op`); an NCHW
    depthwise convolution runs PyTorch's native NCHW kernel (:func:`computed_op`), a grouped
    one cuDNN's NCHW grouped kernel (not modelled: costed as the channels-last one), both
    without copies. ``pointwise="transposed"``: a pointwise convolution's input and output
    transposes (its ``K x C x 1 x 1`` filter is the same in both layouts). Every other call:
    none."""
    if not call.endswith(NCHW) or getattr(op, "kind", "") != "conv2d" or op.groups != 1:
        return ()
    b = dtype_bytes(op.dtype, default="bf16")
    if _pointwise_conv(op):
        if pointwise != "transposed":
            return ()  # cuBLAS on the NCHW tensor itself: computed_op
        return (("nchwToNhwc input", op.n * op.c * op.h * op.w * b),
                ("nhwcToNchw output", op.n * op.k * op.out_h * op.out_w * b))
    return (("nchwToNhwc input", op.n * op.c * op.h * op.w * b),
            ("nchwToNhwc filter", op.k * op.c * op.r * op.s * b),
            ("nhwcToNchw output", op.n * op.k * op.out_h * op.out_w * b))


def op_call_sites(op: Any, call: str | None = None) -> tuple[str, list[CallSite]]:
    """``(call, sites)``: the call (``call`` or :func:`default_call`) and the call sites of
    one such call of ``op``: ``call.module`` for an ``nn.Module`` call, then the function
    that computes, which carries ``op``. One-line :class:`ConfigError` for a call that does
    not compute ``op``."""
    known = user_calls(op)
    chosen = call if call is not None else known[0]
    if chosen not in known:
        raise ConfigError(None, "call", chosen, f"does not compute a "
                          f"{getattr(op, 'kind', 'op')} like this one (known: {', '.join(known)})")
    fn = _function(op, chosen)
    sites: list[CallSite] = []
    if chosen.startswith("nn."):
        sites.append(CallSite(index=0, fn="module", key="call.module", name=module_call(chosen)))
    group = "copy" if fn == "copy_" else \
        "pointwise" if getattr(op, "kind", "") == "elementwise" else ""
    sites.append(CallSite(index=len(sites), fn=fn, key=f"call.{fn}", name=chosen, op=op,
                          group=group))
    return chosen, sites


def nchw_pointwise(op: Any, call: str) -> bool:
    """Whether ``call`` of ``op`` is a pointwise convolution on an NCHW tensor (two ways to
    run it: :data:`NCHW_POINTWISE_ALGORITHMS`)."""
    return call.endswith(NCHW) and _pointwise_conv(op)


__all__ = ["MODULE_HOST_CLASS", "NCHW", "NCHW_POINTWISE_ALGORITHMS", "USER_CALLS",
           "computed_op", "default_call", "layout_copies", "module_call", "nchw_pointwise",
           "op_call_sites", "user_calls"]

