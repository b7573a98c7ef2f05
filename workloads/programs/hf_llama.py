"""Hugging Face ``LlamaForCausalLM``, built from a config on ``meta``, driven as measured.

Needs ``transformers`` (not an accelsim dependency). Each factory returns ``(callable, args)``
and ``kwargs`` as ``accelsim capture`` and :func:`accelsim.workload.torch_capture.capture_program`
take them; nothing is allocated and no weights are read:

    accelsim capture workloads/programs/hf_llama.py:llama mode=decode batch=1 context=2048 \
        -o llama_dec.json

The step is the one ``scripts/measure_e2e.py`` timed and profiled (run 1,
``scripts/data/h200_e2e.json``), with Hugging Face's own model code in place of that script's
HF-style copy of it:

* ``prefill``: ``model(ids, use_cache=False, logits_to_keep=1)`` on ``batch x seq`` tokens
  (no cache; logits of the last position only);
* ``decode``: one token per sequence at position ``context - 1`` against a ``StaticCache`` of
  ``context`` positions, allocated before the step (as the measurement allocated its caches),
  ``logits_to_keep=1``.

``config`` is a ``LlamaConfig`` or the path of a ``config.json`` (``workloads/hf/``); the
default is the zoo's Llama-3-8B (``accelsim.workload.models.transformer.LLAMA3_8B``).
Overrides (``layers=2``, ``hidden=256``...) make a small model for tests.
"""

from __future__ import annotations

import json
from typing import Any

import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}

LLAMA3_8B = dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                 max_position_embeddings=8192, rope_theta=500000.0, rms_norm_eps=1e-5,
                 tie_word_embeddings=False)
"""The zoo's Llama-3-8B (``TransformerSpec`` ``LLAMA3_8B``) as ``LlamaConfig`` fields."""

SMALL = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
             num_attention_heads=8, num_key_value_heads=2, vocab_size=1000)
"""A 2-layer model of the same architecture, for tests."""

_SHORT = {"layers": "num_hidden_layers", "hidden": "hidden_size", "heads": "num_attention_heads",
          "kv_heads": "num_key_value_heads", "ffn": "intermediate_size", "vocab": "vocab_size"}


def make_config(config: Any = None, **fields: Any) -> Any:
    """A ``LlamaConfig`` (SDPA attention) from ``config`` (None: :data:`LLAMA3_8B`; a dict; a
    ``config.json`` path; a ``LlamaConfig``) with ``fields`` overriding (short names of
    :data:`_SHORT` allowed)."""
    from transformers import LlamaConfig

    if isinstance(config, LlamaConfig):
        base = config.to_dict()
    elif isinstance(config, str):
        with open(config) as f:
            base = json.load(f)
    else:
        base = dict(LLAMA3_8B if config is None else config)
    base.update({_SHORT.get(k, k): v for k, v in fields.items()})
    cfg = LlamaConfig(**{k: v for k, v in base.items() if k not in ("architectures",)})
    cfg._attn_implementation = "sdpa"
    return cfg


def build(config: Any = None, device: str = "meta", dtype: str = "bf16", **fields: Any) -> Any:
    """``LlamaForCausalLM`` of :func:`make_config` on ``device`` in ``dtype``, eval mode."""
    from transformers import LlamaForCausalLM

    cfg = make_config(config, **fields)
    with torch.device(device):
        model = LlamaForCausalLM(cfg)
    return model.to(DTYPES[dtype]).eval()


def static_cache(model: Any, batch: int, context: int, device: str = "meta") -> Any:
    """A ``StaticCache`` of ``context`` positions, allocated now, holding ``context - 1``
    positions (the next token is written at ``context - 1``)."""
    from transformers import StaticCache

    cfg = model.config
    cache = StaticCache(config=cfg, max_cache_len=context)
    dh = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    dt = next(model.parameters()).dtype
    example = torch.empty(batch, cfg.num_key_value_heads, 1, dh, dtype=dt, device=device)
    for layer in cache.layers:
        layer.lazy_initialization(example, example)
        layer.cumulative_length = torch.tensor(context - 1, device=device)
    return cache


def llama(mode: str = "decode", batch: int = 1, context: int = 1024, seq: int = 512,
          device: str = "meta", dtype: str = "bf16", config: Any = None, model: Any = None,
          **fields: Any) -> tuple[Any, tuple, dict]:
    """One prefill or decode step of ``LlamaForCausalLM`` (module doc): (callable, args,
    kwargs)."""
    model = model if model is not None else build(config, device, dtype, **fields)
    if mode == "prefill":
        ids = torch.zeros(batch, seq, dtype=torch.long, device=device)
        return model, (ids,), {"use_cache": False, "logits_to_keep": 1}
    if mode != "decode":
        raise ValueError(f"mode={mode!r}: expected prefill or decode")
    ids = torch.zeros(batch, 1, dtype=torch.long, device=device)
    pos = torch.full((batch, 1), context - 1, dtype=torch.long, device=device)
    cache = static_cache(model, batch, context, device)
    return model, (ids,), {"position_ids": pos, "cache": cache, "use_cache": True,
                           "logits_to_keep": 1}
