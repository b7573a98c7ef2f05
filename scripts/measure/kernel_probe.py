# ruff: noqa: B023, E731
"""Second H200 probe: how PyTorch's row kernels, int8 GEMMs, 1x1/stem convolutions,
misaligned-K and batched GEMMs and SDPA actually run (kernel names, grids, times).

Run once on the device machine (kind ``nvidia-h200``), with the image's python3:

    PYTHONUNBUFFERED=1 python3 scripts/measure/kernel_probe.py $OUT

Writes ``h200_kernel_probe2.json`` (kept as ``scripts/data/h200_kernel_probe2.json``). The shapes
were chosen apart from the held-out ones of ``h200_heldout.json``, but a few coincide (the
16384 x 8192 row ops, bf16 3072^3 and 6144^3): ``scripts/validate/validate_gpu.py`` drops those from
the probe set, so the held-out file stays held out. These points are for understanding the
kernels and for calibrating physical constants.

Timing as ``measure/heldout_ops_links.py`` (its helpers are reused): ``gpu_ms`` = per-call time
replayed inside a CUDA graph for short calls, else the median of back-to-back calls between CUDA
events; random inputs. ``kernels`` = the CUDA kernels one call launches (torch.profiler:
name, duration, grid, block, registers, shared memory).
"""

import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say, timed  # noqa: E402
from heldout_ops_links import attention_rows, conv_rows, gemm, gemm_call  # noqa: E402

R: dict = {"sections": {}, "errors": {}, "seconds": {}}
BUDGET_S = float(os.environ.get("MEASURE_BUDGET_S", "240"))
KEYS = ("grid", "block", "shared memory", "registers per thread", "blocks per SM",
        "warps per SM")


def save() -> None:
    harness.write_json("h200_kernel_probe2.json", R)


def kernels(fn) -> list:
    """The CUDA kernels one call of ``fn`` launches (after a warm call)."""
    return harness.kernel_args(fn, KEYS, name_len=300)


def with_kernels(fn, **meta):
    r = timed(fn, **meta)
    try:
        r["kernels"] = kernels(fn)
    except Exception as ex:
        r["kernels_error"] = str(ex)[:200]
    return r


SECTIONS: list = []


def section(fn):
    SECTIONS.append((fn.__name__, fn))
    return fn


@section
def env():
    p = torch.cuda.get_device_properties(0)
    return {"name": p.name, "sm_count": p.multi_processor_count, "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "l2_bytes": getattr(p, "L2_cache_size", None)}


@section
def rowwise():
    """softmax / layernorm / gelu / relu (bf16) over rows x cols: elements 2^21, 2^24, 2^27
    and cols 128 ... 32768 (none of these shapes is in the held-out file)."""
    out = []
    for elems in (2 ** 21, 2 ** 24, 2 ** 27):
        for cols in (128, 512, 2048, 8192, 32768):
            rows = elems // cols
            x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
            g = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
            bb = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
            e = rows * cols * 2
            for op, fn in [("relu", lambda: torch.relu(x)),
                           ("gelu", lambda: F.gelu(x, approximate="tanh")),
                           ("layernorm", lambda: F.layer_norm(x, (cols,), g, bb)),
                           ("softmax", lambda: torch.softmax(x, dim=-1))]:
                names = elems == 2 ** 24 and op in ("softmax", "layernorm", "gelu")
                f = with_kernels if names else timed
                out.append(f(fn, nbytes=2 * e, op=op, rows=rows, cols=cols, dtype="bf16"))
    return out


@section
def int8_fp8():
    """torch._int_mm vs torch._scaled_mm (fp8) on squares 1536, 3072, 6144, 12288, with the
    kernels each launches."""
    out = []
    for n in (1536, 3072, 6144, 12288):
        for dt in ("int8", "fp8", "bf16"):
            r = gemm(n, n, n, dt, tag="probe_square")
            if n in (3072, 12288):
                r["kernels"] = kernels(gemm_call(n, n, n, dt))
            out.append(r)
    return out


@section
def misaligned():
    """bf16 3072 x 3072 x K for K = 3072 (16 B), 3076 (8 B), 3074 (4 B), 3073 (2 B), and M/N
    misaligned by 4 elements; kernels named."""
    out = []
    for M, N, K in [(3072, 3072, 3072), (3072, 3072, 3076), (3072, 3072, 3074),
                    (3072, 3072, 3073), (3072, 3076, 3072), (3076, 3072, 3072),
                    (6144, 6144, 6148), (6144, 6144, 6146), (2048, 2048, 2052)]:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        out.append(with_kernels(lambda: a @ b, flops=2.0 * M * N * K, M=M, N=N, K=K,
                                dtype="bf16"))
    return out


@section
def batched():
    out = []
    for bt, M, N, K in [(256, 256, 256, 64), (64, 1024, 1024, 64), (32, 1024, 1024, 512),
                        (8, 2048, 2048, 2048), (64, 256, 4096, 256)]:
        a = torch.randn(bt, M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(bt, K, N, device="cuda", dtype=torch.bfloat16)
        out.append(with_kernels(lambda: torch.bmm(a, b), flops=2.0 * bt * M * N * K,
                                batch=bt, M=M, N=N, K=K, dtype="bf16"))
    return out


@section
def conv():
    # (n, c, h, w, k, r, s, stride, pad)
    return conv_rows([(16, 512, 28, 28, 128, 1, 1, 1, 0), (16, 128, 28, 28, 512, 1, 1, 1, 0),
                      (64, 256, 14, 14, 1024, 1, 1, 1, 0), (16, 3, 224, 224, 64, 7, 7, 2, 3),
                      (64, 3, 224, 224, 64, 7, 7, 2, 3), (16, 3, 224, 224, 32, 3, 3, 2, 1),
                      (16, 128, 56, 56, 128, 3, 3, 1, 1)], with_kernels)


@section
def attention():
    # (batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal); seq_q == seq_kv here
    return attention_rows([(4, 16, 16, 2048, 2048, 128, False),
                           (4, 16, 16, 2048, 2048, 128, True),
                           (8, 16, 16, 2048, 2048, 64, False), (2, 32, 32, 8192, 8192, 64, False),
                           (32, 16, 16, 256, 256, 128, False)], with_kernels)


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    harness.run_sections(SECTIONS, R, save, budget_s=BUDGET_S)
    R["total_s"] = round(time.time() - harness.STARTED, 1)
    save()
    for r in R["sections"].get("rowwise", []):
        say(r["op"], r["rows"], r["cols"], f'{r["gpu_ms"] * 1e3:.2f} us {r["GBps"]:.0f} GB/s',
            (r.get("kernels") or [{}])[0].get("name", "")[:60])
    for sec in ("int8_fp8", "misaligned", "batched", "conv", "attention"):
        for r in R["sections"].get(sec, []):
            ks = [k["name"][:70] for k in r.get("kernels", [])]
            say(sec, {k: r[k] for k in r if k in ("M", "N", "K", "dtype", "n", "c", "k",
                                                  "r", "batch", "seq_q", "causal")},
                f'{r["gpu_ms"] * 1e3:.1f} us', f'{r.get("tflops", 0):.0f} TF', ks)
    say("errors:", {k: v[-300:] for k, v in R["errors"].items()})


if __name__ == "__main__":
    main()
