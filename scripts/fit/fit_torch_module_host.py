"""Fit the host classes of PyTorch's own transformer modules, and check their kernel lists.

    PYTHONPATH=. python scripts/fit/fit_torch_module_host.py

Data: run 24's calibration part (``scripts/data/h200_torch_transformer_run24.json`` ``probes``,
``host_classes_s`` and the probes' profiles; ``scripts/measure/torch_transformer_paths.py``):
``nn.TransformerEncoderLayer`` and ``nn.MultiheadAttention`` at a tiny shape (batch 1, 16
tokens, width 256, 4 heads), each called back to back (host seconds per call), on their
fused inference path and their Python path; the session's host classes on tiny tensors.

**Kernels.** Each probe is captured on ``meta`` at the probe's shapes (tiny and mid) and
lowered for a CUDA graph; its kernel count is set beside the profile's (memsets left out:
the model has none).

**Host.** The session's host ran slower or faster than the one ``host.eager_call_s`` was
measured on: ``ratio`` = the median over ``nn.Linear``, ``F.layer_norm`` and ``torch.add`` of
the session's time / the class. Each class is the residual of its probe at the reference host:
``probe / ratio - (the model's host time of the probe's other calls)``, fitted in order
(``mha_python`` from the two Python-path MHA probes, mean; then ``encoder_layer_python``
from the Python-path layer; ``encoder_layer_fast`` from the two fused layers, mean;
``mha_fast``, ``mha_fast_weights`` from one probe each). Prints the values for
``configs/hardware/h200.yaml`` ``host.eager_call_s``.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_registry import fit_data  # noqa: E402

from accelsim.api import capture, load_hw, simulate  # noqa: E402

SOURCE = "h200_torch_transformer_run24.json"
CLASSES = {"linear": "linear", "f_layer_norm": "f_layer_norm", "elementwise": "elementwise"}
FIT_ORDER = (("mha_python", ("mha_python_noweights", "mha_python_weights")),
             ("encoder_layer_python", ("layer_python_relu_post",)),
             ("encoder_layer_fast", ("layer_fast_relu_post", "layer_fast_gelu_pre")),
             ("mha_fast", ("mha_fast_noweights",)),
             ("mha_fast_weights", ("mha_fast_weights",)))


def probe_program(probe: dict, shape: dict):  # noqa: ANN201
    """The captured workload of one probe call on ``meta`` at ``shape``."""
    import torch
    import torch.nn as nn

    b, s, d, h, f = (shape[k] for k in ("batch", "seq", "d", "heads", "ffn"))
    opts = probe["options"]
    bf = opts["batch_first"]
    with torch.device("meta"):
        x = torch.zeros(*((b, s, d) if bf else (s, b, d)), dtype=torch.bfloat16)
        if probe["kind"] == "layer":
            m = nn.TransformerEncoderLayer(d, h, f, dropout=0.1, activation=opts["activation"],
                                           batch_first=bf, norm_first=opts["norm_first"])
            m = m.to(torch.bfloat16).eval()
            return capture(m, x)
        m = nn.MultiheadAttention(d, h, batch_first=bf).to(torch.bfloat16).eval()
    nw = opts["need_weights"]
    return capture(lambda t: m(t, t, t, need_weights=nw), x)


def kernel_check(doc: dict) -> list[tuple[str, int, int]]:
    """``(probe/shape, model kernels, profiled kernels without memsets)``."""
    rows = []
    for name, probe in doc["probes"].items():
        for label in ("tiny", "mid"):
            prof = doc["profiles"].get(f"{name}/{label}")
            if prof is None or prof.get("role") != "calibration":
                continue
            wl = probe_program(probe, prof["shape"])
            r = simulate("h200", wl, exec_mode="graph", energy=False)
            model = int(r.calls["kernels"].sum())
            measured = sum(1 for k in prof["kernels"] if not k[0].startswith("Memset"))
            rows.append((f"{name}/{label}", model, measured))
    return rows


def fit(doc: dict | None = None) -> tuple[float, dict[str, float], dict[str, list[float]]]:
    """``(session host ratio, {class: seconds at the reference host}, {class: each probe's
    residual})`` from run 24's calibration part (``doc``: already read)."""
    doc = doc if doc is not None else fit_data(SOURCE, part="probes")
    m = load_hw("h200")
    ratios = [doc["host_classes_s"][k] / m.host.call_s(c) for k, c in CLASSES.items()]
    ratio = statistics.median(ratios)
    fitted: dict[str, float] = {}
    each: dict[str, list[float]] = {}
    for klass, probes in FIT_ORDER:
        vals = []
        for name in probes:
            probe = doc["probes"][name]
            wl = probe_program(probe, probe["shape"])
            over = {f"host.eager_call_s.{k}": f"{v * 1e6:.3f} us" for k, v in fitted.items()}
            over[f"host.eager_call_s.{klass}"] = "0 us"
            r = simulate("h200", wl, exec_mode="eager", energy=False, overrides=over)
            vals.append(probe["issue_s"] / ratio - float(r.calls["host_s"].sum()))
        fitted[klass] = statistics.mean(vals)
        each[klass] = vals
    return ratio, fitted, each


def main() -> int:
    doc = fit_data(SOURCE, part="probes")
    print(f"{'probe/shape':<30}{'model kernels':>14}{'profiled':>10}")
    for name, model, measured in kernel_check(doc):
        print(f"{name:<30}{model:>14}{measured:>10}")
    ratio, fitted, each = fit(doc)
    print(f"\nsession host ratio (median of {', '.join(CLASSES)}): {ratio:.3f}")
    for k, v in fitted.items():
        probes = ", ".join(f"{x * 1e6:.1f}" for x in each[k])
        print(f"    {k}: {v * 1e6:.1f} us    # probes: {probes} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
