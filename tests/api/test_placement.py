"""Placement API and the co-training scenario: cost tables come from each family's model,
training steps count forward and both gradient GEMMs, and data-parallel co-training reports
its split, its exchange and the power it costs."""

import math

import pytest

from accelsim.api.placement import (
    cost_table,
    cotrain,
    get_graph,
    graph_from_workload,
    place_model,
    training_ops,
)
from accelsim.config.node import load_node
from accelsim.errors import WorkloadError
from accelsim.hw.cpu import op_cost
from accelsim.workload.ops import Conv2d, Gemm, Workload


@pytest.fixture(scope="module")
def node():
    return load_node("node_gpu_npu")


def test_cost_table_uses_each_devices_own_model(node):
    g = get_graph("resnet50:batch=2")
    t = cost_table(g, node)
    op = g.nodes[0].op
    assert t.seconds[op.name]["host"] == op_cost(node.machine("host"), op).time_s
    assert t.cost(op.name, "gpu0") == t.seconds[op.name]["gpu0"] + node.devices[0].op_launch_s
    assert all(math.isfinite(v) for row in t.seconds.values() for v in row.values())


def test_training_step_has_forward_and_two_gradient_gemms_per_layer():
    g = get_graph("resnet50:batch=2")
    ops = training_ops(g)
    convs = [n.op for n in g.nodes if isinstance(n.op, (Conv2d, Gemm))]
    wgrad = [o for o in ops if o.name.endswith(".wgrad")]
    dgrad = [o for o in ops if o.name.endswith(".dgrad")]
    assert len(wgrad) == len(convs)
    assert len(dgrad) == len(convs) - 1  # the first conv reads only the image
    # each gradient GEMM does as many MACs as its forward op
    fwd = {o.name: o.macs for o in convs}
    assert all(o.macs == fwd[o.name.rsplit(".", 1)[0]] for o in wgrad + dgrad)


def test_greedy_placement_never_loses_to_its_own_best_single_device_by_much(node):
    r = place_model(node, "resnet50:batch=2")
    best = min(r.single_device_s.values())
    assert r.makespan_s <= best * 1.01
    assert r.devices["ops"].sum() == len(r.graph.nodes)


@pytest.mark.slow
def test_cotraining_reports_split_exchange_and_power(node):
    ct = cotrain(node, "resnet50", batch=64, steps=3)
    best = ct["best_split"]
    assert best["batch_gpu0"] + best["batch_npu0"] == 64
    assert best["step_s"] == pytest.approx(best["compute_s"] + best["exchange_s"])
    assert best["exchange_s"] > 0
    assert ct["speedup_overlapped"] >= ct["speedup"]
    assert ct["power_ratio"] == pytest.approx((700 + 310) / 700)


def test_a_plain_workload_becomes_a_chain_in_file_order():
    from accelsim.workload.nn_ops import Attention

    ops = (Gemm(name="a", m=64, n=32, k=16, dtype="fp16"),
           Gemm(name="a", m=64, n=48, k=32, dtype="fp16"),
           Attention(name="att", batch=1, heads=2, seq_q=8, seq_kv=8, head_dim=24, dtype="fp16"))
    g = graph_from_workload(Workload("w", ops))
    assert [n.name for n in g.nodes] == ["a", "a#2", "att"]  # duplicate names made unique
    first, second, att = g.nodes
    assert g.tensors[first.inputs[0]].kind == "input"
    assert g.tensors[first.inputs[0]].elements == 64 * 16
    assert second.inputs[0] == first.outputs[0]  # each op reads its predecessor's output
    assert att.inputs[0] == second.outputs[0]
    assert g.tensors["att.kv"].kind == "input"  # operands the chain does not produce
    assert {g.tensors[t].kind for t in second.inputs[1:]} == {"weight"}
    assert g.params["dtype"] == "fp16"


def test_place_model_takes_a_builtin_workload_and_names_what_it_accepts(node):
    r = place_model(node, "alexnet", baselines=False)
    assert r.devices["ops"].sum() == len(r.graph.nodes) == 8
    with pytest.raises(WorkloadError, match="zoo model spec, a workload YAML/CSV path"):
        get_graph("resnet5000")
