"""JSON fields carry their unit the project's way (``flop_per_s``, ``bytes_per_s``); the old
GB/s and TFLOP/s names stay one release as aliases holding the same quantity."""

import pytest

from accelsim.api import simulate
from accelsim.api.gpu import simulate_op
from accelsim.api.links import collective, transfer
from accelsim.workload.ops import Gemm


def test_gpu_op_reports_flop_per_s():
    doc = simulate_op("h200", Gemm(name="g", m=1024, n=1024, k=1024, dtype="bf16"), mode="analytic")
    assert doc["flop_per_s"] == pytest.approx(doc["flops"] / doc["time_s"])
    assert doc["tflops"] == pytest.approx(doc["flop_per_s"] / 1e12)
    assert doc["peak_tflops"] == pytest.approx(doc["peak_flop_per_s"] / 1e12)
    assert doc["flop_per_s"] <= doc["peak_flop_per_s"]


def test_links_report_bytes_per_s():
    t = transfer("h200x2", "host", "gpu0", 2**30)
    assert t["bytes_per_s"] == pytest.approx(2**30 / t["time_s"])
    assert t["gbps"] == pytest.approx(t["bytes_per_s"] / 1e9)
    assert t["link_gbps"] == pytest.approx(t["link_bytes_per_s"] / 1e9)
    c = collective("hgx_h200_x8", "allreduce", 1e9)
    assert c["bytes_per_s"] == pytest.approx(c["algbw_bytes_per_s"])
    assert c["busbw_gbps"] == pytest.approx(c["busbw_bytes_per_s"] / 1e9)


def test_systolic_totals_report_flop_per_s():
    t = simulate("tpu_v4", Gemm(name="g", m=256, n=256, k=256), mode="analytic").totals
    assert t["flop_per_s"] == pytest.approx(t["flops"] / t["time_s"])
    assert t["tflops_per_s"] == pytest.approx(t["flop_per_s"] / 1e12)
