# %% [markdown]
# # Lab 6 — Design-space sweeps: array size × SRAM, the knee, and the Pareto front
#
# An architect rarely asks "how fast is *this* accelerator?"; the question is "which
# accelerator should I build?". That means evaluating hundreds of design points — array
# shapes, on-chip SRAM sizes, dataflows — over real models, then looking at the trade-offs.
#
# In this lab you will
#
# 1. describe a sweep as data (a *spec*: base machine, workload, parameters by dotted path into
#    the hardware YAML, constraints, metrics),
# 2. run it on all local cores with `run_sweep` (the same code path as `accelsim sweep`,
#    which can also send the work to a Dask cluster with `--scheduler`),
# 3. plot latency against array size and SRAM, find the **knee** (where more silicon stops
#    paying), and extract the **Pareto front** of latency vs area, and for BERT of latency vs
#    energy vs area.
#
# Every figure below is computed from the results table: one row per design point.

# %%
import time

import matplotlib.pyplot as plt
import pandas as pd

from accelsim.report.plots_sweep import plot_heatmap, plot_metric_vs_param, plot_pareto
from accelsim.sweep.pareto import knee_point, pareto_front, pareto_mask
from accelsim.sweep.runner import run_sweep
from accelsim.sweep.space import spec_from_dict
from accelsim.sweep.store import read_results

pd.set_option("display.width", 140)
LAB_START = time.monotonic()

# %% [markdown]
# ## 1. A sweep spec
#
# The base machine is one TPU v4 TensorCore (four 128×128 bf16 MXUs, 32 MiB of operand SRAM,
# 600 GB/s of HBM). We vary the MXU shape and the SRAM size. Parameters are **dotted paths into
# the hardware YAML** (`configs/hardware/tpu_v4.yaml`); each value is checked by building the
# machine with it before anything runs, so a typo such as `compute.array.rowz` is an error
# naming the file, the field and the value — not a crash an hour into the sweep.
#
# The same spec can be written as YAML and run with
# `accelsim sweep SPEC.yaml --out results.parquet` (see `workloads/sweeps/`).

# %%
resnet_spec = spec_from_dict({
    "name": "lab6_resnet50",
    "hardware": "tpu_v4",
    "workload": "resnet50_convs",
    "mode": "analytic",                       # the numba fast path (equal to the event engine)
    "parameters": {
        "compute.array.rows": [32, 64, 128, 256],
        "compute.array.cols": [32, 64, 128, 256],
        "memory.sram.capacity_bytes": {"start": "1 MiB", "stop": "32 MiB", "factor": 4},
    },
    "constraints": ["cols >= rows"],          # keep arrays at least as wide as tall
    "metrics": ["total_cycles", "time_s", "overall_util", "stall_cycles", "dram_bytes",
                "area_mm2", "area_pe_mm2", "area_sram_mm2"],
})
points = resnet_spec.points()
print(f"{len(points)} design points; first: {points[0]}")

# %% [markdown]
# ## 2. Run it
#
# `run_sweep` evaluates every point on a pool of processes and appends rows to a Parquet file as
# they finish. Interrupt it (Ctrl-C) and run again with `resume=True` (`--resume` on the command
# line): the points already in the file are skipped, because each row is keyed by a stable hash
# of the point's parameters, the base machine, the workload and the accelsim version.

# %%
summary = run_sweep(resnet_spec, "lab6_resnet50.parquet", workers=2, force=True, progress=False)
print(summary.line())
resnet = read_results("lab6_resnet50.parquet")
resnet = resnet.rename(columns={"compute.array.rows": "rows", "compute.array.cols": "cols",
                                "memory.sram.capacity_bytes": "sram_bytes"})
resnet["sram_mib"] = resnet["sram_bytes"] / 2**20
resnet["latency_us"] = resnet["time_s"] * 1e6
resnet[["rows", "cols", "sram_mib", "latency_us", "overall_util", "area_mm2"]].head(8)

# %% [markdown]
# ## 3. Latency against array size and SRAM
#
# Bigger arrays have more PEs, but ResNet-50's layers do not fill a 256-wide array well
# (the utilisation falls), and a small SRAM makes the array wait for DRAM (stall cycles).
# The left plot takes, for each array shape, the best SRAM; the heatmap shows the full grid for
# square arrays.

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
square = resnet[resnet["rows"] == resnet["cols"]]
plot_metric_vs_param(square, "rows", "latency_us", hue="sram_mib", logx=True, logy=True, ax=axes[0])
axes[0].set_xlabel("array rows = columns (square arrays)")
plot_heatmap(square, "rows", "sram_mib", "overall_util", fmt="{:.2f}", ax=axes[1])
fig.tight_layout()

# %% [markdown]
# ## 4. The knee and the Pareto front (latency vs area)
#
# A design is **Pareto-optimal** when no other design is both faster and smaller. The front is
# the menu an architect chooses from; the **knee** is the point of diminishing returns — past it,
# each extra mm² buys little latency. We find it as the front point farthest below the chord
# joining the front's two ends (axes scaled to [0, 1]).

# %%
resnet["pareto"] = pareto_mask(resnet, {"latency_us": "min", "area_mm2": "min"})
front = pareto_front(resnet, {"area_mm2": "min", "latency_us": "min"})
knee = knee_point(front, "area_mm2", "latency_us")
ax = plot_pareto(resnet, "area_mm2", "latency_us", knee=knee, logx=True, logy=True,
                label=lambda r: f"{r.rows}x{r.cols}, {r.sram_mib:g} MiB")
ax.figure.set_size_inches(8, 5)
ax.set_title("ResNet-50 on TPU v4-like cores: latency vs area (45 nm area model)")
print("knee:", resnet.loc[knee, ["rows", "cols", "sram_mib", "latency_us", "area_mm2"]].to_dict())
front[["rows", "cols", "sram_mib", "latency_us", "area_mm2", "overall_util"]]

# %% [markdown]
# ## 5. BERT: dataflows, energy and a three-way front
#
# One BERT-base encoder layer (sequence 512) is all GEMMs with large M, so its trade-offs
# differ from ResNet's. Here we also sweep the dataflow and price **energy** with the machine's
# pJ-per-action table, then extract the front over three objectives at once: latency, energy
# and area.

# %%
bert_spec = spec_from_dict({
    "name": "lab6_bert",
    "hardware": "tpu_v4",
    "workload": "bert_base_encoder",
    "parameters": {
        "compute.array.rows": [32, 64, 128, 256],
        "compute.array.cols": [32, 64, 128, 256],
        "memory.sram.capacity_bytes": ["2 MiB", "8 MiB", "32 MiB"],
        "dataflow": ["os", "ws"],
    },
    "constraints": ["rows == cols"],
    "metrics": ["time_s", "overall_util", "energy_j", "pj_per_mac", "area_mm2"],
})
print(run_sweep(bert_spec, "lab6_bert.parquet", workers=2, force=True, progress=False).line())
bert = read_results("lab6_bert.parquet").rename(columns={
    "compute.array.rows": "rows", "compute.array.cols": "cols",
    "memory.sram.capacity_bytes": "sram_bytes"})
bert["sram_mib"] = bert["sram_bytes"] / 2**20
bert["latency_us"] = bert["time_s"] * 1e6
bert["energy_mj"] = bert["energy_j"] * 1e3
objectives = {"latency_us": "min", "energy_mj": "min", "area_mm2": "min"}
bert["pareto"] = pareto_mask(bert, objectives)
print(f"{int(bert['pareto'].sum())} of {len(bert)} BERT design points are Pareto-optimal "
      "in (latency, energy, area)")
bert[bert["pareto"]].sort_values("latency_us")[
    ["rows", "sram_mib", "dataflow", "latency_us", "energy_mj", "pj_per_mac", "area_mm2"]]

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
bert["pareto2"] = pareto_mask(bert, {"latency_us": "min", "energy_mj": "min"})
plot_pareto(bert, "latency_us", "energy_mj", front="pareto2", color="dataflow", logx=True,
            ax=axes[0])
axes[0].set_title("BERT layer: energy vs latency, by dataflow")
plot_metric_vs_param(bert, "rows", "pj_per_mac", hue="dataflow", logx=True, ax=axes[1])
fig.tight_layout()

# %% [markdown]
# ## 6. Scaling out
#
# The same spec runs on a Dask cluster — `accelsim sweep SPEC.yaml --out r.parquet --scheduler
# tcp://host:8786` — with the same rows as a local run: each chunk of points is a task; if a
# worker dies, its chunks run again elsewhere, and the results file keeps exactly one row per
# point. `scripts/bench/bench_sweep.py` measures the sweep rates.
#
# ## Exercises
#
# 1. Add `memory.dram.bandwidth_bytes_per_s: ["100 GB/s", "300 GB/s", "600 GB/s"]` to the ResNet
#    spec. At which bandwidth does the knee move to a smaller SRAM, and why?
# 2. Replace the grid by `sampling: {method: lhs, samples: 60, seed: 0}` with
#    `compute.array.rows: {low: 32, high: 256, log: true}`. How close does the sampled front
#    come to the grid's?
# 3. The area model (`accelsim/sweep/area.py`) prices SRAM at 45 nm here. Change the energy
#    table to `scaled_7nm` (`energy.table`) and see how the front's shape changes when SRAM
#    becomes relatively cheaper than logic — or does it?
# 4. Why does OS beat WS on energy for some BERT points and not others? Look at
#    `dram_bytes` and the per-operand energy in `accelsim run --json`.

# %%
elapsed = time.monotonic() - LAB_START
print(f"lab ran in {elapsed:.1f} s")
plt.close("all")
