"""Systolic-array cost model: pure functions of (array shape, dataflow, GEMM) -> cycles, counts.

The geometry follows SCALE-Sim 3.0 exactly (``shared/reference/scalesim_model.md``):

=========  ====  ====  ====  ===================  ===================
dataflow   Sr    Sc    T     row folds Fr         col folds Fc
=========  ====  ====  ====  ===================  ===================
os         M     N     K     ceil(M/R)            ceil(N/C)
ws         K     N     M     ceil(K/R)            ceil(N/C)
is         K     M     N     ceil(K/R)            ceil(M/C)
=========  ====  ====  ====  ===================  ===================

Folds run one after another on one array; each costs ``P`` cycles including fill and drain:
``P = T + R + C - 2`` (os) and ``P = 2R + C + T - 2`` (ws, is: R extra cycles load the
stationary operand). Compute cycles of a layer are ``F * P`` (SCALE-Sim reports the 0-based
index of the last cycle, ``F * P - 1``; see :func:`scalesim_compute_cycles`).

Utilisation definitions (every report uses these names):

* ``mapping_efficiency`` = mean over folds of used PEs / all PEs = ``Sr*Sc / (F*R*C)``.
* ``compute_util`` = MACs / (PEs x compute cycles): how busy the PEs are while the array
  runs, fill and drain included (SCALE-Sim's "Compute Util" under OS; under WS/IS SCALE-Sim
  divides by ``2R+2C+T-3`` instead of ``P``, reproduced only by the SCALE-Sim front door).
* ``overall_util`` = MACs / (PEs x total cycles), stalls and memory prologue included.

All counts are in words (operand elements) unless a name ends in ``_bytes``.

Imports: numpy, numba, hw._systolic_kernels, hw.dataflows (the strategies), hw.dataflows.base.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accelsim.hw import dataflows
from accelsim.hw._systolic_kernels import best_order, fold_traffic
from accelsim.hw.dataflows.base import FoldGeometry, SramAccesses


def geometry(m: int, n: int, k: int, rows: int, cols: int, dataflow: str) -> FoldGeometry:
    """Fold geometry of ``out[m x n] = in[m x k] @ w[k x n]`` on ``rows x cols``.

    ``dataflow`` names a registered systolic strategy (:mod:`accelsim.hw.dataflows`).
    """
    return dataflows.systolic(dataflow).geometry(m, n, k, rows, cols)


def compute_cycles(g: FoldGeometry) -> int:
    """Stall-free compute cycles on one array: ``F * P``."""
    return g.folds * g.fold_cycles


def scalesim_compute_cycles(g: FoldGeometry) -> int:
    """SCALE-Sim's ``Total Cycles`` without stalls: the 0-based last cycle, ``F * P - 1``."""
    return g.folds * g.fold_cycles - 1


def mapping_efficiency(g: FoldGeometry) -> float:
    """Mean fraction of PEs mapped over the folds, ``Sr*Sc / (F*R*C)`` (0-1)."""
    return (g.sr * g.sc) / (g.folds * g.rows * g.cols)


def compute_util(g: FoldGeometry) -> float:
    """MACs / (PEs x compute cycles), fill and drain included (0-1)."""
    return mapping_efficiency(g) * g.t / g.fold_cycles


def scalesim_compute_util(g: FoldGeometry) -> float:
    """SCALE-Sim's ``Compute Util`` (0-1): under ws/is its per-fold length is 2R+2C+T-3."""
    if g.dataflow == "os":
        return compute_util(g)
    length = 2 * g.rows + 2 * g.cols + g.t - 3
    return mapping_efficiency(g) * g.t / length


def sram_accesses(m: int, n: int, k: int, g: FoldGeometry) -> SramAccesses:
    """SRAM reads/writes the array makes (words); equals SCALE-Sim's counts except the OS quirk.

    Delegates to the strategy (:meth:`SystolicDataflow.sram_accesses`): under ws/is every row
    fold writes its partial sums and every fold after the first reads them back (SCALE-Sim
    does not count these reads).
    """
    return dataflows.systolic(g.dataflow).sram_accesses(m, n, k, g)


def scalesim_ofmap_writes(m: int, n: int, g: FoldGeometry) -> int:
    """SCALE-Sim's ``SRAM OFMAP Writes``: under os it adds ``R + C`` per fold (a code artefact)."""
    acc = sram_accesses(m, n, 1 if g.dataflow != "os" else g.t, g)
    if g.dataflow == "os":
        return acc.ofmap_writes + g.folds * (g.rows + g.cols)
    return acc.ofmap_writes


def sram_limited_fold_cycles(g: FoldGeometry, words_per_fold: float,
                             sram_words_per_cycle: float | None) -> int:
    """Cycles of one fold when the SRAM delivers ``sram_words_per_cycle`` (None: unlimited).

    The fold needs ``words_per_fold`` array-side accesses; at most ``sram_words_per_cycle``
    are served per cycle, so a fold takes ``max(P, ceil(words / rate))`` cycles.
    """
    if sram_words_per_cycle is None:
        return g.fold_cycles
    return max(g.fold_cycles, math.ceil(words_per_fold / sram_words_per_cycle - 1e-9))


@dataclass(frozen=True, slots=True)
class FoldTraffic:
    """Per-fold DRAM traffic of one GEMM (bytes), in execution order, for one loop order."""

    ifmap_bytes: np.ndarray
    filter_bytes: np.ndarray
    psum_read_bytes: np.ndarray
    ofmap_write_bytes: np.ndarray
    psum_write_bytes: np.ndarray
    sr_outer: bool
    block: int = 1

    @property
    def load_bytes(self) -> np.ndarray:
        """Bytes loaded before each fold (inputs, weights, partial sums read back)."""
        return self.ifmap_bytes + self.filter_bytes + self.psum_read_bytes

    @property
    def drain_bytes(self) -> np.ndarray:
        """Bytes written after each fold (final outputs and spilled partial sums)."""
        return self.ofmap_write_bytes + self.psum_write_bytes

    @property
    def total_bytes(self) -> float:
        """All DRAM bytes moved."""
        return float(self.load_bytes.sum() + self.drain_bytes.sum())


def dram_traffic(g: FoldGeometry, *, word_bytes: float, out_bytes: float, psum_bytes: float,
                 ifmap_capacity: float, filter_capacity: float, ofmap_capacity: float,
                 sr_outer: bool, block: int = 1, ifmap_fetch_factor: float = 1.0) -> FoldTraffic:
    """DRAM bytes each fold must load and drain, given SRAM capacities (bytes) and fold order.

    Fold order: ``sr_outer`` runs blocks of ``block`` row folds, each over all column folds
    (``for ib: for j: for i in ib``); otherwise blocks of column folds (``for jb: for i: for
    j in jb``). ``block = 1`` is the plain row- or column-major order.

    Reuse rule per operand buffer (capacity ``cap``, double-buffered): a tile is fetched when
    it is not resident; the buffer keeps tiles least-recently-used in the half that is not
    being prefetched into, ``floor(cap / 2 / tile)`` of them (all of them when the whole
    operand fits in ``cap``). Partial sums (ws/is with more than one row fold) stay on chip
    while their output tile is resident in the ofmap buffer by the same rule; an evicted,
    unfinished tile is written to DRAM (``psum_bytes`` per word) and read back at its next
    visit. ``ifmap_fetch_factor`` (<= 1) scales ifmap bytes for convolutions whose im2col
    matrix repeats input elements (raw input / im2col size): the address generator fetches
    each input element once per tile.
    """
    arrays = fold_traffic(dataflows.systolic(g.dataflow).code, g.sr, g.sc, g.t, g.rows, g.cols,
                          float(word_bytes), float(out_bytes), float(psum_bytes),
                          float(ifmap_capacity), float(filter_capacity), float(ofmap_capacity),
                          bool(sr_outer), int(block), float(ifmap_fetch_factor))
    return FoldTraffic(*arrays, sr_outer=sr_outer, block=int(block))


def best_fold_order(g: FoldGeometry, *, word_bytes: float, out_bytes: float, psum_bytes: float,
                    ifmap_capacity: float, filter_capacity: float, ofmap_capacity: float,
                    ifmap_fetch_factor: float = 1.0) -> tuple[bool, int]:
    """``(sr_outer, block)`` that moves the fewest DRAM bytes (see :func:`dram_traffic`)."""
    sr_outer, block = best_order(dataflows.systolic(g.dataflow).code,
                                 g.sr, g.sc, g.t, g.rows, g.cols,
                                 float(word_bytes), float(out_bytes), float(psum_bytes),
                                 float(ifmap_capacity), float(filter_capacity),
                                 float(ofmap_capacity), float(ifmap_fetch_factor))
    return bool(sr_outer), int(block)
