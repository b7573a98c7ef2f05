"""A heterogeneous node (``kind: node``): accelerators of several kinds (GPU, systolic NPU/TPU),
a host CPU that can compute too, and the links between them.

The topology part (devices, host, switches, link specs, links) has the same fields as a
:class:`~accelsim.config.system.System` and is checked by it (dangling link ends, duplicate
names): :attr:`Node.system` is that System, so the link models and the SimPy link network of
``accelsim.engine.links`` run on a node unchanged. What a node adds:

* ``host.hardware``: a ``kind: cpu`` config that makes the host a placement target;
* per device ``power_w`` (informative, for perf/W of co-execution scenarios) and
  ``op_launch_s``, the dispatch cost a runtime pays per operator on that device (seed 002:
  "compile/launch overheads").

Imports: errors, files, config.*.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from accelsim.config.build import load_device_machine
from accelsim.config.inherit import resolve_file
from accelsim.config.link import Host, Link, LinkSpec, Switch
from accelsim.config.schema import build, non_negative, param, positive
from accelsim.config.system import CollectiveParams, DeviceRef, System
from accelsim.errors import ConfigError
from accelsim.files import resolve_path


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeDevice:
    """One accelerator of the node."""

    name: str = param("Endpoint name, e.g. gpu0.")
    hardware: str = param("Hardware config name or path (kind gpu or systolic).")
    copy_engines: int = param("DMA copy engines usable at once.", default=2, check=positive)
    op_launch_s: float = param("Runtime dispatch cost per operator on this device, seconds.",
                               default=5e-6, check=non_negative)
    power_w: float | None = param("Board power under load, W (informative).", default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeHost:
    """The host: its memory/staging parameters (as a system's host) and its CPU config."""

    name: str = param("Endpoint name of the host.", default="host")
    hardware: str | None = param("CPU config (kind: cpu) that runs operators placed on the "
                                 "host; absent = the host only stores and forwards.", default=None)
    op_launch_s: float = param("Dispatch cost per operator run on the host CPU, seconds.",
                               default=2e-6, check=non_negative)
    power_w: float | None = param("CPU package power under load, W (informative).", default=None)
    memory_bytes_per_s: float = param("Host DRAM bandwidth, bytes/s.", default=200e9,
                                      check=positive)
    staging_copy_bytes_per_s: float = param("CPU copy rate into pinned staging, bytes/s.",
                                            default=17e9, check=positive)

    def as_host(self) -> Host:
        """The :class:`~accelsim.config.link.Host` the link models use."""
        return Host(name=self.name, memory_bytes_per_s=self.memory_bytes_per_s,
                    staging_copy_bytes_per_s=self.staging_copy_bytes_per_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """Devices of several kinds + a computing host + links (``kind: node``)."""

    kind: str = param("Machine kind.", default="node", choices=("node",))
    name: str = param("Short name.")
    description: str = param("One line on what this node is.", default="")
    devices: tuple[NodeDevice, ...] = param("The accelerators.")
    host: NodeHost = param("The host CPU.", default=NodeHost())
    switches: tuple[Switch, ...] = param("Switches (PCIe switch, NVSwitch).", default=())
    link_specs: tuple[LinkSpec, ...] = param("Link types used by ``links``.")
    links: tuple[Link, ...] = param("Physical links between endpoints.")
    sources: tuple[str, ...] = param("Where the numbers come from.", default=())

    def __post_init__(self) -> None:
        self.system  # noqa: B018  (validates the topology through System)

    @property
    def system(self) -> System:
        """The node's topology as a :class:`~accelsim.config.system.System`."""
        return _system_of(self)

    @property
    def targets(self) -> tuple[str, ...]:
        """Names that operators can be placed on: the devices, then the host if it computes."""
        names = tuple(d.name for d in self.devices)
        return names + ((self.host.name,) if self.host.hardware else ())

    def device(self, name: str) -> NodeDevice | NodeHost:
        """The device (or the computing host) called ``name``."""
        for d in self.devices:
            if d.name == name:
                return d
        if name == self.host.name and self.host.hardware:
            return self.host
        raise ConfigError(self.name, "device", name,
                          f"no such placement target (known: {', '.join(self.targets)})")

    def machine(self, name: str) -> Any:
        """The loaded hardware config of target ``name``."""
        return _load_hardware(self.device(name).hardware)


@functools.lru_cache(maxsize=64)
def _system_of(node: Node) -> System:
    return System(name=node.name, description=node.description,
                  devices=tuple(DeviceRef(name=d.name, hardware=d.hardware,
                                          copy_engines=d.copy_engines) for d in node.devices),
                  host=node.host.as_host(), switches=node.switches, link_specs=node.link_specs,
                  links=node.links, collectives=CollectiveParams(), sources=node.sources)


@functools.lru_cache(maxsize=32)
def _load_hardware(hardware: str) -> Any:
    return load_device_machine(hardware)


def load_node(name_or_path: str | os.PathLike) -> Node:
    """Load ``configs/hardware/<name>.yaml`` (or a path) as a :class:`Node`; errors name the
    file."""
    path = resolve_path(name_or_path, "hardware")
    data = resolve_file(path).data  # inheritance applied (config/inherit.py)
    if data.get("kind") != "node":
        raise ConfigError(str(path), "kind", data.get("kind"), "not a node (expected kind: node)")
    try:
        node = build(Node, data, file=str(path))
    except ConfigError as exc:
        if exc.file is None:
            raise ConfigError(str(path), exc.field, exc.value, exc.reason) from None
        raise
    refs = [(f"devices[{i}].hardware", d.hardware) for i, d in enumerate(node.devices)]
    if node.host.hardware:
        refs.append(("host.hardware", node.host.hardware))
    for field, hw in refs:
        try:
            resolve_path(hw, "hardware")
        except ConfigError:
            raise ConfigError(str(path), field, hw, "no such hardware config") from None
    return node
