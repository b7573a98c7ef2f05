"""Tensor-core GPU cost model: pure functions from (GPU config, operator) to kernels of CTAs
with their compute time and L2/HBM traffic. See ``README.md`` beside this file.

Imports: errors, config, workload.
"""

from accelsim.hw.gpu.ops import OpPlan, plan_op

__all__ = ["OpPlan", "plan_op"]
