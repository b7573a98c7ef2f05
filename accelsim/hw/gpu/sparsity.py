"""N:M structured sparsity of a GEMM's weight operand (NVIDIA's 2:4 sparse tensor cores).

In every block of ``M`` consecutive weights along the reduction dimension K at most ``N``
are non-zero (2:4: two of every four). The weight matrix is stored compressed: the ``N``
kept values of each block plus an index per kept value (``index_bits`` = 2 for 2:4, which
names one of four positions), so a 2:4 block of fp16 weights is ``2 x 16 + 2 x 2 = 36``
bits instead of 64. The sparse tensor core reads the compressed weights and the metadata,
selects the matching activations and executes only the kept products: MACs executed are
``N / M`` of the dense GEMM's, and the datasheet rate (``compute.sparse_speedup``, 2 on
Ampere and Hopper) counts dense-equivalent MACs.

What the GEMM model (:func:`accelsim.hw.gpu.gemm.plan_gemm` with ``sparsity="2:4"``) does
with it:

* the main loop runs ``sparse_speedup`` times faster (dense-equivalent MACs / (dense rate
  x ``sparse_speedup``));
* every byte of the weight operand, in HBM, L2 and shared memory, is scaled by
  :attr:`Pattern.weight_fraction` (values and metadata);
* it refuses (:class:`~accelsim.errors.UnsupportedError`) on a GPU without sparse tensor
  cores (V100), for fp32 (CUDA cores), and for leading dimensions off the 16-byte
  alignment (the sparse kernels have no element-aligned fallback).

Units: bits, bytes, elements. Imports: config, errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accelsim.config.gpu import OPERAND_BYTES, GpuMachine
from accelsim.errors import UnsupportedError


@dataclass(frozen=True, slots=True)
class Pattern:
    """``n`` non-zeros kept in every block of ``m`` weights along K."""

    n: int
    m: int

    def __post_init__(self) -> None:
        if not 0 < self.n < self.m:
            raise ValueError(f"N:M sparsity needs 0 < N < M (got {self.n}:{self.m})")

    @property
    def name(self) -> str:
        """``"N:M"``."""
        return f"{self.n}:{self.m}"

    @property
    def density(self) -> float:
        """Fraction of weights kept (and of MACs executed)."""
        return self.n / self.m

    @property
    def index_bits(self) -> int:
        """Bits of the index stored per kept value: enough to name one of ``m`` positions."""
        return max(1, math.ceil(math.log2(self.m)))

    @property
    def metadata_bits_per_block(self) -> int:
        """Index bits per block of ``m`` weights."""
        return self.n * self.index_bits

    def value_bits_per_block(self, precision: str) -> float:
        """Bits of the kept values of one block at ``precision``."""
        return self.n * OPERAND_BYTES[precision] * 8

    def dense_bits_per_block(self, precision: str) -> float:
        """Bits of one block stored dense."""
        return self.m * OPERAND_BYTES[precision] * 8

    def value_fraction(self, precision: str) -> float:
        """Bytes of the kept values over the dense bytes (the payload, metadata excluded)."""
        return self.value_bits_per_block(precision) / self.dense_bits_per_block(precision)

    def weight_fraction(self, precision: str) -> float:
        """Bytes of the compressed weights (values + metadata) over the dense bytes."""
        return ((self.value_bits_per_block(precision) + self.metadata_bits_per_block)
                / self.dense_bits_per_block(precision))

    def weight_bytes(self, k: int, n: int, precision: str) -> tuple[float, float]:
        """(value bytes, metadata bytes) of a compressed ``k x n`` weight matrix."""
        blocks = math.ceil(k / self.m) * n
        return (blocks * self.value_bits_per_block(precision) / 8,
                blocks * self.metadata_bits_per_block / 8)


PATTERNS = {"2:4": Pattern(2, 4)}
"""Sparsity patterns the tensor-core model runs (the one NVIDIA's sparse tensor cores run)."""


def pattern(sparsity: str | None) -> Pattern | None:
    """The pattern named ``sparsity`` (``None`` or ``"dense"``: dense)."""
    if sparsity is None or sparsity == "dense":
        return None
    if sparsity not in PATTERNS:
        raise UnsupportedError(f"sparsity {sparsity!r} is not modelled (known: dense, "
                               f"{', '.join(PATTERNS)})")
    return PATTERNS[sparsity]


def check_sparse(m: GpuMachine, precision: str, sparsity: str | None) -> Pattern | None:
    """The pattern, after checking that ``m`` runs it at ``precision``; else UnsupportedError."""
    p = pattern(sparsity)
    if p is None:
        return None
    if m.compute.sparse_speedup <= 0:
        raise UnsupportedError(f"{m.name} has no sparse tensor cores: {p.name} structured "
                               "sparsity needs Ampere or later")
    if precision == "fp32":
        raise UnsupportedError(f"{m.name}: {p.name} sparsity runs on tensor cores; fp32 runs on "
                               "CUDA cores (use tf32)")
    m.check_precision(precision)
    return p


def sparse_peak_flops(m: GpuMachine, precision: str, sparsity: str | None) -> float:
    """Datasheet peak at ``precision``, FLOP/s (dense-equivalent when ``sparsity`` is set)."""
    p = check_sparse(m, precision, sparsity)
    dense = m.peak_flops(precision)
    return dense if p is None else dense * m.compute.sparse_speedup
