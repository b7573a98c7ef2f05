"""What ``accelsim run`` prints: per-layer tables with scaled units, and a one-screen summary
for long models (a per-op summary plus the slowest kinds of layer: layers whose names differ
only in a block number, such as ``layers.0.q_proj`` and ``layers.31.q_proj``, and that have
the same shape, are one row with their count and their share of the time together).

Not-applicable cells are blank: a vector op (softmax, norm, elementwise) has no GEMM shape,
no array folds and no array utilisation, so those cells stay empty instead of reading 0.

This module does not register a subcommand.

Imports: pandas, report.terminal.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from accelsim.report.terminal import Col, scaled, unit_table

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
"""Columns of the GPU/CPU per-kernel table."""

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
        view["flop_per_s"] = np.where(t > 0, view["flops"].astype(float) / t.where(t > 0, 1.0), np.nan)
    return view


def op_summary(view: pd.DataFrame, energy: str | None) -> pd.DataFrame:
    """One row per op kind: layers, time and its share of the total, DRAM bytes, energy."""
    agg = {"layer": "count", "time_s": "sum", "dram_bytes": "sum"}
    if energy:
        agg[energy] = "sum"
    g = view.groupby("op", sort=False).agg(agg).rename(columns={"layer": "layers"})
    g["share"] = g["time_s"] / g["time_s"].sum() if g["time_s"].sum() > 0 else np.nan
    return g.sort_values("time_s", ascending=False).reset_index()


def layer_tables(view: pd.DataFrame, columns: list[Col], top: int | None,
                 summary_above: int, default_top: int) -> list[str]:
    """The text blocks to print: every layer, or a per-op summary and the ``top`` slowest."""
    cols = [c for c in columns if c.name in view.columns]
    n = len(view)
    if top is None:
        top = 0 if n <= summary_above else default_top
    if top <= 0 or top >= n:
        return [unit_table(view, cols)]
    energy = next((c for c in cols if c.kind in ("pj", "j")), None)
    summary = op_summary(view, energy.name if energy else None)
    scols = [Col("op", "op"), Col("layers", "layers", "int"), Col("time_s", "time", "s"),
             Col("share", "share of time", "fraction"), Col("dram_bytes", "DRAM", "bytes")]
    if energy:
        scols.append(Col(energy.name, "energy", energy.kind))
    kinds = layer_kinds(view, cols)
    slow = kinds.head(top)
    total = view["time_s"].sum()
    share = slow["kind_time_s"].sum() / total if total > 0 else 0.0
    kcols = [cols[0], Col("count", "count", "int"), Col("kind_share", "time share", "fraction"),
             *cols[1:]]
    return [f"{n} layers, by op:", unit_table(summary, scols), "",
            f"the {len(slow)} slowest of {len(kinds)} kinds of layer, {share:.1%} of the time "
            f"(one row per kind: its first layer, how many there are and their time share "
            f"together; --top N for more, --top 0 for all {n} layers):",
            unit_table(slow, kcols)]


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


def energy_line(summary: dict, table_name: str, node_nm: float) -> str:
    """``energy: 892.9 mJ, 111 pJ/MAC, ...`` from an energy summary (pJ, W)."""
    return (f"energy: {scaled(summary['total_pj'], 'pj')}, {summary['pj_per_mac']:.3g} pJ/MAC, "
            f"{summary['tops_per_w']:.3g} TOPS/W, {summary['avg_power_w']:.3g} W average "
            f"(table {table_name}, {node_nm:g} nm)")
