"""Host and GPU on one clock: a host process issues calls into a CUDA stream, the GPU runs them.

Each :class:`StreamCall` costs the host ``host_s`` to dispatch and, if it launches work, the
GPU ``gpu_s`` (its kernels back to back, launch gaps included). Two processes share one SimPy
clock (:func:`replay_event`):

* the **host** dispatches the calls in order; a call's kernels enter the stream when its
  dispatch ends (``submit="per_call"``: eager PyTorch, a compiler's wrapper), or all of the
  step's kernels enter it at once after one graph launch (``submit="graph"``: CUDA graphs);
  after the last call the host synchronises: it waits for the GPU, then pays ``sync_s``;
* the **GPU** takes kernels from the stream in order and runs each to completion; whenever the
  stream is empty it idles: the gaps where the host is the bottleneck emerge.

:func:`replay_closed_form` is the recurrence the two processes obey
(``start_i = max(issue_i, end_{i-1})``); nothing else contends, so the two give the same
numbers (a test holds them equal). Units: seconds.

Imports: simpy, numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import simpy

SUBMITS = ("per_call", "graph")


@dataclass(frozen=True, slots=True)
class StreamCall:
    """One framework call: host dispatch time and GPU time of its kernels (0: none)."""

    host_s: float
    gpu_s: float


@dataclass(frozen=True)
class StreamTimeline:
    """When each call was dispatched and when its kernels ran. Arrays indexed by call;
    ``gpu_start``/``gpu_end`` are NaN for host-only calls."""

    host_start: np.ndarray
    host_end: np.ndarray
    gpu_start: np.ndarray
    gpu_end: np.ndarray
    time_s: float
    """Step time: from the first dispatch to the end of the final synchronise."""
    host_busy_s: float
    gpu_busy_s: float
    sync_wait_s: float
    """Time the host spent waiting for the GPU at the final synchronise."""

    @property
    def gpu_idle_s(self) -> float:
        """Time in the step the GPU ran nothing (waiting for the host, or for the sync)."""
        return self.time_s - self.gpu_busy_s


def hide_dependent_launches(gpu_s: Sequence[float], first_pdl: Sequence[bool],
                            last_pdl: Sequence[bool], tail_s: float) -> list[float]:
    """GPU times with programmatic dependent launch applied: a call whose first kernel can
    launch early starts while the previous call's last kernel (also PDL-capable) retires,
    hiding that kernel's completion ``tail_s``. Calls with no kernels (0 s) are skipped."""
    out = list(gpu_s)
    prev_last = False
    for i, t in enumerate(gpu_s):
        if t <= 0:
            continue
        if prev_last and first_pdl[i]:
            out[i] = max(0.0, t - tail_s)
        prev_last = last_pdl[i]
    return out


def _check(calls: Sequence[StreamCall], submit: str) -> None:
    if submit not in SUBMITS:
        raise ValueError(f"submit must be one of {', '.join(SUBMITS)}, not {submit!r}")
    for c in calls:
        if not (c.host_s >= 0 and c.gpu_s >= 0):
            raise ValueError(f"call costs must be >= 0, got {c}")


def replay_closed_form(calls: Sequence[StreamCall], *, submit: str = "per_call",
                       graph_launch_s: float = 0.0, sync_s: float = 0.0) -> StreamTimeline:
    """The host/stream recurrence without an event loop (equal to :func:`replay_event`)."""
    _check(calls, submit)
    n = len(calls)
    hs, he = np.zeros(n), np.zeros(n)
    gs, ge = np.full(n, np.nan), np.full(n, np.nan)
    host = graph_launch_s if submit == "graph" else 0.0
    gpu_free = 0.0
    for i, c in enumerate(calls):
        if submit == "graph":
            hs[i] = he[i] = host
            issue = host
        else:
            hs[i] = host
            host = host + c.host_s
            he[i] = issue = host
        if c.gpu_s > 0:
            start = max(issue, gpu_free)
            gpu_free = start + c.gpu_s
            gs[i], ge[i] = start, gpu_free
    done = max(host, gpu_free)
    return StreamTimeline(hs, he, gs, ge, done + sync_s, float(np.sum(he - hs)),
                          float(np.nansum(ge - gs)), done - host)


def replay_event(calls: Sequence[StreamCall], *, submit: str = "per_call",
                 graph_launch_s: float = 0.0, sync_s: float = 0.0) -> StreamTimeline:
    """Replay the step on SimPy: a host process, a stream (FIFO store) and a GPU process."""
    _check(calls, submit)
    n = len(calls)
    hs, he = np.zeros(n), np.zeros(n)
    gs, ge = np.full(n, np.nan), np.full(n, np.nan)
    env = simpy.Environment()
    stream: simpy.Store = simpy.Store(env)
    kernels = [i for i, c in enumerate(calls) if c.gpu_s > 0]
    gpu_done = env.event()
    result: dict[str, float] = {}

    def host_proc():
        if submit == "graph":
            yield env.timeout(graph_launch_s)
            for i in range(n):
                hs[i] = he[i] = env.now
            for i in kernels:
                yield stream.put(i)
        else:
            for i, c in enumerate(calls):
                hs[i] = env.now
                yield env.timeout(c.host_s)
                he[i] = env.now
                if c.gpu_s > 0:
                    yield stream.put(i)
        result["host_done"] = env.now
        if kernels:
            yield gpu_done
        result["done"] = env.now
        yield env.timeout(sync_s)

    def gpu_proc():
        for _ in kernels:
            i = yield stream.get()
            gs[i] = env.now
            yield env.timeout(calls[i].gpu_s)
            ge[i] = env.now
        gpu_done.succeed()

    env.process(host_proc())
    env.process(gpu_proc())
    env.run()
    return StreamTimeline(hs, he, gs, ge, env.now, float(np.sum(he - hs)),
                          float(np.nansum(ge - gs)), result["done"] - result["host_done"])


__all__ = ["SUBMITS", "StreamCall", "StreamTimeline", "hide_dependent_launches",
           "replay_closed_form", "replay_event"]
