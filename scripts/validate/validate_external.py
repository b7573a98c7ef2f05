"""Validate accelsim against the public measurements of other chips (issue 24, point 7).

    PYTHONPATH=. python scripts/validate/validate_external.py [OPTION]

    (no option)    every set, both splits
    --calibration  the calibration split only
    --fit          re-derive the TPU v4 chip constants (calibration)
    --fit-ampere   re-derive the A100's row-kernel issue rate
    --fit-sgemm    re-derive the A100's SGEMM efficiency
    --copy         re-copy the sets from /work/shared (maintainers)

The sets (``/work/shared/reference/external/``, each with its README; copies with their
source in ``scripts/data/external/``, registered in ``scripts/data/REGISTRY.yaml``):

* ``scalesim_tpuv4_gemm``: 428 GEMMs on a Google TPU v4 **chip** (JAX/XLA, device time of the
  dot fusion per call) -> ``configs/hardware/tpu_v4_chip.yaml`` (two TensorCores, four MXUs
  each, shared HBM, and the costs an XLA call pays: see that file).
* ``llmcompass_a100``: A100 SXM4 GEMMs, softmax, layer norm, GELU and GPT-3 layer ops (wall
  time of one call), NCCL all-reduce of a 4-GPU node -> ``a100`` / ``dgx_a100``.
* ``neusight_h100``: H100 SXM fp32 bmm and nn.Linear (CUDA events around one eager call).
* ``neusight_pcie_variants``: A100 80GB **PCIe** fp32 bmm, linear, layer norm, softmax,
  elementwise (the same timing) -> ``a100_pcie`` (the 300 W board, HBM2e at 1,935 GB/s).

**V100 rows are never read**: the issue holds every V100 measurement back (the V100 is the
generation modelled from its datasheet alone). :func:`is_held_back` drops any case whose
device names a V100, at copy time and again at load time.

**The split** (decided on 2026-12-02 before any accelsim figure of these sets was computed by
this script, and before anything was fitted): a case is *calibration* when
``int(sha256(f"{set}/{case_id}").hexdigest()[:8], 16) % 3 == 0`` (one in three, by hash of
its identity, independent of its shape and of any error), else *held-out*
(:func:`split_of`). The copies store the two splits as the sections ``calibration`` and
``held_out``; a fit reads the calibration section alone through
``data_registry.fit_data(set, part="calibration")``.

**Scored rows** (decided with the split, from the sets' READMEs, on measured values only):
the kernel-dominated rows, measured >= 10x the smallest time of the same (set, device,
operator) in the set, so that the host floor of a single timed call is <= 10 %; compared with
accelsim's ``time_s``. The TPU set is device time of the fusion (no host floor): every row is
scored. Rows under the floor rule are shown apart (against the op called from eager PyTorch,
``simulate_op(..., exec="eager")``), unscored.

**Families**: ``gemm`` (matmul, bmm, linear, a GPT-3 layer's projections and attention GEMMs),
``conv`` (none of these public sets holds one), ``softmax_norm`` (softmax, layer norm),
``elementwise`` (GELU, add, mul, scale, relu), ``collective`` (all-reduce: shown, the issue
sets it no target). Targets on the held-out split: MAPE <= 10 % per family, <= 15 % on the
TPU v4 chip's GEMMs; exit 1 when one is missed.

Fitted (``--fit``, calibration split of ``scalesim_tpuv4_gemm`` only; written into
``configs/hardware/tpu_v4_chip.yaml`` with the fit named): the XLA call costs
``call.dispatch_s``, ``call.sustained_array_fraction``, ``call.convert_elements_per_cycle``
and ``call.output_elements_per_cycle`` (see :func:`fit_tpu_chip`). ``--fit-ampere``
(calibration splits of ``llmcompass_a100`` and ``neusight_pcie_variants``, scored softmax /
layer-norm rows): the A100's row-kernel issue rate ``compute.issue_per_clk_per_sm``, written
into ``configs/hardware/a100.yaml`` (:func:`fit_ampere_rows`; docs/gpu_findings_log.md,
"Ampere row kernels"). ``--fit-sgemm`` (calibration split of ``neusight_pcie_variants``,
scored fp32 GEMM rows): the A100's SGEMM main-loop efficiency ``compute.simt_efficiency``,
written into ``configs/hardware/a100.yaml`` (:func:`fit_ampere_sgemm`). A bmm case
(``batch`` > 1) is a GEMM with one B per batch entry (``shared_weights=False``), as the sets'
READMEs' ``accelsim op ... gemm --batch`` lines say. Nothing is ever chosen by a held-out
figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_registry import fit_data  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = ROOT / "scripts" / "data" / "external"
SHARED = Path("/work/shared/reference/external")
SETS = ("scalesim_tpuv4_gemm", "llmcompass_a100", "neusight_h100", "neusight_pcie_variants")
"""Every public set, in the order shown."""

CALIBRATION_EVERY = 3
"""One case in this many (by hash) is calibration (:func:`split_of`)."""
FLOOR_FACTOR = 10.0
"""A row is kernel-dominated when measured >= this x the smallest time of its operator."""
TARGET = 0.10
"""Held-out MAPE target per family (issue 24)."""
TPU_TARGET = 0.15
"""Held-out MAPE target of the TPU v4 chip GEMMs (issue 24)."""
NO_TARGET = ("collective",)
"""Families shown without a target (the issue sets none)."""
DEV_SINCE = {
    ("llmcompass_a100", "elementwise"):
        "2026-12-04: the pointwise kernels' issue model (hw/gpu/memory.py stream_kernel, the "
        "row kernels' rule carried over; nothing fitted) was adopted with this family's "
        "held-out miss (29.5 %, 2 GELU rows) known",
}
"""Held-out (set, family) groups that guided a model choice: shown as ``dev`` since, with no
target (a held-out figure that has steered the model is no longer held out)."""

FAMILIES = {"matmul": "gemm", "bmm": "gemm", "linear": "gemm", "gemm": "gemm",
            "conv2d": "conv", "softmax": "softmax_norm", "layernorm": "softmax_norm",
            "gelu": "elementwise", "gelu_erf": "elementwise", "add": "elementwise",
            "mul": "elementwise", "scale": "elementwise", "relu": "elementwise",
            "allreduce": "collective"}
"""accelsim operator -> family."""


# -- the split and the copies ----------------------------------------------------------------
def split_of(set_name: str, case_id: str) -> str:
    """``calibration`` or ``held_out`` of one case: by the hash of its identity alone."""
    h = int(hashlib.sha256(f"{set_name}/{case_id}".encode()).hexdigest()[:8], 16)
    return "calibration" if h % CALIBRATION_EVERY == 0 else "held_out"


def is_held_back(case: dict[str, Any]) -> bool:
    """A V100 row (held back by issue 24) or a row its set excludes itself."""
    dev = str(case.get("device", "")) + str(case.get("accelsim_hw", ""))
    return "v100" in dev.lower() or "excluded" in case


def copy_sets(sets: Iterable[str] = SETS) -> list[Path]:
    """Copy each set from :data:`SHARED` into :data:`EXTERNAL`, V100 and excluded rows left
    out, its cases under ``sections.calibration`` / ``sections.held_out`` (:func:`split_of`)."""
    EXTERNAL.mkdir(parents=True, exist_ok=True)
    out = []
    for name in sets:
        src = SHARED / name / "truth.json"
        doc = json.loads(src.read_text())
        cases = [c for c in doc.pop("cases") if not is_held_back(c)]
        doc.pop("split", None)
        sections: dict[str, Any] = {"calibration": {"cases": []}, "held_out": {"cases": []}}
        for c in cases:
            sections[split_of(name, c["id"])]["cases"].append(c)
        doc = {"copied_from": f"{src} (read-only public half; source, commit and files in "
                              f"'source' and that folder's README.md)",
               "held_back": "V100 rows (issue 24) and rows the set marks 'excluded' are not "
                            "copied",
               "split_rule": f"calibration iff int(sha256('{name}/<case id>')[:8], 16) % "
                             f"{CALIBRATION_EVERY} == 0 (scripts/validate/validate_external.py "
                             "split_of), decided before any fit or figure",
               **doc, "sections": sections}
        path = EXTERNAL / f"{name}.json"
        path.write_text(json.dumps(doc, indent=1) + "\n")
        out.append(path)
    return out


def load_set(name: str) -> dict[str, list[dict[str, Any]]]:
    """``{"calibration": cases, "held_out": cases}`` of a copied set (V100 rows dropped again,
    whatever the copy holds)."""
    doc = json.loads((EXTERNAL / f"{name}.json").read_text())
    return {s: [c for c in doc["sections"][s]["cases"] if not is_held_back(c)]
            for s in ("calibration", "held_out")}


# -- what each case is on accelsim ------------------------------------------------------------
TPU_CHIP = "tpu_v4_chip"
"""The machine of the TPU set (configs/hardware/tpu_v4_chip.yaml)."""
PCIE_A100 = "a100_pcie"
"""The A100 80GB PCIe board of neusight_pcie_variants (configs/hardware/a100_pcie.yaml)."""


def machine_of(set_name: str, case: dict[str, Any]) -> str:
    """The accelsim machine a case runs on."""
    if set_name == "scalesim_tpuv4_gemm":
        return TPU_CHIP
    if set_name == "neusight_h100":
        return "h100"
    if set_name == "neusight_pcie_variants":
        return PCIE_A100
    return "dgx_a100" if case["op"] == "allreduce" else "a100"


def family_of(case: dict[str, Any]) -> str:
    """``gemm``, ``conv``, ``softmax_norm``, ``elementwise`` or ``collective``."""
    return FAMILIES[case.get("op", "gemm")]


def build_op(case: dict[str, Any]) -> Any:
    """The accelsim operator of a GPU case (its ``op``, ``args``, ``bias`` and ``dtype``)."""
    from accelsim.workload.registry import OP_TYPES, resolve_op_name

    kind, preset = resolve_op_name(case["op"])
    args = dict(case["args"])
    if case.get("bias"):
        args["bias"] = True
    if kind == "gemm" and int(args.get("batch", 1)) > 1:
        # torch.bmm: one B operand per batch entry, as the sets' READMEs' command lines
        # (`accelsim op HW gemm --batch B ...`, whose CLI default is shared_weights=False)
        args.setdefault("shared_weights", False)
    return OP_TYPES[kind](name=case["id"], **preset, **args, dtype=case.get("dtype"))


def tpu_time_s(case: dict[str, Any], machine: Any) -> float:
    """Seconds of one GEMM call on the TPU chip (the analytic fold-stream schedule, the
    chip's cores and call costs included)."""
    from accelsim.api import simulate
    from accelsim.workload.ops import Gemm

    op = Gemm(name=case["id"], m=case["m"], n=case["n"], k=case["k"], dtype="fp16")
    return float(simulate(machine, op, mode="analytic", energy=False).totals["time_s"])


def gpu_times_s(machine: str, case: dict[str, Any]) -> tuple[float, float]:
    """``(time_s, eager time_s)`` of a GPU case or an all-reduce (``repeat`` calls): the
    kernels back to back, and the op called back to back from eager PyTorch."""
    reps = int(case.get("repeat", 1))
    if case["op"] == "allreduce":
        from accelsim.api.links import collective

        ranks = [f"gpu{i}" for i in range(int(case["args"]["ranks"]))]
        t = float(collective(machine, "allreduce", case["args"]["bytes"], ranks=ranks)["time_s"])
        return reps * t, reps * t
    from accelsim.api.gpu import simulate_op

    op = build_op(case)
    t, mode = op_time_s(machine, op)
    eager = simulate_op(machine, op, mode=mode, exec="eager")
    return reps * t, reps * float(eager["time_s"])


def op_time_s(machine: Any, op: Any) -> tuple[float, str]:
    """``(time_s, mode)`` of a GPU op timed back to back: the event replay, or the closed
    form for a grid the replay refuses (as its message says)."""
    from accelsim.api.gpu import simulate_op

    try:
        return float(simulate_op(machine, op, mode="event")["time_s"]), "event"
    except Exception as exc:  # noqa: BLE001 - the replay refuses huge grids: analytic, as it says
        if "analytic" not in str(exc):
            raise
        return float(simulate_op(machine, op, mode="analytic")["time_s"]), "analytic"


def scored_calibration(name: str, family: str) -> list[dict[str, Any]]:
    """The scored (kernel-dominated) cases of ``family`` in set ``name``'s calibration split,
    read through ``fit_data`` (the floor of the calibration split alone)."""
    part = fit_data(name, part="calibration")["sections"]["calibration"]["cases"]
    cases = [c for c in part if not is_held_back(c)]
    floor = floors(cases)
    return [c for c in cases if family_of(c) == family and float(c["measured_s"]) >=
            FLOOR_FACTOR * floor[(str(c.get("device", "")),
                                  str(c.get("op")) + str(c.get("timing", "")))]]


def floors(cases: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """The smallest measured time per (device, operator) over both splits of a set."""
    out: dict[tuple[str, str], float] = {}
    for c in cases:
        key = (str(c.get("device", "")), str(c.get("op")) + str(c.get("timing", "")))
        out[key] = min(out.get(key, math.inf), float(c["measured_s"]))
    return out


def score_rows(set_name: str, split: dict[str, list[dict[str, Any]]],
               tpu_machine: Any = TPU_CHIP) -> list[dict[str, Any]]:
    """One row per case: split, family, measured, predicted, relative error, and whether it
    is scored (kernel-dominated; every TPU row)."""
    every = split["calibration"] + split["held_out"]
    floor = floors(every)
    rows = []
    for part, cases in split.items():
        for c in cases:
            meas = float(c["measured_s"])
            if set_name == "scalesim_tpuv4_gemm":
                pred, eager, scored, fam = tpu_time_s(c, tpu_machine), None, True, "gemm"
            else:
                fam = family_of(c)
                pred, eager = gpu_times_s(machine_of(set_name, c), c)
                key = (str(c.get("device", "")), str(c.get("op")) + str(c.get("timing", "")))
                scored = meas >= FLOOR_FACTOR * floor[key] or c["op"] == "allreduce"
            role = "dev" if part == "held_out" and (set_name, fam) in DEV_SINCE else part
            rows.append({"set": set_name, "split": role, "family": fam, "id": c["id"],
                         "measured_s": meas, "pred_s": pred if scored else eager,
                         "scored": scored,
                         "err": ((pred if scored else eager) - meas) / meas})
    return rows


# -- the TPU v4 chip's call costs (calibration split only) ----------------------------------
def nonneg_lstsq(a: Any, b: Any) -> Any:
    """Least squares ``a @ x ~ b`` with ``x >= 0``: the columns whose coefficient comes out
    negative are dropped (set to 0), the most negative first, and the rest refitted."""
    import numpy as np

    keep = list(range(a.shape[1]))
    while True:
        sol, *_ = np.linalg.lstsq(a[:, keep], b, rcond=None)
        if (sol >= 0).all() or not keep:
            out = np.zeros(a.shape[1])
            out[keep] = sol
            return out
        keep.pop(int(np.argmin(sol)))


FRACTIONS = [round(0.50 + 0.025 * i, 3) for i in range(21)]
"""The sustained-array fractions tried first by :func:`fit_tpu_chip` (0.50-1.00)."""


def fit_tpu_chip() -> dict[str, float]:
    """tpu_v4_chip's call costs fitted on the calibration split of scalesim_tpuv4_gemm alone:
    ``sustained_array_fraction`` by search (:data:`FRACTIONS`, then a 0.002 step around the
    best); for each, the chip's fold-stream time ``x`` of every calibration GEMM with the
    other call costs off, and ``dispatch_s``, the seconds per converted input element and per
    drained output element (one core's slice, :func:`accelsim.mapping.cores.call_elements`)
    in closed form: ``time = x + dispatch + a * converted + b * drained`` is linear in them,
    non-negative least squares of the relative error. The fraction of least error is kept. Returns
    the four YAML values (rates in elements per cycle per core) and the calibration MAPE."""
    import numpy as np

    from accelsim.config.registry import load_machine
    from accelsim.mapping.cores import call_elements, core_piece
    from accelsim.workload.ops import Gemm

    part = fit_data("scalesim_tpuv4_gemm", part="calibration")["sections"]["calibration"]
    cases = [c for c in part["cases"] if not is_held_back(c)]
    y = np.array([float(c["measured_s"]) for c in cases])
    off = {"call.dispatch_s": 0.0, "call.convert_elements_per_cycle": None,
           "call.output_elements_per_cycle": None}
    chip = load_machine(TPU_CHIP, off)
    feats = np.array([call_elements(chip, core_piece(chip, Gemm(
        name="g", m=c["m"], n=c["n"], k=c["k"], dtype="fp16"))) for c in cases])

    def trial(f: float) -> tuple[float, np.ndarray, float]:
        m = load_machine(TPU_CHIP, {**off, "call.sustained_array_fraction": f})
        x = np.array([tpu_time_s(c, m) for c in cases])
        a = np.column_stack([np.ones_like(y), feats]) / y[:, None]
        coef = nonneg_lstsq(a, (y - x) / y)  # costs are not negative
        err = (x + np.column_stack([np.ones_like(y), feats]) @ coef - y) / y
        return float(np.mean(err ** 2)), coef, float(np.mean(np.abs(err)))

    coarse = {f: trial(f) for f in FRACTIONS}
    best = min(coarse, key=lambda f: coarse[f][0])
    fine = {f: trial(f) for f in {round(best + 0.002 * i, 3) for i in range(-6, 7)}
            if 0 < f <= 1.0}
    f_best = min(fine, key=lambda f: fine[f][0])
    _, (d, a_in, a_out), err = fine[f_best]
    clock = chip.clock_hz
    return {"dispatch_s": float(d), "sustained_array_fraction": f_best,
            "convert_elements_per_cycle": 1.0 / (a_in * clock) if a_in > 0 else None,
            "output_elements_per_cycle": 1.0 / (a_out * clock) if a_out > 0 else None,
            "calibration_mape": err, "cases": len(y)}


# -- the A100's row-kernel issue rate (calibration split only) ------------------------------
ISSUE_RATES = list(range(64, 132, 4))
"""The row kernels' issue rates tried by :func:`fit_ampere_rows`, thread instructions per
clock per SM (64: the GA100 SM's FP32 lanes, 128: its four schedulers' dispatch)."""
AMPERE_SETS = ("llmcompass_a100", "neusight_pcie_variants")
"""The public sets of A100 row kernels (softmax, layer norm)."""


def fit_ampere_rows(rates: Iterable[int] = ISSUE_RATES) -> dict[str, Any]:
    """``compute.issue_per_clk_per_sm`` of the A100 (a100.yaml, inherited by a100_pcie) fitted
    on the scored ``softmax_norm`` rows of the calibration splits of :data:`AMPERE_SETS`: the
    rate of least squared log error (each row on its own machine, :func:`machine_of`).
    Returns the rate, its calibration MAPE and every rate's."""
    from accelsim.api.gpu import simulate_op
    from accelsim.config.registry import load_machine

    rows = [(machine_of(name, c), c) for name in AMPERE_SETS
            for c in scored_calibration(name, "softmax_norm")]
    trials = {}
    for rate in rates:
        ms = {n: load_machine(n, {"compute.issue_per_clk_per_sm": rate})
              for n in {n for n, _ in rows}}
        errs = [math.log(float(simulate_op(ms[n], build_op(c), mode="event")["time_s"])
                         / float(c["measured_s"])) for n, c in rows]
        trials[rate] = (sum(e * e for e in errs) / len(errs),
                        mape([math.expm1(e) for e in errs]))
    best = min(trials, key=lambda r: trials[r][0])
    return {"issue_per_clk_per_sm": best, "calibration_mape": trials[best][1],
            "rows": len(rows), "trials": {r: v[1] for r, v in trials.items()}}


# -- the A100's SGEMM efficiency (calibration split only) ------------------------------------
SIMT_EFFICIENCIES = [round(0.80 + 0.01 * i, 2) for i in range(21)]
"""The SGEMM main-loop efficiencies tried by :func:`fit_ampere_sgemm` (0.80-1.00)."""


def fit_ampere_sgemm(rates: Iterable[float] = SIMT_EFFICIENCIES) -> dict[str, Any]:
    """``compute.simt_efficiency`` of the A100 (a100.yaml, inherited by a100_pcie): the
    fraction of the FP32 lanes' FMA rate cuBLAS's SIMT SGEMM main loops sustain, fitted on
    the scored fp32 ``gemm`` rows of neusight_pcie_variants' calibration split: the value of
    least squared log error. Returns it, its calibration MAPE and every value's."""
    from accelsim.config.registry import load_machine

    rows = [c for c in scored_calibration("neusight_pcie_variants", "gemm")
            if c.get("dtype") == "fp32"]
    trials = {}
    for eff in rates:
        m = load_machine(PCIE_A100, {"compute.simt_efficiency": eff})
        errs = [math.log(op_time_s(m, build_op(c))[0] / float(c["measured_s"])) for c in rows]
        trials[eff] = (sum(e * e for e in errs) / len(errs),
                       mape([math.expm1(e) for e in errs]))
    best = min(trials, key=lambda r: trials[r][0])
    return {"simt_efficiency": best, "calibration_mape": trials[best][1], "rows": len(rows),
            "trials": {r: v[1] for r, v in trials.items()}}


# -- tables and targets ----------------------------------------------------------------------
def mape(errs: list[float]) -> float:
    """Mean absolute relative error (0-1); nan for no rows."""
    return sum(abs(e) for e in errs) / len(errs) if errs else math.nan


def summarise(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Per (set, family, split): scored rows, their MAPE and mean signed error; the unscored
    (host-floor) rows apart."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in rows:
        key = (r["set"], r["family"], r["split"])
        s = out.setdefault(key, {"scored": [], "floor": []})
        s["scored" if r["scored"] else "floor"].append(r["err"])
    return {k: {"n": len(v["scored"]), "mape": mape(v["scored"]),
                "bias": sum(v["scored"]) / len(v["scored"]) if v["scored"] else math.nan,
                "n_floor": len(v["floor"]), "mape_floor": mape(v["floor"])}
            for k, v in sorted(out.items())}


def target_of(set_name: str, family: str) -> float | None:
    """The held-out MAPE target of a family of a set (None: no target)."""
    if family in NO_TARGET:
        return None
    return TPU_TARGET if set_name == "scalesim_tpuv4_gemm" else TARGET


def missed(summary: dict[tuple[str, str, str], dict[str, Any]]) -> list[str]:
    """Held-out targets missed, one line each."""
    out = []
    for (s, fam, split), v in summary.items():
        tgt = target_of(s, fam)
        if split == "held_out" and tgt is not None and v["n"] and v["mape"] > tgt:
            out.append(f"{s} {fam}: held-out MAPE {v['mape']:.1%} > {tgt:.0%} ({v['n']} rows)")
    return out


def print_table(summary: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    """Set x family x split: scored rows, MAPE, mean signed error, target; floor rows apart."""
    head = (f"{'set':24s} {'family':13s} {'split':12s} {'rows':>5s} {'MAPE':>7s} {'bias':>7s}"
            f" {'target':>7s}   {'floor rows':>10s} {'MAPE':>7s}")
    print(head)
    print("-" * len(head))
    for (s, fam, split), v in summary.items():
        tgt = target_of(s, fam)
        print(f"{s:24s} {fam:13s} {split:12s} {v['n']:5d} {v['mape']:7.1%} {v['bias']:+7.1%}"
              f" {'-' if tgt is None else f'{tgt:.0%}':>7s}   {v['n_floor']:10d}"
              f" {v['mape_floor']:7.1%}")


def fidelity_rows(sets: Iterable[str] = SETS) -> list[dict]:
    """The fidelity table's rows (``scripts/fidelity.py``): :func:`summarise` per (set,
    family, split) of the scored rows, the held-out ones with :func:`target_of` (the exit code
    of :func:`main`); the host-floor rows, unscored, in the note."""
    import fidelity

    rows: list[dict[str, Any]] = []
    for name in sets:
        rows += score_rows(name, load_set(name))
    out = []
    for (s, fam, split), v in summarise(rows).items():
        errs = [100 * r["err"] for r in rows
                if (r["set"], r["family"], r["split"], r["scored"]) == (s, fam, split, True)]
        tgt = target_of(s, fam) if split == "held_out" else None
        floor = (f"{v['n_floor']} host-floor rows apart (unscored, MAPE "
                 f"{100 * v['mape_floor']:.1f} % vs eager time)" if v["n_floor"] else "")
        out.append(fidelity.row("validate_external", [(s, "calibration") if split ==
                                                      "calibration" else
                                                      (s, "dev") if split == "dev" else s],
                                f"{fam} ({split.replace('_', '-')})", errors_pct=errs,
                                target_pct=None if tgt is None else 100 * tgt,
                                metric="time per call", note=floor))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calibration", action="store_true",
                    help="show the calibration split only (while modelling)")
    ap.add_argument("--fit", action="store_true",
                    help="re-derive the TPU v4 chip's call costs from the calibration split")
    ap.add_argument("--fit-ampere", action="store_true",
                    help="re-derive the A100's row-kernel issue rate from the calibration splits")
    ap.add_argument("--fit-sgemm", action="store_true",
                    help="re-derive the A100's SGEMM efficiency from the calibration split")
    ap.add_argument("--copy", action="store_true",
                    help="re-copy the sets from /work/shared (V100 rows left out)")
    ap.add_argument("--sets", nargs="*", default=list(SETS), choices=SETS, metavar="SET")
    a = ap.parse_args(argv)
    if a.copy:
        for p in copy_sets(a.sets):
            print(f"copied {p.relative_to(ROOT)}")
    fits = {"fit_ampere": (fit_ampere_rows, "issue_per_clk_per_sm", "softmax/layer-norm "
                           f"calibration rows of {', '.join(AMPERE_SETS)}"),
            "fit_sgemm": (fit_ampere_sgemm, "simt_efficiency",
                          "fp32 GEMM calibration rows of neusight_pcie_variants")}
    for flag, (fit, field, rows) in fits.items():
        if getattr(a, flag):
            got = fit()
            print(f"a100 compute.{field}, fitted on {got['rows']} scored {rows}: {got[field]}"
                  f" (calibration MAPE {got['calibration_mape']:.1%})")
            print("  tried: " + ", ".join(f"{r}: {v:.1%}" for r, v in got["trials"].items()))
            return 0
    if a.fit:
        got = fit_tpu_chip()
        print(f"tpu_v4_chip call costs, fitted on {got['cases']} calibration GEMMs of "
              f"scalesim_tpuv4_gemm (calibration MAPE {got['calibration_mape']:.1%}):")
        for k in ("dispatch_s", "sustained_array_fraction", "convert_elements_per_cycle",
                  "output_elements_per_cycle"):
            print(f"  call.{k}: {got[k]:.4g}" if got[k] is not None else f"  call.{k}: null")
        return 0
    rows: list[dict[str, Any]] = []
    for name in a.sets:
        split = load_set(name)
        if a.calibration:
            split = {"calibration": split["calibration"], "held_out": []}
        rows += score_rows(name, split)
    print("V100 rows: none read (held back by issue 24; is_held_back drops them).")
    print(f"scored: kernel-dominated rows (measured >= {FLOOR_FACTOR:g}x the set's smallest "
          "time of the operator) vs time_s; floor rows vs eager calls, unscored\n")
    summary = summarise(rows)
    print_table(summary)
    if a.calibration:
        return 0
    bad = missed(summary)
    for line in bad:
        print(f"MISSED {line}")
    print("all held-out targets met" if not bad else f"{len(bad)} held-out target(s) missed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
