"""Neural-network operators beyond GEMM/conv: attention, elementwise, normalisation, softmax,
embedding lookups. Each states its MACs/FLOPs and its tensor sizes in elements.

Op-counting conventions (documented once, used everywhere):

* 1 MAC = 2 FLOP.
* Elementwise: ``flops_per_element`` FLOP per output element (add/mul/relu = 1, gelu = 8
  (tanh form; ``gelu_erf``, PyTorch's default ``F.gelu``, counted the same), silu = 4,
  rope = 3: ``x cos + rotate_half(x) sin``; the cos/sin tables are small and shared by
  every head, so rope counts one input).
* LayerNorm: 8 FLOP per element (mean, variance, normalise, scale, shift); RMSNorm: 5.
* Softmax: 5 FLOP per element (max, subtract, exp, sum, divide).
* Attention: QK^T and AV are 2 GEMMs of ``seq_q x seq_kv x head_dim`` per head (halved
  when causal), plus softmax on the score matrix.

Imports: units, workload.ops (types only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelsim.units import FLOP_PER_MAC

if TYPE_CHECKING:
    from accelsim.workload.ops import Workload

ELEMENTWISE_FLOPS = {"add": 1, "mul": 1, "relu": 1, "gelu": 8, "gelu_erf": 8, "silu": 4,
                     "copy": 0, "rope": 3, "scale": 1, "bias": 1}
ELEMENTWISE_INPUTS = {"add": 2, "mul": 2, "relu": 1, "gelu": 1, "gelu_erf": 1, "silu": 1,
                      "copy": 1, "rope": 1, "scale": 1, "bias": 1}


def _positive(obj: object, *fields: str) -> None:
    for f in fields:
        v = getattr(obj, f)
        if v is not None and v <= 0:
            raise ValueError(f"{f} must be > 0")


@dataclass(frozen=True, slots=True, kw_only=True)
class Elementwise:
    """A pointwise op over a ``rows x cols`` tensor: ``fn`` in :data:`ELEMENTWISE_FLOPS`."""

    name: str
    rows: int
    cols: int
    fn: str = "add"
    dtype: str | None = None

    kind = "elementwise"

    def __post_init__(self) -> None:
        _positive(self, "rows", "cols")
        if self.fn not in ELEMENTWISE_FLOPS:
            raise ValueError(f"fn must be one of {', '.join(ELEMENTWISE_FLOPS)}")

    @property
    def elements(self) -> int:
        """Output elements."""
        return self.rows * self.cols

    @property
    def macs(self) -> int:
        """No MACs (pointwise)."""
        return 0

    @property
    def flops(self) -> int:
        """FLOP: elements x flops_per_element."""
        return self.elements * ELEMENTWISE_FLOPS[self.fn]

    def tensor_elements(self) -> dict[str, int]:
        """Elements read (all inputs) and written."""
        return {"input": ELEMENTWISE_INPUTS[self.fn] * self.elements, "output": self.elements}


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerNorm:
    """Layer normalisation (or RMSNorm) over the last dim of a ``rows x cols`` tensor."""

    name: str
    rows: int
    cols: int
    rms: bool = False
    dtype: str | None = None

    kind = "layernorm"

    def __post_init__(self) -> None:
        _positive(self, "rows", "cols")

    @property
    def macs(self) -> int:
        """No MACs."""
        return 0

    @property
    def flops(self) -> int:
        """8 FLOP per element (5 for RMSNorm)."""
        return self.rows * self.cols * (5 if self.rms else 8)

    def tensor_elements(self) -> dict[str, int]:
        """Input, gamma/beta weights, output."""
        return {"input": self.rows * self.cols, "weight": (1 if self.rms else 2) * self.cols,
                "output": self.rows * self.cols}


@dataclass(frozen=True, slots=True, kw_only=True)
class Softmax:
    """Softmax over the last dim of a ``rows x cols`` tensor."""

    name: str
    rows: int
    cols: int
    dtype: str | None = None

    kind = "softmax"

    def __post_init__(self) -> None:
        _positive(self, "rows", "cols")

    @property
    def macs(self) -> int:
        """No MACs."""
        return 0

    @property
    def flops(self) -> int:
        """5 FLOP per element."""
        return 5 * self.rows * self.cols

    def tensor_elements(self) -> dict[str, int]:
        """Input and output."""
        return {"input": self.rows * self.cols, "output": self.rows * self.cols}


@dataclass(frozen=True, slots=True, kw_only=True)
class Attention:
    """Scaled dot-product attention, ``softmax(Q K^T / sqrt(d)) V``, per (batch, head).

    ``kv_heads`` < ``heads`` is grouped-query attention; ``seq_kv`` > ``seq_q`` is decode
    against a KV cache. ``causal`` masks the upper triangle (half the score work when
    ``seq_q == seq_kv``).
    """

    name: str
    batch: int
    heads: int
    seq_q: int
    seq_kv: int
    head_dim: int
    kv_heads: int | None = None
    causal: bool = False
    dtype: str | None = None

    kind = "attention"

    def __post_init__(self) -> None:
        _positive(self, "batch", "heads", "seq_q", "seq_kv", "head_dim", "kv_heads")
        if self.kv_heads is not None and self.heads % self.kv_heads:
            raise ValueError(f"kv_heads={self.kv_heads} must divide heads={self.heads}")

    @property
    def n_kv_heads(self) -> int:
        """Heads of K and V (GQA)."""
        return self.kv_heads or self.heads

    @property
    def score_fraction(self) -> float:
        """Fraction of the seq_q x seq_kv score matrix computed (causal masking)."""
        if not self.causal:
            return 1.0
        # query i (offset so the last query sees all keys) attends to seq_kv - seq_q + i + 1 keys
        q, kv = self.seq_q, self.seq_kv
        visible = q * (kv - q) + q * (q + 1) / 2
        return visible / (q * kv)

    @property
    def macs(self) -> int:
        """MACs of QK^T and AV."""
        full = 2 * self.batch * self.heads * self.seq_q * self.seq_kv * self.head_dim
        return int(round(full * self.score_fraction))

    @property
    def flops(self) -> int:
        """2 FLOP per MAC plus 5 FLOP per softmax element."""
        scores = self.batch * self.heads * self.seq_q * self.seq_kv * self.score_fraction
        return FLOP_PER_MAC * self.macs + int(round(5 * scores))

    def tensor_elements(self) -> dict[str, int]:
        """Q, K, V (as ``input``/``kv``) and the output; the score matrix is not materialised."""
        q = self.batch * self.heads * self.seq_q * self.head_dim
        kv = 2 * self.batch * self.n_kv_heads * self.seq_kv * self.head_dim
        return {"input": q, "kv": kv, "output": q}


@dataclass(frozen=True, slots=True, kw_only=True)
class Embedding:
    """Embedding-table lookup: ``tokens`` rows of ``dim`` gathered from ``table_rows``."""

    name: str
    tokens: int
    dim: int
    table_rows: int
    dtype: str | None = None

    kind = "embedding"

    def __post_init__(self) -> None:
        _positive(self, "tokens", "dim", "table_rows")

    @property
    def macs(self) -> int:
        """No MACs."""
        return 0

    @property
    def flops(self) -> int:
        """No arithmetic (a gather)."""
        return 0

    def tensor_elements(self) -> dict[str, int]:
        """Rows gathered (read) and written; the table itself is the ``weight``."""
        return {"input": self.tokens * self.dim, "weight": self.table_rows * self.dim,
                "output": self.tokens * self.dim}


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchNorm2d:
    """Inference BatchNorm over an ``n x c x h x w`` tensor: per channel
    ``y = (x - mean) / sqrt(var + eps) * gamma + beta`` with the running statistics.

    2 FLOP per element (one scale, one shift, once ``1/sqrt`` is folded per channel); the
    weights are the 4 per-channel vectors (mean, var, gamma, beta)."""

    name: str
    n: int
    c: int
    h: int
    w: int
    dtype: str | None = None

    kind = "batchnorm"

    def __post_init__(self) -> None:
        _positive(self, "n", "c", "h", "w")

    @property
    def elements(self) -> int:
        """Elements of the input (= output)."""
        return self.n * self.c * self.h * self.w

    @property
    def macs(self) -> int:
        """No MACs counted (a per-channel affine map, 2 FLOP per element)."""
        return 0

    @property
    def flops(self) -> int:
        """2 FLOP per element."""
        return 2 * self.elements

    def tensor_elements(self) -> dict[str, int]:
        """Input, the 4 per-channel vectors, output."""
        return {"input": self.elements, "weight": 4 * self.c, "output": self.elements}


POOL_MODES = ("max", "avg", "global_avg")
"""``max``/``avg``: an ``r x r`` window at ``stride`` with ``pad``; ``global_avg``: the mean
over all of ``h x w`` (``adaptive_avg_pool2d(x, 1)``; ``r``, ``stride``, ``pad`` unused)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool2d:
    """2-D pooling of an ``n x c x h x w`` tensor, per channel (see :data:`POOL_MODES`).

    FLOP: one compare or add per window element per output (``global_avg``: ``h x w`` per
    output, plus one multiply)."""

    name: str
    n: int
    c: int
    h: int
    w: int
    mode: str = "max"
    r: int = 3
    stride: int = 2
    pad: int = 1
    dtype: str | None = None

    kind = "pool"

    def __post_init__(self) -> None:
        _positive(self, "n", "c", "h", "w", "r", "stride")
        if self.mode not in POOL_MODES:
            raise ValueError(f"mode must be one of {', '.join(POOL_MODES)}")
        if self.pad < 0:
            raise ValueError("pad must be >= 0")
        if self.mode != "global_avg" and (self.out_h <= 0 or self.out_w <= 0):
            raise ValueError(f"window {self.r}x{self.r} larger than padded input "
                             f"{self.h + 2 * self.pad}x{self.w + 2 * self.pad}")

    @property
    def out_h(self) -> int:
        """Output height (1 for ``global_avg``)."""
        if self.mode == "global_avg":
            return 1
        return (self.h + 2 * self.pad - self.r) // self.stride + 1

    @property
    def out_w(self) -> int:
        """Output width (1 for ``global_avg``)."""
        if self.mode == "global_avg":
            return 1
        return (self.w + 2 * self.pad - self.r) // self.stride + 1

    @property
    def macs(self) -> int:
        """No MACs."""
        return 0

    @property
    def flops(self) -> int:
        """One compare/add per window element per output (+1 multiply for averages)."""
        outputs = self.n * self.c * self.out_h * self.out_w
        window = self.h * self.w if self.mode == "global_avg" else self.r * self.r
        return outputs * (window + (0 if self.mode == "max" else 1))

    def tensor_elements(self) -> dict[str, int]:
        """Input and output elements."""
        return {"input": self.n * self.c * self.h * self.w,
                "output": self.n * self.c * self.out_h * self.out_w}


def tokens_per_step(workload: Workload) -> int | None:
    """Tokens a Transformer step consumes: the rows of its token embedding (batch x sequence
    length in prefill, batch in decode), else batch x query length of its first attention.
    ``None`` for models without attention (CNNs, DLRM)."""
    if not any(isinstance(op, (Attention, Softmax)) for op in workload.ops):
        return None
    for op in workload.ops:
        if isinstance(op, Embedding):
            return op.tokens
    for op in workload.ops:
        if isinstance(op, Attention):
            return op.batch * op.seq_q
    return None
