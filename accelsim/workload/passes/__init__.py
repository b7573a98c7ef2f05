"""Graph passes over a :class:`~accelsim.workload.graph.ModelGraph`: operator fusion
(:mod:`.fusion`), memory planning (:mod:`.memory`) and a training-memory estimate
(:mod:`.training`).

Imports: precision, workload.graph, workload.nn_ops, workload.ops.
"""

from accelsim.workload.passes.fusion import FusedGemm, FusedOp, FusionResult, fuse

__all__ = ["FusedGemm", "FusedOp", "FusionResult", "fuse"]
