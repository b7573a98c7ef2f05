# %% [markdown]
# # Lab 7 — Transformers on accelerators: prefill vs decode, the KV cache, fusion and memory
#
# A Transformer does the same arithmetic per token whether it is reading a prompt (**prefill**)
# or generating (**decode**), yet the two phases behave like different workloads. In this lab
# you will
#
# 1. build Llama 3 8B from the model zoo and split its FLOPs, bytes and (simulated H200) time by
#    component — attention, FFN, norms, embeddings;
# 2. watch the **KV cache** grow with context and batch, and what it does to decode time;
# 3. apply **operator fusion** (epilogues, Linear+SiLU+Mul, FlashAttention-style attention) and
#    count the DRAM traffic it removes;
# 4. plan **memory**: buffer reuse for inference, and the training footprint with and without
#    gradient checkpointing.
#
# Counting conventions: 1 MAC = 2 FLOP; bytes are decimal (1 GB = 1e9 B); every unfused op reads
# its inputs and writes its output once.

# %%
import dataclasses
import functools

import matplotlib.pyplot as plt
import pandas as pd

from accelsim.api.gpu import load_gpu, simulate_op
from accelsim.workload.graph import GraphBuilder, breakdown
from accelsim.workload.models import zoo
from accelsim.workload.nn_ops import Elementwise, Embedding
from accelsim.workload.ops import Conv2d, Gemm
from accelsim.workload.passes import FusedGemm, FusedOp, fuse
from accelsim.workload.passes.memory import kv_cache_bytes, plan_memory
from accelsim.workload.passes.training import training_memory

H200 = load_gpu("h200")
pd.set_option("display.float_format", "{:.4g}".format)

# %% [markdown]
# ## A helper: the time of one op on the GPU
#
# `accelsim.api.gpu.simulate_op(hw, op)` times one operator on a GPU model (tensor-core tiles,
# waves, L2 and HBM traffic). The zoo also produces two kinds of op the GPU model does not take
# directly, so we translate them:
#
# * an **embedding lookup** moves the gathered rows in and out, like a copy of that size;
# * a **fused kernel** runs as its main op — the (horizontally fused) GEMM, the attention, or
#   the first norm — with its pointwise epilogue done on chip while the tile is in registers
#   (we ignore the epilogue's extra reads, e.g. the residual, which are one activation each).
#
# Identical layers repeat, so the helper caches by shape.

# %%
def as_gpu_op(op):
    if isinstance(op, Embedding):
        return Elementwise(name=op.name, rows=op.tokens, cols=op.dim, fn="copy", dtype=op.dtype)
    if isinstance(op, FusedGemm):
        main = op.main
        if isinstance(main, Conv2d):
            return main
        s = op.lower()
        return Gemm(name=op.name, m=s.m, n=s.n, k=s.k, batch=s.repeat, dtype=op.dtype)
    if isinstance(op, FusedOp):
        main = op.main
        if not isinstance(main, Elementwise):
            return as_gpu_op(main)
        te = op.tensor_elements()
        return Elementwise(name=op.name, rows=1, cols=max(te.values()), fn="copy", dtype=op.dtype)
    return op


@functools.cache
def _time(op):
    return simulate_op(H200, op, mode="analytic")["time_s"]


def gpu_time(op):
    """Seconds for one op on the H200 model."""
    return _time(dataclasses.replace(as_gpu_op(op), name="op"))


def graph_time(graph):
    return sum(gpu_time(n.op) for n in graph.nodes)

# %% [markdown]
# ## 1. Where the time goes: prefill vs decode
#
# Prefill pushes a 2048-token prompt through the model at once: every weight matrix meets 2048
# rows, so the GEMMs are large and compute-bound. Decode produces one token per sequence: every
# weight is read from HBM to be used for a single row.

# %%
prefill = zoo.get("llama3_8b_prefill", batch=1, seq=2048)
decode = zoo.get("llama3_8b_decode", batch=1, context=2048)
print(f"parameters: {prefill.parameter_count() / 1e9:.2f} B")
rows = []
for label, g in (("prefill", prefill), ("decode", decode)):
    rows.append({"phase": label, "ops": len(g), "GFLOP": g.flops / 1e9, "GB": g.bytes() / 1e9,
                 "FLOP/byte": g.flops / g.bytes(), "H200 ms": graph_time(g) * 1e3})
pd.DataFrame(rows).set_index("phase")

# %%
bd = {label: breakdown(g, time_fn=gpu_time)
      for label, g in (("prefill", prefill), ("decode", decode))}
bd["prefill"][["flops", "bytes", "time_s", "flop_share", "byte_share", "time_share"]]

# %%
bd["decode"][["flops", "bytes", "time_s", "flop_share", "byte_share", "time_share"]]

# %%
shares = pd.DataFrame({k: v["time_share"] for k, v in bd.items()}).fillna(0.0)
ax = shares.T.mul(100).plot.barh(stacked=True, figsize=(8, 2.8))
ax.set_xlabel("share of simulated H200 time (%)")
ax.set_xlim(0, 100)
ax.legend(title="component", loc="upper left", bbox_to_anchor=(1.0, 1.0))
ax.set_title("Llama 3 8B, context 2048, batch 1")
plt.tight_layout()

# %% [markdown]
# **What to notice.** In prefill the FFN dominates (it holds ~80 % of each layer's weights) and
# attention is a large minority that grows with the square of the sequence. In decode the time
# follows the *bytes*: weights for the projections and the FFN, plus the KV cache for attention.
# A batch-1 decode step does 2 FLOP per 2-byte weight, about 1 FLOP per byte — two hundred
# times below the H200's ridge point (~200 FLOP/B for bf16) — so the tensor cores mostly wait
# for HBM.

# %% [markdown]
# ## 2. The KV cache
#
# Each decoded token attends to every cached key and value. The cache holds, per layer,
# `2 x kv_heads x head_dim` numbers per token: Llama 3 8B's grouped-query attention (8 KV heads
# for 32 query heads) makes it 4x smaller than full multi-head attention would.

# %%
contexts = [512, 1024, 2048, 4096, 8192]
rows = []
for name in ("llama3_8b_decode", "llama3_70b_decode"):
    for c in contexts:
        g = zoo.get(name, context=c)
        rows.append({"model": name.split("_decode")[0], "context": c,
                     "KV cache GB": kv_cache_bytes(g) / 1e9,
                     "weights GB": g.parameter_count() * 2 / 1e9})
kv = pd.DataFrame(rows)
kv.pivot(index="context", columns="model", values="KV cache GB")

# %%
rows = []
for batch in (1, 8, 32):
    for c in (1024, 4096, 8192):
        g = zoo.get("llama3_8b_decode", batch=batch, context=c)
        t = graph_time(g)
        rows.append({"batch": batch, "context": c, "KV GB": kv_cache_bytes(g) / 1e9,
                     "ms per step": t * 1e3, "tokens/s": batch / t})
dec = pd.DataFrame(rows)
fig, ax = plt.subplots(figsize=(6, 3.5))
for batch, part in dec.groupby("batch"):
    ax.plot(part["context"], part["ms per step"], marker="o", label=f"batch {batch}")
ax.set_xlabel("context (tokens)")
ax.set_ylabel("time per decode step on H200 (ms)")
ax.set_xscale("log", base=2)
ticks = sorted(part["context"].unique())
ax.set_xticks(ticks, [f"{c:,}" for c in ticks])
ax.minorticks_off()
ax.set_title("Llama 3 8B decode: the KV cache grows with context and batch")
ax.legend(loc="upper left")
plt.tight_layout()
plt.tight_layout()
dec.round(3)

# %% [markdown]
# **What to notice.** At batch 1 the 16 GB of weights dominate and the step time barely moves
# with context. Batching amortises the weights across sequences — tokens/s rises almost
# linearly — until the KV cache, which grows with *batch x context*, becomes the traffic that
# matters. That is why serving systems care so much about the cache (paging, quantising it,
# grouped-query attention).

# %% [markdown]
# ## 3. Operator fusion
#
# `fuse(graph)` applies three rules: attention (QK^T → softmax → AV) becomes one kernel that
# keeps the score matrix on chip; GEMMs that read the same input (Q/K/V, gate/up) become one
# kernel; pointwise ops join the kernel that produced their input (bias/GELU/residual epilogues,
# SiLU·Mul). Start with the textbook case: ReLU → BatchNorm → affine on a 1024² fp32 tensor.

# %%
b = GraphBuilder("relu_bn_affine", "fp32")
x = b.tensor("x", 1024 * 1024)
for name, fn in (("relu", "relu"), ("bn", "scale"), ("affine", "scale")):
    x = b.add(Elementwise(name=name, rows=1024, cols=1024, fn=fn, dtype="fp32"), [x],
              component="other")
chain = b.build()
r = fuse(chain)
print(f"unfused: {r.kernels_before} kernels, {r.bytes_before / 1e6:.1f} MB")
print(f"fused:   {r.kernels_after} kernel,  {r.bytes_after / 1e6:.1f} MB  "
      f"({r.bytes_before / r.bytes_after:.0f}x less traffic)")

# %%
rows = []
for label, g in (("BERT-base, seq 512, batch 8", zoo.get("bert_base", batch=8, seq=512)),
                 ("Llama 3 8B prefill 2048", prefill), ("Llama 3 8B decode", decode)):
    r = fuse(g)
    rows.append({"model": label, "kernels": f"{r.kernels_before} -> {r.kernels_after}",
                 "GB before": r.bytes_before / 1e9, "GB after": r.bytes_after / 1e9,
                 "ms before": graph_time(g) * 1e3, "ms after": graph_time(r.graph) * 1e3})
pd.DataFrame(rows).set_index("model")

# %%
r = fuse(zoo.get("bert_base", batch=8, seq=512))
r.saved.groupby("why")["bytes_saved"].sum().sort_values(ascending=False) / 1e9

# %% [markdown]
# **What to notice.** Fusion removes the most traffic where intermediates are big: the
# `seq x seq` score matrix of attention in prefill and encoders, and the `tokens x ffn` FFN
# activations. In decode the intermediates are one row per sequence, so fusion saves launches
# but little traffic: the weights still have to be read.

# %% [markdown]
# ## 4. Memory planning
#
# For inference, activations can share buffers: a tensor's buffer is free once its last reader
# has run. `plan_memory` computes each tensor's lifetime, the peak of live bytes and a best-fit
# pool of reusable buffers. For training, weights, gradients, optimizer state and every saved
# activation must coexist; gradient checkpointing keeps only √n layer boundaries and recomputes
# the rest.

# %%
rows = []
for name, params in (("resnet50", {"batch": 32}), ("bert_base", {"batch": 8}),
                     ("llama3_8b_prefill", {"seq": 2048})):
    plan = plan_memory(zoo.get(name, **params))
    rows.append({"model": name, "activations, no reuse GB": plan.naive_bytes / 1e9,
                 "peak live GB": plan.peak_bytes / 1e9, "best-fit pool GB": plan.pool_bytes / 1e9,
                 "weights + KV GB": plan.persistent_bytes / 1e9})
pd.DataFrame(rows).set_index("model")

# %%
g = zoo.get("gpt2_xl", batch=8, seq=1024)
table = pd.DataFrame({"none": training_memory(g).as_dict(),
                      "sqrt(n) checkpoints": training_memory(g, checkpoint="sqrt").as_dict()}).T
(table[["weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "total_bytes"]]
 / 1e9).round(2)

# %% [markdown]
# ## Exercises
#
# 1. Repeat section 1 for `gpt2_small` and `llama3_70b`. Does the FFN's share of prefill time
#    change with model size? Why?
# 2. At what batch does Llama 3 8B decode (context 4096) spend more bytes on the KV cache than
#    on weights? Check your napkin math (`2 x layers x kv_heads x head_dim x context x batch x 2 B`
#    vs `2 B x parameters`) against `kv_cache_bytes`.
# 3. Run `fuse(g, attention=False)` on BERT-base at seq 128 and 2048. How does the traffic saved
#    by the attention rule alone scale with the sequence length?
# 4. With `training_memory`, find the largest GPT-2 XL batch at seq 1024 that fits in 141 GB with
#    and without checkpointing.
