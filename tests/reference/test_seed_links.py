"""The seed chapter's link, collective and Amdahl cases, reproduced through the link models
(``accelsim.validation.seed_cases_links.reproduce`` runs the systems, the engine and the hw model).

Expected values and tolerances come from accelsim/data/seed_cases.json, a copy of
shared/reference/seed_cases.json.
"""

import json
import math
from pathlib import Path

import pytest

from accelsim.validation.seed_cases_links import CASE_IDS, reproduce

SEED = Path(__file__).resolve().parents[2] / "accelsim" / "data" / "seed_cases.json"
CASES = {c["id"]: c for c in json.loads(SEED.read_text())}
NUMERIC = [cid for cid in CASE_IDS if cid != "DBUF"]
ROUNDED_IN_TEXT = {("HOST-PCIE", "ratio_x"): "ratio_exact"}
"""Expected keys that are the text's rounding of another returned quantity."""


def test_every_link_and_amdahl_case_has_a_reproduction():
    ids = {cid for cid, c in CASES.items() if c["kind"] in ("link", "amdahl")}
    assert ids == set(CASE_IDS)


def close(got, want, rel):
    if isinstance(want, list):
        return all(close(g, w, rel) for g, w in zip(got, want, strict=True))
    return math.isclose(got, want, rel_tol=rel) if rel else got == want


@pytest.mark.parametrize("cid", NUMERIC)
def test_numeric_seed_case(cid):
    case = CASES[cid]
    got = reproduce(case)
    rel = case["tolerance_rel"]
    for key, want in case["expected"].items():
        key = ROUNDED_IN_TEXT.get((cid, key), key)
        assert close(got[key], want, rel), f"{cid}.{key}: got {got[key]}, text says {want}"


def test_ar_8gpu_matches_the_exact_values_of_the_notes():
    got = reproduce(CASES["AR-8GPU"])
    assert got["t_comm_ms"] == pytest.approx(5.8333, rel=1e-4)
    assert got["speedup_x"] == pytest.approx(7.164, rel=1e-3)
    assert got["efficiency"] == pytest.approx(0.8955, rel=1e-3)


def test_dbuf_transfer_is_hidden_iff_compute_is_at_least_transfer():
    got = reproduce(CASES["DBUF"])
    hidden, exposed = got["hidden"], got["exposed"]
    for r in (hidden, exposed):
        assert r["overlapped_step_s"] == pytest.approx(max(r["t_compute_s"], r["t_transfer_s"]),
                                                       rel=1e-9)
        assert r["naive_step_s"] == pytest.approx(r["t_compute_s"] + r["t_transfer_s"], rel=1e-9)
    assert got["hidden_condition"]
    assert exposed["overlapped_step_s"] > exposed["t_compute_s"]


def test_cases_can_be_reproduced_by_id():
    assert reproduce("LH1.1a")["speedup_x"] == pytest.approx(18.57, rel=1e-3)
    assert reproduce("AMD-T1.1")["speedup_max_x"] == pytest.approx(10)


def test_host_pcie_returns_the_ratio_once():
    got = reproduce(CASES["HOST-PCIE"])
    assert set(got) == {"ratio_exact"}
    assert got["ratio_exact"] == pytest.approx(2e12 / 64e9)


def test_gradient_payload_follows_the_parameter_count():
    case = {**CASES["GRAD-PAYLOAD"], "inputs": {"P": "7e9"}}
    got = reproduce(case)
    assert got["payload_100B_FP16_GB_derived"] == pytest.approx(14.0)
    assert got["payload_100B_FP32_GB_derived"] == pytest.approx(28.0)
    assert reproduce(CASES["GRAD-PAYLOAD"])["payload_100B_FP16_GB_derived"] == 200


def test_bad_parameter_count_is_a_config_error():
    from accelsim.errors import ConfigError

    with pytest.raises(ConfigError, match="inputs.P"):
        reproduce({**CASES["GRAD-PAYLOAD"], "inputs": {"P": "lots"}})
