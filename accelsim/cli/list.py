"""``accelsim list``: built-in hardware, workloads and energy tables."""

from __future__ import annotations

import argparse

from accelsim.safe_text import show


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``list`` subcommand."""
    p = sub.add_parser("list", help="name the built-in hardware, workloads and energy tables")
    p.add_argument("--wide", action="store_true",
                   help=f"whole descriptions (default: lines cut at {WIDTH} columns)")
    p.set_defaults(func=run)


WIDTH = 120
"""Columns a machine's line of ``accelsim list`` is cut at without ``--wide``."""


def _fit(line: str, wide: bool) -> str:
    """``line``, cut to :data:`WIDTH` columns with an ellipsis unless ``wide``."""
    return line if wide or len(line) <= WIDTH else line[:WIDTH - 1] + "…"


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim list``."""
    from accelsim.config.registry import load_machine
    from accelsim.errors import AccelsimError
    from accelsim.files import builtin_names, config_dir

    print("hardware:")
    for name in builtin_names("hardware"):
        try:
            m = load_machine(name)
            desc = getattr(m, "description", "")
            kind = getattr(m, "kind", "")
        except AccelsimError as exc:
            kind, desc = "?", f"(invalid: {exc})"
        print(_fit(show(f"  {name:<20} {kind:<9} {desc}"), getattr(args, "wide", False)))
    print("workloads:")
    for name in builtin_names("workloads", (".yaml", ".yml", ".csv")):
        print(f"  {show(name)}")
    zoo = _zoo_names()
    if zoo:
        print("model zoo (accelsim.workload.models):")
        for name in zoo:
            print(f"  {name}")
    hf = sorted((config_dir("workloads") / "hf").glob("*.json"))
    if hf:
        print("Hugging Face configs (any config.json works: FILE.json:mode=decode,batch=8):")
        for path in hf:
            print(f"  hf/{show(path.name)}")
    energy = builtin_names("energy")
    if energy:
        print("energy tables:")
        for name in energy:
            print(f"  {show(name)}")
    return 0


def _zoo_names() -> list[str]:
    try:
        from accelsim.workload.models import zoo
    except ModuleNotFoundError:
        return []
    names = getattr(zoo, "names", None)
    return list(names()) if callable(names) else []
