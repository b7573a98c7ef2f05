"""Exports: tables to CSV/JSON/Parquet, and aligned terminal tables.

Imports: pandas, safe_text, files.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim.safe_text import inert_csv_columns, show


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write ``df`` as CSV, JSON (records) or Parquet, chosen by the file suffix; every write
    checked (:func:`accelsim.files.writing`: one line ``cannot write PATH: REASON``). In a CSV
    the text cells of the name columns (:data:`accelsim.safe_text.NAME_COLUMNS`) are made
    inert (:func:`accelsim.safe_text.csv_text`); JSON and Parquet keep names exactly."""
    from accelsim.files import write_output, writing

    p = Path(path)
    if p.suffix == ".parquet":
        with writing(p):
            df.to_parquet(p, index=False)
        return p
    if p.suffix == ".json":
        return write_output(p, df.to_json(orient="records", indent=1))
    return write_output(p, inert_csv_columns(df).to_csv(index=False))


def json_default(obj: Any) -> Any:
    """JSON encoder fallback for numpy scalars and mappings."""
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "items"):
        return dict(obj.items())
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


def dumps(doc: Any) -> str:
    """One JSON document (inf/nan written as strings so strict parsers accept it)."""
    return json.dumps(_clean(doc), indent=1, default=json_default)


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def format_number(v: Any) -> str:
    """Compact, readable number: integers with thousands separators, floats to 4 digits."""
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return f"{int(v):,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
        if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6):
            return f"{v:.3e}"
        return f"{v:.4g}"
    return show(v)


def text_table(df: pd.DataFrame, columns: list[str] | None = None,
               headers: dict[str, str] | None = None) -> str:
    """An aligned plain-text table (numbers right-aligned, text left-aligned)."""
    cols = columns or list(df.columns)
    heads = [show((headers or {}).get(c, c)) for c in cols]
    cells = [[format_number(v.item() if hasattr(v, "item") else v) for v in row]
             for row in df[cols].itertuples(index=False)]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in cols]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]

    def fmt(vals: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(vals, widths, numeric)).rstrip()

    lines = [fmt(heads), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells]
    return "\n".join(lines)
