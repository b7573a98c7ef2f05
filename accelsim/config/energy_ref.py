"""Which energy table a machine uses, its per-machine overrides, and the published power
figures its power model is held to (TDP, idle power, the power cap's clock floor).

Imports: config.schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from accelsim.config.schema import param, positive


def positive_or_none(v: object) -> str | None:
    """Check: absent (``None``) or strictly greater than zero."""
    return None if v is None or v > 0 else "must be > 0"  # type: ignore[operator]


@dataclass(frozen=True, slots=True, kw_only=True)
class OperandStaging:
    """Operand staging of a matrix unit that is not a systolic array (a cube: each step
    multiplies a ``tile_m x tile_k`` tile of A by a ``tile_k x tile_n`` tile of B, reading both
    from operand buffers and accumulating into an accumulator buffer). Per MAC it reads
    ``w / tile_n`` bits of A and ``w / tile_m`` bits of B (``w`` = operand bits) and reads and
    writes ``acc / tile_k`` accumulator bits; each priced by the energy table's SRAM rule at
    the buffer's capacity (``accelsim/report/ENERGY.md`` section 7)."""

    tile_m: int = param("Rows of A (and C) per step.", check=positive)
    tile_n: int = param("Columns of B (and C) per step.", check=positive)
    tile_k: int = param("Reduction depth per step (accumulators read and written once per "
                        "step).", check=positive)
    operand_buffer_bytes: float = param(
        "Capacity of each operand buffer A and B are read from (e.g. L0A / L0B), bytes.",
        check=positive)
    accumulator_buffer_bytes: float = param(
        "Capacity of the buffer the accumulators live in (e.g. L0C), bytes.",
        check=positive)
    accumulator_width: int = param("Accumulator width, bits.", default=32,
                                  check=positive)


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergySelection:
    """Name of a table in ``configs/energy/`` and overrides of its entries (pJ per action)."""

    table: str = param("Energy table short name or path.", default="horowitz_45nm")
    overrides: Mapping[str, object] = param("Action -> pJ value replacing the table's.",
                                            default={})
    tdp_w: float | None = param(
        "Published TDP (or maximum power) of the part this machine models, W; `accelsim "
        "validate` holds the predicted power at peak throughput to a band below it.",
        default=None, check=positive_or_none)
    tdp_gap: str = param(
        "Why the predicted power at peak throughput lies below the TDP band, when it does "
        "(a documented known gap; empty = the machine must lie in the band).", default="")
    idle_w: float | None = param(
        "Measured idle power of the part the TDP is stated for (chip or board), W: cell "
        "leakage plus what does not stop when idle (clocked logic without gating, DRAM "
        "background and refresh, PHYs, host interface, board). The part the modelled cell "
        "leakage does not cover is charged as static power `idle`.",
        default=None, check=positive_or_none)
    min_clock_hz: float | None = param(
        "Lowest clock the part's power cap may hold it at under a sustained load (a GPU's base "
        "or default applications clock), Hz. When the predicted power at the load clock "
        "exceeds the TDP, the cap lowers the clock; below this floor the check fails.",
        default=None, check=positive_or_none)
    staging: OperandStaging | None = param(
        "Operand staging of a non-systolic matrix unit (cube), priced per MAC.", default=None)
