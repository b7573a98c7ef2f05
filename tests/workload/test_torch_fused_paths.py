"""PyTorch's own transformer modules in a capture: their fused inference path and their Python
path (``accelsim/workload/torch_fused_paths.py``), against run 24's calibration profiles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from accelsim.api import capture, simulate  # noqa: E402
from accelsim.workload.program_ops import call_sites, unmodelled_calls  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "scripts" / "data"
RUN24 = DATA / "h200_torch_transformer_run24.json"
BF16 = torch.bfloat16


def _probe(kind: str, opts: dict, shape: dict):
    b, s, d, h, f = (shape[k] for k in ("batch", "seq", "d", "heads", "ffn"))
    bf = opts["batch_first"]
    with torch.device("meta"):
        x = torch.zeros(*((b, s, d) if bf else (s, b, d)), dtype=BF16)
        if kind == "layer":
            m = nn.TransformerEncoderLayer(d, h, f, activation=opts["activation"], batch_first=bf,
                                           norm_first=opts["norm_first"]).to(BF16).eval()
            return capture(m, x)
        m = nn.MultiheadAttention(d, h, batch_first=bf).to(BF16).eval()
    nw = opts["need_weights"]
    return capture(lambda t: m(t, t, t, need_weights=nw), x)


def _kernels(wl) -> int:
    return int(simulate("h200", wl, exec_mode="graph", energy=False).calls["kernels"].sum())


def test_each_path_launches_the_kernels_the_h200_profiled():
    """Both shapes of every probe of run 24 (calibration): the lowered kernel count equals the
    profiled one (cuDNN's memsets aside: the model has none)."""
    doc = json.loads(RUN24.read_text())
    checked = 0
    for name, probe in doc["probes"].items():
        for label in ("tiny", "mid"):
            prof = doc["profiles"][f"{name}/{label}"]
            measured = sum(1 for k in prof["kernels"] if not k[0].startswith("Memset"))
            assert _kernels(_probe(probe["kind"], probe["options"], prof["shape"])) == measured, \
                (name, label)
            checked += 1
    assert checked == 14


def _layer(batch_first=True, **kw):
    with torch.device("meta"):
        m = nn.TransformerEncoderLayer(64, 4, 128, batch_first=batch_first, **kw).to(BF16).eval()
        x = torch.zeros(2, 8, 64, dtype=BF16)
    return m, x


def test_a_fused_layer_is_its_module_call_and_the_calls_its_cxx_call_makes():
    m, x = _layer()
    prog = capture(m, x).program
    assert prog.calls[0].fn == "module" and prog.calls[0].args == {"fastpath": "encoder_layer_fast"}
    inner = prog.calls[1:]
    assert all(c.args.get("fused") == "encoder_layer_fast" for c in inner)
    fns = [c.fn for c in inner if c.fn not in ("chunk", "view", "transpose", "reshape")]
    assert fns == ["linear", "scaled_dot_product_attention", "linear", "add_", "layer_norm",
                   "linear", "linear", "add_", "layer_norm"]
    assert [c.args.get("epilogue") for c in inner if c.fn == "linear"] == \
        [None, None, "relu", None]
    assert not unmodelled_calls(prog)


def test_a_pre_norm_gelu_layer_moves_its_norms_and_fuses_gelu():
    m, x = _layer(norm_first=True, activation="gelu")
    inner = capture(m, x).program.calls[1:]
    fns = [c.fn for c in inner if c.fn not in ("chunk", "view", "transpose", "reshape")]
    assert fns[0] == "layer_norm" and fns[-1] == "add_"
    assert "gelu" in [c.args.get("epilogue") for c in inner]


def test_the_default_batch_first_false_layer_takes_the_python_path():
    m, x = _layer(batch_first=False)
    prog = capture(m, x).program
    assert not any(c.args.get("fused") or c.args.get("fastpath") for c in prog.calls)
    fns = [c.fn for c in prog.calls]
    assert "multi_head_attention_forward" in fns and "contiguous" in fns and "relu" in fns
    keys = {s.key for s in call_sites(prog)}
    assert {"call.module.encoder_layer", "call.mha_python"} <= keys
    assert not unmodelled_calls(prog)


def test_a_padding_mask_or_hooks_keep_the_python_path():
    m, x = _layer()
    mask = torch.zeros(2, 8, dtype=torch.bool, device="meta")
    prog = capture(lambda t: m(t, src_key_padding_mask=mask), x).program
    assert not any(c.args.get("fastpath") for c in prog.calls)
    m2, x2 = _layer()
    m2.linear1.register_forward_hook(lambda *_: None)
    prog = capture(m2, x2).program
    modules = {c.qualname: c.args.get("fastpath") for c in prog.calls if c.fn == "module"}
    # the layer refuses its fused path; its attention, without hooks, still takes its own
    assert modules["TransformerEncoderLayer"] is None
    assert modules["MultiheadAttention"] == "mha_fast"


def test_mha_need_weights_picks_the_native_path_with_weights():
    with torch.device("meta"):
        m = nn.MultiheadAttention(64, 4, batch_first=True).to(BF16).eval()
        x = torch.zeros(2, 8, 64, dtype=BF16)
    with_w = capture(lambda t: m(t, t, t), x).program
    without = capture(lambda t: m(t, t, t, need_weights=False), x).program
    assert with_w.calls[0].args == {"fastpath": "mha_fast_weights"}
    assert without.calls[0].args == {"fastpath": "mha_fast"}
    assert "bmm" in [c.fn for c in with_w.calls] and "softmax" in [c.fn for c in with_w.calls]


def test_a_fused_layer_pays_its_host_class_once_and_its_kernels_none():
    m, x = _layer()
    wl = capture(m, x)
    r = simulate("h200", wl, exec_mode="eager", energy=False)
    calls = r.calls
    host = calls.groupby("call_class")["host_s"].sum()
    assert host["encoder_layer_fast"] == pytest.approx(234e-6 + 1.1e-6, rel=1e-3)
    assert host.get("fused", 0.0) == 0.0
    assert int(calls.loc[calls["call_class"] == "fused", "kernels"].sum()) == 9


def test_inference_mode_views_are_views():
    """Under ``torch.inference_mode()`` PyTorch keeps no view metadata; capture's views come
    from storage, so the program is the one ``no_grad`` gives."""
    with torch.device("meta"):
        m = nn.MultiheadAttention(64, 4, batch_first=False).to(BF16).eval()
        x = torch.zeros(8, 2, 64, dtype=BF16)
    plain = capture(lambda t: m(t, t, t, need_weights=False)[0].transpose(0, 1), x).program
    with torch.inference_mode():
        inf = capture(lambda t: m(t, t, t, need_weights=False)[0].transpose(0, 1), x).program
    assert [s.key for s in call_sites(inf)] == [s.key for s in call_sites(plain)]
    assert call_sites(inf)[-1].key == "call.view"


def test_the_fused_path_names_a_program_file_may_carry_are_the_known_ones():
    """A program file's ``fastpath`` / ``fused`` values select lowering keys and drop host
    costs only when they name a known path; any other string lowers as an ordinary call."""
    import dataclasses

    from accelsim.workload import torch_fused_paths as fp
    from accelsim.workload.program_ops import FUSED_PATHS

    assert {fp.FUSED_LAYER, fp.FUSED_MHA, fp.FUSED_MHA_WEIGHTS} == FUSED_PATHS
    m, x = _layer()
    prog = capture(m, x).program
    forged = [dataclasses.replace(c, args={**c.args, "fastpath": "../../etc/passwd"})
              if c.args.get("fastpath") else
              dataclasses.replace(c, args={**c.args, "fused": "x/../y"})
              if c.args.get("fused") else c for c in prog.calls]
    sites = call_sites(dataclasses.replace(prog, calls=tuple(forged)))
    assert sites[0].key == "call.module.encoder_layer"  # the layer's Python-path class
    assert not any(s.meta.get("fused") for s in sites)
