"""Dataflows as registered strategies: callers select one by name, never by integer code.

Each dataflow is one module exposing ``STRATEGY``:

=====  ===================================  ==========================================
name   module                               kind
=====  ===================================  ==========================================
os     :mod:`.output_stationary`            systolic (SCALE-Sim geometry, numba kernels)
ws     :mod:`.weight_stationary`            systolic
is     :mod:`.input_stationary`             systolic
rs     :mod:`.row_stationary`               spatial (Eyeriss: per-PE scratchpads, 1-D
                                            convolution primitives, multicast NoC)
nlr    :mod:`.no_local_reuse`               spatial (no scratchpads: every operand from
                                            the global buffer; ISCA 2016's fourth)
=====  ===================================  ==========================================

A systolic strategy gives fold geometry and array-side SRAM accesses of a GEMM; the per-fold
DRAM traffic runs in the compiled kernels selected by the strategy's ``code``. The spatial
strategies (rs, nlr) map convolutions themselves (mapping search, passes, per-level
actions) and share :class:`~.row_stationary.RsCost`.
Adding a dataflow = one module + one line in ``_MODULES``.

Imports: errors.
"""

from __future__ import annotations

import importlib
from typing import Any

from accelsim.errors import ConfigError

_MODULES = {"os": "output_stationary", "ws": "weight_stationary", "is": "input_stationary",
            "rs": "row_stationary", "nlr": "no_local_reuse"}
_CACHE: dict[str, Any] = {}
_NAMES: dict[str, tuple[str, ...]] = {}


def names(kind: str | None = None) -> tuple[str, ...]:
    """Registered dataflow names (all, or only those of ``kind``: systolic or spatial)."""
    if kind is None:
        return tuple(_MODULES)
    got = _NAMES.get(kind)
    if got is None:
        got = _NAMES[kind] = tuple(n for n in _MODULES if get(n).kind == kind)
    return got


def get(name: str) -> Any:
    """The strategy registered as ``name``; an unknown name is a :class:`ConfigError`."""
    if name not in _MODULES:
        raise ConfigError(None, "dataflow", name,
                          f"unknown dataflow (known: {', '.join(_MODULES)})")
    if name not in _CACHE:
        mod = importlib.import_module(f"{__name__}.{_MODULES[name]}")
        _CACHE[name] = mod.STRATEGY
    return _CACHE[name]


def systolic(name: str) -> Any:
    """A systolic strategy by name; ``rs`` or an unknown name is a :class:`ConfigError`."""
    s = get(name)
    if s.kind != "systolic":
        raise ConfigError(None, "dataflow", name,
                          f"'{name}' is not a systolic dataflow (systolic: "
                          f"{', '.join(names('systolic'))})")
    return s
