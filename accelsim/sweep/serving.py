"""Finding a serving configuration: the cheapest layout that meets an SLO at a given load.

A *configuration* is a GPU kind, a layout (tensor parallel ``tp``, pipeline ``pp``,
data-parallel ``replicas``) and engine settings (any :class:`~accelsim.serve.engine.EngineConfig`
field, e.g. ``max_num_seqs``); :func:`configurations` enumerates the product of the axes that
fits the GPU's node and divides the model. Each configuration serves the same request stream
(:func:`accelsim.api.serving.serve`); it *meets* the SLO when at least ``attainment`` of its
requests stay within every bound (goodput's definition). Its cost is GPUs x the GPU kind's
price per hour (default 1: the GPU count). :func:`search` returns one row per configuration
(cost, throughput, TTFT/TPOT percentiles, attainment, meets), the cheapest one that meets the
SLO (ties: the higher throughput), and the Pareto front of cost against p90 TTFT and output
tokens/s (:func:`~accelsim.sweep.pareto.pareto_mask`). Points run in this process, on local
worker processes, or on a Dask cluster (``scheduler=``: :func:`accelsim.sweep.dask.connect`);
each is a pure function of its point, so results do not depend on where they ran.

An SLO that no configuration meets is not an error of the search: the result says so and
names the configuration that came closest.

Imports: errors, api.serving, devices.parallel, report.plots_serving, workload.parallel,
sweep.dask, sweep.pareto.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import pandas as pd

from accelsim.errors import AccelsimError, ConfigError
from accelsim.sweep.pareto import pareto_mask

COLUMNS = ["gpu", "tp", "pp", "replicas", "gpus", "settings", "cost_per_hour",
           "output_tokens_per_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_p50_s",
           "tpot_p90_s", "slo_attainment", "meets_slo", "preemptions", "error"]


@dataclass(frozen=True)
class Load:
    """The request stream every configuration serves."""

    isl: int = 1024
    osl: int = 128
    requests: int = 200
    rate: Any = "inf"
    trace: str | None = None
    seed: int = 0


def configurations(model: str, gpus: Sequence[str], *, tp: Sequence[int] = (1,),
                   pp: Sequence[int] = (1,), replicas: Sequence[int] = (1,),
                   engine_grid: Mapping[str, Sequence[Any]] | None = None,
                   max_gpus: int | None = None) -> list[dict[str, Any]]:
    """Every point of the product of the axes that the GPU's node holds (``tp x pp x
    replicas`` GPUs, at most ``max_gpus``) and that shards ``model`` (tp divides its heads)."""
    from accelsim.devices.parallel import node_for, transformer_of
    from accelsim.workload.parallel import check_tp, pipeline_stages

    arch, _ = transformer_of(model)
    grid = dict(engine_grid or {})
    keys = sorted(grid)
    out = []
    for gpu in gpus:
        node = node_for(gpu)
        room = len(node.devices) if max_gpus is None else min(max_gpus, len(node.devices))
        for t, p, r in itertools.product(tp, pp, replicas):
            if t * p * r > room:
                continue
            try:
                check_tp(arch, t)
                pipeline_stages(arch.layers, p)
            except AccelsimError:
                continue
            for values in itertools.product(*(grid[k] for k in keys)):
                out.append({"gpu": gpu, "tp": t, "pp": p, "replicas": r,
                            "settings": dict(zip(keys, values, strict=True))})
    if not out:
        raise ConfigError("search", "configurations", len(out),
                          "no configuration fits the GPUs' nodes and shards the model")
    return out


def evaluate(point: Mapping[str, Any], model: str, engine: str, load: Load,
             slo: Mapping[str, float], attainment: float,
             prices: Mapping[str, float]) -> dict[str, Any]:
    """One configuration serving ``load``: its row (an error text instead of figures when the
    engine refuses it, e.g. the model does not fit its KV cache)."""
    from accelsim.api.serving import serve

    gpus = point["tp"] * point["pp"] * point["replicas"]
    row = {"gpu": point["gpu"], "tp": point["tp"], "pp": point["pp"],
           "replicas": point["replicas"], "gpus": gpus,
           "settings": ",".join(f"{k}={v}" for k, v in point["settings"].items()),
           "cost_per_hour": gpus * float(prices.get(point["gpu"], 1.0))}
    try:
        res = serve(point["gpu"], model, engine=engine, tp=point["tp"], pp=point["pp"],
                    replicas=point["replicas"], requests=load.requests, isl=load.isl,
                    osl=load.osl, rate=load.rate, trace=load.trace, seed=load.seed,
                    slo=dict(slo), overrides=dict(point["settings"]) or None)
    except AccelsimError as exc:
        return {**row, "meets_slo": False, "error": str(exc)}
    s = res.summary
    got = s.get("slo_attainment", math.nan)
    return {**row, "output_tokens_per_s": s["output_tokens_per_s"],
            "ttft_p50_s": s["ttft_s"]["p50"], "ttft_p90_s": s["ttft_s"]["p90"],
            "ttft_p99_s": s["ttft_s"]["p99"], "tpot_p50_s": s["tpot_s"]["p50"],
            "tpot_p90_s": s["tpot_s"]["p90"], "slo_attainment": got,
            "meets_slo": bool(got >= attainment), "preemptions": s["preemptions"], "error": ""}


def _evaluate_packed(args: tuple) -> dict[str, Any]:
    return evaluate(*args)


@dataclass
class SearchResult:
    """The rows, the cheapest configuration meeting the SLO (None: none does) and the
    Pareto front (cost vs p90 TTFT vs output tokens/s)."""

    rows: pd.DataFrame
    best: pd.Series | None
    front: pd.DataFrame
    closest: pd.Series | None

    def figure(self):
        """Cost against output tokens/s, SLO-meeting points marked, the front joined (a
        matplotlib figure; the backend is left alone)."""
        from accelsim.report.plots_serving import serving_search_figure

        return serving_search_figure(self.rows, self.front, self.best)


def search(model: str, points: Sequence[Mapping[str, Any]], *, engine: str = "vllm",
           load: Load = Load(), slo: Mapping[str, float], attainment: float = 0.9,
           prices: Mapping[str, float] | None = None, workers: int = 1,
           scheduler: str | None = None) -> SearchResult:
    """Serve ``load`` on every configuration of ``points`` (see the module doc)."""
    if not slo:
        raise ConfigError("search", "slo", slo, "a search needs SLO bounds (ttft=..., tpot=...)")
    if not 0 < attainment <= 1:
        raise ConfigError("search", "attainment", attainment, "expected a fraction in (0, 1]")
    prices = dict(prices or {})
    args = [(dict(p), model, engine, load, dict(slo), attainment, prices) for p in points]
    if scheduler is not None:
        from accelsim.sweep.dask import close_quietly, connect

        client = connect(scheduler)
        try:
            rows = client.gather(client.map(_evaluate_packed, args, pure=False))
        finally:
            close_quietly(client)
    elif workers > 1 and len(args) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, os.cpu_count() or 1)) as pool:
            rows = list(pool.map(_evaluate_packed, args,
                                 chunksize=max(1, len(args) // (4 * workers))))
    else:
        rows = [_evaluate_packed(a) for a in args]
    df = pd.DataFrame(rows).reindex(columns=COLUMNS)
    ok = df[df["meets_slo"].fillna(False).astype(bool)]
    best = None
    if len(ok):
        best = ok.sort_values(["cost_per_hour", "output_tokens_per_s"],
                              ascending=[True, False]).iloc[0]
    ran = df[df["error"].fillna("") == ""]
    closest = None if best is not None or not len(ran) else \
        ran.sort_values("slo_attainment", ascending=False).iloc[0]
    front = ran[pareto_mask(ran, {"cost_per_hour": "min", "ttft_p90_s": "min",
                                  "output_tokens_per_s": "max"})] if len(ran) else ran
    return SearchResult(df, best, front.sort_values("cost_per_hour"), closest)


__all__ = ["COLUMNS", "Load", "SearchResult", "configurations", "evaluate", "search"]
