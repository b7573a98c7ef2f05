"""Quantities: parse "32 MiB", "1.2 TB/s", "1.05 GHz", "100 ns" into canonical floats.

Canonical units everywhere past ``config/``: bytes, seconds, hertz, picojoules, bytes/s.
Decimal SI prefixes by default (k = 1e3, M = 1e6, G = 1e9, T = 1e12); only ``Ki``, ``Mi``,
``Gi``, ``Ti`` are binary. Bits (``b``) are converted to bytes (8 bits = 1 byte) where a
byte quantity is asked for.

Counting conventions (used by every report):

* 1 MAC = 2 FLOP (:data:`FLOP_PER_MAC`).
* Bytes are decimal unless a binary prefix is written: 1 GB = 1e9 B, 1 GiB = 2**30 B.
* "Bandwidth" is bytes per second, decimal: 1 TB/s = 1e12 B/s.

Imports: stdlib only.
"""

from __future__ import annotations

import math
import re

FLOP_PER_MAC = 2
"""One multiply-accumulate counts as two floating-point (or integer) operations."""

BITS_PER_BYTE = 8

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
            "m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}

_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_RE = re.compile(r"^\s*" + _NUM + r"\s*([A-Za-zµ/]*)\s*$")


class UnitError(ValueError):
    """A quantity string that cannot be parsed into the requested dimension."""


def _short(text: str, limit: int = 40) -> str:
    """``repr`` of ``text`` cut to ``limit`` characters (messages never carry a huge string)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def _split(text: str) -> tuple[float, str]:
    m = _RE.match(text)
    if not m:
        raise UnitError(f"cannot parse quantity {_short(text)}")
    return float(m.group(1)), m.group(2)


def _prefix_value(prefix: str) -> float:
    if prefix in _BINARY:
        return _BINARY[prefix]
    if prefix in _DECIMAL:
        return _DECIMAL[prefix]
    raise UnitError(f"unknown prefix {prefix!r}")


def _parse(value: object, units: dict[str, float], what: str, allow_bare: bool = True) -> float:
    """Parse ``value`` with one of ``units`` (unit symbol -> factor to canonical).

    The result is a finite float: NaN, infinities and numbers beyond the float range
    (``1e400``, ``10**400``, ``"1e308 TB"``) are a :class:`UnitError` — except a bandwidth,
    which may be ``+inf`` (written ``.inf`` in YAML): unlimited, as SCALE-Sim's CALC mode.
    """
    try:
        out = _parse_any(value, units, what, allow_bare)
    except OverflowError:
        raise UnitError(f"expected a {what} within the floating-point range") from None
    if not math.isfinite(out) and not (what == "bandwidth" and out == math.inf
                                       and isinstance(value, float)):
        raise UnitError(f"expected a finite {what}")
    return out


def _parse_any(value: object, units: dict[str, float], what: str, allow_bare: bool) -> float:
    if isinstance(value, bool):
        raise UnitError(f"expected a {what}, got a boolean")
    if isinstance(value, (int, float)):
        if not allow_bare:
            raise UnitError(f"expected a {what} with a unit")
        return float(value)
    if not isinstance(value, str):
        raise UnitError(f"expected a {what}, got {type(value).__name__}")
    number, unit = _split(value)
    if unit == "":
        if allow_bare:
            return number
        raise UnitError(f"{_short(value)} needs a unit ({what})")
    # longest unit symbol that is a suffix of the written unit
    for symbol in sorted(units, key=len, reverse=True):
        if unit.endswith(symbol):
            prefix = unit[: len(unit) - len(symbol)]
            try:
                return number * _prefix_value(prefix) * units[symbol]
            except UnitError:
                continue
    raise UnitError(f"{_short(value)} is not a {what} (units: {', '.join(sorted(units))})")


def parse_bytes(value: object) -> float:
    """Bytes from ``"32 MiB"``, ``"108 kB"``, ``"4 Kib"`` (bits) or a bare number of bytes."""
    return _parse(value, {"B": 1.0, "b": 1.0 / BITS_PER_BYTE, "bytes": 1.0, "bits": 0.125}, "size")


def parse_bandwidth(value: object) -> float:
    """Bytes per second from ``"1.2 TB/s"``, ``"34 GB/s"``, ``"64 Gb/s"`` (bits) or a bare
    number."""
    return _parse(value, {"B/s": 1.0, "b/s": 1.0 / BITS_PER_BYTE, "Bps": 1.0}, "bandwidth")


def parse_frequency(value: object) -> float:
    """Hertz from ``"1.05 GHz"``, ``"700 MHz"`` or a bare number of hertz."""
    return _parse(value, {"Hz": 1.0}, "frequency")


def parse_time(value: object) -> float:
    """Seconds from ``"100 ns"``, ``"8.9 us"``, ``"2 ms"`` or a bare number of seconds."""
    return _parse(value, {"s": 1.0}, "time")


def parse_energy(value: object) -> float:
    """Picojoules from ``"3.9 pJ"``, ``"1.3 nJ"`` or a bare number of picojoules."""
    return _parse(value, {"J": 1e12}, "energy")


def parse_power(value: object) -> float:
    """Watts from ``"25 uW"``, ``"0.35 kW"`` or a bare number of watts."""
    return _parse(value, {"W": 1.0}, "power")


def parse_count(value: object) -> float:
    """A dimensionless count, allowing SI suffixes: ``"16k"`` -> 16000, ``"4Ki"`` -> 4096."""
    if isinstance(value, str):
        number, unit = _split(value)
        out = number * _prefix_value(unit)
        if not math.isfinite(out):
            raise UnitError(f"expected a finite number, got {value[:40]!r}")
        return out
    return _parse(value, {}, "number")


PARSERS = {
    "_bytes": parse_bytes,
    "_bits": lambda v: parse_bytes(v) * BITS_PER_BYTE,
    "_bytes_per_s": parse_bandwidth,
    "_hz": parse_frequency,
    "_s": parse_time,
    "_pj": parse_energy,
}
"""Field-name suffix -> parser. The fixed set of unit suffixes used in config dataclasses."""


def parser_for_field(name: str):
    """The parser for a field named with a unit suffix, or ``None`` for a plain field."""
    for suffix in sorted(PARSERS, key=len, reverse=True):
        if name.endswith(suffix):
            return PARSERS[suffix]
    return None


def format_bytes(n: float) -> str:
    """Human-readable decimal bytes: ``1.5e6 -> '1.50 MB'``."""
    return _format(n, "B")


def format_bandwidth(n: float) -> str:
    """Human-readable decimal bandwidth: ``1.2e12 -> '1.20 TB/s'``."""
    return _format(n, "B/s")


def format_time(seconds: float) -> str:
    """Human-readable seconds: ``2.5e-6 -> '2.50 us'``."""
    if seconds == 0 or not math.isfinite(seconds):
        return f"{seconds} s"
    for factor, sym in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")):
        if abs(seconds) >= factor:
            return f"{seconds / factor:.3g} {sym}"
    return f"{seconds:.3g} s"


def _format(n: float, unit: str) -> str:
    if not math.isfinite(n):
        return f"{n} {unit}"
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= factor:
            return f"{n / factor:.2f} {prefix}{unit}"
    return f"{n:.0f} {unit}"
