"""Plain PyTorch programs, written as users write them (not Hugging Face's model code).

Each factory builds a model on ``device`` (``"meta"`` to capture without memory or weights)
and returns ``(callable, args)``: what one step runs. Capture one with

    accelsim capture workloads/programs/plain.py:decoder mode=decode batch=8 context=4096 \
        -o dec.json
    accelsim run h200 dec.json --exec graph

``scripts/measure/plain_programs.py`` times the same factories on a GPU.

* ``decoder``: a Llama-3-8B-shaped decoder written with ``F.rms_norm``,
  ``F.scaled_dot_product_attention`` (``enable_gqa``), a slice-assigned static KV cache, SwiGLU
  and no rotary embedding;
* ``gpt``: a GPT-2-medium-shaped decoder with ``F.layer_norm``, one fused QKV projection with
  bias, exact GELU, learned positions and multi-head attention;
* ``encoder``: a BERT-large-shaped encoder written with ``@`` on parameter matrices, manual
  attention (``q @ k.transpose``, ``softmax``, ``@ v``) and ``F.layer_norm`` (post-norm);
* ``cnn``: a ResNet-18-shaped CNN of ``nn.Conv2d``/``nn.BatchNorm2d``/``F.relu`` in
  channels_last, max and average pooling and a linear head;
* ``torch_encoder``: a BERT-base-shaped encoder built from PyTorch's own
  ``nn.TransformerEncoder(nn.TransformerEncoderLayer(...))``; in inference with
  ``batch_first=True`` PyTorch runs each layer as one fused call
  (``torch._transformer_encoder_layer_fwd``), with the default ``batch_first=False`` its Python
  path (``F.multi_head_attention_forward``);
* ``torch_vit``: a ViT-B/16-shaped classifier: a patch convolution, a class token, learned
  positions, a pre-norm ``nn.TransformerEncoder`` (GELU) and a linear head.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def _dt(dtype):
    return DTYPES[dtype] if isinstance(dtype, str) else dtype


class DecoderLayer(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.dh = heads, kv_heads, d // heads
        self.norm1 = nn.Parameter(torch.ones(d))
        self.norm2 = nn.Parameter(torch.ones(d))
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv_heads * self.dh, bias=False)
        self.v = nn.Linear(d, kv_heads * self.dh, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, ffn, bias=False)
        self.up = nn.Linear(d, ffn, bias=False)
        self.down = nn.Linear(ffn, d, bias=False)

    def forward(self, x, cache_k, cache_v, pos):
        b, s, d = x.shape
        h = F.rms_norm(x, (d,), self.norm1, 1e-5)
        q = self.q(h).view(b, s, self.heads, self.dh).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, self.dh).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, self.dh).transpose(1, 2)
        cache_k[:, :, pos:pos + s] = k
        cache_v[:, :, pos:pos + s] = v
        a = F.scaled_dot_product_attention(q, cache_k[:, :, :pos + s], cache_v[:, :, :pos + s],
                                           is_causal=s > 1, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
        h = F.rms_norm(x, (d,), self.norm2, 1e-5)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(self, layers=32, d=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(DecoderLayer(d, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(d))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids, caches, pos):
        x = self.embed(ids)
        for layer, (ck, cv) in zip(self.layers, caches):
            x = layer(x, ck, cv, pos)
        x = F.rms_norm(x[:, -1:], (x.shape[-1],), self.norm, 1e-5)
        return self.head(x)


def decoder(mode="decode", batch=1, context=1024, seq=512, layers=32, device="meta",
            dtype="bf16", model=None):
    """A Llama-3-8B-shaped plain decoder: one decode step at ``context`` (the new token at
    ``context - 1``) or a prefill of ``seq`` tokens (``model``: reuse a built one)."""
    dt = _dt(dtype)
    with torch.device(device):
        model = model or Decoder(layers=layers).to(dt).eval()
        n = context if mode == "decode" else seq
        caches = [(torch.zeros(batch, 8, n, 128, dtype=dt), torch.zeros(batch, 8, n, 128, dtype=dt))
                  for _ in range(layers)]
        s = 1 if mode == "decode" else seq
        ids = torch.zeros(batch, s, dtype=torch.long)
    return model, (ids, caches, n - 1 if mode == "decode" else 0)


class GptBlock(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, x, cache_k, cache_v, pos):
        b, s, d = x.shape
        h = F.layer_norm(x, (d,), self.ln1.weight, self.ln1.bias)
        q, k, v = self.qkv(h).split(d, dim=-1)
        q = q.view(b, s, self.heads, -1).transpose(1, 2)
        k = k.view(b, s, self.heads, -1).transpose(1, 2)
        v = v.view(b, s, self.heads, -1).transpose(1, 2)
        cache_k[:, :, pos:pos + s] = k
        cache_v[:, :, pos:pos + s] = v
        a = F.scaled_dot_product_attention(q, cache_k[:, :, :pos + s], cache_v[:, :, :pos + s],
                                           is_causal=s > 1)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        h = F.layer_norm(x, (d,), self.ln2.weight, self.ln2.bias)
        return x + self.fc2(F.gelu(self.fc1(h)))


class Gpt(nn.Module):
    def __init__(self, layers=24, d=1024, heads=16, ffn=4096, vocab=50257, positions=2048):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(positions, d)
        self.blocks = nn.ModuleList(GptBlock(d, heads, ffn) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids, positions, caches, pos):
        x = self.tok(ids) + self.pos(positions)
        for block, (ck, cv) in zip(self.blocks, caches):
            x = block(x, ck, cv, pos)
        return self.head(self.ln(x[:, -1:]))


def gpt(mode="decode", batch=1, context=512, seq=512, layers=24, device="meta", dtype="bf16",
        model=None):
    """A GPT-2-medium-shaped plain decoder (decode step at ``context`` or prefill of ``seq``)."""
    dt = _dt(dtype)
    with torch.device(device):
        model = model or Gpt(layers=layers).to(dt).eval()
        n = context if mode == "decode" else seq
        caches = [(torch.zeros(batch, 16, n, 64, dtype=dt), torch.zeros(batch, 16, n, 64, dtype=dt))
                  for _ in range(layers)]
        s = 1 if mode == "decode" else seq
        ids = torch.zeros(batch, s, dtype=torch.long)
        positions = torch.arange(n - s, n)[None].expand(batch, s)
    return model, (ids, positions, caches, n - 1 if mode == "decode" else 0)


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv, self.wo = (nn.Parameter(torch.empty(d, d)) for _ in range(4))
        self.w1, self.w2 = nn.Parameter(torch.empty(d, ffn)), nn.Parameter(torch.empty(ffn, d))
        self.g1, self.b1 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))
        self.g2, self.b2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))

    def forward(self, x):
        b, s, d = x.shape
        q = (x @ self.wq).view(b, s, self.heads, -1).transpose(1, 2)
        k = (x @ self.wk).view(b, s, self.heads, -1).transpose(1, 2)
        v = (x @ self.wv).view(b, s, self.heads, -1).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), dim=-1)
        a = (att @ v).transpose(1, 2).reshape(b, s, d)
        x = F.layer_norm(x + a @ self.wo, (d,), self.g1, self.b1)
        return F.layer_norm(x + F.gelu(x @ self.w1) @ self.w2, (d,), self.g2, self.b2)


class Encoder(nn.Module):
    def __init__(self, layers=24, d=1024, heads=16, ffn=4096):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d, heads, ffn) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def encoder(batch=1, seq=128, layers=24, device="meta", dtype="bf16", model=None):
    """A BERT-large-shaped plain encoder over ``batch x seq`` embedded tokens."""
    dt = _dt(dtype)
    with torch.device(device):
        model = model or Encoder(layers=layers).to(dt).eval()
        x = torch.zeros(batch, seq, 1024, dtype=dt)
    return model, (x,)


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.n1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.n2 = nn.BatchNorm2d(cout)
        self.skip = None
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.n1(self.c1(x)))
        y = self.n2(self.c2(y))
        return F.relu(y + (x if self.skip is None else self.skip(x)))


class Cnn(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn = nn.BatchNorm2d(64)
        widths = [(64, 64, 1), (64, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2),
                  (256, 256, 1), (256, 512, 2), (512, 512, 1)]
        self.blocks = nn.Sequential(*(Basic(i, o, s) for i, o, s in widths))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.stem(x))), 3, 2, 1)
        x = self.blocks(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def cnn(batch=1, size=224, device="meta", dtype="bf16", model=None, channels_last=True):
    """A ResNet-18-shaped plain CNN (eval) over ``batch`` images, channels-last (as
    ``torch.compile`` and the zoo's CNNs run) or, ``channels_last=False``, in PyTorch's default
    NCHW layout."""
    if not isinstance(channels_last, bool):
        raise ValueError(f"channels_last={channels_last!r}: expected true or false")
    dt = _dt(dtype)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    with torch.device(device):
        model = model or Cnn().to(dt).eval().to(memory_format=fmt)
        x = torch.zeros(batch, 3, size, size, dtype=dt).to(memory_format=fmt)
    return model, (x,)


def torch_encoder(batch=1, seq=128, layers=12, d=768, heads=12, ffn=3072, batch_first=True,
                  activation="relu", norm_first=False, device="meta", dtype="bf16", model=None):
    """A BERT-base-shaped ``nn.TransformerEncoder`` over ``batch x seq`` embedded tokens
    (``seq x batch`` when ``batch_first`` is false)."""
    for key, value in (("batch_first", batch_first), ("norm_first", norm_first)):
        if not isinstance(value, bool):
            raise ValueError(f"{key}={value!r}: expected true or false")
    dt = _dt(dtype)
    with torch.device(device):
        layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.1, activation=activation,
                                           batch_first=batch_first, norm_first=norm_first)
        model = model or nn.TransformerEncoder(layer, layers, enable_nested_tensor=False
                                               ).to(dt).eval()
        shape = (batch, seq, d) if batch_first else (seq, batch, d)
        x = torch.zeros(*shape, dtype=dt)
    return model, (x,)


class Vit(nn.Module):
    def __init__(self, size=224, patch=16, layers=12, d=768, heads=12, ffn=3072, classes=1000):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, patch)
        tokens = (size // patch) ** 2 + 1
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.zeros(1, tokens, d))
        layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        x = self.encoder(x)
        return self.head(self.norm(x[:, 0]))


def torch_vit(batch=1, size=224, device="meta", dtype="bf16", model=None):
    """A ViT-B/16-shaped classifier over ``batch`` NCHW images (pre-norm, GELU)."""
    dt = _dt(dtype)
    with torch.device(device):
        model = model or Vit(size=size).to(dt).eval()
        x = torch.zeros(batch, 3, size, size, dtype=dt)
    return model, (x,)
