"""The aggregated event replay (periodic stretches of folds replayed once, identical layers
scheduled once) equals the un-aggregated replay and the recurrence, event for event, and
replays a number of folds set by the stream's structure, not its length."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.config.registry import load_machine
from accelsim.engine.aggregate import periodic_stretches, replay_aggregated
from accelsim.engine.analytic import _recurrence
from accelsim.engine.replay import replay_cycles, schedule_event
from accelsim.engine.systolic_run import run_layer, run_layers, stream_periods
from accelsim.mapping.systolic import plan_layer
from accelsim.workload.ops import Gemm

FIELDS = ("load_start", "load_ready", "compute_start", "compute_end", "drain_start", "drain_end")

transfer = st.sampled_from([0, 1, 3, 17, 60, 250, 900])
pattern = st.lists(st.tuples(transfer, transfer), min_size=1, max_size=6)
piece = st.tuples(pattern, st.integers(1, 400))


def _stream(pieces):
    pairs = [pair for pat, reps in pieces for _ in range(reps) for pair in pat]
    ld = np.array([a for a, _ in pairs], np.int64)
    dd = np.array([b for _, b in pairs], np.int64)
    return ld, dd


def _counting(fn, lengths):
    def run(ld, dd, p, n, lat):
        lengths.append(len(ld))
        return fn(ld, dd, p, n, lat)
    return run


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(piece, min_size=1, max_size=4),
       fold_cycles=st.sampled_from([1, 40, 130, 600]),
       arrays=st.integers(1, 4), latency=st.sampled_from([0, 7, 300]),
       hint=st.integers(65, 300))
def test_aggregated_replay_equals_full_replay_and_recurrence(pieces, fold_cycles, arrays, latency,
                                                             hint):
    ld, dd = _stream(pieces)
    full = replay_cycles(ld, dd, fold_cycles, arrays, latency)
    agg = replay_aggregated(replay_cycles, ld, dd, fold_cycles, arrays, latency, (hint,))
    rec = _recurrence(ld, dd, fold_cycles, arrays, latency)
    for a, b, c in zip(full, agg, rec, strict=True):
        assert np.array_equal(a, b)
        assert np.array_equal(a, c)


def test_replayed_folds_depend_on_structure_not_length():
    # one pattern of three folds, repeated: 30 thousand folds or 3 million replay the same
    pattern = (np.array([90, 10, 10]), np.array([0, 0, 45]))
    replayed = []
    for reps in (10_000, 1_000_000):
        ld, dd = np.tile(pattern[0], reps), np.tile(pattern[1], reps)
        lengths = []
        out = replay_aggregated(_counting(_recurrence, lengths), ld, dd, 100, 4, 20)
        ref = _recurrence(ld, dd, 100, 4, 20)
        assert all(np.array_equal(a, b) for a, b in zip(out, ref, strict=True))
        replayed.append(sum(lengths))
    assert replayed[0] == replayed[1] < 1000


def test_stretches_found_are_periodic_and_disjoint():
    ld = np.concatenate([np.full(3000, 5), np.tile([1, 2], 2000), np.arange(50)])
    dd = np.zeros_like(ld)
    found = periodic_stretches(ld, dd, 2, range(1, 9))
    assert [s.period for s in found] == [1, 2]
    for s in found:
        seg = ld[s.start:s.end]
        assert np.array_equal(seg, np.tile(seg[:s.period], s.reps))
    assert found[0].end <= found[1].start


def _gemm_plan(m, n, k, rows, bandwidth, sram, count, dataflow):
    machine = load_machine("scalesim_default", {
        "compute.array.rows": rows, "compute.array.cols": rows, "compute.array.count": count,
        "memory.dram.bandwidth_bytes_per_s": bandwidth, "memory.sram.capacity_bytes": sram})
    return machine, plan_layer(machine, Gemm(name="g", m=m, n=n, k=k), dataflow)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(64, 1500), n=st.integers(64, 1500), k=st.integers(8, 600),
       rows=st.sampled_from([8, 16, 32]), count=st.integers(1, 4),
       dataflow=st.sampled_from(["os", "ws", "is"]),
       bandwidth=st.sampled_from(["1 GB/s", "10 GB/s", "100 GB/s", "10 TB/s"]),
       sram=st.sampled_from(["16 kB", "256 kB", "32 MiB"]))
def test_aggregated_layer_equals_every_fold_replayed(m, n, k, rows, count, dataflow, bandwidth,
                                                     sram):
    machine, plan = _gemm_plan(m, n, k, rows, bandwidth, sram, count, dataflow)
    agg = run_layer(machine, plan, "event").schedule
    full = run_layer(machine, plan, "event", aggregate=False).schedule
    fast = run_layer(machine, plan, "analytic").schedule
    assert agg.equals(full)
    assert fast.equals(full)


def test_hinted_periods_include_the_stream_of_one_repeat():
    machine, plan = _gemm_plan(256, 256, 64, 16, "10 GB/s", "256 kB", 2, "os")
    periods = stream_periods(plan)
    assert plan.geometry.folds in periods
    load, drain = plan.stream()
    args = (load, drain, plan.fold_cycles, plan.arrays, machine.dram_bytes_per_cycle,
            machine.dram_latency_cycles)
    assert schedule_event(*args, aggregate=True, periods=periods).equals(schedule_event(*args))


def test_identical_layers_reuse_one_schedule_equal_to_their_own():
    machine = load_machine("tpu_v4")
    # separately mapped (no shared mapping): matched by the content of their streams
    ops = [Gemm(name=f"g{i}", m=64, n=2048 * (1 + i % 2), k=2048) for i in range(6)]
    plans = [plan_layer(machine, op) for op in ops]
    for mode in ("analytic", "event"):
        runs = run_layers(machine, plans, mode)
        assert [r.plan.name for r in runs] == [p.name for p in plans]
        assert runs[0].schedule is runs[2].schedule  # scheduled once
        for run, plan in zip(runs, plans, strict=True):
            own = run_layer(machine, plan, mode, aggregate=False).schedule
            assert run.schedule.equals(own)
