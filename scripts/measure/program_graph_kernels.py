# ruff: noqa: E731, B023
"""Runs 28 and 29: whole plain-PyTorch programs on one H200, their CUDA-graph steps kernel by
kernel (run 28, calibration) and timed as users run them (run 29, held out).

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 CASE_SET=run28 python3 scripts/measure/program_graph_kernels.py $OUT
    PYTHONUNBUFFERED=1 CASE_SET=run29 python3 scripts/measure/program_graph_kernels.py $OUT

Writes ``$OUT/h200_program_graph_kernels_run28.json`` or ``$OUT/h200_programs_run29.json``.
Why: the captured programs' CUDA-graph steps of runs 24 and 26 come out too fast at batch 1-4
(-9.5..-12.4 %) and too slow at batch 32-64 (+6.6..+8.6 %). Their eager profiles give each
kernel's duration but not what a graph replay spends between kernels, nor whether a kernel
lasts in a graph what it lasts in eager mode. The split was fixed before anything was
measured (``scripts/data/REGISTRY.yaml``, this docstring, both case lists committed together):

* **run 28, calibration** (``RUN28_CASES``): programs of ``workloads/programs/plain.py`` at
  shapes no earlier run timed; per case the graph step timed as run 12 times it (3 warm + 10
  steps, a synchronise after each, median: ``graph_s``) and back to back (20 replays between
  two CUDA events: ``graph_b2b_s``), then ``TRACES`` profiled replays of the graph, each
  kernel's name, start and duration (``graph_traces``). These fit what a graph step costs per
  kernel beyond the kernels' bodies.
* **run 29, held out** (``RUN29_CASES``): more programs at shapes no run timed (none of run
  28's), timed as run 24 times programs (graph as above; eager: 6 interleaved rounds of 5
  steps after 1 warm, a synchronise after each step) in a process that never profiles; the
  session's tiny-tensor host classes beside them. Measured after the model is frozen on run
  28, scored once.

Weights are drawn from N(0, 0.02) (bf16), inputs are zeros (token ids 0), as runs 12-26 ran.
"""

import os
import statistics
import sys
import traceback

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "programs"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import plain  # noqa: E402
from harness import say  # noqa: E402

DEV = "cuda" if torch.cuda.is_available() else "cpu"
TRACES = 3
"""Profiled graph replays per run-28 case."""
INPUT_PARAMS = ("batch", "seq", "context", "mode")
"""Parameters that shape only a program's inputs: cases differing in these share one model."""

RUN28_CASES = [
    ("tenc_bf_b1_s64", "torch_encoder", {"batch": 1, "seq": 64}),
    ("tenc_bf_b2_s192", "torch_encoder", {"batch": 2, "seq": 192}),
    ("tenc_bf_b16_s128", "torch_encoder", {"batch": 16, "seq": 128}),
    ("tenc_bf_b48_s128", "torch_encoder", {"batch": 48, "seq": 128}),
    ("tenc_sf_b2_s192", "torch_encoder", {"batch": 2, "seq": 192, "batch_first": False}),
    ("tenc_sf_b24_s128", "torch_encoder", {"batch": 24, "seq": 128, "batch_first": False}),
    ("vit_b2", "torch_vit", {"batch": 2}),
    ("vit_b12", "torch_vit", {"batch": 12}),
    ("encoder_b1_s256", "encoder", {"batch": 1, "seq": 256}),
    ("encoder_b12_s256", "encoder", {"batch": 12, "seq": 256}),
    ("decoder_decode_b1_c512", "decoder", {"mode": "decode", "batch": 1, "context": 512}),
    ("decoder_decode_b48_c768", "decoder", {"mode": "decode", "batch": 48, "context": 768}),
    ("decoder_prefill_b1_s384", "decoder", {"mode": "prefill", "batch": 1, "seq": 384}),
    ("gpt_decode_b24_c256", "gpt", {"mode": "decode", "batch": 24, "context": 256}),
    ("cnn_b12", "cnn", {"batch": 12}),
]
"""Run 28's calibration programs (decided 2026-12-04 before anything of them was measured)."""
RUN29_CASES = [
    ("tenc_bf_b3_s128", "torch_encoder", {"batch": 3, "seq": 128}),
    ("tenc_bf_b12_s192", "torch_encoder", {"batch": 12, "seq": 192}),
    ("tenc_bf_b96_s64", "torch_encoder", {"batch": 96, "seq": 64}),
    ("tenc_sf_b6_s256", "torch_encoder", {"batch": 6, "seq": 256, "batch_first": False}),
    ("tenc_pre_gelu_b2_s384", "torch_encoder", {"batch": 2, "seq": 384, "activation": "gelu",
                                                "norm_first": True}),
    ("vit_b3", "torch_vit", {"batch": 3}),
    ("vit_b24", "torch_vit", {"batch": 24}),
    ("encoder_b2_s320", "encoder", {"batch": 2, "seq": 320}),
    ("encoder_b24_s128", "encoder", {"batch": 24, "seq": 128}),
    ("decoder_decode_b6_c1200", "decoder", {"mode": "decode", "batch": 6, "context": 1200}),
    ("decoder_decode_b40_c640", "decoder", {"mode": "decode", "batch": 40, "context": 640}),
    ("decoder_prefill_b1_s768", "decoder", {"mode": "prefill", "batch": 1, "seq": 768}),
    ("gpt_decode_b12_c900", "gpt", {"mode": "decode", "batch": 12, "context": 900}),
    ("cnn_b3", "cnn", {"batch": 3}),
    ("cnn_b24", "cnn", {"batch": 24}),
]
"""Run 29's held-out programs (decided 2026-12-04 with run 28's, before either was measured)."""
SETS = {28: (RUN28_CASES, "calibration"), 29: (RUN29_CASES, "held-out")}
RUN = int(os.environ.get("CASE_SET", "run28").removeprefix("run") or 0) \
    if os.environ.get("CASE_SET", "run28").removeprefix("run").isdigit() else 0
if RUN not in SETS:
    print(f"program_graph_kernels.py: CASE_SET = {os.environ.get('CASE_SET')!r}: must be run28 "
          "or run29", file=sys.stderr)
    sys.exit(2)
CASES, ROLE = SETS[RUN]


def build(prog: str, params: dict, models: dict):
    """``(step callable, model)`` of one case; a model is shared by the cases whose
    parameters differ only in :data:`INPUT_PARAMS`."""
    key = (prog, tuple(sorted((k, v) for k, v in params.items() if k not in INPUT_PARAMS)))
    model, args = getattr(plain, prog)(device=DEV, dtype="bf16", model=models.get(key),
                                       **params)
    if key not in models:
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0, 0.02)
        models[key] = model
    return (lambda m=model, a=args: m(*a)), model


def trace_record(replay) -> list:
    """One profiled graph replay: ``[name, start_us from the first kernel, dur_us]`` per kernel."""
    ks = harness.kernel_events(replay, name_len=90)
    t0 = ks[0][1] if ks else 0.0
    return [[k[0], round(k[1] - t0, 3), round(k[2], 3)] for k in ks]


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    doc = {"run": RUN, "role": ROLE, "device": harness.device_info(),
           "about": __doc__.split("\n\n")[0],
           "protocol": ("graph steps timed, then each graph's replays profiled" if RUN == 28
                        else "no profiler in the process"),
           "cases": [], "errors": {}}
    models: dict = {}
    steps = []
    with torch.inference_mode():
        if RUN == 29:
            doc["host_classes_s"] = harness.tiny_host_classes(DEV, torch.bfloat16, 200, 5)
            say("host classes", {k: round(v * 1e6, 2) for k, v in doc["host_classes_s"].items()})
        for name, prog, params in CASES:
            try:
                step, _model = build(prog, params, models)
                rec = {"case": name, "program": prog, "params": params, "role": ROLE}
                graph = None
                try:
                    graph = harness.graph_of(step)
                    rec["graph_s"] = statistics.median(harness.step_seconds(graph, 10, 3))
                    rec["graph_b2b_s"] = statistics.median(
                        harness.event_time_s(harness.repeat(graph, 20), 20) for _ in range(3))
                except Exception as e:  # noqa: BLE001
                    rec["graph_error"] = repr(e)[:300]
                doc["cases"].append(rec)
                steps.append((rec, step, graph))
                say(name, f"graph {rec.get('graph_s', float('nan')) * 1e3:.3f} ms, back to back "
                    f"{rec.get('graph_b2b_s', float('nan')) * 1e3:.3f} ms")
            except Exception:  # noqa: BLE001
                doc["errors"][name] = traceback.format_exc()[-800:]
                say("ERROR", name, doc["errors"][name])
        if RUN == 29:
            per = {id(r): [] for r, _, _ in steps}
            for _ in range(6):  # interleaved rounds of eager steps
                for rec, step, _ in steps:
                    per[id(rec)] += harness.step_seconds(step, 5, warm=1)
            for rec, _, _ in steps:
                rec["eager_s"] = statistics.median(per[id(rec)])
                rec["eager_all_s"] = [round(t, 7) for t in per[id(rec)]]
                say(rec["case"], f"eager {rec['eager_s'] * 1e3:.3f} ms")
            harness.write_json(f"h200_programs_run{RUN}.json", doc)
            return
        harness.write_json(f"h200_program_graph_kernels_run{RUN}.json", doc)
        for rec, _, graph in steps:  # profiles only after every timing
            if graph is None:
                continue
            try:
                rec["graph_traces"] = [trace_record(graph) for _ in range(TRACES)]
                ks = rec["graph_traces"][0]
                busy = sum(k[2] for k in ks)
                span = ks[-1][1] + ks[-1][2] if ks else 0.0
                say(rec["case"], f"{len(ks)} kernels, traced span {span / 1e3:.3f} ms, busy "
                    f"{busy / 1e3:.3f} ms, gap/kernel {(span - busy) / max(1, len(ks) - 1):.3f} us")
            except Exception as e:  # noqa: BLE001
                doc["errors"][f"trace {rec['case']}"] = repr(e)[:300]
        harness.write_json(f"h200_program_graph_kernels_run{RUN}.json", doc)


if __name__ == "__main__":
    main()
