"""Whole models on the H200, end to end: predicted step time vs measured, eager and CUDA graph.

    PYTHONPATH=. python scripts/validate_e2e.py                 # the table and MAPE per group
    PYTHONPATH=. python scripts/validate_e2e.py --attribution   # + GPU time per kernel class
    PYTHONPATH=. python scripts/validate_e2e.py --csv out.csv

Data (``scripts/data/``, measured with ``scripts/measure_e2e.py`` on one H200; its docstring
has the method):

* ``h200_e2e_run2.json``: the validation run. Host call costs (``host.call_classes``, the
  calibration of ``host.eager_call_s`` in ``configs/hardware/h200.yaml``) and whole-model
  step times (median of 30 steps, eager and CUDA graph) measured in one session on one host,
  so host-side costs and whole models see the same CPU.
* ``h200_e2e.json``: run 1 (another host): single operators timed as users call them (the
  per-kernel completion cost is fitted on its small ops), ``torch.profiler`` kernel lists of
  every whole-model case (``--attribution`` compares them per kernel class), compiled steps.

Split: nothing here is fitted on a whole model. **dev** = Llama-3-8B-shaped decoder and
ResNet-50, the models looked at while the lowering tables were written; **held-out** =
GPT-2 XL, BERT-base and MobileNetV2, never looked at before this table was printed.

Imports: accelsim.api.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import pandas as pd

from accelsim.api.model_run import run_model

DATA = Path(__file__).resolve().parent / "data"
DEV = ("llama3_8b", "resnet50")
HELD_OUT = ("gpt2_xl", "bert_base", "mobilenet_v2")


def zoo_spec(case: dict) -> str:
    """The zoo spec of a measured case."""
    m, b = case["model"], case["batch"]
    if m in ("resnet50", "mobilenet_v2"):
        return f"{m}:batch={b}"
    if case["mode"] == "decode":
        return f"{m}_decode:batch={b},context={case['context']}"
    if case["mode"] == "prefill":
        return f"{m}_prefill:batch={b},seq={case['seq']}"
    return f"{m}:batch={b},seq={case['seq']}"


def table(path: Path = DATA / "h200_e2e_run2.json", hw: str = "h200") -> pd.DataFrame:
    """One row per (case, execution mode): measured and predicted step time, error, group."""
    data = json.loads(path.read_text())
    rows = []
    for case in data["models"]:
        spec = zoo_spec(case)
        group = "dev" if case["model"] in DEV else "held-out"
        for mode in ("eager", "graph"):
            if mode not in case:
                continue
            run = run_model(hw, spec, exec_mode=mode)
            t = run.totals
            meas, pred = case[mode]["median_s"], t["time_s"]
            idle = run.breakdown.set_index("kernel_class")["fraction"].get("host-idle", 0.0)
            rows.append({"group": group, "model": case["model"], "case": spec, "exec": mode,
                         "measured_s": meas, "predicted_s": pred,
                         "error": pred / meas - 1.0, "host_idle": idle,
                         "kernels": t.get("kernels", 0)})
    return pd.DataFrame(rows)


_CLASS_RULES = (("attention", ("sdpa", "flash", "fmha", "lean_reduction")),
                ("conv", ("conv", "xmma_fprop", "implicit_gemm", "nhwc")),
                ("gemm", ("nvjet", "gemm", "splitkreduce", "cutlass")),
                ("pool", ("pool",)),
                ("norm", ("layer_norm", "batch_norm", "reduce_kernel", "pow_", "rsqrt")),
                ("copy", ("copy", "memcpy", "memset", "catarray", "cat_")))


def kernel_class(name: str) -> str:
    """Kernel class of a profiled kernel name (first matching rule, else elementwise)."""
    low = name.lower()
    for klass, keys in _CLASS_RULES:
        if any(k in low for k in keys):
            return klass
    return "elementwise"


def attribution(path: Path = DATA / "h200_e2e.json", hw: str = "h200") -> pd.DataFrame:
    """Per case and kernel class: profiled kernel time (run 1) vs predicted GPU time (graph)."""
    data = json.loads(path.read_text())
    rows = []
    for case in data["models"]:
        prof = case.get("profile")
        if not prof:
            continue
        meas: dict[str, float] = collections.Counter()
        for name, us in prof["kernels"]:
            meas[kernel_class(name)] += us * 1e-6
        run = run_model(hw, zoo_spec(case), exec_mode="graph")
        pred = run.breakdown.set_index("kernel_class")["time_s"].to_dict()
        for k in sorted((set(meas) | set(pred)) - {"host-idle"}):
            rows.append({"case": zoo_spec(case), "class": k, "profiled_s": meas.get(k, 0.0),
                         "predicted_s": pred.get(k, 0.0)})
    return pd.DataFrame(rows)


def mape(df: pd.DataFrame) -> pd.DataFrame:
    """MAPE per group and execution mode (percent)."""
    g = df.assign(abs_err=df["error"].abs() * 100).groupby(["group", "exec"])
    return g["abs_err"].agg(["mean", "max", "count"]).rename(
        columns={"mean": "mape_pct", "max": "max_pct", "count": "cases"}).reset_index()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attribution", action="store_true",
                    help="also print GPU time per kernel class: profiled vs predicted")
    ap.add_argument("--csv", help="write the case table to this CSV file")
    args = ap.parse_args(argv)
    df = table()
    pd.set_option("display.width", 200)
    show = df.assign(measured_ms=df["measured_s"] * 1e3, predicted_ms=df["predicted_s"] * 1e3,
                     error_pct=df["error"] * 100, host_idle_pct=df["host_idle"] * 100)
    cols = ["group", "case", "exec", "measured_ms", "predicted_ms", "error_pct", "host_idle_pct"]
    print(show[cols].to_string(index=False, float_format=lambda v: f"{v:9.3f}"))
    print()
    print(mape(df).to_string(index=False, float_format=lambda v: f"{v:6.1f}"))
    if args.csv:
        df.to_csv(args.csv, index=False)
    if args.attribution:
        a = attribution()
        a = a.assign(profiled_ms=a["profiled_s"] * 1e3, predicted_ms=a["predicted_s"] * 1e3)
        print()
        print(a[["case", "class", "profiled_ms", "predicted_ms"]].to_string(
            index=False, float_format=lambda v: f"{v:9.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
