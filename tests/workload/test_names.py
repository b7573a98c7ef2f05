"""One name, one workload: built-in files and zoo models never share a name; typos get the
name they most likely meant."""

import pytest

from accelsim.errors import WorkloadError, closest
from accelsim.files import builtin_names
from accelsim.workload.models import zoo
from accelsim.workload.readers import load_workload


def test_builtin_files_and_zoo_models_have_distinct_names():
    files = set(builtin_names("workloads", (".yaml", ".yml", ".csv")))
    assert files and not files & set(zoo.names())


def test_resnet50_is_the_zoo_graph_and_resnet50_convs_the_file():
    graph = load_workload("resnet50")
    convs = load_workload("resnet50_convs")
    assert graph.source.startswith("zoo") and convs.source.endswith("resnet50_convs.yaml")
    assert graph.macs == convs.macs  # same convolutions and fc ...
    assert len(graph.ops) > len(convs.ops)  # ... plus batch-norm, ReLU and residual adds


def test_gpt2_is_gpt2_small():
    w = load_workload("gpt2")
    assert w.name.startswith("gpt2_small")
    assert w.macs == load_workload("gpt2_small").macs


@pytest.mark.parametrize("typed, meant", [
    ("gpt", "gpt2"), ("llama3-8b-decode", "llama3_8b_decode"), ("resnet50_conv", "resnet50_convs"),
    ("Bert_Base", "bert_base"), ("llama3_8b_decod", "llama3_8b_decode"),
    ("mobilenet", "mobilenet_v2"),
])
def test_suggestions_pick_the_closest_name(typed, meant):
    names = builtin_names("workloads", (".yaml", ".yml", ".csv")) + zoo.names()
    assert closest(typed, names) == meant
    with pytest.raises(WorkloadError, match=f"did you mean '{meant}'"):
        load_workload(typed)


def test_no_suggestion_for_nothing_alike():
    assert closest("qqqq", zoo.names()) is None
