"""The CPU device (``kind: cpu``): every op through :func:`accelsim.hw.cpu.op_cost` (cache
blocking over SIMD FMA units or a matrix unit), roofs from the config.

Roofs: peak = the config's dense peak at the precision (the matrix unit if it runs it, else
the SIMD FMA units; ``CpuMachine.peak_flops``); ``l1``, ``l2``, ``l3``: bytes per cycle per
core x cores x clock of each cache (the rate at which it feeds the level above, as
:mod:`accelsim.hw.cpu` charges it); ``dram``: peak of all channels.

``precision`` given to :meth:`CpuDevice.cost` runs the op at that precision (its ``dtype``
replaced); energy prices the cache/DRAM/MAC records with the table and each issued
instruction at the machine's ``energy.instruction_pj``.

Whole models run one kernel per operator (:meth:`DeviceBase.run_model
<accelsim.devices.base.DeviceBase.run_model>`); no optional ``accelsim run`` flag applies.

Imports: analysis.roofline, hw.cpu, report.energy, report.power, workload.readers, devices.base.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import pandas as pd

from accelsim.analysis.roofline import MachineRoofs, Roof
from accelsim.devices.base import DeviceBase, OpCost
from accelsim.hw.cpu import CpuCost, cost_actions, op_cost
from accelsim.workload.readers import load_wl


def at_precision(op: object, precision: str | None) -> object:
    """``op`` with its ``dtype`` set to ``precision`` (unchanged when None or dtype-less)."""
    if precision is None or not dataclasses.is_dataclass(op) \
            or not any(f.name == "dtype" for f in dataclasses.fields(op)):
        return op
    return dataclasses.replace(op, dtype=precision)


def core_clocked_j(machine: Any, cost: Any) -> float:
    """Joules the busy cores spend per cycle beyond their priced actions: ``cores_used`` x
    clock x time x ``energy.core_pj_per_cycle``."""
    detail = getattr(cost, "detail", cost)  # an OpCost, or the CpuCost it holds
    cores = float(getattr(detail, "cores_used", machine.compute.cores))
    return (cores * machine.compute.clock_hz * cost.time_s
            * machine.energy.core_pj_per_cycle * 1e-12)


class CpuDevice(DeviceBase):
    """A multicore CPU (:class:`~accelsim.config.cpu.CpuMachine`)."""

    kind: ClassVar[str] = "cpu"
    noun: ClassVar[str] = "CPUs"
    run_flags: ClassVar[frozenset[str]] = frozenset({"trace"})
    levels: ClassVar[tuple[str, ...]] = ("l1", "l2", "l3", "dram")

    def prepare_workload(self, workload: Any) -> Any:
        """The workload as :meth:`run_model` reads it: a flat op list
        (:func:`~accelsim.workload.readers.load_wl`)."""
        return load_wl(workload)

    def plan(self, op: object, *, precision: str | None = None) -> CpuCost:
        """The CPU model's blocking and cost of ``op`` (its plan is its cost)."""
        return op_cost(self.machine, at_precision(op, precision))

    def cost(self, op: object, *, precision: str | None = None) -> OpCost:
        """Seconds, bytes per cache level and DRAM, and the bound of ``op``."""
        m = self.machine
        c = self.plan(op, precision=precision)
        return OpCost(name=getattr(op, "name", "op"), op=getattr(op, "kind", ""),
                      precision=c.precision, time_s=float(c.time_s),
                      flops=float(getattr(op, "flops", c.flops)),
                      level_bytes={lv: float(c.level_bytes.get(lv, 0.0)) for lv in self.levels},
                      offchip_bytes=float(c.dram_bytes),
                      peak_flops_per_s=float(m.peak_flops(c.precision)),
                      offchip_bytes_per_s=m.memory.dram.bandwidth_bytes_per_s, bound=c.bound,
                      actions=pd.DataFrame(cost_actions(m, c)), detail=c)

    def energy_j(self, cost: OpCost, table: Any = None) -> float:
        """Cache/DRAM/MAC records priced with ``table`` (default: the machine's); issued
        instructions at the machine's ``energy.instruction_pj``; the busy cores' clocked
        energy (:func:`core_clocked_j`); static power (leakage, and the package's idle power
        beyond it, ``energy.idle_w``) over the op's time
        (:func:`accelsim.report.power.static_power_w`)."""
        from accelsim.report.energy import actions_pj, energy_table_for
        from accelsim.report.power import static_power_w

        tab = table or energy_table_for(self.machine)
        recs = cost.actions
        energy = 0.0
        if not recs.empty:
            issue = ((recs["level"].to_numpy(dtype=object) == "mac")
                     & (recs["direction"].to_numpy(dtype=object) == "issue"))
            if not issue.all():
                energy = float(actions_pj(recs, tab, vector_as_mac=True)[~issue].sum()) * 1e-12
            issued = float(recs["count"].to_numpy(dtype=float)[issue].sum())
            energy += issued * self.machine.energy.instruction_pj * 1e-12
        energy += core_clocked_j(self.machine, cost)
        return energy + sum(static_power_w(self.machine, tab).values()) * cost.time_s

    def layer_table(self, ops: Any, *, precision: str | None = None,
                    dataflow: str | None = None) -> tuple[pd.DataFrame, str]:
        """Every op run at ``precision`` (default: the machine's ``default_precision``)."""
        prec = precision or self.machine.default_precision
        self.machine.check_precision(prec)
        table, _ = super().layer_table(ops, precision=prec)
        return table, prec

    def roofs(self, precision: str | None = None) -> MachineRoofs:
        """Roofs at ``precision`` (default: the machine's ``default_precision``)."""
        m = self.machine
        prec = precision or m.default_precision
        comp, mem = m.compute, m.memory
        roofs = [Roof(level=name, bandwidth_bytes_per_s=lv.bytes_per_cycle_per_core * comp.cores
                      * comp.clock_hz)
                 for name, lv in (("l1", mem.l1), ("l2", mem.l2), ("l3", mem.l3))]
        roofs.append(Roof(level="dram", bandwidth_bytes_per_s=mem.dram.bandwidth_bytes_per_s))
        return MachineRoofs(name=m.name, peak_flops_per_s=float(m.peak_flops(prec)),
                            precision=prec, roofs=tuple(roofs))
