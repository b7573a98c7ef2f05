"""Serving plots, made from the iteration table of a serving run.

Imports: (matplotlib, pandas only).
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def timeline_figure(iterations: pd.DataFrame, settings: dict[str, Any] | None = None):
    """Sequences per iteration and KV-cache blocks in use over time, per replica (a figure;
    the backend is left as the caller set it)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5))
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    for replica, g in iterations.groupby("replica"):
        ax1.step(g["end_s"], g["sequences"], where="post", label=f"replica {replica}")
        ax2.step(g["end_s"], g["kv_blocks_used"], where="post", label=f"replica {replica}")
    ax1.set_ylabel("sequences / iteration")
    ax2.set_ylabel("KV blocks in use")
    ax2.set_xlabel("time (s)")
    if settings:
        ax1.set_title(f"{settings.get('model')} on {settings.get('system')} "
                      f"({settings.get('engine')}, tp={settings.get('tp')})")
    if iterations["replica"].nunique() > 1:
        ax1.legend(fontsize=8)
    fig.tight_layout()
    return fig


def serving_search_figure(rows: pd.DataFrame, front: pd.DataFrame, best: Any = None):
    """A configuration search: cost per hour against output tokens/s, the configurations
    that meet the SLO filled, the Pareto front ringed, the cheapest one meeting it named."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    ran = rows[rows["error"].fillna("") == ""]
    meets = ran["meets_slo"].fillna(False).astype(bool)
    for gpu, g in ran.groupby("gpu"):
        m = meets[g.index]
        ax.scatter(g.loc[~m, "cost_per_hour"], g.loc[~m, "output_tokens_per_s"],
                   facecolors="none", edgecolors=f"C{sorted(ran['gpu'].unique()).index(gpu)}",
                   label=f"{gpu} (misses SLO)")
        ax.scatter(g.loc[m, "cost_per_hour"], g.loc[m, "output_tokens_per_s"],
                   color=f"C{sorted(ran['gpu'].unique()).index(gpu)}", label=f"{gpu} (meets SLO)")
    if len(front):  # a front in three objectives: ringed, not joined (a 2-D line would zig-zag)
        ax.scatter(front["cost_per_hour"], front["output_tokens_per_s"], s=140,
                   facecolors="none", edgecolors="k", lw=0.8,
                   label="Pareto front (cost, TTFT p90, tok/s)")
    if best is not None:
        ax.annotate(f"cheapest meeting SLO: {best['gpu']} tp={best['tp']} pp={best['pp']} "
                    f"x{best['replicas']}", (best["cost_per_hour"], best["output_tokens_per_s"]),
                    xytext=(10, -20), textcoords="offset points", fontsize=8,
                    arrowprops={"arrowstyle": "->"})
    ax.set_xlabel("cost per hour (GPUs x price)")
    ax.set_ylabel("output tokens/s")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


__all__ = ["serving_search_figure", "timeline_figure"]
