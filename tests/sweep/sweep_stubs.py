"""Stub evaluators for the sweep tests: deterministic functions of a point, no simulator.

They live in a module of their own so that worker processes (forked, spawned or Dask) can
import them by name.
"""

from __future__ import annotations

import time

from accelsim.errors import UnsupportedError

TINY_WORKLOAD = {
    "name": "tiny",
    "ops": [{"op": "gemm", "name": "fc1", "m": 64, "n": 96, "k": 80},
            {"op": "conv2d", "name": "conv", "c": 8, "h": 12, "w": 12, "k": 16, "r": 3, "s": 3}],
}
"""A 2-layer workload (``workload: tiny`` in a spec given to the ``write_spec`` fixture)."""

SLOW_S = 0.02
"""Seconds :func:`slow_eval` sleeps per point (so that a sweep is still running when a test
interrupts it)."""


def fast_eval(ctx, point):
    """cycles = 1e6 / (rows * cols) + capacity / 1e6; area = rows * cols / 1e3 (made-up units)."""
    rows = point.get("compute.array.rows", 128)
    cols = point.get("compute.array.cols", 128)
    cap = point.get("memory.sram.capacity_bytes", 1e6)
    bonus = {"os": 0.0, "ws": 1.0, "is": 2.0}[point.get("dataflow", "os")]
    return {"cycles": 1e6 / (rows * cols) + cap / 1e6 + bonus, "area": rows * cols / 1e3}


def slow_eval(ctx, point):
    """:func:`fast_eval` after sleeping :data:`SLOW_S` seconds."""
    time.sleep(SLOW_S)
    return fast_eval(ctx, point)


def sleepy_eval(ctx, point):
    """:func:`fast_eval` after sleeping 50 ms (for the Ctrl-C test of the command line)."""
    time.sleep(0.05)
    return fast_eval(ctx, point)


_COLD = [True]


def cold_start_eval(ctx, point):
    """:func:`fast_eval`, but the first call in a process sleeps 30 ms (as loading numba
    kernels does); ``cold_start_eval.reset()`` makes the next call cold again."""
    if _COLD[0]:
        _COLD[0] = False
        time.sleep(0.03)
    return fast_eval(ctx, point)


cold_start_eval.reset = lambda: _COLD.__setitem__(0, True)


def picky_eval(ctx, point):
    """:func:`fast_eval`, but 16-row arrays are unsupported (an error row, not a crash)."""
    if point.get("compute.array.rows") == 16:
        raise UnsupportedError("16-row arrays are not supported by this stub")
    return fast_eval(ctx, point)


def grid_spec(**extra) -> dict:
    """A 4 x 4 x 3 x 2 grid on tpu_v4, rows == cols: 24 points."""
    spec = {"name": "grid", "hardware": "tpu_v4", "workload": "tiny",
            "parameters": {"compute.array.rows": [16, 32, 64, 128],
                           "compute.array.cols": [16, 32, 64, 128],
                           "memory.sram.capacity_bytes": ["1 MiB", "2 MiB", "4 MiB"],
                           "dataflow": ["os", "ws"]},
            "constraints": ["rows == cols"]}
    spec.update(extra)
    return spec


GATE_ENV = "ACCELSIM_TEST_GATE"
"""Environment variable naming the file :func:`gated_eval` waits for."""

_CALLS = [0]


def gated_eval(ctx, point):
    """:func:`fast_eval`; the second call in a process waits (up to 10 s) until the file named by
    ``$ACCELSIM_TEST_GATE`` exists, so that a sweep holds its store open (the first call is the
    metric check, made before the store is opened)."""
    import os

    _CALLS[0] += 1
    gate = os.environ.get(GATE_ENV)
    if _CALLS[0] == 2 and gate:
        deadline = time.monotonic() + 10
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.005)
    return fast_eval(ctx, point)
