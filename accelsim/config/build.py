"""Building machine config objects of the single-device kinds (systolic arrays, GPUs, CPUs)
from parsed YAML, and the YAML helpers every machine loader shares.

Systems and nodes (:mod:`accelsim.config.system`, :mod:`accelsim.config.node`) name their
devices' hardware; they load it with :func:`load_device_machine`, so they depend on this
module and :mod:`accelsim.config.registry` (every kind) depends on them: no module imports
back up.

Imports: errors, config.cpu, config.gpu, config.gpu_stack, config.inherit, config.load,
config.schema, config.systolic_machine.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Mapping
from typing import Any

from accelsim.config.cpu import CpuMachine
from accelsim.config.gpu import GpuMachine
from accelsim.config.gpu_stack import expand_stack
from accelsim.config.inherit import Resolved, resolve_file, resolve_mapping
from accelsim.config.load import resolve_path
from accelsim.config.schema import build
from accelsim.config.systolic_machine import SystolicMachine
from accelsim.errors import ConfigError

DEVICE_KINDS: dict[str, type] = {"systolic": SystolicMachine, "gpu": GpuMachine,
                                 "cpu": CpuMachine}
"""YAML ``kind:`` -> frozen config class, for machines that are one device."""

EXPAND = {"gpu": expand_stack}
"""Kinds whose YAML names other files to be read in: kind -> the function that replaces the
names by the files' mappings (and gives their provenance): a GPU's ``stack: hopper``."""


def build_machine(data: Mapping[str, Any], kinds: Mapping[str, type], *,
                  file: str | None = None) -> Any:
    """Build a config object of ``data['kind']`` (default ``systolic``) from ``kinds``."""
    data = resolve_mapping(data, file)
    kind = data.get("kind", "systolic")
    if isinstance(kind, str) and kind in EXPAND:
        data, _ = EXPAND[kind](data, file=file)
    if not isinstance(kind, str) or kind not in kinds:
        near = difflib.get_close_matches(str(kind), list(kinds), n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else f" (known: {', '.join(kinds)})"
        raise ConfigError(file, "kind", kind, "unknown machine kind" + hint)
    machine = build(kinds[kind], data, file=file)
    _check_energy_table(data, file)
    return machine


def _check_energy_table(data: Mapping[str, Any], file: str | None) -> None:
    """The machine's ``energy.table`` must name an existing table (named by file and field)."""
    sel = data.get("energy")
    table = sel.get("table") if isinstance(sel, Mapping) else None
    if isinstance(table, str):
        try:
            resolve_path(table, "energy")
        except ConfigError as exc:
            raise ConfigError(file, "energy.table", table, exc.reason) from None


def resolve_machine(name_or_path: str | os.PathLike) -> Resolved:
    """A machine YAML with its inheritance applied and the references it makes expanded (a
    GPU's ``stack``), with every value's provenance (:mod:`accelsim.config.inherit`)."""
    res = resolve_file(name_or_path)
    kind = res.data.get("kind", "systolic")
    if not isinstance(kind, str) or kind not in EXPAND:
        return res
    data, prov = EXPAND[kind](res.data, file=res.file)
    return Resolved(data=data, file=res.file, provenance={**res.provenance, **prov},
                    chain=res.chain)


def load_machine_dict(name_or_path: str | os.PathLike) -> tuple[dict[str, Any], str]:
    """The resolved mapping of a machine YAML (inheritance applied, references expanded) and
    the file it came from."""
    res = resolve_machine(name_or_path)
    return res.data, res.file


def load_device_machine(name_or_path: str | os.PathLike) -> Any:
    """A single-device machine (systolic, GPU or CPU) by built-in name or path: the hardware a
    system's or node's device names."""
    data, file = load_machine_dict(name_or_path)
    return build_machine(data, DEVICE_KINDS, file=file)


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any], *,
                    file: str | None = None) -> dict[str, Any]:
    """A deep copy of ``data`` with ``{"compute.array.rows": 64, ...}`` set.

    Every path must name an existing field or a field of an existing section; a path into
    nothing is a :class:`ConfigError`.
    """
    out = copy.deepcopy(dict(data))
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        node: Any = out
        for i, part in enumerate(parts[:-1]):
            if not isinstance(node, dict) or part not in node:
                raise ConfigError(file, dotted, value,
                                  f"path names no section ('{'.'.join(parts[:i + 1])}' not found)")
            node = node[part]
        if not isinstance(node, dict):
            raise ConfigError(file, dotted, value, "path names no field")
        node[parts[-1]] = value
    return out
