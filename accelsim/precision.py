"""Precision names and the bytes one element of each occupies: the one table.

Every layer that needs a word size (the machine configs, the op and graph byte counts, the
roofline, energy pricing, the link cases) reads it from :data:`PRECISION_BYTES`; a
precision's own sub-table (which precisions a GPU or CPU runs) is a selection of these names,
never a second copy of the sizes. Bytes are decimal; ``tf32`` is stored as a 32-bit fp32 word
(its 19 significant bits live in :mod:`accelsim.workload.dtypes`).

Imports: errors.
"""

from __future__ import annotations

from accelsim.errors import ConfigError

BLOCK_SCALED: dict[str, tuple[float, int, float]] = {
    "nvfp4": (0.5, 16, 1.0),
    "mxfp4": (0.5, 32, 1.0),
    "mxfp8": (1.0, 32, 1.0),
}
"""Block-scaled precisions: ``name -> (value bytes, elements per block, scale bytes per
block)``. NVFP4 (NVIDIA Blackwell): E2M1 values, one FP8 E4M3 scale per 16 elements; MXFP4
and MXFP8 (OCP Microscaling Formats v1.0): E2M1 / E4M3 values, one E8M0 scale per 32. A
tensor of such a precision occupies its values plus its scales in memory and on every link,
so its bytes per element include the scale's share (NVFP4: 0.5 + 1/16 = 0.5625)."""

def _scaled_bytes(name: str) -> float:
    value, block, scale = BLOCK_SCALED[name]
    return value + scale / block


PRECISION_BYTES: dict[str, float] = {
    "int4": 0.5, "mxfp4": _scaled_bytes("mxfp4"), "nvfp4": _scaled_bytes("nvfp4"), "int8": 1,
    "fp8": 1, "mxfp8": _scaled_bytes("mxfp8"), "int16": 2, "fp16": 2, "bf16": 2, "int32": 4,
    "fp32": 4, "tf32": 4}
"""Bytes per element of each precision name (block-scaled ones with their scales' share)."""

MAC_ENERGY_AS = {"nvfp4": "int4", "mxfp4": "int4", "mxfp8": "fp8"}
"""The precision whose MAC energy a block-scaled precision's MAC is priced at when an energy
table gives none of its own (an estimate: an E2M1 x E2M1 product is a 2-bit significand
multiply and a 2-bit exponent add, no larger than a 4-bit integer multiply; the per-block
scale multiply, once per 16 or 32 MACs, is left out)."""

PRECISIONS: tuple[str, ...] = tuple(PRECISION_BYTES)
"""Every precision name accelsim knows, narrowest first."""

ACCUMULATOR = {"int4": "int32", "int8": "int32", "fp8": "fp32", "int16": "int32", "fp16": "fp32",
               "bf16": "fp32", "int32": "int32", "fp32": "fp32", "tf32": "fp32",
               **{n: "fp32" for n in BLOCK_SCALED}}
"""Precision of partial sums for each operand precision."""


def element_bytes(precision: str, *, where: str | None = None) -> float:
    """Bytes per element of ``precision``; an unknown name is a one-line :class:`ConfigError`
    naming ``where`` (a file or argument) and the known names."""
    try:
        return PRECISION_BYTES[precision]
    except (KeyError, TypeError):
        raise ConfigError(where, "precision", precision,
                          f"unknown precision (known: {', '.join(PRECISIONS)})") from None


def sizes_of(names: tuple[str, ...]) -> dict[str, float]:
    """``{name: bytes}`` for a selection of precision names (e.g. those a GPU runs)."""
    return {n: PRECISION_BYTES[n] for n in names}
