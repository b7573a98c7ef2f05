"""Evaluating design points: the picklable context workers receive, stable point keys, rows.

A worker gets a :class:`SweepContext` (the base hardware mapping, the workloads, the mode and
the evaluator) and chunks of points; :func:`evaluate_chunk` turns them into result rows.
The evaluator is any module-level function ``f(ctx, point) -> {metric: number}``;
the default, :func:`simulate_point`, is ``accelsim run`` of the point: its machine's device
(:func:`accelsim.devices.device_for`, the one registry of machine kinds) runs the workload as
``run`` gives it (the device's ``prepare_workload`` of the same name: a zoo model's graph on a
GPU) with the point's run options (:func:`accelsim.sweep.options.run_options`), and the area
model's metrics are added; systolic devices also offer batch paths (a single layer over many
points, and actions priced for a whole chunk at once), each held equal to ``run`` by a test. A point
whose hardware or workload is invalid or unsupported yields a row with ``error`` set and NaN metrics
(it is finished: ``--resume`` does not retry it); any other exception is a bug and stops the sweep.

A point's key (``point_id``) is a SHA-256 over its canonical parameter values, the identity of
the base hardware (a hash of its parsed YAML) and of the workload (a hash of its operators),
the mode and the accelsim version: the same point of the same sweep always has the same key,
in any process, on any machine.

Imports: accelsim (version), errors, config.registry, devices (lazily), report.energy_batch,
sweep.*.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from accelsim import __version__
from accelsim.config.registry import apply_overrides, machine_from_dict
from accelsim.errors import AccelsimError, ConfigError
from accelsim.report.energy_batch import SUMMARY_METRICS, summary_metrics
from accelsim.sweep.area import area_breakdown
from accelsim.sweep.batch import layer_batch_metrics, rows_from_columns
from accelsim.sweep.keys import (
    PLACEHOLDER,
    canonical_json,
    params_json,
    stable_hash,
    workload_identity,
)
from accelsim.sweep.options import (
    is_hardware,
    run_flag_names,
    run_options,
    with_params,
    workload_params,
)
from accelsim.sweep.space import SweepSpec

Evaluator = Callable[["SweepContext", Mapping[str, Any]], Mapping[str, float]]

META_COLUMNS = ("point_id", "error", "hw_id", "workload_id", "accelsim_version")
"""Bookkeeping columns of every result row besides the parameters and metrics."""


_BASE_MACHINES: dict[str, Any] = {}
"""hw_id -> the base machine, built once per process."""

_PREPARED: dict[tuple[str, str, str], Any] = {}
"""(device kind, workload id, reference) -> the workload as the device's ``run_model`` reads
it, built once per process."""


def _replace_path(obj: Any, parts: list[str], value: Any) -> Any:
    """A copy of frozen dataclass ``obj`` with the field at ``parts`` set to ``value``."""
    name = parts[0]
    old = getattr(obj, name)
    if len(parts) > 1:
        return dataclasses.replace(obj, **{name: _replace_path(old, parts[1:], value)})
    if isinstance(old, float) and isinstance(value, int):
        value = float(value)
    return dataclasses.replace(obj, **{name: value})


class _Fields(dict):
    """Overrides below one dataclass: field name -> value, or the :class:`_Fields` below it."""


def _override_tree(overrides: Mapping[str, Any]) -> _Fields | None:
    """Dotted-path overrides as a tree of fields; None when one path lies inside another's
    value (then they are applied one after another)."""
    tree = _Fields()
    for path, value in overrides.items():
        node = tree
        *parents, leaf = path.split(".")
        for name in parents:
            node = node.setdefault(name, _Fields())
            if not isinstance(node, _Fields):
                return None
        if leaf in node:
            return None
        node[leaf] = value
    return tree


def _replace_tree(obj: Any, tree: _Fields) -> Any:
    """A copy of frozen dataclass ``obj`` with every field of ``tree`` replaced, one
    ``dataclasses.replace`` per dataclass changed (ints into float fields as floats)."""
    changes = {}
    for name, sub in tree.items():
        old = getattr(obj, name)
        if isinstance(sub, _Fields):
            changes[name] = _replace_tree(old, sub)
        else:
            changes[name] = float(sub) if isinstance(old, float) and isinstance(sub, int) else sub
    return dataclasses.replace(obj, **changes)


@dataclass(frozen=True)
class SweepContext:
    """Everything a worker needs to evaluate points; small and picklable."""

    base_hw: Mapping[str, Any]
    hw_file: str
    workloads: Mapping[str, Any]
    default_workload: str
    mode: str
    metrics: tuple[str, ...] | None
    evaluator: Evaluator
    hw_id: str = ""
    workload_ids: Mapping[str, str] = field(default_factory=dict)
    workload_refs: Mapping[str, str] = field(default_factory=dict)
    """Workload name -> what ``accelsim run`` is given for it (default: the name)."""

    @classmethod
    def from_spec(cls, spec: SweepSpec, evaluator: Evaluator | None = None) -> SweepContext:
        """The context of a validated spec (``evaluator`` defaults to :func:`simulate_point`)."""
        return cls(base_hw=dict(spec.base_hw), hw_file=spec.hw_file, workloads=dict(spec.workloads),
                   default_workload=spec.default_workload, mode=spec.mode, metrics=spec.metrics,
                   evaluator=evaluator or simulate_point, hw_id=stable_hash(spec.base_hw),
                   workload_ids={k: workload_identity(w) for k, w in spec.workloads.items()},
                   workload_refs=dict(spec.workload_refs))

    def workload_name(self, point: Mapping[str, Any]) -> str:
        """The workload a point runs: its ``workload`` (else the spec's) with its workload
        parameters (``workload.batch: 8`` -> ``NAME:batch=8``)."""
        return with_params(str(point.get("workload", self.default_workload)),
                           workload_params(point))

    def run_input(self, point: Mapping[str, Any], device: Any) -> Any:
        """The point's workload as ``device.run_model`` reads it when ``accelsim run`` is given
        its name (:meth:`~accelsim.devices.base.DeviceBase.prepare_workload` of the same
        reference), built once per process and device kind."""
        name = self.workload_name(point)
        ref = self.workload_refs.get(name, name)
        key = (device.kind, self.workload_ids.get(name, ""), ref)
        got = _PREPARED.get(key)
        if got is None:
            got = _PREPARED[key] = device.prepare_workload(ref)
        return got

    def run_options(self, point: Mapping[str, Any], *, energy: bool) -> Any:
        """The point's :class:`~accelsim.devices.base.RunOptions`: the sweep's mode, ``energy``
        and the point's run-option parameters."""
        return run_options(point, mode=self.mode, energy=energy)

    def workload(self, point: Mapping[str, Any]) -> Any:
        """The :class:`~accelsim.workload.ops.Workload` a point runs."""
        return self.workloads[self.workload_name(point)]

    def overrides(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The point's hardware overrides (its dotted hardware paths: every parameter but the
        workload, its parameters and the run options)."""
        return {k: v for k, v in point.items() if is_hardware(k)}

    def machine(self, point: Mapping[str, Any]) -> Any:
        """The point's frozen machine config: the base machine with the overrides replaced in.

        Equal to building the overridden YAML mapping (:meth:`machine_from_yaml`), ~50x
        faster: the base machine is built once per process, and the spec has already checked
        every value by building a machine with it (``__post_init__`` checks still run). The
        overrides go in together, one replacement per dataclass they change, as the YAML path
        applies them; where that fails they go in one at a time, so that the error names the
        field.
        """
        machine = _BASE_MACHINES.get(self.hw_id)
        if machine is None:
            machine = _BASE_MACHINES[self.hw_id] = machine_from_dict(self.base_hw,
                                                                     file=self.hw_file)
        overrides = self.overrides(point)
        tree = _override_tree(overrides)
        if tree is not None:
            try:
                return _replace_tree(machine, tree) if tree else machine
            except (AttributeError, TypeError, ValueError):
                pass
        for path, value in overrides.items():
            try:
                machine = _replace_path(machine, path.split("."), value)
            except (TypeError, ValueError) as exc:
                raise ConfigError(self.hw_file, path, value, str(exc)) from None
        return machine

    def machine_from_yaml(self, point: Mapping[str, Any]) -> Any:
        """The point's machine built from the overridden YAML mapping (the reference path)."""
        data = apply_overrides(self.base_hw, self.overrides(point), file=self.hw_file)
        return machine_from_dict(data, file=self.hw_file)

    def point_id(self, point: Mapping[str, Any]) -> str:
        """The point's stable key: :func:`stable_hash` of ``{"params": point, "hw": hw_id,
        "workload": workload id, "mode": mode, "version": accelsim version}``."""
        return self.point_ids([point])[0]

    def point_ids(self, points: Sequence[Mapping[str, Any]]) -> list[str]:
        """Keys of many points: the canonical JSON of the constant part is built once per
        workload and only each point's parameters are encoded (the same text, so the same
        keys, as hashing each whole document)."""
        out = []
        templates: dict[str, tuple[str, str]] = {}
        strings: dict[str, str] = {}
        for point in points:
            name = self.workload_name(point)
            t = templates.get(name)
            if t is None:
                doc = {"params": PLACEHOLDER, "hw": self.hw_id, "workload": self.workload_ids[name],
                       "mode": self.mode, "version": __version__}
                head, _, tail = canonical_json(doc).partition(json.dumps(PLACEHOLDER))
                t = templates[name] = (head, tail)
            text = t[0] + params_json(point, strings) + t[1]
            out.append(hashlib.sha256(text.encode()).hexdigest()[:16])
        return out

    def meta(self, point: Mapping[str, Any], point_id: str | None = None) -> dict[str, Any]:
        """The bookkeeping columns of a point's row (``error`` empty)."""
        return {"point_id": point_id or self.point_id(point), "error": "", "hw_id": self.hw_id,
                "workload_id": self.workload_ids[self.workload_name(point)],
                "accelsim_version": __version__}


ENERGY_METRICS = SUMMARY_METRICS
"""``Result.energy.to_dict()`` key -> metric name."""


def wants_energy(metrics: tuple[str, ...] | None) -> bool:
    """Whether any requested metric needs the energy model (None = all metrics)."""
    if metrics is None:
        return True
    names = set(ENERGY_METRICS.values())
    return any(m in names or m.startswith("energy_") for m in metrics)


def energy_metrics(report: Any) -> dict[str, float]:
    """Scalar energy metrics of an energy report: ``energy_j``, ``pj_per_mac``, ``tops_per_w``,
    ``avg_power_w`` and ``energy_<level>_j`` per memory level (joules)."""
    return summary_metrics(report.to_dict() if hasattr(report, "to_dict") else dict(report))


def simulate_point(ctx: SweepContext, point: Mapping[str, Any]) -> dict[str, float]:
    """Default evaluator: ``accelsim run`` of the point, through its machine's device
    (:func:`accelsim.devices.device_for`, :meth:`~accelsim.devices.base.DeviceBase.workload_totals`
    of :meth:`SweepContext.run_input` with :meth:`SweepContext.run_options`): its totals,
    energy and area.

    The metrics are the numeric totals of the device's ``run_model`` (what ``accelsim run``
    reports; on a systolic machine ``simulate(...).totals``: cycles, seconds, bytes; on a GPU
    ``time_s`` of a step with host dispatch, ``gpu_busy_s``, ``energy_j``,
    ``average_power_w``...), on a systolic machine the energy metrics of
    :func:`energy_metrics` (joules, pJ/MAC, TOPS/W, W; priced only when a requested metric
    needs them), and where the machine has a PE array or an SRAM ``area_mm2``,
    ``area_pe_mm2``, ``area_sram_mm2`` (mm^2) and ``node_nm`` from :mod:`accelsim.sweep.area`.
    """
    machine = ctx.machine(point)
    device = _device(ctx, machine, point)
    totals = device.workload_totals(ctx.run_input(point, device),
                                    ctx.run_options(point, energy=wants_energy(ctx.metrics)))
    return _with_area(machine, totals)


def _device(ctx: SweepContext, machine: Any, point: Mapping[str, Any] | None = None) -> Any:
    """The machine's device (:func:`accelsim.devices.device_for`); a run option the kind does
    not take is the one-line error ``accelsim run`` gives, naming the spec field."""
    from accelsim.devices import check_run_flags, device_for

    device = device_for(machine, source=ctx.hw_file)
    if point is not None:
        check_run_flags(device, ctx.run_options(point, energy=False).given(),
                        run_flag_names(point))
    return device


def _with_area(machine: Any, totals: Mapping[str, Any]) -> dict[str, float]:
    """Numeric totals as floats, plus the area model's metrics where the machine has a PE array
    or an SRAM (the parts :mod:`accelsim.sweep.area` models)."""
    out = {k: float(v) for k, v in totals.items()
           if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if hasattr(getattr(machine, "compute", None), "array") or hasattr(
            getattr(machine, "memory", None), "sram"):
        out.update(area_breakdown(machine))
    return out


def priced_metrics(ctx: SweepContext, points: Sequence[Mapping[str, Any]]
                   ) -> list[dict[str, float] | None]:
    """:func:`simulate_point`'s metrics of many points, their energy priced in one batch
    (:func:`accelsim.report.energy_batch.price_batch`) where the device offers its actions
    (``workload_actions``: systolic fold streams); None for a point to evaluate on its own
    (another device or dataflow, or invalid input, which it then reports)."""
    from accelsim.report.energy_batch import price_batch

    out: list[dict[str, float] | None] = [None] * len(points)
    todo: list[tuple[int, Any, dict[str, Any], Any]] = []
    for i, point in enumerate(points):
        try:
            machine = ctx.machine(point)
            device = _device(ctx, machine, point)
            actions = getattr(device, "workload_actions", None)
            got = actions(ctx.run_input(point, device), ctx.run_options(point, energy=True)
                          ) if actions is not None else None
        except AccelsimError:
            continue
        if got is not None:
            todo.append((i, machine, *got))
    if not todo:
        return out
    try:
        energy = price_batch([(machine, acts) for _, machine, _, acts in todo])
    except AccelsimError:
        return out
    for j, (i, machine, totals, _) in enumerate(todo):
        metrics = _with_area(machine, totals)
        for name, values in energy.items():
            v = float(values[j])
            if not (name.startswith("energy_") and name != "energy_j" and math.isnan(v)):
                metrics[name] = v  # a level this point has no record of: absent, as per point
        out[i] = metrics
    return out


def make_row(ctx: SweepContext, point: Mapping[str, Any], metrics: Mapping[str, float],
             error: str = "", point_id: str | None = None) -> dict[str, Any]:
    """A result row: the point's parameters, its metrics (``ctx.metrics``, else all) and meta."""
    row: dict[str, Any] = dict(point)
    row.update(ctx.meta(point, point_id))
    row["error"] = error
    names = ctx.metrics if ctx.metrics is not None else sorted(metrics)
    for name in names:
        row[name] = float(metrics.get(name, math.nan))
    return row


def evaluate_point(ctx: SweepContext, point: Mapping[str, Any],
                   point_id: str | None = None) -> dict[str, Any]:
    """Evaluate one point into a row; invalid/unsupported input becomes ``error`` + NaN metrics."""
    try:
        return make_row(ctx, point, ctx.evaluator(ctx, point), point_id=point_id)
    except AccelsimError as exc:
        return make_row(ctx, point, {}, str(exc) or type(exc).__name__, point_id=point_id)


def evaluate_chunk(ctx: SweepContext, points: Sequence[Mapping[str, Any]],
                   ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Rows of a chunk of points, in order (the unit of work sent to a process or Dask task);
    ``ids``: their keys when the caller has them (:meth:`SweepContext.point_ids` otherwise).

    Single-layer analytic sweeps go through the device's batch evaluator
    (:func:`batch_metrics`: the systolic ``layer_batch``,
    :func:`accelsim.engine.analytic.evaluate_layer_batch`, equal to ``simulate`` point by
    point, their energy priced per chunk); other sweeps with energy metrics price the chunk's
    actions in one batch (:func:`priced_metrics`); everything else, and any point the batch
    paths cannot take, point by point.
    """
    rows = _batch_rows(ctx, points, ids)
    if rows is not None:
        return rows
    if ctx.evaluator is simulate_point and wants_energy(ctx.metrics) and len(points) > 1:
        ids = ids if ids is not None else ctx.point_ids(points)
        return [make_row(ctx, p, m, point_id=i) if m is not None else evaluate_point(ctx, p)
                for p, i, m in zip(points, ids, priced_metrics(ctx, points), strict=True)]
    if ids is not None:
        return [evaluate_point(ctx, p, i) for p, i in zip(points, ids, strict=True)]
    return [evaluate_point(ctx, p) for p in points]


def batch_metrics(ctx: SweepContext, points: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Metric arrays of a chunk of single-layer analytic points with the default evaluator,
    through the device's batch evaluator, area and (when a metric needs it) energy priced per
    chunk (:func:`accelsim.sweep.batch.layer_batch_metrics`, equal to :func:`simulate_point`
    point by point); None when the chunk is not one."""
    if ctx.evaluator is not simulate_point or ctx.mode not in ("analytic", "auto"):
        return None
    return layer_batch_metrics(ctx, points, energy=wants_energy(ctx.metrics))


def _batch_rows(ctx: SweepContext, points: Sequence[Mapping[str, Any]],
                ids: Sequence[str] | None = None) -> list[dict[str, Any]] | None:
    """The chunk's rows through :func:`batch_metrics`, or None when it does not apply."""
    metrics = batch_metrics(ctx, points)
    return rows_from_columns(ctx, points, metrics, ids) if metrics is not None else None


def check_metrics(ctx: SweepContext, point: Mapping[str, Any],
                  file: str | None) -> tuple[tuple[str, ...], dict[str, float]]:
    """Evaluate one point in this process: the metric names every row will have, and its metrics.

    Raises :class:`~accelsim.errors.ConfigError` naming ``metrics`` when the spec asks for a
    metric that the evaluator does not produce, or naming ``parameters`` when the first point
    cannot be evaluated at all (before any work is distributed).
    """
    try:
        batch = batch_metrics(ctx, [point])  # warms the batch kernel forked workers will use
        result = ({k: float(v[0]) for k, v in batch.items()} if batch is not None
                  else ctx.evaluator(ctx, point))
    except AccelsimError as exc:
        raise ConfigError(file, "parameters", dict(point),
                          f"the first point cannot be evaluated: {exc}") from None
    name = getattr(ctx.evaluator, "__name__", "evaluator")
    if not isinstance(result, Mapping) or not all(isinstance(k, str) for k in result):
        raise ConfigError("--evaluator", name, result,
                          "must return a mapping of metric name (str) -> value")
    produced = dict(result)
    if ctx.metrics is None:
        return tuple(sorted(produced)), produced
    missing = [m for m in ctx.metrics if m not in produced]
    if missing:
        raise ConfigError(file, "metrics", missing[0],
                          f"unknown metric (known: {', '.join(sorted(produced))})")
    return ctx.metrics, produced
