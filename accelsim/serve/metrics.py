"""What a serving run's users read: throughput, latencies with percentiles, goodput under an
SLO, KV-cache use, preemptions, GPU busy share, energy per token.

Definitions (per request): TTFT = first token - arrival; TPOT = (finish - first token) /
(output tokens - 1) (requests of one output token have none); ITL = the gaps between one
request's consecutive tokens (every gap of every request); end-to-end = finish - arrival.
Throughput is over the makespan (first arrival to last finish): requests/s, input and output
tokens/s. Goodput: requests/s that met every SLO bound given (``ttft``, ``tpot``, ``e2e``).
KV-cache use: blocks in use after each iteration over the pool, time-weighted mean and max.
GPU busy share: time some iteration ran / (makespan x replicas). Energy: every GPU's step energy
plus idle power while a replica waits. Units: seconds, tokens, joules.

Imports: units, errors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from accelsim.errors import ConfigError
from accelsim.units import parse_time

PERCENTILES = {"mean": None, "p50": 50, "p90": 90, "p99": 99}
SLO_KEYS = ("ttft", "tpot", "e2e")


def parse_slo(text: str | Mapping[str, Any] | None, source: str = "--slo") -> dict[str, float]:
    """``"ttft=2s,tpot=50ms"`` (or a mapping) -> bounds in seconds."""
    if text is None or text == "":
        return {}
    items = text.items() if isinstance(text, Mapping) else (
        part.partition("=")[::2] for part in str(text).split(",") if part.strip())
    out: dict[str, float] = {}
    for key, value in items:
        key = str(key).strip()
        if key not in SLO_KEYS:
            raise ConfigError(source, "slo", key, f"unknown bound (known: {', '.join(SLO_KEYS)})")
        try:
            bound = parse_time(str(value).strip())
        except Exception:  # noqa: BLE001 - the unit parser's message is replaced by one line
            raise ConfigError(source, f"slo.{key}", value, "expected a time, e.g. 200ms") from None
        if not math.isfinite(bound) or bound <= 0:
            raise ConfigError(source, f"slo.{key}", value, "expected a time > 0")
        out[key] = bound
    return out


def stats(values: np.ndarray) -> dict[str, float]:
    """mean, p50, p90, p99 of ``values`` (NaN when empty)."""
    if values.size == 0:
        return {k: math.nan for k in PERCENTILES}
    return {k: float(values.mean()) if q is None else float(np.percentile(values, q))
            for k, q in PERCENTILES.items()}


def request_table(sim: Any) -> pd.DataFrame:
    """One row per request: arrival, lengths, TTFT, TPOT, end-to-end, preemptions."""
    rows = []
    for s in sim.sequences:
        r = s.req
        ttft = s.first_token_s - r.arrival_s if s.first_token_s is not None else math.nan
        e2e = s.finish_s - r.arrival_s if s.finish_s is not None else math.nan
        tpot = ((s.finish_s - s.first_token_s) / (r.output_tokens - 1)
                if s.finish_s is not None and r.output_tokens > 1 else math.nan)
        rows.append({"request": r.id, "arrival_s": r.arrival_s, "input_tokens": r.input_tokens,
                     "output_tokens": r.output_tokens, "generated": s.generated,
                     "ttft_s": ttft, "tpot_s": tpot, "e2e_s": e2e,
                     "preemptions": s.preemptions, "finished": s.finish_s is not None})
    return pd.DataFrame(rows)


def iteration_table(sim: Any) -> pd.DataFrame:
    """One row per iteration: replica, start/end, decode and prefill tokens, KV blocks used."""
    cols = ["replica", "start_s", "end_s", "decode", "prefill_tokens", "sequences",
            "kv_blocks_used", "preempted", "energy_j"]
    return pd.DataFrame([[getattr(it, c) for c in cols] for it in sim.iterations], columns=cols)


def summary(sim: Any, slo: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The run's figures (see the module doc)."""
    req = request_table(sim)
    its = iteration_table(sim)
    done = req[req["finished"]]
    end = float((done["arrival_s"] + done["e2e_s"]).max()) if len(done) else math.nan
    makespan = end - float(req["arrival_s"].min()) if len(done) else math.nan
    out_tokens = int(done["output_tokens"].sum())
    in_tokens = int(done["input_tokens"].sum())
    replicas = len(sim.replicas)
    busy_of = {r.index: 0.0 for r in sim.replicas}
    if len(its):
        for i, g in its.groupby("replica"):
            busy_of[int(i)] = _union_s(g["start_s"].to_numpy(), g["end_s"].to_numpy())
    busy = sum(busy_of.values())
    total_blocks = sum(r.total_blocks for r in sim.replicas)
    kv_mean = kv_max = 0.0
    if len(its) and total_blocks:
        dur = (its["end_s"] - its["start_s"]).to_numpy()
        per = its["kv_blocks_used"].to_numpy() / np.array(
            [max(1, sim.replicas[i].total_blocks) for i in its["replica"]])
        kv_mean = float((per * dur).sum() / dur.sum()) if dur.sum() else float(per.mean())
        kv_max = float(per.max())
    step_j = float(its["energy_j"].sum()) if len(its) else 0.0
    idle_j = sum(max(0.0, makespan - busy_of[r.index]) * r.model.idle_power_w * len(r.model.gpus)
                 for r in sim.replicas) if math.isfinite(makespan) else 0.0
    energy = step_j + idle_j
    out: dict[str, Any] = {
        "requests": int(len(req)), "finished": int(len(done)),
        "makespan_s": makespan,
        "requests_per_s": len(done) / makespan if makespan else math.nan,
        "input_tokens_per_s": in_tokens / makespan if makespan else math.nan,
        "output_tokens_per_s": out_tokens / makespan if makespan else math.nan,
        "ttft_s": stats(done["ttft_s"].to_numpy(dtype=float)),
        "tpot_s": stats(done["tpot_s"].dropna().to_numpy(dtype=float)),
        "itl_s": stats(np.frombuffer(sim.itl, dtype=float) if len(sim.itl) else np.array([])),
        "e2e_s": stats(done["e2e_s"].to_numpy(dtype=float)),
        "iterations": int(len(its)), "preemptions": int(sim.preemptions),
        "kv_cache_use_mean": kv_mean, "kv_cache_use_max": kv_max,
        "kv_cache_blocks": total_blocks,
        "gpu_busy_share": busy / (makespan * replicas) if makespan else math.nan,
        "energy_j": energy,
        "energy_per_output_token_j": energy / out_tokens if out_tokens else math.nan,
    }
    if slo:
        ok = np.ones(len(done), dtype=bool)
        for key, bound in slo.items():
            col = done[f"{key}_s"].to_numpy(dtype=float)
            ok &= ~(col > bound)  # NaN TPOT (one output token) meets any bound
        out["slo"] = dict(slo)
        out["goodput_requests_per_s"] = float(ok.sum()) / makespan if makespan else math.nan
        out["slo_attainment"] = float(ok.mean()) if len(done) else math.nan
    return out


def _union_s(start: np.ndarray, end: np.ndarray) -> float:
    """Length of the union of intervals (pipelined iterations overlap)."""
    order = np.argsort(start)
    total, cur_s, cur_e = 0.0, None, None
    for s, e in zip(start[order], end[order], strict=True):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return float(total)


__all__ = ["PERCENTILES", "SLO_KEYS", "iteration_table", "parse_slo", "request_table", "stats",
           "summary"]
