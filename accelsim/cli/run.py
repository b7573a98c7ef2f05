"""``accelsim run HW WORKLOAD``: per-layer table, totals, CSV (and JSON, trace, HTML report).

The header says what ran (:mod:`accelsim.report.provenance`: resolved workload parameters and
their defaults, engine or execution mode, machine file, energy table, version), and ``--json``
carries the same as its ``run`` object. Tables fit 120 columns (``--wide``, ``--columns``:
:mod:`accelsim.cli.run_table`); ``accelsim run HW --help`` lists only the options HW's kind
takes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from accelsim.cli.run_help import KindHelp
from accelsim.cli.run_table import (
    BREAKDOWN_COLUMNS,
    DEVICE_COLUMNS,
    DEVICE_RELEVANCE,
    SYSTOLIC_COLUMNS,
    SYSTOLIC_RELEVANCE,
    device_view,
    energy_line,
    layer_tables,
    parse_columns,
    systolic_view,
    unmodelled_table,
    wrap,
)
from accelsim.config.systolic import ALL_DATAFLOWS
from accelsim.devices.results import ModelRun
from accelsim.errors import ConfigError
from accelsim.report.provenance import RunInfo, run_info
from accelsim.report.terminal import scaled, unit_table
from accelsim.safe_text import safe_name, show

DEFAULT_HW = "tpu_v4"
DEFAULT_WORKLOAD = "resnet50_convs"

SUMMARY_ABOVE = 40
"""Runs with more layers than this print a per-op summary and the slowest layers only."""

DEFAULT_TOP = 15
"""Layers shown in that one-screen summary (``--top N`` to choose, ``--top 0`` for all)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand: what to run, machine-kind options, engine, outputs."""
    p = sub.add_parser("run", help=f"simulate a workload on a machine (default: "
                                   f"{DEFAULT_WORKLOAD} on tpu_v4)",
                       description="Simulate WORKLOAD on HW; print a per-layer table and totals; "
                                   "write layers.csv (and more) under --out. `accelsim run HW "
                                   "--help` lists only the options HW's kind takes.",
                       add_help=False)
    p.add_argument("-h", "--help", action=KindHelp, help="show this help (with HW: the options "
                   "that machine's kind takes) and exit")
    p.add_argument("hw", nargs="?", default=None,
                   help=f"built-in hardware name or YAML path (default {DEFAULT_HW})")
    p.add_argument("workload", nargs="?", default=None,
                   help=f"built-in workload name, YAML, SCALE-Sim CSV, ONNX file, zoo spec "
                        f"(llama3_8b_decode:batch=8,context=4096), Hugging Face config.json "
                        f"(FILE.json:mode=decode,batch=8,context=4096), captured program or "
                        f"torch.profiler trace (TRACE.json.gz[:host=measured]) "
                        f"(default {DEFAULT_WORKLOAD})")
    add_kind_options(p.add_argument_group("machine-kind options (refused by kinds they do not "
                                          "apply to)"))
    add_engine_options(p.add_argument_group("engine"))
    add_output_options(p.add_argument_group("output"))
    p.set_defaults(func=run)


def add_kind_options(g: argparse._ArgumentGroup) -> None:
    """Options that apply to some machine kinds only (their ``run_flags`` names in
    :data:`accelsim.devices.CLI_FLAGS`)."""
    g.add_argument("--dataflow", help="systolic machines: os, ws, is or rs (rs: machines with "
                   "per-PE scratchpads; default: the machine's)")
    g.add_argument("--exec", dest="exec_mode", metavar="MODE",
                   help="GPUs: how the framework runs the model: eager (default: PyTorch eager, "
                        "every op dispatched by the host), graph (CUDA-graph replay) or "
                        "compiled (torch.compile fused kernels); tables in configs/lowering/")
    g.add_argument("--sparsity", default=None, metavar="FRACTION",
                   help="systolic machines: share of zero input activations in every layer "
                        "(row-stationary zero gating and run-length coding; default 0, dense)")
    g.add_argument("--tp", type=int, default=None, metavar="N",
                   help="GPUs and systems: tensor-parallel GPUs (Megatron sharding, an "
                        "all-reduce per attention and MLP block; a GPU name stands for its "
                        "built-in node, e.g. h200 -> hgx_h200_x8)")
    g.add_argument("--pp", type=int, default=None, metavar="N",
                   help="GPUs and systems: pipeline stages (contiguous layers, activations "
                        "sent on between stages)")
    g.add_argument("--ep", type=int, default=None, metavar="N",
                   help="GPUs and systems, mixture-of-experts models: expert-parallel groups "
                        "(the experts split N ways, an all-to-all dispatch and combine around "
                        "them; N attention groups of --tp GPUs split the sequences: "
                        "tp x ep x pp GPUs)")


def add_engine_options(g: argparse._ArgumentGroup) -> None:
    """How the run is replayed and which machine fields are overridden."""
    g.add_argument("--mode", default="auto", choices=["auto", "event", "analytic"],
                   help="auto (default): the exact fast path wherever it equals the event "
                        "replay (every systolic run: the numba recurrence); event: the SimPy "
                        "replay; analytic: the fast path")
    g.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="override a hardware field, e.g. --set compute.array.rows=64")


def add_output_options(g: argparse._ArgumentGroup) -> None:
    """What is printed and written."""
    g.add_argument("--out", help="output folder for CSV files (default ./out; with --json, "
                                 "none are written unless --out is given)")
    g.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    g.add_argument("--top", type=int, metavar="N",
                   help=f"show the N slowest layers (0: every layer; default: all up to "
                        f"{SUMMARY_ABOVE} layers, else a per-op summary and the {DEFAULT_TOP} "
                        f"slowest)")
    g.add_argument("--wide", action="store_true",
                   help="print every column at full width (default: the most relevant columns "
                        "of the machine's kind, within 120 columns)")
    g.add_argument("--columns", metavar="A,B,...",
                   help="print these columns of the layer table (the names of layers.csv), "
                        "in order")
    g.add_argument("--trace", metavar="FILE.json", help="write a Chrome/Perfetto timeline")
    g.add_argument("--trace-detail", choices=["auto", "full", "layers"], default="auto",
                   help=f"auto (default): every fold and transfer up to about "
                        f"{TRACE_LIMIT_BYTES // 10**6} MB, else per-layer slices with folds "
                        f"grouped; full: everything; layers: always grouped")
    g.add_argument("--report", metavar="FILE.html",
                   help="write a self-contained HTML report (tables, plots, roofline)")


TRACE_LIMIT_BYTES = 50 * 10**6
"""``--trace-detail auto`` groups a trace whose full form would be larger than this."""


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

    def draw(done: int, total: int, name: str) -> None:
        elapsed = time.perf_counter() - start
        if elapsed < after_s:
            return
        eta = elapsed / done * (total - done)
        sys.stderr.write(f"\r[{done}/{total}] {show(name)[:30]:<30} "
                         f"{elapsed:5.1f}s, eta {eta:4.1f}s")
        if done == total:
            sys.stderr.write("\r" + " " * 70 + "\r")
        sys.stderr.flush()

    return draw


def _fraction(text: str) -> float:
    """``--sparsity`` value: a number within [0, 1]."""
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0.0 <= v <= 1.0:
        raise ConfigError("--sparsity", "--sparsity", text, "must be a fraction within [0, 1]")
    return v


def print_device(r: ModelRun, info: RunInfo, args: argparse.Namespace) -> None:
    """The header, the per-kernel table (or summary) and the totals of a per-op run
    (:class:`~accelsim.devices.results.ModelRun`: a GPU or CPU); a run with a host/stream
    timeline (an execution mode) also prints where the time goes and its memory check."""
    tables = layer_tables(device_view(r.layers), DEVICE_COLUMNS, args.top, SUMMARY_ABOVE,
                          DEFAULT_TOP, relevance=DEVICE_RELEVANCE, wide=args.wide,
                          picked=parse_columns(args.columns))
    print("\n".join([*info.header_lines(), *tables]))
    t = r.totals
    print()
    line = (f"total: {scaled(t['time_s'], 's')}, {scaled(t['tflops_per_s'] * 1e12, 'flop_per_s')}, "
            f"DRAM {scaled(t['dram_bytes'], 'bytes')}, energy {scaled(t['energy_j'], 'j')} "
            f"({t['average_power_w']:.4g} W average)")
    if "tokens_per_s" in t:
        line += f", {t['tokens_per_s']:,.1f} tokens/s"
    if "time_per_output_token_s" in t:
        line += f", {scaled(t['time_per_output_token_s'], 's')} per output token"
    print(wrap(line))
    print_energy_flag(r)
    if not r.calls.empty:
        print()
        print("where the time goes (GPU time per kernel class; host-idle: GPU waiting for the "
              "host)")
        print(unit_table(r.breakdown, BREAKDOWN_COLUMNS))
        mem = r.memory
        if mem is not None:
            print(wrap(f"memory: {mem.describe()}; headroom {scaled(mem.headroom_bytes, 'bytes')}"))


def print_systolic(result: object, info: RunInfo, args: argparse.Namespace) -> None:
    """The header, the per-layer table (or summary) and the totals of a systolic run."""
    tables = layer_tables(systolic_view(result.layers), SYSTOLIC_COLUMNS, args.top,
                          SUMMARY_ABOVE, DEFAULT_TOP, relevance=SYSTOLIC_RELEVANCE,
                          wide=args.wide, picked=parse_columns(args.columns))
    print("\n".join([*info.header_lines(), *tables]))
    t = result.totals
    print()
    print(wrap(f"total: {t['total_cycles']:,} cycles = {scaled(t['time_s'], 's')}, "
               f"{scaled(t['flop_per_s'], 'flop_per_s')}, overall util {t['overall_util']:.1%}, "
               f"stalls {t['stall_cycles']:,} cycles, DRAM {scaled(t['dram_bytes'], 'bytes')}"))
    energy = result.energy
    if energy is not None and hasattr(energy, "summary"):
        print(wrap(energy_line(energy.summary, show(energy.table.name), energy.table.node_nm)))
    print_energy_flag(result)


def print_energy_flag(result: object) -> None:
    """One ``! energy: implausible: ...`` line when the run's GFLOP/J is above its machine's
    peak / TDP (``accelsim.report.power.energy_flag``, the rule ``compare`` applies)."""
    flag = getattr(result, "energy_flag", "")
    if flag:
        print(wrap(f"! energy: {flag}"))


def print_unmodelled(unmodelled: list[dict]) -> None:
    """The ops the workload's reader has no cost model for (costed as copies), when any."""
    if unmodelled:
        print()
        print("unmodelled ops (no cost model: each costed as a memory-bound copy of its tensors)")
        print(unmodelled_table(unmodelled))


def output_dir(args: argparse.Namespace) -> Path | None:
    """Where CSV files go: ``--out``, else ./out, except that ``--json`` alone writes none."""
    if args.out:
        return Path(args.out)
    return None if args.json else Path("out")


def resolve_workload(spec: str) -> tuple[object, dict | None]:
    """What ``simulate`` gets for ``spec`` and the parameters its graph was built with: a zoo or
    Hugging Face spec is built once here (its graph carries the resolved parameters), anything
    else is passed on as given (None)."""
    from accelsim.workload.models import zoo

    if zoo.is_zoo_spec(spec):
        graph = zoo.from_spec(spec)
        return graph, dict(graph.params)
    return spec, None


def unmodelled_ops(workload: object) -> list[dict]:
    """Rows ``{op, count, nodes}`` of what the workload's reader could not cost (an ONNX
    model's ``unmodelled``, a captured program's unmodelled calls)."""
    rows = [dict(r) for r in getattr(workload, "unmodelled", ()) or ()]
    program = getattr(workload, "program", None)
    if program is not None:
        from accelsim.workload.program_ops import unmodelled_calls

        rows += [{"op": k, "count": v, "nodes": ""} for k, v in unmodelled_calls(program).items()]
    return rows


def json_document(result: object, info: RunInfo, unmodelled: list[dict]) -> dict:
    """``accelsim run --json``: the result's document, its ``run`` object (what ran) and the
    ``unmodelled`` ops."""
    doc = result.to_dict()
    doc.setdefault("accelsim_version", info.version)
    doc["run"] = info.to_dict()
    doc["unmodelled"] = unmodelled
    return doc


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim run``: the machine's device runs the workload
    (:func:`accelsim.api.simulate`, through :func:`accelsim.devices.device_for`); a flag its
    kind does not take is one line (``--exec ... applies to GPUs, not systolic machines``)."""
    from accelsim.api import load_hw, simulate
    from accelsim.devices import CLI_FLAGS, check_run_flags, device_for, is_device

    hw = args.hw or DEFAULT_HW
    spec = args.workload or DEFAULT_WORKLOAD
    if args.dataflow is not None and args.dataflow not in ALL_DATAFLOWS:
        raise ConfigError("command line", "--dataflow", args.dataflow,
                          f"must be one of {', '.join(ALL_DATAFLOWS)}")
    overrides = parse_sets(args.set)
    machine = load_hw(hw, overrides or None)
    if (args.tp is not None or args.pp is not None or getattr(args, "ep", None) is not None
            or not is_device(machine)):
        return run_across_gpus(machine, spec, args)
    dev = device_for(machine, source=hw)
    check_run_flags(dev, {"exec_mode": args.exec_mode, "dataflow": args.dataflow,
                          "sparsity": args.sparsity, "trace": args.trace}, CLI_FLAGS)
    parse_columns(args.columns)
    sparsity = _fraction(args.sparsity) if args.sparsity is not None else None
    workload, graph_params = resolve_workload(spec)
    result = simulate(machine, workload, dataflow=args.dataflow, mode=args.mode,
                      sparsity=sparsity, exec_mode=args.exec_mode, progress=progress_printer())
    info = run_info(result, hw=hw, workload=spec, graph_params=graph_params,
                    overrides=dict(overrides), auto_mode=args.mode == "auto")
    unmodelled = unmodelled_ops(result.workload)
    if not args.json:  # a bad --columns is refused before any file is written
        (print_device if isinstance(result, ModelRun) else print_systolic)(result, info, args)
        print_unmodelled(unmodelled)
    written = write_outputs(result, args, info)
    if args.json:
        from accelsim.report.export import dumps

        print(dumps(json_document(result, info, unmodelled)))
    if written:
        print(wrap(f"wrote {', '.join(written)}"), file=sys.stderr)
    return 0


def run_across_gpus(machine: object, spec: str, args: argparse.Namespace) -> int:
    """``accelsim run SYSTEM MODEL --tp N --pp M``: one step of a transformer over the GPUs of
    a system (:func:`accelsim.devices.parallel.run_parallel`): rank 0's table per stage, the
    step, the collectives and the energy of every GPU."""
    from accelsim.devices.parallel import run_parallel

    for flag in ("dataflow", "sparsity", "trace", "report"):
        if getattr(args, flag, None) is not None:
            raise ConfigError("command line", f"--{flag}", getattr(args, flag),
                              "does not apply to a model across GPUs")
    result = run_parallel(machine, spec, tp=args.tp or 1, pp=args.pp or 1,
                          ep=getattr(args, "ep", None) or 1, exec_mode=args.exec_mode)
    if isinstance(result, ModelRun):  # tp = pp = ep = 1 on one GPU: the single-GPU run
        args.tp = args.pp = args.ep = None
        return run(args)
    t = result.totals
    if args.json:
        from accelsim.report.export import dumps

        print(dumps(result.to_dict()))
        return 0
    ep = f" ep={t['ep']}" if t.get("ep") else ""
    print(show(f"{result.workload} on {t['system']}: tp={t['tp']}{ep} pp={t['pp']} "
               f"({t['gpus']} GPUs, {t['exec_mode']})"))
    for s, stage in enumerate(result.stages):
        st = stage.totals
        coll_s = float(stage.layers.loc[stage.layers["op"] == "collective", "time_s"].sum())
        print(show(f"  stage {s}: {len(stage.layers)} ops, {scaled(st['time_s'], 's')} "
                   f"(collectives {scaled(coll_s, 's')})"))
    print(show(f"  step {scaled(t['time_s'], 's')}, pipeline interval "
               f"{scaled(t['pipeline_interval_s'], 's')}, collectives "
               f"{scaled(t['collective_s'], 's')}, energy {scaled(t['energy_j'], 'j')} "
               f"(every GPU)"))
    if t.get("tokens_per_s"):
        print(show(f"  {t['tokens_per_s']:.5g} tokens/s"))
    out = output_dir(args)
    if out is not None:
        from accelsim.report.export import write_table

        path = out / (f"{safe_name(t['system'])}-{safe_name(str(result.workload))}"
                      f"-tp{t['tp']}{ep.replace(' ep=', '-ep')}-pp{t['pp']}-layers.csv")
        print(wrap(f"wrote {show(write_table(result.layers, path))}"), file=sys.stderr)
    return 0


def named_table(table: object, result: object) -> object:
    """``table`` with ``machine`` and ``workload`` columns appended: the original names, kept
    inside the file whose name holds only their :func:`~accelsim.safe_text.safe_name`."""
    return table.assign(machine=str(result.machine.name), workload=str(result.workload.name))


def output_stem(result: object) -> str:
    """``MACHINE-WORKLOAD``, each name through :func:`~accelsim.safe_text.safe_name`: names from
    files are data, never paths (``../x`` or ``/abs`` cannot leave the ``--out`` folder)."""
    return f"{safe_name(result.machine.name)}-{safe_name(result.workload.name)}"


def write_outputs(result: object, args: argparse.Namespace,
                  info: RunInfo | None = None) -> list[str]:
    """The files ``--out``, ``--trace`` and ``--report`` ask for, as printable descriptions
    (a trace with its size and detail). A per-op run
    (:class:`~accelsim.devices.results.ModelRun`) writes its layer table and its host/stream
    timeline; a systolic run its layer and action tables and its fold timeline; every kind
    its HTML report. File names under ``--out`` come from :func:`output_stem`; the tables
    carry the original names (:func:`named_table`)."""
    from accelsim.report.export import write_table

    out = output_dir(args)
    written: list[str] = []
    per_op = isinstance(result, ModelRun)
    if out is not None:
        stem = (output_stem(result) if per_op
                else f"{output_stem(result)}-{safe_name(result.dataflow)}")
        written.append(show(write_table(named_table(result.layers, result),
                                        out / f"{stem}-layers.csv")))
        if not per_op:
            written.append(show(write_table(named_table(result.actions, result),
                                            out / f"{stem}-actions.csv")))
    if args.trace:
        written.append(write_run_trace(result, args.trace, args.trace_detail))
    if args.report:
        from accelsim.devices import result_roofline
        from accelsim.report.html import write_html_report

        path = write_html_report(result, args.report, roofline=result_roofline(result),
                                 info=info.to_dict() if info is not None else None,
                                 unmodelled=unmodelled_ops(result.workload))
        written.append(show(path))
    return written


def write_run_trace(result: object, path: str, detail: str) -> str:
    """Write the run's Perfetto timeline (``detail``: ``auto``, ``full`` or ``layers``, see
    ``--trace-detail``); ``PATH (SIZE[, grouped ...])`` for the ``wrote`` line."""
    if isinstance(result, ModelRun) and result.calls.empty:  # no per-call timeline (a CPU)
        from accelsim.report.stream_trace import write_op_trace as write
    elif isinstance(result, ModelRun):
        from accelsim.report.stream_trace import write_stream_trace as write
    else:
        from accelsim.report.perfetto import write_trace as write
    w = write(result, path, detail=detail, limit_bytes=TRACE_LIMIT_BYTES)
    note = f", {w.note}" if w.grouped else ""
    return f"{show(w.path)} ({scaled(w.size_bytes, 'bytes')}{note})"
