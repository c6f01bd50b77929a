"""`opportunity check`: a few rows whose period is written otherwise than the rest (pure): the period key and column
they are written in, and how to read them (a list of `period_format` patterns, a `where` keeping empty ones out,
or mending them in the source)."""

from __future__ import annotations

import calendar
import importlib
import re
from datetime import date, datetime

from opportunity_assets.check.patterns import day_and_month_swapped_in, fitting_patterns, iso_patterns
from opportunity_assets.check.periods import (
    ISO_MISREAD,
    both_ways,
    commonest_values,
    empty_period_column,
    spec_at,
    written_periods,
)
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.periods import FIRST_YEAR, LAST_YEAR
from opportunity_assets.sources import shapes
from opportunity_assets.sources.spec import SourceSpec

_PERIOD_KEY_VALUES = {"year_column": "a whole year (1963, or 1963.0)",
                      "month_column": "a month, 1 to 12 or its name (Jan, February)",
                      "day_column": "a day its month has (1 to 28, 29, 30 or 31)",
                      "quarter_column": "a quarter, 1 to 4", "week_column": "an ISO week, 1 to 53"}
"""What each period key's column holds in every row, as a few rows written otherwise are told."""


_PERIOD_KEY_RANGES = {"year_column": (FIRST_YEAR, LAST_YEAR), "month_column": (1, 12), "day_column": (1, 31),
                      "quarter_column": (1, 4), "week_column": (1, 53)}
"""The whole numbers each period key's column may hold (the query reads no other: `shapes._period_sql`)."""


_MONTH_NAMES = {n.lower() for n in [*calendar.month_name, *calendar.month_abbr] if n}


def _not_held(key: str, value: str) -> bool:
    """Whether a period key's column cannot hold `value`: empty, no whole number (a month also by its name), or a
    number out of the key's range (month 13)."""
    if key == "month_column" and value.lower() in _MONTH_NAMES:
        return False
    if not re.fullmatch(r"\d+(\.0*)?", value):
        return True
    low, high = _PERIOD_KEY_RANGES[key]
    return not low <= float(value) <= high


def period_key_of(src: SourceSpec, reasons: list[str]) -> tuple[str, str]:
    """The period key and column a few unparsed rows are written otherwise in: `period_column`, or the first of
    the year, month, ... columns whose value in a reason (`period unparseable: iyear=1970-12-31, month=3`) is not
    what that column holds (trial 30: `1970-12-31` in 300 rows of a year column was "300 quarantined rows have no
    period", naming no key and no value), else the day column of a day its month has not (31 November). Trial 33:
    month 13 and 31 November were both blamed on the year column, "expected a whole year"."""
    if src.period_column:
        return "period_column", str(src.period_column)
    keys = [(key, str(column)) for key in _PERIOD_KEY_VALUES if (column := getattr(src, key)) is not None]
    for reason in reasons:
        written = dict(part.partition("=")[::2] for part in reason.partition(": ")[2].split(", "))
        for key, column in keys:
            if _not_held(key, written.get(column, "").strip()):
                return key, column
    days = [(key, column) for key, column in keys if key == "day_column"]
    return days[0] if days else keys[0] if keys else ("period_column", "")


def _days(values: list[str], pattern: str) -> set[int] | None:
    """The days of the month `pattern` reads `values` on, or None where one does not parse by strptime."""
    try:
        return {datetime.strptime(v.strip(), pattern).day for v in values if v.strip()}
    except ValueError:
        return None


def day_or_month_first(values: list[str], fits: list[str], grain: str) -> list[str]:
    """`fits` with a day-first pattern before its month-first twin where both read every value and only the
    day-first one puts each on its month's first day, as a source of months, quarters or years dates its rows
    (trial 86: `01/11/1979` among monthly ISO dates `1979-10-01`, told `'%m/%d/%Y'`, 11 January, which put the
    rows on months they already had: duplicated keys, November still missing). Month-first stays first otherwise
    (`_PATTERNS`' order), a value that tells them apart deciding."""
    if grain not in ("month", "quarter", "year") or not fits:
        return fits
    first, twin = fits[0], day_and_month_swapped_in(fits[0])
    if "%m" not in first or "%d" not in first or twin not in fits:
        return fits
    if _days(values, first) != {1} and _days(values, twin) == {1}:
        return [twin, *(p for p in fits if p != twin)]
    return fits


_TIME_RE = importlib.import_module("_strptime").TimeRE()
"""strptime's own regular expressions of a pattern (`_strptime.TimeRE`): a value's year, month and day as the
pattern places them, where `datetime.strptime` refuses the whole for a day its month has not."""

_MONTH_NUMBERS = {n.lower(): i for names in (calendar.month_name, calendar.month_abbr)
                  for i, n in enumerate(names) if n}


def day_its_month_has_not(value: str, patterns: list[str]) -> str | None:
    """Where `value` is written as a pattern of `patterns` says (an ISO date's by default) but names a day its
    month has not, `1999-02-30`: that month and its days ("February 1999 has 28 days"); else None. Trial 101: such a
    row was "written otherwise than the rest", which it is not: the calendar lacks the day."""
    for pattern in patterns or ["%Y-%m-%d"]:
        try:
            found = _TIME_RE.compile(pattern).match(value.strip())
        except (KeyError, ValueError, re.error):  # a directive strptime has not: no such value is read by it
            continue
        parts = found.groupdict() if found else {}
        month_text = parts.get("m") or parts.get("b") or parts.get("B") or ""
        month = int(month_text) if month_text.isdigit() else _MONTH_NUMBERS.get(month_text.lower(), 0)
        if not (parts.get("Y") and parts.get("d") and 1 <= month <= 12 and int(parts["Y"]) >= 1):
            continue
        year, day = int(parts["Y"]), int(parts["d"])
        days = calendar.monthrange(year, month)[1]
        if day > days:
            return f"{date(year, month, 1):%B} {year} has {days} days"
    return None


def _bare_years(pack: CriteriaPack, column: str) -> list[str]:
    """The commonest period values of `column` that parsed, when each is a bare year (`1992`); else none."""
    parsed = commonest_values(pack, "source", shapes.written(column),
                              f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL", limit=20)
    return parsed if parsed and all(re.fullmatch(r"\d{4}", v.strip()) for v in parsed) else []


def periods_written_otherwise(pack: CriteriaPack, reasons: list[str], within: str = "source") -> str:
    """A few rows whose period does not parse, as the rest do: how they are written, and the list of patterns that
    reads them beside the rest, where a common pattern parses them (dates in two formats in one column). Of the
    main source, or of the joined table `within` names (its year, month, ... columns)."""
    src = spec_at(pack, within)
    values = written_periods(reasons)
    key, column = period_key_of(src, reasons)
    said = (f"{len(reasons)} row{'s' if len(reasons) > 1 else ''} of `{within}.{key}` {column!r} "
            f"{'are' if len(reasons) > 1 else 'is'} written otherwise than the rest (e.g. {values[0]!r}), "
            f"{'their' if len(reasons) > 1 else 'its'} period unparseable")
    if not src.period_column:  # year, month, ... columns: whole numbers each (a month also by its name)
        empty = empty_period_column(reasons)
        if empty is not None:
            return (f"{said}: {'they are' if len(reasons) > 1 else 'it is'} empty: `source.where: [{{column: {empty}, "
                    "not_in: ['']}]` keeps such rows out, or mend them in the source")
        return (f"{said}: expected {_PERIOD_KEY_VALUES[key]} as the rest write it: mend "
                f"{'them' if len(reasons) > 1 else 'it'} in the source")
    given = src.period_patterns
    missing = [day_its_month_has_not(v, list(given)) for v in values]
    if values and all(missing):
        plural = len(reasons) > 1
        return (f"{len(reasons)} row{'s' if plural else ''} of `{within}.{key}` {column!r} "
                f"name{'' if plural else 's'} a day its month has not (e.g. {values[0]!r}: {missing[0]}), "
                f"{'their' if plural else 'its'} period unparseable: mend {'them' if plural else 'it'} in the source")
    if not given and within == "source" and all(re.fullmatch(r"\d+", v.strip()) for v in values) \
            and (rest := _bare_years(pack, src.period_column)):
        # (trial 103: `19977` among bare years was told `'days since 1899-12-30'`, beside `'%Y-%m-%d'` as "the
        # rest's pattern for ISO dates": a list that reads 1992 as no year, and the typo as 1954)
        them = "them" if len(reasons) > 1 else "it"
        return (f"{said}: the rest are bare years (e.g. {rest[0]!r}), and a whole number of another length is no "
                f"year: a year mistyped? expected a year as the rest write it: mend {them} in the source")
    fits = day_or_month_first(values, fitting_patterns(values, given), src.grain)
    if given and not fits and iso_patterns(values) and within == "source" and both_ways(pack, src.period_column):
        return f"{said}: {ISO_MISREAD}"  # (the pattern's own rows are ISO too, misread: trial 76)
    if given and not fits and (isos := iso_patterns(values)):  # ISO rows beside a pattern's: the list reads both
        return (f"{said}: they are ISO dates or timestamps, which the pattern's rows are not: a column written two "
                f"ways is read with a list of patterns, the first that parses a value reading it, `period_format: "
                f"{[*given, *isos]}`")
    if not fits:
        empty = empty_period_column(reasons)
        if empty is not None:
            return (f"{said}: {'they are' if len(reasons) > 1 else 'it is'} empty: `source.where: [{{column: {empty}, "
                    "not_in: ['']}]` keeps such rows out, or mend them in the source")
        return f"{said}: mend them in the source"
    isos = [] if given else both_ways(pack, src.period_column or "")
    others = given or isos[:1] or ["%Y-%m-%d"]
    first = "" if given else f" (the rest's pattern first: {others[0]!r} for ISO dates)"
    return (f"{said}; {fits[0]!r} parses them: a column written two ways is read with a list of patterns, the "
            f"first that parses a value reading it, `period_format: {[*others, fits[0]]}`{first}")
