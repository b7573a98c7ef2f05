# ruff: noqa: E731
"""Run 30 on one H200 (calibration): does a cuBLAS GEMM right after another GEMM start
earlier in a CUDA graph than after a PyTorch elementwise kernel (programmatic dependent
launch), timed without a profiler?

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/pdl_probe.py $OUT

Writes ``$OUT/h200_pdl_probe_run30.json``. Why: the model hides ``host.kernel_tail_s`` when a
GEMM follows a GEMM in a whole model's step (the stack's ``gemm.dependent_launch``), but run
28's profiled graph replays show the same gap between two GEMMs as after any other kernel
(0.45 us), and a profiler may serialise what PDL overlaps. Every case is calibration
(decided before the run, this docstring): CUDA graphs of ``PAIRS`` repetitions of a sequence
of calls, each graph timed between two CUDA events (``ROUNDS`` interleaved rounds, medians,
per repetition):

* ``A`` alone, ``B`` alone, ``add`` alone (back to back: GEMM->GEMM boundaries for A, B);
* ``A, add`` and ``B, add`` (GEMM->elementwise->GEMM: no two GEMMs adjacent);
* ``A, B`` (two different GEMMs, independent: both read ``x``);
* ``A, A2`` dependent (``A2`` reads ``A``'s output) and ``A2`` alone.

``A``: ``x[256, 1024] @ W[1024, 1024]``; ``B``: ``x @ W[1024, 4096]``; ``A2``: ``y[256, 1024] @
W[1024, 1024]`` with ``y`` the output of ``A``; ``add``: ``y + 1`` over ``256 x 1024``; bf16. If
PDL hides a tail ``t`` at each GEMM->GEMM boundary, ``(A, add) - (A + add)/2 x 2`` is about
``+t`` a pair; if not, about 0.
"""

import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

PAIRS = 20
ROUNDS = 9


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    dev, dt = ("cuda", torch.bfloat16) if harness.has_cuda() else ("cpu", torch.float32)
    x = torch.randn(256, 1024, device=dev, dtype=dt)
    wa = torch.randn(1024, 1024, device=dev, dtype=dt) * 0.03
    wb = torch.randn(1024, 4096, device=dev, dtype=dt) * 0.03
    outs = {}
    a = lambda: outs.__setitem__("a", x @ wa)
    b = lambda: outs.__setitem__("b", x @ wb)
    a2 = lambda: outs.__setitem__("a2", outs["a"] @ wa)
    add = lambda: outs.__setitem__("c", outs["a"] + 1)
    a()
    seqs = {"A": [a], "B": [b], "add": [add], "A2": [a2], "A,add": [a, add],
            "B,add": [b, add], "A,B": [a, b], "A,A2": [a, a2]}
    doc = {"run": 30, "role": "calibration", "device": harness.device_info(),
           "about": __doc__.split("\n\n")[0], "pairs": PAIRS, "rounds": ROUNDS,
           "cases": {}, "errors": {}}
    if not harness.has_cuda():
        doc["errors"]["device"] = "no CUDA: nothing timed"
        harness.write_json("h200_pdl_probe_run30.json", doc)
        return
    with torch.inference_mode():
        def body(fns):
            def run():
                for _ in range(PAIRS):
                    for f in fns:
                        f()
            return run
        replays = {k: harness.graph_of(body(fns)) for k, fns in seqs.items()}
        per = harness.graph_rounds_s(list(replays.values()), PAIRS, ROUNDS)
        for (k, _), times in zip(replays.items(), per, strict=True):
            doc["cases"][k] = {"per_repetition_s": statistics.median(times),
                               "rounds_s": [round(t, 10) for t in times]}
            say(k, f"{statistics.median(times) * 1e6:.3f} us per repetition")
        c = {k: v["per_repetition_s"] for k, v in doc["cases"].items()}
        doc["derived_us"] = {
            "A,add - (A + add)": (c["A,add"] - c["A"] - c["add"]) * 1e6,
            "B,add - (B + add)": (c["B,add"] - c["B"] - c["add"]) * 1e6,
            "A,B - (A + B)": (c["A,B"] - c["A"] - c["B"]) * 1e6,
            "A,A2 - (A + A2)": (c["A,A2"] - c["A"] - c["A2"]) * 1e6}
        say("derived", {k: round(v, 3) for k, v in doc["derived_us"].items()})
        doc["kernels"] = {k: harness.profile_kernels(fns[0])["kernels"]
                          for k, fns in seqs.items() if len(fns) == 1}
    harness.write_json("h200_pdl_probe_run30.json", doc)


if __name__ == "__main__":
    main()
