"""The Device protocol: one implementation per single-device machine kind, one registry.

Every built-in machine is either a device (``device_for`` answers through its kind's model)
or a system/node (a one-line error); every device's op cost respects its own roofs (no model
runs faster than its peak compute or its off-chip bandwidth allow)."""

from __future__ import annotations

import math

import pytest

from accelsim.config.registry import load_machine
from accelsim.devices import KINDS, Device, device_for, is_device
from accelsim.errors import ConfigError
from accelsim.files import builtin_names
from accelsim.workload.nn_ops import Softmax
from accelsim.workload.ops import Gemm

GEMM = Gemm(name="g", m=512, n=1024, k=768, dtype="fp16")
SOFTMAX = Softmax(name="sm", rows=512, cols=1024, dtype="fp16")
SINGLE = ["tpu_v4", "npu_ascend910", "eyeriss", "a100", "h200", "spr_cpu"]


def test_every_builtin_machine_is_a_device_or_a_multi_device_kind():
    for name in builtin_names("hardware"):
        m = load_machine(name)
        if is_device(m):
            dev = device_for(m)
            assert isinstance(dev, Device) and dev.kind == m.kind
        else:
            with pytest.raises(ConfigError, match=f"kind = '{m.kind}': needs a single device"):
                device_for(m, source=name)


def test_registry_names_each_kind_once_and_classes_say_their_kind():
    from accelsim.config.build import DEVICE_KINDS

    for kind, cls in KINDS.items():
        assert cls.kind == kind
    assert len(set(KINDS.values())) == len(KINDS)
    assert set(KINDS) == set(DEVICE_KINDS)  # every single-device config kind has a device


@pytest.mark.parametrize("name", SINGLE)
@pytest.mark.parametrize("op", [GEMM, SOFTMAX], ids=["gemm", "softmax"])
def test_an_op_never_beats_its_devices_roofs(name, op):
    dev = device_for(load_machine(name))
    c = dev.cost(op)
    assert c.flops == pytest.approx(op.flops) and c.time_s > 0
    assert c.time_s >= c.flops / c.peak_flops_per_s * (1 - 1e-9)
    assert c.time_s >= c.offchip_bytes / c.offchip_bytes_per_s * (1 - 1e-9)
    assert c.offchip_bytes == pytest.approx(c.level_bytes[dev.roofs(c.precision).offchip_level])
    assert c.bound_class in ("compute", "memory", "overhead")
    assert dev.energy_j(c) > 0
    assert dev.op_times([op]) == [pytest.approx(c.time_s)]


@pytest.mark.parametrize("name", SINGLE)
def test_layer_table_reports_the_roof_levels(name):
    dev = device_for(load_machine(name))
    table, prec = dev.layer_table([GEMM, SOFTMAX])
    roofs = dev.roofs(prec)
    cols = {c.removeprefix("bytes_") for c in table if c.startswith("bytes_")}
    assert prec == roofs.precision
    assert roofs.offchip_level in cols or "dram_bytes" in table
    assert (table["time_s"] > 0).all() and not table["time_s"].isna().any()


def test_an_op_a_device_cannot_run_is_inf_in_op_times():
    class Opaque:
        name, kind = "x", "opaque"

    for name in ("tpu_v4", "a100", "spr_cpu"):
        times = device_for(load_machine(name)).op_times([GEMM, Opaque()])
        assert math.isfinite(times[0]) and times[1] == math.inf
