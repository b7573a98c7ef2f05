"""``accelsim op GPU OP --exec eager|graph [--call CALL]``: the op as users call it."""

from __future__ import annotations

import json

import pytest

from accelsim.cli import build_parser
from accelsim.config.registry import load_machine
from accelsim.errors import AccelsimError

GEMM = ["gemm", "--m", "1", "--n", "4096", "--k", "4096"]


def main(argv: list[str]) -> int:
    """In-process ``accelsim`` with the CLI's contract (AccelsimError -> one line, exit 2)."""
    import sys

    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except AccelsimError as exc:
        print(f"accelsim: error: {exc}", file=sys.stderr)
        return 2


def run_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def test_eager_pays_the_host_classes_of_the_call_and_graph_does_not(capsys):
    h = load_machine("h200").host
    kern = run_json(capsys, "op", "h200", *GEMM, "--json")
    eager = run_json(capsys, "op", "h200", *GEMM, "--exec", "eager", "--json")
    graph = run_json(capsys, "op", "h200", *GEMM, "--exec", "graph", "--json")
    assert "exec" not in kern and eager["exec"] == "eager" and graph["exec"] == "graph"
    # nn.Linear: the module call, then F.linear (configs/lowering/eager.yaml call.linear); the
    # two cost the class measured as the whole nn.Linear call (op_calls.MODULE_HOST_CLASS)
    assert eager["call"] == "nn.Linear"
    assert [c["host_class"] for c in eager["calls"]] == ["linear", "f_linear"]
    # ... and F.linear each kernel cuBLASLt launches beside the GEMM (a split-K reduce)
    extra = eager["extra_kernels"] * h.extra_kernel_s
    assert eager["extra_kernels"] == sum(1 for k in kern["kernels"] if "splitk" in k["name"])
    assert eager["host_s"] == pytest.approx(h.call_s("linear") + extra)
    assert eager["calls"][0]["host_s"] == pytest.approx(h.call_s("linear") - h.call_s("f_linear"))
    assert eager["calls"][1]["host_s"] == pytest.approx(h.call_s("f_linear") + extra)
    # the same kernels in both modes, the op's own
    assert eager["gpu_s"] == graph["gpu_s"] == pytest.approx(kern["time_s"])
    assert [k["name"] for k in eager["kernels"]] == [k["name"] for k in kern["kernels"]]
    # 20 calls back to back: eager is host-bound here, the first call's kernels trail it
    assert eager["host_s"] > eager["gpu_s"]
    assert eager["time_s"] == pytest.approx(eager["host_s"] + eager["gpu_s"] / 20)
    assert eager["bound"] == "host"
    # graph: one graph launch for the 20 calls, then the kernels back to back
    assert graph["host_s"] == pytest.approx(h.graph_launch_s / 20)
    assert graph["time_s"] == pytest.approx(graph["gpu_s"] + h.graph_launch_s / 20)
    assert graph["time_s"] < eager["time_s"]
    for doc in (eager, graph):
        assert {"exec", "call", "host_s", "gpu_s", "time_s", "kernels", "calls"} <= set(doc)
        assert doc["flop_per_s"] == pytest.approx(doc["flops"] / doc["time_s"])


def test_a_gpu_bound_op_costs_its_kernels_in_both_modes(capsys):
    big = ["gemm", "--m", "8192", "--n", "8192", "--k", "8192"]
    eager = run_json(capsys, "op", "h200", *big, "--exec", "eager", "--json")
    assert eager["gpu_s"] > eager["host_s"]
    assert eager["time_s"] == pytest.approx(eager["gpu_s"] + eager["host_s"] / 20)
    assert eager["bound"] == "tensor_core"


def test_call_chooses_among_the_calls_that_compute_the_op(capsys):
    h = load_machine("h200").host
    f = run_json(capsys, "op", "h200", *GEMM, "--exec", "eager", "--call", "F.linear", "--json")
    mm = run_json(capsys, "op", "h200", *GEMM, "--exec", "eager", "--call", "matmul", "--json")
    extra = f["extra_kernels"] * h.extra_kernel_s  # K = 4096 at M = 1 splits K
    assert f["extra_kernels"] == mm["extra_kernels"] == 1
    assert f["host_s"] == pytest.approx(h.call_s("f_linear") + extra)
    assert mm["host_s"] == pytest.approx(h.call_s("matmul") + extra)
    conv = run_json(capsys, "op", "h200", "conv2d", "--n", "1", "--c", "64", "--h", "56",
                    "--w", "56", "--k", "64", "--r", "3", "--s", "3", "--pad", "1",
                    "--exec", "eager", "--json")
    assert conv["call"] == "nn.Conv2d"
    assert conv["host_s"] == pytest.approx(h.call_s("conv"))  # measured as nn.Conv2d calls


@pytest.mark.parametrize("argv, needle", [
    (["op", "h200", *GEMM, "--exec", "warp"], "--exec"),
    (["op", "h200", *GEMM, "--exec", "compiled"], "must be one of eager, graph"),
    (["op", "h200", *GEMM, "--exec", "eager", "--call", "nn.Conv2d"], "nn.Linear"),
    (["op", "h200", *GEMM, "--call", "F.linear"], "execution mode"),
    (["op", "tpu_v4", *GEMM, "--exec", "eager"], "systolic array runs the op as one layer"),
])
def test_bad_exec_or_call_is_one_line_and_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert needle in err


def test_the_text_line_names_the_mode_and_both_sides(capsys):
    assert main(["op", "h200", "add", "--rows", "8", "--cols", "8", "--exec", "eager"]) == 0
    out = capsys.readouterr().out
    assert "exec=eager" in out and "call=torch.add" in out and "host=" in out and "gpu=" in out
