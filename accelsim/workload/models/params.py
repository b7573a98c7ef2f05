"""Checked keyword parameters of a model builder (zoo entries, Hugging Face configs): the one
place a model's ``name:key=value`` parameters are validated.

Imports: errors, limits, precision, workload.graph.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any

from accelsim.errors import WorkloadError
from accelsim.limits import MAX_DIM, check_number
from accelsim.precision import PRECISION_BYTES
from accelsim.workload.graph import ModelGraph


def build_checked(fn: Callable[..., ModelGraph], params: dict[str, Any], *, file: str,
                  field_prefix: str = "", label: str = "") -> ModelGraph:
    """``fn(**params)`` after checking ``params`` against ``fn``'s keyword parameters: a name it
    does not take, a non-positive or non-integer value where the default is an integer (or
    None), an unknown ``dtype``, or the builder's own ValueError is a one-line
    :class:`WorkloadError` naming ``file`` and ``field_prefix + key``."""
    known = {p.name: p.default for p in inspect.signature(fn).parameters.values()}
    for key, value in params.items():
        if key not in known:
            near = difflib.get_close_matches(key, list(known), n=1)
            hint = f"did you mean '{near[0]}'?" if near else f"parameters: {', '.join(known)}"
            raise WorkloadError(file, f"{field_prefix}{key}", value, f"unknown parameter ({hint})")
        default = known[key]
        if (default is None or isinstance(default, int)) and not isinstance(default, bool) \
                and value is not None:
            check_number(value, file=file, field=f"{field_prefix}{key}", integer=True,
                         positive=True, maximum=MAX_DIM, error=WorkloadError)
    dtype = params.get("dtype")
    if dtype is not None and dtype not in PRECISION_BYTES:
        raise WorkloadError(file, f"{field_prefix}dtype", dtype,
                            f"unknown precision (known: {', '.join(PRECISION_BYTES)})")
    try:
        return fn(**params)
    except (TypeError, ValueError) as exc:
        raise WorkloadError(file, label or None, params, str(exc)) from None


__all__ = ["build_checked"]
