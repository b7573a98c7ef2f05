"""Error types. Every user-facing failure is an :class:`AccelsimError` whose ``str`` is one line.

Imports: stdlib only.
"""

from __future__ import annotations

import difflib
from typing import Any


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

    ``str(err)`` reads ``FILE: FIELD = VALUE: REASON``.
    """

    def __init__(self, file: str | None, field: str | None, value: Any, reason: str) -> None:
        self.file = file
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(self._format())

    def _format(self) -> str:
        where = str(self.file) if self.file else "<input>"
        if self.field and self.value is None:
            return f"{where}: {self.field}: {self.reason}"
        if self.field:
            shown = repr(self.value) if isinstance(self.value, str) else str(self.value)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            return f"{where}: {self.field} = {shown}: {self.reason}"
        return f"{where}: {self.reason}"


class WorkloadError(ConfigError):
    """Bad workload input (topology CSV row, YAML op, model name)."""


class UnsupportedError(AccelsimError):
    """A valid request that the chosen hardware cannot do (e.g. fp8 on a V100)."""
