"""Energy tables: picojoules per action, with their sources, and technology scaling.

A table lives in ``configs/energy/<name>.yaml`` and is resolved by short name or path. Every
value is a string with a unit (``"3.9 pJ"``; per-bit sections may write ``"3.9 pJ/bit"``)
parsed by :func:`accelsim.units.parse_energy`. Internally a table is a flat mapping from an
**action key** to picojoules:

==========================  ===============================================================
action key                  unit
==========================  ===============================================================
``mac.<precision>``         pJ per multiply-accumulate (multiply at the operand precision,
                            add at the accumulator precision)
``mult.<precision>``        pJ per multiply (optional; reference data)
``add.<precision>``         pJ per add (optional; reference data)
``rf.read`` ``rf.write``    pJ per bit read from / written to PE registers (register file)
``sram.read|write``         set only by an override: pJ per access at the reference width,
                            replacing the capacity rule
``dram.<TECH>``             pJ per bit moved to or from off-chip memory (read = write)
``noc``                     pJ per bit per on-chip network hop
``link.<kind>``             pJ per bit over an off-chip link (``nvlink``, ``pcie``, ...)
``leak.pe``                 pJ per PE per cycle (busy or idle); optional, default 0
``leak.sram_per_kib``       pJ per KiB of SRAM per cycle; optional, default 0
``static.pe``               W of leakage per PE (one MAC lane with its registers); optional
``static.sram_per_kib``     W of leakage per KiB of on-chip SRAM; optional
``static.gpu_idle_pe``      W a GPU board draws idle per tensor-core MAC lane (clocked
                            logic, leakage, DRAM background, board); optional (YAML
                            ``leakage: {gpu_idle_pe: ...}``)
``core.gpu_mac``            pJ per tensor-core MAC of datapath overhead beyond the MAC
                            itself (operand collection, pipeline registers, clock, issue);
                            optional (YAML ``core: {gpu_mac: ...}``), scaled as logic
==========================  ===============================================================

Static power: a table gives leakage either per cycle (``leak.*``, as an Accelergy ERT does, at
the clock it was derived for) or as power (``static.*``, YAML ``leakage: {pe: "25 uW",
sram_per_kib: "0.06 uW"}``), which :meth:`EnergyTable.at_clock` turns into per-cycle entries at
a machine's clock; :meth:`EnergyTable.static_power_w` gives watts for a count of PEs and KiB.

SRAM access energy follows a rule, not a single number: a few reference points
``capacity -> pJ per access of reference_word_bits``, interpolated linearly in
``log(capacity)``-``log(energy)`` (a power law between points), extrapolated below the
smallest point with the first segment's slope, and held constant above the largest point
(a large SRAM is banked: one access activates one bank). Width scales the energy by
``(word_bits / reference_word_bits) ** width_exponent`` (1.0 = constant energy per bit).

Technology scaling (``accelsim.config.energy_scaling``): dynamic energy ``E = C V^2`` with
capacitance ``C ~ L^a`` for feature size ``L``; ``a`` differs for logic, SRAM and wires;
off-chip DRAM and link energies (I/O and a different technology) are not scaled; leakage
power scales as ``L V``. See ``accelsim/report/ENERGY.md``.

Imports: units, errors, files, precision, config.memory.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import types
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from accelsim.config.memory import DRAM_TECHNOLOGIES
from accelsim.errors import ConfigError
from accelsim.files import read_yaml, resolve_path
from accelsim.precision import MAC_ENERGY_AS, PRECISION_BYTES
from accelsim.units import UnitError, parse_bytes, parse_energy, parse_power

PRECISIONS = tuple(PRECISION_BYTES)
"""Precision names a ``mac``/``mult``/``add`` section may list."""

_SECTIONS = ("name", "description", "node_nm", "voltage_v", "sources", "derived_from", "mac",
             "mult", "add", "register", "sram", "dram_per_bit", "noc_per_bit", "links_per_bit",
             "leakage", "core")
_SRAM_KEYS = ("reference_word_bits", "width_exponent", "read", "write")
_LEAK_KEYS = {"pe_per_cycle": "leak.pe", "sram_per_kib_cycle": "leak.sram_per_kib",
              "pe": "static.pe", "sram_per_kib": "static.sram_per_kib",
              "gpu_idle_pe": "static.gpu_idle_pe"}
_CORE_KEYS = ("gpu_mac",)

ACTION_UNITS = {"mac": "pJ/MAC", "mult": "pJ/op", "add": "pJ/op", "rf": "pJ/bit",
                "sram": "pJ/access", "dram": "pJ/bit", "noc": "pJ/bit/hop", "link": "pJ/bit",
                "leak": "pJ/cycle", "static": "W", "core": "pJ/MAC"}
"""Unit of each action family (the part of the key before the dot)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SramRule:
    """SRAM access energy as a function of capacity (bytes) and access width (bits)."""

    reference_word_bits: int = 64
    width_exponent: float = 1.0
    read_points: tuple[tuple[float, float], ...] = ()
    """(capacity bytes, pJ per access of ``reference_word_bits``), sorted by capacity."""
    write_points: tuple[tuple[float, float], ...] = ()

    def access_pj(self, capacity_bytes: float, word_bits: float, direction: str) -> float:
        """pJ for one access of ``word_bits`` to an SRAM of ``capacity_bytes``."""
        points = (self.write_points if direction == "write" and self.write_points
                  else self.read_points)
        base = interpolate_log(points, capacity_bytes)
        return base * (word_bits / self.reference_word_bits) ** self.width_exponent


def interpolate_log(points: tuple[tuple[float, float], ...], x: float) -> float:
    """Power-law interpolation of ``points`` at ``x`` (see module docstring for the ends)."""
    if not points:
        raise ValueError("no reference points")
    if len(points) == 1 or x >= points[-1][0]:
        return points[-1][1] if x >= points[-1][0] else points[0][1]
    if x <= points[0][0]:
        (x0, y0), (x1, y1) = points[0], points[1]
    else:
        i = next(i for i in range(1, len(points)) if x <= points[i][0])
        (x0, y0), (x1, y1) = points[i - 1], points[i]
    if y0 == 0 or y1 == 0:  # a zero point: interpolate linearly instead
        return y0 + (y1 - y0) * (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
    slope = (math.log(y1) - math.log(y0)) / (math.log(x1) - math.log(x0))
    return math.exp(math.log(y0) + slope * (math.log(x) - math.log(x0)))


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergyTable:
    """One energy table: metadata, flat action entries (pJ) and the SRAM rule."""

    name: str
    description: str = ""
    node_nm: float
    voltage_v: float
    sources: tuple[str, ...] = ()
    file: str = ""
    entries: Mapping[str, float] = field(default_factory=dict)
    """Action key -> pJ in the unit of :data:`ACTION_UNITS` for its family."""
    sram: SramRule | None = None
    derived_from: Mapping[str, Any] = field(default_factory=dict)

    def get(self, action: str, default: float | None = None) -> float | None:
        """pJ of an action, or ``default`` when the table does not list it."""
        return self.entries.get(action, default)

    def require(self, action: str, value: Any = None) -> float:
        """pJ of an action the hardware needs; a :class:`ConfigError` if the table lacks it."""
        if action in self.entries:
            return self.entries[action]
        family = action.split(".")[0]
        known = sorted(k for k in self.entries if k.split(".")[0] == family)
        near = difflib.get_close_matches(action, known, n=1)
        hint = f"did you mean '{near[0]}'?" if near else f"listed: {', '.join(known) or 'none'}"
        raise ConfigError(self.file or self.name, action, value,
                          f"energy table '{self.name}' has no entry for this action, which the "
                          f"hardware needs ({hint}); add it or set energy.overrides")

    def require_gpu_idle(self, machine: str) -> float:
        """``static.gpu_idle_pe`` (W per tensor-core MAC lane) for GPU ``machine`` whose YAML
        gives no measured ``energy.idle_w``: without either a GPU's idle power would silently be
        its cell leakage alone (about 1 W instead of about 100 W), so a table lacking it is a
        :class:`ConfigError` naming the table's file, the YAML field and the machine."""
        value = self.entries.get("static.gpu_idle_pe")
        if value is not None:
            return value
        raise ConfigError(self.file or self.name, "leakage.gpu_idle_pe", None,
                          f"missing: GPU '{machine}' needs its idle power (W per tensor-core MAC "
                          "lane) from the energy table, or energy.idle_w in its own YAML")

    def sram_access_pj(self, capacity_bytes: float, word_bits: float, direction: str) -> float:
        """pJ per SRAM access (an override ``sram.read``/``sram.write`` wins over the rule)."""
        key = f"sram.{'write' if direction == 'write' else 'read'}"
        ref_bits = self.sram.reference_word_bits if self.sram else 64
        exp = self.sram.width_exponent if self.sram else 1.0
        if key in self.entries:
            return self.entries[key] * (word_bits / ref_bits) ** exp
        if self.sram is None or not self.sram.read_points:
            raise ConfigError(self.file or self.name, key, f"{capacity_bytes:g} B",
                              f"energy table '{self.name}' has no sram section, which the "
                              "hardware needs")
        return self.sram.access_pj(capacity_bytes, word_bits, direction)

    def with_overrides(self, overrides: Mapping[str, object], *,
                       file: str | None = None) -> EnergyTable:
        """A copy with ``{"mac.bf16": "0.5 pJ", "dram.HBM2": "5 pJ/bit"}`` applied."""
        if not overrides:
            return self
        entries = dict(self.entries)
        where = file or self.file or self.name
        for key, value in overrides.items():
            key = str(key)
            family = key.split(".")[0]
            if family not in ACTION_UNITS:
                raise ConfigError(where, f"energy.overrides.{key}", value,
                                  f"unknown action family '{family}' (known: "
                                  f"{', '.join(ACTION_UNITS)})")
            if family == "sram" and key not in ("sram.read", "sram.write"):
                raise ConfigError(where, f"energy.overrides.{key}", value,
                                  "SRAM overrides are 'sram.read' or 'sram.write' (pJ per access)")
            parse = _power if family == "static" else _energy
            entries[key] = parse(value, where, f"energy.overrides.{key}", self.name)
        return replace(self, entries=types.MappingProxyType(entries))

    def static_power_w(self, *, pes: float = 0.0, sram_bytes: float = 0.0,
                       clock_hz: float | None = None) -> dict[str, float]:
        """Leakage power in W of ``pes`` MAC lanes and ``sram_bytes`` of SRAM: ``{"pe": W,
        "sram": W}``. Per-cycle entries (``leak.*``) need ``clock_hz``; a ``static.*`` entry
        wins over the per-cycle one of the same component."""
        out = {}
        for comp, amount in (("pe", pes), ("sram_per_kib", sram_bytes / 1024)):
            w = self.entries.get(f"static.{comp}")
            if w is None and clock_hz:
                w = (self.entries.get(f"leak.{comp}") or 0.0) * 1e-12 * clock_hz
            out[comp.split("_")[0]] = float(amount) * (w or 0.0)
        return out

    def at_clock(self, clock_hz: float) -> EnergyTable:
        """A copy whose ``static.*`` (W) entries are also given per cycle (``leak.*``, pJ) at
        ``clock_hz``, the form the action pricing uses; a table without them is returned as is."""
        add = {f"leak.{comp}": self.entries[f"static.{comp}"] / clock_hz * 1e12
               for comp in ("pe", "sram_per_kib") if f"static.{comp}" in self.entries}
        if not add or not clock_hz:
            return self
        return replace(self, entries=types.MappingProxyType({**self.entries, **add}))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the resolved table stored with results)."""
        out: dict[str, Any] = {"name": self.name, "node_nm": self.node_nm,
                               "voltage_v": self.voltage_v, "sources": list(self.sources),
                               "entries_pj": dict(self.entries)}
        if self.sram is not None:
            out["sram"] = {"reference_word_bits": self.sram.reference_word_bits,
                           "width_exponent": self.sram.width_exponent,
                           "read_points": [list(p) for p in self.sram.read_points],
                           "write_points": [list(p) for p in self.sram.write_points]}
        return out


def _quantity(value: Any, file: str, field_path: str, table: str, what: str) -> float:
    """Parse one ``"energy"`` (pJ; a ``/bit`` suffix allowed) or ``"power"`` (W) value;
    unparseable, non-finite or negative -> ConfigError naming table, action and value."""
    text = value
    if what == "energy" and isinstance(value, str) and value.strip().endswith("/bit"):
        text = value.strip()[: -len("/bit")]
    parse, unit = (parse_energy, "pJ") if what == "energy" else (parse_power, "W")
    try:
        x = parse(text)
    except UnitError as exc:
        raise ConfigError(file, field_path, value,
                          f"energy table '{table}': cannot parse {what} ({exc})") from None
    if not math.isfinite(x) or x < 0:
        raise ConfigError(file, field_path, value,
                          f"energy table '{table}': {what} must be >= 0 {unit}")
    return x


def _energy(value: Any, file: str, field_path: str, table: str) -> float:
    """Parse one pJ value (see :func:`_quantity`)."""
    return _quantity(value, file, field_path, table, "energy")


def _power(value: Any, file: str, field_path: str, table: str) -> float:
    """Parse one W value (see :func:`_quantity`)."""
    return _quantity(value, file, field_path, table, "power")


def _mapping(data: Any, file: str, path: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ConfigError(file, path, data, "expected a mapping")
    return data


def table_from_dict(data: Mapping[str, Any], *, file: str = "") -> EnergyTable:
    """Validate a parsed energy-table mapping and build an :class:`EnergyTable`."""
    for key in data:
        if key not in _SECTIONS:
            near = difflib.get_close_matches(str(key), _SECTIONS, n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise ConfigError(file, str(key), data[key], "unknown key" + hint)
    for key in ("name", "node_nm", "voltage_v", "mac"):
        if key not in data:
            raise ConfigError(file, key, None, "missing required field")
    name = str(data["name"])
    meta = {}
    for key in ("node_nm", "voltage_v"):
        v = data[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            raise ConfigError(file, key, v, "must be a number > 0")
        meta[key] = float(v)
    entries: dict[str, float] = {}
    for family in ("mac", "mult", "add"):
        for prec, value in _mapping(data.get(family, {}), file, family).items():
            if prec not in PRECISIONS:
                raise ConfigError(file, f"{family}.{prec}", value,
                                  f"unknown precision (known: {', '.join(PRECISIONS)})")
            entries[f"{family}.{prec}"] = _energy(value, file, f"{family}.{prec}", name)
    for prec, proxy in MAC_ENERGY_AS.items():  # block-scaled MACs priced as their proxy's
        if f"mac.{prec}" not in entries and f"mac.{proxy}" in entries:
            entries[f"mac.{prec}"] = entries[f"mac.{proxy}"]
    for direction, value in _mapping(data.get("register", {}), file, "register").items():
        if direction not in ("read_per_bit", "write_per_bit"):
            raise ConfigError(file, f"register.{direction}", value,
                              "expected read_per_bit or write_per_bit")
        entries[f"rf.{direction.split('_')[0]}"] = _energy(value, file, f"register.{direction}",
                                                           name)
    for tech, value in _mapping(data.get("dram_per_bit", {}), file, "dram_per_bit").items():
        if tech not in DRAM_TECHNOLOGIES:
            raise ConfigError(file, f"dram_per_bit.{tech}", value,
                              f"unknown memory technology (known: {', '.join(DRAM_TECHNOLOGIES)})")
        entries[f"dram.{tech}"] = _energy(value, file, f"dram_per_bit.{tech}", name)
    if "noc_per_bit" in data:
        entries["noc"] = _energy(data["noc_per_bit"], file, "noc_per_bit", name)
    for kind, value in _mapping(data.get("links_per_bit", {}), file, "links_per_bit").items():
        entries[f"link.{kind}"] = _energy(value, file, f"links_per_bit.{kind}", name)
    for key, value in _mapping(data.get("leakage", {}), file, "leakage").items():
        if key not in _LEAK_KEYS:
            raise ConfigError(file, f"leakage.{key}", value,
                              f"unknown leakage entry (known: {', '.join(_LEAK_KEYS)})")
        parse = _power if _LEAK_KEYS[key].startswith("static.") else _energy
        entries[_LEAK_KEYS[key]] = parse(value, file, f"leakage.{key}", name)
    for key, value in _mapping(data.get("core", {}), file, "core").items():
        if key not in _CORE_KEYS:
            raise ConfigError(file, f"core.{key}", value,
                              f"unknown core entry (known: {', '.join(_CORE_KEYS)})")
        entries[f"core.{key}"] = _energy(value, file, f"core.{key}", name)
    sram = _sram_rule(data["sram"], file, name) if "sram" in data else None
    sources = data.get("sources", ())
    if isinstance(sources, str):
        sources = (sources,)
    return EnergyTable(name=name, description=str(data.get("description", "")),
                       sources=tuple(str(s) for s in sources), file=file,
                       entries=types.MappingProxyType(entries), sram=sram,
                       derived_from=types.MappingProxyType(dict(data.get("derived_from") or {})),
                       **meta)


def _sram_rule(data: Any, file: str, name: str) -> SramRule:
    data = _mapping(data, file, "sram")
    for key in data:
        if key not in _SRAM_KEYS:
            raise ConfigError(file, f"sram.{key}", data[key],
                              f"unknown key (known: {', '.join(_SRAM_KEYS)})")
    if "read" not in data:
        raise ConfigError(file, "sram.read", None, "missing required field")
    bits = data.get("reference_word_bits", 64)
    if isinstance(bits, bool) or not isinstance(bits, (int, float)) or bits <= 0:
        raise ConfigError(file, "sram.reference_word_bits", bits, "must be a number > 0")
    exp = data.get("width_exponent", 1.0)
    if isinstance(exp, bool) or not isinstance(exp, (int, float)) or not 0 <= exp <= 2:
        raise ConfigError(file, "sram.width_exponent", exp, "must be a number within [0, 2]")
    points = {}
    for direction in ("read", "write"):
        pts = []
        for cap, value in _mapping(data.get(direction, {}), file, f"sram.{direction}").items():
            path = f"sram.{direction}.{cap}"
            try:
                cap_bytes = parse_bytes(cap)
            except UnitError as exc:
                raise ConfigError(file, path, cap, f"cannot parse capacity ({exc})") from None
            if cap_bytes <= 0:
                raise ConfigError(file, path, cap, "capacity must be > 0")
            pts.append((cap_bytes, _energy(value, file, path, name)))
        points[direction] = tuple(sorted(pts))
    if not points["read"]:
        raise ConfigError(file, "sram.read", {}, "needs at least one capacity -> energy point")
    return SramRule(reference_word_bits=int(bits), width_exponent=float(exp),
                    read_points=points["read"], write_points=points["write"])


def energy_table_path(name_or_path: str | os.PathLike) -> Path:
    """``configs/energy/<name>.yaml`` for a short name, or the path itself."""
    return resolve_path(name_or_path, "energy")


def load_energy_table(name_or_path: str | os.PathLike,
                      overrides: Mapping[str, object] | None = None) -> EnergyTable:
    """Load, validate and (optionally) override an energy table by short name or path.

    Parsed tables are cached per file (keyed by path and modification time): sweeps price
    thousands of runs with the same table.
    """
    path = energy_table_path(name_or_path)
    table = _parsed_table(str(path), os.stat(path).st_mtime_ns)
    return table.with_overrides(overrides or {}) if overrides else table


@functools.lru_cache(maxsize=64)
def _parsed_table(path: str, mtime_ns: int) -> EnergyTable:
    return table_from_dict(read_yaml(path), file=path)
