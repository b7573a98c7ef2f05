"""One writer per results file, and only regular files (or ``/dev/null``) as stores or specs.

:class:`StoreLock` is a lock file beside the store (``.NAME.lock``) holding the writer's pid.
On POSIX it is held with ``flock``, so the kernel releases it when the writer dies however it
dies; a lock file left behind by a dead writer (its pid no longer holds it) is taken over, with
a note naming that pid. Where ``flock`` is missing, the lock is created exclusively and a lock
whose pid is not alive is taken over.

:func:`check_regular` refuses FIFOs, character and block devices and sockets before they are
opened: a sweep store is re-read on ``--resume`` and replaced as it grows (Parquet) or appended
to (CSV), which a FIFO would block on and ``/dev/null`` or ``/dev/stdout`` cannot hold; a spec
is read whole, which a FIFO without a writer would block on forever. ``/dev/null`` as a store
is accepted and discards the rows (:func:`check_store_path`).

Imports: errors (stdlib only otherwise).
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from accelsim.errors import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover (not POSIX)
    fcntl = None  # type: ignore[assignment]

_KINDS = ((stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))

PID_WAIT_S = 1.0
"""Longest wait (s) for a lock's new holder to write its pid, so that a refusal can name it."""


def special_kind(mode: int) -> str | None:
    """What a non-regular, non-directory file is (``"FIFO (named pipe)"``, ...), else None."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "special file"


def check_regular(path: str | os.PathLike, *, file: str | None, field: str, what: str) -> None:
    """Refuse ``path`` if it exists and is not a regular file (a missing path passes).

    Symbolic links are followed (a link to a regular file is a regular file). ``what`` says
    what the path is for, in the message (``"a sweep store"``, ``"a sweep spec"``).
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise ConfigError(file, field, str(path), f"cannot be inspected ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(file, field, str(path), "is a directory, expected a file")
    kind = special_kind(st.st_mode)
    if kind is not None:
        raise ConfigError(file, field, str(path),
                          f"is a {kind}, not a regular file: {what} must be a regular file")


_SYSTEM_DIRS = ("/dev/", "/proc/", "/sys/")


def is_devnull(path: str | os.PathLike) -> bool:
    """Whether ``path`` is the null device (``/dev/null``, or a link to it)."""
    try:
        return os.path.samefile(path, os.devnull)
    except OSError:
        return False


def check_store_path(path: str | os.PathLike, *, field: str = "--out") -> bool:
    """Refuse what cannot be a sweep store; True for the null device (results thrown away).

    A store is re-read, appended to or replaced, with a lock file and a temporary file made
    beside it, so it must be a regular file (or not exist yet) outside ``/dev``, ``/proc`` and
    ``/sys`` (``/dev/stdout`` may point to a regular file, but its neighbours are devices).
    ``/dev/null`` is accepted: the sweep runs and its rows are discarded (a dry run, a timing).
    """
    if is_devnull(path):
        return True
    check_regular(path, file=str(path), field=field, what="a sweep store")
    if os.path.abspath(path).startswith(_SYSTEM_DIRS):
        raise ConfigError(str(path), field, str(path),
                          "is a system path (under /dev, /proc or /sys), not a file of its own: "
                          "a sweep store must be a regular file (/dev/null discards the rows)")
    return False


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    except OSError:
        return False
    return True


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 64, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() and len(text) < 20 else None


class StoreLock:
    """The lock of one results file: :meth:`acquire` or a one-line refusal, :meth:`release`."""

    def __init__(self, store: str | os.PathLike) -> None:
        self.store = Path(store)
        self.path = self.store.with_name(f".{self.store.name}.lock")
        self.note: str | None = None
        """Set when a stale lock was taken over (to print once)."""
        self._fd: int | None = None
        self._owner = 0

    def _busy(self, holder: int | None) -> ConfigError:
        who = f"pid {holder}" if holder is not None else "a process whose pid is unknown"
        return ConfigError(str(self.store), "--out", None,
                           f"is being written by another sweep ({who}, "
                           f"lock file {self.path.name}); "
                           "wait for it to finish or stop it, then --resume")

    def _open(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(self.path, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as exc:
            raise ConfigError(str(self.store), "--out", None,
                              f"cannot create its lock file {self.path.name} "
                              f"({exc.strerror})") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise ConfigError(str(self.store), "--out", None,
                              f"its lock file {self.path.name} is not a regular file")
        return fd

    def _holder(self, fd: int) -> int | None:
        """The pid in a lock file held by someone else (waiting briefly for a new holder)."""
        deadline = time.monotonic() + PID_WAIT_S
        while True:
            pid = _read_pid(fd)
            if (pid is not None and _pid_alive(pid)) or time.monotonic() > deadline:
                return pid
            time.sleep(0.01)

    def acquire(self) -> None:
        """Take the lock, or raise a one-line :class:`ConfigError` naming the holder's pid."""
        for _ in range(20):
            fd = self._open()
            try:
                if fcntl is None:  # pragma: no cover (not POSIX)
                    if self._acquire_exclusive(fd):
                        return
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    raise self._busy(self._holder(fd)) from None
                try:  # still the file at the path (not one a releasing holder just unlinked)?
                    same = os.stat(self.path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    same = False
                if not same:
                    os.close(fd)
                    continue
                self._take(fd, _read_pid(fd))
                return
            except BaseException:
                if self._fd != fd:
                    os.close(fd)
                raise
        raise self._busy(None)

    def _acquire_exclusive(self, fd: int) -> bool:  # pragma: no cover (not POSIX)
        """Without ``flock``: a lock file holding a live pid is busy; a dead one is stale."""
        old = _read_pid(fd)
        if old is not None and old != os.getpid() and _pid_alive(old):
            raise self._busy(old)
        self._take(fd, old)
        return True

    def _take(self, fd: int, old: int | None) -> None:
        if old is not None and old != os.getpid():
            self.note = (f"took over the stale lock {self.path.name} of {self.store.name}: "
                         f"pid {old} no longer holds it")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd, self._owner = fd, os.getpid()

    @property
    def held(self) -> bool:
        """Whether this process holds the lock."""
        return self._fd is not None and self._owner == os.getpid()

    def release(self) -> None:
        """Remove the lock file and let go (a no-op if not held, or in a forked child)."""
        if not self.held:
            return
        fd, self._fd = self._fd, None
        try:
            if os.stat(self.path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(fd)  # type: ignore[arg-type]

    def __del__(self) -> None:
        self.release()
