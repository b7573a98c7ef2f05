"""``accelsim op SYSTEM OP ...`` for multi-device systems (``kind: system``): copies and
collectives.

    accelsim op h200x2 copy --src host --dst gpu0 --bytes 1GiB [--pageable] --json
    accelsim op h200x2 allreduce --bytes 1e9 [--algo ring|tree|direct]
        [--protocol LL|LL128|Simple] --json

Prints one JSON document with ``time_s`` and ``bytes_per_s`` (decimal bytes per second; for
collectives the NCCL algorithm bandwidth, with ``busbw_bytes_per_s`` beside it; the GB/s
aliases ``gbps`` and ``busbw_gbps`` stay one release). This module does not register a
subcommand: ``accelsim.cli.op`` owns ``op`` and hands machines of kind ``system`` here through
:func:`add_arguments` and :func:`run` (or :func:`run_argv`).

Imports: units, errors, limits, api.links.
"""

from __future__ import annotations

import argparse
import json
import sys

from accelsim.api import links as api
from accelsim.errors import ConfigError
from accelsim.limits import MAX_INT
from accelsim.units import UnitError, format_bandwidth, format_time, parse_bytes

KIND = "system"
"""The machine kind this module handles."""

OPS = ("copy", "allreduce", "allgather", "reducescatter", "alltoall")
"""Operation names accepted for a system."""


def _bytes(text: str) -> float:
    """A byte count: finite, >= 0 and within int64 (one line naming --bytes otherwise)."""
    try:
        n = parse_bytes(text)
    except UnitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if n < 0 or n > MAX_INT:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: must be within 0 and {MAX_INT:,} bytes")
    return n


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of system operations to ``parser`` (which already takes SYSTEM and OP)."""
    g = parser.add_argument_group("system operations (copy, allreduce, allgather, "
                                  "reducescatter, alltoall)")
    g.add_argument("--src", help="copy source: host, gpu0, gpu1, ...")
    g.add_argument("--dst", help="copy destination: host, gpu0, gpu1, ...")
    g.add_argument("--bytes", dest="nbytes", type=_bytes, metavar="N",
                   help="bytes to move (1e9, 1GiB, 64MiB); collectives use NCCL's size convention")
    g.add_argument("--pageable", action="store_true",
                   help="host memory is pageable (staged through pinned buffers), not pinned")
    g.add_argument("--algo", choices=("ring", "tree", "direct"),
                   help="collective algorithm (default: ring; alltoall: direct)")
    g.add_argument("--protocol", choices=("LL", "LL128", "Simple"),
                   help="force an NCCL protocol (default: the one NCCL would pick for the size)")
    g.add_argument("--ranks", help="comma-separated devices taking part (default: all)")
    try:
        parser.add_argument("--json", action="store_true", help="print one JSON document")
    except argparse.ArgumentError:
        pass  # the op command already has --json


def execute(system: str, op: str, args: argparse.Namespace) -> dict:
    """Run operation ``op`` on ``system`` with parsed ``args``; the result document."""
    if op not in OPS:
        raise ConfigError(system, "op", op,
                          f"not an operation of a system (known: {', '.join(OPS)})")
    nbytes = getattr(args, "nbytes", None)
    if nbytes is None:
        raise ConfigError(system, "--bytes", None, f"'{op}' needs --bytes N")
    if op == "copy":
        for opt in ("src", "dst"):
            if not getattr(args, opt, None):
                raise ConfigError(system, f"--{opt}", None, "a copy needs --src and --dst")
        for opt in ("algo", "protocol"):
            if getattr(args, opt, None):
                raise ConfigError(system, f"--{opt}", getattr(args, opt),
                                  f"only collectives take --{opt}")
        return api.transfer(system, args.src, args.dst, nbytes, pageable=bool(args.pageable))
    if getattr(args, "src", None) or getattr(args, "dst", None) or getattr(args, "pageable", False):
        raise ConfigError(system, "--src/--dst/--pageable", None,
                          f"'{op}' is a collective: use --ranks")
    ranks = [r.strip() for r in args.ranks.split(",")] if getattr(args, "ranks", None) else None
    return api.collective(system, op, nbytes, algo=getattr(args, "algo", None), ranks=ranks,
                          protocol=getattr(args, "protocol", None))


def _system_and_op(args: argparse.Namespace) -> tuple[str, str]:
    system = next((getattr(args, a) for a in ("hw", "machine", "hardware", "system")
                   if getattr(args, a, None)), None)
    op = next((getattr(args, a) for a in ("op", "opname", "operation", "name")
               if getattr(args, a, None)), None)
    if system is None or op is None:
        raise ConfigError(None, "op", None, "usage: accelsim op SYSTEM OP [options]")
    return str(system), str(op)


def run(args: argparse.Namespace) -> int:
    """Print the result of ``args`` (SYSTEM and OP already parsed); exit code 0."""
    system, op = _system_and_op(args)
    doc = execute(system, op, args)
    if getattr(args, "json", False):
        print(json.dumps(doc, default=float))
    else:
        print(summary(doc))
    return 0


def run_argv(system: str, op: str, argv: list[str]) -> int:
    """Parse this module's options from ``argv`` and run ``op`` on ``system``."""
    parser = _Parser(prog=f"accelsim op {system} {op}")
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.hw, args.op = system, op
    return run(args)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # bad options -> one-line AccelsimError
        raise ConfigError(self.prog, None, None, message)


def summary(doc: dict) -> str:
    """One human line for a result document."""
    head = f"{doc['system']} {doc['op']}"
    if doc["op"] == "copy":
        head += f" {doc['src']}->{doc['dst']}" + (" (pageable)" if doc["pageable"] else "")
        tail = f"via {'+'.join(doc['route'])}"
    else:
        proto = f" {doc['protocol']}" if doc.get("protocol") else ""
        tail = (f"{doc['algo']}{proto}, {doc['ranks']} ranks, "
                f"busbw {format_bandwidth(doc['busbw_bytes_per_s'])}")
    bw = format_bandwidth(doc["bytes_per_s"])
    return f"{head}: {doc['bytes']:.0f} B in {format_time(doc['time_s'])} = {bw} ({tail})"


if __name__ == "__main__":  # pragma: no cover
    from accelsim.errors import AccelsimError

    try:
        sys.exit(run_argv(sys.argv[1], sys.argv[2], sys.argv[3:]))
    except AccelsimError as exc:
        print(f"accelsim: error: {exc}", file=sys.stderr)
        sys.exit(2)
