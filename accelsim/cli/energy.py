"""``accelsim energy HW WORKLOAD --dataflows os,ws,is``: energy of each dataflow, side by side.

Prints one row per dataflow (cycles, total energy, pJ per level and per operand, pJ/MAC,
TOPS/W, average power), writes the table and the per-layer breakdown as CSV under ``--out``,
and a stacked-bar plot with ``--plot``. Row-stationary (``rs``) runs on machines with per-PE
scratchpads (Eyeriss) with its own mapping and action counts
(:mod:`accelsim.hw.dataflows.row_stationary`); elsewhere it is refused naming the machine
and field.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from accelsim.config.systolic import ALL_DATAFLOWS
from accelsim.errors import ConfigError
from accelsim.safe_text import show

SHOWN = ["dataflow", "cycles", "energy_pj", "mac_pj", "rf_pj", "noc_pj", "sram_pj", "dram_pj",
         "chip_pj", "input_pj", "weight_pj", "output_pj", "psum_pj", "pj_per_mac", "tops_per_w",
         "avg_power_w"]
HEADERS = {"dataflow": ("dataflow", "text"), "cycles": ("cycles", "int"),
           "energy_pj": ("energy", "pj"), "mac_pj": ("MAC", "pj"), "rf_pj": ("RF", "pj"),
           "noc_pj": ("NoC", "pj"), "sram_pj": ("SRAM", "pj"), "dram_pj": ("DRAM", "pj"),
           "chip_pj": ("chip idle", "pj"),
           "input_pj": ("inputs", "pj"), "weight_pj": ("weights", "pj"),
           "output_pj": ("outputs", "pj"), "psum_pj": ("psums", "pj"),
           "pj_per_mac": ("pJ/MAC", "plain"), "tops_per_w": ("TOPS/W", "plain"),
           "avg_power_w": ("power (W)", "plain")}
"""Terminal header and unit kind (accelsim.report.terminal) of each shown column."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``energy`` subcommand."""
    p = sub.add_parser("energy", help="compare the energy of dataflows on one machine",
                       description="Simulate WORKLOAD on HW once per dataflow and print energy "
                                   "per level and operand side by side.")
    p.add_argument("hw", help="built-in hardware name or YAML path")
    p.add_argument("workload", help="built-in workload name, YAML or SCALE-Sim CSV")
    p.add_argument("--dataflows", default="os,ws,is",
                   help="comma-separated dataflows among os, ws, is, rs (default os,ws,is)")
    p.add_argument("--table", help="energy table name or path (default: the machine's)")
    p.add_argument("--mode", default="analytic", choices=["event", "analytic"],
                   help="engine (default analytic: equal to event when nothing contends)")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="override a hardware field, e.g. --set memory.sram.capacity_bytes='1 MiB'")
    p.add_argument("--plot", metavar="FILE.png", help="write a stacked-bar plot per dataflow")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--out", metavar="DIR", help="write energy-dataflows.csv and "
                                                "energy-breakdown.csv here")
    p.set_defaults(func=run)


def parse_dataflows(text: str) -> list[str]:
    """``"os,ws"`` -> ``["os", "ws"]``; an unknown name is a :class:`ConfigError`."""
    flows = [f.strip().lower() for f in text.split(",") if f.strip()]
    if not flows:
        raise ConfigError("--dataflows", "dataflows", text, "name at least one dataflow")
    for f in flows:
        if f not in ALL_DATAFLOWS:
            raise ConfigError("--dataflows", "dataflows", f,
                              f"must be among {', '.join(ALL_DATAFLOWS)}")
    return flows


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim energy``."""
    import pandas as pd

    from accelsim.api import simulate
    from accelsim.cli.run import parse_sets
    from accelsim.config.energy import load_energy_table
    from accelsim.report.energy import compute_energy, dataflow_comparison, energy_table_for
    from accelsim.report.export import dumps, write_table
    from accelsim.report.terminal import Col, unit_table

    flows = parse_dataflows(args.dataflows)
    overrides = parse_sets(args.set) or None
    runs, breakdowns, table, machine, wl = {}, [], None, None, None
    for flow in flows:
        r = simulate(args.hw, args.workload, dataflow=flow, mode=args.mode, overrides=overrides,
                     energy=False)
        if table is None:
            table = load_energy_table(args.table) if args.table else energy_table_for(r.machine)
        rep = compute_energy(r.actions, r.layers, r.machine, table)
        runs[flow] = (r.layers, rep)
        breakdowns.append(rep.breakdown().assign(dataflow=flow))
        machine, wl = r.machine, r.workload
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
    print(show(f"{wl.name} on {machine.name} ({a.count}x {a.rows}x{a.cols} {a.precision}, "
               f"{machine.clock_hz / 1e6:g} MHz), energy table {table.name} "
               f"({table.node_nm:g} nm, {table.voltage_v:g} V)"))
    print(unit_table(comp, [Col(c, *HEADERS[c]) for c in SHOWN if c in comp.columns]))
    best = comp.loc[comp["energy_pj"].idxmin()]
    print(f"\nlowest energy: {best['dataflow']} ({best['pj_per_mac']:.3g} pJ/MAC)")
    if args.plot:
        print(f"wrote {show(args.plot)}", file=sys.stderr)
    return 0
