"""Hardware configs load into frozen, validated objects; errors name file, field and value."""

import dataclasses

import pytest

from accelsim.config.registry import apply_overrides, load_machine
from accelsim.errors import ConfigError
from accelsim.files import builtin_names


@pytest.mark.parametrize("name", builtin_names("hardware"))
def test_every_builtin_config_loads(name):
    m = load_machine(name)
    assert m.name == name


def test_systolic_presets_match_their_datasheets():
    v1 = load_machine("tpu_v1")
    assert (v1.array.rows, v1.array.cols, v1.array.dataflow) == (256, 256, "ws")
    assert v1.clock_hz == 700e6 and v1.memory.dram.bandwidth_bytes_per_s == 34e9
    assert v1.memory.sram.ifmap_bytes == pytest.approx(24 * 2**20)
    v4 = load_machine("tpu_v4")
    assert v4.array.count == 4 and v4.array.rows == 128 and v4.array.precision == "bf16"
    assert v4.peak_macs_per_s * 2 == pytest.approx(137.6e12, rel=1e-3)  # half of 275 TF/chip
    ey = load_machine("eyeriss")
    assert (ey.array.rows, ey.array.cols) == (12, 14)
    assert ey.memory.sram.capacity_bytes == 108_000
    ss = load_machine("scalesim_default")
    assert (ss.array.rows, ss.array.cols, ss.array.operand_bytes) == (32, 32, 1)


def test_configs_are_frozen():
    m = load_machine("tpu_v4")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.clock_hz = 1.0


def test_negative_rows_names_file_field_and_value():
    with pytest.raises(ConfigError) as err:
        load_machine("tpu_v4", {"compute.array.rows": -128})
    msg = str(err.value)
    assert "tpu_v4.yaml" in msg and "compute.array.rows = -128" in msg and "> 0" in msg


def test_misspelt_key_suggests_the_right_one():
    with pytest.raises(ConfigError, match="did you mean 'rows'"):
        load_machine("tpu_v4", {"compute.array.rowz": 3})


def test_unknown_dataflow_lists_the_choices():
    with pytest.raises(ConfigError, match="must be one of os, ws, is, rs"):
        load_machine("tpu_v4", {"compute.array.dataflow": "xs"})


def test_row_stationary_default_needs_scratchpads():
    """A machine may default to rs only if its PEs have scratchpads (Eyeriss does)."""
    with pytest.raises(ConfigError, match=r"compute.array.*rs.*scratchpads"):
        load_machine("tpu_v4", {"compute.array.dataflow": "rs"})
    ey = load_machine("eyeriss")
    assert ey.array.dataflow == "rs" and ey.array.scratchpads.filter_bytes == 448


def test_bad_unit_is_reported():
    with pytest.raises(ConfigError, match=r"memory.dram.bandwidth_bytes_per_s = '12 GHz'"):
        load_machine("tpu_v4", {"memory.dram.bandwidth_bytes_per_s": "12 GHz"})


def test_unknown_builtin_suggests_the_closest():
    with pytest.raises(ConfigError, match="did you mean 'tpu_v4'"):
        load_machine("tpu_v4x")


def test_override_path_into_nothing_is_an_error():
    with pytest.raises(ConfigError, match="names no section"):
        apply_overrides({"compute": {"array": {}}}, {"compute.nothing.rows": 3})


def test_sram_fractions_must_add_up():
    with pytest.raises(ConfigError, match="add up"):
        load_machine("tpu_v4", {"memory.sram.ifmap_fraction": 0.9})


def test_overrides_accept_unit_strings():
    m = load_machine("tpu_v4", {"memory.sram.capacity_bytes": "4 MiB"})
    assert m.memory.sram.capacity_bytes == 4 * 2**20
