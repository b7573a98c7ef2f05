"""Weight-stationary (SCALE-Sim ``ws``): weights ``K x N`` preloaded on the array, ``M`` in time.

Imports: hw.dataflows.base.
"""

from __future__ import annotations

from accelsim.hw.dataflows.base import SystolicDataflow

STRATEGY = SystolicDataflow(name="ws", code=1, title="weight-stationary",
                            spatial=("k", "n"), temporal="m", stationary="weight")
