"""Chrome/Perfetto trace export (``chrome://tracing`` / ui.perfetto.dev JSON format).

One track per array (folds) and one for the DMA queue (loads and drains); timestamps in
microseconds at the machine clock, as the format requires.

Imports: engine.schedule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from accelsim.engine.schedule import FoldSchedule


def trace_events(schedule: FoldSchedule, clock_hz: float, layer: str = "layer",
                 offset_cycles: int = 0, pid: int = 0) -> list[dict[str, Any]]:
    """Complete ("X") events for every fold, load and drain of one layer's schedule."""
    us = 1e6 / clock_hz
    ev: list[dict[str, Any]] = []
    n = schedule.arrays
    for f in range(schedule.folds):
        base = {"pid": pid, "args": {"layer": layer, "fold": f}}
        ev.append({**base, "name": f"{layer} fold {f}", "ph": "X", "tid": 1 + f % n,
                   "ts": (offset_cycles + int(schedule.compute_start[f])) * us,
                   "dur": (int(schedule.compute_end[f]) - int(schedule.compute_start[f])) * us,
                   "cat": "compute"})
        if schedule.load_ready[f] > schedule.load_start[f]:
            ev.append({**base, "name": f"{layer} load {f}", "ph": "X", "tid": 0,
                       "ts": (offset_cycles + int(schedule.load_start[f])) * us,
                       "dur": (int(schedule.load_ready[f]) - int(schedule.load_start[f])) * us,
                       "cat": "dma"})
        if schedule.drain_end[f] > schedule.drain_start[f]:
            ev.append({**base, "name": f"{layer} drain {f}", "ph": "X", "tid": 0,
                       "ts": (offset_cycles + int(schedule.drain_start[f])) * us,
                       "dur": (int(schedule.drain_end[f]) - int(schedule.drain_start[f])) * us,
                       "cat": "dma"})
    return ev


def write_trace(result: Any, path: str | Path) -> Path:
    """Write every layer of a :class:`~accelsim.api.Result` as one timeline, layers in sequence."""
    events: list[dict[str, Any]] = []
    offset = 0
    arrays = result.machine.array.count
    meta = [{"ph": "M", "pid": 0, "tid": 0, "name": "thread_name", "args": {"name": "DMA queue"}}]
    meta += [{"ph": "M", "pid": 0, "tid": 1 + a, "name": "thread_name",
              "args": {"name": f"array {a}"}} for a in range(arrays)]
    for run in result.runs:
        events += trace_events(run.schedule, result.machine.clock_hz, run.plan.name, offset)
        offset += run.schedule.end
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"traceEvents": meta + events, "displayTimeUnit": "ns"}))
    return p
