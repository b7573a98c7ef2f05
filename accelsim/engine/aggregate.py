"""Replay runs of identical folds once: an event replay whose size follows the structure of
the fold stream, not the size of the layer.

A layer's fold stream is periodic in long stretches: the same load and drain pattern of
``L`` folds repeats (a row of column folds, a block of row folds, the whole stream once
per repeat). The pipeline of :mod:`accelsim.engine.schedule` is shift-invariant: what
happens from fold ``b`` on is a function of the *state* at ``b`` -- the DMA queue's clock,
the load-ready times of the ``2n`` folds already loaded, the compute ends of the last ``n``
folds and the drain ends of the last ``2n`` -- and of the inputs from ``b`` on. So once the
state after a period equals the state before it shifted by a constant ``delta`` cycles, every
further period of the stretch repeats it ``delta`` later, and a replay may skip them.

:func:`replay_aggregated` does exactly that, around any replay ``fn(load, drain, P, n,
latency) -> (ls, lr, cs, ce, ds, de)`` over transfer cycles (the SimPy replay or the
recurrence): it finds periodic stretches, replays the stream with the middle of each stretch
cut out (a head long enough for the pipeline to settle, a tail long enough for the look-ahead
loads), checks on the replayed times that the state is periodic at every cut, and writes the
skipped folds back as shifted copies. A cut whose check fails keeps a longer head (doubling)
until it passes or the stretch is too short to cut, so the result is always the full replay's,
event for event (a test holds them equal). Events replayed: a few hundred per stretch.

Imports: numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

MIN_FOLDS = 512
"""Streams shorter than this are replayed whole (no gain from cutting)."""

MAX_PERIOD = 64
"""Periods tried besides the hints: 1 .. MAX_PERIOD folds."""

Replay = Callable[[np.ndarray, np.ndarray, int, int, int], tuple]


@dataclass(frozen=True, slots=True)
class Stretch:
    """Folds ``[start, start + period * reps)`` repeat the pattern of their first ``period``."""

    start: int
    period: int
    reps: int

    @property
    def end(self) -> int:
        """One past the stretch's last fold."""
        return self.start + self.period * self.reps


def _unit(period: int, n: int) -> int:
    """Folds a cut removes a multiple of: the state may repeat every period, every ``n`` folds
    (one fold per array) or every ``2n`` (one per buffer slot), so twice their lcm."""
    return 2 * math.lcm(period, 2 * n)


def _cycles(period: int, n: int) -> list[int]:
    """Candidate state periods (folds), shortest first: the multiples of ``period`` that
    divide the cut unit."""
    u = _unit(period, n)
    return [c for c in range(period, u + 1, period) if u % c == 0]


def _head(period: int, n: int, tries: int) -> int:
    """Folds kept before a cut: ``2n`` of look-ahead, pipeline settling, then one unit."""
    settle = (4 * n + 2 * period) << tries
    return -(-settle // period) * period + _unit(period, n)


def _tail(period: int, n: int) -> int:
    """Folds kept after a cut: the look-ahead loads must stay inside the stretch."""
    return -(-2 * n // period) * period + period


def _worth(s: Stretch, n: int) -> bool:
    return s.period * s.reps >= _head(s.period, n, 0) + _tail(s.period, n) + 4 * _unit(s.period, n)


def periodic_stretches(load: np.ndarray, drain: np.ndarray, n: int,
                       periods: Iterable[int]) -> list[Stretch]:
    """Non-overlapping stretches of the (load, drain) stream that repeat with one of
    ``periods`` (folds) and are long enough to cut, in stream order."""
    nf = len(load)
    cands: list[Stretch] = []
    for p in sorted({p for p in periods if 0 < p <= nf // 8}):
        eq = (load[p:] == load[:-p]) & (drain[p:] == drain[:-p])
        edges = np.flatnonzero(np.diff(np.concatenate(([0], eq.view(np.int8), [0]))))
        for s, e in zip(edges[::2], edges[1::2], strict=True):
            st = Stretch(int(s), p, int((e - s + p) // p))
            if _worth(st, n):
                cands.append(st)
    cands.sort(key=lambda s: (-(s.end - s.start), s.period))
    taken: list[tuple[int, int]] = []
    out: list[Stretch] = []
    for c in cands:
        lo, hi = c.start, c.end
        for a, b in taken:  # trim to the largest free part (periodicity holds on any part)
            if a < hi and lo < b:
                left, right = (lo, a), (b, hi)
                lo, hi = max((left, right), key=lambda r: r[1] - r[0])
        if hi <= lo:
            continue
        first = lo + (-(lo - c.start)) % c.period
        st = Stretch(first, c.period, (hi - first) // c.period)
        if st.reps > 0 and _worth(st, n):
            taken.append((st.start, st.end))
            out.append(st)
    return sorted(out, key=lambda s: s.start)


def _shift_of(sched: tuple, load: np.ndarray, b: int, period: int, n: int) -> int | None:
    """``delta`` if the pipeline state at fold ``b + period`` is that at ``b`` shifted by it."""
    ls, lr, cs, ce, ds, de = sched
    g = b - 1 + 2 * n  # the last load issued before fold b: the DMA clock is its end
    delta = int(ls[g + period] + load[g + period] - ls[g] - load[g])
    past = slice(b - 2 * n, b)
    later = slice(b - 2 * n + period, b + period)
    ahead = slice(b, b + 2 * n)
    ahead_later = slice(b + period, b + 2 * n + period)
    for a in (cs, ce, ds, de):
        if not np.all(a[later] - a[past] == delta):
            return None
    for a in (ls, lr):
        if not np.all(a[ahead_later] - a[ahead] == delta):
            return None
    return delta


def replay_aggregated(fn: Replay, load: np.ndarray, drain: np.ndarray, fold_cycles: int,
                      arrays: int, latency: int, hints: Iterable[int] = ()) -> tuple:
    """``fn(load, drain, fold_cycles, arrays, latency)`` (cycles) with periodic stretches
    replayed once and the rest copied; equal to ``fn`` on the whole stream.

    Levels nest: stretches of each long hinted period (e.g. a block of row folds, the whole
    stream of one repeat) are cut first, and what is left is cut again by short periods
    (1 .. :data:`MAX_PERIOD` folds).
    """
    levels = [(h,) for h in sorted({int(h) for h in hints if h > MAX_PERIOD}, reverse=True)]
    levels.append(tuple(range(1, MAX_PERIOD + 1)))
    f = fn
    for periods in reversed(levels):
        f = _level(f, periods)
    return f(load, drain, int(fold_cycles), int(arrays), int(latency))


def _level(fn: Replay, periods: tuple[int, ...]) -> Replay:
    """``fn`` with the stretches of ``periods`` cut out and copied back."""

    def run(load, drain, fold_cycles, n, latency):
        return _cut_and_copy(fn, load, drain, fold_cycles, n, latency, periods)

    return run


def _cut_and_copy(fn: Replay, load: np.ndarray, drain: np.ndarray, fold_cycles: int, n: int,
                  latency: int, periods: tuple[int, ...]) -> tuple:
    nf = len(load)
    stretches = periodic_stretches(load, drain, n, periods) if nf >= MIN_FOLDS else []
    tries = [0] * len(stretches)
    while True:
        keep = np.ones(nf, bool)
        cuts = []  # (index in stretches, cut position in the full stream, folds removed)
        for i, s in enumerate(stretches):
            head, tail = _head(s.period, n, tries[i]), _tail(s.period, n)
            unit = _unit(s.period, n)
            removed = (s.period * s.reps - head - tail) // unit * unit
            cut = s.start + head
            if removed <= 0 or cut - unit < 2 * n:
                continue
            keep[cut:cut + removed] = False
            cuts.append((i, cut, removed))
        if not cuts:
            return fn(load, drain, fold_cycles, n, latency)
        kept_load = load[keep]
        sched = fn(kept_load, drain[keep], fold_cycles, n, latency)
        failed, shifts, gone = [], [], 0
        for i, cut, removed in cuts:
            at = cut - gone  # the cut's position in the replayed (shortened) stream
            found = None
            for c in _cycles(stretches[i].period, n):
                d = _shift_of(sched, kept_load, at - c, c, n)
                if d is not None:
                    found = (c, d)
                    break
            if found is None:
                failed.append(i)
            shifts.append((at, removed, *(found or (0, 0))))
            gone += removed
        if not failed:
            return _expand(sched, shifts)
        for i in failed:
            tries[i] += 1


def _expand(sched: tuple, shifts: list[tuple[int, int, int, int]]) -> tuple:
    """Write the skipped folds back: each cut ``(at, removed, period, delta)`` inserts
    ``removed / period`` copies of the period before ``at``, each ``delta`` later."""
    out = []
    for a in sched:
        parts, pos, offset = [], 0, 0
        for at, removed, period, delta in shifts:
            parts.append(a[pos:at] + offset)
            k = removed // period
            steps = np.arange(1, k + 1, dtype=np.int64)[:, None] * delta
            parts.append((a[at - period:at][None, :] + steps).ravel() + offset)
            offset += k * delta
            pos = at
        parts.append(a[pos:] + offset)
        out.append(np.concatenate(parts))
    return tuple(out)
