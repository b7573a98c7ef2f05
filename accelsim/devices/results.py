"""Results of whole workloads on one device, and what builds them.

:class:`Result`: a workload on a systolic machine (per-layer table, action records, energy
report); :class:`ModelRun`: a model on a GPU or CPU (per-op table; on a GPU also the per-call
timeline, time by kernel class and the memory check). Both answer one protocol,
:class:`RunResult`, whatever the kind: ``layers`` (one row per layer/op), ``totals`` (with
``time_s``), ``energy`` (``total_pj``, ``pj_per_mac``, ``tops_per_w``, ``average_power_w``,
``breakdown()``, ``to_dict()``: an :class:`~accelsim.report.energy.EnergyReport` on a
systolic machine, a :class:`RunEnergy` on a GPU or CPU; None only when pricing was turned
off), ``machine``, ``workload``, ``params`` (what ran: the workload's parameters and the run
options, defaults resolved), ``to_dict()`` (the JSON document of ``accelsim run --json``) and a
short ``repr``. Units: seconds, FLOP, decimal bytes, joules.

Imports: accelsim (version), units, errors, config.schema, report.power, report.tables,
workload.models.zoo, workload.nn_ops, workload.ops.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import pandas as pd

from accelsim import __version__
from accelsim.config.schema import to_dict
from accelsim.errors import AccelsimError
from accelsim.report.power import run_energy_flag
from accelsim.report.tables import totals_of
from accelsim.units import FLOP_PER_MAC, format_time
from accelsim.workload.nn_ops import tokens_per_step
from accelsim.workload.ops import Workload

COLUMNS = ["layer", "op", "precision", "time_s", "host_s", "kernels", "flops", "flop_per_s",
           "tflops", "util", "dram_bytes", "bw_util", "energy_j", "bound"]
"""Per-op table; ``tflops`` (TFLOP/s) is kept one release beside ``flop_per_s``."""


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


@runtime_checkable
class RunResult(Protocol):
    """What every whole-workload run returns, on any machine kind (``simulate``,
    ``run_model``): see the module docstring."""

    machine: Any
    workload: Workload
    layers: pd.DataFrame
    params: dict[str, Any]

    @property
    def totals(self) -> dict[str, Any]:
        """Whole-workload figures (``time_s`` seconds, ``flops``...)."""

    @property
    def energy(self) -> Any:
        """Energy of the run (``total_pj``, ``pj_per_mac``, ``average_power_w``,
        ``breakdown()``)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``accelsim run --json``."""


@dataclass(frozen=True, repr=False)
class RunEnergy:
    """Energy of a GPU or CPU run, in the terms of an
    :class:`~accelsim.report.energy.EnergyReport`: ``layers`` (the run's per-op table, its
    ``energy_j`` column: each op's kernels, dynamic energy plus leakage over their time),
    ``idle_pj`` (leakage and idle power while the device waits for the host), ``macs``,
    ``time_s`` (seconds) and the energy table's name."""

    layers: pd.DataFrame
    idle_pj: float
    macs: float
    time_s: float
    table: str

    @property
    def total_pj(self) -> float:
        """Energy of the run, idle time included, pJ."""
        return float(self.layers["energy_j"].sum()) * 1e12 + self.idle_pj

    @property
    def pj_per_mac(self) -> float:
        """``total_pj`` per multiply-accumulate, pJ/MAC (NaN without MACs)."""
        return self.total_pj / self.macs if self.macs else float("nan")

    @property
    def tops_per_w(self) -> float:
        """Tera-operations per second per watt (1 MAC = 2 ops; NaN without energy)."""
        total = self.total_pj
        return 2.0 * self.macs / total if total else float("nan")

    @property
    def average_power_w(self) -> float:
        """``total_pj`` over the run's time, W."""
        return self.total_pj * 1e-12 / self.time_s if self.time_s else float("nan")

    def breakdown(self, by: tuple[str, ...] = ("layer",)) -> pd.DataFrame:
        """Energy (``pj``) summed per ``by``: columns of the per-op table (``layer``, ``op``,
        ``precision``, ``bound``), in run order; the device's idle energy is one more row
        (``idle``) when it is not zero. The ``pj`` column sums to :attr:`total_pj`."""
        cols = list(by)
        unknown = [c for c in cols if c not in self.layers.columns]
        if unknown:
            raise AccelsimError(f"energy breakdown by {unknown[0]!r}: not a column of the "
                                f"run's table (known: layer, op, precision, bound)")
        df = self.layers.assign(pj=self.layers["energy_j"] * 1e12)
        out = df.groupby(cols, sort=False, as_index=False)["pj"].sum()
        if self.idle_pj:
            out = pd.concat([out, pd.DataFrame([{**{c: "idle" for c in cols},
                                                 "pj": self.idle_pj}])], ignore_index=True)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``energy`` key of ``accelsim run --json`` (pJ, J, pJ/MAC, TOPS/W, W)."""
        return {"table": self.table, "total_pj": self.total_pj,
                "total_j": self.total_pj * 1e-12, "idle_pj": self.idle_pj, "macs": self.macs,
                "pj_per_mac": self.pj_per_mac, "tops_per_w": self.tops_per_w,
                "time_s": self.time_s, "avg_power_w": self.average_power_w}

    def __repr__(self) -> str:
        return (f"RunEnergy(table={self.table!r}, total_pj={self.total_pj:.4g}, "
                f"pj_per_mac={self.pj_per_mac:.3g}, tops_per_w={self.tops_per_w:.3g}, "
                f"average_power_w={self.average_power_w:.3g})")


def run_params(workload: Any, options: Any, result: Any) -> dict[str, Any]:
    """What ran, for a result's ``params``: the workload's parameters
    (:func:`~accelsim.workload.models.zoo.workload_params`), the engine ``mode`` and the run
    options given, and what the
    device chose where they were not (a systolic run's ``dataflow``, a GPU's ``exec_mode``)."""
    from accelsim.workload.models.zoo import workload_params

    out = {**workload_params(workload), **options.params()}
    if isinstance(result, Result):
        out["dataflow"] = result.dataflow
    elif isinstance(result, ModelRun) and not result.calls.empty:
        out["exec_mode"] = result.exec_mode
    return out


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
    params: dict[str, Any] = field(default_factory=dict)
    """What ran (:func:`run_params`): workload parameters and run options."""

    @property
    def totals(self) -> dict[str, Any]:
        """Whole-workload figures (cycles, time, MACs, utilisation, traffic)."""
        return totals_of(self.layers, self.machine)

    @property
    def energy_flag(self) -> str:
        """``""``, or why the run's energy efficiency is implausible for its machine
        (:func:`accelsim.report.power.run_energy_flag`: above peak / TDP)."""
        s = getattr(self.energy, "summary", None)
        if not s:
            return ""
        return run_energy_flag(self.machine, FLOP_PER_MAC * float(s.get("macs", 0.0)),
                               float(s.get("total_pj", 0.0)) * 1e-12)

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
            "params": self.params,
            "totals": self.totals,
            "layers": json.loads(self.layers.to_json(orient="records")),
            "resolved_machine": to_dict(self.machine),
        }
        if self.energy is not None:
            doc["energy"] = (self.energy.to_dict() if hasattr(self.energy, "to_dict")
                             else self.energy)
            if isinstance(doc["energy"], dict):
                doc["energy"]["flag"] = self.energy_flag
        return doc


@dataclass(repr=False)
class ModelRun:
    """A model on a GPU or CPU: per-op table, per-call timeline, time by kernel class
    (``repr``: a few lines)."""

    machine: Any
    workload: Workload
    layers: pd.DataFrame
    exec_mode: str = "kernels"
    calls: pd.DataFrame = field(default_factory=pd.DataFrame)
    breakdown: pd.DataFrame = field(default_factory=pd.DataFrame)
    memory: Any = None
    """The HBM check of a GPU run (:class:`~accelsim.devices.memory_check.MemoryCheck`)."""
    step_s: float | None = None
    """Step time from the host/stream replay (GPU runs); None: the sum of the kernels."""
    replay: str = "analytic"
    static_power_w: float = 0.0
    """Static (leakage and idle) power the GPU draws while it waits for the host, W."""
    params: dict[str, Any] = field(default_factory=dict)
    """What ran (:func:`run_params`): workload parameters and run options."""

    @property
    def energy(self) -> RunEnergy:
        """The run's energy (:class:`RunEnergy`): the ops' kernels plus the idle time."""
        t = self.totals
        macs = float(sum(getattr(op, "macs", 0) or 0 for op in self.workload.ops))
        table = getattr(getattr(self.machine, "energy", None), "table", "") or ""
        return RunEnergy(self.layers, t["idle_energy_j"] * 1e12, macs, t["time_s"], str(table))

    @property
    def energy_flag(self) -> str:
        """``""``, or why the run's energy efficiency is implausible for its machine
        (:func:`accelsim.report.power.run_energy_flag`: above peak / TDP)."""
        t = self.totals
        return run_energy_flag(self.machine, t["flops"], t["energy_j"])

    @property
    def totals(self) -> dict[str, Any]:
        """Whole-model figures; Transformers also get tokens/s (and, for decode, s/token)."""
        gpu = float(self.layers["time_s"].sum())
        t = self.step_s if self.step_s is not None else gpu
        flops = float(self.layers["flops"].sum())
        idle_j = self.static_power_w * max(0.0, t - gpu)
        energy = float(self.layers["energy_j"].sum()) + idle_j
        out: dict[str, Any] = {
            "exec_mode": self.exec_mode, "replay": self.replay,
            "layers": int(len(self.layers)), "time_s": t, "gpu_busy_s": gpu,
            "gpu_idle_s": max(0.0, t - gpu), "flops": flops,
            "flop_per_s": flops / t if t else 0.0,
            "tflops_per_s": flops / t / 1e12 if t else 0.0,
            "dram_bytes": float(self.layers["dram_bytes"].sum()),
            "energy_j": energy, "idle_energy_j": idle_j,
            "average_power_w": energy / t if t else 0.0,
        }
        if not self.calls.empty:
            out["kernels"] = int(self.calls["kernels"].sum())
            out["framework_calls"] = int(len(self.calls))
            out["host_busy_s"] = float(self.calls["host_s"].sum())
        tokens = tokens_per_step(self.workload)
        if tokens:
            out["tokens_per_step"] = tokens
            out["tokens_per_s"] = tokens / t if t else 0.0
            if "decode" in self.workload.name:
                out["time_per_output_token_s"] = t
        if self.memory is not None:
            out["memory"] = self.memory.to_dict()
        return out

    def __repr__(self) -> str:
        t = self.totals
        head = (f"ModelRun({self.machine.name} x {self.workload.name}, {self.exec_mode}, "
                f"{len(self.layers)} operators)")
        if not len(self.layers):
            return head
        lay = self.layers
        util = (float((lay["util"].fillna(0.0) * lay["time_s"]).sum()) / t["time_s"]
                if t["time_s"] else 0.0)
        return "\n".join([
            head,
            f"  time: {format_time(t['time_s'])}, {t['tflops_per_s']:.4g} TFLOP/s, "
            f"utilization {100 * util:.1f} % (time-weighted)",
            f"  energy: {format_energy(t['energy_j'])}, {t['average_power_w']:.3g} W average "
            f"(table {self.machine.energy.table})",
            "  tables: .layers" + (", .calls, .breakdown" if not self.calls.empty else "")
            + "; energy: .energy"])

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``accelsim run --json`` for a GPU/CPU."""
        doc = {"accelsim_version": __version__,
               "machine": self.machine.name, "machine_hash": machine_hash(self.machine),
               "workload": self.workload.name, "exec_mode": self.exec_mode,
               "params": self.params, "totals": self.totals,
               "energy": {**self.energy.to_dict(), "flag": self.energy_flag},
               "breakdown": json.loads(self.breakdown.to_json(orient="records")),
               "layers": json.loads(self.layers.to_json(orient="records")),
               "resolved_machine": to_dict(self.machine)}
        return doc
