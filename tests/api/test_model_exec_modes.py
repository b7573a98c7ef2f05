"""Whole models on a GPU as frameworks run them (issue 12): execution modes, where the time
goes, the HBM memory check, and the host/GPU timeline."""

import json
import math

import pytest

from accelsim.api.model_run import run_model
from accelsim.errors import AccelsimError
from accelsim.report.stream_trace import stream_trace_events

DECODE = "llama3_8b_decode:batch=1,context=2048"


@pytest.fixture(scope="module")
def runs():
    return {m: run_model("h200", DECODE, exec_mode=m) for m in ("eager", "graph", "compiled")}


def test_small_batch_decode_is_host_bound_in_eager_and_not_in_a_graph(runs):
    eager, graph = runs["eager"].totals, runs["graph"].totals
    # the same kernels run in both modes ...
    assert eager["kernels"] == graph["kernels"]
    assert eager["gpu_busy_s"] == pytest.approx(graph["gpu_busy_s"])
    # ... but eager dispatches ~2,000 calls from the host: the GPU waits most of the step
    idle = runs["eager"].breakdown.set_index("kernel_class")["fraction"]["host-idle"]
    assert idle > 0.5 and eager["time_s"] > 2 * graph["time_s"]
    assert graph["gpu_idle_s"] < 0.01 * graph["time_s"]


def test_compiled_mode_launches_fewer_kernels(runs):
    assert runs["compiled"].totals["kernels"] < 0.5 * runs["eager"].totals["kernels"]


def test_breakdown_accounts_for_the_whole_step(runs):
    for r in runs.values():
        b = r.breakdown
        assert set(b["kernel_class"]) >= {"gemm", "attention", "norm", "host-idle"}
        assert b["time_s"].sum() == pytest.approx(r.totals["time_s"])


def test_event_replay_gives_the_closed_form_numbers():
    a = run_model("h200", "gpt2_small_decode:batch=2,context=64", exec_mode="eager")
    b = run_model("h200", "gpt2_small_decode:batch=2,context=64", exec_mode="eager",
                  replay="event")
    assert a.totals["time_s"] == b.totals["time_s"]
    assert (a.calls["gpu_end_s"].fillna(-1) == b.calls["gpu_end_s"].fillna(-1)).all()


def test_memory_check_reports_headroom_and_refuses_what_does_not_fit(runs):
    mem = runs["graph"].memory
    assert 15e9 < mem.weights_bytes < 17e9          # 8.0 B parameters in bf16
    assert mem.kv_cache_bytes == pytest.approx(2 * 32 * 8 * 2048 * 128 * 2, rel=1e-3)
    assert mem.headroom_bytes > 100e9
    with pytest.raises(AccelsimError, match=r"does not fit on h200: needs .* of 141"):
        run_model("h200", "llama3_70b_decode:batch=64,context=8192")


def test_unknown_exec_mode_is_one_line_naming_the_value():
    with pytest.raises(AccelsimError, match="turbo"):
        run_model("h200", DECODE, exec_mode="turbo")


def test_trace_has_a_host_track_and_a_gpu_stream_track_that_nest(runs):
    ev = stream_trace_events(runs["eager"])
    names = {(e["pid"], e.get("tid"), e["args"]["name"]) for e in ev if e["ph"] == "M"}
    assert any(n[2] == "host" for n in names) and any(n[2] == "stream 0" for n in names)
    by_thread = {}
    for e in ev:
        if e["ph"] == "X":
            by_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    assert len(by_thread) == 3
    for spans in by_thread.values():   # slices on one thread never partly overlap
        spans.sort()
        for (_s0, e0), (s1, e1) in zip(spans, spans[1:]):
            assert s1 >= e0 - 1e-6 or e1 <= e0 + 1e-6


def test_cli_exec_flag_json_and_bad_value(cli_in_process, tmp_path):
    """``accelsim run --exec`` (in-process; tests/cli/test_run_cli.py runs the real command)."""
    cmd = ["run", "h200", "bert_base:batch=1,seq=128", "--exec", "graph", "--json",
           "--out", str(tmp_path)]
    good = cli_in_process(*cmd)
    assert good.returncode == 0, good.stderr
    doc = json.loads(good.stdout)
    assert doc["exec_mode"] == "graph"
    assert {b["kernel_class"] for b in doc["breakdown"]} >= {"gemm", "host-idle"}
    assert doc["totals"]["memory"]["headroom_bytes"] > 0
    bad = cli_in_process(*cmd[:3], "--exec", "turbo")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "turbo" in bad.stderr
    assert not math.isnan(doc["totals"]["time_s"])


def test_model_runs_price_energy_exactly_as_the_device_does():
    """The per-precision linear pricing used by model runs equals gpu_energy_j."""
    from accelsim.config.registry import load_machine
    from accelsim.devices.gpu_model import _energy_j
    from accelsim.report.energy import energy_table_for
    from accelsim.report.gpu_power import gpu_energy_j

    m = load_machine("h200")
    table = energy_table_for(m)
    cache: dict = {}
    for macs, flops, l2, hbm in ((3e9, 7e9, 5e8, 2e8), (0, 1e5, 1e6, 3e6), (1e12, 2e12, 0, 1e9)):
        for prec in ("bf16", "fp8", "fp32"):
            want = gpu_energy_j(m, table, macs=macs, flops=flops, l2_bytes=l2, hbm_bytes=hbm,
                                precision=prec)
            got = _energy_j(m, table, cache, macs=macs, flops=flops, l2_bytes=l2,
                            hbm_bytes=hbm, precision=prec)
            assert got == pytest.approx(want, rel=1e-9)
