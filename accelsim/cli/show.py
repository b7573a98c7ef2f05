"""``accelsim show HW``: the resolved machine, every value with its provenance.

Inheritance applied (``inherit: h200``) and references expanded (a GPU's ``stack``), one line
per value: its dotted field path, the value as written, and its kind (``datasheet``,
``measured on X``, ``fitted on X``, ``estimated``; ``inherited from Y`` when a parent file
writes it; ``unstated`` in files of kinds that do not require one). The machine is also built,
so a file that does not validate is refused in one line, as ``accelsim run`` would. Lines fit
120 columns (a long value is cut in the middle, ``…``); ``--wide`` prints them whole.
"""

from __future__ import annotations

import argparse
from typing import Any

from accelsim.cli.run_table import short_name
from accelsim.config.inherit import IDENTITY_KEYS as IDENTITY
from accelsim.report.terminal import wrap_clauses
from accelsim.safe_text import show

WIDTH = 120
"""Columns a line may take (a longer value is wrapped under its path)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``show`` subcommand."""
    p = sub.add_parser("show", help="print a machine as resolved (inheritance, stack) with "
                       "the provenance of every value")
    p.add_argument("hw", metavar="HW", help="built-in machine name or YAML path")
    p.add_argument("--kind", dest="only", metavar="KIND",
                   help="only values whose provenance contains KIND (e.g. fitted, h200, "
                   "inherited, estimated)")
    p.add_argument("--wide", action="store_true",
                   help="print long values and lines whole (default: within 120 columns)")
    p.set_defaults(func=run)


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim show``."""
    from accelsim.config.build import resolve_machine
    from accelsim.config.inherit import leaves
    from accelsim.config.registry import machine_from_dict

    res = resolve_machine(args.hw)
    machine_from_dict(res.data, file=res.file)  # refuse what `run` would refuse
    data = res.data
    print(show(f"{data.get('name', '?')} ({data.get('kind', 'systolic')}): "
               f"{data.get('description', '')}"))
    print(show(f"file: {res.file}"))
    if len(res.chain) > 1:
        print(show("inherits: " + " <- ".join(res.chain)))
    stack = data.get("stack")
    if isinstance(stack, dict):
        print(show(f"stack: {stack.get('name', '?')} ({stack.get('description', '')})"))
    values = {k: v for k, v in data.items() if k not in IDENTITY}
    if isinstance(stack, dict):
        values["stack"] = {k: v for k, v in stack.items() if k not in IDENTITY}
    rows = [(p, _text(v), res.provenance[p].label() if p in res.provenance else "unstated")
            for p, v in leaves(values)]
    if args.only:
        rows = [r for r in rows if args.only.lower() in r[2].lower()]
    width_p = max((len(r[0]) for r in rows), default=0)
    width_v = min(40, max((len(r[1]) for r in rows), default=0))
    cut = 0
    for path, value, label in rows:
        line = f"  {path:<{width_p}}  {value:<{width_v}}  {label}"
        if len(line) > WIDTH and not args.wide:  # a long value, cut in the middle to fit
            room = max(width_v, WIDTH - len(line) + len(value))
            line, cut = f"  {path:<{width_p}}  {short_name(value, room):<{width_v}}  {label}", 1
        print(show(line))
    counts: dict[str, int] = {}
    for _, _, label in rows:
        key = label.split(",")[0]
        counts[key] = counts.get(key, 0) + 1
    inherited = sum("inherited from" in r[2] for r in rows)
    text = ("values: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            + f"; {inherited} of {len(rows)} inherited")
    if cut:
        text += "; long values shortened (--wide: whole)"
    print("\n".join(show(x) for x in ([text] if args.wide else wrap_clauses(text, WIDTH))))
    for src in data.get("sources", ()) or ():  # one line each (cut in the middle to fit)
        print(show(f"source: {src if args.wide else short_name(str(src), WIDTH - 8)}"))
    return 0
