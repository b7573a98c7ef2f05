"""Running a sweep end to end: spec -> points -> (skip finished) -> executor -> results file.

:func:`run_sweep` is what ``accelsim sweep`` calls, and the Python entry point::

    from accelsim.sweep.runner import run_sweep
    summary = run_sweep("workloads/sweeps/resnet50_tpu_v4_array_sram.yaml", "out.parquet")

Before any work is distributed, the spec is validated (see :mod:`accelsim.sweep.space`) and the
first point is evaluated here, which checks the metric names, warms the numba kernels (forked
workers inherit them) and times one point to choose the chunk size.

Imports: sweep.*.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from accelsim.sweep.evaluate import (
    META_COLUMNS,
    Evaluator,
    SweepContext,
    check_metrics,
    evaluate_chunk,
    make_row,
)
from accelsim.sweep.local import default_workers, run_local
from accelsim.sweep.progress import Progress
from accelsim.sweep.space import SweepSpec, load_spec
from accelsim.sweep.store import ResultStore

TARGET_CHUNK_S = 0.25
"""Seconds of work per chunk aimed at (per-chunk overhead is ~1 ms locally, more on Dask)."""

IN_PROCESS_S = 0.3
"""Estimated work (s) below which the points are evaluated in this process: a local pool of
forked workers costs about this much to start and feed."""

WARM_POINTS = 64
"""Points timed together when one point takes under a millisecond (the batch evaluator)."""


@dataclass(frozen=True, slots=True)
class SweepSummary:
    """What a run did: points in the spec, skipped as already done, evaluated, failed."""

    out: str
    total: int
    skipped: int
    evaluated: int
    errors: int
    wall_s: float
    workers: int | str

    @property
    def rate(self) -> float:
        """Points evaluated per second of wall time."""
        return self.evaluated / self.wall_s if self.wall_s > 0 else 0.0

    def line(self) -> str:
        """One line for the terminal."""
        err = f", {self.errors} with errors" if self.errors else ""
        return (f"{self.evaluated} points evaluated ({self.skipped} already done{err}) in "
                f"{self.wall_s:.2f} s, {self.rate:,.1f} pt/s on {self.workers} -> {self.out}")


def chunk_size(seconds_per_point: float, todo: int, workers: int) -> int:
    """Points per chunk: about :data:`TARGET_CHUNK_S` of work, and >= 4 chunks per worker."""
    by_time = max(1, int(TARGET_CHUNK_S / max(seconds_per_point, 1e-7)))
    by_balance = max(1, math.ceil(todo / (4 * max(workers, 1))))
    return min(by_time, by_balance)


def run_sweep(spec: SweepSpec | str | os.PathLike, out: str | os.PathLike, *,
              workers: int | None = None, scheduler: Any = None, resume: bool = False,
              force: bool = False, fmt: str | None = None, evaluator: Evaluator | None = None,
              progress: bool = True,
              on_rows: Callable[[list[Mapping[str, Any]]], None] | None = None) -> SweepSummary:
    """Evaluate every point of ``spec`` not yet in ``out``; append rows as they finish.

    ``workers``: local processes (default: all cores); ``scheduler``: a Dask scheduler
    address or ``distributed.Client`` (then ``workers`` is ignored). ``on_rows`` is called
    with each chunk's rows after they are queued for the file (used by tests).
    On Ctrl-C the rows received so far are written and :class:`KeyboardInterrupt` propagates.
    """
    t0 = time.monotonic()
    # the objects alive before the sweep (modules, the spec) are not garbage it makes: keep
    # the cyclic collector off them while it runs (a full collection of a loaded process was
    # ~80 ms of a 4,000-point single-layer sweep) and shared copy-on-write with forked workers
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        return _sweep(spec, out, workers=workers, scheduler=scheduler, resume=resume,
                      force=force, fmt=fmt, evaluator=evaluator, progress=progress,
                      on_rows=on_rows, t0=t0)
    finally:
        if freeze:
            gc.unfreeze()


def _sweep(spec: SweepSpec | str | os.PathLike, out: str | os.PathLike, *,
           workers: int | None, scheduler: Any, resume: bool, force: bool, fmt: str | None,
           evaluator: Evaluator | None, progress: bool,
           on_rows: Callable[[list[Mapping[str, Any]]], None] | None, t0: float) -> SweepSummary:
    if not isinstance(spec, SweepSpec):
        spec = load_spec(spec)
    client = None
    if isinstance(scheduler, (str, os.PathLike)):
        from accelsim.sweep.dask import connect

        client = scheduler = connect(str(scheduler))  # an unreachable cluster fails first
    try:
        return _run(spec, out, workers=workers, scheduler=scheduler, resume=resume, force=force,
                    fmt=fmt, evaluator=evaluator, progress=progress, on_rows=on_rows, t0=t0)
    finally:
        if client is not None:
            from accelsim.sweep.dask import close_quietly

            close_quietly(client)


def _run(spec: SweepSpec, out: str | os.PathLike, *, workers: int | None, scheduler: Any,
         resume: bool, force: bool, fmt: str | None, evaluator: Evaluator | None, progress: bool,
         on_rows: Callable[[list[Mapping[str, Any]]], None] | None, t0: float) -> SweepSummary:
    ctx = SweepContext.from_spec(spec, evaluator)
    points = spec.points()
    ids = ctx.point_ids(points)
    t_first = time.monotonic()
    metrics, first_metrics = check_metrics(ctx, points[0], spec.file)
    per_point = time.monotonic() - t_first
    ctx = dataclasses.replace(ctx, metrics=metrics)
    first_row = make_row(ctx, points[0], first_metrics)
    columns = list(spec.names) + list(metrics) + list(META_COLUMNS)
    store = ResultStore(out, columns, fmt=fmt, resume=resume, force=force)
    if store.lock_note:
        print(f"accelsim: note: {store.lock_note}", file=sys.stderr)
    already = len(store.done.intersection(ids))
    todo_ids = [i for i in ids if i not in store.done]
    todo = [p for p, i in zip(points, ids) if i not in store.done]
    n_workers = 1 if scheduler is not None else (workers or default_workers())
    bar = Progress(len(points), already, enabled=progress)
    errors = 0

    def take(rows: list[dict[str, Any]]) -> None:
        nonlocal errors
        fresh = [r for r in rows if r["point_id"] not in store.done]  # a re-run chunk: once
        errors += sum(1 for r in fresh if r.get("error"))
        store.add(fresh)
        bar.update(len(fresh))
        if on_rows is not None:
            on_rows(rows)

    try:
        if todo and todo[0] is points[0]:
            take([first_row])
            todo, todo_ids = todo[1:], todo_ids[1:]
        if todo:
            # time warm points: the first call may include loading or compiling numba kernels
            # (tens of ms, which would make a 40 us point look like a slow one and send a few
            # thousand points to a pool in tiny chunks); fast evaluators (the batch path: tens
            # of microseconds a point) are timed over a small batch
            for n_warm in (1, WARM_POINTS):
                if (not todo or (n_warm == 1 and per_point <= 1e-3)
                        or (n_warm > 1 and per_point > 1e-3)):
                    continue
                n_warm = min(n_warm, len(todo))
                t_warm = time.monotonic()
                take(evaluate_chunk(ctx, todo[:n_warm], todo_ids[:n_warm]))
                per_point = (time.monotonic() - t_warm) / n_warm
                todo, todo_ids = todo[n_warm:], todo_ids[n_warm:]
            if scheduler is None and per_point * len(todo) < IN_PROCESS_S * n_workers:
                n_workers = 1  # less work than starting a pool costs
            slots = sum(scheduler.nthreads().values()) if scheduler is not None else n_workers
            size = chunk_size(per_point, len(todo), slots)
            chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
            chunk_ids = [todo_ids[i:i + size] for i in range(0, len(todo), size)]
            if scheduler is not None:
                from accelsim.sweep.dask import run_dask

                run_dask(ctx, chunks, scheduler, take)
            else:
                run_local(ctx, chunks, n_workers, take, chunk_ids)
    except KeyboardInterrupt:
        store.close()
        bar.finish()
        print(f"accelsim: sweep interrupted: {len(store.done.intersection(ids))} of {len(points)} "
              f"points saved in {out}; rerun with --resume to finish", file=sys.stderr)
        raise
    except BaseException:
        store.close()
        raise
    store.close(order=ids)
    bar.finish()
    where = (f"Dask at {scheduler.scheduler.address}" if scheduler is not None
             else f"{n_workers} process(es)")
    return SweepSummary(out=str(out), total=len(points), skipped=already,
                        evaluated=bar.done, errors=errors, wall_s=time.monotonic() - t0,
                        workers=where)
