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
from accelsim.workload.graph import ModelGraph, ParamError


def build_checked(fn: Callable[..., ModelGraph], params: dict[str, Any], *, file: str,
                  field_prefix: str = "", label: str = "") -> ModelGraph:
    """``fn(**params)`` after checking ``params`` against ``fn``'s keyword parameters: a name it
    does not take, a non-positive or non-integer value where the default is an integer (or
    None), an unknown ``dtype``, or the builder's own ValueError is a one-line
    :class:`WorkloadError` naming ``file`` and ``field_prefix + key`` (a
    :class:`~accelsim.workload.graph.ParamError` names its parameter and value).

    Every parameter must be a keyword the builder takes; integers may be numpy integers."""
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
    if dtype is not None and (not isinstance(dtype, str) or dtype not in PRECISION_BYTES):
        raise WorkloadError(file, f"{field_prefix}dtype", dtype,
                            f"unknown precision (known: {', '.join(PRECISION_BYTES)})")
    params = {k: (int(v) if k in known and _is_integer_param(known[k], v) else v)
              for k, v in params.items()}
    try:
        return fn(**params)
    except ParamError as exc:
        raise WorkloadError(file, f"{field_prefix}{exc.field}", exc.value, exc.reason) from None
    except (TypeError, ValueError) as exc:
        key, eq, rest = str(exc).partition("=")
        if eq and key in params:  # "context=9000 exceeds ...": the builder names its parameter
            raise WorkloadError(file, f"{field_prefix}{key}", params[key],
                                rest.partition(" ")[2] or str(exc)) from None
        raise WorkloadError(file, label or None, params, str(exc)) from None


def _is_integer_param(default: Any, value: Any) -> bool:
    """Whether a checked integer parameter (default int or None) holds a number to pass as
    ``int`` (a numpy integer, or a whole float checked above)."""
    return (default is None or isinstance(default, int)) and not isinstance(default, bool) \
        and value is not None and not isinstance(value, (bool, str))


__all__ = ["ParamError", "build_checked"]
