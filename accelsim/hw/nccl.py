"""PURE cost model of collectives as NCCL runs them: SM-driven channels, chunked steps, protocols.

NCCL does not move collective data with copy engines. Each *channel* is one thread block on
one SM that walks a ring (or tree): per step it loads its input (and, to reduce, the data
received from its predecessor), stores into the successor's receive buffer across NVLink,
then raises a flag the successor polls. Three protocols trade payload for latency:

* **LL**: 8-byte stores of 4 data bytes + a 4-byte flag (half the bytes are payload); no
  separate flag write or fence, so the lowest latency per step.
* **LL128**: 128-byte lines carrying 120 bytes of data and an 8-byte flag.
* **Simple**: full payload in large slices; a fence and a flag per slice: most latency.

The time of one collective on ``n`` ranks of ``S`` bytes (nccl-tests size convention) is

    latency    = base(p) + steps x step_latency(p)             (NCCL's published constants)
    per channel  r_ch = sm_bytes_per_s x payload(p) / sm_bytes_per_link_byte(op, n)
    bandwidth  BW = smooth_min(channels_used x r_ch, link x payload(p); k)
    time       = latency + link_bytes_per_rank / BW + slice / (BW / channels_used)

where ``sm_bytes_per_link_byte`` counts the loads and stores a thread block does for every
byte it sends (a reduction reads two buffers and writes one), the smooth minimum lets the
channels' aggregate approach the link rate gradually (they queue on the same link), and the
last term is the pipeline's fill: one slice at the channel's rate before every stage is busy.
The protocol is NCCL's own choice (its tuning model: the same published latencies and
bandwidth ceilings, :func:`choose_protocol`) unless forced.

Sources: NCCL ``src/graph/tuning.cc`` (v2.19-2.28: base/step latencies per protocol, LL
ceiling 141 GB/s and LL128 36.7 GB/s per channel on Hopper, LL x0.5 and LL128 x0.92 payload),
``src/include/device.h`` (NCCL_STEPS = 8, LL 16-byte lines, LL128 120/128, thread counts),
and NCCL's INFO log on two H200s (24 channels, protocol picked per size;
``scripts/data/h200x2_nccl_protocols.json``). Functions of frozen config and numbers only.

Imports: errors, config.system.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from accelsim.config.system import NCCL_PROTOCOLS, CollectiveParams
from accelsim.errors import ConfigError, UnsupportedError

PAYLOAD_FRACTION = {"LL": 0.5, "LL128": 120 / 128, "Simple": 1.0}
"""Share of the bytes stored across the link that are data (the rest are flags)."""

THREADS = {"LL": 512, "LL128": 640, "Simple": 512}
"""Threads per channel (NCCL_LL_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS, NCCL_SIMPLE_MAX_NTHREADS)."""

THREAD_THRESHOLD = {"LL": 8, "LL128": 8, "Simple": 64}
"""Bytes per thread NCCL wants before it adds a channel (LL on a ring: x ranks)."""

NCCL_STEPS = 8
"""Slots of a channel's receive buffer (steps in flight)."""

LL_CHUNK_BYTES = 512 * 8 * 16 // 2
"""LL payload per step and channel: 512 threads x 8 lines of 16 bytes, half data (32 KiB)."""

LL128_CHUNK_BYTES = 640 * 120 * 8 * 15 // 16
"""LL128 payload per step and channel: 640 threads x 120 8-byte elements, 15 of 16 data."""

P2P_LL_THRESHOLD_BYTES = 16384
"""Point-to-point messages up to this size per peer use LL (NCCL_P2P_LL_THRESHOLD)."""

ALGOS = {"allreduce": ("ring", "tree"), "allgather": ("ring",), "reducescatter": ("ring",),
         "alltoall": ("direct",)}
"""Algorithms this model times (NCCL has no direct all-reduce/all-gather/reduce-scatter)."""


def _index(protocol: str) -> int:
    if protocol not in NCCL_PROTOCOLS:
        raise ConfigError(None, "protocol", protocol, f"must be one of {', '.join(NCCL_PROTOCOLS)}")
    return NCCL_PROTOCOLS.index(protocol)


def _check(name: str, algo: str, ranks: int) -> None:
    if name not in ALGOS:
        raise ConfigError(None, "collective", name, f"must be one of {', '.join(ALGOS)}")
    if algo not in ALGOS[name]:
        raise UnsupportedError(f"the nccl model has no '{algo}' {name} "
                               f"(NCCL runs it as: {', '.join(ALGOS[name])})")
    if ranks < 2:
        raise ConfigError(None, "ranks", ranks, "a collective needs >= 2 ranks")


# --- algorithm structure -------------------------------------------------------------------
def steps(name: str, algo: str, ranks: int) -> int:
    """Dependent steps that each pay one step latency: ring all-reduce 2(n-1), all-gather and
    reduce-scatter n-1, tree all-reduce 2(n-1) (NCCL's intra-node tree is a chain), all-to-all 1."""
    _check(name, algo, ranks)
    if name == "alltoall":
        return 1
    return 2 * (ranks - 1) if name == "allreduce" else ranks - 1


def link_bytes_per_rank(name: str, algo: str, nbytes: float, ranks: int) -> float:
    """Payload bytes each rank sends across its link (= NCCL busbw x time)."""
    _check(name, algo, ranks)
    if name == "alltoall":
        return nbytes * (ranks - 1) / ranks
    if algo == "tree":  # chain: inner ranks send the buffer up and down
        return nbytes if ranks == 2 else 2 * nbytes
    return steps(name, algo, ranks) * nbytes / ranks


def sm_bytes_per_link_byte(name: str, algo: str, ranks: int) -> float:
    """Bytes a channel loads + stores (local and remote) per byte it sends over the link.

    Ring all-reduce over n ranks, per segment: send (load, remote store: 2), n-2 x
    receive-reduce-send (load received, load own, remote store: 3), receive-reduce-copy-send
    (4), n-2 x receive-copy-send (3), receive (2): 6n - 4 over 2(n-1) sent segments.
    All-gather: copy-send 3, n-2 x 3, receive 2; reduce-scatter: send 2, n-2 x 3, receive-
    reduce-copy 3: both 3n - 1 over n - 1. All-to-all: sender 2 + receiver 2 per byte.
    """
    _check(name, algo, ranks)
    n = ranks
    if name == "alltoall":
        return 4.0
    if name == "allreduce":
        return (6 * n - 4) / (2 * (n - 1))
    return (3 * n - 1) / (n - 1)


def channels_used(params: CollectiveParams, name: str, protocol: str, nbytes: float,
                  ranks: int) -> int:
    """Channels NCCL launches: one more per ``threads x threshold`` bytes, up to the maximum."""
    _index(protocol)
    if name == "alltoall":
        per_peer = nbytes / ranks
        return max(1, min(params.p2p_channels,
                          math.ceil(per_peer / (THREADS["Simple"] * THREAD_THRESHOLD["Simple"]))))
    threshold = THREAD_THRESHOLD[protocol] * (ranks if protocol == "LL" else 1)
    return max(1, min(params.channels, math.ceil(nbytes / (THREADS[protocol] * threshold))))


def max_slice_bytes(params: CollectiveParams, name: str, protocol: str) -> float:
    """Largest piece a channel moves per pipeline stage: Simple ring 2 of 8 buffer steps,
    point-to-point one step, LL 32 KiB, LL128 ~576 kB."""
    if protocol == "LL":
        return float(LL_CHUNK_BYTES)
    if protocol == "LL128":
        return float(LL128_CHUNK_BYTES)
    step = params.buffer_bytes / NCCL_STEPS
    return step if name == "alltoall" else 2 * step


# --- NCCL's own choice ---------------------------------------------------------------------
def nccl_estimate_s(params: CollectiveParams, name: str, algo: str, nbytes: float, ranks: int,
                    protocol: str) -> float:
    """NCCL's tuning-model time (its published constants), used only to choose a protocol."""
    i = _index(protocol)
    nsteps = steps(name, algo, ranks)
    bus = params.channels * params.tuning_channel_bytes_per_s
    if protocol == "LL":
        bus = min(params.ll_max_bytes_per_s, bus * PAYLOAD_FRACTION["LL"])
    elif protocol == "LL128":
        bus = min(bus * 0.92, params.channels * params.ll128_channel_max_bytes_per_s)
    algbw = bus * (0.5 if algo == "tree" else ranks / nsteps)
    hop = params.tree_step_latency_s if algo == "tree" else params.step_latency_s
    return params.base_latency_s[i] + nsteps * hop[i] + nbytes / algbw


def choose_protocol(params: CollectiveParams, name: str, algo: str, nbytes: float,
                    ranks: int) -> str:
    """The protocol NCCL picks: forced by ``params.protocol``, LL for small point-to-point
    messages, else the lowest :func:`nccl_estimate_s` (LL small, then Simple; LL128 where its
    latency/bandwidth pays)."""
    if params.protocol != "auto":
        return params.protocol
    if name == "alltoall":
        return "LL" if nbytes / ranks <= P2P_LL_THRESHOLD_BYTES else "Simple"
    return min(NCCL_PROTOCOLS, key=lambda p: nccl_estimate_s(params, name, algo, nbytes, ranks, p))


# --- the physical time ---------------------------------------------------------------------
def smooth_min(x: float, b: float, k: float) -> float:
    """``(x^-k + b^-k)^(-1/k)``: below both, tends to the smaller as k grows."""
    return (x ** -k + b ** -k) ** (-1.0 / k)


@dataclass(frozen=True, slots=True)
class NcclTime:
    """One collective's GPU-side time and its parts (seconds, bytes/s)."""

    protocol: str
    channels: int
    latency_s: float
    channel_bytes_per_s: float
    bandwidth_bytes_per_s: float
    link_bytes_per_rank: float
    transfer_s: float
    fill_s: float
    time_s: float

    def as_dict(self) -> dict:
        """Plain dict of the fields."""
        return asdict(self)


def gpu_time(params: CollectiveParams, name: str, algo: str, nbytes: float, ranks: int,
             link_bytes_per_s: float, protocol: str | None = None) -> NcclTime:
    """GPU-side seconds of one collective (kernel start to end on every rank).

    ``link_bytes_per_s`` is the payload rate of the slowest link between ranks (from the
    calibrated copy model); ``protocol`` forces one (default: NCCL's choice).
    """
    p = protocol or choose_protocol(params, name, algo, nbytes, ranks)
    i = _index(p)
    nsteps = steps(name, algo, ranks)
    nch = channels_used(params, name, p, nbytes, ranks)
    if name == "alltoall":  # point-to-point kernels: no ring base; one step latency
        latency = params.base_latency_s[0] + params.step_latency_s[i]
    else:
        hop = params.tree_step_latency_s if algo == "tree" else params.step_latency_s
        latency = params.base_latency_s[i] + nsteps * hop[i]
    frac = PAYLOAD_FRACTION[p]
    r_ch = params.sm_bytes_per_s * frac / sm_bytes_per_link_byte(name, algo, ranks)
    bw = smooth_min(nch * r_ch, link_bytes_per_s * frac, params.saturation_exponent)
    if p == "LL":
        bw = min(bw, params.ll_max_bytes_per_s)
    elif p == "LL128":
        bw = min(bw, nch * params.ll128_channel_max_bytes_per_s)
    sent = link_bytes_per_rank(name, algo, nbytes, ranks)
    per_stage = 2 if (p == "Simple" and name != "alltoall") else 1
    piece = min(max_slice_bytes(params, name, p), nbytes / (ranks * nch * per_stage))
    fill = piece / (bw / nch) if nbytes > 0 else 0.0
    transfer = sent / bw
    return NcclTime(protocol=p, channels=nch, latency_s=latency, channel_bytes_per_s=r_ch,
                    bandwidth_bytes_per_s=bw, link_bytes_per_rank=sent, transfer_s=transfer,
                    fill_s=fill, time_s=latency + transfer + fill)


def per_call_s(params: CollectiveParams, gpu_s: float) -> float:
    """Seconds per call when one host thread issues identical collectives back to back."""
    return max(params.issue_s, gpu_s)
