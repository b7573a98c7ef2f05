"""``accelsim run``'s help by machine kind: ``accelsim run HW --help`` leaves out the options
HW's kind does not take (each kind's ``run_flags``, spelled by
:data:`accelsim.devices.CLI_FLAGS`); ``accelsim run --help`` lists every option.

This module does not register a subcommand.

Imports: api (machine loading), devices, errors, safe_text.
"""

from __future__ import annotations

import argparse

from accelsim.errors import AccelsimError
from accelsim.safe_text import show

ALL_KINDS = frozenset({"report"})
"""Outputs every machine kind writes (never refused, whatever a kind's ``run_flags`` say)."""


class KindHelp(argparse.Action):
    """``-h``/``--help``: with a machine given before it (``accelsim run h200 --help``), the
    help leaves out the options that machine's kind does not take; without one, every option."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        hw = getattr(namespace, "hw", None)
        if hw is not None:
            taken = kind_flags(hw)
            if taken is not None:
                hidden = not_applicable(parser, taken)
                parser.description = (f"Simulate WORKLOAD on {show(hw)}. Options of other "
                                      f"machine kinds ({', '.join(hidden) or 'none'}) are "
                                      f"left out: `accelsim run --help` lists them all.")
        parser.print_help()
        parser.exit()


def kind_flags(hw: str) -> frozenset[str] | None:
    """The optional run options machine ``hw``'s kind takes (``run_flags``), or None when
    ``hw`` is not a single device that loads."""
    from accelsim.api import load_hw
    from accelsim.devices import device_for

    try:
        return device_for(load_hw(hw)).run_flags | ALL_KINDS
    except AccelsimError:
        return None


def not_applicable(parser: argparse.ArgumentParser, taken: frozenset[str]) -> list[str]:
    """Hide the options of ``parser`` whose run option is not in ``taken``; their flags."""
    from accelsim.devices import CLI_FLAGS

    hidden = []
    by_flag = {flag: name for name, flag in CLI_FLAGS.items()}
    for action in parser._actions:
        names = [by_flag[o] for o in action.option_strings if o in by_flag]
        if names and names[0] not in taken:
            action.help = argparse.SUPPRESS
            hidden.append(action.option_strings[0])
    return hidden
