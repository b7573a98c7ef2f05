"""The Python API: load a machine and a workload, map, replay, tabulate.

    >>> from accelsim.api import simulate, simulate_op
    >>> r = simulate("tpu_v4", "resnet50")          # or "h200", "spr_cpu": the same protocol
    >>> r.totals["time_s"], r.energy.total_pj, r.energy.breakdown(), r.params
    >>> simulate_op("h200", "gemm", m=4096, n=4096, k=4096)["time_s"]
    >>> serve("h200", "llama3_8b", isl=1024, osl=128, requests=500).summary["ttft_s"]["p50"]
    >>> transfer("hgx_h200_x8", "host", "gpu0", "1GiB")["time_s"]  # sizes as the CLI takes them

Imports: accelsim (version), units, errors, limits, files, precision, analysis, config, devices,
engine, hw, mapping, report, serve, workload.
"""

from __future__ import annotations

from accelsim.api.gpu import make_op, simulate_op
from accelsim.api.links import collective, transfer
from accelsim.api.simulate import Result, RunResult, load_hw, simulate
from accelsim.workload.readers import load_wl


def capture(fn, *example_args, **example_kwargs):  # noqa: ANN001, ANN201 (lazy: torch is an extra)
    """Capture a PyTorch program as a workload (:func:`accelsim.api.capture.capture`)."""
    from accelsim.api.capture import capture as _capture

    return _capture(fn, *example_args, **example_kwargs)


def serve(machine, model, **options):  # noqa: ANN001, ANN201 (lazy: the serving engine)
    """Serve an LLM on simulated GPUs (:func:`accelsim.api.serving.serve`)."""
    from accelsim.api.serving import serve as _serve

    return _serve(machine, model, **options)


__all__ = ["Result", "RunResult", "capture", "collective", "load_hw", "load_wl", "make_op",
           "serve", "simulate", "simulate_op", "transfer"]
