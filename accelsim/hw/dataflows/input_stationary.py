"""Input-stationary (SCALE-Sim ``is``): inputs ``K x M`` preloaded on the array, ``N`` in time.

Imports: hw.dataflows.base.
"""

from __future__ import annotations

from accelsim.hw.dataflows.base import SystolicDataflow

STRATEGY = SystolicDataflow(name="is", code=2, title="input-stationary",
                            spatial=("k", "m"), temporal="n", stationary="input")
