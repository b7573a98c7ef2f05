"""One operator on one GPU: ``simulate_op(hw, op) -> dict``.

    >>> from accelsim.api.gpu import simulate_op
    >>> from accelsim.workload.ops import Gemm
    >>> r = simulate_op("h200", Gemm(name="g", m=4096, n=4096, k=4096, dtype="bf16"))
    >>> r["time_s"], r["flop_per_s"], r["bound"], r["tile"], r["waves"]

The document holds ``time_s`` (GPU-side time per call of the op repeated back to back, launch
gaps included: what a CUDA graph of calls or a busy stream sees; a whole model's stream adds
``host.kernel_tail_s`` per kernel but a convolution's, ARCHITECTURE.md "GPU per-kernel
costs"), ``eager_time_s``
(the same op issued alone by a framework: at least ``host.host_launch_s``), ``cycles`` (at
the SM clock under
load for the precision), ``flops``, ``bytes`` (compulsory: inputs read once, outputs written
once), ``hbm_bytes`` and ``l2_bytes`` (modelled traffic), ``flop_per_s`` (achieved FLOP/s)
and ``peak_flop_per_s`` (the dense peak at the precision it ran), ``bound`` (the resource
that limits the longest kernel: tensor_core, tensor_core_unaligned, simt, sfu, smem, l2, hbm
or launch) and explanations (path, tile, split_k, ctas, waves, l2_hit, per-kernel times).
``tflops`` and ``peak_tflops`` (the same in TFLOP/s) are kept for one release as aliases.

``sparsity="2:4"`` (GEMMs on Ampere/Hopper, :mod:`accelsim.hw.gpu.sparsity`): the weights are
2:4 structured-sparse. ``flops``, ``flop_per_s`` and ``peak_flop_per_s`` are then dense-equivalent
(as NVIDIA's sparse datasheet figures are), ``bytes`` counts the compressed weights, and
``macs_executed`` is half of ``macs``; a GPU without sparse tensor cores (V100) raises
:class:`UnsupportedError`.

Imports: config, devices.gpu, errors.
"""

from __future__ import annotations

import os

from accelsim.config.gpu import GpuMachine
from accelsim.config.registry import load_machine
from accelsim.devices.gpu import MODES, op_document
from accelsim.errors import UnsupportedError

__all__ = ["MODES", "load_gpu", "simulate_op"]


def load_gpu(hw: str | os.PathLike | GpuMachine) -> GpuMachine:
    """A GPU machine from a built-in name, a YAML path or an object; else a one-line error."""
    m = hw if isinstance(hw, GpuMachine) else load_machine(hw)
    if not isinstance(m, GpuMachine):
        kind = getattr(m, "kind", type(m).__name__)
        raise UnsupportedError(f"{getattr(m, 'name', hw)} is a '{kind}' machine, not a GPU "
                               "(kind: gpu)")
    return m


def simulate_op(hw: str | os.PathLike | GpuMachine, op: object, *, mode: str = "event",
                precision: str | None = None, sparsity: str | None = None) -> dict:
    """Time one operator on a GPU; see the module docstring for the fields. Seconds, bytes."""
    return op_document(load_gpu(hw), op, mode=mode, precision=precision, sparsity=sparsity)
