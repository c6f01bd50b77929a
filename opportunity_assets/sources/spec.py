"""The pack's `source:` section: where the rows are, what a row is, and when each row became known.

Three shapes (`shape`), each read into the same entity × period panel the metrics count over:

- `panel`: one row per entity and period (Texas: city × month). A second row for the same entity and period is a
  duplicated key, unless the rows are vintages of it (`published_column`): then the latest known by as_of wins.
- `events`: one row per event or transaction (a loan, a flight), with the moment it happened. `aggregates` turn
  them into the panel's columns per entity and period: count, sum, avg, min, max, count distinct, share.
- `snapshot`: one row per entity per observation (`period_column` holds when it was observed); the latest
  observation in a period stands for the period. A file with no dates at all is one snapshot, known at `known_at`.

The period comes from a date or timestamp column (`period_column`, text parsed by `period_format` if given),
from `year_column` + `month_column` (+ `day_column`), or from `year_column` alone (year grain). Windows count in
`grain` periods.
"""

from __future__ import annotations

import calendar
import difflib
import functools
import math
import re
import typing
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from textwrap import shorten
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails

from opportunity_assets.formatting import is_number
from opportunity_assets.periods import GRAINS, GrainName
from opportunity_assets.sources.archives import is_archive
from opportunity_assets.sources.extensions import DATA_FILE_SUFFIXES, DUCKDB_SUFFIXES, Format, format_named_by

EVERY_ENTITY = "every entity"
"""The one entity of a joined table with `every_entity: true` (its rows' id, never matched: it joins by period)."""
ENTITY_JOINER = " / "
"""Between the values of an entity of several columns (`entity_id: [state, industry]`): `Victoria / Food retailing`
(the candidate id is its slug, `victoria-food-retailing`)."""
RESERVED = ("entity_id", "entity_name", "source_row", "period", "published_at", "periods_ago")
"""Names every history row carries beside the panel's columns: no panel column may take one."""
_NAME = r"^[a-z][a-z0-9_]*$"
TABLE_NAME = r'^[^".\s]([^".]*[^".\s])?(\.[^".\s]([^".]*[^".\s])?)?$'
"""A table's or view's name as the database lists it: `sales`, `analytics.sales` (a schema before the dot),
`Region Sales` (quoted in the SQL, so its case and spaces are kept); no double quote, at most one dot."""
Column = Annotated[str, Field(min_length=1)]
"""A source column's name, as its header writes it: anything but empty (an empty name is no column of any file, and
no engine can quote it)."""
_YEAR_ALONE = "`year` (a year column alone dates a year), or a `month_column` (or `quarter_column`, `week_column`)"


def _coarser_join_grain(index: int, grain: Any, main: str) -> None:
    """A join's own `grain`: the main source's, or a coarser one (a population a year beside monthly counts), whose
    figure each of the source's periods takes as known on the night (`shapes.joined_sql`); a finer one is refused:
    a join adds one row per entity and period, and a finer table has several (sum them in a `query`, or read
    them as the main source's events)."""
    key = f"source.join.{index}.grain"
    if grain not in GRAINS:
        raise KeyProblem(key, grain, f"one of {list(GRAINS)}: the joined table's own period, the main source's "
                         f"({main!r}) or a coarser one")
    if GRAINS.index(grain) < GRAINS.index(main):
        raise KeyProblem(key, grain, f"the main source's grain ({main!r}) or a coarser one: a {grain}'s rows are "
                         f"finer than the source's {main}s, several to each (sum them by a `query`, or read the table "
                         "as the main source's events)")


_MONTH_AT_MOST = ("`month`, `quarter` or `year`: a year and a month column date a month, not a day (a `day_column` "
                  "beside them dates a day)")


def _takes_numbers(annotation: Any) -> bool:
    """Whether a key's type holds numbers (`int`, `float`, a pair or list of them) and no truth value."""
    def types(node: Any) -> set[Any]:
        return {node} | {inner for arg in typing.get_args(node) for inner in types(arg)}
    found = types(annotation)
    return bool(found & {int, float}) and bool not in found


def _truth_in(value: Any) -> bool:
    """Whether a value, or an item of it, is a truth value (YAML's unquoted yes, no, on, off, true, false)."""
    if isinstance(value, bool):
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list | tuple) else ()
    return any(_truth_in(item) for item in items)


class PackModel(BaseModel):
    """A section of a criteria pack: its keys fixed, frozen, no infinity or NaN, and no truth value for a number."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_truth_for_numbers(cls, data: Any) -> Any:
        """Refuses `yes`, `no`, `on`, `off`, `true` or `false` where a key takes a number: YAML reads them unquoted
        as truth values, which pydantic took as 1 and 0 (trial 44: `publication_lag_days: yes` was a lag of one
        day, `window: [0, yes]` the window [0, 1], and check said ok; `thresholds: {strong: on}` was told "key
        `thresholds.marginal`: got 50.0; expected a score below strong (1)", a key the mistake was not in)."""
        if isinstance(data, dict):
            for name, field in cls.model_fields.items():
                key = field.alias or name
                value = data.get(key, data.get(name))
                if _truth_in(value) and _takes_numbers(field.annotation):
                    raise Within(key, value, "a number: YAML reads an unquoted yes, no, on, off, true or false as a "
                                 "truth value, never 1 or 0")
        return data


class _Spec(PackModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, populate_by_name=True)


class Condition(_Spec):
    """A test on one source column: `in` / `not_in` a list of values (compared as trimmed text), or a numeric
    comparison (`op` and `value`). Rows where the column is empty never match."""

    column: Column
    in_: list[str] | None = Field(default=None, alias="in")
    not_in: list[str] | None = None
    op: Literal["=", "!=", ">=", ">", "<=", "<"] | None = None
    value: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _values_as_text(cls, data: Any) -> Any:
        """Listed values as text; a truth value as `true` or `false`, which match their every spelling (YAML reads
        an unquoted `yes`, `no`, `on` or `off` as one: trial 33's `in: [yes]` over a column of `yes` and `no` was
        "got ['True']; 'True' matches no row", a value the user never wrote)."""
        if isinstance(data, dict):
            data = dict(data)
            text = data.get("value")
            if isinstance(text, str) and data.get("op") in ("=", "!=") and not is_number(text):
                # (trial 102: `{column: cd, op: "=", value: "yes"}` was told only "expected a number")
                listed = "not_in" if data["op"] == "!=" else "in"
                raise Within("value", text, f"a number, which `op` compares; text is matched by `{listed}: "
                             f"[{text}]` in place of `op` and `value` (compared as trimmed text)")
            for key in ("in", "in_", "not_in"):
                if isinstance(data.get(key), list):
                    data[key] = [v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
                                 for v in data[key]]
        return data

    @model_validator(mode="after")
    def _one_test(self) -> Condition:
        tests = [self.in_ is not None, self.not_in is not None, self.op is not None]
        for key, listed in (("in", self.in_), ("not_in", self.not_in)):
            if listed == []:  # (trial 33: `in: []` kept no row, a share of 0 for every entity, and check said ok)
                raise Within(key, listed, "at least one value to compare the column's cells with")
        if sum(tests) != 1:
            given: dict[str, Any] = {"in": self.in_, "not_in": self.not_in, "op": self.op}
            named = [k for k, v in given.items() if v is not None]
            key = named[-1] if named else "in"
            raise Within(key, given[key], "exactly one of `in`, `not_in` or `op` (with `value`) in a condition")
        if (self.op is None) != (self.value is None):
            raise Within("value" if self.value is None else "op", None,
                         "`op` and `value` together (e.g. `{column: delay, op: \">\", value: 15}`)")
        return self


class WideSpec(_Spec):
    """A table whose columns are entities or periods, side by side: a spreadsheet of series (`entity`), an R
    multivariate time series as exported; or a row per entity with a column per year (`period`), as the World Bank
    and Eurostat publish. Each of `columns` is read as one row per line, its header the entity or the period."""

    columns: list[Column] = Field(min_length=1)
    """The columns, one entity's series each (`entity`), or one period's values each (`period`)."""
    entity: str | None = Field(default=None, pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    """The name the entities go by (`country`): a column of no file, as `entity_id` would name one."""
    period: str | None = Field(default=None, pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    """The name the periods go by (`year`): a column of no file, as `period_column` would name one; the headers
    are read as its text (`2015`, `2015-07`, `Jul-2015` under `period_format`)."""
    value: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    """The name their values go by (`arrivals`): the column the metrics read (or `long.values`)."""
    counted_from: Column | None = None
    """With `period`: a column of ISO dates from which each header's number counts periods of `counted_in`, the
    date's own the first (`wk1`, ..., `wk76` counted in weeks from `date.entered`, tidyr's billboard: a song's weeks
    on the chart; a cohort table's month 1, 2, ... from each cohort's start). Without it the headers name the
    periods."""
    counted_in: GrainName | None = None
    """What `counted_from`'s headers count: `day`, `week`, `month`, `quarter` or `year` (the source's `grain` may be
    coarser: weeks on the chart read by the month, as events or a snapshot)."""

    @field_validator("columns")
    @classmethod
    def _different(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value) or not all(c.strip() for c in value):
            raise ValueError("a list of different, non-empty column names")
        return value

    @model_validator(mode="after")
    def _apart(self) -> WideSpec:
        if (self.entity is None) == (self.period is None):
            raise ValueError("exactly one of `entity` (the columns are entities) or `period` (the columns are "
                             "periods)")
        if self.header == self.value:
            raise Within("value", self.value, f"a name apart from `{self.across}`'s (both {self.value!r})")
        for key, name in ((self.across, self.header), ("value", self.value)):
            if name in self.columns:  # (trial 34: said as `source.wide`, its whole mapping, not the key at fault)
                raise Within(key, name, f"a name of its own, none of `columns` ({name!r} is one "
                             f"of them: its header names {'an entity' if self.across == 'entity' else 'a period'})")
        if self.counted_from is not None:
            self._counting()
        elif self.counted_in is not None:
            raise Within("counted_in", self.counted_in, "none without `counted_from`, the column of dates the "
                         "headers count from")
        return self

    def _counting(self) -> None:
        """`counted_from` beside `period`, over headers that each end in a different count from 1 (`wk1`)."""
        if self.period is None:
            raise Within("counted_from", self.counted_from, "no `counted_from` beside `wide.entity` (it counts "
                          "periods from a date: the columns are then periods, `wide.period`)")
        if self.counted_from in self.columns:
            raise Within("counted_from", self.counted_from, "a column of dates that is none of `columns`")
        if self.counted_in is None:
            raise Within("counted_in", None, "what the headers count from `counted_from`: `day`, `week`, `month`, "
                         "`quarter` or `year` (`wk1`, `wk2`: `week`)")
        counts = [count_of(c) for c in self.columns]
        if (n := next((i for i, k in enumerate(counts) if k is None or k < 1), None)) is not None:
            raise Within(f"columns.{n}", self.columns[n], "headers that each end in the period's count from "
                          "`counted_from`, 1 its own period (`wk1`, `wk2`, ...; `month_1`)")
        if len(set(counts)) != len(counts):
            twice = next(c for c in self.columns if counts.count(count_of(c)) > 1)
            raise Within("columns", twice, f"headers that each count another period ({count_of(twice)} is "
                          "counted twice)")

    @property
    def counts(self) -> list[int]:
        """Under `counted_from`, each column's count of periods from its row's date (1 that date's period)."""
        return [count_of(c) or 0 for c in self.columns]

    @property
    def across(self) -> Literal["entity", "period"]:
        """What the columns are: entities or periods."""
        return "entity" if self.entity is not None else "period"

    @property
    def header(self) -> str:
        """The name the columns' headers go by (`entity` or `period`)."""
        return self.entity or self.period or ""


_MONTH_WORDS = frozenset(n.lower() for n in (*calendar.month_name, *calendar.month_abbr, "Sept") if n)
"""A month's name as a header writes it, in full or short (English)."""


_QUARTER_HEADER = re.compile(r"\s*[Qq]([1-4])\s*")
"""A quarter's header with no year: `Q1` to `Q4`."""


def part_of_year(key: str, written: str) -> bool:
    """Whether `written` is a value the dating column `key` reads (`month_column`: 1 to 12 or a month's English
    name, `Sept` too; `quarter_column`: 1 to 4 or `Q1`..`Q4`; `week_column`: 1 to 53; `day_column`: 1 to 31)."""
    text = written.strip()
    if is_number(text):
        number = float(text)
        return number.is_integer() and 1 <= number <= {"month_column": 12, "quarter_column": 4,
                                                       "week_column": 53}.get(key, 31)
    return (key == "month_column" and text.lower() in _MONTH_WORDS) or \
        (key == "quarter_column" and _QUARTER_HEADER.fullmatch(text) is not None)


def within_year(columns: list[str]) -> str | None:
    """What a wide table's headers are when each names a part of a year and none the year: `month` (`Jan`, ...,
    `Dec`, or in full) or `quarter` (`Q1`, ..., `Q4`); else None. A statistics office's table of a row a year and a
    column a month or quarter (`Year, Jan, ..., Dec`, `Year, Q1, ..., Q4`), read with `year_column`."""
    if len(columns) < 2:
        return None
    if all(c.strip().lower() in _MONTH_WORDS for c in columns):
        return "month"
    return "quarter" if all(_QUARTER_HEADER.fullmatch(c) for c in columns) else None


def by_year(columns: list[str]) -> str:
    """What tells a table of a row a year and a column a month or quarter (trial 110: PBS costs, `Drug, Year, Jan,
    ..., Dec`): its headers name no year; `year_column` beside `wide.period` names the column of each row's year,
    and each header's month or quarter is read in it."""
    part = within_year(columns) or "month"
    shown = f"[{', '.join(repr(c) for c in columns[:3])}{', ...' if len(columns) > 3 else ''}]"
    return (f"its headers are {'month names' if part == 'month' else 'quarters'}, which name no year ({shown}): for "
            f"a row a year and a column a {part}, `year_column` naming the column of each row's year (`year_column: "
            f"Year`) beside `wide.period`, and each header's {part} is read in that year")


def neither_month_nor_quarter(columns: list[str]) -> list[str]:
    """The headers beside `year_column` that name no month (`Jan`, ..., in full, `Sept`) and no quarter (`Q1`, ...):
    `Qtr1`, `Jan-Mar`, a `Total` among them (trial 111); none when the headers name years (`2000`, `X2001`), a
    table of a column a year, whose refusal of `year_column` says so."""
    if all(re.search(r"\d{4}", c) for c in columns):
        return []
    return [c for c in columns if c.strip().lower() not in _MONTH_WORDS and not _QUARTER_HEADER.fullmatch(c)]


def wide_name_clash(data: dict[str, Any]) -> tuple[str, str, str] | None:
    """A `wide.period` or `wide.value` naming a column the pack reads already (`year_column`, `entity_id`,
    `entity_name`), compared in any case as DuckDB compares names: the wide key, its name and the key it clashes
    with (trial 111: `period: year` beside `year_column: Year` read the headers as years below 100)."""
    wide = data.get("wide")
    if not isinstance(wide, dict):
        return None
    taken: dict[str, str] = {}
    for key in ("entity_name", "entity_id", "year_column"):
        value = data.get(key)
        names: list[Any] = value if isinstance(value, list) else [value]
        taken.update({n.strip().lower(): key for n in names if isinstance(n, str)})
    for part in ("period", "value"):
        if isinstance(name := wide.get(part), str) and (clashing := taken.get(name.strip().lower())) is not None:
            return part, name, clashing
    return None


def count_of(header: str) -> int | None:
    """The whole number a header ends in (`wk12`: 12; `month_3`: 3), or None."""
    match = re.search(r"(\d+)\s*$", header)
    return int(match.group(1)) if match else None


class LongSpec(_Spec):
    """A table of one value per row, another column naming which value it is (a long, or tidy, table:
    `country, indicator, year, value`): each name listed in `columns` is read as a column of its own."""

    names: Column
    """The column naming the value a row holds (`indicator`): its texts, compared trimmed, are `columns`."""
    values: Column
    """The column holding the value (`value`)."""

    @model_validator(mode="after")
    def _apart(self) -> LongSpec:
        if self.names == self.values:
            raise ValueError(f"`names` and `values` named apart (both {self.names!r})")
        return self


class AggregateSpec(_Spec):
    """One panel column made from events: per entity and period, over the events that match `where`."""

    agg: Literal["count", "sum", "avg", "min", "max", "count_distinct", "share"]
    column: Column | None = None
    """Event column aggregated (every `agg` but `count` and `share`)."""
    where: list[Condition] = Field(default_factory=list)
    """Only events matching every condition count; for `share`, the share of the period's events that match."""

    @model_validator(mode="after")
    def _needs(self) -> AggregateSpec:
        if self.agg in ("count", "share"):
            if self.column is not None:
                raise Within("column", self.column, f"no column: agg `{self.agg}` counts events")
        elif not self.column:
            raise Within("column", None, f"the event column agg `{self.agg}` reads")
        if self.agg == "share" and not self.where:
            raise Within("where", [], "the conditions whose share of events agg `share` is")
        return self


_DIRECTIVES = frozenset("abcdfghjmnpuwxyzABGHIMSTUVWXYZ%")
_DASHED = frozenset("djmyHIMS")
"""The strptime directives DuckDB reads (`%-d`: unpadded), as its `strptime` accepts them."""
_A_DAY, _A_WEEK, _A_WEEKDAY = frozenset("djcx"), frozenset("UWV"), frozenset("aAuw")
"""Directives that name a day (of the month or year, a whole date), a week of the year, a day of the week."""


_SEVERAL = {"entity_id": "a column, or a list of different columns that name an entity together "
                        "(`[state, industry]`)",
            "event_id": "a column, or a list of different columns that name an event together "
                        "(`[office, claim_number]`)",
            "entity_name": "a column, or a list of different columns that name an entity together "
                           "(`[state, industry]`)",
            "period_format": "a strptime pattern, or a list of different patterns (the first that parses a value "
                             "reads it)"}
"""What each key that takes one text or a list of them expects (`SourceSpec._one_or_several`)."""
_ONE_ENTITY = {"entity_id": ", or no `entity_id` and `entity: <name>` for a source of one series with no entity "
                            "column",
               "entity_name": ", or no `entity_name` and `entity: <name>` for a source of one series with no "
                              "entity column"}
"""The other way an empty entity key may have meant: a source of one series."""


UNIX_TIME = "%s"
"""The `period_format` of Unix time: whole (or decimal) seconds since 1970-01-01 UTC, `1469278482` (GNU date's
`%s`, which strptime has not): the pattern stands alone, and its moment is read in UTC, as a zoned timestamp is."""
UNIX_SCALES: dict[str, int] = {UNIX_TIME: 1, "unix_s": 1, "unix_ms": 10**3, "unix_us": 10**6, "unix_ns": 10**9}
"""The `period_format`s of Unix time, each by itself, and its units per second: `%s` (or `unix_s`) seconds,
`unix_ms` milliseconds (`1469278482000`, JavaScript's and Kafka's), `unix_us` microseconds, `unix_ns` nanoseconds."""


DECIMAL_YEAR = "decimal_year"
"""The `period_format` of a decimal year, the year plus the fraction of it gone (`1981.25` for April 1981), as R's
time series index is exported: read as the day that fraction of the year reaches, rounded up, so that each
month's (k/12) and quarter's (k/4) index falls in its own period whatever the exported precision."""


SINCE_UNITS: dict[str, int] = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400, "weeks": 604800}
"""The units a count from a first moment may be in, and their seconds (fixed lengths only: a month has none)."""
_SINCE = re.compile(r"(\w+) since (.+)")
_UNIT_NAMES = {**{unit: unit for unit in SINCE_UNITS}, **{unit[:-1]: unit for unit in SINCE_UNITS},
               "s": "seconds", "sec": "seconds", "secs": "seconds", "min": "minutes", "mins": "minutes",
               "h": "hours", "hr": "hours", "hrs": "hours", "d": "days"}
"""A count's unit as CF and udunits also write it (any case, singular, `hr`, `d`: trial 117's `'day since ...'`)."""


def _unit(written: str) -> str:
    """The count's unit of `SINCE_UNITS` a pattern's first word names, or the word itself where it names none."""
    return _UNIT_NAMES.get(written.lower(), written)


def since(pattern: str) -> tuple[int, datetime] | None:
    """A `period_format` of a count from a first moment, as CF conventions write time units (`'days since
    2020-02-29'`, `'hours since 1970-01-01 00:00'`): the count's seconds per unit and the moment of 0 (day 1 is
    2020-03-01 there); None for another pattern or a malformed one (`since_problem` says why)."""
    found = _SINCE.fullmatch(pattern.strip())
    if found is None or _unit(found[1]) not in SINCE_UNITS:
        return None
    try:
        origin = datetime.fromisoformat(found[2].strip())
    except ValueError:
        return None
    return (SINCE_UNITS[_unit(found[1])], origin) if origin.tzinfo is None else None


def since_problem(pattern: str) -> str | None:
    """Why a `period_format` written as a count from a first moment (`<unit> since <date>`) is none, or None (it is
    one, or no such pattern)."""
    found = _SINCE.fullmatch(pattern.strip())
    if found is None or since(pattern) is not None:
        return None
    if found[1].lower().rstrip("s") in ("month", "quarter", "year"):  # (trial 102: `trend`, months from January 1993)
        return (f"a count's unit, one of {list(SINCE_UNITS)}, as 'days since 2020-02-29' (`{found[1]}` have no fixed "
                "length): a count of months is dated by a DuckDB `query` adding them to the first month, `format: "
                "duckdb` with `query: \"SELECT *, DATE '2019-12-01' + to_months(CAST(n AS INTEGER)) AS month FROM "
                "'file.csv'\"` and `period_column: month` (`to_quarters`, `to_years` likewise)")
    if _unit(found[1]) not in SINCE_UNITS:
        return (f"a count's unit, one of {list(SINCE_UNITS)} (`{found[1]}` has no fixed length or is none), as "
                "'days since 2020-02-29'")
    return (f"the first moment as an ISO date or time with no zone ({found[2].strip()!r} is none), as 'days since "
            "2020-02-29' or 'hours since 1970-01-01 00:00' (the count 0 is that moment)")


def is_unix(pattern: str) -> bool:
    """Whether a `period_format` reads Unix time (`UNIX_SCALES`) rather than by strptime."""
    return pattern in UNIX_SCALES


def is_named(pattern: str) -> bool:
    """Whether a `period_format` names a way of writing time (Unix time, a decimal year, a count from a first
    moment), not a strptime pattern."""
    return is_unix(pattern) or pattern == DECIMAL_YEAR or since(pattern) is not None


def _directives(pattern: str) -> set[str]:
    """The letters of a strptime pattern's directives (`%-d` is `d`)."""
    return {m[-1] for m in re.findall(r"%-?[A-Za-z%]", pattern)}


def finest_grain(pattern: str) -> str:
    """The finest grain a strptime pattern names: `day` when it names a day (`%d`, `%j`; a week's weekday),
    `week` for a week of the year alone, else `month` (`%b-%Y` names a month, whatever the grain reads it in)."""
    letters = _directives(pattern)
    if is_named(pattern) or letters & _A_DAY or (letters & _A_WEEK and letters & _A_WEEKDAY):
        return "day"
    return "week" if letters & _A_WEEK else "month"


def named_grain(pattern: str) -> str:
    """The finest period a strptime pattern names, for words: `finest_grain`'s, or `year` for a pattern naming no
    month (`%y` alone), which reads no grain finer than a month (a bare year on a finer grain is its first month),
    yet names only a year (trial 108: `grain: week` over `'%y'` was told "'%y' names a month at most")."""
    finest = finest_grain(pattern)
    return "year" if finest == "month" and not _directives(pattern) & _A_MONTH else finest


_A_MONTH = frozenset("mbBh")
"""Directives that name a month."""
_A_YEAR = frozenset("YyGcx")
"""Directives that name a year (`%G` the ISO week's year; `%c`, `%x` a whole date)."""


_NO_YEAR = "it names no year (`%Y`, `%y`), so every value would be read in 1900"


def yearless_or_mixed(pattern: str) -> str | None:
    """Why a strptime pattern cannot date a period, or None: one that names no year (`%H%M`, a time of day, read
    as 1900-01-01), or an ISO week `%V` beside the calendar year `%Y` (DuckDB reads no value with it: the ISO
    week's year is `%G`, which differs from the calendar year around New Year)."""
    letters = _directives(pattern)
    if is_named(pattern):
        return None
    if not letters:
        return _no_directive(pattern)
    if not letters & _A_YEAR:
        return f"{_NO_YEAR}: expected a pattern with the year, or `year_column` (a time of day, `%H%M`, dates no " \
               "period)"
    parts = [part.strip() for part in re.split(r"\s*[,;|]\s*|\s+or\s+", pattern) if part.strip()]
    if len(parts) > 1 and all(_directives(part) & _A_YEAR for part in parts):
        # (trial 120: `'%y,%Y'` for the list `['%y', '%Y']`, a traceback in check; `'%Y-%y'`, an academic year, is
        # one pattern)
        return (f"it names the year {len(parts)} times, in {len(parts)} patterns written as one text: expected one "
                f"year a pattern; patterns read one way or another are a YAML list, `period_format: {parts}`")
    if "V" in letters and "G" not in letters:
        return "`%V` is the ISO week, whose year is `%G`, not `%Y`: expected '%G W%V' for 1991 W06, or no " \
               "`period_format` (ISO week text, 1991 W06, 1991-W06 or 1991W06, is read without it)"
    return None


_LETTERS = (("YYYY", "%Y"), ("yyyy", "%Y"), ("MMMM", "%B"), ("MMM", "%b"), ("MM", "%m"), ("DD", "%d"),
            ("dd", "%d"), ("YY", "%y"), ("yy", "%y"), ("HH", "%H"), ("hh", "%H"), ("mm", "%M"), ("ss", "%S"))
"""A spreadsheet's (or Java's, moment.js's) letters for a date's parts, longest first, and strptime's directive for
each (`mm` minutes, as those write them; `MM` the month)."""
_NAMED = (DECIMAL_YEAR, *(name for name in UNIX_SCALES if name != UNIX_TIME))
"""The named formats written as words, which a misspelt one is offered (`%s`, a directive, is no word)."""


def _no_directive(pattern: str) -> str:
    """Why a `period_format` with no `%` directive at all dates nothing, naming what was likely meant: strptime's
    directives for a spreadsheet's letters (`YYYY-MM-DD`), or the named format it misspells (`decimal-year`,
    `unix-ms`). Trial 32: both were told "it names no year (`%Y`, `%y`)", `decimal_year` named nowhere."""
    meant = pattern
    for letters, directive in _LETTERS:
        meant = meant.replace(letters, directive)
    if meant != pattern and _directives(meant) & _A_YEAR:
        return (f"it has no strptime directive: did you mean {meant!r}? (strptime writes a date's parts as `%Y`, "
                "`%m`, `%d`, not as a spreadsheet's letters): expected a strptime pattern with the year")
    close = difflib.get_close_matches(re.sub(r"[\s-]+", "_", pattern.strip().lower()), _NAMED, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (f"it has no strptime directive and names no way of writing time this reads ({hint}those are "
            f"{', '.join(repr(n) for n in _NAMED)} and '<unit> since <date>'): expected one of them, or a strptime "
            "pattern with the year (`%Y-%m-%d`)")


def unknown_directive(pattern: str) -> str | None:
    """The first `%` directive of a strptime pattern that DuckDB's strptime has not (`%q`, a lone `%`), or None;
    `%s` (Unix time) is read by itself only."""
    if is_named(pattern):
        return None
    i = 0
    while i < len(pattern):
        if pattern[i] != "%":
            i += 1
            continue
        dashed = pattern[i + 1:i + 2] == "-"
        letter = pattern[i + 1 + dashed:i + 2 + dashed]
        if not letter or letter not in (_DASHED if dashed else _DIRECTIVES):
            return pattern[i:i + 2 + dashed]
        i += 2 + dashed
    return None


def _table_by_default(data: dict[str, Any]) -> str | None:
    """`table` where the pack leaves it out: `query` under a `query`, the file's name under a file that is no
    database (`licences_2018` for `exports/Licences-2018.csv.gz`); None for a database's table, which must be
    named."""
    if data.get("query") is not None:
        return "query"
    path = data.get("path")
    if not isinstance(path, str) or data.get("format") in ("duckdb", "postgres"):
        return None
    name = Path(path).name.lower().removesuffix(".gz")
    if name.endswith(DUCKDB_SUFFIXES):
        return None
    slug = re.sub(r"[^a-z0-9_]+", "_", name.rsplit(".", 1)[0] if "." in name else name).strip("_")
    return slug if re.match(_NAME, slug) else f"source_{slug}".rstrip("_")


NO_BREAK_SPACES = ("\u00a0", "\u202f")
"""The no-break spaces a locale groups thousands with (U+00A0, and U+202F in French exports: `2 400,50`), read as
the space `thousands_separator: " "` names."""


class SourceSpec(_Spec):
    table: str = Field(pattern=TABLE_NAME)
    """Name the source goes by in provenance records; for a DuckDB database or PostgreSQL, the table or view to
    read (unless `query` is given). Default for a file that is no database: the file's name (`licences` for
    `licences.csv`), under a `query`: `query`."""
    path: str | None = None
    """Source file, relative to the pack file: CSV, Parquet, JSON Lines or a DuckDB database
    (`opportunity_assets/sources/formats.py`). Not for PostgreSQL."""
    format: Format | None = None
    """The file's format; default: from the path's extension. `postgres` needs `url_env`."""
    sheet: str | None = None
    """Excel only: the sheet to read (default the workbook's first); its first row is the header."""
    member: str | None = None
    """A ZIP archive's (`path` ending `.zip`) file to read, by its path in the archive (or its file name, if no other
    member has it); default the archive's one data file. Its format comes from its own extension."""
    delimiter: Literal[",", ";", "\t", "|"] | None = None
    """CSV only: the character between fields; default a tab for `.tsv`, else a comma (`";"` for a spreadsheet's
    export in a locale that writes a decimal comma)."""
    url_env: str | None = Field(default=None, pattern=r"^[A-Z_][A-Z0-9_]*$")
    """PostgreSQL only: the environment variable holding the connection URL (secrets never sit in a pack)."""
    query: str | None = None
    """PostgreSQL or DuckDB only: a SELECT to read instead of `table`. Under `format: duckdb` without `path`, a
    query over files (`SELECT * FROM read_csv('exports/*.csv', union_by_name = true)`), relative to the pack."""
    entity_id: str | list[str] | None = None
    """Column whose value identifies a candidate; slugified into the candidate id. A list of columns names an
    entity of several columns together (state and industry): their values joined by `ENTITY_JOINER`. Required
    unless `entity` names the source's one entity."""
    entity_name: str | list[str] | None = None
    """Column shown to the user (a list: their values joined, as `entity_id`'s)."""
    entity: str | None = None
    """A source of one series with no entity column (a call centre's counts, one city's demand): its one entity's
    name, every row that entity's; its id is the name's slug. Instead of `entity_id` and `entity_name`."""
    wide: WideSpec | None = None
    """A panel whose entities are columns (`{columns: [Japan, UK, US], entity: country, value: arrivals}`): instead
    of `entity_id`, `entity_name` and `columns`, which it sets (`country`, `country`, `[arrivals]`). Or whose periods
    are columns (`{columns: ['2000', '2001'], period: year, value: population}`): instead of a period column, which
    it sets (`period_column: year`), and of `columns` (`[population]`) unless `long` names them."""
    long: LongSpec | None = None
    """A panel or snapshot of one value per row, named by another column (`{names: indicator, values: value}`):
    `columns` lists the names read, each a column of the panel (a row of another name is out of scope)."""
    shape: Literal["panel", "events", "snapshot"] = "panel"
    grain: GrainName = "month"
    """The period metrics' windows count in: day, week (ISO, from Monday), month, quarter or year."""
    period_column: Column | None = None
    """A date or timestamp column (or text: ISO dates, `2015-07`, `2015 Q3`, a year), truncated to the grain."""
    period_format: str | list[str] | None = None
    """strptime pattern for a text `period_column`, e.g. `%b-%Y` for `Jul-2015`; a list for a column written more
    than one way (`['%Y-%m-%d', '%B %d %Y']`): the first pattern that parses a value reads it. Unix time has its
    own patterns (`UNIX_SCALES`: `%s` for seconds, `unix_ms` for milliseconds, ...), as have a decimal year
    (`DECIMAL_YEAR`: 1981.25, R's time index) and a count from a first moment (`since`: `'days since 2020-02-29'`
    reads a study's day numbers)."""
    year_column: Column | None = None
    month_column: Column | None = None
    """With `year_column`, the month (1-12); without `period_column`, the default period is `year` + `month`."""
    day_column: Column | None = None
    """With `year_column` and `month_column`, the day of the month (1-31): the three date a day (a `day` or `week`
    grain)."""
    quarter_column: Column | None = None
    """With `year_column`, the quarter (1-4): the two date a quarter (a `quarter` or `year` grain)."""
    week_column: Column | None = None
    """With `year_column` (the ISO year), the ISO week (1-53, Monday to Sunday: week 53 only in a year that has
    one): the two date a week (a `week` grain or coarser), as epidemiological reports write it."""
    known_at: date | None = None
    """A snapshot file with no period column: every row is known on this date (and belongs to its period)."""
    events_from: date | None = None
    """Events only: the day from which the source records every entity's events (a register, a catalogue of every
    earthquake since 1900): a period with none of an entity's events from then on is a count of 0, before its first
    event too, and an entity without one in the night's span is quiet, not gone. Without it nothing is known of an
    entity before its first event, and one silent through the span is no longer recorded."""
    published_column: Column | None = None
    """When each row became known (a date or timestamp): vintages of a period are told apart by it, and the latest
    known by as_of wins. Without it, a row is known `publication_lag_days` after its period ends."""
    publication_lag_days: int = Field(default=30, ge=0, le=3650)
    """A period's row is assumed published this many days after the period ends (point in time)."""
    time_zone: str | None = None
    """The zone whose days (and weeks, months...) a moment belongs to, an IANA name (`Australia/Melbourne`): a
    timestamp that carries a zone (Parquet's, a DuckDB or PostgreSQL `TIMESTAMPTZ`) or text with an offset
    (`2014-01-01T00:30:00+10:00`, `...Z`) is read as its wall-clock time there; text with none is that time
    already. Without it, a zoned timestamp is read as its UTC moment and text as written. The main source's only:
    every joined table is read in it."""
    columns: list[Column] = Field(default_factory=list)
    """Numeric columns (panel, snapshot); values must parse as numbers >= 0 (unless `signed`), or be empty / NA (a
    gap). For events, the panel's columns are the `aggregates`' names."""
    signed: list[Column] = Field(default_factory=list)
    """Columns whose values may be negative (a delay, a profit); others refuse a negative cell."""
    thousands_separator: Literal[",", ".", " ", "'"] | None = None
    """How a numeric cell groups thousands, if it does: `1,234` with `","`, `1.234,5` with `"."` and a comma
    `decimal_separator` (removed before the number is read)."""
    decimal_separator: Literal[".", ","] = "."
    """`","` for numbers written `4,5` (European style)."""
    strip_from_numbers: list[str] = Field(default_factory=list)
    """Texts a numeric cell carries beside its number, removed before it is read: a currency sign or code, a unit,
    a % sign (`["€"]` for `€1,234.50`, with `thousands_separator: ","`; `["%"]` for `12.5%`, read as 12.5, a
    percent: its bounds and filters then in percent). Never a digit, a sign or a separator."""
    na_values: list[str] = Field(default_factory=lambda: ["NA"])
    """Texts a numeric cell holds for a missing number, besides an empty cell (compared trimmed, case and all):
    such a cell is a gap, not a bad cell, e.g. `["NA", "N/A", "-", "null"]`."""
    bounds: dict[str, tuple[float | None, float | None]] = Field(default_factory=dict)
    """Per column, the range its values can take, `[low, high]` (either may be null): a share in percent is
    `[0, 100]`. A cell outside is refused like a negative one: that cell's gap, its row quarantined with why."""
    aggregates: dict[str, AggregateSpec] = Field(default_factory=dict)
    """Events only: the panel's columns, by name."""
    event_id: str | list[str] | None = None
    """Events only: the column (or columns, together) naming each event, a claim's or a loan's number. Rows sharing
    it are one event written again, a revision: the night counts it once, as its latest row known by as_of reads
    (the latest `published_column` date; without one, the row furthest down the source), wherever that row dates
    or places it. A row with no id is an event of its own."""
    where: list[Condition] = Field(default_factory=list)
    """Only rows matching every condition are read at all (e.g. one product line of a larger file)."""
    join: list[JoinSpec] = Field(default_factory=list)
    """More tables, each read and judged as a source of its own (its rows point in time by its own dates), whose
    columns join the panel by entity and period; one dated by `known_at` alone (a table of attributes) joins by
    entity, its latest snapshot known by as_of. Entities match by their slug, as candidate ids do (`AL` and `al`
    are one entity). `entity_name` defaults to `entity_id`; `grain` to the main source's, or a coarser one (a
    population a year beside monthly counts: each period takes the figure of its own coarser period, else of the
    latest one before it, known on the night, `shapes.CARRIED`); a join takes no `join`."""

    @model_validator(mode="wrap")
    @classmethod
    def _defaults_unwritten(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """The spec, the period columns `_defaults` gave it (`year`, `month`) not among the keys the user wrote
        (`model_fields_set`): a message says "(the default)" of them (trial 24: a file of Month and Day columns and
        no year was told "`source.year_column`: got 'year'", a key the pack does not hold)."""
        spec = handler(data)
        if isinstance(data, dict):
            for key in ("year_column", "month_column"):
                if key not in data:
                    spec.__pydantic_fields_set__.discard(key)
        return spec

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "table" not in data and (table := _table_by_default(data)) is not None:
            data["table"] = table
        if isinstance(data.get("join"), list) and data.get("grain", "month") not in GRAINS:
            # the joins count in a grain that is none: judged once it is one, not said again at each join's keys
            # (trial 40: `grain: monthly` was three lines, two of them `source.join.N.grain`, keys the pack lacks)
            data = {k: v for k, v in data.items() if k != "join"}
        if isinstance(data.get("join"), list):
            grain = data.get("grain", "month")
            for i, j in enumerate(data["join"]):
                for key in NOT_IN_A_JOIN:
                    by_period = key == "wide" and isinstance(j, dict) and isinstance(j.get(key), dict) \
                        and j[key].get("period") is not None and j[key].get("entity") is None
                    if isinstance(j, dict) and key in j and not by_period:
                        raise KeyProblem.unknown(f"source.join.{i}.{key}", NOT_IN_A_JOIN[key], JOIN_KEYS)
                if isinstance(j, dict) and j.get("every_entity") is True:
                    for key in ("entity_id", "entity_name"):
                        if j.get(key) is not None:
                            raise KeyProblem(f"source.join.{i}.{key}", j[key], "", said=(
                                f"got {j[key]!r}; expected no `{key}` beside `every_entity: true` (its rows, one "
                                "per period, join every entity), or `entity_id` without `every_entity`"))
            for i, j in enumerate(data["join"]):
                if isinstance(j, dict) and "grain" in j:
                    _coarser_join_grain(i, j["grain"], grain)
            data["join"] = [({**j, "entity": EVERY_ENTITY, "grain": j.get("grain", grain)}
                             if j.get("every_entity") is True
                             else {"entity_name": j.get("entity_id"), **j, "grain": j.get("grain", grain)})
                            if isinstance(j, dict) else j for j in data["join"]]
        if isinstance(wide := data.get("wide"), dict) and wide.get("period") is not None and wide.get("entity") is None:
            headers = [str(c) for c in wide["columns"]] if isinstance(wide.get("columns"), list) else []
            part = within_year(headers)
            yearly = part is not None and data.get("year_column") is not None  # a row a year, a column a month
            if part is None and data.get("year_column") is not None and (neither := neither_month_nor_quarter(
                    headers)):  # (trial 111: `Qtr1`, a `Total` beside `Q1`..`Q4`: told to drop `year_column`)
                raise KeyProblem("source.wide.columns", wide["columns"], "", said=(
                    f"got {wide['columns']!r}; expected beside `year_column` ({data['year_column']!r}) month names "
                    "(Jan, ..., Dec) or quarters (Q1, ..., Q4), each read in its row's year: "
                    f"{', '.join(repr(c) for c in neither)} (neither) left out of the list, or renamed"))
            for key in ("period_column", "year_column", "month_column", "day_column", "quarter_column",
                        "week_column", "known_at", *(() if data.get("long") else ("columns",))):
                if data.get(key) is not None and not (yearly and key == "year_column"):
                    # (trial 111: `columns` beside `year_column` was told to add the `year_column` it had)
                    why = by_year(headers) if part and not yearly else \
                        ("its periods are its columns' headers, each read in its row's year (`year_column`), its "
                         f"values `wide.value` ({wide.get('value')!r})") if yearly else \
                        "its periods are its columns' headers (named by `wide.period`), its values `wide.value`"
                    raise KeyProblem(f"source.{key}", data[key], "", said=(
                        f"got {data[key]!r}; expected no `{key}` beside `wide.period`: {why}"))
            if (clash := wide_name_clash(data)) is not None:
                named, name, key = clash
                raise KeyProblem(f"source.wide.{named}", name, "", said=(
                    f"got {name!r}; expected a name of its own for the column the "
                    f"{'headers' if named == 'period' else 'values'} become, not `source.{key}`'s ({data[key]!r})"))
            if yearly and isinstance(wide.get("period"), str):  # each header's month (quarter) in its row's year
                data[f"{part}_column"] = wide["period"]
            elif isinstance(wide.get("period"), str):
                data["period_column"] = wide["period"]
            if isinstance(wide.get("value"), str) and not data.get("long") and data.get("shape") != "events":
                data["columns"] = [wide["value"]]
        elif isinstance(wide, dict):
            if data.get("long") is not None:
                raise KeyProblem("source.long", data["long"], "", said=(
                    f"got {data['long']!r}; expected no `long` beside `wide.entity` (a column per entity holds one "
                    "kind of value)"))
            for key in ("entity_id", "entity_name", "entity", "columns"):
                if data.get(key) is not None:
                    raise KeyProblem(f"source.{key}", data[key], "", said=(
                        f"got {data[key]!r}; expected no `{key}` beside `wide`: its entities are its columns' "
                        "headers (named by `wide.entity`), its values `wide.value`"))
            if isinstance(wide.get("entity"), str) and isinstance(wide.get("value"), str):
                data.update(entity_id=wide["entity"], entity_name=wide["entity"])
                if data.get("shape") != "events":  # events: the panel's columns are the aggregates' names
                    data.update(columns=[wide["value"]])
        if data.get("shape") == "events" and isinstance(data.get("aggregates"), dict) and "columns" not in data:
            for name in data["aggregates"]:  # (trial 101: an aggregate named '' was `source.columns.0`, a key an
                if not isinstance(name, str) or not name.strip():  # events pack has not)
                    raise KeyProblem("source.aggregates", name, "", said=(
                        f"got an aggregate named {name!r}; expected each aggregate under the name of the panel "
                        "column it makes, `crashes: {agg: count}`"))
            data["columns"] = list(data["aggregates"])
        dated = any(data.get(k) for k in ("period_column", "year_column", "known_at"))
        if not dated:  # the panel every earlier pack described: integer `year` and `month` columns
            data.setdefault("year_column", "year")
            if data.get("grain") != "year" or any(data.get(k) for k in ("quarter_column", "week_column")):
                # a year alone dates a year grain (trial 136: GSS answers by year were told their `month` was missing)
                data.setdefault("month_column", "month")
        return data

    @field_validator("entity_id", "entity_name", "event_id", "period_format")
    @classmethod
    def _one_or_several(cls, value: str | list[str] | None, info: ValidationInfo) -> str | list[str] | None:
        """A key that takes one text or a list of them: a non-empty one, or a list of different, non-empty ones; a
        list of one is that one."""
        if isinstance(value, str) and not value.strip():
            raise _problem(str(info.field_name), value, _SEVERAL[str(info.field_name)] + _ONE_ENTITY.get(
                str(info.field_name), ""))
        if isinstance(value, list):
            if not value or len(set(value)) != len(value) or not all(value):
                raise _problem(str(info.field_name), value, _SEVERAL[str(info.field_name)])
            if len(value) == 1:
                return value[0]
        return value

    @field_validator("na_values", mode="before")
    @classmethod
    def _codes_as_text(cls, value: Any) -> Any:
        """A number listed unquoted as its text (`[-1, 77]`, a survey's codes for no answer, as YAML reads them),
        compared with a cell's text as a quoted one is (trial 35: refused as "expected one name or text", once per
        code)."""
        if isinstance(value, list):
            return [str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for v in value]
        return value

    @field_validator("entity")
    @classmethod
    def _entity_named(cls, value: str | None) -> str | None:
        """The one entity's name, trimmed: text with a letter or digit (its slug is the candidate id)."""
        if value is not None and not re.search(r"[^\W_]", value):
            raise _problem("entity", value, "the name of the source's one entity, with a letter or digit "
                           "(`entity: Bank call centre`; its id is the name's slug)")
        return None if value is None else value.strip()

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        """An IANA zone name as the zone database spells it (`Australia/Melbourne`), a misspelt one named with the
        closest."""
        if value is None:
            return None
        written, zones = value.strip(), _zone_names()
        if written in zones:
            return written
        close = _closest_zone(written, zones)
        city = written.rpartition("/")[2]
        clock = _ABBREVIATED.get(written.upper())  # before a spelling close to it ('EST' for 'AEST': another clock)
        hint = (f" ({written!r} is an abbreviation, of a clock's standard or summer time: {clock[0]!r} keeps "
                f"{clock[1]}, both seasons)") if clock else f" (did you mean {close!r}?)" if close else (
            f" (no zone is named after {city!r}: a zone is named after one city of those that keep its clock, as "
            "'America/Chicago' names the US Central time)" if "/" in written else "")
        raise _problem("time_zone", value, f"an IANA time zone name, 'Australia/Melbourne' or 'UTC'{hint}")

    @field_validator("query")
    @classmethod
    def _one_statement(cls, value: str | None) -> str | None:
        """A query's statement, the `;` that ends it (as a SQL console writes it) and the comments after its last
        word taken off: the read wraps it in a SELECT of its own, where a `;` is a syntax error and a closing `-- note`
        comments the wrapping's `)` out (trial 102: "not valid SQL (syntax error at or near ")")" for a query that
        runs). Two statements stay two, and are refused."""
        if value is None:
            return None
        if value.strip() and not statement_end(value):
            folded = " (a line break in a quoted YAML string is a space: a query of several lines is a block, " \
                "`query: |`)" if "\n" not in value else ""
            raise _problem("query", value[:60], f"a SELECT statement: it is a comment to its end{folded}")
        if (apart := statements_apart(value)) is not None:
            first, rest = (shorten(" ".join(part.split()), 40, placeholder=" ...") for part in apart)
            raise _problem("query", value[:60], f"a single statement: the `;` after `{first}` ends one, and "
                           f"`{rest}` follows: the rows are read from one SELECT (or WITH … SELECT), so keep the one "
                           "that gives them")
        return statement_end(value)

    @field_validator("join", mode="wrap")
    @classmethod
    def _join_keys(cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        """A joined table's own problems name its keys (`source.join.0.path`), not the main source's, and it is
        read in the main source's `time_zone`. A join counts in the main source's grain: when the main source's own
        year column cannot date that grain, that is said first (every join would repeat it)."""
        try:
            joined = handler(value)
        except ValidationError as exc:
            main = info.data
            within_year = any(main.get(k) for k in ("month_column", "quarter_column", "week_column"))
            if main.get("year_column") and not within_year and main.get("grain", "month") != "year":
                raise _problem("grain", main.get("grain", "month"), _YEAR_ALONE) from None
            if main.get("month_column") and not main.get("day_column") and main.get("grain") in ("day", "week"):
                raise _problem("grain", main.get("grain"), _MONTH_AT_MOST) from None
            details = []
            for error in exc.errors():
                problem = (error.get("ctx") or {}).get("error")
                if isinstance(problem, KeyProblem) and error["loc"] and isinstance(error["loc"][0], int):
                    error = {**error, "ctx": {"error": problem.within(f"source.join.{error['loc'][0]}")}}
                detail = InitErrorDetails(type=error["type"], loc=error["loc"], input=error["input"])
                if "ctx" in error:
                    detail["ctx"] = error["ctx"]
                details.append(detail)
            raise ValidationError.from_exception_data(exc.title, details) from None
        zone = info.data.get("time_zone")  # every table in the main source's zone (`NOT_IN_A_JOIN`)
        return [j.model_copy(update={"time_zone": zone}) for j in joined] if zone else joined

    @model_validator(mode="after")
    def _consistent(self) -> SourceSpec:
        self._entity_keys()
        self._wide_keys()
        if self.format == "postgres":
            if not self.url_env:
                raise _problem("url_env", None, "the environment variable holding the PostgreSQL URL")
            if self.path:  # left from a file source: read by nothing, and a reader would think it is
                raise _problem("path", self.path, "no `path` beside `format: postgres`, whose rows come from the "
                               "database `url_env` names (or another `format`, to read the file)")
        elif not self.path and not self.over_files:
            raise _problem("path", None, "the source file, relative to the pack (or `format: duckdb` and a `query` "
                           "over files, without `path`)")
        database = self.format in ("postgres", "duckdb") or (
            self.format is None and (self.path or "").lower().endswith(DUCKDB_SUFFIXES))
        if self.query is not None and not database and (self.path or "").lower().endswith(DUCKDB_SUFFIXES):
            raise _problem("format", self.format, f"`format: duckdb` (or no `format`): {self.path} is named as a "
                           "DuckDB database, and `query` reads only a database")
        over_file = f"; to query the file, `format: duckdb` without `path`, the query naming it relative to the " \
            f"pack (`FROM '{self.path}'`)" if (self.path or "").lower().endswith(DATA_FILE_SUFFIXES) else ""
        if self.query is not None and self.format == "duckdb" and over_file:  # (trial 34: told `format: csv`)
            raise _problem("path", self.path, "no `path` beside `format: duckdb` and a `query` over a file: a `path` "
                           f"there is a DuckDB database, and {self.path} is a data file{over_file}")
        if self.query is not None and not database:
            raise _problem("query", self.query[:60], "a query only over a database: a DuckDB file (`.duckdb`, `.db` "
                           "or `format: duckdb`) or `format: postgres`; a CSV, Parquet or JSON Lines file is read "
                           f"whole (name its table's columns instead){over_file}")
        if self.member is not None and not is_archive(self.path):
            raise _problem("member", self.member, "no `member` but for a ZIP archive (a `path` ending .zip, the file "
                           "of it to read)")
        # the format a file's name says: an archive's member's own (unknown until read if no `member` names it)
        named = self.format or _extension_format(self.member if is_archive(self.path) else self.path)
        unnamed = named is None and is_archive(self.path) and self.member is None
        if self.sheet is not None and named != "excel" and not unnamed:
            raise _problem("sheet", self.sheet, "no `sheet` but for an Excel workbook (`.xlsx`, `.xlsm`, `.xls`, "
                           "`.ods`, or `format: excel`)")
        if self.delimiter is not None and named not in (None, "csv"):
            raise _problem("delimiter", self.delimiter, "no `delimiter` but for a CSV file (`.csv`, `.tsv`, `.txt` "
                           "or `format: csv`)")
        if self.thousands_separator is not None and self.thousands_separator == self.delimiter:
            raise _problem("thousands_separator", self.thousands_separator, "a separator other than "
                           f"`delimiter` {self.delimiter!r}")
        if self.thousands_separator is not None and self.thousands_separator == self.decimal_separator:
            raise _problem("thousands_separator", self.thousands_separator, "a separator other than "
                           f"`decimal_separator` {self.decimal_separator!r}")
        for n, text in enumerate(self.strip_from_numbers):
            if not text.strip() or re.search(r"[\d+\-.,]", text) or text in (self.thousands_separator, " "):
                raise _problem(f"strip_from_numbers.{n}", text, "a text a number is written beside, with no digit, "
                               "sign or separator (a currency sign, `€`; a unit, `kg`; `%`)")
        if self.query is not None and not statement_start(self.query).lower().startswith(("select", "with")):
            raise _problem("query", self.query[:60], "a single SELECT (or WITH … SELECT) statement")
        if self.period_column and self.year_column:
            raise _problem("period_column", self.period_column, "either `period_column` or `year_column`, not both")
        if self.period_format and not self.period_column:
            raise _problem("period_format", self.period_format, "a `period_column` to parse")
        if (problem := next(filter(None, map(since_problem, self.period_patterns)), None)) is not None:
            raise _problem("period_format", self.period_format, problem)
        if any(UNIX_TIME in p and p != UNIX_TIME for p in self.period_patterns):
            raise _problem("period_format", self.period_format, "'%s' by itself for Unix time (seconds since "
                           "1970-01-01 UTC, 1469278482): it reads a whole cell, with no other text or directive")
        if (directive := next(filter(None, map(unknown_directive, self.period_patterns)), None)) is not None:
            raise _problem("period_format", self.period_format, f"a strptime pattern (`{directive}` is no strptime "
                           "directive): its directives are `%Y` `%y` `%m` `%d` `%b` `%B` `%j` `%H` `%M` `%S`, "
                           "..., none for a quarter; a quarter written 2015 Q3, 2015-Q3, 2015Q3 or Q3 2015 is read "
                           "without `period_format`")
        if self.time_zone is not None and (literal := next(filter(_utc_literal, self.period_patterns), None)):
            raise _problem("period_format", self.period_format, f"no literal 'Z' under `time_zone` {self.time_zone!r}: "
                           f"{literal!r} reads each moment's UTC time as {self.time_zone}'s wall clock (hours off, "
                           "evenings a day late); ISO timestamps, `Z` and all, are read as UTC moments with no "
                           "`period_format` (drop it)")
        if (why := next(filter(None, map(yearless_or_mixed, self.period_patterns)), None)) is not None:
            if self.wide is not None and self.wide.across == "period" and within_year(self.wide.columns) \
                    and why.startswith(_NO_YEAR):  # (trial 110: told `year_column`, refused beside `wide.period`)
                why = f"{_NO_YEAR}: the headers of `source.wide.columns` are " + by_year(
                    self.wide.columns).removeprefix("its headers are ")
            raise KeyProblem("source.period_format", self.period_format, "",
                             said=f"got {self.period_format!r}; {why}")
        if self.month_column and not self.year_column:
            raise _problem("month_column", self.month_column, "a `year_column` beside it")
        self._quarter_and_week_keys()
        if self.day_column and not self.month_column:
            raise _problem("day_column", self.day_column, "a `year_column` and a `month_column` beside it")
        if self.year_column and self.month_column and not self.day_column and self.grain in ("day", "week"):
            if isinstance(self, JoinSpec):
                raise _problem("day_column", None, f"a day column beside `year_column` {self.year_column!r} and "
                               f"`month_column` {self.month_column!r}: the joined rows count in the main source's "
                               f"{self.grain} periods (`source.grain`), and a year and a month date only a month")
            raise _problem("grain", self.grain, _MONTH_AT_MOST)
        finest = min((finest_grain(p) for p in self.period_patterns), key=GRAINS.index, default=None)
        if finest is not None and GRAINS.index(finest) > GRAINS.index(self.grain):
            said = f"{self.period_format!r} names" if isinstance(self.period_format, str) else "its patterns name"
            tells = min((named_grain(p) for p in self.period_patterns), key=GRAINS.index, default=finest)
            grains = ("`year` (or a pattern with the month, `%m`, or the day, `%d`, if the column writes one)"
                      if tells == "year" else
                      f"`{tells}` or coarser (or a pattern with the day, `%d`, if the column writes one)")
            raise _problem("grain", self.grain, f"a grain the dates can tell: `period_format` {said} a {tells} at "
                           f"most, so every {self.period_column!r} value would fall on the first day of its {tells}: "
                           f"{grains}")
        if self.year_column and not self.within_year_column and self.grain != "year":
            if isinstance(self, JoinSpec):
                raise _problem("month_column", None, f"a month column beside `year_column` {self.year_column!r}: the "
                               f"joined rows count in the main source's {self.grain} periods (`source.grain`), and "
                               "a year column alone dates only a year; or, for a table of one row a year (a "
                               "population, a size), `grain: year` in the join: each period takes the latest year's "
                               "figure known on the night")
            raise _problem("grain", self.grain, _YEAR_ALONE)
        if self.known_at and (self.period_column or self.year_column):
            dated = "period_column" if self.period_column else "year_column"
            raise _problem("known_at", str(self.known_at), f"no period column beside it, where `{dated}` is "
                           f"{getattr(self, dated)!r} (known_at dates every row of a file of no dates, a snapshot or "
                           "a survey's events)")
        self._long_keys()
        if self.known_at and (self.shape == "panel" or (self.shape == "events" and isinstance(self, JoinSpec))):
            # (trial 33: a survey's answers, no date, counted by category: the main source's events may be so dated)
            also = "" if isinstance(self, JoinSpec) else \
                " (or `events`, a file of one row per event, a survey's answers, counted by `aggregates`)"
            raise _problem("shape", self.shape, f"`snapshot` for a file dated by `known_at`{also}")
        if self.published_column and "publication_lag_days" in self.model_fields_set:
            raise _problem("publication_lag_days", self.publication_lag_days, "none beside `published_column` (each "
                           f"row is known on its {self.published_column!r} date: no lag applies, none is added to it)")
        if self.known_at and "publication_lag_days" in self.model_fields_set:
            raise _problem("publication_lag_days", self.publication_lag_days, "none beside `known_at` (the file is "
                           "known on its known_at date: no lag applies)")
        if self.shape == "events":
            if not self.aggregates:
                raise _problem("aggregates", None, "events aggregated into the panel's columns, by name")
            if self.columns != list(self.aggregates):
                raise _problem("columns", self.columns, "no columns for events: the panel's columns are the "
                               f"aggregates' names {list(self.aggregates)}")
            if not self.period_column and not self.year_column and not self.known_at:
                raise _problem("period_column", None, "the column saying when each event happened (or "
                               "`year_column`, with `month_column` below a year grain, or `known_at` for a file "
                               "of no dates, a survey's answers)")
        elif self.aggregates:
            raise _problem("aggregates", list(self.aggregates), "aggregates only with `shape: events`")
        if self.events_from is not None and (self.shape != "events" or isinstance(self, JoinSpec)):
            where = "the main source's" if isinstance(self, JoinSpec) else f"`shape: events` (got {self.shape!r})"
            raise _problem("events_from", str(self.events_from), f"it only beside {where}: a panel's or snapshot's "
                           "periods are its rows, and a period without one is a gap")
        self._event_id_key()
        if not self.columns:
            raise _problem("columns", [], "at least one numeric column")
        key = "aggregates" if self.shape == "events" else "columns"
        for n, name in enumerate(self.columns):  # the name's own key (trial 26: `source.aggregates` for one of four)
            if name in RESERVED:
                raise _problem(f"aggregates.{name}" if self.shape == "events" else f"columns.{n}", name,
                               f"a name other than {list(RESERVED)} (each history row has those); "
                               "rename the column in the source or, for events, the aggregate")
        for name in self.read_columns:
            if name.startswith("__"):
                raise _problem(key, name, "a column name that does not start with `__` (internal names do)")
        for name in self.columns:
            if self.shape == "events" and not _is_name(name):
                raise _problem(f"aggregates.{name}", name, f"a name matching {_NAME}")
        seen: dict[str, tuple[str, str]] = {}  # the query reads names case aside: `Population` is `population`
        for key, name in [("columns", c) for c in self.columns] + \
                [(f"join.{i}.columns", c) for i, joined in enumerate(self.join) for c in joined.columns]:
            if name.casefold() in seen:
                where, first = seen[name.casefold()]
                said = "" if first == name else f", case aside ({name!r} is `{first}` of `source.{where}` to the query)"
                raise _problem(key, name, f"column names unique across the source and its joins{said}")
            seen[name.casefold()] = (key, name)
        tables: dict[str, str] = {}  # (trial 118: a join copied from another kept its `table`, and named the other)
        for key, name in [("table", self.table), *((f"join.{i}.table", j.table) for i, j in enumerate(self.join))]:
            if name is None:
                continue
            if name.casefold() in tables:
                raise _problem(key, name, f"table names unique across the source and its joins (`source."
                               f"{tables[name.casefold()]}` is {name!r} too, case aside): each names its rows' "
                               "provenance and quarantine")
            tables[name.casefold()] = key
        # what a cell of is read as a number: the panel's columns, or the event columns an aggregate sums, averages
        # or takes the least or greatest of (an aggregate's own name is no cell: a count, a share)
        numeric = set(self.columns) if self.shape != "events" else \
            {a.column for a in self.aggregates.values() if a.column and a.agg != "count_distinct"}
        events = (f"an event column an aggregate sums, averages or takes the least or greatest of "
                  f"({sorted(numeric) or 'none in this pack'}): an aggregate's own name, a count or a share, is no "
                  "source cell a bound or a sign could judge")
        unknown = sorted(set(self.signed) - numeric)
        if unknown:
            # a name a letter off one read: one of the two keys is misspelt (trial 64: `Speed` beside `Speed_`)
            close = [(u, c[0]) for u in unknown if (c := difflib.get_close_matches(u, sorted(numeric), n=1))]
            read = "aggregated" if self.shape == "events" else "listed"
            off = "" if not close else (f"; {close[0][0]!r} and the {read} {close[0][1]!r} differ by a letter or "
                                        "two: one of them is misspelt")
            raise _problem("signed", unknown,
                           (events if self.shape == "events" else f"columns among {sorted(numeric)}") + off)
        for column, (low, high) in self.bounds.items():
            if column not in numeric:
                raise _problem(f"bounds.{column}", [low, high],
                               events if self.shape == "events" else f"a column among {sorted(numeric)}")
            if (low is None and high is None) or (low is not None and high is not None and not low < high) \
                    or any(v is not None and not math.isfinite(v) for v in (low, high)):
                raise _problem(f"bounds.{column}", [low, high], "[low, high] with low < high (either may be null)")
        return self

    def _quarter_and_week_keys(self) -> None:
        """`quarter_column` and `week_column`: each beside `year_column` alone, at a grain they can date."""
        for key, finest in (("quarter_column", "quarter"), ("week_column", "week")):
            column = getattr(self, key)
            if column is None:
                continue
            if not self.year_column:
                raise _problem(key, column, f"a `year_column` beside it (the {finest}'s year)")
            other = next((k for k in ("month_column", "day_column", "quarter_column", "week_column")
                          if k != key and getattr(self, k)), None)
            if other is not None:
                raise _problem(key, column, f"no `{other}` beside it: a year and a {finest} date a {finest} (a year, "
                               "a month and a day column date a day)")
            if GRAINS.index(self.grain) < GRAINS.index(finest):
                within = "the joined rows count in the main source's periods (`source.grain`), and " \
                    if isinstance(self, JoinSpec) else ""
                # (trial 111: a year-row table's quarters are its headers, no quarter column the pack names)
                dating = f"the {finest}s of `source.wide.columns`" if self.wide is not None and \
                    self.wide.across == "period" else f"a {finest} column"
                raise _problem(key if within else "grain", column if within else self.grain,
                               f"{within}`{finest}` or coarser: a year{' (`year_column`)' if self.wide else ''} and "
                               f"{dating} date a {finest}")

    def _event_id_key(self) -> None:
        """`event_id` names an event of an events source whose rows are events: no entity's or period's column (an
        entity of one event, or a period of one), no source of a column per entity or period (each cell an event)."""
        if self.event_id is None:
            return
        if self.shape != "events":
            raise _problem("event_id", self.event_id, "an event's own id only with `shape: events` (a panel's or a "
                           "snapshot's rows are one per entity and period; their revisions are told apart by "
                           "`published_column`)")
        if self.wide is not None:
            raise _problem("event_id", self.event_id, "no `event_id` beside `wide` (each cell of its columns is an "
                           "event of its own, with no id)")
        taken = {**{c: "`entity_id`, each entity's" for c in self.entity_columns},
                 **{c: "a column dating the rows" for c in self.dated_columns}}
        if all(c in taken for c in self.event_id_columns):  # (`[office, claim]`, a number per office, is an id)
            column = self.event_id_columns[-1]
            raise _problem("event_id", self.event_id, f"the column of each event's own id: {column!r} is "
                           f"{taken[column]}, which many events share")
        measured = {a.column: (name, a.agg) for name, a in self.aggregates.items()
                    if a.agg in ("sum", "avg", "min", "max") and a.column is not None}
        if measure := next((c for c in self.event_id_columns if c in measured), None):
            name, agg = measured[measure]
            raise _problem("event_id", self.event_id, f"the column of each event's own id: {measure!r} is a figure "
                           f"aggregate `{name}` takes the {agg} of, which many events share alike (each id's rows "
                           "are read as one event, its latest row)")

    def _long_keys(self) -> None:
        """`long` reads a panel or snapshot (of entities in rows), its names apart from every other column read, and
        beside `wide.period` its values are the wide columns' (`wide.value`). Its names or values are no entity's id:
        each entity would hold one name's values alone (`entity_id: measure` over a region × measure table)."""
        if self.long is None:
            return
        for key in ("names", "values"):
            column = getattr(self.long, key)
            if column in self.entity_columns:
                raise _problem("entity_id", self.entity_id, f"the column of each entity's id: {column!r} is "
                               f"`long.{key}`, the column {'naming which value' if key == 'names' else 'of the value'} "
                               "each row holds, not an entity")
        if self.shape == "events":
            raise _problem("long", self.long.model_dump(), "no `long` for events (each event's columns are read as "
                           "they are, by `aggregates`): a `panel` or `snapshot` whose rows each hold one value")
        if self.wide is not None and self.long.values != self.wide.value:
            raise _problem("long.values", self.long.values, f"{self.wide.value!r}, the name `wide.value` gives the "
                           "values read from the wide columns")
        others = set(self.read_columns) - {self.long.names, self.long.values}
        if self.wide is not None:
            others.add(self.wide.header)
        for i, name in enumerate(self.columns):
            if name in (self.long.names, self.long.values) or name in others:
                raise _problem(f"columns.{i}", name, f"a value of `long.names` ({self.long.names!r}) other than the "
                               "name of a column the source reads (a column of the file keeps its name)")

    def _wide_keys(self) -> None:
        """A wide source's columns are its series: a column that dates the rows is none of them. Columns of
        entities are read as `wide.entity` and `wide.value`: the two names are no column the rows have already, and
        a condition or an aggregate reads the two names, not an entity's column (columns of periods are read as a
        period column, their values as any source's)."""
        wide = self.wide
        if wide is None:
            return
        for n, column in enumerate(wide.columns):
            if column in self.dated_columns:
                raise _problem(f"wide.columns.{n}", column, "only the entities' columns: it dates the rows "
                               "(`period_column` and the like), which every entity's values share")
        if wide.counted_from is not None and self.period_format:
            raise _problem("period_format", self.period_format, "none beside `wide.counted_from`: its dates are read "
                           "as ISO dates (2000-02-26), each header's period counted from them")
        if wide.across == "period":  # its headers are the period column's text: it reads like any other source
            return
        for key in ("entity", "value"):
            name = getattr(wide, key)
            if (key == "value" and name in RESERVED) or name in self.dated_columns:
                taken = "a name every history row has" if name in RESERVED else "a column that dates the rows"
                what, example = ("entities", "series") if key == "entity" else ("values", "level")
                raise _problem(f"wide.{key}", name, f"a name of its own for the {what} ({taken}): e.g. `{example}`")
        read_as = f"`{wide.entity}` and `{wide.value}` (`source.wide.entity`, `source.wide.value`)"
        for i, condition in enumerate(self.where):
            if condition.column in wide.columns:
                raise _problem(f"where.{i}.column", condition.column, f"a column the rows have: "
                               f"{condition.column!r} is one of `source.wide.columns`, an entity's series, read as "
                               f"{read_as}: `{{column: {wide.entity}, in: [{condition.column}]}}` keeps that entity, "
                               f"`column: {wide.value}` tests its values")
        for name, aggregate in self.aggregates.items():
            read: list[tuple[str, str | None]] = [("column", aggregate.column)]
            read += [(f"where.{i}.column", c.column) for i, c in enumerate(aggregate.where)]
            for part, named in read:
                if named is not None and named not in (wide.value, wide.entity if part != "column" else None):
                    raise _problem(f"aggregates.{name}.{part}", named, f"`{wide.value}` (`source.wide.value`): "
                                   "each cell of `source.wide.columns` is an event of that value, its column's "
                                   f"entity `{wide.entity}`")

    def _entity_keys(self) -> None:
        """`entity_id` and `entity_name` (columns), or `entity` (a source of one series), never both: a missing one
        names the other way too."""
        if self.entity is not None:
            for key in ("entity_id", "entity_name"):
                if getattr(self, key) is not None:
                    raise _problem(key, getattr(self, key), f"no `{key}` beside `entity` {self.entity!r} (every row "
                                   "is that one entity's): either `entity` for a source of one series, or "
                                   "`entity_id` and `entity_name` naming columns")
            return
        wanted = {"entity_id": "the column of each entity's id", "entity_name": "the column of each entity's name "
                  "(the id's own column will do)"}
        for key, what in wanted.items():
            if getattr(self, key) is None:
                raise KeyProblem(f"source.{key}", None, "", said=f"missing; expected {what}" + (
                    "" if isinstance(self, JoinSpec) else
                    ", or `entity: <name>` for a source of one series with no such column"))

    def floor(self, column: str) -> float | None:
        """The least value a cell of `column` may hold: its `bounds` low, else 0 unless it is `signed`."""
        low = self.bounds.get(column, (None, None))[0]
        return low if low is not None else None if column in self.signed else 0.0

    def ceiling(self, column: str) -> float | None:
        """The greatest value a cell of `column` may hold (`bounds` high), if any."""
        return self.bounds.get(column, (None, None))[1]

    # ---- derived views -------------------------------------------------------------------------------------
    @property
    def panel_columns(self) -> list[str]:
        """The panel's value columns: the source's, then each joined table's."""
        return [*self.columns, *(c for joined in self.join for c in joined.columns)]

    @property
    def signed_panel_columns(self) -> set[str]:
        """Panel columns that may go negative: a `signed` column, or an aggregate summing, averaging or taking the
        least or greatest of one (a joined table's too)."""
        own = ({name for name, a in self.aggregates.items() if a.agg in ("sum", "avg", "min", "max")
                and a.column in self.signed} if self.shape == "events" else set(self.signed))
        return own.union(*(joined.signed_panel_columns for joined in self.join))

    @property
    def share_columns(self) -> set[str]:
        """An events source's panel columns that are a `share` of each period's events: proportions of a count the
        source knows, whose noise is the binomial noise of that count (`verifications.series.share_noise`)."""
        return {name for name, a in self.aggregates.items() if a.agg == "share"} if self.shape == "events" else set()

    @property
    def quotient_columns(self) -> set[str]:
        """An events source's panel columns that are an `avg` or a `share` of each period's events: quotients the
        pack computes over a count of events, whose decimals are that count's (an average of 5 flights' delays in
        fifths, of 7 in sevenths), not the way a feed writes its figures."""
        return {name for name, a in self.aggregates.items() if a.agg in ("avg", "share")} \
            if self.shape == "events" else set()

    @property
    def summed_columns(self) -> set[str]:
        """An events source's panel columns that `sum` an event column: 0 in a period without events by
        construction, a figure no feed wrote there (`verifications.shifts.shifts`)."""
        return {name for name, a in self.aggregates.items() if a.agg == "sum"} if self.shape == "events" else set()

    @property
    def added_columns(self) -> list[str]:
        """An events source's panel columns that add up across entities, a `count` or a `sum` of each period's events:
        events moved from one entity to another move them by as much each way (`verifications.absorbed`)."""
        return [name for name, a in self.aggregates.items() if a.agg in ("count", "sum")] \
            if self.shape == "events" else []

    @property
    def counted_columns(self) -> list[str]:
        """An events source's panel columns that `count` each period's events: their noise is at least Poisson's."""
        return [name for name, a in self.aggregates.items() if a.agg == "count"] if self.shape == "events" else []

    @property
    def keyed(self) -> list[tuple[str, SourceSpec]]:
        """The source and each joined table, with the pack key that configures it (`source`, `source.join.0`, ...),
        in the order the source layer reads them into `facts.tables`."""
        return [("source", self), *((f"source.join.{i}", joined) for i, joined in enumerate(self.join))]

    @property
    def every_entitys_columns(self) -> set[str]:
        """The columns of the tables joined to every entity (`JoinSpec.every_entity`): one series every entity
        carries by the pack's own declaration, so never one entity's copy of another's figures."""
        return {c for joined in self.join if joined.every_entity for c in joined.columns}

    @property
    def joins_every_entity(self) -> list[bool]:
        """Per join: whether its rows join every entity (`JoinSpec.every_entity`), by period (or, dated by
        `known_at`, every period)."""
        return [joined.every_entity for joined in self.join]

    @property
    def joins_coarser(self) -> list[bool]:
        """Per join: whether it is of a coarser grain than the source's (`JoinSpec.grain`), each of the source's
        periods taking its latest figure known on the night."""
        return [GRAINS.index(joined.grain) > GRAINS.index(self.grain) for joined in self.join]

    @property
    def joins_by_entity_only(self) -> list[bool]:
        """Per join: whether it joins by entity alone (a table dated by `known_at`), not by entity and period."""
        return [joined.known_at is not None for joined in self.join]

    @property
    def event_columns(self) -> set[str]:
        """Event columns the aggregates read (events only)."""
        return {a.column for a in self.aggregates.values() if a.column}

    @property
    def entity_columns(self) -> list[str]:
        """The columns of an entity's id: `entity_id`, or each of its list (none for a source of one `entity`)."""
        return [] if self.entity_id is None else [self.entity_id] if isinstance(self.entity_id, str) \
            else list(self.entity_id)

    @property
    def event_id_columns(self) -> list[str]:
        """The columns of an event's own id (`event_id`, or each of its list; none without it)."""
        return [] if self.event_id is None else [self.event_id] if isinstance(self.event_id, str) \
            else list(self.event_id)

    @property
    def period_patterns(self) -> list[str]:
        """The strptime patterns of `period_format`, in its order (none without it)."""
        fmt = self.period_format
        return [] if fmt is None else [fmt] if isinstance(fmt, str) else list(fmt)

    @property
    def name_columns(self) -> list[str]:
        """The columns of an entity's name: `entity_name`, or each of its list (none for a source of one
        `entity`)."""
        return [] if self.entity_name is None else [self.entity_name] if isinstance(self.entity_name, str) \
            else list(self.entity_name)

    @property
    def read_columns(self) -> list[str]:
        """Every source column the reading needs, in a stable order (what the file must have)."""
        wanted: list[str | None] = [*self.entity_columns, *self.name_columns, *self.dated_columns]
        if self.shape == "events":
            for spec in self.aggregates.values():
                wanted += [spec.column, *(c.column for c in spec.where)]
            wanted += self.event_id_columns
        elif self.long is not None:  # the panel's columns are made from these (`shapes.long_sql`)
            wanted += [self.long.names, self.long.values]
        else:
            wanted += self.columns
        wanted += [c.column for c in self.where]
        if self.wide is not None:  # its entity or period, and its value, are made from its columns (`shapes.wide_sql`)
            made = {self.wide.header, self.wide.value}
            wanted = [c for c in wanted if c not in made] + list(self.wide.columns)
        return list(dict.fromkeys(c for c in wanted if c))

    @property
    def over_files(self) -> bool:
        """A DuckDB `query` over files, with no database file: `format: duckdb`, a `query` and no `path` (the query
        reads the files it names, relative to the pack: several CSV files by a glob, hive-partitioned Parquet)."""
        return self.format == "duckdb" and self.query is not None and self.path is None

    @property
    def within_year_column(self) -> str | None:
        """The column that dates a period within `year_column`'s year: the month, quarter or week, if any."""
        return self.month_column or self.quarter_column or self.week_column

    @property
    def key_columns(self) -> list[str]:
        """The columns a row's key is read from, for the duplicated-key reason: the entity's, then `dated_columns`,
        then a long source's names."""
        return [*self.entity_columns, *self.dated_columns, *([self.long.names] if self.long is not None else [])]

    @property
    def dated_columns(self) -> list[str]:
        """The columns a row's period and publication are read from."""
        counted = self.wide.counted_from if self.wide is not None else None
        return [c for c in (self.period_column, self.year_column, self.month_column, self.day_column,
                            self.quarter_column, self.week_column, counted, self.published_column) if c]


class JoinSpec(SourceSpec):
    """One table of `source.join`: a source of its own (every key of `source` but `join`; its `grain` the main
    source's or a coarser one). Its problems name its keys, `source.join.N.…`."""

    every_entity: bool = False
    """A table of one series (an interest rate, a price index, the weather by date), with no entity column: each
    period's row joins every entity of that period (a `known_at` one, every period). Instead of `entity_id`."""


NOT_IN_A_JOIN = {"wide": "a joined table's rows are entities, each its id in `entity_id` (`wide.period`, a column "
                         "per period, is read in a join; `wide.entity`, a column per entity, is not)",
                 "entity": "a joined table joins by the ids in its own `entity_id` column",
                 "join": "no join inside a join: list every table under the main source's `join`",
                 "time_zone": "every table is read in the main source's `time_zone`"}
"""The keys of `source` a join entry does not take, and why."""
JOIN_KEYS = [k for k in SourceSpec.model_fields if k not in NOT_IN_A_JOIN]
"""The keys a join entry takes."""


def _is_name(text: str) -> bool:
    return re.match(_NAME, text) is not None


def _extension_format(path: str | None) -> Format | None:
    """The format a path's extension names, if it names one (`sniff.infer_format` reads it so)."""
    return format_named_by(Path(path)) if path else None


class KeyProblem(ValueError):
    """A pack key with a bad value: `key `KEY`: got VALUE; expected WHAT` (one line)."""

    def __init__(self, key: str, value: Any, expected: str, *, said: str | None = None) -> None:
        shown = "nothing" if value is None else repr(value)
        self.key = key
        self.said = f"got {shown}; expected {expected}" if said is None else said
        """What follows the key in the message."""
        super().__init__(f"key `{key}`: {self.said}")

    @classmethod
    def unknown(cls, key: str, why: str, known: list[str]) -> KeyProblem:
        """A key the section does not take, with a "did you mean" when one of `known` is close."""
        close = difflib.get_close_matches(key.rsplit(".", 1)[-1], known, n=1)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        return cls(key, None, "", said=f"unknown key{hint}: {why}; expected only the keys {known}")

    def within(self, prefix: str) -> KeyProblem:
        """The same problem of a source nested at `prefix` (`source.join.0`): its `source.` keys re-rooted there."""
        if not self.key.startswith("source.") or self.key.startswith(f"{prefix}."):
            return self
        return KeyProblem(f"{prefix}.{self.key.removeprefix('source.')}", None, "", said=self.said)


class Within(ValueError):
    """A section's own check of one of its keys, named under the section's key (`window` of `metrics.sales_3m`):
    `key `metrics.sales_3m.window`: got [2, 0]; expected ...`, not the section's whole value (`criteria._describe`
    puts the two keys together)."""

    def __init__(self, key: str, value: Any, expected: str) -> None:
        super().__init__(f"{key}: expected {expected}")
        self.key, self.value, self.expected = key, value, expected


@functools.cache
def _zone_names() -> frozenset[str]:
    """The IANA zones this machine knows (Python's zoneinfo, the system's database or the `tzdata` package)."""
    import zoneinfo

    return frozenset(zoneinfo.available_timezones())


_ABBREVIATED = {
    **dict.fromkeys(("PST", "PDT"), ("America/Los_Angeles", "US Pacific time")),
    **dict.fromkeys(("CST", "CDT"), ("America/Chicago", "US Central time")),
    "EDT": ("America/New_York", "US Eastern time"), "MDT": ("America/Denver", "US Mountain time"),
    **dict.fromkeys(("AKST", "AKDT"), ("America/Anchorage", "Alaska time")),
    **dict.fromkeys(("AEST", "AEDT"), ("Australia/Sydney", "Australian Eastern time (Brisbane: "
                                                           "'Australia/Brisbane', no summer time)")),
    **dict.fromkeys(("ACST", "ACDT"), ("Australia/Adelaide", "Australian Central time")),
    "AWST": ("Australia/Perth", "Australian Western time"), "BST": ("Europe/London", "UK time"),
    "CEST": ("Europe/Paris", "Central European time"), "JST": ("Asia/Tokyo", "Japan time"),
    **dict.fromkeys(("NZST", "NZDT"), ("Pacific/Auckland", "New Zealand time")),
}
"""Time-zone abbreviations that name no zone of the database (trial 26: `time_zone: PST` was offered none), with
the zone that keeps that clock. An abbreviation is one season's name: the zone is both seasons'. `EST` and `MST`
are zones of the database (fixed offsets, no summer time), so they are taken as written."""


def _utc_literal(pattern: str) -> bool:
    """Whether a strptime pattern ends with a literal `Z` (`%Y-%m-%dT%H:%M:%SZ`), UTC's mark matched as text: the
    time it reads carries no zone, so under a pack's `time_zone` it is that zone's wall clock, not UTC's (trial 112)."""
    written = pattern.rstrip()
    return written.endswith("Z") and not written.endswith("%Z") and "%z" not in written


def _closest_zone(written: str, zones: frozenset[str]) -> str | None:
    """The zone a misspelt name means: the same name in another case, or its city spelt a letter or two otherwise
    in the same region ('Australia/Melborne'); None for another city's name ('America/Minneapolis' is no misspelling
    of 'America/Indianapolis', a zone an hour ahead of Minneapolis's clock)."""
    spelt = {z.casefold(): z for z in zones}
    if written.casefold() in spelt:
        return spelt[written.casefold()]
    region, _, city = written.rpartition("/")
    cities = {z.rpartition("/")[2]: z for z in sorted(zones, reverse=True)
              if not region or z.rpartition("/")[0].casefold() == region.casefold()}
    swapped = [c for c in sorted(cities) if _one_swap(city, c)]  # (trial 35: 'Europe/Olso', a ratio of 0.75)
    close = swapped or difflib.get_close_matches(city, sorted(cities), n=1, cutoff=0.8)
    return cities[close[0]] if close else None


def _one_swap(written: str, name: str) -> bool:
    """Whether `written` is `name` with two neighbouring letters swapped, case aside (`Olso` for `Oslo`): a slip
    of the keys, which in a short name leaves too few letters in place for a likeness cutoff to see it."""
    a, b = written.casefold(), name.casefold()
    apart = [i for i in range(len(a)) if len(a) == len(b) and a[i] != b[i]]
    return len(apart) == 2 and apart[1] == apart[0] + 1 and (a[apart[0]], a[apart[1]]) == (b[apart[1]], b[apart[0]])


def _sql_spans(query: str) -> Iterator[tuple[int, int, str]]:
    """`query`'s spans outside comments (`-- ...` to the line's end, `/* ... */`), in order: (start, end, text),
    a quoted text or name (`'a--b'`, `"x;y"`, their doubled quotes too) one span, any other character one each."""
    i, n = 0, len(query)
    while i < n:
        char = query[i]
        if char in "'\"":
            start, i = i, i + 1
            while i < n and not (query[i] == char and query[i + 1:i + 2] != char):
                i += 2 if query[i] == char else 1
            i = min(i + 1, n)
            yield start, i, query[start:i]
        elif query.startswith("--", i):
            newline = query.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif query.startswith("/*", i):
            close = query.find("*/", i + 2)
            i = n if close < 0 else close + 2
        else:
            yield i, i + 1, char
            i += 1


def statement_end(query: str) -> str:
    """`query` up to its last character of SQL: the whitespace, `;` and comments (`-- ...` to the line's end,
    `/* ... */`) after it taken off; quoted text and names (`'a--b'`, `"x;y"`) kept whole, their doubled quotes
    too."""
    ends = [end for _, end, text in _sql_spans(query) if not (text.isspace() or text == ";")]
    return query[:ends[-1]] if ends else ""


def statements_apart(query: str) -> tuple[str, str] | None:
    """The first statement of a query of two or more and the text after its `;` (a `;` outside quotes and
    comments with SQL after it), or None for one statement: the read wraps the query in a SELECT of its own, where
    a second statement is a syntax error (trial 106: `SELECT 1; SELECT ...` was "not valid SQL")."""
    statement = statement_end(query)
    semicolon = next((start for start, _, text in _sql_spans(statement) if text == ";"), None)
    if semicolon is None:
        return None
    return statement_start(statement[:semicolon]), statement_start(statement[semicolon + 1:])


def statement_start(query: str) -> str:
    """`query` from its first word of SQL: the whitespace and comments before it taken off (a query that opens with
    `-- months from trend` is still a SELECT)."""
    while True:
        query = query.lstrip()
        if query.startswith("--"):
            query = query.partition("\n")[2]
        elif query.startswith("/*"):
            query = query.partition("*/")[2]
        else:
            return query


def _problem(key: str, value: Any, expected: str) -> KeyProblem:
    return KeyProblem(f"source.{key}", value, expected)


SourceSpec.model_rebuild()
JoinSpec.model_rebuild()
