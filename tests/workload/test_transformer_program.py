"""The zoo's emitted Llama program (``workload/models/transformer_program.py``) against a real
capture of Hugging Face's ``LlamaForCausalLM``, and on its own without torch.

The capture tests need ``torch`` and ``transformers`` (skipped otherwise); the rest run
without either: the zoo must lower without torch installed.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
from pathlib import Path

import pytest

from accelsim.config.lowering import load_lowering
from accelsim.mapping.gpu_lowering import lower_sites
from accelsim.mapping.program_fusion import fuse_sites
from accelsim.workload.models.transformer import GPT2_SMALL, LLAMA3_8B, TransformerSpec
from accelsim.workload.models.transformer_program import (
    gpt2_program,
    graph_program,
    is_llama_family,
    llama_program,
)
from accelsim.workload.nn_ops import Attention
from accelsim.workload.ops import Gemm
from accelsim.workload.program_ops import call_sites

ROOT = Path(__file__).resolve().parents[2]


def _spec(layers: int = 2, hidden: int = 64, heads: int = 4, kv: int = 2, **kw) -> TransformerSpec:
    return TransformerSpec(name="tiny", layers=layers, hidden=hidden, heads=heads, kv_heads=kv,
                           ffn=2 * hidden, vocab=100, norm="rmsnorm", ffn_act="swiglu",
                           rotary=True, **kw)


# -- against a capture (torch + transformers) --------------------------------------------

CASES = (  # mode, batch, tokens, spec fields, HF config fields
    ("prefill", 2, 8, {}, {}),
    ("decode", 2, 16, {}, {}),
    ("decode", 1, 16, {"kv": 4}, {"kv_heads": 4}),
    ("prefill", 1, 8, {"heads": 8, "kv": 1, "qkv_bias": True, "out_bias": True,
                       "tied_embeddings": True},
     {"heads": 8, "kv_heads": 1, "attention_bias": True, "tie_word_embeddings": True}),
    ("decode", 3, 8, {"mlp_bias": True}, {"mlp_bias": True}),
)


def _captured(mode: str, batch: int, n: int, hf: dict, dtype: str = "bf16"):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    sys.path.insert(0, str(ROOT / "workloads" / "programs"))
    import hf_llama

    from accelsim.workload.torch_capture import capture_program

    fields = dict(layers=2, hidden=hf.pop("hidden", 64), heads=hf.pop("heads", 4),
                  kv_heads=hf.pop("kv_heads", 2), vocab=100)
    fields["ffn"] = 2 * fields["hidden"]
    fn, args, kwargs = hf_llama.llama(mode, batch, context=n, seq=n, dtype=dtype,
                                      **fields, **hf)
    return capture_program(fn, *args, **kwargs)


def _emitted(mode: str, batch: int, n: int, fields: dict, dtype: str = "bf16"):
    return llama_program(_spec(**fields), mode=mode, batch=batch, seq=n, context=n,
                         dtype=dtype, flavour="transformers5")


def _layout(t) -> tuple:
    """A tensor's layout: strides of the dimensions longer than one (the stride of a size-1
    dimension carries no layout, and torch's meta kernels do not give it one rule)."""
    return tuple(st for size, st in zip(t.shape, t.stride, strict=True) if size != 1)


@pytest.mark.parametrize(("mode", "batch", "n", "fields", "hf"), CASES)
def test_emitted_program_is_the_captured_one(mode, batch, n, fields, hf):
    cap = _captured(mode, batch, n, dict(hf))
    em = _emitted(mode, batch, n, fields)
    assert len(em.calls) == len(cap.calls)
    for i, (a, b) in enumerate(zip(cap.calls, em.calls, strict=True)):
        where = (i, a.fn, a.module)
        assert (b.fn, b.module, b.qualname, dict(b.args)) == (a.fn, a.module, a.qualname,
                                                              dict(a.args)), where
        for x, y in zip(a.inputs + a.outputs, b.inputs + b.outputs, strict=True):
            assert (y.shape, y.dtype, y.view, y.param, y.tensor_id, _layout(y),
                    y.contiguous) == (x.shape, x.dtype, x.view, x.param, x.tensor_id,
                                      _layout(x), x.contiguous), where
        assert len(a.inputs + a.outputs) == len(b.inputs + b.outputs), where


def _captured_gpt2(batch: int, seq: int, layers: int = 2, d: int = 64, heads: int = 4):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from accelsim.workload.torch_capture import capture_program

    cfg = transformers.GPT2Config(n_layer=layers, n_embd=d, n_head=heads, vocab_size=100,
                                  n_positions=64, bos_token_id=0, eos_token_id=0)
    cfg._attn_implementation = "sdpa"
    with torch.device("meta"):
        model = transformers.GPT2LMHeadModel(cfg)
    model = model.to(torch.bfloat16).eval()
    ids = torch.zeros(batch, seq, dtype=torch.long, device="meta")
    spec = TransformerSpec(name="tiny_gpt2", layers=layers, hidden=d, heads=heads, ffn=4 * d,
                           vocab=100, max_positions=64, tied_embeddings=True, fused_qkv=True,
                           linear_bias=True)
    return (capture_program(model, ids, use_cache=False, logits_to_keep=1),
            gpt2_program(spec, batch=batch, seq=seq, flavour="transformers5"))


@pytest.mark.parametrize(("batch", "seq"), [(2, 8), (1, 16)])
def test_emitted_gpt2_prefill_is_the_captured_one(batch, seq):
    cap, em = _captured_gpt2(batch, seq)
    assert [c.to_json() for c in em.calls] == [c.to_json() for c in cap.calls]
    for exec_mode in ("eager", "graph", "compiled"):
        table = load_lowering(exec_mode)
        a, b = ([(c.op_name, c.call, c.kernel_class, c.family, _work(c)) for c in
                 (fuse_sites(p, call_sites(p), table) if table.fuse
                  else lower_sites(call_sites(p), table))] for p in (cap, em))
        assert a == b


def _work(c) -> tuple:
    w = c.work
    if w is None:
        return ()
    if hasattr(w, "read_bytes"):
        return ("stream", w.read_bytes, w.write_bytes, w.simt_flops, w.family)
    return ("op", dataclasses.replace(w, name=""))


@pytest.mark.parametrize("exec_mode", ["eager", "graph", "compiled"])
@pytest.mark.parametrize(("mode", "batch", "n", "fields", "hf"), CASES[:3])
def test_emitted_program_lowers_to_the_captured_kernels(exec_mode, mode, batch, n, fields, hf):
    from accelsim.api.model_run import run_model
    from accelsim.workload.program_ops import program_workload

    cap = _captured(mode, batch, n, dict(hf))
    em = _emitted(mode, batch, n, fields)
    table = load_lowering(exec_mode)
    lowered = []
    for p in (cap, em):
        sites = call_sites(p)
        calls = fuse_sites(p, sites, table) if table.fuse else lower_sites(sites, table)
        lowered.append([(c.op_name, c.call, c.kernel_class, c.family, _work(c)) for c in calls])
    a, b = lowered
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x[:4] == y[:4]
        if x[4] and x[4][0] == "stream":
            assert y[4][0] == "stream"
            for u, v in zip(x[4][1:4], y[4][1:4], strict=True):
                assert abs(v - u) <= 1e-3 * max(abs(u), 1.0), (x, y)
        else:
            assert x[4] == y[4], (x, y)
    runs = [run_model("h200", program_workload(p), exec_mode=exec_mode) for p in (cap, em)]
    kinds = [r.calls.groupby("kernel_class")["kernels"].sum().to_dict() for r in runs]
    assert kinds[0] == kinds[1]
    t0, t1 = (r.totals["time_s"] for r in runs)
    assert abs(t1 / t0 - 1) <= 1e-3


# -- against a capture of the measured HF-style code (scripts/measure/e2e.py; torch) ------

HF_STYLE_CASES = (  # mode, batch, tokens, spec fields (e2e.Llama takes qkv_bias only)
    ("prefill", 2, 8, {}),
    ("decode", 2, 16, {}),
    ("prefill", 1, 8, {"heads": 8, "kv": 1, "qkv_bias": True, "tied_embeddings": True}),
    ("decode", 1, 16, {"kv": 4}),
    ("decode", 3, 8, {"qkv_bias": True}),
)


def _e2e(monkeypatch):
    """``scripts/measure/e2e.py`` (read only), its models cast as the H200 runs cast them
    (``DT`` is bf16 on CUDA, fp32 on a CPU)."""
    torch = pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(ROOT / "scripts" / "measure"))
    import e2e

    monkeypatch.setattr(e2e, "DT", torch.bfloat16)
    return torch, e2e


def _on_meta(torch, ctor, **kw):
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)  # e2e.build: the model built in its dtype
    try:
        with torch.device("meta"):
            return ctor(**kw).eval()
    finally:
        torch.set_default_dtype(prev)


def _drive(torch, model, mode: str, batch: int, n: int, layers: int, kv: int, dh: int):
    """The step ``e2e.decoder_cases`` times: caches of ``n`` positions, the token at
    ``n - 1`` (decode), or ``n`` tokens with expanded position ids (prefill)."""
    from accelsim.workload.torch_capture import capture_program

    meta = {"device": "meta"}
    if mode == "decode":
        caches = [tuple(torch.zeros(batch, kv, n, dh, dtype=torch.bfloat16, **meta)
                        for _ in range(2)) for _ in range(layers)]
        ids = torch.zeros(batch, 1, dtype=torch.long, **meta)
        pos = torch.full((batch, 1), n - 1, **meta)
        return capture_program(model, ids, pos, caches, n - 1)
    ids = torch.zeros(batch, n, dtype=torch.long, **meta)
    pos = torch.arange(n, **meta)[None].expand(batch, n)
    return capture_program(model, ids, pos)


def _captured_hf_style(monkeypatch, mode: str, batch: int, n: int, fields: dict):
    torch, e2e = _e2e(monkeypatch)
    spec = _spec(**fields)
    model = _on_meta(torch, e2e.Llama, layers=spec.layers, d=spec.hidden, h=spec.heads,
                     kv=spec.kv, f=spec.ffn, vocab=spec.vocab, qkv_bias=spec.qkv_bias)
    if spec.tied_embeddings:  # e2e._hf_model ties as a tied config asks
        model.lm_head.weight = model.embed_tokens.weight
    return _drive(torch, model, mode, batch, n, spec.layers, spec.kv, spec.dh), spec


def _assert_same_calls(cap, em) -> None:
    assert len(em.calls) == len(cap.calls)
    for i, (a, b) in enumerate(zip(cap.calls, em.calls, strict=True)):
        where = (i, a.fn, a.module)
        assert (b.fn, b.module, b.qualname, dict(b.args)) == (a.fn, a.module, a.qualname,
                                                              dict(a.args)), where
        assert len(a.inputs + a.outputs) == len(b.inputs + b.outputs), where
        for x, y in zip(a.inputs + a.outputs, b.inputs + b.outputs, strict=True):
            assert (y.shape, y.dtype, y.view, y.param, y.tensor_id, _layout(y),
                    y.contiguous) == (x.shape, x.dtype, x.view, x.param, x.tensor_id,
                                      _layout(x), x.contiguous), where


def _assert_same_kernels(cap, em) -> None:
    """Both programs lower to the same kernels (class, family, bytes) in every mode, and
    replay to the same step time and kernels per class on an H200."""
    from accelsim.api.model_run import run_model
    from accelsim.workload.program_ops import program_workload

    for exec_mode in ("eager", "graph", "compiled"):
        table = load_lowering(exec_mode)
        a, b = ([(c.op_name, c.call, c.kernel_class, c.family, _work(c)) for c in
                 (fuse_sites(p, call_sites(p), table) if table.fuse
                  else lower_sites(call_sites(p), table))] for p in (cap, em))
        assert a == b, exec_mode
        runs = [run_model("h200", program_workload(p), exec_mode=exec_mode) for p in (cap, em)]
        kinds = [r.calls.groupby("kernel_class")["kernels"].sum().to_dict() for r in runs]
        assert kinds[0] == kinds[1], exec_mode
        assert runs[1].totals["time_s"] == pytest.approx(runs[0].totals["time_s"], rel=1e-9)


@pytest.mark.parametrize(("mode", "batch", "n", "fields"), HF_STYLE_CASES)
def test_hf_style_program_is_the_measured_codes_capture(monkeypatch, mode, batch, n, fields):
    cap, spec = _captured_hf_style(monkeypatch, mode, batch, n, fields)
    em = llama_program(spec, mode=mode, batch=batch, seq=n, context=n)
    assert em.framework.endswith("HF-style model code (emitted)")
    _assert_same_calls(cap, em)
    fns = collections.Counter(c.fn for c in em.calls)
    # none of transformers 5's bookkeeping: no position ids, packed check, mask or counter
    assert not {"arange", "diff", "cumsum", "all", "le", "index_copy_", "add_"} & set(fns)
    assert fns["setitem"] == (2 * spec.layers if mode == "decode" else 0)
    _assert_same_kernels(cap, em)


@pytest.mark.parametrize(("mode", "batch", "n"), [("prefill", 2, 8), ("prefill", 1, 16),
                                                  ("decode", 2, 16), ("decode", 1, 8)])
def test_hf_style_gpt2_is_the_measured_codes_capture(monkeypatch, mode, batch, n):
    torch, e2e = _e2e(monkeypatch)
    layers, d, heads = 2, 64, 4
    model = _on_meta(torch, e2e.GPT2, layers=layers, d=d, h=heads, f=4 * d, vocab=100,
                     positions=64)
    cap = _drive(torch, model, mode, batch, n, layers, heads, d // heads)
    spec = TransformerSpec(name="tiny_gpt2", layers=layers, hidden=d, heads=heads, ffn=4 * d,
                           vocab=100, max_positions=64, tied_embeddings=True, fused_qkv=True,
                           linear_bias=True)
    em = gpt2_program(spec, mode=mode, batch=batch, seq=n, context=n)
    _assert_same_calls(cap, em)
    assert collections.Counter(c.fn for c in em.calls)["gelu"] == layers  # tanh GELU: one
    _assert_same_kernels(cap, em)


# -- torch-free ----------------------------------------------------------------------------

@pytest.mark.parametrize("flavour", ["hf_style", "transformers5"])
@pytest.mark.parametrize("mode", ["prefill", "decode"])
@pytest.mark.parametrize("spec", [_spec(layers=3), _spec(layers=2, kv=4),
                                  dataclasses.replace(LLAMA3_8B, layers=2)])
def test_emitted_calls_follow_the_config(spec, mode, flavour):
    batch, n = 2, 32
    kw = dict(mode=mode, batch=batch, seq=n, context=n, flavour=flavour)
    p = llama_program(spec, **kw)
    assert p == llama_program(spec, **kw)  # deterministic
    fns = collections.Counter(c.fn for c in p.calls)
    L = spec.layers
    # per layer: q, k, v, o projections and gate, up, down (no merged projections); + LM head
    assert fns["linear"] == L * (4 + 3) + 1
    assert fns["scaled_dot_product_attention"] == L
    assert fns["mean"] == 2 * L + 1  # RMSNorm's mean: two per layer and the final norm
    # k and v cache writes: index_copy_ into a StaticCache, or slice assignment
    write = "index_copy_" if flavour == "transformers5" else "setitem"
    assert fns[write] == (2 * L if mode == "decode" else 0)
    assert fns["silu"] == L
    assert fns["embedding"] == 1
    sites = call_sites(p)
    # the HF-style rotary table: inv_freq (1, dh/2, 1) @ positions (batch, 1, tokens)
    gemms = [s.op for s in sites if isinstance(s.op, Gemm) and s.fn != "matmul"]
    rope = [s.op for s in sites if s.fn == "matmul"]
    assert [(g.batch, g.m, g.k) for g in rope] == ([(batch, spec.dh // 2, 1)]
                                                   if flavour == "hf_style" else [])
    t = batch * (n if mode == "prefill" else 1)
    d, dh, h, kv = spec.hidden, spec.dh, spec.heads, spec.kv
    shapes = collections.Counter((g.m, g.n, g.k) for g in gemms)
    f = spec.ffn
    expected = collections.Counter()
    for shape, count in (((t, h * dh, d), L), ((t, kv * dh, d), 2 * L), ((t, d, h * dh), L),
                         ((t, f, d), 2 * L), ((t, d, f), L),
                         ((batch, spec.vocab, d), 1)):  # logits of the last position only
        expected[shape] += count
    assert shapes == expected
    att = [s.op for s in sites if isinstance(s.op, Attention)]
    assert len(att) == L
    for a in att:
        assert a.head_dim == dh and a.seq_kv == n
        if mode == "prefill":
            assert (a.batch, a.heads, a.kv_heads or a.heads, a.seq_q, a.causal) == (
                batch, h, kv, n, True)
        else:  # a single grouped query is packed onto the KV heads (pack_gqa)
            assert a.heads * a.seq_q == h and (a.kv_heads or a.heads) == kv
    for exec_mode in ("eager", "graph"):
        calls = lower_sites(sites, load_lowering(exec_mode))
        by_class = collections.Counter(c.kernel_class for c in calls if c.work is not None)
        assert by_class["gemm"] == fns["linear"] + len(rope)
        assert by_class["attention"] == L


def test_graph_program_only_for_what_the_hf_model_runs():
    from accelsim.workload.models.transformer import build_transformer

    g = build_transformer(dataclasses.replace(LLAMA3_8B, layers=2), batch=2, mode="decode",
                          context=64)
    spec = dataclasses.replace(LLAMA3_8B, layers=2)
    for flavour in ("hf_style", "transformers5"):
        p = graph_program(g, flavour)
        assert p is not None and p == llama_program(spec, mode="decode", batch=2, context=64,
                                                    flavour=flavour)
    assert graph_program(g) == graph_program(g, "hf_style")  # the measured code: the default
    chunk = build_transformer(LLAMA3_8B, batch=1, mode="prefill", seq=16, context=64)
    assert graph_program(chunk) is None  # a prefill chunk after cached positions
    gpt2 = graph_program(build_transformer(GPT2_SMALL, seq=16, batch=2))
    assert gpt2 == gpt2_program(GPT2_SMALL, batch=2, seq=16)
    dec = build_transformer(GPT2_SMALL, mode="decode", context=16)
    assert graph_program(dec) == gpt2_program(GPT2_SMALL, mode="decode", context=16)
    assert graph_program(dec, "transformers5") is None  # GPT2LMHeadModel decode: not emitted
    with pytest.raises(ValueError, match="flavour='hf'"):
        graph_program(g, "hf")
    assert not is_llama_family(dataclasses.replace(LLAMA3_8B, sliding_window=4096))
    with pytest.raises(ValueError, match="not a Llama-family"):
        llama_program(GPT2_SMALL)


def test_zoo_decoder_on_a_gpu_lowers_as_its_program():
    from accelsim.api.simulate import load_hw
    from accelsim.devices.gpu_model import run_gpu_model
    from accelsim.workload.models.transformer import build_transformer
    from accelsim.workload.program_ops import program_workload

    m = load_hw("h200")
    spec = dataclasses.replace(LLAMA3_8B, layers=2)
    g = build_transformer(spec, batch=4, mode="decode", context=256)
    zoo = run_gpu_model(m, g, exec_mode="graph", zoo_lowering="calls")
    prog = run_gpu_model(m, program_workload(graph_program(g)), exec_mode="graph")
    assert list(zoo.calls["layer"]) == list(prog.calls["layer"])
    assert list(zoo.calls["kernels"]) == list(prog.calls["kernels"])
    assert zoo.totals["time_s"] == pytest.approx(prog.totals["time_s"], rel=1e-9)
    assert zoo.memory == run_gpu_model(m, g, exec_mode="graph", zoo_lowering="ops").memory
    ops = run_gpu_model(m, g, exec_mode="graph", zoo_lowering="ops")
    assert "layers.0.q_proj" in set(ops.calls["layer"])
    assert "layers.0.q_proj.linear" in set(zoo.calls["layer"])  # e2e.py's module paths


def test_zoo_lowering_auto_routes_llama_eager_and_graph_through_calls():
    from accelsim.api.simulate import load_hw
    from accelsim.devices import gpu_model
    from accelsim.devices.gpu_model import run_gpu_model
    from accelsim.workload.models.transformer import build_transformer

    assert gpu_model.ZOO_LOWERINGS == ("auto", "calls", "ops")
    m = load_hw("h200")
    llama = build_transformer(dataclasses.replace(LLAMA3_8B, layers=1), batch=2,
                              mode="decode", context=64)
    gpt2 = build_transformer(dataclasses.replace(GPT2_SMALL, layers=1), batch=2, seq=16)

    def layers(g, exec_mode, how="auto"):
        return list(run_gpu_model(m, g, exec_mode=exec_mode, zoo_lowering=how).calls["layer"])

    for exec_mode in ("eager", "graph"):  # Llama family: the measured code's calls
        assert layers(llama, exec_mode) == layers(llama, exec_mode, "calls")
        assert layers(llama, exec_mode) != layers(llama, exec_mode, "ops")
        assert layers(gpt2, exec_mode) == layers(gpt2, exec_mode, "ops")  # GPT-2: op by op
    assert layers(llama, "compiled") == layers(llama, "compiled", "ops")  # compiled: op by op
    assert layers(llama, "compiled", "calls") != layers(llama, "compiled", "ops")
    with pytest.raises(ValueError, match="zoo_lowering='op'"):
        run_gpu_model(m, llama, zoo_lowering="op")


def test_a_linear_module_call_costs_the_whole_nn_linear():
    """A captured ``nn.Linear`` call (module site, then ``F.linear``) costs the host class
    measured for the whole module call in eager mode, as a one-op program charges it."""
    from accelsim.api.simulate import load_hw
    from accelsim.devices.gpu_model import run_gpu_model
    from accelsim.workload.models.transformer import build_transformer

    m = load_hw("h200")
    g = build_transformer(dataclasses.replace(LLAMA3_8B, layers=1), batch=1, mode="decode",
                          context=64)
    c = run_gpu_model(m, g, exec_mode="eager", zoo_lowering="calls").calls
    from accelsim.hw.gpu.gemm import plan_gemm
    from accelsim.hw.gpu.kernel import extra_launches

    extra = m.host.call_s("python")
    for path, n in (("layers.0.q_proj", 4096), ("lm_head", LLAMA3_8B.vocab)):
        # and each kernel cuBLASLt launches beside the GEMM (q_proj splits K at M = 1)
        split = extra_launches(plan_gemm(m, 1, n, 4096, "bf16").kernels) * m.host.extra_kernel_s
        mod = c[c["layer"] == f"{path}.module"]["host_s"].iloc[0]
        lin = c[c["layer"] == f"{path}.linear"]["host_s"].iloc[0]
        assert lin == pytest.approx(m.host.call_s("f_linear") + extra + split)
        assert mod + lin == pytest.approx(m.host.call_s("linear") + 2 * extra + split)
    assert extra_launches(plan_gemm(m, 1, 4096, 4096, "bf16").kernels) == 1
    other = c[c["layer"] == "layers.0.module"]["host_s"].iloc[0]  # the decoder layer's own
    assert other == pytest.approx(m.host.call_s("module") + extra)


def test_casts_take_pytorchs_copy_kernels():
    """RMSNorm's bf16 -> fp32 cast copies with a dynamic cast (strided family:
    ``unrolled_elementwise_kernel<direct_copy_kernel_cuda>`` in run 1's profiles), its
    fp32 -> bf16 cast is ``bfloat16_copy_kernel_cuda`` (vectorized)."""
    p = llama_program(_spec(layers=1), mode="prefill", batch=2, seq=32)
    sites = call_sites(p)
    norm = [s for s in sites if s.name.startswith("layers.0.input_layernorm.to")]
    assert [(p.calls[s.index].inputs[0].dtype, s.family) for s in norm] == [
        ("bfloat16", "strided"), ("float32", "vectorized")]
