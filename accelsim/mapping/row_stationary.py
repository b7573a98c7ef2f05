"""Mapping of a layer onto a spatial (Eyeriss-style) machine with the row-stationary dataflow.

Builds the hardware view (:class:`RsHardware`) from the machine, the convolution view
(:class:`ConvShape`) from the operator (a GEMM runs as a 1x1 convolution: ``m`` images of
``k`` channels, ``n`` filters), asks the ``rs`` strategy for its best mapping, and turns it
into a pass stream the engine replays: every pass loads its share of the layer's DRAM reads
and drains its share of the writes.

**Sparsity** is an input (the data, not the machine): the fraction of zero ifmap values per
layer. With ``network.zero_gating`` a zero ifmap value skips the filter-spad read, the MAC and
the psum update (energy only; the PE still spends the cycle). With ``network.rlc`` feature
maps cross the DRAM interface run-length coded (JSSC Fig. 8: a 5-bit run of zeros, at most 31,
and a 16-bit level; three pairs per 64-bit word), except the first layer's input.

Imports: errors, config.systolic_machine, hw.dataflows, hw.dataflows.row_stationary, workload.ops.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from accelsim.config.systolic_machine import SystolicMachine
from accelsim.errors import ConfigError
from accelsim.hw.dataflows import get as get_dataflow
from accelsim.hw.dataflows.row_stationary import ConvShape, RsCost, RsHardware
from accelsim.workload.ops import Conv2d

RLC_BITS_PER_PAIR = 64 / 3
"""Bits per (run, level) pair: three 21-bit pairs per 64-bit word (JSSC 2017, Fig. 8)."""

RLC_MAX_RUN = 31
"""Longest zero run one pair encodes (5-bit run field)."""


def rlc_ratio(zero_fraction: float, word_bits: float = 16.0) -> float:
    """Coded bits / raw bits of a feature map whose values are zero with ``zero_fraction``.

    Every non-zero value costs one pair; a run longer than 31 zeros costs one extra pair (a
    zero level) per 32 zeros. Zeros are taken as independent (a run exceeds 31 with
    probability ``z^32``).
    """
    z = min(max(zero_fraction, 0.0), 1.0)
    pairs = (1.0 - z) + z * z ** RLC_MAX_RUN / (RLC_MAX_RUN + 1)
    return pairs * RLC_BITS_PER_PAIR / word_bits


def rs_hardware(machine: SystolicMachine, need_scratchpads: bool = True) -> RsHardware:
    """The RS view of ``machine``; one without per-PE scratchpads is a :class:`ConfigError`
    (unless ``need_scratchpads`` is false: no-local-reuse keeps nothing in the PEs)."""
    arr = machine.array
    if arr.scratchpads is None and need_scratchpads:
        raise ConfigError(machine.name, "compute.array.scratchpads", None,
                          "row-stationary (rs) needs per-PE scratchpads (filter, ifmap, psum); "
                          "this machine is a systolic array: use os, ws or is")
    if arr.count != 1:
        raise ConfigError(machine.name, "compute.array.count", arr.count,
                          "row-stationary is modelled on one PE array")
    sp = arr.scratchpads
    net = arr.network
    wb = arr.operand_bytes
    glb = machine.memory.sram.capacity_bytes
    frac = net.fmap_buffer_fraction if net else 1.0
    words = {f: int(getattr(sp, f"{f}_bytes") // wb) if sp else 0
             for f in ("filter", "ifmap", "psum")}
    return RsHardware(
        name=machine.name, rows=arr.rows, cols=arr.cols, filter_spad=words["filter"],
        ifmap_spad=words["ifmap"], psum_spad=words["psum"], glb_fmap=int(glb * frac // wb),
        glb_filter=int(glb * (1 - frac) // wb) if frac < 1 else 0,
        filter_bw=net.filter_words_per_cycle if net else 4.0,
        ifmap_bw=net.ifmap_words_per_cycle if net else 1.0,
        psum_bw=net.psum_words_per_cycle if net else 4.0,
        setup_cycles=net.pass_setup_cycles if net else 0,
        full_height_sets=bool(net and net.full_height_sets))


def conv_shape(op: object) -> ConvShape:
    """The convolution ``op`` computes (a GEMM ``m x k @ k x n`` is a 1x1 convolution)."""
    if isinstance(op, Conv2d):
        h, w = op.h + 2 * op.pad, op.w + 2 * op.pad
        return ConvShape(op.n, op.c // op.groups, op.k // op.groups, h, w, op.r, op.s,
                         op.out_h, op.out_w, op.stride, op.groups, op.h * op.w / (h * w))
    if hasattr(op, "lower"):
        g = op.lower()
        return ConvShape(g.m, g.k, g.n, 1, 1, 1, 1, 1, 1, 1, g.repeat, 1.0)
    raise ConfigError(None, "op", getattr(op, "name", op),
                      f"operator kind '{getattr(op, 'kind', type(op).__name__)}' has no "
                      "row-stationary mapping (only Conv2d and GEMM)")


@dataclass(frozen=True, slots=True)
class RsPlan:
    """One layer's row-stationary plan: the mapping, its pass stream and DRAM bytes."""

    name: str
    op_kind: str
    dataflow: str
    shape: ConvShape
    cost: RsCost
    fold_cycles: int
    ifmap_zero_fraction: float
    ofmap_zero_fraction: float
    dram_bytes: Mapping[tuple[str, str], float]
    serial_io_cycles: int
    """Cycles the array waits for ifmap loads and ofmap stores (0 when they overlap)."""

    arrays = 1
    repeat = 1

    @property
    def macs(self) -> int:
        """MACs of the layer (zeros included)."""
        return self.shape.macs

    @property
    def folds(self) -> int:
        """Processing passes of the layer."""
        return self.cost.passes

    def stream(self) -> tuple[np.ndarray, np.ndarray]:
        """(load bytes, drain bytes) per pass: the layer's DRAM traffic spread evenly."""
        loads = sum(v for (_, d), v in self.dram_bytes.items() if d == "read")
        drains = sum(v for (_, d), v in self.dram_bytes.items() if d == "write")
        n = self.folds
        return np.full(n, loads / n), np.full(n, drains / n)

    def moved(self) -> dict[tuple[str, str], float]:
        """DRAM bytes per operand and direction (after run-length coding)."""
        out = {("input", "read"): 0.0, ("weight", "read"): 0.0, ("psum", "read"): 0.0,
               ("output", "write"): 0.0, ("psum", "write"): 0.0}
        out.update(self.dram_bytes)
        return out


def plan_rs(machine: SystolicMachine, op: object, *, ifmap_zero_fraction: float = 0.0,
            ofmap_zero_fraction: float = 0.0, first_layer: bool = False,
            dataflow: str = "rs") -> RsPlan:
    """Map ``op`` onto ``machine`` with a spatial dataflow (``rs`` or ``nlr``); DRAM bytes
    after RLC where enabled."""
    strategy = get_dataflow(dataflow)
    hw = rs_hardware(machine, strategy.needs_scratchpads)
    net = machine.array.network
    wb = machine.array.operand_bytes
    bits = wb * 8
    rlc = bool(net and net.rlc)
    r_in = 1.0 if (first_layer or not rlc) else min(1.0, rlc_ratio(ifmap_zero_fraction, bits))
    r_out = min(1.0, rlc_ratio(ofmap_zero_fraction, bits)) if rlc else 1.0
    shape = replace(conv_shape(op), ifmap_code_ratio=r_in, ofmap_code_ratio=r_out)
    c = strategy.map(hw, shape)
    w = c.words
    dram = {("input", "read"): w["dram_ifmap"] * wb * r_in,
            ("weight", "read"): w["dram_filter"] * wb,
            ("output", "write"): w["dram_ofmap"] * wb * r_out}
    serial = 0
    if net is not None and not net.overlap_fmap_io:
        fmap = dram[("input", "read")] + dram[("output", "write")]
        serial = int(math.ceil(fmap / machine.dram_bytes_per_cycle))
    return RsPlan(getattr(op, "name", "layer"), getattr(op, "kind", "conv2d"), dataflow, shape, c,
                  int(math.ceil(c.pass_cycles)), float(ifmap_zero_fraction),
                  float(ofmap_zero_fraction), dram, serial)


def zero_fractions(names: list[str], sparsity: Mapping[str, float] | float | None,
                   ) -> list[tuple[float, float]]:
    """(ifmap, ofmap) zero fraction per layer; a layer's ofmap is the next layer's ifmap.

    ``sparsity``: one fraction for every layer, or ``{layer name: ifmap zero fraction}``
    (layers not named are dense); the last layer's ofmap takes its own ifmap fraction.
    """
    if sparsity is None:
        ins = [0.0] * len(names)
    elif isinstance(sparsity, Mapping):
        unknown = [k for k in sparsity if k not in names]
        if unknown:
            raise ConfigError(None, "sparsity", unknown[0],
                              f"no layer of that name (layers: {', '.join(names[:8])}...)")
        ins = [float(sparsity.get(n, 0.0)) for n in names]
    else:
        ins = [float(sparsity)] * len(names)
    for name, z in zip(names, ins):
        if not 0.0 <= z <= 1.0 or z != z:
            raise ConfigError(None, f"sparsity.{name}", z, "must be a fraction within [0, 1]")
    outs = ins[1:] + ins[-1:]
    return list(zip(ins, outs))
