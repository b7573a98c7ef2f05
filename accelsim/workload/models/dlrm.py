"""A DLRM-style recommender (Naumov et al. 2019; MLPerf DLRM layer sizes).

Dense features go through a bottom MLP; each sparse feature looks ``lookups`` rows up in its
own embedding table (sum-pooled, counted as the gather only); the pairwise dot products of
the ``tables + 1`` vectors (one batched GEMM per sample) feed a top MLP that ends in one
logit. Embedding lookups are tagged ``embedding``, MLPs ``ffn``, the interaction ``other``.

Imports: workload.ops, workload.nn_ops, workload.graph.
"""

from __future__ import annotations

from accelsim.workload.graph import GraphBuilder, ModelGraph
from accelsim.workload.nn_ops import Elementwise, Embedding
from accelsim.workload.ops import Gemm

BOTTOM_MLP = (13, 512, 256, 128)
TOP_MLP = (1024, 1024, 512, 256, 1)


def dlrm(*, batch: int = 2048, tables: int = 26, rows: int = 1_000_000, dim: int = 128,
         lookups: int = 1, dtype: str = "fp32") -> ModelGraph:
    """``tables`` embedding tables of ``rows x dim``; ``lookups`` rows per table per sample."""
    for label, v in (("batch", batch), ("tables", tables), ("rows", rows), ("dim", dim),
                     ("lookups", lookups)):
        if not isinstance(v, int) or v <= 0:
            raise ValueError(f"{label} must be a positive integer")
    b = GraphBuilder("dlrm", dtype, batch=batch, tables=tables, rows=rows, dim=dim,
                     lookups=lookups)
    x = b.tensor("dense_features", batch * BOTTOM_MLP[0], "input")
    bottom = (*BOTTOM_MLP[:-1], dim)

    def mlp(prefix: str, x: str, sizes: tuple[int, ...], last_relu: bool) -> str:
        for i, (k, n) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            x = b.add(Gemm(name=f"{prefix}.{i}", m=batch, n=n, k=k, dtype=dtype), [x],
                      component="ffn")
            if i < len(sizes) - 2 or last_relu:
                x = b.add(Elementwise(name=f"{prefix}.{i}.relu", rows=batch, cols=n, fn="relu",
                                      dtype=dtype), [x], component="ffn")
        return x

    dense = mlp("bottom_mlp", x, bottom, last_relu=True)
    pooled = [dense]
    for t in range(tables):
        ids = b.tensor(f"sparse_ids.{t}", batch * lookups, "input")
        pooled.append(b.add(Embedding(name=f"embed.{t}", tokens=batch * lookups, dim=dim,
                                      table_rows=rows, dtype=dtype), [ids],
                            component="embedding"))
    f = tables + 1
    stacked = b.add(Elementwise(name="concat", rows=batch, cols=f * dim, fn="copy",
                                dtype=dtype), pooled, component="other")
    inter = b.add(Gemm(name="interaction", batch=batch, m=f, n=f, k=dim, shared_weights=False,
                       dtype=dtype), [stacked, stacked], component="other")
    top_in = dim + f * (f - 1) // 2
    x = mlp("top_mlp", inter, (top_in, *TOP_MLP), last_relu=False)
    return b.build([x])
