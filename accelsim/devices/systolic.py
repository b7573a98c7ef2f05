"""The systolic device (``kind: systolic``: TPUs, Eyeriss, the NPU, SCALE-Sim's default): GEMMs
and convolutions mapped onto the array by the dataflow's strategy (:mod:`accelsim.hw.dataflows`:
os/ws/is fold streams through :mod:`accelsim.mapping.systolic`, the spatial rs/nlr through
:mod:`accelsim.mapping.row_stationary`), everything else onto the vector unit
(:mod:`accelsim.mapping.vector`), each layer scheduled by the engine (discrete events or the
equal closed form) and tabulated by :mod:`accelsim.report.tables` /
:mod:`accelsim.report.rs_tables`.

Roofs: peak = PEs x clock x 2 FLOP/MAC; ``sram`` = the bandwidth at which the scratchpads
feed the array edges, one operand word per row and per column per cycle per array
(``count x (rows + cols) x word_bytes x clock``); ``dram`` = the configured peak DRAM/HBM
bandwidth.

Whole workloads: :meth:`SystolicDevice.run_model` (a :class:`~accelsim.devices.results.Result`);
``--dataflow``, ``--sparsity``, ``--trace`` and ``--report`` of ``accelsim run`` apply.

Imports: units, errors, limits, analysis.roofline, config.systolic, config.systolic_machine,
engine.analytic, engine.systolic_run, hw.dataflows, hw.systolic, mapping.*, report.*,
workload.readers, devices.base, devices.results.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import pandas as pd

from accelsim.analysis.roofline import MachineRoofs, Roof, level_bytes
from accelsim.config.systolic import ALL_DATAFLOWS, DATAFLOWS
from accelsim.config.systolic_machine import SystolicMachine
from accelsim.devices.base import DeviceBase, OpCost, RunOptions, records_energy_j
from accelsim.devices.results import Result
from accelsim.engine.systolic_run import MODES, LayerRun, resolve_mode, run_layer, run_layers
from accelsim.errors import AccelsimError, ConfigError, UnsupportedError
from accelsim.hw import dataflows
from accelsim.hw.systolic import geometry
from accelsim.limits import MAX_LAYER_FOLDS, check_count
from accelsim.mapping.cores import (
    call_cycles,
    chip_row,
    core_piece,
    core_view,
    is_chip,
    sustained_plan,
)
from accelsim.mapping.expand import expand_op
from accelsim.mapping.row_stationary import RsPlan, plan_rs, zero_fractions
from accelsim.mapping.systolic import LayerPlan, plan_layer
from accelsim.mapping.vector import VectorPlan, plan_vector
from accelsim.report.rs_tables import rs_actions, rs_layer_row
from accelsim.report.tables import actions_table, layer_row, totals_of
from accelsim.units import FLOP_PER_MAC
from accelsim.workload.readers import load_wl


def check_folds(machine: SystolicMachine, op: Any, dataflow: str, source: str) -> None:
    """Refuse a layer of more than MAX_LAYER_FOLDS folds (over all its repeats: batch entries
    with their own weights, conv groups) before anything is allocated."""
    gemm = op.lower()
    g = geometry(gemm.m, gemm.n, gemm.k, machine.array.rows, machine.array.cols, dataflow)
    check_count(g.folds * gemm.repeat, MAX_LAYER_FOLDS, file=source,
                field=getattr(op, "name", "layer"), what="folds",
                hint=f"the layer is too large for a {machine.array.rows}x"
                f"{machine.array.cols} array")


def op_key(piece: Any) -> Any:
    """A key equal for ops that differ only in name (None if the op is not a hashable
    dataclass with a name and value equality): what lets a model's repeated blocks be costed
    once. The op's type and the values of its compared fields other than ``name``: what
    ``dataclasses.replace(piece, name="")`` compares, without building (and validating) it."""
    names = _KEY_FIELDS.get(type(piece))
    if names is None:
        if (not dataclasses.is_dataclass(piece) or not hasattr(piece, "name")
                or not type(piece).__dataclass_params__.eq):
            return None
        names = _KEY_FIELDS[type(piece)] = tuple(
            f.name for f in dataclasses.fields(piece) if f.compare and f.name != "name")
    key = (type(piece), tuple([getattr(piece, n) for n in names]))
    try:
        hash(key)
    except TypeError:
        return None
    return key


_KEY_FIELDS: dict[type, tuple[str, ...]] = {}
"""Op type -> the fields :func:`op_key` compares."""


def _plan(machine: SystolicMachine, piece: Any, dataflow: str, loop_order: str) -> Any:
    """The layer plan (GEMM/conv) or vector plan of one primitive op."""
    if hasattr(piece, "lower"):
        return plan_layer(machine, piece, dataflow, loop_order)
    if hasattr(piece, "tensor_elements"):
        return plan_vector(machine, piece)
    raise UnsupportedError(f"{getattr(piece, 'name', piece)}: operator kind "
                           f"'{getattr(piece, 'kind', type(piece).__name__)}' has no "
                           "systolic model")


def plan_ops(machine: SystolicMachine, ops: Sequence[object], dataflow: str,
             loop_order: str = "auto", source: str = "") -> list[LayerPlan | VectorPlan]:
    """Every primitive op of ``ops`` mapped onto ``machine`` (array or vector unit), in order;
    ops that differ only in their name (the blocks of a Transformer) are mapped once and the
    plan renamed. Bad input, or a layer too large to replay, fails before any work (errors
    name ``source``)."""
    plans: list[Any] = []
    mapped: dict[Any, Any] = {}
    for op in ops:
        for piece in expand_op(op):
            key = op_key(piece)
            plan = mapped.get(key) if key is not None else None
            if plan is None:
                if hasattr(piece, "lower"):
                    check_folds(machine, piece, dataflow, source)
                plan = _plan(machine, piece, dataflow, loop_order)
                if key is not None:
                    mapped[key] = plan
            elif plan.name != getattr(piece, "name", plan.name):
                plan = dataclasses.replace(plan, name=piece.name)
            plans.append(plan)
    return plans


def run_ops(machine: SystolicMachine, ops: Sequence[object], *, dataflow: str | None = None,
            mode: str = "auto", loop_order: str = "auto", source: str = "",
            sparsity: Mapping[str, float] | float | None = None,
            progress: Callable[[int, int, str], None] | None = None
            ) -> tuple[str, pd.DataFrame, pd.DataFrame, list[LayerRun]]:
    """Map and schedule ``ops`` on ``machine``: ``(dataflow, layers, actions, runs)``.

    ``mode``: ``auto`` (the exact recurrence, proven equal to the event replay), ``event`` or
    ``analytic`` (:mod:`accelsim.engine.systolic_run`); ``layers["mode"]`` names the engine.
    ``dataflow``: a registered dataflow (:mod:`accelsim.hw.dataflows`; default the machine's):
    os, ws, is run as fold streams on the systolic engine; the spatial ones (rs, nlr) map
    each layer with their strategy (:func:`_run_spatial`). ``layers``: one row per layer;
    ``actions``: the action records. ``sparsity``: zero fraction of each layer's input
    activations (spatial dataflows). ``progress`` is called as ``progress(done, total,
    layer_name)`` after each layer.
    """
    if mode not in MODES:
        raise ConfigError(None, "mode", mode, f"must be one of {', '.join(MODES)}")
    df = dataflow or machine.array.dataflow
    if df not in ALL_DATAFLOWS:
        raise ConfigError(None, "dataflow", df, f"must be one of {', '.join(ALL_DATAFLOWS)}")
    engine = resolve_mode(mode)
    if df in dataflows.names("spatial"):
        return _run_spatial(machine, ops, df, engine, sparsity, progress)
    if is_chip(machine):
        return _run_chip(machine, ops, df, engine, loop_order, source, progress)
    plans = plan_ops(machine, ops, df, loop_order, source)
    runs = run_layers(machine, plans, engine, progress)
    layers = pd.DataFrame([layer_row(machine, run) for run in runs])
    layers["mode"] = engine  # which engine computed each row
    return df, layers, actions_table(machine, runs), runs


def _run_chip(machine: SystolicMachine, ops: Sequence[object], df: str, engine: str,
              loop_order: str, source: str, progress: Callable[[int, int, str], None] | None
              ) -> tuple[str, pd.DataFrame, pd.DataFrame, list[LayerRun]]:
    """A chip of several cores, or with per-call costs (:mod:`accelsim.mapping.cores`): each
    GEMM/conv's busiest-core slice on one core's view, its row made the chip's (counts over
    the cores, the call's cycles added) and its action counts times the cores; a vector op
    runs on one core's vector unit as on a one-core machine."""
    core = core_view(machine)
    pieces = [p for op in ops for p in expand_op(op)]
    sliced = [core_piece(machine, p) for p in pieces]
    plans = [sustained_plan(machine, p) for p in plan_ops(core, sliced, df, loop_order, source)]
    runs = run_layers(core, plans, engine, progress)
    rows = []
    for piece, part, run in zip(pieces, sliced, runs, strict=True):
        row = layer_row(core, run)
        if hasattr(piece, "lower"):  # array ops: cut over the cores; vector ops: one core
            row = chip_row(machine, row, call_cycles(machine, part),
                           int(getattr(piece, "macs", row["macs"])),
                           float(getattr(piece, "flops", row["flops"])))
        rows.append(row)
    layers = pd.DataFrame(rows)
    layers["mode"] = engine
    actions = actions_table(core, runs)
    split = actions["layer"].isin([p.name for p in pieces if hasattr(p, "lower")]) \
        if not actions.empty else None
    if split is not None:
        for c in ("count", "bits"):
            actions.loc[split, c] = actions.loc[split, c] * machine.compute.cores
    return df, layers, actions, runs


def _run_spatial(machine: SystolicMachine, ops: Sequence[object], df: str, mode: str,
                 sparsity: Mapping[str, float] | float | None,
                 progress: Callable[[int, int, str], None] | None
                 ) -> tuple[str, pd.DataFrame, pd.DataFrame, list[LayerRun]]:
    """The spatial path: Conv2d/GEMM layers mapped by the ``rs`` or ``nlr`` strategy
    (:mod:`accelsim.mapping.row_stationary`), other ops on the vector unit."""
    pieces = [p for op in ops for p in expand_op(op)]
    array_ops = [p for p in pieces if hasattr(p, "lower")]
    zeros = dict(zip([p.name for p in array_ops],
                     zero_fractions([p.name for p in array_ops], sparsity), strict=True))
    plans: list[Any] = []
    for i, piece in enumerate(pieces):  # map everything first: bad input fails before any work
        if hasattr(piece, "lower"):
            zin, zout = zeros[piece.name]
            plans.append(plan_rs(machine, piece, ifmap_zero_fraction=zin,
                                 ofmap_zero_fraction=zout, first_layer=i == 0, dataflow=df))
        elif hasattr(piece, "tensor_elements"):
            plans.append(plan_vector(machine, piece))
        else:
            raise UnsupportedError(f"{getattr(piece, 'name', piece)}: operator kind "
                                   f"'{getattr(piece, 'kind', type(piece).__name__)}' has no "
                                   "row-stationary model")
    runs, rows, recs, others = [], [], [], []
    for i, plan in enumerate(plans):
        run = run_layer(machine, plan, mode)
        runs.append(run)
        if isinstance(plan, RsPlan):
            row = rs_layer_row(machine, run)
            recs.extend(rs_actions(machine, run, row["total_cycles"]))
        else:
            row = layer_row(machine, run)
            others.append(run)
        rows.append(row)
        if progress is not None:
            progress(i + 1, len(plans), plan.name)
    layers = pd.DataFrame(rows)
    layers["mode"] = mode  # which engine computed each row
    actions = pd.concat([pd.DataFrame(recs), actions_table(machine, others)], ignore_index=True)
    return df, layers, actions, runs


class SystolicDevice(DeviceBase):
    """A systolic-array machine (:class:`~accelsim.config.systolic_machine.SystolicMachine`)."""

    kind: ClassVar[str] = "systolic"
    noun: ClassVar[str] = "systolic machines"
    levels: ClassVar[tuple[str, ...]] = ("sram", "dram")
    run_flags: ClassVar[frozenset[str]] = frozenset({"dataflow", "loop_order", "sparsity",
                                                     "trace", "report"})

    def plan(self, op: object, *, precision: str | None = None) -> list[LayerPlan | VectorPlan]:
        """The op's layer plans at the machine's dataflow (the array has one precision)."""
        return plan_ops(self.machine, [op], self.machine.array.dataflow)

    def run_model(self, workload: Any, options: RunOptions | None = None, *,
                  progress: Callable[[int, int, str], None] | None = None) -> Result:
        """Map and schedule the whole workload (:func:`run_ops` with ``options``' mode,
        dataflow, loop order and sparsity); its actions priced with the machine's energy table
        when ``options.energy``."""
        opts = options or RunOptions()
        wl = load_wl(workload)
        df, layers, actions, runs = run_ops(self.machine, wl.ops, dataflow=opts.dataflow,
                                            mode=opts.mode, loop_order=opts.loop_order or "auto",
                                            source=wl.source or wl.name, sparsity=opts.sparsity,
                                            progress=progress)
        result = Result(self.machine, wl, df, resolve_mode(opts.mode), layers, actions, runs)
        if opts.energy:
            from accelsim.report.energy import attach_energy

            attach_energy(result)
        return result

    def cost(self, op: object, *, precision: str | None = None) -> OpCost:
        """The analytic schedule of ``op``; ``precision`` is ignored (the array's own runs).

        The bound is ``dram`` when the longest layer's DRAM transfer at the sustained
        bandwidth exceeds its compute cycles, else the unit it ran on (``array``/``vector``).
        """
        m = self.machine
        _, layers, acts, _ = run_ops(m, [op], mode="analytic")
        lb = level_bytes(layers, m).sum()
        longest = layers.loc[layers["time_s"].idxmax()]
        dram_s = float(longest["dram_bytes"]) / m.memory.dram.sustained_bytes_per_s
        comp_s = float(longest["compute_cycles"]) / m.clock_hz
        unit = "vector" if longest["dataflow"] == "vector" else "array"
        return OpCost(name=getattr(op, "name", "op"), op=getattr(op, "kind", ""),
                      precision=m.array.precision, time_s=float(layers["time_s"].sum()),
                      flops=float(getattr(op, "flops", layers["flops"].sum())),
                      level_bytes={c.removeprefix("bytes_"): float(v) for c, v in lb.items()},
                      offchip_bytes=float(layers["dram_bytes"].sum()),
                      peak_flops_per_s=FLOP_PER_MAC * m.peak_macs_per_s,
                      offchip_bytes_per_s=m.memory.dram.bandwidth_bytes_per_s,
                      bound="dram" if dram_s > comp_s else unit, actions=acts, detail=layers)

    def energy_j(self, cost: OpCost, table: Any = None) -> float:
        """Array actions through :func:`accelsim.report.energy.compute_energy` (registers and
        leakage, priced per cycle, included); vector-unit records at one ``mac.<precision>``
        per op."""
        from accelsim.report.energy import compute_energy, energy_table_for

        tab = table or energy_table_for(self.machine)
        acts = cost.actions
        is_vec = acts["level"] == "vector"
        energy = 0.0
        if (~is_vec).any():
            energy += compute_energy(acts[~is_vec].reset_index(drop=True), cost.detail,
                                     self.machine, tab).summary["total_pj"] * 1e-12
        return energy + records_energy_j(acts[is_vec], tab)

    def op_times(self, ops: Sequence[object]) -> list[float]:
        """One analytic run for the whole list (layer rows map back to ops through the
        expansion); per op, ``inf`` where it cannot run, if the whole list fails."""
        try:
            _, layers, _, _ = run_ops(self.machine, ops, mode="analytic")
            t = layers["time_s"].to_numpy()
            out, i = [], 0
            for op in ops:
                k = len(expand_op(op))
                out.append(float(t[i:i + k].sum()))
                i += k
            if i == len(t):
                return out
        except AccelsimError:
            pass
        times = []
        for op in ops:
            try:
                _, layers, _, _ = run_ops(self.machine, [op], mode="analytic")
                times.append(float(layers["time_s"].sum()))
            except AccelsimError:
                times.append(math.inf)
        return times

    def layer_table(self, ops: Sequence[object], *, precision: str | None = None,
                    dataflow: str | None = None) -> tuple[pd.DataFrame, str]:
        """The analytic per-layer table of the whole workload at ``dataflow``; ``precision``,
        if given, must be the array's own (its roofs are at that precision)."""
        own = self.machine.array.precision
        if precision and precision != own:
            raise ConfigError(None, "precision", precision,
                              f"a systolic machine's roofs are at its own precision ({own})")
        _, layers, _, _ = run_ops(self.machine, ops, dataflow=dataflow, mode="analytic")
        return layers, own

    def roofs(self, precision: str | None = None) -> MachineRoofs:
        """Roofs of the array (``precision`` is the array's own); see the module docstring."""
        m = self.machine
        arr = m.compute.array
        peak = m.peak_macs_per_s * FLOP_PER_MAC  # every core's arrays
        edge = arr.count * m.compute.cores * (arr.rows + arr.cols) * arr.operand_bytes * m.clock_hz
        return MachineRoofs(name=m.name, peak_flops_per_s=peak, precision=arr.precision,
                            roofs=(Roof(level="sram", bandwidth_bytes_per_s=edge),
                                   Roof(level="dram", bandwidth_bytes_per_s=m.memory.dram
                                        .bandwidth_bytes_per_s)))

    def prepare_workload(self, workload: Any) -> Any:
        """The workload as :meth:`run_model` reads it: :func:`~accelsim.workload.readers.load_wl`
        (a flat op list; ``run_model`` of it is ``run_model`` of the name)."""
        return load_wl(workload)

    def workload_totals(self, workload: Any, options: RunOptions | None = None, *,
                        dataflow: str | None = None, mode: str = "auto",
                        energy: bool = False) -> dict[str, float]:
        """``run_model(workload, options).totals`` of a whole workload, and with
        ``options.energy`` its energy metrics (``energy_j``, ``pj_per_mac``, ``tops_per_w``,
        ``avg_power_w``, ``energy_<level>_j``: :func:`accelsim.report.energy_batch.summary_metrics`
        of ``run_model(...).energy``). A fold-stream dataflow with no other option goes without
        the layer and action tables (the same plans, schedules and rows; tests hold it equal
        to :meth:`run_model`); anything else is :meth:`run_model` itself. ``options`` default:
        ``RunOptions(mode=mode, dataflow=dataflow, energy=energy)``."""
        opts = options or RunOptions(mode=mode, dataflow=dataflow, energy=energy)
        got = (self._fold_stream_totals(workload, opts.dataflow, opts.mode, actions=opts.energy)
               if _fast(opts) else None)
        if got is None:  # spatial dataflows (rs, nlr), loop orders, sparsity: the run itself
            from accelsim.report.energy_batch import summary_metrics

            result = self.run_model(workload, opts)
            out = dict(result.totals)
            if opts.energy and result.energy is not None:
                out.update(summary_metrics(result.energy.summary))
            return out
        totals, actions = got
        if opts.energy:
            from accelsim.report.energy_batch import price_batch

            priced = price_batch([(self.machine, actions)])
            totals.update({k: float(v[0]) for k, v in priced.items()})
        return totals

    def workload_actions(self, workload: Any, options: RunOptions | None = None, *,
                         dataflow: str | None = None,
                         mode: str = "auto") -> tuple[dict[str, Any], Any] | None:
        """``(totals, action totals)`` of a whole workload on a fold-stream dataflow (os, ws,
        is) with no other option, for sweeps that price many points' actions at once
        (:func:`accelsim.report.energy_batch.price_batch`); None otherwise (a spatial dataflow,
        a loop order, sparsity: :meth:`workload_totals` runs those)."""
        opts = options or RunOptions(mode=mode, dataflow=dataflow)
        if not _fast(opts):
            return None
        return self._fold_stream_totals(workload, opts.dataflow, opts.mode, actions=True)

    def _fold_stream_totals(self, workload: Any, dataflow: str | None, mode: str, *,
                            actions: bool) -> tuple[dict[str, Any], Any] | None:
        """:meth:`workload_actions`, its action totals only when ``actions`` (else None in
        their place: summing the action records is ~10% of a whole-model point)."""
        from accelsim.report.energy_batch import action_totals

        df = dataflow or self.machine.array.dataflow
        if df not in DATAFLOWS or is_chip(self.machine):  # a chip: run_ops' own rows
            return None
        if mode not in MODES:
            raise ConfigError(None, "mode", mode, f"must be one of {', '.join(MODES)}")
        m = self.machine
        runs = run_layers(m, plan_ops(m, getattr(workload, "ops", workload), df, "auto",
                                      _source(workload)), resolve_mode(mode))
        rows = _layer_rows(m, runs)
        # only the numeric columns totals_of reads, built column-wise (far cheaper than a
        # frame of every column from row dicts; the same values, so the same sums)
        totals = totals_of(pd.DataFrame({c: [r[c] for r in rows] for c in _TOTALS_COLUMNS}), m)
        return dict(totals), action_totals(m, runs, rows) if actions else None

    def layer_batch(self, op: object, points: Mapping[str, Any], *,
                    detail: bool = False) -> dict[str, Any]:
        """One GEMM/conv layer over many design points at once
        (:func:`accelsim.engine.analytic.evaluate_layer_batch` in this process: arrays of
        ``simulate(...).totals`` keys, point for point equal to it; with ``detail``, also the
        layer's SRAM words, DRAM bytes per operand and direction and row folds, what its
        action records are made of)."""
        from accelsim.engine.analytic import evaluate_layer_batch

        return evaluate_layer_batch(self.machine, op, points, parallel=False, detail=detail)


_TOTALS_COLUMNS = ("total_cycles", "macs", "compute_cycles", "stall_cycles", "dram_bytes",
                   "sram_ifmap_reads", "sram_filter_reads", "sram_ofmap_reads",
                   "sram_ofmap_writes")


def _layer_rows(machine: SystolicMachine, runs: Sequence[LayerRun]) -> list[dict[str, Any]]:
    """:func:`~accelsim.report.tables.layer_row` of every run; a run sharing its schedule and
    its plan's mapping with an earlier one (a renamed copy: a model's repeated blocks) gets a
    copy of that row under its own name (the same values, a dict copy instead of a row)."""
    rows: list[dict[str, Any]] = []
    made: dict[tuple[int, int], dict[str, Any]] = {}
    for run in runs:
        plan = run.plan
        shared = getattr(plan, "traffic", None) or getattr(plan, "cost", None)
        key = (id(run.schedule), id(shared))
        row = made.get(key) if shared is not None else None
        if row is None:
            row = layer_row(machine, run)
            if shared is not None:
                made[key] = row
        elif row["layer"] != plan.name:
            row = {**row, "layer": plan.name}
        rows.append(row)
    return rows


def _fast(options: RunOptions) -> bool:
    """Whether :meth:`SystolicDevice.workload_totals` may take the table-free path: no option
    set but the dataflow (a loop order or sparsity changes the plans)."""
    return set(options.given()) <= {"dataflow"}


def _source(workload: Any) -> str:
    """The name errors about a workload cite."""
    return str(getattr(workload, "source", "") or getattr(workload, "name", "") or "")
