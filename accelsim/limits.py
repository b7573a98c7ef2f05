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

MAX_LAYERS = 10_000
"""Most layers (transformer blocks) one model may have (the largest published dense models
have about 130): a Hugging Face config's ``num_hidden_layers``/``n_layer``, checked before any
layer is built."""

MAX_GRAPH_OPS = 2_000_000
"""Most operators one workload or model graph may hold (a workload YAML's ``ops``, a built
model; a 1,000-layer transformer has about 20,000), checked as they are added."""

MAX_CALLS_PER_STEP = 1_000
"""Most calls one lowering-table step may repeat (its ``count``; ``config/lowering.py`` checks
1..1000 inline)."""

MAX_LOWERED_CALLS = 1_000_000
"""Most framework calls one whole-model run may lower to (operators times the calls their
lowering entries make), to be counted before any call is built (the check belongs in
``mapping/gpu_lowering.py`` ``lower``/``lower_sites``; not yet applied there)."""

MAX_TENSOR_ELEMENTS = 2**53
"""Most elements of one tensor of a captured program (the product of its shape; bytes stay
exact in a float); the check belongs in ``workload/program.py`` ``_tensor`` (not yet applied)."""

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


def check_nesting(value: Any, *, file: str | None, limit: int = MAX_NESTING,
                  error: type[ConfigError] = ConfigError) -> None:
    """Refuse a parsed document (JSON) whose mappings and lists nest deeper than ``limit``;
    iterative (no recursion), stops at the first too-deep container."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise error(file, None, None, f"nested deeper than {limit} levels")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))


def parse_json(text: str, *, file: str | None, limit: int = MAX_NESTING,
               error: type[ConfigError] = ConfigError) -> Any:
    """``json.loads(text)`` within the nesting limit: invalid JSON (line and reason), nesting
    too deep for the parser (no ``RecursionError``) or deeper than ``limit``, and the
    non-standard ``NaN``/``Infinity`` constants are one-line ``error`` lines naming ``file``."""
    import json

    def constant(name: str) -> Any:
        raise error(file, None, name, "not a JSON number (NaN and Infinity are not JSON)")

    try:
        doc = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise error(file, f"line {exc.lineno}", None, f"not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise error(file, None, None, f"nested deeper than {limit} levels") from None
    check_nesting(doc, file=file, limit=limit, error=error)
    return doc


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
