"""``simulate_op(..., exec=...)``: one op as users call it, through the mode's lowering."""

from __future__ import annotations

import pytest

from accelsim.api.gpu import simulate_op
from accelsim.config.lowering import load_lowering
from accelsim.config.registry import load_machine
from accelsim.errors import ConfigError
from accelsim.workload.op_calls import default_call, op_call_sites, user_calls
from accelsim.workload.registry import OP_TYPES

SHAPES = {
    "gemm": dict(m=64, n=1024, k=1024), "conv2d": dict(n=1, c=64, h=28, w=28, k=64, r=3, s=3,
                                                     pad=1),
    "elementwise": dict(rows=128, cols=1024), "layernorm": dict(rows=128, cols=1024),
    "softmax": dict(rows=128, cols=1024),
    "attention": dict(batch=1, heads=8, seq=256, head_dim=64, causal=True),
    "embedding": dict(tokens=16, dim=1024, table_rows=32000),
    "batchnorm": dict(n=1, c=64, h=28, w=28), "pool": dict(n=1, c=64, h=28, w=28),
}


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


@pytest.mark.parametrize("kind", sorted(OP_TYPES))
def test_every_op_kind_has_a_user_call_whose_host_classes_the_machine_prices(h200, kind):
    kern = simulate_op(h200, kind, mode="analytic", **SHAPES[kind])
    eager = simulate_op(h200, kind, mode="analytic", exec="eager", **SHAPES[kind])
    graph = simulate_op(h200, kind, mode="analytic", exec="graph", **SHAPES[kind])
    assert eager["gpu_s"] == graph["gpu_s"] == pytest.approx(kern["time_s"])
    assert all(c["host_class"] in h200.host.eager_call_s for c in eager["calls"])
    assert sum(c["launches"] for c in eager["calls"]) == 1
    assert eager["host_s"] == pytest.approx(sum(c["host_s"] for c in eager["calls"]))
    # steady state of 20 calls: at least the busier side, at most both sides
    for doc in (eager, graph):
        assert max(doc["host_s"], doc["gpu_s"]) <= doc["time_s"] + 1e-15
        assert doc["time_s"] <= doc["host_s"] + doc["gpu_s"] + 1e-15
    assert graph["time_s"] <= eager["time_s"]


def test_the_replay_and_its_recurrence_agree(h200):
    """The SimPy replay of host and stream and its closed-form recurrence give one time for the
    same kernels (``mode`` prices the kernels, ``replay`` runs the stream), host-bound (a
    skinny GEMM) and GPU-bound (a large one), eager and graph."""
    from accelsim.api.gpu import make_op
    from accelsim.devices.gpu_op_program import op_program

    for m in (8, 4096):
        op = make_op("gemm", m=m, n=4096, k=4096)
        for exec_mode in ("eager", "graph"):
            ev, an = (op_program(h200, op, 10e-6 if m == 8 else 200e-6, exec_mode=exec_mode,
                                 replay=r) for r in ("event", "analytic"))
            assert ev["host_s"] == pytest.approx(an["host_s"], rel=1e-12)
            assert ev["time_s"] == pytest.approx(an["time_s"], rel=1e-9)


def test_one_op_programs_take_the_captured_program_keys_of_the_lowering():
    eager = load_lowering("eager")
    for kind, fields in SHAPES.items():
        from accelsim.api.gpu import make_op

        op = make_op(kind, **fields)
        for call in user_calls(op):
            chosen, sites = op_call_sites(op, call)
            assert chosen == call
            assert sites[-1].op is op  # the computing call carries the op itself
            assert all(s.key in eager.ops or f"call.{s.group}" in eager.ops for s in sites)


def test_default_calls_are_what_users_write():
    from accelsim.api.gpu import make_op

    assert default_call(make_op("gemm", m=1, n=8, k=8)) == "nn.Linear"
    assert default_call(make_op("gemm", m=1, n=8, k=8, batch=4)) == "matmul"  # bmm
    assert default_call(make_op("layernorm", rows=1, cols=8, rms=True)) == "F.rms_norm"
    assert default_call(make_op("gelu", rows=1, cols=8)) == "F.gelu"
    _, sites = op_call_sites(make_op("gemm", m=1, n=8, k=8, batch=4))
    assert sites[0].key == "call.bmm"


def test_bad_exec_and_call_are_one_line_errors(h200):
    with pytest.raises(ConfigError, match="must be one of eager, graph"):
        simulate_op(h200, "add", rows=8, cols=8, exec="compiled")
    with pytest.raises(ConfigError, match="known: nn.Conv2d, F.conv2d"):
        simulate_op(h200, "conv2d", n=1, c=8, h=8, w=8, k=8, r=1, s=1, exec="eager",
                    call="nn.Linear")
    with pytest.raises(ConfigError, match="execution mode"):
        simulate_op(h200, "add", rows=8, cols=8, call="torch.add")


def test_a_module_call_costs_the_class_measured_as_the_whole_module_call(h200):
    """``nn.Linear`` costs its measured whole-call class (a parameterised module's forward is
    dearer than ``call.module``'s identity module); ``F.linear`` its functional class only."""
    from accelsim.units import parse_time

    fields = dict(m=8, n=1024, k=1024)
    mod = simulate_op(h200, "gemm", mode="analytic", exec="eager", call="nn.Linear", **fields)
    fn = simulate_op(h200, "gemm", mode="analytic", exec="eager", call="F.linear", **fields)
    classes = h200.host.eager_call_s
    assert mod["host_s"] == pytest.approx(parse_time(classes["linear"]))
    assert fn["host_s"] == pytest.approx(parse_time(classes["f_linear"]))
    assert mod["calls"][0]["host_class"] == "linear" and mod["calls"][0]["host_s"] > 0
    assert mod["host_s"] - fn["host_s"] > parse_time(classes["module"])


def test_an_nchw_convolution_launches_cudnn_layout_transposes_sized_by_its_tensors(h200):
    """``nn.Conv2d:nchw``: three transposes (input, filter, output) around a 3x3 convolution,
    each reading and writing its tensor's bytes, their time added to the call's GPU time; a 1x1
    convolution (a GEMM on the NCHW tensor) and a depthwise one launch none."""
    conv = dict(n=4, c=64, h=56, w=56, k=128, r=3, s=3, pad=1, dtype="bf16")
    cl = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d", **conv)
    nchw = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d:nchw",
                       **conv)
    copies = nchw["layout_copies"]
    assert [c["bytes"] for c in copies] == [4 * 64 * 56 * 56 * 2, 128 * 64 * 9 * 2,
                                            4 * 128 * 56 * 56 * 2]
    assert nchw["gpu_s"] == pytest.approx(cl["gpu_s"] + sum(c["time_s"] for c in copies))
    assert copies[2]["time_s"] > copies[0]["time_s"] > 0  # the output is twice the input
    assert cl["layout_copies"] == []
    for other in (dict(conv, r=1, s=1, pad=0), dict(conv, k=64, groups=64)):
        doc = simulate_op(h200, "conv2d", mode="analytic", exec="eager", call="F.conv2d:nchw",
                          **other)
        assert doc["layout_copies"] == []


def test_an_nchw_pointwise_convolution_is_a_batched_gemm_on_the_nchw_rows(h200):
    """``nn.Conv2d:nchw`` 1x1: cuBLAS computes ``W[k x c] @ x[c x h*w]`` per image, so its
    kernels follow the ``h*w`` rows' alignment (14x14 bf16 rows are not 16-byte aligned: a
    narrower, slower kernel than the channels-last GEMM); same MACs, no layout copies."""
    from accelsim.workload.op_calls import computed_op
    from accelsim.workload.ops import Gemm

    conv = dict(n=8, c=512, h=14, w=14, k=512, r=1, s=1, dtype="bf16")
    cl = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d", **conv)
    nchw = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d:nchw",
                       **conv)
    assert nchw["macs"] == cl["macs"] and nchw["layout_copies"] == []
    assert nchw["path"] == "narrow" and cl["path"] != "narrow"
    assert nchw["gpu_s"] > cl["gpu_s"]
    from accelsim.api.gpu import make_op

    op = make_op("conv2d", **conv)
    gemm = computed_op(op, "nn.Conv2d:nchw")
    assert isinstance(gemm, Gemm) and (gemm.m, gemm.n, gemm.k, gemm.batch) == (512, 196, 512, 8)
    assert computed_op(op, "nn.Conv2d") is op


def test_an_nchw_depthwise_convolution_runs_pytorchs_own_kernel_priced_per_output_and_tap(h200):
    """``nn.Conv2d:nchw`` depthwise: PyTorch's ``conv_depthwise2d_forward_kernel`` (one thread
    per output: ``conv.depthwise_nchw_instr_per_output`` plus ``depthwise_nchw_instr_per_tap``
    a tap), slower than cuDNN's channels-last kernel; at a batch where the instructions
    dominate, a 5x5 filter costs (per output + 25 per tap) / (per output + 9 per tap) of a
    3x3."""
    from accelsim.api.gpu import make_op
    from accelsim.workload.op_calls import computed_op
    from accelsim.workload.ops import NchwConv2d

    conv = dict(n=32, c=256, h=28, w=28, k=256, r=3, s=3, pad=1, groups=256, dtype="bf16")
    op = make_op("conv2d", **conv)
    assert isinstance(computed_op(op, "nn.Conv2d:nchw"), NchwConv2d)
    assert computed_op(op, "nn.Conv2d") is op
    cl = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d", **conv)
    nchw = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d:nchw",
                       **conv)
    assert nchw["family"] == "depthwise_nchw" and cl["family"] == "depthwise"
    assert nchw["macs"] == cl["macs"] and nchw["gpu_s"] > 2 * cl["gpu_s"]
    five = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d:nchw",
                       **dict(conv, r=5, s=5, pad=2))
    c = h200.conv
    ratio = (c.depthwise_nchw_instr_per_output + 25 * c.depthwise_nchw_instr_per_tap) \
        / (c.depthwise_nchw_instr_per_output + 9 * c.depthwise_nchw_instr_per_tap)
    assert 1 < ratio < 25 / 9
    assert five["gpu_s"] / nchw["gpu_s"] == pytest.approx(ratio, rel=0.05)


def test_layout_transposes_move_their_bytes_at_the_fitted_transpose_bandwidth(h200):
    """A large NCHW input transpose reads and writes its tensor no faster than
    ``conv.layout_transpose_bytes_per_s`` (run 11: ~2.4 TB/s, under a stream kernel's rate)."""
    conv = dict(n=32, c=64, h=56, w=56, k=128, r=3, s=3, pad=1, dtype="bf16")
    doc = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d:nchw",
                      **conv)
    big = doc["layout_copies"][0]
    assert big["time_s"] >= 2 * big["bytes"] / h200.conv.layout_transpose_bytes_per_s
    assert big["time_s"] < 1.5 * 2 * big["bytes"] / h200.conv.layout_transpose_bytes_per_s


def test_an_nchw_pointwise_convolution_runs_the_faster_of_cudnns_two_ways(h200):
    """``nn.Conv2d:nchw`` 1x1: cuBLAS's batched GEMM on the 49-element NCHW rows of a 7x7 map
    or the NHWC GEMM between an input and an output transpose, whichever is faster; at batch
    128 that is the transposed one (run 17), and it costs the NHWC convolution plus the two
    transposes."""
    conv = dict(n=128, c=512, h=7, w=7, k=2048, r=1, s=1, dtype="bf16")
    doc = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d:nchw",
                      **conv)
    from accelsim.api.gpu import make_op
    from accelsim.devices.gpu import op_document

    ways = {w: op_document(h200, make_op("conv2d", **conv), mode="analytic", exec_mode="graph",
                           call="nn.Conv2d:nchw", pointwise=w)
            for w in ("batched_gemm", "transposed")}
    assert doc["nchw_pointwise"] == "transposed"
    assert doc["gpu_s"] == min(d["gpu_s"] for d in ways.values())
    assert [c["name"] for c in doc["layout_copies"]] == ["nchwToNhwc input", "nhwcToNchw output"]
    cl = simulate_op(h200, "conv2d", mode="analytic", exec="graph", call="nn.Conv2d", **conv)
    assert doc["gpu_s"] == pytest.approx(cl["gpu_s"] + sum(c["time_s"]
                                                           for c in doc["layout_copies"]))
    assert ways["batched_gemm"]["layout_copies"] == []
