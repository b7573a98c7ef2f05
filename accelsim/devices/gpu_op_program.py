"""One op as users call it on a GPU: a one-op program, run back to back in an execution mode.

``accelsim op GPU OP --exec eager|graph`` and ``simulate_op(..., exec=...)`` time the op the way
a user's code calls it (:mod:`accelsim.workload.op_calls`: ``nn.Linear`` is a module call then
``F.linear``, ``x @ W`` is ``matmul``, ``nn.Conv2d`` a module call then cuDNN's convolution...)
through the same path as a captured program: the mode's lowering table
(``configs/lowering/<mode>.yaml``, ``call.*`` entries, :func:`accelsim.mapping.gpu_lowering.
lower_sites`) gives each call its host cost class (the machine's ``host.eager_call_s``) and
says which call launches the op's kernels, and the host and the GPU stream are replayed on one
clock (:mod:`accelsim.engine.gpu_stream`) for :data:`BACK_TO_BACK_CALLS` calls in a row. The
per-call time is what those calls take divided by their number: the host dispatch and the
GPU's kernels overlap as the stream model says (a host-bound op costs its dispatch, a
GPU-bound op its kernels), with no synchronisation inside (the calls are timed between two
CUDA events, as ``scripts/measure/e2e.py`` ``time_op`` does). Graph mode replays the same
kernels from one CUDA graph: one ``host.graph_launch_s`` for the calls, no dispatch per call.

Two choices, stated: the call that computes launches the op's own kernels as
:func:`accelsim.devices.gpu.op_document` plans and times them for an op repeated back to back
(warm L2, ``host.launch_s`` per kernel, no ``host.kernel_tail_s``; a table's ``io`` kernel of a
captured pointwise call is the same kernel, planned from the op here); and a one-op program
has no model code around its call, so the table's ``per_call_extra`` (Hugging Face model
code's own Python per call) is not charged: the host classes were measured as loops of the
call alone.

Two mechanisms of the call around the op's kernels: an ``nn`` module call costs, host side,
the class measured as the whole module call where the machine has one
(:data:`~accelsim.workload.op_calls.MODULE_HOST_CLASS`: a parameterised module's forward is
dearer than the identity module of ``call.module``; its module site is charged the whole
class less the functional call's), and a call's layout transposes
(:func:`~accelsim.workload.op_calls.layout_copies`: cuDNN's NCHW<->NHWC copies around an NCHW
convolution) are kernels of the call, each a bandwidth-bound stream kernel reading and writing
its tensor (:func:`accelsim.hw.gpu.memory.stream_kernel`, launched by the computing call with
the op's own). They pay ``host.kernel_tail_s`` as PyTorch's small kernels do, not as cuDNN's
convolution kernels do (:func:`accelsim.hw.gpu.kernel.without_tail`): run 11's profiles show
a 0.15-0.4 MB transpose lasting 1.5-1.8 us, a fixed cost well over its bytes' time; on large
tensors they move ~2.4 TB/s of reads and writes (``conv.layout_transpose_bytes_per_s``, fitted on
those profiles), slower than a stream kernel's bandwidth. Units: seconds.

Imports: errors, config.gpu, config.lowering, engine.gpu_stream, hw.gpu.kernel, hw.gpu.memory,
mapping.gpu_lowering, workload.op_calls.
"""

from __future__ import annotations

from typing import Any

from accelsim.config.gpu import GpuMachine
from accelsim.config.lowering import load_lowering
from accelsim.engine import gpu_stream
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.hw.gpu.kernel import estimate_s
from accelsim.hw.gpu.memory import stream_kernel
from accelsim.mapping.gpu_lowering import lower_sites
from accelsim.workload.op_calls import (
    MODULE_HOST_CLASS,
    layout_copies,
    module_call,
    op_call_sites,
)

OP_EXEC_MODES = ("eager", "graph")
"""Execution modes a single op can be timed in (``--exec``)."""

BACK_TO_BACK_CALLS = 20
"""Calls of a one-op program replayed in a row (the per-call time is their time / this):
``e2e.time_op``'s 20 calls between two CUDA events."""


def check_exec(exec_mode: str) -> str:
    """``exec_mode`` if it is one of :data:`OP_EXEC_MODES`; else a one-line ConfigError."""
    if exec_mode not in OP_EXEC_MODES:
        raise ConfigError("--exec", "exec", exec_mode,
                          f"must be one of {', '.join(OP_EXEC_MODES)} (a single op as users "
                          "call it: eager back to back, or replayed in one CUDA graph)")
    return exec_mode


def layout_copy_s(m: GpuMachine, op: Any, call: str,
                  pointwise: str = "batched_gemm") -> list[dict[str, Any]]:
    """The layout transposes ``call`` launches around ``op`` on ``m``: name, bytes (read, and
    as many written) and seconds per kernel: a stream kernel (``kernel_tail_s`` included),
    moving its bytes no faster than ``conv.layout_transpose_bytes_per_s``."""
    out = []
    for name, nbytes in layout_copies(op, call, pointwise):
        k = stream_kernel(m, name, read_bytes=nbytes, write_bytes=nbytes)
        moved_s = 2 * nbytes / m.conv.layout_transpose_bytes_per_s
        out.append({"name": name, "bytes": nbytes,
                    "time_s": max(estimate_s(k, m), k.launch_s + k.startup_s + moved_s)})
    return out


def host_seconds(m: GpuMachine, call: str, classes: list[str]) -> tuple[list[str], list[float]]:
    """Host classes and seconds of a call's sites (``classes``: their lowered classes). An
    ``nn`` module call whose whole call the machine measured
    (:data:`~accelsim.workload.op_calls.MODULE_HOST_CLASS`) costs that class: its module site
    (the first) is charged the class less the other sites' (never below zero)."""
    secs = [m.host.call_s(c) for c in classes]
    whole = MODULE_HOST_CLASS.get(module_call(call))
    if whole is None or whole not in m.host.eager_call_s or classes[0] != "module":
        return classes, secs
    rest = sum(secs[1:])
    return [whole, *classes[1:]], [max(0.0, m.host.call_s(whole) - rest), *secs[1:]]


def op_program(m: GpuMachine, op: Any, kernel_s: float, *, exec_mode: str,
               call: str | None = None, replay: str = "analytic",
               calls: int = BACK_TO_BACK_CALLS, extra_kernels: int = 0,
               pointwise: str = "batched_gemm") -> dict[str, Any]:
    """``op`` called ``calls`` times in a row as ``exec_mode`` runs it on ``m``: the call
    (``call`` or the op's default user call), its framework calls with their host classes and
    host seconds, and per call ``host_s`` (host time: dispatch in eager mode, the graph
    launch spread over the calls in graph mode), ``gpu_s`` (``kernel_s``, the op's kernels,
    plus the call's layout copies, listed in ``layout_copies``)
    and ``time_s`` (the replay's time / ``calls``). ``replay``: ``event`` (SimPy) or
    ``analytic`` (the recurrence; equal). ``extra_kernels``: the op's kernels besides its main
    one that its library launches by shape (``hw/gpu/kernel.py`` ``EXTRA_LAUNCH``); in eager
    mode each, and each layout copy, adds ``host.extra_kernel_s`` to the computing call's
    host time (``extra_kernels`` in the result: their count). ``pointwise``: how an NCHW
    pointwise convolution runs (:data:`~accelsim.workload.op_calls.NCHW_POINTWISE_ALGORITHMS`;
    ``transposed`` launches its two transposes)."""
    table = load_lowering(check_exec(exec_mode))
    chosen, sites = op_call_sites(op, call)
    lowered = lower_sites(sites, table)
    if sum(c.work is not None for c in lowered) != 1:
        raise UnsupportedError(f"the '{table.mode}' lowering ({table.source}) launches "
                               f"{sum(c.work is not None for c in lowered)} kernels for "
                               f"{chosen}; a one-op program launches the op's own, once")
    graph = table.submit == "graph"
    classes, host = host_seconds(m, chosen, [c.call for c in lowered])
    host = [0.0 if graph else h for h in host]
    copies = layout_copy_s(m, op, chosen, pointwise)
    kernel_s += sum(c["time_s"] for c in copies)
    extra = extra_kernels + len(copies)
    if not graph and extra:
        launching = next(i for i, c in enumerate(lowered) if c.work is not None)
        host[launching] += extra * m.host.extra_kernel_s
    one = [gpu_stream.StreamCall(h, kernel_s if c.work is not None else 0.0)
           for h, c in zip(host, lowered, strict=True)]
    run = gpu_stream.replay_event if replay == "event" else gpu_stream.replay_closed_form
    tl = run(one * calls, submit=table.submit, graph_launch_s=m.host.graph_launch_s,
             sync_s=0.0)
    host_s = (m.host.graph_launch_s if graph else tl.host_busy_s) / calls
    return {"exec": table.mode, "call": chosen, "back_to_back_calls": calls,
            "time_s": tl.time_s / calls, "host_s": host_s, "gpu_s": kernel_s,
            "layout_copies": copies, "extra_kernels": extra,
            "calls": [{"call": s.name if s.fn == "module" else s.fn, "host_class": cls,
                       "host_s": h, "launches": c.work is not None}
                      for c, cls, h, s in zip(lowered, classes, host,
                                              (sites[c.op_index] for c in lowered),
                                              strict=True)]}


__all__ = ["BACK_TO_BACK_CALLS", "OP_EXEC_MODES", "check_exec", "host_seconds", "layout_copy_s",
           "op_program"]
