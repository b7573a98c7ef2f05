"""Roofline plots, built only from tables (matplotlib imported lazily; see
:mod:`accelsim.report.figures` for where they are drawn).

Inputs are the DataFrames of :mod:`accelsim.analysis.roofline`:

* ``roofs``: one row per memory level with ``level, bandwidth_bytes_per_s, peak_flops_per_s,
  ridge_flop_per_byte`` (``MachineRoofs.ridge_table()``);
* ``points``: one row per layer with ``layer``, ``intensity_<level>`` and
  ``achieved_flops_per_s`` (simulated) and/or ``attainable_flops_per_s``;
* ``measured`` (optional): ``layer``, ``intensity``, ``flops_per_s``.

Imports: pandas, safe_text, report.figures, matplotlib (lazy).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from accelsim.report.figures import new_axes, save_figure
from accelsim.safe_text import plot_text

LABEL_GAP_DECADES = (0.9, 0.1)
"""Layer labels closer than this (x, y, in decades of the log axes) would overprint: only the
faster layer's is drawn. Layers on the same spot share one label (``name (+2)``)."""

_LEVEL_STYLE = {"rf": ":", "sram": "--", "l1": "--", "l2": "-.", "dram": "-", "hbm": "-",
                "host": (0, (1, 1))}


def _finite(values: pd.Series) -> np.ndarray:
    v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    return v[np.isfinite(v) & (v > 0)]


def choose_level(roofs: pd.DataFrame, points: pd.DataFrame) -> str:
    """The level a plot places the layers at: the outermost device-memory level (``hbm``,
    ``dram``, then inner ones) at which some layer has a finite, positive intensity."""
    levels = list(roofs["level"])
    order = [n for n in ("hbm", "dram", "l2", "l1", "sram", "rf") if n in levels]
    order += [n for n in levels if n not in order and n != "host"]
    for name in order:
        col = f"intensity_{name}"
        if col in points and len(_finite(points[col])):
            return name
    return order[0] if order else "dram"


def plot_roofline(roofs: pd.DataFrame, points: pd.DataFrame, *, level: str | None = None,
                  measured: pd.DataFrame | None = None, title: str = "", ax: Any = None,
                  label_points: int = 12, offscreen: bool = False) -> Any:
    """Log-log roofline: one roof per level, the compute peak, ridge points, one point per
    layer at its ``level`` intensity (default: the outermost device level in ``roofs``), and
    measured points overlaid. Returns the matplotlib Axes (``offscreen``: on a figure for
    files only, see :func:`accelsim.report.figures.new_axes`)."""
    ax = new_axes((8, 5.5), ax=ax, offscreen=offscreen)
    levels = list(roofs["level"])
    if level is None:
        level = choose_level(roofs, points)
    peak = float(roofs["peak_flops_per_s"].iloc[0]) if len(roofs) else float(
        points["attainable_flops_per_s"].max())
    col = f"intensity_{level}"
    xs = _finite(points[col]) if col in points else np.array([])
    ridges = _finite(roofs["ridge_flop_per_byte"]) if len(roofs) else np.array([1.0])
    lo = min([*(xs.tolist()), *(ridges.tolist())] or [1.0]) / 10
    hi = max([*(xs.tolist()), *(ridges.tolist())] or [100.0]) * 10
    if measured is not None and len(measured):
        mx = _finite(measured["intensity"])
        if len(mx):
            lo, hi = min(lo, mx.min() / 10), max(hi, mx.max() * 10)
    grid = np.logspace(math.log10(lo), math.log10(hi), 256)
    ax.axhline(peak, color="black", lw=2, label=f"compute peak {peak / 1e12:.3g} TFLOP/s")
    for _, r in roofs.iterrows():
        bw = float(r["bandwidth_bytes_per_s"])
        ax.plot(grid, np.minimum(peak, bw * grid), ls=_LEVEL_STYLE.get(r["level"], "-"),
                lw=1.6 if r["level"] == level else 1.0,
                label=f"{r['level']} {bw / 1e9:.4g} GB/s, "
                      f"ridge {r['ridge_flop_per_byte']:.3g} FLOP/B")
        ridge = float(r["ridge_flop_per_byte"])
        if math.isfinite(ridge):
            ax.plot([ridge], [peak], "kv", ms=6)
    y = "achieved_flops_per_s" if "achieved_flops_per_s" in points and \
        points["achieved_flops_per_s"].notna().any() else "attainable_flops_per_s"
    if col in points:
        every = points[pd.to_numeric(points[y], errors="coerce") > 0]
        pts = every[np.isfinite(pd.to_numeric(every[col], errors="coerce")) & (every[col] > 0)]
        for other in levels:
            ocol = f"intensity_{other}"
            if other == level or ocol not in every:
                continue
            ok = np.isfinite(pd.to_numeric(every[ocol], errors="coerce")) & (every[ocol] > 0)
            ax.scatter(every.loc[ok, ocol], every.loc[ok, y], s=22, facecolors="none",
                       edgecolors="tab:gray", alpha=0.7, zorder=2,
                       label=f"same layers at {other} intensity")
        ax.scatter(pts[col], pts[y], s=28, c="tab:blue", zorder=3,
                   label=f"layers ({'simulated' if y.startswith('achieved') else 'bound'}, "
                         f"{level})")
        _label_points(ax, pts, col, y, label_points)
    if measured is not None and len(measured):
        ax.scatter(measured["intensity"], measured["flops_per_s"], marker="x", s=40,
                   c="tab:red", zorder=4, label="measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(f"arithmetic intensity (FLOP/byte): filled at {level}, hollow at other levels")
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e12:g}"))
    ax.set_ylabel("performance (TFLOP/s)")
    ax.set_title(plot_text(title or "Roofline"))
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="lower right")
    return ax


def _label_points(ax: Any, pts: pd.DataFrame, col: str, y: str, most: int) -> None:
    """Name the ``most`` fastest points, one label per spot, none overprinting another."""
    spots: dict[tuple[float, float], list[str]] = {}
    for _, p in pts.sort_values(y, ascending=False).iterrows():
        key = (round(math.log10(p[col]), 2), round(math.log10(p[y]), 2))
        spots.setdefault(key, []).append(str(p["layer"]))
    placed: list[tuple[float, float]] = []
    for (lx, ly), names in list(spots.items())[:most]:
        if any(abs(lx - a) < LABEL_GAP_DECADES[0] and abs(ly - b) < LABEL_GAP_DECADES[1]
               for a, b in placed):
            continue
        placed.append((lx, ly))
        text = names[0][:18] + (f" (+{len(names) - 1})" if len(names) > 1 else "")
        ax.annotate(plot_text(text), (10 ** lx, 10 ** ly), fontsize=7, alpha=0.8, xytext=(3, 3),
                    textcoords="offset points")


def save(ax: Any, path: str | Path, dpi: int = 130) -> Path:
    """Write the figure of ``ax`` to ``path`` (format from the suffix)."""
    return save_figure(ax.figure, path, dpi)
