"""``accelsim op`` takes its options from the op registry: every registered operator's fields
are options (and lines of ``accelsim op --help``), and a class registered there needs no CLI
code of its own."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from accelsim.cli import build_parser
from accelsim.cli.op import build_op, op_parser, ops_help
from accelsim.errors import ConfigError
from accelsim.workload import registry
from accelsim.workload.nn_ops import Attention, Pool2d
from accelsim.workload.ops import Gemm


def test_help_lists_every_registered_op_with_each_of_its_fields(capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["op", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert ops_help() in text
    for kind in registry.OP_TYPES:
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(f"{kind}:"))
        for f in registry.cli_fields(kind):
            assert f.flags[0] in line, (kind, f.name)


def test_readme_spellings_build_the_ops_they_always_did():
    a = op_parser("h200", "attention").parse_args(
        ["--batch", "4", "--heads", "32", "--seq", "4096", "--head-dim", "128", "--causal"])
    assert build_op("attention", a) == Attention(
        name="attention", batch=4, heads=32, seq_q=4096, seq_kv=4096, head_dim=128,
        causal=True, dtype="bf16")
    g = build_op("gemm", op_parser("h200", "gemm").parse_args(
        ["--m", "64", "--n", "32", "--k", "16", "--batch", "8"]))
    assert g == Gemm(name="gemm", m=64, n=32, k=16, batch=8, shared_weights=False, dtype="bf16")
    relu = build_op("relu", op_parser("h200", "relu").parse_args(["--rows", "2", "--cols", "3"]))
    assert (relu.kind, relu.fn, relu.rows, relu.cols) == ("elementwise", "relu", 2, 3)


def test_a_field_named_like_a_command_option_keeps_both():
    """Pool's ``mode`` (max/avg) is ``--pool-mode``; ``--mode`` stays the engine's."""
    a = op_parser("h200", "pool").parse_args(["--n", "1", "--c", "8", "--h", "4", "--w", "4",
                                              "--pool-mode", "global_avg", "--mode", "analytic"])
    assert a.mode == "analytic"
    assert build_op("pool", a) == Pool2d(name="pool", n=1, c=8, h=4, w=4, mode="global_avg",
                                         dtype="bf16")


@dataclasses.dataclass(frozen=True)
class Toy:
    """An operator the CLI has never seen: rows x cols, a stride that may not be 0."""

    name: str
    rows: int
    cols: int
    stride: int = 2
    scaled: bool = False
    dtype: str | None = None

    kind: ClassVar[str] = "toy"


def test_a_newly_registered_op_gets_its_options_for_free(monkeypatch):
    monkeypatch.setitem(registry.OP_TYPES, "toy", Toy)
    assert "toy" in registry.cli_op_names()
    assert "  toy: --rows ROWS --cols COLS [--stride 2] [--scaled]" in ops_help()
    a = op_parser("h200", "toy").parse_args(["--rows", "3", "--cols", "5", "--scaled"])
    assert build_op("toy", a) == Toy(name="toy", rows=3, cols=5, stride=2, scaled=True,
                                     dtype="bf16")
    bad = op_parser("h200", "toy").parse_args(["--rows", "3", "--cols", "5", "--stride", "0"])
    with pytest.raises(ConfigError, match="--stride = 0: must be > 0"):
        build_op("toy", bad)
    with pytest.raises(ConfigError, match="--cols"):
        op_parser("h200", "toy").parse_args(["--rows", "3"])
