"""One operator on one GPU: ``simulate_op(hw, op) -> dict``.

    >>> from accelsim.api.gpu import simulate_op
    >>> from accelsim.workload.ops import Gemm
    >>> r = simulate_op("h200", Gemm(name="g", m=4096, n=4096, k=4096, dtype="bf16"))
    >>> r["time_s"], r["flop_per_s"], r["bound"], r["tile"], r["waves"]

The document holds ``time_s`` (GPU-side time of the op's kernels back to back, launch gaps
included: what a CUDA graph or a busy stream sees), ``eager_time_s`` (the same op issued
alone by a framework: at least ``host.host_launch_s``), ``cycles`` (at the SM clock under
load for the precision), ``flops``, ``bytes`` (compulsory: inputs read once, outputs written
once), ``hbm_bytes`` and ``l2_bytes`` (modelled traffic), ``flop_per_s`` (achieved FLOP/s)
and ``peak_flop_per_s`` (the dense peak at the precision it ran), ``bound`` (the resource
that limits the longest kernel: tensor_core, tensor_core_unaligned, simt, sfu, smem, l2, hbm
or launch) and explanations (path, tile, split_k, ctas, waves, l2_hit, per-kernel times).
``tflops`` and ``peak_tflops`` (the same in TFLOP/s) are kept for one release as aliases.

``sparsity="2:4"`` (GEMMs on Ampere/Hopper, :mod:`accelsim.hw.gpu.sparsity`): the weights are
2:4 structured-sparse. ``flops``, ``flop_per_s`` and ``peak_flop_per_s`` are then dense-equivalent
(as NVIDIA's sparse datasheet figures are), ``bytes`` counts the compressed weights, and
``macs_executed`` is half of ``macs``; a GPU without sparse tensor cores (V100) raises
:class:`UnsupportedError`.

Imports: config, workload, hw, engine, errors.
"""

from __future__ import annotations

import os

from accelsim.config.gpu import GpuMachine
from accelsim.config.registry import load_machine
from accelsim.engine.gpu_replay import replay_closed_form, replay_event
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.kernel import bound_of
from accelsim.hw.gpu.sparsity import sparse_peak_flops
from accelsim.limits import MAX_GPU_CTAS, check_count

MODES = ("event", "analytic")


def load_gpu(hw: str | os.PathLike | GpuMachine) -> GpuMachine:
    """A GPU machine from a built-in name, a YAML path or an object; else a one-line error."""
    m = hw if isinstance(hw, GpuMachine) else load_machine(hw)
    if not isinstance(m, GpuMachine):
        kind = getattr(m, "kind", type(m).__name__)
        raise UnsupportedError(f"{getattr(m, 'name', hw)} is a '{kind}' machine, not a GPU "
                               "(kind: gpu)")
    return m


def simulate_op(hw: str | os.PathLike | GpuMachine, op: object, *, mode: str = "event",
                precision: str | None = None, sparsity: str | None = None) -> dict:
    """Time one operator on a GPU; see the module docstring for the fields. Seconds, bytes."""
    if mode not in MODES:
        raise ConfigError(None, "mode", mode, f"must be one of {', '.join(MODES)}")
    m = load_gpu(hw)
    plan = plan_op(m, op, precision, sparsity=sparsity)
    macs = float(getattr(op, "macs", 0))
    if mode == "event":
        check_count(sum(k.ctas for k in plan.kernels), MAX_GPU_CTAS, file=m.name,
                    field=getattr(op, "name", "op"), what="CTAs",
                    hint="run it with --mode analytic (closed form)")
        rep = replay_event(plan.kernels, m)
    else:
        rep = replay_closed_form(plan.kernels, m, contention=True)
    t = rep.time_s
    if len(plan.kernels) == 1 and plan.kernels[0].meta.get("pdl"):
        # the same GEMM back to back: each launches while its predecessor retires (PDL)
        t -= m.host.kernel_tail_s
    longest = max(range(len(plan.kernels)), key=lambda i: rep.kernel_s[i])
    clock = m.load_clock_hz(plan.precision)
    doc = {
        "machine": m.name, "op": plan.op_kind, "precision": plan.precision, "mode": mode,
        "time_s": t, "eager_time_s": max(t, m.host.host_launch_s),
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
        "bound": bound_of(plan.kernels[longest], m),
        **plan.explain,
        "kernels": [{"name": k.name, "time_s": s, "ctas": k.ctas,
                     "hbm_bytes": k.hbm_bytes, "l2_bytes": k.l2_bytes}
                    for k, s in zip(plan.kernels, rep.kernel_s, strict=True)],
    }
    return doc
