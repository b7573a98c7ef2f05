"""Energy of a GPU or CPU run split into the parts its energy model computes, and the runs
``accelsim energy`` compares on such machines (one per precision and execution mode).

    >>> from accelsim.api import simulate
    >>> from accelsim.api.energy import run_energy_parts
    >>> run_energy_parts(simulate("h200", "resnet50"))   # pJ per part; sums to energy.total_pj

The parts are exactly those the models price, never a finer split:

* GPU (:mod:`accelsim.devices.gpu_model`): each kernel costs its dynamic energy
  (:func:`accelsim.report.gpu_power.gpu_energy_parts`) plus the machine's static power
  (:func:`accelsim.report.power.static_power_w`: leakage and idle draw) over its time; the
  GPU waiting for the host costs static power alone. The run's table keeps each op's HBM
  bytes but not its MACs or L2 bytes, so the dynamic energy splits into ``hbm_pj`` (HBM
  bytes x the table's HBM price, the model's own ``hbm`` part) and ``onchip_pj`` (the rest:
  tensor/CUDA cores, register file, shared memory, datapath overhead, L2). ``static_pj``:
  static power over the GPU-busy time; ``host_idle_pj``: over the time the GPU waits for the
  host.
* CPU (:class:`accelsim.devices.cpu.CpuDevice`): each op's action records priced per level
  (``mac_pj``: MACs and vector FLOP; ``l1_pj`` .. ``dram_pj``), its issued instructions
  (``issue_pj``), the busy cores' clocked energy (``core_pj``) and static power over its
  time (``static_pj``): the op's cost recomputed as the run prices it.

Imports: errors, devices, devices.base, devices.cpu, report.energy, report.gpu_power, report.power,
workload.device_ops, api.simulate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from accelsim.errors import ConfigError

GPU_PARTS = ("onchip_pj", "hbm_pj", "static_pj", "host_idle_pj")
"""Parts of a GPU run's energy, pJ (module docstring)."""

CPU_PARTS = ("mac_pj", "l1_pj", "l2_pj", "l3_pj", "dram_pj", "issue_pj", "core_pj",
             "static_pj")
"""Parts of a CPU run's energy, pJ (module docstring)."""


def run_energy_parts(run: Any) -> dict[str, float]:
    """The energy of a GPU or CPU run (a :class:`~accelsim.devices.results.ModelRun`) per part
    of its model, pJ (module docstring); the parts sum to ``run.energy.total_pj``."""
    kind = getattr(run.machine, "kind", "")
    if kind == "gpu":
        return _gpu_parts(run)
    if kind == "cpu":
        return _cpu_parts(run)
    raise ConfigError(None, "machine", getattr(run.machine, "name", "?"),
                      "energy parts of a GPU or CPU run only (a systolic run has "
                      "energy.breakdown() per level)")


def _gpu_parts(run: Any) -> dict[str, float]:
    from accelsim.report.energy import energy_table_for
    from accelsim.report.gpu_power import gpu_energy_parts
    from accelsim.report.power import static_power_w

    m, t = run.machine, run.totals
    table = energy_table_for(m)
    static_w = sum(static_power_w(m, table).values())
    per_byte_j = gpu_energy_parts(m, table, macs=0.0, flops=0.0, l2_bytes=0.0,
                                  hbm_bytes=1e9, precision="fp32")["hbm"] / 1e9
    total = run.energy.total_pj
    static = static_w * t["gpu_busy_s"] * 1e12
    idle = static_w * t["gpu_idle_s"] * 1e12
    hbm = float(run.layers["dram_bytes"].sum()) * per_byte_j * 1e12
    return {"onchip_pj": total - static - idle - hbm, "hbm_pj": hbm, "static_pj": static,
            "host_idle_pj": idle}


def _cpu_parts(run: Any) -> dict[str, float]:
    from accelsim.devices import device_for
    from accelsim.devices.base import with_fallback
    from accelsim.devices.cpu import core_clocked_j
    from accelsim.report.energy import actions_pj, energy_table_for
    from accelsim.report.power import static_power_w
    from accelsim.workload.device_ops import device_op

    m = run.machine
    dev = device_for(m)
    table = energy_table_for(m)
    static_w = sum(static_power_w(m, table).values())
    parts = dict.fromkeys(CPU_PARTS, 0.0)
    caches = {getattr(m.memory, lv).capacity_bytes: lv for lv in ("l3", "l2", "l1")}
    for op in run.workload.ops:
        cost = dev.cost(with_fallback(m, device_op(op)))
        recs = cost.actions
        if not recs.empty:
            level = recs["level"].to_numpy(dtype=object)
            issue = (level == "mac") & (recs["direction"].to_numpy(dtype=object) == "issue")
            counts = recs["count"].to_numpy(dtype=float)
            parts["issue_pj"] += float(counts[issue].sum()) * m.energy.instruction_pj
            pj = actions_pj(recs, table, vector_as_mac=True)
            level = np.where(level == "vector", "mac", level)
            cache = [caches.get(c) for c in recs["capacity_bytes"].tolist()]
            part = [c if lv == "sram" else lv for c, lv in zip(cache, level, strict=True)]
            for name, v, skip in zip(part, pj, issue, strict=True):
                if not skip:  # a cache read is an sram record, named by its capacity
                    parts[f"{name}_pj"] = parts.get(f"{name}_pj", 0.0) + float(v)
        parts["core_pj"] += core_clocked_j(m, cost) * 1e12
        parts["static_pj"] += static_w * cost.time_s * 1e12
    return parts


def precision_runs(hw: Any, workload: str, precisions: Sequence[str | None],
                   exec_modes: Sequence[str | None], *, mode: str = "auto",
                   overrides: Mapping[str, Any] | None = None) -> list[tuple[str, str, Any]]:
    """``workload`` (a zoo spec) simulated on GPU/CPU ``hw`` once per precision and execution
    mode: ``[(precision, exec_mode, run)]``. A precision ``None`` runs the workload as given
    (its own precisions); a zoo model gets ``dtype=P``."""
    from accelsim.api.simulate import simulate

    out = []
    for p in precisions:
        spec = workload if p is None else with_dtype(workload, p)
        for ex in exec_modes:
            r = simulate(hw, spec, mode=mode, overrides=overrides, exec_mode=ex)
            shown = p or "/".join(sorted({str(x) for x in r.layers["precision"] if x}))
            shown = shown or "as given"  # ops without a dtype: the device's own choice
            out.append((shown, getattr(r, "exec_mode", None) or ex or "", r))
    return out


def with_dtype(spec: str, precision: str) -> str:
    """Zoo spec ``spec`` with ``dtype=precision`` (``"resnet50"`` -> ``"resnet50:dtype=fp8"``)."""
    name, _, rest = spec.partition(":")
    return f"{name}:{rest},dtype={precision}" if rest.strip() else f"{name}:dtype={precision}"


def precision_comparison(runs: Sequence[tuple[str, str, Any]]) -> pd.DataFrame:
    """One row per run of :func:`precision_runs`: ``precision``, ``exec`` (GPUs), ``time_s``,
    ``energy_pj``, the parts of :func:`run_energy_parts` (pJ), ``pj_per_mac``, ``tops_per_w``
    and ``avg_power_w``."""
    rows = []
    for prec, ex, r in runs:
        e = r.energy
        row: dict[str, Any] = {"precision": prec}
        if getattr(r.machine, "kind", "") == "gpu":
            row["exec"] = ex
        row.update({"time_s": float(r.totals["time_s"]), "energy_pj": e.total_pj,
                    **run_energy_parts(r), "pj_per_mac": e.pj_per_mac,
                    "tops_per_w": e.tops_per_w, "avg_power_w": e.average_power_w})
        rows.append(row)
    return pd.DataFrame(rows)


def precision_breakdown(runs: Sequence[tuple[str, str, Any]]) -> pd.DataFrame:
    """Energy per op kind of each run (``energy.breakdown(("op",))``, pJ; the GPU waiting for
    the host is the ``idle`` row), with ``precision`` and ``exec`` columns."""
    parts = [r.energy.breakdown(("op",)).assign(precision=p, exec=ex) for p, ex, r in runs]
    return pd.concat(parts, ignore_index=True)
