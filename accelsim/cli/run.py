"""``accelsim run HW WORKLOAD``: per-layer table, totals, CSV (and JSON, trace, HTML report)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from accelsim.cli.run_table import (
    BREAKDOWN_COLUMNS,
    DEVICE_COLUMNS,
    SYSTOLIC_COLUMNS,
    device_view,
    energy_line,
    layer_tables,
    systolic_view,
)
from accelsim.config.systolic import ALL_DATAFLOWS
from accelsim.devices.results import ModelRun
from accelsim.errors import ConfigError
from accelsim.report.terminal import scaled, unit_table
from accelsim.safe_text import safe_name, show

DEFAULT_HW = "tpu_v4"
DEFAULT_WORKLOAD = "resnet50_convs"

SUMMARY_ABOVE = 40
"""Runs with more layers than this print a per-op summary and the slowest layers only."""

DEFAULT_TOP = 15
"""Layers shown in that one-screen summary (``--top N`` to choose, ``--top 0`` for all)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand."""
    p = sub.add_parser("run", help=f"simulate a workload on a machine (default: {DEFAULT_WORKLOAD} on tpu_v4)",
                       description="Simulate WORKLOAD on HW; print a per-layer table and totals; "
                                   "write layers.csv (and more) under --out.")
    p.add_argument("hw", nargs="?", default=DEFAULT_HW,
                   help=f"built-in hardware name or YAML path (default {DEFAULT_HW})")
    p.add_argument("workload", nargs="?", default=DEFAULT_WORKLOAD,
                   help=f"built-in workload name, YAML, SCALE-Sim CSV, ONNX file, zoo spec "
                        f"(llama3_8b_decode:batch=8,context=4096) or Hugging Face config.json "
                        f"(FILE.json:mode=decode,batch=8,context=4096) (default {DEFAULT_WORKLOAD})")
    p.add_argument("--dataflow", help="os, ws, is or rs (rs: machines with per-PE scratchpads; "
                   "default: the machine's)")
    p.add_argument("--exec", dest="exec_mode", metavar="MODE",
                   help="GPUs: how the framework runs the model: eager (default: PyTorch eager, "
                        "every op dispatched by the host), graph (CUDA-graph replay) or "
                        "compiled (torch.compile fused kernels); tables in configs/lowering/")
    p.add_argument("--sparsity", default=None, metavar="FRACTION",
                   help="share of zero input activations in every layer (row-stationary zero "
                        "gating and run-length coding; default 0, dense)")
    p.add_argument("--mode", default="auto", choices=["auto", "event", "analytic"],
                   help="auto (default): the exact fast path wherever it equals the event "
                        "replay (every systolic run: the numba recurrence); event: the SimPy "
                        "replay; analytic: the fast path")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="override a hardware field, e.g. --set compute.array.rows=64")
    p.add_argument("--out", help="output folder for CSV files (default ./out; with --json, "
                                 "none are written unless --out is given)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    p.add_argument("--top", type=int, metavar="N",
                   help=f"show the N slowest layers (0: every layer; default: all up to "
                        f"{SUMMARY_ABOVE} layers, else a per-op summary and the {DEFAULT_TOP} slowest)")
    p.add_argument("--trace", metavar="FILE.json", help="write a Chrome/Perfetto timeline")
    p.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report")
    p.set_defaults(func=run)


class Overrides(dict):
    """``--set`` values: a mapping whose ``source`` names the flag in error messages."""

    source = "--set"


def parse_sets(items: list[str]) -> Overrides:
    """``["a.b=3", "c=1 MiB"]`` -> ``{"a.b": 3, "c": "1 MiB"}`` (values parsed as YAML within
    the budgets of :mod:`accelsim.safe_yaml`; text that is not YAML stays a string)."""
    from accelsim.safe_yaml import YamlSyntaxError, load_text

    out = Overrides()
    for item in items:
        if "=" not in item:
            raise ConfigError("--set", item, None, "expected PATH=VALUE")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise ConfigError("--set", item, None, "expected PATH=VALUE (the path is empty)")
        try:
            out[key] = load_text(value, "--set")
        except YamlSyntaxError:
            out[key] = value
        except ConfigError as exc:
            raise ConfigError("--set", key, value, exc.reason) from None
    return out


def progress_printer(after_s: float = 1.0):
    """A ``progress(done, total, name)`` callback drawing one status line on a terminal (stderr),
    once the run has taken more than ``after_s`` seconds (short runs print nothing)."""
    if not sys.stderr.isatty():
        return None
    import time

    start = time.perf_counter()

    def show(done: int, total: int, name: str) -> None:
        elapsed = time.perf_counter() - start
        if elapsed < after_s:
            return
        eta = elapsed / done * (total - done)
        sys.stderr.write(f"\r[{done}/{total}] {show(name)[:30]:<30} {elapsed:5.1f}s, eta {eta:4.1f}s")
        if done == total:
            sys.stderr.write("\r" + " " * 70 + "\r")
        sys.stderr.flush()

    return show


def _fraction(text: str) -> float:
    """``--sparsity`` value: a number within [0, 1]."""
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0.0 <= v <= 1.0:
        raise ConfigError("--sparsity", "--sparsity", text, "must be a fraction within [0, 1]")
    return v


def print_device(r: object, machine: object, args: argparse.Namespace) -> None:
    """The header line, the per-kernel table (or summary) and the totals of a per-op run
    (:class:`~accelsim.devices.results.ModelRun`: a GPU or CPU); a run with a host/stream
    timeline (an execution mode) also prints where the time goes and its memory check."""
    staged = not r.calls.empty
    how = (f"as {r.exec_mode} runs it ({r.replay} replay of host and GPU stream)" if staged
           else "one kernel per operator")
    print(f"{show(r.workload.name)} ({show(workload_source(r.workload))}) on {show(machine.name)} "
          f"({machine.kind}), {how}")
    print("\n".join(layer_tables(device_view(r.layers), DEVICE_COLUMNS, args.top, SUMMARY_ABOVE,
                                 DEFAULT_TOP)))
    t = r.totals
    print()
    line = (f"total: {scaled(t['time_s'], 's')}, {scaled(t['tflops_per_s'] * 1e12, 'flop_per_s')}, "
            f"DRAM {scaled(t['dram_bytes'], 'bytes')}, energy {scaled(t['energy_j'], 'j')} "
            f"({t['average_power_w']:.4g} W average)")
    if "tokens_per_s" in t:
        line += f", {t['tokens_per_s']:,.1f} tokens/s"
    if "time_per_output_token_s" in t:
        line += f", {scaled(t['time_per_output_token_s'], 's')} per output token"
    print(line)
    if staged:
        print()
        print("where the time goes (GPU time per kernel class; host-idle: GPU waiting for the host)")
        print(unit_table(r.breakdown, BREAKDOWN_COLUMNS))
        mem = r.memory
        if mem is not None:
            print(f"memory: {mem.describe()}; headroom {scaled(mem.headroom_bytes, 'bytes')}")


def output_dir(args: argparse.Namespace) -> Path | None:
    """Where CSV files go: ``--out``, else ./out, except that ``--json`` alone writes none."""
    if args.out:
        return Path(args.out)
    return None if args.json else Path("out")


def workload_source(workload: object) -> str:
    """Where a workload came from, for the header line: ``model zoo`` or the file it was read from."""
    from accelsim.files import config_dir

    src = getattr(workload, "source", None)
    if not src or str(src).startswith("zoo"):
        return "model zoo"
    path = Path(src).resolve()
    for base, label in ((config_dir("workloads"), "built-in workloads/"), (Path.cwd(), "")):
        try:
            return f"{label}{path.relative_to(base.resolve())}"
        except ValueError:
            continue
    return str(src)


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim run``: the machine's device runs the workload
    (:func:`accelsim.api.simulate`, through :func:`accelsim.devices.device_for`); a flag its
    kind does not take is one line (``--exec ... applies to GPUs, not systolic machines``)."""
    from accelsim.api import load_hw, simulate
    from accelsim.devices import CLI_FLAGS, check_run_flags, device_for

    if args.dataflow is not None and args.dataflow not in ALL_DATAFLOWS:
        raise ConfigError("command line", "--dataflow", args.dataflow,
                          f"must be one of {', '.join(ALL_DATAFLOWS)}")
    machine = load_hw(args.hw, parse_sets(args.set) or None)
    dev = device_for(machine, source=args.hw)
    check_run_flags(dev, {"exec_mode": args.exec_mode, "dataflow": args.dataflow,
                          "sparsity": args.sparsity, "trace": args.trace,
                          "report": args.report}, CLI_FLAGS)
    sparsity = _fraction(args.sparsity) if args.sparsity is not None else None
    result = simulate(machine, args.workload, dataflow=args.dataflow, mode=args.mode,
                      sparsity=sparsity, exec_mode=args.exec_mode, progress=progress_printer())
    written = write_outputs(result, args)
    if args.json:
        from accelsim.report.export import dumps

        print(dumps(result.to_dict()))
    elif isinstance(result, ModelRun):
        print_device(result, machine, args)
    else:
        print_systolic(result, args)
    if written:
        print(f"wrote {', '.join(show(w) for w in written)}", file=sys.stderr)
    return 0


def named_table(table: object, result: object) -> object:
    """``table`` with ``machine`` and ``workload`` columns appended: the original names, kept
    inside the file whose name holds only their :func:`~accelsim.safe_text.safe_name`."""
    return table.assign(machine=str(result.machine.name), workload=str(result.workload.name))


def output_stem(result: object) -> str:
    """``MACHINE-WORKLOAD``, each name through :func:`~accelsim.safe_text.safe_name`: names from
    files are data, never paths (``../x`` or ``/abs`` cannot leave the ``--out`` folder)."""
    return f"{safe_name(result.machine.name)}-{safe_name(result.workload.name)}"


def write_outputs(result: object, args: argparse.Namespace) -> list[str]:
    """The files ``--out``, ``--trace`` and ``--report`` ask for; the paths written. A per-op
    run (:class:`~accelsim.devices.results.ModelRun`) writes its layer table and its
    host/stream timeline; a systolic run its layer and action tables, its fold timeline and
    the HTML report. File names under ``--out`` come from :func:`output_stem`; the tables
    carry the original names (:func:`named_table`)."""
    from accelsim.report.export import write_table

    out = output_dir(args)
    written: list[str] = []
    if isinstance(result, ModelRun):
        if args.trace:
            from accelsim.report.stream_trace import write_stream_trace

            write_stream_trace(result, args.trace)
            written.append(str(args.trace))
        if out is not None:
            name = f"{output_stem(result)}-layers.csv"
            written.append(str(write_table(named_table(result.layers, result), out / name)))
        return written
    stem = f"{output_stem(result)}-{safe_name(result.dataflow)}"
    if out is not None:
        written.append(str(write_table(named_table(result.layers, result),
                                       out / f"{stem}-layers.csv")))
        written.append(str(write_table(named_table(result.actions, result),
                                       out / f"{stem}-actions.csv")))
    if args.trace:
        from accelsim.report.perfetto import write_trace

        written.append(str(write_trace(result, args.trace)))
    if args.report:
        from accelsim.devices import result_roofline
        from accelsim.report.html import write_html_report

        written.append(str(write_html_report(result, args.report, roofline=result_roofline(result))))
    return written


def print_systolic(result: object, args: argparse.Namespace) -> None:
    """The header line, the per-layer table (or summary) and the totals of a systolic run."""
    m = result.machine
    print(f"{show(result.workload.name)} ({show(workload_source(result.workload))}) on {show(m.name)} "
          f"({m.array.count}x {m.array.rows}x{m.array.cols} {m.array.precision}, "
          f"{result.dataflow}, {m.clock_hz / 1e6:g} MHz), {result.mode} engine"
          + (" (auto: exact, equal to the event replay)" if args.mode == "auto" else ""))
    print("\n".join(layer_tables(systolic_view(result.layers), SYSTOLIC_COLUMNS, args.top,
                                 SUMMARY_ABOVE, DEFAULT_TOP)))
    t = result.totals
    print()
    print(f"total: {t['total_cycles']:,} cycles = {scaled(t['time_s'], 's')}, "
          f"{scaled(t['flop_per_s'], 'flop_per_s')}, overall util {t['overall_util']:.1%}, "
          f"stalls {t['stall_cycles']:,} cycles, DRAM {scaled(t['dram_bytes'], 'bytes')}")
    energy = result.energy
    if energy is not None and hasattr(energy, "summary"):
        print(energy_line(energy.summary, show(energy.table.name), energy.table.node_nm))
