"""The systolic-array cost model: SCALE-Sim 3.0's fold geometry, cycles, utilisations, SRAM counts.

Worked examples come from ``shared/reference/scalesim_model.md`` section 2, each of which was
checked against a SCALE-Sim 3.0 run; ``tests/reference/test_scalesim_parity.py`` runs
SCALE-Sim itself.
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accelsim.hw.systolic import (
    compute_cycles,
    compute_util,
    geometry,
    mapping_efficiency,
    scalesim_compute_cycles,
    scalesim_compute_util,
    scalesim_ofmap_writes,
    sram_accesses,
)
from accelsim.report.scalesim_reports import scalesim_fold_means, scalesim_sram_cycles

# (M, N, K, rows, cols, dataflow, folds, fold cycles, SCALE-Sim Total Cycles)
WORKED = [
    pytest.param(1024, 1024, 1024, 128, 128, "os", 64, 1278, 81791, id="gemm1024-128x128-os"),
    pytest.param(256, 128, 256, 32, 32, "ws", 32, 350, 11199, id="test_mnk_input-32x32-ws"),
    pytest.param(64, 64, 64, 8, 8, "is", 64, 86, 5503, id="gemm64-8x8-is"),
    pytest.param(1000, 129, 256, 32, 32, "os", 160, 318, 50879, id="edge-fold-129-os"),
    pytest.param(54 * 54, 64, 3 * 3 * 64, 128, 128, "os", 23, 830, 19089, id="resnet18-conv2_1a"),
]


@pytest.mark.parametrize("m,n,k,rows,cols,df,folds,fold_cycles,total", WORKED)
def test_worked_examples_match_scalesim_total_cycles(m, n, k, rows, cols, df, folds, fold_cycles,
                                                     total):
    """Folds run back to back: F folds of P cycles; SCALE-Sim reports the last index F*P - 1."""
    g = geometry(m, n, k, rows, cols, df)
    assert g.folds == folds
    assert g.fold_cycles == fold_cycles
    assert compute_cycles(g) == folds * fold_cycles
    assert scalesim_compute_cycles(g) == total


def test_dataflows_put_different_dimensions_on_the_array():
    """os: M x N on the array, K in time; ws: K x N, M in time; is: K x M, N in time."""
    os_, ws, is_ = (geometry(100, 20, 300, 16, 8, df) for df in ("os", "ws", "is"))
    assert (os_.sr, os_.sc, os_.t) == (100, 20, 300)
    assert (ws.sr, ws.sc, ws.t) == (300, 20, 100)
    assert (is_.sr, is_.sc, is_.t) == (300, 100, 20)
    assert (os_.row_folds, os_.col_folds) == (7, 3)
    assert os_.fold_cycles == 300 + 16 + 8 - 2
    assert ws.fold_cycles == 2 * 16 + 8 + 100 - 2   # R cycles load the stationary operand
    assert is_.fold_cycles == 2 * 16 + 8 + 20 - 2


def test_one_extra_row_costs_a_whole_fold():
    """The 129-on-128 cliff: a dimension one past the array doubles the folds."""
    full = geometry(128, 128, 512, 128, 128, "os")
    over = geometry(129, 128, 512, 128, 128, "os")
    assert over.folds == 2 * full.folds
    assert compute_cycles(over) == 2 * compute_cycles(full)
    assert mapping_efficiency(full) == 1.0
    assert mapping_efficiency(over) == pytest.approx(129 / 256)


def test_utilisations_follow_their_definitions():
    """mapping eff = used PEs / PEs over folds; compute util adds fill and drain."""
    g = geometry(1000, 129, 256, 32, 32, "os")
    assert mapping_efficiency(g) == pytest.approx(1000 * 129 / (160 * 32 * 32))
    assert compute_util(g) == pytest.approx(1000 * 129 * 256 / (32 * 32 * compute_cycles(g)))
    assert scalesim_compute_util(g) == compute_util(g)     # os: SCALE-Sim agrees


def test_scalesim_compute_util_quirk_under_ws_and_is():
    """Under ws/is SCALE-Sim divides each fold by 2R+2C+T-3, not its real length 2R+C+T-2."""
    for df in ("ws", "is"):
        g = geometry(256, 128, 256, 32, 32, df)
        quirk_len = 2 * 32 + 2 * 32 + g.t - 3
        assert scalesim_compute_util(g) == pytest.approx(mapping_efficiency(g) * g.t / quirk_len)
        assert scalesim_compute_util(g) < compute_util(g)


@pytest.mark.parametrize("df,expected", [
    ("os", (5 * 100 * 70, 4 * 70 * 33, 100 * 33)),     # Fr = 4, Fc = 5
    ("ws", (5 * 100 * 70, 70 * 33, 3 * 100 * 33)),     # Fr = 3, Fc = 5
    ("is", (100 * 70, 13 * 70 * 33, 3 * 100 * 33)),    # Fr = 3, Fc = 13
])
def test_sram_counts_per_dataflow(df, expected):
    """The streamed operand is re-read per fold of the other dimension; ws/is write every psum."""
    m, n, k = 100, 33, 70
    g = geometry(m, n, k, 32, 8, df)
    acc = sram_accesses(m, n, k, g)
    assert (acc.ifmap_reads, acc.filter_reads, acc.ofmap_writes) == expected
    assert acc.ofmap_reads == (0 if df == "os" else (g.row_folds - 1) * m * n)


def test_scalesim_os_ofmap_writes_add_r_plus_c_per_fold():
    """SCALE-Sim's os counter adds R + C per fold (``ofmap_writes += shape[0] + shape[1]``)."""
    g = geometry(64, 40, 33, 32, 32, "os")
    assert scalesim_ofmap_writes(64, 40, g) == 64 * 40 + 4 * (32 + 32) == 2816
    g = geometry(64, 40, 33, 32, 32, "ws")
    assert scalesim_ofmap_writes(64, 40, g) == 2 * 64 * 40


@pytest.mark.parametrize("df,expected", [
    # SCALE-Sim 3.0's DETAILED_ACCESS_REPORT for GEMM M=64, N=40, K=33 on 32x32
    ("os", (1, 349, 1, 325, 32, 355)),
    ("ws", (33, 570, 1, 506, 63, 607)),
    ("is", (1, 434, 33, 474, 63, 535)),
])
def test_sram_start_stop_cycles_match_a_scalesim_run(df, expected):
    """First/last cycle with a valid request; reads are served one cycle after the request."""
    assert scalesim_sram_cycles(geometry(64, 40, 33, 32, 32, df)) == expected


@given(m=st.integers(1, 300), n=st.integers(1, 300), k=st.integers(1, 300),
       rows=st.integers(1, 40), cols=st.integers(1, 40), df=st.sampled_from(["os", "ws", "is"]))
def test_fold_averages_equal_the_closed_forms(m, n, k, rows, cols, df):
    """SCALE-Sim averages per-fold ratios; the front door's replay equals the closed forms."""
    g = geometry(m, n, k, rows, cols, df)
    me, cu = scalesim_fold_means(g)
    assert math.isclose(me, 100 * mapping_efficiency(g), rel_tol=1e-9)
    assert math.isclose(cu, 100 * scalesim_compute_util(g), rel_tol=1e-9)
    assert 0 < cu <= me <= 100
