"""Output-stationary (SCALE-Sim ``os``): outputs ``M x N`` on the array, ``K`` in time.

Each PE keeps one output's accumulator; inputs flow along rows, weights down columns.
Imports: hw.dataflows.base.
"""

from __future__ import annotations

from accelsim.hw.dataflows.base import SystolicDataflow

STRATEGY = SystolicDataflow(name="os", code=0, title="output-stationary",
                            spatial=("m", "n"), temporal="k", stationary=None)
