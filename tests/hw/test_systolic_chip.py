"""A systolic chip of several cores (configs/hardware/tpu_v4_chip.yaml, accelsim/mapping/cores.py):
the cores split each GEMM in whole MXU tiles along its larger output dimension and share the
HBM; what an XLA call pays (dispatch, sustained MXU rate, fp16->bf16 conversion, output
drain) adds to the fold stream as the YAML's constants say."""

from __future__ import annotations

import dataclasses
import math

import pytest

from accelsim.api import simulate
from accelsim.config.registry import load_machine
from accelsim.mapping.cores import call_cycles, call_elements, core_piece, core_view
from accelsim.workload.ops import Gemm

OFF = {"call.dispatch_s": 0.0, "call.sustained_array_fraction": 1.0,
       "call.convert_elements_per_cycle": None, "call.output_elements_per_cycle": None}
"""Every call cost switched off: the chip is its cores' fold streams alone."""


def _time(machine, op) -> float:
    return float(simulate(machine, op, mode="analytic", energy=False).totals["time_s"])


def test_the_chip_has_two_cores_of_four_mxus_and_their_peak():
    chip = load_machine("tpu_v4_chip")
    assert chip.compute.cores == 2 and chip.array.count == 4
    assert chip.peak_macs_per_s * 2 == pytest.approx(275.25e12, rel=1e-3)
    core = core_view(chip)
    assert core.compute.cores == 1 and core.call is None
    assert core.memory.dram.bandwidth_bytes_per_s == chip.memory.dram.bandwidth_bytes_per_s / 2


def test_a_gemm_is_cut_in_whole_tiles_along_its_larger_output_dimension():
    chip = load_machine("tpu_v4_chip")
    g = Gemm(name="g", m=384, n=128, k=256)
    assert core_piece(chip, g).m == 256 and core_piece(chip, g).n == 128  # 3 tiles: 2 + 1
    wide = Gemm(name="w", m=128, n=1024, k=256)
    assert core_piece(chip, wide).m == 128 and core_piece(chip, wide).n == 512
    one = Gemm(name="o", m=100, n=100, k=64)
    assert core_piece(chip, one) == dataclasses.replace(one, batch=1)  # one tile: one core
    heads = Gemm(name="h", m=64, n=64, k=64, batch=8, shared_weights=False)
    assert core_piece(chip, heads).batch == 4


def test_without_call_costs_the_chip_is_one_core_running_its_slice_on_half_the_hbm():
    chip = load_machine("tpu_v4_chip", OFF)
    op = Gemm(name="g", m=2048, n=1024, k=1024, dtype="bf16")
    core = core_view(chip)
    assert _time(chip, op) == pytest.approx(_time(core, dataclasses.replace(op, m=1024)),
                                            rel=1e-9)
    r = simulate(chip, op, mode="analytic", energy=False)
    assert r.totals["macs"] == op.macs  # the op's work, not the padded slices'


def test_each_call_cost_adds_what_its_constant_says():
    base = load_machine("tpu_v4_chip", OFF)
    op16 = Gemm(name="g", m=1024, n=1024, k=512, dtype="fp16")
    op_bf = dataclasses.replace(op16, dtype="bf16")
    t0 = _time(base, op16)
    assert _time(base, op_bf) == pytest.approx(t0)
    with_dispatch = load_machine("tpu_v4_chip", {**OFF, "call.dispatch_s": 2e-6})
    assert _time(with_dispatch, op16) - t0 == pytest.approx(2e-6, abs=2 / base.clock_hz)
    conv = load_machine("tpu_v4_chip", {**OFF, "call.convert_elements_per_cycle": 100.0})
    part = core_piece(conv, op16)
    converted, drained = call_elements(conv, part)
    assert converted == part.m * part.k + part.k * part.n and drained == part.m * part.n
    assert _time(conv, op16) - t0 == pytest.approx(converted / 100.0 / conv.clock_hz,
                                                   abs=2 / conv.clock_hz)
    assert _time(conv, op_bf) == pytest.approx(t0)  # bf16 on bf16 MXUs: nothing to convert
    slow = load_machine("tpu_v4_chip", {**OFF, "call.sustained_array_fraction": 0.5})
    assert _time(slow, op_bf) > 1.5 * t0
    assert call_cycles(base, part) == 0.0


def test_the_fitted_chip_is_no_faster_than_its_peak_and_a_small_gemm_pays_its_floor():
    chip = load_machine("tpu_v4_chip")
    big = Gemm(name="b", m=4096, n=4096, k=4096, dtype="fp16")
    assert big.flops / _time(chip, big) < 2 * chip.peak_macs_per_s
    tiny = Gemm(name="t", m=128, n=128, k=128, dtype="fp16")
    assert _time(chip, tiny) > 20 * tiny.flops / (2 * chip.peak_macs_per_s)
    assert math.isfinite(_time(chip, tiny))


def test_the_chips_utilisation_is_over_all_its_cores():
    """Totals count every core's PEs (it printed 114 % on a 4096^3 GEMM when one core's PEs were
    the denominator): util = MACs / (chip peak MACs/s x time), at most 1, per layer and total."""
    chip = load_machine("tpu_v4_chip")
    r = simulate(chip, Gemm(name="g", m=4096, n=4096, k=4096), mode="analytic", energy=False)
    t = r.totals
    assert t["overall_util"] == pytest.approx(t["macs"] / (chip.peak_macs_per_s * t["time_s"]),
                                              rel=1e-6)
    assert 0 < t["overall_util"] <= 1
    assert t["overall_util"] == pytest.approx(float(r.layers["overall_util"].iloc[0]), rel=1e-6)
