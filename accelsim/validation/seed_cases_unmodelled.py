"""Seed cases no accelsim model reproduces, with the reason (published measurements, prices,
trends, qualitative prose).

Imports: validation.seed_cases.
"""

from __future__ import annotations

from accelsim.validation.seed_cases import not_reproducible

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
