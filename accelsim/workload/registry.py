"""Operator kinds -> operator classes: the one registry of workload operators.

Each operator class (:mod:`accelsim.workload.ops`: GEMM, convolution;
:mod:`accelsim.workload.nn_ops`: elementwise, layer norm, softmax, attention, embedding,
batch norm, pooling)
states its ``kind``, its fields (the shape and ``dtype``), its MACs/FLOPs (1 MAC = 2 FLOP)
and its tensor sizes in elements; bytes per element come from
:data:`accelsim.precision.PRECISION_BYTES`. Readers (YAML, ONNX, SCALE-Sim CSV), the model
zoo and the CLI look operators up here; the operator modules import nothing of theirs back.
A new operator is a class in one of those modules and one entry in :data:`OP_CLASSES`.

Imports: workload.ops, workload.nn_ops.
"""

from __future__ import annotations

import dataclasses

from accelsim.workload.nn_ops import (
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
