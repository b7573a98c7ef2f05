"""PyTorch's fused inference paths of its own transformer modules, as capture records them.

In inference (no gradients, ``eval()``), ``nn.TransformerEncoderLayer`` and
``nn.MultiheadAttention`` run a *fast path*: one C++ call (``torch._transformer_encoder_layer_fwd``,
``torch._native_multi_head_attention``) that dispatches the layer's kernels without Python
between them. On ``meta`` tensors, and under any torch-function mode, PyTorch refuses that
path ("some Tensor argument has_torch_function", "device is neither cpu, cuda"), so a capture
sees the Python path instead (``F.multi_head_attention_forward``), which launches other
kernels (the packed QKV projection's strided copy, an unfused activation). Capture therefore
decides as PyTorch 2.11 decides on a GPU (:func:`fast_path`, the conditions of the modules'
``forward``), and for a module on its fast path records the calls that C++ call makes
(:func:`record_layer`, :func:`record_mha`; each marked ``args["fused"]``), which are what run
on a GPU: kernel names and counts in ``scripts/data/h200_torch_transformer_run24.json``
profiles (calibration): the encoder layer = QKV GEMM (bias epilogue), SDPA, output GEMM,
add, LayerNorm, FFN GEMM with the ReLU/GELU in its epilogue, FFN GEMM, add, LayerNorm (pre-norm
moves the norms); MHA without weights = QKV GEMM, SDPA, output GEMM; MHA returning its
averaged weights = the older native path (QKV GEMM without bias, ``transform_bias_rescale_qkv``,
``bmm``, softmax, ``bmm``, a head-transposing copy, output GEMM, sum and divide over heads).

Not modelled (the Python path is recorded instead, a stated approximation): a fast-path call
with an attention mask or padding mask (PyTorch merges them into the fused call), nested
tensors. Under ``torch.compile`` (the ``compiled`` lowering) the fused path's calls are
lowered like any recorded call (Inductor-style fusion may group its adds and norms, which a
real compile leaves inside the one extern call): not validated.

Imports: torch (lazily, by the caller).
"""

from __future__ import annotations

from typing import Any

FUSED_LAYER = "encoder_layer_fast"
"""``args["fused"]`` of the calls inside ``torch._transformer_encoder_layer_fwd`` (and the
``fastpath`` of its module call)."""
FUSED_MHA = "mha_fast"
"""... inside ``torch._native_multi_head_attention`` without attention weights."""
FUSED_MHA_WEIGHTS = "mha_fast_weights"
"""... inside ``torch._native_multi_head_attention`` returning averaged attention weights."""


def _hooked(module: Any) -> bool:
    """Whether any submodule carries hooks of its own (PyTorch then refuses the fast path)."""
    return any(len(getattr(m, "_forward_hooks", {})) + len(getattr(m, "_forward_pre_hooks", {}))
               for m in module.modules())


def _mha_ok(mha: Any, x: Any) -> bool:
    """``nn.MultiheadAttention``'s own fast-path conditions for self-attention on ``x``."""
    return (x.dim() == 3 and not mha.training and mha.batch_first and mha.num_heads % 2 == 0
            and mha.in_proj_bias is not None and mha._qkv_same_embed_dim
            and mha.bias_k is None and mha.bias_v is None and not mha.add_zero_attn
            and x.dtype == mha.in_proj_weight.dtype == mha.in_proj_bias.dtype
            and not x.is_nested)


def fast_path(module: Any, inputs: tuple) -> str:
    """The fused path PyTorch 2.11 takes on a GPU for this module call, from the module and
    its positional inputs: :data:`FUSED_LAYER` for an ``nn.TransformerEncoderLayer``,
    :data:`FUSED_MHA` for an ``nn.MultiheadAttention`` called on one tensor three times
    (``need_weights`` and masks are decided later, at its ``F.multi_head_attention_forward``);
    ``""``: its Python path. Gradients are off in a capture (as in the inference it stands
    for), autocast is not modelled."""
    import torch

    if not torch.backends.mha.get_fastpath_enabled() or not inputs \
            or not isinstance(inputs[0], torch.Tensor) or _hooked(module):
        return ""
    x = inputs[0]
    if isinstance(module, torch.nn.TransformerEncoderLayer):
        ok = (_mha_ok(module.self_attn, x) and bool(module.activation_relu_or_gelu)
              and module.norm1.eps == module.norm2.eps)
        return FUSED_LAYER if ok else ""
    if isinstance(module, torch.nn.MultiheadAttention):
        same = len(inputs) >= 3 and inputs[1] is x and inputs[2] is x
        return FUSED_MHA if same and _mha_ok(module, x) else ""
    return ""


def record_mha(mha: Any, x: Any, need_weights: bool, average: bool = True) -> Any:
    """Run, on ``x`` (batch first), the calls ``torch._native_multi_head_attention`` makes on a
    GPU (module doc); the capture mode records them. Returns the attention output."""
    import torch
    import torch.nn.functional as F

    b, t, e = x.shape
    h = mha.num_heads
    d = e // h
    if not need_weights:  # the SDPA path
        qkv = F.linear(x, mha.in_proj_weight, mha.in_proj_bias)
        q, k, v = (c.view(b, t, h, d).transpose(1, 2) for c in qkv.chunk(3, -1))
        y = F.scaled_dot_product_attention(q, k, v)
        return F.linear(y.transpose(1, 2).reshape(b, t, e), mha.out_proj.weight,
                        mha.out_proj.bias)
    qkv = F.linear(x, mha.in_proj_weight)  # gemm_nt: the bias goes to the next kernel
    heads = torch.empty((3, b, h, t, d), dtype=x.dtype, device=x.device)
    heads.copy_(qkv.view(b, t, 3, h, d).permute(2, 0, 3, 1, 4))  # transform_bias_rescale_qkv
    q, k, v = (heads[i].reshape(b * h, t, d) for i in range(3))
    att = torch.softmax(torch.bmm(q, k.transpose(1, 2)), dim=-1)
    o = torch.bmm(att, v).view(b, h, t, d).transpose(1, 2).contiguous()  # transform_0213
    out = F.linear(o.view(b, t, e), mha.out_proj.weight, mha.out_proj.bias)
    if average:
        torch.div(att.view(b, h, t, t).sum(dim=1), h)
    return out


def record_layer(layer: Any, src: Any) -> Any:
    """Run, on ``src`` (batch first), the calls ``torch._transformer_encoder_layer_fwd``
    makes on a GPU (module doc): pre- or post-norm, no activation call (it is the first FFN
    GEMM's epilogue: the caller marks that ``linear``, the third, with :func:`activation`).
    Returns the layer's output."""
    import torch.nn.functional as F

    e = src.shape[-1]
    n1, n2 = layer.norm1, layer.norm2
    x = F.layer_norm(src, (e,), n1.weight, n1.bias, n1.eps) if layer.norm_first else src
    x = record_mha(layer.self_attn, x, need_weights=False)
    x.add_(src)
    if not layer.norm_first:
        x = F.layer_norm(x, (e,), n1.weight, n1.bias, n1.eps)
    res = x
    if layer.norm_first:
        x = F.layer_norm(x, (e,), n2.weight, n2.bias, n2.eps)
    x = F.linear(x, layer.linear1.weight, layer.linear1.bias)
    x = F.linear(x, layer.linear2.weight, layer.linear2.bias)
    x.add_(res)
    if not layer.norm_first:
        x = F.layer_norm(x, (e,), n2.weight, n2.bias, n2.eps)
    return x


def activation(layer: Any) -> str:
    """The FFN activation a fused encoder layer puts in its first GEMM's epilogue."""
    return "gelu" if layer.activation_relu_or_gelu == 2 else "relu"


__all__ = ["FUSED_LAYER", "FUSED_MHA", "FUSED_MHA_WEIGHTS", "activation", "fast_path",
           "record_layer", "record_mha"]
