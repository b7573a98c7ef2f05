# ruff: noqa: E731, B023
"""Run 24: PyTorch's own transformer modules (``nn.TransformerEncoderLayer``,
``nn.MultiheadAttention``) on one H200, on their fused inference path and their Python path.

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/torch_transformer_paths.py $OUT

Writes ``$OUT/h200_torch_transformer_run24.json`` (``CASE_SET=run26``: run 26's programs,
``$OUT/h200_torch_transformer_run26.json``; the probes are timed in every run, the session's
host state). Why: users build encoders from
``nn.TransformerEncoder``; in inference with ``batch_first=True`` PyTorch runs each layer as one
C++ call (``torch._transformer_encoder_layer_fwd``: the layer's kernels without Python between
them), with the default ``batch_first=False`` (or ``need_weights=True`` on a bare
``nn.MultiheadAttention``) its Python path (``F.multi_head_attention_forward``). The split was
fixed before anything was measured (``scripts/data/REGISTRY.yaml``, this docstring):

* **calibration** (``probes``): the tiny-shape module calls (batch 1, 16 tokens, width 256, 4
  heads), host seconds per call issued back to back (5 interleaved rounds of ``CALLS``), and
  the same session's host classes (``nn.Linear``, ``F.layer_norm``, ``torch.add`` on tiny
  tensors: the session's host state beside ``host.eager_call_s``; since run 26 also on CPU
  tensors, with the fused layer); then, in ``profiles``, the
  kernels of one call of each probe at the tiny shape and at batch 8 x 256 tokens, width 768
  (what each path launches). These fit the lowering of the two paths and their host classes.
* **held-out** (``cases``): whole programs of ``workloads/programs/plain.py`` (``torch_encoder``
  and ``torch_vit``) at shapes no fit sees, timed as run 12 times programs (CUDA graph: 3 warm +
  10 steps; eager: 6 interleaved rounds of 5 steps after 1 warm, a synchronise after each
  step), in a process that profiles nothing until every timing is taken; then one profiled
  eager step of each (kernel counts, for the kernel-list check). Scored once, after the
  lowering is written and fitted on the calibration part.
"""

import os
import statistics
import sys
import traceback

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "programs"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import plain  # noqa: E402
from harness import say  # noqa: E402

DEV = "cuda" if torch.cuda.is_available() else "cpu"
DT = torch.bfloat16
CALLS, ROUNDS = (200, 5) if torch.cuda.is_available() else (5, 1)
TINY = {"batch": 1, "seq": 16, "d": 256, "heads": 4, "ffn": 1024}
MID = {"batch": 8, "seq": 256, "d": 768, "heads": 12, "ffn": 3072}

PROBES = [
    # name, module kind, options
    ("layer_fast_relu_post", "layer", {"batch_first": True, "activation": "relu",
                                       "norm_first": False}),
    ("layer_fast_gelu_pre", "layer", {"batch_first": True, "activation": "gelu",
                                      "norm_first": True}),
    ("layer_python_relu_post", "layer", {"batch_first": False, "activation": "relu",
                                         "norm_first": False}),
    ("mha_fast_noweights", "mha", {"batch_first": True, "need_weights": False}),
    ("mha_python_noweights", "mha", {"batch_first": False, "need_weights": False}),
    ("mha_fast_weights", "mha", {"batch_first": True, "need_weights": True}),
    ("mha_python_weights", "mha", {"batch_first": False, "need_weights": True}),
]

RUN = int(os.environ.get("CASE_SET", "run24").removeprefix("run") or 24)
RUN24_CASES = [
    ("tenc_bf_b1_s128", "torch_encoder", {"batch": 1, "seq": 128}),
    ("tenc_bf_b8_s256", "torch_encoder", {"batch": 8, "seq": 256}),
    ("tenc_bf_b32_s128", "torch_encoder", {"batch": 32, "seq": 128}),
    ("tenc_bf_b4_s512", "torch_encoder", {"batch": 4, "seq": 512}),
    ("tenc_sf_b1_s128", "torch_encoder", {"batch": 1, "seq": 128, "batch_first": False}),
    ("tenc_sf_b8_s256", "torch_encoder", {"batch": 8, "seq": 256, "batch_first": False}),
    ("tenc_sf_b16_s512", "torch_encoder", {"batch": 16, "seq": 512, "batch_first": False}),
    ("tenc_pre_gelu_b16_s256", "torch_encoder", {"batch": 16, "seq": 256, "activation": "gelu",
                                                 "norm_first": True}),
    ("vit_b1", "torch_vit", {"batch": 1}),
    ("vit_b8", "torch_vit", {"batch": 8}),
    ("vit_b32", "torch_vit", {"batch": 32}),
]
"""Run 24's held-out programs (decided before measuring)."""
RUN26_CASES = [
    ("tenc_bf_b2_s64", "torch_encoder", {"batch": 2, "seq": 64}),
    ("tenc_bf_b64_s128", "torch_encoder", {"batch": 64, "seq": 128}),
    ("tenc_bf_gelu_b8_s384", "torch_encoder", {"batch": 8, "seq": 384, "activation": "gelu"}),
    ("tenc_pre_relu_b4_s256", "torch_encoder", {"batch": 4, "seq": 256, "norm_first": True}),
    ("tenc_sf_b4_s128", "torch_encoder", {"batch": 4, "seq": 128, "batch_first": False}),
    ("tenc_sf_b32_s256", "torch_encoder", {"batch": 32, "seq": 256, "batch_first": False}),
    ("tenc_large_b8_s256", "torch_encoder", {"batch": 8, "seq": 256, "layers": 24, "d": 1024,
                                             "heads": 16, "ffn": 4096}),
    ("vit_b4", "torch_vit", {"batch": 4}),
    ("vit_b16", "torch_vit", {"batch": 16}),
    ("vit_b64", "torch_vit", {"batch": 64}),
]
"""Run 26's held-out programs (``CASE_SET=run26``; decided 2026-12-04 after run 24 was scored
and before anything of them was measured, the model frozen at run 24's scoring): shapes no run
timed, timed as run 24's, scored once."""
if RUN not in (24, 26):
    print(f"torch_transformer_paths.py: CASE_SET = run{RUN}: must be run24 or run26",
          file=sys.stderr)
    sys.exit(2)
CASES = RUN24_CASES if RUN == 24 else RUN26_CASES


def probe_call(kind: str, opts: dict, shape: dict):
    """``(callable, module)``: one call of the probed module at ``shape``."""
    b, s, d, h, f = (shape[k] for k in ("batch", "seq", "d", "heads", "ffn"))
    bf = opts["batch_first"]
    x = torch.randn(*((b, s, d) if bf else (s, b, d)), device=DEV, dtype=DT)
    if kind == "layer":
        m = nn.TransformerEncoderLayer(d, h, f, dropout=0.1, activation=opts["activation"],
                                       batch_first=bf, norm_first=opts["norm_first"])
        m = m.to(DEV, DT).eval()
        return (lambda: m(x)), m
    m = nn.MultiheadAttention(d, h, batch_first=bf).to(DEV, DT).eval()
    nw = opts["need_weights"]
    return (lambda: m(x, x, x, need_weights=nw)), m


def host_classes(device: str = DEV) -> dict:
    """This session's host classes on tiny tensors (:func:`harness.tiny_host_classes`); on
    ``cpu`` also the fused encoder layer at the tiny shape (PyTorch's CPU fast path): the same
    host's Python and dispatch without the GPU, for the host-state studies."""
    extra = {}
    if device == "cpu":
        b, sq, d, h, f = (TINY[k] for k in ("batch", "seq", "d", "heads", "ffn"))
        layer = nn.TransformerEncoderLayer(d, h, f, batch_first=True).to(DT).eval()
        t = torch.randn(b, sq, d, dtype=DT)
        extra["encoder_layer_fast"] = lambda: layer(t)
    return harness.tiny_host_classes(device, DT, CALLS, ROUNDS, extra)


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    doc = {"run": RUN, "device": harness.device_info(), "about": __doc__.split("\n\n")[0],
           "protocol": "probes and cases timed before anything is profiled",
           "probes": {}, "host_classes_s": {}, "cases": [], "profiles": {}, "errors": {}}
    with torch.inference_mode():
        # ---- calibration: host per module call at the tiny shape
        calls = {}
        for name, kind, opts in PROBES:
            fn, _m = probe_call(kind, opts, TINY)
            harness.warm_up(fn, 20)
            calls[name] = fn
        per = {k: ([], []) for k in calls}
        for _ in range(ROUNDS):
            for k, fn in calls.items():
                issue, drained = harness.host_calls_s(fn, CALLS)
                per[k][0].append(issue)
                per[k][1].append(drained)
        for (name, kind, opts) in PROBES:
            doc["probes"][name] = {"kind": kind, "options": opts, "shape": TINY,
                                   "role": "calibration",
                                   "issue_s": statistics.median(per[name][0]),
                                   "drained_s": statistics.median(per[name][1])}
            say(name, f"{doc['probes'][name]['issue_s'] * 1e6:.1f} us per call")
        doc["host_classes_s"] = host_classes()
        doc["cpu_host_classes_s"] = host_classes("cpu")
        say("host classes", {k: round(v * 1e6, 2) for k, v in doc["host_classes_s"].items()})
        # ---- held-out: whole programs
        steps = []
        for name, prog, params in CASES:
            try:
                model, args = getattr(plain, prog)(device=DEV, dtype="bf16", **params)
                with torch.no_grad():
                    for p in model.parameters():
                        p.normal_(0, 0.02)
                step = lambda m=model, a=args: m(*a)
                rec = {"case": name, "program": prog, "params": params, "role": "held-out"}
                try:
                    rec["graph_s"] = statistics.median(
                        harness.step_seconds(harness.graph_of(step), 10, 3))
                except Exception as e:  # noqa: BLE001
                    rec["graph_error"] = repr(e)[:300]
                steps.append((rec, step))
                doc["cases"].append(rec)
            except Exception:  # noqa: BLE001
                doc["errors"][name] = traceback.format_exc()[-800:]
                say("ERROR", name, doc["errors"][name])
        per_case = {id(r): [] for r, _ in steps}
        for _ in range(6):
            for rec, step in steps:
                per_case[id(rec)] += harness.step_seconds(step, 5, warm=1)
        for rec, _ in steps:
            rec["eager_s"] = statistics.median(per_case[id(rec)])
            rec["eager_all_s"] = [round(t, 7) for t in per_case[id(rec)]]
            say(rec["case"], f"eager {rec['eager_s'] * 1e3:.3f} ms graph "
                f"{rec.get('graph_s', float('nan')) * 1e3:.3f} ms")
        harness.write_json(f"h200_torch_transformer_run{RUN}.json", doc)
        # ---- profiles (after every timing): probes at two shapes, one step of each case
        for name, kind, opts in PROBES:
            for label, shape in (("tiny", TINY), ("mid", MID)):
                try:
                    fn, _m = probe_call(kind, opts, shape)
                    doc["profiles"][f"{name}/{label}"] = {"role": "calibration", "shape": shape,
                                                          **harness.profile_kernels(fn)}
                except Exception as e:  # noqa: BLE001
                    doc["errors"][f"profile {name}/{label}"] = repr(e)[:300]
        for rec, step in steps:
            try:
                doc["profiles"][rec["case"]] = {"role": "held-out",
                                                **harness.profile_kernels(step)}
            except Exception as e:  # noqa: BLE001
                doc["errors"][f"profile {rec['case']}"] = repr(e)[:300]
    harness.write_json(f"h200_torch_transformer_run{RUN}.json", doc)
    say("done")


if __name__ == "__main__":
    main()
