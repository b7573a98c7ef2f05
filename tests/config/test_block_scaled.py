"""Block-scaled number formats (accelsim/precision.py BLOCK_SCALED: NVFP4, MXFP4, MXFP8): their
bytes carry the block scales, a new generation adds them in YAML alone (a per-precision table
may gain a known precision name by inheritance), and a chip without them refuses them."""

from __future__ import annotations

import pytest

from accelsim.api import simulate_op
from accelsim.cli import main
from accelsim.config.energy import load_energy_table
from accelsim.config.registry import load_machine
from accelsim.errors import UnsupportedError
from accelsim.precision import BLOCK_SCALED, PRECISION_BYTES


def test_a_block_scaled_element_carries_its_share_of_the_scale():
    assert PRECISION_BYTES["nvfp4"] == 0.5 + 1 / 16  # E2M1 + one E4M3 scale per 16
    assert PRECISION_BYTES["mxfp4"] == 0.5 + 1 / 32  # E2M1 + one E8M0 scale per 32
    assert PRECISION_BYTES["mxfp8"] == 1 + 1 / 32
    for name, (value, block, scale) in BLOCK_SCALED.items():
        assert PRECISION_BYTES[name] == value + scale / block


def test_b200_runs_fp4_at_its_datasheet_rate_with_the_scale_bytes():
    b200 = load_machine("b200")
    assert b200.peak_flops("nvfp4") == pytest.approx(2 * b200.peak_flops("fp8"))
    assert b200.peak_flops("nvfp4") == pytest.approx(9.0e15, rel=0.02)  # 9 PFLOP/s dense
    big = {"m": 8192, "n": 8192, "k": 8192}
    fp4 = simulate_op("b200", "gemm", dtype="nvfp4", **big)
    bf16 = simulate_op("b200", "gemm", dtype="bf16", **big)
    assert fp4["time_s"] < 0.5 * bf16["time_s"]
    # a GEMV streams its weights once: their bytes are the values' plus the scales'
    gemv = simulate_op("b200", "gemm", m=1, n=8192, k=8192, dtype="nvfp4")
    assert gemv["bytes"] >= 8192 * 8192 * PRECISION_BYTES["nvfp4"]
    assert gemv["bytes"] < 8192 * 8192 * PRECISION_BYTES["nvfp4"] * 1.01


def test_a_chip_without_the_format_refuses_it_in_one_line(capsys):
    with pytest.raises(UnsupportedError, match="no nvfp4 support"):
        simulate_op("h200", "gemm", m=64, n=64, k=64, dtype="nvfp4")
    assert main(["op", "h200", "gemm", "--m", "64", "--n", "64", "--k", "64",
                 "--dtype", "nvfp4"]) == 2
    err = capsys.readouterr().err
    assert "nvfp4" in err and len(err.strip().splitlines()) == 1


def test_an_energy_table_prices_a_block_scaled_mac_as_its_proxy():
    t = load_energy_table("scaled_5nm")
    assert t.require("mac.nvfp4") == t.require("mac.int4")
    assert t.require("mac.mxfp8") == t.require("mac.fp8")


def _write(tmp_path, name: str, text: str):
    p = tmp_path / f"{name}.yaml"
    p.write_text(text)
    return p


def test_inheritance_adds_a_known_precision_to_a_per_precision_table_only(tmp_path, capsys):
    head = "kind: gpu\ninherit: b200\nname: x\nprovenance: {default: datasheet}\n"
    ok = _write(tmp_path, "x", head + "compute: {tensor_flop_per_clk_per_sm: {mxfp4: 16384}}\n")
    assert load_machine(str(ok)).peak_flops("mxfp4") < load_machine("b200").peak_flops("mxfp4")
    # a name that is not a precision is a typo, refused as before
    typo = _write(tmp_path, "y", head.replace("name: x", "name: y")
                  + "compute: {tensor_flop_per_clk_per_sm: {nvfp5: 32768}}\n")
    assert main(["show", str(typo)]) == 2
    assert "nvfp5" in capsys.readouterr().err
    # a precision name is no key of a table that is not per precision
    other = _write(tmp_path, "z", head.replace("name: x", "name: z")
                   + "memory: {nvfp4: 1}\n")
    assert main(["show", str(other)]) == 2
    assert "b200 lacks" in capsys.readouterr().err
