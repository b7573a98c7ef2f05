"""One result protocol: whatever the machine kind, ``simulate`` returns an object with
``.layers``, ``.totals``, ``.energy`` (``total_pj``, ``pj_per_mac``, ``average_power_w``,
``breakdown()``), ``.machine``, ``.workload``, ``.params`` and a short repr, so that one
newcomer's script runs unchanged on a TPU, a GPU and a CPU. ``simulate_op`` takes op names
and fields as ``accelsim op`` does; the links API takes sizes as the command line writes them.
"""

from __future__ import annotations

import pytest

from accelsim.api import RunResult, make_op, simulate, simulate_op
from accelsim.api.links import collective, transfer
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.workload.nn_ops import Attention
from accelsim.workload.ops import Gemm

WORKLOAD = "gpt2_small_decode:batch=2,context=64"


def newcomer(hw: str) -> dict:
    """A first script, written once: run a model, look at time, energy and what ran."""
    r = simulate(hw, WORKLOAD)
    text = repr(r)
    slowest = r.layers.sort_values("time_s", ascending=False).head(3)
    by_layer = r.energy.breakdown()
    return {"repr": text, "time_s": r.totals["time_s"], "layers": len(r.layers),
            "slowest": list(slowest["layer"]), "total_pj": r.energy.total_pj,
            "pj_per_mac": r.energy.pj_per_mac, "watts": r.energy.average_power_w,
            "breakdown_pj": float(by_layer["pj"].sum()), "machine": r.machine.name,
            "workload": r.workload.name, "params": dict(r.params), "result": r}


@pytest.mark.parametrize("hw", ["tpu_v4", "h200", "spr_cpu"])
def test_the_same_newcomer_script_runs_on_a_tpu_a_gpu_and_a_cpu(hw):
    got = newcomer(hw)
    r = got["result"]
    assert isinstance(r, RunResult)
    assert got["machine"] == hw and got["layers"] > 0 and got["time_s"] > 0
    assert len(got["slowest"]) == 3
    # energy: positive, the breakdown adds up to the total, power is energy over time
    assert got["total_pj"] > 0 and got["pj_per_mac"] > 0
    assert got["breakdown_pj"] == pytest.approx(got["total_pj"], rel=1e-9)
    assert got["watts"] == pytest.approx(got["total_pj"] * 1e-12 / got["time_s"], rel=1e-9)
    # what ran: the zoo model's parameters (given and defaulted) and the engine mode
    assert got["params"]["batch"] == 2 and got["params"]["context"] == 64
    assert got["params"]["dtype"] == "bf16" and got["params"]["mode"] == "auto"
    # a short repr: a few lines that fit a screen, naming machine and workload
    lines = got["repr"].splitlines()
    assert 2 <= len(lines) <= 6 and max(map(len, lines)) <= 120, got["repr"]
    assert hw in lines[0] and got["workload"] in lines[0]
    doc = r.to_dict()
    assert doc["params"] == got["params"]
    assert doc["energy"]["total_pj"] == pytest.approx(got["total_pj"], rel=1e-12)


def test_a_gpu_run_reports_its_energy_as_its_totals_do():
    r = simulate("h200", WORKLOAD, exec_mode="graph")
    assert r.energy.total_pj * 1e-12 == pytest.approx(r.totals["energy_j"], rel=1e-12)
    assert r.params["exec_mode"] == "graph"
    by_op = r.energy.breakdown(("op",))
    assert set(by_op["op"]) >= {"gemm"} and by_op["pj"].sum() == pytest.approx(
        r.energy.total_pj, rel=1e-9)
    with pytest.raises(Exception, match="not a column"):
        r.energy.breakdown(("level",))


def test_a_systolic_run_says_which_dataflow_ran():
    """The machine's own dataflow when none is given, else the one asked for."""
    from accelsim.config.registry import load_machine

    own = load_machine("tpu_v4").array.dataflow
    other = next(d for d in ("os", "ws", "is") if d != own)
    assert simulate("tpu_v4", "alexnet").params["dataflow"] == own
    assert simulate("tpu_v4", "alexnet", dataflow=other).params["dataflow"] == other


def test_simulate_op_takes_op_names_and_fields_as_accelsim_op_does():
    by_name = simulate_op("h200", "gemm", m=1024, n=2048, k=512, mode="analytic")
    by_obj = simulate_op("h200", Gemm(name="gemm", m=1024, n=2048, k=512, dtype="bf16",
                                      shared_weights=False), mode="analytic")
    assert by_name["time_s"] == by_obj["time_s"] and by_name["flops"] == 2 * 1024 * 2048 * 512
    # command-line spellings and defaults: --seq is seq_q, seq_kv defaults to it
    att = make_op("attention", batch=2, heads=8, seq=256, head_dim=64, causal=True)
    assert isinstance(att, Attention) and att.seq_q == att.seq_kv == 256 and att.dtype == "bf16"
    assert make_op("relu", rows=8, cols=8).fn == "relu"
    assert simulate_op("h200", "gemm", m=64, n=64, k=64, dtype="fp16")["precision"] == "fp16"


@pytest.mark.parametrize(("call", "says"), [
    (lambda: make_op("matmul", m=8), "unknown operator"),
    (lambda: make_op("gemm", m=8, n=8, kk=8), "not a field of gemm"),
    (lambda: make_op("gemm", m=8, n=8), "gemm needs k"),
    (lambda: make_op("gemm", m=0, n=8, k=8), "must be an integer >= 1"),
    (lambda: make_op(Gemm(name="g", m=8, n=8, k=8), m=4), "fields go with an op name"),
])
def test_bad_op_names_and_fields_are_one_line(call, says):
    with pytest.raises(ConfigError) as err:
        call()
    assert says in str(err.value) and "\n" not in str(err.value)


def test_sizes_take_the_command_lines_strings():
    assert transfer("h200x2", "host", "gpu0", "1GiB")["bytes"] == 2**30
    a = collective("hgx_h200_x8", "allreduce", "64 MB")
    b = collective("hgx_h200_x8", "allreduce", 64e6)
    assert a["time_s"] == b["time_s"]
    with pytest.raises(ConfigError, match="nbytes"):
        transfer("h200x2", "host", "gpu0", "1 GHz")


@pytest.mark.parametrize("hw", ["tpu_v4", "spr_cpu", "h200"])
def test_simulate_op_takes_names_and_fields_on_every_kind(hw):
    """``simulate_op(hw, "gemm", m=, n=, k=)`` answers on arrays and CPUs as on GPUs, with
    the keys every kind shares; an array's or a CPU's figures are the one-layer run's."""
    doc = simulate_op(hw, "gemm", m=512, n=256, k=1024)
    assert doc["machine"] == hw and doc["flops"] == 2 * 512 * 256 * 1024
    assert doc["time_s"] > 0 and doc["flop_per_s"] == pytest.approx(doc["flops"] / doc["time_s"])
    if hw != "h200":
        r = simulate(hw, make_op("gemm", m=512, n=256, k=1024))
        assert doc["time_s"] == pytest.approx(float(r.totals["time_s"]))
        assert doc["energy_j"] == pytest.approx(r.energy.total_pj / 1e12)
        with pytest.raises(UnsupportedError, match="exec"):
            simulate_op(hw, "gemm", m=8, n=8, k=8, exec="eager")


def test_simulate_op_on_a_system_is_one_line():
    with pytest.raises(UnsupportedError, match="not a GPU"):
        simulate_op("h200x2", "gemm", m=8, n=8, k=8)


def test_links_are_part_of_the_top_level_api_with_torch_collective_names():
    import accelsim.api as api

    assert api.transfer is transfer and api.collective is collective
    ring = collective("hgx_h200_x8", "allreduce", "64 MB")
    assert collective("hgx_h200_x8", "all_reduce", "64 MB")["time_s"] == ring["time_s"]
    assert collective("hgx_h200_x8", "reduce_scatter", "64 MB")["time_s"] < ring["time_s"]
    with pytest.raises(ConfigError, match="must be one of"):
        collective("hgx_h200_x8", "all_sum", "64 MB")
