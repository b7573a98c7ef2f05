"""Every hostile input of the corpus ends in one clear line: exit code 2, no traceback, within
a time and an address-space bound.

The corpus (``hostile_corpus.py``, >= 150 files and argument lists over every input kind and
command) runs in one subprocess (``hostile_driver.py``) under ``RLIMIT_AS`` and a per-case
alarm, so imports and JIT compilation are paid once; each case is then checked here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_corpus import all_cases, counts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LIMIT_GB = 2.0
"""Address space of the driver process (numba and the imports need ~1 GB of it)."""
CASE_TIMEOUT_S = 20.0
CASES = all_cases()


@pytest.fixture(scope="module")
def results(tmp_path_factory, once) -> dict[str, dict]:
    """Run the whole corpus once (once per session, also under pytest-xdist); case id -> its
    record."""
    def run_corpus() -> dict[str, dict]:
        work = tmp_path_factory.mktemp("hostile")
        env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
        proc = subprocess.run([sys.executable, str(HERE / "hostile_driver.py"), str(work),
                               str(LIMIT_GB), str(CASE_TIMEOUT_S)], capture_output=True,
                              text=True, env=env, timeout=600, cwd=work)
        recs = {}
        for line in proc.stdout.splitlines():
            rec = json.loads(line)
            recs[rec["id"]] = rec
        if len(recs) < len(CASES):  # the driver died (e.g. killed by the memory bound)
            recs["<driver>"] = {"stderr": proc.stderr[-2000:], "rc": proc.returncode}
        return recs

    return once("hostile-corpus", run_corpus)


def test_the_corpus_covers_every_input_kind_and_command():
    n = counts()
    assert sum(n.values()) >= 150
    for kind in ("config", "workload", "topology", "onnx", "spec"):
        assert n[kind] >= 15, kind
    for cmd in ("run", "op", "energy", "roofline", "sweep", "compare", "place", "validate",
                "scalesim", "list", "write"):
        assert n.get(f"cli.{cmd}", 0) >= 2, cmd


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_one_line_exit_2(case, results):
    rec = results.get(case.id)
    assert rec is not None, f"driver stopped before this case: {results.get('<driver>')}"
    assert rec["rc"] != "traceback", rec.get("traceback")
    assert rec["rc"] != "timeout", f"ran past {CASE_TIMEOUT_S} s"
    lines = [ln for ln in rec["stderr"].splitlines() if ln.strip()]
    assert rec["rc"] == 2, rec["stderr"]
    assert len(lines) == 1, rec["stderr"]
    assert lines[0].startswith("accelsim: error: ") or "error:" in lines[0], lines[0]
    assert "Traceback" not in rec["stderr"]
    assert len(lines[0]) < 600
    for word in case.expect:
        assert word in lines[0], f"{word!r} not named in: {lines[0]}"
