"""Sweeps over spatial dataflows: rs runs point by point beside the systolic ones."""

from __future__ import annotations

from accelsim.sweep.runner import run_sweep
from accelsim.sweep.store import read_results


def test_a_sweep_over_eyeriss_compares_ws_and_rs(write_spec, tmp_path):
    spec = write_spec({"name": "ey", "hardware": "eyeriss", "workload": "tiny", "mode": "analytic",
                       "parameters": {"dataflow": ["ws", "rs"],
                                      "memory.sram.capacity_bytes": ["54 kB", "108 kB"]}})
    run_sweep(spec, tmp_path / "out", workers=1, progress=False)
    rows = read_results(tmp_path / "out")
    assert len(rows) == 4 and set(rows["dataflow"]) == {"ws", "rs"}
    assert (rows["error"] == "").all()
    assert (rows["total_cycles"] > 0).all()
