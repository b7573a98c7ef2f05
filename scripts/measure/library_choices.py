"""Run 9: which kernels cuBLAS and SDPA pick on one H200 (split-K GEMMs, split-KV decode
attention), the library choices run 8 showed accelsim's stack rules get wrong (issue 23/24).

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/library_choices.py $OUT

Writes ``$OUT/h200_library_run9.json``: per case the kernels one call launches (names, in
order), their median device time over 20 profiled calls, and the call's median time by CUDA
events. The split was fixed before anything was measured (scripts/data/REGISTRY.yaml):

* **calibration**: the Llama-3-8B shapes (GEMMs N x K of its projections at M = 1..512; decode
  attention with 32 heads / 8 KV heads at batch 1..64 and context 512..32768);
* **held-out**: every other shape (Llama-3-70B at TP 1/2/4/8, GPT-2 and odd shapes).
"""

import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

DEV = "cuda"
DT = torch.bfloat16
GEMM_M = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
CAL_NK = [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336), (14336, 4096),
          (1024, 4096), (128256, 4096)]
HELD_NK = [(8192, 8192), (10240, 8192), (57344, 8192), (8192, 28672),        # 70B TP1
           (5120, 8192), (28672, 8192), (8192, 14336),                        # 70B TP2
           (2560, 8192), (14336, 8192), (8192, 7168), (1280, 8192), (8192, 3584),  # TP4/8
           (2304, 768), (768, 768), (3072, 768), (768, 3072), (50257, 768),   # GPT-2
           (3000, 5000), (12345, 4096), (4096, 11008)]


def kernels_of(fn, reps: int = 20) -> tuple[list[str], list[float]]:
    """Kernel names of one call and each kernel's median device time (us) over ``reps``."""
    prof, _ = harness.profile_call(fn, cpu=False, calls=reps, warm=5)
    events = [e for e in prof.events() if e.device_type.name == "CUDA" and e.name
              and not e.name.startswith(("Memcpy", "Memset", "cudaStream"))]
    per = len(events) // reps if reps else 0
    names = [e.name for e in events[:per]]
    times = []
    for i in range(per):
        times.append(statistics.median(ev.device_time for ev in events[i::per][:reps]))
    return names, times


def event_time_us(fn, reps: int = 50) -> float:
    """Median over ``reps`` of one call between two CUDA events (us), after 5 warm calls."""
    harness.warm_up(fn, 5)
    return statistics.median(harness.event_time_s(fn) for _ in range(reps)) * 1e6


def gemm_cases(nk_list, role: str) -> list[dict]:
    rows = []
    for n, k in nk_list:
        w = torch.randn(n, k, device=DEV, dtype=DT)
        for m in GEMM_M:
            x = torch.randn(m, k, device=DEV, dtype=DT)
            fn = lambda x=x, w=w: F.linear(x, w)  # noqa: E731
            try:
                names, times = kernels_of(fn)
                rows.append({"kind": "linear", "role": role, "m": m, "n": n, "k": k,
                             "kernels": names, "kernel_us": times,
                             "call_us": event_time_us(fn)})
            except Exception as exc:  # noqa: BLE001 - keep the rest of the run
                rows.append({"kind": "linear", "role": role, "m": m, "n": n, "k": k,
                             "error": repr(exc)[:200]})
        del w
        torch.cuda.empty_cache()
    return rows


def attention_cases() -> list[dict]:
    rows = []
    shapes = [("cal", 32, 8, 128), ("held", 64, 8, 128), ("held", 8, 1, 128),  # 70B TP8
              ("held", 12, 12, 64), ("held", 16, 16, 64)]
    for role, h, kv, dh in shapes:
        for b in (1, 4, 16, 64):
            for ctx in (512, 2048, 8192, 32768):
                if b * ctx * kv * dh * 2 * 2 > 20e9:
                    continue
                q = torch.randn(b, h, 1, dh, device=DEV, dtype=DT)
                kk = torch.randn(b, kv, ctx, dh, device=DEV, dtype=DT)
                vv = torch.randn(b, kv, ctx, dh, device=DEV, dtype=DT)
                gqa = kv != h
                fn = lambda q=q, kk=kk, vv=vv, g=gqa: F.scaled_dot_product_attention(  # noqa: E731
                    q, kk, vv, enable_gqa=g)
                try:
                    names, times = kernels_of(fn)
                    rows.append({"kind": "decode_attention", "role": role, "batch": b,
                                 "heads": h, "kv_heads": kv, "head_dim": dh, "context": ctx,
                                 "kernels": names, "kernel_us": times,
                                 "call_us": event_time_us(fn)})
                except Exception as exc:  # noqa: BLE001
                    rows.append({"kind": "decode_attention", "role": role, "batch": b,
                                 "heads": h, "kv_heads": kv, "head_dim": dh, "context": ctx,
                                 "error": repr(exc)[:200]})
                del q, kk, vv
        torch.cuda.empty_cache()
    return rows


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    doc = {"run": 9, "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda,
           "cublas_workspace": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
           "split": "calibration = Llama-3-8B shapes; held-out = every other shape (docstring)",
           "cases": []}
    doc["cases"] += gemm_cases(CAL_NK, "cal")
    say("gemm cal done")
    doc["cases"] += gemm_cases(HELD_NK, "held")
    say("gemm held done")
    doc["cases"] += attention_cases()
    say("attention done")
    harness.write_json("h200_library_run9.json", doc)
    say("cases", len(doc["cases"]), "errors", sum("error" in c for c in doc["cases"]))


if __name__ == "__main__":
    main()
