"""Sweep results on disk: one row per design point, keyed by ``point_id``, resumable.

Two formats, picked by ``fmt`` or the file suffix (``.csv`` -> CSV, anything else Parquet):

* **Parquet**: one file, rewritten atomically at each flush (written to a hidden temporary
  file beside it, then ``os.replace``-d over it). Whatever interrupts the sweep (Ctrl-C, a
  kill), the file on disk is the last complete version. Flushes are spaced so that rewriting
  costs at most ~10 % of the run (at least one second apart).
* **CSV**: the header once, then rows appended at each flush. On ``resume``, every complete
  row is kept whatever follows or surrounds it (a row torn by a hard kill, a garbage tail with
  or without newlines, binary junk); only the damaged lines are dropped (:func:`_repair_csv`).
  A damaged Parquet file cannot be partly read: it is refused, and left as it is.

Rows are kept unique by ``point_id`` in memory and on disk; :func:`read_results` also drops
any duplicate key it meets, keeping the first. Opening an existing file needs ``resume=True``
(continue it) or ``force=True`` (replace it), so that no result is lost by accident.
Resuming matches columns by name: a CSV file whose header has the same columns in another
order is continued in its own order; a file with other columns is refused and left untouched.

One writer per file: opening takes a lock file ``.NAME.lock`` beside it, holding the writer's
pid (:mod:`accelsim.sweep.lock`); a second sweep onto the same file is refused in one line
naming the holder's pid, and a lock left by a writer that died is taken over with a note.
FIFOs, devices and sockets are refused as stores (they cannot be re-read or replaced), and so is
anything under ``/dev``, ``/proc`` or ``/sys`` but ``/dev/null``, which discards the rows.

Imports: errors, sweep.lock, pandas, pyarrow (for Parquet).
"""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim.errors import ConfigError
from accelsim.sweep.lock import StoreLock, check_store_path

FORMATS = ("parquet", "csv")

_TEXT_COLUMNS = ("point_id", "error", "hw_id", "workload_id", "accelsim_version")
"""Columns read back from CSV as text whatever they look like."""


def infer_format(path: str | os.PathLike, fmt: str | None = None) -> str:
    """``fmt`` if given, else ``csv`` for a ``.csv`` path and ``parquet`` otherwise."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise ConfigError(None, "--format", fmt, f"must be one of {', '.join(FORMATS)}")
        return fmt
    return "csv" if str(path).lower().endswith(".csv") else "parquet"


def _line_ok(line: bytes, width: int, pid: int) -> bool:
    """Whether ``line`` (newline included) is one complete CSV row of ``width`` fields."""
    if not line.endswith(b"\n") or b"\x00" in line:
        return False
    try:
        text = line.decode("utf-8")
        fields = next(csv.reader([text.rstrip("\r\n")]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return False
    return len(fields) == width and bool(fields[pid].strip())


def _tail(path: Path) -> bytes:
    """Everything after the first 1 MiB line of ``path`` (the rest of an over-long header)."""
    with open(path, "rb") as fh:
        fh.readline(1 << 20)
        return fh.read(1 << 20)


def _csv_header(path: Path) -> list[str] | None:
    """The column names of a CSV file's first line, or None if it is not one complete line."""
    with open(path, "rb") as fh:
        header = fh.readline(1 << 20)
    if not header.endswith(b"\n"):
        return None
    try:
        return next(csv.reader([header.decode("utf-8").rstrip("\r\n")]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return None


def _repair_csv(path: Path) -> int:
    """Keep every complete row of a CSV results file, whatever damage follows or sits between.

    A row is complete when it ends with a newline, is UTF-8 text and parses into as many
    fields as the header has, with a non-empty ``point_id``. Torn last rows (a kill during an
    append), garbage tails with or without newlines, binary junk and NUL bytes are dropped;
    the file is rewritten atomically only when something was dropped. A file whose header is
    not a results header is left alone (:func:`read_results` then names it). Returns the
    number of lines dropped. The header is checked by the caller (:func:`_csv_header`).
    """
    with open(path, "rb") as fh:
        header = fh.readline(1 << 20)
    try:
        names = next(csv.reader([header.decode("utf-8").rstrip("\r\n")]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return 0
    if not header.endswith(b"\n") or "point_id" not in names:
        return 0
    width, pid = len(names), names.index("point_id")
    bad = 0
    with open(path, "rb") as fh:
        fh.readline()
        for line in fh:
            bad += not _line_ok(line, width, pid)
    if not bad:
        return 0
    tmp = path.with_name(f".{path.name}.repair")
    try:
        with open(path, "rb") as src, open(tmp, "wb") as dst:
            dst.write(src.readline())
            for line in src:
                if _line_ok(line, width, pid):
                    dst.write(line)
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return bad


def read_results(path: str | os.PathLike, fmt: str | None = None) -> pd.DataFrame:
    """The rows of a results file, unique by ``point_id`` (first kept), in file order."""
    p = Path(path)
    fmt = infer_format(p, fmt)
    if not p.is_file():
        raise ConfigError(str(p), None, None, "no such results file")
    try:
        if fmt == "csv":
            if p.stat().st_size == 0:
                return pd.DataFrame()
            # keys are hex digests: never let one parse as a number ("12e4...")
            df = pd.read_csv(p, dtype={c: str for c in _TEXT_COLUMNS}, keep_default_na=True)
        else:
            df = pd.read_parquet(p)
    except (ValueError, OSError) as exc:
        raise ConfigError(str(p), None, None,
                          f"not a readable {fmt} results file ({exc})") from None
    if "point_id" not in df.columns:
        raise ConfigError(str(p), "point_id", None, "not a sweep results file (no point_id column)")
    if "error" in df.columns:
        df["error"] = df["error"].fillna("").astype(str)
    return df.drop_duplicates("point_id", keep="first").reset_index(drop=True)


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Block SIGINT in this thread for the duration (POSIX); it is delivered on exit."""
    block = getattr(signal, "pthread_sigmask", None)
    if block is None:
        yield
        return
    old = block(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        block(signal.SIG_SETMASK, old)


class ResultStore:
    """An open results file: :meth:`add` rows, :meth:`flush` to disk, :meth:`close` at the end.

    Opening takes the file's lock (:class:`~accelsim.sweep.lock.StoreLock`: one writer per
    file, CSV and Parquet alike) and :meth:`close` gives it back; a FIFO, device or socket is
    refused before it is opened, ``/dev/null`` discards the rows
    (:func:`~accelsim.sweep.lock.check_store_path`).
    """

    def __init__(self, path: str | os.PathLike, columns: Sequence[str], *, fmt: str | None = None,
                 resume: bool = False, force: bool = False, min_interval_s: float = 1.0) -> None:
        self.path = Path(path)
        self.fmt = infer_format(self.path, fmt)
        self.columns = list(columns)
        self._colset = frozenset(self.columns)
        self.min_interval_s = min_interval_s
        self._pending: list[dict[str, Any]] = []
        self._frame = pd.DataFrame(columns=self.columns)
        self._last_flush = time.monotonic()
        self._flush_cost = 0.0
        self.done: set[str] = set()
        self.repaired_lines = 0
        """Damaged lines dropped from a CSV file opened with ``resume``."""
        self._tmp = self.path.with_name(f".{self.path.name}.tmp")
        self.discard = check_store_path(self.path)
        """``/dev/null``: rows are counted and thrown away; nothing is locked or written."""
        self._lock = StoreLock(self.path)
        self.lock_note: str | None = None
        """Set when a stale lock left by a dead writer was taken over."""
        if self.discard:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock.acquire()  # one writer at a time, before the file is looked at
        self.lock_note = self._lock.note
        try:
            self._open_file(resume, force)
        except BaseException:
            self._lock.release()
            raise

    def _open_file(self, resume: bool, force: bool) -> None:
        if self._tmp.exists():
            self._tmp.unlink()  # left by a run killed mid-write; the real file is intact
        if self.path.exists():
            if resume:
                self._load_existing()
            elif force:
                self.path.unlink()
            else:
                raise ConfigError(str(self.path), "--out", str(self.path),
                                  "already exists; pass --resume to continue it or --force to "
                                  "replace it")
        if self.fmt == "csv" and not self.path.exists():
            self._write_header()

    def _write_header(self) -> None:
        with open(self.path, "w", newline="") as fh:
            fh.write(",".join(self.columns) + "\n")

    def _mismatch(self, names: Sequence[str]) -> ConfigError:
        extra = sorted(set(names) ^ self._colset) or sorted(set(names))
        return ConfigError(str(self.path), "columns", ", ".join(map(str, extra)),
                           "the file was written by a sweep with other parameters or metrics; "
                           "use another --out or --force")

    def _load_existing(self) -> None:
        """Continue an existing file; refuse one of other columns without touching it.

        Columns are matched by name: a CSV file whose header lists the same columns in
        another order is appended to in its own order.
        """
        if self.fmt == "csv":
            if self.path.stat().st_size == 0:
                self._write_header()
                return
            with open(self.path, "rb") as fh:
                first = fh.readline(1 << 20)
            if not first.endswith(b"\n"):  # no complete first line
                whole = b"\n" not in _tail(self.path)
                if whole and ",".join(self.columns).encode().startswith(first.rstrip(b"\r")):
                    self._write_header()  # a kill while the header was written: no row yet
                    return
                raise ConfigError(str(self.path), None, None,
                                  "not a sweep results file (no complete header line)")
            names = _csv_header(self.path)
            if names is not None and "point_id" in names:
                if len(names) != len(self.columns) or set(names) != self._colset:
                    raise self._mismatch(names)
                self.columns = list(names)
            self.repaired_lines = _repair_csv(self.path)
        old = read_results(self.path, self.fmt)
        if len(old.columns) != len(self.columns) or set(old.columns) != self._colset:
            raise self._mismatch(list(old.columns))
        self.done = set(old["point_id"])
        if self.fmt == "parquet":
            self._frame = old[self.columns]

    def __len__(self) -> int:
        return len(self.done)

    def add(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Queue rows not seen before; flush when due. Returns the number of new rows."""
        new = 0
        for row in rows:
            pid = row["point_id"]
            if pid in self.done:
                continue
            self.done.add(pid)
            self._pending.append(row if row.keys() == self._colset
                                 else {c: row.get(c) for c in self.columns})
            new += 1
        now = time.monotonic()
        if (self._pending
                and now - self._last_flush >= max(self.min_interval_s, 10 * self._flush_cost)):
            self.flush()
        return new

    def flush(self) -> None:
        """Write the queued rows (atomically for Parquet); the file stays valid if interrupted.

        Ctrl-C is held off (SIGINT blocked) while the rows are written and marked written, so
        that an interrupt never leaves rows both on disk and still queued (they would be
        written twice by :meth:`close`); a failed CSV append is cut back off the file.
        """
        if not self._pending:
            return
        if self.discard:
            self._pending = []
            return
        t0 = time.monotonic()
        batch = pd.DataFrame(self._pending, columns=self.columns)
        with _sigint_held():
            if self.fmt == "csv":
                text = batch.to_csv(index=False, header=False)
                size = self.path.stat().st_size
                try:
                    with open(self.path, "a", newline="") as fh:
                        fh.write(text)
                        fh.flush()
                        os.fsync(fh.fileno())
                except BaseException:
                    with open(self.path, "rb+") as fh:
                        fh.truncate(size)
                    raise
                self._pending = []
            else:
                frame = batch if self._frame.empty else pd.concat([self._frame, batch],
                                                                  ignore_index=True)
                try:
                    frame.to_parquet(self._tmp, index=False)
                    os.replace(self._tmp, self.path)
                except BaseException:
                    if self._tmp.exists():
                        self._tmp.unlink()
                    raise
                self._frame = frame
                self._pending = []
        self._last_flush = time.monotonic()
        self._flush_cost = self._last_flush - t0

    def close(self, order: Sequence[str] | None = None) -> None:
        """Flush; for Parquet, also rewrite the rows in ``order`` of point ids when given."""
        try:
            self._close(order)
        finally:
            self._lock.release()

    def _close(self, order: Sequence[str] | None) -> None:
        self.flush()
        if self.fmt == "parquet" and order is not None and not self._frame.empty:
            rank = {pid: i for i, pid in enumerate(order)}
            key = self._frame["point_id"].map(lambda p: rank.get(p, len(rank)))
            ordered = self._frame.iloc[key.argsort(kind="stable")].reset_index(drop=True)
            if not ordered["point_id"].equals(self._frame["point_id"]):
                self._frame = ordered
                self._pending = []
                ordered.to_parquet(self._tmp, index=False)
                os.replace(self._tmp, self.path)
