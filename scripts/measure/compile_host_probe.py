# ruff: noqa: E731
"""Run 32: does a process that has run ``torch.compile`` dispatch eager steps slower? (a probe)

Run on the device machine with the image's python3 (PyTorch 2.11):

    PYTHONUNBUFFERED=1 python3 scripts/measure/compile_host_probe.py $OUT

Runs 13 and 31 (``scripts/measure/compiled_programs.py``) timed the plain programs' eager steps
in the process that compiles them: 1.5-1.9x run 12's for the same programs, and 32-47 % slower
than the eager model in run 31, whose host classes (tiny ``nn.Linear``, ``F.layer_norm``,
``torch.add`` calls, probed before any compile) were within 5 % of the reference classes.
This probe separates the two explanations in one process, never profiled: (1) host classes
and eager steps of three plain programs (``decoder`` decode at batch 4, context 512,
``encoder`` at batch 2 x 512, ``cnn`` at batch 4) before anything is compiled; (2) each
compiled (``torch.compile(model, dynamic=False)``, default mode) and warmed up; (3) host
classes and eager steps again, then the compiled steps; rounds interleaved within each phase.

Role: a **calibration probe of a mechanism** (decided before it ran): nothing is fitted on it
and nothing is held out; it says which process state the compiled runs' eager columns were
measured in. Output: ``$OUT/h200_compile_host_probe_run32.json``.
"""

from __future__ import annotations

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import torch  # noqa: E402
from harness import say  # noqa: E402

plain = harness.plain_programs()
QUICK = harness.QUICK
CUDA = harness.has_cuda()
DEV, DT = harness.device_and_dtype()
ROUNDS, STEPS = (2, 2) if QUICK else (5, 5)
CASES = [("decoder_decode_b4_c512", "decoder", {"mode": "decode", "batch": 4, "context": 512}),
         ("encoder_b2_s512", "encoder", {"batch": 2, "seq": 512}),
         ("cnn_b4", "cnn", {"batch": 4})]
if QUICK:
    CASES = [("decoder_decode_b1_c64", "decoder", {"mode": "decode", "batch": 1, "context": 64,
                                                   "layers": 1}),
             ("cnn_b1_s64", "cnn", {"batch": 1, "size": 64})]


def host() -> dict[str, float]:
    return harness.tiny_host_classes(DEV, torch.bfloat16 if CUDA else torch.float32, 200, 5)


def steps(fns: dict[str, object]) -> dict[str, float]:
    per: dict[str, list[float]] = {k: [] for k in fns}
    with torch.inference_mode():
        for _ in range(ROUNDS):
            for k, fn in fns.items():
                per[k] += harness.step_seconds(fn, STEPS)
    return {k: statistics.median(v) for k, v in per.items()}


def main() -> int:
    out = harness.cli(__doc__, sys.argv[1:]).out
    torch.manual_seed(0)
    doc: dict = {"run": 32, "device": torch.cuda.get_device_name(0) if CUDA else "cpu",
                 "torch": torch.__version__, "role": "calibration (mechanism probe)",
                 "about": __doc__.split("\n\n")[0], "quick": QUICK}
    built = {}
    with torch.inference_mode():
        for name, prog, params in CASES:
            model, args = getattr(plain, prog)(device=DEV, dtype=DT, **params)
            built[name] = (model, args)
    eager = {n: (lambda m=m, a=a: m(*a)) for n, (m, a) in built.items()}
    doc["host_before_s"] = host()
    say("host before", {k: round(v * 1e6, 2) for k, v in doc["host_before_s"].items()})
    doc["eager_before_s"] = steps(eager)
    say("eager before", {k: round(v * 1e3, 3) for k, v in doc["eager_before_s"].items()})
    compiled = {}
    with torch.inference_mode():
        for n, (m, a) in built.items():
            c = torch.compile(m, dynamic=False)
            for _ in range(4):
                c(*a)
            harness.sync()
            compiled[n] = (lambda c=c, a=a: c(*a))
    doc["host_after_s"] = host()
    say("host after", {k: round(v * 1e6, 2) for k, v in doc["host_after_s"].items()})
    both = {**{f"eager:{n}": f for n, f in eager.items()},
            **{f"compiled:{n}": f for n, f in compiled.items()}}
    after = steps(both)
    doc["eager_after_s"] = {n.split(":", 1)[1]: v for n, v in after.items()
                            if n.startswith("eager:")}
    doc["compiled_after_s"] = {n.split(":", 1)[1]: v for n, v in after.items()
                               if n.startswith("compiled:")}
    say("eager after", {k: round(v * 1e3, 3) for k, v in doc["eager_after_s"].items()})
    say("compiled", {k: round(v * 1e3, 3) for k, v in doc["compiled_after_s"].items()})
    harness.write_json(os.path.join(out, "h200_compile_host_probe_run32.json"), doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
