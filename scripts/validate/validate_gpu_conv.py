"""Validate the GPU convolution families and CNN glue kernels against H200 measurements.

    PYTHONPATH=. python scripts/validate/validate_gpu_conv.py [OPTION]

    (no option)  the table, calibration + held-out
    --fit        re-derive the conv: constants

Data: ``scripts/data/h200_e2e.json`` ``ops`` (``scripts/measure/e2e.py``: single convs and CNN
glue kernels as PyTorch calls them, bf16, ``channels_last``, batch 1 and 32, with the kernels
one call launches), ``scripts/data/h200_kernel_probe2.json`` ``conv`` (``measure/kernel_probe.py``)
and ``scripts/data/h200_heldout.json`` ``conv2d`` (``measure/heldout_ops_links.py``). Measured:
``graph_s`` (per-call GPU time inside a CUDA graph); predicted: the model's ``time_s``.

Split (``scripts/data/REGISTRY.yaml``): **calibration** = every batch-1 case of
``h200_e2e.json`` (all families and glue kernels), the probe's convs (batch 16/64, tiny-C
stems, 1x1 and 3x3), ``h200_linear_dw_pool_run4b.json`` and ``h200_switch_l2_dw_run5.json``'s
depthwise convs and pools, and one batch-32 case each for the two families whose throughput the
batch-1 cases cannot pin (depthwise ``dw3x3_32_112``, grouped ``grp32_3x3_512_14``). **dev** = all
other batch-32 cases and every ``h200_heldout.json`` conv: never fitted (``--fit`` gets its files
through ``data_registry.fit_data`` and never receives ``h200_heldout.json``), but called "held-out"
until issue 26 while conv refits reported their figures before and after, so not independent
evidence. Target (:data:`FAMILY_TARGET_PCT`): MAPE <= 10 % per family of the dev split; the
script exits 1 when a family misses it. The family column is
the one the measured kernel names show (``convolve_common_engine`` = ``tiny_c_direct``,
``nhwcAddPaddingKernel`` = ``tiny_c_padded``, ``conv2d_c1_k1`` = ``depthwise``, ``nvjet`` =
``gemm_1x1``...); ``model`` is the family the model chose.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
from pathlib import Path

from accelsim.api.gpu import load_gpu, simulate_op
from accelsim.config.registry import load_machine
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.conv import conv_family
from accelsim.workload.nn_ops import BatchNorm2d, Elementwise, Pool2d
from accelsim.workload.ops import Conv2d

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_registry import fit_data  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
FAMILY_TARGET_PCT = 10.0
"""MAPE target per conv / glue family on the dev split, percent (README: single ops "within
10 % per family"; docs/gpu_findings_log.md, "Run 1 profiles and the convolution families")."""
FIT_INPUTS = (("h200_e2e.json", "calibration"), ("h200_kernel_probe2.json", None),
              ("h200_linear_dw_pool_run4b.json", None), ("h200_switch_l2_dw_run5.json", None),
              ("h200_kernel_floor_run4.json", None))
"""(file, registry part) of every set ``--fit`` reads, all calibration data."""
SCORED = ("h200_e2e.json", "h200_kernel_probe2.json", "h200_linear_dw_pool_run4b.json",
          "h200_switch_l2_dw_run5.json", "h200_kernel_floor_run4.json", "h200_heldout.json")
"""Every set the table reads (the fit's and the dev ``h200_heldout.json`` convs)."""
CAL_AT_BATCH_32 = ("conv_dw3x3_32_112_n32", "conv_grp32_3x3_512_14_n32")
US = [i * 0.1e-6 for i in range(0, 41)]
FITS = ((("conv.tile_fixed_s",), ("gemm_1x1", "implicit_gemm"), 1, (US,)),
        (("conv.direct_instr_per_mac", "conv.direct_instr_per_output"), ("tiny_c_direct",), 1,
         ([i * 0.25 for i in range(1, 21)], list(range(0, 301, 5)))),
        (("conv.tiny_c_mma_fraction",), ("tiny_c_padded",), 1, ([i / 100 for i in range(5, 61)],)),
        (("conv.depthwise_instr_per_row", "conv.depthwise_fixed_s"), ("depthwise",), 1,
         (list(range(0, 41)), US)),
        (("conv.grouped_gather_efficiency",), ("grouped",), 16,
         ([i / 100 for i in range(20, 101)],)),
        (("conv.bn_round_trips",), ("batchnorm",), 1, ([i / 10 for i in range(5, 51)],)),
        (("conv.pool_round_trips",), ("maxpool",), 1, ([i / 20 for i in range(5, 81)],)))
"""(fields, calibration groups they are fitted on, smallest batch used, grids), fitted in
this order, each on the values found before it (fields of one entry: a joint grid). The
grouped throughput constant is fitted on its batch-32 calibration case only (at batch 1
that kernel is all fixed cost); depthwise fits its throughput and its fixed cost jointly on
all its calibration cases (batch 1, the batch-32 one, ``h200_linear_dw_pool_run4b.json``'s batch
4-128)."""


def measured_family(op: Conv2d, kernels: list[str]) -> str:
    """The conv family the measured kernel names show."""
    names = " ".join(kernels)
    if "convolve_common_engine" in names:
        return "tiny_c_direct"
    if "nhwcAddPadding" in names:
        return "tiny_c_padded"
    if "conv2d_c1_k1" in names:
        return "depthwise"
    if op.groups > 1:
        return "grouped"
    if "nvjet" in names:
        return "gemm_1x1"
    if not kernels:  # no profile: the shape decides (tiny-C at batch >= 8 is padded)
        fam = conv_family(op, "bf16")
        return "tiny_c_padded" if fam == "tiny_c" else fam
    return "implicit_gemm"


def _conv(r: dict) -> Conv2d:
    return Conv2d(name="c", n=r["n"], c=r["c"], h=r["h"], w=r.get("w", r["h"]), k=r["k"],
                  r=r["r"], s=r.get("s", r["r"]), stride=r["stride"],
                  pad=r.get("pad", r["r"] // 2), groups=r.get("groups", 1), dtype="bf16")


def _glue(r: dict) -> tuple[str, object]:
    n, kind = r["n"], r["case"].rsplit("_n", 1)[0]
    shapes = {"batchnorm_64_112": ("batchnorm", BatchNorm2d(name="bn", n=n, c=64, h=112, w=112)),
              "relu_64_112": ("relu", Elementwise(name="r", rows=n * 112 * 112, cols=64,
                                                  fn="relu")),
              "relu_inplace_256_56": ("relu", Elementwise(name="r", rows=n * 56 * 56, cols=256,
                                                          fn="relu")),
              # y + y: one tensor read twice (the second load hits), so one tensor's traffic
              "add_256_56": ("add", Elementwise(name="a", rows=n * 56 * 56, cols=256,
                                                fn="scale")),
              "maxpool3x3s2_64_112": ("maxpool", Pool2d(name="p", n=n, c=64, h=112, w=112)),
              "avgpool_2048_7": ("avgpool", Pool2d(name="p", n=n, c=2048, h=7, w=7,
                                                   mode="global_avg"))}
    return shapes[kind]


def time_op_offset_s(floor4: dict) -> float:
    """Per-call seconds that ``measure/harness.time_op``'s graph timing adds over an op repeated
    back to back (what the model predicts): it replays one 20-call graph between two events, so
    the graph's launch latency is spread over 20 calls. Measured on the same stack as the
    median of ``e2e_graph_s - graph_ms`` over ``h200_kernel_floor_run4.json`` ``floor_probe`` (the
    two methods side by side on the same ops)."""
    recs = floor4["sections"]["floor_probe"]
    return statistics.median(r["e2e_graph_s"] - r["graph_ms"] * 1e-3 for r in recs)


def cases() -> list[dict]:
    """:func:`cases_of` every set of :data:`SCORED`, read from ``scripts/data``."""
    return cases_of({name: json.loads((DATA / name).read_text()) for name in SCORED})


def cases_of(data: dict[str, dict]) -> list[dict]:
    """Every measured conv / glue case of the parsed sets ``data`` (by file name): group,
    case, op, measured s, split, source, and the timing method's own per-call offset
    (``method_offset_s``, added to the prediction). The dev ``h200_heldout.json`` convs are
    used only when that file is given; no file is read here."""
    out = []
    offset = time_op_offset_s(data["h200_kernel_floor_run4.json"])
    e2e = data["h200_e2e.json"]
    for r in e2e["ops"]:
        if r.get("n") is None or "graph_s" not in r:
            continue
        if r["op"] == "conv2d":
            op = _conv(r)
            group = measured_family(op, [k[0] for k in r["kernels"]])
        else:
            group, op = _glue(r)
        cal = r["n"] == 1 or r["case"] in CAL_AT_BATCH_32
        out.append({"group": group, "case": r["case"], "op": op, "measured_s": r["graph_s"],
                    "split": "calibration" if cal else "dev", "source": "e2e",
                    "kernel_s": _profiled_s(r), "method_offset_s": offset})
    probe = data["h200_kernel_probe2.json"]
    for r in probe["sections"].get("conv", []):
        op = _conv(r)
        out.append({"group": measured_family(op, [k["name"] for k in r["kernels"]]),
                    "case": _label(op), "op": op, "measured_s": r["gpu_ms"] * 1e-3,
                    "split": "calibration", "source": "probe2"})
    ops4b = data["h200_linear_dw_pool_run4b.json"]
    for r in ops4b["sections"].get("small_gemm_cal", []):
        if r.get("op") not in ("depthwise", "avgpool") or "gpu_ms" not in r:
            continue
        if r["op"] == "depthwise":
            op, group = _conv(r), "depthwise"
        else:
            op = Pool2d(name="p", n=r["n"], c=r["c"], h=r["h"], w=r["w"], mode="global_avg")
            group = "avgpool"
        out.append({"group": group, "case": _label4b(r), "op": op,
                    "measured_s": r["gpu_ms"] * 1e-3, "split": "calibration",
                    "source": "ops4b", "kernel_s": _profiled_s(r)})
    ops5 = data["h200_switch_l2_dw_run5.json"]
    for r in ops5["sections"].get("depthwise_cal", []):
        if "gpu_ms" not in r:
            continue
        out.append({"group": "depthwise", "case": _label4b(r).replace("(4b)", "(5)"),
                    "op": _conv({**r, "k": r["c"], "r": 3, "groups": r["c"]}),
                    "measured_s": r["gpu_ms"] * 1e-3, "split": "calibration", "source": "ops5",
                    "kernel_s": _profiled_s(r)})
    held = data.get("h200_heldout.json", {"sections": {}})
    for r in held["sections"].get("conv2d", []):
        op = _conv(r)
        out.append({"group": measured_family(op, []), "case": _label(op), "op": op,
                    "measured_s": r["gpu_ms"] * 1e-3, "split": "dev", "source": "heldout"})
    return out


def _profiled_s(r: dict) -> float | None:
    """Sum of the kernel durations ``torch.profiler`` recorded for one call, seconds."""
    ks = r.get("kernels") or []
    return sum(k[1] for k in ks) * 1e-6 if ks else None


def _label4b(r: dict) -> str:
    if r["op"] == "avgpool":
        return f"avgpool n{r['n']} c{r['c']} {r['h']}^2 (4b)"
    return f"dw n{r['n']} c{r['c']} {r['h']}^2 /{r['stride']} (4b)"


def _label(op: Conv2d) -> str:
    return f"n{op.n} c{op.c} {op.h}^2 k{op.k} {op.r}x{op.s}/{op.stride}"


def evaluate(machine, rows: list[dict]) -> list[dict]:
    """Each case with the model's prediction, error and chosen family."""
    res = []
    for c in rows:
        doc = simulate_op(machine, c["op"], mode="analytic")
        launches = len(plan_op(machine, c["op"]).kernels) * machine.host.launch_s
        pred = doc["time_s"] + c.get("method_offset_s", 0.0)
        res.append({**c, "predicted_s": pred, "model": doc.get("family", doc["path"]),
                    "rel_err": pred / c["measured_s"] - 1.0,
                    "model_kernel_s": doc["time_s"] - launches})
    return res


def report(res: list[dict]) -> dict[tuple[str, str], float]:
    """Print the table and MAPE per (split, group); return the MAPEs in %."""
    mapes: dict[tuple[str, str], float] = {}
    for split in ("calibration", "dev"):
        rows = [r for r in res if r["split"] == split]
        print(f"\n== {split}")
        print(f"{'group':14s} {'case':32s} {'measured':>10s} {'predicted':>10s} {'err':>7s}  "
              "model family")
        for r in rows:
            print(f"{r['group']:14s} {r['case']:32s} {r['measured_s'] * 1e6:8.2f}us "
                  f"{r['predicted_s'] * 1e6:8.2f}us {100 * r['rel_err']:+6.1f}%  {r['model']}")
        print(f"-- MAPE by family ({split})")
        for g in dict.fromkeys(r["group"] for r in rows):
            errs = [abs(r["rel_err"]) for r in rows if r["group"] == g]
            mapes[(split, g)] = 100 * sum(errs) / len(errs)
            print(f"   {g:14s} n={len(errs):2d}  MAPE {mapes[(split, g)]:5.1f}%")
    _report_kernels([r for r in res if r.get("kernel_s") and r["group"] in KERNEL_GROUPS])
    return mapes


KERNEL_GROUPS = ("depthwise", "avgpool")
"""Families whose profiled kernel durations are printed next to the model's (the per-call
times of short kernels carry the per-kernel floor, which the two timing methods disagree
on: ``h200_e2e.json`` single replays vs ``h200_linear_dw_pool_run4b.json`` back-to-back graphs)."""


def _report_kernels(rows: list[dict]) -> None:
    """Profiled kernel durations against the model's kernels less their launch and completion
    (``host.launch_s + kernel_tail_s`` each)."""
    print("\n== kernel durations (torch.profiler) vs the model's kernels without launch/tail")
    for r in rows:
        err = r["model_kernel_s"] / r["kernel_s"] - 1.0
        print(f"{r['group']:14s} {r['case']:32s} {r['kernel_s'] * 1e6:8.2f}us "
              f"{r['model_kernel_s'] * 1e6:8.2f}us {100 * err:+6.1f}%  {r['split']}")
    for g in KERNEL_GROUPS:
        errs = [abs(r["model_kernel_s"] / r["kernel_s"] - 1.0) for r in rows if r["group"] == g]
        if errs:
            print(f"   {g:14s} n={len(errs):2d}  MAPE {100 * sum(errs) / len(errs):5.1f}%")


def fit() -> dict[str, float]:
    """Grid-search each ``conv.`` constant on its calibration groups (least squares on log
    time), in :data:`FITS` order, each fit using the values found before it. Its sets come
    through ``data_registry.fit_data`` (:data:`FIT_INPUTS`, calibration data only)."""
    data = {name: fit_data(name, part) for name, part in FIT_INPUTS}
    cal = [c for c in cases_of(data) if c["split"] == "calibration"]
    found: dict[str, float] = {}
    for fields, groups, min_n, grids in FITS:
        sel = [c for c in cal if c["group"] in groups and c["op"].n >= min_n]
        best = None
        for values in itertools.product(*grids):
            m = load_machine("h200", {**found, **dict(zip(fields, values))})
            err = sum(math.log((simulate_op(m, c["op"], mode="analytic")["time_s"]
                                + c.get("method_offset_s", 0.0)) / c["measured_s"]) ** 2
                      for c in sel)
            if best is None or err < best[1]:
                best = (values, err)
        assert best is not None
        found.update(zip(fields, best[0]))
        print("fit " + ", ".join(f"{f} = {v:.4g}" for f, v in zip(fields, best[0]))
              + f" (sum sq log err {best[1]:.4f}, {len(sel)} cases)")
    return found


SOURCES = {"e2e": "h200_e2e.json", "probe2": "h200_kernel_probe2.json",
           "ops4b": "h200_linear_dw_pool_run4b.json", "ops5": "h200_switch_l2_dw_run5.json",
           "heldout": "h200_heldout.json"}
"""A case's ``source`` -> its file in ``scripts/data``."""


def _source(case: dict) -> tuple[str, str | None]:
    """(file, registry part) of one evaluated case (``h200_e2e.json`` is split by part)."""
    name = SOURCES[case["source"]]
    if name == "h200_e2e.json":
        return name, "calibration" if case["split"] == "calibration" else "ops_batch32"
    return name, None


def fidelity_rows(hw: str = "h200") -> list[dict]:
    """The fidelity table's rows (``scripts/fidelity.py``): MAPE per (split, family) as
    :func:`report` prints it, the dev families with the target of :func:`missed_targets`."""
    import fidelity

    res = evaluate(load_gpu(hw), cases())
    out = []
    for split in ("calibration", "dev"):
        rows = [r for r in res if r["split"] == split]
        for g in dict.fromkeys(r["group"] for r in rows):
            sel = [r for r in rows if r["group"] == g]
            sources = list(dict.fromkeys(_source(r) for r in sel))
            out.append(fidelity.row("validate_gpu_conv", sources, g,
                                    errors_pct=[100 * r["rel_err"] for r in sel],
                                    target_pct=FAMILY_TARGET_PCT if split == "dev" else None,
                                    metric="per-call GPU time (CUDA graph)"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hw", default="h200")
    ap.add_argument("--fit", action="store_true", help="re-fit the conv: constants")
    a = ap.parse_args(argv)
    if a.fit:
        fit()
        return 0
    missed = missed_targets(report(evaluate(load_gpu(a.hw), cases())))
    print(f"\ntargets (MAPE <= {FAMILY_TARGET_PCT:g} % per family of the dev split): "
          + ("all met" if not missed else "MISSED\n  " + "\n  ".join(missed)))
    return 1 if missed else 0


def missed_targets(mapes: dict[tuple[str, str], float]) -> list[str]:
    """One line per dev family of :func:`report`'s MAPEs above :data:`FAMILY_TARGET_PCT`."""
    return [f"dev {g}: MAPE {v:.1f} % > {FAMILY_TARGET_PCT:g} %"
            for (split, g), v in mapes.items() if split == "dev" and v > FAMILY_TARGET_PCT]


if __name__ == "__main__":
    sys.exit(main())
