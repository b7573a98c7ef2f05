"""The shipped workload files (``workloads/*.yaml`` and their SCALE-Sim CSV twins) are the
published architectures: they load, their MAC totals equal an independent count from the
architecture definition and the published figures, and both formats lower to the same GEMMs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from accelsim.workload.ops import Conv2d, Gemm
from accelsim.workload.readers import load_workload, read_scalesim_topology

ROOT = Path(__file__).resolve().parents[2] / "workloads"


# --- independent MAC counts, written from the papers' tables (not from the files) -------------

def _conv_macs(cin: int, cout: int, k: int, out_hw: int, groups: int = 1) -> int:
    return out_hw * out_hw * cout * (cin // groups) * k * k


def resnet_macs(blocks: list[int], bottleneck: bool) -> int:
    """He et al. 2016 Table 1 at 224x224: stem 7x7/2 -> 112, max-pool -> 56, four stages."""
    total = _conv_macs(3, 64, 7, 112)
    cin, hw = 64, 56
    for stage, n in enumerate(blocks):
        width = 64 << stage
        out_hw = hw if stage == 0 else hw // 2
        cout = 4 * width if bottleneck else width
        for b in range(n):
            o = out_hw
            i_hw = hw if b == 0 else out_hw
            if bottleneck:
                total += _conv_macs(cin, width, 1, i_hw)      # 1x1 reduce at input size
                total += _conv_macs(width, width, 3, o)       # 3x3 (carries the stride, v1.5)
                total += _conv_macs(width, cout, 1, o)        # 1x1 expand
            else:
                total += _conv_macs(cin, width, 3, o) + _conv_macs(width, width, 3, o)
            if b == 0 and (cin != cout or stage > 0):
                total += _conv_macs(cin, cout, 1, o)          # projection shortcut
            cin = cout
        hw = out_hw
    return total + cin * 1000


def alexnet_macs() -> int:
    """torchvision AlexNet: conv 55,27,13,13,13 spatial; fc 9216->4096->4096->1000."""
    return (_conv_macs(3, 64, 11, 55) + _conv_macs(64, 192, 5, 27) + _conv_macs(192, 384, 3, 13)
            + _conv_macs(384, 256, 3, 13) + _conv_macs(256, 256, 3, 13)
            + 9216 * 4096 + 4096 * 4096 + 4096 * 1000)


def mobilenet_v2_macs() -> int:
    """Sandler et al. 2018 Table 2 (t, c, n, s), width 1.0, 224x224."""
    total = _conv_macs(3, 32, 3, 112)
    cin, hw = 32, 112
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            hid = cin * t
            out_hw = hw // (s if i == 0 else 1)
            if t != 1:
                total += _conv_macs(cin, hid, 1, hw)
            total += _conv_macs(hid, hid, 3, out_hw, groups=hid)
            total += _conv_macs(hid, c, 1, out_hw)
            cin, hw = c, out_hw
    return total + _conv_macs(cin, 1280, 1, hw) + 1280 * 1000


def bert_layer_macs(seq: int = 512, d: int = 768, ffn: int = 3072) -> int:
    """4 d x d projections, QK^T and AV (seq^2 d each), two FFN GEMMs."""
    return 4 * seq * d * d + 2 * seq * seq * d + 2 * seq * d * ffn


CASES = {
    # name: (independent count, published figure, source of the figure)
    "resnet18": (resnet_macs([2, 2, 2, 2], False), 1.814e9, "torchvision: 1.81 GFLOPS (MACs)"),
    "resnet50_convs": (resnet_macs([3, 4, 6, 3], True), 4.09e9,
                       "torchvision v1.5: 4.09 GFLOPS (MACs)"),
    "alexnet": (alexnet_macs(), 0.714e9, "torchvision: 0.71 GFLOPS (MACs)"),
    "mobilenet_v2_convs": (mobilenet_v2_macs(), 300e6,
                           "Sandler et al. 2018 Table 4: 300M multiply-adds"),
    "bert_base_encoder": (bert_layer_macs(), 4.03e9,
                          "12 layers x 4.03 G ~ BERT-base 48 GMAC at 512"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_yaml_workload_macs_match_the_architecture(name: str) -> None:
    independent, published, _source = CASES[name]
    w = load_workload(name)
    assert w.macs == independent
    assert w.macs == pytest.approx(published, rel=0.01)


def test_resnet50_is_v1_5_with_stride_on_the_3x3() -> None:
    w = load_workload("resnet50_convs")
    ops = {op.name: op for op in w.ops}
    assert ops["layer2.0.conv1"].stride == 1 and ops["layer2.0.conv2"].stride == 2
    assert ops["layer2.0.downsample"].stride == 2
    assert w.macs == 4_089_184_256


def test_mobilenet_v2_depthwise_layers_are_grouped() -> None:
    dw = [op for op in load_workload("mobilenet_v2_convs").ops if getattr(op, "groups", 1) > 1]
    assert len(dw) == 17
    assert all(op.groups == op.c == op.k and op.r == 3 for op in dw)


def test_bert_attention_gemms_have_a_separate_operand_per_head() -> None:
    ops = {op.name: op for op in load_workload("bert_base_encoder").ops}
    for name in ("qk_t", "av"):
        assert ops[name].batch == 12 and not ops[name].shared_weights
    assert (ops["qk_t"].m, ops["qk_t"].n, ops["qk_t"].k) == (512, 512, 64)
    assert (ops["av"].m, ops["av"].n, ops["av"].k) == (512, 64, 512)


def _gemms(ops) -> Counter:
    """Every array-level GEMM (m, n, k), repeats expanded, as a multiset."""
    out: Counter = Counter()
    for op in ops:
        if isinstance(op, (Gemm, Conv2d)):
            g = op.lower()
            out[(g.m, g.n, g.k)] += g.repeat
    return out


@pytest.mark.parametrize("yaml_name, csv_name", [
    ("resnet18", "resnet18"), ("resnet50_convs", "resnet50"), ("alexnet", "alexnet"),
    ("mobilenet_v2_convs", "mobilenet_v2"), ("bert_base_encoder", "bert_base_gemm")])
def test_yaml_and_scalesim_csv_lower_to_the_same_gemms(yaml_name: str, csv_name: str) -> None:
    yaml_w = load_workload(yaml_name)
    csv_w = read_scalesim_topology(ROOT / "scalesim" / f"{csv_name}.csv")
    assert _gemms(yaml_w.ops) == _gemms(csv_w.ops)
    assert yaml_w.macs == csv_w.macs


def test_scalesim_csv_layers_keep_the_yaml_order_and_output_sizes() -> None:
    """Padding is folded into the CSV's input size as the extent the filter sweeps,
    (Ho - 1) * stride + R, so SCALE-Sim's ceil((H - R + S) / S) gives the true Ho."""
    yaml_ops = load_workload("resnet50_convs").ops
    csv_ops = read_scalesim_topology(ROOT / "scalesim" / "resnet50.csv").ops
    assert [o.name for o in yaml_ops] == [o.name for o in csv_ops]
    for y, c in zip(yaml_ops, csv_ops, strict=True):
        if isinstance(y, Conv2d):
            assert (c.out_h, c.out_w) == (y.out_h, y.out_w), y.name
            assert -(-(c.h - c.r + c.stride) // c.stride) == y.out_h  # SCALE-Sim's own formula
