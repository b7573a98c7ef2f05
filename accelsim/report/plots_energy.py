"""Energy plots, built only from tables (matplotlib is imported lazily).

* :func:`plot_energy_by_layer` - stacked bars, one per layer, stacked by level (or operand),
  from :func:`accelsim.report.energy.energy_breakdown` output (columns ``layer``, the stack
  column, ``pj``).
* :func:`plot_energy_by_dataflow` - stacked bars, one per dataflow, from a table with a
  ``dataflow`` column and one ``<part>_pj`` column per stacked part (the comparison table of
  ``accelsim energy``).

Each takes ``ax`` (draw there) or ``offscreen`` (a figure for files only) and returns the Axes.

Imports: pandas, safe_text, report.energy, report.figures (matplotlib lazily).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim.report.energy import LEVELS
from accelsim.report.figures import new_axes, save_figure, tight_layout
from accelsim.safe_text import plot_text

MAX_TICKS = 60
"""At most this many layer names under the bars."""

MAX_WIDTH_IN = 16.0
"""Widest per-layer figure (inches); more layers make thinner bars."""


def _order(parts: list[str]) -> list[str]:
    rank = {p: i for i, p in enumerate(LEVELS + ("input", "weight", "output", "psum", "-"))}
    return sorted(parts, key=lambda p: rank.get(p, len(rank)))


def _stack(ax: Any, wide: pd.DataFrame, unit: float, unit_name: str, xlabel: str) -> None:
    bottom = None
    for part in _order(list(wide.columns)):
        vals = wide[part].to_numpy() / unit
        ax.bar(range(len(wide)), vals, bottom=bottom, label=str(part))
        bottom = vals if bottom is None else bottom + vals
    step = max(1, math.ceil(len(wide) / MAX_TICKS))  # long models: every k-th name
    ticks = list(range(0, len(wide), step))
    labels = [plot_text(wide.index[i]) for i in ticks]
    # slanted when the names overrun a 5-inch axis (~36 characters at 9 points) and each is
    # short enough for the margin a slant needs below the axis
    crowded = sum(len(t) for t in labels) > 36 and max(map(len, labels), default=0) <= 24
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, rotation=90 if len(wide) > 8 else (30 if crowded else 0),
                       ha="right" if crowded and len(wide) <= 8 else "center",
                       fontsize=7 if len(wide) > 20 else 9)
    ax.set_ylabel(f"energy ({unit_name})")
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the bars


def _unit(total: float) -> tuple[float, str]:
    for factor, name in ((1e12, "J"), (1e9, "mJ"), (1e6, "µJ"), (1e3, "nJ")):
        if total >= factor:
            return factor, name
    return 1.0, "pJ"


def plot_energy_by_layer(breakdown: pd.DataFrame, *, stack: str = "level", ax: Any = None,
                         title: str | None = None, offscreen: bool = False) -> Any:
    """Stacked bar per layer of ``breakdown`` (columns ``layer``, ``stack``, ``pj``)."""
    wide = breakdown.pivot_table(index="layer", columns=stack, values="pj", aggfunc="sum",
                                 fill_value=0.0, sort=False)
    ax = new_axes((min(MAX_WIDTH_IN, max(6.0, 0.25 * len(wide) + 2)), 4), ax=ax,
                  offscreen=offscreen)
    unit, name = _unit(float(wide.to_numpy().max(initial=0.0)))
    _stack(ax, wide, unit, name, "layer")
    ax.set_title(plot_text(title or f"energy per layer, by {stack}"))
    tight_layout(ax.figure)
    return ax


def plot_energy_by_dataflow(table: pd.DataFrame, *, parts: list[str] | None = None,
                            ax: Any = None, title: str | None = None,
                            offscreen: bool = False, by: str = "dataflow") -> Any:
    """Stacked bar per row, labelled by column ``by`` (default ``dataflow``); stacks the
    ``<part>_pj`` columns (default: levels)."""
    parts = parts or [lv for lv in LEVELS if f"{lv}_pj" in table.columns]
    wide = table.set_index(by)[[f"{p}_pj" for p in parts]]
    wide.columns = parts
    ax = new_axes((5, 4), ax=ax, offscreen=offscreen)
    unit, name = _unit(float(wide.sum(axis=1).max()))
    _stack(ax, wide, unit, name, by)
    ax.set_title(plot_text(title or f"energy per {by}"))
    tight_layout(ax.figure)
    return ax


def save(ax: Any, path: str | Path) -> Path:
    """Write the figure holding ``ax`` to ``path`` (format from the suffix)."""
    return save_figure(ax.figure, path, dpi=120)
