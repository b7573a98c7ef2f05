"""Roofline analysis: laws, operator traffic, machine adapters, simulated tables, edge cases."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from accelsim.analysis import amdahl as am
from accelsim.analysis import mapspace as ms
from accelsim.analysis import roofline as rl
from accelsim.analysis.wavefront import ws_wavefront
from accelsim.config.registry import load_machine
from accelsim.devices import machine_roofs, result_roofline
from accelsim.errors import ConfigError
from accelsim.workload.nn_ops import Embedding, LayerNorm
from accelsim.workload.ops import Gemm


def a100_like() -> rl.MachineRoofs:
    return rl.MachineRoofs(name="x", peak_flops_per_s=312e12, precision="fp16",
                           roofs=(rl.Roof(level="hbm", bandwidth_bytes_per_s=2.04e12),))


def test_ridge_attainable_and_bound():
    r = a100_like()
    assert r.ridge() == pytest.approx(152.94, rel=1e-4)
    assert rl.attainable(312e12, 2.04e12, 1.0) == pytest.approx(2.04e12)
    assert rl.attainable(312e12, 2.04e12, 1e4) == 312e12
    assert rl.bound_of(312e12, 2.04e12, 100.0) == "memory"
    assert rl.bound_of(312e12, 2.04e12, 200.0) == "compute"


def test_zero_bytes_and_zero_flops_are_reported_not_errors():
    """No bytes: intensity inf and the compute roof; no FLOPs: intensity 0, nothing attainable."""
    assert rl.arithmetic_intensity(10.0, 0.0) == math.inf
    assert rl.arithmetic_intensity(0.0, 10.0) == 0.0
    assert rl.arithmetic_intensity(0.0, 0.0) == 0.0
    assert rl.attainable(1e12, 1e9, math.inf) == 1e12
    assert rl.attainable(1e12, 1e9, 0.0) == 0.0
    assert rl.format_intensity(math.inf) == "inf" and rl.format_intensity(0.0) == "0"
    row = rl.op_row(Embedding(name="emb", tokens=8, dim=16, table_rows=100), a100_like())
    assert row["intensity_hbm"] == 0.0 and row["bound"] == "no compute"
    assert rl.ridge_point(1e12, 0.0) == math.inf


def test_compulsory_traffic_of_a_gemm_is_every_tensor_once():
    op = Gemm(name="fc", m=32, k=2048, n=2048)
    t = rl.op_traffic(op, 2)
    assert t == {"input": 32 * 2048 * 2, "weight": 2048 * 2048 * 2, "output": 32 * 2048 * 2,
                 "total": 8_650_752}
    row = rl.op_row(op, a100_like())
    assert row["intensity_hbm"] == pytest.approx(31.03, rel=1e-3)
    assert row["bound"] == "hbm" and row["advice"] == "medium"


def test_batch_moves_a_layer_across_the_ridge():
    """Seed NM1.8: a 2048x2048 layer is memory-bound at batch 32 and compute-bound at 256."""
    bounds = [rl.op_row(Gemm(name="fc", m=b, k=2048, n=2048), a100_like())["bound"]
              for b in (1, 32, 256)]
    assert bounds == ["hbm", "hbm", "compute"]


def test_layernorm_is_memory_bound():
    row = rl.op_row(LayerNorm(name="ln", rows=16384, cols=768), a100_like())
    assert row["intensity_hbm"] == pytest.approx(2.0, rel=1e-3) and row["bound"] == "hbm"


def test_systolic_roofs_come_from_the_config():
    m = load_machine("tpu_v4")
    r = machine_roofs(m)
    assert r.peak_flops_per_s == pytest.approx(4 * 128 * 128 * 2 * 1.05e9)
    assert r.roof("dram").bandwidth_bytes_per_s == 600e9
    assert r.roof("sram").bandwidth_bytes_per_s == pytest.approx(4 * 256 * 2 * 1.05e9)
    assert r.ridge("dram") == pytest.approx(229.4, rel=1e-3)


@pytest.mark.parametrize("name, ridge", [("v100", 139.3), ("a100", 153.0), ("h100", 295.4),
                                         ("h200", 206.1)])
def test_gpu_ridge_points(name, ridge):
    r = machine_roofs(load_machine(name), "fp16")
    assert r.ridge("hbm") == pytest.approx(ridge, rel=2e-3)
    assert r.levels == ("l1", "l2", "hbm", "host")
    # inner levels have more bandwidth, so their ridges are lower
    ridges = [r.ridge(lv) for lv in r.levels]
    assert ridges == sorted(ridges)


def test_simulated_table_points_never_beat_their_bound():
    from accelsim.api import simulate

    res = simulate("tpu_v4", "resnet18", mode="analytic", energy=False)
    roofs_df, table = result_roofline(res)
    assert len(table) == len(res.layers) and set(roofs_df["level"]) == {"sram", "dram"}
    assert (table["achieved_flops_per_s"] <= table["attainable_flops_per_s"] * (1 + 1e-9)).all()
    assert set(table["bound"]) <= {"compute", "sram", "dram"}
    assert (table["bytes_dram"] == res.layers["dram_bytes"]).all()


def test_hierarchical_bound_takes_the_lowest_roof():
    r = rl.MachineRoofs(name="h", peak_flops_per_s=100.0, roofs=(
        rl.Roof(level="sram", bandwidth_bytes_per_s=10.0),
        rl.Roof(level="dram", bandwidth_bytes_per_s=1.0)))
    assert rl.hierarchical_bound(r, 100.0, {"sram": 50.0, "dram": 2.0}) == (20.0, "sram")
    assert rl.hierarchical_bound(r, 100.0, {"sram": 1.0, "dram": 1.0}) == (100.0, "compute")
    assert (rl.hierarchical_bound(r, 100.0, {"sram": 1.0, "dram": float("nan")})
            == (100.0, "compute"))


def test_advice_bands_follow_table_14():
    assert [rl.advice(i) for i in (500, 50, 5, 0.5)] == ["high", "medium", "low", "very_low"]


def test_amdahl():
    assert am.amdahl_speedup(0.95, 247) == pytest.approx(18.57, rel=1e-3)
    assert am.amdahl_limit(0.8) == pytest.approx(5.0)
    assert am.phase_speedup({"host": 5, "matmul": 95}, {"matmul": 95 / 247}) == \
        pytest.approx(am.amdahl_speedup(0.95, 247))
    assert am.amdahl_speedup(0.9, math.inf) == pytest.approx(10)
    with pytest.raises(ConfigError, match="accelerated_fraction = 1.5"):
        am.amdahl_speedup(1.5, 2)
    with pytest.raises(ConfigError, match="path_speedup = 0"):
        am.amdahl_speedup(0.5, 0)
    t = am.amdahl_table(0.9, [1, 10, 100])
    assert list(t["speedup"].round(3)) == [1.0, 5.263, 9.174]


def test_mapspace_counts_and_loop_order_reloads():
    assert ms.loop_orders(7) == 5040 and ms.parallel_choices(6, 3) == 120
    assert ms.placements(4, 5, 3) == 4 ** 15
    b = {"i": 4, "j": 3}
    assert ms.operand_fetches(["j", "i"], b, ["j"], 1) == 3      # reused across i
    assert ms.operand_fetches(["i", "j"], b, ["j"], 1) == 12     # refetched every i
    assert ms.operand_fetches(["i", "j"], b, ["j"], 3) == 3      # fits in the buffer
    e = ms.EdgeTiles(129, 128)
    assert (e.tiles, e.active_in_last, e.idle_in_last) == (2, 1, 127)


def test_wavefront_matches_the_systolic_fold_length():
    from accelsim.hw.systolic import compute_cycles, geometry

    for m, k, n in ((2, 2, 2), (5, 3, 4), (1, 8, 8)):
        w = ws_wavefront(m=m, k=k, n=n)
        assert w.span == m + n + k - 2
        assert w.span + k == compute_cycles(geometry(m, n, k, k, n, "ws"))


def test_workload_table_has_one_row_per_op():
    ops = [Gemm(name="a", m=1, k=8, n=8), Embedding(name="e", tokens=2, dim=4, table_rows=9)]
    df = rl.workload_table(ops, a100_like())
    assert isinstance(df, pd.DataFrame) and list(df["layer"]) == ["a", "e"]


def test_cpu_roofs_come_from_the_config():
    """CPU: the peak of the matrix unit (AMX bf16) or the SIMD units (fp32); one roof per
    cache level (bytes/cycle/core x cores x clock) and DRAM (all channels)."""
    cpu = load_machine("spr_cpu")
    r = machine_roofs(cpu, "bf16")
    comp = cpu.compute
    assert r.peak_flops_per_s == pytest.approx(2 * 512 * comp.cores * cpu.matrix_clock_hz())
    assert machine_roofs(cpu, "fp32").peak_flops_per_s == pytest.approx(
        2 * comp.simd.macs_per_cycle("fp32") * comp.cores * comp.clock_hz)
    assert r.levels == ("l1", "l2", "l3", "dram") and r.offchip_level == "dram"
    assert r.roof("l2").bandwidth_bytes_per_s == pytest.approx(
        cpu.memory.l2.bytes_per_cycle_per_core * comp.cores * comp.clock_hz)
    assert r.roof("dram").bandwidth_bytes_per_s == pytest.approx(8 * 38.4e9)
    assert machine_roofs(cpu).precision == cpu.default_precision


@pytest.mark.parametrize("name", ["h200x2", "node_gpu_npu"])
def test_systems_have_no_single_roofline(name):
    from accelsim.errors import ConfigError

    with pytest.raises(ConfigError, match="needs a single device"):
        machine_roofs(load_machine(name))
