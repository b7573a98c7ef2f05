"""Pareto fronts and knees over sweep results (any number of metrics, each minimised or maximised).

A point *dominates* another when it is at least as good in every objective and strictly better
in one. The front is the set of points that no other point dominates; points with a NaN (or
an ``error``) in an objective are never on it. Identical points are all kept.

    >>> front = pareto_front(df, {"total_cycles": "min", "area_mm2": "min"})
    >>> knee = knee_point(front, "area_mm2", "total_cycles")

Imports: numpy, pandas, errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from accelsim.errors import ConfigError

SENSES = ("min", "max")


def _objectives(objectives: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    if isinstance(objectives, Mapping):
        out = dict(objectives)
    else:
        out = {name: "min" for name in objectives}
    if not out:
        raise ConfigError(None, "objectives", out, "need at least one metric")
    for name, sense in out.items():
        if sense not in SENSES:
            raise ConfigError(None, f"objectives.{name}", sense, "must be 'min' or 'max'")
    return out


def pareto_mask_array(values: np.ndarray, maximise: Sequence[bool] | None = None) -> np.ndarray:
    """Boolean mask of the non-dominated rows of ``values`` (n points x d objectives).

    Objectives are minimised unless ``maximise[j]``. Rows with a NaN are excluded.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2:
        raise ValueError("values must be a 2-D array (points x objectives)")
    if maximise is not None:
        v = np.where(np.asarray(maximise, dtype=bool)[None, :], -v, v)
    n = v.shape[0]
    mask = np.zeros(n, dtype=bool)
    valid = np.flatnonzero(~np.isnan(v).any(axis=1))
    if valid.size == 0:
        return mask
    # Lexicographic order: a point can only be dominated by one that comes before it.
    order = valid[np.lexsort(v[valid].T[::-1])]
    front: list[int] = []
    front_vals = np.empty((0, v.shape[1]))
    for i in order:
        x = v[i]
        if front_vals.shape[0]:
            dominated = np.all(front_vals <= x, axis=1) & np.any(front_vals < x, axis=1)
            if dominated.any():
                continue
        front.append(i)
        front_vals = np.vstack([front_vals, x])
    mask[front] = True
    return mask


def pareto_mask(df: pd.DataFrame, objectives: Mapping[str, str] | Sequence[str]) -> pd.Series:
    """A boolean Series: which rows of ``df`` are on the front of ``objectives``.

    ``objectives``: ``{"total_cycles": "min", "tops_per_w": "max"}``, or a list of metric
    names (all minimised). Rows with a non-empty ``error`` column are excluded.
    """
    obj = _objectives(objectives)
    missing = [m for m in obj if m not in df.columns]
    if missing:
        raise ConfigError(None, "objectives", missing[0],
                          f"no such column (columns: {', '.join(map(str, df.columns))})")
    values = np.array(df[list(obj)].to_numpy(dtype=float, na_value=np.nan), copy=True)
    if "error" in df.columns:
        bad = df["error"].fillna("").astype(str).to_numpy() != ""
        values[bad] = np.nan
    mask = pareto_mask_array(values, [s == "max" for s in obj.values()])
    return pd.Series(mask, index=df.index, name="pareto")


def pareto_front(df: pd.DataFrame, objectives: Mapping[str, str] | Sequence[str]) -> pd.DataFrame:
    """The rows of ``df`` on the Pareto front, sorted by the first objective."""
    obj = _objectives(objectives)
    front = df[pareto_mask(df, obj)]
    first = next(iter(obj))
    return front.sort_values(first, ascending=obj[first] == "min", kind="stable")


def knee_point(front: pd.DataFrame, x: str, y: str, *, x_sense: str = "min",
               y_sense: str = "min") -> object:
    """The index label of the knee of a 2-D front: the point farthest from the chord.

    Both axes are scaled to [0, 1] between the front's extremes; the knee is the point with
    the largest distance below the straight line joining the two extreme points (the point
    of diminishing returns, as in the "Kneedle" method). ``front`` should already be the
    Pareto front of ``(x, y)``; with fewer than 3 points the first is returned.
    """
    if front.empty:
        raise ConfigError(None, "front", "empty", "no points to find a knee in")
    xs = front[x].to_numpy(dtype=float)
    ys = front[y].to_numpy(dtype=float)
    if x_sense == "max":
        xs = -xs
    if y_sense == "max":
        ys = -ys
    order = np.argsort(xs, kind="stable")
    if len(order) < 3:
        return front.index[order[0]]
    xs, ys = xs[order], ys[order]
    xn = (xs - xs[0]) / (xs[-1] - xs[0]) if xs[-1] != xs[0] else np.zeros_like(xs)
    span = ys.max() - ys.min()
    yn = (ys - ys.min()) / span if span else np.zeros_like(ys)
    # chord from (0, yn[0]) to (1, yn[-1]); distance of each point below it
    chord = yn[0] + (yn[-1] - yn[0]) * xn
    return front.index[order[int(np.argmax(chord - yn))]]
