"""Placement policies on a node: greedy earliest-finish-time weighs compute against the
copies an op's inputs need; pinned rules win over it; bad rules are one-line errors."""

import math

import pytest

from accelsim.config.node import load_node
from accelsim.errors import ConfigError
from accelsim.mapping.placement import CostTable, parse_pins, place, transfer_s
from accelsim.workload.graph import GraphBuilder
from accelsim.workload.nn_ops import Elementwise


@pytest.fixture(scope="module")
def node():
    return load_node("node_gpu_npu")


def chain(n_ops: int, elements: int = 1_000_000):
    """A chain of elementwise ops over ``elements`` bf16 values (2 MB tensors)."""
    b = GraphBuilder("chain", "bf16")
    x = b.tensor("x", elements, "input")
    for i in range(n_ops):
        x = b.add(Elementwise(name=f"op{i}", rows=1, cols=elements, fn="relu", dtype="bf16"),
                  [x], component="other")
    return b.build()


def table(graph, per_device):
    return CostTable({n.name: dict(per_device) for n in graph.nodes})


def test_greedy_puts_a_chain_on_the_fastest_device(node):
    g = chain(4)
    p = place(g, node, table(g, {"gpu0": 1e-4, "npu0": 2e-4, "host": 1e-3}))
    assert set(p.assign.values()) == {"gpu0"}


def test_greedy_stays_put_when_a_copy_costs_more_than_it_saves(node):
    g = chain(3)
    costs = {n.name: {"gpu0": 1e-4, "npu0": 1e-4, "host": 1e-3} for n in g.nodes}
    costs["op1"] = {"gpu0": 1e-4, "npu0": 0.9e-4, "host": 1e-3}  # 10 us faster on the NPU
    p = place(g, node, CostTable(costs))
    # moving 2 MB gpu0 -> npu0 through the host takes far more than 10 us
    assert transfer_s(node, "gpu0", "npu0", 2e6) > 1e-4
    assert p.assign["op1"] == p.assign["op0"]


def test_greedy_moves_an_op_whose_saving_pays_for_the_copy(node):
    g = chain(3)
    costs = {n.name: {"gpu0": 1e-4, "npu0": 1e-4, "host": 1e-3} for n in g.nodes}
    costs["op1"] = {"gpu0": 50e-3, "npu0": 1e-4, "host": 1}
    p = place(g, node, CostTable(costs))
    assert p.assign["op1"] == "npu0"


def test_unsupported_ops_are_never_placed_on_that_device(node):
    g = chain(2)
    p = place(g, node, table(g, {"gpu0": math.inf, "npu0": 1e-3, "host": 1e-2}))
    assert set(p.assign.values()) == {"npu0"}
    with pytest.raises(ConfigError, match="no placement target"):
        place(g, node, table(g, dict.fromkeys(node.targets, math.inf)))


def test_pins_win_and_the_rest_is_greedy(node):
    g = chain(4)
    p = place(g, node, table(g, {"gpu0": 1e-4, "npu0": 2e-4, "host": 1e-3}),
              policy="pinned", pins=["op[23]=host"])
    assert [p.assign[f"op{i}"] for i in range(4)] == ["gpu0", "gpu0", "host", "host"]


def test_estimate_counts_input_copy_and_compute(node):
    g = chain(1, elements=10_000_000)
    p = place(g, node, table(g, {"gpu0": 1e-3, "npu0": 1e-2, "host": 1e-1}))
    copy = transfer_s(node, "host", "gpu0", 20e6)
    assert p.estimate_s == pytest.approx(copy + 1e-3)


def test_bad_pins_and_policies_name_the_problem(node):
    with pytest.raises(ConfigError, match="expected PATTERN=DEVICE"):
        parse_pins(["layer1"], node)
    with pytest.raises(ConfigError, match="not in node"):
        parse_pins(["layer1*=tpu0"], node)
    g = chain(1)
    with pytest.raises(ConfigError, match="needs at least one --pin"):
        place(g, node, table(g, {"gpu0": 1.0}), policy="pinned")
    with pytest.raises(ConfigError, match="must be one of"):
        place(g, node, table(g, {"gpu0": 1.0}), policy="random")


def test_a_node_link_to_nowhere_names_the_file_and_field(tmp_path):
    bad = tmp_path / "bad_node.yaml"
    bad.write_text(
        "kind: node\nname: bad\nhost: {hardware: spr_cpu}\n"
        "devices: [{name: gpu0, hardware: h100}]\n"
        "link_specs: [{name: p5, protocol: pcie, generation: 5, lanes: 16}]\n"
        "links: [{name: l0, ends: [host, gpu9], spec: p5}]\n")
    with pytest.raises(ConfigError, match=r"bad_node\.yaml: links\[0\]\.ends = 'gpu9'"):
        load_node(bad)
    bad.write_text(bad.read_text().replace("hardware: h100", "hardware: h1000")
                   .replace("gpu9", "gpu0"))
    with pytest.raises(ConfigError, match=r"devices\[0\]\.hardware = 'h1000'"):
        load_node(bad)


def test_the_computing_host_is_a_target_and_devices_keep_their_kinds(node):
    assert node.targets == ("gpu0", "npu0", "host")
    assert [node.machine(t).kind for t in node.targets] == ["gpu", "systolic", "cpu"]
    assert node.system.device_names == ("gpu0", "npu0")


def test_greedy_falls_back_to_one_device_when_eft_is_myopic(node):
    # each op is a little cheaper on the host than a copy to the GPU plus the op there, so
    # op-by-op EFT would keep the whole chain on the host; the GPU alone is far quicker
    g = chain(10)
    copy = transfer_s(node, "host", "gpu0", 2e6)
    p = place(g, node, table(g, {"gpu0": 1e-6, "npu0": 1.0, "host": 0.9 * copy}))
    assert set(p.assign.values()) == {"gpu0"}
    assert p.estimate_s == pytest.approx(copy + 10e-6)
