"""Dynamic energy of GPU kernel work by part: what the tensor cores, their operand staging,
the datapath overhead, L2 and HBM cost (``accelsim/report/ENERGY.md`` section 7).

    >>> parts = gpu_energy_parts(machine, table, macs=5.5e11, flops=1.1e12,
    ...                          l2_bytes=4e9, hbm_bytes=1.2e9, precision="bf16")
    >>> sum(parts.values())  # joules

Parts (joules):

* ``mac`` - tensor-core MACs at ``mac.<precision>``; ``vector`` - other FLOP, one
  ``mac.<precision>`` each;
* ``rf`` - accumulator traffic through the register file: an MMA instruction of
  :data:`MMA_K_STEP` reads and writes its accumulators once (``2 x 32 / MMA_K_STEP`` bits per
  MAC), priced as accesses to one sub-partition's register-file bank (register file / 4) by
  the table's SRAM rule;
* ``smem`` - operand staging through shared memory: a CTA tile of :data:`MMA_TILE` reads
  ``w (1/M + 1/N)`` bits of A and B per MAC (``w`` = operand bits), priced by the SRAM rule
  at the SM's shared-memory capacity;
* ``core`` - the datapath overhead per MAC the action tables do not itemise (operand
  collectors, pipeline registers and the clock tree of the tensor datapath, instruction
  issue): ``core.gpu_mac`` of the table (calibrated on the H200, scaled as logic);
* ``l2`` - L2 traffic in 256-bit accesses; ``hbm`` - HBM traffic at ``dram.<technology>``.

Imports: precision, config.energy, report.energy.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from accelsim.config.energy import EnergyTable
from accelsim.precision import PRECISION_BYTES
from accelsim.report.energy import price_actions

MMA_K_STEP = 16
"""K of one tensor-core MMA instruction at 16-bit precision (``mma.sync m16n8k16``, ``wgmma
m64nNk16``): the accumulators are read and written once per step."""

MMA_TILE = (128, 128)
"""CTA tile (M, N) whose A and B operands stream through shared memory (CUTLASS's default
Hopper/Ampere tile 128 x 128)."""

SUB_PARTITIONS = 4
"""SM sub-partitions, each with its own register-file bank (Volta through Hopper)."""

ACC_BITS = 32
"""Accumulator width of tensor-core MMAs (fp32 / int32), bits."""


def _rec(level: str, operand: str, direction: str, bits: float, word_bits: float,
         precision: str, capacity: float = 0.0, technology: str = "") -> dict[str, Any]:
    return {"layer": "k", "level": level, "operand": operand, "direction": direction,
            "count": bits / word_bits if word_bits else bits, "bits": float(bits),
            "precision": precision, "technology": technology,
            "capacity_bytes": float(capacity), "word_bits": float(word_bits)}


def gpu_energy_records(m: Any, *, macs: float, flops: float, l2_bytes: float,
                       hbm_bytes: float, precision: str) -> dict[str, list[dict[str, Any]]]:
    """The action records of GPU work per part (``mac``, ``vector``, ``rf``, ``smem``, ``l2``,
    ``hbm``; see the module docstring); ``core`` has no record (a per-MAC table figure)."""
    c = m.compute
    w = PRECISION_BYTES.get(precision, 2) * 8
    acc_bits = macs * ACC_BITS / MMA_K_STEP
    smem_bits = macs * w * (1 / MMA_TILE[0] + 1 / MMA_TILE[1])
    rf_bank = c.sm_register_file_bytes / SUB_PARTITIONS
    vec = max(0.0, flops - 2 * macs)
    records = {
        "mac": [_rec("mac", "-", "compute", macs, 0, precision)],
        "vector": [_rec("mac", "-", "compute", vec, 0, precision)],
        "rf": [_rec("sram", "psum", "read", acc_bits, 1024, precision, rf_bank),
               _rec("sram", "psum", "write", acc_bits, 1024, precision, rf_bank)],
        "smem": [_rec("sram", "input", "read", smem_bits, 1024, precision, c.sm_smem_bytes)],
        "l2": [_rec("sram", "-", "read", l2_bytes * 8, 256, precision, m.memory.l2_bytes)],
        "hbm": [_rec("dram", "-", "read", hbm_bytes * 8, 512, precision,
                     technology=m.memory.hbm.technology)],
    }
    for part in ("mac", "vector"):  # a MAC record: count = MACs, no bits
        records[part][0].update(count=records[part][0]["bits"], bits=0.0)
    return records


def gpu_energy_parts(m: Any, table: EnergyTable, *, macs: float, flops: float,
                     l2_bytes: float, hbm_bytes: float, precision: str) -> dict[str, float]:
    """Dynamic energy of GPU work per part, joules (see the module docstring)."""
    records = gpu_energy_records(m, macs=macs, flops=flops, l2_bytes=l2_bytes,
                                 hbm_bytes=hbm_bytes, precision=precision)
    out = {}
    for part, recs in records.items():
        out[part] = float(price_actions(pd.DataFrame(recs), table)["pj"].sum()) * 1e-12
    out["core"] = macs * (table.get("core.gpu_mac", 0.0) or 0.0) * 1e-12
    return out


def gpu_energy_j(m: Any, table: EnergyTable, *, macs: float, flops: float, l2_bytes: float,
                 hbm_bytes: float, precision: str) -> float:
    """Dynamic energy of GPU work, joules: the sum of :func:`gpu_energy_parts` (MACs, operand
    staging, datapath overhead, L2 and HBM traffic), priced with ``table``."""
    return sum(gpu_energy_parts(m, table, macs=macs, flops=flops, l2_bytes=l2_bytes,
                                hbm_bytes=hbm_bytes, precision=precision).values())
