"""The convolution kernels cuDNN launches besides plain (implicit) GEMMs: the direct kernel
and the channel-padding kernel for inputs with very few channels, depthwise kernels on CUDA
cores, and the grouped implicit GEMM. Family choice: :mod:`accelsim.hw.gpu.conv`.

* **Direct** (``convolve_common_engine_float_NHWC``, the C = 3 stem at small batch): each
  thread accumulates outputs in FP32 from gathered input taps; cost = ``MACs x
  conv.direct_instr_per_mac + outputs x conv.direct_instr_per_output`` FP32-lane
  instructions, streamed like an elementwise kernel.
* **Channel padding** (``Memset`` + ``nhwcAddPaddingKernel``, for the input, then the
  filters): clears a buffer and copies the tensor into it with C padded to 16 bytes (3 -> 8
  bf16 channels), so the implicit GEMM can load 16-byte taps.
* **Depthwise** (``conv2d_c1_k1_nhwc``): no tensor cores; per output ``R x S`` FMAs plus
  ``R x stride`` input row segments loaded into registers (``conv.depthwise_instr_per_row``
  instructions each), memory traffic as an elementwise kernel (input, filters, output once);
  before its first output a CTA waits ``conv.depthwise_fixed_s`` (filter taps and first
  input rows loaded one after another): 2.3-3.6 us kernels at batch 1, >= 5.4 us for the
  ``_specialized`` variant PyTorch picks from batch 8 (``h200_e2e.json``,
  ``h200_linear_dw_pool_run4b.json``).
* **Grouped** (``xmma_fprop_implicit_gemm ... g16``): one kernel for all groups; a CTA
  computes ``64`` output pixels x ``64`` output channels, i.e. ``64 / (K/g)`` whole groups,
  each a block-diagonal GEMM of ``K/g`` x ``(C/g) R S`` padded to the ``m16n8k16`` MMA atom
  (8 columns, 16-deep K), at the ``mma.sync`` rate; its im2col gathers (one ``C/g``-channel
  slice per pixel and tap) reach ``conv.grouped_gather_efficiency`` of the L2 bandwidth.
  Several of these small CTAs share an SM, so one's prologue hides behind another's main
  loop: no per-CTA ``tile_fixed_s`` (unlike the one-CTA-per-SM implicit GEMMs).

Units: seconds, bytes, MACs. Imports: config, workload, hw.gpu.
"""

from __future__ import annotations

import math
from dataclasses import replace

from accelsim.config.gpu import OPERAND_BYTES, OUTPUT_BYTES, GpuMachine
from accelsim.hw.gpu.gemm import mma_rate_macs_per_s
from accelsim.hw.gpu.kernel import EXTRA_LAUNCH, CtaCost, Kernel
from accelsim.hw.gpu.memory import l2_hit_fraction, startup_s, stream_kernel
from accelsim.workload.ops import Conv2d

PAD_BYTES = 16
"""cuDNN pads the channels of a tiny-C input to this many bytes (16-byte tap loads)."""
GROUPED_TILE = (64, 64)
"""Output pixels x output channels of one grouped implicit-GEMM CTA (``tilesize64x64x64``)."""
MMA_ATOM_N, MMA_ATOM_K = 8, 16
"""``mma.sync m16n8k16``: a group's columns pad to 8, its reduction depth to 16."""


def padded_channels(c: int, precision: str) -> int:
    """Channels after cuDNN's padding of a tiny-C input to :data:`PAD_BYTES` (3 -> 8 bf16)."""
    per = max(1, PAD_BYTES // OPERAND_BYTES[precision])
    return math.ceil(c / per) * per


def io_bytes(op: Conv2d, precision: str) -> tuple[float, float, float]:
    """(input, filter, output) bytes of ``op`` as stored."""
    t = op.tensor_elements()
    e = OPERAND_BYTES[precision]
    return t["input"] * e, t["weight"] * e, t["output"] * OUTPUT_BYTES[precision]


def direct_kernel(m: GpuMachine, op: Conv2d, precision: str) -> Kernel:
    """cuDNN's direct NHWC kernel for a tiny-C convolution, on FP32 CUDA cores."""
    x, w, y = io_bytes(op, precision)
    outputs = op.n * op.out_h * op.out_w * op.k
    instr = op.macs * m.conv.direct_instr_per_mac + outputs * m.conv.direct_instr_per_output
    return stream_kernel(m, "conv2d.direct", read_bytes=x + w, write_bytes=y,
                         simt_flops=instr, clock_hz=m.load_clock_hz("fp32"),
                         meta={"family": "tiny_c_direct"})


def pad_kernels(m: GpuMachine, op: Conv2d, precision: str) -> tuple[Kernel, ...]:
    """Clear and fill the channel-padded input, then the padded filters (4 kernels)."""
    e = OPERAND_BYTES[precision]
    cp = padded_channels(op.c, precision)
    out = []
    for what, rows in (("input", op.n * op.h * op.w), ("filter", op.k * op.r * op.s)):
        out.append(stream_kernel(m, f"conv2d.memset_{what}", read_bytes=0.0,
                                 write_bytes=rows * cp * e,
                                 meta={"family": "memset", EXTRA_LAUNCH: True}))
        out.append(stream_kernel(m, f"conv2d.pad_{what}", read_bytes=rows * op.c * e,
                                 write_bytes=rows * cp * e,
                                 meta={"family": "pad", EXTRA_LAUNCH: True}))
    return tuple(out)


def depthwise_kernel(m: GpuMachine, op: Conv2d, precision: str) -> Kernel:
    """cuDNN's depthwise kernel (``groups == C``): CUDA-core FMAs plus register-blocked loads."""
    x, w, y = io_bytes(op, precision)
    outputs = op.n * op.out_h * op.out_w * op.k
    per_out = op.r * op.s + m.conv.depthwise_instr_per_row * op.r * op.stride
    k = stream_kernel(m, "conv2d.depthwise", read_bytes=x + w, write_bytes=y,
                      simt_flops=outputs * per_out, clock_hz=m.load_clock_hz("fp32"),
                      meta={"family": "depthwise"})
    return replace(k, startup_s=k.startup_s + m.conv.depthwise_fixed_s)


DEPTHWISE_NCHW_THREADS = 256
"""Threads per CTA of PyTorch's NCHW depthwise kernel, one output each (its launch: blocks of
256 over the outputs)."""


def depthwise_nchw_kernel(m: GpuMachine, op: Conv2d, precision: str) -> Kernel:
    """PyTorch's native NCHW depthwise kernel (``conv_depthwise2d_forward_kernel``): one
    thread per output in CTAs of :data:`DEPTHWISE_NCHW_THREADS`, each
    ``conv.depthwise_nchw_instr_per_output`` FP32-lane instructions plus ``R x S`` taps at
    ``conv.depthwise_nchw_instr_per_tap`` (no register blocking, no shared memory: each tap's
    input is a load through L1), the input, filters and output
    moved once (HBM at the op's L2 miss share), after ``conv.depthwise_nchw_fixed_s``."""
    x, w, y = io_bytes(op, precision)
    outputs = op.n * op.out_h * op.out_w * op.k
    ctas = math.ceil(outputs / DEPTHWISE_NCHW_THREADS)
    clk = m.load_clock_hz("fp32")
    c = m.compute
    rate = c.simt_flop_per_clk_per_sm * clk * c.simt_elementwise_efficiency
    per_out = m.conv.depthwise_nchw_instr_per_output \
        + op.r * op.s * m.conv.depthwise_nchw_instr_per_tap
    alu_s = DEPTHWISE_NCHW_THREADS * per_out / rate
    hit = l2_hit_fraction(m, x + w, y)
    cta = CtaCost(compute_s=alu_s, l2_bytes=(x + w + y) / ctas,
                  hbm_bytes=(1.0 - hit) * (x + w + y) / ctas, parts={"alu_s": alu_s})
    return Kernel(name="conv2d.depthwise_nchw", groups=((ctas, cta),),
                  launch_s=m.host.kernel_launch_s,
                  startup_s=startup_s(m, hit) + m.conv.depthwise_nchw_fixed_s,
                  meta={"family": "depthwise_nchw", "l2_hit": hit})


def grouped_kernel(m: GpuMachine, op: Conv2d, precision: str) -> Kernel:
    """One grouped implicit-GEMM kernel (all groups batched, padded per-group MMAs)."""
    e = OPERAND_BYTES[precision]
    oe = OUTPUT_BYTES[precision]
    g = op.groups
    cg, kg = op.c // g, op.k // g
    bm, bn = GROUPED_TILE
    pixels = op.n * op.out_h * op.out_w
    per_cta = max(1, bn // kg)  # whole groups packed into one CTA's 64 columns
    col_tiles = math.ceil(kg / bn) if kg > bn else 1
    cols = min(kg, bn)
    depth = cg * op.r * op.s
    ctas = math.ceil(pixels / bm) * math.ceil(g / per_cta) * col_tiles
    macs = bm * per_cta * _pad(cols, MMA_ATOM_N) * _pad(depth, MMA_ATOM_K)
    path = "legacy" if precision != "fp32" else "simt"
    mma_s = macs / mma_rate_macs_per_s(m, precision, path)
    gather = bm * per_cta * depth * e
    filters = per_cta * cols * depth * e
    out = bm * per_cta * cols * oe
    x, w, y = io_bytes(op, precision)
    hit = l2_hit_fraction(m, x + w, y)
    cta = CtaCost(compute_s=mma_s,
                  l2_bytes=gather / m.conv.grouped_gather_efficiency + filters + out,
                  hbm_bytes=(1.0 - hit) * (x + w + y) / ctas,
                  parts={"mma_sync_s": mma_s})
    meta = {"family": "grouped", "path": path, "tile": (bm, bn, MMA_ATOM_K),
            "groups_per_cta": per_cta, "l2_hit": hit, "split_k": 1}
    return Kernel(name="conv2d.grouped", groups=((ctas, cta),), launch_s=m.host.kernel_launch_s,
                  startup_s=startup_s(m, hit), meta=meta)


def slowed(k: Kernel, fraction: float) -> Kernel:
    """``k`` with every CTA's compute time divided by ``fraction`` (a slower main loop)."""
    groups = tuple((n, replace(c, compute_s=c.compute_s / fraction,
                               parts={key: v / fraction for key, v in c.parts.items()}))
                   for n, c in k.groups)
    return replace(k, groups=groups)


def with_fixed_cost(k: Kernel, fixed_s: float) -> Kernel:
    """``k`` with ``fixed_s`` more serial start-up (a library kernel's prologue/epilogue)."""
    return replace(k, startup_s=k.startup_s + fixed_s)


def _pad(v: int, atom: int) -> int:
    return math.ceil(v / atom) * atom
