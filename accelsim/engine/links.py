"""Links on the one clock: SimPy resources for link directions, copy engines and compute streams.

* Every link direction is a port, a ``Resource(capacity=1)``: a chunk occupies each port of
  its route for its serialization time at the route's bottleneck, the ports independently (a
  switch buffers, so one busy output does not block an input: no head-of-line blocking, no
  hold-and-wait, no deadlock). Transfers that share a port take turns chunk by chunk
  (contention). Latency is added after the last chunk, outside the ports.
* A copy (DMA) holds one copy engine of the device that runs it (per direction); compute holds
  the device's compute stream. Copies and compute therefore overlap unless they wait on data.
* Collectives (ring, tree, direct; all-reduce, all-gather, reduce-scatter, all-to-all) send
  chunked messages between ranks; a rank forwards chunk ``k`` of step ``s`` once chunk ``k`` of
  step ``s - 1`` has arrived, so steps pipeline.

With nothing contending, a copy takes exactly :func:`accelsim.hw.link.copy_time_s` (a test holds
them equal). Collectives scheduled here are the ``link`` model (copy-engine messages, no
reduction time); the ``nccl`` model (SM-driven channels) is :mod:`accelsim.hw.nccl`.

Imports: errors, config.system, hw.link.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, field

import simpy

from accelsim.config.system import System
from accelsim.errors import ConfigError
from accelsim.hw import link as hw

Proc = Generator[simpy.Event, object, None]


@dataclass
class Trace:
    """Plain records of what happened (no SimPy objects): one dict per copy/message/kernel."""

    records: list[dict] = field(default_factory=list)

    def add(self, kind: str, name: str, start: float, end: float, nbytes: float = 0.0,
            where: str = "") -> None:
        """Record one event interval, seconds."""
        self.records.append({"kind": kind, "name": name, "start_s": start, "end_s": end,
                             "bytes": nbytes, "where": where})


class LinkNetwork:
    """The SimPy resources of one system, and processes that move bytes over them."""

    def __init__(self, env: simpy.Environment, system: System) -> None:
        self.env = env
        self.system = system
        self.trace = Trace()
        self._channels: dict[tuple[str, str], simpy.Resource] = {}
        for link in system.links:
            a, b = link.ends
            for key in ((link.name, b), (link.name, a)):  # (link, direction = its destination)
                self._channels[key] = simpy.Resource(env, capacity=1)
        self.copy_engines = {(d.name, way): simpy.Resource(env, max(1, d.copy_engines // 2))
                             for d in system.devices for way in ("in", "out")}
        self.compute = {d.name: simpy.Resource(env, capacity=1) for d in system.devices}
        self._routes: dict[tuple[str, str], hw.Route] = {}

    def route(self, src: str, dst: str) -> hw.Route:
        """The (cached) route from ``src`` to ``dst``."""
        key = (src, dst)
        if key not in self._routes:
            self._routes[key] = hw.find_route(self.system, src, dst)
        return self._routes[key]

    # --- moving bytes --------------------------------------------------------------------
    def send(self, route: hw.Route, nbytes: float, *, chunks: int = 1, name: str = "send") -> Proc:
        """Move ``nbytes`` over ``route`` in ``chunks`` pieces; returns when the last arrives."""
        start = self.env.now
        for leg in hw.route_legs(route):
            bottleneck = min((h.spec for h in leg), key=hw.payload_bytes_per_s)
            for piece in split_bytes(nbytes, chunks, bottleneck.max_payload_bytes):
                busy = hw.serialization_s(bottleneck, piece)
                ports = [self.env.process(self._occupy((h.link, h.dst), busy)) for h in leg]
                yield self.env.all_of(ports)
        yield self.env.timeout(route.latency_s)
        self.trace.add("message", name, start, self.env.now, nbytes, "->".join(route.names))

    def _occupy(self, key: tuple[str, str], seconds: float) -> Proc:
        with self._channels[key].request() as req:
            yield req
            yield self.env.timeout(seconds)

    def copy(self, src: str, dst: str, nbytes: float, *, pageable: bool = False,
             chunks: int = 8, name: str = "copy") -> Proc:
        """One copy-engine copy (cudaMemcpyAsync-like) from ``src`` to ``dst``, seconds as in hw.

        ``pageable``: the host-side staging (CPU copy into pinned buffers) is not replayed: it
        is a delay, the closed form :func:`accelsim.hw.link.pageable_copy_s` less its wire
        part, before the bytes contend for the link ports like any copy.
        """
        route = self.route(src, dst)
        device = src if src in self.system.device_names else dst
        way = "out" if device == src else "in"
        start = self.env.now
        with self.copy_engines[(device, way)].request() as req:
            yield req
            if nbytes > 0:
                if pageable:
                    host_side = hw.pageable_copy_s(self.system, route, nbytes)
                    wire = hw.route_serialization_s(route, nbytes) + route.latency_s
                    yield self.env.timeout(max(0.0, host_side - wire))
                else:
                    yield self.env.timeout(route.dma_setup_s)
                yield from self.send(route, nbytes, chunks=chunks, name=name)
        self.trace.add("copy", name, start, self.env.now, nbytes, f"{src}->{dst}")

    def kernel(self, device: str, seconds: float, name: str = "kernel") -> Proc:
        """Hold ``device``'s compute stream for ``seconds``."""
        with self.compute[device].request() as req:
            yield req
            start = self.env.now
            yield self.env.timeout(seconds)
        self.trace.add("kernel", name, start, self.env.now, 0.0, device)


def split_bytes(nbytes: float, chunks: int, quantum: int) -> list[float]:
    """``nbytes`` cut into at most ``chunks`` pieces, each a multiple of ``quantum`` but the
    last."""
    if nbytes <= 0:
        return []
    size = max(quantum, math.ceil(nbytes / max(1, chunks) / quantum) * quantum)
    full = int(nbytes // size)
    pieces = [float(size)] * full
    rest = nbytes - full * size
    if rest > 0:
        pieces.append(rest)
    return pieces


# --- scenarios on the engine ---------------------------------------------------------------
def run_copy(system: System, src: str, dst: str, nbytes: float, *, pageable: bool = False) -> float:
    """Seconds for one lone copy, simulated."""
    env = simpy.Environment()
    net = LinkNetwork(env, system)
    env.process(net.copy(src, dst, nbytes, pageable=pageable))
    env.run()
    return env.now


def run_concurrent_copies(system: System, copies: list[tuple[str, str, float]]) -> list[float]:
    """Start all ``(src, dst, bytes)`` copies at once; each one's finish time, seconds."""
    env = simpy.Environment()
    net = LinkNetwork(env, system)
    done: list[float] = [0.0] * len(copies)

    def one(i: int, src: str, dst: str, n: float) -> Proc:
        yield from net.copy(src, dst, n, name=f"copy{i}")
        done[i] = env.now

    for i, (src, dst, n) in enumerate(copies):
        env.process(one(i, src, dst, n))
    env.run()
    return done


def run_back_to_back(system: System, src: str, dst: str, nbytes: float, calls: int = 16) -> float:
    """Seconds per call when one host thread issues ``calls`` identical copies into one stream."""
    env = simpy.Environment()
    net = LinkNetwork(env, system)
    route = net.route(src, dst)
    stream = simpy.Resource(env, capacity=1)
    ends: list[float] = []

    def call(i: int) -> Proc:
        with stream.request() as req:
            yield req
            yield from net.copy(src, dst, nbytes, name=f"call{i}")
        ends.append(env.now)

    def host() -> Proc:
        for i in range(calls):
            yield env.timeout(route.issue_s)
            env.process(call(i))

    env.process(host())
    env.run()
    return (ends[-1] - ends[0]) / (calls - 1)


def run_pipeline(system: System, device: str, chunks: int, h2d_bytes: float, kernel_s: float,
                 d2h_bytes: float, *, overlap: bool = True) -> dict:
    """H2D copy -> kernel -> D2H copy for each of ``chunks`` chunks (double-buffered streams).

    ``overlap=False`` runs each chunk's three stages only after the previous chunk finished
    (one synchronous stream). Returns total seconds and the per-stage trace.
    """
    env = simpy.Environment()
    net = LinkNetwork(env, system)
    host = system.host.name
    prev_done: simpy.Event | None = None
    finished: list[simpy.Event] = []

    def chunk(i: int, wait: simpy.Event | None, done: simpy.Event) -> Proc:
        if wait is not None:
            yield wait
        yield from net.copy(host, device, h2d_bytes, name=f"h2d{i}")
        yield from net.kernel(device, kernel_s, name=f"kernel{i}")
        yield from net.copy(device, host, d2h_bytes, name=f"d2h{i}")
        done.succeed()

    for i in range(chunks):
        done = env.event()
        env.process(chunk(i, None if overlap else prev_done, done))
        prev_done = done
        finished.append(done)
    env.run()
    return {"time_s": env.now, "trace": net.trace.records}


def run_zero_copy(system: System, device: str, nbytes: float, compute_s: float, *,
                  reads: int = 1, request_bytes: int = 128) -> dict:
    """A kernel that reads ``nbytes`` of host memory ``reads`` times: zero-copy vs copy-then-run.

    Zero-copy: the kernel's loads cross PCIe as ``request_bytes`` reads while it computes, so it
    takes ``max(compute, latency + reads x serialization)``. Copy: one DMA copy, then the kernel
    reads HBM (taken as hidden under ``compute_s``).
    """
    env = simpy.Environment()
    net = LinkNetwork(env, system)
    route = net.route(system.host.name, device)
    spec = route.bottleneck
    zc_spec = _with_payload(spec, request_bytes)
    zc_link_s = route.latency_s + reads * hw.serialization_s(zc_spec, nbytes)
    zero_copy_s = max(compute_s, zc_link_s)

    def copy_then_run() -> Proc:
        yield from net.copy(system.host.name, device, nbytes, name="h2d")
        yield from net.kernel(device, compute_s)

    env.process(copy_then_run())
    env.run()
    return {"zero_copy_s": zero_copy_s, "copy_s": env.now,
            "zero_copy_link_s": zc_link_s,
            "winner": "zero-copy" if zero_copy_s < env.now else "copy"}


def _with_payload(spec, payload: int):
    import dataclasses

    return dataclasses.replace(spec, max_payload_bytes=min(payload, spec.max_payload_bytes))


def check_ranks(system: System, ranks: list[str] | None) -> list[str]:
    """The rank list (default: all devices); unknown names raise :class:`ConfigError`."""
    names = list(system.device_names if ranks is None else ranks)
    for r in names:
        if r not in system.device_names:
            raise ConfigError(system.name, "ranks", r,
                              f"no such device (known: {', '.join(system.device_names)})")
    if len(set(names)) != len(names):
        raise ConfigError(system.name, "ranks", names, "a device appears twice")
    return names


def bucketed_overlap(compute_s: float, bucket_comm_s: list[float], backward_fraction: float,
                     overlap: bool) -> float:
    """End time (s) of a data-parallel step whose gradient all-reduce runs in buckets.

    Two SimPy processes: compute runs the forward pass, then the backward pass in equal
    slices, releasing one gradient bucket per slice (all at the end without ``overlap``);
    communication all-reduces the buckets in order as they are released, each taking its
    ``bucket_comm_s``. The step ends when both are done.
    """
    env = simpy.Environment()
    ready = [env.event() for _ in bucket_comm_s]
    forward = compute_s * (1 - backward_fraction)

    def compute() -> Proc:
        yield env.timeout(forward if overlap else compute_s)
        for ev in ready:
            if overlap:
                yield env.timeout(compute_s * backward_fraction / len(ready))
            ev.succeed()

    def communicate() -> Proc:
        for ev, t in zip(ready, bucket_comm_s):
            yield ev
            yield env.timeout(t)

    env.process(compute())
    env.process(communicate())
    env.run()
    return float(env.now)
