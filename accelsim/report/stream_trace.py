"""Chrome/Perfetto timeline of a GPU model run: a host track and a GPU stream track.

Made from :attr:`accelsim.devices.results.ModelRun.calls` (the per-call timeline, a DataFrame):

* process ``host``: thread ``framework ops`` has one slice per framework op (an ``nn.Linear``,
  an RMSNorm...) with the calls it dispatched nested inside on thread ``dispatch``;
* process ``GPU``: thread ``stream 0`` has one slice per call that launched kernels, from the
  moment the GPU started them to their end; gaps are the GPU idling.

Slices on one thread never partly overlap (the trace format requires nesting). Times in
microseconds, as the format wants.

Imports: stdlib, files, pandas (via the table).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

HOST_PID, GPU_PID = 1, 2


def _meta(pid: int, tid: int | None, name: str, kind: str) -> dict[str, Any]:
    ev: dict[str, Any] = {"ph": "M", "pid": pid, "name": kind, "args": {"name": name}}
    if tid is not None:
        ev["tid"] = tid
    return ev


def stream_trace_events(run: Any) -> list[dict[str, Any]]:
    """Trace events of a GPU :class:`~accelsim.devices.results.ModelRun` (see module doc)."""
    calls = run.calls
    ev: list[dict[str, Any]] = [
        _meta(HOST_PID, None, "host", "process_name"),
        _meta(HOST_PID, 1, "framework ops", "thread_name"),
        _meta(HOST_PID, 2, "dispatch", "thread_name"),
        _meta(GPU_PID, None, f"GPU ({run.machine.name})", "process_name"),
        _meta(GPU_PID, 1, "stream 0", "thread_name"),
    ]
    if calls.empty:
        return ev
    us = 1e6
    runs = (calls["layer"] != calls["layer"].shift()).cumsum()  # consecutive calls of one op
    for _, grp in calls.groupby(runs, sort=False):
        start, end = grp["host_start_s"].min(), grp["host_end_s"].max()
        if end > start:
            ev.append({"ph": "X", "pid": HOST_PID, "tid": 1, "name": str(grp["layer"].iloc[0]),
                       "ts": start * us, "dur": (end - start) * us,
                       "args": {"op": str(grp["op"].iloc[0]), "calls": int(len(grp))}})
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


def write_stream_trace(run: Any, path: str | os.PathLike) -> None:
    """Write the timeline as a Chrome trace JSON file (open in ui.perfetto.dev)."""
    from accelsim.files import write_output

    write_output(path, json.dumps({"traceEvents": stream_trace_events(run), "displayTimeUnit": "ns"}))


__all__ = ["stream_trace_events", "write_stream_trace"]
