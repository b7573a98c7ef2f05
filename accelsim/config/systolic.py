"""Parameters of a systolic array (one or more identical arrays sharing one memory system).

Imports: limits, precision, config.schema, config.spatial.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.config.schema import fraction, non_negative, param, positive
from accelsim.config.spatial import ArrayNetwork, Scratchpads
from accelsim.limits import MAX_ARRAY_SIDE, MAX_WORD_BYTES
from accelsim.precision import ACCUMULATOR, PRECISION_BYTES

DATAFLOWS = ("os", "ws", "is")
"""Output-, weight- and input-stationary, as SCALE-Sim defines them (the systolic engine)."""

ALL_DATAFLOWS = (*DATAFLOWS, "rs", "nlr")
"""Every registered dataflow name (:mod:`accelsim.hw.dataflows`): ``rs`` row-stationary and
``nlr`` no-local-reuse are spatial (Eyeriss-style arrays)."""




def _side(v: int) -> str | None:
    """Check: a PE count per side within (0, MAX_ARRAY_SIDE]."""
    return "must be > 0" if v <= 0 else (
        f"must be <= {MAX_ARRAY_SIDE:,}" if v > MAX_ARRAY_SIDE else None)


def _word(v: float) -> str | None:
    """Check: a word size within (0, MAX_WORD_BYTES] bytes."""
    return "must be > 0" if v <= 0 else (
        f"must be <= {MAX_WORD_BYTES} bytes" if v > MAX_WORD_BYTES else None)


def _sustained(v: float) -> str | None:
    """Check: a fraction within (0, 1]."""
    return "must be > 0" if v <= 0 else fraction(v)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallCosts:
    """What one compiled call (an XLA fusion on a TPU) pays on top of its fold stream
    (:mod:`accelsim.mapping.cores`); every value carries its source in the YAML."""

    dispatch_s: float = param("Fixed time per call (launch, DMA set-up, the unhidden first "
                              "load and last store), seconds.", check=non_negative)
    sustained_array_fraction: float = param(
        "Fraction of the fold rate the arrays sustain under the compiler's schedule "
        "(each fold's cycles are divided by it), (0, 1].", check=_sustained)
    tile: int = param("Rows per tile in which a layer's rows are cut across cores and padded "
                      "(the MXU side).", default=128, check=positive)
    convert_elements_per_cycle: float | None = param(
        "Operand elements one core converts per cycle when the op's precision differs from "
        "the array's (each element of its slice's inputs once); None: conversion free.",
        default=None, check=positive)
    output_elements_per_cycle: float | None = param(
        "Output elements one core drains per cycle from the arrays' fp32 accumulators "
        "(convert to the output precision, store to VMEM); None: free.", default=None,
        check=positive)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystolicArray:
    """A grid of ``rows x cols`` multiply-accumulate PEs; ``count`` identical arrays share work."""

    rows: int = param("PE rows (SCALE-Sim ArrayHeight).", check=_side)
    cols: int = param("PE columns (SCALE-Sim ArrayWidth).", check=_side)
    count: int = param("Identical arrays (e.g. MXUs) sharing the folds of a layer.", default=1,
                       check=positive)
    dataflow: str = param("Default dataflow: os, ws, is, rs or nlr (rs needs scratchpads).",
                          default="os", choices=ALL_DATAFLOWS)
    precision: str = param("Operand precision; sets the word size and the MAC action.",
                           default="int8", choices=tuple(PRECISION_BYTES))
    word_bytes: float | None = param(
        "Bytes per operand word; default from the precision (SCALE-Sim uses 1).", default=None,
        check=_word)
    output_word_bytes: float | None = param(
        "Bytes per final output word; default = word_bytes.", default=None, check=_word)
    psum_word_bytes: float | None = param(
        "Bytes per partial sum spilled to DRAM; default from the accumulator precision.",
        default=None, check=_word)

    scratchpads: Scratchpads | None = param(
        "Per-PE scratchpads (Eyeriss-style spatial array); None: a systolic array with one "
        "register per operand per PE.", default=None)
    network: ArrayNetwork | None = param(
        "Global-buffer partition and array network of a spatial array (row-stationary timing).",
        default=None)

    def __post_init__(self) -> None:
        if self.dataflow == "rs" and self.scratchpads is None:
            raise ValueError("dataflow rs (row-stationary) needs per-PE scratchpads "
                             "(compute.array.scratchpads)")

    @property
    def operand_bytes(self) -> float:
        """Bytes of one input or weight word."""
        return self.word_bytes if self.word_bytes is not None else PRECISION_BYTES[self.precision]

    @property
    def output_bytes(self) -> float:
        """Bytes of one final output word."""
        return self.output_word_bytes if self.output_word_bytes is not None else self.operand_bytes

    @property
    def psum_bytes(self) -> float:
        """Bytes of one partial-sum word moved off-array."""
        if self.psum_word_bytes is not None:
            return self.psum_word_bytes
        return PRECISION_BYTES[ACCUMULATOR[self.precision]]

    @property
    def pes(self) -> int:
        """Total PEs over all arrays."""
        return self.rows * self.cols * self.count
