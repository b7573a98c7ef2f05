"""Python API for links and multi-device systems: copies, collectives, overlap, scaling.

    >>> from accelsim.api.links import transfer, collective
    >>> transfer("h200x2", "host", "gpu0", 2**30)["bytes_per_s"]          # pinned H2D
    >>> collective("hgx_h200_x8", "allreduce", 1e9)["busbw_bytes_per_s"]  # NCCL busbw

Every result is a plain dict (JSON-able); bandwidths are ``*_bytes_per_s`` (decimal bytes per
second). The GB/s fields ``gbps``, ``link_gbps`` and ``busbw_gbps`` (gigabytes, 1e9 B/s, the
unit nccl-tests print) are kept for one release as aliases. Bad input (unknown or
unconnected endpoints, negative bytes) raises :class:`~accelsim.errors.ConfigError` naming
the element. Every size, time and bandwidth argument also takes the strings the command line
takes (``transfer("h200x2", "host", "gpu0", "1GiB")``, ``compute_s="2 ms"``; parsed by
:mod:`accelsim.units`: decimal SI, only Ki/Mi/Gi binary).

Imports: units, errors, analysis.amdahl, config.system, engine.collectives, engine.links,
hw.link, workload.ops, api.gpu.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import pandas as pd

from accelsim.analysis import amdahl as am
from accelsim.config.system import System, load_system, switched_system
from accelsim.engine import links as eng
from accelsim.engine.collectives import run_collective
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.hw import link as hw
from accelsim.units import UnitError, parse_bytes, parser_for_field

GB = 1e9

__all__ = ["GB", "amdahl", "bandwidth_ladder", "collective", "data_parallel_step",
           "device_hbm_bytes_per_s", "get_system", "gpu_op_time_s", "latency_bandwidth_curve",
           "pipeline", "switched_system", "tensor_parallel_layer", "transfer", "zero_copy"]


def quantity(value: Any, field: str) -> Any:
    """``value`` in canonical units when it is a string with a unit (``"1GiB"`` -> bytes,
    ``"2 ms"`` -> seconds, ``"900 GB/s"`` -> bytes/s), parsed by the unit suffix of the
    argument's name ``field`` (``nbytes`` and ``sizes`` are bytes); anything else unchanged (the
    callee checks numbers). A bad string is a one-line :class:`ConfigError` naming ``field``."""
    if not isinstance(value, str):
        return value
    parse = parse_bytes if field in ("nbytes", "sizes") else parser_for_field(field)
    if parse is None:
        return value
    try:
        return parse(value)
    except UnitError as exc:
        raise ConfigError(None, field, value, str(exc)) from None


def get_system(system: System | str | os.PathLike) -> System:
    """A :class:`System` from a built-in name, a path, or a System (returned as is)."""
    return system if isinstance(system, System) else load_system(system)


# --- one operation --------------------------------------------------------------------------
def transfer(system: System | str, src: str, dst: str, nbytes: float,
             pageable: bool = False) -> dict:
    """One copy of ``nbytes`` from ``src`` to ``dst`` (``host``, ``gpu0``, ...).

    ``time_s`` is the copy alone: a pinned copy's chunks replayed on the link engine (DMA setup
    + latency + bytes on the wire / bandwidth), or a pageable copy's staging path, a closed
    form (:func:`accelsim.hw.link.pageable_copy_s`); ``method`` says which. ``back_to_back_s``
    is the per-call time of identical copies issued back to back by one host thread (what a
    benchmark loop measures).
    """
    s = get_system(system)
    n = hw.check_bytes(quantity(nbytes, "nbytes"))
    route = hw.find_route(s, src, dst)
    if pageable and s.host.name not in (src, dst):
        raise ConfigError(s.name, "pageable", True,
                          f"pageable memory is host memory; '{src}'->'{dst}' does not touch "
                          "the host")
    t = hw.pageable_copy_s(s, route, n) if pageable else eng.run_copy(s, src, dst, n)
    actions = hw.transfer_actions(route, n)
    b2b = max(route.issue_s, t) if not pageable else t
    return {"system": s.name, "op": "copy", "src": src, "dst": dst, "bytes": n,
            "pageable": pageable, "method": "closed form" if pageable else "event replay",
            "route": route.names, "via_host": route.via_host,
            "time_s": t, "bytes_per_s": n / t if t > 0 else 0.0,
            "gbps": n / t / GB if t > 0 else 0.0,  # alias, one release
            "latency_s": route.dma_setup_s + route.latency_s,
            "serialization_s": hw.route_serialization_s(route, n),
            "back_to_back_s": b2b,
            "link_bytes_per_s": hw.payload_bytes_per_s(route.bottleneck),
            "link_gbps": hw.payload_bytes_per_s(route.bottleneck) / GB,  # alias, one release
            "bottleneck": route.bottleneck.label,
            "energy_j": sum(a["energy_pj"] for a in actions) * 1e-12, "actions": actions}


def collective(system: System | str, name: str, nbytes: float, algo: str | None = None,
               ranks: list[str] | None = None, protocol: str | None = None,
               model: str | None = None) -> dict:
    """One collective over ``ranks`` (default all devices); NCCL algbw (``bytes_per_s``, also
    ``algbw_bytes_per_s``) and ``busbw_bytes_per_s``.

    ``time_s`` is the collective on the GPUs; ``back_to_back_s`` the per-call time when one
    host thread issues identical calls back to back (never below ``collectives.issue_s``).
    With the ``nccl`` model the result also names the ``protocol`` and ``channels`` used and
    the time's parts under ``nccl``; ``protocol`` forces one (LL, LL128, Simple), ``model``
    overrides the system's (``nccl`` or ``link``).
    """
    s = get_system(system)
    if ranks is not None and (not isinstance(ranks, (list, tuple))
                              or not all(isinstance(r, str) for r in ranks)):
        raise ConfigError(s.name, "ranks", type(ranks).__name__,
                          "expected a list of device names")
    r = run_collective(s, name, quantity(nbytes, "nbytes"), algo=algo,
                       ranks=list(ranks) if ranks is not None else None, protocol=protocol,
                       model=model)
    r.update(system=s.name, op=name, bytes_per_s=r["algbw_bytes_per_s"],
             gbps=r["algbw_bytes_per_s"] / GB, busbw_gbps=r["busbw_bytes_per_s"] / GB)  # aliases
    return r


# --- tables for the lab -----------------------------------------------------------------------
def bandwidth_ladder(system: System | str, device: str | None = None,
                     hbm_bytes_per_s: float | None = None) -> pd.DataFrame:
    """Per-direction bandwidth of each level a device reaches: HBM, NVLink, PCIe, network.

    ``headline_bytes_per_s`` is the datasheet figure (PCIe: GT/s x lanes / 8, before encoding),
    ``raw_bytes_per_s`` the rate after line encoding, ``payload_bytes_per_s`` what the link model
    delivers to a long copy; ``ratio_to_next`` compares headline rates down the ladder. HBM comes
    from the device's hardware config unless ``hbm_bytes_per_s`` is given.
    """
    s = get_system(system)
    hbm_bytes_per_s = quantity(hbm_bytes_per_s, "hbm_bytes_per_s")
    dev = device or s.device_names[0]
    s.device(dev)
    rows: list[dict[str, Any]] = []
    hbm = hbm_bytes_per_s if hbm_bytes_per_s is not None else device_hbm_bytes_per_s(s, dev)
    if hbm is not None:
        rows.append({"level": "HBM", "protocol": "memory", "headline_bytes_per_s": hbm,
                     "raw_bytes_per_s": hbm, "payload_bytes_per_s": hbm})
    seen = set()
    for link in s.links:
        if dev not in link.ends:
            continue
        spec = s.spec(link.spec)
        if spec.protocol in seen:
            continue
        seen.add(spec.protocol)
        rows.append({"level": spec.label, "protocol": spec.protocol,
                     "headline_bytes_per_s": spec.signaling_bytes_per_s,
                     "raw_bytes_per_s": spec.raw_bytes_per_s,
                     "payload_bytes_per_s": hw.payload_bytes_per_s(spec)})
    df = pd.DataFrame(rows).sort_values("headline_bytes_per_s", ascending=False, ignore_index=True)
    df["bidirectional_bytes_per_s"] = df["headline_bytes_per_s"] * 2
    df.loc[df["level"] == "HBM", "bidirectional_bytes_per_s"] = df["headline_bytes_per_s"]
    df["ratio_to_next"] = df["headline_bytes_per_s"] / df["headline_bytes_per_s"].shift(-1)
    return df


def device_hbm_bytes_per_s(system: System, device: str) -> float | None:
    """Peak HBM bytes/s of ``device`` from its hardware config, or ``None`` if not known."""
    try:
        machine = system.device_machine(device)
    except ConfigError:
        return None
    memory = getattr(machine, "memory", None)
    for holder in (getattr(memory, "hbm", None), getattr(memory, "dram", None), memory, machine):
        for attr in ("bandwidth_bytes_per_s", "hbm_bytes_per_s", "peak_bytes_per_s"):
            value = getattr(holder, attr, None)
            if isinstance(value, (int, float)):
                return float(value)
    return None


def latency_bandwidth_curve(system: System | str, src: str, dst: str,
                            sizes: list[float] | None = None) -> pd.DataFrame:
    """Copy time and achieved GB/s against size; ``regime`` says which term dominates.

    ``half_bandwidth_bytes`` (n_1/2 = latency x bandwidth) is where the two terms are equal.
    """
    s = get_system(system)
    route = hw.find_route(s, src, dst)
    sizes = [quantity(n, "sizes") for n in sizes] if sizes else [2.0**k for k in range(10, 31, 2)]
    lat = route.dma_setup_s + route.latency_s
    rows = []
    for n in sizes:
        t = hw.copy_time_s(route, n)
        ser = hw.route_serialization_s(route, n)
        rows.append({"bytes": n, "time_s": t, "bytes_per_s": n / t, "gbps": n / t / GB,
                     "latency_s": lat,
                     "serialization_s": ser, "regime": "latency" if lat > ser else "bandwidth"})
    df = pd.DataFrame(rows)
    df.attrs["half_bandwidth_bytes"] = lat * hw.payload_bytes_per_s(route.bottleneck)
    return df


MAX_PIPELINE_CHUNKS = 4096
"""Chunks one pipelined transfer may be cut into (each is replayed as events)."""


def pipeline(system: System | str, device: str, chunks: int, h2d_bytes: float, kernel_s: float,
             d2h_bytes: float, overlap: bool = True) -> dict:
    """H2D -> kernel -> D2H over ``chunks`` chunks, overlapped (streams) or one after another."""
    s = get_system(system)
    s.device(device)
    h2d_bytes, d2h_bytes = quantity(h2d_bytes, "h2d_bytes"), quantity(d2h_bytes, "d2h_bytes")
    kernel_s = quantity(kernel_s, "kernel_s")
    if isinstance(chunks, bool) or not hasattr(chunks, "__index__") \
            or not 1 <= chunks <= MAX_PIPELINE_CHUNKS:
        raise ConfigError(s.name, "chunks", chunks,
                          f"expected a whole number 1..{MAX_PIPELINE_CHUNKS}")
    chunks = int(chunks)
    hw.check_bytes(h2d_bytes, "h2d_bytes")
    hw.check_bytes(d2h_bytes, "d2h_bytes")
    hw.check_bytes(kernel_s, "kernel_s", "seconds")
    out = eng.run_pipeline(s, device, chunks, h2d_bytes, kernel_s, d2h_bytes, overlap=overlap)
    out["step_s"] = out["time_s"] / chunks
    return out


def zero_copy(system: System | str, device: str, nbytes: float, compute_s: float,
              reads: int = 1) -> dict:
    """Zero-copy (kernel reads host memory over PCIe) against copy-then-compute."""
    s = get_system(system)
    s.device(device)
    if isinstance(reads, bool) or not isinstance(reads, int) and not (
            hasattr(reads, "__index__") and not isinstance(reads, float)):
        raise ConfigError(s.name, "reads", type(reads).__name__, "expected a whole number >= 1")
    reads = int(reads)
    if not 1 <= reads <= 10**6:
        raise ConfigError(s.name, "reads", reads, "expected a whole number 1..1000000")
    return eng.run_zero_copy(s, device, hw.check_bytes(quantity(nbytes, "nbytes")),
                             quantity(compute_s, "compute_s"), reads=reads)


# --- scenarios --------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def gpu_op_time_s(hardware: str, op: Any, mode: str = "analytic") -> float:
    """Seconds of one op on one GPU from the GPU model (``accelsim.api.gpu.simulate_op``).

    ``mode="analytic"`` is the GPU model's closed-form path, which gives the event replay's
    numbers where nothing contends (the GPU model's own contract) and is ~20x faster.
    """
    try:
        from accelsim.api.gpu import simulate_op
    except ModuleNotFoundError as exc:
        raise UnsupportedError("the GPU model (accelsim.api.gpu) is not available; "
                               "pass compute_s instead") from exc
    return float(simulate_op(hardware, op, mode=mode)["time_s"])


def data_parallel_step(system: System | str, *, grad_bytes: float, compute_s: float | None = None,
                       ops: list | None = None, ranks: list[str] | None = None,
                       bucket_bytes: float = 25e6, overlap: bool = True,
                       backward_fraction: float = 2 / 3, algo: str = "ring") -> dict:
    """One data-parallel training step: per-GPU compute, then gradient all-reduce.

    ``compute_s`` is the forward+backward time of one GPU's batch; or give ``ops`` (the forward
    pass) and it is 3x their GPU-model time. With ``overlap`` the backward pass emits gradient
    buckets of ``bucket_bytes`` (the last ``backward_fraction`` of the compute) and each bucket's
    all-reduce starts as soon as it is ready and the previous one finished (DDP-style).
    Speed-up is throughput against one GPU (weak scaling); efficiency = speed-up / ranks.
    """
    s = get_system(system)
    names = eng.check_ranks(s, ranks)
    n = len(names)
    grad = hw.check_bytes(quantity(grad_bytes, "grad_bytes"), "grad_bytes")
    compute_s = quantity(compute_s, "compute_s")
    bucket_bytes = hw.check_bytes(quantity(bucket_bytes, "bucket_bytes"), "bucket_bytes")
    if compute_s is None:
        if not ops:
            raise ConfigError(s.name, "compute_s", None, "give compute_s or ops")
        hardware = s.device(names[0]).hardware
        compute_s = 3.0 * sum(gpu_op_time_s(hardware, op) for op in ops)
    hw.check_bytes(compute_s, "compute_s", "seconds")
    buckets = max(1, int(-(-grad // bucket_bytes))) if overlap else 1
    sizes = ([min(bucket_bytes, grad - i * bucket_bytes) for i in range(buckets)]
             if overlap else [grad])
    times = {}
    for b in set(sizes):
        times[b] = collective(s, "allreduce", b, algo=algo, ranks=names)["time_s"] if n > 1 else 0.0
    end = eng.bucketed_overlap(compute_s, [times[b] for b in sizes], backward_fraction, overlap)
    step = max(end, compute_s)
    comm = sum(times[b] for b in sizes)
    speedup = n * compute_s / step
    return {"system": s.name, "ranks": n, "compute_s": compute_s, "comm_s": comm,
            "exposed_comm_s": step - compute_s, "step_s": step, "buckets": len(sizes),
            "overlap": overlap, "speedup": speedup, "efficiency": speedup / n,
            "amdahl_serial_fraction": (step - compute_s) / step}


def tensor_parallel_layer(system: System | str, *, hidden: int, seq: int, batch: int, tp: int,
                          dtype_bytes: int = 2, flops_per_s: float | None = None,
                          algo: str = "ring") -> dict:
    """Forward pass of one transformer layer split Megatron-style over ``tp`` GPUs.

    Each GPU runs ``1/tp`` of the QKV, attention, projection and MLP GEMMs (12 h^2 + 2 s h
    MACs per token in all) and the layer does two all-reduces of the ``b x s x h`` activations.
    GEMM time comes from the GPU model, or from ``flops_per_s`` if given. Speed-up is against
    the same layer on one GPU; efficiency = speed-up / tp; the serial fraction is the share of
    the time that does not shrink with tp (communication), as in Amdahl's law.
    """
    s = get_system(system)
    if tp < 1 or tp > len(s.devices):
        raise ConfigError(s.name, "tp", tp, f"must be within 1..{len(s.devices)}")
    tokens = batch * seq

    def compute(k: int) -> float:
        from accelsim.workload.ops import Gemm

        gemms = [Gemm(name="qkv", m=tokens, n=3 * hidden // k, k=hidden),
                 Gemm(name="scores", m=seq, n=seq, k=hidden // k, batch=batch,
                      shared_weights=False),
                 Gemm(name="context", m=seq, n=hidden // k, k=seq, batch=batch,
                      shared_weights=False),
                 Gemm(name="proj", m=tokens, n=hidden, k=hidden // k),
                 Gemm(name="mlp_up", m=tokens, n=4 * hidden // k, k=hidden),
                 Gemm(name="mlp_down", m=tokens, n=hidden, k=4 * hidden // k)]
        if flops_per_s is not None:
            return sum(g.flops for g in gemms) / flops_per_s
        hardware = s.devices[0].hardware
        return sum(gpu_op_time_s(hardware, g) for g in gemms)

    act = tokens * hidden * dtype_bytes
    ranks = list(s.device_names[:tp])
    comm = 2 * collective(s, "allreduce", act, algo=algo, ranks=ranks)["time_s"] if tp > 1 else 0.0
    t1, tk = compute(1), compute(tp)
    step = tk + comm
    speedup = t1 / step
    return {"system": s.name, "tp": tp, "compute_s": tk, "comm_s": comm, "time_s": step,
            "single_gpu_s": t1, "speedup": speedup, "efficiency": speedup / tp,
            "amdahl_serial_fraction": comm / step, "allreduce_bytes": act}


def amdahl(accelerated_fraction: float, path_speedup: float, baseline_s: float = 1.0) -> dict:
    """Amdahl's law (closed form, :mod:`accelsim.analysis.amdahl`): a host phase ``(1-p) T``
    then an accelerated phase ``p T / G``; ``time_s`` is their sum, seconds."""
    speedup = am.amdahl_speedup(accelerated_fraction, path_speedup)
    return {"speedup": speedup, "limit": am.amdahl_limit(accelerated_fraction),
            "time_s": baseline_s / speedup, "baseline_s": baseline_s}
