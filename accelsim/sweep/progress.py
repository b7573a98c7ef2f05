"""A plain-text progress bar on stderr: done/total, percent, points per second and ETA.

No third-party dependency (tqdm would be one more install for one line of output). On a
terminal the bar redraws in place at most 10 times a second; on a pipe or file it prints a
line every 5 seconds instead, so logs stay readable.

Imports: stdlib only.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def format_duration(seconds: float) -> str:
    """``3725 -> '1:02:05'``, ``65 -> '1:05'``; ``'--:--'`` when unknown."""
    if seconds != seconds or seconds == float("inf") or seconds < 0:
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Progress of ``total`` points of which ``already`` were done before this run."""

    def __init__(self, total: int, already: int = 0, *, stream: TextIO | None = None,
                 enabled: bool = True, label: str = "sweep") -> None:
        self.total = total
        self.already = already
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.label = label
        self.start = time.monotonic()
        self._last = self.start
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    @property
    def rate(self) -> float:
        """Points per second evaluated by this run."""
        elapsed = time.monotonic() - self.start
        return self.done / elapsed if elapsed > 0.2 else 0.0

    def line(self, width: int = 24) -> str:
        """The current progress line (no newline)."""
        count = self.already + self.done
        frac = count / self.total if self.total else 1.0
        filled = int(frac * width)
        bar = "#" * filled + "." * (width - filled)
        rate = self.rate
        left = self.total - count
        eta = left / rate if rate > 0 else float("nan")
        shown = f"{rate:,.1f}" if rate > 0 else "--"
        return (f"{self.label} [{bar}] {count}/{self.total} {100 * frac:5.1f}% "
                f"{shown} pt/s ETA {format_duration(eta if left else 0.0)}")

    def update(self, n: int) -> None:
        """Count ``n`` more finished points and redraw if due."""
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last >= (0.1 if self._tty else 5.0):
            self._last = now
            self._draw()

    def _draw(self, end: str = "") -> None:
        if self._tty:
            self.stream.write("\r" + self.line() + end)
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """Draw the final state and end the line."""
        if self.enabled:
            self._draw("\n" if self._tty else "")
