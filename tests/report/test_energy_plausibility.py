"""Energy efficiency against what a chip's peak and TDP allow (issue 24 point 6).

One rule (``accelsim/report/power.py`` ``energy_flag``): no workload beats ``peak / TDP``
GFLOP/J, since power at utilisation ``u`` is at least idle + u (TDP - idle). TPU v4 used to
price a GEMM at ~2,300-3,000 GFLOP/J (its fixed power missing); with its measured minimum
power (``energy.idle_w``, Google Cloud: "measured min/mean/max power 90/170/192 W") it sits
below the 1,433 GFLOP/J its 275 TFLOP/s and 192 W allow.
"""

from __future__ import annotations

import json

import pytest

from accelsim.api.compare import run_kernel
from accelsim.config.registry import load_machine
from accelsim.report.energy import energy_table_for
from accelsim.report.power import (
    energy_flag,
    gflop_per_j_ceiling,
    machine_peak_flop_per_s,
    static_power_w,
)
from accelsim.workload.ops import Gemm

GEMM = Gemm(name="g", m=8192, n=8192, k=8192, dtype="bf16")


@pytest.mark.parametrize("idle_share", [0.0, 0.3, 0.9])
def test_no_utilisation_beats_peak_over_tdp_under_a_linear_power_law(idle_share):
    m = load_machine("tpu_v4_chip")
    peak, tdp = machine_peak_flop_per_s(m), m.energy.tdp_w
    ceiling = gflop_per_j_ceiling(m, peak)
    assert ceiling == pytest.approx(peak / tdp / 1e9)
    idle = idle_share * tdp
    for util in (0.01, 0.2, 0.57, 1.0):
        gflop_per_j = util * peak / (idle + util * (tdp - idle)) / 1e9
        assert gflop_per_j <= ceiling * (1 + 1e-12)
        assert energy_flag(m, gflop_per_j, peak) == ""
    assert energy_flag(m, 1.01 * ceiling, peak).startswith("implausible")


def test_tpu_v4_chip_gemm_pays_its_measured_floor_and_is_plausible():
    m = load_machine("tpu_v4_chip")
    static = static_power_w(m, energy_table_for(m))
    assert sum(static.values()) == pytest.approx(90.0)  # leakage + idle = the measured 90 W
    row = run_kernel(m, GEMM)
    power_w = row["energy_j"] / row["time_s"]
    assert 90.0 < power_w <= m.energy.tdp_w
    assert row["gflops_per_j"] < gflop_per_j_ceiling(m, row["peak_tflops"] * 1e12)
    assert row["energy_flag"] == ""


def test_without_its_fixed_power_tpu_v4_chip_is_flagged():
    """What compare printed before (~2,300 GFLOP/J on this GEMM): above the ceiling."""
    m = load_machine("tpu_v4_chip", {"energy.idle_w": None})
    row = run_kernel(m, GEMM)
    assert row["gflops_per_j"] > 1.4 * gflop_per_j_ceiling(m, row["peak_tflops"] * 1e12)
    assert row["energy_flag"].startswith("implausible") and "192 W TDP" in row["energy_flag"]


def test_the_highest_peak_of_each_kind():
    assert machine_peak_flop_per_s(load_machine("tpu_v4_chip")) == pytest.approx(275.25e12,
                                                                               rel=1e-3)
    h100 = load_machine("h100")
    assert machine_peak_flop_per_s(h100) == max(h100.peak_flops(p) for p in ("bf16", "fp8"))
    cpu = load_machine("spr_cpu")
    assert machine_peak_flop_per_s(cpu) == max(cpu.peak_flops(p) for p in ("bf16", "int8"))


def test_run_prints_and_its_json_carries_the_flag(cli_in_process, tmp_path):
    """``accelsim run`` applies the same rule: a TDP far above what the model prices makes the
    run's GFLOP/J implausible; the machine as shipped is not flagged (the command in-process:
    tests/cli/test_run_cli.py runs the real one)."""
    cli = cli_in_process
    wl = tmp_path / "g.yaml"
    wl.write_text("name: g\nops:\n  - {op: gemm, name: g, m: 4096, n: 4096, k: 4096}\n")
    r = cli("run", "tpu_v4_chip", str(wl), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["energy"]["flag"] == ""
    r = cli("run", "tpu_v4_chip", str(wl), "--set", "energy.tdp_w=2000", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    flagged = [line for line in r.stdout.splitlines() if line.startswith("! energy:")]
    assert len(flagged) == 1 and "implausible" in flagged[0] and "2000 W TDP" in flagged[0]
    r = cli("run", "h100", str(wl), "--set", "energy.tdp_w=5000", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["energy"]["flag"].startswith("implausible")
