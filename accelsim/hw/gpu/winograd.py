"""Winograd convolutions as cuDNN runs them (``CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD`` and
``..._WINOGRAD_NONFUSED``): the kernels and their cost, from first principles (Lavin and Gray,
"Fast Algorithms for Convolutional Neural Networks", 2016); no constant is fitted here.

Winograd ``F(m x m, r x r)`` computes an ``m x m`` output tile of an ``r x r`` stride-1
convolution from an ``a x a`` input tile, ``a = m + r - 1``: the input tile is transformed
(``B^T d B``), multiplied element-wise by the transformed filter (``G g G^T``) and summed over
the input channels, then transformed back (``A^T M A``). Over ``T = N ceil(Ho/m) ceil(Wo/m)``
tiles the element-wise products summed over channels are ``a^2`` independent GEMMs of
``[T x C] @ [C x K]``: ``a^2 T C K`` multiplies where the direct (implicit-GEMM) convolution
needs ``m^2 r^2 T C K``, fewer by ``a^2 / (m^2 r^2)`` (4/9 for F(2x2, 3x3), 1/4 for
F(4x4, 3x3)), at the price of the transforms.

* **Non-fused** (``winograd_nonfused``): four kernels. The input transform streams the input
  (``N H W C``) into the transformed tiles (``a^2 T C`` fp32 words); the filter transform
  streams the filters into ``a^2 C K`` words; the ``a^2`` GEMMs run as one strided-batched
  GEMM (``hw/gpu/gemm.py`` ``plan_gemm``, its operands and outputs in HBM like any GEMM's);
  the output transform streams the ``a^2 T K`` products into the output (``N Ho Wo K``). Each
  transform is a memory stream (``hw/gpu/memory.py`` ``stream_kernel``) whose arithmetic is
  counted as dense matrix products of the transform matrices (an upper bound: ``B``, ``G``
  and ``A`` have many zero and unit entries).
* **Fused** (``winograd``): one kernel that transforms tiles on chip; its main loop is the
  batched GEMM's (the same tiles and per-CTA costs), but HBM sees only the input, the
  filters and the output as stored, like an implicit GEMM's; every CTA pays cuDNN's per-tile
  prologue and epilogue (``conv.tile_fixed_s``) as the implicit GEMM's do. The transforms'
  arithmetic inside it is not counted.

Which algorithm runs is the stack's (``conv.fprop_algorithms``: filter, stride, precisions,
``m``) and then the cost: :mod:`accelsim.hw.gpu.conv` takes implicit GEMM or a Winograd
variant, whichever is predicted faster, as cuDNN's search would.

Units: seconds, bytes, elements. Imports: config, workload, hw.gpu.
"""

from __future__ import annotations

import math

from accelsim.config.gpu import GpuMachine
from accelsim.config.gpu_stack import ConvAlgorithm
from accelsim.hw.gpu.conv_kernels import io_bytes
from accelsim.hw.gpu.gemm import GemmPlan, plan_gemm
from accelsim.hw.gpu.kernel import EXTRA_LAUNCH, Kernel
from accelsim.hw.gpu.memory import stream_kernel
from accelsim.workload.ops import Conv2d

TRANSFORMED_BYTES = 4
"""Bytes of one transformed value (cuDNN keeps the transformed tiles in fp32)."""


def applies(algo: ConvAlgorithm, op: Conv2d, precision: str) -> bool:
    """Whether ``algo`` can run ``op`` at ``precision``: ungrouped, a square filter of its
    size, its stride."""
    return (op.groups == 1 and op.r == op.s == algo.filter and op.stride == algo.stride
            and precision in algo.precisions)


def input_tile(algo: ConvAlgorithm) -> int:
    """``a = m + r - 1``: the side of the input tile of F(m x m, r x r), elements."""
    return algo.output_tile + algo.filter - 1


def tiles(op: Conv2d, m: int) -> int:
    """Output tiles of ``m x m`` over every image: ``N ceil(Ho/m) ceil(Wo/m)``."""
    return op.n * math.ceil(op.out_h / m) * math.ceil(op.out_w / m)


def multiply_fraction(algo: ConvAlgorithm) -> float:
    """Multiplies per tile against the direct convolution's: ``a^2 / (m^2 r^2)``."""
    m, r = algo.output_tile, algo.filter
    return input_tile(algo) ** 2 / (m * m * r * r)


def plan_winograd(gm: GpuMachine, op: Conv2d, precision: str, algo: ConvAlgorithm
                  ) -> tuple[GemmPlan, tuple[Kernel, ...]]:
    """The batched Winograd-domain GEMM's plan and every kernel ``algo`` launches for
    ``op`` (in stream order)."""
    a, m = input_tile(algo), algo.output_tile
    t = tiles(op, m)
    x, w, y = io_bytes(op, precision)
    if algo.algorithm == "winograd":
        gemm = plan_gemm(gm, t, op.k, op.c, precision, batch=a * a, shared_weights=False,
                         hbm_unique_bytes=x + w, out_stored_bytes=y,
                         leading_dims=(op.c, op.k), name="conv2d.winograd", max_split=1,
                         cta_fixed_s=gm.conv.tile_fixed_s, dependent_launch=False)
        return gemm, gemm.kernels
    e = TRANSFORMED_BYTES
    r = algo.filter
    tin = a * a * t * op.c * e
    tfilt = a * a * op.c * op.k * e
    tout = a * a * t * op.k * e
    # the transforms as dense matrix products (MACs x 2 FLOP): B^T d B over a x a tiles,
    # G g G^T over r x r filters, A^T M A back to m x m
    in_flops = 2 * 2 * a ** 3 * t * op.c
    filt_flops = 2 * (a * r * r + a * a * r) * op.c * op.k
    out_flops = 2 * (m * a * a + m * m * a) * t * op.k
    meta = {"family": "winograd_nonfused", "winograd_m": m, EXTRA_LAUNCH: True}
    first = (stream_kernel(gm, "conv2d.winograd_input", read_bytes=x, write_bytes=tin,
                           simt_flops=in_flops, meta=meta),
             stream_kernel(gm, "conv2d.winograd_filter", read_bytes=w, write_bytes=tfilt,
                           simt_flops=filt_flops, meta=meta))
    # the transformed operands are fp32: the a^2 products are one strided-batched SGEMM
    gemm = plan_gemm(gm, t, op.k, op.c, "fp32", batch=a * a, shared_weights=False,
                     leading_dims=(op.c, op.k), name="conv2d.winograd_gemm",
                     dependent_launch=False)
    last = stream_kernel(gm, "conv2d.winograd_output", read_bytes=tout, write_bytes=y,
                         simt_flops=out_flops, meta=meta)
    return gemm, (*first, *gemm.kernels, last)
