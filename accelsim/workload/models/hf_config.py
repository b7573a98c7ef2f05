"""Transformers described by a Hugging Face ``config.json``: the architecture a model card ships.

``accelsim run h200 path/to/config.json:mode=decode,batch=8,context=4096`` (or the checkpoint
folder that holds the ``config.json``) builds the same
graph as a zoo transformer (:func:`accelsim.workload.models.transformer.build_transformer`)
from the fields every Hugging Face checkpoint carries, so a decoder that is not in the zoo
needs no code. Weights are never read: only the shapes matter.

Supported ``model_type`` values and what is read:

==========================  ================================================================
``llama``, ``mistral``,     ``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``,
``qwen2``                   ``num_key_value_heads``, ``head_dim``, ``intermediate_size``,
                            ``vocab_size``, ``max_position_embeddings``, ``hidden_act``
                            (``silu``: SwiGLU), ``tie_word_embeddings``; biases:
                            ``attention_bias`` (q/k/v/o), ``mlp_bias`` (Llama), q/k/v always
                            (Qwen2); RMSNorm, rotary, pre-norm; ``sliding_window``
                            (Mistral; Qwen2 with ``use_sliding_window``) bounds the keys a
                            decode step reads
``mixtral``                 as ``mistral``, and ``num_local_experts``,
                            ``num_experts_per_tok``: every layer's FFN a mixture of experts
                            of ``intermediate_size`` each
``qwen2_moe``               as ``qwen2``, and ``num_experts``, ``num_experts_per_tok``,
                            ``moe_intermediate_size`` (one routed expert),
                            ``shared_expert_intermediate_size`` (the sigmoid-gated shared
                            expert); ``decoder_sparse_step`` must be 1 and ``mlp_only_layers``
                            empty (every layer MoE)
``gpt2``                    ``n_layer``, ``n_embd``, ``n_head``, ``n_inner``, ``vocab_size``,
                            ``n_positions``: LayerNorm, GELU, fused q/k/v, biases, learned
                            positions, tied LM head
``bert``                    ``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``,
                            ``intermediate_size``, ``vocab_size``, ``max_position_embeddings``,
                            ``type_vocab_size``: post-norm encoder, no LM head
==========================  ================================================================

``torch_dtype`` is the default precision (``dtype=`` overrides it). Anything else (other
model types, DeepSeek-style ``n_routed_experts``, expert fields on a dense ``model_type``, a
MoE model with dense layers among its MoE ones, a gated MLP with another activation) is
refused with a one-line :class:`~accelsim.errors.WorkloadError` naming the file, the field and
the value.

Imports: errors, limits, safe_yaml, files, workload.graph, workload.kineto, workload.models.params,
workload.models.transformer, workload.program.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from accelsim.errors import ConfigError, WorkloadError
from accelsim.limits import MAX_DIM, MAX_LAYERS, parse_json
from accelsim.safe_yaml import read_text
from accelsim.workload.graph import ModelGraph
from accelsim.workload.models.params import build_checked
from accelsim.workload.models.transformer import TransformerSpec, build_transformer, check_mode

MOE_TYPES = ("mixtral", "qwen2_moe")
"""Mixture-of-experts ``model_type`` values (a Llama-like decoder with MoE FFNs)."""
LLAMA_LIKE = ("llama", "mistral", "qwen2", *MOE_TYPES)
MODEL_TYPES = (*LLAMA_LIKE, "gpt2", "bert")
"""``model_type`` values this reader understands."""

TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
"""``torch_dtype`` of a config -> accelsim precision name."""

DEFAULT_SEQ = 2048
"""Tokens per sequence when ``seq`` is not given (at most the model's positions)."""

PARAMETERS = ("mode", "batch", "seq", "context", "dtype")
"""Parameters a config spec takes after its colon (see :func:`config_builder`)."""


def is_config_path(name: str) -> bool:
    """Whether a spec's name part names a JSON file (a Hugging Face config) or a checkpoint
    folder holding one (``config.json``, as ``from_pretrained(folder)`` reads it)."""
    from accelsim.workload.kineto import is_trace_path
    from accelsim.workload.program import is_program_path

    text = str(name).strip()
    if is_program_path(text) or is_trace_path(text):  # a program file or a profiler trace
        return False                                   # is a workload of its own
    if text.lower().endswith(".json"):
        return True
    try:
        return bool(text) and (Path(text) / "config.json").is_file()
    except (OSError, ValueError):  # a name too long for the OS, a NUL byte: not a folder
        return False


def read_config(path: str | os.PathLike) -> tuple[str, dict[str, Any]]:
    """The resolved file name and its JSON object; a missing file, bad JSON or a non-object is
    a one-line :class:`WorkloadError`."""
    from accelsim.files import resolve_path

    if Path(path).is_dir():
        path = Path(path) / "config.json"
    try:
        p = resolve_path(path, "workloads", suffixes=("",))
    except ConfigError:
        raise WorkloadError(str(path), None, None, "no such file (a .json workload is a "
                            "Hugging Face config.json, a captured program or a torch.profiler "
                            "trace)") from None
    file = str(p)
    data = parse_json(read_text(p, what="JSON file"), file=file, error=WorkloadError)
    if not isinstance(data, dict):
        raise WorkloadError(file, "<root>", type(data).__name__, "expected a JSON object")
    return file, data


def _int(cfg: dict, file: str, key: str, default: Any = ..., *, limit: int = MAX_DIM) -> int:
    if key not in cfg or cfg[key] is None:
        if default is ...:
            raise WorkloadError(file, key, None, "missing (required for this model_type)")
        return default
    v = cfg[key]
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise WorkloadError(file, key, v, f"expected a positive integer up to {limit:,}")
    if v > limit:
        raise WorkloadError(file, key, v, f"more than the limit of {limit:,}"
                            + (" layers" if limit == MAX_LAYERS else ""))
    return v


def _layers(cfg: dict, file: str, key: str) -> int:
    """The number of layers, at most :data:`~accelsim.limits.MAX_LAYERS` (checked before any
    layer is built)."""
    return _int(cfg, file, key, limit=MAX_LAYERS)


def _heads_divide(file: str, hidden_key: str, hidden: int, heads_key: str, heads: int) -> None:
    """Without an explicit ``head_dim`` the head dimension is ``hidden / heads``: the heads must
    divide the hidden size."""
    if hidden % heads:
        raise WorkloadError(file, heads_key, heads,
                            f"does not divide {hidden_key} ({hidden}) and no head_dim is given")


def _bool(cfg: dict, file: str, key: str, default: bool) -> bool:
    v = cfg.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise WorkloadError(file, key, v, "expected true or false")
    return v


def spec_from_config(cfg: dict[str, Any], *, name: str, file: str) -> TransformerSpec:
    """The :class:`TransformerSpec` a Hugging Face config describes (see the module doc)."""
    kind = cfg.get("model_type")
    if kind not in MODEL_TYPES:
        raise WorkloadError(file, "model_type", kind,
                            f"unsupported (supported: {', '.join(MODEL_TYPES)})")
    moe_fields = {"mixtral": "num_local_experts", "qwen2_moe": "num_experts"}
    for moe in ("num_local_experts", "num_experts", "n_routed_experts"):
        if cfg.get(moe) and moe_fields.get(kind) != moe:
            raise WorkloadError(file, moe, cfg[moe], "mixture-of-experts fields are read for "
                                f"model_type {' and '.join(MOE_TYPES)} only (not {kind})")
    if kind == "gpt2":
        d = _int(cfg, file, "n_embd")
        _heads_divide(file, "n_embd", d, "n_head", _int(cfg, file, "n_head"))
        act = cfg.get("activation_function", "gelu_new")
        if not str(act).startswith("gelu"):
            raise WorkloadError(file, "activation_function", act, "supported: gelu variants")
        return TransformerSpec(
            name=name, layers=_layers(cfg, file, "n_layer"), hidden=d,
            heads=_int(cfg, file, "n_head"), ffn=_int(cfg, file, "n_inner", 4 * d),
            vocab=_int(cfg, file, "vocab_size"), max_positions=_int(cfg, file, "n_positions"),
            tied_embeddings=True, fused_qkv=True, linear_bias=True)
    if kind == "bert":
        _heads_divide(file, "hidden_size", _int(cfg, file, "hidden_size"),
                      "num_attention_heads", _int(cfg, file, "num_attention_heads"))
        return TransformerSpec(
            name=name, layers=_layers(cfg, file, "num_hidden_layers"),
            hidden=_int(cfg, file, "hidden_size"), heads=_int(cfg, file, "num_attention_heads"),
            ffn=_int(cfg, file, "intermediate_size"), vocab=_int(cfg, file, "vocab_size"),
            max_positions=_int(cfg, file, "max_position_embeddings"),
            token_types=_int(cfg, file, "type_vocab_size", 2), pre_norm=False, lm_head=False,
            causal=False, linear_bias=True)
    act = cfg.get("hidden_act", "silu")
    if act != "silu":
        raise WorkloadError(file, "hidden_act", act,
                            "supported: silu (the SwiGLU MLP of Llama, Mistral, Qwen2)")
    heads = _int(cfg, file, "num_attention_heads")
    hidden = _int(cfg, file, "hidden_size")
    kv = _int(cfg, file, "num_key_value_heads", heads)
    if heads % kv:
        raise WorkloadError(file, "num_key_value_heads", kv,
                            f"must divide num_attention_heads ({heads})")
    head_dim = _int(cfg, file, "head_dim", None)
    if head_dim is None:
        _heads_divide(file, "hidden_size", hidden, "num_attention_heads", heads)
    attn_bias = _bool(cfg, file, "attention_bias", False)
    window = None
    if kind in ("mistral", "mixtral") or (kind in ("qwen2", "qwen2_moe")
                                          and _bool(cfg, file, "use_sliding_window", False)):
        window = _int(cfg, file, "sliding_window", None)
    moe = _moe_fields(cfg, file, kind) if kind in MOE_TYPES else {}
    return TransformerSpec(**moe,
        name=name, layers=_layers(cfg, file, "num_hidden_layers"), hidden=hidden, heads=heads,
        kv_heads=kv, head_dim=head_dim,
        ffn=_int(cfg, file, "intermediate_size"), vocab=_int(cfg, file, "vocab_size"),
        norm="rmsnorm", ffn_act="swiglu", rotary=True,
        context_window=_int(cfg, file, "max_position_embeddings", None),
        tied_embeddings=_bool(cfg, file, "tie_word_embeddings", False),
        qkv_bias=attn_bias or kind in ("qwen2", "qwen2_moe"), out_bias=attn_bias,
        mlp_bias=_bool(cfg, file, "mlp_bias", False), sliding_window=window)


def _moe_fields(cfg: dict, file: str, kind: str) -> dict[str, Any]:
    """The :class:`TransformerSpec` mixture-of-experts fields of a ``mixtral`` or
    ``qwen2_moe`` config (module doc)."""
    key = "num_local_experts" if kind == "mixtral" else "num_experts"
    experts = _int(cfg, file, key)
    top_k = _int(cfg, file, "num_experts_per_tok")
    if top_k > experts:
        raise WorkloadError(file, "num_experts_per_tok", top_k, f"more than {key} ({experts})")
    if kind == "mixtral":
        return {"experts": experts, "top_k": top_k,
                "expert_ffn": _int(cfg, file, "intermediate_size")}
    step = _int(cfg, file, "decoder_sparse_step", 1)
    if step != 1:
        raise WorkloadError(file, "decoder_sparse_step", step, "only 1 is modelled (every "
                            "layer a mixture of experts)")
    dense = cfg.get("mlp_only_layers") or []
    if dense:
        raise WorkloadError(file, "mlp_only_layers", dense, "dense layers among the MoE "
                            "layers are not modelled (expected [])")
    shared = _int(cfg, file, "shared_expert_intermediate_size", 0, limit=MAX_DIM) \
        if cfg.get("shared_expert_intermediate_size") != 0 else 0
    return {"experts": experts, "top_k": top_k,
            "expert_ffn": _int(cfg, file, "moe_intermediate_size"),
            "shared_ffn": shared, "shared_gate": bool(shared)}


def config_builder(path: str | os.PathLike) -> tuple[str, Callable[..., ModelGraph]]:
    """The resolved file and a builder of its model's graph, taking :data:`PARAMETERS`
    (``mode`` prefill/decode/encoder, ``batch``, ``seq``, ``context``, ``dtype``; ``""`` and
    None: from the config). The config is read and its fields checked now."""
    file, cfg = read_config(path)
    stem = Path(file).stem
    spec = spec_from_config(cfg, name=Path(file).parent.name if stem == "config" else stem,
                            file=file)

    def build(*, mode: str = "", batch: int = 1, seq: int | None = None,
              context: int | None = None, dtype: str = "") -> ModelGraph:
        mode = mode or ("encoder" if not spec.causal else "prefill")
        check_mode(spec, mode)
        window = spec.context_window or spec.max_positions
        seq = seq or (min(DEFAULT_SEQ, window) if window else DEFAULT_SEQ)
        return build_transformer(
            spec, batch=batch, seq=seq, mode=mode, context=context,
            dtype=dtype or TORCH_DTYPES.get(str(cfg.get("torch_dtype")), "bf16"))

    return file, build


def config_model(path: str | os.PathLike, **params: Any) -> ModelGraph:
    """The graph of the model a Hugging Face ``config.json`` describes, with ``params``
    (:data:`PARAMETERS`), checked as zoo parameters are."""
    file, build = config_builder(path)
    return build_checked(build, params, file=file, label=Path(file).stem)


__all__ = ["MODEL_TYPES", "PARAMETERS", "config_builder", "config_model", "is_config_path",
           "read_config", "spec_from_config"]
