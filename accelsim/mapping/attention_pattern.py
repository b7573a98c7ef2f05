"""torch.compile's attention pattern: hand-written attention becomes one SDPA call.

Inductor rewrites the graph before it fuses anything: its attention pass
(``torch/_inductor/fx_passes/fuse_attention.py`` in PyTorch 2.x, described here, not copied)
matches the chain a plain program writes,

    scores = q @ k.transpose(-1, -2)     # matmul, 3-D or more
    scores = scores / c   (or * c)       # optional: a Python scalar
    probs = softmax(scores, dim=-1)
    out = probs @ v                      # matmul

when every intermediate has that one reader, and replaces it with
``scaled_dot_product_attention(q, k, v, scale=...)``: the GPU then runs the attention kernel
the library picks (cuDNN or flash on Hopper: ``hw/gpu/attention.py``) instead of two batched
GEMMs, their operand copies and a softmax. Run 13's compiled encoder
(``scripts/data/h200_compiled_programs_run13.json``, dev) launched exactly that: one
``cudnn_generated_fort_native_sdpa_*flash_fprop*`` kernel (and its workspace memset) per layer
where the program wrote ``q @ k.transpose``, ``softmax``, ``@ v``.

Matched here: the chain above, no mask, no dropout, equal head dims of q and v, tensor ids
recorded (a program file without them cannot show the single reader, so nothing is
replaced). A program file does not list what the program returns, so an intermediate that
is only returned (never read by another call) is not seen as a second reader. Inductor's
other patterns (an additive mask, dropout, a pre-scaled q) are not matched: they stay as
written. The rewrite keeps the program's length: the matched chain's later calls become
calls that launch nothing, so call indices (and the ops behind them) stay where they were.
The SDPA output is laid out as the fused kernels write it (heads inside sequence), so the
usual ``.transpose(1, 2).reshape(b, s, h * d)`` after it is a view, not the copy it was
after the values matmul (run 13: no copy kernel after the attention).

Imports: workload.program.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from accelsim.workload.program import Call, Program, TensorInfo

SCALE_CALLS = frozenset({"div", "truediv", "mul"})
"""A scalar scaling of the scores Inductor's patterns allow between the matmul and softmax."""

NOTHING = "detach"
"""The call a matched chain's later calls become: a view, launching nothing (its inputs and
outputs dropped, so it takes no part in the dataflow)."""


def _readers(calls: Sequence[Call]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for i, c in enumerate(calls):
        for t in c.inputs:
            if t.tensor_id is not None:
                out.setdefault(t.tensor_id, []).append(i)
    return out


def _only_reader(t: TensorInfo, readers: dict[int, list[int]]) -> int | None:
    if t.tensor_id is None:
        return None
    found = readers.get(t.tensor_id, [])
    return found[0] if len(found) == 1 else None


def _scalar_scale(c: Call) -> float | None:
    """The Python scalar a one-tensor ``div``/``mul`` applies (None: not such a call)."""
    if c.fn not in SCALE_CALLS or len(c.inputs) != 1:
        return None
    v = c.args.get("arg1", c.args.get("other"))
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _chain(calls: Sequence[Call], i: int, readers: dict[int, list[int]]
           ) -> tuple[list[int], float] | None:
    """The indices of the chain starting at the scores matmul ``i`` (scale, softmax, values
    matmul) and the scale it applies, or None."""
    a = calls[i]
    if a.fn != "matmul" or len(a.inputs) != 2 or len(a.outputs) != 1:
        return None
    q, kt = a.inputs
    if len(q.shape) < 3 or len(kt.shape) != len(q.shape) or q.shape[-1] != kt.shape[-2]:
        return None
    members: list[int] = []
    scale = 1.0
    j = _only_reader(a.outputs[0], readers)
    if j is None:
        return None
    s = _scalar_scale(calls[j])
    if s is not None and s != 0.0:
        scale = 1.0 / s if calls[j].fn != "mul" else s
        members.append(j)
        j = _only_reader(calls[j].outputs[0], readers) if calls[j].outputs else None
        if j is None:
            return None
    soft = calls[j]
    dim = soft.args.get("dim", soft.args.get("arg1"))
    if soft.fn != "softmax" or len(soft.outputs) != 1 or \
            dim not in (-1, len(soft.outputs[0].shape) - 1):
        return None
    members.append(j)
    j = _only_reader(soft.outputs[0], readers)
    if j is None:
        return None
    b = calls[j]
    if b.fn != "matmul" or len(b.inputs) != 2 or len(b.outputs) != 1 or \
            b.inputs[0].tensor_id != soft.outputs[0].tensor_id:
        return None
    v = b.inputs[1]
    if len(v.shape) != len(q.shape) or v.shape[-2] != kt.shape[-1] or v.shape[-1] != q.shape[-1]:
        return None
    members.append(j)
    return members, scale


def _keys_view(kt: TensorInfo) -> TensorInfo:
    """``k`` as SDPA takes it (``(..., seq_kv, dim)``) from the ``k.transpose(-1, -2)`` the
    program multiplied by: the same tensor (id), its last two dimensions swapped back."""
    shape = (*kt.shape[:-2], kt.shape[-1], kt.shape[-2])
    stride = (*kt.stride[:-2], kt.stride[-1], kt.stride[-2]) if len(kt.stride) == len(
        kt.shape) else kt.stride
    return dataclasses.replace(kt, shape=shape, stride=stride, view=True)


def _heads_last_layout(t: TensorInfo) -> TensorInfo:
    """SDPA's output as the fused kernels write it: ``(..., heads, seq, dim)`` in the
    storage order ``(..., seq, heads, dim)`` (flash, cuDNN and efficient attention all return
    the transpose of a ``(batch, seq, heads, dim)`` buffer)."""
    if len(t.shape) < 3:
        return t
    h, sq, d = t.shape[-3:]
    lead = t.shape[:-3]
    inner = (d, h * d, 1)
    stride, acc = [], sq * h * d
    for n in reversed(lead):
        stride.append(acc)
        acc *= n
    return dataclasses.replace(t, stride=(*reversed(stride), *inner))


def _merge_heads_views(calls: list[Call], out: TensorInfo,
                       readers: dict[int, list[int]]) -> None:
    """``o.transpose(1, 2).reshape(b, s, h * d)`` of an SDPA output ``o`` is a view (the
    transpose is the buffer's own order): the reshape's result, recorded as a copy of the
    matmul's contiguous output, is marked a view."""
    j = _only_reader(out, readers)
    if j is None or calls[j].fn != "transpose" or len(calls[j].outputs) != 1:
        return
    dims = {calls[j].args.get("dim0"), calls[j].args.get("dim1")}
    if len(out.shape) != 4 or dims not in ({1, 2}, {-3, -2}):
        return
    t = calls[j].outputs[0]
    r = _only_reader(t, readers)
    if r is None or calls[r].fn not in ("reshape", "view", "flatten") or \
            len(calls[r].outputs) != 1:
        return
    merged = calls[r].outputs[0]
    b, h, sq, d = out.shape
    if merged.shape in ((b, sq, h * d), (b * sq, h * d)):
        calls[r] = dataclasses.replace(calls[r], outputs=(dataclasses.replace(merged, view=True),))


def replace_attention(program: Program) -> Program:
    """``program`` with every matched attention chain replaced by one
    ``scaled_dot_product_attention`` call (the module doc), or ``program`` itself when
    nothing matches."""
    calls = list(program.calls)
    readers = _readers(calls)
    changed = False
    for i in range(len(calls)):
        found = _chain(calls, i, readers)
        if found is None:
            continue
        members, scale = found
        a, b = calls[i], calls[members[-1]]
        q, kt = a.inputs
        out = _heads_last_layout(b.outputs[0])
        calls[i] = Call(fn="scaled_dot_product_attention",
                        inputs=(q, _keys_view(kt), b.inputs[1]), outputs=(out,),
                        args={"scale": scale, "is_causal": False, "inductor_pattern": True},
                        module=a.module, qualname=a.qualname)
        for j in members:
            calls[j] = Call(fn=NOTHING, inputs=(), outputs=(), args={},
                            module=calls[j].module, qualname=calls[j].qualname)
        _merge_heads_views(calls, out, readers)
        changed = True
    return dataclasses.replace(program, calls=tuple(calls)) if changed else program


__all__ = ["replace_attention"]
