"""Fit the two GPU power constants of the energy tables on the H200's measured power.

    PYTHONPATH=. python scripts/fit/fit_gpu_power.py

One measured point each, from two calibration sections of ``scripts/data/h200_heldout.json``
(a dev file otherwise: ``scripts/data/REGISTRY.yaml`` parts ``env`` and ``clock_under_load``,
read through ``data_registry.fit_data``):

* idle: ``nvidia-smi -q -d POWER`` Average Power Draw of the idle card (section ``env``);
  what the table's cell leakage does not cover is ``static.gpu_idle_pe`` (W per tensor-core
  MAC lane);
* dynamic: the median board power over the second half of 2.5 s of back-to-back bf16
  8192^3 GEMMs (``clock_under_load``) minus the idle power; what the itemised actions
  (MACs, register-file and shared-memory staging, L2, HBM) do not cover, over the model's own
  GEMM time, is ``core.gpu_mac`` (pJ per MAC).

Both are fitted at the H200's table (``scaled_5nm``) and written back to the 45 nm base table
(``configs/energy/horowitz_45nm.yaml``, ``core.gpu_mac`` and ``leakage.gpu_idle_pe``) by the
inverse of the scaling law (logic for ``core``, leakage for ``static``), so every scaled table
carries them to its node (``scripts/fit/scale_energy_table.py``). The other GPUs are predictions.
``tests/api/test_power.py`` checks that the shipped tables reproduce this fit.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from accelsim.api.compare import load_platform, run_kernel
from accelsim.config.energy_scaling import ScalingRule
from accelsim.report.energy import energy_table_for
from accelsim.report.power import static_inventory, static_power_w
from accelsim.workload.ops import Gemm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_registry import fit_data  # noqa: E402

SOURCE = "h200_heldout.json"
"""The file of both measured points (its ``env`` and ``clock_under_load`` parts)."""


def measured() -> dict[str, float]:
    """``idle_w``, ``gemm_w`` (median under load), ``gemm_s`` (per call) and the GEMM side."""
    env = fit_data(SOURCE, part="env")["sections"]["env"]["nvidia-smi -q -d CLOCK,POWER"]
    idle = re.search(r"GPU Power Readings\s+Average Power Draw\s+:\s+([\d.]+) W", env)
    loads = fit_data(SOURCE, part="clock_under_load")["sections"]["clock_under_load"]
    load = next(x for x in loads if x["load"] == "gemm_bf16_8192")
    return {"idle_w": float(idle.group(1)), "gemm_w": float(load["power_w_median_2nd_half"]),
            "gemm_s": float(load["ms_per_call"]) * 1e-3, "side": 8192}


def fit(name: str = "h200") -> dict[str, float]:
    """The two constants at the machine's table node and at the base table's (45 nm)."""
    meas = measured()
    m = load_platform(name)
    table = energy_table_for(m).with_overrides({"core.gpu_mac": "0 pJ",
                                                "static.gpu_idle_pe": "0 W"})
    n = meas["side"]
    op = Gemm(name="fit", m=n, n=n, k=n, dtype="bf16")
    row = run_kernel(m, op, table=table)
    leak = sum(static_power_w(m, table).values())
    lanes = static_inventory(m)["pes"]
    dyn_items_w = row["energy_j"] / row["time_s"] - leak
    core_pj = (meas["gemm_w"] - meas["idle_w"] - dyn_items_w) * row["time_s"] / op.macs * 1e12
    idle_w = (meas["idle_w"] - leak) / lanes
    base = table.derived_from
    rule = ScalingRule()
    nr = table.node_nm / float(base["node_nm"])
    vr = table.voltage_v / float(base["voltage_v"])
    return {"core_gpu_mac_pj": core_pj, "gpu_idle_pe_w": idle_w,
            "base_core_gpu_mac_pj": core_pj / rule.factor("core", nr, vr),
            "base_gpu_idle_pe_w": idle_w / rule.factor("static", nr, vr),
            "model_gemm_s": row["time_s"], "dyn_items_w": dyn_items_w, **meas}


def main() -> int:
    """Print the fit and the lines for the base table."""
    f = fit()
    for k, v in f.items():
        print(f"{k:>22}: {v:.6g}")
    print(f"\nhorowitz_45nm.yaml:\n  core: gpu_mac: {f['base_core_gpu_mac_pj']:.3g} pJ"
          f"\n  leakage: gpu_idle_pe: {f['base_gpu_idle_pe_w'] * 1e3:.3g} mW")
    return 0


if __name__ == "__main__":
    sys.exit(main())
