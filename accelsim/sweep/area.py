"""A simple, documented silicon-area model for sweeps: PE array + operand SRAM, in mm^2.

It is meant for *relative* comparisons between design points of one sweep (the x-axis of a
Pareto plot), not for sign-off. Off-chip DRAM, wires, NoC, control and I/O are not counted.

**PE** (one multiply-accumulate unit). Component areas at 40 nm from the Aladdin library as
packaged by Accelergy (``hwcomponents-library/.../aladdin.py``; copied in
``shared/reference/hw_specs.yaml`` ``accelergy_aladdin_40nm``, tag V): 32-bit adder 278 um^2,
32x32 multiplier 6350 um^2, register 5.98 um^2 per bit. A PE of precision p is

* a multiplier over the significand: ``6350 * (w/32)^2`` (array multipliers grow with the
  square of the width), ``w`` = 4 (int4, fp8 e4m3), 8 (int8, bf16), 11 (fp16, tf32),
  16 (int16), 24 (fp32), 32 (int32);
* for floating point, an exponent adder ``278 * e/32`` (e = exponent bits) and an accumulator
  that costs :data:`FP_ADDER_FACTOR` times an integer adder of its width (alignment shift and
  normalisation; an estimate, tag E);
* an accumulator adder of the accumulator width (int32 or fp32: 32 bits);
* registers: two operand words (the stationary and the forwarded one) and the accumulator.

For int8 this is 397 + 278 + 48 x 5.98 = 962 um^2 at 40 nm.

**SRAM**: bits x 6T bit-cell area / :data:`SRAM_ARRAY_EFFICIENCY` (decoders, sense amplifiers
and I/O around the cell array). Published high-density bit cells (um^2) in
:data:`SRAM_BITCELL_UM2`:

* 65 nm 0.570 (Intel, Bai et al., IEDM 2005), 45 nm 0.346 (Intel, Mistry et al., IEDM 2007),
  32 nm 0.171 (Intel, Natarajan et al., IEDM 2008), 28 nm 0.127 (TSMC 28HPM HD cell),
  22 nm 0.092 (Intel, Auth et al., VLSI 2012), 16 nm 0.070 (TSMC 16FinFET, Wu et al.,
  IEDM 2013), 14 nm 0.0588 (Intel, Natarajan et al., IEDM 2014), 10 nm 0.0312 (Intel, Auth
  et al., IEDM 2017), 7 nm 0.027 (TSMC N7, Chang et al., ISSCC 2017), 5 nm 0.021 (TSMC N5,
  Yeap et al., IEDM 2019).

**Node scaling**: other nodes are interpolated log-log in that table; logic (PE) area is
scaled from 40 nm by the same bit-cell ratio (SRAM and logic density have tracked each other
to within ~1.5x down to 7 nm; an estimate, tag E). The node is ``node_nm`` if given, else
the ``node_nm`` of the machine's energy table (``configs/energy/<table>.yaml``), else 45 nm.

Imports: errors, files, precision.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from accelsim.errors import ConfigError
from accelsim.files import read_yaml, resolve_path
from accelsim.precision import ACCUMULATOR, PRECISION_BYTES

ALADDIN_40NM_UM2 = {"adder_32b": 278.0, "multiplier_32x32": 6350.0, "register_per_bit": 5.98}
"""Aladdin component areas at 40 nm, um^2 (Accelergy hwcomponents-library)."""

BASE_NODE_NM = 40.0
"""The node of :data:`ALADDIN_40NM_UM2`."""

SIGNIFICAND_BITS = {"int4": 4, "int8": 8, "int16": 16, "int32": 32, "fp8": 4, "bf16": 8,
                    "fp16": 11, "tf32": 11, "fp32": 24}
"""Multiplier width per precision (significand bits including the hidden bit for floats)."""

EXPONENT_BITS = {"fp8": 4, "bf16": 8, "fp16": 5, "tf32": 8, "fp32": 8}
"""Exponent bits of the floating-point precisions."""

FP_ADDER_FACTOR = 3.0
"""A floating-point adder's area over an integer adder of the same width (estimate, tag E)."""

SRAM_BITCELL_UM2 = {65: 0.570, 45: 0.346, 32: 0.171, 28: 0.127, 22: 0.092, 16: 0.070,
                    14: 0.0588, 10: 0.0312, 7: 0.027, 5: 0.021}
"""Published high-density 6T SRAM bit-cell areas, um^2, by node (nm); sources above."""

SRAM_ARRAY_EFFICIENCY = 0.7
"""Share of an SRAM macro's area that is bit cells (estimate, tag E)."""

DEFAULT_NODE_NM = 45.0


def bitcell_um2(node_nm: float) -> float:
    """6T SRAM bit-cell area at ``node_nm``, um^2 (log-log interpolation, clamped at the ends)."""
    nodes = sorted(SRAM_BITCELL_UM2)
    if node_nm <= nodes[0]:
        return SRAM_BITCELL_UM2[nodes[0]] * (node_nm / nodes[0]) ** 2
    if node_nm >= nodes[-1]:
        return SRAM_BITCELL_UM2[nodes[-1]] * (node_nm / nodes[-1]) ** 2
    for lo, hi in zip(nodes, nodes[1:]):
        if lo <= node_nm <= hi:
            t = (math.log(node_nm) - math.log(lo)) / (math.log(hi) - math.log(lo))
            return math.exp(math.log(SRAM_BITCELL_UM2[lo]) * (1 - t)
                            + math.log(SRAM_BITCELL_UM2[hi]) * t)
    raise AssertionError("unreachable")  # pragma: no cover


def logic_scale(node_nm: float) -> float:
    """Logic area at ``node_nm`` over logic area at 40 nm (by the bit-cell ratio)."""
    return bitcell_um2(node_nm) / bitcell_um2(BASE_NODE_NM)


def pe_area_um2(precision: str, node_nm: float = BASE_NODE_NM) -> float:
    """Area of one MAC PE of ``precision`` at ``node_nm``, um^2."""
    a = ALADDIN_40NM_UM2
    w = SIGNIFICAND_BITS[precision]
    acc = ACCUMULATOR[precision]
    acc_bits = int(PRECISION_BYTES[acc] * 8)
    mult = a["multiplier_32x32"] * (w / 32) ** 2
    adder = a["adder_32b"] * acc_bits / 32
    extra = 0.0
    if precision in EXPONENT_BITS:
        extra = a["adder_32b"] * EXPONENT_BITS[precision] / 32
        adder *= FP_ADDER_FACTOR
    regs = a["register_per_bit"] * (2 * PRECISION_BYTES[precision] * 8 + acc_bits)
    return (mult + adder + extra + regs) * logic_scale(node_nm)


def sram_area_um2(capacity_bytes: float, node_nm: float) -> float:
    """Area of ``capacity_bytes`` of SRAM at ``node_nm``, um^2."""
    return capacity_bytes * 8 * bitcell_um2(node_nm) / SRAM_ARRAY_EFFICIENCY


@functools.lru_cache(maxsize=32)
def _table_node(table: str) -> float | None:
    try:
        data = read_yaml(resolve_path(table, "energy"))
    except ConfigError:  # a missing or unreadable table: fall back to the default node
        return None
    node = data.get("node_nm")
    return float(node) if isinstance(node, (int, float)) and node > 0 else None


def machine_node_nm(machine: Any) -> float:
    """The technology node of a machine: its energy table's ``node_nm``, else 45 nm."""
    energy = getattr(machine, "energy", None)
    table = getattr(energy, "table", None)
    node = _table_node(str(table)) if table else None
    return node or DEFAULT_NODE_NM


def area_breakdown(machine: Any, node_nm: float | None = None) -> dict[str, float]:
    """``area_pe_mm2``, ``area_sram_mm2`` and their sum ``area_mm2`` for a systolic machine.

    Machines without ``compute.array`` or ``memory.sram`` give 0 for the missing part.
    """
    node = float(node_nm) if node_nm else machine_node_nm(machine)
    array = getattr(getattr(machine, "compute", None), "array", None)
    sram = getattr(getattr(machine, "memory", None), "sram", None)
    pe = array.pes * pe_area_um2(array.precision, node) / 1e6 if array is not None else 0.0
    sr = sram_area_um2(sram.capacity_bytes, node) / 1e6 if sram is not None else 0.0
    return {"area_pe_mm2": pe, "area_sram_mm2": sr, "area_mm2": pe + sr, "node_nm": node}


def area_batch(machine: Any, pes: np.ndarray, sram_bytes: np.ndarray,
               node_nm: float | None = None) -> dict[str, np.ndarray]:
    """:func:`area_breakdown` of many design points of one systolic ``machine`` at once, which
    differ in PE count (rows x cols x count) and SRAM capacity (bytes): arrays of mm^2 (and
    ``node_nm``) with the same values, point for point."""
    node = float(node_nm) if node_nm else machine_node_nm(machine)
    pe = np.asarray(pes, np.float64) * pe_area_um2(machine.compute.array.precision, node) / 1e6
    sr = np.asarray(sram_bytes, np.float64) * 8 * bitcell_um2(node) / SRAM_ARRAY_EFFICIENCY / 1e6
    return {"area_pe_mm2": pe, "area_sram_mm2": sr, "area_mm2": pe + sr,
            "node_nm": np.full(len(pe), node)}
