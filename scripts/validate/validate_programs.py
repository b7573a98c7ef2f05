"""Captured plain-PyTorch programs against their H200 measurements (run 8).

    PYTHONPATH=. python scripts/validate/validate_programs.py [--kernels]

Each case of ``scripts/data/h200_programs_run8.json`` is captured on the ``meta`` device from
the same factory the measurement ran (``workloads/programs/plain.py``), lowered through the
eager and CUDA-graph tables and replayed on the ``h200`` machine. Printed apart:

* **calibration** (the smallest shape of each program, whose profiles fixed what each call
  launches): kernel count per class against the profile;
* **the other shapes** (never fitted; held out until 2026-12-02, dev since: their per-case
  rows were read while the captured programs' eager gap was looked into, see
  ``scripts/data/REGISTRY.yaml``): step time, eager and CUDA graph, and kernel counts per
  class.

Targets (issue 23): kernel count per class within 2 % of the profile; the other shapes' whole
steps MAPE <= 5 % in CUDA graphs and <= 10 % in eager (steps of 10 ms and more). Exits 1 when
one of those targets is missed. Needs torch (``pip install 'accelsim[torch]'``).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workloads" / "programs"))

DATA = ROOT / "scripts" / "data" / "h200_programs_run8.json"
GRAPH_TARGET_PCT = 5.0
EAGER_TARGET_PCT = 10.0
EAGER_MIN_STEP_S = 10e-3
KERNEL_TARGET_PCT = 2.0

CLASSES = (("attention", ("sdpa", "flash", "lean_reduction", "fmha", "softmax")),
           ("conv", ("fprop", "convolve")),
           ("gemm", ("nvjet", "gemv", "splitkreduce", "gemm", "cublas")),
           ("norm", ("layer_norm", "batch_norm", "rms",
                     "unrolled_elementwise_kernel<at::native::direct_copy")),
           ("pool", ("pool", "reduce_kernel")),
           ("embedding", ("indexselect", "embedding")),
           ("copy", ("nocast", "catarray", "copy")),
           ("elementwise", ("elementwise",)))
"""Profile kernel name fragments -> the kernel classes accelsim reports (first match)."""


def kernel_class(name: str) -> str:
    """The kernel class of a profiled kernel name (``other`` when none matches)."""
    low = name.lower()
    if low.startswith("memset"):
        return "memset"
    for klass, keys in CLASSES:
        if any(k in low for k in keys):
            return klass
    return "other"


def model_classes(run) -> dict[str, int]:
    """Kernels per class of an accelsim model run (``calls`` table)."""
    g = run.calls.groupby("kernel_class")["kernels"].sum()
    out = {k: int(v) for k, v in g.items() if v > 0}
    if "softmax" in out:
        out["attention"] = out.get("attention", 0) + out.pop("softmax")
    return out


def evaluate(data: dict) -> list[dict]:
    """One row per case and mode: measured and modelled step times and kernel counts."""
    import plain

    from accelsim.api.model_run import run_model
    from accelsim.workload.program_ops import program_workload
    from accelsim.workload.torch_capture import capture_program

    rows = []
    for case in data["programs"]:
        fn, args = getattr(plain, case["program"])(device="meta", **case["params"])
        wl = program_workload(capture_program(fn, *args))
        for mode in ("eager", "graph"):
            if mode not in case:
                continue
            run = run_model("h200", wl, exec_mode=mode)
            rows.append({"program": case["program"], "params": case["params"],
                         "role": case["role"], "mode": mode,
                         "measured_s": case[mode]["median_s"], "model_s": run.step_s,
                         "model_kernels": model_classes(run),
                         "profile_kernels": dict(collections.Counter(
                             kernel_class(k[0])
                             for k in case.get("profile", {}).get("kernels", [])))})
    return rows


def _mape(rows: list[dict]) -> float:
    errs = [abs(r["model_s"] / r["measured_s"] - 1) * 100 for r in rows]
    return sum(errs) / len(errs) if errs else float("nan")


def kernel_count_err_pct(r: dict) -> float:
    """Signed error of a row's total kernel count (model vs profile, memsets left out), %."""
    prof = {k: v for k, v in r["profile_kernels"].items() if k != "memset"}
    return (sum(r["model_kernels"].values()) / max(1, sum(prof.values())) - 1) * 100


def fidelity_rows() -> list[dict]:
    """The fidelity table's rows (``scripts/fidelity.py``): step-time MAPE per role and mode
    (the other shapes' graph steps and eager steps >= 10 ms with the targets of :func:`main`), and
    their total kernel count per case (target: the worst case within 2 %)."""
    import fidelity

    rows = evaluate(json.loads(DATA.read_text()))
    name = DATA.name
    out = []
    for role, src in (("cal", (name, "smallest_shapes")), ("held", name)):
        for mode in ("eager", "graph"):
            sel = [r for r in rows if r["role"] == role and r["mode"] == mode]
            long = [r for r in sel if r["measured_s"] >= EAGER_MIN_STEP_S]
            errs = [100 * (r["model_s"] / r["measured_s"] - 1) for r in sel]
            label = "smallest shapes" if role == "cal" else "other shapes"
            if role == "held" and mode == "eager":
                out.append(fidelity.row(
                    "validate_programs", [src], f"{label} eager, steps ≥ 10 ms",
                    errors_pct=[100 * (r["model_s"] / r["measured_s"] - 1) for r in long],
                    target_pct=EAGER_TARGET_PCT, metric="step time"))
            out.append(fidelity.row(
                "validate_programs", [src], f"{label} {mode}", errors_pct=errs,
                target_pct=GRAPH_TARGET_PCT if (role, mode) == ("held", "graph") else None,
                metric="step time",
                note="profiles fitted, step times not" if role == "cal" else ""))
    counts = [kernel_count_err_pct(r) for r in rows
              if r["role"] == "held" and r["mode"] == "graph" and r["profile_kernels"]]
    out.append(fidelity.row(
        "validate_programs", [name], "other shapes' kernel count (graph)", errors_pct=counts,
        target_pct=KERNEL_TARGET_PCT, met=max(map(abs, counts), default=0.0) <= KERNEL_TARGET_PCT,
        metric="kernels per step", note="target on the worst case"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", action="store_true", help="print kernel counts per class")
    args = ap.parse_args(argv)
    rows = evaluate(json.loads(DATA.read_text()))
    print(f"{'role':<5} {'program':<8} {'params':<44} {'mode':<6} {'measured':>10} "
          f"{'model':>10} {'err':>7}")
    for r in rows:
        p = ",".join(f"{k}={v}" for k, v in r["params"].items())
        print(f"{r['role']:<5} {r['program']:<8} {p:<44} {r['mode']:<6} "
              f"{r['measured_s'] * 1e3:8.3f}ms {r['model_s'] * 1e3:8.3f}ms "
              f"{(r['model_s'] / r['measured_s'] - 1) * 100:+6.1f}%")
    ok = True
    print("\nkernel counts per class (model / profile), graph mode rows:")
    worst = 0.0
    for r in rows:
        if r["mode"] != "graph" or not r["profile_kernels"]:
            continue
        prof = {k: v for k, v in r["profile_kernels"].items() if k != "memset"}
        model = r["model_kernels"]
        total_err = abs(kernel_count_err_pct(r))
        worst = max(worst, total_err) if r["role"] == "held" else worst
        if args.kernels or r["role"] == "cal":
            cls = sorted(set(prof) | set(model))
            detail = " ".join(f"{c}:{model.get(c, 0)}/{prof.get(c, 0)}" for c in cls)
            print(f"  {r['role']:<5} {r['program']:<8} total {sum(model.values())}/"
                  f"{sum(prof.values())} ({total_err:+.1f}%)  {detail}")
    print("\nMAPE by role and mode:")
    for role in ("cal", "held"):
        for mode in ("eager", "graph"):
            sel = [r for r in rows if r["role"] == role and r["mode"] == mode]
            long = [r for r in sel if r["measured_s"] >= EAGER_MIN_STEP_S]
            print(f"  {role:<5} {mode:<6} {_mape(sel):6.1f}%  ({len(sel)} cases; steps >= 10 ms: "
                  f"{_mape(long):.1f}%, {len(long)} cases)")
    held_graph = _mape([r for r in rows if r["role"] == "held" and r["mode"] == "graph"])
    held_eager = _mape([r for r in rows if r["role"] == "held" and r["mode"] == "eager"
                        and r["measured_s"] >= EAGER_MIN_STEP_S])
    for label, value, target in (("other shapes graph", held_graph, GRAPH_TARGET_PCT),
                                 ("other shapes eager (>= 10 ms)", held_eager, EAGER_TARGET_PCT),
                                 ("other shapes kernel count (worst)", worst, KERNEL_TARGET_PCT)):
        met = value <= target
        ok &= met
        print(f"target {label}: {value:.1f}% <= {target}%: {'met' if met else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
