"""Dataflows are strategies looked up by name: the registry, and what each strategy declares."""

from __future__ import annotations

import pytest

from accelsim.config.systolic import ALL_DATAFLOWS, DATAFLOWS
from accelsim.errors import ConfigError
from accelsim.hw import dataflows
from accelsim.hw.systolic import geometry, sram_accesses


def test_registry_names_match_the_config_choices():
    """The config accepts exactly the registered names; os/ws/is are the systolic ones."""
    assert dataflows.names() == ALL_DATAFLOWS
    assert dataflows.names("systolic") == DATAFLOWS
    assert dataflows.names("spatial") == ("rs", "nlr")


def test_each_systolic_strategy_has_its_own_kernel_code():
    codes = [dataflows.get(n).code for n in DATAFLOWS]
    assert sorted(codes) == [0, 1, 2]


@pytest.mark.parametrize("name, stationary, spatial, temporal", [
    ("os", None, ("m", "n"), "k"), ("ws", "weight", ("k", "n"), "m"),
    ("is", "input", ("k", "m"), "n")])
def test_systolic_strategies_declare_what_stays_and_what_streams(name, stationary, spatial,
                                                                 temporal):
    s = dataflows.get(name)
    assert (s.stationary, s.spatial, s.temporal) == (stationary, spatial, temporal)


def test_geometry_is_the_strategy_geometry():
    """hw.systolic.geometry selects the strategy by name and returns its fold geometry."""
    for name in DATAFLOWS:
        g = geometry(100, 70, 50, 16, 8, name)
        assert g == dataflows.get(name).geometry(100, 70, 50, 16, 8)
        assert sram_accesses(100, 70, 50, g) == dataflows.get(name).sram_accesses(100, 70, 50, g)
    ws = geometry(100, 70, 50, 16, 8, "ws")
    assert (ws.sr, ws.sc, ws.t, ws.fold_cycles) == (50, 70, 100, 2 * 16 + 8 + 100 - 2)


def test_unknown_or_spatial_names_are_refused_by_name():
    with pytest.raises(ConfigError, match="unknown dataflow.*os, ws, is, rs, nlr"):
        dataflows.get("xs")
    with pytest.raises(ConfigError, match="'rs' is not a systolic dataflow"):
        geometry(10, 10, 10, 4, 4, "rs")


def test_register_actions_follow_what_stays_in_the_pe():
    """WS writes a weight register once per weight loaded, OS keeps its accumulator as
    ``output``; moving operands are written once per MAC."""
    loaded = {"input": 50.0, "weight": 7.0}
    ws = dict(((op, d), n) for op, d, n in dataflows.get("ws").register_accesses(1000, loaded))
    assert ws[("weight", "write")] == 7 and ws[("input", "write")] == 1000
    assert ws[("psum", "read")] == ws[("psum", "write")] == 1000
    os_ = dict(((op, d), n) for op, d, n in dataflows.get("os").register_accesses(1000, loaded))
    assert os_[("weight", "write")] == os_[("input", "write")] == 1000
    assert ("output", "write") in os_ and ("psum", "write") not in os_
