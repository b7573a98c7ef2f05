"""Operators -> GPU kernels: the one entry point :func:`plan_op`.

Imports: errors, config.gpu, workload.nn_ops, workload.ops, hw.gpu.*.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.config.gpu import OPERAND_BYTES, OUTPUT_BYTES, GpuMachine
from accelsim.errors import UnsupportedError
from accelsim.hw.gpu.attention import plan_attention
from accelsim.hw.gpu.cnn_glue import batchnorm_kernels, global_avgpool_kernel, maxpool_kernel
from accelsim.hw.gpu.conv import plan_conv2d
from accelsim.hw.gpu.gemm import plan_gemm
from accelsim.hw.gpu.kernel import MEMSET, Kernel, launched_kernels
from accelsim.hw.gpu.memory import elementwise_kernel
from accelsim.hw.gpu.rows import layernorm_kernel, softmax_kernel
from accelsim.hw.gpu.sparsity import pattern
from accelsim.workload.nn_ops import (
    ELEMENTWISE_FLOPS,
    ELEMENTWISE_INPUTS,
    Attention,
    BatchNorm2d,
    Elementwise,
    LayerNorm,
    Pool2d,
    Softmax,
)
from accelsim.workload.ops import Conv2d, Gemm, GroupedGemm


@dataclass(frozen=True, slots=True)
class OpPlan:
    """Kernels of one operator, its arithmetic and its compulsory bytes, and explanations."""

    op_kind: str
    precision: str
    kernels: tuple[Kernel, ...]
    flops: float
    bytes: float
    """Compulsory bytes: every input read once, every output written once."""
    explain: dict


def plan_op(m: GpuMachine, op: object, precision: str | None = None, *,
            sparsity: str | None = None, cold_cache: bool = False,
            cold_weight_fraction: float = 0.0) -> OpPlan:
    """Plan ``op`` (Gemm, Conv2d, Attention, Elementwise, LayerNorm, Softmax, BatchNorm2d,
    Pool2d) on ``m``.

    ``sparsity="2:4"``: the GEMM's weights are 2:4 structured-sparse
    (:mod:`accelsim.hw.gpu.sparsity`); ``bytes`` then counts the compressed weights (values
    and metadata) and ``flops`` stays the dense-equivalent count. ``cold_cache``: the op runs
    in a whole model's step: an attention's cached K/V come from HBM, not from L2, and a
    GEMM's streamed weights keep nothing in L2 between calls (without it, the op is repeated
    back to back: ``plan_gemm(back_to_back=True)``).
    ``cold_weight_fraction``: the share of a weight GEMM's (shared-weight ``Gemm``, a MoE
    layer's ``GroupedGemm``: every touched expert's weights) or a
    convolution's weights that a whole model's step finds outside L2 (read a step ago), read
    from HBM once (``hw/gpu/gemm.py`` ``plan_gemm``)."""
    prec = precision or getattr(op, "dtype", None) or "bf16"
    m.check_precision(prec)
    e = OPERAND_BYTES[prec]
    if pattern(sparsity) is not None and not isinstance(op, Gemm):
        raise UnsupportedError(f"{m.name}: {sparsity} sparsity is modelled for GEMMs only, not "
                               f"{type(op).__name__}")
    if isinstance(op, Gemm):
        plan = plan_gemm(m, op.m, op.n, op.k, prec, batch=op.batch,
                         shared_weights=op.shared_weights, sparsity=sparsity, bias=op.bias,
                         cold_weight_fraction=cold_weight_fraction
                         if op.shared_weights or isinstance(op, GroupedGemm) else 0.0,
                         back_to_back=not cold_cache)
        t = op.tensor_elements()
        wf = plan.kernels[0].meta.get("weight_fraction", 1.0)
        nbytes = (t["input"] + t["weight"] * wf) * e + t["output"] * OUTPUT_BYTES[prec]
        return OpPlan("gemm", prec, plan.kernels, op.flops, nbytes, _gemm_explain(plan))
    if isinstance(op, Conv2d):
        plan = plan_conv2d(m, op, prec, cold_weight_fraction=cold_weight_fraction)
        t = op.tensor_elements()
        nbytes = (t["input"] + t["weight"]) * e + t["output"] * OUTPUT_BYTES[prec]
        g = op.lower()
        ex = {"family": plan.family, "path": plan.path,
              "tile": list(plan.tile) if plan.tile else None, "split_k": plan.split_k,
              "ctas": plan.ctas, "waves": plan.waves, "aligned": plan.aligned,
              "l2_hit": plan.l2_hit, "kernels": len(plan.kernels), "gemm_m": g.m,
              "gemm_n": g.n, "gemm_k": g.k, "out_h": op.out_h, "out_w": op.out_w}
        return OpPlan("conv2d", prec, plan.kernels, op.flops, nbytes, ex)
    if isinstance(op, (BatchNorm2d, Pool2d)):
        return _plan_cnn_glue(m, op, prec)
    if isinstance(op, Attention):
        # fp32: the same tiling on CUDA cores (PyTorch runs its memory-efficient kernel, FMA
        # on the FP32 lanes); an estimate, never measured (explain: "estimated")
        kernels = plan_attention(m, op, prec, cold_cache=cold_cache)
        k = next(k for k in kernels if not k.meta.get(MEMSET))
        t = op.tensor_elements()
        nbytes = (t["input"] + t["kv"] + t["output"]) * e
        ex = {"path": k.meta["path"], "tile": list(k.meta["tile"]), "ctas": k.ctas,
              "waves": k.ctas / m.sm_count, "q_blocks": k.meta["q_blocks"],
              "l2_hit": k.meta["l2_hit"], "split_k": 1, "kv_splits": k.meta["kv_splits"],
              "kernels": launched_kernels(kernels)}
        if prec == "fp32":
            ex["estimated"] = "fp32 attention on CUDA cores: not measured on any GPU"
        return OpPlan("attention", prec, kernels, op.flops, nbytes, ex)
    if isinstance(op, Elementwise):
        k = elementwise_kernel(m, op.fn, op.elements, ELEMENTWISE_INPUTS[op.fn], e,
                               ELEMENTWISE_FLOPS[op.fn])
        nbytes = (ELEMENTWISE_INPUTS[op.fn] + 1) * op.elements * e
        return OpPlan(op.fn, prec, (k,), op.flops, nbytes, _stream_explain(k, m))
    if isinstance(op, LayerNorm):
        k = layernorm_kernel(m, op.rows, op.cols, e, op.rms, op.flops)
        t = op.tensor_elements()
        nbytes = (t["input"] + t["weight"] + t["output"]) * e
        return OpPlan("layernorm", prec, (k,), op.flops, nbytes, _stream_explain(k, m))
    if isinstance(op, Softmax):
        k = softmax_kernel(m, op.rows, op.cols, e, op.flops)
        nbytes = 2 * op.rows * op.cols * e
        return OpPlan("softmax", prec, (k,), op.flops, nbytes, _stream_explain(k, m))
    raise UnsupportedError(f"{m.name}: the GPU model has no cost for {type(op).__name__}")


def _plan_cnn_glue(m: GpuMachine, op: BatchNorm2d | Pool2d, prec: str) -> OpPlan:
    """BatchNorm (3 kernels), max-pool or global average pool (:mod:`.cnn_glue`)."""
    e = OPERAND_BYTES[prec]
    t = op.tensor_elements()
    nbytes = sum(t.values()) * e
    if isinstance(op, BatchNorm2d):
        ks = batchnorm_kernels(m, op.n, op.c, op.h, op.w, e)
        kind = "batchnorm"
    elif op.mode == "max":
        ks = (maxpool_kernel(m, op.n, op.c, op.h, op.w, op.r, op.stride, op.pad, e),)
        kind = "maxpool2d"
    elif op.mode == "global_avg":
        ks = (global_avgpool_kernel(m, op.n, op.c, op.h, op.w, e),)
        kind = "avgpool2d"
    else:
        raise UnsupportedError(f"{m.name}: the GPU model has no windowed average-pool kernel "
                               f"({op.name}: mode {op.mode!r}; 'max' and 'global_avg' are "
                               "modelled)")
    ex = _stream_explain(ks[-1], m)
    ex.update(path=ks[-1].meta["family"], kernels=len(ks))
    return OpPlan(kind, prec, ks, op.flops, nbytes, ex)


def _gemm_explain(plan) -> dict:
    ex = {"path": plan.path, "tile": list(plan.tile), "split_k": plan.split_k,
          "ctas": plan.ctas, "waves": plan.waves, "aligned": plan.aligned,
          "l2_hit": plan.l2_hit, "kernels": len(plan.kernels)}
    if plan.sparsity:
        ex.update(sparsity=plan.sparsity, density=plan.density,
                  weight_fraction=plan.kernels[0].meta["weight_fraction"])
    return ex


def _stream_explain(k: Kernel, m: GpuMachine) -> dict:
    ctas = k.meta.get("ctas", k.ctas)  # row kernels: CTAs of the grid, not SM work units
    return {"path": k.meta.get("family", "stream"), "ctas": ctas, "waves": ctas / m.sm_count,
            "l2_hit": k.meta["l2_hit"], "split_k": 1, "tile": None,
            **{key: v for key, v in k.meta.items()
               if key in ("passes", "fn", "threads", "ctas_per_sm")}}
