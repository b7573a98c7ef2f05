"""Row-wise kernels (softmax, layernorm) as PyTorch runs them: one CTA or warp per row.

Why they reach only 1-2.7 TB/s on an H200 when a copy reaches 4.2: such a kernel is not a
stream. Each row is owned by one CTA (or one warp), whose life is a latency chain (load the
row, reduce across the CTA, normalise, store), and an SM holds only a few of them. The
kernel families and their launch shapes follow the kernels PyTorch 2.11 launched on the
H200 (names and grids in ``scripts/data/h200_probe2.json``):

* ``softmax_warp``: rows of at most 2048 elements and 4 KiB (``softmax_warp_forward``): a
  warp per row (two rows when ``cols <= 128``), 4 warps per CTA, the row held in registers
  (``16 + cols / 32`` registers per thread, which caps the CTAs per SM); one pass from
  memory, warp-shuffle reductions.
* ``softmax_block_reg``: rows that fit 1024 threads x one 16-byte vector each
  (``cunn_SoftMaxForwardReg``): a CTA per row, the row in registers, two block reductions.
* ``softmax_block``: longer rows (``cunn_SoftMaxForward``): 1024 threads per row, three
  passes (max, sum of exp, write), the last two re-reading the row from L2.
* ``layernorm``: ``vectorized_layer_norm_kernel``: a 128-thread CTA per row, a Welford pass
  from memory, a block reduction, a normalise pass re-reading the row from L2.

Cost of one CTA: **issue** ``(elements x instr_per_element + threads x row_cta_instr) /
(FP32 lanes x clock)`` (thread instructions through the SM's 4 schedulers: the exp, the IEEE
divisions of Welford and of the normalisation, conversions, address arithmetic) and
**latency** ``sum over passes of (16-byte loads per thread in that pass) x (source's
latency) + block reductions x block_reduce_s`` (each load of a pass waits for the last:
the loop consumes what it loads). An SM runs ``R`` CTAs at once (threads, registers and the
32-CTA limit); a round of ``R`` CTAs lasts ``max(R x issue, latency + issue)``.
The L2/HBM bandwidth floor of the kernel still applies. Units: seconds, bytes.

Imports: config, hw.gpu.kernel, hw.gpu.memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accelsim.config.gpu import GpuMachine
from accelsim.hw.gpu.kernel import CtaCost, Kernel
from accelsim.hw.gpu.memory import l2_hit_fraction, startup_s

VECTOR_BYTES = 16
"""Bytes one thread loads per instruction (vectorised kernels)."""
MAX_THREADS_PER_SM = 2048
MAX_CTAS_PER_SM = 32
REGISTERS_PER_SM = 65536
BLOCK_THREADS = 1024


@dataclass(frozen=True, slots=True)
class RowShape:
    """How a library lays a row-wise op out: family, threads and rows per CTA, CTAs per SM,
    passes (each with its source: ``"mem"`` or ``"l2"``), block reductions."""

    family: str
    threads: int
    rows_per_cta: int
    ctas_per_sm: int
    passes: tuple[str, ...]
    reductions: int


def _resident(threads: int, regs: int) -> int:
    by_regs = REGISTERS_PER_SM // (threads * max(32, 8 * math.ceil(regs / 8)))
    return max(1, min(MAX_CTAS_PER_SM, MAX_THREADS_PER_SM // threads, by_regs))


def softmax_shape(cols: int, elem_bytes: int) -> RowShape:
    """PyTorch's softmax dispatch (``softmax_warp_forward`` / ``cunn_SoftMaxForward[Reg]``)."""
    vec = max(1, VECTOR_BYTES // elem_bytes)
    if cols <= 2048 and cols * elem_bytes <= 4096:
        rows = 8 if cols <= 128 else 4
        return RowShape("softmax_warp", 128, rows, _resident(128, 16 + cols // 32),
                        ("mem",), 0)
    if cols <= BLOCK_THREADS * vec:
        threads = min(BLOCK_THREADS, 1 << max(5, math.ceil(math.log2(cols / vec))))
        return RowShape("softmax_block_reg", threads, 1, _resident(threads, 40), ("mem",), 2)
    return RowShape("softmax_block", BLOCK_THREADS, 1, _resident(BLOCK_THREADS, 32),
                    ("mem", "l2", "l2"), 2)


def layernorm_shape(cols: int, elem_bytes: int) -> RowShape:
    """``vectorized_layer_norm_kernel``: 128 threads per row, Welford then normalise."""
    return RowShape("layernorm", 128, 1, _resident(128, 32), ("mem", "l2"), 1)


def row_kernel(m: GpuMachine, name: str, shape: RowShape, rows: int, cols: int,
               elem_bytes: int, instr_per_element: float, extra_read_bytes: float = 0.0,
               sfu_per_element: float = 0.0) -> Kernel:
    """The kernel of a row-wise op laid out as ``shape``; see the module doc."""
    c, mem = m.compute, m.memory
    x = rows * cols * elem_bytes
    hit = l2_hit_fraction(m, x + extra_read_bytes, x)
    clk = c.max_clock_hz
    lanes = c.simt_flop_per_clk_per_sm / 2.0
    ctas = math.ceil(rows / shape.rows_per_cta)
    elems = shape.rows_per_cta * cols
    issue = (elems * instr_per_element + shape.threads * c.row_cta_instr) / (lanes * clk)
    sfu = elems * sfu_per_element / (c.sfu_ops_per_clk_per_sm * clk)
    issue = max(issue, sfu)
    loads = math.ceil(shape.rows_per_cta * cols * elem_bytes / (shape.threads * VECTOR_BYTES))
    if shape.family == "softmax_warp":  # a warp issues all of its row's loads at once
        loads = 1
    mem_lat = mem.l2_latency_s if hit >= 1.0 else mem.hbm.latency_s
    lat = sum(loads * (mem_lat if p == "mem" else mem.l2_latency_s) for p in shape.passes)
    lat += shape.reductions * c.block_reduce_s
    per_sm = math.ceil(ctas / m.sm_count)
    units = min(ctas, m.sm_count)
    r_eff = min(shape.ctas_per_sm, per_sm)
    rounds = math.ceil(per_sm / shape.ctas_per_sm)
    busy = rounds * max(r_eff * issue, lat + issue)
    moved = 2 * x + extra_read_bytes
    reread = (len(shape.passes) - 1) * x
    cta = CtaCost(compute_s=busy, l2_bytes=(moved + reread) / units,
                  hbm_bytes=(1.0 - hit) * moved / units,
                  parts={"alu_s": rounds * r_eff * issue, "latency_s": rounds * lat})
    meta = {"l2_hit": hit, "chunks": units, "family": shape.family, "threads": shape.threads,
            "ctas": ctas, "ctas_per_sm": shape.ctas_per_sm, "passes": len(shape.passes)}
    return Kernel(name=name, groups=((units, cta),), launch_s=m.host.kernel_launch_s,
                  startup_s=startup_s(m, hit), meta=meta)


def layernorm_kernel(m: GpuMachine, rows: int, cols: int, elem_bytes: int, rms: bool,
                     flops: float) -> Kernel:
    """Row-wise (RMS)LayerNorm: x read once from memory and once from L2, gamma (and beta)
    read, y written; ``compute.layernorm_instr_per_element`` thread instructions per element."""
    w = (1 if rms else 2) * cols * elem_bytes
    return row_kernel(m, "layernorm", layernorm_shape(cols, elem_bytes), rows, cols,
                      elem_bytes, m.compute.layernorm_instr_per_element, extra_read_bytes=w)


def softmax_kernel(m: GpuMachine, rows: int, cols: int, elem_bytes: int,
                   flops: float) -> Kernel:
    """Row softmax: ``compute.softmax_instr_per_element`` thread instructions and one exp (on
    the SFU) per element, laid out by :func:`softmax_shape`."""
    return row_kernel(m, "softmax", softmax_shape(cols, elem_bytes), rows, cols, elem_bytes,
                      m.compute.softmax_instr_per_element, sfu_per_element=1.0)
