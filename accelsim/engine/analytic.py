"""The fast path: the fold-stream schedule as a numba max-plus recurrence.

It computes exactly what :mod:`accelsim.engine.replay` computes by discrete events (a test
holds them equal over random layers, arrays, dataflows and bandwidths), without SimPy, so
sweeps can evaluate thousands of design points per second.

Imports: numpy, numba, engine.schedule.
"""

from __future__ import annotations

import numba
import numpy as np

from accelsim.engine.schedule import FoldSchedule, transfer_cycles


@numba.njit(cache=True)
def _recurrence(load_dur, drain_dur, p, n, lat):
    nf = load_dur.shape[0]
    slots = 2 * n
    ls = np.zeros(nf, np.int64)
    lr = np.zeros(nf, np.int64)
    cs = np.zeros(nf, np.int64)
    ce = np.zeros(nf, np.int64)
    ds = np.zeros(nf, np.int64)
    de = np.zeros(nf, np.int64)
    t = 0  # the DMA queue's clock: entries are served in order, one at a time
    for f in range(min(slots, nf)):
        ls[f] = t
        if load_dur[f] > 0:
            t += load_dur[f]
            lr[f] = t + lat
        else:
            lr[f] = t
    for f in range(nf):
        start = lr[f]
        if f >= n and ce[f - n] > start:
            start = ce[f - n]
        if f >= slots and de[f - slots] > start:
            start = de[f - slots]
        cs[f] = start
        ce[f] = start + p
        # drain of fold f (waits for the fold to finish, then for its turn in the queue)
        if ce[f] > t:
            t = ce[f]
        ds[f] = t
        t += drain_dur[f]
        de[f] = t
        # load of fold f + slots into the slot that fold f has freed
        g = f + slots
        if g < nf:
            ls[g] = t
            if load_dur[g] > 0:
                t += load_dur[g]
                lr[g] = t + lat
            else:
                lr[g] = t
    return ls, lr, cs, ce, ds, de


def schedule_analytic(load_bytes: np.ndarray, drain_bytes: np.ndarray, fold_cycles: int,
                      arrays: int, bytes_per_cycle: float, latency_cycles: int) -> FoldSchedule:
    """The layer's fold schedule by recurrence (cycles)."""
    ld = transfer_cycles(load_bytes, bytes_per_cycle)
    dd = transfer_cycles(drain_bytes, bytes_per_cycle)
    arrays_out = _recurrence(ld, dd, int(fold_cycles), int(arrays), int(latency_cycles))
    return FoldSchedule(*arrays_out, fold_cycles=int(fold_cycles), arrays=int(arrays))
