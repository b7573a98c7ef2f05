"""A tensor-core GPU machine (``kind: gpu``): SMs, tensor-core rates per precision, caches, HBM.

A GPU machine is a chip (``compute``, ``memory``, ``conv``: datasheet numbers and the
constants fitted on it: clocks under load, main-loop efficiencies, L2 residency shape,
instruction costs), the library stack it runs (``stack``, :mod:`accelsim.config.gpu_stack`,
``configs/software/<name>.yaml``) and a host (``host``: launch, dispatch and sync costs).
No parameter has a code default: every value comes from the YAML or the file it inherits
(:mod:`accelsim.config.inherit`), with its provenance kind; see ``accelsim/hw/gpu/README.md``
for the fits.

Imports: units, errors, precision, config.*.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass

from accelsim.config.energy_ref import EnergySelection
from accelsim.config.gpu_conv import GpuConvKernels
from accelsim.config.gpu_stack import ARCHITECTURES, GpuStack
from accelsim.config.memory import DRAM_TECHNOLOGIES
from accelsim.config.schema import fraction, non_negative, param, positive
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.precision import PRECISION_BYTES, sizes_of
from accelsim.units import UnitError, parse_frequency, parse_time

GPU_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "mxfp8", "nvfp4", "mxfp4")
"""Operand precisions the GPU model knows. fp32 runs on CUDA cores; the rest on tensor cores
(the block-scaled ones, :data:`accelsim.precision.BLOCK_SCALED`, on Blackwell's)."""

OPERAND_BYTES = sizes_of(GPU_PRECISIONS)
"""Bytes per input element, per precision (from :data:`accelsim.precision.PRECISION_BYTES`)."""

OUTPUT_PRECISION = {"fp32": "fp32", "tf32": "fp32", "fp16": "fp16", "bf16": "bf16",
                    "fp8": "bf16", "int8": "int32", "mxfp8": "bf16", "nvfp4": "bf16",
                    "mxfp4": "bf16"}
"""Precision of the output a GEMM of each input precision writes (fp8 GEMMs write bf16,
int8 GEMMs write int32)."""

OUTPUT_BYTES = {p: PRECISION_BYTES[o] for p, o in OUTPUT_PRECISION.items()}
"""Bytes per output element, per input precision."""


def _unit_interval(v: float) -> str | None:
    return None if 0 < v <= 1 else "must be in (0, 1]"


def _at_least_one(v: float) -> str | None:
    return None if v >= 1 else "must be >= 1"


def _frequencies(v: Mapping) -> str | None:
    for key, value in v.items():
        if key not in GPU_PRECISIONS:
            return f"unknown precision {key!r} (known: {', '.join(GPU_PRECISIONS)})"
        try:
            if parse_frequency(value) <= 0:
                return f"{key}: must be > 0"
        except UnitError as exc:
            return f"{key}: {exc}"
    return None


def _durations(v: Mapping) -> str | None:
    for key, value in v.items():
        try:
            if parse_time(value) < 0:
                return f"{key}: must be >= 0"
        except UnitError as exc:
            return f"{key}: {exc}"
    return None


def _rates(v: Mapping) -> str | None:
    for key, value in v.items():
        if key not in GPU_PRECISIONS or key == "fp32":
            return f"unknown tensor-core precision {key!r} (known: tf32, fp16, bf16, fp8, int8)"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            return f"{key}: must be a number > 0"
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuCompute:
    """The streaming multiprocessors (SMs) and their arithmetic units."""

    sm_count: int = param("Streaming multiprocessors enabled on the part.", check=positive)
    clock_hz: float = param("Clock at which the datasheet's tensor-core peaks are rated, Hz.",
                            check=positive)
    max_clock_hz: float = param("Highest boost clock, Hz.", check=positive)
    tensor_flop_per_clk_per_sm: Mapping[str, float] = param(
        "Dense tensor-core FLOP per clock per SM, per precision (absent = unsupported).",
        check=_rates)
    simt_flop_per_clk_per_sm: float = param(
        "FP32 CUDA-core FLOP per clock per SM (FMA = 2 FLOP).", check=positive)
    sfu_ops_per_clk_per_sm: float = param(
        "Special-function (exp, rsqrt, tanh) results per clock per SM.",
        check=positive)
    issue_per_clk_per_sm: float = param(
        "Thread instructions the SM's warp schedulers dispatch per clock (4 schedulers x 32 "
        "threads): the row kernels' memory, index and per-thread instructions and the pointwise "
        "kernels' library routines (tanhf, erff) issue at this rate, their FP32 arithmetic at "
        "the FP32 lanes' (simt_flop_per_clk_per_sm / 2).",
        check=positive)
    sm_register_file_bytes: float = param("Register file per SM, bytes.", check=positive)
    sm_smem_bytes: float = param("Largest shared memory one SM gives its CTAs, bytes.",
                                     check=positive)
    sm_l1_bytes: float = param("Combined L1 / shared memory per SM, bytes.", check=positive)
    sm_smem_bytes_per_clk: float = param("Shared-memory read bandwidth, bytes/clock/SM.",
                                         check=positive)
    clock_under_load_hz: Mapping[str, object] = param(
        "SM clock under a sustained dense load of each precision, Hz (power-capped).",
        check=_frequencies)
    mma_efficiency: float = param(
        "Fraction of the tensor-core rate the pipelined main loop sustains.",
        check=_unit_interval)
    sustained_tensor_time_ratio: float = param(
        "Time of a compute-bound tensor-core GEMM held for seconds at the power cap over its "
        "time in the short timings (tens of ms) that mma_efficiency was fitted on: the clock "
        "falls further once the cap binds. A sustained machine (GpuMachine.sustained: "
        "serving) runs its tensor-core precisions' clocks divided by it; 1 = no difference.",
        check=positive)
    unaligned_mma_fraction: float = param(
        "Rate of the fallback kernels for operands off the 16-byte alignment, as a fraction "
        "of the aligned tensor-core rate.", check=_unit_interval)
    unaligned_pitch_mma_fraction: float = param(
        "Rate of the same fallback kernels in the slower pitch class measured on the H200 "
        "(B and C rows 16-byte but not 128-byte aligned while A's are not, or A's rows 4-byte "
        "aligned while B's and C's are not), as a fraction of the aligned tensor-core rate; "
        "0 = the unaligned rate.", check=_unit_interval)
    narrow_mma_fraction: float = param(
        "Rate of the fallback kernels for operands whose rows are 4-byte (not 16-byte) "
        "aligned, as a fraction of the aligned tensor-core rate; 0 = none (use the "
        "unaligned rate).", check=_unit_interval)
    legacy_mma_fraction: float = param(
        "Rate of the library's previous-generation (mma.sync) kernels, for the precisions in "
        "the stack's gemm.legacy_precisions, as a fraction of the aligned tensor-core rate.",
        check=_unit_interval)
    gemm_nonpersistent_cta_s: float = param(
        "Serial prologue and epilogue every CTA of the library's non-persistent CUTLASS 2.x "
        "GEMM kernels (the unaligned, narrow and legacy mma.sync paths) pays: pipeline fill, "
        "epilogue through shared memory, seconds.", check=non_negative)
    gemm_kblock_s: float = param(
        "Shortest time one K block (BK deep) of a warp-specialised tensor-core GEMM main loop "
        "takes whatever its MMAs (producer/consumer barrier handshake, warpgroup MMA issue "
        "and wait), seconds; binds the skinny tiles of small-M GEMMs.",
        check=non_negative)
    gemm_bias_epilogue_s: float = param(
        "Serial time a GEMM kernel with a bias epilogue (nn.Linear through cuBLASLt: the "
        "*_bias_* kernels) adds once: its last tiles' epilogue (bias load, extra pass) is "
        "hidden behind no main loop, seconds.", check=non_negative)
    strided_instr_per_element: float = param(
        "FP32/INT-lane instructions per element a strided pointwise kernel (PyTorch's "
        "non-vectorized TensorIterator elementwise_kernel, CatArrayBatchedCopy) spends on index "
        "arithmetic (per dimension and operand, an OffsetCalculator division and a multiply-"
        "add), in a whole model's calls the lowering tables mark strided.",
        check=non_negative)
    gemm_l2_operand_copies: float = param(
        "Copies of a GEMM's input operands an op's L2 footprint counts (2 on a two-partition "
        "L2 where lines read by SMs on both sides are cached in both halves).",
        check=_at_least_one)
    simt_efficiency: float = param(
        "Fraction of the FP32 CUDA-core FMA rate an SGEMM main loop sustains.",
        check=_unit_interval)
    simt_elementwise_efficiency: float = param(
        "Fraction of the FP32 rate that elementwise/reduction kernels get for their math.",
        check=_unit_interval)
    transcendental_instr: float = param(
        "FP32-lane instructions of one library transcendental (tanhf, expf: a software "
        "routine around one SFU op) in an elementwise kernel.",
        check=non_negative)
    layernorm_instr_per_element: float = param(
        "Thread instructions per element of the row-wise LayerNorm kernel (Welford with IEEE "
        "division, normalise, conversions).", check=positive)
    rmsnorm_instr_per_element: float = param(
        "Thread instructions per element of the same kernel run as RMSNorm (F.rms_norm: "
        "sum of squares, no mean, no Welford division).", check=positive)
    welford_cta_instr: float = param(
        "Extra thread instructions per LayerNorm CTA for combining Welford partial "
        "statistics across the block (a division per combine; RMSNorm only adds).",
        check=non_negative)
    row_mem_instr: float = param(
        "Thread instructions per load or store instruction of a row-wise kernel (address "
        "arithmetic, bounds predicate, the access, conversions of its elements).",
        check=non_negative)
    row_dependent_issue: float = param(
        "Cycles per instruction of a warp with no other warp on its scheduler (dependent "
        "issue latency): bounds a row-wise CTA with few warps running alone.",
        check=positive)
    exp_instr: float = param(
        "FP32-lane instructions of one expf (range reduction around one SFU ex2) in "
        "PyTorch's softmax kernels; 0 = transcendental_instr.",
        check=non_negative)
    erf_instr: float = param(
        "FP32-lane instructions of one erff (PyTorch's default, exact GELU) in an "
        "elementwise kernel.", check=non_negative)
    softmax_instr_per_element: float = param(
        "Thread instructions per element of the row-wise softmax kernels (exp, division, "
        "conversions).", check=positive)
    row_cta_instr: float = param(
        "Fixed thread instructions per thread of a row-wise CTA (index math, reductions).",
        check=non_negative)
    block_reduce_s: float = param(
        "Latency of one block-wide reduction in a row-wise kernel (shuffles, shared memory, "
        "two barriers), seconds.", check=non_negative)
    reduce_round_trips: float = param(
        "L2 round trips per dependent vector load of PyTorch's reduce_kernel over the "
        "contiguous dim (mean(-1)): each thread's loop of 16-byte loads.",
        check=positive)
    sparse_speedup: float = param(
        "Tensor-core rate on 2:4 structured-sparse weights over the dense rate (datasheet: "
        "2 on Ampere and Hopper); 0 = no sparse tensor cores.",
        check=non_negative)

    def __post_init__(self) -> None:  # mapping fields are checked here (build skips them)
        for name, check in (("tensor_flop_per_clk_per_sm", _rates),
                            ("clock_under_load_hz", _frequencies)):
            problem = check(getattr(self, name))
            if problem:
                raise ValueError(f"{name}: {problem}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Hbm:
    """Off-chip high-bandwidth memory."""

    technology: str = param("Memory technology (selects pJ/bit in the energy table).",
                            choices=DRAM_TECHNOLOGIES)
    capacity_bytes: float = param("Capacity, bytes.", check=positive)
    bandwidth_bytes_per_s: float = param("Peak bandwidth (datasheet), bytes/s.", check=positive)
    efficiency: float = param("Sustained fraction of peak for streaming kernels.",
                              check=_unit_interval)
    latency_s: float = param("Load-to-use latency of a miss to HBM, seconds.",
                             check=non_negative)

    @property
    def sustained_bytes_per_s(self) -> float:
        """Bandwidth a streaming kernel achieves, bytes/s."""
        return self.bandwidth_bytes_per_s * self.efficiency


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuMemory:
    """L2 cache, HBM, and how much an SM can keep in flight."""

    l2_bytes: float = param("L2 cache capacity, bytes.", check=positive)
    l2_bandwidth_bytes_per_s: float = param("Sustained L2 read bandwidth, all SMs, bytes/s.",
                                            check=positive)
    l2_latency_s: float = param("Load-to-use latency of an L2 hit, seconds.", check=non_negative)
    l2_thrash_ratio: float = param(
        "Capacity/footprint ratio below which repeated streams find nothing in L2.", check=fraction)
    l2_write_weight: float = param(
        "How many bytes of L2 a written byte occupies (allocation + pending write-back).",
        check=positive)
    sm_inflight_bytes: float = param(
        "Bytes one SM keeps in flight to memory (Little's law caps an SM at this / latency).",
        check=positive)
    loaded_hbm_latency_s: float = param(
        "HBM round trip a load sees while every SM streams (queueing included), seconds; "
        "0 = hbm.latency_s. Used by the serial load chains of row-wise kernels.",
        check=non_negative)
    hbm: Hbm = param("Off-chip memory.")


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuHost:
    """The host link and the cost of launching a kernel."""

    pcie_generation: int = param("PCIe generation of the host link.", check=positive)
    pcie_lanes: int = param("PCIe lanes of the host link.", check=positive)
    launch_s: float = param("GPU-side gap per kernel launch (back to back, CUDA graph), s.",
                            check=non_negative)
    kernel_tail_s: float = param(
        "Per-kernel cost of a whole model's stream beyond launch_s and the kernel itself, "
        "seconds (fitted on whole models; an op timed back to back does not pay it, nor does "
        "a convolution kernel: ARCHITECTURE.md, GPU per-kernel costs). A GEMM launched right "
        "after another GEMM hides it where the stack has programmatic dependent launch "
        "(gemm.dependent_launch).",
        check=non_negative)
    strided_kernel_s: float = param(
        "Extra GPU time of a pointwise kernel PyTorch launches strided (elementwise_kernel / "
        "unrolled_elementwise_kernel on transposed or broadcast views and casts, "
        "CatArrayBatchedCopy) over a vectorized one, seconds; the lowering tables name each "
        "call's launch family.", check=non_negative)
    extra_kernel_s: float = param(
        "Host time an eager call spends on each kernel its library launches besides the main "
        "one, by shape (split-K reduce, split-KV combine, Winograd transforms, channel "
        "padding, NCHW<->NHWC transposes), seconds; eager_call_s holds one-kernel calls.",
        check=non_negative)

    @property
    def kernel_launch_s(self) -> float:
        """Fixed GPU-side cost of one kernel in a whole model's stream: launch gap +
        ``kernel_tail_s``, s."""
        return self.launch_s + self.kernel_tail_s
    host_launch_s: float = param("Host time to issue one framework op eagerly, seconds.",
                                 check=non_negative)
    eager_call_s: Mapping[str, object] = param(
        "Host time to dispatch one eager framework call (Python, dispatcher, library "
        "heuristics, launch), by call class of the lowering tables "
        "(configs/lowering/*.yaml), seconds.", check=_durations)
    graph_launch_s: float = param("Host time to launch one captured CUDA graph, seconds.",
                                  check=non_negative)
    sync_s: float = param("Host time of one stream synchronize once the GPU is done, "
                          "seconds.", check=non_negative)

    def call_s(self, call_class: str) -> float:
        """Host dispatch time of one eager call of ``call_class``, seconds.

        Classes missing from ``eager_call_s`` cost ``host_launch_s`` (one op issued eagerly)."""
        value = self.eager_call_s.get(call_class)
        return self.host_launch_s if value is None else parse_time(value)

    def __post_init__(self) -> None:  # mapping fields are checked here (build skips them)
        problem = _durations(self.eager_call_s)
        if problem:
            raise ValueError(f"eager_call_s: {problem}")


@functools.lru_cache(maxsize=512)
def _hz(value: object) -> float:
    """A clock as written in the YAML, parsed once (kernel costing asks for it per kernel)."""
    return parse_frequency(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuMachine:
    """One tensor-core GPU (V100, A100, H100, H200, ...)."""

    kind: str = param("Machine kind.", default="gpu", choices=("gpu",))
    name: str = param("Short name.")
    description: str = param("One line on what this machine is.", default="")
    architecture: str = param("Architecture generation of the chip (its stack must be for "
                              "it).", choices=ARCHITECTURES)
    stack: GpuStack = param("The library stack the chip runs (configs/software/<name>.yaml, "
                            "named in the YAML: stack: hopper).")
    compute: GpuCompute = param("SMs and arithmetic.")
    memory: GpuMemory = param("Caches and HBM.")
    host: GpuHost = param("Host link and launch costs.")
    energy: EnergySelection = param("Energy table and overrides.", default=EnergySelection())
    conv: GpuConvKernels = param("Convolution and CNN-glue kernel constants.")
    sources: tuple[str, ...] = param("Where the numbers come from.", default=())
    validation: str = param("What the machine's figures were checked against: empty (see its "
                            "sources and the validators), or 'unvalidated' (datasheet values "
                            "only, never compared with a measurement: every figure shown is "
                            "marked so).", default="", choices=("", "unvalidated"))

    def __post_init__(self) -> None:
        if self.stack.architecture != self.architecture:
            raise ConfigError(None, "stack", self.stack.name,
                              f"a stack for {self.stack.architecture}, but the chip is "
                              f"{self.architecture}")
        rates = self.compute.tensor_flop_per_clk_per_sm
        have = ("fp32", *rates)
        for p in self.compute.clock_under_load_hz:
            if p not in have:
                raise ConfigError(None, f"compute.clock_under_load_hz.{p}",
                                  self.compute.clock_under_load_hz[p],
                                  f"a precision the chip lacks (it runs {', '.join(have)})")
        for p in rates:
            if p not in self.stack.gemm.precisions:
                raise ConfigError(None, f"compute.tensor_flop_per_clk_per_sm.{p}", rates[p],
                                  f"stack {self.stack.name} has no {p} GEMM kernels")

    @property
    def sm_count(self) -> int:
        """Shortcut to ``compute.sm_count``."""
        return self.compute.sm_count

    def supports(self, precision: str) -> bool:
        """Whether this GPU can run ``precision`` (fp32 always: CUDA cores)."""
        return precision == "fp32" or precision in self.compute.tensor_flop_per_clk_per_sm

    def check_precision(self, precision: str) -> None:
        """Raise :class:`UnsupportedError` naming device and precision if it cannot run it."""
        if precision not in GPU_PRECISIONS:
            raise UnsupportedError(f"{self.name}: unknown precision {precision!r} "
                                   f"(known: {', '.join(GPU_PRECISIONS)})")
        if not self.supports(precision):
            have = ", ".join(["fp32", *self.compute.tensor_flop_per_clk_per_sm])
            raise UnsupportedError(f"{self.name} has no {precision} support (it runs {have})")

    def flop_per_clk_per_sm(self, precision: str) -> float:
        """Dense FLOP/clock/SM at ``precision``: tensor cores, or CUDA cores for fp32."""
        self.check_precision(precision)
        if precision == "fp32":
            return self.compute.simt_flop_per_clk_per_sm
        return float(self.compute.tensor_flop_per_clk_per_sm[precision])

    def sustained(self) -> GpuMachine:
        """This machine held at load for minutes (a serving engine): every tensor-core
        precision's clock under load divided by ``compute.sustained_tensor_time_ratio``
        (CUDA-core fp32, which does not reach the cap, unchanged)."""
        ratio = self.compute.sustained_tensor_time_ratio
        if ratio == 1.0:
            return self
        clocks = {p: (v if p == "fp32" else _hz(v) / ratio)
                  for p, v in self.compute.clock_under_load_hz.items()}
        return dataclasses.replace(
            self, compute=dataclasses.replace(self.compute, clock_under_load_hz=clocks))

    def load_clock_hz(self, precision: str) -> float:
        """SM clock under a sustained load at ``precision`` (the rated clock if not given)."""
        table = self.compute.clock_under_load_hz
        if precision in table:
            return _hz(table[precision])
        return self.compute.clock_hz

    def peak_flops(self, precision: str) -> float:
        """Datasheet dense peak, FLOP/s, at the rated clock."""
        return self.flop_per_clk_per_sm(precision) * self.compute.sm_count * self.compute.clock_hz
