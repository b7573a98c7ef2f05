"""What ran: the resolved inputs of one ``accelsim run``, for its header, JSON and HTML report.

:func:`run_info` gathers, for a run's result, the workload parameters as they were resolved
(zoo and Hugging Face specs: every parameter of the model's builder, the given ones and the
defaults, ``None`` defaults replaced by the value the graph was built with; ONNX files: the
dynamic dimensions given), the engine or execution mode, the machine file, the energy table
and the accelsim version. :class:`RunInfo` renders it as header lines (at most a given width)
and as a JSON object.

Imports: accelsim (version), errors, safe_text, files, config.energy, workload.kineto,
workload.models.hf_config, workload.models.zoo (spec parsing), report.terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelsim import __version__
from accelsim.report.terminal import wrap_clauses
from accelsim.safe_text import show

WIDTH = 120
"""Columns the header lines are wrapped to."""


@dataclass(frozen=True)
class RunInfo:
    """The resolved inputs of one run (see the module docstring)."""

    machine: str
    kind: str
    machine_file: str
    machine_detail: str
    workload: str
    workload_source: str
    params: dict[str, Any] = field(default_factory=dict)
    """Resolved workload parameters, name -> value."""
    defaults: tuple[str, ...] = ()
    """The parameters left at their default."""
    engine: str = ""
    energy_table: str = ""
    energy_node_nm: float | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    version: str = __version__
    validation: str = ""
    """``unvalidated``: the machine's values come from a datasheet only (its YAML says so)."""

    def param_text(self) -> str:
        """``batch=8, context=2048 (default), dtype=bf16 (default)``; ``""`` without parameters."""
        return ", ".join(f"{k}={v}" + (" (default)" if k in self.defaults else "")
                         for k, v in self.params.items())

    def energy_text(self) -> str:
        """``scaled_5nm (5 nm)``, or ``none``."""
        if not self.energy_table:
            return "none"
        node = f" ({self.energy_node_nm:g} nm)" if self.energy_node_nm else ""
        return f"{self.energy_table}{node}"

    def header_lines(self, width: int = WIDTH) -> list[str]:
        """The header of ``accelsim run``: what ran on what, its parameters, engine, files and
        version, each line at most ``width`` columns (continuations indented)."""
        head = (f"{show(self.workload)} ({show(self.workload_source)}) on {show(self.machine)} "
                f"({self.machine_detail})")
        lines = [head]
        if self.validation == "unvalidated":
            lines.append(f"UNVALIDATED: {show(self.machine)}'s values are from its datasheet "
                         "only; no measurement of it was compared with these figures")
        if self.params:
            lines.append(f"parameters: {self.param_text()}")
        if self.overrides:
            lines.append("--set: " + ", ".join(f"{k}={v}" for k, v in self.overrides.items()))
        lines.append(f"engine: {self.engine}; machine file {show(self.machine_file)}; "
                     f"energy table {self.energy_text()}; accelsim {self.version}")
        return [part for line in lines for part in wrap_clauses(line, width)]

    def to_dict(self) -> dict[str, Any]:
        """The ``run`` object of ``accelsim run --json``."""
        return {"machine": self.machine, "kind": self.kind, "machine_file": self.machine_file,
                "workload": self.workload, "workload_source": self.workload_source,
                "parameters": dict(self.params), "defaults": list(self.defaults),
                "engine": self.engine, "energy_table": self.energy_table or None,
                "energy_node_nm": self.energy_node_nm, "overrides": dict(self.overrides),
                "accelsim_version": self.version, "validation": self.validation or None}


def workload_source(workload: Any) -> str:
    """Where a workload came from: ``model zoo``, ``built-in workloads/NAME`` or its file."""
    from accelsim.files import config_dir

    src = getattr(workload, "source", None)
    if not src or str(src).startswith("zoo"):
        return "model zoo"
    path = Path(src).resolve()
    for base, label in ((config_dir("workloads"), "built-in workloads/"), (Path.cwd(), "")):
        try:
            return f"{label}{path.relative_to(base.resolve())}"
        except ValueError:
            continue
    return str(src)


def spec_source(spec: Any) -> str:
    """``Hugging Face config FILE`` for a spec naming a ``config.json``; else ``""``."""
    from types import SimpleNamespace

    from accelsim.workload.models.hf_config import config_builder, is_config_path

    name = str(spec).partition(":")[0].strip()
    if not isinstance(spec, str) or not is_config_path(name):
        return ""
    file = config_builder(name)[0]
    return f"Hugging Face config {workload_source(SimpleNamespace(source=str(file)))}"


def machine_file(hw: Any) -> str:
    """The file a machine name or path resolves to (``built-in configs/hardware/h200.yaml``);
    ``""`` for a machine given as an object."""
    from accelsim.errors import AccelsimError
    from accelsim.files import config_dir, resolve_path

    if not isinstance(hw, (str, Path)):
        return ""
    try:
        path = resolve_path(hw, "hardware").resolve()
    except AccelsimError:
        return str(hw)
    try:
        return f"built-in configs/hardware/{path.relative_to(config_dir('hardware').resolve())}"
    except ValueError:
        return str(path)


def spec_parameters(spec: Any, graph_params: dict[str, Any] | None = None
                    ) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``(parameters, defaults)`` of a workload spec: for a zoo or Hugging Face spec every
    parameter of the model's builder (given values first), a default of ``None`` or ``""``
    replaced by ``graph_params[name]`` (what the graph was built with; a decode graph's
    ``seq`` is its query length, so it is left out there); for ``FILE.onnx:N=8`` the given
    dimensions; otherwise nothing."""
    import inspect

    from accelsim.workload.models import zoo
    from accelsim.workload.models.hf_config import config_builder, is_config_path

    text = str(spec)
    from accelsim.workload.kineto import DEFAULT_HOST, is_trace_path

    if isinstance(spec, str) and is_trace_path(text):  # a Kineto trace: its host mode
        _, _, rest = text.partition(":")
        given = dict(item.strip().partition("=")[::2] for item in rest.split(",") if "=" in item)
        host = given.get("host", DEFAULT_HOST).strip()
        return {"host": host}, () if "host" in given else ("host",)
    if ".onnx:" in text:
        _, given = zoo.parse_spec(text.replace(".onnx:", ":", 1))
        return dict(given), ()
    if not isinstance(spec, str) or not zoo.is_zoo_spec(text):
        return {}, ()
    name, given = zoo.parse_spec(text)
    if is_config_path(name):
        build = config_builder(name)[1]
        defaults = {p.name: p.default for p in inspect.signature(build).parameters.values()}
    else:
        defaults = zoo.parameters(name)
    built = graph_params or {}
    params: dict[str, Any] = {}
    left: list[str] = []
    for key, default in defaults.items():
        if key in given:
            params[key] = given[key]
            continue
        value = default
        if value in (None, ""):
            if key == "seq" and built.get("mode") == "decode":
                continue
            value = built.get(key, value)
        params[key] = value
        left.append(key)
    return params, tuple(left)


def run_info(result: Any, *, hw: Any, workload: Any, graph_params: dict[str, Any] | None = None,
             overrides: dict[str, Any] | None = None, auto_mode: bool = False) -> RunInfo:
    """The :class:`RunInfo` of ``result`` (a systolic ``Result`` or a GPU/CPU ``ModelRun``),
    run on ``hw`` (name, path or object) with ``workload`` (the spec given)."""
    m = result.machine
    params, defaults = spec_parameters(workload, graph_params)
    kind = getattr(m, "kind", "systolic")
    energy = getattr(result, "energy", None)
    if hasattr(result, "dataflow"):  # a systolic run
        a = m.array
        detail = (f"{a.count}x {a.rows}x{a.cols} {a.precision}, {result.dataflow}, "
                  f"{m.clock_hz / 1e6:g} MHz")
        engine = f"{result.mode}" + (" (auto: exact, equal to the event replay)"
                                     if auto_mode else "")
        table = getattr(getattr(energy, "table", None), "name", "") if energy is not None else ""
        node = getattr(getattr(energy, "table", None), "node_nm", None) if energy is not None \
            else None
    else:
        detail = kind
        staged = getattr(result, "calls", None) is not None and not result.calls.empty
        engine = (f"{result.exec_mode} execution ({result.replay} replay of host and GPU stream)"
                  if staged else "one kernel per operator")
        table = str(getattr(getattr(m, "energy", None), "table", "") or "")
        node = None
        if table:
            from accelsim.config.energy import load_energy_table
            from accelsim.errors import AccelsimError

            try:
                node = load_energy_table(table).node_nm
            except AccelsimError:  # the header names the table either way
                node = None
    return RunInfo(machine=str(getattr(m, "name", "")), kind=kind, machine_file=machine_file(hw),
                   machine_detail=detail, workload=str(result.workload.name),
                   workload_source=spec_source(workload) or workload_source(result.workload),
                   params=params,
                   defaults=defaults, engine=engine, energy_table=table, energy_node_nm=node,
                   overrides=dict(overrides or {}),
                   validation=str(getattr(m, "validation", "") or ""))


__all__ = ["RunInfo", "machine_file", "run_info", "spec_parameters", "spec_source",
           "workload_source"]
