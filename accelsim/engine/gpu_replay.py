"""Replay GPU kernels: CTAs on SMs, their traffic on the shared L2 and HBM (SimPy), and the
closed-form fast path that gives the same time where nothing contends.

Event model, one kernel after another (a stream):

* the kernel waits ``launch_s + startup_s``; then every CTA asks, in grid order (longest
  first), for one of ``sm_count`` SM slots (``simpy.Resource``);
* a CTA holds its SM for ``pre_s``, then runs its compute and its L2 and HBM transfers
  concurrently, then ``post_s``;
* L2 and HBM are each one ``simpy.Resource(capacity=1)`` port held ``bytes / bandwidth``
  per transfer (first come, first served), and one SM cannot pull faster than its in-flight
  limit (:func:`accelsim.hw.gpu.kernel.sm_bandwidth_caps`).

Where the transfers of concurrent CTAs never queue behind each other, each CTA takes
:func:`~accelsim.hw.gpu.kernel.cta_alone_s` and the replay equals
:func:`~accelsim.hw.gpu.kernel.closed_form_s` (list scheduling); tests hold them equal.

One event per CTA and transfer, never per cycle. Units: seconds.

Aggregation (``replay_event(..., aggregate=True)``, the default): identical kernels of a
sequence are replayed once (each starts on an idle GPU, so its time does not depend on its
neighbours; the per-CTA replay, too, runs each kernel on its own clock from 0, so that float
rounding of the start time cannot reorder its ties: :func:`_kernel_ctas_s`), and a kernel whose CTAs
provably never queue (:func:`contention_free`) is replayed as one event lasting its list-scheduled
time instead of one process per CTA; a kernel whose CTAs do queue goes through the per-CTA replay's
recurrence (:func:`cta_recurrence_s`: first-come-first-served ports and SM slots, CTA after CTA, in
the replay's float operations; ~50x faster, equal to the bit) wherever the CTAs reach the ports
in grid order, which holds for any kernel of one CTA group. Tests hold the aggregated replay
equal to the per-CTA one, and the recurrence to it exactly. :func:`replay_auto` takes the closed
form for a sequence whose every kernel is contention-free and the event replay otherwise.

Imports: simpy, config.gpu, hw.gpu.kernel.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import simpy

from accelsim.config.gpu import GpuMachine
from accelsim.hw.gpu.kernel import (
    CtaCost,
    Kernel,
    closed_form_s,
    cta_alone_s,
    estimate_s,
    sm_bandwidth_caps,
)


@dataclass(frozen=True, slots=True)
class GpuReplay:
    """Times of a replayed kernel sequence, seconds."""

    time_s: float
    kernel_s: tuple[float, ...]
    mode: str


def replay_closed_form(kernels: tuple[Kernel, ...] | list[Kernel], m: GpuMachine,
                       *, contention: bool = False) -> GpuReplay:
    """Closed form: each kernel's list-scheduled time; with ``contention`` also the
    bandwidth floor of L2 and HBM (an estimate of what the event replay adds)."""
    f = estimate_s if contention else closed_form_s
    times = tuple(f(k, m) for k in kernels)
    return GpuReplay(time_s=sum(times), kernel_s=times, mode="analytic")


def contention_free(kernel: Kernel, m: GpuMachine) -> bool:
    """Whether no CTA of ``kernel`` can be slowed by another's L2 or HBM transfer, so that the
    replay is the closed form (each CTA takes :func:`~accelsim.hw.gpu.kernel.cta_alone_s`).

    Sufficient condition, per port: a CTA's request waits at most for the requests of the
    ``k - 1`` other resident CTAs (``k = min(SMs, CTAs)``), each holding the port
    ``bytes / bandwidth``; if that wait plus its own hold fits in the time the CTA takes alone,
    the port never lengthens it.
    """
    mem = m.memory
    k = min(m.sm_count, kernel.ctas)
    for attr, bw in (("l2_bytes", mem.l2_bandwidth_bytes_per_s),
                     ("hbm_bytes", mem.hbm.sustained_bytes_per_s)):
        worst = max((getattr(c, attr) for _, c in kernel.groups), default=0.0)
        for _, c in kernel.groups:
            b = getattr(c, attr)
            body = cta_alone_s(m, c) - c.pre_s - c.post_s
            if b > 0 and (k - 1) * worst / bw + b / bw > body:
                return False
    return True


def replay_auto(kernels: tuple[Kernel, ...] | list[Kernel], m: GpuMachine) -> GpuReplay:
    """The closed form where every kernel is contention-free (proven equal to the replay),
    else the event replay; ``mode`` names which ran."""
    if all(contention_free(k, m) for k in kernels):
        return replay_closed_form(kernels, m)
    return replay_event(kernels, m)


def replay_event(kernels: tuple[Kernel, ...] | list[Kernel], m: GpuMachine, *,
                 aggregate: bool = True) -> GpuReplay:
    """SimPy replay of ``kernels`` in stream order on ``m``'s SMs, L2 and HBM.

    ``aggregate``: identical kernels replayed once, contention-free kernels as one event
    (see the module doc); ``False`` replays every CTA of every kernel.
    """
    return _stream(kernels, kernel_time_s if aggregate else _kernel_ctas_s, m)


def _stream(kernels: tuple[Kernel, ...] | list[Kernel], kernel_s, m: GpuMachine) -> GpuReplay:
    """Kernels one after another on one stream, each lasting ``kernel_s(kernel, m)``."""
    env = simpy.Environment()
    ends: list[float] = []

    def stream():
        for k in kernels:
            start = env.now
            yield env.timeout(kernel_s(k, m))
            ends.append(env.now - start)

    env.process(stream())
    env.run()
    return GpuReplay(time_s=float(env.now), kernel_s=tuple(ends), mode="event")


_KERNEL_S: dict[tuple[Kernel, int], tuple[GpuMachine, float]] = {}
"""Replayed kernel times by (kernel, machine identity); the machine is held so its id stays its."""

KERNEL_CACHE_SIZE = 4096
"""Kernels remembered (a model has tens of distinct kernels; sweeps over machines more)."""


def kernel_time_s(k: Kernel, m: GpuMachine) -> float:
    """One kernel alone on an idle GPU, seconds: its closed form where it is contention-free,
    else its per-CTA replay; remembered, since a model launches the same kernel many times."""
    key = (k, id(m))
    hit = _KERNEL_S.get(key)
    if hit is not None and hit[0] is m:
        return hit[1]
    t = closed_form_s(k, m) if contention_free(k, m) else contended_kernel_s(k, m)
    if len(_KERNEL_S) >= KERNEL_CACHE_SIZE:
        _KERNEL_S.clear()
    _KERNEL_S[key] = (m, t)
    return t


def contended_kernel_s(k: Kernel, m: GpuMachine) -> float:
    """One kernel whose CTAs contend, alone on an idle GPU, seconds: the per-CTA replay's
    time through its recurrence (:func:`cta_recurrence_s`) where that applies, else the SimPy
    replay itself."""
    t = cta_recurrence_s(k, m)
    return t if t is not None else _kernel_ctas_s(k, m)


def cta_recurrence_s(k: Kernel, m: GpuMachine) -> float | None:
    """The per-CTA replay of one kernel (:func:`replay_event` with ``aggregate=False``)
    without an event loop, seconds; None where its premise fails.

    The replay's resources are first come, first served, so where the CTAs reach each port
    in grid order it is a recurrence, CTA after CTA, in the replay's own float operations:
    a CTA starts when the earliest of the ``SM`` slots frees (``start``), asks at ``t1 =
    start + pre_s``; each port grants ``g = max(t1, port free)``, is held to ``h = g + bytes /
    bandwidth``, and the transfer ends at ``h`` or, where the SM's in-flight limit is slower,
    ``t1 + bytes / cap``; the CTA ends ``post_s`` after the last of its compute and transfers.
    Premise, checked CTA by CTA: requests arrive in grid order (``t1`` never decreases; CTAs
    start in grid order, and requests at the same instant are served in the order their
    CTAs started, which is grid order, as SimPy serves same-time events in the order they
    were scheduled). A test holds the two equal.
    """
    l2_cap, hbm_cap = sm_bandwidth_caps(m)
    l2_bw = m.memory.l2_bandwidth_bytes_per_s
    hbm_bw = m.memory.hbm.sustained_bytes_per_s
    t0 = 0.0 + (k.launch_s + k.startup_s)
    slots = [t0] * min(m.sm_count, k.ctas)  # when each SM frees; already a heap
    l2_free = hbm_free = last_t1 = -math.inf
    latest = t0
    for n, c in k.groups:
        l2_hold, hbm_hold = c.l2_bytes / l2_bw, c.hbm_bytes / hbm_bw
        l2_min, hbm_min = c.l2_bytes / l2_cap, c.hbm_bytes / hbm_cap
        for _ in range(n):
            start = heapq.heappop(slots)
            t1 = start + c.pre_s if c.pre_s else start
            if t1 < last_t1:
                return None
            last_t1 = t1
            body = t1 + c.compute_s
            if c.l2_bytes > 0:
                h = max(t1, l2_free) + l2_hold
                l2_free = h
                rest = l2_min - (h - t1)
                body = max(body, h + rest if rest > 0 else h)
            if c.hbm_bytes > 0:
                h = max(t1, hbm_free) + hbm_hold
                hbm_free = h
                rest = hbm_min - (h - t1)
                body = max(body, h + rest if rest > 0 else h)
            end = body + c.post_s if c.post_s else body
            heapq.heappush(slots, end)
            latest = max(latest, end)
    return latest


def _replay_ctas(kernels: tuple[Kernel, ...] | list[Kernel], m: GpuMachine) -> GpuReplay:
    """Every CTA of every kernel replayed (:func:`_kernel_ctas_s`), kernel after kernel."""
    return _stream(kernels, _kernel_ctas_s, m)


def _kernel_ctas_s(k: Kernel, m: GpuMachine) -> float:
    """One kernel on an idle GPU, one SimPy process per CTA and one request per transfer,
    seconds.

    Each kernel runs on its own clock, from 0: the stream starts a kernel once the last CTA
    (and so the last transfer) of the one before has ended, so nothing carries over but the
    time, and replaying on the stream's clock would only change the rounding. That rounding
    is not harmless: events equal in exact arithmetic (a CTA ending at ``compute_s + post_s =
    1e-7 + 2e-7`` and another asking at ``pre_s = 3e-7``) compare differently once a start
    time is added, and the first-come-first-served ports then serve them in the other order
    (a kernel's time then depended on what ran before it, by up to a whole transfer).
    """
    env = simpy.Environment()
    sms = simpy.Resource(env, capacity=m.sm_count)
    l2 = simpy.Resource(env, capacity=1)
    hbm = simpy.Resource(env, capacity=1)
    l2_cap, hbm_cap = sm_bandwidth_caps(m)
    l2_bw = m.memory.l2_bandwidth_bytes_per_s
    hbm_bw = m.memory.hbm.sustained_bytes_per_s

    def transfer(port: simpy.Resource, nbytes: float, bw: float, cap: float):
        start = env.now
        with port.request() as req:
            yield req
            yield env.timeout(nbytes / bw)
        rest = nbytes / cap - (env.now - start)
        if rest > 0:
            yield env.timeout(rest)

    def cta(c: CtaCost):
        with sms.request() as req:
            yield req
            if c.pre_s:
                yield env.timeout(c.pre_s)
            parts = [env.timeout(c.compute_s)]
            if c.l2_bytes > 0:
                parts.append(env.process(transfer(l2, c.l2_bytes, l2_bw, l2_cap)))
            if c.hbm_bytes > 0:
                parts.append(env.process(transfer(hbm, c.hbm_bytes, hbm_bw, hbm_cap)))
            yield simpy.AllOf(env, parts)
            if c.post_s:
                yield env.timeout(c.post_s)

    def grid():
        yield env.timeout(k.launch_s + k.startup_s)
        yield simpy.AllOf(env, [env.process(cta(c)) for n, c in k.groups for _ in range(n)])

    env.process(grid())
    env.run()
    return float(env.now)
