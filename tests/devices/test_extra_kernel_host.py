"""Eager calls pay host.extra_kernel_s for every kernel their library launches by shape beyond
the main one (split-K reduce, NCHW transposes, ...): one rule for single ops and whole models
(``hw/gpu/kernel.py`` ``EXTRA_LAUNCH``, ``devices/gpu_op_program.py``,
``devices/gpu_model.py``)."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from accelsim.api.model_run import run_model
from accelsim.config.registry import load_machine
from accelsim.devices.gpu import op_document
from accelsim.hw.gpu.gemm import plan_gemm
from accelsim.hw.gpu.kernel import extra_launches
from accelsim.workload.ops import Conv2d, Gemm

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


def _without_extra(m):
    return dataclasses.replace(m, host=dataclasses.replace(m.host, extra_kernel_s=0.0))


def test_split_k_linear_pays_one_extra_launch_in_eager_not_in_a_graph(h200):
    """K = 8192, N = 1024 at M = 8 splits K (run 16's probe: 2 kernels); K = 1024 does not."""
    split = Gemm(name="g", m=8, n=1024, k=8192, dtype="bf16", bias=True)
    plain = Gemm(name="g", m=8, n=1024, k=1024, dtype="bf16", bias=True)
    assert extra_launches(plan_gemm(h200, 8, 1024, 8192, "bf16", bias=True).kernels) == 1
    assert extra_launches(plan_gemm(h200, 8, 1024, 1024, "bf16", bias=True).kernels) == 0
    eager = op_document(h200, split, exec_mode="eager")
    assert eager["extra_kernels"] == 1
    assert eager["host_s"] == pytest.approx(h200.host.call_s("linear") + h200.host.extra_kernel_s)
    assert op_document(h200, plain, exec_mode="eager")["host_s"] == pytest.approx(
        h200.host.call_s("linear"))
    graph = op_document(h200, split, exec_mode="graph")
    assert graph["host_s"] == pytest.approx(h200.host.graph_launch_s / graph["back_to_back_calls"])


def test_nchw_conv_pays_its_three_transposes(h200):
    conv = Conv2d(name="c", n=1, c=16, h=16, w=16, k=16, r=3, s=3, stride=1, pad=1,
                  dtype="bf16")
    cl = op_document(h200, conv, exec_mode="eager", call="nn.Conv2d")
    nchw = op_document(h200, conv, exec_mode="eager", call="nn.Conv2d:nchw")
    assert len(nchw["layout_copies"]) == 3 and nchw["extra_kernels"] == 3
    assert nchw["host_s"] - cl["host_s"] == pytest.approx(3 * h200.host.extra_kernel_s)


def test_a_whole_eager_step_pays_extra_launches_a_graph_step_does_not(h200):
    """Llama-3-8B decode at batch 1: its K = 4096 / 14336 projections split K; the eager step's
    host time grows by extra_kernel_s per split GEMM, the CUDA-graph step not at all."""
    free = _without_extra(h200)
    w = "llama3_8b_decode"
    eager, eager0 = run_model(h200, w, exec_mode="eager"), run_model(free, w, exec_mode="eager")
    graph, graph0 = run_model(h200, w, exec_mode="graph"), run_model(free, w, exec_mode="graph")
    grown = eager.totals["host_busy_s"] - eager0.totals["host_busy_s"]
    assert grown > 0
    assert grown == pytest.approx(round(grown / h200.host.extra_kernel_s)
                                  * h200.host.extra_kernel_s, rel=1e-6)
    assert graph.totals["time_s"] == pytest.approx(graph0.totals["time_s"])


def test_shipped_extra_kernel_s_is_the_fit_of_run_16s_probe(h200):
    path = ROOT / "scripts" / "fit" / "fit_extra_kernel_host.py"
    spec = importlib.util.spec_from_file_location("fit_extra_kernel_host", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fit = mod.fit()
    assert fit["cases"] >= 10
    assert h200.host.extra_kernel_s == pytest.approx(fit["extra_kernel_s"], abs=0.05e-6)


def test_the_split_k_rule_follows_the_probes_kernel_counts(h200):
    """Every nn.Linear of the probe: the model splits K exactly where cuBLASLt did (its
    profiled kernels: a splitKreduce_kernel beside the GEMM)."""
    import json

    doc = json.loads((ROOT / "scripts" / "data" / "h200_extra_kernel_host_run16.json")
                     .read_text())
    cases = [c for c in doc["cases"] if c["call"] == "nn.Linear"]
    assert len(cases) == 20
    for c in cases:
        measured = any("splitKreduce" in k[0] for k in c["profile"]["kernels"])
        plan = plan_gemm(h200, c["m"], c["n"], c["k"], "bf16", bias=True)
        assert (plan.split_k > 1) == measured, c
