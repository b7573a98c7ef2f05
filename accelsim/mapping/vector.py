"""Mapping of a vector-unit op onto a systolic machine: a stream of SRAM-sized chunks.

Each chunk loads its share of the inputs into one half of the ifmap buffer, computes on the
vector unit and drains its outputs, so the engine overlaps the chunks exactly as it overlaps
array folds.

Imports: config.systolic_machine, hw.vector.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accelsim.config.systolic_machine import SystolicMachine
from accelsim.hw.vector import VectorCost, vector_cost


@dataclass(frozen=True, slots=True)
class VectorPlan:
    """A vector op cut into ``chunks`` equal pieces."""

    name: str
    op_kind: str
    cost: VectorCost
    chunks: int
    fold_cycles: int

    arrays = 1
    macs = 0
    repeat = 1

    @property
    def folds(self) -> int:
        """Chunks in the stream."""
        return self.chunks

    @property
    def flops(self) -> int:
        """Vector operations of the op."""
        return self.cost.flops

    def stream(self) -> tuple[np.ndarray, np.ndarray]:
        """(load bytes, drain bytes) per chunk."""
        load = np.full(self.chunks, (self.cost.read_bytes + self.cost.weight_bytes) / self.chunks)
        drain = np.full(self.chunks, self.cost.write_bytes / self.chunks)
        return load, drain

    def moved(self) -> dict[tuple[str, str], float]:
        """DRAM bytes per operand and direction."""
        return {("input", "read"): self.cost.read_bytes, ("weight", "read"): self.cost.weight_bytes,
                ("psum", "read"): 0.0, ("output", "write"): self.cost.write_bytes,
                ("psum", "write"): 0.0}


def plan_vector(machine: SystolicMachine, op: object) -> VectorPlan:
    """Cut ``op`` into chunks that fit half of the ifmap buffer."""
    cost = vector_cost(op, word_bytes=machine.array.operand_bytes,
                       flops_per_cycle=machine.compute.vector_flops_per_cycle,
                       dram_bytes_per_cycle=machine.dram_bytes_per_cycle,
                       latency_cycles=machine.dram_latency_cycles)
    half = machine.memory.sram.ifmap_bytes / 2
    chunks = max(1, math.ceil((cost.read_bytes + cost.weight_bytes) / half)) if half > 0 else 1
    chunks = min(chunks, 1 << 16)
    per_chunk = math.ceil(cost.compute_cycles / chunks) if cost.compute_cycles else 0
    return VectorPlan(getattr(op, "name", "op"), getattr(op, "kind", "vector"), cost, chunks,
                      per_chunk)
