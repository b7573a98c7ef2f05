"""A chunk of single-layer design points evaluated at once: the device's batch evaluator
(``layer_batch``: :func:`accelsim.engine.analytic.evaluate_layer_batch`), the vectorised area
model and, when a requested metric needs energy, each point's action records priced for the
whole chunk (:func:`accelsim.report.energy_batch.price_batch`). Equal, point by point, to
:func:`accelsim.sweep.evaluate.simulate_point` (tests hold them equal).

The sweep's evaluator module (:mod:`accelsim.sweep.evaluate`) decides when a chunk takes this
path (:func:`accelsim.sweep.evaluate.batch_metrics`).

Imports: errors, units, devices, engine.analytic, report.energy_batch (lazily), sweep.area.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from accelsim.errors import AccelsimError
from accelsim.sweep.area import area_batch


def rows_from_columns(ctx: Any, points: Sequence[Mapping[str, Any]], metrics: Mapping[str, Any],
                      ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The chunk's rows from its metric arrays (the same rows as
    :func:`~accelsim.sweep.evaluate.make_row`, built column-wise: one workload, so one
    bookkeeping block); ``ctx``: the sweep's :class:`~accelsim.sweep.evaluate.SweepContext`."""
    names = ctx.metrics if ctx.metrics is not None else sorted(metrics)
    cols = [(np.asarray(metrics[name], np.float64).tolist() if name in metrics
             else [math.nan] * len(points)) for name in names]
    ids = ids if ids is not None else ctx.point_ids(points)
    meta = ctx.meta(points[0], "")
    rows = []
    for p, pid, values in zip(points, ids, zip(*cols), strict=True):
        row = {**p, **meta, **dict(zip(names, values))}
        row["point_id"] = pid
        rows.append(row)
    return rows


def layer_batch_metrics(ctx: Any, points: Sequence[Mapping[str, Any]], *,
                        energy: bool) -> dict[str, Any] | None:
    """Metric arrays of a chunk through the device's batch evaluator (``layer_batch``), the
    vectorised area model and, with ``energy``, :func:`batch_energy` (equal to the default
    evaluator point by point), or None when the chunk is not a single layer over batch fields
    on a device that offers one; ``ctx``: the sweep's context."""
    from accelsim.devices import device_for
    from accelsim.engine.analytic import BATCH_FIELDS, DETAIL_COLUMNS
    from accelsim.units import parse_bytes

    if not points:
        return None

    names = {k for p in points for k in p} - {"workload"}
    if not names <= set(BATCH_FIELDS) or any(set(p) - {"workload"} != names for p in points):
        return None
    wl_names = {ctx.workload_name(p) for p in points}
    if len(wl_names) != 1:
        return None
    wl = ctx.workloads[wl_names.pop()]
    if len(wl.ops) != 1 or not hasattr(wl.ops[0], "lower"):
        return None
    try:
        base = ctx.machine({})
        layer_batch = getattr(device_for(base, source=ctx.hw_file), "layer_batch", None)
        if layer_batch is None:
            return None
        arrays = {k: np.array([p[k] for p in points]) for k in names}
        totals = layer_batch(wl.ops[0], arrays, detail=energy)
        out = {k: np.asarray(v, np.float64) for k, v in totals.items() if k not in DETAIL_COLUMNS}
        if energy:
            out.update(batch_energy(ctx, points, wl.ops[0], totals, base))
        pes = np.ones(len(points), np.int64)
        for field, default in (("compute.array.rows", base.array.rows),
                               ("compute.array.cols", base.array.cols),
                               ("compute.array.count", base.array.count)):
            pes = pes * (arrays[field].astype(np.int64) if field in arrays else default)
        cap = "memory.sram.capacity_bytes"
        if cap in arrays:
            vals = arrays[cap]
            sram = (np.array([parse_bytes(v) for v in vals], np.float64)
                    if vals.dtype.kind in "OUS" else vals.astype(np.float64))
        else:
            sram = np.full(len(points), float(base.memory.sram.capacity_bytes))
        out.update(area_batch(base, pes, sram))
        return out
    except AccelsimError:
        return None  # let the per-point path report each bad point on its own row


def batch_energy(ctx: Any, points: Sequence[Mapping[str, Any]], op: Any,
                 layer: Mapping[str, Any], base: Any) -> dict[str, np.ndarray]:
    """Energy metric arrays (``energy_j``, ``pj_per_mac``, ``tops_per_w``, ``avg_power_w``,
    ``energy_<level>_j``; NaN where a point has no record of a level) of one layer over the
    chunk: each point's action records made from the batch evaluator's figures (``layer``:
    :data:`~accelsim.report.energy_batch.LAYER_ACTION_COLUMNS` arrays) on the point's
    machine (:func:`~accelsim.report.energy_batch.layer_action_totals`), priced in one batch."""
    from accelsim.report.energy_batch import (
        LAYER_ACTION_COLUMNS,
        layer_action_totals,
        price_batch,
    )

    cols = {c: np.asarray(layer[c]).tolist() for c in LAYER_ACTION_COLUMNS}
    name = getattr(op, "name", "layer")
    runs = []
    for i, point in enumerate(points):
        machine = ctx.machine(point)
        flow = point.get("dataflow") or base.array.dataflow
        runs.append((machine, layer_action_totals(machine, name, flow,
                                                  {c: v[i] for c, v in cols.items()})))
    return price_batch(runs)
