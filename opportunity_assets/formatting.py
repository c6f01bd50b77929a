"""How numbers are written for people. The brief's number check reads them back the same way."""

from __future__ import annotations


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
    return f"{value:.3g}"


def format_score(score: float) -> str:
    return f"{score:.1f}"
