"""Safe YAML reading with budgets: the one parser behind every YAML input.

libyaml's safe loader (``CSafeLoader``) when PyYAML has it, else the pure-Python one. Before
a document is composed, its parse events are scanned once and the document is refused when it
uses more than :data:`~accelsim.limits.MAX_YAML_ALIASES` aliases, nests deeper than
:data:`~accelsim.limits.MAX_NESTING` levels, or would expand (aliases followed) to more than
:data:`~accelsim.limits.MAX_YAML_NODES` nodes: an alias bomb of a few hundred bytes is
refused in microseconds, before anything is built or printed. Files larger than
:data:`~accelsim.limits.MAX_FILE_BYTES` are refused before they are read, and bytes that are
not UTF-8 text are named by offset. Every error is one :class:`ConfigError` line.

Imports: errors, limits.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from accelsim.errors import ConfigError
from accelsim.limits import (
    MAX_FILE_BYTES,
    MAX_NESTING,
    MAX_YAML_ALIASES,
    MAX_YAML_NODES,
    check_file_size,
)

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it (10x faster), else the pure-Python one."""

_STARTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_ENDS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class YamlSyntaxError(ConfigError):
    """Text that is not YAML (as opposed to YAML over a budget)."""


def _yaml_error(exc: yaml.YAMLError, file: str) -> ConfigError:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["?"])[0]
    return YamlSyntaxError(file, None, None, f"invalid YAML{where}: {problem}")


def check_budget(text: str, file: str) -> None:
    """Scan ``text``'s parse events; refuse alias bombs, deep nesting and huge expansions."""
    aliases = 0
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[0, None]]  # [expanded node count, anchor] per open collection
    try:
        for ev in yaml.parse(text, Loader=_LOADER):
            if isinstance(ev, _STARTS):
                if len(stack) > MAX_NESTING:
                    line = ev.start_mark.line + 1 if ev.start_mark else 0
                    raise ConfigError(file, None, None, f"nested deeper than {MAX_NESTING} levels "
                                      f"(at line {line})")
                stack.append([1, ev.anchor])
                continue
            if isinstance(ev, _ENDS):
                count, anchor = stack.pop()
            elif isinstance(ev, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_YAML_ALIASES:
                    raise ConfigError(file, None, None,
                                      f"more than {MAX_YAML_ALIASES} YAML aliases (*name)")
                count, anchor = sizes.get(ev.anchor, 1), None
            elif isinstance(ev, yaml.ScalarEvent):
                count, anchor = 1, ev.anchor
            else:
                continue
            if anchor is not None:
                sizes[anchor] = count
            stack[-1][0] += count
            if stack[-1][0] > MAX_YAML_NODES:
                raise ConfigError(file, None, None, "YAML aliases expand to more than "
                                  f"{MAX_YAML_NODES:,} nodes")
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, file) from None


def load_text(text: str, file: str) -> Any:
    """Parse one YAML document from ``text`` within the budgets (``file`` names the source)."""
    check_budget(text, file)
    try:
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, file) from None
    except RecursionError:  # pragma: no cover (the budget scan refuses deep nesting first)
        raise ConfigError(file, None, None, "nested too deeply") from None


def read_text(path: str | os.PathLike, *, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """A text file's contents: size-checked first, UTF-8 decoded, one-line errors."""
    p = Path(path)
    file = str(p)
    if p.is_dir():
        raise ConfigError(file, None, None, f"is a directory, expected a {what}")
    check_file_size(p, limit=limit)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(file, None, None, f"cannot read file ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(file, None, None, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                          f"offset {exc.start}): a binary file?") from None


def read_file(path: str | os.PathLike) -> Any:
    """Parse a YAML file within the budgets (any top-level type)."""
    return load_text(read_text(path, what="YAML file"), str(path))
