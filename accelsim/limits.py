"""Input limits, written down once, and the checks every reader applies before any work.

Every reader of user input (machine YAML, workload YAML, SCALE-Sim topology CSV, ONNX
dimension bindings, sweep specs, command-line values) checks what it reads against these
limits **before** it allocates or computes anything, and refuses with a one-line
:class:`~accelsim.errors.ConfigError` naming the file, the field and the (summarised) value.
The README's "Input limits" section lists them.

Imports: errors (stdlib only otherwise).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from accelsim.errors import MAX_SHOWN_CHARS, ConfigError, summarise  # noqa: F401 (re-exported)

MAX_FILE_BYTES = 64 * 2**20
"""Largest input file read (YAML, CSV, ONNX, sweep store excepted): 64 MiB."""

MAX_YAML_ALIASES = 100
"""Largest number of alias uses (``*name``) in one YAML document (alias bombs)."""

MAX_YAML_NODES = 1_000_000
"""Largest number of nodes in one YAML document after alias expansion."""

MAX_NESTING = 64
"""Deepest nesting of mappings/lists in a YAML or JSON document."""

MAX_CSV_FIELD_BYTES = 2**16
"""Longest field in a CSV file (the csv module's own limit is 128 KiB)."""

MAX_INT = 2**63 - 1
"""Largest integer any field may hold (int64), whatever its own range."""

MAX_DIM = 2**31 - 1
"""Largest single dimension of an operator (m, n, k, c, h, w, batch, seq, ...): int32."""

MAX_ARRAY_SIDE = 65_536
"""Most PEs along one side of a systolic array."""

MAX_WORD_BYTES = 64
"""Largest word (operand, output or partial sum) in bytes: a 512-bit word."""

MAX_LAYER_FOLDS = 2_000_000
"""Most folds (tiles) one layer may replay on a systolic array: about 2 GB of events in the
SimPy replay and 300 MB in the analytic path (measured: 1.56 M folds took 1.95 GB, 34 s)."""

MAX_GPU_CTAS = 2_000_000
"""Most CTAs one GPU operator may replay as events (one SimPy process each); larger
operators run with ``--mode analytic`` (closed form)."""

MAX_SWEEP_POINTS = 5_000_000
"""Most design points a sweep may enumerate (grid before constraints, or samples)."""

MAX_WORKERS = 1024
"""Most local worker processes a sweep may start."""

DASK_CONNECT_TIMEOUT_S = 10.0
"""Longest wait (s) to reach a Dask scheduler (TCP connection and Dask's handshake together)
and, once connected, for its first worker; Dask's own connect timeout is 30 s."""

MAX_SCHEDULER_ADDRESS_CHARS = 256
"""Longest Dask scheduler address (``--scheduler``), characters."""

MAX_RANGE_VALUES = 10_000
"""Most values one sweep parameter range may expand to."""

MAX_CONSTRAINT_EVAL_S = 60.0
"""Time budget for evaluating the constraints over every grid point of a sweep, seconds."""

MAX_EXPR_CHARS = 1_000
"""Longest constraint expression (characters)."""

MAX_EXPR_NODES = 200
"""Most syntax-tree nodes in one constraint expression."""

MAX_EXPR_EXPONENT = 64
"""Largest absolute exponent of ``**`` in a constraint."""

MAX_EXPR_MAGNITUDE = 2**256
"""Largest absolute value of any intermediate number in a constraint."""

def check_number(value: Any, *, file: str | None, field: str, integer: bool = False,
                 positive: bool = False, non_negative: bool = False,
                 maximum: float | None = None, shown: Any = None,
                 error: type[ConfigError] = ConfigError, allow_inf: bool = False) -> float | int:
    """A finite number within range, or a :class:`ConfigError` naming ``file``, ``field``.

    ``integer``: whole and within int64; ``maximum``: the largest allowed value (e.g.
    :data:`MAX_DIM`); ``error``: the error class (e.g. ``WorkloadError``). Returns the value
    (an ``int`` when ``integer``). ``allow_inf``: ``+inf`` passes (an unlimited bandwidth).
    """
    bad = value if shown is None else shown
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(file, field, bad, "expected an integer" if integer else "expected a number")
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise error(file, field, bad, "out of range (beyond int64)")
    elif allow_inf and value == math.inf and not integer:
        return value
    elif not math.isfinite(value):
        raise error(file, field, bad, "must be a finite number")
    if integer:
        if value != int(value):
            raise error(file, field, bad, "expected an integer")
        if abs(value) > MAX_INT:
            raise error(file, field, bad, "out of range (beyond int64)")
        value = int(value)
    if positive and value <= 0:
        raise error(file, field, bad, "must be > 0")
    if non_negative and value < 0:
        raise error(file, field, bad, "must be >= 0")
    if maximum is not None and value > maximum:
        raise error(file, field, bad, f"too large (limit {maximum:,})")
    return value


def check_count(n: float, limit: int, *, file: str | None, field: str, what: str,
                hint: str = "") -> None:
    """Refuse work whose size ``n`` (points, folds, CTAs) exceeds ``limit``, before doing it."""
    if n > limit:
        shown = f"{n:,.0f} {what}" if math.isfinite(n) else f"{n} {what}"
        raise ConfigError(file, field, shown, f"more than the limit of {limit:,} {what}"
                          + (f"; {hint}" if hint else ""))


def check_file_size(path: Any, *, file: str | None = None, limit: int = MAX_FILE_BYTES) -> None:
    """Refuse a file larger than ``limit`` bytes before reading it (a missing file passes)."""
    import os

    try:
        size = os.stat(path).st_size
    except OSError:
        return
    if size > limit:
        raise ConfigError(file or str(path), None, None,
                          f"file of {size:,} bytes is larger than the limit of {limit:,} bytes")
