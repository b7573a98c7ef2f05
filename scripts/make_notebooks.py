"""Build notebooks/*.ipynb from the percent-format sources in scripts/notebook_src/*.py.

Cells are separated by lines starting with ``# %%`` (code) or ``# %% [markdown]``. A markdown
line that cannot be wrapped (a table row) may end in ``  # noqa: E501``; the notebook drops it.
Run: ``python scripts/make_notebooks.py`` (the test suite executes the notebooks).
Notebooks are stored without outputs; a rebuilt notebook keeps the cell ids of the one it
replaces (cell by cell, in order), so a rebuild only changes the cells whose text changed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOQA = "  # noqa: E501"
"""The suffix of a markdown line that ruff's line-length rule may skip (not in the notebook)."""


def convert(src: Path) -> nbformat.NotebookNode:
    """One percent-format script -> a notebook (outputs empty)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"
    }
    cells: list[tuple[str, list[str]]] = []
    kind, lines = None, []
    for line in src.read_text().splitlines():
        if line.startswith("# %%"):
            if kind is not None:
                cells.append((kind, lines))
            kind = "markdown" if "[markdown]" in line else "code"
            lines = []
            continue
        if kind == "markdown":
            line = line[2:] if line.startswith("# ") else line.lstrip("#")
            line = line.removesuffix(NOQA)
        lines.append(line)
    if kind is not None:
        cells.append((kind, lines))
    for kind, body in cells:
        text = "\n".join(body).strip("\n")
        if not text:
            continue
        nb.cells.append(nbformat.v4.new_markdown_cell(text) if kind == "markdown"
                        else nbformat.v4.new_code_cell(text))
    return nb


def keep_ids(nb: nbformat.NotebookNode, old: nbformat.NotebookNode) -> None:
    """Give ``nb``'s cells the ids of ``old``'s cells at the same positions (where present)."""
    for cell, old_cell in zip(nb.cells, old.cells):
        if "id" in old_cell:
            cell["id"] = old_cell["id"]


def main(names: list[str]) -> None:
    srcs = sorted((ROOT / "scripts" / "notebook_src").glob("*.py"))
    for src in srcs:
        if names and src.stem not in names:
            continue
        out = ROOT / "notebooks" / f"{src.stem}.ipynb"
        nb = convert(src)
        if out.exists():
            keep_ids(nb, nbformat.read(out, as_version=4))
        nbformat.write(nb, out)
        print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
