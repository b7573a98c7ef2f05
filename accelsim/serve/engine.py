"""Serving engines as data: ``configs/engines/<name>.yaml`` (vLLM, SGLang, TensorRT-LLM).

An engine config holds what an engine decides that the hardware does not: how many sequences
and tokens one iteration may hold, whether prompts are chunked, the KV-cache block size and
memory fraction, the KV-cache precision, which decode batches replay a captured CUDA graph,
how a sequence is preempted, the CPU time per iteration the GPU waits for, and which lowering
table (``configs/lowering/``) gives the kernels of one model step. Every field can be
overridden (``accelsim serve ... --set max_num_seqs=128``). Units: tokens, seconds, bytes.

Imports: errors, files, config.schema.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accelsim.config.schema import build, fraction, param, positive
from accelsim.errors import ConfigError
from accelsim.files import builtin_names, read_yaml, resolve_path

PREEMPTION = ("recompute", "swap")
ADMISSION = ("greedy", "reserve")
ROUTERS = ("least_outstanding", "round_robin")
KV_DTYPES = ("auto", "bf16", "fp16", "fp8")
MEMORY_BASES = ("total", "free")


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineConfig:
    """One serving engine's scheduling and memory settings."""

    name: str = param("Short name.")
    description: str = param("One line on the engine.", default="")
    lowering: str = param("Lowering table of one model step (configs/lowering/).",
                          default="serving")
    max_num_seqs: int = param("Sequences one iteration may hold.", check=positive)
    max_num_batched_tokens: int = param("Tokens one iteration may process.", check=positive)
    chunked_prefill: bool = param("Prompts longer than the token budget are split over "
                                  "iterations and mixed with decodes.", default=True)
    kv_block_tokens: int = param("Tokens per KV-cache block (page).", check=positive)
    gpu_memory_utilization: float = param("Fraction of memory the engine may use: of the "
                                          "GPU's HBM for weights, activations and KV cache "
                                          "(gpu_memory_fraction_of: total), or of what is "
                                          "left after them for the KV cache (free).",
                                          check=fraction)
    gpu_memory_fraction_of: str = param("total: the fraction is of the whole HBM and must "
                                        "hold weights, activations and KV cache (vLLM's "
                                        "gpu_memory_utilization, SGLang's mem_fraction_static); "
                                        "free: it is of the memory free once weights and "
                                        "activations are allocated, and holds the KV cache "
                                        "alone (TensorRT-LLM's free_gpu_memory_fraction).",
                                        default="total", choices=MEMORY_BASES)
    max_kv_tokens: int = param("Cap on the KV cache, tokens per GPU group (0: what memory "
                               "allows; SGLang's --max-total-tokens).", default=0,
                               check=lambda v: None if v >= 0 else "must be >= 0")
    kv_cache_dtype: str = param("KV-cache precision (auto: the model's).", default="auto",
                                choices=KV_DTYPES)
    cuda_graph_max_batch: int = param("Decode-only iterations up to this batch replay a "
                                      "captured graph (padded to a capture size).",
                                      default=0, check=lambda v: None if v >= 0 else "must be >= 0")
    cuda_graph_step: int = param("Capture sizes: 1, 2, 4, then multiples of this.", default=8,
                                 check=positive)
    admission: str = param("greedy: admit a request when its first chunk's KV blocks are "
                           "free (preempt later when the pool runs out: vLLM); reserve: "
                           "admit only when blocks for its prompt and every output token are "
                           "free, so nothing is ever evicted (TensorRT-LLM's "
                           "GUARANTEED_NO_EVICT capacity scheduler).", default="greedy",
                           choices=ADMISSION)
    preemption: str = param("What happens to a sequence evicted for KV space.",
                            default="recompute", choices=PREEMPTION)
    step_overhead_s: float = param("Engine CPU time per iteration the GPU waits for, s.",
                                   default=0.0, check=lambda v: None if v >= 0 else "must be >= 0")
    router: str = param("How data-parallel replicas share arrivals.",
                        default="least_outstanding", choices=ROUTERS)
    provenance: dict = param("Where values come from (field -> datasheet, estimated, "
                             "fitted on X).", default={})
    source: str = param("The file read.", default="")

    def graph_batch(self, decode: int) -> int | None:
        """The captured batch size a decode-only iteration of ``decode`` sequences pads to,
        or None (beyond the largest: runs without a graph, unpadded)."""
        if decode > self.cuda_graph_max_batch:
            return None
        for size in (1, 2, 4):
            if decode <= size:
                return size
        step = self.cuda_graph_step
        return min(self.cuda_graph_max_batch, -(-decode // step) * step)


def load_engine(name_or_path: str | os.PathLike,
                overrides: Mapping[str, Any] | None = None) -> EngineConfig:
    """Engine ``configs/engines/<name>.yaml`` (or a path), ``overrides`` (field -> value)
    applied; one-line errors name the file (or ``--set``) and the field."""
    try:
        path = resolve_path(name_or_path, "engines")
    except ConfigError:
        raise ConfigError("--engine", "engine", str(name_or_path),
                          f"no such engine (built-in: {', '.join(builtin_names('engines'))})"
                          ) from None
    file = str(path)
    data = dict(read_yaml(path))
    data["source"] = file
    if overrides:
        fields = set(EngineConfig.__dataclass_fields__) - {"source"}
        for key, value in overrides.items():
            if key not in fields:
                raise ConfigError("--set", key, value,
                                  f"not an engine field (fields: {', '.join(sorted(fields))})")
            data[key] = value
        return build(EngineConfig, data, file="--set")
    return build(EngineConfig, data, file=file)


__all__ = ["ADMISSION", "EngineConfig", "KV_DTYPES", "PREEMPTION", "ROUTERS", "load_engine"]
