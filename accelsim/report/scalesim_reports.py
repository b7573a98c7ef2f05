"""The SCALE-Sim front door: SCALE-Sim topology in, SCALE-Sim's three report CSVs out.

``run_scalesim(cfg, topology, input_type, outdir)`` reads SCALE-Sim's files unchanged,
simulates every layer with accelsim (mapping + engine) and writes ``COMPUTE_REPORT.csv``,
``BANDWIDTH_REPORT.csv`` and ``DETAILED_ACCESS_REPORT.csv`` into ``OUTDIR/<run_name>/``
with SCALE-Sim's header strings, ``LayerID, `` prefix, ``", "`` separators, trailing comma
and Python number formatting.

Compute-side numbers (cycles, utilisations, SRAM counts and SRAM start/stop cycles) are
SCALE-Sim's definitions, quirks included (``accelsim/report/SCALESIM.md`` lists them);
stalls and every DRAM number come from accelsim's own engine and memory model.

The topology is read by the one SCALE-Sim CSV reader, in SCALE-Sim's own view of the rows
(:func:`accelsim.workload.scalesim_topology.scalesim_layers`: ceil output sizes, ``DP`` layers
split per channel).

Imports: errors, safe_text, limits, files, config.scalesim_cfg, engine.schedule,
engine.systolic_run, hw.systolic, mapping.systolic, workload.scalesim_topology.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from accelsim.config.scalesim_cfg import ScaleSimConfig, read_scalesim_cfg
from accelsim.engine.schedule import transfer_cycles
from accelsim.engine.systolic_run import LayerRun, run_layer
from accelsim.errors import WorkloadError
from accelsim.hw.systolic import (
    FoldGeometry,
    geometry,
    scalesim_compute_cycles,
    scalesim_compute_util,
    scalesim_ofmap_writes,
    sram_accesses,
)
from accelsim.limits import MAX_LAYER_FOLDS, check_count
from accelsim.mapping.systolic import plan_layer
from accelsim.workload.scalesim_topology import ScaleSimLayer, scalesim_layers

COMPUTE_HEADER = ("LayerID, Total Cycles (incl. prefetch), Total Cycles, Stall Cycles, "
                  "Overall Util %, Mapping Efficiency %, Compute Util %,\n")
BANDWIDTH_HEADER = ("LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, "
                    "Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n")
DETAIL_HEADER = (
    "LayerID, "
    "SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, "
    "SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, "
    "SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
    "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, "
    "DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
    "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,\n")
REPORT_FILES = ("COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv", "DETAILED_ACCESS_REPORT.csv")

_EXACT_MEAN_MAX_FOLDS = 1 << 22


def _fold_used(g: FoldGeometry) -> np.ndarray:
    """PEs used by each fold, in SCALE-Sim's fold order (column folds outer)."""
    ur = np.full(g.row_folds, g.rows, dtype=np.int64)
    ur[-1] = g.sr - (g.row_folds - 1) * g.rows
    uc = np.full(g.col_folds, g.cols, dtype=np.int64)
    uc[-1] = g.sc - (g.col_folds - 1) * g.cols
    return np.outer(uc, ur).ravel()


def scalesim_fold_means(g: FoldGeometry) -> tuple[float, float]:
    """(Mapping Efficiency %, Compute Util %) as SCALE-Sim averages them over folds.

    The per-fold ratios are summed one after another in SCALE-Sim's fold order, so the
    result is the same float SCALE-Sim prints. Its compute-util fold length under ws/is is
    ``2R + 2C + T - 3`` (see :func:`accelsim.hw.systolic.scalesim_compute_util`).
    """
    f = g.folds
    if f > _EXACT_MEAN_MAX_FOLDS:   # too many folds to replay; the closed form (last-bit off)
        me = (g.sr * g.sc) / (f * g.rows * g.cols)
        return me * 100, scalesim_compute_util(g) * 100
    pes = g.rows * g.cols
    used = _fold_used(g)
    length = g.fold_cycles if g.dataflow == "os" else 2 * g.rows + 2 * g.cols + g.t - 3
    me = float(np.cumsum(used / pes)[-1]) / f
    cu = float(np.cumsum((used * g.t) / (pes * length))[-1]) / f
    return me * 100, cu * 100


def scalesim_sram_cycles(g: FoldGeometry) -> tuple[int, int, int, int, int, int]:
    """SRAM (IFMAP start, stop, Filter start, stop, OFMAP start, stop) cycles, stall-free.

    SCALE-Sim reports the first and last demand row holding a valid address; reads are
    served one cycle after the request (hit latency 1), writes in the same cycle.
    """
    r, c, t, p = g.rows, g.cols, g.t, g.fold_cycles
    ur0 = min(r, g.sr)
    ur1 = g.sr - (g.row_folds - 1) * r
    uc1 = g.sc - (g.col_folds - 1) * c
    base = (g.folds - 1) * p
    ofmap = (2 * r - 1, base + 2 * r + uc1 + t - 3)
    if g.dataflow == "os":
        return (1, base + ur1 + t - 1, 1, base + uc1 + t - 1,
                t - 1 + (r - ur0), base + t + r + uc1 - 3)
    stationary = (r - ur0 + 1, base + r)          # loaded flipped, R rows per fold
    streamed = (r + 1, base + r + ur1 + t - 1)    # after the R load rows, skewed
    if g.dataflow == "ws":
        return (*streamed, *stationary, *ofmap)
    return (*stationary, *streamed, *ofmap)


def partial_window_ifmap_stop(g: FoldGeometry, layer: ScaleSimLayer) -> int:
    """SRAM IFMAP stop cycle when the layer's last windows reach past its input.

    SCALE-Sim gives the im2col elements outside the input the address -1 (no request), so
    the last IFMAP demand row may come earlier than in a full-window layer, or even in an
    earlier fold. Folds are searched from the last one back.
    """
    op = layer.op
    h, w = layer.input_hw
    fw, cin, s, wo, ho = op.s, op.c, op.stride, op.out_w, op.out_h
    r, cols = g.rows, g.cols

    def extent(pix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        orow, ocol = np.divmod(pix, wo)     # filter rows / cols inside the input, per pixel
        return np.minimum(op.r, h - orow * s), np.minimum(fw, w - ocol * s)

    for f in range(g.folds - 1, -1, -1):
        fc, fr = divmod(f, g.row_folds)
        c = np.arange(min(r, g.sr - fr * r))
        if g.dataflow == "os":      # pixels on array rows, im2col index j in time: row c + j
            kr, kc = extent(fr * r + c)
            ok = (kr > 0) & (kc > 0)
            rows = c + (kr - 1) * fw * cin + (kc - 1) * cin + cin - 1
        else:
            krow, rem = np.divmod(fr * r + c, fw * cin)
            kcol = rem // cin
            if g.dataflow == "ws":  # im2col index on array rows, pixels in time: row R + c + t
                orow = np.minimum((h - 1 - krow) // s, ho - 1)
                ocol = np.minimum((w - 1 - kcol) // s, wo - 1)
                ok = (orow >= 0) & (ocol >= 0)
                rows = r + c + orow * wo + ocol
            else:                   # is: stationary ifmap loaded flipped: index c on row R-1-c
                pix = fc * cols + np.arange(min(cols, g.sc - fc * cols))
                kr, kc = extent(pix)
                ok = ((krow[:, None] < kr[None, :]) & (kcol[:, None] < kc[None, :])).any(axis=1)
                rows = r - 1 - c
        if ok.any():
            return int(f * g.fold_cycles + rows[ok].max() + 1)
    return 0


def _window(start: np.ndarray, dur: np.ndarray, moved: np.ndarray, shift: int) -> tuple[int, int]:
    idx = np.flatnonzero(moved > 0)
    if len(idx) == 0:
        return 0, 0
    a, b = idx[0], idx[-1]
    return int(start[a]) - shift, int(start[b] + max(int(dur[b]), 1) - 1) - shift


@dataclass(frozen=True, slots=True)
class LayerReport:
    """One layer's three report rows (values in SCALE-Sim's column order)."""

    compute: tuple
    bandwidth: tuple
    detail: tuple


SCALESIM_FOLD_ORDER = "sc_outer"
"""SCALE-Sim runs the folds column folds outer, row folds inner (``for fc: for fr:``)."""


def layer_report(cfg: ScaleSimConfig, layer: ScaleSimLayer, mode: str = "event") -> LayerReport:
    """Simulate one SCALE-Sim layer on the cfg's machine and build its report rows.

    The folds run in SCALE-Sim's order, so that DRAM differences come from the memory model
    and not from a different loop order (``accelsim run`` picks the order moving fewest bytes).
    """
    machine = cfg.machine
    plan = plan_layer(machine, layer.op, cfg.dataflow, loop_order=SCALESIM_FOLD_ORDER)
    run = run_layer(machine, plan, mode)
    return report_from_run(cfg, layer, run)


def report_from_run(cfg: ScaleSimConfig, layer: ScaleSimLayer, run: LayerRun) -> LayerReport:
    """Report rows from a layer's engine run (see the module docstring for what is whose)."""
    machine = cfg.machine
    plan, sched = run.plan, run.schedule
    g = plan.geometry
    stall = int(sched.stall_cycles)
    total = scalesim_compute_cycles(g) + stall
    # (a one-cycle layer has Total Cycles 0, where SCALE-Sim divides by zero)
    overall = (layer.macs * 100) / (max(total, 1) * g.rows * g.cols)
    mapping_eff, compute_util = scalesim_fold_means(g)
    acc = sram_accesses(plan.gemm.m, plan.gemm.n, plan.gemm.k, g)
    ifmap_reads, filter_reads = acc.ifmap_reads, acc.filter_reads
    ofmap_writes = scalesim_ofmap_writes(plan.gemm.m, plan.gemm.n, g)
    s_if0, s_if1, s_f0, s_f1, s_of0, s_of1 = scalesim_sram_cycles(g)
    if layer.input_hw is not None:
        s_if1 = partial_window_ifmap_stop(g, layer)
    # With stalls the stop cycles move by the layer's stall cycles (accelsim's stalls).
    s_if1, s_f1, s_of1 = s_if1 + stall, s_f1 + stall, s_of1 + stall

    t = plan.traffic
    reps = plan.repeat
    bpc = machine.dram_bytes_per_cycle
    load, drain = plan.stream()
    ld, dd = transfer_cycles(load, bpc), transfer_cycles(drain, bpc)
    shift = sched.first_compute       # SCALE-Sim's cycle 0 is the first fold's first cycle
    ifm, flt = np.tile(t.ifmap_bytes, reps), np.tile(t.filter_bytes, reps)
    out = np.tile(t.ofmap_write_bytes + t.psum_write_bytes, reps)
    d_if0, d_if1 = _window(sched.load_start, ld, ifm, shift)
    d_f0, d_f1 = _window(sched.load_start, ld, flt, shift)
    d_of0, d_of1 = _window(sched.drain_start, dd, out, shift)
    wb = machine.array.operand_bytes
    d_if_n = int(round(float(ifm.sum()) / wb))
    d_f_n = int(round(float(flt.sum()) / wb))
    d_of_n = int(round(float(out.sum()) / machine.array.output_bytes))
    incl_prefetch = int(d_of1 - min(d_if0, d_f0))

    compute = (incl_prefetch, total, stall, overall, mapping_eff, compute_util)
    if np.isfinite(bpc):    # words over the cycles the operand's transfers span
        spans = (d_if1 - d_if0 + 1, d_f1 - d_f0 + 1, d_of1 - d_of0 + 1)
    else:                   # unlimited (CALC): the average the layer needs while it runs
        spans = (sched.last_compute - sched.first_compute,) * 3
    per = max(total, 1)
    bandwidth = (ifmap_reads / per, filter_reads / per, ofmap_writes / per,
                 d_if_n / spans[0], d_f_n / spans[1], d_of_n / spans[2])
    detail = tuple(float(x) if i % 3 != 2 else int(x) for i, x in enumerate(
        (s_if0, s_if1, ifmap_reads, s_f0, s_f1, filter_reads, s_of0, s_of1, ofmap_writes,
         d_if0, d_if1, d_if_n, d_f0, d_f1, d_f_n, d_of0, d_of1, d_of_n)))
    return LayerReport(compute, bandwidth, detail)


def _row(layer_id: int, items: tuple) -> str:
    return f"{layer_id}, " + ", ".join(str(x) for x in items) + ",\n"


def write_reports(outdir: str | os.PathLike, run_name: str, reports: list[LayerReport]) -> Path:
    """Write the three CSVs into ``outdir/run_name/``; returns that folder. The folder's name
    is :func:`accelsim.safe_text.safe_name` of ``run_name`` (a plain SCALE-Sim run name is
    kept as it is); every write is checked (:func:`accelsim.files.write_output`)."""
    from accelsim.files import write_output
    from accelsim.safe_text import safe_name

    folder = Path(outdir) / safe_name(run_name)
    parts = {"COMPUTE_REPORT.csv": (COMPUTE_HEADER, "compute"),
             "BANDWIDTH_REPORT.csv": (BANDWIDTH_HEADER, "bandwidth"),
             "DETAILED_ACCESS_REPORT.csv": (DETAIL_HEADER, "detail")}
    for fname, (header, attr) in parts.items():
        text = header + "".join(_row(i, getattr(rep, attr)) for i, rep in enumerate(reports))
        write_output(folder / fname, text)
    return folder


def run_scalesim(cfg_path: str | os.PathLike, topology: str | os.PathLike | None,
                 input_type: str = "conv", outdir: str | os.PathLike = "results",
                 mode: str = "event") -> tuple[Path, list[ScaleSimLayer], list[LayerReport]]:
    """Run a SCALE-Sim job through accelsim; returns (report folder, layers, reports)."""
    cfg = read_scalesim_cfg(cfg_path)
    topo = topology or cfg.topology
    if not topo:
        raise WorkloadError(str(cfg_path), "network_presets.TopologyCsvLoc", None,
                            "no topology given (pass -t TOPOLOGY)")
    layers = scalesim_layers(topo, input_type)
    arr = cfg.machine.array
    for layer in layers:  # refuse a layer too large to replay before any work
        g = geometry(layer.m, layer.n, layer.k, arr.rows, arr.cols, cfg.dataflow)
        check_count(g.folds, MAX_LAYER_FOLDS, file=str(topo), field=layer.name, what="folds")
    reports = [layer_report(cfg, layer, mode) for layer in layers]
    folder = write_reports(outdir, cfg.run_name, reports)
    return folder, layers, reports
