"""Every lab notebook runs top to bottom (executed with nbclient, a real Jupyter kernel) and
shows its figures: every cell that draws has an image output. Marked slow: ``pytest -m slow``
(CI's second pass) runs them.

A lab that imports an optional extra (``torch``: ``11_your_own_model`` captures a PyTorch
model) is skipped where that extra is not installed, as the tests of the code it uses are.

The kernel keeps matplotlib's own backend choice (inline in Jupyter): nothing here or in the
labs selects one, so what the test sees is what a student sees.
"""

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # ~2.5 min on 2 cores: CI runs it in its slow pass (.ci/run)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
DRAWS = re.compile(r"\bplt\.(?!close)|\bplot_\w+\(|"
                   r"\.(plot|bar|barh|scatter|loglog|semilogx|semilogy|"
                   r"imshow|fill_between|hist|step)\(|subplots\(")
"""A code cell that calls one of these draws a figure."""
OPTIONAL = re.compile(r"^\s*(?:import|from) (torch)\b", re.MULTILINE)
"""An import of an optional extra (``pip install 'accelsim[torch]'``) in a code cell."""


def optional_imports(nb: nbformat.NotebookNode) -> set[str]:
    """The optional extras a notebook's code cells import."""
    return {m for cell in nb.cells if cell.cell_type == "code"
            for m in OPTIONAL.findall(cell.source)}


def drawing_cells_without_image(nb: nbformat.NotebookNode) -> list[int]:
    """Indices of code cells that draw but have no ``image/png`` output."""
    missing = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not DRAWS.search(cell.source):
            continue
        if not any("image/png" in out.get("data", {}) for out in cell.get("outputs", [])):
            missing.append(i)
    return missing


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom_and_shows_its_figures(path, tmp_path, monkeypatch):
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.read(path, as_version=4)
    for module in sorted(optional_imports(nb)):
        pytest.importorskip(module)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert not drawing_cells_without_image(nb)
