"""Seed cases about machine features and numerics: CPU SIMD lanes (:mod:`accelsim.hw.cpu`),
the tensor-core alignment contract and 2:4 structured sparsity (:mod:`accelsim.hw.gpu`),
floating-point formats (:mod:`accelsim.workload.dtypes`), and the training-memory and
component-breakdown cases of the workload passes (:mod:`accelsim.workload.passes.training`,
:func:`accelsim.workload.graph.breakdown`).

Imports: analysis.mapspace, config.cpu, config.gpu, hw.cpu, hw.gpu.*, workload.*,
validation.seed_cases, validation.seed_cases_roofline.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from accelsim.validation.seed_cases import CaseContext, ModelMissing, case
from accelsim.validation.seed_cases_roofline import load_config
from accelsim.workload.ops import Gemm

# --- CPU SIMD -------------------------------------------------------------------------------

@case("SIMD512", tag="model")
def _simd512(c: CaseContext) -> None:
    from accelsim.config.cpu import CPU_PRECISIONS
    from accelsim.hw.cpu import op_cost, simd_lanes

    i = c.inputs
    cpu = load_config("spr_cpu")
    if cpu.compute.simd.width_bytes * 8 != i["register_bits"]:
        raise ModelMissing(f"a CPU config with {i['register_bits']}-bit SIMD registers")
    prec = next(p for p in CPU_PRECISIONS if cpu.word_bytes(p) * 8 == i["element_bits"])
    via = f"hw.cpu simd_lanes(spr_cpu, {prec}) (AVX-512 register bits / element bits)"
    c.check("lanes", simd_lanes(cpu, prec), via=via)
    # fetch/decode: FMA instructions the SIMD engine issues for a GEMM vs one scalar FMA per MAC
    g = Gemm(name="g", m=64, n=64, k=64, dtype=prec)
    cost = op_cost(cpu, g)
    c.check("fetch_decode_reduction_x", cost.macs / cost.instructions,
            via=f"hw.cpu op_cost ({cost.engine} engine): MACs per issued FMA instruction")
    c.skip("SVE_width_bits", "the architectural SVE range (128-2048 bits); no Arm/SVE CPU config")
    c.skip("Cray1_vector_elements",
           "historical (Cray-1 vector registers); no vector-machine config")


# --- tensor-core contracts ------------------------------------------------------------------

@case("TC-ALIGN", tag="model")
def _tcalign(c: CaseContext) -> None:
    from accelsim.config.gpu import OPERAND_BYTES
    from accelsim.hw.gpu.gemm import alignment_elements

    via = "hw.gpu.gemm alignment_elements (the rule plan_gemm uses to pick the tensor-core path)"
    c.check("align_multiple", [alignment_elements("fp16"), alignment_elements("int8")], via=via,
            note="fp16/bf16 and int8/fp8 elements per 16-byte row")
    row = {p: alignment_elements(p) * OPERAND_BYTES[p] for p in ("fp16", "bf16", "int8", "fp8")}
    c.check("nhwc_transaction_B", max(row.values()) if len(set(row.values())) == 1 else None,
            via="hw.gpu.conv: NHWC channel count aligned to alignment_elements x element bytes")
    c.skip("npu_channel_align_B", "mobile-NPU alignment; the NPU model (systolic, Ascend-class) "
                                  "pads partial folds instead of requiring aligned channels")


@case("SPARSE-24", tag="model")
def _sparse24(c: CaseContext) -> None:
    from accelsim.hw.gpu import plan_op
    from accelsim.hw.gpu.kernel import estimate_s
    from accelsim.hw.gpu.sparsity import pattern, sparse_peak_flops

    i = c.inputs
    pat = pattern(f"{i['N']}:{i['M']}")
    if pat.index_bits != i["index_bits_per_value"]:
        raise ModelMissing(f"a {pat.name} pattern with {i['index_bits_per_value']}-bit indices")
    via = f"hw.gpu.sparsity Pattern {pat.name}"
    c.check("density", pat.density, via=via)
    c.check("metadata_bits_per_block", pat.metadata_bits_per_block, via=via)
    gpus = {n: load_config(n) for n in ("a100", "h200")}
    h200 = gpus["h200"]
    # a batch-1 GEMV streams its weights: simulated HBM bytes, sparse vs dense
    gemv = Gemm(name="gemv", m=1, k=8192, n=8192, dtype="fp16")
    hbm = [sum(k.hbm_bytes for k in plan_op(h200, gemv, sparsity=s).kernels)
           for s in (None, pat.name)]
    c.check("weight_bandwidth_vs_dense", pat.value_fraction("fp16"),
            via=f"{via} value_fraction, fp16 payload; with the 2-bit indices "
                f"{pat.weight_fraction('fp16'):.4f}, and the sparse GEMM model's h200 batch-1 "
                f"GEMV 8192^2 moves {hbm[1] / hbm[0]:.3f}x the dense HBM bytes",
            note="the text's 'halved' is the payload; metadata adds 1 bit per weight")
    ratio = {n: sparse_peak_flops(m, "fp16", pat.name) / m.peak_flops("fp16")
             for n, m in gpus.items()}
    big = Gemm(name="g", m=8192, n=8192, k=8192, dtype="fp16")
    t = [sum(estimate_s(k, h200) for k in plan_op(h200, big, sparsity=s).kernels)
         for s in (None, pat.name)]
    c.check("peak_tensor_speedup_x", ratio["h200"] if len(set(ratio.values())) == 1 else None,
            via="hw.gpu.sparsity sparse_peak_flops / dense peak (A100, H200 configs); the "
                f"sparse GEMM model's h200 fp16 8192^3 GEMM runs {t[0] / t[1]:.2f}x faster")


# --- numerics -------------------------------------------------------------------------------

@case("FP-FORMATS", tag="model")
def _fpformats(c: CaseContext) -> None:
    from accelsim.workload.dtypes import float_format

    fp16, bf16 = float_format("fp16"), float_format("bf16")
    via = "workload.dtypes FloatFormat (IEEE 754 layout)"
    c.check("fp16_min_normal", fp16.min_normal, via=via + ": 2^(1 - bias)")
    c.check("fp16_max", fp16.max_finite, via=via + ": (2 - 2^-m) x 2^bias")
    c.check("fp16_exp_bits", fp16.exp_bits, via=via)
    c.check("fp16_mant_bits", fp16.mant_bits, via=via)
    c.check("bf16_exp_bits", bf16.exp_bits, via=via)
    c.check("bf16_mant_bits", bf16.mant_bits, via=via)


# --- workload passes ------------------------------------------------------------------------

def _order(exponent: float) -> str:
    """Big-O label of a growth exponent rounded to the nearest half."""
    half = round(exponent * 2) / 2
    return {0.5: "O(sqrt(n))", 1.0: "O(n)"}.get(half, f"O(n^{exponent:.2f})")


@case("S002-CKPT", tag="model")
def _s002ckpt(c: CaseContext) -> None:
    from accelsim.workload.models.transformer import GPT2_SMALL, build_transformer
    from accelsim.workload.passes.training import training_memory

    layers = (16, 64, 256)

    def slope(checkpoint: str | None) -> float:
        acts = [training_memory(build_transformer(replace(GPT2_SMALL, layers=n), batch=1,
                                                  seq=256, mode="prefill", dtype="bf16"),
                                checkpoint=checkpoint).activations_bytes for n in layers]
        return float(np.polyfit(np.log(layers), np.log(acts), 1)[0])

    base, ckpt = slope(None), slope("sqrt")
    via = ("workload.passes.training_memory, GPT-2 small at 16/64/256 layers: log-log slope "
           "of activation bytes {:.2f}")
    c.check("activation_memory_order", _order(ckpt), via=via.format(ckpt) + " (sqrt checkpoints)")
    c.check("baseline_order", _order(base), via=via.format(base) + " (all kept)")


@case("S004-TFMR", tag="model")
def _s004tfmr(c: CaseContext) -> None:
    from accelsim.workload.graph import breakdown
    from accelsim.workload.models import zoo

    df = breakdown(zoo.get("bert_base", seq=512))
    via = "workload.graph breakdown (FLOP share), zoo bert_base seq 512"
    c.check("attention_share", float(df.loc["attention", "flop_share"]), via=via, within=True)
    c.check("ffn_share", float(df.loc["ffn", "flop_share"]), via=via, within=True)
    flops, nbytes = float(df.loc["norm", "flop_share"]), float(df.loc["norm", "byte_share"])
    c.skip("norm_share", f"a time share of bandwidth-bound reductions: the norms' FLOP share is "
                         f"{flops:.1%} and their byte share {nbytes:.1%} (breakdown); their time "
                         "share depends on the machine and the batch")


# --- tiling ---------------------------------------------------------------------------------

@case("TILE-REUSE", tag="model")
def _tilereuse(c: CaseContext) -> None:
    from accelsim.analysis import mapspace as ms

    # Algorithm 1 on a small GEMM with distinct tile sizes: tile loops (i0, j0, k0) outside,
    # element loops (i, j, k) inside; each operand has a buffer of exactly one tile
    tiles = {"T_M": 2, "T_N": 3, "T_K": 4}
    trips = {"M": 3, "N": 2, "K": 2}  # tiles per dimension
    bounds = {"i0": trips["M"], "j0": trips["N"], "k0": trips["K"],
              "i": tiles["T_M"], "j": tiles["T_N"], "k": tiles["T_K"]}
    order = ["i0", "j0", "k0", "i", "j", "k"]
    macs = math.prod(bounds.values())
    a = ms.operand_fetches(order, bounds, ["i0", "k0", "i", "k"], tiles["T_M"] * tiles["T_K"])
    b = ms.operand_fetches(order, bounds, ["k0", "j0", "k", "j"], tiles["T_K"] * tiles["T_N"])
    by_value = {v: k for k, v in tiles.items()}
    via = ("mapspace.operand_fetches (LRU walk of the blocked loop nest, one-tile buffers, "
           "T_M=2, T_N=3, T_K=4): MACs per fetched word = {}")
    c.check("A_reuse", by_value.get(macs / a, f"{macs / a:g}"), via=via.format(f"{macs / a:g}"))
    c.check("B_reuse", by_value.get(macs / b, f"{macs / b:g}"), via=via.format(f"{macs / b:g}"))
