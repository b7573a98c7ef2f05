# %% [markdown]
# # Lab 10 — Row-stationary: why Eyeriss chose it, and how close a model gets to the chip
#
# Eyeriss (Chen et al., ISCA 2016; JSSC 2017) is a 65 nm chip with 168 PEs (12 x 14), each
# with three scratchpads (filter 224 words, ifmap 12, psum 24, 16-bit), a 108 kB global
# buffer, and multicast networks between them. Its dataflow, **row-stationary (RS)**, was
# chosen by counting where the energy goes. This lab:
#
# 1. prices one access at each level of the hierarchy (why reuse near the PE matters);
# 2. shows how RS maps AlexNet's layers onto the 12 x 14 array (sets, folding, replication);
# 3. compares energy per level for RS, WS, OS and IS on the same layer and storage budget;
# 4. puts the model next to the chip's measured latency, power and DRAM traffic.
#
# Units: pJ, ms, mW; 1 MAC = 2 operations; one access moves one 16-bit word.

# %%
import matplotlib.pyplot as plt
import pandas as pd

from accelsim.api.eyeriss import (
    dataflow_energy,
    load_measurements,
    predict,
    validation_table,
    vgg16_heldout,
)
from accelsim.config.energy import load_energy_table
from accelsim.config.registry import load_machine
from accelsim.report.plots_energy import plot_energy_by_dataflow

data = load_measurements()
eyeriss = load_machine("eyeriss")
table = load_energy_table("eyeriss_65nm")

# %% [markdown]
# ## 1. The cost of one access, by level
# The Eyeriss authors' own ratios (ISCA 2016, Table IV): relative to a 16-bit MAC, a
# scratchpad (register file) access costs 1x, a hop between PEs 2x, the global buffer 6x and
# DRAM 200x. `configs/energy/eyeriss_65nm.yaml` keeps those ratios; its one scale (the MAC,
# in pJ) and the chip's clock/leakage per PE-cycle were fitted on the measured power of two
# layers (section 4 says which).

# %%
u = table.require("mac.int16")
levels = pd.DataFrame({
    "pJ per 16-bit access": {
        "MAC (ALU)": u,
        "scratchpad (RF)": 16 * table.require("rf.read"),
        "PE array network": 16 * table.require("noc"),
        "global buffer 108 kB": table.sram_access_pj(108e3, 16, "read"),
        "DRAM": 16 * table.require("dram.DDR3"),
    }})
levels["x MAC"] = levels["pJ per 16-bit access"] / u
levels.round(2)

# %% [markdown]
# A value fetched from DRAM once and used 200 times from a scratchpad costs about as much in
# DRAM as in all its uses. So a dataflow must reuse **every** data type — filter weights,
# input activations *and* partial sums — as close to the PE as possible. Weight-stationary
# keeps weights still but moves partial sums through the array and buffer; output-stationary
# keeps partial sums but streams both inputs. RS keeps a **row** of filter weights in each
# PE's scratchpad, slides a row of the input past it (a 1-D convolution), and accumulates
# rows of partial sums down a PE column: filter rows are reused across a PE row, input rows
# diagonally, partial sums vertically.
#
# ## 2. How RS maps AlexNet onto 12 x 14 PEs
# A logical *PE set* for one 2-D convolution is R x E PEs (filter rows x output rows). The
# mapper (`accelsim.hw.dataflows.row_stationary`) strip-mines sets that are too wide (``e``
# output rows per pass), folds a wide set into segments, replicates small sets (``r`` channel
# groups x ``t`` filter groups), interleaves ``p`` filters and ``q`` channels per PE within the
# scratchpads, batches ``n`` images, and keeps the psums of ``m`` filters in the global
# buffer. It searches these parameters for the lowest energy.

# %%
pred = predict(data)
pred[["layer", "rs_e", "rs_n", "rs_p", "rs_q", "rs_r", "rs_t", "rs_m", "rs_segments",
      "active_pes", "macs_m"]]

# %% [markdown]
# CONV1 (R = 11, E = 55) runs 11 x 7 sets, two side by side (154 PEs); CONV3-5 (R = 3,
# E = 13) fit four 3 x 13 sets (156 PEs) — the same PE counts the chip reports. Every mapping
# respects the scratchpads: ``p q S <= 224``, ``q S <= 12``, ``p <= 24``.
#
# ## 3. The dataflows on one layer, same storage budget
# CONV3 of AlexNet, dense data, no compression. OS, WS and IS run the same 168 PEs as a
# systolic array with one register per operand; NLR (no local reuse, DianNao-style) keeps
# nothing in the PEs and reads every weight from the buffer. The bytes RS spends on
# scratchpads (168 x 520 B) go to the others' global buffer, so all have the same on-chip
# storage.

# %%
conv3 = dataflow_energy(data, layers=["CONV3"])
conv3[["dataflow", "pj_per_mac", "vs_rs", "mac_pj_per_mac", "rf_pj_per_mac", "noc_pj_per_mac",
       "sram_pj_per_mac", "dram_pj_per_mac"]].round(2)

# %%
bars = conv3.assign(**{f"{lv}_pj": conv3[f"{lv}_pj_per_mac"]
                       for lv in ("mac", "rf", "noc", "sram", "dram")})
ax = plot_energy_by_dataflow(bars, parts=["mac", "rf", "noc", "sram", "dram"],
                             title="AlexNet CONV3 on Eyeriss: pJ per MAC by level")
ax.set_ylabel("pJ per MAC")

# %% [markdown]
# RS spends less in the scratchpads than OS/WS (each operand is read from a scratchpad once
# per MAC; the systolic PEs also pass operands and 32-bit partial sums between registers
# every cycle), and much less in the global buffer and DRAM. NLR has no register energy at
# all but pays for it many times over in buffer reads and network deliveries. The ``mac``
# bar includes the clock and leakage of every PE-cycle, which is why IS, the slowest here,
# pays more there. ISCA 2016 found RS 1.4-2.5x more energy-efficient than WS, OS and NLR on
# AlexNet's CONV layers; over all five layers the model gives:

# %%
allconv = dataflow_energy(data)
allconv[["dataflow", "pj_per_mac", "vs_rs"]].round(2)

# %% [markdown]
# ## 4. Predicted vs the chip (JSSC 2017, Table V)
# AlexNet CONV1-5, batch 4, 1 V, 200 MHz. The model takes the measured share of zero input
# activations per layer as an input (it drives zero-gating and run-length coding) and
# predicts everything else. Calibrated: the MAC energy and clock/leakage per PE-cycle (on
# CONV1 and CONV5 power) and the DRAM interface rate (on CONV1's waiting time); CONV2-4
# power, every processing latency and every DRAM count are held out.

# %%
v = validation_table(data)
cols = ["layer"] + [f"{k}_{s}" for k in ("total_latency_ms", "power_mw", "dram_access_per_mac")
                    for s in ("pred", "meas", "err")]
v[cols].round(4)

# %%
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
layers = v[v["layer"] != "total"]
for ax, (key, label) in zip(axes, [("total_latency_ms", "latency (ms)"), ("power_mw", "power (mW)"),
                                   ("dram_access_per_mac", "DRAM accesses / MAC")]):
    x = range(len(layers))
    ax.bar([i - 0.2 for i in x], layers[f"{key}_meas"], width=0.4, label="chip")
    ax.bar([i + 0.2 for i in x], layers[f"{key}_pred"], width=0.4, label="model")
    ax.set_xticks(list(x), layers["layer"])
    ax.set_title(label)
axes[0].legend()
fig.tight_layout()

# %% [markdown]
# What the model leaves out: the global-buffer access counts differ by up to about 40 % per
# layer (the chip's own counting of psum and ifmap traffic is not published in detail);
# latency misses are mostly in how long each pass takes to ramp up (the model loads filters
# over the 64-bit filter network and streams ifmaps over the 16-bit one, with no fixed
# per-pass overhead). That gap shows on a network nothing was fitted on: VGG-16 (JSSC 2017,
# batch 3) gets its DRAM traffic per MAC right but runs about twice as fast as the chip's
# 0.7 frames/s, whose large early layers "spend more time on ramping up the processing".

# %%
vgg16_heldout(data).round(4)
#
# ## Exercises
# 1. Halve the filter scratchpad (`--set compute.array.scratchpads.filter_bytes=224 B`):
#    which mapping parameter shrinks first, and what happens to CONV2's DRAM traffic?
# 2. Turn off run-length coding (`compute.array.network.rlc: false`): by how much do DRAM
#    accesses per MAC grow on CONV1 and on CONV5, and why so differently?
# 3. Overlap DRAM with processing (`compute.array.network.overlap_fmap_io: true`): how much
#    of the 115 ms batch latency was the chip waiting for its DRAM interface?
# 4. Give WS a 4x larger global buffer: does it catch up with RS? Which level still costs more?
