"""How numbers are written for people. The brief's number check reads them back the same way."""

from __future__ import annotations

import math
from collections.abc import Iterable

HUGE = 1e15
"""From here on a number is written in exponent notation (`significant`): no count, price or rate a source holds is
so large, and a corrupt cell (1.7e308) was written in 309 figures with separators, 412 characters of a brief line."""


TINY = 1e-9
"""Below this size a number is written in exponent notation too: listings over a corrupt 1e307 sales were a month
of inventory written in 305 decimals."""


def significant(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant figures: thousands and up with separators and never fewer than their whole
    figures (5,348; 1,234.57 to 6 figures), smaller values with as many decimals as the figures need (53.5, 0.0535),
    trailing zeros dropped; `HUGE` and beyond, or below `TINY`, in exponent notation, `1.7e+308`, which the brief's
    number check reads as one number (`grounding`)."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    if abs(value) >= HUGE or abs(value) < TINY:
        mantissa, exponent = f"{value:.{max(digits - 1, 0)}e}".split("e")
        return (mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa) + "e" + exponent
    places = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def written(value: float) -> str:
    """A number the pack wrote, echoed as written: a whole 1000000 as such, where `:g` wrote `1e+06` (trial 55: a
    filter's bound quoted back in a form the user never typed); others as `:g` writes them (0.05, 2.5)."""
    return str(int(value)) if math.isfinite(value) and float(value).is_integer() else f"{value:g}"


def signed(value: float, digits: int = 4) -> str:
    """`significant` with its sign always written: +1,235, -0.0312."""
    return ("+" if value >= 0 else "") + significant(value, digits)


def format_value(value: float, unit: str) -> str:
    if math.isfinite(value) and abs(value) >= HUGE:
        return ("$" if unit == "usd" else "") + significant(value, 4)
    if unit == "usd":
        return f"${value:,.0f}"
    if unit == "count":
        return f"{value:,.0f}"
    if unit == "percent":
        return f"{value * 100:+.1f}%"
    if unit == "share":  # a level: 23%, and two figures below 10% (a 5.7% default rate is not 6%)
        percent = value * 100
        return f"{percent:.0f}%" if abs(percent) >= 9.95 or percent == 0 else f"{significant(percent, 2)}%"
    if unit == "months":
        return f"{value:.1f}"
    if unit == "days":
        return f"{value:.0f}"
    return significant(value)


def format_score(score: float, thresholds: Iterable[float] = ()) -> str:
    """A score to one decimal, or to as many more (up to 6) as keep it on its own side of each of `thresholds`
    (the pack's strong and marginal, `Thresholds.levels`): 59.958 under a strong of 60 is "59.96", never "60.0"
    beside the MARGINAL it is (trial 47: "turns it MARGINAL (score → 60.0)"). The brief's number check reads
    either as the stored score rounded."""
    text = f"{score:.1f}"
    for places in range(2, 7):
        if all((float(text) >= t) == (score >= t) for t in thresholds):
            break
        text = f"{score:.{places}f}"
    return text


def percent_change(change: float) -> str:
    """A relative change as a whole percent with its sign, `+12%`; one beyond `HUGE` percent in exponent notation
    (`significant`): a corrupt figure's `+1e+310%`, not 311 figures."""
    percent = change * 100
    if math.isfinite(percent) and abs(percent) >= HUGE:
        return signed(percent, 2) + "%"
    return f"{change:+.0%}"


def times(factor: float) -> str:
    """How many times larger, as a whole number (`12`), or in exponent notation from `HUGE` on (`significant`)."""
    return significant(factor, 2) if math.isfinite(factor) and abs(factor) >= HUGE else f"{factor:.0f}"


def is_number(text: str) -> bool:
    """Whether text as written reads as a plain number (`63`, `1963.0`, `" 2.5 "`): a cell, or a value a pack wrote
    in quotes."""
    try:
        float(text)
    except ValueError:
        return False
    return True
