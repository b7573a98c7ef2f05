"""Devices: one implementation of the :class:`~accelsim.devices.base.Device` protocol per
single-device machine kind, and the one registry that picks it.

    >>> from accelsim.devices import device_for
    >>> dev = device_for(load_machine("a100"))
    >>> dev.cost(Gemm(name="g", m=4096, n=4096, k=4096)).time_s, dev.roofs("fp16").ridge()

Placement, compare, roofline, ``simulate``/``run_model`` and ``accelsim run`` ask
``device_for(machine)`` instead of switching on ``machine.kind``: a whole workload is
``device_for(m).run_model(workload, RunOptions(...))``, and :func:`check_run_flags` refuses,
in one line, an option the kind does not take (``--exec`` on a systolic machine). A new
machine kind is ``config/<kind>.py`` (its YAML schema), ``devices/<kind>.py`` (a class with
the protocol's methods, over its ``hw/`` model; whole models run one kernel per operator
unless it overrides ``run_model``) and one line in :data:`KINDS`. Systems and nodes (several
devices) are not devices.

Imports: accelsim (version), units, errors, limits, files, analysis, config, engine, hw, mapping,
report, workload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelsim.devices.base import Device, DeviceBase, OpCost, RunOptions
from accelsim.devices.cpu import CpuDevice
from accelsim.devices.gpu import GpuDevice
from accelsim.devices.systolic import SystolicDevice
from accelsim.errors import ConfigError

KINDS: dict[str, type[DeviceBase]] = {"systolic": SystolicDevice, "gpu": GpuDevice,
                                      "cpu": CpuDevice}
"""Machine ``kind`` -> its device class: the one registry of single-device kinds."""

CLI_FLAGS: dict[str, str] = {"exec_mode": "--exec", "dataflow": "--dataflow",
                             "loop_order": "--loop-order", "sparsity": "--sparsity",
                             "trace": "--trace", "report": "--report"}
"""Optional run option (``run_flags`` name) -> its ``accelsim run`` flag."""

__all__ = ["CLI_FLAGS", "KINDS", "Device", "OpCost", "RunOptions", "check_run_flags",
           "device_for", "is_device", "machine_roofs"]


def is_device(machine: Any) -> bool:
    """Whether ``machine`` is a single device (its kind is in :data:`KINDS`)."""
    return getattr(machine, "kind", "systolic") in KINDS


def device_for(machine: Any, *, source: str | None = None) -> DeviceBase:
    """The device of a machine config object, by its ``kind``.

    A system or node (several devices), or an unknown kind, is a one-line
    :class:`~accelsim.errors.ConfigError` naming ``source`` (default: the machine's name),
    the kind, and the kinds that are single devices.
    """
    kind = getattr(machine, "kind", "systolic")
    cls = KINDS.get(kind)
    if cls is None:
        name = getattr(machine, "name", machine)
        raise ConfigError(source or str(name), "kind", kind,
                          f"needs a single device ({', '.join(KINDS)}); '{name}' is a {kind}")
    return cls(machine)


def check_run_flags(device: DeviceBase, given: Mapping[str, Any],
                    flags: Mapping[str, str] | None = None) -> None:
    """Refuse the first option of ``given`` (name -> value; None: not given) that ``device``'s
    kind does not take (its ``run_flags``): a one-line :class:`ConfigError` naming the option
    (spelled by ``flags``, e.g. :data:`CLI_FLAGS`), its value and the kinds it applies to."""
    for name, value in given.items():
        if value is None or value is False or name in device.run_flags:
            continue
        takers = [_noun(cls) for cls in KINDS.values() if name in cls.run_flags]
        who = " and ".join(takers) if takers else "no machine kind"
        flag = (flags or {}).get(name, name)
        raise ConfigError(flag, flag, value, f"applies to {who}, not {_noun(device)}")


def _noun(device: DeviceBase | type[DeviceBase]) -> str:
    """A device kind in messages: its ``noun``, else ``<kind> machines``."""
    return device.noun or f"{device.kind} machines"


def machine_roofs(machine: Any, precision: str | None = None) -> Any:
    """The roofs of a single-device machine at ``precision`` (``device_for(m).roofs``)."""
    return device_for(machine).roofs(precision)


def result_roofline(result: Any, precision: str | None = None) -> tuple[Any, Any]:
    """``(roofs, points)`` of a simulation result, for plots and reports: the machine's roofs
    (one row per level) and one simulated row per layer
    (:func:`accelsim.analysis.roofline.simulated_table`)."""
    from accelsim.analysis.roofline import simulated_table

    roofs = machine_roofs(result.machine, precision)
    return roofs.ridge_table(), simulated_table(result.layers, result.machine, roofs)
