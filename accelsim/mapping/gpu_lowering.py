"""Lowering: framework-level ops -> the calls and kernels one execution mode launches.

A model graph names what a framework is asked to compute (``nn.Linear``, SDPA, RMSNorm,
rotary embedding...). What reaches the GPU depends on how the model is run: eager PyTorch
dispatches every aten call of an op from the host (RMSNorm as Hugging Face writes it is eight
kernels), a CUDA graph replays the same kernels without the host, a compiler fuses the
pointwise chains. :func:`lower` applies one :class:`~accelsim.config.lowering.LoweringTable`
(data, ``configs/lowering/<mode>.yaml``) to a sequence of ops and returns one
:class:`LoweredCall` per framework call, each with its host cost class and, if it computes,
the work of its kernel: the op itself (costed by the GPU model) or a :class:`StreamWork`
(a memory-bound pointwise/reduction kernel: bytes in, bytes out, instructions).

Before lowering, the attention pattern of a model graph (QK^T, softmax, AV) is replaced by
one fused attention op: every framework of today calls SDPA / FlashAttention.

A captured program (:mod:`accelsim.workload.program_ops`) lowers call by call through the
same tables: each call site's key (``call.linear``, ``call.rms_norm``, ``call.view``) names its
steps, ``io`` kernels take their bytes from the captured tensors, and a call the table does
not know falls back to the table's ``call.unmodelled`` entry (:func:`lower_sites`).

Imports: errors, limits, config.lowering.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from accelsim.config.lowering import LoweringTable
from accelsim.errors import UnsupportedError
from accelsim.limits import MAX_LOWERED_CALLS, check_count

DEFAULT_CLASS = {"gemm": "gemm", "attention": "attention", "layernorm": "norm",
                 "rmsnorm": "norm", "softmax": "attention", "embedding": "embedding",
                 "conv2d": "conv", "pool": "pool", "batchnorm": "norm",
                 "collective": "comm"}
"""Kernel class of an op's own kernels, by op key (pointwise ops: ``elementwise``)."""


@dataclass(frozen=True, slots=True)
class StreamWork:
    """A memory-bound kernel: bytes read and written, FP32-lane and SFU instructions."""

    name: str
    read_bytes: float
    write_bytes: float
    simt_flops: float
    sfu_ops: float
    family: str = "vectorized"
    """Launch family (``config.lowering.FAMILIES``): ``strided`` pays ``host.strided_kernel_s``
    and ``compute.strided_instr_per_element`` per element."""
    elements: float = 0.0
    """Elements of the op's tensor the kernel walks (the unit of ``read``/``write``/``flop``)."""
    sfu_routine: str = ""
    """``transcendental`` or ``erf``: each transcendental also costs the machine's
    ``compute.transcendental_instr`` (``compute.erf_instr``) FP32-lane instructions, the
    ``expf``/``tanhf`` (``erff``) software routine around the SFU op, as an elementwise op's
    own kernel does; set for a captured call's ``io`` kernel (``""``: the count is in
    ``simt_flops`` already)."""


@dataclass(frozen=True, slots=True)
class LoweredCall:
    """One framework call: which op made it, its host cost class and its kernel's work."""

    op_index: int
    """Index of the framework op in the lowered sequence."""
    op_name: str
    call: str
    """Host cost class (``host.eager_call_s`` key)."""
    work: Any
    """None (host-only), the op (its own kernels) or a :class:`StreamWork`."""
    kernel_class: str
    layer: int | None = None
    family: str = "vectorized"
    """Launch family of the call's kernel(s) (``config.lowering.FAMILIES``)."""
    user_call: str = ""
    """The user call that computes the op where its layout decides the kernels
    (``F.conv2d:nchw``: :mod:`accelsim.workload.op_calls`); ``""``: the op's own kernels."""
    extra_kernel: bool = False
    """A kernel the call launches beside its main one from C++ (``matmul``'s folding copies:
    :func:`accelsim.workload.program_ops.matmul_operand_copies`): no host class of its own
    (``FUSED_HOST_CLASS``); in eager mode it costs ``host.extra_kernel_s``, as a library's
    extra launches do."""


def op_key(op: Any) -> str:
    """The lowering-table key of a framework op (``gemm``, ``rmsnorm``, ``elementwise.add``)."""
    kind = getattr(op, "kind", type(op).__name__.lower())
    if kind == "fused" and hasattr(op, "lower") and hasattr(op, "main"):
        return op_key(op.main)  # horizontally merged projections: one GEMM
    if kind == "layernorm" and getattr(op, "rms", False):
        return "rmsnorm"
    if kind == "elementwise":
        return f"elementwise.{op.fn}"
    return str(kind)


def _elements(op: Any, rows: bool) -> float:
    if rows:
        return float(getattr(op, "rows", 1))
    if hasattr(op, "elements"):
        return float(op.elements)
    if hasattr(op, "rows") and hasattr(op, "cols"):
        return float(op.rows * op.cols)
    te = op.tensor_elements()
    return float(te.get("output", max(te.values())))


def lower(ops: Iterable[tuple[Any, int | None]], table: LoweringTable) -> list[LoweredCall]:
    """The calls ``table``'s mode makes for ``ops`` (``(op, layer)`` pairs, in order)."""
    out: list[LoweredCall] = []
    for i, (op, layer) in enumerate(ops):
        key = op_key(op)
        steps = table.steps(key)
        if steps is None:
            raise UnsupportedError(f"the '{table.mode}' lowering ({table.source}) has no entry "
                                   f"for {key} (op {getattr(op, 'name', i)})")
        own = DEFAULT_CLASS.get(key.split(".")[0], "elementwise")
        if key == "elementwise.copy":
            own = "copy"
        name = getattr(op, "name", f"op{i}")
        for step in steps:
            if step.kernel == "main":
                work: Any = op
            elif step.kernel == "stream":
                n = _elements(op, step.rows)
                work = StreamWork(name=f"{name}.{step.call}", read_bytes=step.read * n,
                                  write_bytes=step.write * n, simt_flops=step.flop * n,
                                  sfu_ops=step.sfu * n, family=step.family, elements=n)
            else:
                work = None
            klass = step.kernel_class or own
            check_count(len(out) + step.count, MAX_LOWERED_CALLS, file=table.source,
                        field="calls", what="framework calls")
            for _ in range(step.count):
                out.append(LoweredCall(op_index=i, op_name=name, call=step.call, work=work,
                                       kernel_class=klass, layer=layer,
                                       family=step.family))
    return out


FUSED_HOST_CLASS = "fused"
"""Host class of a call made inside a fused C++ call (a site's ``meta["fused"]``): no host
time of its own, the fused call's module site carries it (no ``per_call_extra`` either)."""

UNMODELLED_KEY = "call.unmodelled"
"""The table entry that costs a captured call no entry names (the stated fallback)."""


def lower_sites(sites: Iterable[Any], table: LoweringTable) -> list[LoweredCall]:
    """The calls ``table``'s mode makes for a captured program's call sites
    (:class:`accelsim.workload.program_ops.CallSite`, in order). ``op_index`` is the site's
    index; a site whose key the table lacks uses :data:`UNMODELLED_KEY`."""
    out: list[LoweredCall] = []
    for site in sites:
        steps = table.ops.get(site.key)
        if steps is None and site.group:
            steps = table.ops.get(f"call.{site.group}")
        if steps is None:
            steps = table.ops.get(UNMODELLED_KEY)
        if steps is None:
            raise UnsupportedError(f"the '{table.mode}' lowering ({table.source}) has no entry "
                                   f"for {site.key} nor {UNMODELLED_KEY} (call {site.name})")
        own = DEFAULT_CLASS.get(op_key(site.op).split(".")[0], "elementwise") \
            if site.op is not None else "other"
        if site.fn in ("setitem", "cat", "stack", "copy_", "clone", "contiguous", "reshape",
                       "to", "index_copy_"):
            own = "copy"
        for step in steps:
            work: Any = None
            family = step.family
            if step.kernel == "main" and site.op is not None:
                work = site.op
            elif step.kernel == "io" or (step.kernel == "main" and site.op is None):
                n = site.elements
                work = StreamWork(name=f"{site.name}", read_bytes=site.read_bytes,
                                  write_bytes=site.write_bytes,
                                  simt_flops=(step.flop or site.flop_per_element) * n,
                                  sfu_ops=(step.sfu or site.sfu_per_element) * n,
                                  family=site.family, elements=n,
                                  sfu_routine=site.sfu_routine)
                family = site.family
            elif step.kernel == "stream":
                n = float(site.rows) if step.rows and site.rows else site.elements
                work = StreamWork(name=f"{site.name}.{step.call}", read_bytes=step.read * n,
                                  write_bytes=step.write * n, simt_flops=step.flop * n,
                                  sfu_ops=step.sfu * n, family=step.family, elements=n)
            if work is None and step.kernel is not None:
                continue  # a kernel over nothing (an empty tensor): host only
            klass = step.kernel_class or own
            check_count(len(out) + step.count, MAX_LOWERED_CALLS, file=table.source,
                        field="calls", what="framework calls")
            host_class = FUSED_HOST_CLASS if site.meta.get("fused") else step.call
            if work is site.op:
                out.extend(_operand_copies(site, table))
            for _ in range(step.count):
                out.append(LoweredCall(op_index=site.index, op_name=site.name, call=host_class,
                                       work=work, kernel_class=klass, layer=site.layer,
                                       family=family,
                                       user_call=site.meta.get("call", "")
                                       if work is site.op else ""))
    return out


def _operand_copies(site: Any, table: LoweringTable) -> list[LoweredCall]:
    """The contiguous copies a call makes of its operands before its GEMM (``matmul``'s
    folding copies, ``site.meta["operand_copies"]``: elements and bytes of each): strided
    copy kernels, as a user's ``.contiguous()`` of that view launches. Launched from C++
    beside the GEMM in eager (``extra_kernel``, no host class of its own); under a fusing
    compiler (``table.fuse``) each is a generated kernel of its own at ``table.fuse_call``
    (which of them fuse into their producer instead: ``mapping/program_fusion.py``)."""
    fused = bool(table.fuse)
    return [LoweredCall(op_index=site.index, op_name=site.name,
                        call=table.fuse_call if fused else FUSED_HOST_CLASS,
                        work=StreamWork(name=f"{site.name}.operand_copy", read_bytes=nbytes,
                                        write_bytes=nbytes, simt_flops=0.0, sfu_ops=0.0,
                                        family="strided", elements=float(n)),
                        kernel_class="copy", layer=site.layer, family="strided",
                        extra_kernel=not fused)
            for n, nbytes in site.meta.get("operand_copies", ())]

__all__ = ["DEFAULT_CLASS", "FUSED_HOST_CLASS", "UNMODELLED_KEY", "LoweredCall", "StreamWork",
           "lower", "lower_sites", "op_key"]
