"""Lowering tables: what a framework launches for each op in one execution mode.

A table (``configs/lowering/<mode>.yaml``: ``eager``, ``graph``, ``compiled``) maps a
framework-level op (the model graph's op, keyed by :func:`accelsim.mapping.gpu_lowering.op_key`)
to the calls the framework makes for it: each call has a host cost class (priced by the
machine's ``host.eager_call_s``) and, if it computes, the kernel it launches (the op's own
kernel, or a memory-bound stream kernel described by bytes and instructions per element).
``submit`` says how calls reach the GPU: ``per_call`` (the host dispatches each call) or
``graph`` (one CUDA-graph launch per step). ``fuse`` (``inductor``) fuses a captured
program's calls first (:mod:`accelsim.mapping.program_fusion`), each fused kernel paying host
class ``fuse_call``. ``inherit`` takes every op a table does not list
from another table; ``host_call`` re-prices every inherited call that launches a kernel
(and drops inherited host-only calls), as a compiler's generated wrapper does.

The tables are data: a new framework behaviour is a YAML edit (ARCHITECTURE.md, "execution
mode"). Units: bytes per element, instructions per element.

Imports: errors, limits, files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsim.errors import ConfigError
from accelsim.files import builtin_names, read_yaml, resolve_path
from accelsim.limits import MAX_CALLS_PER_STEP

EXEC_MODES = ("eager", "graph", "compiled")
"""Built-in execution modes (``configs/lowering/<mode>.yaml``)."""

SUBMITS = ("per_call", "graph")
FUSE_RULES = ("inductor",)
"""How a compiler fuses a captured program's calls (``fuse:``): ``inductor``, TorchInductor's
pointwise/reduction fusion as :mod:`accelsim.mapping.program_fusion` approximates it."""
KERNELS = ("main", "stream", "io")
"""``main``: the op's own kernel(s); ``stream``: a pointwise/reduction kernel given per element;
``io``: a pointwise/reduction kernel over a captured call's own tensors (bytes read and written
from its shapes and dtypes, launch family from its strides; ``flop``/``sfu``, when given,
override the call's per-element counts)."""
KERNEL_CLASSES = ("gemm", "attention", "norm", "elementwise", "conv", "copy", "pool",
                  "embedding", "comm", "other")
"""Where the time goes: the classes a model run reports GPU time in (plus ``host-idle``)."""

FAMILIES = ("vectorized", "strided")
"""How PyTorch launches a pointwise kernel: ``vectorized`` (``vectorized_elementwise_kernel``:
contiguous operands, vector loads) or ``strided`` (``elementwise_kernel`` /
``unrolled_elementwise_kernel`` on transposed or broadcast views and dtype casts, and
``CatArrayBatchedCopy``): a strided kernel pays ``host.strided_kernel_s`` more per launch."""

_STEP_KEYS = {"call", "kernel", "class", "count", "read", "write", "flop", "sfu", "rows",
              "family"}


@dataclass(frozen=True, slots=True, kw_only=True)
class LoweredStep:
    """One framework call made for an op: its host cost class and the kernel it launches."""

    call: str
    """Host cost class (a key of ``host.eager_call_s``)."""
    kernel: str | None = None
    """``main`` (the op's own kernel), ``stream`` (a pointwise/reduction kernel), ``io`` (a
    stream kernel over a captured call's own tensors) or None."""
    kernel_class: str | None = None
    """Class for the time breakdown (None: the op's own class)."""
    count: int = 1
    read: float = 0.0
    """``stream``: bytes read per element."""
    write: float = 0.0
    """``stream``: bytes written per element."""
    flop: float = 0.0
    """``stream``: FP32-lane instructions per element."""
    sfu: float = 0.0
    """``stream``: transcendentals (special-function ops) per element."""
    rows: bool = False
    """``stream``: over one element per row (a reduced vector) instead of every element."""
    family: str = "vectorized"
    """Launch family of the call's kernel(s) (one of :data:`FAMILIES`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LoweringTable:
    """An execution mode's lowering: op key -> the calls made for it."""

    mode: str
    description: str
    submit: str
    ops: Mapping[str, tuple[LoweredStep, ...]]
    source: str = ""
    per_call_extra: str | None = None
    """A host cost class every dispatched call also pays (``python``: the model code's own
    interpreter time around each call in eager mode)."""
    step_call: str | None = None
    """A host cost class paid once per step before the first call (``compiled_step``: the
    compiled function's entry: Dynamo's guard check, the pre-graph bytecode, the wrapper)."""
    merge_projections: bool = False
    """GEMMs that read the same input run as one GEMM (N summed): the merged QKV and gate/up
    projections of a serving engine (vLLM's ``QKVParallelLinear``,
    ``MergedColumnParallelLinear``)."""
    fuse: str | None = None
    """A captured program's calls fused by a compiler's rules before they launch (one of
    :data:`FUSE_RULES`; None: every call launches what its ``call.*`` entry says)."""
    fuse_call: str = "compiled_kernel"
    """Host cost class of each fused kernel (a key of ``host.eager_call_s``)."""

    def steps(self, key: str) -> tuple[LoweredStep, ...] | None:
        """Calls for op key ``key`` (``elementwise.add`` falls back to ``elementwise``)."""
        if key in self.ops:
            return self.ops[key]
        base = key.split(".", 1)[0]
        return self.ops.get(base)


def _number(file: str, path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigError(file, path, value, "expected a finite number >= 0")
    if value == float("inf"):
        raise ConfigError(file, path, value, "expected a finite number >= 0")
    return float(value)


def _step(file: str, path: str, raw: Any) -> LoweredStep:
    if not isinstance(raw, Mapping):
        raise ConfigError(file, path, raw, "expected a mapping {call: ..., kernel: ...}")
    unknown = set(raw) - _STEP_KEYS
    if unknown:
        key = sorted(unknown)[0]
        raise ConfigError(file, f"{path}.{key}", raw[key], "unknown key (known: "
                          f"{', '.join(sorted(_STEP_KEYS))})")
    call = raw.get("call")
    if not isinstance(call, str) or not call:
        raise ConfigError(file, f"{path}.call", call, "expected a host cost class name")
    kernel = raw.get("kernel")
    if kernel is not None and kernel not in KERNELS:
        raise ConfigError(file, f"{path}.kernel", kernel, f"must be one of {', '.join(KERNELS)}")
    klass = raw.get("class")
    if klass is not None and klass not in KERNEL_CLASSES:
        raise ConfigError(file, f"{path}.class", klass,
                          f"must be one of {', '.join(KERNEL_CLASSES)}")
    count = raw.get("count", 1)
    if (isinstance(count, bool) or not isinstance(count, int)
            or not 1 <= count <= MAX_CALLS_PER_STEP):
        raise ConfigError(file, f"{path}.count", count,
                          f"expected an integer 1..{MAX_CALLS_PER_STEP}")
    rows = raw.get("rows", False)
    if not isinstance(rows, bool):
        raise ConfigError(file, f"{path}.rows", rows, "expected true or false")
    family = raw.get("family", "vectorized")
    if family not in FAMILIES:
        raise ConfigError(file, f"{path}.family", family,
                          f"must be one of {', '.join(FAMILIES)}")
    if "family" in raw and kernel == "io":
        raise ConfigError(file, f"{path}.family", family,
                          "an io kernel's launch family comes from the captured strides")
    if "family" in raw and kernel is None:
        raise ConfigError(file, f"{path}.family", family,
                          "only a call that launches a kernel has a launch family")
    nums = {k: _number(file, f"{path}.{k}", raw[k]) for k in ("read", "write", "flop", "sfu")
            if k in raw}
    return LoweredStep(call=call, kernel=kernel, kernel_class=klass, count=count, rows=rows,
                       family=family, **nums)


def _ops(file: str, raw: Any) -> dict[str, tuple[LoweredStep, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(file, "ops", raw, "expected a mapping op -> list of calls")
    out = {}
    for key, steps in raw.items():
        if steps is None:
            steps = []
        if not isinstance(steps, list):
            raise ConfigError(file, f"ops.{key}", steps, "expected a list of calls")
        out[str(key)] = tuple(_step(file, f"ops.{key}[{i}]", s) for i, s in enumerate(steps))
    return out


_TABLES: dict[tuple, LoweringTable] = {}
"""Tables read, by (file, modification time, inheritance chain): a model step looks its
table up once per run, a serving simulation thousands of times."""


def load_lowering(mode: str | Path, _seen: tuple[str, ...] = ()) -> LoweringTable:
    """The lowering table of execution mode ``mode`` (a built-in name or a YAML path)."""
    try:
        path = resolve_path(mode, "lowering")
    except ConfigError:
        known = ", ".join(builtin_names("lowering")) or ", ".join(EXEC_MODES)
        raise ConfigError("--exec", "exec", mode,
                          f"unknown execution mode (known: {known})") from None
    key = (str(path), path.stat().st_mtime_ns, _seen)
    hit = _TABLES.get(key)
    if hit is None:
        hit = _TABLES[key] = _read_lowering(path, mode, _seen)
    return hit


def _read_lowering(path: Path, mode: str | Path, _seen: tuple[str, ...]) -> LoweringTable:
    file = str(path)
    data = read_yaml(path)
    known_keys = {"mode", "submit", "description", "inherit", "host_call", "ops",
                  "per_call_extra", "step_call", "merge_projections", "fuse", "fuse_call"}
    for key in data:
        if key not in known_keys:
            raise ConfigError(file, str(key), data[key],
                              f"unknown key (known: {', '.join(sorted(known_keys))})")
    submit = data.get("submit", "per_call")
    if submit not in SUBMITS:
        raise ConfigError(file, "submit", submit, f"must be one of {', '.join(SUBMITS)}")
    ops: dict[str, tuple[LoweredStep, ...]] = {}
    parent = data.get("inherit")
    if parent is not None:
        if str(parent) in _seen:
            raise ConfigError(file, "inherit", parent, "inheritance cycle")
        base = load_lowering(str(parent), (*_seen, str(mode)))
        host_call = data.get("host_call")
        for key, steps in base.ops.items():
            if host_call:
                # the compiler's own kernels, not PyTorch's strided / vectorized launches
                steps = tuple(dataclasses.replace(s, call=str(host_call), family="vectorized")
                              for s in steps if s.kernel is not None)
            ops[key] = steps
    ops.update(_ops(file, data.get("ops")))
    merge = data.get("merge_projections", base.merge_projections if parent is not None else False)
    if not isinstance(merge, bool):
        raise ConfigError(file, "merge_projections", merge, "expected true or false")
    fuse = data.get("fuse", base.fuse if parent is not None else None)
    if fuse is not None and fuse not in FUSE_RULES:
        raise ConfigError(file, "fuse", fuse, f"must be one of {', '.join(FUSE_RULES)}")
    fuse_call = data.get("fuse_call", base.fuse_call if parent is not None else "compiled_kernel")
    if not isinstance(fuse_call, str) or not fuse_call:
        raise ConfigError(file, "fuse_call", fuse_call, "expected a host cost class name")
    return LoweringTable(merge_projections=merge, fuse=fuse, fuse_call=fuse_call,
                         mode=str(data.get("mode", Path(file).stem)),
                         description=str(data.get("description", "")), submit=submit,
                         ops=ops, source=file,
                         per_call_extra=None if data.get("per_call_extra") is None
                         else str(data["per_call_extra"]),
                         step_call=None if data.get("step_call") is None
                         else str(data["step_call"]))


__all__ = ["EXEC_MODES", "FAMILIES", "FUSE_RULES", "KERNEL_CLASSES", "LoweredStep",
           "LoweringTable", "load_lowering"]
