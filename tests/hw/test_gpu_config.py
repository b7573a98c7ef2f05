"""GPU machine configs: datasheet numbers load, precisions are checked, bad fields are named."""

from __future__ import annotations

import pytest

from accelsim.config.gpu import GpuMachine
from accelsim.config.registry import load_machine
from accelsim.errors import ConfigError, UnsupportedError

GPUS = ["v100", "a100", "h100", "h200"]


@pytest.mark.parametrize("name", GPUS)
def test_every_builtin_gpu_loads_as_kind_gpu(name):
    m = load_machine(name)
    assert isinstance(m, GpuMachine) and m.kind == "gpu" and m.name == name


@pytest.mark.parametrize("name, precision, tflops", [
    ("v100", "fp16", 125.3), ("a100", "bf16", 311.9), ("a100", "tf32", 155.9),
    ("h100", "bf16", 989.4), ("h200", "fp8", 1978.9), ("h200", "tf32", 494.7),
])
def test_datasheet_peaks_follow_from_flop_per_clock(name, precision, tflops):
    """Peak = FLOP/clk/SM x SMs x rated clock, the datasheet's dense number."""
    assert load_machine(name).peak_flops(precision) / 1e12 == pytest.approx(tflops, rel=2e-3)


@pytest.mark.parametrize("name, precision", [("v100", "bf16"), ("v100", "fp8"),
                                             ("v100", "tf32"), ("a100", "fp8")])
def test_a_precision_the_device_lacks_is_unsupported_naming_both(name, precision):
    with pytest.raises(UnsupportedError, match=f"{name}.*{precision}"):
        load_machine(name).check_precision(precision)


def test_fp32_runs_everywhere_on_cuda_cores():
    for name in GPUS:
        m = load_machine(name)
        assert m.supports("fp32")
        assert m.flop_per_clk_per_sm("fp32") == m.compute.simt_flop_per_clk_per_sm


def test_clock_under_load_is_below_boost_for_tensor_work():
    m = load_machine("h200")
    assert m.load_clock_hz("bf16") < m.compute.max_clock_hz
    assert m.load_clock_hz("fp8") <= m.load_clock_hz("bf16")


def test_bad_field_names_file_field_and_value():
    with pytest.raises(ConfigError, match=r"h200\.yaml: compute\.sm_count = -1: must be > 0"):
        load_machine("h200", {"compute.sm_count": -1})


def test_unknown_precision_key_in_a_rate_table_is_rejected():
    with pytest.raises(ConfigError, match="tensor_flop_per_clk_per_sm"):
        load_machine("h200", {"compute.tensor_flop_per_clk_per_sm": {"fp64x": 1}})
