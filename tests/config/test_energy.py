"""Energy tables: loading, validation, the SRAM rule, overrides and technology scaling."""

from __future__ import annotations

import math

import pytest

from accelsim.config.energy import load_energy_table, table_from_dict
from accelsim.config.energy_scaling import ScalingRule, scale_dynamic_energy, scale_table
from accelsim.config.memory import DRAM_TECHNOLOGIES
from accelsim.errors import ConfigError
from accelsim.files import builtin_names

REQUIRED_MACS = ("int8", "int16", "int32", "fp8", "fp16", "bf16", "fp32")
SHIPPED = ("horowitz_45nm", "eyeriss_like", "scaled_5nm", "scaled_7nm", "scaled_12nm",
           "scaled_28nm", "seed_napkin")

MACHINE_NODES = {"tpu_v1": 28, "tpu_v4": 7, "npu_ascend910": 7, "v100": 12, "a100": 7,
                 "h100": 5, "h200": 5, "spr_cpu": 7}
"""Process node of each shipped machine, nm (TSMC 4N is an N5-family node; Intel 7 is
7 nm-class in density): the default table of each must be the one of its node."""


def minimal(**extra):
    """The smallest valid table, plus ``extra`` sections."""
    return {"name": "t", "node_nm": 45, "voltage_v": 0.9, "mac": {"int8": "0.3 pJ"}, **extra}


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_table_loads_with_metadata_and_all_actions(name):
    """Each table names its node, voltage and sources, and prices every MAC precision,
    registers, SRAM, every DRAM technology a machine may name, the NoC and the links."""
    t = load_energy_table(name)
    assert t.name == name and t.node_nm > 0 and t.voltage_v > 0 and t.sources
    for p in REQUIRED_MACS:
        assert t.require(f"mac.{p}") > 0
    for tech in DRAM_TECHNOLOGIES:
        assert t.require(f"dram.{tech}") > 0
    assert t.require("rf.read") >= 0 and t.require("rf.write") >= 0
    assert t.sram_access_pj(64 * 1024, 64, "read") > 0
    assert t.require("noc") >= 0
    if name != "seed_napkin":
        for link in ("nvlink", "pcie"):
            assert t.require(f"link.{link}") > 0


def test_builtin_names_list_the_tables():
    assert set(SHIPPED) <= set(builtin_names("energy"))


def test_horowitz_values_are_the_published_ones():
    """Horowitz ISSCC 2014 at 45 nm: int8 mult 0.2, int32 add 0.1, fp32 mult 3.7, fp32 add
    0.9 pJ; a 64-bit read from an 8 KB SRAM 10 pJ; MAC = mult + add at the accumulator."""
    t = load_energy_table("horowitz_45nm")
    assert t.require("mult.int8") == pytest.approx(0.2)
    assert t.require("mac.int8") == pytest.approx(t.require("mult.int8") + t.require("add.int32"))
    assert t.require("mac.fp32") == pytest.approx(t.require("mult.fp32") + t.require("add.fp32"))
    assert t.require("mac.fp16") == pytest.approx(t.require("mult.fp16") + t.require("add.fp32"))
    assert t.sram_access_pj(8 * 1024, 64, "read") == pytest.approx(10.0)
    assert t.require("dram.HBM2") == pytest.approx(3.9)


def test_eyeriss_table_reproduces_the_accelergy_ert():
    """The Accelergy ERT's global buffer (128 KiB x 64 b) reads 18.18 pJ and writes 14.14 pJ;
    its weight scratchpad (384 B) reads 1.977 pJ per 16-bit word; LPDDR4 is 512 pJ / 64 b."""
    t = load_energy_table("eyeriss_like")
    assert t.sram_access_pj(128 * 1024, 64, "read") == pytest.approx(18.1838, rel=1e-4)
    assert t.sram_access_pj(128 * 1024, 64, "write") == pytest.approx(14.1379, rel=1e-4)
    assert t.sram_access_pj(384, 16, "read") == pytest.approx(1.976602, rel=1e-4)
    assert 64 * t.require("dram.LPDDR4") == pytest.approx(512.0)
    assert t.require("mac.int8") == pytest.approx(0.2077, rel=1e-3)


def test_sram_rule_interpolates_in_log_capacity_and_scales_with_width():
    """Between 8 KiB (10 pJ) and 32 KiB (20 pJ) the energy follows a power law: at 16 KiB it is
    the geometric mean; doubling the access width doubles it; it is held above the largest
    point (banked SRAM) and extrapolated below the smallest with the first slope."""
    t = load_energy_table("horowitz_45nm")
    assert t.sram_access_pj(16 * 1024, 64, "read") == pytest.approx(math.sqrt(10 * 20))
    assert t.sram_access_pj(16 * 1024, 128, "read") == pytest.approx(2 * math.sqrt(200))
    assert t.sram_access_pj(64 * 2**20, 64, "read") == pytest.approx(100.0)
    assert t.sram_access_pj(2 * 1024, 64, "read") == pytest.approx(5.0)
    caps = [2**k for k in range(10, 26)]
    energies = [t.sram_access_pj(c, 64, "read") for c in caps]
    assert energies == sorted(energies)


def test_width_exponent_below_one_makes_wide_accesses_cheaper_per_bit():
    t = table_from_dict(minimal(sram={"reference_word_bits": 64, "width_exponent": 0.5,
                                      "read": {"8 KiB": "10 pJ"}}))
    assert t.sram_access_pj(8192, 256, "read") == pytest.approx(20.0)


def test_machine_overrides_replace_entries():
    t = load_energy_table("horowitz_45nm").with_overrides(
        {"mac.bf16": "0.5 pJ", "dram.HBM2": "5 pJ/bit", "sram.read": "7 pJ"})
    assert t.require("mac.bf16") == 0.5
    assert t.require("dram.HBM2") == 5.0
    assert t.sram_access_pj(2**20, 64, "read") == 7.0
    assert t.sram_access_pj(2**20, 32, "read") == 3.5


@pytest.mark.parametrize("data, field, fragment", [
    (minimal(mac={"int8": "-0.3 pJ"}), "mac.int8", "must be >= 0"),
    (minimal(mac={"int8": "0.3 pQ"}), "mac.int8", "cannot parse"),
    (minimal(mac={"int8": "0.3 pJ", "int9": "1 pJ"}), "mac.int9", "unknown precision"),
    (minimal(dram_per_bit={"DDR9": "3 pJ/bit"}), "dram_per_bit.DDR9", "unknown memory"),
    (minimal(sram={"read": {"8 KiB": "ten pJ"}}), "sram.read.8 KiB", "cannot parse"),
    (minimal(sram={"read": {}}), "sram.read", "at least one"),
    (minimal(leakage={"pe_w": "1 uW"}), "leakage.pe_w", "unknown leakage"),
    (minimal(leakage={"pe": "1 pJ"}), "leakage.pe", "cannot parse power"),
    (minimal(leakage={"sram_per_kib": "-1 uW"}), "leakage.sram_per_kib", "must be >= 0 W"),
    (minimal(core={"gpu_macs": "1 pJ"}), "core.gpu_macs", "unknown core entry"),
    (minimal(core={"gpu_mac": "-1 pJ"}), "core.gpu_mac", "must be >= 0"),
    (minimal(leakage={"gpu_idle_pe": "1 pJ"}), "leakage.gpu_idle_pe", "cannot parse power"),
    (minimal(macs={}), "macs", "did you mean 'mac'"),
    ({"name": "t", "node_nm": 45, "voltage_v": 0.9}, "mac", "missing"),
    (minimal(node_nm=-7), "node_nm", "> 0"),
])
def test_bad_tables_name_the_file_the_action_and_the_value(data, field, fragment):
    with pytest.raises(ConfigError) as err:
        table_from_dict(data, file="configs/energy/bad.yaml")
    msg = str(err.value)
    assert msg.startswith("configs/energy/bad.yaml: " + field)
    assert fragment in msg


def test_bad_energy_value_names_the_table():
    with pytest.raises(ConfigError, match=r"energy table 't'.*-1 pJ|'-1 pJ'.*energy table 't'"):
        table_from_dict(minimal(dram_per_bit={"HBM2": "-1 pJ"}))


def test_a_missing_action_the_hardware_needs_is_a_clear_error():
    t = table_from_dict(minimal(), file="configs/energy/t.yaml")
    with pytest.raises(ConfigError) as err:
        t.require("mac.fp8", "fp8")
    msg = str(err.value)
    assert "configs/energy/t.yaml: mac.fp8 = 'fp8'" in msg and "energy table 't'" in msg


@pytest.mark.parametrize("overrides, fragment", [
    ({"mac.int8": "x pJ"}, "cannot parse"),
    ({"mac.int8": "-2 pJ"}, ">= 0"),
    ({"cache.read": "1 pJ"}, "unknown action family"),
    ({"sram.read.8KiB": "1 pJ"}, "SRAM overrides"),
])
def test_bad_overrides_are_errors(overrides, fragment):
    with pytest.raises(ConfigError, match=fragment):
        load_energy_table("horowitz_45nm").with_overrides(overrides)


def test_unknown_table_name_suggests_the_closest():
    with pytest.raises(ConfigError, match="horowitz_45nm"):
        load_energy_table("horowitz45")


def test_dynamic_energy_scales_as_capacitance_times_voltage_squared():
    """E = C V^2: halving the feature size halves C; dropping V from 1.0 to 0.5 V quarters E."""
    assert scale_dynamic_energy(8.0, node_from=45, node_to=22.5, v_from=1.0, v_to=1.0) == 4.0
    assert scale_dynamic_energy(8.0, node_from=45, node_to=45, v_from=1.0, v_to=0.5) == 2.0


def test_scaling_treats_logic_sram_wires_and_offchip_differently():
    base = load_energy_table("horowitz_45nm")
    t = scale_table(base, node_nm=7, voltage_v=0.75, name="x")
    v2 = (0.75 / 0.9) ** 2
    assert t.require("mac.int8") == pytest.approx(base.require("mac.int8") * (7 / 45) * v2)
    assert t.sram_access_pj(8192, 64, "read") == pytest.approx(10 * (7 / 45) ** 0.5 * v2)
    assert t.require("noc") == pytest.approx(base.require("noc") * (7 / 45) ** 0.5 * v2)
    assert t.require("dram.HBM3") == base.require("dram.HBM3")
    assert t.require("link.nvlink") == base.require("link.nvlink")
    # SRAM shrinks less than logic: memory's share of energy grows at new nodes
    assert (t.sram_access_pj(8192, 64, "read") / t.require("mac.int8")
            > base.sram_access_pj(8192, 64, "read") / base.require("mac.int8"))
    assert ScalingRule().factor("dram", 0.1, 0.5) == 1.0


@pytest.mark.parametrize("name, node, volts", [("scaled_7nm", 7, 0.75),
                                               ("scaled_5nm", 5, 0.70),
                                               ("scaled_12nm", 12, 0.80),
                                               ("scaled_28nm", 28, 0.90)])
def test_shipped_modern_tables_equal_the_documented_rule(name, node, volts):
    """The YAML files are what scripts/fit/scale_energy_table.py derives (4 significant digits)."""
    derived = scale_table(load_energy_table("horowitz_45nm"), node_nm=node, voltage_v=volts,
                          name=name)
    shipped = load_energy_table(name)
    assert shipped.node_nm == node and shipped.voltage_v == volts
    assert shipped.derived_from["table"] == "horowitz_45nm"
    assert set(shipped.entries) == set(derived.entries)
    for key, value in derived.entries.items():
        assert shipped.entries[key] == pytest.approx(value, rel=5e-4), key
    for cap in (4096, 8192, 2**17, 2**20):
        assert shipped.sram_access_pj(cap, 64, "read") == pytest.approx(
            derived.sram_access_pj(cap, 64, "read"), rel=5e-4)


@pytest.mark.parametrize("machine, node", sorted(MACHINE_NODES.items()))
def test_each_machine_defaults_to_the_table_of_its_process_node(machine, node):
    """No machine is priced at another node than its own, and each names its published TDP."""
    from accelsim.api.compare import load_platform
    from accelsim.report.energy import energy_table_for

    m = load_platform(machine)
    assert energy_table_for(m).node_nm == node
    assert (getattr(m.energy, "tdp_w", None) or getattr(m, "tdp_w", None)) > 0


def test_leakage_is_power_scaled_as_length_times_voltage():
    """Static power P = V I_leak with I_leak ~ width ~ L: (L'/L) (V'/V), not C V^2."""
    base = load_energy_table("horowitz_45nm")
    t = scale_table(base, node_nm=7, voltage_v=0.75, name="x")
    assert base.require("static.pe") == pytest.approx(25.2e-6)
    assert t.require("static.pe") == pytest.approx(25.2e-6 * (7 / 45) * (0.75 / 0.9))
    assert t.require("static.sram_per_kib") == pytest.approx(
        base.require("static.sram_per_kib") * (7 / 45) * (0.75 / 0.9))


def test_gpu_power_constants_scale_as_logic_and_as_leakage():
    """core.gpu_mac is switched capacitance (C V^2, logic); gpu_idle_pe is power (L V)."""
    base = load_energy_table("horowitz_45nm")
    t = scale_table(base, node_nm=5, voltage_v=0.70, name="x")
    assert t.require("core.gpu_mac") == pytest.approx(
        base.require("core.gpu_mac") * (5 / 45) * (0.70 / 0.9) ** 2)
    assert t.require("static.gpu_idle_pe") == pytest.approx(
        base.require("static.gpu_idle_pe") * (5 / 45) * (0.70 / 0.9))
    assert table_from_dict(minimal(core={"gpu_mac": "2 pJ"})).require("core.gpu_mac") == 2.0


def test_static_power_from_watts_or_from_per_cycle_entries():
    """W entries give watts directly; per-cycle entries (an Accelergy ERT) need the clock."""
    w = table_from_dict(minimal(leakage={"pe": "2 uW", "sram_per_kib": "0.5 uW"}))
    assert w.static_power_w(pes=1000, sram_bytes=2048) == pytest.approx(
        {"pe": 2e-3, "sram": 1e-6})
    cyc = table_from_dict(minimal(leakage={"pe_per_cycle": "0.004 pJ"}))
    assert cyc.static_power_w(pes=1000)["pe"] == 0.0  # no clock: cannot tell
    assert cyc.static_power_w(pes=1000, clock_hz=1e9)["pe"] == pytest.approx(4e-3)
    per_cycle = w.at_clock(2e9)
    assert per_cycle.require("leak.pe") == pytest.approx(2e-6 / 2e9 * 1e12)  # 0.001 pJ/cycle
    assert cyc.at_clock(2e9) is cyc
