"""Names from files are data, never paths or terminal commands: the one sanitiser and the one
escaper.

A machine, workload, layer or ONNX node name is whatever its file says: ``../../x``, ``/etc/x``,
``a\\x1b[2J``, five thousand characters, ``=HYPERLINK(...)``. Before such text

* becomes part of an output **file name**: :func:`safe_name` (a fixed alphabet, length-bounded,
  never a path; the original name is written inside the file);
* reaches a **terminal**: :func:`show` (control, format and separator characters shown as
  escapes such as ``\\x1b``, so no ESC byte is ever printed);
* reaches an **HTML** page: :func:`html_text` (:func:`show`, then HTML-escaped);
* reaches a **CSV** cell: :func:`csv_text` (:func:`show`, then a cell that a spreadsheet would
  run as a formula, one starting with ``=``, ``+``, ``-``, ``@``, is prefixed with ``'``);
  :func:`inert_csv_columns` applies it to the text cells of a table's name columns only, so
  numbers (``-1.5``) stay numbers;
* becomes a **plot label**: :func:`plot_text` (:func:`show`, then ``$`` escaped so matplotlib's
  mathtext does not parse it).

Imports: stdlib only (the lowest layer, beside ``units`` and ``errors``).
"""

from __future__ import annotations

import hashlib
import html
import string
from typing import Any

NAME_CHARS = frozenset(string.ascii_letters + string.digits + "._-")
"""The alphabet of a name inside an output file name."""

MAX_NAME_CHARS = 64
"""Longest name inside an output file name (a longer one is cut and tagged with its hash)."""

HASH_CHARS = 8
"""Hex digits of the SHA-256 of the original name appended to a name that had to change."""

MAX_LABEL_CHARS = 100
"""Longest text of a plot label or title (cut with ``...``)."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a CSV cell as a formula (OWASP's list)."""

NAME_COLUMNS = ("layer", "name", "machine", "workload", "hardware", "kernel", "node", "op_name")
"""Table columns whose text comes from names in files (made inert in CSV cells)."""

_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def safe_name(name: object, limit: int = MAX_NAME_CHARS) -> str:
    """``name`` as one component of an output file name: only :data:`NAME_CHARS`, no leading
    ``.`` or ``-`` (never ``.``, ``..``, a hidden file or an option), at most ``limit``
    characters, never empty. A name that is already such is returned unchanged; any other
    has each foreign character replaced by ``_``, is cut, and ends in ``-`` plus the first
    :data:`HASH_CHARS` hex digits of its SHA-256, so two different names never share a file."""
    text = str(name)
    kept = "".join(c if c in NAME_CHARS else "_" for c in text).lstrip(".-")
    if kept == text and 0 < len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    head = kept[: max(limit - HASH_CHARS - 1, 1)] or "name"
    return f"{head}-{digest}"


def _escape_char(c: str) -> str:
    if c in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[c]
    o = ord(c)
    if o < 0x100:
        return f"\\x{o:02x}"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def show(text: object, keep: str = "") -> str:
    """``text`` safe to print: every character that is not printable (control characters such
    as ESC, DEL and C1, format characters such as bidirectional overrides, line and paragraph
    separators, surrogates) written as its escape (``\\x1b``, ``\\u202e``, ``\\n``). Characters
    in ``keep`` (e.g. ``"\\n"`` for multi-line text) pass unchanged."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() or c == " " or c in keep else _escape_char(c) for c in s)


def html_text(text: object) -> str:
    """``text`` for an HTML page: :func:`show`, then ``&<>"'`` escaped."""
    return html.escape(show(text), quote=True)


def csv_text(text: object) -> str:
    """A text cell for a CSV file: :func:`show`, then prefixed with ``'`` when a spreadsheet
    would run it as a formula (it starts with one of :data:`FORMULA_STARTS`)."""
    s = show(text)
    return "'" + s if s.startswith(FORMULA_STARTS) else s


def plot_text(text: object, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` for a matplotlib label or title: :func:`show`, cut to ``limit`` characters
    (a 5000-character name cannot be laid out), then ``$`` escaped (mathtext would otherwise
    parse, and may refuse, a name such as ``$\\frac$``)."""
    s = show(text)
    if len(s) > limit:
        s = s[: limit - 3] + "..."
    return s.replace("$", "\\$")


def inert_csv_columns(df: Any, columns: tuple[str, ...] = NAME_COLUMNS) -> Any:
    """A copy of the pandas DataFrame ``df`` whose string cells in ``columns`` (those present)
    went through :func:`csv_text`; other columns, and non-string cells, are left as they are
    (a numeric ``-1.5`` stays a number)."""
    names = [c for c in columns if c in getattr(df, "columns", ())]
    if not names:
        return df
    out = df.copy()
    for c in names:
        out[c] = [csv_text(v) if isinstance(v, str) else v for v in out[c]]
    return out


class EscapingStream:
    """A text stream that writes through :func:`show` (keeping ``\\n``, ``\\r`` and ``\\t``),
    so nothing printed on it carries a raw ESC byte; every other attribute (``isatty``,
    ``flush``, ``encoding``, ...) is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` escaped; returns the length of ``text`` (as ``write`` does)."""
        self._stream.write(show(text, keep="\n\r\t"))
        return len(text)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._stream, attr)
