# %% [markdown]
# # Lab 12 — Serving an LLM: load, latency and the hardware under them
#
# A served model answers a **stream of requests**. An engine such as vLLM runs it one
# *iteration* at a time: each iteration processes one new token of every running request
# (decode) plus chunks of newly arrived prompts (prefill), as long as the **KV cache** has
# room for their keys and values. What users feel:
#
# | metric | meaning |
# |---|---|
# | TTFT | time to first token: queueing + the prompt's prefill |
# | TPOT | time per output token after the first: how long one iteration of the batch takes |
# | throughput | output tokens per second over the whole run |
# | goodput | requests per second that met the latency targets (the SLO) |
#
# `accelsim serve` simulates the engine (a discrete-event simulation: arrivals, scheduler,
# paged KV cache) and takes every iteration's time from the GPU model of one engine step.
# This lab raises the load on one model until its SLO breaks, compares tensor parallelism
# with replicas, and changes the hardware under the same load.

# %%
import dataclasses

import matplotlib.pyplot as plt
import pandas as pd

from accelsim.api.serving import serve
from accelsim.config.registry import load_machine

MODEL, ISL, OSL = "llama3_8b", 1024, 128
SLO = "ttft=1s,tpot=40ms"

# %% [markdown]
# ## 1. Load rising until the SLO breaks
# Poisson arrivals at rising rates, 250 requests each, vLLM's defaults on one H200.

# %%
rows = []
for rate in (10, 30, 45, 60, 75):
    r = serve("h200", MODEL, isl=ISL, osl=OSL, requests=250, rate=rate, slo=SLO)
    s = r.summary
    rows.append({"rate (req/s)": rate, "output tok/s": s["output_tokens_per_s"],
                 "TTFT p50 (ms)": s["ttft_s"]["p50"] * 1e3,
                 "TTFT p99 (ms)": s["ttft_s"]["p99"] * 1e3,
                 "TPOT p50 (ms)": s["tpot_s"]["p50"] * 1e3,
                 "SLO met": s["slo_attainment"], "KV use (max)": s["kv_cache_use_max"]})
load = pd.DataFrame(rows)
load.round(3)

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
ax1.plot(load["rate (req/s)"], load["TTFT p99 (ms)"], "o-", label="TTFT p99")
ax1.plot(load["rate (req/s)"], load["TTFT p50 (ms)"], "o-", label="TTFT p50")
ax1.axhline(1000, color="grey", ls="--", label="SLO")
ax1.set_xlabel("arrival rate (req/s)")
ax1.set_ylabel("ms")
ax1.set_yscale("log")
ax1.legend()
ax2.plot(load["rate (req/s)"], load["TPOT p50 (ms)"], "o-")
ax2.axhline(40, color="grey", ls="--")
ax2.set_xlabel("arrival rate (req/s)")
ax2.set_ylabel("TPOT p50 (ms)")
fig.tight_layout()

# %% [markdown]
# TPOT grows with load because each iteration carries more sequences *and* the prefill chunks
# of new arrivals (chunked prefill mixes them into decode iterations). TTFT stays flat until
# the engine cannot keep up; then requests queue and TTFT explodes: that knee is the
# capacity of this configuration at this SLO.
#
# The batch and the KV cache of one run, over time:

# %%
busy = serve("h200", MODEL, isl=ISL, osl=OSL, requests=150, rate=30)
busy.timeline_figure()

# %% [markdown]
# ## 2. Two GPUs: tensor parallel or two replicas?
# TP=2 splits every layer over two GPUs (an all-reduce per attention and MLP block, priced
# on the HGX H200's NVLink by the NCCL model); two replicas each run the whole model on half
# the requests.

# %%
layouts = {"1 GPU": {}, "TP=2": {"tp": 2}, "2 replicas": {"replicas": 2}}
rows = []
for name, kw in layouts.items():
    s = serve("h200", MODEL, isl=ISL, osl=OSL, requests=200, rate=30, slo=SLO, **kw).summary
    rows.append({"layout": name, "output tok/s": s["output_tokens_per_s"],
                 "TTFT p50 (ms)": s["ttft_s"]["p50"] * 1e3,
                 "TPOT p50 (ms)": s["tpot_s"]["p50"] * 1e3, "SLO met": s["slo_attainment"],
                 "J / token": s["energy_per_output_token_j"]})
layout = pd.DataFrame(rows).set_index("layout")
layout.round(3)

# %%
ax = layout[["TTFT p50 (ms)", "TPOT p50 (ms)"]].plot.bar(figsize=(6, 3), rot=0)
ax.set_ylabel("ms")
ax.set_yscale("log")

# %% [markdown]
# TP=2 makes every iteration faster (lower TPOT: half the weights per GPU to stream), at the
# price of the collectives; replicas halve each engine's load (lower queueing, so lower TTFT
# at high load) but keep a single GPU's TPOT.
#
# ## 3. Change the hardware under the same load
# Llama-3-70B on two GPUs (TP=2) with long requests (6,000 prompt tokens, 1,000 generated), all
# arriving at once: the KV cache, not the arithmetic, limits how many run together. A larger
# HBM holds more KV blocks; a faster NVLink shortens the all-reduces of TP. Both are a config
# change: the GPU's `memory.hbm.capacity_bytes`, the system's NVLink lanes.

# %%
big_hbm = load_machine("h200", {"memory.hbm.capacity_bytes": "282 GB"})
node = load_machine("hgx_h200_x8")
fast_specs = tuple(dataclasses.replace(s, lanes=s.lanes * 2) if s.protocol == "nvlink" else s
                   for s in node.link_specs)
fast_node = dataclasses.replace(node, link_specs=fast_specs)
cases = {"H200 x2 (TP=2)": "h200", "with 2x HBM": big_hbm, "with 2x NVLink lanes": fast_node}
rows = []
for name, machine in cases.items():
    s = serve(machine, "llama3_70b", tp=2, isl=6000, osl=1000, requests=120, rate="inf").summary
    rows.append({"case": name, "KV blocks": s["kv_cache_blocks"],
                 "preemptions": s["preemptions"], "output tok/s": s["output_tokens_per_s"],
                 "TTFT p50 (s)": s["ttft_s"]["p50"], "TPOT p50 (ms)": s["tpot_s"]["p50"] * 1e3})
hw = pd.DataFrame(rows).set_index("case")
hw.round(2)

# %% [markdown]
# With twice the HBM the engine keeps every request's cache resident: no preemption (a
# preempted request recomputes its whole prompt), more sequences per iteration, higher
# throughput. The faster link trims the collectives inside every iteration: a smaller gain
# here, because each all-reduce of a 70B decode step is latency-bound, not bandwidth-bound.

# %% [markdown]
# **Try it**: `accelsim serve h200 llama3_70b --tp 4 --rate 8 --slo ttft=1s,tpot=40ms`
# prints the same figures; `--engine sglang` or `--set max_num_seqs=64` change the engine,
# `--trace FILE.csv` replays your own arrivals (arrival_s, input_tokens, output_tokens).
