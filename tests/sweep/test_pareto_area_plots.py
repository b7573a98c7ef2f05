"""Pareto fronts and knees, the area model, and the sweep plots (built from a DataFrame only)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accelsim.config.registry import load_machine
from accelsim.sweep.area import (
    area_breakdown,
    bitcell_um2,
    pe_area_um2,
    sram_area_um2,
)
from accelsim.sweep.pareto import knee_point, pareto_front, pareto_mask, pareto_mask_array


def brute_force_front(v: np.ndarray) -> np.ndarray:
    n = len(v)
    return np.array([not any(np.all(v[j] <= v[i]) and np.any(v[j] < v[i])
                             for j in range(n) if j != i) for i in range(n)])


@pytest.mark.parametrize("d", [2, 3])
def test_front_is_exactly_the_non_dominated_points(d):
    rng = np.random.default_rng(d)
    v = rng.integers(0, 12, size=(150, d)).astype(float)  # ties and duplicates included
    assert (pareto_mask_array(v) == brute_force_front(v)).all()


def test_maximised_objectives_and_bad_rows():
    df = pd.DataFrame({"cycles": [10, 20, 30, 5, np.nan, 1],
                       "tops_per_w": [5, 9, 8, 1, 100, 100],
                       "error": ["", "", "", "", "", "unsupported"]})
    mask = pareto_mask(df, {"cycles": "min", "tops_per_w": "max"})
    assert list(mask) == [True, True, False, True, False, False]
    front = pareto_front(df, {"cycles": "min", "tops_per_w": "max"})
    assert list(front["cycles"]) == [5, 10, 20]


def test_knee_is_the_point_of_diminishing_returns():
    # area vs cycles: big gains up to area 4, little after
    front = pd.DataFrame({"area": [1, 2, 4, 8, 16], "cycles": [100, 40, 12, 10, 9]})
    assert knee_point(front, "area", "cycles") == 2


def test_pe_area_grows_with_precision_and_shrinks_with_the_node():
    assert pe_area_um2("int8") == pytest.approx(6350 / 16 + 278 + 48 * 5.98)  # 962 um^2 at 40 nm
    assert pe_area_um2("int4") < pe_area_um2("int8") < pe_area_um2("bf16") < pe_area_um2("fp32")
    assert pe_area_um2("int8", 7) < pe_area_um2("int8", 16) < pe_area_um2("int8", 40)


def test_sram_area_uses_the_published_bitcell():
    assert bitcell_um2(7) == pytest.approx(0.027)
    assert bitcell_um2(45) == pytest.approx(0.346)
    assert 0.171 < bitcell_um2(40) < 0.346  # interpolated between 32 and 45 nm
    # 1 MiB at 7 nm: 8 Mi bits x 0.027 um^2 / 0.7 array efficiency = 0.32 mm^2
    assert sram_area_um2(2**20, 7) / 1e6 == pytest.approx(8 * 2**20 * 0.027 / 0.7 / 1e6)


def test_machine_area_adds_pe_array_and_sram():
    tpu = load_machine("tpu_v4", {"compute.array.rows": 64})
    a = area_breakdown(tpu)
    assert a["node_nm"] == 7  # the machine's energy table is scaled_7nm (TPU v4 is 7 nm)
    assert a["area_pe_mm2"] == pytest.approx(4 * 64 * 128 * pe_area_um2("bf16", 7) / 1e6)
    assert a["area_sram_mm2"] == pytest.approx(sram_area_um2(32 * 2**20, 7) / 1e6)
    assert a["area_mm2"] == pytest.approx(a["area_pe_mm2"] + a["area_sram_mm2"])
    bigger = area_breakdown(load_machine("tpu_v4"))
    assert bigger["area_pe_mm2"] == pytest.approx(2 * a["area_pe_mm2"])


def test_plots_are_built_from_the_table():
    import matplotlib.pyplot as plt

    from accelsim.report.plots_sweep import plot_heatmap, plot_metric_vs_param, plot_pareto

    rows = [{"rows": r, "sram": s, "dataflow": d, "cycles": 1e6 / r + 1e7 / s + (d == "ws"),
             "area": r * r / 100 + s / 1e6, "error": ""}
            for r in (16, 32, 64) for s in (2**20, 2**21) for d in ("os", "ws")]
    df = pd.DataFrame(rows)
    df["pareto"] = pareto_mask(df, ["area", "cycles"])
    ax = plot_metric_vs_param(df, "rows", "cycles", hue="dataflow")
    assert len(ax.lines) == 2
    ax = plot_heatmap(df, "rows", "sram", "cycles")
    assert ax.images[0].get_array().shape == (2, 3)
    front = df[df["pareto"]]
    ax = plot_pareto(df, "area", "cycles", knee=knee_point(front, "area", "cycles"))
    assert len(ax.lines[0].get_xdata()) == int(df["pareto"].sum())
    plt.close("all")
