"""Probe (evidence only, nothing fitted): does run 11's protocol move eager per-call times?

Run 11 (``measure/single_ops.py``) profiled every case (``harness.profile_kernels``) in
the process that timed the next one; README "Why run 4 exists" found one ``torch.profiler``
step slows eager dispatch 30-80 % for the rest of a process. This times a few of run 11's
calls eager back to back (``harness.time_op``'s eager half: CUDA events around 20 calls,
median of 5) and by host clock (300 calls), in interleaved rounds, in a process that has not
profiled, then again after one profiled call. Prints JSON.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

DEV, DT = "cuda", torch.bfloat16


def event_per_call_s(fn, n: int = 20) -> float:
    return harness.event_time_s(harness.repeat(fn, n), n)


def host_per_call_s(fn, n: int = 300) -> float:
    return harness.host_calls_s(fn, n)[0]


def cases() -> dict:
    lin = nn.Linear(4096, 4096, bias=True, device=DEV, dtype=DT)
    x1 = torch.randn(1, 4096, device=DEV, dtype=DT)
    w = torch.randn(4096, 4096, device=DEV, dtype=DT)
    conv = nn.Conv2d(64, 128, 3, padding=1, bias=False).to(DEV, DT).eval()
    conv = conv.to(memory_format=torch.channels_last)
    xc = torch.randn(1, 64, 56, 56, device=DEV, dtype=DT).to(memory_format=torch.channels_last)
    ln = nn.LayerNorm(1024, device=DEV, dtype=DT)
    g = torch.ones(1024, device=DEV, dtype=DT)
    xr = torch.randn(128, 1024, device=DEV, dtype=DT)
    q = torch.randn(1, 32, 512, 128, device=DEV, dtype=DT)
    return {"nn.Linear 1x4096x4096": lambda: lin(x1), "x @ W 1x4096x4096": lambda: x1 @ w,
            "nn.Conv2d 64->128 56 n1 cl": lambda: conv(xc), "nn.LayerNorm 128x1024": lambda: ln(xr),
            "F.rms_norm 128x1024": lambda: F.rms_norm(xr, (1024,), g, 1e-5),
            "torch.softmax 128x1024": lambda: torch.softmax(xr, -1),
            "F.gelu 128x1024": lambda: F.gelu(xr), "x + y 128x1024": lambda: xr + xr,
            "sdpa b1 h32 s512": lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True)}


def rounds(fns: dict, seconds: float = 8.0) -> dict:
    ev: dict = {k: [] for k in fns}
    ho: dict = {k: [] for k in fns}
    t0 = time.time()
    while time.time() - t0 < seconds or len(next(iter(ev.values()))) < 5:
        for k, fn in fns.items():
            ev[k].append(event_per_call_s(fn))
            ho[k].append(host_per_call_s(fn))
    return {k: {"eager_event_us": round(statistics.median(ev[k]) * 1e6, 2),
                "eager_event_min_us": round(min(ev[k]) * 1e6, 2),
                "host_us": round(statistics.median(ho[k]) * 1e6, 2), "rounds": len(ev[k])}
            for k in fns}


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    with torch.inference_mode():
        fns = cases()
        for fn in fns.values():
            harness.warm_up(fn, 3)
        out["before_profiler"] = rounds(fns)
        harness.profile_call(next(iter(fns.values())), warm=0)
        out["after_one_profiled_call"] = rounds(fns)
    out["meta"] = harness.metadata()
    harness.say(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
