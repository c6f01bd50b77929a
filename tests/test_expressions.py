"""The pack's arithmetic language: what parse() refuses, and the two evaluators agreeing with each other."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from opportunity_assets.expressions import (
    ExpressionError,
    MissingValue,
    evaluate_compiled,
    evaluate_explained,
    evaluate_many,
    parse,
    why_undefined,
)

VALUES = {"a": 3.0, "b": 4.5, "c": -2.0}


@pytest.mark.parametrize(("text", "fragment"), [
    ("max(a, b)", "max(a, b)"),
    ("abs(a)", "abs(a)"),
    ("a.real", "a.real"),
    ("().__class__", "__class__"),
    ("a[0]", "a[0]"),
    ("'abc'", "'abc'"),
    ("a + 'x'", "'x'"),
    ("a < b < c", "chained"),
    ("0 < a <= 1", "chained"),
    ("(a > b) + 1", "whole expression"),
    ("a * (b < c)", "whole expression"),
    ("(a > b) > c", "whole expression"),
    ("True", "True"),
    ("a + False", "False"),
    ("1j", "1j"),
    ("a if b else c", "a if b else c"),
    ("lambda: 1", "lambda"),
    ("a and b", "`and` is not allowed"),  # (trial 107: the word, not the whole expression)
    ("[a, b]", "[a, b]"),
    ("a +", "not an arithmetic expression"),
    ("", "not an arithmetic expression"),
])
def test_parse_rejects_what_is_not_arithmetic(text: str, fragment: str) -> None:
    with pytest.raises(ExpressionError) as exc:
        parse(text)
    assert fragment in str(exc.value)


@pytest.mark.parametrize(("text", "said"), [
    ("growth > 5%", "`5%` holds a percent sign, which no expression reads (the number alone: 0.05 for a share, 5 for "
                    "a value in percent)"),
    ("growth * 100 %", "`100 %` holds a percent sign, which no expression reads (the number alone: 1 for a share, "
                       "100 for a value in percent)"),
    ("$price > 10", "`$` is a currency sign, which no expression reads (numbers and metric names alone)"),
    ("price > €10", "`€` is a currency sign, which no expression reads (numbers and metric names alone)"),
    ("growth = 0", "`=` compares nothing (a comparison is `>`, `>=`, `<` or `<=`)"),
    ("growth > (0.1", "not an arithmetic expression ('(' was never closed at character 10)"),
])
def test_text_python_does_not_parse_is_told_its_cause(text: str, said: str) -> None:
    """Trial 35: `momentum > 5%`, `momentum * 100%`, `$momentum > 0.05` and `momentum = 0.05` were each "not an
    arithmetic expression (invalid syntax)", Python's words, naming no cause: a unit sign is named with the number
    it means, `=` with the comparisons there are, and anything else with where it stops parsing."""
    with pytest.raises(ExpressionError) as exc:
        parse(text)
    assert str(exc.value) == said


@pytest.mark.parametrize(("text", "operator"), [("a ** 2", "**"), ("a % b", "%"), ("a == b", "=="),
                                                ("a // b", "//"), ("not a", "not")])
def test_rejected_operator_is_named_in_the_message(text: str, operator: str) -> None:
    """The message must show the offending construct (not an empty `` quote)."""
    with pytest.raises(ExpressionError) as exc:
        parse(text)
    assert "``" not in str(exc.value)
    assert operator in str(exc.value)


def test_parse_reports_names_and_kind() -> None:
    arithmetic = parse("  sales_3m / sales_3m_prev - 1 ")
    assert arithmetic.names == frozenset({"sales_3m", "sales_3m_prev"})
    assert arithmetic.is_comparison is False
    assert arithmetic.text == "sales_3m / sales_3m_prev - 1"
    comparison = parse("sales_peak_3m / sales_3m > 0.5")
    assert comparison.is_comparison is True
    assert comparison.names == frozenset({"sales_peak_3m", "sales_3m"})
    assert parse("2 * 3").names == frozenset()


AGREEING = [
    ("a + b * c", 3 + 4.5 * -2),
    ("(a + b) * c", (3 + 4.5) * -2),
    ("a / b - 1", 3 / 4.5 - 1),
    ("a - b - c", 3 - 4.5 + 2),
    ("a / b / c", 3 / 4.5 / -2),
    ("-a + b", -3 + 4.5),
    ("+a", 3.0),
    ("a - -c", 3 - 2),
    ("-(a - b) * c", -(3 - 4.5) * -2),
    ("a / -(b - c)", 3 / -(4.5 + 2)),
    ("2 * a - 3.5", 2 * 3 - 3.5),
    ("1e3 / a", 1000 / 3),
    ("a > b", 0.0),
    ("a / b <= 0.5", 0.0),
    ("a >= a", 1.0),
    ("c < a - b", 1.0),
]


@pytest.mark.parametrize(("text", "expected"), AGREEING)
def test_both_evaluators_agree_with_the_expected_value(text: str, expected: float) -> None:
    expr = parse(text)
    explained, _ = evaluate_explained(expr, VALUES)
    compiled = evaluate_compiled(expr, VALUES)
    assert explained == pytest.approx(expected)
    assert compiled == pytest.approx(expected)
    assert explained == pytest.approx(compiled, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(("text", "expected"), AGREEING)
def test_substituted_text_evaluates_to_the_same_value(text: str, expected: float) -> None:
    """The substituted text is the calculation shown to the user: it must compute the value it reports."""
    value, substituted = evaluate_explained(parse(text), VALUES)
    assert not parse(substituted).names  # every name was replaced by its value
    again, _ = evaluate_explained(parse(substituted), {})
    assert again == pytest.approx(value, rel=1e-5)
    assert again == pytest.approx(expected, rel=1e-5)


def test_substituted_text_shows_the_values() -> None:
    value, substituted = evaluate_explained(parse("sales_3m / sales_3m_prev - 1"),
                                            {"sales_3m": 412, "sales_3m_prev": 380})
    assert substituted == "(412 / 380) - 1"
    assert value == pytest.approx(412 / 380 - 1)
    _, shown = evaluate_explained(parse("inventory_3m - inventory_3m_prev"),
                                  {"inventory_3m": 4.25, "inventory_3m_prev": 6.5})
    assert shown == "4.25 - 6.5"
    _, flag = evaluate_explained(parse("sales_peak_3m / sales_3m > 0.5"), {"sales_peak_3m": 900, "sales_3m": 1200})
    assert flag == "900 / 1200 > 0.5"


@pytest.mark.parametrize("evaluator", ["explained", "compiled"])
@pytest.mark.parametrize("text", ["a / (b - 4.5)", "a / (c + 2)", "1 / (a - 3)"])
def test_division_by_zero_is_missing_value(evaluator: str, text: str) -> None:
    expr = parse(text)
    with pytest.raises(MissingValue, match="division by zero"):
        if evaluator == "explained":
            evaluate_explained(expr, VALUES)
        else:
            evaluate_compiled(expr, VALUES)


@pytest.mark.parametrize("text", ["a / 0", "a / (2 - 2)", "a / (1 / 1e999)", "a * 1e999", "a / (b * 0)", "a / (b - b)",
                                  "a / -(0 * b + 0 / c)", "a / (avg(b, 3) - avg(b, 3))"])
def test_a_constant_zero_divisor_or_infinite_constant_is_refused_when_parsed(text: str) -> None:
    with pytest.raises(ExpressionError, match=r"divides by a constant zero|is not a finite number"):
        parse(text, series="avg(" in text)


def test_a_divisor_zero_only_for_some_values_still_parses() -> None:
    """Trial 141: the zero folding refuses a divisor zero whatever its names hold, never one that may be."""
    for text in ("a / (b - c)", "a / (b * 2)", "a / (b - avg(b, 3))", "a / (0 + b)"):
        parse(text, series=True)


@pytest.mark.parametrize("evaluator", ["explained", "compiled"])
@pytest.mark.parametrize("bad", [None, math.nan, math.inf, -math.inf, "absent"])
def test_missing_or_non_finite_input_is_missing_value(evaluator: str, bad: object) -> None:
    values = {"a": 3.0} if bad == "absent" else {"a": 3.0, "b": bad}
    expr = parse("a + b")
    with pytest.raises(MissingValue, match="b is missing"):
        if evaluator == "explained":
            evaluate_explained(expr, values)  # type: ignore[arg-type]
        else:
            evaluate_compiled(expr, values)  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "values", "why", "message"), [
    ("a / b - 1", {"a": 3.0, "b": 0.0}, "b is zero", "division by zero in `a / b`: b is zero"),
    ("a / (b - c) * 100", {"a": 3.0, "b": 7.0, "c": 7.0}, "a divisor is zero",
     "division by zero in `a / (b - c)`: `b - c` is zero"),
    ("a / b", {"a": 3.0}, "b is missing", "b is missing"),
    ("a * a - b * b", {"a": 1e200, "b": 1e200}, "the result is not finite",
     "`a * a - b * b` is not a finite number (an overflow)"),
    ("a * a", {"a": 1e200}, "the result is not finite", "`a * a` is not a finite number (an overflow)"),
])
def test_why_an_expression_has_no_value_is_said_without_its_constants(
        text: str, values: dict[str, float], why: str, message: str) -> None:
    """A candidate's gap says why in words (`rate_change undefined: miles_prev is zero`); an overflow (inf, or inf
    - inf: NaN, which sorted anywhere at the cap) is undefined in every evaluator, as a division by zero is."""
    expr = parse(text)
    found = why_undefined(expr, values)
    assert found is not None and found.why == why and str(found) == message
    with pytest.raises(MissingValue):
        evaluate_compiled(expr, values)
    columns = {name: np.array([values.get(name, np.nan)]) for name in expr.names}
    assert evaluate_many(expr, columns)[1].tolist() == [True]
    assert why_undefined(expr, {"a": 3.0, "b": 2.0, "c": 1.0}) is None


def test_missing_value_is_not_an_expression_error() -> None:
    """Callers catch MissingValue to declare a gap; it must not be confused with a bad pack."""
    assert not issubclass(MissingValue, ExpressionError)
    assert issubclass(MissingValue, ArithmeticError)
    assert issubclass(ExpressionError, ValueError)


def test_compiled_evaluation_has_no_builtins() -> None:
    """Even a name that is a builtin in Python is just a (missing) metric here."""
    expr = parse("len + 1")
    with pytest.raises(MissingValue):
        evaluate_compiled(expr, {})
    assert evaluate_compiled(expr, {"len": 2.0}) == 3.0


_CELL = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 1e308, 5e-324]),
                  st.floats(allow_nan=False, allow_infinity=False, width=64))


@given(text=st.sampled_from(["a / b - 1", "(a - b) / (c - b)", "-a * 2 + b / 3", "a - -b", "a / (b * c)",
                             "c", "a + b + c", "(a + 1) / (b - 1) * c"]),
       rows=st.lists(st.tuples(_CELL, _CELL, _CELL), min_size=1, max_size=30))
def test_many_at_once_is_each_one_to_the_last_bit(text: str, rows: list[tuple[float | None, ...]]) -> None:
    """`evaluate_many` (the cap's scores for a wide night) gives, candidate by candidate, `evaluate_compiled`'s
    value bit for bit, and is undefined exactly where it raises MissingValue."""
    expr = parse(text)
    columns = {name: np.array([np.nan if r[i] is None else r[i] for r in rows]) for i, name in enumerate("abc")}
    values, undefined = evaluate_many(expr, columns)
    for row, value, gone in zip(rows, values, undefined, strict=True):
        try:
            one = evaluate_compiled(expr, dict(zip("abc", row, strict=True)))
        except MissingValue:
            assert gone, row
            continue
        assert not gone, row
        assert float(value).hex() == one.hex(), (row, one, value)  # hex tells -0.0 from 0.0, and shows nan
