"""Month windows: "months back from the latest published period", as the pack's metrics count them."""

from __future__ import annotations

from datetime import date
from typing import Any


def months_before(anchor: date, months: int) -> date:
    index = anchor.year * 12 + anchor.month - 1 - months
    return date(index // 12, index % 12 + 1, 1)


def window_label(anchor: date | None, window: tuple[int, int]) -> str:
    """`2015-05..2015-07` for window (0, 2) anchored at July 2015; a single month is shown once."""
    if anchor is None:
        return "no published period"
    lo, hi = window
    first, last = months_before(anchor, hi), months_before(anchor, lo)
    return f"{first:%Y-%m}" if first == last else f"{first:%Y-%m}..{last:%Y-%m}"


def rows_in_window(raw_data: list[dict[str, Any]], window: tuple[int, int]) -> list[dict[str, Any]]:
    lo, hi = window
    return [row for row in raw_data if lo <= int(row["months_ago"]) <= hi]
