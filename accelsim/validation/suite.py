"""Running the validation suite: every case of the case file through its registered function.

The case modules (``seed_cases_*.py``) register their functions with
:func:`accelsim.validation.seed_cases.case` when imported; this module imports them all, so
it is the one place that knows the full set (the framework module never imports them back).

Imports: validation.seed_cases and the case modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from accelsim.analysis.checks import Check
from accelsim.validation import (  # noqa: F401  (importing registers the case functions)
    seed_cases_amdahl,
    seed_cases_features,
    seed_cases_machine,
    seed_cases_other,
    seed_cases_roofline,
)
from accelsim.validation.seed_cases import (
    CASES,
    NOT_REPRODUCIBLE,
    CaseContext,
    CaseResult,
    ModelMissing,
    case_index,
)


def run_case(case_id: str, providers: Mapping[str, Callable] | None = None,
             cases: Mapping[str, dict] | None = None) -> CaseResult:
    """Compute one case's checks. An exception in a model is reported, not raised."""
    record = (cases or case_index())[case_id]
    title, kind = record.get("title", ""), record.get("kind", "")
    if case_id in NOT_REPRODUCIBLE:
        return CaseResult(case_id, title, kind, (), {}, reason=NOT_REPRODUCIBLE[case_id])
    fn = CASES.get(case_id)
    if fn is None:
        return CaseResult(case_id, title, kind, (), {}, error="no case function")
    ctx = CaseContext(record, providers or {})
    try:
        fn(ctx)
    except ModelMissing as exc:
        return CaseResult(case_id, title, kind, (), {}, reason=f"model missing: {exc}")
    except Exception as exc:  # a model failing is a failed case, shown with its message
        return CaseResult(case_id, title, kind, tuple(ctx.checks), dict(ctx.not_checked),
                          error=f"{type(exc).__name__}: {exc}")
    return CaseResult(case_id, title, kind, tuple(ctx.checks), dict(ctx.not_checked))


def run_suite(providers: Mapping[str, Callable] | None = None,
              path: str | Path | None = None) -> list[CaseResult]:
    """Every case of the file, in file order."""
    cases = case_index(path)
    return [run_case(cid, providers, cases) for cid in cases]


def all_checks(results: list[CaseResult]) -> list[Check]:
    """The checks of all reproducible cases, flattened."""
    return [c for r in results for c in r.checks]
