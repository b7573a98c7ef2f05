"""Hugging Face ``config.json`` models: fields read, graphs built, bad input refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsim.errors import WorkloadError
from accelsim.workload.graph import ModelGraph
from accelsim.workload.models import zoo
from accelsim.workload.models.hf_config import config_model, spec_from_config
from accelsim.workload.models.transformer import (
    LLAMA3_8B,
    MIXTRAL_8X7B,
    QWEN15_MOE_A27B,
    build_transformer,
)
from accelsim.workload.ops import Gemm, GroupedGemm

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "workloads" / "hf"

LLAMA3_8B_CONFIG = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "max_position_embeddings": 8192, "hidden_act": "silu",
    "tie_word_embeddings": False, "torch_dtype": "bfloat16"}


def _write(tmp_path: Path, cfg: dict, name: str = "m.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(cfg))
    return str(p)


def _gemms(g: ModelGraph) -> dict[str, Gemm]:
    return {n.op.name: n.op for n in g.nodes if isinstance(n.op, Gemm)}


def test_llama_config_builds_the_zoo_llama(tmp_path: Path) -> None:
    path = _write(tmp_path, LLAMA3_8B_CONFIG, "llama3_8b.json")
    g = config_model(path, mode="decode", batch=4, context=1000)
    ref = build_transformer(LLAMA3_8B, batch=4, mode="decode", context=1000)
    assert g.name == ref.name == "llama3_8b_decode"
    assert [type(n.op).__name__ for n in g.nodes] == [type(n.op).__name__ for n in ref.nodes]
    assert g.to_workload().macs == ref.to_workload().macs > 0


def test_shipped_configs_have_their_published_shapes() -> None:
    qwen = config_model(HF / "qwen2.5_7b.json", mode="decode", batch=2, context=64)
    gemms = _gemms(qwen)
    assert (gemms["layers.0.k_proj"].n, gemms["layers.0.k_proj"].k) == (4 * 128, 3584)
    assert gemms["layers.0.q_proj"].bias and gemms["layers.0.v_proj"].bias   # Qwen2: q/k/v bias
    assert not gemms["layers.0.o_proj"].bias and not gemms["layers.0.ffn.down_proj"].bias
    assert gemms["lm_head"].n == 152064
    assert sum(1 for n in qwen.nodes if n.op.name.endswith(".q_proj")) == 28
    one_b = config_model(HF / "llama3.2_1b.json", mode="decode", batch=1, context=16)
    g1 = _gemms(one_b)
    assert g1["layers.0.q_proj"].n == 32 * 64 and g1["layers.0.ffn.gate_proj"].n == 8192
    assert not g1["layers.0.q_proj"].bias


def test_spec_string_through_zoo_and_defaults() -> None:
    spec = "workloads/hf/llama3.2_3b.json:batch=2,seq=128"
    assert zoo.is_zoo_spec(spec)
    g = zoo.from_spec(spec)
    assert g.name == "llama3.2_3b_prefill"                    # default mode: prefill
    assert _gemms(g)["layers.0.q_proj"].m == 2 * 128
    assert zoo.from_spec("hf/llama3.2_3b.json:mode=decode").name == "llama3.2_3b_decode"


def test_gpt2_and_bert_configs(tmp_path: Path) -> None:
    gpt2 = _write(tmp_path, {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
                             "vocab_size": 50257, "n_positions": 1024, "n_inner": None})
    g = _gemms(config_model(gpt2, seq=64))
    assert g["layers.0.qkv_proj"].n == 3 * 768 and g["layers.0.ffn.fc1"].n == 4 * 768
    assert g["layers.0.qkv_proj"].bias
    bert = _write(tmp_path, {"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 64,
                             "num_attention_heads": 4, "intermediate_size": 256,
                             "vocab_size": 100, "max_position_embeddings": 128}, "b.json")
    gb = config_model(bert, seq=32)
    assert gb.name == "b" and "lm_head" not in _gemms(gb)


def test_sliding_window_bounds_decode_keys(tmp_path: Path) -> None:
    mistral = _write(tmp_path, {**LLAMA3_8B_CONFIG, "model_type": "mistral",
                                "sliding_window": 256, "max_position_embeddings": 32768})
    g = _gemms(config_model(mistral, mode="decode", batch=1, context=4096))
    full = _gemms(config_model(_write(tmp_path, LLAMA3_8B_CONFIG, "l.json"), mode="decode",
                               batch=1, context=4096))
    assert g["layers.0.qk"].n == 256 and full["layers.0.qk"].n == 4096


@pytest.mark.parametrize(("change", "field", "reason"), [
    ({"model_type": "deepseek_v2"}, "model_type", "unsupported"),
    ({"num_local_experts": 8}, "num_local_experts", "mixture-of-experts"),
    ({"model_type": "mixtral"}, "num_local_experts", "missing"),
    ({"model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 9},
     "num_experts_per_tok", "more than num_local_experts"),
    ({"model_type": "qwen2_moe", "num_experts": 60, "num_experts_per_tok": 4,
      "moe_intermediate_size": 1408, "decoder_sparse_step": 2}, "decoder_sparse_step",
     "only 1"),
    ({"model_type": "qwen2_moe", "num_experts": 60, "num_experts_per_tok": 4,
      "moe_intermediate_size": 1408, "mlp_only_layers": [3]}, "mlp_only_layers", "dense"),
    ({"model_type": "qwen2_moe", "num_experts": 60, "num_experts_per_tok": 4,
      "n_routed_experts": 64, "moe_intermediate_size": 1408}, "n_routed_experts",
     "mixture-of-experts"),
    ({"hidden_act": "gelu"}, "hidden_act", "supported: silu"),
    ({"num_key_value_heads": 5}, "num_key_value_heads", "must divide"),
    ({"hidden_size": -4}, "hidden_size", "positive integer"),
    ({"num_hidden_layers": None}, "num_hidden_layers", "missing"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings", "true or false"),
])
def test_bad_fields_name_file_field_and_value(tmp_path: Path, change: dict, field: str,
                                              reason: str) -> None:
    path = _write(tmp_path, {**LLAMA3_8B_CONFIG, **change})
    with pytest.raises(WorkloadError) as e:
        config_model(path, mode="decode")
    msg = str(e.value)
    assert path in msg and field in msg and reason in msg and "\n" not in msg


def test_bad_files_and_parameters(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    cases = [(str(bad), {}, "not valid JSON"),
             (_write(tmp_path, [1, 2], "list.json"), {}, "expected a JSON object"),
             (str(tmp_path / "missing.json"), {}, "no such file"),
             (_write(tmp_path, LLAMA3_8B_CONFIG), {"mode": "encoder"}, "is a decoder"),
             (_write(tmp_path, LLAMA3_8B_CONFIG), {"batsh": 2}, "did you mean 'batch'"),
             (_write(tmp_path, LLAMA3_8B_CONFIG), {"mode": "decode", "context": 9000},
              "exceeds m.s 8192 positions"),
             (_write(tmp_path, LLAMA3_8B_CONFIG), {"dtype": "fp7"}, "unknown precision"),
             (_write(tmp_path, LLAMA3_8B_CONFIG), {"batch": 0}, "batch")]
    for path, params, reason in cases:
        with pytest.raises(WorkloadError, match=reason):
            config_model(path, **params)
    spec = spec_from_config(LLAMA3_8B_CONFIG, name="x", file="f.json")
    assert spec.kv == 8 and spec.dh == 128 and spec.rotary and spec.norm == "rmsnorm"


def test_a_checkpoint_folder_reads_its_config_json(tmp_path: Path) -> None:
    folder = tmp_path / "Meta-Llama-3-8B"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA3_8B_CONFIG))
    spec = f"{folder}:mode=decode,batch=2,context=64"
    assert zoo.is_zoo_spec(spec)
    g = zoo.from_spec(spec)
    assert g.name == "Meta-Llama-3-8B_decode" and _gemms(g)["layers.0.k_proj"].n == 8 * 128
    assert not zoo.is_zoo_spec(str(tmp_path))             # a folder without config.json


@pytest.mark.parametrize(("file", "zoo_spec"), [("mixtral_8x7b.json", MIXTRAL_8X7B),
                                                ("qwen1.5_moe_a2.7b.json", QWEN15_MOE_A27B)])
def test_moe_configs_build_the_zoo_moe_models(file: str, zoo_spec) -> None:
    g = config_model(HF / file, mode="decode", batch=2, context=64)
    ref = build_transformer(zoo_spec, mode="decode", batch=2, context=64)
    assert [(n.name, n.op) for n in g.nodes] == [(n.name, n.op) for n in ref.nodes]
    assert g.parameter_count() == ref.parameter_count()
    up = next(n.op for n in g.nodes if n.name == "layers.0.moe.experts_gate_up")
    assert isinstance(up, GroupedGemm)
    assert (up.total_experts, up.top_k, up.n) == (zoo_spec.experts, zoo_spec.top_k,
                                                  2 * zoo_spec.ef)
