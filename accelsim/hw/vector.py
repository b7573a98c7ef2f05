"""Cost of an op that runs on the vector unit and streams its tensors through DRAM.

Pure: bytes moved = every tensor element read or written once (``tensor_elements``) times
the word size; cycles = the longer of the DRAM transfer and the vector arithmetic (they
overlap, double-buffered), plus one DRAM latency.

Imports: nothing of accelsim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class VectorCost:
    """Cycles and bytes of one vector op."""

    compute_cycles: int
    memory_cycles: int
    latency_cycles: int
    read_bytes: float
    write_bytes: float
    weight_bytes: float
    flops: int

    @property
    def total_cycles(self) -> int:
        """Overlapped arithmetic and transfer, plus the first access latency."""
        return max(self.compute_cycles, self.memory_cycles) + self.latency_cycles

    @property
    def bound(self) -> str:
        """``"memory"`` or ``"compute"``, whichever takes longer."""
        return "memory" if self.memory_cycles >= self.compute_cycles else "compute"


def vector_cost(op: object, *, word_bytes: float, flops_per_cycle: float,
                dram_bytes_per_cycle: float, latency_cycles: int) -> VectorCost:
    """Cost of ``op`` (any op with ``flops`` and ``tensor_elements()``)."""
    el = op.tensor_elements()
    out = el.get("output", 0)
    weights = el.get("weight", 0)
    if getattr(op, "kind", "") == "embedding":
        weights = 0  # a gather reads only the looked-up rows, counted as the input
    reads = sum(v for k, v in el.items() if k not in ("output", "weight"))
    read_b = reads * word_bytes
    weight_b = weights * word_bytes
    write_b = out * word_bytes
    moved = read_b + weight_b + write_b
    mem = int(math.ceil(moved / dram_bytes_per_cycle - 1e-9)) if moved else 0
    comp = int(math.ceil(op.flops / flops_per_cycle - 1e-9)) if op.flops else 0
    return VectorCost(comp, mem, latency_cycles if moved else 0, read_b, write_b, weight_b,
                      int(op.flops))
