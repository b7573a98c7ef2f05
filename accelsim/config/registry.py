"""Machine kinds -> config classes, and loading a machine from a built-in name or a path.

:data:`KINDS` is the one table of machine kinds: the single devices of
:data:`accelsim.config.build.DEVICE_KINDS` plus systems and nodes. A new machine kind adds
its config module and one line there (see ARCHITECTURE.md, "Where a change goes").

Imports: errors, config.*.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from accelsim.config.build import (
    DEVICE_KINDS,
    apply_overrides,
    build_machine,
    load_machine_dict,
)
from accelsim.config.node import Node
from accelsim.config.system import System
from accelsim.errors import ConfigError

KINDS: dict[str, type] = {**DEVICE_KINDS, "system": System, "node": Node}
"""YAML ``kind:`` -> frozen config class."""

__all__ = ["KINDS", "apply_overrides", "load_machine", "load_machine_dict", "machine_from_dict"]


def machine_from_dict(data: Mapping[str, Any], *, file: str | None = None) -> Any:
    """Build a machine config object from a parsed mapping, dispatching on ``kind``."""
    return build_machine(data, KINDS, file=file)


def load_machine(name_or_path: str | os.PathLike,
                 overrides: Mapping[str, Any] | None = None) -> Any:
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
