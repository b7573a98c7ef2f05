"""Seed cases of kind ``amdahl`` (computed with :mod:`accelsim.analysis.amdahl`), and the
cases no accelsim model reproduces, with the reason.

Imports: analysis.
"""

from __future__ import annotations

import math

from accelsim.analysis import amdahl as am
from accelsim.validation.seed_cases import CaseContext, case, not_reproducible


@case("AMD-T1.1")
def _amdt11(c: CaseContext) -> None:
    c.check("speedup_max_x", am.amdahl_speedup(c.inputs["p"], math.inf), via="amdahl")


@case("LH1.1a")
def _lh11a(c: CaseContext) -> None:
    i = c.inputs
    c.check("G_accel_x", am.path_speedup(i["H100_INT8_TOPS"], i["ref_CPU_TOPS"]), via="amdahl")
    c.check("speedup_x", am.amdahl_speedup(i["p"], i["G_accel"]), via="amdahl")
    c.check("speedup_limit_x", am.amdahl_limit(i["p"]), via="amdahl")


@case("LH1.1b")
def _lh11b(c: CaseContext) -> None:
    i = c.inputs
    c.check("speedup_x", am.amdahl_speedup(i["p"], i["G_accel"]), via="amdahl")
    c.check("speedup_limit_x", am.amdahl_limit(i["p"]), via="amdahl")


@case("FN-AMD20")
def _fnamd20(c: CaseContext) -> None:
    c.check("speedup_max_x", am.fixed_serial_scaling(c.inputs["serial_fraction"]), via="amdahl")


not_reproducible("FIG6", "headline marketing peaks of mixed precisions (dense and sparse); the "
                         "span's base, K20X fp32, and M40/P40/B200 have no configs")
not_reproducible("T8", "list prices: accelsim has no cost model")
not_reproducible("GAP", "a demand/supply trend illustration, not a simulator target")
not_reproducible("TPUV1-EFF", "published measurement (Jouppi 2017) over six production workloads; "
                              "accelsim has a TPUv1 config but no K80 or Haswell-server configs "
                              "and not the workloads")
not_reproducible("ASIC", "qualitative perf/W band for crypto/genomics ASICs")
not_reproducible("S000-MKB", "no problem size or dtype given (case file C#17)")
not_reproducible("S002-HET", "measured co-training throughput and power of an unspecified "
                             "GPU+NPU setup; the placement model times splits but has no power "
                             "model, and the case names no machines")
not_reproducible("R50-COMPILE", "ratio of two measured latencies; no compiler-pipeline model")
not_reproducible("DEV-INV", "transistor/core/tile inventory of devices accelsim does not model")
