"""Dask executor: the same chunks as :mod:`accelsim.sweep.local`, on a ``dask.distributed`` cluster.

``dask[distributed]`` is optional: it is imported only here, when ``--scheduler`` is given,
and its absence is a one-line error with the pip command.

Fault tolerance. Each chunk is one task whose result comes back to this process, which is the
only writer of the results file. If a worker dies, the scheduler re-runs its unfinished tasks
elsewhere; a task that keeps losing workers (Dask's ``KilledWorker``) is submitted again here,
up to :data:`RESUBMITS` times. Tasks are pure functions of their points, so running one twice
is harmless, and the store keeps one row per ``point_id``: no point is lost or duplicated.

Nothing waits unbounded. The address is checked before any connection (:func:`check_address`:
scheme, host, port range), a refused port is told at once by a plain TCP connection, and
reaching the scheduler (and its first worker) is bounded by
:data:`~accelsim.limits.DASK_CONNECT_TIMEOUT_S`; every failure is one line, and the client is
shut down on every error path (no traceback when the interpreter exits).

Imports: dask.distributed (lazily), errors, limits, sweep.evaluate, sweep.local.
"""

from __future__ import annotations

import gc
import ipaddress
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from accelsim.errors import AccelsimError, ConfigError
from accelsim.limits import DASK_CONNECT_TIMEOUT_S, MAX_SCHEDULER_ADDRESS_CHARS
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


SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
"""The address schemes Dask's ``distributed`` speaks; an address without one is ``tcp``."""

_LABEL = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")


def _bad(address: str, reason: str) -> ConfigError:
    return ConfigError("command line", "--scheduler", address, reason)


def check_address(address: Any) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of a Dask scheduler address, or a one-line error; no I/O.

    Accepted: ``SCHEME://HOST:PORT`` with a scheme of :data:`SCHEMES` (``tcp`` when left out),
    ``HOST`` a host name, an IPv4 address or a bracketed IPv6 address (``[::1]``), ``PORT``
    within 1..65535; ``inproc://...`` (a scheduler in this very process) as Dask writes it,
    with no port. At most :data:`~accelsim.limits.MAX_SCHEDULER_ADDRESS_CHARS` characters.
    """
    if not isinstance(address, str) or not address:
        raise _bad(str(address), "expected an address such as tcp://host:8786")
    if len(address) > MAX_SCHEDULER_ADDRESS_CHARS:
        raise _bad(address, f"longer than {MAX_SCHEDULER_ADDRESS_CHARS} characters")
    if not address.isascii() or not address.isprintable() or any(c.isspace() for c in address):
        raise _bad(address, "contains spaces or control or non-ASCII characters")
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    scheme = scheme.lower()
    if scheme not in SCHEMES:
        raise _bad(address, f"unknown scheme {scheme!r} (known: {', '.join(SCHEMES)})")
    if scheme == "inproc":
        host, _, tail = rest.partition("/")
        pid, _, num = tail.partition("/")
        if not (host and pid.isdigit() and num.isdigit()):
            raise _bad(address, "expected inproc://HOST/PID/N, as Dask writes it")
        if int(pid) != os.getpid():
            raise _bad(address, f"names a scheduler inside process {pid}, not this one "
                                f"({os.getpid()}); give its tcp:// address")
        return scheme, host, None
    if "/" in rest or "?" in rest or "@" in rest:
        raise _bad(address, "expected SCHEME://HOST:PORT, with no path, query or user")
    if rest.startswith("["):
        host, bracket, tail = rest[1:].partition("]")
        if not bracket:
            raise _bad(address, "unclosed [ of an IPv6 address")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise _bad(address, f"{host!r} is not an IPv6 address") from None
        if not tail.startswith(":"):
            raise _bad(address, "missing :PORT (e.g. tcp://[::1]:8786)")
        port_text = tail[1:]
    else:
        host, colon, port_text = rest.rpartition(":")
        if not colon:
            raise _bad(address, "missing :PORT (e.g. tcp://host:8786)")
        if ":" in host:
            raise _bad(address, "an IPv6 address goes in brackets (e.g. tcp://[::1]:8786)")
        labels = host.rstrip(".").split(".")
        if not host or len(host) > 253 or not all(_LABEL.fullmatch(x) for x in labels):
            raise _bad(address, f"{host!r} is not a host name or IP address")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise _bad(address, f"port {port_text!r} is not a number within 1..65535")
    return scheme, host, int(port_text)


def _probe(address: str, scheme: str, host: str, port: int, deadline: float) -> None:
    """Open a TCP connection first: a refused, unknown or silent port fails here, fast.

    Over plain ``tcp`` a Dask scheduler speaks first (its handshake, framed by an 8-byte
    little-endian length); a port that accepts but sends nothing is told within the bound,
    where Dask's own handshake read would wait for ever.
    """
    def fail(reason: str) -> AccelsimError:
        return AccelsimError(f"cannot reach the Dask scheduler at {address}: {reason}")

    try:
        with socket.create_connection((host, port), timeout=_left(deadline)) as sock:
            if scheme != "tcp":
                return
            sock.settimeout(_left(deadline))
            prelude = b""
            while len(prelude) < 8:
                chunk = sock.recv(8 - len(prelude))
                if not chunk:
                    raise fail("the connection was closed without a Dask handshake")
                prelude += chunk
    except ConnectionRefusedError:
        raise fail("connection refused (no scheduler listens there)") from None
    except socket.gaierror as exc:
        raise fail(f"unknown host ({exc.strerror})") from None
    except TimeoutError:
        raise fail(f"no Dask handshake within {DASK_CONNECT_TIMEOUT_S:g} s "
                   "(is it a Dask scheduler?)") from None
    except OSError as exc:
        raise fail(str(exc.strerror or exc)) from None
    if not 0 < int.from_bytes(prelude, "little") < 2**20:
        raise fail("it does not speak Dask's protocol (is it a Dask scheduler?)")


def _left(deadline: float) -> float:
    """Seconds left before ``deadline`` (at least a tenth of a second)."""
    return max(0.1, deadline - time.monotonic())


def _client_within(distributed: Any, address: str, deadline: float) -> Any:
    """``distributed.Client(address)``, given up at ``deadline`` whatever Dask waits on.

    The client is made in a daemon thread: a peer that stalls Dask's handshake (which Dask
    reads without a timeout) leaves that thread behind instead of this process.
    """
    box: dict[str, Any] = {}
    timeout = _left(deadline)

    def make() -> None:
        try:
            box["client"] = distributed.Client(address, timeout=timeout, set_as_default=False)
        except BaseException as exc:  # noqa: BLE001 (handed to the caller's thread)
            box["error"] = exc

    thread = threading.Thread(target=make, name="accelsim-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if thread.is_alive():
        raise AccelsimError(f"cannot reach the Dask scheduler at {address}: no Dask handshake "
                            f"within {DASK_CONNECT_TIMEOUT_S:g} s (is it a Dask scheduler?)")
    if "client" in box:
        return box["client"]
    exc = box.pop("error")
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    del exc
    _collect_quietly()
    raise AccelsimError(f"cannot reach the Dask scheduler at {address}: {reason}")


def _collect_quietly() -> None:
    """Collect a half-made ``Client`` now, without its ``__del__`` printing a traceback."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _info: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook


def close_quietly(client: Any) -> None:
    """Close ``client`` within :data:`~accelsim.limits.DASK_CONNECT_TIMEOUT_S`; never raise."""
    try:
        client.close(timeout=DASK_CONNECT_TIMEOUT_S)
    except Exception:  # noqa: BLE001 (a scheduler gone away: nothing left to close)
        pass


def connect(address: str) -> Any:
    """A ``distributed.Client`` to the scheduler at ``address`` (one-line error if unreachable).

    The address is checked first (:func:`check_address`), then a plain TCP connection tells a
    refused or silent port at once; the whole wait is bounded by
    :data:`~accelsim.limits.DASK_CONNECT_TIMEOUT_S` (10 s), and so is the wait for a first
    worker on a scheduler that has none. Every failure is one :class:`AccelsimError`, with no
    traceback left for the interpreter's exit.
    """
    scheme, host, port = check_address(address)
    distributed = _distributed()
    deadline = time.monotonic() + DASK_CONNECT_TIMEOUT_S
    if scheme in ("tcp", "tls", "ws", "wss") and port is not None:
        _probe(address, scheme, host, port, deadline)
    client = _client_within(distributed, address, deadline)
    try:
        if not client.nthreads():
            client.wait_for_workers(1, timeout=max(1.0, _left(deadline)))
    except Exception:  # noqa: BLE001 (TimeoutError, or the scheduler went away)
        close_quietly(client)
        raise AccelsimError(f"the Dask scheduler at {address} has no workers "
                            f"(none joined within {DASK_CONNECT_TIMEOUT_S:g} s)") from None
    except BaseException:
        close_quietly(client)
        raise
    return client


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
                                        "workers; saved rows are kept: rerun with --resume"
                                        ) from None
                stream.add(submit(i, attempt + 1))
                continue
            finally:
                fut.release()
            on_rows(rows)
    finally:
        if futures:
            client.cancel(list(futures), force=True)
        if owned:
            close_quietly(client)
