"""DRAM traffic follows the buffer reuse rules; partial sums spill only when they must."""

import pytest

from accelsim.config.registry import load_machine
from accelsim.hw.systolic import best_fold_order, dram_traffic, geometry
from accelsim.mapping.systolic import plan_layer
from accelsim.workload.ops import Conv2d, Gemm


def traffic(df, cap, m=256, n=256, k=256, rows=32, cols=32, sr_outer=True):
    g = geometry(m, n, k, rows, cols, df)
    return dram_traffic(g, word_bytes=1, out_bytes=1, psum_bytes=4, ifmap_capacity=cap,
                        filter_capacity=cap, ofmap_capacity=cap, sr_outer=sr_outer)


@pytest.mark.parametrize("df", ["os", "ws", "is"])
def test_big_sram_reads_each_operand_once(df):
    t = traffic(df, cap=1e9)
    assert t.ifmap_bytes.sum() == 256 * 256
    assert t.filter_bytes.sum() == 256 * 256
    assert t.ofmap_write_bytes.sum() == 256 * 256
    assert t.psum_write_bytes.sum() == 0 and t.psum_read_bytes.sum() == 0


def test_os_small_sram_rereads_the_filter_every_row_fold():
    # the filter (64 kB) does not fit in 16 kB, its 8 kB column tiles fit a half: reread per
    # row fold
    t = traffic("os", cap=16 * 1024)
    fr = 256 // 32
    assert t.filter_bytes.sum() == fr * 256 * 256
    assert t.ifmap_bytes.sum() == 256 * 256   # ifmap row tile stays over the inner loop


def test_ws_partial_sums_spill_when_outputs_do_not_fit():
    t = traffic("ws", cap=4 * 1024)
    fr = 256 // 32
    assert t.psum_write_bytes.sum() == (fr - 1) * 256 * 256 * 4
    assert t.psum_read_bytes.sum() == (fr - 1) * 256 * 256 * 4
    assert t.ofmap_write_bytes.sum() == 256 * 256


def test_mapper_picks_the_cheaper_loop_order():
    m = load_machine("scalesim_default", {"memory.sram.capacity_bytes": "24 kB"})
    op = Gemm(name="g", m=2048, n=64, k=64)
    plan = plan_layer(m, op, "os")
    for order in ("sr_outer", "sc_outer"):
        assert plan.traffic.total_bytes <= plan_layer(m, op, "os", order).traffic.total_bytes


def test_conv_fetches_raw_input_not_im2col_copies():
    m = load_machine("tpu_v4")
    op = Conv2d(name="c", c=64, h=56, w=56, k=64, r=3, s=3, pad=1)
    plan = plan_layer(m, op)
    raw = 64 * 56 * 56 * m.array.operand_bytes
    assert plan.operand_totals()["dram_ifmap_read_bytes"] == pytest.approx(raw, rel=1e-6)


def test_blocking_row_folds_cuts_weight_rereads():
    # os, 4096^2 x 4096 on 64x64: the filter (32 MiB) does not fit, so the plain order rereads
    # it once per row fold; blocks of 4 row folds (4 x 512 kB ifmap tiles = half the 4 MiB
    # ifmap buffer) reread it once per block
    g = geometry(4096, 4096, 4096, 64, 64, "os")
    kw = dict(word_bytes=2, out_bytes=2, psum_bytes=4, ifmap_capacity=4 * 2**20,
              filter_capacity=2 * 2**20, ofmap_capacity=2 * 2**20)
    plain = dram_traffic(g, sr_outer=True, block=1, **kw)
    blocked = dram_traffic(g, sr_outer=True, block=4, **kw)
    too_big = dram_traffic(g, sr_outer=True, block=8, **kw)
    assert plain.filter_bytes.sum() == 64 * 4096 * 4096 * 2
    assert blocked.filter_bytes.sum() == 16 * 4096 * 4096 * 2
    assert too_big.ifmap_bytes.sum() > plain.ifmap_bytes.sum()  # 8 tiles thrash the LRU
    assert blocked.ifmap_bytes.sum() == plain.ifmap_bytes.sum() == 4096 * 4096 * 2
    sr_outer, block = best_fold_order(g, **kw)
    best = dram_traffic(g, sr_outer=sr_outer, block=block, **kw)
    assert best.total_bytes <= blocked.total_bytes < plain.total_bytes


def test_lru_keeps_as_many_tiles_as_half_the_buffer_holds():
    # os, ifmap tiles of 32 rows x 256 = 8 kB; a 40 kB ifmap buffer keeps 2 in its half,
    # so blocks of 2 row folds keep both tiles across the column folds and blocks of 4 do not
    g = geometry(256, 256, 256, 32, 32, "os")
    kw = dict(word_bytes=1, out_bytes=1, psum_bytes=4, ifmap_capacity=40e3,
              filter_capacity=1e9, ofmap_capacity=1e9)
    assert dram_traffic(g, sr_outer=True, block=2, **kw).ifmap_bytes.sum() == 256 * 256
    assert dram_traffic(g, sr_outer=True, block=4, **kw).ifmap_bytes.sum() > 256 * 256
