"""Chrome/Perfetto timeline of a GPU model run: a host track and a GPU stream track (and of a
CPU run: its ops one after another, :func:`op_trace_events`).

Made from :attr:`accelsim.devices.results.ModelRun.calls` (the per-call timeline, a DataFrame):

* process ``host``: thread ``framework ops`` has one slice per framework op (an ``nn.Linear``,
  an RMSNorm...) with the calls it dispatched nested inside on thread ``dispatch``;
* process ``GPU``: thread ``stream 0`` has one slice per call that launched kernels, from the
  moment the GPU started them to their end; gaps are the GPU idling.

Slices on one thread never partly overlap (the trace format requires nesting). Times in
microseconds, as the format wants.

Grouped detail (``detail="layers"``, or ``"auto"`` past ``limit_bytes``): the framework-op
slices, and on the stream one slice per framework op spanning its calls' kernels; the
``dispatch`` thread is left out.

Imports: stdlib, pandas (via the table), report.perfetto (the writer).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from accelsim.report.perfetto import GROUPED_NOTE, TraceWritten, check_detail, write_events

HOST_PID, GPU_PID = 1, 2


def _meta(pid: int, tid: int | None, name: str, kind: str) -> dict[str, Any]:
    ev: dict[str, Any] = {"ph": "M", "pid": pid, "name": kind, "args": {"name": name}}
    if tid is not None:
        ev["tid"] = tid
    return ev


def stream_trace_events(run: Any, *, grouped: bool = False) -> list[dict[str, Any]]:
    """Trace events of a GPU :class:`~accelsim.devices.results.ModelRun` (see module doc)."""
    calls = run.calls
    ev: list[dict[str, Any]] = [
        _meta(HOST_PID, None, "host", "process_name"),
        _meta(HOST_PID, 1, "framework ops", "thread_name"),
        _meta(GPU_PID, None, f"GPU ({run.machine.name})", "process_name"),
        _meta(GPU_PID, 1, "stream 0", "thread_name"),
    ]
    if not grouped:
        ev.insert(2, _meta(HOST_PID, 2, "dispatch", "thread_name"))
    if calls.empty:
        return ev
    us = 1e6
    runs = (calls["layer"] != calls["layer"].shift()).cumsum()  # consecutive calls of one op
    for _, grp in calls.groupby(runs, sort=False):
        start, end = grp["host_start_s"].min(), grp["host_end_s"].max()
        layer, op = str(grp["layer"].iloc[0]), str(grp["op"].iloc[0])
        if end > start:
            ev.append({"ph": "X", "pid": HOST_PID, "tid": 1, "name": layer,
                       "ts": start * us, "dur": (end - start) * us,
                       "args": {"op": op, "calls": int(len(grp))}})
        gpu = grp.dropna(subset=["gpu_start_s"])
        if grouped and not gpu.empty:
            g0, g1 = gpu["gpu_start_s"].min(), gpu["gpu_end_s"].max()
            ev.append({"ph": "X", "pid": GPU_PID, "tid": 1, "name": layer, "ts": g0 * us,
                       "dur": (g1 - g0) * us, "cat": str(gpu["kernel_class"].iloc[0]),
                       "args": {"op": op, "kernels": int(gpu["kernels"].sum())}})
    if grouped:
        return ev
    for row in calls.itertuples(index=False):
        if row.host_end_s > row.host_start_s:
            ev.append({"ph": "X", "pid": HOST_PID, "tid": 2, "name": row.call_class,
                       "ts": row.host_start_s * us,
                       "dur": (row.host_end_s - row.host_start_s) * us,
                       "args": {"op": row.layer}})
        if not math.isnan(row.gpu_start_s):
            ev.append({"ph": "X", "pid": GPU_PID, "tid": 1, "name": f"{row.layer}",
                       "ts": row.gpu_start_s * us, "dur": (row.gpu_end_s - row.gpu_start_s) * us,
                       "cat": row.kernel_class,
                       "args": {"class": row.kernel_class, "kernels": int(row.kernels)}})
    return ev


def full_stream_trace_bytes(run: Any) -> float:
    """About how large the full trace is, in bytes: framework-op groups plus two slices per
    call, times the mean size of the first calls' events."""
    calls = run.calls
    if calls.empty:
        return 0.0
    groups = int((calls["layer"] != calls["layer"].shift()).sum())
    head = stream_trace_events(_Head(run, calls.head(50)))
    per_event = len(json.dumps(head)) / max(1, len(head))
    return (groups + 2 * len(calls)) * per_event


class _Head:
    """A run with only its first calls (for sizing a trace from a sample)."""

    def __init__(self, run: Any, calls: Any) -> None:
        self.machine, self.calls = run.machine, calls


def write_stream_trace(run: Any, path: str | os.PathLike, *, detail: str = "full",
                       limit_bytes: float | None = None) -> TraceWritten:
    """Write the timeline as a Chrome trace JSON file (open in ui.perfetto.dev); ``detail``
    ``auto`` groups it when its full form would pass ``limit_bytes``."""
    check_detail(detail)
    grouped = detail == "layers" or (detail == "auto" and limit_bytes is not None
                                     and full_stream_trace_bytes(run) > limit_bytes)
    size = write_events(path, iter([stream_trace_events(run, grouped=grouped)]))
    return TraceWritten(Path(path), size, grouped, GROUPED_NOTE if grouped else "")


def op_trace_events(run: Any) -> list[dict[str, Any]]:
    """Trace events of a CPU :class:`~accelsim.devices.results.ModelRun`: the ops one after
    another, as the CPU model runs them (each op on every core, no overlap), one slice each
    on thread ``ops`` of process ``CPU (NAME)``, with its FLOP, DRAM bytes and bound."""
    us = 1e6
    ev: list[dict[str, Any]] = [_meta(GPU_PID, None, f"CPU ({run.machine.name})", "process_name"),
                                _meta(GPU_PID, 1, "ops", "thread_name")]
    t = 0.0
    for row in run.layers.itertuples(index=False):
        dur = float(row.time_s)
        ev.append({"ph": "X", "pid": GPU_PID, "tid": 1, "name": str(row.layer), "ts": t * us,
                   "dur": dur * us, "cat": str(row.op),
                   "args": {"op": str(row.op), "flops": float(row.flops),
                            "dram_bytes": float(row.dram_bytes), "bound": str(row.bound)}})
        t += dur
    return ev


def write_op_trace(run: Any, path: str | os.PathLike, *, detail: str = "full",
                   limit_bytes: float | None = None) -> TraceWritten:
    """Write a CPU run's timeline (:func:`op_trace_events`: one slice per op, already the
    per-layer form, so ``detail`` changes nothing)."""
    check_detail(detail)
    size = write_events(path, iter([op_trace_events(run)]))
    return TraceWritten(Path(path), size, False, "")


__all__ = ["full_stream_trace_bytes", "op_trace_events", "stream_trace_events",
           "write_op_trace", "write_stream_trace"]
