"""Which energy table a machine uses, and its per-machine overrides.

Imports: config.schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from accelsim.config.schema import param


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergySelection:
    """Name of a table in ``configs/energy/`` and overrides of its entries (pJ per action)."""

    table: str = param("Energy table short name or path.", default="horowitz_45nm")
    overrides: Mapping[str, object] = param("Action -> pJ value replacing the table's.",
                                            default={})
    tdp_w: float | None = param(
        "Published TDP (or maximum power) of the part this machine models, W; `accelsim "
        "validate` holds the predicted power at peak throughput to a band below it.",
        default=None, check=lambda v: None if v is None or v > 0 else "must be > 0")
    tdp_gap: str = param(
        "Why the predicted power at peak throughput lies below the TDP band, when it does "
        "(a documented known gap; empty = the machine must lie in the band).", default="")
