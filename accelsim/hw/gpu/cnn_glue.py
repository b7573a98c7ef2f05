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
* **Global average pool** (``adaptive_avg_pool2d(x, 1)`` = a mean over H x W,
  ``reduce_kernel<128, 4>``): PyTorch's ``setReduceConfig`` for a reduction off the
  contiguous dim (:func:`avgpool_launch`): each thread owns 4 adjacent channels (one 8-byte
  load per input position), a block is ``32 x block_height`` threads; with >= 16 inputs per
  thread left the ``block_height`` warps split the H x W positions (shared-memory combine),
  else each warp owns its own outputs. A thread accumulates its positions 4 loads at a time:
  ``ceil(positions / 4)`` round trips, each the latency plus the SM's share of the step's
  bytes through its L2 port (:func:`accelsim.hw.gpu.kernel.sm_bandwidth_caps`): many CTAs
  per SM lengthen every step (measured 4.3 -> 6.1 us kernels from 20 to 512 CTAs,
  ``h200_linear_dw_pool_run4b.json``).

Units: seconds, bytes. Imports: config, hw.gpu.
"""

from __future__ import annotations

import math

from accelsim.config.gpu import GpuMachine
from accelsim.hw.gpu.kernel import (
    MAX_CTAS_PER_SM,
    MAX_THREADS_PER_SM,
    CtaCost,
    Kernel,
    sm_bandwidth_caps,
)
from accelsim.hw.gpu.memory import l2_hit_fraction, startup_s, stream_kernel

BN_MAX_BLOCK, BN_TILE_W, BN_ELEMENTS_PER_THREAD, BN_MAX_H_BLOCK, BN_PARALLEL_LOADS = \
    512, 32, 16, 128, 4
"""PyTorch's ``flexible_launch_configs`` constants for the channels-last BatchNorm kernel."""
POOL_BLOCK, POOL_BLOCK_STRIDE, POOL_CTAS_PER_SM = 1024, 2, 1
"""``max_pool_forward_nhwc``: threads per block, output rows per block, blocks per SM."""
REDUCE_UNROLL, REDUCE_MAX_THREADS, REDUCE_VEC = 4, 512, 4
"""``Reduce.cuh``: inputs a thread accumulates per round trip (``vt0``), the thread budget
``MAX_NUM_THREADS`` (divided by the output vector width) and that width (4 outputs)."""
REDUCE_MIN_PER_THREAD, REDUCE_MAX_PER_THREAD = 16, 256
"""``setReduceConfig``: the block's warps split the inputs when each keeps >= 16 (or the
inputs are >= 256 per thread); blocks split them (global combine) from 256."""


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


def avgpool_launch(n: int, c: int, positions: int, sm_count: int) -> tuple[int, int, int]:
    """(CTAs, threads per CTA, inputs per thread) of PyTorch's mean over ``positions`` per
    (image, channel) on NHWC: ``setReduceConfig`` + ``set_block_dimension`` for a reduction
    off the contiguous dim, with outputs vectorised by 4 channels where C allows."""
    vec = next(v for v in (REDUCE_VEC, 2, 1) if c % v == 0)
    dim0, dim1 = n * c // vec, positions  # vectors of outputs, inputs per output
    max_threads = REDUCE_MAX_THREADS // vec
    d0 = last_pow2(dim0) if dim0 < max_threads else max_threads
    d1 = last_pow2(dim1) if dim1 < max_threads else max_threads
    bw = min(d0, 32)
    bh = min(d1, max_threads // bw)
    bw = min(d0, max_threads // bh)
    if dim1 >= bh * REDUCE_MIN_PER_THREAD or dim1 >= REDUCE_MAX_PER_THREAD:
        per_thread, ctas = math.ceil(dim1 / bh), math.ceil(dim0 / bw)  # warps split inputs
        if per_thread >= REDUCE_MAX_PER_THREAD:  # blocks split them too (global combine)
            target = MAX_THREADS_PER_SM // (bw * bh) * sm_count
            split = max(min(math.ceil(target / ctas),
                            math.ceil(per_thread / REDUCE_MIN_PER_THREAD)),
                        math.ceil(per_thread / REDUCE_MAX_PER_THREAD))
            per_thread, ctas = math.ceil(per_thread / split), ctas * split
    else:
        per_thread, ctas = dim1, math.ceil(dim0 / (bw * bh))  # each warp its own outputs
    return ctas, bw * bh, per_thread


def global_avgpool_kernel(m: GpuMachine, n: int, c: int, h: int, w: int, elem_bytes: int
                          ) -> Kernel:
    """``adaptive_avg_pool2d(x, 1)`` on an NHWC tensor: a mean over ``h x w`` per channel."""
    read = n * h * w * c * elem_bytes
    write = n * c * elem_bytes
    ctas, threads, per_thread = avgpool_launch(n, c, h * w, m.sm_count)
    per_sm = max(1, min(MAX_CTAS_PER_SM, MAX_THREADS_PER_SM // threads))
    resident = min(per_sm, math.ceil(ctas / m.sm_count))
    # one step: every resident thread's REDUCE_UNROLL loads (REDUCE_VEC channels each) come
    # back after the latency, then through the SM's L2 port with the other CTAs' loads
    step_bytes = resident * threads * REDUCE_UNROLL * REDUCE_VEC * elem_bytes
    step = round_trip_s(m, read, write) + step_bytes / sm_bandwidth_caps(m)[0]
    chain = math.ceil(per_thread / REDUCE_UNROLL) * step
    return latency_chain_kernel(m, "avgpool", ctas=ctas, ctas_per_sm=per_sm, chain_s=chain,
                                read_bytes=read, write_bytes=write,
                                meta={"family": "avgpool", "threads": threads,
                                      "inputs_per_thread": per_thread})
