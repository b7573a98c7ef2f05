# ruff: noqa: E731
"""Run 33: where a compiled step's host time goes (a probe, profiled).

Run on the device machine with the image's python3 (PyTorch 2.11):

    PYTHONUNBUFFERED=1 python3 scripts/measure/compiled_host_profile.py $OUT

Run 31b timed GPT-2-medium's compiled decode step (``plain.gpt``, batch 4, context 1024) at
7.87 ms for 290 kernels, ~27 us of host a kernel, where the Llama-shaped ``plain.decoder``
(batch 4, context 512) took 7.82 ms for 578 (~13.5 us) and the model charges both the one
``compiled_kernel`` class. This probe compiles both (``torch.compile(model, dynamic=False)``,
default mode), times 20 steps unprofiled, then profiles 3 steps with CPU and CUDA activities
and records, per step, the host span and the CPU time of each top-level op name (the
Inductor wrapper's calls: ``extern_kernels.*``, Triton launches, guards, copies), the kernel
count, and the host time between consecutive kernel launches.

Role: a **calibration probe of a mechanism** (decided before it ran): nothing held out; the
profiled process is never used for timing (the profiler slows host work). Output:
``$OUT/h200_compiled_host_profile_run33.json``.
"""

from __future__ import annotations

import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import torch  # noqa: E402
from harness import say  # noqa: E402

plain = harness.plain_programs()
QUICK = harness.QUICK
CUDA = harness.has_cuda()
DEV, DT = harness.device_and_dtype()
CASES = [("gpt_decode_b4_c1024", "gpt", {"mode": "decode", "batch": 4, "context": 1024}),
         ("decoder_decode_b4_c512", "decoder", {"mode": "decode", "batch": 4, "context": 512})]
if QUICK:
    CASES = [("gpt_decode_b1_c64", "gpt", {"mode": "decode", "batch": 1, "context": 64,
                                           "layers": 1})]


def profile_steps(fn, steps: int) -> list[dict]:
    """Per profiled step: host span, CPU self time per top-level op name, kernels."""
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if CUDA else [])
    out = []
    for _ in range(steps):
        harness.sync()
        with profile(activities=acts) as prof:
            fn()
            harness.sync()
        events = prof.events()
        cpu = [e for e in events if e.device_type == torch.autograd.DeviceType.CPU]
        top = [e for e in cpu if e.cpu_parent is None]
        span = (max(e.time_range.end for e in top) - min(e.time_range.start for e in top)) \
            if top else 0.0
        per: dict[str, float] = collections.defaultdict(float)
        count: collections.Counter = collections.Counter()
        # what the compiled graph's wrapper calls: the children of "## Call CompiledFxGraph"
        # (the region's and the graph's own time apart, as "[self] ...")
        graphs = [e for e in cpu if e.name.startswith("## Call CompiledFxGraph")]
        for g in graphs + top:
            kids = list(g.cpu_children)
            if g in top and graphs:
                per[f"[self] {g.name}"] += g.cpu_time_total - sum(k.cpu_time_total
                                                                  for k in kids)
                count[f"[self] {g.name}"] += 1
                continue
            for k in kids:
                per[k.name] += k.cpu_time_total
                count[k.name] += 1
            per[f"[self] {g.name[:40]}"] += g.cpu_time_total - sum(k.cpu_time_total
                                                                   for k in kids)
            count[f"[self] {g.name[:40]}"] += 1
        launches = sorted(e.time_range.start for e in cpu
                          if e.name in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx",
                                        "cudaLaunchKernelExC"))
        gaps = [b - a for a, b in zip(launches, launches[1:])]
        kernels = sum(1 for e in events if e.device_type == torch.autograd.DeviceType.CUDA)
        out.append({"host_span_us": span, "launches": len(launches), "gpu_events": kernels,
                    "launch_gap_us_median": statistics.median(gaps) if gaps else None,
                    "top_ops_us": dict(sorted(per.items(), key=lambda kv: -kv[1])[:40]),
                    "top_ops_count": {k: count[k] for k in
                                      sorted(per, key=lambda k: -per[k])[:40]}})
    return out


def main() -> int:
    out = harness.cli(__doc__, sys.argv[1:]).out
    torch.manual_seed(0)
    doc: dict = {"run": 33, "device": torch.cuda.get_device_name(0) if CUDA else "cpu",
                 "torch": torch.__version__, "role": "calibration (mechanism probe, profiled)",
                 "about": __doc__.split("\n\n")[0], "quick": QUICK, "cases": []}
    with torch.inference_mode():
        for name, prog, params in CASES:
            model, args = getattr(plain, prog)(device=DEV, dtype=DT, **params)
            comp = torch.compile(model, dynamic=False)
            fn = (lambda c=comp, a=args: c(*a))
            for _ in range(4):
                fn()
            eager = (lambda m=model, a=args: m(*a))
            rec = {"case": name, "compiled_s": statistics.median(harness.step_seconds(fn, 20)),
                   "eager_s": statistics.median(harness.step_seconds(eager, 20))}
            say(name, f"compiled {rec['compiled_s'] * 1e3:.3f} ms eager {rec['eager_s'] * 1e3:.3f}")
            doc["cases"].append(rec)
        for (name, prog, params), rec in zip(CASES, doc["cases"], strict=True):
            model, args = getattr(plain, prog)(device=DEV, dtype=DT, **params)
            comp = torch.compile(model, dynamic=False)
            fn = (lambda c=comp, a=args: c(*a))
            for _ in range(4):
                fn()
            rec["profiled"] = profile_steps(fn, 2 if QUICK else 3)
            p = rec["profiled"][-1]
            say(name, f"host span {p['host_span_us']:.0f} us, {p['launches']} launches, gap "
                f"{p['launch_gap_us_median']}")
            for k, v in list(p["top_ops_us"].items())[:12]:
                say("   ", f"{v:9.0f} us  x{p['top_ops_count'][k]:4d}  {k[:90]}")
    harness.write_json(os.path.join(out, "h200_compiled_host_profile_run33.json"), doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
