"""A captured program: the calls a user's PyTorch code makes, as a file accelsim can keep.

:func:`accelsim.api.capture` (and ``accelsim capture``) runs a user's callable on example
tensors (``meta`` tensors work: no memory, no GPU, no weights) and records every call at the
torch-function level (``F.linear``, ``F.scaled_dot_product_attention``, ``F.rms_norm``,
``Tensor.add``, ``Tensor.view``, ``Tensor.__setitem__``...), above the point where PyTorch
picks a device's kernels: on ``meta``/CPU ``rms_norm`` and SDPA decompose into their CPU paths,
on a GPU they dispatch to fused kernels, so the choice is left to each machine's lowering
(:mod:`accelsim.workload.program_ops`, ``configs/lowering/``).

A :class:`Program` holds, per call, the function's canonical name (``linear``, ``add``,
``setitem``), its tensor inputs and outputs (shape, dtype, strides, whether a result is a
view of an input, whether an input is a parameter), its scalar arguments and the module
path that made it (``layers.3.attn.q_proj``). It is written as JSON (``FORMAT``, one object,
``"format"`` first so the file is recognised by its first bytes) and read back with every
field checked (each tensor may carry an ``id``: the same tensor object has the same
number in every call, the dataflow between calls): a bad file is a one-line
:class:`~accelsim.errors.WorkloadError` naming the file, the field and the value. Sizes in
elements; bytes are decimal.

Imports: errors, limits, files.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelsim.errors import WorkloadError
from accelsim.limits import MAX_DIM, MAX_FILE_BYTES, MAX_TENSOR_ELEMENTS, parse_json

FORMAT = "accelsim-program"
"""The ``format`` value of a program file."""

VERSION = 1
"""The program file format version this accelsim reads and writes."""

MAX_CALLS = 250_000
"""Calls a program file may hold (a 300,000-call program takes ~44 s and 1.2 GB to run)."""
"""Most calls one program may hold (a 70B decoder step is ~2,500; a 1,000-layer model with
every view recorded stays far below)."""

MAX_TENSORS_PER_CALL = 4096
"""Most tensor inputs or outputs one call may list (``torch.cat`` of a long list)."""

MAX_RANK = 16
"""Most dimensions of one tensor."""

TORCH_DTYPES: dict[str, str | None] = {
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
    "float64": "fp32", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "float8_e4m3fnuz": "fp8",
    "float8_e5m2fnuz": "fp8", "int8": "int8", "uint8": "int8", "int16": "int16",
    "int32": "int32", "int64": "int32", "bool": "int8", "complex64": "fp32"}
"""Torch dtype names -> the accelsim precision that costs them (``float64``/``int64`` have no
tensor-core precision: they are costed at 32 bits for compute, their bytes are counted
exactly from :data:`DTYPE_BYTES`)."""

DTYPE_BYTES: dict[str, float] = {
    "bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "float64": 8,
    "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
    "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8, "bool": 1, "complex64": 8}
"""Bytes per element of each torch dtype a program may name."""


def dense_strides(shape: Sequence[int], stride: Sequence[int]) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense()`` of a tensor of ``shape`` and ``stride``
    (elements): row-major after some permutation of its dimensions (size-1 ones ignored)."""
    dims = sorted((st, size) for size, st in zip(shape, stride, strict=True) if size != 1)
    expected = 1
    for st, size in dims:
        if st != expected:
            return False
        expected *= size
    return True


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """One tensor a call reads or writes: shape and strides in elements, torch dtype name."""

    shape: tuple[int, ...]
    dtype: str
    stride: tuple[int, ...]
    view: bool = False
    """A result that shares its input's storage (``view``, ``transpose``, basic slicing):
    no kernel made it."""
    param: bool = False
    """An ``nn.Parameter`` or registered buffer (weights: the memory check counts them)."""
    tensor_id: int | None = None
    """Which tensor object this is (JSON ``id``): the same number wherever the same tensor is
    an input or output, so a call's inputs can be traced to the call that made them (the
    dataflow a compiler fuses along, :mod:`accelsim.mapping.program_fusion`); None in files
    written without it."""

    @property
    def elements(self) -> int:
        """Number of elements."""
        return math.prod(self.shape) if self.shape else 1

    @property
    def nbytes(self) -> float:
        """Bytes of the elements (decimal)."""
        return self.elements * DTYPE_BYTES[self.dtype]

    @property
    def precision(self) -> str:
        """The accelsim precision name that costs this dtype."""
        return TORCH_DTYPES[self.dtype] or "fp32"

    @property
    def contiguous(self) -> bool:
        """Row-major dense (size-1 dimensions may have any stride)."""
        expected = 1
        for size, st in zip(reversed(self.shape), reversed(self.stride), strict=True):
            if size != 1 and st != expected:
                return False
            expected *= size
        return True

    @property
    def dense(self) -> bool:
        """Dense and non-overlapping in some order of its dimensions (row-major after a
        permutation: a channels-last or transposed-but-whole tensor), as TensorIterator's
        vectorized kernels take it when every operand shares its strides."""
        return dense_strides(self.shape, self.stride)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this tensor."""
        out: dict[str, Any] = {"shape": list(self.shape), "dtype": self.dtype,
                               "stride": list(self.stride)}
        if self.view:
            out["view"] = True
        if self.param:
            out["param"] = True
        if self.tensor_id is not None:
            out["id"] = self.tensor_id
        return out


@dataclass(frozen=True, slots=True)
class Call:
    """One call the program made, at the torch-function level."""

    fn: str
    """Canonical function name: ``linear``, ``scaled_dot_product_attention``, ``add``,
    ``view``, ``setitem`` (``Tensor.__setitem__``), ``module`` (an ``nn.Module.__call__``)."""
    inputs: tuple[TensorInfo, ...] = ()
    outputs: tuple[TensorInfo, ...] = ()
    args: Mapping[str, Any] = field(default_factory=dict)
    """Scalar arguments the lowering reads (``is_causal``, ``dim``, ``stride``...)."""
    module: str = ""
    """Path of the innermost module that made the call (``layers.0.mlp.up``; ``""``: top)."""
    qualname: str = ""
    """The function's own qualified name (``TensorBase.add``), for the unmodelled table."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this call."""
        out: dict[str, Any] = {"fn": self.fn}
        if self.inputs:
            out["in"] = [t.to_json() for t in self.inputs]
        if self.outputs:
            out["out"] = [t.to_json() for t in self.outputs]
        if self.args:
            out["args"] = dict(self.args)
        if self.module:
            out["module"] = self.module
        if self.qualname and self.qualname != self.fn:
            out["qualname"] = self.qualname
        return out


@dataclass(frozen=True, slots=True)
class Program:
    """The calls of one step of a user's program (one forward), in order."""

    name: str
    calls: tuple[Call, ...]
    framework: str = ""
    """The framework and version that captured it (``torch 2.13.0``)."""
    source: str = ""
    """The file it was read from, or the callable it was captured from."""

    def to_json(self) -> dict[str, Any]:
        """The JSON document of this program (``format`` first)."""
        return {"format": FORMAT, "version": VERSION, "name": self.name,
                "framework": self.framework, "calls": [c.to_json() for c in self.calls]}

    def to_text(self) -> str:
        """The JSON text of the program, one call per line (``format`` first)."""
        doc = self.to_json()
        calls = doc.pop("calls")
        head = json.dumps(doc)[:-1]
        body = ",\n".join(json.dumps(c, separators=(",", ":")) for c in calls)
        return f'{head}, "calls": [\n{body}\n]}}\n'

    def write(self, path: str | os.PathLike) -> Path:
        """Write the program as JSON to ``path`` (every write checked); returns the path."""
        from accelsim.files import write_output

        return write_output(path, self.to_text())


def file_head(text: str, size: int, *, gunzip: bool = False) -> bytes | None:
    """The first ``size`` bytes of the file ``text`` names (a path or a built-in workload),
    decompressed when ``gunzip`` and the file is gzipped; None when it is no readable file
    (the other readers then say why)."""
    try:
        import gzip

        from accelsim.files import resolve_path

        path = resolve_path(text, "workloads", suffixes=("",))
        if not path.is_file():
            return None
        with open(path, "rb") as fh:
            head = fh.read(size)
        if gunzip and head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as fh:
                head = fh.read(size)
    except Exception:  # noqa: BLE001 (not a workload file of this kind)
        return None
    return head


def is_program_path(name: str | os.PathLike) -> bool:
    """Whether ``name`` is a JSON file whose first bytes say it is an accelsim program."""
    text = str(name).partition(":")[0].strip()
    if not text.lower().endswith(".json"):
        return False
    head = file_head(text, 256)
    return head is not None and f'"format": "{FORMAT}"'.encode() in head


def _fail(file: str, where: str, value: Any, reason: str) -> WorkloadError:
    return WorkloadError(file, where, value, reason)


def _ints(file: str, where: str, raw: Any, *, minimum: int) -> tuple[int, ...]:
    if not isinstance(raw, list) or len(raw) > MAX_RANK:
        raise _fail(file, where, raw, f"expected a list of at most {MAX_RANK} integers")
    out = []
    for v in raw:
        if isinstance(v, bool) or not isinstance(v, int) or not minimum <= v <= MAX_DIM:
            raise _fail(file, where, v, f"expected an integer {minimum}..{MAX_DIM}")
        out.append(v)
    return tuple(out)


def _tensor(file: str, where: str, raw: Any) -> TensorInfo:
    if not isinstance(raw, Mapping):
        raise _fail(file, where, raw, "expected a tensor object {shape, dtype, stride}")
    unknown = set(raw) - {"shape", "dtype", "stride", "view", "param", "id"}
    if unknown:
        key = sorted(unknown)[0]
        raise _fail(file, f"{where}.{key}", raw[key], "unknown key")
    shape = _ints(file, f"{where}.shape", raw.get("shape"), minimum=0)
    if math.prod(shape) > MAX_TENSOR_ELEMENTS:
        raise _fail(file, f"{where}.shape", list(shape),
                    f"more than the limit of {MAX_TENSOR_ELEMENTS:,} elements")
    dtype = raw.get("dtype")
    if dtype not in DTYPE_BYTES:
        raise _fail(file, f"{where}.dtype", dtype,
                    f"unknown dtype (known: {', '.join(sorted(DTYPE_BYTES))})")
    stride = _ints(file, f"{where}.stride", raw.get("stride", []), minimum=0)
    if len(stride) != len(shape):
        raise _fail(file, f"{where}.stride", list(stride), f"expected {len(shape)} strides")
    flags = {}
    for key in ("view", "param"):
        v = raw.get(key, False)
        if not isinstance(v, bool):
            raise _fail(file, f"{where}.{key}", v, "expected true or false")
        flags[key] = v
    tid = raw.get("id")
    if tid is not None and (isinstance(tid, bool) or not isinstance(tid, int)
                            or not 0 <= tid <= 2**62):
        raise _fail(file, f"{where}.id", tid, "expected an integer 0..2**62")
    return TensorInfo(shape, str(dtype), stride, **flags, tensor_id=tid)


def _scalar_args(file: str, where: str, raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _fail(file, where, raw, "expected an object of scalar arguments")
    out: dict[str, Any] = {}
    for key, v in raw.items():
        ok = v is None or isinstance(v, (bool, int, float, str)) or (
            isinstance(v, list) and len(v) <= MAX_RANK
            and all(isinstance(x, (bool, int, float)) for x in v))
        if not ok or (isinstance(v, str) and len(v) > 200):
            raise _fail(file, f"{where}.{key}", v, "expected a scalar or a short list of numbers")
        out[str(key)] = v
    return out


def _call(file: str, where: str, raw: Any) -> Call:
    if not isinstance(raw, Mapping):
        raise _fail(file, where, raw, "expected a call object {fn, in, out, ...}")
    unknown = set(raw) - {"fn", "in", "out", "args", "module", "qualname"}
    if unknown:
        key = sorted(unknown)[0]
        raise _fail(file, f"{where}.{key}", raw[key], "unknown key")
    fn = raw.get("fn")
    if not isinstance(fn, str) or not fn or len(fn) > 200:
        raise _fail(file, f"{where}.fn", fn, "expected a function name")
    tensors = {}
    for key in ("in", "out"):
        items = raw.get(key, [])
        if not isinstance(items, list) or len(items) > MAX_TENSORS_PER_CALL:
            raise _fail(file, f"{where}.{key}", items,
                        f"expected a list of at most {MAX_TENSORS_PER_CALL} tensors")
        tensors[key] = tuple(_tensor(file, f"{where}.{key}[{i}]", t) for i, t in enumerate(items))
    text = {}
    for key in ("module", "qualname"):
        v = raw.get(key, "")
        if not isinstance(v, str) or len(v) > 1000:
            raise _fail(file, f"{where}.{key}", v, "expected a short string")
        text[key] = v
    text["qualname"] = text["qualname"] or fn
    return Call(fn, tensors["in"], tensors["out"], _scalar_args(file, f"{where}.args",
                                                                   raw.get("args")), **text)


def program_from_json(doc: Any, *, file: str = "<program>") -> Program:
    """A :class:`Program` from its JSON document, every field checked."""
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        raise _fail(file, "format", None if not isinstance(doc, Mapping) else doc.get("format"),
                    f"not an accelsim program (expected \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise _fail(file, "version", doc.get("version"),
                    f"this accelsim reads program format version {VERSION}")
    name = doc.get("name", Path(file).stem)
    if not isinstance(name, str) or len(name) > 200:
        raise _fail(file, "name", name, "expected a short string")
    calls = doc.get("calls")
    if not isinstance(calls, list) or not calls:
        raise _fail(file, "calls", calls, "expected a non-empty list of calls")
    if len(calls) > MAX_CALLS:
        raise _fail(file, "calls", f"{len(calls)} calls", f"at most {MAX_CALLS:,} calls")
    framework = doc.get("framework", "")
    if not isinstance(framework, str) or len(framework) > 200:
        raise _fail(file, "framework", framework, "expected a short string")
    return Program(name=name or "program",
                   calls=tuple(_call(file, f"calls[{i}]", c) for i, c in enumerate(calls)),
                   framework=framework, source=file)


def read_program(path: str | os.PathLike) -> Program:
    """Read and check a program file (``accelsim capture`` writes them)."""
    from accelsim.files import resolve_path

    p = resolve_path(str(path).partition(":")[0], "workloads", suffixes=("",))
    file = str(p)
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _fail(file, None, f"{size} bytes", f"larger than {MAX_FILE_BYTES} bytes")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(file, None, None, f"not valid JSON ({str(exc).splitlines()[0]})") from None
    doc = parse_json(text, file=file, error=WorkloadError)  # nesting bounded, NaN refused
    return program_from_json(doc, file=file)


__all__ = ["DTYPE_BYTES", "FORMAT", "MAX_CALLS", "TORCH_DTYPES", "VERSION", "Call", "Program",
           "TensorInfo", "dense_strides", "file_head", "is_program_path", "program_from_json",
           "read_program"]
