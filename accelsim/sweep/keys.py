"""Stable keys of design points: canonical JSON and its SHA-256 (see
:meth:`accelsim.sweep.evaluate.SweepContext.point_ids` for what a point's key covers).

Imports: nothing of accelsim (json, hashlib).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any


def stable_hash(obj: Any, n: int = 16) -> str:
    """The first ``n`` hex digits of SHA-256 over canonical JSON of ``obj``."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:n]


def canonical_json(obj: Any) -> str:
    """Canonical JSON of ``obj``: sorted keys, no spaces, integral floats as integers."""
    return json.dumps(canon(obj), sort_keys=True, separators=(",", ":"), default=repr)


PLACEHOLDER = "\x00params\x00"
"""Stands for a point's parameters in the JSON template of its key document."""


def params_json(point: Mapping[str, Any], strings: dict[str, str]) -> str:
    """``canonical_json(dict(point))``, faster for the usual flat points of plain numbers and
    strings (each value encoded as ``json`` would encode it; anything else through it).
    ``strings`` memoises the JSON of keys and string values across points."""
    parts = []
    for key in sorted(point, key=str):
        v = point[key]
        t = type(v)
        if t is float and math.isfinite(v):
            enc = repr(int(v)) if v.is_integer() else repr(v)
        elif t is int:
            enc = repr(v)
        elif t is str:
            enc = strings.get(v) or strings.setdefault(v, json.dumps(v))
        else:
            return canonical_json(dict(point))
        k = str(key)
        parts.append((strings.get(k) or strings.setdefault(k, json.dumps(k))) + ":" + enc)
    return "{" + ",".join(parts) + "}"


def canon(v: Any) -> Any:
    """``v`` with integral finite floats as ints and mappings/sequences canonicalised."""
    if isinstance(v, float) and v.is_integer() and math.isfinite(v):
        return int(v)
    if isinstance(v, Mapping):
        return {str(k): canon(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    return v


def workload_identity(workload: Any) -> str:
    """A hash of a workload's name and operators (frozen dataclasses with stable reprs)."""
    return stable_hash({"name": workload.name, "ops": [repr(op) for op in workload.ops]})
