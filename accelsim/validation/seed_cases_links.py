"""Seed cases of kinds ``link`` and ``amdahl``, recomputed through the link models.

``reproduce(case)`` takes one case of ``accelsim/data/seed_cases.json`` (a dict, or its id)
and returns the quantities of its ``expected`` block, computed by the simulator: the systems,
the link engine and the pure link model (:mod:`accelsim.api.links`), or Amdahl's law, not by
the case's own formula. Ids handled: :data:`CASE_IDS`; each is registered once as a case of
the validation suite.

Imports: errors, precision, api.links, config.link, config.schema, validation.seed_cases.
"""

from __future__ import annotations

import json
import math
from typing import Any

from accelsim.api import links as api
from accelsim.config.link import LinkSpec
from accelsim.config.schema import build
from accelsim.errors import ConfigError
from accelsim.precision import element_bytes
from accelsim.validation.seed_cases import DATA_FILE, CaseContext, case

CASE_IDS = ("HOST-PCIE", "NODE-BW", "DBUF", "AR-8GPU", "GRAD-PAYLOAD",
            "AMD-T1.1", "LH1.1a", "LH1.1b", "FN-AMD20")

def gradient_bytes(params: float, precision: str = "fp16") -> float:
    """Unsharded gradient payload of a model with ``params`` parameters, bytes."""
    return float(params) * element_bytes(precision)


def _pcie(gen: int) -> LinkSpec:
    return build(LinkSpec, {"name": f"pcie{gen}_x16", "protocol": "pcie", "generation": gen,
                            "lanes": 16})


SEED_CASES = DATA_FILE
"""The package's copy of shared/reference/seed_cases.json."""


def reproduce(case: dict | str) -> dict[str, Any]:
    """Recompute one seed case (a case dict, or its id looked up in :data:`SEED_CASES`);
    keys match the case's ``expected`` block."""
    cid = case if isinstance(case, str) else case["id"]
    if cid not in _CASES:
        raise ConfigError(str(SEED_CASES), "id", cid,
                          f"not a link/scaling case (handled: {', '.join(CASE_IDS)})")
    if isinstance(case, str):
        case = next(c for c in json.loads(SEED_CASES.read_text()) if c["id"] == cid)
    return _CASES[cid](case.get("inputs", {}))


def _host_pcie(inputs: dict) -> dict:
    """HBM over the host link: the case's HBM against the PCIe Gen5 x16 link model (its
    headline 64 GB/s per direction). Only ``ratio_exact`` is returned: the case's ``ratio_x``
    is the text's rounding of the same ratio (~30), not a second quantity."""
    hbm = inputs["HBM_TBs"] * 1e12
    pcie = _pcie(5).signaling_bytes_per_s           # Gen5 x16 headline, per direction
    return {"ratio_exact": hbm / pcie}


def _node_bw(inputs: dict) -> dict:
    # link figures from the HGX H200 system (same NVLink 4 / PCIe Gen5 / NDR NIC as HGX H100);
    # HBM is the case's input (H100's 3.35 TB/s)
    ladder = api.bandwidth_ladder("hgx_h200_x8", "gpu0",
                                  hbm_bytes_per_s=inputs.get("HBM_GBs", 3350) * 1e9)
    by = {p: ladder.loc[ladder["protocol"] == p].iloc[0]
          for p in ("memory", "nvlink", "pcie", "network")}
    hbm = float(by["memory"]["headline_bytes_per_s"])
    nvlink = float(by["nvlink"]["bidirectional_bytes_per_s"])   # the text quotes NVLink both ways
    pcie = float(by["pcie"]["headline_bytes_per_s"])
    nic = float(by["network"]["headline_bytes_per_s"])
    hdr = api.bandwidth_ladder("dgx_a100", "gpu0", hbm_bytes_per_s=1.0)  # ConnectX-6 200 Gb/s
    nic_a100 = float(hdr.loc[hdr["protocol"] == "network", "headline_bytes_per_s"].iloc[0])
    return {"NIC_GBs": [nic_a100 / 1e9, nic / 1e9], "HBM_over_NVLink_x": hbm / nvlink,
            "NVLink_over_PCIe_x": nvlink / pcie, "PCIe_over_NIC_x": pcie / nic}


def _dbuf(inputs: dict) -> dict:
    system = api.get_system("h200x2")
    t_transfer = api.transfer(system, "host", "gpu0", 64 * 2**20)["time_s"]
    out: dict[str, Any] = {}
    for label, t_compute in (("hidden", 2 * t_transfer), ("exposed", 0.5 * t_transfer)):
        steps = {}
        for overlap in (True, False):
            a = api.pipeline(system, "gpu0", 4, 64 * 2**20, t_compute, 0, overlap=overlap)["time_s"]
            b = api.pipeline(system, "gpu0", 8, 64 * 2**20, t_compute, 0, overlap=overlap)["time_s"]
            steps[overlap] = (b - a) / 4
        out[label] = {"t_compute_s": t_compute, "t_transfer_s": t_transfer,
                      "overlapped_step_s": steps[True], "naive_step_s": steps[False]}
    out["hidden_condition"] = (out["hidden"]["overlapped_step_s"]
                               <= out["hidden"]["t_compute_s"] * (1 + 1e-12))
    out["overlapped_step"] = out["hidden"]["overlapped_step_s"]
    out["naive_step"] = out["hidden"]["naive_step_s"]
    return out


def _ar_8gpu(inputs: dict) -> dict:
    n = int(inputs.get("N", 8))
    grad = inputs.get("gradient_GB", 1) * 1e9
    link = inputs.get("link_GBs_per_direction", 300) * 1e9
    compute = inputs.get("compute_ms", 50) * 1e-3
    system = api.switched_system("seed_ar", n, link)          # bandwidth term only, as the text
    ar = api.collective(system, "allreduce", grad)
    step = api.data_parallel_step(system, grad_bytes=grad, compute_s=compute, overlap=False)
    return {"traffic_factor": ar["max_bytes_sent_per_rank"] / grad, "t_comm_ms": ar["time_s"] * 1e3,
            "overhead_fraction": step["comm_s"] / compute, "speedup_x": step["speedup"],
            "efficiency": step["efficiency"]}


def parameter_count(value: Any) -> float:
    """A parameter count from a case input: a number, or a string with a trailing ``+``
    ("1e11+": at least 1e11, the lower bound is used)."""
    text = str(value).strip()
    try:
        return float(text[:-1] if text.endswith("+") else text)
    except ValueError:
        raise ConfigError(str(SEED_CASES), "inputs.P", value,
                          "must be a parameter count such as 1e11 or '1e11+'") from None


def _grad_payload(inputs: dict) -> dict:
    params = parameter_count(inputs["P"])
    return {"payload_100B_FP16_GB_derived": gradient_bytes(params, "fp16") / 1e9,
            "payload_100B_FP32_GB_derived": gradient_bytes(params, "fp32") / 1e9}


def _amdahl(inputs: dict) -> dict:
    p = inputs.get("p", 1 - inputs.get("serial_fraction", 0.0))
    g = inputs.get("G_accel", "infinity")
    g = math.inf if g in ("infinity", "inf", None) else float(g)
    r = api.amdahl(p, g)
    out = {"speedup_x": r["speedup"], "speedup_limit_x": api.amdahl(p, math.inf)["speedup"],
           "speedup_max_x": api.amdahl(p, math.inf)["speedup"]}
    if "H100_INT8_TOPS" in inputs:
        out["G_accel_x"] = round(inputs["H100_INT8_TOPS"] / inputs["ref_CPU_TOPS"])
    return out


_CASES = {"HOST-PCIE": _host_pcie, "NODE-BW": _node_bw, "DBUF": _dbuf, "AR-8GPU": _ar_8gpu,
          "GRAD-PAYLOAD": _grad_payload, "AMD-T1.1": _amdahl, "LH1.1a": _amdahl,
          "LH1.1b": _amdahl, "FN-AMD20": _amdahl}

__all__ = ["CASE_IDS", "gradient_bytes", "parameter_count", "reproduce"]

TAGS = {"HOST-PCIE": "config", "NODE-BW": "config", "DBUF": "model", "AR-8GPU": "model",
        "GRAD-PAYLOAD": "law", "AMD-T1.1": "law", "LH1.1a": "law", "LH1.1b": "law",
        "FN-AMD20": "law"}
"""Tag of each case: link configs (HOST-PCIE, NODE-BW), the link engine (DBUF, AR-8GPU:
chunked messages replayed on a switched system), or a law."""

ROUNDED_IN_TEXT = {("HOST-PCIE", "ratio_x"): "ratio_exact"}
"""Expected keys that are the text's rounding of another computed quantity."""

VIA = {"HOST-PCIE": "config.link PCIe Gen5 x16 signaling rate",
       "NODE-BW": "api.links.bandwidth_ladder (hgx_h200_x8, dgx_a100 link specs)",
       "DBUF": "api.links.pipeline on h200x2 (link engine, copy/compute streams)",
       "AR-8GPU": "api.links.collective + data_parallel_step (link engine, switched system)",
       "GRAD-PAYLOAD": "parameters x precision bytes",
       "AMD-T1.1": "analysis.amdahl", "LH1.1a": "analysis.amdahl", "LH1.1b": "analysis.amdahl",
       "FN-AMD20": "analysis.amdahl"}


def _dbuf_labels(got: dict) -> dict[str, str]:
    """The DBUF case's laws as the engine shows them: the overlapped step is max(Tc, Tt) and
    the naive one Tc + Tt in both regimes, and the transfer hides iff Tc >= Tt."""
    runs = (got["hidden"], got["exposed"])
    close = [math.isclose(r["overlapped_step_s"], max(r["t_compute_s"], r["t_transfer_s"]),
                          rel_tol=1e-9) for r in runs]
    naive = [math.isclose(r["naive_step_s"], r["t_compute_s"] + r["t_transfer_s"], rel_tol=1e-9)
             for r in runs]
    hidden = got["hidden_condition"] and got["exposed"]["overlapped_step_s"] > \
        got["exposed"]["t_compute_s"]
    return {"hidden_condition": "T_compute >= T_transfer" if hidden else "other",
            "overlapped_step": "max(Tc, Tt)" if all(close) else "other",
            "naive_step": "Tc + Tt" if all(naive) else "other"}


def _check_case(c: CaseContext) -> None:
    got = _CASES[c.id](c.inputs)
    if c.id == "DBUF":
        got = _dbuf_labels(got)
    for key in c.expected:
        c.check(key, got[ROUNDED_IN_TEXT.get((c.id, key), key)], via=VIA[c.id])


for _cid in CASE_IDS:
    case(_cid, tag=TAGS[_cid])(_check_case)
