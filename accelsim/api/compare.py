"""Cross-platform kernel comparison: one kernel suite on several machines, each through its own
device model (:func:`accelsim.devices.device_for`: systolic arrays, GPUs, CPUs).

    >>> from accelsim.api.compare import compare
    >>> c = compare("workloads/kernels/multikernelbench.yaml", ["a100", "tpu_v4", "npu", "cpu"])
    >>> c.table[["kernel", "hw", "time_s", "tflops", "util", "energy_j", "bound"]]

Platforms are named by built-in config name, path, or one of the :data:`PLATFORM_ALIASES`
(``npu`` -> ``npu_ascend910``, ``cpu`` -> ``spr_cpu``).

Precision: a kernel runs at its ``dtype``; on a GPU or CPU without it, a precision in
:data:`PRECISION_FALLBACK` runs as its fallback (``bf16`` -> ``fp16``: the same 16-bit width,
e.g. on a V100), else the platform's own one-line error. A systolic machine runs its array's
precision whatever the kernel asks.

Columns of :attr:`Comparison.table` (one row per kernel x machine):

* ``alias`` — the name the caller used when it was an alias, else ``""``; ``hw`` is the
  machine's config name;
* ``requested_precision`` / ``precision`` — the kernel's dtype and the precision it ran at
  (they differ after a fallback, or on a systolic array of another precision);

* ``time_s`` — the kernel's time on the machine, seconds;
* ``flops``, ``tflops`` — the kernel's FLOPs (1 MAC = 2 FLOP) and achieved TFLOP/s;
* ``peak_tflops``, ``util`` — the machine's dense peak at the precision it ran (matrix unit)
  and ``tflops / peak_tflops``;
* ``dram_bytes``, ``bw_util`` — modelled DRAM/HBM traffic and its share of peak bandwidth
  over the kernel's time;
* ``energy_j``, ``gflops_per_j`` — energy of arithmetic and data movement plus static
  (leakage) power over the kernel's time, priced with each machine's own table (the one
  ``accelsim run`` and ``accelsim energy`` use; ``energy_table=NAME`` prices every machine with
  one table instead). What is counted per family is in ``accelsim/api/HETEROGENEOUS.md``;
  static power is :func:`accelsim.report.power.static_power_w`;
* ``bound`` — the platform model's own name of what limits the kernel, and ``bound_class``:
  ``compute``, ``memory`` or ``overhead``;
* ``validation`` — ``unvalidated`` for a machine known from its datasheet only (its YAML's
  ``validation:``; ``accelsim compare`` prints a line for each), else ``""``.

Imports: accelsim (version), errors, files, config.energy, config.registry, devices, devices.base,
report.power, workload.ops, workload.readers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from accelsim import __version__
from accelsim.config.energy import EnergyTable, load_energy_table
from accelsim.config.registry import load_machine
from accelsim.devices import device_for
from accelsim.devices.base import PRECISION_FALLBACK, with_fallback
from accelsim.errors import ConfigError
from accelsim.files import builtin_names
from accelsim.report.power import energy_flag
from accelsim.workload.ops import Workload

__all__ = ["COLUMNS", "PLATFORM_ALIASES", "PRECISION_FALLBACK", "Comparison", "compare",
           "family_of", "load_kernels", "load_platform", "resolve_alias", "run_kernel",
           "with_fallback"]

DEFAULT_KERNELS = "workloads/kernels/multikernelbench.yaml"
DEFAULT_HW = ("a100", "h100", "tpu_v4", "npu_ascend910", "spr_cpu")
DEFAULT_ENERGY_TABLE = "machine"
"""Each machine priced with its own table (``energy.table`` of its YAML), as ``run`` does."""

PLATFORM_ALIASES: dict[str, str] = {"npu": "npu_ascend910", "cpu": "spr_cpu"}
"""Short platform names accepted by :func:`compare` (and ``accelsim compare --hw``)."""

COLUMNS = ["kernel", "op", "hw", "alias", "family", "requested_precision", "precision",
           "time_s", "flops", "tflops", "peak_tflops", "util", "dram_bytes", "bw_util",
           "energy_j", "gflops_per_j", "energy_flag", "bound", "bound_class", "validation"]


def resolve_alias(name: str) -> str:
    """The config name an alias stands for (``npu`` -> ``npu_ascend910``); other names as given.

    A built-in config of the same name wins over an alias."""
    if name in PLATFORM_ALIASES and name not in builtin_names("hardware"):
        return PLATFORM_ALIASES[name]
    return name


def load_platform(name: str) -> Any:
    """A machine by built-in name, path or alias; an unknown name is a one-line
    :class:`ConfigError`."""
    try:
        return load_machine(resolve_alias(name))
    except ConfigError as exc:
        if exc.field is None and "no such file" in exc.reason:
            raise ConfigError("--hw", "hw", name, "unknown hardware (built-ins: "
                              f"{', '.join(builtin_names('hardware'))}; aliases: "
                              f"{', '.join(f'{a}={c}' for a, c in PLATFORM_ALIASES.items())})"
                              ) from None
        raise


def family_of(machine: Any) -> str:
    """The machine's device kind (``systolic``, ``gpu``, ``cpu``); a system or node is not a
    kernel platform (one-line :class:`ConfigError`)."""
    return device_for(machine, source="--hw").kind


# ----------------------------------------------------------------------- one kernel, one machine
def run_kernel(machine: Any, op: object, *, table: EnergyTable | None = None,
               alias: str = "") -> dict[str, Any]:
    """One row of the comparison: ``op`` on ``machine`` through its device's own model
    (:func:`accelsim.devices.device_for`), at the op's precision or its fallback (see
    :func:`with_fallback`), energy priced with ``table`` (default: the machine's)."""
    dev = device_for(machine, source="--hw")
    row = {"kernel": getattr(op, "name", "op"), "op": getattr(op, "kind", ""), "hw": machine.name,
           "alias": alias, "family": dev.kind, **dev.op_row(op, table)}
    row["energy_flag"] = energy_flag(machine, row["gflops_per_j"], row["peak_tflops"] * 1e12)
    row["validation"] = str(getattr(machine, "validation", "") or "")
    return {c: row[c] for c in COLUMNS}


# --------------------------------------------------------------------------- the suite
@dataclass
class Comparison:
    """The comparison table and what produced it."""

    kernels: Workload
    hw: tuple[str, ...]
    energy_table: str
    table: pd.DataFrame
    aliases: dict[str, str] = dataclasses.field(default_factory=dict)
    """Alias used -> config name, for the platforms named by an alias."""

    def pivot(self, value: str = "time_s") -> pd.DataFrame:
        """Kernels x machines of one column (e.g. ``time_s``, ``util``, ``energy_j``)."""
        return self.table.pivot(index="kernel", columns="hw", values=value).reindex(
            index=list(dict.fromkeys(self.table["kernel"])), columns=list(self.hw))

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``accelsim compare --json``."""
        return {"accelsim_version": __version__, "kernels": self.kernels.name,
                "source": self.kernels.source, "hw": list(self.hw), "aliases": self.aliases,
                "energy_table": self.energy_table,
                "rows": json.loads(self.table.to_json(orient="records"))}


def load_kernels(kernels: Any) -> Workload:
    """The kernel suite: a path or name of a workload YAML, a Workload, or a list of ops.

    A relative path that does not exist from the working directory is tried from the project
    root, so ``workloads/kernels/multikernelbench.yaml`` works anywhere."""
    from accelsim.workload.readers import load_wl

    return load_wl(kernels)


def compare(kernels: Any = DEFAULT_KERNELS, hw: Sequence[str] | str = DEFAULT_HW, *,
            energy_table: str = DEFAULT_ENERGY_TABLE) -> Comparison:
    """Run every kernel of ``kernels`` on every machine of ``hw`` (names, or ``"a,b,c"``).

    ``energy_table``: a table name/path priced for all machines, or ``"machine"`` for each
    machine's own. Unknown machines fail before any work, naming the bad name. An alias and
    the config it stands for name one platform (the first mention is kept).
    """
    if not isinstance(hw, str) and (not isinstance(hw, (list, tuple))
                                    or not all(isinstance(h, str) for h in hw)):
        raise ConfigError("--hw", "hw", type(hw).__name__,
                          "expected machine names (a list of strings, or 'a,b,c')")
    names = [h.strip() for h in hw.split(",")] if isinstance(hw, str) else list(hw)
    names = [n for n in names if n]
    if not names:
        raise ConfigError("--hw", "hw", "", "name at least one machine")
    machines: list[tuple[Any, str]] = []
    for n in names:
        m = load_platform(n)
        family_of(m)
        if all(m.name != k.name for k, _ in machines):
            machines.append((m, n if resolve_alias(n) != n else ""))
    wl = load_kernels(kernels)
    common = None if energy_table == "machine" else load_energy_table(energy_table)
    rows = []
    for op in wl.ops:
        for m, alias in machines:
            rows.append(run_kernel(m, op, table=common, alias=alias))
    return Comparison(wl, tuple(m.name for m, _ in machines), energy_table,
                      pd.DataFrame(rows, columns=COLUMNS),
                      {alias: m.name for m, alias in machines if alias})
