"""Operator kinds -> operator classes: the one registry of workload operators.

Each operator class (:mod:`accelsim.workload.ops`: GEMM, convolution;
:mod:`accelsim.workload.nn_ops`: elementwise, layer norm, softmax, attention, embedding,
batch norm, pooling)
states its ``kind``, its fields (the shape and ``dtype``), its MACs/FLOPs (1 MAC = 2 FLOP)
and its tensor sizes in elements; bytes per element come from
:data:`accelsim.precision.PRECISION_BYTES`. Readers (YAML, ONNX, SCALE-Sim CSV), the model
zoo and the CLI look operators up here; the operator modules import nothing of theirs back.
A new operator is a class in one of those modules and one entry in :data:`OP_CLASSES`.

The command line (``accelsim op HW OPNAME --FIELD VALUE ...``) derives its options from the
fields (:func:`cli_fields`): each field but ``name`` and ``dtype`` is ``--<field>`` (``_`` as
``-``); :data:`CLI_SPELLINGS` gives a field other spellings, :data:`CLI_DEFAULTS` a default of
its own on the command line, :data:`DEFAULT_FROM` another field's value when not given, and
:data:`OP_PRESETS` op names that stand for an operator with fields preset (``relu``).

Imports: workload.ops, workload.nn_ops.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from accelsim.workload.nn_ops import (
    ELEMENTWISE_FLOPS,
    Attention,
    BatchNorm2d,
    Elementwise,
    Embedding,
    LayerNorm,
    Pool2d,
    Softmax,
)
from accelsim.workload.ops import Conv2d, Gemm

OP_CLASSES: tuple[type, ...] = (Gemm, Conv2d, Elementwise, LayerNorm, Softmax, Attention,
                                Embedding, BatchNorm2d, Pool2d)
"""Every operator class, in the order help texts list them."""

OP_TYPES: dict[str, type] = {cls.kind: cls for cls in OP_CLASSES}
"""``op:`` name in a workload file -> operator class."""


def op_fields(kind: str) -> dict[str, dataclasses.Field]:
    """The fields of operator ``kind`` by name (what a workload file or CLI may set)."""
    return {f.name: f for f in dataclasses.fields(OP_TYPES[kind])}


def required_fields(kind: str) -> list[str]:
    """Fields of operator ``kind`` without a default (``name`` included)."""
    return [f.name for f in op_fields(kind).values()
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]


CLI_SPELLINGS: dict[str, dict[str, tuple[str, ...]]] = {
    "attention": {"seq_q": ("seq", "seq-q")},
    "pool": {"mode": ("pool-mode",)},  # --mode is the engine's (event, analytic)
}
"""Operator kind -> field -> its command-line spellings (without ``--``; the first is the one
error messages name), where it is not the field's name with ``_`` as ``-``."""

CLI_DEFAULTS: dict[str, dict[str, Any]] = {"gemm": {"shared_weights": False}}
"""Operator kind -> field -> its default on the command line, where it differs from the
class's: a batched GEMM given on the command line is independent GEMMs (``torch.bmm``)
unless ``--shared-weights`` says one weight matrix serves the batch (a linear layer)."""

DEFAULT_FROM: dict[str, dict[str, str]] = {"attention": {"seq_kv": "seq_q"}}
"""Operator kind -> field -> the field whose value it takes when not given (self-attention:
key/value length = query length)."""

MAY_BE_ZERO = frozenset({"pad"})
"""Integer fields that may be 0 (padding); every other integer field is a size or a count,
> 0."""

OP_PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    fn: ("elementwise", {"fn": fn}) for fn in ELEMENTWISE_FLOPS}
"""Op names that stand for an operator kind with fields preset: every elementwise function
(``accelsim op h200 relu --rows R --cols C``)."""


@dataclass(frozen=True, slots=True)
class CliField:
    """One operator field as a command-line option.

    ``flags``: its spellings, ``--`` included (the first is the one errors name); ``type``:
    ``int``, ``bool`` or ``str``; ``required``: no default; ``default``: the value when not
    given (None: the class's, or ``default_from``'s value); ``min_value``: the least integer
    allowed (0 for the fields of :data:`MAY_BE_ZERO`, else 1).
    """

    name: str
    flags: tuple[str, ...]
    type: str
    required: bool
    default: Any
    default_from: str | None
    min_value: int


def _base_type(annotation: Any) -> str:
    text = str(annotation).replace(" ", "")
    for t in ("bool", "int", "float"):
        if text in (t, f"{t}|None", f"None|{t}"):
            return t
    return "str"


def resolve_op_name(name: str) -> tuple[str, dict[str, Any]]:
    """``(kind, preset fields)`` of a command-line op name (a kind or an :data:`OP_PRESETS`
    name); KeyError if it is neither."""
    if name in OP_TYPES:
        return name, {}
    return OP_PRESETS[name]


def cli_op_names() -> list[str]:
    """Every op name the command line accepts: the kinds, then the presets."""
    return [*OP_TYPES, *(n for n in OP_PRESETS if n not in OP_TYPES)]


def cli_fields(kind: str) -> list[CliField]:
    """The command-line options of operator ``kind``, in field order (``name``, ``dtype``
    and preset fields are the caller's)."""
    spell = CLI_SPELLINGS.get(kind, {})
    cli_default = CLI_DEFAULTS.get(kind, {})
    derived = DEFAULT_FROM.get(kind, {})
    out = []
    for f in op_fields(kind).values():
        if f.name in ("name", "dtype"):
            continue
        has_default = f.default is not dataclasses.MISSING \
            or f.default_factory is not dataclasses.MISSING
        default = cli_default.get(f.name, f.default if f.default is not dataclasses.MISSING
                                  else None)
        out.append(CliField(
            name=f.name,
            flags=tuple(f"--{s}" for s in spell.get(f.name, (f.name.replace("_", "-"),))),
            type=_base_type(f.type),
            required=not has_default and f.name not in derived and f.name not in cli_default,
            default=default, default_from=derived.get(f.name),
            min_value=0 if f.name in MAY_BE_ZERO else 1))
    return out
