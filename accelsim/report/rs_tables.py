"""Spatial (row-stationary, no-local-reuse) runs -> tables: a ``Result.layers`` row and the
action records per layer.

The row has every column of :data:`accelsim.report.tables.LAYER_COLUMNS` (``m, n, k`` are the
layer's im2col GEMM; ``sram_*`` count global-buffer words; ``folds`` are processing passes)
plus the mapping (``rs_e, rs_n, rs_p, rs_q, rs_r, rs_t, rs_m``; ``nlr_cm, nlr_cc, ...``
for no-local-reuse), ``active_pes``,
``processing_cycles`` (the engine's schedule: DRAM overlapped with processing) and
``io_cycles`` (ifmap/ofmap transfers the array waits for when the machine does not overlap
them; ``total_cycles`` = processing + io).

Action records (levels of :data:`accelsim.report.energy.LEVELS`): ``mac`` compute (MACs not
gated by a zero ifmap) and idle (every other PE-cycle: clock and leakage only); ``rf`` reads
and writes of the filter (``weight``), ifmap (``input``) and psum scratchpads; ``noc`` words
delivered by the multicast input network and psums passed between PEs; ``sram`` global-buffer
reads and writes; ``dram`` bytes over the interface (after run-length coding).

Imports: units, engine.systolic_run, mapping.row_stationary, report.tables.
"""

from __future__ import annotations

from typing import Any

from accelsim.engine.systolic_run import LayerRun
from accelsim.mapping.row_stationary import RsPlan
from accelsim.report.tables import schedule_columns
from accelsim.units import BITS_PER_BYTE


def rs_layer_row(machine: Any, run: LayerRun) -> dict[str, Any]:
    """One RS layer's figures as a flat dict (a row of ``Result.layers``)."""
    plan: RsPlan = run.plan
    s, sh, c = run.schedule, plan.shape, plan.cost
    w = c.words
    pes = machine.array.pes
    total = s.end + plan.serial_io_cycles
    time_s = total / machine.clock_hz
    mv = plan.moved()
    dram = {"dram_ifmap_read_bytes": mv[("input", "read")],
            "dram_filter_read_bytes": mv[("weight", "read")],
            "dram_psum_read_bytes": 0.0,
            "dram_ofmap_write_bytes": mv[("output", "write")],
            "dram_psum_write_bytes": 0.0}
    dram_bytes = sum(dram.values())
    reads = w["glb_ifmap_read"] + w["glb_filter_read"] + w["glb_psum_read"]
    writes = w["glb_ifmap_write"] + w["glb_filter_write"] + w["glb_psum_write"]
    row = {
        "layer": plan.name, "op": plan.op_kind, "m": sh.n * sh.e * sh.f, "n": sh.m,
        "k": sh.c * sh.r * sh.s, "repeat": sh.groups, "dataflow": plan.dataflow, "loop_order": "",
        **schedule_columns(plan, s, total, time_s, pes),
        "mapping_efficiency": c.active_pes / pes,
        "compute_util": plan.macs / (pes * s.compute_cycles) if s.compute_cycles else 0.0,
        "sram_ifmap_reads": w["glb_ifmap_read"], "sram_filter_reads": w["glb_filter_read"],
        "sram_ofmap_writes": w["glb_psum_write"], "sram_ofmap_reads": w["glb_psum_read"],
        "sram_reads": reads, "sram_writes": writes, **dram, "dram_bytes": dram_bytes,
        "dram_bw_bytes_per_s": dram_bytes / time_s if time_s else 0.0,
        **{f"{plan.dataflow}_{k}": v for k, v in c.mapping.as_dict().items()},
        "active_pes": c.active_pes, "processing_cycles": s.end,
        "io_cycles": plan.serial_io_cycles, "ifmap_zero_fraction": plan.ifmap_zero_fraction,
    }
    return row


def rs_actions(machine: Any, run: LayerRun, total_cycles: int) -> list[dict[str, Any]]:
    """Action records of one RS layer (see the module docstring)."""
    plan: RsPlan = run.plan
    arr = machine.array
    net = arr.network
    w = plan.cost.words
    bits = arr.operand_bytes * BITS_PER_BYTE
    psum_bits = arr.psum_bytes * BITS_PER_BYTE
    prec = arr.precision
    glb = machine.memory.sram.capacity_bytes
    tech = machine.memory.dram.technology
    z = plan.ifmap_zero_fraction if (net is not None and net.zero_gating) else 0.0
    live = w["macs"] * (1.0 - z)
    recs: list[dict[str, Any]] = []

    def add(level: str, operand: str, direction: str, count: float, wb: float,
            cap: float = 0.0, technology: str = "") -> None:
        recs.append({"layer": plan.name, "level": level, "operand": operand,
                     "direction": direction, "count": float(count), "bits": float(count * wb),
                     "precision": prec, "technology": technology, "capacity_bytes": float(cap),
                     "word_bits": float(wb)})

    add("mac", "-", "compute", live, bits)
    add("mac", "-", "idle", max(arr.pes * total_cycles - live, 0.0), bits)
    gate = 1.0 - z      # a zero ifmap skips the filter read and the psum update
    add("rf", "weight", "read", w["spad_filter_read"] * gate, bits)
    add("rf", "weight", "write", w["spad_filter_write"], bits)
    add("rf", "input", "read", w["spad_ifmap_read"], bits)
    add("rf", "input", "write", w["spad_ifmap_write"], bits)
    add("rf", "psum", "read", w["spad_psum_read"] * gate, psum_bits)
    add("rf", "psum", "write", w["spad_psum_write"] * gate, psum_bits)
    add("noc", "weight", "transfer", w["noc_filter"], bits)
    add("noc", "input", "transfer", w["noc_ifmap"], bits)
    add("noc", "psum", "transfer", w["noc_psum"], psum_bits)
    for operand, key in (("input", "ifmap"), ("weight", "filter"), ("psum", "psum")):
        wb = psum_bits if operand == "psum" else bits
        add("sram", operand, "read", w[f"glb_{key}_read"], wb, glb)
        add("sram", operand, "write", w[f"glb_{key}_write"], wb, glb)
    for (operand, direction), nbytes in plan.moved().items():
        if nbytes:
            wb = bits
            add("dram", operand, direction, nbytes * BITS_PER_BYTE / wb, wb, 0.0, tech)
    # rf records stay even when empty (no-local-reuse): the PE registers are counted here,
    # not derived from the MACs as for systolic arrays
    return [r for r in recs if r["count"] > 0 or r["direction"] == "compute" or r["level"] == "rf"]
