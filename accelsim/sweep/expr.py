"""Safe constraint expressions over sweep parameter names (``rows == cols``,
``rows * cols <= 4096``).

A constraint is parsed once with :mod:`ast` and interpreted by a small tree walker that knows
only names (a parameter's dotted path or a unique short alias), numbers, strings,
comparisons, arithmetic (``+ - * / // % **``), unary ``- + not`` and ``and``/``or``. Anything
else (calls, attributes of objects, subscripts, lambdas, comprehensions) is rejected when the
spec is read; nothing is ever passed to :func:`eval`.

Evaluation is bounded (limits in :mod:`accelsim.limits`): an expression has at most
``MAX_EXPR_CHARS`` characters and ``MAX_EXPR_NODES`` syntax nodes; strings may only be
compared, never computed with; ``**`` takes exponents up to ``MAX_EXPR_EXPONENT``; every
intermediate number stays finite and within ``MAX_EXPR_MAGNITUDE``, which is checked *before*
a product or power is computed, so no tower of powers or huge integer is ever built.

Imports: errors, limits.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accelsim.errors import ConfigError
from accelsim.limits import (
    MAX_EXPR_CHARS,
    MAX_EXPR_EXPONENT,
    MAX_EXPR_MAGNITUDE,
    MAX_EXPR_NODES,
)

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
           ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_MAX_BITS = MAX_EXPR_MAGNITUDE.bit_length() - 1


class ExprLimitError(ArithmeticError):
    """An intermediate value of a constraint beyond the evaluation limits."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """One parsed constraint: its source text and its checked syntax tree."""

    text: str
    tree: ast.expr
    names: tuple[str, ...]
    """Parameter names (full dotted paths) that the expression reads."""
    file: str | None = None
    """The spec file the constraint comes from (named in errors)."""
    field: str = "constraints"
    """Its field in the spec (``constraints[0]``)."""

    def holds(self, point: Mapping[str, Any]) -> bool:
        """Whether the point satisfies the constraint (``point`` maps dotted path -> value)."""
        try:
            return bool(_eval(self.tree, point))
        except ZeroDivisionError:
            return False
        except (TypeError, ExprLimitError, OverflowError, ValueError) as exc:
            raise ConfigError(self.file, self.field, self.text,
                              f"cannot evaluate: {str(exc)[:120]}") from None


def dotted_name(node: ast.expr) -> str | None:
    """``compute.array.rows`` written as a chain of attributes -> the dotted string."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def parse_constraint(text: Any, aliases: Mapping[str, str], *, file: str | None,
                     field: str) -> Constraint:
    """Parse ``text``; ``aliases`` maps every usable name (full path or short alias) to the path.

    Raises :class:`ConfigError` naming ``file``, ``field`` and the text on a syntax error, a
    forbidden construct or an unknown name.
    """
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(file, field, text, "expected an expression such as 'rows == cols'")
    if len(text) > MAX_EXPR_CHARS:
        raise ConfigError(file, field, text, f"longer than {MAX_EXPR_CHARS:,} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ConfigError(file, field, text, f"invalid expression ({exc.msg})") from None
    except (RecursionError, MemoryError):
        raise ConfigError(file, field, text, "nested too deeply") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_EXPR_NODES:
        raise ConfigError(file, field, text,
                          f"{nodes} syntax nodes, more than the limit of {MAX_EXPR_NODES}")
    names: list[str] = []
    resolved = _check(tree, aliases, names, file, field, text)
    return Constraint(text.strip(), resolved, tuple(dict.fromkeys(names)), file, field)


def _check(node: ast.expr, aliases: Mapping[str, str], names: list[str], file: str | None,
           field: str, text: str) -> ast.expr:
    """Validate ``node``; return a copy whose names are replaced by ``ast.Name(full path)``."""
    def sub(n: ast.expr) -> ast.expr:
        return _check(n, aliases, names, file, field, text)

    if isinstance(node, (ast.Name, ast.Attribute)):
        name = dotted_name(node)
        if name is None or name not in aliases:
            known = ", ".join(sorted(aliases))
            raise ConfigError(file, field, text,
                              f"unknown parameter name '{name or ast.unparse(node)}' "
                              f"(known: {known})")
        names.append(aliases[name])
        return ast.Name(id=aliases[name], ctx=ast.Load())
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float, str)):
            raise ConfigError(file, field, text, f"constant {str(node.value)[:20]!r} not allowed")
        if not isinstance(node.value, str):
            try:
                _bounded(node.value)
            except ExprLimitError as exc:
                raise ConfigError(file, field, text, str(exc)) from None
        return node
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return ast.BinOp(left=sub(node.left), op=node.op, right=sub(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return ast.UnaryOp(op=node.op, operand=sub(node.operand))
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(op=node.op, values=[sub(v) for v in node.values])
    if isinstance(node, ast.Compare) and all(type(op) in _CMPOPS for op in node.ops):
        return ast.Compare(left=sub(node.left), ops=node.ops,
                           comparators=[sub(c) for c in node.comparators])
    raise ConfigError(file, field, text,
                      f"'{ast.unparse(node)}' not allowed (use names, numbers, comparisons, "
                      "arithmetic, and/or/not)")


def _eval(node: ast.expr, point: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return point[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, point), _eval(node.right, point)
        if isinstance(left, str) or isinstance(right, str):
            raise TypeError("strings can only be compared (== != < <= > >=), not computed with")
        _check_operands(node.op, left, right)
        return _bounded(_BINOPS[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, point)
        if isinstance(value, str) and not isinstance(node.op, ast.Not):
            raise TypeError("strings can only be compared, not negated")
        return _UNARY[type(node.op)](value)
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_eval(v, point) for v in node.values)
        return any(_eval(v, point) for v in node.values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, point)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, point)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    # checked at parse
    raise TypeError(f"unsupported node {type(node).__name__}")  # pragma: no cover


def _bits(x: float) -> float:
    """log2 of ``|x|`` (0 for |x| <= 1): the size of a number, without building anything."""
    ax = abs(x)
    return math.log2(ax) if ax > 1 else 0.0


def _check_operands(op: ast.operator, left: float, right: float) -> None:
    """Refuse ``left op right`` when its result would exceed the limits, before computing it."""
    if isinstance(op, ast.Pow):
        if abs(right) > MAX_EXPR_EXPONENT:
            raise ExprLimitError(f"exponent {str(right)[:20]} beyond the limit of "
                                 f"{MAX_EXPR_EXPONENT}")
        if _bits(left) * abs(right) > _MAX_BITS:
            raise ExprLimitError(f"a power beyond the limit of 2**{_MAX_BITS}")
    elif isinstance(op, ast.Mult) and _bits(left) + _bits(right) > _MAX_BITS + 1:
        raise ExprLimitError(f"a product beyond the limit of 2**{_MAX_BITS}")


def _bounded(value: Any) -> Any:
    """``value`` if it is a finite number within the limits (bools and strings pass)."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise ExprLimitError(f"a result that is not finite ({value})")
    if isinstance(value, (int, float)) and abs(value) > MAX_EXPR_MAGNITUDE:
        raise ExprLimitError(f"a number beyond the limit of 2**{_MAX_BITS}")
    return value
