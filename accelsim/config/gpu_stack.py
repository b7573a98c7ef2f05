"""The library stack of a GPU architecture generation (``configs/software/<name>.yaml``,
``kind: gpu_stack``): which GEMM kernel families cuBLAS / cuBLASLt / CUTLASS and cuDNN have
on it, their tile sets, the split-K choices, and the generation's library features (TMA
multicast, programmatic dependent launch). A GPU config names its stack (``stack: hopper``);
the stack names the architecture it is for, and a GPU of another architecture is refused.

What the chip does with these kernels (rates, fitted fractions, instruction costs) stays in
the GPU config; the stack says only which kernels exist and how the library picks among them
(the mechanisms: ``accelsim/hw/gpu/gemm.py``, ``conv.py``).

Imports: errors, config.inherit, config.schema.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accelsim.config.inherit import Provenance, resolve_file
from accelsim.config.schema import build, fraction, param, positive
from accelsim.errors import ConfigError

STACK_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "mxfp8", "nvfp4", "mxfp4")
"""Precisions a stack may name (the GPU model's, :data:`accelsim.config.gpu.GPU_PRECISIONS`)."""
ARCHITECTURES = ("volta", "turing", "ampere", "ada", "hopper", "blackwell")
"""NVIDIA architecture generations a GPU config and a stack may name."""
_TILE = re.compile(r"^([1-9][0-9]*)x([1-9][0-9]*)$")


def _positive_or_null(v: Any) -> str | None:
    """Check: null, or strictly greater than zero."""
    return None if v is None else positive(v)


def _tile(t: Any) -> str | None:
    """Check (per list item): a ``BMxBN`` tile."""
    return None if _TILE.match(str(t)) else "expected a BMxBN tile, e.g. 128x128"


def _precision(p: Any) -> str | None:
    """Check (per list item): a precision the GPU model knows."""
    if p in STACK_PRECISIONS:
        return None
    return f"unknown precision (known: {', '.join(STACK_PRECISIONS)})"


def _tiles(v: Any) -> str | None:
    for t in v:
        if _tile(t):
            return f"tile {t!r}: expected BMxBN, e.g. 128x128"
    return None


def _precisions(v: Any) -> str | None:
    for p in v:
        if _precision(p):
            return f"unknown precision {p!r} (known: {', '.join(STACK_PRECISIONS)})"
    return None


def _per_precision(v: Mapping, value_check: Any) -> str | None:
    """A mapping precision -> value: every key a known precision, every value passing
    ``value_check`` (a message, or None)."""
    problem = _precisions(list(v))
    if problem:
        return problem
    for key, value in v.items():
        problem = value_check(value)
        if problem:
            return f"{key}: {problem}"
    return None


def _k_block(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return None if ok else "must be a whole number > 0"


def _tile_list(tiles: Any) -> str | None:
    if not isinstance(tiles, (list, tuple)):
        return "expected a list of BMxBN tiles"
    return _tiles(tiles)


def _k_blocks(v: Mapping) -> str | None:
    return _per_precision(v, _k_block)


def _precision_tiles(v: Mapping) -> str | None:
    return _per_precision(v, _tile_list)


@functools.lru_cache(maxsize=256)
def parse_tiles(tiles: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    """``("128x128", "256x128")`` -> ``((128, 128), (256, 128))``."""
    out = []
    for t in tiles:
        m = _TILE.match(str(t))
        if m is None:
            raise ValueError(f"tile {t!r}: expected BMxBN")
        out.append((int(m.group(1)), int(m.group(2))))
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class SimtKernel:
    """One fp32 CUDA-core SGEMM kernel of the library (see ``hw/gpu/gemm.py``)."""

    tile: str = param("BMxBN output tile of one CTA (a tile's transpose is also one).",
                      check=_tile)
    threads: int = param("Threads of one CTA.", check=positive)
    k_slices: int = param(
        "Thread groups of the CTA that each run a slice of the K loop over the whole tile "
        "(cuBLAS's sliced1x4: 4), summed through shared memory at the end; 1 = none.",
        default=1, check=positive)
    registers: int = param(
        "Registers per thread (the per-SM occupancy: register file / (threads x "
        "registers) CTAs).", check=positive)

    def shape(self) -> tuple[int, int]:
        """``(BM, BN)``."""
        return parse_tiles((self.tile,))[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmStack:
    """The GEMM library's kernel families on one generation (see ``hw/gpu/gemm.py``)."""

    precisions: tuple[str, ...] = param(
        "Precisions the library has tensor-core GEMM kernels for (fp32: CUDA-core SGEMM, "
        "always).", check=_precision)
    k_block: Mapping[str, int] = param(
        "K depth (BK) of one main-loop stage of the tensor-core and SGEMM kernels, per "
        "precision, elements.", check=_k_blocks)
    tensor_core_tiles: tuple[str, ...] = param(
        "BMxBN tiles of the generation's own tensor-core kernels (a tile's transpose is "
        "also one).", check=_tile)
    precision_tiles: Mapping[str, object] = param(
        "Precisions whose tensor-core kernels have their own tile set instead of "
        "tensor_core_tiles, precision -> BMxBN tiles.", check=_precision_tiles)
    wave_fitting_tiles: tuple[str, ...] = param(
        "Odd-sized tiles the library adds for GEMMs of a few waves (cuBLASLt's nvjet "
        "kernels on Hopper); empty = none.", check=_tile)
    wave_fitting_precisions: tuple[str, ...] = param(
        "Precisions that get wave_fitting_tiles.", check=_precision)
    wave_fitting_max_waves: int | None = param(
        "GEMMs of at most this many waves of 128x128 tiles get the wave-fitting tiles; "
        "null = every GEMM of a wave_fitting precision.", check=_positive_or_null)
    unaligned_tiles: tuple[str, ...] = param(
        "Tiles of the element-aligned fallback kernels (CUTLASS 2.x align1).", check=_tile)
    unaligned_k_block: int = param("BK of the align1 fallback kernels, elements.",
                                   check=positive)
    narrow_tiles: tuple[str, ...] = param(
        "Tiles of the 4-byte-row fallback kernels (CUTLASS 2.x align2).", check=_tile)
    narrow_k_block: int = param("BK of the align2 fallback kernels, elements.", check=positive)
    legacy_precisions: tuple[str, ...] = param(
        "Precisions the library runs only on previous-generation (mma.sync) kernels even "
        "when aligned (int8 on Hopper); empty = none.", check=_precision)
    legacy_tiles: tuple[str, ...] = param("Tiles of those previous-generation kernels.",
                                          check=_tile)
    simt_kernels: tuple[SimtKernel, ...] = param(
        "The fp32 CUDA-core SGEMM kernels (cuBLAS's <arch>_sgemm_<BM>x<BN>[_sliced1x<S>]): "
        "tile, threads, K slices, registers per thread.")
    simt_batched_tiles: tuple[str, ...] = param(
        "Tiles the strided-batched SGEMM (bmm, cublasSgemmStridedBatched) runs; empty = "
        "every simt_kernels tile.", check=_tile)
    split_k: tuple[int, ...] = param(
        "Split-K factors the heuristic considers (1 = no split); a split is used only while "
        "the tiles are fewer than the SMs and each slice is at least two K blocks deep.")
    split_k_max_waves: int = param(
        "Split-K of the generation's own (persistent) tensor-core kernels only fills SMs the "
        "tiles leave idle: a split is used while tiles x split fit in this many waves of the "
        "SMs (1: one wave; 2 x tiles <= SMs to split at all). Fallback kernels split while "
        "their tiles are fewer than the SMs.",
        check=positive)
    split_k_min_k_blocks: int = param(
        "Split-K of the generation's own tensor-core kernels only for a K of at least this "
        "many K blocks (BK): a short main loop gains nothing worth a reduce kernel.",
        check=positive)
    fit_tiles_to_problem: bool = param(
        "Tensor-core tiles are no longer along M (N) than M (N) rounded up to a power of two "
        "(at least the smallest tile side): no tile of mostly padding (cuBLASLt's 64x8, "
        "64x16, 64x32 nvjet tiles at M = 1..32).")
    single_tile_max: int = param(
        "With fit_tiles_to_problem, a GEMM whose M (N) is at most this runs one tile along "
        "it: the smallest tile side that covers it, elements.", check=positive)
    stream_max_m: int = param(
        "GEMMs with M up to this read each weight element once, with an evict-first hint "
        "(streamed, not kept in L2), elements.", check=positive)
    stream_l2_share: float = param(
        "Share (0..1) of L2 that a streamed (evict-first) weight operand keeps across "
        "back-to-back calls of its GEMM: evict-first lines go first under pressure, here "
        "each other's (0: every call reads it from HBM).", check=fraction)
    multicast_ctas: int = param(
        "CTAs of a cluster sharing one operand load through TMA multicast (Hopper: 2; "
        "1 = none).", check=positive)
    dependent_launch: bool = param(
        "Whether a GEMM following a GEMM in a whole model's stream starts while its "
        "predecessor retires (programmatic dependent launch), hiding host.kernel_tail_s; "
        "measured absent in PyTorch's CUDA graphs on the H200 (run 30).")

    def __post_init__(self) -> None:
        for name, check in (("k_block", _k_blocks), ("precision_tiles", _precision_tiles)):
            problem = check(getattr(self, name))
            if problem:
                raise ConfigError(None, f"gemm.{name}", getattr(self, name), problem)
        if not self.split_k or self.split_k[0] != 1 or any(
                isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in self.split_k):
            raise ConfigError(None, "gemm.split_k", list(self.split_k),
                              "expected whole numbers >= 1, starting with 1")
        for p in (*self.precisions, "fp32"):
            if p not in self.k_block:
                raise ConfigError(None, "gemm.k_block", dict(self.k_block),
                                  f"no K block for {p}")

    def tiles_for(self, precision: str) -> tuple[tuple[int, int], ...]:
        """``(BM, BN)`` tiles of the tensor-core kernels at ``precision``."""
        own = self.precision_tiles.get(precision)
        return parse_tiles(tuple(own) if own is not None else self.tensor_core_tiles)


CONV_ALGORITHMS = ("winograd", "winograd_nonfused")
"""cuDNN fprop algorithms besides implicit GEMM that a stack may name
(``CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD``, ``..._WINOGRAD_NONFUSED``; ``hw/gpu/winograd.py``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConvAlgorithm:
    """One cuDNN fprop algorithm and the convolutions it runs (``hw/gpu/winograd.py``): an
    ungrouped ``filter x filter`` convolution of stride ``stride`` at a precision of
    ``precisions``; cuDNN then takes it or implicit GEMM, whichever is predicted faster."""

    algorithm: str = param("cuDNN's algorithm (winograd: one fused kernel; "
                           "winograd_nonfused: transforms and a batched GEMM apart).",
                           choices=CONV_ALGORITHMS)
    precisions: tuple[str, ...] = param("Precisions it runs.", check=_precision)
    filter: int = param("Filter height = width it takes (R = S), elements.", check=positive)
    stride: int = param("Filter stride it takes (both directions).", check=positive)
    output_tile: int = param(
        "Winograd F(m x m, r x r): m, the output tile side one transformed tile yields "
        "(the input tile is m + r - 1 on a side), elements.", check=positive)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConvStack:
    """cuDNN's convolution kernels on one generation (see ``hw/gpu/conv.py``)."""

    implicit_gemm_tiles: tuple[str, ...] = param(
        "BMxBN tiles of cuDNN's implicit-GEMM fprop kernels (tilesize64x64x64...); they "
        "do not split K.", check=_tile)
    fprop_algorithms: tuple[ConvAlgorithm, ...] = param(
        "The other fprop algorithms cuDNN picks among (Winograd); empty = implicit GEMM "
        "for every ungrouped convolution that is not a 1x1.")


@dataclass(frozen=True, slots=True, kw_only=True)
class AttentionStack:
    """The fused-attention kernels' choices on one generation (see ``hw/gpu/attention.py``)."""

    split_kv_min_blocks: int = param(
        "Decode attention splits a head's K/V sequence over several CTAs (split-KV, "
        "flash-decoding, then a combine kernel) only when the sequence has at least this "
        "many K/V blocks and the heads leave SMs idle.", check=positive)
    fprop_memset_min_seq_q: int | None = param(
        "An attention of at least this many queries runs the library's prefill kernel, "
        "which a memset of its workspace precedes (a node of its own in a CUDA graph); "
        "null = no memset.", check=_positive_or_null)


SOFTMAX_BLOCK_KERNELS = ("reg", "smem", "block")
"""PyTorch's one-CTA-per-row softmax kernels (``hw/gpu/rows.py`` :func:`softmax_shape`)."""
SOFTMAX_BLOCK_SIZES = ("cols", "half_vectors")
"""How PyTorch sizes a softmax CTA: ``cols`` = ``SoftMaxForward_getBlockSize`` (min(cols,
1024) rounded up to a warp), ``half_vectors`` = ``SoftMax_getBlockSize(ILP, cols)`` (the
power of two at least half the row's 16-byte vectors, 32-1024)."""


def _softmax_kernels(v: Any) -> str | None:
    """Check (per list item): a softmax block kernel family."""
    if v in SOFTMAX_BLOCK_KERNELS:
        return None
    return f"unknown softmax kernel (known: {', '.join(SOFTMAX_BLOCK_KERNELS)})"


@dataclass(frozen=True, slots=True, kw_only=True)
class RowStack:
    """The framework's row-kernel dispatch on one generation (see ``hw/gpu/rows.py``)."""

    softmax_warp_max_cols: int = param(
        "Rows of at most this many columns (and softmax_warp_max_bytes) run the one-warp-"
        "per-row softmax_warp_forward kernel, elements.", check=positive)
    softmax_warp_max_bytes: int = param(
        "... and of at most this many bytes, bytes.", check=positive)
    softmax_block_kernels: tuple[str, ...] = param(
        "The one-CTA-per-row softmax kernels the framework has, in its dispatch order "
        "(reg: cunn_SoftMaxForwardReg, smem: cunn_SoftMaxForwardSmem, block: "
        "cunn_SoftMaxForward, the last resort).", check=_softmax_kernels)
    softmax_block_threads: str = param(
        "How a one-CTA-per-row softmax sizes its CTA (cols or half_vectors).",
        choices=SOFTMAX_BLOCK_SIZES)


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuStack:
    """A GPU generation's library stack (``configs/software/<name>.yaml``)."""

    kind: str = param("File kind.", choices=("gpu_stack",))
    name: str = param("Short name (the file's, as GPU configs name it).")
    description: str = param("Libraries and versions this stack stands for.", default="")
    architecture: str = param("The GPU architecture generation it runs on.",
                              choices=ARCHITECTURES)
    gemm: GemmStack = param("GEMM kernel families.")
    conv: ConvStack = param("Convolution kernel families.")
    attention: AttentionStack = param("Fused-attention (SDPA) kernel choices.")
    rows: RowStack = param("Row-wise kernel (softmax) dispatch of the framework.")
    sources: tuple[str, ...] = param("Where the kernel names and rules come from.", default=())


def load_stack(name: str, *, file: str | None = None,
               field: str = "stack") -> tuple[dict[str, Any], dict[str, Provenance]]:
    """The resolved mapping of stack ``name`` (``configs/software/<name>.yaml`` or a path)
    and its provenance; a name that finds no stack is a :class:`ConfigError` naming ``file``
    and ``field``."""
    try:
        res = resolve_file(name, "software")
    except ConfigError as exc:
        if exc.file == name:
            raise ConfigError(file, field, name, exc.reason) from None
        raise
    if res.data.get("kind") != "gpu_stack":
        raise ConfigError(file, field, name, f"{res.file} is not a gpu_stack file")
    build(GpuStack, res.data, file=res.file)  # its own errors name the stack file
    return res.data, res.provenance


def expand_stack(data: Mapping[str, Any], *, file: str | None = None
                 ) -> tuple[dict[str, Any], dict[str, Provenance]]:
    """``data`` (a GPU machine mapping) with ``stack: NAME`` replaced by the stack's mapping,
    and the stack's provenance keyed ``stack.*``; a mapping already there is kept."""
    out = dict(data)
    name = out.get("stack")
    if not isinstance(name, str):
        return out, {}
    stack, prov = load_stack(name, file=file)
    out["stack"] = stack
    return out, {f"stack.{p}": v for p, v in prov.items()}
