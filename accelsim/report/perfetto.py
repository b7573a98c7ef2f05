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

Grouped detail (``detail="layers"``, and ``"auto"`` when the full trace would pass
``limit_bytes``: a Llama-3-8B decode step on a TPU v4 is hundreds of MB in full): the layer
track and the bandwidth counter as above, and per layer one slice per array spanning its folds
(``args``: how many, their busy cycles) and one DMA slice spanning its transfers; the
in-flight counter holds each layer's average. :func:`write_trace` streams the file layer by
layer and returns a :class:`TraceWritten` (path, size, whether grouped).

Imports: errors, files, engine.schedule.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from accelsim.engine.schedule import FoldSchedule

LAYER_TID = 0
"""Thread id of the layer track; arrays follow (1..n), then the DMA lanes."""

DETAILS = ("auto", "full", "layers")
"""``detail=``: grouped above the size limit, every fold and transfer, or always grouped."""

GROUPED_NOTE = "grouped: per-layer slices, folds and transfers grouped; --trace-detail full for all"
"""What the ``wrote`` line says of a grouped trace."""


@dataclass(frozen=True)
class TraceWritten:
    """A written trace: its ``path``, ``size_bytes``, whether it was ``grouped``, and the
    ``note`` saying how."""

    path: Path
    size_bytes: int
    grouped: bool
    note: str = ""


def check_detail(detail: str) -> None:
    """Refuse a ``detail`` not in :data:`DETAILS` (one line)."""
    if detail not in DETAILS:
        from accelsim.errors import ConfigError

        raise ConfigError("--trace-detail", "--trace-detail", detail,
                          f"must be one of {', '.join(DETAILS)}")


def write_events(path: str | Path, chunks: Iterator[list[dict[str, Any]]]) -> int:
    """Write a Chrome trace document whose ``traceEvents`` are the concatenated ``chunks``,
    one chunk in memory at a time; returns the file's size in bytes."""
    from accelsim.files import writing

    with writing(path) as p:
        with open(p, "w", encoding="utf-8", newline="") as fh:
            fh.write('{"traceEvents": [')
            first = True
            for chunk in chunks:
                if not chunk:
                    continue
                fh.write(("" if first else ", ") + json.dumps(chunk)[1:-1])
                first = False
            fh.write('], "displayTimeUnit": "ns"}')
            fh.flush()
        return p.stat().st_size


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


def _grouped_events(schedule: FoldSchedule, clock_hz: float, layer: str, offset_cycles: int,
                    pid: int, dma_tid: int) -> tuple[list[dict[str, Any]], int]:
    """One slice per array spanning the layer's folds on it, one DMA slice spanning its
    transfers, and the in-flight counter at the layer's average (grouped detail)."""
    us = 1e6 / clock_hz
    n = schedule.arrays
    ev: list[dict[str, Any]] = []
    cs = np.asarray(schedule.compute_start, dtype=np.int64)
    ce = np.asarray(schedule.compute_end, dtype=np.int64)
    for a in range(min(n, schedule.folds)):
        s, e = cs[a::n], ce[a::n]
        start, end = int(s.min()), int(e.max())
        ev.append({"name": f"{layer} folds", "ph": "X", "pid": pid, "tid": 1 + a,
                   "ts": (offset_cycles + start) * us, "dur": (end - start) * us,
                   "cat": "compute", "args": {"layer": layer, "folds": int(len(s)),
                                              "busy_cycles": int((e - s).sum())}})
    moves = _transfers(schedule)
    if not moves:
        return ev, 0
    start, end = min(m[0] for m in moves), max(m[1] for m in moves)
    busy = sum(m[1] - m[0] for m in moves)
    loads = sum(1 for m in moves if m[2] == "load")
    ev.append({"name": f"{layer} DMA", "ph": "X", "pid": pid, "tid": dma_tid,
               "ts": (offset_cycles + start) * us, "dur": (end - start) * us, "cat": "dma",
               "args": {"layer": layer, "loads": loads, "drains": len(moves) - loads}})
    for ts, count in (((offset_cycles + start) * us, busy / max(1, end - start)),
                      ((offset_cycles + end) * us, 0)):
        ev.append({"name": "DMA transfers in flight", "ph": "C", "pid": pid, "ts": ts,
                   "args": {"transfers": count}})
    return ev, 1


def _layer_chunks(result: Any, pid: int, grouped: bool,
                  lanes: list[int]) -> Iterator[list[dict[str, Any]]]:
    """The events of each layer in turn (layers in sequence), then the closing counter;
    ``lanes[0]`` ends as the number of DMA lanes used."""
    machine = result.machine
    clock = machine.clock_hz
    us = 1e6 / clock
    arrays = machine.array.count
    offset = 0
    bw = result.layers["dram_bw_bytes_per_s"].to_numpy(dtype=float) \
        if "dram_bw_bytes_per_s" in result.layers else np.zeros(len(result.runs))
    for i, run in enumerate(result.runs):
        name = run.plan.name
        end = run.schedule.end
        events = [{"name": name, "ph": "X", "pid": pid, "tid": LAYER_TID, "ts": offset * us,
                   "dur": end * us, "cat": "layer", "args": {"layer": name, "cycles": end}},
                  {"name": "DRAM bandwidth", "ph": "C", "pid": pid, "ts": offset * us,
                   "args": {"GB/s": float(bw[i]) / 1e9 if i < len(bw) else 0.0}}]
        if grouped:
            ev, used = _grouped_events(run.schedule, clock, name, offset, pid, 1 + arrays)
        else:
            ev, used = trace_events(run.schedule, clock, name, offset, pid, dma_tid=1 + arrays)
            ev += _in_flight(ev, pid)
        lanes[0] = max(lanes[0], used)
        offset += end
        yield events + ev
    yield [{"name": "DRAM bandwidth", "ph": "C", "pid": pid, "ts": offset * us,
            "args": {"GB/s": 0.0}}]


def _metadata(result: Any, pid: int, lanes: int) -> list[dict[str, Any]]:
    """Process and track names (``lanes``: DMA lanes used)."""
    machine = result.machine
    arrays = machine.array.count
    wl = getattr(result.workload, "name", "workload")
    meta = _meta(pid, None, "process_name", f"{machine.name}: {wl} ({result.dataflow})")
    meta += _meta(pid, LAYER_TID, "thread_name", "layers", 0)
    meta += [m for a in range(arrays)
             for m in _meta(pid, 1 + a, "thread_name", f"array {a}", 1 + a)]
    meta += [m for k in range(lanes)
             for m in _meta(pid, 1 + arrays + k, "thread_name", f"DMA lane {k}", 1 + arrays + k)]
    return meta


def full_trace_bytes(result: Any) -> float:
    """About how large the full trace of ``result`` is, in bytes: its number of events
    (layers, folds, transfers and in-flight steps) times the mean size of the first layer's."""
    if not result.runs:
        return 0.0
    events = 0
    for run in result.runs:
        s = run.schedule
        moves = int((np.asarray(s.load_ready) > np.asarray(s.load_start)).sum()
                    + (np.asarray(s.drain_end) > np.asarray(s.drain_start)).sum())
        events += 2 + s.folds + 3 * moves
    first = result.runs[0]
    sample, _ = trace_events(first.schedule, result.machine.clock_hz, first.plan.name)
    per_event = len(json.dumps(sample)) / max(1, len(sample)) if sample else 200.0
    return events * per_event


def run_trace(result: Any, pid: int = 0, *, grouped: bool = False) -> dict[str, Any]:
    """The trace document of a systolic :class:`~accelsim.api.Result`, layers in sequence
    (``grouped``: the grouped detail of the module docstring)."""
    lanes = [0]
    events = [e for chunk in _layer_chunks(result, pid, grouped, lanes) for e in chunk]
    return {"traceEvents": _metadata(result, pid, lanes[0]) + events, "displayTimeUnit": "ns"}


def write_trace(result: Any, path: str | Path, *, detail: str = "full",
                limit_bytes: float | None = None) -> TraceWritten:
    """Write every layer of a :class:`~accelsim.api.Result` as one timeline, layers in
    sequence, streamed layer by layer; ``detail`` ``auto`` groups it when
    :func:`full_trace_bytes` passes ``limit_bytes``."""
    check_detail(detail)
    grouped = detail == "layers" or (detail == "auto" and limit_bytes is not None
                                     and full_trace_bytes(result) > limit_bytes)
    lanes = [0]

    def chunks() -> Iterator[list[dict[str, Any]]]:
        yield from _layer_chunks(result, 0, grouped, lanes)
        yield _metadata(result, 0, lanes[0])

    size = write_events(path, chunks())
    return TraceWritten(Path(path), size, grouped, GROUPED_NOTE if grouped else "")
