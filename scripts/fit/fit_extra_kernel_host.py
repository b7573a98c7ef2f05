"""Fit ``host.extra_kernel_s``: the host time each kernel a library call launches beyond its
main one adds to the call in eager mode.

    PYTHONPATH=. python scripts/fit/fit_extra_kernel_host.py

Data: run 16's calibration probe ``scripts/data/h200_extra_kernel_host_run16.json``
(``scripts/measure/extra_kernel_host.py``; read through ``data_registry.fit_data``): small
``nn.Linear`` and ``nn.Conv2d`` calls timed eagerly back to back (wall clock per call) and in
a CUDA graph (the GPU's side), each profiled once after all timing for the kernels one call
launches. A case counts when the host bounds it (graph time under 80 % of the eager time).

Per call class the reference is a one-kernel call of the same class: for ``nn.Linear`` the
median eager time of its one-kernel cases, for an NCHW ``nn.Conv2d`` its channels-last twin
(same shape, one kernel). Each case with ``n`` extra kernels (profiled count - 1) gives
``delta = eager - reference``; the fit is the least-squares slope through the origin,
``sum(n * delta) / sum(n * n)``. The profiled counts are the library's own choices (which
shapes split K, which NCHW convolutions get transposes), not the model's.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_registry import fit_data  # noqa: E402

SOURCE = "h200_extra_kernel_host_run16.json"
HOST_BOUND = 0.8
"""A case counts when its graph (GPU) time is under this share of its eager time."""


def _kernels(case: dict) -> int:
    return len(case["profile"]["kernels"])


def pairs(doc: dict) -> list[tuple[int, float, dict]]:
    """``(extra kernels, delta seconds, case)`` of every host-bound multi-kernel case."""
    cases = [c for c in doc["cases"] if "profile" in c and c["graph_s"] < HOST_BOUND
             * c["eager_s"]]
    out = []
    lin_ref = statistics.median(c["eager_s"] for c in cases
                                if c["call"] == "nn.Linear" and _kernels(c) == 1)
    for c in cases:
        n = _kernels(c) - 1
        if n <= 0:
            continue
        if c["call"] == "nn.Linear":
            ref = lin_ref
        else:
            twin = [t for t in cases if t["call"] == c["call"] and _kernels(t) == 1
                    and all(t.get(f) == c.get(f) for f in ("n", "c", "h", "w", "k", "r"))]
            if not twin:
                continue
            ref = twin[0]["eager_s"]
        out.append((n, c["eager_s"] - ref, c))
    return out


def fit() -> dict[str, float]:
    """``extra_kernel_s`` and what it rests on."""
    ps = pairs(fit_data(SOURCE))
    slope = sum(n * d for n, d, _ in ps) / sum(n * n for n, _, _ in ps)
    per_class = {}
    for call in sorted({c["call"] for _, _, c in ps}):
        sub = [(n, d) for n, d, c in ps if c["call"] == call]
        per_class[call] = sum(n * d for n, d in sub) / sum(n * n for n, _ in sub)
    return {"extra_kernel_s": slope, "cases": len(ps), **{f"{k} alone": v
                                                          for k, v in per_class.items()}}


def main() -> None:
    r = fit()
    print(f"{SOURCE}: {r['cases']} host-bound cases with extra kernels")
    for k, v in r.items():
        if k != "cases":
            print(f"  {k:24s} {v * 1e6:6.2f} us")


if __name__ == "__main__":
    main()
