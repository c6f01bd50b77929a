"""`opportunity check`'s judgment of period keys that do not read the source's rows (pure over their values and
quarantine reasons): no row parses with them, or many do not (each said by the key at fault, with examples and the
pattern that reads them, `patterns.py` trying the patterns), years of two digits, days and months swapped, Unix
times of no time, publication dates unparsed. Each finding is one line naming the pack key.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from opportunity_assets.check.patterns import (
    DECIMAL_YEAR_WRITTEN,
    ISO_WEEK_WRITTEN,
    QUARTER,
    QUARTERS_READ,
    UNIT_NAMES,
    YEAR_ALONE,
    bare_years,
    cadence_clause,
    day_and_month_swapped_in,
    days_no_month_has,
    fitting_patterns,
    is_iso,
    iso_patterns,
    no_such_period,
    suggested_pattern,
    unix_time,
    year_span_pattern,
    years_as_numbers,
)
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import is_number
from opportunity_assets.periods import FIRST_NIGHT, FIRST_YEAR, LAST_YEAR
from opportunity_assets.sources import shapes
from opportunity_assets.sources.formats import join_index
from opportunity_assets.sources.probes import (
    value_counts,
)
from opportunity_assets.sources.spec import (
    DECIMAL_YEAR,
    SINCE_UNITS,
    UNIX_SCALES,
    UNIX_TIME,
    SourceSpec,
    by_year,
    count_of,
    is_unix,
    part_of_year,
    within_year,
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
    swapped = day_and_month_swapped_in(src.period_format)
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


def _abbreviated(examples: list[str]) -> str:
    """The clause telling why moments that end in a zone's abbreviation (`2018-10-30 00:30 BST`) are no dates under
    `time_zone` (`shapes._moment_sql`), or nothing."""
    found = [m.group(1) for e in examples if (m := re.search(r"\s([A-Za-z]{2,5})$", e.strip()))]
    if not examples or len(found) < len(examples):
        return ""
    return (f" (each ends in a time zone's abbreviation ({found[0]!r}), which names no one clock: BST is also "
            "Bangladesh's, IST India's, Ireland's and Israel's; under `time_zone` a moment is written with its offset, "
            "`+01:00`, or without one, in the zone's own time: a DuckDB `query` can drop the abbreviation)")


def not_publication_dates(pack: CriteriaPack, within: str, rows: int) -> str:
    """A `published_column` whose cells are no dates (a weekday, yes/no, a bare year): that key, with examples."""
    src = spec_at(pack, within)
    column = src.published_column or ""
    examples = commonest_values(pack, within, shapes.written(column),
                                f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL AND {shapes.PUBLISHED} IS NULL")
    years = " (a bare year names no day: every row would be known on 1 January, before its year ended)" \
        if examples and all(re.fullmatch(r"\d{4}(\.0+)?", e.strip()) for e in examples) else ""
    years += _abbreviated(examples)
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


_TELLS_DAY = r"^[^0-9]*\d{1,2}[^0-9]+(1[3-9]|2[0-9]|3[01])[^0-9]|^[^0-9]*(1[3-9]|2[0-9]|3[01])[^0-9]+\d{1,2}[^0-9]"
"""A date written day and month first, in either order, whose first or second number is above 12 (`13/01/2004`,
`1/30/2004`, or after a weekday's name, `Mon 15/07/1991`: trial 72): a value that tells which of the two is the
day."""


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
    if years_as_numbers(unparsed):
        return (f"key `{within}.period_column`: got {column!r}; its values are whole years written as numbers (e.g. "
                f"{unparsed[:3]}), which no date pattern reads: expected `{within}.year_column: {column}` in its place "
                "(it reads whole years, 2001 or 2001.0)")
    decimal = [v for v in unparsed if DECIMAL_YEAR_WRITTEN.match(v.strip()) and float(v) % 1]
    if decimal and all(DECIMAL_YEAR_WRITTEN.match(v.strip()) for v in unparsed):
        return (f"key `{within}.period_format`: got none for column {column!r}; its values are decimal years (e.g. "
                f"{decimal[:3]}: R's time index, the year plus the fraction of it gone), which no date pattern "
                f"reads: expected `period_format: {DECIMAL_YEAR}`, which reads them")
    if src.wide is None and (two_digits := _years_of_two_digits(pack, within, column, unparsed)) is not None:
        return (f"key `{within}.period_format`: got none for column {column!r}; none of its values is a date (e.g. "
                f"{unparsed[:3]}): {two_digits}")
    if src.wide is None and (cadence := cadence_clause(unparsed)):  # (no pattern reads them: not offered one)
        return f"key `{within}.period_column`: got {column!r}; its values are not dates (e.g. {unparsed[:3]}){cadence}"
    fits = suggested_pattern(telling_day_from_month(pack, within, column, f"{shapes.IN_SCOPE} AND {shapes.PERIOD} "
                                                    "IS NULL", unparsed))
    if not fits and src.wide is None and (numbered := _row_numbers(pack, within, column, unparsed)) is not None:
        return numbered
    if not fits and src.wide is None and _counts(unparsed):
        given = repr(src.period_format) if src.period_format else "none"
        return (f"key `{within}.period_format`: got {given} for column {column!r}; its values are whole numbers (e.g. "
                f"{unparsed[:3]}), a count of days (or weeks, hours) from a first day, not dates: "
                f"{_days_since()}, or a column of dates")
    if src.wide is not None and src.wide.across == "period" and within_year(src.wide.columns):
        # (trial 110: `Drug, Year, Jan, ..., Dec` offered '%b-%Y' for headers that hold no year)
        return f"key `{within}.wide.columns`: " + by_year(src.wide.columns)
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


_MOST_ROWS = 1200
"""Most rows a series of months, quarters or years numbers (a century of months): whole numbers beyond it in a column
not named as row numbers are a count of days from a first day (trial 97: MASS Aids2's diagnosis days since
1960-01-01, 8,000 to 11,000, were told the rows' own numbers, with a query dating them around the year 2860)."""


def _row_numbers(pack: CriteriaPack, within: str, column: str, unparsed: list[str]) -> str | None:
    """A `period_column` of whole numbers that are the rows' own numbers, not a count of days: one named as a data
    frame's row numbers are (`rownames`), or any on a month, quarter or year grain, whose periods no count of days
    reads. The file holds no date (trial 32: AER's USMacroG, an R time series matrix, is exported with `rownames`
    1..204 and no time column; told `period_format: 'days since 2020-02-29'`, which put 204 quarters in 7 months):
    the key, with the DuckDB `query` that dates the rows from the first period. None otherwise."""
    src = spec_at(pack, within)
    grain = src.grain  # (a join's own: the main source's or a coarser one)
    named = column.strip().lower() in _ROW_NUMBER_COLUMNS
    if not _counts(unparsed) or (not named and (grain not in ("month", "quarter", "year")
                                                or max(float(v) for v in unparsed) > _MOST_ROWS)):
        return None
    step = {"month": 1, "quarter": 3, "year": 12}.get(grain)
    where = _read_from(src)
    # an interval at every grain: DuckDB adds no BIGINT to a DATE (trial 57: the week's `DATE + 7 * (rownames - 1)`
    # was refused, "No function matches ... '+(DATE, BIGINT)'")
    adds = (f"DATE '1950-01-01' + to_months({step} * ({column} - 1))" if step is not None else
            f"DATE '1950-01-01' + {'to_weeks' if grain == 'week' else 'to_days'}({column} - 1)")
    return (f"key `{within}.period_column`: got {column!r}; its values are whole numbers (e.g. {unparsed[:3]}), the "
            "rows' own numbers, not dates: the file holds none (R's `write.csv` of a time series matrix drops its "
            "time): expected a column of dates, such as one a DuckDB `query` adds from the first period (its date in "
            f"place of 1950-01-01, one {grain} a row), `format: duckdb` with `query: \"SELECT *, {adds} AS date "
            f"FROM {where}\"` and `period_column: date`")


def _read_from(src: SourceSpec) -> str:
    """What a suggested DuckDB `query` reads FROM: the source's file, quoted, or a placeholder for a table."""
    return f"'{src.path}'" if src.path else "<the table>"


def _years_of_two_digits(pack: CriteriaPack, within: str, column: str, unparsed: list[str]) -> str | None:
    """What a `period_column` of whole numbers of two digits on a `year` grain is, years without their century, and
    the `period_format` that reads them; None for any other column. A row-number header, or a count from 0 or 1,
    is the rows' own numbers or a counter (`_row_numbers`). Trial 108: DAAG monica's `yronset`, 85..93, was told
    the rows' own numbers under `period_column`, with a query adding 12 x (yronset - 1) months to 1950, and a
    `period_format` list that read none of them went unnamed; written as decimals (87.0), which `%y` does not
    read, it was told the same under `period_format: '%y'`."""
    src = spec_at(pack, within)
    if src.grain != "year" or column.strip().lower() in _ROW_NUMBER_COLUMNS or not _counts(unparsed):
        return None
    numbers = [float(v) for v in unparsed]
    if min(numbers) < 2 or max(numbers) > 99:
        return None
    read = "`period_format: '%y'` (a year of two digits, read as the latest year of those digits not after this one)"
    if all(re.fullmatch(r"\s*\d{1,2}\s*", v) for v in unparsed):
        return f"they are whole numbers of two digits, years without their century: expected {read}"
    where = _read_from(src)
    return (f"they are years of two digits written as decimals, which `%y` does not read: expected them as whole "
            f"numbers, `format: duckdb` with `query: \"SELECT * REPLACE (CAST({column} AS INTEGER) AS {column}) FROM "
            f"{where}\"` and {read}")


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
    if not values or not all(is_number(v) and abs(float(v)) < 10**8 * per_second for v in values):
        return None
    biggest = max(values, key=float)
    moment = datetime.fromtimestamp(float(biggest) / per_second, tz=UTC).replace(tzinfo=None)
    said = (f"key `{within}.period_format`: got {pattern!r} for column {column!r}; its values are no Unix time (e.g. "
            f"{values[:3]}: {UNIT_NAMES[per_second]} since 1970-01-01 UTC, {biggest.strip()!r} is {moment} UTC)")
    if _counts(values):
        return (f"{said}: they are whole numbers, a count of days (or weeks, hours) from a first day: "
                f"{_days_since(False)}")
    coarser = next((name for name, scale in UNIX_SCALES.items() if name != UNIX_TIME and scale < per_second
                    and all(unix_time(v, scale) is not None for v in values)), None)
    if coarser is not None:  # (trial 37: seconds under `unix_ms` were told "the pattern that reads them", none named)
        first, scale = values[0].strip(), UNIX_SCALES[coarser]
        return (f"{said}: expected `period_format: {coarser}`, which reads them: Unix time, {UNIT_NAMES[scale]} "
                f"since 1970-01-01 UTC ({first} is {unix_time(first, scale)} UTC)")
    return f"{said}: expected the pattern that reads them, or `{pattern}` over a column of Unix time"


def _days_since(units: bool = True) -> str:
    """What a count of days as a period column expects, in the words every such message uses (with the units
    `days since` takes, where the message has room for them)."""
    return ("expected the count's unit and its day 0, `period_format: 'days since 2020-02-29'` (day 1 is then "
            f"2020-03-01{f'; units {list(SINCE_UNITS)}' if units else ''})")


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


def two_digit_years_over_the_turn(pack: CriteriaPack, within: str) -> str | None:
    """A `period_format` of `%y` over a series of more years than its digits' turn allows, or None: `%y` reads a
    year as the latest of its digits not after this one, so a series of 1918..2009 written `18`..`09` is read
    1927..2009 and 2018..2026. The rows' years fall in two runs, the later one's ending where the earlier one starts
    once read a century earlier (within 2 years): the key, with both runs, and the DuckDB `query` that writes the
    century for a pattern of the year alone. Trial 108: DAAG greatLakes' levels were told each metric's
    `min_rows`, "perhaps a period no entity has rows in"."""
    src = spec_at(pack, within)
    if src.period_column is None or not any("%y" in p for p in src.period_patterns):
        return None
    dated = f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL"
    years = sorted({int(y) for y in commonest_values(pack, within, f"year({shapes.PERIOD})", dated, limit=1000)})
    gaps = [(years[i + 1] - years[i], i) for i in range(len(years) - 1)]
    if not gaps or max(gaps)[0] < 3:
        return None
    cut = max(gaps)[1] + 1
    earlier, later = years[:cut], years[cut:]
    if not 1 <= earlier[0] - (later[-1] - 100) <= 3:
        return None
    column = src.period_column
    digits = f"{later[0] % 100:02d}"
    said = (f"key `{within}.period_format`: got {src.period_format!r} for column {column!r}; `%y` read its years of "
            f"two digits '{digits}'..'{later[-1] % 100:02d}' as {later[0]}..{later[-1]}, after a gap from "
            f"{earlier[-1] + 1}, though a century earlier, {later[0] - 100}..{later[-1] - 100}, they run on into the "
            f"rest ({earlier[0]}..{earlier[-1]}): years over the two digits' turn")
    if src.period_format != "%y":
        return f"{said}: expected the years written in full (`%Y`)"
    where = _read_from(src)
    number = f"CAST({column} AS INTEGER)"
    return (f"{said}: expected the century written, `format: duckdb` with `query: \"SELECT *, {number} + CASE WHEN "
            f"{number} >= {int(digits)} THEN {later[0] // 100 * 100 - 100} ELSE {later[0] // 100 * 100} END AS "
            f"{column}_full FROM {where}\"` and `year_column: {column}_full` in place of `period_column` and "
            "`period_format`")


def two_digit_years_by_pattern(pack: CriteriaPack, within: str) -> str | None:
    """A `period_format` whose `%Y` reads years of two digits (`10/21/09` by `'%m/%d/%Y'` is 21 October of the year
    9), or None: strptime's `%Y` takes a year of any number of digits, so every such row is dated in the first
    century and check said ok, the night 0015-04-10 (trial 60: HHS breach reports). Every dated year below 100, or
    some beside years from 1800 on and none between, as `two_digit_years` judges a year column: the key, with
    examples and the pattern of `%y` that reads them (before the patterns of `%Y`, where full years are written
    too)."""
    src = spec_at(pack, within)
    patterns = src.period_patterns
    if src.period_column is None or not any("%Y" in p for p in patterns):
        return None
    dated = f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL"
    year = f"year({shapes.PERIOD})"
    low = commonest_values(pack, within, shapes.written(src.period_column), f"{dated} AND {year} < 100")
    if not low:
        return None
    said = f"key `{within}.period_format`: got {src.period_format!r} for column {src.period_column!r}"
    two_digits = [p.replace("%Y", "%y") for p in patterns if "%Y" in p]
    read = "`%y`, a year of two digits, reads each as the latest year of those digits not after this one"
    if commonest_values(pack, within, year, f"{dated} AND {year} >= 100", 1):
        if commonest_values(pack, within, year, f"{dated} AND {year} >= 100 AND {year} < {FIRST_NIGHT.year}", 1):
            return None
        full = commonest_values(pack, within, shapes.written(src.period_column), f"{dated} AND {year} >= 100", 2)
        return (f"{said}; `%Y` reads some of its years as below 100 (e.g. {low}) beside years written in full (e.g. "
                f"{full}), and none from 100 to {FIRST_NIGHT.year - 1}: years of two digits among full ones, their "
                f"rows read in the first century, in no night's window: expected `period_format: "
                f"{list(dict.fromkeys([*two_digits, *patterns]))}`, the two-digit years' pattern first ({read})")
    wanted = two_digits[0] if isinstance(src.period_format, str) else [p.replace("%Y", "%y") for p in patterns]
    return (f"{said}; `%Y` reads every year it holds as below 100 (e.g. {low}), the first century's: years of two "
            f"digits: expected {wanted!r} ({read})")


def cadence_read_by_pattern(pack: CriteriaPack, within: str) -> str | None:
    """A `period_format` that reads periods of a cadence no grain names (`2015 H2` by `'%Y H%m'`, `FY15 Q4` by
    `'FY%y Q%m'`, `2015-01-D3` by `'%Y-%m-D%d'`), or None: the number that counts them taken for a month or a day,
    each row dated in another period than its own (the second half-year as February, known months before it ends)
    while check said ok (trial 89). The key, with examples and what reads them."""
    src = spec_at(pack, within)
    if src.period_column is None or src.period_format is None:
        return None
    read = commonest_values(pack, within, shapes.written(src.period_column),
                            f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL", limit=50)
    if not (cadence := cadence_clause(read)):
        return None
    return (f"key `{within}.period_format`: got {src.period_format!r} for column {src.period_column!r}; it reads "
            f"periods that are no month, day or year (e.g. {read[:3]}), each dated by the number that counts them "
            f"taken for a month or a day, in another period than its own{cadence}")


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
    if years and all(is_iso(v) for v in years):
        return (f"key `{within}.year_column`: got {year!r}; its values are dates, not years (e.g. {years[:3]}): "
                f"expected `period_column: {year}` for a column of dates (truncated to `grain`), or a column of "
                "whole years")
    numbers = [float(v) for v in years if is_number(v)]
    if numbers and not any(FIRST_YEAR <= n <= LAST_YEAR for n in numbers):
        return (f"key `{within}.year_column`: got {year!r}; its values are no years from {FIRST_YEAR} to "
                f"{LAST_YEAR} (e.g. {years[:3]}): expected whole years written in full, such as 1963 or 1963.0")
    if not years or numbers:
        # (trial 111: a weekday `Thu` as `day_column` named the month column of `Feb`, `Mar`, months it reads)
        failing = [(k, c) for k, c in keys[1:] if not all(part_of_year(k, v) for v in unparsed[c])]
        for key, column in failing or keys[1:]:
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


def not_parsed_by(pack: CriteriaPack, within: str) -> str:
    """A `period_format` none of the `period_column`'s values parses with: that key, with examples and a pattern
    that parses them, or none when they are ISO dates or timestamps (a Parquet or database column of dates)."""
    src = spec_at(pack, within)
    column = src.period_column or ""
    unparsed = commonest_values(pack, within, shapes.written(column), f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NULL",
                                limit=50)
    said = (f"key `{within}.period_format`: got {src.period_format!r} for column {column!r}; none of its values "
            f"parses with it (e.g. {unparsed[:3]})")
    if unparsed and all(is_iso(v) for v in unparsed):
        return f"{said}: expected no `period_format`: they are ISO dates or timestamps, read as such without one"
    if unparsed and all(QUARTER.match(v) for v in unparsed):
        return f"{said}: {QUARTERS_READ}"
    if years_as_numbers(unparsed):
        return (f"{said}: they are whole years written as numbers: expected `{within}.year_column: {column}` in place "
                "of `period_column` and `period_format` (it reads whole years, 2001 or 2001.0)")
    if bare_years(unparsed):  # (trial 55: told they were a file's row numbers, naming `period_column`)
        return (f"{said}: they are years, read as such without a pattern: expected no `period_format` (or '%Y'), "
                f"or `{within}.year_column: {column}` in place of both")
    decimal_years = [bool(DECIMAL_YEAR_WRITTEN.match(v.strip())) for v in unparsed]
    if all(decimal_years) and any(float(v) % 1 for v in unparsed):  # (trial 32: `%Y` over R's index, told directives)
        return (f"{said}: they are decimal years (R's time index, the year plus the fraction of it gone), which no "
                f"strptime pattern reads: expected `period_format: {DECIMAL_YEAR}`, which reads them")
    if src.wide is None and (two_digits := _years_of_two_digits(pack, within, column, unparsed)) is not None:
        return f"{said}: {two_digits}"
    if src.wide is None and (numbered := _row_numbers(pack, within, column, unparsed)) is not None:
        return numbered  # (no pattern reads a row's number: `decimal_year` over R's `rownames`)
    # (trial 72: the commonest values, the 1st of each month, were told both orders over a day-first column)
    fits = suggested_pattern(telling_day_from_month(pack, within, column, f"{shapes.IN_SCOPE} AND {shapes.PERIOD} "
                                                    "IS NULL", unparsed), src.period_patterns)
    if not fits and src.wide is None and _counts(unparsed):
        return (f"{said}: they are whole numbers, a count of days (or weeks, hours) from a first day, which no "
                f"strptime pattern reads: {_days_since()}")
    return f"{said}: expected a strptime pattern its values parse with" + \
        (fits or " (`%b` a month's abbreviated name, `%B` its full name, `%y` a year of two digits, `%Y` of four)")


ISO_MISREAD = ("they are ISO dates or timestamps, and so are the rows it parses, which it reads otherwise than ISO "
               "(month and day swapped, or a part dropped): expected no `period_format`: ISO dates are read as such "
               "without one")
"""Why a `period_format` that parses some of a column of ISO dates and not the rest is wrong for all of them."""


def _others_years_in_full(pack: CriteriaPack, column: str) -> bool:
    """Whether the period values that did parse are all bare years of four digits (`1980`), beside which values of
    two digits are years too."""
    parsed = commonest_values(pack, "source", shapes.written(column),
                              f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL", limit=20)
    return bool(parsed) and all(re.fullmatch(r"\d{4}", str(v).strip()) for v in parsed)


def both_ways(pack: CriteriaPack, column: str) -> list[str]:
    """The ISO patterns of the period values that did parse (no pattern, or the given patterns' ISO rows), for a
    list that reads them beside the rows written otherwise."""
    parsed = commonest_values(pack, "source", shapes.written(column),
                              f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL", limit=20)
    return iso_patterns(parsed)


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


ISO_DAY = ["%Y-%m-%d"]
"""The pattern an ISO date is read by, a day past its month's end told by it when no `period_format` is given."""


_SHOWN = 60
"""The characters of a cell an example quotes."""


def _shown(cell: str) -> str:
    """A cell quoted as an example, cut to `_SHOWN` characters: a column of free text named as the period (trial 59:
    a cell of 2,000 characters) filled the problem's one line with it."""
    return cell if len(cell) <= _SHOWN else cell[:_SHOWN] + "…"


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
    example = _shown(values[0]) if values else "?"
    if src.period_column and src.time_zone and (abbreviated := _abbreviated(values[:3])):
        # (trial 114: told a strptime pattern, which would read BST as Bangladesh's again)
        return (f"key `source.period_column`: got {src.period_column!r}; {many} have a period that is no date "
                f"(e.g. {example!r}){abbreviated}, each quarantined")
    typos = [(v, said) for v in values if (said := no_such_period(v)) is not None]
    if src.period_column and values and len(typos) == len(values) and year_span_pattern(values) is None:
        # (`2012-13`, an academic year, is no month 13: `year_span_clause` names its pattern below)
        return (f"key `source.period_column`: got {src.period_column!r}; {many} have a period no calendar has (e.g. "
                f"{typos[0][0]!r}: {typos[0][1]}), each quarantined: expected those rows mended (a typo in the "
                "source), or kept out by `source.where`")
    if src.period_column and values and (impossible := days_no_month_has(values, src.period_patterns or ISO_DAY)):
        # (trial 107: `2008-11-31` among ISO dates, with no `period_format`, was "no ISO date ... expected a
        # strptime pattern (e.g. '%b-%Y')": the calendar lacks the day, no pattern reads it)
        return (f"key `source.period_column`: got {src.period_column!r}; {many} have a date no calendar has (e.g. "
                f"{impossible!r}: its day is past its month's end), each quarantined: expected those rows mended (a "
                "typo in the source), or kept out by `source.where`")
    decimal = [v for v in values if DECIMAL_YEAR_WRITTEN.match(v) and float(v) % 1]
    if src.wide is not None and src.wide.counted_from is not None:
        return counted_from_unparsed(src.wide.counted_from, "source", values, f"the dates of {many}")
    if src.wide is not None and src.wide.across == "period" and (part := within_year(src.wide.columns)):
        if src.period_column is None:  # (trial 111: `FY2000` years were told to add the `year_column` they had)
            return (f"key `source.year_column`: got {src.year_column!r}; {many} hold no whole-number year "
                    f"({_YEARS}) in it (e.g. year, {part} {example!r}): expected the column of each row's year (2009, "
                    f"or 2009.0), each header of `source.wide.columns` read as a {part} in it")
        return "key `source.wide.columns`: " + by_year(src.wide.columns)
    if src.period_column and src.period_format is None and decimal and all(
            DECIMAL_YEAR_WRITTEN.match(v) for v in values):
        return (f"key `source.period_format`: got none for {_period_named(src)}; {many} have a period "
                f"written as a decimal year (e.g. {decimal[0]!r}: R's time index, the year plus the fraction of it "
                f"gone): expected `period_format: {DECIMAL_YEAR}`, which reads it")
    if src.period_column and src.period_format is None and years_as_numbers(values):
        # (trial 103: years stored as floats, `1992.0`, were told so with no `--as-of`, and with one "expected a
        # strptime pattern ... (e.g. '%b-%Y' for Mar-2018)")
        return (f"key `source.period_column`: got {src.period_column!r}; {many} have a period written as a whole "
                f"year as a number (e.g. {example!r}), which no date pattern reads: expected `source.year_column: "
                f"{src.period_column}` in its place (it reads whole years, 2001 or 2001.0)")
    if src.period_column and src.period_format is None and (cadence := cadence_clause(values)):
        return (f"key `source.period_column`: got {src.period_column!r}; {many} have a period that is no date (e.g. "
                f"{example!r}){cadence}")
    if src.period_column and src.period_format is None and len(reasons) < seen and values and all(
            re.fullmatch(r"\d{2}", v.strip()) for v in values) and _others_years_in_full(pack, src.period_column):
        # (trial 120: PSID's `76`..`79` beside `1980`.. were told "e.g. '%b-%Y' for Mar-2018")
        return (f"key `source.period_format`: got none for {_period_named(src)}; {many} have a period that "
                f"is no ISO date or timestamp, 2015-07, 2015 Q3, 1991 W06 or bare year (e.g. {example!r}): expected a "
                "strptime pattern naming how the dates are written: the others are bare years written in full, so "
                "these are years of two digits: `period_format: ['%y', '%Y']` reads both (`%y`, a year of two "
                "digits, reads each as the latest year of those digits not after this one)")
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
    weeks = bool(values) and all(ISO_WEEK_WRITTEN.fullmatch(v.strip()) for v in values)
    if src.period_column and values and (weeks or all(is_iso(v) for v in values)):
        said = (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} "
                f"have a period that does not parse with it (e.g. {example!r})")
        isos, kind = iso_patterns(values), "ISO weeks" if weeks else "ISO dates or timestamps"
        if len(reasons) < seen and isos and not weeks and both_ways(pack, src.period_column):
            # (trial 76: `'%Y-%d-%m'` over ISO dates parsed those of a day up to 12, month and day swapped, and was
            # told to keep itself first in a list beside '%Y-%m-%d')
            return f"{said}: {ISO_MISREAD}"
        if len(reasons) < seen and isos:  # the pattern reads the other rows: both ways are needed
            return (f"{said}: they are {kind}, which the pattern's rows are not: expected a list that reads both "
                    f"ways, `period_format: {[*src.period_patterns, *isos]}` (the first that parses a value reading "
                    "it)")
        return (f"{said}: expected no `period_format`: they are {kind}, read as such without one")
    if src.period_column and values and all(YEAR_ALONE.match(v) for v in values) and len(reasons) < seen and \
            src.period_patterns == ["%y"]:
        # (trial 120: `'%y'` over `76`..`79` and `1980`.. was told "expected no `period_format`", leaving `76` unread)
        return (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} have "
                f"a period that does not parse with it (e.g. {example!r}): expected `period_format: ['%y', '%Y']`: "
                "the rows it parses are years of two digits, these bare years written in full (the first pattern "
                "that parses a value reads it)")
    if src.period_column and values and all(YEAR_ALONE.match(v) for v in values):
        # (trial 27: `'%Y-%m'` over `1970` was told "a pattern that parses every row's period", none named)
        return (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} have "
                f"a period that does not parse with it (e.g. {example!r}): expected no `period_format`: they are bare "
                f"years, read as such without one (or `year_column: {src.period_column}` in place of "
                "`period_column`)")
    if src.period_column and values and all(QUARTER.match(v) for v in values):
        return (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} have a "
                f"period that does not parse with it (e.g. {example!r}): {QUARTERS_READ}")
    if src.period_column and (unpadded := _unpadded(src.period_patterns, example)) is not None:
        return (f"key `source.period_format`: got {src.period_format!r} for {_period_named(src)}; {many} have "
                f"a period that does not parse with it (e.g. {example!r}): {unpadded}")
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


_WIDTHS = {"d": 2, "m": 2, "y": 2, "Y": 4, "H": 2, "I": 2, "M": 2, "S": 2, "j": 3}
"""The digits a strptime directive reads where nothing separates it from the next (`%H%M`: 2 and 2)."""
_JOINED = re.compile(r"(?:%[dmyYHIMSj]){2,}")


def _unpadded(patterns: list[str], example: str) -> str | None:
    """Why a value does not parse with a pattern whose numbers stand with nothing between them (`%H%M`), in words:
    a run of its digits shorter than their widths together, a number written without its leading zero (`840` for
    08:40; trial 115); None otherwise. Such a pattern reads each number at its full width, so no pattern reads it."""
    def loose(text: str) -> str:  # (a pattern's other text as a regular expression: any number, any word)
        return re.sub(r"%[a-zA-Z]", lambda d: r"\d+" if d.group()[1] in _WIDTHS else r".+?", re.escape(text))

    for pattern in patterns:
        runs = list(_JOINED.finditer(pattern))
        bounds = [0, *(i for m in runs for i in (m.start(), m.end())), len(pattern)]
        texts = [loose(pattern[a:b]) for a, b in zip(bounds[::2], bounds[1::2], strict=True)]
        found = re.fullmatch(r"(\d+)".join(texts), example.strip()) if runs else None
        for digits, run in zip(found.groups() if found else (), runs, strict=False):
            width = sum(_WIDTHS[d] for d in run.group()[1::2])
            if len(digits) < width:
                return (f"{digits!r} is written without its leading zeros, and `{run.group()}`, numbers with nothing "
                        f"between them, reads each at its full width ({width} digits in all): expected the column "
                        f"written with its zeros ({digits.zfill(width)!r}), or a DuckDB `query` padding it "
                        "(`lpad(...)`)")
    return None


def _period_named(src: SourceSpec) -> str:
    """What a source's period is read from, as a problem names it: its column, or a wide source's headers."""
    if src.wide is not None and src.wide.across == "period":
        return "the headers of `source.wide.columns`"
    return f"column {src.period_column!r}"


def published_unparsed(pack: CriteriaPack, reasons: list[str], seen: int) -> str:
    """Many rows whose publication date does not parse: `source.published_column`, with an example value."""
    src = pack.source
    column = src.published_column or ""
    example = _shown(reasons[0].split(": ", 1)[1]) if ": " in reasons[0] else "?"
    return (f"key `source.published_column`: got {column!r}; {len(reasons)} of the {seen} rows the night reads have a "
            f"publication date that is no date (e.g. {example!r}){_abbreviated([example])}, each quarantined: "
            "expected a column of the dates "
            "each row was published (ISO dates or timestamps), or no `published_column`")


def published_unparsed_few(pack: CriteriaPack, reasons: list[str], seen: int) -> str:
    """A warning: a few rows whose publication date does not parse (fewer than `published_unparsed` says as a
    problem), named by `source.published_column` with examples. Trial 70: a correction release dated `15/08/1965`
    beside the first release's ISO dates was quarantined, its corrections read as never sent, and check's one word
    was the quarantine's count. Trial 138: a PostgreSQL row with no publication date (NULL) was "no ISO date (e.g.
    [''])", an example of nothing: empty cells are said to be empty, apart from the dates written otherwise."""
    column = pack.source.published_column or ""
    written = [r.split(": ", 1)[1] if ": " in r else "?" for r in reasons]
    empty = sum(1 for w in written if not w.strip())
    examples = list(dict.fromkeys(_shown(w) for w in written if w.strip()))[:3]
    plural = "s" if len(reasons) != 1 else ""
    revised = " (a revision so dated revises nothing: its event stands as first sent)" \
        if pack.source.event_id_columns else ""
    if not examples:
        what = f"{'leave their' if plural else 'leaves its'} publication date empty"
    else:
        what = (f"write a publication date that is no ISO date (e.g. {examples}){_abbreviated(examples)}"
                + (f" or leave it empty ({empty})" if empty else ""))
    return (f"key `source.published_column`: got {column!r}; {len(reasons)} of the {seen} rows the night reads "
            f"{what}, each quarantined{revised}, its "
            f"entity's metrics gaps where a window reaches it: expected the date{plural} each row was published, "
            "written as ISO dates or timestamps as the other rows write them")


