"""Run a placed model graph on a heterogeneous node, on the one clock (SimPy).

* Each placement target (accelerators and the computing host) is a compute stream, a
  ``Resource(capacity=1)``: ops on one device run one at a time, in the order their inputs
  arrive (ties by graph order).
* A tensor produced on device ``A`` and read on ``B`` is copied once per ``(tensor, B)`` by
  :meth:`accelsim.engine.links.LinkNetwork.copy`: it holds a copy engine and the link
  directions of its route, so concurrent copies that share a link take turns chunk by chunk
  (real contention), and a GPU-to-NPU copy with no peer link is staged through the host.
* Graph inputs start in host memory; graph outputs are copied back to the host at the end.
* An op starts when all its activation inputs are on its device and its device is free; it
  holds the device for its predicted seconds plus the device's dispatch cost.

Weights are resident on every device (see :mod:`accelsim.mapping.placement`).

Imports: config.node, mapping.placement, workload.graph, engine.links.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass

import pandas as pd
import simpy

from accelsim.config.node import Node
from accelsim.engine.links import LinkNetwork
from accelsim.mapping.placement import CostTable, Placement
from accelsim.workload.graph import ModelGraph

Proc = Generator[simpy.Event, object, None]


@dataclass
class PlacedRun:
    """What happened: one record per op and per copy (plain data), and the makespan."""

    makespan_s: float
    ops: pd.DataFrame
    """Columns: op, device, start_s, end_s, busy_s (compute + dispatch), wait_s (inputs)."""
    transfers: pd.DataFrame
    """Columns: tensor, src, dst, bytes, start_s, end_s, time_s."""
    targets: tuple[str, ...]

    def per_device(self) -> pd.DataFrame:
        """Per target: ops, busy seconds, idle seconds (makespan - busy), utilisation."""
        rows = []
        for d in self.targets:
            sel = self.ops[self.ops["device"] == d]
            busy = float(sel["busy_s"].sum())
            rows.append({"device": d, "ops": len(sel), "busy_s": busy,
                         "idle_s": self.makespan_s - busy,
                         "util": busy / self.makespan_s if self.makespan_s else 0.0})
        return pd.DataFrame(rows)

    def per_link_pair(self) -> pd.DataFrame:
        """Transfers grouped by (src, dst): count, bytes, summed copy seconds."""
        if self.transfers.empty:
            return pd.DataFrame(columns=["src", "dst", "copies", "bytes", "time_s"])
        g = self.transfers.groupby(["src", "dst"], sort=False)
        return g.agg(copies=("bytes", "size"), bytes=("bytes", "sum"),
                     time_s=("time_s", "sum")).reset_index()


class _Runner:
    def __init__(self, graph: ModelGraph, node: Node, placement: Placement, costs: CostTable):
        self.env = simpy.Environment()
        self.graph, self.node, self.placement, self.costs = graph, node, placement, costs
        self.net = LinkNetwork(self.env, node.system)
        self.streams = {d: simpy.Resource(self.env, capacity=1) for d in node.targets}
        self.ready: dict[tuple[str, str], simpy.Event] = {}  # (tensor, device) -> on device
        self.produced: dict[str, simpy.Event] = {}
        self.op_recs: list[dict] = []
        self.copy_recs: list[dict] = []
        self.home: dict[str, str] = {}

    def tensor_on(self, tensor: str, device: str) -> simpy.Event:
        """Event that fires when ``tensor`` is in ``device``'s memory (starts a copy once)."""
        key = (tensor, device)
        if key not in self.ready:
            ev = self.env.event()
            self.ready[key] = ev
            self.env.process(self._fetch(tensor, device, ev))
        return self.ready[key]

    def _fetch(self, tensor: str, device: str, done: simpy.Event) -> Proc:
        yield self.produced[tensor]
        src = self.home[tensor]
        if src != device:
            nbytes = self.graph.tensors[tensor].bytes
            start = self.env.now
            yield from self.net.copy(src, device, nbytes, name=tensor)
            self.copy_recs.append({"tensor": tensor, "src": src, "dst": device, "bytes": nbytes,
                                   "start_s": start, "end_s": self.env.now,
                                   "time_s": self.env.now - start})
        done.succeed()

    def op(self, i: int) -> Proc:
        n = self.graph.nodes[i]
        dev = self.placement.assign[n.name]
        t0 = self.env.now
        needs = [self.tensor_on(t, dev) for t in n.inputs
                 if self.graph.tensors[t].kind not in ("weight", "kv_cache")]
        if needs:
            yield self.env.all_of(needs)
        arrived = self.env.now
        with self.streams[dev].request() as req:
            yield req
            start = self.env.now
            busy = self.costs.cost(n.name, dev)
            yield self.env.timeout(busy)
        for t in n.outputs:
            self.home[t] = dev
            self.produced[t].succeed()
        self.op_recs.append({"op": n.name, "device": dev, "start_s": start, "end_s": self.env.now,
                             "busy_s": busy, "wait_s": arrived - t0})

    def run(self) -> PlacedRun:
        host = self.node.host.name
        for t, tensor in self.graph.tensors.items():
            self.produced[t] = self.env.event()
            if tensor.kind == "input":
                self.home[t] = host
                self.produced[t].succeed()
        for i in range(len(self.graph.nodes)):
            self.env.process(self.op(i))
        for t in self.graph.outputs:
            self.tensor_on(t, host)
        self.env.run()
        ops = (pd.DataFrame(self.op_recs).sort_values("start_s", kind="stable")
               .reset_index(drop=True))
        tr = pd.DataFrame(self.copy_recs, columns=["tensor", "src", "dst", "bytes", "start_s",
                                                   "end_s", "time_s"])
        return PlacedRun(self.env.now, ops, tr, self.node.targets)


def run_placed(graph: ModelGraph, node: Node, placement: Placement, costs: CostTable) -> PlacedRun:
    """Simulate ``graph`` placed on ``node``; see the module docstring."""
    return _Runner(graph, node, placement, costs).run()


def run_data_parallel(node: Node, step_s: Mapping[str, float], grad_bytes: float, *,
                      exchange: str = "allreduce") -> dict[str, float]:
    """One data-parallel training step: each device computes its share of the batch
    (``step_s[device]`` seconds, forward + backward), then the devices exchange gradients.

    ``exchange="allreduce"``: every device sends its gradients to every other device in two
    phases (reduce-scatter then all-gather, each device sends ``(n-1)/n`` of ``grad_bytes`` per
    phase), all copies concurrent so that shared links contend. Returns ``compute_s`` (slowest
    device), ``exchange_s`` and ``step_s`` (their sum: no overlap of gradient traffic with the
    backward pass; the overlapped bound is ``max``).
    """
    env = simpy.Environment()
    net = LinkNetwork(env, node.system)
    devs = list(step_s)
    n = len(devs)
    done_compute = {d: env.event() for d in devs}

    def compute(d: str) -> Proc:
        yield env.timeout(step_s[d])
        done_compute[d].succeed()

    for d in devs:
        env.process(compute(d))
    compute_s = max(step_s.values())
    piece = grad_bytes / n if n > 1 else 0.0

    def phase() -> Proc:
        yield env.all_of(list(done_compute.values()))
        for _ in range(2):  # reduce-scatter, all-gather
            procs = [env.process(net.copy(a, b, piece, name=f"grad {a}->{b}"))
                     for a in devs for b in devs if a != b]
            if procs:
                yield env.all_of(procs)

    env.process(phase())
    env.run()
    return {"compute_s": compute_s, "exchange_s": env.now - compute_s, "step_s": env.now}
