"""The NCCL collective model: protocols chosen by size, per-step latency, SM-driven channels
that saturate the link, protocol payload, and the host floor of back-to-back calls."""

import dataclasses

import pytest

from accelsim.config.schema import build
from accelsim.config.system import CollectiveParams, load_system
from accelsim.engine.collectives import run_collective
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.hw import link as hw
from accelsim.hw import nccl

H200X2 = load_system("h200x2")
P = H200X2.collectives
LINK = hw.payload_bytes_per_s(H200X2.spec("nvlink4_x18"))
KIB, MIB = 2**10, 2**20


@pytest.mark.parametrize("name", ["allreduce", "allgather", "reducescatter"])
def test_nccl_picks_ll_for_small_and_simple_for_large_messages(name):
    """As NCCL 2.28 logged on 2x H200: LL up to 1 MiB, Simple from 4 MiB, never LL128."""
    for size in (KIB, 64 * KIB, MIB):
        assert nccl.choose_protocol(P, name, "ring", size, 2) == "LL"
    for size in (4 * MIB, 64 * MIB, 2**30):
        assert nccl.choose_protocol(P, name, "ring", size, 2) == "Simple"


def test_the_ll_to_simple_switch_is_where_their_estimates_cross():
    est = {p: (lambda s, p=p: nccl.nccl_estimate_s(P, "allreduce", "ring", s, 2, p))
           for p in ("LL", "Simple")}
    # LL: 7.8 us + S / 141 GB/s; Simple: 15.2 us + S / 360 GB/s -> equal at ~1.7 MB
    cross = 7.4e-6 / (1 / 141e9 - 1 / 360e9)
    assert est["LL"](cross) == pytest.approx(est["Simple"](cross), rel=1e-9)
    assert nccl.choose_protocol(P, "allreduce", "ring", 0.9 * cross, 2) == "LL"
    assert nccl.choose_protocol(P, "allreduce", "ring", 1.1 * cross, 2) == "Simple"


def test_a_forced_protocol_is_used_and_small_all_to_all_messages_use_ll():
    forced = dataclasses.replace(P, protocol="LL128")
    assert nccl.choose_protocol(forced, "allreduce", "ring", 2**30, 2) == "LL128"
    assert nccl.choose_protocol(P, "alltoall", "direct", 2 * 16 * KIB, 2) == "LL"
    assert nccl.choose_protocol(P, "alltoall", "direct", 2 * 64 * KIB, 2) == "Simple"


@pytest.mark.parametrize("protocol, step", [("LL", 0.6e-6), ("LL128", 1.9e-6), ("Simple", 3.4e-6)])
def test_a_tiny_collective_costs_base_plus_one_step_latency_per_ring_step(protocol, step):
    base = dict(zip(("LL", "LL128", "Simple"), P.base_latency_s))[protocol]
    for ranks in (2, 4, 8):
        t = nccl.gpu_time(P, "allreduce", "ring", 8, ranks, LINK, protocol)
        assert t.latency_s == pytest.approx(base + 2 * (ranks - 1) * step)
        assert t.time_s == pytest.approx(t.latency_s, rel=1e-3)
    ag = [nccl.gpu_time(P, "allgather", "ring", 8, r, LINK, protocol).time_s for r in (4, 5)]
    assert ag[1] - ag[0] == pytest.approx(step, rel=1e-2)


def test_bytes_touched_per_byte_sent_count_the_reduction_loads():
    # 2 ranks: all-reduce send (2) + reduce-copy-send (4) + receive (2) over 2 sent segments
    assert nccl.sm_bytes_per_link_byte("allreduce", "ring", 2) == pytest.approx(4.0)
    assert nccl.sm_bytes_per_link_byte("allgather", "ring", 2) == pytest.approx(5.0)
    assert nccl.sm_bytes_per_link_byte("reducescatter", "ring", 2) == pytest.approx(5.0)
    # long rings: every middle step loads, (reduces,) and stores remotely: 3 per byte
    assert nccl.sm_bytes_per_link_byte("allreduce", "ring", 1000) == pytest.approx(3.0, abs=0.01)


def test_one_channel_runs_at_its_sm_rate_and_many_channels_at_the_link_rate():
    one = dataclasses.replace(P, channels=1)
    t = nccl.gpu_time(one, "allreduce", "ring", 2**30, 2, LINK, "Simple")
    assert t.channels == 1
    assert t.bandwidth_bytes_per_s == pytest.approx(P.sm_bytes_per_s / 4, rel=0.01)
    many = dataclasses.replace(P, channels=512)
    t = nccl.gpu_time(many, "allreduce", "ring", 2**34, 2, LINK, "Simple")
    assert 0.99 * LINK < t.bandwidth_bytes_per_s < LINK
    for k in (1, 2, 4, 8, 16, 24):
        bw = nccl.gpu_time(dataclasses.replace(P, channels=k), "allreduce", "ring", 2**30, 2,
                           LINK, "Simple").bandwidth_bytes_per_s
        assert bw < min(k * P.sm_bytes_per_s / 4, LINK)


def test_ll_carries_half_payload_and_ll128_fifteen_sixteenths():
    roomy = dataclasses.replace(P, ll_max_bytes_per_s=1e15, ll128_channel_max_bytes_per_s=1e15)
    bw = {p: nccl.gpu_time(roomy, "allreduce", "ring", 2**30, 2, LINK, p).bandwidth_bytes_per_s
          for p in ("LL", "LL128", "Simple")}
    assert bw["LL"] / bw["Simple"] == pytest.approx(0.5)
    assert bw["LL128"] / bw["Simple"] == pytest.approx(120 / 128)
    capped = nccl.gpu_time(P, "allreduce", "ring", 2**30, 2, LINK, "LL")
    assert capped.bandwidth_bytes_per_s == pytest.approx(P.ll_max_bytes_per_s)


def test_channels_grow_with_the_message():
    used = [nccl.channels_used(P, "allreduce", "LL", s, 2) for s in (KIB, 16 * KIB, 64 * KIB, MIB)]
    assert used == [1, 2, 8, 24]
    assert nccl.channels_used(P, "allreduce", "Simple", 2**30, 2) == P.channels


def test_time_grows_with_size_and_back_to_back_calls_pay_the_host_floor():
    times = [nccl.gpu_time(P, "allreduce", "ring", 2.0**k, 2, LINK).time_s for k in range(10, 31)]
    assert all(b >= a for a, b in zip(times, times[1:]))
    assert nccl.per_call_s(P, times[0]) == P.issue_s
    assert nccl.per_call_s(P, times[-1]) == times[-1]


def test_the_default_collective_is_the_nccl_closed_form_and_flag_bytes_cost_link_energy():
    r = run_collective(H200X2, "allreduce", 2**26)
    assert r["model"] == "nccl" and r["method"] == "closed form" and r["protocol"] == "Simple"
    ll = run_collective(H200X2, "allreduce", 2**26, protocol="LL")["link_energy_j"]
    simple = run_collective(H200X2, "allreduce", 2**26, protocol="Simple")["link_energy_j"]
    assert ll / simple == pytest.approx(2.0, rel=0.01)
    link = run_collective(H200X2, "allreduce", 2**26, model="link")
    assert link["method"] == "event replay" and link["time_s"] < r["time_s"]


def test_bad_input():
    with pytest.raises(ConfigError, match="LL64"):
        run_collective(H200X2, "allreduce", 1024, protocol="LL64")
    with pytest.raises(ConfigError, match="mesh"):
        run_collective(H200X2, "allreduce", 1024, model="mesh")
    with pytest.raises(UnsupportedError, match="direct"):
        nccl.gpu_time(P, "allreduce", "direct", 1024, 2, LINK)
    with pytest.raises(ConfigError, match="three values"):
        build(CollectiveParams, {"base_latency_s": ["1 us", "2 us"]}, file="x.yaml")
    with pytest.raises(ConfigError, match="x.yaml"):
        build(CollectiveParams, {"protocol": "LL256"}, file="x.yaml")
