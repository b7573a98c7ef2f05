"""Machine kinds -> config classes, and loading a machine from a built-in name or a path.

A new component kind adds one line to :data:`KINDS` (see DESIGN.md "Where a change goes").

Imports: units, errors, config.*.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Mapping
from typing import Any

from accelsim.config.load import read_yaml, resolve_path
from accelsim.config.machine import SystolicMachine
from accelsim.config.schema import build
from accelsim.errors import ConfigError

KINDS: dict[str, type] = {"systolic": SystolicMachine}
"""YAML ``kind:`` -> frozen config class."""


def register_kind(kind: str, cls: type) -> None:
    """Add a machine kind (used by the GPU and system config modules)."""
    KINDS[kind] = cls


def _ensure_kinds() -> None:
    # Optional kinds live in their own modules; importing them registers them.
    for mod in ("accelsim.config.gpu", "accelsim.config.system", "accelsim.config.cpu",
                "accelsim.config.node"):
        try:
            __import__(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


def machine_from_dict(data: Mapping[str, Any], *, file: str | None = None) -> Any:
    """Build a machine config object from a parsed mapping, dispatching on ``kind``."""
    _ensure_kinds()
    kind = data.get("kind", "systolic")
    if not isinstance(kind, str) or kind not in KINDS:
        near = difflib.get_close_matches(str(kind), list(KINDS), n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else f" (known: {', '.join(KINDS)})"
        raise ConfigError(file, "kind", kind, "unknown machine kind" + hint)
    machine = build(KINDS[kind], data, file=file)
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


def load_machine_dict(name_or_path: str | os.PathLike) -> tuple[dict[str, Any], str]:
    """The raw mapping of a machine YAML and the file it came from."""
    path = resolve_path(name_or_path, "hardware")
    return read_yaml(path), str(path)


def load_machine(name_or_path: str | os.PathLike, overrides: Mapping[str, Any] | None = None) -> Any:
    """Load ``configs/hardware/<name>.yaml`` (or a path), apply dotted-path overrides, validate."""
    data, file = load_machine_dict(name_or_path)
    if not overrides:
        return machine_from_dict(data, file=file)
    source = getattr(overrides, "source", None)  # "--set": errors name the flag, not the file
    data = apply_overrides(data, overrides, file=source or file)
    try:
        return machine_from_dict(data, file=file)
    except ConfigError as exc:
        field = exc.field or ""
        if source and any(field == k or field.startswith((f"{k}.", f"{k}[")) for k in overrides):
            raise ConfigError(source, field, exc.value, exc.reason) from None
        raise


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
