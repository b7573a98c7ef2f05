"""A captured Hugging Face ``LlamaForCausalLM`` against run 1's kernel profiles (issue 23).

    PYTHONPATH=. python scripts/validate/validate_hf_capture.py [--cases N]

Hugging Face's own ``LlamaForCausalLM`` (``transformers``), built on ``meta`` from the zoo's
Llama-3-8B config (``workloads/programs/hf_llama.py``), is captured for each Llama-3-8B decode
and prefill case of ``scripts/data/h200_e2e.json`` (run 1, role calibration: its profiles fixed
what each call launches) in the step that run drove (prefill without a cache; one decode
token at ``context - 1`` against a static cache of ``context`` positions), lowered by the CUDA
graph table and its kernels counted per kind against the case's ``torch.profiler`` kernel list
(memsets left out):

``gemm`` (cuBLAS/nvjet/CUTLASS, split-K reduces), ``attention`` (SDPA kernels), ``reduce``
(``reduce_kernel``), ``cat`` (``CatArrayBatchedCopy``), ``index`` (gathers), ``copy`` (casts,
strided copies, cache writes: ``*copy_kernel*``), ``elementwise`` (every other pointwise
kernel).

Run 1 profiled ``scripts/measure_e2e.py``'s own copy of Hugging Face's Llama code (RMSNorm,
``rotate_half`` rotary, SDPA, slice-assigned caches), not ``transformers`` itself, whose
version 5 adds bookkeeping on integer and boolean tensors only (the position ids, the packed-
sequence check, the causal mask a static cache asks for, the cache's position counter). The
kernels of those calls (every tensor they read and write is an integer or a boolean) are
counted apart (``bookkeeping``) and the target (issue 23: kernel count per class within 2 %
of the profile) is checked on the rest; the table shows both. Exits 1 when the target is
missed. Needs ``torch`` and ``transformers``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workloads" / "programs"))

DATA = ROOT / "scripts" / "data" / "h200_e2e.json"
TARGET_PCT = 2.0
KINDS = ("gemm", "attention", "reduce", "cat", "index", "copy", "elementwise")

_PROFILE_RULES = (("attention", ("sdpa", "flash", "fmha", "lean_reduction")),
                  ("gemm", ("nvjet", "cutlass", "gemm", "splitkreduce", "cublas", "gemv")),
                  ("reduce", ("reduce_kernel",)),
                  ("cat", ("catarray",)),
                  ("index", ("indexselect", "gather_kernel", "index_elementwise", "embedding")),
                  ("copy", ("copy_kernel",)))
"""Profiled kernel name fragments -> kind (first match; else ``elementwise``)."""

_CALL_KINDS = {"attention": ("scaled_dot_product_attention",),
               "gemm": ("linear", "matmul", "mm", "bmm", "addmm", "baddbmm"),
               "cat": ("cat", "stack"),
               "index": ("embedding", "index", "index_select", "gather"),
               "copy": ("to", "type", "type_as", "float", "half", "bfloat16", "double", "int",
                        "long", "clone", "copy_", "contiguous", "reshape", "flatten",
                        "setitem", "index_copy_", "index_put_")}
"""A lowered call's fn -> kind (reductions: ``reduce``; else ``elementwise``)."""

_INTEGER = ("int8", "int16", "int32", "int64", "uint8", "bool")


def profile_kind(name: str) -> str | None:
    """Kind of a profiled kernel name (None: a memset)."""
    low = name.lower()
    if low.startswith("memset"):
        return None
    for kind, keys in _PROFILE_RULES:
        if any(k in low for k in keys):
            return kind
    return "elementwise"


def call_kind(fn: str) -> str:
    """Kind of the kernels a lowered call of ``fn`` launches."""
    from accelsim.workload.program_ops import REDUCTIONS

    if fn in REDUCTIONS:
        return "reduce"
    for kind, fns in _CALL_KINDS.items():
        if fn in fns:
            return kind
    return "elementwise"


def bookkeeping(call: Any) -> bool:
    """A call on integer and boolean tensors only (positions, masks, counters)."""
    ts = (*call.inputs, *call.outputs)
    return bool(ts) and all(t.dtype in _INTEGER for t in ts)


def program_kinds(program: Any, exec_mode: str = "graph", hw: str = "h200"
                  ) -> tuple[dict[str, int], dict[str, int]]:
    """Kernels per kind of ``program`` lowered and costed on ``hw``: (compute, bookkeeping)."""
    from accelsim.api.model_run import run_model
    from accelsim.workload.program_ops import call_sites, program_workload

    sites = call_sites(program)
    by_name = {s.name: (s, program.calls[s.index]) for s in sites}
    run = run_model(hw, program_workload(program), exec_mode=exec_mode)
    main: dict[str, int] = collections.Counter()
    side: dict[str, int] = collections.Counter()
    for name, n in zip(run.calls["layer"], run.calls["kernels"], strict=True):
        if not n:
            continue
        site, call = by_name[name]
        fn = site.meta.get("fn", site.fn)
        (side if bookkeeping(call) else main)[call_kind(fn)] += int(n)
    return dict(main), dict(side)


def profile_kinds(case: dict) -> dict[str, int]:
    """Kernels per kind of a run-1 case's profile (memsets left out)."""
    out: dict[str, int] = collections.Counter()
    for name, _us in case["profile"]["kernels"]:
        kind = profile_kind(name)
        if kind is not None:
            out[kind] += 1
    return dict(out)


def cases(data: dict) -> list[dict]:
    """Run 1's profiled Llama-3-8B decode and prefill cases."""
    return [c for c in data["models"] if c["model"] == "llama3_8b" and c.get("profile")
            and c["mode"] in ("decode", "prefill")]


def evaluate(limit: int | None = None) -> list[dict]:
    """One row per case: kernels per kind of the captured HF program and of the profile."""
    import hf_llama

    from accelsim.workload.torch_capture import capture_program

    model = hf_llama.build()
    rows = []
    for case in cases(json.loads(DATA.read_text()))[:limit]:
        fn, args, kwargs = hf_llama.llama(case["mode"], case["batch"], context=case["context"],
                                          seq=case["seq"], model=model)
        main, side = program_kinds(capture_program(fn, *args, **kwargs))
        rows.append({"mode": case["mode"], "batch": case["batch"], "context": case["context"],
                     "model": main, "bookkeeping": side, "profile": profile_kinds(case),
                     "zoo_gemm": zoo_gemm_kernels(case)})
    return rows


def zoo_gemm_kernels(case: dict, hw: str = "h200") -> int:
    """GEMM kernels (split-K reduces included) of the zoo's Llama-3-8B for ``case``: the
    library model's choices, the same whatever program the GEMMs come from."""
    from accelsim.api.model_run import run_model

    n = f"context={case['context']}" if case["mode"] == "decode" else f"seq={case['seq']}"
    calls = run_model(hw, f"llama3_8b_{case['mode']}:batch={case['batch']},{n}",
                      exec_mode="graph").calls
    return int(calls.loc[calls["kernel_class"] == "gemm", "kernels"].sum())


def kind_err_pct(row: dict, kind: str) -> float:
    """Signed error of a row's kernel count of ``kind``, model against profile, % (a kind
    the profile lacks counts against one kernel)."""
    return (row["model"].get(kind, 0) / max(1, row["profile"].get(kind, 0)) - 1) * 100


def worst_pct(row: dict, skip: tuple[str, ...] = ()) -> float:
    """Largest per-kind error of a row, %, on the kinds the profile or the model has
    (``skip``: kinds left out)."""
    kinds = (set(row["model"]) | set(row["profile"])) - set(skip)
    return max((abs(kind_err_pct(row, k)) for k in kinds), default=0.0)


def kind_errors_pct(rows: list[dict]) -> dict[str, list[float]]:
    """Per kind (:data:`KINDS` order, the kinds some case has): each case's signed error, %."""
    present = {k for r in rows for k in (*r["model"], *r["profile"])}
    return {k: [kind_err_pct(r, k) for r in rows] for k in KINDS if k in present}


def fidelity_rows(limit: int | None = None) -> list[dict]:
    """The fidelity table's rows (``scripts/fidelity.py``): per kernel kind, the error of the
    captured program's kernel count against each run-1 profile (target: every case within
    :data:`TARGET_PCT`, as :func:`main` exits by), and the bookkeeping kernels counted apart."""
    import fidelity

    rows = evaluate(limit)
    out = []
    for kind, errs in kind_errors_pct(rows).items():
        note = f"target on the worst case ({max(map(abs, errs), default=0.0):.1f} %)"
        if kind == "gemm":
            note += "; split-K choices of configs/software/hopper.yaml, as the zoo's"
        out.append(fidelity.row(
            "validate_hf_capture", [DATA.name], f"HF Llama-3-8B captured: {kind} kernels",
            errors_pct=errs, target_pct=TARGET_PCT,
            met=max(map(abs, errs), default=0.0) <= TARGET_PCT, metric="kernels per step",
            note=note))
    side = sorted({sum(r["bookkeeping"].values()) for r in rows})
    out.append(fidelity.row(
        "validate_hf_capture", [DATA.name], "HF Llama-3-8B captured: bookkeeping kernels",
        cases=len(rows), metric="kernels per step",
        note=f"transformers 5 integer/boolean calls, {'/'.join(map(str, side))} per step, "
             "no counterpart in the profile: counted apart, no target"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=None, help="only the first N cases")
    args = ap.parse_args(argv)
    rows = evaluate(args.cases)
    print("captured HF LlamaForCausalLM (Llama-3-8B) vs run-1 profiles, kernels per kind "
          "(model/profile; +bookkeeping: integer/boolean-only calls of transformers 5)")
    worst = worst_lowering = 0.0
    for r in rows:
        detail = " ".join(f"{k}:{r['model'].get(k, 0)}/{r['profile'].get(k, 0)}" for k in KINDS
                          if r["model"].get(k) or r["profile"].get(k))
        side = " ".join(f"{k}:{v}" for k, v in sorted(r["bookkeeping"].items()))
        w = worst_pct(r)
        worst = max(worst, w)
        worst_lowering = max(worst_lowering, worst_pct(r, ("gemm",)))
        print(f"  {r['mode']:<7} b={r['batch']:<4} n={r['context']:<5} total "
              f"{sum(r['model'].values())}/{sum(r['profile'].values())} worst {w:4.1f}%  "
              f"{detail}  (zoo gemm {r['zoo_gemm']})  +bookkeeping {side or '-'}")
    met = worst <= TARGET_PCT  # the same as every fidelity_rows row met
    print(f"every kind but gemm (what each call launches), worst: {worst_lowering:.1f}%; gemm "
          "kernels are the split-K choices of configs/software/hopper.yaml, as the zoo's")
    print(f"target kernel count per kind (bookkeeping apart), worst: {worst:.1f}% <= "
          f"{TARGET_PCT}%: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
