"""Memory planning for inference: tensor liveness, peak memory and buffer reuse.

Nodes run one at a time in graph order. An activation is live from the step that writes it
(graph inputs: from before the first step) to the last step that reads it (graph outputs:
to the end); a step's inputs and outputs are live together (no in-place ops). Weights and
the KV cache are persistent and reported apart.

:func:`plan_memory` places activations in a pool of reusable buffers, best fit: each new
tensor takes the smallest free buffer that holds it, or a new buffer of its size; a buffer is
freed after the last read of its tensor. The pool's total is at least the peak of live bytes
(a lower bound no placement beats) and at most the sum of all activations (no reuse).
Sizes are decimal bytes.

Imports: workload.graph.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import pandas as pd

from accelsim.workload.graph import ModelGraph

PERSISTENT_KINDS = ("weight", "kv_cache")


def liveness(graph: ModelGraph) -> pd.DataFrame:
    """One row per activation/input tensor: ``tensor, kind, bytes, first, last`` (step indices;
    ``first = -1`` for a graph input, ``last = len(graph)`` for a graph output)."""
    n = len(graph.nodes)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, node in enumerate(graph.nodes):
        for t in node.outputs:
            first.setdefault(t, i)
            last.setdefault(t, i)
        for t in node.inputs:
            last[t] = i
    rows = []
    for name, t in graph.tensors.items():
        if t.kind in PERSISTENT_KINDS or (name not in first and name not in last):
            continue
        start = first.get(name, -1)
        end = n if name in graph.outputs else last.get(name, start)
        rows.append({"tensor": name, "kind": t.kind, "bytes": t.bytes, "first": start, "last": end})
    return pd.DataFrame(rows, columns=["tensor", "kind", "bytes", "first", "last"])


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Result of :func:`plan_memory` (all sizes decimal bytes)."""

    peak_bytes: float
    """Most activation bytes live at once (lower bound for any pool)."""
    peak_step: str
    """The op during which the peak occurs."""
    naive_bytes: float
    """Every activation in its own buffer (no reuse)."""
    pool_bytes: float
    """Total size of the best-fit buffer pool."""
    buffers: tuple[float, ...]
    """Size of each pool buffer."""
    assignment: dict[str, int]
    """Tensor -> buffer index."""
    persistent_bytes: float
    """Weights and KV cache."""

    @property
    def reuse_factor(self) -> float:
        """naive / pool: how many tensors share a buffer, by bytes."""
        return self.naive_bytes / self.pool_bytes if self.pool_bytes else 1.0

    @property
    def total_bytes(self) -> float:
        """Pool plus persistent state: the device memory the model needs."""
        return self.pool_bytes + self.persistent_bytes


def plan_memory(graph: ModelGraph) -> MemoryPlan:
    """Liveness, peak and a best-fit buffer pool for ``graph`` (see the module docstring)."""
    live = liveness(graph)
    n = len(graph.nodes)
    births: dict[int, list[tuple[str, float]]] = {}
    deaths: dict[int, list[str]] = {}
    for row in live.itertuples(index=False):
        births.setdefault(row.first, []).append((row.tensor, row.bytes))
        deaths.setdefault(row.last, []).append(row.tensor)
    buffers: list[float] = []
    free: list[tuple[float, int]] = []  # (size, buffer index), sorted
    assignment: dict[str, int] = {}
    live_bytes, peak, peak_step = 0.0, 0.0, ""
    for step in range(-1, n + 1):
        for name, size in births.get(step, []):
            j = bisect.bisect_left(free, (size, -1))
            if j < len(free):
                _, b = free.pop(j)
            else:
                b = len(buffers)
                buffers.append(size)
            assignment[name] = b
            live_bytes += size
        if live_bytes > peak:
            peak = live_bytes
            peak_step = (graph.nodes[step].name if 0 <= step < n
                         else ("<inputs>" if step < 0 else "<outputs>"))
        for name in deaths.get(step, []):
            b = assignment[name]
            bisect.insort(free, (buffers[b], b))
            live_bytes -= graph.tensors[name].bytes
    persistent = sum(t.bytes for t in graph.tensors.values() if t.kind in PERSISTENT_KINDS)
    return MemoryPlan(peak_bytes=peak, peak_step=peak_step, naive_bytes=float(live["bytes"].sum()),
                      pool_bytes=float(sum(buffers)), buffers=tuple(buffers),
                      assignment=assignment, persistent_bytes=persistent)


def kv_cache_bytes(graph: ModelGraph) -> float:
    """Bytes of the model's KV cache: in decode the cache the step reads (the rows it
    appends are part of it), in prefill the K and V the step writes."""
    produced = {t for n in graph.nodes for t in n.outputs}
    kv = [t for t in graph.tensors.values() if t.kind == "kv_cache"]
    read = [t for t in kv if t.name not in produced]
    return sum(t.bytes for t in (read or kv))
