"""The Perfetto/Chrome trace is well formed: slices on one track nest or follow each other
(never partly overlap), every track and the process are named, layers and counters present."""

from collections import defaultdict

import numpy as np
import pytest

from accelsim.api import simulate
from accelsim.report.perfetto import assign_lanes, run_trace

EPS = 1e-6  # µs: float rounding of cycle -> µs


def partial_overlaps(events: list[dict]) -> list[tuple[str, str]]:
    """Pairs of X slices on one (pid, tid) that overlap without one containing the other."""
    by_track = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            by_track[(e["pid"], e["tid"])].append(e)
    bad = []
    for slices in by_track.values():
        slices.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_: list[dict] = []
        for e in slices:
            while open_ and open_[-1]["ts"] + open_[-1]["dur"] <= e["ts"] + EPS:
                open_.pop()
            if open_ and e["ts"] + e["dur"] > open_[-1]["ts"] + open_[-1]["dur"] + EPS:
                bad.append((open_[-1]["name"], e["name"]))
            open_.append(e)
    return bad


@pytest.fixture(scope="module")
def trace():
    r = simulate("tpu_v1", "alexnet", mode="analytic", energy=False)
    return r, run_trace(r)["traceEvents"]


def test_no_partial_overlaps_on_any_track(trace):
    _, events = trace
    assert any(e.get("cat") == "dma" for e in events)
    assert partial_overlaps(events) == []


def test_the_overlap_check_can_fail():
    a = {"ph": "X", "pid": 0, "tid": 0, "name": "a", "ts": 0.0, "dur": 2.0}
    b = {**a, "name": "b", "ts": 1.0, "dur": 2.0}
    assert partial_overlaps([a, b]) == [("a", "b")]
    assert partial_overlaps([a, {**b, "dur": 0.5}]) == []  # nested is fine


def test_every_track_and_the_process_are_named(trace):
    r, events = trace
    named = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    used = {e["tid"] for e in events if e["ph"] == "X"}
    assert used <= named
    procs = [e for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert procs and "tpu_v1" in procs[0]["args"]["name"] and "alexnet" in procs[0]["args"]["name"]


def test_layer_track_has_one_slice_per_layer_back_to_back(trace):
    r, events = trace
    layers = [e for e in events if e.get("cat") == "layer"]
    assert [e["name"] for e in layers] == list(r.layers["layer"])
    ends = np.cumsum(r.layers["total_cycles"].to_numpy()) * 1e6 / r.machine.clock_hz
    assert [e["ts"] + e["dur"] for e in layers] == pytest.approx(list(ends))


def test_bandwidth_and_in_flight_counters(trace):
    r, events = trace
    bw = [e for e in events if e["ph"] == "C" and e["name"] == "DRAM bandwidth"]
    assert len(bw) == len(r.layers) + 1 and bw[-1]["args"]["GB/s"] == 0
    assert bw[0]["args"]["GB/s"] == pytest.approx(r.layers["dram_bw_bytes_per_s"].iloc[0] / 1e9)
    flight = [e["args"]["transfers"] for e in events if e["name"] == "DMA transfers in flight"]
    assert min(flight) == 0 and max(flight) >= 1


def test_lanes_never_hold_two_overlapping_intervals():
    rng = np.random.default_rng(0)
    starts = rng.integers(0, 1000, 300).astype(float)
    ends = starts + rng.integers(1, 50, 300)
    lanes = assign_lanes(starts, ends)
    for k in set(lanes):
        idx = np.argsort(starts[lanes == k])
        s, e = starts[lanes == k][idx], ends[lanes == k][idx]
        assert (s[1:] >= e[:-1]).all()
    # as few lanes as the most intervals open at one time
    points = sorted([(s, 1) for s in starts] + [(e, -1) for e in ends])
    assert lanes.max() + 1 == max(np.cumsum([d for _, d in points]))


def test_a_grouped_trace_keeps_layers_and_groups_folds(trace):
    r, events = trace
    grouped = run_trace(r, grouped=True)["traceEvents"]
    assert partial_overlaps(grouped) == []
    layers = [e["name"] for e in grouped if e.get("cat") == "layer"]
    assert layers == list(r.layers["layer"])
    folds = sum(e["args"]["folds"] for e in grouped if e.get("cat") == "compute")
    assert folds == sum(run.schedule.folds for run in r.runs)
    assert len(grouped) < len(events) / 10
    named = {e["tid"] for e in grouped if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {e["tid"] for e in grouped if e["ph"] == "X"} <= named


def test_written_traces_state_size_and_group_past_the_limit(trace, tmp_path):
    import json

    from accelsim.report.perfetto import full_trace_bytes, write_trace

    r, events = trace
    full = write_trace(r, tmp_path / "full.json", detail="auto", limit_bytes=1e12)
    assert not full.grouped and full.size_bytes == (tmp_path / "full.json").stat().st_size
    doc = json.loads((tmp_path / "full.json").read_text())
    assert sorted(map(json.dumps, doc["traceEvents"])) == sorted(map(json.dumps, events))
    assert 0.5 < full_trace_bytes(r) / full.size_bytes < 2.0
    small = write_trace(r, tmp_path / "small.json", detail="auto", limit_bytes=full.size_bytes / 2)
    assert small.grouped and small.size_bytes < full.size_bytes / 10
    kept = write_trace(r, tmp_path / "kept.json", detail="full", limit_bytes=1.0)
    assert not kept.grouped and kept.size_bytes == full.size_bytes


def test_a_grouped_stream_trace_has_one_gpu_slice_per_framework_op():
    from accelsim.api import simulate
    from accelsim.report.stream_trace import stream_trace_events

    run = simulate("h200", "gpt2_small_decode", exec_mode="eager")
    full = stream_trace_events(run)
    grouped = stream_trace_events(run, grouped=True)
    assert partial_overlaps(full) == [] and partial_overlaps(grouped) == []
    ops = [e for e in grouped if e["ph"] == "X" and e["pid"] == 1]
    gpu = [e for e in grouped if e["ph"] == "X" and e["pid"] == 2]
    assert ops == [e for e in full if e["ph"] == "X" and e["pid"] == 1 and e["tid"] == 1]
    assert len(gpu) <= len(ops) < len(full)
    busy = sum(e["dur"] for e in full if e["ph"] == "X" and e["pid"] == 2)
    assert sum(e["dur"] for e in gpu) >= busy * (1 - 1e-9)   # spans cover every kernel
