# %% [markdown]
# # Lab 2 — The roofline: where a layer's performance comes from
#
# A kernel that does `O` FLOPs while moving `D` bytes across a memory interface has an
# **arithmetic intensity** `I = O / D` (FLOP/byte). On a machine with compute peak `R_peak`
# (FLOP/s) and bandwidth `BW` (bytes/s) at that interface, it can run at most
#
# `R_attain = min(R_peak, BW x I)`
#
# The **ridge point** `I_ridge = R_peak / BW` separates memory-bound kernels (`I < I_ridge`)
# from compute-bound ones. Every memory level (registers/SRAM, L2, HBM, the host link) has its
# own roof; the lowest one at the kernel's intensity is the bound that holds (a
# *hierarchical* roofline).
#
# Conventions in accelsim (`accelsim/analysis/README.md`): 1 MAC = 2 FLOP; decimal bytes;
# the *compulsory* (analytical) traffic of an operator moves every tensor once; simulated
# traffic comes from the simulator's per-level byte counts.
#
# In this lab you will
# 1. compute the ridge points of V100, A100, H100, H200 and TPU v4 from their configs;
# 2. place convolution, dense, LayerNorm and attention layers against them;
# 3. watch batch size move a dense layer across the ridge;
# 4. compare simulated performance with the analytical bound.

# %%
import math

import matplotlib.pyplot as plt
import pandas as pd

from accelsim.analysis import roofline as rl
from accelsim.analysis.amdahl import amdahl_table
from accelsim.api import simulate
from accelsim.api.gpu import simulate_op
from accelsim.config.registry import load_machine
from accelsim.devices import machine_roofs, result_roofline
from accelsim.report.plots_roofline import plot_roofline
from accelsim.workload.nn_ops import Attention, LayerNorm, Softmax
from accelsim.workload.ops import Conv2d, Gemm

# %% [markdown]
# ## 1. Ridge points from the machine configs
#
# The peaks and bandwidths come from `configs/hardware/*.yaml` (GPUs at fp16 tensor-core rate,
# TPU v4 at bf16 for one TensorCore). Compare with the seed's Table 12: V100 138.9, A100 153,
# H100 295.2 FLOP/B.

# %%
machines = {"v100": "fp16", "a100": "fp16", "h100": "fp16", "h200": "fp16", "tpu_v4": None}
roofs = {name: machine_roofs(load_machine(name), prec) for name, prec in machines.items()}
ridges = pd.DataFrame([{"machine": name, "precision": r.precision,
                        "peak TFLOP/s": r.peak_flops_per_s / 1e12,
                        "device memory": r.offchip_level,
                        "BW TB/s": r.roof(r.offchip_level).bandwidth_bytes_per_s / 1e12,
                        "ridge FLOP/B": r.ridge()} for name, r in roofs.items()])
ridges.round(2)

# %% [markdown]
# H200 has the same compute as H100 but 43 % more HBM bandwidth, so its ridge drops from
# ~295 to ~206 FLOP/B: kernels between the two become compute-bound. The inner levels have
# their own, lower ridges:

# %%
pd.concat([r.ridge_table() for r in roofs.values()])[
    ["machine", "level", "bandwidth_bytes_per_s", "ridge_flop_per_byte"]].round(1)

# %% [markdown]
# ## 2. Where convolution, dense, LayerNorm and attention fall
#
# Analytical (compulsory) traffic at fp16. The attention kernel is fused (FlashAttention-style:
# the score matrix never reaches HBM); the unfused softmax over the same scores is listed to
# show what fusion buys.

# %%
ops = [
    Conv2d(name="conv 3x3 (ResNet-50 layer1)", n=32, c=64, h=56, w=56, k=64, r=3, s=3, pad=1),
    Conv2d(name="conv 3x3 (seed NM1.5)", n=32, c=128, h=56, w=56, k=256, r=3, s=3, pad=1),
    Gemm(name="dense 2048x2048, batch 32", m=32, k=2048, n=2048),
    Gemm(name="BERT FFN, 16k tokens", m=16384, k=768, n=3072),
    LayerNorm(name="LayerNorm 32x512x768", rows=32 * 512, cols=768),
    Attention(name="attention (fused) B32 S512", batch=32, heads=12, seq_q=512, seq_kv=512,
              head_dim=64),
    Softmax(name="softmax (unfused scores)", rows=32 * 12 * 512, cols=512),
]
a100 = roofs["a100"]
table = rl.workload_table(ops, a100, "fp16")
table["bound on H100"] = rl.workload_table(ops, roofs["h100"], "fp16")["bound"]
table[["layer", "flops", "bytes_hbm", "intensity_hbm", "bound", "bound on H100", "advice"]]

# %%
ax = plot_roofline(a100.ridge_table(), table, title="A100 fp16: analytical bounds of common layers",
                   label_points=10)
ax.figure.set_size_inches(9, 5.5)

# %% [markdown]
# The dense convolution and the large-batch FFN sit right of the ridge (compute-bound);
# LayerNorm (~2 FLOP/B) and the unfused softmax (~1.25 FLOP/B with accelsim's 5-FLOP softmax)
# sit far left. The fused attention kernel has high intensity because its S x S scores stay
# on chip.
#
# ## 3. Batch size moves a layer across the ridge
#
# A 2048 x 2048 dense layer at batch `B` has `I = 2BMN / (2BM + 2MN + 2BN) ~= B` FLOP/B for
# `B << 2048` (fp16), so the batch at which it crosses a machine's ridge is about the ridge
# itself.

# %%
batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
rows = []
for b in batches:
    op = Gemm(name=f"B={b}", m=b, k=2048, n=2048)
    for name in ("a100", "h100", "h200"):
        row = rl.op_row(op, roofs[name], "fp16")
        rows.append({"batch": b, "machine": name, "I": row["intensity_hbm"],
                     "bound": row["bound"], "TFLOP/s bound": row["attainable_flops_per_s"] / 1e12})
sweep = pd.DataFrame(rows)
crossing = sweep[sweep["bound"] == "compute"].groupby("machine")["batch"].min()
print("smallest compute-bound batch:", crossing.to_dict())
sweep.pivot(index="batch", columns="machine", values="bound")

# %%
fig, ax = plt.subplots(figsize=(7, 4))
for name, g in sweep.groupby("machine"):
    ax.plot(g["batch"], g["TFLOP/s bound"], marker="o", label=f"{name} bound")
    ax.axvline(roofs[name].ridge(), ls=":", color=ax.lines[-1].get_color())
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("batch (rows of the activation matrix)")
ax.set_ylabel("attainable throughput (TFLOP/s)")
ax.set_title("2048x2048 fp16 dense layer: batch vs the roofline (dotted: ridge)")
ax.legend()

# %% [markdown]
# ## 4. Simulated vs analytical
#
# The roofline is an upper bound. The simulators add what it leaves out: tiling traffic,
# fill/drain of the array, wave quantisation on SMs, launch gaps. First the GPU model on the
# batch sweep (A100):

# %%
gpu_rows = []
for b in batches:
    op = Gemm(name=f"B={b}", m=b, k=2048, n=2048, dtype="fp16")
    doc = simulate_op("a100", op, mode="analytic", precision="fp16")
    bound = rl.op_row(op, a100, "fp16")["attainable_flops_per_s"]
    gpu_rows.append({"batch": b, "simulated TFLOP/s": doc["flops"] / doc["time_s"] / 1e12,
                     "bound TFLOP/s": bound / 1e12, "simulator's limiter": doc["bound"]})
gpu = pd.DataFrame(gpu_rows)
gpu["% of bound"] = 100 * gpu["simulated TFLOP/s"] / gpu["bound TFLOP/s"]
gpu.round(2)

# %% [markdown]
# Then the systolic simulator: ResNet-18 on one TPU v4 TensorCore. Each layer is placed at its
# *simulated* DRAM intensity (filled) and at its SRAM intensity (hollow; the SRAM roof is the
# bandwidth at which the scratchpads feed the array edges). `I min` is the compulsory
# intensity (every tensor moved once): tiling usually moves more than that, so the simulated
# intensity is usually lower.

# %%
res = simulate("tpu_v4", "resnet18", mode="analytic", energy=False)
roofs_df, points = result_roofline(res)
analytic = rl.workload_table(res.workload.ops, roofs["tpu_v4"])
points["I min"] = analytic["intensity_dram"].values
ax = plot_roofline(roofs_df, points, title="ResNet-18 on TPU v4 (simulated)")
points[["layer", "intensity_dram", "I min", "intensity_sram", "bound",
        "attainable_flops_per_s", "achieved_flops_per_s",
        "fraction_of_attainable"]].round(3).head(10)

# %%
assert (points["achieved_flops_per_s"]
        <= points["attainable_flops_per_s"] * (1 + 1e-9)).all()
print(f"mean fraction of the bound: {points['fraction_of_attainable'].mean():.2f}")
above = points[points["intensity_dram"] > points["I min"] * (1 + 1e-9)]
above[["layer", "intensity_dram", "I min"]]

# %% [markdown]
# The layers above their "compulsory" intensity are the stride-2 1x1 downsampling convolutions:
# they never read three quarters of their input pixels, so "every tensor moved once"
# over-counts their traffic. Compulsory traffic is a convention, not a law.
#
# ## 5. Amdahl: the end-to-end ceiling
#
# A 247x faster matrix path helps only the fraction `p` of the time it touches (seed
# Lighthouse 1.1: ResNet-50 p = 0.95 -> 18.6x; GPT-2 decode p = 0.8 -> 4.9x).

# %%
pd.concat([amdahl_table(0.95, [10, 247, math.inf]),
           amdahl_table(0.8, [10, 247, math.inf])]).round(2)

# %% [markdown]
# ## Exercises
#
# 1. At which batch does the 2048x2048 layer become compute-bound on TPU v4 (bf16)? Why is it
#    higher than on H200?
# 2. Switch the dense layer to int8 (`dtype="int8"`): how do the intensity and the crossing
#    batch change on A100 (use the `int8` peak: `machine_roofs(load_machine("a100"), "int8")`)?
# 3. Run `accelsim roofline tpu_v4 resnet50 --plot r.png` and find the layers whose binding
#    roof is SRAM rather than DRAM. What would you change in the array to move them?
# 4. `accelsim validate` recomputes the seed chapter's worked cases. Pick a case marked as an
#    error in the text (e.g. FAL-T4) and explain the correction.
