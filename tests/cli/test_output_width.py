"""Default outputs fit 120 columns on a GPU, an array and a CPU (``--wide`` for more)."""

from __future__ import annotations

import pytest

WIDTH = 120

COMMANDS = [
    ("run",), ("run", "h200", "resnet50"), ("run", "spr_cpu", "resnet50"),
    ("run", "eyeriss", "alexnet"), ("energy", "h200", "resnet50"),
    ("energy", "tpu_v4", "resnet50"), ("energy", "spr_cpu", "resnet50"),
    ("energy", "eyeriss", "alexnet"), ("show", "h200"), ("show", "spr_cpu"),
    ("show", "tpu_v4"), ("op", "h200", "gemm", "--m", "4096", "--n", "4096", "--k", "4096"),
    ("op", "tpu_v4", "gemm", "--m", "4096", "--n", "4096", "--k", "4096"),
    ("compare",), ("validate",), ("serve", "h200", "llama3_8b", "--requests", "50"),
    ("list",), ("roofline", "tpu_v4", "resnet50_convs"), ("roofline", "h200", "resnet50"),
    ("roofline", "spr_cpu", "resnet50"),
    ("serve-search", "llama3_8b", "--gpus", "h200", "--tp", "1,2", "--rate", "20",
     "--requests", "40", "--slo", "ttft=1s,tpot=40ms"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_default_output_fits_120_columns(cli_in_process, tmp_path, args):
    extra = ["--out", str(tmp_path)] if args[0] == "run" else []
    r = cli_in_process(*args, *extra)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines
    widest = max(lines, key=len)
    assert len(widest) <= WIDTH, widest


def test_wide_prints_every_column(cli_in_process):
    fitted = cli_in_process("energy", "tpu_v4", "resnet18").stdout
    wide = cli_in_process("energy", "tpu_v4", "resnet18", "--wide").stdout
    assert "weights" in wide and "weights" not in fitted
    assert max(map(len, wide.splitlines())) > WIDTH
