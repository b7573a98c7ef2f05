"""Run systolic layer plans through the engine (event or analytic) and summarise them.

Modes: ``"event"`` (the SimPy replay, periodic stretches of folds replayed once, see
:mod:`accelsim.engine.aggregate`), ``"analytic"`` (the numba recurrence) and ``"auto"``.
``auto`` takes the recurrence whenever it is proven equal to the replay, which on a systolic
machine is every run: the only contention the replay has -- one DMA queue served in a fixed
order, double-buffered operand and output slots, arrays taking folds in turn -- is exactly the
recurrence's (``tests/engine/test_fast_path.py`` holds them equal event for event over random
layers, arrays, SRAM sizes, bandwidths and latencies, aggregated or not). Nothing else shares
a resource between layers: they run one after another.

Identical layers (the same fold stream on the same machine: the blocks of a Transformer) are
scheduled once and their schedule reused.

Imports: config.systolic_machine, mapping.systolic, engine.analytic, engine.replay,
engine.schedule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelsim.config.systolic_machine import SystolicMachine
from accelsim.engine.analytic import schedule_analytic
from accelsim.engine.replay import schedule_event
from accelsim.engine.schedule import FoldSchedule
from accelsim.mapping.systolic import LayerPlan

MODES = ("auto", "event", "analytic")


def resolve_mode(mode: str) -> str:
    """The engine that runs for a requested mode: ``auto`` is the recurrence (see module doc)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    return "analytic" if mode == "auto" else mode


@dataclass(frozen=True, slots=True)
class LayerRun:
    """A layer's plan, its schedule, and the bytes the DMA queue moved per operand."""

    plan: Any
    """A :class:`LayerPlan`, a :class:`VectorPlan` or a row-stationary plan (same stream API)."""
    schedule: FoldSchedule
    moved_bytes: dict


def stream_periods(plan: Any) -> tuple[int, ...]:
    """Fold periods a plan's stream has by construction: a row or column of folds, a block of
    row folds sized to the SRAM, and the whole stream once per repeat (hints for aggregation)."""
    if not isinstance(plan, LayerPlan):
        return ()
    g = plan.geometry
    out = {g.row_folds, g.col_folds, g.folds}
    block = plan.traffic.block
    if block > 1:
        out |= {block, block * g.col_folds, block * g.row_folds}
    return tuple(sorted(out))


def run_layer(machine: SystolicMachine, plan: Any, mode: str = "event",
              *, aggregate: bool = True) -> LayerRun:
    """Schedule ``plan`` on ``machine`` by discrete events (``"event"``), recurrence
    (``"analytic"``) or ``"auto"`` (the recurrence); ``aggregate=False`` replays every fold
    as its own events (the reference the aggregated replay is tested against)."""
    mode = resolve_mode(mode)
    load, drain = plan.stream()
    args = (load, drain, plan.fold_cycles, plan.arrays, machine.dram_bytes_per_cycle,
            machine.dram_latency_cycles)
    if mode == "event":
        sched = schedule_event(*args, aggregate=aggregate, periods=stream_periods(plan))
    else:
        sched = schedule_analytic(*args)
    return LayerRun(plan, sched, moved_bytes(plan))


HASH_FOLDS = 256
"""Streams of at least this many folds are matched by content (hash of every transfer);
shorter ones only when they share a mapping (ops equal but for their name)."""


def _stream_key(plan: Any) -> tuple:
    load, drain = plan.stream()
    digest = hashlib.blake2b(np.ascontiguousarray(load, np.float64).tobytes(), digest_size=16)
    digest.update(np.ascontiguousarray(drain, np.float64).tobytes())
    return digest.digest(), len(load), int(plan.fold_cycles), int(plan.arrays)


def _shared_part(plan: Any) -> Any:
    """The object a plan's renamed copies share (``dataclasses.replace(plan, name=...)``
    keeps it) and no other plan has: a layer plan's fold traffic, a vector plan's cost."""
    return getattr(plan, "traffic", None) or getattr(plan, "cost", None) or plan


def run_layers(machine: SystolicMachine, plans: list, mode: str = "auto",
               progress: Callable[[int, int, str], None] | None = None) -> list[LayerRun]:
    """Every plan in order; a plan whose fold stream (bytes per transfer, fold cycles, arrays)
    equals an earlier one's reuses that schedule, which is the same by construction: each
    layer starts from an idle machine at cycle 0."""
    seen: dict[tuple, FoldSchedule] = {}
    keys: dict[int, tuple] = {}  # plans sharing one traffic object (renamed copies) hash once
    moved: dict[int, dict[tuple[str, str], float]] = {}  # ... and move the same bytes
    runs = []
    for i, plan in enumerate(plans):
        ident = id(_shared_part(plan))
        key = keys.get(ident)
        if key is None:  # short streams: scheduling costs less than hashing their content
            key = keys[ident] = (_stream_key(plan) if plan.folds >= HASH_FOLDS
                                 else ("plan", ident, plan.folds, plan.fold_cycles, plan.arrays))
        if key in seen:
            mv = moved.get(ident)
            if mv is None:
                mv = moved[ident] = moved_bytes(plan)
            run = LayerRun(plan, seen[key], dict(mv))
        else:
            run = run_layer(machine, plan, mode)
            seen[key] = run.schedule
        runs.append(run)
        if progress is not None:
            progress(i + 1, len(plans), plan.name)
    return runs


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
