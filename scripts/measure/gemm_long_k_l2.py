# ruff: noqa: E731, B023
"""Run 27 calibration probe: bf16 ``F.linear`` GEMMs with a long K and a narrow N (an FFN's
down projection), whose operand tiles over K stream through L2.

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/gemm_long_k_l2.py $OUT

Writes ``$OUT/h200_gemm_long_k_run27.json``. Why: run 24's calibration profiles show the
FFN's second GEMM of a BERT-base layer (M 2,048, N 768, K 3,072, bias) at 15.4 us in cuBLAS's
``nvjet_sm90_tst_96x128_64x7_2x1`` (132 CTAs, 2x1 clusters), where the model gives 18.7 us,
L2-bound at the 7.9 TB/s of a plain read kernel (``docs/gpu_findings_log.md`` 2026-12-04):
the L2 rate of TMA loads in clusters is what this probe measures. Protocol: ``F.linear(x, W,
b)`` (``W`` is ``N x K``, as ``nn.Linear`` holds it) for every ``(M, N, K)`` of :data:`SHAPES`;
each case is 20 calls captured in one CUDA graph, replayed between two CUDA events (per-call
seconds), in interleaved rounds (median of 7); after every timing round each case's kernels
are profiled once (names, durations, grid), so the profiler never slows a timed call.

The split was fixed before anything was measured (``scripts/data/REGISTRY.yaml``, this
docstring): every case is **calibration** (for the L2 rule of the GEMM model); the held-out
check of whatever it fits is a later run of programs no run timed.
"""

import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

DEV = "cuda" if torch.cuda.is_available() else "cpu"
DT = torch.bfloat16
GRAPH_CALLS, ROUNDS = 20, 7
SHAPES = [(m, n, k) for m in (1024, 2048, 4096, 8192) for n in (768, 1024, 1536)
          for k in (1024, 3072, 4096, 8192)]
"""``(M, N, K)``: tokens, output features, input features."""


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    doc = {"run": 27, "device": harness.device_info(), "role": "calibration",
           "about": __doc__.split("\n\n")[0], "graph_calls": GRAPH_CALLS, "rounds": ROUNDS,
           "cases": [], "errors": {}}
    built = []
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device=DEV, dtype=DT)
        w = torch.randn(n, k, device=DEV, dtype=DT)
        b = torch.randn(n, device=DEV, dtype=DT)
        fn = lambda x=x, w=w, b=b: torch.nn.functional.linear(x, w, b)
        rec = {"m": m, "n": n, "k": k, "bias": True, "role": "calibration"}
        try:
            replay = harness.graph_of(harness.repeat(fn, GRAPH_CALLS))
            built.append((rec, fn, replay))
            doc["cases"].append(rec)
        except Exception as e:  # noqa: BLE001
            doc["errors"][f"{m}x{n}x{k}"] = repr(e)[:300]
    rounds = harness.graph_rounds_s([replay for _, _, replay in built], GRAPH_CALLS, ROUNDS)
    for (rec, fn, _), times in zip(built, rounds, strict=True):
        rec["graph_s"] = statistics.median(times)
        rec["graph_rounds_s"] = times
        rec["tflops"] = 2 * rec["m"] * rec["n"] * rec["k"] / rec["graph_s"] / 1e12
        try:
            rec["kernels"] = harness.kernel_args(fn, ("grid", "block", "cluster"), name_len=160)
        except Exception as e:  # noqa: BLE001
            rec["profile_error"] = repr(e)[:300]
        say(rec["m"], rec["n"], rec["k"], f"{rec['graph_s'] * 1e6:.2f} us",
            f"{rec['tflops']:.0f} TFLOP/s")
    harness.write_json("h200_gemm_long_k_run27.json", doc)


if __name__ == "__main__":
    main()
