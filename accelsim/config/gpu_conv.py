"""Constants of the convolution and CNN-glue kernels of a GPU (the ``conv:`` section of a GPU
YAML): what the cuDNN / PyTorch kernels cost beyond what the datasheet and the GEMM model
already say. Every calibrated value carries a ``# cal:`` comment in the YAML; the mechanisms
are in ``accelsim/hw/gpu/conv.py``, ``conv_kernels.py`` and ``cnn_glue.py``.

Imports: config.schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.config.schema import non_negative, param, positive


def _unit(v: float) -> str | None:
    return None if 0 < v <= 1 else "must be in (0, 1]"


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuConvKernels:
    """Convolution kernel families and the BatchNorm / pooling kernels around them."""

    tile_fixed_s: float = param(
        "Serial prologue and epilogue of one tensor-core output tile beyond the first load's "
        "latency (barrier and descriptor set-up, filling the multi-stage load pipeline, the "
        "epilogue's store and fence) that every CTA of a non-persistent cuDNN implicit GEMM "
        "pays (a persistent cuBLAS kernel once), seconds.", check=non_negative)
    direct_instr_per_mac: float = param(
        "FP32-lane instructions per MAC of cuDNN's direct kernel for inputs with very few "
        "channels (C x element < 16 bytes: the C = 3 stem; gathers, conversions, FMA).",
        check=positive)
    direct_instr_per_output: float = param(
        "FP32-lane instructions per output element of that direct kernel (accumulator set-up, "
        "index math, conversion and store).", check=non_negative)
    tiny_c_mma_fraction: float = param(
        "Main-loop rate of the implicit GEMM over a channel-padded (C -> 8) input, as a "
        "fraction of the aligned tensor-core rate (Ampere mma.sync kernels gathering one "
        "16-byte filter tap per pixel).", check=_unit)
    depthwise_instr_per_row: float = param(
        "FP32-lane instructions per input row segment a depthwise kernel loads for one "
        "output (R x stride per output: load, bf16->fp32 conversion, index math, bounds).",
        check=non_negative)
    depthwise_fixed_s: float = param(
        "Serial time before a depthwise CTA's first output (its filter taps and input "
        "rows loaded, tile indices computed), seconds.", check=non_negative)
    depthwise_nchw_instr_per_tap: float = param(
        "FP32-lane instructions per output and filter tap of PyTorch's native NCHW "
        "depthwise kernel (conv_depthwise2d_forward_kernel: one thread per output, each tap "
        "a bounds check, index math, a global load, a conversion and an FMA).",
        check=positive)
    depthwise_nchw_instr_per_output: float = param(
        "FP32-lane instructions per output of that NCHW depthwise kernel besides its taps "
        "(the thread's index math, bounds set-up, conversion and store).",
        check=non_negative)
    depthwise_nchw_fixed_s: float = param(
        "Serial time of that NCHW depthwise kernel before its outputs (its CTAs' index "
        "set-up and first loads), seconds.", check=non_negative)
    layout_transpose_bytes_per_s: float = param(
        "Bytes read plus written per second by cuDNN's nchwToNhwc / nhwcToNchw kernels "
        "around a convolution on an NCHW tensor (tiled transposes of 2-byte elements), "
        "bytes/s.", check=positive)
    grouped_gather_efficiency: float = param(
        "Fraction of the L2 bandwidth a grouped implicit-GEMM kernel reaches on its im2col "
        "gathers (one small per-group channel slice per pixel and tap).",
        check=_unit)
    bn_round_trips: float = param(
        "Memory round trips per loop iteration of PyTorch's channels-last BatchNorm "
        "transform kernel (4 scalar loads in flight per thread, then their stores).",
        check=positive)
    pool_round_trips: float = param(
        "Memory round trips per window tap of PyTorch's NHWC max-pool kernel (per thread, "
        "taps are compared into shared memory one after another).",
        check=positive)
