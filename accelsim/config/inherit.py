"""Machine files by inheritance, with the provenance of every value.

A hardware YAML may start from another: ``inherit: h200`` (a built-in name, or a path, taken
relative to the inheriting file's folder first) and then give only what differs. Resolution
is on the parsed mappings, for every machine kind alike:

* a mapping in the child is merged key by key into the parent's; anything else (a number, a
  string, a list) replaces the parent's value whole;
* every key the child writes must exist in the parent (an override of a key the parent lacks
  is a :class:`ConfigError` naming file, field and value): a typo never adds a silent value;
  the one exception is a known precision name added to a per-precision table (a new
  generation's number format: ``tensor_flop_per_clk_per_sm.nvfp4`` in ``b200.yaml``);
* ``remove: [compute.tensor_flop_per_clk_per_sm.fp8, ...]`` deletes parent keys the child
  does not have (a precision the chip lacks); each must exist in the parent;
* the chain ends in a file with no ``inherit``; a loop is refused, naming the chain.

**Provenance.** Every value carries its kind, written in a parsed ``provenance:`` mapping (not
comments, which YAML loses): keys are dotted field paths, a section or a single value, and
``default`` for the whole file; the most specific key that covers a value gives its kind.
Kinds (:data:`KIND_PATTERN`): ``datasheet``, ``estimated``, ``measured on X``, ``fitted on X``
(``X`` the machine the measurement or fit was made on, a built-in hardware name). A child's
``provenance`` covers only what the child itself writes; a key of it naming nothing the child
sets is refused. A value the child does not write is ``inherited from PARENT`` and keeps the
parent's kind. Files of the kinds in :data:`PROVENANCE_REQUIRED` must give every value a kind.

Imports: errors, files, precision.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelsim.errors import ConfigError
from accelsim.files import read_yaml, resolve_path
from accelsim.precision import PRECISIONS

KIND_PATTERN = re.compile(r"^(datasheet|estimated|(measured|fitted) on [A-Za-z0-9_.+-]+)$")
"""The provenance kinds a file may write (``inherited`` is never written: it is derived)."""
PROVENANCE_REQUIRED = ("gpu", "gpu_stack")
"""Kinds whose files must give every value a provenance kind."""
RESOLUTION_KEYS = ("inherit", "remove", "provenance")
"""Top-level keys that steer resolution and are not part of the resolved machine."""
IDENTITY_KEYS = ("kind", "name", "description", "sources")
"""Top-level keys that say what a file is, not values of the machine: no provenance."""
MAX_DEPTH = 16
"""Longest inheritance chain accepted."""


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one resolved value comes from."""

    kind: str
    """``datasheet``, ``estimated``, ``measured on X``, ``fitted on X``, or ``unstated``."""
    file: str
    """The file that writes the value."""
    inherited_from: str | None = None
    """The machine it is inherited from (the nearest ancestor that writes it), else None."""

    def label(self) -> str:
        """``fitted on h200`` or ``fitted on h200, inherited from h200``."""
        if self.inherited_from:
            return f"{self.kind}, inherited from {self.inherited_from}"
        return self.kind

    @property
    def source_machine(self) -> str | None:
        """``X`` of ``measured on X`` / ``fitted on X``, else None."""
        for prefix in ("measured on ", "fitted on "):
            if self.kind.startswith(prefix):
                return self.kind[len(prefix):]
        return None


@dataclass(frozen=True, slots=True)
class Resolved:
    """A machine file with its inheritance applied."""

    data: dict[str, Any]
    """The resolved mapping (no ``inherit``, ``remove`` or ``provenance`` keys)."""
    file: str
    """The file asked for."""
    provenance: dict[str, Provenance] = field(default_factory=dict)
    """Dotted path of every leaf value -> its provenance."""
    chain: tuple[str, ...] = ()
    """Machine names from this file up to the root of its inheritance."""


def leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted path, value)`` of every leaf of a nested mapping (lists are leaves)."""
    if isinstance(data, Mapping) and data:
        for key, value in data.items():
            yield from leaves(value, f"{prefix}.{key}" if prefix else str(key))
    elif prefix:
        yield prefix, data


def get_path(data: Mapping[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` in ``data``; :class:`KeyError` if absent."""
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(dotted)
        node = node[part]
    return node


def resolve_file(name_or_path: str | os.PathLike, folder: str = "hardware") -> Resolved:
    """Read a YAML by built-in name (in ``configs/<folder>``) or path and resolve its
    inheritance (parents are looked up in the same folder)."""
    path = resolve_path(name_or_path, folder)
    return _resolve(path, (), folder)


def resolve_mapping(data: Mapping[str, Any], file: str | None = None) -> dict[str, Any]:
    """A parsed machine mapping (say, built in code) with ``inherit``/``remove`` applied and
    ``provenance`` checked and dropped: what the config builders take."""
    if not any(k in data for k in RESOLUTION_KEYS):
        return dict(data)
    where = Path(file).parent if file else None
    return _merge_into_parent(dict(data), file or "<mapping>", where, (), "hardware").data


def _resolve(path: Path, seen: tuple[str, ...], kind_dir: str) -> Resolved:
    file = str(path)
    data = read_yaml(path)
    return _merge_into_parent(data, file, path.parent, seen, kind_dir)


def _merge_into_parent(data: dict[str, Any], file: str, folder: Path | None,
                       seen: tuple[str, ...], kind_dir: str) -> Resolved:
    me = str(Path(file).resolve()) if Path(file).exists() else file
    if me in seen:
        chain = " -> ".join(Path(s).stem for s in (*seen, me))
        raise ConfigError(file, "inherit", data.get("inherit"), f"inheritance loop ({chain})")
    if len(seen) >= MAX_DEPTH:
        raise ConfigError(file, "inherit", data.get("inherit"),
                          f"inheritance deeper than {MAX_DEPTH} files")
    own = {k: v for k, v in data.items() if k not in RESOLUTION_KEYS}
    prov_spec = _provenance_spec(data.get("provenance"), file)
    parent_name = data.get("inherit")
    if parent_name is None:
        if "remove" in data:
            raise ConfigError(file, "remove", data["remove"],
                              "only a file that inherits removes keys")
        kind = own.get("kind", "systolic")
        prov = _own_provenance(own, prov_spec, file, kind)
        return Resolved(data=own, file=file, provenance=prov,
                        chain=(str(own.get("name", Path(file).stem)),))
    if not isinstance(parent_name, str) or not parent_name:
        raise ConfigError(file, "inherit", parent_name, "expected a machine name or path")
    parent = _resolve(_parent_path(parent_name, folder, file, kind_dir), (*seen, me), kind_dir)
    pdata = copy.deepcopy(parent.data)
    kind = pdata.get("kind", "systolic")
    if "kind" in own and own["kind"] != kind:
        raise ConfigError(file, "kind", own["kind"],
                          f"cannot change the kind of {parent_name} ({kind}) by inheritance")
    for dotted in _remove_list(data.get("remove"), file):
        _delete(pdata, dotted, file, parent_name)
    _merge(pdata, own, "", file, parent_name)
    pname = str(parent.data.get("name", parent_name))
    prov = {p: Provenance(v.kind, v.file, v.inherited_from or pname)
            for p, v in parent.provenance.items()}
    for p in list(prov):
        try:
            get_path(pdata, p)
        except KeyError:
            del prov[p]  # removed by this file
    prov.update(_own_provenance(own, prov_spec, file, kind))
    for p, _ in leaves(pdata):  # a mapping emptied by ``remove`` is this file's value
        if p not in prov and p.split(".")[0] not in IDENTITY_KEYS:
            prov[p] = Provenance(_most_specific(prov_spec, p) or "unstated", file)
    return Resolved(data=pdata, file=file, provenance=prov,
                    chain=(str(own.get("name", Path(file).stem)), *parent.chain))


def _parent_path(name: str, folder: Path | None, file: str, kind_dir: str) -> Path:
    if folder is not None:
        cand = folder / name
        for c in (cand, cand.with_name(cand.name + ".yaml")):
            if c.is_file():
                return c
    try:
        return resolve_path(name, kind_dir)
    except ConfigError as exc:
        raise ConfigError(file, "inherit", name, exc.reason) from None


def _remove_list(value: Any, file: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(file, "remove", value, "expected a list of dotted field paths")
    return value


def _delete(data: dict[str, Any], dotted: str, file: str, parent: str) -> None:
    *head, last = dotted.split(".")
    node: Any = data
    for part in head:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or last not in node:
        raise ConfigError(file, "remove", dotted, f"{parent} has no such key")
    del node[last]


def _adds_a_precision(base: Mapping[str, Any], key: Any) -> bool:
    """A child may add a key its parent lacks only to a per-precision table (every key of
    ``base`` a precision name, ``tensor_flop_per_clk_per_sm``, ``k_block``...) and only a
    known precision name (:data:`accelsim.precision.PRECISIONS`): a new generation's new
    number format is YAML, a typo is still refused."""
    return bool(base) and key in PRECISIONS and all(k in PRECISIONS for k in base)


def _merge(base: dict[str, Any], over: Mapping[str, Any], prefix: str, file: str,
           parent: str) -> None:
    for key, value in over.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if key not in base and not _adds_a_precision(base, key):
            raise ConfigError(file, path, value,
                              f"override of a key {parent} lacks (write it in {parent} first)")
        if isinstance(value, Mapping) and isinstance(base[key], dict):
            _merge(base[key], value, path, file, parent)
        else:
            base[key] = copy.deepcopy(value)


def _provenance_spec(value: Any, file: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(file, "provenance", value,
                          "expected a mapping of dotted field paths to provenance kinds")
    for key, kind in value.items():
        if not isinstance(kind, str) or not KIND_PATTERN.match(kind):
            raise ConfigError(file, f"provenance.{key}", kind,
                              "expected datasheet, estimated, 'measured on X' or 'fitted on X'")
    return {str(k): v for k, v in value.items()}


def _own_provenance(own: Mapping[str, Any], spec: Mapping[str, str], file: str, kind: Any
                    ) -> dict[str, Provenance]:
    """Provenance of every leaf the file writes, from the most specific key of ``spec``."""
    written = [(p, v) for p, v in leaves(own)
               if p.split(".")[0] not in IDENTITY_KEYS]
    for key in spec:
        if key == "default":
            continue
        if not any(p == key or p.startswith(key + ".") for p, _ in written):
            raise ConfigError(file, f"provenance.{key}", spec[key],
                              "names no value this file writes")
    required = kind in PROVENANCE_REQUIRED
    out: dict[str, Provenance] = {}
    for p, v in written:
        k = _most_specific(spec, p)
        if k is None:
            if required:
                raise ConfigError(file, p, v, "no provenance (give it a key in provenance:, "
                                  "or a section's or the file's default)")
            k = "unstated"
        out[p] = Provenance(k, file)
    return out


def _most_specific(spec: Mapping[str, str], path: str) -> str | None:
    parts = path.split(".")
    for n in range(len(parts), 0, -1):
        k = ".".join(parts[:n])
        if k in spec:
            return spec[k]
    return spec.get("default")
