"""Heterogeneous placement: assign each operator of a model graph to a device of a node.

Inputs are plain data, so this module stays below the API: a :class:`CostTable` of predicted
seconds per (operator, device) (``inf`` where a device cannot run the op), computed by the
API layer through each device family's own model, and the node's topology for transfers
(:func:`accelsim.hw.link.copy_time_s` over the widest route).

Policies:

* ``greedy`` — earliest-finish-time list scheduling (HEFT without the upward-rank ordering:
  the graph's execution order is already topological). For each op in order and each device,
  ``ready`` = the latest arrival of its inputs on that device (producer's finish, plus a copy
  if the producer ran elsewhere; graph inputs start on the host), ``start = max(ready, device
  free)``, ``finish = start + launch + cost``; the device with the earliest finish wins.
  Copies are costed uncontended here; the engine (:mod:`accelsim.engine.placed`) then runs
  the placed graph with real link contention. EFT is myopic, so its schedule is kept only
  if its estimate beats every single-device schedule (else the best of those is returned).
* ``pinned`` — the user's ``pattern=device`` rules (shell-style globs on op names, first match
  wins); ops no rule matches are placed greedily.

Weights are resident on every device (inference, or weights preloaded); only activations
move.

Imports: errors, config.node, hw.link, workload.graph.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from accelsim.config.node import Node
from accelsim.errors import ConfigError
from accelsim.hw import link as hwlink
from accelsim.workload.graph import ModelGraph

POLICIES = ("greedy", "pinned")


@dataclass(frozen=True)
class CostTable:
    """Predicted seconds of each op on each target: ``seconds[op][device]``."""

    seconds: Mapping[str, Mapping[str, float]]
    launch_s: Mapping[str, float] = field(default_factory=dict)
    """Per-op dispatch cost of each device, seconds."""

    def cost(self, op: str, device: str) -> float:
        """Seconds of ``op`` on ``device`` including the dispatch cost (``inf`` if unsupported)."""
        s = self.seconds[op].get(device, math.inf)
        return s + self.launch_s.get(device, 0.0) if math.isfinite(s) else math.inf


@dataclass(frozen=True)
class Placement:
    """Where each op runs, and the policy's own (uncontended) makespan estimate."""

    policy: str
    assign: dict[str, str]
    estimate_s: float
    pins: tuple[tuple[str, str], ...] = ()

    def ops_on(self, device: str) -> list[str]:
        """Ops placed on ``device``, in graph order."""
        return [op for op, d in self.assign.items() if d == device]


def parse_pins(pins: Sequence[str] | None, node: Node) -> tuple[tuple[str, str], ...]:
    """``["layer1*=gpu0", "fc=host"]`` -> ``(("layer1*", "gpu0"), ...)``; devices are checked."""
    out = []
    for item in pins or ():
        pattern, eq, dev = str(item).partition("=")
        if not eq or not pattern.strip() or not dev.strip():
            raise ConfigError("--pin", "pin", item, "expected PATTERN=DEVICE, e.g. 'layer1*=gpu0'")
        dev = dev.strip()
        if dev not in node.targets:
            raise ConfigError("--pin", "pin", item,
                              f"device '{dev}' is not in node {node.name} "
                              f"(targets: {', '.join(node.targets)})")
        out.append((pattern.strip(), dev))
    return tuple(out)


def transfer_s(node: Node, src: str, dst: str, nbytes: float) -> float:
    """Uncontended seconds to copy ``nbytes`` from ``src`` to ``dst`` (0 on the same device)."""
    if src == dst or nbytes <= 0:
        return 0.0
    return hwlink.copy_time_s(_route(node, src, dst), nbytes)


def _route(node: Node, src: str, dst: str) -> hwlink.Route:
    return hwlink.find_route(node.system, src, dst)


def place(graph: ModelGraph, node: Node, costs: CostTable, *, policy: str = "greedy",
          pins: Sequence[str] | None = None) -> Placement:
    """Place every op of ``graph`` on a target of ``node`` (see the module docstring).

    Earliest-finish-time is myopic: an op that is quickest where its input already is (the
    first layer on the host, next to the image) can pull a whole chain onto a slow device.
    So the list schedule is compared, by the same uncontended estimate, with every
    single-device schedule of the unpinned ops, and the best of them is returned.
    """
    if policy not in POLICIES:
        raise ConfigError(None, "policy", policy, f"must be one of {', '.join(POLICIES)}")
    rules = parse_pins(pins, node)
    if policy == "pinned" and not rules:
        raise ConfigError("--pin", "pin", None, "policy 'pinned' needs at least one --pin rule")
    forced = {n.name: next((d for p, d in rules if fnmatch.fnmatchcase(n.name, p)), None)
              for n in graph.nodes}
    best = _schedule(graph, node, costs, lambda op: [forced[op]] if forced[op] else None)
    for dev in node.targets:
        if all(forced[n.name] or math.isfinite(costs.cost(n.name, dev)) for n in graph.nodes):
            alt = _schedule(graph, node, costs,
                            lambda op, d=dev: [forced[op]] if forced[op] else [d])
            if alt[1] < best[1]:
                best = alt
    return Placement(policy, best[0], best[1], rules)


def _schedule(graph: ModelGraph, node: Node, costs: CostTable,
              allowed: Callable[[str], list[str] | None]) -> tuple[dict[str, str], float]:
    """EFT list schedule in graph order over ``allowed(op)`` devices (``None`` = all)."""
    targets = node.targets
    host = node.host.name
    producers = graph.producers()
    finish: dict[str, float] = {}
    free = dict.fromkeys(targets, 0.0)
    assign: dict[str, str] = {}
    for n in graph.nodes:
        name = n.name
        candidates = allowed(name) or list(targets)
        best: tuple[float, str] | None = None
        for dev in candidates:
            c = costs.cost(name, dev)
            if not math.isfinite(c):
                continue
            ready = 0.0
            for t in n.inputs:
                tensor = graph.tensors[t]
                if tensor.kind in ("weight", "kv_cache"):
                    continue
                if t in producers:
                    src_op = graph.nodes[producers[t]].name
                    arrive = finish[src_op] + transfer_s(node, assign[src_op], dev, tensor.bytes)
                else:
                    arrive = transfer_s(node, host, dev, tensor.bytes)
                ready = max(ready, arrive)
            end = max(ready, free[dev]) + c
            if best is None or end < best[0]:
                best = (end, dev)
        if best is None:
            tried = ", ".join(candidates)
            raise ConfigError(None, "op", name, f"no placement target can run it (tried {tried})")
        finish[name], dev = best
        free[dev] = best[0]
        assign[name] = dev
    return assign, max(finish.values(), default=0.0)
