"""Chrome/Perfetto trace export (``chrome://tracing`` / ui.perfetto.dev JSON format).

One process per run, named after the machine and workload, with named threads (tracks):

* ``layers``: one slice per layer, layers back to back;
* ``array <a>``: the folds array ``a`` computes (a fold runs on array ``f % n``);
* ``DMA lane <k>``: DRAM transfers (operand loads and output drains), each drawn from the cycle
  the DMA queue starts it to the cycle its data is usable (queue time plus latency). Transfers
  pipeline, so several can be in flight at once: each goes to the first lane that is free,
  and no two slices on one track ever partly overlap, as the format requires;
* counters: ``DRAM bandwidth`` (each layer's average, GB/s) and ``DMA transfers in flight``.

Timestamps are microseconds at the machine clock, as the format requires. Every slice is a
complete (``X``) event with ``cat`` ``layer``, ``compute`` or ``dma``.

Imports: engine.schedule, files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from accelsim.engine.schedule import FoldSchedule

LAYER_TID = 0
"""Thread id of the layer track; arrays follow (1..n), then the DMA lanes."""


def assign_lanes(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Lane of every interval ``[start, end)`` such that no two intervals on one lane overlap:
    each, in start order, takes the lowest-numbered lane that is free by its start."""
    lanes = np.zeros(len(starts), dtype=np.int64)
    free_at: list[float] = []
    for i in np.argsort(starts, kind="stable"):
        lane = next((k for k, t in enumerate(free_at) if t <= starts[i]), len(free_at))
        if lane == len(free_at):
            free_at.append(0.0)
        free_at[lane] = float(ends[i])
        lanes[i] = lane
    return lanes


def _transfers(schedule: FoldSchedule) -> list[tuple[int, int, str, int]]:
    """(start, end, kind, fold) of every non-empty load and drain, in cycles."""
    out = []
    for f in range(schedule.folds):
        if schedule.load_ready[f] > schedule.load_start[f]:
            out.append((int(schedule.load_start[f]), int(schedule.load_ready[f]), "load", f))
        if schedule.drain_end[f] > schedule.drain_start[f]:
            out.append((int(schedule.drain_start[f]), int(schedule.drain_end[f]), "drain", f))
    return out


def trace_events(schedule: FoldSchedule, clock_hz: float, layer: str = "layer",
                 offset_cycles: int = 0, pid: int = 0,
                 dma_tid: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """Slices for every fold and DRAM transfer of one layer's schedule, and the number of DMA
    lanes they use (lane ``k`` is thread ``dma_tid + k``; default: after the arrays)."""
    us = 1e6 / clock_hz
    n = schedule.arrays
    first_dma = 1 + n if dma_tid is None else dma_tid
    ev: list[dict[str, Any]] = []
    for f in range(schedule.folds):
        start, end = int(schedule.compute_start[f]), int(schedule.compute_end[f])
        ev.append({"name": f"{layer} fold {f}", "ph": "X", "pid": pid, "tid": 1 + f % n,
                   "ts": (offset_cycles + start) * us, "dur": (end - start) * us,
                   "cat": "compute", "args": {"layer": layer, "fold": f}})
    moves = _transfers(schedule)
    if not moves:
        return ev, 0
    starts = np.array([m[0] for m in moves], dtype=float)
    ends = np.array([m[1] for m in moves], dtype=float)
    lanes = assign_lanes(starts, ends)
    for (start, end, kind, f), lane in zip(moves, lanes, strict=True):
        ev.append({"name": f"{layer} {kind} {f}", "ph": "X", "pid": pid,
                   "tid": first_dma + int(lane), "ts": (offset_cycles + start) * us,
                   "dur": (end - start) * us, "cat": "dma",
                   "args": {"layer": layer, "fold": f, "transfer": kind}})
    return ev, int(lanes.max()) + 1


def _in_flight(events: list[dict[str, Any]], pid: int) -> list[dict[str, Any]]:
    """A counter of DMA transfers in flight, from the DMA slices."""
    steps: dict[float, int] = {}
    for e in events:
        if e.get("cat") == "dma":
            start, end = round(e["ts"], 6), round(e["ts"] + e["dur"], 6)
            steps[start] = steps.get(start, 0) + 1
            steps[end] = steps.get(end, 0) - 1
    count, out = 0, []
    for ts in sorted(steps):
        count += steps[ts]
        out.append({"name": "DMA transfers in flight", "ph": "C", "pid": pid, "ts": ts,
                    "args": {"transfers": count}})
    return out


def _meta(pid: int, tid: int | None, name: str, label: str, sort: int | None = None) -> list[dict]:
    base = {"ph": "M", "pid": pid, **({} if tid is None else {"tid": tid})}
    out = [{**base, "name": name, "args": {"name": label}}]
    if sort is not None:
        out.append({**base, "name": "thread_sort_index", "args": {"sort_index": sort}})
    return out


def run_trace(result: Any, pid: int = 0) -> dict[str, Any]:
    """The trace document of a systolic :class:`~accelsim.api.Result`, layers in sequence."""
    machine = result.machine
    clock = machine.clock_hz
    us = 1e6 / clock
    arrays = machine.array.count
    events: list[dict[str, Any]] = []
    offset, lanes = 0, 0
    bw = result.layers["dram_bw_bytes_per_s"].to_numpy(dtype=float) \
        if "dram_bw_bytes_per_s" in result.layers else np.zeros(len(result.runs))
    for i, run in enumerate(result.runs):
        name = run.plan.name
        end = run.schedule.end
        events.append({"name": name, "ph": "X", "pid": pid, "tid": LAYER_TID, "ts": offset * us,
                       "dur": end * us, "cat": "layer", "args": {"layer": name, "cycles": end}})
        events.append({"name": "DRAM bandwidth", "ph": "C", "pid": pid, "ts": offset * us,
                       "args": {"GB/s": float(bw[i]) / 1e9 if i < len(bw) else 0.0}})
        ev, used = trace_events(run.schedule, clock, name, offset, pid, dma_tid=1 + arrays)
        events += ev
        lanes = max(lanes, used)
        offset += end
    events.append({"name": "DRAM bandwidth", "ph": "C", "pid": pid, "ts": offset * us,
                   "args": {"GB/s": 0.0}})
    events += _in_flight(events, pid)
    wl = getattr(result.workload, "name", "workload")
    meta = _meta(pid, None, "process_name", f"{machine.name}: {wl} ({result.dataflow})")
    meta += _meta(pid, LAYER_TID, "thread_name", "layers", 0)
    meta += [m for a in range(arrays) for m in _meta(pid, 1 + a, "thread_name", f"array {a}", 1 + a)]
    meta += [m for k in range(lanes)
             for m in _meta(pid, 1 + arrays + k, "thread_name", f"DMA lane {k}", 1 + arrays + k)]
    return {"traceEvents": meta + events, "displayTimeUnit": "ns"}


def write_trace(result: Any, path: str | Path) -> Path:
    """Write every layer of a :class:`~accelsim.api.Result` as one timeline, layers in sequence."""
    from accelsim.files import write_output

    return write_output(path, json.dumps(run_trace(result)))
