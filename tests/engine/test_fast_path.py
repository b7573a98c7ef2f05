"""The numba fast path equals the SimPy event engine, event for event, on every layer.

One engine, one clock: the recurrence in ``engine/analytic.py`` is the same pipeline as the
SimPy processes of ``engine/replay.py``. Hypothesis draws random layers, arrays, dataflows,
SRAM sizes and DRAM bandwidths, including ones that stall heavily.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.api import simulate
from accelsim.config.registry import load_machine
from accelsim.engine.systolic_run import run_layer
from accelsim.mapping.systolic import plan_layer
from accelsim.workload.ops import Conv2d, Gemm

dims = st.integers(min_value=1, max_value=700)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=dims, n=dims, k=dims,
       rows=st.sampled_from([2, 4, 8, 16, 32, 33, 128]),
       cols=st.sampled_from([2, 4, 8, 16, 32, 31, 128]),
       count=st.integers(1, 4),
       dataflow=st.sampled_from(["os", "ws", "is"]),
       bandwidth=st.sampled_from(["50 MB/s", "1 GB/s", "10 GB/s", "100 GB/s", "10 TB/s"]),
       sram=st.sampled_from(["2 kB", "16 kB", "256 kB", "32 MiB"]),
       latency=st.sampled_from(["0 ns", "50 ns", "1 us"]))
def test_fast_path_equals_event_replay(m, n, k, rows, cols, count, dataflow, bandwidth, sram,
                                       latency):
    machine = load_machine("scalesim_default", {
        "compute.array.rows": rows, "compute.array.cols": cols, "compute.array.count": count,
        "memory.dram.bandwidth_bytes_per_s": bandwidth, "memory.sram.capacity_bytes": sram,
        "memory.dram.latency_s": latency})
    plan = plan_layer(machine, Gemm(name="g", m=m, n=n, k=k), dataflow)
    event = run_layer(machine, plan, "event")
    fast = run_layer(machine, plan, "analytic")
    assert fast.schedule.equals(event.schedule)
    assert fast.moved_bytes == event.moved_bytes


def test_whole_model_tables_are_identical():
    a = simulate("tpu_v4", "resnet18", mode="event")
    b = simulate("tpu_v4", "resnet18", mode="analytic")
    assert (a.mode, b.mode) == ("event", "analytic")
    assert set(a.layers["mode"]) == {"event"}
    assert a.layers.drop(columns="mode").equals(b.layers.drop(columns="mode"))
    assert a.actions.equals(b.actions)


def test_default_mode_is_the_recurrence_and_equals_the_event_replay_on_a_transformer():
    # the default path (auto -> recurrence, repeated blocks scheduled once) against the
    # aggregated event replay, on a model whose blocks repeat
    auto = simulate("tpu_v4", "gpt2_small_decode")
    event = simulate("tpu_v4", "gpt2_small_decode", mode="event")
    assert auto.mode == "analytic"
    assert auto.to_dict()["mode"] == "analytic"
    assert auto.layers.drop(columns="mode").equals(event.layers.drop(columns="mode"))
    assert auto.totals == event.totals


def test_grouped_conv_replays_every_group():
    machine = load_machine("tpu_v1")
    op = Conv2d(name="dw", c=32, h=28, w=28, k=32, r=3, s=3, pad=1, groups=32)
    plan = plan_layer(machine, op)
    run = run_layer(machine, plan, "event")
    assert run.schedule.folds == 32 * plan.geometry.folds
    assert run_layer(machine, plan, "analytic").schedule.equals(run.schedule)


def test_ops_differing_only_in_name_are_planned_once_and_equal_to_their_own_plan():
    from accelsim.api import load_wl
    from accelsim.api.systolic import plan_workload

    machine = load_machine("tpu_v4")
    wl = load_wl("gpt2_small_decode")
    plans = plan_workload(machine, wl, "ws")
    by_traffic = {id(p.traffic) for p in plans if hasattr(p, "traffic")}
    gemms = [p for p in plans if hasattr(p, "traffic")]
    assert len(by_traffic) < len(gemms)  # the repeated blocks share their mapping
    for plan, op in zip(gemms, [o for o in wl.ops if hasattr(o, "lower")], strict=True):
        own = plan_layer(machine, op, "ws")
        assert plan.name == op.name
        assert (plan.gemm, plan.geometry, plan.fold_cycles, plan.repeat) == \
            (own.gemm, own.geometry, own.fold_cycles, own.repeat)
        assert all(np.array_equal(a, b) for a, b in zip(plan.stream(), own.stream(), strict=True))
