"""Energy = action records x pJ table: pricing, breakdowns per layer/level/operand, summaries.

Inputs are tables: ``Result.actions`` (the action records of the API contract) and
``Result.layers`` (for the run time and the dataflow). Units: energies in picojoules (``pj``),
time in seconds, power in watts; ``TOPS/W`` counts 1 MAC = 2 operations, so
``TOPS/W = 2 MACs / pJ``. How each record is priced (see ``accelsim/report/ENERGY.md``):

============  ===========  =================================================================
level         direction    energy of the record
============  ===========  =================================================================
mac           compute      ``count x (mac.<precision> + leak.pe)``
mac           idle         ``count x leak.pe`` (idle PE-cycles leak; no switching)
rf            read/write   ``bits x rf.read|rf.write`` (pJ per bit)
sram          read/write   ``bits / w x E_sram(capacity, w, direction)`` with ``w`` the SRAM
                           access width (the machine's ``memory.sram.word_bits``; else the
                           record's ``word_bits``)
sram          leak         ``count (cycles) x capacity / KiB x leak.sram_per_kib``
dram          read/write   ``bits x dram.<technology>`` (pJ per bit)
noc           any          ``bits x noc``
link          any          ``bits x link.<technology>``
chip          idle         ``count (cycles) x leak.chip``: the part's measured idle power
                           (``energy.idle_w``) beyond its modelled leakage, per cycle
============  ===========  =================================================================

PE registers: the systolic engine reports array-side SRAM traffic and MACs, not the registers
inside each PE; :func:`pe_register_actions` adds them from the MAC count and the dataflow
(one read per MAC of each operand a PE uses, one write per MAC of each operand it receives from
a neighbour, and the accumulator read and written per MAC). A cube-style matrix unit
(``energy.staging``) adds its operand-buffer traffic (:mod:`accelsim.report.staging`).

Imports: numpy, pandas, units, errors, precision, config.energy, config.energy_ref,
hw.dataflows, report.power, report.staging.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from accelsim.config.energy import EnergyTable, load_energy_table
from accelsim.config.energy_ref import EnergySelection
from accelsim.errors import ConfigError
from accelsim.hw import dataflows
from accelsim.precision import ACCUMULATOR, PRECISION_BYTES
from accelsim.report.power import machine_clock_hz, static_power_w
from accelsim.report.staging import chip_idle_actions, staging_actions
from accelsim.units import BITS_PER_BYTE, FLOP_PER_MAC

ACTION_COLUMNS = ["layer", "level", "operand", "direction", "count", "bits", "precision",
                  "technology", "capacity_bytes", "word_bits"]
"""Columns of an action record (the API contract)."""

LEVELS = ("mac", "vector", "rf", "sram", "noc", "dram", "link", "chip")
"""Levels in the order reports list them (innermost first; ``chip``: the part's idle power
beyond cell leakage, :func:`accelsim.report.staging.chip_idle_actions`)."""


def energy_table_for(machine: Any) -> EnergyTable:
    """The machine's energy table (``machine.energy.table``) with its overrides applied: the one
    default ``run``, ``energy`` and ``compare`` price a machine with."""
    sel = getattr(machine, "energy", None)
    if sel is None:
        return load_energy_table(EnergySelection().table)
    table = load_energy_table(sel.table)
    return table.with_overrides(sel.overrides, file=f"machine '{getattr(machine, 'name', '?')}'")



# ----------------------------------------------------------------------------- pricing


def _unit_pj(table: EnergyTable, level: str, direction: str, precision: str, technology: str,
             capacity: float, word_bits: float, sram_bits: float | None) -> tuple[float, str]:
    """(pJ per unit, unit) for one kind of record; unit is 'count' or 'bits'."""
    leak_pe = table.get("leak.pe", 0.0) or 0.0
    if level == "mac":
        if direction == "idle":
            return leak_pe, "count"
        return table.require(f"mac.{precision}", precision) + leak_pe, "count"
    if level == "vector":
        # one vector-unit operation (an FMA lane of the op's precision) is priced as one MAC
        return table.require(f"mac.{precision}", precision), "count"
    if level == "rf":
        return table.require(f"rf.{'write' if direction == 'write' else 'read'}"), "bits"
    if level == "sram":
        if direction == "leak":
            return (table.get("leak.sram_per_kib", 0.0) or 0.0) * capacity / 1024, "count"
        w = sram_bits or word_bits or 64.0
        return table.sram_access_pj(capacity, w, direction) / w, "bits"
    if level == "chip":  # the part's idle power beyond cell leakage, per cycle
        return table.get("leak.chip", 0.0) or 0.0, "count"
    if level == "dram":
        if not technology:
            raise ConfigError(table.file or table.name, "dram.<technology>", technology,
                              "a DRAM action record names no memory technology")
        return table.require(f"dram.{technology}", technology), "bits"
    if level == "noc":
        return table.require("noc"), "bits"
    if level == "link":
        return table.require(f"link.{technology or 'default'}", technology), "bits"
    raise ConfigError(table.file or table.name, "level", level,
                      f"unknown action level (known: {', '.join(LEVELS)})")


def _record_prices(actions: pd.DataFrame, table: EnergyTable, sram_word_bits: float | None,
                   vector_as_mac: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(pJ per unit, unit, pJ, static pJ) of every record of a non-empty ``actions``: one price
    per kind of record, plain arrays (pricing runs once per op, so no pandas per row)."""
    keys = ["level", "direction", "precision", "technology", "capacity_bytes", "word_bits"]
    level = actions["level"].to_numpy(dtype=object)
    if vector_as_mac:
        level = np.where(level == "vector", "mac", level)
    idx = list(zip(level.tolist(), *(actions[k].tolist() for k in keys[1:]), strict=True))
    prices: dict[tuple, tuple[float, str]] = {}
    for key in idx:
        if key not in prices:
            prices[key] = _unit_pj(table, *key, sram_bits=sram_word_bits)
    pj_per_unit = np.array([prices[k][0] for k in idx], dtype=float)
    unit = np.array([prices[k][1] for k in idx], dtype=object)
    count = actions["count"].to_numpy(dtype=float)
    pj = np.where(unit == "count", count, actions["bits"].to_numpy(dtype=float)) * pj_per_unit
    direction = actions["direction"].to_numpy(dtype=object)
    leak_pe = table.get("leak.pe", 0.0) or 0.0
    static = np.where(np.isin(direction, ("idle", "leak")), pj, 0.0)
    static = np.where((level == "mac") & (direction == "compute"), count * leak_pe, static)
    return pj_per_unit, unit, pj, static


def _check_columns(actions: pd.DataFrame) -> None:
    missing = [c for c in ACTION_COLUMNS if c not in actions.columns]
    if missing:
        raise ValueError(f"action table lacks columns {missing}")


def price_actions(actions: pd.DataFrame, table: EnergyTable, *,
                  sram_word_bits: float | None = None) -> pd.DataFrame:
    """A copy of ``actions`` with ``pj_per_unit``, ``unit``, ``pj`` (energy of the record) and
    ``static_pj`` (its leakage part: idle and leak records whole, ``leak.pe`` of busy MACs).

    ``sram_word_bits``: SRAM access width in bits (the machine's ``memory.sram.word_bits``);
    ``None`` prices each SRAM record at its own ``word_bits``.
    """
    _check_columns(actions)
    if actions.empty:
        return actions.assign(pj_per_unit=pd.Series(dtype=float), unit=pd.Series(dtype=str),
                              pj=pd.Series(dtype=float), static_pj=pd.Series(dtype=float))
    pj_per_unit, unit, pj, static = _record_prices(actions, table, sram_word_bits, False)
    return actions.assign(pj_per_unit=pj_per_unit, unit=unit, pj=pj, static_pj=static)


def actions_pj(actions: pd.DataFrame, table: EnergyTable, *,
               vector_as_mac: bool = False) -> np.ndarray:
    """pJ of each record of ``actions``, as :func:`price_actions` prices it (``pj``), without
    building the priced table; ``vector_as_mac``: a ``vector`` record is priced as one
    ``mac.<precision>`` per count (the GPU/CPU convention)."""
    _check_columns(actions)
    if actions.empty:
        return np.zeros(0)
    return _record_prices(actions, table, None, vector_as_mac)[2]


# ------------------------------------------------------------------ derived action records


def _rec(layer: str, level: str, operand: str, direction: str, count: float, word_bits: float,
         precision: str, capacity: float = 0.0) -> dict[str, Any]:
    return {"layer": layer, "level": level, "operand": operand, "direction": direction,
            "count": float(count), "bits": float(count * word_bits), "precision": precision,
            "technology": "", "capacity_bytes": float(capacity), "word_bits": float(word_bits)}


def pe_register_actions(actions: pd.DataFrame, layers: pd.DataFrame) -> pd.DataFrame:
    """PE register reads/writes implied by the MACs and the dataflow of each layer.

    The counts are the dataflow strategy's
    (:meth:`accelsim.hw.dataflows.base.SystolicDataflow.register_accesses`): per MAC, every
    PE reads the input and weight registers it multiplies and reads and writes its accumulator
    (``output`` in OS, where it stays; ``psum`` in WS/IS, where it moves to the next PE). An
    operand that moves through the array is also written once per MAC into the receiving
    PE's register; a stationary operand is written once per word loaded into the array (the
    SRAM reads of that operand). Priced at the operand width, accumulators at the
    accumulator width.
    """
    macs = actions[(actions["level"] == "mac") & (actions["direction"] == "compute")]
    if macs.empty:
        return pd.DataFrame(columns=ACTION_COLUMNS)
    flows = (dict(zip(layers["layer"], layers["dataflow"], strict=False))
             if "dataflow" in layers else {})
    sram_reads = actions[(actions["level"] == "sram") & (actions["direction"] == "read")]
    loaded_words = sram_reads.groupby(["layer", "operand"], sort=False)["count"].sum().to_dict()
    recs = []
    for row in macs.itertuples(index=False):
        loaded = {op: loaded_words.get((row.layer, op), 0.0) for op in ("input", "weight")}
        recs += [_rec(row.layer, "rf", operand, direction, count, bits, row.precision)
                 for operand, direction, count, bits in register_accesses(
                     row.precision, row.count, loaded, flows.get(row.layer, "os"))]
    return pd.DataFrame(recs, columns=ACTION_COLUMNS)


def register_accesses(precision: str, macs: float, loaded: Mapping[str, float],
                      flow: str) -> list[tuple[str, str, float, float]]:
    """``(operand, direction, count, word_bits)`` of the PE register accesses of ``macs`` MACs
    at ``precision`` under dataflow ``flow`` (see :func:`pe_register_actions`); ``loaded``:
    the words of each operand read from SRAM into the array."""
    w = PRECISION_BYTES[precision] * BITS_PER_BYTE
    acc = PRECISION_BYTES[ACCUMULATOR[precision]] * BITS_PER_BYTE
    strategy = dataflows.get(flow if flow in dataflows.names("systolic") else "os")
    return [(operand, direction, count, w if operand in ("input", "weight") else acc)
            for operand, direction, count in strategy.register_accesses(macs, dict(loaded))]


def sram_leak_actions(layers: pd.DataFrame, capacity_bytes: float, precision: str) -> pd.DataFrame:
    """One ``sram``/``leak`` record per layer: ``count`` = cycles the SRAM was powered."""
    recs = [_rec(r.layer, "sram", "-", "leak", r.total_cycles, 0, precision, capacity_bytes)
            for r in layers[["layer", "total_cycles"]].itertuples(index=False)]
    return pd.DataFrame(recs, columns=ACTION_COLUMNS)


# ---------------------------------------------------------------------- breakdowns


def energy_breakdown(priced: pd.DataFrame, by: tuple[str, ...] = ("layer", "level", "operand"),
                     ) -> pd.DataFrame:
    """Energy (``pj``) summed per ``by`` (default: layer x level x operand), layer order kept."""
    out = priced.groupby(list(by), sort=False, as_index=False)["pj"].sum()
    if "level" in by:
        order = {lv: i for i, lv in enumerate(LEVELS)}
        out["_o"] = out["level"].map(order).fillna(len(LEVELS))
        first = [c for c in by if c == "layer"]
        if first:
            out["_l"] = out["layer"].map({v: i for i, v in enumerate(priced["layer"].unique())})
            out = out.sort_values(["_l", "_o"], kind="stable").drop(columns="_l")
        else:
            out = out.sort_values("_o", kind="stable")
        out = out.drop(columns="_o")
    return out.reset_index(drop=True)


def layer_energy(priced: pd.DataFrame, layers: pd.DataFrame) -> pd.DataFrame:
    """Per layer: ``energy_pj``, ``pj_per_mac`` and pJ per level (``<level>_pj`` columns)."""
    per_level = priced.pivot_table(index="layer", columns="level", values="pj", aggfunc="sum",
                                   fill_value=0.0, sort=False)
    per_level.columns = [f"{c}_pj" for c in per_level.columns]
    total = priced.groupby("layer", sort=False)["pj"].sum().rename("energy_pj")
    out = layers[["layer", "macs"]].set_index("layer").join(total).join(per_level)
    out = out.fillna(0.0)
    out["pj_per_mac"] = out["energy_pj"] / out["macs"].where(out["macs"] > 0)
    return out.reset_index().drop(columns="macs")


def energy_summary(priced: pd.DataFrame, *, macs: float, time_s: float) -> dict[str, Any]:
    """Totals: pJ, pJ/MAC, TOPS/W, average W (dynamic + static), static W, and pJ per level
    and per operand."""
    total = float(priced["pj"].sum())
    static = float(priced["static_pj"].sum()) if "static_pj" in priced else 0.0
    by_level = priced.groupby("level", sort=False)["pj"].sum()
    by_operand = priced.groupby("operand", sort=False)["pj"].sum()
    return {
        "total_pj": total,
        "total_j": total * 1e-12,
        "macs": float(macs),
        "pj_per_mac": total / macs if macs else float("nan"),
        "tops_per_w": FLOP_PER_MAC * macs / total if total else float("nan"),
        "time_s": float(time_s),
        "avg_power_w": total * 1e-12 / time_s if time_s else float("nan"),
        "static_pj": static,
        "static_power_w": static * 1e-12 / time_s if time_s else float("nan"),
        "by_level_pj": {lv: float(by_level[lv]) for lv in LEVELS if lv in by_level},
        "by_operand_pj": {k: float(v) for k, v in by_operand.items()},
    }


def conservation(actions: pd.DataFrame) -> pd.DataFrame:
    """Per layer and operand: bits leaving DRAM vs arriving in SRAM, and back (should be equal).

    Columns: ``dram_read_bits``, ``sram_fill_bits`` (SRAM writes of input/weight/psum) and
    ``dram_write_bits``, ``sram_drain_bits`` (SRAM reads of outputs drained to DRAM).
    """
    def bits(level: str, direction: str) -> pd.Series:
        sel = actions[(actions["level"] == level) & (actions["direction"] == direction)]
        return sel.groupby(["layer", "operand"])["bits"].sum()

    out = pd.DataFrame({"dram_read_bits": bits("dram", "read"),
                        "sram_fill_bits": bits("sram", "write"),
                        "dram_write_bits": bits("dram", "write"),
                        "sram_drain_bits": bits("sram", "read")}).fillna(0.0)
    return out.reset_index()


# ------------------------------------------------------------------------- the report


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergyReport:
    """Energy of one run: priced records, per-layer table and summary (pJ, W, TOPS/W)."""

    table: EnergyTable
    priced: pd.DataFrame
    layers: pd.DataFrame
    summary: Mapping[str, Any] = field(default_factory=dict)

    @property
    def total_pj(self) -> float:
        """Energy of the run, static (leakage) included, pJ."""
        return float(self.summary["total_pj"])

    @property
    def pj_per_mac(self) -> float:
        """``total_pj`` per multiply-accumulate, pJ/MAC (NaN without MACs)."""
        return float(self.summary["pj_per_mac"])

    @property
    def tops_per_w(self) -> float:
        """Operations per joule in tera-operations per second per watt (1 MAC = 2 ops)."""
        return float(self.summary["tops_per_w"])

    @property
    def average_power_w(self) -> float:
        """``total_pj`` over the run time, W (dynamic energy / time + static power)."""
        return float(self.summary["avg_power_w"])

    @property
    def static_power_w(self) -> float:
        """Leakage part of :attr:`average_power_w`, W (0 for a table without leakage)."""
        return float(self.summary.get("static_power_w", 0.0))

    def __repr__(self) -> str:
        return (f"EnergyReport(table={self.table.name!r}, total_pj={self.total_pj:.4g}, "
                f"pj_per_mac={self.pj_per_mac:.3g}, tops_per_w={self.tops_per_w:.3g}, "
                f"average_power_w={self.average_power_w:.3g})")

    def breakdown(self, by: tuple[str, ...] = ("layer", "level", "operand")) -> pd.DataFrame:
        """See :func:`energy_breakdown`."""
        return energy_breakdown(self.priced, by)

    def to_dict(self) -> dict[str, Any]:
        """The ``energy`` key of ``accelsim run --json``."""
        lv_op = energy_breakdown(self.priced, ("level", "operand"))
        return {"table": self.table.name, "node_nm": self.table.node_nm,
                "voltage_v": self.table.voltage_v, **dict(self.summary),
                "by_level_operand_pj": lv_op.to_dict(orient="records"),
                "layers": self.layers[["layer", "energy_pj", "pj_per_mac"]].to_dict(
                    orient="records")}

    def summary_line(self) -> str:
        """One line for the terminal."""
        s = self.summary
        return (f"energy: {s['total_pj'] * 1e-6:.4g} uJ, {s['pj_per_mac']:.3g} pJ/MAC, "
                f"{s['tops_per_w']:.3g} TOPS/W, {s['avg_power_w']:.3g} W average "
                f"(table {self.table.name}, {self.table.node_nm:g} nm)")


def compute_energy(actions: pd.DataFrame, layers: pd.DataFrame, machine: Any,
                   table: EnergyTable | None = None, *, registers: bool = True,
                   sram_leakage: bool = True) -> EnergyReport:
    """Price a run's actions (plus PE registers and SRAM leakage) with the machine's table."""
    table = table or energy_table_for(machine)
    clock = machine_clock_hz(machine)
    if clock:  # leakage given in W is priced per cycle at this machine's clock
        table = table.at_clock(clock)
    parts = [actions]
    if registers and not (actions["level"] == "rf").any():
        parts.append(pe_register_actions(actions, layers))
    sel = getattr(machine, "energy", None)
    if getattr(sel, "staging", None) is not None:
        parts.append(staging_actions(actions, sel.staging))
    sram = getattr(getattr(machine, "memory", None), "sram", None)
    prec = str(actions["precision"].iloc[0]) if len(actions) else ""
    if sram_leakage and sram is not None and table.get("leak.sram_per_kib") and len(layers):
        parts.append(sram_leak_actions(layers, sram.capacity_bytes, prec))
    idle_w = static_power_w(machine, table).get("idle", 0.0) if clock else 0.0
    if idle_w and len(layers):  # the part's measured idle power beyond cell leakage
        table = dataclasses.replace(table, entries=types.MappingProxyType(
            {**table.entries, "leak.chip": idle_w / clock * 1e12}))
        parts.append(chip_idle_actions(layers, prec))
    records = (pd.concat([p for p in parts if len(p)], ignore_index=True)
               if len(actions) else actions)
    priced = price_actions(records, table,
                           sram_word_bits=getattr(sram, "word_bits", None))
    per_layer = layer_energy(priced, layers)
    summary = energy_summary(priced, macs=float(layers["macs"].sum()),
                             time_s=float(layers["time_s"].sum()))
    return EnergyReport(table=table, priced=priced, layers=per_layer, summary=summary)


def attach_energy(result: Any, table: EnergyTable | None = None) -> EnergyReport:
    """Price ``result`` and attach it: ``result.energy`` and per-layer columns in ``result.layers``.

    Adds ``energy_pj`` and ``pj_per_mac`` to ``result.layers`` (so CSV exports carry them).
    """
    report = compute_energy(result.actions, result.layers, result.machine, table)
    cols = report.layers.set_index("layer")
    for c in ("energy_pj", "pj_per_mac"):
        result.layers[c] = result.layers["layer"].map(cols[c]).astype(float)
    result.energy = report
    return report


def dataflow_comparison(runs: Mapping[str, tuple[pd.DataFrame, EnergyReport]]) -> pd.DataFrame:
    """One row per dataflow: cycles, time, energy, pJ/MAC, TOPS/W, W, pJ per level and operand.

    ``runs`` maps a dataflow name to ``(layers table, its EnergyReport)``. Level columns are
    ``<level>_pj`` (``mac_pj``, ``rf_pj``, ``sram_pj``, ``dram_pj``...), operand columns
    ``<operand>_pj`` (``input_pj``, ``weight_pj``, ``output_pj``, ``psum_pj``).
    """
    rows = []
    for flow, (layers, rep) in runs.items():
        s = rep.summary
        row: dict[str, Any] = {"dataflow": flow, "cycles": int(layers["total_cycles"].sum()),
                               "time_s": s["time_s"], "energy_pj": s["total_pj"],
                               "pj_per_mac": s["pj_per_mac"], "tops_per_w": s["tops_per_w"],
                               "avg_power_w": s["avg_power_w"]}
        for lv in LEVELS:
            if lv in s["by_level_pj"]:
                row[f"{lv}_pj"] = s["by_level_pj"][lv]
        for op in ("input", "weight", "output", "psum"):
            row[f"{op}_pj"] = s["by_operand_pj"].get(op, 0.0)
        rows.append(row)
    return pd.DataFrame(rows).fillna(0.0)
