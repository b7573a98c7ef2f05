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


def machine_roofs(machine: Any, precision: str | None = None) -> MachineRoofs:
    """Roofs of any machine config object, dispatching on its ``kind``."""
    kind = getattr(machine, "kind", "systolic")
    if kind == "systolic":
        return systolic_roofs(machine)
    return gpu_roofs(machine, precision)
