"""Where plots are drawn: new axes, PNG bytes and files, without touching the backend.

accelsim never selects a matplotlib backend. A plot helper called with no ``ax`` draws on a
new ``pyplot`` figure, so it shows inline in Jupyter and in a window elsewhere (matplotlib
falls back to Agg by itself when there is no display). Callers that only write files (the
command line, the HTML report) pass ``offscreen=True``: the figure is then a plain
:class:`matplotlib.figure.Figure`, which pyplot never sees, so nothing pops up and nothing
needs closing. Saving always goes through the figure object (``fig.savefig``), into memory
first, then to the file through :func:`accelsim.files.write_output` (every write checked: a
full disk or an unknown format is one line ``cannot write PATH: REASON``, never a success).

Imports: files, matplotlib (lazily).
"""

from __future__ import annotations

import base64
import contextlib
import io
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` (imported lazily; the backend is matplotlib's choice)."""
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:  # pragma: no cover - matplotlib is a core dependency
        raise ModuleNotFoundError("plots need matplotlib: pip install matplotlib") from exc
    return plt


def new_axes(figsize: tuple[float, float], *, ax: Any = None, offscreen: bool = False) -> Any:
    """``ax`` if given, else the Axes of a new figure of ``figsize`` inches: a pyplot figure
    (shown by Jupyter) or, with ``offscreen``, a bare Figure for files only."""
    if ax is not None:
        return ax
    if offscreen:
        from matplotlib.figure import Figure

        return Figure(figsize=figsize).subplots()
    _, ax = pyplot().subplots(figsize=figsize)
    return ax


def _close(fig: Any) -> None:
    """Forget ``fig`` in pyplot if pyplot holds it (a bare Figure needs nothing)."""
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    number = getattr(fig, "number", None)
    if plt is not None and number is not None and plt.fignum_exists(number):
        plt.close(fig)


@contextlib.contextmanager
def _missing_glyphs_quiet() -> Iterator[None]:
    """Draw without matplotlib's warning for a glyph its font lacks (a name in a script the
    font does not cover is drawn with boxes; the name itself is kept in the tables)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font")
        yield


def tight_layout(fig: Any) -> None:
    """``fig.tight_layout()`` without the missing-glyph warning (see below)."""
    with _missing_glyphs_quiet():
        fig.tight_layout()


def save_figure(fig_or_ax: Any, path: str | Path, dpi: int = 130) -> Path:
    """Write a figure (or the figure of an Axes) to ``path``; the format follows the suffix
    (none: PNG). Any failure is :func:`accelsim.files.write_failed`'s one line."""
    from accelsim.files import write_failed, write_output

    fig = getattr(fig_or_ax, "figure", fig_or_ax)
    p = Path(path)
    fmt = p.suffix[1:].lower() or "png"
    buf = io.BytesIO()
    try:
        with _missing_glyphs_quiet():
            fig.tight_layout()
            fig.savefig(buf, format=fmt, dpi=dpi)
    except ValueError as exc:  # an unknown format (the suffix), a label mathtext refuses
        raise write_failed(p, exc) from None
    finally:
        _close(fig)
    return write_output(p, buf.getvalue())


def png_base64(fig: Any, dpi: int = 110) -> str:
    """The figure as a base64 PNG (for pages that embed their images)."""
    buf = io.BytesIO()
    with _missing_glyphs_quiet():
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=dpi)
    _close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")
