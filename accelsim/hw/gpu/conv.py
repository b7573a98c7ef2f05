"""Convolutions (NHWC, ``channels_last``) as cuDNN and cuBLAS run them: the kernel family
first, then its kernels.

Families (:func:`conv_family`; kernel names as the H200 profiles show them,
``scripts/data/h200_e2e.json``):

=====================  ======================================  =====================================
family                 when                                    kernels
=====================  ======================================  =====================================
``gemm_1x1``           1x1, stride 1, no padding, ungrouped:   ``nvjet_sm90_*``
                       a plain GEMM with ``M = N H W``,
                       ``N = K``, ``K = C`` (no im2col)
``implicit_gemm``      other ungrouped convs (3x3, strided,    ``sm90_xmma_fprop_implicit_gemm``
                       7x7 with C aligned)
``winograd``           instead of ``implicit_gemm`` where a    ``*_winograd_*`` (one kernel)
                       stack rule applies
                       (``conv.fprop_algorithms``; Volta fp32
                       3x3 stride 1) and it is predicted
                       faster:
                       :mod:`~accelsim.hw.gpu.winograd`
``winograd_nonfused``  the same, four kernels (transforms      transforms + batched SGEMM
                       apart)
``tiny_c_direct``      ``C x element < 16 B`` (the C = 3       ``convolve_common_engine_float_NHWC``
                       stem), when faster
``tiny_c_padded``      the same, when faster: pad C to 16 B,   ``nhwcAddPaddingKernel`` x2 +
                       then implicit GEMM                      ``*fprop*``
``depthwise``          ``groups == C`` (K a multiple of C)     ``conv2d_c1_k1_nhwc``
``depthwise_nchw``     the same on an NCHW tensor              ``conv_depthwise2d_forward_kernel``
                       (:class:`~accelsim.workload.ops.        (PyTorch's own)
                       NchwConv2d`)
``grouped``            ``1 < groups < C``                      ``xmma_fprop_implicit_gemm_*_g16``
=====================  ======================================  =====================================

The implicit GEMM has ``M = N Ho Wo``, ``N = K``, ``K = C R S``: its CTAs gather their im2col
tiles from L2 (the GEMM model's per-CTA operand traffic), HBM sees the input, the filters and
the output once. cuDNN's implicit-GEMM tiles are at least one warpgroup MMA high (64) and it
does not split K (``segment_k_off``): the tile is chosen among the stack's
``conv.implicit_gemm_tiles`` (``configs/software/<stack>.yaml``).
Like the library's heuristics, the tiny-C stem takes whichever of its two families is
predicted faster, and so does a convolution that a Winograd rule of the stack covers
(implicit GEMM or each Winograd variant). Every kernel pays ``host.launch_s`` (launch and
completion, as every GPU kernel of the model); every CTA of cuDNN's non-persistent implicit GEMMs
adds its tile's prologue and epilogue (``conv.tile_fixed_s``), which cuBLAS's persistent 1x1 GEMM
(one CTA per SM) pays once and otherwise overlaps with the next tile.

Not modelled: the ``Memset`` (workspace clear, <= 1 us) cuDNN sometimes launches before an
implicit GEMM (the padded stem's clears are modelled), and cuDNN's choice of an Ampere
``mma.sync`` kernel for some small implicit GEMMs.

Units: seconds, bytes. Imports: config, workload, hw.gpu.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.config.gpu import OPERAND_BYTES, GpuMachine
from accelsim.config.gpu_stack import parse_tiles
from accelsim.hw.gpu.conv_kernels import (
    depthwise_kernel,
    depthwise_nchw_kernel,
    direct_kernel,
    grouped_kernel,
    io_bytes,
    pad_kernels,
    padded_channels,
    slowed,
    with_fixed_cost,
)
from accelsim.hw.gpu.gemm import ALIGN_BYTES, GemmPlan, plan_gemm
from accelsim.hw.gpu.kernel import Kernel, estimate_s, without_tail
from accelsim.hw.gpu.memory import l2_hit_fraction
from accelsim.hw.gpu.winograd import applies, plan_winograd
from accelsim.workload.ops import Conv2d

FAMILIES = ("gemm_1x1", "implicit_gemm", "winograd", "winograd_nonfused", "tiny_c_direct",
            "tiny_c_padded", "depthwise", "depthwise_nchw", "grouped")
"""Kernel families of a convolution (see the module docstring)."""



@dataclass(frozen=True, slots=True)
class ConvPlan:
    """The family chosen for one convolution, its kernels, and the main kernel's shape."""

    family: str
    path: str
    tile: tuple[int, int, int] | None
    split_k: int
    kernels: tuple[Kernel, ...]
    waves: float
    ctas: int
    aligned: bool
    l2_hit: float


def conv_family(op: Conv2d, precision: str) -> str:
    """The kernel family a library runs ``op`` with (tiny-C: ``tiny_c``, decided by time)."""
    cg = op.c // op.groups
    if op.groups > 1:
        if cg == 1:
            return "depthwise_nchw" if op.layout == "nchw" else "depthwise"
        return "grouped"
    if precision != "fp32" and op.c * OPERAND_BYTES[precision] < ALIGN_BYTES:
        return "tiny_c"
    if op.r == 1 and op.s == 1 and op.stride == 1 and op.pad == 0:
        return "gemm_1x1"
    return "implicit_gemm"


def plan_conv2d(m: GpuMachine, op: Conv2d, precision: str, *,
                cold_weight_fraction: float = 0.0) -> ConvPlan:
    """Kernels of one NHWC convolution at ``precision`` (see the module docstring). They pay
    ``host.launch_s`` but not ``host.kernel_tail_s``
    (:func:`~accelsim.hw.gpu.kernel.without_tail`). ``cold_weight_fraction``: the share of
    the filters not in L2 when the convolution starts (a whole model's step), read from HBM
    once by the GEMM-lowered families (1x1, implicit GEMM, padded tiny-C;
    ``hw/gpu/gemm.py`` ``plan_gemm``); Winograd, depthwise, grouped and direct kernels keep
    their op's own L2 residency (their filters are small or transformed)."""
    plan = _plan(m, op, precision, cold_weight_fraction)
    return ConvPlan(**{**_fields(plan),
                       "kernels": tuple(without_tail(k, m) for k in plan.kernels)})


def _plan(m: GpuMachine, op: Conv2d, precision: str, cold: float = 0.0) -> ConvPlan:
    m.check_precision(precision)
    fam = conv_family(op, precision)
    if fam == "gemm_1x1":
        g = op.lower()
        plan = plan_gemm(m, g.m, g.n, g.k, precision, name="conv2d.gemm",
                         cold_weight_fraction=cold)
        return _from_gemm(fam, plan, with_fixed_cost(plan.kernels[0], m.conv.tile_fixed_s))
    if fam == "implicit_gemm":
        return _fastest(m, _from_gemm(fam, _implicit(m, op, precision, op.c, cold)),
                        _winograd_plans(m, op, precision))
    if fam == "depthwise":
        return _single(m, fam, depthwise_kernel(m, op, precision), op, precision)
    if fam == "depthwise_nchw":
        return _single(m, fam, depthwise_nchw_kernel(m, op, precision), op, precision)
    if fam == "grouped":
        return _single(m, fam, grouped_kernel(m, op, precision), op, precision)
    direct = _single(m, "tiny_c_direct", direct_kernel(m, op, precision), op, precision)
    gemm = _implicit(m, op, precision, padded_channels(op.c, precision), cold)
    main = slowed(gemm.kernels[0], m.conv.tiny_c_mma_fraction)
    padded = _from_gemm("tiny_c_padded", gemm, main)
    padded = ConvPlan(**{**_fields(padded), "kernels": (*pad_kernels(m, op, precision),
                                                        *padded.kernels)})
    # chosen on every kernel's full per-kernel cost (launch + tail): that reproduces cuDNN's
    # choice in the profiles (direct at batch 1, padded at 16 and up), which the bodies alone
    # do not (the padded path's three extra small kernels are what it loses on at batch 1)
    t_direct = sum(estimate_s(k, m) for k in direct.kernels)
    t_padded = sum(estimate_s(k, m) for k in padded.kernels)
    return direct if t_direct <= t_padded else padded


def _winograd_plans(m: GpuMachine, op: Conv2d, precision: str) -> list[ConvPlan]:
    """A plan per Winograd algorithm of the stack that applies to ``op`` (none on stacks
    without ``conv.fprop_algorithms``)."""
    out = []
    for algo in m.stack.conv.fprop_algorithms:
        if applies(algo, op, precision):
            gemm, kernels = plan_winograd(m, op, precision, algo)
            plan = _from_gemm(algo.algorithm, gemm)
            out.append(ConvPlan(**{**_fields(plan), "kernels": kernels}))
    return out


def _fastest(m: GpuMachine, first: ConvPlan, others: list[ConvPlan]) -> ConvPlan:
    """The plan of least predicted time (every kernel's full cost); ties keep ``first``."""
    best, best_s = first, sum(estimate_s(k, m) for k in first.kernels)
    for p in others:
        t = sum(estimate_s(k, m) for k in p.kernels)
        if t < best_s:
            best, best_s = p, t
    return best


def _implicit(m: GpuMachine, op: Conv2d, precision: str, channels: int,
              cold: float = 0.0) -> GemmPlan:
    """Implicit GEMM over ``channels`` input channels (``op.c`` or the padded count)."""
    e = OPERAND_BYTES[precision]
    pixels = op.n * op.out_h * op.out_w
    k_depth = channels * op.r * op.s
    stored = (op.n * op.h * op.w * channels + op.k * k_depth) * e
    tiles = parse_tiles(m.stack.conv.implicit_gemm_tiles) if precision != "fp32" else None
    return plan_gemm(m, pixels, op.k, k_depth, precision, hbm_unique_bytes=stored,
                     leading_dims=(channels, op.k), name="conv2d.implicit_gemm", tiles=tiles,
                     max_split=1, cta_fixed_s=m.conv.tile_fixed_s, dependent_launch=False,
                     cold_weight_fraction=cold)


def _from_gemm(family: str, plan: GemmPlan, main: Kernel | None = None) -> ConvPlan:
    first = main or plan.kernels[0]
    return ConvPlan(family=family, path=plan.path, tile=plan.tile, split_k=plan.split_k,
                    kernels=(first, *plan.kernels[1:]), waves=plan.waves, ctas=plan.ctas,
                    aligned=plan.aligned, l2_hit=plan.l2_hit)


def _single(m: GpuMachine, family: str, k: Kernel, op: Conv2d, precision: str) -> ConvPlan:
    x, w, y = io_bytes(op, precision)
    tile = k.meta.get("tile")
    return ConvPlan(family=family, path=k.meta.get("path", "simt"), tile=tile, split_k=1,
                    kernels=(k,), waves=k.ctas / m.sm_count, ctas=k.ctas, aligned=True,
                    l2_hit=k.meta.get("l2_hit", l2_hit_fraction(m, x + w, y)))


def _fields(p: ConvPlan) -> dict:
    return {f: getattr(p, f) for f in ConvPlan.__slots__}
