"""Local executor: chunks of points on a pool of processes (all cores by default).

Workers are forked where the platform allows it (Linux), so that the numba kernels the parent
compiled while checking the first point are inherited instead of compiled again in every
worker; elsewhere they are spawned. Workers ignore SIGINT: Ctrl-C reaches the parent, which
stops the pool, keeps every row already received and leaves the results file valid.

Imports: errors, sweep.evaluate.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from accelsim.errors import AccelsimError
from accelsim.sweep.evaluate import SweepContext, evaluate_chunk

RowsCallback = Callable[[list[dict[str, Any]]], None]

_CTX: SweepContext | None = None


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        return os.cpu_count() or 1


def _init_worker(ctx: SweepContext) -> None:
    global _CTX
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _CTX = ctx


def _work(chunk: Sequence[dict[str, Any]], ids: Sequence[str] | None) -> list[dict[str, Any]]:
    assert _CTX is not None, "worker not initialised"
    return evaluate_chunk(_CTX, chunk, ids)


def _start_method() -> str:
    methods = multiprocessing.get_all_start_methods()
    return "fork" if "fork" in methods else "spawn"


def run_local(ctx: SweepContext, chunks: Sequence[Sequence[dict[str, Any]]], workers: int,
              on_rows: RowsCallback, ids: Sequence[Sequence[str]] | None = None) -> None:
    """Evaluate ``chunks`` on ``workers`` processes, calling ``on_rows`` as each chunk finishes;
    ``ids``: each chunk's point keys, when the caller has them (else workers compute them).

    ``workers <= 1`` (or a single chunk) evaluates in this process. At most ``2 * workers``
    chunks are in flight, so an interrupt loses at most that much work.
    """
    chunk_ids = list(ids) if ids is not None else [None] * len(chunks)
    if workers <= 1 or len(chunks) <= 1:
        for chunk, cids in zip(chunks, chunk_ids, strict=True):
            on_rows(evaluate_chunk(ctx, chunk, cids))
        return
    executor = ProcessPoolExecutor(max_workers=workers,
                                   mp_context=multiprocessing.get_context(_start_method()),
                                   initializer=_init_worker, initargs=(ctx,))
    finished = False
    try:
        queue = iter(zip(chunks, chunk_ids, strict=True))
        pending: set[Future] = set()

        def refill() -> None:
            while len(pending) < 2 * workers:
                item = next(queue, None)
                if item is None:
                    return
                pending.add(executor.submit(_work, *item))

        refill()
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                on_rows(fut.result())
            refill()
        finished = True
    except BrokenProcessPool:
        raise AccelsimError("a sweep worker process died (out of memory or killed); the rows "
                            "received so far are saved: rerun with --resume") from None
    finally:
        if finished:
            executor.shutdown(wait=True)
        else:
            _stop(executor)


def _stop(executor: ProcessPoolExecutor) -> None:
    """Cancel queued chunks and end the worker processes now (after an interrupt or error)."""
    procs = list(getattr(executor, "_processes", {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)
