"""Whole models on the H200, end to end: predicted step time vs measured, eager and CUDA graph.

    PYTHONPATH=. python scripts/validate/validate_e2e.py [OPTION]

    (no option)     the table and MAPE per group
    --attribution   + GPU time per kernel class
    --floor         + per-kernel gap and floor (run 1)
    --fit-tail      re-fit host.kernel_tail_s (calibration-run2)
    --fit-strided   re-fit strided index cost (calibration-run2)
    --fit-stream    both together (calibration-run2, ~30 min)
    --fit-compiled  compiled host costs (run 7L)
    --csv out.csv
    --zoo-lowering calls  zoo Llama decoders lowered as Hugging Face's calls

Data (``scripts/data/``, measured with ``scripts/measure/e2e.py`` on one H200; its docstring
has the method):

* ``h200_e2e_run2.json``: run 2. Host call costs (``host.call_classes``, the
  calibration of ``host.eager_call_s`` in ``configs/hardware/h200.yaml``) and whole-model
  step times (median of 30 steps, eager and CUDA graph) measured in one session on one host,
  so host-side costs and whole models see the same CPU.
* ``h200_e2e_run3.json``: run 3, measured after the model was frozen: new shapes of every
  model and a model never measured before (GPT-2 small), eager and graph, plus
  ``torch.compile`` steps (a 4-layer Llama-3-8B-shaped decoder: the calibration of
  ``host.eager_call_s.compiled_kernel`` until run 7L; GPT-2 small: dev). Its host measured host
  calls 5-10 % faster than run 2's; the predictions use the YAML's (run 2) constants as they are.
* ``h200_e2e_run4.json``: run 4, measured with the model unchanged since run 3, under the
  interleaved eager protocol (``measure/e2e.py`` ``MEASURE_ROUNDS``: the eager steps of all
  cases of a model taken in alternating rounds over >= 20 s, in a process that never ran
  ``torch.profiler``): the run-3 shapes again (group ``dev-run3-shapes-run4``) and new shapes of
  every model (group ``dev-run4``). Its host-call costs match run 2's within 5 %.
* ``h200_e2e_run7.json``: run 7 (group ``dev-run7``): three models never measured before,
  given to accelsim only as the Hugging Face ``config.json`` files in ``workloads/hf/``
  (Llama 3.2 1B and 3B, Qwen2.5 7B), interleaved eager protocol, with the host's call classes
  measured in the same process (within 5 % of run 2's).
* ``h200_e2e_run14.json``: run 14 (group ``held-out-run14``, **held out**): new shapes of every
  model and of the ``workloads/hf`` configs, eager and CUDA graph, interleaved protocol, never
  profiled; split fixed before it was measured, first scored once at 38d9387.
* ``h200_e2e_run15.json``: run 15 (group ``held-out-run15``, **held out**): shapes no earlier
  run timed, of every model and of the ``workloads/hf`` configs, same protocol as run 14; split
  fixed before it was measured, measured after the model was frozen (0920997), scored once.
* ``h200_e2e_run16.json``: run 16 (group ``held-out-run16``, **held out**): shapes no earlier
  run timed, same protocol; split fixed before it was measured, measured after the fifth
  session's model was frozen, scored once.
* ``h200_e2e_run7c.json``: run 7c, ``torch.compile`` (``dynamic=False``) of the 4-layer Llama's
  calibration shapes and of the ``workloads/hf`` models, every case compiled first and then all
  timed together in interleaved rounds for 40 s (groups ``dev-run7c-calshapes``,
  not fitted on, and ``dev-run7c``); ``host.dynamo`` records Dynamo's graph count and that there
  were no graph breaks.
* ``h200_e2e_run7L.json``: run 7L (calibration, used by ``--fit-compiled`` only): the compiled
  calibration model at 1, 2, 4, 8 and 16 layers (batch 1, context 2048), interleaved rounds,
  host classes within 3 % of run 2's: splits the compiled host cost into a per-step part
  (``compiled_step``) and a per-call part (``compiled_kernel``).
* ``h200_e2e_run4c.json``: run 4c, ``torch.compile`` steps alone in a fresh process (12 warm
  steps, profiled only after all timing): the 4-layer Llama's calibration shapes again
  (group ``dev-run4c-calshapes``: not fitted on) and new shapes of both models
  (``dev-run4c``). Compiled steps are host-bound (Inductor's Python wrapper launches every kernel),
  so they carry the host's fast/slow state: the same calibration shape measured 1.31 ms in run 3 and
  1.96 ms here.
* ``h200_e2e.json``: run 1 (another host, 1.4-1.6x slower host calls): single operators
  timed with ``measure/harness.time_op`` (one 20-call graph per pair of events: about 1 us per
  call above a back-to-back timing, ``h200_kernel_floor_run4.json``), ``torch.profiler`` kernel
  lists of every whole-model case (``--attribution`` compares them per kernel class).

Roles (``scripts/data/REGISTRY.yaml``, what each set was actually used for; group labels say
it). Fitted on whole models (**calibration**): ``host.eager_call_s.python`` (Llama decode,
batch >= 64, run 2), ``compiled_kernel`` and ``compiled_step`` (the Llama-3-8B-shaped decoder
at 1-16 layers, run 7L), ``host.kernel_tail_s`` (the per-kernel cost of a whole model's stream)
and ``compute.strided_instr_per_element`` (index arithmetic of strided pointwise kernels), both
by ``--fit-stream`` on the 25 CUDA-graph steps of Llama-3-8B and ResNet-50 in run 2 (group
``calibration-run2``). **dev** = everything else: GPT-2 XL, BERT-base and MobileNetV2 in run 2
(``dev-run2``), runs 3, 4, 4c, 7 and 7c (``dev-run3`` ...). None of it was fitted on, but the
figures of each were reported before and after model changes, and fits were rejected when one
got worse (``docs/gpu_findings_log.md``), so they are no longer independent evidence; the
registry gives each set the date it became dev and why. No whole-model set is held out now.

Targets (:data:`TARGETS_PCT`, MAPE per group and execution mode, on every group that is not
calibration): the script exits 1 when one is missed, and today it does (eager ``dev-run3``
12.1 %, every compiled group).

Imports: accelsim.api.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim.api.model_run import run_model
from accelsim.workload.models.transformer import LLAMA3_8B, build_transformer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_registry import fit_data, role_of  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
DEV = ("llama3_8b", "resnet50")
"""Run 2's models whose CUDA-graph steps the whole-model constants are fitted on (calibration,
group ``calibration-run2``; the name is historical: they were the models looked at while the
lowering tables were written)."""
OTHER_RUN2 = ("gpt2_xl", "bert_base", "mobilenet_v2")
"""Run 2's other models: never fitted, their figures guided choices (group ``dev-run2``)."""

TARGETS_PCT = {"graph": 5.0, "eager": 10.0, "compiled": 10.0}
"""MAPE targets per execution mode, percent, on each non-calibration group. Source: issue 23's
whole-step targets (CUDA graph <= 5 %, eager <= 10 %; ``scripts/validate/validate_programs.py``),
which issue 26 extends to these sets; compiled steps are host-bound like eager ones and are held to
the eager target."""


HF_CONFIGS = Path(__file__).resolve().parents[2] / "workloads" / "hf"
"""Run 7's models: Hugging Face ``config.json`` files, read by accelsim as users pass them."""


def zoo_spec(case: dict) -> Any:
    """The zoo spec (or graph) of a measured case."""
    m, b = case["model"], case["batch"]
    if (HF_CONFIGS / f"{m}.json").is_file():
        extra = f"context={case['context']}" if case["mode"] == "decode" else f"seq={case['seq']}"
        return f"workloads/hf/{m}.json:mode={case['mode']},batch={b},{extra}"
    if m.startswith("llama3_8b_") and m.endswith("layers"):  # the compiled calibration model
        spec = dataclasses.replace(LLAMA3_8B, name=m, layers=int(m[10:-6]))
        return build_transformer(spec, batch=b, mode="decode", context=case["context"])
    if m in ("resnet50", "mobilenet_v2"):
        return f"{m}:batch={b}"
    if case["mode"] == "decode":
        return f"{m}_decode:batch={b},context={case['context']}"
    if case["mode"] == "prefill":
        return f"{m}_prefill:batch={b},seq={case['seq']}"
    return f"{m}:batch={b},seq={case['seq']}"


def table(path: Path = DATA / "h200_e2e_run2.json", hw: Any = "h200",
          group_of: Any = None) -> pd.DataFrame:
    """One row per (case, execution mode) of a measured file: :func:`table_of` its contents."""
    return table_of(json.loads(path.read_text()), hw, group_of)


def table_of(data: dict, hw: Any = "h200", group_of: Any = None) -> pd.DataFrame:
    """One row per (case, execution mode) of parsed ``data``: measured and predicted step
    time, error, group. ``group_of(case)``: the group a case belongs to (default
    :func:`run2_group`). No file is read here (a fit passes what ``data_registry.fit_data``
    gave it)."""
    rows = []
    cases = [dict(c, _exec=m) for c in data["models"] for m in ("eager", "graph") if m in c]
    cases += [dict(c, _exec="compiled", compiled_mode=c["compiled"])
              for c in data.get("compiled", []) if c.get("compile_mode", "default") == "default"]
    for case in cases:
        spec = zoo_spec(case)
        group = (group_of or run2_group)(case)
        for mode in (case["_exec"],):
            if mode == "compiled":
                case = dict(case, compiled=case["compiled_mode"])
            run = run_model(hw, spec, exec_mode=mode)
            t = run.totals
            meas, pred = case[mode]["median_s"], t["time_s"]
            idle = run.breakdown.set_index("kernel_class")["fraction"].get("host-idle", 0.0)
            label = (spec if isinstance(spec, str) else
                     f"{case['model']}_decode:batch={case['batch']},context={case['context']}")
            rows.append({"group": group, "model": case["model"], "case": label, "exec": mode,
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


_SMALL_SKIP = ("gemm", "attention", "conv")
_FAMILIES = (("reduce", ("reduce_kernel",)), ("cat", ("catarray",)),
             ("splitk_reduce", ("splitkreduce",)),
             ("vectorized", ("vectorized_elementwise",)),
             ("strided", ("elementwise_kernel<", "unrolled_elementwise")))


def kernel_family(name: str) -> str:
    """How PyTorch launched a small profiled kernel: ``vectorized`` (contiguous, vector loads),
    ``strided`` (``elementwise_kernel`` / ``unrolled_elementwise_kernel``: per-element offset
    arithmetic), ``reduce``, ``cat``, ``splitk_reduce``, else ``other``."""
    low = name.lower()
    for fam, keys in _FAMILIES:
        if any(k in low for k in keys):
            return fam
    return "other"


def floor_split(hw: str = "h200",
                models: tuple[str, ...] = DEV) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-kernel floor split into the stream gap and a kernel's own duration, from run 1's
    ``torch.profiler`` traces of the ``models`` (default: :data:`DEV`), CUDA graph steps of
    decoders and CNNs (prefill steps are kernel-bound: their gaps are within the profiler's
    noise on 50-450 ms steps).

    Returns ``(cases, families)``. ``cases``, one row per case (microseconds): ``gap_us`` =
    (graph step - sum of profiled kernel durations) / profiled kernels; ``small_us`` = mean
    profiled duration of the kernels outside the GEMM, attention and conv classes;
    ``model_own_us`` = the model's mean time of the same kernels without ``launch_s`` and
    ``kernel_tail_s`` (startup + CTAs); ``drain_us`` = ``small_us - model_own_us``, what the
    model's ``kernel_tail_s`` stands for. ``families``: median profiled duration of the small
    kernels per launch family (:func:`kernel_family`) and case. ``cases.attrs``: the
    machine's ``launch_s`` and ``kernel_tail_s``. ``compute.reduce_round_trips`` is fitted on
    it, so it reads run 1 as calibration data (``data_registry.fit_data``)."""
    data = fit_data("h200_e2e.json", part="calibration")
    rows, fams = [], []
    for case in data["models"]:
        prof = case.get("profile")
        if case["model"] not in models or not prof or case["mode"] == "prefill":
            continue
        kernels = prof["kernels"]
        step_us = case["graph"]["median_s"] * 1e6
        small = [(name, us) for name, us in kernels if kernel_class(name) not in _SMALL_SKIP]
        run = run_model(hw, zoo_spec(case), exec_mode="graph")
        host = run.machine.host
        calls = run.calls[(run.calls["kernels"] > 0)
                          & ~run.calls["kernel_class"].isin(_SMALL_SKIP)]
        n = int(calls["kernels"].sum())
        own = (calls["gpu_s"].sum() - n * host.kernel_launch_s) * 1e6 / n
        small_us = sum(us for _, us in small) / len(small)
        label = zoo_spec(case)
        rows.append({"case": label, "model": case["model"], "batch": case["batch"],
                     "kernels": len(kernels),
                     "gap_us": (step_us - sum(us for _, us in kernels)) / len(kernels),
                     "small_kernels": len(small), "small_us": small_us,
                     "model_kernels": n, "model_own_us": own, "drain_us": small_us - own})
        by_fam: dict[str, list[float]] = collections.defaultdict(list)
        for name, us in small:
            by_fam[kernel_family(name)].append(us)
        fams += [{"case": label, "family": f, "kernels": len(v),
                  "median_us": float(pd.Series(v).median())} for f, v in sorted(by_fam.items())]
    out = pd.DataFrame(rows)
    out.attrs.update(launch_s=host.launch_s, kernel_tail_s=host.kernel_tail_s)
    return out, pd.DataFrame(fams)


TAIL_GRID_S = tuple(round(0.1 * i, 1) * 1e-6 for i in range(5, 16))
"""Candidate ``host.kernel_tail_s`` values of ``--fit-tail``, seconds."""


STRIDED_GRID = tuple(float(v) for v in range(0, 151, 10))
"""Candidate ``compute.strided_instr_per_element`` values of ``--fit-strided``."""


def fit_dev(field: str, grid: tuple[float, ...], scale: float = 1.0, unit: str = "",
            fixed: dict | None = None) -> float:
    """Least squares on log time of one constant over the CUDA-graph steps of run 2's
    :data:`DEV` models (calibration data, ``data_registry.fit_data``; never another model or
    run), the ``fixed`` overrides held. Prints each candidate's error; returns the best."""
    import math

    from accelsim.config.registry import load_machine

    data = fit_data("h200_e2e_run2.json", part="dev_models")
    data = {**data, "models": [c for c in data["models"] if c["model"] in DEV],
            "compiled": []}
    best = (math.inf, 0.0)
    for v in grid:
        df = table_of(data, hw=load_machine("h200", {**(fixed or {}), field: v}))
        dev = df[df["exec"] == "graph"]
        err = sum(math.log1p(e) ** 2 for e in dev["error"])
        print(f"{field} {v * scale:6.2f}{unit}: sum sq log err {err:.4f}, MAPE "
              f"{100 * dev['error'].abs().mean():4.1f} % ({len(dev)} calibration-run2 graph steps)")
        best = min(best, (err, v))
    print(f"fit {field} = {best[1] * scale:.2f}{unit}")
    return best[1]


def fit_tail(grid: tuple[float, ...] = TAIL_GRID_S) -> float:
    """``host.kernel_tail_s`` on the dev CUDA-graph steps (:func:`fit_dev`)."""
    return fit_dev("host.kernel_tail_s", grid, 1e6, " us")


def fit_stream(sweeps: int = 2) -> tuple[float, float]:
    """``host.kernel_tail_s`` and ``compute.strided_instr_per_element`` together, by
    coordinate descent (:func:`fit_dev` on each in turn, the other held), from the YAML's
    values, on the dev CUDA-graph steps."""
    from accelsim.config.registry import load_machine

    m = load_machine("h200")
    tail, strided = m.host.kernel_tail_s, m.compute.strided_instr_per_element
    for _ in range(sweeps):
        strided = fit_dev("compute.strided_instr_per_element", STRIDED_GRID,
                          fixed={"host.kernel_tail_s": tail})
        tail = fit_dev("host.kernel_tail_s", TAIL_GRID_S, 1e6, " us",
                       fixed={"compute.strided_instr_per_element": strided})
    return tail, strided


def fit_compiled(steps_us: tuple[float, ...] = tuple(range(0, 301, 25)),
                 calls_us: tuple[float, ...] = tuple(v / 2 for v in range(30, 41))) -> tuple:
    """``host.eager_call_s.compiled_step`` and ``compiled_kernel`` by least squares on log
    time over run 7L (calibration: the Llama-3-8B-shaped decoder at 1-16 layers, compiled,
    interleaved rounds; ``h200_e2e_run7L.json``). Prints each depth at the fit; returns
    (step_s, call_s)."""
    import math

    from accelsim.config.registry import load_machine

    cases = fit_data("h200_e2e_run7L.json")["compiled"]
    graphs = [(zoo_spec(c), c["compiled"]["median_s"]) for c in cases]

    def err(step: float, call: float) -> float:
        m = load_machine("h200", {"host.eager_call_s.compiled_step": step,
                                  "host.eager_call_s.compiled_kernel": call})
        return sum(math.log(run_model(m, g, exec_mode="compiled").step_s / t) ** 2
                   for g, t in graphs)

    best = min((err(f * 1e-6, c * 1e-6), f * 1e-6, c * 1e-6) for f in steps_us for c in calls_us)
    print(f"fit compiled_step {best[1] * 1e6:.0f} us, compiled_kernel {best[2] * 1e6:.1f} us "
          f"(sum sq log err {best[0]:.5f})")
    m = load_machine("h200", {"host.eager_call_s.compiled_step": best[1],
                              "host.eager_call_s.compiled_kernel": best[2]})
    for (g, t), c in zip(graphs, cases, strict=True):
        pred = run_model(m, g, exec_mode="compiled").step_s
        print(f"  {c['model']:<20} measured {t * 1e3:6.3f} ms  predicted {pred * 1e3:6.3f} ms "
              f"({100 * (pred / t - 1):+5.1f} %)")
    return best[1], best[2]


def run2_group(case: dict) -> str:
    """Run 2: the models the whole-model constants are fitted on, or the others (dev)."""
    return "calibration-run2" if case["model"] in DEV else "dev-run2"


def run3_group(case: dict) -> str:
    """Run 3: the compiled 4-layer Llama calibrated ``compiled_kernel`` (before run 7L), the
    rest is dev."""
    return "calibration-run3" if case["model"] == "llama3_8b_4layers" else "dev-run3"


def run4_group(case: dict) -> str:
    """Run 4: the run-3 shapes re-measured, or new shapes (both dev)."""
    old = {(c["model"], c["mode"], c["batch"], c["seq"], c["context"])
           for c in json.loads((DATA / "h200_e2e_run3.json").read_text())["models"]}
    key = (case["model"], case["mode"], case["batch"], case["seq"], case["context"])
    return "dev-run3-shapes-run4" if key in old else "dev-run4"


def run4c_group(case: dict) -> str:
    """Run 4c: the compiled calibration model's shapes re-measured (not fitted on), or new
    compiled shapes; both dev."""
    cal = case["model"] == "llama3_8b_4layers" and case["context"] == 2048
    return "dev-run4c-calshapes" if cal else "dev-run4c"


def run7_group(case: dict) -> str:
    """Run 7: the ``workloads/hf`` models (dev since f83605b reported its effect on them)."""
    return "dev-run7"


def run7c_group(case: dict) -> str:
    """Run 7c: the compiled calibration model's shapes again (not fitted on), or the
    ``workloads/hf`` models compiled; both dev."""
    return "dev-run7c-calshapes" if case["model"] == "llama3_8b_4layers" else "dev-run7c"


def run14_group(case: dict) -> str:
    """Run 14: new shapes of every model and the ``workloads/hf`` configs, held out (its split
    fixed in REGISTRY.yaml before it was measured; scored once, at the frozen model)."""
    return "held-out-run14"


def run15_group(case: dict) -> str:
    """Run 15: shapes no earlier run timed, of every model and the ``workloads/hf`` configs,
    held out (split fixed in ``measure/e2e.py`` before it was measured; measured after the
    session's model was frozen, scored once)."""
    return "held-out-run15"


def run16_group(case: dict) -> str:
    """Run 16: shapes no earlier run timed, of every model and the ``workloads/hf`` configs,
    held out (split fixed in ``measure/e2e.py`` before it was measured; measured after the
    fifth session's model was frozen, scored once)."""
    return "held-out-run16"


DATASETS = (("h200_e2e_run2.json", run2_group), ("h200_e2e_run3.json", run3_group),
            ("h200_e2e_run4.json", run4_group), ("h200_e2e_run4c.json", run4c_group),
            ("h200_e2e_run7.json", run7_group), ("h200_e2e_run7c.json", run7c_group),
            ("h200_e2e_run14.json", run14_group), ("h200_e2e_run15.json", run15_group),
            ("h200_e2e_run16.json", run16_group))
"""The whole-model sets scored by default and the group function of each (a set whose file
is not there yet is skipped)."""


def mape(df: pd.DataFrame) -> pd.DataFrame:
    """MAPE per group and execution mode (percent)."""
    g = df.assign(abs_err=df["error"].abs() * 100).groupby(["group", "exec"])
    return g["abs_err"].agg(["mean", "max", "count"]).rename(
        columns={"mean": "mape_pct", "max": "max_pct", "count": "cases"}).reset_index()


def validate(names: tuple[str, ...] | None = None, hw: Any = "h200") -> pd.DataFrame:
    """The case table of :data:`DATASETS` (or those named), all groups together."""
    return pd.concat([table(DATA / name, hw=hw, group_of=group) for name, group in DATASETS
                      if (names is None or name in names) and (DATA / name).is_file()],
                     ignore_index=True)


def missed_targets(m: pd.DataFrame) -> list[str]:
    """One line per (group, exec) of a :func:`mape` table that misses :data:`TARGETS_PCT`
    (calibration groups reproduce fits and are not held to targets); empty: all met."""
    out = []
    for r in m.itertuples(index=False):
        target = TARGETS_PCT.get(r.exec)
        if target is not None and not r.group.startswith("calibration") and r.mape_pct > target:
            out.append(f"{r.group} {r.exec}: MAPE {r.mape_pct:.1f} % > {target:g} %")
    return out


CALIBRATION_PARTS = {"calibration-run2": "dev_models", "calibration-run3": "compiled_calibration"}
"""A calibration group -> its part of the set in ``scripts/data/REGISTRY.yaml``."""


def fidelity_rows(hw: str = "h200") -> list[dict]:
    """The fidelity table's rows (``scripts/fidelity.py``): :func:`mape` per (set, group,
    execution mode) of :data:`DATASETS`, each non-calibration group with the target of
    :func:`missed_targets` (the exit code of :func:`main`)."""
    import fidelity

    out = []
    for name, group_of in DATASETS:
        if not (DATA / name).is_file():
            continue
        df = table(DATA / name, hw=hw, group_of=group_of)
        for r in mape(df).itertuples(index=False):
            sel = df[(df["group"] == r.group) & (df["exec"] == r.exec)]
            cal = r.group.startswith("calibration")
            out.append(fidelity.row(
                "validate_e2e", [(name, CALIBRATION_PARTS.get(r.group)) if cal else name],
                f"{r.group} {r.exec}", errors_pct=list(100 * sel["error"]),
                target_pct=None if cal else TARGETS_PCT.get(r.exec),
                metric="whole-model step time"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attribution", action="store_true",
                    help="also print GPU time per kernel class: profiled vs predicted")
    ap.add_argument("--csv", help="write the case table to this CSV file")
    ap.add_argument("--floor", action="store_true",
                    help="only the per-kernel floor split (gap, own duration) on run 1's DEV "
                         "models")
    ap.add_argument("--fit-tail", action="store_true",
                    help="re-fit host.kernel_tail_s on the calibration-run2 CUDA-graph steps")
    ap.add_argument("--fit-strided", action="store_true",
                    help="re-fit compute.strided_instr_per_element on the calibration-run2 "
                    "CUDA-graph steps")
    ap.add_argument("--fit-compiled", action="store_true",
                    help="re-fit compiled_step and compiled_kernel on run 7L (calibration)")
    ap.add_argument("--fit-stream", action="store_true",
                    help="re-fit kernel_tail_s and strided_instr_per_element together "
                    "(calibration-run2)")
    ap.add_argument("--zoo-lowering", choices=("auto", "ops", "calls"), default=None,
                    help="how zoo decoders lower (devices/gpu_model.py ZOO_LOWERING): op by "
                    "op, as their model code's calls, or auto (Llama-family eager/graph steps "
                    "as calls, the rest op by op)")
    ap.add_argument("--no-held-out", action="store_true",
                    help="score only the calibration and dev sets (a held-out file, by "
                    "scripts/data/REGISTRY.yaml, is not read)")
    args = ap.parse_args(argv)
    if args.zoo_lowering:
        from accelsim.devices import gpu_model

        gpu_model.ZOO_LOWERING = args.zoo_lowering
    if args.fit_tail:
        fit_tail()
        return 0
    if args.fit_strided:
        fit_dev("compute.strided_instr_per_element", STRIDED_GRID)
        return 0
    if args.fit_stream:
        fit_stream()
        return 0
    if args.fit_compiled:
        fit_compiled()
        return 0
    if args.floor:
        cases, fams = floor_split()
        pd.set_option("display.width", 200)
        fmt = {"float_format": lambda v: f"{v:7.2f}", "index": False}
        print(cases.drop(columns=["model", "batch"]).to_string(**fmt))
        least = cases[cases["batch"] == cases.groupby("model")["batch"].transform("min")]
        host = cases.attrs
        print(f"\ngap per kernel: median {cases['gap_us'].median():.2f} us (model launch_s "
              f"{host['launch_s'] * 1e6:.2f}); drain at each model's smallest batch: median "
              f"{least['drain_us'].median():.2f} us (model kernel_tail_s "
              f"{host['kernel_tail_s'] * 1e6:.2f})")
        print()
        print(fams.pivot(index="case", columns="family", values="median_us").to_string(
            float_format=lambda v: f"{v:6.2f}"))
        return 0
    df = validate(tuple(name for name, _ in DATASETS if role_of(DATA / name) != "held-out")
                  if args.no_held_out else None)
    pd.set_option("display.width", 200)
    show = df.assign(measured_ms=df["measured_s"] * 1e3, predicted_ms=df["predicted_s"] * 1e3,
                     error_pct=df["error"] * 100, host_idle_pct=df["host_idle"] * 100)
    cols = ["group", "case", "exec", "measured_ms", "predicted_ms", "error_pct", "host_idle_pct"]
    print(show[cols].to_string(index=False, float_format=lambda v: f"{v:9.3f}"))
    print()
    m = mape(df)
    print(m.to_string(index=False, float_format=lambda v: f"{v:6.1f}"))
    missed = missed_targets(m)
    print("\ntargets (MAPE per non-calibration group: " + ", ".join(
        f"{k} <= {v:g} %" for k, v in TARGETS_PCT.items()) + "; groups by role, "
        "scripts/data/REGISTRY.yaml): " + ("all met" if not missed else "MISSED\n  "
                                           + "\n  ".join(missed)))
    if args.csv:
        df.to_csv(args.csv, index=False)
    if args.attribution:
        a = attribution()
        a = a.assign(profiled_ms=a["profiled_s"] * 1e3, predicted_ms=a["predicted_s"] * 1e3)
        print()
        print(a[["case", "class", "profiled_ms", "predicted_ms"]].to_string(
            index=False, float_format=lambda v: f"{v:9.3f}"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
