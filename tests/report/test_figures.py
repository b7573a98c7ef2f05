"""Plots never choose the matplotlib backend; files are written through the figure object."""

import re
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SWITCH = re.compile(r"matplotlib\.use\(|switch_backend\(|MPLBACKEND")


def test_no_backend_switching_in_the_package_labs_or_scripts():
    files = [*(ROOT / "accelsim").rglob("*.py"), *(ROOT / "notebooks").glob("*.ipynb"),
             *(ROOT / "scripts").rglob("*.py")]
    offenders = [str(p.relative_to(ROOT)) for p in files if SWITCH.search(p.read_text())]
    assert not offenders


def test_offscreen_plots_leave_pyplot_and_its_backend_alone(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from accelsim.report.figures import save_figure
    from accelsim.report.plots_roofline import plot_roofline

    backend = matplotlib.get_backend()
    before = plt.get_fignums()
    roofs = pd.DataFrame([{"level": "dram", "bandwidth_bytes_per_s": 1e12,
                           "peak_flops_per_s": 1e14, "ridge_flop_per_byte": 100.0}])
    points = pd.DataFrame([{"layer": "a", "intensity_dram": 10.0, "achieved_flops_per_s": 5e12}])
    ax = plot_roofline(roofs, points, offscreen=True)
    assert type(ax.figure).__module__ == "matplotlib.figure"
    assert plt.get_fignums() == before  # pyplot never saw it
    path = save_figure(ax.figure, tmp_path / "r.png")
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert matplotlib.get_backend() == backend
    assert "matplotlib.pyplot" in sys.modules  # imported here, by the test, not switched
