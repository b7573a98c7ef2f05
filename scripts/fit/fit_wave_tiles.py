"""Derive cuBLASLt's wave-fitting tile set and choose its wave limit on two calibration sets.

    PYTHONPATH=. python scripts/fit/fit_wave_tiles.py

Data (read through ``data_registry.fit_data``, calibration only):

* ``scripts/data/h200_gemm_waves_run19.json`` (run 19,
  ``scripts/measure/gemm_fractional_waves.py``): bf16 ``x @ W`` of Llama-3-8B's four
  projection shapes at M = 300-2800 tokens, 20 calls per CUDA graph, each case's kernels
  profiled once. Its kernel names give the tiles
  (``nvjet_sm90_<variant>_<BM>x<BN>_...``): **measured**, not fitted; the metric is the
  single-op validator's per-call graph time (the model's GPU time plus the timing method's
  per-call offset, ``h200_kernel_floor_run4.json``).
* ``scripts/data/h200_linear_dw_pool_run4b.json`` ``small_gemm_cal``: ``nn.Linear`` with bias
  at encoder shapes (M 64-3072, N/K 768-3072), kernel names recorded, on which the wave limit
  was first chosen.

The stack's ``gemm.wave_fitting_tiles`` (``configs/software/hopper.yaml``) is every nvjet tile
the two sets' kernels ran (the library's 128x128 ... 256x128 base tiles are the stack's
``tensor_core_tiles`` and stay there); ``gemm.wave_fitting_max_waves`` (the largest number of
128x128-tile waves a GEMM may have and still get those tiles) is chosen from
:data:`WAVE_LIMITS` by the mean of the two sets' MAPEs. The script prints both sets' MAPE and
bias per limit, and the YAML lines; the YAML is set by hand from them, with this script named
as the source.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validate"))
from data_registry import fit_data  # noqa: E402
from validate_gpu import evaluate, small_gemm_cal_cases  # noqa: E402
from validate_gpu_conv import time_op_offset_s  # noqa: E402

from accelsim.api.gpu import simulate_op  # noqa: E402
from accelsim.config.registry import load_machine  # noqa: E402
from accelsim.workload.ops import Gemm  # noqa: E402

SOURCE = "h200_gemm_waves_run19.json"
SMALL_SOURCE = "h200_linear_dw_pool_run4b.json"
OFFSET_SOURCE = "h200_kernel_floor_run4.json"
WAVE_LIMITS = (1, 2, 4, None)
"""Candidate ``wave_fitting_max_waves`` (None: every GEMM)."""
NVJET_TILE = re.compile(r"nvjet_sm90_[a-z]+_(\d+)x(\d+)_")


def canonical(a: int, b: int) -> tuple[int, int]:
    """A tile and its transpose are one candidate (the model tries both orientations; which
    one a kernel name shows depends on the call's transposes): the warpgroup side (a multiple
    of 64 rows) first, the smaller first when both are."""
    if (b % 64 == 0) and (a % 64 != 0 or b < a):
        return b, a
    return a, b


def profiled_tiles(names: list[str], base: tuple[str, ...] = ()) -> list[str]:
    """``BMxBN`` of every nvjet kernel tile in ``names`` (one orientation each) not in
    ``base`` in either orientation, smallest first."""
    known = {canonical(*map(int, t.split("x"))) for t in base}
    tiles = {canonical(int(m.group(1)), int(m.group(2))) for name in names
             if (m := NVJET_TILE.match(name))}
    return [f"{bm}x{bn}" for bm, bn in sorted(tiles) if (bm, bn) not in known]


def run19_kernels(run: dict) -> list[str]:
    return [name for case in run["cases"] for name, _ in case["profile"]["kernels"]]


def run4b_kernels(ops4b: dict) -> list[str]:
    return [k[0] for r in ops4b["sections"]["small_gemm_cal"] if r.get("op") == "linear_bias"
            for k in r.get("kernels", [])]


def run19_errors(machine: object, run: dict, offset_s: float) -> list[float]:
    """Relative errors of the model's per-call graph time on run 19's cases."""
    errs = []
    for case in run["cases"]:
        op = Gemm(name=case["projection"], m=case["m"], n=case["n"], k=case["k"], dtype="bf16")
        doc = simulate_op(machine, op, mode="analytic", exec="graph", call="matmul")
        errs.append((doc["gpu_s"] + offset_s - case["graph_s"]) / case["graph_s"])
    return errs


def _mape_bias(errs: list[float]) -> tuple[float, float]:
    return (100 * sum(abs(e) for e in errs) / len(errs), 100 * sum(errs) / len(errs))


def main() -> None:
    run, ops4b = fit_data(SOURCE), fit_data(SMALL_SOURCE)
    small = small_gemm_cal_cases(ops4b)
    offset_s = time_op_offset_s(fit_data(OFFSET_SOURCE))
    shipped = load_machine("h200")
    base = shipped.stack.gemm.tensor_core_tiles
    only4b = profiled_tiles(run4b_kernels(ops4b), base)
    union = profiled_tiles(run19_kernels(run) + run4b_kernels(ops4b), base)
    print(f"nvjet tiles beyond tensor_core_tiles, run 4b: {', '.join(only4b)}")
    print(f"... and run 19: {', '.join(union)}")

    def score(machine: object) -> tuple[float, float, float, float]:
        m19, b19 = _mape_bias(run19_errors(machine, run, offset_s))
        m4, b4 = _mape_bias([r["rel_err"] for r in evaluate(machine, small, "analytic")])
        return m19, b19, m4, b4

    print(f"\n{'tiles':<10}{'max waves':>10}{'run 19 MAPE':>13}{'bias':>8}"
          f"{'run 4b MAPE':>13}{'bias':>8}{'mean MAPE':>11}")
    best: tuple[float, int | None] | None = None
    for label, tiles in (("run 4b", only4b), ("both", union)):
        for limit in WAVE_LIMITS:
            machine = load_machine("h200", {"stack.gemm.wave_fitting_tiles": tiles,
                                            "stack.gemm.wave_fitting_max_waves": limit})
            m19, b19, m4, b4 = score(machine)
            mean = (m19 + m4) / 2
            print(f"{label:<10}{'any' if limit is None else limit:>10}{m19:>12.1f}%"
                  f"{b19:>+7.1f}%{m4:>12.1f}%{b4:>+7.1f}%{mean:>10.1f}%")
            if tiles is union and (best is None or mean < best[0]):
                best = (mean, limit)
    assert best is not None
    limit = "null" if best[1] is None else best[1]
    print(f"\nconfigs/software/hopper.yaml:\n  wave_fitting_tiles: [{', '.join(union)}]"
          f"\n  wave_fitting_max_waves: {limit}   # mean calibration MAPE {best[0]:.1f} %")


if __name__ == "__main__":
    main()
