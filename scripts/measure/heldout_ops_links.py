# ruff: noqa: B023, E731
"""Measure held-out operators on real NVIDIA H200s (and 2-GPU links/collectives).

Run on the device machine (kind ``nvidia-h200-x2``) with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/heldout_ops_links.py $OUT

Writes, under the output folder:

* ``h200_heldout.json``: GPU-side times of operators the GPU model was NOT fitted to
  (non-square, skinny/decode, misaligned, batched GEMMs; fp8/int8 GEMMs; wave-quantization
  sweep; conv2d; attention; layernorm/softmax/gelu/add/relu), the kernels cuBLAS picked for a
  few shapes (names, grids), SM clock and power under sustained loads, and an L2-vs-HBM read
  curve from one Triton kernel. These are VALIDATION data: the model never reads them.
* ``h200x2_collectives.json``: GPU<->GPU copy curve and NCCL all-reduce, all-gather,
  reduce-scatter and all-to-all over 2 GPUs (torch.distributed, one process per GPU),
  1 KiB..1 GiB, for the links model.

Timing method (as ``shared/reference/h200/measure.py``): ``eager_ms`` = median per-call
time of calls queued back to back between CUDA events (a batch lasts >= 2 ms); ``graph_ms``
= per-call time of the same call replayed inside a CUDA graph (the GPU-side time, launch
gaps nearly gone); inputs are random (never zeros). Each section is independent: a failure
is recorded under ``errors`` and the rest goes on.
"""

import json
import os
import subprocess
import sys
import threading
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import back_to_back_ms as eager_ms  # noqa: E402 - the held-out name
from harness import say, timed  # noqa: E402

R: dict = {"sections": {}, "errors": {}, "seconds": {}}
BUDGET_S = float(os.environ.get("MEASURE_BUDGET_S", "420"))


def save() -> None:
    harness.write_json("h200_heldout.json", R)


SECTIONS: list = []


def section(name):
    """Register a single-GPU measurement; run later from ``main`` (never on import: the NCCL
    workers re-import this module)."""
    def deco(fn):
        SECTIONS.append((name, fn))
        return fn
    return deco


DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
      "tf32": torch.float32}


def gemm_call(M, N, K, dt="bf16", batch=1):
    """``a @ b`` of ``dt`` (``fp8``: ``torch._scaled_mm``; ``int8``: ``torch._int_mm``;
    ``batch > 1``: ``torch.bmm``) on random CUDA operands, as a no-argument callable."""
    if dt == "fp8":
        a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device="cuda")
        return lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
    if dt == "int8":
        a = torch.randint(-8, 8, (M, K), device="cuda", dtype=torch.int8)
        b = torch.randint(-8, 8, (N, K), device="cuda", dtype=torch.int8).t()
        return lambda: torch._int_mm(a, b)
    lead = (batch,) if batch > 1 else ()
    a = torch.randn(*lead, M, K, device="cuda", dtype=DT[dt])
    b = torch.randn(*lead, K, N, device="cuda", dtype=DT[dt])
    return (lambda: torch.bmm(a, b)) if batch > 1 else (lambda: a @ b)


def gemm(M, N, K, dt="bf16", batch=1, tag=""):
    torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
    fn = gemm_call(M, N, K, dt, batch)
    r = timed(fn, flops=2.0 * M * N * K * batch, M=M, N=N, K=K, batch=batch, dtype=dt, tag=tag)
    torch.backends.cuda.matmul.allow_tf32 = False
    return r


def conv_call(n, c, h, w, k, r, s, st, pad):
    """``F.conv2d`` of random bf16 channels_last operands: ``(callable, flops)``."""
    x = harness.laid_out(torch.randn(n, c, h, w, device="cuda", dtype=torch.bfloat16),
                         "channels_last")
    wt = harness.laid_out(torch.randn(k, c, r, s, device="cuda", dtype=torch.bfloat16),
                          "channels_last")
    ho, wo = (h + 2 * pad - r) // st + 1, (w + 2 * pad - s) // st + 1
    return (lambda: F.conv2d(x, wt, stride=st, padding=pad)), 2.0 * n * ho * wo * k * c * r * s


def attention_call(b, hq, hkv, sq, skv, d, causal):
    """``F.scaled_dot_product_attention`` of random bf16 operands (GQA where ``hq != hkv``;
    causal: the lower-right triangle of ``sq x skv``): ``(callable, flops)``."""
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, hkv, skv, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, hkv, skv, d, device="cuda", dtype=torch.bfloat16)
    gqa = hq != hkv
    frac = (sq * (skv - sq) + sq * (sq + 1) / 2) / (sq * skv) if causal else 1.0
    return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa),
            4.0 * b * hq * sq * skv * d * frac)


CONV_FIELDS = ("n", "c", "h", "w", "k", "r", "s", "stride", "pad")
ATTENTION_FIELDS = ("batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal")


def conv_rows(shapes, measure=None) -> list:
    """One record per ``CONV_FIELDS`` shape, timed by ``measure`` (default :func:`timed`)."""
    torch.backends.cudnn.benchmark = True
    return [(measure or timed)(fn, flops=flops, **dict(zip(CONV_FIELDS, shape)), dtype="bf16")
            for shape in shapes for fn, flops in [conv_call(*shape)]]


def attention_rows(shapes, measure=None) -> list:
    """One record per ``ATTENTION_FIELDS`` shape, timed by ``measure`` (default
    :func:`timed`)."""
    return [(measure or timed)(fn, flops=flops, **dict(zip(ATTENTION_FIELDS, shape)),
                               dtype="bf16")
            for shape in shapes for fn, flops in [attention_call(*shape)]]


@section("env")
def _():
    p = torch.cuda.get_device_properties(0)
    d = {"name": p.name, "sm_count": p.multi_processor_count, "torch": torch.__version__,
         "cuda": torch.version.cuda, "device_count": torch.cuda.device_count(),
         "l2_bytes": getattr(p, "L2_cache_size", None),
         "cudnn": torch.backends.cudnn.version()}
    for cmd in (["nvidia-smi"], ["nvidia-smi", "topo", "-m"],
                ["nvidia-smi", "-q", "-d", "CLOCK,POWER"]):
        try:
            d[" ".join(cmd)] = subprocess.run(cmd, capture_output=True, text=True,
                                              timeout=30).stdout[-5000:]
        except Exception as ex:
            d[" ".join(cmd)] = f"failed: {ex}"
    try:
        import triton
        d["triton"] = triton.__version__
    except Exception as ex:
        d["triton"] = f"missing: {ex}"
    say(d["nvidia-smi topo -m"])
    return d


@section("gemm_heldout")
def _():
    out = []
    # non-square and LLM-like
    for M, N, K in [(4096, 8192, 2048), (8192, 1024, 4096), (2048, 14336, 4096),
                    (16384, 4096, 4096), (4096, 4096, 16384), (1024, 16384, 1024),
                    (3072, 3072, 3072), (6144, 6144, 6144)]:
        out.append(gemm(M, N, K, "bf16", tag="nonsquare"))
    # skinny / decode: memory-bound weight streaming, split-K territory
    for M in [1, 8, 16, 32, 64, 128, 256, 512]:
        out.append(gemm(M, 4096, 4096, "bf16", tag="skinny"))
        out.append(gemm(M, 14336, 4096, "bf16", tag="skinny"))
    out.append(gemm(16, 4096, 16384, "bf16", tag="skinny"))
    # alignment cliff
    for n in [1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097]:
        out.append(gemm(n, n, n, "bf16", tag="align"))
    for K in [4095, 4097, 4100]:
        out.append(gemm(4096, 4096, K, "bf16", tag="align_k"))
    out.append(gemm(4095, 4095, 4095, "fp16", tag="align"))
    # wave quantization: N=K=4096 and M = 128 * rows
    for rows in [4, 7, 8, 9, 12, 16, 17, 24, 33]:
        out.append(gemm(128 * rows, 4096, 4096, "bf16", tag="waves"))
    # batched
    for b, M, N, K in [(16, 1024, 1024, 1024), (128, 512, 512, 64), (128, 512, 64, 512),
                       (64, 2048, 2048, 128), (32, 4096, 128, 4096)]:
        out.append(gemm(M, N, K, "bf16", batch=b, tag="batched"))
    # fp8 / int8 (calibration of their rates, and checks)
    for n in [1024, 2048, 4096, 8192]:
        for dt in ("fp8", "int8"):
            try:
                out.append(gemm(n, n, n, dt, tag="lowp_square"))
            except Exception as ex:
                out.append({"M": n, "N": n, "K": n, "dtype": dt, "error": str(ex)[:300]})
    for dt in ("tf32", "fp32", "fp16"):
        out.append(gemm(4096, 8192, 2048, dt, tag="nonsquare"))
        out.append(gemm(16, 4096, 4096, dt, tag="skinny"))
    return out


@section("gemm_kernels")
def _():
    """Which kernels cuBLAS launches (name, grid, block, smem) for a few shapes."""
    cases = [(1024, 1024, 1024, "bf16"), (2048, 2048, 2048, "bf16"), (4096, 4096, 4096, "bf16"),
             (8192, 8192, 8192, "bf16"), (4096, 4096, 4096, "tf32"), (4096, 4096, 4096, "fp32"),
             (16, 4096, 4096, "bf16"), (1, 14336, 4096, "bf16"), (128, 4096, 4096, "bf16"),
             (1025, 1025, 1025, "bf16"), (4097, 4097, 4097, "bf16"), (4096, 4096, 4096, "fp8"),
             (1152, 4096, 4096, "bf16"), (8192, 1024, 4096, "bf16")]
    keys = ("grid", "block", "shared memory", "registers per thread", "blocks per SM",
            "warps per SM", "est. achieved occupancy %")
    out = []
    for M, N, K, dt in cases:
        try:
            gemm(M, N, K, dt)  # warm
            torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
            ks = harness.kernel_args(gemm_call(M, N, K, dt), keys)
            out.append({"M": M, "N": N, "K": K, "dtype": dt, "kernels": ks})
        except Exception as ex:
            out.append({"M": M, "N": N, "K": K, "dtype": dt, "error": str(ex)[:300]})
        torch.backends.cuda.matmul.allow_tf32 = False
    return out


@section("conv2d")
def _():
    # (n, c, h, w, k, r, s, stride, pad)
    return conv_rows([(32, 64, 56, 56, 64, 3, 3, 1, 1), (32, 128, 28, 28, 128, 3, 3, 1, 1),
                      (32, 256, 14, 14, 256, 3, 3, 1, 1), (32, 512, 7, 7, 512, 3, 3, 1, 1),
                      (32, 256, 56, 56, 64, 1, 1, 1, 0), (32, 64, 56, 56, 256, 1, 1, 1, 0),
                      (32, 3, 224, 224, 64, 7, 7, 2, 3), (8, 512, 64, 64, 512, 3, 3, 1, 1)])


@section("attention")
def _():
    # (batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal)
    return attention_rows([(8, 16, 16, 1024, 1024, 64, False), (8, 16, 16, 1024, 1024, 64, True),
                           (4, 32, 32, 4096, 4096, 128, False),
                           (4, 32, 32, 4096, 4096, 128, True),
                           (1, 32, 32, 8192, 8192, 128, True), (16, 32, 32, 512, 512, 128, False),
                           (16, 32, 8, 2048, 2048, 128, True), (16, 32, 32, 1, 4096, 128, False),
                           (64, 32, 8, 1, 8192, 128, False)])


@section("memory_bound")
def _():
    out = []
    for rows, cols in [(4096, 4096), (16384, 8192), (8192, 1024), (1024, 1024), (65536, 4096)]:
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        g = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
        bb = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
        e = rows * cols * 2
        for op, fn, nb in [("add", lambda: x + y, 3 * e), ("relu", lambda: torch.relu(x), 2 * e),
                           ("gelu", lambda: F.gelu(x, approximate="tanh"), 2 * e),
                           ("layernorm", lambda: F.layer_norm(x, (cols,), g, bb), 2 * e),
                           ("softmax", lambda: torch.softmax(x, dim=-1), 2 * e)]:
            out.append(timed(fn, nbytes=nb, op=op, rows=rows, cols=cols, dtype="bf16"))
    return out


@section("l2_vs_hbm_read")
def _():
    """One Triton read kernel over buffers from 2 MiB to 2 GiB: L2 vs HBM bandwidth."""
    import triton
    import triton.language as tl

    @triton.jit
    def rd(x_ptr, out_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(ITERS):
            base = ((pid + i * nprog) * BLOCK) % n
            acc += tl.load(x_ptr + base + tl.arange(0, BLOCK))
        tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)

    out = []
    BLOCK, nprog = 2048, 132 * 16
    o = torch.empty(nprog * BLOCK, device="cuda", dtype=torch.float32)
    for mib in [2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 256, 1024, 2048]:
        n = mib * 2 ** 20 // 4
        x = torch.randn(n, device="cuda", dtype=torch.float32)
        iters = max(16, (2 ** 31 // 4) // (nprog * BLOCK))  # read >= ~2 GiB per launch
        fn = lambda: rd[(nprog,)](x, o, n, ITERS=iters, BLOCK=BLOCK)
        e = eager_ms(fn)
        nb = 4.0 * nprog * BLOCK * iters
        out.append({"buffer_bytes": 4 * n, "read_bytes": nb, "ms": e, "GBps": nb / e / 1e6})
    return out


def _sample_clocks(stop, store):
    try:
        import pynvml
        pynvml.nvmlInit()
        hs = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        while not stop.is_set():
            row = [time.time()]
            for h in hs:
                row += [pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                        pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
                        pynvml.nvmlDeviceGetUtilizationRates(h).gpu]
            store.append(row)
            time.sleep(0.02)
    except Exception as ex:
        store.append(["error", str(ex)])


@section("clock_under_load")
def _():
    """SM clock and board power (NVML, every 20 ms) during ~2.5 s of one sustained load."""
    out = []
    loads = []
    for dt, n in [("bf16", 8192), ("tf32", 8192), ("fp32", 4096), ("fp8", 8192)]:
        loads.append((f"gemm_{dt}_{n}", dt, n))
    loads.append(("copy_1GiB", "copy", 2 ** 28))
    for name, dt, n in loads:
        if dt == "copy":
            x = torch.randn(n, device="cuda")
            y = torch.empty_like(x)
            fn = lambda: y.copy_(x)
        else:
            torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
            fn = gemm_call(n, n, n, dt)
        fn()
        torch.cuda.synchronize()
        store: list = []
        stop = threading.Event()
        th = threading.Thread(target=_sample_clocks, args=(stop, store))
        th.start()
        time.sleep(0.3)
        idle = len(store)
        t0 = time.time()
        calls = 0
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        while time.time() - t0 < 2.5:
            for _ in range(4):
                fn()
            calls += 4
            torch.cuda.synchronize()
        e.record()
        e.synchronize()
        stop.set()
        th.join()
        load = [r for r in store[idle:] if r and r[0] != "error"]
        half = load[len(load) // 2:]
        med = lambda v: sorted(v)[len(v) // 2] if v else None
        out.append({"load": name, "calls": calls, "ms_per_call": s.elapsed_time(e) / calls,
                    "idle_sm_mhz": store[0][1] if store and store[0][0] != "error" else None,
                    "sm_mhz_median_2nd_half": med([r[1] for r in half]),
                    "sm_mhz_max": max((r[1] for r in load), default=None),
                    "sm_mhz_min": min((r[1] for r in load), default=None),
                    "power_w_median_2nd_half": med([r[2] for r in half]),
                    "samples": store[:: max(1, len(store) // 60)]})
        torch.backends.cuda.matmul.allow_tf32 = False
        time.sleep(0.5)
    return out


# ---------------------------------------------------------------- 2 GPUs: links, NCCL
SIZES = [2 ** p for p in range(10, 31, 2)]  # 1 KiB .. 1 GiB


def p2p_curve():
    out = []
    if torch.cuda.device_count() < 2:
        return {"skipped": "one GPU"}
    for nb in SIZES:
        a0 = torch.empty(nb, dtype=torch.uint8, device="cuda:0")
        a1 = torch.empty(nb, dtype=torch.uint8, device="cuda:1")
        b0 = torch.empty(nb, dtype=torch.uint8, device="cuda:0")
        b1 = torch.empty(nb, dtype=torch.uint8, device="cuda:1")
        reps = harness.reps_for(nb)
        row = {"bytes": nb}
        for name, fn in [("d0_to_d1", lambda: a1.copy_(a0, non_blocking=True)),
                         ("d1_to_d0", lambda: b0.copy_(b1, non_blocking=True)),
                         ("bidirectional", lambda: (a1.copy_(a0, non_blocking=True),
                                                     b0.copy_(b1, non_blocking=True)))]:
            for _ in range(3):
                fn()
            torch.cuda.synchronize(0)
            torch.cuda.synchronize(1)
            ts = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                torch.cuda.synchronize(0)
                torch.cuda.synchronize(1)
                ts.append((time.perf_counter() - t0) / reps)
            ts.sort()
            t = ts[2]
            moved = nb * (2 if name == "bidirectional" else 1)
            row[name + "_s"] = t
            row[name + "_GBps"] = moved / t / 1e9
        out.append(row)
    return {"method": "host perf_counter around `reps` queued copy_ calls, synchronize both "
                      "devices; median of 5 batches; includes per-call launch cost",
            "can_access_peer": torch.cuda.can_device_access_peer(0, 1), "copies": out}


def _nccl_worker(rank, world, path):
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    res = []
    for op in harness.COLLECTIVES:
        for nb in SIZES:
            fn, n = harness.collective_call(dist, op, nb, world)
            if n == 0:
                continue
            t = harness.collective_s(dist, fn, harness.reps_for(nb))
            nbytes = 2 * n
            # nccl-tests conventions: algbw = bytes / t; busbw = algbw * factor
            res.append({"op": op, "bytes": nbytes, "time_s": t, "algbw_GBps": nbytes / t / 1e9,
                        "busbw_GBps": nbytes / t / 1e9 * harness.bus_factor(op, world)})
    if rank == 0:
        harness.write_json(path, res, indent=None, meta=False)
    dist.destroy_process_group()


def collectives():
    import torch.multiprocessing as mp
    tmp = "/tmp/nccl_res.json"
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    mp.spawn(_nccl_worker, args=(2, tmp), nprocs=2, join=True)
    return json.load(open(tmp))


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    C = {"about": "2x NVIDIA H200 (one host), PyTorch/NCCL; measured by "
                  "scripts/measure/heldout_ops_links.py. "
                  "size = bytes of the full buffer per rank (all-reduce: the tensor; all-gather: "
                  "the gathered output; reduce-scatter: the input; all-to-all: the send buffer). "
                  "busbw per nccl-tests (all-reduce x 2(n-1)/n, others x (n-1)/n).",
         "errors": {}}
    try:
        C["topology"] = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True,
                                       text=True, timeout=30).stdout
        C["nccl_version"] = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception as ex:
        C["errors"]["env"] = str(ex)
    two_gpus = [(name, lambda name=name, fn=fn: C.__setitem__(name, fn()))
                for name, fn in (("p2p", p2p_curve), ("collectives", collectives))]
    harness.run_sections(two_gpus, C, lambda: harness.write_json("h200x2_collectives.json", C),
                         keep=False)
    harness.run_sections(SECTIONS, R, save, budget_s=BUDGET_S)
    R["total_s"] = round(time.time() - harness.STARTED, 1)
    save()
    harness.say("errors:", list(R["errors"]), list(C["errors"]))
    for r in C.get("collectives", []) or []:
        if r["bytes"] in (2 ** 20, 2 ** 26, 2 ** 30):
            harness.say("coll", r["op"], r["bytes"], f'{r["busbw_GBps"]:.1f} GB/s busbw')
    for r in R["sections"].get("clock_under_load", []):
        harness.say("clock", r["load"], r["sm_mhz_median_2nd_half"], "MHz",
              r["power_w_median_2nd_half"], "W", f'{r["ms_per_call"]:.3f} ms/call')
    for r in R["sections"].get("gemm_heldout", []):
        if "tflops" in r:
            harness.say("gemm", r["tag"], r["dtype"], r["batch"], r["M"], r["N"], r["K"],
                  f'{r["gpu_ms"] * 1e3:.1f} us {r["tflops"]:.0f} TF')


if __name__ == "__main__":
    main()
