"""The model zoo: generators of whole-model graphs (ResNet-50, MobileNetV2, BERT-base, GPT-2
small/XL, Llama 3 8B/70B prefill and decode, DLRM), parameterised by batch, sequence length
and precision. Use :func:`accelsim.workload.models.zoo.get`.

Imports: errors, limits, safe_yaml, files, precision, workload.graph, workload.kineto,
workload.nn_ops, workload.ops, workload.program.
"""

from accelsim.workload.models import zoo

__all__ = ["zoo"]
