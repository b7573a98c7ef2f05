"""Dask executor: the same chunks as :mod:`accelsim.sweep.local`, on a ``dask.distributed`` cluster.

``dask[distributed]`` is optional: it is imported only here, when ``--scheduler`` is given,
and its absence is a one-line error with the pip command.

Fault tolerance. Each chunk is one task whose result comes back to this process, which is the
only writer of the results file. If a worker dies, the scheduler re-runs its unfinished tasks
elsewhere; a task that keeps losing workers (Dask's ``KilledWorker``) is submitted again here,
up to :data:`RESUBMITS` times. Tasks are pure functions of their points, so running one twice
is harmless, and the store keeps one row per ``point_id``: no point is lost or duplicated.

Imports: errors, sweep.evaluate; dask.distributed (lazily).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from accelsim.errors import AccelsimError
from accelsim.sweep.evaluate import SweepContext, evaluate_chunk, stable_hash
from accelsim.sweep.local import RowsCallback

RESUBMITS = 3
"""How many times a chunk whose workers keep dying is submitted again."""

PIP_HINT = "pip install 'dask[distributed]'"


def _distributed() -> Any:
    try:
        import distributed
    except ModuleNotFoundError as exc:
        if exc.name not in ("distributed", "dask"):
            raise
        raise AccelsimError(f"--scheduler needs Dask's distributed scheduler: {PIP_HINT}") from None
    return distributed


def connect(address: str) -> Any:
    """A ``distributed.Client`` to the scheduler at ``address`` (one-line error if unreachable).

    The wait is Dask's ``distributed.comm.timeouts.connect`` setting (30 s unless configured,
    e.g. ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s``).
    """
    distributed = _distributed()
    import dask

    timeout = dask.config.get("distributed.comm.timeouts.connect")
    try:
        return distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise AccelsimError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def run_dask(ctx: SweepContext, chunks: Sequence[Sequence[dict[str, Any]]], scheduler: Any,
             on_rows: RowsCallback) -> None:
    """Evaluate ``chunks`` on the cluster, calling ``on_rows`` as each chunk's rows arrive.

    ``scheduler`` is an address (``tcp://host:8786``) or a ``distributed.Client``.
    """
    distributed = _distributed()
    client = scheduler if isinstance(scheduler, distributed.Client) else connect(str(scheduler))
    owned = client is not scheduler
    sweep_key = stable_hash([ctx.point_id(p) for chunk in chunks for p in chunk], 12)
    futures: dict[Any, tuple[int, int]] = {}

    def submit(i: int, attempt: int) -> Any:
        key = f"accelsim-sweep-{sweep_key}-{i}-{attempt}"
        fut = client.submit(evaluate_chunk, ctx, list(chunks[i]), key=key, pure=False)
        futures[fut] = (i, attempt)
        return fut

    try:
        stream = distributed.as_completed([submit(i, 0) for i in range(len(chunks))],
                                          loop=client.loop)
        for fut in stream:
            i, attempt = futures.pop(fut)
            try:
                rows = fut.result()
            except distributed.scheduler.KilledWorker:
                if attempt >= RESUBMITS:
                    raise AccelsimError(f"chunk {i} of the sweep killed {attempt + 1} rounds of "
                                        "workers; saved rows are kept: rerun with --resume") from None
                stream.add(submit(i, attempt + 1))
                continue
            finally:
                fut.release()
            on_rows(rows)
    finally:
        if futures:
            client.cancel(list(futures), force=True)
        if owned:
            client.close()
