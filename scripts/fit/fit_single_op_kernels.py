"""Fit three single-op kernel mechanisms on run 11's graph timings (calibration since 2026-12-03).

    PYTHONPATH=. python scripts/fit/fit_single_op_kernels.py

Data: ``scripts/data/h200_single_ops_run11.json`` (``scripts/measure/single_ops.py``; read
through ``data_registry.fit_data``): single ops as users call them, each replayed 20 times
(SDPA 10) from one CUDA graph between two CUDA events, with one call's profiled kernels. The
metric is the one ``scripts/validate/validate_single_ops.py`` scores: per-call graph time,
the model's GPU time plus the timing method's per-call offset (``h200_kernel_floor_run4.json``,
calibration).

* ``stack gemm.stream_l2_share`` (``configs/software/hopper.yaml``): the share of its
  footprint's L2 hit that a streamed (evict-first) weight operand keeps across back-to-back
  calls of a skinny GEMM (``hw/gpu/gemm.py``). Fitted on the nine ``x @ W`` cases (M <= 32,
  weights 4.7-90 MB): bias-free, so ``compute.gemm_bias_epilogue_s`` (fitted on M >= 64) does
  not enter. Grid 0..1 in steps of 0.05, least mean absolute percentage error.
* ``conv.depthwise_nchw_instr_per_output``, ``conv.depthwise_nchw_instr_per_tap`` and
  ``conv.depthwise_nchw_fixed_s`` (``configs/hardware/h200.yaml``): instructions per output,
  per output and tap, and the fixed time, of PyTorch's native NCHW depthwise kernel
  (``hw/gpu/conv_kernels.py`` ``depthwise_nchw_kernel``). Fitted on run 11's six 3x3 cases
  (256 channels, 28x28, batch 1-32) and run 17's four 5x5 ones
  (``h200_single_ops_run17.json``, calibration since 2026-12-03; 240 channels, 28x28, batch
  5-128): least squares on log time over a grid.

* ``conv.layout_transpose_bytes_per_s`` (``configs/hardware/h200.yaml``): the bandwidth
  (bytes read plus written per second) of cuDNN's ``nchwToNhwc`` / ``nhwcToNchw`` kernels
  (``devices/gpu_op_program.py`` ``layout_copy_s``): the inverse least-squares slope of their
  profiled durations over bytes, the 24 input and output transposes of the twelve NCHW 3x3
  convolutions.

The fit changes only the constant it fits (a copy of the machine); the YAML keeps its value,
to be set by hand with this script's output and its source comment.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validate"))
from data_registry import fit_data  # noqa: E402
from validate_gpu_conv import time_op_offset_s  # noqa: E402
from validate_single_ops import GRAPH_CALLS, op_and_call  # noqa: E402

from accelsim.api.gpu import simulate_op  # noqa: E402
from accelsim.config.registry import load_machine  # noqa: E402

SOURCE = "h200_single_ops_run11.json"
OFFSET_SOURCE = "h200_kernel_floor_run4.json"


def graph_s(machine: object, case: dict, offset_s: float) -> float:
    """The model's per-call graph time of ``case`` (as the single-op validator scores it)."""
    op, call, reps = op_and_call(case)
    g = simulate_op(machine, op, mode="analytic", exec="graph", call=call)
    return g["gpu_s"] + offset_s * GRAPH_CALLS / reps


def with_stack_gemm(machine, **fields):
    """``machine`` with its stack's ``gemm`` fields replaced."""
    gemm = dataclasses.replace(machine.stack.gemm, **fields)
    return dataclasses.replace(machine, stack=dataclasses.replace(machine.stack, gemm=gemm))


def with_conv(machine, **fields):
    """``machine`` with its ``conv`` fields replaced."""
    return dataclasses.replace(machine, conv=dataclasses.replace(machine.conv, **fields))


def _cases(doc: dict, keep) -> list[dict]:
    return [dict(c, run=11) for c in doc["ops"] if keep(c) and c.get("graph_s")]


def fit_stream_l2_share() -> dict[str, float]:
    """``gemm.stream_l2_share`` minimising the ``x @ W`` cases' graph MAPE, and that MAPE."""
    doc = fit_data(SOURCE)
    offset = time_op_offset_s(fit_data(OFFSET_SOURCE))
    cases = _cases(doc, lambda c: c["family"] == "matmul")
    base = load_machine("h200")
    best = None
    for i in range(21):
        share = i / 20
        m = with_stack_gemm(base, stream_l2_share=share)
        err = sum(abs(graph_s(m, c, offset) / c["graph_s"] - 1) for c in cases) / len(cases)
        if best is None or err < best[1] - 1e-12:
            best = (share, err)
    return {"stream_l2_share": best[0], "mape_pct": 100 * best[1], "cases": len(cases)}


DEPTHWISE_SOURCES = (SOURCE, "h200_single_ops_run17.json")
"""The NCHW depthwise fit's runs: run 11's 3x3 and run 17's 5x5 cases (calibration)."""


def _depthwise_cases() -> list[dict]:
    out = []
    for name in DEPTHWISE_SOURCES:
        doc = fit_data(name)
        out += [dict(c, run=doc.get("run", 11)) for c in doc["ops"]
                if c["family"] == "conv2d" and c.get("layout") == "nchw" and c.get("graph_s")
                and c["groups"] == c["c"] and c["groups"] > 1]
    return out


def fit_depthwise_nchw() -> dict[str, float]:
    """``conv.depthwise_nchw_instr_per_output``, ``conv.depthwise_nchw_instr_per_tap`` and
    ``conv.depthwise_nchw_fixed_s`` by least squares on log graph time: a coarse grid
    (0..300 instructions in steps of 10, 0..40 in steps of 1, 0..1 us in steps of 0.1 us),
    then steps of 1 and 0.25 around its best."""
    offset = time_op_offset_s(fit_data(OFFSET_SOURCE))
    cases = _depthwise_cases()
    base = load_machine("h200")

    def loss(fields: dict) -> float:
        m = with_conv(base, **fields)
        return sum(math.log(graph_s(m, c, offset) / c["graph_s"]) ** 2 for c in cases)

    def search(outs, taps, fixes):
        best = None
        for o in outs:
            for t in taps:
                for f in fixes:
                    fields = {"depthwise_nchw_instr_per_output": o,
                              "depthwise_nchw_instr_per_tap": t, "depthwise_nchw_fixed_s": f}
                    sq = loss(fields)
                    if best is None or sq < best[1] - 1e-12:
                        best = (fields, sq)
        return best[0]

    coarse = search(range(0, 301, 10), range(0, 41), [0.3e-6])
    o0, t0 = coarse["depthwise_nchw_instr_per_output"], coarse["depthwise_nchw_instr_per_tap"]
    fine = search([o for o in range(o0 - 10, o0 + 11) if o >= 0],
                  [t0 + k / 4 for k in range(-4, 5) if t0 + k / 4 > 0],
                  [k * 1e-7 for k in range(11)])
    m = with_conv(base, **fine)
    mape = sum(abs(graph_s(m, c, offset) / c["graph_s"] - 1) for c in cases) / len(cases)
    return {**fine, "mape_pct": 100 * mape, "cases": len(cases)}


TRANSPOSES = ("nchwToNhwc", "nhwcToNchw")
"""Name parts of cuDNN's layout transposes in the profiles."""


def transpose_points(doc: dict) -> list[tuple[float, float]]:
    """``(bytes read + written, profiled seconds)`` of the input and output transposes of
    every NCHW, ungrouped, not pointwise convolution (the filter's, of another shape, left
    out): in a profile the input's comes first, then the filter's, the output's last."""
    pts = []
    for c in doc["ops"]:
        if c["family"] != "conv2d" or c.get("layout") != "nchw" or c["groups"] != 1 \
                or c["r"] == 1:
            continue
        ks = [t for name, t in c["kernels"] if any(p in name for p in TRANSPOSES)]
        out_h = (c["h"] + 2 * (c["r"] // 2) - c["r"]) // c["stride"] + 1
        e = 2  # bf16
        x, y = c["n"] * c["c"] * c["h"] * c["w"] * e, c["n"] * c["k"] * out_h * out_h * e
        pts += [(2 * x, ks[0] * 1e-6), (2 * y, ks[-1] * 1e-6)]
    return pts


def fit_layout_transpose() -> dict[str, float]:
    """``conv.layout_transpose_bytes_per_s``: the inverse least-squares slope of profiled
    duration over bytes moved (with an intercept, which the model's kernel costs carry)."""
    pts = transpose_points(fit_data(SOURCE))
    n = len(pts)
    mx = sum(b for b, _ in pts) / n
    my = sum(t for _, t in pts) / n
    slope = sum((b - mx) * (t - my) for b, t in pts) / sum((b - mx) ** 2 for b, _ in pts)
    return {"layout_transpose_bytes_per_s": 1.0 / slope, "intercept_s": my - slope * mx,
            "cases": n}


def main() -> None:
    for fit in (fit_stream_l2_share, fit_depthwise_nchw, fit_layout_transpose):
        r = fit()
        values = ", ".join(f"{k} = {v:.4g}" for k, v in r.items()
                           if k not in ("mape_pct", "cases"))
        mape = f"   graph MAPE {r['mape_pct']:.1f} %" if "mape_pct" in r else ""
        print(f"{SOURCE} ({r['cases']} cases): {values}{mape}")


if __name__ == "__main__":
    main()
