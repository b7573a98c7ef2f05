"""Enumerating a sweep's design points: the grid (filtered by the constraints, within a time
budget) or random / Latin-hypercube samples. Sizes are checked before anything is expanded
(:data:`~accelsim.limits.MAX_SWEEP_POINTS`).

Imports: errors, limits, sweep.space (types only).
"""

from __future__ import annotations

import itertools
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from accelsim.errors import ConfigError
from accelsim.limits import MAX_CONSTRAINT_EVAL_S, MAX_SWEEP_POINTS, check_count

if TYPE_CHECKING:
    from accelsim.sweep.space import SweepSpec


def grid_points(spec: SweepSpec) -> list[dict[str, Any]]:
    sizes = [len(p.values or ()) for p in spec.parameters]
    total = math.prod(sizes)
    check_count(total, MAX_SWEEP_POINTS, file=spec.file, field="parameters", what="grid points",
                hint="use random or lhs sampling")
    names = spec.names
    out = []
    deadline = time.monotonic() + MAX_CONSTRAINT_EVAL_S
    for i, combo in enumerate(itertools.product(*(p.values for p in spec.parameters))):
        point = dict(zip(names, combo))
        if spec.satisfies(point):
            out.append(point)
        if i % 4096 == 4095 and time.monotonic() > deadline:
            raise ConfigError(spec.file, "constraints", f"{total:,} grid points",
                              f"evaluating the constraints took more than "
                              f"{MAX_CONSTRAINT_EVAL_S} s; use fewer points or sampling")
    return out


def sampled_points(spec: SweepSpec) -> list[dict[str, Any]]:
    """Random or Latin-hypercube points that satisfy the constraints, without duplicates.

    Rejected and duplicate draws are replaced by further draws (for LHS: further whole
    hypercubes of ``samples`` points), up to 100 rounds.
    """
    rng = np.random.default_rng(spec.seed)
    n, d = int(spec.samples or 0), len(spec.parameters)
    seen: set[tuple] = set()
    out: list[dict[str, Any]] = []
    for _ in range(100):
        if spec.method == "lhs":
            u = (np.argsort(rng.random((d, n)), axis=1).T + rng.random((n, d))) / n
        else:
            u = rng.random((n, d))
        for row in u:
            point = {p.path: p.from_unit(float(x)) for p, x in zip(spec.parameters, row)}
            key = tuple(point.values())
            if key in seen or not spec.satisfies(point):
                continue
            seen.add(key)
            out.append(point)
            if len(out) == n:
                return out
    if out:
        raise ConfigError(spec.file, "sampling.samples", n,
                          f"only {len(out)} distinct points satisfy the constraints; ask for fewer")
    return out
