"""Periods at a pack's grain: windows count "periods back from the latest published period" (0 = that period).

A period is identified by its first day: the day itself, the Monday of an ISO week, the first of a month, of a
quarter (January, April, July, October) or of a year. `Grain` does the calendar arithmetic in Python and names the
same arithmetic in DuckDB SQL, so the scan's query and the pure code agree on every period.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

GrainName = Literal["day", "week", "month", "quarter", "year"]
GRAINS: tuple[GrainName, ...] = ("day", "week", "month", "quarter", "year")

FIRST_YEAR, LAST_YEAR = 1, 2999
"""The years a source's period may fall in: any a calendar date holds from year 1 (DuckDB's DATE and Python's
`date` alike: temperature records from 1751, ice-core gases from year 20) to 2999 (a year 9999 is a placeholder,
and a row dated after today is quarantined anyway). A column of two-digit years (`63` for 1963) is told apart by
`check`, every year of it below 100, not by refusing early years."""

FIRST_NIGHT = date(1800, 1, 1)
"""The earliest night the UI's daily partitions offer (`partitions.first_night`): Dagster writes a partition key's
year with as many digits as it has (`21-12-31`, no date), and a partition a day from year 21 would be 730,000 of
them. Rows before it are history the first nights' windows read."""


@dataclass(frozen=True)
class Grain:
    """One of `GRAINS`, with its calendar arithmetic."""

    name: GrainName

    @property
    def per_year(self) -> int:
        """Periods in a year: the lag of a year-on-year change (a year grain compares with the year before)."""
        return {"day": 365, "week": 52, "month": 12, "quarter": 4, "year": 1}[self.name]

    @property
    def plural(self) -> str:
        return f"{self.name}s"

    def count(self, n: int) -> str:
        """`n` periods in words: "1 week", "3 weeks"."""
        return f"{n} {self.name if n == 1 else self.plural}"

    def start(self, day: date) -> date:
        """The first day of the period holding `day`."""
        if self.name == "day":
            return day
        if self.name == "week":
            return day - timedelta(days=day.weekday())
        if self.name == "month":
            return day.replace(day=1)
        if self.name == "quarter":
            return date(day.year, (day.month - 1) // 3 * 3 + 1, 1)
        return date(day.year, 1, 1)

    def back(self, period: date, periods: int) -> date:
        """The period `periods` before `period` (negative: after)."""
        if self.name == "day":
            return period - timedelta(days=periods)
        if self.name == "week":
            return period - timedelta(weeks=periods)
        months = {"month": 1, "quarter": 3, "year": 12}[self.name] * periods
        index = period.year * 12 + period.month - 1 - months
        return date(index // 12, index % 12 + 1, 1)

    def later(self, day: date, periods: int) -> date:
        """The same day `periods` later (any day, not only a period start); a month-based grain keeps the day of
        the month, or the month's last day when it is shorter: 2008-02-29 + 12 months = 2009-02-28."""
        if self.name in ("day", "week"):
            return day + timedelta(days=periods * (7 if self.name == "week" else 1))
        index = day.year * 12 + day.month - 1 + {"month": 1, "quarter": 3, "year": 12}[self.name] * periods
        year, month = divmod(index, 12)
        return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))

    def end(self, period: date) -> date:
        """The last day of the period starting `period`."""
        return self.back(period, -1) - timedelta(days=1)

    def between(self, earlier: date, later: date) -> int:
        """Periods from `earlier` to `later` (both period starts)."""
        if self.name == "day":
            return (later - earlier).days
        if self.name == "week":
            return (later - earlier).days // 7
        months = (later.year - earlier.year) * 12 + later.month - earlier.month
        return months // {"month": 1, "quarter": 3, "year": 12}[self.name]

    def label(self, period: date) -> str:
        """How a period is written for a reader: 2015-07-03, 2015-W27, 2015-07, 2015-Q3, 2015 (year 20: 0020)."""
        if self.name == "day":
            return period.isoformat()  # four-digit years, as DuckDB's strftime writes them (`0020-01-01`)
        if self.name == "week":
            year, week, _ = period.isocalendar()
            return f"{year:04d}-W{week:02d}"
        if self.name == "month":
            return f"{period.year:04d}-{period.month:02d}"
        if self.name == "quarter":
            return f"{period.year:04d}-Q{(period.month - 1) // 3 + 1}"
        return f"{period.year:04d}"

    # ---- the same arithmetic in DuckDB SQL ------------------------------------------------------------------
    def sql_start(self, day_sql: str) -> str:
        """SQL for the first day of the period holding the DATE `day_sql`."""
        return f"date_trunc('{self.name}', {day_sql})::DATE"

    def sql_end(self, period_sql: str) -> str:
        """SQL for the last day of the period starting at `period_sql`."""
        return f"({period_sql} + INTERVAL 1 {self.name.upper()} - INTERVAL 1 DAY)::DATE"

    def sql_label(self, period_sql: str) -> str:
        """SQL for `label` of the period starting at `period_sql`."""
        if self.name == "quarter":
            return f"(strftime({period_sql}, '%Y') || '-Q' || quarter({period_sql}))"
        pattern = {"day": "%Y-%m-%d", "week": "%G-W%V", "month": "%Y-%m", "year": "%Y"}[self.name]
        return f"strftime({period_sql}, '{pattern}')"

    def sql_between(self, earlier_sql: str, later_sql: str) -> str:
        """SQL for the periods from `earlier_sql` to `later_sql` (both period starts)."""
        if self.name == "week":
            return f"(datediff('day', {earlier_sql}, {later_sql}) // 7)"
        return f"datediff('{self.name}', {earlier_sql}, {later_sql})"


MONTH = Grain("month")

EVERY = ("day", "week-end", "month-end", "quarter-end", "year-end")
"""Which nights a backfill or backtest runs: every day, or the last day of every week (Sunday), month, quarter or
year."""


def window_label(anchor: date | None, window: tuple[int, int], grain: Grain) -> str:
    """`2015-05..2015-07` for window (0, 2) anchored at July 2015 (monthly); a single period is shown once."""
    if anchor is None:
        return "no published period"
    lo, hi = window
    first, last = grain.label(grain.back(anchor, hi)), grain.label(grain.back(anchor, lo))
    return first if first == last else f"{first}..{last}"


def rows_in_window(raw_data: list[dict[str, Any]], window: tuple[int, int]) -> list[dict[str, Any]]:
    lo, hi = window
    return [row for row in raw_data if lo <= int(row["periods_ago"]) <= hi]


def last_possible_night(today: date | None = None) -> date:
    """Nights are UTC days that have ended: the latest is yesterday."""
    return (today or datetime.now(UTC).date()) - timedelta(days=1)
