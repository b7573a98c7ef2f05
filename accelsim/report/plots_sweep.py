"""Sweep plots, built only from a results DataFrame (one row per design point).

* :func:`plot_metric_vs_param`: a metric against one parameter, one line per value of a
  second (``hue``) parameter.
* :func:`plot_heatmap`: a metric over two parameters (the best value where other parameters
  vary, by ``agg``).
* :func:`plot_pareto`: two metrics as a scatter, the Pareto-front rows (a boolean column the
  caller computes, e.g. with :func:`accelsim.sweep.pareto.pareto_mask`) joined and marked.

matplotlib is imported lazily (only when a function makes a new figure), so importing this
module costs nothing. Each function takes an optional ``ax`` and returns the ``Axes``.

Imports: pandas, numpy, matplotlib (lazily).
"""

from __future__ import annotations

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


def plot_metric_vs_param(df: pd.DataFrame, param: str, metric: str, *, hue: str | None = None,
                         agg: str = "min", logx: bool = False, logy: bool = False,
                         ax: Any = None) -> Any:
    """``metric`` against ``param``; one line per value of ``hue``; ``agg`` over the rest."""
    ax = _axes(ax)
    data = _ok(df)
    groups = [(None, data)] if hue is None else list(data.groupby(hue, sort=True))
    for key, g in groups:
        s = g.groupby(param, sort=True)[metric].agg(agg)
        label = None if key is None else f"{_short(hue)}={key}"  # type: ignore[arg-type]
        ax.plot(s.index.to_numpy(), s.to_numpy(), marker="o", label=label)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(_short(param))
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} vs {_short(param)} ({agg} over the other parameters)")
    if hue is not None:
        ax.legend(fontsize="small")
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
    ax.set_xlabel(_short(x))
    ax.set_ylabel(_short(y))
    ax.set_title(f"{metric} ({agg})")
    ax.figure.colorbar(im, ax=ax, label=metric)
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
                logy: bool = False, ax: Any = None) -> Any:
    """Scatter of ``y`` against ``x``; rows where column ``front`` is true are joined and marked.

    ``color``: a column to colour the points by; ``knee``: an index label to highlight.
    """
    ax = _axes(ax)
    data = _ok(df)
    c = data[color].astype("category").cat.codes if color is not None else None
    sc = ax.scatter(data[x], data[y], s=12, alpha=0.5, c=c, cmap="tab10" if color else None,
                    label="design points")
    if color is not None:
        cats = data[color].astype("category").cat.categories
        handles = [ax.scatter([], [], color=sc.cmap(sc.norm(i)), s=12) for i in range(len(cats))]
        ax.legend(handles, [f"{_short(color)}={v}" for v in cats], fontsize="small", loc="best")
    if front in data.columns:
        f = data[data[front].astype(bool)].sort_values(x)
        ax.plot(f[x], f[y], "-o", color="crimson", ms=5, lw=1.5, label="Pareto front")
    if knee is not None and knee in data.index:
        ax.scatter([data.loc[knee, x]], [data.loc[knee, y]], s=160, facecolors="none",
                   edgecolors="black", linewidths=2, label="knee", zorder=5)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"{y} vs {x}")
    ax.grid(True, alpha=0.3)
    if color is None:
        ax.legend(fontsize="small")
    return ax
