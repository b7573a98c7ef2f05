"""What a captured program's step launches beyond its calls' main kernels (run 28's CUDA-graph
traces, ``scripts/data/h200_program_graph_kernels_run28.json``, calibration): ``matmul``'s
folding copies of operands that cannot be reshaped as views, and cuDNN's workspace memset
before a prefill attention. Kernel counts are held against the traces (memsets apart, as
profiles list them)."""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

import pytest

from accelsim.api.model_run import run_model
from accelsim.config.registry import load_machine
from accelsim.hw.gpu import plan_op
from accelsim.hw.gpu.kernel import MEMSET, launched_kernels
from accelsim.workload.nn_ops import Attention
from accelsim.workload.program import Call, TensorInfo
from accelsim.workload.program_ops import matmul_operand_copies

ROOT = Path(__file__).resolve().parents[2]
RUN28 = ROOT / "scripts" / "data" / "h200_program_graph_kernels_run28.json"


def tensor(shape: tuple[int, ...], stride: tuple[int, ...]) -> TensorInfo:
    return TensorInfo(shape=shape, dtype="bfloat16", stride=stride)


def heads_view(b: int, s: int, h: int, d: int) -> TensorInfo:
    """``x.view(b, s, h, d).transpose(1, 2)`` of a contiguous ``(b, s, h * d)`` projection."""
    return tensor((b, h, s, d), (s * h * d, d, h * d, 1))


def matmul(a: TensorInfo, b: TensorInfo, out_shape: tuple[int, ...]) -> Call:
    out = tensor(out_shape, tuple(int(x) for x in _contiguous(out_shape)))
    return Call(fn="matmul", inputs=(a, b), outputs=(out,))


def _contiguous(shape: tuple[int, ...]) -> list[int]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return list(reversed(strides))


@pytest.mark.parametrize("b", [1, 2, 12])
def test_attention_scores_copy_both_operands_only_past_batch_one(b):
    s, h, d = 256, 16, 64
    q = heads_view(b, s, h, d)
    k = heads_view(b, s, h, d)
    kt = tensor((b, h, d, s), (k.stride[0], k.stride[1], k.stride[3], k.stride[2]))
    copies = matmul_operand_copies(matmul(q, kt, (b, h, s, s)))
    # at batch 1 the heads merge into one batch dimension as a view; past it they cannot
    assert len(copies) == (0 if b == 1 else 2)


def test_probabilities_times_values_copy_the_values_view_only():
    b, s, h, d = 4, 128, 12, 64
    att = tensor((b, h, s, s), tuple(_contiguous((b, h, s, s))))
    v = heads_view(b, s, h, d)
    copies = matmul_operand_copies(matmul(att, v, (b, h, s, d)))
    assert copies == (v,)


def test_a_weight_matmul_folds_a_contiguous_input_and_copies_a_transposed_one():
    w = tensor((1024, 1024), (1024, 1))
    x = tensor((8, 128, 1024), (128 * 1024, 1024, 1))
    assert matmul_operand_copies(matmul(x, w, (8, 128, 1024))) == ()
    seq_first = tensor((8, 128, 1024), (1024, 8 * 1024, 1))  # (s, b, d).transpose(0, 1)
    assert matmul_operand_copies(matmul(seq_first, w, (8, 128, 1024))) == (seq_first,)


def test_a_broadcast_matrix_needs_no_copy():
    w = tensor((64, 64), (64, 1))
    x = tensor((4, 8, 32, 64), tuple(_contiguous((4, 8, 32, 64))))
    assert matmul_operand_copies(matmul(x, w, (4, 8, 32, 64))) == ()


def test_a_prefill_attention_adds_a_memset_counted_apart_and_decode_none():
    m = load_machine("h200")
    prefill = plan_op(m, Attention(name="a", batch=2, heads=12, seq_q=128, seq_kv=128,
                                   head_dim=64), "bf16")
    decode = plan_op(m, Attention(name="a", batch=2, heads=32, seq_q=1, seq_kv=1024,
                                  head_dim=128, kv_heads=8), "bf16")
    assert [k.meta.get(MEMSET, False) for k in prefill.kernels] == [False, True]
    assert launched_kernels(prefill.kernels) == 1 == prefill.explain["kernels"]
    assert not any(k.meta.get(MEMSET) for k in decode.kernels)
    # the Ampere stack (FlashAttention-2 on sm_80) has none
    a100 = plan_op(load_machine("a100"), Attention(name="a", batch=2, heads=12, seq_q=128,
                                                   seq_kv=128, head_dim=64), "bf16")
    assert not any(k.meta.get(MEMSET) for k in a100.kernels)


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("case", ["encoder_b1_s256", "encoder_b12_s256", "tenc_bf_b48_s128",
                                  "tenc_sf_b24_s128", "decoder_decode_b1_c512"])
def test_captured_programs_launch_the_kernels_of_run_28s_graph_traces(case):
    sys.path.insert(0, str(ROOT / "scripts" / "validate"))
    sys.path.insert(0, str(ROOT / "workloads" / "programs"))
    import plain
    from validate_programs import kernel_class, model_classes

    from accelsim.workload.program_ops import program_workload
    from accelsim.workload.torch_capture import capture_program

    c = next(c for c in json.loads(RUN28.read_text())["cases"] if c["case"] == case)
    fn, args = getattr(plain, c["program"])(device="meta", **c["params"])
    run = run_model("h200", program_workload(capture_program(fn, *args)), exec_mode="graph")
    traced = collections.Counter(kernel_class(k[0]) for k in c["graph_traces"][0])
    traced.pop("memset", None)
    assert model_classes(run) == dict(traced)
