"""Seed cases of kinds ``roofline`` and ``amdahl``: computed with the roofline laws, operator
FLOP/byte counting, the machine configs and Amdahl's law.

Imports: precision, analysis.roofline, config.registry, devices, workload.nn_ops, workload.ops,
workload.readers, validation.seed_cases.
"""

from __future__ import annotations

import math
from typing import Any

from accelsim.analysis import roofline as rl
from accelsim.devices import machine_roofs
from accelsim.precision import PRECISION_BYTES
from accelsim.validation.seed_cases import CaseContext, case
from accelsim.workload.nn_ops import Elementwise, Embedding, LayerNorm, Softmax
from accelsim.workload.ops import Conv2d, Gemm

T = 1e12
G = 1e9
M = 1e6
YEAR_S = 365 * 24 * 3600.0


def manual_roofs(name: str, peak_tflops: float, bw_tbs: float,
                 precision: str = "") -> rl.MachineRoofs:
    """Roofs from a case's stated peak (TFLOP/s) and bandwidth (TB/s)."""
    return rl.MachineRoofs(name=name, peak_flops_per_s=peak_tflops * T, precision=precision,
                           roofs=(rl.Roof(level="hbm", bandwidth_bytes_per_s=bw_tbs * T),))


def load_config(name: str) -> Any:
    """A built-in machine config (``configs/hardware/<name>.yaml``). A missing or broken config
    raises (:class:`~accelsim.errors.ConfigError`): the case that needs it fails."""
    from accelsim.config.registry import load_machine

    return load_machine(name)


def device_roofs(name: str, precision: str) -> tuple[rl.MachineRoofs, str]:
    """(roofs, via) of the built-in config ``name`` at ``precision``; errors propagate."""
    return machine_roofs(load_config(name), precision), \
        f"roofline(configs/hardware/{name}.yaml, {precision})"


def _gemm_point(m: int, k: int, n: int, eb: float) -> tuple[float, float]:
    op = Gemm(name="fc", m=m, k=k, n=n)
    return float(op.flops), rl.op_traffic(op, eb)["total"]


@case("DEF1.5", tag="law")
def _def15(c: CaseContext) -> None:
    i = c.inputs
    a100 = manual_roofs("A100", i["R_peak_TFLOPs"], i["BW_TBs"])
    via = "roofline + Gemm/Elementwise op counts"
    c.check("I_ridge_FLOP_per_B", a100.ridge(), via=via)
    n = i["gemm_N"]
    fg, bg = _gemm_point(n, n, n, i["gemm_dtype_bytes"])
    relu = Elementwise(name="relu", rows=n, cols=n, fn="relu")
    fr, br = float(relu.flops), rl.op_traffic(relu, i["relu_dtype_bytes"])["total"]
    ig, ir = rl.arithmetic_intensity(fg, bg), rl.arithmetic_intensity(fr, br)
    c.check("I_gemm_1024_FLOP_per_B", ig, via=via)
    c.check("I_relu_FLOP_per_B", ir, via=via)
    peak, bw = a100.peak_flops_per_s, a100.roof("hbm").bandwidth_bytes_per_s
    c.check("gemm_bound", rl.bound_of(peak, bw, ig), via=via)
    c.check("relu_bound", rl.bound_of(peak, bw, ir), via=via)
    c.check("relu_attainable_TFLOPs_derived", rl.attainable(peak, bw, ir) / T, via=via)


@case("T12", tag="config")
def _t12(c: CaseContext) -> None:
    """Ridges from the stated peaks and bandwidths; the configs must hold those figures (to
    the digits the seed prints: V100's '125' is 80 SMs x 1024 x 1.53 GHz = 125.3 TFLOP/s)."""
    for dev in ("V100", "A100", "H100"):
        d = c.inputs[dev]
        roofs = manual_roofs(dev, d["FP16_TFLOPs"], d["BW_TBs"], "fp16")
        c.check(f"{dev}_ridge_FLOP_per_B", roofs.ridge(), via="roofline(case inputs)")
        cfg = machine_roofs(load_config(dev.lower()), "fp16")
        via = f"configs/hardware/{dev.lower()}.yaml"
        c.check(f"{dev}_config.FP16_TFLOPs", cfg.peak_flops_per_s / T, via=via,
                expected=d["FP16_TFLOPs"], printed=True, note="config peak vs the seed's figure")
        c.check(f"{dev}_config.BW_TBs", cfg.roof(cfg.offchip_level).bandwidth_bytes_per_s / T,
                via=via, expected=d["BW_TBs"], printed=True)


@case("NM1.3", tag="law")
def _nm13(c: CaseContext) -> None:
    i = c.inputs
    a = manual_roofs("A100", i["A100"]["FP16_TFLOPs"], i["A100"]["BW_TBs"])
    h = manual_roofs("H100", i["H100"]["FP16_TFLOPs"], i["H100"]["BW_TBs"])
    via = "roofline(case inputs)"
    ra = rl.attainable(a.peak_flops_per_s, a.roof("hbm").bandwidth_bytes_per_s, i["I_FLOP_per_B"])
    rh = rl.attainable(h.peak_flops_per_s, h.roof("hbm").bandwidth_bytes_per_s, i["I_FLOP_per_B"])
    c.check("A100_attainable_TFLOPs", ra / T, via=via)
    c.check("H100_attainable_TFLOPs", rh / T, via=via)
    c.check("speedup_x_correct", rh / ra, via=via)
    c.check("bandwidth_ratio_x", h.roof("hbm").bandwidth_bytes_per_s /
            a.roof("hbm").bandwidth_bytes_per_s, via=via)
    c.check("compute_ratio_x", h.peak_flops_per_s / a.peak_flops_per_s, via=via)
    c.skip("text_claim", "imprecise in the text (case file C#2); speedup_x_correct is checked")


def _a100_roofs() -> rl.MachineRoofs:
    """A100 fp16 roofs from configs/hardware/a100.yaml (T12 checks them against the seed)."""
    return device_roofs("a100", "fp16")[0]


@case("NM1.4a", tag="law")
def _nm14a(c: CaseContext) -> None:
    i = c.inputs
    h = i["hidden"]
    op = Gemm(name="qkv", m=i["seq"], k=h, n=i["n_proj"] * h, batch=i["batch"])
    nbytes = rl.op_traffic(op, i["dtype_bytes"])["total"]
    via = "Gemm op counts + roofline"
    c.check("FLOPs_G", op.flops / G, via=via)
    c.check("bytes_MB", nbytes / M, via=via)
    ii = rl.arithmetic_intensity(op.flops, nbytes)
    c.check("I_FLOP_per_B", ii, via=via)
    a = _a100_roofs()
    c.check("bound_on_A100",
            rl.bound_of(a.peak_flops_per_s, a.roof("hbm").bandwidth_bytes_per_s, ii), via=via)


@case("NM1.4b", tag="law")
def _nm14b(c: CaseContext) -> None:
    i = c.inputs
    sm = Softmax(name="softmax", rows=i["batch"] * i["heads"] * i["seq"], cols=i["seq"])
    flops = i["ops_per_element"] * sm.tensor_elements()["output"]
    nbytes = rl.op_traffic(sm, i["dtype_bytes"])["total"]
    via = "Softmax op tensor sizes + roofline (case's 3 ops/element; accelsim counts 5)"
    c.check("FLOPs_M", flops / M, via=via)
    c.check("bytes_MB", nbytes / M, via=via)
    ii = rl.arithmetic_intensity(flops, nbytes)
    c.check("I_FLOP_per_B", ii, via=via)
    a = _a100_roofs()
    c.check("bound", rl.bound_of(a.peak_flops_per_s, a.roof("hbm").bandwidth_bytes_per_s, ii),
            via=via)


@case("NM1.5", tag="law")
def _nm15(c: CaseContext) -> None:
    i = c.inputs
    op = Conv2d(name="conv", n=i["N"], c=i["C_in"], h=i["H"], w=i["W"], k=i["C_out"], r=i["R"],
                s=i["S"], pad=(i["R"] - 1) // 2)
    tr = rl.op_traffic(op, i["dtype_bytes"])
    outputs = op.tensor_elements()["output"]
    via = "Conv2d op counts + roofline"
    c.check("output_elements_M", outputs / M, via=via)
    c.check("FLOP_per_output", op.flops / outputs, via=via)
    c.check("FLOPs_G", op.flops / G, via=via)
    c.check("input_MB", tr["input"] / M, via=via)
    c.check("weights_MB", tr["weight"] / M, via=via, printed=True,
            note="text prints 0.59 MB as 0.6")
    c.check("output_MB", tr["output"] / M, via=via)
    c.check("total_MB", tr["total"] / M, via=via)
    ii = rl.arithmetic_intensity(op.flops, tr["total"])
    c.check("I_FLOP_per_B", ii, via=via)
    c.check("bound", rl.bound_at_ridge(ii, i["ridge"]), via=via)
    bw = rl.implied_bandwidth(i["R_peak_TFLOPs"] * T, i["ridge"])
    c.check("ceiling_TFLOPs", rl.attainable(i["R_peak_TFLOPs"] * T, bw, ii) / T, via=via)


@case("NM1.6", tag="law")
def _nm16(c: CaseContext) -> None:
    i = c.inputs
    op = Gemm(name="fc", m=i["B"], k=i["in"], n=i["out"])
    tr = rl.op_traffic(op, i["dtype_bytes"])
    via = "Gemm op counts + roofline"
    c.check("FLOPs_M", op.flops / M, via=via)
    c.check("input_KB", tr["input"] / 1e3, via=via)
    c.check("weights_MB", tr["weight"] / M, via=via)
    c.check("output_KB", tr["output"] / 1e3, via=via)
    c.check("total_MB", tr["total"] / M, via=via)
    ii = rl.arithmetic_intensity(op.flops, tr["total"])
    c.check("I_FLOP_per_B", ii, via=via)
    peak, bw = i["R_peak_TFLOPs"] * T, i["BW_GBs"] * G
    ra = rl.attainable(peak, bw, ii)
    c.check("R_attain_TFLOPs", ra / T, via=via)
    c.check("fraction_of_peak", rl.utilization(ra, peak), via=via)
    c.check("bound", rl.bound_of(peak, bw, ii), via=via)


@case("NM1.7", tag="law")
def _nm17(c: CaseContext) -> None:
    i = c.inputs
    op = LayerNorm(name="ln", rows=i["batch"] * i["seq"], cols=i["hidden"])
    tr = rl.op_traffic(op, i["dtype_bytes"])
    via = "LayerNorm op counts (8 FLOP/element) + roofline"
    c.check("elements_M", op.tensor_elements()["input"] / M, via=via)
    c.check("FLOPs_M", op.flops / M, via=via)
    c.check("input_MB", tr["input"] / M, via=via)
    c.check("params_KB", tr["weight"] / 1e3, via=via)
    c.check("output_MB", tr["output"] / M, via=via)
    c.check("total_MB", tr["total"] / M, via=via)
    ii = rl.arithmetic_intensity(op.flops, tr["total"])
    c.check("I_FLOP_per_B", ii, via=via)
    peak, bw = i["R_peak_TFLOPs"] * T, i["BW_GBs"] * G
    c.check("ridge_over_I_x", rl.ridge_point(peak, bw) / ii, via=via)
    ra = rl.attainable(peak, bw, ii)
    c.check("R_attain_TFLOPs", ra / T, via=via)
    c.check("fraction_of_peak", rl.utilization(ra, peak), via=via, expected=0.013,
            note="the case file's exact value ('~1 % (exact 1.3 %)')")


@case("NM1.8", tag="law")
def _nm18(c: CaseContext) -> None:
    i = c.inputs
    via = "Gemm op counts + roofline"
    for b in i["batches"]:
        f, nb = _gemm_point(b, i["M"], i["N"], i["dtype_bytes"])
        ii = rl.arithmetic_intensity(f, nb)
        c.check(f"I_B{b}_FLOP_per_B", ii, via=via)
        c.check(f"bound_B{b}", rl.bound_at_ridge(ii, i["A100_ridge"]), via=via)


@case("NM1.9", tag="law")
def _nm19(c: CaseContext) -> None:
    i = c.inputs
    params = i["params_B"] * G
    k = 30000
    decode = Gemm(name="decode_step", m=1, k=k, n=int(round(params / k)))
    tr = rl.op_traffic(decode, i["dtype_bytes"])
    via = "GEMV (1 token x 1.5 B weights) op counts + roofline"
    peak, bw = i["R_peak_TFLOPs"] * T, i["BW_TBs"] * T
    c.check("ridge_FP16_FLOP_per_B", rl.ridge_point(peak, bw), via=via)
    c.check("ridge_FP32_FLOP_per_B", rl.ridge_point(i["R_peak_FP32_TFLOPs"] * T, bw), via=via)
    c.check("bytes_per_token_GB", tr["total"] / G, via=via)
    c.check("FLOPs_per_token_G", decode.flops / G, via=via)
    ii = rl.arithmetic_intensity(decode.flops, tr["total"])
    c.check("I_FLOP_per_B", ii, via=via)
    ra = rl.attainable(peak, bw, ii)
    c.check("R_attain_TFLOPs", ra / T, via=via)
    c.check("utilization", rl.utilization(ra, peak), via=via, printed=True,
            note="exact 0.654 %, printed 0.7 %")
    t = rl.roofline_time(decode.flops, tr["total"], peak, bw)
    c.check("time_per_token_ms_derived", t * 1e3, via=via)
    c.check("tokens_per_s_max_derived", 1 / t, via=via)


def _workload_ops(name: str) -> tuple:
    from accelsim.workload.readers import load_workload

    return load_workload(name).ops


@case("T13", tag="law")
def _t13(c: CaseContext) -> None:
    a = _a100_roofs()
    peak, bw = a.peak_flops_per_s, a.roof("hbm").bandwidth_bytes_per_s
    via = "op counts (fp16) + A100 fp16 roofline (config)"

    def point(op) -> float:
        return rl.arithmetic_intensity(op.flops, rl.op_traffic(op, 2)["total"])

    def label(ops) -> str:
        bounds = {rl.bound_of(peak, bw, point(op)) for op in ops}
        return "straddles ridge" if len(bounds) == 2 else f"{bounds.pop()}-bound"

    ln = LayerNorm(name="ln", rows=32 * 512, cols=768)
    c.check("LayerNorm_FLOP_per_B", point(ln), via=via, within=True)
    emb = Embedding(name="wte", tokens=32 * 512, dim=768, table_rows=50257)
    c.check("embedding_FLOP_per_B", point(emb), via=via)
    sm = Softmax(name="softmax", rows=32 * 12 * 512, cols=512)
    c.check("softmax", label([sm]), via=via)
    classes = c.expected["classes"]
    convs = [op for op in _workload_ops("resnet50_convs") if isinstance(op, Conv2d)]
    dw = [op for op in _workload_ops("mobilenet_v2_convs")
          if isinstance(op, Conv2d) and op.groups > 1]
    gemm = Gemm(name="gpt2_qkv", m=32 * 512, k=768, n=3 * 768)
    for key, ops, note in (("Conv2D", convs, "ResNet-50 convs, batch 1"),
                           ("GEMM", [gemm], "GPT-2 QKV projection, 32x512 tokens"),
                           ("depthwise", dw, "MobileNetV2 depthwise convs"),
                           ("softmax", [sm], "BERT-base score softmax"),
                           ("LayerNorm", [ln], "LayerNorm 32x512x768"),
                           ("embedding", [emb], "GPT-2 token embedding gather")):
        got = label(ops)
        c.check(f"classes.{key}", got, via=via + f"; {note}", expected=classes[key])
    for key in ("Conv2D_FLOP_per_B", "dense_GEMM_FLOP_per_B", "depthwise_conv_FLOP_per_B"):
        c.skip(key, "a typical band, not a bound: compulsory-traffic intensity of a given layer "
                    "may lie outside it (NM1.5's conv is 762 FLOP/B); the bound class is checked")


@case("T14", tag="law")
def _t14(c: CaseContext) -> None:
    import re

    for band, text in c.expected.items():
        nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", text.split("FLOP/B")[0])]
        if text.startswith(">"):
            sample = nums[0] * 2
        elif text.startswith("<"):
            sample = nums[0] / 2
        else:
            sample = math.sqrt(nums[0] * nums[1])
        c.check(band, rl.advice(sample), via=f"roofline.advice({sample:g} FLOP/B)", expected=band)


@case("MW-H100", tag="law")
def _mwh100(c: CaseContext) -> None:
    i = c.inputs
    via = "roofline ridge per precision (case inputs)"
    bw = i["BW_TBs"] * T
    c.check("ridge_FP16", rl.ridge_point(i["FP16_TFLOPs"] * T, bw), via=via)
    c.check("ridge_TF32_derived", rl.ridge_point(i["TF32_TFLOPs"] * T, bw), via=via)
    c.check("ridge_FP8_dense_derived", rl.ridge_point(i["FP8_dense_TFLOPs"] * T, bw), via=via)
    c.skip("text_range", "imprecise in the text (case file C#8): FP8 dense lies outside 150-300")


@case("FAL-PREC", tag="config")
def _falprec(c: CaseContext) -> None:
    """H100's tensor-core fp16 peak against its CUDA-core fp32 peak, from the config's
    per-precision rates. The two datasheet peaks are rated at different clocks: the tensor
    peak (989 TFLOP/s) at ``clock_hz`` (1.83 GHz), the CUDA-core fp32 peak (67 TFLOP/s) at
    the max boost ``max_clock_hz`` (1.98 GHz); the ratio at one clock would be 4096/256 = 16."""
    h100 = load_config("h100")
    comp = h100.compute
    tensor = h100.peak_flops("fp16")
    cuda_fp32 = h100.flop_per_clk_per_sm("fp32") * comp.sm_count * comp.max_clock_hz
    via = ("configs/hardware/h100.yaml: fp16 tensor peak at clock_hz / fp32 SIMT peak at "
           "max_clock_hz")
    c.check("ratio_x", tensor / cuda_fp32, via=via,
            note=f"{tensor / T:.1f} / {cuda_fp32 / T:.1f} TFLOP/s")


@case("FAL-SOFTMAX", tag="law")
def _falsoftmax(c: CaseContext) -> None:
    i = c.inputs
    peak, bw = i["A100_peak_TFLOPs"] * T, i["A100_BW_TBs"] * T
    via = "roofline(case inputs)"
    att = [rl.attainable(peak, bw, x) for x in i["I_range_FLOP_per_B"]]
    c.check("A100_attain_TFLOPs", [a / T for a in att], via=via)
    c.check("A100_util_correct", [rl.utilization(a, peak) for a in att], via=via)
    c.skip("A100_util_text", "wrong in the text (case file C#4); A100_util_correct is checked")
    lo_i, hi_i = i["I_range_FLOP_per_B"]
    lo_r, hi_r = i["CPU_ridge_FLOP_per_B"]
    # a CPU normalised to peak 1: bandwidth = 1 / ridge
    frac = [rl.attainable(1.0, 1.0 / hi_r, lo_i), rl.attainable(1.0, 1.0 / lo_r, hi_i)]
    c.check("CPU_fraction_of_peak", frac, via=via)


@case("FAL-LN", tag="law")
def _falln(c: CaseContext) -> None:
    i = c.inputs
    peak, bw = i["R_peak_TFLOPs"] * T, i["BW_TBs"] * T
    via = "roofline(case inputs)"
    c.check("ridge_FLOP_per_B", rl.ridge_point(peak, bw), via=via)
    ra = rl.attainable(peak, bw, i["I_FLOP_per_B"])
    c.check("R_attain_TFLOPs", ra / T, via=via)
    c.check("utilization", rl.utilization(ra, peak), via=via)


@case("FAL-MFU", tag="law")
def _falmfu(c: CaseContext) -> None:
    i = c.inputs
    peak = i["peak_TFLOPs"]
    via = "roofline.utilization(case inputs)"
    c.check("dense_MFU_exact", [rl.utilization(x, peak) for x in i["dense_tfmr_TFLOPs"]], via=via)
    c.check("sparse_util", [rl.utilization(x, peak) for x in i["sparse_recsys_TFLOPs"]], via=via)
    c.skip("dense_MFU_text", "rounded in the text (case file C#9); dense_MFU_exact is checked")


@case("FAL-T4", tag="law")
def _falt4(c: CaseContext) -> None:
    i = c.inputs
    via = "Gemm op counts + roofline(case inputs)"
    f1, b1 = _gemm_point(1, i["M"], i["N"], 2)
    f256, b256 = _gemm_point(256, i["M"], i["N"], 2)
    i1 = rl.arithmetic_intensity(f1, b1)
    c.check("I_B1", i1, via=via)
    c.check("I_B256", rl.arithmetic_intensity(f256, b256), via=via)
    a100 = rl.attainable(312 * T, i["A100_BW_TBs"] * T, i1)
    c.check("A100_B1_TFLOPs", a100 / T, via=via)
    t4_peak = i["T4_peak_TFLOPs"] * T
    t4_bw = rl.implied_bandwidth(t4_peak, i["T4_ridge_FLOP_per_B"])
    t4 = rl.attainable(t4_peak, t4_bw, i1)
    c.check("T4_B1_TFLOPs", t4 / T, via=via, printed=True, note="text prints 0.32 as 0.3")
    c.check("T4_BW_implied_GBs", t4_bw / G, via=via)
    c.check("A100_over_T4_at_B1_x_correct", a100 / t4, via=via)
    c.skip("text_claim", "wrong in the text (case file C#1): the ratio is 6.4x, not < 2x")


@case("DEF1.1", tag="config")
def _def11(c: CaseContext) -> None:
    roofs, via = device_roofs("a100", "fp16")
    cpu = c.inputs["CPU_TFLOPs"]
    c.check("ratio_x", [roofs.peak_flops_per_s / (max(cpu) * T),
                        roofs.peak_flops_per_s / (min(cpu) * T)], via=via,
            note="config peak 311.9 TFLOP/s (the seed rounds to 312)")


@case("CPU-EFF", tag="law")
def _cpueff(c: CaseContext) -> None:
    i = c.inputs
    peaks, eff = i["CPU_peak_TFLOPs"], i["sustained_fraction"]
    via = "sustained = peak x efficiency (compute_time law)"

    def sustained(peak_tflops: float, e: float) -> float:
        return 1.0 / rl.compute_time(1.0, peak_tflops * T, e) / G

    c.check("correct_range_GFLOPs",
            [sustained(min(peaks), min(eff)), sustained(max(peaks), max(eff))], via=via)
    c.check("top_of_range_GFLOPs",
            [sustained(min(peaks), max(eff)), sustained(max(peaks), max(eff))], via=via)
    c.skip("text_value", "rendering defect in the text (case file C#3)")


@case("GPT3-TIME", tag="law")
def _gpt3(c: CaseContext) -> None:
    i = c.inputs
    peak = i["R_peak_PFLOPs"] * 1e15
    via = "iron-law compute term O / (R_peak x eta)"
    c.check("T_peak_years", rl.compute_time(i["FLOPs"], peak) / YEAR_S, via=via)
    lo, hi = i["utilization"]
    c.check("T_years_at_60pct", rl.compute_time(i["FLOPs"], peak, hi) / YEAR_S, via=via)
    c.check("T_years_at_40pct", rl.compute_time(i["FLOPs"], peak, lo) / YEAR_S, via=via)


@case("R50-LB", tag="law")
def _r50lb(c: CaseContext) -> None:
    flops = sum(op.flops for op in _workload_ops("resnet50_convs"))
    t = rl.compute_time(flops, c.inputs["R_peak_TFLOPs"] * T)
    c.check("T_ideal_order", rl.time_scale(t),
            via=f"workloads/resnet50_convs.yaml ({flops / G:.2f} GFLOP) / peak")
    c.skip("T_real_order", "a measured end-to-end latency (framework, launches); no model")


@case("PW-AI", tag="law")
def _pwai(c: CaseContext) -> None:
    i = c.inputs
    via = "arithmetic_intensity(ops, bytes per fp32 access)"
    eb = PRECISION_BYTES["fp32"]
    assert eb == i["bytes_per_access"]
    c.check("I_FLOP_per_B_derived", [rl.arithmetic_intensity(o, eb) for o in i["ops_per_access"]],
            via=via)
    for key in ("extra_passes", "rsqrt_on_ALU_cycles", "rsqrt_on_SFU_cycles"):
        c.skip(key, "qualitative (op-latency prose)")
