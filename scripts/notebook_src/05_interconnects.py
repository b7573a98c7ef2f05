# %% [markdown]
# # Lab 5 — Interconnects: PCIe, NVLink, collectives and overlap
#
# Beyond one chip, time goes to **moving data**: host↔device over PCIe, device↔device over
# NVLink, gradients in all-reduce. This lab uses accelsim's link model (`accelsim.api.links`) on
# three systems described in `configs/hardware/`: `h200x2` (two H200 on NVLink 4 via NVSwitch,
# each on PCIe Gen5 x16), `hgx_h200_x8` and `dgx_a100`.
#
# The model (see `accelsim/hw/LINKS.md`): a copy costs
# `DMA setup + hop latencies + wire bytes / (raw bandwidth × link efficiency)`, where wire bytes
# add each packet's header; links are SimPy resources, so transfers that share one take turns.
#
# Units: **GB/s = 10⁹ bytes/s** (decimal), per direction unless stated.

# %%
import json
import math

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

from accelsim.api import links as L
from accelsim.engine.links import run_concurrent_copies
from accelsim.files import project_root
from accelsim.validation.seed_cases_links import reproduce

pd.set_option("display.precision", 3)
systems = {name: L.get_system(name) for name in ("h200x2", "hgx_h200_x8", "dgx_a100")}
display({name: [d.name for d in s.devices] for name, s in systems.items()})

# %% [markdown]
# ## 1. The bandwidth ladder
#
# HBM ≫ NVLink ≫ PCIe ≫ network: each step down is roughly an order of magnitude (the seed's
# "node bandwidth hierarchy"). `headline` is the datasheet rate (PCIe: GT/s × lanes / 8),
# `payload` what a long copy gets once encoding, packet headers and link-layer traffic are paid.

# %%
ladders = []
for name in ("hgx_h200_x8", "dgx_a100"):
    df = L.bandwidth_ladder(name)
    df.insert(0, "system", name)
    ladders.append(df)
ladder = pd.concat(ladders, ignore_index=True)
show = ladder[["system", "level", "headline_bytes_per_s", "payload_bytes_per_s",
               "ratio_to_next"]].copy()
show[["headline_bytes_per_s", "payload_bytes_per_s"]] /= 1e9
display(show.rename(columns={"headline_bytes_per_s": "headline GB/s",
                             "payload_bytes_per_s": "payload GB/s"}))

# %%
fig, ax = plt.subplots(figsize=(7, 3))
for i, (name, df) in enumerate(ladder.groupby("system", sort=False)):
    ax.bar([x + 0.4 * i for x in range(len(df))], df["headline_bytes_per_s"] / 1e9, width=0.4,
           label=name)
ax.set_xticks([x + 0.2 for x in range(4)], ["HBM", "NVLink", "PCIe", "NIC"])
ax.set_yscale("log")
ax.set_ylabel("bandwidth per direction (GB/s)")
ax.legend()
ax.set_title("Bandwidth ladder")
plt.show()

# %% [markdown]
# ## 2. Latency versus bandwidth
#
# A small copy is all latency; a large one all bandwidth. They cost the same at
# `n½ = latency × bandwidth`. Back-to-back copies issued by one thread cannot go faster than
# the host issues them, which is why a benchmark loop shows a floor. The dots are the
# measured H200 curves the link constants were fitted to (`scripts/data/h200_copy_curves.json`).

# %%
sizes = [2.0**k for k in range(10, 31)]
h200x2 = systems["h200x2"]
rows = []
for label, src, dst, pageable in [("H2D pinned", "host", "gpu0", False),
                                  ("H2D pageable", "host", "gpu0", True),
                                  ("GPU0->GPU1 NVLink", "gpu0", "gpu1", False)]:
    for n in sizes:
        d = L.transfer(h200x2, src, dst, n, pageable=pageable)
        rows.append({"path": label, "bytes": n, "per_call_s": d["back_to_back_s"],
                     "alone_s": d["time_s"]})
curves = pd.DataFrame(rows)
curves["GB/s (loop)"] = curves["bytes"] / curves["per_call_s"] / 1e9
meas = json.loads((project_root() / "scripts" / "data" / "h200_copy_curves.json").read_text())
fig, ax = plt.subplots(figsize=(7, 4))
for label, df in curves.groupby("path", sort=False):
    ax.plot(df["bytes"], df["GB/s (loop)"], label=f"model: {label}")
h2d, p2p = meas["pcie_host_device"], meas["p2p_gpu_gpu"]["copies"]
ax.plot([r["bytes"] for r in h2d], [r["h2d_pinned_GBps"] for r in h2d], "o", ms=4,
        label="measured H2D pinned")
ax.plot([r["bytes"] for r in h2d], [r["h2d_pageable_GBps"] for r in h2d], "s", ms=4,
        label="measured H2D pageable")
ax.plot([r["bytes"] for r in p2p], [r["GBps"] for r in p2p], "^", ms=4,
        label="measured peer copy")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("transfer size (bytes)")
ax.set_ylabel("bandwidth (GB/s)")
ax.legend(fontsize=7, loc="upper left")
ax.set_title("h200x2: copy bandwidth vs size")
plt.show()
lb = L.latency_bandwidth_curve(h200x2, "host", "gpu0")
print(f"PCIe n_1/2 = {lb.attrs['half_bandwidth_bytes'] / 1e3:.0f} kB")
display(lb[["bytes", "time_s", "bytes_per_s", "regime"]].iloc[::2])

# %% [markdown]
# Going **through the CPU** is the trap the seed warns about: without a peer link a GPU→GPU copy
# is staged in host memory, crossing PCIe twice.

# %%
nvl = L.transfer("h200x2", "gpu0", "gpu1", 2**30)
host_hop = [L.transfer("h200x2", "gpu0", "host", 2**30),
            L.transfer("h200x2", "host", "gpu1", 2**30)]
print(f"NVLink: {nvl['time_s'] * 1e3:.2f} ms; through host memory: "
      f"{sum(d['time_s'] for d in host_hop) * 1e3:.2f} ms")

# %% [markdown]
# ## 3. Overlap: streams, double buffering, contention, zero-copy
#
# H2D copy → kernel → D2H copy per chunk. Copy engines and the compute stream are separate
# engine resources, so chunk *i+1*'s copy runs during chunk *i*'s kernel. Each step costs
# `max(T_compute, T_transfer)` instead of the sum: the transfer is hidden iff
# `T_compute ≥ T_transfer` (seed case DBUF).

# %%
n = 64 * 2**20
t_transfer = L.transfer("h200x2", "host", "gpu0", n)["time_s"]
rows = []
for ratio in (0.25, 0.5, 1.0, 2.0, 4.0):
    tc = ratio * t_transfer
    over = L.pipeline("h200x2", "gpu0", 16, n, tc, n // 4, overlap=True)["time_s"]
    serial = L.pipeline("h200x2", "gpu0", 16, n, tc, n // 4, overlap=False)["time_s"]
    rows.append({"T_compute/T_transfer": ratio, "overlapped ms": over * 1e3,
                 "serial ms": serial * 1e3, "saving": 1 - over / serial})
display(pd.DataFrame(rows))

# %%
hgx = systems["hgx_h200_x8"]
alone = run_concurrent_copies(hgx, [("host", "gpu0", 2**28)])[0]
shared = run_concurrent_copies(hgx, [("host", "gpu0", 2**28), ("host", "gpu1", 2**28)])
print(f"one H2D: {alone * 1e3:.2f} ms; two GPUs behind one PCIe switch at once: "
      f"{max(shared) * 1e3:.2f} ms")
for reads in (1, 2, 4, 8):
    z = L.zero_copy("h200x2", "gpu0", 16 * 2**20, 2e-4, reads=reads)
    print(f"kernel reading 16 MiB of host memory {reads}x: zero-copy "
          f"{z['zero_copy_s'] * 1e3:.2f} ms, copy first {z['copy_s'] * 1e3:.2f} ms "
          f"-> {z['winner']}")

# %% [markdown]
# ## 4. Collectives and scaling
#
# NCCL reports **algbw** = bytes / time and **busbw** = algbw × 2(n−1)/n for all-reduce
# ((n−1)/n for the others), so busbw can be compared with the link rate at any n.
#
# Two models: `model="link"` treats a collective as copies on the links (the ideal an
# algorithm could reach); `model="nccl"` adds how NCCL really moves data (SM-driven channels,
# LL/LL128/Simple protocols, per-step synchronisation). Ring and tree exist in both; NCCL has
# no "direct" all-reduce, so it is shown with the link model only.

# %%
rows = []
for algo, model in (("ring", "link"), ("ring", "nccl"), ("tree", "nccl"), ("direct", "link")):
    for k in range(10, 31, 2):
        r = L.collective(hgx, "allreduce", 2.0**k, algo=algo, model=model)
        rows.append({"algo": f"{algo} ({model})", "bytes": 2.0**k, "time_us": r["time_s"] * 1e6,
                     "busbw": r["busbw_bytes_per_s"] / 1e9})
ar = pd.DataFrame(rows)
fig, ax = plt.subplots(figsize=(7, 3.5))
for algo, df in ar.groupby("algo"):
    ax.plot(df["bytes"], df["busbw"], marker=".", label=algo)
ax.axhline(L.transfer(hgx, "gpu0", "gpu1", 2**30)["link_bytes_per_s"] / 1e9, ls=":", c="k",
           label="NVLink payload rate")
ax.set_xscale("log", base=2)
ax.set_xlabel("message size per GPU (bytes)")
ax.set_ylabel("bus bandwidth (GB/s)")
ax.legend(loc="upper left", fontsize=8)
ax.set_title("hgx_h200_x8: all-reduce on 8 GPUs")
plt.show()

# %%
# the seed's fallacy case: ring all-reduce of 1 GB on 8 GPUs, 300 GB/s per direction, 50 ms compute
display(reproduce("AR-8GPU"))

# %%
rows = []
for n in (2, 4, 8):
    ranks = [f"gpu{i}" for i in range(n)]
    for overlap in (False, True):
        r = L.data_parallel_step(hgx, grad_bytes=2 * 7e9, compute_s=0.25, ranks=ranks,
                                 overlap=overlap)
        rows.append({"gpus": n, "overlap": overlap, "step ms": r["step_s"] * 1e3,
                     "exposed comm ms": r["exposed_comm_s"] * 1e3,
                     "speed-up": r["speedup"], "efficiency": r["efficiency"]})
display(pd.DataFrame(rows))

# %%
tp = pd.DataFrame([L.tensor_parallel_layer(hgx, hidden=8192, seq=2048, batch=1, tp=k)
                   for k in (1, 2, 4, 8)])
display(tp[["tp", "compute_s", "comm_s", "speedup", "efficiency", "amdahl_serial_fraction"]])

# %%
# Amdahl: what does not shrink caps the speed-up at 1 / (1 - p)
fig, ax = plt.subplots(figsize=(6, 3))
gs = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
for p in (0.8, 0.9, 0.95, 0.99):
    ax.plot(gs, [L.amdahl(p, g)["speedup"] for g in gs], marker=".",
            label=f"p = {p} (limit {L.amdahl(p, math.inf)['speedup']:.0f}x)")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("speed-up of the accelerated part")
ax.set_ylabel("overall speed-up")
ax.legend(fontsize=7)
plt.show()

# %% [markdown]
# ## Exercises
#
# 1. Change `max_payload_bytes` of `pcie5_x16` to 128 (a copy of `configs/hardware/h200x2.yaml`)
#    and predict the new asymptotic H2D bandwidth before you run it.
# 2. At what bucket size does the data-parallel step on 8 GPUs stop hiding the all-reduce?
#    Sweep `bucket_bytes` from 1 MB to 1 GB.
# 3. Build a 4-GPU system with no NVSwitch, only PCIe to the host. How much slower is a 1 GB
#    all-reduce, and which link is the bottleneck?
# 4. `scripts/validate/validate_links.py` prints the held-out NCCL measurements next to the
#    model. Where does the model go wrong, and which missing mechanism would you add first?
