"""Help by machine kind: ``accelsim run HW --help`` leaves out the options HW's kind does not
take (each kind's ``run_flags``, spelled by :data:`accelsim.devices.CLI_FLAGS`); ``accelsim
run --help`` lists every option. Another command subclasses :class:`KindHelp` with its own
option names and flags (``accelsim energy HW --help``: :mod:`accelsim.cli.energy`).

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
    help leaves out the options that machine's kind does not take; without one, every option.

    A subclass sets :attr:`command`, :attr:`lead` and :attr:`flags` (option name -> flag) and
    overrides :meth:`taken` (the option names a device takes)."""

    command = "run"
    lead = "Simulate WORKLOAD on"
    flags: dict[str, str] | None = None
    """Option name -> its flag; None: :data:`accelsim.devices.CLI_FLAGS` (``run``'s)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        hw = getattr(namespace, "hw", None)
        if hw is not None:
            taken = kind_flags(hw, self.taken)
            if taken is not None:
                hidden = not_applicable(parser, taken, self.flags)
                parser.description = (f"{self.lead} {show(hw)}. Options of other "
                                      f"machine kinds ({', '.join(hidden) or 'none'}) are "
                                      f"left out: `accelsim {self.command} --help` lists them "
                                      f"all.")
        parser.print_help()
        parser.exit()

    @staticmethod
    def taken(device: object) -> frozenset[str]:
        """The option names ``device`` (or its class) takes: its ``run_flags``."""
        return device.run_flags | ALL_KINDS


def kind_flags(hw: str, taken: object = None) -> frozenset[str] | None:
    """The optional options machine ``hw``'s kind takes (``taken(device)``, default its
    ``run_flags``), or None when ``hw`` is not a single device that loads."""
    from accelsim.api import load_hw
    from accelsim.devices import device_for

    try:
        return (taken or KindHelp.taken)(device_for(load_hw(hw)))
    except AccelsimError:
        return None


def not_applicable(parser: argparse.ArgumentParser, taken: frozenset[str],
                   flags: dict[str, str] | None = None) -> list[str]:
    """Hide the options of ``parser`` whose option name (``flags``: name -> flag, default
    :data:`accelsim.devices.CLI_FLAGS`) is not in ``taken``; their flags."""
    from accelsim.devices import CLI_FLAGS

    hidden = []
    by_flag = {flag: name for name, flag in (flags or CLI_FLAGS).items()}
    for action in parser._actions:
        names = [by_flag[o] for o in action.option_strings if o in by_flag]
        if names and names[0] not in taken:
            action.help = argparse.SUPPRESS
            hidden.append(action.option_strings[0])
    for action in parser._actions:  # an option that only refines a hidden one goes too
        if DEPENDS_ON.get(next(iter(action.option_strings), "")) in hidden:
            action.help = argparse.SUPPRESS
    return hidden


DEPENDS_ON = {"--trace-detail": "--trace"}
"""Options that only refine another (flag -> the flag it refines): hidden with it."""
