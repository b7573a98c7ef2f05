"""The Python API: load a machine and a workload, map, replay, tabulate.

    >>> from accelsim.api import simulate
    >>> r = simulate("tpu_v4", "resnet50")
    >>> r.layers[["layer", "total_cycles", "overall_util"]]

Imports: everything below api (config, workload, mapping, engine, report).
"""

from __future__ import annotations

from accelsim.api.systolic import Result, load_hw, load_wl, simulate

__all__ = ["Result", "load_hw", "load_wl", "simulate"]
