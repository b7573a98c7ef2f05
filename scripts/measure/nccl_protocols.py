# ruff: noqa: B023, E731
"""Measure NCCL collectives on two GPUs by protocol, algorithm and channel count.

Run on the device machine (kind ``nvidia-h200-x2``) with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/nccl_protocols.py $OUT

Writes ``$OUT/h200x2_nccl_protocols.json`` (copied to ``scripts/data/``) and
``$OUT/nccl_default_rank*.log`` (head of NCCL's own INFO log for the default configuration).

What is measured, per configuration (a fresh pair of processes, one per GPU, with the
configuration's NCCL environment variables; NCCL reads them at communicator init):

* ``default``: NCCL's own choice (as in the held-out ``h200x2_collectives.json``); its INFO
  log (subsystems INIT, ENV, TUNING) shows the channels, NCCL's tuning table and the
  algorithm/protocol it picks per call. Used to UNDERSTAND what NCCL does; never fitted.
* ``LL``, ``LL128``, ``Simple``: ``NCCL_PROTO`` forced, ``NCCL_ALGO=Ring``; all four
  collectives, 1 KiB .. 1 GiB.
* ``Simple_chK``: Simple with ``NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS = K`` (per-channel
  bandwidth), 16-256 MiB; ``LL128_ch4``/``LL_ch4`` likewise; ``Tree``: ``NCCL_ALGO=Tree``.

Two timings per (collective, size), bf16 sum, the same buffers and semantics as
``scripts/measure/heldout_ops_links.py``:

* ``eager_s``: per-call time of ``reps`` calls queued back to back between CUDA events,
  median of 5 batches: exactly the held-out file's method (host issue cost included).
* ``gpu_s``: GPU-side per-call time. A ``torch.cuda._sleep`` kernel holds the stream while
  the host queues ``N`` (then ``2N``) calls, so the host is never the bottleneck; per-call
  = (T(2N) - T(N)) / N (start-up skew between the ranks cancels), median of 3 trials.
  ``host_bound`` flags a trial where queueing outlasted the sleep.
"""

import json
import os
import re
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

BUDGET_S = float(os.environ.get("MEASURE_BUDGET_S", "200"))
T0 = harness.STARTED
SIZES = [2 ** p for p in range(10, 31, 2)]  # 1 KiB .. 1 GiB
BIG = [2 ** 24, 2 ** 26, 2 ** 28]
OPS = harness.COLLECTIVES
SAFE = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1"}
RING = {"NCCL_ALGO": "Ring"}


def _ch(k: int) -> dict:
    return {"NCCL_MIN_NCHANNELS": str(k), "NCCL_MAX_NCHANNELS": str(k)}


# (name, env, ops, sizes) in priority order: the budget cuts from the end.
CONFIGS = [
    ("default", {}, OPS, SIZES),
    ("LL", {"NCCL_PROTO": "LL", **RING}, OPS, SIZES),
    ("LL128", {"NCCL_PROTO": "LL128", **RING}, OPS, SIZES),
    ("Simple", {"NCCL_PROTO": "Simple", **RING}, OPS, SIZES),
    ("Simple_ch1", {"NCCL_PROTO": "Simple", **RING, **_ch(1)}, OPS[:3], BIG),
    ("Simple_ch4", {"NCCL_PROTO": "Simple", **RING, **_ch(4)}, OPS[:3], BIG),
    ("Simple_ch8", {"NCCL_PROTO": "Simple", **RING, **_ch(8)}, OPS[:3], BIG),
    ("Simple_ch16", {"NCCL_PROTO": "Simple", **RING, **_ch(16)}, OPS[:3], BIG),
    ("Simple_ch32", {"NCCL_PROTO": "Simple", **RING, **_ch(32)}, OPS[:3], BIG),
    ("LL128_ch4", {"NCCL_PROTO": "LL128", **RING, **_ch(4)}, OPS[:3], BIG),
    ("LL_ch4", {"NCCL_PROTO": "LL", **RING, **_ch(4)}, OPS[:3], [2 ** 20, 2 ** 24]),
    ("Simple_ch2", {"NCCL_PROTO": "Simple", **RING, **_ch(2)}, OPS[:3], BIG),
    ("Tree", {"NCCL_ALGO": "Tree"}, ("allreduce",), SIZES),
]


def _worker(rank, world, name, ops, sizes, path, port, deadline):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    res, errors = [], {}
    sleep_cycles_per_s = 1.9e9  # sleep length is measured with events; this only sizes it
    for op in ops:
        for nb in sizes:
            # both ranks take the same decision: sync the clock check through a collective
            flag = torch.tensor([1.0 if time.time() < deadline else 0.0], device="cuda")
            dist.all_reduce(flag, op=dist.ReduceOp.MIN)
            if flag.item() == 0.0:
                errors[f"{op}/{nb}"] = "skipped: time budget"
                continue
            try:
                fn, n = harness.collective_call(dist, op, nb, world)
                eager = harness.collective_s(dist, fn, harness.reps_for(nb))
                # GPU-side: queue behind a sleep kernel, N and 2N calls
                N = 20 if nb <= 2 ** 22 else (6 if nb <= 2 ** 26 else 2)
                per, host_bound = [], False
                pre = torch.cuda.Event(enable_timing=True)
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                for _ in range(3):
                    tt = {}
                    for k in (N, 2 * N):
                        dist.barrier()
                        torch.cuda.synchronize()
                        pre.record()
                        torch.cuda._sleep(int(sleep_cycles_per_s * (0.5e-3 + k * 120e-6)))
                        s.record()
                        h0 = time.perf_counter()
                        for _ in range(k):
                            fn()
                        host = time.perf_counter() - h0
                        e.record()
                        e.synchronize()
                        slept = pre.elapsed_time(s) * 1e-3
                        host_bound |= host > slept
                        tt[k] = s.elapsed_time(e) * 1e-3
                    per.append((tt[2 * N] - tt[N]) / N)
                gpu = sorted(per)[1]
                factor = harness.bus_factor(op, world)
                res.append({"op": op, "bytes": 2 * n, "eager_s": eager, "gpu_s": gpu,
                            "gpu_trials_s": per, "host_bound": host_bound,
                            "eager_busbw_GBps": 2 * n / eager / 1e9 * factor,
                            "gpu_busbw_GBps": 2 * n / gpu / 1e9 * factor if gpu > 0 else None})
            except Exception:
                errors[f"{op}/{nb}"] = traceback.format_exc()[-1500:]
    if rank == 0:
        harness.write_json(path, {"results": res, "errors": errors, "torch": torch.__version__,
                                  "nccl": ".".join(map(str, torch.cuda.nccl.version()))},
                           indent=None, meta=False)
    dist.destroy_process_group()


_PREFIX = re.compile(r"^.*?NCCL (INFO|WARN) ")
_PERCALL = ("Bytes ->", "-> Algo", "opCount", "nBytes")


def _digest_logs(logdir: str, name: str) -> dict:
    """NCCL's INFO log: init lines (channels, tuning table) and the per-call algorithm choices."""
    out = {"init": {}, "choices": {}}
    for fname in sorted(os.listdir(logdir)):
        if not fname.startswith(name + "."):
            continue
        init, choices = [], {}
        with open(os.path.join(logdir, fname), errors="replace") as f:
            for line in f:
                body = _PREFIX.sub("", line.rstrip())
                if any(k in body for k in _PERCALL):
                    if len(choices) < 400 or body in choices:
                        choices[body] = choices.get(body, 0) + 1
                elif len(init) < 500:
                    init.append(body)
        out["init"][fname] = init
        out["choices"][fname] = choices
    return out


def main(argv: list[str] | None = None) -> None:
    import torch.multiprocessing as mp

    harness.cli(__doc__, argv)
    logdir = "/tmp/nccl_logs"
    os.makedirs(logdir, exist_ok=True)
    doc = {"about": __doc__, "configs": {}, "errors": {}, "env": {}}
    for cmd in (["nvidia-smi", "topo", "-m"], ["nvidia-smi", "nvlink", "-s", "-i", "0"],
                ["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version",
                 "--format=csv"]):
        try:
            doc["env"][" ".join(cmd)] = subprocess.run(cmd, capture_output=True, text=True,
                                                       timeout=20).stdout[-4000:]
        except Exception as ex:
            doc["env"][" ".join(cmd)] = f"error: {ex}"
    path = harness.out_path("h200x2_nccl_protocols.json")
    for i, (name, env, ops, sizes) in enumerate(CONFIGS):
        if time.time() - T0 > BUDGET_S - 12:
            doc["errors"][name] = "skipped: time budget"
            continue
        t0 = time.time()
        for k in ("NCCL_PROTO", "NCCL_ALGO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"):
            os.environ.pop(k, None)
        os.environ.update(SAFE)
        os.environ.update(env)
        # per-call TUNING lines cost host time: only where NCCL's choice is the question
        subsys = "INIT,ENV,TUNING" if name in ("default", "Tree") else "INIT,ENV"
        os.environ.update({"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": subsys,
                           "NCCL_DEBUG_FILE": f"{logdir}/{name}.%h.%p.log"})
        tmp = f"/tmp/nccl_{name}.json"
        try:
            mp.spawn(_worker, args=(2, name, ops, sizes, tmp, 29600 + i, T0 + BUDGET_S - 4),
                     nprocs=2, join=True)
            with open(tmp) as f:
                got = json.load(f)
        except Exception:
            got = {"results": [], "errors": {"spawn": traceback.format_exc()[-3000:]}}
        got["env"] = {**SAFE, **env}
        got["seconds"] = round(time.time() - t0, 1)
        try:
            got["nccl_log"] = _digest_logs(logdir, name)
        except Exception:
            got["nccl_log"] = {"error": traceback.format_exc()[-1000:]}
        doc["configs"][name] = got
        if name == "default":
            for fname in sorted(os.listdir(logdir)):
                if fname.startswith("default."):
                    with open(os.path.join(logdir, fname), errors="replace") as f:
                        head = f.readlines()[:4000]
                    log = harness.out_path(f"nccl_default_{fname.split('.')[-2]}.log")
                    with open(log, "w") as g:
                        g.writelines(head)
        harness.write_json(path, doc)
        say(f"[{name}] {got['seconds']}s, {len(got['results'])} rows, "
            f"errors: {list(got['errors'])[:4]}")
    doc["total_s"] = round(time.time() - T0, 1)
    harness.write_json(path, doc)
    for name, got in doc["configs"].items():
        for r in got["results"]:
            if r["bytes"] in (2 ** 10, 2 ** 20, 2 ** 24, 2 ** 30):
                say(f"{name:12s} {r['op']:13s} {r['bytes']:>11d} eager {r['eager_s'] * 1e6:9.1f} us"
                    f" gpu {r['gpu_s'] * 1e6:9.1f} us  busbw(gpu) {r['gpu_busbw_GBps'] or 0:7.1f}"
                    f"{'  HOST-BOUND' if r['host_bound'] else ''}")


if __name__ == "__main__":
    main()
