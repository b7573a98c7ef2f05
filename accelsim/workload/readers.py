"""Workload readers: accelsim YAML, SCALE-Sim topology CSVs
(:mod:`accelsim.workload.scalesim_topology`) and ONNX files, by suffix or built-in name.

accelsim YAML::

    name: resnet18
    defaults: {n: 1}            # optional; merged into every op that has the field
    ops:
      - {op: conv2d, name: conv1, c: 3, h: 224, w: 224, k: 64, r: 7, s: 7, stride: 2, pad: 3}
      - {op: gemm, name: fc, m: 1, n: 1000, k: 512}

Every error names the file, the row or op and the bad value.

Imports: errors, limits, files, precision, workload.kineto, workload.models.hf_config,
workload.models.zoo, workload.onnx_reader, workload.ops, workload.program, workload.program_ops,
workload.registry, workload.scalesim_topology. The readers of other formats than workload YAML
and SCALE-Sim topologies (ONNX, programs, traces, Hugging Face configs, the zoo) are imported
lazily.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from accelsim.errors import ConfigError, WorkloadError, closest
from accelsim.limits import MAX_DIM, MAX_GRAPH_OPS, check_number
from accelsim.precision import PRECISION_BYTES
from accelsim.workload.ops import Workload
from accelsim.workload.registry import OP_TYPES, op_fields, required_fields
from accelsim.workload.scalesim_topology import topology_workload


def _read_onnx(path: Path) -> Workload:
    from accelsim.workload.onnx_reader import read_onnx

    return read_onnx(path)


EXTRA_READERS: dict[str, Callable[[Path], Workload]] = {".onnx": _read_onnx}
"""File suffix -> reader, for optional formats (``.onnx``: needs the ``onnx`` extra)."""


def op_from_dict(d: dict[str, Any], *, file: str, where: str) -> Any:
    """Build one operator from a YAML mapping; errors name ``file`` and ``where``."""
    if not isinstance(d, dict):
        raise WorkloadError(file, where, d, "expected a mapping with an 'op' key")
    kind = d.get("op")
    if not isinstance(kind, str) or kind not in OP_TYPES:
        near = difflib.get_close_matches(str(kind), list(OP_TYPES), n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else f" (known: {', '.join(OP_TYPES)})"
        raise WorkloadError(file, f"{where}.op", kind, "unknown operator" + hint)
    cls = OP_TYPES[kind]
    fields = op_fields(kind)
    kwargs: dict[str, Any] = {}
    for key, value in d.items():
        if key == "op":
            continue
        if key not in fields:
            near = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else f" (fields: {', '.join(fields)})"
            raise WorkloadError(file, f"{where}.{key}", value, "unknown field" + hint)
        kwargs[key] = _field_value(fields[key].type, key, value, file, f"{where}.{key}")
    missing = [name for name in required_fields(kind) if name not in kwargs]
    if missing:
        raise WorkloadError(file, f"{where}.{missing[0]}", None,
                            f"missing required field (a {kind} needs {', '.join(missing)})"
                            if len(missing) > 1 else "missing required field")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise WorkloadError(file, where, kwargs.get("name", ""), str(exc)) from None


def _field_value(ftype: Any, key: str, value: Any, file: str, field: str) -> Any:
    """One operator field checked against its declared type: dimensions are whole, finite,
    positive (``pad`` may be 0) and at most :data:`~accelsim.limits.MAX_DIM`; ``dtype`` is a
    known precision."""
    ftype = str(getattr(ftype, "__name__", ftype))
    optional = "None" in ftype
    if value is None and optional:
        return None
    if key == "dtype":
        if not isinstance(value, str) or value not in PRECISION_BYTES:
            raise WorkloadError(file, field, value,
                                f"unknown precision (known: {', '.join(PRECISION_BYTES)})")
        return value
    base = ftype.replace("| None", "").strip()
    if base == "int":
        return check_number(value, file=file, field=field, integer=True, maximum=MAX_DIM,
                            positive=key != "pad", non_negative=key == "pad", error=WorkloadError)
    if base == "float":
        return check_number(value, file=file, field=field, error=WorkloadError)
    if base == "bool":
        if not isinstance(value, bool):
            raise WorkloadError(file, field, value, "expected true or false")
        return value
    if base == "str":
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise WorkloadError(file, field, value, "expected a string")
        return str(value)
    return value


def read_yaml_workload(path: str | os.PathLike) -> Workload:
    """Read an accelsim workload YAML file."""
    from accelsim.files import read_yaml

    file = str(path)
    data = read_yaml(path)
    unknown = set(data) - {"name", "description", "defaults", "ops", "sources"}
    if unknown:
        key = sorted(unknown)[0]
        raise WorkloadError(file, key, data[key], "unknown key (known: name, description, "
                            "defaults, ops, sources)")
    ops_data = data.get("ops")
    if not isinstance(ops_data, list) or not ops_data:
        raise WorkloadError(file, "ops", ops_data, "expected a non-empty list of operators")
    if len(ops_data) > MAX_GRAPH_OPS:
        raise WorkloadError(file, "ops", f"{len(ops_data):,} operators",
                            f"more than the limit of {MAX_GRAPH_OPS:,} operators")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise WorkloadError(file, "defaults", defaults, "expected a mapping of field -> value")
    _check_defaults(defaults, ops_data, file)
    ops = []
    for i, d in enumerate(ops_data):
        where = f"ops[{i}]"
        if isinstance(d, dict):
            op = d.get("op")
            cls = OP_TYPES.get(op) if isinstance(op, str) else None
            if cls is not None:
                names = {f.name for f in dataclasses.fields(cls)}
                d = {**{k: v for k, v in defaults.items() if k in names}, **d}
            if "name" not in d:
                d = {**d, "name": f"op{i}"}
        ops.append(op_from_dict(d, file=file, where=where))
    return Workload(str(data.get("name", Path(file).stem)), tuple(ops), file)


def _check_defaults(defaults: dict[str, Any], ops_data: list[Any], file: str) -> None:
    """A ``defaults`` key that no operator of the file takes would be silently ignored: refuse
    it."""
    taken: set[str] = set()
    for d in ops_data:
        cls = OP_TYPES.get(d.get("op")) if isinstance(d, dict) and isinstance(d.get("op"), str) \
            else None
        if cls is not None:
            taken.update(f.name for f in dataclasses.fields(cls))
    for key, value in defaults.items():
        if key not in taken:
            raise WorkloadError(file, f"defaults.{key}", value,
                                "no operator of this workload takes this field")


def read_scalesim_topology(path: str | os.PathLike, mode: str = "auto") -> Workload:
    """Read a SCALE-Sim topology CSV: one operator per row
    (:func:`accelsim.workload.scalesim_topology.topology_workload`; ``mode`` ``conv``,
    ``gemm`` or ``auto``, by the header's number of columns)."""
    return topology_workload(path, mode)


def load_workload(name_or_path: str | os.PathLike, mode: str = "auto") -> Workload:
    """A workload by file path, built-in short name (``workloads/<name>.yaml|.csv``) or model-zoo
    spec (``llama3_8b_decode:batch=8,context=4096``).

    An ONNX file with dynamic dimensions takes their values after a colon:
    ``model.onnx:N=8,S=128``.
    """
    from accelsim.files import builtin_names, resolve_path

    text = str(name_or_path)
    from accelsim.workload.kineto import is_trace_path

    if is_trace_path(text):  # a torch.profiler (Kineto) trace, FILE[:host=measured]
        from accelsim.workload.kineto import trace_workload

        return trace_workload(text)
    from accelsim.workload.program import is_program_path

    if is_program_path(text):  # a captured program (accelsim capture)
        from accelsim.workload.program import read_program
        from accelsim.workload.program_ops import program_workload

        return program_workload(read_program(text))
    from accelsim.workload.models.hf_config import is_config_path

    if is_config_path(text.partition(":")[0].strip()):  # a Hugging Face config.json (with or
        from accelsim.workload.models import zoo  # without parameters): never read as YAML

        return zoo.workload(text)
    dims: dict[str, int] = {}
    if ".onnx:" in text:
        text, _, spec = text.partition(".onnx:")
        text += ".onnx"
        for item in filter(None, (s.strip() for s in spec.split(","))):
            key, eq, value = item.partition("=")
            if not eq or not key.strip() or not value.strip().isdigit():
                raise WorkloadError(text, key.strip() or item, value or item,
                                    "ONNX dimensions are given as NAME=positive integer")
            if key.strip() in dims:
                raise WorkloadError(text, key.strip(), value,
                                    f"given twice (first {key.strip()}={dims[key.strip()]})")
            if len(value.strip()) > 19:
                raise WorkloadError(text, key.strip(), value, "out of range (beyond int64)")
            dims[key.strip()] = check_number(int(value), file=text, field=key.strip(),
                                             integer=True, positive=True, maximum=MAX_DIM,
                                             error=WorkloadError)
        name_or_path = text
    try:
        path = resolve_path(name_or_path, "workloads", suffixes=(".yaml", ".yml", ".csv", ".onnx"))
    except ConfigError:
        from accelsim.workload.models import zoo

        if zoo.is_zoo_spec(text):
            return zoo.workload(text)
        names = builtin_names("workloads", (".yaml", ".yml", ".csv")) + zoo.names()
        near = closest(text.partition(":")[0], names)
        hint = (f"did you mean '{near}'?" if near
                else "see `accelsim list` for built-in workloads and zoo models")
        raise WorkloadError(text, None, None,
                            f"no such file, built-in workload or zoo model ({hint})") from None
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return read_scalesim_topology(path, mode)
    if suffix == ".onnx":
        from accelsim.workload.onnx_reader import read_onnx

        return read_onnx(path, dims or None)
    if suffix in EXTRA_READERS:
        return EXTRA_READERS[suffix](path)
    return read_yaml_workload(path)


def load_wl(workload: Any) -> Workload:
    """A :class:`Workload` from a built-in name, a path, a Workload or a list of ops."""
    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, str) or hasattr(workload, "__fspath__"):
        return load_workload(workload)
    if hasattr(workload, "to_workload"):
        return workload.to_workload()
    if isinstance(workload, (list, tuple)):
        return Workload("ops", tuple(workload))
    if hasattr(workload, "kind"):
        return Workload(getattr(workload, "name", "op"), (workload,))
    return load_workload(workload)
