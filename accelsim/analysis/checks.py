"""Comparison rules of the validation suite: one :class:`Check` per expected quantity.

A check compares what an accelsim model computed (``got``) with the value the seed case
file gives (``expected``) at the case's relative tolerance:

* numbers: ``rel_err = |got - expected| / |expected|``, passes when ``rel_err <= tol``
  (``tol = 0`` means exact, up to 1e-9 of float round-off);
* ``printed=True``: the text prints a rounded value; the check also passes when ``got``
  rounded to the printed number of significant figures equals it (used only where the case
  file says the text rounds, e.g. "0.3" for 0.32);
* two-element lists ``[lo, hi]`` against a list: element by element (worst error reported);
  against a number with ``within=True``: ``lo <= got <= hi`` (bands of the text);
* strings: a computed label must equal the expected label exactly (case and surrounding
  blanks aside); where the text states the label inside prose ("compute (> 153)"), the
  validation suite compares with the label read from it once, in
  ``accelsim/data/seed_case_labels.json``. ``">100"`` and ``"<1"`` compare the computed
  number; ``"~200"`` (an approximate figure of the text) passes within a factor of 2.

Imports: stdlib.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

EPS = 1e-9
"""Float round-off allowed on top of every tolerance."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One compared quantity of one seed case."""

    case: str
    quantity: str
    expected: object
    got: object
    tolerance: float
    via: str
    rel_err: float | None
    passed: bool
    note: str = ""
    tag: str = ""
    """How the value was obtained: ``model``, ``config`` or ``law`` (see the validation suite)."""

    @property
    def id(self) -> str:
        """``CASE:quantity``."""
        return f"{self.case}:{self.quantity}"

    def as_dict(self) -> dict:
        """The JSON record of ``accelsim validate --json``."""
        return {"id": self.id, "expected": _jsonable(self.expected), "got": _jsonable(self.got),
                "rel_err": self.rel_err, "passed": self.passed, "tag": self.tag}


def _jsonable(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _sig_figs(text: str) -> int:
    digits = text.lstrip("-+").replace(".", "").lstrip("0")
    return max(1, len(digits.split("e")[0].split("E")[0]))


def _round_sig(x: float, figs: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, figs - 1 - int(math.floor(math.log10(abs(x)))))


def rel_error(expected: float, got: float) -> float:
    """``|got - expected| / |expected|`` (absolute error when ``expected == 0``)."""
    if math.isinf(expected) or math.isinf(got):
        return 0.0 if expected == got else math.inf
    if expected == 0:
        return abs(got)
    return abs(got - expected) / abs(expected)


def compare_number(expected: float, got: float, tol: float, printed: bool = False
                   ) -> tuple[float, bool]:
    """(relative error, passed) for two numbers."""
    err = rel_error(float(expected), float(got))
    ok = err <= tol + EPS
    if not ok and printed:
        ok = _round_sig(float(got), _sig_figs(repr(expected))) == float(expected)
    return err, ok


_CMP = re.compile(r"^\s*([<>~]=?)\s*([-+]?[\d.,]+(?:e[-+]?\d+)?)")


def compare(expected: object, got: object, tol: float, *, printed: bool = False,
            within: bool = False) -> tuple[float | None, bool]:
    """(relative error or None, passed) under the rules of this module."""
    if got is None:
        return None, False
    if isinstance(expected, bool) or isinstance(got, bool):
        return None, expected == got
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        return compare_number(expected, got, tol, printed)
    if isinstance(expected, (list, tuple)):
        if within and isinstance(got, (int, float)):
            lo, hi = float(expected[0]), float(expected[-1])
            if lo * (1 - tol) - EPS <= got <= hi * (1 + tol) + EPS:
                return 0.0, True
            edge = lo if got < lo else hi
            return rel_error(edge, float(got)), False
        if isinstance(got, (list, tuple)) and len(got) == len(expected):
            pairs = [compare(e, g, tol, printed=printed)
                     for e, g in zip(expected, got, strict=True)]
            errs = [e for e, _ in pairs if e is not None]
            return (max(errs) if errs else None), all(ok for _, ok in pairs)
        return None, False
    if isinstance(expected, str):
        m = _CMP.match(expected)
        if m and isinstance(got, (int, float)):
            op, bound = m.group(1), float(m.group(2).replace(",", ""))
            if op.startswith(">"):
                return None, got > bound
            if op.startswith("<"):
                return None, got < bound
            ratio = got / bound if bound else math.inf
            return rel_error(bound, got), 0.5 <= ratio <= 2.0
        if isinstance(got, str):
            return None, bool(got.strip()) and got.strip().lower() == expected.strip().lower()
    if isinstance(expected, dict) and isinstance(got, dict):
        return None, expected == got
    return None, False
