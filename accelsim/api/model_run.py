"""Whole models on a GPU or CPU, as frameworks run them: ``run_model(hw, workload)``.

    >>> from accelsim.api.model_run import run_model
    >>> r = run_model("h200", "llama3_8b_decode:batch=8", exec_mode="graph")
    >>> r.totals["tokens_per_s"], r.breakdown, r.calls

The machine's device runs it (:func:`accelsim.devices.device_for` ``(machine).run_model``): a
GPU lowers the model for one execution mode and replays host and stream on one clock
(:mod:`accelsim.devices.gpu_model`: per-call timeline ``calls``, per-op ``layers``, time by
kernel class ``breakdown``, HBM check ``memory``); a CPU runs one kernel per operator; a
systolic machine maps the workload onto its array (:func:`accelsim.api.simulate`, a
``Result``).

Imports: errors, devices, devices.results, api.compare.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelsim.api.compare import load_platform
from accelsim.devices import RunOptions, check_run_flags, device_for
from accelsim.devices.results import ModelRun, run_params
from accelsim.errors import ConfigError

__all__ = ["ModelRun", "run_model"]

REPLAYS = ("analytic", "event")
"""``replay=``: the closed form (default) or the SimPy replay of host and stream."""


def run_model(hw: Any, workload: Any, *, exec_mode: str | None = None, replay: str = "analytic",
              progress: Callable[[int, int, str], None] | None = None) -> Any:
    """Every operator of ``workload`` on machine ``hw`` (name, alias, path or object).

    GPUs run as ``exec_mode`` (``eager`` by default, ``graph``, ``compiled``; see
    :mod:`accelsim.devices.gpu_model`); ``replay="event"`` replays the host and the stream on
    SimPy (same numbers as the default closed form). CPUs run one kernel per operator.
    ``exec_mode`` on a machine without execution modes is a one-line :class:`ConfigError`."""
    if hasattr(hw, "__fspath__"):
        hw = str(hw)
    if not isinstance(hw, str) and not hasattr(hw, "kind"):
        raise ConfigError(None, "hw", type(hw).__name__,
                          "expected a machine name, a YAML path or a machine object")
    machine = load_platform(hw) if isinstance(hw, str) else hw
    if replay not in REPLAYS:
        raise ConfigError(None, "replay", replay, f"must be {' or '.join(REPLAYS)}")
    dev = device_for(machine, source=str(hw) if isinstance(hw, str) else None)
    options = RunOptions(mode="event" if replay == "event" else "auto", exec_mode=exec_mode)
    check_run_flags(dev, options.given())
    result = dev.run_model(workload, options, progress=progress)
    result.params = run_params(workload, options, result)
    return result
