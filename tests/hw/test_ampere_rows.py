"""The A100 (Ampere) row kernels and the A100 PCIe board (issue 24): the framework's softmax
dispatch as the library stack states it, the SM's issue rate as the chip states it, re-reads
that outgrow L2, and a100_pcie's datasheet differences from the SXM4 board."""

from __future__ import annotations

import pytest

from accelsim.api.gpu import simulate_op
from accelsim.config.build import resolve_machine
from accelsim.config.gpu_stack import GpuStack
from accelsim.config.registry import load_machine, machine_from_dict
from accelsim.config.schema import build
from accelsim.errors import ConfigError
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.rows import softmax_shape
from accelsim.workload.nn_ops import Elementwise, LayerNorm, Softmax


@pytest.fixture(scope="module")
def a100():
    return load_machine("a100")


@pytest.fixture(scope="module")
def pcie():
    return load_machine("a100_pcie")


def test_a100_pcie_is_the_sxm_chip_on_the_300_w_board(a100, pcie):
    """Product brief: HBM2e at 1,935 GB/s (SXM4 80 GB: 2,039), base clock 1065 MHz as a power
    cap's floor (SXM4: 1155 MHz default applications clock), PCIe Gen4; the chip and its
    library stack are the A100's. Its 300 W is written down but not applied (the modelled
    energy would need 344 W at the base clock: a100_pcie.yaml), and the SXM4's 400 W is not
    inherited."""
    assert pcie.memory.hbm.bandwidth_bytes_per_s == pytest.approx(1935e9)
    assert a100.memory.hbm.bandwidth_bytes_per_s == pytest.approx(2039e9)
    assert pcie.energy.tdp_w is None and a100.energy.tdp_w == 400
    assert pcie.energy.min_clock_hz == pytest.approx(1065e6)
    assert a100.energy.min_clock_hz == pytest.approx(1155e6)
    assert pcie.host.pcie_generation == 4
    assert pcie.compute == a100.compute and pcie.stack == a100.stack
    assert pcie.memory.l2_bytes == a100.memory.l2_bytes


def test_an_hbm_bound_op_is_slower_on_the_pcie_board_by_its_bandwidth(a100, pcie):
    op = Elementwise(name="add", fn="add", rows=524288, cols=2048, dtype="fp32")
    ratio = (simulate_op(pcie, op, mode="event")["time_s"]
             / simulate_op(a100, op, mode="event")["time_s"])
    assert ratio == pytest.approx(2039 / 1935, rel=0.02)


def test_each_value_of_a100_pcie_has_a_kind():
    res = resolve_machine("a100_pcie")
    assert res.provenance["memory.hbm.bandwidth_bytes_per_s"].kind == "datasheet"
    assert res.provenance["energy.min_clock_hz"].kind == "datasheet"
    assert res.provenance["compute.issue_per_clk_per_sm"].label().startswith("fitted on a100_pcie")


def test_ampere_softmax_dispatch_is_pytorch_2_1s(a100):
    """NeuSight's A100 PCIe kernel names (PyTorch 2.1): softmax_warp_forward to 1024 columns,
    cunn_SoftMaxForward for every longer row, CTAs of SoftMax_getBlockSize(ILP, cols); the
    Hopper stack (PyTorch 2.11) keeps its warp kernel to 2048 and its register kernel."""
    rows = a100.stack.rows
    assert softmax_shape(1024, 4, rows).family == "softmax_warp"
    for cols in (1280, 8192, 16384):
        assert softmax_shape(cols, 4, rows).family == "softmax_block"
    assert softmax_shape(8192, 4, rows).threads == 512    # 2048 vectors / 2 -> 1024 -> /2
    assert softmax_shape(1280, 4, rows).threads == 256    # 320 vectors / 2 = 160 -> 256
    assert softmax_shape(8192, 2, rows).threads == 512    # fp16: 1024 vectors (capped) / 2
    hopper = load_machine("h200").stack.rows
    assert softmax_shape(2048, 2, hopper).family == "softmax_warp"
    assert softmax_shape(8192, 2, hopper).family == "softmax_reg"
    assert softmax_shape(8192, 2, hopper).threads == 1024


def test_the_issue_rate_counts_where_it_exceeds_the_fp32_lanes(a100):
    """Loads, stores and index work issue at compute.issue_per_clk_per_sm, FP32 arithmetic at
    the FP32 lanes: on the H200 the two are equal (128: every instruction one lane slot, as its
    row-kernel constants were fitted); on the A100 (64 lanes) an issue-bound layer norm speeds
    up with the issue rate."""
    op = LayerNorm(name="ln", rows=163840, cols=1024, dtype="fp32")
    h200 = load_machine("h200").compute
    assert h200.issue_per_clk_per_sm == h200.simt_flop_per_clk_per_sm / 2
    slow = load_machine("a100", {"compute.issue_per_clk_per_sm": 64})
    fast = load_machine("a100", {"compute.issue_per_clk_per_sm": 128})
    t = [simulate_op(m, op, mode="event")["time_s"] for m in (slow, a100, fast)]
    assert t[0] > t[1] > t[2]


def test_pointwise_routines_issue_at_the_issue_rate_their_math_at_the_lanes(a100):
    """The row kernels' issue rule carried over to pointwise kernels (hw/gpu/memory.py
    stream_kernel): tanhf's instruction count (fitted on the H200, where an issue slot and an
    FP32 lane are one rate) issues at compute.issue_per_clk_per_sm, GELU's own 8 FLOP of
    arithmetic at the FP32 lanes. On the A100 a compute-bound GELU is the issue time of its 29
    instructions, not their time on 64 lanes; with the issue rate at the lanes' 64 it is the
    old lane-bound figure (29 / 64 of a clock an element an SM)."""
    from accelsim.hw.gpu.memory import elementwise_kernel

    c = a100.compute
    n = 2 ** 28
    k = elementwise_kernel(a100, "gelu", n, 1, 2, 8.0)
    cta = k.groups[0][1]
    ctas = k.groups[0][0]
    instr = (8.0 + c.transcendental_instr) * n
    clk = c.max_clock_hz
    assert cta.parts["alu_s"] * ctas == pytest.approx(instr / (c.issue_per_clk_per_sm * clk))
    lanes64 = load_machine("a100", {"compute.issue_per_clk_per_sm": 64})
    k64 = elementwise_kernel(lanes64, "gelu", n, 1, 2, 8.0)
    assert k64.groups[0][1].parts["alu_s"] * ctas == pytest.approx(instr / (64 * clk))
    # an add (1 FLOP, no routine) is all FP32: held to the lanes whatever the issue rate
    add = elementwise_kernel(a100, "add", n, 2, 2, 1.0)
    assert add.groups[0][1].parts["alu_s"] * add.groups[0][0] == pytest.approx(n / (64 * clk))


def test_pointwise_kernels_are_unchanged_where_issue_equals_the_lanes():
    """sm_90 (H200, H100, B200 inherit it): 128 issue slots = 128 FP32 lanes, so a GELU's time
    is its whole instruction count at 128 a clock, as the H200's counts were fitted."""
    from accelsim.hw.gpu.memory import elementwise_kernel

    for name in ("h200", "h100", "b200"):
        m = load_machine(name)
        c = m.compute
        k = elementwise_kernel(m, "gelu", 2 ** 24, 1, 2, 8.0)
        want = (8.0 + c.transcendental_instr) * 2 ** 24 / (
            c.simt_flop_per_clk_per_sm * c.max_clock_hz * c.simt_elementwise_efficiency)
        assert k.groups[0][1].parts["alu_s"] * k.groups[0][0] == pytest.approx(want)


def test_a_reread_that_outgrows_l2_comes_from_hbm_again(a100):
    """cunn_SoftMaxForward re-reads its row twice: 3072-column fp32 rows sit in L1 (4 CTAs x
    12 KB), 16384-column ones (4 x 64 KB per SM, 28 MB over the SMs, plus their outputs) are
    past the A100's 40 MB L2: four passes of HBM traffic, not two."""
    def hbm_passes(cols: int, rows: int) -> float:
        k = plan_op(a100, Softmax(name="s", rows=rows, cols=cols, dtype="fp32")).kernels[0]
        return k.hbm_bytes / (rows * cols * 4)

    assert hbm_passes(3072, 131072) == pytest.approx(2.0)
    assert hbm_passes(16384, 131072) == pytest.approx(4.0)


def test_a_missing_architecture_constant_is_a_one_line_error():
    """No code default: the chip's issue rate and the stack's row dispatch come from YAML."""
    data = dict(resolve_machine("a100").data)
    data["compute"] = {k: v for k, v in data["compute"].items()
                       if k != "issue_per_clk_per_sm"}
    with pytest.raises(ConfigError, match="compute.issue_per_clk_per_sm.*missing required"):
        machine_from_dict(data, file="x.yaml")
    stack = dict(resolve_machine("a100").data["stack"])
    stack["rows"] = {k: v for k, v in stack["rows"].items() if k != "softmax_warp_max_cols"}
    with pytest.raises(ConfigError, match="rows.softmax_warp_max_cols.*missing required") as e:
        build(GpuStack, stack, file="configs/software/ampere.yaml")
    assert "ampere.yaml" in str(e.value) and "\n" not in str(e.value)
