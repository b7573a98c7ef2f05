"""A sample of the corpus as real ``python -m accelsim`` processes, each under an address-space
limit (``RLIMIT_AS``) and a timeout: the memory bombs and the huge sizes end in one line, exit 2,
without a traceback, quickly and within the memory bound.

The in-process driver (``test_corpus.py``) covers every case; this checks what only a real
process shows (the exit status and stderr as a user sees them). 2 GiB of address space leaves
numba/LLVM its headroom: ``accelsim run`` needs about 0.3 GB resident and runs under 1 GiB.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_corpus import all_cases
from hostile_driver import write_files

ROOT = Path(__file__).resolve().parents[2]
LIMIT_BYTES = 2 * 2**30
TIMEOUT_S = 60
_SLOW = pytest.mark.slow
SAMPLE = ["config/alias_bomb", "workload/huge_folds", "cli.op/5",
          pytest.param("spec/grid_billions", marks=_SLOW), pytest.param("cli.run/1", marks=_SLOW),
          pytest.param("spec/constraint.pow_tower", marks=_SLOW),
          pytest.param("topology/run.field_over_csv_limit", marks=_SLOW),
          pytest.param("onnx/cyclic", marks=_SLOW)]
"""Alias bomb, a 10^5-cubed GEMM, a 10^9-row GPU GEMM; with ``-m slow`` also a 10^12-point grid,
``--set rows=.inf``, a tower of powers, a CSV field over the csv module's limit and a cyclic
ONNX graph."""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


@pytest.mark.parametrize("case_id", SAMPLE)
def test_a_real_process_stays_within_time_and_memory(case_id, tmp_path):
    case = next(c for c in all_cases() if c.id == case_id)
    write_files(case, tmp_path)
    argv = [a.replace("{d}", str(tmp_path)) for a in case.argv]
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "accelsim", *argv], capture_output=True,
                          text=True, env=env, timeout=TIMEOUT_S, preexec_fn=_limit,
                          cwd=tmp_path)
    wall = time.monotonic() - t0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("accelsim: error: "), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    for word in case.expect:
        assert word in lines[0]
    assert wall < 30, f"{wall:.1f} s"
