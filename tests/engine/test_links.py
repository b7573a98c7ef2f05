"""The link engine: copies equal the pure model when alone, share links under contention,
overlap with compute in pipelines, and schedule collectives whose bandwidth meets its bound."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.api.links import switched_system
from accelsim.config.system import load_system
from accelsim.engine import links as eng
from accelsim.engine.collectives import run_collective
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.hw import link as hw


@pytest.fixture(scope="module")
def h200x2():
    return load_system("h200x2")


@pytest.fixture(scope="module")
def hgx():
    return load_system("hgx_h200_x8")


@pytest.mark.parametrize("src, dst", [("host", "gpu0"), ("gpu0", "host"), ("gpu0", "gpu1")])
@pytest.mark.parametrize("n", [1024, 3 * 2**20 + 17, 2**30])
def test_a_lone_copy_takes_exactly_the_pure_model_time(h200x2, src, dst, n):
    route = hw.find_route(h200x2, src, dst)
    assert eng.run_copy(h200x2, src, dst, n) == pytest.approx(hw.copy_time_s(route, n), rel=1e-12)


@pytest.mark.parametrize("n", [4096, 2**20, 2**26])
def test_back_to_back_calls_run_at_max_of_issue_and_copy(h200x2, n):
    for src, dst in (("host", "gpu0"), ("gpu0", "gpu1")):
        route = hw.find_route(h200x2, src, dst)
        assert eng.run_back_to_back(h200x2, src, dst, n) == pytest.approx(
            hw.back_to_back_s(route, n), rel=1e-9)


def test_copies_that_share_a_pcie_uplink_take_turns(hgx):
    n = 2**28
    alone = eng.run_concurrent_copies(hgx, [("host", "gpu0", n)])[0]
    shared = eng.run_concurrent_copies(hgx, [("host", "gpu0", n), ("host", "gpu1", n)])
    apart = eng.run_concurrent_copies(hgx, [("host", "gpu0", n), ("host", "gpu2", n)])
    assert max(shared) == pytest.approx(2 * alone, rel=0.01)     # gpu0, gpu1 share pciesw0
    assert max(apart) == pytest.approx(alone, rel=1e-9)          # different switches


def test_links_are_full_duplex(h200x2):
    n = 2**28
    alone = eng.run_copy(h200x2, "host", "gpu0", n)
    both = eng.run_concurrent_copies(h200x2, [("host", "gpu0", n), ("gpu0", "host", n)])
    assert max(both) == pytest.approx(alone, rel=1e-9)


def test_two_senders_into_one_gpu_share_its_nvlink_port(hgx):
    n = 2**28
    alone = eng.run_copy(hgx, "gpu0", "gpu1", n)
    both = eng.run_concurrent_copies(hgx, [("gpu0", "gpu1", n), ("gpu2", "gpu1", n)])
    assert max(both) == pytest.approx(2 * alone, rel=0.02)


@pytest.mark.parametrize("ratio", [2.0, 0.5])
def test_pipelined_chunks_step_at_max_of_compute_and_transfer(h200x2, ratio):
    """Double buffering hides the transfer iff compute >= transfer (seed case DBUF)."""
    n = 2**26
    t_transfer = eng.run_copy(h200x2, "host", "gpu0", n)
    t_compute = ratio * t_transfer

    def step(overlap):
        a = eng.run_pipeline(h200x2, "gpu0", 3, n, t_compute, 0, overlap=overlap)["time_s"]
        b = eng.run_pipeline(h200x2, "gpu0", 7, n, t_compute, 0, overlap=overlap)["time_s"]
        return (b - a) / 4

    assert step(True) == pytest.approx(max(t_compute, t_transfer), rel=1e-9)
    assert step(False) == pytest.approx(t_compute + t_transfer, rel=1e-9)


def test_h2d_kernel_d2h_pipeline_total(h200x2):
    n, k, chunks = 2**24, 1e-4, 5
    h = eng.run_copy(h200x2, "host", "gpu0", n)
    d = eng.run_copy(h200x2, "gpu0", "host", n)
    out = eng.run_pipeline(h200x2, "gpu0", chunks, n, k, n)
    assert out["time_s"] == pytest.approx(h + k + d + (chunks - 1) * max(h, k, d), rel=1e-9)
    kinds = [r["name"] for r in out["trace"] if r["kind"] == "kernel"]
    assert kinds == [f"kernel{i}" for i in range(chunks)]


def test_zero_copy_wins_for_data_read_once_and_loses_when_reread(h200x2):
    once = eng.run_zero_copy(h200x2, "gpu0", 2**24, 1e-4, reads=1)
    many = eng.run_zero_copy(h200x2, "gpu0", 2**24, 1e-4, reads=8)
    assert once["winner"] == "zero-copy" and many["winner"] == "copy"


def test_ring_allreduce_meets_the_bandwidth_bound_when_latency_is_zero():
    s = switched_system("ideal", 8, 300e9)
    r = run_collective(s, "allreduce", 1e9)
    assert r["time_s"] == pytest.approx(hw.ring_allreduce_bound_s(1e9, 8, 300e9), rel=1e-9)
    assert r["max_bytes_sent_per_rank"] == pytest.approx(1.75e9)


def test_latency_adds_per_ring_step():
    lat = 2e-6
    s = switched_system("lat", 4, 300e9, latency_s=lat, launch_s=5e-6)
    r = run_collective(s, "allreduce", 64)
    assert r["time_s"] == pytest.approx(5e-6 + 2 * 3 * lat, rel=0.01)


@pytest.mark.parametrize("name, algo", [("allreduce", "ring"), ("allreduce", "direct"),
                                        ("allgather", "ring"), ("reducescatter", "direct"),
                                        ("alltoall", "direct")])
def test_large_collectives_reach_the_link_rate_as_busbw_in_the_link_model(hgx, name, algo):
    link = hw.payload_bytes_per_s(hgx.spec("nvlink4_x18"))
    r = run_collective(hgx, name, 2**30, algo=algo, model="link")
    assert 0.97 * link < r["busbw_bytes_per_s"] <= link * 1.0001


def test_tree_allreduce_is_faster_than_ring_for_small_messages_on_8_gpus_in_the_link_model(hgx):
    ring = run_collective(hgx, "allreduce", 1024, algo="ring", model="link")["time_s"]
    tree = run_collective(hgx, "allreduce", 1024, algo="tree", model="link")["time_s"]
    assert tree < ring


def test_collective_bad_input(hgx):
    with pytest.raises(UnsupportedError, match="tree"):
        run_collective(hgx, "alltoall", 1024, algo="tree")
    with pytest.raises(ConfigError, match="gpu42"):
        run_collective(hgx, "allreduce", 1024, ranks=["gpu0", "gpu42"])
    with pytest.raises(ConfigError, match="bytes"):
        run_collective(hgx, "allreduce", -5)
    with pytest.raises(ConfigError, match="broadcast"):
        run_collective(hgx, "broadcast", 1024)


def test_collective_link_energy_counts_every_hop():
    s = switched_system("e", 4, 100e9)
    r = run_collective(s, "allreduce", 4e6)
    spec = s.spec("link")
    # every byte a rank sends crosses two links (up to the switch and down), no packet overhead
    sent = 4 * r["max_bytes_sent_per_rank"]
    assert r["link_energy_j"] == pytest.approx(sent * 2 * 8 * spec.energy_per_bit_pj * 1e-12)

_H200X2 = load_system("h200x2")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(min_value=0, max_value=2**32), path=st.sampled_from(
    [("host", "gpu0"), ("gpu1", "host"), ("gpu1", "gpu0")]))
def test_engine_and_pure_model_agree_on_any_lone_copy(n, path):
    route = hw.find_route(_H200X2, *path)
    assert eng.run_copy(_H200X2, *path, n) == pytest.approx(hw.copy_time_s(route, n), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(a=st.integers(min_value=1, max_value=2**31), b=st.integers(min_value=1, max_value=2**31))
def test_more_bytes_never_take_less_time(a, b):
    lo, hi = sorted((a, b))
    route = hw.find_route(_H200X2, "host", "gpu0")
    assert hw.copy_time_s(route, lo) <= hw.copy_time_s(route, hi)
    assert hw.pageable_copy_s(_H200X2, route, lo) <= hw.pageable_copy_s(_H200X2, route, hi)
