"""Sweep parameters that are not paths into the hardware YAML: every ``accelsim run`` option,
the workload, and the workload's own parameters.

A sweep point is exactly ``accelsim run HW WORKLOAD [options]`` with its parameters, so a
spec's ``parameters`` may name, as an axis (a list or a discrete range) or a fixed value (one
value), besides dotted hardware paths (what ``accelsim run --set`` takes):

* ``workload``: the workload (names, paths or zoo specs, as ``accelsim run`` takes them);
* every optional run option, a field of :class:`~accelsim.devices.base.RunOptions`, spelled as
  the field (``exec_mode``, ``loop_order``) or as its ``accelsim run`` flag without the dashes
  (``exec``, ``loop-order``; :data:`accelsim.devices.CLI_FLAGS`): ``exec``, ``dataflow``,
  ``loop_order``, ``sparsity`` and any field added to ``RunOptions`` later, with no edit here;
* ``workload.<name>``: a parameter of a model-zoo spec, a Hugging Face config or an ONNX file's
  dimensions (``workload.batch``, ``workload.context``, ``workload.dtype``); ``dtype`` and
  ``precision`` are ``workload.dtype``. The point runs ``NAME:name=value,...`` (the spec's own
  parameters, those of the point replacing them).

``mode`` is the spec's top-level key; ``accelsim run``'s outputs (``trace``, ``report``,
``out``, ``json``, ``top``) are not parameters of a point. An option the base machine's kind
does not take is refused when the spec is read, in the one line ``accelsim run`` gives,
naming the spec field (``parameters.exec = 'graph': applies to GPUs, not systolic
machines``).

Imports: errors, devices (the run options and the kinds that take them), devices.base,
workload.models.zoo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelsim.devices import CLI_FLAGS, RunOptions
from accelsim.devices.base import optional_run_options
from accelsim.errors import ConfigError

WORKLOAD = "workload"
"""The workload axis."""

WORKLOAD_PREFIX = "workload."
"""``workload.<name>``: a parameter of the point's workload spec."""

WORKLOAD_ALIASES = {"dtype": "dtype", "precision": "dtype"}
"""Other spellings of workload parameters: ``dtype`` and ``precision`` are ``workload.dtype``."""

NOT_PARAMETERS = {
    "mode": "the engine is the spec's top-level 'mode' (analytic | event)",
    "replay": "the engine is the spec's top-level 'mode' (analytic | event)",
    "set": "hardware overrides are parameters named by their dotted path "
           "(compute.array.rows: [64, 128])",
    **{name: f"an output of accelsim run (--{name}), not a parameter of a design point"
       for name in ("trace", "report", "out", "json", "top")},
}
"""Names that look like run options but are not parameters of a point, and why."""


def run_option_names() -> dict[str, str]:
    """Spelling -> :class:`~accelsim.devices.base.RunOptions` field, for every optional field:
    the field itself, its ``accelsim run`` flag without the dashes, each with ``_`` or ``-``."""
    out: dict[str, str] = {}
    for f in optional_run_options():
        flag = CLI_FLAGS.get(f, f"--{f}").lstrip("-")
        for name in (f, flag):
            out[name] = f
            out[name.replace("-", "_")] = f
            out[name.replace("_", "-")] = f
    return out


def role(name: str) -> tuple[str, str]:
    """``(role, target)`` of a parameter name: ``("workload", "")``, ``("run", field)``,
    ``("wparam", workload parameter)`` or ``("hw", dotted path)``."""
    if name == WORKLOAD:
        return "workload", ""
    runs = run_option_names()
    if name in runs:
        return "run", runs[name]
    if name.startswith(WORKLOAD_PREFIX) and len(name) > len(WORKLOAD_PREFIX):
        return "wparam", name[len(WORKLOAD_PREFIX):]
    if name in WORKLOAD_ALIASES:
        return "wparam", WORKLOAD_ALIASES[name]
    return "hw", name


def is_hardware(name: str) -> bool:
    """Whether parameter ``name`` is a dotted path into the hardware YAML."""
    return role(name)[0] == "hw"


def check_name(name: str, file: str | None) -> None:
    """Refuse a name that is not a parameter of a point (:data:`NOT_PARAMETERS`)."""
    if name in NOT_PARAMETERS:
        raise ConfigError(file, f"parameters.{name}", None, NOT_PARAMETERS[name])


def same_parameter(names: list[str]) -> tuple[str, str] | None:
    """The first two names of ``names`` that mean one parameter (``exec`` and ``exec_mode``,
    ``dtype`` and ``workload.dtype``), or None."""
    seen: dict[tuple[str, str], str] = {}
    for name in names:
        key = role(name)
        if key in seen:
            return seen[key], name
        seen[key] = name
    return None


def run_options(point: Mapping[str, Any], *, mode: str, energy: bool) -> RunOptions:
    """The :class:`RunOptions` a point runs with: the sweep's engine ``mode``, ``energy``, and
    the point's run-option parameters."""
    given = {}
    for name, value in point.items():
        kind, target = role(name)
        if kind == "run":
            given[target] = value
    return RunOptions(mode=mode, energy=energy, **given)


def run_flag_names(point: Mapping[str, Any]) -> dict[str, str]:
    """RunOptions field -> the spec field that set it (``parameters.exec``), for errors."""
    return {role(n)[1]: f"parameters.{n}" for n in point if role(n)[0] == "run"}


def workload_params(point: Mapping[str, Any]) -> dict[str, Any]:
    """The point's workload parameters (``workload.batch: 8`` -> ``{"batch": 8}``)."""
    return {role(n)[1]: v for n, v in point.items() if role(n)[0] == "wparam"}


def takes_parameters(ref: str) -> bool:
    """Whether workload ``ref`` takes ``:name=value`` parameters (a zoo model, a Hugging Face
    config, an ONNX file)."""
    from accelsim.workload.models import zoo

    return zoo.is_zoo_spec(ref) or ".onnx" in ref


def with_params(ref: str, params: Mapping[str, Any]) -> str:
    """``ref`` (``NAME`` or ``NAME:a=1,b=2``) with ``params`` set (replacing its own):
    ``with_params("llama3_8b_decode:batch=8", {"context": 4096})`` ->
    ``"llama3_8b_decode:batch=8,context=4096"``; ``ref`` itself when ``params`` is empty."""
    if not params:
        return ref
    name, _, rest = ref.partition(":")
    merged: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, _, value = item.partition("=")
        merged[key.strip()] = value.strip()
    merged.update({k: str(v) for k, v in params.items()})
    return f"{name}:" + ",".join(f"{k}={v}" for k, v in merged.items())
