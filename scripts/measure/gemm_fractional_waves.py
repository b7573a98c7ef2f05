# ruff: noqa: E731, B023
"""Run 19 calibration probe: bf16 GEMMs of Llama-3-8B's projection shapes at token counts whose
tiles fill a fractional number of waves on the H200 (prefill M = 300-2800).

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/gemm_fractional_waves.py $OUT

Writes ``$OUT/h200_gemm_waves_run19.json``. Why: the plain decoder's prefill steps are
12-30 % slow in the model (runs 12, 17, 18; ``docs/gpu_findings_log.md`` 2026-12-03), their
GEMMs ~90 % of the step, and the dev wave probes (``h200_heldout.json``) sit at near-integer
waves, so they do not say whether cuBLASLt's persistent kernels leave a tail wave at, say,
2.4 waves. Protocol: ``x @ W`` (``W`` is ``K x N``, contiguous) for every ``(M, N, K)``;
each case is 20 calls captured in one CUDA graph, replayed between two CUDA events (per-call
seconds), in interleaved rounds (median of 7); after every timing round, each case's kernels
are profiled once (torch.profiler: names, durations), so the profiler never slows a timed
call.

The split was fixed before anything was measured (``scripts/data/REGISTRY.yaml``): every case
is **calibration** (for the GEMM tile and wave rules of ``configs/software/hopper.yaml``); the
held-out check of whatever it fits is a later run of new program shapes.
"""

import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

DEV, DT = "cuda", torch.bfloat16
GRAPH_CALLS, ROUNDS = 20, 7
TOKENS = (300, 600, 700, 1200, 1400, 1800, 2400, 2800)
PROJECTIONS = {"q_o": (4096, 4096), "kv": (1024, 4096), "gate_up": (14336, 4096),
               "down": (4096, 14336)}
"""Llama-3-8B's projections as ``(N, K)``."""


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    doc = {"run": 19, "device": torch.cuda.get_device_name(0) if harness.has_cuda() else "cpu",
           "torch": torch.__version__, "cuda": torch.version.cuda, "role": "calibration",
           "about": __doc__.split("\n\n")[0], "graph_calls": GRAPH_CALLS, "rounds": ROUNDS,
           "cases": [], "errors": {}}
    built = []
    weights = {name: torch.randn(k, n, device=DEV, dtype=DT)
               for name, (n, k) in PROJECTIONS.items()}
    for m in TOKENS:
        for name, (n, k) in PROJECTIONS.items():
            x = torch.randn(m, k, device=DEV, dtype=DT)
            fn = lambda x=x, w=weights[name]: x @ w
            rec = {"projection": name, "m": m, "n": n, "k": k, "role": "calibration"}
            try:
                replay = harness.graph_of(harness.repeat(fn, GRAPH_CALLS))
                built.append((rec, fn, replay))
                doc["cases"].append(rec)
            except Exception as e:  # noqa: BLE001
                doc["errors"][f"{name}_{m}"] = repr(e)[:300]
    rounds = harness.graph_rounds_s([replay for _, _, replay in built], GRAPH_CALLS, ROUNDS)
    for (rec, fn, _), times in zip(built, rounds, strict=True):
        rec["graph_s"] = statistics.median(times)
        rec["graph_rounds_s"] = times
        rec["tflops"] = 2 * rec["m"] * rec["n"] * rec["k"] / rec["graph_s"] / 1e12
        try:
            rec["profile"] = harness.profile_kernels(fn)
        except Exception as e:  # noqa: BLE001
            rec["profile_error"] = repr(e)[:300]
        say(rec["projection"], rec["m"], f"{rec['graph_s'] * 1e6:.2f} us",
            f"{rec['tflops']:.0f} TFLOP/s")
    harness.write_json("h200_gemm_waves_run19.json", doc)


if __name__ == "__main__":
    main()
