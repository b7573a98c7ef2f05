"""The limits module and the boundaries built on it, as specifications.

Bad values are summarised, never stringified whole; numbers are finite and within int64; YAML
budgets refuse alias bombs and deep nesting before anything is built; constraint evaluation
refuses huge results before computing them.
"""

from __future__ import annotations

import math
import time

import pytest

from accelsim.errors import ConfigError, summarise
from accelsim.limits import (
    MAX_DIM,
    MAX_EXPR_EXPONENT,
    MAX_INT,
    MAX_NESTING,
    MAX_YAML_ALIASES,
    check_count,
    check_number,
)
from accelsim.safe_yaml import load_text
from accelsim.sweep.expr import parse_constraint
from accelsim.units import UnitError, parse_bandwidth, parse_bytes, parse_frequency


def test_a_huge_value_is_summarised_without_being_stringified():
    inner = [1] * 10
    bomb = inner
    for _ in range(9):  # 10^10 leaves as shared references: str() would never finish
        bomb = [bomb] * 10
    t0 = time.monotonic()
    text = str(ConfigError("f.yaml", "ops", bomb, "expected a list of operators"))
    assert time.monotonic() - t0 < 0.01
    assert text == "f.yaml: ops = <list of 10 items>: expected a list of operators"
    assert summarise(10**5000).startswith("<integer of about 5001 digits")
    assert len(summarise("x" * 10**6)) <= 80
    assert summarise({"a": 1, "b": [1, 2]}) == "{'a': 1, 'b': [1, 2]}"


def test_an_error_is_always_one_line():
    err = ConfigError("a\nb.yaml", "f\nx", "v\nw", "line one\nline two")
    assert "\n" not in str(err)


@pytest.mark.parametrize("value, reason", [
    (math.nan, "finite"), (math.inf, "finite"), (-math.inf, "finite"),
    (MAX_INT + 1, "int64"), (-MAX_INT - 1, "int64"), (True, "integer"), ("8", "integer"),
    (2.5, "integer"), (0, "> 0"), (MAX_DIM + 1, "too large"),
])
def test_check_number_refuses(value, reason):
    with pytest.raises(ConfigError, match=reason) as err:
        check_number(value, file="f", field="x", integer=True, positive=True, maximum=MAX_DIM)
    assert str(err.value).startswith("f: x = ")


def test_check_number_passes_good_values_and_an_allowed_infinity():
    assert check_number(8.0, file="f", field="x", integer=True) == 8
    assert isinstance(check_number(8.0, file="f", field="x", integer=True), int)
    assert check_number(math.inf, file="f", field="x", allow_inf=True) == math.inf
    with pytest.raises(ConfigError):
        check_number(math.nan, file="f", field="x", allow_inf=True)


def test_check_count_names_the_size_before_the_work():
    with pytest.raises(ConfigError,
                       match="conv1 = '3,000,000 folds': more than the limit of 2 folds"):
        check_count(3e6, 2, file="w.yaml", field="conv1", what="folds")


def test_units_are_finite_except_an_unlimited_bandwidth():
    for parse, text in ((parse_bytes, "1e400 B"), (parse_frequency, 10**400),
                        (parse_bytes, math.nan), (parse_bytes, math.inf)):
        with pytest.raises(UnitError):
            parse(text)
    assert parse_bandwidth(math.inf) == math.inf
    with pytest.raises(UnitError):
        parse_bandwidth(-math.inf)


def test_yaml_budgets():
    aliases = "a: &a 1\nb: [" + ", ".join(["*a"] * (MAX_YAML_ALIASES + 1)) + "]\n"
    with pytest.raises(ConfigError, match="aliases"):
        load_text(aliases, "f.yaml")
    deep = "x: " + "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1)
    with pytest.raises(ConfigError, match="nested deeper"):
        load_text(deep, "f.yaml")
    ok = "a: &a {x: 1}\nb: *a\n"
    assert load_text(ok, "f.yaml") == {"a": {"x": 1}, "b": {"x": 1}}


NAMES = {"rows": "rows"}


@pytest.mark.parametrize("text, reason", [
    ("rows ** 65 > 1", "exponent"), ("2 ** 64 ** 2 > 1", "exponent"),
    ("rows * 10 ** 60 * 10 ** 60 * 10 ** 60 * 10 ** 60 * 10 ** 60 > 1", "product"),
    ("rows * 1e70 * 1e70 * 1e70 * 1e70 > 1", "product"), ("'a' * rows == 'aaa'", "strings"),
    ("rows / 1e-300 / 1e-300 > 1", "not finite|beyond the limit"),
])
def test_constraints_refuse_huge_results_before_computing_them(text, reason):
    c = parse_constraint(text, NAMES, file="s.yaml", field="constraints[0]")
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match=reason) as err:
        c.holds({"rows": 10**6})
    assert time.monotonic() - t0 < 0.05
    assert str(err.value).startswith("s.yaml: constraints[0] = ")


def test_constraints_within_the_limits_still_work():
    c = parse_constraint(f"rows ** {MAX_EXPR_EXPONENT} >= 1 and rows % 2 == 0", NAMES,
                         file="s.yaml", field="constraints[0]")
    assert c.holds({"rows": 2}) and not c.holds({"rows": 3})
    with pytest.raises(ConfigError, match="beyond the limit"):  # a constant, at parse time
        parse_constraint("rows * 1e300 > 1", NAMES, file="s.yaml", field="constraints[0]")
    with pytest.raises(ConfigError, match="syntax nodes"):
        parse_constraint(" + ".join(["1"] * 150) + " > rows", NAMES, file="s.yaml",
                         field="constraints[0]")
