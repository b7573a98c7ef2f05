"""Row-stationary (Eyeriss) as a cost model: placement, scratchpad limits, passes, counts."""

from __future__ import annotations

import dataclasses
import math

import pytest

from accelsim.errors import ConfigError
from accelsim.hw.dataflows.row_stationary import (
    ConvShape,
    RsHardware,
    RsMapping,
    best_mapping,
    cost,
    placement,
    strip_widths,
)
from accelsim.mapping.row_stationary import rlc_ratio

EYERISS = RsHardware("eyeriss", 12, 14, 224, 12, 24, 50_000, 4_000, 4.0, 1.0, 4.0, 0)
# AlexNet (per group), batch 4; padded h, w
CONV1 = ConvShape(4, 3, 96, 227, 227, 11, 11, 55, 55, 4)
CONV2 = ConvShape(4, 48, 128, 31, 31, 5, 5, 27, 27, 1, 2, 729 / 961)
CONV5 = ConvShape(4, 192, 128, 15, 15, 3, 3, 13, 13, 1, 2, 169 / 225)


def test_sets_are_strip_mined_folded_and_replicated_as_in_the_jssc_paper():
    """CONV1's 11x55 set is strip-mined (11 rows fit once); CONV2's 5x27 set folds into two
    segments (10 x 14); CONV3-5's 3x13 sets are replicated four times (JSSC Fig. 5)."""
    assert placement(EYERISS, CONV1, 7) == (1, 2)       # 11x7 sets, two side by side
    assert placement(EYERISS, CONV2, 27) == (2, 1)      # folded into 2 segments
    assert placement(EYERISS, CONV5, 13) == (1, 4)      # four 3x13 sets
    assert placement(EYERISS, dataclasses.replace(CONV1, r=13), 7) is None


def test_full_height_sets_fold_when_they_fit_and_strip_mine_only_otherwise():
    """The chip's rule (JSSC Sec. IV-A): CONV2's 5x27 set is folded, never strip-mined;
    CONV1's 11x55 set cannot fit and is strip-mined to any width of one 11-row segment; a
    3x56 set folds into four segments (12 rows); without the rule every width is searched."""
    chip = dataclasses.replace(EYERISS, full_height_sets=True)
    assert strip_widths(chip, CONV2) == [27]
    assert best_mapping(chip, CONV2).mapping.e == 27
    assert strip_widths(chip, CONV1) == strip_widths(EYERISS, CONV1)
    assert max(strip_widths(chip, CONV1)) <= 14
    vgg3 = ConvShape(3, 256, 256, 58, 58, 3, 3, 56, 56)
    assert strip_widths(chip, vgg3) == [56]
    assert best_mapping(chip, vgg3).mapping.segments == 4
    assert len(strip_widths(EYERISS, CONV2)) > 1 and 27 in strip_widths(EYERISS, CONV2)


def test_a_mapping_that_overflows_the_scratchpads_is_not_searched():
    """p*q*S <= 224 filter words, q*S <= 12 ifmap words, p <= 24 psums in every mapping."""
    c = best_mapping(EYERISS, CONV5)
    mp = c.mapping
    assert mp.p * mp.q * CONV5.s <= 224 and mp.q * CONV5.s <= 12 and mp.p <= 24
    assert c.active_pes == mp.r * mp.t * CONV5.r * mp.e <= 168


def test_every_mac_is_counted_once_and_each_output_written_once():
    c = best_mapping(EYERISS, CONV2)
    w = c.words
    assert w["macs"] == CONV2.macs
    assert w["spad_filter_read"] == w["macs"] and w["spad_psum_write"] == w["macs"]
    assert w["dram_ofmap"] == CONV2.groups * 4 * 128 * 27 * 27
    # each filter reaches DRAM at least once, the ifmap at least once (unpadded)
    assert w["dram_filter"] >= CONV2.groups * 128 * 48 * 25
    assert w["dram_ifmap"] >= CONV2.groups * 4 * 48 * 27 * 27 * 0.999


def test_pass_time_is_the_slowest_stream_plus_the_filter_load():
    """A pass loads p t q r R S filter words at 4/cycle, then lasts as long as the slowest of
    its n p q F S MACs per PE, the 1-word/cycle ifmap stream and the 4-word/cycle psum
    streams (drain, and read-back for all but the first channel group)."""
    mp = RsMapping(e=13, n=4, p=16, q=4, r=2, t=2, m=64, segments=1)
    c = cost(EYERISS, CONV5, mp)
    cg = math.ceil(192 / 8)
    compute = 4 * 16 * 4 * 13 * 3
    ifmap = 4 * 4 * 2 * 15 * 15 * CONV5.raw_fraction
    psum = 4 * 16 * 2 * 13 * 13 / 4 * (1 + (cg - 1) / cg)
    assert psum > compute > ifmap
    assert c.pass_cycles == pytest.approx(16 * 2 * 4 * 2 * 9 / 4 + psum)
    few_channels = cost(EYERISS, dataclasses.replace(CONV5, c=8), mp)   # one channel group
    assert few_channels.pass_cycles == pytest.approx(16 * 2 * 4 * 2 * 9 / 4 + compute)
    assert c.passes == 2 * math.ceil(128 / 32) * cg


def test_a_bigger_global_buffer_never_costs_more_dram():
    small = best_mapping(EYERISS, CONV2)
    big = best_mapping(dataclasses.replace(EYERISS, glb_fmap=400_000), CONV2)
    dram = [sum(c.words[k] for k in ("dram_ifmap", "dram_filter", "dram_ofmap"))
            for c in (small, big)]
    assert dram[1] <= dram[0]


def test_shapes_no_mapping_can_hold_are_refused_naming_the_field():
    with pytest.raises(ConfigError, match=r"eyeriss: compute.array.rows = 12: .*R=13"):
        best_mapping(EYERISS, dataclasses.replace(CONV1, r=13, s=3))
    with pytest.raises(ConfigError, match=r"scratchpads.ifmap_bytes = '12 words'.*S=13"):
        best_mapping(EYERISS, dataclasses.replace(CONV1, r=3, s=13))


def test_run_length_coding_follows_the_jssc_format():
    """Three (5-bit run, 16-bit level) pairs per 64-bit word: dense data grows by 4/3, data
    with 75 % zeros shrinks to about a third (JSSC: ~75 % saved on CONV5's fmaps)."""
    assert rlc_ratio(0.0) == pytest.approx(4 / 3)
    assert rlc_ratio(0.75) == pytest.approx(1 / 3, rel=0.01)
    assert rlc_ratio(1.0) == pytest.approx(4 / 3 / 32)     # one zero level per 32 zeros


def test_no_local_reuse_reads_every_weight_from_the_buffer():
    """NLR (ISCA 2016's fourth dataflow): no scratchpad traffic; one buffer read per weight
    use, one ifmap read per cm PEs sharing it, one psum update per cc channels reduced."""
    from accelsim.hw.dataflows import get

    c = get("nlr").map(EYERISS, CONV5)
    w, mp = c.words, c.mapping
    assert all(v == 0 for k, v in w.items() if k.startswith("spad_"))
    assert w["glb_filter_read"] == w["macs"]
    assert w["glb_ifmap_read"] == pytest.approx(w["macs"] / mp.cm)
    assert w["glb_psum_write"] == pytest.approx(w["macs"] / mp.cc)
    assert mp.cm * mp.cc <= 168 and c.active_pes == mp.cm * mp.cc
    rs = best_mapping(EYERISS, CONV5)
    assert w["glb_filter_read"] + w["glb_ifmap_read"] > 10 * (
        rs.words["glb_filter_read"] + rs.words["glb_ifmap_read"])
