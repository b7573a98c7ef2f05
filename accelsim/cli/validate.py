"""``accelsim validate [--json]``: the seed chapter's worked cases, recomputed by accelsim.

Prints one line per checked quantity (case, expected, got, relative error, pass/fail), the
cases no model reproduces (with the reason), each shipped machine's predicted power at peak
throughput against its published TDP (:mod:`accelsim.api.power`; not with ``--cases``), and
a last line ``N passed, M failed`` (checks), with the seed cases' counts per tag: ``model``
(an accelsim model beyond the text's formula), ``config`` (a machine or energy config's
figure) and ``law`` (a closed-form law applied to the case's inputs). Exits 1 when any check
fails. ``--json`` prints a list of ``{"id", "expected", "got", "rel_err", "passed", "tag"}``
objects instead (the TDP checks are tagged ``model``). ``--cases FILE`` that
cannot be read, is not JSON, or is not a non-empty list of cases is one line
``accelsim: error: FILE: ...`` and exit code 2.

``accelsim validate --fidelity [--json]`` prints the fidelity table instead: every validation
data set (own measurements, public external sets, chip papers) with its role, case count and
MAPE per family, and the seed cases per tag, by running ``scripts/fidelity.py`` of the source
checkout the package sits in (in its own process: scripts are not part of the package). From
an installed wheel there is no ``scripts/``: one line ``accelsim: error: validate --fidelity
needs a source checkout: ...`` and exit 2. Its exit code is the script's (1: a target missed).

Imports: errors, safe_text, api.power, report.terminal, validation.seed_cases, validation.suite,
cli.run_table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from accelsim.errors import AccelsimError
from accelsim.safe_text import show
from accelsim.validation.seed_cases import CaseResult
from accelsim.validation.suite import all_checks, run_suite, tag_counts


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``validate`` subcommand."""
    p = sub.add_parser("validate", help="recompute the seed chapter's worked cases",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print a JSON list of checks")
    p.add_argument("--cases", metavar="FILE", default=None,
                   help="case file (default: the packaged seed_cases.json)")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="also print which model computed each value")
    p.add_argument("--wide", action="store_true",
                   help="print every column and line at full width (default: within 120 "
                        "columns: long ids and values shortened, the power table's least "
                        "relevant columns left out, prose wrapped)")
    p.add_argument("--fidelity", action="store_true",
                   help="print the fidelity table of every validation data set instead "
                   "(runs scripts/fidelity.py: needs a source checkout; minutes)")
    p.set_defaults(func=run)


PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The ``accelsim`` package directory; a source checkout has ``scripts/`` beside it."""


def fidelity_script(package_dir: Path | None = None) -> Path:
    """``scripts/fidelity.py`` of the checkout the package sits in; an
    :class:`AccelsimError` (one line) when there is none (an installed wheel)."""
    root = (package_dir or PACKAGE_DIR).parent
    script = root / "scripts" / "fidelity.py"
    if not script.is_file():
        raise AccelsimError(f"validate --fidelity needs a source checkout: no {script} beside "
                            f"the accelsim package in {root} (clone the repository and run it "
                            "there)")
    return script


def run_fidelity(args: argparse.Namespace) -> int:
    """Run ``scripts/fidelity.py`` (its table, or ``--json`` its rows) in a subprocess;
    its exit code."""
    script = fidelity_script()
    root = script.parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)}
    sys.stdout.flush()
    cmd = [sys.executable, str(script), *(["--json", "-"] if args.json else [])]
    # progress on stderr as it comes; the table through this process's (escaping) stdout
    done = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.PIPE, text=True)
    sys.stdout.write(done.stdout)
    return done.returncode


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + f"{len(v)} entries" + "}"
    text = str(v)
    return text if len(text) <= 34 else text[:31] + "..."


WIDTH = 120
"""Columns a default line may take (``--wide``: no limit)."""

CELL_CHARS = (40, 24, 24)
"""Longest id, expected and got cells of the default check table (longer: cut in the middle)."""

POWER_DROPPED_FIRST = ["band", "MHz", "leak W", "table", "util", "operand W", "mac W",
                       "memory W", "core W", "pJ/MAC"]
"""Power-table columns left out, in this order, until the default table fits :data:`WIDTH`."""


def _lines(text: str, wide: bool) -> list[str]:
    """``text`` as is (``wide``), else wrapped to :data:`WIDTH` after commas where possible."""
    from accelsim.report.terminal import wrap_clauses

    return [text] if wide else wrap_clauses(text, WIDTH)


def _table(results: list[CaseResult], verbose: bool, wide: bool = True) -> list[str]:
    rows = [("id", "expected", "got", "rel_err", "result")]
    vias = []
    for r in results:
        if r.error:
            rows.append((r.id, "-", r.error[:60], "-", "FAIL"))
            vias.append("")
        elif r.reproducible and not r.checks:
            rows.append((r.id, "-", "no checks", "-", "FAIL"))
            vias.append("")
        for c in r.checks:
            err = "-" if c.rel_err is None else f"{c.rel_err:.2e}"
            rows.append((c.id, _fmt(c.expected), _fmt(c.got), err, "pass" if c.passed else "FAIL"))
            vias.append(c.via)
    if not wide:
        from accelsim.cli.run_table import short_name

        rows = [(*(short_name(c, n) for c, n in zip(row[:3], CELL_CHARS, strict=True)),
                 *row[3:]) for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = []
    for n, row in enumerate(rows):
        line = "  ".join(cell.ljust(w) if i < 3 else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
        if verbose and n > 0 and vias[n - 1]:
            line += f"  [{vias[n - 1]}]"
        lines.append(line.rstrip())
    return lines


def _power_cells(cells: list[tuple], wide: bool) -> list[str]:
    """The power table's lines: every column (``wide``), else without the
    :data:`POWER_DROPPED_FIRST` columns, in that order, until it fits :data:`WIDTH`."""
    cols = list(range(len(cells[0])))
    drop = [cells[0].index(h) for h in POWER_DROPPED_FIRST if h in cells[0]]
    while True:
        widths = {i: max(len(c[i]) for c in cells) for i in cols}
        lines = ["  ".join(row[i].ljust(widths[i]) if i < 2 else row[i].rjust(widths[i])
                           for i in cols).rstrip() for row in cells]
        if wide or not drop or max(map(len, lines)) <= WIDTH:
            gone = [h for i, h in enumerate(cells[0]) if i not in cols]
            return lines + ([f"(left out: {', '.join(gone)}; --wide for every column)"]
                            if gone else [])
        cols.remove(drop.pop(0))


def _power_rows() -> list[tuple]:
    """(PeakPower, verdict) per shipped machine with a TDP (``accelsim.api.power``)."""
    from accelsim.api.power import tdp_checks

    return tdp_checks()


def _power_table(rows: list[tuple], wide: bool = True) -> list[str]:
    from accelsim.api.power import PARTS, REPRODUCES_FIT, TDP_BAND

    lines = [f"power at peak throughput vs published TDP (the predicted demand, uncapped, in "
             f"band {TDP_BAND[0]:g}-{TDP_BAND[1]:g} x TDP, the top raised to what the power cap "
             "absorbs above a stated clock floor; accelsim/report/ENERGY.md section 7):"]
    cells = [("machine", "table", "util", "pJ/MAC", *(f"{k} W" for k in PARTS), "dynamic W",
              "leak W", "idle W", "demand W", "MHz", "total W", "TDP W", "band", "x TDP",
              "result")]
    for p, verdict in rows:
        st = p.static_parts_w
        leak = sum(w for k, w in st.items() if k != "idle")
        cells.append((p.machine, p.table, f"{p.util:.2f}", f"{p.dynamic_pj_per_mac:.3g}",
                      *(f"{p.parts_w.get(k, 0.0):.1f}" for k in PARTS), f"{p.dynamic_w:.1f}",
                      f"{leak:.2f}", f"{st.get('idle', 0.0):.1f}", f"{p.demand_w:.1f}",
                      f"{p.clock_hz / 1e6:.0f}", f"{p.total_w:.1f}", f"{p.tdp_w:g}",
                      f"{p.band_w[0] / p.tdp_w:.2f}-{p.band_w[1] / p.tdp_w:.2f}",
                      f"{p.demand_ratio:.2f}", verdict))
    lines += _power_cells(cells, wide)
    lines.append("dynamic W by part at the load clock: mac = MACs; operand = register files, GPU "
                 "shared-memory staging, a cube's operand buffers; core = GPU datapath overhead "
                 "(core.gpu_mac) or CPU core; memory = SRAM/L2/caches and DRAM. static: leak = "
                 "cell leakage, idle = the rest of the part's idle draw. demand = dynamic + "
                 "static at the load clock, the checked figure (x TDP = demand / TDP); above "
                 "the TDP the power cap lowers the clock (MHz) and total is what the part "
                 "draws there")
    capped = [p for p, _ in rows if p.capped]
    lines += [f"  {p.machine}: demand {p.demand_w:.1f} W > TDP {p.tdp_w:g} W; capped at "
              f"{p.clock_hz / 1e6:.0f} MHz ({p.clock_scale:.1%} of the {p.load_clock_hz / 1e6:.0f}"
              f" MHz load clock, throughput likewise); floor energy.min_clock_hz "
              + (f"{p.min_clock_hz / 1e6:.0f} MHz" if p.min_clock_hz else "not stated")
              for p in capped]
    fits = [p.machine for p, v in rows if v == "reproduces fit"]
    if fits:
        lines.append("reproduces fit (not validation, counted neither way):")
        lines += [f"  {m}: {REPRODUCES_FIT[m]}" for m in fits]
    gaps = [(p.machine, p.gap) for p, v in rows if v == "known gap"]
    if gaps:
        lines.append(f"known gaps ({len(gaps)}, below the band; documented in each machine's "
                     "energy.tdp_gap):")
        lines += [f"  {m}: {why}" for m, why in gaps]
    if wide:
        return lines
    return [w for line in lines for w in (_lines(line, wide) if len(line) > WIDTH else [line])]


def run(args: argparse.Namespace) -> int:
    """Run the suite; exit 1 on any failed check or case."""
    if args.fidelity:
        return run_fidelity(args)
    results = run_suite(args.cases)
    checks = all_checks(results)
    broken = [r for r in results if r.reproducible and (r.error or not r.checks)]
    power = _power_rows() if args.cases is None else []
    power_failed = sum(1 for _, v in power if v == "FAIL")
    failed = sum(1 for c in checks if not c.passed) + len(broken) + power_failed
    passed = sum(1 for c in checks if c.passed) + sum(1 for _, v in power if v == "pass")
    if args.json:
        out = [c.as_dict() for c in checks]
        out += [{"id": r.id, "expected": None, "got": r.error or "no checks", "rel_err": None,
                 "passed": False, "tag": r.tag} for r in broken]
        out += [{"id": f"TDP:{p.machine}", "expected": list(p.band_w) if p.band_w else None,
                 "got": p.demand_w, "rel_err": None, "passed": v == "pass", "tag": "model"}
                for p, v in power if v not in ("known gap", "reproduces fit")]
        print(json.dumps(out, indent=1))
        return 1 if failed else 0
    for line in _table(results, args.verbose, args.wide):
        print(show(line))
    skipped = [r for r in results if not r.reproducible]
    reproducible = [r for r in results if r.reproducible]
    print()
    print(f"not reproducible ({len(skipped)} of {len(results)} cases):")
    for r in skipped:
        print("\n".join(show(x) for x in _lines(f"  {r.id}: {r.reason}", args.wide)))
    if power:
        print()
        for line in _power_table(power, args.wide):
            print(line)
    ok_cases = sum(1 for r in reproducible if r.passed)
    print(f"cases: {ok_cases} of {len(reproducible)} reproducible cases pass "
          f"({len(checks)} checked quantities)")
    print("\n".join(_lines("by tag: " + "; ".join(
        f"{tag} {n['checks']} checks in {n['cases']} cases ({n['failed']} failed)"
        for tag, n in tag_counts(results).items()), args.wide)))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
