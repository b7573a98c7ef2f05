"""Plots of a per-op run (a GPU or CPU :class:`~accelsim.devices.results.ModelRun`), built only
from its tables (matplotlib is imported lazily):

* :func:`plot_layer_bars` - one bar per layer of one column (time, energy), coloured by op;
* :func:`plot_stream_timeline` - the host and the GPU stream over one step, from the per-call
  timeline (``calls``: ``host_start_s``/``host_end_s``, ``gpu_start_s``/``gpu_end_s``), or
  the layers back to back (``time_s``) when there is no timeline (a CPU runs one kernel per
  operator).

Imports: pandas, safe_text, report.figures.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from accelsim.report.figures import new_axes
from accelsim.safe_text import plot_text

MAX_TICKS = 60
"""At most this many layer names under the bars."""


def plot_layer_bars(layers: pd.DataFrame, column: str, scale: float, ylabel: str,
                    title: str) -> Any:
    """One bar per layer of ``layers[column] * scale``, coloured by ``op``; returns the figure."""
    from matplotlib import colormaps

    n = len(layers)
    ax = new_axes((max(7.0, min(16.0, 0.3 * n + 3)), 3.8), offscreen=True)
    ops = list(dict.fromkeys(layers["op"].astype(str)))
    colors = colormaps["tab10"]
    values = layers[column].astype(float).to_numpy() * scale
    for i, op in enumerate(ops):
        idx = [j for j, o in enumerate(layers["op"].astype(str)) if o == op]
        ax.bar(idx, values[idx], color=colors(i % 10), width=0.8, label=plot_text(op))
    step = max(1, math.ceil(n / MAX_TICKS))
    ticks = list(range(0, n, step))
    ax.set_xticks(ticks, [plot_text(str(layers["layer"].iloc[i]))[:22] for i in ticks],
                  rotation=70, fontsize=7, ha="right", rotation_mode="anchor")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax.figure


def plot_stream_timeline(layers: pd.DataFrame, calls: pd.DataFrame | None = None) -> Any:
    """Gantt of one step: host and GPU stream rows from ``calls``, else the layers in
    sequence; times in microseconds; returns the figure."""
    from matplotlib import colormaps

    ax = new_axes((12, 3.2), offscreen=True)
    us = 1e6
    if calls is not None and not calls.empty:
        host = [(s * us, (e - s) * us) for s, e in zip(calls["host_start_s"], calls["host_end_s"],
                                                       strict=True) if e > s]
        gpu = calls.dropna(subset=["gpu_start_s"])
        stream = [(s * us, (e - s) * us) for s, e in zip(gpu["gpu_start_s"], gpu["gpu_end_s"],
                                                         strict=True) if e > s]
        ax.broken_barh(host, (1.1, 0.8), color="tab:orange")
        ax.broken_barh(stream, (0.0, 0.8), color="tab:blue")
        ax.set_yticks([0.4, 1.5], ["GPU stream", "host"])
    else:
        colors = colormaps["tab20"]
        t = layers["time_s"].astype(float).to_numpy() * us
        start = t.cumsum() - t
        for i, (s, d) in enumerate(zip(start, t, strict=True)):
            ax.broken_barh([(s, d)], (0.0, 0.8), color=colors(i % 20))
        ax.set_yticks([0.4], ["layers"])
    ax.set_xlabel("time (µs)")
    ax.set_title("timeline")
    return ax.figure


__all__ = ["plot_layer_bars", "plot_stream_timeline"]
