"""A systolic-array machine: array(s) + memory hierarchy + clock + energy table.

Imports: config.*.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.config.energy_ref import EnergySelection
from accelsim.config.memory import SystolicMemory
from accelsim.config.schema import param, positive
from accelsim.config.systolic import CallCosts, SystolicArray


@dataclass(frozen=True, slots=True, kw_only=True)
class VectorUnit:
    """The SIMD unit beside the array that runs pointwise ops, normalisation and softmax."""

    flops_per_cycle: float = param("Vector operations per clock cycle (all lanes).",
                                   check=positive)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystolicCompute:
    """The compute part of a systolic machine."""

    array: SystolicArray = param("The systolic array(s).")
    vector: VectorUnit | None = param(
        "Vector unit; default: one operation per array column per cycle per array.", default=None)
    cores: int = param("Identical cores on the chip, each with these arrays, vector unit and "
                       "SRAM, sharing the DRAM; they split each layer (mapping/cores.py).",
                       default=1, check=positive)

    @property
    def vector_flops_per_cycle(self) -> float:
        """Vector operations per cycle (the explicit unit, or cols x count)."""
        if self.vector is not None:
            return self.vector.flops_per_cycle
        return float(self.array.cols * self.array.count)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystolicMachine:
    """A systolic accelerator (TPU-, Eyeriss- or SCALE-Sim-like)."""

    kind: str = param("Machine kind.", default="systolic", choices=("systolic",))
    name: str = param("Short name.")
    description: str = param("One line on what this machine is.", default="")
    clock_hz: float = param("Array clock, Hz.", check=positive)
    compute: SystolicCompute = param("Compute units.")
    memory: SystolicMemory = param("Memory hierarchy.")
    energy: EnergySelection = param("Energy table and overrides.", default=EnergySelection())
    call: CallCosts | None = param("What one compiled call pays on top of its fold stream "
                                   "(dispatch, sustained array rate, precision conversion); "
                                   "None: nothing.", default=None)
    sources: tuple[str, ...] = param("Where the numbers come from.", default=())
    validation: str = param("What the machine's figures were checked against: empty (see its "
                            "sources and the validators), or 'unvalidated' (datasheet values "
                            "only, never compared with a measurement: every figure shown is "
                            "marked so).", default="", choices=("", "unvalidated"))

    @property
    def array(self) -> SystolicArray:
        """Shortcut to ``compute.array``."""
        return self.compute.array

    @property
    def dram_bytes_per_cycle(self) -> float:
        """Sustained DRAM bytes per array clock cycle."""
        return self.memory.dram.sustained_bytes_per_s / self.clock_hz

    @property
    def dram_latency_cycles(self) -> int:
        """DRAM latency rounded up to array cycles."""
        import math

        return int(math.ceil(self.memory.dram.latency_s * self.clock_hz - 1e-9))

    @property
    def peak_macs_per_s(self) -> float:
        """MACs per second at full utilization."""
        return self.array.pes * self.compute.cores * self.clock_hz
