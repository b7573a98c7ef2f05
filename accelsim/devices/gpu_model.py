"""Whole models on a GPU, as frameworks run them.

The model graph is lowered for one **execution mode** (``eager``, ``graph``, ``compiled``;
tables in ``configs/lowering/``, :mod:`accelsim.mapping.gpu_lowering`) into the framework
calls it makes; each call's kernels are costed by the GPU model (:mod:`accelsim.hw.gpu`),
each call's host dispatch by the machine's ``host`` section, and the step is replayed with
the host and the GPU stream on one clock (:mod:`accelsim.engine.gpu_stream`): GPU idle time
where the host is the bottleneck emerges. The result (:class:`~accelsim.devices.results.ModelRun`)
has a per-call timeline (``calls``), a per-op table (``layers``), where the time goes by
kernel class (``breakdown``: GEMM, attention, norm, elementwise, conv, copy, ...,
``host-idle``) and a memory check (weights, KV cache, activations, workspace vs HBM;
:mod:`accelsim.devices.memory_check`). :class:`~accelsim.devices.gpu.GpuDevice` runs whole
models through :func:`run_gpu_model`. Units: seconds, FLOP, decimal bytes, joules.

Imports: errors, config.gpu, config.lowering, engine.gpu_stream, hw.gpu, hw.gpu.kernel,
hw.gpu.memory, hw.gpu.reduce, mapping.gpu_lowering, mapping.program_fusion, report.energy,
report.gpu_power, report.power, workload.*, devices.gpu_op_program, devices.memory_check,
devices.results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from accelsim.config.gpu import GpuMachine
from accelsim.config.lowering import KERNEL_CLASSES, load_lowering
from accelsim.devices.gpu_op_program import layout_copy_s
from accelsim.devices.memory_check import check_memory, check_program_memory
from accelsim.devices.results import COLUMNS, ModelRun
from accelsim.engine import gpu_stream
from accelsim.errors import UnsupportedError
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.kernel import bound_of, estimate_s, extra_launches, launched_kernels
from accelsim.hw.gpu.memory import l2_hit_fraction, stream_kernel
from accelsim.hw.gpu.reduce import row_mean_kernel
from accelsim.mapping.gpu_lowering import (
    FUSED_HOST_CLASS,
    LoweredCall,
    StreamWork,
    lower,
    lower_sites,
)
from accelsim.mapping.program_fusion import fuse_sites
from accelsim.report.energy import energy_table_for
from accelsim.report.gpu_power import gpu_energy_j
from accelsim.report.power import static_power_w
from accelsim.workload.device_ops import device_op
from accelsim.workload.op_calls import NCHW_POINTWISE_ALGORITHMS, computed_op, nchw_pointwise
from accelsim.workload.ops import Workload
from accelsim.workload.parallel import Collective
from accelsim.workload.program_ops import HostCall, call_sites
from accelsim.workload.readers import load_wl

DEFAULT_EXEC = "eager"
"""Execution mode of ``accelsim run`` on a GPU when none is given: what a user gets from
plain PyTorch."""

ZOO_LOWERING = "auto"
"""How a zoo decoder lowers on a GPU when a run names no ``zoo_lowering``:

* ``ops``: op by op through the op-level entries (``rmsnorm``, ``elementwise.rope``, ...);
* ``auto`` (the default): a Llama-family decoder (``llama3_8b``, the ``workloads/hf`` Llama
  and Qwen2 configs) in eager and CUDA-graph mode as the program its measured model code makes
  (:func:`accelsim.workload.models.transformer_program.graph_program`, ``hf_style``:
  ``scripts/measure/e2e.py``'s HF-style ``Llama``) through the ``call.*`` entries a captured
  program takes; every other model, and every model in compiled mode, op by op;
* ``calls``: every decoder the emitter writes (Llama family, GPT-2) in every mode as its
  program.

Tensor- and pipeline-parallel ranks, serving steps and chunked prefill always lower op by
op. ``validate_e2e.py --zoo-lowering`` on the calibration and dev sets: ``auto`` is within
0.5 points of ``ops`` or better on every Llama-family eager and graph group (the calls path
is worse in compiled mode, ``program_fusion`` against Inductor, and on GPT-2)."""

ZOO_LOWERINGS = ("auto", "calls", "ops")

CALL_COLUMNS = ["call", "layer", "op", "call_class", "kernel_class", "kernels", "host_s",
                "gpu_s", "host_start_s", "host_end_s", "gpu_start_s", "gpu_end_s"]



def framework_ops(workload: Any, *, merge_projections: bool = False
                  ) -> tuple[Workload, list[tuple[object, int | None]], Any]:
    """The workload, its framework-level ops with their layer index, attention fused
    (QK^T, softmax, AV -> one SDPA op) where the model graph shows the pattern, and the
    model graph (None for plain op lists). ``merge_projections``: GEMMs reading one input
    become one GEMM (a serving engine's merged QKV and gate/up projections)."""
    from accelsim.workload.graph import ModelGraph
    from accelsim.workload.models import zoo
    from accelsim.workload.passes.fusion import fuse

    graph = None
    if isinstance(workload, ModelGraph):
        graph = workload
    elif isinstance(workload, str) and zoo.is_zoo_spec(workload):
        graph = zoo.from_spec(workload)
    if graph is None:
        wl = load_wl(workload)
        return wl, [(device_op(op), None) for op in wl.ops], None
    fused = fuse(graph, attention=True, horizontal=merge_projections, epilogues=False).graph
    wl = Workload(graph.name, fused.to_workload().ops)
    return wl, [(n.op, n.layer) for n in fused.nodes], graph


@dataclass
class _Cost:
    gpu_s: float
    kernels: int
    flops: float
    hbm_bytes: float
    l2_bytes: float
    energy_j: float
    bound: str
    precision: str
    first_pdl: bool = False
    last_pdl: bool = False
    extra_launches: int = 0
    """Kernels besides the main one that the call's library launches by shape
    (``hw/gpu/kernel.py`` ``EXTRA_LAUNCH``): each costs the host ``host.extra_kernel_s`` in
    eager mode."""


def _energy_j(m: GpuMachine, table: Any, cache: dict, *, macs: float, flops: float,
              l2_bytes: float, hbm_bytes: float, precision: str) -> float:
    """:func:`gpu_energy_j`, which is linear in MACs, non-MAC FLOP (``flops - 2 macs``), L2 and
    HBM bytes: priced once per precision for one unit of each (the pJ tables are priced
    through pandas), then a dot product."""
    key = ("energy", precision)
    coef = cache.get(key)
    if coef is None:
        unit = {"macs": 0.0, "flops": 0.0, "l2_bytes": 0.0, "hbm_bytes": 0.0}
        base = gpu_energy_j(m, table, precision=precision, **unit)
        coef = (base, {q: gpu_energy_j(m, table, precision=precision, **{**unit, q: 1e6}) / 1e6
                       - base / 1e6 for q in unit})
        cache[key] = coef
    base, per = coef
    vector = max(0.0, flops - 2.0 * macs)
    return (base + per["macs"] * macs + per["flops"] * vector + per["l2_bytes"] * l2_bytes
            + per["hbm_bytes"] * hbm_bytes)


def _row_reduce(call: LoweredCall, op: Any) -> tuple[int, int] | None:
    """(rows, cols) when ``call`` is a ``reduce`` stream kernel over an op's rows (LlamaRMSNorm's
    ``mean(-1)``): PyTorch's ``reduce_kernel``, not a bandwidth stream."""
    if call.call != "reduce" or not isinstance(call.work, StreamWork):
        return None
    rows, cols = getattr(op, "rows", None), getattr(op, "cols", None)
    return (int(rows), int(cols)) if rows and cols else None


CollectiveCost = Callable[[Collective], tuple[float, float, float]]
"""A system's price of one collective a rank calls: (GPU seconds, host issue seconds,
link joules) -- :func:`accelsim.devices.parallel` builds it from the system's link model."""


def _collective_cost(work: Collective, collective: CollectiveCost | None) -> _Cost:
    if collective is None:
        raise UnsupportedError(f"{work.name}: a {work.collective} over {work.ranks} GPUs needs a "
                               "system to run on (accelsim run SYSTEM MODEL --tp N)")
    gpu_s, _, energy_j = collective(work)
    return _Cost(gpu_s=gpu_s, kernels=1, flops=0.0, hbm_bytes=0.0, l2_bytes=0.0,
                 energy_j=energy_j, bound="link", precision=work.dtype or "bf16")


def _layout_plan(m: GpuMachine, op: Any, user_call: str, cold_weights: float
                 ) -> tuple[Any, list[dict[str, Any]]]:
    """The plan and layout copies of ``op`` computed through ``user_call`` (an NCHW
    convolution: :func:`~accelsim.workload.op_calls.computed_op` and
    :func:`~accelsim.devices.gpu_op_program.layout_copy_s`, as a one-op program of that call
    runs it); a pointwise one takes the faster of its two ways."""
    ways = NCHW_POINTWISE_ALGORITHMS if nchw_pointwise(op, user_call) else ("batched_gemm",)
    best: tuple[float, Any, list[dict[str, Any]]] | None = None
    for way in ways:
        plan = plan_op(m, device_op(computed_op(op, user_call, way)), cold_cache=True,
                       cold_weight_fraction=cold_weights)
        copies = layout_copy_s(m, op, user_call, way)
        t = sum(estimate_s(k, m) for k in plan.kernels) + sum(c["time_s"] for c in copies)
        if best is None or t < best[0]:
            best = (t, plan, copies)
    assert best is not None
    return best[1], best[2]


def _kernel_cost(m: GpuMachine, work: Any, table: Any, cache: dict,
                 reduce_shape: tuple[int, int] | None = None,
                 family: str = "vectorized", cold_weights: float = 0.0,
                 user_call: str = "") -> _Cost:
    """GPU time, traffic and energy of one call's kernels (memoised by shape).
    ``reduce_shape``: the (rows, cols) a ``reduce`` stream call reduces row by row.
    ``family``: the call's launch family; ``strided`` kernels each start
    ``host.strided_kernel_s`` later and spend ``compute.strided_instr_per_element`` FP32/INT-lane
    instructions per element on index arithmetic (non-vectorized TensorIterator / cat kernels).
    ``cold_weights``: the share of a weight GEMM's or convolution's weights that the step
    finds outside L2 (:func:`step_cold_weight_fraction`). ``user_call``: the call whose
    layout decides the op's kernels (``F.conv2d:nchw``: :func:`_layout_plan`; its layout
    copies are kernels of the call, each an extra launch)."""
    if isinstance(work, StreamWork):
        key: Any = ("stream", work.read_bytes, work.write_bytes, work.simt_flops, work.sfu_ops,
                    reduce_shape, family, work.elements, work.sfu_routine)
    else:
        op = device_op(work)
        key = (dataclasses.replace(op, name="") if dataclasses.is_dataclass(op) else op,
               family, cold_weights, user_call)
    hit = cache.get(key)
    if hit is not None:
        return hit
    if isinstance(work, StreamWork) and reduce_shape is not None:
        rows, cols = reduce_shape
        k = row_mean_kernel(m, rows, cols, max(1, round(work.read_bytes / (rows * cols))))
        kernels, prec, flops, macs = (k,), "fp32", work.simt_flops, 0.0
    elif isinstance(work, StreamWork):
        index_instr = work.elements * m.compute.strided_instr_per_element \
            if family == "strided" else 0.0
        routine = {"transcendental": m.compute.transcendental_instr,
                   "erf": m.compute.erf_instr}.get(work.sfu_routine, 0.0) * work.sfu_ops
        k = stream_kernel(m, work.name, read_bytes=work.read_bytes,
                          write_bytes=work.write_bytes,
                          simt_flops=work.simt_flops + index_instr + routine,
                          sfu_ops=work.sfu_ops)
        kernels, prec, flops, macs = (k,), "fp32", work.simt_flops, 0.0
    elif user_call:
        plan, copies = _layout_plan(m, op, user_call, cold_weights)
        kernels, prec, flops = plan.kernels, plan.precision, float(getattr(op, "flops", 0))
        macs = float(getattr(op, "macs", 0))
    else:
        # a step's caches and weights were last touched a step ago
        plan = plan_op(m, op, cold_cache=True, cold_weight_fraction=cold_weights)
        kernels, prec, flops = plan.kernels, plan.precision, float(plan.flops)
        macs = float(getattr(op, "macs", 0))
    if family == "strided" and m.host.strided_kernel_s:
        kernels = tuple(dataclasses.replace(k, startup_s=k.startup_s + m.host.strided_kernel_s)
                        for k in kernels)
    times = [estimate_s(k, m) for k in kernels]
    hbm = sum(k.hbm_bytes for k in kernels)
    l2 = sum(k.l2_bytes for k in kernels)
    longest = kernels[int(np.argmax(times))]
    n_copies = 0
    if user_call and not isinstance(work, StreamWork):
        # the layout transposes: each reads and writes its tensor through HBM
        times += [c["time_s"] for c in copies]
        hbm += sum(2 * c["bytes"] for c in copies)
        n_copies = len(copies)
    # dynamic energy + leakage over the kernels' time (as compare.run_kernel prices a kernel;
    # host-idle gaps between kernels are not charged)
    leak_w = sum(static_power_w(m, table).values())
    cost = _Cost(gpu_s=float(sum(times)), kernels=launched_kernels(kernels) + n_copies,
                 flops=flops,
                 hbm_bytes=hbm,
                 l2_bytes=l2, energy_j=_energy_j(m, table, cache, macs=macs, flops=flops,
                                                    l2_bytes=l2, hbm_bytes=hbm, precision=prec)
                 + leak_w * float(sum(times)),
                 bound=bound_of(longest, m), precision=prec,
                 first_pdl=bool(kernels[0].meta.get("pdl")),
                 extra_launches=extra_launches(kernels) + n_copies,
                 last_pdl=bool(kernels[-1].meta.get("pdl")))
    cache[key] = cost
    return cost


def _host_s(m: GpuMachine, call: LoweredCall, table: Any,
            collective: CollectiveCost | None = None) -> float:
    if table.submit == "graph":
        return 0.0
    if isinstance(call.work, Collective) and collective is not None:
        return collective(call.work)[1]
    if call.call == FUSED_HOST_CLASS:  # inside a fused C++ call: its module site pays
        return 0.0
    extra = m.host.call_s(table.per_call_extra) if table.per_call_extra else 0.0
    return m.host.call_s(call.call) + extra


def _given_host(calls: list[LoweredCall], host_s: Any, table: Any) -> list[float | None] | None:
    """Per lowered call, host seconds a workload gives for its program call (a Kineto trace's
    measured times, :mod:`accelsim.workload.kineto`): the first call of a site takes the
    site's value, the others 0; ``None`` (or no ``host_s``): the machine's host table. A CUDA
    graph has no per-call host time, so it ignores them."""
    if host_s is None or table.submit == "graph":
        return None
    out: list[float | None] = []
    seen: set[int] = set()
    for c in calls:
        h = host_s[c.op_index] if c.op_index < len(host_s) else None
        out.append(None if h is None else (0.0 if c.op_index in seen else float(h)))
        seen.add(c.op_index)
    return out


_NORM_MODULES = ("Norm", "Norm1d", "Norm2d", "Norm3d")
"""Module class name endings of normalisation modules (``RMSNorm``, ``LlamaRMSNorm``,
``LayerNorm``, ``BatchNorm2d``...)."""


def _in_norms(program: Any, sites: list, calls: list[LoweredCall]) -> list[LoweredCall]:
    """``calls`` with the pointwise, copy and reduction kernels a normalisation module launches
    (a captured ``LlamaRMSNorm``'s eight calls) in kernel class ``norm``, as the op path counts
    them (reporting only: no cost depends on a kernel's class)."""
    norms = {c.module for c in program.calls
             if c.fn == "module" and c.qualname.endswith(_NORM_MODULES)}
    if not norms:
        return calls
    out = []
    for c in calls:
        site = sites[c.op_index]
        if (c.work is not None and c.kernel_class in ("elementwise", "copy", "reduction")
                and program.calls[site.index].module in norms):
            c = dataclasses.replace(c, kernel_class="norm")
        out.append(c)
    return out


def _module_host(m: GpuMachine, program: Any, sites: list, calls: list[LoweredCall],
                 table: Any) -> list[float | None] | None:
    """Per lowered call of a program, host seconds of a parameterised ``nn`` module call whose
    whole call the machine measured (:data:`~accelsim.workload.op_calls.MODULE_HOST_CLASS`:
    ``nn.Linear``, ``nn.LayerNorm``...): its module site costs that class less its inner call
    (the next call, in the module; never below zero), plus the table's ``per_call_extra``, as
    a one-op program charges it (:func:`accelsim.devices.gpu_op_program.host_seconds`);
    ``None`` for every other call (the host table). None in graph mode."""
    from accelsim.workload.op_calls import MODULE_HOST_CLASS

    if table.submit == "graph":
        return None
    extra = m.host.call_s(table.per_call_extra) if table.per_call_extra else 0.0
    out: list[float | None] = [None] * len(calls)
    for i, c in enumerate(calls[:-1]):
        if c.call != "module":
            continue
        call = program.calls[sites[c.op_index].index]
        whole = MODULE_HOST_CLASS.get("nn." + call.qualname)
        inner = calls[i + 1]
        if (whole is None or whole not in m.host.eager_call_s or inner.call == "module"
                or program.calls[sites[inner.op_index].index].module != call.module):
            continue
        out[i] = max(0.0, m.host.call_s(whole) - m.host.call_s(inner.call)) + extra
    return out


@dataclass
class _Replayed:
    """A step lowered, costed and replayed: what the tables and the totals are made of."""

    table: Any
    wl: Any
    ops: list
    calls: list[LoweredCall]
    costs: list[_Cost | None]
    stream: list
    timeline: Any
    memory: Any
    static_w: float


def step_cold_weight_fraction(m: GpuMachine, memory: Any) -> float:
    """Share (0..1) of a model's weights that one step finds outside L2, having read them a
    step ago: the miss fraction of L2 over the step's weights and KV cache (each line
    counted ``compute.gemm_l2_operand_copies`` times, as GEMM operands are cached in both L2
    partitions), ``hw/gpu/memory.py`` ``l2_hit_fraction``. A model whose weights fit L2 (a
    small CNN) keeps them there between steps; one that overflows it reads every weight from
    HBM once per step. No memory check (``None``): every weight is cold."""
    if memory is None:
        return 1.0
    resident = m.compute.gemm_l2_operand_copies * (memory.weights_bytes
                                                  + memory.kv_cache_bytes)
    return 1.0 - l2_hit_fraction(m, resident, 0.0)


def _zoo_program(graph: Any, table: Any, zoo_lowering: str | None) -> Any:
    """The emitted program of a zoo graph lowered call by call (:data:`ZOO_LOWERING`), else
    None."""
    how = ZOO_LOWERING if zoo_lowering is None else zoo_lowering
    if how not in ZOO_LOWERINGS:
        raise ValueError(f"zoo_lowering={how!r}: expected one of {', '.join(ZOO_LOWERINGS)}")
    if how == "ops" or graph is None or table.merge_projections:
        return None
    from accelsim.workload.models.transformer import TransformerSpec
    from accelsim.workload.models.transformer_program import graph_program, is_llama_family

    spec = getattr(graph, "spec", None)
    if how == "auto" and (table.fuse or table.mode not in ("eager", "graph")
                          or not isinstance(spec, TransformerSpec)
                          or not is_llama_family(spec)):
        return None
    return graph_program(graph)


def _replay(m: GpuMachine, workload: Any, *, exec_mode: str, replay: str,
            progress: Callable[[int, int, str], None] | None, collective: CollectiveCost | None,
            cost_cache: dict | None, check_fit: bool,
            zoo_lowering: str | None = None) -> _Replayed:
    table = load_lowering(exec_mode)
    wl, ops, graph = framework_ops(workload, merge_projections=table.merge_projections)
    program = getattr(wl, "program", None)
    memory = None
    if program is None:
        program = _zoo_program(graph, table, zoo_lowering)
        if program is not None:  # the zoo model's HBM as its graph counts it
            memory = check_memory(m, wl, ops, graph=graph, refuse=check_fit)
    reduce_rows: list[bool] | None = None
    given: list[float | None] | None = None
    measured: list[bool] | None = None
    if program is not None:  # a captured (or emitted) program: lowered call by call
        sites = call_sites(program)
        ops = [(s.op if s.op is not None else HostCall(name=s.name, kind=s.fn), s.layer)
               for s in sites]
        reduce_rows = [s.rows > 0 for s in sites]
        if memory is None:
            memory = check_program_memory(m, wl, program)
        calls = fuse_sites(program, sites, table) if table.fuse else _in_norms(
            program, sites, lower_sites(sites, table))
        given = _given_host(calls, getattr(wl, "host_s", None), table)
        if given is not None:  # a trace's measured host times (its inner calls 0)
            measured = [h is not None for h in given]
        if given is None:
            given = _module_host(m, program, sites, calls, table)
    else:
        memory = check_memory(m, wl, ops, graph=graph, refuse=check_fit)
        calls = lower(ops, table)
    if table.step_call and calls:  # the step's entry (host only), charged to the first op
        calls = [LoweredCall(op_index=calls[0].op_index, op_name=calls[0].op_name,
                             call=table.step_call, work=None,
                             kernel_class=calls[0].kernel_class, layer=calls[0].layer),
                 *calls]
        given = None if given is None else [None, *given]
        measured = None if measured is None else [False, *measured]
    etab = energy_table_for(m)
    cold = step_cold_weight_fraction(m, memory)
    cache: dict = {} if cost_cache is None else cost_cache
    costs: list[_Cost | None] = []
    for i, c in enumerate(calls):
        row = None if reduce_rows is not None and not reduce_rows[c.op_index] \
            else _row_reduce(c, ops[c.op_index][0])
        if isinstance(c.work, Collective):
            costs.append(_collective_cost(c.work, collective))
            continue
        cost = None if c.work is None else _kernel_cost(m, c.work, etab, cache, row,
                                                        c.family, cold, c.user_call)
        if cost is not None and c.extra_kernel:  # launched from C++ beside the main one
            cost = dataclasses.replace(cost, extra_launches=cost.extra_launches + 1)
        costs.append(cost)
        if progress is not None and (i % 200 == 0 or i + 1 == len(calls)):
            progress(i + 1, len(calls), c.op_name)
    gpu_s = gpu_stream.hide_dependent_launches(
        [0.0 if k is None else k.gpu_s for k in costs],
        [k is not None and k.first_pdl for k in costs],
        [k is not None and k.last_pdl for k in costs], m.host.kernel_tail_s)
    hosts = given or [None] * len(calls)
    # eager: each kernel a library launches by shape besides its main one costs the host
    # extra_kernel_s (not when the host times are a trace's measured ones)
    eager = table.mode == "eager"
    extra = [m.host.extra_kernel_s * k.extra_launches
             if eager and k is not None and not (measured and measured[i]) else 0.0
             for i, k in enumerate(costs)]
    stream = [gpu_stream.StreamCall((_host_s(m, c, table, collective) if h is None else h) + x,
                                    g)
              for c, g, h, x in zip(calls, gpu_s, hosts, extra, strict=True)]
    run = gpu_stream.replay_event if replay == "event" else gpu_stream.replay_closed_form
    tl = run(stream, submit=table.submit, graph_launch_s=m.host.graph_launch_s,
             sync_s=m.host.sync_s)
    static_w = cache.get(("static_w",))
    if static_w is None:
        static_w = cache[("static_w",)] = sum(static_power_w(m, etab).values())
    return _Replayed(table, wl, ops, calls, costs, stream, tl, memory, static_w)


def run_gpu_model(m: GpuMachine, workload: Any, *, exec_mode: str = DEFAULT_EXEC,
                  replay: str = "analytic",
                  progress: Callable[[int, int, str], None] | None = None,
                  collective: CollectiveCost | None = None,
                  cost_cache: dict | None = None, check_fit: bool = True,
                  zoo_lowering: str | None = None) -> ModelRun:
    """``workload`` on GPU ``m`` as execution mode ``exec_mode`` runs it (see module doc).

    ``collective`` prices the collectives of a parallel model's rank (:mod:`accelsim.workload.
    parallel`); ``cost_cache`` keeps kernel costs by shape across runs on the same ``m``
    (a serving simulation evaluates many steps); ``check_fit=False`` reports the memory check
    without refusing a step that does not fit (the caller owns capacity, e.g. a KV-cache
    manager); ``zoo_lowering`` (``auto``, ``calls``, ``ops``; None: :data:`ZOO_LOWERING`) how
    a zoo decoder lowers."""
    r = _replay(m, workload, exec_mode=exec_mode, replay=replay, progress=progress,
                collective=collective, cost_cache=cost_cache, check_fit=check_fit,
                zoo_lowering=zoo_lowering)
    calls, costs, stream, tl, ops = r.calls, r.costs, r.stream, r.timeline, r.ops
    call_df = pd.DataFrame({
        "call": np.arange(len(calls)), "layer": [c.op_name for c in calls],
        "op": [getattr(ops[c.op_index][0], "kind", "") for c in calls],
        "call_class": [c.call for c in calls], "kernel_class": [c.kernel_class for c in calls],
        "kernels": [0 if k is None else k.kernels for k in costs],
        "host_s": [s.host_s for s in stream], "gpu_s": [s.gpu_s for s in stream],
        "host_start_s": tl.host_start, "host_end_s": tl.host_end,
        "gpu_start_s": tl.gpu_start, "gpu_end_s": tl.gpu_end}, columns=CALL_COLUMNS)
    layers = _op_table(m, ops, calls, costs, stream)
    return ModelRun(m, r.wl, layers, exec_mode=r.table.mode, calls=call_df,
                    breakdown=_breakdown(call_df, tl), memory=r.memory, step_s=tl.time_s,
                    replay=replay, static_power_w=r.static_w)


def step_totals(m: GpuMachine, workload: Any, *, exec_mode: str = DEFAULT_EXEC,
                collective: CollectiveCost | None = None,
                cost_cache: dict | None = None,
                zoo_lowering: str | None = None) -> dict[str, float]:
    """The step time, GPU-busy time and energy of :func:`run_gpu_model` (the same replay and
    the same sums as :attr:`ModelRun.totals`) without its tables: what a serving simulation
    evaluates thousands of times. Seconds, joules."""
    r = _replay(m, workload, exec_mode=exec_mode, replay="analytic", progress=None,
                collective=collective, cost_cache=cost_cache, check_fit=False,
                zoo_lowering=zoo_lowering)
    t = r.timeline.time_s
    busy = float(sum(k.gpu_s for k in r.costs if k is not None))
    energy = float(sum(k.energy_j for k in r.costs if k is not None))
    return {"time_s": t, "gpu_busy_s": busy,
            "energy_j": energy + r.static_w * max(0.0, t - busy)}


def _op_table(m: GpuMachine, ops: list, calls: list[LoweredCall], costs: list,
              stream: list) -> pd.DataFrame:
    rows: dict[int, dict[str, Any]] = {}
    for c, k, s in zip(calls, costs, stream, strict=True):
        op = ops[c.op_index][0]
        r = rows.setdefault(c.op_index, {
            "layer": c.op_name, "op": getattr(op, "kind", type(op).__name__),
            "precision": getattr(op, "dtype", None) or "", "time_s": 0.0, "host_s": 0.0,
            "kernels": 0, "flops": 0.0, "dram_bytes": 0.0, "energy_j": 0.0, "bound": "host",
            "_longest": -1.0})
        r["host_s"] += s.host_s
        if k is None:
            continue
        r["time_s"] += k.gpu_s
        r["kernels"] += k.kernels
        r["flops"] += k.flops
        r["dram_bytes"] += k.hbm_bytes
        r["energy_j"] += k.energy_j
        if k.gpu_s > r["_longest"]:
            r["_longest"], r["bound"] = k.gpu_s, k.bound
    for i, (op, _) in enumerate(ops):  # ops a mode fuses away launch nothing
        rows.setdefault(i, {"layer": getattr(op, "name", f"op{i}"),
                            "op": getattr(op, "kind", ""), "precision": "", "time_s": 0.0,
                            "host_s": 0.0, "kernels": 0, "flops": 0.0, "dram_bytes": 0.0,
                            "energy_j": 0.0, "bound": "fused", "_longest": 0.0})
    df = pd.DataFrame([rows[i] for i in sorted(rows)]).drop(columns="_longest")
    t = df["time_s"].where(df["time_s"] > 0)
    peak = {p: m.peak_flops(p) for p in set(df["precision"]) if p and m.supports(p)}
    df["flop_per_s"] = (df["flops"] / t).fillna(0.0)
    df["tflops"] = df["flop_per_s"] / 1e12
    df["util"] = [f / tt / peak[p] if tt > 0 and p in peak else 0.0
                  for f, tt, p in zip(df["flops"], df["time_s"], df["precision"], strict=True)]
    df["bw_util"] = (df["dram_bytes"] / t / m.memory.hbm.bandwidth_bytes_per_s).fillna(0.0)
    return df[COLUMNS]


def _breakdown(calls: pd.DataFrame, tl: gpu_stream.StreamTimeline) -> pd.DataFrame:
    """GPU time per kernel class, plus ``host-idle`` (the GPU waiting for the host)."""
    g = calls.groupby("kernel_class")
    rows = [{"kernel_class": k, "time_s": float(g["gpu_s"].sum().get(k, 0.0)),
             "kernels": int(g["kernels"].sum().get(k, 0))}
            for k in KERNEL_CLASSES if k in g.groups and g["kernels"].sum().get(k, 0) > 0]
    rows.append({"kernel_class": "host-idle", "time_s": tl.gpu_idle_s, "kernels": 0})
    df = pd.DataFrame(rows, columns=["kernel_class", "time_s", "kernels"])
    df["fraction"] = df["time_s"] / tl.time_s if tl.time_s > 0 else 0.0
    return df
