"""``simulate()``: load -> map -> replay -> tabulate, for systolic machines.

Imports: config, workload, mapping, engine, report.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from accelsim import __version__
from accelsim.config.machine import SystolicMachine
from accelsim.config.registry import load_machine
from accelsim.config.schema import to_dict
from accelsim.config.systolic import ALL_DATAFLOWS
from accelsim.engine.systolic_run import MODES, resolve_mode, run_layer, run_layers
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.hw import dataflows
from accelsim.hw.systolic import geometry
from accelsim.limits import MAX_LAYER_FOLDS, check_count
from accelsim.mapping.expand import expand_op
from accelsim.mapping.row_stationary import RsPlan, plan_rs, zero_fractions
from accelsim.mapping.systolic import plan_layer
from accelsim.mapping.vector import plan_vector
from accelsim.report.rs_tables import rs_actions, rs_layer_row
from accelsim.report.tables import actions_table, layer_row, totals_of
from accelsim.units import format_time
from accelsim.workload.ops import Workload
from accelsim.workload.readers import load_workload


def load_hw(hw: Any, overrides: Mapping[str, Any] | None = None) -> Any:
    """A machine config object from a built-in name, a path, or an object (returned as is)."""
    if isinstance(hw, str) or hasattr(hw, "__fspath__"):
        return load_machine(hw, overrides)
    if overrides:
        raise ConfigError(None, "overrides", dict(overrides),
                          "overrides need a machine name or path, not an object")
    return hw


def load_wl(workload: Any) -> Workload:
    """A :class:`Workload` from a built-in name, a path, a Workload or a list of ops."""
    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, str) or hasattr(workload, "__fspath__"):
        return load_workload(workload)
    if hasattr(workload, "to_workload"):
        return workload.to_workload()
    if isinstance(workload, (list, tuple)):
        return Workload("ops", tuple(workload))
    if hasattr(workload, "kind"):
        return Workload(getattr(workload, "name", "op"), (workload,))
    return load_workload(workload)


def machine_hash(machine: Any) -> str:
    """A stable short hash of the resolved machine parameters."""
    blob = json.dumps(to_dict(machine), sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def format_energy(joules: float) -> str:
    """Human-readable joules: ``2.07e-2 -> '20.7 mJ'``."""
    if joules == 0 or not math.isfinite(joules):
        return f"{joules} J"
    for factor, sym in ((1.0, "J"), (1e-3, "mJ"), (1e-6, "uJ"), (1e-9, "nJ")):
        if abs(joules) >= factor:
            return f"{joules / factor:.3g} {sym}"
    return f"{joules / 1e-12:.3g} pJ"


def energy_repr_line(energy: Any) -> str:
    """The energy line of a result's ``repr`` (total, pJ/MAC, TOPS/W, average power, table)."""
    if energy is None or not hasattr(energy, "total_pj"):
        return "energy: not priced"
    return (f"energy: {format_energy(energy.total_pj * 1e-12)}, {energy.pj_per_mac:.3g} pJ/MAC, "
            f"{energy.tops_per_w:.3g} TOPS/W, {energy.average_power_w:.3g} W average "
            f"(table {energy.table.name})")


@dataclass(repr=False)
class Result:
    """One simulation: per-layer table, action records, totals and the resolved inputs.

    ``repr(result)`` is a few lines (machine, workload, cycles and time, utilization, energy);
    the tables are ``.layers`` and ``.actions``, the energy report ``.energy``.
    """

    machine: Any
    workload: Workload
    dataflow: str
    mode: str
    layers: pd.DataFrame
    actions: pd.DataFrame
    runs: list = field(default_factory=list, repr=False)
    energy: Any = None

    @property
    def totals(self) -> dict[str, Any]:
        """Whole-workload figures (cycles, time, MACs, utilisation, traffic)."""
        return totals_of(self.layers, self.machine)

    def __repr__(self) -> str:
        t = self.totals
        head = (f"Result({getattr(self.machine, 'name', '?')} x {self.workload.name}, "
                f"dataflow {self.dataflow}, mode {self.mode}, {len(self.layers)} layers)")
        if not t:
            return head
        return "\n".join([
            head,
            f"  time: {t['total_cycles']:,} cycles = {format_time(t['time_s'])}, "
            f"{t['tflops_per_s']:.4g} TFLOP/s, utilization {100 * t['overall_util']:.1f} %",
            f"  {energy_repr_line(self.energy)}",
            "  tables: .layers, .actions; energy report: .energy"])

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``accelsim run --json``."""
        doc: dict[str, Any] = {
            "accelsim_version": __version__,
            "machine": getattr(self.machine, "name", ""),
            "machine_hash": machine_hash(self.machine),
            "workload": self.workload.name,
            "dataflow": self.dataflow,
            "mode": self.mode,
            "totals": self.totals,
            "layers": json.loads(self.layers.to_json(orient="records")),
            "resolved_machine": to_dict(self.machine),
        }
        if self.energy is not None:
            doc["energy"] = self.energy.to_dict() if hasattr(self.energy, "to_dict") else self.energy
        return doc


def simulate(hw: Any, workload: Any, *, dataflow: str | None = None, mode: str = "auto",
             overrides: Mapping[str, Any] | None = None, loop_order: str = "auto",
             energy: bool = True, sparsity: Mapping[str, float] | float | None = None,
             progress: Callable[[int, int, str], None] | None = None) -> Result:
    """Simulate ``workload`` on systolic machine ``hw``.

    ``mode``: ``"auto"`` (default: the exact recurrence wherever it is proven equal to the
    event replay, which on systolic machines is every run; see
    :mod:`accelsim.engine.systolic_run`), ``"event"`` (the SimPy replay) or ``"analytic"``.
    ``Result.mode`` names the engine that ran.

    ``dataflow``: a registered dataflow name (os, ws, is; rs on machines with per-PE
    scratchpads; nlr), default the machine's.
    ``overrides``: dotted paths into the hardware YAML, e.g. ``{"compute.array.rows": 64}``.
    ``energy``: price the actions with the machine's energy table (when energy support exists).
    ``sparsity``: zero fraction of each layer's input activations (one number or ``{layer:
    fraction}``), used by row-stationary zero gating and run-length coding; default dense.
    ``progress``: called as ``progress(done, total, layer_name)`` after each layer.
    """
    machine = load_hw(hw, overrides)
    wl = load_wl(workload)
    if not isinstance(machine, SystolicMachine):
        raise UnsupportedError(
            f"{getattr(machine, 'name', machine)}: simulate() runs systolic machines; "
            "use accelsim.api.gpu for GPUs and accelsim.api.links for systems")
    if mode not in MODES:
        raise ConfigError(None, "mode", mode, f"must be one of {', '.join(MODES)}")
    df = dataflow or machine.array.dataflow
    if df not in ALL_DATAFLOWS:
        raise ConfigError(None, "dataflow", df, f"must be one of {', '.join(ALL_DATAFLOWS)}")
    engine = resolve_mode(mode)
    if df in dataflows.names("spatial"):
        return _simulate_spatial(machine, wl, df, engine, energy, sparsity, progress)
    plans = plan_workload(machine, wl, df, loop_order)
    runs = run_layers(machine, plans, engine, progress)
    layers = pd.DataFrame([layer_row(machine, run) for run in runs])
    layers["mode"] = engine  # which engine computed each row
    actions = actions_table(machine, runs)
    result = Result(machine, wl, df, engine, layers, actions, runs)
    if energy:
        _attach_energy(result)
    return result


def plan_workload(machine: SystolicMachine, wl: Workload, dataflow: str,
                  loop_order: str = "auto") -> list:
    """Every primitive op of ``wl`` mapped onto ``machine``, in order; ops that differ only in
    their name (the blocks of a Transformer) are mapped once and the plan renamed. Mapping
    everything first makes bad input fail before any work."""
    plans = []
    mapped: dict[Any, Any] = {}
    for op in wl.ops:
        for piece in expand_op(op):
            key = op_key(piece)
            plan = mapped.get(key) if key is not None else None
            if plan is None:
                if hasattr(piece, "lower"):
                    _check_folds(machine, piece, dataflow, wl.source or wl.name)
                plan = _plan(machine, piece, dataflow, loop_order)
                if key is not None:
                    mapped[key] = plan
            elif plan.name != getattr(piece, "name", plan.name):
                plan = dataclasses.replace(plan, name=piece.name)
            plans.append(plan)
    return plans


def _check_folds(machine: SystolicMachine, op: Any, dataflow: str, source: str) -> None:
    """Refuse a layer of more than MAX_LAYER_FOLDS folds (over all its repeats: batch entries
    with their own weights, conv groups) before anything is allocated."""
    gemm = op.lower()
    g = geometry(gemm.m, gemm.n, gemm.k, machine.array.rows, machine.array.cols, dataflow)
    check_count(g.folds * gemm.repeat, MAX_LAYER_FOLDS, file=source, field=getattr(op, "name", "layer"),
                what="folds", hint=f"the layer is too large for a {machine.array.rows}x"
                f"{machine.array.cols} array")


def _simulate_spatial(machine: SystolicMachine, wl: Workload, df: str, mode: str, energy: bool,
                      sparsity: Mapping[str, float] | float | None,
                      progress: Callable[[int, int, str], None] | None) -> Result:
    """The spatial path: Conv2d/GEMM layers mapped by the ``rs`` or ``nlr`` strategy."""
    pieces = [p for op in wl.ops for p in expand_op(op)]
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
    result = Result(machine, wl, df, mode, layers, actions, runs)
    if energy:
        _attach_energy(result)
    return result


def _plan(machine: SystolicMachine, piece: Any, dataflow: str, loop_order: str) -> Any:
    """The layer plan (GEMM/conv) or vector plan of one primitive op."""
    if hasattr(piece, "lower"):
        return plan_layer(machine, piece, dataflow, loop_order)
    if hasattr(piece, "tensor_elements"):
        return plan_vector(machine, piece)
    raise UnsupportedError(f"{getattr(piece, 'name', piece)}: operator kind "
                           f"'{getattr(piece, 'kind', type(piece).__name__)}' has no systolic model")


def op_key(piece: Any) -> Any:
    """A key equal for ops that differ only in name (None if the op is not a hashable
    dataclass with a name): what lets a model's repeated blocks be costed once."""
    if not dataclasses.is_dataclass(piece) or not hasattr(piece, "name"):
        return None
    try:
        key = (type(piece), dataclasses.replace(piece, name=""))
        hash(key)
    except (TypeError, ValueError):
        return None
    return key


def _attach_energy(result: Result) -> None:
    try:
        from accelsim.report.energy import attach_energy
    except ImportError:
        return
    attach_energy(result)
