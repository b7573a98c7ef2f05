# ruff: noqa: B023, E731
"""Calibration run 5 on one H200: the per-kernel cost of a repeated kernel against a changing
one, the L2 hit curve of streams that write, and depthwise convolutions by stride.

Run on the device machine (kind ``nvidia-h200``) with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/switch_l2_depthwise.py $OUT

Writes ``$OUT/h200_switch_l2_dw_run5.json`` (copied to ``scripts/data/``). Every shape differs from
the held-out set (``h200_heldout.json``); these are CALIBRATION data.

Sections:

* ``switch_probe``: CUDA graphs of 48 short kernels (``rows x 4096`` bf16, rows 1 and 256):
  one kernel repeated (``a + b`` 48 times), cycles of 2, 4 and 8 different elementwise kernels,
  one kernel alternating between two grids, and a decoder-like cycle (``nn.Linear`` without
  bias, add, ``F.rms_norm``, SiLU, mul). Per kernel: graph replays back to back between CUDA
  events (``back_to_back_s``), and from a ``torch.profiler`` trace of one replay each
  kernel's duration and the gap before it.
* ``l2_write_cliff``: ``F.relu``, ``a + b``, ``a.clone()``, GELU-tanh and ``a.sum()`` (reads
  only) over ``rows x 2048`` bf16 tensors of 8-64 MB each, the held-out set's timing
  (``harness.timed``): where the L2 stops holding a stream that writes.
* ``depthwise_cal``: depthwise 3x3 convolutions (``nn.Conv2d(groups=C)``, channels_last,
  bf16) at stride 1 and 2, batch 4-64, MobileNetV2's channel/size pairs.
"""

import os
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_rows_cal as ops4  # noqa: E402
import harness  # noqa: E402
from gemm_rows_cal import with_kernels  # noqa: E402
from harness import say, timed  # noqa: E402

QUICK = os.environ.get("MEASURE_QUICK") == "1"
R, save = ops4.result_saver(__doc__, "h200_switch_l2_dw_run5.json", indent=1)


trace_of = harness.kernel_events
"""[name, start_us, dur_us] of the GPU kernels of one call of ``fn``, in start order."""


def sequence_record(name: str, calls: list) -> dict:
    """Per-kernel time of ``calls`` captured in one CUDA graph and replayed back to back."""
    seq = lambda: [c() for c in calls]
    g = harness.graph_of(seq)
    n = len(calls)
    reps = 40
    per = [harness.event_time_s(harness.repeat(g, reps), reps) / n for _ in range(7)]
    rec = {"case": name, "n_calls": n, "back_to_back_s": statistics.median(per),
           "min_s": min(per), "max_s": max(per)}
    try:
        ks = trace_of(g)
        rec["n_kernels"] = len(ks)
        durs = [k[2] for k in ks]
        gaps = [ks[i][1] - (ks[i - 1][1] + ks[i - 1][2]) for i in range(1, len(ks))]
        rec["median_dur_us"] = statistics.median(durs)
        rec["median_gap_us"] = statistics.median(gaps) if gaps else None
        rec["span_us"] = ks[-1][1] + ks[-1][2] - ks[0][1] if ks else None
        by: dict = {}
        for k in ks:
            by.setdefault(k[0], []).append(k[2])
        rec["dur_by_kernel_us"] = {k: round(statistics.median(v), 3) for k, v in by.items()}
        rec["trace"] = [[k[0][:40], round(k[1] - ks[0][1], 3), round(k[2], 3)] for k in ks[:24]]
    except Exception as ex:  # noqa: BLE001
        rec["trace_error"] = repr(ex)[:200]
    return rec


def switch_probe() -> list:
    out = []
    with torch.inference_mode():
        for rows in ((1,) if QUICK else (1, 256)):
            a = torch.randn(rows, 4096, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(rows, 4096, device="cuda", dtype=torch.bfloat16)
            big = torch.randn(256, 4096, device="cuda", dtype=torch.bfloat16)
            w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
            lin = nn.Linear(4096, 4096, bias=False, device="cuda", dtype=torch.bfloat16)
            ops = {"add": lambda: a + b, "mul": lambda: a * b, "relu": lambda: F.relu(a),
                   "gelu": lambda: F.gelu(a, approximate="tanh"), "neg": lambda: -a,
                   "sigmoid": lambda: torch.sigmoid(a), "exp": lambda: torch.exp(a),
                   "silu": lambda: F.silu(a)}
            cases = {
                "same_add": [ops["add"]] * 48,
                "same_relu": [ops["relu"]] * 48,
                "same_gelu": [ops["gelu"]] * 48,
                "cycle2": [ops["add"], ops["relu"]] * 24,
                "cycle4": [ops["add"], ops["mul"], ops["relu"], ops["gelu"]] * 12,
                "cycle8": list(ops.values()) * 6,
                "add_two_grids": [ops["add"], lambda: big + big] * 24,
                "decoder_like": [lambda: lin(a), ops["add"],
                                 lambda: F.rms_norm(a, (4096,), w, 1e-5), ops["silu"],
                                 ops["mul"]] * 10,
                "same_linear": [lambda: lin(a)] * 48,
            }
            for name, calls in cases.items():
                try:
                    rec = sequence_record(name, calls)
                    rec["rows"] = rows
                    out.append(rec)
                    say("switch", rows, name, f"{rec['back_to_back_s'] * 1e6:.3f} us/kernel",
                        rec.get("median_dur_us"), rec.get("median_gap_us"))
                except Exception as ex:  # noqa: BLE001
                    out.append({"case": name, "rows": rows, "error": repr(ex)[:300]})
    return out


def l2_write_cliff() -> list:
    out = []
    sizes_mb = (8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64)
    if QUICK:
        sizes_mb = (8,)
    cols = 2048
    for mb in sizes_mb:
        rows = max(64, round(mb * 1e6 / (cols * 2) / 64) * 64)
        a = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        n = a.numel() * 2
        fns = {"relu": (lambda: F.relu(a), 2 * n), "add": (lambda: a + b, 3 * n),
               "copy": (lambda: a.clone(), 2 * n),
               "gelu_tanh": (lambda: F.gelu(a, approximate="tanh"), 2 * n),
               "sum": (lambda: a.sum(), n)}
        with torch.inference_mode():
            for name, (fn, nbytes) in fns.items():
                try:
                    rec = timed(fn, nbytes=nbytes, op=name, rows=rows, cols=cols, dtype="bf16")
                    out.append(with_kernels(rec, fn))
                except Exception as ex:  # noqa: BLE001
                    out.append({"op": name, "rows": rows, "cols": cols, "error": repr(ex)[:300]})
        say("cliff", mb, rows)
        torch.cuda.empty_cache()
    return out


def depthwise_cal() -> list:
    shapes = [(4, 96, 112, 2), (16, 96, 112, 2), (16, 144, 56, 2), (64, 144, 56, 2),
              (16, 192, 28, 2), (64, 192, 28, 2), (16, 576, 14, 2), (64, 576, 14, 2),
              (16, 32, 112, 1), (4, 144, 56, 1), (64, 144, 56, 1), (16, 192, 28, 1),
              (16, 960, 7, 1), (64, 960, 7, 1), (16, 384, 14, 1), (128, 384, 14, 1)]
    if QUICK:
        shapes = shapes[:2]
    out = []
    for n, c, h, st in shapes:
        with torch.inference_mode():
            x = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(
                memory_format=torch.channels_last)
            conv = nn.Conv2d(c, c, 3, stride=st, padding=1, groups=c, bias=False)
            conv = conv.to("cuda", torch.bfloat16).to(memory_format=torch.channels_last).eval()
            fn = lambda: conv(x)
            try:
                rec = timed(fn, op="depthwise", n=n, c=c, h=h, w=h, stride=st, dtype="bf16")
                out.append(with_kernels(rec, fn))
                say("dw", n, c, h, st, f"{rec['gpu_ms'] * 1e3:.2f} us")
            except Exception as ex:  # noqa: BLE001
                out.append({"op": "depthwise", "n": n, "c": c, "h": h, "stride": st,
                            "error": repr(ex)[:300]})
    return out


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    ops4.run_sections(R, (("switch_probe", switch_probe), ("l2_write_cliff", l2_write_cliff),
                          ("depthwise_cal", depthwise_cal)), save)


if __name__ == "__main__":
    main()
