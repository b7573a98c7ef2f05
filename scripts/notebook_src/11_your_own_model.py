# %% [markdown]
# # Lab 11 — Your own model: capture it, see its kernels, find where its time goes
#
# The other labs run models from accelsim's zoo. Here you write **your own** PyTorch model,
# hand it to accelsim exactly as you would call it, and ask the questions a performance
# engineer asks of a new model:
#
# 1. What does my program actually call? (the **call table**)
# 2. Which of those calls launch GPU kernels, and which launch nothing? (the **kernel list**)
# 3. Is there anything the simulator does not know how to cost? (the **unmodelled table**)
# 4. Where does the time go, per part of the model, on an H200, an A100 and a TPU v4?
# 5. What changes between **eager** PyTorch and a **CUDA graph**, and why is a small batch in
#    eager mode bound by the host rather than by the GPU?
#
# The lab needs PyTorch (`pip install 'accelsim[torch]'`; the CPU build is enough: nothing
# runs on a GPU and no weights are ever allocated).

# %%
import linecache
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from IPython.display import display

from accelsim.api import capture
from accelsim.api.capture import unmodelled_calls
from accelsim.api.model_run import run_model
from accelsim.report.plots_run import plot_stream_timeline

# %% [markdown]
# ## 1. Write a model
# A small decoder-only language model, written the way people write one by hand: RMSNorm with
# `F.rms_norm`, rotary position embedding as in Meta's original Llama code (pairs of features
# viewed as complex numbers and multiplied by unit phases), causal attention with
# `F.scaled_dot_product_attention` (SDPA) and a SwiGLU MLP. Every part is an `nn.Module`, so
# every call is later named after the module it ran in (`blocks.0.attn.qkv`, ...).
#
# `build()` makes the model and one batch of token ids on the **`meta` device**: tensors with a
# shape, a dtype and strides but no storage. A 4-layer model or a 70-billion-parameter one
# costs the same to build this way, and nothing here ever does arithmetic. This cell holds only
# definitions: with the three `torch` imports above it, it is a Python module (section 5 writes
# it to a file for the command line).

# %%
class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, 1e-5)


class Rotary(nn.Module):
    """Rotate each pair of features by its position's angle (Meta's ``apply_rotary_emb``)."""

    def forward(self, x, phases):
        pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(pairs * phases[None, :, None, :]).flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.rope = Rotary()

    def forward(self, x, phases):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, -1).unbind(2)
        q, k = self.rope(q, phases), self.rope(k, phases)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        return self.out(a.transpose(1, 2).reshape(b, s, d))


class MLP(nn.Module):
    def __init__(self, d, ffn):
        super().__init__()
        self.gate = nn.Linear(d, ffn, bias=False)
        self.up = nn.Linear(d, ffn, bias=False)
        self.down = nn.Linear(ffn, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.norm1, self.attn = RMSNorm(d), Attention(d, heads)
        self.norm2, self.mlp = RMSNorm(d), MLP(d, ffn)

    def forward(self, x, phases):
        x = x + self.attn(self.norm1(x), phases)
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, layers=4, d=1024, heads=16, ffn=2816, vocab=32000, max_seq=2048):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads, ffn) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        half = d // heads // 2
        angles = torch.outer(torch.arange(max_seq).float(),
                             10000.0 ** (-torch.arange(half).float() / half))
        # A plain attribute, as in Meta's code: `.to(torch.bfloat16)` would cast a complex
        # buffer to real numbers.
        self.phases = torch.polar(torch.ones_like(angles), angles)

    def forward(self, ids):
        x = self.embed(ids)
        phases = self.phases[: ids.shape[1]]
        for block in self.blocks:
            x = block(x, phases)
        return self.head(self.norm(x))


def build(batch=1, seq=128, device="meta"):
    """TinyLM in bf16 and one batch of ``batch`` x ``seq`` token ids."""
    with torch.device(device):
        model = TinyLM().to(torch.bfloat16).eval()
        ids = torch.zeros(batch, seq, dtype=torch.long)
    return model, (ids,)

# %% [markdown]
# ## 2. Capture it
# `capture(model, ids)` calls the model **once**, under a
# [`TorchFunctionMode`](https://pytorch.org/docs/stable/notes/extending.html#extending-all-torch-api-with-modes):
# every call to a torch function, tensor method or operator (`F.linear`, `x.view`, `x + y`)
# is recorded with the shapes, dtypes and **strides** of its tensors, and every module's
# `__call__` is recorded with its path. Why at the torch-function level, and not the aten
# operators below it? Because that is the last level that is the same on every device. Below
# it, PyTorch picks a device's kernels: on `meta` (and on a CPU) `F.rms_norm` and SDPA are
# *decomposed* into several small aten ops, while on an H200 each is one fused kernel. The
# capture keeps `F.rms_norm` as one call, and accelsim's lowering tables
# (`configs/lowering/eager.yaml`, `graph.yaml`) decide, per machine and execution mode, what
# each call launches.
#
# We capture the same model at two batch sizes: one sequence of 128 tokens, and 32 of them.

# %%
pd.set_option("display.max_rows", 60)
BATCHES = (1, 32)


def captured(batch):
    """The captured program of one forward pass at ``batch`` sequences of 128 tokens."""
    model, args = build(batch=batch)
    return capture(model, *args)


programs = {b: captured(b) for b in BATCHES}
small, large = programs[1], programs[32]
print(f"{len(small.program.calls)} calls recorded, {len(small.ops)} accelsim ops; "
      f"{small.macs / 1e9:.2f} GMAC at batch 1, {large.macs / 1e9:.2f} GMAC at batch 32")

# %% [markdown]
# ### The call table
# One row per recorded call: the function, the module it ran in, its first input's shape and
# strides. Running the program once on a GPU machine (`run_model`, eager) adds what the
# lowering made of each call: its **host cost class** (how expensive it is for PyTorch to
# dispatch) and how many kernels it launches.

# %%
eager_h200 = run_model("h200", small, exec_mode="eager")
lowered = eager_h200.calls.set_index("call")
rows = []
for i, c in enumerate(small.program.calls):
    first = c.inputs[0] if c.inputs else None
    rows.append({"call": c.fn, "module": c.module or "(top)",
                 "input shape": tuple(first.shape) if first else "",
                 "input strides": tuple(first.stride) if first else "",
                 "output shape": tuple(c.outputs[0].shape) if c.outputs else "",
                 "host class": lowered.loc[i, "call_class"],
                 "kernels": int(lowered.loc[i, "kernels"])})
call_table = pd.DataFrame(rows)
call_table.head(50)

# %% [markdown]
# Read the first block (rows `blocks.0...`): each `module` row is a module boundary, then its
# calls in order. `F.rms_norm` is one row, SDPA is one row: the capture did not see the
# decomposition that actually ran on `meta`.
#
# ### Views launch nothing
# `view`, `transpose`, `unbind`, `flatten`, slicing: these change a tensor's shape and strides
# and share its storage; PyTorch launches **no kernel** for them, only the host pays a couple
# of microseconds to dispatch them. The same `reshape` call is a view or a copy depending on
# the strides it is given: `x.float().reshape(...)` in `Rotary` is a view, and so is
# `a.transpose(1, 2).reshape(b, s, d)` in `Attention`. That second one is a view only because
# cuDNN writes SDPA's output in its query's memory order. The query is a transposed slice of
# the QKV projection, laid out `(batch, seq, heads, dim)`, so the transposed output is
# row-major again. Had SDPA returned a contiguous `(batch, heads, seq, dim)` tensor, this
# reshape would copy. The captured strides decide:

# %%
reshapes = call_table[call_table["call"] == "reshape"].drop_duplicates(
    ["input strides", "kernels"])
print("calls that launch no kernel:",
      call_table[call_table["kernels"] == 0]["call"].value_counts().to_dict())
reshapes.reset_index(drop=True)

# %% [markdown]
# ### The kernel list
# The calls that do launch kernels, with their kernel class and their time on the H200's
# stream. A CUDA graph replays **the same kernels**; it only removes the host's dispatch.

# %%
kernels = eager_h200.calls[eager_h200.calls["kernels"] > 0]
kernel_list = pd.DataFrame({"kernel of": kernels["layer"], "op": kernels["op"],
                            "class": kernels["kernel_class"],
                            "GPU (µs)": (kernels["gpu_s"] * 1e6).round(2),
                            "host dispatch (µs)": (kernels["host_s"] * 1e6).round(2)})
graph_h200 = run_model("h200", small, exec_mode="graph")
print(f"eager: {eager_h200.totals['kernels']} kernels from "
      f"{eager_h200.totals['framework_calls']} calls; "
      f"graph: {graph_h200.totals['kernels']} kernels")
kernel_list.head(25)

# %% [markdown]
# ### The unmodelled table
# A call that no lowering entry names is not dropped: it is costed by the stated fallback
# (`call.unmodelled`: one memory-bound kernel that reads and writes the call's own tensors)
# and **listed**, so you know which numbers to distrust. When this lab was written the rotary
# embedding's `view_as_complex`, `view_as_real` and `type_as` were listed. The fallback is an
# upper bound for the first two: in PyTorch they are views and launch nothing. If the table
# below is empty, every call of your model has a lowering entry.

# %%
unmodelled = pd.DataFrame(sorted(unmodelled_calls(small.program).items()),
                          columns=["call", "count"])
unmodelled.set_index("call")

# %% [markdown]
# ## 3. Where the time goes, part by part, on three machines
# The same two programs on an H200, an A100 and one TPU v4 chip (two TensorCores, each with four
# 128x128 systolic arrays). A GPU's `layers` table gives each call's kernel time; a TPU has no
# eager mode (XLA compiles the whole program), so accelsim maps every op onto the systolic
# arrays and reports each op's time. We use the GPUs' **graph** runs here, to compare the
# machines' own work; section 4 adds the host.
#
# Layer names are module paths, so one regular expression groups them into the parts of the
# model (the four blocks together).

# %%
MACHINES = {"H200": "h200", "A100": "a100", "TPU v4": "tpu_v4_chip"}


def part(layer):
    """The part of TinyLM a layer name belongs to (``blocks.2.attn.qkv.linear`` ->
    ``attention``)."""
    path = re.sub(r"#\d+$", "", layer).split(".")
    if path[0] == "blocks":
        path = path[2:]
    name = "rope" if path[:2] == ["attn", "rope"] else path[0]
    return {"attn": "attention", "norm1": "norms", "norm2": "norms", "norm": "norms",
            "add": "residual adds"}.get(name, name)


runs = {}
for b, wl in programs.items():
    for label, hw in MACHINES.items():
        for mode in ("eager", "graph") if label != "TPU v4" else (None,):
            runs[label, b, mode] = run_model(hw, wl, exec_mode=mode) if mode else run_model(hw, wl)

per_part = {}
for (label, b, mode), r in runs.items():
    if mode != "eager":
        t = r.layers.groupby(r.layers["layer"].map(part))["time_s"].sum() * 1e6
        per_part[b, label] = t[t > 0]
per_part = pd.DataFrame(per_part).fillna(0.0)
per_part.columns.names = ["batch", "machine"]
per_part.index.name = "part"
per_part.round(1)

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for ax, b in zip(axes, BATCHES):
    per_part[b].T.plot.barh(stacked=True, ax=ax, colormap="tab10", width=0.6, legend=False)
    ax.set_xlabel("time of one forward pass (µs), GPUs as CUDA graphs")
    ax.set_title(f"batch {b} x 128 tokens")
axes[1].legend(title="part", bbox_to_anchor=(1.01, 1), loc="upper left")
fig.tight_layout()

# %% [markdown]
# At batch 1 the GEMMs have only 128 rows and finish in a few microseconds each, so the many
# small kernels weigh as much as the matrix work: the rotary embedding alone launches ten per
# block (an fp32 copy, the complex multiply, the casts back, for q and for k), and every kernel
# pays its launch and tail however small its tensor. At batch 32 (4,096 rows) the GEMMs (the
# MLP, the attention projections, the LM head with its 32,000 x 1,024 weight) grow with the
# work, and the machines separate by their matrix throughput (dense bf16: H200 989 TFLOP/s,
# A100 312, TPU v4 chip 275) and memory bandwidth. The rotary embedding grows too: it streams
# q and k through memory in fp32 several times. Part of its time is the fallback of the
# unmodelled table (exercise 2): read the two tables together.
#
# ## 4. Eager vs CUDA graph: host dispatch vs GPU time
# In **eager** mode the Python interpreter runs `forward`, and every call goes through
# PyTorch's dispatcher before its kernel is launched: microseconds of host time per call,
# kernel or not (the `host class` column). The GPU runs a kernel only once the host has issued
# it, so when the kernels are shorter than their dispatch the GPU waits: that wait is
# **host-idle** time. A **CUDA graph** records the kernels once and replays them with one
# launch: the host cost per step almost vanishes and the GPU runs the kernels back to back.

# %%
rows = []
for (label, b, mode), r in runs.items():
    if mode is None:
        continue
    t = r.totals
    rows.append({"machine": label, "batch": b, "mode": mode, "step (µs)": t["time_s"] * 1e6,
                 "GPU busy (µs)": t["gpu_busy_s"] * 1e6,
                 "GPU waiting (µs)": t["gpu_idle_s"] * 1e6,
                 "host dispatch (µs)": t["host_busy_s"] * 1e6,
                 "tokens/s": t["tokens_per_s"]})
modes = pd.DataFrame(rows)
modes.round(1)

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
for ax, (b, grp) in zip(axes, modes.groupby("batch")):
    bars = grp.set_index(grp["machine"] + " " + grp["mode"])
    bars[["GPU busy (µs)", "GPU waiting (µs)"]].plot.barh(stacked=True, ax=ax, width=0.6,
                                                          color=["tab:blue", "tab:gray"])
    ax.set_xlabel("one forward pass (µs)")
    ax.set_ylabel("")
    ax.set_title(f"batch {b} x 128 tokens")
fig.tight_layout()

# %% [markdown]
# At batch 1 the host needs the same dispatch time whatever the GPU: eager runs the H200 and the
# A100 at almost the same speed, because neither GPU is the bottleneck. The graph shows what
# the GPUs can do (the graph's thin grey sliver is its one launch). At batch 32 the kernels outlast
# their dispatch: the host runs ahead, the queue of launched kernels hides it, and eager comes
# within a few percent of the graph.
#
# ### The timeline
# The first 400 µs of the eager pass at both batch sizes, on the H200: the host dispatching
# calls (top row of each figure; `accelsim run ... --report r.html` draws the same) and the
# GPU stream (bottom row). At batch 1 the stream has gaps: each kernel waits for the host to
# issue it. At batch 32 the stream is solid.

# %%
for b in BATCHES:
    run = runs["H200", b, "eager"]
    fig = plot_stream_timeline(run.layers, run.calls[run.calls["host_start_s"] < 400e-6])
    fig.set_size_inches(10, 2.2)
    fig.axes[0].set_xlim(0, 400)
    fig.axes[0].set_title(f"H200, eager, batch {b}: the first 400 µs of the forward pass")
    display(fig)

# %% [markdown]
# Who is the bottleneck? Compare the host's total dispatch time with the GPU's total kernel
# time: whichever is larger sets the eager step (the other hides under it).

# %%
eager = modes[modes["mode"] == "eager"].copy()
eager["bound by"] = (eager["host dispatch (µs)"] > eager["GPU busy (µs)"]).map(
    {True: "host", False: "GPU"})
eager[["machine", "batch", "host dispatch (µs)", "GPU busy (µs)", "step (µs)",
       "bound by"]].round(1)

# %% [markdown]
# ## 5. The same from the command line
# A model in a file with a factory function is all the command line needs:
# `accelsim capture FILE.py:FACTORY key=value... -o prog.json` calls the factory with the
# keys as arguments (on `meta` by default) and writes the recorded calls as a JSON program;
# `accelsim run HW prog.json` runs it on any machine. Jupyter keeps the text of every cell,
# so the model cell of section 1, under its imports, can be written to a file as it is.

# %%
workdir = Path(tempfile.mkdtemp(prefix="lab11_"))
model_cell = "".join(linecache.getlines(build.__code__.co_filename))
imports = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
(workdir / "my_model.py").write_text(imports + model_cell)


def accelsim(*args):
    """Run the ``accelsim`` command line in ``workdir``; print what it printed."""
    done = subprocess.run([sys.executable, "-m", "accelsim", *args], cwd=workdir,
                          capture_output=True, text=True)
    print(f"$ accelsim {' '.join(args)}\n{done.stdout}{done.stderr}")
    done.check_returncode()


accelsim("capture", "my_model.py:build", "batch=1", "-o", "prog.json")
accelsim("run", "h200", "prog.json", "--exec", "graph", "--top", "3", "--out", "out")
print("the model file, the program and the run's CSV files are in", workdir)

# %% [markdown]
# ## Exercises
# 1. **Where is the crossover?** Capture `build(batch=b)` for `b` in 1, 2, 4, 8, 16, 32 and plot
#    the eager and graph step times on the H200 and the A100 against the batch. At which batch
#    does eager stop being host bound on each GPU? Why earlier on the A100?
# 2. **Fix the rotary embedding.** Rewrite `Rotary` without complex numbers: split `x` into
#    halves and compute `x * cos + rotate_half(x) * sin` (Hugging Face's way). Does the
#    unmodelled table empty? How many kernels does the rotary embedding launch now, and what
#    does it cost at batch 1 in eager mode?
# 3. **Make a copy appear.** The `reshape` after SDPA is a view because SDPA's output follows
#    its query's layout. Give SDPA contiguous inputs, `q.transpose(1, 2).contiguous()` (and
#    the same for k and v). What happens to the kernel list before SDPA, and after it?
#    Predict first, then capture. Which of the two layouts would you keep, and why?
# 4. **Fuse the projections.** `qkv` is already one GEMM for Q, K and V. Do the same for the
#    MLP: one `nn.Linear(d, 2 * ffn)` and `chunk(2, dim=-1)`. What changes at batch 1 and
#    at batch 32, and why more at one than at the other?
# 5. **Longer prompts.** Capture `build(batch=1, seq=s)` for `s` in 128, 512, 2048. Which part
#    grows fastest with the sequence, and on which machine? (Causal attention does about
#    `s * s / 2` dot products per head; everything else grows with `s`.)
# 6. **A bigger model.** Change `TinyLM`'s defaults to Llama-3-8B's shape (32 layers,
#    d=4096, 32 heads, ffn=14336, vocab=128256) and repeat section 4: is batch 1 still host
#    bound? (Building it on `meta` costs nothing: no weights are allocated.)
# 7. **PyTorch's own layer.** Capture `nn.TransformerEncoderLayer(256, 4, 1024,
#    batch_first=True).eval()` on a `(1, 16, 256)` meta tensor, then the same layer with
#    `batch_first=False` on `(16, 1, 256)`. Compare the call tables and the kernel lists. In
#    inference the first runs PyTorch's fused path: one C++ call whose host class is the whole
#    layer, with the FFN's ReLU inside a GEMM's epilogue. The second runs the Python path,
#    with a copy after the QKV projection and a ReLU kernel of its own. Which path is faster in
#    eager mode at batch 1, and which at batch 64? (`accelsim/workload/torch_fused_paths.py`
#    says when PyTorch takes each.)
