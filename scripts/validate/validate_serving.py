"""Validate accelsim serve against published, fully specified serving measurements (issue 28,
point 5).

    PYTHONPATH=. python scripts/validate/validate_serving.py        # every runnable case
    PYTHONPATH=. python scripts/validate/validate_serving.py --split calibration
    PYTHONPATH=. python scripts/validate/validate_serving.py --fit  # fit on calibration only
    PYTHONPATH=. python scripts/validate/validate_serving.py --max-requests 500 --only trtllm017

The cases (``scripts/data/serving_published.json``, each with its source: repository, path and
commit): the TensorRT-LLM performance overview tables (v0.17 engine backend, v1.0 PyTorch
backend, a later developer-guide table; FP8, fixed input/output lengths, infinite rate,
trtllm-bench), TensorRT-LLM v0.14 online serving (BF16, 500 requests at offered rates), MLPerf
Inference v4.1/v5.0 Llama-2-70B (NVIDIA's closed submissions) and the SGLang v0.3 / vLLM v0.6
comparison (ShareGPT).

**The split** (decided on 2026-12-02, written here and in ``scripts/data/REGISTRY.yaml``
before any of these cases was simulated): *calibration* = the TensorRT-LLM v0.17 table's
Llama 3.1 8B, TP 1, H200 rows (ids ``trtllm017_llama3.1-8b_h200_tp1_*``: one model, one GPU,
one parallel layout, nine input/output lengths); *held-out* = every other case: another GPU
(H100), other models (70B, 405B, Llama 2 70B), tensor parallelism 2-8, other engine versions
and engines, online rates. **Dev since** (``DEV_PREFIXES``): the 70B-on-one-H100 rows
(2026-12-02), then every other case that runs (2026-12-03, ``DEV_SINCE_SUSTAINED``: their
bias had been read when serving began to run its GPUs at sustained clocks); the targets are
reported on that pooled set (``POOLED``) until a new held-out set is measured.

**Fitted** (``--fit``, calibration only): ``configs/engines/tensorrt_llm.yaml``
``step_overhead_s`` (the engine's CPU time per iteration that the GPU waits for), a grid
search minimising the calibration MAPE of output tokens/s. Nothing else is fitted; nothing is
chosen by a held-out figure.

**Not run** (listed, with why): cases over a dataset (ShareGPT, MLPerf's OpenOrca): their
request lengths are not published per request, so the run cannot be reproduced; models with
no architecture here. ``--max-requests N`` simulates at most N requests of a case (its
published count otherwise) and says so: throughput at an infinite rate is a steady-state
rate, but the ramp of a shorter run differs.

**Set 2** (``--set2``, ``scripts/data/serving_published_set2.json``, transcribed 2026-12-04;
its rules fixed in :data:`SET2_RULES` before any of its cases was simulated): 1,619 more
TensorRT-LLM performance-overview cells (releases 0.6.1-1.2, H100/H200/B200, FP16/FP8/FP4,
Llama 2/3/3.1/3.3 7B-405B), every one **held out**. Scored on a sample fixed by a rule that
reads no figure (per release prefix and GPU, the :data:`SET2_PER_STRATUM` ids of least
SHA-1), at ``--max-requests`` as the first set. Not run: static-batching tables (releases
0.6.1-0.9: the engine's in-flight batching is what is modelled), cells equal to a dev case of
the first set. The v0.20 table measured with CUDA graphs off runs with
``cuda_graph_max_batch: 0``. B200 (a datasheet machine, unvalidated) is reported apart.

Figures: per case simulated vs published output tokens/s (and TTFT / inter-token latency where
published); MAPE per source and split. Targets (the pooled set): throughput MAPE <= 10 %, median
TPOT and TTFT <= 15 % where published. Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from data_registry import fit_data  # noqa: E402

from accelsim.api.serving import serve  # noqa: E402
from accelsim.errors import AccelsimError  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "serving_published.json"
SET2 = DATA.parent / "serving_published_set2.json"
SET2_PER_STRATUM = 10
"""Set 2's sample: per (release prefix, GPU), this many cases of least SHA-1 of their id."""
SET2_RULES = {
    "static_batching": ("trtllm061_", "trtllm080_", "trtllm090_"),
    "graphs_off": ("trtllm020a_",),
}
"""Set 2's rules (module doc), fixed before any of its cases was simulated."""
CALIBRATION_PREFIX = "trtllm017_llama3.1-8b_h200_tp1_"
"""The calibration split (see the module doc); decided before any case was simulated."""

ENGINES = {"tensorrt-llm": "tensorrt_llm", "vllm": "vllm", "sglang": "sglang"}
ARRIVALS = "poisson-exact"
"""Finite-rate cases arrive at exactly their offered rate (seed 0's Poisson gaps, rescaled):
the published runs' own draws are unknown, and one draw of 500 gaps is +-4.5 % (1 sigma) off
the rate, which a lightly loaded run's throughput follows (seed 0's: +9.7 %; set since
2026-12-04, accelsim/serve/requests.py)."""
MODELS = (("Llama-3.1-405B", "workloads/hf/llama3.1_405b.json"),
          ("Llama-3.1-70B", "workloads/hf/llama3.1_70b.json"),
          ("Llama-3.3-70B", "workloads/hf/llama3.1_70b.json"),  # same architecture
          ("Llama-3.1-8B", "workloads/hf/llama3.1_8b.json"),
          ("LLaMA v3.1 405B", "workloads/hf/llama3.1_405b.json"),
          ("LLaMA v3.1 70B", "workloads/hf/llama3.1_70b.json"),
          ("LLaMA 3.1 70B", "workloads/hf/llama3.1_70b.json"),
          ("LLaMA v3.1 8B", "workloads/hf/llama3.1_8b.json"),
          ("LLaMA 3.1 8B", "workloads/hf/llama3.1_8b.json"),
          ("Llama-2-70b", "workloads/hf/llama2_70b.json"),
          # set 2's labels (Llama 3 8B / 70B have Llama 3.1's dimensions)
          ("LLaMA v3.3 70B", "workloads/hf/llama3.1_70b.json"),
          ("LLaMA v3 70B", "workloads/hf/llama3.1_70b.json"),
          ("Meta-Llama-3-70B", "workloads/hf/llama3.1_70b.json"),
          ("LLaMA v3 8B", "workloads/hf/llama3.1_8b.json"),
          ("Meta-Llama-3-8B", "workloads/hf/llama3.1_8b.json"),
          ("LLaMA v2 70B", "workloads/hf/llama2_70b.json"),
          ("Llama 2 70B", "workloads/hf/llama2_70b.json"),
          ("LLaMA v2 7B", "workloads/hf/llama2_7b.json"),
          ("Llama-2-7b", "workloads/hf/llama2_7b.json"),
          ("Llama 2 7B", "workloads/hf/llama2_7b.json"))
PRECISIONS = {"fp4": "nvfp4"}
"""A published precision -> accelsim's name (the pages' FP4 checkpoints are NVFP4)."""
TARGET_THROUGHPUT = 10.0
TARGET_LATENCY = 15.0


DEV_PREFIXES = ("trtllm017_llama3.1-70b_h100_tp1_",)
"""Cases that guided a model choice since the held-out set was first scored, so dev: the
seven Llama 3.1 70B FP8 rows on one H100 that accelsim refused (no KV-cache room) led to
TensorRT-LLM's ``gpu_memory_fraction_of: free`` (2026-12-02; REGISTRY.yaml)."""
DEV_SINCE_SUSTAINED = ("trtllm014_", "trtllm017_", "trtllm10_", "trtllmdev_")
"""Every other case accelsim runs, dev since 2026-12-03: their throughput bias (+4..+10 %)
had been read when serving began to run its GPUs at sustained clocks (``GpuMachine
.sustained``), so that choice was not blind to them (REGISTRY.yaml). What stays held out is
what does not run yet (MLPerf, SGLang/vLLM: request lengths not published)."""
POOLED = "all dev since 2026-12-03"
"""The label of the pooled rows over :data:`DEV_SINCE_SUSTAINED` (the targets' set until a new
held-out set is measured)."""


def split_of(case: dict) -> str:
    """``calibration``, ``dev`` or ``held-out`` (the rule of the module doc)."""
    if case["id"].startswith(CALIBRATION_PREFIX):
        return "calibration"
    return "dev" if case["id"].startswith(DEV_PREFIXES + DEV_SINCE_SUSTAINED) else "held-out"


def pooled(row: dict) -> bool:
    """Whether a case counts in the pooled target rows: held out, or dev only since
    2026-12-03 (:data:`DEV_SINCE_SUSTAINED`)."""
    return row["split"] == "held-out" or (
        row["split"] == "dev" and row["id"].startswith(DEV_SINCE_SUSTAINED)
        and not row["id"].startswith(DEV_PREFIXES))


def model_of(case: dict) -> str | None:
    """The architecture file a case's model is, or None."""
    text = case["model"]
    for key, path in MODELS:
        if key.lower() in text.lower():
            return path
    return None


def set2_sample(cases: list[dict]) -> list[dict]:
    """Set 2's scored sample (:data:`SET2_PER_STRATUM` per release prefix and GPU, least
    SHA-1 of the id first): a rule that reads no figure."""
    import hashlib

    strata: dict[tuple[str, str], list[dict]] = {}
    for c in cases:
        strata.setdefault((c["id"].split("_", 1)[0], c["gpu"]), []).append(c)
    out = []
    for key in sorted(strata):
        ranked = sorted(strata[key], key=lambda c: hashlib.sha1(c["id"].encode()).hexdigest())
        out += ranked[:SET2_PER_STRATUM]
    return out


def why_not_run(case: dict) -> str | None:
    """Why a case cannot be reproduced here (None: it can)."""
    if case["id"].startswith(SET2_RULES["static_batching"]):
        return "static batching (release 0.6-0.9): not the engine modelled"
    if "duplicate of" in case.get("notes", ""):
        return "equal to a dev case of the first set"
    if not case.get("input_tokens") or not case.get("output_tokens"):
        return "request lengths not published per request (dataset)"
    if model_of(case) is None:
        return "no architecture for this model"
    if case.get("tp") is None:
        return "parallel layout not published"
    if case["engine"] not in ENGINES:
        return f"engine {case['engine']} not modelled"
    return None


def simulate(case: dict, *, max_requests: int | None, overrides: dict | None = None) -> dict:
    """One case through ``serve``: the simulated figures."""
    n = case.get("requests") or 1000
    if max_requests:
        n = min(n, max_requests)
    gpus = case.get("gpus") or case["tp"]
    replicas = max(1, gpus // (case["tp"] * (case.get("pp") or 1)))
    res = serve(case["gpu"], model_of(case), engine=ENGINES[case["engine"]], tp=case["tp"],
                pp=case.get("pp") or 1, replicas=replicas,
                dtype=PRECISIONS.get(case["precision"], case["precision"]),
                requests=n, isl=case["input_tokens"], osl=case["output_tokens"],
                rate=case.get("rate", "inf"), arrivals=ARRIVALS,
                overrides={**({"kv_cache_dtype": "fp8"} if case.get("kv_cache_dtype") == "fp8"
                              else {}),
                           **({"cuda_graph_max_batch": 0}
                              if case["id"].startswith(SET2_RULES["graphs_off"]) else {}),
                           **(overrides or {})})
    s = res.summary
    out = {"requests_run": n, "output_tokens_per_s": s["output_tokens_per_s"],
           "ttft_ms_mean": s["ttft_s"]["mean"] * 1e3, "ttft_ms_p50": s["ttft_s"]["p50"] * 1e3,
           "tpot_ms_p50": s["tpot_s"]["p50"] * 1e3, "itl_ms_mean": s["itl_s"]["mean"] * 1e3}
    return out


def published_throughput(case: dict) -> float | None:
    """Output tokens/s of the whole run as published (per-GPU figures times the GPUs)."""
    metric, value = case.get("metric"), case.get("value")
    if value is None:
        return None
    if metric == "output_tokens_per_s_per_gpu":
        return float(value) * (case.get("gpus") or case["tp"])
    if metric == "output_tokens_per_s":
        return float(value)
    return None


def score(cases: list[dict], *, max_requests: int | None, overrides: dict | None = None,
          verbose: bool = True) -> list[dict]:
    """Simulate every case; rows of published vs simulated figures."""
    rows = []
    for case in cases:
        why = why_not_run(case)
        row = {"id": case["id"], "split": split_of(case), "gpu": case["gpu"], "skipped": why}
        if why is None:
            t0 = time.perf_counter()
            try:
                sim = simulate(case, max_requests=max_requests, overrides=overrides)
            except AccelsimError as exc:
                row["skipped"] = f"accelsim refuses: {exc}"
                sim = None
            if sim is not None:
                pub = published_throughput(case)
                row.update(sim, wall_s=time.perf_counter() - t0, published=pub)
                for key in ("ttft_ms_mean", "ttft_ms_p50", "tpot_ms_p50", "itl_ms_mean"):
                    if case.get(key) is not None:
                        row[f"published_{key}"] = float(case[key])
                if pub:
                    row["throughput_error_pct"] = 100 * (sim["output_tokens_per_s"] - pub) / pub
        rows.append(row)
        if verbose:
            _print_row(row)
    return rows


def _print_row(row: dict) -> None:
    if row.get("skipped"):
        print(f"  {row['id']:<58} {row['split']:<11} not run: {row['skipped'][:60]}")
        return
    pub = row.get("published")
    err = row.get("throughput_error_pct")
    print(f"  {row['id']:<58} {row['split']:<11} "
          f"{row['output_tokens_per_s']:>10.0f} tok/s vs {pub if pub else float('nan'):>10.0f}"
          + (f"  {err:+6.1f} %" if err is not None else "")
          + f"  ({row['requests_run']} req, {row['wall_s']:.1f} s)")


def mape(values: list[float]) -> float:
    """Mean absolute percentage error of errors in percent."""
    return sum(abs(v) for v in values) / len(values) if values else math.nan


def report(rows: list[dict], *, set2: bool = False) -> bool:
    """Per source and split: MAPE of throughput (and latencies); True when targets hold.
    ``set2``: the targets on set 2's held-out H100/H200 cases (B200, a datasheet machine,
    reported apart)."""
    if set2:
        return _report_set2(rows)
    ok = True
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        if r.get("throughput_error_pct") is not None:
            source = r["id"].split("_", 1)[0]
            groups.setdefault((r["split"], source), []).append(r)
    print(f"\n{'split':<12}{'source':<14}{'cases':>6}{'throughput MAPE':>17}{'bias':>8}")
    for (split, source), rs in sorted(groups.items()):
        errs = [r["throughput_error_pct"] for r in rs]
        bias = sum(errs) / len(errs)
        print(f"{split:<12}{source:<14}{len(rs):>6}{mape(errs):>16.1f}%{bias:>7.1f}%")
    held = [r["throughput_error_pct"] for r in rows
            if pooled(r) and r.get("throughput_error_pct") is not None]
    if held:
        m = mape(held)
        print(f"{POOLED}: throughput MAPE {m:.1f} % over {len(held)} cases "
              f"(target <= {TARGET_THROUGHPUT:.0f} %)")
        ok &= m <= TARGET_THROUGHPUT
    lat = []
    for r in rows:
        for key, pub_key in (("ttft_ms_mean", "published_ttft_ms_mean"),
                             ("itl_ms_mean", "published_itl_ms_mean"),
                             ("ttft_ms_p50", "published_ttft_ms_p50"),
                             ("tpot_ms_p50", "published_tpot_ms_p50")):
            if r.get(pub_key) and pooled(r):
                lat.append(100 * (r[key] - r[pub_key]) / r[pub_key])
    if lat:
        m = mape(lat)
        print(f"{POOLED}: latency MAPE (TTFT, TPOT/ITL where published) {m:.1f} % over "
              f"{len(lat)} figures (target <= {TARGET_LATENCY:.0f} %)")
        ok &= m <= TARGET_LATENCY
    skipped = [r for r in rows if r.get("skipped")]
    print(f"not run: {len(skipped)} cases")
    return ok


def _report_set2(rows: list[dict]) -> bool:
    scored = [r for r in rows if r.get("throughput_error_pct") is not None]
    groups: dict[tuple[str, str], list[float]] = {}
    for r in scored:
        groups.setdefault((r["id"].split("_", 1)[0], r["gpu"]), []).append(
            r["throughput_error_pct"])
    print(f"\n{'source':<15}{'gpu':<6}{'cases':>6}{'throughput MAPE':>17}{'bias':>8}")
    for (source, gpu), errs in sorted(groups.items()):
        print(f"{source:<15}{gpu:<6}{len(errs):>6}{mape(errs):>16.1f}%"
              f"{sum(errs) / len(errs):>7.1f}%")
    ok = True
    for label, keep in (("set 2 held-out, H100/H200", lambda g: g != "b200"),
                        ("set 2 held-out, B200 (unvalidated machine)", lambda g: g == "b200")):
        errs = [r["throughput_error_pct"] for r in scored if keep(r["gpu"])]
        if errs:
            m = mape(errs)
            print(f"{label}: throughput MAPE {m:.1f} %, bias {sum(errs) / len(errs):+.1f} % "
                  f"over {len(errs)} cases (target <= {TARGET_THROUGHPUT:.0f} %)")
            if "H100" in label:
                ok &= m <= TARGET_THROUGHPUT
    print(f"not run: {sum(1 for r in rows if r.get('skipped'))} cases")
    return ok


def fit(max_requests: int | None) -> float:
    """tensorrt_llm step_overhead_s by grid search on the calibration split."""
    cases = [c for c in fit_data("serving_published.json", part="calibration")["cases"]
             if split_of(c) == "calibration"]
    best = None
    for us in (0, 250, 500, 1000, 1500, 2000, 3000, 4000):
        rows = score(cases, max_requests=max_requests,
                     overrides={"step_overhead_s": us * 1e-6}, verbose=False)
        errs = [r["throughput_error_pct"] for r in rows
                if r.get("throughput_error_pct") is not None]
        if len(errs) < len(cases):
            raise SystemExit(f"fit: {len(cases) - len(errs)} calibration cases did not run")
        m = mape(errs)
        print(f"  step_overhead_s = {us:5d} us: calibration MAPE {m:.1f} % (bias "
              f"{sum(errs) / len(errs):+.1f} %)", flush=True)
        if best is None or m < best[1]:
            best = (us, m)
    print(f"fit: step_overhead_s = {best[0]} us (calibration MAPE {best[1]:.1f} %)")
    return best[0] * 1e-6


def fidelity_rows(max_requests: int | None = None) -> list[dict]:
    """The fidelity table's rows (``scripts/fidelity.py``): what :func:`report` prints, from
    :func:`score` of every case at ``max_requests`` (said in each row's note): throughput MAPE
    per split and source, the pooled cases (:func:`pooled`; target :data:`TARGET_THROUGHPUT`),
    their latencies where published (target :data:`TARGET_LATENCY`), and the cases not run."""
    import fidelity

    rows = score(json.loads(DATA.read_text())["cases"], max_requests=max_requests,
                 verbose=False)
    setting = f"--max-requests {max_requests}" if max_requests else "published request counts"
    out = []
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r.get("throughput_error_pct") is not None:
            kind = r["split"] if not (pooled(r) and r["split"] == "dev") else "dev since 12-03"
            groups.setdefault((kind, r["id"].split("_", 1)[0]), []).append(
                r["throughput_error_pct"])
    for (kind, source), errs in sorted(groups.items()):
        split = "dev" if kind.startswith("dev") else kind
        out.append(fidelity.row("validate_serving", [fidelity.source_of(DATA.name, split)],
                                f"{source} ({kind})",
                                errors_pct=errs, metric="output tokens/s", note=setting))
    dev = (fidelity.source_of(DATA.name, "dev"),)
    held = [r["throughput_error_pct"] for r in rows
            if pooled(r) and r.get("throughput_error_pct") is not None]
    out.append(fidelity.row("validate_serving", dev, f"{POOLED}, throughput",
                            errors_pct=held, target_pct=TARGET_THROUGHPUT,
                            metric="output tokens/s", note=setting))
    lat = [100 * (r[key] - r[f"published_{key}"]) / r[f"published_{key}"] for r in rows
           for key in ("ttft_ms_mean", "itl_ms_mean", "ttft_ms_p50", "tpot_ms_p50")
           if r.get(f"published_{key}") and pooled(r)]
    if lat:
        out.append(fidelity.row("validate_serving", dev, f"{POOLED}, latency",
                                errors_pct=lat, target_pct=TARGET_LATENCY,
                                metric="TTFT, TPOT/ITL where published", note=setting))
    skipped = [r for r in rows if r.get("skipped")]
    out.append({**fidelity.row("validate_serving", [DATA.name], "not run", cases=len(skipped)),
                "note": "request lengths not published, or accelsim refuses the case"})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("calibration", "dev", "held-out", "all"), default="all")
    ap.add_argument("--only", default=None, help="case ids starting with this")
    ap.add_argument("--max-requests", type=int, default=None)
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--set2", action="store_true",
                    help="score set 2 (held out; its sample, see the module doc)")
    args = ap.parse_args(argv)
    if args.fit:
        fit(args.max_requests)
        return 0
    data = SET2 if args.set2 else DATA
    cases = json.loads(data.read_text())["cases"]
    if args.set2:
        cases = set2_sample(cases)
    cases = [c for c in cases if args.split == "all" or split_of(c) == args.split]
    if args.only:
        cases = [c for c in cases if c["id"].startswith(args.only)]
    print(f"{len(cases)} published cases ({data.name}); calibration = {CALIBRATION_PREFIX}*")
    rows = score(cases, max_requests=args.max_requests)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if report(rows, set2=args.set2) else 1


if __name__ == "__main__":
    sys.exit(main())
