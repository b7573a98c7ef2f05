"""What ``accelsim run`` shows: a header and JSON that say what ran, tables that fit 120
columns (``--wide``, ``--columns``), help that offers only the options a kind takes, traces
that state their size and group themselves when large, HTML reports on every kind."""

from __future__ import annotations

import json
import re

import pytest

from accelsim import __version__


@pytest.fixture
def cli(cli_in_process, monkeypatch, tmp_path):
    """``accelsim ARGS`` in this process (cwd: a temporary folder): a CompletedProcess."""
    monkeypatch.chdir(tmp_path)
    return cli_in_process


def header(stdout: str) -> list[str]:
    """The lines before the first table."""
    lines = stdout.splitlines()
    end = next(i for i, line in enumerate(lines) if re.match(r"^(layer|op|\d+ layers)\b", line))
    return lines[:end]


def test_the_header_carries_the_resolved_parameters(cli, tmp_path):
    plain = cli("run", "h200", "gpt2_small_decode", "--out", str(tmp_path))
    batched = cli("run", "h200", "gpt2_small_decode:batch=8", "--out", str(tmp_path))
    assert plain.returncode == 0 and batched.returncode == 0, plain.stderr + batched.stderr
    a, b = "\n".join(header(plain.stdout)), "\n".join(header(batched.stdout))
    assert a != b
    assert "batch=1 (default)" in a and "batch=8," in b and "batch=8 (default)" not in b
    for text in (a, b):
        assert "dtype=bf16 (default)" in text and "context=1024 (default)" in text
        assert "eager execution" in text and "configs/hardware/h200.yaml" in text
        assert "energy table scaled_5nm (5 nm)" in text and f"accelsim {__version__}" in text


def test_json_carries_what_ran(cli):
    r = cli("run", "h200", "gpt2_small_decode:batch=8,context=512", "--exec", "graph", "--json")
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)["run"]
    assert run["parameters"]["batch"] == 8 and run["parameters"]["context"] == 512
    assert run["parameters"]["dtype"] == "bf16" and "dtype" in run["defaults"]
    assert "batch" not in run["defaults"] and "context" not in run["defaults"]
    assert run["engine"].startswith("graph execution")
    assert run["machine_file"].endswith("h200.yaml") and run["energy_table"] == "scaled_5nm"
    assert run["accelsim_version"] == __version__


def test_a_systolic_run_names_its_engine_and_machine_file(cli):
    r = cli("run", "tpu_v4", "resnet50:batch=2", "--mode", "analytic", "--json")
    run = json.loads(r.stdout)["run"]
    assert run["engine"] == "analytic" and run["parameters"]["batch"] == 2
    assert run["machine_file"].endswith("tpu_v4.yaml") and run["energy_node_nm"] == 7


def test_the_default_job_fits_120_columns_and_wide_does_not(cli, tmp_path):
    r = cli("run", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= 120
    assert max(len(line) for line in r.stderr.splitlines()) <= 120
    wide = cli("run", "--wide", "--out", str(tmp_path))
    assert max(len(line) for line in wide.stdout.splitlines()) > 120
    assert "SRAM reads" in wide.stdout and "SRAM reads" not in r.stdout


@pytest.mark.parametrize("hw, workload", [("h200", "llama3_8b_decode"),
                                          ("spr_cpu", "resnet50")])
def test_gpu_and_cpu_tables_fit_120_columns(cli, tmp_path, hw, workload):
    r = cli("run", hw, workload, "--top", "0", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= 120


def test_columns_picks_and_an_unknown_column_is_one_line(cli, tmp_path):
    r = cli("run", "tpu_v4", "alexnet", "--columns", "layer,compute_cycles,time_s",
            "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    table_head = next(line for line in r.stdout.splitlines() if line.startswith("layer"))
    assert table_head.split() == ["layer", "compute_cycles", "time", "(µs)"]
    bad = cli("run", "tpu_v4", "alexnet", "--columns", "layer,nonesuch", "--out", str(tmp_path))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "'nonesuch'" in bad.stderr and "compute_cycles" in bad.stderr
    assert bad.stdout == ""


def test_help_offers_only_the_options_of_the_machines_kind(cli):
    gpu = cli("run", "h200", "--help").stdout
    array = cli("run", "tpu_v4", "--help").stdout
    every = cli("run", "--help").stdout
    assert "--exec" in gpu and "--dataflow" not in gpu.split("are left out")[1]
    assert "--dataflow" in array and "--sparsity" in array and "--exec MODE" not in array
    assert all(flag in every for flag in ("--exec", "--dataflow", "--sparsity", "--report"))
    assert "--report" in gpu and "--report" in array
    cpu = cli("run", "spr_cpu", "--help").stdout
    assert "--trace FILE.json" in cpu and "--exec MODE" not in cpu


def test_an_option_that_refines_a_hidden_one_is_hidden_with_it():
    import argparse

    from accelsim.cli.run_help import not_applicable

    p = argparse.ArgumentParser()
    p.add_argument("--trace")
    p.add_argument("--trace-detail")
    p.add_argument("--exec")
    assert not_applicable(p, frozenset({"exec_mode"})) == ["--trace"]
    helps = {a.option_strings[0]: a.help for a in p._actions if a.option_strings}
    assert helps["--trace-detail"] == argparse.SUPPRESS and helps["--exec"] != argparse.SUPPRESS


def test_a_cpu_trace_has_one_slice_per_op_back_to_back(tmp_path):
    import json

    from accelsim.api import simulate
    from accelsim.cli.run import write_run_trace

    r = simulate("spr_cpu", "resnet18")
    write_run_trace(r, str(tmp_path / "t.json"), "auto")
    doc = json.loads((tmp_path / "t.json").read_text())
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    slices = [e for e in ev if e["ph"] == "X"]
    assert [e["name"] for e in slices] == list(r.layers["layer"])
    end = max(e["ts"] + e["dur"] for e in slices)
    assert end == pytest.approx(r.totals["time_s"] * 1e6, rel=1e-9)


@pytest.mark.parametrize("hw, workload", [("h200", "gpt2_small_decode"), ("spr_cpu", "resnet18")])
def test_html_reports_on_gpus_and_cpus_show_the_runs_tables(cli, tmp_path, hw, workload):
    page = tmp_path / "r.html"
    r = cli("run", hw, workload, "--report", str(page), "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    for heading in ("What ran", "Summary", "Time per layer", "Time by op", "Roofline",
                    "Timeline", "Per-layer table"):
        assert f"<h2>{heading}</h2>" in text
    layers = next(tmp_path.glob("*-layers.csv")).read_text().splitlines()[1:]
    for row in layers[:5]:
        assert f"<td>{row.split(',')[0]}</td>" in text
    assert ("Where the time goes" in text) == (hw == "h200")


def test_a_trace_states_its_size_and_groups_on_request(cli, tmp_path):
    full, grouped = tmp_path / "full.json", tmp_path / "grouped.json"
    a = cli("run", "tpu_v1", "alexnet", "--trace", str(full), "--out", str(tmp_path))
    b = cli("run", "tpu_v1", "alexnet", "--trace", str(grouped), "--trace-detail", "layers",
            "--out", str(tmp_path))
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert re.search(r"full\.json \([\d.]+ kB\)", a.stderr)
    assert "grouped" in b.stderr and "--trace-detail full" in b.stderr
    n_full = len(json.loads(full.read_text())["traceEvents"])
    n_grouped = len(json.loads(grouped.read_text())["traceEvents"])
    assert n_grouped < n_full / 10


def test_the_progress_line_names_the_layer_on_a_terminal(monkeypatch):
    import io

    from accelsim.cli.run import progress_printer

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    draw = progress_printer(after_s=0.0)
    draw(1, 4, "layers.0.q_proj")
    assert "[1/4] layers.0.q_proj" in err.getvalue() and "eta" in err.getvalue()
