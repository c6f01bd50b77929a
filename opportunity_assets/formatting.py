"""How numbers are written for people. The brief's number check reads them back the same way."""

from __future__ import annotations

import math


def significant(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant figures, never in exponent notation (the brief's number check reads
    `5.35e+03` as 5.35 and +03): thousands and up as whole numbers with separators (5,348), smaller values with
    as many decimals as the figures need (53.5, 0.0535), trailing zeros dropped."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    places = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_value(value: float, unit: str) -> str:
    if unit == "usd":
        return f"${value:,.0f}"
    if unit == "count":
        return f"{value:,.0f}"
    if unit == "percent":
        return f"{value * 100:+.1f}%"
    if unit == "share":
        return f"{value * 100:.0f}%"
    if unit == "months":
        return f"{value:.1f}"
    if unit == "days":
        return f"{value:.0f}"
    return significant(value)


def format_score(score: float) -> str:
    return f"{score:.1f}"
