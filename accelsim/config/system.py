"""A multi-device system (``kind: system``): devices, a host, switches and links as a topology.

Devices name a hardware config (``hardware: h200`` -> ``configs/hardware/h200.yaml``); links
name a :class:`~accelsim.config.link.LinkSpec` of the system and two endpoints. The loader
checks that every name a link uses exists, so a dangling link is an error at load:
``configs/hardware/x.yaml: links[3].ends = 'gpu9': names no device, host or switch (...)``.

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
from accelsim.errors import ConfigError
from accelsim.files import resolve_path


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceRef:
    """One accelerator of the system."""

    name: str = param("Endpoint name, e.g. gpu0.")
    hardware: str = param("Hardware config name or path of the device, e.g. h200.")
    copy_engines: int = param("DMA copy engines usable at once, split evenly between copies "
                              "into and out of the device (at least one each way).",
                              default=2, check=positive)


COLLECTIVE_MODELS = ("nccl", "link")
NCCL_PROTOCOLS = ("LL", "LL128", "Simple")


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectiveParams:
    """How collectives are run.

    ``model: nccl`` (default) times a collective as NCCL runs it: SM-driven channels, chunked
    steps with per-step flag synchronisation, the LL / LL128 / Simple protocols chosen by size
    (see :mod:`accelsim.hw.nccl`). ``model: link`` schedules chunked messages on the link
    engine as copy-engine transfers (the textbook bandwidth/latency model; ``launch_s``,
    ``chunk_bytes`` and ``max_chunks`` belong to it).
    """

    model: str = param("Collective time model.", default="nccl", choices=COLLECTIVE_MODELS)
    launch_s: float = param("link model: fixed cost per collective (kernel launch and the ranks' "
                            "first handshake), seconds.", default=8e-6, check=non_negative)
    issue_s: float = param("Host time to issue one collective call (framework + driver); "
                           "back-to-back calls cannot go faster, seconds.",
                           default=0.0, check=non_negative)
    chunk_bytes: float = param("link model: a message is cut into pieces of this size at most.",
                               default=2**20, check=positive)
    max_chunks: int = param("link model: most chunks one message is cut into (bounds engine "
                            "events).", default=8, check=positive)
    protocol: str = param("nccl model: protocol, or auto (chosen by NCCL's own cost model, like "
                          "leaving NCCL_PROTO unset).", default="auto",
                          choices=("auto",) + NCCL_PROTOCOLS)
    channels: int = param("nccl model: collective channels (rings; one thread block each).",
                          default=24, check=positive)
    p2p_channels: int = param("nccl model: channels for point-to-point traffic (all-to-all).",
                              default=32, check=positive)
    sm_bytes_per_s: float = param(
        "nccl model: bytes one channel's thread block loads + stores per second with the Simple "
        "protocol (its SM-side copy/reduce throughput), bytes/s.", default=84e9, check=positive)
    saturation_exponent: float = param(
        "nccl model: sharpness k of the smooth minimum (X^-k + B^-k)^(-1/k) between the channels' "
        "aggregate rate X and the link rate B.", default=3.7, check=positive)
    base_latency_s: tuple[float, ...] = param(
        "nccl model: fixed latency of one collective kernel per protocol (LL, LL128, Simple), s.",
        default=(6.6e-6, 14.0e-6, 8.4e-6), check=non_negative)
    step_latency_s: tuple[float, ...] = param(
        "nccl model: latency of one ring step (flag synchronisation across the link) per "
        "protocol (LL, LL128, Simple), seconds.", default=(0.6e-6, 1.9e-6, 3.4e-6),
        check=non_negative)
    tree_step_latency_s: tuple[float, ...] = param(
        "nccl model: latency of one tree step per protocol (LL, LL128, Simple), seconds.",
        default=(0.6e-6, 1.25e-6, 4.0e-6), check=non_negative)
    ll_max_bytes_per_s: float = param("nccl model: LL bus-bandwidth ceiling, bytes/s.",
                                      default=141e9, check=positive)
    ll128_channel_max_bytes_per_s: float = param(
        "nccl model: LL128 bus-bandwidth ceiling per channel, bytes/s.", default=36.7e9,
        check=positive)
    tuning_channel_bytes_per_s: float = param(
        "nccl model: NCCL's own bandwidth estimate per channel (its topology search), used only "
        "to choose the protocol as NCCL does, bytes/s.", default=15e9, check=positive)
    buffer_bytes: float = param("nccl model: Simple-protocol buffer per channel and peer "
                                "(NCCL_BUFFSIZE), bytes.", default=4 * 2**20, check=positive)

    def __post_init__(self) -> None:
        for name in ("base_latency_s", "step_latency_s", "tree_step_latency_s"):
            if len(getattr(self, name)) != len(NCCL_PROTOCOLS):
                raise ConfigError(None, f"collectives.{name}", list(getattr(self, name)),
                                  "give three values: LL, LL128, Simple")


@dataclass(frozen=True, slots=True, kw_only=True)
class System:
    """Devices + host + switches + links (``kind: system``)."""

    kind: str = param("Machine kind.", default="system", choices=("system",))
    name: str = param("Short name.")
    description: str = param("One line on what this system is.", default="")
    devices: tuple[DeviceRef, ...] = param("The accelerators.")
    host: Host = param("The host CPU and its memory.", default=Host())
    switches: tuple[Switch, ...] = param("Switches (NVSwitch, PCIe switch, network).", default=())
    link_specs: tuple[LinkSpec, ...] = param("Link types used by ``links``.")
    links: tuple[Link, ...] = param("Physical links between endpoints.")
    collectives: CollectiveParams = param("Collective-communication parameters.",
                                          default=CollectiveParams())
    sources: tuple[str, ...] = param("Where the numbers come from.", default=())

    def __post_init__(self) -> None:
        if not self.devices:
            raise ConfigError(None, "devices", [], "a system needs at least one device")
        seen: dict[str, str] = {}
        named = [(f"devices[{i}].name", d.name) for i, d in enumerate(self.devices)]
        named += [("host.name", self.host.name)]
        named += [(f"switches[{i}].name", s.name) for i, s in enumerate(self.switches)]
        for path, name in named:
            if name in seen:
                raise ConfigError(None, path, name, f"name already used by {seen[name]}")
            seen[name] = path
        specs = [s.name for s in self.link_specs]
        for i, s in enumerate(specs):
            if s in specs[:i]:
                raise ConfigError(None, f"link_specs[{i}].name", s, "duplicate link spec name")
        link_names: set[str] = set()
        for i, link in enumerate(self.links):
            if link.name in link_names:
                raise ConfigError(None, f"links[{i}].name", link.name, "duplicate link name")
            link_names.add(link.name)
            if link.spec not in specs:
                raise ConfigError(None, f"links[{i}].spec", link.spec,
                                  f"link '{link.name}' names no link spec "
                                  f"(known: {', '.join(specs)})")
            for end in link.ends:
                if end not in seen:
                    raise ConfigError(None, f"links[{i}].ends", end,
                                      f"link '{link.name}' end names no device, host or switch "
                                      f"(known: {', '.join(seen)})")

    # --- lookups -------------------------------------------------------------------------
    @property
    def device_names(self) -> tuple[str, ...]:
        """Names of the accelerators, in file order."""
        return tuple(d.name for d in self.devices)

    @property
    def endpoint_names(self) -> tuple[str, ...]:
        """Every name a link may connect: devices, host, switches."""
        return self.device_names + (self.host.name,) + tuple(s.name for s in self.switches)

    def device(self, name: str) -> DeviceRef:
        """The device called ``name``; :class:`ConfigError` if there is none."""
        for d in self.devices:
            if d.name == name:
                return d
        raise ConfigError(self.name, "device", name,
                          f"no such device (known: {', '.join(self.device_names)})")

    def spec(self, name: str) -> LinkSpec:
        """The link spec called ``name``."""
        for s in self.link_specs:
            if s.name == name:
                return s
        raise ConfigError(self.name, "spec", name, "no such link spec")

    def switch(self, name: str) -> Switch | None:
        """The switch called ``name``, or ``None`` if it is not a switch."""
        return next((s for s in self.switches if s.name == name), None)

    def device_machine(self, name: str) -> Any:
        """The loaded hardware config of device ``name`` (cached per hardware name)."""
        return _load_hardware(self.device(name).hardware)


@functools.lru_cache(maxsize=32)
def _load_hardware(hardware: str) -> Any:
    return load_device_machine(hardware)


def load_system(name_or_path: str | os.PathLike) -> System:
    """Load ``configs/hardware/<name>.yaml`` (or a path) as a :class:`System`.

    Errors found after the fields parse (a dangling link, an unknown device hardware) name the
    file too.
    """
    path = resolve_path(name_or_path, "hardware")
    return _load_system_file(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _load_system_file(path: str, mtime_ns: int) -> System:
    """Load one system file (cached per path and modification time: systems are frozen)."""
    del mtime_ns  # part of the cache key only
    data = resolve_file(path).data  # inheritance applied (config/inherit.py)
    if data.get("kind") != "system":
        raise ConfigError(str(path), "kind", data.get("kind"),
                          "not a system (expected kind: system)")
    try:
        system = build(System, data, file=str(path))
    except ConfigError as exc:
        if exc.file is None:
            raise ConfigError(str(path), exc.field, exc.value, exc.reason) from None
        raise
    for i, dev in enumerate(system.devices):
        try:
            resolve_path(dev.hardware, "hardware")
        except ConfigError:
            raise ConfigError(str(path), f"devices[{i}].hardware", dev.hardware,
                              "no such hardware config") from None
    return system


def switched_system(name: str, devices: int, link_bytes_per_s: float, *,
                    latency_s: float = 0.0, launch_s: float = 0.0, hardware: str = "h200",
                    efficiency: float = 1.0, packet_overhead_bytes: int = 0) -> System:
    """An idealized system: ``devices`` GPUs, each one link of ``link_bytes_per_s`` per direction
    into one non-blocking switch (the textbook "N GPUs on NVLink" of the seed cases).

    ``latency_s`` is the GPU-to-GPU latency (two hops); ``launch_s`` the per-collective cost.
    Collectives use the textbook ``link`` model (bandwidth and latency terms only).
    """
    data = {
        "name": name, "kind": "system",
        "devices": [{"name": f"gpu{i}", "hardware": hardware} for i in range(devices)],
        "switches": [{"name": "switch", "kind": "nvswitch"}],
        "link_specs": [{"name": "link", "protocol": "nvlink", "generation": 4, "lanes": 1,
                        "lane_bytes_per_s": link_bytes_per_s, "efficiency": efficiency,
                        "packet_overhead_bytes": packet_overhead_bytes,
                        "latency_s": latency_s / 2}],
        "links": [{"name": f"l{i}", "ends": [f"gpu{i}", "switch"], "spec": "link"}
                  for i in range(devices)],
        "collectives": {"launch_s": launch_s, "model": "link"},
    }
    return build(System, data, file=f"<{name}>")
