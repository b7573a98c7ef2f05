"""Mapping of a layer onto a systolic machine: dataflow, loop order, and the fold stream.

The mapper lowers the operator to GEMM (SCALE-Sim's way), takes the requested dataflow (or
the machine's default), and chooses the fold order -- row- or column-major, with blocks of
row (column) folds sized so that their tiles stay in the SRAM -- that moves the fewest DRAM
bytes; ties keep the plain row-major order. (SCALE-Sim runs column folds outer, which
``loop_order="sc_outer"`` reproduces; the SCALE-Sim front door uses it.)

Imports: errors, config.systolic, config.systolic_machine, hw.systolic, workload.ops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelsim.config.systolic import DATAFLOWS
from accelsim.config.systolic_machine import SystolicMachine
from accelsim.errors import ConfigError
from accelsim.hw.systolic import (
    FoldGeometry,
    FoldTraffic,
    best_fold_order,
    dram_traffic,
    geometry,
    sram_accesses,
    sram_limited_fold_cycles,
)
from accelsim.workload.ops import Conv2d, GemmShape


@dataclass(frozen=True, slots=True)
class LayerPlan:
    """One layer's fold stream: what each fold loads, computes and drains."""

    name: str
    op_kind: str
    gemm: GemmShape
    geometry: FoldGeometry
    traffic: FoldTraffic
    repeat: int
    arrays: int
    macs: int
    fold_cycles: int

    @property
    def folds(self) -> int:
        """Folds in the whole stream (all repeats)."""
        return self.geometry.folds * self.repeat

    def stream(self) -> tuple[np.ndarray, np.ndarray]:
        """(load bytes, drain bytes) per fold over all repeats, in execution order."""
        load = np.tile(self.traffic.load_bytes, self.repeat)
        drain = np.tile(self.traffic.drain_bytes, self.repeat)
        return load, drain

    def operand_totals(self) -> dict[str, float]:
        """DRAM bytes per operand and direction over the whole layer."""
        t = self.traffic
        r = self.repeat
        return {"dram_ifmap_read_bytes": float(t.ifmap_bytes.sum()) * r,
                "dram_filter_read_bytes": float(t.filter_bytes.sum()) * r,
                "dram_psum_read_bytes": float(t.psum_read_bytes.sum()) * r,
                "dram_ofmap_write_bytes": float(t.ofmap_write_bytes.sum()) * r,
                "dram_psum_write_bytes": float(t.psum_write_bytes.sum()) * r}


def ifmap_fetch_factor(op: object, gemm: GemmShape) -> float:
    """Raw input elements / im2col elements (<= 1) for convolutions; 1 for GEMMs."""
    if isinstance(op, Conv2d):
        raw = op.n * (op.c // op.groups) * op.h * op.w
        return min(1.0, raw / (gemm.m * gemm.k))
    return 1.0


def plan_layer(machine: SystolicMachine, op: object, dataflow: str | None = None,
               loop_order: str = "auto") -> LayerPlan:
    """Map ``op`` (any operator with ``lower()``) onto ``machine``.

    ``loop_order``: ``"auto"`` (fewer DRAM bytes), ``"sr_outer"`` or ``"sc_outer"``.
    """
    df = dataflow or machine.array.dataflow
    if df not in DATAFLOWS:
        raise ConfigError(None, "dataflow", df,
                          f"unknown dataflow (use one of {', '.join(DATAFLOWS)})")
    if not hasattr(op, "lower"):
        raise ConfigError(None, "op", getattr(op, "name", op),
                          f"operator kind '{getattr(op, 'kind', type(op).__name__)}' does not run "
                          "on a systolic array (only GEMM and Conv2d lower to GEMM)")
    arr = machine.array
    sram = machine.memory.sram
    gemm = op.lower()
    g = geometry(gemm.m, gemm.n, gemm.k, arr.rows, arr.cols, df)
    kwargs = dict(word_bytes=arr.operand_bytes, out_bytes=arr.output_bytes,
                  psum_bytes=arr.psum_bytes, ifmap_capacity=sram.ifmap_bytes,
                  filter_capacity=sram.filter_bytes, ofmap_capacity=sram.ofmap_bytes,
                  ifmap_fetch_factor=ifmap_fetch_factor(op, gemm))
    if loop_order == "sr_outer":
        traffic = dram_traffic(g, sr_outer=True, **kwargs)
    elif loop_order == "sc_outer":
        traffic = dram_traffic(g, sr_outer=False, **kwargs)
    elif loop_order == "auto":
        sr_outer, block = best_fold_order(g, **kwargs)
        traffic = dram_traffic(g, sr_outer=sr_outer, block=block, **kwargs)
    else:
        raise ConfigError(None, "loop_order", loop_order, "must be auto, sr_outer or sc_outer")
    acc = sram_accesses(gemm.m, gemm.n, gemm.k, g)
    words = (acc.ifmap_reads + acc.filter_reads + acc.ofmap_writes + acc.ofmap_reads) / g.folds
    rate = None
    if sram.bandwidth_bytes_per_s is not None:
        rate = sram.bandwidth_bytes_per_s / machine.clock_hz / arr.operand_bytes / arr.count
    fold_cycles = sram_limited_fold_cycles(g, words, rate)
    return LayerPlan(getattr(op, "name", "layer"), getattr(op, "kind", "gemm"), gemm, g, traffic,
                     gemm.repeat, arr.count, gemm.macs, fold_cycles)


def layer_sram_words(plan: LayerPlan) -> dict[str, int]:
    """Array-side SRAM accesses of the whole layer (words, all repeats)."""
    acc = sram_accesses(plan.gemm.m, plan.gemm.n, plan.gemm.k, plan.geometry)
    r = plan.repeat
    return {"sram_ifmap_reads": acc.ifmap_reads * r, "sram_filter_reads": acc.filter_reads * r,
            "sram_ofmap_writes": acc.ofmap_writes * r, "sram_ofmap_reads": acc.ofmap_reads * r}
