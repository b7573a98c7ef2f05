"""What a GPU or CPU library runs for a workload's op: :func:`device_op` (a fused op as its
main GEMM or convolution, or as one stream over its tensors; an embedding lookup as a row
gather, a copy).

Imports: workload.nn_ops, workload.ops, workload.passes.fusion.
"""

from __future__ import annotations

import dataclasses

from accelsim.workload.nn_ops import Elementwise, Embedding
from accelsim.workload.ops import Conv2d, Gemm
from accelsim.workload.passes.fusion import FusedGemm, FusedOp

__all__ = ["device_op"]


def device_op(op: object) -> object:
    """The op a GPU/CPU library runs for ``op`` (fused ops and gathers translated)."""
    if isinstance(op, Embedding):
        return Elementwise(name=op.name, rows=op.tokens, cols=op.dim, fn="copy", dtype=op.dtype)
    if isinstance(op, FusedGemm):
        if isinstance(op.main, Conv2d):
            return op.main
        s = op.lower()
        return Gemm(name=op.name, m=s.m, n=s.n, k=s.k, batch=s.repeat, shared_weights=False,
                    dtype=op.dtype)
    if isinstance(op, FusedOp):
        if not isinstance(op.main, Elementwise):
            return dataclasses.replace(device_op(op.main), name=op.name)
        te = op.tensor_elements()
        return Elementwise(name=op.name, rows=1, cols=max(te.values()), fn="copy", dtype=op.dtype)
    return op
