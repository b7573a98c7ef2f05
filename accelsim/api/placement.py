"""Heterogeneous placement on a node: predict each op's time on every device through the
device family's own model, place (greedy or pinned), run the placed graph on the SimPy
engine with link contention, and report; plus the seed's GPU+NPU co-training scenario.

    >>> from accelsim.api.placement import place_model
    >>> r = place_model("node_gpu_npu", "resnet50:batch=8", policy="greedy")
    >>> r.devices, r.transfers, r.makespan_s

The model is a zoo spec (a real graph), or a workload YAML/CSV path or built-in workload name
(``alexnet``, ``workloads/kernels/multikernelbench.yaml``), whose ops are taken as a chain in
file order: see :func:`graph_from_workload`.

Imports: accelsim (version), errors, files, config.node, devices, engine.placed, mapping.placement,
workload.*, api.compare.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from accelsim import __version__
from accelsim.config.node import Node, load_node
from accelsim.devices import device_for
from accelsim.engine.placed import PlacedRun, run_data_parallel, run_placed
from accelsim.errors import ConfigError, UnsupportedError, WorkloadError
from accelsim.mapping.placement import CostTable, Placement, place
from accelsim.workload.graph import GraphBuilder, ModelGraph
from accelsim.workload.models import zoo
from accelsim.workload.nn_ops import Elementwise
from accelsim.workload.ops import Conv2d, Gemm, Workload


def get_node(node: Node | str) -> Node:
    """A node from a built-in name, a path or an object."""
    return node if isinstance(node, Node) else load_node(node)


_COMPONENT = {"attention": "attention", "layernorm": "norm", "rmsnorm": "norm",
              "embedding": "embedding"}


def graph_from_workload(wl: Workload, default_dtype: str = "bf16") -> ModelGraph:
    """A placement graph from a plain :class:`Workload`: its ops as a chain in file order.

    Op ``i`` reads op ``i-1``'s output (its whole output tensor is what moves when the two run
    on different devices); the first op reads a graph input of its own input size, which
    starts on the host. Operands the chain does not produce (an attention's K/V, a GEMM's
    second activation operand) are graph inputs too; weights are created per op and are
    resident, as for zoo models. Tensors take the ops' common dtype, else ``default_dtype``.
    Duplicate op names get a ``#2``, ``#3`` suffix. A workload's ops need not really form a
    chain (a kernel suite does not): the chain is the simplest dependency order, not a fact
    of the file.
    """
    ops = list(wl.ops)
    if not ops:
        raise WorkloadError(wl.source or wl.name, "ops", [], "no ops to place")
    dtypes = {getattr(op, "dtype", None) for op in ops} - {None}
    dtype = dtypes.pop() if len(dtypes) == 1 else default_dtype
    b = GraphBuilder(wl.name, dtype)
    seen: dict[str, int] = {}
    prev: str | None = None
    for op in ops:
        if not hasattr(op, "tensor_elements"):
            raise UnsupportedError(f"{wl.name}: op {getattr(op, 'name', op)!r} "
                                   f"({type(op).__name__}) cannot be placed")
        name = op.name
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            op = dataclasses.replace(op, name=f"{name}#{seen[name]}")
        te = op.tensor_elements()
        ins = [prev] if prev is not None else [b.tensor("input", te.get("input", 0))]
        extra = [k for k, v in te.items() if v and k not in ("input", "output", "weight")]
        if "weight" in te and te["weight"] and not getattr(op, "shared_weights", True):
            extra.append("weight")
        ins += [b.tensor(f"{op.name}.{k}", te[k]) for k in extra]
        prev = b.add(op, ins, component=_COMPONENT.get(getattr(op, "kind", ""), "other"))
    return b.build()


def get_graph(model: ModelGraph | Workload | str) -> ModelGraph:
    """A model graph from a zoo spec (``"resnet50:batch=8"``), a workload YAML/CSV path or
    built-in workload name (ops chained in order, :func:`graph_from_workload`), a
    :class:`Workload` or a graph object. A zoo name wins over a workload of the same name."""
    if isinstance(model, ModelGraph):
        return model
    if isinstance(model, Workload):
        return graph_from_workload(model)
    spec = str(model)
    if zoo.is_zoo_spec(spec):
        return zoo.from_spec(spec)
    from accelsim.api.compare import load_kernels

    try:
        wl = load_kernels(spec)
    except WorkloadError as exc:
        if exc.field is not None:
            raise
        import difflib

        from accelsim.files import builtin_names

        known = zoo.names() + builtin_names("workloads", (".yaml", ".yml", ".csv"))
        near = difflib.get_close_matches(spec.partition(":")[0], known, n=1)
        hint = f"did you mean '{near[0]}'?" if near else "`accelsim list` shows them"
        raise WorkloadError(None, "model", spec, "not a zoo model spec, a workload YAML/CSV "
                            f"path or a built-in workload name ({hint})") from None
    if getattr(wl, "source", "").startswith("zoo:"):
        return zoo.from_spec(spec)
    return graph_from_workload(wl)


# ------------------------------------------------------------------- per-device op times
def op_times(machine: Any, ops: Sequence[object]) -> list[float]:
    """Predicted seconds of each op on ``machine`` (``inf`` where it cannot run it), through
    the machine's device (:func:`accelsim.devices.device_for`)."""
    return device_for(machine, source="placement").op_times(ops)


def cost_table(graph: ModelGraph, node: Node) -> CostTable:
    """Seconds of every op of ``graph`` on every target of ``node``, plus dispatch costs."""
    seconds: dict[str, dict[str, float]] = {n.name: {} for n in graph.nodes}
    for dev in node.targets:
        times = op_times(node.machine(dev), graph.ops)
        for n, t in zip(graph.nodes, times, strict=True):
            seconds[n.name][dev] = t
    launch = {d.name: d.op_launch_s for d in node.devices}
    if node.host.hardware:
        launch[node.host.name] = node.host.op_launch_s
    return CostTable(seconds, launch)


# ------------------------------------------------------------------------- the report
@dataclass
class PlaceReport:
    """A placed run: per-op table, per-device table, transfers, makespan, baselines."""

    node: Node
    graph: ModelGraph
    placement: Placement
    run: PlacedRun
    single_device_s: dict[str, float] = field(default_factory=dict)

    @property
    def makespan_s(self) -> float:
        """Simulated end-to-end seconds (inputs from the host, outputs back to it)."""
        return self.run.makespan_s

    @property
    def devices(self) -> pd.DataFrame:
        """Per device: ops, busy, idle, utilisation."""
        return self.run.per_device()

    @property
    def transfers(self) -> pd.DataFrame:
        """Per (src, dst): copies, bytes, summed copy seconds."""
        return self.run.per_link_pair()

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``accelsim place --json``."""
        return {"accelsim_version": __version__, "node": self.node.name,
                "model": self.graph.name, "policy": self.placement.policy,
                "pins": [f"{p}={d}" for p, d in self.placement.pins],
                "makespan_s": self.makespan_s, "estimate_s": self.placement.estimate_s,
                "single_device_s": self.single_device_s,
                "devices": self.devices.to_dict(orient="records"),
                "transfers": self.transfers.to_dict(orient="records"),
                "ops": self.run.ops.to_dict(orient="records")}


def place_model(node: Node | str, model: ModelGraph | str, *, policy: str = "greedy",
                pins: Sequence[str] | None = None, baselines: bool = True) -> PlaceReport:
    """Place ``model`` on ``node`` with ``policy`` and simulate it; see the module docstring.

    ``baselines``: also simulate the whole model on each single target (all ops pinned there),
    so the report says what placement bought over the best single device.
    """
    nd = get_node(node)
    graph = get_graph(model)
    costs = cost_table(graph, nd)
    placement = place(graph, nd, costs, policy=policy, pins=pins)
    run = run_placed(graph, nd, placement, costs)
    single: dict[str, float] = {}
    if baselines:
        for dev in nd.targets:
            if all(math.isfinite(costs.cost(n.name, dev)) for n in graph.nodes):
                one = Placement("single", {n.name: dev for n in graph.nodes}, 0.0)
                single[dev] = run_placed(graph, nd, one, costs).makespan_s
    return PlaceReport(nd, graph, placement, run, single)


# ------------------------------------------------------------- training and co-training
def training_ops(graph: ModelGraph) -> list[object]:
    """Forward + backward ops of one training step of ``graph`` (SGD with momentum).

    Per GEMM/conv with im2col shape ``(M, N, K)``: the forward op, the weight gradient
    ``dW[K x N] = X^T dY`` (a GEMM ``K x N x M``) and, unless the op reads only the graph
    input, the data gradient ``dX[M x K] = dY W^T`` (a GEMM ``M x K x N``). Per elementwise op:
    one backward elementwise op of the same size reading two tensors (gradient and saved
    input). Batch-norm statistics and pooling are not modelled (as in the forward graph). The
    optimizer update streams weights, gradients and momentum once (one ``mul`` over the
    parameters, counted as 3 reads + 1 write per element by two elementwise ops).
    """
    ops: list[object] = []
    inputs = {t for t, v in graph.tensors.items() if v.kind == "input"}
    for n in graph.nodes:
        op = n.op
        ops.append(op)
        dt = getattr(op, "dtype", None)
        if isinstance(op, (Gemm, Conv2d)):
            g = op.lower()
            shared = g.repeat == 1
            ops.append(Gemm(name=f"{op.name}.wgrad", m=g.k, n=g.n, k=g.m, batch=g.repeat,
                            shared_weights=shared, dtype=dt))
            acts = [t for t in n.inputs if graph.tensors[t].kind == "activation"]
            if acts or not set(n.inputs) & inputs:
                ops.append(Gemm(name=f"{op.name}.dgrad", m=g.m, n=g.k, k=g.n, batch=g.repeat,
                                shared_weights=shared, dtype=dt))
        elif isinstance(op, Elementwise):
            ops.append(Elementwise(name=f"{op.name}.bwd", rows=op.rows, cols=op.cols, fn="mul",
                                   dtype=dt))
    params = graph.parameter_count()
    dt = graph.params.get("dtype")
    ops.append(Elementwise(name="sgd.update", rows=1, cols=params, fn="mul", dtype=dt))
    ops.append(Elementwise(name="sgd.momentum", rows=1, cols=params, fn="add", dtype=dt))
    return ops


def training_step_s(node: Node, device: str, model: str, batch: int) -> float:
    """Seconds of one training step of ``model`` at ``batch`` on one device (0 for batch 0),
    dispatch cost per op included."""
    if batch <= 0:
        return 0.0
    name, params = zoo.parse_spec(model)
    graph = zoo.get(name, **{**params, "batch": batch})
    ops = training_ops(graph)
    d = node.device(device)
    times = op_times(node.machine(device), ops)
    if not all(math.isfinite(t) for t in times):
        raise ConfigError(node.name, "device", device, f"cannot run every op of {model}")
    return sum(times) + d.op_launch_s * len(ops)


def cotrain(node: Node | str = "node_gpu_npu", model: str = "resnet50", *, batch: int = 256,
            devices: Sequence[str] = ("gpu0", "npu0"), grad_dtype_bytes: float = 2.0,
            steps: int = 9, quantum: int = 8) -> dict[str, Any]:
    """The seed's GPU+NPU data-parallel co-training: split ``batch`` between ``devices``.

    For ``steps`` candidate splits of the batch between the first device and the rest (the
    throughput-proportional split and its neighbours, per-device batches multiples of
    ``quantum`` as frameworks pick them for tensor cores; the rest split in proportion to
    their single-device speed), each device's training-step time
    is predicted, then the gradient all-reduce over the node's links is simulated
    (:func:`accelsim.engine.placed.run_data_parallel`). Returns the single-device baselines,
    the best split, throughputs (images/s), the speedup over the best single device, and the
    power ratio from the node's ``power_w`` figures.
    """
    nd = get_node(node)
    devs = list(devices)
    graph = zoo.from_spec(model) if ":" in model else zoo.get(model, batch=1)
    grad_bytes = graph.parameter_count() * grad_dtype_bytes
    alone = {d: training_step_s(nd, d, model, batch) for d in devs}
    best_dev = min(alone, key=alone.get)
    rate = {d: batch / alone[d] for d in devs}  # images/s alone
    total_rate = sum(rate.values())
    # splits around the throughput-proportional one
    share0 = rate[devs[0]] / total_rate
    rows = []
    seen: set[int] = set()
    center = int(round(batch * share0 / quantum)) * quantum
    for i in range(steps):
        b0 = min(batch, max(0, center + (i - steps // 2) * quantum))
        if b0 in seen:
            continue
        seen.add(b0)
        rest = batch - b0
        split = {devs[0]: b0}
        others = devs[1:]
        orate = sum(rate[d] for d in others)
        for j, d in enumerate(others):
            split[d] = rest - sum(split[o] for o in others[:j]) if j == len(others) - 1 \
                else int(round(rest * rate[d] / orate / quantum)) * quantum
        step = {d: training_step_s(nd, d, model, split[d]) for d in devs}
        active = {d: s for d, s in step.items() if split[d] > 0}
        ex = run_data_parallel(nd, active, grad_bytes) if len(active) > 1 else \
            {"compute_s": max(active.values()), "exchange_s": 0.0,
             "step_s": max(active.values())}
        rows.append({**{f"batch_{d}": split[d] for d in devs},
                     **{f"step_{d}_s": step[d] for d in devs}, **ex,
                     "images_per_s": batch / ex["step_s"],
                     "images_per_s_overlapped": batch / max(ex["compute_s"], ex["exchange_s"])})
    table = pd.DataFrame(rows)
    best = table.loc[table["images_per_s"].idxmax()].to_dict()
    base_ips = batch / alone[best_dev]
    power = {d: nd.device(d).power_w for d in devs}
    p_alone = power[best_dev]
    p_all = sum(p for p in power.values() if p) if all(power.values()) else None
    return {"model": model, "batch": batch, "grad_bytes": grad_bytes,
            "alone_step_s": alone, "alone_images_per_s": {d: batch / alone[d] for d in devs},
            "best_single": best_dev, "best_single_images_per_s": base_ips,
            "best_split": best, "speedup": best["images_per_s"] / base_ips,
            "speedup_overlapped": best["images_per_s_overlapped"] / base_ips,
            "power_ratio": (p_all / p_alone) if p_all and p_alone else None,
            "splits": table}
