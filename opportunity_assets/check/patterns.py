"""`opportunity check`: how a column of periods may be written and read (pure over a few of its values): the strptime
patterns tried on values no pattern of the pack reads (`suggested_pattern`, `fitting_patterns`), ISO dates, times and
weeks, spreadsheet serial days, Unix times, year spans (`2012-13`), quarters, and values that name no period (31
November, week 54)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from opportunity_assets.periods import LAST_YEAR
from opportunity_assets.sources.spec import (
    DECIMAL_YEAR,
    UNIX_SCALES,
    UNIX_TIME,
    SourceSpec,
    is_named,
    is_unix,
    since,
)


def _likely(year: int) -> bool:
    """Whether a year is one a guessed pattern or unit may land in to be suggested, 1800 to 2999: the source reads
    years from `FIRST_YEAR`, but `'%Y'` reads `68` as year 68 and Unix time in the wrong unit lands in 1970 or
    far ahead; a guess that lands in an early year is the wrong guess."""
    return 1800 <= year <= LAST_YEAR


QUARTER = re.compile(r"^\s*(\d{4} ?-? ?[Qq][1-4]|[Qq][1-4] ?-? ?\d{4})\s*$")
"""A quarter as the source reads it without a `period_format` (`shapes`: `2015Q3`, `2015 Q3`, `2015-Q3`, `Q3 2015`)."""


QUARTERS_READ = ("expected no `period_format`: they are quarters (2015Q3, 2015 Q3, 2015-Q3 or Q3 2015), read as such "
                  "without one (strptime has no quarter directive)")
"""What a `period_format` over quarters is told."""


def bare_years(values: list[str]) -> bool:
    """Whether periods as written are all years of four digits (`1998`): a bare year the source reads without a
    pattern, which a pattern of months or days (`'%Y-%m'`) does not parse; not a row's number."""
    return bool(values) and all(re.fullmatch(r"\s*\d{4}\s*", v) and _likely(int(v)) for v in values)


def years_as_numbers(values: list[str]) -> bool:
    """Whether periods as written are all whole years written as decimal numbers (`2001.0`, a column of years that
    held a missing value, as R and pandas export it): `year_column` reads them, no date pattern does."""
    found = [re.fullmatch(r"\s*(\d{4})\.0+\s*", v) for v in values]
    return bool(found) and all(m is not None and _likely(int(m[1])) for m in found)


def is_iso(value: str) -> bool:
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


ISO_WEEK_WRITTEN = re.compile(r"\d{4}(?P<gap>[ -]*)(?P<w>[Ww])\d{2}")
"""An ISO week as the source reads it without a pattern, year first: `2011-W22`, `2011 W22`, `2011W22`."""


def iso_pattern(value: str) -> str | None:
    """The strptime pattern that reads an ISO date or timestamp as written (`2017-01-01T06:00:42Z` is
    '%Y-%m-%dT%H:%M:%SZ'), or an ISO week (`2011-W22` is '%G-W%V': trial 51's weeks written three ways were told
    'W%V %G' alone, which leaves the others unread), for a list of patterns beside another way; None for one with
    an offset (`-05:00`: a pattern's `%z` would move it to UTC, where the ISO reading keeps its clock) or not ISO."""
    if (week := ISO_WEEK_WRITTEN.fullmatch(value.strip())) is not None:
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
             "%Y-%m-%dT%H:%M:%S %z", "%Y-%m-%d %H:%M:%S.%f %z", "%Y-%m-%dT%H:%M:%S.%f %z",
             "%Y-%m-%d %H:%M:%S %Z", "W%V %G", "W%V-%G", "W%V/%G", UNIX_TIME, "unix_ms", "unix_us", "unix_ns")
"""Common ways a date is written, tried in this order on the values a period pattern does not parse: the first
that parses them all is suggested (month-first before day-first: a value that tells them apart decides). Twitter's
API writes `created_at` as `Wed Dec 23 17:38:18 +0000 2009`; an ISO week written week first, `W26 1987`, is read
only by a pattern (the year first, `1987 W26`, is read without one). Trial 118: an offset after a space,
`2024-03-01T08:15:30.250 +05:30`, is no ISO timestamp; `%f` reads its fraction of a second, 1 to 6 digits."""


def _serial_day(value: str) -> datetime | None:
    """The moment a spreadsheet's serial date names (`SERIAL_DAYS`), for one of 1920 to 2099 as written (7306 to
    73050, a fraction being the time of day), or None: a count of a study's days (4, 107) or a row's number is none,
    and `%Y%m` would read `27397` as July 2739."""
    if not re.fullmatch(r"\d{4,5}(\.\d+)?", value.strip()) or not _SERIAL_SPAN[0] <= float(value) <= _SERIAL_SPAN[1]:
        return None
    return datetime(1899, 12, 30) + timedelta(days=float(value))


_SERIAL_SPAN = (7306, 73050)
"""The serial dates of 1920-01-01 and 2099-12-31, the span a column of them is suggested for."""


UNIT_NAMES = {1: "seconds", 10**3: "milliseconds", 10**6: "microseconds", 10**9: "nanoseconds"}


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
        return bool(DECIMAL_YEAR_WRITTEN.match(value.strip()) or re.fullmatch(r"(1[89]|2\d)\d\d", value.strip()))
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
    lead = _weekday_lead(values) or _common_lead(values)
    spelt = [p for p in _spelt_otherwise(given) if p not in _PATTERNS]  # (before a lead: `'January-%Y'` reads one)
    tried = [*_PATTERNS, *spelt, *(lead + q for q in ("%Y", *_PATTERNS) if not is_named(q) and not (
        lead.startswith("%") and re.search("%[aA]", q)))] if lead.strip() else [*_PATTERNS, *spelt]
    fits = [p for p in tried if p not in given and all(_parses(v, p) for v in values)] if values else []
    zeros = re.fullmatch(r".*\d(\.0+)", values[0]) if values and not fits else None
    if zeros is not None and all(v.endswith(zeros[1]) for v in values):
        # (trial 35: `19750103.0`, whole numbers a column with a gap exports as decimals, told strptime's directives)
        whole = [v.removesuffix(zeros[1]) for v in values]
        return [p + zeros[1] for p in fitting_patterns(whole) if "%" in p and p + zeros[1] not in given]
    return fits


_WEEKDAY_LEAD = re.compile(r"(?P<day>(?i:mon|tue|wed|thu|fri|sat|sun)[a-z]*)(?P<gap>[^\w%]+)(?=\d)")
"""A weekday's name before the rest of a date (`Fri 01/01/1993`, `Monday, 15/07/1991`)."""


_OTHER_SPELLING = {"%b": "%B", "%B": "%b", "%a": "%A", "%A": "%a", "%y": "%Y", "%Y": "%y"}
"""A directive and its other spelling: a month or a weekday's name short or in full, a year of 2 or 4 digits."""


def _spelt_otherwise(given: Sequence[str]) -> list[str]:
    """The `given` patterns with a name or a year spelt the other way (`'%B-%Y'` for `'%b-%Y'`), one directive at a
    time: the rows a pattern does not parse in a column it reads are most often its own dates so written (trial 74:
    `January-2006` among `Jan-2006`, which no pattern of `_PATTERNS` reads, was told "mend them in the source")."""
    out = []
    for pattern in given:
        for found in re.finditer(r"%[bBaAyY]", pattern):
            spelt = pattern[:found.start()] + _OTHER_SPELLING[found.group()] + pattern[found.end():]
            if spelt not in given and spelt not in out:
                out.append(spelt)
    return out


def _weekday_lead(values: list[str]) -> str:
    """`'%a '` (`'%A, '` for names in full) where every value starts with a weekday's name and the same text after
    it, whichever days they name: strptime's name of any day, not the sample's one day as the pattern's own text
    (trial 72: `'Fri %m/%d/%Y'`, which reads Fridays alone); empty otherwise."""
    found = [_WEEKDAY_LEAD.match(v) for v in values]
    if not values or None in found:
        return ""
    full = {m["day"].lower() in _WEEKDAYS for m in found if m}
    gaps = {m["gap"] for m in found if m}
    if len(full) != 1 or len(gaps) != 1 or not all(m["day"].lower()[:3] in {d[:3] for d in _WEEKDAYS} and (
            len(m["day"]) == 3 or m["day"].lower() in _WEEKDAYS) for m in found if m):
        return ""
    return ("%A" if full.pop() else "%a") + gaps.pop()


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _common_lead(values: list[str]) -> str:
    """The text of no digit (and no `%`) that every value starts with: `X` of `X2000`, `X2001`."""
    lead = re.sub(r"[\d%].*", "", values[0], flags=re.DOTALL) if values else ""
    while lead and not all(v.startswith(lead) for v in values):
        lead = lead[:-1]
    return lead


YEAR_SPAN = re.compile(r"^\s*(\d{4})\s*([-/])\s*(\d{2}|\d{4})\s*$")
"""An academic or fiscal year as written: a year and the next (`2012-13`, `2012/13`, `2012-2013`)."""


def year_span_pattern(values: Sequence[str]) -> str | None:
    """The `period_format` reading `values` when each names a year and the next, as an academic or fiscal year is
    written (`2012-13`: '%Y-%y'; `2012/2013`: '%Y/%Y'), one way throughout; None otherwise. DuckDB's strptime
    keeps the later of two years, so each reads as the year it ends in: its figures known after that year ends,
    by the lag rule, never before the span does (the year it starts in would read 2012-13 as known in 2013,
    halfway through it)."""
    patterns = set()
    for value in (v for v in values if v.strip()):
        match = YEAR_SPAN.match(value)
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
    ends = int(YEAR_SPAN.match(example)[1]) + 1  # type: ignore[index]
    return (f"; they are academic or fiscal years, a year and the next ({example!r}): `period_format: "
            f"{pattern!r}` reads each as the year it ends in ({ends}), known once that year ends (by the lag rule)")


_YEAR = r"(?:\d{4}|\d{2})"
_CADENCES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("half-years", re.compile(rf"\d{{4}}\s*[-/]?\s*[HS][12]|[HS][12]\s*[-/]?\s*{_YEAR}|[12]\s*[HS]\s*{_YEAR}", re.I),
     "`grain: month`, a half-year a window of 6 months (`[0, 5]`, `min_rows: 1`)"),
    ("fiscal quarters", re.compile(rf"FY\s*{_YEAR}\s*[-/]?\s*Q[1-4]|Q[1-4]\s*[-/]?\s*FY\s*{_YEAR}", re.I),
     "`grain: quarter` (a fiscal year from July, April, October or January has calendar quarters: FY15 Q1 of a "
     "year from July is 2014-Q3)"),
    ("weeks of a fiscal year (a 52/53-week calendar)",
     re.compile(rf"FY\s*{_YEAR}\s*[-/]?\s*W(?:0?[1-9]|[1-4]\d|5[0-3])", re.I), "`grain: week`"),
    ("ten-day periods (dekads)", re.compile(r"\d{4}\s*[-/]?\s*\d{1,2}\s*[-/]?\s*(?:D|DEK|DEKAD)\s*[1-3]"
                                           r"|\d{4}\s*[-/]?\s*(?:D|DEK|DEKAD)\s*(?:0?[1-9]|[12]\d|3[0-6])", re.I),
     "`grain: day`, a ten-day period a window of 10 days (`[0, 9]`, `min_rows: 1`)"),
    ("4-weekly periods or fortnights (13 or 26 a year)",
     re.compile(r"\d{4}\s*[-/]?\s*(?:P|FN|F)\s*(?:0?[1-9]|1\d|2[0-6])|(?:P|FN|F)\s*(?:0?[1-9]|1\d|2[0-6])\s*[-/]?\s*\d{4}",
                re.I),
     "`grain: week`, a period a window of 4 weeks (a fortnight of 2) with `min_rows: 1`"),
)
"""Periods of a cadence no `grain` names (half-years, fiscal quarters and weeks, ten-day periods, 4-weekly periods),
as publishers write them, each with the grain its periods' last days are read by. No strptime directive reads
them: `'%Y H%m'` takes the second half-year for February (trial 89)."""


def cadence_of(values: Sequence[str]) -> tuple[str, str] | None:
    """The cadence no grain names that every one of `values` is written in (`2015 H1`, `FY15 Q1`, `2015-01-D2`,
    `2015 P13`), as (its name, the grain that reads its periods' last days), or None."""
    written = [v.strip() for v in values if v.strip()]
    for name, pattern, grain in _CADENCES:
        if written and all(pattern.fullmatch(v) for v in written):
            return name, grain
    return None


def cadence_clause(values: Sequence[str]) -> str:
    """A clause naming the cadence of `values` when it is one no grain names (`cadence_of`), with what reads it: a
    DuckDB `query` adding each period's last day as a date; empty otherwise (trial 89: half-years, fiscal quarters,
    ten-day and 4-weekly periods were told "e.g. '%b-%Y' for Mar-2018", which no pattern can satisfy)."""
    found = cadence_of(values)
    if found is None:
        return ""
    name, grain = found
    example = next(v.strip() for v in values if v.strip())
    return (f"; they are {name} ({example!r}), a cadence no `grain` names and no strptime directive reads: expected "
            "a DuckDB `source.query` adding each row's period's last day as a date (`format: duckdb`, `SELECT *, "
            "<its last day> AS period_end FROM read_csv(...)`, then `period_column: period_end`), read by "
            f"{grain}")


_MOST = 0.75
"""The share of a column's unparsed values a pattern must read to be named for them when some are no date at all."""


def _reading_most(values: list[str], given: Sequence[str]) -> str:
    """A clause naming the pattern that reads most of `values` (`_MOST` of them, three at least) where none reads
    them all, and the values it leaves: notes or a total written in the date column below a spreadsheet's table
    (trial 91: a workbook's serial dates with two lines of notes under them were told "e.g. '%b-%Y'"). Empty when
    no pattern reads that many."""
    values = [v.strip() for v in values if v.strip()]
    for pattern in _PATTERNS:
        if pattern in given:
            continue
        read = [v for v in values if _parses(v, pattern)]
        if len(read) >= max(3, _MOST * len(values)):
            others = [v for v in values if v not in read]
            shown = ", ".join(repr(v[:40]) for v in others[:2])
            return (f"{suggested_pattern(read, given)}; the other {len(others)} are no dates ({shown}): notes or "
                    "totals in the date column, rows a `where` keeps out")
    return ""


def day_and_month_swapped_in(pattern: str) -> str:
    """`pattern` with its month and its day in each other's place (`'%d/%m/%Y'` for `'%m/%d/%Y'`)."""
    return pattern.replace("%m", "\0").replace("%d", "%m").replace("\0", "%d")


def suggested_pattern(values: list[str], given: Sequence[str] = ()) -> str:
    """A clause naming a `period_format` that parses every one of `values` (periods as written, that `given`, or
    the ISO reading, does not), from `_PATTERNS`; empty when none does. Where the values do not tell day from month
    (1/3/2018), both orders are named. Academic or fiscal years (`2012-13`) are named as such (`year_span_clause`)."""
    if (span := year_span_pattern(values)) is not None and span not in given:
        return year_span_clause(values)
    if cadence := cadence_clause(values):
        return cadence
    fits = fitting_patterns(values, given)
    if not fits:
        return _reading_most(values, given)
    if fits[0] == SERIAL_DAYS:  # (trial 35: Excel's day numbers were told a strptime pattern, or day 0 2020-02-29)
        first = next(v.strip() for v in values if v.strip())
        return (f"; '{SERIAL_DAYS}' parses them: a spreadsheet's serial dates, Excel's and LibreOffice's day numbers "
                f"({first} is {_serial_day(first):%Y-%m-%d}), as a column of dates formatted as numbers exports them")
    if is_unix(fits[0]):
        first, per_second = next(v.strip() for v in values if v.strip()), UNIX_SCALES[fits[0]]
        return (f"; '{fits[0]}' parses them: Unix time, {UNIT_NAMES[per_second]} since 1970-01-01 UTC ({first} is "
                f"{unix_time(first, per_second)} UTC)")
    swapped = [p for p in fits[1:] if day_and_month_swapped_in(p) == fits[0]]
    if swapped:
        return (f"; {fits[0]!r} or {swapped[0]!r} parses them (these values do not tell day from month: the first "
                "is month-first)")
    return f"; {fits[0]!r} parses them"


DECIMAL_YEAR_WRITTEN = re.compile(r"^(1[89]|2\d)\d\d\.\d+$")
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
    (re.compile(r"^\d{4}-(\d{1,2})$"), "month", 12),
    (re.compile(r"^\d{4}-(\d{2})-\d{2}(?:[T ]\d.*)?$"), "month", 12))
"""Periods written as the reader reads them natively, each with its number's name and greatest value: `1999 Q5`,
`2015 W54`, `2015-13`, `2015-13-20T10:00Z` name a period no calendar has (a typo), not another way of writing
dates."""


def no_such_period(value: str) -> str | None:
    """`a quarter 5` for `1999 Q5`: a period written in a form the reader reads whose number no year has; None for
    any other value."""
    for form, name, greatest in _NO_SUCH_PERIOD:
        if (m := form.match(value.strip())) is not None:
            number = int(next(g for g in m.groups() if g is not None))
            return None if 1 <= number <= greatest else f"a {name} {number}"
    return None


YEAR_ALONE = re.compile(r"^\s*\d{4}\s*$")
"""A period written as a year alone, `1970`: read without a `period_format`."""


_ISO_MOMENT = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ]\d")
"""An ISO timestamp's date, `1900-02-29` of `1900-02-29T10:00:00Z`: its day is judged as an ISO date's is (the
reader reads such a timestamp without a pattern, so its day, not its form, is at fault)."""


def days_no_month_has(values: list[str], patterns: Sequence[str]) -> str | None:
    """The first of `values` when every one is written as a pattern of `patterns` reads but names a day its month
    has not (`29/02/2003`, `31/04/2004`: a typo in the rows, not a pattern to change; trial 37 was told to check the
    order of day and month); None otherwise."""
    def past_the_end(value: str) -> bool:
        text = value.strip()
        if "%Y-%m-%d" in patterns and (moment := _ISO_MOMENT.match(text)) is not None:
            text = moment.group(1)  # (trial 123: `1900-02-29T10:00:00Z` was told to name a strptime pattern)
        for pattern in patterns:
            try:
                datetime.strptime(text, pattern)
            except ValueError as exc:
                if "day is out of range for month" in str(exc):
                    return True
        return False

    written = [v for v in values if v.strip()]
    return written[0] if written and all(past_the_end(v) for v in written) else None
