# ruff: noqa: E731, B023
"""Run 23 calibration probe: the host time of each module call inside an eager CNN step, in
PyTorch's default NCHW layout and channels-last.

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/eager_module_host.py $OUT

Writes ``$OUT/h200_eager_module_host_run23.json``. Why: run 22's NCHW CNN takes 3.3 ms a step in
eager mode at every batch (the model 1.5 ms), where run 20's channels-last CNN took 1.5-1.6 ms
(``docs/gpu_findings_log.md`` 2026-12-03): the host spends ~90 us more per NCHW convolution
than the layout copies' launches the model charges. Protocol: the plain CNN
(``workloads/programs/plain.py`` ``cnn``, batch 4, NCHW, then channels-last in a fresh model),
warmed up, then ``STEPS`` eager steps with forward pre/post hooks on every leaf module taking
``time.perf_counter`` (host seconds from the module call's entry to its return; the GPU runs
behind, so this is dispatch), and the same steps without hooks (wall per step, a synchronise
after each). Also: one NCHW convolution of each shape called alone ``CALLS`` times back to back
(host seconds per call, as run 20 timed single ops), to set beside its in-step figure.

The split was fixed before anything was measured (``scripts/data/REGISTRY.yaml``): every
figure is **calibration** (for the host classes of convolution calls by layout); the held-out
check of whatever it fits is a later run of programs no run timed.
"""

import os
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "programs"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import plain  # noqa: E402
from harness import say  # noqa: E402

DEV = "cuda"
BATCH, STEPS, WARM, CALLS = 4, 20, 5, 200


def hooked_step_s(model, x) -> dict:
    """Host seconds of each leaf module call per step, by ``type/name``, medians over steps."""
    per: dict[str, list[float]] = {}
    start: dict[str, float] = {}
    handles = []
    for name, mod in model.named_modules():
        if list(mod.children()):
            continue
        key = f"{type(mod).__name__}/{name}"
        handles.append(mod.register_forward_pre_hook(
            lambda m, a, k=key: start.__setitem__(k, time.perf_counter())))
        handles.append(mod.register_forward_hook(
            lambda m, a, o, k=key: per.setdefault(k, []).append(time.perf_counter() - start[k])))
    for _ in range(WARM):
        model(x)
    torch.cuda.synchronize()
    per.clear()
    for _ in range(STEPS):
        model(x)
        torch.cuda.synchronize()
    for h in handles:
        h.remove()
    return {k: statistics.median(v) for k, v in per.items()}


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    doc = {"run": 23, "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "role": "calibration", "about": __doc__.split("\n\n")[0],
           "batch": BATCH, "layouts": {}, "errors": {}}
    with torch.inference_mode():
        for layout, cl in (("nchw", False), ("channels_last", True)):
            try:
                model, (x,) = plain.cnn(batch=BATCH, device=DEV, dtype="bf16", channels_last=cl)
                rec = {"module_host_s": hooked_step_s(model, x)}
                rec["step_s"] = statistics.median(harness.step_seconds(lambda: model(x), STEPS,
                                                                       WARM))
                alone = {}
                for name, mod in model.named_modules():
                    if isinstance(mod, nn.Conv2d):
                        key = (mod.in_channels, mod.out_channels, mod.kernel_size[0],
                               mod.stride[0])
                        if str(key) in alone:
                            continue
                        inp = {}
                        h = mod.register_forward_pre_hook(lambda m, a: inp.setdefault("x", a[0]))
                        model(x)
                        h.remove()
                        xi = inp["x"]
                        for _ in range(10):
                            mod(xi)
                        torch.cuda.synchronize()
                        t = time.perf_counter()
                        for _ in range(CALLS):
                            mod(xi)
                        host = (time.perf_counter() - t) / CALLS
                        torch.cuda.synchronize()
                        alone[str(key)] = {"module": name, "host_s_per_call": host}
                rec["conv_alone"] = alone
                doc["layouts"][layout] = rec
                convs = [v for k, v in rec["module_host_s"].items() if k.startswith("Conv2d/")]
                bns = [v for k, v in rec["module_host_s"].items() if k.startswith("BatchNorm")]
                say(layout, f"step {rec['step_s'] * 1e3:.3f} ms",
                    f"conv median {statistics.median(convs) * 1e6:.1f} us (n={len(convs)})",
                    f"bn median {statistics.median(bns) * 1e6:.1f} us")
                say("  alone", {k: round(v["host_s_per_call"] * 1e6, 1) for k, v in alone.items()})
            except Exception as ex:  # noqa: BLE001
                doc["errors"][layout] = repr(ex)[:400]
                say("ERROR", layout, doc["errors"][layout])
    harness.write_json("h200_eager_module_host_run23.json", doc)


if __name__ == "__main__":
    main()
