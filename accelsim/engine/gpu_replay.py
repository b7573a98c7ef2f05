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

Imports: simpy, config, hw.
"""

from __future__ import annotations

from dataclasses import dataclass

import simpy

from accelsim.config.gpu import GpuMachine
from accelsim.hw.gpu.kernel import CtaCost, Kernel, closed_form_s, estimate_s, sm_bandwidth_caps


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


def replay_event(kernels: tuple[Kernel, ...] | list[Kernel], m: GpuMachine) -> GpuReplay:
    """SimPy replay of ``kernels`` in stream order on ``m``'s SMs, L2 and HBM."""
    env = simpy.Environment()
    sms = simpy.Resource(env, capacity=m.sm_count)
    l2 = simpy.Resource(env, capacity=1)
    hbm = simpy.Resource(env, capacity=1)
    l2_cap, hbm_cap = sm_bandwidth_caps(m)
    l2_bw = m.memory.l2_bandwidth_bytes_per_s
    hbm_bw = m.memory.hbm.sustained_bytes_per_s
    ends: list[float] = []

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

    def stream():
        for k in kernels:
            start = env.now
            yield env.timeout(k.launch_s + k.startup_s)
            procs = [env.process(cta(c)) for n, c in k.groups for _ in range(n)]
            yield simpy.AllOf(env, procs)
            ends.append(env.now - start)

    env.process(stream())
    env.run()
    return GpuReplay(time_s=float(env.now), kernel_s=tuple(ends), mode="event")
