"""``accelsim op`` on a systolic machine: one GEMM or convolution, no YAML file needed."""

import json

import pytest

from accelsim.api import simulate
from accelsim.cli import main
from accelsim.workload.ops import Conv2d, Gemm


def run(capsys, *argv):
    rc = main(["op", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_gemm_on_tpu_v4_equals_the_api(capsys):
    rc, out, _ = run(capsys, "tpu_v4", "gemm", "--m", "512", "--n", "256", "--k", "1024",
                     "--mode", "analytic", "--json")
    assert rc == 0
    doc = json.loads(out)
    ref = simulate("tpu_v4", Gemm(name="gemm", m=512, n=256, k=1024), mode="analytic")
    assert doc["totals"]["total_cycles"] == ref.totals["total_cycles"]
    assert doc["layers"][0]["m"] == 512 and doc["layers"][0]["k"] == 1024


def test_conv2d_with_a_dataflow_prints_one_line(capsys):
    rc, out, _ = run(capsys, "tpu_v4", "conv2d", "--n", "1", "--c", "64", "--h", "56", "--w", "56",
                     "--k", "64", "--r", "3", "--s", "3", "--pad", "1", "--dataflow", "os",
                     "--mode", "analytic")
    assert rc == 0
    ref = simulate("tpu_v4", Conv2d(name="conv2d", c=64, h=56, w=56, k=64, r=3, s=3, pad=1),
                   dataflow="os", mode="analytic")
    assert len(out.strip().splitlines()) <= 2  # one line, wrapped within 120 columns
    assert max(len(line) for line in out.splitlines()) <= 120
    assert out.startswith("tpu_v4 conv2d") and " os:" in out
    assert f"{ref.totals['total_cycles']:,} cycles" in out


@pytest.mark.parametrize("argv, needle", [
    (["tpu_v4", "softmax", "--rows", "4", "--cols", "4"], "not an operator of a systolic array"),
    (["tpu_v4", "gemm", "--m", "0", "--n", "4", "--k", "4"], "--m = 0"),
    (["tpu_v4", "gemm", "--m", "4", "--n", "4", "--k", "4", "--sparsity", "2:4"], "unrecognized"),
])
def test_bad_systolic_ops_are_one_line(capsys, argv, needle):
    rc, _, err = run(capsys, *argv)
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1
