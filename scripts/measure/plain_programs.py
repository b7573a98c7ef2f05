# ruff: noqa: E731, B023
"""Run 8: plain PyTorch programs (workloads/programs/plain.py) timed on one H200 as users run them.

Run on the device machine with the image's python3 (PyTorch):

    MEASURE_ROUNDS=4 PYTHONUNBUFFERED=1 python3 scripts/measure/plain_programs.py $OUT

Writes ``$OUT/h200_programs_run8.json``. The split was fixed before anything was measured
or fitted (scripts/data/REGISTRY.yaml):

* **calibration** (``host``): host dispatch per call class on tiny tensors for the call
  classes captured programs use that runs 2 and 7 did not measure (``x @ W``, batched ``@``,
  ``F.layer_norm``, ``F.gelu``, gathers, fills, contiguous copies), same protocol as
  ``e2e.measure_host_classes``; and ``profile`` of one eager step at the smallest
  shape of each program (kernel names only: what each call launches on this PyTorch);
* **held-out** (``programs``): every step timing (eager: interleaved rounds; CUDA graph) and
  the kernel lists of the other shapes. Never fitted; scored once, after the model is frozen.
"""

import os
import statistics
import sys
import traceback

os.environ.setdefault("MEASURE_OUTNAME", "h200_programs_run8.json")
sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "programs"))

import e2e as me  # noqa: E402
import harness  # noqa: E402
import plain  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from harness import say  # noqa: E402

CASES = {
    # program: [(params, role)]; "cal" = profiled calibration shape, "held" = held out
    "decoder": [({"mode": "decode", "batch": 1, "context": 1024}, "cal"),
                ({"mode": "decode", "batch": 8, "context": 4096}, "held"),
                ({"mode": "decode", "batch": 32, "context": 2048}, "held"),
                ({"mode": "decode", "batch": 128, "context": 1024}, "held"),
                ({"mode": "decode", "batch": 256, "context": 512}, "held"),
                ({"mode": "prefill", "batch": 1, "seq": 2048}, "held"),
                ({"mode": "prefill", "batch": 4, "seq": 1024}, "held")],
    "gpt": [({"mode": "decode", "batch": 1, "context": 512}, "cal"),
            ({"mode": "decode", "batch": 16, "context": 1024}, "held"),
            ({"mode": "decode", "batch": 64, "context": 256}, "held"),
            ({"mode": "decode", "batch": 256, "context": 800}, "held"),
            ({"mode": "prefill", "batch": 2, "seq": 512}, "held")],
    "encoder": [({"batch": 1, "seq": 128}, "cal"), ({"batch": 8, "seq": 256}, "held"),
                ({"batch": 32, "seq": 512}, "held"), ({"batch": 128, "seq": 128}, "held")],
    "cnn": [({"batch": 1}, "cal"), ({"batch": 8}, "held"), ({"batch": 32}, "held"),
            ({"batch": 128}, "held")],
}
if me.QUICK:
    CASES = {"decoder": [({"mode": "decode", "batch": 1, "context": 64, "layers": 2}, "cal")],
             "encoder": [({"batch": 1, "seq": 16, "layers": 2}, "cal")]}

me.RESULT["programs"] = []
me.RESULT["about"] = __doc__.split("\n\n")[0]


def measure_host() -> None:
    """Host dispatch per call class (calibration), interleaved rounds, tiny tensors."""
    n, rounds = (50, 2) if me.QUICK else (300, 5)
    dev, dt = me.DEV, me.DT
    a = torch.randn(1, 4096, device=dev, dtype=dt)
    w = torch.randn(4096, 4096, device=dev, dtype=dt)
    q = torch.randn(1, 16, 8, 64, device=dev, dtype=dt)
    kt = torch.randn(1, 16, 64, 8, device=dev, dtype=dt)
    g = torch.ones(4096, device=dev, dtype=dt)
    idx = torch.tensor([0, 3], device=dev)
    at = a.view(64, 64).t()
    cache = torch.zeros(1, 8, 64, 128, device=dev, dtype=dt)
    calls = {
        "matmul_2d": lambda: a @ w, "matmul_batched": lambda: q @ kt,
        "f_layer_norm": lambda: F.layer_norm(a, (4096,), g, g),
        "f_rms_norm": lambda: F.rms_norm(a, (4096,), g, 1e-5),
        "gelu": lambda: F.gelu(a), "softmax": lambda: torch.softmax(a, -1),
        "div_scalar": lambda: a / 8.0, "index": lambda: a[:, idx],
        "contiguous": lambda: at.contiguous(), "fill_slice": lambda: cache.__setitem__(
            (slice(None), slice(None), slice(3, 4)), 0.0),
        "split": lambda: a.split(1024, dim=-1), "add": lambda: a + a,
        "linear_f": lambda: F.linear(a, w)}
    res = {k: [] for k in calls}
    with torch.inference_mode():
        for fn in calls.values():
            harness.warm_up(fn, 20)
        for _ in range(rounds):
            for name, fn in calls.items():
                res[name].append(harness.host_calls_s(fn, n)[0])
    me.RESULT["host"]["call_classes"] = {k: {"issue_s": statistics.median(v), "rounds_issue_s": v}
                                         for k, v in res.items()}
    say({k: round(statistics.median(v) * 1e6, 2) for k, v in res.items()})
    me.save()


def measure_programs() -> None:
    """Every case: eager (interleaved rounds, ``MEASURE_ROUNDS``), CUDA graph, one profile."""
    for prog, cases in CASES.items():
        built = None
        for params, role in cases:
            if me.left() < 120:
                break
            try:
                model, args = getattr(plain, prog)(device=me.DEV, dtype=me.DT, model=built,
                                                   **params)
                built = model
                step = lambda m=model, a=args: m(*a)
                rec = {"model": prog, "mode": params.get("mode", "encoder"),
                       "batch": params["batch"], "seq": params.get("seq", 1),
                       "params": params, "role": role}
                me.run_case(rec, step, me.STEPS)
                rec["program"] = prog
                me.RESULT["models"].remove(rec)
                me.RESULT["programs"].append(rec)
                if me.CUDA and "profile" not in rec:
                    with torch.inference_mode():
                        rec["profile"] = harness.profile_kernels(step)
            except Exception as e:  # noqa: BLE001
                me.RESULT["errors"][f"{prog}_{params}"] = traceback.format_exc()[-800:]
                say("ERROR", prog, params, repr(e)[:200])
        me.flush_eager()  # the inputs stay alive in PENDING closures until flushed
        del built, model, args, step
        torch.cuda.empty_cache() if me.CUDA else None
    me.save()


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    me.RESULT["device"] = harness.device_info()
    harness.run_sections([(f.__name__, f) for f in (measure_host, measure_programs)],
                         me.RESULT, me.save, keep=False)


if __name__ == "__main__":
    main()
