"""``scripts/fidelity.py`` and ``accelsim validate --fidelity``: the one fidelity table.

The collection survives a failing, a slow and a missing ``fidelity_rows``; the README's
marked section is rewritten idempotently and nothing outside it; the CLI refuses in one line
outside a source checkout; each fast validator's rows miss a target exactly when its ``main``
exits 1; and (slow) README's section equals a fresh run."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"


def _module(name: str):
    """``scripts/NAME.py`` or ``scripts/validate/NAME.py`` imported as a module (both on
    ``sys.path``)."""
    for d in (SCRIPTS, SCRIPTS / "validate"):
        if str(d) not in sys.path:
            sys.path.insert(0, str(d))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def fid():
    return _module("fidelity")


def _result(fid) -> dict:
    return {"rows": [fid.row("validate_gpu", ["h200_calibration.json"], "gemm_bf16",
                             errors_pct=[5.0, -3.0], target_pct=10.0),
                     fid.row("validate_gpu", ["h200_heldout.json"], "gemm_skinny",
                             errors_pct=[12.0], target_pct=10.0)],
            "missing": ["validate_new"]}


def test_a_row_carries_its_role_figures_and_target(fid):
    r, miss = _result(fid)["rows"]
    assert (r["role"], r["cases"], r["mape_pct"], r["bias_pct"], r["met"]) == (
        "calibration", 2, 4.0, 1.0, True)
    assert (miss["role"], miss["met"]) == ("dev", False)
    assert set(fid.ROW_FIELDS) <= set(r)
    mixed = fid.row("v", [("eyeriss_jssc2017.json", "fitted_layers"),
                          ("eyeriss_jssc2017.json", "alexnet_conv2_conv4")], "f", cases=1)
    assert mixed["data_set"] == "eyeriss_jssc2017.json[fitted_layers, alexnet_conv2_conv4]"
    assert mixed["role"] == "mixed: calibration + dev"
    assert fid.exit_code(_result(fid)) == 1


def test_readme_rewrite_is_idempotent_and_touches_only_the_marked_section(fid, tmp_path):
    before = "# title\n\ntext with a figure 12.1 %\n\n"
    after = "\n\nmore prose, figure 5.4 %\n"
    readme = tmp_path / "README.md"
    readme.write_text(f"{before}{fid.BEGIN}\nstale table\n{fid.END}{after}")
    line = "Generated on 2026-12-02 at commit abc1234."
    assert fid.write_readme(_result(fid), readme, line) is True
    text = readme.read_text()
    assert text.startswith(before + fid.BEGIN + "\n") and text.endswith(fid.END + after)
    section = fid.marked_section(text)
    assert section.splitlines()[0] == line and "stale" not in section
    assert "| validator | data set | role |" in section and "`validate_new.py`" in section
    assert fid.write_readme(_result(fid), readme, line) is False  # a second run: unchanged
    assert readme.read_text() == text
    readme.write_text(before + after)
    with pytest.raises(SystemExit, match="needs one"):
        fid.write_readme(_result(fid), readme, line)


def test_collection_survives_failing_slow_and_missing_validators(fid, tmp_path):
    (tmp_path / "validate_ok.py").write_text(
        "import fidelity\n"
        "def fidelity_rows(scale=1.0):\n"
        "    print('validators may print')\n"
        "    return [fidelity.row('validate_ok', ['h200_calibration.json'], 'fam',\n"
        "                         errors_pct=[scale * 2.0], target_pct=10.0)]\n")
    (tmp_path / "validate_bad.py").write_text(
        "def fidelity_rows():\n    raise RuntimeError('broken on purpose')\n")
    (tmp_path / "validate_slow.py").write_text(
        "import time\ndef fidelity_rows():\n    time.sleep(30)\n    return []\n")
    (tmp_path / "validate_none.py").write_text("def main():\n    return 0\n")
    # 3 s: the slow one's 30 s sleep times out, the others finish in ~0.1 s (stdlib only); the
    # test waits the whole timeout for the slow one
    got = fid.collect(timeout_s=3.0, seed=False, scripts=tmp_path,
                      opts={"validate_ok": {"scale": 3.0}})
    by = {r["validator"]: r for r in got["rows"]}
    assert got["missing"] == ["validate_none"]
    assert by["validate_ok"]["mape_pct"] == 6.0 and by["validate_ok"]["met"] is True
    assert by["validate_bad"]["error"] and "broken on purpose" in by["validate_bad"]["note"]
    assert by["validate_slow"]["error"] and "timed out" in by["validate_slow"]["note"]
    assert fid.exit_code(got) == 1
    lines = fid.table_lines(got)
    assert sum("ERROR" in ln for ln in lines) == 2 and "`validate_none.py`" in lines[-1]


def test_every_validator_but_the_new_ones_defines_fidelity_rows(fid):
    have = fid.validators()
    for name in ("validate_gpu", "validate_gpu_conv", "validate_e2e", "validate_links",
                 "validate_eyeriss", "validate_external", "validate_programs",
                 "validate_serving"):
        assert have[name], name


def test_fidelity_outside_a_source_checkout_is_one_line(tmp_path, monkeypatch, capsys):
    from accelsim.cli import main
    from accelsim.cli import validate as cli_validate

    monkeypatch.setattr(cli_validate, "PACKAGE_DIR", tmp_path / "site-packages" / "accelsim")
    assert main(["validate", "--fidelity"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and captured.out == ""
    assert lines[0].startswith("accelsim: error: validate --fidelity needs a source checkout")
    assert cli_validate.fidelity_script(ROOT / "accelsim") == SCRIPTS / "fidelity.py"


def test_fidelity_in_a_checkout_runs_its_script_and_passes_its_exit_code(tmp_path, monkeypatch,
                                                                         capsys):
    """The CLI runs ``scripts/fidelity.py`` beside the package (a stand-in script here),
    ``--json`` as ``--json -``, and returns its exit code."""
    from accelsim.cli import main
    from accelsim.cli import validate as cli_validate

    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "fidelity.py").write_text(
        "import sys\nprint('table', *sys.argv[1:])\nsys.exit(1)\n")
    monkeypatch.setattr(cli_validate, "PACKAGE_DIR", tmp_path / "accelsim")
    assert main(["validate", "--fidelity"]) == 1
    assert capsys.readouterr().out == "table\n"
    assert main(["validate", "--fidelity", "--json"]) == 1
    assert capsys.readouterr().out == "table --json -\n"


@pytest.mark.parametrize("name", ["validate_gpu", "validate_gpu_conv", "validate_links"])
def test_rows_miss_a_target_exactly_when_main_exits_1(name, capsys):
    """The rows and ``main`` come from the same functions: a missed target in one is a
    missed target in the other (the fast validators, a few seconds each)."""
    mod = _module(name)
    rows = mod.fidelity_rows()
    assert rows and all(set(_module("fidelity").ROW_FIELDS) <= set(r) for r in rows)
    assert any(r["met"] is False for r in rows) == (mod.main([]) == 1)
    capsys.readouterr()


@pytest.mark.slow
def test_readme_fidelity_section_equals_a_fresh_run(fid):
    """Runs every validator's ``fidelity_rows`` and the seed cases fresh and compares every
    table line of README's marked section with it (the numbers; not the date line).
    Runtime: 31 minutes wall, 19 minutes CPU on the project's shared 2-core machine
    (2026-12-02, load ~4), about two thirds of it validate_serving.py at --max-requests 1000,
    then validate_e2e.py and validate_eyeriss.py."""
    fresh = fid.section_text(fid.collect(), "date line").splitlines()[1:]
    stored = fid.marked_section(fid.README.read_text()).splitlines()[1:]
    assert stored == fresh, "README.md's fidelity section is stale: run " \
        "python scripts/fidelity.py --write-readme"
