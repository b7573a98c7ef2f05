"""Host and GPU stream on one clock (accelsim.engine.gpu_stream): the SimPy replay and the
recurrence agree, and the GPU idles exactly when the host is the bottleneck."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.engine.gpu_stream import StreamCall, replay_closed_form, replay_event

costs = st.floats(min_value=0.0, max_value=1e-3, allow_nan=False, allow_infinity=False)
calls = st.lists(st.builds(StreamCall, costs, costs), min_size=0, max_size=60)


@settings(max_examples=60, deadline=None)
@given(calls, st.sampled_from(["per_call", "graph"]), costs, costs)
def test_event_replay_equals_the_recurrence(cs, submit, launch, sync):
    a = replay_event(cs, submit=submit, graph_launch_s=launch, sync_s=sync)
    b = replay_closed_form(cs, submit=submit, graph_launch_s=launch, sync_s=sync)
    assert a.time_s == b.time_s
    assert a.gpu_busy_s == b.gpu_busy_s and a.host_busy_s == b.host_busy_s
    for x, y in ((a.gpu_start, b.gpu_start), (a.gpu_end, b.gpu_end), (a.host_end, b.host_end)):
        assert all((math.isnan(p) and math.isnan(q)) or p == q for p, q in zip(x, y))


def test_host_bound_step_leaves_the_gpu_idle():
    # 10 calls of 10 us dispatch, 1 us kernels: the host sets the pace
    cs = [StreamCall(10e-6, 1e-6)] * 10
    t = replay_closed_form(cs, sync_s=5e-6)
    assert t.time_s == pytest.approx(100e-6 + 1e-6 + 5e-6)
    assert t.gpu_idle_s == pytest.approx(t.time_s - 10e-6)


def test_gpu_bound_step_hides_the_host():
    cs = [StreamCall(1e-6, 50e-6)] * 10
    t = replay_closed_form(cs)
    assert t.time_s == pytest.approx(1e-6 + 500e-6)
    assert t.sync_wait_s == pytest.approx(t.time_s - 10e-6)


def test_graph_submit_pays_one_launch_and_no_dispatch():
    cs = [StreamCall(10e-6, 1e-6)] * 100
    t = replay_event(cs, submit="graph", graph_launch_s=3e-6, sync_s=2e-6)
    assert t.time_s == pytest.approx(3e-6 + 100e-6 + 2e-6)
    assert t.host_busy_s == 0


def test_host_only_calls_launch_nothing():
    t = replay_closed_form([StreamCall(2e-6, 0.0), StreamCall(1e-6, 4e-6)])
    assert math.isnan(t.gpu_start[0]) and t.gpu_start[1] == pytest.approx(3e-6)


def test_bad_submit_is_refused():
    with pytest.raises(ValueError, match="submit"):
        replay_closed_form([], submit="stream")


def test_dependent_launch_hides_the_tail_only_between_capable_kernels():
    from accelsim.engine.gpu_stream import hide_dependent_launches

    # gemm, (host-only call), gemm, elementwise, gemm
    t = hide_dependent_launches([5e-6, 0.0, 5e-6, 2e-6, 5e-6],
                                [True, False, True, False, True],
                                [True, False, True, False, True], 1e-6)
    assert t == pytest.approx([5e-6, 0.0, 4e-6, 2e-6, 5e-6])
