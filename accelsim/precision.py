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

PRECISION_BYTES: dict[str, float] = {"int4": 0.5, "int8": 1, "fp8": 1, "int16": 2, "fp16": 2,
                                     "bf16": 2, "int32": 4, "fp32": 4, "tf32": 4}
"""Bytes per element of each precision name."""

PRECISIONS: tuple[str, ...] = tuple(PRECISION_BYTES)
"""Every precision name accelsim knows, narrowest first."""

ACCUMULATOR = {"int4": "int32", "int8": "int32", "fp8": "fp32", "int16": "int32", "fp16": "fp32",
               "bf16": "fp32", "int32": "int32", "fp32": "fp32", "tf32": "fp32"}
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
