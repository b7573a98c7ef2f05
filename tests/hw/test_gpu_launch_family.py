"""Launch family of PyTorch's pointwise kernels: the lowering tables name which calls PyTorch
launches strided (elementwise_kernel / unrolled_elementwise_kernel on transposed or broadcast
views and casts, CatArrayBatchedCopy) and each such kernel pays host.strided_kernel_s more
than a vectorized one; bad values are one-line config errors."""

from __future__ import annotations

import pytest

from accelsim.api.model_run import run_model
from accelsim.config.lowering import load_lowering
from accelsim.config.registry import load_machine
from accelsim.devices.gpu_model import framework_ops
from accelsim.errors import ConfigError
from accelsim.mapping.gpu_lowering import lower
from accelsim.workload.nn_ops import Elementwise, LayerNorm

RMS = LayerNorm(name="n", rows=4, cols=4096, rms=True, dtype="bf16")
ROPE = Elementwise(name="r", rows=4, cols=4096, fn="rope", dtype="bf16")
SPEC = "llama3_8b_decode:batch=1,context=128"


def _families(op, mode="eager"):
    return [c.family for c in lower([(op, 0)], load_lowering(mode)) if c.work is not None]


def test_eager_names_the_strided_kernels_of_rmsnorm_and_rope():
    # run 1 profile order: fp32 cast (unrolled), pow, mean, +eps, rsqrt, x * rsqrt
    # (broadcast: elementwise_kernel), cast back, * weight
    assert _families(RMS) == ["strided", "vectorized", "vectorized", "vectorized",
                              "vectorized", "strided", "vectorized", "vectorized"]
    # x * cos, neg, cat, rotate_half * sin on the transposed view; the final add is contiguous
    assert _families(ROPE) == ["strided"] * 4 + ["vectorized"]


def test_graph_keeps_and_the_compiler_drops_the_families():
    assert _families(RMS, "graph") == _families(RMS)
    # Inductor's own kernels: no PyTorch strided launches, also for inherited ops
    assert set(_families(RMS, "compiled")) == {"vectorized"}
    assert set(_families(ROPE, "compiled")) == {"vectorized"}


def test_each_strided_kernel_pays_strided_kernel_s(monkeypatch):
    from accelsim.devices import gpu_model

    monkeypatch.setattr(gpu_model, "ZOO_LOWERING", "ops")  # the op lowering counted here
    h200 = load_machine("h200")
    assert h200.host.strided_kernel_s > 0
    flat = load_machine("h200", {"host.strided_kernel_s": 0.0})
    _, ops, _ = framework_ops(SPEC)
    strided = sum(c.family == "strided" for c in lower(ops, load_lowering("graph"))
                  if c.work is not None)
    assert strided == 65 * 2 + 64 * 4 + 64   # norms, rope of q and k, KV-cache copies
    with_, without = (run_model(m, SPEC, exec_mode="graph").calls["gpu_s"].sum()
                      for m in (h200, flat))
    assert with_ - without == pytest.approx(strided * h200.host.strided_kernel_s, rel=1e-6)


def test_bad_family_is_a_one_line_config_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("ops:\n  gemm:\n    - {call: linear, kernel: main, family: gather}\n")
    with pytest.raises(ConfigError, match=r"ops\.gemm\[0\]\.family = 'gather'.*vectorized"):
        load_lowering(str(bad))
    host_only = tmp_path / "host.yaml"
    host_only.write_text("ops:\n  gemm:\n    - {call: view, family: strided}\n")
    with pytest.raises(ConfigError, match=r"ops\.gemm\[0\]\.family.*launches a kernel"):
        load_lowering(str(host_only))
    with pytest.raises(ConfigError, match=r"h200\.yaml: host\.strided_kernel_s = -1"):
        load_machine("h200", {"host.strided_kernel_s": -1.0})


def test_strided_kernels_pay_index_arithmetic_per_element():
    """compute.strided_instr_per_element: the strided kernels' cost grows with the elements
    they walk (prefill), the compiler's vectorized kernels do not pay it."""
    h200 = load_machine("h200")
    assert h200.compute.strided_instr_per_element > 0
    flat = load_machine("h200", {"compute.strided_instr_per_element": 0.0})

    def extra(spec, mode):
        return (run_model(h200, spec, exec_mode=mode).calls["gpu_s"].sum()
                - run_model(flat, spec, exec_mode=mode).calls["gpu_s"].sum())

    short, long = (extra(f"llama3_8b_prefill:batch=1,seq={s}", "graph") for s in (512, 2048))
    assert 0 < short < long and long / short > 3.0
    assert extra("llama3_8b_prefill:batch=1,seq=512", "compiled") == pytest.approx(0.0)
