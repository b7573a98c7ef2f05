# ruff: noqa: E731, B023
"""Run 16 calibration probe: what each kernel a library call launches beyond its first costs
the host in eager mode (cuBLASLt's split-K reduce, cuDNN's NCHW<->NHWC transposes).

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/extra_kernel_host.py $OUT

Writes ``$OUT/h200_extra_kernel_host_run16.json``. Protocol: every case is built first, then
timed in interleaved rounds (each round times every case once, so all see the same host
state): eager = wall clock around ``EAGER_CALLS`` back-to-back calls after a synchronise,
divided by the calls, the synchronise included (small tensors: the GPU finishes each call's
kernels before the host issues the next); graph = ``GRAPH_CALLS`` calls in one CUDA graph,
CUDA events, per call (the GPU's side, to show the eager time is the host's). Medians over
the rounds. Only after every timing round, each case is profiled once (torch.profiler: the
kernels one call launches, names and durations), so the profiler never slows a timed call.

The split was fixed before anything was measured (scripts/data/REGISTRY.yaml): everything is
**calibration** (fits ``host.extra_kernel_s`` of configs/hardware/h200.yaml). Shapes: small
``nn.Linear`` calls (M 1-8, deep K, narrow N, where cuBLASLt splits K, and shallow ones where
it does not) and tiny ``nn.Conv2d`` calls in NCHW and channels_last; none of them is a shape
of runs 11, 12, 15 or of run 16's held-out single ops.
"""

import os
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

DEV, DT = "cuda", torch.bfloat16
EAGER_CALLS, GRAPH_CALLS, ROUNDS = 300, 20, 7
LINEARS = [(64, 64), (1024, 1024), (2048, 512), (768, 768), (8192, 1024), (12288, 512),
           (6144, 768), (16384, 256), (4096, 512), (10240, 640)]
"""(K, N) of the ``nn.Linear`` cases (bias on), each at M = 1 and 8."""
CONVS = [(8, 8, 8, 3), (16, 16, 16, 3), (32, 8, 32, 1), (16, 12, 32, 3)]
"""(C, H=W, K, R) of the ``nn.Conv2d`` cases (batch 1, stride 1, same padding, no bias), each
in NCHW and channels_last."""


def build() -> list[tuple[dict, object]]:
    cases = []
    for k, n in LINEARS:
        lin = nn.Linear(k, n, device=DEV, dtype=DT)
        for m in (1, 8):
            x = torch.randn(m, k, device=DEV, dtype=DT)
            cases.append(({"call": "nn.Linear", "m": m, "k": k, "n": n, "bias": True},
                          lambda lin=lin, x=x: lin(x)))
    for c, h, k, r in CONVS:
        for layout in ("nchw", "channels_last"):
            conv = nn.Conv2d(c, k, r, padding=r // 2, bias=False)
            conv = harness.laid_out(conv.to(DEV, DT), layout)
            x = harness.laid_out(torch.randn(1, c, h, h, device=DEV, dtype=DT), layout)
            cases.append(({"call": "nn.Conv2d", "n": 1, "c": c, "h": h, "w": h, "k": k,
                           "r": r, "layout": layout}, lambda conv=conv, x=x: conv(x)))
    return cases


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    t0 = time.time()
    doc = {"run": 16, "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "about": __doc__.split("\n\n")[0],
           "protocol": __doc__.split("\n\n")[2].replace("\n", " "),
           "eager_calls": EAGER_CALLS, "graph_calls": GRAPH_CALLS, "rounds": ROUNDS,
           "cases": [], "errors": {}}
    with torch.inference_mode():
        cases = build()
        for _, fn in cases:
            harness.warm_up(fn, 5)
        replays = [harness.graph_of(harness.repeat(fn, GRAPH_CALLS)) for _, fn in cases]
        eager = [[] for _ in cases]
        graph = [[] for _ in cases]
        for r in range(ROUNDS):
            for i, (_, fn) in enumerate(cases):
                eager[i].append(harness.host_calls_s(fn, EAGER_CALLS)[1])
                graph[i].append(harness.event_time_s(replays[i], GRAPH_CALLS))
            say(f"round {r} done [{time.time() - t0:.0f}s]")
        for i, (rec, fn) in enumerate(cases):
            rec.update(role="calibration", eager_s=statistics.median(eager[i]),
                       eager_rounds_s=eager[i], graph_s=statistics.median(graph[i]))
            try:
                rec["profile"] = harness.profile_kernels(fn)
            except Exception as e:  # noqa: BLE001
                doc["errors"][str(i)] = repr(e)[:200]
            doc["cases"].append(rec)
            say(rec["call"], {k: v for k, v in rec.items() if k in ("m", "k", "n", "c", "h",
                                                                   "layout")},
                f"eager {rec['eager_s'] * 1e6:.2f} us graph {rec['graph_s'] * 1e6:.2f} us",
                "kernels", len(rec.get("profile", {}).get("kernels", [])))
    doc["elapsed_s"] = time.time() - t0
    harness.write_json("h200_extra_kernel_host_run16.json", doc)
    say("cases", len(doc["cases"]), f"[{doc['elapsed_s']:.0f}s]")


if __name__ == "__main__":
    main()
