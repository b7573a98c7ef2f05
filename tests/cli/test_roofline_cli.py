"""``accelsim roofline HW WORKLOAD``: aligned table, plot, JSON, measured overlay, bad input."""

from __future__ import annotations

import json

import pytest

ZERO = """name: zero_work
ops:
  - {op: embedding, name: wte, tokens: 64, dim: 768, table_rows: 50257}
  - {op: elementwise, name: copy, rows: 64, cols: 768, fn: copy}
  - {op: gemm, name: fc, m: 64, n: 768, k: 768}
"""


class Out:
    def __init__(self, rc: int, stdout: str) -> None:
        self.returncode, self.stdout = rc, stdout


@pytest.fixture
def run(capsys):
    """Run ``accelsim ARGS`` in-process (fast); bad-input paths use ``cli_in_process`` (exit
    code and stderr), test_unknown_machine_is_one_line the real process."""
    from accelsim.cli import build_parser

    def _run(*argv: str) -> Out:
        args = build_parser().parse_args(list(argv))
        rc = args.func(args)
        return Out(rc, capsys.readouterr().out)

    return _run


def test_table_lists_roofs_and_one_row_per_layer(run, tmp_path):
    png = tmp_path / "roofline.png"
    r = run("roofline", "tpu_v4", "resnet18", "--plot", str(png))
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].startswith("roofline: resnet18 on tpu_v4 (bf16), peak 137.6 TFLOP/s")
    assert any(line.split()[:3] == ["dram", "600", "229.4"] for line in lines)
    header = next(line for line in lines if line.startswith("layer "))
    for col in ("I dram", "I min", "bound", "sim TFLOP/s", "% of bound"):
        assert col in header
    assert "I sram" not in header and "(bytes and intensity at sram: --wide" in r.stdout
    body = lines[lines.index(header) + 2:]
    assert sum(1 for line in body if line.strip() and not line.startswith(("plot:", "("))) == 21
    assert max(len(line) for line in lines) <= 120
    wide = run("roofline", "tpu_v4", "resnet18", "--wide").stdout
    assert "I sram" in next(line for line in wide.splitlines() if line.startswith("layer "))
    assert png.stat().st_size > 20_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_document(run):
    r = run("roofline", "tpu_v4", "alexnet", "--json")
    doc = json.loads(r.stdout)
    assert doc["machine"] == "tpu_v4" and {x["level"] for x in doc["roofs"]} == {"sram", "dram"}
    for row in doc["layers"]:
        assert row["achieved_flops_per_s"] <= row["attainable_flops_per_s"] * (1 + 1e-9)
        assert row["bound"] in ("compute", "sram", "dram")


def test_measured_points_are_overlaid(run, tmp_path):
    csv = tmp_path / "measured.csv"
    csv.write_text("layer,time_s\nfc,1e-5\nconv1,2e-5\n")
    r = run("roofline", "tpu_v4", "resnet18", "--measured", str(csv), "--json",
            "--plot", str(tmp_path / "p.png"))
    doc = json.loads(r.stdout)
    fc = next(row for row in doc["layers"] if row["layer"] == "fc")
    meas = {m["layer"]: m for m in doc["measured"]}
    assert meas["fc"]["flops_per_s"] == pytest.approx(fc["flops"] / 1e-5)
    assert meas["fc"]["intensity"] == pytest.approx(fc["intensity_dram"])
    r = run("roofline", "tpu_v4", "resnet18", "--measured", str(csv))
    assert "meas TFLOP/s" in r.stdout


@pytest.mark.parametrize("text, field", [("name,time_s\nfc,1\n", "columns"),
                                         ("layer,time_s\nnope,1\n", "row 2.layer"),
                                         ("layer,time_s\nfeatures.0,0\n", "row 2.time_s")])
def test_bad_measured_csv_names_file_and_field(run, tmp_path, text, field):
    from accelsim.errors import ConfigError

    csv = tmp_path / "m.csv"
    csv.write_text(text)
    with pytest.raises(ConfigError) as err:
        run("roofline", "tpu_v4", "alexnet", "--measured", str(csv))
    assert str(csv) in str(err.value) and field in str(err.value)


def test_bad_measured_csv_is_one_line_exit_2(cli_in_process, tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("layer,time_s\nnope,1\n")
    r = cli_in_process("roofline", "tpu_v4", "alexnet", "--measured", str(csv))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "row 2.layer" in r.stderr


@pytest.mark.parametrize("hw", ["tpu_v4", "h100"])
def test_zero_flop_layers_are_reported_not_a_crash(run, tmp_path, hw):
    wl = tmp_path / "zero.yaml"
    wl.write_text(ZERO)
    r = run("roofline", hw, str(wl), "--plot", str(tmp_path / "z.png"))
    assert r.returncode == 0
    wte = next(line for line in r.stdout.splitlines() if line.startswith("wte"))
    assert "no compute" in wte and " 0 " in wte


def test_gpu_roofline_uses_the_gpu_simulator(run):
    r = run("roofline", "a100", "bert_base_encoder", "--json")
    doc = json.loads(r.stdout)
    assert {x["level"] for x in doc["roofs"]} == {"l1", "l2", "hbm", "host"}
    assert all(row["achieved_flops_per_s"] > 0 for row in doc["layers"])


def test_unknown_machine_is_one_line(cli):
    r = cli("roofline", "nosuch", "resnet18")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_cpu_roofline_uses_the_cpu_model(run, tmp_path):
    """A CPU machine: roofs from its caches and DRAM, points from ``hw.cpu.op_cost``."""
    from accelsim.config.registry import load_machine
    from accelsim.hw.cpu import op_cost
    from accelsim.workload.readers import load_workload

    r = run("roofline", "spr_cpu", "bert_base_encoder", "--json")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    cpu = load_machine("spr_cpu")
    assert doc["precision"] == cpu.default_precision
    assert doc["peak_flops_per_s"] == pytest.approx(cpu.peak_flops(cpu.default_precision))
    roofs = {x["level"]: x["bandwidth_bytes_per_s"] for x in doc["roofs"]}
    assert list(roofs) == ["l1", "l2", "l3", "dram"]
    assert roofs["dram"] == pytest.approx(cpu.memory.dram.bandwidth_bytes_per_s)
    assert roofs["l1"] > roofs["l2"] > roofs["l3"] > roofs["dram"]
    ops = {op.name: op for op in load_workload("bert_base_encoder").ops}
    for row in doc["layers"]:
        cost = op_cost(cpu, ops[row["layer"]])
        assert row["time_s"] == pytest.approx(cost.time_s)
        assert row["bytes_dram"] == pytest.approx(cost.dram_bytes)
        assert 0 < row["achieved_flops_per_s"] <= row["attainable_flops_per_s"] * (1 + 1e-9)
    r = run("roofline", "spr_cpu", "resnet18", "--precision", "fp32",
            "--plot", str(tmp_path / "cpu.png"))
    assert r.returncode == 0 and "on spr_cpu (fp32)" in r.stdout.splitlines()[0]
    assert "I dram" in r.stdout and (tmp_path / "cpu.png").stat().st_size > 10_000
    assert "I l3" in run("roofline", "spr_cpu", "resnet18", "--wide").stdout


@pytest.mark.parametrize("hw, kind", [("h200x2", "system"), ("node_gpu_npu", "node")])
def test_systems_and_nodes_are_one_line_errors(cli_in_process, hw, kind):
    r = cli_in_process("roofline", hw, "resnet18")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(lines) == 1 and "needs a single device" in lines[0]
    assert f"kind = '{kind}'" in lines[0]


def test_cpu_without_the_precision_is_one_line(cli_in_process):
    r = cli_in_process("roofline", "spr_cpu", "resnet18", "--precision", "fp8")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "fp8" in r.stderr


@pytest.mark.parametrize("text, field", [("layer,time_s\nfc,fast\n", "row 2.time_s"),
                                         ("layer,time_s\nfc,1e-5\nconv1,\n", "row 3.time_s"),
                                         ("layer,flops_per_s\nfc,1e12\nconv1,lots\n",
                                          "row 3.flops_per_s"),
                                         ("layer,flops_per_s\nfc,-1\n", "row 2.flops_per_s")])
def test_non_numeric_measured_values_name_file_row_and_column(cli_in_process, tmp_path, text,
                                                             field):
    """In-process (the real process: test_bad_measured_csv_is_one_line_exit_2 and others)."""
    csv = tmp_path / "m.csv"
    csv.write_text(text)
    r = cli_in_process("roofline", "tpu_v4", "resnet18", "--measured", str(csv))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(lines) == 1 and str(csv) in lines[0] and field in lines[0], lines


@pytest.mark.parametrize("hw, flag, value, who", [
    ("h200", "--dataflow", "os", "applies to systolic machines, not GPUs"),
    ("spr_cpu", "--dataflow", "ws", "not CPUs"),
    ("tpu_v4", "--precision", "fp16", "applies to GPUs and CPUs, not systolic machines")])
def test_an_option_of_another_kind_is_refused_in_one_line(cli_in_process, hw, flag, value, who):
    r = cli_in_process("roofline", hw, "resnet50_convs", flag, value)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and who in r.stderr


def test_help_with_a_machine_lists_only_its_kinds_options(capsys):
    from accelsim.cli import main

    with pytest.raises(SystemExit):
        main(["roofline", "h200", "--help"])
    out = capsys.readouterr().out
    assert "[--precision PRECISION]" in out and "[--dataflow" not in out
    with pytest.raises(SystemExit):
        main(["roofline", "tpu_v4", "--help"])
    out = capsys.readouterr().out
    assert "[--dataflow DATAFLOW]" in out and "[--precision" not in out
