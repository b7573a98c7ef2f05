"""PyTorch's reduction over the contiguous (last) dim, ``x.mean(-1, keepdim=True)`` as Hugging
Face's ``LlamaRMSNorm`` calls it on its fp32 copy of the activations: ``reduce_kernel<512, 1>``
(``aten/src/ATen/native/cuda/Reduce.cuh``).

``setReduceConfig`` for a reduction on the fastest-striding dim vectorises the input (16-byte
loads of ``REDUCE_UNROLL`` elements) and sizes a block as ``block_width x block_height``
threads (:func:`row_reduce_launch`): ``block_width`` lanes share one row's inputs, the
``block_height`` warps own their own rows, unless each lane keeps >= 16 vectors per warp of the
block (then the warps split the row too). Each lane then walks its vectors one dependent 16-byte
load at a time (one accumulator chain), so a CTA lasts ``vectors per lane x
compute.reduce_round_trips`` L2 round trips: 2 loads per lane for one 4096-wide row (one
512-thread block), 32 from 16 rows up (32 x 16 blocks), whatever the row count while the
blocks fit in one wave (run 1 profiles of Llama-3-8B decode: 2.3, 3.6, 8.8-9.1 us at batch 1,
4, 16-256). L2 and HBM bandwidth stay floors (large prefill). Units: seconds, bytes.

Imports: config.gpu, hw.gpu.cnn_glue, hw.gpu.kernel.
"""

from __future__ import annotations

import math

from accelsim.config.gpu import GpuMachine
from accelsim.hw.gpu.cnn_glue import (
    REDUCE_MAX_PER_THREAD,
    REDUCE_MAX_THREADS,
    REDUCE_MIN_PER_THREAD,
    REDUCE_UNROLL,
    last_pow2,
    latency_chain_kernel,
    round_trip_s,
)
from accelsim.hw.gpu.kernel import MAX_THREADS_PER_SM, Kernel

VECTOR_MIN_INPUTS = 128
"""``setReduceConfig`` vectorises the input of a fastest-dim reduction over more inputs."""


def row_reduce_launch(rows: int, cols: int) -> tuple[int, int, int]:
    """(CTAs, threads per CTA, dependent loads per lane) of ``reduce_kernel<512, 1>`` reducing
    each of ``rows`` contiguous rows of ``cols`` elements to one value."""
    vec = REDUCE_UNROLL if cols > VECTOR_MIN_INPUTS and cols % REDUCE_UNROLL == 0 else 1
    dim0, dim1 = math.ceil(cols / vec), rows  # input vectors per output, outputs
    d0 = last_pow2(dim0) if dim0 < REDUCE_MAX_THREADS else REDUCE_MAX_THREADS
    d1 = last_pow2(dim1) if dim1 < REDUCE_MAX_THREADS else REDUCE_MAX_THREADS
    bw = min(d0, 32)
    bh = min(d1, REDUCE_MAX_THREADS // bw)
    bw = min(d0, REDUCE_MAX_THREADS // bh)
    per_lane = math.ceil(dim0 / bw)
    if per_lane >= bh * REDUCE_MIN_PER_THREAD or per_lane >= REDUCE_MAX_PER_THREAD:
        return math.ceil(dim1), bw * bh, math.ceil(per_lane / bh)  # warps split the row
    return math.ceil(dim1 / bh), bw * bh, per_lane  # each warp its own rows


def row_mean_kernel(m: GpuMachine, rows: int, cols: int, elem_bytes: int) -> Kernel:
    """``x.mean(-1, keepdim=True)`` over a contiguous ``rows x cols`` tensor."""
    read, write = rows * cols * elem_bytes, rows * elem_bytes
    ctas, threads, loads = row_reduce_launch(rows, cols)
    chain = loads * m.compute.reduce_round_trips * round_trip_s(m, read, write)
    per_sm = max(1, MAX_THREADS_PER_SM // threads)
    return latency_chain_kernel(m, "reduce.mean", ctas=ctas, ctas_per_sm=per_sm, chain_s=chain,
                                read_bytes=read, write_bytes=write,
                                meta={"family": "reduce", "threads": threads,
                                      "loads_per_lane": loads})
