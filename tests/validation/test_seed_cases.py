"""The validation suite: every reproducible seed case is recomputed by accelsim's models and
matches the case file at its tolerance; the others are listed with a reason."""

from __future__ import annotations

import json

import pytest

from accelsim.analysis.checks import compare
from accelsim.validation import seed_cases as sc
from accelsim.validation import suite

CASES = sc.load_cases()
IDS = [c["id"] for c in CASES]


def test_packaged_file_is_the_shared_reference():
    """The project ships its own copy; where the shared reference exists it is identical."""
    from pathlib import Path

    shared = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "seed_cases.json"
    if not shared.exists():
        pytest.skip("shared reference not present")
    assert json.loads(shared.read_text()) == json.loads(sc.DATA_FILE.read_text())


def test_the_case_files_are_read_from_a_zipped_package(tmp_path):
    """The seed cases and their labels are package data read through importlib.resources:
    with ``accelsim`` imported from a zip (no folder on disk), ``load_cases`` and
    ``case_labels`` still read them, the same records as here."""
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    import accelsim

    pkg = Path(accelsim.__file__).resolve().parent
    archive = tmp_path / "accelsim.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in pkg.rglob("*"):
            if f.is_file() and f.suffix in (".py", ".json") and "__pycache__" not in f.parts:
                z.write(f, Path("accelsim") / f.relative_to(pkg))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import accelsim, json; "
            "from accelsim.validation import seed_cases as sc; "
            "assert accelsim.__file__.startswith(sys.argv[1]), accelsim.__file__; "
            "print(json.dumps([[c['id'] for c in sc.load_cases()], len(sc.case_labels())]))")
    done = subprocess.run([sys.executable, "-I", "-c", code, str(archive)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [IDS, len(sc.case_labels())]


def test_every_case_is_either_computed_or_explained():
    suite.run_case(IDS[0])  # registers the case functions
    for cid in IDS:
        assert (cid in sc.CASES) != (cid in sc.NOT_REPRODUCIBLE), cid
        if cid in sc.NOT_REPRODUCIBLE:
            assert len(sc.NOT_REPRODUCIBLE[cid]) > 10


@pytest.mark.parametrize("case_id", IDS)
def test_seed_case(case_id):
    """Each reproducible case passes every check it makes; unchecked quantities say why."""
    r = suite.run_case(case_id)
    if not r.reproducible:
        pytest.skip(f"not reproducible: {r.reason}")
    assert not r.error, r.error
    assert r.checks, "a reproducible case must check something"
    bad = [(c.quantity, c.expected, c.got, c.rel_err, c.via) for c in r.checks if not c.passed]
    assert not bad, bad
    expected_keys = set(r.checks[0].case and sc.case_index()[case_id]["expected"])
    checked = {c.quantity.split(".")[0] for c in r.checks}
    for key in expected_keys - checked - set(r.not_checked):
        # band checks of a nested mapping ("classes") and expansions are named by prefix
        assert any(q.startswith(key) for q in checked), f"{key} neither checked nor explained"


def test_reproducible_cases_are_a_large_majority():
    results = suite.run_suite()
    assert sum(r.reproducible for r in results) >= 64


def _patch_alignment(monkeypatch):
    from accelsim.hw.gpu import gemm

    monkeypatch.setattr(gemm, "ALIGN_BYTES", 32)


def _patch_fp16(monkeypatch):
    from accelsim.workload import dtypes

    monkeypatch.setitem(dtypes.FORMATS, "fp16",
                        dtypes.FloatFormat(name="fp16", exp_bits=6, mant_bits=9))


def _patch_simd(monkeypatch):
    from accelsim.hw import cpu

    monkeypatch.setattr(cpu, "simd_lanes", lambda machine, precision: 8)


def _patch_sparse(monkeypatch):
    from accelsim.hw.gpu import sparsity

    monkeypatch.setitem(sparsity.PATTERNS, "2:4", sparsity.Pattern(1, 4))


def _patch_checkpoint(monkeypatch):
    from accelsim.workload.passes import training

    real = training.training_memory
    monkeypatch.setattr(training, "training_memory",
                        lambda g, checkpoint=None, **kw: real(g, checkpoint=None, **kw))


@pytest.mark.parametrize("case_id, patch", [
    ("TC-ALIGN", _patch_alignment), ("FP-FORMATS", _patch_fp16), ("SIMD512", _patch_simd),
    ("SPARSE-24", _patch_sparse), ("S002-CKPT", _patch_checkpoint),
])
def test_feature_cases_are_computed_by_the_models(monkeypatch, case_id, patch):
    """Changing the model a case goes through makes the case fail: nothing is looked up."""
    assert suite.run_case(case_id).passed
    patch(monkeypatch)
    r = suite.run_case(case_id)
    assert not r.passed


def test_a_wrong_model_value_fails_the_check():
    """The comparison can fail: off by more than the tolerance, wrong label, outside a band."""
    assert compare(153.0, 160.0, 0.005) == (pytest.approx(7 / 153), False)
    assert compare("compute (> 153)", "memory", 0.0)[1] is False
    assert compare("memory", "", 0.0)[1] is False   # an empty label is no label
    assert compare("compute-bound", "compute", 0.0)[1] is False   # labels compare exactly
    assert compare("Compute", " compute ", 0.0)[1] is True
    assert compare([1, 2], 2.5, 0.01, within=True)[1] is False
    assert compare(0.3, 0.32, 0.02)[1] is False
    assert compare(0.3, 0.32, 0.02, printed=True)[1] is True
    assert compare(">100", 99.0, 0.0)[1] is False


def test_text_errors_are_checked_against_the_corrected_value():
    """FAL-T4: the text's '< 2x' claim is not reproduced; the corrected 6.4x is."""
    r = suite.run_case("FAL-T4")
    assert "text_claim" in r.not_checked
    ratio = next(c for c in r.checks if c.quantity == "A100_over_T4_at_B1_x_correct")
    assert ratio.passed and ratio.got == pytest.approx(6.4, rel=0.01)


def test_model_exception_is_reported_not_raised(monkeypatch):
    def boom(ctx):
        raise RuntimeError("model broke")

    suite.run_case("T12")
    monkeypatch.setitem(sc.CASES, "T12", boom)
    r = suite.run_case("T12")
    assert "model broke" in r.error and not r.passed


CONFIG_CASES = ["DEF1.1", "DEF1.3", "T10", "T12", "P100-V100", "FAL-PREC", "NM1.4a", "T13",
                "SYS-CONFIGS"]


@pytest.mark.parametrize("case_id", CONFIG_CASES)
def test_a_broken_config_fails_the_case(monkeypatch, case_id):
    """Cases computed from the shipped machine configs have no fallback to their own inputs:
    a config that does not load makes the case fail with the config's error."""
    from accelsim.config import registry
    from accelsim.errors import ConfigError

    assert suite.run_case(case_id).passed

    def broken(name, overrides=None):
        raise ConfigError(f"configs/hardware/{name}.yaml", "compute.sm_count", -1, "must be > 0")

    monkeypatch.setattr(registry, "load_machine", broken)
    r = suite.run_case(case_id)
    assert not r.passed and r.reproducible
    assert "ConfigError" in r.error and "must be > 0" in r.error


@pytest.mark.parametrize("case_id, field, value", [
    ("DEF1.1", "compute.clock_hz", "1.0 GHz"),             # 312 -> 170 TFLOP/s
    ("DEF1.3", "memory.hbm.bandwidth_bytes_per_s", "1.5 TB/s"),
    ("P100-V100", "compute.clock_hz", "1.0 GHz"),
    ("FAL-PREC", "compute.max_clock_hz", "1.83 GHz"),       # one clock: ratio 16, not 14.8
])
def test_config_cases_follow_the_config(monkeypatch, case_id, field, value):
    """Changing the figure a case reads from its config makes the case fail."""
    from accelsim.config import registry

    real = registry.load_machine
    monkeypatch.setattr(registry, "load_machine",
                        lambda name, overrides=None: real(name,
                                                          {**(overrides or {}), field: value}))
    assert not suite.run_case(case_id).passed


def test_fal_prec_is_the_config_peaks_at_their_rated_clocks():
    from accelsim.config.registry import load_machine

    h100 = load_machine("h100")
    r = suite.run_case("FAL-PREC")
    (chk,) = r.checks
    fp32_boost = 256 * 132 * h100.compute.max_clock_hz
    assert chk.passed and chk.got == pytest.approx(h100.peak_flops("fp16") / fp32_boost)
    assert chk.got == pytest.approx(14.79, rel=1e-3)


def test_grad_payload_follows_the_case_parameter_count():
    case = {**sc.case_index()["GRAD-PAYLOAD"], "inputs": {"P": "2e11+"}}
    r = suite.run_case("GRAD-PAYLOAD", cases={"GRAD-PAYLOAD": case})
    assert not r.passed
    assert {c.quantity: c.got for c in r.checks}["payload_100B_FP16_GB_derived"] == 400


def test_dvfs_throttle_comes_from_the_engine():
    r = suite.run_case("DVFS")
    fps = next(c for c in r.checks if c.quantity == "throttle_fps")
    assert r.passed and fps.got[1] != 15.0 and fps.got[1] == pytest.approx(15.0, rel=0.01)


def test_prose_labels_are_read_once_and_compared_exactly(monkeypatch):
    """NM1.4a's text says 'compute (> 153)': the label read from it is 'compute'; a model
    that said 'compute-bound' or '' would fail."""
    r = suite.run_case("NM1.4a")
    chk = next(c for c in r.checks if c.quantity == "bound_on_A100")
    assert chk.passed and chk.got == "compute" and "read as 'compute'" in chk.note
    labels = sc.case_labels()
    for cid, quantities in labels.items():
        record = sc.case_index()[cid]["expected"]
        for q, label in quantities.items():
            text = record[q] if q in record else record[q.split(".")[0]][q.split(".", 1)[1]]
            assert label and label.lower() in text.lower(), (cid, q)


def test_every_case_is_implemented_once_and_tagged():
    """One function per case (the link cases are the link models' only), one tag each, and
    the suite counts checks per tag."""
    results = suite.run_suite()
    counts = suite.tag_counts(results)
    assert set(counts) == set(sc.TAGS) and all(n["checks"] > 0 for n in counts.values())
    assert sum(n["checks"] for n in counts.values()) == len(suite.all_checks(results))
    assert set(sc.CASE_TAGS) == set(sc.CASES)
    assert {c.tag for r in results for c in r.checks} <= set(sc.TAGS)
    from accelsim.validation import seed_cases_links

    assert all(sc.CASES[cid] is sc.CASES["DBUF"] for cid in seed_cases_links.CASE_IDS)
