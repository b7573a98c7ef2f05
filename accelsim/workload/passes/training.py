"""Training-memory estimate: weights, gradients, optimizer state and activations, with
optional gradient checkpointing. Sizes are decimal bytes.

Accounting (mixed-precision training as in Micikevicius et al. 2018 and the ZeRO paper,
Rajbhandari et al. 2020, section 3.1):

* weights and gradients in the graph's precision (2 B each in bf16/fp16);
* optimizer state in fp32: Adam keeps two moments (8 B per parameter), SGD with momentum
  one (4 B); with 16-bit weights a fp32 master copy adds 4 B (so Adam in mixed precision is
  2 + 2 + 12 = 16 B per parameter);
* activations: every op's output is kept for the backward pass (graph inputs too).

Gradient checkpointing (Chen et al. 2016, "Training deep nets with sublinear memory cost"):
the ``n`` layers (``Node.layer``) are cut into segments of ``k`` layers; only each segment's
output is kept, and one segment's activations are recomputed at a time in the backward pass,
so activations cost ``(n / k) * boundary + k * layer`` bytes, which is ``O(sqrt(n))`` at
``k = sqrt(n)``. Ops outside the layers (embeddings, head) are always kept.

Imports: precision, workload.graph.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from accelsim.precision import PRECISION_BYTES
from accelsim.workload.graph import ModelGraph

OPTIMIZER_STATE_BYTES = {"adam": 8.0, "adamw": 8.0, "sgd_momentum": 4.0, "sgd": 0.0}
"""fp32 optimizer state per parameter, bytes."""


@dataclass(frozen=True, slots=True)
class TrainingMemory:
    """Bytes of each part of training state; ``segments`` is the checkpoint segment count
    (0 without checkpointing)."""

    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    segments: int = 0

    @property
    def total_bytes(self) -> float:
        """Sum of all parts."""
        return self.weights_bytes + self.grads_bytes + self.optimizer_bytes + self.activations_bytes

    def as_dict(self) -> dict[str, float]:
        """The parts and the total, for a table."""
        return {**asdict(self), "total_bytes": self.total_bytes}


def training_memory(graph: ModelGraph, *, optimizer: str = "adam",
                    checkpoint: str | int | None = None,
                    master_weights: bool | None = None) -> TrainingMemory:
    """Training memory of ``graph`` (its batch and sequence set the activations).

    ``checkpoint``: ``None`` (keep all activations), ``"sqrt"`` (segments of
    ``round(sqrt(n))`` layers) or an int (layers per segment). ``master_weights``: keep a
    fp32 copy of the weights (default: when the graph's precision is narrower than fp32).
    """
    if optimizer not in OPTIMIZER_STATE_BYTES:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZER_STATE_BYTES)}")
    dtype = graph.params.get("dtype", "fp32")
    width = PRECISION_BYTES[dtype]
    params = graph.parameter_count()
    if master_weights is None:
        master_weights = width < 4
    opt = params * (OPTIMIZER_STATE_BYTES[optimizer] + (4.0 if master_weights else 0.0))

    per_layer: dict[int, float] = {}
    boundary: dict[int, float] = {}
    outside = sum(graph.tensors[t].bytes for t, v in graph.tensors.items()
                  if v.kind == "input")
    for node in graph.nodes:
        size = sum(graph.tensors[t].bytes for t in node.outputs
                   if graph.tensors[t].kind != "weight")
        if node.layer is None:
            outside += size
        else:
            per_layer[node.layer] = per_layer.get(node.layer, 0.0) + size
            boundary[node.layer] = size  # the layer's last output
    layers = sorted(per_layer)
    segments = 0
    if checkpoint is None or not layers:
        acts = outside + sum(per_layer.values())
    else:
        if checkpoint == "sqrt":
            k = max(1, round(math.sqrt(len(layers))))
        elif isinstance(checkpoint, int) and checkpoint > 0:
            k = checkpoint
        else:
            raise ValueError("checkpoint must be None, 'sqrt' or a positive number of layers")
        chunks = [layers[i:i + k] for i in range(0, len(layers), k)]
        segments = len(chunks)
        kept = sum(boundary[c[-1]] for c in chunks)
        recompute = max(sum(per_layer[x] for x in c) for c in chunks)
        acts = outside + kept + recompute
    return TrainingMemory(weights_bytes=params * width, grads_bytes=params * width,
                          optimizer_bytes=opt, activations_bytes=acts, segments=segments)
