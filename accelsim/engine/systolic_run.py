"""Run one systolic layer plan through the engine (event or analytic) and summarise it.

Imports: mapping, engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from accelsim.config.machine import SystolicMachine
from accelsim.engine.analytic import schedule_analytic
from accelsim.engine.replay import schedule_event
from accelsim.engine.schedule import FoldSchedule
from accelsim.mapping.systolic import LayerPlan

MODES = ("event", "analytic")


@dataclass(frozen=True, slots=True)
class LayerRun:
    """A layer's plan, its schedule, and the bytes the DMA queue moved per operand."""

    plan: Any
    """A :class:`LayerPlan`, a :class:`VectorPlan` or a row-stationary plan (same stream API)."""
    schedule: FoldSchedule
    moved_bytes: dict


def run_layer(machine: SystolicMachine, plan: Any, mode: str = "event") -> LayerRun:
    """Schedule ``plan`` on ``machine`` by discrete events (``"event"``) or recurrence."""
    load, drain = plan.stream()
    args = (load, drain, plan.fold_cycles, plan.arrays, machine.dram_bytes_per_cycle,
            machine.dram_latency_cycles)
    if mode == "event":
        sched = schedule_event(*args)
    elif mode == "analytic":
        sched = schedule_analytic(*args)
    else:
        raise ValueError(f"mode must be one of {MODES}")
    return LayerRun(plan, sched, moved_bytes(plan))


def moved_bytes(plan: Any) -> dict[tuple[str, str], float]:
    """DRAM bytes moved per operand and direction by the layer's transfers."""
    if not isinstance(plan, LayerPlan):   # vector and row-stationary plans know their bytes
        return plan.moved()
    t = plan.traffic
    r = plan.repeat

    def tot(a: np.ndarray) -> float:
        return float(a.sum()) * r

    return {("input", "read"): tot(t.ifmap_bytes), ("weight", "read"): tot(t.filter_bytes),
            ("psum", "read"): tot(t.psum_read_bytes), ("output", "write"): tot(t.ofmap_write_bytes),
            ("psum", "write"): tot(t.psum_write_bytes)}
