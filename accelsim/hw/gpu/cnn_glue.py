"""The PyTorch kernels between the convolutions of a CNN (NHWC, ``channels_last``, eval):
BatchNorm, max-pool and global average pool. ReLU and residual adds are elementwise kernels
(:func:`accelsim.hw.gpu.memory.elementwise_kernel`).

These kernels are not bandwidth-bound streams: their launch shapes (taken from PyTorch's
launchers, ``aten/src/ATen/native/cuda/Normalization.cuh``, ``DilatedMaxPool2d.cu``,
``Reduce.cuh``) leave each thread a chain of dependent memory round trips, so a kernel lasts
``rounds x chain steps x round-trip latency`` unless L2 or HBM bandwidth is the floor
(:func:`latency_chain_kernel`). The round-trip latency is the L2's when the op's footprint
stays in L2, HBM's when it does not (hit-weighted in between).

* **BatchNorm (inference)**: three kernels per call, as PyTorch 2.x launches them on
  ``channels_last`` inputs: a cast of the running statistics (``direct_copy``), the
  per-channel ``1/sqrt(var + eps)`` (``batch_norm_calc_invstd``), and
  ``batch_norm_transform_input_channels_last_kernel``: blocks of ``32 x 16`` threads over
  (channels x pixels), at most 128 blocks along the pixels, each thread looping over its
  pixels with 4 scalar loads in flight; one loop iteration costs ``conv.bn_round_trips``.
* **Max-pool** (``max_pool_forward_nhwc``): 1024-thread blocks, one per (image, 2 output
  rows); each thread walks its output positions and, for each, the ``R x S`` window taps one
  after another (``conv.pool_round_trips`` L2 round trips per tap: overlapping windows make
  the taps after a row's first touch on-chip hits, so even a large input does not pay HBM
  latency per tap). The kernel is compiled with 1024-thread
  launch bounds and, per the batch-32/batch-1 ratio measured, keeps one block per SM.
* **Global average pool** (``adaptive_avg_pool2d(x, 1)`` = a mean over H x W): one thread
  per (image, channel) output, accumulating ``H x W`` inputs 4 at a time: ``ceil(HW/4)``
  round trips.

Units: seconds, bytes. Imports: config, hw.gpu.
"""

from __future__ import annotations

import math

from accelsim.config.gpu import GpuMachine
from accelsim.hw.gpu.kernel import CtaCost, Kernel
from accelsim.hw.gpu.memory import l2_hit_fraction, startup_s, stream_kernel

MAX_THREADS_PER_SM = 2048
"""Resident threads per SM (Volta ... Hopper)."""
BN_MAX_BLOCK, BN_TILE_W, BN_ELEMENTS_PER_THREAD, BN_MAX_H_BLOCK, BN_PARALLEL_LOADS = \
    512, 32, 16, 128, 4
"""PyTorch's ``flexible_launch_configs`` constants for the channels-last BatchNorm kernel."""
POOL_BLOCK, POOL_BLOCK_STRIDE, POOL_CTAS_PER_SM = 1024, 2, 1
"""``max_pool_forward_nhwc``: threads per block, output rows per block, blocks per SM."""
REDUCE_UNROLL, REDUCE_THREADS = 4, 128
"""``reduce_kernel<128, 4>``: inputs accumulated per round trip, threads per block."""


def last_pow2(n: int) -> int:
    """Largest power of two <= ``n`` (1 for n < 1), as PyTorch's ``lastPow2``."""
    return 1 << max(0, int(n).bit_length() - 1) if n >= 1 else 1


def round_trip_s(m: GpuMachine, read_bytes: float, write_bytes: float) -> float:
    """Latency of one dependent load: L2's if the op's footprint is resident, else HBM's."""
    hit = l2_hit_fraction(m, read_bytes, write_bytes)
    return hit * m.memory.l2_latency_s + (1.0 - hit) * m.memory.hbm.latency_s


def latency_chain_kernel(m: GpuMachine, name: str, *, ctas: int, ctas_per_sm: int,
                         chain_s: float, read_bytes: float, write_bytes: float,
                         meta: dict | None = None) -> Kernel:
    """A kernel whose CTAs each last ``chain_s`` (a chain of dependent round trips), run
    ``ctas_per_sm`` at a time per SM; L2 and HBM bandwidth remain floors."""
    hit = l2_hit_fraction(m, read_bytes, write_bytes)
    units = max(1, min(ctas, m.sm_count))
    rounds = math.ceil(ctas / (m.sm_count * ctas_per_sm))
    moved = read_bytes + write_bytes
    busy = rounds * chain_s
    cta = CtaCost(compute_s=busy, l2_bytes=moved / units, hbm_bytes=(1.0 - hit) * moved / units,
                  parts={"latency_s": busy})
    info = {"l2_hit": hit, "ctas": ctas, "rounds": rounds, **(meta or {})}
    return Kernel(name=name, groups=((units, cta),), launch_s=m.host.kernel_launch_s,
                  startup_s=startup_s(m, hit), meta=info)


def batchnorm_kernels(m: GpuMachine, n: int, c: int, h: int, w: int, elem_bytes: int
                      ) -> tuple[Kernel, ...]:
    """The three kernels of ``BatchNorm2d.eval()(x)`` on an ``n x c x h x w`` NHWC tensor."""
    stats = stream_kernel(m, "batchnorm.cast_stats", read_bytes=c * elem_bytes,
                          write_bytes=4 * c, meta={"family": "batchnorm"})
    invstd = stream_kernel(m, "batchnorm.invstd", read_bytes=4 * c, write_bytes=4 * c,
                           simt_flops=4 * c, meta={"family": "batchnorm"})
    pixels = n * h * w
    bx = min(last_pow2(c), BN_TILE_W)
    by = min(last_pow2(math.ceil(pixels / BN_ELEMENTS_PER_THREAD)), BN_MAX_BLOCK // bx)
    if bx * by != BN_MAX_BLOCK:
        bx = min(last_pow2(c), BN_MAX_BLOCK // by)
    gx = math.ceil(c / bx)
    gy = min(math.ceil(pixels / (by * BN_ELEMENTS_PER_THREAD)), BN_MAX_H_BLOCK)
    iters = math.ceil(pixels / (by * gy * BN_PARALLEL_LOADS))
    data = pixels * c * elem_bytes
    read, write = data + 4 * 4 * c, data
    chain = iters * m.conv.bn_round_trips * round_trip_s(m, read, write)
    per_sm = max(1, MAX_THREADS_PER_SM // (bx * by))
    tr = latency_chain_kernel(m, "batchnorm.transform", ctas=gx * gy, ctas_per_sm=per_sm,
                              chain_s=chain, read_bytes=read, write_bytes=write,
                              meta={"family": "batchnorm", "iterations": iters,
                                    "block": (bx, by), "grid": (gx, gy)})
    return stats, invstd, tr


def maxpool_kernel(m: GpuMachine, n: int, c: int, h: int, w: int, r: int, stride: int,
                   pad: int, elem_bytes: int) -> Kernel:
    """``max_pool2d`` (``r x r`` window) on an NHWC tensor: ``max_pool_forward_nhwc``."""
    ho = (h + 2 * pad - r) // stride + 1
    wo = (w + 2 * pad - r) // stride + 1
    bx = min(last_pow2(c), 32)
    by = min(last_pow2(wo), POOL_BLOCK // bx)
    bz = max(1, min(last_pow2(ho), POOL_BLOCK // bx // by))
    bx = min(last_pow2(c), POOL_BLOCK // by // bz)
    stride_c = math.ceil(c / (bx * 4))
    size_c = math.ceil(c / (bx * stride_c))
    gy = math.ceil(wo / (by * POOL_BLOCK_STRIDE))
    gz = math.ceil(ho / (bz * POOL_BLOCK_STRIDE))
    rows, cols = math.ceil(ho / gz), math.ceil(wo / gy)
    positions = math.ceil(rows / bz) * math.ceil(cols / by)
    read = n * h * w * c * elem_bytes
    write = n * ho * wo * c * elem_bytes
    steps = positions * r * r * m.conv.pool_round_trips
    chain = steps * m.memory.l2_latency_s  # overlapping windows: taps hit on chip
    return latency_chain_kernel(m, "maxpool", ctas=n * stride_c * gy * gz,
                                ctas_per_sm=POOL_CTAS_PER_SM, chain_s=chain, read_bytes=read,
                                write_bytes=write,
                                meta={"family": "maxpool", "positions": positions,
                                      "channel_loads": size_c})


def global_avgpool_kernel(m: GpuMachine, n: int, c: int, h: int, w: int, elem_bytes: int
                          ) -> Kernel:
    """``adaptive_avg_pool2d(x, 1)`` on an NHWC tensor: a mean over ``h x w`` per channel."""
    read = n * h * w * c * elem_bytes
    write = n * c * elem_bytes
    outputs = n * c
    chain = math.ceil(h * w / REDUCE_UNROLL) * round_trip_s(m, read, write)
    ctas = math.ceil(outputs / REDUCE_THREADS)
    per_sm = MAX_THREADS_PER_SM // REDUCE_THREADS
    return latency_chain_kernel(m, "avgpool", ctas=ctas, ctas_per_sm=per_sm, chain_s=chain,
                                read_bytes=read, write_bytes=write,
                                meta={"family": "avgpool"})
