"""The placed-graph engine: ops wait for their inputs, devices run one op at a time, copies
cost what the link model says when alone and take longer when they share a link."""

import pytest

from accelsim.config.node import load_node
from accelsim.engine.placed import run_data_parallel, run_placed
from accelsim.hw import link as hwlink
from accelsim.mapping.placement import CostTable, Placement
from accelsim.workload.graph import GraphBuilder
from accelsim.workload.nn_ops import Elementwise


@pytest.fixture(scope="module")
def node():
    return load_node("node_gpu_npu")


def fork(elements: int = 4_000_000):
    """x -> a, x -> b, (a, b) -> c: two branches that can run in parallel."""
    gb = GraphBuilder("fork", "bf16")
    x = gb.tensor("x", elements, "input")
    a = gb.add(Elementwise(name="a", rows=1, cols=elements, fn="relu", dtype="bf16"), [x],
               component="other")
    b = gb.add(Elementwise(name="b", rows=1, cols=elements, fn="relu", dtype="bf16"), [x],
               component="other")
    gb.add(Elementwise(name="c", rows=1, cols=elements, fn="add", dtype="bf16"), [a, b],
           component="other")
    return gb.build()


def costs(graph, s=1e-3):
    return CostTable({n.name: {"gpu0": s, "npu0": s, "host": s} for n in graph.nodes})


def copy_s(node, src, dst, nbytes):
    return hwlink.copy_time_s(hwlink.find_route(node.system, src, dst), nbytes)


def test_all_on_one_device_runs_ops_back_to_back_after_the_input_copy(node):
    g = fork()
    run = run_placed(g, node, Placement("t", dict.fromkeys("abc", "gpu0"), 0), costs(g))
    t_in = copy_s(node, "host", "gpu0", 8e6)
    t_out = copy_s(node, "gpu0", "host", 8e6)
    assert run.makespan_s == pytest.approx(t_in + 3e-3 + t_out)
    dev = run.per_device().set_index("device")
    assert dev.loc["gpu0", "busy_s"] == pytest.approx(3e-3)
    assert dev.loc["npu0", "idle_s"] == pytest.approx(run.makespan_s)


def test_branches_on_two_devices_overlap(node):
    g = fork()
    run = run_placed(g, node, Placement("t", {"a": "gpu0", "b": "npu0", "c": "gpu0"}, 0),
                     costs(g, 10e-3))
    ops = run.ops.set_index("op")
    assert ops.loc["b", "start_s"] < ops.loc["a", "end_s"]  # ran at the same time
    assert ops.loc["c", "start_s"] >= ops.loc["b", "end_s"]  # waited for b's output to arrive
    tr = run.transfers
    assert ((tr["src"] == "npu0") & (tr["dst"] == "gpu0")).sum() == 1
    assert run.makespan_s < 30e-3


def test_a_tensor_is_copied_once_per_destination(node):
    g = fork()
    run = run_placed(g, node, Placement("t", {"a": "npu0", "b": "npu0", "c": "gpu0"}, 0),
                     costs(g))
    to_npu = run.transfers.query("tensor == 'x' and dst == 'npu0'")
    assert len(to_npu) == 1


def test_lone_copy_time_equals_the_link_model(node):
    g = fork()
    run = run_placed(g, node, Placement("t", dict.fromkeys("abc", "npu0"), 0), costs(g))
    rec = run.transfers.query("tensor == 'x'").iloc[0]
    assert rec["time_s"] == pytest.approx(copy_s(node, "host", "npu0", 8e6))


def test_gradient_exchange_contends_on_shared_links(node):
    grad = 50e6
    r = run_data_parallel(node, {"gpu0": 0.01, "npu0": 0.02}, grad)
    assert r["compute_s"] == pytest.approx(0.02)
    # each device sends half the gradients to the other in each of two phases; the two
    # directions use opposite directions of the full-duplex links, so a phase costs one lone
    # half-size copy staged through the host
    lone = copy_s(node, "gpu0", "npu0", grad / 2)
    assert r["exchange_s"] == pytest.approx(2 * lone, rel=0.05)
    assert r["step_s"] == pytest.approx(r["compute_s"] + r["exchange_s"])


def test_two_copies_into_one_device_share_its_link(node):
    g = fork()
    # a and b on gpu0 both feed c on npu0: the two copies share the copy engine and the
    # route, so together they take about twice as long as one
    run = run_placed(g, node, Placement("t", {"a": "gpu0", "b": "gpu0", "c": "npu0"}, 0),
                     costs(g, 1e-6))
    into = run.transfers.query("dst == 'npu0'")
    lone = copy_s(node, "gpu0", "npu0", 8e6)
    assert len(into) == 2
    assert into["end_s"].max() - into["start_s"].min() > 1.5 * lone
