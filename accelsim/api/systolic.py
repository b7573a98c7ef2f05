"""``simulate()``: load -> map -> replay -> tabulate, for systolic machines.

Imports: config, workload, devices.systolic (mapping, engine), report.
"""

from __future__ import annotations

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
from accelsim.devices.systolic import plan_ops, run_ops
from accelsim.engine.systolic_run import resolve_mode
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.report.tables import totals_of
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
    df, layers, actions, runs = run_ops(machine, wl.ops, dataflow=dataflow, mode=mode,
                                        loop_order=loop_order, source=wl.source or wl.name,
                                        sparsity=sparsity, progress=progress)
    result = Result(machine, wl, df, resolve_mode(mode), layers, actions, runs)
    if energy:
        _attach_energy(result)
    return result


def plan_workload(machine: SystolicMachine, wl: Workload, dataflow: str,
                  loop_order: str = "auto") -> list:
    """Every primitive op of ``wl`` mapped onto ``machine``, in order
    (:func:`accelsim.devices.systolic.plan_ops`: repeated blocks mapped once)."""
    return plan_ops(machine, wl.ops, dataflow, loop_order, wl.source or wl.name)


def _attach_energy(result: Result) -> None:
    try:
        from accelsim.report.energy import attach_energy
    except ImportError:
        return
    attach_energy(result)
