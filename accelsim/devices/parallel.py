"""A model across the GPUs of a system: tensor and pipeline parallel steps.

``run_parallel(system, model, tp=N, pp=M)`` runs one step of a transformer sharded over
``tp x pp`` GPUs of ``system`` (a system YAML, or a GPU name standing for the built-in node
of that GPU: :func:`node_for`). Each pipeline stage is one tensor-parallel group; its rank 0
runs the sharded graph (:mod:`accelsim.workload.parallel`) through the single-GPU model
(:func:`accelsim.devices.gpu_model.run_gpu_model`) with every collective priced on the
system's topology by the link/NCCL model (:func:`accelsim.engine.collectives.run_collective`:
the GPU-side kernel time; in eager mode the host also pays ``collectives.issue_s`` per call).
A collective runs in the step's one stream, so nothing overlaps it (what vLLM's and
TensorRT-LLM's decode steps do). The ranks of a group run the same kernels and meet at every
collective, so rank 0's step is the group's step. Pipeline stages hand their activations on by
a point-to-point copy (:func:`accelsim.engine.links.run_copy`).

Totals: ``time_s`` is one step through every stage (its latency); ``pipeline_interval_s``
the slowest stage (the step rate of a full pipeline); energy is every GPU's (a rank's energy, its
share of the links' wire energy included, x ``tp``, summed over stages). Memory is checked per GPU
(weights of its shard, KV cache of its heads, activations, workspace). ``tp=1, pp=1`` is exactly the
single-GPU run.

**Expert parallelism** (``ep``, a mixture-of-experts model: :mod:`accelsim.workload.parallel`
has the layout): a stage uses ``tp x ep`` GPUs, ``ep`` attention groups of ``tp`` consecutive
GPUs; group 0's first GPU is the rank timed, with its TP group (the first ``tp`` GPUs of the
stage) for all-reduces and its EP group (the first GPU of every group) for the all-to-alls.
``tp x ep x pp`` must not exceed the system's GPUs (one line otherwise). Rank 0 runs
``ceil(batch / ep)`` of the step's sequences, the most any group runs, so its step is the
step; energy and FLOP are rank 0's x ``tp x ep`` (an upper bound when ``ep`` does not divide
the batch). ``ep=1`` is exactly the run without expert parallelism.

Units: seconds, bytes (decimal), joules.

Imports: units, errors, files, config.*, engine.collectives, engine.links, hw.link, workload.*,
devices.gpu_model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim.config.build import load_machine_dict
from accelsim.config.registry import load_machine
from accelsim.config.system import System
from accelsim.engine.collectives import run_collective
from accelsim.engine.links import run_copy
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.files import builtin_names
from accelsim.hw import link as hw_link
from accelsim.units import format_time
from accelsim.workload.graph import ModelGraph
from accelsim.workload.models import zoo
from accelsim.workload.models.hf_config import is_config_path, read_config, spec_from_config
from accelsim.workload.models.transformer import TransformerSpec, build_transformer
from accelsim.workload.parallel import (
    Collective,
    check_ep,
    check_tp,
    pipeline_stages,
    shard_spec,
    stage_graph,
    tensor_parallel,
)


def transformer_of(spec: str) -> tuple[TransformerSpec, ModelGraph]:
    """The architecture and the (unsharded) graph a model spec string names; parameters are
    checked as ``accelsim run`` checks them. Only transformers shard."""
    name = str(spec).partition(":")[0].strip()
    graph = zoo.from_spec(spec)
    if is_config_path(name):
        file, cfg = read_config(name)
        stem = Path(file).stem
        arch = spec_from_config(cfg, name=Path(file).parent.name if stem == "config" else stem,
                                file=file)
    elif name in zoo.SPECS:
        arch = zoo.SPECS[name]
    else:
        raise UnsupportedError(f"{name} is not a transformer: tensor and pipeline parallelism "
                               "shard transformers (zoo LLMs or a Hugging Face config.json)")
    return arch, graph


def rank_graphs(spec: str, tp: int = 1, pp: int = 1, ep: int = 1) -> list[ModelGraph]:
    """What rank 0 of each pipeline stage runs for model ``spec`` (``name:key=value,...``)."""
    arch, full = transformer_of(spec)
    tp = check_tp(arch, tp)
    ep = check_ep(arch, ep)
    stages = pipeline_stages(arch.layers, pp)
    p = full.params
    sharded = shard_spec(arch, tp, ep)
    extra = {}
    if ep > 1:  # data-parallel attention groups: rank 0's share of the sequences
        extra["routed_tokens"] = p["batch"] * p["seq"]
    rank = build_transformer(sharded, batch=-(-p["batch"] // ep), seq=p["seq"]
                             if p["mode"] != "decode" else p["context"], mode=p["mode"],
                             context=p["context"] if p["mode"] == "decode" else None,
                             dtype=p["dtype"], **extra)
    params = dict(rank.params, hidden=arch.hidden)
    if ep > 1:
        params["step_batch"] = p["batch"]  # the sequences of every attention group
    rank = ModelGraph(full.name, rank.nodes, rank.tensors, rank.outputs, params)
    rank = tensor_parallel(rank, sharded, tp, ep)
    if pp == 1:
        return [rank]
    return [stage_graph(rank, stages, s) for s in range(pp)]


def node_for(machine: Any) -> System:
    """The system ``machine`` names, or the largest built-in system made of GPU ``machine``
    (``h200`` -> ``hgx_h200_x8``); a one-line error when there is none."""
    if isinstance(machine, System):
        return machine
    loaded = load_machine(machine) if isinstance(machine, str) else machine
    if isinstance(loaded, System):
        return loaded
    name = getattr(loaded, "name", machine)
    best: System | None = None
    for candidate in builtin_names("hardware"):
        try:
            if load_machine_dict(candidate)[0].get("kind") != "system":
                continue
            s = load_machine(candidate)
        except Exception:  # noqa: BLE001 - a broken built-in is reported where it is used
            continue
        if all(d.hardware == name for d in s.devices) and (
                best is None or len(s.devices) > len(best.devices)):
            best = s
    if best is None:
        if getattr(loaded, "kind", None) != "gpu":
            raise ConfigError(str(name), "system", name, "no built-in system is made of it: "
                              "give a system YAML (devices, links) of GPUs")
        return single_gpu_system(loaded)
    return best


def single_gpu_system(gpu: Any) -> System:
    """A one-GPU system: ``gpu`` and a host on the GPU's own PCIe link (its ``host`` section's
    generation and lanes; the PCIe model's defaults otherwise). What a GPU with no built-in
    node serves on (tensor parallelism then needs a system YAML)."""
    from accelsim.config.schema import build

    data = {
        "name": f"{gpu.name}_x1", "kind": "system",
        "description": f"one {gpu.name} on its host's PCIe link",
        "devices": [{"name": "gpu0", "hardware": gpu.name}],
        "link_specs": [{"name": "pcie", "protocol": "pcie",
                        "generation": int(gpu.host.pcie_generation),
                        "lanes": int(gpu.host.pcie_lanes)}],
        "links": [{"name": "pcie0", "ends": ["host", "gpu0"], "spec": "pcie"}],
    }
    return build(System, data, file=f"<{gpu.name} alone>")


@dataclass
class CollectivePricer:
    """Prices the collectives of one tensor-parallel group on a system (cached by size)."""

    system: System
    ranks: list[str]
    peer: str | None = None
    """The next pipeline stage's first GPU (the destination of a ``send``)."""
    cache: dict = field(default_factory=dict)
    ep_ranks: list[str] | None = None
    """The rank's expert-parallel group (the GPUs its all-to-alls span)."""

    def __call__(self, op: Collective) -> tuple[float, float, float]:
        """(GPU seconds, host issue seconds, link joules) of ``op``."""
        key = (op.collective, op.bytes, op.ranks, op.group)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        issue = self.system.collectives.issue_s
        if op.collective == "send":
            if self.peer is None:
                raise UnsupportedError(f"{op.name}: a send needs a next pipeline stage")
            t = run_copy(self.system, self.ranks[0], self.peer, op.bytes)
            route = hw_link.find_route(self.system, self.ranks[0], self.peer)
            energy = sum(a["energy_pj"] for a in hw_link.transfer_actions(route, op.bytes)) * 1e-12
            out = (t, issue, energy)
        else:
            group = self.ranks if op.group == "tp" else (self.ep_ranks or [])
            if op.ranks != len(group):
                raise UnsupportedError(f"{op.name}: {op.ranks} ranks, its {op.group} group has "
                                       f"{len(group)}")
            r = run_collective(self.system, op.collective, op.bytes, ranks=group)
            # this rank's share of the wire energy (every rank sends as much)
            out = (float(r["time_s"]), issue, float(r["link_energy_j"]) / op.ranks)
        self.cache[key] = out
        return out


def check_gpus(system: System, tp: int, pp: int, replicas: int = 1, ep: int = 1) -> None:
    """Refuse a layout that needs more GPUs than ``system`` has (one line)."""
    need = tp * pp * replicas * ep
    if need > len(system.devices):
        label = ("tp x ep x pp" if ep > 1 else "tp x pp") + (" x replicas" if replicas > 1
                                                             else "")
        raise ConfigError(system.name, label, need,
                          f"needs {need} GPUs; {system.name} has {len(system.devices)}")


@dataclass
class ParallelRun:
    """One step of a model over ``tp x pp`` GPUs: rank 0 of each stage (``stages``)."""

    system: System
    workload: str
    tp: int
    pp: int
    stages: list[Any]
    ep: int = 1
    token_scale: float = 1.0
    """The step's sequences over rank 0's (expert parallelism: ``batch / ceil(batch / ep)``)."""

    @property
    def machine(self) -> Any:
        """The GPU each rank is."""
        return self.stages[0].machine

    @property
    def layers(self) -> pd.DataFrame:
        """Rank 0's per-op table of every stage (a ``stage`` column)."""
        return pd.concat([r.layers.assign(stage=s) for s, r in enumerate(self.stages)],
                         ignore_index=True)

    @property
    def totals(self) -> dict[str, Any]:
        """Step time (through every stage), pipeline interval, energy of every GPU."""
        per = [r.totals for r in self.stages]
        t = sum(p["time_s"] for p in per)
        group = self.tp * self.ep
        energy = sum(p["energy_j"] for p in per) * group
        comm = sum(float(r.layers.loc[r.layers["op"] == "collective", "time_s"].sum())
                   for r in self.stages)
        out = {"system": self.system.name, "tp": self.tp, "pp": self.pp,
               **({"ep": self.ep} if self.ep > 1 else {}),
               "gpus": group * self.pp, "exec_mode": per[0]["exec_mode"], "time_s": t,
               "pipeline_interval_s": max(p["time_s"] for p in per),
               "collective_s": comm, "flops": sum(p["flops"] for p in per) * group,
               "energy_j": energy, "average_power_w": energy / t if t else 0.0,
               "memory_per_gpu": [p.get("memory") for p in per]}
        tokens = per[-1].get("tokens_per_step")
        if tokens and self.token_scale != 1.0:  # every attention group's, not rank 0's
            tokens = tokens * self.token_scale
        if tokens:
            out["tokens_per_step"] = tokens
            out["tokens_per_s"] = tokens / t if t else 0.0
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON document: totals, and each stage's rank-0 document."""
        return {"system": self.system.name, "workload": self.workload, "tp": self.tp,
                "pp": self.pp, **({"ep": self.ep} if self.ep > 1 else {}),
                "totals": self.totals,
                "stages": [r.to_dict() for r in self.stages]}

    def __repr__(self) -> str:
        t = self.totals
        ep = f" ep={self.ep}" if self.ep > 1 else ""
        return (f"ParallelRun({self.workload} on {self.system.name}, tp={self.tp}{ep} "
                f"pp={self.pp}: "
                f"step {format_time(t['time_s'])}, collectives {format_time(t['collective_s'])})")


def run_parallel(machine: Any, model: str, *, tp: int = 1, pp: int = 1, ep: int = 1,
                 exec_mode: str | None = None, replay: str = "analytic") -> Any:
    """One step of ``model`` over ``tp x ep x pp`` GPUs of ``machine`` (see the module doc).
    ``tp=1, pp=1, ep=1`` returns the single-GPU :class:`~accelsim.devices.results.ModelRun`."""
    from accelsim.devices.gpu_model import DEFAULT_EXEC, run_gpu_model

    exec_mode = exec_mode or DEFAULT_EXEC
    loaded = machine if not isinstance(machine, str) else load_machine(machine)
    if not isinstance(loaded, System) and getattr(loaded, "kind", "gpu") != "gpu":
        flags, values = ("--tp/--pp/--ep", f"{tp}/{pp}/{ep}") if ep != 1 else \
            ("--tp/--pp", f"{tp}/{pp}")
        raise ConfigError(str(getattr(loaded, "name", machine)), flags, values,
                          f"a model across GPUs runs on GPUs and systems of GPUs, not on "
                          f"{loaded.kind} machines")
    if tp == 1 and pp == 1 and ep == 1 and not isinstance(loaded, System):
        return run_gpu_model(loaded, model, exec_mode=exec_mode, replay=replay)
    system = node_for(loaded)
    check_gpus(system, tp, pp, ep=ep)
    graphs = rank_graphs(model, tp, pp, ep)
    gpu = system.device_machine(system.device_names[0])
    if getattr(gpu, "kind", "gpu") != "gpu":
        raise UnsupportedError(f"{system.name}'s devices are {gpu.kind}s: tensor and pipeline "
                               "parallel steps run on GPUs")
    names = list(system.device_names)
    stages = []
    width = tp * ep  # GPUs of one stage: ep attention groups of tp GPUs
    for s, graph in enumerate(graphs):
        block = names[s * width:(s + 1) * width]
        peer = names[(s + 1) * width] if s + 1 < pp else None
        pricer = CollectivePricer(system, block[:tp], peer,
                                  ep_ranks=block[::tp] if ep > 1 else None)
        stages.append(run_gpu_model(gpu, graph, exec_mode=exec_mode, replay=replay,
                                    collective=pricer))
    p = graphs[0].params
    scale = p["step_batch"] / p["batch"] if "step_batch" in p else 1.0
    return ParallelRun(system, str(model), tp, pp, stages, ep, scale)


__all__ = ["CollectivePricer", "ParallelRun", "check_gpus", "node_for", "rank_graphs",
           "run_parallel", "transformer_of"]
