"""Does a model fit in the GPU's HBM? Weights + KV cache + activations + workspace.

* **weights**: every weight tensor once (tied embeddings once; the graph knows which tensors
  are weights), at the model's precision;
* **KV cache**: the cache tensors of a decode step (every layer's K and V for ``context``
  positions) or the K/V a prefill writes;
* **activations**: inference frees a tensor once its last reader ran, so the peak is the
  largest working set of one op (its activation inputs and outputs) -- an eager framework's
  caching allocator holds about that;
* **workspace**: the GEMM library's workspace (:data:`GEMM_WORKSPACE_BYTES`) plus the
  runtime's own reservation (:data:`RUNTIME_RESERVED_BYTES`: CUDA context, allocator
  slack -- an estimate, named so it can be argued with).

:func:`check_memory` returns the breakdown and the headroom; a model that would not fit is
refused with one line naming what it needs and what the device has. Units: bytes (decimal).

Imports: units, errors, workload.graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accelsim.errors import UnsupportedError
from accelsim.units import format_bytes
from accelsim.workload.graph import dtype_bytes

GEMM_WORKSPACE_BYTES = 32 * 2**20
"""cuBLAS(Lt) workspace PyTorch reserves per stream on Hopper (32 MiB)."""

RUNTIME_RESERVED_BYTES = 0.5e9
"""CUDA context and caching-allocator slack, estimate (~0.5 GB as PyTorch processes show)."""


@dataclass(frozen=True, slots=True)
class MemoryCheck:
    """HBM needed by a model step, by part, and the device's capacity. Bytes."""

    weights_bytes: float
    kv_cache_bytes: float
    activation_bytes: float
    workspace_bytes: float
    capacity_bytes: float

    @property
    def needed_bytes(self) -> float:
        """Sum of the parts."""
        return (self.weights_bytes + self.kv_cache_bytes + self.activation_bytes
                + self.workspace_bytes)

    @property
    def headroom_bytes(self) -> float:
        """Capacity left (negative: does not fit)."""
        return self.capacity_bytes - self.needed_bytes

    def to_dict(self) -> dict[str, float]:
        """Plain dict for the JSON document."""
        return {"weights_bytes": self.weights_bytes, "kv_cache_bytes": self.kv_cache_bytes,
                "activation_bytes": self.activation_bytes,
                "workspace_bytes": self.workspace_bytes, "needed_bytes": self.needed_bytes,
                "capacity_bytes": self.capacity_bytes, "headroom_bytes": self.headroom_bytes}

    def describe(self) -> str:
        """One line: needed (by part) vs capacity."""
        return (f"needs {format_bytes(self.needed_bytes)} of HBM (weights "
                f"{format_bytes(self.weights_bytes)}, KV cache "
                f"{format_bytes(self.kv_cache_bytes)}, activations "
                f"{format_bytes(self.activation_bytes)}, workspace "
                f"{format_bytes(self.workspace_bytes)}) of {format_bytes(self.capacity_bytes)}")


def _op_parts(op: Any) -> tuple[float, float, float]:
    """(weight, kv, activation) bytes one op touches."""
    e = dtype_bytes(getattr(op, "dtype", None), "bf16")
    te = op.tensor_elements()
    weight = te.get("weight", 0) * e if getattr(op, "shared_weights", True) else 0.0
    kv = te.get("kv", 0) * e
    act = sum(v for k, v in te.items() if k not in ("weight", "kv")) * e
    if getattr(op, "kind", "") == "embedding":
        act = (te.get("output", 0) + te.get("input", 0)) * e
    return weight, kv, act


def _checked(m: Any, workload: Any, weights: float, kv: float, peak_act: float,
             refuse: bool) -> MemoryCheck:
    """The :class:`MemoryCheck` of these parts on ``m``; refuse what does not fit."""
    check = MemoryCheck(weights_bytes=weights, kv_cache_bytes=kv, activation_bytes=peak_act,
                        workspace_bytes=GEMM_WORKSPACE_BYTES + RUNTIME_RESERVED_BYTES,
                        capacity_bytes=float(m.memory.hbm.capacity_bytes))
    if refuse and check.headroom_bytes < 0:
        raise UnsupportedError(f"{getattr(workload, 'name', workload)} does not fit on "
                               f"{m.name}: {check.describe()}")
    return check


def check_memory(m: Any, workload: Any, ops: list[tuple[Any, Any]], *,
                 graph: Any = None, refuse: bool = True) -> MemoryCheck:
    """HBM needed by one step of ``workload`` on GPU ``m``; refuse (``UnsupportedError``,
    one line) what does not fit when ``refuse``."""
    weights = kv = peak_act = 0.0
    if graph is not None:
        for t in graph.tensors.values():
            if t.kind == "weight":
                weights += t.bytes
            elif t.kind == "kv_cache":
                kv += t.bytes
        for op, _ in ops:
            peak_act = max(peak_act, _op_parts(op)[2])
    else:
        for op, _ in ops:
            w, k, a = _op_parts(op)
            weights += w
            kv += k
            peak_act = max(peak_act, a)
    return _checked(m, workload, weights, kv, peak_act, refuse)


def check_program_memory(m: Any, workload: Any, program: Any, *,
                         refuse: bool = True) -> MemoryCheck:
    """HBM needed by one step of a captured program: its parameters and buffers (each distinct
    ``(module, shape, dtype)`` parameter once), the tensors it writes in place (KV caches:
    ``x[...] = y`` destinations, counted whole, once each), and the largest working set of one
    call (inputs + new outputs, parameters excepted)."""
    weights = kv = peak_act = 0.0
    seen_w: set = set()
    seen_kv: set = set()
    for call in program.calls:
        act = 0.0
        for pos, t in enumerate(call.inputs):
            if t.param:
                key = (call.module, pos, t.shape, t.dtype)
                if key not in seen_w:
                    seen_w.add(key)
                    weights += t.nbytes
            elif call.fn == "setitem" and pos == 0:
                key = (call.module, t.shape, t.dtype, t.stride)
                if key not in seen_kv:
                    seen_kv.add(key)
                    kv += t.nbytes
            else:
                act += t.nbytes
        act += sum(t.nbytes for t in call.outputs if not t.view)
        peak_act = max(peak_act, act)
    return _checked(m, workload, weights, kv, peak_act, refuse)


__all__ = ["GEMM_WORKSPACE_BYTES", "MemoryCheck", "RUNTIME_RESERVED_BYTES", "check_memory",
           "check_program_memory"]
