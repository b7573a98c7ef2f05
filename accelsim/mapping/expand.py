"""Expand operators into what a systolic machine runs: GEMMs on the array, the rest on the
vector unit. Attention becomes QK^T (batched GEMM), softmax and AV (batched GEMM).

Imports: workload.nn_ops, workload.ops.
"""

from __future__ import annotations

from accelsim.workload.nn_ops import Attention, Softmax
from accelsim.workload.ops import Gemm


def expand_op(op: object) -> list[object]:
    """The ops that ``op`` runs as on an array + vector machine (itself if it is primitive)."""
    if isinstance(op, Attention):
        q, kv, d = op.seq_q, op.seq_kv, op.head_dim
        bh = op.batch * op.heads
        frac = op.score_fraction
        # causal masking skips whole score tiles; count the visible share of the key length
        kv_eff = max(1, round(kv * frac))
        return [
            Gemm(name=f"{op.name}.qk", m=q, n=kv_eff, k=d, batch=bh, shared_weights=False,
                 dtype=op.dtype),
            Softmax(name=f"{op.name}.softmax", rows=bh * q, cols=kv_eff, dtype=op.dtype),
            Gemm(name=f"{op.name}.av", m=q, n=d, k=kv_eff, batch=bh, shared_weights=False,
                 dtype=op.dtype),
        ]
    return [op]
