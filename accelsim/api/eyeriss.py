"""Eyeriss against the chip: the JSSC 2017 measurements, the model's predictions, the errors.

``accelsim/data/eyeriss_jssc2017.json`` holds the measured Table V of Chen et al., JSSC 2017
(AlexNet CONV layers, batch 4, 1 V, 200 MHz) with its source. :func:`validation_table` runs
the same layers on ``configs/hardware/eyeriss.yaml`` with the row-stationary dataflow, taking
the measured zero fractions of the ifmaps as the sparsity input, and puts predicted and
measured side by side:

* latency: ``total_latency_ms`` (the chip waits for ifmap/ofmap DRAM transfers) and
  ``processing_latency_ms`` (DRAM overlapped: the engine's schedule);
* power: chip energy (every level but DRAM) / total latency, in mW;
* DRAM accesses per MAC (16-bit accesses, after run-length coding) and global-buffer MB.

:func:`fit_dram_rate` gives the DRAM interface rate that reproduces CONV1's wait for its
ifmap/ofmap transfers (the machine's third calibrated constant), and
:func:`fit_power_constants` solves for the two calibrated constants of
``configs/energy/eyeriss_65nm.yaml`` (the MAC energy ``u`` that scales every ISCA 2016 ratio,
and the clock/leakage energy per PE-cycle) from the power of the layers named, so a reader can
check the table was fitted on CONV1 and CONV5 only.

:func:`vgg16_heldout` compares the VGG-16 totals the paper reports (nothing fitted on them;
dev data since their gap guided the full-height PE-set rule, ``scripts/data/REGISTRY.yaml``).

:func:`dataflow_energy` reproduces the ISCA 2016 comparison: AlexNet CONV layers under the
same on-chip storage (the systolic dataflows get the scratchpad bytes added to their global
buffer), dense data, no compression, energy per MAC by level, for rs, ws, os, nlr (the ISCA
set) and is.

Imports: report.energy, workload.ops, api.simulate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim.api.simulate import load_hw, simulate
from accelsim.report.energy import compute_energy, energy_table_for
from accelsim.workload.ops import Conv2d, Workload

DATA = resources.files("accelsim") / "data" / "eyeriss_jssc2017.json"
"""The measured table, shipped in the package (read through :mod:`importlib.resources`)."""


def load_measurements(path: str | Path | None = None) -> dict[str, Any]:
    """The JSSC 2017 data file as a dict (default: the packaged :data:`DATA`)."""
    return json.loads(DATA.read_text() if path is None else Path(path).read_text())


def conv_workload(name: str, layers: Iterable[dict[str, Any]], batch: int) -> Workload:
    """:class:`Conv2d` ops from the data file's layer shapes, at ``batch`` images."""
    ops = tuple(Conv2d(name=d["name"], n=int(batch), c=d["c"], h=d["h"], w=d["w"], k=d["k"],
                       r=d["r"], s=d["s"], stride=d["stride"], pad=d["pad"], groups=d["groups"])
                for d in layers)
    return Workload(name, ops)


def alexnet_workload(data: dict[str, Any]) -> Workload:
    """AlexNet's CONV layers at the paper's batch size, as :class:`Conv2d` ops."""
    return conv_workload("alexnet_conv_jssc2017", data["network"]["layers"], data["batch"])


def _vgg16_run(data: dict[str, Any], hw: Any, *, energy: bool = True) -> Any:
    """VGG-16's CONV layers at batch 3 on ``hw`` (row stationary, analytic), the ifmap zeros
    of every layer after the first as the data file assumes them."""
    v = data["vgg16_heldout"]
    wl = conv_workload("vgg16_conv", v["layers"], v["batch"])
    zeros = {op.name: (0.0 if i == 0 else v["ifmap_zero_fraction_assumed"])
             for i, op in enumerate(wl.ops)}
    return simulate(load_hw(hw), wl, dataflow="rs", mode="analytic", energy=energy,
                    sparsity=zeros)


def vgg16_heldout(data: dict[str, Any], hw: Any = "eyeriss") -> pd.DataFrame:
    """VGG-16 totals (JSSC 2017 Sec. VI-B), predicted vs measured; nothing was fitted on them
    (dev data: their frame-rate gap guided the search for ``network.full_height_sets``).

    The ifmap zero fraction of every layer after the first is an assumption stated in the
    data file (Table VI's per-layer zeros are not transcribed).
    """
    v = data["vgg16_heldout"]
    r = _vgg16_run(data, hw)
    time_s = float(r.layers["time_s"].sum())
    chip_pj = float(r.energy.priced.loc[r.energy.priced["level"] != "dram", "pj"].sum())
    dram = float(r.layers["dram_bytes"].sum())
    pred = {"frames_per_s": v["batch"] / time_s, "power_mw": chip_pj * 1e-9 / time_s,
            "dram_accesses_mb": dram / 1e6,
            "dram_access_per_mac": dram / 2 / float(r.layers["macs"].sum())}
    return pd.DataFrame([{"quantity": k, "pred": p, "meas": v["measured"][k],
                          "err": p / v["measured"][k] - 1.0} for k, p in pred.items()])


def vgg16_layers(data: dict[str, Any], hw: Any = "eyeriss") -> pd.DataFrame:
    """VGG-16 per layer (JSSC 2017 Table VI, ``vgg16_heldout.measured_layers``; dev, nothing
    fitted): predicted vs measured processing and total latency (ms), GLB and DRAM accesses
    (MB), active PEs, and the measured GLB rate (GB/s: accesses over processing latency).
    A measured cell the data file marks unreadable is NaN."""
    v = data["vgg16_heldout"]
    r = _vgg16_run(data, hw, energy=False)
    lay = r.layers.set_index("layer")
    clock = r.machine.clock_hz
    rows = []
    for m in v["measured_layers"]:
        p = lay.loc[m["layer"]]
        nan = float("nan")
        rows.append({
            "layer": m["layer"],
            "processing_ms_pred": float(p["processing_cycles"]) / clock * 1e3,
            "processing_ms_meas": m["processing_latency_ms"],
            "total_ms_pred": float(p["total_cycles"]) / clock * 1e3,
            "total_ms_meas": m["total_latency_ms"],
            "glb_mb_pred": float(p["sram_reads"] + p["sram_writes"]) * 2 / 1e6,
            "glb_mb_meas": m["glb_accesses_mb"],
            "dram_mb_pred": float(p["dram_bytes"]) / 1e6,
            "dram_mb_meas": nan if m["dram_accesses_mb"] is None else m["dram_accesses_mb"],
            "active_pes_pred": int(p["active_pes"]), "active_pes_meas": m["active_pes"],
            "glb_gb_per_s_meas": m["glb_accesses_mb"] / m["processing_latency_ms"],
        })
    return pd.DataFrame(rows)


def _sparsity(data: dict[str, Any]) -> dict[str, float]:
    return {m["layer"]: m["ifmap_zeros_pct"] / 100.0 for m in data["measured"]}


def predict(data: dict[str, Any], hw: Any = "eyeriss", *, table: Any = None) -> pd.DataFrame:
    """Per layer: predicted latency (ms), chip power (mW), DRAM and GLB accesses."""
    machine = load_hw(hw)
    r = simulate(machine, alexnet_workload(data), dataflow="rs", mode="analytic", energy=False,
                 sparsity=_sparsity(data))
    rep = compute_energy(r.actions, r.layers, r.machine, table or energy_table_for(r.machine))
    chip = rep.priced[rep.priced["level"] != "dram"].groupby("layer", sort=False)["pj"].sum()
    lay = r.layers.set_index("layer")
    clock = r.machine.clock_hz
    out = pd.DataFrame({
        "total_latency_ms": lay["total_cycles"] / clock * 1e3,
        "processing_latency_ms": lay["processing_cycles"] / clock * 1e3,
        "power_mw": chip / lay["time_s"] * 1e-9,
        "dram_accesses_mb": lay["dram_bytes"] / 1e6,
        "dram_access_per_mac": lay["dram_bytes"] / 2 / lay["macs"],
        "glb_accesses_mb": (lay["sram_reads"] + lay["sram_writes"]) * 2 / 1e6,
        "active_pes": lay["active_pes"],
        "macs_m": lay["macs"] / 1e6,
    })
    mapping = lay[[c for c in lay.columns if c.startswith("rs_")]]
    return out.join(mapping).rename_axis("layer").reset_index()


def validation_table(data: dict[str, Any], hw: Any = "eyeriss") -> pd.DataFrame:
    """Predicted vs measured per layer and in total; ``*_err`` are relative errors."""
    pred = predict(data, hw).set_index("layer")
    meas = pd.DataFrame(data["measured"]).set_index("layer")
    meas["dram_access_per_mac"] = meas["dram_accesses_mb"] / 2 / meas["macs_m"]
    rows = []
    keys = ("total_latency_ms", "processing_latency_ms", "power_mw", "dram_access_per_mac",
            "glb_accesses_mb", "active_pes")
    for layer in meas.index:
        row: dict[str, Any] = {"layer": layer}
        for k in keys:
            row[f"{k}_pred"] = float(pred.loc[layer, k])
            row[f"{k}_meas"] = float(meas.loc[layer, k])
            row[f"{k}_err"] = row[f"{k}_pred"] / row[f"{k}_meas"] - 1.0
        rows.append(row)
    tot: dict[str, Any] = {"layer": "total"}
    t = data["totals"]
    lat_p = float(pred["total_latency_ms"].sum())
    energy = float((pred["power_mw"] * pred["total_latency_ms"]).sum())
    sums = {"total_latency_ms": (lat_p, t["total_latency_ms"]),
            "processing_latency_ms": (float(pred["processing_latency_ms"].sum()),
                                      t["processing_latency_ms"]),
            "power_mw": (energy / lat_p, t["power_mw"]),
            "dram_access_per_mac": (float(pred["dram_accesses_mb"].sum()) / 2
                                    / float(pred["macs_m"].sum()), t["dram_access_per_mac"]),
            "glb_accesses_mb": (float(pred["glb_accesses_mb"].sum()), t["glb_accesses_mb"]),
            "active_pes": (float((pred["active_pes"] * pred["total_latency_ms"]).sum() / lat_p),
                           float((meas["active_pes"] * meas["total_latency_ms"]).sum()
                                 / meas["total_latency_ms"].sum()))}
    for k, (p, m) in sums.items():
        tot[f"{k}_pred"], tot[f"{k}_meas"], tot[f"{k}_err"] = p, m, p / m - 1.0
    rows.append(tot)
    return pd.DataFrame(rows)


def fit_power_constants(data: dict[str, Any], layers: Iterable[str] = ("CONV1", "CONV5"),
                        hw: Any = "eyeriss") -> dict[str, float]:
    """``{"mac_pj": u, "pe_per_cycle_pj": k}`` that reproduce the measured power of ``layers``.

    Chip energy is linear in both: every dynamic action costs a fixed ISCA 2016 multiple of
    ``u`` (RF 1, array network 2, global buffer 6 per 16-bit word) and every PE-cycle ``k``;
    two layers give two equations (more are solved by least squares).
    """
    import numpy as np

    base = energy_table_for(load_hw(hw))
    u1 = {"mac.int16": "1 pJ", "rf.read": f"{1 / 16} pJ", "rf.write": f"{1 / 16} pJ",
          "noc": f"{2 / 16} pJ", "sram.read": "6 pJ", "sram.write": "6 pJ", "leak.pe": "0 pJ"}
    dyn = predict(data, hw, table=base.with_overrides(u1)).set_index("layer")
    clk = predict(data, hw, table=base.with_overrides(
        {**{k: "0 pJ" for k in u1}, "leak.pe": "1 pJ"})).set_index("layer")
    meas = pd.DataFrame(data["measured"]).set_index("layer")
    names = list(layers)
    a = np.array([[dyn.loc[n, "power_mw"], clk.loc[n, "power_mw"]] for n in names])
    b = np.array([meas.loc[n, "power_mw"] for n in names], dtype=float)
    (u, k), *_ = np.linalg.lstsq(a, b, rcond=None)
    return {"mac_pj": float(u), "pe_per_cycle_pj": float(k)}


def fit_dram_rate(data: dict[str, Any], layer: str = "CONV1", hw: Any = "eyeriss") -> float:
    """DRAM interface bytes/s at which ``layer``'s ifmap/ofmap transfers (which the chip does
    not overlap) take the measured total - processing latency."""
    machine = load_hw(hw)
    pred = predict(data, machine).set_index("layer")
    meas = pd.DataFrame(data["measured"]).set_index("layer")
    wait_s = (pred.loc[layer, "total_latency_ms"] - pred.loc[layer, "processing_latency_ms"]) / 1e3
    fmap_bytes = wait_s * machine.memory.dram.sustained_bytes_per_s
    measured_wait_s = (meas.loc[layer, "total_latency_ms"]
                       - meas.loc[layer, "processing_latency_ms"]) / 1e3
    return float(fmap_bytes / measured_wait_s)


def dataflow_energy(data: dict[str, Any], flows: Iterable[str] = ("rs", "ws", "os", "nlr", "is"),
                    hw: Any = "eyeriss", layers: Iterable[str] | None = None) -> pd.DataFrame:
    """ISCA 2016-style comparison: pJ per MAC by level for each dataflow, same storage budget.

    Dense data and no run-length coding for every dataflow (the ISCA analysis); os/ws/is run
    the same 12 x 14 PEs as a systolic array, nlr (no local reuse) as PEs that keep nothing;
    their global buffer also gets the bytes the scratchpads take in row-stationary. ``layers``: a
    subset of the CONV layers (default all).
    """
    machine = load_hw(hw)
    sp = machine.array.scratchpads
    spad_total = machine.array.pes * (sp.filter_bytes + sp.ifmap_bytes + sp.psum_bytes)
    wl = alexnet_workload(data)
    if layers is not None:
        keep = set(layers)
        wl = Workload(wl.name, tuple(op for op in wl.ops if op.name in keep))
    rows = []
    for flow in flows:
        over: dict[str, Any] = {"compute.array.network.rlc": False,
                                "compute.array.network.zero_gating": False}
        if flow != "rs":
            over["memory.sram.capacity_bytes"] = machine.memory.sram.capacity_bytes + spad_total
        m = load_hw(hw, over) if isinstance(hw, str) else load_hw("eyeriss", over)
        r = simulate(m, wl, dataflow=flow, mode="analytic")
        s = r.energy.summary
        row = {"dataflow": flow, "pj_per_mac": s["pj_per_mac"],
               "cycles": int(r.layers["total_cycles"].sum()),
               "glb_bytes": m.memory.sram.capacity_bytes}
        for lv, pj in s["by_level_pj"].items():
            row[f"{lv}_pj_per_mac"] = pj / s["macs"]
        rows.append(row)
    out = pd.DataFrame(rows).fillna(0.0)
    rs = out.loc[out["dataflow"] == "rs", "pj_per_mac"]
    if len(rs):
        out["vs_rs"] = out["pj_per_mac"] / float(rs.iloc[0])
    return out
