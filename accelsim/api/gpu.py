"""One operator on one machine: ``simulate_op(hw, op, **fields) -> dict``.

    >>> from accelsim.api.gpu import simulate_op
    >>> r = simulate_op("h200", "gemm", m=4096, n=4096, k=4096, dtype="bf16")
    >>> r["time_s"], r["flop_per_s"], r["bound"], r["tile"], r["waves"]
    >>> simulate_op("h200", "attention", batch=4, heads=32, seq=4096, head_dim=128, causal=True)
    >>> simulate_op("tpu_v4", "conv2d", n=1, c=64, h=56, w=56, k=64, r=3, s=3, pad=1)

``op`` is an operator object (:mod:`accelsim.workload.ops`, :mod:`accelsim.workload.nn_ops`)
or an op name with its fields, as ``accelsim op HW OPNAME --FIELD VALUE`` takes them
(:func:`make_op`: the names and fields of the op registry, the command line's spellings such
as ``seq`` for attention's ``seq_q`` and ``head-dim``/``head_dim``, its defaults, ``dtype``
``bf16`` unless given).

The document holds ``time_s`` (GPU-side time per call of the op repeated back to back, launch
gaps included: what a busy stream sees; a whole model's stream adds ``host.kernel_tail_s`` per
kernel but a convolution's, ARCHITECTURE.md "GPU per-kernel costs"), ``cycles`` (at the SM
clock under load for the precision), ``flops``, ``bytes`` (compulsory: inputs read once, outputs
written once), ``hbm_bytes`` and ``l2_bytes`` (modelled traffic), ``flop_per_s`` (achieved FLOP/s)
and ``peak_flop_per_s`` (the dense peak at the precision it ran), ``bound`` (the resource
that limits the longest kernel: tensor_core, tensor_core_unaligned, simt, sfu, smem, l2, hbm
or launch) and explanations (path, tile, split_k, ctas, waves, l2_hit, per-kernel times).
``tflops`` and ``peak_tflops`` (the same in TFLOP/s) are kept for one release as aliases.

``exec="eager"`` or ``"graph"``: the op as users call it (``call``: ``nn.Linear``, ``F.linear``
or ``matmul`` for a GEMM, ``nn.Conv2d``..., default the usual one), a one-op program through
the mode's lowering table, called back to back (:mod:`accelsim.devices.gpu_op_program`). The
document then also holds ``exec``, ``call``, ``calls`` (its framework calls with their host
cost classes and seconds), ``host_s`` and ``gpu_s`` per call (host dispatch, or the graph
launch spread over the calls; the op's kernels) and ``back_to_back_calls``; ``time_s`` is the
time per call with host and GPU overlapping (the replay's), ``bound`` is ``host`` when the
host's time per call exceeds the GPU's, and the rates are per call.

``sparsity="2:4"`` (GEMMs on Ampere/Hopper, :mod:`accelsim.hw.gpu.sparsity`): the weights are
2:4 structured-sparse. ``flops``, ``flop_per_s`` and ``peak_flop_per_s`` are then dense-equivalent
(as NVIDIA's sparse datasheet figures are), ``bytes`` counts the compressed weights, and
``macs_executed`` is half of ``macs``; a GPU without sparse tensor cores (V100) raises
:class:`UnsupportedError`.

A machine of another kind runs one op as a whole workload: ``simulate("tpu_v4",
make_op("gemm", m=4096, n=4096, k=4096))`` (what ``accelsim op tpu_v4 gemm`` does).

Imports: errors, limits, config.gpu, config.registry, devices.gpu, workload.registry, api.simulate.
"""

from __future__ import annotations

import numbers
import os
from typing import Any

from accelsim.config.gpu import GpuMachine
from accelsim.config.registry import load_machine
from accelsim.devices.gpu import MODES, op_document
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.limits import MAX_DIM, check_number

__all__ = ["MODES", "load_gpu", "make_op", "simulate_op"]

DEFAULT_DTYPE = "bf16"
"""An op's precision when a name is given without ``dtype`` (``accelsim op``'s default)."""


def make_op(op: Any, **fields: Any) -> Any:
    """The operator that op name ``op`` and its ``fields`` describe, as ``accelsim op HW OP
    --FIELD VALUE ...`` builds it (:func:`accelsim.workload.registry.cli_fields`): a kind
    (``gemm``, ``conv2d``, ``attention``...) or a preset name (``relu``); a field by its name
    or any command-line spelling (``seq`` or ``seq_q``, ``head-dim`` or ``head_dim``);
    ``dtype`` default ``bf16``, ``name`` default the op name; the command line's defaults
    (a GEMM's ``shared_weights=False``, attention's ``seq_kv = seq_q``). An operator object is
    returned as is (with no fields). One-line :class:`ConfigError` naming the field otherwise."""
    from accelsim.workload.registry import (
        CLI_DEFAULTS,
        OP_TYPES,
        cli_fields,
        cli_op_names,
        resolve_op_name,
    )

    if not isinstance(op, str):
        if fields:
            raise ConfigError(None, next(iter(fields)), fields[next(iter(fields))],
                              "fields go with an op name; an operator object has its own")
        return op
    try:
        kind, preset = resolve_op_name(op)
    except KeyError:
        raise ConfigError(None, "op", op, f"unknown operator (known: {', '.join(cli_op_names())})"
                          ) from None
    spec = [f for f in cli_fields(kind) if f.name not in preset]
    spelled = {}
    for f in spec:
        for name in (f.name, *(flag.lstrip("-") for flag in f.flags)):
            spelled[name] = spelled[name.replace("-", "_")] = f.name
    extra = {k: fields.pop(k) for k in ("name", "dtype") if k in fields}
    values: dict[str, Any] = {}
    for key, value in fields.items():
        if key not in spelled:
            raise ConfigError(None, key, value, f"not a field of {kind} (known: "
                              f"{', '.join(f.name for f in spec)}, dtype, name)")
        values[spelled[key]] = value
    for f in spec:
        v = values.get(f.name)
        if v is None and f.default_from is not None and values.get(f.default_from) is not None:
            values[f.name] = values[f.default_from]
        elif v is None and f.name in CLI_DEFAULTS.get(kind, {}):
            values[f.name] = CLI_DEFAULTS[kind][f.name]
        elif v is None and f.required:
            raise ConfigError(None, f.name, None, f"{kind} needs {f.name} (a {f.type})")
        elif f.type == "int" and v is not None:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < f.min_value:
                raise ConfigError(None, f.name, v, f"must be an integer >= {f.min_value}")
            check_number(int(v), file=None, field=f.name, integer=True, maximum=MAX_DIM)
            values[f.name] = int(v)
    try:
        return OP_TYPES[kind](name=extra.get("name", op), **preset, **values,
                              dtype=extra.get("dtype", DEFAULT_DTYPE))
    except (TypeError, ValueError) as exc:
        raise ConfigError(None, op, None, str(exc)) from None


def load_gpu(hw: str | os.PathLike | GpuMachine) -> GpuMachine:
    """A GPU machine from a built-in name, a YAML path or an object; else a one-line error."""
    m = hw if isinstance(hw, GpuMachine) else load_machine(hw)
    if not isinstance(m, GpuMachine):
        kind = getattr(m, "kind", type(m).__name__)
        raise UnsupportedError(f"{getattr(m, 'name', hw)} is a '{kind}' machine, not a GPU "
                               "(kind: gpu); one op on it: simulate(hw, make_op(...))")
    return m


def simulate_op(hw: str | os.PathLike | GpuMachine, op: Any, *, mode: str = "event",
                precision: str | None = None, sparsity: str | None = None,
                exec: str | None = None, call: str | None = None,  # noqa: A002 - the CLI's name
                **fields: Any) -> dict:
    """Time one operator on a machine (name, path or object); ``op`` an operator object or an
    op name with its ``fields`` (:func:`make_op`, as ``accelsim op`` takes them). On a GPU:
    ``exec`` (``eager``, ``graph``; ``call``) times the op as users call it in that mode, back
    to back; see the module docstring for the document's keys. On a systolic array or a CPU
    the op runs as a one-layer workload (``simulate(hw, make_op(...))``, which gives the whole
    result) and the document carries the keys every kind shares (:func:`other_kind_document`).
    Seconds, FLOP, bytes."""
    m = hw if isinstance(hw, GpuMachine) else load_machine(hw)
    if not isinstance(m, GpuMachine) and getattr(m, "kind", "") in ("systolic", "cpu"):
        if exec is not None or call is not None:
            flag = "exec" if exec is not None else "call"
            raise UnsupportedError(f"{m.name}: {flag} times an op as a framework's host issues "
                                   "it to a GPU; this machine runs the op as one layer")
        if isinstance(op, str) and precision is not None:
            fields.setdefault("dtype", precision)
        return other_kind_document(m, make_op(op, **fields) if isinstance(op, str) else op,
                                   mode=mode, sparsity=sparsity)
    machine = m if isinstance(m, GpuMachine) else load_gpu(hw)  # else: the one-line refusal
    if isinstance(op, str) and precision is not None:
        fields.setdefault("dtype", precision)
    return op_document(machine, make_op(op, **fields), mode=mode, precision=precision,
                       sparsity=sparsity, exec_mode=exec, call=call)


def other_kind_document(machine: Any, op: Any, *, mode: str = "event",
                        sparsity: Any = None) -> dict:
    """One op on a systolic array or a CPU as :func:`simulate_op`'s document: ``machine``,
    ``kind``, ``op``, ``precision``, ``mode``, ``time_s`` (s), ``flops``, ``macs``,
    ``flop_per_s``, ``bytes`` (DRAM bytes, decimal), ``energy_j`` and, where the kind has
    them, ``cycles`` and ``utilization`` (MACs over PEs x cycles)."""
    from accelsim.api.simulate import simulate

    frac = None if sparsity is None else float(sparsity)
    r = simulate(machine, op, mode="auto" if mode == "analytic" else mode, sparsity=frac)
    t = r.totals
    precision = (machine.array.precision if getattr(machine, "kind", "") == "systolic"
                 else getattr(op, "dtype", None))
    doc = {"machine": machine.name, "kind": machine.kind, "op": getattr(op, "name", str(op)),
           "precision": precision, "mode": getattr(r, "mode", mode),
           "time_s": float(t["time_s"]), "flops": float(t["flops"]),
           "macs": float(t.get("macs", t["flops"] / 2)),
           "flop_per_s": float(t["flop_per_s"]), "bytes": float(t.get("dram_bytes", 0.0)),
           "energy_j": float(r.energy.total_pj) / 1e12 if r.energy is not None else None}
    if "total_cycles" in t:
        doc["cycles"] = int(t["total_cycles"])
    if "overall_util" in t:
        doc["utilization"] = float(t["overall_util"])
    return doc
