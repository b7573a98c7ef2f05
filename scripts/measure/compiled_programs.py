# ruff: noqa: E731, B023
"""Runs 13 and 31: the plain PyTorch programs (workloads/programs/plain.py) under torch.compile on
one H200 (``CASE_SET=run13``, the default, or ``run31``: the case list below).

Run on the device machine with the image's python3 (PyTorch 2.11), twice, in two processes:

    PYTHONUNBUFFERED=1 python3 scripts/measure/compiled_programs.py $OUT
    PYTHONUNBUFFERED=1 python3 scripts/measure/compiled_programs.py --profile $OUT

Each case is built on the GPU in bf16 and compiled with ``torch.compile(model, dynamic=False)``
(default mode: Inductor, no CUDA graphs; static shapes so a case's shape never turns another's
graph dynamic), warmed up (the compile) and timed with a synchronise after each step, as
``scripts/measure/kineto_traces.py`` (run 12) times eager steps.

* The first invocation (**timing**) never imports ``torch.profiler`` (a profiler slows eager
  dispatch for the rest of a process): eager and compiled steps of every case in interleaved
  rounds; per case the medians ``eager_s`` and ``compiled_s``, every step, the first
  compiled call (``compile_s``) and Dynamo's graph count and graph breaks. It writes
  ``$OUT/h200_compiled_programs_run13.json``.
* The second (``--profile``) compiles every case again (Inductor's cache makes it quick) and
  profiles one compiled and one eager step of each: the GPU kernels' names and count
  (``compiled_kernels``, ``eager_kernels``; memsets and copies apart), merged into the same file.

The split was decided before anything was measured: **every case is held-out**. Nothing is
fitted on this run: the compiled host classes (``compiled_kernel``, ``compiled_step``) stay
as run 7L fitted them, and ``scripts/validate/validate_compiled_programs.py`` scores this file once
(kernel count per case and the compiled step's MAPE, target 10 %).

``MEASURE_CASES=decoder`` (case or program names, comma-separated) measures a subset and
keeps the other cases already in ``$OUT``'s file: the compiles of all nine cases may not fit
one command's time, so the decoder's three and the rest can be two invocations (rounds are
interleaved within one invocation's cases).

``MEASURE_QUICK=1``: tiny shapes (one or two layers, short contexts) on whatever device there
is (CPU: float32), two rounds: a smoke test of the script, not a measurement.
"""

import collections
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import e2e as me  # noqa: E402
import harness  # noqa: E402
import torch  # noqa: E402
from harness import say  # noqa: E402

plain = harness.plain_programs()
QUICK = harness.QUICK
CUDA = harness.has_cuda()
DEV, DT = harness.device_and_dtype()
CASE_SET = os.environ.get("CASE_SET", "run13")
OUTNAME = f"h200_compiled_programs_{CASE_SET}.json"
RUN = int(CASE_SET.removeprefix("run")) if CASE_SET.removeprefix("run").isdigit() else 0
ROUNDS, STEPS = (2, 2) if QUICK else (6, 5)

CASES = [
    ("decoder_decode_b1_c1024", "decoder", {"mode": "decode", "batch": 1, "context": 1024}),
    ("decoder_decode_b8_c2048", "decoder", {"mode": "decode", "batch": 8, "context": 2048}),
    ("decoder_decode_b32_c1024", "decoder", {"mode": "decode", "batch": 32, "context": 1024}),
    ("gpt_decode_b1_c512", "gpt", {"mode": "decode", "batch": 1, "context": 512}),
    ("gpt_decode_b16_c512", "gpt", {"mode": "decode", "batch": 16, "context": 512}),
    ("encoder_b1_s128", "encoder", {"batch": 1, "seq": 128}),
    ("encoder_b8_s256", "encoder", {"batch": 8, "seq": 256}),
    ("cnn_b1", "cnn", {"batch": 1}),
    ("cnn_b16", "cnn", {"batch": 16}),
]
"""(case, program, parameters): every case held out."""
RUN31 = [
    ("decoder_decode_b4_c512", "decoder", {"mode": "decode", "batch": 4, "context": 512}),
    ("decoder_prefill_b1_s256", "decoder", {"mode": "prefill", "batch": 1, "seq": 256}),
    ("gpt_decode_b4_c1024", "gpt", {"mode": "decode", "batch": 4, "context": 1024}),
    ("gpt_prefill_b2_s256", "gpt", {"mode": "prefill", "batch": 2, "seq": 256}),
    ("encoder_b2_s512", "encoder", {"batch": 2, "seq": 512}),
    ("encoder_b16_s128", "encoder", {"batch": 16, "seq": 128}),
    ("cnn_b4", "cnn", {"batch": 4}),
    ("cnn_b32", "cnn", {"batch": 32}),
]
"""``CASE_SET=run31`` (decided 2026-12-04 before it was measured, after run 13 became dev):
new shapes of the same four programs, prefill steps of both decoders among them, every case
HELD-OUT, to score once the compiled lowering as it stands at the commit that adds this list
(Inductor's attention pattern, the compiled operand copies; nothing fitted on it)."""
if CASE_SET == "run31":
    CASES = RUN31
elif CASE_SET != "run13":
    raise SystemExit(f"CASE_SET={CASE_SET!r}: expected run13 or run31")
if QUICK:
    CASES = [("decoder_decode_b1_c64", "decoder", {"mode": "decode", "batch": 1, "context": 64,
                                                   "layers": 1}),
             ("gpt_decode_b1_c64", "gpt", {"mode": "decode", "batch": 1, "context": 64,
                                           "layers": 1}),
             ("encoder_b1_s16", "encoder", {"batch": 1, "seq": 16, "layers": 1}),
             ("cnn_b1_s64", "cnn", {"batch": 1, "size": 64})]

SELECT = [x for x in os.environ.get("MEASURE_CASES", "").split(",") if x]
if SELECT:  # a subset (names or programs): several invocations fill one file
    CASES = [c for c in CASES if c[0] in SELECT or c[1] in SELECT]


sync = harness.sync
allow_recompiles = me.allow_recompiles


def step_times(fn, steps: int, warm: int = 1) -> list[float]:
    """Seconds of each of ``steps`` calls of ``fn`` (:func:`harness.step_seconds`)."""
    return harness.step_seconds(fn, steps, warm)


def dynamo_counts() -> dict:
    """Dynamo's graph and graph-break counters so far (cumulative over the process)."""
    from torch._dynamo.utils import counters

    return {"graph_breaks": int(sum(counters["graph_break"].values())),
            "unique_graphs": int(counters["stats"].get("unique_graphs", 0))}


def build_cases() -> list[tuple[dict, object, object]]:
    """(record, eager step, compiled step) per case; the compile happens here (warm-up)."""
    allow_recompiles()
    built: dict = {}
    out = []
    with torch.inference_mode():
        for name, prog, params in CASES:
            rec = {"case": name, "program": prog, "params": params, "role": "held-out"}
            try:
                model, args = getattr(plain, prog)(device=DEV, dtype=DT, model=built.get(prog),
                                                   **params)
                built[prog] = model
                compiled = torch.compile(model, dynamic=False)
                eager = lambda m=model, a=args: m(*a)
                comp = lambda m=compiled, a=args: m(*a)
                before = dynamo_counts()
                sync()
                t = time.perf_counter()
                comp()
                sync()
                rec["compile_s"] = time.perf_counter() - t
                for _ in range(3):  # any recompilation happens here, not in the timed rounds
                    comp()
                    eager()
                sync()
                after = dynamo_counts()
                rec["graph_breaks"] = after["graph_breaks"] - before["graph_breaks"]
                rec["graphs"] = after["unique_graphs"] - before["unique_graphs"]
                out.append((rec, eager, comp))
                say(name, f"compiled in {rec['compile_s']:.1f} s, {rec['graphs']} graph(s), "
                    f"{rec['graph_breaks']} break(s)")
            except Exception:  # noqa: BLE001
                rec["error"] = traceback.format_exc()[-1200:]
                out.append((rec, None, None))
                say("ERROR", name, rec["error"])
    return out


def write(doc: dict, out: str) -> None:
    harness.write_json(os.path.join(out, OUTNAME), doc)


def header() -> dict:
    return {"run": RUN, "case_set": CASE_SET,
            "protocol": "timing: no profiler in the process; kernels: a second "
            "process (--profile)", "device": torch.cuda.get_device_name(0) if CUDA else "cpu",
            "torch": torch.__version__, "cuda": torch.version.cuda, "dtype": DT,
            "compile": "torch.compile(model, dynamic=False), default mode (no CUDA graphs)",
            "role": "held-out", "quick": QUICK, "about": __doc__.split("\n\n")[0], "cases": []}


def existing(out: str) -> dict:
    """The file an earlier invocation wrote into ``out`` (a subset of cases), or a new one."""
    path = os.path.join(out, OUTNAME)
    if os.path.exists(path):
        with open(path) as fh:
            return json.load(fh)
    return header()


def timing(out: str) -> None:
    """Eager and compiled steps of every case, interleaved rounds, no profiler."""
    doc = existing(out)
    if CASE_SET != "run13" and CUDA:  # this session's host, beside its steps
        doc["host_classes_s"] = harness.tiny_host_classes(DEV, torch.bfloat16, 200, 5)
        say("host classes", {k: round(v * 1e6, 2) for k, v in doc["host_classes_s"].items()})
    cases = build_cases()
    mine = {rec["case"] for rec, _, _ in cases}
    doc["cases"] = [c for c in doc["cases"] if c["case"] not in mine] + [r for r, _, _ in cases]
    write(doc, out)
    per = {id(rec): {"eager": [], "compiled": []} for rec, _, _ in cases}
    with torch.inference_mode():
        for _ in range(ROUNDS):
            for rec, eager, comp in cases:
                if eager is None:
                    continue
                try:
                    per[id(rec)]["eager"] += step_times(eager, STEPS)
                    per[id(rec)]["compiled"] += step_times(comp, STEPS)
                except Exception:  # noqa: BLE001
                    rec["error"] = traceback.format_exc()[-1200:]
    for rec, eager, _ in cases:
        times = per[id(rec)]
        if eager is None or not times["compiled"]:
            continue
        for mode in ("eager", "compiled"):
            rec[f"{mode}_s"] = statistics.median(times[mode])
            rec[f"{mode}_all_s"] = [round(t, 7) for t in times[mode]]
        say(rec["case"], f"eager {rec['eager_s'] * 1e3:.3f} ms  compiled "
            f"{rec['compiled_s'] * 1e3:.3f} ms")
    write(doc, out)


def kernels_of(fn) -> dict:
    """The GPU kernels of one profiled call of ``fn``: count, count per name, and the memsets
    and memory copies apart (from the exported Chrome trace's categories)."""
    events = harness.trace_events(harness.profile_call(fn)[0])
    names = collections.Counter(e["name"] for e in events if e.get("cat") == "kernel")
    other = collections.Counter(e.get("cat") for e in events
                                if e.get("cat") in ("gpu_memset", "gpu_memcpy"))
    triton = sum(n for k, n in names.items() if k.startswith("triton"))
    return {"count": int(sum(names.values())), "triton": int(triton),
            "memsets": int(other.get("gpu_memset", 0)), "memcpys": int(other.get("gpu_memcpy", 0)),
            "names": dict(names.most_common())}


def profiling(out: str) -> None:
    """One profiled compiled and eager step per case, merged into the timing run's file."""
    doc = existing(out)
    recs = {r["case"]: r for r in doc["cases"]}
    with torch.inference_mode():
        for rec, eager, comp in build_cases():
            target = recs.setdefault(rec["case"], rec)
            if rec["case"] not in [r["case"] for r in doc["cases"]]:
                doc["cases"].append(target)
            if eager is None:
                target["profile_error"] = rec.get("error", "")
                continue
            try:
                target["compiled_kernels"] = kernels_of(comp)
                target["eager_kernels"] = kernels_of(eager)
                say(rec["case"], f"kernels compiled {target['compiled_kernels']['count']} "
                    f"(triton {target['compiled_kernels']['triton']}) eager "
                    f"{target['eager_kernels']['count']}")
            except Exception:  # noqa: BLE001
                target["profile_error"] = traceback.format_exc()[-1200:]
                say("ERROR", rec["case"], target["profile_error"])
            write(doc, out)
    doc["profiled"] = True
    write(doc, out)


def main(argv: list[str] | None = None) -> int:
    args = harness.cli(__doc__, argv, flags=[(
        "--profile", "profile one compiled and one eager step per case (a second process)")])
    torch.manual_seed(0)
    if args.profile:
        profiling(harness.OUT)
    else:
        timing(harness.OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
