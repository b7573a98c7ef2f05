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
