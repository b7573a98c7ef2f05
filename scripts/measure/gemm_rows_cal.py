# ruff: noqa: B023, E731
"""Calibration run 4 on one H200: GEMM families, row-wise and pointwise ops, host state.

Run on the device machine (kind ``nvidia-h200``) with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/gemm_rows_cal.py $OUT

Writes ``$OUT/h200_gemm_rows_run4.json`` (copied to ``scripts/data/``). Every op shape here differs
from the held-out set of ``scripts/measure/heldout_ops_links.py`` (``h200_heldout.json``): these are
CALIBRATION data for the kernel families whose held-out error was above 10 %. Timing is the
held-out set's own (``harness.timed``: CUDA events around calls queued back to back,
and the per-call time inside a CUDA graph), with the kernels one call launches
(``torch.profiler``: name and duration).

Sections:

* ``host_state``: why eager whole-model steps scatter. GPT-2 small decode (batch 1, context
  512) timed step by step in alternating blocks, the host thread unpinned vs pinned to one
  core (``os.sched_setaffinity``), and pinned with the garbage collector off; plus the CPU
  model, its clocks before/after, the load average and torch's thread count.
* ``gemm_cal``: misaligned (odd ``K``/``N``/``M``), batched (``torch.bmm``), fp8
  (``torch._scaled_mm``) and int8 (``torch._int_mm``) GEMMs.
* ``rowops_cal``: ``nn.LayerNorm``, ``F.rms_norm`` and ``torch.softmax`` over the last dim.
* ``pointwise_cal``: ``a + b``, ``F.relu``, ``F.gelu`` from 0.25 M to 100 M elements.
* ``small_gemm_cal`` (file ``h200_linear_dw_pool_run4b.json``): ``nn.Linear`` with bias at encoder
  shapes, depthwise 3x3 convs and global average pools at shapes apart from the held-out ones.
* ``floor_probe``: the per-kernel floor of short kernels under the two graph timings in use
  (``harness.timed``: a 50-call graph replayed back to back; ``harness.time_op``: a
  20-call graph replayed once between events), for independent calls (``a + b``) and for a
  dependent chain (``x = x + b``, each kernel reading the previous one's output).
"""

import gc
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import harness  # noqa: E402
from harness import (  # noqa: E402
    event_time_s,
    graph_of,
    profile_kernels,
    repeat,
    say,
    time_steps,
    timed,
)
from heldout_ops_links import gemm, gemm_call  # noqa: E402

QUICK = os.environ.get("MEASURE_QUICK") == "1"


def result_saver(doc: str, default_name: str, indent: int | None = 1) -> tuple[dict, object]:
    """A fresh result record for a measurement script and the function that writes it to
    ``$OUT/<MEASURE_OUTNAME or default_name>`` (with the elapsed seconds)."""
    result: dict = {"about": doc.splitlines()[0], "sections": {}, "errors": {}, "seconds": {}}

    def save_result() -> None:
        result["elapsed_s"] = round(time.time() - harness.STARTED, 1)
        harness.write_json(os.environ.get("MEASURE_OUTNAME", default_name), result,
                           indent=indent)

    return result, save_result


R, save = result_saver(__doc__.split("\n\n")[0], "h200_gemm_rows_run4.json")


def kernels_of(fn) -> list:
    return profile_kernels(fn)["kernels"]


def sh(cmd: str) -> str:
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=20).stdout[-4000:]
    except Exception as ex:  # noqa: BLE001
        return f"failed: {ex}"


def cpu_mhz() -> list:
    out = []
    for line in open("/proc/cpuinfo"):
        if line.startswith("cpu MHz"):
            out.append(float(line.split(":")[1]))
    return out


def host_state() -> dict:
    d = {"lscpu": sh("lscpu"), "loadavg_before": open("/proc/loadavg").read().strip(),
         "mhz_before": cpu_mhz(), "affinity": sorted(os.sched_getaffinity(0)),
         "torch_threads": torch.get_num_threads(),
         "governor": sh("cat /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
                        " | sort | uniq -c"),
         "nproc": os.cpu_count()}
    gpt = e2e.build(e2e.GPT2, layers=2 if QUICK else 12, d=768, h=12, f=3072)
    batch, ctx = 1, 512
    with torch.inference_mode():
        caches = [(torch.randn(batch, 12, ctx, 64, device=e2e.DEV, dtype=e2e.DT),
                   torch.randn(batch, 12, ctx, 64, device=e2e.DEV, dtype=e2e.DT))
                  for _ in range(len(gpt.h))]
        ids = torch.randint(0, 1000, (batch, 1), device=e2e.DEV)
        pos_ids = torch.full((batch, 1), ctx - 1, device=e2e.DEV)
    step = lambda: gpt(ids, pos_ids, caches, ctx - 1)
    allc = sorted(os.sched_getaffinity(0))
    core = allc[len(allc) // 2]
    blocks = {"unpinned": [], "pinned": [], "pinned_nogc": []}
    with torch.inference_mode():
        for _ in range(3 if QUICK else 12):
            for name in blocks:
                os.sched_setaffinity(0, {core} if name != "unpinned" else set(allc))
                if name == "pinned_nogc":
                    gc.disable()
                blocks[name].append(time_steps(step, 5 if QUICK else 25)["all_s"])
                gc.enable()
    os.sched_setaffinity(0, set(allc))
    d["pinned_core"] = core
    d["blocks_s"] = blocks
    d["summary"] = {k: {"median_s": statistics.median(x for b in v for x in b),
                        "block_medians_s": [statistics.median(b) for b in v]}
                    for k, v in blocks.items()}
    d["loadavg_after"] = open("/proc/loadavg").read().strip()
    d["mhz_after"] = cpu_mhz()
    for k, v in d["summary"].items():
        say("host_state", k, f"{v['median_s'] * 1e3:.3f} ms",
            " ".join(f"{x * 1e3:.2f}" for x in v["block_medians_s"]))
    return d


def with_kernels(rec: dict, fn) -> dict:
    try:
        rec["kernels"] = kernels_of(fn)
    except Exception as ex:  # noqa: BLE001
        rec["kernels_error"] = repr(ex)[:200]
    return rec


gemm_fn = gemm_call


def gemm_cal() -> list:
    shapes = []
    for n in (767, 1537, 3071, 3073, 6143):
        shapes.append(("align", 1, n, n, n, "bf16"))
    for M, N, K in ((3001, 3000, 3000), (3000, 3001, 3000), (3000, 3000, 3001),
                    (3000, 3000, 3002), (3000, 3000, 3004), (8192, 1000, 4096),
                    (8192, 4096, 1001), (2048, 2048, 2050), (2048, 2050, 2048)):
        shapes.append(("align_mixed", 1, M, N, K, "bf16"))
    for b, M, N, K in ((8, 2048, 2048, 2048), (32, 1024, 1024, 1024), (256, 256, 256, 64),
                       (256, 256, 64, 256), (64, 1024, 1024, 128), (16, 4096, 128, 4096),
                       (96, 512, 512, 128), (48, 1024, 64, 1024), (4, 4096, 4096, 1024),
                       (512, 128, 128, 128)):
        shapes.append(("batched", b, M, N, K, "bf16"))
    for dt in ("fp8", "int8"):
        for M, N, K in ((1536, 1536, 1536), (3072, 3072, 3072), (6144, 6144, 6144),
                        (2048, 8192, 4096), (512, 4096, 4096), (8192, 2048, 8192)):
            shapes.append(("lowp", 1, M, N, K, dt))
    if QUICK:
        shapes = shapes[:2]
    out = []
    for tag, b, M, N, K, dt in shapes:
        try:
            rec = gemm(M, N, K, dt, batch=b, tag=tag)
            out.append(with_kernels(rec, gemm_fn(M, N, K, dt, b)))
            say("gemm", tag, dt, b, M, N, K, f"{rec['gpu_ms'] * 1e3:.2f} us")
        except Exception as ex:  # noqa: BLE001
            out.append({"tag": tag, "M": M, "N": N, "K": K, "batch": b, "dtype": dt,
                        "error": repr(ex)[:300]})
        torch.cuda.empty_cache()
    return out


def rowops_cal() -> list:
    cols_list = (256, 768, 1024, 1600, 2048, 3072, 4096, 5120, 8192, 14336)
    rows_list = (16, 512, 4096, 16384)
    if QUICK:
        cols_list, rows_list = (256,), (16,)
    out = []
    for cols in cols_list:
        for rows in rows_list:
            if rows * cols > 2 ** 27:
                continue
            a = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
            w = torch.ones(cols, device="cuda", dtype=torch.bfloat16)
            ln = nn.LayerNorm(cols, device="cuda", dtype=torch.bfloat16)
            fns = {"layernorm": lambda: ln(a),
                   "rmsnorm_fused": lambda: F.rms_norm(a, (cols,), w, 1e-5),
                   "softmax": lambda: torch.softmax(a, -1)}
            with torch.inference_mode():
                for name, fn in fns.items():
                    try:
                        rec = timed(fn, nbytes=2.0 * a.numel() * 2, op=name, rows=rows,
                                    cols=cols, dtype="bf16")
                        out.append(with_kernels(rec, fn))
                    except Exception as ex:  # noqa: BLE001
                        out.append({"op": name, "rows": rows, "cols": cols,
                                    "error": repr(ex)[:300]})
            say("rowops", cols, rows)
    return out


def pointwise_cal() -> list:
    shapes = ((128, 2048), (512, 2048), (1024, 3072), (2048, 3072), (3072, 4096),
              (6144, 4096), (8192, 8192), (12288, 8192), (24576, 4096))
    if QUICK:
        shapes = shapes[:1]
    out = []
    for rows, cols in shapes:
        a = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        n = a.numel() * 2
        fns = {"add": (lambda: a + b, 3 * n), "relu": (lambda: F.relu(a), 2 * n),
               "gelu": (lambda: F.gelu(a), 2 * n)}
        with torch.inference_mode():
            for name, (fn, nbytes) in fns.items():
                rec = timed(fn, nbytes=nbytes, op=name, rows=rows, cols=cols, dtype="bf16")
                out.append(with_kernels(rec, fn))
        say("pointwise", rows, cols)
    return out


def floor_probe() -> list:
    out = []
    for rows, cols in ((1, 64), (1, 4096), (128, 2048), (512, 4096)):
        a = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        buf = [a.clone()]

        def chain():
            buf[0] = buf[0] + b

        with torch.inference_mode():
            for name, fn in (("independent", lambda: a + b), ("chain", chain)):
                rec = timed(fn, op=name, rows=rows, cols=cols)
                rec.update({"e2e_" + k: v for k, v in harness.time_op(fn, 20).items()
                            if k != "kernels"})
                out.append(rec)
                say("floor", name, rows, cols, f"timed {rec['gpu_ms'] * 1e3:.2f} us",
                    f"e2e graph {rec.get('e2e_graph_s', 0) * 1e6:.2f} us")
    return out


def protocol_probe() -> dict:
    """Eager steps of one model under each protocol step, in order: fresh, interleaved
    with another batch, after a CUDA-graph capture, after a ``torch.profiler`` step."""
    import torchvision

    net = torchvision.models.resnet50().to("cuda", torch.bfloat16).eval().to(
        memory_format=torch.channels_last)
    xs = {b: torch.randn(b, 3, 224, 224, device="cuda", dtype=torch.bfloat16).to(
        memory_format=torch.channels_last) for b in (2, 16)}
    step = {b: (lambda x=x: net(x)) for b, x in xs.items()}
    out: dict = {}

    def block(tag: str, b: int = 2, n: int = 30) -> None:
        with torch.inference_mode():
            r = time_steps(step[b], n, warm=2)
        out.setdefault(tag, []).append(r["median_s"])
        say("protocol", tag, f"{r['median_s'] * 1e3:.3f} ms")

    block("fresh")
    block("fresh")
    with torch.inference_mode():
        inter = []
        for _ in range(6):
            for b in (2, 16):
                r = time_steps(step[b], 5, warm=1)
                if b == 2:
                    inter.extend(r["all_s"])
    out["interleaved"] = [statistics.median(inter)]
    say("protocol interleaved", f"{out['interleaved'][0] * 1e3:.3f} ms")
    block("after_interleave")
    with torch.inference_mode():
        g = graph_of(step[2])
        time_steps(g, 10)
    del g
    block("after_graph")
    block("after_graph")
    with torch.inference_mode():
        profile_kernels(step[2])
    block("after_profile")
    block("after_profile")
    time.sleep(3)
    block("after_profile_3s")
    return out


def replay_costs(g, n_kernels: int, prime) -> dict:
    """One graph of ``n_kernels`` kernels timed four ways (per kernel, seconds)."""
    out = {}
    torch.cuda.synchronize()
    host, launch, ev, primed = [], [], [], []
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(15):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        g()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        launch.append(t1 - t0)
        host.append(t2 - t0)
        torch.cuda.synchronize()
        s.record()
        g()
        e.record()
        torch.cuda.synchronize()
        ev.append(s.elapsed_time(e) / 1e3)
        torch.cuda.synchronize()
        prime()  # a long kernel: the graph is submitted while the GPU is busy
        s.record()
        g()
        e.record()
        torch.cuda.synchronize()
        primed.append(s.elapsed_time(e) / 1e3)
    med = statistics.median
    out["host_sync_to_sync_s"] = med(host) / n_kernels
    out["host_launch_call_s"] = med(launch)
    out["event_single_s"] = med(ev) / n_kernels
    out["event_primed_s"] = med(primed) / n_kernels
    out["back_to_back_s"] = event_time_s(repeat(g, 50), 50) / n_kernels
    out["n_kernels"] = n_kernels
    return out


def floor_probe2() -> list:
    """Where the per-kernel floor of a graph replay comes from: submission or execution."""
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    prime = lambda: big @ big  # ~1 ms
    out = []
    b = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    for n in (20, 100, 400):
        buf = [b.clone()]

        def chain():
            for _ in range(n):
                buf[0] = buf[0] + b

        with torch.inference_mode():
            rec = replay_costs(graph_of(chain), n, prime)
        rec.update(case=f"chain_add_{n}")
        out.append(rec)
        say("floor2", rec["case"], {k: (round(v * 1e6, 2) if k.endswith("_s") else v)
                                   for k, v in rec.items()})
    import torchvision

    net = torchvision.models.mobilenet_v2().to("cuda", torch.bfloat16).eval().to(
        memory_format=torch.channels_last)
    x = torch.randn(1, 3, 224, 224, device="cuda", dtype=torch.bfloat16).to(
        memory_format=torch.channels_last)
    gpt = e2e.build(e2e.GPT2, layers=12, d=768, h=12, f=3072)
    caches = [(torch.randn(1, 12, 512, 64, device="cuda", dtype=torch.bfloat16),
               torch.randn(1, 12, 512, 64, device="cuda", dtype=torch.bfloat16))
              for _ in range(12)]
    ids = torch.randint(0, 1000, (1, 1), device="cuda")
    pos = torch.full((1, 1), 511, device="cuda")
    for name, fn in (("mobilenet_v2_b1", lambda: net(x)),
                     ("gpt2_small_decode_b1", lambda: gpt(ids, pos, caches, 511))):
        with torch.inference_mode():
            rec = replay_costs(graph_of(fn), 1, prime)  # per step; no profiler in this process
        rec.update(case=name, note="per step (n_kernels=1)")
        out.append(rec)
        say("floor2", name, {k: (round(v * 1e6, 2) if k.endswith("_s") else v)
                             for k, v in rec.items()})
    return out


def floor_probe3() -> list:
    """Per-kernel cost of a dependent chain of adds by grid size, GPU kept busy (clocks up)."""
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    prime = lambda: big @ big
    out = []
    for rows in (1, 8, 64, 256, 1024, 4096):
        b = torch.randn(rows, 4096, device="cuda", dtype=torch.bfloat16)
        buf = [b.clone()]

        def chain():
            for _ in range(50):
                buf[0] = buf[0] + b

        with torch.inference_mode():
            for _ in range(3):
                prime()
            rec = replay_costs(graph_of(chain), 50, prime)
        rec.update(case=f"chain_add_{rows}x4096", rows=rows, cols=4096)
        out.append(rec)
        say("floor3", rec["case"], {k: (round(v * 1e6, 2) if k.endswith("_s") else v)
                                   for k, v in rec.items() if k != "case"})
    return out


def small_gemm_cal() -> list:
    """``F.linear`` with bias (cuBLASLt addmm, bias epilogue) at encoder-sized shapes, and
    depthwise convs / global average pools at shapes apart from the held-out ones."""
    out = []
    for M in (64, 192, 384, 768, 1536, 3072):
        for N, K in ((768, 768), (2304, 768), (3072, 768), (768, 3072), (1024, 1024)):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            lin = nn.Linear(K, N, device="cuda", dtype=torch.bfloat16)
            with torch.inference_mode():
                fn = lambda: lin(x)
                rec = timed(fn, flops=2.0 * M * N * K, op="linear_bias", M=M, N=N, K=K,
                            dtype="bf16")
                out.append(with_kernels(rec, fn))
        say("linear", M)
    for n, c, h, st in ((8, 32, 112, 1), (8, 96, 56, 2), (16, 144, 28, 1), (16, 192, 28, 2),
                        (64, 384, 14, 1), (64, 576, 14, 1), (128, 960, 7, 1), (4, 144, 56, 1)):
        x = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(
            memory_format=torch.channels_last)
        conv = nn.Conv2d(c, c, 3, stride=st, padding=1, groups=c, bias=False).to(
            "cuda", torch.bfloat16).to(memory_format=torch.channels_last).eval()
        with torch.inference_mode():
            fn = lambda: conv(x)
            rec = timed(fn, op="depthwise", n=n, c=c, h=h, w=h, k=c, r=3, s=3, stride=st,
                        pad=1, groups=c, dtype="bf16")
            out.append(with_kernels(rec, fn))
    for n, c, h in ((8, 1280, 7), (64, 1280, 7), (16, 2048, 7), (128, 2048, 7), (4, 512, 14)):
        x = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(
            memory_format=torch.channels_last)
        with torch.inference_mode():
            fn = lambda: F.adaptive_avg_pool2d(x, 1)
            rec = timed(fn, op="avgpool", n=n, c=c, h=h, w=h, dtype="bf16")
            out.append(with_kernels(rec, fn))
    say("small_gemm_cal done")
    return out


def run_sections(result: dict, sections: tuple, save_fn) -> None:
    """Run ``(name, fn)`` sections (only those in ``MEASURE_SECTIONS`` if set) into
    ``result["sections"]`` (:func:`harness.run_sections`), the device named first."""
    result["device"] = harness.device_info()
    only = os.environ.get("MEASURE_SECTIONS")
    harness.run_sections([(n, f) for n, f in sections if not only or n in only.split(",")],
                         result, save_fn)


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    run_sections(R, (("host_state", host_state), ("gemm_cal", gemm_cal),
                     ("rowops_cal", rowops_cal), ("pointwise_cal", pointwise_cal),
                     ("floor_probe", floor_probe), ("protocol_probe", protocol_probe),
                     ("floor_probe2", floor_probe2), ("floor_probe3", floor_probe3),
                     ("small_gemm_cal", small_gemm_cal)), save)


if __name__ == "__main__":
    main()
