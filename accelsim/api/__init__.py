"""The Python API: load a machine and a workload, map, replay, tabulate.

    >>> from accelsim.api import simulate
    >>> r = simulate("tpu_v4", "resnet50")
    >>> r.layers[["layer", "total_cycles", "overall_util"]]

Imports: everything below api (config, workload, mapping, engine, report).
"""

from __future__ import annotations

from accelsim.api.systolic import Result, load_hw, load_wl, simulate


def capture(fn, *example_args, **example_kwargs):  # noqa: ANN001, ANN201 (lazy: torch is an extra)
    """Capture a PyTorch program as a workload (:func:`accelsim.api.capture.capture`)."""
    from accelsim.api.capture import capture as _capture

    return _capture(fn, *example_args, **example_kwargs)

__all__ = ["Result", "capture", "load_hw", "load_wl", "simulate"]
