"""Quantities are parsed in one place: decimal SI by default, only Ki/Mi/Gi/Ti binary."""

import pytest

from accelsim.units import (
    FLOP_PER_MAC,
    UnitError,
    parse_bandwidth,
    parse_bytes,
    parse_energy,
    parse_frequency,
    parse_power,
    parse_time,
)


def test_decimal_and_binary_prefixes():
    assert parse_bytes("108 kB") == 108_000
    assert parse_bytes("32 MiB") == 32 * 2**20
    assert parse_bytes("1 GB") == 1e9
    assert parse_bytes(4096) == 4096


def test_bits_convert_to_bytes():
    assert parse_bytes("64 b") == 8
    assert parse_bandwidth("64 Gb/s") == 8e9


def test_bandwidth_frequency_time_energy():
    assert parse_bandwidth("1.2 TB/s") == pytest.approx(1.2e12)
    assert parse_frequency("1.05 GHz") == pytest.approx(1.05e9)
    assert parse_time("100 ns") == pytest.approx(1e-7)
    assert parse_energy("1.3 nJ") == pytest.approx(1300.0)
    assert parse_energy("3.9 pJ") == pytest.approx(3.9)


def test_power_in_watts():
    assert parse_power("25.2 uW") == pytest.approx(25.2e-6)
    assert parse_power("0.35 kW") == pytest.approx(350.0)
    with pytest.raises(UnitError):
        parse_power("1 pJ")


def test_wrong_dimension_is_an_error():
    with pytest.raises(UnitError):
        parse_bytes("1 GHz")
    with pytest.raises(UnitError):
        parse_bandwidth("twelve")


def test_mac_is_two_flops():
    assert FLOP_PER_MAC == 2
