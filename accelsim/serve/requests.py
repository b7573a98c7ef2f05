"""Request streams: when each request arrives and how many tokens it brings and asks for.

* fixed lengths: ``n`` requests of ``input_tokens`` / ``output_tokens``;
* arrivals: all at t = 0 (``rate=inf``: the offline / max-throughput case) or a Poisson process
  of ``rate`` requests/s (exponential gaps, seeded): ``arrivals="poisson"`` is one draw, whose
  mean gap is 1/rate only on average (seed 0's 500 gaps span 9.7 % more than 499/rate, and a
  lightly loaded run's throughput is the arrival rate, so it is 9 % low);
  ``arrivals="poisson-exact"`` rescales that draw's gaps so the stream spans exactly
  ``(n - 1) / rate``: the same burstiness at exactly the offered rate (what a comparison with
  a benchmark whose own draw is unknown should use);
* a trace file (CSV with a header, or JSON lines): ``arrival_s``, ``input_tokens``,
  ``output_tokens`` per row; every row is checked (a bad row is one line naming the file, the
  row and the field).

Units: seconds, tokens.

Imports: errors, limits.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from accelsim.errors import ConfigError
from accelsim.limits import MAX_DIM

TRACE_FIELDS = ("arrival_s", "input_tokens", "output_tokens")
ARRIVALS = ("poisson", "poisson-exact")
"""Arrival processes of a finite rate (see the module doc)."""
MAX_TRACE_ROWS = 1_000_000
"""Rows a trace file may hold."""


@dataclass(frozen=True, slots=True)
class Request:
    """One request: arrival time (s), prompt tokens, tokens to generate."""

    id: int
    arrival_s: float
    input_tokens: int
    output_tokens: int


def _count(value: object, source: str, field: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not minimum <= int(value) <= MAX_DIM:
        raise ConfigError(source, field, value, f"expected an integer {minimum}..{MAX_DIM}")
    return int(value)


def parse_rate(value: object, source: str = "--rate") -> float:
    """Requests/s: a positive number or ``inf`` (every request arrives at t = 0)."""
    text = str(value).strip().lower()
    try:
        rate = float(text)
    except ValueError:
        raise ConfigError(source, "rate", value, "expected requests/s (a number > 0) or inf") \
            from None
    if math.isnan(rate) or rate <= 0:
        raise ConfigError(source, "rate", value, "expected requests/s (a number > 0) or inf")
    return rate


def fixed_requests(n: int, input_tokens: int, output_tokens: int, *, rate: float = math.inf,
                   seed: int = 0, arrivals: str = "poisson",
                   source: str = "command line") -> list[Request]:
    """``n`` requests of fixed lengths, arriving at ``rate`` requests/s (``arrivals``: one
    Poisson draw, or ``poisson-exact``, that draw at exactly the rate) or all at once
    (``rate = inf``)."""
    if arrivals not in ARRIVALS:
        raise ConfigError(source, "arrivals", arrivals, f"expected one of {', '.join(ARRIVALS)}")
    n = _count(n, source, "requests")
    isl = _count(input_tokens, source, "isl")
    osl = _count(output_tokens, source, "osl")
    if math.isinf(rate):
        times = np.zeros(n)
    else:
        gaps = np.random.default_rng(seed).exponential(1.0 / rate, n)
        times = np.cumsum(gaps) - gaps[0]
        if arrivals == "poisson-exact" and n > 1:
            times *= (n - 1) / rate / times[-1]
    return [Request(i, float(t), isl, osl) for i, t in enumerate(times)]


def read_trace(path: str | os.PathLike) -> list[Request]:
    """Requests of a trace file (CSV with header ``arrival_s,input_tokens,output_tokens``, or
    JSON lines with those keys), sorted by arrival."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(str(p), None, None, "no such trace file")
    rows: list[dict] = []
    try:
        with p.open(newline="", encoding="utf-8") as fh:
            if p.suffix in (".jsonl", ".json"):
                for i, line in enumerate(fh, 1):
                    if line.strip():
                        try:
                            obj = json.loads(line)
                        except json.JSONDecodeError as exc:
                            raise ConfigError(str(p), f"line {i}", line.strip()[:40],
                                              f"not JSON ({exc.msg})") from None
                        if not isinstance(obj, dict):
                            raise ConfigError(str(p), f"line {i}", line.strip()[:40],
                                              "expected an object")
                        rows.append(obj)
                    if len(rows) > MAX_TRACE_ROWS:
                        break
            else:
                reader = csv.DictReader(fh)
                missing = [f for f in TRACE_FIELDS if f not in (reader.fieldnames or [])]
                if missing:
                    raise ConfigError(str(p), "header", ",".join(reader.fieldnames or []),
                                      f"needs columns {', '.join(TRACE_FIELDS)}")
                for row in reader:
                    rows.append(row)
                    if len(rows) > MAX_TRACE_ROWS:
                        break
    except UnicodeDecodeError:
        raise ConfigError(str(p), None, None, "not a text file (CSV or JSON lines)") from None
    if len(rows) > MAX_TRACE_ROWS:
        raise ConfigError(str(p), "rows", f">{MAX_TRACE_ROWS}", "too many requests")
    if not rows:
        raise ConfigError(str(p), "rows", 0, "the trace holds no request")
    out = []
    for i, row in enumerate(rows):
        where = f"row {i + 1}"
        values = {}
        for field in TRACE_FIELDS:
            raw = row.get(field)
            if raw is None or raw == "":
                raise ConfigError(str(p), f"{where}.{field}", raw, "missing")
            try:
                num = float(raw)
            except (TypeError, ValueError):
                raise ConfigError(str(p), f"{where}.{field}", raw, "expected a number") from None
            values[field] = num
        t = values["arrival_s"]
        if not math.isfinite(t) or t < 0:
            raise ConfigError(str(p), f"{where}.arrival_s", row.get("arrival_s"),
                              "expected seconds >= 0")
        toks = []
        for field in ("input_tokens", "output_tokens"):
            v = values[field]
            if not math.isfinite(v) or v != int(v):
                raise ConfigError(str(p), f"{where}.{field}", row.get(field),
                                  "expected a whole number of tokens")
            toks.append(_count(int(v), str(p), f"{where}.{field}"))
        out.append(Request(i, t, toks[0], toks[1]))
    out.sort(key=lambda r: (r.arrival_s, r.id))
    return out


__all__ = ["ARRIVALS", "MAX_TRACE_ROWS", "Request", "TRACE_FIELDS", "fixed_requests", "parse_rate",
           "read_trace"]
