"""Discrete-event replay of a layer's fold stream on SimPy resources.

Resources: one ``simpy.Resource`` per array (compute unit) and one for the DMA queue to
DRAM. Processes: the DMA engine walks its static queue (loads and drains, see
:mod:`accelsim.engine.schedule`), each array walks its folds. Stalls are not computed by a
formula: they are the time an array process spends waiting for a load or a free output slot.
Events are one per transfer and one per fold, never one per cycle.

``aggregate=True`` replays each periodic stretch of the stream once
(:mod:`accelsim.engine.aggregate`), so the event count follows the layer's structure, not its
size; the schedule is the same, event for event.

Imports: simpy, numpy, engine.schedule, engine.aggregate.
"""

from __future__ import annotations

import numpy as np
import simpy

from accelsim.engine.aggregate import replay_aggregated
from accelsim.engine.schedule import FoldSchedule, transfer_cycles


def schedule_event(load_bytes: np.ndarray, drain_bytes: np.ndarray, fold_cycles: int,
                   arrays: int, bytes_per_cycle: float, latency_cycles: int, *,
                   aggregate: bool = False, periods: tuple[int, ...] = ()) -> FoldSchedule:
    """The layer's fold schedule by discrete-event simulation (cycles).

    ``aggregate``: replay periodic stretches once (same schedule, far fewer events);
    ``periods``: fold periods the stream is known to have (hints, e.g. the folds of a row).
    """
    ld = transfer_cycles(load_bytes, bytes_per_cycle)
    dd = transfer_cycles(drain_bytes, bytes_per_cycle)
    args = (ld, dd, int(fold_cycles), int(arrays), int(latency_cycles))
    times = replay_aggregated(replay_cycles, *args, periods) if aggregate else replay_cycles(*args)
    return FoldSchedule(*times, fold_cycles=int(fold_cycles), arrays=int(arrays))


def replay_cycles(ld: np.ndarray, dd: np.ndarray, fold_cycles: int, arrays: int,
                  latency_cycles: int) -> tuple[np.ndarray, ...]:
    """SimPy replay over transfer durations in cycles: ``(ls, lr, cs, ce, ds, de)`` per fold."""
    nf = len(ld)
    n = int(arrays)
    slots = 2 * n
    lat = int(latency_cycles)
    p = int(fold_cycles)
    env = simpy.Environment()
    dma = simpy.Resource(env, capacity=1)
    units = [simpy.Resource(env, capacity=1) for _ in range(n)]
    loaded = [env.event() for _ in range(nf)]
    computed = [env.event() for _ in range(nf)]
    drained = [env.event() for _ in range(nf)]
    rec = {k: np.zeros(nf, np.int64) for k in ("ls", "lr", "cs", "ce", "ds", "de")}

    def arrive(f: int):
        yield env.timeout(lat)
        rec["lr"][f] = env.now
        loaded[f].succeed()

    def load(f: int):
        rec["ls"][f] = env.now
        if ld[f] == 0:
            rec["lr"][f] = env.now
            loaded[f].succeed()
            return
        with dma.request() as req:
            yield req
            rec["ls"][f] = env.now
            yield env.timeout(int(ld[f]))
        env.process(arrive(f))

    def drain(f: int):
        rec["ds"][f] = env.now
        if dd[f] > 0:
            with dma.request() as req:
                yield req
                rec["ds"][f] = env.now
                yield env.timeout(int(dd[f]))
        rec["de"][f] = env.now
        drained[f].succeed()

    def dma_engine():
        for f in range(min(slots, nf)):
            yield from load(f)
        for f in range(nf):
            yield computed[f]
            yield from drain(f)
            if f + slots < nf:
                yield from load(f + slots)

    def array(a: int):
        for f in range(a, nf, n):
            yield loaded[f]
            if f >= slots:
                yield drained[f - slots]
            with units[a].request() as req:
                yield req
                rec["cs"][f] = env.now
                yield env.timeout(p)
            rec["ce"][f] = env.now
            computed[f].succeed()

    env.process(dma_engine())
    for a in range(n):
        env.process(array(a))
    env.run()
    return tuple(rec[k] for k in ("ls", "lr", "cs", "ce", "ds", "de"))
