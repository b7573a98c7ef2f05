"""A multicore CPU machine (``kind: cpu``): cores with SIMD FMA units and an optional matrix
extension (AMX-like tiles), a cache hierarchy and DRAM channels.

Datasheet numbers (cores, clocks, SIMD lanes, cache sizes, DRAM channels) and a few
calibrated constants (main-loop efficiencies, the sustained share of DRAM bandwidth, the
fork/join cost of a parallel region) live in the YAML, each with a comment naming its source.
The cost model is :mod:`accelsim.hw.cpu`.

Precision names follow :data:`accelsim.precision.PRECISION_BYTES`.

Imports: errors, precision, config.*.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from accelsim.config.energy_ref import EnergySelection, positive_or_none
from accelsim.config.memory import DRAM_TECHNOLOGIES
from accelsim.config.schema import non_negative, param, positive
from accelsim.errors import UnsupportedError
from accelsim.precision import PRECISION_BYTES

CPU_PRECISIONS = ("fp32", "bf16", "fp16", "int8")
"""Operand precisions the CPU model knows."""


def _unit_interval(v: float) -> str | None:
    return None if 0 < v <= 1 else "must be in (0, 1]"


def _per_precision(v: Mapping) -> str | None:
    for key, value in v.items():
        if key not in CPU_PRECISIONS:
            return f"unknown precision {key!r} (known: {', '.join(CPU_PRECISIONS)})"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            return f"{key}: must be a number > 0"
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class SimdUnit:
    """The vector FMA units of one core (AVX-512-like)."""

    width_bytes: int = param("Vector register width, bytes (64 for AVX-512).", default=64,
                             check=positive)
    fma_units: int = param("FMA pipes per core that can each start one vector FMA per cycle.",
                           default=2, check=positive)
    macs_per_lane: Mapping[str, float] = param(
        "MACs one FMA instruction does per 32-bit lane, per precision (fp32 1, bf16 2 with a "
        "dot-product instruction, int8 4 with VNNI); absent = unsupported.",
        default={"fp32": 1}, check=_per_precision)
    efficiency: float = param("Fraction of the FMA rate a blocked GEMM main loop sustains.",
                              default=0.85, check=_unit_interval)
    elementwise_efficiency: float = param(
        "Fraction of the one-op-per-lane rate that elementwise/reduction loops get for math.",
        default=0.5, check=_unit_interval)

    @property
    def lanes32(self) -> int:
        """32-bit lanes per vector register."""
        return int(self.width_bytes * 8) // 32

    def macs_per_cycle(self, precision: str) -> float:
        """MACs per cycle per core at ``precision`` (0 if unsupported)."""
        return self.fma_units * self.lanes32 * float(self.macs_per_lane.get(precision, 0.0))


@dataclass(frozen=True, slots=True, kw_only=True)
class MatrixUnit:
    """A per-core matrix extension with tile registers (Intel AMX TMUL-like)."""

    macs_per_cycle: Mapping[str, float] = param(
        "MACs per cycle per core, per precision (absent = unsupported).", check=_per_precision)
    clock_hz: float | None = param("Core clock while the matrix unit is busy, Hz; default: the "
                                   "core's all-core clock.", default=None)
    tile_rows: int = param("Rows of a tile register (the M and N granularity).", default=16,
                           check=positive)
    tile_row_bytes: int = param("Bytes per tile row (the K granularity is this / element size).",
                                default=64, check=positive)
    efficiency: float = param("Fraction of the matrix rate a blocked GEMM main loop sustains "
                              "(tile loads from L1/L2 compete with the TMUL).",
                              default=0.7, check=_unit_interval)


@dataclass(frozen=True, slots=True, kw_only=True)
class CpuCompute:
    """The cores and their arithmetic units."""

    cores: int = param("Physical cores used by the kernel (one socket).", check=positive)
    clock_hz: float = param("All-core clock under a sustained vector load, Hz.", check=positive)
    simd: SimdUnit = param("Vector FMA units of a core.", default=SimdUnit())
    matrix: MatrixUnit | None = param("Matrix extension (AMX); absent = none.", default=None)
    parallel_overhead_s: float = param(
        "Fork/join cost of one parallel region (thread wake-up and barrier), seconds.",
        default=5e-6, check=non_negative)


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheLevel:
    """One cache level: capacity and the bandwidth it delivers to the level above."""

    capacity_bytes: float = param("Capacity, bytes (per core if ``shared`` is false).",
                                  check=positive)
    bytes_per_cycle_per_core: float = param(
        "Sustained bytes per core clock per core into the level above (or into registers).",
        check=positive)
    shared: bool = param("True for one cache shared by all cores (L3).", default=False)
    usable_fraction: float = param(
        "Share of the capacity a blocked kernel plans to fill with its blocks.", default=0.5,
        check=_unit_interval)


@dataclass(frozen=True, slots=True, kw_only=True)
class CpuDram:
    """DRAM channels of one socket."""

    technology: str = param("Memory technology (selects pJ/bit in the energy table).",
                            default="DDR5", choices=DRAM_TECHNOLOGIES)
    channels: int = param("Memory channels populated.", check=positive)
    channel_bytes_per_s: float = param("Peak bandwidth of one channel, bytes/s.", check=positive)
    efficiency: float = param("Sustained fraction of peak (STREAM-like).", default=0.8,
                              check=_unit_interval)
    latency_s: float = param("Load-to-use latency of a DRAM access, seconds.", default=100e-9,
                             check=non_negative)
    capacity_bytes: float = param("Capacity, bytes.", default=256e9, check=positive)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """Peak bandwidth, all channels, bytes/s."""
        return self.channels * self.channel_bytes_per_s

    @property
    def sustained_bytes_per_s(self) -> float:
        """Bandwidth a streaming kernel achieves, bytes/s."""
        return self.bandwidth_bytes_per_s * self.efficiency


@dataclass(frozen=True, slots=True, kw_only=True)
class CpuMemory:
    """L1, L2, L3 and DRAM."""

    l1: CacheLevel = param("Per-core L1 data cache.")
    l2: CacheLevel = param("Per-core L2 cache.")
    l3: CacheLevel = param("Last-level cache shared by the cores.")
    dram: CpuDram = param("DRAM channels.")


@dataclass(frozen=True, slots=True, kw_only=True)
class CpuEnergy:
    """Energy table selection plus the per-instruction overhead of a general-purpose core."""

    table: str = param("Energy table short name or path.", default="horowitz_45nm")
    overrides: Mapping[str, object] = param("Action -> pJ value replacing the table's.",
                                            default={})
    instruction_pj: float = param(
        "Energy per issued vector or tile instruction beyond its arithmetic (fetch, decode, "
        "rename, schedule, register file), pJ.", default=0.0, check=non_negative)
    core_pj_per_cycle: float = param(
        "Clocked energy of one busy core per cycle beyond the priced MAC, cache and DRAM "
        "actions (front end, out-of-order engine, register files, its clock tree), pJ; "
        "charged for the cores an op keeps busy over its time.", default=0.0,
        check=non_negative)
    tdp_gap: str = param(
        "Why the predicted power at peak throughput lies below the TDP band, when it does "
        "(a documented known gap; empty = the machine must lie in the band).", default="")
    idle_w: float | None = param(
        "Measured idle power of the package the TDP is stated for, W: cell leakage plus what "
        "does not stop when idle (mesh, LLC, memory controllers, UPI/PCIe PHYs). The part the "
        "modelled cell leakage does not cover is charged as static power `idle`, as for the "
        "other machines (`accelsim/report/ENERGY.md` section 7).",
        default=None, check=positive_or_none)
    min_clock_hz: float | None = param(
        "Lowest all-core clock the package's power limit may hold it at under a sustained "
        "matrix/vector load, Hz. When the predicted power at the load clock exceeds the TDP, "
        "the cap lowers the clock; below this floor the check fails.",
        default=None, check=positive_or_none)

    @property
    def selection(self) -> EnergySelection:
        """The table selection in the form the energy report takes."""
        return EnergySelection(table=self.table, overrides=self.overrides)


@dataclass(frozen=True, slots=True, kw_only=True)
class CpuMachine:
    """One CPU socket (e.g. a Sapphire Rapids-class Xeon with AMX)."""

    kind: str = param("Machine kind.", default="cpu", choices=("cpu",))
    name: str = param("Short name.")
    description: str = param("One line on what this machine is.", default="")
    default_precision: str = param("Precision of ops that name none.", default="bf16",
                                   choices=CPU_PRECISIONS)
    compute: CpuCompute = param("Cores and arithmetic.")
    memory: CpuMemory = param("Caches and DRAM.")
    energy: CpuEnergy = param("Energy table and core overhead.", default=CpuEnergy())
    tdp_w: float | None = param("Thermal design power, W (informative).", default=None)
    sources: tuple[str, ...] = param("Where the numbers come from.", default=())
    validation: str = param("What the machine's figures were checked against: empty (see its "
                            "sources and the validators), or 'unvalidated' (datasheet values "
                            "only, never compared with a measurement: every figure shown is "
                            "marked so).", default="", choices=("", "unvalidated"))

    def __post_init__(self) -> None:
        if self.compute.simd.macs_per_cycle(self.default_precision) <= 0 and not (
                self.compute.matrix
                and self.default_precision in self.compute.matrix.macs_per_cycle):
            raise ValueError(f"default_precision {self.default_precision!r} is supported by "
                             "neither the SIMD units nor the matrix unit")

    def check_precision(self, precision: str) -> None:
        """Raise :class:`UnsupportedError` if no unit of this CPU runs ``precision``."""
        if precision not in CPU_PRECISIONS:
            raise UnsupportedError(f"{self.name}: unknown precision {precision!r} "
                                   f"(known: {', '.join(CPU_PRECISIONS)})")
        if not self.supports(precision):
            raise UnsupportedError(f"{self.name} has no {precision} support")

    def supports(self, precision: str) -> bool:
        """Whether the SIMD or the matrix unit runs ``precision``."""
        mx = self.compute.matrix
        return (self.compute.simd.macs_per_cycle(precision) > 0
                or (mx is not None and precision in mx.macs_per_cycle))

    def word_bytes(self, precision: str) -> float:
        """Bytes per element at ``precision``."""
        return float(PRECISION_BYTES[precision])

    def matrix_clock_hz(self) -> float:
        """Clock while the matrix unit runs, Hz."""
        mx = self.compute.matrix
        return mx.clock_hz if mx is not None and mx.clock_hz else self.compute.clock_hz

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision``: the matrix unit if it runs it, else the SIMD
        units."""
        self.check_precision(precision)
        mx = self.compute.matrix
        if mx is not None and precision in mx.macs_per_cycle:
            return 2.0 * mx.macs_per_cycle[precision] * self.compute.cores * self.matrix_clock_hz()
        return (2.0 * self.compute.simd.macs_per_cycle(precision) * self.compute.cores
                * self.compute.clock_hz)
