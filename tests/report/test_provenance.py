"""What ran: workload parameters resolved from a spec (given values, defaults, values the graph
was built with), and the header lines that show them within a width."""

from __future__ import annotations

import pytest

from accelsim.report.provenance import RunInfo, spec_parameters
from accelsim.workload.models import zoo


def test_a_zoo_spec_lists_every_parameter_and_marks_the_defaults():
    spec = "llama3_8b_decode:batch=8"
    params, defaults = spec_parameters(spec, zoo.from_spec(spec).params)
    assert params["batch"] == 8 and "batch" not in defaults
    assert set(params) == set(zoo.parameters("llama3_8b_decode"))
    assert params["dtype"] == "bf16" and "dtype" in defaults
    # context defaults to None ("the sequence length"): shown as the value the graph used
    assert params["context"] == zoo.from_spec(spec).params["context"] == params["seq"]


def test_given_values_win_over_defaults():
    spec = "gpt2_small_decode:context=512,dtype=fp16"
    params, defaults = spec_parameters(spec, zoo.from_spec(spec).params)
    assert (params["context"], params["dtype"]) == (512, "fp16")
    assert not {"context", "dtype"} & set(defaults)


def test_a_hugging_face_config_resolves_its_defaults_from_the_graph():
    spec = "workloads/hf/qwen2.5_7b.json:mode=decode,batch=2"
    graph = zoo.from_spec(spec)
    params, defaults = spec_parameters(spec, graph.params)
    assert params["batch"] == 2 and params["mode"] == "decode"
    assert params["context"] == graph.params["context"] and "context" in defaults
    assert params["dtype"] == graph.params["dtype"] != ""
    assert "seq" not in params          # a decode graph's seq is its query length, not a default


@pytest.mark.parametrize("spec, expected", [("model.onnx:N=8,S=128", {"N": 8, "S": 128}),
                                            ("workloads/resnet18.yaml", {}), ("alexnet", {})])
def test_files_carry_only_the_dimensions_given(spec, expected):
    assert spec_parameters(spec) == (expected, ())


def test_header_lines_fit_the_width_and_keep_clauses_whole():
    info = RunInfo(machine="h200", kind="gpu", machine_file="built-in configs/hardware/h200.yaml",
                   machine_detail="gpu", workload="llama3_8b_decode", workload_source="model zoo",
                   params={"batch": 8, "seq": 2048, "context": 4096, "dtype": "bf16",
                           "mode": "decode"}, defaults=("seq", "dtype", "mode"),
                   engine="eager execution (analytic replay of host and GPU stream)",
                   energy_table="scaled_5nm", energy_node_nm=5.0)
    for width in (60, 80, 120):
        lines = info.header_lines(width)
        assert all(len(line) <= width for line in lines)
        text = " ".join(line.strip() for line in lines)
        assert "batch=8, seq=2048 (default), context=4096, dtype=bf16 (default)" in text
        assert "energy table scaled_5nm (5 nm)" in text
    assert info.to_dict()["parameters"]["context"] == 4096


def test_a_hugging_face_spec_names_its_config_file():
    from accelsim.report.provenance import spec_source

    assert spec_source("workloads/hf/qwen2.5_7b.json:mode=decode") == \
        "Hugging Face config built-in workloads/hf/qwen2.5_7b.json"
    assert spec_source("llama3_8b_decode:batch=8") == ""


def test_an_unvalidated_machine_is_marked_wherever_its_figures_are_shown(capsys):
    """tpu_v5e is datasheet-only (its YAML says ``validation: unvalidated``): the run header,
    the JSON's run object and the serving summary say so; a validated machine's do not."""
    import json

    from accelsim.cli import main

    assert main(["run", "tpu_v5e", "resnet50_convs"]) == 0
    assert "UNVALIDATED: tpu_v5e" in capsys.readouterr().out
    assert main(["run", "tpu_v5e", "resnet50_convs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["run"]["validation"] == "unvalidated"
    assert main(["run", "tpu_v4", "resnet50_convs"]) == 0
    assert "UNVALIDATED" not in capsys.readouterr().out


def test_a_new_generation_is_yaml_only_and_marked_unvalidated():
    """B200 (Blackwell) is three YAML files (b200.yaml inheriting h200, the blackwell stack,
    the HGX B200 board): it runs, serves across GPUs, and every figure says it is unvalidated."""
    from accelsim.api.serving import serve
    from accelsim.config.registry import load_machine

    gpu = load_machine("b200")
    assert gpu.validation == "unvalidated" and gpu.architecture == "blackwell"
    assert gpu.peak_flops("bf16") == pytest.approx(2.25e15, rel=0.01)  # the datasheet peak
    res = serve("b200", "gpt2_small", tp=2, isl=100, osl=5, requests=4)
    assert res.settings["system"] == "hgx_b200_x8" and res.settings["validation"] == "unvalidated"
