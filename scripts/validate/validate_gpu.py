"""Validate the GPU model against measurements of a real NVIDIA H200.

    PYTHONPATH=. python scripts/validate/validate_gpu.py [OPTION]

    (no option)  calibration set: the targets
    --heldout    + the cases of h200_heldout.json (dev)
    --fit        re-derive the fitted constants
    --probe      + the probe points (fit quality)
    --cal4       + GEMM calibration run 4 (fit quality)
    --conv       + convs and CNN glue kernels
    --rows       + row-wise/pointwise calibration
    --fit-rows   re-derive the row/pointwise constants
    --small      + nn.Linear with bias, encoder shapes
    --fit-small  re-derive the small-GEMM constants

Calibration set: ``scripts/data/h200_calibration.json`` (a copy of
``shared/reference/h200/calibration.json``): square GEMMs in bf16, fp16, tf32 and fp32, the
HBM copy curve and launch overhead. Targets (:data:`CAL_TARGET_PCT`): MAPE <= 10% on square
GEMMs >= 1024 in every precision and on the copy curve >= 16 MiB; these reproduce the fit of
the efficiencies, so they are fit quality, not validation. ``scripts/data/h200_heldout.json``
(``scripts/measure/heldout_ops_links.py``): never read by ``--fit``, but **dev** data, not held out
(``scripts/data/REGISTRY.yaml``): its figures were reported before and after model changes and
a fit was rejected for one (``gemm_nonpersistent_cta_s``, h200.yaml), and some sections set
constants (clocks and board power under load, the L2/HBM read curve, kernel names). Its
target (:data:`FAMILY_TARGET_PCT`): MAPE <= 10 % per operator family; it is scored on every
run and counts in the exit code (``--heldout`` prints its cases too). Probe set:
``scripts/data/h200_kernel_probe2.json`` (``scripts/measure/kernel_probe.py``), shapes disjoint from
the held-out ones, on which ``--fit`` fits the kernel-family and instruction-cost constants.
GEMM calibration run 4: ``scripts/data/h200_gemm_rows_run4.json`` ``gemm_cal``
(``scripts/measure/gemm_rows_cal.py``): misaligned, mixed-alignment, batched, fp8 and int8 GEMMs
with the kernels cuBLAS launched, also fitted on (groups ``cal4_*``).
Row-wise and pointwise calibration set: ``scripts/data/h200_gemm_rows_run4.json`` (``rowops_cal``,
``pointwise_cal``; ``scripts/measure/gemm_rows_cal.py``), on which ``--fit-rows`` fits the
row-kernel and erf constants; ``h200_heldout.json``'s ``memory_bound`` operators are never
fitted.
Small-GEMM calibration run 4b: ``scripts/data/h200_linear_dw_pool_run4b.json`` ``small_gemm_cal``
(``nn.Linear`` with bias at BERT/GPT-2 shapes, M 64-3072, with the cuBLASLt kernels each call
launched), on which ``--fit-small`` fits ``compute.gemm_kblock_s`` and
``compute.gemm_bias_epilogue_s`` (group ``small_linear_bias``).

Measured times compared are GPU-side: the CUDA-graph per-call time where the measurement has
one (kernels short enough for launch gaps to matter), else the back-to-back median. The
model's ``time_s`` is that same quantity; eager launches are compared with the op called from
eager PyTorch (``simulate_op(..., exec="eager")``).
Predictions come from the model (``accelsim.api.gpu.simulate_op``), never from a table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from accelsim.api.gpu import load_gpu, simulate_op
from accelsim.config.registry import load_machine
from accelsim.hw.gpu.gemm import unaligned_pitch_class
from accelsim.workload.nn_ops import Attention, Elementwise, LayerNorm, Softmax
from accelsim.workload.ops import Conv2d, Gemm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_registry import fit_data  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
MIB = 2 ** 20

CAL_TARGET_PCT = 10.0
"""MAPE target, percent, per calibration group: square GEMMs >= 1024 in each precision and the
copy curve >= 16 MiB (README "Fidelity"; docs/gpu_findings_log.md, "Calibration set and the
first fits")."""
FAMILY_TARGET_PCT = 10.0
"""MAPE target, percent, per operator family of ``h200_heldout.json`` (README: "held-out shapes
and operators within 10 % per family"; dacdf53: "every held-out single-op family now within
10 %"). That set is dev data now (``scripts/data/REGISTRY.yaml``), so meeting it is not
independent evidence."""


def _gpu_ms(rec: dict, graph_key: str = "graph_ms", eager_key: str = "median_ms") -> float:
    g = rec.get(graph_key)
    return g if g else rec[eager_key]


def calibration_cases(cal: dict) -> list[tuple[str, str, object, float, str]]:
    """(group, label, op, measured seconds, field) of the calibration targets."""
    cases = []
    for r in cal["gemm_square"]:
        if r["M"] < 1024:
            continue
        op = Gemm(name="g", m=r["M"], n=r["N"], k=r["K"], dtype=r["dtype"])
        cases.append((f"gemm_{r['dtype']}", f"{r['dtype']} {r['M']}^3", op,
                      _gpu_ms(r) * 1e-3, "time_s"))
    for r in cal["hbm_bandwidth"]:
        if r["bytes"] < 16 * MIB:
            continue
        op = Elementwise(name="copy", rows=1, cols=r["bytes"] // 4, fn="copy", dtype="fp32")
        ms = r["copy_graph_ms"] or r["copy_ms"]
        cases.append(("hbm_copy", f"copy {r['bytes'] / MIB:.0f} MiB", op, ms * 1e-3, "time_s"))
    lo = cal["launch_overhead"]
    tiny = Elementwise(name="tiny", rows=1, cols=1, fn="add", dtype="fp32")
    cases.append(("launch", "graph, per tiny kernel", tiny, lo["graph_per_kernel_us"] * 1e-6,
                  "time_s"))
    cases.append(("launch", "eager, tiny kernel", tiny, lo["eager_tiny_kernel_us"] * 1e-6,
                  "eager"))
    return cases


def heldout_cases(ho: dict) -> list[tuple[str, str, object, float, str]]:
    """(group, label, op, measured seconds, field) of ``h200_heldout.json`` (dev data, named
    held-out when it was measured)."""
    s = ho["sections"]
    cases = []
    for r in s.get("gemm_heldout", []):
        if "gpu_ms" not in r:
            continue
        op = Gemm(name="g", m=r["M"], n=r["N"], k=r["K"], batch=r["batch"],
                  shared_weights=r["batch"] == 1, dtype=r["dtype"])
        tag = f"{r['dtype']}_square" if r["tag"] == "lowp_square" else r["tag"]
        cases.append((f"gemm_{tag}", f"{r['dtype']} b{r['batch']} {r['M']}x{r['N']}x{r['K']}",
                      op, r["gpu_ms"] * 1e-3, "time_s"))
    for r in s.get("conv2d", []):
        op = Conv2d(name="c", n=r["n"], c=r["c"], h=r["h"], w=r["w"], k=r["k"], r=r["r"],
                    s=r["s"], stride=r["stride"], pad=r["pad"], dtype=r["dtype"])
        cases.append(("conv2d", f"n{r['n']} c{r['c']} {r['h']}x{r['w']} k{r['k']} "
                      f"{r['r']}x{r['s']}/{r['stride']}", op, r["gpu_ms"] * 1e-3, "time_s"))
    for r in s.get("attention", []):
        op = Attention(name="a", batch=r["batch"], heads=r["heads"], kv_heads=r["kv_heads"],
                       seq_q=r["seq_q"], seq_kv=r["seq_kv"], head_dim=r["head_dim"],
                       causal=r["causal"], dtype=r["dtype"])
        group = "attention_decode" if r["seq_q"] == 1 else "attention"
        cases.append((group, f"b{r['batch']} h{r['heads']}/{r['kv_heads']} q{r['seq_q']} "
                      f"kv{r['seq_kv']} d{r['head_dim']}{' causal' if r['causal'] else ''}",
                      op, r["gpu_ms"] * 1e-3, "time_s"))
    for r in s.get("memory_bound", []):
        cases.append((r["op"], f"{r['rows']}x{r['cols']}", _row_op(r), r["gpu_ms"] * 1e-3,
                      "time_s"))
    return cases


PROBE_ALSO_IN_HELDOUT = (("probe_bf16_square", "bf16 3072^3"), ("probe_bf16_square", "bf16 6144^3"),
                         ("probe_misaligned", "bf16 3072x3072x3072"), ("probe_relu", "16384x8192"),
                         ("probe_gelu", "16384x8192"), ("probe_layernorm", "16384x8192"),
                         ("probe_softmax", "16384x8192"))
"""(group, label) of the probe points that re-measure an operator of ``h200_heldout.json``: left
out of the probe set, so no fit sees them (a test holds this list equal to the overlap)."""


def probe_cases(pr: dict) -> list[tuple[str, str, object, float, str]]:
    """(group, label, op, measured seconds, field) of ``h200_kernel_probe2.json``, taken to
    understand the kernels and to fit their constants, less :data:`PROBE_ALSO_IN_HELDOUT`."""
    return [c for c in _probe_cases(pr) if (c[0], c[1]) not in PROBE_ALSO_IN_HELDOUT]


def _probe_cases(pr: dict) -> list[tuple[str, str, object, float, str]]:
    s = pr["sections"]
    cases = []
    for r in s.get("int8_fp8", []):
        op = Gemm(name="g", m=r["M"], n=r["N"], k=r["K"], dtype=r["dtype"])
        cases.append((f"probe_{r['dtype']}_square", f"{r['dtype']} {r['M']}^3", op,
                      r["gpu_ms"] * 1e-3, "time_s"))
    for r in s.get("misaligned", []):
        op = Gemm(name="g", m=r["M"], n=r["N"], k=r["K"], dtype=r["dtype"])
        cases.append(("probe_misaligned", f"{r['dtype']} {r['M']}x{r['N']}x{r['K']}", op,
                      r["gpu_ms"] * 1e-3, "time_s"))
    for r in s.get("batched", []):
        op = Gemm(name="g", m=r["M"], n=r["N"], k=r["K"], batch=r["batch"],
                  shared_weights=False, dtype=r["dtype"])
        cases.append(("probe_batched", f"b{r['batch']} {r['M']}x{r['N']}x{r['K']}", op,
                      r["gpu_ms"] * 1e-3, "time_s"))
    for r in s.get("conv", []):
        op = Conv2d(name="c", n=r["n"], c=r["c"], h=r["h"], w=r["w"], k=r["k"], r=r["r"],
                    s=r["s"], stride=r["stride"], pad=r["pad"], dtype=r["dtype"])
        cases.append(("probe_conv2d", f"n{r['n']} c{r['c']} {r['h']}x{r['w']} k{r['k']} "
                      f"{r['r']}x{r['s']}/{r['stride']}", op, r["gpu_ms"] * 1e-3, "time_s"))
    for r in s.get("attention", []):
        op = Attention(name="a", batch=r["batch"], heads=r["heads"], kv_heads=r["kv_heads"],
                       seq_q=r["seq_q"], seq_kv=r["seq_kv"], head_dim=r["head_dim"],
                       causal=r["causal"], dtype=r["dtype"])
        cases.append(("probe_attention", f"b{r['batch']} h{r['heads']} q{r['seq_q']} "
                      f"d{r['head_dim']}{' causal' if r['causal'] else ''}", op,
                      r["gpu_ms"] * 1e-3, "time_s"))
    for r in s.get("rowwise", []):
        cases.append((f"probe_{r['op']}", f"{r['rows']}x{r['cols']}", _row_op(r),
                      r["gpu_ms"] * 1e-3, "time_s"))
    return cases


CAL4_GROUPS = {"align": "cal4_align", "align_mixed": "cal4_align_mixed",
               "batched": "cal4_batched"}


def cal4_gemm_cases(ops4: dict) -> list[tuple[str, str, object, float, str]]:
    """(group, label, op, measured seconds, field) of the GEMM calibration run 4
    (``h200_gemm_rows_run4.json`` ``gemm_cal``, ``scripts/measure/gemm_rows_cal.py``): misaligned
    squares, mixed alignment, batched ``torch.bmm``, fp8 ``_scaled_mm`` and int8 ``_int_mm`` at
    shapes disjoint from the held-out set. Calibration data: the GEMM kernel-family constants are
    fitted on these (``--fit``), never on ``h200_heldout.json``."""
    cases = []
    for r in ops4["sections"].get("gemm_cal", []):
        if "gpu_ms" not in r:
            continue
        b = r["batch"]
        op = Gemm(name="g", m=r["M"], n=r["N"], k=r["K"], batch=b, shared_weights=b == 1,
                  dtype=r["dtype"])
        group = CAL4_GROUPS.get(r["tag"], f"cal4_{r['dtype']}")
        cases.append((group, f"{r['dtype']} b{b} {r['M']}x{r['N']}x{r['K']}", op,
                      r["gpu_ms"] * 1e-3, "time_s"))
    return cases


def cal6_align_cases(ops6: dict) -> list[tuple[str, str, object, float, str]]:
    """(group, label, op, measured seconds, field) of run 6's misaligned GEMMs
    (``h200_graph_align_run6.json`` ``align_probe``: every combination of odd M, N, K around 3072
    and K odd with M = N at several paddings). Calibration data for the two align1 pitch classes."""
    cases = []
    for r in ops6["sections"].get("align_probe", []):
        if "gpu_ms" not in r:
            continue
        op = Gemm(name="g", m=r["M"], n=r["N"], k=r["K"], dtype="bf16")
        cases.append(("cal6_align", f"bf16 b1 {r['M']}x{r['N']}x{r['K']}", op,
                      r["gpu_ms"] * 1e-3, "time_s"))
    return cases


def cal4_kernels(ops4: dict) -> dict[str, str]:
    """Case label -> the main kernel cuBLAS launched (short name, from the profile)."""
    out = {}
    for r in ops4["sections"].get("gemm_cal", []):
        names = [k[0] for k in r.get("kernels", []) if "Memset" not in k[0]]
        if names:
            short = names[0].split("<")[1].split(">")[0] if "<" in names[0] else names[0]
            out[f"{r['dtype']} b{r['batch']} {r['M']}x{r['N']}x{r['K']}"] = (
                short.replace("cutlass_", "").replace("tensorop_", "")
                + (" +splitKreduce" if any("splitK" in n for n in names) else ""))
    return out


def small_gemm_cal_cases(ops4b: dict) -> list[tuple[str, str, object, float, str]]:
    """(group, label, op, measured seconds, field) of the small-GEMM calibration run 4b
    (``h200_linear_dw_pool_run4b.json`` ``small_gemm_cal``, op ``linear_bias``): ``nn.Linear`` with
    bias in bf16 at encoder shapes (M tokens 64-3072; N, K 768-3072), per call in a CUDA graph.
    Calibration data: ``--fit-small`` fits on these, never on ``h200_heldout.json``."""
    cases = []
    for r in ops4b["sections"].get("small_gemm_cal", []):
        if r.get("op") != "linear_bias" or "gpu_ms" not in r:
            continue
        op = Gemm(name="linear", m=r["M"], n=r["N"], k=r["K"], dtype=r["dtype"], bias=True)
        cases.append(("small_linear_bias", f"linear+bias {r['M']}x{r['N']}x{r['K']}", op,
                      r["gpu_ms"] * 1e-3, "time_s"))
    return cases


def small_gemm_kernels(ops4b: dict) -> dict[str, str]:
    """Case label of :func:`small_gemm_cal_cases` -> the cuBLASLt kernels it launched
    (``nvjet_sm90_tst_`` prefix dropped; tile BMxBN, BKxstages, cluster)."""
    out = {}
    for r in ops4b["sections"].get("small_gemm_cal", []):
        if r.get("op") == "linear_bias":
            names = [k[0].replace("nvjet_sm90_tst_", "").split("<")[0].replace("void ", "")
                     for k in r.get("kernels", []) if "Memset" not in k[0]]
            out[f"linear+bias {r['M']}x{r['N']}x{r['K']}"] = " + ".join(names)
    return out


SMALL_GEMM_GRID = {"compute.gemm_kblock_s": tuple(i * 20e-9 for i in range(0, 8)),
                   "compute.gemm_bias_epilogue_s": tuple(i * 0.25e-6 for i in range(0, 13))}
"""Candidate values (seconds) of the small-GEMM constants, searched jointly."""


def fit_small_gemm() -> dict[str, float]:
    """Joint grid search of :data:`SMALL_GEMM_GRID` minimising the sum of squared log errors
    over :func:`small_gemm_cal_cases` of ``h200_linear_dw_pool_run4b.json`` (calibration data,
    ``data_registry.fit_data``). Prints and returns the values."""
    sel = small_gemm_cal_cases(fit_data("h200_linear_dw_pool_run4b.json"))
    keys = list(SMALL_GEMM_GRID)
    best: tuple[float, dict[str, float]] | None = None
    for kb in SMALL_GEMM_GRID[keys[0]]:
        for be in SMALL_GEMM_GRID[keys[1]]:
            cur = {keys[0]: kb, keys[1]: be}
            err = _sq_log_err(load_machine("h200", cur), sel)
            if best is None or err < best[0]:
                best = (err, cur)
    assert best is not None
    print("fit " + ", ".join(f"{k} = {v * 1e9:g} ns" for k, v in best[1].items())
          + f" (sum sq log err {best[0]:.4f}, {len(sel)} cases)")
    return best[1]


ROW_FAMILIES = ("layernorm", "rmsnorm", "softmax", "add", "relu", "gelu_erf")
"""Calibration groups of :func:`rowop_cal_cases` (``rows_<family>``)."""


def rowop_cal_cases(ops4: dict) -> list[tuple[str, str, object, float, str]]:
    """(group, label, op, measured seconds, field) of the row-wise and pointwise calibration
    run (``h200_gemm_rows_run4.json`` ``rowops_cal``, ``pointwise_cal``: PyTorch 2.11 on one H200,
    per call in a CUDA graph of back-to-back calls, the held-out set's method). ``F.gelu`` there
    is the erf form (``gelu_erf``); ``rmsnorm_fused`` is ``F.rms_norm``. Shapes differ from
    the held-out ones; these are the points the row/pointwise constants are fitted on."""
    s = ops4["sections"]
    cases = []
    for r in s.get("rowops_cal", []) + s.get("pointwise_cal", []):
        if "gpu_ms" not in r:
            continue
        fam = {"rmsnorm_fused": "rmsnorm", "gelu": "gelu_erf"}.get(r["op"], r["op"])
        op = _row_op({**r, "op": fam} if fam == "gelu_erf" else r)
        cases.append((f"rows_{fam}", f"{r['rows']}x{r['cols']}", op, r["gpu_ms"] * 1e-3,
                      "time_s"))
    return cases


def _row_op(r: dict) -> object:
    kind = r["op"]
    if kind in ("layernorm", "rmsnorm_fused"):
        return LayerNorm(name="ln", rows=r["rows"], cols=r["cols"], dtype=r["dtype"],
                         rms=kind == "rmsnorm_fused")
    if kind == "softmax":
        return Softmax(name="sm", rows=r["rows"], cols=r["cols"], dtype=r["dtype"])
    return Elementwise(name=kind, rows=r["rows"], cols=r["cols"], fn=kind, dtype=r["dtype"])


def evaluate(machine, cases, mode: str) -> list[dict]:
    rows = []
    for group, label, op, measured, field in cases:
        # "eager": the op as users call it from eager PyTorch (--exec eager), per call
        doc = simulate_op(machine, op, mode=mode, exec="eager" if field == "eager" else None)
        pred = doc["time_s"]
        rows.append({"group": group, "case": label, "measured_s": measured, "predicted_s": pred,
                     "rel_err": (pred - measured) / measured, "bound": doc["bound"],
                     "tile": doc.get("tile"), "waves": doc.get("waves"),
                     "split_k": doc.get("split_k")})
    return rows


def mape(rows: list[dict]) -> float:
    """Mean absolute percentage error of evaluated rows, percent."""
    return 100.0 * sum(abs(r["rel_err"]) for r in rows) / max(1, len(rows))


def group_mapes(rows: list[dict]) -> dict[str, float]:
    """MAPE per group of evaluated rows, percent, in first-seen order."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    return {g: mape(rs) for g, rs in groups.items()}


def missed_targets(cal: dict[str, float], families: dict[str, float]) -> list[str]:
    """One line per group missing its target: calibration GEMM/copy groups against
    :data:`CAL_TARGET_PCT`, every ``h200_heldout.json`` family against
    :data:`FAMILY_TARGET_PCT`; empty: all met."""
    out = [f"calibration {g}: MAPE {v:.1f}% > {CAL_TARGET_PCT:g}%" for g, v in cal.items()
           if (g.startswith("gemm_") or g == "hbm_copy") and v > CAL_TARGET_PCT]
    out += [f"h200_heldout.json {g}: MAPE {v:.1f}% > {FAMILY_TARGET_PCT:g}%"
            for g, v in families.items() if v > FAMILY_TARGET_PCT]
    return out


def report(rows: list[dict], title: str) -> dict[str, float]:
    print(f"\n== {title}")
    print(f"{'group':18s} {'case':36s} {'measured':>11s} {'predicted':>11s} {'err':>7s}  bound")
    for r in rows:
        print(f"{r['group']:18s} {r['case']:36s} {r['measured_s'] * 1e6:9.2f}us "
              f"{r['predicted_s'] * 1e6:9.2f}us {100 * r['rel_err']:+6.1f}%  {r['bound']}"
              + (f" tile={r['tile']} waves={r['waves']:.2f} splitK={r['split_k']}"
                 if r.get("tile") else ""))
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    out = {}
    print(f"-- MAPE by group ({title})")
    for g, rs in groups.items():
        out[g] = mape(rs)
        print(f"   {g:18s} n={len(rs):2d}  MAPE {out[g]:5.1f}%")
    return out


PROBE_FITS = (("compute.legacy_mma_fraction", ("probe_int8_square", "cal4_int8"), 0.2, 1.0),
              ("compute.narrow_mma_fraction",
               ("probe_misaligned", "cal4_align", "cal4_align_mixed"), 0.1, 0.6),
              ("compute.unaligned_mma_fraction",
               ("probe_misaligned", "cal4_align", "cal4_align_mixed", "cal6_align"), 0.05, 0.5),
              ("compute.unaligned_pitch_mma_fraction",
               ("probe_misaligned", "cal4_align", "cal4_align_mixed", "cal6_align"), 0.05, 0.5))


NONPERSISTENT_GRID = (0.0, 0.5e-6, 1e-6, 1.5e-6, 2e-6, 2.5e-6, 3e-6)
"""Values of ``compute.gemm_nonpersistent_cta_s`` tried, seconds (with the fractions refit)."""


def _grid_fit(field: str, sel: list, lo: float, hi: float,
              fixed: dict | None = None) -> tuple[float, float]:
    """(value, sum of squared log errors) of ``field`` over 0.01 steps in [lo, hi]."""
    best = None
    for i in range(round(lo * 100), round(hi * 100) + 1):
        m = load_machine("h200", {**(fixed or {}), field: i / 100})
        err = _sq_log_err(m, sel)
        if best is None or err < best[1]:
            best = (i / 100, err)
    assert best is not None
    return best


def _pitch_class(op: object) -> bool:
    return unaligned_pitch_class(op.dtype, op.k, op.n)


def fit() -> None:
    """Grid search of each fitted constant minimising the sum of squared log errors: the
    efficiencies on the calibration squares; the kernel-family fractions jointly with the
    non-persistent kernels' per-CTA cost on the probe points (``h200_kernel_probe2.json``), GEMM
    calibration run 4 (``h200_gemm_rows_run4.json``) and run 6 (``h200_graph_align_run6.json``) of
    their own family. Every file through ``data_registry.fit_data`` (calibration data only)."""
    cal, probe = fit_data("h200_calibration.json"), fit_data("h200_kernel_probe2.json")
    ops4, ops6 = fit_data("h200_gemm_rows_run4.json"), fit_data("h200_graph_align_run6.json")
    cases = calibration_cases(cal)
    for field, groups in (("compute.mma_efficiency", ("gemm_bf16", "gemm_fp16", "gemm_tf32")),
                          ("compute.simt_efficiency", ("gemm_fp32",))):
        sel = [c for c in cases if c[0] in groups]
        v, err = _grid_fit(field, sel, 0.5, 1.0)
        print(f"fit {field} = {v:.2f} (sum sq log err {err:.4f}, {len(sel)} cases)")
    pcases = probe_cases(probe) + cal4_gemm_cases(ops4) + cal6_align_cases(ops6)
    base = load_gpu("h200")
    fams = []
    for field, groups, lo, hi in PROBE_FITS:  # only the points the model runs on that family
        family = field.split(".")[-1].split("_")[0]
        sel = [c for c in pcases if c[0] in groups
               and simulate_op(base, c[2], mode="analytic")["path"] == family]
        if family == "unaligned":  # the two align1 pitch classes (gemm.unaligned_pitch_class)
            sel = [c for c in sel if _pitch_class(c[2]) == ("pitch" in field)]
        fams.append((field, sel, lo, hi))
    # the per-CTA cost of the non-persistent kernels, jointly with the fractions, on the probe
    # and run-4 points (run 6's 15 align1 GEMMs, one kernel at one size, would outweigh the
    # int8 and align2 families it also sets); then the fractions at that cost, run 6 included
    run6 = [c for c in pcases if c[0] == "cal6_align"]
    best = None
    for fixed in NONPERSISTENT_GRID:
        fx = {"compute.gemm_nonpersistent_cta_s": fixed}
        fits = [(f, len(sel), *_grid_fit(f, [c for c in sel if c not in run6], lo, hi, fx))
                for f, sel, lo, hi in fams if [c for c in sel if c not in run6]]
        total = sum(r[3] for r in fits)
        if best is None or total < best[0]:
            best = (total, fixed, fits)
    assert best is not None
    print(f"fit compute.gemm_nonpersistent_cta_s = {best[1] * 1e6:g} us "
          f"(sum sq log err {best[0]:.4f}, the fractions refit at each value; run 6 left out)")
    for cta_s, what in ((best[1], "at that cost"),
                        (base.compute.gemm_nonpersistent_cta_s, "at the YAML's cost")):
        fx = {"compute.gemm_nonpersistent_cta_s": cta_s}
        for field, sel, lo, hi in fams:
            if sel:
                v, err = _grid_fit(field, sel, lo, hi, fx)
                print(f"fit {field} = {v:.2f} {what} {cta_s * 1e6:g} us "
                      f"(sum sq log err {err:.4f}, {len(sel)} cases)")


def _sq_log_err(m, sel) -> float:
    return sum(math.log(simulate_op(m, op, mode="analytic")["time_s"] / meas) ** 2
               for _, _, op, meas, _ in sel)


def fit_probe_streams() -> None:
    """``transcendental_instr`` (one ``tanhf``) on the probe's tanh-GELU sweep only
    (``h200_kernel_probe2.json``, calibration data through ``data_registry.fit_data``)."""
    gelu = [c for c in probe_cases(fit_data("h200_kernel_probe2.json")) if c[0] == "probe_gelu"]
    best = min((_sq_log_err(load_machine("h200", {"compute.transcendental_instr": v}), gelu), v)
               for v in range(0, 41))
    print(f"fit compute.transcendental_instr = {best[1]} (sum sq log err {best[0]:.4f}, "
          f"{len(gelu)} cases)")


ROW_FIT_MIN_S = 0.0
"""Row/pointwise points shorter than this are left out of ``--fit-rows``. Zero since run 5: an
op timed back to back pays ``host.launch_s`` and its kernel (the calibration's 1.03 us tiny
kernel, matched), so the short points are no longer dominated by a floor the model misses."""
ROW_GRID = {"memory.loaded_hbm_latency_s": (0.9e-6, 1.1e-6, 1.3e-6, 1.5e-6, 1.7e-6, 2.1e-6),
            "compute.row_dependent_issue": (1, 2, 3, 3.5, 4, 5, 6),
            "compute.row_cta_instr": (50, 100, 150, 200),
            "compute.block_reduce_s": (0.0, 0.1e-6, 0.2e-6, 0.5e-6),
            "compute.row_mem_instr": (4, 8, 12, 16, 20),
            "compute.layernorm_instr_per_element": tuple(range(5, 61, 5)),
            "compute.welford_cta_instr": (0, 50, 100, 150, 200, 300),
            "compute.rmsnorm_instr_per_element": tuple(range(2, 41, 2)),
            "compute.softmax_instr_per_element": (1, 2, 3, 4, *range(5, 41, 5)),
            "compute.exp_instr": tuple(range(4, 25, 2))}
"""Candidate values of the row-kernel constants (``hw/gpu/rows.py``)."""


def fit_rows(sweeps: int = 3) -> dict[str, float]:
    """Re-derive the row-kernel constants (coordinate descent over :data:`ROW_GRID`, from
    the YAML's values, least squares on log time) on the ``h200_gemm_rows_run4.json`` layernorm,
    rmsnorm and softmax points >= :data:`ROW_FIT_MIN_S` (all of them), and ``erf_instr`` on its GELU
    points (calibration data through ``data_registry.fit_data``). Prints and returns the
    fitted values."""
    cases = [c for c in rowop_cal_cases(fit_data("h200_gemm_rows_run4.json"))
             if c[3] >= ROW_FIT_MIN_S]
    rows = [c for c in cases if c[0] in ("rows_layernorm", "rows_rmsnorm", "rows_softmax")]
    base = load_gpu("h200")
    cur: dict[str, float] = {}
    for key in ROW_GRID:
        part, name = key.split(".")
        cur[key] = getattr(getattr(base, part), name)
    err = _sq_log_err(load_machine("h200", cur), rows)
    for _ in range(sweeps):
        for key, grid in ROW_GRID.items():
            for v in grid:
                e = _sq_log_err(load_machine("h200", {**cur, key: v}), rows)
                if e < err - 1e-9:
                    err, cur = e, {**cur, key: v}
    print("fit " + ", ".join(f"{k} = {v:g}" for k, v in cur.items())
          + f" (sum sq log err {err:.4f}, {len(rows)} cases)")
    gelu = [c for c in cases if c[0] == "rows_gelu_erf"]
    best = min((_sq_log_err(load_machine("h200", {"compute.erf_instr": v}), gelu), v)
               for v in range(0, 61))
    print(f"fit compute.erf_instr = {best[1]} (sum sq log err {best[0]:.4f}, "
          f"{len(gelu)} cases)")
    return {**cur, "compute.erf_instr": best[1]}


def _with_kernels(rows: list[dict], names: dict[str, str], lib: str, title: str) -> list[dict]:
    """Print ``rows`` with the kernels the library launched for each case; return them."""
    for r in rows:
        r["bound"] = f"{r['bound']} | {lib}: {names.get(r['case'], '?')}"
    report(rows, title)
    return rows


def fidelity_rows(hw: str = "h200", mode: str = "event") -> list[dict]:
    """The fidelity table's rows (``scripts/fidelity.py``): MAPE per calibration group of
    ``h200_calibration.json`` and per family of ``h200_heldout.json``, each with the target
    :func:`missed_targets` holds it to (the exit code of :func:`main`)."""
    import fidelity

    m = load_gpu(hw)
    cal = evaluate(m, calibration_cases(json.loads((DATA / "h200_calibration.json").read_text())),
                   mode)
    dev = evaluate(m, heldout_cases(json.loads((DATA / "h200_heldout.json").read_text())), mode)
    out = []
    for sources, rows, targeted in ((["h200_calibration.json"], cal,
                                     lambda g: g.startswith("gemm_") or g == "hbm_copy"),
                                    (["h200_heldout.json"], dev, lambda g: True)):
        for g in dict.fromkeys(r["group"] for r in rows):
            errs = [100 * r["rel_err"] for r in rows if r["group"] == g]
            target = (CAL_TARGET_PCT if rows is cal else FAMILY_TARGET_PCT) if targeted(g) else None
            out.append(fidelity.row("validate_gpu", sources, g, errors_pct=errs,
                                    target_pct=target, metric="per-call GPU time",
                                    note=f"{mode} mode"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hw", default="h200")
    ap.add_argument("--mode", default="event", choices=("event", "analytic"))
    ap.add_argument("--heldout", action="store_true",
                    help="also print the cases of h200_heldout.json (dev; always scored)")
    ap.add_argument("--fit", action="store_true", help="re-fit the efficiency constants")
    ap.add_argument("--probe", action="store_true",
                    help="also the probe measurements (h200_kernel_probe2.json)")
    ap.add_argument("--cal4", action="store_true",
                    help="also the GEMM calibration run 4 (h200_gemm_rows_run4.json gemm_cal)")
    ap.add_argument("--conv", action="store_true",
                    help="also the conv / CNN-glue table (scripts/validate/validate_gpu_conv.py)")
    ap.add_argument("--rows", action="store_true",
                    help="also the row-wise/pointwise calibration (h200_gemm_rows_run4.json)")
    ap.add_argument("--fit-rows", action="store_true",
                    help="re-fit the row-kernel and erf constants on h200_gemm_rows_run4.json")
    ap.add_argument("--small", action="store_true",
                    help="also the small-GEMM calibration "
                         "(h200_linear_dw_pool_run4b.json small_gemm_cal)")
    ap.add_argument("--fit-small", action="store_true",
                    help="re-fit the small-GEMM constants on h200_linear_dw_pool_run4b.json")
    ap.add_argument("--json", metavar="FILE", help="write all rows to FILE")
    a = ap.parse_args(argv)
    if a.fit:
        fit()
        fit_probe_streams()
        return 0
    if a.fit_rows:
        fit_rows()
        return 0
    if a.fit_small:
        fit_small_gemm()
        return 0
    cal = json.loads((DATA / "h200_calibration.json").read_text())
    probe = json.loads((DATA / "h200_kernel_probe2.json").read_text())
    ops4 = json.loads((DATA / "h200_gemm_rows_run4.json").read_text())
    ops6 = json.loads((DATA / "h200_graph_align_run6.json").read_text())
    ops4b = json.loads((DATA / "h200_linear_dw_pool_run4b.json").read_text())
    m = load_gpu(a.hw)
    rows = evaluate(m, calibration_cases(cal), a.mode)
    res = report(rows, "calibration set (targets; reproduces the efficiency fit)")
    all_rows = list(rows)
    if a.probe:
        prow = evaluate(m, probe_cases(probe), a.mode)
        report(prow, "probe set (h200_kernel_probe2.json: fitted kernel-family constants)")
        all_rows += prow
    if a.cal4:
        all_rows += _with_kernels(evaluate(m, cal4_gemm_cases(ops4), a.mode),
                                  cal4_kernels(ops4), "cuBLAS",
                                  "GEMM calibration run 4 "
                                  "(h200_gemm_rows_run4.json gemm_cal: fitted)")
        crow6 = evaluate(m, cal6_align_cases(ops6), a.mode)
        report(crow6, "misaligned GEMMs of run 6 (h200_graph_align_run6.json align_probe: fitted)")
        all_rows += crow6
    if a.small:
        all_rows += _with_kernels(
            evaluate(m, small_gemm_cal_cases(ops4b), a.mode), small_gemm_kernels(ops4b),
            "cuBLASLt", "small-GEMM calibration run 4b "
                        "(h200_linear_dw_pool_run4b.json small_gemm_cal: fitted)")
    if a.rows:
        rrows = evaluate(m, rowop_cal_cases(ops4), a.mode)
        report(rrows, "row-wise/pointwise calibration (h200_gemm_rows_run4.json: fitted)")
        all_rows += rrows
    hrows = evaluate(m, heldout_cases(json.loads((DATA / "h200_heldout.json").read_text())),
                     a.mode)
    title = "h200_heldout.json (dev: never fitted, its figures guided choices)"
    hres = report(hrows, title) if a.heldout else group_mapes(hrows)
    if not a.heldout:
        print(f"\n-- MAPE by family ({title}; --heldout lists the cases)")
        for g, v in hres.items():
            print(f"   {g:18s} MAPE {v:5.1f}%")
    all_rows += hrows
    if a.conv:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import validate_gpu_conv as vc

        crows = vc.evaluate(m, vc.cases())
        vc.report(crows)
        all_rows += [{k: v for k, v in r.items() if k != "op"} for r in crows]
    if a.json:
        Path(a.json).write_text(json.dumps(all_rows, indent=1, default=str))
    missed = missed_targets(res, hres)
    print(f"\nTARGETS (MAPE <= {CAL_TARGET_PCT:g}% on square GEMMs >= 1024 per precision and copy "
          f">= 16 MiB; <= {FAMILY_TARGET_PCT:g}% per family of h200_heldout.json, dev data): "
          + ("MET" if not missed else "MISSED\n  " + "\n  ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
