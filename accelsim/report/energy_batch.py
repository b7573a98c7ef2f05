"""Energy of many runs at once: each run's action records summed per pricing key, then priced
for all runs together as numpy arrays (amount x pJ per unit, summed per run and per level).

The same records as :func:`accelsim.report.energy.compute_energy` prices (the array's and
vector unit's records of :func:`accelsim.report.tables.action_records`, the PE registers of
:func:`accelsim.report.energy.register_accesses`, a cube's operand staging of
:func:`accelsim.report.staging.staging_accesses`, SRAM leakage and the chip's idle power per
cycle) and
the same unit prices (:func:`accelsim.report.energy._unit_pj`, once per distinct key of the
batch), so the same energies; only the order of the additions differs (records are summed
per key first), which moves results by float rounding (a test holds them within 1e-12).
Sweeps use it: pricing a 50-layer workload through pandas costs ~30 ms a run, this ~0.3 ms.

Units: pJ in ``*_pj``, joules in ``*_j``, seconds, W; TOPS/W counts 1 MAC = 2 operations.

Imports: numpy, units, report.energy, report.power, report.staging, report.tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelsim.report.energy import LEVELS, _unit_pj, energy_table_for, register_accesses
from accelsim.report.power import machine_clock_hz, static_power_w
from accelsim.report.staging import STAGING_TAG, staging_accesses
from accelsim.report.tables import action_records, array_layer_records, record_context
from accelsim.units import FLOP_PER_MAC

Key = tuple[str, str, str, str, str, float, float]
"""A pricing key: ``(level, operand, direction, precision, technology, capacity_bytes,
word_bits)``."""

_LEVEL_INDEX = {lv: i for i, lv in enumerate(LEVELS)}

SUMMARY_METRICS = {"total_j": "energy_j", "pj_per_mac": "pj_per_mac", "tops_per_w": "tops_per_w",
                   "avg_power_w": "avg_power_w"}
"""Energy summary key (:func:`accelsim.report.energy.energy_summary`) -> metric name."""


def summary_metrics(summary: Mapping[str, Any]) -> dict[str, float]:
    """Scalar energy metrics of an energy summary (or ``EnergyReport.to_dict()``): ``energy_j``,
    ``pj_per_mac``, ``tops_per_w``, ``avg_power_w`` and ``energy_<level>_j`` per level present
    (joules): what :func:`price_batch` gives, for one run priced through pandas."""
    out = {name: float(summary[key]) for key, name in SUMMARY_METRICS.items()
           if isinstance(summary.get(key), (int, float))}
    for level, pj in (summary.get("by_level_pj") or {}).items():
        if isinstance(pj, (int, float)):
            out[f"energy_{level}_j"] = float(pj) * 1e-12
    return out


@dataclass(frozen=True, slots=True)
class ActionTotals:
    """One run's action records summed per pricing key (``key -> [count, bits]``), and the
    run's MACs, seconds and cycles (what its energy summary and SRAM leakage need)."""

    amounts: Mapping[Key, list[float]]
    macs: float
    time_s: float
    cycles: float
    precision: str


def action_totals(machine: Any, runs: Sequence[Any], rows: Sequence[Mapping[str, Any]]
                  ) -> ActionTotals:
    """The action totals of a systolic run: ``runs`` (its :class:`LayerRun` list) and ``rows``
    (their :func:`~accelsim.report.tables.layer_row` dicts, for MACs, time and dataflow)."""
    return _totals(machine, action_records(machine, runs), rows)


LAYER_ACTION_COLUMNS = ("macs", "total_cycles", "time_s", "row_folds", "sram_ifmap_reads",
                        "sram_filter_reads", "sram_ofmap_writes", "sram_ofmap_reads",
                        "dram_ifmap_read_bytes", "dram_filter_read_bytes",
                        "dram_psum_read_bytes", "dram_ofmap_write_bytes",
                        "dram_psum_write_bytes")
"""What :func:`layer_action_totals` reads of a layer (a batch evaluator's columns)."""

_MOVED = (("input", "read", "dram_ifmap_read_bytes"), ("weight", "read", "dram_filter_read_bytes"),
          ("psum", "read", "dram_psum_read_bytes"), ("output", "write", "dram_ofmap_write_bytes"),
          ("psum", "write", "dram_psum_write_bytes"))


def layer_action_totals(machine: Any, name: str, dataflow: str,
                        layer: Mapping[str, float]) -> ActionTotals:
    """The action totals of a one-layer run (a GEMM/conv on the array) from its figures
    (:data:`LAYER_ACTION_COLUMNS`: MACs, cycles, seconds, row folds, array-side SRAM words,
    DRAM bytes per operand and direction, as a batch evaluator gives them): the records
    :func:`~accelsim.report.tables.action_records` makes of that layer, summed as
    :func:`action_totals` sums them."""
    recs: list[tuple] = []
    array_layer_records(record_context(machine), recs.append, name, layer["macs"],
                        layer["total_cycles"], layer, int(layer["row_folds"]), dataflow,
                        {(op, d): layer[col] for op, d, col in _MOVED})
    return _totals(machine, recs, [{"layer": name, "dataflow": dataflow, **layer}])


def _totals(machine: Any, records: Sequence[tuple], rows: Sequence[Mapping[str, Any]]
            ) -> ActionTotals:
    """Action ``records`` summed per pricing key, with the PE registers and operand staging
    of each layer's MACs (``rows``: layer, dataflow, macs, time_s, total_cycles)."""
    amounts: dict[Key, list[float]] = {}
    layer_macs: dict[str, float] = {}
    loaded: dict[str, dict[str, float]] = {}
    prec = machine.array.precision
    for layer, level, operand, direction, count, bits, p, tech, cap, wb in records:
        if count > 0 or direction == "compute":
            key = (level, operand, direction, p, tech, cap, wb)
            a = amounts.get(key)
            if a is None:
                amounts[key] = [count, bits]
            else:
                a[0] += count
                a[1] += bits
        if level == "mac" and direction == "compute":
            layer_macs[layer] = layer_macs.get(layer, 0.0) + count
        elif level == "sram" and direction == "read" and operand in ("input", "weight"):
            d = loaded.setdefault(layer, {})
            d[operand] = d.get(operand, 0.0) + count
    flows = {r["layer"]: r["dataflow"] for r in rows}
    staging = getattr(getattr(machine, "energy", None), "staging", None)
    for layer, macs in layer_macs.items():
        got = loaded.get(layer, {})
        for operand, direction, count, wb in register_accesses(
                prec, macs, {op: got.get(op, 0.0) for op in ("input", "weight")},
                flows.get(layer, "os")):
            a = amounts.setdefault(("rf", operand, direction, prec, "", 0.0, float(wb)), [0.0, 0.0])
            a[0] += float(count)
            a[1] += float(count * wb)
        if staging is not None:  # a cube's operand and accumulator buffers (report.staging)
            for operand, direction, count, bits, cap, wb in staging_accesses(macs, prec, staging):
                key = ("sram", operand, direction, prec, STAGING_TAG, float(cap), float(wb))
                a = amounts.setdefault(key, [0.0, 0.0])
                a[0] += float(count)
                a[1] += float(bits)
    return ActionTotals(amounts=amounts, macs=float(sum(r["macs"] for r in rows)),
                        time_s=float(sum(r["time_s"] for r in rows)),
                        cycles=float(sum(r["total_cycles"] for r in rows)), precision=prec)


def price_batch(runs: Sequence[tuple[Any, ActionTotals]]) -> dict[str, np.ndarray]:
    """Energy metrics of many ``(machine, action totals)`` runs, each priced with its machine's
    table (:func:`~accelsim.report.energy.energy_table_for`, leakage per cycle at its clock):
    arrays over the runs of ``energy_j``, ``pj_per_mac``, ``tops_per_w``, ``avg_power_w``
    and ``energy_<level>_j`` (NaN where a run has no record of that level), with
    the values of ``compute_energy(...).summary`` run by run."""
    n = len(runs)
    tables: dict[tuple, tuple[Any, float]] = {}
    columns: dict[tuple, int] = {}
    col_price: list[float] = []
    col_count: list[bool] = []
    col_level: list[int] = []
    idx: list[int] = []
    col: list[int] = []
    count: list[float] = []
    bits: list[float] = []

    def column(tkey: tuple, table: Any, sram_bits: float | None, key: Key, chip_pj: float) -> int:
        j = columns.get((tkey, key, chip_pj))
        if j is None:
            level, _, direction, prec, tech, cap, wb = key
            price, unit = ((chip_pj, "count") if level == "chip" else
                           _unit_pj(table, level, direction, prec, tech, cap, wb, sram_bits))
            j = columns[(tkey, key, chip_pj)] = len(col_price)
            col_price.append(price)
            col_count.append(unit == "count")
            col_level.append(_LEVEL_INDEX.get(level, len(LEVELS)))
        return j

    for i, (machine, at) in enumerate(runs):
        sram = getattr(getattr(machine, "memory", None), "sram", None)
        sram_bits = getattr(sram, "word_bits", None)
        clock = machine_clock_hz(machine)
        tkey = (id(getattr(machine, "energy", None)), clock, sram_bits)
        got = tables.get(tkey)
        if got is None:
            table = energy_table_for(machine)
            if clock:
                table = table.at_clock(clock)
            got = tables[tkey] = (table, table.get("leak.sram_per_kib") or 0.0)
        table, leak_sram = got
        items = list(at.amounts.items())
        if sram is not None and leak_sram and at.amounts:
            items.append((("sram", "-", "leak", at.precision, "", float(sram.capacity_bytes),
                           0.0), [at.cycles, 0.0]))
        # the part's measured idle power beyond cell leakage, per cycle (report.staging)
        idle_w = static_power_w(machine, table).get("idle", 0.0) if clock else 0.0
        chip_pj = idle_w / clock * 1e12 if idle_w else 0.0
        if idle_w and at.amounts:
            items.append((("chip", "-", "idle", at.precision, "", 0.0, 0.0), [at.cycles, 0.0]))
        for key, (c, b) in items:
            idx.append(i)
            col.append(column(tkey, table, sram_bits, key, chip_pj))
            count.append(c)
            bits.append(b)
    ix = np.asarray(idx, np.int64)
    cj = np.asarray(col, np.int64)
    cnt = np.asarray(count, np.float64)
    amount = np.where(np.asarray(col_count, bool)[cj], cnt, np.asarray(bits, np.float64))
    pj = amount * np.asarray(col_price, np.float64)[cj]
    nl = len(LEVELS) + 1
    cell = ix * nl + np.asarray(col_level, np.int64)[cj]
    by_level = np.bincount(cell, pj, minlength=n * nl).reshape(n, nl)
    present = np.bincount(cell, minlength=n * nl).reshape(n, nl) > 0
    total = np.bincount(ix, pj, minlength=n)
    macs = np.array([at.macs for _, at in runs], np.float64)
    time_s = np.array([at.time_s for _, at in runs], np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {"energy_j": total * 1e-12,
               "pj_per_mac": np.where(macs != 0, total / macs, np.nan),
               "tops_per_w": np.where(total != 0, FLOP_PER_MAC * macs / total, np.nan),
               "avg_power_w": np.where(time_s != 0, total * 1e-12 / time_s, np.nan)}
    for lv, j in _LEVEL_INDEX.items():
        if present[:, j].any():
            out[f"energy_{lv}_j"] = np.where(present[:, j], by_level[:, j] * 1e-12, np.nan)
    return out
