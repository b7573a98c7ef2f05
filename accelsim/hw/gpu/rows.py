"""Row-wise kernels (softmax, LayerNorm, RMSNorm) as PyTorch 2.11 runs them: one CTA or
warp per row.

Why they reach only 1-3.3 TB/s on an H200 when a copy reaches 4.2: such a kernel is not a
stream. Each row is owned by one CTA (or one warp), whose life is a latency chain (load the
row, reduce across the CTA, normalise, store), and an SM holds only a few of them. The
families and launch shapes follow the kernels PyTorch launched on the H200 (names in
``scripts/data/h200_gemm_rows_run4.json`` and ``h200_kernel_probe2.json``); :func:`softmax_shape`
and :func:`layernorm_shape` give the dispatch.

Cost of one CTA: **issue** ``(computed elements x (instr_per_element + exps x
transcendental_instr) + elements x mem_instr x row_mem_instr + threads x row_cta_instr) /
(FP32 lanes x clock)``: arithmetic per element of the family, the ``expf`` routines, one
``row_mem_instr`` per load/store instruction (one-element accesses cost more per element
than 16-byte vectors), fixed per-thread work (+ ``welford_cta_instr`` for LayerNorm's
Welford combines). **Latency** ``sum over passes of ceil(loads per thread / in flight) x
source latency + reductions x block_reduce_s``: LayerNorm's statistics loop keeps
``LN_UNROLL`` loads in flight; a row held in registers or shared memory is loaded all at
once; a re-read pass hits L1 while the SM's resident rows fit it, else L2. Rows from HBM
wait ``memory.loaded_hbm_latency_s`` (the round trip under load). A scheduler with fewer
warps than ``row_dependent_issue`` cannot issue every clock: a lone CTA (few rows) runs
its instructions at that latency. An SM keeps ``R`` CTAs resident (threads, registers,
32-CTA limit) and starts CTAs as slots free: its busy time is the largest of one CTA's
chain, ``CTAs/R x chain`` (latency-bound) and ``latency + CTAs x issue`` (issue-bound).
The L2/HBM bandwidth floor of the kernel still applies. Units: seconds, bytes.

Imports: config.gpu, config.gpu_stack, hw.gpu.kernel, hw.gpu.memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accelsim.config.gpu import GpuMachine
from accelsim.config.gpu_stack import RowStack
from accelsim.hw.gpu.kernel import MAX_CTAS_PER_SM, MAX_THREADS_PER_SM, CtaCost, Kernel
from accelsim.hw.gpu.memory import l2_hit_fraction, startup_s

VECTOR_BYTES = 16
"""Bytes one thread loads per instruction in the vectorised softmax kernels."""
LN_VECTOR_ELEMENTS = 4
"""``vectorized_layer_norm_kernel`` loads ``vec_size = 4`` elements per instruction (8 B in
bf16)."""
LN_UNROLL = 2
"""Loads in flight per thread in LayerNorm's statistics loop (its unroll depth): 2 fits the
calibration points far better than 1 or 4 (``validate_gpu.py --fit-rows`` with each)."""
REGISTERS_PER_SM = 65536
BLOCK_THREADS = 1024
REG_SOFTMAX_MAX_LOADS = 10
"""``cunn_SoftMaxForwardReg`` runs while ``ceil(cols / block) < 10`` (PyTorch's
``potential_register_count``); longer rows go to the shared-memory or 3-pass kernels."""
SMEM_PER_CTA = 48 * 1024
"""``sharedMemPerBlock``: the row must fit it for ``cunn_SoftMaxForwardSmem``."""
BASE_REGISTERS = 26
"""Registers of a row-kernel thread besides the row it holds (indexing, accumulators):
chosen so that ``cunn_SoftMaxForwardReg`` keeps 2 CTAs per SM up to 6 values per thread and
1 from 8 (the measured per-element step between 5120 and 8192 columns)."""


@dataclass(frozen=True, slots=True)
class RowShape:
    """How a library lays a row-wise op out: family, threads and rows per CTA, CTAs per SM,
    passes (each with its source: ``"mem"``, ``"l2"`` or ``"smem"``), block reductions,
    bytes per load instruction and how many loads a thread keeps in flight in a pass."""

    family: str
    threads: int
    rows_per_cta: int
    ctas_per_sm: int
    passes: tuple[str, ...]
    reductions: int
    load_bytes: int = VECTOR_BYTES
    in_flight: int = 1
    """Loads a thread keeps outstanding in a pass (0: all of them)."""
    exps: int = 0
    """``expf`` calls per element (softmax: 1 when the exp is kept, 2 when the epilogue
    recomputes it)."""
    mem_instr: float = 2.0
    """Load and store instructions per element (global and shared): 2 for one-element
    loads and stores, fewer for vectors."""
    computed_cols: int = 0
    """Elements per row the arithmetic runs on (0: the row's own): the warp kernel's
    unrolled loops cover the next power of two, predicating only the loads and stores."""


def _resident(threads: int, regs: int) -> int:
    by_regs = REGISTERS_PER_SM // (threads * max(32, 8 * math.ceil(regs / 8)))
    return max(1, min(MAX_CTAS_PER_SM, MAX_THREADS_PER_SM // threads, by_regs))


def _block_threads(cols: int, elem_bytes: int, rule: str) -> int:
    """Threads of a one-CTA-per-row softmax: ``cols`` = ``SoftMaxForward_getBlockSize``
    (``min(cols, 1024)`` rounded up to a warp, PyTorch 2.11); ``half_vectors`` =
    ``SoftMax_getBlockSize(ILP, cols)`` (PyTorch 2.0/2.1: the power of two at least half of
    ``min(cols / ILP, 1024)``, ILP the elements of a 16-byte vector, at least a warp)."""
    if rule == "cols":
        return min(BLOCK_THREADS, 32 * math.ceil(cols / 32))
    ilp = max(1, VECTOR_BYTES // elem_bytes)
    half = min(cols // ilp, BLOCK_THREADS) // (2 if ilp > 1 else 1)
    return max(32, 1 << max(0, math.ceil(math.log2(max(1, half)))))


def softmax_shape(cols: int, elem_bytes: int, rows: RowStack) -> RowShape:
    """The framework's softmax dispatch over the last dim (``host_softmax``), as the stack's
    ``rows`` section gives it (``configs/software/*.yaml``: PyTorch 2.11 in ``hopper.yaml``,
    2.0/2.1 in ``ampere.yaml``).

    * ``softmax_warp``: ``cols <= softmax_warp_max_cols`` and ``softmax_warp_max_bytes``
      (``softmax_warp_forward``): a warp per row (two when ``cols <= 128``), 4 warps per
      CTA, the row in registers (``pow2(cols) / 32`` per thread); scalar loads, all in
      flight; warp shuffles.
    * then the first of ``softmax_block_kernels`` that takes the row, a CTA of
      ``softmax_block_threads`` per row:
    * ``reg``: ``ceil(cols / threads) < 10`` (``cunn_SoftMaxForwardReg``): each thread
      ``ceil(cols / threads)`` scalar (one-element) loads in flight, the row in registers;
      two block reductions; the epilogue recomputes the exp.
    * ``smem``: the row fits 48 KiB of shared memory (``cunn_SoftMaxForwardSmem``):
      16-byte loads into shared memory, one pass from memory, two block reductions.
    * ``block``: longer rows (``cunn_SoftMaxForward``): three passes (max, sum of exp,
      write), the last two re-reading the row from L2.
    """
    warp_cols, warp_bytes = rows.softmax_warp_max_cols, rows.softmax_warp_max_bytes
    kernels, rule = rows.softmax_block_kernels, rows.softmax_block_threads
    if cols <= warp_cols and cols * elem_bytes <= warp_bytes:
        n_rows = 8 if cols <= 128 else 4
        pow2 = 1 << max(0, math.ceil(math.log2(cols)))
        return RowShape("softmax_warp", 128, n_rows,
                        _resident(128, BASE_REGISTERS + pow2 // 32),
                        ("mem",), 0, load_bytes=elem_bytes, in_flight=0, exps=1,
                        computed_cols=max(32, pow2))
    threads = _block_threads(cols, elem_bytes, rule)
    loads = math.ceil(cols / threads)
    if "reg" in kernels and loads < REG_SOFTMAX_MAX_LOADS:
        return RowShape("softmax_reg", threads, 1,
                        _resident(threads, BASE_REGISTERS + loads), ("mem",), 2,
                        load_bytes=elem_bytes, in_flight=0, exps=2)
    vec = max(1, VECTOR_BYTES // elem_bytes)
    if "smem" in kernels and cols * elem_bytes + 4 * threads // 32 <= SMEM_PER_CTA:
        # global load + shared store, two shared loads, global store: per vector
        return RowShape("softmax_smem", threads, 1, _resident(threads, BASE_REGISTERS),
                        ("mem", "smem", "smem"), 2, in_flight=0, exps=2, mem_instr=5 / vec)
    return RowShape("softmax_block", threads, 1, _resident(threads, BASE_REGISTERS),
                    ("mem", "l2", "l2"), 2, exps=2, mem_instr=4 / vec)


def layernorm_shape(cols: int, elem_bytes: int, rms: bool = False) -> RowShape:
    """``vectorized_layer_norm_kernel``: 128 threads per row, 4-element loads; a statistics
    pass whose loop consumes each load before the next, then a normalise pass re-reading
    the row (from L1 or L2) with gamma (and beta, not for RMSNorm) and storing y."""
    vectors = 4 if rms else 5  # x twice, gamma, (beta), y
    return RowShape("rmsnorm" if rms else "layernorm", 128, 1, _resident(128, 32),
                    ("mem", "l2"), 1, load_bytes=LN_VECTOR_ELEMENTS * elem_bytes,
                    in_flight=LN_UNROLL, mem_instr=vectors / LN_VECTOR_ELEMENTS)


def row_kernel(m: GpuMachine, name: str, shape: RowShape, rows: int, cols: int,
               elem_bytes: int, instr_per_element: float, extra_read_bytes: float = 0.0,
               sfu_per_element: float = 0.0, cta_instr: float = 0.0) -> Kernel:
    """The kernel of a row-wise op laid out as ``shape``; see the module doc."""
    c, mem = m.compute, m.memory
    x = rows * cols * elem_bytes
    hit = l2_hit_fraction(m, x + extra_read_bytes, x)
    clk = c.max_clock_hz
    lanes = c.simt_flop_per_clk_per_sm / 2.0
    ctas = math.ceil(rows / shape.rows_per_cta)
    elems = shape.rows_per_cta * cols
    computed = shape.rows_per_cta * (shape.computed_cols or cols)
    exp_instr = c.exp_instr or c.transcendental_instr
    # FP32 arithmetic (the family's math, expf, Welford combines) runs on the FP32 lanes;
    # loads, stores and per-thread index work only need an issue slot (sm_80: twice the
    # FP32 lanes; sm_90: as many)
    arith = (computed * (instr_per_element + shape.exps * exp_instr)
             + shape.threads * cta_instr)
    other = elems * shape.mem_instr * c.row_mem_instr + shape.threads * c.row_cta_instr
    issue = max((arith + other) / (c.issue_per_clk_per_sm * clk), arith / (lanes * clk))
    sfu = computed * (sfu_per_element + shape.exps) / (c.sfu_ops_per_clk_per_sm * clk)
    issue = max(issue, sfu)
    loads = math.ceil(elems * elem_bytes / (shape.rows_per_cta * shape.threads
                                            * shape.load_bytes))
    # a pass's loop keeps ``in_flight`` loads outstanding per thread (all of them when
    # the row sits in registers; the unroll depth of a loop that consumes what it loads)
    loads = math.ceil(loads / shape.in_flight) if shape.in_flight else 1
    hbm_lat = mem.loaded_hbm_latency_s or mem.hbm.latency_s
    mem_lat = hit * mem.l2_latency_s + (1.0 - hit) * hbm_lat
    # a re-read pass hits L1 while the rows of the SM's resident CTAs fit it, else L2; the
    # lines of it that L2 no longer holds (the rows every SM holds and the outputs they write
    # past L2's share: the residency rule of hw/gpu/memory.py) come from HBM again: HBM bytes
    # (the latency chain keeps L2's round trip, as fitted on the H200)
    per_sm = math.ceil(ctas / m.sm_count)
    units = min(ctas, m.sm_count)
    r_live = min(shape.ctas_per_sm, per_sm)
    resident = r_live * elems * elem_bytes + extra_read_bytes
    in_l1 = resident < m.compute.sm_l1_bytes
    live = units * r_live * elems * elem_bytes
    reread_hit = max(hit, l2_hit_fraction(m, live + extra_read_bytes, live))
    passes = tuple("l1" if p == "l2" and in_l1 else p for p in shape.passes)
    src = {"mem": mem_lat, "l2": mem.l2_latency_s, "l1": 0.0, "smem": 0.0}
    lat = sum(loads * src[p] for p in passes)
    lat += shape.reductions * c.block_reduce_s
    # a scheduler issues one instruction per clock only with enough warps to cover the
    # dependent-issue latency: with w warps it issues at min(1, w / row_dependent_issue)
    warps = shape.threads / 32 / 4  # per scheduler, one CTA
    r_eff = min(shape.ctas_per_sm, per_sm)
    alone = issue * max(1.0, c.row_dependent_issue / warps)
    issue_eff = issue * max(1.0, c.row_dependent_issue / (r_eff * warps))
    # an SM's CTAs start as slots free up: latency-bound, R CTAs overlap their chains;
    # issue-bound, the SM issues back to back once the first loads have returned
    chain = lat + alone
    lat_bound = max(1.0, per_sm / shape.ctas_per_sm) * chain
    issue_bound = lat + per_sm * issue_eff
    busy = max(chain, lat_bound, issue_bound)
    moved = 2 * x + extra_read_bytes
    reread = sum(1 for p in passes[1:] if p == "l2") * x
    cta = CtaCost(compute_s=busy, l2_bytes=(moved + reread) / units,
                  hbm_bytes=((1.0 - hit) * moved + (1.0 - reread_hit) * reread) / units,
                  parts={"alu_s": per_sm * issue_eff, "latency_s": lat_bound})
    meta = {"l2_hit": hit, "chunks": units, "family": shape.family, "threads": shape.threads,
            "ctas": ctas, "ctas_per_sm": shape.ctas_per_sm, "passes": len(shape.passes),
            "reread_from": "l1" if in_l1 else "l2", "reread_l2_hit": reread_hit}
    return Kernel(name=name, groups=((units, cta),), launch_s=m.host.kernel_launch_s,
                  startup_s=startup_s(m, hit), meta=meta)


def layernorm_kernel(m: GpuMachine, rows: int, cols: int, elem_bytes: int, rms: bool,
                     flops: float) -> Kernel:
    """Row-wise (RMS)LayerNorm: x read once from memory and once from L2, gamma (and beta)
    read, y written; ``compute.layernorm_instr_per_element`` thread instructions per element."""
    w = (1 if rms else 2) * cols * elem_bytes
    ipe = m.compute.rmsnorm_instr_per_element if rms else m.compute.layernorm_instr_per_element
    return row_kernel(m, "rmsnorm" if rms else "layernorm",
                      layernorm_shape(cols, elem_bytes, rms), rows, cols, elem_bytes, ipe,
                      extra_read_bytes=w, cta_instr=0.0 if rms else m.compute.welford_cta_instr)


def softmax_kernel(m: GpuMachine, rows: int, cols: int, elem_bytes: int,
                   flops: float) -> Kernel:
    """Row softmax: ``compute.softmax_instr_per_element`` thread instructions and one exp (on
    the SFU) per element, laid out by :func:`softmax_shape`."""
    return row_kernel(m, "softmax", softmax_shape(cols, elem_bytes, m.stack.rows), rows, cols,
                      elem_bytes,
                      m.compute.softmax_instr_per_element, sfu_per_element=1.0)
