"""PURE link costs: routes through a system's topology, transfer times, collective bounds, actions.

A transfer of ``n`` bytes over a route costs

    time = dma_setup + sum(hop latencies) + wire_bytes(n) / (raw_bandwidth * efficiency)

where ``wire_bytes`` adds each packet's header/framing (``ceil(n / max_payload) * overhead``) at
the route's bottleneck link. Back-to-back copies issued by one host thread cannot go faster
than the host can issue them: ``per_call = max(issue_s, time)``. Pageable host memory is staged
through pinned buffers (see :func:`pageable_copy_s`). Everything here is a function of frozen
config objects and numbers: no state, no I/O.

Imports: errors, limits, config.link, config.system.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

from accelsim.config.link import LinkSpec
from accelsim.config.system import System
from accelsim.errors import ConfigError
from accelsim.limits import MAX_INT, check_number

BITS_PER_BYTE = 8


# --- one link ----------------------------------------------------------------------------
def packets(spec: LinkSpec, nbytes: float) -> int:
    """Packets (TLPs) needed to carry ``nbytes`` of payload."""
    return int(math.ceil(nbytes / spec.max_payload_bytes)) if nbytes > 0 else 0


def wire_bytes(spec: LinkSpec, nbytes: float) -> float:
    """Bytes on the wire for ``nbytes`` of payload: payload + per-packet header/framing."""
    return nbytes + packets(spec, nbytes) * spec.overhead_bytes


def effective_bytes_per_s(spec: LinkSpec) -> float:
    """Wire bytes/s the link sustains per direction: raw (after line encoding) x link efficiency."""
    return spec.raw_bytes_per_s * spec.efficiency


def payload_bytes_per_s(spec: LinkSpec) -> float:
    """Asymptotic payload bytes/s per direction (full packets): what a long copy achieves."""
    mps = spec.max_payload_bytes
    return effective_bytes_per_s(spec) * mps / (mps + spec.overhead_bytes)


def serialization_s(spec: LinkSpec, nbytes: float) -> float:
    """Seconds to push ``nbytes`` of payload (plus packet overhead) through ``spec``."""
    return wire_bytes(spec, nbytes) / effective_bytes_per_s(spec)


# --- routes ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Hop:
    """One link crossed in one direction."""

    link: str
    src: str
    dst: str
    spec: LinkSpec


@dataclass(frozen=True, slots=True)
class Route:
    """The links a transfer crosses, in order, and the switches/host it passes through."""

    src: str
    dst: str
    hops: tuple[Hop, ...]
    switch_latency_s: float = 0.0
    host: str = ""

    @property
    def via_host(self) -> bool:
        """True when the route is staged through host memory (no peer path)."""
        return bool(self.host)

    @property
    def latency_s(self) -> float:
        """Hardware latency: every hop plus every switch crossed, seconds."""
        return sum(h.spec.latency_s for h in self.hops) + self.switch_latency_s

    @property
    def bottleneck(self) -> LinkSpec:
        """The slowest link's spec (lowest payload bandwidth)."""
        return min((h.spec for h in self.hops), key=payload_bytes_per_s)

    @property
    def dma_setup_s(self) -> float:
        """Copy-engine setup: the largest of the links' (a copy is set up once)."""
        return max(h.spec.dma_setup_s for h in self.hops)

    @property
    def issue_s(self) -> float:
        """Host time to issue one copy call over this route."""
        return max(h.spec.issue_s for h in self.hops)

    @property
    def names(self) -> list[str]:
        """Link names, in order."""
        return [h.link for h in self.hops]


def _adjacency(system: System) -> dict[str, list[tuple[str, str, LinkSpec]]]:
    adj: dict[str, list[tuple[str, str, LinkSpec]]] = {n: [] for n in system.endpoint_names}
    for link in system.links:
        a, b = link.ends
        spec = system.spec(link.spec)
        adj[a].append((b, link.name, spec))
        adj[b].append((a, link.name, spec))
    return adj


def find_route(system: System, src: str, dst: str) -> Route:
    """:func:`widest_route`, remembered per (system, src, dst): a system is immutable, and a
    collective asks for the routes between every pair of its ranks."""
    try:
        return _route_cached(system, src, dst)
    except TypeError:  # a system holding an unhashable value: no memo
        return widest_route(system, src, dst)


@functools.lru_cache(maxsize=4096)
def _route_cached(system: System, src: str, dst: str) -> Route:
    return widest_route(system, src, dst)


def widest_route(system: System, src: str, dst: str) -> Route:
    """The widest path from ``src`` to ``dst`` (highest bottleneck bandwidth, then fewest hops).

    Switches forward traffic; the host forwards only by staging through its memory (a GPU with
    no peer link copies through the host: the "path through the CPU" trap); devices never
    forward. Unknown or unconnected endpoints raise :class:`ConfigError` naming them.
    """
    known = system.device_names + (system.host.name,)
    for field, name in (("src", src), ("dst", dst)):
        if name not in known:
            raise ConfigError(system.name, field, name,
                              f"no such device or host (known: {', '.join(known)})")
    if src == dst:
        raise ConfigError(system.name, "dst", dst, "source and destination are the same")
    adj = _adjacency(system)
    best: tuple[float, int, list[Hop]] | None = None

    def walk(node: str, seen: set[str], path: list[Hop]) -> None:
        nonlocal best
        for nxt, link, spec in adj[node]:
            if nxt in seen:
                continue
            hops = path + [Hop(link, node, nxt, spec)]
            if nxt == dst:
                width = min(payload_bytes_per_s(h.spec) for h in hops)
                key = (width, -len(hops))
                if best is None or key > (best[0], -best[1]):
                    best = (width, len(hops), hops)
                continue
            forwards = system.switch(nxt) is not None or nxt == system.host.name
            if forwards and len(hops) < 6:
                walk(nxt, seen | {nxt}, hops)

    walk(src, {src}, [])
    if best is None:
        raise ConfigError(system.name, "dst", dst, f"no link path from '{src}' to '{dst}'")
    hops = tuple(best[2])
    inner = [h.dst for h in hops[:-1]]
    sw = sum(s.latency_s for s in (system.switch(n) for n in inner) if s is not None)
    return Route(src, dst, hops, sw, host=system.host.name if system.host.name in inner else "")


# --- transfers ---------------------------------------------------------------------------
def check_bytes(nbytes: float, field: str = "bytes", what: str = "bytes") -> float:
    """``nbytes`` (or any amount of ``what``) as a float; :class:`ConfigError` if negative."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, numbers.Real):  # numpy scalars too
        raise ConfigError(None, field, nbytes, f"expected a number of {what}")
    return float(check_number(nbytes, file=None, field=field, non_negative=True, maximum=MAX_INT))


def route_serialization_s(route: Route, nbytes: float) -> float:
    """Seconds the route is busy pushing ``nbytes`` (cut-through: one pass of the bottleneck).

    A route through the host is store-and-forward in host memory: each leg serializes in turn.
    """
    return sum(serialization_s(min((h.spec for h in leg), key=payload_bytes_per_s), nbytes)
               for leg in route_legs(route))


def route_legs(route: Route) -> list[tuple[Hop, ...]]:
    """The route cut where it is stored in host memory (one leg unless ``via_host``)."""
    legs: list[list[Hop]] = [[]]
    for h in route.hops:
        legs[-1].append(h)
        if route.via_host and h.dst == route.host and h is not route.hops[-1]:
            legs.append([])
    return [tuple(leg) for leg in legs]


def copy_time_s(route: Route, nbytes: float) -> float:
    """Seconds for one copy-engine (DMA) copy of ``nbytes`` of pinned memory over ``route``."""
    if nbytes == 0:
        return 0.0
    return route.dma_setup_s + route.latency_s + route_serialization_s(route, nbytes)


def back_to_back_s(route: Route, nbytes: float) -> float:
    """Seconds per call when one host thread issues identical copies back to back."""
    return max(route.issue_s, copy_time_s(route, nbytes))


def staged_dma_bytes_per_s(system: System, route: Route) -> float:
    """Rate at which the DMA engine drains a pinned staging buffer, in ``staging_piece_bytes``
    copies."""
    piece = system.host.staging_piece_bytes
    return piece / copy_time_s(route, piece)


def pageable_copy_s(system: System, route: Route, nbytes: float) -> float:
    """Seconds for a copy to/from pageable host memory (synchronous, through staging buffers).

    ``call + n / staging_copy + min(n, staging_buffer) / staged_dma``: up to one staging buffer
    the CPU copy and the DMA run one after the other; above it they overlap and the CPU copy
    (the slower stage) sets the pace, so only one buffer's DMA shows.
    """
    if nbytes == 0:
        return 0.0
    host = system.host
    return (host.pageable_call_s + nbytes / host.staging_copy_bytes_per_s
            + min(nbytes, host.staging_buffer_bytes) / staged_dma_bytes_per_s(system, route))


def transfer_actions(route: Route, nbytes: float, *, layer: str = "transfer") -> list[dict]:
    """Action records (one per link crossed) for moving ``nbytes``: packets and bits on the wire."""
    rows = []
    for h in route.hops:
        wb = wire_bytes(h.spec, nbytes)
        rows.append({"layer": layer, "level": "link", "operand": "-", "direction": "write",
                     "count": packets(h.spec, nbytes), "bits": wb * BITS_PER_BYTE,
                     "precision": "-", "technology": h.spec.label, "capacity_bytes": 0,
                     "word_bits": h.spec.max_payload_bytes * BITS_PER_BYTE, "link": h.link,
                     "energy_pj": wb * BITS_PER_BYTE * h.spec.energy_per_bit_pj})
    return rows


# --- collectives: NCCL conventions and alpha-beta bounds ---------------------------------
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall")


def bus_factor(name: str, ranks: int) -> float:
    """NCCL's busbw/algbw factor: 2(n-1)/n for all-reduce, (n-1)/n for the others."""
    if name not in COLLECTIVES:
        raise ConfigError(None, "collective", name, f"must be one of {', '.join(COLLECTIVES)}")
    if ranks < 1:
        raise ConfigError(None, "ranks", ranks, "must be >= 1")
    return (2.0 if name == "allreduce" else 1.0) * (ranks - 1) / ranks


def ring_allreduce_bound_s(nbytes: float, ranks: int, bytes_per_s: float,
                           step_latency_s: float = 0.0) -> float:
    """Alpha-beta time of a ring all-reduce: 2(n-1) steps, each rank sends 2(n-1)/n of the data."""
    if ranks < 2:
        return 0.0
    return 2 * (ranks - 1) * step_latency_s + 2 * (ranks - 1) / ranks * nbytes / bytes_per_s
