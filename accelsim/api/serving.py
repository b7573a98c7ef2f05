"""``serve()``: an LLM served on simulated GPUs, a request stream in, what users read out.

``serve("h100", "llama3_70b", tp=2, isl=1024, osl=128, requests=1000, rate="inf")`` runs the
discrete-event serving engine of :mod:`accelsim.serve.simulator` with the engine config of
``configs/engines/`` (``engine="vllm"``; ``overrides`` change any field) on ``replicas``
data-parallel copies of a ``tp x pp`` group of the system's GPUs (a GPU name stands for the
built-in node of that GPU; a GPU config object, e.g. ``load_machine("h200", {...})`` with
more HBM, runs on that node's topology). The result has the summary (``summary``: throughput,
TTFT, TPOT, ITL and end-to-end latency with mean/p50/p90/p99, goodput under ``slo``, KV-cache use,
preemptions, GPU busy share, energy per token), one row per request (``requests``) and per
iteration (``iterations``), ``timeline_figure()`` (batch size and KV use over time) and
``perfetto()`` (a trace of the iterations). Units: seconds, tokens, joules.

Imports: accelsim (version), errors, precision, config.system, devices.parallel,
report.plots_serving, serve.*.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from accelsim import __version__
from accelsim.devices.parallel import check_gpus, node_for, transformer_of
from accelsim.errors import ConfigError
from accelsim.precision import PRECISION_BYTES
from accelsim.serve.engine import EngineConfig, load_engine
from accelsim.serve.metrics import iteration_table, parse_slo, request_table, summary
from accelsim.serve.requests import Request, fixed_requests, parse_rate, read_trace
from accelsim.serve.simulator import ServingSimulation
from accelsim.serve.step_model import StepModel


@dataclass
class ServeResult:
    """One serving run: its settings, summary and tables (see the module doc)."""

    settings: dict[str, Any]
    summary: dict[str, Any]
    requests: pd.DataFrame
    iterations: pd.DataFrame
    simulation: ServingSimulation

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``accelsim serve --json``."""
        return {"accelsim": __version__, "settings": self.settings, **self.summary}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON (NaN written as null)."""
        def clean(v: Any) -> Any:
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v
        return json.dumps(clean(self.to_dict()), indent=2)

    def timeline_figure(self):
        """Batch size and KV-cache use over time (matplotlib figure; backend untouched)."""
        from accelsim.report.plots_serving import timeline_figure

        return timeline_figure(self.iterations, self.settings)

    def perfetto(self) -> dict:
        """A Perfetto/Chrome trace of the iterations (one track per replica)."""
        events = []
        for row in self.iterations.itertuples():
            events.append({"name": f"iter d={row.decode} p={row.prefill_tokens}", "ph": "X",
                           "pid": 0, "tid": int(row.replica), "ts": row.start_s * 1e6,
                           "dur": (row.end_s - row.start_s) * 1e6,
                           "args": {"decode": int(row.decode),
                                    "prefill_tokens": int(row.prefill_tokens),
                                    "kv_blocks_used": int(row.kv_blocks_used)}})
        for r in range(self.settings["replicas"]):
            events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": r,
                           "args": {"name": f"replica {r}"}})
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def __repr__(self) -> str:
        s = self.summary
        return (f"ServeResult({self.settings['model']} on {self.settings['system']}, "
                f"{self.settings['engine']} tp={self.settings['tp']} pp={self.settings['pp']} "
                f"x{self.settings['replicas']}: {s['output_tokens_per_s']:.4g} output tok/s, "
                f"TTFT p50 {s['ttft_s']['p50'] * 1e3:.4g} ms, "
                f"TPOT p50 {s['tpot_s']['p50'] * 1e3:.4g} ms)")


def _positive_int(value: Any, field: str) -> int:
    """``value`` as an int >= 1 (numpy integers too); else a one-line error."""
    if isinstance(value, bool) or not hasattr(value, "__index__") or int(value) < 1:
        raise ConfigError("serve", field, value, "expected a positive integer")
    return int(value)


def _disaggregation(value: Any) -> tuple[int, int]:
    """``"P:D"`` (or a pair) -> (prefill replicas, decode replicas), each >= 1."""
    parts = value.split(":") if isinstance(value, str) else list(value) \
        if isinstance(value, (list, tuple)) else []
    try:
        p, d = (int(x) for x in parts)
    except (TypeError, ValueError):
        p = d = 0
    if len(parts) != 2 or p < 1 or d < 1:
        raise ConfigError("serve", "disaggregate", value,
                          "expected P:D, prefill and decode replicas, e.g. 1:3")
    return p, d


def build_requests(*, trace: str | os.PathLike | None = None, requests: int = 100,
                   isl: int = 1024, osl: int = 128, rate: Any = "inf",
                   seed: int = 0, arrivals: str = "poisson") -> list[Request]:
    """The request stream: a trace file, or ``requests`` of ``isl``/``osl`` tokens arriving at
    ``rate`` requests/s (``inf``: all at once; ``arrivals``: ``poisson`` or ``poisson-exact``,
    :mod:`accelsim.serve.requests`)."""
    if trace is not None:
        return read_trace(trace)
    return fixed_requests(requests, isl, osl, rate=parse_rate(rate), seed=seed,
                          arrivals=arrivals)


def serve(machine: Any, model: str, *, engine: str | EngineConfig = "vllm", tp: int = 1,
          pp: int = 1, replicas: int = 1, dtype: str | None = None,
          requests: int | list[Request] = 100, isl: int = 1024, osl: int = 128,
          rate: Any = "inf", trace: str | os.PathLike | None = None,
          slo: str | Mapping[str, Any] | None = None,
          overrides: Mapping[str, Any] | None = None, seed: int = 0,
          arrivals: str = "poisson",
          disaggregate: str | tuple[int, int] | None = None) -> ServeResult:
    """Serve ``model`` on ``machine`` (see the module doc). ``disaggregate="P:D"``: P prefill
    and D decode replicas (prefill/decode disaggregation) instead of ``replicas``."""
    tp, pp, replicas = (_positive_int(tp, "tp"), _positive_int(pp, "pp"),
                        _positive_int(replicas, "replicas"))
    roles = None
    if disaggregate is not None:
        split = _disaggregation(disaggregate)
        if replicas != 1:
            raise ConfigError("serve", "replicas", replicas,
                              "give either replicas or disaggregate=P:D, not both")
        replicas = sum(split)
        roles = ["prefill"] * split[0] + ["decode"] * split[1]
    eng = engine if isinstance(engine, EngineConfig) else load_engine(engine, overrides)
    from accelsim.config.system import System

    gpu = None if isinstance(machine, (str, System)) else machine  # a GPU config (changed?)
    system = node_for(machine)
    check_gpus(system, tp, pp, replicas)
    arch, graph = transformer_of(model)
    if not arch.causal:
        raise ConfigError("serve", "model", model, "an encoder generates no tokens: serve a "
                          "decoder")
    chip = gpu if gpu is not None else system.device_machine(system.device_names[0])
    if dtype is None:  # the model's precision; fp16 where the GPU has no bf16 (as vLLM casts)
        dtype = graph.params.get("dtype", "bf16")
        if dtype == "bf16" and hasattr(chip, "supports") and not chip.supports("bf16"):
            dtype = "fp16"
    if dtype not in PRECISION_BYTES:
        raise ConfigError("serve", "dtype", dtype,
                          f"unknown precision (known: {', '.join(PRECISION_BYTES)})")
    bounds = parse_slo(slo)
    reqs = requests if isinstance(requests, list) else build_requests(
        trace=trace, requests=requests, isl=isl, osl=osl, rate=rate, seed=seed,
        arrivals=arrivals)
    window = arch.context_window or arch.max_positions
    longest = max(r.input_tokens + r.output_tokens for r in reqs)
    if window and longest > window:
        raise ConfigError(str(trace or "serve"), "input + output tokens", longest,
                          f"exceeds {arch.name}'s {window} positions")
    models = [StepModel(system, arch, eng, tp=tp, pp=pp, dtype=dtype, first_gpu=i * tp * pp,
                        gpu=gpu) for i in range(replicas)]
    if replicas > 1:  # replicas of one GPU kind share their step costs
        for m in models[1:]:
            m.cache = models[0].cache
    sim = ServingSimulation(models, eng, reqs, roles=roles)
    interrupted = False
    try:
        sim.run()
    except KeyboardInterrupt:
        interrupted = True
    settings = {"system": system.name, "gpu": models[0].gpu.name, "model": arch.name,
                "model_spec": str(model), "engine": eng.name, "engine_file": eng.source,
                "lowering": eng.lowering, "tp": tp, "pp": pp, "replicas": replicas,
                "gpus": tp * pp * replicas, "dtype": dtype,
                "disaggregate": None if roles is None else
                f"{roles.count('prefill')}:{roles.count('decode')}",
                "kv_cache_dtype": dtype if eng.kv_cache_dtype == "auto" else eng.kv_cache_dtype,
                "requests": len(reqs), "trace": None if trace is None else str(trace),
                "isl": None if trace is not None else isl,
                "osl": None if trace is not None else osl,
                "rate": None if trace is not None else str(rate),
                "arrivals": None if trace is not None else arrivals,
                "validation": str(getattr(models[0].gpu, "validation", "") or "") or None,
                "step_evaluations": sum(m.evaluations for m in models),
                "interrupted": interrupted}
    return ServeResult(settings, summary(sim, bounds), request_table(sim), iteration_table(sim),
                       sim)


__all__ = ["ServeResult", "build_requests", "serve"]
