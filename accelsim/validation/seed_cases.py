"""The validation suite's framework: the seed chapter's worked cases as data, one function
per case calling a model, and a tag on every result.

``accelsim/data/seed_cases.json`` (a copy of ``shared/reference/seed_cases.json``) holds every
case's inputs, expected values and relative tolerance. Each reproducible case has exactly one
function (registered with :func:`case` in a ``seed_cases_*.py`` module) that feeds the case's
inputs to an accelsim model and records one :class:`~accelsim.analysis.checks.Check` per
expected quantity. Every check carries a tag saying what produced the value:

* ``model``: an accelsim model beyond the text's formula: the engine, a ``hw`` cost model,
  a device, the link engine, mapping-space enumeration, graph passes, energy pricing of
  counted actions;
* ``config``: a figure of a machine or energy config (a datasheet number), possibly put
  through a law;
* ``law``: a closed-form law (roofline, Amdahl, the iron law, op counting, unit conversion)
  applied to the case's own inputs.

Where the case file marks the text as wrong, the corrected value the file gives
(``*_correct``, ``*_exact``, "exact ...") is checked and the text's value is listed as not
checked, with the reason. A label stated inside prose ("compute (> 153)") is compared exactly
with the label read from it once, in ``accelsim/data/seed_case_labels.json``.

Cases that no model can reproduce (published measurements, prices, trends, qualitative
prose) are listed in :data:`NOT_REPRODUCIBLE` with the reason; they are reported, never
silently dropped. Running the suite is :mod:`accelsim.validation.suite`.

Imports: errors, limits, analysis.checks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from accelsim.analysis.checks import Check, compare

DATA_DIR = resources.files("accelsim") / "data"
"""``accelsim/data``, read through :mod:`importlib.resources` (a checkout, an installed wheel or
a zip alike; through ``accelsim``: a folder without ``__init__.py`` is a namespace package,
which ``importlib.resources`` cannot open inside a zip)."""

DATA_FILE = DATA_DIR / "seed_cases.json"
"""The packaged copy of the seed case file."""

LABELS_FILE = DATA_DIR / "seed_case_labels.json"
"""Case id -> quantity -> the label a prose expected value states."""

TAGS = ("model", "config", "law")
"""What produced a checked value (see the module docstring)."""

DEFAULT_TOLERANCE = 0.01
"""Relative tolerance for numeric checks of cases whose file tolerance is ``null`` (bands)."""


def load_cases(path: str | Path | None = None) -> list[dict]:
    """The seed cases, in file order (default: the packaged :data:`DATA_FILE`).

    A file that cannot be read, is not JSON, is not a non-empty list of case objects (each
    with an ``id``), or repeats an id raises :class:`~accelsim.errors.ConfigError` naming it.
    """
    from accelsim.errors import ConfigError
    from accelsim.limits import check_file_size

    source = Path(path) if path else DATA_FILE
    file = str(source)
    check_file_size(file)  # the packaged file inside a zip has no size on disk: passes
    try:
        text = source.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(file, None, None, f"cannot read case file ({reason})") from None
    try:
        cases = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(file, None, None, f"not valid JSON ({exc.msg} at line {exc.lineno}, "
                          f"column {exc.colno})") from None
    except RecursionError:
        raise ConfigError(file, None, None, "JSON nested too deeply") from None
    if not isinstance(cases, list):
        raise ConfigError(file, "<top level>", type(cases).__name__,
                          "must be a JSON list of case objects")
    if not cases:
        raise ConfigError(file, "<top level>", "[]", "holds no cases (an empty list)")
    seen: set[str] = set()
    for n, rec in enumerate(cases):
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
            raise ConfigError(file, f"[{n}]", rec, "must be a case object with a string 'id'")
        if rec["id"] in seen:
            raise ConfigError(file, f"[{n}].id", rec["id"], "repeats an earlier case id")
        seen.add(rec["id"])
    return cases


def case_index(path: str | Path | None = None) -> dict[str, dict]:
    """Seed cases by id."""
    return {c["id"]: c for c in load_cases(path)}


def case_labels() -> dict[str, dict[str, str]]:
    """The labels read from prose expected values (:data:`LABELS_FILE`), by case and quantity."""
    data = json.loads(LABELS_FILE.read_text())
    return {cid: q for cid, q in data.items() if not cid.startswith("_")}


@dataclass
class CaseContext:
    """What a case function sees: the case record, its tag, and the checks it makes."""

    case: dict
    tag: str = "model"
    checks: list[Check] = field(default_factory=list)
    not_checked: dict[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Case id."""
        return self.case["id"]

    @property
    def inputs(self) -> dict:
        """The case's inputs."""
        return self.case.get("inputs", {})

    @property
    def expected(self) -> dict:
        """The case's expected quantities."""
        return self.case["expected"]

    @property
    def tolerance(self) -> float:
        """The case's relative tolerance (:data:`DEFAULT_TOLERANCE` when the file gives none)."""
        tol = self.case.get("tolerance_rel")
        return DEFAULT_TOLERANCE if tol is None else float(tol)

    def check(self, quantity: str, got: Any, *, via: str, expected: Any = None,
              printed: bool = False, within: bool = False, note: str = "",
              tag: str | None = None) -> None:
        """Compare ``got`` with the file's value of ``quantity`` (or a corrected ``expected``);
        ``tag`` overrides the case's tag for this value."""
        if expected is None:
            expected = self.expected[quantity]
        if isinstance(got, float) and math.isnan(got):
            got = None
        target = expected
        if isinstance(expected, str) and quantity in self.labels:
            target = self.labels[quantity]
            note = "; ".join(filter(None, (note, f"the text's label read as '{target}'")))
        err, ok = compare(target, got, self.tolerance, printed=printed, within=within)
        self.checks.append(Check(case=self.id, quantity=quantity, expected=expected, got=got,
                                 tolerance=self.tolerance, via=via, rel_err=err, passed=ok,
                                 note=note, tag=tag or self.tag))

    def skip(self, quantity: str, reason: str) -> None:
        """Record an expected quantity that is deliberately not checked, with the reason."""
        self.not_checked[quantity] = reason


class ModelMissing(Exception):
    """Raised by a case whose model (a config, a module) is not part of this checkout."""


CaseFn = Callable[[CaseContext], None]
CASES: dict[str, CaseFn] = {}
"""Case id -> function computing its checks."""

CASE_TAGS: dict[str, str] = {}
"""Case id -> the tag of its checks (``model``, ``config`` or ``law``)."""

NOT_REPRODUCIBLE: dict[str, str] = {}
"""Case id -> why no accelsim model reproduces it."""


def case(case_id: str, *, tag: str) -> Callable[[CaseFn], CaseFn]:
    """Register the one function of a case, with the tag of its values (:data:`TAGS`)."""
    if tag not in TAGS:
        raise ValueError(f"seed case {case_id}: tag {tag!r} is not one of {TAGS}")

    def deco(fn: CaseFn) -> CaseFn:
        if case_id in CASES:
            raise ValueError(f"seed case {case_id} registered twice")
        CASES[case_id] = fn
        CASE_TAGS[case_id] = tag
        return fn
    return deco


def not_reproducible(case_id: str, reason: str) -> None:
    """Record a case that no model reproduces."""
    NOT_REPRODUCIBLE[case_id] = reason


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The checks of one case (empty and with ``reason`` when it is not reproducible)."""

    id: str
    title: str
    kind: str
    checks: tuple[Check, ...]
    not_checked: Mapping[str, str]
    reason: str = ""
    error: str = ""
    tag: str = ""

    @property
    def reproducible(self) -> bool:
        """True when a model computes the case."""
        return not self.reason

    @property
    def passed(self) -> bool:
        """Every check passed (and there was at least one, and no error)."""
        return self.reproducible and not self.error and bool(self.checks) and \
            all(c.passed for c in self.checks)
