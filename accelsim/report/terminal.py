"""Terminal tables with one scaled unit and one number format per column.

A column is described by a :class:`Col`: the DataFrame column, a header, and a *kind* that
says what its canonical unit is (``s``, ``bytes``, ``pj``, ``j``, ``flop_per_s``, ``count``,
``fraction`` (printed in percent), ``plain`` (a number whose unit is in the header), ``int``
or ``text``). For each column the unit prefix is chosen once, from the
column's median non-zero magnitude (e.g. ``µs`` when most layers take microseconds), and every
value of that column is printed with the same number of decimals; the unit goes in the header
(``time (µs)``). Missing values (NaN/None), which mean *not applicable*, print as blanks.

Decimal SI throughout (1 MB = 1e6 bytes), as everywhere in accelsim.

Text cells (layer names from files) are shown through :func:`accelsim.safe_text.show`.

Imports: pandas, numpy, safe_text.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass

import numpy as np
import pandas as pd

from accelsim.safe_text import show

SCALES: dict[str, tuple[tuple[float, str], ...]] = {
    "s": ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
    "bytes": ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")),
    "pj": ((1e12, "J"), (1e9, "mJ"), (1e6, "µJ"), (1e3, "nJ"), (1.0, "pJ")),
    "j": ((1.0, "J"), (1e-3, "mJ"), (1e-6, "µJ"), (1e-9, "nJ"), (1e-12, "pJ")),
    "flop_per_s": ((1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s"), (1e6, "MFLOP/s"),
                   (1.0, "FLOP/s")),
    "bytes_per_s": ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1.0, "B/s")),
    "count": ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")),
    "plain": ((1.0, ""),),
}
"""Per kind: (factor, unit name) from largest to smallest; values are divided by the factor."""

SIGNIFICANT = 4
"""Significant digits the column's median value is printed with."""

PERCENT_DECIMALS = 1
"""Decimals of a fraction column, printed in percent."""


@dataclass(frozen=True)
class Col:
    """One terminal column: ``name`` in the DataFrame, ``header`` shown, ``kind`` of unit and
    an optional ``suffix`` after the scaled prefix (``"words"`` gives ``(M words)``)."""

    name: str
    header: str
    kind: str = "text"
    suffix: str = ""


def _numeric(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)


def choose_scale(kind: str, values: np.ndarray) -> tuple[float, str]:
    """The (factor, unit) of ``kind`` at which the median non-zero |value| is >= 1."""
    scales = SCALES[kind]
    v = np.abs(values[np.isfinite(values) & (values != 0)])
    if not v.size:
        return scales[-1] if kind != "s" else (1.0, "s")
    typical = float(np.median(v))
    for factor, unit in scales:
        if typical >= factor * (1 - 1e-12):
            return factor, unit
    return scales[-1]


MAX_DIGITS = 6
"""At most this many digits for the column's largest value (decimals give way first)."""


def _digits(x: float) -> int:
    return int(math.floor(math.log10(x))) + 1


def _decimals(values: np.ndarray) -> int:
    """Decimals so that the column's median non-zero value shows ``SIGNIFICANT`` digits, and
    its largest no more than ``MAX_DIGITS``."""
    v = np.abs(values[np.isfinite(values) & (values != 0)])
    if not v.size:
        return 0
    by_median = SIGNIFICANT - _digits(float(np.median(v)))
    by_max = MAX_DIGITS - _digits(float(v.max()))
    return max(0, min(by_median, by_max, 6))


def format_column(series: pd.Series, kind: str) -> tuple[list[str], str]:
    """Cells of one column and the unit suffix for its header (``""`` when none)."""
    if kind == "text":
        return ["" if _missing(x) else show(x) for x in series], ""
    values = _numeric(series)
    missing = ~np.isfinite(values)
    if kind == "int":
        return ["" if m else f"{int(v):,}" for v, m in zip(values, missing)], ""
    if kind == "fraction":
        scaled, unit, d = values * 100.0, "%", PERCENT_DECIMALS
    else:
        factor, unit = choose_scale(kind, values)
        scaled = values / factor
        d = _decimals(scaled)
    return ["" if m else f"{v:,.{d}f}" for v, m in zip(scaled, missing)], unit


def _missing(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def unit_table(df: pd.DataFrame, columns: list[Col]) -> str:
    """An aligned text table of ``df`` with one unit and one format per column."""
    heads, cells, numeric = [], [], []
    for c in columns:
        col_cells, unit = format_column(df[c.name], c.kind)
        unit = f"{unit} {c.suffix}".strip()
        heads.append(f"{c.header} ({unit})" if unit else c.header)
        cells.append(col_cells)
        numeric.append(c.kind != "text")
    widths = [max([len(h), *(len(x) for x in col)]) for h, col in zip(heads, cells)]

    def line(vals: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(vals, widths, numeric)).rstrip()

    rows = [line(heads), "  ".join("-" * w for w in widths)]
    rows += [line([col[i] for col in cells]) for i in range(len(df))]
    return "\n".join(rows)


def scaled(value: float, kind: str, digits: int = SIGNIFICANT) -> str:
    """One value with its own scaled unit, e.g. ``scaled(0.05397, "s") == "53.97 ms"``."""
    if not math.isfinite(value):
        return str(value)
    factor, unit = choose_scale(kind, np.array([value]))
    v = value / factor
    return f"{v:.{digits}g} {unit}".rstrip()


_CLAUSE = re.compile(r"(?<=[,;]) ")


def wrap_clauses(text: str, width: int = 120, indent: str = "    ") -> list[str]:
    """``text`` as lines of at most ``width`` columns, broken after a comma or semicolon where
    possible (a clause such as ``16.5 ms per output token`` stays whole), else between
    words; continuation lines start with ``indent``."""
    lines: list[str] = []
    line = ""
    for clause in _CLAUSE.split(text):
        candidate = f"{line} {clause}" if line else clause
        if len(candidate) <= width or not line:
            line = candidate
            continue
        lines.append(line)
        line = f"{indent}{clause}"
    if line:
        lines.append(line)
    out: list[str] = []
    for i, ln in enumerate(lines):
        if len(ln) <= width:
            out.append(ln)
            continue
        parts = textwrap.wrap(ln.removeprefix(indent) if i else ln, width,
                              initial_indent=indent if i else "", subsequent_indent=indent,
                              break_on_hyphens=False, break_long_words=False)
        out += parts or [ln]
    return out or [""]
