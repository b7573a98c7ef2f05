"""Seed cases of kinds ``systolic_timing``, ``tiling``, ``memory``, ``link``, ``energy``,
``fusion`` and ``other``: computed with the systolic model, the fold-stream engine, the
mapping-space counters, machine/link configs, energy tables and the graph passes.

Imports: precision, analysis.mapspace, analysis.roofline, analysis.wavefront, config.energy,
config.link, hw.systolic, workload.ops, validation.seed_cases, validation.seed_cases_roofline.
"""

from __future__ import annotations

from accelsim.analysis import mapspace as ms
from accelsim.analysis import roofline as rl
from accelsim.analysis.wavefront import ws_wavefront
from accelsim.hw import systolic as hs
from accelsim.precision import PRECISION_BYTES
from accelsim.validation.seed_cases import CaseContext, case
from accelsim.validation.seed_cases_roofline import device_roofs, load_config
from accelsim.workload.ops import Gemm

M = 1e6
G = 1e9


def _energy_table(name: str):
    from accelsim.config.energy import load_energy_table

    return load_energy_table(name)


# --- systolic timing ------------------------------------------------------------------------

@case("SYS-2x2", tag="model")
def _sys2x2(c: CaseContext) -> None:
    i = c.inputs
    k, n, m = i["rows_K"], i["cols_N"], i["input_rows_M"]
    w = ws_wavefront(m=m, k=k, n=n)
    via = "ws_wavefront (one hop per cycle)"
    c.check("row_skew_cycles", w.inject[(0, 1)] - w.inject[(0, 0)], via=via)
    c.check("A00B00_reaches_PE10_cycle", w.mac[(0, 1, 0)], via=via)
    c.check("A01_injection_cycle", w.inject[(0, 1)], via=via)
    c.check("C00_complete_cycle", w.complete[(0, 0)], via=via)
    c.check("C01_complete_cycle_derived", w.complete[(0, 1)], via=via)
    c.check("C10_complete_cycle_derived", w.complete[(1, 0)], via=via)
    c.check("C11_complete_cycle_derived", w.complete[(1, 1)], via=via)
    c.check("compute_span_cycles_derived", w.span, via=via)
    g = hs.geometry(m, n, k, k, n, "ws")
    c.check("with_weight_preload_cycles_derived", hs.compute_cycles(g),
            via="hw.systolic ws fold cycles 2R+C+T-2")
    c.check("schedule_derived", w.schedule_text(), via=via)
    c.check("edge_injection_derived", w.injection_text(), via=via)


@case("SYS-128", tag="model")
def _sys128(c: CaseContext) -> None:
    i = c.inputs
    r, cc = i["rows"], i["cols"]
    tpu = load_config("tpu_v4")
    arr = tpu.compute.array
    c.check("MACs_per_cycle", arr.rows * arr.cols, via="configs/hardware/tpu_v4.yaml (one MXU)")
    g = hs.geometry(r, cc, r, r, cc, "os")
    acc = hs.sram_accesses(r, cc, r, g)
    c.check("reuse_per_byte_x", r * cc * r / acc.ifmap_reads,
            via="hw.systolic sram_accesses (MACs per ifmap word)")
    c.check("single_tile_128cube_span_cycles_derived", hs.compute_cycles(g),
            via="hw.systolic os fold cycles T+R+C-2")
    c.check("single_tile_utilization_derived", hs.compute_util(g), via="hw.systolic compute_util",
            printed=True, note="0.33508 printed as 0.335")


@case("SYS-TPUV1", tag="config")
def _systpuv1(c: CaseContext) -> None:
    tpu = load_config("tpu_v1")
    via = "configs/hardware/tpu_v1.yaml"
    c.check("MACs_per_cycle_derived", tpu.compute.array.pes, via=via)
    c.check("unified_buffer_MB", tpu.memory.sram.ifmap_bytes / 2**20,
            via=via + " (ifmap buffer, MiB)",
            note="the seed's '24 MB' is the TPU paper's 24 MiB")


@case("SYS-CONFIGS", tag="config")
def _sysconfigs(c: CaseContext) -> None:
    tpu = load_config("tpu_v4")
    c.check("TPUv4_array", [tpu.compute.array.rows, tpu.compute.array.cols],
            via="configs/hardware/tpu_v4.yaml")
    c.check("A100_SMs", load_config("a100").compute.sm_count, via="configs/hardware/a100.yaml")
    c.skip("TPUv4_cores_per_chip", "tpu_v4.yaml models one TensorCore; the chip count is prose")
    for key in ("AMX_tile_max", "SPR_max_cores", "TPU_tile_options"):
        c.skip(key, "no Sapphire Rapids / TPU tile-option model")


# --- tiling -----------------------------------------------------------------------------

@case("TILE-4096", tag="model")
def _tile4096(c: CaseContext) -> None:
    i = c.inputs
    t = ms.GemmTiling(i["M"], i["N"], i["K"], i["tile"], i["tile"], i["tile"])
    g = hs.geometry(i["M"], i["N"], i["K"], i["tile"], i["tile"], "os")
    c.check("output_tiles", g.folds, via="hw.systolic os folds")
    c.check("k_tiles_per_output", t.k_steps, via="mapspace.GemmTiling")
    c.check("tile_multiplies", t.tile_products, via="mapspace.GemmTiling")


@case("TILE-129", tag="model")
def _tile129(c: CaseContext) -> None:
    i = c.inputs
    e = ms.EdgeTiles(i["dim"], i["array_width"])
    c.check("tiles", e.tiles, via="mapspace.EdgeTiles")
    c.check("idle_units_in_remainder_tile", e.idle_in_last, via="mapspace.EdgeTiles")
    c.check("active_units_in_remainder_tile", e.active_in_last, via="mapspace.EdgeTiles")
    w = i["array_width"]
    g = hs.geometry(w, i["dim"], 64, w, w, "os")
    c.check("utilization_along_dim_derived", hs.mapping_efficiency(g),
            via="hw.systolic mapping_efficiency (M=128, N=129 on 128x128, os)")


@case("EX1.4", tag="model")
def _ex14(c: CaseContext) -> None:
    i = c.inputs
    ho = i["input"][0] - i["filter"][0] + 1
    bounds = {"H_out": ho, "W_out": i["input"][1] - i["filter"][1] + 1, "C_out": i["filters"],
              "F_h": i["filter"][0], "F_w": i["filter"][1]}
    wdims = ("C_out", "F_h", "F_w")
    regs = i["filter"][0] * i["filter"][1]  # room for one filter, not all 16
    via = f"mapspace.operand_fetches (LRU registers of {regs} words)"
    c.check("permutations", ms.count_loop_orders(list(bounds)), via="mapspace.count_loop_orders")
    a = ms.operand_fetches(["C_out", "F_h", "F_w", "H_out", "W_out"], bounds, wdims, regs)
    b = ms.operand_fetches(["H_out", "W_out", "C_out", "F_h", "F_w"], bounds, wdims, regs)
    c.check("orderA_weight_reads", a, via=via)
    c.check("orderB_weight_reads_worst", b, via=via)
    c.check("reduction_x", b / a, via=via)


@case("MAP-SPACE", tag="law")
def _mapspace(c: CaseContext) -> None:
    i = c.inputs
    c.check("loop_orders_7", ms.loop_orders(i["conv_loops"]), via="mapspace.loop_orders")
    p = i["parallel_case"]
    c.check("parallel_choices_6_3", ms.parallel_choices(p["n_loops"], p["k_parallel"]),
            via="mapspace.parallel_choices")
    q = i["placement"]
    c.check("placements", ms.placements(q["n"], q["N_comp"], q["N_mem"]), via="mapspace.placements")


# --- memory -----------------------------------------------------------------------------

@case("DEF1.3", tag="config")
def _def13(c: CaseContext) -> None:
    from accelsim.config.link import Host

    roofs, via = device_roofs("a100", "fp16")
    host = Host().memory_bytes_per_s
    c.check("ratio_x", roofs.roof(roofs.offchip_level).bandwidth_bytes_per_s / host,
            via=via + " / config.link.Host memory bandwidth")


@case("INT8-Q", tag="law")
def _int8q(c: CaseContext) -> None:
    w = Gemm(name="fc", m=1, k=4096, n=4096)
    fp32 = rl.op_traffic(w, PRECISION_BYTES["fp32"])["weight"]
    via = "op_traffic weight bytes per precision"
    c.check("fp32_to_int8_traffic_reduction_x",
            fp32 / rl.op_traffic(w, PRECISION_BYTES["int8"])["weight"], via=via)
    c.check("fp32_to_fp16_traffic_reduction_x",
            fp32 / rl.op_traffic(w, PRECISION_BYTES["fp16"])["weight"], via=via)


@case("NM1.2", tag="law")
def _nm12(c: CaseContext) -> None:
    i = c.inputs
    t = i["distance_mm"] * 1e-3 / (i["propagation_fraction_c"] * 299_792_458.0)
    c.check("wire_delay_ps", t * 1e12, via="distance / (0.5 c)")
    c.check("clock_period_ps", 1e12 / (i["clock_GHz"] * G), via="1 / f")
    c.skip("HBM_access_cycles", "prose bound; GPU DRAM latency comes from the GPU config")
    c.skip("HBM_access_ns_at_2GHz_derived", "prose bound")


@case("T10", tag="config")
def _t10(c: CaseContext) -> None:
    for name in ("a100", "h100"):
        roofs, _ = device_roofs(name, "fp16")
        c.check("A100_H100_HBM_TBs", roofs.roof(roofs.offchip_level).bandwidth_bytes_per_s / 1e12,
                via=f"configs/hardware/{name}.yaml HBM bandwidth (TB/s)", within=True)
        c.check("device_memory_GB", load_config(name).memory.hbm.capacity_bytes / G,
                via=f"configs/hardware/{name}.yaml HBM capacity (GB)", within=True)
    for key in ("HBM_interface_bits", "GDDR_interface_bits", "HBM_mainstream_TBs", "HBM_high_end",
                "LPDDR", "on_chip_SRAM_BW", "on_chip_SRAM_capacity", "flash_read_latency",
                "flash_BW", "GDDR6X_GBs"):
        c.skip(key, "descriptive band of technologies accelsim has no config for")


@case("P100-V100", tag="config")
def _p100v100(c: CaseContext) -> None:
    i = c.inputs
    roofs, via = device_roofs("v100", "fp16")
    c.check("ratio_x", roofs.peak_flops_per_s / (i["P100_FP16_TFLOPs"] * 1e12), via=via)
