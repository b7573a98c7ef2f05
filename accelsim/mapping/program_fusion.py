"""A compiler's fusion of a captured program: TorchInductor's pointwise/reduction fusion,
approximated.

``torch.compile`` (Inductor, default mode) runs a captured program's calls as far fewer
kernels than eager PyTorch: chains of pointwise calls, reductions with their pointwise
prologue and epilogue, casts and copies become one generated Triton kernel each, GEMMs, SDPA
and convolutions stay library calls ("extern kernels"), views launch nothing. A lowering table
with ``fuse: inductor`` (``configs/lowering/compiled.yaml``) runs a captured program through
:func:`fuse_sites` instead of call by call.

**This is an approximation of Inductor's scheduler, not a copy of it.** The rules implemented:

1. **Dataflow** through the recorded tensors (``TensorInfo.tensor_id``: the same tensor object
   has the same number wherever it appears): a call's input comes from the last call that
   wrote it (its producer, or an in-place writer: ``x[...] = y``, ``add_``, ``copy_``); a view
   passes its input's producer through. Programs written without ids (older files, Kineto
   traces) match an input to the latest output of equal shape, dtype and strides.
2. **Extern calls never fuse**: GEMMs (``linear``, ``matmul``, ``bmm``...), SDPA, convolution
   and any call the lowering does not model each launch their own kernels as the table says.
3. **Fusible calls**: pointwise, copies and casts, fills and creators, reductions,
   ``F.rms_norm``/``layer_norm``/``group_norm``, softmax, inference ``batch_norm``, embedding
   (a pointwise gather: Inductor lowers ``aten.embedding`` to an indirect load) and pooling.
   Views, module calls and allocations are host-only and vanish.
4. **Vertical fusion, greedily in program order**: a fusible call joins the groups of the
   fusible calls that produce its inputs (most recent first) when (a) the merged group has a
   common iteration space: the call's numel (a reduction: its input's and its output's) is one
   of the group's (a reduction's pointwise epilogue over the reduced rows fuses), (b) merging
   makes no cycle (no path group -> other kernel -> group: e.g. the residual add after the
   MLP's down projection does not join the norm that feeds that projection) and (c) the group
   stays within Inductor's ``config.max_fusion_size`` (64 calls). Horizontal fusion of
   independent calls, fusion into GEMM epilogues (``max_autotune``) and Inductor's
   recomputation of cheap producers in several consumers are not modelled.
5. A **windowed pool** (``max_pool2d``, ``avg_pool2d``) reads each input element several times:
   Inductor realizes its input (``config.realize_reads_threshold``), so it starts a group.
6. **Bytes of a fused kernel**: the group's inputs that come from outside it (each distinct
   tensor once; a view reads only its own elements; a broadcast operand its distinct elements;
   a gather only the rows it gathers) plus its outputs read by a call outside it, never read
   (program outputs) or written in place (KV-cache writes). Instructions: the members' own.
   Each fused kernel is one memory-bound stream kernel (``hw/gpu`` ``stream_kernel``, as the
   zoo's compiled entries), launched by the table's ``fuse_call`` host class.

Kernels launch in a topological order of the fused graph that keeps program order where it can.
Units: bytes (decimal), instructions.

Imports: config.lowering, errors, workload.program, workload.program_ops, mapping.gpu_lowering,
mapping.attention_pattern.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from accelsim.config.lowering import LoweringTable
from accelsim.errors import UnsupportedError
from accelsim.mapping.attention_pattern import replace_attention
from accelsim.mapping.gpu_lowering import LoweredCall, StreamWork, lower_sites
from accelsim.workload.program import DTYPE_BYTES, Call, Program, TensorInfo
from accelsim.workload.program_ops import CallSite, call_sites

MAX_FUSION_SIZE = 64
"""Most calls in one fused kernel: Inductor's ``config.max_fusion_size`` (torch 2.x)."""

FUSIBLE_OPS = frozenset({"rms_norm", "layer_norm", "group_norm", "softmax", "log_softmax",
                         "_softmax", "batch_norm", "embedding", "max_pool2d", "avg_pool2d",
                         "adaptive_avg_pool2d", "adaptive_max_pool2d"})
"""Calls with an op of their own that Inductor generates as fused kernels (not extern)."""

WINDOWED = frozenset({"max_pool2d", "avg_pool2d"})
"""Fusible calls that read each input element several times: their input is materialized."""

MUTATING = frozenset({"setitem", "copy_", "index_copy_", "index_put_", "scatter_",
                      "masked_scatter_"})
"""Calls that write their first input in place (besides any ``*_`` pointwise call)."""

GATHERS = frozenset({"embedding", "index", "index_select", "gather"})
"""Calls that read only the rows or elements they gather from their source."""

_SHAPE_WRITERS = 8
"""Writers kept per (shape, dtype, strides) in a program without tensor ids: a call reading
two tensors of one shape (``silu(g) * u``) takes the latest two."""

_NORMS = frozenset({"rms_norm", "layer_norm", "group_norm", "batch_norm"})
_SOFTMAX = frozenset({"softmax", "log_softmax", "_softmax"})


@dataclass
class FusedGroup:
    """One generated kernel: the call sites it fuses and the traffic of its stream."""

    members: list[int]
    """Indices of the fused call sites, in program order."""
    numels: set[int] = field(default_factory=set)
    """Iteration sizes the group runs over (elements; a reduction adds its reduced rows)."""
    read_bytes: float = 0.0
    """Bytes the kernel reads from outside the group (decimal)."""
    write_bytes: float = 0.0
    """Bytes it writes that outlive it (read outside, program outputs, in-place writes)."""
    simt_flops: float = 0.0
    """FP32-lane instructions of its members."""
    sfu_ops: float = 0.0
    """Transcendentals of its members."""
    elements: float = 0.0
    """Elements of its largest iteration space."""
    kernel_class: str = "elementwise"
    """Where its time goes (``config.lowering.KERNEL_CLASSES``)."""
    sfu_routine: str = ""
    """The software routine around its transcendentals (the majority's)."""


@dataclass(frozen=True, slots=True)
class _Read:
    tensor: TensorInfo
    key: Any
    producer: int | None
    source: TensorInfo | None
    """The producer's own output tensor (through views), None for a program input."""


def _key(t: TensorInfo) -> Any:
    if t.tensor_id is not None:
        return t.tensor_id
    return ("shape", t.shape, t.dtype, t.stride)


def _touched_bytes(t: TensorInfo) -> float:
    """Bytes of the distinct elements of ``t`` (a broadcast dimension, stride 0, counts once)."""
    n = math.prod(s for s, st in zip(t.shape, t.stride, strict=True) if st != 0 or s == 1) \
        if t.shape else 1
    return float(n * DTYPE_BYTES[t.dtype])


def _kind(site: CallSite) -> str:
    """``fusible``, ``extern`` (its own kernels) or ``host`` (launches nothing)."""
    if site.fn in FUSIBLE_OPS and site.op is not None:
        return "fusible"
    if site.op is None and not site.group:
        return "host" if site.modelled or site.key != "call.unmodelled" else "extern"
    if site.modelled and site.group in ("pointwise", "copy", "reduction"):
        return "fusible"
    if site.key == "call.unmodelled" or site.op is not None:
        return "extern"
    return "host"


def _real(t: TensorInfo | None, n: float) -> int:
    """``n`` elements of ``t``'s dtype counted as real numbers (a complex element is two: a
    ``view_as_complex`` changes the count, not the iteration)."""
    return int(n) * (2 if t is not None and t.dtype.startswith("complex") else 1)


def _numels(site: CallSite, call: Call) -> set[int]:
    first = call.inputs[0] if call.inputs else None
    out = call.outputs[0] if call.outputs else None
    if call.fn == "setitem" and len(call.inputs) > 1:
        out = call.inputs[1]
    if site.fn in _NORMS | _SOFTMAX or site.group == "reduction" or site.fn.startswith(
            ("adaptive", "max_pool", "avg_pool")):
        sizes = {_real(out, site.elements)}
        if first is not None:
            sizes.add(_real(first, first.elements))
        rows = getattr(site.op, "rows", None)
        if rows and site.fn in _NORMS | _SOFTMAX:
            sizes.add(int(rows))
        return {s for s in sizes if s > 0}
    return {_real(out, site.elements)} if site.elements > 0 else set()


def _dataflow(program: Program, sites: Sequence[CallSite], kinds: list[str]
              ) -> tuple[list[list[_Read]], list[list[int]],
                         dict[int, list[tuple[Any, TensorInfo]]]]:
    """Per call: its reads (with their producers), its producers, and per producing call the
    tensors it writes (key, tensor)."""
    writers: dict[Any, list[tuple[int | None, TensorInfo | None]]] = {}
    none: tuple[int | None, TensorInfo | None] = (None, None)

    def write(key: Any, value: tuple[int | None, TensorInfo | None]) -> None:
        if isinstance(key, tuple):  # no ids: keep the latest few writers of each shape
            writers.setdefault(key, []).append(value)
            del writers[key][:-_SHAPE_WRITERS]
        else:
            writers[key] = [value]

    def latest(key: Any, use: int = 0) -> tuple[int | None, TensorInfo | None]:
        found = writers.get(key)
        if not found:
            return none
        return found[-1 - use] if use < len(found) else found[-1]

    reads: list[list[_Read]] = []
    producers: list[list[int]] = []
    written: dict[int, list[tuple[Any, TensorInfo]]] = {}
    for i, call in enumerate(program.calls):
        mine: list[_Read] = []
        uses: dict[Any, int] = {}
        for pos, t in enumerate(call.inputs):
            if pos == 0 and (call.fn in ("setitem", "fill_", "zero_")):
                continue  # the destination is written, not read
            key = _key(t)
            p, src = none if t.param else latest(key, uses.get(key, 0))
            uses[key] = uses.get(key, 0) + 1
            mine.append(_Read(t, key, p, src))
        reads.append(mine)
        producers.append(sorted({r.producer for r in mine if r.producer is not None}))
        if kinds[i] == "host":  # a view: its outputs are its input's producer's
            base = latest(_key(call.inputs[0])) if call.inputs and not call.inputs[0].param \
                else none
            for t in call.outputs:
                write(_key(t), base)
            continue
        outs = written.setdefault(i, [])
        mutated = call.fn in MUTATING or call.fn.endswith("_")
        if mutated and call.inputs:
            dest = call.inputs[0]
            value = call.inputs[1] if call.fn == "setitem" and len(call.inputs) > 1 else dest
            outs.append((("mutated", _key(dest)), value))
            write(_key(dest), (i, dest))
        for t in call.outputs:
            if mutated and call.inputs and _key(t) == _key(call.inputs[0]):
                continue
            if t.view and call.inputs and any(_key(t) == _key(x) for x in call.inputs):
                continue
            outs.append((_key(t), t))
            write(_key(t), (i, t))
    return reads, producers, written


class _Groups:
    """Union of call sites into fused groups (a group is named by its first member)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.members: dict[int, list[int]] = {}
        self.numels: dict[int, set[int]] = {}

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def add(self, i: int, numels: set[int]) -> None:
        self.members[i] = [i]
        self.numels[i] = set(numels)

    def merge(self, a: int, b: int) -> int:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        root, other = min(ra, rb), max(ra, rb)
        self.parent[other] = root
        self.members[root] = sorted(self.members[root] + self.members.pop(other))
        self.numels[root] |= self.numels.pop(other)
        return root


def _cycle(members: list[int], groups: _Groups, producers: list[list[int]],
           fusible: list[bool]) -> bool:
    """Whether the set ``members`` reaches itself through a call (or group) outside it."""
    inside = set(members)
    lo = min(members)
    stack = [p for m in members for p in producers[m] if p not in inside and p > lo]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        around = groups.members.get(groups.find(x), [x]) if fusible[x] else [x]
        for y in around:
            for p in producers[y]:
                if p in inside:
                    return True
                if p > lo and p not in seen:
                    stack.append(p)
    return False


def fusion_groups(program: Program, sites: Sequence[CallSite], *,
                  max_size: int = MAX_FUSION_SIZE) -> tuple[list[FusedGroup], list[str]]:
    """The fused kernels of ``program`` (rules in the module doc) and each site's kind
    (``fusible``, ``extern``, ``host``)."""
    if len(sites) != len(program.calls):
        raise UnsupportedError("program_fusion: one call site per call expected")
    kinds = [_kind(s) for s in sites]
    fusible = [k == "fusible" for k in kinds]
    reads, producers, written = _dataflow(program, sites, kinds)
    groups = _Groups(len(sites))
    for i, site in enumerate(sites):
        if not fusible[i]:
            continue
        groups.add(i, _numels(site, program.calls[i]))
        if site.fn in WINDOWED:
            continue
        cands = sorted({groups.find(p) for p in producers[i] if fusible[p]},
                       key=lambda g: -max(groups.members[g]))
        for g in cands:
            root = groups.find(i)
            if groups.find(g) == root:
                continue
            if len(groups.members[root]) + len(groups.members[g]) > max_size:
                continue
            if not groups.numels[root] & groups.numels[g]:
                continue
            if _cycle(groups.members[root] + groups.members[g], groups, producers, fusible):
                continue
            groups.merge(root, g)
    consumers: dict[int, set[int]] = {}
    for i, rs in enumerate(reads):
        for r in rs:
            if r.producer is not None:
                consumers.setdefault(r.producer, set()).add(i)
    readers: dict[tuple[int, Any], set[int]] = {}
    for i, rs in enumerate(reads):
        for r in rs:
            if r.producer is not None and r.source is not None:
                readers.setdefault((r.producer, _key(r.source)), set()).add(i)
    out = []
    for root in sorted(groups.members):
        out.append(_group(groups.members[root], groups.numels[root], sites, program, reads,
                          written, readers, groups))
    return out, kinds


def _group(members: list[int], numels: set[int], sites: Sequence[CallSite], program: Program,
           reads: list[list[_Read]], written: dict[int, list[tuple[Any, TensorInfo]]],
           readers: dict[tuple[int, Any], set[int]], groups: _Groups) -> FusedGroup:
    inside = set(members)
    seen: set[Any] = set()
    g = FusedGroup(members=list(members), numels=set(numels))
    erf = other = 0.0
    for m in members:
        site, call = sites[m], program.calls[m]
        for pos, r in enumerate(reads[m]):
            if r.producer is not None and r.producer in inside:
                continue
            if r.key in seen:
                continue
            seen.add(r.key)
            nbytes = _touched_bytes(r.tensor)
            data_pos = 1 if site.fn == "embedding" else 0
            if site.fn in GATHERS and pos == data_pos and call.outputs:
                per = nbytes / max(1, r.tensor.elements)
                nbytes = min(nbytes, call.outputs[0].elements * per)
            g.read_bytes += nbytes
        for key, t in written.get(m, []):
            mutated = isinstance(key, tuple) and key and key[0] == "mutated"
            outside = readers.get((m, key), set()) - inside
            if mutated or outside or not readers.get((m, key)):
                g.write_bytes += t.nbytes
        n = site.elements
        flops = site.flop_per_element * n
        sfu = site.sfu_per_element * n
        if site.fn in FUSIBLE_OPS and site.op is not None:
            flops = float(getattr(site.op, "flops", 0) or 0)
            rows = float(getattr(site.op, "rows", 0) or 0)
            sfu = n if site.fn in _SOFTMAX else rows if site.fn in _NORMS else 0.0
        elif site.group == "reduction" and call.inputs:
            flops = float(call.inputs[0].elements)
        g.simt_flops += flops
        g.sfu_ops += sfu
        if site.sfu_routine == "erf":
            erf += sfu
        elif sfu:
            other += sfu
        g.elements = max(g.elements, n, *(float(x.elements) for x in call.inputs
                                           if not x.param))
    g.sfu_routine = "erf" if erf > other else "transcendental" if other else ""
    fns = {sites[m].fn for m in members}
    if fns & _SOFTMAX:
        g.kernel_class = "attention"
    elif fns & _NORMS or any(sites[m].group == "reduction" and sites[m].rows for m in members):
        g.kernel_class = "norm"
    elif fns & {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d"}:
        g.kernel_class = "pool"
    elif fns <= {"embedding"}:
        g.kernel_class = "embedding"
    elif all(sites[m].group == "copy" for m in members):
        g.kernel_class = "copy"
    return g


def _extern_calls(site: CallSite, reads: Sequence[_Read], fusible: Sequence[bool],
                  table: LoweringTable) -> list[LoweredCall]:
    """An extern call as the table lowers it, with the contiguous copies its GEMM needs
    (``matmul``'s folding copies, ``site.meta["operand_copies"]``) as the compiler makes them:
    a copy of an operand whose producer is a fused pointwise group is that group writing the
    layout the GEMM reads (no kernel of its own); any other (its producer a library call, a
    weight, a program input) stays a copy kernel, which the table launches at its
    ``fuse_call`` (``gpu_lowering._operand_copies``)."""
    copies = site.meta.get("operand_copies", ())
    if copies:
        where = site.meta.get("operand_copy_inputs", (None,) * len(copies))
        kept = tuple(c for c, pos in zip(copies, where, strict=True)
                     if pos is None or pos >= len(reads) or reads[pos].producer is None
                     or not fusible[reads[pos].producer])
        site = replace(site, meta={**site.meta, "operand_copies": kept})
    return lower_sites([site], table)


def fuse_sites(program: Program, sites: Sequence[CallSite], table: LoweringTable
               ) -> list[LoweredCall]:
    """The calls ``table``'s mode makes for a captured program when its compiler fuses
    (``table.fuse``): one ``table.fuse_call`` kernel per fused group, every extern call
    lowered by the table as it stands, in a topological order of the fused graph. The
    attention chains Inductor's pattern pass replaces are SDPA calls first
    (:mod:`accelsim.mapping.attention_pattern`)."""
    rewritten = replace_attention(program)
    if rewritten is not program:
        program, sites = rewritten, call_sites(rewritten)
    groups, kinds = fusion_groups(program, sites)
    node_of: dict[int, int] = {}
    for gi, g in enumerate(groups):
        for m in g.members:
            node_of[m] = ~gi  # groups are negative node ids
    reads, producers, _ = _dataflow(program, sites, kinds)
    fusible = [k == "fusible" for k in kinds]

    def node(i: int) -> int:
        return node_of.get(i, i)

    anchor = {node(i): i for i in reversed(range(len(sites)))}  # first site of each node
    deps: dict[int, set[int]] = {n: set() for n in anchor}
    for i, ps in enumerate(producers):
        for p in ps:
            if node(p) != node(i):
                deps[node(i)].add(node(p))
    users: dict[int, list[int]] = {n: [] for n in deps}
    for n, ds in deps.items():
        for d in ds:
            users[d].append(n)
    waiting = {n: len(ds) for n, ds in deps.items()}
    ready = [(anchor[n], n) for n, w in waiting.items() if w == 0]
    heapq.heapify(ready)
    out: list[LoweredCall] = []
    while ready:
        _, n = heapq.heappop(ready)
        if n >= 0:
            out.extend(_extern_calls(sites[n], reads[n], fusible, table))
        else:
            g = groups[~n]
            if g.read_bytes + g.write_bytes > 0:
                last = sites[g.members[-1]]
                name = last.name if len(g.members) == 1 else \
                    f"{sites[g.members[0]].name}+{len(g.members) - 1}"
                work = StreamWork(name=name, read_bytes=g.read_bytes, write_bytes=g.write_bytes,
                                  simt_flops=g.simt_flops, sfu_ops=g.sfu_ops,
                                  elements=g.elements, sfu_routine=g.sfu_routine)
                out.append(LoweredCall(op_index=g.members[-1], op_name=name, call=table.fuse_call,
                                       work=work, kernel_class=g.kernel_class, layer=last.layer))
        for u in users[n]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (anchor[u], u))
    if any(w > 0 for w in waiting.values()):
        raise UnsupportedError(f"program_fusion: the fused graph of {program.name} has a cycle")
    return out


__all__ = ["FUSIBLE_OPS", "MAX_FUSION_SIZE", "FusedGroup", "fuse_sites", "fusion_groups"]
