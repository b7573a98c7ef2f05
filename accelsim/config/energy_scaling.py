"""Technology scaling of energy tables, and their YAML form.

:func:`scale_table` moves a table to another node and supply by :class:`ScalingRule`
(``E = C V^2`` with ``C ~ L^a`` per component class; leakage power ``P ~ L V``);
:func:`table_to_mapping` writes a table back as YAML (``scripts/fit/scale_energy_table.py``
generates the shipped ``scaled_*`` tables with both). See ``accelsim/report/ENERGY.md``
section 3.

Imports: config.energy.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, replace
from typing import Any

from accelsim.config.energy import _LEAK_KEYS, EnergyTable


@dataclass(frozen=True, slots=True, kw_only=True)
class ScalingRule:
    """``E' = E (L'/L)^a (V'/V)^2`` with a capacitance exponent ``a`` per component class.

    Classical (Dennard) scaling has ``C ~ L`` (``a = 1``) for transistors. Below ~28 nm the node
    name no longer measures a physical length, wires (``C`` per mm roughly constant) and SRAM
    bit cells shrink more slowly than logic, so their exponents are smaller. Off-chip DRAM and
    link energies are interface/technology properties and are not scaled (``a = 0``, no V term).
    """

    logic_exponent: float = 1.0
    sram_exponent: float = 0.5
    wire_exponent: float = 0.5
    voltage_exponent: float = 2.0
    leakage_voltage_exponent: float = 1.0
    """Static power ``P = V I_leak`` with ``I_leak`` ~ device width ~ ``L``: leakage power
    (``static.*``) scales as ``(L'/L)^logic_exponent (V'/V)^1``, not as ``C V^2``."""

    def factor(self, family: str, node_ratio: float, voltage_ratio: float) -> float:
        """Energy multiplier for an action family (``mac``, ``sram``, ``dram`` ...)."""
        exponent = {"mac": self.logic_exponent, "mult": self.logic_exponent,
                    "add": self.logic_exponent, "rf": self.logic_exponent,
                    "leak": self.logic_exponent, "core": self.logic_exponent,
                    "sram": self.sram_exponent, "noc": self.wire_exponent}.get(family)
        if family == "static":
            return (node_ratio ** self.logic_exponent
                    * voltage_ratio ** self.leakage_voltage_exponent)
        if exponent is None:  # dram, link: off-chip, not scaled with the logic node
            return 1.0
        return node_ratio ** exponent * voltage_ratio ** self.voltage_exponent


def scale_dynamic_energy(energy_pj: float, *, node_from: float, node_to: float, v_from: float,
                         v_to: float, capacitance_exponent: float = 1.0) -> float:
    """``E C V^2`` rule for one value: pJ at (``node_to`` nm, ``v_to`` V)."""
    return energy_pj * (node_to / node_from) ** capacitance_exponent * (v_to / v_from) ** 2


def scale_table(table: EnergyTable, *, node_nm: float, voltage_v: float, name: str,
                rule: ScalingRule | None = None) -> EnergyTable:
    """A table moved to another node and voltage by ``rule`` (see :class:`ScalingRule`)."""
    rule = rule or ScalingRule()
    nr, vr = node_nm / table.node_nm, voltage_v / table.voltage_v
    entries = {k: v * rule.factor(k.split(".")[0], nr, vr) for k, v in table.entries.items()}
    sram = table.sram
    if sram is not None:
        f = rule.factor("sram", nr, vr)
        sram = replace(sram, read_points=tuple((c, e * f) for c, e in sram.read_points),
                       write_points=tuple((c, e * f) for c, e in sram.write_points))
    derived = {"table": table.name, "node_nm": table.node_nm, "voltage_v": table.voltage_v,
               "logic_exponent": rule.logic_exponent, "sram_exponent": rule.sram_exponent,
               "wire_exponent": rule.wire_exponent, "voltage_exponent": rule.voltage_exponent,
               "leakage_voltage_exponent": rule.leakage_voltage_exponent}
    return EnergyTable(name=name, description=f"{table.name} scaled to {node_nm:g} nm, "
                       f"{voltage_v:g} V", node_nm=float(node_nm), voltage_v=float(voltage_v),
                       sources=table.sources, file="", entries=types.MappingProxyType(entries),
                       sram=sram, derived_from=types.MappingProxyType(derived))


def table_to_mapping(table: EnergyTable, digits: int = 4) -> dict[str, Any]:
    """The YAML form of a table (values as unit strings, rounded to ``digits`` significant)."""

    def pj(v: float, per_bit: bool = False) -> str:
        return f"{float(f'{v:.{digits}g}'):g} pJ" + ("/bit" if per_bit else "")

    def section(family: str, per_bit: bool = False) -> dict[str, str]:
        return {k.split(".", 1)[1]: pj(v, per_bit) for k, v in table.entries.items()
                if k.split(".")[0] == family}

    out: dict[str, Any] = {"name": table.name, "description": table.description,
                           "node_nm": table.node_nm, "voltage_v": table.voltage_v,
                           "sources": list(table.sources)}
    if table.derived_from:
        out["derived_from"] = dict(table.derived_from)
    for family in ("mac", "mult", "add"):
        if section(family):
            out[family] = section(family)
    rf = section("rf", True)
    if rf:
        out["register"] = {f"{k}_per_bit": v for k, v in rf.items()}
    if table.sram is not None:
        s = table.sram
        out["sram"] = {"reference_word_bits": s.reference_word_bits,
                       "width_exponent": s.width_exponent,
                       "read": {_capacity(c): pj(e) for c, e in s.read_points}}
        if s.write_points:
            out["sram"]["write"] = {_capacity(c): pj(e) for c, e in s.write_points}
    if section("dram", True):
        out["dram_per_bit"] = section("dram", True)
    if "noc" in table.entries:
        out["noc_per_bit"] = pj(table.entries["noc"], True)
    if section("link", True):
        out["links_per_bit"] = section("link", True)
    leak = {name: (_watts(table.entries[key], digits) if key.startswith("static.")
                   else pj(table.entries[key]))
            for name, key in _LEAK_KEYS.items() if key in table.entries}
    if leak:
        out["leakage"] = leak
    if section("core"):
        out["core"] = section("core")
    return out


def _watts(w: float, digits: int) -> str:
    for factor, unit in ((1.0, "W"), (1e-3, "mW"), (1e-6, "uW"), (1e-9, "nW")):
        if w >= factor:
            return f"{float(f'{w / factor:.{digits}g}'):g} {unit}"
    return f"{float(f'{w / 1e-12:.{digits}g}'):g} pW"


def _capacity(n: float) -> str:
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if n >= factor and n % factor == 0:
            return f"{n / factor:g} {unit}"
    return f"{n:g} B"
