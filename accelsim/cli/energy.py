"""``accelsim energy HW WORKLOAD``: the energy of what HW can vary, side by side.

* An array (systolic or spatial): one row per dataflow (``--dataflows``; default the
  machine's own dataflow, then the others it runs: os, ws, is, and rs and nlr where it has
  per-PE scratchpads), with cycles, total energy, pJ per level and per operand, pJ/MAC,
  TOPS/W and average power. Row-stationary (``rs``) runs with its own mapping and action
  counts (:mod:`accelsim.hw.dataflows.row_stationary`); on a machine without scratchpads it
  is refused naming the machine and field.
* A GPU or CPU: one row per precision (``--precisions``; default every precision the machine
  runs that the workload takes, a zoo model built at each ``dtype``) and, on a GPU, execution
  mode (``--exec eager,graph,compiled``; default eager), the energy split into the parts its
  model computes (:mod:`accelsim.api.energy`).

Tables fit 120 columns (the most relevant columns; ``--wide``: all, ``--columns``: any); the
table and a per-layer (array) or per-op (GPU, CPU) breakdown are CSV under ``--out``, the
comparison JSON with ``--json``, a stacked-bar plot with ``--plot``. ``accelsim energy HW
--help`` lists only the options HW's kind takes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from accelsim.cli.run_help import KindHelp
from accelsim.config.systolic import ALL_DATAFLOWS, DATAFLOWS
from accelsim.errors import AccelsimError, ConfigError, UnsupportedError
from accelsim.report.terminal import Col
from accelsim.safe_text import show

ARRAY_COLUMNS = [
    Col("dataflow", "dataflow"), Col("cycles", "cycles", "int"), Col("energy_pj", "energy", "pj"),
    Col("mac_pj", "MAC", "pj"), Col("rf_pj", "RF", "pj"), Col("noc_pj", "NoC", "pj"),
    Col("sram_pj", "SRAM", "pj"), Col("dram_pj", "DRAM", "pj"),
    Col("chip_pj", "chip idle", "pj"), Col("input_pj", "inputs", "pj"),
    Col("weight_pj", "weights", "pj"), Col("output_pj", "outputs", "pj"),
    Col("psum_pj", "psums", "pj"), Col("pj_per_mac", "pJ/MAC", "plain"),
    Col("tops_per_w", "TOPS/W", "plain"), Col("avg_power_w", "power (W)", "plain")]
"""Columns of an array's dataflow table (header and unit kind: accelsim.report.terminal)."""

ARRAY_RELEVANCE = ["dataflow", "energy_pj", "pj_per_mac", "mac_pj", "rf_pj", "noc_pj",
                   "sram_pj", "dram_pj", "chip_pj", "cycles", "tops_per_w", "avg_power_w",
                   "weight_pj", "input_pj", "output_pj", "psum_pj"]
"""Array columns by relevance, most relevant first (the last go first to fit 120 columns)."""

DEVICE_COLUMNS = [
    Col("precision", "precision"), Col("exec", "exec"), Col("time_s", "time", "s"),
    Col("energy_pj", "energy", "pj"), Col("onchip_pj", "on-chip", "pj"),
    Col("hbm_pj", "HBM", "pj"), Col("mac_pj", "MAC", "pj"), Col("l1_pj", "L1", "pj"),
    Col("l2_pj", "L2", "pj"), Col("l3_pj", "L3", "pj"), Col("dram_pj", "DRAM", "pj"),
    Col("issue_pj", "issue", "pj"), Col("core_pj", "core clock", "pj"),
    Col("static_pj", "static", "pj"), Col("host_idle_pj", "host idle", "pj"),
    Col("pj_per_mac", "pJ/MAC", "plain"), Col("tops_per_w", "TOPS/W", "plain"),
    Col("avg_power_w", "power (W)", "plain")]
"""Columns of a GPU's or CPU's precision table (parts: :mod:`accelsim.api.energy`)."""

DEVICE_RELEVANCE = ["precision", "exec", "energy_pj", "pj_per_mac", "onchip_pj", "hbm_pj",
                    "static_pj", "host_idle_pj", "mac_pj", "dram_pj", "core_pj", "l1_pj",
                    "l2_pj", "l3_pj", "issue_pj", "time_s", "avg_power_w", "tops_per_w"]
"""GPU/CPU columns by relevance, most relevant first."""

PART_NOTES = {
    "gpu": "on-chip: dynamic energy of cores, register file, shared memory and L2; HBM: "
           "dynamic HBM traffic; static: leakage and idle draw while the GPU computes; host "
           "idle: the same while it waits for the host",
    "cpu": "MAC: MACs and vector FLOP; L1-L3, DRAM: reads of each level; issue: instructions "
           "issued; core clock: the busy cores' clocked energy; static: leakage and idle draw",
}
"""What each part of a GPU's or CPU's table is (printed under it)."""

ENERGY_FLAGS = {"dataflows": "--dataflows", "precisions": "--precisions",
                "exec_mode": "--exec"}
"""Machine-kind options of ``accelsim energy`` -> their flags."""


def energy_options(device: Any) -> frozenset[str]:
    """The :data:`ENERGY_FLAGS` a device (or device class) takes: dataflows where the kind
    takes a dataflow, precisions elsewhere; ``--exec`` where it takes an execution mode."""
    flags = device.run_flags
    axis = "dataflows" if "dataflow" in flags else "precisions"
    return frozenset({axis} | ({"exec_mode"} & flags))


class EnergyHelp(KindHelp):
    """``accelsim energy HW --help``: only the options HW's kind takes."""

    command = "energy"
    lead = "Compare the energy of WORKLOAD's runs on"
    flags = ENERGY_FLAGS
    taken = staticmethod(energy_options)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``energy`` subcommand."""
    p = sub.add_parser(
        "energy", help="compare the energy of dataflows, precisions or execution modes",
        description="Simulate WORKLOAD on HW once per dataflow (arrays) or per precision and "
                    "execution mode (GPUs, CPUs) and print the energy per level or part side "
                    "by side. `accelsim energy HW --help` lists only the options HW's kind "
                    "takes.", add_help=False)
    p.add_argument("-h", "--help", action=EnergyHelp, help="show this help (with HW: the "
                   "options that machine's kind takes) and exit")
    p.add_argument("hw", help="built-in hardware name or YAML path")
    p.add_argument("workload", help="built-in workload name, zoo model, YAML or SCALE-Sim CSV")
    g = p.add_argument_group("machine-kind options (refused by kinds they do not apply to)")
    g.add_argument("--dataflows", help="arrays: comma-separated dataflows among "
                   f"{', '.join(ALL_DATAFLOWS)} (default: the machine's own, then os, ws, is, "
                   "and rs, nlr where it has per-PE scratchpads)")
    g.add_argument("--precisions", help="GPUs and CPUs: comma-separated precisions (default: "
                   "every one the machine runs; a zoo model is built at each dtype, a "
                   "workload file keeps its own)")
    g.add_argument("--exec", dest="exec_mode", metavar="MODES",
                   help="GPUs: comma-separated execution modes among eager, graph, compiled "
                        "(default eager)")
    p.add_argument("--table", help="energy table name or path (default: the machine's)")
    p.add_argument("--mode", default="analytic", choices=["event", "analytic"],
                   help="engine (default analytic: equal to event when nothing contends)")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="override a hardware field, e.g. --set memory.sram.capacity_bytes='1 MiB'")
    p.add_argument("--wide", action="store_true",
                   help="print every column (default: the most relevant, within 120 columns)")
    p.add_argument("--columns", metavar="A,B,...",
                   help="print these columns (the names of the CSV table), in order")
    p.add_argument("--plot", metavar="FILE.png", help="write a stacked-bar plot per row")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--out", metavar="DIR", help="write energy-dataflows.csv (arrays) or "
                   "energy-precisions.csv (GPUs, CPUs), and energy-breakdown.csv, here")
    p.set_defaults(func=run)


def parse_list(text: str, flag: str) -> list[str]:
    """``"os,ws"`` -> ``["os", "ws"]``; an empty list is a :class:`ConfigError`."""
    items = [f.strip().lower() for f in text.split(",") if f.strip()]
    if not items:
        raise ConfigError("command line", flag, text, "name at least one")
    return items


def parse_dataflows(text: str) -> list[str]:
    """``"os,ws"`` -> ``["os", "ws"]``; an unknown name is a :class:`ConfigError`."""
    flows = parse_list(text, "--dataflows")
    for f in flows:
        if f not in ALL_DATAFLOWS:
            raise ConfigError("command line", "--dataflows", f,
                              f"must be among {', '.join(ALL_DATAFLOWS)}")
    return flows


def default_dataflows(machine: Any) -> list[str]:
    """What an array runs: its own dataflow first, then os, ws, is, and the spatial ones
    (rs, nlr) on a single array with per-PE scratchpads (as ``accelsim run --dataflow``
    accepts rs)."""
    a = machine.array
    spatial = a.scratchpads is not None and a.count == 1
    runs = [*DATAFLOWS, *(f for f in ALL_DATAFLOWS if f not in DATAFLOWS and spatial)]
    return [a.dataflow, *(f for f in runs if f != a.dataflow)]


def check_kind_options(dev: Any, args: argparse.Namespace) -> None:
    """A machine-kind option HW's kind does not take: one line naming it and its value."""
    from accelsim.devices import KINDS

    taken = energy_options(dev)
    for name, flag in ENERGY_FLAGS.items():
        value = getattr(args, name, None)
        if value is None or name in taken:
            continue
        who = " and ".join(c.noun for c in KINDS.values() if name in energy_options(c))
        raise ConfigError("command line", flag, value, f"applies to {who}, not {dev.noun}")


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim energy``."""
    from accelsim.api import load_hw
    from accelsim.cli.run import parse_sets
    from accelsim.cli.run_table import parse_columns
    from accelsim.devices import device_for, is_device

    overrides = parse_sets(args.set)
    machine = load_hw(args.hw, overrides or None)
    if not is_device(machine):
        raise ConfigError("command line", "HW", args.hw,
                          "energy compares runs on one device, not a system of several")
    dev = device_for(machine)
    check_kind_options(dev, args)
    parse_columns(args.columns)
    if "dataflow" in dev.run_flags:
        return run_array(args, machine, overrides)
    return run_device(args, machine, overrides)


def print_table(df: Any, columns: list[Col], relevance: list[str],
                args: argparse.Namespace) -> None:
    """``df`` within 120 columns (least relevant columns dropped; ``--wide``: all of them,
    ``--columns``: those named) and, when columns were dropped, how to see them."""
    from accelsim.cli.run_table import WIDTH, fitted_table, parse_columns, table_columns
    from accelsim.report.terminal import unit_table

    present = [c for c in columns if c.name in df.columns]
    picked = parse_columns(args.columns)
    if picked:
        print(unit_table(df, table_columns(df, columns, picked=picked)))
        return
    full = unit_table(df, present)
    if args.wide or len(max(full.splitlines(), key=len)) <= WIDTH:
        print(full)
        return
    print(fitted_table(df, present, relevance, keep=2))
    print("(more columns: --wide for all, --columns A,B,... for those of the CSV named)")


def run_array(args: argparse.Namespace, machine: Any, overrides: dict) -> int:
    """The dataflows of an array, side by side."""
    import pandas as pd

    from accelsim.api import simulate
    from accelsim.cli.run_table import wrap
    from accelsim.config.energy import load_energy_table
    from accelsim.report.energy import compute_energy, dataflow_comparison, energy_table_for
    from accelsim.report.export import dumps, write_table

    flows = parse_dataflows(args.dataflows) if args.dataflows else default_dataflows(machine)
    runs, breakdowns, table, wl = {}, [], None, None
    for flow in flows:
        r = simulate(machine, args.workload, dataflow=flow, mode=args.mode, energy=False)
        if table is None:
            table = load_energy_table(args.table) if args.table else energy_table_for(r.machine)
        rep = compute_energy(r.actions, r.layers, r.machine, table)
        runs[flow] = (r.layers, rep)
        breakdowns.append(rep.breakdown().assign(dataflow=flow))
        wl = r.workload
    comp = dataflow_comparison(runs)
    breakdown = pd.concat(breakdowns, ignore_index=True)
    if args.out:
        out = Path(args.out)
        write_table(comp, out / "energy-dataflows.csv")
        write_table(breakdown, out / "energy-breakdown.csv")
    if args.plot:
        from accelsim.report.plots_energy import plot_energy_by_dataflow, save

        ax = plot_energy_by_dataflow(
            comp, title=f"{wl.name} on {machine.name}: energy by level ({table.name})",
            offscreen=True)
        save(ax, args.plot)
    if args.json:
        print(dumps({"machine": machine.name, "workload": wl.name, "table": table.name,
                     "dataflows": comp.to_dict(orient="records")}))
        return 0
    a = machine.array
    print(wrap(show(f"{wl.name} on {machine.name} ({a.count}x {a.rows}x{a.cols} {a.precision}, "
                    f"{machine.clock_hz / 1e6:g} MHz), energy table {table.name} "
                    f"({table.node_nm:g} nm, {table.voltage_v:g} V)")))
    print_table(comp, ARRAY_COLUMNS, ARRAY_RELEVANCE, args)
    best = comp.loc[comp["energy_pj"].idxmin()]
    print(f"\nlowest energy: {best['dataflow']} ({best['pj_per_mac']:.3g} pJ/MAC)")
    if args.plot:
        print(f"wrote {show(args.plot)}", file=sys.stderr)
    return 0


def device_precisions(machine: Any) -> list[str]:
    """The precisions GPU or CPU ``machine`` runs, in the model's order."""
    from accelsim.config.cpu import CPU_PRECISIONS
    from accelsim.config.gpu import GPU_PRECISIONS

    known = GPU_PRECISIONS if machine.kind == "gpu" else CPU_PRECISIONS
    return [p for p in known if machine.supports(p)]


def workload_takes_dtype(spec: str) -> bool:
    """Whether ``spec`` is a zoo model with a ``dtype`` parameter it does not fix itself."""
    from accelsim.workload.models import zoo

    if not zoo.is_zoo_spec(spec):
        return False
    name, params = zoo.parse_spec(spec)
    return name in zoo.MODELS and "dtype" in zoo.parameters(name) and "dtype" not in params


def chosen_precisions(args: argparse.Namespace, machine: Any) -> tuple[list[str | None], bool]:
    """The precisions to run (``None``: the workload's own) and whether they were named."""
    runs = device_precisions(machine)
    if args.precisions is None:
        return (list(runs) if workload_takes_dtype(args.workload) else [None]), False
    named = parse_list(args.precisions, "--precisions")
    for p in named:
        if p not in runs:
            raise ConfigError("command line", "--precisions", p,
                              f"{machine.name} runs {', '.join(runs)}")
    if not workload_takes_dtype(args.workload):
        raise ConfigError("command line", "--precisions", args.precisions,
                          f"workload '{show(args.workload)}' fixes its own precisions (a zoo "
                          "model without dtype= takes them, e.g. resnet50)")
    return named, True


def run_device(args: argparse.Namespace, machine: Any, overrides: dict) -> int:
    """The precisions (and, on a GPU, execution modes) of a GPU or CPU, side by side."""
    from accelsim.api import load_hw
    from accelsim.api.energy import (
        precision_breakdown,
        precision_comparison,
        precision_runs,
    )
    from accelsim.cli.run_table import wrap
    from accelsim.report.energy import energy_table_for
    from accelsim.report.export import dumps, write_table

    hw = args.hw
    if args.table:  # the table a GPU or CPU model prices with is the machine's
        overrides = {**overrides, "energy.table": args.table}
        machine = load_hw(hw, overrides)
    precisions, named = chosen_precisions(args, machine)
    modes = parse_list(args.exec_mode, "--exec") if args.exec_mode else [None]
    runs, skipped = [], []
    for p in precisions:
        try:
            runs += precision_runs(hw, args.workload, [p], modes, mode=args.mode,
                                   overrides=overrides or None)
        except UnsupportedError as exc:  # the model has no cost of some op at ``p``
            if named or p is None:
                raise
            skipped.append(f"{p} ({str(exc).splitlines()[0]})")
    if not runs:
        raise AccelsimError(f"{show(args.workload)} runs at none of {machine.name}'s "
                            f"precisions: {'; '.join(skipped)}")
    comp = precision_comparison(runs)
    breakdown = precision_breakdown(runs)
    r0 = runs[0][2]
    table = energy_table_for(r0.machine)
    if args.out:
        out = Path(args.out)
        write_table(comp, out / "energy-precisions.csv")
        write_table(breakdown, out / "energy-breakdown.csv")
    label = comp["precision"] + (" " + comp["exec"] if "exec" in comp else "")
    if args.plot:
        from accelsim.api.energy import CPU_PARTS, GPU_PARTS
        from accelsim.report.plots_energy import plot_energy_by_dataflow, save

        parts = GPU_PARTS if machine.kind == "gpu" else CPU_PARTS
        ax = plot_energy_by_dataflow(
            comp.assign(run=label), parts=[p.removesuffix("_pj") for p in parts], by="run",
            title=f"{r0.workload.name} on {machine.name}: energy by part ({table.name})",
            offscreen=True)
        save(ax, args.plot)
    if args.json:
        print(dumps({"machine": machine.name, "workload": r0.workload.name,
                     "table": table.name, "runs": comp.to_dict(orient="records"),
                     "skipped": skipped}))
        return 0
    print(wrap(show(f"{r0.workload.name} on {machine.name} ({machine.kind}), energy table "
                    f"{table.name} ({table.node_nm:g} nm)")))
    print_table(comp, DEVICE_COLUMNS, DEVICE_RELEVANCE, args)
    print(wrap(PART_NOTES[machine.kind]))
    if skipped:
        print(wrap(show(f"not run: {'; '.join(skipped)}")))
    best = comp["energy_pj"].idxmin()
    print(f"\nlowest energy: {label[best]} ({comp['pj_per_mac'][best]:.3g} pJ/MAC)")
    if args.plot:
        print(f"wrote {show(args.plot)}", file=sys.stderr)
    return 0
