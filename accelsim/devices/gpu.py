"""The GPU device (``kind: gpu``): ops planned into kernels by :mod:`accelsim.hw.gpu`, timed by
the kernel replay (:mod:`accelsim.engine.gpu_replay`), roofs from the config.

Roofs: peak = the config's dense peak at the precision (tensor cores, CUDA cores for fp32);
``l1`` = shared memory, ``sm_smem_bytes_per_clk x SMs x clock``; ``l2`` = the configured L2
bandwidth; ``hbm`` = the datasheet HBM bandwidth; ``host`` = the PCIe link of ``host`` (raw
bytes/s per direction, from the link generation tables).

Actions and energy (:mod:`accelsim.report.gpu_power`): tensor-core MACs, other FLOP,
accumulator and shared-memory operand staging, L2 traffic in 256-bit accesses, HBM traffic,
plus the per-MAC datapath overhead of the table (``core.gpu_mac``).

Whole models: :meth:`GpuDevice.run_model`, as an execution mode runs them
(:mod:`accelsim.devices.gpu_model`).

Imports: errors, limits, analysis.roofline, config.gpu, config.link, config.lowering,
engine.gpu_replay, hw.gpu, hw.gpu.kernel, hw.gpu.sparsity, report.energy, report.gpu_power,
report.power, workload.device_ops, workload.op_calls, devices.base, devices.gpu_model,
devices.gpu_op_program, devices.results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pandas as pd

from accelsim.analysis.roofline import MachineRoofs, Roof
from accelsim.config.gpu import GpuMachine
from accelsim.config.lowering import EXEC_MODES
from accelsim.devices.base import DeviceBase, OpCost, RunOptions
from accelsim.devices.gpu_model import DEFAULT_EXEC, run_gpu_model
from accelsim.devices.gpu_op_program import OP_EXEC_MODES, check_exec, op_program
from accelsim.devices.results import ModelRun
from accelsim.engine.gpu_replay import replay_closed_form, replay_event
from accelsim.errors import ConfigError
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.kernel import bound_of, extra_launches, pays_tail
from accelsim.hw.gpu.sparsity import sparse_peak_flops
from accelsim.limits import MAX_GPU_CTAS, check_count
from accelsim.report.gpu_power import gpu_energy_j
from accelsim.workload.device_ops import device_op
from accelsim.workload.op_calls import (
    NCHW_POINTWISE_ALGORITHMS,
    computed_op,
    default_call,
    nchw_pointwise,
)

MODES = ("event", "analytic")


def op_document(m: GpuMachine, op: object, *, mode: str = "event", precision: str | None = None,
                sparsity: str | None = None, exec_mode: str | None = None,
                call: str | None = None, pointwise: str | None = None) -> dict:
    """Time one operator on GPU ``m``: the document of :func:`accelsim.api.gpu.simulate_op`
    (seconds, bytes, FLOP; see that module's docstring for the fields). An op the libraries
    run as another (an embedding lookup: a row gather, fused ops) is planned as that op
    (:func:`~accelsim.workload.device_ops.device_op`, as whole models run it). ``exec_mode``
    (``eager``, ``graph``): the op as users call it (``call``, default the op's usual call),
    back to back in that mode (:mod:`accelsim.devices.gpu_op_program`); ``time_s`` is then
    the time per call, host included. An NCHW pointwise convolution call runs whichever of
    cuDNN's two ways is faster (``pointwise``, :data:`~accelsim.workload.op_calls.
    NCHW_POINTWISE_ALGORITHMS`: cuBLAS's batched GEMM on the NCHW rows, or the NHWC kernel
    between two transposes; run 17 profiles the first at batch 5 and times the second's
    cost from batch 16 on); the document says which (``nchw_pointwise``)."""
    if mode not in MODES:
        raise ConfigError(None, "mode", mode, f"must be one of {', '.join(MODES)}")
    if exec_mode is not None:
        check_exec(exec_mode)
    elif call is not None:
        raise ConfigError(None, "call", call, "names how users call the op: give an "
                          f"execution mode with it (exec: {', '.join(OP_EXEC_MODES)})")
    if exec_mode is not None and pointwise is None and nchw_pointwise(op, call or ""):
        docs = [op_document(m, op, mode=mode, precision=precision, sparsity=sparsity,
                            exec_mode=exec_mode, call=call, pointwise=way)
                for way in NCHW_POINTWISE_ALGORITHMS]
        # the library's choice is the GPU's: the faster kernels, whatever the mode
        return min(docs, key=lambda d: d["gpu_s"])
    way = pointwise or NCHW_POINTWISE_ALGORITHMS[0]
    # a call may have the GPU compute the op as another (an NCHW 1x1 conv: a batched GEMM)
    run_as = device_op(computed_op(op, call or default_call(op), way) if exec_mode else op)
    plan = plan_op(m, run_as, precision, sparsity=sparsity)
    macs = float(getattr(op, "macs", 0))
    if mode == "event":
        check_count(sum(k.ctas for k in plan.kernels), MAX_GPU_CTAS, file=m.name,
                    field=getattr(op, "name", "op"), what="CTAs",
                    hint="run it with --mode analytic (closed form)")
        rep = replay_event(plan.kernels, m)
    else:
        rep = replay_closed_form(plan.kernels, m, contention=True)
    t = rep.time_s
    # One op as users time it: the op repeated back to back (a CUDA graph of calls). A kernel
    # there costs launch_s + its own time; the completion cost kernel_tail_s is a term of a
    # whole model's stream, not of a repeated op (ARCHITECTURE.md, "GPU per-kernel costs").
    tails = [m.host.kernel_tail_s if pays_tail(k) else 0.0 for k in plan.kernels]
    t -= sum(tails)
    longest = max(range(len(plan.kernels)), key=lambda i: rep.kernel_s[i])
    bound = bound_of(plan.kernels[longest], m)
    program: dict = {}
    if exec_mode is not None:  # the op as users call it: a one-op program, back to back
        program = op_program(m, op, t, exec_mode=exec_mode, call=call, replay=mode,
                             extra_kernels=extra_launches(plan.kernels), pointwise=way)
        if nchw_pointwise(op, call or ""):
            program["nchw_pointwise"] = way
        t = program["time_s"]
        bound = "host" if program["host_s"] > program["gpu_s"] else bound
    clock = m.load_clock_hz(plan.precision)
    return {
        "machine": m.name, "kind": m.kind,
        "op": plan.op_kind if run_as is op else getattr(op, "kind", plan.op_kind),
        "precision": plan.precision, "mode": mode, **program,
        "time_s": t,
        "cycles": t * clock, "clock_hz": clock,
        "flops": float(plan.flops), "bytes": float(plan.bytes),
        "hbm_bytes": sum(k.hbm_bytes for k in plan.kernels),
        "l2_bytes": sum(k.l2_bytes for k in plan.kernels),
        "flop_per_s": plan.flops / t if t > 0 else 0.0,
        "bandwidth_bytes_per_s": plan.bytes / t if t > 0 else 0.0,
        "peak_flop_per_s": sparse_peak_flops(m, plan.precision, sparsity),
        "tflops": plan.flops / t / 1e12 if t > 0 else 0.0,  # alias, one release
        "peak_tflops": sparse_peak_flops(m, plan.precision, sparsity) / 1e12,  # alias
        "sparsity": plan.explain.get("sparsity", "dense"),
        "macs": macs, "macs_executed": macs * plan.explain.get("density", 1.0),
        "bound": bound,
        **plan.explain,
        "kernels": [{"name": k.name, "time_s": s - tail, "ctas": k.ctas,
                     "hbm_bytes": k.hbm_bytes, "l2_bytes": k.l2_bytes}
                    for k, s, tail in zip(plan.kernels, rep.kernel_s, tails, strict=True)],
    }


def gpu_actions(m: GpuMachine, *, macs: float, flops: float, l2_bytes: float,
                hbm_bytes: float, precision: str) -> pd.DataFrame:
    """Action records of GPU work (:func:`accelsim.report.gpu_power.gpu_energy_records`:
    MACs, other FLOP, accumulator and shared-memory staging, L2 and HBM traffic), one column
    ``part`` naming the energy part each belongs to."""
    from accelsim.report.gpu_power import gpu_energy_records

    recs = gpu_energy_records(m, macs=macs, flops=flops, l2_bytes=l2_bytes,
                              hbm_bytes=hbm_bytes, precision=precision)
    return pd.DataFrame([{**r, "part": part} for part, rs in recs.items() for r in rs])


class GpuDevice(DeviceBase):
    """A tensor-core GPU (:class:`~accelsim.config.gpu.GpuMachine`)."""

    kind: ClassVar[str] = "gpu"
    noun: ClassVar[str] = "GPUs"
    levels: ClassVar[tuple[str, ...]] = ("l2", "hbm")
    run_flags: ClassVar[frozenset[str]] = frozenset({"exec_mode", "trace"})

    def plan(self, op: object, *, precision: str | None = None) -> Any:
        """The op's kernels (:func:`accelsim.hw.gpu.plan_op` of the op the libraries run:
        :func:`~accelsim.workload.device_ops.device_op`)."""
        return plan_op(self.machine, device_op(op), precision)

    def cost(self, op: object, *, precision: str | None = None) -> OpCost:
        """The analytic (closed-form, with contention floor) time of ``op``."""
        m = self.machine
        doc = op_document(m, op, mode="analytic", precision=precision)
        prec = doc["precision"]
        actions = gpu_actions(m, macs=float(getattr(op, "macs", 0)), flops=doc["flops"],
                              l2_bytes=doc["l2_bytes"], hbm_bytes=doc["hbm_bytes"],
                              precision=prec)
        return OpCost(name=getattr(op, "name", "op"), op=getattr(op, "kind", ""), precision=prec,
                      time_s=float(doc["time_s"]), flops=float(doc["flops"]),
                      level_bytes={"l2": float(doc["l2_bytes"]), "hbm": float(doc["hbm_bytes"])},
                      offchip_bytes=float(doc["hbm_bytes"]),
                      peak_flops_per_s=doc["peak_flop_per_s"],
                      offchip_bytes_per_s=m.memory.hbm.bandwidth_bytes_per_s,
                      bound=doc["bound"], actions=actions, detail=doc)

    def run_model(self, workload: Any, options: RunOptions | None = None, *,
                  progress: Callable[[int, int, str], None] | None = None) -> ModelRun:
        """``workload`` as a framework runs it (:func:`accelsim.devices.gpu_model.run_gpu_model`):
        ``options.exec_mode`` (default ``eager``; a built-in mode or a lowering YAML path) and
        ``options.mode`` (``event``: host and stream replayed on SimPy; else the equal closed
        form)."""
        opts = options or RunOptions()
        mode = opts.exec_mode or DEFAULT_EXEC
        if mode not in EXEC_MODES and not str(mode).endswith((".yaml", ".yml")):
            raise ConfigError("--exec", "exec", mode,
                              f"unknown execution mode (known: {', '.join(EXEC_MODES)})")
        return run_gpu_model(self.machine, workload, exec_mode=mode,
                             replay="event" if opts.mode == "event" else "analytic",
                             progress=progress)

    def energy_j(self, cost: OpCost, table: Any = None) -> float:
        """Dynamic energy of :meth:`cost`'s work (:func:`gpu_energy_j`) priced with ``table``
        (default: the machine's), plus static (leakage) power over the op's time
        (:func:`accelsim.report.power.static_power_w`)."""
        from accelsim.report.energy import energy_table_for
        from accelsim.report.power import static_power_w

        tab = table or energy_table_for(self.machine)
        doc = cost.detail
        dynamic = gpu_energy_j(self.machine, tab, macs=doc["macs"], flops=doc["flops"],
                               l2_bytes=doc["l2_bytes"], hbm_bytes=doc["hbm_bytes"],
                               precision=doc["precision"])
        return dynamic + sum(static_power_w(self.machine, tab).values()) * cost.time_s

    def roofs(self, precision: str | None = None) -> MachineRoofs:
        """Roofs at ``precision`` (default fp16); see the module docstring."""
        from accelsim.config.link import LinkSpec

        m = self.machine
        prec = precision or "fp16"
        comp, mem = m.compute, m.memory
        roofs = [Roof(level="l1", bandwidth_bytes_per_s=comp.sm_smem_bytes_per_clk
                      * comp.sm_count * comp.clock_hz),
                 Roof(level="l2", bandwidth_bytes_per_s=mem.l2_bandwidth_bytes_per_s),
                 Roof(level="hbm", bandwidth_bytes_per_s=mem.hbm.bandwidth_bytes_per_s)]
        host = getattr(m, "host", None)
        if host is not None:
            pcie = LinkSpec(name="host", protocol="pcie", generation=host.pcie_generation,
                            lanes=host.pcie_lanes)
            roofs.append(Roof(level="host", bandwidth_bytes_per_s=pcie.raw_bytes_per_s))
        return MachineRoofs(name=m.name, peak_flops_per_s=float(m.peak_flops(prec)),
                            precision=prec, roofs=tuple(roofs))
