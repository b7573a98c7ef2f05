"""Collectives scheduled on the link engine: ring, tree and direct algorithms, chunk-pipelined.

Sizes follow NCCL (nccl-tests) conventions: ``nbytes`` is the all-reduce buffer, the total
gathered output of an all-gather, the total input of a reduce-scatter, and the total send
buffer of an all-to-all (per rank). ``algbw = nbytes / time``; ``busbw = algbw x factor`` with
factor ``2(n-1)/n`` for all-reduce and ``(n-1)/n`` for the others
(:func:`accelsim.hw.link.bus_factor`).

Algorithms:

* ring: ``n`` ranks in a ring; each rank sends a ``1/n`` segment to its successor per step
  (all-reduce = reduce-scatter ``n-1`` steps + all-gather ``n-1`` steps).
* tree: NCCL's double binary tree for all-reduce: half the data goes up and down each of two
  binary trees (the second is the first mirrored), chunk-pipelined.
* direct: every rank sends each peer its share at once (all-to-all; all-reduce as a direct
  reduce-scatter then a direct all-gather).

Two time models (``collectives.model`` of the system, or ``model=``):

* ``nccl`` (the systems' default): a **closed form**, no events: the collective as NCCL runs it,
  from the pure model :mod:`accelsim.hw.nccl` (SM-driven channels, per-step synchronisation,
  LL/LL128/Simple), with the link rate of the slowest route between ranks from the calibrated copy
  model. It covers ring and tree all-reduce, ring all-gather/reduce-scatter and direct all-to-all;
  other algorithms (direct all-reduce, which NCCL does not have) fall back to ``link``.
* ``link``: an **event replay**: chunked messages on the link engine as copy-engine transfers. Every
  message is cut into pipeline chunks (``collectives.chunk_bytes``, at most
  ``collectives.max_chunks``); a rank forwards chunk ``k`` as soon as chunk ``k`` arrived.

Link energy is the wire bits of every message on every link it crosses x the link's pJ/bit.

Imports: errors, config.system, hw.link, hw.nccl, engine.links.
"""

from __future__ import annotations

import dataclasses
import math

import simpy

from accelsim.config.system import COLLECTIVE_MODELS, NCCL_PROTOCOLS, System
from accelsim.engine.links import LinkNetwork, Proc, check_ranks, split_bytes
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.hw import link as hw
from accelsim.hw import nccl

ALGORITHMS = {"allreduce": ("ring", "tree", "direct"), "allgather": ("ring", "direct"),
              "reducescatter": ("ring", "direct"), "alltoall": ("direct",)}
DEFAULT_ALGO = {"allreduce": "ring", "allgather": "ring", "reducescatter": "ring",
                "alltoall": "direct"}


class _Run:
    """Shared state of one collective on one engine."""

    def __init__(self, system: System, ranks: list[str], segment: float) -> None:
        self.env = simpy.Environment()
        self.net = LinkNetwork(self.env, system)
        self.ranks = ranks
        self.n = len(ranks)
        params = system.collectives
        self.launch = params.launch_s
        chunks = max(1, min(params.max_chunks, math.ceil(segment / params.chunk_bytes)))
        quantum = min(self.net.route(a, b).bottleneck.max_payload_bytes
                      for a in ranks for b in ranks if a != b)
        self.pieces = split_bytes(segment, chunks, quantum)
        self.sent = {r: 0.0 for r in ranks}
        self.energy_pj = 0.0

    def send(self, a: int, b: int, nbytes: float, done: simpy.Event | None = None) -> Proc:
        src, dst = self.ranks[a], self.ranks[b]
        route = self.net.route(src, dst)
        yield from self.net.send(route, nbytes, name=f"{src}->{dst}")
        self.sent[src] += nbytes
        self.energy_pj += sum(r["energy_pj"] for r in hw.transfer_actions(route, nbytes))
        if done is not None:
            done.succeed()

    def start(self, proc: Proc) -> None:
        def delayed() -> Proc:
            yield self.env.timeout(self.launch)
            yield from proc

        self.env.process(delayed())


def _ring(run: _Run, steps: int) -> None:
    n = run.n
    arrive = {(r, s, k): run.env.event() for r in range(n) for s in range(steps)
              for k in range(len(run.pieces))}

    def rank(r: int, k: int) -> Proc:
        for s in range(steps):
            if s > 0:
                yield arrive[(r, s - 1, k)]
            yield from run.send(r, (r + 1) % n, run.pieces[k], arrive[((r + 1) % n, s, k)])

    for k in range(len(run.pieces)):
        for r in range(n):
            run.start(rank(r, k))


def _direct(run: _Run, phases: int) -> None:
    """``phases`` = 1: all-to-all / one-shot scatter; 2: reduce-scatter then all-gather."""
    n, env = run.n, run.env
    got = {(j, k): [env.event() for _ in range(n - 1)] for j in range(n)
           for k in range(len(run.pieces))}

    def scatter(r: int, k: int) -> Proc:
        procs = []
        for off in range(1, n):
            j = (r + off) % n
            slot = (r - j) % n - 1
            procs.append(env.process(run.send(r, j, run.pieces[k], got[(j, k)][slot])))
        yield env.all_of(procs)

    def gather(j: int, k: int) -> Proc:
        yield env.all_of(got[(j, k)])
        procs = [env.process(run.send(j, (j + off) % n, run.pieces[k])) for off in range(1, n)]
        yield env.all_of(procs)

    for k in range(len(run.pieces)):
        for r in range(n):
            run.start(scatter(r, k))
            if phases == 2:
                run.start(gather(r, k))


def _tree(run: _Run) -> None:
    n, env = run.n, run.env
    for t in range(2):
        order = list(range(n)) if t == 0 else list(reversed(range(n)))
        up = {(i, k): env.event() for i in range(n) for k in range(len(run.pieces))}
        down = {(i, k): env.event() for i in range(n) for k in range(len(run.pieces))}

        def node(i: int, k: int, order=order, up=up, down=down) -> Proc:
            kids = [c for c in (2 * i + 1, 2 * i + 2) if c < n]
            if kids:
                yield env.all_of([up[(c, k)] for c in kids])
            if i > 0:
                yield from run.send(order[i], order[(i - 1) // 2], run.pieces[k], up[(i, k)])
                yield down[(i, k)]
            for c in kids:
                env.process(run.send(order[i], order[c], run.pieces[k], down[(c, k)]))

        for k in range(len(run.pieces)):
            for i in range(n):
                run.start(node(i, k))


def run_collective(system: System, name: str, nbytes: float, *, algo: str | None = None,
                   ranks: list[str] | None = None, model: str | None = None,
                   protocol: str | None = None) -> dict:
    """Time one collective: seconds, NCCL algbw/busbw (bytes/s), bytes sent, and ``method``
    (``closed form`` for the ``nccl`` model, ``event replay`` for the ``link`` model).

    ``model`` overrides the system's collective model (``nccl`` or ``link``); ``protocol``
    forces an NCCL protocol (``LL``, ``LL128``, ``Simple``; like ``NCCL_PROTO``). ``name`` is
    NCCL's (``allreduce``) or torch.distributed's spelling (``all_reduce``, ``reduce_scatter``,
    ``all_to_all``).
    """
    name = name.lower().replace("_", "").replace("-", "") if isinstance(name, str) else name
    if name not in ALGORITHMS:
        raise ConfigError(system.name, "collective", name,
                          f"must be one of {', '.join(ALGORITHMS)}")
    algo = algo or DEFAULT_ALGO[name]
    if algo not in ("ring", "tree", "direct"):
        raise ConfigError(system.name, "algo", algo, "must be one of ring, tree, direct")
    if algo not in ALGORITHMS[name]:
        raise UnsupportedError(f"{name} has no '{algo}' algorithm here "
                               f"(available: {', '.join(ALGORITHMS[name])})")
    model = model or system.collectives.model
    if model not in COLLECTIVE_MODELS:
        raise ConfigError(system.name, "model", model,
                          f"must be one of {', '.join(COLLECTIVE_MODELS)}")
    if protocol is not None and protocol not in ("auto",) + NCCL_PROTOCOLS:
        raise ConfigError(system.name, "protocol", protocol,
                          f"must be one of auto, {', '.join(NCCL_PROTOCOLS)}")
    nbytes = hw.check_bytes(nbytes)
    names = check_ranks(system, ranks)
    n = len(names)
    if n < 2 or nbytes == 0:
        t = system.collectives.launch_s if model == "link" else 0.0
        return _result(system, name, algo, nbytes, n, t, {r: 0.0 for r in names}, 0.0, model)
    if model == "nccl" and algo in nccl.ALGOS[name]:
        return _nccl_closed_form(system, name, algo, nbytes, names, protocol)
    segment = nbytes / 2 if algo == "tree" else nbytes / n
    run = _Run(system, names, segment)
    if algo == "ring":
        _ring(run, 2 * (n - 1) if name == "allreduce" else n - 1)
    elif algo == "direct":
        _direct(run, 2 if name == "allreduce" else 1)
    else:
        _tree(run)
    run.env.run()
    return _result(system, name, algo, nbytes, n, run.env.now, run.sent, run.energy_pj, "link")


def _nccl_closed_form(system: System, name: str, algo: str, nbytes: float, names: list[str],
                      protocol: str | None) -> dict:
    """The nccl model, a closed form: time from :mod:`accelsim.hw.nccl`; energy from the wire
    bytes."""
    n = len(names)
    params = system.collectives
    if protocol is not None:
        params = dataclasses.replace(params, protocol=protocol)
    routes = {(a, b): hw.find_route(system, a, b) for a in names for b in names if a != b}
    link = min(hw.payload_bytes_per_s(r.bottleneck) for r in routes.values())
    t = nccl.gpu_time(params, name, algo, nbytes, n, link)
    wire_factor = 1.0 / nccl.PAYLOAD_FRACTION[t.protocol]   # flags cross the link too
    energy = 0.0
    for i, a in enumerate(names):
        if name == "alltoall":
            sends = [(routes[(a, b)], nbytes / n) for b in names if b != a]
        else:
            sends = [(routes[(a, names[(i + 1) % n])], t.link_bytes_per_rank)]
        for route, payload in sends:
            energy += sum(r["energy_pj"] for r in hw.transfer_actions(route, payload * wire_factor))
    sent = {r: t.link_bytes_per_rank for r in names}
    out = _result(system, name, algo, nbytes, n, t.time_s, sent, energy, "nccl")
    out.update(protocol=t.protocol, channels=t.channels, nccl=t.as_dict(),
               back_to_back_s=nccl.per_call_s(params, t.time_s))
    return out


def _result(system: System, name: str, algo: str, nbytes: float, n: int, t: float,
            sent: dict, energy_pj: float, model: str) -> dict:
    algbw = nbytes / t if t > 0 else 0.0
    return {"collective": name, "algo": algo, "model": model,
            "method": "closed form" if model == "nccl" else "event replay",
            "ranks": n, "bytes": nbytes, "time_s": t,
            "back_to_back_s": max(system.collectives.issue_s, t),
            "algbw_bytes_per_s": algbw, "busbw_bytes_per_s": algbw * hw.bus_factor(name, n),
            "max_bytes_sent_per_rank": max(sent.values()) if sent else 0.0,
            "link_energy_j": energy_pj * 1e-12}
