"""PURE CPU costs: a roofline with caches, per operator.

**GEMM** (and convolution as its im2col GEMM, the input read once as in an implicit GEMM):

* *Engine*: the matrix unit (AMX) if it runs the precision, else the SIMD FMA units.
  Compute seconds = MACs / (cores_used x MACs/cycle x clock x main-loop efficiency), with
  MACs padded to the engine's granularity (AMX: tile rows in M and N, a tile row of bytes in
  K; SIMD: the vector lanes in N).
* *Parallelism*: the output is cut into square blocks no larger than the L2 block (below),
  sized so that they fill the cores' waves best; blocks are dealt to the cores in waves, so a
  GEMM with fewer blocks than cores, or a last partial wave, leaves cores idle.
* *Traffic per level*: a level of capacity ``S`` (``usable_fraction`` of it planned) holds
  a ``t x t`` output block in the accumulator precision plus a ``t x t`` panel of each
  input, so ``t = sqrt(S_usable / (acc + 2 b))``. The level below then supplies
  ``b (M K ceil(N / t) + K N ceil(M / t))`` bytes of inputs plus the output once; a GEMM
  whose operands fit the level at once moves each operand once (compulsory traffic). L1 and
  L2 are per core (``t`` from one core's share), L3 is shared.
* *Time* = max(compute, DRAM, L3, L2, L1 transfer times) + one DRAM latency + one parallel
  region's fork/join cost. The level that sets the maximum is the ``bound``.

**Memory-bound ops** (elementwise, normalisation, softmax, embedding lookups) stream every
tensor element once from DRAM (cold, as a kernel benchmark runs them) and do their math on
the SIMD units at one operation per 32-bit lane per cycle x ``elementwise_efficiency``.

**Attention** runs as QK^T (batched GEMM), softmax, AV (:func:`accelsim.mapping.expand`'s
split is reproduced here without importing upward): the pieces' times add.

Action records (for energy): MACs at the precision, cache reads per level (bits), DRAM bits,
and the number of vector/tile instructions issued (level ``mac``, direction ``issue``).

Imports: units, errors, precision, config.cpu, workload.nn_ops, workload.ops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from accelsim.config.cpu import CacheLevel, CpuMachine
from accelsim.precision import ACCUMULATOR, PRECISION_BYTES
from accelsim.units import BITS_PER_BYTE, FLOP_PER_MAC
from accelsim.workload.nn_ops import Attention, Softmax
from accelsim.workload.ops import Conv2d, Gemm, GemmShape

ACC_BYTES = {p: PRECISION_BYTES[ACCUMULATOR[p]] for p in ("fp32", "bf16", "fp16", "int8")}
"""Accumulator bytes per output element while a block is computed (int32 or fp32)."""

LEVELS = ("compute", "l1", "l2", "l3", "dram")
"""Candidate bounds, innermost first."""


@dataclass(frozen=True, slots=True)
class CpuCost:
    """Seconds, bytes and the bound of one operator on a CPU."""

    name: str
    op_kind: str
    precision: str
    engine: str
    macs: int
    flops: int
    compute_s: float
    level_s: dict[str, float]
    level_bytes: dict[str, float]
    overhead_s: float
    cores_used: float
    instructions: float
    pieces: tuple = field(default=(), repr=False)

    @property
    def time_s(self) -> float:
        """Overlapped compute and transfers plus latency and fork/join, seconds."""
        return max(self.compute_s, *self.level_s.values()) + self.overhead_s

    @property
    def bound(self) -> str:
        """``compute`` or the memory level (``l1``, ``l2``, ``l3``, ``dram``) that takes longest."""
        times = {"compute": self.compute_s, **self.level_s}
        return max(LEVELS, key=lambda k: (times.get(k, 0.0), -LEVELS.index(k)))

    @property
    def dram_bytes(self) -> float:
        """Bytes read from and written to DRAM."""
        return self.level_bytes.get("dram", 0.0)


def precision_of(machine: CpuMachine, op: object) -> str:
    """The op's dtype, or the machine's default precision (tf32 runs as fp32)."""
    p = getattr(op, "dtype", None) or machine.default_precision
    return "fp32" if p == "tf32" else p


def simd_lanes(machine: CpuMachine, precision: str) -> int:
    """Elements of ``precision`` one SIMD register holds: register bits / element bits
    (AVX-512: 16 fp32, 32 bf16, 64 int8). One vector instruction does the work of this many
    scalar ones, so instruction fetch and decode shrink by the same factor."""
    machine.check_precision(precision)
    return int(machine.compute.simd.width_bytes // machine.word_bytes(precision))


def engine_for(machine: CpuMachine, precision: str) -> str:
    """``"matrix"`` if the matrix unit runs ``precision``, else ``"simd"``."""
    machine.check_precision(precision)
    mx = machine.compute.matrix
    return "matrix" if mx is not None and precision in mx.macs_per_cycle else "simd"


def block_edge(level: CacheLevel, share_cores: int, word_bytes: float, acc_bytes: float) -> int:
    """Edge ``t`` of the square output block a level holds (output block + two input panels)."""
    cap = level.capacity_bytes * level.usable_fraction
    if level.shared:
        cap /= max(1, share_cores)
    return max(1, int(math.sqrt(cap / (acc_bytes + 2.0 * word_bytes))))


def gemm_level_bytes(g: GemmShape, t: int, capacity: float, b: float, out_b: float,
                     input_factor: float = 1.0) -> float:
    """Bytes a level with ``t x t`` output blocks pulls from the level below for GEMM ``g``."""
    a = g.m * g.k * b * input_factor
    w = g.k * g.n * b
    c = g.m * g.n * out_b
    if a + w + c <= capacity:  # everything resident: compulsory traffic only
        return (a + w + c) * g.repeat
    reads = a * math.ceil(g.n / t) + w * math.ceil(g.m / t)
    return (reads + c) * g.repeat


def _gemm_cost(machine: CpuMachine, name: str, kind: str, g: GemmShape, precision: str,
               input_factor: float, shared_b: bool = True) -> CpuCost:
    comp = machine.compute
    mem = machine.memory
    engine = engine_for(machine, precision)
    b = machine.word_bytes(precision)
    out_b = b if precision != "int8" else 4.0
    acc = ACC_BYTES[precision]
    macs = g.macs
    if engine == "matrix":
        mx = comp.matrix
        rate = mx.macs_per_cycle[precision] * mx.efficiency
        clock = machine.matrix_clock_hz()
        kq = max(1, int(mx.tile_row_bytes // b))
        padded = (_ceil_to(g.m, mx.tile_rows) * _ceil_to(g.n, mx.tile_rows) * _ceil_to(g.k, kq)
                  * g.repeat)
        # one tile FMA does tile_rows x tile_rows x kq MACs
        instructions = padded / (mx.tile_rows * mx.tile_rows * kq)
    else:
        simd = comp.simd
        rate = simd.macs_per_cycle(precision) * simd.efficiency
        clock = comp.clock_hz
        lanes = max(1, int(simd.lanes32 * simd.macs_per_lane[precision]))
        padded = g.m * _ceil_to(g.n, simd.lanes32) * g.k * g.repeat
        instructions = padded / lanes
    # parallel blocks: L2-sized output blocks dealt to cores in waves
    t2 = parallel_block_edge(g, block_edge(mem.l2, comp.cores, b, acc), comp.cores,
                             _min_block(machine, engine))
    blocks = math.ceil(g.m / t2) * math.ceil(g.n / t2) * g.repeat
    waves = math.ceil(blocks / comp.cores)
    cores_used = blocks / waves
    compute_s = padded / (cores_used * rate * clock)
    # traffic per level
    level_bytes: dict[str, float] = {}
    level_s: dict[str, float] = {}
    l3_share = mem.l3.capacity_bytes * mem.l3.usable_fraction
    t3 = block_edge(mem.l3, 1, b, acc)
    level_bytes["dram"] = gemm_level_bytes(g, t3, l3_share, b, out_b, input_factor)
    level_s["dram"] = level_bytes["dram"] / mem.dram.sustained_bytes_per_s
    for lv_name, lv, below in (("l3", mem.l2, mem.l3), ("l2", mem.l1, mem.l2)):
        t = min(t2, block_edge(lv, comp.cores, b, acc))
        cap = lv.capacity_bytes * lv.usable_fraction * cores_used
        moved = gemm_level_bytes(g, t, cap, b, out_b, input_factor)
        level_bytes[lv_name] = moved
        per_core_bw = below.bytes_per_cycle_per_core * comp.clock_hz
        level_s[lv_name] = moved / (per_core_bw * cores_used)
    # registers <- L1: each MAC-block reads its operands once per register block (innermost)
    reg_bytes = (macs / max(1.0, _register_block(engine, machine, precision))) * b * 2
    level_bytes["l1"] = reg_bytes
    level_s["l1"] = reg_bytes / (mem.l1.bytes_per_cycle_per_core * comp.clock_hz * cores_used)
    overhead = mem.dram.latency_s + comp.parallel_overhead_s
    return CpuCost(name, kind, precision, engine, int(macs), FLOP_PER_MAC * int(macs), compute_s,
                   level_s, level_bytes, overhead, cores_used, instructions)


def parallel_block_edge(g: GemmShape, t_cache: int, cores: int, min_edge: int) -> int:
    """Edge of the square output blocks dealt to the cores.

    Candidates run from the L2 block down to the micro-kernel's ``min_edge`` in steps of
    ``min_edge``; the one whose blocks fill the cores' waves best wins (within 2 %, the
    largest, which moves the fewest bytes).
    """
    if t_cache <= min_edge:
        return max(1, t_cache)
    cands = list(range(t_cache, min_edge - 1, -min_edge))
    if cands[-1] != min_edge:
        cands.append(min_edge)

    def fill(t: int) -> float:
        blocks = math.ceil(g.m / t) * math.ceil(g.n / t) * g.repeat
        return blocks / (math.ceil(blocks / cores) * cores)

    best = max(fill(t) for t in cands)
    return next(t for t in cands if fill(t) >= 0.98 * best)


def _min_block(machine: CpuMachine, engine: str) -> int:
    """Smallest output block one core works on: a 2 x 2 group of tiles, or a SIMD micro-kernel."""
    if engine == "matrix":
        return 2 * machine.compute.matrix.tile_rows
    return 2 * machine.compute.simd.lanes32


def _register_block(engine: str, machine: CpuMachine, precision: str) -> float:
    """MACs done per operand element loaded from L1 (register/tile blocking reuse)."""
    if engine == "matrix":
        # a 2x2 arrangement of 16-row accumulator tiles reuses each loaded A and B tile twice;
        # each loaded element feeds tile_rows MACs per use
        return 2.0 * machine.compute.matrix.tile_rows
    # SIMD micro-kernel: a register block of ~ 6 rows x 2 vectors reuses each load ~ 8 times
    return 8.0


def _ceil_to(x: int, q: int) -> int:
    return int(math.ceil(x / q) * q)


def vector_cost(machine: CpuMachine, op: object, precision: str | None = None) -> CpuCost:
    """Cost of a memory-bound op streamed from DRAM (see the module docstring)."""
    precision = precision or precision_of(machine, op)
    machine.check_precision(precision)
    comp = machine.compute
    b = machine.word_bytes(precision)
    el = op.tensor_elements()
    if getattr(op, "kind", "") == "embedding":
        el = {k: v for k, v in el.items() if k != "weight"}
    moved = float(sum(el.values())) * b
    ops_per_s = (comp.cores * comp.simd.fma_units * comp.simd.lanes32 * comp.clock_hz
                 * comp.simd.elementwise_efficiency)
    flops = int(getattr(op, "flops", 0))
    compute_s = flops / ops_per_s
    dram_s = moved / machine.memory.dram.sustained_bytes_per_s
    instructions = flops / comp.simd.lanes32 if flops else moved / comp.simd.width_bytes
    overhead = machine.memory.dram.latency_s + comp.parallel_overhead_s
    return CpuCost(getattr(op, "name", "op"), getattr(op, "kind", "vector"), precision, "simd",
                   0, flops, compute_s, {"dram": dram_s}, {"dram": moved}, overhead,
                   float(comp.cores), instructions)


def op_cost(machine: CpuMachine, op: object) -> CpuCost:
    """Cost of any supported operator on ``machine``."""
    precision = precision_of(machine, op)
    if isinstance(op, Attention):
        return _attention_cost(machine, op, precision)
    if isinstance(op, Conv2d):
        g = op.lower()
        raw = op.n * (op.c // op.groups) * op.h * op.w
        factor = min(1.0, raw / (g.m * g.k))
        return _gemm_cost(machine, op.name, op.kind, g, precision, factor)
    if isinstance(op, Gemm):
        return _gemm_cost(machine, op.name, op.kind, op.lower(), precision, 1.0)
    if hasattr(op, "tensor_elements"):
        return vector_cost(machine, op, precision)
    from accelsim.errors import UnsupportedError

    raise UnsupportedError(f"{getattr(op, 'name', op)}: operator kind "
                           f"'{getattr(op, 'kind', type(op).__name__)}' has no CPU model")


def _attention_cost(machine: CpuMachine, op: Attention, precision: str) -> CpuCost:
    kv = max(1, round(op.seq_kv * op.score_fraction))
    bh = op.batch * op.heads
    qk = Gemm(name=f"{op.name}.qk", m=op.seq_q, n=kv, k=op.head_dim, batch=bh,
              shared_weights=False, dtype=precision)
    sm = Softmax(name=f"{op.name}.softmax", rows=bh * op.seq_q, cols=kv, dtype=precision)
    av = Gemm(name=f"{op.name}.av", m=op.seq_q, n=op.head_dim, k=kv, batch=bh,
              shared_weights=False, dtype=precision)
    pieces = (op_cost(machine, qk), vector_cost(machine, sm, precision), op_cost(machine, av))
    return combine(op.name, op.kind, pieces)


def combine(name: str, kind: str, pieces: tuple[CpuCost, ...]) -> CpuCost:
    """One cost for pieces that run one after another: times add (the sum is in ``compute_s``
    and ``level_s`` carries each level's summed busy time); the bound is the largest piece's."""
    total = sum(p.time_s for p in pieces)
    biggest = max(pieces, key=lambda p: p.time_s)
    level_bytes: dict[str, float] = {}
    level_busy: dict[str, float] = {}
    for p in pieces:
        for k, v in p.level_bytes.items():
            level_bytes[k] = level_bytes.get(k, 0.0) + v
        for k, v in p.level_s.items():
            level_busy[k] = level_busy.get(k, 0.0) + v
    # keep total time right: overhead absorbs what max(compute, levels) does not cover
    inner = max(sum(p.compute_s for p in pieces), *level_busy.values())
    return CpuCost(name, kind, biggest.precision, biggest.engine,
                   sum(p.macs for p in pieces), sum(p.flops for p in pieces),
                   sum(p.compute_s for p in pieces), level_busy, level_bytes,
                   max(0.0, total - inner), sum(p.cores_used * p.time_s for p in pieces) / total,
                   sum(p.instructions for p in pieces), pieces)


def cost_actions(machine: CpuMachine, cost: CpuCost) -> list[dict]:
    """Action records of one op: MACs, cache reads per level, DRAM bits, instructions issued."""
    recs = []
    leaves = cost.pieces or (cost,)
    for p in leaves:
        if p.macs:
            recs.append(_rec(cost.name, "mac", "-", "compute", p.macs, 0.0, p.precision))
        bits = BITS_PER_BYTE
        word = {"l1": 512, "l2": 512, "l3": 512}
        cap = {"l1": machine.memory.l1.capacity_bytes, "l2": machine.memory.l2.capacity_bytes,
               "l3": machine.memory.l3.capacity_bytes}
        # bytes moved *out of* a level: l1 -> registers, l2 -> l1 (key l2), l3 -> l2 (key l3)
        for key in ("l1", "l2", "l3"):
            n = p.level_bytes.get(key, 0.0)
            if n:
                recs.append({**_rec(cost.name, "sram", "-", "read", n * bits / word[key],
                                    word[key], p.precision), "capacity_bytes": cap[key]})
        n = p.level_bytes.get("dram", 0.0)
        if n:
            recs.append({**_rec(cost.name, "dram", "-", "read", n * bits / 512, 512, p.precision),
                         "technology": machine.memory.dram.technology})
        recs.append(_rec(cost.name, "mac", "-", "issue", p.instructions, 0.0, p.precision))
    return recs


def _rec(layer: str, level: str, operand: str, direction: str, count: float, word_bits: float,
         precision: str) -> dict:
    return {"layer": layer, "level": level, "operand": operand, "direction": direction,
            "count": float(count), "bits": float(count * word_bits), "precision": precision,
            "technology": "", "capacity_bytes": 0.0, "word_bits": float(word_bits)}
