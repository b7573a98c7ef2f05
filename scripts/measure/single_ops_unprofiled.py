# ruff: noqa: E731, B023
"""Run 12: single ops timed on one H200 as users call them, with a protocol that leaves the
host alone (issue 23 point 4; run 11 profiled every case in the timing process, which slows
eager dispatch for the rest of it: docs/gpu_findings_log.md, "Run 11").

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/single_ops_unprofiled.py $OUT

Writes ``$OUT/h200_single_ops_run12.json`` (``MEASURE_SET=run15`` ... ``run20``: that run's
shapes, to ``h200_single_ops_run15.json`` / ``h200_single_ops_run16.json``). Protocol: no
``torch.profiler`` anywhere in the process; every case is built first, then timed in
interleaved rounds (each round times every case once, so all cases see the same host
state): eager = wall clock around ``EAGER_CALLS`` back-to-back calls after a synchronise,
divided by the calls, the synchronise after them included; graph = ``GRAPH_CALLS`` calls
captured in one CUDA graph, replayed, CUDA events, divided by the calls. Medians over the
rounds. Each round also times tiny-tensor calls of the
same call classes (``host_probe``: what one call costs the host on this machine now).

The split was fixed before anything was measured (scripts/data/REGISTRY.yaml): ``ops`` is
**held-out** (shapes run 11 did not time); ``host_probe`` is dev: read to explain figures,
never fitted.
"""

import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

DEV, DT = "cuda", torch.bfloat16
EAGER_CALLS, GRAPH_CALLS, ROUNDS = 200, 20, 7
SETS = {
    "run12": {"batches": (1, 3, 12, 48), "matmul_m": 16,
              "linears": [(3072, 3072), (1024, 4096), (8192, 2048), (2560, 10240)],  # (K, N)
              # (C, H, K, R, stride, groups)
              "convs": [(32, 112, 64, 3, 1, 1), (256, 56, 64, 1, 1, 1), (192, 28, 192, 3, 1, 1),
                        (480, 14, 480, 3, 1, 480)],
              "rowwise": (2048, 5120), "row_batches": (2, 24),
              "attention": ((16, 128, 2, 2048), (8, 64, 8, 512), (24, 128, 1, 1024))},
    # run 15 (held out, 2026-12-02): shapes neither run 11 nor run 12 timed, measured after the
    # model was frozen for the session, scored once (scripts/data/REGISTRY.yaml)
    "run15": {"batches": (2, 6, 20, 64), "matmul_m": 24,
              "linears": [(1536, 6144), (5120, 1280), (4096, 14336), (2048, 2048)],
              "convs": [(64, 56, 64, 3, 1, 1), (128, 28, 512, 1, 1, 1), (96, 56, 96, 3, 1, 96),
                        (256, 14, 256, 3, 1, 1)],
              "rowwise": (1536, 6144), "row_batches": (4, 40),
              "attention": ((32, 128, 1, 3072), (12, 64, 6, 768), (8, 128, 4, 1536))},
    # run 16 (held out, 2026-12-02): shapes neither runs 11, 12, 15 nor run 16's calibration
    # probe (extra_kernel_host.py) timed, decided before measuring, measured after the model
    # was frozen for the session, scored once (scripts/data/REGISTRY.yaml)
    "run16": {"batches": (4, 10, 40, 96), "matmul_m": 40,
              "linears": [(2560, 7680), (7168, 1024), (3584, 3584), (1280, 5120)],
              "convs": [(48, 56, 96, 3, 1, 1), (320, 14, 320, 1, 1, 1), (144, 28, 144, 3, 1, 144),
                        (192, 14, 384, 3, 1, 1)],
              "rowwise": (2560, 3584), "row_batches": (3, 30),
              "attention": ((16, 64, 2, 2560), (20, 128, 1, 1280), (40, 128, 3, 896))},
    # run 17 (held out, decided 2026-12-03 before the day's single-op fits): shapes no earlier
    # run timed (M = 128 past the streamed-weight limit; a 5x5 depthwise, a stride-2 3x3),
    # to be measured after the model is frozen for the session and scored once
    "run17": {"batches": (5, 16, 56, 128), "matmul_m": 56,
              "linears": [(4096, 6144), (1024, 1024), (5120, 13824), (12288, 1536)],
              "convs": [(64, 112, 64, 3, 2, 1), (512, 7, 2048, 1, 1, 1), (240, 28, 240, 5, 1, 240),
                        (128, 56, 128, 3, 1, 1)],
              "rowwise": (3072, 7168), "row_batches": (5, 50),
              "attention": ((28, 128, 2, 1792), (16, 128, 4, 640), (64, 64, 1, 2304))},
    # run 18 (held out, decided 2026-12-03 after run 17 was scored and before any change it
    # guided): shapes no earlier run timed, measured after the model is frozen again
    "run18": {"batches": (3, 24, 80, 192), "matmul_m": 80,
              "linears": [(2048, 6144), (6144, 1024), (3072, 12288), (768, 768)],
              "convs": [(256, 28, 256, 3, 2, 1), (1024, 14, 256, 1, 1, 1),
                        (160, 28, 160, 5, 1, 160), (384, 14, 384, 3, 1, 384)],
              "rowwise": (1024, 12288), "row_batches": (6, 60),
              "attention": ((8, 128, 8, 1024), (32, 64, 2, 1536), (48, 128, 1, 2048))},
    # run 20 (held out, decided 2026-12-03 before the wave-fitting change that run 19's
    # calibration probe supports): shapes no earlier run timed, prefill-sized token counts
    # (``prefill_m``: linears and matmuls at fractional waves) included, measured after the
    # model is frozen, scored once
    "run20": {"batches": (2, 12, 64, 144), "matmul_m": 32, "prefill_m": (900, 2000),
              "linears": [(3072, 1024), (3584, 18944), (1536, 8960), (5120, 5120)],
              "convs": [(64, 56, 256, 1, 1, 1), (96, 28, 96, 3, 2, 96), (512, 14, 512, 3, 1, 1),
                        (32, 112, 32, 3, 1, 32)],
              "rowwise": (1280, 8192), "row_batches": (8, 36),
              "attention": ((32, 128, 1, 4096), (24, 64, 3, 1280), (8, 128, 6, 768))},
}
"""Shape sets by ``MEASURE_SET`` (default ``run12``); the file is
``h200_single_ops_<set>.json``."""
SET = os.environ.get("MEASURE_SET", "run12")
if SET not in SETS:
    print(f"single_ops_unprofiled.py: MEASURE_SET = {SET!r}: must be one of {', '.join(SETS)}",
          file=sys.stderr)
    sys.exit(2)
SHAPES = SETS[SET]
BATCHES, LINEARS, CONVS = SHAPES["batches"], SHAPES["linears"], SHAPES["convs"]
ROWWISE = SHAPES["rowwise"]


def eager_s(fn) -> float:
    """Wall seconds per call of ``EAGER_CALLS`` calls, the synchronise after them included."""
    return harness.host_calls_s(fn, EAGER_CALLS)[1]


def graph_replay(fn):
    """``GRAPH_CALLS`` calls of ``fn`` captured in one CUDA graph (:func:`harness.graph_of`)."""
    return harness.graph_of(harness.repeat(fn, GRAPH_CALLS))


def graph_s(replay) -> float:
    return harness.event_time_s(replay, GRAPH_CALLS)


def build() -> tuple[list[tuple[dict, object]], list[tuple[dict, object]]]:
    cases, probes = [], []
    for k, n in LINEARS:
        lin = nn.Linear(k, n, device=DEV, dtype=DT)
        for b in BATCHES:
            x = torch.randn(b, k, device=DEV, dtype=DT)
            cases.append(({"family": "linear", "call": "nn.Linear", "m": b, "k": k, "n": n,
                           "bias": True}, lambda lin=lin, x=x: lin(x)))
        for m in SHAPES.get("prefill_m", ()):
            x = torch.randn(m, k, device=DEV, dtype=DT)
            cases.append(({"family": "linear", "call": "nn.Linear", "m": m, "k": k, "n": n,
                           "bias": True}, lambda lin=lin, x=x: lin(x)))
        w = torch.randn(k, n, device=DEV, dtype=DT)
        for m in (SHAPES["matmul_m"], *SHAPES.get("prefill_m", ())):
            x = torch.randn(m, k, device=DEV, dtype=DT)
            cases.append(({"family": "matmul", "call": "x @ W", "m": m, "k": k, "n": n},
                          lambda x=x, w=w: x @ w))
    for c, h, k, r, st, g in CONVS:
        for layout in ("channels_last", "nchw"):
            conv = nn.Conv2d(c, k, r, stride=st, padding=r // 2, groups=g, bias=False)
            conv = harness.laid_out(conv.to(DEV, DT), layout)
            for b in BATCHES:
                x = harness.laid_out(torch.randn(b, c, h, h, device=DEV, dtype=DT), layout)
                cases.append(({"family": "conv2d", "call": "nn.Conv2d", "n": b, "c": c, "h": h,
                               "w": h, "k": k, "r": r, "stride": st, "groups": g,
                               "layout": layout}, lambda conv=conv, x=x: conv(x)))
    for hid in ROWWISE:
        ln = nn.LayerNorm(hid, device=DEV, dtype=DT)
        g1 = torch.ones(hid, device=DEV, dtype=DT)
        for b in SHAPES["row_batches"]:
            x = torch.randn(b * 128, hid, device=DEV, dtype=DT)
            sh = {"rows": b * 128, "cols": hid}
            cases += [({"family": "layernorm", "call": "nn.LayerNorm", **sh},
                       lambda ln=ln, x=x: ln(x)),
                      ({"family": "rmsnorm", "call": "F.rms_norm", **sh},
                       lambda x=x, g1=g1, hid=hid: F.rms_norm(x, (hid,), g1, 1e-5)),
                      ({"family": "softmax", "call": "torch.softmax", **sh},
                       lambda x=x: torch.softmax(x, -1)),
                      ({"family": "gelu", "call": "F.gelu", **sh}, lambda x=x: F.gelu(x)),
                      ({"family": "add", "call": "x + y", **sh}, lambda x=x: x + x)]
    for heads, dh, b, s in SHAPES["attention"]:
        q = torch.randn(b, heads, s, dh, device=DEV, dtype=DT)
        cases.append(({"family": "attention", "call": "F.scaled_dot_product_attention",
                       "batch": b, "heads": heads, "seq": s, "head_dim": dh, "causal": True},
                      lambda q=q: F.scaled_dot_product_attention(q, q, q, is_causal=True)))
    # tiny tensors: the host's cost of one call of each class, now, on this machine
    t1 = torch.randn(1, 64, device=DEV, dtype=DT)
    tl = nn.Linear(64, 64, device=DEV, dtype=DT)
    tc = nn.Conv2d(8, 8, 3, padding=1, bias=False).to(DEV, DT).to(memory_format=torch.channels_last)
    tx = torch.randn(1, 8, 8, 8, device=DEV, dtype=DT).to(memory_format=torch.channels_last)
    tn = nn.LayerNorm(64, device=DEV, dtype=DT)
    g64 = torch.ones(64, device=DEV, dtype=DT)
    probes += [({"call": "nn.Linear"}, lambda: tl(t1)), ({"call": "nn.Conv2d"}, lambda: tc(tx)),
               ({"call": "nn.LayerNorm"}, lambda: tn(t1)),
               ({"call": "F.rms_norm"}, lambda: F.rms_norm(t1, (64,), g64, 1e-5)),
               ({"call": "torch.softmax"}, lambda: torch.softmax(t1, -1)),
               ({"call": "F.gelu"}, lambda: F.gelu(t1)), ({"call": "x + y"}, lambda: t1 + t1)]
    return cases, probes


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    t0 = time.time()
    doc = {"run": int(SET.removeprefix("run")), "shape_set": SET,
           "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "about": __doc__.split("\n\n")[0],
           "protocol": __doc__.split("\n\n")[2].replace("\n", " "),
           "eager_calls": EAGER_CALLS, "graph_calls": GRAPH_CALLS, "rounds": ROUNDS,
           "ops": [], "host_probe": [], "errors": {}}
    with torch.inference_mode():
        cases, probes = build()
        for _, fn in cases + probes:
            harness.warm_up(fn, 3)
        replays = []
        for rec, fn in cases:
            try:
                replays.append(graph_replay(fn))
            except Exception as e:  # noqa: BLE001
                replays.append(None)
                rec["graph_error"] = repr(e)[:200]
        eager = [[] for _ in cases]
        graph = [[] for _ in cases]
        host = [[] for _ in probes]
        for r in range(ROUNDS):
            for i, (_, fn) in enumerate(cases):
                eager[i].append(eager_s(fn))
                if replays[i] is not None:
                    graph[i].append(graph_s(replays[i]))
            for i, (_, fn) in enumerate(probes):
                host[i].append(eager_s(fn))
            say(f"round {r} done [{time.time() - t0:.0f}s]")
    for i, (rec, _) in enumerate(cases):
        rec.update(role="held-out", eager_s=statistics.median(eager[i]),
                   eager_rounds_s=eager[i])
        if graph[i]:
            rec.update(graph_s=statistics.median(graph[i]), graph_rounds_s=graph[i])
        doc["ops"].append(rec)
    for i, (rec, _) in enumerate(probes):
        rec.update(role="dev", eager_s=statistics.median(host[i]), eager_rounds_s=host[i])
        doc["host_probe"].append(rec)
    say({r["call"]: round(r["eager_s"] * 1e6, 2) for r in doc["host_probe"]})
    doc["elapsed_s"] = time.time() - t0
    harness.write_json(f"h200_single_ops_{SET}.json", doc)
    say("cases", len(doc["ops"]), f"[{doc['elapsed_s']:.0f}s]")


if __name__ == "__main__":
    main()
