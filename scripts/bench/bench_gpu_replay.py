"""GPU event replay of contended kernels: the SimPy per-CTA replay against its recurrence
(:func:`accelsim.engine.gpu_replay.cta_recurrence_s`), side by side in one run.

    PYTHONPATH=. python scripts/bench/bench_gpu_replay.py [--hw h200 a100] \
        [--models llama3_8b_prefill]

For each machine and zoo model: every operator through ``simulate_op``'s event mode
(:func:`accelsim.devices.gpu.op_document`, ``mode="event"``: what ``accelsim op`` runs by
default), once with contended kernels replayed CTA by CTA on SimPy and once through the
recurrence; the kernel-time cache is cleared before each. Printed: wall seconds of both,
their ratio, the contended kernels and their CTAs, and whether the summed op times are
identical (they must be: the recurrence reproduces the replay's float operations).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from accelsim.api import load_hw, load_wl  # noqa: E402
from accelsim.devices.gpu import op_document  # noqa: E402
from accelsim.engine import gpu_replay  # noqa: E402
from accelsim.errors import AccelsimError  # noqa: E402


def simpy_kernel_s(k, m) -> float:
    """The reference: every CTA of a contended kernel replayed on SimPy."""
    return gpu_replay._replay_ctas((k,), m).time_s


def time_ops(machine, ops, contended) -> tuple[float, float, int]:
    """(wall s, summed op seconds, ops timed) with ``contended`` timing contended kernels."""
    original = gpu_replay.contended_kernel_s
    gpu_replay.contended_kernel_s = contended
    gpu_replay._KERNEL_S.clear()
    try:
        t = time.perf_counter()
        total, n = 0.0, 0
        for op in ops:
            try:
                total += op_document(machine, op, mode="event")["time_s"]
                n += 1
            except AccelsimError:
                pass
        return time.perf_counter() - t, total, n
    finally:
        gpu_replay.contended_kernel_s = original


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hw", nargs="+", default=["h200", "a100"])
    ap.add_argument("--models", nargs="+", default=["llama3_8b_prefill", "resnet50"])
    args = ap.parse_args(argv)
    head = ("machine", "model", "ops", "contended kernels", "max CTAs", "SimPy s",
            "recurrence s", "ratio", "same times")
    rows = []
    for hw in args.hw:
        m = load_hw(hw)
        for model in args.models:
            ops = load_wl(model).ops
            time_ops(m, ops, gpu_replay.contended_kernel_s)  # warm imports and plans
            ref_s, ref_t, n = time_ops(m, ops, simpy_kernel_s)
            new_s, new_t, _ = time_ops(m, ops, gpu_replay.contended_kernel_s)
            contended = {k for k, _ in gpu_replay._KERNEL_S
                         if not gpu_replay.contention_free(k, m)}
            rows.append((hw, model, str(n), str(len(contended)),
                         f"{max((k.ctas for k in contended), default=0):,}", f"{ref_s:.3f}",
                         f"{new_s:.3f}", f"{ref_s / new_s:.1f}x", str(ref_t == new_t)))
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
