"""``accelsim roofline HW WORKLOAD [--plot roofline.png] [--measured FILE.csv] [--json]``.

Prints the machine's roofs (bandwidth and ridge point per memory level) and one row per
layer: FLOPs, bytes and arithmetic intensity at each level, the compulsory-traffic
intensity (analytical), the attainable bound and which bound holds, and the simulated
performance with its fraction of the bound. ``--plot`` draws the log-log roofline with one
point per layer (simulated) and measured points overlaid. ``--measured`` reads a CSV with a
``layer`` column and ``time_s`` (or ``flops_per_s``) per layer; a cell that is not a
positive number is one error line naming the file, row and column.

Every single-device machine kind answers through its device
(:func:`accelsim.devices.device_for`: ``layer_table`` and ``roofs``; a CPU runs every op at
the roofs' precision). Systems and nodes have no single roofline: one error line.

Imports: errors, safe_text, analysis.roofline, api, devices, report.export, report.plots_roofline,
cli.run_help.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim import safe_text
from accelsim.analysis import roofline as rl
from accelsim.cli.run_help import KindHelp
from accelsim.devices import device_for
from accelsim.errors import ConfigError

ROOFLINE_FLAGS = {"precision": "--precision", "dataflow": "--dataflow"}
"""``roofline``'s machine-kind options: option name -> flag."""


def roofline_options(device: Any) -> frozenset[str]:
    """The machine-kind options of ``roofline`` a device (or its class) takes: ``dataflow``
    where it runs dataflows (arrays), ``precision`` elsewhere (GPUs, CPUs: the roofs'
    precision; an array's roofs are its own precision)."""
    return frozenset({"dataflow" if "dataflow" in device.run_flags else "precision"})


class RooflineHelp(KindHelp):
    """``accelsim roofline HW --help``: only the options HW's kind takes."""

    command = "roofline"
    lead = "The roofline of WORKLOAD on"
    flags = ROOFLINE_FLAGS
    taken = staticmethod(roofline_options)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``roofline`` subcommand."""
    p = sub.add_parser("roofline", help="roofline table and plot of a workload on a machine",
                       description=__doc__.split("\n\n")[0] + " `accelsim roofline HW --help` "
                       "lists only the options HW's kind takes.", add_help=False)
    p.add_argument("-h", "--help", action=RooflineHelp, help="show this help (with HW: the "
                   "options that machine's kind takes) and exit")
    p.add_argument("hw", metavar="HW", help="machine: built-in name or YAML path")
    p.add_argument("workload", metavar="WORKLOAD", help="workload: built-in name or file")
    g = p.add_argument_group("machine-kind options (refused by kinds they do not apply to)")
    g.add_argument("--precision", default=None,
                   help="GPUs and CPUs: precision of the roofs (GPU: default fp16; CPU: the "
                   "machine's default)")
    g.add_argument("--dataflow", default=None,
                   help="systolic machines: dataflow (default: the machine's)")
    p.add_argument("--plot", metavar="PNG", default=None, help="write the roofline plot here")
    p.add_argument("--measured", metavar="CSV", default=None,
                   help="measured per-layer times (columns: layer, time_s or flops_per_s)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--wide", action="store_true",
                   help="every level's bytes and intensity (default: the off-chip level's)")
    p.set_defaults(func=run)


def _number(path: str, row: int, column: str, value: Any) -> float:
    """A measured cell as a float; a non-numeric cell is a ConfigError naming file, row, column."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ConfigError(path, f"row {row}.{column}", value, "must be a number") from None
    if math.isnan(out):
        raise ConfigError(path, f"row {row}.{column}", value, "must be a number (it is empty)")
    return out


def read_measured(path: str, points: pd.DataFrame, level: str) -> pd.DataFrame:
    """Measured points: ``layer, intensity, flops_per_s`` joined with the simulated table.

    Each row needs a ``flops_per_s`` or a ``time_s`` value (``flops_per_s`` wins when both
    are given); rows are numbered as in the file (the header is row 1)."""
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ConfigError(path, None, None, f"cannot read measured CSV ({exc})") from None
    if "layer" not in df:
        raise ConfigError(path, "columns", list(df.columns), "needs a 'layer' column")
    if "flops_per_s" not in df and "time_s" not in df:
        raise ConfigError(path, "columns", list(df.columns), "needs 'time_s' or 'flops_per_s'")
    known = set(points["layer"].astype(str))
    rows = []
    for i, rec in df.iterrows():
        row = int(i) + 2
        name = str(rec["layer"]).strip()
        if name not in known:
            raise ConfigError(path, f"row {row}.layer", name, "no such layer in the workload")
        p = points[points["layer"].astype(str) == name].iloc[0]
        rate_cell = str(rec.get("flops_per_s", "")).strip()
        if rate_cell:
            rate = _number(path, row, "flops_per_s", rate_cell)
            if not rate > 0 or math.isinf(rate):
                raise ConfigError(path, f"row {row}.flops_per_s", rate_cell,
                                  "must be a finite number > 0")
        else:
            time_cell = str(rec.get("time_s", "")).strip()
            if not time_cell:
                raise ConfigError(path, f"row {row}.time_s", time_cell,
                                  "needs a time_s or flops_per_s value")
            t = _number(path, row, "time_s", time_cell)
            if not t > 0 or math.isinf(t):
                raise ConfigError(path, f"row {row}.time_s", time_cell,
                                  "must be a finite number > 0")
            rate = float(p["flops"]) / t
        rows.append({"layer": name, "intensity": p.get(f"intensity_{level}", math.nan),
                     "flops_per_s": rate})
    return pd.DataFrame(rows, columns=["layer", "intensity", "flops_per_s"])


def roofline_tables(machine: Any, workload: Any, *, precision: str | None = None,
                    layers: pd.DataFrame | None = None) -> tuple[rl.MachineRoofs, pd.DataFrame]:
    """(roofs, table): simulated rows when ``layers`` is given, else analytical rows; the
    compulsory-traffic intensity is added as ``intensity_min`` where layer names match."""
    roofs = device_for(machine).roofs(precision)
    prec = precision or roofs.precision
    analytic = rl.workload_table(workload.ops, roofs, prec)
    if layers is None:
        table = analytic
    else:
        table = rl.simulated_table(layers, machine, roofs)
        main = f"intensity_{roofs.offchip_level}"
        amap = dict(zip(analytic["layer"], analytic[main], strict=True))
        table["intensity_min"] = [amap.get(n, math.nan) for n in table["layer"]]
    return roofs, table


def _text(roofs: rl.MachineRoofs, table: pd.DataFrame, measured: pd.DataFrame | None,
          title: str, *, wide: bool = False) -> str:
    """The ridge table and the per-layer table; the per-level bytes and intensities of the
    on-chip levels only with ``wide`` (the off-chip level's always: what binds most layers)."""
    from accelsim.report.export import text_table

    lines = [safe_text.show(title), ""]
    rt = roofs.ridge_table()
    lines.append(text_table(pd.DataFrame({
        "level": rt["level"],
        "bandwidth GB/s": rt["bandwidth_bytes_per_s"] / 1e9,
        "ridge FLOP/B": rt["ridge_flop_per_byte"]})))
    lines.append("")
    levels = [lv for lv in rl.levels_sorted(roofs.levels) if f"intensity_{lv}" in table]
    hidden = [lv for lv in levels if lv != roofs.offchip_level] if not wide else []
    levels = [lv for lv in levels if lv not in hidden]
    show = pd.DataFrame({"layer": table["layer"], "op": table["op"],
                         "GFLOP": table["flops"] / 1e9})
    for lv in levels:
        show[f"MB {lv}"] = table[f"bytes_{lv}"] / 1e6
        show[f"I {lv}"] = [rl.format_intensity(v) for v in table[f"intensity_{lv}"]]
    if "intensity_min" in table:
        show["I min"] = [rl.format_intensity(v) for v in table["intensity_min"]]
    show["bound"] = table["bound"]
    show["bound TFLOP/s"] = table["attainable_flops_per_s"] / 1e12
    if "achieved_flops_per_s" in table:
        show["sim TFLOP/s"] = table["achieved_flops_per_s"] / 1e12
        show["% of bound"] = 100 * table["fraction_of_attainable"]
    if measured is not None and len(measured):
        mmap = dict(zip(measured["layer"], measured["flops_per_s"], strict=True))
        show["meas TFLOP/s"] = [mmap.get(str(n), math.nan) / 1e12 for n in table["layer"]]
    lines.append(text_table(show))
    if hidden:
        lines.append(f"(bytes and intensity at {', '.join(hidden)}: --wide, or --json)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the roofline table (or JSON) and write the plot."""
    from accelsim.api import load_hw, load_wl

    machine = load_hw(args.hw)
    device = device_for(machine, source=args.hw)
    taken = roofline_options(device)
    for name, flag in ROOFLINE_FLAGS.items():
        value = getattr(args, name, None)
        if value is not None and name not in taken:
            from accelsim.devices import KINDS

            who = " and ".join(c.noun or c.kind for c in KINDS.values()
                               if name in roofline_options(c))
            raise ConfigError("command line", flag, value,
                              f"applies to {who}, not {device.noun or device.kind}")
    workload = load_wl(args.workload)
    layers, precision = device.layer_table(workload.ops, precision=args.precision,
                                           dataflow=args.dataflow)
    roofs, table = roofline_tables(machine, workload, precision=precision, layers=layers)
    from accelsim.report.plots_roofline import choose_level

    level = choose_level(roofs.ridge_table(), table)
    measured = read_measured(args.measured, table, level) if args.measured else None
    title = (f"roofline: {workload.name} on {roofs.name} ({roofs.precision}), "
             f"peak {roofs.peak_flops_per_s / 1e12:.4g} TFLOP/s"
             )
    if args.plot:
        from accelsim.report.plots_roofline import plot_roofline, save

        ax = plot_roofline(roofs.ridge_table(), table, level=level, measured=measured, title=title,
                           offscreen=True)
        save(ax, args.plot)
    if args.json:
        from accelsim.report.export import dumps

        doc = {"machine": roofs.name, "workload": workload.name, "precision": roofs.precision,
               "peak_flops_per_s": roofs.peak_flops_per_s,
               "roofs": json.loads(roofs.ridge_table().to_json(orient="records")),
               "layers": json.loads(table.to_json(orient="records")),
               "measured": None if measured is None else
               json.loads(measured.to_json(orient="records"))}
        print(dumps(doc))
        return 0
    print(_text(roofs, table, measured, title, wide=args.wide))
    if args.plot:
        print(f"\nplot: {safe_text.show(Path(args.plot))}")
    return 0
