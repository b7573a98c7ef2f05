# ruff: noqa: E731, B023
"""Run 10: torch.profiler (Kineto) traces of plain PyTorch programs on one H200, shapes
recorded, as the input of trace replay (issue 23 point 3), with each step's wall time.

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/kineto_traces.py $OUT

Writes ``$OUT/kineto_<case>.json.gz`` (one profiled eager step of each case, exported by
``torch.profiler.profile(record_shapes=True).export_chrome_trace``) and
``$OUT/h200_kineto_run10.json`` (per case: the program, its parameters, the eager step's
median wall time over interleaved rounds with a synchronise after each step, as ``generate``
runs; the CUDA-graph step's median; the profiled step's own wall time).

The split was fixed before anything was measured (scripts/data/REGISTRY.yaml): every case is
**held-out**. Trace replay fits nothing: it maps each kernel of the trace to the op cost of
its shapes on the target machine, so the traces are scored once, after replay is written.

Run 10 took each case's trace before timing its eager steps in the same process, and one
``torch.profiler`` step slows eager dispatch for the rest of a process (README, "Why run 4
exists"), so its ``eager_s`` are slow. ``KINETO_TIMING_ONLY=1`` (run 12) takes no trace and
times, in a process that never profiles, run 10's cases and four new shapes
(``$OUT/h200_programs_run12.json``); with ``PROGRAM_SET=run17``, run 17's nine shapes instead
(``$OUT/h200_programs_run17.json``).
"""

import gzip
import math
import os
import shutil
import statistics
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "programs"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import plain  # noqa: E402
import torch  # noqa: E402
from harness import say  # noqa: E402

DEV = "cuda"
DT = "bf16"
CASES = [
    ("decoder_decode_b8_c2048", "decoder", {"mode": "decode", "batch": 8, "context": 2048}),
    ("decoder_prefill_b1_s1024", "decoder", {"mode": "prefill", "batch": 1, "seq": 1024}),
    ("gpt_decode_b16_c512", "gpt", {"mode": "decode", "batch": 16, "context": 512}),
    ("encoder_b8_s256", "encoder", {"batch": 8, "seq": 256}),
    ("cnn_b16", "cnn", {"batch": 16}),
]


PROGRAM_SETS = {
    # run 12: run 10's cases and four new shapes, timed in a process that never profiles
    12: CASES + [
        ("decoder_decode_b32_c1024", "decoder", {"mode": "decode", "batch": 32, "context": 1024}),
        ("gpt_decode_b4_c1024", "gpt", {"mode": "decode", "batch": 4, "context": 1024}),
        ("encoder_b2_s512", "encoder", {"batch": 2, "seq": 512}),
        ("cnn_b4", "cnn", {"batch": 4}),
    ],
    # run 17 (held out, decided 2026-12-03 before measuring, the model frozen at the day's
    # single-op commit): shapes no earlier run timed, timed as run 12's, scored once
    17: [
        ("decoder_decode_b16_c3000", "decoder", {"mode": "decode", "batch": 16, "context": 3000}),
        ("decoder_decode_b64_c512", "decoder", {"mode": "decode", "batch": 64, "context": 512}),
        ("decoder_prefill_b2_s700", "decoder", {"mode": "prefill", "batch": 2, "seq": 700}),
        ("gpt_decode_b8_c1500", "gpt", {"mode": "decode", "batch": 8, "context": 1500}),
        ("gpt_decode_b48_c300", "gpt", {"mode": "decode", "batch": 48, "context": 300}),
        ("encoder_b4_s384", "encoder", {"batch": 4, "seq": 384}),
        ("encoder_b32_s96", "encoder", {"batch": 32, "seq": 96}),
        ("cnn_b8", "cnn", {"batch": 8}),
        ("cnn_b48", "cnn", {"batch": 48}),
    ],
    # run 18 (held out, decided 2026-12-03 after run 17 was scored and before any change it
    # guided): shapes no earlier run timed, timed as run 12's, scored once
    18: [
        ("decoder_decode_b4_c4096", "decoder", {"mode": "decode", "batch": 4, "context": 4096}),
        ("decoder_decode_b128_c256", "decoder", {"mode": "decode", "batch": 128, "context": 256}),
        ("decoder_prefill_b1_s2048", "decoder", {"mode": "prefill", "batch": 1, "seq": 2048}),
        ("decoder_prefill_b4_s300", "decoder", {"mode": "prefill", "batch": 4, "seq": 300}),
        ("gpt_decode_b2_c2000", "gpt", {"mode": "decode", "batch": 2, "context": 2000}),
        ("gpt_decode_b96_c128", "gpt", {"mode": "decode", "batch": 96, "context": 128}),
        ("encoder_b16_s256", "encoder", {"batch": 16, "seq": 256}),
        ("encoder_b1_s1024", "encoder", {"batch": 1, "seq": 1024}),
        ("cnn_b2", "cnn", {"batch": 2}),
        ("cnn_b96", "cnn", {"batch": 96}),
    ],
    # run 20 (held out, decided 2026-12-03 before the wave-fitting change of run 19's
    # calibration probe): shapes no earlier run timed, prefill weighted, scored once
    20: [
        ("decoder_prefill_b1_s1500", "decoder", {"mode": "prefill", "batch": 1, "seq": 1500}),
        ("decoder_prefill_b2_s1100", "decoder", {"mode": "prefill", "batch": 2, "seq": 1100}),
        ("decoder_prefill_b8_s256", "decoder", {"mode": "prefill", "batch": 8, "seq": 256}),
        ("decoder_decode_b24_c1800", "decoder", {"mode": "decode", "batch": 24, "context": 1800}),
        ("decoder_decode_b2_c6000", "decoder", {"mode": "decode", "batch": 2, "context": 6000}),
        ("gpt_decode_b32_c700", "gpt", {"mode": "decode", "batch": 32, "context": 700}),
        ("encoder_b8_s512", "encoder", {"batch": 8, "seq": 512}),
        ("encoder_b64_s64", "encoder", {"batch": 64, "seq": 64}),
        ("cnn_b32", "cnn", {"batch": 32}),
        ("cnn_b6", "cnn", {"batch": 6}),
    ],
    # run 22 (held out, decided 2026-12-03 after the NCHW program lowering was committed,
    # f790b0b, before anything NCHW was measured as a program): the plain CNN in PyTorch's
    # default NCHW layout (one built model: every case NCHW), scored once
    22: [
        ("cnn_nchw_b1", "cnn", {"batch": 1, "channels_last": False}),
        ("cnn_nchw_b4", "cnn", {"batch": 4, "channels_last": False}),
        ("cnn_nchw_b16", "cnn", {"batch": 16, "channels_last": False}),
        ("cnn_nchw_b64", "cnn", {"batch": 64, "channels_last": False}),
    ],
}
"""Timing-only shape sets by run (``KINETO_TIMING_ONLY=1 PROGRAM_SET=run<N>``, default
``run12``): ``$OUT/h200_programs_run<N>.json``."""

TIMING_ONLY = os.environ.get("KINETO_TIMING_ONLY") == "1"
PROGRAM_SET = os.environ.get("PROGRAM_SET", "run12")
RUN = int(PROGRAM_SET.removeprefix("run")) if PROGRAM_SET.removeprefix("run").isdigit() else None
if TIMING_ONLY:
    if RUN not in PROGRAM_SETS:
        print(f"kineto_traces.py: PROGRAM_SET = {PROGRAM_SET!r}: must be one of "
              f"{', '.join(f'run{n}' for n in PROGRAM_SETS)}", file=sys.stderr)
        sys.exit(2)
    CASES = PROGRAM_SETS[RUN]


graph_of = harness.graph_of


def step_times(fn, steps: int = 10, warm: int = 3) -> list[float]:
    """Wall seconds of each step (:func:`harness.step_seconds`)."""
    return harness.step_seconds(fn, steps, warm)


def traced_step(fn, path: str) -> float:
    """One profiled eager step exported as a gzipped Chrome trace; returns its wall seconds."""
    prof, wall = harness.profile_call(fn, record_shapes=True)
    raw = path[:-3]
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    return wall


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    out = harness.OUT
    run = RUN if TIMING_ONLY else 10
    doc = {"run": run,
           "protocol": "no profiler in the process" if TIMING_ONLY else "traced first",
           "device": torch.cuda.get_device_name(0) if harness.has_cuda() else "cpu",
           "torch": torch.__version__, "cuda": torch.version.cuda, "role": "held-out",
           "about": __doc__.split("\n\n")[0], "cases": [], "errors": {}}
    built: dict = {}
    steps = []
    with torch.inference_mode():
        for name, prog, params in CASES:
            try:
                model, args = getattr(plain, prog)(device=DEV, dtype=DT, model=built.get(prog),
                                                   **params)
                built[prog] = model
                step = lambda m=model, a=args: m(*a)
                rec = {"case": name, "program": prog, "params": params, "role": "held-out"}
                if not TIMING_ONLY:
                    rec["trace"] = f"kineto_{name}.json.gz"
                    rec["profiled_step_s"] = traced_step(step, os.path.join(out, rec["trace"]))
                try:
                    rec["graph_s"] = statistics.median(step_times(graph_of(step)))
                except Exception as e:  # noqa: BLE001
                    rec["graph_error"] = repr(e)[:300]
                steps.append((rec, step))
                doc["cases"].append(rec)
                say(name, f"profiled {rec.get('profiled_step_s', math.nan) * 1e3:.3f} ms")
            except Exception:  # noqa: BLE001
                doc["errors"][name] = traceback.format_exc()[-800:]
                say("ERROR", name, doc["errors"][name])
        per = {id(r): [] for r, _ in steps}
        for _ in range(6):  # interleaved rounds of eager steps
            for rec, step in steps:
                per[id(rec)] += step_times(step, 5, warm=1)
        for rec, _ in steps:
            rec["eager_s"] = statistics.median(per[id(rec)])
            rec["eager_all_s"] = [round(t, 7) for t in per[id(rec)]]
            say(rec["case"], f"eager {rec['eager_s'] * 1e3:.3f} ms graph "
                f"{rec.get('graph_s', float('nan')) * 1e3:.3f} ms")
    harness.write_json(f"h200_programs_run{run}.json" if TIMING_ONLY else "h200_kineto_run10.json",
                       doc)


if __name__ == "__main__":
    main()
