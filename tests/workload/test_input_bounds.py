"""Bounds and contradictions of workload inputs, as specifications (issue 27, point 5 and the
"silently accepted" list): each refusal is one WorkloadError line naming the file, the field,
the value and, for a size, the limit.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from accelsim.errors import WorkloadError
from accelsim.limits import MAX_LAYERS, MAX_NESTING, parse_json
from accelsim.workload import graph
from accelsim.workload.models import zoo
from accelsim.workload.models.hf_config import config_model
from accelsim.workload.readers import load_workload, read_yaml_workload

LLAMA = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 4096,
         "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 1024,
         "vocab_size": 1000, "max_position_embeddings": 4096}
GPT2 = {"model_type": "gpt2", "n_layer": 2, "n_embd": 768, "n_head": 12, "vocab_size": 100,
        "n_positions": 1024}
BERT = {"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 768,
        "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 100,
        "max_position_embeddings": 512}


def _config(tmp_path, data, name="m.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(p)


@pytest.mark.parametrize("base, hidden_key, heads_key, hidden", [
    (LLAMA, "hidden_size", "num_attention_heads", 4097),
    (GPT2, "n_embd", "n_head", 770),
    (BERT, "hidden_size", "num_attention_heads", 770),
])
def test_heads_that_do_not_divide_the_hidden_size_are_refused(tmp_path, base, hidden_key,
                                                               heads_key, hidden):
    path = _config(tmp_path, {**base, hidden_key: hidden})
    with pytest.raises(WorkloadError) as err:
        config_model(path)
    text = str(err.value)
    assert text.startswith(f"{path}: {heads_key} = ") and hidden_key in text
    assert str(hidden) in text and "\n" not in text
    config_model(_config(tmp_path, base, "ok.json"))  # the same config, divisible, builds


def test_an_explicit_head_dim_needs_no_division(tmp_path):
    """Qwen3/Gemma-style configs: heads * head_dim need not equal the hidden size."""
    g = config_model(_config(tmp_path, {**LLAMA, "hidden_size": 4097, "head_dim": 128}))
    assert any(n.op.name == "layers.0.q_proj" and n.op.n == 32 * 128 for n in g.nodes)


def test_layers_beyond_the_limit_are_refused_before_building(tmp_path):
    path = _config(tmp_path, {**LLAMA, "num_hidden_layers": 2**31 - 1})
    with pytest.raises(WorkloadError, match=f"num_hidden_layers = 2147483647: .*{MAX_LAYERS:,}"):
        config_model(path)
    with pytest.raises(WorkloadError, match="n_layer"):
        config_model(_config(tmp_path, {**GPT2, "n_layer": MAX_LAYERS + 1}, "g.json"))


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000,
                                  '{"a":' * (MAX_NESTING + 1) + "1" + "}" * (MAX_NESTING + 1)])
def test_deeply_nested_json_is_one_line(tmp_path, text):
    path = _config(tmp_path, text)
    with pytest.raises(WorkloadError, match=f"nested deeper than {MAX_NESTING} levels"):
        config_model(path)


def test_json_nesting_at_the_limit_parses_and_nan_is_not_json():
    doc = parse_json("[" * MAX_NESTING + "]" * MAX_NESTING, file="f")
    assert isinstance(doc, list)
    with pytest.raises(WorkloadError, match="NaN"):
        parse_json('{"x": NaN}', file="f", error=WorkloadError)


@pytest.mark.parametrize("spec, field, value", [
    ("gpt2_decode:mode=encoder", "gpt2_decode.mode", "encoder"),
    ("gpt2_decode:mode=prefill", "gpt2_decode.mode", "prefill"),
    ("bert_base:mode=decode", "bert_base.mode", "decode"),
    ("llama3_8b:mode=sideways", "llama3_8b.mode", "sideways"),
    ("bert_base:context=64", "bert_base.context", "64"),
])
def test_zoo_parameters_that_contradict_the_model_are_refused(spec, field, value):
    with pytest.raises(WorkloadError) as err:
        zoo.workload(spec)
    assert str(err.value).startswith(f"zoo: {field} = ") and value in str(err.value)


def test_the_model_s_own_modes_still_build():
    assert zoo.workload("gpt2:mode=decode").name == "gpt2_small_decode"
    assert zoo.workload("gpt2_decode:mode=decode").name == "gpt2_small_decode"
    assert zoo.workload("bert_base:mode=encoder").name == "bert_base"


def test_a_hf_encoder_refuses_a_decoder_mode(tmp_path):
    with pytest.raises(WorkloadError, match="mode = 'decode': .* an encoder"):
        zoo.workload(_config(tmp_path, BERT) + ":mode=decode")


@pytest.mark.parametrize("spec, key", [("gpt2:batch=1,batch=64", "batch"),
                                       ("gpt2: seq=8 ,seq=8", "seq")])
def test_a_spec_key_given_twice_is_refused(spec, key):
    with pytest.raises(WorkloadError, match=f"{key} = .*given twice"):
        zoo.parse_spec(spec)


def test_an_onnx_dimension_given_twice_is_refused(tmp_path):
    with pytest.raises(WorkloadError, match="N = .*given twice"):
        load_workload(str(tmp_path / "m.onnx") + ":N=4,N=8")


def test_numpy_integers_are_zoo_parameters():
    a = zoo.get("gpt2_decode", batch=np.int64(4), context=np.int32(128))
    b = zoo.get("gpt2_decode", batch=4, context=128)
    assert [n.op for n in a.nodes] == [n.op for n in b.nodes]
    assert type(a.nodes[0].op.tokens) is int


def test_a_workload_default_no_operator_takes_is_refused(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("defaults: {colour: red}\nops:\n  - {op: gemm, name: g, m: 1, n: 1, k: 1}\n")
    with pytest.raises(WorkloadError, match="defaults.colour = 'red'"):
        read_yaml_workload(p)


def test_missing_fields_are_all_named(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("ops:\n  - {op: gemm, name: g, m: 1}\n")
    with pytest.raises(WorkloadError,
                       match=r"ops\[0\]\.n: missing required field \(a gemm needs n, k\)"):
        read_yaml_workload(p)


def test_a_graph_over_the_operator_limit_is_refused(monkeypatch):
    monkeypatch.setattr(graph, "MAX_GRAPH_OPS", 50)
    with pytest.raises(WorkloadError, match="more than the limit of 50 operators"):
        zoo.get("gpt2_decode")
    monkeypatch.setattr(graph, "MAX_GRAPH_OPS", 10_000)
    assert len(zoo.get("gpt2_decode").nodes) > 50


def test_a_yaml_workload_over_the_operator_limit_is_refused(tmp_path, monkeypatch):
    from accelsim.workload import readers

    monkeypatch.setattr(readers, "MAX_GRAPH_OPS", 3)
    p = tmp_path / "w.yaml"
    p.write_text("defaults: {m: 1, n: 1, k: 1}\nops:\n" + "  - {op: gemm}\n" * 4)
    with pytest.raises(WorkloadError, match="ops = '4 operators': more than the limit of 3"):
        read_yaml_workload(p)


def test_onnx_external_weights_are_never_read(tmp_path):
    """Only shapes matter: a model whose weights live in an external file that cannot be read
    (here a folder where the file should be) still loads."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from onnx.external_data_helper import convert_model_to_external_data

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 64])
    w = helper.make_tensor("w", TensorProto.FLOAT, [64, 64], [0.0] * 4096)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="m1")], "g",
                          [x], [y], [w])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    convert_model_to_external_data(model, location="weights.bin", size_threshold=0)
    onnx.save(model, str(tmp_path / "m.onnx"))
    (tmp_path / "weights.bin").unlink(missing_ok=True)
    (tmp_path / "weights.bin").mkdir()  # reading it would fail
    wl = load_workload(str(tmp_path / "m.onnx"))
    assert wl.ops[0].k == 64 and wl.ops[0].n == 64
