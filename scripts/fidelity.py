"""One fidelity table: every validation data set's role, case count and MAPE per family.

    PYTHONPATH=. python scripts/fidelity.py                      # the table (every validator)
    PYTHONPATH=. python scripts/fidelity.py --json out.json      # + every row as JSON
    PYTHONPATH=. python scripts/fidelity.py --write-readme       # + rewrite README's section
    PYTHONPATH=. python scripts/fidelity.py --only validate_gpu validate_links
    PYTHONPATH=. python scripts/fidelity.py --from-json out.json --write-readme  # no re-run
    accelsim validate --fidelity [--json]                        # the same, from the CLI

**The protocol.** Every ``scripts/validate/validate_*.py`` that defines a top-level function
``fidelity_rows(**opts) -> list[dict]`` is collected: each in its own subprocess (this file
run with ``--one NAME``), with a timeout per validator (:data:`TIMEOUT_S`); a validator that
fails or times out is one row saying so, never a crash. A validator without that function is
listed as ``no fidelity_rows``. A row (:func:`row` builds one) holds:

* ``validator``: the script's name (``validate_gpu``);
* ``data_set``: the ``scripts/data/REGISTRY.yaml`` name(s) its cases come from, a part as
  ``file[part]``, several joined by ``" + "``;
* ``role``: ``calibration``, ``dev`` or ``held-out`` from the registry
  (``data_registry.role_of`` of each file or part; ``mixed (...)`` when they differ);
* ``family``: the group the validator reports (an operator family, a run's group and mode);
* ``cases``: compared cases; ``mape_pct``: their mean absolute percentage error;
  ``bias_pct``: their mean signed error (or None); ``max_pct``: the largest |error| (or None);
* ``target_pct``: the target the validator holds that figure to in its exit code, percent
  (None: no target); ``met``: whether it is met (None: no target);
* ``metric`` (what is compared) and ``note`` (the setting that produced the row, how the
  target is read): free text, may be empty.

A validator computes its rows with the same functions its ``main`` prints and exits by. The
seed chapter's cases (``accelsim.validation.suite``) add one row per tag (``model``,
``config``, ``law``): cases, checks and failures, no MAPE.

``--write-readme`` replaces what lies between ``<!-- fidelity:begin -->`` and
``<!-- fidelity:end -->`` in ``README.md`` (nothing else) with the table and a line naming the
date and commit it was generated at; ``tests/scripts/test_fidelity.py`` holds the section
equal to a fresh run (slow). Exit status: 1 when a target is missed or a validator failed,
else 0.

Imports: accelsim.validation (seed cases), data_registry; validators only in a subprocess.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import datetime
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
VALIDATORS = SCRIPTS / "validate"
"""Where the validators live (``scripts/validate/validate_*.py``)."""
README = ROOT / "README.md"
BEGIN, END = "<!-- fidelity:begin -->", "<!-- fidelity:end -->"
TIMEOUT_S = 2400.0
"""Seconds a validator's ``fidelity_rows`` may run in its subprocess before it is a row
saying it timed out."""
SERVING_MAX_REQUESTS = 1000
"""``validate_serving.py --max-requests`` of the collection: at most this many requests per
case (the setting the README's serving figures were first scored with; its rows say so)."""
VALIDATOR_OPTS: dict[str, dict[str, Any]] = {
    "validate_serving": {"max_requests": SERVING_MAX_REQUESTS}}
"""Keyword options each validator's ``fidelity_rows`` is called with (none: its defaults)."""
SEED_CASES = "accelsim/data/seed_cases.json"
ROW_FIELDS = ("validator", "data_set", "role", "family", "cases", "mape_pct", "bias_pct",
              "max_pct", "target_pct", "met", "metric", "note")


def _registry():
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    import data_registry

    return data_registry


def role_of_sources(sources: Sequence[str | tuple[str, str | None]]) -> str:
    """The registry role of the data behind a row: each source a file name or
    ``(file, part)``; their common role, else ``mixed (role of each)``."""
    reg = _registry()
    roles = [reg.role_of(s) if isinstance(s, str) else reg.role_of(s[0], s[1]) for s in sources]
    if len(set(roles)) == 1:
        return roles[0]
    return "mixed: " + " + ".join(dict.fromkeys(roles))


def source_of(file: str, role: str) -> str | tuple[str, str]:
    """The source of a validator's split of ``file`` whose role is ``role``: the one part of
    the file with that role, ``(file, part)``, or the file itself (its role, or no such
    part, or several)."""
    reg = _registry()
    parts = [p for p, v in (reg.entry_of(file).get("parts") or {}).items() if v["role"] == role]
    return (file, parts[0]) if len(parts) == 1 and reg.role_of(file) != role else file


def _names(sources: Sequence[str | tuple[str, str | None]]) -> str:
    """``a.json[part] + b.json``: the sources by file, the parts of one file together."""
    parts: dict[str, list[str]] = {}
    for s in sources:
        file, part = (s, None) if isinstance(s, str) else s
        parts.setdefault(file, [])
        if part is not None:
            parts[file].append(part)
    return " + ".join(f"{f}[{', '.join(p)}]" if p else f for f, p in parts.items())


def row(validator: str, sources: Sequence[str | tuple[str, str | None]], family: str, *,
        errors_pct: Iterable[float] | None = None, cases: int | None = None,
        mape_pct: float | None = None, bias_pct: float | None = None,
        max_pct: float | None = None, target_pct: float | None = None,
        met: bool | None = None, metric: str = "", note: str = "") -> dict[str, Any]:
    """One fidelity row (the module doc's fields). Give ``errors_pct`` (signed errors of each
    case, percent: cases, MAPE, bias and max are computed from them) or the figures. ``met``
    defaults to ``mape_pct <= target_pct`` where a target is given."""
    if errors_pct is not None:
        errs = [float(e) for e in errors_pct]
        cases = len(errs)
        mape_pct = sum(abs(e) for e in errs) / len(errs) if errs else math.nan
        bias_pct = sum(errs) / len(errs) if errs else math.nan
        max_pct = max((abs(e) for e in errs), default=math.nan)
    if met is None and target_pct is not None and mape_pct is not None:
        met = bool(mape_pct <= target_pct)
    return {"validator": validator, "data_set": _names(sources),
            "role": role_of_sources(sources), "family": family, "cases": int(cases or 0),
            "mape_pct": _num(mape_pct), "bias_pct": _num(bias_pct), "max_pct": _num(max_pct),
            "target_pct": _num(target_pct), "met": met, "metric": metric, "note": note}


def _num(v: float | None) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


# -- collection -------------------------------------------------------------------------------
def validators(scripts: Path = VALIDATORS) -> dict[str, bool]:
    """Every ``validate_*.py`` of ``scripts`` (name without ``.py``) -> whether it defines a
    top-level ``fidelity_rows`` (read from its source, nothing imported)."""
    out = {}
    for path in sorted(scripts.glob("validate_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        out[path.stem] = any(isinstance(n, ast.FunctionDef) and n.name == "fidelity_rows"
                             for n in tree.body)
    return out


def error_row(validator: str, what: str) -> dict[str, Any]:
    """A row saying a validator gave no figures (``what``: why)."""
    return {"validator": validator, "data_set": "-", "role": "-", "family": "no figures",
            "cases": 0,
            "mape_pct": None, "bias_pct": None, "max_pct": None, "target_pct": None,
            "met": None, "metric": "", "note": what, "error": True}


def run_one(name: str, opts: dict[str, Any] | None = None,
            scripts: Path = VALIDATORS) -> list[dict[str, Any]]:
    """``fidelity_rows(**opts)`` of ``scripts/validate/NAME.py``, in this process (what ``--one``
    runs in the subprocess). Whatever the validator prints goes to stderr."""
    for d in (SCRIPTS, scripts):
        if str(d) not in sys.path:
            sys.path.insert(0, str(d))
    import importlib

    with contextlib.redirect_stdout(sys.stderr):
        mod = importlib.import_module(name)
        return list(mod.fidelity_rows(**(opts or {})))


def collect_validator(name: str, opts: dict[str, Any] | None = None,
                      timeout_s: float = TIMEOUT_S,
                      scripts: Path = VALIDATORS) -> list[dict[str, Any]]:
    """The rows of ``scripts/validate/NAME.py``, run in its own subprocess; an error or a timeout is
    one :func:`error_row`."""
    cmd = [sys.executable, str(SCRIPTS / "fidelity.py"), "--one", name,
           "--opts", json.dumps(opts or {}), "--scripts", str(scripts)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return [error_row(name, f"timed out after {timeout_s:g} s")]
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
        return [error_row(name, f"failed (exit {done.returncode}): "
                                + (lines[-1][:160] if lines else "no message"))]
    try:
        rows = json.loads(done.stdout)
    except json.JSONDecodeError:
        return [error_row(name, "failed: its rows were not JSON")]
    return [{**r, "validator": r.get("validator") or name} for r in rows]


def seed_rows() -> list[dict[str, Any]]:
    """The seed chapter's cases per tag (``accelsim validate``): cases, checks, failures."""
    from accelsim.validation.suite import run_suite, tag_counts

    results = run_suite()
    out = []
    for tag, n in tag_counts(results).items():
        out.append({"validator": "accelsim validate", "data_set": SEED_CASES,
                    "role": "reference (worked cases)", "family": f"seed cases, tag {tag}",
                    "cases": n["cases"], "mape_pct": None, "bias_pct": None, "max_pct": None,
                    "target_pct": None, "met": n["failed"] == 0, "metric": "checked quantities",
                    "note": f"{n['checks']} checks, {n['failed']} failed (target: none failed)"})
    skipped = sum(1 for r in results if not r.reproducible)
    out.append({"validator": "accelsim validate", "data_set": SEED_CASES,
                "role": "reference (worked cases)", "family": "seed cases, not reproducible",
                "cases": skipped, "mape_pct": None, "bias_pct": None, "max_pct": None,
                "target_pct": None, "met": None, "metric": "",
                "note": "listed with the reason no model computes them"})
    return out


def collect(only: Sequence[str] | None = None, timeout_s: float = TIMEOUT_S,
            opts: dict[str, dict[str, Any]] | None = None, seed: bool = True,
            scripts: Path = VALIDATORS) -> dict[str, Any]:
    """Every validator's rows (or those ``only`` names) and the seed cases: ``{"rows",
    "missing"}`` (``missing``: validators without ``fidelity_rows``)."""
    found = validators(scripts)
    unknown = [n for n in (only or ()) if n not in found]
    if unknown:
        raise SystemExit(f"fidelity.py: error: no scripts/validate/{unknown[0]}.py")
    rows: list[dict[str, Any]] = []
    missing = []
    for name, has in found.items():
        if only and name not in only:
            continue
        if not has:
            missing.append(name)
            continue
        print(f"fidelity: {name} ...", file=sys.stderr, flush=True)
        rows += collect_validator(name, (opts if opts is not None else VALIDATOR_OPTS)
                                  .get(name), timeout_s, scripts)
    if seed and not only:
        rows += seed_rows()
    return {"rows": rows, "missing": missing}


# -- the table --------------------------------------------------------------------------------
def _pct(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v:+.1f} %" if signed else f"{v:.1f} %"


def _met(r: dict[str, Any]) -> str:
    if r.get("error"):
        return "ERROR"
    return {True: "met", False: "**missed**", None: "-"}[r["met"]]


def table_lines(result: dict[str, Any]) -> list[str]:
    """The table as Markdown lines (what the terminal and the README show)."""
    head = ("| validator | data set | role | family | cases | MAPE | bias | target | met | "
            "setting / note |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        cells = (r["validator"], f"`{r['data_set']}`" if r["data_set"] != "-" else "-",
                 r["role"], r["family"], str(r["cases"]), _pct(r["mape_pct"]),
                 _pct(r["bias_pct"], signed=True),
                 "-" if r["target_pct"] is None else f"{r['target_pct']:g} %", _met(r),
                 r.get("note") or "")
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    if result["missing"]:
        lines.append("")
        lines.append("No `fidelity_rows` (not collected): "
                     + ", ".join(f"`{n}.py`" for n in result["missing"]) + ".")
    return lines


def stamp(when: datetime.date | None = None) -> str:
    """The date line: today's date and the commit (``+ uncommitted changes`` when the
    working tree differs from it)."""
    day = (when or datetime.datetime.now(datetime.timezone.utc).date()).isoformat()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", ""
    return (f"Generated by `python scripts/fidelity.py --write-readme` on {day} at commit "
            f"{commit}{' + uncommitted changes' if dirty else ''}; "
            f"serving rows at `--max-requests {SERVING_MAX_REQUESTS}`.")


def section_text(result: dict[str, Any], date_line: str) -> str:
    """What goes between the markers: the date line, a blank line, the table."""
    return "\n".join([date_line, "", *table_lines(result)]) + "\n"


def rewrite_marked(text: str, body: str, path: str = "README.md") -> str:
    """``text`` with what lies between :data:`BEGIN` and :data:`END` replaced by ``body``
    (each marker kept on its own line); everything outside them unchanged."""
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < 0 or stop < start or text.count(BEGIN) != 1 or text.count(END) != 1:
        raise SystemExit(f"fidelity.py: error: {path}: needs one {BEGIN} and one {END} line, "
                         "in that order")
    head = text[: start + len(BEGIN)]
    return head + "\n" + body + text[stop:]


def marked_section(text: str) -> str:
    """What lies between the markers of ``text`` (without them)."""
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        return ""
    return text[start + len(BEGIN): stop].strip("\n")


def write_readme(result: dict[str, Any], path: Path = README,
                 date_line: str | None = None) -> bool:
    """Rewrite ``path``'s marked section with ``result``; whether the file changed."""
    old = path.read_text()
    new = rewrite_marked(old, section_text(result, date_line or stamp()), path.name)
    if new != old:
        path.write_text(new)
    return new != old


def exit_code(result: dict[str, Any]) -> int:
    """1 when a target is missed or a validator gave no figures, else 0."""
    return 1 if any(r.get("error") or r["met"] is False for r in result["rows"]) else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="VALIDATOR",
                    help="only these validators (names without .py; no seed cases)")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S,
                    help=f"seconds per validator (default {TIMEOUT_S:g})")
    ap.add_argument("--json", metavar="PATH", help="write the rows as JSON here ('-': stdout, "
                    "instead of the table)")
    ap.add_argument("--write-readme", nargs="?", const=str(README), metavar="PATH",
                    help="rewrite the marked section of README.md (or PATH)")
    ap.add_argument("--from-json", metavar="PATH",
                    help="take the rows of an earlier --json run instead of running anything "
                    "(its date line too)")
    ap.add_argument("--one", metavar="VALIDATOR", help=argparse.SUPPRESS)
    ap.add_argument("--opts", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--scripts", default=str(VALIDATORS), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(run_one(a.one, json.loads(a.opts), Path(a.scripts))))
        return 0
    if a.from_json:
        result = json.loads(Path(a.from_json).read_text())
    else:
        line = stamp()  # the commit the figures are computed at, before minutes of runs
        result = {**collect(a.only, a.timeout), "stamp": line}
    if a.json == "-":
        print(json.dumps(result, indent=1))
    else:
        print("\n".join(table_lines(result)))
        if a.json:
            Path(a.json).write_text(json.dumps(result, indent=1) + "\n")
    if a.write_readme:
        if a.only:
            raise SystemExit("fidelity.py: error: --write-readme needs every validator "
                             "(no --only)")
        changed = write_readme(result, Path(a.write_readme), result.get("stamp"))
        print(f"{a.write_readme}: fidelity section {'rewritten' if changed else 'unchanged'}",
              file=sys.stderr)
    return exit_code(result)


if __name__ == "__main__":
    sys.exit(main())
