"""Systolic machines only: :func:`plan_workload`, every op of a workload mapped onto the array.

Imports: config.systolic_machine, devices.systolic, workload.ops.
"""

from __future__ import annotations

from accelsim.config.systolic_machine import SystolicMachine
from accelsim.devices.systolic import plan_ops
from accelsim.workload.ops import Workload

__all__ = ["plan_workload"]


def plan_workload(machine: SystolicMachine, wl: Workload, dataflow: str,
                  loop_order: str = "auto") -> list:
    """Every primitive op of ``wl`` mapped onto ``machine``, in order
    (:func:`accelsim.devices.systolic.plan_ops`: repeated blocks mapped once)."""
    return plan_ops(machine, wl.ops, dataflow, loop_order, wl.source or wl.name)
