"""Hardware-agnostic operators. Each knows its shape, its MACs/FLOPs and its tensor sizes.

Counting conventions (see :mod:`accelsim.units`): 1 MAC = 2 FLOP; tensor sizes are in
elements (multiply by the bytes per element of the precision you run at).

Imports: units.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.units import FLOP_PER_MAC


@dataclass(frozen=True, slots=True)
class GemmShape:
    """``out[m x n] = in[m x k] @ w[k x n]``, done ``repeat`` times (groups, batch)."""

    m: int
    n: int
    k: int
    repeat: int = 1

    @property
    def macs(self) -> int:
        """Multiply-accumulates over all repeats."""
        return self.m * self.n * self.k * self.repeat


@dataclass(frozen=True, slots=True, kw_only=True)
class Gemm:
    """A (batched) matrix multiply ``C[b, m, n] = A[b, m, k] @ B[b, k, n]``.

    ``shared_weights``: the ``k x n`` operand is the same for every batch entry (a linear
    layer over a batch of tokens); otherwise each batch entry has its own (attention's QK^T).
    """

    name: str
    m: int
    n: int
    k: int
    batch: int = 1
    shared_weights: bool = True
    dtype: str | None = None
    bias: bool = False
    """A bias vector is added to every output row (``nn.Linear``): fused into the GEMM's
    epilogue by the GPU libraries."""

    kind = "gemm"

    def __post_init__(self) -> None:
        for field in ("m", "n", "k", "batch"):
            if getattr(self, field) <= 0:
                raise ValueError(f"{field} must be > 0")

    def lower(self) -> GemmShape:
        """The GEMM that an array runs (a shared-weight batch folds into M)."""
        if self.shared_weights:
            return GemmShape(self.m * self.batch, self.n, self.k, 1)
        return GemmShape(self.m, self.n, self.k, self.batch)

    @property
    def macs(self) -> int:
        """Multiply-accumulates."""
        return self.m * self.n * self.k * self.batch

    @property
    def flops(self) -> int:
        """Operations, 1 MAC = 2 FLOP."""
        return FLOP_PER_MAC * self.macs

    def tensor_elements(self) -> dict[str, int]:
        """Elements of each operand: ``input``, ``weight``, ``output``."""
        wb = 1 if self.shared_weights else self.batch
        return {"input": self.batch * self.m * self.k, "weight": wb * self.k * self.n,
                "output": self.batch * self.m * self.n}


def experts_touched(tokens: int, experts: int, top_k: int) -> float:
    """Expected distinct experts ``tokens`` tokens route to, each choosing ``top_k`` of
    ``experts`` uniformly at random: ``E (1 - (1 - k/E)^T)`` (``k`` at ``T = 1``, -> ``E`` as
    ``T`` grows). Every touched expert's weights are read once by the grouped GEMM."""
    if tokens <= 0 or experts <= 0 or not 0 < top_k <= experts:
        raise ValueError("tokens, experts > 0 and 0 < top_k <= experts")
    return experts * (1.0 - (1.0 - top_k / experts) ** tokens)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupedGemm(Gemm):
    """The routed experts' GEMM of a mixture-of-experts layer as one grouped kernel (vLLM's
    ``fused_moe``, Megatron's grouped GEMM): ``batch`` experts touched, each multiplying its
    tokens (``m`` rows, the largest share) by its own ``k x n`` weights; ``rows`` = the
    token-expert assignments computed (``tokens x top_k`` under uniform routing).

    The kernel's shape is ``batch x m x n x k`` (the GPU runs every expert's tile rows), but
    MACs, FLOP and activation elements count the ``rows`` assignments only (1 MAC = 2 FLOP);
    weights are every touched expert's. Build one with :meth:`routed`."""

    rows: int
    experts: int = 1
    """Routed experts held by the device running the kernel (its expert-parallel share)."""
    top_k: int = 1
    routed_tokens: int = 1
    """Tokens routed over all expert-parallel ranks (what decides how many experts are hit)."""
    total_experts: int = 1
    """Routed experts of the model (all ranks)."""

    def __post_init__(self) -> None:
        Gemm.__post_init__(self)
        if self.shared_weights:
            raise ValueError("a grouped GEMM has one weight matrix per expert")
        if not 0 < self.rows <= self.m * self.batch:
            raise ValueError("rows must be within 1..m x batch")

    @classmethod
    def routed(cls, *, name: str, rows: int, n: int, k: int, experts: int, top_k: int,
               routed_tokens: int, total_experts: int | None = None,
               dtype: str | None = None) -> GroupedGemm:
        """The grouped GEMM of ``rows`` token-expert assignments over the ``experts`` a device
        holds (of ``total_experts``, default all), ``routed_tokens`` tokens routed in all:
        experts touched = ``experts x (1 - (1 - k/E)^T)`` rounded (at least 1, at most
        ``experts`` and ``rows``), ``m`` = ``ceil(rows / touched)``."""
        total = total_experts or experts
        share = experts_touched(routed_tokens, total, top_k) * experts / total
        touched = max(1, min(experts, rows, round(share)))
        return cls(name=name, m=-(-rows // touched), n=n, k=k, batch=touched,
                   shared_weights=False, dtype=dtype, rows=rows, experts=experts, top_k=top_k,
                   routed_tokens=routed_tokens, total_experts=total)

    def merged(self, other: GroupedGemm) -> GroupedGemm:
        """One grouped GEMM over both ops' assignments (one serving iteration's token groups)."""
        return GroupedGemm.routed(name=self.name, rows=self.rows + other.rows, n=self.n,
                                  k=self.k, experts=self.experts, top_k=self.top_k,
                                  routed_tokens=self.routed_tokens + other.routed_tokens,
                                  total_experts=self.total_experts, dtype=self.dtype)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the routed assignments only."""
        return self.rows * self.n * self.k

    @property
    def flops(self) -> int:
        """Operations, 1 MAC = 2 FLOP."""
        return FLOP_PER_MAC * self.macs

    def tensor_elements(self) -> dict[str, int]:
        """``input`` (the routed tokens' rows), ``weight`` (every touched expert's),
        ``output``."""
        return {"input": self.rows * self.k, "weight": self.batch * self.k * self.n,
                "output": self.rows * self.n}


@dataclass(frozen=True, slots=True, kw_only=True)
class Conv2d:
    """A 2-D convolution over NHWC/NCHW tensors: ``n`` images of ``h x w x c`` -> ``k`` channels.

    ``r x s`` filter, symmetric zero ``pad``, one ``stride`` in both directions, ``groups``
    (``groups == c == k`` is depthwise). Lowered to GEMM the way SCALE-Sim does:
    M = N*Ho*Wo, N = K/groups, K = (C/groups)*R*S, repeated ``groups`` times.
    """

    name: str
    n: int = 1
    c: int
    h: int
    w: int
    k: int
    r: int
    s: int
    stride: int = 1
    pad: int = 0
    groups: int = 1
    dtype: str | None = None

    kind = "conv2d"
    layout = "nhwc"
    """The layout a GPU computes it in (cuDNN's NHWC kernels; :class:`NchwConv2d`: NCHW)."""

    def __post_init__(self) -> None:
        for field in ("n", "c", "h", "w", "k", "r", "s", "stride", "groups"):
            if getattr(self, field) <= 0:
                raise ValueError(f"{field} must be > 0")
        if self.pad < 0:
            raise ValueError("pad must be >= 0")
        if self.c % self.groups or self.k % self.groups:
            raise ValueError(f"groups={self.groups} must divide c={self.c} and k={self.k}")
        if self.out_h <= 0 or self.out_w <= 0:
            raise ValueError(f"filter {self.r}x{self.s} larger than padded input "
                             f"{self.h + 2 * self.pad}x{self.w + 2 * self.pad}")

    @property
    def out_h(self) -> int:
        """Output height: floor((H + 2*pad - R) / stride) + 1."""
        return (self.h + 2 * self.pad - self.r) // self.stride + 1

    @property
    def out_w(self) -> int:
        """Output width: floor((W + 2*pad - S) / stride) + 1."""
        return (self.w + 2 * self.pad - self.s) // self.stride + 1

    def lower(self) -> GemmShape:
        """The im2col GEMM (per group)."""
        return GemmShape(self.n * self.out_h * self.out_w, self.k // self.groups,
                         (self.c // self.groups) * self.r * self.s, self.groups)

    @property
    def macs(self) -> int:
        """Multiply-accumulates."""
        return self.lower().macs

    @property
    def flops(self) -> int:
        """Operations, 1 MAC = 2 FLOP."""
        return FLOP_PER_MAC * self.macs

    def tensor_elements(self) -> dict[str, int]:
        """Elements of each tensor (the input once, not its im2col copy)."""
        return {"input": self.n * self.c * self.h * self.w,
                "weight": self.k * (self.c // self.groups) * self.r * self.s,
                "output": self.n * self.k * self.out_h * self.out_w}


@dataclass(frozen=True, slots=True, kw_only=True)
class NchwConv2d(Conv2d):
    """A :class:`Conv2d` computed on NCHW (contiguous) tensors by the framework's own NCHW
    kernel (PyTorch's ``conv_depthwise2d_forward_kernel`` for a depthwise convolution), not
    by cuDNN's NHWC kernels: ``accelsim.workload.op_calls.computed_op`` of an ``:nchw``
    call."""

    layout = "nchw"


Op = Gemm | Conv2d
"""Operators that lower to GEMM and run on a systolic array or tensor cores."""


@dataclass(frozen=True, slots=True)
class Workload:
    """An ordered list of operators, with the file it came from (for error messages)."""

    name: str
    ops: tuple
    source: str = ""

    def __len__(self) -> int:
        return len(self.ops)

    @property
    def macs(self) -> int:
        """Total MACs of the operators that have them."""
        return sum(getattr(op, "macs", 0) for op in self.ops)
