"""`opportunity check`'s judgment of how a source's rows are dated: which strptime pattern reads a column of dates
(`suggested_pattern`, tried on the values no pattern of the pack reads), period keys no row parses with (each said
by the key at fault, with examples and the pattern that reads them), a grain finer than the rows, a latest period
cut short, and coverage bounds that trading days cannot reach. Each finding is one line naming the pack key.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

import polars as pl

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import written
from opportunity_assets.periods import FIRST_NIGHT, FIRST_YEAR, LAST_YEAR
from opportunity_assets.records import Candidate, FilterResult
from opportunity_assets.sources import shapes
from opportunity_assets.sources.formats import describe_location, infer_format, join_index
from opportunity_assets.sources.probes import (
    dates_beside,
    latest_by_period,
    rows_matching,
    telling_apart,
    value_counts,
    vintage_periods,
)
from opportunity_assets.sources.reading import SourceError
from opportunity_assets.sources.spec import (
    DECIMAL_YEAR,
    SINCE_UNITS,
    UNIX_SCALES,
    UNIX_TIME,
    SourceSpec,
    count_of,
    is_named,
    is_unix,
    since,
)

UNPARSED_PERIODS = 0.1
"""A source whose rows in reach have more than this share of periods that do not parse is read with the wrong
period keys (a pattern that fits some values only: `%d/%m/%Y` for 1/13/2002), not with a few bad cells."""


def _two_digit_years(within: str, column: str, alone: bool) -> str:
    """What a year column of two-digit years (`63` for 1963, nlswork's `68`..`88`) may do: write the century, or,
    a year column alone, be read as text by `%y` (a year after this one a century earlier), no Python needed."""
    if not alone:
        return " (two digits: write the century, 1963 for 63)"
    return (f" (two digits: write the century, 1963 for 63, or read them with `{within}.period_column: {column}` "
            "and `period_format: '%y'` instead of `year_column`: a year after this one is read a century earlier)")


def spec_at(pack: CriteriaPack, within: str) -> SourceSpec:
    """The source spec at the key `within`: `source`, or a joined table's `source.join.N`."""
    index = join_index(within)
    return pack.source if index is None else pack.source.join[index]


def commonest_values(pack: CriteriaPack, within: str, value: str, where: str, limit: int = 3) -> list[str]:
    """The commonest values of a typed rows' column among rows matching `where` (`probes.value_counts`)."""

    join = join_index(within)
    return value_counts(pack, value, where, join=join, limit=limit)


def day_and_month_swapped(pack: CriteriaPack) -> str | None:
    """A `period_format` that reads the day as the month (`%Y-%d-%m` over `2022-07-01`, `%m/%d/%Y` over day-first
    dates of the 1st): every row falls in January, as a column of years would, but the pattern with the two swapped
    reads the same values into several months. That key, with the swapped pattern; None otherwise."""
    src = pack.source
    if not isinstance(src.period_format, str) or not src.period_column or \
            not {"%d", "%m"} <= set(re.findall(r"%.", src.period_format)):
        return None
    swapped = src.period_format.replace("%m", "\0").replace("%d", "%m").replace("\0", "%d")
    values = commonest_values(pack, "source", shapes.written(src.period_column), shapes.IN_SCOPE, limit=400)
    months = {}
    for value in values:
        try:
            months[value] = datetime.strptime(value.strip(), swapped).month
        except ValueError:
            return None
    if len(set(months.values())) < 2:
        return None
    shown = [v for v, month in months.items() if month != 1][:3]
    return (f"key `source.period_format`: got {src.period_format!r}; it reads every value of {src.period_column!r} "
            f"into January, its day read as the month (e.g. {shown}), while {swapped!r} reads them into months "
            f"of their own: expected {swapped!r}, the month and the day in the column's order")


def not_publication_dates(pack: CriteriaPack, within: str, rows: int) -> str:
    """A `published_column` whose cells are no dates (a weekday, yes/no, a bare year): that key, with examples."""
    src = spec_at(pack, within)
    column = src.published_column or ""
    examples = commonest_values(pack, within, shapes.written(column),
                                f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL AND {shapes.PUBLISHED} IS NULL")
    years = " (a bare year names no day: every row would be known on 1 January, before its year ended)" \
        if examples and all(re.fullmatch(r"\d{4}(\.0+)?", e.strip()) for e in examples) else ""
    return (f"key `{within}.published_column`: got {column!r}; its values are not dates (e.g. {examples}), so none "
            f"of the {rows} rows says when it became known{years}: expected a column of the dates each row was "
            "published (ISO dates or timestamps), or no `published_column`: a row is then known "
            "`publication_lag_days` after its period ends")


def _counting_headers(src: SourceSpec, unparsed: list[str], fits: str) -> str:
    """The clause naming `wide.counted_from` for a wide source's headers that are no periods but counts (`wk1`,
    `wk2`, ...) no pattern reads, or nothing. Trial 24: billboard's `wk1` to `wk76` were told `'%b-%Y'`, and
    `period_format: 'wk%W'` then "names no year"."""
    if src.wide is None or src.wide.across != "period" or src.wide.counted_from is not None or fits \
            or not all(count_of(v) is not None for v in unparsed):
        return ""
    return ("; headers that count periods from a date each row holds (`wk1`, `wk2`: weeks on a chart from the week "
            "a song entered it) are read by `wide.counted_from` naming that column, with `counted_in: week`")


def counted_from_unparsed(column: str, within: str, unparsed: list[str], which: str) -> str:
    """A wide source's `counted_from` whose dates (`which` of them) are no ISO dates: that key, with examples, from
    the periods as `shapes._counted_period` writes them unparsed (`2/26/2000 + wk1`). Trial 24: billboard's
    `date.entered` written `2/26/2000`."""
    written = list(dict.fromkeys(v.rsplit(" + ", 1)[0] for v in unparsed))
    return (f"key `{within}.wide.counted_from`: got {column!r}; {which} are not ISO dates (e.g. {written[:3]}), so no "
            "header's period can be counted from them: expected a column of ISO dates (2000-02-26), each row's first "
            "period, the file exported so")


_TELLS_DAY = r"^\s*\d{1,2}[^0-9]+(1[3-9]|2[0-9]|3[01])[^0-9]|^\s*(1[3-9]|2[0-9]|3[01])[^0-9]+\d{1,2}[^0-9]"
"""A date written day and month first, in either order, whose first or second number is above 12 (`13/01/2004`,
`1/30/2004`): a value that tells which of the two is the day."""


def telling_day_from_month(pack: CriteriaPack, within: str, column: str, where: str, values: list[str]) -> list[str]:
    """`values` (the commonest, each as often as the next: a day-first column's first 50 are the 1st to the 5th of
    every month) with a few of the column's values that tell day from month added, so that the pattern named for
    them is the one every row parses with, not both orders "these values do not tell" (trial 37: '%m/%d/%Y' named
    first over a year of `dd/mm/yyyy` dates)."""
    telling = commonest_values(pack, within, shapes.written(column),
                               f"{where} AND regexp_matches({shapes.written(column)}, '{_TELLS_DAY}')")
    return [*values, *(v for v in telling if v not in values)]


def not_dates(pack: CriteriaPack, within: str) -> str:
    """A `period_column` none of whose values is a date (a time of day, a weekday): that key, with examples."""
    src = spec_at(pack, within)
    column = src.period_column or ""
    unparsed = commonest_values(pack, within, shapes.written(column), f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NULL",
                                limit=50)
    if src.wide is not None and src.wide.counted_from is not None:
        return counted_from_unparsed(src.wide.counted_from, within, unparsed, "its values")
    if _years_as_numbers(unparsed):
        return (f"key `{within}.period_column`: got {column!r}; its values are whole years written as numbers (e.g. "
                f"{unparsed[:3]}), which no date pattern reads: expected `{within}.year_column: {column}` in its place "
                "(it reads whole years, 2001 or 2001.0)")
    decimal = [v for v in unparsed if _DECIMAL_YEAR.match(v.strip()) and float(v) % 1]
    if decimal and all(_DECIMAL_YEAR.match(v.strip()) for v in unparsed):
        return (f"key `{within}.period_format`: got none for column {column!r}; its values are decimal years (e.g. "
                f"{decimal[:3]}: R's time index, the year plus the fraction of it gone), which no date pattern "
                f"reads: expected `period_format: {DECIMAL_YEAR}`, which reads them")
    fits = suggested_pattern(telling_day_from_month(pack, within, column, f"{shapes.IN_SCOPE} AND {shapes.PERIOD} "
                                                    "IS NULL", unparsed))
    if not fits and src.wide is None and (numbered := _row_numbers(pack, within, column, unparsed)) is not None:
        return numbered
    if not fits and src.wide is None and _counts(unparsed):
        given = repr(src.period_format) if src.period_format else "none"
        return (f"key `{within}.period_format`: got {given} for column {column!r}; its values are whole numbers (e.g. "
                f"{unparsed[:3]}), a count of days (or weeks, hours) from a first day, not dates: expected the "
                "count's unit and its day 0, `period_format: 'days since 2020-02-29'` (day 1 is then 2020-03-01; "
                f"units {list(SINCE_UNITS)}), or a column of dates")
    if src.wide is not None and src.wide.across == "period":  # its headers are the period column's text
        return (f"key `{within}.wide.columns`: its headers are not periods (e.g. {unparsed[:3]}): expected headers "
                "that name a period (a bare year, ISO dates, 2015-07, 2015 Q3, 1991 W06), or `period_format` naming "
                "how they are written " + (f"({fits.removeprefix('; ')})" if fits else "(e.g. '%b-%Y' for Mar-2018)")
                + _counting_headers(src, unparsed, fits))
    return (f"key `{within}.period_column`: got {column!r}; its values are not dates (e.g. {unparsed[:3]}): expected "
            "a column of dates (ISO dates or timestamps, 2015-07, 2015 Q3, 1991 W06, a bare year), or `period_format` "
            "naming how the dates are written "
            + (f"({fits.removeprefix('; ')})" if fits else "(e.g. '%b-%Y' for Mar-2018)"))


_ROW_NUMBER_COLUMNS = frozenset({"rownames", "x", "unnamed: 0", "...1", "index", "row", "rowid", ""})
"""Headers R's `write.csv`, pandas' `to_csv` and readr give a data frame's row numbers."""


def _row_numbers(pack: CriteriaPack, within: str, column: str, unparsed: list[str]) -> str | None:
    """A `period_column` of whole numbers that are the rows' own numbers, not a count of days: one named as a data
    frame's row numbers are (`rownames`), or any on a month, quarter or year grain, whose periods no count of days
    reads. The file holds no date (trial 32: AER's USMacroG, an R time series matrix, is exported with `rownames`
    1..204 and no time column; told `period_format: 'days since 2020-02-29'`, which put 204 quarters in 7 months):
    the key, with the DuckDB `query` that dates the rows from the first period. None otherwise."""
    src, grain = spec_at(pack, within), pack.grain.name
    if not _counts(unparsed) or (column.strip().lower() not in _ROW_NUMBER_COLUMNS
                                 and grain not in ("month", "quarter", "year")):
        return None
    step = {"month": 1, "quarter": 3, "year": 12}.get(grain)
    where = f"'{src.path}'" if src.path else "<the table>"
    adds = (f"DATE '1950-01-01' + to_months({step} * ({column} - 1))" if step is not None else
            f"DATE '1950-01-01' + {7 if grain == 'week' else 1} * ({column} - 1)")
    return (f"key `{within}.period_column`: got {column!r}; its values are whole numbers (e.g. {unparsed[:3]}), the "
            "rows' own numbers, not dates: the file holds none (R's `write.csv` of a time series matrix drops its "
            "time): expected a column of dates, such as one a DuckDB `query` adds from the first period (its date in "
            f"place of 1950-01-01, one {grain} a row), `format: duckdb` with `query: \"SELECT *, {adds} AS date "
            f"FROM {where}\"` and `period_column: date`")


def unix_time_of_no_time(pack: CriteriaPack, within: str = "source") -> str | None:
    """A Unix `period_format` (`%s`, `unix_ms`) over values each too small for Unix time as a column of it is written
    (`unix_time`: 9 digits' worth of seconds or more), so every row falls in 1970's first moments (or days): that key,
    with the moment the biggest value names, and the pattern that reads a count of days when they are one; or
    None."""
    src = spec_at(pack, within)
    pattern, column = src.period_format, src.period_column
    if not isinstance(pattern, str) or not is_unix(pattern) or not column:
        return None
    values = commonest_values(pack, within, shapes.written(column), shapes.IN_SCOPE, limit=50)
    per_second = UNIX_SCALES[pattern]
    if not values or not all(_number(v) and abs(float(v)) < 10**8 * per_second for v in values):
        return None
    biggest = max(values, key=float)
    moment = datetime.fromtimestamp(float(biggest) / per_second, tz=UTC).replace(tzinfo=None)
    said = (f"key `{within}.period_format`: got {pattern!r} for column {column!r}; its values are no Unix time (e.g. "
            f"{values[:3]}: {_UNIT_NAMES[per_second]} since 1970-01-01 UTC, {biggest.strip()!r} is {moment} UTC)")
    if _counts(values):
        return (f"{said}: they are whole numbers, a count of days (or weeks, hours) from a first day: expected "
                "the count's unit and its day 0, `period_format: 'days since 2020-02-29'` (day 1 is then 2020-03-01)")
    coarser = next((name for name, scale in UNIX_SCALES.items() if name != UNIX_TIME and scale < per_second
                    and all(unix_time(v, scale) is not None for v in values)), None)
    if coarser is not None:  # (trial 37: seconds under `unix_ms` were told "the pattern that reads them", none named)
        first, scale = values[0].strip(), UNIX_SCALES[coarser]
        return (f"{said}: expected `period_format: {coarser}`, which reads them: Unix time, {_UNIT_NAMES[scale]} "
                f"since 1970-01-01 UTC ({first} is {unix_time(first, scale)} UTC)")
    return f"{said}: expected the pattern that reads them, or `{pattern}` over a column of Unix time"


def _counts(values: list[str]) -> bool:
    """Whether periods as written are all whole numbers of up to 6 digits (`4`, `107`, `79.0`): a count of days (or
    weeks) from a first day, as a study numbers its days (medicaldata's `pan_day`), which no date pattern reads."""
    return bool(values) and all(re.fullmatch(r"\s*-?\d{1,6}(\.0+)?\s*", v) for v in values)


def two_digit_years(pack: CriteriaPack, within: str) -> str | None:
    """A `year_column` every dated row of which holds a year below 100 (`63` for 1963: Ecdat Cigar's, nlswork's
    `68`..`88`), or None. Such years date their rows (the source reads years from `FIRST_YEAR`, 20 for an ice
    core's gases), in the first century: the key, with examples and what reads them. A column that also holds a
    year of three digits or more (20, 40, ..., 2000) is years written in full; one whose other years are all from
    1800 on (trial 31: `78`..`98` beside 2000..2016, a spreadsheet's years typed two ways) is two-digit years among
    full ones, their rows read 19 centuries early, in no night's window."""
    src = spec_at(pack, within)
    if src.year_column is None or src.period_column is not None or src.known_at is not None:
        return None
    dated = f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL"
    year = f"year({shapes.PERIOD})"
    if commonest_values(pack, within, year, f"{dated} AND {year} >= 100", 1):
        low = commonest_values(pack, within, shapes.written(src.year_column), f"{dated} AND {year} < 100")
        if not low or commonest_values(pack, within, year,
                                       f"{dated} AND {year} >= 100 AND {year} < {FIRST_NIGHT.year}", 1):
            return None
        full = commonest_values(pack, within, shapes.written(src.year_column), f"{dated} AND {year} >= 100", 2)
        return (f"key `{within}.year_column`: got {src.year_column!r}; some years it holds are below 100 (e.g. "
                f"{low}) beside years written in full (e.g. {full}), and none from 100 to {FIRST_NIGHT.year - 1}: "
                "years of two digits among full ones, their rows read in the first century, in no night's window"
                f"{_two_digit_years(within, src.year_column, False)}: expected whole years written in full, such "
                "as 1963 or 1963.0")
    years = commonest_values(pack, within, shapes.written(src.year_column), dated)
    if not years:
        return None
    alone = not any((src.month_column, src.day_column, src.quarter_column, src.week_column))
    return (f"key `{within}.year_column`: got {src.year_column!r}; every year it holds is below 100 (e.g. {years}), "
            f"the first century's{_two_digit_years(within, src.year_column, alone)}: expected whole years written "
            "in full, such as 1963 or 1963.0")


def not_years(pack: CriteriaPack, within: str) -> str:
    """Year (and month, day) columns no row of which dates a period: two-digit years (`63` for 1963), dates or
    timestamps in the year column, months that are names. The key whose values fail, with examples; a date column
    is pointed to `period_column`."""
    src = spec_at(pack, within)
    keys = [(k, c) for k, c in (("year_column", src.year_column), ("month_column", src.month_column),
                                ("day_column", src.day_column), ("quarter_column", src.quarter_column),
                                ("week_column", src.week_column)) if c]
    unparsed = {c: commonest_values(pack, within, shapes.written(c), f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NULL",
                                    limit=50) for _, c in keys}
    year = src.year_column or ""
    years = unparsed[year]
    if years and all(_iso(v) for v in years):
        return (f"key `{within}.year_column`: got {year!r}; its values are dates, not years (e.g. {years[:3]}): "
                f"expected `period_column: {year}` for a column of dates (truncated to `grain`), or a column of "
                "whole years")
    numbers = [float(v) for v in years if _number(v)]
    if numbers and not any(FIRST_YEAR <= n <= LAST_YEAR for n in numbers):
        return (f"key `{within}.year_column`: got {year!r}; its values are no years from {FIRST_YEAR} to "
                f"{LAST_YEAR} (e.g. {years[:3]}): expected whole years written in full, such as 1963 or 1963.0")
    if not years or numbers:
        for key, column in keys[1:]:
            if unparsed[column]:
                wanted = {"month_column": "months from 1 to 12 (or their English names, Jan or January)",
                          "quarter_column": "quarters from 1 to 4",
                          "week_column": "ISO weeks from 1 to 53 (53 only in a year that has it)"}.get(
                    key, "days of the month from 1 to 31")
                return (f"key `{within}.{key}`: got {column!r}; no row's {year} and {column} make a date (e.g. "
                        f"{column} {unparsed[column][:3]}): expected whole {wanted}, or `period_column` with "
                        "`period_format` for dates written otherwise")
    # (trial 26: `FY1990` was told `period_format` with no pattern; the README's promise is to name one that reads)
    pattern = suggested_pattern(years) if years else ""
    then = f", or `period_column: {year}` with a `period_format`{pattern}" if pattern else \
        ", or `period_column` with `period_format` for dates written otherwise"
    return (f"key `{within}.year_column`: got {year!r}; its values are not whole years (e.g. {years[:3]}): expected "
            f"whole years such as 1963 or 1963.0{then}")


_YEARS = f"{FIRST_YEAR} to {LAST_YEAR}"
"""The whole-number years a year column may hold, as a problem writes them."""


def _likely(year: int) -> bool:
    """Whether a year is one a guessed pattern or unit may land in to be suggested, 1800 to 2999: the source reads
    years from `FIRST_YEAR`, but `'%Y'` reads `68` as year 68 and Unix time in the wrong unit lands in 1970 or
    far ahead; a guess that lands in an early year is the wrong guess."""
    return 1800 <= year <= LAST_YEAR


def _number(value: str) -> bool:
    """Whether a cell as written is a plain number (`63`, `1963.0`)."""
    try:
        float(value)
    except ValueError:
        return False
    return True


def not_parsed_by(pack: CriteriaPack, within: str) -> str:
    """A `period_format` none of the `period_column`'s values parses with: that key, with examples and a pattern
    that parses them, or none when they are ISO dates or timestamps (a Parquet or database column of dates)."""
    src = spec_at(pack, within)
    column = src.period_column or ""
    unparsed = commonest_values(pack, within, shapes.written(column), f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NULL",
                                limit=50)
    said = (f"key `{within}.period_format`: got {src.period_format!r} for column {column!r}; none of its values "
            f"parses with it (e.g. {unparsed[:3]})")
    if unparsed and all(_iso(v) for v in unparsed):
        return f"{said}: expected no `period_format`: they are ISO dates or timestamps, read as such without one"
    if unparsed and all(_QUARTER.match(v) for v in unparsed):
        return f"{said}: {_QUARTERS_READ}"
    if _years_as_numbers(unparsed):
        return (f"{said}: they are whole years written as numbers: expected `{within}.year_column: {column}` in place "
                "of `period_column` and `period_format` (it reads whole years, 2001 or 2001.0)")
    if _bare_years(unparsed):  # (trial 55: told they were a file's row numbers, naming `period_column`)
        return (f"{said}: they are years, read as such without a pattern: expected no `period_format` (or '%Y'), "
                f"or `{within}.year_column: {column}` in place of both")
    if any(float(v) % 1 for v in unparsed if _DECIMAL_YEAR.match(v.strip())) and all(
            _DECIMAL_YEAR.match(v.strip()) for v in unparsed):  # (trial 32: `%Y` over R's index, told directives)
        return (f"{said}: they are decimal years (R's time index, the year plus the fraction of it gone), which no "
                f"strptime pattern reads: expected `period_format: {DECIMAL_YEAR}`, which reads them")
    if src.wide is None and (numbered := _row_numbers(pack, within, column, unparsed)) is not None:
        return numbered  # (no pattern reads a row's number: `decimal_year` over R's `rownames`)
    fits = suggested_pattern(unparsed, src.period_patterns)
    return f"{said}: expected a strptime pattern its values parse with" + \
        (fits or " (`%b` a month's abbreviated name, `%B` its full name, `%y` a year of two digits, `%Y` of four)")


_QUARTER = re.compile(r"^\s*(\d{4} ?-? ?[Qq][1-4]|[Qq][1-4] ?-? ?\d{4})\s*$")
"""A quarter as the source reads it without a `period_format` (`shapes`: `2015Q3`, `2015 Q3`, `2015-Q3`, `Q3 2015`)."""
_QUARTERS_READ = ("expected no `period_format`: they are quarters (2015Q3, 2015 Q3, 2015-Q3 or Q3 2015), read as such "
                  "without one (strptime has no quarter directive)")
"""What a `period_format` over quarters is told."""


def _bare_years(values: list[str]) -> bool:
    """Whether periods as written are all years of four digits (`1998`): a bare year the source reads without a
    pattern, which a pattern of months or days (`'%Y-%m'`) does not parse; not a row's number."""
    return bool(values) and all(re.fullmatch(r"\s*\d{4}\s*", v) and _likely(int(v)) for v in values)


def _years_as_numbers(values: list[str]) -> bool:
    """Whether periods as written are all whole years written as decimal numbers (`2001.0`, a column of years that
    held a missing value, as R and pandas export it): `year_column` reads them, no date pattern does."""
    found = [re.fullmatch(r"\s*(\d{4})\.0+\s*", v) for v in values]
    return bool(found) and all(m is not None and _likely(int(m[1])) for m in found)


def _iso(value: str) -> bool:
    """Whether a period as written is an ISO date or timestamp the source reads without a pattern (`2018-03-01`,
    `2013-01-01T06:00:00Z`): ISO's extended form only, as DuckDB casts it; Python also takes the basic form,
    `19750103`, which the source does not read (trial 35: `'%Y-%m-%d'` over it was told to drop the pattern, and
    without one that its values are not dates)."""
    if _ISO_EXTENDED.match(value.strip()) is None:
        return False
    try:
        datetime.fromisoformat(value.strip())
    except ValueError:
        return False
    return True


_ISO_EXTENDED = re.compile(r"\d{4}-\d{2}-\d{2}(?![\d])")
"""The start of an ISO date in the extended form, year, month and day apart (`1975-01-03`, not `19750103`)."""


_ISO_WRITTEN = re.compile(r"\d{4}-\d{2}-\d{2}(?P<sep>[T ])?(?P<time>\d{2}:\d{2}(?P<seconds>:\d{2})?"
                          r"(?P<fraction>\.\d{1,6})?)?(?P<zone>Z)?")


_ISO_WEEK_WRITTEN = re.compile(r"\d{4}(?P<gap>[ -]*)(?P<w>[Ww])\d{2}")
"""An ISO week as the source reads it without a pattern, year first: `2011-W22`, `2011 W22`, `2011W22`."""


def iso_pattern(value: str) -> str | None:
    """The strptime pattern that reads an ISO date or timestamp as written (`2017-01-01T06:00:42Z` is
    '%Y-%m-%dT%H:%M:%SZ'), or an ISO week (`2011-W22` is '%G-W%V': trial 51's weeks written three ways were told
    'W%V %G' alone, which leaves the others unread), for a list of patterns beside another way; None for one with
    an offset (`-05:00`: a pattern's `%z` would move it to UTC, where the ISO reading keeps its clock) or not ISO."""
    if (week := _ISO_WEEK_WRITTEN.fullmatch(value.strip())) is not None:
        return f"%G{week['gap']}{week['w']}%V"
    match = _ISO_WRITTEN.fullmatch(value.strip())
    if match is None or bool(match["sep"]) != bool(match["time"]):
        return None
    pattern = "%Y-%m-%d"
    if match["time"]:
        pattern += f"{match['sep']}%H:%M" + (":%S" if match["seconds"] else "") + (".%f" if match["fraction"] else "")
    return pattern + ("Z" if match["zone"] else "")


def iso_patterns(values: list[str]) -> list[str]:
    """The patterns reading each of ISO `values` as written, commonest first (one, mostly); empty when any is
    none."""
    patterns = [iso_pattern(v) for v in values if v.strip()]
    if not patterns or None in patterns:
        return []
    return [p for p, _ in Counter(p for p in patterns if p).most_common()]


def both_ways(pack: CriteriaPack, column: str) -> list[str]:
    """The ISO patterns of the period values that did parse (no pattern, or the given patterns' ISO rows), for a
    list that reads them beside the rows written otherwise."""
    parsed = commonest_values(pack, "source", shapes.written(column),
                              f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL", limit=20)
    return iso_patterns(parsed)


SERIAL_DAYS = "days since 1899-12-30"
"""The `period_format` reading a spreadsheet's serial dates: Excel counts 1900-01-01 as day 1 and a 29 February 1900
no calendar has, so every date from March 1900 on is that many days since 1899-12-30 (LibreOffice's day 0)."""


_PATTERNS = ("%m/%d/%Y", "%d/%m/%Y", "%m/%d/%Y %H:%M:%S", "%d/%m/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%d/%m/%Y %H:%M",
             "%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M %p", "%m/%d/%y", "%d/%m/%y", "%m/%d/%y %H:%M", "%d/%m/%y %H:%M",
             "%Y/%m/%d", "%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M", "%Y/%m", "%m/%Y", "%d.%m.%Y", "%d.%m.%Y %H:%M:%S",
             "%d.%m.%Y %H:%M", "%d.%m.%y", "%Y.%m.%d", "%m-%d-%Y", "%d-%m-%Y", "%m-%Y", SERIAL_DAYS, "%Y%m%d",
             "%Y%m%d%H%M%S",
             "%Y%m", "%b-%Y", "%b %Y", "%B %Y", "%b-%y", "%b %y", "%Y-%b", "%Y %b", "%d-%b-%Y", "%d-%b-%y",
             "%d %b %Y", "%d %B %Y", "%b %d %Y", "%b %d, %Y", "%B %d %Y", "%B %d, %Y", "%a %b %d %H:%M:%S %Y",
             "%a %b %d %H:%M:%S %z %Y", "%a, %d %b %Y %H:%M:%S", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d %H:%M:%S %z",
             "%Y-%m-%d %H:%M:%S %Z", "W%V %G", "W%V-%G", "W%V/%G", UNIX_TIME, "unix_ms", "unix_us", "unix_ns")
"""Common ways a date is written, tried in this order on the values a period pattern does not parse: the first
that parses them all is suggested (month-first before day-first: a value that tells them apart decides). Twitter's
API writes `created_at` as `Wed Dec 23 17:38:18 +0000 2009`; an ISO week written week first, `W26 1987`, is read
only by a pattern (the year first, `1987 W26`, is read without one)."""


def _serial_day(value: str) -> datetime | None:
    """The moment a spreadsheet's serial date names (`SERIAL_DAYS`), for one of 1920 to 2099 as written (7306 to
    73050, a fraction being the time of day), or None: a count of a study's days (4, 107) or a row's number is none,
    and `%Y%m` would read `27397` as July 2739."""
    if not re.fullmatch(r"\d{4,5}(\.\d+)?", value.strip()) or not _SERIAL_SPAN[0] <= float(value) <= _SERIAL_SPAN[1]:
        return None
    return datetime(1899, 12, 30) + timedelta(days=float(value))


_SERIAL_SPAN = (7306, 73050)
"""The serial dates of 1920-01-01 and 2099-12-31, the span a column of them is suggested for."""


_UNIT_NAMES = {1: "seconds", 10**3: "milliseconds", 10**6: "microseconds", 10**9: "nanoseconds"}


def unix_time(value: str, per_second: int = 1) -> datetime | None:
    """The UTC moment a cell of Unix time names in units of 1/`per_second` s since 1970, as a column of it is
    written (9 to 11 digits' worth of seconds: 1973 to 5138), or None."""
    digits = len(str(per_second)) - 1
    if not re.fullmatch(rf"-?\d{{{9 + digits},{11 + digits}}}(\.\d*)?", value.strip()):
        return None
    try:
        moment = datetime.fromtimestamp(float(value) / per_second, tz=UTC).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        return None
    return moment if _likely(moment.year) else None


def _counted(value: str, counted: tuple[int, datetime]) -> datetime | None:
    """The moment a count from a first moment names (`spec.since`), as `shapes` reads it, or None."""
    if not re.fullmatch(r"-?\d{1,7}(\.\d*)?", value.strip()):
        return None
    per_unit, origin = counted
    try:
        moment = origin + timedelta(seconds=round(float(value) * per_unit, 6))
    except OverflowError:
        return None
    return moment if _likely(moment.year) else None


def _parses(value: str, pattern: str) -> bool:
    """Whether `pattern` reads `value` as a date of a year a suggestion may name (`_likely`)."""
    if is_unix(pattern):
        return unix_time(value, UNIX_SCALES[pattern]) is not None
    if pattern == DECIMAL_YEAR:
        return bool(_DECIMAL_YEAR.match(value.strip()) or re.fullmatch(r"(1[89]|2\d)\d\d", value.strip()))
    if pattern == SERIAL_DAYS:
        return _serial_day(value) is not None
    if (counted := since(pattern)) is not None:
        return _counted(value, counted) is not None
    if "%V" in pattern and "%u" not in pattern:  # Python reads an ISO week only with its day, as DuckDB does not
        value, pattern = f"{value} 1", f"{pattern} %u"
    try:
        return _likely(datetime.strptime(value, pattern).year)
    except ValueError:
        return False


def fitting_patterns(values: list[str], given: Sequence[str] = ()) -> list[str]:
    """The patterns of `_PATTERNS` (but those `given`) that parse every one of `values`, in its order; where every
    value starts with the same text of no digit (R's `X2000` for a column named 2000, `FY2015`), those patterns and
    a bare year after it (`'X%Y'`)."""
    values = [v.strip() for v in values if v.strip()]
    lead = _common_lead(values)
    tried = [*_PATTERNS, *(lead + q for q in ("%Y", *_PATTERNS) if not is_named(q))] if lead.strip() else _PATTERNS
    fits = [p for p in tried if p not in given and all(_parses(v, p) for v in values)] if values else []
    zeros = re.fullmatch(r".*\d(\.0+)", values[0]) if values and not fits else None
    if zeros is not None and all(v.endswith(zeros[1]) for v in values):
        # (trial 35: `19750103.0`, whole numbers a column with a gap exports as decimals, told strptime's directives)
        whole = [v.removesuffix(zeros[1]) for v in values]
        return [p + zeros[1] for p in fitting_patterns(whole) if "%" in p and p + zeros[1] not in given]
    return fits


def _common_lead(values: list[str]) -> str:
    """The text of no digit (and no `%`) that every value starts with: `X` of `X2000`, `X2001`."""
    lead = re.sub(r"[\d%].*", "", values[0], flags=re.DOTALL) if values else ""
    while lead and not all(v.startswith(lead) for v in values):
        lead = lead[:-1]
    return lead


_YEAR_SPAN = re.compile(r"^\s*(\d{4})\s*([-/])\s*(\d{2}|\d{4})\s*$")
"""An academic or fiscal year as written: a year and the next (`2012-13`, `2012/13`, `2012-2013`)."""


def year_span_pattern(values: Sequence[str]) -> str | None:
    """The `period_format` reading `values` when each names a year and the next, as an academic or fiscal year is
    written (`2012-13`: '%Y-%y'; `2012/2013`: '%Y/%Y'), one way throughout; None otherwise. DuckDB's strptime
    keeps the later of two years, so each reads as the year it ends in: its figures known after that year ends,
    by the lag rule, never before the span does (the year it starts in would read 2012-13 as known in 2013,
    halfway through it)."""
    patterns = set()
    for value in (v for v in values if v.strip()):
        match = _YEAR_SPAN.match(value)
        if match is None:
            return None
        first, later = int(match[1]), int(match[3])
        if later != ((first + 1) % 100 if len(match[3]) == 2 else first + 1):
            return None
        patterns.add(f"%Y{match[2]}{'%y' if len(match[3]) == 2 else '%Y'}")
    return patterns.pop() if len(patterns) == 1 else None


def year_span_clause(values: Sequence[str]) -> str:
    """A clause naming the pattern of academic or fiscal years (`year_span_pattern`), with what it reads; empty
    when `values` are not such years. Without it, a span whose later part is 01 to 12 (`2007-08`) reads as an ISO
    month (August 2007) and the others (`2012-13`) as no date."""
    pattern = year_span_pattern(values)
    if pattern is None:
        return ""
    example = next(v.strip() for v in values if v.strip())
    ends = int(_YEAR_SPAN.match(example)[1]) + 1  # type: ignore[index]
    return (f"; they are academic or fiscal years, a year and the next ({example!r}): `period_format: "
            f"{pattern!r}` reads each as the year it ends in ({ends}), known once that year ends (by the lag rule)")


def year_spans_read_as_months(pack: CriteriaPack) -> list[str]:
    """Problems: a period column with no `period_format` whose every value is an academic or fiscal year written a
    year and the next (`2007-08`, `2010-11`), each of which ISO reads as a month (August 2007): the rows land in
    the year they start in, known by the lag rule months before the span ends, and check said ok (trial 21: the
    College Scorecard's `2012-13` failed while `2007-08` was read as a month). Each names the key of its table."""
    problems = []
    for within, spec in [("source", pack.source), *((f"source.join.{i}", j) for i, j in enumerate(pack.source.join))]:
        if not spec.period_column or spec.period_patterns or (spec.wide is not None and spec.wide.across == "period"):
            continue
        values = commonest_values(pack, within, shapes.written(spec.period_column), shapes.IN_SCOPE, limit=50)
        spans = [_YEAR_SPAN.match(v) for v in values if v.strip()]
        if len(spans) < 2 or year_span_pattern(values) is None or not all(m and int(m[3]) <= 12 for m in spans):
            continue
        first = spans[0]
        assert first is not None
        month = date(int(first[1]), int(first[3]), 1).strftime("%B %Y")
        problems.append(f"key `{within}.period_format`: got none for column {spec.period_column!r}; every value "
                        f"is a year and the next (e.g. {[v for v in values if v.strip()][:3]}), which ISO reads as a "
                        f"month ({first[0].strip()!r} as {month}), each row landing in the year it starts in: "
                        f"expected `period_format: {year_span_pattern(values)!r}` if they are academic or fiscal "
                        f"years (each then read as the year it ends in, {int(first[1]) + 1}, known once that year "
                        "ends, by the lag rule), or dates written as dates")
    return problems


YEARS_BESIDE = 0.1
"""A share of a period column's dated rows above which its bare years beside the grain's periods are another
frequency's rows, not a typing slip."""
_BARE_YEAR = r"^\s*\d{4}(\.0+)?\s*$"
"""A period as written that is a bare year (`2014`, `2014.0`), in DuckDB's regular expressions."""
_WRITTEN_COARSER = {
    "year": ("bare years", _BARE_YEAR),
    "quarter": ("quarters", r"^\s*(\d{4} ?-? ?[Qq][1-4]|[Qq][1-4] ?-? ?\d{4})\s*$"),
    "month": ("months", r"^\s*\d{4}-\d{2}\s*$"),
}
"""Periods as written that name a whole year, quarter or month (`2014`, `2014 Q3`, `2014-07`: the shapes the
period parser reads with no pattern), by the grain they stand for, with their name in a message."""
_GRAIN_ORDER = ("day", "week", "month", "quarter", "year")


def _known(spec: SourceSpec, unit: str, grain: str) -> str:
    """When a coarser period's row read as its first period of the grain is known: by the lag rule, before the
    period it stands for has ended; by its `published_column`, as that says (a month's figure then stands for its
    first week alone)."""
    if spec.published_column:
        return f"known on its `published_column` date, its figure that {grain}'s alone"
    return (f"known {spec.publication_lag_days} days after that {grain} ends (`publication_lag_days`), before the "
            f"{unit} it stands for has ended")


def years_beside_periods(pack: CriteriaPack) -> list[str]:
    """Problems: a period column (of the source or a joined table, no `period_format`) whose values are periods of
    a coarser grain beside periods of the pack's: bare years (`2014`) beside quarters (`2014Q1`: a statistics
    office's download of annual and quarterly rows together, validate's samplonomy), or months (`2011-07`) beside
    weeks (trial 51: a quarter of a weekly panel's rows written as their month, read as each month's first week and
    said ok). A year is read as its first quarter (month, week, day), a month as its first week or day: known
    `publication_lag_days` after that period ends, before the period it stands for has ended (a look-ahead), and
    met by that period's rows alone, or refused beside its own row as a duplicated key. Each names its table's
    `period_column`, with the `where` that keeps the grain's rows when a column tells the two apart (the main
    source's column of years alone is `source.grain`'s: every row in January; a joined table's, of any coarser
    period alone, `coarser_periods_joined`'). A few among many periods (`YEARS_BESIDE`) are a typing slip, their
    rows quarantined."""

    finer = _GRAIN_ORDER.index(pack.grain.name)
    problems = []
    for within, spec in pack.source.keyed:
        if not spec.period_column or spec.period_patterns or (spec.wide is not None and spec.wide.across == "period"):
            continue
        join = join_index(within)
        written, dated, rows, units = _coarser_written(pack, spec.period_column, finer, join)
        for unit, name, match, bare in units:
            if not bare or bare == rows or bare <= YEARS_BESIDE * rows:
                continue
            grain = pack.grain.name
            shown = commonest_values(pack, within, written, f"{dated} AND {match}")
            read = f"on `grain: {grain}` a {unit} is read as its first {grain}, {_known(spec, unit, grain)},"
            others = commonest_values(pack, within, written, f"{dated} AND NOT {match}")
            apart = telling_apart(pack, match, join)
            where = (f"`{within}.where: [{{column: {apart[0]}, in: [{', '.join(apart[2])}]}}]` ({apart[0]!r} is "
                     f"{' or '.join(map(repr, apart[1]))} on the {unit}s' rows)" if apart is not None
                     else f"a `{within}.where` keeping the {pack.grain.plural}' rows alone (a column saying each "
                          f"row's frequency), or the {unit}s' rows out of the file")
            problems.append(f"key `{within}.period_column`: got {spec.period_column!r}; {bare} of its {rows} rows "
                            f"are {name} (e.g. {shown}) beside {pack.grain.plural} (e.g. {others}): {read} or "
                            f"refused as a duplicated key beside the {grain}'s own row: expected {where}")
            break
    return problems


def _coarser_written(pack: CriteriaPack, column: str, finer: int, join: int | None
                     ) -> tuple[str, str, int, list[tuple[str, str, str, int]]]:
    """The table's period `column` as written, the condition of its dated rows in scope and their count, and for each
    grain coarser than the pack's (index `finer` in `_GRAIN_ORDER`): its name, the plural its values are said in,
    the condition of a value written as one, and the rows so written."""
    written = shapes.written(column)
    dated = f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL"
    units = [(unit, name, f"regexp_matches({written}, '{pattern}')")
             for unit, (name, pattern) in _WRITTEN_COARSER.items() if _GRAIN_ORDER.index(unit) > finer]
    counts = rows_matching(pack, [dated, *(f"{dated} AND {match}" for *_, match in units)], join=join)
    return written, dated, counts[0], [(u, n, m, c) for (u, n, m), c in zip(units, counts[1:], strict=True)]


def coarser_periods_joined(pack: CriteriaPack) -> list[str]:
    """Problems: a joined table (no `period_format`) whose every dated value names a period of a coarser grain than
    the source's: bare years on quarters, quarters on months, months (`2011-07`) on weeks or days. Each is read as
    its first period of the grain (the week of its first day), known `publication_lag_days` after that period ends,
    before the year, quarter or month it stands for has ended (a look-ahead: trial 51's monthly counts joined to
    weekly murders read June's total on 15 June), and met by the source's rows of that period alone. Names the
    joined table's `period_column`."""

    finer = _GRAIN_ORDER.index(pack.grain.name)
    problems = []
    for within, spec in pack.source.keyed:
        join = join_index(within)
        if join is None or not spec.period_column or spec.period_patterns or \
                (spec.wide is not None and spec.wide.across == "period"):
            continue
        written, dated, rows, units = _coarser_written(pack, spec.period_column, finer, join)
        found = next(((unit, name, match) for unit, name, match, n in units if rows and n == rows), None)
        if found is None:
            continue
        unit, name, match = found
        grain = pack.grain.name
        shown = commonest_values(pack, within, written, f"{dated} AND {match}")
        problems.append(f"key `{within}.period_column`: got {spec.period_column!r}; its values are {name} "
                        f"(e.g. {shown}): on `grain: {grain}` a {unit} is read as its first {grain}, "
                        f"{_known(spec, unit, grain)}, and met by the source's rows of that {grain} alone: expected a "
                        f"joined table of the source's grain, {pack.grain.plural} (a {unit}'s figure cannot join "
                        f"{pack.grain.plural} point in time)")
    return problems


def suggested_pattern(values: list[str], given: Sequence[str] = ()) -> str:
    """A clause naming a `period_format` that parses every one of `values` (periods as written, that `given`, or
    the ISO reading, does not), from `_PATTERNS`; empty when none does. Where the values do not tell day from month
    (1/3/2018), both orders are named. Academic or fiscal years (`2012-13`) are named as such (`year_span_clause`)."""
    if (span := year_span_pattern(values)) is not None and span not in given:
        return year_span_clause(values)
    fits = fitting_patterns(values, given)
    if not fits:
        return ""
    if fits[0] == SERIAL_DAYS:  # (trial 35: Excel's day numbers were told a strptime pattern, or day 0 2020-02-29)
        first = next(v.strip() for v in values if v.strip())
        return (f"; '{SERIAL_DAYS}' parses them: a spreadsheet's serial dates, Excel's and LibreOffice's day numbers "
                f"({first} is {_serial_day(first):%Y-%m-%d}), as a column of dates formatted as numbers exports them")
    if is_unix(fits[0]):
        first, per_second = next(v.strip() for v in values if v.strip()), UNIX_SCALES[fits[0]]
        return (f"; '{fits[0]}' parses them: Unix time, {_UNIT_NAMES[per_second]} since 1970-01-01 UTC ({first} is "
                f"{unix_time(first, per_second)} UTC)")
    swapped = [p for p in fits[1:] if p.replace("%m", "\0").replace("%d", "%m").replace("\0", "%d") == fits[0]]
    if swapped:
        return (f"; {fits[0]!r} or {swapped[0]!r} parses them (these values do not tell day from month: the first "
                "is month-first)")
    return f"; {fits[0]!r} parses them"


def empty_period_column(reasons: list[str]) -> str | None:
    """The period column every one of these quarantine reasons finds empty (`period unparseable: built_at=`, a year
    column's NaN), which a `where` keeps out; None when some row's period is written, or a reason is another."""
    columns = set()
    for reason in reasons:
        if not reason.startswith("period unparseable: "):
            return None
        parts = [part.partition("=") for part in reason.removeprefix("period unparseable: ").split(", ")]
        if any(not sep or value.strip() for _, sep, value in parts):
            return None
        columns.add(parts[0][0])
    return next(iter(columns)) if len(columns) == 1 else None


def undated_at_fault(pack: CriteriaPack, found: list[str], unparsed: list[str], seen: int, said: bool) -> list[str]:
    """The candidates' problems, those whose cause is rows of no period (each leaves its entity's every metric
    unknown, in any window) made one line naming the period key (`periods_unparsed`, unless it is said already):
    `1984-85` in 1 of 50 rows of a year column made four problems naming the filters' and inputs' metrics, and no
    line named `source.year_column`."""
    undated = [p for p in found if "is quarantined (period unparseable)" in p]
    if not undated or not unparsed:
        return found
    kept = [p for p in found if p not in undated]
    if said:
        return kept
    return [f"{periods_unparsed(pack, unparsed, seen)} (a row of no period leaves its entity's every metric "
            "unknown, as it may lie in any window: no candidate has a value of "
            f"{', '.join(p.split('; ')[0].split(': got ')[1] for p in undated)})", *kept]


def written_periods(reasons: list[str], limit: int = 50) -> list[str]:
    """The periods as written that reasons `period unparseable: when=Mar 2018` (or `year=20x4, month=11`) quote,
    the first `limit` distinct ones."""
    values = []
    for reason in reasons:
        text = reason.split(": ", 1)[1] if ": " in reason else ""
        parts = [part.split("=", 1)[1] if "=" in part else part for part in text.split(", ")] if "=" in text else \
            [text]
        values.append(", ".join(parts))
    return list(dict.fromkeys(values))[:limit]


_DECIMAL_YEAR = re.compile(r"^(1[89]|2\d)\d\d\.\d+$")
"""A period written as a decimal year (1981.25 for the second quarter of 1981: an R time series' index)."""


_ISO_WEEK = re.compile(r"^\s*(\d{4}) ?-? ?[Ww](\d{2})\s*$")
"""ISO week text, the year first (`1991 W06`, `1991-W06`, `1991W06`): read without a `period_format`."""

_ISO_WEEK_FIRST = re.compile(r"^\s*[Ww](\d{2}) ?-? ?(\d{4})\s*$")
"""ISO week text, the week first (`W06 1991`, `W06-1991`: a spreadsheet's export), which only a pattern reads."""


def _iso_week(value: str) -> tuple[str, str, bool] | None:
    """The year and week ISO week text names, and whether its week comes first; None for other text."""
    if match := _ISO_WEEK.match(value):
        return match[1], match[2], False
    if match := _ISO_WEEK_FIRST.match(value):
        return match[2], match[1], True
    return None


def _iso_reading(pattern: str) -> str:
    """The pattern that reads ISO weeks as `pattern` lays them out: `%V` for `%W` or `%U`, `%G` for `%Y`."""
    return re.sub(r"%-?[UW]", "%V", pattern).replace("%Y", "%G")


def calendar_week_patterns(spec: SourceSpec) -> list[str]:
    """The patterns of `period_format` that count weeks from the year's first Monday or Sunday (`%W`, `%U`)."""
    return [p for p in spec.period_patterns if re.search(r"%-?[UW]", p)]


def iso_weeks_read_by_calendar(patterns: list[str], values: list[str]) -> str | None:
    """A problem when a column's values are ISO week text (`1991 W06`) and `period_format` reads them by `%W` or
    `%U`, which count weeks from the year's first Monday (Sunday): a week later than ISO in a year that starts on a
    Tuesday to Thursday, so every such row sits in the next week and the year's last ISO week collides with the next
    year's first. Names an example read otherwise; None when the values are no ISO weeks or none is read otherwise."""
    weeks = [(v, w) for v in values if (w := _iso_week(v))]
    if not weeks or len(weeks) < len(values):
        return None
    for value, (year, week, week_first) in weeks:
        try:
            iso = datetime.strptime(f"{year} {week} 1", "%G %V %u").date()
        except ValueError:
            continue
        by = "%U" if any("U" in p for p in patterns) else "%W"
        calendar = datetime.strptime(f"{year} {week} {'0' if by == '%U' else '1'}", f"%Y {by} %w").date()
        if calendar != iso:
            said = (f"key `source.period_format`: got {patterns[0]!r}; its values are ISO weeks (e.g. "
                    f"{value.strip()!r}, the week of Monday {iso}), which `{by}` counts from the year's "
                    f"first {'Sunday' if by == '%U' else 'Monday'} ({calendar}): expected ")
            if week_first:  # no reading without a pattern: the same pattern's ISO directives
                return f"{said}{_iso_reading(patterns[0])!r}, its ISO week `%V` of the ISO year `%G`"
            return (f"{said}no `period_format` (ISO week text, 1991 W06, 1991-W06 or 1991W06, is read without it) "
                    "or '%G W%V'")
    return None


_NO_SUCH_PERIOD = (
    (re.compile(r"^\d{4}\s*-?\s*Q(\d+)$|^Q(\d+)\s+\d{4}$", re.IGNORECASE), "quarter", 4),
    (re.compile(r"^\d{4}\s*-?\s*W(\d+)$", re.IGNORECASE), "week", 53),
    (re.compile(r"^\d{4}-(\d{1,2})$"), "month", 12))
"""Periods written as the reader reads them natively, each with its number's name and greatest value: `1999 Q5`,
`2015 W54`, `2015-13` name a period no calendar has (a typo), not another way of writing dates."""


def no_such_period(value: str) -> str | None:
    """`a quarter 5` for `1999 Q5`: a period written in a form the reader reads whose number no year has; None for
    any other value."""
    for form, name, greatest in _NO_SUCH_PERIOD:
        if (m := form.match(value.strip())) is not None:
            number = int(next(g for g in m.groups() if g is not None))
            return None if 1 <= number <= greatest else f"a {name} {number}"
    return None


_YEAR_ALONE = re.compile(r"^\s*\d{4}\s*$")
"""A period written as a year alone, `1970`: read without a `period_format`."""


def days_no_month_has(values: list[str], patterns: Sequence[str]) -> str | None:
    """The first of `values` when every one is written as a pattern of `patterns` reads but names a day its month
    has not (`29/02/2003`, `31/04/2004`: a typo in the rows, not a pattern to change; trial 37 was told to check the
    order of day and month); None otherwise."""
    def past_the_end(value: str) -> bool:
        for pattern in patterns:
            try:
                datetime.strptime(value.strip(), pattern)
            except ValueError as exc:
                if "day is out of range for month" in str(exc):
                    return True
        return False

    written = [v for v in values if v.strip()]
    return written[0] if written and all(past_the_end(v) for v in written) else None


def periods_unparsed(pack: CriteriaPack, reasons: list[str], seen: int) -> str:
    """Many rows whose period does not parse: the period key at fault, with an example value and, for a column of
    dates, a pattern that parses them where a common one does. Periods of a form the reader reads whose number no
    year has (`1999 Q5`) are a typo in the rows, not a pattern to name (trial 25: told `'%b-%Y'`)."""
    src = pack.source
    values = written_periods(reasons)
    many = f"{len(reasons)} of the {seen} rows the night reads"
    if src.period_column and values and not any(v.strip() for v in values):
        # (trial 26: pitches of no timestamp were told a `period_format`, '%b-%Y' for Mar-2018: no pattern reads
        # an empty cell)
        return (f"key `source.period_column`: got {src.period_column!r}; {many} have it empty, no period written, "
                f"each quarantined: expected their periods written in the source, or the rows kept out by "
                f"`source.where: [{{column: {src.period_column}, not_in: ['']}}]`")
    values = [v for v in values if v.strip()] or values  # (the empty among others: the others tell the pattern)
    example = values[0] if values else "?"
    typos = [(v, said) for v in values if (said := no_such_period(v)) is not None]
    if src.period_column and values and len(typos) == len(values) and year_span_pattern(values) is None:
        # (`2012-13`, an academic year, is no month 13: `year_span_clause` names its pattern below)
        return (f"key `source.period_column`: got {src.period_column!r}; {many} have a period no calendar has (e.g. "
                f"{typos[0][0]!r}: {typos[0][1]}), each quarantined: expected those rows mended (a typo in the "
                "source), or kept out by `source.where`")
    decimal = [v for v in values if _DECIMAL_YEAR.match(v) and float(v) % 1]
    if src.wide is not None and src.wide.counted_from is not None:
        return counted_from_unparsed(src.wide.counted_from, "source", values, f"the dates of {many}")
    if src.period_column and src.period_format is None and decimal and all(_DECIMAL_YEAR.match(v) for v in values):
        return (f"key `source.period_format`: got none for {_period_named(src)}; {many} have a period "
                f"written as a decimal year (e.g. {decimal[0]!r}: R's time index, the year plus the fraction of it "
                f"gone): expected `period_format: {DECIMAL_YEAR}`, which reads it")
    if src.period_column and src.period_format is None:
        telling = telling_day_from_month(pack, "source", src.period_column,
                                         f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NULL", values)
        suggested = suggested_pattern(telling)
        suggestion = (suggested or " (e.g. '%b-%Y' for Mar-2018)") + _counting_headers(src, values, suggested)
        fits = fitting_patterns(values)
        if len(reasons) < seen and fits and (isos := both_ways(pack, src.period_column)):
            # the rest are ISO: a pattern for the others alone would leave them unparsed (and check says so)
            both = [*isos, fits[0]]
            suggestion += (f"; the other rows are ISO, so the column is written two ways: `period_format: {both}` "
                           "reads both (the first that parses a value reading it)")
        return (f"key `source.period_format`: got none for {_period_named(src)}; {many} have a period that "
                f"is no ISO date or timestamp, 2015-07, 2015 Q3, 1991 W06 or bare year (e.g. {example!r}): expected a "
                f"strptime pattern naming how the dates are written{suggestion}")
    weeks = bool(values) and all(_ISO_WEEK_WRITTEN.fullmatch(v.strip()) for v in values)
    if src.period_column and values and (weeks or all(_iso(v) for v in values)):
        said = (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} "
                f"have a period that does not parse with it (e.g. {example!r})")
        isos, kind = iso_patterns(values), "ISO weeks" if weeks else "ISO dates or timestamps"
        if len(reasons) < seen and isos:  # the pattern reads the other rows: both ways are needed
            return (f"{said}: they are {kind}, which the pattern's rows are not: expected a list that reads both "
                    f"ways, `period_format: {[*src.period_patterns, *isos]}` (the first that parses a value reading "
                    "it)")
        return (f"{said}: expected no `period_format`: they are {kind}, read as such without one")
    if src.period_column and values and all(_YEAR_ALONE.match(v) for v in values):
        # (trial 27: `'%Y-%m'` over `1970` was told "a pattern that parses every row's period", none named)
        return (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} have "
                f"a period that does not parse with it (e.g. {example!r}): expected no `period_format`: they are bare "
                f"years, read as such without one (or `year_column: {src.period_column}` in place of "
                "`period_column`)")
    if src.period_column and values and all(_QUARTER.match(v) for v in values):
        return (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} have a "
                f"period that does not parse with it (e.g. {example!r}): {_QUARTERS_READ}")
    if src.period_column and values and (impossible := days_no_month_has(values, src.period_patterns)):
        return (f"key `source.period_column`: got {src.period_column!r}; {many} have a date no calendar has (e.g. "
                f"{impossible!r}: its day is past its month's end), each quarantined: expected those rows mended (a "
                "typo in the source), or kept out by `source.where`")
    if src.period_column:
        suggestion = suggested_pattern(values, src.period_patterns)
        return (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} have "
                f"a period that does not parse with it (e.g. {example!r}): expected a pattern that parses every "
                "row's period (a value that parses with a day-first and a month-first pattern alike, 1/3/2018, is "
                f"read as the pattern says: check the order of day and month){suggestion}")
    for key, what in (("quarter_column", "quarter (1 to 4)"), ("week_column", "ISO week (1 to 53)")):
        if (column := getattr(src, key)) is not None:
            return (f"key `source.year_column`: got {src.year_column!r} and `source.{key}` {column!r}; {many} hold "
                    f"no whole-number year ({_YEARS}) and {what} that make a period in them (e.g. year, "
                    f"{key.removesuffix('_column')} {example!r}): expected the columns of each row's year (2009) and "
                    f"{what}, or `source.period_column` naming a column of dates")
    if src.month_column is None:
        # (`FY2015` in every row: the pattern that reads them, as for a period column; not for a few among years)
        pattern = suggested_pattern(values) if len(reasons) == seen else ""
        dates = f"`source.period_column: {src.year_column}` with a `period_format`{pattern}" if pattern else \
            "`source.period_column` naming a column of dates"
        return (f"key `source.year_column`: got {src.year_column!r}; {many} hold no whole-number year from {_YEARS} "
                f"in it (e.g. {example!r}): expected the column of each row's year (2009, or 2009.0), or {dates}")
    if src.day_column is not None:
        return (f"key `source.year_column`: got {src.year_column!r}, `source.month_column` {src.month_column!r} and "
                f"`source.day_column` {src.day_column!r}; {many} hold no whole-number year ({_YEARS}), month "
                f"and day that make a date in them (e.g. year, month, day {example!r}): expected the columns of each "
                "row's year (2009), month (1 to 12) and day of the month, or `source.period_column` naming a column "
                "of dates")
    return (f"key `source.year_column`: got {src.year_column!r} and `source.month_column` {src.month_column!r}; "
            f"{many} hold no whole-number year ({_YEARS}) and month (1 to 12) in them (e.g. year, month "
            f"{example!r}): expected the columns of each row's year (2009) and month (1 to 12), or "
            "`source.period_column` naming a column of dates")


def _period_named(src: SourceSpec) -> str:
    """What a source's period is read from, as a problem names it: its column, or a wide source's headers."""
    if src.wide is not None and src.wide.across == "period":
        return "the headers of `source.wide.columns`"
    return f"column {src.period_column!r}"


CUT_SHORT = 0.1
"""An events source whose rows end this share of its latest period (at least a day) before the period does, where
they reached the previous period's last tenth, is cut short: the latest period's counts and sums are partial."""


def _source_key(src: SourceSpec) -> str:
    """The key that names where the source's rows come from: its `query`, its PostgreSQL `table`, else its file."""
    return "source.query" if src.query else "source.table" if src.format == "postgres" else "source.path"


def latest_period_cut_short(pack: CriteriaPack, night: date, anchor: date | None) -> list[str]:
    """A warning: an events source dated by a `period_column` whose events the night reads end well before its
    latest period does (an extract's end, a file cut short: MovieLens's ratings stop on 2016-10-16, Minneapolis's
    stops on 2018-01-01, a Monday), though they filled the previous period to its end. That period's counts and
    sums are then a part of it: a drop the formula and the skeptic read as the domain's. Names a night that reads
    whole periods only."""

    src, grain = pack.source, pack.grain
    if src.shape != "events" or not src.period_column or grain.name == "day" or anchor is None:
        return []
    if (unfinished := _latest_period_unfinished(pack, night, anchor)) is not None:
        return [unfinished]
    previous = grain.back(anchor, 1)
    day = shapes.date_sql(f"__written_{src.period_column}", src.period_format)  # (`shapes.written`, unquoted)
    last = latest_by_period(pack, day, f"{shapes.IN_SCOPE} AND {shapes.PUBLISHED} <= DATE '{night.isoformat()}'",
                            [anchor, previous])
    if anchor not in last or previous not in last:
        return []
    days = (grain.end(anchor) - anchor).days + 1
    short, before = (grain.end(anchor) - last[anchor]).days, (grain.end(previous) - last[previous]).days
    if short < max(1.0, CUT_SHORT * days) or before > CUT_SHORT * ((grain.end(previous) - previous).days + 1):
        return []
    where = f"`source.query` of {src.path}" if src.query and src.path else describe_location(pack)
    key = _source_key(src)
    published = "" if src.published_column else \
        f" (`--as-of` before {grain.end(anchor) + timedelta(days=src.publication_lag_days)})"
    return [f"key `{key}`: {where}: its events end on {last[anchor]}, {short} of the {days} days of the latest "
            f"period {grain.label(anchor)} before it ends ({grain.end(anchor)}), though they reach the end of "
            f"{grain.label(previous)}: {grain.label(anchor)}'s counts and sums are a part of it, read as a drop "
            f"(an extract's end, a file cut short?): expected a night whose latest period the rows fill, one "
            f"before {grain.label(anchor)} is published{published}"]


def _latest_period_unfinished(pack: CriteriaPack, night: date, anchor: date) -> str | None:
    """The warning for events read as they are published (`published_column`) on a night inside their latest
    period: that period has not ended, so its counts and sums are a part of it whatever the events' density. Trial
    38: house sales known 14 days after them, on 2010-10-15, read 2010-Q4's one sale as a quarter's beside full
    quarters a year before, and check said ok (the sparse sales had left 2010-Q3's last days empty, so the test of an
    extract's end did not hold)."""
    src, grain = pack.source, pack.grain
    if src.published_column is None or night >= grain.end(anchor):
        return None
    label, days = grain.label(anchor), (grain.end(anchor) - anchor).days + 1
    return (f"key `source.published_column`: got {src.published_column!r}; the night {night} falls inside the "
            f"latest period {label} ({(night - anchor).days + 1} of its {days} days), whose events it reads as they "
            f"are published: {label}'s counts and sums are a part of it, read as a drop: expected a night on or after "
            f"{grain.end(anchor)}, when {label} has ended, or one before {label}'s first events are published")


_UTC = {"UTC", "Etc/UTC", "Etc/GMT", "GMT", "Z", "+00:00", "00:00"}
"""Zone names of UTC itself, whose moments are their own days."""


def zoned_elsewhere(pack: CriteriaPack) -> list[str]:
    """A warning: a Parquet file's period column of timestamps that carry a time zone other than UTC (Melbourne's
    pedestrian counts, `Australia/Melbourne`). Every format's zoned timestamp is read as its UTC moment (one machine
    and the next read the same days), so the zone's days run from its 10:00 or 11:00 and each local day is split in
    two, while the same moments written as text with their offset are read as written: check said ok, and the
    Parquet file's daily sums differed from the CSV's. Only Parquet keeps the zone's name to say; a database's
    `TIMESTAMPTZ` keeps the moment alone. Said only without `source.time_zone`, which reads them in a zone."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = pack.source
    if not src.period_column or src.time_zone is not None or src.format == "postgres" or src.query \
            or src.wide is not None or infer_format(pack.source_path, src.format) != "parquet":
        return []
    try:
        schema = pq.read_schema(pack.source_path)
    except (OSError, pa.ArrowException):  # (not Parquet: the read says so)
        return []
    if src.period_column not in schema.names:
        return []
    kind = schema.field(src.period_column).type
    zone = getattr(kind, "tz", None) if pa.types.is_timestamp(kind) else None
    if not zone or zone in _UTC:
        return []
    return [f"key `source.period_column`: got {src.period_column!r}; its timestamps carry the time zone {zone!r} and "
            f"are read as their UTC moments, as every format's zoned timestamps are without `source.time_zone`, so "
            f"each {pack.grain.name} runs from UTC midnight, not {zone}'s (a local day split between two): expected "
            f"UTC {pack.grain.plural} if they are meant, else `time_zone: {zone}` under `source`"]


def sundays_starting_weeks(pack: CriteriaPack) -> list[str]:
    """A warning: a panel or snapshot read by the ISO week (Monday to Sunday) whose every dated row falls on a
    Sunday. Each is read as the week that ends on it, known `publication_lag_days` after that Sunday; a figure for the
    week that Sunday begins (US weeks, Sunday to Saturday, dated by their first day) is then read a week early and
    known six days before its week has ended: a look-ahead, and check said ok (trial 51: weekly turnip prices dated by
    each Sunday that opens their week, the night of 2022-04-10 read the week of 10 to 16 April). A date that ends its
    week is read rightly, so this is a warning, with the `query` that dates each row by its week's last day.
    Events are dated each by its own day, and a `published_column` says when each row was known: neither is said."""
    src = pack.source
    if pack.grain.name != "week" or src.shape == "events" or not src.period_column or src.period_patterns \
            or src.published_column or src.known_at or src.wide is not None or src.query:
        return []
    day = f"try_cast(trim({shapes.written(src.period_column)}) AS DATE)"
    dated = f"{shapes.IN_SCOPE} AND {day} IS NOT NULL"
    rows, sundays = rows_matching(pack, [dated, f"{dated} AND dayofweek({day}) = 0"])
    if rows < 4 or sundays < rows:
        return []
    (shown,) = commonest_values(pack, "source", f"strftime({day}, '%Y-%m-%d')", dated, limit=1) or ["?"]
    lag = src.publication_lag_days
    return [f"key `source.period_column`: got {src.period_column!r}; every one of its {rows} dates is a Sunday (e.g. "
            f"{shown!r}), and `grain: week` weeks run Monday to Sunday: each row is read as the week ending on it, "
            f"known {lag} days after that Sunday (`publication_lag_days`). If each date begins its week (Sunday to "
            "Saturday), every row is read a week early, known before its week has ended: expected the week's last "
            f"day as its date, a DuckDB `query` such as `SELECT *, {src.period_column} + 6 AS week_end FROM "
            f"'{pack.source_path.name}'` under `format: duckdb` with `period_column: week_end` (if each date ends "
            "its week, as written, nothing to do)"]


def weeks_not_iso(pack: CriteriaPack) -> list[str]:
    """A problem: a year and a week column that are not an ISO year and its ISO week, told by the weeks no ISO
    calendar has. A week 0 is a week counted from the year's first Sunday or Monday (`%U`, `%W`: US weeks); week 53
    of a year with no ISO week 53, in more than one row, is the calendar year beside the ISO week (pandas'
    `dt.year` beside `isocalendar().week`: 1 January 2010 is ISO 2009's week 53). Either way every other row is
    read too: the days around New Year fall in the other year's week, late December's week 1 read a year early,
    before it happened. Trial 54: the rows of no such week were quarantined as a few rows written otherwise, the
    rest read silently, and a single series' every metric was left unknown. A lone week 53 is a typo in one row,
    quarantined as such."""
    src = pack.source
    if src.week_column is None or src.year_column is None:
        return []
    year = f"try_cast(trim({shapes.written(src.year_column)}) AS DOUBLE)"
    week = f"try_cast(trim({shapes.written(src.week_column)}) AS DOUBLE)"
    whole = f"{shapes.IN_SCOPE} AND {year} BETWEEN {FIRST_YEAR} AND {LAST_YEAR} AND {year} = floor({year})"
    none = f"{whole} AND {week} = 0"
    short = (f"{whole} AND {week} = 53 AND weekofyear(make_date({year}::INTEGER, 12, 28)) = 52")
    zeros, fifty_threes = rows_matching(pack, [none, short])
    if not zeros and fifty_threes < 2:
        return []
    pair = f"{shapes.written(src.year_column)} || ', ' || {shapes.written(src.week_column)}"
    (shown,) = commonest_values(pack, "source", pair, none if zeros else short, limit=1) or ["?"]
    if zeros:
        key, column = "week_column", src.week_column
        said = (f"{zeros} row{'s are' if zeros > 1 else ' is'} dated week 0 (e.g. year, week {shown!r}), which no "
                "ISO week is: weeks counted from the year's first Sunday or Monday (`%U`, `%W`), not ISO weeks")
    else:
        key, column = "year_column", src.year_column
        said = (f"{fifty_threes} rows are dated week 53 of a year that has no ISO week 53 (e.g. year, week "
                f"{shown!r}): the calendar year beside ISO weeks, not the ISO year each week belongs to")
    return [f"key `source.{key}`: got {column!r}; {said}, so every row near New Year is read in the other year's "
            "week (late December's week 1 a year early, before it happened): expected `year_column` the ISO year "
            "of each week (strftime's `%G`, DuckDB's `isoyear(date)`, pandas' `isocalendar().year`) and "
            "`week_column` its ISO week (`%V`), or `period_column` naming a column of dates"]


STALE_PERIODS = 2
"""Periods after the latest one that the lag rule says are published by a night, and that no row holds, from which
the night lies after the data's end."""


def night_after_the_data(pack: CriteriaPack, night: date, anchor: date | None,
                         quarantined_latest: date | None = None) -> list[str]:
    """A warning: a night after the source's data ends, `STALE_PERIODS` or more periods after its latest one that
    the lag rule (`publication_lag_days`) says were published by then having no row (Victoria's 2014 electricity
    demand read on 2016-03-01; car exports to 2014 on 2021-06-30). Every window counts back from the latest period,
    so the night's metrics are that period's, as if current: check said ok, or told an `age_days` filter that
    refused every candidate it was "on another scale". A source dated by `published_column` or `known_at` says when
    its rows come itself, and is not judged. `quarantined_latest`, the latest period of the night's quarantined
    rows: when they reach the periods due, the data did not end, its rows were refused (trial 23: `entity_id:
    continent` refused 3,293 of 3,313 rows as duplicated keys, and the 20 left, ending in 2004, were told "a feed
    that stopped?" beside the problem naming `source.entity_id`)."""
    src, grain = pack.source, pack.grain
    if anchor is None or src.known_at is not None or src.published_column:
        return []
    lag = timedelta(days=src.publication_lag_days)
    due = grain.start(night - lag)  # the latest period the lag rule has published by the night
    if grain.end(due) + lag > night:
        due = grain.back(due, 1)
    missing = grain.between(anchor, due)
    if missing < STALE_PERIODS or (quarantined_latest is not None
                                   and grain.between(quarantined_latest, due) < STALE_PERIODS):
        return []
    key = _source_key(src)
    after = grain.back(anchor, -1)
    return [f"key `{key}`: {describe_location(pack)}: its latest period is {grain.label(anchor)}, but by this night, "
            f"{night}, the lag rule (`publication_lag_days: {src.publication_lag_days}`) has published {missing} "
            f"{grain.plural} after it, to {grain.label(due)}, and no row holds one: the night's metrics are "
            f"{grain.label(anchor)}'s, its latest values {(night - grain.end(anchor)).days} days old (a night after "
            f"the data ends, or a feed that stopped?): expected a night before {grain.end(after) + lag}, when "
            f"{grain.label(after)} would be published, or the source's newer rows"]


def latest_rows_refused(pack: CriteriaPack, night: date, anchor: date | None, quarantined: pl.DataFrame) -> list[str]:
    """A warning: every row of the periods after the night's latest one is quarantined (not a row of a period after
    today, which no night sees), so the night's latest period is an earlier one and its metrics are that period's,
    as if current. Trial 32: AirPassengers with its last three months written twice read September 1960 on a night
    that had December published, and check said ok with a quarantine fact. On a panel one entity's refused rows
    leave the latest period where it is (that entity's windows are gaps, flagged): only rows refused for every
    entity move it."""
    if anchor is None or not quarantined.height:
        return []
    later = quarantined.filter((pl.col("period") > anchor) & (pl.col("period") <= night)
                               & ~pl.col("reason").str.starts_with("period after today")).sort("source_row")
    if not later.height:
        return []
    grain, src = pack.grain, pack.source
    last = later["period"].max()
    assert isinstance(last, date)
    periods = grain.between(anchor, last)
    reasons = Counter(r.split(" (")[0].split(":")[0] for r in later["reason"].to_list())
    rows = ", ".join(str(r) for r in later["source_row"].to_list()[:3]) + (", ..." if later.height > 3 else "")
    key = _source_key(src)
    span = grain.label(grain.back(anchor, -1)) + ("" if periods == 1 else f" to {grain.label(last)}")
    return [f"key `{key}`: {describe_location(pack)}: every row of its latest {grain.count(periods)} published, "
            f"{span}, is quarantined ({', '.join(reasons)}: source rows {rows}), so the night's latest period is "
            f"{grain.label(anchor)} and its metrics are that {grain.name}'s, as if current: expected those rows "
            "mended (the quarantine says why)"]


def figures_ended(pack: CriteriaPack, night: date, history: pl.DataFrame, quarantined: pl.DataFrame) -> str | None:
    """A problem: the night's latest periods have rows, but no figure in any column the pack reads, for any
    entity: the source wrote rows for periods it has no figures of yet (the College Scorecard's last two years,
    every earnings and count empty), so every window counts back from an empty period and each metric is a gap,
    which check blamed on the required inputs and filters that read them (trial 21). Names the source and the night
    before the first empty period is published; None otherwise (an events source's counts are never empty, and
    cells quarantined in those periods, text or out of bounds, are what is wrong there: their lines say so)."""
    src, grain = pack.source, pack.grain
    read = sorted(({c for m in pack.metrics.values() for c in [m.column, *(m.columns or [])] if c}
                   | set(pack.columns)) & set(history.columns))  # (one column filled: a series stopped, said apart)
    if not read or not history.height or "periods_ago" not in history.columns:
        return None
    filled = history.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in read))
    if not filled.height:
        return None  # no figure at all: another problem says why
    empty = int(filled["periods_ago"].min())  # type: ignore[arg-type]
    latest = history.filter((pl.col("periods_ago") == 0) & pl.col("source_row").is_not_null())["period"] \
        if "source_row" in history.columns else history.filter(pl.col("periods_ago") == 0)["period"]
    if empty < 1 or not latest.len():  # (a latest period of no row at all: `night_after_the_data`'s)
        return None
    anchor = latest[0]
    last, first_empty = grain.back(anchor, empty), grain.back(anchor, empty - 1)
    if quarantined.height and quarantined.filter(pl.col("period") >= first_empty).height:
        return None
    key = _source_key(src)
    span = grain.label(first_empty) if empty == 1 else f"{grain.label(first_empty)}..{grain.label(anchor)}"
    night_before = "" if src.published_column or src.known_at else \
        f" (`--as-of` before {grain.end(first_empty) + timedelta(days=src.publication_lag_days)})"
    return (f"key `{key}`: {describe_location(pack)}: on {night} its rows of the latest {empty} "
            f"{grain.plural if empty > 1 else grain.name} ({span}) hold no figure of any column the pack reads "
            f"({', '.join(read)}) for any entity, its latest figures being of {grain.label(last)}, so every window "
            f"counts back from an empty {grain.name} and each metric is a gap: expected a night whose latest "
            f"{grain.name} has figures, one before {grain.label(first_empty)} is published{night_before}, or the "
            "source's figures")


def published_unparsed(pack: CriteriaPack, reasons: list[str], seen: int) -> str:
    """Many rows whose publication date does not parse: `source.published_column`, with an example value."""
    src = pack.source
    column = src.published_column or ""
    example = reasons[0].split(": ", 1)[1] if ": " in reasons[0] else "?"
    return (f"key `source.published_column`: got {column!r}; {len(reasons)} of the {seen} rows the night reads have a "
            f"publication date that is no date (e.g. {example!r}), each quarantined: expected a column of the dates "
            "each row was published (ISO dates or timestamps), or no `published_column`")


_COARSER = {("month", 3): "quarter", ("month", 12): "year", ("quarter", 4): "year", ("day", 7): "week"}
"""A grain's periods between rows that come in a coarser grain, and that grain."""


_GRAIN_SAMPLE = 64
"""Entities whose rows `grain_finer_than_rows` looks at first (a wide night's 10,718 need not all be sorted)."""


def _steps(history: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series]:
    """The rows' distinct (entity, period) in time order, and the steps in periods between each entity's rows (one
    pass over a wide night's rows, not a frame per entity)."""
    kept = history.select("entity_id", "periods_ago", "period").unique(["entity_id", "periods_ago"]) \
        .sort(["entity_id", "periods_ago"], descending=[False, True])
    steps = kept.select((pl.col("periods_ago").shift(1).over("entity_id") - pl.col("periods_ago")).alias("step")) \
        ["step"].drop_nulls()
    return kept, steps


def _common_step(steps: pl.Series) -> int:
    return functools.reduce(math.gcd, steps.unique().to_list(), 0)


def grain_finer_than_rows(pack: CriteriaPack, history: pl.DataFrame) -> str | None:
    """A panel whose every entity's rows lie a whole number (2 or more) of periods apart: quarterly rows read in
    months, say, where a window of months finds a row in one month of three (a coverage filter fails them all, a
    3-month sum holds one quarter or two), and the grain the rows come in is a coarser one (`_COARSER`). Judged over
    the rows in reach, when they give at least 4 steps. Rows a step apart that no grain fills (every 20 years: an
    ice core's samples; every two months) are no grain's mistake: windows on their own periods (`[0, 0]`,
    `[5, 5]`) read them, and a window that finds no row is named by its own key (`min_rows`, a window past the
    history), as on any source."""
    if pack.source.shape != "panel" or not history.height:
        return None
    ids = history["entity_id"].unique(maintain_order=True)
    if ids.len() > _GRAIN_SAMPLE:  # a common step divides each entity's: a sample's step of 1 answers for all
        sample = history.filter(pl.col("entity_id").is_in(ids.head(_GRAIN_SAMPLE).implode()))
        if _common_step(_steps(sample)[1]) == 1:
            return None
    kept, steps = _steps(history)
    step = _common_step(steps)
    counts = kept.group_by("entity_id", maintain_order=True).len().filter(pl.col("len") >= 3)
    grain = pack.grain
    if steps.len() < 4 or not counts.height or (coarser := _COARSER.get((grain.name, step))) is None:
        return None
    first = counts["entity_id"][0]
    shown = ", ".join(grain.label(p) for p in kept.filter(pl.col("entity_id") == first)["period"].to_list()[-3:])
    return (f"key `source.grain`: got {grain.name!r}; every entity's rows lie {step} {grain.plural} apart or a "
            f"multiple of it (e.g. {str(first)!r}: {shown}), so a window of {grain.plural} finds a row in one "
            f"{grain.name} of {step} at most: expected `grain: {coarser}`, the grain the rows come in")


def periods_read_as_vintages(pack: CriteriaPack) -> str | None:
    """A panel under `published_column` most of whose entity-periods hold rows of several periods as written:
    quarters read by the year, each quarter's row taken for a revision of the year and the latest published one
    standing for it (trial 25: tourism nights by quarter under `grain: year` said ok, and a year's "nights" were one
    quarter's, growth +41% from quarters of different seasons). None otherwise."""

    try:
        found = vintage_periods(pack)
    except SourceError:
        return None
    if found is None or found.several * 2 <= found.keys:
        return None
    src, grain = pack.source, pack.grain
    entity, period, written = found.example
    return (f"key `source.grain`: got {grain.name!r}; {found.several} of {found.keys} entity-{grain.plural} hold rows "
            f"of several periods as written (e.g. {entity!r} in {grain.label(period)}: "
            f"{', '.join(repr(w) for w in written)}), and under `published_column` {src.published_column!r} each is "
            f"read as a revision of its {grain.name}, the latest published standing for the whole {grain.name}: "
            "expected the grain the rows come in, whose revisions of one period its publication dates tell apart")


_WEEKEND_SHARE = 0.05
"""A day-grain source with fewer of its rows than this on Saturdays and Sundays is one of trading days (a daily one
has 2 in 7 there)."""


def _weekdays_at_most(length: int) -> int:
    """The most Mondays to Fridays that `length` consecutive days hold."""
    return 5 * (length // 7) + min(length % 7, 5)


def coverage_past_trading_days(pack: CriteriaPack, history: pl.DataFrame, found: list[Candidate]) -> list[str]:
    """A `coverage` filter on a day grain that refuses every scanned candidate tonight, over a source of trading days
    (fewer than `_WEEKEND_SHARE` of the rows the night reads on a Saturday or Sunday: exchange quotes, a
    working-day feed), with a bound above its window's weekdays' share: the weekend days are (nearly) never
    filled, so its coverage is at most about that share (10 of 14 days, 0.714), and the filter refuses every
    candidate on every night while check said ok. A problem naming the filter's value."""
    columns = [c for c in pack.columns if c in history.columns]
    if pack.source.grain != "day" or not columns or history.height == 0:
        return []
    filled = history.filter(pl.any_horizontal([pl.col(c).is_not_null() for c in columns]))
    weekend = int((filled["period"].dt.weekday() > 5).sum())  # Monday 1 to Sunday 7
    if filled.height == 0 or weekend >= _WEEKEND_SHARE * filled.height:
        return []
    problems = []
    for n, f in enumerate(pack.hard_filters):
        spec = pack.metrics.get(f.metric)
        judged = [c.filters.get(f.name) for c in found if c.filters.get(f.name) != FilterResult.UNCLEAR]
        if spec is None or spec.agg != "coverage" or f.op not in (">=", ">") or not judged \
                or any(r != FilterResult.FAIL for r in judged):
            continue
        length = spec.window[1] - spec.window[0] + 1
        most = _weekdays_at_most(length)
        if f.value > most / length or (f.op == ">" and f.value >= most / length):
            rows = "no row" if not weekend else f"{weekend} of its {filled.height} rows"
            problems.append(f"key `hard_filters.{n}.value`: got {written(f.value)}; {f.metric} is the filled share of "
                            f"{length} days, and the source has {rows} on a Saturday or Sunday (trading days), so a "
                            f"candidate's {f.metric} reaches about {most} of {length} ({most / length:.3g}) at most "
                            "and the filter refuses every one, tonight and every night: expected a bound of at most "
                            f"{most / length:.3g} (or `source.grain: week`)")
    return problems


DATES_BESIDE_DATED = 0.9
"""The share of a column's cells that must be dates for it to be read as the moment each row happened."""
DATES_BESIDE_WITHIN = 0.5
"""The share of those dates that must fall within their row's own period (by the moment it is read as known) for
the column to date the rows at all (an expiry or a birth date lies elsewhere, and says nothing of when a row
happened)."""
DATES_BESIDE_AFTER = 0.01
"""The share of those dates after that moment from which the rows are read before they happened."""


def rows_dated_after_known(pack: CriteriaPack) -> list[str]:
    """A warning: a column no key reads whose dates place most rows within their own period, yet some after the
    moment that period is read as known (`publication_lag_days` after it ends): those rows are read before the
    moments they hold (trial 29: a season's matches, August to May, dated by `Year` of its first year, were read
    from January 30 on, months before the spring's matches were played). Names `source.published_column`, the key
    that dates each row's knowing, with the column that would."""

    for found in dates_beside(pack):
        if found.rows == 0 or found.dated < DATES_BESIDE_DATED * found.rows or found.example is None \
                or found.within < DATES_BESIDE_WITHIN * found.dated or found.after < DATES_BESIDE_AFTER * found.dated:
            continue
        written, period, known = found.example
        src = pack.source
        return [f"key `source.published_column`: got none; column {found.column!r} dates {found.after:,} of "
                f"{found.rows:,} rows after the moment their period is read as known, "
                f"{src.publication_lag_days} days after it ends (e.g. {written!r} on a row of "
                f"{pack.grain.label(period)}, read as known on {known}): a night reads them before the moments they "
                f"hold: expected `published_column: {found.column}` (each row known at its own moment) or "
                f"`period_column: {found.column}` (each row in the period of its own moment), if it says when each "
                "row happened"]
    return []
