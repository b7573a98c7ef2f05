"""Sweep plots, built only from a results DataFrame (one row per design point).

* :func:`plot_metric_vs_param`: a metric against one parameter, one line per value of a
  second (``hue``) parameter.
* :func:`plot_heatmap`: a metric over two parameters (the best value where other parameters
  vary, by ``agg``).
* :func:`plot_pareto`: two metrics as a scatter, the Pareto-front rows (a boolean column the
  caller computes, e.g. with :func:`accelsim.sweep.pareto.pareto_mask`) joined and marked.

matplotlib is imported lazily (only when a function makes a new figure), so importing this
module costs nothing. Each function takes an optional ``ax`` and returns the ``Axes``. Axis
titles come from the column names with their units spelled out (:func:`axis_label`:
``latency_us`` -> "latency (µs)"); log axes show plain numbers (32, 64, 0.5), not powers.

Imports: pandas, numpy, matplotlib (lazily), report.figures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from accelsim.report.figures import new_axes


def _axes(ax: Any) -> Any:
    """``ax``, or new Axes of a new pyplot figure (see :mod:`accelsim.report.figures`)."""
    return new_axes((6, 4), ax=ax)


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    if "error" in df.columns:
        return df[df["error"].fillna("").astype(str) == ""]
    return df


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


UNIT_SUFFIXES = {"us": "µs", "ms": "ms", "s": "s", "ns": "ns", "mib": "MiB", "kib": "KiB",
                 "gib": "GiB", "mb": "MB", "gb": "GB", "kb": "kB", "bytes": "bytes",
                 "mm2": "mm²", "pj": "pJ", "nj": "nJ", "uj": "µJ", "mj": "mJ", "j": "J",
                 "w": "W", "hz": "Hz", "bytes_per_s": "bytes/s", "flops_per_s": "FLOP/s",
                 "flop_per_s": "FLOP/s", "tflops_per_s": "TFLOP/s", "gflops_per_s": "GFLOP/s"}
"""Column-name unit suffixes (the project's convention) and how an axis spells them."""

_ACRONYMS = {"sram": "SRAM", "dram": "DRAM", "hbm": "HBM", "pe": "PE", "mac": "MAC",
             "util": "utilization", "pj": "pJ", "os": "OS", "ws": "WS", "is": "IS"}


def axis_label(column: str) -> str:
    """A readable axis title for a column: ``latency_us`` -> "latency (µs)", ``sram_mib`` ->
    "SRAM (MiB)", ``pj_per_mac`` -> "energy per MAC (pJ)", ``overall_util`` -> "overall
    utilization", ``compute.array.rows`` -> "array rows"."""
    parts = column.split(".")
    name = " ".join(parts[-2:]) if len(parts) > 1 else parts[0]
    words = name.replace(" ", "_").split("_")
    if words[:1] == ["pj"] and "per" in words:
        return f"energy {' '.join(_ACRONYMS.get(w, w) for w in words[1:])} (pJ)"
    unit = ""
    for n in (3, 2, 1):
        key = "_".join(words[-n:])
        if len(words) > n and key in UNIT_SUFFIXES:
            unit, words = UNIT_SUFFIXES[key], words[:-n]
            break
    text = " ".join(_ACRONYMS.get(w, w) for w in words)
    return f"{text} ({unit})" if unit else text


def _plain_log_ticks(ax: Any, axis: str) -> None:
    """Label a log axis with plain numbers at 1, 2 and 5 per decade (``20``, ``50``, ``100``)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())


LABEL_FONT_PT = 7
"""Font size of the design labels next to Pareto points."""


def _label_front(ax: Any, front: pd.DataFrame, x: str, y: str, label: Callable[[pd.Series], str],
                 logx: bool, logy: bool) -> None:
    """Write ``label(row)`` beside each front point, above or below it, skipping a label that
    would overprint one already written (text boxes estimated from the font size)."""
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.autoscale_view()
    to_px = ax.transData.transform
    pt_px = ax.figure.dpi / 72.0
    boxes: list[tuple[float, float, float, float]] = []
    for _, row in front.iterrows():
        text = label(row)
        px, py = to_px((row[x], row[y]))
        w, h = 0.6 * LABEL_FONT_PT * len(text) * pt_px, 1.2 * LABEL_FONT_PT * pt_px
        for dx, dy in ((4, 4), (4, -4 - 1.2 * LABEL_FONT_PT)):
            x0, y0 = px + dx * pt_px, py + dy * pt_px
            box = (x0, y0, x0 + w, y0 + h)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3]
                       for b in boxes):
                boxes.append(box)
                ax.annotate(text, (row[x], row[y]), fontsize=LABEL_FONT_PT, xytext=(dx, dy),
                            textcoords="offset points", color="crimson")
                break


def plot_metric_vs_param(df: pd.DataFrame, param: str, metric: str, *, hue: str | None = None,
                         agg: str = "min", logx: bool = False, logy: bool = False,
                         ax: Any = None) -> Any:
    """``metric`` against ``param``; one line per value of ``hue``; ``agg`` over the rest."""
    ax = _axes(ax)
    data = _ok(df)
    groups = [(None, data)] if hue is None else list(data.groupby(hue, sort=True))
    for key, g in groups:
        s = g.groupby(param, sort=True)[metric].agg(agg)
        label = None if key is None else f"{axis_label(hue)} = {_tick(key)}"  # type: ignore[arg-type]
        ax.plot(s.index.to_numpy(), s.to_numpy(), marker="o", label=label)
    if logx:
        ax.set_xscale("log", base=2)
        _plain_log_ticks(ax, "x")
        ax.set_xticks(sorted(data[param].unique()))
    if logy:
        ax.set_yscale("log")
        _plain_log_ticks(ax, "y")
    ax.set_xlabel(axis_label(param))
    ax.set_ylabel(axis_label(metric))
    ax.set_title(f"{axis_label(metric)} vs {axis_label(param)}\n({agg} over the other parameters)",
                 fontsize="medium")
    if hue is not None:
        ax.legend(fontsize="small", loc="best")
    ax.grid(True, alpha=0.3)
    return ax


def plot_heatmap(df: pd.DataFrame, x: str, y: str, metric: str, *, agg: str = "min",
                 fmt: str = "{:.3g}", annotate: bool = True, cmap: str = "viridis",
                 ax: Any = None) -> Any:
    """``metric`` over parameters ``x`` (columns) and ``y`` (rows), ``agg`` over the rest."""
    ax = _axes(ax)
    table = _ok(df).pivot_table(index=y, columns=x, values=metric, aggfunc=agg).sort_index()
    table = table[sorted(table.columns)]
    values = table.to_numpy(dtype=float)
    im = ax.imshow(values, origin="lower", aspect="auto", cmap=cmap)
    ax.set_xticks(range(len(table.columns)), [_tick(v) for v in table.columns], rotation=45)
    ax.set_yticks(range(len(table.index)), [_tick(v) for v in table.index])
    ax.set_xlabel(axis_label(x))
    ax.set_ylabel(axis_label(y))
    ax.set_title(f"{axis_label(metric)} ({agg} over the other parameters)", fontsize="medium")
    ax.figure.colorbar(im, ax=ax, label=axis_label(metric))
    if annotate and values.size <= 400:
        finite = values[np.isfinite(values)]
        mid = (finite.min() + finite.max()) / 2 if finite.size else 0.0
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7,
                        color="white" if v < mid else "black")
    return ax


def _tick(v: Any) -> str:
    if isinstance(v, (int, np.integer)) and v >= 2**20 and v % 2**20 == 0:
        return f"{v // 2**20}Mi"
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return _tick(int(v))
    return str(v)


def plot_pareto(df: pd.DataFrame, x: str, y: str, *, front: str = "pareto",
                color: str | None = None, knee: Any = None, logx: bool = False,
                logy: bool = False, label: Callable[[pd.Series], str] | None = None,
                ax: Any = None) -> Any:
    """Scatter of ``y`` against ``x``; rows where column ``front`` is true are joined and marked.

    ``color``: a column to colour the points by; ``knee``: an index label to highlight;
    ``label``: a function of a row naming its design, written next to every front point.
    """
    ax = _axes(ax)
    data = _ok(df)
    c = data[color].astype("category").cat.codes if color is not None else None
    sc = ax.scatter(data[x], data[y], s=12, alpha=0.5, c=c, cmap="tab10" if color else None,
                    label="design points")
    if color is not None:
        cats = data[color].astype("category").cat.categories
        handles = [ax.scatter([], [], color=sc.cmap(sc.norm(i)), s=12) for i in range(len(cats))]
        ax.legend(handles, [f"{axis_label(color)} = {v}" for v in cats], fontsize="small",
                  loc="best")
    if front in data.columns:
        f = data[data[front].astype(bool)].sort_values(x)
        ax.plot(f[x], f[y], "-o", color="crimson", ms=5, lw=1.5, label="Pareto front")
        if label is not None:
            _label_front(ax, f, x, y, label, logx, logy)
    if knee is not None and knee in data.index:
        ax.scatter([data.loc[knee, x]], [data.loc[knee, y]], s=160, facecolors="none",
                   edgecolors="black", linewidths=2, label="knee", zorder=5)
    if logx:
        ax.set_xscale("log")
        _plain_log_ticks(ax, "x")
    if logy:
        ax.set_yscale("log")
        _plain_log_ticks(ax, "y")
    ax.set_xlabel(axis_label(x))
    ax.set_ylabel(axis_label(y))
    ax.set_title(f"{axis_label(y)} vs {axis_label(x)}")
    ax.grid(True, alpha=0.3)
    if color is None:
        ax.legend(fontsize="small")
    return ax
