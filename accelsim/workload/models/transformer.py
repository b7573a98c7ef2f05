"""Transformer generators: encoder (BERT), decoder prefill and decoder decode with a KV cache.

One layer, pre-norm (GPT-2, Llama) or post-norm (BERT)::

    norm -> q/k/v projections -> [decode: append k, v to the cache] -> QK^T -> softmax -> AV
         -> output projection -> residual add -> norm -> FFN -> residual add

FFN: ``gelu`` (fc1, GELU, fc2) or ``swiglu`` (gate, up, SiLU(gate) * up, down); or, in a
mixture-of-experts model (``experts > 0``: Mixtral, Qwen2-MoE), router GEMM -> top-k softmax ->
the routed experts' gated MLP as two grouped GEMMs (:class:`~accelsim.workload.ops.GroupedGemm`)
-> [shared experts' MLP] -> combine (:func:`_moe`: its routing assumption). A MoE model's FLOP
count only the ``top_k`` experts each token is routed to; its weights are every expert's.
Attention is left unfused (QK^T, softmax and AV are separate ops that materialise the score
matrix); :func:`accelsim.workload.passes.fusion.fuse` turns the three into one fused
attention kernel. Grouped-query attention runs QK^T and AV as ``batch * kv_heads`` GEMMs
whose M stacks the ``heads / kv_heads`` query heads of a group, so K and V are read once per
group. Rotary models (Llama) apply the rotary embedding to q and k (``Elementwise`` ``rope``)
in every layer. Linear biases (GPT-2, BERT) are a flag on the GEMM (``Gemm.bias``: fused
into its epilogue). Left out (small, and named here so nobody looks for them): the per-step
rotary table (six tiny kernels), dropout, the attention scale (folded into QK^T) and BERT's
pooler.

Token counts: prefill and encoder process ``batch * seq`` tokens; decode processes ``batch``
tokens (one per sequence) against ``context`` cached positions (including the new one). The
LM head of a decoder runs on the last token of each sequence only (``batch`` rows).

Imports: workload.ops, workload.nn_ops, workload.graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.workload.graph import GraphBuilder, ModelGraph, ParamError
from accelsim.workload.nn_ops import Elementwise, Embedding, LayerNorm, Softmax
from accelsim.workload.ops import Gemm, GroupedGemm

MODES = ("encoder", "prefill", "decode")


@dataclass(frozen=True, slots=True, kw_only=True)
class TransformerSpec:
    """Architecture hyper-parameters (sizes in elements)."""

    name: str
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    kv_heads: int | None = None
    head_dim: int | None = None
    max_positions: int | None = None
    """Learned positional embedding table rows (``None``: rotary, no table)."""
    token_types: int = 0
    norm: str = "layernorm"
    ffn_act: str = "gelu"
    pre_norm: bool = True
    tied_embeddings: bool = False
    lm_head: bool = True
    causal: bool = True
    rotary: bool = False
    """Rotary position embedding applied to q and k in every layer (Llama)."""
    context_window: int | None = None
    """Positions the model was trained for (rotary models; learned tables: ``max_positions``)."""
    fused_qkv: bool = False
    """One projection GEMM produces q, k and v (GPT-2's ``c_attn``), split by views."""
    linear_bias: bool = False
    """The projections and FFN GEMMs add a bias (GPT-2, BERT; not Llama): a GEMM epilogue."""
    qkv_bias: bool = False
    """The q, k and v projections add a bias (Qwen2; Llama with ``attention_bias``)."""
    out_bias: bool = False
    """The attention output projection adds a bias (Llama with ``attention_bias``)."""
    mlp_bias: bool = False
    """The FFN GEMMs add a bias (Llama with ``mlp_bias``)."""
    sliding_window: int | None = None
    """Keys a decode step attends to at most (Mistral's sliding-window attention); the cache
    still holds ``context`` positions. Prefill keeps full causal attention (an upper bound)."""
    experts: int = 0
    """Routed experts of every layer's mixture-of-experts FFN (0: a dense FFN of ``ffn``)."""
    top_k: int = 0
    """Experts each token is routed to (``num_experts_per_tok``)."""
    expert_ffn: int | None = None
    """Width of one routed expert's gated MLP (default ``ffn``)."""
    shared_ffn: int = 0
    """Width of the shared experts' gated MLP, every token through it (Qwen2-MoE's
    ``shared_expert_intermediate_size``, DeepSeek's ``n_shared_experts x
    moe_intermediate_size``; 0: none)."""
    shared_gate: bool = False
    """The shared experts' output is scaled by a sigmoid gate, ``Linear(hidden, 1)``
    (Qwen2-MoE)."""
    expert_ranks: int = 1
    """Expert parallelism: the routed experts are split over this many ranks and this spec is
    one rank's (it holds ``experts / expert_ranks`` of them; see :mod:`accelsim.workload.
    parallel`)."""

    def __post_init__(self) -> None:
        if self.experts or self.top_k or self.shared_ffn or self.expert_ranks != 1:
            if not (self.experts > 0 and 0 < self.top_k <= self.experts):
                raise ValueError(f"{self.name}: a mixture-of-experts FFN needs experts > 0 "
                                 f"and 0 < top_k <= experts (got {self.experts}, {self.top_k})")
            if self.expert_ranks < 1 or self.experts % self.expert_ranks:
                raise ValueError(f"{self.name}: expert_ranks={self.expert_ranks} does not "
                                 f"divide {self.experts} experts")

    @property
    def is_moe(self) -> bool:
        """Whether every layer's FFN is a mixture of experts."""
        return self.experts > 0

    @property
    def ef(self) -> int:
        """Width of one routed expert's MLP."""
        return self.expert_ffn or self.ffn

    @property
    def local_experts(self) -> int:
        """Routed experts one expert-parallel rank holds."""
        return self.experts // self.expert_ranks

    @property
    def dh(self) -> int:
        """Head dimension."""
        return self.head_dim or self.hidden // self.heads

    @property
    def kv(self) -> int:
        """Key/value heads."""
        return self.kv_heads or self.heads


GPT2_SMALL = TransformerSpec(name="gpt2_small", layers=12, hidden=768, heads=12, ffn=3072,
                             vocab=50257, max_positions=1024, tied_embeddings=True,
                             fused_qkv=True, linear_bias=True)
GPT2_XL = TransformerSpec(name="gpt2_xl", layers=48, hidden=1600, heads=25, ffn=6400,
                          vocab=50257, max_positions=1024, tied_embeddings=True,
                          fused_qkv=True, linear_bias=True)
BERT_BASE = TransformerSpec(name="bert_base", layers=12, hidden=768, heads=12, ffn=3072,
                            vocab=30522, max_positions=512, token_types=2, pre_norm=False,
                            lm_head=False, causal=False, linear_bias=True)
LLAMA3_8B = TransformerSpec(name="llama3_8b", layers=32, hidden=4096, heads=32, kv_heads=8,
                            ffn=14336, vocab=128256, norm="rmsnorm", ffn_act="swiglu",
                            rotary=True, context_window=8192)
LLAMA3_70B = TransformerSpec(name="llama3_70b", layers=80, hidden=8192, heads=64, kv_heads=8,
                             ffn=28672, vocab=128256, norm="rmsnorm", ffn_act="swiglu",
                             rotary=True, context_window=8192)
"""Sources: GPT-2 (Radford et al. 2019, HF config), BERT (Devlin et al. 2019), Llama 3
(Meta, "The Llama 3 Herd of Models", 2024, Table 3)."""
MIXTRAL_8X7B = TransformerSpec(name="mixtral_8x7b", layers=32, hidden=4096, heads=32,
                               kv_heads=8, ffn=14336, vocab=32000, norm="rmsnorm",
                               ffn_act="swiglu", rotary=True, context_window=32768,
                               experts=8, top_k=2, expert_ffn=14336)
"""Mixtral 8x7B (Mistral AI, "Mixtral of Experts", arXiv:2401.04088; Hugging Face
``mistralai/Mixtral-8x7B-v0.1`` ``config.json``: ``num_local_experts`` 8,
``num_experts_per_tok`` 2, ``intermediate_size`` 14336, ``max_position_embeddings`` 32768,
``sliding_window`` null): 46.7 B parameters, 12.9 B active per token."""
QWEN15_MOE_A27B = TransformerSpec(name="qwen1_5_moe_a2_7b", layers=24, hidden=2048, heads=16,
                                  kv_heads=16, ffn=5632, vocab=151936, norm="rmsnorm",
                                  ffn_act="swiglu", rotary=True, context_window=8192,
                                  qkv_bias=True, experts=60, top_k=4, expert_ffn=1408,
                                  shared_ffn=5632, shared_gate=True)
"""Qwen1.5-MoE-A2.7B (Qwen team, 2024; Hugging Face ``Qwen/Qwen1.5-MoE-A2.7B``
``config.json``, ``model_type`` ``qwen2_moe``: ``num_experts`` 60, ``num_experts_per_tok`` 4,
``moe_intermediate_size`` 1408, ``shared_expert_intermediate_size`` 5632 (four shared experts
of 1408 merged), ``intermediate_size`` 5632, ``vocab_size`` 151936, q/k/v biases,
``decoder_sparse_step`` 1, ``max_position_embeddings`` 8192): 14.3 B parameters, 2.7 B active.
Fine-grained routed experts plus a gated shared expert."""


def _norm(b: GraphBuilder, spec: TransformerSpec, name: str, x: str, rows: int) -> str:
    op = LayerNorm(name=name, rows=rows, cols=spec.hidden, rms=spec.norm == "rmsnorm",
                   dtype=b.dtype)
    return b.add(op, [x], component="norm")


def _gemm(b: GraphBuilder, name: str, x: str, m: int, n: int, k: int, component: str,
          bias: bool = False, **kw) -> str:
    return b.add(Gemm(name=name, m=m, n=n, k=k, dtype=b.dtype, bias=bias), [x],
                 component=component, **kw)


def _attention(b: GraphBuilder, spec: TransformerSpec, p: str, x: str, batch: int, sq: int,
               skv: int, mode: str) -> str:
    """Projections, score GEMMs, softmax and output projection of one layer."""
    t, d, dh, h, kv = batch * sq, spec.hidden, spec.dh, spec.heads, spec.kv
    g = h // kv
    cache_kind = "kv_cache" if mode == "prefill" else "activation"
    qkv_bias = spec.linear_bias or spec.qkv_bias
    if spec.fused_qkv:
        q = k = v = _gemm(b, f"{p}.qkv_proj", x, t, (h + 2 * kv) * dh, d, "attention",
                          qkv_bias, output_kind=cache_kind)
    else:
        q = _gemm(b, f"{p}.q_proj", x, t, h * dh, d, "attention", qkv_bias)
        k = _gemm(b, f"{p}.k_proj", x, t, kv * dh, d, "attention", qkv_bias,
                  output_kind=cache_kind)
        v = _gemm(b, f"{p}.v_proj", x, t, kv * dh, d, "attention", qkv_bias,
                  output_kind=cache_kind)
    if spec.rotary:
        q = b.add(Elementwise(name=f"{p}.q_rope", rows=t, cols=h * dh, fn="rope",
                              dtype=b.dtype), [q], component="attention")
        k = b.add(Elementwise(name=f"{p}.k_rope", rows=t, cols=kv * dh, fn="rope",
                              dtype=b.dtype), [k], component="attention",
                  output_kind=cache_kind)
    if mode == "decode":
        for name, new in (("k", k), ("v", v)):
            b.add(Elementwise(name=f"{p}.{name}_append", rows=t, cols=kv * dh, fn="copy",
                              dtype=b.dtype), [new], component="attention", output_kind="kv_cache")
        k = b.tensor(f"{p}.k_cache", batch * kv * skv * dh, "kv_cache")
        v = b.tensor(f"{p}.v_cache", batch * kv * skv * dh, "kv_cache")
        if spec.sliding_window:
            skv = min(skv, spec.sliding_window)
    meta = {"batch": batch, "heads": h, "kv_heads": kv, "seq_q": sq, "seq_kv": skv,
            "head_dim": dh, "causal": spec.causal and mode != "encoder"}
    scores = b.add(Gemm(name=f"{p}.qk", batch=batch * kv, m=g * sq, n=skv, k=dh,
                        shared_weights=False, dtype=b.dtype), [q, k], component="attention",
                   attrs={"attention": meta})
    probs = b.add(Softmax(name=f"{p}.softmax", rows=batch * h * sq, cols=skv, dtype=b.dtype),
                  [scores], component="attention")
    ctx = b.add(Gemm(name=f"{p}.av", batch=batch * kv, m=g * sq, n=dh, k=skv,
                     shared_weights=False, dtype=b.dtype), [probs, v], component="attention")
    return _gemm(b, f"{p}.o_proj", ctx, t, d, h * dh, "attention",
                 spec.linear_bias or spec.out_bias)


def _ffn(b: GraphBuilder, spec: TransformerSpec, p: str, x: str, t: int) -> str:
    d, f = spec.hidden, spec.ffn
    bias = spec.linear_bias or spec.mlp_bias
    if spec.ffn_act == "swiglu":
        gate = _gemm(b, f"{p}.gate_proj", x, t, f, d, "ffn", bias)
        up = _gemm(b, f"{p}.up_proj", x, t, f, d, "ffn", bias)
        act = b.add(Elementwise(name=f"{p}.silu", rows=t, cols=f, fn="silu", dtype=b.dtype),
                    [gate], component="ffn")
        h = b.add(Elementwise(name=f"{p}.mul", rows=t, cols=f, fn="mul", dtype=b.dtype),
                  [act, up], component="ffn")
        return _gemm(b, f"{p}.down_proj", h, t, d, f, "ffn", bias)
    h = _gemm(b, f"{p}.fc1", x, t, f, d, "ffn", bias)
    h = b.add(Elementwise(name=f"{p}.gelu", rows=t, cols=f, fn="gelu", dtype=b.dtype), [h],
              component="ffn")
    return _gemm(b, f"{p}.fc2", h, t, d, f, "ffn", bias)


def _moe(b: GraphBuilder, spec: TransformerSpec, p: str, x: str, t: int, routed: int) -> str:
    """A mixture-of-experts FFN over ``t`` tokens as a GPU engine runs it (vLLM's
    ``fused_moe``): router GEMM, top-k softmax, grouped gate/up GEMM, SiLU and multiply,
    grouped down GEMM (routing weights in its epilogue), [shared experts], and the combine
    that sums each token's ``k`` expert outputs (and the shared one). ``routed``: tokens
    routed over all expert-parallel ranks (``t`` without expert parallelism).

    Routing assumption: uniform and balanced, each token picks ``k`` of the ``E`` experts at
    random; a rank's experts receive ``ceil(routed x k / ranks)`` assignments and
    ``experts_touched`` of them are hit (:func:`~accelsim.workload.ops.experts_touched`:
    ``k`` experts for one token, all of them for many), so decode reads the touched experts'
    weights -- what makes a MoE decode step memory-bound."""
    d, k, fe = spec.hidden, spec.top_k, spec.ef
    local = spec.local_experts
    rows = -(-routed * k // spec.expert_ranks)
    logits = _gemm(b, f"{p}.router", x, t, spec.experts, d, "ffn")
    probs = b.add(Softmax(name=f"{p}.topk", rows=t, cols=spec.experts, dtype=b.dtype),
                  [logits], component="ffn")
    w13 = b.tensor(f"{p}.experts_gate_up.weight", local * d * 2 * fe, "weight")
    w2 = b.tensor(f"{p}.experts_down.weight", local * fe * d, "weight")
    common = {"experts": local, "top_k": k, "routed_tokens": routed,
              "total_experts": spec.experts, "dtype": b.dtype}
    gu = b.add(GroupedGemm.routed(name=f"{p}.experts_gate_up", rows=rows, n=2 * fe, k=d,
                                  **common), [x, probs, w13], component="ffn")
    act = b.add(Elementwise(name=f"{p}.experts_silu", rows=rows, cols=fe, fn="silu",
                            dtype=b.dtype), [gu], component="ffn")
    h = b.add(Elementwise(name=f"{p}.experts_mul", rows=rows, cols=fe, fn="mul",
                          dtype=b.dtype), [act, gu], component="ffn")
    out = b.add(GroupedGemm.routed(name=f"{p}.experts_down", rows=rows, n=d, k=fe, **common),
                [h, probs, w2], component="ffn")
    parts = [out]
    if spec.shared_ffn:
        sf = spec.shared_ffn
        gate = _gemm(b, f"{p}.shared_gate_proj", x, t, sf, d, "ffn")
        up = _gemm(b, f"{p}.shared_up_proj", x, t, sf, d, "ffn")
        act = b.add(Elementwise(name=f"{p}.shared_silu", rows=t, cols=sf, fn="silu",
                                dtype=b.dtype), [gate], component="ffn")
        h = b.add(Elementwise(name=f"{p}.shared_mul", rows=t, cols=sf, fn="mul",
                              dtype=b.dtype), [act, up], component="ffn")
        shared = _gemm(b, f"{p}.shared_down", h, t, d, sf, "ffn")
        if spec.shared_gate:
            g = _gemm(b, f"{p}.shared_expert_gate", x, t, 1, d, "ffn")
            shared = b.add(Elementwise(name=f"{p}.shared_scale", rows=t, cols=d, fn="mul",
                                       dtype=b.dtype), [shared, g], component="ffn")
        parts.append(shared)
    summed = k - 1 + (1 if spec.shared_ffn else 0)
    if summed:  # (k - 1) + shared adds of hidden-wide rows per token, one kernel
        return b.add(Elementwise(name=f"{p}.combine", rows=t, cols=summed * d, fn="add",
                                 dtype=b.dtype), parts, component="ffn")
    return b.add(Elementwise(name=f"{p}.combine", rows=t, cols=d, fn="scale", dtype=b.dtype),
                 parts, component="ffn")  # top-1: the routing weight's scale


def _add(b: GraphBuilder, name: str, x: str, y: str, t: int, d: int, component: str) -> str:
    return b.add(Elementwise(name=name, rows=t, cols=d, fn="add", dtype=b.dtype), [x, y],
                 component=component)


def check_mode(spec: TransformerSpec, mode: str) -> None:
    """``mode`` must be one the model runs in: ``encoder`` for an encoder (BERT), ``prefill``
    or ``decode`` for a decoder; else a :class:`~accelsim.workload.graph.ParamError`."""
    if mode not in MODES:
        raise ParamError("mode", mode, f"expected one of {', '.join(MODES)}")
    if (mode == "encoder") == spec.causal:
        raise ParamError("mode", mode, f"{spec.name} is " + (
            "a decoder: use prefill or decode" if spec.causal else "an encoder: use encoder"))


def build_transformer(spec: TransformerSpec, *, batch: int = 1, seq: int = 512,
                      mode: str = "prefill", context: int | None = None,
                      dtype: str = "bf16", routed_tokens: int | None = None) -> ModelGraph:
    """The graph of a whole model.

    ``seq``: tokens per sequence (encoder, prefill). ``context``: KV-cache positions a decode
    step attends to, the new token included (default ``seq``); in prefill, the positions a
    chunk of ``seq`` new tokens attends to, its own included (chunked prefill; default
    ``seq``). ``dtype``: precision of weights, activations and the KV cache.
    ``routed_tokens``: a mixture-of-experts model's tokens routed over all its expert-parallel
    ranks in this step (default: this graph's tokens x ``spec.expert_ranks``).
    """
    check_mode(spec, mode)
    if mode == "encoder" and context is not None:
        raise ParamError("context", context, "an encoder has no KV cache (context applies to "
                         "prefill and decode)")
    for label, value in (("batch", batch), ("seq", seq), ("context", context)):
        if value is not None and (not isinstance(value, int) or value <= 0):
            raise ValueError(f"{label} must be a positive integer")
    skv = (context or seq) if mode == "decode" else seq
    if mode == "prefill" and context is not None:  # a chunk after cached positions
        if context < seq:
            raise ValueError(f"context={context} is shorter than the {seq} prompt tokens")
        skv = context
    sq = 1 if mode == "decode" else seq
    window = spec.context_window or spec.max_positions
    if window and skv > window:
        raise ValueError(f"{'context' if mode == 'decode' else 'seq'}={skv} exceeds "
                         f"{spec.name}'s {window} positions")
    t, d = batch * sq, spec.hidden
    routed = routed_tokens or t * spec.expert_ranks
    b = GraphBuilder(spec.name if mode == "encoder" else f"{spec.name}_{mode}", dtype,
                     batch=batch, seq=sq, context=skv, mode=mode)
    ids = b.tensor("token_ids", t, "input")
    x = b.add(Embedding(name="tok_embed", tokens=t, dim=d, table_rows=spec.vocab, dtype=dtype),
              [ids], component="embedding")
    tables = [("pos_embed", spec.max_positions or 0), ("type_embed", spec.token_types)]
    for name, rows in tables:
        if rows:
            e = b.add(Embedding(name=name, tokens=t, dim=d, table_rows=rows, dtype=dtype), [ids],
                      component="embedding")
            x = _add(b, f"{name}_add", x, e, t, d, "embedding")
    if not spec.pre_norm:
        x = _norm(b, spec, "embed_norm", x, t)
    for layer in range(spec.layers):
        b.layer = layer
        p = f"layers.{layer}"
        h = _norm(b, spec, f"{p}.attn_norm", x, t) if spec.pre_norm else x
        a = _attention(b, spec, p, h, batch, sq, skv, mode)
        x = _add(b, f"{p}.attn_residual", a, x, t, d, "other")
        if not spec.pre_norm:
            x = _norm(b, spec, f"{p}.attn_norm", x, t)
        h = _norm(b, spec, f"{p}.ffn_norm", x, t) if spec.pre_norm else x
        f = (_moe(b, spec, f"{p}.moe", h, t, routed) if spec.is_moe
             else _ffn(b, spec, f"{p}.ffn", h, t))
        x = _add(b, f"{p}.ffn_residual", f, x, t, d, "other")
        if not spec.pre_norm:
            x = _norm(b, spec, f"{p}.ffn_norm", x, t)
    b.layer = None
    if spec.pre_norm:
        x = _norm(b, spec, "final_norm", x, t)
    if spec.lm_head:
        # logits of the last position of each sequence (what generation needs)
        tied = "tok_embed.weight" if spec.tied_embeddings else None
        last = x
        if sq > 1:
            last = b.add(Elementwise(name="last_token", rows=batch, cols=d, fn="copy",
                                     dtype=dtype), [x], component="other")
        x = _gemm(b, "lm_head", last, batch, spec.vocab, d, "other", weight=tied)
    return b.build([x], spec=spec)
