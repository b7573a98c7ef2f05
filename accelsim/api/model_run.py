"""Whole models on a GPU or CPU: every operator through the device's own model, in sequence.

Systolic machines run whole workloads through :func:`accelsim.api.simulate` (fold streams
on the SimPy engine). A GPU or CPU runs a model as a sequence of kernels, one per operator,
each costed by its family's model (:func:`accelsim.api.compare.run_kernel`: the GPU
tile/wave model with its SimPy replay, or the CPU roofline-with-caches model), priced with
the machine's energy table. Fused operators from the graph passes and embedding lookups are
translated to the kernels a library would launch for them.

Imports: api.compare, api.gpu, workload.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from accelsim.api.compare import load_platform, run_kernel
from accelsim.api.systolic import load_wl, machine_hash
from accelsim.config.schema import to_dict
from accelsim.errors import ConfigError
from accelsim.workload.nn_ops import Attention, Elementwise, Embedding, Softmax
from accelsim.workload.ops import Conv2d, Gemm, Workload

COLUMNS = ["layer", "op", "precision", "time_s", "flops", "tflops", "util", "dram_bytes",
           "bw_util", "energy_j", "bound"]


def device_op(op: object) -> object:
    """The kernel a GPU/CPU library launches for ``op`` (fused ops and gathers translated)."""
    from accelsim.workload.passes.fusion import FusedGemm, FusedOp

    if isinstance(op, Embedding):
        return Elementwise(name=op.name, rows=op.tokens, cols=op.dim, fn="copy", dtype=op.dtype)
    if isinstance(op, FusedGemm):
        if isinstance(op.main, Conv2d):
            return op.main
        s = op.lower()
        return Gemm(name=op.name, m=s.m, n=s.n, k=s.k, batch=s.repeat, shared_weights=False,
                    dtype=op.dtype)
    if isinstance(op, FusedOp):
        if not isinstance(op.main, Elementwise):
            return dataclasses.replace(device_op(op.main), name=op.name)
        te = op.tensor_elements()
        return Elementwise(name=op.name, rows=1, cols=max(te.values()), fn="copy", dtype=op.dtype)
    return op


def tokens_per_step(workload: Workload) -> int | None:
    """Tokens a Transformer step consumes: the rows of its token embedding (batch x sequence
    length in prefill, batch in decode), else batch x query length of its first attention.
    ``None`` for models without attention (CNNs, DLRM)."""
    if not any(isinstance(op, (Attention, Softmax)) for op in workload.ops):
        return None
    for op in workload.ops:
        if isinstance(op, Embedding):
            return op.tokens
    for op in workload.ops:
        if isinstance(op, Attention):
            return op.batch * op.seq_q
    return None


@dataclass
class ModelRun:
    """Per-operator table and totals of a model on a GPU or CPU."""

    machine: Any
    workload: Workload
    layers: pd.DataFrame

    @property
    def totals(self) -> dict[str, Any]:
        """Whole-model figures; Transformers also get tokens/s (and, for decode, s/token)."""
        t = float(self.layers["time_s"].sum())
        flops = float(self.layers["flops"].sum())
        out: dict[str, Any] = {
            "layers": int(len(self.layers)), "time_s": t, "flops": flops,
            "tflops_per_s": flops / t / 1e12 if t else 0.0,
            "dram_bytes": float(self.layers["dram_bytes"].sum()),
            "energy_j": float(self.layers["energy_j"].sum()),
            "average_power_w": float(self.layers["energy_j"].sum()) / t if t else 0.0,
        }
        tokens = tokens_per_step(self.workload)
        if tokens:
            out["tokens_per_step"] = tokens
            out["tokens_per_s"] = tokens / t if t else 0.0
            if "decode" in self.workload.name:
                out["time_per_output_token_s"] = t
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``accelsim run --json`` for a GPU/CPU."""
        return {"machine": self.machine.name, "machine_hash": machine_hash(self.machine),
                "workload": self.workload.name, "totals": self.totals,
                "layers": json.loads(self.layers.to_json(orient="records")),
                "resolved_machine": to_dict(self.machine)}


def run_model(hw: Any, workload: Any, *,
              progress: Callable[[int, int, str], None] | None = None) -> ModelRun:
    """Every operator of ``workload`` on GPU/CPU ``hw``, one kernel after another."""
    machine = load_platform(hw) if isinstance(hw, str) else hw
    if getattr(machine, "kind", "") not in ("gpu", "cpu"):
        raise ConfigError(None, "hw", getattr(machine, "name", hw),
                          "run_model runs GPUs and CPUs (systolic machines: accelsim.api.simulate)")
    wl = load_wl(workload)
    rows = []
    for i, op in enumerate(wl.ops):
        row = run_kernel(machine, device_op(op))
        row["layer"] = getattr(op, "name", f"op{i}")
        row["op"] = getattr(op, "kind", type(op).__name__)
        rows.append({c: row.get(c) for c in COLUMNS})
        if progress is not None:
            progress(i + 1, len(wl.ops), row["layer"])
    return ModelRun(machine, wl, pd.DataFrame(rows, columns=COLUMNS))
