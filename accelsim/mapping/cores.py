"""A layer on a chip of several identical cores (TPU v4: two TensorCores of four MXUs each),
and what one compiled call pays on top of the fold stream (``call:`` in the machine YAML).

How a chip's layer is cut (the megacore split of XLA's partitioner, as far as a GEMM shows
it): the cores work on disjoint slices of the layer at once, each with its own arrays and
SRAM (VMEM), all sharing the chip's DRAM (HBM). A GEMM's output is cut along the dimension of
more tiles of ``call.tile`` (the MXU side; rows ``m`` with shared-weight batches folded in,
or columns ``n``), in whole tiles: a core gets ``ceil(ceil(m / tile) / cores) * tile`` rows
at most, padding included, so a GEMM of one tile runs on one core while the other idles; a
batched GEMM with its own weights per entry (attention) is cut by batch entries; a convolution
by images of its batch (one image: one core). Every core runs the same slice (the largest one),
so the chip's time is one core's.

What one call pays (:class:`accelsim.config.systolic.CallCosts`, each with its source in the
YAML):

* ``dispatch_s`` per call (program launch, DMA descriptor set-up, the first tile's load and
  last tile's store that no pipeline hides), added to each layer's time;
* ``sustained_array_fraction``: the fraction of the fold rate the arrays sustain under the
  compiler's schedule (each fold's cycles divided by it, so the HBM-VMEM double-buffered
  fold stream still overlaps the loads with the longer folds);
* precision conversion: an op whose precision differs from the array's (fp16 operands on
  bf16 MXUs) has each input element of a core's slice converted once,
  ``convert_elements_per_cycle`` per core per cycle, not overlapped with the array;
* the output drain: each output element leaves the arrays' fp32 accumulators through the
  vector path (converted to the output precision, stored), ``output_elements_per_cycle``;
* HBM-VMEM pipelining is the fold stream itself: each core's view has ``1 / cores`` of the
  DRAM bandwidth and its own SRAM (:func:`core_view`).

Imports: precision, config.systolic_machine, workload.ops (dataclasses only).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from accelsim.config.systolic_machine import SystolicMachine
from accelsim.precision import PRECISION_BYTES
from accelsim.workload.ops import Conv2d, Gemm


def is_chip(machine: Any) -> bool:
    """A systolic machine with more than one core or with per-call costs."""
    return isinstance(machine, SystolicMachine) and (
        machine.compute.cores > 1 or machine.call is not None)


def core_view(machine: SystolicMachine) -> SystolicMachine:
    """One core of the chip as a machine of its own: its arrays and SRAM, ``1 / cores`` of
    the DRAM bandwidth, no cores and no call costs (the fold-stream engine runs it)."""
    cores = machine.compute.cores
    dram = machine.memory.dram
    memory = dataclasses.replace(machine.memory, dram=dataclasses.replace(
        dram, bandwidth_bytes_per_s=dram.bandwidth_bytes_per_s / cores))
    return dataclasses.replace(machine, compute=dataclasses.replace(machine.compute, cores=1),
                               memory=memory, call=None)


def core_piece(machine: SystolicMachine, piece: Any) -> Any:
    """The slice of one primitive op (GEMM or convolution) the busiest core runs (module
    docstring); an op that does not lower to a GEMM is returned unchanged."""
    cores = machine.compute.cores
    if cores == 1 or not hasattr(piece, "lower"):
        return piece
    tile = machine.call.tile if machine.call is not None else machine.array.rows
    if isinstance(piece, Gemm):
        if not piece.shared_weights and piece.batch >= cores:
            return dataclasses.replace(piece, batch=math.ceil(piece.batch / cores))
        rows = piece.m * (piece.batch if piece.shared_weights else 1)
        flat = dataclasses.replace(piece, m=rows, batch=1) if piece.shared_weights else piece
        if math.ceil(rows / tile) >= math.ceil(piece.n / tile):
            return dataclasses.replace(flat, m=_slice(flat.m, tile, cores))
        return dataclasses.replace(flat, n=_slice(piece.n, tile, cores))
    if isinstance(piece, Conv2d) and piece.n > 1:
        return dataclasses.replace(piece, n=math.ceil(piece.n / cores))
    return piece


def _slice(extent: int, tile: int, cores: int) -> int:
    """The largest slice of ``extent`` cut in whole tiles over ``cores`` (a single tile: one
    core takes it all)."""
    return min(extent, math.ceil(math.ceil(extent / tile) / cores) * tile)


def sustained_plan(machine: SystolicMachine, plan: Any) -> Any:
    """``plan`` with each fold's cycles divided by ``call.sustained_array_fraction`` (a
    vector-unit plan, or a machine without call costs: unchanged)."""
    call = machine.call
    if call is None or not hasattr(plan, "geometry"):
        return plan
    return dataclasses.replace(plan, fold_cycles=math.ceil(
        plan.fold_cycles / call.sustained_array_fraction - 1e-9))


def call_elements(machine: SystolicMachine, piece: Any) -> tuple[float, float]:
    """``(converted, drained)`` elements of one core's slice ``piece``: its GEMM's input
    elements (``m*k + k*n`` per repeat) when the op's precision differs from the array's
    (else 0), and its output elements (``m*n`` per repeat)."""
    if not hasattr(piece, "lower"):
        return 0.0, 0.0
    g = piece.lower()
    dtype = getattr(piece, "dtype", None)
    differs = dtype is not None and dtype != machine.array.precision and dtype in PRECISION_BYTES
    converted = float((g.m * g.k + g.k * g.n) * g.repeat) if differs else 0.0
    return converted, float(g.m * g.n * g.repeat)


def call_cycles(machine: SystolicMachine, piece: Any) -> float:
    """Cycles one call adds to its layer on top of the fold stream: dispatch, the conversion
    of the core slice's inputs and the drain of its outputs (:func:`call_elements`), one
    after the other on the core's vector path."""
    call = machine.call
    if call is None:
        return 0.0
    converted, drained = call_elements(machine, piece)
    cycles = call.dispatch_s * machine.clock_hz
    if converted and call.convert_elements_per_cycle:
        cycles += converted / call.convert_elements_per_cycle
    if drained and call.output_elements_per_cycle:
        cycles += drained / call.output_elements_per_cycle
    return cycles


SCALED = ("macs", "flops", "sram_ifmap_reads", "sram_filter_reads", "sram_ofmap_writes",
          "sram_ofmap_reads", "sram_reads", "sram_writes", "dram_ifmap_read_bytes",
          "dram_filter_read_bytes", "dram_psum_read_bytes", "dram_ofmap_write_bytes",
          "dram_psum_write_bytes", "dram_bytes")
"""Layer-row counts that the chip's cores add up (each core runs the same slice)."""


def chip_row(machine: SystolicMachine, row: dict[str, Any], extra_cycles: float,
             macs: int, flops: float) -> dict[str, Any]:
    """A core's layer row as the chip's: counts over all busy cores (:data:`SCALED`; the
    op's own ``macs``/``flops``, padding not counted as work), ``extra_cycles`` (the call's)
    added to the cycles and the time, utilisation and DRAM bandwidth over the chip."""
    cores = machine.compute.cores
    out = dict(row)
    for c in SCALED:
        if c in out:
            out[c] = out[c] * cores
    out["macs"], out["flops"] = macs, flops
    out["total_cycles"] = int(math.ceil(row["total_cycles"] + extra_cycles - 1e-9))
    out["stall_cycles"] = out["total_cycles"] - row["compute_cycles"]
    out["time_s"] = out["total_cycles"] / machine.clock_hz
    pes = machine.array.pes * cores
    out["overall_util"] = macs / (pes * out["total_cycles"]) if out["total_cycles"] else 0.0
    out["dram_bw_bytes_per_s"] = out["dram_bytes"] / out["time_s"] if out["time_s"] else 0.0
    return out
