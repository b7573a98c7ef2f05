"""The fold-stream schedule: plain arrays both engine paths fill, and the layer statistics.

Pipeline (one layer on ``n`` identical arrays, fold ``f`` on array ``f % n``):

* operand buffers are double-buffered per array: the load of fold ``f + 2n`` reuses the slot
  of fold ``f``, so it may start only when fold ``f`` has finished computing;
* one DMA queue serves DRAM in a static (compiled) order: loads of the first ``2n`` folds,
  then for every fold ``f``: drain of ``f``'s outputs, load of fold ``f + 2n``. A transfer of
  ``b`` bytes holds the queue ``ceil(b / bytes_per_cycle)`` cycles; loaded data is usable
  ``latency`` cycles later. A fold with nothing to move costs no DMA time;
* fold ``f`` computes ``P`` cycles once its operands are loaded, its array has finished fold
  ``f - n`` and its output slot (that of fold ``f - 2n``) has drained.

Imports: numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class FoldSchedule:
    """Start/end cycle of every transfer and fold of one layer (integers, layer starts at 0)."""

    load_start: np.ndarray
    load_ready: np.ndarray
    compute_start: np.ndarray
    compute_end: np.ndarray
    drain_start: np.ndarray
    drain_end: np.ndarray
    fold_cycles: int
    arrays: int

    @property
    def folds(self) -> int:
        """Folds in the stream."""
        return len(self.compute_start)

    @property
    def compute_cycles(self) -> int:
        """Cycles the busiest array computes: ``ceil(F / n) * P``."""
        return math.ceil(self.folds / self.arrays) * self.fold_cycles

    @property
    def first_compute(self) -> int:
        """Cycle the first fold starts (the prologue: initial operand loads)."""
        return int(self.compute_start[0])

    @property
    def last_compute(self) -> int:
        """Cycle the last fold ends."""
        return int(self.compute_end.max())

    @property
    def stall_cycles(self) -> int:
        """Cycles between the first and last fold that the array waits for memory."""
        return self.last_compute - self.first_compute - self.compute_cycles

    @property
    def end(self) -> int:
        """Cycle the last output has been written to DRAM."""
        return int(max(self.drain_end.max(), self.compute_end.max()))

    @property
    def epilogue_cycles(self) -> int:
        """Cycles after the last fold until its outputs are in DRAM."""
        return self.end - self.last_compute

    def equals(self, other: FoldSchedule) -> bool:
        """Same cycle for every event (the fast-path contract)."""
        return all(np.array_equal(getattr(self, f), getattr(other, f)) for f in
                   ("load_start", "load_ready", "compute_start", "compute_end", "drain_start",
                    "drain_end"))


def transfer_cycles(nbytes: np.ndarray, bytes_per_cycle: float) -> np.ndarray:
    """Cycles each transfer holds the DMA queue: ``ceil(bytes / bytes_per_cycle)`` (0 for 0 B)."""
    if not math.isfinite(bytes_per_cycle):
        return np.zeros(len(nbytes), dtype=np.int64)
    cyc = np.ceil(np.asarray(nbytes, dtype=np.float64) / bytes_per_cycle - 1e-9)
    return np.maximum(cyc, 0).astype(np.int64)
