"""Error types. Every user-facing failure is an :class:`AccelsimError` whose ``str`` is one line.

Imports: stdlib only.
"""

from __future__ import annotations

from typing import Any


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
