"""``accelsim scalesim -c CFG -t TOPOLOGY [-i conv|gemm] -p OUTDIR``: a drop-in for SCALE-Sim.

Reads SCALE-Sim's own cfg and topology files unchanged and writes SCALE-Sim's
``COMPUTE_REPORT.csv``, ``BANDWIDTH_REPORT.csv`` and ``DETAILED_ACCESS_REPORT.csv`` into
``OUTDIR/<run_name>/``. See ``accelsim/report/SCALESIM.md`` for what matches SCALE-Sim
exactly and what comes from accelsim's own memory model.
"""

from __future__ import annotations

import argparse
import sys

from accelsim.safe_text import show


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``scalesim`` subcommand."""
    p = sub.add_parser(
        "scalesim", help="run a SCALE-Sim cfg + topology and write SCALE-Sim's report CSVs",
        description="Drop-in replacement for SCALE-Sim 3.0: reads its .cfg and topology CSV "
                    "and writes COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv and "
                    "DETAILED_ACCESS_REPORT.csv into OUTDIR/<run_name>/.")
    p.add_argument("-c", dest="config", metavar="CFG", required=True,
                   help="SCALE-Sim config file (.cfg)")
    p.add_argument("-t", dest="topology", metavar="TOPOLOGY",
                   help="SCALE-Sim topology CSV (default: the cfg's network_presets "
                        "TopologyCsvLoc)")
    p.add_argument("-i", dest="input_type", metavar="conv|gemm", default="conv",
                   choices=["conv", "gemm"],
                   help="topology rows: conv layers (default) or 'name, M, N, K' GEMMs")
    p.add_argument("-p", dest="outdir", metavar="OUTDIR", default="results",
                   help="log folder; reports go to OUTDIR/<run_name>/ (default ./results)")
    p.add_argument("-l", dest="layout", metavar="LAYOUT",
                   help="accepted for compatibility; custom layouts are not modelled")
    p.add_argument("-s", dest="save_trace", metavar="Y|N", choices=["Y", "N"], default="N",
                   help="accepted for compatibility; per-cycle traces are not written "
                        "(use 'accelsim run --trace' for a timeline)")
    p.add_argument("--mode", default="auto", choices=["auto", "event", "analytic"],
                   help="auto (default): the numba recurrence, proven equal to the SimPy "
                        "replay; event: the SimPy replay; analytic: the recurrence")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim scalesim``."""
    from accelsim.report.scalesim_reports import REPORT_FILES, run_scalesim

    folder, layers, reports = run_scalesim(args.config, args.topology, args.input_type,
                                           args.outdir, args.mode)
    cycles = sum(r.compute[1] for r in reports)
    stalls = sum(r.compute[2] for r in reports)
    print(f"{len(layers)} layers: {cycles:,} cycles ({stalls:,} stall cycles)")
    for name in REPORT_FILES:
        print(f"wrote {show(folder / name)}", file=sys.stderr)
    return 0
