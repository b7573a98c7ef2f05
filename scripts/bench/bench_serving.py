"""Benchmark of the serving simulator (issue 28 targets; a benchmark, not a test).

    PYTHONPATH=. python scripts/bench/bench_serving.py                  # both parts
    PYTHONPATH=. python scripts/bench/bench_serving.py --points 100     # a smaller search

1. A 10,000-request Poisson stream (Llama-3-70B, TP=8 on an HGX H200; 1,024 in / 128 out) served
   by vLLM: wall time (target <= 10 s on 2 cores), iterations simulated, step evaluations (the
   composition cache's misses) and what the same run costs without the cache (every iteration
   evaluated: measured on the first N iterations, scaled).
2. A configuration search of ``--points`` points (GPU kind x TP x replicas x max_num_seqs x
   max_num_batched_tokens x 3 seeds' worth of repeats, shuffled with a fixed seed, 300 requests
   each): wall time, s/point, and the 1,000-point projection at that rate (target <= 10 min
   on 2 cores).
"""

from __future__ import annotations

import argparse
import itertools
import random
import time

from accelsim.api.serving import serve
from accelsim.serve.requests import fixed_requests
from accelsim.sweep.serving import Load, search


def bench_trace(n: int) -> None:
    reqs = fixed_requests(n, 1024, 128, rate=60.0, seed=7)
    t0 = time.perf_counter()
    res = serve("hgx_h200_x8", "llama3_70b", tp=8, requests=reqs)
    wall = time.perf_counter() - t0
    its = res.summary["iterations"]
    evals = res.settings["step_evaluations"]
    model = res.simulation.replicas[0].model
    sample = list(model.cache)[: min(20, len(model.cache))]
    t1 = time.perf_counter()
    for key in sample:
        model.evaluate(key)
    per_eval = (time.perf_counter() - t1) / max(1, len(sample))
    print(f"{'case':<44}{'wall (s)':>10}{'iterations':>12}{'evaluations':>13}")
    print(f"{f'{n} requests, 70B TP=8, cached':<44}{wall:>10.2f}{its:>12}{evals:>13}")
    print(f"{f'{n} requests, 70B TP=8, no cache (est.)':<44}{its * per_eval:>10.1f}"
          f"{its:>12}{its:>13}")
    print(f"cache speed-up: {its * per_eval / wall:.1f}x; target <= 10 s: "
          f"{'met' if wall <= 10 else 'missed'}; "
          f"{res.summary['output_tokens_per_s']:.0f} output tok/s simulated")


def bench_search(points: int) -> None:
    axes = itertools.product(("h100", "h200"), (1, 2, 4, 8), (1, 2, 4, 8),
                             (32, 64, 128, 256, 512), (2048, 4096, 8192, 16384),
                             (1, 2, 3))
    chosen = []
    for gpu, tp, rep, seqs, tokens, _ in axes:
        if tp * rep <= 8:
            chosen.append({"gpu": gpu, "tp": tp, "pp": 1, "replicas": rep,
                           "settings": {"max_num_seqs": seqs, "max_num_batched_tokens": tokens}})
    random.Random(0).shuffle(chosen)  # a sample across layouts, not the first layout's knobs
    chosen = chosen[:points]
    t0 = time.perf_counter()
    res = search("llama3_8b", chosen, load=Load(isl=1024, osl=128, requests=300, rate=40),
                 slo={"ttft": 1.0, "tpot": 0.04})
    wall = time.perf_counter() - t0
    per = wall / len(chosen)
    print(f"\n{'search':<44}{'points':>10}{'wall (s)':>12}{'s/point':>13}")
    print(f"{'llama3_8b, 300 requests per point':<44}{len(chosen):>10}{wall:>12.1f}{per:>13.3f}")
    print(f"1,000 points at this rate: {per * 1000 / 60:.1f} min (target <= 10 min: "
          f"{'met' if per * 1000 <= 600 else 'missed'}); cheapest meeting the SLO: "
          + (f"{res.best['gpu']} tp={res.best['tp']} x{res.best['replicas']} "
             f"{res.best['settings']}" if res.best is not None else "none"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--skip-search", action="store_true")
    args = ap.parse_args()
    bench_trace(args.requests)
    if not args.skip_search:
        bench_search(args.points)


if __name__ == "__main__":
    main()
