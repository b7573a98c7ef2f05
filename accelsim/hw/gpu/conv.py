"""Convolution (NHWC) as an implicit GEMM on tensor cores.

``M = N*Ho*Wo``, ``N = K`` (filters), ``K = C*R*S``; the CTAs gather their im2col tiles from
L2 (neighbouring output pixels share input rows there), HBM sees the input, the filters and
the output once. The 16-byte alignment contract applies to the channel count C (the
contiguous dimension of an NHWC input) and to K. Grouped convolutions are ``groups``
independent GEMMs.

Units: seconds, bytes. Imports: config, workload, hw.gpu.
"""

from __future__ import annotations

from accelsim.config.gpu import OPERAND_BYTES, GpuMachine
from accelsim.hw.gpu.gemm import GemmPlan, plan_gemm
from accelsim.workload.ops import Conv2d


def plan_conv2d(m: GpuMachine, op: Conv2d, precision: str) -> GemmPlan:
    """Implicit-GEMM plan of an NHWC convolution (grouped: ``groups`` GEMMs batched)."""
    g = op.lower()
    e = OPERAND_BYTES[precision]
    stored = (op.n * op.h * op.w * op.c + op.k * (op.c // op.groups) * op.r * op.s) * e
    return plan_gemm(m, g.m, g.n, g.k, precision, batch=g.repeat, shared_weights=False,
                     hbm_unique_bytes=stored, leading_dims=(op.c // op.groups, g.n),
                     name="conv2d")
