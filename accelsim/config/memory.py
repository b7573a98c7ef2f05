"""Parameters of memory levels: on-chip operand SRAM (scratchpads) and off-chip DRAM/HBM.

Imports: config.schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.config.schema import fraction, non_negative, param, positive

DRAM_TECHNOLOGIES = ("DDR3", "DDR4", "DDR5", "LPDDR4", "LPDDR5", "GDDR5", "GDDR6", "HBM", "HBM2",
                     "HBM2e", "HBM3", "HBM3e")


@dataclass(frozen=True, slots=True, kw_only=True)
class OperandSram:
    """On-chip SRAM split into double-buffered ifmap, filter and ofmap scratchpads."""

    capacity_bytes: float = param("Total SRAM for the three operand buffers, bytes.",
                                  check=positive)
    ifmap_fraction: float = param("Share of the capacity holding inputs (ifmap).",
                                  default=0.5, check=fraction)
    filter_fraction: float = param("Share of the capacity holding weights (filter).",
                                   default=0.25, check=fraction)
    ofmap_fraction: float = param("Share of the capacity holding outputs and partial sums.",
                                  default=0.25, check=fraction)
    latency_cycles: int = param("Array-side access latency, cycles (hidden by the skew).",
                                default=1, check=non_negative)
    bandwidth_bytes_per_s: float | None = param(
        "Array-side SRAM bandwidth, bytes/s, all three buffers together; default (None): enough "
        "to feed the array every cycle (R + C operand words in, C results out).", default=None,
        check=lambda v: None if v is None or v > 0 else "must be > 0")
    word_bits: int = param("SRAM access width for energy accounting, bits.", default=64,
                           check=positive)

    def __post_init__(self) -> None:
        total = self.ifmap_fraction + self.filter_fraction + self.ofmap_fraction
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"ifmap/filter/ofmap fractions add up to {total:g}, not 1")

    @property
    def ifmap_bytes(self) -> float:
        """Bytes of the ifmap buffer (both halves)."""
        return self.capacity_bytes * self.ifmap_fraction

    @property
    def filter_bytes(self) -> float:
        """Bytes of the filter buffer (both halves)."""
        return self.capacity_bytes * self.filter_fraction

    @property
    def ofmap_bytes(self) -> float:
        """Bytes of the ofmap buffer (both halves)."""
        return self.capacity_bytes * self.ofmap_fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class Dram:
    """Off-chip memory reached through one DMA queue (transfers in a static, compiled order)."""

    technology: str = param("Memory technology (selects the pJ/bit in the energy table).",
                            default="DDR4", choices=DRAM_TECHNOLOGIES)
    capacity_bytes: float = param("Capacity, bytes.", default=8e9, check=positive)
    bandwidth_bytes_per_s: float = param("Peak bandwidth, bytes/s (decimal).", check=positive)
    latency_s: float = param("Latency from request to first data, seconds.", default=100e-9,
                             check=non_negative)
    efficiency: float = param("Sustained fraction of peak bandwidth (0-1].", default=1.0,
                              check=lambda v: None if 0 < v <= 1 else "must be in (0, 1]")

    @property
    def sustained_bytes_per_s(self) -> float:
        """Bandwidth the DMA queue achieves, bytes/s."""
        return self.bandwidth_bytes_per_s * self.efficiency


@dataclass(frozen=True, slots=True, kw_only=True)
class SystolicMemory:
    """The memory hierarchy of a systolic machine: operand SRAM and DRAM."""

    sram: OperandSram = param("On-chip operand scratchpads.")
    dram: Dram = param("Off-chip memory.")
