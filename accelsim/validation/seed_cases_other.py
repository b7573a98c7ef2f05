"""Seed cases of kinds ``fusion`` and ``other``: computed with the fusion and memory passes,
energy tables and operator counting; and cases no model reproduces.

Imports: analysis.mapspace, analysis.roofline, config.energy, workload.*, validation.seed_cases.
"""

from __future__ import annotations

from accelsim.analysis import mapspace as ms
from accelsim.analysis import roofline as rl
from accelsim.validation.seed_cases import CaseContext, case, not_reproducible
from accelsim.workload.graph import GraphBuilder, ModelGraph
from accelsim.workload.nn_ops import Attention, Elementwise, Softmax
from accelsim.workload.ops import Gemm

M = 1e6
G = 1e9


def _dram_word_pj(table: str, technology: str = "DDR3", bits: int = 32) -> float:
    """pJ of one ``bits``-bit DRAM word from energy table ``table``."""
    from accelsim.config.energy import load_energy_table

    return load_energy_table(table).require(f"dram.{technology}") * bits


def relu_bn_affine(inputs: dict) -> ModelGraph:
    """Tables 19/20's chain: ReLU -> BatchNorm (frozen: a scale) -> affine (a scale) on one
    fp32 tensor of ``inputs["shape"]`` (rows, cols), each op reading the previous output."""
    rows, cols = inputs["shape"]
    b = GraphBuilder("relu_bn_affine", "fp32")
    x = b.tensor("x", rows * cols)
    for name, fn in (("relu", "relu"), ("bn", "scale"), ("affine", "scale")):
        x = b.add(Elementwise(name=name, rows=rows, cols=cols, fn=fn, dtype="fp32"), [x],
                  component="other")
    return b.build()


@case("T19-T20", tag="model")
def _t1920(c: CaseContext) -> None:
    from accelsim.workload.passes.fusion import fuse
    from accelsim.workload.passes.memory import plan_memory

    graph = relu_bn_affine(c.inputs)
    fr = fuse(graph)
    via = "workload.passes fuse + plan_memory"
    c.check("tensor_MB", graph.tensors["x"].bytes / M, via=via)
    c.check("footprint_naive_MB", plan_memory(graph).naive_bytes / M, via=via)
    c.check("traffic_naive_MB", fr.bytes_before / M, via=via)
    c.check("traffic_fused_MB", fr.bytes_after / M, via=via)
    c.check("traffic_reduction_x", fr.bytes_before / fr.bytes_after, via=via)
    word = _dram_word_pj("seed_napkin")
    c.check("energy_naive_mJ_derived_at_640pJ_per_32b", fr.bytes_before / 4 * word * 1e-9,
            via=via + " x seed_napkin DRAM word")
    c.check("energy_fused_mJ_derived", fr.bytes_after / 4 * word * 1e-9, via=via)


@case("FA-TRAFFIC", tag="law")
def _fatraffic(c: CaseContext) -> None:
    i = c.inputs
    rows = i["batch"] * i["heads"] * i["seq"]
    sm = Softmax(name="softmax", rows=rows, cols=i["seq"])
    tr = rl.op_traffic(sm, i["dtype_bytes"])
    via = "Softmax op tensor sizes (the score matrix) + op_traffic"
    c.check("score_tensor_MB_derived", tr["input"] / M, via=via)
    c.check("softmax_traffic_avoided_MB_derived", tr["total"] / M, via=via)
    d = 64
    attn = Attention(name="attn", batch=i["batch"], heads=i["heads"], seq_q=i["seq"],
                     seq_kv=i["seq"], head_dim=d)
    qk = Gemm(name="qk", m=i["seq"], k=d, n=i["seq"], batch=i["batch"] * i["heads"],
              shared_weights=False)
    unfused = 2 * qk.flops + sm.flops
    c.check("FLOPs_change", "none" if attn.flops == unfused else f"{attn.flops - unfused:+d}",
            via="Attention (fused) vs QK^T + softmax + AV FLOPs")


# --- other ------------------------------------------------------------------------------

@case("FC-MAC", tag="law")
def _fcmac(c: CaseContext) -> None:
    i = c.inputs
    op = Gemm(name="fc", m=i["batch"], k=i["d_in"], n=i["d_out"])
    via = "Gemm op counts"
    c.check("MACs_M", op.macs / M, via=via, printed=True, note="4,194,304 printed as 4.2 M")
    c.check("MACs_exact", op.macs, via=via)
    c.check("params", op.tensor_elements()["weight"], via=via)
    c.check("vector_chunks", ms.EdgeTiles(op.macs, i["vector_lanes"]).tiles,
            via="mapspace.EdgeTiles over the vector lanes")
    c.check("MACs_per_sample", Gemm(name="fc1", m=1, k=i["d_in"], n=i["d_out"]).macs, via=via)


@case("MMA", tag="law")
def _mma(c: CaseContext) -> None:
    i = c.inputs
    t, s = i["tile"], i["mma_shape"]
    via = "Gemm op counts"
    c.check("MACs_16x16x16", Gemm(name="t", m=t[0], n=t[1], k=t[2]).macs, via=via)
    mma = Gemm(name="mma", m=s["M"], n=s["N"], k=s["K"])
    c.check("MACs_m16n8k16", mma.macs, via=via)
    c.check("fma_per_thread_replaced", mma.macs / i["warp_threads"], via=via)


@case("QKT-SPEED", tag="law")
def _qkt(c: CaseContext) -> None:
    i = c.inputs
    op = Gemm(name="qk", m=i["S"], k=i["d"], n=i["S"])
    via = "Gemm op counts + iron-law compute term"
    c.check("MACs_M", op.macs / M, via=via)
    c.check("FLOPs_M", op.flops / M, via=via)
    t = rl.compute_time(op.flops, i["scalar_clock_GHz"] * G * i["scalar_FLOP_per_cycle"])
    c.check("t_scalar_ms", t * 1e3, via=via)
    c.check("speedup_x", t / (i["tensor_core_time_ms"] * 1e-3), via=via)


not_reproducible("SPLITK", "kernel-selection policy: the GPU model picks tile and split-K by "
                           "predicted time, with no workspace limit or memory-pressure fallback; "
                           "in it a batch-64 GEMM of a 4096-8192 layer is still memory-bound "
                           "(compute-bound from batch ~256), so the text's threshold is not a "
                           "model output")
not_reproducible("COALESCE", "accelsim has no warp-coalescing model (the GPU model moves whole "
                             "CTA tiles; naive per-thread kernels are not modelled)")
not_reproducible("LAT-OPS", "qualitative latency classes")
not_reproducible("T5-DATAFLOW", "qualitative dataflow descriptions")
not_reproducible("TDP-A100", "board TDP is a datasheet rating, not a model output: the a100 "
                             "config carries the SXM TDP (400 W) as the bound its predicted power "
                             "is held to (accelsim/api/power.py), and there is no A100 PCIe config")
not_reproducible("T6-PRECISION", "Table 6 lists every precision of Volta/Turing/Ampere; the GPU "
                                 "configs list only those accelsim models (no Turing, no "
                                 "fp64/int4 tensor paths)")
