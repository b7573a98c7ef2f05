"""Build notebooks/*.ipynb from the percent-format sources in scripts/notebook_src/*.py.

Cells are separated by lines starting with ``# %%`` (code) or ``# %% [markdown]``.
Run: ``python scripts/make_notebooks.py`` (the test suite executes the notebooks).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def convert(src: Path) -> nbformat.NotebookNode:
    """One percent-format script -> a notebook (outputs empty)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
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


def main(names: list[str]) -> None:
    srcs = sorted((ROOT / "scripts" / "notebook_src").glob("*.py"))
    for src in srcs:
        if names and src.stem not in names:
            continue
        out = ROOT / "notebooks" / f"{src.stem}.ipynb"
        nbformat.write(convert(src), out)
        print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
