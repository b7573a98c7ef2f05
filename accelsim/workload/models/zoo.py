"""The model zoo: built-in model generators by name, with parameters.

``get("llama3_8b_decode", batch=8, context=4096)`` returns a
:class:`~accelsim.workload.graph.ModelGraph`; :func:`workload` returns the same model as a
:class:`~accelsim.workload.ops.Workload`. A name may carry its parameters as a spec string,
``"llama3_8b_decode:batch=8,context=4096,dtype=fp8"`` (:func:`from_spec`), which is how the
command line and :func:`accelsim.workload.readers.load_workload` reach the zoo. A spec whose
name is a ``.json`` file is a Hugging Face ``config.json``
(``"workloads/hf/qwen2.5_7b.json:mode=decode,batch=8,context=4096"``,
:mod:`accelsim.workload.models.hf_config`).

Imports: errors, workload.graph, workload.models.*.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from accelsim.errors import AccelsimError, WorkloadError, closest
from accelsim.workload.graph import ModelGraph, ParamError
from accelsim.workload.models.cnn import mobilenet_v2, resnet50
from accelsim.workload.models.dlrm import dlrm
from accelsim.workload.models.hf_config import config_builder, is_config_path
from accelsim.workload.models.params import build_checked
from accelsim.workload.models.transformer import (
    BERT_BASE,
    GPT2_SMALL,
    GPT2_XL,
    LLAMA3_8B,
    LLAMA3_70B,
    MIXTRAL_8X7B,
    QWEN15_MOE_A27B,
    TransformerSpec,
    build_transformer,
    check_mode,
)


def _transformer(spec: TransformerSpec, mode: str, default_seq: int, *,
                 fixed: bool = False) -> Callable[..., ModelGraph]:
    """A zoo builder of ``spec``; ``fixed``: the name says the mode (``gpt2_decode``,
    ``bert_base``), so another ``mode=`` contradicts it."""
    named = mode

    def build(*, batch: int = 1, seq: int = default_seq, context: int | None = None,
              dtype: str = "bf16", mode: str = mode) -> ModelGraph:
        check_mode(spec, mode)
        if fixed and mode != named:
            raise ParamError("mode", mode, f"this zoo name is {spec.name}'s {named} model; "
                             f"for {mode} name '{spec.name}' with mode={mode}")
        return build_transformer(spec, batch=batch, seq=seq, mode=mode, context=context,
                                 dtype=dtype)
    ffn = (f"{spec.experts} experts of FFN {spec.ef}, top-{spec.top_k}"
           + (f", shared FFN {spec.shared_ffn}" if spec.shared_ffn else "")
           if spec.is_moe else f"FFN {spec.ffn}")
    build.__doc__ = (f"{spec.name}: {spec.layers} layers, hidden {spec.hidden}, {spec.heads} "
                     f"heads ({spec.kv} KV), {ffn} ({spec.ffn_act}), default {mode}.")
    return build


MODELS: dict[str, Callable[..., ModelGraph]] = {
    "resnet50": resnet50,
    "mobilenet_v2": mobilenet_v2,
    "bert_base": _transformer(BERT_BASE, "encoder", 512, fixed=True),
    "dlrm": dlrm,
}
SPECS: dict[str, TransformerSpec] = {"bert_base": BERT_BASE}
"""The architecture behind each transformer zoo name (what tensor parallelism and serving
shard)."""
for _spec, _seq in ((GPT2_SMALL, 1024), (GPT2_XL, 1024), (LLAMA3_8B, 2048), (LLAMA3_70B, 2048),
                    (MIXTRAL_8X7B, 2048), (QWEN15_MOE_A27B, 2048)):
    for _name in (_spec.name, f"{_spec.name}_prefill", f"{_spec.name}_decode"):
        SPECS[_name] = _spec
    MODELS[_spec.name] = _transformer(_spec, "prefill", _seq)
    MODELS[f"{_spec.name}_prefill"] = _transformer(_spec, "prefill", _seq, fixed=True)
    MODELS[f"{_spec.name}_decode"] = _transformer(_spec, "decode", _seq, fixed=True)

ALIASES = {"gpt2": "gpt2_small", "gpt2_prefill": "gpt2_small_prefill",
           "gpt2_decode": "gpt2_small_decode"}
"""Other names of a model: ``gpt2`` is GPT-2 small (124 M parameters), as in Hugging Face."""
MODELS.update({alias: MODELS[target] for alias, target in ALIASES.items()})
SPECS.update({alias: SPECS[target] for alias, target in ALIASES.items()})


def names() -> list[str]:
    """Every zoo name, sorted."""
    return sorted(MODELS)


def parameters(name: str) -> dict[str, Any]:
    """A model's parameters and their defaults."""
    fn = _lookup(name)
    return {p.name: p.default for p in inspect.signature(fn).parameters.values()}


def _lookup(name: str) -> Callable[..., ModelGraph]:
    if name not in MODELS:
        near = closest(name, list(MODELS))
        hint = f"did you mean '{near}'?" if near else f"known: {', '.join(names())}"
        raise WorkloadError("zoo", "model", name, f"no such zoo model ({hint})")
    return MODELS[name]


def get(name: str, **params: Any) -> ModelGraph:
    """Build zoo model ``name`` with ``params`` (see :func:`parameters`)."""
    return build_checked(_lookup(name), params, file="zoo", field_prefix=f"{name}.", label=name)


def _parse_value(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"name:key=value,key=value"`` -> ``(name, {key: value})`` (integers parsed); a key
    given twice is a :class:`WorkloadError`."""
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise WorkloadError(spec, "parameters", item, "expected key=value")
        if key in params:
            raise WorkloadError(spec, key, value.strip(),
                                f"given twice (first {key}={params[key]})")
        params[key] = _parse_value(value.strip())
    return name.strip(), params


def is_zoo_spec(spec: str) -> bool:
    """Whether ``spec`` names a zoo model or a Hugging Face ``config.json`` (with or without
    parameters)."""
    name = str(spec).partition(":")[0].strip()
    return name in MODELS or is_config_path(name)


def from_spec(spec: str) -> ModelGraph:
    """The graph a spec string names (a zoo model, or a Hugging Face ``config.json`` file:
    :mod:`accelsim.workload.models.hf_config`)."""
    name, params = parse_spec(spec)
    if is_config_path(name):
        file, build = config_builder(name)
        return build_checked(build, params, file=file, label=Path(file).stem)
    return get(name, **params)


def workload(name: str, **params: Any):
    """Zoo model ``name`` as a :class:`~accelsim.workload.ops.Workload` (a spec string works)."""
    if params:
        return get(name, **params).to_workload()
    return from_spec(name).to_workload()


__all__ = ["MODELS", "SPECS", "build_checked", "from_spec", "get", "is_zoo_spec", "names",
           "parameters", "parse_spec", "workload"]


def workload_params(workload: Any) -> dict[str, Any]:
    """The parameters of a workload given as a model-zoo spec (``llama3_8b_decode:batch=8``),
    its defaults resolved (``{"batch": 8, "seq": 2048, "context": None, "dtype": "bf16",
    ...}``); those written in a Hugging Face config or ONNX spec; else none."""
    if not isinstance(workload, str) or (":" not in workload and "." in workload):
        return {}  # an object, or a file without parameters
    try:
        name, given = parse_spec(workload)
        defaults = parameters(name) if name in MODELS else {}
    except AccelsimError:
        return {}
    return {**defaults, **given}
