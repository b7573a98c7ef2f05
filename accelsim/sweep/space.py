"""Sweep specs: a base machine and workload, parameters to vary, sampling, constraints, metrics.

A spec is YAML::

    name: resnet50_array_sram
    hardware: tpu_v4                 # built-in name or path
    workload: resnet50_convs         # built-in name or path
    mode: analytic                   # analytic (fast path) | event (SimPy replay)
    sampling: {method: grid}         # grid | random | lhs; random/lhs take samples and seed
    parameters:                      # dotted path into the hardware YAML -> values
      compute.array.rows: [32, 64, 128, 256]
      compute.array.cols: [32, 64, 128, 256]
      memory.sram.capacity_bytes: {start: 1 MiB, stop: 64 MiB, factor: 2}
      dataflow: [os, ws]             # special: the dataflow passed to simulate()
    constraints: [rows == cols]      # names: dotted paths or unique last segments
    metrics: [total_cycles, time_s, area_mm2]

Parameter values are a list, a single value, or a mapping: ``{values: [...]}``,
``{start, stop, step}`` (arithmetic, stop included), ``{start, stop, factor}`` (geometric),
``{low, high}`` with optional ``num`` (grid: ``num`` evenly spaced values), ``log: true``
(log-spaced / log-uniform) and ``integer: true``. Strings with units ("4 MiB") are parsed by
the field's unit suffix. Besides hardware paths, a parameter may be any ``accelsim run``
option (``exec``, ``dataflow``, ``loop_order``, ``sparsity``, and every other field of
:class:`~accelsim.devices.base.RunOptions`), ``workload`` (a list of workload names) or a
parameter of the workload's spec (``workload.batch``, ``workload.context``, ``dtype``):
:mod:`accelsim.sweep.options`. A point is exactly ``accelsim run`` with those parameters.

Everything is checked when the spec is read, before any point runs. First the grid's size, from
the spec alone (the product of the axis lengths as written, before any value is built:
:func:`_check_size`); then every hardware path and
value is validated by building the machine with that override, ranges must be non-empty, and
the constraints must leave at least one point; a key written twice in one mapping, or two
spellings of one parameter (``exec`` and ``exec_mode``), is refused; a run option the base
machine's kind does not take is the one line ``accelsim run`` gives. Errors are one line
naming file, field, value.

Imports: units, errors, limits, safe_yaml, files, config.registry, devices, devices.base,
workload.readers, sweep.expr, sweep.lock, sweep.options, sweep.points.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

import numpy as np
import yaml

from accelsim.config.registry import apply_overrides, load_machine_dict, machine_from_dict
from accelsim.errors import ConfigError
from accelsim.files import locate, read_yaml
from accelsim.limits import (
    MAX_RANGE_VALUES,
    MAX_SWEEP_POINTS,
    check_count,
    check_number,
)
from accelsim.safe_yaml import read_text
from accelsim.sweep.expr import Constraint, parse_constraint
from accelsim.sweep.lock import check_regular
from accelsim.sweep.options import (
    check_name,
    role,
    same_parameter,
    takes_parameters,
    with_params,
)
from accelsim.units import UnitError, parser_for_field
from accelsim.workload.readers import load_workload

SPECIAL = ("dataflow", "workload")
"""Parameter names that are not paths into the hardware description (kept for callers; every
run option and workload parameter is one too: :func:`accelsim.sweep.options.role`)."""

METHODS = ("grid", "random", "lhs")
MODES = ("analytic", "event")

_SPEC_KEYS = ("name", "description", "hardware", "workload", "mode", "sampling", "parameters",
              "constraints", "metrics")


@dataclass(frozen=True, slots=True)
class Parameter:
    """One swept parameter: discrete canonical ``values``, or a continuous ``[low, high]``."""

    path: str
    values: tuple | None = None
    low: float | None = None
    high: float | None = None
    log: bool = False
    integer: bool = False

    @property
    def alias(self) -> str:
        """The last segment of the path (``rows`` for ``compute.array.rows``)."""
        return self.path.rsplit(".", 1)[-1]

    def from_unit(self, u: float) -> Any:
        """The value at quantile ``u`` in [0, 1) of this parameter's range (for sampling)."""
        if self.values is not None:
            return self.values[min(int(u * len(self.values)), len(self.values) - 1)]
        lo, hi = float(self.low), float(self.high)  # type: ignore[arg-type]
        if self.log:
            v = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
        else:
            v = lo + u * (hi - lo)
        return int(min(max(round(v), lo), hi)) if self.integer else v


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """A validated sweep: everything needed to enumerate points and evaluate them."""

    name: str
    file: str | None
    hardware: str
    hw_file: str
    base_hw: Mapping[str, Any]
    workloads: Mapping[str, Any]
    """Workload name (as written in the spec) -> :class:`~accelsim.workload.ops.Workload`."""
    default_workload: str
    mode: str
    method: str
    samples: int | None
    seed: int
    parameters: tuple[Parameter, ...]
    constraints: tuple[Constraint, ...]
    metrics: tuple[str, ...] | None
    workload_refs: Mapping[str, str] = dc_field(default_factory=dict)
    """Workload name -> what ``accelsim run`` is given for it (a path resolved beside the spec,
    a zoo spec with the point's parameters)."""

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter paths in spec order (the parameter columns of the results)."""
        return tuple(p.path for p in self.parameters)

    def satisfies(self, point: Mapping[str, Any]) -> bool:
        """Whether ``point`` passes every constraint."""
        return all(c.holds(point) for c in self.constraints)

    def points(self) -> list[dict[str, Any]]:
        """The design points, in a deterministic order (grid order, or sampling order)."""
        from accelsim.sweep.points import grid_points, sampled_points

        pts = grid_points(self) if self.method == "grid" else sampled_points(self)
        if not pts:
            raise ConfigError(self.file, "constraints",
                              " and ".join(c.text for c in self.constraints),
                              "the constraints exclude every point")
        return pts


def load_spec(path: str | os.PathLike) -> SweepSpec:
    """Read and validate a sweep spec YAML file (a FIFO, device or socket is refused unread)."""
    found = locate(path)
    check_regular(found, file=str(path), field="spec", what="a sweep spec")
    data = read_yaml(found)  # budgets checked: the text is safe to compose again
    check_duplicate_keys(read_text(found, what="YAML file"), str(path))
    return spec_from_dict(data, file=str(path))


def check_duplicate_keys(text: str, file: str | None) -> None:
    """Refuse a YAML mapping that writes one key twice (YAML keeps the last silently): one line
    naming the key's dotted path and both lines."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return  # read_yaml has already reported syntax errors
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, yaml.SequenceNode):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node.value))
        if not isinstance(node, yaml.MappingNode):
            continue
        seen: dict[str, int] = {}
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else repr(key.value)
            path = f"{where}.{name}" if where else name
            line = key.start_mark.line + 1
            if name in seen:
                raise ConfigError(file, path, None, f"duplicate key (lines {seen[name]} and "
                                  f"{line}): a spec names each key once")
            seen[name] = line
            stack.append((value, path))


def spec_from_dict(data: Mapping[str, Any], *, file: str | None = None) -> SweepSpec:
    """Validate a parsed spec mapping (see the module docstring for the format)."""
    for key in data:
        if key not in _SPEC_KEYS:
            raise ConfigError(file, str(key), data[key],
                              f"unknown key (known: {', '.join(_SPEC_KEYS)})")
    raw_params = data.get("parameters")
    required = ("hardware", "parameters") + (
        () if isinstance(raw_params, Mapping) and "workload" in raw_params else ("workload",))
    for key in required:
        if key not in data:
            raise ConfigError(file, key, None, "missing required field")
    hardware = _near(file, str(data["hardware"]))
    try:
        base_hw, hw_file = load_machine_dict(hardware)
    except ConfigError as exc:
        raise ConfigError(file, "hardware", data["hardware"],
                          exc.reason if exc.file == hardware else str(exc)) from None
    base_machine = machine_from_dict(base_hw, file=hw_file)  # the base machine must be valid
    mode = data.get("mode", "analytic")
    if mode not in MODES:
        raise ConfigError(file, "mode", mode, f"must be one of {', '.join(MODES)}")
    method, samples, seed = _sampling(data.get("sampling") or {}, file)
    if not isinstance(raw_params, Mapping) or not raw_params:
        raise ConfigError(file, "parameters", raw_params,
                          "expected a mapping of dotted path -> values, with at least one entry")
    _check_names([str(p) for p in raw_params], raw_params, file)
    _check_size(raw_params, method, file)  # from the spec alone, before any value is built
    workloads: dict[str, Any] = {}
    refs: dict[str, str] = {}
    if "workload" in data:
        workloads[str(data["workload"])] = _load_workload(data["workload"], file, "workload")
        refs[str(data["workload"])] = _near(file, str(data["workload"]))
    params = []
    for path, spec in raw_params.items():
        field = f"parameters.{path}"
        p = _parameter(str(path), spec, base_hw, hw_file, method, file, field)
        kind, target = role(p.path)
        if kind == "workload":
            for w in p.values or ():
                workloads[w] = _load_workload(w, file, field)
                refs[w] = _near(file, w)
        elif kind == "run":
            _check_run_flag(base_machine, hw_file, target, p, file, field)
        params.append(p)
    default_workload = str(data.get("workload", next(iter(workloads), "")))
    _workload_variants(params, workloads, refs, default_workload, file)
    constraints = _constraints(data.get("constraints"), params, file)
    metrics = data.get("metrics")
    if metrics is not None:
        if isinstance(metrics, str):
            metrics = [metrics]
        if (not isinstance(metrics, list) or not metrics
                or not all(isinstance(m, str) for m in metrics)):
            raise ConfigError(file, "metrics", metrics, "expected a non-empty list of metric names")
        metrics = tuple(dict.fromkeys(metrics))
    default_name = os.path.splitext(os.path.basename(file or "sweep"))[0]
    spec = SweepSpec(name=str(data.get("name", default_name)),
                     file=file, hardware=hardware, hw_file=hw_file, base_hw=base_hw,
                     workloads=workloads, default_workload=default_workload, mode=mode,
                     method=method, samples=samples, seed=seed, parameters=tuple(params),
                     constraints=constraints, metrics=metrics, workload_refs=refs)
    spec.points()  # a constraint that excludes every point is an error now, not later
    return spec


def _check_names(names: list[str], raw: Mapping[str, Any], file: str | None) -> None:
    """Refuse names that are not parameters of a point, and two names of one parameter."""
    for name in names:
        check_name(name, file)
    dup = same_parameter(names)
    if dup is not None:
        raise ConfigError(file, f"parameters.{dup[1]}", raw[dup[1]],
                          f"the same parameter as parameters.{dup[0]}: name it once")


def _check_run_flag(machine: Any, hw_file: str, option: str, p: Parameter, file: str | None,
                    field: str) -> None:
    """Refuse a run option the base machine's kind does not take, as ``accelsim run`` does
    (:func:`accelsim.devices.check_run_flags`), naming the spec field."""
    from accelsim.devices import check_run_flags, device_for

    value = p.values[0] if p.values else p.low
    try:
        check_run_flags(device_for(machine, source=hw_file), {option: value})
    except ConfigError as exc:
        raise ConfigError(file, field, value, exc.reason) from None


def _workload_variants(params: list[Parameter], workloads: dict[str, Any], refs: dict[str, str],
                       default: str, file: str | None) -> None:
    """Load every workload the points run with their workload parameters
    (``workload.batch: [1, 8]`` on ``llama3_8b_decode`` -> ``llama3_8b_decode:batch=1``, ...),
    into ``workloads`` and ``refs`` under the names points give them."""
    import itertools

    wparams = [p for p in params if role(p.path)[0] == "wparam"]
    if not wparams:
        return
    first = f"parameters.{wparams[0].path}"
    for p in wparams:
        if p.values is None:
            raise ConfigError(file, f"parameters.{p.path}", {"low": p.low, "high": p.high},
                              "a workload parameter takes a list or a discrete range")
    bases = next((p.values for p in params if p.path == "workload"), None) or (default,)
    for base in bases:
        if not takes_parameters(refs[base]):
            raise ConfigError(file, first, wparams[0].values[0],
                              f"workload '{base}' takes no parameters (zoo models, Hugging Face "
                              "configs and ONNX files do)")
        for combo in itertools.product(*(p.values for p in wparams)):
            given = {role(p.path)[1]: v for p, v in zip(wparams, combo, strict=True)}
            name = with_params(base, given)
            if name not in workloads:
                refs[name] = with_params(refs[base], given)
                workloads[name] = _load_workload(refs[name], file, first)


def _sampling(s: Any, file: str | None) -> tuple[str, int | None, int]:
    if isinstance(s, str):
        s = {"method": s}
    if not isinstance(s, Mapping):
        raise ConfigError(file, "sampling", s, "expected a mapping {method, samples, seed}")
    for key in s:
        if key not in ("method", "samples", "seed"):
            raise ConfigError(file, f"sampling.{key}", s[key],
                              "unknown key (known: method, samples, seed)")
    method = s.get("method", "grid")
    if method not in METHODS:
        raise ConfigError(file, "sampling.method", method, f"must be one of {', '.join(METHODS)}")
    samples = s.get("samples")
    if method != "grid":
        if isinstance(samples, bool) or not isinstance(samples, int) or samples <= 0:
            raise ConfigError(file, "sampling.samples", samples,
                              f"{method} sampling needs a positive integer number of samples")
        check_number(samples, file=file, field="sampling.samples", integer=True,
                     maximum=MAX_SWEEP_POINTS)
    seed = s.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(file, "sampling.seed", seed, "expected a non-negative integer")
    check_number(seed, file=file, field="sampling.seed", integer=True)
    return method, samples, seed


def _near(file: str | None, name: str) -> str:
    """``name`` as a path relative to the spec's folder when such a file exists there."""
    if file and not os.path.isabs(name):
        candidate = os.path.join(os.path.dirname(file), name)
        if os.path.isfile(candidate):
            return candidate
    return name


def _load_workload(name: Any, file: str | None, field: str) -> Any:
    try:
        return load_workload(_near(file, str(name)))
    except ConfigError as exc:
        raise ConfigError(file, field, name,
                          exc.reason if exc.file == str(name) else str(exc)) from None


def _attr_path(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _built_value(base: Mapping[str, Any], hw_file: str, path: str, value: Any,
                 file: str | None, field: str) -> Any:
    """Build the machine with ``path = value``; the field's value as the machine holds it."""
    try:
        machine = machine_from_dict(apply_overrides(base, {path: value}, file=hw_file),
                                    file=hw_file)
    except ConfigError as exc:
        raise ConfigError(file, field, value,
                          f"{exc.field or ''}: {exc.reason}".lstrip(": ")) from None
    try:
        out = _attr_path(machine, path)
    except AttributeError:
        raise ConfigError(file, field, value, "path names no field of the machine") from None
    if not isinstance(out, (bool, int, float, str)):
        raise ConfigError(file, field, value, "path names a section, not a number or name")
    return out


def canonical(base: Mapping[str, Any], hw_file: str, path: str, value: Any, file: str | None,
              field: str) -> Any:
    """Build the machine with ``path = value``; return the value as the machine holds it.

    This is the check that the path names a real field and the value is valid for it.
    Whole numbers become ints ("1 MiB" and 1048576 are one value, however it was written).
    """
    out = _built_value(base, hw_file, path, value, file, field)
    if isinstance(out, float) and out.is_integer() and abs(out) < 2**53:
        out = int(out)
    return out


def _axis_count(path: str, spec: Any, file: str | None, field: str) -> int | None:
    """How many values a parameter's spec writes down, computed without building any (a list's
    length, duplicates included; a range's count from its ends); None for a continuous range."""
    if isinstance(spec, Mapping) and "values" in spec:
        spec = spec["values"]
    if isinstance(spec, Mapping):
        return _range_count(path, spec, file, field)
    count = len(spec) if isinstance(spec, (list, tuple)) else 1
    check_count(count, MAX_RANGE_VALUES, file=file, field=field, what="values")
    return count


def _check_size(raw_params: Mapping[str, Any], method: str, file: str | None) -> None:
    """Refuse a grid larger than :data:`~accelsim.limits.MAX_SWEEP_POINTS` from the spec alone.

    The product of the axis lengths as written (before duplicates are merged and constraints
    applied) is computed before any value is built (a machine per hardware value, a model per
    workload), so that a spec of a billion points, or of a 1,000-model axis crossed with large
    ranges, is refused at once rather than after every axis has been expanded.
    """
    counts = [_axis_count(str(path), spec, file, f"parameters.{path}")
              for path, spec in raw_params.items()]
    if method == "grid" and None not in counts:
        check_count(math.prod(counts), MAX_SWEEP_POINTS, file=file, field="parameters",
                    what="grid points", hint="use random or lhs sampling")


def _range_count(path: str, spec: Mapping[str, Any], file: str | None, field: str) -> int | None:
    """The number of values of a range mapping (checked against the per-range limit); None for a
    continuous ``{low, high}`` without ``num``. Checks the keys and numbers, builds nothing."""
    allowed = {"start", "stop", "step", "factor", "low", "high", "num", "log", "integer"}
    for key in spec:
        if key not in allowed:
            raise ConfigError(file, f"{field}.{key}", spec[key],
                              f"unknown key (known: {', '.join(sorted(allowed))})")
    if role(path)[0] == "workload" or path == "dataflow":
        raise ConfigError(file, field, dict(spec), f"{path} takes a list of values, not a range")
    if "start" in spec or "stop" in spec:
        if "start" not in spec or "stop" not in spec or ("step" in spec) == ("factor" in spec):
            raise ConfigError(file, field, dict(spec),
                              "a range needs start, stop and one of step or factor")
        start = _number(path, spec["start"], file, field)
        stop = _number(path, spec["stop"], file, field)
        if start > stop:
            raise ConfigError(file, field, dict(spec), "empty range (start > stop)")
        if "step" in spec:
            step = _number(path, spec["step"], file, f"{field}.step")
            if step <= 0:
                raise ConfigError(file, f"{field}.step", spec["step"], "must be > 0")
            count = math.floor((stop - start) / step * (1 + 1e-12)) + 1
        else:
            factor = spec["factor"]
            if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 1:
                raise ConfigError(file, f"{field}.factor", factor, "must be a number > 1")
            if start <= 0:
                raise ConfigError(file, f"{field}.start", spec["start"],
                                  "a geometric range needs start > 0")
            check_number(factor, file=file, field=f"{field}.factor")
            count = math.floor(math.log(stop / start) / math.log(factor) * (1 + 1e-12)) + 1
        check_count(count, MAX_RANGE_VALUES, file=file, field=field, what="values")
        return int(count)
    if "low" not in spec or "high" not in spec:
        raise ConfigError(file, field, dict(spec),
                          "expected a list, {start, stop, step|factor} or {low, high}")
    if "num" not in spec:
        return None
    num = spec["num"]
    if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
        raise ConfigError(file, f"{field}.num", num, "must be a positive integer")
    check_count(num, MAX_RANGE_VALUES, file=file, field=f"{field}.num", what="values")
    return num


def _parameter(path: str, spec: Any, base: Mapping[str, Any], hw_file: str, method: str,
               file: str | None, field: str) -> Parameter:
    if isinstance(spec, Mapping) and "values" in spec:
        spec = spec["values"]
    if isinstance(spec, Mapping):
        return _ranged(path, spec, base, hw_file, method, file, field)
    values = list(spec) if isinstance(spec, (list, tuple)) else [spec]
    if not values:
        raise ConfigError(file, field, spec, "empty list of values")
    check_count(len(values), MAX_RANGE_VALUES, file=file, field=field, what="values")
    kind = role(path)[0]
    if kind == "workload":
        return Parameter(path, tuple(dict.fromkeys(str(v) for v in values)))
    if kind != "hw":
        return Parameter(path, _option_values(path, values, file, field))
    canon = [canonical(base, hw_file, path, v, file, field) for v in values]
    return Parameter(path, tuple(dict.fromkeys(canon)))


def _option_values(path: str, values: list[Any], file: str | None, field: str) -> tuple:
    """A run option's or workload parameter's values, checked (a run option's by
    :func:`accelsim.devices.base.check_run_option`), whole floats as ints, duplicates merged."""
    from accelsim.devices.base import check_run_option

    kind, target = role(path)
    out = []
    for v in values:
        if isinstance(v, float) and v.is_integer() and kind == "wparam":
            v = int(v)
        if isinstance(v, (list, dict)) and kind == "wparam":
            raise ConfigError(file, field, v, "expected a number or a name")
        if kind == "run":
            try:
                check_run_option(target, v)
            except ConfigError as exc:
                raise ConfigError(file, field, v, exc.reason) from None
        out.append(v)
    try:
        return tuple(dict.fromkeys(out))
    except TypeError:  # unhashable values (a {layer: fraction} mapping): kept as written
        return tuple(out)


def _number(path: str, value: Any, file: str | None, field: str) -> float:
    parser = parser_for_field(path.rsplit(".", 1)[-1])
    try:
        if parser is not None:
            return parser(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UnitError("expected a number")
        return float(check_number(value, file=file, field=field))
    except (UnitError, OverflowError) as exc:
        raise ConfigError(file, field, value, str(exc)) from None


def _ranged(path: str, spec: Mapping[str, Any], base: Mapping[str, Any], hw_file: str,
            method: str, file: str | None, field: str) -> Parameter:
    count = _range_count(path, spec, file, field)  # keys, ends and size checked there
    if "start" in spec:
        start = _number(path, spec["start"], file, field)
        if "step" in spec:
            step = _number(path, spec["step"], file, f"{field}.step")
            values: list[float] = [start + i * step for i in range(int(count or 0))]
        else:
            stop, factor = _number(path, spec["stop"], file, field), spec["factor"]
            values, v = [], start
            while v <= stop * (1 + 1e-12):
                values.append(v)
                v *= factor
        values = [int(v) if float(v).is_integer() else v for v in values]
        if role(path)[0] != "hw":
            return Parameter(path, _option_values(path, values, file, field))
        canon = [canonical(base, hw_file, path, v, file, field) for v in values]
        return Parameter(path, tuple(dict.fromkeys(canon)))
    lo, hi = _number(path, spec["low"], file, field), _number(path, spec["high"], file, field)
    if role(path)[0] != "hw":
        return _option_range(path, spec, lo, hi, count, method, file, field)
    if lo > hi:
        raise ConfigError(file, field, dict(spec), "empty range (low > high)")
    log = bool(spec.get("log", False))
    if log and lo <= 0:
        raise ConfigError(file, f"{field}.low", spec["low"], "a log range needs low > 0")
    ends = [_built_value(base, hw_file, path, int(v) if v.is_integer() else v, file, field)
            for v in (lo, hi)]
    integer = (bool(spec.get("integer", False)) or isinstance(ends[0], int)
               or path.endswith(("_bytes", "_bits")))  # int fields; whole bytes and bits
    if integer and math.floor(hi) < math.ceil(lo):
        raise ConfigError(file, field, dict(spec), "empty range (no integer within [low, high])")
    if count is not None:
        grid = np.geomspace(lo, hi, count) if log else np.linspace(lo, hi, count)
        vals = [int(round(v)) if integer else float(v) for v in grid]
        canon = [canonical(base, hw_file, path, v, file, field) for v in vals]
        return Parameter(path, tuple(dict.fromkeys(canon)))
    if method == "grid":
        raise ConfigError(file, field, dict(spec),
                          "grid sampling needs discrete values: add num: N")
    return Parameter(path, None, low=lo, high=hi, log=log, integer=integer)


def _option_range(path: str, spec: Mapping[str, Any], lo: float, hi: float, count: int | None,
                  method: str, file: str | None, field: str) -> Parameter:
    """A ``{low, high[, num]}`` range of a run option or workload parameter (no hardware field
    to build: the values are checked as :func:`_option_values` checks a list)."""
    if lo > hi:
        raise ConfigError(file, field, dict(spec), "empty range (low > high)")
    log = bool(spec.get("log", False))
    if log and lo <= 0:
        raise ConfigError(file, f"{field}.low", spec["low"], "a log range needs low > 0")
    integer = bool(spec.get("integer", False)) or (
        role(path)[0] == "wparam" and float(lo).is_integer() and float(hi).is_integer())
    _option_values(path, [lo, hi], file, field)
    if count is not None:
        grid = np.geomspace(lo, hi, count) if log else np.linspace(lo, hi, count)
        vals = [int(round(v)) if integer else float(v) for v in grid]
        return Parameter(path, _option_values(path, vals, file, field))
    if method == "grid":
        raise ConfigError(file, field, dict(spec),
                          "grid sampling needs discrete values: add num: N")
    return Parameter(path, None, low=lo, high=hi, log=log, integer=integer)


def _constraints(raw: Any, params: list[Parameter], file: str | None) -> tuple[Constraint, ...]:
    if raw is None:
        return ()
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise ConfigError(file, "constraints", raw, "expected a list of expressions")
    aliases: dict[str, str] = {p.path: p.path for p in params}
    counts: dict[str, int] = {}
    for p in params:
        counts[p.alias] = counts.get(p.alias, 0) + 1
    for p in params:
        if counts[p.alias] == 1:
            aliases.setdefault(p.alias, p.path)
    return tuple(parse_constraint(t, aliases, file=file, field=f"constraints[{i}]")
                 for i, t in enumerate(items))
