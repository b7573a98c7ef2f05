# ruff: noqa: E731, B023, F821
"""Measure whole models and single operators on one H200 as PyTorch runs them.

Run on the device machine (kind ``nvidia-h200``) with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/e2e.py $OUT

Writes ``$OUT/h200_e2e.json`` (copied to ``scripts/data/``). Sections, in priority order
(a time budget, ``MEASURE_BUDGET_S``, cuts from the end; the JSON is rewritten after each
case, so a cut run keeps what it measured):

* ``host``: host-side costs. Per eager op issue (``N`` calls of one op on tiny tensors, so the
  GPU is never the bottleneck; wall time / N), per view op (no kernel), per
  ``torch.cuda.synchronize``; CUDA-graph replay of ``N`` tiny kernels for several ``N``
  (fixed + per-kernel cost).
* ``models``: whole models, written as Hugging Face's eager code runs them (RMSNorm as
  fp32 cast, pow, mean, rsqrt, mul, cast, mul; rotary embedding through ``rotate_half``;
  ``F.scaled_dot_product_attention``; ``nn.Linear``), bf16, random weights. Per case:
  ``eager_s`` (median over steps of host ``perf_counter`` from a synchronised start to
  ``torch.cuda.synchronize()`` after the step, as ``generate`` runs a step), ``graph_s``
  (same, replaying a CUDA graph of the step), and a ``torch.profiler`` trace of one eager
  step: every GPU kernel (name, duration) and the count of CPU-side aten ops.
* ``ops``: single operators timed as users call them: ``eager_s`` (per-call time of ``reps``
  calls queued back to back between CUDA events, median of 5 batches) and ``graph_s``
  (per-call time inside a CUDA graph of ``reps`` calls), with the kernels one call launches.
* ``compiled``: ``torch.compile`` of a 4-layer Llama-3-8B-shaped decoder (optional, last).
* ``hf`` (run 7): decoders built from the Hugging Face ``config.json`` files in
  ``workloads/hf/`` (Llama 3.2 1B and 3B, Qwen2.5 7B), same protocol as ``models``; run 7 was
  ``MEASURE_SET=run7 MEASURE_SECTIONS=host_classes,hf MEASURE_ROUNDS=4
  MEASURE_OUTNAME=h200_e2e_run7.json`` (133 s of device time).

Models: a Llama-3-8B-shaped decoder (32 layers, d=4096, 32 heads, 8 KV heads, FFN 14336,
vocab 128256) in prefill and decode with a static KV cache of ``context`` positions (the new
token written at ``context - 1``); GPT-2 XL (48 layers, d=1600, 25 heads, GELU-tanh FFN,
learned positions, biases, LayerNorm); a BERT-base encoder (12 layers, d=768, post-norm);
torchvision ResNet-50 and MobileNetV2 (eval, channels_last, bf16).
"""

import json
import os
import statistics
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import (  # noqa: E402
    event_time_s,
    graph_of,
    profile_kernels,
    profile_timeline,
    repeat,
    say,
    sync,
    time_op,
    time_steps,
)

BUDGET_S = float(os.environ.get("MEASURE_BUDGET_S", "480"))
QUICK = os.environ.get("MEASURE_QUICK") == "1"  # tiny shapes, CPU-safe smoke test
SECTIONS = os.environ.get("MEASURE_SECTIONS", "host,models,ops,compiled").split(",")
OUTNAME = os.environ.get("MEASURE_OUTNAME", "h200_e2e.json")
STEPS = int(os.environ.get("MEASURE_STEPS", "10"))
PROFILE = os.environ.get("MEASURE_PROFILE", "1") == "1" and os.environ.get(
    "MEASURE_ROUNDS", "0") == "0"
SHAPE_SET = os.environ.get("MEASURE_SET", "run1")
ROUNDS = int(os.environ.get("MEASURE_ROUNDS", "0"))
"""Eager protocol. 0: one block of ``STEPS`` steps per case (runs 1-3). N > 0 (run 4): the
host's dispatch speed drifts between a fast and a slow state every few seconds (a shared
VM host; see ``h200_gemm_rows_run4.json`` ``host_state``), so the eager steps of all cases of a
model are taken in interleaved rounds (5 steps per case per round, at least N rounds and 20 s),
and every case sees the same mixture of host states. Profiling is off in this protocol: after
one ``torch.profiler`` step, eager steps of the same model stay 30-80 % slower for the rest of
the process (``h200_profiler_slowdown_run4.json``: ResNet-50 batch 2, 3.26 ms before, 4.2-5.9 ms
after; a CUDA-graph capture changes nothing), so runs 2-4 time eager steps in processes that never
profiled; run 1's profiles are the attribution data."""
# (batch, context) decode and (batch, seq) prefill/encoder shapes, or CNN batches, per set:
# "run1" (runs 1 and 2) and "heldout2" (run 3: shapes and a model, GPT-2 small, never
# measured before; the held-out set of scripts/validate/validate_e2e.py --run3)
SHAPES = {
    "run1": {
        "llama_dec": [(1, 128), (1, 2048), (1, 2049), (1, 8192), (4, 1024), (16, 512),
                      (16, 2048), (16, 2049), (64, 512), (64, 2048), (128, 1024), (256, 128),
                      (256, 512)],
        "llama_pre": [(1, 128), (1, 512), (1, 2048), (1, 2047), (1, 8192), (4, 1024), (8, 2048)],
        "gpt2_small_dec": [], "gpt2_small_pre": [],
        "gpt2_dec": [(1, 256), (1, 1024), (8, 512), (32, 1024), (128, 256)],
        "gpt2_pre": [(1, 128), (1, 1024), (8, 512)],
        "bert": [(1, 128), (8, 128), (32, 128), (1, 512), (32, 512), (128, 512)],
        "cnn": [1, 8, 32, 128, 256],
        "compiled_llama": [(1, 2048), (16, 2048)], "compiled_gpt2_small_dec": [],
        "compiled_gpt2_small_pre": []},
    "heldout2": {
        "llama_dec": [(2, 4096), (8, 1000), (32, 3000), (96, 1500), (200, 700)],
        "llama_pre": [(1, 1000), (2, 3000), (1, 4096)],
        "gpt2_small_dec": [(1, 512), (16, 1024), (64, 300)],
        "gpt2_small_pre": [(1, 256), (4, 1024)],
        "gpt2_dec": [(4, 700), (64, 512)], "gpt2_pre": [(2, 256)],
        "bert": [(4, 256), (16, 384), (64, 128)],
        "cnn": [2, 16, 64],
        "compiled_llama": [(1, 2048), (16, 2048)],
        "compiled_gpt2_small_dec": [(1, 512), (16, 1024)],
        "compiled_gpt2_small_pre": [(1, 256)]},
    "heldout4": {
        "llama_dec": [(1, 300), (4, 6000), (24, 2500), (64, 1200), (160, 400)],
        "llama_pre": [(1, 1500), (4, 700), (1, 6000)],
        "gpt2_small_dec": [(2, 200), (32, 800), (128, 100)],
        "gpt2_small_pre": [(2, 512), (8, 256)],
        "gpt2_dec": [(2, 900), (16, 300), (48, 1000)], "gpt2_pre": [(1, 600), (4, 256)],
        "bert": [(2, 64), (8, 512), (32, 256)],
        "cnn": [4, 24, 48, 96],
        "compiled_llama": [], "compiled_gpt2_small_dec": [(4, 300), (64, 600)],
        "compiled_gpt2_small_pre": [(4, 128)]},
}
SHAPES["run7"] = {k: [] for k in SHAPES["heldout4"]}
SHAPES["run7"]["hf"] = {
    # Hugging Face config.json files shipped in workloads/hf/ (held out: never fitted)
    "llama3.2_1b": {"decode": [(1, 512), (8, 2048), (32, 4096), (128, 1024), (256, 300)],
                    "prefill": [(1, 1024), (4, 2048)]},
    "llama3.2_3b": {"decode": [(1, 1500), (16, 3000), (64, 800), (200, 200)],
                    "prefill": [(1, 700), (2, 4096)]},
    "qwen2.5_7b": {"decode": [(1, 2048), (4, 8000), (48, 1200), (160, 500)],
                   "prefill": [(1, 2500), (8, 512)]}}
SHAPES["run7"]["compiled_hf"] = {
    "llama3.2_1b": {"decode": [(1, 1024), (32, 2048)], "prefill": [(1, 512)]},
    "llama3.2_3b": {"decode": [(8, 1500)], "prefill": []},
    "qwen2.5_7b": {"decode": [(4, 4096)], "prefill": []}}
SHAPES["run7"]["compiled_llama"] = [(1, 2048), (16, 2048)]
"""Run 7: decoders described only by their Hugging Face ``config.json`` (``workloads/hf/``)."""
SHAPES["run7L"] = {**SHAPES["run7"], "compiled_layers": [1, 2, 4, 8, 16]}
"""Run 7L: the compiled calibration model (Llama-3-8B-shaped, batch 1, context 2048) at 1-16
layers, to split Inductor's host cost into a per-step and a per-call part (calibration)."""
SHAPES["run4"] = {k: SHAPES["heldout2"][k] + SHAPES["heldout4"][k] for k in SHAPES["heldout4"]}
SHAPES["run4"]["compiled_llama"] = [(1, 2048), (16, 2048), (4, 1000)]
"""Run 4: the run-3 shapes again under the interleaved eager protocol, and new shapes."""
SHAPES["run14"] = {k: [] for k in SHAPES["heldout4"]}
SHAPES["run14"].update({
    "llama_dec": [(3, 1800), (12, 3500), (48, 700), (100, 1000), (192, 256)],
    "llama_pre": [(1, 3000), (3, 1024), (2, 1500)],
    "gpt2_small_dec": [(8, 600), (96, 400)], "gpt2_small_pre": [(1, 1024), (16, 128)],
    "gpt2_dec": [(8, 1000), (96, 200)], "gpt2_pre": [(2, 1024)],  # GPT-2: 1024 positions
    "bert": [(4, 512), (24, 128), (96, 64)],
    "cnn": [3, 12, 40, 80]})
SHAPES["run14"]["hf"] = {
    "llama3.2_1b": {"decode": [(2, 3000), (48, 1500), (192, 600)], "prefill": [(2, 1024)]},
    "llama3.2_3b": {"decode": [(4, 2500), (96, 500)], "prefill": [(1, 3000)]},
    "qwen2.5_7b": {"decode": [(2, 6000), (24, 2000), (128, 400)], "prefill": [(4, 1024)]}}
"""Run 14 (held out, 2026-12-02): new shapes of every zoo-style model and of the Hugging Face
configs, eager and CUDA graph, interleaved eager protocol, never profiled. Its split was fixed
in scripts/data/REGISTRY.yaml before it was measured: all of it is held out, scored once at the
session's frozen model. ``MEASURE_SET=run14 MEASURE_SECTIONS=models,hf MEASURE_ROUNDS=4
MEASURE_OUTNAME=h200_e2e_run14.json``."""
SHAPES["run15"] = {k: [] for k in SHAPES["heldout4"]}
SHAPES["run15"].update({
    "llama_dec": [(2, 2500), (6, 5000), (20, 1500), (80, 600), (144, 900)],
    "llama_pre": [(1, 2500), (2, 2000)],
    "gpt2_small_dec": [(4, 900), (48, 250)], "gpt2_small_pre": [(3, 512)],
    "gpt2_dec": [(3, 700), (40, 400)], "gpt2_pre": [(1, 900)],  # GPT-2: 1024 positions
    "bert": [(6, 384), (48, 96)],
    "cnn": [6, 20, 56]})
SHAPES["run15"]["hf"] = {
    "llama3.2_1b": {"decode": [(6, 2200), (80, 900)], "prefill": [(1, 3000)]},
    "llama3.2_3b": {"decode": [(12, 1200), (160, 300)], "prefill": [(2, 768)]},
    "qwen2.5_7b": {"decode": [(8, 3000), (64, 700)], "prefill": [(1, 2048)]}}
"""Run 15 (held out, 2026-12-02): shapes no earlier run timed, of every zoo-style model and of
the Hugging Face configs, eager and CUDA graph, interleaved eager protocol, never profiled;
its split fixed in this file before it was measured (all held out), measured after the
session's model was frozen and scored once. ``MEASURE_SET=run15 MEASURE_SECTIONS=models,hf
MEASURE_ROUNDS=4 MEASURE_OUTNAME=h200_e2e_run15.json``."""
SHAPES["run16"] = {k: [] for k in SHAPES["heldout4"]}
SHAPES["run16"].update({
    "llama_dec": [(4, 3200), (10, 2800), (32, 1200), (64, 1800), (112, 500)],
    "llama_pre": [(1, 1800), (4, 700)],
    "gpt2_small_dec": [(10, 500), (64, 300)], "gpt2_small_pre": [(5, 256)],
    "gpt2_dec": [(6, 500), (24, 800)], "gpt2_pre": [(1, 600)],  # GPT-2: 1024 positions
    "bert": [(10, 256), (64, 80)],
    "cnn": [10, 28, 72]})
SHAPES["run16"]["hf"] = {
    "llama3.2_1b": {"decode": [(10, 1800), (120, 700)], "prefill": [(1, 2200)]},
    "llama3.2_3b": {"decode": [(16, 1000), (72, 800)], "prefill": [(3, 600)]},
    "qwen2.5_7b": {"decode": [(12, 2500), (40, 1200)], "prefill": [(2, 1100)]}}
"""Run 16 (held out, 2026-12-02, fifth session): shapes no earlier run timed, of every
zoo-style model and of the Hugging Face configs, same protocol as runs 14 and 15; its split
fixed in this file before it was measured (all held out), measured after the session's model
was frozen, scored once. ``MEASURE_SET=run16 MEASURE_SECTIONS=models,hf MEASURE_ROUNDS=4
MEASURE_OUTNAME=h200_e2e_run16.json``."""
SHAPES = SHAPES[SHAPE_SET]
T0 = harness.STARTED
DEV = "cuda" if harness.has_cuda() else "cpu"
CUDA = DEV == "cuda"
DT = torch.bfloat16 if CUDA else torch.float32
RESULT: dict = {"about": __doc__.split("\n\n")[0], "errors": {}, "host": {}, "models": [],
                "ops": [], "compiled": []}


def left() -> float:
    return BUDGET_S - (time.time() - T0)


def save() -> None:
    RESULT["elapsed_s"] = time.time() - T0
    harness.write_json(OUTNAME, RESULT)


def measure_compiled_profile() -> None:
    """Run 7p: one profiled ``torch.compile`` step (``profile_timeline``) of the compiled
    calibration shape (4-layer Llama-3-8B, batch 1, context 2048) and of Llama 3.2 1B
    (batch 1, context 1024) and 3B (batch 8, context 1500) decode, in a process of its own
    (profiling slows the host for the rest of the process): the kernels Inductor launches,
    the GPU's busy time and what the host does per launch. ``block_s``: 30 steps timed before
    profiling (one block: the host state of that moment)."""
    allow_recompiles()
    cases = [("llama3_8b_4layers", lambda: build(Llama, layers=4), 1, 2048),
             ("llama3.2_1b", lambda: _hf_model("llama3.2_1b"), 1, 1024),
             ("llama3.2_3b", lambda: _hf_model("llama3.2_3b"), 8, 1500)]
    todo = []
    for name, make, batch, ctx in cases:
        model = make()
        cm = torch.compile(model, dynamic=False)
        with torch.inference_mode():
            step = step_of(cm, "decode", 1 if QUICK else batch, 64 if QUICK else ctx,
                           len(model.layers), model.layers[0].kv, model.dh)
            rec = {"model": name, "mode": "decode", "batch": batch, "context": ctx,
                   "block": time_steps(step, 3 if QUICK else 30, warm=3 if QUICK else 12)}
        todo.append((rec, step))
        say("compiled", name, batch, ctx, f"{rec['block']['median_s'] * 1e3:.3f} ms")
    for rec, step in todo:  # profile only after every case is timed
        with torch.inference_mode():
            rec["profile"] = profile_timeline(step)
        RESULT["compiled"].append(rec)
        save()


# ----------------------------------------------------------------------------- host costs
def measure_host() -> None:
    n = 200 if QUICK else 2000
    a = torch.randn(64, device=DEV, dtype=DT)
    b = torch.randn(64, device=DEV, dtype=DT)
    w = torch.randn(64, 64, device=DEV, dtype=DT)
    x2 = torch.randn(8, 64, device=DEV, dtype=DT)
    lin = nn.Linear(64, 64, bias=False, device=DEV, dtype=DT)
    linb = nn.Linear(64, 64, bias=True, device=DEV, dtype=DT)
    ln = nn.LayerNorm(64, device=DEV, dtype=DT)
    q = torch.randn(1, 4, 16, 64, device=DEV, dtype=DT)
    idx = torch.arange(8, device=DEV)
    table = torch.randn(100, 64, device=DEV, dtype=DT)
    ops = {
        "add": lambda: torch.add(a, b),
        "mul_scalar": lambda: a * 2.0,
        "silu": lambda: F.silu(a),
        "to_float": lambda: a.float(),
        "mean_lastdim": lambda: x2.mean(-1, keepdim=True),
        "rsqrt": lambda: torch.rsqrt(a),
        "cat": lambda: torch.cat((a, b), dim=-1),
        "copy_slice": lambda: a[:32].copy_(b[:32]),
        "mm": lambda: torch.mm(x2, w),
        "linear": lambda: lin(x2),
        "linear_bias": lambda: linb(x2),
        "layer_norm": lambda: ln(x2),
        "softmax": lambda: torch.softmax(x2, -1),
        "sdpa": lambda: F.scaled_dot_product_attention(q, q, q),
        "embedding": lambda: F.embedding(idx, table),
        "view": lambda: x2.view(2, 4, 64),
        "transpose": lambda: q.transpose(1, 2),
        "reshape_contig": lambda: x2.reshape(-1),
        "module_call_identity": (lambda m: (lambda: m(x2)))(nn.Identity()),
    }
    per_op = {}
    for name, fn in ops.items():
        harness.warm_up(fn, 50)
        issue, total = harness.host_calls_s(fn, n)
        per_op[name] = {"issue_s": issue, "issue_plus_drain_s": total}
    RESULT["host"]["eager_op"] = per_op
    # synchronize round trip on an idle device
    ts = []
    for _ in range(200):
        t = time.perf_counter()
        sync()
        ts.append(time.perf_counter() - t)
    RESULT["host"]["sync_idle_s"] = statistics.median(ts)
    if CUDA:
        graphs = {}
        for nk in (1, 10, 100, 1000):
            fn = lambda: [torch.add(a, b, out=a) for _ in range(nk)]
            rep = graph_of(fn)
            st = time_steps(rep, 30, warm=3)
            graphs[str(nk)] = st
            # host issue of the replay alone (no sync)
            graphs[str(nk)]["replay_issue_s"] = harness.host_calls_s(rep, 20)[0]
        RESULT["host"]["graph_tiny_kernels"] = graphs
    save()


def measure_host_classes() -> None:
    """Host dispatch cost per call class, interleaved over rounds, two clocks per round:
    host ``perf_counter`` over ``n`` issued calls (``issue_s``) and CUDA events around the
    same calls (``event_s``: the GPU waits for the host, so it measures the issue rate)."""
    n, rounds = (50, 2) if QUICK else (300, 5)
    cl = torch.channels_last
    a = torch.randn(1, 4096, device=DEV, dtype=DT)
    b = torch.randn(1, 4096, device=DEV, dtype=DT)
    x4 = torch.randn(1, 64, 28, 28, device=DEV, dtype=DT).to(memory_format=cl)
    lin = nn.Linear(4096, 4096, bias=False, device=DEV, dtype=DT)
    linb = nn.Linear(1600, 1600, bias=True, device=DEV, dtype=DT)
    ln = nn.LayerNorm(4096, device=DEV, dtype=DT)
    emb = nn.Embedding(1000, 4096, device=DEV, dtype=DT)
    ids = torch.randint(0, 1000, (1, 1), device=DEV)
    q = torch.randn(1, 32, 1, 128, device=DEV, dtype=DT)
    kv = torch.randn(1, 8, 512, 128, device=DEV, dtype=DT)
    knew = torch.randn(1, 8, 1, 128, device=DEV, dtype=DT)
    conv = nn.Conv2d(64, 64, 3, padding=1, bias=False).to(DEV, DT).to(memory_format=cl).eval()
    bn = nn.BatchNorm2d(64).to(DEV, DT).eval()
    ident = nn.Identity()
    calls = {
        "module": lambda: ident(a),
        "view": lambda: a.view(1, 32, 128),
        "transpose": lambda: q.transpose(1, 2),
        "add": lambda: a + b, "mul_scalar": lambda: a * 2.0, "silu": lambda: F.silu(a),
        "to_float": lambda: a.float(), "rsqrt": lambda: torch.rsqrt(a), "neg": lambda: -a,
        "pow_scalar": lambda: a.pow(2),
        "mean": lambda: a.mean(-1, keepdim=True), "cat": lambda: torch.cat((a, b), -1),
        "slice_copy": lambda: kv.__setitem__((slice(None), slice(None), slice(7, 8)), knew),
        "linear": lambda: lin(a), "linear_bias": lambda: linb(a[:, :1600]),
        "sdpa": lambda: F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True),
        "layer_norm": lambda: ln(a), "softmax": lambda: torch.softmax(a, -1),
        "embedding": lambda: emb(ids), "conv": lambda: conv(x4), "batch_norm": lambda: bn(x4),
        "relu_4d": lambda: F.relu(x4), "add_4d": lambda: x4 + x4,
        "maxpool": lambda: F.max_pool2d(x4, 3, 2, 1),
        "avgpool": lambda: F.adaptive_avg_pool2d(x4, 1),
        "rms_norm_fused": lambda: F.rms_norm(a, (4096,), ln.weight, 1e-5),
    }
    res = {k: {"issue_s": [], "event_s": []} for k in calls}
    with torch.inference_mode():
        for fn in calls.values():
            harness.warm_up(fn, 20)
        for _ in range(rounds):
            for name, fn in calls.items():
                res[name]["issue_s"].append(harness.host_calls_s(fn, n)[0])
                if CUDA:
                    res[name]["event_s"].append(event_time_s(repeat(fn, n), n))
    RESULT["host"]["call_classes"] = {
        k: {"issue_s": statistics.median(v["issue_s"]),
            "event_s": statistics.median(v["event_s"]) if v["event_s"] else None,
            "rounds_issue_s": v["issue_s"]} for k, v in res.items()}
    save()


# ----------------------------------------------------------------------------- models
def build(ctor, *args, **kw) -> nn.Module:
    """Construct a model directly on the device in the measurement dtype (random weights)."""
    prev = torch.get_default_dtype()
    torch.set_default_dtype(DT)
    try:
        with torch.device(DEV):
            return ctor(*args, **kw).eval()
    finally:
        torch.set_default_dtype(prev)


class RMSNorm(nn.Module):
    """Hugging Face LlamaRMSNorm."""

    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = 1e-5

    def forward(self, x):
        dtype = x.dtype
        h = x.to(torch.float32)
        var = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(var + self.eps)
        return self.weight * h.to(dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaLayer(nn.Module):
    def __init__(self, d, h, kv, f, qkv_bias=False):
        super().__init__()
        self.h, self.kv, self.dh = h, kv, d // h
        self.q_proj = nn.Linear(d, h * self.dh, bias=qkv_bias)
        self.k_proj = nn.Linear(d, kv * self.dh, bias=qkv_bias)
        self.v_proj = nn.Linear(d, kv * self.dh, bias=qkv_bias)
        self.o_proj = nn.Linear(h * self.dh, d, bias=False)
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)
        self.input_layernorm = RMSNorm(d)
        self.post_attention_layernorm = RMSNorm(d)

    def forward(self, x, cos, sin, cache, pos):
        b, s, d = x.shape
        r = x
        x = self.input_layernorm(x)
        q = self.q_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv, self.dh).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv, self.dh).transpose(1, 2)
        cos_, sin_ = cos.unsqueeze(1), sin.unsqueeze(1)
        q = (q * cos_) + (rotate_half(q) * sin_)
        k = (k * cos_) + (rotate_half(k) * sin_)
        if cache is not None:  # decode: write the new position, attend to the whole cache
            kc, vc = cache
            kc[:, :, pos:pos + s] = k
            vc[:, :, pos:pos + s] = v
            k, v = kc, vc
        a = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None and s > 1,
                                           enable_gqa=True)
        a = a.transpose(1, 2).reshape(b, s, d)
        x = r + self.o_proj(a)
        r = x
        x = self.post_attention_layernorm(x)
        x = self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return r + x


class Llama(nn.Module):
    def __init__(self, layers=32, d=4096, h=32, kv=8, f=14336, vocab=128256, qkv_bias=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(LlamaLayer(d, h, kv, f, qkv_bias) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.dh = d // h
        inv = 1.0 / (500000.0 ** (torch.arange(0, self.dh, 2).float() / self.dh))
        self.register_buffer("inv_freq", inv, persistent=False)

    def rope(self, pos_ids):
        # Hugging Face LlamaRotaryEmbedding: outer product in fp32, cat, cos/sin, cast
        freqs = (self.inv_freq[None, :, None].float() @ pos_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(DT), emb.sin().to(DT)

    def forward(self, ids, pos_ids, caches=None, pos=0):
        x = self.embed_tokens(ids)
        cos, sin = self.rope(pos_ids)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, None if caches is None else caches[i], pos)
        x = self.norm(x)
        return self.lm_head(x[:, -1:, :])


class GPT2Block(nn.Module):
    def __init__(self, d, h, f):
        super().__init__()
        self.h, self.dh = h, d // h
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, f)
        self.mlp_proj = nn.Linear(f, d)

    def forward(self, x, cache, pos):
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q = q.view(b, s, self.h, self.dh).transpose(1, 2)
        k = k.view(b, s, self.h, self.dh).transpose(1, 2)
        v = v.view(b, s, self.h, self.dh).transpose(1, 2)
        if cache is not None:
            kc, vc = cache
            kc[:, :, pos:pos + s] = k
            vc[:, :, pos:pos + s] = v
            k, v = kc, vc
        a = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None and s > 1)
        x = x + self.c_proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    def __init__(self, layers=48, d=1600, h=25, f=6400, vocab=50257, positions=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.h = nn.ModuleList(GPT2Block(d, h, f) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids, pos_ids, caches=None, pos=0):
        x = self.wte(ids) + self.wpe(pos_ids)
        for i, blk in enumerate(self.h):
            x = blk(x, None if caches is None else caches[i], pos)
        x = self.ln_f(x[:, -1:, :])
        return F.linear(x, self.wte.weight)  # tied LM head


class BertLayer(nn.Module):
    def __init__(self, d, h, f):
        super().__init__()
        self.h, self.dh = h, d // h
        self.query, self.key, self.value = (nn.Linear(d, d) for _ in range(3))
        self.attn_out = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.inter = nn.Linear(d, f)
        self.out = nn.Linear(f, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        b, s, d = x.shape
        sh = lambda t: t.view(b, s, self.h, self.dh).transpose(1, 2)
        a = F.scaled_dot_product_attention(sh(self.query(x)), sh(self.key(x)), sh(self.value(x)))
        x = self.ln1(x + self.attn_out(a.transpose(1, 2).reshape(b, s, d)))
        return self.ln2(x + self.out(F.gelu(self.inter(x))))


class Bert(nn.Module):
    def __init__(self, layers=12, d=768, h=12, f=3072, vocab=30522, positions=512):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(positions, d)
        self.token_type = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList(BertLayer(d, h, f) for _ in range(layers))

    def forward(self, ids, pos_ids, tt):
        x = self.ln(self.word(ids) + self.token_type(tt) + self.pos(pos_ids))
        for layer in self.layers:
            x = layer(x)
        return x


PENDING: list = []
"""(record, step) of the cases whose eager steps wait for :func:`flush_eager`."""


def run_case(rec: dict, step, steps: int) -> None:
    """Eager timing, graph timing and one profiled eager step for one case (with
    ``MEASURE_ROUNDS``, the eager timing is deferred to :func:`flush_eager`)."""
    with torch.inference_mode():
        if ROUNDS:
            PENDING.append((rec, step))
        else:
            rec["eager"] = time_steps(step, steps)
        if CUDA:
            try:
                rec["graph"] = time_steps(graph_of(step), steps)
            except Exception as e:  # noqa: BLE001
                rec["graph_error"] = repr(e)[:300]
        if PROFILE:
            rec["profile"] = profile_kernels(step)
    RESULT["models"].append(rec)
    say(f"{rec['model']:<12} {rec['mode']:<8} b={rec['batch']:<4} s={rec['seq']:<5} "
        f"eager {rec.get('eager', {}).get('median_s', float('nan')) * 1e3:8.3f} ms  graph "
        f"{rec.get('graph', {}).get('median_s', float('nan')) * 1e3:8.3f} ms  "
        f"kernels {len(rec.get('profile', {}).get('kernels', []))}  [{time.time() - T0:.0f}s]")
    save()


def flush_eager(min_s: float = 20.0, key: str = "eager", max_rounds: int = 60) -> None:
    """Eager steps of every pending case in interleaved rounds (see :data:`ROUNDS`), stored
    under ``key`` (``compiled``: the compiled steps of run 7)."""
    if not PENDING:
        return
    rounds, t0 = 0, time.time()
    per = {id(rec): [] for rec, _ in PENDING}
    with torch.inference_mode():
        while rounds < ROUNDS or (time.time() - t0 < min_s and rounds < max_rounds):
            for rec, step in PENDING:
                per[id(rec)].append(time_steps(step, 5, warm=1)["all_s"])
            rounds += 1
            if left() < 60:
                break
    for rec, _ in PENDING:
        blocks = per[id(rec)]
        flat = [t for b in blocks for t in b]
        rec[key] = {"median_s": statistics.median(flat), "min_s": min(flat),
                        "steps": len(flat), "all_s": flat, "rounds": rounds,
                        "round_medians_s": [statistics.median(b) for b in blocks],
                        "protocol": "interleaved"}
        say(f"  {key} {rec['model']:<12} {rec['mode']:<8} b={rec['batch']:<4} "
            f"s={rec['seq']:<5} {rec[key]['median_s'] * 1e3:8.3f} ms  "
            f"({rounds} rounds, {time.time() - t0:.0f}s)")
    PENDING.clear()
    save()


def decoder_cases(name: str, model: nn.Module, kv_heads: int, dh: int, decode, prefill,
                  steps: int) -> None:
    n_layers = len(model.layers if hasattr(model, "layers") else model.h)
    for batch, ctx in decode:
        if left() < 150:
            break
        try:
            with torch.inference_mode():
                caches = [(torch.randn(batch, kv_heads, ctx, dh, device=DEV, dtype=DT),
                           torch.randn(batch, kv_heads, ctx, dh, device=DEV, dtype=DT))
                          for _ in range(n_layers)]
                ids = torch.randint(0, 1000, (batch, 1), device=DEV)
                pos_ids = torch.full((batch, 1), ctx - 1, device=DEV)
            step = lambda m=model, i=ids, p=pos_ids, c=caches, x=ctx: m(i, p, c, x - 1)
            run_case({"model": name, "mode": "decode", "batch": batch, "seq": 1,
                      "context": ctx}, step, steps)
            del caches
        except Exception as e:  # noqa: BLE001
            RESULT["errors"][f"{name}_decode_{batch}_{ctx}"] = traceback.format_exc()[-800:]
            say("ERROR", name, batch, ctx, repr(e)[:200])
        torch.cuda.empty_cache() if CUDA else None
    flush_eager()
    for batch, seq in prefill:
        if left() < 150:
            break
        try:
            ids = torch.randint(0, 1000, (batch, seq), device=DEV)
            pos_ids = torch.arange(seq, device=DEV)[None].expand(batch, seq)
            step = lambda m=model, i=ids, p=pos_ids: m(i, p)
            run_case({"model": name, "mode": "prefill", "batch": batch, "seq": seq,
                      "context": seq}, step, max(3, steps // 3))
        except Exception as e:  # noqa: BLE001
            RESULT["errors"][f"{name}_prefill_{batch}_{seq}"] = traceback.format_exc()[-800:]
            say("ERROR", name, batch, seq, repr(e)[:200])
        torch.cuda.empty_cache() if CUDA else None
    flush_eager()


def measure_models() -> None:
    steps = 3 if QUICK else STEPS
    if QUICK:
        llama = build(Llama, layers=2, d=256, h=8, kv=2, f=512, vocab=1000)
    else:
        llama = build(Llama)
    dec = [(1, 64), (2, 33)] if QUICK else SHAPES["llama_dec"]
    pre = [(1, 32)] if QUICK else SHAPES["llama_pre"]
    decoder_cases("llama3_8b", llama, llama.layers[0].kv, llama.dh, dec, pre, steps)
    del llama
    torch.cuda.empty_cache() if CUDA else None
    if SHAPES["gpt2_small_dec"] or SHAPES["gpt2_small_pre"]:
        gpt = build(GPT2, layers=12, d=768, h=12, f=3072)
        decoder_cases("gpt2_small", gpt, 12, 64, SHAPES["gpt2_small_dec"],
                      SHAPES["gpt2_small_pre"], steps)
        del gpt
    gpt = build(GPT2, layers=2, d=200, h=5, f=800, vocab=1000, positions=128) if QUICK \
        else build(GPT2)
    heads, dh = gpt.h[0].h, gpt.h[0].dh
    dec = [(1, 40)] if QUICK else SHAPES["gpt2_dec"]
    pre = [(1, 32)] if QUICK else SHAPES["gpt2_pre"]
    decoder_cases("gpt2_xl", gpt, heads, dh, dec, pre, steps)
    del gpt
    bert = build(Bert, layers=2, d=128, h=4, f=256, vocab=1000, positions=64) if QUICK \
        else build(Bert)
    for batch, seq in ([(2, 16)] if QUICK else SHAPES["bert"]):
        if left() < 150:
            break
        ids = torch.randint(0, 1000, (batch, seq), device=DEV)
        pos = torch.arange(seq, device=DEV)[None].expand(batch, seq)
        tt = torch.zeros_like(ids)
        run_case({"model": "bert_base", "mode": "encoder", "batch": batch, "seq": seq,
                  "context": seq}, lambda m=bert, i=ids, p=pos, t=tt: m(i, p, t), steps)
    flush_eager()
    del bert
    import torchvision

    for name, ctor in (("resnet50", torchvision.models.resnet50),
                       ("mobilenet_v2", torchvision.models.mobilenet_v2)):
        net = ctor().to(DEV, DT).eval().to(memory_format=torch.channels_last)
        for batch in ([2] if QUICK else SHAPES["cnn"]):
            if left() < 150:
                break
            x = torch.randn(batch, 3, 224, 224, device=DEV, dtype=DT).to(
                memory_format=torch.channels_last)
            run_case({"model": name, "mode": "inference", "batch": batch, "seq": 224,
                      "context": 0}, lambda m=net, i=x: m(i), steps)
        flush_eager()
        del net


def step_of(model, kind: str, batch: int, n: int, n_layers: int, kv: int, dh: int):
    """One decode step (KV caches of ``n`` positions, the new token at ``n - 1``) or one
    prefill of ``n`` tokens of ``model``, as a no-argument callable with its inputs bound."""
    if kind == "decode":
        caches = [(torch.randn(batch, kv, n, dh, device=DEV, dtype=DT),
                   torch.randn(batch, kv, n, dh, device=DEV, dtype=DT)) for _ in range(n_layers)]
        ids = torch.randint(0, 1000, (batch, 1), device=DEV)
        pos_ids = torch.full((batch, 1), n - 1, device=DEV)
        return lambda: model(ids, pos_ids, caches, n - 1)
    ids = torch.randint(0, 1000, (batch, n), device=DEV)
    pos_ids = torch.arange(n, device=DEV)[None].expand(batch, n)
    return lambda: model(ids, pos_ids)


def allow_recompiles(limit: int = 64) -> None:
    """Let Dynamo keep one static graph per shape and model (its default cache of 8 graphs per
    code object would fall back to eager silently once several models share ``forward``)."""
    import torch._dynamo

    for knob in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, limit)


def _hf_model(name: str) -> nn.Module:
    """The Llama-architecture decoder of ``workloads/hf/NAME.json`` (random weights)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workloads", "hf")
    with open(os.path.join(root, name + ".json")) as f:
        c = json.load(f)
    dims = dict(layers=c["num_hidden_layers"], d=c["hidden_size"], h=c["num_attention_heads"],
                kv=c.get("num_key_value_heads", c["num_attention_heads"]),
                f=c["intermediate_size"], vocab=c["vocab_size"],
                qkv_bias=c.get("attention_bias", c.get("model_type") == "qwen2"))
    if QUICK:
        dims.update(layers=2, d=256, h=8, kv=2, f=512, vocab=1000)
    model = build(Llama, **dims)
    if c.get("tie_word_embeddings"):
        model.lm_head.weight = model.embed_tokens.weight
    return model


def measure_compiled_hf() -> None:
    """Run 7: ``torch.compile`` (default mode, ``dynamic=False``: one static graph per shape)
    of the ``workloads/hf/`` decoders and of the 4-layer Llama calibration shapes. Every shape
    of every model is compiled and warmed first (all models stay on the GPU), then all cases
    of all models are timed together in interleaved rounds (5 steps per case per round, for at
    least 40 s), as the eager protocol does: the steps are host-bound, so a block of steps
    would carry the host's fast/slow state of that moment (a first try that timed each model's
    cases for 1-5 s measured the same per-call host cost 1.8x apart between models)."""
    allow_recompiles()
    plan = [("llama3_8b_4layers", lambda: build(Llama, layers=4),
             {"decode": SHAPES.get("compiled_llama", []), "prefill": []})]
    if "compiled_layers" in SHAPES:  # run 7L: the calibration model at other depths only
        plan = [(f"llama3_8b_{n}layers", lambda n=n: build(Llama, layers=n),
                 {"decode": [(1, 2048)], "prefill": []}) for n in SHAPES["compiled_layers"]]
    else:
        plan += [(n, lambda n=n: _hf_model(n), sh)
                 for n, sh in SHAPES.get("compiled_hf", {}).items()]
    for name, make, shapes in plan:
        if left() < 150:
            break
        model = make()
        cm = torch.compile(model, dynamic=False)
        n_layers, kv, dh = len(model.layers), model.layers[0].kv, model.dh
        for kind in ("decode", "prefill"):
            for batch, n in ([(1, 64)] if QUICK else shapes[kind]):
                if left() < 120:
                    break
                try:
                    with torch.inference_mode():
                        step = step_of(cm, kind, batch, n, n_layers, kv, dh)
                        t = time.perf_counter()
                        harness.warm_up(step, 3 if QUICK else 12)
                    rec = {"model": name, "compile_mode": "default", "dynamic": False,
                           "mode": kind, "batch": batch, "context": n,
                           "seq": 1 if kind == "decode" else n,
                           "compile_and_warm_s": time.perf_counter() - t}
                    PENDING.append((rec, step))
                    RESULT["compiled"].append(rec)
                    say("compiled", name, kind, batch, n, f"{rec['compile_and_warm_s']:.0f}s")
                except Exception:  # noqa: BLE001
                    RESULT["errors"][f"compiled_{name}_{kind}_{batch}_{n}"] = \
                        traceback.format_exc()[-800:]
    flush_eager(min_s=5.0 if QUICK else 40.0, key="compiled", max_rounds=10**6)
    counters = torch._dynamo.utils.counters
    RESULT["host"]["dynamo"] = {k: dict(counters[k]) for k in ("stats", "graph_break")
                                if k in counters}
    save()


def measure_hf_models() -> None:
    """Run 7: Llama-architecture decoders built from the ``config.json`` files in
    ``workloads/hf/`` (the same files ``accelsim run h200 workloads/hf/NAME.json`` reads):
    RMSNorm, rotary, GQA, SwiGLU; q/k/v biases where the config has them (Qwen2)."""
    steps = 3 if QUICK else STEPS
    for name, shapes in SHAPES.get("hf", {}).items():
        if left() < 150:
            break
        model = _hf_model(name)
        decoder_cases(name, model, model.layers[0].kv, model.dh,
                      [(1, 64)] if QUICK else shapes["decode"],
                      [(1, 32)] if QUICK else shapes["prefill"], steps)
        del model
        torch.cuda.empty_cache() if CUDA else None


# ----------------------------------------------------------------------------- single ops
def conv_cases():
    # (label, N, C, H, K, R, stride, groups)
    base = [("stem7x7", 3, 224, 64, 7, 2, 1), ("1x1_256_64_56", 256, 56, 64, 1, 1, 1),
            ("1x1_64_256_56", 64, 56, 256, 1, 1, 1), ("1x1_1024_256_14", 1024, 14, 256, 1, 1, 1),
            ("1x1_2048_512_7", 2048, 7, 512, 1, 1, 1), ("3x3_64_56", 64, 56, 64, 3, 1, 1),
            ("3x3_256_14", 256, 14, 256, 3, 1, 1), ("3x3_128_s2_56", 128, 56, 128, 3, 2, 1),
            ("dw3x3_32_112", 32, 112, 32, 3, 1, 32), ("dw3x3_144_56", 144, 56, 144, 3, 1, 144),
            ("dw3x3_960_7", 960, 7, 960, 3, 1, 960), ("dw3x3_s2_96_112", 96, 112, 96, 3, 2, 96),
            ("grp32_3x3_128_56", 128, 56, 128, 3, 1, 32),
            ("grp32_3x3_512_14", 512, 14, 512, 3, 1, 32),
            ("1x1_320_1280_7", 320, 7, 1280, 1, 1, 1)]
    for n in (1, 32):
        for label, c, h, k, r, st, g in base:
            yield f"conv_{label}_n{n}", n, c, h, k, r, st, g


def measure_ops() -> None:
    reps = 3 if QUICK else 20
    small = QUICK
    for label, n, c, h, k, r, st, g in conv_cases():
        if left() < 45:
            return
        if small and len(RESULT["ops"]) >= 4:
            break
        try:
            with torch.inference_mode():
                x = harness.laid_out(torch.randn(n, c, h, h, device=DEV, dtype=DT),
                                     "channels_last")
                conv = nn.Conv2d(c, k, r, stride=st, padding=r // 2, groups=g, bias=False)
                conv = conv.to(DEV, DT).to(memory_format=torch.channels_last).eval()
                rec = {"op": "conv2d", "case": label, "n": n, "c": c, "h": h, "k": k, "r": r,
                       "stride": st, "groups": g}
                rec.update(time_op(lambda: conv(x), reps))
            RESULT["ops"].append(rec)
        except Exception as e:  # noqa: BLE001
            RESULT["errors"][label] = repr(e)[:300]
    save()
    # memory-bound and short ops (rows x cols), bf16
    shapes = [(1, 4096), (8, 4096), (64, 4096), (512, 4096), (4096, 4096), (16384, 4096),
              (2048, 14336), (8192, 14336)]
    if small:
        shapes = [(4, 64)]
    for rows, cols in shapes:
        if left() < 30:
            break
        with torch.inference_mode():
            a = torch.randn(rows, cols, device=DEV, dtype=DT)
            b = torch.randn(rows, cols, device=DEV, dtype=DT)
            w = torch.ones(cols, device=DEV, dtype=DT)
            ln = nn.LayerNorm(cols, device=DEV, dtype=DT)
            rms = RMSNorm(cols).to(DEV, DT)
            fns = {"add": lambda: a + b, "mul": lambda: a * b, "silu": lambda: F.silu(a),
                   "gelu_tanh": lambda: F.gelu(a, approximate="tanh"),
                   "layernorm": lambda: ln(a), "rmsnorm_hf": lambda: rms(a),
                   "rmsnorm_fused": lambda: F.rms_norm(a, (cols,), w, 1e-5),
                   "softmax": lambda: torch.softmax(a, -1), "copy": lambda: a.clone()}
            for name, fn in fns.items():
                try:
                    rec = {"op": name, "case": f"{name}_{rows}x{cols}", "rows": rows, "cols": cols}
                    rec.update(time_op(fn, reps))
                    RESULT["ops"].append(rec)
                except Exception as e:  # noqa: BLE001
                    RESULT["errors"][f"{name}_{rows}x{cols}"] = repr(e)[:300]
    save()
    # CNN glue kernels
    for n in ((2,) if small else (1, 32)):
        with torch.inference_mode():
            cl = "channels_last"
            x = harness.laid_out(torch.randn(n, 64, 112, 112, device=DEV, dtype=DT), cl)
            y = harness.laid_out(torch.randn(n, 256, 56, 56, device=DEV, dtype=DT), cl)
            z = harness.laid_out(torch.randn(n, 2048, 7, 7, device=DEV, dtype=DT), cl)
            bn = nn.BatchNorm2d(64).to(DEV, DT).eval()
            fns = {"batchnorm_64_112": lambda: bn(x), "relu_64_112": lambda: F.relu(x),
                   "relu_inplace_256_56": lambda: F.relu_(y), "add_256_56": lambda: y + y,
                   "maxpool3x3s2_64_112": lambda: F.max_pool2d(x, 3, 2, 1),
                   "avgpool_2048_7": lambda: F.adaptive_avg_pool2d(z, 1)}
            for name, fn in fns.items():
                rec = {"op": name.split("_")[0], "case": f"{name}_n{n}", "n": n}
                rec.update(time_op(fn, reps))
                RESULT["ops"].append(rec)
    save()


def compiled_cases(name: str, model: nn.Module, n_layers: int, kv: int, dh: int,
                   dec: list, pre: list) -> None:
    """torch.compile (default mode: Inductor, no CUDA graphs) decode and prefill steps."""
    cm = torch.compile(model)
    for kind, shapes in (("decode", dec), ("prefill", pre)):
        for batch, n in shapes:
            if left() < 60:
                return
            try:
                with torch.inference_mode():
                    step = step_of(cm, kind, batch, n, n_layers, kv, dh)
                    t = time.perf_counter()
                    st = time_steps(step, 3 if QUICK else 30, warm=3 if QUICK else 12)
                    rec = {"model": name, "compile_mode": "default", "mode": kind,
                           "batch": batch, "context": n, "seq": 1 if kind == "decode" else n,
                           "compiled": st, "compile_and_warm_s": time.perf_counter() - t}
                    if PROFILE:
                        rec["profile"] = profile_kernels(step)
                    elif PROFILE_LAST:
                        PROFILE_LATER.append((rec, step))
                RESULT["compiled"].append(rec)
                say("compiled", name, kind, batch, n, st["median_s"] * 1e3, "ms")
                save()
            except Exception:  # noqa: BLE001
                RESULT["errors"][f"compiled_{name}_{kind}_{batch}_{n}"] = \
                    traceback.format_exc()[-800:]


PROFILE_LAST = os.environ.get("MEASURE_PROFILE_LAST") == "1"
"""Profile the compiled steps after every compiled step has been timed (profiling slows the
host for the rest of the process; see :data:`ROUNDS`)."""
PROFILE_LATER: list = []


def measure_compiled() -> None:
    if left() < 120 or QUICK and not CUDA:
        return
    llama = build(Llama, layers=4)
    compiled_cases("llama3_8b_4layers", llama, 4, 8, 128, SHAPES["compiled_llama"], [])
    del llama
    if SHAPES["compiled_gpt2_small_dec"] or SHAPES["compiled_gpt2_small_pre"]:
        gpt = build(GPT2, layers=12, d=768, h=12, f=3072)
        compiled_cases("gpt2_small", gpt, 12, 12, 64, SHAPES["compiled_gpt2_small_dec"],
                       SHAPES["compiled_gpt2_small_pre"])
    for rec, step in PROFILE_LATER:
        try:
            with torch.inference_mode():
                rec["profile"] = profile_kernels(step)
        except Exception as e:  # noqa: BLE001
            rec["profile_error"] = repr(e)[:300]
    save()


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    if CUDA:
        RESULT["device"] = harness.device_info()
    sections = {"host": measure_host, "host_classes": measure_host_classes,
                "models": measure_models, "ops": measure_ops, "compiled": measure_compiled,
                "hf": measure_hf_models, "compiled_hf": measure_compiled_hf,
                "compiled_profile": measure_compiled_profile}
    harness.run_sections([(sections[s].__name__, sections[s]) for s in SECTIONS], RESULT, save,
                   budget_s=BUDGET_S - 20, keep=False)


if __name__ == "__main__":
    main()
