"""Power at peak throughput against the published TDP: the verdict rules and the figures."""

from __future__ import annotations

import dataclasses

import pytest

from accelsim.api.power import TDP_BAND, PeakPower, peak_power, tdp_verdict


def point(total_w: float, tdp_w: float | None = 100.0, gap: str = "") -> PeakPower:
    return PeakPower(machine="m", table="t", node_nm=7, precision="bf16", util=1.0,
                     dynamic_pj_per_mac=1.0, peak_macs_per_s=1e12, dynamic_w=total_w,
                     static_w=0.0, tdp_w=tdp_w, gap=gap)


@pytest.mark.parametrize("total, gap, verdict", [
    (70.0, "", "pass"),
    (40.0, "", "pass"),             # the lower edge is in the band
    (101.0, "", "FAIL"),            # above the TDP: the part would throttle
    (101.0, "why", "FAIL"),         # a documented gap does not excuse exceeding the TDP
    (20.0, "", "FAIL"),             # below the band without a reason
    (20.0, "why", "known gap"),
    (70.0, "why", "FAIL"),          # a stale note: the machine is in the band now
])
def test_verdicts(total, gap, verdict):
    assert TDP_BAND == (0.4, 1.0)
    assert tdp_verdict(point(total, gap=gap)) == verdict


def test_a_machine_without_a_tdp_fails_the_check():
    assert tdp_verdict(point(50.0, tdp_w=None)) == "FAIL"


def test_peak_power_is_dynamic_energy_over_time_plus_leakage():
    p = peak_power("tpu_v4")
    assert p.table == "scaled_7nm" and p.precision == "bf16" and p.tdp_w == 96
    assert 0.3 < p.util <= 1.0
    # dynamic power = pJ/MAC x the MAC rate the model reaches on the GEMM
    assert p.dynamic_w == pytest.approx(p.dynamic_pj_per_mac * 1e-12 * p.util * p.peak_macs_per_s,
                                        rel=1e-6)
    assert p.peak_macs_per_s == pytest.approx(4 * 128 * 128 * 1.05e9)
    assert 0 < p.static_w < p.dynamic_w
    assert p.total_w == p.dynamic_w + p.static_w and p.in_band


def test_the_45nm_table_would_put_tpu_v4_above_its_tdp():
    """Why the node matters: the same run priced at 45 nm exceeds the chip's power limit."""
    from accelsim.api.compare import load_platform

    m = load_platform("tpu_v4")
    old = dataclasses.replace(m, energy=dataclasses.replace(m.energy, table="horowitz_45nm"))
    assert peak_power(old).ratio > 1.0 > peak_power(m).ratio


def test_the_check_is_a_table_first():
    from accelsim.api.power import tdp_checks, tdp_table

    checks = tdp_checks(["tpu_v4", "h200", "eyeriss", "h200x2"])  # no TDP / not a platform: out
    df = tdp_table(checks)
    assert list(df["machine"]) == ["tpu_v4", "h200"]
    assert list(df["verdict"]) == ["pass", "known gap"]
    assert (df["total_w"] == df["dynamic_w"] + df["static_w"]).all()
    assert (df["ratio"] == df["total_w"] / df["tdp_w"]).all()
