"""``simulate()``: load -> map -> replay -> tabulate, on any single device (through
:func:`accelsim.devices.device_for`); :func:`load_hw`, the machine it runs on.

Imports: errors, limits, config.registry, devices, devices.results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from accelsim.config.registry import load_machine
from accelsim.devices import RunOptions, check_run_flags, device_for
from accelsim.devices.results import Result, RunResult, run_params
from accelsim.errors import ConfigError

__all__ = ["Result", "RunResult", "load_hw", "simulate"]


def load_hw(hw: Any, overrides: Mapping[str, Any] | None = None) -> Any:
    """A machine config object from a built-in name, a path, or an object (returned as is)."""
    if overrides is not None and not isinstance(overrides, Mapping):
        raise ConfigError(None, "overrides", type(overrides).__name__,
                          "expected a mapping of dotted paths to values")
    if isinstance(hw, str) or hasattr(hw, "__fspath__"):
        return load_machine(hw, overrides)
    if not hasattr(hw, "kind"):
        raise ConfigError(None, "hw", type(hw).__name__,
                          "expected a machine name, a YAML path or a machine object")
    if overrides:
        raise ConfigError(None, "overrides", dict(overrides),
                          "overrides need a machine name or path, not an object")
    return hw


def simulate(hw: Any, workload: Any, *, dataflow: str | None = None, mode: str = "auto",
             overrides: Mapping[str, Any] | None = None, loop_order: str | None = None,
             energy: bool = True, sparsity: Mapping[str, float] | float | None = None,
             exec_mode: str | None = None,
             progress: Callable[[int, int, str], None] | None = None) -> Any:
    """Simulate ``workload`` on machine ``hw`` through its device
    (:func:`accelsim.devices.device_for` ``(machine).run_model``).

    Every kind answers one protocol (:class:`~accelsim.devices.results.RunResult`):
    ``.layers``, ``.totals``, ``.energy`` (``total_pj``, ``pj_per_mac``, ``average_power_w``,
    ``breakdown()``), ``.machine``, ``.workload``, ``.params`` (what ran) and a short repr. A
    systolic machine gives a :class:`Result` (also per-layer action records, ``.actions``); a
    GPU or CPU a :class:`~accelsim.devices.results.ModelRun` (as
    :func:`accelsim.api.model_run.run_model`; on a GPU also ``.calls`` and ``.breakdown``). An
    option the machine's kind does not take (``dataflow`` on a GPU, ``exec_mode`` on a systolic
    array) is a one-line :class:`ConfigError`; a system or node (several devices) too
    (:mod:`accelsim.api.links`).

    ``mode``: ``"auto"`` (default: the exact recurrence wherever it is proven equal to the
    event replay, which on systolic machines is every run; see
    :mod:`accelsim.engine.systolic_run`), ``"event"`` (the SimPy replay) or ``"analytic"``.
    ``Result.mode`` names the engine that ran.

    ``dataflow``: a registered dataflow name (os, ws, is; rs on machines with per-PE
    scratchpads; nlr), default the machine's.
    ``overrides``: dotted paths into the hardware YAML, e.g. ``{"compute.array.rows": 64}``.
    ``energy``: price the actions with the machine's energy table (when energy support exists).
    ``sparsity``: zero fraction of each layer's input activations (one number or ``{layer:
    fraction}``), used by row-stationary zero gating and run-length coding; default dense.
    ``exec_mode`` (GPUs): how the framework runs the model (``eager``, ``graph``, ``compiled``).
    ``progress``: called as ``progress(done, total, layer_name)`` after each layer.
    """
    machine = load_hw(hw, overrides)
    dev = device_for(machine)
    sparsity = _checked_sparsity(sparsity)
    options = RunOptions(mode=mode, exec_mode=exec_mode, dataflow=dataflow,
                         loop_order=loop_order, sparsity=sparsity, energy=energy)
    check_run_flags(dev, options.given())
    result = dev.run_model(workload, options, progress=progress)
    result.params = run_params(workload, options, result)
    return result


def _checked_sparsity(sparsity: Any) -> Any:
    """``sparsity`` as given when it is None, a fraction or a mapping of layer -> fraction
    (each a real number in [0, 1]); else a one-line :class:`ConfigError`."""
    from accelsim.limits import check_number

    if sparsity is None:
        return None
    values = sparsity.items() if isinstance(sparsity, Mapping) else [("sparsity", sparsity)]
    for key, v in values:
        field = "sparsity" if key == "sparsity" else f"sparsity.{key}"
        if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
            raise ConfigError(None, field, type(v).__name__, "expected a fraction in [0, 1]")
        try:
            x = check_number(float(v), file=None, field=field)
        except (TypeError, ValueError):
            raise ConfigError(None, field, type(v).__name__,
                              "expected a fraction in [0, 1]") from None
        if not 0.0 <= x <= 1.0:
            raise ConfigError(None, field, v, "expected a fraction in [0, 1]")
    return sparsity

