"""The programs the zoo's Llama-family decoders and GPT-2 run as, emitted without torch.

:func:`llama_program` writes, call by call, the :class:`~accelsim.workload.program.Program`
that capturing a Llama-family decoder's model code records for a
:class:`~accelsim.workload.models.transformer.TransformerSpec` (RMSNorm, rotary, SwiGLU,
separate q/k/v projections, grouped-query attention, optional biases): the same functions in
the same order, the same module calls, shapes, dtypes, strides, view and parameter flags and
tensor numbers, so a zoo decoder and a captured one lower through the same tables
(:func:`accelsim.mapping.gpu_lowering.lower_sites`) to the same kernels. Two model codes
(``flavour``, :data:`FLAVOURS`):

* ``hf_style`` (the default): ``scripts/measure/e2e.py``'s ``Llama``, the code every H200
  whole-model set timed (Hugging Face's eager code, written out: RMSNorm as eight calls,
  ``rotate_half`` rotary on a table of ``inv_freq @ positions``, SDPA with ``enable_gqa``,
  ``nn.Linear``; a static cache written by slice assignment). The position ids are an
  input (an expanded ``arange`` in prefill), nothing else is computed from them;
* ``transformers5``: Hugging Face's ``LlamaForCausalLM`` (``transformers`` 5, SDPA attention,
  built on ``meta`` from the config: ``workloads/programs/hf_llama.py``), with its
  bookkeeping: the position ids and packed-sequence check (prefill), the boolean mask of a
  ``StaticCache``'s positions and each layer's cache counter and ``index_copy_`` writes
  (decode; a single grouped query packed to ``(batch, kv_heads, groups, dim)`` first,
  Hugging Face's ``pack_gqa``).

``tests/workload/test_transformer_program.py`` holds each equal to a real capture of its code
on tiny configs (lowered kernels too). Steps: ``prefill`` of ``batch x seq`` tokens (logits
of the last position), ``decode`` of one token per sequence against a cache of ``context``
positions.

:func:`gpt2_program` does the same for GPT-2: ``hf_style``, ``e2e.py``'s ``GPT2`` (prefill
and decode; the tanh GELU one ``F.gelu`` call), ``transformers5``, ``GPT2LMHeadModel``'s
prefill (its GELU eight pointwise calls).

Strides of pointwise results follow PyTorch's TensorIterator (a fast path when every operand
has the result's shape and one layout, else dimensions ordered by the operands' strides);
``reshape``/``view`` follow ATen's stride computation. Sizes in elements.

Imports: workload.program, workload.models.transformer.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from accelsim.workload.models.transformer import TransformerSpec
from accelsim.workload.program import Call, Program, TensorInfo, dense_strides

TORCH_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
"""accelsim precision -> the torch dtype the model is cast to."""

FRAMEWORK = "torch 2.13.0 + transformers 5.24 (emitted)"
"""What the ``transformers5`` flavour stands for (the versions its call sequence was taken
from)."""

HF_STYLE_FRAMEWORK = "torch 2.13.0 + scripts/measure/e2e.py HF-style model code (emitted)"
"""What the ``hf_style`` flavour stands for."""

FLAVOURS = ("hf_style", "transformers5")
"""Model code a Llama program is emitted for: ``hf_style``, ``scripts/measure/e2e.py``'s
``Llama``/``GPT2`` (Hugging Face's eager code as the H200 whole-model sets ran it: no position
ids, packed-sequence check, cache mask or cache counter; a static cache written by slice
assignment), the zoo's default; ``transformers5``, Hugging Face's ``LlamaForCausalLM``
(``workloads/programs/hf_llama.py``)."""


class _T:
    """A tensor in flight: shape and strides in elements, torch dtype, flags."""

    __slots__ = ("dtype", "is_view", "param", "shape", "stride")

    def __init__(self, shape: Sequence[int], dtype: str, stride: Sequence[int] | None = None,
                 *, is_view: bool = False, param: bool = False) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.stride = tuple(stride) if stride is not None else _contiguous(self.shape)
        self.dtype = dtype
        self.is_view = is_view
        self.param = param


def _contiguous(shape: Sequence[int]) -> tuple[int, ...]:
    out, acc = [], 1
    for size in reversed(shape):
        out.append(acc)
        acc *= max(1, size)
    return tuple(reversed(out))


def _is_contiguous(t: _T) -> bool:
    """PyTorch's ``is_contiguous()`` (size-1 dimensions may have any stride)."""
    expected = 1
    for size, st in zip(reversed(t.shape), reversed(t.stride), strict=True):
        if size != 1:
            if st != expected:
                return False
            expected *= size
    return True


def _dense(t: _T) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense()``."""
    return dense_strides(t.shape, t.stride)


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        for i, size in enumerate(s):
            j = n - len(s) + i
            out[j] = size if out[j] == 1 else out[j]
    return tuple(out)


def _pointwise_stride(ins: Sequence[_T], shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides TensorIterator gives the result of a pointwise call over ``ins``. The stride
    of a size-1 dimension may differ from what torch gives (it does not follow one rule
    across dtypes there); layouts, and so :attr:`TensorInfo.contiguous`, are the same."""
    if ins and all(t.shape == shape for t in ins):
        if all(_is_contiguous(t) for t in ins):
            return _contiguous(shape)
        if all(_dense(t) for t in ins) and len({t.stride for t in ins}) == 1:
            return ins[0].stride
    n = len(shape)
    strides = []
    for t in ins:  # broadcast dimensions get stride 0
        off = n - len(t.shape)
        st = [0] * n
        for i, (size, s) in enumerate(zip(t.shape, t.stride, strict=True)):
            st[off + i] = 0 if size == 1 and shape[off + i] != 1 else s
        strides.append(st)

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))  # perm[0]: the innermost dimension
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * n
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _view_stride(t: _T, shape: Sequence[int]) -> tuple[int, ...] | None:
    """ATen's ``computeStride``: the strides of ``t`` viewed as ``shape``, None if no view."""
    old, olds = t.shape, t.stride
    new = [0] * len(shape)
    if not old:
        return tuple(1 for _ in shape)
    view_d = len(shape) - 1
    chunk = olds[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and olds[d - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                new[view_d] = view_numel * chunk
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk = olds[d - 1]
                tensor_numel = view_numel = 1
    return tuple(new) if view_d == -1 else None


class _Emitter:
    """Records calls as the capture's recorder does (tensor numbers by first sight)."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.stack: list[str] = []
        self.ids: dict[int, int] = {}
        self.alive: list[_T] = []

    def ident(self, t: _T) -> int:
        n = self.ids.get(id(t))
        if n is None:
            n = self.ids[id(t)] = len(self.ids)
            self.alive.append(t)
        return n

    def info(self, t: _T, ins: Sequence[_T] = ()) -> TensorInfo:
        view = t.is_view or any(t is x for x in ins)
        return TensorInfo(t.shape, t.dtype, t.stride, view=view, param=t.param,
                          tensor_id=self.ident(t))

    def call(self, fn: str, ins: Sequence[_T], outs: Sequence[_T], args: dict | None = None,
             qual: str = "") -> None:
        tin = tuple(self.info(t) for t in ins)
        tout = tuple(self.info(t, ins) for t in outs)
        self.calls.append(Call(fn=fn, inputs=tin, outputs=tout, args=dict(args or {}),
                               module=self.stack[-1] if self.stack else "",
                               qualname=qual or fn))

    @contextmanager
    def module(self, path: str, cls: str) -> Iterator[None]:
        self.calls.append(Call(fn="module", module=path, qualname=cls))
        self.stack.append(path)
        try:
            yield
        finally:
            self.stack.pop()

    # -- tensor methods, each one recorded call -------------------------------------------

    def pointwise(self, fn: str, ins: Sequence[_T], args: dict | None = None, *,
                  dtype: str | None = None, qual: str = "") -> _T:
        shape = _broadcast([t.shape for t in ins])
        out = _T(shape, dtype or ins[0].dtype, _pointwise_stride(ins, shape))
        self.call(fn, ins, [out], args, qual or f"TensorBase.{fn}")
        return out

    def to(self, x: _T, dtype: str, args: dict) -> _T:
        if x.dtype == dtype:  # Tensor.to returns the tensor itself
            self.call("to", [x], [x], args, "TensorBase.to")
            return x
        out = _T(x.shape, dtype, x.stride if _dense(x) else _pointwise_stride([x], x.shape))
        self.call("to", [x], [out], args, "TensorBase.to")
        return out

    def view_like(self, fn: str, x: _T, shape: Sequence[int], stride: Sequence[int],
                  args: dict | None = None, qual: str = "") -> _T:
        out = _T(shape, x.dtype, stride, is_view=True)
        self.call(fn, [x], [out], args, qual or f"TensorBase.{fn}")
        return out

    def view(self, fn: str, x: _T, shape: Sequence[int], args: dict) -> _T:
        stride = _view_stride(x, shape)
        if stride is None:  # reshape of a layout that cannot be viewed: a copy
            out = _T(shape, x.dtype)
            self.call(fn, [x], [out], args, f"TensorBase.{fn}")
            return out
        return self.view_like(fn, x, shape, stride, args)

    def transpose(self, x: _T, a: int, b: int) -> _T:
        shape, stride = list(x.shape), list(x.stride)
        shape[a], shape[b] = shape[b], shape[a]
        stride[a], stride[b] = stride[b], stride[a]
        return self.view_like("transpose", x, shape, stride,
                              {"has_input": True, "dim0": a, "dim1": b})

    def unsqueeze(self, x: _T, dim: int, *, fn: str = "unsqueeze",
                  args: dict | None = None, qual: str = "") -> _T:
        shape, stride = list(x.shape), list(x.stride)
        new = 1 if dim >= len(shape) else shape[dim] * stride[dim]
        shape.insert(dim, 1)
        stride.insert(dim, new)
        return self.view_like(fn, x, shape, stride, {"arg1": dim} if args is None else args,
                              qual)

    def expand(self, x: _T, shape: Sequence[int], args: dict) -> _T:
        stride = [0 if new != old else st
                  for new, old, st in zip(shape, x.shape, x.stride, strict=True)]
        return self.view_like("expand", x, shape, stride, args)

    def index_none(self, x: _T, dims: Sequence[int]) -> _T:
        """``x[...]`` inserting size-1 dimensions at ``dims`` (``None`` indices), one call."""
        shape, stride = list(x.shape), list(x.stride)
        for dim in dims:
            new = 1 if dim >= len(shape) else shape[dim] * stride[dim]
            shape.insert(dim, 1)
            stride.insert(dim, new)
        return self.view_like("getitem", x, shape, stride, None, "TensorBase.__getitem__")

    def slice(self, x: _T, dim: int, size: int | None) -> _T:
        """``x[..., a:b]`` (``size`` elements along ``dim``) or ``x[:, i]`` (``size`` None:
        the dimension is selected away)."""
        shape, stride = list(x.shape), list(x.stride)
        if size is None:
            del shape[dim], stride[dim]
        else:
            shape[dim] = size
        return self.view_like("getitem", x, shape, stride, None, "TensorBase.__getitem__")

    def contiguous(self, x: _T) -> _T:
        if _is_contiguous(x):
            self.call("contiguous", [x], [x], None, "TensorBase.contiguous")
            return x
        out = _T(x.shape, x.dtype)
        self.call("contiguous", [x], [out], None, "TensorBase.contiguous")
        return out

    def new(self, fn: str, shape: Sequence[int], dtype: str, args: dict, qual: str) -> _T:
        out = _T(shape, dtype)
        self.call(fn, [], [out], args, qual)
        return out


class _Params:
    """The model's parameters and buffers (weights never read: shapes only)."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def __call__(self, *shape: int) -> _T:
        return _T(shape, self.dtype, param=True)


def is_llama_family(spec: TransformerSpec) -> bool:
    """Whether ``spec`` is a decoder :func:`llama_program` emits (Hugging Face's
    ``LlamaForCausalLM`` architecture: RMSNorm, rotary, SwiGLU, separate projections,
    pre-norm, causal, an LM head, no learned positions, no sliding window, a dense FFN: a
    mixture-of-experts model lowers op by op)."""
    return (spec.norm == "rmsnorm" and spec.ffn_act == "swiglu" and spec.rotary
            and spec.pre_norm and spec.causal and spec.lm_head and not spec.fused_qkv
            and not spec.linear_bias and not spec.max_positions and not spec.token_types
            and spec.sliding_window is None and not spec.is_moe)


def _rms_norm(e: _Emitter, x: _T, weight: _T, eps: float) -> _T:
    """``LlamaRMSNorm.forward``: eight calls."""
    h = e.to(x, "float32", {"has_dtype": True, "arg1": "float32"})
    var = e.pointwise("pow", [h], {"arg1": 2})
    var = _mean(e, var)
    var = e.pointwise("add", [var], {"arg1": eps})
    rs = e.pointwise("rsqrt", [var], None, qual="_VariableFunctionsClass.rsqrt")
    h = e.pointwise("mul", [h, rs])
    h = e.to(h, x.dtype, {"has_dtype": True, "arg1": x.dtype})
    return e.pointwise("mul", [weight, h])


def _mean(e: _Emitter, x: _T) -> _T:
    out = _T((*x.shape[:-1], 1), x.dtype)
    e.call("mean", [x], [out], {"has_input": True, "dim": -1, "keepdim": True},
           "TensorBase.mean")
    return out


def _linear(e: _Emitter, path: str, x: _T, weight: _T, bias: _T | None) -> _T:
    with e.module(path, "Linear"):
        # (with a bias a batched input runs as addmm on a 2-D view, and the result is a view
        # of linear's own buffer: not of an input, as capture records it)
        out = _T((*x.shape[:-1], weight.shape[0]), x.dtype)
        ins = [x, weight] + ([bias] if bias is not None else [])
        e.call("linear", ins, [out], {} if bias is not None else {"arg2": None})
    return out


def _embedding(e: Any, path: str, ids: Any, table: Any, shape: tuple[int, ...],
               dtype: str) -> Any:
    """``nn.Embedding`` at ``path``: the module call and its ``F.embedding`` of ``ids`` into
    ``table``; the rows (``shape``, ``dtype``)."""
    with e.module(path, "Embedding"):
        x = _T(shape, dtype)
        e.call("embedding", [ids, table], [x],
               {"padding_idx": None, "max_norm": None, "norm_type": 2.0,
                "scale_grad_by_freq": False, "sparse": False})
    return x


def _cache_writes(e: Any, new: tuple[Any, Any], shape: tuple[int, ...], dtype: str
                  ) -> list[Any]:
    """The static KV cache's slice writes of a decode step (``cache[:, :, pos:pos + 1] =
    new`` for K and V): one ``setitem`` call each; the caches (``shape``) are what attention
    reads next."""
    caches = []
    for t in new:
        cache = _T(shape, dtype)
        e.call("setitem", [cache, t], [], None, "TensorBase.__setitem__")
        caches.append(cache)
    return caches


def _rotary_qkv(e: _Emitter, p: str, x: _T, w: Any, dims: tuple[int, int, int, int],
                bias: bool, cos: _T, sin: _T, view_args: Any) -> tuple[_T, _T, _T]:
    """The attention block's ``q_proj``, ``k_proj``, ``v_proj`` of ``x`` (``dims``: heads, KV
    heads, head dim, hidden), each viewed as (batch, seq, heads, head dim) with the call's
    recorded ``view_args(heads)`` and transposed, then the rotary embedding of q and k."""
    h, kv, dh, d = dims
    batch, sq = x.shape[0], x.shape[1]
    heads = []
    for name, n in (("q_proj", h), ("k_proj", kv), ("v_proj", kv)):
        y = _linear(e, f"{p}.{name}", x, w(n * dh, d), w(n * dh) if bias else None)
        y = e.view("view", y, (batch, sq, n, dh), view_args(n))
        heads.append(e.transpose(y, 1, 2))
    q, k, v = heads
    c, s = e.unsqueeze(cos, 1), e.unsqueeze(sin, 1)
    return _rope(e, q, c, s), _rope(e, k, c, s), v


def _rope(e: _Emitter, x: _T, cos: _T, sin: _T) -> _T:
    """``apply_rotary_pos_emb`` on one of q, k: ``x * cos + rotate_half(x) * sin``."""
    a = e.pointwise("mul", [x, cos])
    half = x.shape[-1] // 2
    x1 = e.slice(x, len(x.shape) - 1, half)
    x2 = e.slice(x, len(x.shape) - 1, x.shape[-1] - half)
    n = e.pointwise("neg", [x2])
    r = _T((*x.shape[:-1], x.shape[-1]), x.dtype)
    e.call("cat", [n, x1], [r], {"dim": -1}, "_VariableFunctionsClass.cat")
    b = e.pointwise("mul", [r, sin])
    return e.pointwise("add", [a, b])


def _sdpa(e: _Emitter, q: _T, k: _T, v: _T, mask: _T | None, scale: float,
          causal: bool, gqa: bool) -> _T:
    args: dict[str, Any] = {"has_query": True, "has_key": True, "has_value": True}
    args.update({"has_attn_mask": True} if mask is not None else {"attn_mask": None})
    args.update({"dropout_p": 0.0, "scale": scale, "is_causal": causal})
    if gqa:
        args["enable_gqa"] = True
    return _sdpa_call(e, q, k, v, mask, args)


def _sdpa_call(e: _Emitter, q: _T, k: _T, v: _T, mask: _T | None, args: dict) -> _T:
    """``F.scaled_dot_product_attention`` with ``args`` as recorded; its result takes the
    query's layout as cuDNN allocates it."""
    b, h, s, d = q.shape
    out = _T((b, h, s, d), q.dtype)
    order = sorted(range(4), key=lambda i: (-q.stride[i], i))
    if not _is_contiguous(q) and order != [0, 1, 2, 3]:
        # cuDNN's layout rule (torch_capture._cuda_sdpa_layout): dense, in the query's
        # stride order
        stride, step = [0] * 4, 1
        for i in reversed(order):
            stride[i] = step
            step *= q.shape[i]
        out = _T((b, h, s, d), q.dtype, tuple(stride))
    e.call("scaled_dot_product_attention", [q, k, v] + ([mask] if mask is not None else []),
           [out], args)
    return out


def llama_program(spec: TransformerSpec, *, mode: str = "decode", batch: int = 1,
                  seq: int = 512, context: int | None = None, dtype: str = "bf16",
                  eps: float = 1e-5, flavour: str = "hf_style") -> Program:
    """The program of a Llama-family decoder of ``spec`` (module doc): ``prefill`` of
    ``batch x seq`` tokens, or ``decode`` of one token per sequence against a static cache
    of ``context`` positions (default ``seq``), weights, activations and cache in ``dtype``
    (``bf16``, ``fp16``, ``fp32``). ``flavour`` (:data:`FLAVOURS`): ``hf_style``, the calls
    of ``scripts/measure/e2e.py``'s HF-style ``Llama`` (the code the H200 whole-model sets
    timed), or ``transformers5``, those of Hugging Face's ``LlamaForCausalLM``. ``eps``:
    RMSNorm's epsilon (an argument only)."""
    if not is_llama_family(spec):
        raise ValueError(f"{spec.name} is not a Llama-family decoder")
    if mode not in ("prefill", "decode"):
        raise ValueError(f"mode={mode!r}: expected prefill or decode")
    if dtype not in TORCH_DTYPE:
        raise ValueError(f"dtype={dtype!r}: expected one of {', '.join(TORCH_DTYPE)}")
    if flavour not in FLAVOURS:
        raise ValueError(f"flavour={flavour!r}: expected one of {', '.join(FLAVOURS)}")
    if flavour == "hf_style":
        return _hf_style_llama(spec, mode=mode, batch=batch, seq=seq, context=context,
                               dtype=dtype, eps=eps)
    tdt = TORCH_DTYPE[dtype]
    e = _Emitter()
    w = _Params(tdt)
    d, h, kv, dh, f = spec.hidden, spec.heads, spec.kv, spec.dh, spec.ffn
    groups = h // kv
    sq = 1 if mode == "decode" else seq
    ctx = (context or seq) if mode == "decode" else seq
    qkv_bias, o_bias, mlp_bias = spec.qkv_bias, spec.out_bias, spec.mlp_bias
    embed = w(spec.vocab, d)
    lm_head = embed if spec.tied_embeddings else None
    scale = dh ** -0.5
    with e.module("", "LlamaForCausalLM"):
        with e.module("model", "LlamaModel"):
            ids = _T((batch, sq), "int64")
            x = _embedding(e, "model.embed_tokens", ids, embed, (batch, sq, d), tdt)
            mask = None
            lengths = [_T((), "int64") for _ in range(spec.layers)]
            if mode == "prefill":
                pos = _prefill_positions(e, batch, sq)
            else:
                mask = _decode_mask(e, batch, ctx, lengths[0])
                pos = _T((batch, 1), "int64")  # position_ids, given
            cos, sin = _rotary(e, w, pos, dh, tdt)
            for i in range(spec.layers):
                p = f"model.layers.{i}"
                with e.module(p, "LlamaDecoderLayer"):
                    with e.module(f"{p}.input_layernorm", "LlamaRMSNorm"):
                        hn = _rms_norm(e, x, w(d), eps)
                    a = _attention(e, w, f"{p}.self_attn", hn, cos, sin, mask, lengths[i],
                                   mode=mode, batch=batch, sq=sq, ctx=ctx, h=h, kv=kv, dh=dh,
                                   d=d, groups=groups, scale=scale, qkv_bias=qkv_bias,
                                   o_bias=o_bias)
                    x = e.pointwise("add", [x, a])
                    with e.module(f"{p}.post_attention_layernorm", "LlamaRMSNorm"):
                        hn = _rms_norm(e, x, w(d), eps)
                    with e.module(f"{p}.mlp", "LlamaMLP"):
                        g = _linear(e, f"{p}.mlp.gate_proj", hn, w(f, d),
                                    w(f) if mlp_bias else None)
                        with e.module(f"{p}.mlp.act_fn", "SiLUActivation"):
                            g2 = _T(g.shape, tdt)
                            e.call("silu", [g], [g2], {"inplace": False})
                        u = _linear(e, f"{p}.mlp.up_proj", hn, w(f, d),
                                    w(f) if mlp_bias else None)
                        m = e.pointwise("mul", [g2, u])
                        y = _linear(e, f"{p}.mlp.down_proj", m, w(d, f),
                                    w(d) if mlp_bias else None)
                    x = e.pointwise("add", [x, y])
            with e.module("model.norm", "LlamaRMSNorm"):
                x = _rms_norm(e, x, w(d), eps)
        last = e.slice(x, 1, 1)
        _linear(e, "lm_head", last, lm_head or w(spec.vocab, d), None)
    name = f"{spec.name}_{mode}"
    return Program(name=name, calls=tuple(e.calls), framework=FRAMEWORK,
                   source=f"llama_program({spec.name}, mode={mode}, batch={batch}, "
                   f"{'context=' + str(ctx) if mode == 'decode' else 'seq=' + str(seq)}, "
                   f"dtype={dtype})")


def _hf_style_llama(spec: TransformerSpec, *, mode: str, batch: int, seq: int,
                    context: int | None, dtype: str, eps: float) -> Program:
    """``scripts/measure/e2e.py``'s ``Llama`` as its measurement drives it:
    ``model(ids, pos_ids)`` (prefill; ``pos_ids`` an expanded ``arange``) or
    ``model(ids, pos_ids, caches, context - 1)`` (decode, caches allocated before the step,
    written by slice assignment)."""
    tdt = TORCH_DTYPE[dtype]
    e = _Emitter()
    w = _Params(tdt)
    d, h, kv, dh, f = spec.hidden, spec.heads, spec.kv, spec.dh, spec.ffn
    sq = 1 if mode == "decode" else seq
    ctx = (context or seq) if mode == "decode" else seq
    embed = w(spec.vocab, d)
    lm_head = embed if spec.tied_embeddings else None
    with e.module("", "Llama"):
        ids = _T((batch, sq), "int64")
        x = _embedding(e, "embed_tokens", ids, embed, (batch, sq, d), tdt)
        if mode == "decode":  # torch.full((batch, 1), context - 1)
            pos = _T((batch, 1), "int64")
        else:  # torch.arange(seq)[None].expand(batch, seq)
            pos = _T((batch, sq), "int64", (0 if batch > 1 else sq, 1), is_view=True)
        cos, sin = _hf_style_rope(e, pos, dh, tdt)
        for i in range(spec.layers):
            p = f"layers.{i}"
            with e.module(p, "LlamaLayer"):
                r = x
                with e.module(f"{p}.input_layernorm", "RMSNorm"):
                    hn = _rms_norm(e, x, w(d), eps)
                q, k, v = _rotary_qkv(
                    e, p, hn, w, (h, kv, dh, d), spec.qkv_bias, cos, sin,
                    lambda n: {"arg1": batch, "arg2": sq, "arg3": n, "arg4": dh})
                if mode == "decode":  # kc[:, :, pos:pos + 1] = k; vc[...] = v
                    k, v = _cache_writes(e, (k, v), (batch, kv, ctx, dh), tdt)
                o = _sdpa_call(e, q, k, v, None,
                               {"has_query": True, "has_key": True, "has_value": True,
                                "is_causal": mode == "prefill" and sq > 1,
                                "enable_gqa": True})
                o = e.transpose(o, 1, 2)
                o = e.view("reshape", o, (batch, sq, d),
                           {"arg1": batch, "arg2": sq, "arg3": d})
                a = _linear(e, f"{p}.o_proj", o, w(d, h * dh), w(d) if spec.out_bias else None)
                x = e.pointwise("add", [r, a])
                r = x
                with e.module(f"{p}.post_attention_layernorm", "RMSNorm"):
                    hn = _rms_norm(e, x, w(d), eps)
                mlp_bias = spec.mlp_bias
                g = _linear(e, f"{p}.gate_proj", hn, w(f, d), w(f) if mlp_bias else None)
                g2 = _T(g.shape, tdt)
                e.call("silu", [g], [g2], {"inplace": False})
                u = _linear(e, f"{p}.up_proj", hn, w(f, d), w(f) if mlp_bias else None)
                m = e.pointwise("mul", [g2, u])
                y = _linear(e, f"{p}.down_proj", m, w(d, f), w(d) if mlp_bias else None)
                x = e.pointwise("add", [r, y])
        with e.module("norm", "RMSNorm"):
            x = _rms_norm(e, x, w(d), eps)
        last = e.slice(x, 1, 1)
        _linear(e, "lm_head", last, lm_head or w(spec.vocab, d), None)
    tokens = "context=" + str(ctx) if mode == "decode" else "seq=" + str(seq)
    return Program(name=f"{spec.name}_{mode}", calls=tuple(e.calls),
                   framework=HF_STYLE_FRAMEWORK,
                   source=f"llama_program({spec.name}, mode={mode}, batch={batch}, {tokens}, "
                   f"dtype={dtype}, flavour=hf_style)")


def _hf_style_rope(e: _Emitter, pos: _T, dh: int, tdt: str) -> tuple[_T, _T]:
    """``Llama.rope``: ``(inv_freq[None, :, None].float() @ pos_ids[:, None, :].float())``
    transposed, concatenated with itself, cos and sin cast to ``tdt``; ``inv_freq`` an fp32
    buffer."""
    inv = _T((dh // 2,), "float32", param=True)
    inv = e.index_none(inv, (0, 2))
    e.call("float", [inv], [inv], None, "TensorBase.float")
    p = e.index_none(pos, (1,))
    pf = _T(p.shape, "float32", p.stride if _dense(p) else _pointwise_stride([p], p.shape))
    e.call("float", [p], [pf], None, "TensorBase.float")
    freqs = _T((pf.shape[0], dh // 2, pf.shape[2]), "float32")
    e.call("matmul", [inv, pf], [freqs], None, "TensorBase.matmul")
    freqs = e.transpose(freqs, 1, 2)
    emb = _T((*freqs.shape[:-1], dh), "float32")
    e.call("cat", [freqs, freqs], [emb], {"dim": -1}, "_VariableFunctionsClass.cat")
    cos = e.to(e.pointwise("cos", [emb]), tdt, {"has_dtype": True, "arg1": tdt})
    sin = e.to(e.pointwise("sin", [emb]), tdt, {"has_dtype": True, "arg1": tdt})
    return cos, sin


def _prefill_positions(e: _Emitter, batch: int, seq: int) -> _T:
    """Cache positions, position ids and Hugging Face's packed-sequence check; returns the
    ``(1, seq)`` position ids the rotary embedding reads."""
    ar = e.new("arange", (seq,), "int64", {"arg0": seq}, "_VariableFunctionsClass.arange")
    cache_pos = e.pointwise("add", [ar], {"arg1": 0})
    pos = e.unsqueeze(cache_pos, 0)
    _packed_check(e, pos, batch, seq)
    return pos


def _packed_check(e: _Emitter, pos: _T, batch: int, seq: int) -> None:
    """Hugging Face's packed-sequence check on the ``(1, seq)`` position ids:
    ``(diff(ids, prepend=ids[:, :1] - 1) != 1).cumsum(-1)[:, -1] == 0).all()``."""
    wide = e.expand(pos, (batch, seq), {"arg1": batch, "arg2": -1}) if batch > 1 else pos
    first = e.slice(wide, 1, 1)
    prev = e.pointwise("sub", [first], {"arg1": 1})
    diff = _T((batch, seq), "int64")
    e.call("diff", [wide, prev], [diff], {"has_prepend": True, "dim": -1},
           "_VariableFunctionsClass.diff")
    ne = e.pointwise("ne", [diff], {"arg1": 1}, dtype="bool")
    cs = _T((batch, seq), "int64")
    e.call("cumsum", [ne], [cs], {"arg1": -1}, "TensorBase.cumsum")
    tail = e.slice(cs, 1, None)
    eq = e.pointwise("eq", [tail], {"arg1": 0}, dtype="bool", qual="TensorBase.__eq__")
    e.call("all", [eq], [_T((), "bool")], None, "TensorBase.all")


def _decode_mask(e: _Emitter, batch: int, ctx: int, length0: _T) -> _T:
    """The static cache's boolean mask ``kv_index <= cache_position``, ``(batch, 1, 1, ctx)``."""
    e.call("to", [length0], [length0], {"has_dtype": True}, "TensorBase.to")
    arange = "_VariableFunctionsClass.arange"
    b_ar = e.new("arange", (batch,), "int64", {"arg0": batch}, arange)
    h_ar = e.new("arange", (1,), "int64", {"arg0": 1}, arange)
    c_ar = e.new("arange", (1,), "int64", {"arg0": 1}, arange)
    cache_pos = e.pointwise("add", [c_ar, length0])
    kv_ar = e.new("arange", (ctx,), "int64", {"arg0": ctx}, arange)
    kv_ar = e.pointwise("add", [kv_ar], {"arg1": 0})
    e.index_none(b_ar, (1, 2, 3))
    e.index_none(h_ar, (0, 2, 3))
    cp = e.index_none(cache_pos, (0, 1, 2))
    kv4 = e.index_none(kv_ar, (0, 0, 0))
    le = e.pointwise("le", [kv4, cp], dtype="bool")
    return e.expand(le, (batch, 1, 1, ctx), {"arg1": batch, "arg2": -1, "arg3": 1, "arg4": ctx})


def _rotary(e: _Emitter, w: _Params, pos: _T, dh: int, tdt: str) -> tuple[_T, _T]:
    """``LlamaRotaryEmbedding.forward``: cos and sin of ``(rows, seq, dh)`` in ``tdt``."""
    with e.module("model.rotary_emb", "LlamaRotaryEmbedding"):
        inv = w(dh // 2)
        p = e.index_none(pos, (2,))
        pf = _T(p.shape, "float32")
        e.call("float", [p], [pf], None, "TensorBase.float")
        inv_f = e.to(inv, "float32", {"has_dtype": True, "dtype": "float32"})
        freqs = e.pointwise("mul", [pf, inv_f])
        emb = _T((*freqs.shape[:-1], dh), "float32")
        e.call("cat", [freqs, freqs], [emb], {"dim": -1}, "_VariableFunctionsClass.cat")
        cos = e.pointwise("mul", [e.pointwise("cos", [emb])], {"arg1": 1.0})
        sin = e.pointwise("mul", [e.pointwise("sin", [emb])], {"arg1": 1.0})
        cos = e.to(cos, tdt, {"has_dtype": True, "dtype": tdt})
        sin = e.to(sin, tdt, {"has_dtype": True, "dtype": tdt})
    return cos, sin


def _attention(e: _Emitter, w: _Params, p: str, x: _T, cos: _T, sin: _T, mask: _T | None,
               length: _T, *, mode: str, batch: int, sq: int, ctx: int, h: int, kv: int,
               dh: int, d: int, groups: int, scale: float, qkv_bias: bool,
               o_bias: bool) -> _T:
    """``LlamaAttention.forward`` (SDPA), with the static cache's update in decode."""
    with e.module(p, "LlamaAttention"):
        q, k, v = _rotary_qkv(e, p, x, w, (h, kv, dh, d), qkv_bias, cos, sin,
                              lambda n: {"arg1": [batch, sq, -1, dh]})
        if mode == "decode":
            ar = e.new("arange", (sq,), "int64", {"arg0": sq}, "_VariableFunctionsClass.arange")
            at = e.pointwise("add", [ar, length])
            e.call("add_", [length], [length], {"arg1": 1}, "TensorBase.add_")
            caches = []
            for new in (k, v):
                cache = _T((batch, kv, ctx, dh), x.dtype)
                e.call("index_copy_", [cache, at, new], [cache], {"arg1": 2},
                       "TensorBase.index_copy_")
                caches.append(cache)
            k, v = caches
        gqa = groups > 1 and mask is None
        if groups > 1 and mask is not None and sq == 1:  # pack_gqa
            q = e.view("reshape", q, (batch, kv, groups, dh),
                       {"arg1": batch, "arg2": kv, "arg3": groups, "arg4": dh})
        causal = sq > 1 and mask is None
        o = _sdpa(e, q, k, v, mask, scale, causal, gqa)
        o = e.view("reshape", o, (batch, h, sq, dh),
                   {"arg1": o.shape[0], "arg2": -1, "arg3": sq, "arg4": dh})
        o = e.contiguous(e.transpose(o, 1, 2))
        o = e.contiguous(e.view("reshape", o, (batch, sq, h * dh),
                                {"arg1": batch, "arg2": sq, "arg3": -1}))
        return _linear(e, f"{p}.o_proj", o, w(d, h * dh), w(d) if o_bias else None)


def is_gpt2(spec: TransformerSpec) -> bool:
    """Whether ``spec`` has Hugging Face's ``GPT2LMHeadModel`` architecture (LayerNorm, fused
    q/k/v, biases, learned positions, GELU, tied LM head) that :func:`gpt2_program` emits."""
    return (spec.norm == "layernorm" and spec.ffn_act == "gelu" and spec.fused_qkv
            and spec.linear_bias and bool(spec.max_positions) and spec.tied_embeddings
            and spec.pre_norm and spec.causal and spec.lm_head and not spec.rotary
            and not spec.token_types and spec.kv == spec.heads)


def _conv1d(e: _Emitter, path: str, x: _T, n: int, w: _Params) -> _T:
    """Hugging Face's ``Conv1D``: ``addmm(bias, x.view(-1, k), weight).view(...)``."""
    with e.module(path, "Conv1D"):
        k = x.shape[-1]
        rows = math.prod(x.shape[:-1])
        flat = e.view("view", x, (rows, k), {"arg1": -1, "arg2": k})
        out = _T((rows, n), x.dtype)
        e.call("addmm", [w(n), flat, w(k, n)], [out], None, "_VariableFunctionsClass.addmm")
        shape = (*x.shape[:-1], n)
        return e.view("view", out, shape, {"arg1": list(shape)})


def _dropout(e: _Emitter, path: str, x: _T) -> None:
    """``nn.Dropout`` in eval: the input itself."""
    with e.module(path, "Dropout"):
        e.call("dropout", [x], [x], {"p": 0.1, "training": False, "inplace": False})


def _layer_norm(e: _Emitter, path: str, x: _T, w: _Params, eps: float) -> _T:
    with e.module(path, "LayerNorm"):
        d = x.shape[-1]
        out = _T(x.shape, x.dtype)
        e.call("layer_norm", [x, w(d), w(d)], [out],
               {"has_input": True, "normalized_shape": [d], "has_weight": True,
                "has_bias": True, "eps": eps})
    return out


def _gelu_new(e: _Emitter, x: _T) -> _T:
    """``NewGELUActivation``: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, 8 calls."""
    half = e.pointwise("mul", [x], {"arg1": 0.5})
    cube = e.pointwise("pow", [x], {"arg1": 3.0}, qual="_VariableFunctionsClass.pow")
    cube = e.pointwise("mul", [cube], {"arg1": 0.044715})
    inner = e.pointwise("add", [x, cube])
    inner = e.pointwise("mul", [inner], {"arg1": math.sqrt(2.0 / math.pi)})
    th = e.pointwise("tanh", [inner], qual="_VariableFunctionsClass.tanh")
    th = e.pointwise("add", [th], {"arg1": 1.0})
    return e.pointwise("mul", [half, th])


def gpt2_program(spec: TransformerSpec, *, batch: int = 1, seq: int = 512,
                 dtype: str = "bf16", eps: float = 1e-5, flavour: str = "hf_style",
                 mode: str = "prefill", context: int | None = None) -> Program:
    """The program capturing Hugging Face's ``GPT2LMHeadModel`` of ``spec`` records for a
    prefill of ``batch x seq`` tokens (``model(ids, use_cache=False, logits_to_keep=1)``,
    SDPA attention): token and position embeddings, per block LayerNorm, ``Conv1D`` q/k/v
    (``addmm``) split into three views, causal SDPA (its output a contiguous copy after the
    transpose: the query, a slice of the fused projection, is no transposed buffer), the
    output ``Conv1D``, the tanh GELU as eight pointwise calls, dropouts (views in eval);
    the final LayerNorm, the last position, the tied LM head."""
    if not is_gpt2(spec):
        raise ValueError(f"{spec.name} is not a GPT-2 decoder")
    if dtype not in TORCH_DTYPE:
        raise ValueError(f"dtype={dtype!r}: expected one of {', '.join(TORCH_DTYPE)}")
    if flavour not in FLAVOURS:
        raise ValueError(f"flavour={flavour!r}: expected one of {', '.join(FLAVOURS)}")
    if mode not in ("prefill", "decode"):
        raise ValueError(f"mode={mode!r}: expected prefill or decode")
    if flavour == "hf_style":
        return _hf_style_gpt2(spec, mode=mode, batch=batch, seq=seq,
                              ctx=(context or seq) if mode == "decode" else seq, dtype=dtype,
                              eps=eps)
    if mode != "prefill":
        raise ValueError("gpt2_program(flavour='transformers5') emits a prefill only")
    tdt = TORCH_DTYPE[dtype]
    e = _Emitter()
    w = _Params(tdt)
    d, h, dh, f = spec.hidden, spec.heads, spec.dh, spec.ffn
    wte = w(spec.vocab, d)
    emb_args = {"padding_idx": None, "max_norm": None, "norm_type": 2.0,
                "scale_grad_by_freq": False, "sparse": False}
    with e.module("", "GPT2LMHeadModel"):
        with e.module("transformer", "GPT2Model"):
            ids = e.view("view", _T((batch, seq), "int64"), (batch, seq),
                         {"arg1": -1, "arg2": seq})
            with e.module("transformer.wte", "Embedding"):
                tok = _T((batch, seq, d), tdt)
                e.call("embedding", [ids, wte], [tok], emb_args)
            ar = e.new("arange", (seq,), "int64", {"arg0": seq},
                       "_VariableFunctionsClass.arange")
            pos = e.unsqueeze(e.pointwise("add", [ar], {"arg1": 0}), 0)
            with e.module("transformer.wpe", "Embedding"):
                pe = _T((1, seq, d), tdt)
                e.call("embedding", [pos, w(spec.max_positions, d)], [pe], emb_args)
            e.call("to", [pe], [pe], {"has_dtype": True}, "TensorBase.to")
            x = e.pointwise("add", [tok, pe])
            _packed_check(e, pos, batch, seq)
            _dropout(e, "transformer.drop", x)
            for i in range(spec.layers):
                p = f"transformer.h.{i}"
                with e.module(p, "GPT2Block"):
                    hn = _layer_norm(e, f"{p}.ln_1", x, w, eps)
                    with e.module(f"{p}.attn", "GPT2Attention"):
                        qkv = _conv1d(e, f"{p}.attn.c_attn", hn, 3 * h * dh, w)
                        parts = [_T((batch, seq, h * dh), tdt, qkv.stride, is_view=True)
                                 for _ in range(3)]
                        e.call("split", [qkv], parts, {"arg1": h * dh, "dim": 2},
                               "Tensor.split")
                        q, k, v = parts
                        heads = {}
                        for name, t in (("k", k), ("v", v), ("q", q)):
                            y = e.view("view", t, (batch, seq, h, dh),
                                       {"arg1": [batch, seq, -1, dh]})
                            heads[name] = e.transpose(y, 1, 2)
                        o = _sdpa(e, heads["q"], heads["k"], heads["v"], None, dh ** -0.5,
                                  seq > 1, False)
                        o = e.view("reshape", o, (batch, h, seq, dh),
                                   {"arg1": batch, "arg2": -1, "arg3": seq, "arg4": dh})
                        o = e.contiguous(e.transpose(o, 1, 2))
                        o = e.contiguous(e.view("reshape", o, (batch, seq, h * dh),
                                                {"arg1": batch, "arg2": seq, "arg3": -1}))
                        a = _conv1d(e, f"{p}.attn.c_proj", o, d, w)
                        _dropout(e, f"{p}.attn.resid_dropout", a)
                    x = e.pointwise("add", [a, x])
                    hn = _layer_norm(e, f"{p}.ln_2", x, w, eps)
                    with e.module(f"{p}.mlp", "GPT2MLP"):
                        y = _conv1d(e, f"{p}.mlp.c_fc", hn, f, w)
                        with e.module(f"{p}.mlp.act", "NewGELUActivation"):
                            y = _gelu_new(e, y)
                        y = _conv1d(e, f"{p}.mlp.c_proj", y, d, w)
                        _dropout(e, f"{p}.mlp.dropout", y)
                    x = e.pointwise("add", [x, y])
            x = _layer_norm(e, "transformer.ln_f", x, w, eps)
            x = e.view("view", x, x.shape, {"arg1": [-1, seq, d]})
        last = e.slice(x, 1, 1)
        _linear(e, "lm_head", last, wte, None)
    return Program(name=f"{spec.name}_prefill", calls=tuple(e.calls), framework=FRAMEWORK,
                   source=f"gpt2_program({spec.name}, batch={batch}, seq={seq}, "
                   f"dtype={dtype})")


def _hf_style_gpt2(spec: TransformerSpec, *, mode: str, batch: int, seq: int, ctx: int,
                   dtype: str, eps: float) -> Program:
    """``scripts/measure/e2e.py``'s ``GPT2`` as its measurement drives it (prefill
    ``model(ids, pos_ids)``, decode ``model(ids, pos_ids, caches, context - 1)``): token and
    position embeddings added, per block ``nn.LayerNorm``, the fused q/k/v ``nn.Linear``
    split into three views, causal SDPA, ``F.gelu(approximate="tanh")`` (one call), the
    last position before the final LayerNorm, the tied LM head as ``F.linear``."""
    tdt = TORCH_DTYPE[dtype]
    e = _Emitter()
    w = _Params(tdt)
    d, h, dh, f = spec.hidden, spec.heads, spec.dh, spec.ffn
    sq = 1 if mode == "decode" else seq
    wte = w(spec.vocab, d)
    emb_args = {"padding_idx": None, "max_norm": None, "norm_type": 2.0,
                "scale_grad_by_freq": False, "sparse": False}
    with e.module("", "GPT2"):
        ids = _T((batch, sq), "int64")
        if mode == "decode":
            pos = _T((batch, 1), "int64")
        else:
            pos = _T((batch, sq), "int64", (0 if batch > 1 else sq, 1), is_view=True)
        with e.module("wte", "Embedding"):
            tok = _T((batch, sq, d), tdt)
            e.call("embedding", [ids, wte], [tok], emb_args)
        with e.module("wpe", "Embedding"):
            pe = _T((batch, sq, d), tdt)
            e.call("embedding", [pos, w(spec.max_positions, d)], [pe], emb_args)
        x = e.pointwise("add", [tok, pe])
        for i in range(spec.layers):
            p = f"h.{i}"
            with e.module(p, "GPT2Block"):
                hn = _layer_norm(e, f"{p}.ln_1", x, w, eps)
                qkv = _linear(e, f"{p}.c_attn", hn, w(3 * d, d), w(3 * d))
                parts = [_T((batch, sq, d), tdt, qkv.stride, is_view=True) for _ in range(3)]
                e.call("split", [qkv], parts, {"arg1": d, "dim": 2}, "Tensor.split")
                heads = []
                for t in parts:
                    y = e.view("view", t, (batch, sq, h, dh),
                               {"arg1": batch, "arg2": sq, "arg3": h, "arg4": dh})
                    heads.append(e.transpose(y, 1, 2))
                q, k, v = heads
                if mode == "decode":  # kc[:, :, pos:pos + 1] = k; vc[...] = v
                    k, v = _cache_writes(e, (k, v), (batch, h, ctx, dh), tdt)
                o = _sdpa_call(e, q, k, v, None,
                               {"has_query": True, "has_key": True, "has_value": True,
                                "is_causal": mode == "prefill" and sq > 1})
                o = e.view("reshape", e.transpose(o, 1, 2), (batch, sq, d),
                           {"arg1": batch, "arg2": sq, "arg3": d})
                a = _linear(e, f"{p}.c_proj", o, w(d, d), w(d))
                x = e.pointwise("add", [x, a])
                hn = _layer_norm(e, f"{p}.ln_2", x, w, eps)
                y = _linear(e, f"{p}.c_fc", hn, w(f, d), w(f))
                g = _T(y.shape, tdt)
                e.call("gelu", [y], [g], {"has_input": True, "approximate": "tanh"})
                y = _linear(e, f"{p}.mlp_proj", g, w(d, f), w(d))
                x = e.pointwise("add", [x, y])
        last = e.slice(x, 1, 1)
        x = _layer_norm(e, "ln_f", last, w, eps)
        e.call("linear", [x, wte], [_T((batch, 1, spec.vocab), tdt)], None)
    tokens = "context=" + str(ctx) if mode == "decode" else "seq=" + str(seq)
    return Program(name=f"{spec.name}_{mode}", calls=tuple(e.calls),
                   framework=HF_STYLE_FRAMEWORK,
                   source=f"gpt2_program({spec.name}, mode={mode}, batch={batch}, {tokens}, "
                   f"dtype={dtype}, flavour=hf_style)")


def graph_program(graph: Any, flavour: str = "hf_style") -> Program | None:
    """The program of a zoo graph's model in ``flavour`` (:data:`FLAVOURS`;
    :func:`llama_program` with the graph's mode, batch, tokens and dtype; :func:`gpt2_program`
    for a GPT-2 prefill), or None when the graph is no such step of a decoder built by
    :func:`~accelsim.workload.models.transformer.build_transformer` that the model code runs
    as one step (a pass's output, a tensor-parallel rank, a serving batch, a prefill chunk
    after cached positions, another dtype)."""
    if flavour not in FLAVOURS:
        raise ValueError(f"flavour={flavour!r}: expected one of {', '.join(FLAVOURS)}")
    spec = getattr(graph, "spec", None)
    if not isinstance(spec, TransformerSpec):
        return None
    p = graph.params
    mode, batch, dtype = p.get("mode"), p.get("batch"), p.get("dtype")
    if dtype not in TORCH_DTYPE or not isinstance(batch, int):
        return None
    if is_gpt2(spec) and mode == "prefill" and p.get("context") == p.get("seq"):
        return gpt2_program(spec, batch=batch, seq=p["seq"], dtype=dtype, flavour=flavour)
    if is_gpt2(spec) and mode == "decode" and p.get("seq") == 1 and flavour == "hf_style":
        return gpt2_program(spec, mode=mode, batch=batch, context=p["context"], dtype=dtype,
                            flavour=flavour)
    if not is_llama_family(spec):
        return None
    if mode == "prefill" and p.get("context") == p.get("seq"):
        return llama_program(spec, mode=mode, batch=batch, seq=p["seq"], dtype=dtype,
                             flavour=flavour)
    if mode == "decode" and p.get("seq") == 1:
        return llama_program(spec, mode=mode, batch=batch, context=p["context"], dtype=dtype,
                             flavour=flavour)
    return None


__all__ = ["FLAVOURS", "FRAMEWORK", "HF_STYLE_FRAMEWORK", "TORCH_DTYPE", "gpt2_program",
           "graph_program", "is_gpt2", "is_llama_family", "llama_program"]
