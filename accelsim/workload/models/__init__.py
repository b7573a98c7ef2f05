"""The model zoo: generators of whole-model graphs (ResNet-50, MobileNetV2, BERT-base, GPT-2
small/XL, Llama 3 8B/70B prefill and decode, DLRM), parameterised by batch, sequence length
and precision. Use :func:`accelsim.workload.models.zoo.get`.

Imports: errors, workload.ops, workload.nn_ops, workload.graph.
"""

from accelsim.workload.models import zoo

__all__ = ["zoo"]
