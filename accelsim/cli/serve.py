"""``accelsim serve SYSTEM MODEL``: an LLM served on simulated GPUs under a request stream.

SYSTEM is a system YAML or a GPU name (the built-in node of that GPU: ``h200`` ->
``hgx_h200_x8``); MODEL a zoo transformer (``llama3_70b``) or a Hugging Face ``config.json``.
Prints throughput, TTFT / TPOT / ITL / end-to-end latency (mean, p50, p90, p99), goodput under
``--slo``, KV-cache use, preemptions, GPU busy share and energy per token; ``--json`` prints
the document instead; ``--out DIR`` writes ``requests.csv``, ``iterations.csv`` and
``summary.json``; ``--plot`` the batch/KV timeline; ``--perfetto`` a trace of the iterations.
Ctrl-C stops the simulation and prints what finished so far.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from accelsim.cli.run import parse_sets
from accelsim.errors import ConfigError
from accelsim.files import write_output
from accelsim.safe_text import show
from accelsim.units import format_time


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``serve`` subcommand."""
    p = sub.add_parser("serve", help="serve an LLM on simulated GPUs: throughput, TTFT, TPOT",
                       description="Simulate a serving engine (continuous batching, chunked "
                                   "prefill, paged KV cache) running MODEL on SYSTEM's GPUs "
                                   "under a request stream.")
    p.add_argument("system", help="system YAML or GPU name (its built-in node: h200 -> "
                   "hgx_h200_x8)")
    p.add_argument("model", help="zoo transformer (llama3_8b, llama3_70b, gpt2_xl) or a "
                   "Hugging Face config.json")
    g = p.add_argument_group("parallelism")
    g.add_argument("--tp", type=int, default=1, help="tensor-parallel GPUs per replica (1)")
    g.add_argument("--pp", type=int, default=1, help="pipeline stages per replica (1)")
    g.add_argument("--replicas", type=int, default=1, help="data-parallel replicas behind "
                   "the engine's router (1)")
    g.add_argument("--disaggregate", default=None, metavar="P:D",
                   help="prefill/decode disaggregation: P prefill and D decode replicas (the "
                        "KV cache copied over the system's links after the first token)")
    g = p.add_argument_group("engine")
    g.add_argument("--engine", default="vllm", help="configs/engines/ name or YAML: vllm, "
                   "sglang, tensorrt_llm (vllm)")
    g.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override an engine field, e.g. --set max_num_seqs=128")
    g.add_argument("--dtype", default=None, help="weights and activations, e.g. fp8 "
                   "(default: the model's)")
    g = p.add_argument_group("requests")
    g.add_argument("--isl", type=int, default=1024, help="input tokens per request (1024)")
    g.add_argument("--osl", type=int, default=128, help="output tokens per request (128)")
    g.add_argument("--requests", type=int, default=200, help="requests (200)")
    g.add_argument("--rate", default="inf", help="arrivals per second (Poisson) or inf "
                   "(all at once; default)")
    g.add_argument("--trace", default=None, metavar="FILE",
                   help="arrivals from a CSV/JSONL file (arrival_s, input_tokens, output_tokens)")
    g.add_argument("--seed", type=int, default=0, help="seed of the Poisson arrivals (0)")
    g.add_argument("--arrivals", default="poisson", choices=("poisson", "poisson-exact"),
                   help="poisson: one seeded draw (default); poisson-exact: that draw's gaps "
                        "rescaled to exactly the rate (to compare with a benchmark)")
    g.add_argument("--slo", default=None, metavar="BOUNDS",
                   help="goodput bounds, e.g. ttft=2s,tpot=50ms")
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print the JSON document")
    g.add_argument("--out", default=None, metavar="DIR",
                   help="write requests.csv, iterations.csv and summary.json here")
    g.add_argument("--plot", default=None, metavar="FILE.png",
                   help="timeline of batch size and KV-cache use")
    g.add_argument("--perfetto", default=None, metavar="FILE.json",
                   help="Perfetto trace of the iterations")
    p.set_defaults(func=run)


def _ms(stats: dict) -> str:
    cells = []
    for key in ("mean", "p50", "p90", "p99"):
        v = stats[key]
        cells.append(f"{key} {format_time(v) if math.isfinite(v) else '-'}")
    return ", ".join(cells)


def summary_lines(result) -> list[str]:
    """The terminal summary of a serving run (each line within 100 columns)."""
    s, st = result.summary, result.settings
    stream = (f"trace {st['trace']}" if st["trace"] else
              f"{st['requests']} requests, {st['isl']} in / {st['osl']} out tokens, "
              f"rate {st['rate']}/s"
              + (" (Poisson, exactly at the rate)" if st.get("arrivals") == "poisson-exact"
                 and st["rate"] != "inf" else ""))
    lines = [
        f"{st['model']} on {st['system']} ({st['gpus']}x {st['gpu']}: tp={st['tp']} "
        f"pp={st['pp']} x{st['replicas']} replicas"
        + (f", prefill:decode {st['disaggregate']}" if st.get("disaggregate") else "")
        + f"), {st['engine']}, {st['dtype']} "
        f"(KV {st['kv_cache_dtype']})",
        f"  {stream}",
        f"  finished {s['finished']}/{s['requests']} in {format_time(s['makespan_s'])}"
        + ("  (interrupted)" if st["interrupted"] else ""),
        f"  throughput: {s['output_tokens_per_s']:.5g} output tok/s, "
        f"{s['input_tokens_per_s']:.5g} input tok/s, {s['requests_per_s']:.4g} req/s",
        f"  TTFT: {_ms(s['ttft_s'])}",
        f"  TPOT: {_ms(s['tpot_s'])}",
        f"  ITL:  {_ms(s['itl_s'])}",
        f"  E2E:  {_ms(s['e2e_s'])}",
        f"  KV cache: {s['kv_cache_blocks']} blocks, use mean {s['kv_cache_use_mean']:.1%} "
        f"max {s['kv_cache_use_max']:.1%}; preemptions {s['preemptions']}; "
        f"iterations {s['iterations']}",
        f"  GPU busy {s['gpu_busy_share']:.1%}; energy {s['energy_j']:.4g} J "
        f"({s['energy_per_output_token_j']:.3g} J per output token)",
    ]
    if st.get("validation") == "unvalidated":
        lines.insert(1, f"  UNVALIDATED: {st['gpu']}'s values are from its datasheet only")
    if "slo" in s:
        bounds = ", ".join(f"{k}<={format_time(v)}" for k, v in s["slo"].items())
        lines.append(f"  goodput ({bounds}): {s['goodput_requests_per_s']:.4g} req/s, "
                     f"{s['slo_attainment']:.1%} of requests met it")
    return lines


def run(args: argparse.Namespace) -> int:
    """Run the serving simulation and print (or write) its results."""
    from accelsim.api.serving import serve

    overrides = parse_sets(args.set) if args.set else None
    if args.trace is not None and not Path(args.trace).is_file():
        raise ConfigError(args.trace, None, None, "no such trace file")
    result = serve(args.system, args.model, engine=args.engine, tp=args.tp, pp=args.pp,
                   replicas=args.replicas, dtype=args.dtype, requests=args.requests,
                   isl=args.isl, osl=args.osl, rate=args.rate, trace=args.trace,
                   slo=args.slo, overrides=overrides, seed=args.seed,
                   arrivals=args.arrivals, disaggregate=args.disaggregate)
    if args.json:
        print(result.to_json())
    else:
        for line in summary_lines(result):
            print(show(line))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_output(out / "requests.csv", result.requests.to_csv(index=False))
        write_output(out / "iterations.csv", result.iterations.to_csv(index=False))
        write_output(out / "summary.json", result.to_json())
        if not args.json:
            print(show(f"wrote {out / 'requests.csv'}, iterations.csv, summary.json"))
    if args.plot:
        fig = result.timeline_figure()
        fig.savefig(args.plot, dpi=120)
        if not args.json:
            print(show(f"wrote {args.plot}"))
    if args.perfetto:
        write_output(args.perfetto, json.dumps(result.perfetto()))
        if not args.json:
            print(show(f"wrote {args.perfetto}"))
    return 130 if result.settings["interrupted"] else 0
