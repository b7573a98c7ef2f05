"""torch.compile's per-step host cost: the compiled lowering names a ``step_call`` class,
paid once per step before the first call (host only); other modes have none; a bad key in a
lowering table is a one-line error."""

from __future__ import annotations

import pytest

from accelsim.api.model_run import run_model
from accelsim.config.lowering import load_lowering
from accelsim.config.registry import load_machine
from accelsim.errors import ConfigError

SPEC = "llama3_8b_decode:batch=1,context=128"


def test_only_the_compiled_table_has_a_step_call():
    assert load_lowering("compiled").step_call == "compiled_step"
    assert load_lowering("eager").step_call is None and load_lowering("graph").step_call is None


def test_the_step_call_is_one_host_only_call_first():
    m = load_machine("h200")
    calls = run_model(m, SPEC, exec_mode="compiled").calls
    first = calls.iloc[0]
    assert first["call_class"] == "compiled_step" and first["kernels"] == 0
    assert first["host_s"] == pytest.approx(m.host.call_s("compiled_step"))
    assert (calls["call_class"] == "compiled_step").sum() == 1


def test_the_step_cost_adds_to_a_host_bound_step():
    lo = load_machine("h200", {"host.eager_call_s.compiled_step": 0.0})
    hi = load_machine("h200", {"host.eager_call_s.compiled_step": 500e-6})
    t = [run_model(m, SPEC, exec_mode="compiled").step_s for m in (lo, hi)]
    assert t[1] - t[0] == pytest.approx(500e-6, rel=0.02)   # the host leads: it all shows


def test_unknown_lowering_key_is_one_line(tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text("mode: mine\nsubmit: per_call\nstep_cal: compiled_step\nops: {}\n")
    with pytest.raises(ConfigError, match="step_cal.*unknown key"):
        load_lowering(str(bad))
