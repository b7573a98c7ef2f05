"""The ``accelsim`` command line. Every :class:`AccelsimError` becomes one line and exit code 2.

Each subcommand lives in its own module with ``register(subparsers)``, which adds a parser and
sets ``func=run`` where ``run(args) -> int``.

Imports: accelsim (version), units, errors, safe_text, limits, safe_yaml, files, precision,
analysis, api, config, devices, report, serve, sweep, validation, workload. This is the top
layer.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from accelsim import __version__
from accelsim.errors import AccelsimError, ConfigError
from accelsim.safe_text import EscapingStream

COMMANDS = ["run", "list"]
"""Subcommand modules under ``accelsim.cli``, in the order ``--help`` lists them."""

OPTIONAL_COMMANDS = ["scalesim", "op", "energy", "roofline", "validate", "sweep", "compare",
                     "place", "capture", "show", "serve", "serve_search"]
"""Subcommand modules that are registered when present."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"accelsim: error: {message}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full argument parser. With ``command`` (``argv[0]``), a parser of that subcommand
    alone where its module registers it, so that ``accelsim list`` or ``accelsim scalesim``
    imports only its own module, not every subcommand's (pandas, numba); it parses ``argv``
    as the full parser would. Anything else (an option, an unknown name) gets the full
    parser, whose help and errors list every subcommand."""
    names = [*COMMANDS, *OPTIONAL_COMMANDS]
    one = command.replace("-", "_") if command and not command.startswith("-") else None
    if one in names:
        parser, sub = _parser_of([one])
        if command in sub.choices:
            return parser
    return _parser_of(names)[0]


def _parser_of(names: list[str]) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The parser with the subcommands of the modules ``names`` (an optional one that is not
    present is left out), and its subparsers action."""
    parser = _Parser(prog="accelsim", description="Cycle-approximate ML accelerator simulator.")
    parser.add_argument("--version", action="version", version=f"accelsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in names:
        try:
            module = importlib.import_module(f"accelsim.cli.{name}")
        except ModuleNotFoundError as exc:
            if name in OPTIONAL_COMMANDS and exc.name == f"accelsim.cli.{name}":
                continue
            raise
        module.register(sub)
    return parser, sub


OUTPUT_FILE_FLAGS = {"plot": "--plot", "trace": "--trace", "report": "--report"}
"""Options that name one output file (a directory there is refused before any work)."""


def check_output_args(args: argparse.Namespace) -> None:
    """Refuse an output file option that names an existing directory, before any work."""
    from pathlib import Path

    for attr, flag in OUTPUT_FILE_FLAGS.items():
        value = getattr(args, attr, None)
        if isinstance(value, str) and Path(value).is_dir():
            raise ConfigError("command line", flag, value, "is a directory, expected a file")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``accelsim`` console script."""
    argv = [*(sys.argv[1:] if argv is None else argv)]
    parser = build_parser(argv[0] if argv else None)
    if not argv:  # bare `accelsim`: say what it can do; run nothing, write nothing
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(out), EscapingStream(err)  # no raw ESC ever printed
    try:
        check_output_args(args)
        return int(args.func(args) or 0)
    except AccelsimError as exc:
        print(f"accelsim: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`: not an error
        return 0
    except ModuleNotFoundError as exc:  # an optional extra that is not installed
        print(f"accelsim: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path outside files.writing; never an empty reason
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"accelsim: error: {where}{exc.strerror or str(exc) or type(exc).__name__}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("accelsim: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout, sys.stderr = out, err


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
