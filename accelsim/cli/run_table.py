"""What ``accelsim run`` prints: per-layer tables with scaled units, and a one-screen summary
for long models (a per-op summary plus the slowest kinds of layer: layers whose names differ
only in a block number, such as ``layers.0.q_proj`` and ``layers.31.q_proj``, and that have
the same shape, are one row with their count and their share of the time together).

Not-applicable cells are blank: a vector op (softmax, norm, elementwise) has no GEMM shape,
no array folds and no array utilisation, so those cells stay empty instead of reading 0.

Tables fit :data:`WIDTH` columns by default: each machine kind has its columns in order of
relevance (:data:`SYSTOLIC_RELEVANCE`, :data:`DEVICE_RELEVANCE`); the least relevant go until
the table fits, and long layer names are shortened in the middle. ``wide=True`` (``--wide``)
prints every column of the kind at full width; ``columns=[...]`` (``--columns a,b,c``) picks
any columns of the layer table, in that order (an unknown one is a one-line error listing the
valid names). Free text (headers, totals) is wrapped to the same width.

This module does not register a subcommand.

Imports: pandas, errors, safe_text, report.terminal.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from accelsim.errors import AccelsimError, ConfigError
from accelsim.report.terminal import Col, scaled, unit_table, wrap_clauses
from accelsim.safe_text import show

WIDTH = 120
"""Columns a default table or text line may take."""

LAYER_NAME_CHARS = 36
"""A layer name longer than this is shortened in the middle in fitted tables."""

_BLOCK_NUMBER = re.compile(r"(?<=\.)\d+(?=\.)|^\d+(?=\.)")

SYSTOLIC_COLUMNS = [
    Col("layer", "layer"), Col("op", "op"), Col("repeat", "repeat", "int"),
    Col("m", "m", "int"), Col("n", "n", "int"), Col("k", "k", "int"),
    Col("dataflow", "dataflow"), Col("folds", "folds", "int"),
    Col("total_cycles", "cycles", "int"), Col("stall_cycles", "stalls", "int"),
    Col("time_s", "time", "s"), Col("overall_util", "util", "fraction"),
    Col("mapping_efficiency", "map. eff.", "fraction"),
    Col("sram_reads", "SRAM reads", "count", "words"),
    Col("sram_writes", "SRAM writes", "count", "words"),
    Col("dram_bytes", "DRAM", "bytes"), Col("energy_pj", "energy", "pj"),
]
"""Columns of the systolic per-layer table (``energy`` only when the run priced energy)."""

ARRAY_ONLY = ["m", "n", "k", "overall_util", "mapping_efficiency", "sram_reads", "sram_writes"]
"""Columns that mean nothing for a vector-unit op (blank there)."""

DEVICE_COLUMNS = [
    Col("layer", "layer"), Col("op", "op"), Col("precision", "precision"),
    Col("time_s", "time", "s"), Col("flop_per_s", "throughput", "flop_per_s"),
    Col("util", "util", "fraction"), Col("dram_bytes", "DRAM", "bytes"),
    Col("energy_j", "energy", "j"), Col("bound", "bound"),
]
"""Columns of the GPU/CPU per-kernel table (``--wide``: all of them)."""

SYSTOLIC_RELEVANCE = ["layer", "op", "time_s", "overall_util", "energy_pj", "dram_bytes", "m",
                      "n", "k", "repeat", "total_cycles", "stall_cycles", "folds"]
"""Systolic columns shown by default, most relevant first (the last go first to fit)."""

DEVICE_RELEVANCE = ["layer", "op", "time_s", "bound", "util", "energy_j", "dram_bytes",
                    "flop_per_s", "precision"]
"""GPU/CPU columns shown by default, most relevant first."""

ONLY_WHEN_VARIED = ("repeat", "precision", "dataflow")
"""Default columns left out when every row holds the same value (it is in the header)."""

KIND_COLUMNS = [Col("count", "count", "int"), Col("kind_share", "share", "fraction")]
"""Columns the one-row-per-kind summary adds after the layer name."""

BREAKDOWN_COLUMNS = [
    Col("kernel_class", "kernel class"), Col("time_s", "GPU time", "s"),
    Col("kernels", "kernels", "int"), Col("fraction", "share", "fraction"),
]
"""Columns of a GPU run's where-the-time-goes table."""


def systolic_view(layers: pd.DataFrame) -> pd.DataFrame:
    """``Result.layers`` with not-applicable cells of vector ops set to NaN (printed blank)."""
    view = layers.copy()
    vector = view["dataflow"].astype(str) == "vector"
    for c in ARRAY_ONLY:
        if c in view:
            view[c] = view[c].astype(float)
            view.loc[vector, c] = np.nan
    return view


def device_view(layers: pd.DataFrame) -> pd.DataFrame:
    """The GPU/CPU kernel table with a ``flop_per_s`` column (FLOP/s)."""
    view = layers.copy()
    if "flop_per_s" not in view and {"flops", "time_s"} <= set(view.columns):
        t = view["time_s"].astype(float)
        view["flop_per_s"] = np.where(t > 0, view["flops"].astype(float) / t.where(t > 0, 1.0),
                                      np.nan)
    return view


def op_summary(view: pd.DataFrame, energy: str | None) -> pd.DataFrame:
    """One row per op kind: layers, time and its share of the total, DRAM bytes, energy."""
    agg = {"layer": "count", "time_s": "sum", "dram_bytes": "sum"}
    if energy:
        agg[energy] = "sum"
    g = view.groupby("op", sort=False).agg(agg).rename(columns={"layer": "layers"})
    g["share"] = g["time_s"] / g["time_s"].sum() if g["time_s"].sum() > 0 else np.nan
    return g.sort_values("time_s", ascending=False).reset_index()


def generic_col(name: str, series: pd.Series) -> Col:
    """A column of the layer table without a display rule: its unit from its name's suffix
    (``_s``, ``_bytes``, ``_pj``, ``_j``, ``_cycles``, ``_bytes_per_s``), else plain or text."""
    for suffix, kind in (("_bytes_per_s", "bytes_per_s"), ("_bytes", "bytes"), ("_pj", "pj"),
                         ("_cycles", "int"), ("_s", "s"), ("_j", "j")):
        if name.endswith(suffix):
            return Col(name, name, kind)
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return Col(name, name)
    if pd.api.types.is_integer_dtype(series):
        return Col(name, name, "int")
    return Col(name, name, "plain")


def parse_columns(text: str | None) -> list[str] | None:
    """``--columns a,b,c`` -> ``["a", "b", "c"]`` (None when not given)."""
    if text is None:
        return None
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise ConfigError("--columns", "--columns", text,
                          "expected a comma-separated list of columns")
    return names


def table_columns(view: pd.DataFrame, columns: list[Col], relevance: list[str] | None = None, *,
                  wide: bool = False, picked: list[str] | None = None) -> list[Col]:
    """The columns to print: ``picked`` (any columns of ``view``, in that order; an unknown one
    is a one-line :class:`ConfigError` listing the valid names), else all of ``columns``
    (``wide``), else those named in ``relevance`` (all of ``columns`` when None), less those
    blank in every row and the :data:`ONLY_WHEN_VARIED` ones whose value is the same in every
    row."""
    by_name = {c.name: c for c in columns}
    if picked:
        valid = [str(c) for c in view.columns]
        for name in picked:
            if name not in view.columns:
                raise AccelsimError(f"--columns: no such column '{show(name)}' "
                                    f"(valid: {', '.join(valid)})")
        return [by_name.get(n) or generic_col(n, view[n]) for n in picked]
    present = [c for c in columns if c.name in view.columns]
    if wide or relevance is None:
        return present
    return [c for c in present if c.name in relevance and view[c.name].notna().any() and not (
        c.name in ONLY_WHEN_VARIED and view[c.name].nunique(dropna=False) <= 1)]


def short_name(name: str, limit: int = LAYER_NAME_CHARS) -> str:
    """``name`` cut in the middle to at most ``limit`` characters (``…`` marks the cut)."""
    if len(name) <= limit:
        return name
    head = (limit - 1) // 2
    return f"{name[:head]}…{name[len(name) - (limit - 1 - head):]}"


def table_width(text: str) -> int:
    """Columns the widest line of ``text`` takes."""
    return max((len(line) for line in text.splitlines()), default=0)


def fitted_table(df: pd.DataFrame, cols: list[Col], relevance: list[str] | None,
                 keep: int = 3, width: int = WIDTH) -> str:
    """``unit_table(df, cols)``, dropping the least relevant columns (the end of
    ``relevance``; its first ``keep`` and columns it does not name stay) until the table is
    at most ``width`` columns wide, or nothing more can go. With a ``relevance`` list, layer
    names are shortened (:func:`short_name`); without one the table is printed as is."""
    cols = list(cols)
    rank = {n: i for i, n in enumerate(relevance or [])}
    if relevance is not None and "layer" in df:
        df = df.assign(layer=[short_name(str(x)) for x in df["layer"]])
    while True:
        text = unit_table(df, cols)
        droppable = [c for c in cols if rank.get(c.name, -1) >= keep]
        if table_width(text) <= width or not droppable:
            return text
        cols.remove(max(droppable, key=lambda c: rank[c.name]))


def wrap(text: str, width: int = WIDTH) -> str:
    """One line of prose wrapped to ``width`` columns after commas where possible
    (:func:`~accelsim.report.terminal.wrap_clauses`), continuations indented."""
    return "\n".join(wrap_clauses(text, width))


def layer_tables(view: pd.DataFrame, columns: list[Col], top: int | None,
                 summary_above: int, default_top: int, *, relevance: list[str] | None = None,
                 wide: bool = False, picked: list[str] | None = None) -> list[str]:
    """The text blocks to print: every layer, or a per-op summary and the ``top`` slowest.

    Columns by :func:`table_columns`; unless ``wide`` or ``picked``, each table is fitted to
    :data:`WIDTH` (:func:`fitted_table`, layer names shortened by :func:`short_name`)."""
    cols = table_columns(view, columns, relevance, wide=wide, picked=picked)
    fit = not wide and not picked
    rel = relevance if fit else None
    n = len(view)
    if top is None:
        top = 0 if n <= summary_above else default_top
    if top <= 0 or top >= n:
        return [fitted_table(view, cols, rel)]
    energy = next((c for c in columns if c.kind in ("pj", "j") and c.name in view), None)
    summary = op_summary(view, energy.name if energy else None)
    scols = [Col("op", "op"), Col("layers", "layers", "int"), Col("time_s", "time", "s"),
             Col("share", "share of time", "fraction"), Col("dram_bytes", "DRAM", "bytes")]
    if energy:
        scols.append(Col(energy.name, "energy", energy.kind))
    kinds = layer_kinds(view, cols)
    slow = kinds.head(top)
    total = view["time_s"].sum()
    share = slow["kind_time_s"].sum() / total if total > 0 else 0.0
    first = [c for c in cols if c.name == "layer"]
    kcols = [*first, *KIND_COLUMNS, *(c for c in cols if c.name != "layer")]
    return [f"{n} layers, by op:", unit_table(summary, scols), "",
            wrap(f"the {len(slow)} slowest of {len(kinds)} kinds of layer, {share:.1%} of the "
                 f"time (one row per kind: its first layer, how many there are and their time "
                 f"share together; --top N for more, --top 0 for all {n} layers; --wide for "
                 f"every column):"),
            fitted_table(slow, kcols, rel)]


def layer_kinds(view: pd.DataFrame, cols: list[Col]) -> pd.DataFrame:
    """One row per kind of layer (same name but for block numbers, same shape): the first
    such layer's row plus ``count``, ``kind_time_s`` and ``kind_share``, slowest kind first."""
    name = view["layer"].astype(str).str.replace(_BLOCK_NUMBER, "*", regex=True)
    shape = [c.name for c in cols if c.name in ("op", "m", "n", "k", "repeat", "dataflow",
                                                "precision") and c.name in view.columns]
    keys = [name.rename("_kind"), *(view[c] for c in shape)]
    grouped = view.groupby(keys, sort=False, dropna=False)
    first = grouped.head(1).copy()
    first["layer"] = [k if c > 1 else orig for k, c, orig in zip(
        name[first.index], grouped["time_s"].transform("size")[first.index], first["layer"])]
    first["count"] = grouped["time_s"].transform("size")[first.index].to_numpy()
    first["kind_time_s"] = grouped["time_s"].transform("sum")[first.index].to_numpy()
    total = view["time_s"].sum()
    first["kind_share"] = first["kind_time_s"] / total if total > 0 else np.nan
    return first.sort_values("kind_time_s", ascending=False, kind="stable")


UNMODELLED_COLUMNS = [Col("op", "op"), Col("count", "count", "int"), Col("nodes", "first nodes")]
"""Columns of the table of ops without a cost model."""


def unmodelled_table(rows: list[dict]) -> str:
    """The ops a reader had no cost model for: op type, how many, the first node names."""
    df = pd.DataFrame([{"op": r["op"], "count": r["count"],
                        "nodes": short_name(str(r.get("nodes", "")), 60)} for r in rows])
    return unit_table(df, UNMODELLED_COLUMNS)


def energy_line(summary: dict, table_name: str, node_nm: float) -> str:
    """``energy: 892.9 mJ, 111 pJ/MAC, ...`` from an energy summary (pJ, W)."""
    return (f"energy: {scaled(summary['total_pj'], 'pj')}, {summary['pj_per_mac']:.3g} pJ/MAC, "
            f"{summary['tops_per_w']:.3g} TOPS/W, {summary['avg_power_w']:.3g} W average "
            f"(table {table_name}, {node_nm:g} nm)")
