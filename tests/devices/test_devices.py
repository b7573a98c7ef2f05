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
SMALL_GEMM = Gemm(name="g", m=128, n=256, k=192, dtype="fp16")
"""The GEMM of the spatial machine (eyeriss): its row-stationary mapping search grows with the
GEMM (~9 s of CPU for :data:`GEMM`, ~1.5 s for this one); the roofs hold the same."""


def _sized(name: str, op):
    return SMALL_GEMM if name == "eyeriss" and op is GEMM else op


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
    op = _sized(name, op)
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
    table, prec = dev.layer_table([_sized(name, GEMM), SOFTMAX])
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


@pytest.mark.parametrize("name, option, value, message", [
    ("tpu_v4", "exec_mode", "graph", "--exec = 'graph': applies to GPUs, not systolic machines"),
    ("spr_cpu", "exec_mode", "graph", "--exec = 'graph': applies to GPUs, not CPUs"),
    ("h200", "dataflow", "os", "--dataflow = 'os': applies to systolic machines, not GPUs"),
    ("h200", "report", "r.html", "--report = 'r.html': applies to systolic machines, not GPUs"),
    ("spr_cpu", "sparsity", 0.5, "--sparsity = 0.5: applies to systolic machines, not CPUs"),
])
def test_a_run_option_a_kind_does_not_take_is_one_line_naming_who_takes_it(
        name, option, value, message):
    from accelsim.devices import CLI_FLAGS, check_run_flags

    dev = device_for(load_machine(name))
    with pytest.raises(ConfigError) as err:
        check_run_flags(dev, {option: value}, CLI_FLAGS)
    assert message in str(err.value) and "\n" not in str(err.value)
    check_run_flags(dev, {o: None for o in CLI_FLAGS})  # options not given pass


def test_a_new_machine_kind_runs_whole_workloads_from_its_op_costs_alone(monkeypatch):
    """A kind that only says what an op costs (one module) runs whole workloads through
    ``simulate``/``run_model``, one kernel per operator; the run options it does not name
    are refused."""
    from dataclasses import dataclass

    import pandas as pd

    from accelsim.api import simulate
    from accelsim.api.model_run import run_model
    from accelsim.devices import KINDS, OpCost
    from accelsim.devices.base import DeviceBase

    @dataclass(frozen=True)
    class ToyMachine:
        name: str = "toy1"
        kind: str = "toy"
        flop_per_s: float = 1e12

    class ToyDevice(DeviceBase):
        kind, noun, levels = "toy", "toys", ("dram",)

        def cost(self, op, *, precision=None):
            t = op.flops / self.machine.flop_per_s
            return OpCost(name=op.name, op=op.kind, precision="fp16", time_s=t,
                          flops=float(op.flops), level_bytes={"dram": 0.0}, offchip_bytes=0.0,
                          peak_flops_per_s=self.machine.flop_per_s, offchip_bytes_per_s=1e12,
                          bound="compute", actions=pd.DataFrame())

        def energy_j(self, cost, table=None):
            return 1e-12 * cost.flops

    monkeypatch.setitem(KINDS, "toy", ToyDevice)
    r = simulate(ToyMachine(), [GEMM, SOFTMAX])
    assert list(r.layers["layer"]) == ["g", "sm"]
    assert r.totals["time_s"] == pytest.approx((GEMM.flops + SOFTMAX.flops) / 1e12)
    assert r.totals["energy_j"] == pytest.approx((GEMM.flops + SOFTMAX.flops) * 1e-12)
    assert run_model(ToyMachine(), [GEMM]).totals["time_s"] == pytest.approx(GEMM.flops / 1e12)
    with pytest.raises(ConfigError, match="exec_mode = 'graph': applies to GPUs, not toys"):
        simulate(ToyMachine(), [GEMM], exec_mode="graph")


def test_cpu_model_runs_are_the_per_op_rows_of_the_device():
    """The default whole-model run is each op's own row (:meth:`DeviceBase.op_row`)."""
    from accelsim.api.model_run import run_model

    m = load_machine("spr_cpu")
    r = run_model(m, [GEMM, SOFTMAX])
    dev = device_for(m)
    for (_, row), op in zip(r.layers.iterrows(), (GEMM, SOFTMAX), strict=True):
        want = dev.op_row(op)
        assert row["time_s"] == want["time_s"] and row["energy_j"] == want["energy_j"]
        assert row["kernels"] == 1 and row["host_s"] == 0.0
