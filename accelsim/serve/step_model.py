"""One serving-engine iteration on a tensor/pipeline-parallel GPU group: its time and energy,
cached by batch composition; and how many KV-cache blocks the group holds.

An iteration's graph is :func:`accelsim.workload.parallel.step_graph` (token-wise ops over
all its tokens, attention per group of sequences, the collectives of tensor parallelism),
cut into pipeline stages and run stage by stage through the GPU model with the engine's
lowering table (``configs/lowering/serving.yaml``: merged projections, fused kernels, one
CUDA-graph launch). The layers of a stage are identical, and a captured graph's step is the
sum of its kernels, so a stage of ``L`` layers costs ``t(1) + (L - 1) (t(2) - t(1))`` where
``t(k)`` is the same stage built with ``k`` layers (held equal to the full build by a test).

**Composition key** (what the cache is keyed by; the model's resolution):

* decode-only iterations up to the engine's ``cuda_graph_max_batch`` are padded to a capture
  size (:meth:`EngineConfig.graph_batch`): the padded rows run every token-wise op;
* the decode group's mean context is rounded to the nearest of 16 values per octave
  (<= 3.1 % off), so an attention kernel's KV reads are within that of the exact sum;
* prefill chunks are grouped by (new tokens rounded up to a multiple of 16, cached positions
  rounded as contexts are); each group's attention runs once with ``batch`` = its count.

:meth:`StepModel.evaluate` computes a key directly; :meth:`StepModel.step` caches it (a test
holds the two equal). The GPUs run sustained (``GpuMachine.sustained``: a serving engine keeps
them at load for minutes, where the power cap holds a tensor-core GEMM's clock below what the
short calibration timings saw). Units: seconds, joules, bytes (decimal), tokens.

Imports: errors, precision, config.lowering, config.system, devices.*, hw.link, report.energy,
report.power, workload.graph, workload.models.transformer, workload.parallel, serve.engine.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from accelsim.config.lowering import load_lowering
from accelsim.config.system import System
from accelsim.devices.gpu_model import framework_ops, step_totals
from accelsim.devices.memory_check import check_memory
from accelsim.devices.parallel import CollectivePricer, check_gpus
from accelsim.devices.results import machine_hash
from accelsim.errors import UnsupportedError
from accelsim.precision import PRECISION_BYTES
from accelsim.serve.engine import EngineConfig
from accelsim.workload.graph import ModelGraph
from accelsim.workload.models.transformer import TransformerSpec
from accelsim.workload.parallel import (
    PrefillChunk,
    StepBatch,
    check_tp,
    pipeline_stages,
    shard_spec,
    stage_graph,
    step_graph,
)

_SHARED_COSTS: dict[str, dict] = {}
"""Kernel costs by shape, per GPU configuration (its parameter hash): every step model of the
same GPU in a process shares them (a sweep or a notebook builds many)."""

_SHARED_STEPS: dict[tuple, dict] = {}
"""Iteration costs by composition, per (GPU, system, GPUs, model, layout, precision, engine
step): what a configuration search re-uses across its points."""

StepKey = tuple[int, int, tuple[tuple[int, int, int], ...]]
"""(decode rows run, decode mean context, ((chunk tokens, cached, count), ...))."""


def context_bucket(positions: int) -> int:
    """``positions`` rounded to the nearest of 16 values per octave (exact up to 32)."""
    if positions <= 32:
        return max(1, int(positions))
    step = 2 ** (int(math.floor(math.log2(positions))) - 4)
    return int(round(positions / step)) * step


def tokens_bucket(tokens: int) -> int:
    """New prompt tokens rounded up to a multiple of 16."""
    return -(-int(tokens) // 16) * 16


@dataclass(frozen=True, slots=True)
class StepCost:
    """One iteration: each pipeline stage's seconds and every GPU's joules."""

    stage_s: tuple[float, ...]
    energy_j: float

    @property
    def time_s(self) -> float:
        """Through every stage (the iteration's latency)."""
        return float(sum(self.stage_s))


class StepModel:
    """Iteration times of ``arch`` on ``tp x pp`` GPUs of ``system`` starting at GPU
    ``first_gpu``, run by ``engine`` (see the module doc); ``gpu``: the GPU config each rank
    is (default: the system's; a changed GPU, e.g. more HBM, on the same topology)."""

    def __init__(self, system: System, arch: TransformerSpec, engine: EngineConfig, *,
                 tp: int = 1, pp: int = 1, dtype: str = "bf16", first_gpu: int = 0,
                 gpu: Any = None) -> None:
        self.system, self.arch, self.engine = system, arch, engine
        self.tp = check_tp(arch, tp)
        self.pp = pp
        self.stages = pipeline_stages(arch.layers, pp)
        check_gpus(system, tp * pp + first_gpu, 1)
        names = list(system.device_names)[first_gpu:first_gpu + tp * pp]
        self.gpus = names
        self.gpu = gpu if gpu is not None else system.device_machine(names[0])
        if getattr(self.gpu, "kind", "gpu") != "gpu":
            raise UnsupportedError(f"{system.name}'s devices are {self.gpu.kind}s: serving "
                                   "runs on GPUs")
        # an engine keeps its GPUs at load for minutes: the power-capped clocks of a sustained
        # load, not those of the short timings the GEMM model was fitted on
        self.gpu = self.gpu.sustained()
        if dtype not in PRECISION_BYTES or not self.gpu.supports(dtype):
            raise UnsupportedError(f"{self.gpu.name} has no {dtype} tensor cores")
        self.dtype = dtype
        self.pricers = [CollectivePricer(system, names[s * tp:(s + 1) * tp],
                                         names[(s + 1) * tp] if s + 1 < pp else None)
                        for s in range(pp)]
        gpu_id = machine_hash(self.gpu)
        self._costs = _SHARED_COSTS.setdefault(gpu_id, {})
        # iteration costs depend on the GPUs, the model, the layout and the engine's step, not
        # on its scheduling limits: step models that agree on those share one cache
        self.cache: dict[StepKey, StepCost] = _SHARED_STEPS.setdefault(
            (gpu_id, system.name, tuple(names), arch, tp, pp, dtype, engine.lowering,
             engine.step_overhead_s, engine.cuda_graph_max_batch, engine.cuda_graph_step), {})
        self.evaluations = 0

    # --- composition ---------------------------------------------------------------------
    def key(self, batch: StepBatch) -> StepKey:
        """The cache key of ``batch`` (see the module doc)."""
        rows, ctx = 0, 0
        if batch.decode:
            rows = batch.decode
            if not batch.prefill:
                rows = self.engine.graph_batch(batch.decode) or batch.decode
            ctx = context_bucket(-(-batch.decode_context // batch.decode))
        groups: dict[tuple[int, int], int] = {}
        for c in batch.prefill:
            k = (tokens_bucket(c.tokens), context_bucket(c.cached) if c.cached else 0)
            groups[k] = groups.get(k, 0) + 1
        return rows, ctx, tuple(sorted((t, c, n) for (t, c), n in groups.items()))

    # --- evaluation ----------------------------------------------------------------------
    def _graph(self, layers: int, key: StepKey) -> ModelGraph:
        rows, ctx, groups = key
        batch = StepBatch(decode=rows, decode_context=rows * ctx,
                          prefill=tuple(PrefillChunk(t, c) for t, c, n in groups
                                        for _ in range(n)))
        return step_graph(dataclasses.replace(self.arch, layers=layers), batch,
                          dtype=self.dtype, tp=self.tp)

    def stage_graph(self, graph: ModelGraph, stage: int) -> ModelGraph:
        """``graph``'s nodes that pipeline stage ``stage`` runs (all of them when pp = 1)."""
        if self.pp == 1:
            return graph
        spans = [range(0, 0)] * len(self.stages)
        spans[stage] = range(0, len({n.layer for n in graph.nodes if n.layer is not None}))
        return stage_graph(graph, spans, stage)

    def _stage_run(self, graph: ModelGraph, stage: int) -> dict[str, float]:
        return step_totals(self.gpu, self.stage_graph(graph, stage),
                           exec_mode=self.engine.lowering, collective=self.pricers[stage],
                           cost_cache=self._costs)

    def evaluate(self, key: StepKey) -> StepCost:
        """One iteration of composition ``key``, computed (no cache)."""
        self.evaluations += 1
        one = self._graph(1, key)
        two = self._graph(2, key) if any(len(s) > 1 for s in self.stages) else None
        stage_s, energy = [], 0.0
        for s, span in enumerate(self.stages):
            r1 = self._stage_run(one, s)
            t, e = r1["time_s"], r1["energy_j"]
            if len(span) > 1 and two is not None:
                r2 = self._stage_run(two, s)
                t += (len(span) - 1) * (r2["time_s"] - r1["time_s"])
                e += (len(span) - 1) * (r2["energy_j"] - r1["energy_j"])
            stage_s.append(t + (self.engine.step_overhead_s if s == 0 else 0.0))
            energy += e * self.tp
        return StepCost(tuple(stage_s), energy)

    def step(self, batch: StepBatch) -> StepCost:
        """One iteration over ``batch`` (cached by :meth:`key`)."""
        key = self.key(batch)
        hit = self.cache.get(key)
        if hit is None:
            hit = self.cache[key] = self.evaluate(key)
        return hit

    @property
    def idle_power_w(self) -> float:
        """Static power one GPU draws while the engine waits (W)."""
        from accelsim.report.energy import energy_table_for
        from accelsim.report.power import static_power_w

        return float(sum(static_power_w(self.gpu, energy_table_for(self.gpu)).values()))

    # --- memory --------------------------------------------------------------------------
    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token takes on the GPU holding the most layers."""
        rank = shard_spec(self.arch, self.tp)
        kv_dtype = self.dtype if self.engine.kv_cache_dtype == "auto" \
            else self.engine.kv_cache_dtype
        layers = max(len(s) for s in self.stages)
        return 2 * layers * rank.kv * rank.dh * PRECISION_BYTES[kv_dtype]

    def kv_copy_s(self, other: StepModel, nbytes: float) -> float:
        """Seconds to copy ``nbytes`` of KV cache from this group's GPUs to ``other``'s (every
        rank sends its share at once, GPU i to GPU i: the slowest pair's copy)."""
        from accelsim.hw import link as hw_link

        pairs = [(a, b) for a, b in zip(self.gpus, other.gpus, strict=False) if a != b]
        if not nbytes or not pairs:
            return 0.0
        share = nbytes / len(self.gpus)
        return max(hw_link.copy_time_s(hw_link.find_route(self.system, a, b), share)
                   for a, b in pairs)

    def kv_blocks(self) -> int:
        """KV-cache blocks each GPU of the group holds: the engine's share of HBM less the
        weights, peak activations and workspace of the largest stage (``total``), or its share
        of what those leave free (``free``: :attr:`EngineConfig.gpu_memory_fraction_of`)."""
        tokens = self.engine.max_num_batched_tokens  # the largest iteration the engine runs
        window = self.arch.context_window or self.arch.max_positions or tokens
        chunks = [PrefillChunk(window)] * (tokens // window)
        if tokens % window:
            chunks.append(PrefillChunk(tokens % window))
        full = step_graph(self.arch, StepBatch(prefill=tuple(chunks)), dtype=self.dtype,
                          tp=self.tp)
        free = math.inf
        for s in range(self.pp):
            g = stage_graph(full, self.stages, s) if self.pp > 1 else full
            # the ops the engine runs: attention fused (FlashAttention materialises no score
            # matrix), so activations are those of the fused step, as `accelsim run` checks
            merge = load_lowering(self.engine.lowering).merge_projections
            wl, ops, _ = framework_ops(g, merge_projections=merge)
            mem = check_memory(self.gpu, wl, ops, graph=g, refuse=False)
            # the step's own K/V live in the paged pool: not subtracted from it
            used = mem.weights_bytes + mem.activation_bytes + mem.workspace_bytes
            share = self.engine.gpu_memory_utilization
            if self.engine.gpu_memory_fraction_of == "free":  # TensorRT-LLM
                free = min(free, share * max(0.0, mem.capacity_bytes - used))
            else:
                free = min(free, share * mem.capacity_bytes - used)
        block = self.engine.kv_block_tokens * self.kv_bytes_per_token
        blocks = max(0, int(free // block))
        if self.engine.max_kv_tokens:
            blocks = min(blocks, self.engine.max_kv_tokens // self.engine.kv_block_tokens)
        return blocks

    def weights_bytes_per_gpu(self) -> float:
        """Weights on the GPU holding the largest stage."""
        batch = StepBatch(decode=1, decode_context=1)
        full = step_graph(self.arch, batch, dtype=self.dtype, tp=self.tp)
        out = 0.0
        for s in range(self.pp):
            g = stage_graph(full, self.stages, s) if self.pp > 1 else full
            out = max(out, sum(t.bytes for t in g.tensors.values() if t.kind == "weight"))
        return out


__all__ = ["StepCost", "StepKey", "StepModel", "context_bucket", "tokens_bucket"]
