"""Stalls emerge from the replay: double buffering hides memory when bandwidth suffices and
the array waits when it does not."""

import numpy as np
import pytest

from accelsim.api import simulate
from accelsim.config.registry import load_machine
from accelsim.engine.replay import schedule_event
from accelsim.engine.systolic_run import run_layer
from accelsim.hw.systolic import compute_cycles
from accelsim.mapping.systolic import plan_layer
from accelsim.workload.ops import Gemm

GEMM = Gemm(name="g", m=512, n=512, k=512)


def machine(bandwidth: str, sram: str = "1 MiB", count: int = 1):
    return load_machine("scalesim_default", {"memory.dram.bandwidth_bytes_per_s": bandwidth,
                                             "memory.sram.capacity_bytes": sram,
                                             "compute.array.count": count})


def test_ample_bandwidth_means_no_stalls_and_scalesim_compute_cycles():
    m = machine("100 TB/s")
    plan = plan_layer(m, GEMM, "os")
    run = run_layer(m, plan)
    assert run.schedule.stall_cycles == 0
    assert run.schedule.compute_cycles == compute_cycles(plan.geometry)


def test_starved_bandwidth_stalls_and_stalls_grow_as_bandwidth_falls():
    stalls = []
    for bw in ("100 GB/s", "10 GB/s", "1 GB/s", "100 MB/s"):
        m = machine(bw)
        stalls.append(run_layer(m, plan_layer(m, GEMM, "os")).schedule.stall_cycles)
    assert stalls[0] == 0
    assert all(a < b for a, b in zip(stalls[1:], stalls[2:]))
    assert stalls[-1] > 0


def test_memory_bound_layer_runs_at_dram_bandwidth():
    m = machine("100 MB/s")
    run = run_layer(m, plan_layer(m, GEMM, "os"))
    moved = sum(run.moved_bytes.values())
    cycles_for_bytes = moved / m.dram_bytes_per_cycle
    assert run.schedule.end == pytest.approx(cycles_for_bytes, rel=0.01)


def test_prefetch_overlaps_the_next_fold_with_compute():
    # 4 folds each needing 100 cycles of loading and 1000 cycles of compute: the loads of
    # folds 1.. hide under compute, so only the first load is exposed (the prologue).
    load = np.full(4, 100.0)
    drain = np.zeros(4)
    s = schedule_event(load, drain, fold_cycles=1000, arrays=1, bytes_per_cycle=1.0,
                       latency_cycles=0)
    assert s.first_compute == 100
    assert s.stall_cycles == 0
    assert s.end == 100 + 4 * 1000


def test_double_buffer_limits_prefetch_to_two_folds():
    # loads are slower than compute: fold f+2 can only load once fold f has finished
    load = np.full(6, 1000.0)
    s = schedule_event(load, np.zeros(6), fold_cycles=10, arrays=1, bytes_per_cycle=1.0,
                       latency_cycles=0)
    assert list(s.load_start[:3]) == [0, 1000, 2000]
    assert s.load_start[2] >= s.compute_end[0]
    assert s.stall_cycles == 5 * 1000 - 5 * 10


def test_more_arrays_shorten_compute_bound_layers():
    one = run_layer(machine("100 TB/s"), plan_layer(machine("100 TB/s"), GEMM, "os"))
    four_m = machine("100 TB/s", count=4)
    four = run_layer(four_m, plan_layer(four_m, GEMM, "os"))
    assert four.schedule.compute_cycles * 4 == one.schedule.compute_cycles


def test_latency_delays_the_first_fold():
    m0 = load_machine("scalesim_default", {"memory.dram.latency_s": "0 ns"})
    m1 = load_machine("scalesim_default", {"memory.dram.latency_s": "500 ns"})
    s0 = run_layer(m0, plan_layer(m0, GEMM, "os")).schedule
    s1 = run_layer(m1, plan_layer(m1, GEMM, "os")).schedule
    assert s1.first_compute - s0.first_compute == 500


def test_result_tables_and_totals():
    r = simulate("tpu_v4", "resnet18")
    assert len(r.layers) == len(r.workload.ops)
    assert r.totals["total_cycles"] == r.layers["total_cycles"].sum()
    assert 0 < r.totals["overall_util"] <= 1
    assert (r.layers["total_cycles"] >= r.layers["compute_cycles"]).all()
    assert r.totals["macs"] == r.workload.macs


def test_narrow_sram_port_stretches_every_fold():
    wide = load_machine("scalesim_default")
    narrow = load_machine("scalesim_default", {"memory.sram.bandwidth_bytes_per_s": "8 GB/s"})
    p_wide = plan_layer(wide, GEMM, "os")
    p_narrow = plan_layer(narrow, GEMM, "os")
    # OS on 32x32 needs ~(32 + 32) words per cycle; 8 words/cycle at 1 GHz is 8x too few
    assert p_wide.fold_cycles == p_wide.geometry.fold_cycles
    assert p_narrow.fold_cycles > 5 * p_wide.fold_cycles
    assert (run_layer(narrow, p_narrow).schedule.compute_cycles
            == p_narrow.fold_cycles * p_narrow.folds)
