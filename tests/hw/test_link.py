"""Pure link costs: bandwidth from generation tables, packet overhead, latency, routes, actions."""

import math

import pytest

from accelsim.config.link import LinkSpec
from accelsim.config.schema import build
from accelsim.config.system import System, load_system
from accelsim.errors import ConfigError
from accelsim.files import resolve_path
from accelsim.hw import link as hw


def pcie(gen, lanes=16, **kw):
    return build(LinkSpec, {"name": "p", "protocol": "pcie", "generation": gen, "lanes": lanes,
                            **kw})


@pytest.mark.parametrize("gen, x16_gb_s", [(3, 15.75), (4, 31.5), (5, 63.0)])
def test_pcie_raw_bandwidth_is_gt_per_s_times_lanes_after_128b130b(gen, x16_gb_s):
    assert pcie(gen).raw_bytes_per_s / 1e9 == pytest.approx(x16_gb_s, rel=2e-3)
    assert pcie(gen).signaling_bytes_per_s == pytest.approx(x16_gb_s * 130 / 128 * 1e9, rel=2e-3)


def test_pcie6_flit_mode_carries_236_of_256_bytes():
    spec = pcie(6)
    assert spec.signaling_bytes_per_s == pytest.approx(128e9)
    assert spec.raw_bytes_per_s == pytest.approx(128e9 * 236 / 256)
    assert spec.overhead_bytes == 16


def test_lanes_scale_bandwidth_linearly():
    assert pcie(5, 8).raw_bytes_per_s * 2 == pytest.approx(pcie(5, 16).raw_bytes_per_s)


def test_every_packet_pays_its_header():
    spec = pcie(5)  # 256-byte payload, 24 bytes of framing + header + LCRC
    assert hw.wire_bytes(spec, 256) == 280
    assert hw.wire_bytes(spec, 257) == 257 + 2 * 24
    assert hw.packets(spec, 0) == 0
    assert hw.payload_bytes_per_s(spec) == pytest.approx(spec.raw_bytes_per_s * 256 / 280)


def test_smaller_max_payload_lowers_the_achievable_bandwidth():
    assert hw.payload_bytes_per_s(pcie(5, max_payload_bytes=128)) < hw.payload_bytes_per_s(pcie(5))


def test_bad_generation_is_a_config_error():
    with pytest.raises(ConfigError, match="generation"):
        pcie(7)


@pytest.fixture(scope="module")
def h200x2():
    return load_system("h200x2")


def test_copy_time_is_latency_plus_bytes_over_bandwidth(h200x2):
    route = hw.find_route(h200x2, "host", "gpu0")
    lat = route.dma_setup_s + route.latency_s
    small, big = hw.copy_time_s(route, 1024), hw.copy_time_s(route, 2**30)
    assert small == pytest.approx(lat + hw.serialization_s(route.bottleneck, 1024))
    assert small < 2 * lat                                      # latency regime
    assert 2**30 / big == pytest.approx(hw.payload_bytes_per_s(route.bottleneck), rel=1e-3)
    assert hw.copy_time_s(route, 0) == 0


def test_back_to_back_copies_are_limited_by_host_issue(h200x2):
    route = hw.find_route(h200x2, "gpu0", "gpu1")
    assert hw.back_to_back_s(route, 4096) == route.issue_s
    assert hw.back_to_back_s(route, 2**30) == hw.copy_time_s(route, 2**30)


def test_pageable_copies_are_slower_and_tend_to_the_staging_copy_rate(h200x2):
    route = hw.find_route(h200x2, "host", "gpu0")
    for n in (1024, 2**20, 2**30):
        assert hw.pageable_copy_s(h200x2, route, n) > hw.copy_time_s(route, n)
    rate = 2**34 / hw.pageable_copy_s(h200x2, route, 2**34)
    assert rate == pytest.approx(h200x2.host.staging_copy_bytes_per_s, rel=0.01)


def test_gpus_talk_over_nvlink_and_the_host_over_pcie(h200x2):
    assert hw.find_route(h200x2, "gpu0", "gpu1").names == ["nvl0", "nvl1"]
    assert hw.find_route(h200x2, "gpu1", "host").names == ["pcie1"]


def no_peer_system():
    return build(System, {
        "name": "pcie_only", "devices": [{"name": "gpu0", "hardware": "h200"},
                                         {"name": "gpu1", "hardware": "h200"},
                                         {"name": "lonely", "hardware": "h200"}],
        "link_specs": [{"name": "p5", "protocol": "pcie", "generation": 5, "lanes": 16}],
        "links": [{"name": "a", "ends": ["host", "gpu0"], "spec": "p5"},
                  {"name": "b", "ends": ["host", "gpu1"], "spec": "p5"}]})


def test_without_a_peer_link_gpu_to_gpu_goes_through_host_memory():
    s = no_peer_system()
    route = hw.find_route(s, "gpu0", "gpu1")
    assert route.via_host and route.names == ["a", "b"]
    direct = hw.find_route(s, "host", "gpu1")
    assert hw.copy_time_s(route, 2**30) > 1.9 * hw.copy_time_s(direct, 2**30)


def test_unconnected_and_unknown_endpoints_are_named():
    s = no_peer_system()
    with pytest.raises(ConfigError, match="no link path from 'gpu0' to 'lonely'"):
        hw.find_route(s, "gpu0", "lonely")
    with pytest.raises(ConfigError, match="gpu9"):
        hw.find_route(s, "gpu0", "gpu9")


@pytest.mark.parametrize("bad", [-1, math.inf, math.nan, "1GB", True])
def test_bad_byte_counts_are_rejected(bad):
    with pytest.raises(ConfigError, match="bytes"):
        hw.check_bytes(bad)


def test_actions_count_packets_and_wire_bits_on_every_hop(h200x2):
    route = hw.find_route(h200x2, "gpu0", "gpu1")
    rows = hw.transfer_actions(route, 2**20)
    assert [r["link"] for r in rows] == ["nvl0", "nvl1"]
    spec = route.bottleneck
    assert rows[0]["count"] == 2**20 // spec.max_payload_bytes
    assert rows[0]["bits"] == hw.wire_bytes(spec, 2**20) * 8
    assert rows[0]["energy_pj"] == pytest.approx(rows[0]["bits"] * spec.energy_per_bit_pj)
    assert {r["level"] for r in rows} == {"link"}


def test_nccl_bus_factors():
    assert hw.bus_factor("allreduce", 8) == pytest.approx(1.75)
    assert hw.bus_factor("allgather", 8) == pytest.approx(0.875)
    assert hw.bus_factor("alltoall", 2) == pytest.approx(0.5)
    with pytest.raises(ConfigError):
        hw.bus_factor("broadcast", 2)


H200X2_YAML = resolve_path("h200x2", "hardware")


def test_dangling_link_names_file_field_and_value(tmp_path):
    text = H200X2_YAML.read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("ends: [gpu1, nvswitch]", "ends: [gpu9, nvswitch]"))
    with pytest.raises(ConfigError) as err:
        load_system(bad)
    msg = str(err.value)
    assert str(bad) in msg and "links[3].ends" in msg and "'gpu9'" in msg and "nvl1" in msg


def test_unknown_link_spec_and_device_hardware_are_named(tmp_path):
    text = H200X2_YAML.read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("spec: nvlink4_x18}", "spec: nvlink9}", 1))
    with pytest.raises(ConfigError, match=r"links\[2\].spec = 'nvlink9'"):
        load_system(bad)
    bad.write_text(text.replace("hardware: h200, copy_engines: 2}", "hardware: h999}", 1))
    with pytest.raises(ConfigError, match=r"devices\[0\].hardware = 'h999'"):
        load_system(bad)
