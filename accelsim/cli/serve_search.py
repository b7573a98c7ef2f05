"""``accelsim serve-search MODEL``: the cheapest serving configuration that meets an SLO.

Axes: ``--gpus h100,h200``, ``--tp 1,2,4,8``, ``--pp 1``, ``--replicas 1,2,4`` and engine
fields (``--grid max_num_seqs=64,256``, repeatable); the load (``--isl``, ``--osl``,
``--requests``, ``--rate`` or ``--trace``); ``--slo ttft=1s,tpot=50ms`` and ``--attainment``
(default 0.9 of the requests); ``--price h100=2.5,h200=3.5`` per GPU-hour (default 1: cost =
GPUs). Prints the cheapest configuration meeting the SLO (or the closest when none does, exit
1), the Pareto front, and writes every row with ``--out FILE.csv``, the plot with ``--plot``.
``--workers N`` runs points on local processes, ``--scheduler ADDRESS`` on a Dask cluster.
"""

from __future__ import annotations

import argparse

from accelsim.errors import ConfigError
from accelsim.safe_text import show
from accelsim.units import format_time


def _ints(text: str, flag: str) -> list[int]:
    try:
        out = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise ConfigError("command line", flag, text, "expected integers, e.g. 1,2,4") from None
    if not out or any(v < 1 for v in out):
        raise ConfigError("command line", flag, text, "expected positive integers, e.g. 1,2,4")
    return out


def _grid(items: list[str]) -> dict[str, list]:
    from accelsim.safe_yaml import load_text

    out: dict[str, list] = {}
    for item in items:
        key, eq, values = item.partition("=")
        if not eq or not key.strip() or not values.strip():
            raise ConfigError("--grid", item, None, "expected FIELD=V1,V2,...")
        vals = []
        for v in values.split(","):
            try:
                vals.append(load_text(v.strip()))
            except Exception:  # noqa: BLE001 - not YAML: the text itself
                vals.append(v.strip())
        out[key.strip()] = vals
    return out


def _prices(text: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        gpu, eq, value = part.partition("=")
        try:
            price = float(value)
        except ValueError:
            price = -1.0
        if not eq or price <= 0:
            raise ConfigError("--price", part, value, "expected GPU=PRICE_PER_HOUR > 0")
        out[gpu.strip()] = price
    return out


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``serve-search`` subcommand."""
    p = sub.add_parser("serve-search", help="cheapest serving configuration meeting an SLO",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="zoo transformer or Hugging Face config.json")
    p.add_argument("--gpus", default="h200", help="GPU kinds, comma-separated (h200)")
    p.add_argument("--tp", default="1,2,4,8", help="tensor-parallel sizes (1,2,4,8)")
    p.add_argument("--pp", default="1", help="pipeline sizes (1)")
    p.add_argument("--replicas", default="1,2,4,8", help="data-parallel replicas (1,2,4,8)")
    p.add_argument("--max-gpus", type=int, default=None, help="at most this many GPUs")
    p.add_argument("--engine", default="vllm", help="engine config (vllm)")
    p.add_argument("--grid", action="append", default=[], metavar="FIELD=V1,V2",
                   help="an engine field to vary, e.g. max_num_seqs=64,256")
    p.add_argument("--isl", type=int, default=1024)
    p.add_argument("--osl", type=int, default=128)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--rate", default="10", help="arrivals per second (10) or inf")
    p.add_argument("--trace", default=None, metavar="FILE")
    p.add_argument("--slo", required=True, metavar="BOUNDS", help="e.g. ttft=1s,tpot=50ms")
    p.add_argument("--attainment", type=float, default=0.9,
                   help="share of requests that must meet the SLO (0.9)")
    p.add_argument("--price", default=None, metavar="GPU=PRICE,...",
                   help="price per GPU-hour (default 1 each: cost = GPUs)")
    p.add_argument("--workers", type=int, default=1, help="local worker processes (1)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler")
    p.add_argument("--out", default=None, metavar="FILE.csv", help="every configuration's row")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="cost vs throughput plot")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Search and print the answer."""
    from accelsim.files import write_output
    from accelsim.serve.metrics import parse_slo
    from accelsim.sweep.serving import Load, configurations, search

    points = configurations(args.model, [g for g in args.gpus.split(",") if g.strip()],
                            tp=_ints(args.tp, "--tp"), pp=_ints(args.pp, "--pp"),
                            replicas=_ints(args.replicas, "--replicas"),
                            engine_grid=_grid(args.grid), max_gpus=args.max_gpus)
    res = search(args.model, points, engine=args.engine,
                 load=Load(isl=args.isl, osl=args.osl, requests=args.requests, rate=args.rate,
                           trace=args.trace),
                 slo=parse_slo(args.slo), attainment=args.attainment,
                 prices=_prices(args.price), workers=args.workers, scheduler=args.scheduler)
    print(show(f"{len(res.rows)} configurations of {args.model} at rate {args.rate}/s, SLO "
               f"{args.slo} for {args.attainment:.0%} of requests"))

    def line(r) -> str:
        extra = f" {r['settings']}" if r["settings"] else ""
        return (f"{r['gpu']} tp={r['tp']} pp={r['pp']} x{r['replicas']}{extra}: "
                f"{r['gpus']} GPUs, cost {r['cost_per_hour']:.3g}/h, "
                f"{r['output_tokens_per_s']:.4g} tok/s, TTFT p90 {format_time(r['ttft_p90_s'])}, "
                f"TPOT p50 {format_time(r['tpot_p50_s'])}, {r['slo_attainment']:.0%} within SLO")

    if res.best is not None:
        print(show("cheapest meeting the SLO:\n  " + line(res.best), keep="\n"))
    else:
        print(show("no configuration meets the SLO"
                   + (f"; closest:\n  {line(res.closest)}" if res.closest is not None else ""),
                   keep="\n"))
    print(show("Pareto front (cost, TTFT p90, throughput):"))
    for _, r in res.front.iterrows():
        print(show("  " + line(r)))
    if args.out:
        write_output(args.out, res.rows.to_csv(index=False))
        print(show(f"wrote {args.out}"))
    if args.plot:
        res.figure().savefig(args.plot, dpi=120)
        print(show(f"wrote {args.plot}"))
    return 0 if res.best is not None else 1
