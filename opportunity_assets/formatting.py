"""How numbers are written for people. The brief's number check reads them back the same way."""

from __future__ import annotations

import math
from collections.abc import Iterable


def significant(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant figures, never in exponent notation (the brief's number check reads
    `5.35e+03` as 5.35 and +03): thousands and up with separators and never fewer than their whole figures (5,348;
    1,234.57 to 6 figures), smaller values with as many decimals as the figures need (53.5, 0.0535), trailing zeros
    dropped."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
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
