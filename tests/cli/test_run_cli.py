"""``accelsim run`` and ``accelsim list``: tables, JSON, CSV; bad input is one line, exit 2.

The first test runs the real ``python -m accelsim`` process; the others call
``accelsim.cli.main`` in-process (``cli_in_process``), the same code without a process start."""

import json

import pytest


def test_run_prints_a_table_and_writes_csv(cli, tmp_path):
    r = cli("run", "tpu_v4", "resnet18", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "layer" in r.stdout and "total:" in r.stdout
    csv = tmp_path / "tpu_v4-resnet18-ws-layers.csv"
    assert csv.exists() and len(csv.read_text().splitlines()) == 1 + 21


def test_run_json_is_one_document(cli_in_process, tmp_path):
    r = cli_in_process("run", "scalesim_default", "alexnet", "--dataflow", "os", "--json",
                       "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["machine"] == "scalesim_default" and doc["dataflow"] == "os"
    assert doc["totals"]["total_cycles"] == sum(layer["total_cycles"] for layer in doc["layers"])
    assert len(doc["machine_hash"]) == 16


def test_run_without_arguments_runs_the_default(cli_in_process, tmp_path):
    r = cli_in_process("run", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "resnet50_convs (built-in workloads/resnet50_convs.yaml) on tpu_v4" in r.stdout


def test_trace_export_is_chrome_json(cli_in_process, tmp_path):
    trace = tmp_path / "t.json"
    r = cli_in_process("run", "tpu_v1", "alexnet", "--trace", str(trace), "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(trace.read_text())
    names = {e.get("cat") for e in doc["traceEvents"]}
    assert {"compute", "dma"} <= names


def test_list_names_builtins(cli_in_process):
    r = cli_in_process("list")
    assert r.returncode == 0
    for name in ("tpu_v4", "tpu_v1", "eyeriss", "scalesim_default", "resnet50_convs", "resnet50"):
        assert name in r.stdout


@pytest.mark.parametrize("args, needle", [
    (["run", "tpu_v4", "resnet50", "--dataflow", "xs"], "dataflow"),
    (["run", "tpu_v4x", "resnet50"], "did you mean 'tpu_v4'"),
    (["run", "tpu_v4", "no_such_model"], "no such file"),
    (["run", "tpu_v4", "resnet50", "--set", "compute.array.rows=0"], "compute.array.rows = 0"),
    (["run", "tpu_v4", "resnet50", "--set", "compute.array.rowz=8"], "did you mean 'rows'"),
])
def test_bad_input_is_one_line_exit_2(cli_in_process, args, needle, tmp_path):
    r = cli_in_process(*args, "--out", str(tmp_path))
    assert r.returncode == 2
    assert needle in r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bad_topology_csv(cli_in_process, tmp_path):
    topo = tmp_path / "bad.csv"
    topo.write_text("Layer, M, N, K,\nfc, 16, x, 4,\n")
    r = cli_in_process("run", "tpu_v4", str(topo), "--out", str(tmp_path))
    assert r.returncode == 2 and "row 2 column 'N' = 'x'" in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_yaml_config(cli_in_process, tmp_path):
    hw = tmp_path / "hw.yaml"
    hw.write_text("kind: systolic\nname: x\nclock_hz: 1 GHz\ncompute: {array: {rows: 0, cols: 4}}\n"
                  "memory: {sram: {capacity_bytes: 1 MiB}, "
                  "dram: {bandwidth_bytes_per_s: 1 GB/s}}\n")
    r = cli_in_process("run", str(hw), "resnet18", "--out", str(tmp_path))
    assert r.returncode == 2 and "compute.array.rows = 0: must be > 0" in r.stderr


def test_run_on_a_gpu_prints_tokens_per_second(cli_in_process, tmp_path):
    r = cli_in_process("run", "h200", "gpt2_small_decode", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "tokens/s" in r.stdout and "s per output token" in r.stdout


def test_unwritable_output_is_one_line(cli_in_process, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = cli_in_process("run", "tpu_v4", "resnet18", "--out", str(blocker / "sub"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bare_accelsim_prints_help_and_writes_nothing(cli_in_process, tmp_path):
    r = cli_in_process(cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "usage: accelsim" in r.stdout and "run" in r.stdout
    assert list(tmp_path.iterdir()) == []


def test_json_alone_writes_no_files(cli_in_process, tmp_path):
    r = cli_in_process("run", "tpu_v4", "alexnet", "--mode", "analytic", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)
    assert list(tmp_path.iterdir()) == [] and "wrote" not in r.stderr


def test_run_names_the_workload_source_and_scales_units(cli_in_process, tmp_path):
    r = cli_in_process("run", "tpu_v4", "resnet18", "--mode", "analytic", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "resnet18 (built-in workloads/resnet18.yaml) on tpu_v4" in r.stdout
    assert "time (µs)" in r.stdout
    assert "e+0" not in r.stdout and "wrote " in r.stderr
    wide = cli_in_process("run", "tpu_v4", "resnet18", "--mode", "analytic", "--wide",
                          "--out", str(tmp_path))
    assert "repeat" in wide.stdout
