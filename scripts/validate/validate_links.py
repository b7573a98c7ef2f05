"""Hold the link model against measured H200 copy curves (and, held out, NCCL collectives).

    PYTHONPATH=. python scripts/validate/validate_links.py [OPTION]

    (no option)  tables + pass/fail, exit 1 on a miss
    --fit        refit the calibrated copy constants
    --fit-nccl   refit the 3 collective constants

Calibration set (``scripts/data/h200_copy_curves.json``, copied from
``shared/reference/h200/calibration.json``): pinned host->device and device->host, pageable
host->device, and GPU->GPU peer copies, 1 KiB .. 1 GiB, each the median per-call time of copies
queued back to back between CUDA events. The model's prediction for such a loop is
``max(issue_s, copy time)`` per call (pinned, peer) and the synchronous pageable copy time.
Targets: <= 10 % error at >= 1 MiB, <= 25 % below.

NCCL calibration set (``scripts/data/h200x2_nccl_protocols.json``,
``scripts/measure/nccl_protocols.py``): collectives with NCCL_PROTO forced to LL / LL128 / Simple
and channel counts forced, GPU-side and per-call times. Three constants of the ``nccl`` collective
model come from it (per-channel SM throughput, channel/link saturation exponent, host issue time;
``--fit-nccl``); the rest are NCCL's published design constants. Its ``default`` configuration
(NCCL's own choice) is shown for the protocol NCCL picks, never fitted.

Held out (``scripts/data/h200x2_collectives.json``, measured by
``scripts/measure/heldout_ops_links.py`` on two H200s; never fitted;
``scripts/data/REGISTRY.yaml``): NCCL all-reduce/all-gather/reduce-scatter/all-to-all per call
(default protocol), and a host-timed peer-copy curve including both directions at once. Collective
targets (:data:`COLLECTIVE_TARGETS`): MAPE <= 10 % at >= 1 MiB, <= 25 % below, over the four
collectives, in the exit code. Today the >= 1 MiB figure misses it (12.0 %,
``accelsim/hw/LINKS.md``), so the script exits 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import sys
from pathlib import Path

import numpy as np

from accelsim.api import links as api
from accelsim.config.system import NCCL_PROTOCOLS
from accelsim.hw import link as hw
from accelsim.hw import nccl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data_registry import fit_data  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
NCCL_DATA = DATA / "h200x2_nccl_protocols.json"
MIB = 2**20
COPY_TARGETS = (0.10, 0.25)
"""Per-point |error| targets of the calibration copy curves at >= 1 MiB and below (LINKS.md,
"Targets: <= 10 % error at >= 1 MiB, <= 25 % below")."""
COLLECTIVE_TARGETS = (0.10, 0.25)
"""MAPE targets of the held-out collectives at >= 1 MiB and below (LINKS.md: "Collective
target (issue 12): MAPE <= 10 % at >= 1 MiB, <= 25 % below")."""
FORCED = ("LL", "LL128", "Simple")
"""Configurations of the NCCL calibration set whose per-call floors set ``issue_s``."""
NCCL_NAMES = {"AllReduce": "allreduce", "AllGather": "allgather", "ReduceScatter": "reducescatter"}


def _row(n: float, measured: float, predicted: float) -> dict:
    err = predicted / measured - 1
    limit = COPY_TARGETS[0] if n >= MIB else COPY_TARGETS[1]
    return {"bytes": int(n), "measured_us": measured * 1e6, "predicted_us": predicted * 1e6,
            "err": err, "ok": abs(err) <= limit}


def calibration_tables(system: str = "h200x2") -> dict[str, list[dict]]:
    """Measured vs predicted per-call times for the four calibration curves."""
    data = json.loads((DATA / "h200_copy_curves.json").read_text())
    tables: dict[str, list[dict]] = {"h2d_pinned": [], "d2h_pinned": [], "h2d_pageable": [],
                                     "p2p": []}
    for r in data["pcie_host_device"]:
        n = r["bytes"]
        h2d = api.transfer(system, "host", "gpu0", n)
        d2h = api.transfer(system, "gpu0", "host", n)
        pg = api.transfer(system, "host", "gpu0", n, pageable=True)
        tables["h2d_pinned"].append(_row(n, r["h2d_pinned_ms"] * 1e-3, h2d["back_to_back_s"]))
        tables["d2h_pinned"].append(_row(n, r["d2h_pinned_ms"] * 1e-3, d2h["back_to_back_s"]))
        tables["h2d_pageable"].append(_row(n, r["h2d_pageable_ms"] * 1e-3, pg["back_to_back_s"]))
    for r in data["p2p_gpu_gpu"]["copies"]:
        p = api.transfer(system, "gpu0", "gpu1", r["bytes"])
        tables["p2p"].append(_row(r["bytes"], r["ms"] * 1e-3, p["back_to_back_s"]))
    return tables


def heldout_tables(system: str = "h200x2") -> dict[str, list[dict]]:
    """Held-out comparisons (collectives, host-timed peer copies); empty if not measured."""
    path = DATA / "h200x2_collectives.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    out: dict[str, list[dict]] = {}
    for r in data.get("collectives", []):
        pred = api.collective(system, r["op"], r["bytes"])
        row = _row(r["bytes"], r["time_s"], pred["back_to_back_s"])
        row.update(measured_busbw=r["busbw_GBps"], predicted_busbw=pred["busbw_gbps"])
        out.setdefault(r["op"], []).append(row)
    for r in data.get("p2p", {}).get("copies", []):
        p = api.transfer(system, "gpu0", "gpu1", r["bytes"])
        out.setdefault("p2p_host_timed", []).append(_row(r["bytes"], r["d0_to_d1_s"],
                                                         p["back_to_back_s"]))
        # both directions, two calls per iteration. NVLink is full duplex, but PyTorch's
        # cross-device copy makes each device's current stream wait for the other's, so the
        # two copies run one after the other: the iteration costs max(2 issues, 2 copies).
        route = hw.find_route(api.get_system(system), "gpu0", "gpu1")
        both = 2 * max(route.issue_s, hw.copy_time_s(route, r["bytes"]))
        out.setdefault("p2p_bidirectional", []).append(_row(r["bytes"], r["bidirectional_s"], both))
    return out


def print_table(name: str, rows: list[dict], *, targets: bool = True) -> None:
    """Print one table as aligned text."""
    print(f"\n{name}")
    extra = "busbw meas/pred GB/s" if rows and "measured_busbw" in rows[0] else ""
    print(f"{'bytes':>12} {'measured us':>12} {'predicted us':>13} {'error':>8}  {extra}")
    for r in rows:
        flag = "" if not targets else ("" if r["ok"] else "  MISS")
        bus = (f"  {r['measured_busbw']:.1f} / {r['predicted_busbw']:.1f}"
               if "measured_busbw" in r else "")
        print(f"{r['bytes']:>12} {r['measured_us']:>12.2f} {r['predicted_us']:>13.2f} "
              f"{r['err'] * 100:>+7.1f}%{bus}{flag}")
    big, small = _mape(rows)
    print(f"  max |error|: >= 1 MiB {big[1] * 100:.1f}%  < 1 MiB {small[1] * 100:.1f}%   "
          f"MAPE: >= 1 MiB {big[0] * 100:.1f}%  < 1 MiB {small[0] * 100:.1f}%")


def _mape(rows: list[dict]) -> tuple[tuple[float, float], tuple[float, float]]:
    """(mean, max) of |error| at >= 1 MiB and below."""
    out = []
    for sel in (lambda n: n >= MIB, lambda n: n < MIB):
        e = [abs(r["err"]) for r in rows if sel(r["bytes"])]
        out.append((float(np.mean(e)), max(e)) if e else (math.nan, math.nan))
    return out[0], out[1]


# --- NCCL collectives: forced protocols / channels (calibration), NCCL's own choice ------------
def _with(system, **changes):
    """``system`` with some collective parameters changed."""
    return dataclasses.replace(system,
                               collectives=dataclasses.replace(system.collectives, **changes))


def _configured(system, env: dict):
    """The system as one configuration of the NCCL data ran it (forced channel count)."""
    ch = env.get("NCCL_MAX_NCHANNELS")
    return _with(system, channels=int(ch), p2p_channels=int(ch)) if ch else system


def nccl_gpu_tables(system: str = "h200x2") -> dict[str, list[dict]]:
    """GPU-side time per collective call, measured vs the nccl model, per configuration."""
    if not NCCL_DATA.exists():
        return {}
    data = json.loads(NCCL_DATA.read_text())
    base = api.get_system(system)
    out: dict[str, list[dict]] = {}
    for name, cfg in data["configs"].items():
        env = cfg.get("env", {})
        s = _configured(base, env)
        algo = "tree" if env.get("NCCL_ALGO") == "Tree" else None
        for r in cfg["results"]:
            proto = env.get("NCCL_PROTO") if r["op"] != "alltoall" else None  # P2P ignores it
            pred = api.collective(s, r["op"], r["bytes"], algo=algo,
                                  protocol=proto if proto in NCCL_PROTOCOLS else None)
            row = _row(r["bytes"], r["gpu_s"], pred["time_s"])
            row.update(op=r["op"], protocol=pred["protocol"], channels=pred["channels"])
            out.setdefault(name, []).append(row)
    return out


def protocol_choices(system: str = "h200x2") -> list[dict]:
    """NCCL's logged (protocol, channels) per call size against the model's choice."""
    if not NCCL_DATA.exists():
        return []
    cfg = json.loads(NCCL_DATA.read_text())["configs"].get("default", {})
    s = api.get_system(system)
    rows = {}
    for choices in cfg.get("nccl_log", {}).get("choices", {}).values():
        for line in choices:
            m = re.match(r"(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) "
                         r"channel\{Lo..Hi\}=\{(\d+)..(\d+)\}", line)
            if not m or m.group(1) not in NCCL_NAMES:
                continue
            op, per = NCCL_NAMES[m.group(1)], int(m.group(2))
            total = per * (1 if op == "allreduce" else 2)   # NCCL logs the per-rank count
            if total < 1024:
                continue
            pred = api.collective(s, op, total)
            rows[(op, total)] = {"op": op, "bytes": total, "nccl_protocol": m.group(4).capitalize()
                                 .replace("Ll128", "LL128").replace("Ll", "LL"),
                                 "nccl_channels": int(m.group(6)) - int(m.group(5)) + 1,
                                 "model_protocol": pred["protocol"],
                                 "model_channels": pred["channels"]}
    return [rows[k] for k in sorted(rows)]


def fit_nccl(system: str = "h200x2") -> dict[str, float]:
    """The three calibrated constants of the nccl model, from the forced-protocol runs only."""
    data = fit_data("h200x2_nccl_protocols.json")["configs"]
    ch1 = [r for r in data["Simple_ch1"]["results"] if r["op"] != "alltoall"]
    rates = [nccl.link_bytes_per_rank(r["op"], "ring", r["bytes"], 2) / r["gpu_s"]
             * nccl.sm_bytes_per_link_byte(r["op"], "ring", 2) for r in ch1]
    sm = float(np.exp(np.mean(np.log(rates))))
    base = _with(api.get_system(system), sm_bytes_per_s=sm)
    sweep = [(base if "NCCL_MAX_NCHANNELS" not in c["env"] else _configured(base, c["env"]), r)
             for name, c in data.items()
             if name in ("Simple", "Simple_ch8", "Simple_ch16", "Simple_ch32")
             for r in c["results"] if r["bytes"] >= MIB and r["op"] != "alltoall"]

    def mape(k: float) -> float:
        return float(np.mean([abs(api.collective(_with(s, saturation_exponent=k), r["op"],
                                                 r["bytes"], protocol="Simple")["time_s"]
                                  / r["gpu_s"] - 1)
                              for s, r in sweep]))

    k = min(np.arange(1.0, 8.01, 0.1), key=mape)
    floors = [r["eager_s"] for name in FORCED for r in data[name]["results"]
              if r["gpu_s"] < 0.6 * r["eager_s"]]
    return {"sm_bytes_per_s": sm, "saturation_exponent": round(float(k), 2),
            "issue_s": float(np.median(floors)), "issue_p10_s": float(np.percentile(floors, 10)),
            "issue_p90_s": float(np.percentile(floors, 90)), "sweep_mape": mape(k)}


def print_nccl(system: str = "h200x2") -> None:
    """Summaries of the NCCL calibration set and NCCL's protocol choice."""
    tables = nccl_gpu_tables(system)
    if not tables:
        return
    print("\n[NCCL calibration set] GPU-side time per call, model vs measured "
          "(scripts/data/h200x2_nccl_protocols.json)")
    print(f"{'configuration':14s} {'MAPE >=1MiB':>12s} {'max':>7s} {'MAPE <1MiB':>11s} {'max':>7s}")
    for name, rows in tables.items():
        cells = [f"{v * 100:.1f}%" if v == v else "-" for pair in _mape(rows) for v in pair]
        print(f"{name:14s} {cells[0]:>12s} {cells[1]:>7s} {cells[2]:>11s} {cells[3]:>7s}"
              + ("   (NCCL's own choice: not fitted)" if name == "default" else ""))
    rows = protocol_choices(system)
    if rows:
        same = sum(r["nccl_protocol"] == r["model_protocol"] for r in rows)
        print(f"\nprotocol NCCL picked vs the model's choice: {same}/{len(rows)} sizes agree")
        for r in rows:
            flag = "" if r["nccl_protocol"] == r["model_protocol"] else "  DIFFERS"
            print(f"  {r['op']:13s} {r['bytes']:>11d}  NCCL {r['nccl_protocol']:6s} "
                  f"{r['nccl_channels']:2d} ch"
                  f"   model {r['model_protocol']:6s} {r['model_channels']:2d} ch{flag}")


def fit() -> None:
    """Grid-fit the calibrated constants (least squares on log time) and print them."""
    data = fit_data("h200_copy_curves.json")
    s = api.get_system("h200x2")
    pcie, nvl = s.spec("pcie5_x16"), s.spec("nvlink4_x18")
    n = np.array([r["bytes"] for r in data["pcie_host_device"]], float)
    meas = [np.array([r[k] for r in data["pcie_host_device"]]) * 1e-3
            for k in ("h2d_pinned_ms", "d2h_pinned_ms")]
    pg = np.array([r["h2d_pageable_ms"] for r in data["pcie_host_device"]]) * 1e-3

    def curve(spec, lat, eff, issue, sizes):
        wire = sizes + np.ceil(sizes / spec.max_payload_bytes) * spec.overhead_bytes
        return np.maximum(issue, lat + wire / (spec.raw_bytes_per_s * eff))

    best = min((sum(np.sum(np.log(curve(pcie, lat, eff, iss, n) / m) ** 2) for m in meas),
                lat, eff, iss)
                for lat in np.arange(1e-6, 5e-6, 0.1e-6) for eff in np.arange(0.90, 1.0, 0.002)
                for iss in np.arange(3e-6, 6e-6, 0.1e-6))
    _, lat, eff, iss = best
    print(f"PCIe: per-copy latency {lat * 1e6:.2f} us (latency_s + dma_setup_s), "
          f"efficiency {eff:.3f}, issue_s {iss * 1e6:.2f} us")
    bp = pcie.raw_bytes_per_s * eff
    wire = lambda x: x + np.ceil(x / pcie.max_payload_bytes) * pcie.overhead_bytes  # noqa: E731
    best = min((np.sum(np.log((h + n / bm + np.minimum(n, c) / (p / (lat + wire(p) / bp))) / pg)
                       ** 2),
                h, bm, c, p)
                for h in np.arange(4e-6, 14e-6, 0.25e-6) for bm in np.arange(14e9, 20e9, 0.1e9)
                for c in [2**k for k in range(19, 25)] + [3 * MIB, 6 * MIB, 12 * MIB]
                for p in [2**k for k in range(14, 22)])
    _, h, bm, c, p = best
    print(f"pageable: pageable_call_s {h * 1e6:.2f} us, staging_copy {bm / 1e9:.1f} GB/s, "
          f"staging_buffer {c / MIB:.2f} MiB, staging_piece {p / 1024:.0f} KiB")
    gn = np.array([r["bytes"] for r in data["p2p_gpu_gpu"]["copies"]], float)
    gt = np.array([r["ms"] for r in data["p2p_gpu_gpu"]["copies"]]) * 1e-3
    best = min((np.sum(np.log(curve(nvl, lat, eff, iss, gn) / gt) ** 2), lat, eff, iss)
                for lat in np.arange(0, 20e-6, 0.25e-6) for eff in np.arange(0.8, 1.0, 0.002)
                for iss in np.arange(20e-6, 26e-6, 0.1e-6))
    _, lat, eff, iss = best
    print(f"NVLink peer copy: latency {lat * 1e6:.2f} us (2 hops x latency_s + dma_setup_s), "
          f"efficiency {eff:.3f}, issue_s {iss * 1e6:.2f} us")


def fidelity_rows(system: str = "h200x2") -> list[dict]:
    """The fidelity table's rows (``scripts/fidelity.py``), at >= 1 MiB and below: each
    calibration copy curve (target: every point within :data:`COPY_TARGETS`, as :func:`main`
    holds it), the held-out collectives together (:func:`collectives_met`'s MAPE targets) and
    each apart, the host-timed peer copies, and the NCCL calibration set's forced and default
    configurations (no target)."""
    import fidelity

    out = []
    bands = (("≥ 1 MiB", lambda n: n >= MIB, 0), ("< 1 MiB", lambda n: n < MIB, 1))

    def add(source, family, rows, target=None, per_point=False, metric="per-call time"):
        for band, sel, i in bands:
            errs = [100 * r["err"] for r in rows if sel(r["bytes"])]
            if not errs:
                continue
            t = None if target is None else 100 * target[i]
            met = (all(abs(e) <= t for e in errs) if per_point else None) if t is not None else None
            out.append(fidelity.row("validate_links", [source], f"{family} {band}",
                                    errors_pct=errs, target_pct=t, met=met, metric=metric,
                                    note="target per point (every point within it)"
                                    if per_point and t is not None else ""))

    for name, rows in calibration_tables(system).items():
        add("h200_copy_curves.json", name, rows, COPY_TARGETS, per_point=True)
    held = heldout_tables(system)
    coll = [r for n in ("allreduce", "allgather", "reducescatter", "alltoall")
            for r in held.get(n, [])]
    add("h200x2_collectives.json", "collectives, all four", coll, COLLECTIVE_TARGETS)
    for name, rows in held.items():
        add("h200x2_collectives.json", name, rows)
    tables = nccl_gpu_tables(system)
    forced = [r for n, rows in tables.items() if n != "default" for r in rows]
    add("h200x2_nccl_protocols.json", "NCCL forced protocols/channels", forced,
        metric="GPU-side time per call")
    add("h200x2_nccl_protocols.json", "NCCL default choice", tables.get("default", []),
        metric="GPU-side time per call")
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the validation tables; exit 1 if a calibration target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fit", action="store_true", help="refit the calibrated copy constants")
    parser.add_argument("--fit-nccl", action="store_true",
                        help="refit the nccl collective model's 3 constants from the "
                             "forced-protocol runs")
    args = parser.parse_args(argv)
    if args.fit:
        fit()
        return 0
    if args.fit_nccl:
        for key, value in fit_nccl().items():
            print(f"{key}: {value:.4g}")
        return 0
    ok = True
    for name, rows in calibration_tables().items():
        print_table(f"[calibration] h200x2 {name} (per call, back to back)", rows)
        ok &= all(r["ok"] for r in rows)
    held = heldout_tables()
    for name, rows in held.items():
        print_table(f"[held out, not fitted] h200x2 {name}", rows, targets=False)
    print_nccl()
    met = collectives_met(held)
    print("\ncalibration targets (<=10% at >=1 MiB, <=25% below):", "MET" if ok else "MISSED")
    return 0 if ok and met else 1


def collectives_met(held: dict[str, list[dict]]) -> bool:
    """Print the held-out collectives' MAPE against :data:`COLLECTIVE_TARGETS`; whether both
    are met (no collective data: not met, there is nothing to hold the model to)."""
    coll = [r for name in ("allreduce", "allgather", "reducescatter", "alltoall")
            for r in held.get(name, [])]
    if not coll:
        print("\nheld-out collectives: no data (scripts/data/h200x2_collectives.json): MISSED")
        return False
    (big, _), (small, _) = _mape(coll)
    met = big <= COLLECTIVE_TARGETS[0] and small <= COLLECTIVE_TARGETS[1]
    print(f"\nheld-out collectives, all four: MAPE >= 1 MiB {big * 100:.1f}% (target "
          f"{COLLECTIVE_TARGETS[0]:.0%}), < 1 MiB {small * 100:.1f}% (target "
          f"{COLLECTIVE_TARGETS[1]:.0%}): {'MET' if met else 'MISSED'}")
    return met


if __name__ == "__main__":
    sys.exit(main())
