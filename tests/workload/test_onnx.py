"""ONNX import: small models built with onnx.helper map to accelsim ops with the right shapes;
unsupported ops are costed and listed, never dropped; bad files and missing dims are clear
errors."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from accelsim.errors import WorkloadError  # noqa: E402
from accelsim.workload.nn_ops import Attention, Elementwise, LayerNorm, Softmax  # noqa: E402
from accelsim.workload.onnx_reader import read_onnx, read_onnx_graph  # noqa: E402
from accelsim.workload.ops import Conv2d, Gemm  # noqa: E402
from accelsim.workload.passes import fuse  # noqa: E402


def _init(name: str, *shape: int):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def _save(tmp_path, nodes, inputs, outputs, inits=(), name="m"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def _vi(name, *shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


@pytest.fixture
def mlp(tmp_path):
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["y"], name="fc2"),
             helper.make_node("Softmax", ["y"], ["p"], name="softmax", axis=-1)]
    return _save(tmp_path, nodes, [_vi("x", "batch", 64)], [_vi("p", "batch", 10)],
                 [_init("w1", 64, 128), _init("b1", 128), _init("w2", 128, 10)], name="mlp")


def test_gemm_matmul_relu_softmax_map_to_accelsim_ops(mlp) -> None:
    g = read_onnx_graph(mlp, dims={"batch": 4})
    fc1, relu, fc2, sm = g.ops
    assert isinstance(fc1, Gemm) and (fc1.m, fc1.n, fc1.k) == (4, 128, 64) and fc1.shared_weights
    assert isinstance(relu, Elementwise) and relu.fn == "relu" and relu.rows * relu.cols == 512
    assert isinstance(fc2, Gemm) and (fc2.m, fc2.n, fc2.k) == (4, 10, 128)
    assert isinstance(sm, Softmax) and (sm.rows, sm.cols) == (4, 10)
    assert g.parameter_count() == 64 * 128 + 128 * 10
    assert g.edges()[0] == ("fc1", "relu", "h")


def test_a_dynamic_dimension_not_given_is_an_error_naming_it(mlp) -> None:
    with pytest.raises(WorkloadError, match=r"input 'x' dim 0 = 'batch': dynamic dimension"):
        read_onnx(mlp)


def test_a_file_that_is_not_onnx_is_a_clear_error(tmp_path) -> None:
    bad = tmp_path / "notes.onnx"
    bad.write_text("this is not a protobuf\n" * 10)
    with pytest.raises(WorkloadError, match="not an ONNX model"):
        read_onnx(bad)
    with pytest.raises(WorkloadError, match="no such file"):
        read_onnx(tmp_path / "missing.onnx")


def test_conv_with_padding_stride_and_groups(tmp_path) -> None:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c1"], name="conv", pads=[1, 1, 1, 1],
                              strides=[2, 2]),
             helper.make_node("Conv", ["c1", "dw"], ["c2"], name="dw", pads=[1, 1, 1, 1],
                              group=16),
             helper.make_node("Add", ["c2", "c1"], ["y"], name="residual")]
    path = _save(tmp_path, nodes, [_vi("x", 2, 3, 32, 32)], [_vi("y", 2, 16, 16, 16)],
                 [_init("w", 16, 3, 3, 3), _init("dw", 16, 1, 3, 3)], name="convs")
    conv, dw, add = read_onnx(path).ops
    assert isinstance(conv, Conv2d)
    assert (conv.n, conv.c, conv.h, conv.k, conv.r, conv.stride, conv.pad) == (
        2, 3, 32, 16, 3, 2, 1)
    assert (conv.out_h, conv.out_w) == (16, 16)
    assert isinstance(dw, Conv2d) and dw.groups == 16 and dw.macs == 2 * 16 * 16 * 16 * 9
    assert isinstance(add, Elementwise) and add.fn == "add"


def _attention_model(tmp_path):
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"], name="qk"),
             helper.make_node("Div", ["s", "scale"], ["s2"], name="scale"),
             helper.make_node("Softmax", ["s2"], ["p"], name="softmax", axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["o"], name="av"),
             helper.make_node("LayerNormalization", ["o", "gamma", "beta"], ["y"], name="ln",
                              axis=-1)]
    scale = numpy_helper.from_array(np.array(8.0, dtype=np.float32), "scale")
    return _save(tmp_path, nodes, [_vi("q", 2, 4, 16, 8), _vi("kt", 2, 4, 8, 16),
                                   _vi("v", 2, 4, 16, 8)], [_vi("y", 2, 4, 16, 8)],
                 [scale, _init("gamma", 8), _init("beta", 8)], name="attn")


def test_attention_pattern_is_tagged_and_fuses_into_one_kernel(tmp_path) -> None:
    g = read_onnx_graph(_attention_model(tmp_path))
    qk = g.node("qk")
    assert isinstance(qk.op, Gemm) and not qk.op.shared_weights
    assert (qk.op.batch, qk.op.m, qk.op.n, qk.op.k) == (8, 16, 16, 8)
    assert [n.component for n in g.nodes] == ["attention"] * 4 + ["norm"]
    assert isinstance(g.node("ln").op, LayerNorm)
    r = fuse(g)
    attn = [op for op in r.graph.ops if isinstance(op, Attention)]
    assert len(attn) == 1
    a = attn[0]
    assert (a.batch, a.heads, a.seq_q, a.seq_kv, a.head_dim) == (2, 4, 16, 16, 8)
    assert r.graph.macs == g.macs
    assert r.bytes_saved > 0


def test_unmodelled_ops_are_listed_costed_as_copies_and_never_warned(tmp_path) -> None:
    import warnings

    nodes = [helper.make_node("LRN", ["x4"], ["l"], name="lrn", size=3),
             helper.make_node("Hardmax", ["l"], ["h"], name="hmax"),
             helper.make_node("LRN", ["h"], ["y"], name="lrn2", size=3)]
    path = _save(tmp_path, nodes, [_vi("x4", 1, 4, 8, 8)], [_vi("y", 1, 4, 8, 8)], name="odd")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all, with or without a source line
        w = read_onnx(path)
    assert len(w.ops) == 3                                 # nothing dropped
    assert [dict(r) for r in w.unmodelled] == [
        {"op": "Hardmax", "count": 1, "nodes": "hmax"},
        {"op": "LRN", "count": 2, "nodes": "lrn, lrn2"}]
    lrn = w.ops[0]
    assert lrn.flops == 0 and lrn.tensor_elements()["input"] == 4 * 8 * 8


def _cnn(tmp_path, pool_attrs=None, name="cnn"):
    """conv -> batchnorm -> relu -> max pool -> global average pool -> gemm."""
    pool = pool_attrs or {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["bn"], name="bn"),
             helper.make_node("Relu", ["bn"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="maxpool", **pool),
             helper.make_node("GlobalAveragePool", ["p"], ["gap"], name="gap"),
             helper.make_node("Flatten", ["gap"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "fw"], ["y"], name="fc")]
    inits = [_init("w", 16, 3, 3, 3), *(_init(k, 16) for k in "gbmv"), _init("fw", 16, 10)]
    return _save(tmp_path, nodes, [_vi("x", 2, 3, 32, 32)], [_vi("y", 2, 10)], inits, name=name)


def test_pooling_and_batchnorm_are_costed_as_the_zoo_costs_them(tmp_path) -> None:
    from accelsim.workload.nn_ops import BatchNorm2d, Pool2d

    w = read_onnx(_cnn(tmp_path))
    assert w.unmodelled == ()
    ops = {op.name: op for op in w.ops}
    assert ops["bn"] == BatchNorm2d(name="bn", n=2, c=16, h=32, w=32, dtype="fp32")
    assert ops["maxpool"] == Pool2d(name="maxpool", n=2, c=16, h=32, w=32, mode="max", r=3,
                                    stride=2, pad=1, dtype="fp32")
    assert ops["gap"] == Pool2d(name="gap", n=2, c=16, h=16, w=16, mode="global_avg",
                                dtype="fp32")
    assert ops["maxpool"].flops == 2 * 16 * 16 * 16 * 9       # a compare per window element


def test_a_pool_in_a_form_not_modelled_is_listed(tmp_path) -> None:
    w = read_onnx(_cnn(tmp_path, {"kernel_shape": [3, 1], "strides": [1, 1]}, name="rect"))
    assert [r["op"] for r in w.unmodelled] == ["MaxPool"]


def test_reductions_copies_and_transcendentals_are_modelled(tmp_path) -> None:
    from accelsim.workload.nn_ops import Pool2d

    nodes = [helper.make_node("Erf", ["x"], ["e"], name="erf"),
             helper.make_node("ReduceMax", ["e"], ["m"], name="rmax", keepdims=1, axes=[1]),
             helper.make_node("Concat", ["m", "m"], ["y"], name="cat", axis=1)]
    path = _save(tmp_path, nodes, [_vi("x", 32, 64)], [_vi("y", 32, 2)], name="mix")
    w = read_onnx(path)
    assert w.unmodelled == ()
    erf, rmax, cat = w.ops
    assert erf.fn == "silu" and erf.flops == 4 * 32 * 64   # transcendental: silu's FLOPs
    assert isinstance(rmax, Pool2d) and rmax.tensor_elements() == {"input": 32 * 64, "output": 32}
    assert cat.fn == "copy" and cat.tensor_elements()["output"] == 64


def test_run_prints_the_unmodelled_table_and_json_field(cli, cli_in_process, tmp_path) -> None:
    """The table, report and clean stderr from a real process; the JSON field in-process."""
    import json

    nodes = [helper.make_node("Relu", ["x4"], ["r"], name="relu"),
             helper.make_node("LRN", ["r"], ["y"], name="lrn", size=3)]
    path = _save(tmp_path, nodes, [_vi("x4", 1, 4, 8, 8)], [_vi("y", 1, 4, 8, 8)], name="lrnnet")
    page = tmp_path / "r.html"
    r = cli("run", "tpu_v4", str(path), "--out", str(tmp_path), "--report", str(page))
    assert r.returncode == 0, r.stderr
    assert "unmodelled ops" in r.stdout and "LRN" in r.stdout
    assert "<h2>Unmodelled ops</h2>" in page.read_text()
    assert "Warning" not in r.stderr and ".py:" not in r.stderr
    doc = json.loads(cli_in_process("run", "h200", str(path), "--json").stdout)
    assert doc["unmodelled"] == [{"op": "LRN", "count": 1, "nodes": "lrn"}]


def test_transpose_is_a_copy_and_views_are_free(tmp_path) -> None:
    nodes = [helper.make_node("Transpose", ["x"], ["t"], name="tr", perm=[1, 0]),
             helper.make_node("Reshape", ["t", "shape"], ["r"], name="view"),
             helper.make_node("Relu", ["r"], ["y"], name="relu")]
    shape = numpy_helper.from_array(np.array([64, 32], dtype=np.int64), "shape")
    path = _save(tmp_path, nodes, [_vi("x", 32, 64)], [_vi("y", 64, 32)], [shape], name="tv")
    g = read_onnx_graph(path)
    assert [n.name for n in g.nodes] == ["tr", "relu"]
    assert g.ops[0].fn == "copy" and g.node("relu").inputs == ("t",)


def test_onnx_files_load_through_load_workload(mlp, tmp_path) -> None:
    from accelsim.workload.readers import EXTRA_READERS, load_workload

    assert ".onnx" in EXTRA_READERS
    path = _attention_model(tmp_path)
    w = load_workload(path)
    assert w.macs == 2 * 2 * 4 * 16 * 16 * 8


def test_a_matmul_of_two_activations_has_no_weight(tmp_path) -> None:
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")]
    path = _save(tmp_path, nodes, [_vi("a", 3, 16, 32), _vi("b", 32, 8)], [_vi("y", 3, 16, 8)],
                 name="mm")
    g = read_onnx_graph(path)
    (op,) = g.ops
    assert (op.batch, op.m, op.n, op.k) == (3, 16, 8, 32) and op.shared_weights
    assert g.parameter_count() == 0
    assert g.node("mm").inputs == ("a", "b")


def test_shape_arithmetic_and_constant_only_nodes_are_folded(tmp_path) -> None:
    """What exporters write to compute a reshape target (Shape -> Gather -> Concat) reads no
    activation data, and a transpose of a weight is computed once at load: neither costs."""
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Gather", ["s", "zero"], ["d0"], name="dim0", axis=0),
             helper.make_node("Unsqueeze", ["d0", "axes"], ["d0u"], name="unsq"),
             helper.make_node("Concat", ["d0u", "minus1"], ["target"], name="cat", axis=0),
             helper.make_node("Reshape", ["x", "target"], ["flat"], name="reshape"),
             helper.make_node("Transpose", ["w"], ["wt"], name="wT", perm=[1, 0]),
             helper.make_node("MatMul", ["flat", "wt"], ["y"], name="fc")]
    inits = [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
             numpy_helper.from_array(np.array([0], dtype=np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus1"),
             _init("w", 10, 64)]
    path = _save(tmp_path, nodes, [_vi("x", 4, 8, 8)], [_vi("y", 4, 10)], inits, name="fold")
    w = read_onnx(path)
    assert [op.name for op in w.ops] == ["fc"] and w.unmodelled == ()
    assert (w.ops[0].m, w.ops[0].n, w.ops[0].k) == (4, 10, 64)
