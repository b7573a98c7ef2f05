"""Kineto (torch.profiler) traces in: a trace read into a captured program and replayed
(issue 23 point 3). A synthetic trace written here, and the five real traces of run 10
(scripts/data/kineto/, the replay's *input*; their measured step times are held out and are
not read here)."""

from __future__ import annotations

import collections
import gzip
import json
from pathlib import Path

import pytest

from accelsim.api.model_run import run_model
from accelsim.cli import main
from accelsim.config.lowering import load_lowering
from accelsim.errors import WorkloadError
from accelsim.mapping.gpu_lowering import lower_sites
from accelsim.workload.kineto import is_trace_path, read_trace, trace_from_json, trace_workload
from accelsim.workload.program_ops import call_sites, unmodelled_calls
from accelsim.workload.readers import load_workload

ROOT = Path(__file__).resolve().parents[2]
TRACES = sorted((ROOT / "scripts" / "data" / "kineto").glob("kineto_*.json.gz"))

BF16 = "c10::BFloat16"


def _op(ext, name, ts, dur, dims, types, strides=None, concrete=None):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": {"External id": ext, "Input Dims": dims, "Input type": types,
                     "Input Strides": strides or [[] for _ in dims],
                     "Concrete Inputs": concrete or ["" for _ in dims]}}


def _kernel(ext, corr, name, ts, dur):
    return [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": ts - 5, "dur": 3, "args": {"External id": ext, "correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
             "args": {"External id": ext, "correlation": corr}}]


def synthetic() -> dict:
    """x[4,256] -> linear(W[512,256]) (mm nested, one kernel) -> view (no kernel) -> gelu;
    a q @ k^T of transposed batched operands whose reshape copies (two inner copies)."""
    ev = [
        _op(1, "aten::linear", 100.0, 50.0, [[4, 256], [512, 256], []], [BF16, BF16, ""],
            [[256, 1], [256, 1], []]),
        _op(2, "aten::mm", 110.0, 30.0, [[4, 256], [256, 512]], [BF16, BF16],
            [[256, 1], [1, 256]]),
        *_kernel(2, 10, "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT", 130.0, 4.0),
        _op(3, "aten::view", 160.0, 2.0, [[4, 512], []], [BF16, "ScalarList"],
            [[512, 1], []], ["", "[4, 2, 256]"]),
        _op(4, "aten::gelu", 170.0, 20.0, [[4, 2, 256], []], [BF16, ""],
            [[512, 256, 1], []], ["", "none"]),
        *_kernel(4, 11, "vectorized_elementwise_kernel<gelu>", 185.0, 2.0),
        _op(5, "aten::matmul", 200.0, 100.0, [[2, 4, 8, 16], [2, 4, 16, 8]], [BF16, BF16],
            [[512, 16, 64, 1], [512, 16, 1, 64]]),
        _op(6, "aten::copy_", 210.0, 10.0, [[2, 4, 8, 16], [2, 4, 8, 16], []],
            [BF16, BF16, "Scalar"], [[512, 128, 16, 1], [512, 16, 64, 1], []]),
        *_kernel(6, 12, "elementwise_kernel<copy>", 215.0, 1.0),
        _op(7, "aten::copy_", 230.0, 10.0, [[2, 4, 16, 8], [2, 4, 16, 8], []],
            [BF16, BF16, "Scalar"], [[512, 128, 8, 1], [512, 16, 1, 64], []]),
        *_kernel(7, 13, "elementwise_kernel<copy>", 235.0, 1.0),
        _op(8, "aten::bmm", 250.0, 40.0, [[8, 8, 16], [8, 16, 8]], [BF16, BF16],
            [[128, 16, 1], [128, 8, 1]]),
        *_kernel(8, 14, "nvjet_sm90_bmm", 280.0, 3.0),
        _op(9, "aten::frobnicate", 320.0, 5.0, [[4, 512]], [BF16], [[512, 1]]),
    ]
    return {"schemaVersion": 1, "deviceProperties": [{"name": "NVIDIA H200"}],
            "traceEvents": ev}


def test_a_synthetic_trace_becomes_the_calls_it_stands_for():
    tr = trace_from_json(synthetic(), file="t.json")
    fns = [c.fn for c in tr.program.calls]
    assert fns == ["linear", "view", "gelu", "contiguous", "contiguous", "matmul", "frobnicate"]
    lin = tr.program.calls[0]
    assert lin.outputs[0].shape == (4, 512) and lin.inputs[1].param  # the weight slot
    sites = call_sites(tr.program)
    assert sites[5].key == "call.bmm" and sites[5].op.batch == 8  # batched operands: bmm
    assert sites[1].key == "call.view"
    # measured host: start to the next top-level op's start, in seconds; inner copies 0
    assert tr.host_s[:3] == pytest.approx([60e-6, 10e-6, 30e-6])
    assert tr.host_s[3] == pytest.approx(120e-6) and tr.host_s[4:6] == (0.0, 0.0)
    assert tr.inner == (False, False, False, True, True, False, False)
    assert tr.kernel_count == 5
    assert [o.call_kernels for o in tr.ops] == [(1,), (0,), (1,), (1, 1, 1), (0,)]
    assert unmodelled_calls(tr.program) == {"aten::frobnicate": 1}


def test_host_modes_replay_measured_or_modelled_host_time(tmp_path):
    path = tmp_path / "t.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump(synthetic(), fh)
    assert is_trace_path(path) and is_trace_path(f"{path}:host=measured")
    modelled = run_model("h200", trace_workload(str(path)))
    measured = run_model("h200", trace_workload(f"{path}:host=measured"))
    assert measured.calls["host_s"].sum() == pytest.approx(225e-6)
    assert modelled.calls["host_s"].sum() != pytest.approx(225e-6)
    # the same kernels either way; a CUDA graph has no per-call host time
    assert modelled.calls["kernels"].sum() == measured.calls["kernels"].sum()
    g1 = run_model("h200", trace_workload(f"{path}:host=measured"), exec_mode="graph")
    g2 = run_model("h200", trace_workload(str(path)), exec_mode="graph")
    assert g1.step_s == pytest.approx(g2.step_s)


def _kernels_per_class(wl):
    """Trace kernels attributed to each call, and the replay's, per kernel class."""
    lowered = lower_sites(call_sites(wl.program), load_lowering("eager"))
    klass: dict[int, str] = {}
    for c in lowered:
        if c.work is not None:
            klass.setdefault(c.op_index, c.kernel_class)
    trace: collections.Counter = collections.Counter()
    for op in wl.trace.ops:
        for i, n in zip(op.calls, op.call_kernels, strict=True):
            trace[klass.get(i, "host")] += n
    return {k: v for k, v in trace.items() if v}


@pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
def test_real_traces_replay_with_their_kernels(path):
    wl = load_workload(f"{path}:host=measured")
    assert not unmodelled_calls(wl.program)  # every aten op of the five programs is mapped
    run = run_model("h200", wl)
    model = run.calls.groupby("kernel_class")["kernels"].sum().to_dict()
    trace = _kernels_per_class(wl)
    assert trace.get("host", 0) == 0  # no trace kernel under a call the replay runs nothing for
    for klass, n in trace.items():
        if klass in ("gemm", "conv"):
            # library kernels: a GEMM or convolution call launches its main kernel plus at most
            # one helper (split-K reduce, padding, memset-free workspace); the library-choice
            # model decides which, so the two counts agree within that bound
            calls = sum(1 for c in run.calls.itertuples() if c.kernel_class == klass
                        and c.kernels > 0)
            assert calls <= model[klass] <= 2 * calls and calls <= n <= 2 * calls, klass
        else:  # PyTorch's own kernels: one per call, the same on every GPU
            assert model.get(klass, 0) == n, klass
    # host measured: the profiled step is host-bound, so the replay is the trace's own step
    assert run.step_s == pytest.approx(wl.trace.step_s, rel=0.03)


@pytest.mark.parametrize("hw", ["b200", "tpu_v4_chip", "spr_cpu"])
def test_a_trace_runs_on_other_machines(hw):
    r = run_model(hw, load_workload(str(TRACES[0])))
    assert len(r.layers) > 0 and r.totals["time_s"] > 0


def _bad(tmp_path, doc, name="bad.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_bad_traces_are_one_line_errors_naming_file_and_field(tmp_path):
    good = gzip.compress(json.dumps(synthetic()).encode())
    trunc = tmp_path / "trunc.json.gz"
    trunc.write_bytes(good[: len(good) // 2])
    cases = [(trunc, "gzip")]
    cases.append((_bad(tmp_path, {"schemaVersion": 1}, "none.json"), "traceEvents"))
    doc = synthetic()
    doc["traceEvents"][0]["args"]["Input Dims"][0] = [4, "x"]
    cases.append((_bad(tmp_path, doc, "dims.json"), r"traceEvents\[0\]\.args\.Input Dims\[0\]"))
    doc = synthetic()
    doc["traceEvents"][0]["args"]["Input Dims"][0] = [2**40, 2**40]
    cases.append((_bad(tmp_path, doc, "huge.json"), "Input Dims"))
    doc = synthetic()
    doc["traceEvents"][0]["ts"] = "soon"
    cases.append((_bad(tmp_path, doc, "ts.json"), r"traceEvents\[0\]\.ts"))
    for path, field in cases:
        with pytest.raises(WorkloadError, match=field) as err:
            read_trace(path)
        assert "\n" not in str(err.value) and path.name in str(err.value)
    with pytest.raises(WorkloadError, match="host"):
        trace_workload(f"{TRACES[0]}:host=guessed")


def test_cli_runs_a_trace_and_says_how_host_time_was_taken(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = str(TRACES[-1])
    assert main(["run", "h200", f"{path}:host=measured", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["parameters"] == {"host": "measured"} and not doc["unmodelled"]
    assert main(["run", "b200", path, "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "parameters: host=modelled (default)" in out
    bad = _bad(tmp_path, {"schemaVersion": 1}, "empty.json")
    assert main(["run", "h200", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "traceEvents" in err and len(err.strip().splitlines()) == 1


def test_a_scheduled_profile_replays_its_last_step():
    doc = synthetic()
    step = {"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1}
    doc["traceEvents"] = [
        {**step, "name": "ProfilerStep#1", "ts": 5.0, "dur": 40.0},
        _op(99, "aten::relu", 10.0, 5.0, [[4, 256]], [BF16], [[256, 1]]),
        {**step, "name": "ProfilerStep#2", "ts": 90.0, "dur": 300.0},
        *doc["traceEvents"]]
    tr = trace_from_json(doc, file="t.json")
    assert [c.fn for c in tr.program.calls][:2] == ["linear", "view"]
    assert len(tr.program.calls) == 7


def test_capture_from_trace_writes_a_program_that_runs_the_same(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["capture", "--from-trace", str(TRACES[0]), "-o", "p.json"]) == 0
    assert "captured 69 calls" in capsys.readouterr().out
    prog = run_model("h200", load_workload("p.json"))
    trace = run_model("h200", load_workload(str(TRACES[0])))
    assert prog.step_s == pytest.approx(trace.step_s)
    assert main(["capture", "-o", "q.json"]) == 2
    assert not (tmp_path / "q.json").exists()
