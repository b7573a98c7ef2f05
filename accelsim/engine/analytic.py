"""The fast path: the fold-stream schedule as a numba max-plus recurrence.

It computes exactly what :mod:`accelsim.engine.replay` computes by discrete events (a test
holds them equal over random layers, arrays, dataflows and bandwidths), without SimPy, so
sweeps can evaluate thousands of design points per second.

Imports: numpy, numba, units, errors, config.systolic, hw._systolic_kernels, mapping.systolic,
engine.schedule.
"""

from __future__ import annotations

import numba
import numpy as np

from accelsim.engine.schedule import FoldSchedule, transfer_cycles
from accelsim.hw._systolic_kernels import best_order, fold_traffic


@numba.njit(cache=True)
def _recurrence(load_dur, drain_dur, p, n, lat):
    nf = load_dur.shape[0]
    slots = 2 * n
    ls = np.zeros(nf, np.int64)
    lr = np.zeros(nf, np.int64)
    cs = np.zeros(nf, np.int64)
    ce = np.zeros(nf, np.int64)
    ds = np.zeros(nf, np.int64)
    de = np.zeros(nf, np.int64)
    t = 0  # the DMA queue's clock: entries are served in order, one at a time
    for f in range(min(slots, nf)):
        ls[f] = t
        if load_dur[f] > 0:
            t += load_dur[f]
            lr[f] = t + lat
        else:
            lr[f] = t
    for f in range(nf):
        start = lr[f]
        if f >= n and ce[f - n] > start:
            start = ce[f - n]
        if f >= slots and de[f - slots] > start:
            start = de[f - slots]
        cs[f] = start
        ce[f] = start + p
        # drain of fold f (waits for the fold to finish, then for its turn in the queue)
        if ce[f] > t:
            t = ce[f]
        ds[f] = t
        t += drain_dur[f]
        de[f] = t
        # load of fold f + slots into the slot that fold f has freed
        g = f + slots
        if g < nf:
            ls[g] = t
            if load_dur[g] > 0:
                t += load_dur[g]
                lr[g] = t + lat
            else:
                lr[g] = t
    return ls, lr, cs, ce, ds, de


def schedule_analytic(load_bytes: np.ndarray, drain_bytes: np.ndarray, fold_cycles: int,
                      arrays: int, bytes_per_cycle: float, latency_cycles: int) -> FoldSchedule:
    """The layer's fold schedule by recurrence (cycles)."""
    ld = transfer_cycles(load_bytes, bytes_per_cycle)
    dd = transfer_cycles(drain_bytes, bytes_per_cycle)
    arrays_out = _recurrence(ld, dd, int(fold_cycles), int(arrays), int(latency_cycles))
    return FoldSchedule(*arrays_out, fold_cycles=int(fold_cycles), arrays=int(arrays))


# ---------------------------------------------------------------- many design points at once

BATCH_FIELDS = ("compute.array.rows", "compute.array.cols", "compute.array.count",
                "memory.sram.capacity_bytes", "memory.dram.bandwidth_bytes_per_s",
                "memory.dram.latency_s", "clock_hz", "dataflow")
"""Design-point fields :func:`evaluate_layer_batch` varies (others keep the machine's value)."""


_RES_COLUMNS = 19
"""Columns of the batch kernel's result (see :func:`_batch_point`)."""

DETAIL_COLUMNS = ("sram_ifmap_reads", "sram_filter_reads", "sram_ofmap_writes",
                  "sram_ofmap_reads", "dram_ifmap_read_bytes", "dram_filter_read_bytes",
                  "dram_psum_read_bytes", "dram_ofmap_write_bytes", "dram_psum_write_bytes",
                  "row_folds")
"""The layer's figures :func:`evaluate_layer_batch` adds with ``detail=True`` (the
``Result.layers`` columns of those names, and the geometry's row folds): what its action
records are made of."""


@numba.njit(cache=True)
def _batch_point(p, res, df, rows, cols, count, cap, bw, lat_s, clock, m, n, k, repeat,
                 fi, ff, fo, eff, word_b, out_b, psum_b, ifmap_factor, sram_bw):
    """Row ``p`` of the batch: one design point through mapping, traffic and schedule."""
    r = rows[p]
    c = cols[p]
    d = df[p]
    if d == 0:
        sr, sc, t = m, n, k
        pc = t + r + c - 2
    elif d == 1:
        sr, sc, t = k, n, m
        pc = 2 * r + c + t - 2
    else:
        sr, sc, t = k, m, n
        pc = 2 * r + c + t - 2
    fr = (sr + r - 1) // r
    fcn = (sc + c - 1) // c
    nf = fr * fcn
    ci = cap[p] * fi
    cf = cap[p] * ff
    co = cap[p] * fo
    sr_outer, block = best_order(d, sr, sc, t, r, c, word_b, out_b, psum_b, ci, cf, co,
                                 ifmap_factor)
    ifm, flt, psr, ofw, psw = fold_traffic(d, sr, sc, t, r, c, word_b, out_b, psum_b,
                                           ci, cf, co, sr_outer, block, ifmap_factor)
    # SRAM accesses (words) and the SRAM-port limit on fold cycles
    if d == 0:
        a_in, a_w, a_ow, a_or = fcn * m * k, fr * k * n, m * n, 0
    elif d == 1:
        a_in, a_w, a_ow, a_or = fcn * m * k, k * n, fr * m * n, (fr - 1) * m * n
    else:
        a_in, a_w, a_ow, a_or = m * k, fcn * k * n, fr * m * n, (fr - 1) * m * n
    fold_cycles = pc
    if sram_bw > 0:
        rate = sram_bw / clock[p] / word_b / count[p]
        need = np.ceil((a_in + a_w + a_ow + a_or) / nf / rate - 1e-9)
        if need > fold_cycles:
            fold_cycles = int(need)
    total_f = nf * repeat
    load = np.empty(total_f)
    drain = np.empty(total_f)
    for q in range(repeat):
        for f in range(nf):
            load[q * nf + f] = ifm[f] + flt[f] + psr[f]
            drain[q * nf + f] = ofw[f] + psw[f]
    bpc = bw[p] * eff / clock[p]
    lat = int(np.ceil(lat_s[p] * clock[p] - 1e-9))
    ld = np.zeros(total_f, np.int64)
    dd = np.zeros(total_f, np.int64)
    if np.isfinite(bpc):
        for f in range(total_f):
            ld[f] = max(0, int(np.ceil(load[f] / bpc - 1e-9)))
            dd[f] = max(0, int(np.ceil(drain[f] / bpc - 1e-9)))
    ls, lr, cs, ce, ds, de = _recurrence(ld, dd, fold_cycles, count[p], lat)
    end = max(de.max(), ce.max())
    compute = ((total_f + count[p] - 1) // count[p]) * fold_cycles
    stall = ce.max() - cs[0] - compute
    moved = (ifm.sum() * repeat + flt.sum() * repeat + psr.sum() * repeat
             + ofw.sum() * repeat + psw.sum() * repeat)
    res[p, 0] = end
    res[p, 1] = compute
    res[p, 2] = stall
    res[p, 3] = moved
    res[p, 4] = (a_in + a_w + a_or) * repeat
    res[p, 5] = a_ow * repeat
    res[p, 6] = r * c * count[p]
    res[p, 7] = total_f
    res[p, 8] = fold_cycles
    # what the layer's action records need (detail=True): array-side SRAM words per operand,
    # DRAM bytes per operand and direction, row folds
    res[p, 9] = a_in * repeat
    res[p, 10] = a_w * repeat
    res[p, 11] = a_ow * repeat
    res[p, 12] = a_or * repeat
    res[p, 13] = ifm.sum() * repeat
    res[p, 14] = flt.sum() * repeat
    res[p, 15] = psr.sum() * repeat
    res[p, 16] = ofw.sum() * repeat
    res[p, 17] = psw.sum() * repeat
    res[p, 18] = fr


@numba.njit(cache=True)
def _batch_serial(df, rows, cols, count, cap, bw, lat_s, clock, m, n, k, repeat,
                  fi, ff, fo, eff, word_b, out_b, psum_b, ifmap_factor, sram_bw):
    res = np.zeros((df.shape[0], _RES_COLUMNS))
    for p in range(df.shape[0]):
        _batch_point(p, res, df, rows, cols, count, cap, bw, lat_s, clock, m, n, k, repeat,
                     fi, ff, fo, eff, word_b, out_b, psum_b, ifmap_factor, sram_bw)
    return res


@numba.njit(cache=True, parallel=True)
def _batch_parallel(df, rows, cols, count, cap, bw, lat_s, clock, m, n, k, repeat,
                    fi, ff, fo, eff, word_b, out_b, psum_b, ifmap_factor, sram_bw):
    res = np.zeros((df.shape[0], _RES_COLUMNS))
    for p in numba.prange(df.shape[0]):
        _batch_point(p, res, df, rows, cols, count, cap, bw, lat_s, clock, m, n, k, repeat,
                     fi, ff, fo, eff, word_b, out_b, psum_b, ifmap_factor, sram_bw)
    return res


def evaluate_layer_batch(machine, op, points, *, parallel: bool = True, detail: bool = False):
    """The analytic fast path for one GEMM/conv layer over P design points at once.

    ``points`` maps fields of :data:`BATCH_FIELDS` (dotted hardware paths and ``"dataflow"``)
    to arrays of length P; a field not given keeps the machine's value. Returns arrays of
    length P with the keys of ``simulate(...).totals``; each element equals
    ``simulate(machine with that point's overrides, op, dataflow=..., mode="analytic",
    energy=False).totals`` (cycles exactly; byte sums to float rounding).
    ``parallel``: spread the points over this process's cores (numba threads); sweep workers,
    which are processes already, pass False. ``detail``: also the arrays of
    :data:`DETAIL_COLUMNS` (SRAM words, DRAM bytes per operand and direction, row folds),
    equal to the layer's row of ``simulate(...).layers`` (words exactly, bytes to float
    rounding): what pricing its energy needs.
    """
    from accelsim.config.systolic import DATAFLOWS
    from accelsim.errors import ConfigError
    from accelsim.mapping.systolic import ifmap_fetch_factor
    from accelsim.units import FLOP_PER_MAC, parse_bandwidth, parse_bytes, parse_time

    unknown = sorted(set(points) - set(BATCH_FIELDS))
    if unknown:
        raise ConfigError(None, unknown[0], None,
                          f"not a batch field (batch fields: {', '.join(BATCH_FIELDS)})")
    if not hasattr(op, "lower"):
        raise ConfigError(None, "op", getattr(op, "name", op),
                          "batch evaluation needs a GEMM or conv")
    sizes = {len(v) for v in points.values()}
    if len(sizes) > 1:
        raise ConfigError(None, "points", sorted(sizes), "all arrays must have the same length")
    npts = sizes.pop() if sizes else 1
    arr, sram, dram = machine.array, machine.memory.sram, machine.memory.dram

    def col(name, default, parse=float, dtype=np.float64):
        if name not in points:
            return np.full(npts, default, dtype)
        vals = points[name]
        if np.asarray(vals).dtype.kind in "OUS":
            vals = [parse(v) for v in vals]
        return np.asarray(vals, dtype=dtype)

    if "dataflow" in points:
        bad = [d for d in points["dataflow"] if d not in DATAFLOWS]
        if bad:
            raise ConfigError(None, "dataflow", bad[0], f"must be one of {', '.join(DATAFLOWS)}")
        df = np.array([DATAFLOWS.index(str(d)) for d in points["dataflow"]], np.int64)
    elif arr.dataflow in DATAFLOWS:
        df = np.full(npts, DATAFLOWS.index(arr.dataflow), np.int64)
    else:   # a spatial default (rs on Eyeriss) has no batch kernel: evaluate point by point
        raise ConfigError(None, "compute.array.dataflow", arr.dataflow,
                          f"the batch evaluator runs {', '.join(DATAFLOWS)} only")
    rows = col("compute.array.rows", arr.rows, int, np.int64)
    cols = col("compute.array.cols", arr.cols, int, np.int64)
    count = col("compute.array.count", arr.count, int, np.int64)
    cap = col("memory.sram.capacity_bytes", sram.capacity_bytes, parse_bytes)
    bw = col("memory.dram.bandwidth_bytes_per_s", dram.bandwidth_bytes_per_s, parse_bandwidth)
    lat = col("memory.dram.latency_s", dram.latency_s, parse_time)
    clock = col("clock_hz", machine.clock_hz)
    for name, a in (("compute.array.rows", rows), ("compute.array.cols", cols),
                    ("compute.array.count", count), ("memory.sram.capacity_bytes", cap),
                    ("memory.dram.bandwidth_bytes_per_s", bw), ("clock_hz", clock)):
        if (a <= 0).any():
            raise ConfigError(None, name, a[a <= 0][0], "must be > 0")
    g = op.lower()
    kernel = _batch_parallel if parallel else _batch_serial
    res = kernel(df, rows, cols, count, cap, bw, lat, clock, g.m, g.n, g.k, g.repeat,
                        sram.ifmap_fraction, sram.filter_fraction, sram.ofmap_fraction,
                        dram.efficiency, float(arr.operand_bytes), float(arr.output_bytes),
                        float(arr.psum_bytes), float(ifmap_fetch_factor(op, g)),
                        float(sram.bandwidth_bytes_per_s or 0.0))
    total = res[:, 0].astype(np.int64)
    time_s = total / clock
    macs = np.full(npts, g.macs, np.int64)
    flops = FLOP_PER_MAC * macs
    with np.errstate(divide="ignore", invalid="ignore"):
        tflops = np.where(time_s > 0, flops / time_s / 1e12, 0.0)
        util = np.where(total > 0, macs / (res[:, 6] * total), 0.0)
    out = {"layers": np.ones(npts, np.int64), "total_cycles": total,
           "compute_cycles": res[:, 1].astype(np.int64),
           "stall_cycles": res[:, 2].astype(np.int64), "time_s": time_s, "macs": macs,
           "flops": flops, "flop_per_s": tflops * 1e12, "tflops_per_s": tflops,
           "overall_util": util,
           "dram_bytes": res[:, 3], "sram_reads": res[:, 4].astype(np.int64),
           "sram_writes": res[:, 5].astype(np.int64)}
    if detail:
        for j, name in enumerate(DETAIL_COLUMNS):
            col = res[:, 9 + j]
            out[name] = col if name.startswith("dram_") else col.astype(np.int64)
    return out
