"""Amdahl's law for accelerated models: end-to-end speed-up when only a fraction is faster.

``S = 1 / ((1 - p) + p / G)`` where ``p`` is the fraction of the *baseline* time that the
accelerator touches and ``G`` its speed-up on that fraction; ``S -> 1 / (1 - p)`` as
``G -> inf``. Time-based form: with per-phase baseline and accelerated times the speed-up is
the ratio of total times.

The one implementation: ``accelsim.api.links.amdahl`` and the seed cases call it.

Imports: pandas, errors, limits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from accelsim.errors import ConfigError
from accelsim.limits import check_number


def amdahl_speedup(p: float, g: float) -> float:
    """End-to-end speed-up for accelerated fraction ``p`` (0-1) sped up ``g`` times (``inf`` ok)."""
    p = float(check_number(p, file=None, field="accelerated_fraction"))
    g = float(check_number(g, file=None, field="path_speedup", allow_inf=True))
    if not 0.0 <= p <= 1.0:
        raise ConfigError(None, "accelerated_fraction", p, "must be within [0, 1]")
    if not g > 0:
        raise ConfigError(None, "path_speedup", g, "must be > 0")
    serial = 1.0 - p
    accelerated = 0.0 if math.isinf(g) else p / g
    if not math.isfinite(accelerated):
        raise ConfigError(None, "path_speedup", g, "too small (the accelerated time overflows)")
    if serial + accelerated == 0.0:
        return math.inf
    return 1.0 / (serial + accelerated)


def amdahl_limit(p: float) -> float:
    """The ceiling ``1 / (1 - p)`` reached with an infinitely fast accelerator."""
    return amdahl_speedup(p, math.inf)


def path_speedup(accelerated_rate: float, baseline_rate: float) -> float:
    """Speed-up ``G`` of the accelerated path: ratio of its rate to the baseline's."""
    return accelerated_rate / baseline_rate


def fixed_serial_scaling(serial_fraction: float, devices: float = math.inf) -> float:
    """Speed-up on ``devices`` when ``serial_fraction`` of the work never parallelises."""
    return amdahl_speedup(1.0 - serial_fraction, devices)


def phase_speedup(baseline_s: Mapping[str, float], accelerated_s: Mapping[str, float]) -> float:
    """Speed-up from per-phase times (seconds): phases absent from ``accelerated_s`` keep their
    baseline time (the unaccelerated, serial part)."""
    before = sum(baseline_s.values())
    after = sum(accelerated_s.get(k, v) for k, v in baseline_s.items())
    return before / after


def amdahl_table(p: float, speedups: list[float]) -> pd.DataFrame:
    """``g, speedup, fraction_of_limit`` for each path speed-up ``g`` (a budget table)."""
    limit = amdahl_limit(p)
    return pd.DataFrame([{"p": p, "g": g, "speedup": amdahl_speedup(p, g),
                          "fraction_of_limit": amdahl_speedup(p, g) / limit} for g in speedups])
