"""Floating-point formats from their bit layout: range, precision and storage size.

A :class:`FloatFormat` is a sign bit, ``exp_bits`` exponent bits and ``mant_bits`` stored
mantissa (fraction) bits; everything else follows from the layout:

* exponent bias ``2^(exp_bits - 1) - 1``;
* smallest normal ``2^(1 - bias)``, smallest subnormal ``2^(1 - bias - mant_bits)``;
* machine epsilon ``2^-mant_bits`` (the gap after 1.0);
* largest finite value: IEEE 754 style (``ieee_specials=True``) reserves the all-ones
  exponent for infinities and NaNs, so the top exponent is ``bias`` and the largest value is
  ``(2 - 2^-mant_bits) * 2^bias`` (fp16: 65 504);
* **OCP FP8 E4M3** (``ieee_specials=False``, the "E4M3FN" variant of the OCP 8-bit
  floating-point specification, 2023, and of NVIDIA Hopper): there are no infinities and only
  the all-ones exponent *with* an all-ones mantissa is NaN, so the all-ones exponent holds
  normal numbers too: top exponent ``2^exp_bits - 1 - bias = 8`` and largest significand
  ``2 - 2^(1 - mant_bits) = 1.75``, hence a maximum of 448 (IEEE rules would give 240).
  E5M2 keeps the IEEE conventions (maximum 57 344, with infinities).
* storage: ``storage_bits`` per element (``container_bits`` when the format lives in a wider
  word: TF32 is 19 significant bits computed by the tensor cores but stored as a 32-bit fp32
  word), bytes per element ``storage_bits / 8``.

:data:`FORMATS` holds fp32, tf32, fp16, bf16 and fp8 (E4M3, E5M2); :func:`float_format`
looks one up by precision name (``"fp8"``, the GPU model's name, is E4M3: the format used for
weights and activations in forward passes). Integer precisions (int8, int4) have no exponent
and are not here.

Imports: errors.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.errors import WorkloadError


@dataclass(frozen=True, slots=True, kw_only=True)
class FloatFormat:
    """A binary floating-point format: 1 sign bit, ``exp_bits``, ``mant_bits`` (stored)."""

    name: str
    exp_bits: int
    mant_bits: int
    ieee_specials: bool = True
    """True: the all-ones exponent encodes only inf/NaN (IEEE 754). False: OCP E4M3 rules."""
    container_bits: int | None = None
    """Bits of the word the format is stored in, when wider than the format (TF32: 32)."""

    def __post_init__(self) -> None:
        if self.exp_bits < 2 or self.mant_bits < 1:
            raise ValueError(f"{self.name}: needs >= 2 exponent and >= 1 mantissa bits")
        if self.container_bits is not None and self.container_bits < self.bits:
            raise ValueError(f"{self.name}: container of {self.container_bits} bits is "
                             f"narrower than the format ({self.bits} bits)")

    @property
    def bits(self) -> int:
        """Significant bits of the layout: sign + exponent + mantissa."""
        return 1 + self.exp_bits + self.mant_bits

    @property
    def storage_bits(self) -> int:
        """Bits one element occupies in memory."""
        return self.container_bits or self.bits

    @property
    def bytes(self) -> float:
        """Bytes one element occupies in memory."""
        return self.storage_bits / 8

    @property
    def bias(self) -> int:
        """Exponent bias."""
        return 2 ** (self.exp_bits - 1) - 1

    @property
    def max_exponent(self) -> int:
        """Unbiased exponent of the largest finite value."""
        top = 2 ** self.exp_bits - 1  # the all-ones exponent field
        return (top - 1 if self.ieee_specials else top) - self.bias

    @property
    def min_exponent(self) -> int:
        """Unbiased exponent of the smallest normal value."""
        return 1 - self.bias

    @property
    def min_normal(self) -> float:
        """Smallest positive normal value."""
        return 2.0 ** self.min_exponent

    @property
    def min_subnormal(self) -> float:
        """Smallest positive (subnormal) value."""
        return 2.0 ** (self.min_exponent - self.mant_bits)

    @property
    def epsilon(self) -> float:
        """Gap between 1.0 and the next representable value."""
        return 2.0 ** -self.mant_bits

    @property
    def max_finite(self) -> float:
        """Largest finite value (see the module docstring for the E4M3 case)."""
        ulp = 2.0 ** -self.mant_bits
        # OCP E4M3: the all-ones mantissa of the all-ones exponent is NaN, so one ulp less
        significand = 2.0 - ulp if self.ieee_specials else 2.0 - 2 * ulp
        return significand * 2.0 ** self.max_exponent

    @property
    def has_infinity(self) -> bool:
        """Whether the format encodes +-inf."""
        return self.ieee_specials


FORMATS: dict[str, FloatFormat] = {f.name: f for f in (
    FloatFormat(name="fp32", exp_bits=8, mant_bits=23),
    FloatFormat(name="tf32", exp_bits=8, mant_bits=10, container_bits=32),
    FloatFormat(name="fp16", exp_bits=5, mant_bits=10),
    FloatFormat(name="bf16", exp_bits=8, mant_bits=7),
    FloatFormat(name="fp8_e4m3", exp_bits=4, mant_bits=3, ieee_specials=False),
    FloatFormat(name="fp8_e5m2", exp_bits=5, mant_bits=2),
)}
"""The floating-point formats accelsim's precisions use, by name."""

ALIASES = {"fp8": "fp8_e4m3"}
"""Precision names of the machine models that stand for one format here."""


def float_format(precision: str) -> FloatFormat:
    """The format of a floating-point precision name (``fp8`` is E4M3)."""
    name = ALIASES.get(precision, precision)
    if name not in FORMATS:
        raise WorkloadError(None, "dtype", precision, "not a floating-point format (known: "
                            f"{', '.join([*FORMATS, *ALIASES])})")
    return FORMATS[name]
