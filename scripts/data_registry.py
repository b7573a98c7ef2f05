"""The registry of validation data (``scripts/data/REGISTRY.yaml``): each data file's role.

    >>> from data_registry import role_of, fit_data
    >>> role_of("h200_e2e_run7.json")
    'dev'
    >>> data = fit_data("h200_e2e_run7L.json")            # calibration: handed to a fit
    >>> fit_data("h200_heldout.json", part="env")          # a calibration part of a dev file
    >>> fit_data("h200_e2e_run7.json")                     # dev: DataRoleError

Roles: ``calibration`` (fitted on), ``dev`` (never fitted, but its figures guided model
choices), ``held-out`` (scored, no choice made by it). Every fitting function of
``scripts/`` obtains its data through :func:`fit_data`, which refuses anything but calibration
data with one line naming the file, its role and why (``tests/test_data_registry.py`` holds
that statically and dynamically). The YAML's header states the fields.

Imports: accelsim.errors, accelsim.files (the one YAML reader). Not part of the package.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from accelsim.errors import AccelsimError, ConfigError
from accelsim.files import read_yaml

DATA = Path(__file__).resolve().parent / "data"
REGISTRY = DATA / "REGISTRY.yaml"
ROLES = ("calibration", "dev", "held-out")
"""The roles a data file (or a part of one) may have."""
REQUIRED = ("path", "role", "measured", "when", "machine", "software", "added",
            "first_compared")
"""Fields every entry carries (``first_compared`` and ``added`` may be null: never read by a
validation script / not in the repository yet)."""
DEV_REQUIRED = ("dev_since", "reason")
"""Fields a ``dev`` entry or part carries besides: the date it became dev and why."""


class DataRoleError(AccelsimError):
    """A fit asked for data that is not calibration data (or that the registry lacks)."""


@functools.cache
def load_registry(path: Path = REGISTRY) -> dict[str, dict[str, Any]]:
    """Every entry by file name (``files`` and ``external`` together), each checked: the
    :data:`REQUIRED` fields, a role in :data:`ROLES`, parts with a valid role, dev entries
    with :data:`DEV_REQUIRED`. A bad entry is a :class:`ConfigError`."""
    doc = read_yaml(path)
    out: dict[str, dict[str, Any]] = {}
    for group in ("files", "external"):
        for name, entry in (doc.get(group) or {}).items():
            _check(path, f"{group}.{name}", entry)
            out[str(name)] = {**entry, "external": group == "external"}
    return out


def _check(path: Path, where: str, entry: Any) -> None:
    if not isinstance(entry, dict):
        raise ConfigError(str(path), where, entry, "expected a mapping")
    for key in REQUIRED:
        if key not in entry:
            raise ConfigError(str(path), f"{where}.{key}", None, "missing")
    _check_role(path, where, entry)
    for pname, part in (entry.get("parts") or {}).items():
        if not isinstance(part, dict) or "role" not in part:
            raise ConfigError(str(path), f"{where}.parts.{pname}", part, "needs a role")
        _check_role(path, f"{where}.parts.{pname}", part)


def _check_role(path: Path, where: str, entry: dict) -> None:
    if entry["role"] not in ROLES:
        raise ConfigError(str(path), f"{where}.role", entry["role"],
                          f"expected one of {', '.join(ROLES)}")
    if entry["role"] == "dev":
        for key in DEV_REQUIRED:
            if not entry.get(key):
                raise ConfigError(str(path), f"{where}.{key}", None, "a dev entry needs it")


def entry_of(path: str | Path) -> dict[str, Any]:
    """The registry entry of a data file (a name in ``scripts/data/`` or any path to one)."""
    name = Path(path).name
    reg = load_registry()
    if name not in reg:
        raise DataRoleError(f"{name}: not in {REGISTRY.name}; register it with its role first")
    return reg[name]


def role_of(path: str | Path, part: str | None = None) -> str:
    """``calibration``, ``dev`` or ``held-out`` of a data file, or of one of its parts."""
    entry = entry_of(path)
    if part is None:
        return str(entry["role"])
    parts = entry.get("parts") or {}
    if part not in parts:
        raise DataRoleError(f"{Path(path).name}: no part {part!r} in {REGISTRY.name} "
                            f"(parts: {', '.join(parts) or 'none'})")
    return str(parts[part]["role"])


def fit_files(*names: str, part: str | None = None) -> list[Path]:
    """Paths of calibration data for a fit: each ``name`` (or its ``part``) must be
    ``calibration`` in the registry, else :class:`DataRoleError` names the file, its role and
    the reason it is not fit material."""
    out = []
    for name in names:
        role = role_of(name, part)
        mixed = [p for p, v in (entry_of(name).get("parts") or {}).items()
                 if v["role"] != "calibration"]
        if part is None and role == "calibration" and mixed:
            raise DataRoleError(f"{name} also holds {', '.join(mixed)} (not calibration data, "
                                f"{REGISTRY.name}): name the calibration part the fit reads")
        if role != "calibration":
            entry = entry_of(name)
            what = f"{name}" + (f" part {part!r}" if part else "")
            why = entry.get("reason") or entry.get("note") or "scored against the model"
            raise DataRoleError(f"{what} is {role} data ({REGISTRY.name}): a fit may read only "
                                f"calibration data; {why}")
        entry = entry_of(name)  # an external set's copy lives at its registered path
        out.append(DATA.parents[1] / entry["path"])  # repository-relative, external sets too
    return out


def fit_data(name: str, part: str | None = None) -> Any:
    """The parsed JSON of one calibration file (or calibration ``part`` of a file) for a fit;
    :func:`fit_files` refuses anything else. A part that names a ``section`` gets that
    section alone (``{"sections": {section: ...}}``), so a fit cannot read the rest."""
    (path,) = fit_files(name, part=part)
    data = json.loads(path.read_text())
    section = (entry_of(name).get("parts") or {}).get(part, {}).get("section") if part else None
    if section is None:
        return data
    return {"sections": {section: data["sections"][section]}}
