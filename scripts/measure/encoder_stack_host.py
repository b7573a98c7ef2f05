# ruff: noqa: E731, B023
"""Run 25 calibration probe: the host time of ``nn.TransformerEncoder`` per layer in the stack
against one layer called alone.

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/encoder_stack_host.py $OUT

Writes ``$OUT/h200_encoder_stack_host_run25.json``. Why: run 24's held-out eager steps of
``plain.torch_encoder`` are host-bound and ~10 % longer per layer than 12 x the one-layer probes
of the same session explain (``docs/gpu_findings_log.md`` 2026-12-04); this probe separates the
stack's own cost (``TransformerEncoder.forward``'s checks once, its loop per layer) from the
layer's. Protocol: tiny shapes (batch 1, 16 tokens, width 256, 4 heads, FFN 1024, bf16),
``nn.TransformerEncoder`` of 1, 2, 4, 8 and 12 layers on the fused path (``batch_first=True``)
and on the Python path (``batch_first=False``), and the single layer alone; per forward the
host seconds issued back to back (``CALLS`` calls after a synchronise, 5 interleaved rounds,
medians) and the step wall time with a synchronise after each step; the session's host
classes (``nn.Linear``, ``F.layer_norm``, ``torch.add`` on tiny tensors) beside them.

The split was fixed before anything was measured (``scripts/data/REGISTRY.yaml``, this
docstring): every figure is **calibration** (for the stack's host cost per layer and per
forward); the held-out check of whatever it fits is a later run of programs no run timed.
"""

import os
import statistics
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

DEV = "cuda" if torch.cuda.is_available() else "cpu"
DT = torch.bfloat16
CALLS, ROUNDS = (100, 5) if torch.cuda.is_available() else (3, 1)
DEPTHS = (1, 2, 4, 8, 12)
D, HEADS, FFN, SEQ, BATCH = 256, 4, 1024, 16, 1


def stack(layers: int, batch_first: bool):
    layer = nn.TransformerEncoderLayer(D, HEADS, FFN, dropout=0.1, batch_first=batch_first)
    m = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).to(DEV, DT).eval()
    x = torch.randn(*((BATCH, SEQ, D) if batch_first else (SEQ, BATCH, D)), device=DEV, dtype=DT)
    return (lambda: m(x)), m


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    doc = {"run": 25, "device": harness.device_info(), "about": __doc__.split("\n\n")[0],
           "role": "calibration", "shape": {"batch": BATCH, "seq": SEQ, "d": D, "heads": HEADS,
                                            "ffn": FFN},
           "cases": [], "host_classes_s": {}}
    with torch.inference_mode():
        fns = {}
        for bf in (True, False):
            path = "fast" if bf else "python"
            for n in DEPTHS:
                fns[(path, "stack", n)] = stack(n, bf)[0]
            layer = nn.TransformerEncoderLayer(D, HEADS, FFN, dropout=0.1, batch_first=bf)
            layer = layer.to(DEV, DT).eval()
            x = torch.randn(*((BATCH, SEQ, D) if bf else (SEQ, BATCH, D)), device=DEV, dtype=DT)
            fns[(path, "layer", 1)] = lambda m=layer, t=x: m(t)
        for fn in fns.values():
            harness.warm_up(fn, 10)
        issue = {k: [] for k in fns}
        wall = {k: [] for k in fns}
        for _ in range(ROUNDS):
            for k, fn in fns.items():
                issue[k].append(harness.host_calls_s(fn, CALLS)[0])
                wall[k] += harness.step_seconds(fn, 10, warm=1)
        for (path, kind, n), _fn in fns.items():
            rec = {"path": path, "kind": kind, "layers": n,
                   "issue_s": statistics.median(issue[(path, kind, n)]),
                   "step_s": statistics.median(wall[(path, kind, n)])}
            doc["cases"].append(rec)
            say(path, kind, n, f"issue {rec['issue_s'] * 1e6:.1f} us  step "
                f"{rec['step_s'] * 1e6:.1f} us")
        doc["host_classes_s"] = harness.tiny_host_classes(DEV, DT, 200, ROUNDS)
        say("host classes", {k: round(v * 1e6, 2) for k, v in doc["host_classes_s"].items()})
    harness.write_json("h200_encoder_stack_host_run25.json", doc)
    say("done")


if __name__ == "__main__":
    main()
