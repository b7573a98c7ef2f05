"""Inputs that used to be accepted silently and gave a wrong answer, refused in one line
naming file, field and value (issue 27): an energy table without a GPU's idle power.
(Model-parameter contradictions: ``tests/workload/test_input_bounds.py``.)"""

from __future__ import annotations

import dataclasses

import pytest

from accelsim.config.energy import load_energy_table
from accelsim.config.registry import load_machine
from accelsim.errors import ConfigError
from accelsim.report.power import static_power_w


def test_a_gpu_priced_with_a_table_without_idle_power_is_refused():
    h200 = load_machine("h200")
    table = load_energy_table("eyeriss_like")
    assert table.get("static.gpu_idle_pe") is None
    with pytest.raises(ConfigError) as err:
        static_power_w(h200, table)
    text = str(err.value)
    assert "eyeriss_like.yaml: leakage.gpu_idle_pe" in text and "'h200'" in text


def test_the_gpu_s_own_table_gives_its_idle_power():
    h200 = load_machine("h200")
    watts = static_power_w(h200, load_energy_table(h200.energy.table))
    assert watts["idle"] > 50  # about 100 W idle, not the ~1 W of cell leakage alone


def test_a_measured_idle_power_needs_no_table_entry():
    h200 = load_machine("h200")
    measured = dataclasses.replace(h200, energy=dataclasses.replace(h200.energy, idle_w=120.0))
    watts = static_power_w(measured, load_energy_table("eyeriss_like"))
    assert sum(watts.values()) == pytest.approx(120.0)
