"""The pack's arithmetic language: `+ - * /`, unary minus, numbers, metric names and comparisons.

Series expressions (the integrity identities) are the same language over source columns, evaluated for every
period at once, with a few window functions: `avg(col, n)`, `sum`, `min`, `max` over the latest n periods and
`lag(col, n)`; a window with a missing period has no value.

A formula in a YAML file must never run arbitrary Python, and its calculation must be explainable step by
step. Expressions are parsed once (at pack load, which also rejects unknown names) and evaluated by two
independent implementations:

- `evaluate_explained` walks the syntax tree and writes the substituted expression (the analyzer's
  calculation, shown to the user);
- `evaluate_compiled` compiles the same tree to Python bytecode with no builtins (the verifier's
  recomputation), so that a bug in one evaluator shows up as an arithmetic disagreement.
"""

from __future__ import annotations

import ast
import copy
import functools
import math
import operator
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

_BINARY: dict[type[ast.operator], tuple[str, Callable[[float, float], float]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
}
_COMPARE: dict[type[ast.cmpop], tuple[str, Callable[[float, float], bool]]] = {
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
}
_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Pow: "**", ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Invert: "~", ast.Not: "not", ast.And: "and",
    ast.Or: "or", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
    ast.NotIn: "not in",
}
"""How refused operators are named in errors (an operator node alone unparses to nothing)."""
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Constant, ast.Name, ast.Load,
            ast.Compare, *_BINARY, *_COMPARE)


class ExpressionError(ValueError):
    """The expression text is not in the pack's arithmetic language."""


class MissingValue(ArithmeticError):
    """An input was missing, or the arithmetic was undefined (a division by zero, a result that is not finite). The
    message quotes the expression at fault."""

    why: str
    """The cause in a few words that quote no constant of the expression (`miles_prev is missing`, `miles_prev is
    zero`, `a divisor is zero`, `the result is not finite`): what a brief may say (its numbers are checked against
    the store's)."""
    missing: str | None
    """The input that is missing, if that is the cause (else the arithmetic is undefined)."""

    def __init__(self, message: str, why: str | None = None, *, missing: str | None = None) -> None:
        super().__init__(message)
        self.why, self.missing = why or message, missing


def _divides_by_zero(division: ast.BinOp) -> MissingValue:
    divisor = division.right
    named = divisor.id if isinstance(divisor, ast.Name) else f"`{ast.unparse(divisor)}`"
    return MissingValue(f"division by zero in `{ast.unparse(division)}`: {named} is zero",
                        f"{divisor.id} is zero" if isinstance(divisor, ast.Name) else "a divisor is zero")


def _not_finite(expr: Expression, value: float) -> float:
    """A finite result, as every evaluator has it: an overflow (`inf`, or `inf - inf`) has no value."""
    if not math.isfinite(value):
        raise MissingValue(f"`{expr.text}` is not a finite number (an overflow)", "the result is not finite")
    return value


@dataclass(frozen=True)
class Expression:
    text: str
    tree: ast.Expression
    names: frozenset[str]
    is_comparison: bool
    constants: tuple[float, ...] = ()
    """The numbers written in it, each with its sign as written (`dip < -0.15`: -0.15), in order."""


SERIES_FUNCTIONS = ("avg", "sum", "min", "max", "lag")


def _check_call(node: ast.Call) -> None:
    name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
    if name not in SERIES_FUNCTIONS:
        raise ExpressionError(f"function `{name}` is not allowed (only {', '.join(SERIES_FUNCTIONS)})")
    args = node.args
    if node.keywords or len(args) != 2 or not isinstance(args[0], ast.Name) or not (
            isinstance(args[1], ast.Constant) and type(args[1].value) is int and args[1].value >= 1):
        raise ExpressionError(f"`{ast.unparse(node)}` must be `{name}(column, n)` with a column name and a whole "
                              "number of periods n >= 1")


_QUOTED = re.compile(r"`([^`]+)`")
_PLACEHOLDER = "__quoted_{}"


def _unquoted(text: str) -> tuple[str, dict[str, str]]:
    """The text with each column name written in backticks (`` `First.Class` ``, `` `HS Grad` ``: R's and
    spreadsheets' names, which are no identifiers) replaced by an identifier of its own, and the names by it."""
    names: dict[str, str] = {}

    def placeholder(match: re.Match[str]) -> str:
        return names.setdefault(match[1], _PLACEHOLDER.format(len(names)))

    replaced = _QUOTED.sub(placeholder, text)
    return replaced, {held: name for name, held in names.items()}


def quoted(node: ast.AST) -> str:
    """A series expression's text as `parse_series` reads it back: a column name that is no identifier in
    backticks (`ast.unparse` writes `First.Class` bare, which Python reads as an attribute)."""
    written = copy.deepcopy(node)
    for n in ast.walk(written):
        if isinstance(n, ast.Name) and not n.id.isidentifier():
            n.id = f"`{n.id}`"
    return ast.unparse(written)


def parse_series(text: str) -> Expression:
    """A series expression: arithmetic over column names (in backticks where a name is no identifier:
    `` `Economy.Class` / `First.Class` ``, trial 57) and window functions, no comparison."""
    expr = parse(text, series=True)
    if expr.is_comparison:
        raise ExpressionError("a series expression is arithmetic, without a comparison")
    return expr


def _joined_comparisons(node: ast.BoolOp) -> str:
    """Conditions joined by `and` or `or`, named by that word with the way on (trial 107: `gdp_growth < 0 and
    approval_now < 40` in a red flag's `when` was told "`gdp_growth < 0 and approval_now < 40` is not allowed", the
    whole expression, not the word at fault)."""
    word = _SYMBOLS[type(node.op)]
    return (f"`{word}` is not allowed (only + - * /, comparisons, numbers and metric names): an expression is one "
            "comparison at most: each condition goes in a red flag or hard filter of its own")


def parse(text: str, *, series: bool = False) -> Expression:
    readable, held = _unquoted(str(text)) if series else (str(text), {})
    try:
        tree = ast.parse(readable.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(_syntax_fault(str(text), exc)) from None
    for node in ast.walk(tree):
        if series and isinstance(node, ast.Attribute):
            # R's `write.csv` keeps names such as First.Class, which Python reads as an attribute (trial 57)
            raise ExpressionError(f"`{ast.unparse(node)}` reads as no column name: a name holding a dot or a space "
                                  f"is written in backticks, `` `{ast.unparse(node)}` ``")
        if isinstance(node, ast.Name) and node.id in held:
            node.id = held[node.id]
        if series and isinstance(node, ast.Call):
            _check_call(node)
            continue
        if series and isinstance(node, ast.Name) and node.id in SERIES_FUNCTIONS:
            continue
        if isinstance(node, ast.BoolOp) and not series:
            raise ExpressionError(_joined_comparisons(node))
        if not isinstance(node, _ALLOWED):
            shown = _SYMBOLS.get(type(node)) or ast.unparse(node) or type(node).__name__
            allowed = "+ - * /, numbers, column names and " + ", ".join(SERIES_FUNCTIONS) if series \
                else "+ - * /, comparisons, numbers and metric names"
            raise ExpressionError(f"`{shown}` is not allowed (only {allowed})")
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool)
                                               or not isinstance(node.value, int | float)):
            raise ExpressionError(f"constant {node.value!r} is not a number")
        if isinstance(node, ast.Compare) and len(node.ops) != 1:
            raise ExpressionError("chained comparisons are not allowed")
        if isinstance(node, ast.Compare) and node is not tree.body:
            raise ExpressionError("a comparison may only be the whole expression")
    _refuse_constant_faults(tree)
    functions = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in functions)
    negated = {id(n.operand) for n in ast.walk(tree) if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)}
    constants = tuple(-float(n.value) if id(n) in negated else float(n.value)
                      for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, int | float))
    return Expression(text=str(text).strip(), tree=tree, names=names,
                      is_comparison=isinstance(tree.body, ast.Compare), constants=constants)


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_CURRENCY = re.compile(r"[$€£¥]")
_LONE_EQUALS = re.compile(r"(?<![<>=!])=(?!=)")


def _syntax_fault(text: str, exc: SyntaxError) -> str:
    """What a text Python does not parse gets wrong, in the pack's words: a unit written beside a number (`5%`,
    `$10`), `=` for a comparison, or else where it stops parsing (trial 35: `momentum > 5%` was "not an arithmetic
    expression (invalid syntax)", Python's words, naming no cause)."""
    if (percent := _PERCENT.search(text)) is not None:
        number = float(percent[1])
        return (f"`{percent[0]}` holds a percent sign, which no expression reads (the number alone: {number / 100:g} "
                f"for a share, {number:g} for a value in percent)")
    if (currency := _CURRENCY.search(text)) is not None:
        return f"`{currency[0]}` is a currency sign, which no expression reads (numbers and metric names alone)"
    if _LONE_EQUALS.search(text):
        return "`=` compares nothing (a comparison is `>`, `>=`, `<` or `<=`)"
    where = f" at character {exc.offset}" if exc.offset else ""
    return f"not an arithmetic expression ({exc.msg}{where})"


def _always_zero(node: ast.AST) -> bool:
    """Whether a subexpression is 0 whatever its names hold: a product with such a factor (`x * 0`), a difference of
    one subexpression from itself (`x - x`), a sum or quotient of such (trial 141: `noutput / (goutput * 0)` loaded
    where `noutput / 0` was refused, and judged nothing on every night). A divisor zero only for some values is
    the night's gap, not this."""
    if isinstance(node, ast.Constant):
        return node.value == 0
    if isinstance(node, ast.UnaryOp):
        return _always_zero(node.operand)
    if not isinstance(node, ast.BinOp):
        return False
    if isinstance(node.op, ast.Mult):
        return _always_zero(node.left) or _always_zero(node.right)
    if isinstance(node.op, ast.Div):
        return _always_zero(node.left)
    if isinstance(node.op, ast.Sub) and ast.dump(node.left) == ast.dump(node.right):
        return True
    return isinstance(node.op, ast.Add | ast.Sub) and _always_zero(node.left) and _always_zero(node.right)


def _refuse_constant_faults(tree: ast.Expression) -> None:
    """An infinite constant (`1e999`), or a division whose divisor is a constant 0 (`x / 0`, `x / (2 - 2)`,
    `x / (y - y)`): every night would give a gap, so the pack is refused instead."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, float) and not math.isfinite(node.value):
            raise ExpressionError(f"constant `{ast.unparse(node)}` is not a finite number")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _always_zero(node.right):
            raise ExpressionError(f"`{ast.unparse(node)}` divides by a constant zero")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and not any(
                isinstance(n, ast.Name) for n in ast.walk(node.right)):
            try:
                divisor = eval(compile(ast.Expression(node.right), "<divisor>", "eval"), {"__builtins__": {}})
            except ArithmeticError:
                divisor = 0
            if divisor == 0:
                raise ExpressionError(f"`{ast.unparse(node)}` divides by a constant zero")


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def evaluate_explained(expr: Expression, values: Mapping[str, float | None]) -> tuple[float, str]:
    """Value and substituted text, e.g. `(412 / 380) - 1`. Raises MissingValue."""
    value, text = _walked(expr, values, explain=True)
    return _not_finite(expr, value), text


def _walked(expr: Expression, values: Mapping[str, float | None], *, explain: bool) -> tuple[float, str]:
    """The expression's value, walked left to right as written, and with `explain` its substituted text (empty
    without: `why_undefined` asks only where the walk stops, for each of a sparse source's 240,000 gaps). Raises
    MissingValue at the first input missing or divisor that is zero."""

    def walk(node: ast.AST) -> tuple[float, str]:
        if isinstance(node, ast.Constant):
            number = float(node.value)  # type: ignore[arg-type]  # parse() admits only int and float
            return number, _fmt(number) if explain else ""
        if isinstance(node, ast.Name):
            value = values.get(node.id)
            if value is None or not math.isfinite(value):
                raise MissingValue(f"{node.id} is missing", missing=node.id)
            return float(value), _fmt(float(value)) if explain else ""
        if isinstance(node, ast.UnaryOp):
            inner, text = walk(node.operand)
            if explain and isinstance(node.operand, ast.BinOp | ast.UnaryOp):
                text = f"({text})"
            return (-inner, f"-{text}" if explain else "") if isinstance(node.op, ast.USub) else (inner, text)
        if isinstance(node, ast.BinOp):
            (left, ltext), (right, rtext) = walk(node.left), walk(node.right)
            symbol, fn = _BINARY[type(node.op)]
            if symbol == "/" and right == 0:
                raise _divides_by_zero(node)
            if not explain:
                return fn(left, right), ""
            wrap = lambda t, n: f"({t})" if isinstance(n, ast.BinOp) else t  # noqa: E731
            return fn(left, right), f"{wrap(ltext, node.left)} {symbol} {wrap(rtext, node.right)}"
        if isinstance(node, ast.Compare):
            (left, ltext), (right, rtext) = walk(node.left), walk(node.comparators[0])
            symbol, cmp = _COMPARE[type(node.ops[0])]
            return float(cmp(left, right)), f"{ltext} {symbol} {rtext}" if explain else ""
        raise ExpressionError(f"unsupported node {type(node).__name__}")  # parse() already refused it

    return walk(expr.tree.body)


def evaluate_many(expr: Expression, columns: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The expression for many candidates at once (one array per name, NaN = missing): the values, and where each
    is undefined (a missing or non-finite input, a division by zero, a result that is not finite: where
    `evaluate_compiled` raises MissingValue). The same operations in the same order, element by element: numpy's
    + - * / round as Python's floats do, so each defined value is `evaluate_compiled`'s to the last bit."""
    size = len(next(iter(columns.values()))) if columns else 1
    undefined = np.zeros(size, dtype=bool)

    def walk(node: ast.AST) -> np.ndarray:
        nonlocal undefined
        if isinstance(node, ast.Constant):
            return np.full(size, float(node.value))  # type: ignore[arg-type]  # parse() admits only int and float
        if isinstance(node, ast.Name):
            value = columns.get(node.id, np.full(size, np.nan))
            undefined = undefined | ~np.isfinite(value)
            return value
        if isinstance(node, ast.UnaryOp):
            inner = walk(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp):
            left, right = walk(node.left), walk(node.right)
            symbol, fn = _BINARY[type(node.op)]
            if symbol == "/":
                undefined = undefined | (right == 0)
            with np.errstate(all="ignore"):  # the operator module's functions take arrays as they take floats
                return np.asarray(cast(Callable[[Any, Any], Any], fn)(left, right), dtype=float)
        if isinstance(node, ast.Compare):
            left, right = walk(node.left), walk(node.comparators[0])
            compare = cast(Callable[[Any, Any], Any], _COMPARE[type(node.ops[0])][1])
            return np.asarray(compare(left, right), dtype=float)
        raise ExpressionError(f"unsupported node {type(node).__name__}")  # parse() already refused it

    values = walk(expr.tree.body)
    return values, undefined | ~np.isfinite(values)


@functools.lru_cache(maxsize=1024)
def _code(expr: Expression) -> types.CodeType:
    """An expression's tree compiled once (a wide night evaluates one formula for ten thousand candidates)."""
    return compile(expr.tree, "<pack expression>", "eval")


def evaluate_compiled(expr: Expression, values: Mapping[str, float | None]) -> float:
    """The same value through Python's own bytecode, with no builtins. Raises MissingValue."""
    scope: dict[str, float] = {}
    for name in expr.names:
        value = values.get(name)
        if value is None or not math.isfinite(value):
            raise MissingValue(f"{name} is missing", missing=name)
        scope[name] = float(value)
    try:
        return _not_finite(expr, float(eval(_code(expr), {"__builtins__": {}}, scope)))
    except ZeroDivisionError:
        raise MissingValue(f"division by zero in `{expr.text}`", "a divisor is zero") from None


def why_undefined(expr: Expression, values: Mapping[str, float | None]) -> MissingValue | None:
    """Why the expression has no value for `values` (None: it has one), as `evaluate_explained` finds it: the first
    input missing, the first divisor that is zero, or a result that is not finite."""
    try:
        _not_finite(expr, _walked(expr, values, explain=False)[0])
    except MissingValue as exc:
        return exc
    return None


def _window(values: np.ndarray, n: int, fn: str) -> np.ndarray:
    out = np.full(values.shape, np.nan)
    if fn == "lag":
        out[n:] = values[:-n] if n < len(values) else out[n:]
        return out
    if n > len(values):
        return out
    windows = np.lib.stride_tricks.sliding_window_view(values, n)
    reducers: dict[str, Callable[..., np.ndarray]] = {"avg": np.mean, "sum": np.sum, "min": np.min, "max": np.max}
    out[n - 1:] = reducers[fn](windows, axis=1)  # a NaN anywhere in a window leaves that period without a value
    return out


def evaluate_series(expr: Expression, columns: Mapping[str, np.ndarray]) -> np.ndarray:
    """The expression for every period at once (arrays in time order, NaN = no value); a period where a term
    is missing or a division is by zero has NaN."""

    def walk(node: ast.AST) -> np.ndarray | float:
        if isinstance(node, ast.Constant):
            return float(node.value)  # type: ignore[arg-type]  # parse() admits only int and float
        if isinstance(node, ast.Name):
            return columns[node.id]
        if isinstance(node, ast.Call):
            column, periods = node.args
            assert isinstance(column, ast.Name) and isinstance(periods, ast.Constant)
            assert isinstance(node.func, ast.Name)
            return _window(columns[column.id], int(periods.value), node.func.id)  # type: ignore[arg-type]
        if isinstance(node, ast.UnaryOp):
            inner = walk(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp):
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Div):
                right = np.where(np.asarray(right) == 0, np.nan, right)
            return _BINARY[type(node.op)][1](left, right)  # type: ignore[arg-type]
        raise ExpressionError(f"unsupported node {type(node).__name__}")

    with np.errstate(all="ignore"):
        length = len(next(iter(columns.values()))) if columns else 0
        result = np.asarray(walk(expr.tree.body), dtype=float)
        return np.broadcast_to(result, (length,)).astype(float) if result.ndim == 0 else result
