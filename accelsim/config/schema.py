"""Build frozen, validated dataclasses from plain mappings (parsed YAML).

Every config dataclass declares each parameter once, with its default, its unit (by the field
name's suffix, see :data:`accelsim.units.PARSERS`) and a sentence (``param(doc=...)``). The
builder rejects unknown keys (suggesting the closest name), parses unit strings, checks
constraints, and names the file, the dotted field path and the bad value on any error.

Imports: units, errors, limits.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from accelsim.errors import ConfigError
from accelsim.limits import check_number
from accelsim.units import UnitError, parser_for_field

T = TypeVar("T")

Check = Callable[[Any], "str | None"]


def param(doc: str, *, default: Any = dataclasses.MISSING, check: Check | None = None,
          choices: tuple[str, ...] | None = None) -> Any:
    """Declare a config parameter: a one-sentence ``doc``, an optional default and checks."""
    if not doc:
        raise TypeError("every config parameter needs a description")
    meta = {"doc": doc, "check": check, "choices": choices}
    if isinstance(default, (dict, list)):
        value = default
        return dataclasses.field(default_factory=lambda: type(value)(value), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def positive(v: Any) -> str | None:
    """Check: strictly greater than zero."""
    return None if v > 0 else "must be > 0"


def non_negative(v: Any) -> str | None:
    """Check: zero or more."""
    return None if v >= 0 else "must be >= 0"


def fraction(v: Any) -> str | None:
    """Check: within [0, 1]."""
    return None if 0.0 <= v <= 1.0 else "must be within [0, 1]"


def build(cls: type[T], data: Any, *, file: str | None = None, path: str = "") -> T:
    """Build the frozen dataclass ``cls`` from mapping ``data``; raise :class:`ConfigError`."""
    if not isinstance(data, Mapping):
        raise ConfigError(file, path or "<root>", data,
                          f"expected a mapping of {cls.__name__} fields")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if key not in fields:
            near = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else f" (known: {', '.join(fields)})"
            raise ConfigError(file, _join(path, str(key)), data[key], "unknown key" + hint)
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        fpath = _join(path, name)
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(file, fpath, None, "missing required field")
            continue
        kwargs[name] = _convert(hints[name], name, data[name], f, file, fpath)
    try:
        return cls(**kwargs)
    except ConfigError as exc:
        if exc.file is None and file is not None:
            raise ConfigError(file, exc.field, exc.value, exc.reason) from None
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(file, path or "<root>", "", str(exc)) from None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _convert(hint: Any, name: str, value: Any, f: dataclasses.Field, file: str | None,
             fpath: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        hint = next(a for a in args if a is not type(None))
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return build(hint, value, file=file, path=fpath)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(file, fpath, value, "expected a list")
        item = args[0]
        out = []
        for i, v in enumerate(value):
            ipath = f"{fpath}[{i}]"
            if dataclasses.is_dataclass(item):
                out.append(build(item, v, file=file, path=ipath))
            else:
                out.append(_scalar(item, name, v, f, file, ipath))
        return tuple(out)
    if origin in (dict, Mapping) or hint is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(file, fpath, value, "expected a mapping")
        _numbers_in_range(value, file, fpath)
        return types.MappingProxyType(dict(value))
    return _scalar(hint, name, value, f, file, fpath)


def _numbers_in_range(value: Any, file: str | None, fpath: str, depth: int = 0) -> None:
    """Every number inside a free-form mapping is finite and within int64 (NaN, ±inf and
    huge integers are refused here, whatever the mapping's own checks accept)."""
    if isinstance(value, Mapping):
        for key, v in value.items():
            _numbers_in_range(v, file, f"{fpath}.{key}", depth + 1)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _numbers_in_range(v, file, f"{fpath}[{i}]", depth + 1)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        check_number(value, file=file, field=fpath)


def _scalar(hint: Any, name: str, value: Any, f: dataclasses.Field, file: str | None,
            fpath: str) -> Any:
    parser = parser_for_field(name)
    if isinstance(value, int) and not isinstance(value, bool) and hint is not str:
        check_number(value, file=file, field=fpath)  # no integer beyond int64, whatever the type
    try:
        if hint is bool:
            if not isinstance(value, bool):
                raise ConfigError(file, fpath, value, "expected true or false")
            out: Any = value
        elif hint is str:
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise ConfigError(file, fpath, value, "expected a string")
            out = str(value)
        elif parser is not None:
            out = check_number(parser(value), file=file, field=fpath, shown=value,
                               allow_inf=name.endswith("_bytes_per_s"))
            if hint is int:
                if out != int(out):
                    raise ConfigError(file, fpath, value, "expected a whole number")
                out = check_number(out, file=file, field=fpath, integer=True, shown=value)
        elif hint is int:
            out = check_number(value, file=file, field=fpath, integer=True)
        elif hint is float:
            out = float(check_number(value, file=file, field=fpath))
        else:
            out = value
    except UnitError as exc:
        raise ConfigError(file, fpath, value, str(exc)) from None
    choices = f.metadata.get("choices")
    if choices is not None and out not in choices:
        near = difflib.get_close_matches(str(out), list(choices), n=1)
        hint_txt = f" (did you mean '{near[0]}'?)" if near else ""
        raise ConfigError(file, fpath, value, f"must be one of {', '.join(choices)}{hint_txt}")
    check = f.metadata.get("check")
    if check is not None:
        problem = check(out)
        if problem:
            raise ConfigError(file, fpath, value, problem)
    return out


def describe(cls: type) -> list[tuple[str, str, str]]:
    """(field, default, sentence) for every parameter of ``cls``: the reference docs' source."""
    rows = []
    for f in dataclasses.fields(cls):
        default = "required" if f.default is dataclasses.MISSING else repr(f.default)
        rows.append((f.name, default, f.metadata.get("doc", "")))
    return rows


def to_dict(obj: Any) -> Any:
    """A frozen config object as plain JSON-able data (the resolved input stored with results)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (tuple, list)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, Mapping):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj
