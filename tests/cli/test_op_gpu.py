"""``accelsim op GPU OPNAME``: one JSON document per call; bad input is one line, exit 2."""

from __future__ import annotations

import json

import pytest

from accelsim.api.gpu import simulate_op
from accelsim.cli import build_parser
from accelsim.errors import AccelsimError, UnsupportedError
from accelsim.workload.ops import Gemm


def main(argv: list[str]) -> int:
    """In-process ``accelsim`` with the CLI's contract (AccelsimError -> one line, exit 2)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except AccelsimError as exc:
        import sys

        print(f"accelsim: error: {exc}", file=sys.stderr)
        return 2

REQUIRED = {"time_s", "cycles", "flops", "bytes", "tflops", "bound", "tile", "waves", "split_k"}

OPS = {
    "gemm": ["--m", "1024", "--n", "1024", "--k", "1024"],
    "conv2d": ["--n", "2", "--c", "64", "--h", "28", "--w", "28", "--k", "64", "--r", "3",
               "--s", "3", "--stride", "1", "--pad", "1"],
    "attention": ["--batch", "1", "--heads", "4", "--seq", "512", "--head-dim", "64",
                  "--causal", "--kv-heads", "2"],
    "add": ["--rows", "256", "--cols", "1024"],
    "relu": ["--rows", "256", "--cols", "1024"],
    "gelu": ["--rows", "256", "--cols", "1024"],
    "layernorm": ["--rows", "256", "--cols", "1024"],
    "softmax": ["--rows", "256", "--cols", "1024"],
}


def run_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


@pytest.mark.parametrize("hw", ["v100", "a100", "h100", "h200"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_every_op_on_every_gpu_prints_one_json_document(capsys, hw, op):
    dtype = "fp16" if hw == "v100" else "bf16"
    doc = run_json(capsys, "op", hw, op, *OPS[op], "--dtype", dtype, "--json")
    assert REQUIRED <= set(doc)
    assert doc["time_s"] > 0 and doc["cycles"] > 0 and doc["bytes"] > 0


def test_gemm_json_has_the_numbers_the_api_gives(capsys):
    doc = run_json(capsys, "op", "h200", "gemm", "--m", "4096", "--n", "4096", "--k", "4096",
                   "--dtype", "bf16", "--json")
    api = simulate_op("h200", Gemm(name="g", m=4096, n=4096, k=4096), precision="bf16")
    assert doc["time_s"] == pytest.approx(api["time_s"])
    assert doc["flops"] == 2 * 4096**3 and doc["bound"] == "tensor_core"


def test_analytic_mode_agrees_with_event_mode_for_a_compute_bound_gemm():
    op = Gemm(name="g", m=2048, n=2048, k=2048)
    ev = simulate_op("h200", op, precision="bf16")
    an = simulate_op("h200", op, precision="bf16", mode="analytic")
    assert ev["time_s"] == pytest.approx(an["time_s"], rel=1e-9)


@pytest.mark.parametrize("argv, needle", [
    (["op", "v100", "gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype", "fp8"],
     "v100 has no fp8"),
    (["op", "a100", "gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype", "fp8"],
     "a100 has no fp8"),
    (["op", "h200", "gemm", "--m", "0", "--n", "64", "--k", "64"], "--m = 0: must be > 0"),
    (["op", "h200", "add", "--rows", "-3", "--cols", "8"], "--rows = -3"),
    (["op", "h200", "attention", "--batch", "1", "--heads", "3", "--seq", "8",
      "--head-dim", "64", "--kv-heads", "2"], "kv_heads"),
    (["op", "h200", "gemm", "--m", "8", "--n", "8", "--k", "8", "--dtype", "fp64"],
     "--dtype = 'fp64': unknown precision"),
    (["op", "h200", "matmul", "--m", "8"], "not a GPU operator"),
    (["op", "v100", "gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype", "fp16",
      "--sparsity", "2:4"], "no sparse tensor cores"),
    (["op", "h200", "gemm", "--m", "64", "--n", "64", "--k", "60", "--dtype", "fp16",
      "--sparsity", "2:4"], "no unaligned fallback"),
    (["op", "h200", "gemm", "--m", "8"], "required"),
    (["op", "node_gpu_npu", "gemm", "--m", "8", "--n", "8", "--k", "8"], "kind 'node'"),
    (["op", "no_such_gpu", "gemm", "--m", "8", "--n", "8", "--k", "8"], "no such file"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert needle in err


def test_api_rejects_a_machine_that_is_not_one_device():
    """An array or a CPU runs the op as one layer (tests/api/test_result_protocol.py); a
    system of several devices is refused in one line."""
    with pytest.raises(UnsupportedError, match="not a GPU"):
        simulate_op("h200x2", Gemm(name="g", m=8, n=8, k=8))


def test_the_console_script_exits_2_with_one_line(cli):
    r = cli("op", "v100", "gemm", "--m", "8", "--n", "8", "--k", "8", "--dtype", "bf16")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "v100 has no bf16" in r.stderr


def test_the_command_prints_json(cli_in_process):
    """The command's JSON (in-process; the exit-2 test above runs the real process)."""
    r = cli_in_process("op", "h200", "softmax", "--rows", "8", "--cols", "8", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["op"] == "softmax"
