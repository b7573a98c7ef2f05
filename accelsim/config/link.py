"""Parameters of point-to-point links: PCIe (generation 3-6), NVLink (generation 1-5), network.

A :class:`LinkSpec` is a *type* of link (e.g. "PCIe Gen5 x16"); a system's links name one.
Raw bandwidth follows from the generation tables below (datasheet facts); what the protocol
costs on top (line encoding, packet headers, link-layer efficiency) and the per-transfer
latencies are parameters, so that calibrated values live in the hardware YAML with a source.

Generation tables (per lane, per direction):

* PCIe: Gen3 8 GT/s, Gen4 16 GT/s, Gen5 32 GT/s with 128b/130b encoding; Gen6 64 GT/s PAM4 in
  FLIT mode (256-byte flits carrying 236 bytes of TLPs; the rest is DLLP, CRC and FEC). Source:
  PCI-SIG base specifications 3.0-6.0; shared/reference/hw_specs.yaml ``link_bandwidths_gbs``
  (x16: 15.75 / 31.5 / 63.0 / 128 GB/s per direction).
* NVLink, per link per direction: gen1 20 GB/s, gen2-4 25 GB/s, gen5 50 GB/s. Source: NVIDIA
  V100/A100/H100/B200 datasheets; hw_specs.yaml (``nvlink: per_link_per_direction_gbs: 25``).

Imports: config.schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.config.schema import non_negative, param, positive

PROTOCOLS = ("pcie", "nvlink", "network")

PCIE_GT_PER_S = {3: 8e9, 4: 16e9, 5: 32e9, 6: 64e9}
"""PCIe transfers per second per lane (one bit per transfer per lane, NRZ; Gen6 PAM4 counted as
64 GT/s)."""

PCIE_ENCODING = {3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 236 / 256}
"""Share of raw line bits that carry TLP bytes: 128b/130b for Gen3-5, FLIT (236 of 256 bytes) for
Gen6."""

PCIE_TLP_OVERHEAD_BYTES = {3: 24, 4: 24, 5: 24, 6: 16}
"""Bytes added per TLP: Gen3-5 = 4 framing (STP) + 16 header (4DW, 64-bit address) + 4 LCRC;
Gen6 FLIT mode = 16 header (framing and LCRC are folded into the flit, see PCIE_ENCODING)."""

NVLINK_LINK_BYTES_PER_S = {1: 20e9, 2: 25e9, 3: 25e9, 4: 25e9, 5: 50e9}
"""NVLink data bandwidth per link per direction, bytes/s."""

NVLINK_PACKET_OVERHEAD_BYTES = 16
"""NVLink header flit (16 bytes) per data packet of up to ``max_payload_bytes``."""


def _unit_fraction(v: float) -> str | None:
    return None if 0 < v <= 1 else "must be in (0, 1]"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkSpec:
    """One type of link, full duplex: the same bandwidth in each direction at once."""

    name: str = param("Name the system's links use to refer to this spec.")
    protocol: str = param("Link protocol.", choices=PROTOCOLS)
    generation: int = param("PCIe generation (3-6) or NVLink generation (1-5); 0 for network.",
                            default=0, check=non_negative)
    lanes: int = param("PCIe lanes, NVLink links, or network ports bundled into this link.",
                       default=1, check=positive)
    lane_bytes_per_s: float | None = param(
        "Raw bytes/s per lane per direction; default from the generation table (required for "
        "network).",
        default=None)
    max_payload_bytes: int = param(
        "Largest data payload per packet (PCIe Max_Payload_Size), bytes.",
        default=256, check=positive)
    packet_overhead_bytes: int | None = param(
        "Header/framing bytes per packet; default from the protocol (PCIe by generation, "
        "NVLink 16).",
        default=None)
    efficiency: float = param(
        "Link-layer efficiency after encoding and packet headers (ACK/flow-control traffic, "
        "engine limits), 0-1.", default=1.0, check=_unit_fraction)
    latency_s: float = param("Hardware latency of one hop over this link, seconds.", default=1e-6,
                             check=non_negative)
    dma_setup_s: float = param(
        "Per-copy cost of a copy-engine (DMA) transfer over this link beyond the hop latency, "
        "seconds.",
        default=0.0, check=non_negative)
    issue_s: float = param(
        "Host software time to issue one copy call over this link (driver + framework), seconds; "
        "back-to-back copies cannot go faster than this.", default=0.0, check=non_negative)
    energy_per_bit_pj: float = param("Energy per bit moved over the link (PHY + controller), pJ.",
                                     default=5.5, check=non_negative)

    def __post_init__(self) -> None:
        if self.protocol == "pcie" and self.generation not in PCIE_GT_PER_S:
            raise ValueError(f"link spec '{self.name}': PCIe generation {self.generation} "
                             f"not in {sorted(PCIE_GT_PER_S)}")
        if self.protocol == "nvlink" and self.generation not in NVLINK_LINK_BYTES_PER_S:
            raise ValueError(f"link spec '{self.name}': NVLink generation {self.generation} "
                             f"not in {sorted(NVLINK_LINK_BYTES_PER_S)}")
        if self.protocol == "network" and self.lane_bytes_per_s is None:
            raise ValueError(f"link spec '{self.name}': a network link needs lane_bytes_per_s")

    @property
    def raw_bytes_per_s(self) -> float:
        """Bytes/s per direction on the wire before protocol overheads (after line encoding for
        PCIe)."""
        if self.lane_bytes_per_s is not None:
            return self.lane_bytes_per_s * self.lanes
        if self.protocol == "pcie":
            return PCIE_GT_PER_S[self.generation] / 8 * PCIE_ENCODING[self.generation] * self.lanes
        return NVLINK_LINK_BYTES_PER_S[self.generation] * self.lanes

    @property
    def signaling_bytes_per_s(self) -> float:
        """Headline rate per direction as datasheets quote it: PCIe GT/s x lanes / 8 (before
        encoding, e.g. 64 GB/s for Gen5 x16); for NVLink and network the data rate."""
        if self.protocol == "pcie" and self.lane_bytes_per_s is None:
            return PCIE_GT_PER_S[self.generation] / 8 * self.lanes
        return self.raw_bytes_per_s

    @property
    def overhead_bytes(self) -> int:
        """Header/framing bytes added to each packet."""
        if self.packet_overhead_bytes is not None:
            return self.packet_overhead_bytes
        if self.protocol == "pcie":
            return PCIE_TLP_OVERHEAD_BYTES[self.generation]
        if self.protocol == "nvlink":
            return NVLINK_PACKET_OVERHEAD_BYTES
        return 0

    @property
    def label(self) -> str:
        """Short human label, e.g. ``PCIe Gen5 x16`` or ``NVLink4 x18``."""
        if self.protocol == "pcie":
            return f"PCIe Gen{self.generation} x{self.lanes}"
        if self.protocol == "nvlink":
            return f"NVLink{self.generation} x{self.lanes}"
        return f"network x{self.lanes}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """One physical link of a system between two named endpoints (devices, host or switches)."""

    name: str = param("Unique link name.")
    ends: tuple[str, ...] = param("The two endpoints' names.")
    spec: str = param("Name of a LinkSpec of the system.")

    def __post_init__(self) -> None:
        if len(self.ends) != 2:
            raise ValueError(f"link '{self.name}' needs exactly two ends, got {len(self.ends)}")
        if self.ends[0] == self.ends[1]:
            raise ValueError(f"link '{self.name}' connects '{self.ends[0]}' to itself")


@dataclass(frozen=True, slots=True, kw_only=True)
class Host:
    """The host CPU side: memory and the driver's staging of pageable (not pinned) memory.

    A copy from pageable memory goes through pinned staging buffers: the CPU copies into a
    buffer (``staging_copy_bytes_per_s``) and the DMA engine drains it in pieces of
    ``staging_piece_bytes``, each one PCIe transfer. Up to one buffer the two steps run one
    after the other; larger copies alternate buffers so the slower step sets the pace.
    """

    name: str = param("Endpoint name of the host.", default="host")
    memory_bytes_per_s: float = param("Host DRAM bandwidth, bytes/s.", default=200e9,
                                      check=positive)
    staging_copy_bytes_per_s: float = param(
        "CPU copy rate from pageable memory into a pinned staging buffer, bytes/s.",
        default=17e9, check=positive)
    staging_buffer_bytes: float = param("Size of one pinned staging buffer, bytes.",
                                        default=3 * 2**20, check=positive)
    staging_piece_bytes: float = param("Bytes per DMA transfer out of a staging buffer.",
                                       default=128 * 2**10, check=positive)
    pageable_call_s: float = param("Fixed cost of one pageable copy call (synchronous), seconds.",
                                   default=10e-6, check=non_negative)


SWITCH_KINDS = ("nvswitch", "pcie_switch", "network")


@dataclass(frozen=True, slots=True, kw_only=True)
class Switch:
    """A non-blocking switch: traffic entering on one link leaves on another at full rate."""

    name: str = param("Endpoint name of the switch.")
    kind: str = param("What it switches.", choices=SWITCH_KINDS)
    generation: int = param("Switch generation (NVSwitch 1-4), informative.", default=0,
                            check=non_negative)
    latency_s: float = param("Latency added when traffic crosses the switch, seconds.",
                             default=0.0, check=non_negative)
