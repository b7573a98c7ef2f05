"""The fold-order search's shortcut (the first candidate moving only compulsory traffic) gives
the full search's answer, and takes the shortcut where it should."""

from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.hw._systolic_kernels import (
    _best_order_search,
    _compulsory,
    best_order,
    fold_order,
    fold_traffic,
)

BYTES = st.sampled_from([0.5, 1.0, 2.0, 4.0])


@settings(max_examples=400, deadline=None)
@given(df=st.integers(0, 2), sr=st.integers(1, 300), sc=st.integers(1, 300),
       t=st.integers(1, 200), rows=st.integers(1, 40), cols=st.integers(1, 40), word=BYTES,
       out=BYTES, psum=st.sampled_from([2.0, 4.0]), cap_log2=st.floats(6, 20),
       fractions=st.sampled_from([(0.5, 0.25, 0.25), (1 / 3, 1 / 3, 1 / 3), (0.1, 0.1, 0.8)]),
       ifmap_factor=st.sampled_from([1.0, 1.0, 0.25, 0.37]))
def test_best_order_is_the_full_search(df, sr, sc, t, rows, cols, word, out, psum, cap_log2,
                                       fractions, ifmap_factor):
    cap = 2.0 ** cap_log2
    args = (df, sr, sc, t, rows, cols, word, out, psum, cap * fractions[0], cap * fractions[1],
            cap * fractions[2], ifmap_factor)
    assert best_order(*args) == _best_order_search(*args)


def _extra_bytes(df, sr, sc, t, rows, cols, word, out, psum, ci, cf, co, sr_outer, block):
    """DRAM bytes beyond compulsory traffic of one fold order (fold_traffic's arrays)."""
    a = fold_traffic(df, sr, sc, t, rows, cols, word, out, psum, ci, cf, co, sr_outer, block, 1.0)
    inputs = {0: (sr * t, t * sc), 1: (sr * t, sr * sc), 2: (sr * sc, sr * t)}[df]
    return ((a[0].sum() - inputs[0] * word) + (a[1].sum() - inputs[1] * word) + a[2].sum()
            + a[4].sum())


def test_compulsory_matches_the_traffic_it_stands_for():
    # Llama-3-8B's LM head in decode (ws: K=4096 rows, N=128256 columns, M=1) on a 32x32
    # array with 256 KiB of SRAM: the partial sums of 4,008 column tiles do not fit, so only
    # a row-fold block covering all 128 row folds keeps them on chip
    args = (1, 4096, 128256, 1, 32, 32, 1.0, 1.0, 4.0, 131072.0, 65536.0, 65536.0)
    for block, compulsory in ((1, False), (64, False), (128, True)):
        assert bool(_compulsory(*args[:7], args[8], *args[9:], True, block, 1.0)) is compulsory
        assert bool(_extra_bytes(*args, True, block) == 0) is compulsory
    assert best_order(*args, 1.0) == (True, 128) == _best_order_search(*args, 1.0)


def test_fold_positions_follow_the_fold_order():
    from accelsim.hw._systolic_kernels import _fold_ij

    for fr, fc, sr_outer, block in ((7, 5, True, 3), (7, 5, False, 2), (4, 9, False, 4),
                                    (1, 6, True, 1), (6, 1, False, 1)):
        oi, oj = fold_order(fr, fc, sr_outer, block)
        got = [_fold_ij(f, fr, fc, sr_outer, block) for f in range(fr * fc)]
        assert got == list(zip(oi.tolist(), oj.tolist(), strict=True))
