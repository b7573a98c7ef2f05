# ruff: noqa: B023, E731
"""Run 6 on one H200: where a whole model's CUDA-graph step spends its per-kernel time, and
the misaligned-GEMM kernel on shapes with one, two or three odd dimensions.

Run on the device machine (kind ``nvidia-h200``) with the image's python3 (PyTorch,
torchvision):

    PYTHONUNBUFFERED=1 python3 scripts/measure/graph_traces_align.py $OUT

Writes ``$OUT/h200_graph_align_run6.json`` (copied to ``scripts/data/``). Only DEV-split models (the
Llama-3-8B-shaped decoder and ResNet-50, as ``measure/e2e.py`` builds them) and GEMM shapes
apart from the held-out set are measured.

Sections:

* ``graph_traces``: per case, the CUDA-graph step timed back to back between CUDA events
  (``graph_b2b_s``) and synchronised per step (``graph_sync_s``, as ``e2e`` times
  it), a ``torch.profiler`` trace of one graph replay (every kernel's name, start and
  duration: the gaps between kernels in graph mode) and the kernel durations of one eager
  step (``eager_kernels``).
* ``align_probe``: bf16 ``a @ b`` on ``cutlass_75`` align1 shapes: every combination of odd
  M, N, K around 3072, and K odd with M, N at several paddings (the leading-dimension pitch),
  timed like the held-out set (``harness.timed``) with the kernels launched.
"""

import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import gemm_rows_cal as ops4  # noqa: E402
import harness  # noqa: E402
from gemm_rows_cal import with_kernels  # noqa: E402
from harness import kernel_events as trace_of  # noqa: E402
from harness import say  # noqa: E402
from heldout_ops_links import gemm  # noqa: E402

QUICK = os.environ.get("MEASURE_QUICK") == "1"
R, save = ops4.result_saver(__doc__, "h200_graph_align_run6.json", indent=None)


def graph_record(case: dict, step) -> dict:
    """Graph step times, one graph replay's kernel trace, one eager step's kernels."""
    rec = dict(case)
    with torch.inference_mode():
        g = harness.graph_of(step)
        harness.warm_up(g, 3)
        reps = 20
        rec["graph_b2b_s"] = statistics.median(
            harness.event_time_s(harness.repeat(g, reps), reps) for _ in range(5))
        rec["graph_sync_s"] = harness.time_steps(g, 20)["median_s"]
        ks = trace_of(g)
        rec["graph_trace"] = [[k[0][:90], round(k[1] - ks[0][1], 3), round(k[2], 3)] for k in ks]
        rec["eager_kernels"] = harness.profile_kernels(step)["kernels"]
    n = len(ks)
    span = ks[-1][1] + ks[-1][2] - ks[0][1]
    busy = sum(k[2] for k in ks)
    say(case, f"b2b {rec['graph_b2b_s'] * 1e3:.3f} ms, sync {rec['graph_sync_s'] * 1e3:.3f} ms,"
        f" {n} kernels, traced span {span / 1e3:.3f} ms, busy {busy / 1e3:.3f} ms, "
        f"gap/kernel {(span - busy) / max(1, n - 1):.3f} us")
    return rec


def graph_traces() -> list:
    out = []
    layers = 2 if QUICK else 32
    llama = e2e.build(e2e.Llama, layers=layers) if not QUICK else e2e.build(
        e2e.Llama, layers=2, d=256, h=8, kv=2, f=512, vocab=1000)
    kv, dh = llama.layers[0].kv, llama.dh
    for batch, ctx in ((1, 2048), (16, 512)):
        with torch.inference_mode():
            caches = [(torch.randn(batch, kv, ctx, dh, device="cuda", dtype=e2e.DT),
                       torch.randn(batch, kv, ctx, dh, device="cuda", dtype=e2e.DT))
                      for _ in range(len(llama.layers))]
            ids = torch.randint(0, 1000, (batch, 1), device="cuda")
            pos_ids = torch.full((batch, 1), ctx - 1, device="cuda")
        step = lambda m=llama, i=ids, p=pos_ids, c=caches, x=ctx: m(i, p, c, x - 1)
        try:
            out.append(graph_record({"model": "llama3_8b", "mode": "decode", "batch": batch,
                                     "context": ctx}, step))
        except Exception as ex:  # noqa: BLE001
            out.append({"model": "llama3_8b", "batch": batch, "error": repr(ex)[:300]})
        del caches
        torch.cuda.empty_cache()
    del llama
    torch.cuda.empty_cache()
    import torchvision

    net = torchvision.models.resnet50().to("cuda", e2e.DT).eval().to(
        memory_format=torch.channels_last)
    for batch in (1, 8):
        x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=e2e.DT).to(
            memory_format=torch.channels_last)
        try:
            out.append(graph_record({"model": "resnet50", "mode": "inference",
                                     "batch": batch}, lambda: net(x)))
        except Exception as ex:  # noqa: BLE001
            out.append({"model": "resnet50", "batch": batch, "error": repr(ex)[:300]})
    return out


def align_probe() -> list:
    shapes = []
    for odd in range(8):  # bit 0: M odd, bit 1: N odd, bit 2: K odd
        shapes.append(tuple(3072 - (1 if odd >> i & 1 else 0) for i in range(3)))
    for mn in (2944, 3008, 3040, 3056, 3064, 3068, 3070):
        shapes.append((mn, mn, 3071))
    if QUICK:
        shapes = shapes[:2]
    out = []
    for M, N, K in shapes:
        try:
            rec = gemm(M, N, K, "bf16", tag="align_probe")
            out.append(with_kernels(rec, ops4.gemm_fn(M, N, K, "bf16")))
            say("gemm", M, N, K, f"{rec['gpu_ms'] * 1e3:.2f} us")
        except Exception as ex:  # noqa: BLE001
            out.append({"M": M, "N": N, "K": K, "error": repr(ex)[:300]})
        torch.cuda.empty_cache()
    return out


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    ops4.run_sections(R, (("align_probe", align_probe), ("graph_traces", graph_traces)), save)


if __name__ == "__main__":
    main()
