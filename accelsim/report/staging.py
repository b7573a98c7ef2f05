"""Action records a machine's energy model adds beyond the engine's: a cube's operand staging
and the part's idle power (``accelsim/report/ENERGY.md`` section 7).

* :func:`staging_actions` - a matrix unit that is not a systolic array (Ascend's Da Vinci
  cube: ``energy.staging``) reads A and B from operand buffers and reads and writes its
  accumulators in an accumulator buffer at every step; a systolic array passes operands from
  PE to PE instead (its registers are :func:`accelsim.report.energy.pe_register_actions`).
  Records are ``sram`` accesses tagged ``technology = "staging"`` so a breakdown can tell them
  from the engine's buffer traffic.
* :func:`chip_idle_actions` - one ``chip``/``idle`` record per layer, ``count`` = cycles: the
  part's measured idle power beyond its modelled cell leakage (``energy.idle_w``), priced per
  cycle (``leak.chip``).

Imports: units, precision, config.energy_ref.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from accelsim.config.energy_ref import OperandStaging
from accelsim.precision import PRECISION_BYTES
from accelsim.units import BITS_PER_BYTE

COLUMNS = ["layer", "level", "operand", "direction", "count", "bits", "precision",
           "technology", "capacity_bytes", "word_bits"]
"""The action record columns (:data:`accelsim.report.energy.ACTION_COLUMNS`)."""

STAGING_TAG = "staging"
"""``technology`` of the staging records."""


def _rec(layer: str, level: str, operand: str, direction: str, count: float, bits: float,
         precision: str, capacity: float, word_bits: float, technology: str = "") -> dict[str, Any]:
    return {"layer": layer, "level": level, "operand": operand, "direction": direction,
            "count": float(count), "bits": float(bits), "precision": precision,
            "technology": technology, "capacity_bytes": float(capacity),
            "word_bits": float(word_bits)}


def staging_bits_per_mac(staging: OperandStaging, precision: str) -> dict[str, float]:
    """Bits moved per MAC: ``a`` (A read), ``b`` (B read), ``acc`` (accumulators read, and as
    many written)."""
    w = PRECISION_BYTES[precision] * BITS_PER_BYTE
    return {"a": w / staging.tile_n, "b": w / staging.tile_m,
            "acc": staging.accumulator_width / staging.tile_k}


def staging_accesses(macs: float, precision: str, staging: OperandStaging
                     ) -> list[tuple[str, str, float, float, float, float]]:
    """``(operand, direction, count, bits, capacity_bytes, word_bits)`` of the staging
    buffer accesses of ``macs`` MACs at ``precision``."""
    per = staging_bits_per_mac(staging, precision)
    w = PRECISION_BYTES[precision] * BITS_PER_BYTE
    acc_w = float(staging.accumulator_width)
    out = []
    for operand, bits, cap, width, directions in (
            ("input", per["a"], staging.operand_buffer_bytes, staging.tile_k * w, ("read",)),
            ("weight", per["b"], staging.operand_buffer_bytes, staging.tile_k * w, ("read",)),
            ("psum", per["acc"], staging.accumulator_buffer_bytes, staging.tile_n * acc_w,
             ("read", "write"))):
        for d in directions:
            total = macs * bits
            out.append((operand, d, total / width, total, cap, width))
    return out


def staging_actions(actions: pd.DataFrame, staging: OperandStaging) -> pd.DataFrame:
    """Operand-staging records for every ``mac``/``compute`` record of ``actions``."""
    macs = actions[(actions["level"] == "mac") & (actions["direction"] == "compute")]
    recs = [_rec(row.layer, "sram", operand, d, count, bits, row.precision, cap, width,
                 STAGING_TAG)
            for row in macs.itertuples(index=False)
            for operand, d, count, bits, cap, width in staging_accesses(row.count,
                                                                        row.precision, staging)]
    return pd.DataFrame(recs, columns=COLUMNS)


def chip_idle_actions(layers: pd.DataFrame, precision: str) -> pd.DataFrame:
    """One ``chip``/``idle`` record per layer: ``count`` = the layer's cycles."""
    recs = [_rec(r.layer, "chip", "-", "idle", r.total_cycles, 0.0, precision, 0.0, 0.0)
            for r in layers[["layer", "total_cycles"]].itertuples(index=False)]
    return pd.DataFrame(recs, columns=COLUMNS)
