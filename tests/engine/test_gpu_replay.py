"""The SimPy replay of GPU kernels and its closed-form fast path."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from accelsim.config.registry import load_machine
from accelsim.engine.gpu_replay import (
    contention_free,
    replay_auto,
    replay_closed_form,
    replay_event,
)
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.kernel import CtaCost, Kernel
from accelsim.workload.nn_ops import Attention
from accelsim.workload.ops import Gemm


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


@pytest.mark.parametrize("op", [
    Gemm(name="g", m=2048, n=2048, k=2048),            # one wave, compute bound
    Gemm(name="g", m=4096, n=4096, k=4096),            # several waves
    Gemm(name="g", m=4096, n=4096, k=4095),            # unaligned slow path
    Attention(name="a", batch=1, heads=8, seq_q=1024, seq_kv=1024, head_dim=128),
], ids=["one-wave", "waves", "unaligned", "attention"])
def test_event_replay_equals_closed_form_where_nothing_contends(h200, op):
    kernels = plan_op(h200, op, "bf16").kernels
    ev = replay_event(kernels, h200)
    cf = replay_closed_form(kernels, h200)
    assert ev.time_s == pytest.approx(cf.time_s, rel=1e-9)
    assert ev.kernel_s == pytest.approx(cf.kernel_s, rel=1e-9)


def test_contended_hbm_makes_the_event_replay_slower_than_contention_free(h200):
    """132 CTAs each pulling 1 MB at once: HBM, not each SM, sets the pace."""
    cta = CtaCost(compute_s=1e-7, l2_bytes=0.0, hbm_bytes=1e6)
    k = Kernel(name="k", groups=((132, cta),), launch_s=0.0, startup_s=0.0)
    ev = replay_event([k], h200).time_s
    free = replay_closed_form([k], h200).time_s
    floor = 132e6 / h200.memory.hbm.sustained_bytes_per_s
    assert ev > free
    assert ev == pytest.approx(floor, rel=1e-6)
    assert replay_closed_form([k], h200, contention=True).time_s == pytest.approx(floor)


def test_kernels_run_one_after_another(h200):
    cta = CtaCost(compute_s=2e-6, l2_bytes=0.0, hbm_bytes=0.0)
    k = Kernel(name="k", groups=((10, cta),), launch_s=1e-6, startup_s=0.0)
    ev = replay_event([k, k, k], h200)
    assert ev.time_s == pytest.approx(9e-6)
    assert ev.kernel_s == pytest.approx((3e-6, 3e-6, 3e-6))


def test_memory_bound_kernels_queue_on_hbm_in_the_event_replay(h200):
    """A split-K GEMM's reduce kernel streams partials: its CTAs contend for bandwidth, so the
    replay is at least the contention-free time and near the bandwidth-floor estimate."""
    kernels = plan_op(h200, Gemm(name="g", m=256, n=2048, k=16384), "bf16").kernels
    assert len(kernels) == 2
    ev = replay_event(kernels, h200).time_s
    assert ev >= replay_closed_form(kernels, h200).time_s * (1 - 1e-12)
    assert ev == pytest.approx(replay_closed_form(kernels, h200, contention=True).time_s,
                               rel=0.15)


# ------------------------------------------------------------------ aggregated replay

byte_counts = st.sampled_from([0.0, 1e3, 3.2e4, 2.6e5, 1e6, 8e6])
cta_costs = st.builds(CtaCost, compute_s=st.sampled_from([1e-8, 1e-7, 1e-6, 2e-5]),
                      l2_bytes=byte_counts, hbm_bytes=byte_counts,
                      pre_s=st.sampled_from([0.0, 3e-7]), post_s=st.sampled_from([0.0, 2e-7]))
kernels = st.builds(Kernel, name=st.just("k"),
                    groups=st.lists(st.tuples(st.integers(1, 400), cta_costs), min_size=1,
                                    max_size=3).map(tuple),
                    launch_s=st.sampled_from([0.0, 2e-6]), startup_s=st.sampled_from([0.0, 1e-6]))


# A kernel whose last three CTAs start when a short CTA ends, at 1e-7 + 2e-7 s, the instant
# (3e-7 s, equal in exact arithmetic) its 8 MB CTAs ask for L2 and HBM: which of them the ports
# serve first decides 0.2 us, and on the stream's clock, after 2.5 us of other kernels, the float
# sums used to tip the tie the other way than on an idle GPU's clock from 0.
_TIED = Kernel(name="k", groups=(
    (1, CtaCost(compute_s=1e-7, l2_bytes=1e3, hbm_bytes=3.2e4, pre_s=0.0, post_s=2e-7)),
    (30, CtaCost(compute_s=2e-5, l2_bytes=8e6, hbm_bytes=8e6, pre_s=3e-7, post_s=0.0)),
    (52, CtaCost(compute_s=1e-7, l2_bytes=1e3, hbm_bytes=1e3, pre_s=0.0, post_s=2e-7))),
    launch_s=0.0, startup_s=0.0)
_BEFORE_TIED = [
    Kernel(name="k", groups=((1, CtaCost(compute_s=1e-8, l2_bytes=0.0, hbm_bytes=0.0)),),
           launch_s=0.0, startup_s=0.0),
    Kernel(name="k", groups=((55, CtaCost(compute_s=1e-6, l2_bytes=3.2e4, hbm_bytes=1e3,
                                          pre_s=3e-7, post_s=2e-7)),),
           launch_s=0.0, startup_s=1e-6)]


AGGREGATED = dict(seq=st.lists(kernels, min_size=1, max_size=3), repeat=st.integers(1, 3),
                  machine=st.sampled_from(["h200", "a100", "v100"]))
"""Streams of the aggregated-replay property: the default suite draws a few (the tied case
always), ``-m slow`` many more."""


def _aggregated_equals_per_cta(seq, repeat, machine) -> None:
    m = load_machine(machine)
    stream = seq * repeat
    full = replay_event(stream, m, aggregate=False)
    agg = replay_event(stream, m)
    assert agg.time_s == pytest.approx(full.time_s, rel=1e-9)
    assert agg.kernel_s == pytest.approx(full.kernel_s, rel=1e-9)
    for k in seq:
        if contention_free(k, m):  # the proof the aggregation and the auto mode rest on
            assert replay_event([k], m, aggregate=False).time_s == pytest.approx(
                replay_closed_form([k], m).time_s, rel=1e-9)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**AGGREGATED)
@example(seq=[*_BEFORE_TIED, _TIED], repeat=2, machine="v100")
def test_aggregated_replay_equals_every_cta_replayed(seq, repeat, machine):
    _aggregated_equals_per_cta(seq, repeat, machine)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**AGGREGATED)
def test_aggregated_replay_equals_every_cta_replayed_over_many_streams(seq, repeat, machine):
    _aggregated_equals_per_cta(seq, repeat, machine)


@pytest.mark.parametrize("machine", ["h200", "a100", "v100"])
def test_a_kernel_replayed_cta_by_cta_lasts_the_same_whatever_ran_before_it(machine):
    """The stream starts a kernel on an idle GPU, so its per-CTA replay must not depend on the
    kernels before it, not even through the rounding of its start time at a tie."""
    m = load_machine(machine)
    alone = replay_event([_TIED], m, aggregate=False).kernel_s[0]
    after = replay_event([*_BEFORE_TIED, _TIED], m, aggregate=False).kernel_s[-1]
    assert after == alone


def test_auto_takes_the_closed_form_only_where_nothing_contends(h200):
    calm = plan_op(h200, Gemm(name="g", m=4096, n=4096, k=4096), "bf16").kernels
    cta = CtaCost(compute_s=1e-7, l2_bytes=0.0, hbm_bytes=1e6)
    busy = (Kernel(name="k", groups=((132, cta),), launch_s=0.0, startup_s=0.0),)
    assert all(contention_free(k, h200) for k in calm)
    assert replay_auto(calm, h200).mode == "analytic"
    assert not contention_free(busy[0], h200)
    auto = replay_auto(busy, h200)
    assert auto.mode == "event"
    assert auto.time_s == replay_event(busy, h200, aggregate=False).time_s


# ------------------------------------------------------- contended kernels: the recurrence

def _fewer_sms(m, sms):
    import dataclasses

    return dataclasses.replace(m, compute=dataclasses.replace(m.compute, sm_count=sms))


contended_costs = st.builds(CtaCost, compute_s=st.sampled_from([1e-8, 1e-7, 1e-6, 2e-5]),
                            l2_bytes=byte_counts, hbm_bytes=byte_counts,
                            pre_s=st.sampled_from([0.0, 3e-7, 1e-6]),
                            post_s=st.sampled_from([0.0, 2e-7]))


RECURRENCE = dict(groups=st.lists(st.tuples(st.integers(1, 700), contended_costs), min_size=1,
                                  max_size=3).map(tuple),
                  launch=st.sampled_from([0.0, 2e-6]), startup=st.sampled_from([0.0, 1e-6]),
                  machine=st.sampled_from(["h200", "a100", "v100"]),
                  sms=st.sampled_from([None, 3, 16]))
"""Kernels of the recurrence property: the default suite draws a few, ``-m slow`` many more."""


def _recurrence_equals_replay(groups, launch, startup, machine, sms) -> None:
    from accelsim.engine.gpu_replay import cta_recurrence_s

    m = load_machine(machine)
    m = _fewer_sms(m, sms) if sms else m
    k = Kernel(name="k", groups=groups, launch_s=launch, startup_s=startup)
    got = cta_recurrence_s(k, m)
    if len(groups) == 1:
        assert got is not None
    if got is not None:
        assert got == replay_event([k], m, aggregate=False).time_s


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**RECURRENCE)
def test_cta_recurrence_equals_the_per_cta_replay_exactly(groups, launch, startup, machine, sms):
    """Kernels of many waves (also on a GPU cut to 3 or 16 SMs), with contention: where the
    recurrence applies (always for one CTA group) it is the SimPy replay, to the bit."""
    _recurrence_equals_replay(groups, launch, startup, machine, sms)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**RECURRENCE)
def test_cta_recurrence_equals_the_per_cta_replay_over_many_kernels(groups, launch, startup,
                                                                    machine, sms):
    """The same property over many more kernels."""
    _recurrence_equals_replay(groups, launch, startup, machine, sms)


def test_llm_kernels_that_contend_take_the_recurrence(h200):
    """The contended kernels of a Llama-3-8B prefill (a 4,096-CTA GEMM, RoPE, elementwise):
    each through the recurrence, equal to its replay."""
    from accelsim.api import load_wl
    from accelsim.engine.gpu_replay import cta_recurrence_s
    from accelsim.errors import UnsupportedError

    seen = set()
    for op in load_wl("llama3_8b_prefill").ops[:40]:
        try:
            kernels = plan_op(h200, op, "bf16").kernels
        except UnsupportedError:  # ops the per-op GPU model leaves to the model runner
            continue
        for k in kernels:
            if k not in seen and not contention_free(k, h200):
                seen.add(k)
                assert cta_recurrence_s(k, h200) == replay_event([k], h200, aggregate=False).time_s
    assert len(seen) >= 3 and max(k.ctas for k in seen) >= 4096
