"""The :class:`Device` protocol: what every single-device machine kind answers, and the record
of one op's cost on it.

A device wraps one machine config object (``kind: systolic``, ``gpu``, ``cpu``...) and answers
through that kind's own model in ``hw/`` (and ``mapping/``, ``engine/`` where the kind needs
them): how it plans an op, what the op costs (seconds, bytes per memory level, the bound),
what actions it counts (for energy), and the machine's roofs. Units: seconds, FLOP
(1 MAC = 2 FLOP), decimal bytes, bytes/s.

Whole workloads: :meth:`DeviceBase.run_model` runs every op of a workload, one kernel per
operator through :meth:`cost` (a kind with more to say, such as a GPU's execution modes or a
systolic array's fold streams, overrides it); :class:`RunOptions` carries ``accelsim run``'s
options, and each kind names in :attr:`DeviceBase.run_flags` the optional ones that apply to
it (the registry turns the others into one-line errors).

Imports: pandas, errors, analysis.roofline (roof types), config.lowering, config.systolic,
engine.systolic_run, report.energy (pricing), workload.device_ops, workload.models.zoo,
workload.readers, devices.results.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import pandas as pd

from accelsim.analysis.roofline import MachineRoofs
from accelsim.devices.results import COLUMNS, ModelRun
from accelsim.engine.systolic_run import MODES as RUN_MODES
from accelsim.errors import AccelsimError, ConfigError, UnsupportedError
from accelsim.workload.device_ops import device_op
from accelsim.workload.readers import load_wl

BOUND_CLASS = {"tensor_core": "compute", "tensor_core_unaligned": "compute", "simt": "compute",
               "sfu": "compute", "smem": "compute", "compute": "compute", "array": "compute",
               "vector": "compute", "l1": "memory",
               "l2": "memory", "l3": "memory", "dram": "memory", "hbm": "memory",
               "launch": "overhead"}
"""A device model's bound name -> ``compute``, ``memory`` or ``overhead``."""

PRECISION_FALLBACK: dict[str, str] = {"bf16": "fp16"}
"""Precision a GPU/CPU kernel runs at when the machine lacks the kernel's own (same width)."""


def with_fallback(machine: Any, op: Any) -> Any:
    """``op`` with its dtype replaced by the :data:`PRECISION_FALLBACK` one when ``machine``
    (GPU or CPU) cannot run the op's dtype but can run the fallback; else ``op`` unchanged."""
    dtype = getattr(op, "dtype", None)
    fb = PRECISION_FALLBACK.get(dtype or "")
    supports = getattr(machine, "supports", None)
    if fb is None or supports is None:
        return op
    if supports(dtype) or not supports(fb):
        return op
    return dataclasses.replace(op, dtype=fb)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """How a whole workload runs (:meth:`DeviceBase.run_model`; ``accelsim run``'s flags).

    ``mode`` applies to every kind: ``auto`` (the exact fast path), ``event`` (the SimPy
    replay) or ``analytic``. The others apply only to the kinds that name them in
    :attr:`DeviceBase.run_flags`: ``exec_mode`` (how a framework runs the model: eager,
    graph, compiled), ``dataflow``, ``loop_order`` and ``sparsity`` (zero fraction of input
    activations, one number or ``{layer: fraction}``). ``energy``: price the run's actions
    where pricing is a separate step (systolic runs).
    """

    mode: str = "auto"
    exec_mode: str | None = None
    dataflow: str | None = None
    loop_order: str | None = None
    sparsity: Mapping[str, float] | float | None = None
    energy: bool = True

    def __post_init__(self) -> None:
        if self.mode not in RUN_MODES:
            raise ConfigError(None, "mode", self.mode, f"must be one of {', '.join(RUN_MODES)}")

    def given(self) -> dict[str, Any]:
        """The optional options that are set (name -> value): every field but ``mode`` and
        ``energy`` (:func:`optional_run_options`) whose value is not None."""
        return {f: getattr(self, f) for f in optional_run_options()
                if getattr(self, f) is not None}

    def params(self) -> dict[str, Any]:
        """What ran, as a result's ``params``: ``mode`` and the optional options that are set."""
        return {"mode": self.mode, **self.given()}


def optional_run_options() -> tuple[str, ...]:
    """The optional :class:`RunOptions` fields (each kind takes those of its ``run_flags``):
    every field but ``mode`` and ``energy``, in declaration order. Sweeps take each of them as a
    parameter (:mod:`accelsim.sweep.space`), so a new field needs no edit there."""
    return tuple(f.name for f in dataclasses.fields(RunOptions) if f.name not in ("mode", "energy"))


LOOP_ORDERS = ("auto", "sr_outer", "sc_outer")
"""``loop_order`` values (:func:`accelsim.mapping.systolic.plan_layer`)."""


def check_run_option(name: str, value: Any) -> None:
    """Refuse a value that :class:`RunOptions` field ``name`` takes on no machine: a one-line
    :class:`ConfigError` naming the option. ``dataflow``: a registered dataflow;
    ``exec_mode``: an execution mode or a lowering YAML path; ``loop_order``: one of
    :data:`LOOP_ORDERS`; ``sparsity``: a fraction within [0, 1] or ``{layer: fraction}``.
    Other options are checked by the device that runs them."""
    from accelsim.config.lowering import EXEC_MODES
    from accelsim.config.systolic import ALL_DATAFLOWS

    def fraction(v: Any) -> bool:
        return (isinstance(v, (int, float)) and not isinstance(v, bool)
                and 0.0 <= float(v) <= 1.0)

    if value is None:
        return
    if name == "dataflow" and value not in ALL_DATAFLOWS:
        reason = f"unknown dataflow (known: {', '.join(ALL_DATAFLOWS)})"
    elif name == "exec_mode" and value not in EXEC_MODES \
            and not str(value).endswith((".yaml", ".yml")):
        reason = f"unknown execution mode (known: {', '.join(EXEC_MODES)} or a lowering YAML)"
    elif name == "loop_order" and value not in LOOP_ORDERS:
        reason = f"must be one of {', '.join(LOOP_ORDERS)}"
    elif name == "sparsity" and not (fraction(value) or (
            isinstance(value, Mapping) and all(fraction(v) for v in value.values()))):
        reason = "must be a fraction within [0, 1] (or {layer: fraction})"
    else:
        return
    raise ConfigError(None, name, value, reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class OpCost:
    """One op on one device, through the device kind's own model.

    ``level_bytes``: bytes moved at each memory level the model reports (keys are the
    roof level names: ``sram``/``dram`` on a systolic array, ``l2``/``hbm`` on a GPU,
    ``l1``..``dram`` on a CPU); ``offchip_bytes`` the device-memory share of it.
    ``actions``: action records (``level, operand, direction, count, bits, precision...``)
    that :mod:`accelsim.report.energy` prices. ``detail``: the kind's own raw result (layer
    table, GPU document, CPU cost) for callers that need more.
    """

    name: str
    op: str
    precision: str
    time_s: float
    flops: float
    level_bytes: Mapping[str, float]
    offchip_bytes: float
    peak_flops_per_s: float
    offchip_bytes_per_s: float
    bound: str
    actions: pd.DataFrame = field(repr=False)
    detail: Any = field(default=None, repr=False)

    @property
    def bound_class(self) -> str:
        """``compute``, ``memory`` or ``overhead``: the class of :attr:`bound`."""
        return BOUND_CLASS.get(self.bound, "memory")


@runtime_checkable
class Device(Protocol):
    """One machine kind's answers about an op; implemented once per kind (see the registry in
    :mod:`accelsim.devices`)."""

    kind: ClassVar[str]
    run_flags: ClassVar[frozenset[str]]
    machine: Any

    def plan(self, op: object, *, precision: str | None = None) -> Any:
        """The kind's own plan of ``op`` (systolic layer plans, GPU kernels, CPU blocking)."""

    def cost(self, op: object, *, precision: str | None = None) -> OpCost:
        """What ``op`` costs (analytic model); :class:`UnsupportedError` if it cannot run."""

    def energy_j(self, cost: OpCost, table: Any = None) -> float:
        """Energy of ``cost``, joules: its actions priced with ``table`` (default: the
        machine's) plus static (leakage) power over its time."""

    def roofs(self, precision: str | None = None) -> MachineRoofs:
        """Peak FLOP/s and the bandwidth of every memory level at ``precision``."""

    def op_times(self, ops: Sequence[object]) -> list[float]:
        """Seconds of each op (``inf`` where the device cannot run it)."""

    def layer_table(self, ops: Sequence[object], *, precision: str | None = None,
                    dataflow: str | None = None) -> tuple[pd.DataFrame, str]:
        """(one row per layer: ``layer, op, flops, time_s, bytes_<level>``, precision)."""

    def run_model(self, workload: Any, options: RunOptions | None = None, *,
                  progress: Callable[[int, int, str], None] | None = None) -> Any:
        """A whole workload (name, path, op list or graph) on the device: a result with
        ``layers``, ``totals`` and ``to_dict()``."""


class DeviceBase:
    """Defaults shared by the device kinds: per-op loops over :meth:`cost`."""

    kind: ClassVar[str] = ""
    noun: ClassVar[str] = ""
    """The kind in error messages, plural (``GPUs``, ``systolic machines``)."""
    levels: ClassVar[tuple[str, ...]] = ()
    """Memory levels :meth:`layer_table` reports (``bytes_<level>`` columns)."""
    run_flags: ClassVar[frozenset[str]] = frozenset()
    """The optional whole-run options that apply to the kind: :class:`RunOptions` fields
    (``exec_mode``, ``dataflow``, ``loop_order``, ``sparsity``) and the outputs of
    ``accelsim run`` it can write (``trace``: a Perfetto timeline, ``report``: an HTML
    page)."""

    def __init__(self, machine: Any) -> None:
        self.machine = machine

    def __repr__(self) -> str:
        return f"{type(self).__name__}({getattr(self.machine, 'name', '?')!r})"

    def cost(self, op: object, *, precision: str | None = None) -> OpCost:  # pragma: no cover
        raise NotImplementedError

    def actions(self, op: object, *, precision: str | None = None) -> pd.DataFrame:
        """The action records of ``op`` (what :meth:`energy_j` prices)."""
        return self.cost(op, precision=precision).actions

    def op_row(self, op: object, table: Any = None) -> dict[str, Any]:
        """``op`` as its kernel runs: at its precision, or the :data:`PRECISION_FALLBACK` one
        where the machine lacks it; energy priced with ``table`` (default: the machine's).
        Keys: ``requested_precision, precision, time_s, flops, tflops, peak_tflops, util,
        dram_bytes, bw_util, energy_j, gflops_per_j, bound, bound_class`` (seconds, FLOP,
        TFLOP/s, bytes, joules)."""
        requested = getattr(op, "dtype", None)
        cost = self.cost(with_fallback(self.machine, op))
        energy = self.energy_j(cost, table)
        t = cost.time_s
        tflops = cost.flops / t / 1e12 if t > 0 else 0.0
        peak_tflops = cost.peak_flops_per_s / 1e12
        return {"requested_precision": requested or cost.precision,
                "precision": cost.precision, "time_s": t, "flops": cost.flops,
                "tflops": tflops, "peak_tflops": peak_tflops,
                "util": tflops / peak_tflops if peak_tflops else 0.0,
                "dram_bytes": cost.offchip_bytes,
                "bw_util": cost.offchip_bytes / t / cost.offchip_bytes_per_s if t > 0 else 0.0,
                "energy_j": energy,
                "gflops_per_j": cost.flops / energy / 1e9 if energy else float("nan"),
                "bound": cost.bound, "bound_class": cost.bound_class}

    def run_model(self, workload: Any, options: RunOptions | None = None, *,
                  progress: Callable[[int, int, str], None] | None = None) -> ModelRun:
        """Every operator of ``workload`` as one kernel (:meth:`op_row`), in sequence: a
        :class:`~accelsim.devices.results.ModelRun` with no host dispatch (``options``: only
        ``mode``, which a per-op model does not need)."""
        wl = load_wl(workload)
        rows = []
        for i, op in enumerate(wl.ops):
            row = self.op_row(device_op(op))
            row["layer"] = getattr(op, "name", f"op{i}")
            row["op"] = getattr(op, "kind", type(op).__name__)
            row["host_s"], row["kernels"] = 0.0, 1
            row["flop_per_s"] = row["tflops"] * 1e12
            rows.append({c: row.get(c) for c in COLUMNS})
            if progress is not None:
                progress(i + 1, len(wl.ops), row["layer"])
        return ModelRun(self.machine, wl, pd.DataFrame(rows, columns=COLUMNS))

    def op_times(self, ops: Sequence[object]) -> list[float]:
        """Seconds of each op (``inf`` where the device cannot run it)."""
        out = []
        for op in ops:
            try:
                out.append(float(self.cost(op).time_s))
            except AccelsimError:
                out.append(math.inf)
        return out

    def layer_table(self, ops: Sequence[object], *, precision: str | None = None,
                    dataflow: str | None = None) -> tuple[pd.DataFrame, str]:
        """One row per op; an op the model cannot cost is an analytical row (NaN time)."""
        rows = []
        prec = precision
        for op in ops:
            row = {"layer": getattr(op, "name", ""), "op": getattr(op, "kind", ""),
                   "flops": float(getattr(op, "flops", 0))}
            try:
                c = self.cost(op, precision=precision)
            except UnsupportedError:
                rows.append({**row, "time_s": math.nan,
                             **{f"bytes_{lv}": math.nan for lv in self.levels}})
                continue
            prec = prec or c.precision
            rows.append({**row, "flops": c.flops, "time_s": float(c.time_s),
                         **{f"bytes_{lv}": float(c.level_bytes.get(lv, 0.0))
                            for lv in self.levels}})
        return pd.DataFrame(rows), prec or ""

    def prepare_workload(self, workload: Any) -> Any:
        """``workload`` in the form :meth:`run_model` reads it, built once to be run many times
        (sweep points): ``run_model(prepare_workload(w), o)`` is ``run_model(w, o)``. Default (a
        kind whose model lowers graphs, a GPU): a model-zoo or Hugging Face spec string as its
        graph, anything else through :func:`~accelsim.workload.readers.load_wl`; kinds that run
        flat op lists override it with ``load_wl``."""
        if isinstance(workload, str):
            from accelsim.workload.models import zoo

            if zoo.is_zoo_spec(workload):
                return zoo.from_spec(workload)
        return load_wl(workload)

    def workload_totals(self, workload: Any, options: RunOptions | None = None, *,
                        dataflow: str | None = None, mode: str = "auto",
                        energy: bool = False) -> dict[str, float]:
        """Whole-workload figures of a design point (what a sweep row holds): the numeric
        entries of ``run_model(workload, options).totals``, what ``accelsim run`` reports (on a
        GPU: ``time_s`` of a step with host dispatch, ``gpu_busy_s``, ``flops``, ``dram_bytes``,
        ``energy_j``, ``average_power_w``...). ``options`` default:
        ``RunOptions(mode=mode, dataflow=dataflow, energy=energy)``. A kind with a faster exact
        path for sweeps overrides it (systolic machines; a test holds it equal to run)."""
        opts = options or RunOptions(mode=mode, dataflow=dataflow, energy=energy)
        totals = self.run_model(workload, opts).totals
        return {k: float(v) for k, v in totals.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)}


def records_energy_j(records: list[dict] | pd.DataFrame, table: Any) -> float:
    """Price action records, joules; ``vector`` compute records cost one ``mac.<precision>``."""
    from accelsim.report.energy import actions_pj

    df = pd.DataFrame(records) if not isinstance(records, pd.DataFrame) else records
    if df.empty:
        return 0.0
    return float(actions_pj(df, table, vector_as_mac=True).sum()) * 1e-12
