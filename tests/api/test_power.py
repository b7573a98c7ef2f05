"""Power at peak throughput against the published TDP: the verdict rules and the figures."""

from __future__ import annotations

import dataclasses

import pytest

from accelsim.api.power import (
    OVER_TDP_TOLERANCE,
    PARTS,
    TDP_BAND,
    PeakPower,
    peak_power,
    tdp_verdict,
)


def point(total_w: float, tdp_w: float | None = 100.0, gap: str = "") -> PeakPower:
    return PeakPower(machine="m", table="t", node_nm=7, precision="bf16", util=1.0,
                     dynamic_pj_per_mac=1.0, peak_macs_per_s=1e12, dynamic_w=total_w,
                     static_w=0.0, tdp_w=tdp_w, gap=gap)


@pytest.mark.parametrize("total, gap, verdict", [
    (70.0, "", "pass"),
    (40.0, "", "pass"),             # the lower edge is in the band
    (101.0, "", "FAIL"),            # above the TDP: the part would throttle
    (101.0, "why", "known gap"),    # a documented held-out prediction just over the TDP
    (111.0, "why", "FAIL"),         # ... but not beyond the tolerance: the model over-prices
    (20.0, "", "FAIL"),             # below the band without a reason
    (20.0, "why", "known gap"),
    (70.0, "why", "FAIL"),          # a stale note: the machine is in the band now
])
def test_verdicts(total, gap, verdict):
    assert TDP_BAND == (0.4, 1.0) and OVER_TDP_TOLERANCE == 0.1
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
    assert list(df["verdict"]) == ["pass", "pass"]
    assert (df["total_w"] == df["dynamic_w"] + df["static_w"]).all()
    parts = df[[f"{k}_w" for k in PARTS]].sum(axis=1)
    assert parts.to_numpy() == pytest.approx(df["dynamic_w"].to_numpy(), rel=1e-6)
    assert (df["ratio"] == df["total_w"] / df["tdp_w"]).all()


@pytest.mark.parametrize("machine", ["h200", "tpu_v4", "spr_cpu"])
def test_parts_add_up_to_what_the_kernel_run_prices(machine):
    """The table's parts (one per kind of machine) are the run's dynamic energy, split."""
    p = peak_power(machine)
    assert set(p.parts_w) == set(PARTS)
    assert sum(p.parts_w.values()) == pytest.approx(p.dynamic_w, rel=1e-6)
    assert p.static_w == pytest.approx(sum(p.static_parts_w.values()))


def test_the_shipped_gpu_constants_reproduce_the_h200_measurement():
    """The two GPU constants of the tables are the fit of scripts/fit_gpu_power.py: the H200's
    predicted power is its measured GEMM power, its static power its measured idle power."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "fit_gpu_power.py"
    spec = importlib.util.spec_from_file_location("fit_gpu_power", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    meas, fit = mod.measured(), mod.fit
    p = peak_power("h200")
    assert p.total_w == pytest.approx(meas["gemm_w"], rel=0.01)
    assert p.static_w == pytest.approx(meas["idle_w"], rel=0.01)
    assert p.parts_w["core"] > p.parts_w["mac"]  # the overhead, not the MAC, dominates
    f = fit()
    assert f["base_core_gpu_mac_pj"] == pytest.approx(14.5, rel=0.01)
    assert f["base_gpu_idle_pe_w"] == pytest.approx(5.38e-3, rel=0.01)


@pytest.mark.parametrize("machine, idle_w, source", [
    ("v100", 53.0, "github.com/zai-org/GLM-130B/issues/32: V100-SXM2 P0, 0 % util, 53 W"),
    ("h100", 140.0, "github.com/wilicc/gpu-burn/issues/114: H100 80GB HBM3 P0, 0-4 %, 140-145 W"),
])
def test_carried_idle_power_predicts_published_idle_of_other_gpus(machine, idle_w, source):
    """Held out: the H200's idle constant, carried by the leakage law, against nvidia-smi
    readings of idle cards published elsewhere (P0, memory allocated, no kernel running)."""
    p = peak_power(machine)
    assert p.static_w == pytest.approx(idle_w, rel=0.15), source


def test_gpu_power_constants_are_off_for_other_kinds():
    """core.gpu_mac and gpu_idle_pe stand for GPU parts: a systolic chip pays neither."""
    p = peak_power("tpu_v4")
    assert p.parts_w["core"] == 0.0 and "idle" not in p.static_parts_w
