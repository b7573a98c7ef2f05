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


__all__ = ["timeline_figure"]
