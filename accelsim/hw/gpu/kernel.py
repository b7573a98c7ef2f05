"""Kernels as the engine sees them: groups of identical CTAs with their costs, plus the
closed-form (contention-free list-scheduling) time of a kernel.

A :class:`Kernel` is what a GPU library launches: ``launch_s`` + ``startup_s`` (pipeline
prologue: first loads' latency) once, then its CTAs run on ``sm_count`` SM slots (one
resident CTA per SM; tensor-core kernels fill an SM's shared memory), each CTA costing
``pre_s + max(compute_s, l2_bytes / l2 share, hbm_bytes / hbm share) + post_s``.
Units: seconds and bytes.

Imports: stdlib, config.gpu (GpuMachine).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from accelsim.config.gpu import GpuMachine

MAX_THREADS_PER_SM = 2048
"""Resident threads per SM, a hardware occupancy limit (CUDA C++ Programming Guide,
"Technical Specifications per Compute Capability": 2048 for compute capability 7.0, 8.0 and
9.0, Volta, Ampere A100 and Hopper). Threads; the one definition, imported elsewhere."""
MAX_CTAS_PER_SM = 32
"""Resident thread blocks (CTAs) per SM at once, whatever their threads and registers allow
(the same table: 32 for compute capability 7.0, 8.0 and 9.0). CTAs; not the grid size of a
launch (``hw/gpu/memory.py`` ``STREAM_GRID_CTAS_PER_SM``)."""


@dataclass(frozen=True, slots=True)
class CtaCost:
    """What one CTA (thread block) costs on one SM. Seconds and bytes."""

    compute_s: float
    """Busy time of the SM's arithmetic: tensor-core main loop, shared-memory reads, ALU/SFU."""
    l2_bytes: float
    """Bytes the CTA moves between L2 and the SM (loads and stores)."""
    hbm_bytes: float
    """The CTA's share of the kernel's HBM traffic (misses and write-backs)."""
    pre_s: float = 0.0
    """Serial time before the overlapped part (e.g. a prologue not hidden by the last CTA)."""
    post_s: float = 0.0
    """Serial time after it (the epilogue: the output tile's store)."""
    parts: dict = field(default_factory=dict, compare=False)
    """Named compute components (``mma_s``, ``smem_s``, ``alu_s``...) for explanations."""


@dataclass(frozen=True, slots=True)
class Kernel:
    """One launched kernel: CTA groups ``((count, CtaCost), ...)``, started in this order (the
    planners list them as the kernel launches them: longest first, except a causal
    attention's, shortest first)."""

    name: str
    groups: tuple
    launch_s: float
    startup_s: float
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def ctas(self) -> int:
        """CTAs in the grid."""
        return sum(n for n, _ in self.groups)

    @property
    def l2_bytes(self) -> float:
        """Bytes between L2 and the SMs, all CTAs."""
        return sum(n * c.l2_bytes for n, c in self.groups)

    @property
    def hbm_bytes(self) -> float:
        """Bytes to and from HBM, all CTAs."""
        return sum(n * c.hbm_bytes for n, c in self.groups)


def pays_tail(k: Kernel) -> bool:
    """Whether ``k`` carries ``host.kernel_tail_s`` in its ``launch_s`` (every kernel but the
    convolution library's: :func:`without_tail`)."""
    return bool(k.meta.get("tail", True))


EXTRA_LAUNCH = "extra_launch"
"""Kernel ``meta`` flag of a kernel a library call launches besides its main one, by shape
(cuBLASLt's split-K reduce, flash-decoding's split-KV combine, cuDNN's Winograd transforms and
channel-padding kernels): in eager mode each costs the host ``host.extra_kernel_s``, which the
tiny-tensor probes behind ``host.eager_call_s`` (one kernel per call) do not contain."""


MEMSET = "memset"
"""Kernel ``meta`` flag of a memset a library call makes before its kernel (cuDNN's prefill
attention zeroes its workspace): it costs GPU time like a tiny kernel, but kernel counts,
as profiles list them, leave memsets apart (:func:`launched_kernels`)."""


def launched_kernels(kernels: Iterable[Kernel]) -> int:
    """How many of ``kernels`` are kernels proper (memsets apart: :data:`MEMSET`)."""
    return sum(1 for k in kernels if not k.meta.get(MEMSET))


def extra_launches(kernels: Iterable[Kernel]) -> int:
    """How many of ``kernels`` are :data:`EXTRA_LAUNCH` kernels."""
    return sum(1 for k in kernels if k.meta.get(EXTRA_LAUNCH))


def without_tail(k: Kernel, m: GpuMachine) -> Kernel:
    """``k`` paying ``host.launch_s`` only, not ``host.kernel_tail_s``. Run 6's profiled CUDA-graph
    trace of ResNet-50 (``scripts/data/h200_graph_align_run6.json``) shows cuDNN's and cuBLAS's
    convolution kernels lasting what the model gives their bodies, with the stream's 0.43 us gap
    between kernels and no drain, while PyTorch's small native kernels last 0.9-1.3 us longer
    (ARCHITECTURE.md, "GPU per-kernel costs"). Such a kernel does not take part in
    dependent-launch hiding either (``pdl`` off: nothing to hide)."""
    if not pays_tail(k):
        return k
    return replace(k, launch_s=k.launch_s - m.host.kernel_tail_s,
                   meta={**k.meta, "tail": False, "pdl": False})


def sm_bandwidth_caps(m: GpuMachine) -> tuple[float, float]:
    """(L2, HBM) bytes/s one SM can pull: in-flight bytes over the latency (Little's law)."""
    mem = m.memory
    return (mem.sm_inflight_bytes / max(mem.l2_latency_s, 1e-12),
            mem.sm_inflight_bytes / max(mem.hbm.latency_s, 1e-12))


def cta_alone_s(m: GpuMachine, c: CtaCost) -> float:
    """Time of one CTA with L2 and HBM to itself (no other SM competing), seconds."""
    l2_cap, hbm_cap = sm_bandwidth_caps(m)
    l2_bw = min(m.memory.l2_bandwidth_bytes_per_s, l2_cap)
    hbm_bw = min(m.memory.hbm.sustained_bytes_per_s, hbm_cap)
    return c.pre_s + max(c.compute_s, c.l2_bytes / l2_bw, c.hbm_bytes / hbm_bw) + c.post_s


def list_schedule_s(durations: list[tuple[int, float]], slots: int) -> float:
    """Makespan of ``(count, duration)`` jobs, in order, each on the earliest free of ``slots``.

    The same greedy order a FIFO ``simpy.Resource(capacity=slots)`` produces.
    """
    if not durations:
        return 0.0
    if len(durations) == 1:
        n, t = durations[0]
        return math.ceil(n / slots) * t
    free = [0.0] * slots
    heapq.heapify(free)
    end = 0.0
    for n, t in durations:
        for _ in range(n):
            start = heapq.heappop(free)
            heapq.heappush(free, start + t)
            end = max(end, start + t)
    return end


def waves(kernel: Kernel, m: GpuMachine) -> float:
    """Waves of CTAs over the SMs (fractional: 1.5 = one full wave and a half-full one)."""
    return kernel.ctas / m.sm_count


def closed_form_s(kernel: Kernel, m: GpuMachine) -> float:
    """Kernel time without contention: launch + startup + list-scheduled CTAs, seconds.

    Equal to the SimPy replay (:mod:`accelsim.engine.gpu_replay`) whenever the CTAs running
    together never ask L2 or HBM for more than their bandwidth.
    """
    jobs = [(n, cta_alone_s(m, c)) for n, c in kernel.groups]
    return kernel.launch_s + kernel.startup_s + list_schedule_s(jobs, m.sm_count)


def bandwidth_floor_s(kernel: Kernel, m: GpuMachine) -> float:
    """Kernel time if only the shared L2 and HBM bandwidth counted, seconds."""
    return kernel.launch_s + kernel.startup_s + max(
        kernel.hbm_bytes / m.memory.hbm.sustained_bytes_per_s,
        kernel.l2_bytes / m.memory.l2_bandwidth_bytes_per_s)


def estimate_s(kernel: Kernel, m: GpuMachine) -> float:
    """Fast estimate with contention: the larger of the list schedule and the bandwidth floor."""
    return max(closed_form_s(kernel, m), bandwidth_floor_s(kernel, m))


def bound_of(kernel: Kernel, m: GpuMachine) -> str:
    """Which resource limits the kernel: tensor_core, simt, sfu, smem, l2, hbm or launch."""
    total = estimate_s(kernel, m)
    fixed = kernel.launch_s + kernel.startup_s
    hbm = kernel.hbm_bytes / m.memory.hbm.sustained_bytes_per_s
    l2 = kernel.l2_bytes / m.memory.l2_bandwidth_bytes_per_s
    per_cta: dict[str, float] = {}
    for n, c in kernel.groups:
        for key, val in c.parts.items():
            per_cta[key] = per_cta.get(key, 0.0) + n * val
    slots = m.sm_count
    comp = {k: v / slots for k, v in per_cta.items()}
    cands = {"hbm": hbm, "l2": l2, **{_UNIT.get(k, k): v for k, v in comp.items()}}
    name, worst = max(cands.items(), key=lambda kv: kv[1])
    if fixed >= worst or fixed > 0.5 * total:
        return "launch"
    return name


_UNIT = {"mma_s": "tensor_core", "smem_s": "smem", "simt_s": "simt", "alu_s": "simt",
         "sfu_s": "sfu", "legacy_mma_s": "tensor_core_unaligned",
         "narrow_mma_s": "tensor_core_narrow", "mma_sync_s": "tensor_core_mma_sync",
         "latency_s": "latency"}
