"""Adapters: machine config objects -> :class:`~accelsim.analysis.roofline.MachineRoofs`.

Each adapter reads the peak compute rate and the bandwidth of every memory level a machine
declares; nothing here is a number of its own.

* Systolic machines (``kind: systolic``): peak = PEs x clock x 2 FLOP/MAC; ``sram`` = the
  bandwidth at which the scratchpads feed the array edges, one operand word per row and per
  column per cycle per array (``count x (rows + cols) x word_bytes x clock``); ``dram`` =
  the configured peak DRAM/HBM bandwidth.
* GPU machines (``kind: gpu``): peak = the config's dense peak at the precision (tensor
  cores, CUDA cores for fp32); ``l1`` (shared memory), ``l2``, ``hbm`` from the config's
  memory levels; ``host`` from its PCIe link.
* CPU machines (``kind: cpu``): peak = the config's dense peak at the precision (the matrix
  unit if it runs it, else the SIMD FMA units; ``CpuMachine.peak_flops``); ``l1``, ``l2``,
  ``l3``: bytes per cycle per core x cores x clock of each cache (the rate at which it feeds
  the level above, as :mod:`accelsim.hw.cpu` charges it); ``dram``: peak of all channels.

Systems and nodes (several devices) have no single roofline: :func:`machine_roofs` raises
:class:`~accelsim.errors.UnsupportedError` for them.

Imports: config objects (duck-typed), analysis.roofline.
"""

from __future__ import annotations

from typing import Any

from accelsim.analysis.roofline import MachineRoofs, Roof
from accelsim.units import FLOP_PER_MAC


def systolic_roofs(machine: Any) -> MachineRoofs:
    """Roofs of a :class:`~accelsim.config.machine.SystolicMachine`."""
    arr = machine.compute.array
    peak = arr.pes * machine.clock_hz * FLOP_PER_MAC
    edge = arr.count * (arr.rows + arr.cols) * arr.operand_bytes * machine.clock_hz
    return MachineRoofs(name=machine.name, peak_flops_per_s=peak, precision=arr.precision,
                        roofs=(Roof(level="sram", bandwidth_bytes_per_s=edge),
                               Roof(level="dram",
                                    bandwidth_bytes_per_s=machine.memory.dram.bandwidth_bytes_per_s)))


def gpu_roofs(machine: Any, precision: str | None = None) -> MachineRoofs:
    """Roofs of a :class:`~accelsim.config.gpu.GpuMachine` at ``precision`` (default fp16).

    ``l1``: shared memory, ``sm_smem_bytes_per_clk x SMs x clock``; ``l2``: the configured L2
    bandwidth; ``hbm``: the datasheet HBM bandwidth; ``host``: the PCIe link of ``host``
    (raw bytes/s per direction, from the link generation tables).
    """
    from accelsim.config.link import LinkSpec

    prec = precision or "fp16"
    comp, mem = machine.compute, machine.memory
    roofs = [Roof(level="l1", bandwidth_bytes_per_s=comp.sm_smem_bytes_per_clk * comp.sm_count
                  * comp.clock_hz),
             Roof(level="l2", bandwidth_bytes_per_s=mem.l2_bandwidth_bytes_per_s),
             Roof(level="hbm", bandwidth_bytes_per_s=mem.hbm.bandwidth_bytes_per_s)]
    host = getattr(machine, "host", None)
    if host is not None:
        pcie = LinkSpec(name="host", protocol="pcie", generation=host.pcie_generation,
                        lanes=host.pcie_lanes)
        roofs.append(Roof(level="host", bandwidth_bytes_per_s=pcie.raw_bytes_per_s))
    return MachineRoofs(name=machine.name, peak_flops_per_s=float(machine.peak_flops(prec)),
                        precision=prec, roofs=tuple(roofs))


def cpu_roofs(machine: Any, precision: str | None = None) -> MachineRoofs:
    """Roofs of a :class:`~accelsim.config.cpu.CpuMachine` at ``precision`` (default: the
    machine's ``default_precision``)."""
    prec = precision or machine.default_precision
    comp, mem = machine.compute, machine.memory
    roofs = [Roof(level=name, bandwidth_bytes_per_s=lv.bytes_per_cycle_per_core * comp.cores
                  * comp.clock_hz)
             for name, lv in (("l1", mem.l1), ("l2", mem.l2), ("l3", mem.l3))]
    roofs.append(Roof(level="dram", bandwidth_bytes_per_s=mem.dram.bandwidth_bytes_per_s))
    return MachineRoofs(name=machine.name, peak_flops_per_s=float(machine.peak_flops(prec)),
                        precision=prec, roofs=tuple(roofs))


DEVICE_KINDS = ("systolic", "gpu", "cpu")
"""Machine kinds that have one roofline (a single device)."""


def machine_roofs(machine: Any, precision: str | None = None) -> MachineRoofs:
    """Roofs of a single-device machine config object, dispatching on its ``kind``."""
    kind = getattr(machine, "kind", "systolic")
    if kind == "systolic":
        return systolic_roofs(machine)
    if kind == "gpu":
        return gpu_roofs(machine, precision)
    if kind == "cpu":
        return cpu_roofs(machine, precision)
    from accelsim.errors import UnsupportedError

    raise UnsupportedError(f"{getattr(machine, 'name', machine)}: a {kind} has no single roofline "
                           f"(roofline needs a single device: {', '.join(DEVICE_KINDS)})")
