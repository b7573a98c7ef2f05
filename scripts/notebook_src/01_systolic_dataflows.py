# %% [markdown]
# # Lab 1 — Systolic arrays and their dataflows
#
# A systolic array is a grid of `R x C` multiply-accumulate PEs. A layer becomes a GEMM
# `out[M x N] = in[M x K] @ w[K x N]` (a convolution through im2col: `M = N·Ho·Wo`,
# `N = Cout`, `K = Cin·R·S`). A **dataflow** decides which operand stays in the PEs:
#
# | dataflow | stays in the PEs | spatial rows x cols | streamed in time |
# |---|---|---|---|
# | OS — output stationary | partial sums | M x N | K |
# | WS — weight stationary | weights | K x N | M |
# | IS — input stationary | inputs | K x M | N |
#
# When the spatial dimensions exceed the array, the work is cut into **folds** that run one
# after another, each paying pipeline fill and drain. This lab measures what that costs.

# %%
import matplotlib.pyplot as plt
import pandas as pd

from accelsim.api import simulate
from accelsim.hw.systolic import compute_cycles, geometry, mapping_efficiency
from accelsim.workload.ops import Workload
from accelsim.workload.readers import load_workload

# %% [markdown]
# ## 1. OS vs WS vs IS on real layers
# ResNet-18 on SCALE-Sim's default 32x32 array. Which dataflow wins depends on the layer's
# shape: early layers have a huge `M` (many output pixels), late layers a huge `K`.

# %%
resnet18 = load_workload("resnet18")
rows = []
for df in ("os", "ws", "is"):
    r = simulate("scalesim_default", resnet18, dataflow=df, mode="analytic", energy=False)
    t = r.layers[["layer", "total_cycles", "compute_cycles", "mapping_efficiency"]].copy()
    t["dataflow"] = df
    rows.append(t)
by_df = pd.concat(rows)
pivot = by_df.pivot(index="layer", columns="dataflow", values="compute_cycles")
pivot = pivot.loc[[op.name for op in resnet18.ops]]
pivot["best"] = pivot.idxmin(axis=1)
pivot.head(12)

# %%
ax = pivot[["os", "ws", "is"]].plot.bar(figsize=(11, 4.5), logy=True)
ax.set_xlabel("layer")
ax.set_ylabel("compute cycles (log scale)")
ax.set_title("ResNet-18 on 32x32: compute cycles per layer and dataflow")
ax.legend(title="dataflow", loc="upper left", bbox_to_anchor=(1.0, 1.0))
plt.tight_layout()

# %% [markdown]
# **Exercise 1.** Which dataflow wins for the first convolution, and which for the fully
# connected layer? Explain it with the table above: what is `T` (the streamed dimension)
# for each, and how many folds does each need?

# %% [markdown]
# ## 2. Utilization vs array size
# Bigger arrays have more PEs to fill. For a fixed layer, mapping efficiency falls when a
# dimension is not a multiple of the array, and compute utilization falls because fill and
# drain (`R + C` cycles per fold) grow while the streamed work `T` does not.

# %%
layers = {op.name: op for op in resnet18.ops}
picked = ["conv1", "layer2.0.conv2", "layer4.1.conv2", "fc"]
sizes = [8, 16, 32, 64, 128, 256]
util = []
for size in sizes:
    r = simulate("scalesim_default", Workload("pick", tuple(layers[n] for n in picked)),
                 dataflow="ws", mode="analytic", energy=False,
                 overrides={"compute.array.rows": size, "compute.array.cols": size,
                            "memory.dram.bandwidth_bytes_per_s": "100 TB/s"})
    for _, row in r.layers.iterrows():
        util.append({"array": size, "layer": row.layer, "compute_util": row.compute_util,
                     "mapping_efficiency": row.mapping_efficiency})
util = pd.DataFrame(util)
ax = util.pivot(index="array", columns="layer", values="compute_util").mul(100).plot(
    marker="o", logx=True, figsize=(8, 4.5))
ax.set_xticks(sizes, [f"{s}x{s}" for s in sizes])
ax.minorticks_off()
ax.set_xlabel("array size (PEs)")
ax.set_ylabel("compute utilization, WS (%)")
ax.set_ylim(0, 105)
ax.set_title("Utilization vs array size")
ax.legend(title="layer", loc="upper left", bbox_to_anchor=(1.0, 1.0))
plt.tight_layout()

# %% [markdown]
# ## 3. The edge-fold cliff: 129 on 128
# One extra column of work costs a whole extra fold. A GEMM with `N = 128` fits a 128-wide
# array in one column fold; `N = 129` needs two, and the second fold maps a single column.

# %%
cliff = []
for n in range(120, 140):
    g = geometry(4096, n, 4096, 128, 128, "os")
    cliff.append({"N": n, "folds": g.folds, "compute_cycles": compute_cycles(g),
                  "mapping_efficiency": mapping_efficiency(g)})
cliff = pd.DataFrame(cliff)
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.step(cliff.N, cliff.compute_cycles / 1e3, where="mid")
ax.axvline(128.5, color="grey", ls=":")
ax.annotate("N = 129: a second column fold,\nwhich maps one column",
            (129, cliff.compute_cycles.max() / 1e3),
            xytext=(121, cliff.compute_cycles.max() / 1e3 * 0.8), arrowprops={"arrowstyle": "->"})
ax.set_xticks(range(120, 140, 2))
ax.set_xlabel("N (columns of work)")
ax.set_ylabel("compute cycles (thousands)")
ax.set_title("4096 x N x 4096 GEMM on 128x128 (OS): the 129-on-128 cliff")
plt.tight_layout()
cliff[cliff.N.isin([127, 128, 129, 130])]

# %%
jump = cliff.set_index("N").compute_cycles
print(f"N=128 -> N=129: {jump[129] / jump[128]:.2f}x the cycles for {129 / 128 - 1:.1%} more work")
assert jump[129] > 1.9 * jump[128]

# %% [markdown]
# **Exercise 2.** Re-run the cliff for WS. Which GEMM dimension causes the cliff now, and
# why? (Hint: the table at the top.)
#
# **Exercise 3.** With `simulate(..., overrides={"memory.dram.bandwidth_bytes_per_s": ...})`,
# find the DRAM bandwidth below which ResNet-18's `layer1.0.conv1` starts to stall on a
# 32x32 array.
