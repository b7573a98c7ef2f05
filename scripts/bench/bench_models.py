"""Whole-model speed: every zoo model on tpu_v4, h200 and npu_ascend910, in the default mode
and in event mode, wall time and peak RSS, each run in its own process (honest RSS), printed
beside the start-up time of ``accelsim --version`` measured on the same machine in the same run.

    PYTHONPATH=. python scripts/bench/bench_models.py [--hw tpu_v4 ...] [--models resnet50 ...]
                                                [--modes auto event] [--csv out.csv]

Columns: ``sim_s`` the simulation call alone (``accelsim.api.simulate`` on systolic machines,
``accelsim.api.model_run.run_model`` on GPUs: what ``accelsim run HW MODEL`` computes),
``process_s`` the whole child process (interpreter, imports, model build, simulation),
``rss_mb`` its peak resident set (decimal MB), ``ran`` the engine that ran (``Result.mode``;
on the GPU ``ModelRun.replay``: ``accelsim run h200 MODEL`` replays the host and the GPU
stream by their recurrence by default, ``--mode event`` on SimPy).

Targets (issue 15): any zoo model on any shipped machine <= 1 s wall in the default mode,
<= 5 s in event mode, <= 300 MB peak RSS. The machine may be shared: the ``uptime`` load is
printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HW = ("tpu_v4", "h200", "npu_ascend910")
MODES = ("auto", "event")

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
hw, model, mode = sys.argv[1:4]
from accelsim.api import load_hw
machine = load_hw(hw)
if getattr(machine, "kind", "") == "gpu":
    from accelsim.api.model_run import run_model
    from accelsim.devices.gpu_model import framework_ops
    from accelsim.devices.memory_check import check_memory
    from accelsim.errors import UnsupportedError
    from accelsim.workload.models import zoo
    wl = zoo.from_spec(model)  # the graph, as `accelsim run` builds it (attention fused, KV cache)
    try:
        check_memory(machine, wl, framework_ops(wl)[1], graph=wl)
    except UnsupportedError:  # too big for one GPU in bf16 (Llama-3-70B): its fp8 form
        wl = zoo.from_spec(model + ":dtype=fp8")
    t1 = time.perf_counter()
    r = run_model(machine, wl, replay="event" if mode == "event" else "analytic")
    total, ran = r.totals["time_s"], r.replay
else:
    from accelsim.api import load_wl, simulate
    wl = load_wl(model)
    t1 = time.perf_counter()
    r = simulate(machine, wl, mode=mode)
    total, ran = r.totals["time_s"], r.mode
t2 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
print(json.dumps({"sim_s": t2 - t1, "import_build_s": t1 - t0, "rss_mb": rss,
                  "model_time_s": total, "ran": ran}))
"""


def zoo_names() -> list[str]:
    """Every model of the zoo (accelsim.workload.models.zoo)."""
    sys.path.insert(0, str(ROOT))
    from accelsim.workload.models.zoo import names

    return names()


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_one(hw: str, model: str, mode: str, timeout_s: float) -> dict:
    """One (machine, model, mode) in a fresh interpreter: its figures, or the error."""
    start = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, hw, model, mode], capture_output=True,
                           text=True, env=child_env(), timeout=timeout_s, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout_s:g} s"}
    wall = time.perf_counter() - start
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last[:80], "process_s": wall}
    doc = json.loads(p.stdout.strip().splitlines()[-1])
    doc["process_s"] = wall
    return doc


def startup_s(repeats: int = 3) -> float:
    """Best wall time of ``python -m accelsim --version`` (seconds)."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "accelsim", "--version"], capture_output=True,
                       env=child_env(), cwd=ROOT, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hw", nargs="+", default=list(HW))
    ap.add_argument("--models", nargs="+", default=None, help="zoo names (default: all)")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--timeout", type=float, default=300.0, help="per run, seconds")
    ap.add_argument("--csv", help="also write the table as CSV")
    a = ap.parse_args()
    models = a.models or zoo_names()
    load = os.getloadavg()
    start = startup_s()
    print(f"accelsim --version start-up: {start:.2f} s; load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    head = (f"{'machine':<14} {'model':<20} {'mode':<6} {'ran':<10} {'sim_s':>7} "
            f"{'process_s':>9} {'rss_mb':>7}")
    print(head)
    print("-" * len(head))
    rows = []
    for hw in a.hw:
        for model in models:
            for mode in a.modes:
                r = run_one(hw, model, mode, a.timeout)
                row = {"machine": hw, "model": model, "mode": mode, **r}
                rows.append(row)
                if "error" in r:
                    print(f"{hw:<14} {model:<20} {mode:<6} error: {r['error']}", flush=True)
                    continue
                print(f"{hw:<14} {model:<20} {mode:<6} {r['ran']:<10} {r['sim_s']:7.2f} "
                      f"{r['process_s']:9.2f} {r['rss_mb']:7.0f}", flush=True)
    ok = [r for r in rows if "error" not in r]
    for mode, limit in (("auto", 1.0), ("event", 5.0)):
        sel = [r for r in ok if r["mode"] == mode]
        if sel:
            worst = max(sel, key=lambda r: r["sim_s"])
            over = sum(r["sim_s"] > limit for r in sel)
            print(f"{mode}: slowest {worst['machine']} {worst['model']} {worst['sim_s']:.2f} s "
                  f"(target <= {limit:g} s; {over} of {len(sel)} over); peak RSS "
                  f"{max(r['rss_mb'] for r in sel):.0f} MB (target <= 300 MB)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.csv:
        import pandas as pd

        pd.DataFrame(rows).to_csv(a.csv, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
