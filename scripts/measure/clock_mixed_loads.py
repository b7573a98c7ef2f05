# ruff: noqa: E731, B023
"""Run 21 calibration probe: the SM clock and board power of one H200 under sustained loads
that mix tensor-core GEMMs with memory-bound kernels, and of plain-decoder steps.

Run on the device machine with the image's python3 (PyTorch, pynvml):

    PYTHONUNBUFFERED=1 python3 scripts/measure/clock_mixed_loads.py $OUT

Writes ``$OUT/h200_clock_mixes_run21.json``. Why: the plain decoder's prefill steps are 13-16 %
slow in the model on runs 17, 18 and 20 (``docs/gpu_findings_log.md`` 2026-12-03), although
each of their GEMMs, timed alone back to back (run 19), is within a few percent of the model
and the GEMMs are ~88 % of the step: the measured step is no longer than its GEMMs alone.
The model runs every bf16 GEMM at the clock that back-to-back GEMMs hold at the 700 W cap
(1,470 MHz); a step that spends part of its time in memory-bound kernels draws less power on
average and may hold a higher clock. This probe measures that.

Protocol: each load is a CUDA graph replayed back to back for ``SECONDS`` (after ``WARM_S`` of
warm-up at that load), NVML sampling the SM clock and board power every 20 ms; per load: the
replays, the seconds per replay (CUDA events around the whole window), the median SM clock and
power over the window's second half. Loads: ``gemm_matmul`` (8 x ``x @ W``, ``W`` K x N as
run 19 timed it; M = 1536, N = 14336, K = 4096, bf16), ``gemm_linear`` (the same product as
``nn.Linear`` computes it, ``F.linear(x, W')`` with ``W'`` N x K, as the plain decoder calls
it), ``mem`` (8 x ``silu`` over a 1536 x 14336 bf16 tensor), ``mix_<j>`` (8 x (one such
linear then ``j`` such silu), j = 1, 2, 4, 8), and three plain-decoder steps
(``workloads/programs/plain.py``: prefill batch 3 x 512 and 1 x 2560 tokens, decode batch 16
at context 1024). Then ``cold``: after 2 s idle, five single-linear replays timed one by one.
Last, after all timing (the profiler never slows a timed call): the kernels of one call of
each GEMM layout, and of one eager prefill step (3 x 512) aggregated by kernel name (count,
total microseconds).

The split was fixed before anything was measured (``scripts/data/REGISTRY.yaml``): every load
is **calibration** (for the GPU clock under mixed loads); the held-out check of whatever it
fits is a later run of program shapes no run timed.
"""

import os
import statistics
import sys
import threading
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "programs"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import plain  # noqa: E402
from harness import say  # noqa: E402

DEV, DT = "cuda", torch.bfloat16
SECONDS, WARM_S, REPEAT = 2.5, 0.7, 8
M, N, K = 1536, 14336, 4096
MIX_ELEMENTWISE = (1, 2, 4, 8)
PROGRAMS = [("decoder_prefill_b3_s512", {"mode": "prefill", "batch": 3, "seq": 512}),
            ("decoder_prefill_b1_s2560", {"mode": "prefill", "batch": 1, "seq": 2560}),
            ("decoder_decode_b16_c1024", {"mode": "decode", "batch": 16, "context": 1024})]


def sample(stop: threading.Event, store: list) -> None:
    """(time, SM MHz, board W) every 20 ms until ``stop``."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        while not stop.is_set():
            store.append((time.time(), pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                          pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0))
            time.sleep(0.02)
    except Exception as ex:  # noqa: BLE001
        store.append(("error", repr(ex)[:200], None))


def sustained(replay) -> dict:
    """Replay back to back: ``WARM_S`` warm-up, then ``SECONDS`` timed and sampled."""
    t0 = time.time()
    while time.time() - t0 < WARM_S:
        replay()
        torch.cuda.synchronize()
    store: list = []
    stop = threading.Event()
    th = threading.Thread(target=sample, args=(stop, store))
    th.start()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls, t0 = 0, time.time()
    s.record()
    while time.time() - t0 < SECONDS:
        for _ in range(2):
            replay()
        calls += 2
        torch.cuda.synchronize()
    e.record()
    e.synchronize()
    stop.set()
    th.join()
    ok = [r for r in store if r[0] != "error"]
    half = ok[len(ok) // 2:]
    return {"replays": calls, "s_per_replay": s.elapsed_time(e) * 1e-3 / calls,
            "sm_mhz_median_2nd_half": statistics.median(r[1] for r in half) if half else None,
            "power_w_median_2nd_half": statistics.median(r[2] for r in half) if half else None,
            "sm_mhz_min": min((r[1] for r in ok), default=None),
            "sm_mhz_max": max((r[1] for r in ok), default=None),
            "samples": len(ok), "errors": [r[1] for r in store if r[0] == "error"]}


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    doc = {"run": 21, "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "role": "calibration", "about": __doc__.split("\n\n")[0],
           "gemm": {"m": M, "n": N, "k": K, "dtype": "bf16"}, "repeat": REPEAT,
           "loads": [], "errors": {}}
    x = torch.randn(M, K, device=DEV, dtype=DT)
    w = torch.randn(K, N, device=DEV, dtype=DT)
    w_t = torch.randn(N, K, device=DEV, dtype=DT)
    t = torch.randn(M, N, device=DEV, dtype=DT)
    matmul = lambda: x @ w
    gemm = lambda: F.linear(x, w_t)
    mem = lambda: F.silu(t)
    loads = [("gemm_matmul", {"gemms": 1, "elementwise": 0},
              lambda: [matmul() for _ in range(REPEAT)]),
             ("gemm_linear", {"gemms": 1, "elementwise": 0},
              lambda: [gemm() for _ in range(REPEAT)]),
             ("mem", {"gemms": 0, "elementwise": 1}, lambda: [mem() for _ in range(REPEAT)])]
    for j in MIX_ELEMENTWISE:
        loads.append((f"mix_{j}", {"gemms": 1, "elementwise": j},
                      lambda j=j: [(gemm(), [mem() for _ in range(j)]) for _ in range(REPEAT)]))
    with torch.inference_mode():
        for name, shape, fn in loads:
            try:
                rec = {"load": name, **shape, "per_replay": REPEAT,
                       **sustained(harness.graph_of(fn))}
                doc["loads"].append(rec)
                say(name, f"{rec['s_per_replay'] * 1e6:.1f} us/replay",
                    rec["sm_mhz_median_2nd_half"], "MHz", rec["power_w_median_2nd_half"], "W")
            except Exception as ex:  # noqa: BLE001
                doc["errors"][name] = repr(ex)[:400]
                say("ERROR", name, doc["errors"][name])
        one = harness.graph_of(gemm)
        time.sleep(2.0)
        cold = []
        for _ in range(5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            one()
            e.record()
            e.synchronize()
            cold.append(s.elapsed_time(e) * 1e-3)
        doc["cold_single_gemm_s"] = cold
        say("cold", [round(c * 1e6, 1) for c in cold])
        built = None
        for name, params in PROGRAMS:
            try:
                model, args = plain.decoder(device=DEV, dtype="bf16", model=built, **params)
                built = model
                step = lambda m=model, a=args: m(*a)
                rec = {"load": name, "program": "decoder", "params": params, "per_replay": 1,
                       **sustained(harness.graph_of(step))}
                doc["loads"].append(rec)
                say(name, f"{rec['s_per_replay'] * 1e3:.3f} ms/step",
                    rec["sm_mhz_median_2nd_half"], "MHz", rec["power_w_median_2nd_half"], "W")
            except Exception as ex:  # noqa: BLE001
                doc["errors"][name] = repr(ex)[:400]
                say("ERROR", name, doc["errors"][name])
        doc["kernels"] = {"gemm_matmul": harness.profile_kernels(matmul),
                          "gemm_linear": harness.profile_kernels(gemm)}
        try:
            model, args = plain.decoder(device=DEV, dtype="bf16", model=built, **PROGRAMS[0][1])
            by_name: dict = {}
            for name, us in harness.profile_kernels(lambda: model(*args))["kernels"]:
                c = by_name.setdefault(name, [0, 0.0])
                c[0] += 1
                c[1] += us
            doc["kernels"][PROGRAMS[0][0] + "_eager"] = sorted(
                ([n, c, round(us, 2)] for n, (c, us) in by_name.items()), key=lambda r: -r[2])
        except Exception as ex:  # noqa: BLE001
            doc["errors"]["profile"] = repr(ex)[:400]
    harness.write_json("h200_clock_mixes_run21.json", doc)


if __name__ == "__main__":
    main()
