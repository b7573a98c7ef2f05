"""The :class:`Device` protocol: what every single-device machine kind answers, and the record
of one op's cost on it.

A device wraps one machine config object (``kind: systolic``, ``gpu``, ``cpu``...) and answers
through that kind's own model in ``hw/`` (and ``mapping/``, ``engine/`` where the kind needs
them): how it plans an op, what the op costs (seconds, bytes per memory level, the bound),
what actions it counts (for energy), and the machine's roofs. Units: seconds, FLOP
(1 MAC = 2 FLOP), decimal bytes, bytes/s.

Imports: pandas, errors, analysis.roofline (roof types), report.energy (pricing).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import pandas as pd

from accelsim.analysis.roofline import MachineRoofs
from accelsim.errors import AccelsimError, UnsupportedError

BOUND_CLASS = {"tensor_core": "compute", "tensor_core_unaligned": "compute", "simt": "compute",
               "sfu": "compute", "smem": "compute", "compute": "compute", "array": "compute",
               "vector": "compute", "l1": "memory",
               "l2": "memory", "l3": "memory", "dram": "memory", "hbm": "memory",
               "launch": "overhead"}
"""A device model's bound name -> ``compute``, ``memory`` or ``overhead``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpCost:
    """One op on one device, through the device kind's own model.

    ``level_bytes``: bytes moved at each memory level the model reports (keys are the
    roof level names: ``sram``/``dram`` on a systolic array, ``l2``/``hbm`` on a GPU,
    ``l1``..``dram`` on a CPU); ``offchip_bytes`` the device-memory share of it.
    ``actions``: action records (``level, operand, direction, count, bits, precision...``)
    that :mod:`accelsim.report.energy` prices. ``detail``: the kind's own raw result (layer
    table, GPU document, CPU cost) for callers that need more.
    """

    name: str
    op: str
    precision: str
    time_s: float
    flops: float
    level_bytes: Mapping[str, float]
    offchip_bytes: float
    peak_flops_per_s: float
    offchip_bytes_per_s: float
    bound: str
    actions: pd.DataFrame = field(repr=False)
    detail: Any = field(default=None, repr=False)

    @property
    def bound_class(self) -> str:
        """``compute``, ``memory`` or ``overhead``: the class of :attr:`bound`."""
        return BOUND_CLASS.get(self.bound, "memory")


@runtime_checkable
class Device(Protocol):
    """One machine kind's answers about an op; implemented once per kind (see the registry in
    :mod:`accelsim.devices`)."""

    kind: ClassVar[str]
    machine: Any

    def plan(self, op: object, *, precision: str | None = None) -> Any:
        """The kind's own plan of ``op`` (systolic layer plans, GPU kernels, CPU blocking)."""

    def cost(self, op: object, *, precision: str | None = None) -> OpCost:
        """What ``op`` costs (analytic model); :class:`UnsupportedError` if it cannot run."""

    def energy_j(self, cost: OpCost, table: Any = None) -> float:
        """Energy of ``cost``, joules: its actions priced with ``table`` (default: the
        machine's) plus static (leakage) power over its time."""

    def roofs(self, precision: str | None = None) -> MachineRoofs:
        """Peak FLOP/s and the bandwidth of every memory level at ``precision``."""

    def op_times(self, ops: Sequence[object]) -> list[float]:
        """Seconds of each op (``inf`` where the device cannot run it)."""

    def layer_table(self, ops: Sequence[object], *, precision: str | None = None,
                    dataflow: str | None = None) -> tuple[pd.DataFrame, str]:
        """(one row per layer: ``layer, op, flops, time_s, bytes_<level>``, precision)."""


class DeviceBase:
    """Defaults shared by the device kinds: per-op loops over :meth:`cost`."""

    kind: ClassVar[str] = ""
    levels: ClassVar[tuple[str, ...]] = ()
    """Memory levels :meth:`layer_table` reports (``bytes_<level>`` columns)."""

    def __init__(self, machine: Any) -> None:
        self.machine = machine

    def __repr__(self) -> str:
        return f"{type(self).__name__}({getattr(self.machine, 'name', '?')!r})"

    def cost(self, op: object, *, precision: str | None = None) -> OpCost:  # pragma: no cover
        raise NotImplementedError

    def actions(self, op: object, *, precision: str | None = None) -> pd.DataFrame:
        """The action records of ``op`` (what :meth:`energy_j` prices)."""
        return self.cost(op, precision=precision).actions

    def op_times(self, ops: Sequence[object]) -> list[float]:
        """Seconds of each op (``inf`` where the device cannot run it)."""
        out = []
        for op in ops:
            try:
                out.append(float(self.cost(op).time_s))
            except AccelsimError:
                out.append(math.inf)
        return out

    def layer_table(self, ops: Sequence[object], *, precision: str | None = None,
                    dataflow: str | None = None) -> tuple[pd.DataFrame, str]:
        """One row per op; an op the model cannot cost is an analytical row (NaN time)."""
        rows = []
        prec = precision
        for op in ops:
            row = {"layer": getattr(op, "name", ""), "op": getattr(op, "kind", ""),
                   "flops": float(getattr(op, "flops", 0))}
            try:
                c = self.cost(op, precision=precision)
            except UnsupportedError:
                rows.append({**row, "time_s": math.nan,
                             **{f"bytes_{lv}": math.nan for lv in self.levels}})
                continue
            prec = prec or c.precision
            rows.append({**row, "flops": c.flops, "time_s": float(c.time_s),
                         **{f"bytes_{lv}": float(c.level_bytes.get(lv, 0.0))
                            for lv in self.levels}})
        return pd.DataFrame(rows), prec or ""


def records_energy_j(records: list[dict] | pd.DataFrame, table: Any) -> float:
    """Price action records, joules; ``vector`` compute records cost one ``mac.<precision>``."""
    from accelsim.report.energy import price_actions

    df = pd.DataFrame(records) if not isinstance(records, pd.DataFrame) else records.copy()
    if df.empty:
        return 0.0
    df.loc[df["level"] == "vector", "level"] = "mac"
    return float(price_actions(df, table)["pj"].sum()) * 1e-12
