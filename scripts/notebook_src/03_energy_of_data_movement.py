# %% [markdown]
# # Lab 3 — The energy of data movement
#
# An accelerator's energy is a sum over **actions**: every MAC, every register, SRAM and DRAM
# access the engine performed, each multiplied by its cost in picojoules from a documented
# table (`configs/energy/*.yaml`). This lab shows three things:
#
# 1. the *memory wall* in energy: fetching an operand from DRAM costs two to four orders of
#    magnitude more than computing with it;
# 2. dataflows (OS / WS / IS) differ in energy because they move different operands;
# 3. what a bigger on-chip SRAM buys: fewer DRAM trips, at a higher cost per SRAM access.
#
# Units: pJ per action; `TOPS/W = 2 x MACs / pJ`; 1 MAC = 2 operations.

# %%
import matplotlib.pyplot as plt
import pandas as pd

from accelsim.api import simulate
from accelsim.config.energy import load_energy_table
from accelsim.report import energy_cases
from accelsim.report.plots_energy import plot_energy_by_dataflow, plot_energy_by_layer
from accelsim.workload.readers import load_workload

# %% [markdown]
# ## 1. The memory wall, in picojoules
# Horowitz's 45 nm figures (ISSCC 2014). Every access below moves one 32-bit word.

# %%
t45 = load_energy_table("horowitz_45nm")
word = 32
costs = pd.Series({
    "int8 add": t45.require("add.int8"),
    "int8 MAC": t45.require("mac.int8"),
    "fp32 MAC": t45.require("mac.fp32"),
    "register (32 b)": word * t45.require("rf.read"),
    "SRAM 8 KiB (32 b)": t45.sram_access_pj(8 * 1024, word, "read"),
    "SRAM 1 MiB (32 b)": t45.sram_access_pj(2**20, word, "read"),
    "HBM2 (32 b)": word * t45.require("dram.HBM2"),
    "DDR3 (32 b)": word * t45.require("dram.DDR3"),
}, name="pJ")
ax = costs.plot.barh(logx=True, figsize=(7, 3.2))
ax.set_xlabel("energy per action (pJ, log scale)")
ax.set_title("45 nm: cost of one action")
plt.tight_layout()
costs.to_frame()

# %% [markdown]
# The seed chapter's Napkin Math 1.1 runs this argument end to end: an output-stationary
# 128x128 array (TPU v4's MXU) loads each operand once at its edge, 2 DRAM words per 128
# MACs, while a naive design streams A, B and C from DRAM and writes C back for every op.
# `energy_cases.nm1_1()` maps and replays the GEMM in the engine, then prices the engine's
# action records with the chapter's own figures (640 pJ per DRAM word, 1 pJ per op).

# %%
nm = energy_cases.nm1_1()
pd.Series(nm).to_frame("value")

# %% [markdown]
# **Exercise 1.** The chapter prints 0.016 DRAM accesses per op and 11 pJ/op; the engine moves
# exactly 2/128. Recompute the ratio with 0.016 and explain why the text's 232.8x needs the
# exact fraction. Then call `energy_cases.nm1_1(k=512)`: where does the extra energy go?

# %% [markdown]
# ## 2. Dataflows on a real layer
# ResNet-50 on one TPU v4 TensorCore (4x 128x128 bf16 MXUs, 32 MiB VMEM, HBM2), 45 nm table.
# Same MACs in every dataflow, so the MAC energy is the same; what changes is which operand
# travels through the PE registers and how often the SRAM is read.

# %%
resnet50 = load_workload("resnet50_convs")
runs = {df: simulate("tpu_v4", resnet50, dataflow=df, mode="analytic") for df in ("os", "ws", "is")}
from accelsim.report.energy import dataflow_comparison  # noqa: E402

comp = dataflow_comparison({df: (r.layers, r.energy) for df, r in runs.items()})
comp[["dataflow", "cycles", "energy_pj", "mac_pj", "rf_pj", "sram_pj", "dram_pj",
      "pj_per_mac", "tops_per_w"]]

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
plot_energy_by_dataflow(comp, ax=axes[0], title="by level")
plot_energy_by_dataflow(comp, parts=["input", "weight", "output", "psum"], ax=axes[1],
                        title="by operand")
plt.tight_layout()

# %% [markdown]
# Per layer, the breakdown shows where each layer's energy goes (WS here, the TPU's own
# dataflow). Early layers (large feature maps) are dominated by moving activations; late
# layers by weights.

# %%
ax = plot_energy_by_layer(runs["ws"].energy.breakdown(), title="ResNet-50, WS: energy per layer")
ax.figure.set_size_inches(12, 3.8)
plt.tight_layout()

# %% [markdown]
# **Exercise 2.** Which operand dominates the OS run, and which the WS run? Find a layer in
# which OS beats WS in energy and one where it loses, and explain it from the layer's shape
# (`runs["os"].layers[["layer", "m", "n", "k", "energy_pj"]]`).

# %% [markdown]
# ## 3. What SRAM size buys
# Eyeriss (12x14 PEs, 16-bit, DDR3) running AlexNet weight-stationary, with its global buffer swept
# from 27 kB to 1.7 MB, priced with the 45 nm table (its SRAM rule spans 8 KiB to 1 MiB; the
# Eyeriss-like table only has points up to its own 128 KiB buffer). A bigger buffer keeps
# more of each operand on chip, so DRAM energy falls; but each SRAM access costs more
# (longer bit lines), so the energy per SRAM bit rises.

# %%
alexnet = load_workload("alexnet")
rows = []
for kb in (27, 54, 108, 216, 432, 864, 1728):
    r = simulate("eyeriss", alexnet, dataflow="ws", mode="analytic",
                 overrides={"memory.sram.capacity_bytes": f"{kb} kB",
                            "energy.table": "horowitz_45nm"})
    s = r.energy.summary
    sram_reads = r.energy.priced.query("level == 'sram' and operand == 'input'")
    rows.append({"sram_kB": kb, "cycles": r.totals["total_cycles"],
                 "sram_input_pj_per_bit": sram_reads["pj_per_unit"].max(),
                 "dram_MB": r.totals["dram_bytes"] / 1e6, **{f"{k}_pj": v for k, v in
                                                              s["by_level_pj"].items()},
                 "energy_pj": s["total_pj"], "pj_per_mac": s["pj_per_mac"]})
sweep = pd.DataFrame(rows)
sweep.round(3)

# %%
fig, ax = plt.subplots(figsize=(7, 3.6))
for col in ("dram_pj", "sram_pj", "rf_pj", "mac_pj", "energy_pj"):
    ax.plot(sweep["sram_kB"], sweep[col] / 1e6, marker="o",
            label="total" if col == "energy_pj" else col.replace("_pj", ""))
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("global buffer size (kB)")
ax.set_ylabel("energy (µJ, log scale)")
ax.set_title("Eyeriss, AlexNet: energy vs SRAM size")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
plt.tight_layout()

# %% [markdown]
# **Exercise 3.** At which size does doubling the buffer stop paying for itself? Change the
# DRAM technology to HBM2 (`overrides={"memory.dram.technology": "HBM2", ...}`): does the
# best size move? Why?

# %% [markdown]
# ## 4. Technology scaling
# `scaled_7nm` is the 45 nm table moved to 7 nm and 0.75 V by `E = C V^2` with `C ~ L` for
# logic and `C ~ L^0.5` for SRAM and wires; off-chip DRAM does not scale with the logic node
# (see `accelsim/report/ENERGY.md` for the rule and its limits). Same run, two tables:

# %%
from accelsim.report.energy import compute_energy  # noqa: E402

r = runs["ws"]
shares = {}
for name in ("horowitz_45nm", "scaled_7nm"):
    rep = compute_energy(r.actions, r.layers, r.machine, load_energy_table(name))
    total = rep.summary["total_pj"]
    shares[name] = {lv: v / total for lv, v in rep.summary["by_level_pj"].items()}
    shares[name]["pj_per_mac"] = rep.summary["pj_per_mac"]
pd.DataFrame(shares)

# %% [markdown]
# **Exercise 4.** At 7 nm, what fraction of the energy is DRAM? What does that say about
# where an architect should spend effort at modern nodes?
