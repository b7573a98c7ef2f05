"""Error types. Every user-facing failure is an :class:`AccelsimError` whose ``str`` is one line.

Messages show text from files through :func:`accelsim.safe_text.show` (no raw control bytes).

Imports: safe_text (stdlib only otherwise).
"""

from __future__ import annotations

import difflib
from typing import Any

from accelsim.safe_text import show

MAX_SHOWN_CHARS = 80
"""Longest rendering of a bad value in an error message (see :func:`summarise`)."""


def summarise(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """A short one-line rendering of ``value`` for an error message.

    Never stringifies an unbounded value: containers are summarised by type and size before
    any ``str()`` (an alias-expanded YAML list of a billion items costs nothing), strings and
    bytes are cut before ``repr``, a huge integer is shown by its number of digits.
    """
    if isinstance(value, str):
        shown = repr(value[: limit + 1])
    elif isinstance(value, bool) or value is None:
        shown = str(value)
    elif isinstance(value, int):
        if value.bit_length() > 256:
            return f"<integer of about {int(value.bit_length() * 0.30103) + 1} digits>"
        shown = str(value)
    elif isinstance(value, float):
        shown = repr(value)
    elif isinstance(value, (bytes, bytearray)):
        shown = repr(bytes(value[: limit + 1]))
    elif isinstance(value, dict):
        if len(value) > 8 or _deeper_than(value, 2):
            return f"<mapping of {len(value)} keys>"
        shown = "{" + ", ".join(f"{summarise(k, 24)}: {summarise(v, 32)}"
                                for k, v in value.items()) + "}"
    elif isinstance(value, (list, tuple, set, frozenset)):
        if len(value) > 8 or _deeper_than(value, 2):
            return f"<{type(value).__name__} of {len(value)} items>"
        shown = "[" + ", ".join(summarise(v, 32) for v in value) + "]"
    else:
        shown = f"<{type(value).__name__}>"
    shown = " ".join(shown.split("\n"))
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _deeper_than(value: Any, depth: int) -> bool:
    """Whether ``value`` nests containers more than ``depth`` levels deep (first items only)."""
    if not isinstance(value, (dict, list, tuple, set, frozenset)):
        return False
    if depth <= 0:
        return True
    items = list(value.values())[:8] if isinstance(value, dict) else list(value)[:8]
    return any(_deeper_than(v, depth - 1) for v in items)


def closest(name: str, choices: list[str]) -> str | None:
    """The choice a mistyped ``name`` most likely meant, or None.

    A choice that starts with ``name`` wins (the shortest such, so ``gpt`` gives ``gpt2``);
    then the closest by edit similarity after folding case and ``-``/``_``, so
    ``llama3-8b-decode`` gives ``llama3_8b_decode``.
    """
    def fold(s: str) -> str:
        return s.lower().replace("-", "_").replace(" ", "_")

    key = fold(str(name))
    folded = {fold(c): c for c in choices}
    if key in folded:
        return folded[key]
    prefixed = sorted((c for f, c in folded.items() if key and f.startswith(key)), key=len)
    if prefixed:
        return prefixed[0]
    near = difflib.get_close_matches(key, list(folded), n=1, cutoff=0.6)
    return folded[near[0]] if near else None


class AccelsimError(Exception):
    """Base class of every error that the CLI reports as one line and exit code 2."""


class ConfigError(AccelsimError):
    """Bad input in a file or argument: names the file, the field path and the bad value.

    ``str(err)`` reads ``FILE: FIELD = VALUE: REASON``, always one line; the value is
    summarised (:func:`summarise`), never stringified whole.
    """

    def __init__(self, file: str | None, field: str | None, value: Any, reason: str) -> None:
        self.file = file
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(self._format())

    def _format(self) -> str:
        where = _one_line(str(self.file), 200) if self.file else "<input>"
        reason = _one_line(str(self.reason), 400)
        field = _one_line(str(self.field), 120) if self.field else ""
        if field and self.value is None:
            return f"{where}: {field}: {reason}"
        if field:
            return f"{where}: {field} = {summarise(self.value)}: {reason}"
        return f"{where}: {reason}"


def _one_line(text: str, limit: int) -> str:
    """``text`` with line breaks folded into spaces, other control characters escaped
    (:func:`~accelsim.safe_text.show`), cut to ``limit`` characters."""
    text = show(" ".join(text[: limit * 2].split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


class WorkloadError(ConfigError):
    """Bad workload input (topology CSV row, YAML op, model name)."""


class UnsupportedError(AccelsimError):
    """A valid request that the chosen hardware cannot do (e.g. fp8 on a V100)."""
