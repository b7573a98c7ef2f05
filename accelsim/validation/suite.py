"""Running the validation suite: every case of the case file through its registered function.

The case modules (``seed_cases_*.py``) register their functions with
:func:`accelsim.validation.seed_cases.case` when imported; this module imports them all, so
it is the one place that knows the full set (the framework module never imports them back).

Imports: analysis.checks, validation.* (seed_cases and the case modules).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from accelsim.analysis.checks import Check
from accelsim.validation import (  # noqa: F401  (importing registers the case functions)
    seed_cases_energy,
    seed_cases_features,
    seed_cases_links,
    seed_cases_machine,
    seed_cases_other,
    seed_cases_roofline,
    seed_cases_unmodelled,
)
from accelsim.validation.seed_cases import (
    CASE_TAGS,
    CASES,
    NOT_REPRODUCIBLE,
    TAGS,
    CaseContext,
    CaseResult,
    ModelMissing,
    case_index,
    case_labels,
)


def run_case(case_id: str, cases: Mapping[str, dict] | None = None) -> CaseResult:
    """Compute one case's checks. An exception in a model is reported, not raised."""
    record = (cases or case_index())[case_id]
    title, kind = record.get("title", ""), record.get("kind", "")
    if case_id in NOT_REPRODUCIBLE:
        return CaseResult(case_id, title, kind, (), {}, reason=NOT_REPRODUCIBLE[case_id])
    fn = CASES.get(case_id)
    if fn is None:
        return CaseResult(case_id, title, kind, (), {}, error="no case function")
    tag = CASE_TAGS[case_id]
    ctx = CaseContext(record, tag, labels=case_labels().get(case_id, {}))
    try:
        fn(ctx)
    except ModelMissing as exc:
        return CaseResult(case_id, title, kind, (), {}, reason=f"model missing: {exc}", tag=tag)
    except Exception as exc:  # a model failing is a failed case, shown with its message
        return CaseResult(case_id, title, kind, tuple(ctx.checks), dict(ctx.not_checked),
                          error=f"{type(exc).__name__}: {exc}", tag=tag)
    return CaseResult(case_id, title, kind, tuple(ctx.checks), dict(ctx.not_checked), tag=tag)


def run_suite(path: str | Path | None = None) -> list[CaseResult]:
    """Every case of the file, in file order."""
    cases = case_index(path)
    return [run_case(cid, cases) for cid in cases]


def tag_counts(results: list[CaseResult]) -> dict[str, dict[str, int]]:
    """Per tag (``model``, ``config``, ``law``): cases, checks, passed and failed checks."""
    out = {t: {"cases": 0, "checks": 0, "passed": 0, "failed": 0} for t in TAGS}
    for r in results:
        if not r.reproducible or r.tag not in out:  # e.g. an id no case function answers
            continue
        out[r.tag]["cases"] += 1
        for c in r.checks:
            row = out[c.tag]
            row["checks"] += 1
            row["passed" if c.passed else "failed"] += 1
    return out


def all_checks(results: list[CaseResult]) -> list[Check]:
    """The checks of all reproducible cases, flattened."""
    return [c for r in results for c in r.checks]
