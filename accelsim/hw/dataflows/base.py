"""What a dataflow strategy is: fold geometry, array-side traffic and per-PE register actions.

A *systolic* strategy (os, ws, is) maps ``out[M x N] = in[M x K] @ w[K x N]`` onto an
``R x C`` array as SCALE-Sim 3.0 does: a spatial extent ``Sr x Sc`` folded onto the array and a
temporal extent ``T`` streamed through it (``shared/reference/scalesim_model.md``). Its
``code`` is the integer the compiled numba kernels (:mod:`accelsim.hw._systolic_kernels`)
use internally; callers name strategies, never codes.

Units: counts in words (operand elements), cycles in array clock cycles.

Imports: stdlib only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FoldGeometry:
    """How one GEMM maps onto an ``R x C`` array under a dataflow."""

    dataflow: str
    rows: int
    cols: int
    sr: int
    sc: int
    t: int
    row_folds: int
    col_folds: int
    fold_cycles: int

    @property
    def folds(self) -> int:
        """Number of folds F = Fr * Fc."""
        return self.row_folds * self.col_folds


@dataclass(frozen=True, slots=True)
class SramAccesses:
    """Array-side SRAM accesses of one GEMM, in words."""

    ifmap_reads: int
    filter_reads: int
    ofmap_writes: int
    ofmap_reads: int


@dataclass(frozen=True, slots=True)
class SystolicDataflow:
    """One systolic dataflow: which GEMM dimensions sit on array rows, columns and time.

    ``spatial`` names the GEMM dimensions (``"m"``, ``"n"`` or ``"k"``) on array rows and
    columns, ``temporal`` the one streamed in time; ``stationary`` the operand held in the PEs
    (``None`` for output-stationary, where the accumulator stays); ``preload`` adds the ``R``
    cycles that load a stationary operand into every fold.
    """

    name: str
    code: int
    title: str
    spatial: tuple[str, str]
    temporal: str
    stationary: str | None
    kind: str = "systolic"

    def geometry(self, m: int, n: int, k: int, rows: int, cols: int) -> FoldGeometry:
        """Fold geometry of ``out[m x n] = in[m x k] @ w[k x n]`` on ``rows x cols`` PEs.

        Each fold lasts ``P = T + R + C - 2`` cycles (fill and drain) plus ``R`` cycles that
        load the stationary operand when there is one (ws, is).
        """
        dims = {"m": m, "n": n, "k": k}
        sr, sc, t = dims[self.spatial[0]], dims[self.spatial[1]], dims[self.temporal]
        p = t + rows + cols - 2 + (rows if self.stationary is not None else 0)
        return FoldGeometry(self.name, rows, cols, sr, sc, t, math.ceil(sr / rows),
                            math.ceil(sc / cols), p)

    def sram_accesses(self, m: int, n: int, k: int, g: FoldGeometry) -> SramAccesses:
        """Array-side SRAM reads/writes of one GEMM (words).

        The operand on a spatial dimension is read once per fold of the other spatial
        dimension; a stationary operand once in all. Under ws/is every row fold writes its
        partial sums (``Fr * M * N`` writes) and every fold after the first reads the
        previous ones back (``(Fr - 1) * M * N`` reads).
        """
        fr, fc = g.row_folds, g.col_folds
        if self.stationary is None:
            return SramAccesses(fc * m * k, fr * k * n, m * n, 0)
        if self.stationary == "weight":
            return SramAccesses(fc * m * k, k * n, fr * m * n, (fr - 1) * m * n)
        return SramAccesses(m * k, fc * k * n, fr * m * n, (fr - 1) * m * n)

    def register_accesses(self, macs: float, loaded: dict[str, float],
                          ) -> list[tuple[str, str, float]]:
        """PE register ``(operand, direction, count)`` of ``macs`` MACs (the ``rf`` level).

        Per MAC every PE reads the input and weight registers it multiplies and reads and
        writes its accumulator (``output`` when it stays, ``psum`` when it moves on). A moving
        operand is written once per MAC into the receiving PE's register; the stationary one
        once per word loaded into the array (``loaded[operand]``, its SRAM reads).
        """
        out = []
        for operand in ("input", "weight"):
            out.append((operand, "read", macs))
            written = loaded.get(operand, 0.0) if operand == self.stationary else macs
            out.append((operand, "write", written))
        acc = self.accumulator_operand()
        out += [(acc, "read", macs), (acc, "write", macs)]
        return out

    def accumulator_operand(self) -> str:
        """Where a PE's running sum lives: ``output`` (stays, os) or ``psum`` (moves on)."""
        return "output" if self.stationary is None else "psum"
