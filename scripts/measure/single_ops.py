# ruff: noqa: E731, B023
"""Run 11: single ops timed on one H200 as users call them (issue 23 point 4): each op
back to back from eager PyTorch (the module or function a user calls, e.g. ``nn.Linear``,
``nn.Conv2d``, ``F.layer_norm``), and the same calls replayed in one CUDA graph.

Run on the device machine with the image's python3 (PyTorch):

    PYTHONUNBUFFERED=1 python3 scripts/measure/single_ops.py $OUT

Writes ``$OUT/h200_single_ops_run11.json``: per case the op family, its shape fields, the
per-call time back to back in eager mode (``eager_s``: CUDA events around ``reps`` calls,
median of 5) and in a CUDA graph (``graph_s``), and the kernels one call launches.

The split was fixed before anything was measured (scripts/data/REGISTRY.yaml): every case is
**held-out**. `accelsim op --exec eager|graph` fits nothing on them; they are scored once,
after that path is written.
"""

import os
import sys
import traceback

os.environ.setdefault("MEASURE_OUTNAME", "h200_single_ops_run11.json")
sys.path.insert(0, os.path.dirname(__file__))

import e2e as me  # noqa: E402
import harness  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DEV, DT = me.DEV, me.DT
BATCHES = (1, 2, 4, 8, 16, 32)
LINEARS = [(4096, 4096), (4096, 11008), (2048, 8192), (5120, 1280), (768, 3072)]  # (K, N)
CONVS = [  # (C, H, K, R, stride, groups)
    (64, 56, 128, 3, 1, 1), (128, 28, 256, 3, 2, 1), (512, 14, 512, 1, 1, 1),
    (256, 28, 256, 3, 1, 256), (96, 56, 24, 1, 1, 1)]
ROWWISE = [(4096,), (1024,), (8192,)]  # hidden sizes; rows = batch x 128 tokens


def case(rec: dict, fn, reps: int = 20) -> None:
    try:
        with torch.inference_mode():
            rec.update(harness.time_op(fn, reps))
        rec["role"] = "held-out"
        me.RESULT["ops"].append(rec)
        harness.say(rec["family"],
                    {k: v for k, v in rec.items() if k not in ("kernels", "family")})
    except Exception:  # noqa: BLE001
        me.RESULT["errors"][str(rec)] = traceback.format_exc()[-600:]


def main(argv: list[str] | None = None) -> None:
    harness.cli(__doc__, argv)
    torch.manual_seed(0)
    me.RESULT["device"] = harness.device_info()
    me.RESULT["about"] = __doc__.split("\n\n")[0]
    me.RESULT["protocol"] = ("harness.time_op: 3 warm calls; eager_s = CUDA events around "
                             "20 back-to-back calls / 20, median of 5; graph_s = the 20 calls "
                             "captured in one CUDA graph, replayed, / 20, median of 5")
    for k, n in LINEARS:
        lin = nn.Linear(k, n, bias=True, device=DEV, dtype=DT)
        for b in BATCHES:
            x = torch.randn(b, k, device=DEV, dtype=DT)
            case({"family": "linear", "call": "nn.Linear", "m": b, "k": k, "n": n,
                  "bias": True}, lambda: lin(x))
    for k, n in LINEARS[:3]:
        w = torch.randn(k, n, device=DEV, dtype=DT)
        for b in (1, 8, 32):
            x = torch.randn(b, k, device=DEV, dtype=DT)
            case({"family": "matmul", "call": "x @ W", "m": b, "k": k, "n": n},
                 lambda: x @ w)
    me.save()
    for c, h, k, r, st, g in CONVS:
        for layout in ("channels_last", "nchw"):
            conv = nn.Conv2d(c, k, r, stride=st, padding=r // 2, groups=g, bias=False)
            conv = harness.laid_out(conv.to(DEV, DT).eval(), layout)
            for b in BATCHES:
                x = harness.laid_out(torch.randn(b, c, h, h, device=DEV, dtype=DT), layout)
                case({"family": "conv2d", "call": "nn.Conv2d", "n": b, "c": c, "h": h, "w": h,
                      "k": k, "r": r, "stride": st, "groups": g, "layout": layout},
                     lambda: conv(x))
    me.save()
    for (hid,) in ROWWISE:
        ln = nn.LayerNorm(hid, device=DEV, dtype=DT)
        g1 = torch.ones(hid, device=DEV, dtype=DT)
        for b in (1, 8, 32):
            x = torch.randn(b * 128, hid, device=DEV, dtype=DT)
            shape = {"rows": b * 128, "cols": hid}
            case({"family": "layernorm", "call": "nn.LayerNorm", **shape}, lambda: ln(x))
            case({"family": "rmsnorm", "call": "F.rms_norm", **shape},
                 lambda: F.rms_norm(x, (hid,), g1, 1e-5))
            case({"family": "softmax", "call": "torch.softmax", **shape},
                 lambda: torch.softmax(x, -1))
            case({"family": "gelu", "call": "F.gelu", **shape}, lambda: F.gelu(x))
            case({"family": "add", "call": "x + y", **shape}, lambda: x + x)
    me.save()
    for heads, dh in ((32, 128), (12, 64)):
        for b, s in ((1, 512), (4, 1024), (1, 4096)):
            q = torch.randn(b, heads, s, dh, device=DEV, dtype=DT)
            case({"family": "attention", "call": "F.scaled_dot_product_attention",
                  "batch": b, "heads": heads, "seq": s, "head_dim": dh, "causal": True},
                 lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True), reps=10)
    me.save()
    harness.say(f"cases {len(me.RESULT['ops'])} errors {len(me.RESULT['errors'])} "
                f"[{me.left():.0f} s of the budget left]")
    me.save()


if __name__ == "__main__":
    main()
