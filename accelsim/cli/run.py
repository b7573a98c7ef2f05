"""``accelsim run HW WORKLOAD``: per-layer table, totals, CSV (and JSON, trace, HTML report)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from accelsim.errors import ConfigError

DEFAULT_HW = "tpu_v4"
DEFAULT_WORKLOAD = "resnet50"

TABLE_COLUMNS = ["layer", "m", "n", "k", "dataflow", "folds", "total_cycles", "stall_cycles",
                 "time_s", "overall_util", "mapping_efficiency", "sram_reads", "sram_writes",
                 "dram_bytes"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand."""
    p = sub.add_parser("run", help="simulate a workload on a machine (default: resnet50 on tpu_v4)",
                       description="Simulate WORKLOAD on HW; print a per-layer table and totals; "
                                   "write layers.csv (and more) under --out.")
    p.add_argument("hw", nargs="?", default=DEFAULT_HW,
                   help=f"built-in hardware name or YAML path (default {DEFAULT_HW})")
    p.add_argument("workload", nargs="?", default=DEFAULT_WORKLOAD,
                   help=f"built-in workload name, YAML or SCALE-Sim CSV (default {DEFAULT_WORKLOAD})")
    p.add_argument("--dataflow", help="os, ws or is (default: the machine's)")
    p.add_argument("--exec", dest="exec_mode", metavar="MODE",
                   help="GPUs: how the framework runs the model: eager (default: PyTorch eager, "
                        "every op dispatched by the host), graph (CUDA-graph replay) or "
                        "compiled (torch.compile fused kernels); tables in configs/lowering/")
    p.add_argument("--mode", default="event", choices=["event", "analytic"],
                   help="event: SimPy replay (default); analytic: the exact numba fast path")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="override a hardware field, e.g. --set compute.array.rows=64")
    p.add_argument("--out", default="out", help="output folder for CSV files (default ./out)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    p.add_argument("--trace", metavar="FILE.json", help="write a Chrome/Perfetto timeline")
    p.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report")
    p.set_defaults(func=run)


def parse_sets(items: list[str]) -> dict[str, object]:
    """``["a.b=3", "c=1 MiB"]`` -> ``{"a.b": 3, "c": "1 MiB"}`` (numbers parsed as YAML)."""
    import yaml

    out: dict[str, object] = {}
    for item in items:
        if "=" not in item:
            raise ConfigError("--set", item, item, "expected PATH=VALUE")
        key, value = item.split("=", 1)
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def progress_printer():
    """A ``progress(done, total, name)`` callback drawing one status line on a terminal."""
    if not sys.stderr.isatty():
        return None
    import time

    start = time.perf_counter()

    def show(done: int, total: int, name: str) -> None:
        elapsed = time.perf_counter() - start
        eta = elapsed / done * (total - done)
        sys.stderr.write(f"\r[{done}/{total}] {name[:30]:<30} {elapsed:5.1f}s, eta {eta:4.1f}s")
        if done == total:
            sys.stderr.write("\r" + " " * 70 + "\r")
        sys.stderr.flush()

    return show


GPU_COLUMNS = ["layer", "op", "precision", "time_s", "tflops", "util", "dram_bytes", "energy_j",
               "bound"]


def run_device(args: argparse.Namespace, machine: object) -> int:
    """``accelsim run`` on a GPU or CPU: one kernel per operator, in sequence."""
    from accelsim.api.model_run import run_model
    from accelsim.report.export import dumps, text_table, write_table

    gpu = machine.kind == "gpu"
    for flag, value in (("--dataflow", args.dataflow), ("--report", args.report),
                        ("--trace", None if gpu else args.trace)):
        if value:
            raise ConfigError(flag, flag, value, f"applies to systolic machines, not {machine.kind}s")
    if args.exec_mode and not gpu:
        raise ConfigError("--exec", "--exec", args.exec_mode, f"applies to GPUs, not {machine.kind}s")
    replay = "event" if args.mode == "event" and gpu else "analytic"
    r = run_model(machine, args.workload, exec_mode=args.exec_mode, replay=replay,
                  progress=progress_printer())
    if args.trace:
        from accelsim.report.stream_trace import write_stream_trace

        write_stream_trace(r, args.trace)
        print(f"wrote {args.trace}", file=sys.stderr)
    out = Path(args.out)
    path = write_table(r.layers, out / f"{machine.name}-{r.workload.name}-layers.csv")
    if args.json:
        print(dumps(r.to_dict()))
        return 0
    how = (f"as {r.exec_mode} runs it ({r.replay} replay of host and GPU stream)" if gpu
           else "one kernel per operator")
    print(f"{r.workload.name} on {machine.name} ({machine.kind}), {how}")
    print(text_table(r.layers, GPU_COLUMNS))
    t = r.totals
    print()
    line = (f"total: {t['time_s'] * 1e3:.4g} ms, {t['tflops_per_s']:.4g} TFLOP/s, "
            f"DRAM {t['dram_bytes'] / 1e6:.4g} MB, energy {t['energy_j'] * 1e3:.4g} mJ "
            f"({t['average_power_w']:.4g} W average)")
    if "tokens_per_s" in t:
        line += f", {t['tokens_per_s']:,.1f} tokens/s"
    if "time_per_output_token_s" in t:
        line += f", {t['time_per_output_token_s'] * 1e3:.4g} ms per output token"
    print(line)
    if gpu:
        print()
        print("where the time goes (GPU time per kernel class; host-idle: GPU waiting for the host)")
        print(text_table(r.breakdown, ["kernel_class", "time_s", "kernels", "fraction"]))
        mem = r.memory
        if mem is not None:
            print(f"memory: {mem.describe()}; headroom {mem.headroom_bytes / 1e9:.3g} GB")
    print(f"wrote {path}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim run``."""
    from accelsim.api import simulate
    from accelsim.report.export import dumps, text_table, write_table

    sets = parse_sets(args.set) or None
    if not sets:
        from accelsim.api import load_hw

        machine = load_hw(args.hw)
        if getattr(machine, "kind", "") in ("gpu", "cpu"):
            return run_device(args, machine)
    if args.exec_mode:
        raise ConfigError("--exec", "--exec", args.exec_mode, "applies to GPUs, not systolic machines")
    result = simulate(args.hw, args.workload, dataflow=args.dataflow, mode=args.mode,
                      overrides=sets, progress=progress_printer())
    out = Path(args.out)
    stem = f"{result.machine.name}-{result.workload.name}-{result.dataflow}"
    write_table(result.layers, out / f"{stem}-layers.csv")
    write_table(result.actions, out / f"{stem}-actions.csv")
    if args.trace:
        from accelsim.report.perfetto import write_trace

        write_trace(result, args.trace)
    if args.report:
        from accelsim.analysis.roofline import result_roofline
        from accelsim.report.html import write_html_report

        write_html_report(result, args.report, roofline=result_roofline(result))
    if args.json:
        print(dumps(result.to_dict()))
        return 0
    m = result.machine
    print(f"{result.workload.name} on {m.name} ({m.array.count}x {m.array.rows}x{m.array.cols} "
          f"{m.array.precision}, {result.dataflow}, {m.clock_hz / 1e6:g} MHz), {args.mode} engine")
    cols = TABLE_COLUMNS + [c for c in ("energy_pj",) if c in result.layers.columns]
    print(text_table(result.layers, cols))
    t = result.totals
    print()
    print(f"total: {t['total_cycles']:,} cycles = {t['time_s'] * 1e3:.4g} ms, "
          f"{t['tflops_per_s']:.4g} TFLOP/s, overall util {t['overall_util']:.1%}, "
          f"stalls {t['stall_cycles']:,} cycles, DRAM {t['dram_bytes'] / 1e6:.4g} MB")
    if result.energy is not None and hasattr(result.energy, "summary_line"):
        print(result.energy.summary_line())
    print(f"wrote {out / (stem + '-layers.csv')}", file=sys.stderr)
    return 0
