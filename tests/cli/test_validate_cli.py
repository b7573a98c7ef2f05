"""``accelsim validate``: a table ending in ``N passed, M failed``; ``--json``; exit codes."""

from __future__ import annotations

import json
import re

import pytest

_OUTPUTS: dict[tuple[str, ...], tuple[int, str]] = {}
"""(exit code, stdout) of each ``accelsim validate ARGS`` run so far in this module: the suite
is deterministic, so the tests reading the same output share one run (seconds each)."""


@pytest.fixture
def run(capsys):
    """``accelsim validate ARGS`` in-process: (exit code, stdout)."""
    from accelsim.cli import build_parser

    def _run(*argv: str) -> tuple[int, str]:
        if argv not in _OUTPUTS:
            args = build_parser().parse_args(["validate", *argv])
            rc = args.func(args)
            _OUTPUTS[argv] = rc, capsys.readouterr().out
        return _OUTPUTS[argv]

    return _run


def test_table_and_summary_line(run):
    rc, stdout = run("--wide")  # whole lines (the default wraps them within 120 columns)
    out = stdout.strip().splitlines()
    m = re.fullmatch(r"(\d+) passed, (\d+) failed", out[-1])
    assert m, out[-1]
    assert int(m.group(2)) == 0 and rc == 0, stdout[-3000:]
    assert int(m.group(1)) > 150
    assert out[0].split()[:5] == ["id", "expected", "got", "rel_err", "result"]
    assert any(line.startswith("T12:A100_ridge_FLOP_per_B") and line.endswith("pass")
               for line in out)
    assert any(line.strip().startswith("T8:") for line in out), "non-reproducible cases are listed"
    tags = re.fullmatch(r"by tag: model (\d+) checks in (\d+) cases \(0 failed\); "
                        r"config (\d+) checks in (\d+) cases \(0 failed\); "
                        r"law (\d+) checks in (\d+) cases \(0 failed\)", out[-2])
    assert tags, out[-2]
    checked = re.search(r"\((\d+) checked quantities\)", out[-3])
    assert checked and sum(int(tags.group(i)) for i in (1, 3, 5)) == int(checked.group(1))


def test_json_records(run):
    rc, stdout = run("--json")
    data = json.loads(stdout)
    assert rc == 0 and isinstance(data, list) and data
    for rec in data:
        assert set(rec) == {"id", "expected", "got", "rel_err", "passed", "tag"}
        assert rec["tag"] in ("model", "config", "law")
    assert all(rec["passed"] for rec in data)
    nm16 = next(rec for rec in data if rec["id"] == "NM1.6:I_FLOP_per_B")
    assert nm16["expected"] == 31 and abs(nm16["got"] - 31.03) < 0.01


def test_a_failing_case_exits_1(cli, tmp_path):
    """A case file whose expected value is wrong makes the suite fail with exit code 1."""
    from accelsim.validation.seed_cases import load_cases

    cases = [c for c in load_cases() if c["id"] == "FAL-LN"]
    cases[0]["expected"]["ridge_FLOP_per_B"] = 151
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    r = cli("validate", "--cases", str(path))
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 1 and lines[-1] == "2 passed, 1 failed"
    assert any("FAL-LN:ridge_FLOP_per_B" in line and line.endswith("FAIL") for line in lines)


@pytest.mark.parametrize("content, reason", [
    (None, "cannot read case file"),
    ('[{"id": "FAL-LN", ', "not valid JSON"),
    ('{"id": "FAL-LN", "expected": {}}', "must be a JSON list"),
    ("[]", "holds no cases"),
    ('[{"expected": {}}]', "with a string 'id'"),
])
def test_bad_case_file_is_one_line_exit_2(cli_in_process, tmp_path, content, reason):
    """A missing file, malformed JSON, an object instead of a list, an empty list or a case
    without an id: one line ``accelsim: error: FILE: ...`` and exit code 2, no traceback
    (in-process; test_a_failing_case_exits_1 runs the real process)."""
    cli = cli_in_process
    path = tmp_path / "cases.json"
    if content is not None:
        path.write_text(content)
    r = cli("validate", "--cases", str(path))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(lines) == 1 and lines[0].startswith(f"accelsim: error: {path}: "), r.stderr
    assert reason in lines[0]
    assert r.stdout == ""


def test_bad_case_file_raises_config_error_naming_the_file(tmp_path):
    from accelsim.errors import ConfigError
    from accelsim.validation.seed_cases import load_cases

    path = tmp_path / "dup.json"
    path.write_text(json.dumps([{"id": "A", "expected": {}}, {"id": "A", "expected": {}}]))
    with pytest.raises(ConfigError) as err:
        load_cases(path)
    assert err.value.file == str(path) and err.value.field == "[1].id"


def test_power_of_every_machine_is_held_against_its_tdp(run):
    """A section lists each shipped machine with a published TDP: its predicted power at peak
    throughput by part, its demand at the load clock, the clock under the power cap, what it
    draws there, the TDP, the band of the demand and the verdict; every machine passes (the
    H200 reproduces its fit), none draws above its TDP (``--wide``: every column)."""
    rc, stdout = run("--wide")
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("power at peak throughput"))
    assert "demand, uncapped, in band 0.4-1 x TDP" in lines[start]
    rows = {line.split()[0]: line.split() for line in lines[start + 2:start + 11]}
    assert set(rows) == {"tpu_v1", "tpu_v4", "tpu_v4_chip", "npu_ascend910", "v100", "a100",
                         "h100", "h200", "spr_cpu"}
    header = [h.strip() for h in lines[start + 1].split("  ") if h.strip()]
    assert header[4:] == ["mac W", "operand W", "core W", "memory W", "dynamic W", "leak W",
                          "idle W", "demand W", "MHz", "total W", "TDP W", "band", "x TDP",
                          "result"]
    for machine, cells in rows.items():
        parts, dynamic = [float(c) for c in cells[4:8]], float(cells[8])
        leak, idle, demand = float(cells[9]), float(cells[10]), float(cells[11])
        total, tdp, ratio = float(cells[13]), float(cells[14]), float(cells[16])
        lo, hi = (float(b) for b in cells[15].split("-"))
        assert sum(parts) == pytest.approx(dynamic, abs=0.3), machine
        assert dynamic + leak + idle == pytest.approx(demand, abs=0.3), machine
        assert ratio == pytest.approx(demand / tdp, abs=0.01), machine
        verdict = " ".join(cells[17:])
        want = {"h200": "reproduces fit"}.get(machine, "pass")
        assert verdict == want, (machine, verdict)
        assert lo == 0.4 and (lo <= ratio <= hi or verdict == "known gap"), machine
        assert total <= tdp and total <= demand + 0.05, machine
        assert total >= 0.4 * tdp or verdict == "known gap", machine
        if demand > tdp:  # capped: listed with its clock and floor
            assert any(line.startswith(f"  {machine}: demand ") for line in lines[start:])
    assert float(rows["h200"][10]) > 100  # the board's idle power is in the static part
    assert float(rows["tpu_v1"][10]) > 20  # ... and the TPU die's measured idle power
    assert float(rows["tpu_v4_chip"][10]) > 80  # ... TPU v4's measured minimum (90 W)
    assert float(rows["a100"][11]) > 400 >= float(rows["a100"][13])  # capped at its TDP
    assert any(line.startswith("  h200: core.gpu_mac") for line in lines[start:])
    assert rc == 0


def test_power_records_in_json(run):
    rc, stdout = run("--json")
    tdp = {rec["id"]: rec for rec in json.loads(stdout) if rec["id"].startswith("TDP:")}
    assert tdp["TDP:tpu_v4"]["passed"]
    assert tdp["TDP:tpu_v4"]["expected"] == pytest.approx([38.4, 96])
    assert 38.4 <= tdp["TDP:tpu_v4"]["got"] <= 96.0
