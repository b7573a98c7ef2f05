"""Capture speed and memory: 70B-parameter models captured on ``meta``, each in its own process.

    PYTHONPATH=. python scripts/bench/bench_capture.py [--cases hf70b_decode ...]

Each case runs in a child process (honest peak RSS): build the model on ``meta`` (no weights
allocated), then ``accelsim.workload.torch_capture.capture_program`` of one step. Columns:
``build_s`` the model's construction, ``capture_s`` the capture alone, ``calls`` the calls
recorded, ``rss_mb`` the child's peak resident set (decimal MB: interpreter, torch, the model's
meta tensors and the program), and each figure over its target. The start-up cost of
``import torch`` is printed beside them, measured in the same run.

Target (issue 23): capture of a 70B-parameter model on ``meta`` <= 10 s and <= 1 GB on 2
cores. The machine may be shared: the ``uptime`` load is printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_S, TARGET_MB = 10.0, 1000.0

CASES = {
    "hf70b_decode": ("hf_llama", "llama", {"mode": "decode", "batch": 8, "context": 4096,
                                           "config": "workloads/hf/llama3.1_70b.json"}),
    "hf70b_prefill": ("hf_llama", "llama", {"mode": "prefill", "batch": 1, "seq": 2048,
                                            "config": "workloads/hf/llama3.1_70b.json"}),
    "plain70b_decode": ("plain", "decoder", {"mode": "decode", "batch": 8, "context": 4096,
                                             "layers": 80}),
    "torch_encoder_large": ("plain", "torch_encoder", {"batch": 8, "seq": 512, "layers": 24,
                                                       "d": 1024, "heads": 16, "ffn": 4096}),
}
"""Case -> (module of workloads/programs, factory, arguments). ``plain70b_decode`` is the plain
decoder at 80 layers (Llama-3-8B's width: the call count of a 70B, not its width)."""

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1] + "/workloads/programs")
import importlib
t0 = time.perf_counter()
import torch
t_import = time.perf_counter() - t0
from accelsim.workload.torch_capture import capture_program
mod = importlib.import_module(sys.argv[2])
kw = json.loads(sys.argv[4])
if "config" in kw:
    kw["config"] = sys.argv[1] + "/" + kw["config"]
t1 = time.perf_counter()
out = getattr(mod, sys.argv[3])(**kw)
fn, args, kwargs = out if len(out) == 3 else (*out, {})
t2 = time.perf_counter()
prog = capture_program(fn, *args, **kwargs)
t3 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
print(json.dumps({"import_s": t_import, "build_s": t2 - t1, "capture_s": t3 - t2,
                  "calls": len(prog.calls), "rss_mb": rss}))
"""


def run_case(name: str) -> dict:
    module, factory, kw = CASES[name]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    p = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), module, factory, json.dumps(kw)],
                       capture_output=True, text=True, env=env, check=False)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["failed"])[-1]
        return {"case": name, "error": last[:120]}
    return {"case": name, **json.loads(p.stdout.strip().splitlines()[-1])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    args = ap.parse_args(argv)
    rows = [run_case(c) for c in args.cases]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"capture on meta, each case in its own process (load {load:.2f}, "
          f"{os.cpu_count()} cores)")
    print(f"{'case':<22}{'import torch s':>15}{'build_s':>9}{'capture_s':>11}{'calls':>8}"
          f"{'rss_mb':>9}{'capture/10 s':>14}{'rss/1 GB':>10}")
    ok = True
    for r in rows:
        if "error" in r:
            print(f"{r['case']:<22}  failed: {r['error']}")
            ok = False
            continue
        print(f"{r['case']:<22}{r['import_s']:>15.2f}{r['build_s']:>9.2f}{r['capture_s']:>11.2f}"
              f"{r['calls']:>8}{r['rss_mb']:>9.0f}{r['capture_s'] / TARGET_S:>14.2f}"
              f"{r['rss_mb'] / TARGET_MB:>10.2f}")
        ok &= r["capture_s"] <= TARGET_S and r["rss_mb"] <= TARGET_MB
    print(f"targets: capture <= {TARGET_S:.0f} s, peak RSS <= {TARGET_MB:.0f} MB: "
          f"{'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
