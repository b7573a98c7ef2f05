"""Engine results -> tables: one row per layer, action records, totals.

Column conventions: cycles are array clock cycles; ``*_bytes`` are decimal bytes;
``sram_*`` array-side counts are words; utilisations are fractions (0-1), see
:mod:`accelsim.hw.systolic` for what each one means.

Imports: units, precision, engine.systolic_run, hw.systolic, mapping.systolic, mapping.vector.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from accelsim.engine.systolic_run import LayerRun
from accelsim.hw.systolic import compute_util, mapping_efficiency
from accelsim.mapping.systolic import layer_sram_words
from accelsim.mapping.vector import VectorPlan
from accelsim.precision import PRECISION_BYTES
from accelsim.units import BITS_PER_BYTE, FLOP_PER_MAC

LAYER_COLUMNS = [
    "layer", "op", "m", "n", "k", "repeat", "dataflow", "loop_order", "folds", "fold_cycles",
    "compute_cycles", "stall_cycles", "prologue_cycles", "epilogue_cycles", "total_cycles",
    "time_s", "macs", "flops", "overall_util", "mapping_efficiency", "compute_util",
    "sram_ifmap_reads", "sram_filter_reads", "sram_ofmap_writes", "sram_ofmap_reads",
    "sram_reads", "sram_writes",
    "dram_ifmap_read_bytes", "dram_filter_read_bytes", "dram_psum_read_bytes",
    "dram_ofmap_write_bytes", "dram_psum_write_bytes", "dram_bytes", "dram_bw_bytes_per_s",
]


def schedule_columns(plan: Any, s: Any, total: int, time_s: float, pes: int) -> dict[str, Any]:
    """The columns every array layer row shares: folds, the schedule's cycles (compute, stall,
    prologue, epilogue, total), time in seconds, MACs, FLOP (1 MAC = 2 FLOP) and the overall
    utilisation (MACs over PEs x total cycles)."""
    return {"folds": plan.folds, "fold_cycles": plan.fold_cycles,
            "compute_cycles": s.compute_cycles, "stall_cycles": s.stall_cycles,
            "prologue_cycles": s.first_compute, "epilogue_cycles": s.epilogue_cycles,
            "total_cycles": total, "time_s": time_s, "macs": plan.macs,
            "flops": FLOP_PER_MAC * plan.macs,
            "overall_util": plan.macs / (pes * total) if total else 0.0}


def layer_row(machine: Any, run: LayerRun) -> dict[str, Any]:
    """One layer's figures as a flat dict (a row of ``Result.layers``)."""
    if isinstance(run.plan, VectorPlan):
        return vector_row(machine, run)
    plan, s = run.plan, run.schedule
    g = plan.geometry
    mv = run.moved_bytes
    total = s.end
    pes = machine.array.pes
    dram = {"dram_ifmap_read_bytes": mv[("input", "read")],
            "dram_filter_read_bytes": mv[("weight", "read")],
            "dram_psum_read_bytes": mv[("psum", "read")],
            "dram_ofmap_write_bytes": mv[("output", "write")],
            "dram_psum_write_bytes": mv[("psum", "write")]}
    dram_bytes = sum(dram.values())
    time_s = total / machine.clock_hz
    words = layer_sram_words(plan)
    row = {
        "layer": plan.name, "op": plan.op_kind, "m": plan.gemm.m, "n": plan.gemm.n,
        "k": plan.gemm.k, "repeat": plan.repeat, "dataflow": g.dataflow,
        "loop_order": ("sr_outer" if plan.traffic.sr_outer else "sc_outer")
        + (f"/{plan.traffic.block}" if plan.traffic.block > 1 else ""),
        **schedule_columns(plan, s, total, time_s, pes),
        "mapping_efficiency": mapping_efficiency(g), "compute_util": compute_util(g),
        **words, "sram_reads": words["sram_ifmap_reads"] + words["sram_filter_reads"]
        + words["sram_ofmap_reads"], "sram_writes": words["sram_ofmap_writes"], **dram,
        "dram_bytes": dram_bytes,
        "dram_bw_bytes_per_s": dram_bytes / time_s if time_s else 0.0,
    }
    return row


def vector_row(machine: Any, run: LayerRun) -> dict[str, Any]:
    """A vector-unit op as a ``Result.layers`` row (no array folds; ``unit`` = vector)."""
    plan, s = run.plan, run.schedule
    mv = run.moved_bytes
    total = s.end
    time_s = total / machine.clock_hz
    dram_bytes = sum(mv.values())
    row = {c: 0 for c in LAYER_COLUMNS}
    row.update({
        "layer": plan.name, "op": plan.op_kind, "repeat": plan.repeat, "dataflow": "vector",
        "loop_order": "",
        "folds": plan.folds, "fold_cycles": plan.fold_cycles,
        "compute_cycles": s.compute_cycles, "stall_cycles": s.stall_cycles,
        "prologue_cycles": s.first_compute, "epilogue_cycles": s.epilogue_cycles,
        "total_cycles": total, "time_s": time_s, "macs": 0, "flops": plan.flops,
        "overall_util": 0.0, "mapping_efficiency": 0.0, "compute_util": 0.0,
        "dram_ifmap_read_bytes": mv[("input", "read")],
        "dram_filter_read_bytes": mv[("weight", "read")],
        "dram_psum_read_bytes": 0.0, "dram_ofmap_write_bytes": mv[("output", "write")],
        "dram_psum_write_bytes": 0.0, "dram_bytes": dram_bytes,
        "dram_bw_bytes_per_s": dram_bytes / time_s if time_s else 0.0,
    })
    return row


def totals_of(layers: pd.DataFrame, machine: Any) -> dict[str, Any]:
    """Whole-workload totals: layers run one after another."""
    if layers.empty:
        return {}
    cycles = int(layers["total_cycles"].sum())
    macs = int(layers["macs"].sum())
    pes = machine.array.pes * machine.compute.cores  # every core of a chip (mapping/cores.py)
    time_s = cycles / machine.clock_hz
    return {
        "layers": int(len(layers)),
        "total_cycles": cycles,
        "compute_cycles": int(layers["compute_cycles"].sum()),
        "stall_cycles": int(layers["stall_cycles"].sum()),
        "time_s": time_s,
        "macs": macs,
        "flops": FLOP_PER_MAC * macs,
        "flop_per_s": FLOP_PER_MAC * macs / time_s if time_s else 0.0,
        # TFLOP/s under its old name, kept one release as an alias of flop_per_s / 1e12
        "tflops_per_s": FLOP_PER_MAC * macs / time_s / 1e12 if time_s else 0.0,
        "overall_util": macs / (pes * cycles) if cycles else 0.0,
        "dram_bytes": float(layers["dram_bytes"].sum()),
        "sram_reads": int(layers[["sram_ifmap_reads", "sram_filter_reads",
                                  "sram_ofmap_reads"]].sum().sum()),
        "sram_writes": int(layers["sram_ofmap_writes"].sum()),
    }


ACTION_KEYS = ("layer", "level", "operand", "direction", "count", "bits", "precision",
               "technology", "capacity_bytes", "word_bits")
"""Fields of one action record (the API contract's columns, in order)."""


@dataclass(frozen=True, slots=True)
class RecordContext:
    """The machine's constants its action records carry: the array's precision and PE count,
    the DRAM technology, the bits per word of each operand and each SRAM buffer's bytes."""

    precision: str
    technology: str
    pes: int
    word_bits: float
    out_bits: float
    psum_bits: float
    widths: dict[str, float]
    caps: dict[str, float]


def record_context(machine: Any) -> RecordContext:
    """The :class:`RecordContext` of a systolic machine."""
    arr = machine.array
    sram = machine.memory.sram
    word_bits = float(arr.operand_bytes * BITS_PER_BYTE)
    out_bits = float(arr.output_bytes * BITS_PER_BYTE)
    psum_bits = float(arr.psum_bytes * BITS_PER_BYTE)
    return RecordContext(
        precision=arr.precision, technology=machine.memory.dram.technology, pes=arr.pes,
        word_bits=word_bits, out_bits=out_bits, psum_bits=psum_bits,
        widths={"input": word_bits, "weight": word_bits, "output": out_bits, "psum": psum_bits},
        caps={"input": float(sram.ifmap_bytes), "weight": float(sram.filter_bytes),
              "output": float(sram.ofmap_bytes), "psum": float(sram.ofmap_bytes)})


def array_layer_records(rc: RecordContext, add: Callable[[tuple], Any], name: str, macs: float,
                        total_cycles: float, words: Mapping[str, float], row_folds: int,
                        dataflow: str, moved: Mapping[tuple[str, str], float]) -> None:
    """``add`` each action record of one array layer (tuples of :data:`ACTION_KEYS`): its
    MACs and idle PE cycles, the array-side SRAM ``words`` (:func:`layer_sram_words` keys)
    and each DRAM transfer of ``moved`` (bytes per operand and direction) with its other end
    in the SRAM buffer."""
    prec, word_bits, psum_bits = rc.precision, rc.word_bits, rc.psum_bits
    add((name, "mac", "-", "compute", float(macs), 0.0, prec, "", 0.0, word_bits))
    add((name, "mac", "-", "idle", float(max(rc.pes * total_cycles - macs, 0)), 0.0, prec, "",
         0.0, word_bits))
    # array-side SRAM traffic
    acc_bits = psum_bits if row_folds > 1 and dataflow != "os" else rc.out_bits
    caps = rc.caps
    for operand, direction, key, wb in (("input", "read", "sram_ifmap_reads", word_bits),
                                        ("weight", "read", "sram_filter_reads", word_bits),
                                        ("output", "write", "sram_ofmap_writes", acc_bits),
                                        ("psum", "read", "sram_ofmap_reads", psum_bits)):
        n = words[key]
        add((name, "sram", operand, direction, float(n), float(n * wb), prec, "",
             caps[operand], wb))
    # DRAM <-> SRAM transfers (what the DMA queue moved)
    for (operand, direction), nbytes in moved.items():
        bits = float(nbytes * BITS_PER_BYTE)
        wb = rc.widths[operand]
        count = float(bits / wb if wb else 0)
        add((name, "dram", operand, direction, count, bits, prec, rc.technology, 0.0, wb))
        # the other end of the same transfer, in the SRAM buffer
        add((name, "sram", operand, "write" if direction == "read" else "read", count,
             bits, prec, "", caps[operand], wb))


def action_records(machine: Any, runs: list[LayerRun]) -> list[tuple]:
    """The action records of every layer as tuples of :data:`ACTION_KEYS`, in layer order,
    before :func:`actions_table` merges equal ones (what batch energy pricing sums)."""
    rc = record_context(machine)
    prec, word_bits, caps = rc.precision, rc.word_bits, rc.caps
    recs: list[tuple] = []
    add = recs.append
    for run in runs:
        name = run.plan.name
        if isinstance(run.plan, VectorPlan):
            add((name, "vector", "-", "compute", float(run.plan.flops), 0.0, prec, "", 0.0,
                 word_bits))
            for (operand, direction), nbytes in run.moved_bytes.items():
                if nbytes:
                    bits = float(nbytes * BITS_PER_BYTE)
                    count = float(bits / word_bits)
                    cap = caps["output"] if operand == "output" else caps["input"]
                    add((name, "dram", operand, direction, count, bits, prec, rc.technology,
                         0.0, word_bits))
                    add((name, "sram", operand, "write" if direction == "read" else "read",
                         count, bits, prec, "", cap, word_bits))
            continue
        g = run.plan.geometry
        array_layer_records(rc, add, name, run.plan.macs, run.schedule.end,
                            layer_sram_words(run.plan), g.row_folds, g.dataflow,
                            run.moved_bytes)
    return recs


def actions_table(machine: Any, runs: list[LayerRun]) -> pd.DataFrame:
    """Action records (see the API contract) for every layer: what the energy model prices.

    Counts are conserved: the bytes read from DRAM for an operand are the bytes written into
    its SRAM buffer, and the outputs drained to DRAM are read out of the ofmap buffer.
    """
    recs = action_records(machine, runs)
    df = pd.DataFrame(recs, columns=list(ACTION_KEYS))
    if not df.empty:
        df = df.groupby(["layer", "level", "operand", "direction", "precision", "technology",
                         "capacity_bytes", "word_bits"],
                        sort=False, as_index=False)[["count", "bits"]].sum()
        df = df[list(ACTION_KEYS)]
        df = df[(df["count"] > 0) | (df["direction"] == "compute")].reset_index(drop=True)
    return df


def precision_bits(precision: str) -> float:
    """Bits per word of a precision name."""
    return PRECISION_BYTES[precision] * BITS_PER_BYTE
