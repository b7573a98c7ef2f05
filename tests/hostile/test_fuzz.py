"""Hypothesis strategies that generate malformed machine configs, workloads, sweep specs and
constraint expressions: each reader either accepts the input or raises one ``ConfigError`` line
naming the file; nothing else escapes, and non-finite or out-of-range numbers never pass.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
import yaml
from hostile_files import _set
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelsim.config.registry import machine_from_dict
from accelsim.errors import ConfigError
from accelsim.safe_yaml import load_text
from accelsim.sweep.expr import parse_constraint
from accelsim.sweep.space import spec_from_dict
from accelsim.workload.readers import op_from_dict

ROOT = Path(__file__).resolve().parents[2]
FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
HUGE = st.one_of(st.integers(min_value=2**63, max_value=2**200),
                 st.integers(max_value=-(2**63) - 1, min_value=-(2**200)))
HOSTILE = st.one_of(
    NON_FINITE, HUGE,
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-10, max_value=0),
    st.text(max_size=20),
    st.sampled_from(["1e400 B", "-1 GHz", "nan", "1 XiB", "", "\x00", "9" * 400]),
    st.none(), st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
"""Values a harsh user (or a broken generator) might put in any field."""


def _bad_number(v: object) -> bool:
    """NaN, ±inf or an integer beyond int64: must never be accepted as a number."""
    if isinstance(v, bool):
        return False
    if isinstance(v, float):
        return not math.isfinite(v)
    return isinstance(v, int) and abs(v) > 2**63 - 1


def _leaves(data: object, path: str = "") -> list[tuple[str, object]]:
    if isinstance(data, dict):
        out = []
        for k, v in data.items():
            out += _leaves(v, f"{path}.{k}" if path else str(k))
        return out
    return [(path, data)]


MACHINES = {name: yaml.safe_load((ROOT / "configs/hardware" / f"{name}.yaml").read_text())
            for name in ("scalesim_default", "tpu_v4", "h200", "spr_cpu")}
NUMERIC_LEAVES = [(name, path) for name, data in MACHINES.items() for path, v in _leaves(data)
                  if isinstance(v, (int, float)) and not isinstance(v, bool)
                  or isinstance(v, str) and v[:1].isdigit()]


def one_line_naming(exc: ConfigError, file: str) -> None:
    text = str(exc)
    assert "\n" not in text and len(text) < 600 and file in text, text


@FUZZ
@given(leaf=st.sampled_from(NUMERIC_LEAVES), value=HOSTILE)
def test_a_malformed_machine_config_is_refused_in_one_line(leaf, value):
    name, path = leaf
    data = _set(MACHINES[name], path, value)
    try:
        machine_from_dict(data, file="m.yaml")
    except ConfigError as exc:
        one_line_naming(exc, "m.yaml")
        return
    unlimited = value == math.inf and path.endswith("_bytes_per_s")
    assert not _bad_number(value) or unlimited, f"{path} = {value!r} accepted"


OP_FIELDS = {"gemm": {"m": 64, "n": 64, "k": 64, "batch": 1, "dtype": "bf16"},
             "conv2d": {"c": 3, "h": 8, "w": 8, "k": 4, "r": 3, "s": 3, "stride": 1, "pad": 0},
             "softmax": {"rows": 8, "cols": 8}, "layernorm": {"rows": 8, "cols": 8},
             "attention": {"batch": 1, "heads": 2, "seq_q": 8, "seq_kv": 8, "head_dim": 8}}


@FUZZ
@given(op=st.sampled_from(sorted(OP_FIELDS)), data=st.data())
def test_a_malformed_workload_op_is_refused_in_one_line(op, data):
    fields = OP_FIELDS[op]
    key = data.draw(st.sampled_from(sorted(fields) + ["op", "name", "extra"]))
    value = data.draw(HOSTILE)
    d = {"op": op, "name": "x", **fields, key: value}
    try:
        op_from_dict(d, file="w.yaml", where="ops[0]")
    except ConfigError as exc:
        one_line_naming(exc, "w.yaml")
        return
    assert key == "name" or not _bad_number(value), f"{key} = {value!r} accepted"


@pytest.fixture(scope="module")
def tiny_workload(tmp_path_factory) -> str:
    p = tmp_path_factory.mktemp("fuzz") / "tiny.yaml"
    p.write_text("name: tiny\nops:\n  - {op: gemm, name: g, m: 64, n: 64, k: 64}\n")
    return str(p)


RANGE = st.fixed_dictionaries({}, optional={
    "start": HOSTILE, "stop": HOSTILE, "step": HOSTILE, "factor": HOSTILE, "low": HOSTILE,
    "high": HOSTILE, "num": HOSTILE, "log": HOSTILE, "integer": HOSTILE})
SPEC_PART = st.fixed_dictionaries({}, optional={
    "sampling": st.one_of(HOSTILE, st.fixed_dictionaries(
        {}, optional={"method": st.sampled_from(["grid", "random", "lhs", "x"]),
                      "samples": HOSTILE, "seed": HOSTILE})),
    "mode": HOSTILE,
    "constraints": st.one_of(HOSTILE, st.lists(st.text(max_size=30), max_size=2)),
    "metrics": HOSTILE,
})


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rows=st.one_of(HOSTILE, RANGE, st.lists(HOSTILE, min_size=1, max_size=3)),
       extra=SPEC_PART)
def test_a_malformed_sweep_spec_is_refused_in_one_line(tiny_workload, rows, extra):
    data = {"hardware": "scalesim_default", "workload": tiny_workload,
            "parameters": {"compute.array.rows": rows, "compute.array.cols": [16, 32]}, **extra}
    t0 = time.monotonic()
    try:
        spec = spec_from_dict(data, file="s.yaml")
    except ConfigError as exc:
        one_line_naming(exc, "s.yaml")
    else:
        assert len(spec.points()) <= 5_000_000
    assert time.monotonic() - t0 < 10


NAMES = {"rows": "compute.array.rows", "cols": "compute.array.cols",
         "dataflow": "dataflow"}
ATOM = st.one_of(st.sampled_from(list(NAMES)), st.integers(-10**6, 10**6).map(str),
                 st.sampled_from(["1e308", "0", "0.5", "'os'", "9" * 50, "-1"]))


@st.composite
def expressions(draw, depth: int = 0) -> str:
    """Random arithmetic/boolean expressions over the names, biased to big numbers."""
    if depth > 4 or draw(st.booleans()):
        return draw(ATOM)
    op = draw(st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "==", "<", ">=", "and",
                               "or"]))
    left, right = draw(expressions(depth + 1)), draw(expressions(depth + 1))
    wrap = draw(st.sampled_from(["{}", "({})", "not {}", "-{}"]))
    return wrap.format(f"{left} {op} {right}")


@FUZZ
@given(text=expressions(), rows=st.integers(1, 4096), cols=st.integers(1, 4096))
def test_any_constraint_evaluates_quickly_or_is_one_line(text, rows, cols):
    aliases = {**NAMES, **{v: v for v in NAMES.values()}}
    t0 = time.monotonic()
    try:
        c = parse_constraint(text, aliases, file="s.yaml", field="constraints[0]")
        c.holds({"compute.array.rows": rows, "compute.array.cols": cols, "dataflow": "os"})
    except ConfigError as exc:
        one_line_naming(exc, "s.yaml")
    assert time.monotonic() - t0 < 0.5


@FUZZ
@given(text=st.one_of(st.text(max_size=200), st.binary(max_size=200).map(
    lambda b: b.decode("latin-1"))))
def test_any_text_is_yaml_or_one_line(text):
    try:
        load_text(text, "f.yaml")
    except ConfigError as exc:
        one_line_naming(exc, "f.yaml")
