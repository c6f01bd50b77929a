"""`opportunity check`: a pack against its source's actual data, before any night runs.

The pack's own keys are validated when it loads (criteria.py: names, expressions, templates). Here the data is
read as a night would read it (the latest night the data supports, or `as_of`): the file opens in its format, the
declared columns exist, each numeric column parses, and the facts a new user wants first are counted. Every problem
is one line naming the pack key.
"""

from __future__ import annotations

import calendar
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from opportunity_assets.candidates.quarantine import bad_cells, joined_reason
from opportunity_assets.check import candidates as check_candidates
from opportunity_assets.check.cells import (
    MISSING_TEXTS,
    MOSTLY_TEXT,
    as_long_values,
    cell_problems,
    grouped_in_reach,
    grouped_most,
    negatives_unsigned,
    numbers_dressed,
    numeric_columns,
    text_cells,
    wide_columns_counting,
    wide_columns_empty,
    wide_columns_of_text,
)
from opportunity_assets.check.entities import (
    ids_continued,
    ids_renamed,
    ids_spelt_two_ways,
    ids_zero_padded,
    measure_in_key,
    names_changing,
    names_finer,
    names_per_row,
    names_shared,
    total_rows,
    without_padded_twins,
)
from opportunity_assets.check.periods import (
    UNPARSED_PERIODS,
    both_ways,
    calendar_week_patterns,
    coarser_periods_joined,
    commonest_values,
    coverage_past_trading_days,
    day_and_month_swapped,
    empty_period_column,
    figures_ended,
    fitting_patterns,
    grain_finer_than_rows,
    iso_patterns,
    iso_weeks_read_by_calendar,
    latest_period_cut_short,
    latest_rows_refused,
    night_after_the_data,
    not_dates,
    not_parsed_by,
    not_publication_dates,
    not_years,
    periods_read_as_vintages,
    periods_unparsed,
    published_unparsed,
    rows_dated_after_known,
    spec_at,
    suggested_pattern,
    sundays_starting_weeks,
    two_digit_years,
    undated_at_fault,
    unix_time_of_no_time,
    weeks_not_iso,
    written_periods,
    year_spans_read_as_months,
    years_beside_periods,
    zoned_elsewhere,
)
from opportunity_assets.check.values import (
    ages_of_counts,
    bounds_in_another_unit,
    columns_missing_from_files,
    listed_values_spelt_two_ways,
    listed_values_unmatched,
    long_names_unmatched,
    shares_over_empty_cells,
)
from opportunity_assets.criteria import CriteriaPack, MetricSpec
from opportunity_assets.periods import FIRST_YEAR, GRAINS, LAST_YEAR, last_possible_night
from opportunity_assets.records import Candidate, FilterResult
from opportunity_assets.sources import shapes
from opportunity_assets.sources.connection import file_key
from opportunity_assets.sources.csv_rows import (
    not_utf8_lines,
    shortened_last_cell,
    unfinished,
    unfinished_line,
    unfinished_record,
)
from opportunity_assets.sources.facts import copied_rows, latest_published_period, publication_span, source_facts
from opportunity_assets.sources.formats import (
    NOT_JSON,
    csv_delimiter,
    describe_location,
    infer_format,
    join_label,
    json_array,
    respelt_in,
)
from opportunity_assets.sources.probes import (
    duplicate_facts,
    join_entity_column,
    join_ids,
    join_ids_padded,
    join_shift,
    key_completions,
    names_as_values,
    names_per_entity,
)
from opportunity_assets.sources.reading import SourceError, quote_identifier
from opportunity_assets.sources.snapshot import earlier_snapshots, read_snapshot
from opportunity_assets.sources.spec import DECIMAL_YEAR, SourceSpec
from opportunity_assets.text import plain

if TYPE_CHECKING:
    from opportunity_assets.candidates.logic import ScanReport
    from opportunity_assets.sources.facts import CoarserRows, SourceFacts, TableFacts
    from opportunity_assets.sources.snapshot import SourceSnapshot




class NightRefused(ValueError):
    """`opportunity check`'s problems with a night, in one line: the night stops on them before anything is
    stored, however it was started (`opportunity run`, the schedule, the UI)."""


@dataclass(frozen=True)
class CheckReport:
    as_of: date | None
    problems: list[str] = field(default_factory=list)
    """One line each, naming the pack key; empty: the pack can run."""
    facts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """One line each, naming the pack key: likely mistakes that spoil nothing the night computes (bounds in
    another unit than their column's, which refuse nothing); the pack can run."""

    def __str__(self) -> str:
        head = f"{'problems' if self.problems else 'ok'}" + (f" (night {self.as_of})" if self.as_of else "")
        return "\n".join([head, *(f"  problem: {p}" for p in self.problems),
                          *(f"  warning: {w}" for w in self.warnings), *(f"  {f}" for f in self.facts)])


_COLUMN_KEY = re.compile(r"(entity_id|entity_name|entity_id\.\d+|entity_name\.\d+|_column|\.column|\.columns\.\d+|"
                         r"\.signed\.\d+|long\.names|long\.values|wide\.counted_from)$")
"""Source keys whose value is a column name."""


def _naming(spec: Any, path: str) -> Iterator[tuple[str, Any, bool]]:
    """(key, value, written by the user) for every text value under a source spec, `aggregates` included (not its
    `join`s: each is read as a source of its own): where a column name can come from."""
    if isinstance(spec, SourceSpec):
        for name in type(spec).model_fields:
            if name == "join" or (name == "columns" and spec.shape == "events"):
                continue  # (an events source's `columns` are its aggregates' names, not the file's columns)
            yield from ((k, v, w and name in spec.model_fields_set)
                        for k, v, w in _naming(getattr(spec, name), f"{path}.{name}"))
    elif hasattr(spec, "model_fields"):
        for name in type(spec).model_fields:
            yield from _naming(getattr(spec, name), f"{path}.{name}")
    elif isinstance(spec, dict):
        for name, value in spec.items():
            yield from _naming(value, f"{path}.{name}")
    elif isinstance(spec, list | tuple):
        for i, value in enumerate(spec):
            yield from _naming(value, f"{path}.{i}")
    elif isinstance(spec, str):
        yield path, spec, True


class SourceProblem(ValueError):
    """A source that cannot be read, in one line that already names the pack key at fault (`source_problem`)."""




def _entities(n: int) -> str:
    """`n` entities in words: "1 entity", "3 entities" (trial 28: "cite_rate (1 entities)")."""
    return f"{n} entit{'y' if n == 1 else 'ies'}"


def _read_fact(pack: CriteriaPack, snapshot: SourceSnapshot, events: int, read_rows: int) -> str:
    """Check's first fact: entities, rows in reach (an events source's panel rows are its entity-periods, not its
    rows: 1728 plot-months of 35,549 captures, the events read said beside them), latest period, quarantined rows."""
    entities, quarantined = snapshot.metrics.height, snapshot.quarantined.height
    latest = "none" if snapshot.anchor_period is None else pack.grain.label(snapshot.anchor_period)
    in_reach = f"{read_rows} rows in reach" if pack.source.shape != "events" else \
        f"{events} events read, {read_rows} entity-periods in reach"
    return (f"{_entities(entities)}, {in_reach}, latest period {latest}, {quarantined} "
            f"quarantined row{'' if quarantined == 1 else 's'}")


def _copies_by_nature(pack: CriteriaPack, repeats: tuple[int, int] | None) -> list[str]:
    """A warning: an events source half or more of whose rows repeat another in every column the night reads (the
    World Values Survey's answers, a country, a year and a score from 1 to 10: 346,136 rows, 2,523 distinct), while
    `integrity.repeated_events` doubts: its copies are the data's nature, not a feed sent twice, and the rule doubts
    every period of an entity with few past ones ("0.996 of them copies of another ... sent twice?")."""
    rule = pack.integrity.repeated_events
    if repeats is None or rule.effect == "note":
        return []
    rows, distinct = repeats
    if rows < _FEWEST_REPEATED or 2 * distinct > rows:
        return []
    return [f"key `integrity.repeated_events`: got effect {rule.effect!r}; {rows - distinct} of the {rows} events "
            f"the night reads repeat another in every column it reads ({distinct} distinct), so copies are this "
            "source's nature (answers on a scale, a category and a date), and the rule would doubt periods for "
            "them as if a feed had been sent twice: expected `integrity: {repeated_events: {effect: note}}`, or a "
            "column that tells the events apart among those the pack reads (a `count_distinct` of an id)"]


_FEWEST_REPEATED = 100
"""Fewest events before their repeats are judged the source's nature (a few events may all agree)."""


def _long_table(pack: CriteriaPack, missing: list[str], present: tuple[str, ...]) -> str | None:
    """Columns the pack lists (`source.columns`) that the file lacks but holds as values of one of its columns: a
    long table, a row per value (`country, indicator, year, value`), read by `source.long`: that problem, or None."""

    listed = [c for c in pack.source.columns if c in missing]
    if len(listed) != len(set(missing)) or not (found := names_as_values(pack, listed, list(present))):
        return None
    column, held = found
    n = pack.source.columns.index(held[0])
    values = [c for c in present if c != column and c not in pack.source.read_columns]
    return (f"key `source.columns.{n}`: got {held[0]!r}; the file has no such column, but its column {column!r} "
            f"holds {held if len(held) > 1 else repr(held[0])} as values: a long table (one value per row, named by "
            f"{column!r}): expected `long: {{names: {column}, values: <the column of the numbers"
            f"{', one of ' + str(values[:6]) if values else ''}>}}` beside `columns`")


def source_problem(pack: CriteriaPack, error: str, *, missing: tuple[str, ...] = (),
                   no_period: bool = False, within: str = "source", present: tuple[str, ...] = ()) -> str:
    """A source that could not be read, as one line naming the pack key at fault: the key that names a `missing`
    column (an aggregate's column, the period column), the period keys when `no_period` parses; the source's path
    otherwise. `within`: the source's key, `source` or a joined table's `source.join.N`, whose keys are named."""
    src = spec_at(pack, within)
    if missing:
        wanted = set(missing)
        keys = {v: (k, w) for k, v, w in reversed(list(_naming(src, within)))
                if v in wanted and _COLUMN_KEY.search(k)}
        period = {"year_column", "month_column", "day_column", "quarter_column", "week_column", "period_column"}
        if len(keys) == 1:  # one key names what is missing: that key is at fault
            (value, (key, written)), = keys.items()
            return f"key `{key}`: got {value!r}{'' if written else ' (the default)'}; {error}" \
                + (_no_year(pack, src, within) if key == f"{within}.year_column" and not written else "")
        if keys and all(k.rsplit(".", 1)[-1] in period for k, _ in keys.values()) and src.known_at is None:
            named = ", ".join(f"`{k}`" for k, _ in sorted(keys.values()))
            return (f"key `{within}.period_column`: the period keys {named} name columns the file lacks; {error}; "
                    f"a file with no dates is one snapshot: `shape: snapshot` with `{within}.known_at`")
        if keys and within == "source" and (long := _long_table(pack, list(keys), present)):
            return long
        if keys:
            named = ", ".join(f"`{k}`" for k, _ in sorted(keys.values()))
            if src.query:  # (no `path` to blame, or a folder's files the query reads: the SELECT is at fault)
                return f"key `{within}.query`: {error} (named by {named}: does the SELECT keep them?)"
            if src.format == "postgres":
                return f"key `{within}.table`: {error} (named by {named}: is it the right table?)"
            return f"key `{within}.path`: {error} (named by {named}: is it the right file?)"
    if error.startswith("key `"):  # the reader named the key already
        return error
    if no_period:
        scope = (f" (or `{within}.where` keeps no row: its values are compared as trimmed text, case and all)"
                 if src.where else "")
        if src.known_at is not None:
            return f"key `{within}.known_at`: got {src.known_at.isoformat()}; {error} (a snapshot is seen from its " \
                   f"known-at date on: expected a date on or before the night)"
        if src.period_column:
            return (f"key `{within}.period_format`: got {src.period_format!r} for column {src.period_column!r}; "
                    f"{error}: expected a strptime pattern its values parse with (e.g. '%b-%Y' for Mar-2018), "
                    f"or none for ISO dates and quarters like 1998 Q1{scope}")
        return (f"key `{within}.year_column`: got {src.year_column!r} and `{within}.month_column` "
                f"{src.month_column!r}; {error}: expected integer year and month columns, or "
                f"`{within}.period_column`{scope}")
    return f"key `{within}.path`: {error}"


def _no_year(pack: CriteriaPack, src: SourceSpec, within: str) -> str:
    """What a source dated by a month (and a day) with no year column needs, said after the file's columns: trial
    24's airquality, `Month` and `Day` of 1973 with the year in no column."""
    if src.month_column is None:
        return ""
    dating = f"`{within}.month_column` {src.month_column!r}" + (
        f" and `{within}.day_column` {src.day_column!r}" if src.day_column else "")
    example = src.path or "data.csv"
    return (f": {dating} date a row only with its year: expected `{within}.year_column` naming the column of each "
            f"row's year; a file of one year's rows with the year in no column is read through a DuckDB query adding "
            f"it (rows of 1973: `format: duckdb` with `query: \"SELECT *, 1973 AS year FROM '{example}'\"`)")


def _no_rows_read(pack: CriteriaPack, within: str, spec: SourceSpec, empty: str = "") -> str | None:
    """A `query` that returns no rows, or a database's table that has none, named by that key with the query whole
    or the table's name; None for a file (its `path` says it). Trial 25: a query whose WHERE kept nothing was told
    as "'SELECT ... WH' has no rows (a header, or a table, and nothing in it)", and an empty table of a `.duckdb`
    file named `path`. `empty`: the joined columns this leaves empty, said in parentheses."""
    said = f" ({empty})" if empty else ""
    if spec.query:
        return (f"key `{within}.query`: got {spec.query!r}; it returns no rows{said}: expected a query that returns "
                "the rows (a WHERE that keeps none?)")
    if spec.format == "postgres":
        where = f"the PostgreSQL database (URL from {spec.url_env})"
    elif spec.path is not None and infer_format(pack.path_of(spec), spec.format, within=within) == "duckdb":
        where = str(pack.path_of(spec))
    else:
        return None
    return f"key `{within}.table`: got {spec.table!r}; the table in {where} has no rows{said}: expected the data"


def no_period_problem(pack: CriteriaPack, last_night: date) -> str:
    """No row of the source is dated on or before `last_night`: it has no rows, `source.where` keeps none, no
    period parses, or no publication date does (`source.published_column`)."""

    facts = source_facts(pack, last_night).tables[0]
    rows, in_scope = facts.rows, facts.in_scope
    src = pack.source
    if not rows:
        return _no_rows_read(pack, "source", src) or (
            f"key `source.path`: {describe_location(pack)} has no rows (a header, or a table, and nothing in it): "
            "expected the data")
    if not in_scope:
        if text_compared := _text_compared(pack, "source", src, facts):
            return text_compared[0]
        if listed := listed_values_unmatched(pack, "source", src)[0] + long_names_unmatched(pack, "source", src):
            return listed[0]
        conditions = [w.model_dump(by_alias=True, exclude_none=True) for w in src.where]
        key, got = ("source.where.0", conditions[0]) if len(conditions) == 1 else ("source.where", conditions)
        compared = "text compared trimmed, case and all; numbers by `op` in the column's own unit"
        if all(w.op is not None for w in src.where):
            compared = "numbers compared by `op`: is each `value` in the column's own unit?"
        return (f"key `{key}`: got {got}; it keeps none of the {rows} rows of {describe_location(pack)}: expected "
                f"conditions some rows meet ({compared})")
    if src.published_column and facts.dated and not facts.published:
        return not_publication_dates(pack, "source", facts.dated)
    if src.period_column and not facts.dated:
        return not_parsed_by(pack, "source") if src.period_format else not_dates(pack, "source")
    if src.year_column and src.known_at is None and not facts.dated:
        return not_years(pack, "source")
    where = pack.source.path or pack.source.table
    return source_problem(pack, f"source {where} has no parseable period on or before {last_night}", no_period=True)


def _file_cut_short(pack: CriteriaPack, quarantined: pl.DataFrame, history: pl.DataFrame) -> list[str]:
    """A warning naming `source.path` when the CSV or JSON Lines file ends in the middle of a line that is
    quarantined (too few fields, a quote that never closes, JSON that does not parse): a file cut short. Trial 17:
    dslabs' tweets cut in half said only "6 fields, expected 9 (source row 11292)", and check said ok on a night
    years before the data's end (Parquet and gzip cut short are problems: they do not read at all; here the rows
    before the cut do). A CSV's last line that parses is judged by its last cell and its entity's rows."""
    src = pack.source
    if src.format == "postgres":
        return []
    path = pack.path_of(src)
    fmt = infer_format(path, src.format)
    if fmt not in ("csv", "jsonl") or (found := unfinished(path)) is None:  # (a newline at its end: no record cut)
        return []
    if fmt == "jsonl" and json_array(found[1]) is not None:
        return []  # a whole JSON array read as one (`json.dump` writes no newline after its `]`: trial 54)
    last = found[0]
    labels = tuple(f"{join_label(pack, j)}: " for j in src.join)  # (a joined table's rows are numbered its own way)
    reasons = [r for r in quarantined.filter(pl.col("source_row") == last)["reason"].to_list()
               if not r.startswith(labels)]
    unseen = ""
    if not reasons and fmt == "jsonl" and (record := _no_json(found)) is not None:
        reasons, unseen = [record], ", once its own date is published (after this night)"
    if not reasons:
        if fmt != "csv":
            return []
        delimiter = csv_delimiter(path, src.delimiter)
        if (line := unfinished_line(found, delimiter)) is None:
            return _last_cell_cut_short(path, found, delimiter) \
                or _last_entity_cut_short(pack, found, delimiter, history)
        reasons, unseen = [line[1]], ", once its own date is published (after this night)"
    reason = reasons[0]
    return [f"key `source.path`: source file {path} ends in the middle of a record: its last line, "
            f"{last}, has no newline at its end and is quarantined ({reason}){unseen}: a file cut short (a download "
            "or copy that did not finish)? The night reads only the rows before it: expected the whole file"]


def _no_json(found: tuple[int, bytes]) -> str | None:
    """Why an unterminated last JSON line is no record, as the reader says it (`formats._jsonl`), or None: said
    whatever night sees the line (one dated after the night is not among its quarantined rows: trial 38)."""
    try:
        json.loads(found[1].rsplit(b"\n", 1)[-1])
    except ValueError:
        return NOT_JSON
    return None


def _last_cell_cut_short(path: Path, found: tuple[int, bytes], delimiter: str) -> list[str]:
    """A warning naming `source.path` when a CSV file ends, with no newline, inside its last record's last cell:
    the record parses, its number shorter than the column's before it (`8` for `8526.0`), read as written.
    `found`: the file's `csv_rows.unfinished`."""
    cut = shortened_last_cell(found, delimiter)
    if cut is None:
        return []
    last, cell, before = cut
    return [f"key `source.path`: source file {path} ends in the middle of a record: its last line, {last}, has no "
            f"newline at its end and its last cell, {cell!r}, is shorter than that column's in the lines before it "
            f"(e.g. {before}): a file cut short (a download or copy that did not finish)? The night reads {cell!r} "
            "as written: expected the whole file"]


def _last_entity_cut_short(pack: CriteriaPack, found: tuple[int, bytes], delimiter: str,
                           history: pl.DataFrame) -> list[str]:
    """A warning naming `source.path` when a CSV file ends, with no newline, at the end of a whole record whose
    entity's rows stop before the source's latest period: a file of rows by entity cut at a line's end, the rest of
    that entity's history and every later entity's lost (trial 36: cholera deaths cut after `...,1849-09-12,Wed`
    read Diarrhaea's last weeks as no deaths, and check said ok). A file merely unterminated ends on a row whose
    entity runs to the end. An entity with no row in the night's reach stops before it (unless a `where` may have
    kept its rows out). `found`: the file's `csv_rows.unfinished`."""
    src = pack.source
    if not isinstance(src.entity_id, str) or history.is_empty():
        return []
    path, whole = pack.path_of(src), unfinished_record(found, delimiter)
    if whole is None or src.entity_id not in whole[1]:
        return []
    last, record = whole
    entity = record[src.entity_id].strip()
    rows = history.filter(pl.col("source_row").is_not_null())
    own, first, latest = rows.filter(pl.col("entity_id") == entity)["period"].max(), rows["period"].min(), \
        rows["period"].max()
    if not isinstance(first, date) or not isinstance(latest, date) or (own is None and src.where) \
            or (isinstance(own, date) and own >= latest):
        return []
    label = pack.grain.label
    stop = f"at {label(own)}" if isinstance(own, date) else f"before {label(first)}"
    return [f"key `source.path`: source file {path} ends without a newline in line {last}, a whole record of "
            f"{entity!r}, whose rows stop {stop} while the source's go on to {label(latest)}: a file cut short at "
            f"the end of a line (a download or copy that did not finish)? The night reads {entity!r} after them as "
            "without rows: expected the whole file"]


def _quarantined_for(quarantined: pl.DataFrame, shown: int = 3) -> str:
    """The commonest reasons rows were quarantined for, each with how many and the first rows (by the line each
    starts on in its file): `quarantined for: missing entity id (397: source rows 12, 40, 77, ...)`; past the
    third, how many rows more and the first of them with its reason (trial 23: "4 quarantined rows" beside three
    reasons of one row each, the fourth row named nowhere). A line is named once, however many of a wide source's
    cells it holds (trial 24: "source rows 2, 2, 2"). A joined table's rows are numbered in its own file or
    table, and said with its name and why (`join guns: duplicated key (102: its rows 11, 34, 57, ...)`; trial 25:
    `join guns` alone, beside the main source's row numbers)."""
    rows: dict[str, list[int]] = {}
    for row in quarantined.select("source_row", "reason").iter_rows(named=True):
        reason = str(row["reason"])
        joined = joined_reason(reason)
        kind = reason if joined is None else joined[1]
        kind = kind.split(" (")[0].split(":")[0]
        rows.setdefault(kind if joined is None else f"{joined[0]}: {kind}", []).append(row["source_row"])
    ranked = sorted(rows.items(), key=lambda item: -len(item[1]))
    top, rest = ranked[:3], ranked[3:]

    def first(numbers: list[int], why: str) -> str:
        named = sorted({n for n in numbers if n is not None})  # (a wide line's cells: one line, said once)
        more = ", ..." if len(named) > shown else ""
        whose = "its" if why.startswith("join ") else "source"
        return f": {whose} row{'s' if len(named) > 1 else ''} {', '.join(map(str, named[:shown]))}{more}" if named \
            else ""

    said = "quarantined for: " + ", ".join(f"{why} ({len(numbers)}{first(numbers, why)})" for why, numbers in top)
    if not rest:
        return said
    more = sum(len(numbers) for _, numbers in rest)
    why, numbers = rest[0]
    return (f"{said}, and {more} row{'s' if more > 1 else ''} more for {len(rest)} other "
            f"reason{'s' if len(rest) > 1 else ''} ({why}{first(numbers, why)}{', ...' if len(rest) > 1 else ''})")


def _rows_numbered(src: SourceSpec) -> str:
    """How a PostgreSQL source's rows are numbered, said beside the quarantined rows' numbers: a table has no order
    of its own, so the reader sorts the rows by the columns it reads, as text (`sources.postgres.read_rows`), and
    without the order a row's number finds nothing in the user's table. Empty for a file's source (its lines)."""
    if src.format != "postgres":
        return ""
    return (f" (a PostgreSQL table has no order of its own: its rows are numbered as `ORDER BY "
            f"{', '.join(quote_identifier(c) + '::text' for c in src.read_columns)}` returns them)")


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


def _period_key_of(src: SourceSpec, reasons: list[str]) -> tuple[str, str]:
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


def _written_otherwise(pack: CriteriaPack, reasons: list[str], within: str = "source") -> str:
    """A few rows whose period does not parse, as the rest do: how they are written, and the list of patterns that
    reads them beside the rest, where a common pattern parses them (dates in two formats in one column). Of the
    main source, or of the joined table `within` names (its year, month, ... columns)."""
    src = spec_at(pack, within)
    values = written_periods(reasons)
    key, column = _period_key_of(src, reasons)
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
    fits = fitting_patterns(values, given)
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


def _join_undated_at_fault(pack: CriteriaPack, joins_undated: list[tuple[SourceSpec, list[str], str]],
                           problems: list[str]) -> list[str]:
    """Per joined table dated by year, month, ... columns whose few rows of no period (`joins_undated`: the table,
    their reasons, its key) leave a metric unknown for every candidate (a filter's or an input's problem says "rows
    mended", naming them): the period key they are written otherwise in, which `_one_cause_once` then says alone.
    Trial 33: the weather read with `day_column: hour` (hour 0, no day) was blamed on the filter it blanked."""
    return [_join_undated(pack, joined, reasons, within) for joined, reasons, within in joins_undated
            if any(check_candidates.says_rows_mended(p) and f"join {joined.table}: period unparseable" in p
                   for p in problems)]


def _join_undated(pack: CriteriaPack, joined: SourceSpec, reasons: list[str], within: str) -> str:
    """A joined table's rows of no period (`reasons`), as one line naming the period key they are written otherwise
    in (`_join_undated_at_fault`; on a source of fewer entities, a warning)."""
    key, column = _period_key_of(joined, reasons)
    return (f"key `{within}.{key}`: got {column!r}; {_written_otherwise(pack, reasons, within)} (each leaves its "
            f"entity's {', '.join(joined.columns)} unknown on every night, as it may lie in any window)")


def _unclear(found: list[Candidate]) -> str:
    """How many of the candidates that pass the hard filters do so with a filter UNCLEAR (its metric missing): they
    go on unjudged by it, and none of them passed it."""
    unclear = sum(1 for c in found if (c.went_on or c.capped) and FilterResult.UNCLEAR in c.filters.values())
    return f" ({unclear} of them with a filter UNCLEAR: its metric has no value)" if unclear else ""


def _nothing_published(pack: CriteriaPack, night: date, today: date | None) -> str:
    """No row published by the night: the period keys when no period parses at all, else when data begins."""
    try:
        span = publication_span(pack, last_possible_night(today))
    except SourceError as exc:
        return source_problem(pack, str(exc), missing=exc.missing, present=exc.present,
                              within=exc.within)
    if span is None:
        return no_period_problem(pack, last_possible_night(today))
    if pack.nights is not None and pack.nights.start <= night:  # a night offered only by the pack's own start
        return (f"key `nights.start`: got {pack.nights.start.isoformat()}; no row is published by {night}, the first "
                f"night with data is {span[0]}: expected a first night on or after it (the nights before it have no "
                "data to scan)")
    return f"key `source.path`: no row is published by {night}; the first night with data is {span[0]}"


def _nights_before_the_data(pack: CriteriaPack, today: date | None) -> list[str]:
    """Warning: `nights.start` before the first night with data (trials 17 and 32: `start: 1940-01-01` over data
    first published in 1949 was silent while the UI offered a nine-year run of nights with nothing to scan, each a
    problem once run)."""
    if pack.nights is None:
        return []
    span = publication_span(pack, last_possible_night(today))
    if span is None or pack.nights.start >= span[0]:
        return []
    empty = (span[0] - pack.nights.start).days
    return [f"key `nights.start`: got {pack.nights.start.isoformat()}; the first night with data is {span[0]}, so the "
            f"UI offers {empty:,} night{'s' if empty != 1 else ''} before it with no row to scan (each stopped "
            "naming this key, as `check --as-of` one is): expected a first night on or after it, or no `nights` "
            "(they then start there)"]


_LAST_CHECK: list[tuple[tuple[Any, ...], CheckReport]] = []
"""The latest check before a night and what it depends on (the pack, its files' bytes, the night, the date):
`opportunity run` checks first, then its scan step asks again, as a scheduled night's does: one check."""


def latest_as_of(pack: CriteriaPack, today: date | None = None) -> date:
    """The latest night the data supports on or before the latest night there is (yesterday): when its newest period
    up to then was published, or yesterday if that is still to come. A row dated after today is ignored (the scan
    quarantines it). A source that cannot be read is a `SourceProblem` naming the pack key at fault."""
    last_night = last_possible_night(today)
    try:
        span = publication_span(pack, last_night)
    except SourceError as exc:
        raise SourceProblem(source_problem(pack, str(exc), missing=exc.missing, present=exc.present,
                                            within=exc.within)) from None
    if span is None:
        raise SourceProblem(no_period_problem(pack, last_night))
    night = min(span[1], last_night)
    return night - timedelta(days=1) if _published_cut_short(pack, night) else night


def _published_cut_short(pack: CriteriaPack, night: date) -> bool:
    """Whether `night` is the one that publishes an events source's latest period cut short (an extract's end:
    `latest_period_cut_short`), under the lag rule. Trial 42: the bundled NYC routes' default night, 2014-01-08,
    read 2014-W01's two days of flights as a week's, and check warned against the very night it had chosen; the
    night before reads whole weeks only."""
    if pack.source.shape != "events" or pack.source.published_column is not None:
        return False
    anchor = latest_published_period(pack, night)
    return anchor is not None and pack.grain.end(anchor) + timedelta(days=pack.source.publication_lag_days) == \
        night and bool(latest_period_cut_short(pack, night, anchor))


def check_pack(pack: CriteriaPack, as_of: date | None = None, today: date | None = None, *,
               with_facts: bool = True) -> CheckReport:
    """Read the source for `as_of` (default: the latest night it supports) and say what would go wrong, the night's
    candidates scanned (a formula component undefined for all of them, an identity band most lie outside); with
    `with_facts`, also what the night would find. The check before a night (`with_facts=False`) costs the night no
    second scan: the night's scan step is given the same result (`candidates.logic.scan` keeps its latest), and
    asking it again for the same night and files answers from the first."""
    if with_facts or as_of is None:
        return _check(pack, as_of, today, with_facts)

    files = file_key(pack)
    key = None if files is None else (*files, as_of, today or date.today())
    if key is not None and _LAST_CHECK and _LAST_CHECK[0][0] == key:
        return _LAST_CHECK[0][1]
    report = _check(pack, as_of, today, with_facts)
    _LAST_CHECK[:] = [] if key is None else [(key, report)]
    return report


_EARLIER_NIGHTS = 7
"""Earlier nights, a grain's period apart, whose candidates a source of too few entities for a unit judgment lends
it (a single series: a percent range over its share growth scores it flat every night, and check said ok)."""


def _check(pack: CriteriaPack, as_of: date | None, today: date | None, with_facts: bool) -> CheckReport:
    from opportunity_assets.candidates.logic import scan

    try:
        night = as_of or latest_as_of(pack, today)
        # counts over the typed rows before the snapshot, which frees them (`connection.kept_open`)
        counted = source_facts(pack, night)
        seen, starts = counted.tables[0].visible, counted.first_days
        if starts is not None and GRAINS.index(pack.grain.name) >= GRAINS.index(starts) - (starts == "quarter"):
            starts = None  # (a month grain over quarters: `grain_finer_than_rows` says so, with the rows' step)
        problems = _before_the_night(pack, counted)
        problems += [p for within, _ in pack.source.keyed if (p := two_digit_years(pack, within)) is not None]
        mistaken_bounds, warnings = bounds_in_another_unit(pack, counted)
        problems += mistaken_bounds
        listed = [listed_values_unmatched(pack, within, spec) for within, spec in pack.source.keyed]
        problems += [p for found, _ in listed for p in found]
        problems += [p for within, spec in pack.source.keyed for p in long_names_unmatched(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in shares_over_empty_cells(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed
                     for w in listed_values_spelt_two_ways(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in columns_missing_from_files(pack, within, spec)]
        # a source of fewer entities than a unit judgment needs: its candidates of earlier nights too
        earlier = _EARLIER_NIGHTS if counted.tables[0].entities < check_candidates.ENOUGH else 0
        nights_before = _earlier_candidates(pack, night, earlier, today)
        past = [c for _, found_then in nights_before for c in found_then]
        snapshot = read_snapshot(pack, night, today=today)
    except SourceProblem as exc:
        return CheckReport(as_of=as_of, problems=[str(exc)])
    except SourceError as exc:
        return CheckReport(as_of=as_of, problems=[source_problem(pack, str(exc), missing=exc.missing,
                                                                 present=exc.present, within=exc.within)])
    reasons = snapshot.quarantined["reason"].to_list()
    read_rows = snapshot.history.height
    labels = [f"{join_label(pack, j)}: " for j in pack.source.join]
    own = [r for r in reasons if not r.startswith(tuple(labels))] if labels else reasons
    columns = numeric_columns(pack.source, "source")
    read = list(dict.fromkeys([*columns, *pack.columns]))  # an event's own columns, and the panel's
    cells = [bad_cells(r, read) for r in own]
    mistaken_cells = cell_problems(pack.source, *as_long_values(pack.source, columns, cells), seen)
    named = {c for c in columns for p in mistaken_cells if f"{c!r}:" in p}
    own_rows = snapshot.quarantined.filter(~pl.any_horizontal(pl.lit(False), *(pl.col("reason").str.starts_with(x)
                                                                                for x in labels)))
    # the main source's rows of no period, each of its entity's metrics unknown (a joined table's leaves only its
    # own columns unknown, and is told by its own key, not the main file's path, which trial 33 saw blamed for it)
    undated = own_rows.filter(pl.col("period").is_null() & pl.col("entity_id").is_not_null())
    mistaken_cells += grouped_in_reach(pack.source, {c: k for c, k in columns.items() if c not in named},
                                       own_rows, snapshot.history,
                                       max((m.window[1] for m in pack.metrics.values() if m.agg != "derived"),
                                           default=0))
    written_otherwise = any(p.startswith(("key `source.decimal_separator`", "key `source.thousands_separator`",
                                          "key `source.wide.value`"))
                            for p in mistaken_cells)  # every column's numbers, or every wide column's: said once
    problems += mistaken_cells + ([] if written_otherwise else wide_columns_of_text(
        pack.source, snapshot.quarantined, snapshot.history))
    joined_facts: list[str] = []
    joins_undated: list[tuple[SourceSpec, list[str], str]] = []  # a joined table's few rows of no period
    for i, (joined, label) in enumerate(zip(pack.source.join, labels, strict=True)):
        within, table = f"source.join.{i}", counted.tables[i + 1]
        joined_columns = numeric_columns(joined, within)
        joined_cells = [bad_cells(r.removeprefix(label), [*joined_columns, *joined.columns]) for r in reasons
                        if r.startswith(label)]
        mistaken = cell_problems(joined, joined_columns, joined_cells, table.visible, within)
        problems += mistaken
        mistaken += [p for p in mistaken_bounds if p.startswith(f"key `{within}.bounds.")]  # its cells refused
        present = [c for c in joined.columns if c in snapshot.history.columns]
        join_undated = [r.removeprefix(label) for r in reasons
                        if r.startswith(label) and r.removeprefix(label).startswith("period unparseable")]
        all_empty = bool(present and snapshot.history.height and all(
            snapshot.history[c].null_count() == snapshot.history.height for c in present))
        join_duplicated = sum(1 for r in reasons if r.startswith(label + "duplicated key"))
        if join_undated and joined.year_column and joined.wide is None and not mistaken:
            joins_undated.append((joined, join_undated, within))
        if not mistaken and join_duplicated and (all_empty or join_duplicated > MOSTLY_TEXT * table.in_scope):
            problems.append(_join_duplicated(pack, i, join_duplicated, present))
        elif not mistaken and joined.period_column and len(join_undated) > UNPARSED_PERIODS * table.in_scope:
            # many of its periods unparsed: the rest, read another way (`2007-08` a month), may meet the wrong ones
            problems.append(_join_periods_unparsed(pack, i, table, join_undated, present if all_empty else []))
        elif present and snapshot.history.height and not mistaken and all_empty:
            own_undated = sum(1 for r in own if r.startswith("period unparseable")) > UNPARSED_PERIODS * seen
            problems += filter(None, [_join_unmatched(pack, i, night, table, present, snapshot.metrics,
                                                      own_undated, counted.tables[0].periods)])
        elif table.in_scope and joined.every_entity:
            problems += filter(None, [_every_entity_held(pack, i)])
        elif table.in_scope:
            apart, fact = _ids_apart(pack, i)
            problems += apart
            joined_facts += fact
            warnings += [] if apart or fact else _ids_padded(pack, i)
            warnings += [] if pack.source.joins_by_entity_only[i] else _join_moved(pack, i)
    duplicated = sum(1 for r in own if r.startswith("duplicated key"))
    # a file dated by `known_at` is one row per entity: a tenth of it refused is the key's problem, not the data's
    many_duplicated = duplicated and duplicated > (UNPARSED_PERIODS if pack.source.known_at else MOSTLY_TEXT) * seen
    unparsed = [r for r in own if r.startswith("period unparseable")]
    many_unparsed = len(unparsed) > UNPARSED_PERIODS * seen
    published = pack.source.published_column
    unpublished = [r for r in own if published and r.startswith(f"{published} unparseable: ")]
    many_unpublished = len(unpublished) > UNPARSED_PERIODS * seen
    scoped = any(p.startswith("key `source.where.") for p in problems)  # a numeric test of text keeps no row
    if snapshot.anchor_period is None and not (many_duplicated or many_unparsed or many_unpublished or scoped):
        problems.append(_nothing_published(pack, night, today))  # (many duplicated keys: the grain's problem)
    if many_unparsed:
        problems.append(periods_unparsed(pack, unparsed, seen))
    if many_unpublished:
        problems.append(published_unparsed(pack, unpublished, seen))
    src = pack.source
    column = f"`source.period_column` {src.period_column!r}" if src.period_column else \
        f"`source.month_column` {src.month_column!r}"
    swapped = day_and_month_swapped(pack) if starts == "year" else None
    if swapped is not None:  # (its rows of one January each are duplicated keys: that is this, said once)
        problems.append(swapped)
    elif starts == "year":
        problems.append(f"key `source.grain`: got {src.grain!r}; every row of {column} falls in a January, year "
                        "after year: expected `grain: year` for a column of years (a finer grain puts every row "
                        "in January)")
    elif starts == "quarter":
        problems.append(f"key `source.grain`: got {src.grain!r}; every row of {column} falls on the first day of a "
                        "month, one month of each quarter, quarter after quarter: expected `grain: quarter` for a "
                        "column of quarters (a finer grain puts every row on the 1st, and windows of "
                        f"{pack.grain.plural} between them find nothing)")
    elif starts == "month":
        problems.append(f"key `source.grain`: got {src.grain!r}; every row of {column} falls on the first day of a "
                        "month, month after month: expected `grain: month` for a column of months (a finer grain "
                        "puts every row on the 1st, and windows of days between them find nothing)")
    # every row in 1970's first moments: their duplicated keys and windows past the history are that, again
    no_time = unix_time_of_no_time(pack)
    if many_duplicated and swapped is None and no_time is None:
        problems.append(_rows_copied(pack, night) or _duplicated_keys(pack, duplicated))
    if starts is None and (coarser := grain_finer_than_rows(pack, snapshot.history)) is not None:
        problems.append(coarser)
    elif starts is None and counted.coarser_rows is not None:
        problems.append(_rows_of_a_coarser_grain(pack, counted.coarser_rows))
    if (vintages := periods_read_as_vintages(pack)) is not None:
        # (a finer period's rows, published as its own period ends, are early for the coarser one: that, again)
        problems = [*(p for p in problems if not p.startswith("key `source.published_column`")), vintages]
    beyond: list[tuple[str, MetricSpec]] = []  # metrics whose windows reach past the history
    if no_time is not None:
        problems.append(no_time)
    elif snapshot.history.height:
        reach = int(snapshot.history.select(pl.col("periods_ago").max()).item())
        beyond = [(name, spec) for name, spec in pack.metrics.items()
                  if spec.agg not in ("derived", "age_days") and spec.window[1] > reach]
        if beyond:
            problems.append(_windows_past(pack, night, reach, beyond))
        warnings += [] if beyond else _outcome_out_of_reach(  # (else the same cause, again)
            pack, night, _history_held(pack, reach, snapshot))
    problems = list(dict.fromkeys(problems))  # (a join's `where` problem is also why it matched nothing)
    if counted.copies is not None:
        factor, rows, distinct = counted.copies
        problems.append(
            f"key `source.path`: got {pack.source.path or pack.source.table!r}; each of the {distinct} different rows "
            f"the night reads appears {factor} times (or a multiple of {factor}), equal in every column read: {rows} "
            f"rows for {distinct} events, so every count and sum would count each {factor} times: expected each event "
            "once (a file appended to itself?), or, if these are distinct events, a column that tells them apart "
            "among those the pack reads (a `count_distinct` of an id, say)")
    warnings += _copies_by_nature(pack, counted.repeats) if counted.copies is None else []
    main = counted.tables[0]
    if pack.source.known_at is None and main.entities >= _MANY_IDS and main.seen_dated <= _ROWS_PER_ID * main.entities:
        problems.append(
            f"key `source.entity_id`: got {pack.source.entity_id!r}; about {main.entities} values for "
            f"{main.seen_dated} rows the night reads, one row each or nearly: expected the column naming each "
            "entity, whose rows recur period after period (an order's or a row's own id names no entity)")
        # a candidate per row: their scan is the night's whole cost (348,532 survey answers: 87 s), and every other
        # finding over them (inputs with no value, filters refusing all) is this problem again
        return CheckReport(as_of=night, problems=problems, warnings=warnings,
                           facts=[_read_fact(pack, snapshot, main.seen_dated, read_rows),
                                  "candidates not scanned: one an entity of about one row"])
    per = _names_per_entity(pack, snapshot.history)
    # (a name column that changes within most entities also repeats across them: trial 32's `entity_id: flight`
    # named by `tailnum` was told both, each naming `entity_name: flight`; its change is the cause, said once)
    changing = names_changing(pack, per)
    warnings += (changing or names_shared(pack, without_padded_twins(snapshot.metrics)) + names_finer(pack, per)) \
        + total_rows(pack, snapshot.metrics) \
        + ids_zero_padded(pack, snapshot.metrics) + json_keys_spelt_otherwise(pack, snapshot.quarantined) \
        + measure_in_key(pack, snapshot.history) + ids_renamed(pack, snapshot.history) \
        + ids_spelt_two_ways(pack, snapshot.history) \
        + ids_continued(pack, snapshot.history)
    stale = night_after_the_data(pack, night, snapshot.anchor_period,
                                 snapshot.quarantined.select(pl.col("period").max()).item())
    warnings += zoned_elsewhere(pack) + sundays_starting_weeks(pack) + stale + rows_dated_after_known(pack) \
        + ages_of_counts(pack) \
        + _nights_before_the_data(pack, today) \
        + ([] if stale or any(_QUARANTINING_KEYS.match(p) for p in problems)  # (a source key's line says why)
           else latest_rows_refused(pack, night, snapshot.anchor_period, snapshot.quarantined))
    warnings += latest_period_cut_short(pack, night, snapshot.anchor_period) \
        + _file_cut_short(pack, snapshot.quarantined, snapshot.history) \
        + wide_columns_empty(pack.source, snapshot.history, snapshot.quarantined) \
        + wide_columns_counting(pack.source, snapshot.history)
    if pack.source.period_column and (calendar := calendar_week_patterns(pack.source)):
        values = commonest_values(pack, "source", shapes.written(pack.source.period_column), shapes.IN_SCOPE, limit=20)
        problems += filter(None, [iso_weeks_read_by_calendar(calendar, values)])
    problems += year_spans_read_as_months(pack) + years_beside_periods(pack) + coarser_periods_joined(pack)
    not_iso = weeks_not_iso(pack)  # (its rows of no week are that, again: said once)
    problems += not_iso
    # the scan the night itself runs (the same inputs: it is given this result again)
    found, report = scan(pack, night, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    found_problems, undefined_tonight = check_candidates.problems(pack, found)
    problems += undated_at_fault(pack, found_problems, unparsed, seen, many_unparsed or bool(not_iso)) \
        + coverage_past_trading_days(pack, snapshot.history, found)
    problems += _join_undated_at_fault(pack, joins_undated, problems)
    if duplicated and not many_duplicated and not any(p.startswith("key `source.") for p in problems) \
            and _duplicates_blank_inputs(pack, found) and _dated_apart(pack):  # (a source key's line says why)
        problems.append(_duplicated_keys(pack, duplicated))
    elif duplicated and not many_duplicated and not any(p.startswith("key `source.") for p in problems):
        warnings += _few_keys_shared(pack, duplicated)
    problems = _one_cause_once(problems, pack)
    # rows of the latest periods with no figure: every metric's gap, that cause said once
    periods_read = re.compile(r"^key `source\.(grain|period_(format|column)|(year|month|day|quarter|week)_column)`")
    if not any(periods_read.match(p) for p in problems) and (  # (periods misread: empty ones are that, again)
            ended := figures_ended(pack, night, snapshot.history, snapshot.quarantined)) is not None:
        problems = [ended, *(p for p in problems if not p.startswith(_READING_KEYS))]
    if (later := _join_published_later(pack, night, snapshot.anchor_period, counted, problems)) is not None:
        # the inputs and filters it leaves with no value: that cause, said once
        line, blamed = later
        problems = [line, *(p for p in problems if _read_metric(pack, p) not in blamed)]
    problems, tonight_only = _undefined_tonight_only(pack, night, today, problems, undefined_tonight,
                                                     nights_before)
    warnings += tonight_only
    if earlier:
        warnings += _lacking_of_few(pack, found, problems) + _undated_of_few(
            pack, found, problems, unparsed, seen, undated.select("source_row", "reason").rows()) + [
            _join_undated(pack, *joined) for joined in joins_undated
            if check_candidates.unknown_for_all(pack, found, least=1)]
    warnings += check_candidates.unit_judgments(pack, found)[1] + check_candidates.shares_beyond_one(pack, found) \
        + check_candidates.fractions_in_whole_units(pack, found) + _flagged_capped(pack, report) \
        + check_candidates.windows_filled_in_part(pack, found)
    if past:
        pooled_problems, pooled_warnings = check_candidates.unit_judgments(
            pack, [*found, *past], check_candidates.over_nights(earlier))
        problems += pooled_problems
        warnings += pooled_warnings
    if stale:  # an age filter refusing every candidate on a night after the data ends: that cause, said once
        ages = tuple(f"key `hard_filters.{n}.value`" for n, f in enumerate(pack.hard_filters)
                     if pack.metrics[f.metric].agg == "age_days")
        warnings = [w for w in warnings if not w.startswith(ages)]
    otherwise = _written_otherwise(pack, unparsed) if unparsed and not many_unparsed and not not_iso and (
        pack.source.period_column or pack.source.year_column) and pack.source.wide is None \
        else None  # a few rows' dates written another way
    if otherwise and "`period_format: [" in otherwise and not any(
            p.startswith("key `source.period_format`") for p in problems):
        # a pattern reads them: each such row leaves its entity's every metric unknown on every night (trial 21: a
        # fact, with no key, beside check's ok); a warning, the night running with those entities' gaps
        given = repr(pack.source.period_format) if pack.source.period_format else "none"
        # (a single series' line for the same rows, `_undated_of_few`, with the pattern and no list: said once)
        warnings = [w for w in warnings if not w.startswith(f"key `source.period_format`: got {given}")]
        warnings.append(f"key `source.period_format`: got {given}; {otherwise} (each such row leaves its entity's "
                        "every metric unknown on every night, as it may lie in any window)")
        otherwise = None
    if any(_QUARANTINING_KEYS.match(p) for p in problems):
        # the rows that problem refuses are what flags the candidates past the cap: the same cause, again; and the
        # units of bounds and ranges are judged over the values it left (trial 26: grouped thousands unread, a
        # filter `>= 10000` was told "every candidate's stock lies within [17, 998]": the values under 1,000)
        warnings = [w for w in warnings if not w.startswith(("key `caps.max_flagged`", *_JUDGED_OVER_VALUES))]
    if beyond:
        # the candidates past the cap with no value of its order: the window past the history, again (trial 40: the
        # first night's `crowd_prev` a year back was said, then "12 candidates past the cap have no value of
        # crowd_growth")
        warnings = [w for w in warnings if not w.startswith("key `caps.max_flagged`: ")
                    or " candidates past the cap have no value of " not in w]
    if any("a row of no period leaves its entity's every metric unknown" in p for p in problems):
        # the filters' bounds judged over the entities the undated rows left a value: the few, not the scale
        warnings = [w for w in warnings if not w.startswith("key `hard_filters.")]
    if not with_facts:
        return CheckReport(as_of=night, problems=problems, warnings=warnings)
    gaps = Counter(key for c in found for gap in c.data_gaps if (key := gap.split(":")[0]) in pack.metrics)
    undefined = Counter(key.removeprefix("formula component ") for c in found for gap in c.data_gaps
                        if (key := gap.split(":")[0]).startswith("formula component "))
    facts = [_read_fact(pack, snapshot, main.seen_dated, read_rows),
             f"{report.passed_filters} pass the hard filters{_unclear(found)}, {report.went_on} would go on "
             f"(cap {pack.caps.max_candidates}{_past_cap(pack, report.flagged_past_cap)})"
             + _most_failed(report.failed_by_filter, report.scanned, report.passed_filters)]
    spelt = any(w.startswith("key `source.entity_id`") and "punctuation, case or accents" in w for w in warnings)
    facts += [plain(n) for n in report.notes if n.startswith("entity keys ") and not spelt]  # one id, keys apart
    facts += [f for _, found in listed for f in found] + joined_facts
    written = [text for c in cells for text, problem in c.values() if problem == "not a number"]
    grouped = grouped_most(written)
    if grouped is not None and not written_otherwise:  # (a problem names the separator: the same cause)
        facts.append(f"cells such as {grouped!r} are quarantined as not numbers: if the source groups thousands or "
                     "writes a decimal comma, say so in `source.thousands_separator` / `source.decimal_separator`")
    # `NaN` parses as a number that is not finite (numpy's and some databases' missing number): a token all the same
    not_finite = [text for c in cells for text, problem in c.values() if problem == "not finite"]
    tokens = Counter(w for w in written + not_finite if w in MISSING_TEXTS)
    if tokens:
        facts.append("cells written " + ", ".join(f"{t!r} ({n})" for t, n in tokens.most_common(4)) + " are "
                     "quarantined as not numbers: if they mean a missing number, list them in `source.na_values`")
    facts += negatives_unsigned(pack.source, cells, problems) + text_cells(*as_long_values(pack.source, columns, cells),
                                                                          seen)
    if reasons:
        # (the main source's rows numbered by its ORDER BY: a joined table's rows only are numbered their own way)
        facts.append(_quarantined_for(snapshot.quarantined) + (_rows_numbered(pack.source) if own else ""))
    facts += _undated_of_no_entity(undated, snapshot.metrics)
    undated = undated.filter(pl.col("entity_id").is_in(snapshot.metrics["entity_id"].implode()))
    if undated.height and not not_iso:  # its period unknown, in any window: each of its entity's metrics unknown
        undated_lines = undated.unique(["source_row", "entity_id"], keep="first", maintain_order=True)
        shown = ", ".join(f"source row {r['source_row']} of {r['entity_id']!r}"
                          for r in undated_lines.head(3).iter_rows(named=True))
        empty = empty_period_column(undated["reason"].to_list())
        kept_out = "" if empty is None else (f" (an empty period: `source.where: [{{column: {empty}, not_in: "
                                             "['']}]` keeps such rows out)")
        facts.append(f"{undated.height} quarantined row{'s have' if undated.height > 1 else ' has'} no period ({shown}"
                     f"{', ...' if undated_lines.height > 3 else ''}): its entity's metrics are unknown on every "
                     f"night, as the row may lie in any window, until the row is mended or removed{kept_out}")
    if otherwise and not any(p.startswith("key `source.period_format`") for p in problems):
        facts.append(otherwise)
    for source in (pack.source, *pack.source.join):
        if source.format != "postgres" and infer_format(pack.path_of(source), source.format) in ("csv", "jsonl"):
            recoded = not_utf8_lines(pack.path_of(source))
            if recoded:
                lines = ", ".join(map(str, recoded[:3])) + (", ..." if len(recoded) > 3 else "")
                facts.append(f"{len(recoded)} lines of {pack.path_of(source).name} are not UTF-8 text, read as "
                             f"Windows-1252 (line {lines}): save the file as UTF-8 if a name reads wrong")
    if gaps:
        facts.append("metrics with gaps: " + ", ".join(f"{name} ({_entities(n)})" for name, n in gaps.most_common(5)))
    if undefined:  # for some candidates only (for all of them: a problem above)
        facts.append("formula components undefined although their inputs are there (no preliminary score): "
                     + ", ".join(f"{name} ({_entities(n)})" for name, n in undefined.most_common(5)))
    return CheckReport(as_of=night, problems=problems, facts=facts, warnings=warnings)


def _earlier_candidates(pack: CriteriaPack, night: date, nights: int, today: date | None
                        ) -> list[tuple[date, list[Candidate]]]:
    """The candidates of each of the `nights` nights before `night`, a grain's period apart, latest first (read
    beside the night's own scan, which stays the kept one)."""
    from opportunity_assets.candidates.logic import scan_aside

    before = [pack.grain.later(night, -k) for k in range(1, nights + 1)]
    return [(n, scan_aside(pack, n, s.anchor_period, s.metrics, s.history, s.quarantined))
            for n, s in zip(before, earlier_snapshots(pack, before, today) if before else [], strict=True)]


def _undefined_tonight_only(pack: CriteriaPack, night: date, today: date | None, problems: list[str],
                            undefined: dict[str, check_candidates.Undefined],
                            read: list[tuple[date, list[Candidate]]]) -> tuple[list[str], list[str]]:
    """(problems, warnings): an expression with no value for any candidate tonight (`undefined`, by its problem's
    text) that had one on an earlier night, of the `_EARLIER_NIGHTS` a period apart, is the data's (Ansett's
    passengers after the 1989 pilots' strike, four weeks of zeros, divided by): a warning, the night running with
    its candidates data gaps, not a problem blaming the expression that stopped the night. An expression never
    defined stays a problem. `read`: those nights' candidates if the check has them already (a source of few
    entities)."""

    standing = [undefined[p] for p in problems if p in undefined]
    if not standing:
        return problems, []
    try:
        earlier = read or _earlier_candidates(pack, night, _EARLIER_NIGHTS, today)
    except SourceError:  # an earlier night unreadable: nothing says the expression had a value
        return problems, []
    warnings = []
    for expression in standing:
        valued = [n for n, found in earlier if check_candidates.has_value(pack, expression.key, found)]
        if valued:
            problems = [p for p in problems if p != expression.problem]
            warnings.append(expression.tonight_only(pack.grain.name, valued, len(earlier)))
    return problems, warnings


def _windows_past(pack: CriteriaPack, night: date, reach: int, beyond: list[tuple[str, MetricSpec]]) -> str:
    """One line for the metrics whose windows reach past the history the night reads (`reach` + 1 periods at
    most), naming the first's key; with several (an early `--as-of`: trial 22 had five lines, one per window, of
    one cause), the others' keys and windows, and the first night from which every window fits, if the history
    goes on as it has."""
    grain = pack.grain
    (name, spec), *more = beyond
    line = (f"key `metrics.{name}.window`: got {list(spec.window)}; expected a window within the source's history: "
            f"on {night} no entity has more than {grain.count(reach + 1)} published (windows count "
            f"{grain.plural}, `source.grain`)")
    if not more:
        return line
    deepest = max(s.window[1] for _, s in beyond)
    later = grain.later(night, deepest - reach)
    if grain.name in ("month", "quarter", "year") and (night + timedelta(days=1)).day == 1:
        later = date(later.year, later.month, calendar.monthrange(later.year, later.month)[1])
    others = ", ".join(f"`metrics.{n}.window` {list(s.window)}" for n, s in more)
    return (f"{line}; so do {len(more)} more ({others}): the night is too early for the pack, whose windows need "
            f"{deepest + 1} {grain.plural} published, from {later} on if the history goes on as it has")


def _rows_of_a_coarser_grain(pack: CriteriaPack, rows: CoarserRows) -> str:
    """`source.grain`'s line for rows one in each period of a coarser grain, a varying number of the pack's periods
    apart (`facts.CoarserRows`: months read by the week)."""
    grain = pack.grain
    (fewest, most), (entity, periods) = rows.steps, rows.example
    return (f"key `source.grain`: got {grain.name!r}; every entity's rows lie {fewest} to {most} {grain.plural} "
            f"apart, one in each {rows.grain} (e.g. {entity!r}: {', '.join(grain.label(p) for p in periods)}), so a "
            f"window of {grain.plural} finds a row in one {grain.name} of {fewest} at most: expected "
            f"`grain: {rows.grain}`, the grain the rows come in")


def _history_held(pack: CriteriaPack, reach: int, snapshot: SourceSnapshot) -> int:
    """Periods back (0 = the latest) of the whole history published by the night: the snapshot's `reach` unless
    the snapshot was cut at `history_reach`, when the history may go further back (trial 32: AirPassengers' 144
    months were "no entity has more than 72 months published", and an outcome window of 100 months was warned
    that no outcome could be measured)."""

    anchor, first = snapshot.anchor_period, snapshot.first_period
    if reach < pack.history_reach or anchor is None or first is None or pack.outcome is None:
        return reach
    return max(reach, pack.grain.between(pack.grain.start(first), anchor))


def _outcome_out_of_reach(pack: CriteriaPack, night: date, reach: int) -> list[str]:
    """A warning when `outcome.window_periods` is longer than the history the night reads (`reach` + 1 periods at
    most): no outcome of this night, or of any night before it, can be measured, each a gap in the backtest. A
    warning, not a problem: an outcome never changes a verdict, and the night runs."""
    outcome = pack.outcome
    if outcome is None:
        return []
    grain, plural, held = pack.grain, pack.grain.plural, reach + 1
    if outcome.window_periods <= held < outcome.window_periods + outcome.horizon_periods:
        # (trial 21: 200 weeks on 62 weeks of bookings said ok) the later window lies past every night's data
        return [f"key `outcome.horizon_periods`: got {outcome.horizon_periods}; on {night} no entity has more than "
                f"{grain.count(held)} published, so no night's outcome, its {grain.count(outcome.window_periods)} "
                f"ending {grain.count(outcome.horizon_periods)} after the night's latest, can be measured within them "
                f"(each a gap in the backtest): expected a horizon of at most "
                f"{grain.count(held - outcome.window_periods)} "
                "(it counts `source.grain`'s periods), or a longer history"]
    if outcome.window_periods <= held:
        return []
    return [f"key `outcome.window_periods`: got {outcome.window_periods}; on {night} no entity has more than "
            f"{grain.count(reach + 1)} published, so no outcome of this night or an earlier one can be measured "
            f"(each a gap in the backtest): expected a window within the source's history (it counts {plural}, "
            "`source.grain`)"]


def _rows_copied(pack: CriteriaPack, night: date) -> str | None:
    """A panel or snapshot whose every row the night reads appears k >= 2 times, equal in every column read (a file
    appended to itself), said naming `source.path`: its keys are all duplicated, but no other shape, grain or entity
    column would mend it (`shape: events` would count each row k times). None otherwise."""

    try:
        copies = copied_rows(pack, night)
    except SourceError:
        return None
    if copies is None:
        return None
    factor, rows, distinct = copies
    return (f"key `source.path`: got {pack.source.path or pack.source.table!r}; each of the {distinct} different rows "
            f"the night reads appears {factor} times (or a multiple of {factor}), equal in every column read: {rows} "
            f"rows for {distinct}, each refused as a duplicated key (one row per entity and period): expected each row "
            "once (a file appended to itself?)")


_SERIES = "one series of each entity (one pollster's polls, one sensor's readings, say)"
"""What a `where` keeps when rows of several series share their entity and moment."""


def _duplicates_blank_inputs(pack: CriteriaPack, found: list[Candidate]) -> bool:
    """Whether a required input has no value for any scanned candidate because a row refused as a duplicated key
    lies in its reach: few such rows, but in every candidate's windows (trial 23: CRAN's package counts at each R
    release, read as a quarterly panel; two releases in one quarter, 6 rows of 29, left the one series' every input
    unknown, and check said ok). The key at fault is then `_duplicated_keys`', as when they are most rows."""
    if not found:
        return False
    return any(all(_DUPLICATED_GAP.match(check_candidates.root_gap(c, name)) for c in found)
               for name in pack.required_inputs)


def _dated_apart(pack: CriteriaPack) -> bool:
    """Whether most duplicated keys' rows are of several dates in one period (releases on two days of a quarter):
    the key's fault, a grain too coarse or the wrong shape; a period sent twice as written is the rows' own, said
    by the inputs it leaves unknown ("expected the source's rows mended")."""

    try:
        facts = duplicate_facts(pack)
    except SourceError:
        return False
    return facts is not None and facts.finer * 2 > facts.groups


_DUPLICATED_GAP = re.compile(r"^\w+: unknown: source row \d+ is quarantined \(duplicated key")
"""A metric's gap line when a row refused as a duplicated key lies in its window."""


def _decimal_years_too_coarse(pack: CriteriaPack, written: str | None) -> str | None:
    """Why decimal years written with too few decimals for the grain's periods (`1949.2`: a tenth of a year, 36
    days, cannot tell 12 months apart) leave rows sharing a period, or None. Trial 32: AirPassengers rounded to one
    decimal was 72 rows of duplicated keys blamed on `source.grain`, "or `shape: events`", which would add months."""
    if DECIMAL_YEAR not in pack.source.period_patterns or written is None or "." not in written:
        return None
    decimals = len(written.strip().split(".", 1)[1])
    if 10 ** decimals >= 2 * pack.grain.per_year:
        return None
    return (f"its values are written with {decimals} decimal{'' if decimals == 1 else 's'}, too few to tell "
            f"a year's {pack.grain.per_year} {pack.grain.plural} apart ({10 ** -decimals:g} of a year is "
            f"{365 * 10 ** -decimals:.0f} days): expected the column exported with more decimals (R's `time()` "
            "written in full, 1949.0833)")


def _duplicated_keys(pack: CriteriaPack, duplicated: int) -> str:
    """Most rows the night reads refused as duplicated keys: the key most likely at fault, said as the pack's shape
    reads its rows (a snapshot's share an entity and an observation moment, a file dated by `known_at` an entity, a
    panel's an entity and a period), with an example and what would tell the rows apart; never the shape the pack
    already has. An id column whose rows carry several names (or one id in all, when they are not of several dates
    in a period) is the id's fault, whatever the shape, and so is a file dated by `known_at` whose ids mostly name
    one row (names that repeat: counties of several states); then `known_at` on a file of dated rows; a snapshot's
    observations of one day, its `period_column`'s (or of one time of day, its `entity_id`'s); a panel's rows of
    several dates in one period, its `grain`'s; of one period as written, its `shape`'s."""

    src, grain = pack.source, pack.grain
    try:
        facts = duplicate_facts(pack)
    except SourceError:
        facts = None
    if facts is None:  # (read a moment ago: only a source changed since gets here)
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an entity and a "
                f"{grain.name} with another row (duplicated keys): expected one row per entity and period")
    entity, copies, period, written, names = facts.example
    observed = src.shape == "snapshot" and src.period_column is not None and src.published_column is None
    moment = f"an observation {'time' if facts.timed else 'day'}" if observed else f"a {grain.name}"
    at = "" if src.known_at is not None else f" on {written!r}" if observed else f" in {grain.label(period)}"
    example = f"e.g. {copies} rows of {entity!r}{at}"
    apart = f"`source.where` keeping {_SERIES}, or an `entity_id` that tells the series apart"
    finer = facts.finer * 2 > facts.groups  # most duplicated keys' rows are of several dates in one period
    if facts.named_apart * 2 > facts.groups or (facts.entities == 1 and src.known_at is None and not finer
                                                  and src.entity is None):
        named = f", named {names}" if names else ""
        why = (f"the rows of one id carry different names (`source.entity_name` {src.entity_name!r})" if names else
               f"every row in scope has the one id {entity!r}")
        column = f" (`entity_id: {src.entity_name}`, the names' column, perhaps)" if names else ""
        shares = "an id" if src.known_at is not None else f"an id and {moment}"
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share {shares} with another "
                f"row ({example}{named}): {why}, so the column does not tell the entities apart ({facts.entities} "
                f"id{'' if facts.entities == 1 else 's'} in all): expected the column of each entity's id{column}")
    if src.known_at is not None and facts.groups * 2 < facts.entities:  # most ids one row: names that repeat
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an id with another row "
                f"({example}), though most of the {facts.entities} ids name one row each: the column repeats for "
                "different entities (a name, not an id), and each such row is refused: expected a column unique to "
                "each entity (its id or code)")
    if src.known_at is not None:
        return (f"key `source.known_at`: got {src.known_at.isoformat()}; it dates every row alike, one snapshot of "
                f"one row per entity, but {duplicated} rows share an entity with another row ({example}), so no row "
                "can stand for its entity: expected `period_column` in its place, naming the column of each row's "
                "date, for a file of dated rows (or a `source.where` or `source.entity_id` that leaves one row per "
                "entity)")
    latest = f"so no latest observation can be told (a snapshot keeps each {grain.name}'s latest)"
    if observed and not facts.timed:
        return (f"key `source.period_column`: got {src.period_column!r}; {duplicated} rows share an entity and "
                f"{moment} with another row ({example}), {latest}: expected a `period_column` holding each "
                f"observation's time of day as well as its day (a timestamp), or a {apart}, or `shape: events` to "
                f"aggregate them (an `avg` per {grain.name})")
    if observed:
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an entity and {moment} "
                f"with another row ({example}), {latest}: expected an `entity_id` that tells the series apart, or a "
                f"`source.where` keeping {_SERIES}, or `shape: events` to aggregate them (an `avg` per "
                f"{grain.name})")
    if (coarse := _decimal_years_too_coarse(pack, written)) is not None:
        return (f"key `source.period_format`: got {src.period_format!r}; {duplicated} rows share an entity and a "
                f"{grain.name} with another row ({example}, {written!r}): {coarse}")
    if finer:  # rows of several dates in one period: the grain is too coarse
        events = "`shape: events` (rows to aggregate)" if src.wide is None else (
            f"`shape: events` with `aggregates: {{{src.wide.value}: {{agg: avg, column: {src.wide.value}}}}}` (each "
            f"cell an event: the {grain.name}'s average; `sum`, `min`, `max` likewise)")
        shapes_else = " or ".join(s for s in (events,
                                              "`shape: snapshot` (observations, each period's latest kept)")
                                  if not s.startswith(f"`shape: {src.shape}`"))
        return (f"key `source.grain`: got {src.grain!r}; {duplicated} rows share an entity and a {grain.name} with "
                f"another row (duplicated keys, {example}, dated apart within it): expected the grain of one row "
                f"per entity and period, or {shapes_else}")
    if src.shape == "snapshot" and src.period_column is None and src.published_column is None:
        # a snapshot dated by year and month columns: no moment within the period
        return (f"key `source.period_column`: got nothing; {duplicated} rows share an entity and a {grain.name} "
                f"with another row ({example}), and `year_column` dates no moment within it, {latest}: expected "
                f"`period_column` in place of `year_column`, naming the column of each observation's date (or a "
                f"{apart})")
    if src.published_column is not None:  # (a snapshot's: one observation's, trial 27, not `year_column`'s)
        what = f"an observation ({src.period_column!r})" if src.shape == "snapshot" and src.period_column else \
            f"a {grain.name}"
        return (f"key `source.published_column`: got {src.published_column!r}; {duplicated} rows share an entity, "
                f"{what} and a publication date with another row ({example}), so no latest revision can be "
                f"told: expected a column that tells each revision apart (a timestamp), or a {apart}")
    if completions := key_completions(pack):  # another column tells the rows apart: the entity is both
        together = [*src.entity_columns, *completions[0]]
        others = f" (or {', '.join(repr(c[0]) for c in completions[1:3])})" if len(completions) > 1 else ""
        telling = f"column {completions[0][0]!r}{others} tells" if len(completions[0]) == 1 else \
            f"columns {' and '.join(repr(c) for c in completions[0])} together tell"
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an entity and a "
                f"{grain.name} with another row ({example}{'' if written is None else ', ' + repr(written)}), and "
                f"{telling} them apart: expected the entity to be the columns together, "
                f"`entity_id: [{', '.join(together)}]` (and `entity_name` likewise)")
    return (f"key `source.shape`: got {src.shape!r}; {duplicated} rows share an entity and the same period value "
            f"with another row ({example}{'' if written is None else ', ' + repr(written)}): a panel has one row "
            f"per entity and period, and no grain tells these apart: expected `shape: events` (rows to aggregate), "
            f"or a {apart}, or `published_column` if they are revisions of one figure")


def _few_keys_shared(pack: CriteriaPack, duplicated: int) -> list[str]:
    """A warning: a few rows refused as duplicated keys, of one period as written, that another column the pack does
    not read tells apart: entities the id column names alike, not rows sent twice (trial 28: `entity_id: inst_name`
    over the College Scorecard, where 148 names are each several colleges', refused 1046 rows, and check's only word
    was `caps.max_flagged`'s "the commonest reason: duplicated key: mend the source"). Most rows so refused is a
    problem (`_duplicated_keys`); a panel, a snapshot or a file dated by `known_at` alike, never events."""

    src, grain = pack.source, pack.grain
    if src.shape == "events" or src.published_column is not None:
        return []
    try:
        facts = duplicate_facts(pack)
        completions = key_completions(pack) if facts is not None and facts.finer * 2 <= facts.groups else []
    except SourceError:
        return []
    if facts is None or not completions:
        return []
    entity, copies, period, _, _ = facts.example
    at = "" if src.known_at is not None else f" in {grain.label(period)}"
    shares = "an id" if src.known_at is not None else f"an entity and a {grain.name}"
    together = [*src.entity_columns, *completions[0]]
    telling = f"column {completions[0][0]!r} tells" if len(completions[0]) == 1 else \
        f"columns {' and '.join(repr(c) for c in completions[0])} together tell"
    alone = f" (or `entity_id: {completions[0][0]}` alone, if it is each entity's id)" \
        if len(completions[0]) == 1 else ""
    return [f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share {shares} with another row "
            f"(e.g. {copies} rows of {entity!r}{at}), each refused as a duplicated key, and {telling} them apart: "
            f"the column names several entities alike (a name, not an id)? expected the entity to be the columns "
            f"together, `entity_id: [{', '.join(together)}]`{alone}, or each row once (a period sent twice?)"]


def _join_duplicated(pack: CriteriaPack, index: int, duplicated: int, present: list[str]) -> str:
    """A joined table most of whose rows (or every row that would match) are refused as duplicated keys: its key at
    fault, named in the join. Trial 25: a table of months joined to a yearly panel (12 rows per state and year) was
    told "none of its rows lies in a period the source has", naming its `year_column`. Rows of several dates in one
    period are a grain finer than the source's, which a join cannot have: its `shape` (each period's latest, or its
    rows aggregated); rows of one period as written, its `entity_id` (or rows sent twice)."""

    joined, within, grain = pack.source.join[index], f"source.join.{index}", pack.grain
    try:
        facts = duplicate_facts(pack, index)
    except SourceError:
        facts = None
    gaps = f"so {', '.join(present) or 'its columns'} are gaps where they lie"
    if facts is None:  # (read a moment ago: only a table changed since gets here)
        return (f"key `{within}.entity_id`: got {joined.entity_id!r}; {duplicated} rows of the joined table share an "
                f"entity and a {grain.name} with another row (duplicated keys), {gaps}: expected one row per entity "
                "and period")
    entity, copies, period, written, _ = facts.example
    example = f"e.g. {copies} rows of {entity!r} in {grain.label(period)}"
    if facts.finer * 2 > facts.groups:  # rows of several dates in one period: finer than the source's grain
        others = " or ".join(s for s in ("`shape: snapshot` (each period's latest row)",
                                         "`shape: events` with `aggregates` (its rows aggregated)")
                             if not s.startswith(f"`shape: {joined.shape}`"))
        return (f"key `{within}.shape`: got {joined.shape!r}; {duplicated} rows of the joined table share an entity "
                f"and a {grain.name} with another row ({example}, dated apart within it), each refused as a "
                f"duplicated key, {gaps}: a joined table is read in the source's grain (`grain: {grain.name}`): "
                f"expected one row per entity and {grain.name}, or {others}")
    at = "" if written is None else f", {written!r} each"
    return (f"key `{within}.entity_id`: got {joined.entity_id!r}; {duplicated} rows of the joined table share an "
            f"entity and a {grain.name} with another row ({example}{at}), each refused as a duplicated key, {gaps}: "
            f"expected one row per entity and period: an `entity_id` of the columns that tell the rows apart, a "
            f"`{within}.where` keeping one series, or each row once (a period sent twice?)")


_READING_KEYS = ("key `required_inputs.", "key `hard_filters.")
"""Problems of the keys that read a metric with no value for any candidate: said again, wrongly, beside a cause
that leaves the metric with none (figures that end, a joined table published later)."""
_JUDGED_OVER_VALUES = ("key `hard_filters.", "key `formula.components.", "key `red_flags.")
"""Pack keys whose warnings judge a unit or a scale over the candidates' values: said again, wrongly, by values a
quarantining problem left (the few it did not refuse)."""
_QUARANTINING_KEYS = re.compile(r"key `source\.(?:join\.\d+\.)?(?:" + "|".join((
    "bounds", "period_format", "period_column", "year_column", "month_column", "day_column", "quarter_column",
    "week_column", "columns", "aggregates",
    "thousands_separator", "decimal_separator", "signed", "grain", "entity_id", "shape", "known_at")) + ")")
"""The source keys, the main source's or a joined table's, whose problem is a cause of quarantined rows (a bound in
another unit, dates no pattern reads, a column of text, duplicated keys). Trial 25: a joined table's `year_column`
over dates was said again by the input it left unknown and by `caps.max_flagged`."""


_FINER_THAN_ROWS = re.compile(r"^key `source\.grain`: got '\w+'; every (row of .* falls (on the first day of a|in a) "
                              r"|entity's rows lie \d+ (to \d+ )?\w+ apart(,| or a multiple of it ))")
"""`source.grain`'s line for rows of month starts (or quarters', years') read by a finer grain, or for rows a whole
number of periods apart (`grain_finer_than_rows`: quarters read in months)."""
_NO_UNIX_TIME = re.compile(r"^key `source\.period_format`: got '[^']+' for column .*; its values are no Unix time ")
"""`source.period_format`'s line for Unix time over small numbers (`unix_time_of_no_time`): every row in 1970's
first moments, so every window but the latest finds nothing."""
_WINDOW_PAST = re.compile(r"^key `metrics\.(\w+)\.window`: .*expected a window within the source's history")
_WINDOW_KEY = re.compile(r"`metrics\.(\w+)\.window`")
_GAP_OF = re.compile(r"scanned \((\w+): ")
_CONDITION_OF = re.compile(r"^key `source\.aggregates\.(\w+)\.where\.\d+[.`]")
"""A problem naming an events aggregate's condition (`source.aggregates.avg_age.where.0.in`): the aggregate's name."""
_KEYS_DUPLICATED = re.compile(r"^key `source\.\w+`: got [^;]*; (\d+ rows share |it dates every row alike)")
"""`_duplicated_keys`' line: most rows refused as duplicated keys, whichever key it names (trial 29: a snapshot of days
declared a panel by the week, its `source.grain` line followed by a window "past the history" of 1 week left)."""
_PERIOD_KEYS = tuple(f"key `source.{k}`" for k in (
    "period_format", "period_column", "year_column", "month_column", "day_column", "quarter_column", "week_column"))
"""The source keys whose problem leaves rows of no period: the history those left is short, so a window past it is
the same cause."""
_MOSTLY_TEXT_COLUMN = re.compile(r"^key `source\.(?:aggregates\.\w+\.column|columns\.\d+)`: '(.+?)': \d+ of \d+ cells "
                                 r"the night reads are not numbers")


def _metrics_of_text(pack: CriteriaPack, problems: list[str]) -> set[str]:
    """The metrics reading a source column that a problem calls mostly text (`cell_problems`: `avg` over a tweet's
    text): every one is a gap for that cause, which the filters and required inputs reading them need not say again.
    On events, the aggregates over the column; on a panel, the column itself."""
    text = {m[1] for p in problems if (m := _MOSTLY_TEXT_COLUMN.match(p))}
    if not text:
        return set()
    fed = {name for name, a in pack.source.aggregates.items() if a.column in text} \
        if pack.source.shape == "events" else text
    return {name for name, spec in pack.metrics.items() if spec.column in fed or set(spec.columns or []) & fed}


_JOIN_OF = re.compile(r"^key `source\.join\.(\d+)[.`]")
"""A problem naming a joined table's key (`source.join.0.entity_id`): the join's index."""


def _metrics_of_joins(pack: CriteriaPack, problems: list[str]) -> set[str]:
    """The metrics reading a joined table's columns when a problem names one of its keys (ids that match none, no
    row by the night, a finer grain): the filters and required inputs they leave unknown are that problem again
    (trial 25: every mistake in a join was said a second time by `required_inputs`)."""
    named = {int(m[1]) for p in problems if (m := _JOIN_OF.match(p))}
    columns = {c for i in named if i < len(pack.source.join) for c in pack.source.join[i].columns}
    return {name for name, spec in pack.metrics.items() if spec.column in columns or set(spec.columns or []) & columns}


def _metrics_of_conditions(pack: CriteriaPack, problems: list[str]) -> set[str]:
    """The metrics reading an events aggregate whose `where` a problem names (`in: [female]` for `Female`: the
    aggregate keeps no event, so an `avg` of it, and an `age_days` dating by it, has no value): the filters and
    required inputs they leave unknown are that condition again."""
    named = {m[1] for p in problems if (m := _CONDITION_OF.match(p))}
    return {name for name, spec in pack.metrics.items() if spec.column in named or set(spec.columns or []) & named}


def _names_per_entity(pack: CriteriaPack, history: pl.DataFrame) -> pl.DataFrame:
    """The names each entity's rows carry, for `names_changing` and `names_finer`: a panel's over the rows the night
    reads; an events source's over its events (its panel holds one name per entity, whatever its events say)."""
    if pack.source.shape != "events" or pack.source.name_columns == pack.source.entity_columns:
        return names_per_row(history)  # (a name that is the id changes with it: `names_changing` asks no more)

    return names_per_entity(pack)


def _lacking_of_few(pack: CriteriaPack, found: list[Candidate], problems: list[str]) -> list[str]:
    """On a source of too few entities for `check_candidates.problems`' judgment (a single series), the metrics
    its candidates lack tonight that a metric's own key explains (`min_rows` of more periods than the rows fill, a
    window over none), as warnings, each key once: check said only "metrics with gaps", the archive "is a gap".
    A gap of quarantined rows is said by their lines, and one whose cause a problem names (a window past the
    history) by that problem (`_one_cause_once`)."""
    lacking = [w for w in check_candidates.unknown_for_all(pack, found, least=1) if w.startswith("key `metrics.")]
    kept = set(_one_cause_once([*problems, *lacking], pack))
    out: list[str] = []
    keys: set[str] = set()
    for line in lacking:
        key = line.split(";")[0]
        if line in kept and key not in keys:
            keys.add(key)
            out.append(line)
    return out


def _undated_of_few(pack: CriteriaPack, found: list[Candidate], problems: list[str], unparsed: list[str],
                    seen: int, undated: list[tuple[int, str]]) -> list[str]:
    """On a source of too few entities for `check_candidates.problems`' judgment (a single series), rows of no
    period (`undated`: each quarantined row's number and reason) that leave a required input or a filter's metric
    unknown for every candidate: one warning, naming the period key (`undated_at_fault`) unless a problem names it,
    or `source.path` for a line whose fields tell no period (a field too few). Trial 24: airquality's one city with a
    day written 31 June, or a line missing its day, left every metric unknown on every night, and check said ok."""
    if not undated or any(p.startswith(_PERIOD_KEYS) for p in problems):
        return []
    lacking = check_candidates.unknown_for_all(pack, found, least=1)
    if unparsed:
        return [w for w in undated_at_fault(pack, lacking, unparsed, seen, False) if w not in lacking]
    names = [line.split(": got ")[1].split(";")[0] for line in lacking]
    if not names:
        return []
    rows = ", ".join(f"{row} ({reason})" for row, reason in undated[:3]) + (", ..." if len(undated) > 3 else "")
    return [f"key `source.path`: source file {pack.path_of(pack.source)}: source row{'s' if len(undated) > 1 else ''} "
            f"{rows} tell{'' if len(undated) > 1 else 's'} no period, so {'they' if len(undated) > 1 else 'it'} may "
            "lie in any window and leave the series' every metric unknown on every night (no candidate has a value "
            f"of {', '.join(names)}): expected the rows mended or removed"]


def _one_cause_once(problems: list[str], pack: CriteriaPack) -> list[str]:
    """The problems without those that say another's cause again: when a line names a key whose mistake quarantines
    rows (`_QUARANTINING_KEYS`: `bounds: [0, 1]` on premiums in dollars, a `period_format` most rows fail), the
    filters and required inputs those rows leave unknown ("expected the source's rows mended") are the same cause,
    four more lines of it; and so are those whose gap is a metric's window that reaches past the history (its
    `metrics.X.window` line), the metric's `min_rows` among them. Without such a line (a third of the cells written
    `$200`), they stay. A source key said twice with the same value (its rows' line, then a metric they leave
    unknown traced back to it) is said once, and so is a metric's key said for each filter and input it leaves
    unknown (its `min_rows` behind a required input and a derived one). A column of text that metrics read
    (`_metrics_of_text`) leaves them gaps ("0 of 8 weeks of favs filled"): the filters and inputs reading them say it
    again. Rows of no period (a `year_column` of titles), or most refused as duplicated keys (`_KEYS_DUPLICATED`),
    leave a short history: windows past it say it again; so do rows all read into 1970's first moments
    (`_NO_UNIX_TIME`). An events aggregate's condition that keeps no event
    leaves the metrics reading it gaps (`_metrics_of_conditions`): their filters and inputs say it again."""
    quarantining = any(_QUARANTINING_KEYS.match(p) for p in problems)
    undated = any(p.startswith(_PERIOD_KEYS) or _KEYS_DUPLICATED.match(p) for p in problems)
    problems = [p for p in problems if not (undated and _WINDOW_PAST.match(p))]
    past = {name for p in problems if _WINDOW_PAST.match(p) for name in _WINDOW_KEY.findall(p)} \
        | _metrics_of_text(pack, problems) \
        | _metrics_of_conditions(pack, problems) \
        | _metrics_of_joins(pack, problems)
    # a grain finer than the rows' (months read by the day), or every row in 1970's first moments (Unix time over
    # a count of days): every window between their dates finds nothing
    first_days = any(_FINER_THAN_ROWS.match(p) or _NO_UNIX_TIME.match(p) for p in problems)
    kept = [p for p in problems if not (quarantining and check_candidates.says_rows_mended(p))
            and not ((m := _GAP_OF.search(p)) and m[1] in past and p.startswith(("key `required_inputs.",
                                                                                "key `hard_filters.")))
            and not p.startswith(tuple(f"key `metrics.{metric}.min_rows`" for metric in past))
            and not (p.startswith(tuple(f"key `metrics.{metric}.window`" for metric in past))
                     and not _WINDOW_PAST.match(p))
            and not (first_days and p.startswith("key `metrics.") and (".min_rows`" in p or ".window`" in p))]
    said: set[str] = set()
    out = []
    for p in kept:
        opening = p.split(";")[0]
        if not (p.startswith(("key `source.", "key `metrics.")) and opening in said):
            out.append(p)
            said.add(opening)
    return out


def json_keys_spelt_otherwise(pack: CriteriaPack, quarantined: pl.DataFrame) -> list[str]:
    """Warnings: JSON Lines records (of the source or a joined file) that write a key the pack reads otherwise
    ('Weight' for 'weight'), never beside it, which the reader quarantined (`formats.respelt`, its reason read
    back by `respelt_in`): each names the key that names the column, with the records' count and first line."""
    rows = quarantined.select("source_row", "reason").rows()
    labels = [f"{join_label(pack, j)}: " for j in pack.source.join]
    out = []
    for (within, spec), label in zip(pack.source.keyed, ["", *labels], strict=True):
        found: dict[tuple[str, str], list[int]] = {}
        for line, reason in rows:
            if reason.startswith(label) and (label or not reason.startswith(tuple(labels))):
                for written, needed in respelt_in(reason.removeprefix(label)):
                    found.setdefault((needed, written), []).append(line)
        keys = {v: k for k, v, _ in reversed(list(_naming(spec, within))) if _COLUMN_KEY.search(k)} if found else {}
        for (needed, written), lines in sorted(found.items()):
            records = len(lines)
            out.append(f"key `{keys.get(needed, within + '.path')}`: got {needed!r}; {records} record"
                       f"{'s' if records > 1 else ''} of {pack.path_of(spec).name} write it {written!r} instead (the "
                       f"first at line {min(lines)}), so {'each is' if records > 1 else 'it is'} quarantined (a "
                       "figure under another name is no gap): expected the key written one way in every record")
    return out


def _past_cap(pack: CriteriaPack, flagged: int) -> str:
    """Why more go on than the cap, when they do: candidates with quarantined rows in reach (or a gap in the cap
    order's metric) are never capped out (`candidates.logic.scan`)."""
    if not flagged:
        return ""
    gap = f" or a gap in {pack.caps.order_by}" if pack.caps.order_by not in (None, "score") else ""
    return f"; {flagged} with quarantined rows in reach{gap} go{'es' if flagged == 1 else ''} on past it, flagged"


def _undated_of_no_entity(undated: pl.DataFrame, metrics: pl.DataFrame) -> list[str]:
    """The facts for quarantined lines of no period whose "entity" is none the night reads. One line of its own
    "entity" is a footnote below a spreadsheet's table (trial 38: `Source: Ecdat Irates, McCulloch-Kwon; rates in
    percent a year`, split at its `;`, was told "its entity's metrics are unknown on every night", of an entity that
    does not exist): it blanks no metric. Several lines of one entity are an entity the source has, every row of
    it undated, so no night reads it at all (trial 51: seven boroughs' weeks written `W22 2007` were told "a
    footnote or a note below the table? It blanks no metric")."""
    strays = undated.filter(~pl.col("entity_id").is_in(metrics["entity_id"].implode())).unique(
        ["source_row"], keep="first", maintain_order=True)
    if not strays.height:
        return []
    lines = strays.group_by("entity_id", maintain_order=True).len()
    whole = lines.filter(pl.col("len") > 1)
    notes = strays.filter(~pl.col("entity_id").is_in(whole["entity_id"].implode()))
    facts = []
    if whole.height:
        shown = ", ".join(f"{r['entity_id']!r} ({r['len']} lines)" for r in whole.head(3).iter_rows(named=True))
        one = whole.height == 1
        facts.append(f"{whole.height} entit{'y' if one else 'ies'} of the source ({shown}"
                     f"{', ...' if whole.height > 3 else ''}) ha{'s' if one else 've'} no line with a period, every "
                     f"one quarantined, so no night reads {'it' if one else 'them'}: {'it is' if one else 'each is'} "
                     "left out of every scan until its rows' periods are mended")
    if notes.height:
        shown = ", ".join(f"source row {r['source_row']}, {r['entity_id']!r}"
                          for r in notes.head(3).iter_rows(named=True))
        facts.append(f"{notes.height} quarantined line{'s' if notes.height > 1 else ''} of no period "
                     f"name{'' if notes.height > 1 else 's'} no entity the source has ({shown}"
                     f"{', ...' if notes.height > 3 else ''}): a footnote or a note below the table? It blanks no "
                     "metric")
    return facts


def _flagged_capped(pack: CriteriaPack, report: ScanReport) -> list[str]:
    """Candidates flagged past the cap beyond `caps.max_flagged`: refused rows across many entities, so the night
    analyzes only the best placed of them (a warning: the night runs, and names them)."""
    if not report.flagged_capped:
        return []
    flagged = report.flagged_past_cap + report.flagged_capped
    counts = (f"{report.flagged_past_cap} go{'es' if report.flagged_past_cap == 1 else ''} on flagged, "
              f"{report.flagged_capped} {'is' if report.flagged_capped == 1 else 'are'} capped (max_flagged="
              f"{pack.caps.flagged_bound})")
    why = Counter(e["why"] for e in report.quarantined_entities).most_common(1)
    if not why:  # no row refused: each is flagged for a gap in the cap order's metric alone (an NA in the source)
        return [f"key `caps.max_flagged`: {flagged} candidates past the cap have no value of {pack.caps.order_by}, "
                f"the metric `caps.order_by` places them by (no row of theirs is quarantined); {counts}: expected "
                "an order every candidate has a value of (`caps.order_by: score` places one with no score last), "
                "or a `caps.max_flagged` that analyzes them"]
    return [f"key `caps.max_flagged`: {flagged} candidates past the cap have quarantined rows in reach; {counts}"
            f"; the commonest reason: {why[0][0]}: mend the source, or raise `caps.max_flagged` to analyze them"]


def _most_failed(failed: dict[str, int], scanned: int, passed: int) -> str:
    """Which hard filters refused the most, when none passes: a night of nothing to analyze says why."""
    if passed or not failed:
        return ""
    most = sorted(failed.items(), key=lambda item: (-item[1], item[0]))[:2]
    return "; the most failed: " + ", ".join(f"{name} ({n} of {scanned})" for name, n in most)


def _before_the_night(pack: CriteriaPack, facts: SourceFacts) -> list[str]:
    """What the counts over the typed rows show before any night is read (`facts.source_facts`): a numeric
    `where` comparison over a column of text, and rows published before their period ends: most rows, or most
    periods' first estimate among their revisions (trial 25: each quarter's first estimate published before the
    quarter ended, half the rows, was said ok)."""
    problems = []
    for (within, spec), table in zip(pack.source.keyed, facts.tables, strict=True):
        problems += _text_compared(pack, within, spec, table)
        problems += _published_before_observed(within, spec, table)
        keys = min(table.seen_keys or table.seen_dated, table.seen_dated)
        if spec.published_column and spec.shape == "panel" and keys and \
                table.early > MOSTLY_TEXT * keys and table.early_example is not None:
            period, published = table.early_example
            revised = f" (of {keys} entity-periods, each with its revisions)" if keys < table.seen_dated else ""
            problems.append(
                f"key `{within}.published_column`: got {spec.published_column!r}; {table.early} of the "
                f"{table.seen_dated} rows the night reads{revised} have published_at before the period it describes "
                f"ends (e.g. {pack.grain.label(period)} published {published.isoformat()}): a look-ahead (a figure "
                "for a period is known once the period is over): expected the date each row became known, or no "
                "`published_column` (a row is then known `publication_lag_days` after its period ends)")
    return problems


_EARLY_SHARE = 0.1
"""The share of a snapshot's or events' rows published before they happened beyond which `check` refuses the
night: the publication column is then no publication date (a few a day early are a clock's slip, read as
observed)."""


def _published_before_observed(within: str, spec: SourceSpec, table: TableFacts) -> list[str]:
    """A snapshot's or events' rows (`shapes.observed_first`) published before their own moment: each is read from
    the day it happened (never sooner), and when they are more than `_EARLY_SHARE` of the rows the night reads, the
    column is named (trial 27: each weighing's revision dated three days before the weighing, so the night of
    2024-03-10 read a weighing of 2024-03-12, and check said ok)."""
    if not shapes.observed_first(spec) or table.early_example is None or \
            table.early <= _EARLY_SHARE * table.seen_dated:
        return []
    observed, published = table.early_example
    return [f"key `{within}.published_column`: got {spec.published_column!r}; {table.early} of the "
            f"{table.seen_dated} rows the night reads are published before they happened (e.g. a row of "
            f"{spec.period_column!r} {observed.isoformat()} published {published.isoformat()}): a look-ahead, each "
            "read from the day it happened instead: expected the date each row became known, on or after its "
            f"{spec.period_column!r}"]


def _text_compared(pack: CriteriaPack, within: str, spec: SourceSpec, table: TableFacts) -> list[str]:
    """A numeric `where` comparison (`op`, `value`) over a column that holds text: it matches no row. An aggregate's
    comparison that no number of the column meets, in any night, keeps no row either (`hour >= 1800` over hours
    0-23: every share 0, and check said ok): the value is in another unit than the column's."""
    problems = []
    for key, condition, column in shapes.numeric_conditions(spec):
        texts, rows = table.texts[key]
        number = f"try_cast({quote_identifier(column)} AS DOUBLE)"
        if key.startswith("aggregates.") and rows > texts and not (rows and texts > MOSTLY_TEXT * rows) and not \
                commonest_values(pack, within, "1", f"{number} {condition.op} {condition.value!r}", limit=1):
            held = commonest_values(pack, within, quote_identifier(column), f"{number} IS NOT NULL", limit=6)
            written = condition.model_dump(by_alias=True, exclude_none=True)
            problems.append(
                f"key `{within}.{key}`: got {written}; no number of {condition.column!r} meets it (it holds e.g. "
                f"{held}), so the condition keeps no row (a share of 0, an average of nothing, for every entity): "
                "expected a `value` in the column's own unit")
            continue
        if rows and texts > MOSTLY_TEXT * rows:
            examples = commonest_values(pack, within, quote_identifier(column),
                                        f"try_cast({quote_identifier(column)} AS DOUBLE) IS NULL", limit=12)[:4]
            written = condition.model_dump(by_alias=True, exclude_none=True)
            dressed = numbers_dressed(condition.column, examples, spec, within)
            if dressed is not None:  # numbers with a unit (trial 33: `14.0min`): the key that reads them, once
                if condition.column not in shapes.cell_columns(spec):  # (else its own column's line says it)
                    problems.append(f"key `{within}.{key}`: got {written}; {condition.column!r} holds numbers "
                                    f"written with more than a number ({texts} of {rows} cells, e.g. "
                                    f"{examples}), which a numeric comparison reads as its column is read: "
                                    f"{dressed[1]}")
                continue
            problems.append(
                f"key `{within}.{key}`: got {written}; {condition.column!r} holds text, not numbers ({texts} of "
                f"{rows} cells, e.g. {examples}): a numeric comparison (`op` {condition.op!r}) matches none of "
                f"them, so every row would fail it: expected `in: [...]` (or `not_in`) listing the values to "
                "match, compared as trimmed text")
    return problems


def _ids_apart(pack: CriteriaPack, index: int) -> tuple[list[str], list[str]]:
    """(problems, facts) of a joined table whose ids miss some of the source's entities, in any period (the
    entities' joined columns are then gaps). When fewer than half of the entities match and the join has ids no
    entity has, the two name their entities otherwise (codes for names: 184 of 185 countries' population a gap,
    and check said ok): a problem. Other misses are a fact, with examples from both sides (18 countries spelt
    otherwise, `Russia` for `Russian Federation`)."""

    joined, within = pack.source.join[index], f"source.join.{index}"
    ids = join_ids(pack, index)
    if not ids.unmatched:
        return [], []
    missed = (f"{ids.unmatched} of the source's {ids.entities} entities match no id of the joined table "
              f"(e.g. {ids.unmatched_examples}), so its columns ({', '.join(joined.columns)}) are gaps for them")
    spare = f"; the joined table has {ids.spare} ids no entity has (e.g. {ids.spare_examples})" if ids.spare else ""
    said = f"key `{within}.entity_id`: got {joined.entity_id!r}; {missed}{spare}"
    padded = zero_padded(ids.unmatched_examples, ids.spare_examples)
    if ids.spare and 2 * ids.unmatched > ids.entities:
        return [said + (padded or f": expected the column holding the values of `source.entity_id` "
                                  f"({pack.source.entity_id!r}), written alike (ids match by their slug: case, "
                                  "spaces and punctuation aside)")], []
    return [], [said + padded]


def _ids_padded(pack: CriteriaPack, index: int) -> list[str]:
    """A warning naming the join's `entity_id` when some of its rows' numeric ids match an entity only once leading
    zeros are dropped (`0007` for `7`): those rows join no entity, their columns gaps where they lie, while the
    entity's other rows match, so no entity is unmatched and `_ids_apart` says nothing. Trial 54: half a joined
    table's firm codes zero-padded left 69 firms' `credit` a gap, and check said ok."""
    found = join_ids_padded(pack, index)
    if found is None:
        return []
    missed, rows, example, meant = found
    joined, within = pack.source.join[index], f"source.join.{index}"
    return [f"key `{within}.entity_id`: got {joined.entity_id!r}; {missed} of the joined table's {rows} rows have an "
            f"id that is an entity's with leading zeros added or dropped ({example!r} for {meant!r}), so they join no "
            f"entity and their columns ({', '.join(joined.columns)}) are gaps where they lie: expected ids written "
            "alike in both tables (a DuckDB `query` that writes them so, `ltrim(id, '0')`)"]


def zero_padded(unmatched: list[str], spare: list[str]) -> str:
    """A clause saying that numeric ids on one side are the other's with leading zeros (state `01` for `1`, a ZIP
    code `02134` read as `2134`), when the examples show it; empty otherwise."""
    def bare(i: str) -> str:
        return i.strip().lstrip("0") or "0"

    if not all(i.strip().isdigit() for i in [*unmatched, *spare]):
        return ""
    for side, ids, other in (("the joined table", spare, unmatched), ("the source", unmatched, spare)):
        padded = [i.strip() for i in ids if i.strip() != bare(i) and bare(i) in {bare(o) for o in other}]
        if padded:
            return (f": {side} writes them with leading zeros ({padded[0]!r} for {bare(padded[0])!r}); expected ids "
                    "written alike in both tables")
    return ""


def _join_periods_unparsed(pack: CriteriaPack, index: int, table: TableFacts, undated: Sequence[str],
                           empty: list[str]) -> str:
    """A joined table many of whose periods do not parse (`undated`: their quarantine reasons): its
    `period_format`, with a pattern that reads them where one does. Trial 21: academic years `2012-13` with no
    pattern were unparsed, and `2007-08` read as August 2007 met the source's rows of the wrong year (or, the years
    apart, none: then blamed on `entity_id` with the entities' names). `empty`: the joined columns, when they are
    empty for every entity."""
    joined, within = pack.source.join[index], f"source.join.{index}"
    values = written_periods(list(undated))
    given = repr(joined.period_format) if joined.period_format else "none"
    suggestion = suggested_pattern(values, joined.period_patterns) or " (e.g. '%b-%Y' for Mar-2018)"
    meets = f" ({', '.join(empty)} empty for every entity)" if empty else ""
    return (f"key `{within}.period_format`: got {given} for column {joined.period_column!r}; {len(undated)} of the "
            f"joined table's {table.in_scope} rows have a period that does not parse (e.g. {values[0]!r}), each "
            f"quarantined{meets}: expected a strptime pattern naming how its dates are written{suggestion}")


def _join_moved(pack: CriteriaPack, index: int) -> list[str]:
    """A warning when every entity's joined periods are its source periods moved by a few (`join_shift`): each
    joined row is read beside the source's row of its own period, which may not be the one its figures are of (a
    year written as the one it ends in, a release dated by the next year). A warning: two tables may cover such
    spans by nature."""

    shift = join_shift(pack, index)
    if shift is None:
        return []
    joined = pack.source.join[index]
    key, column = ("period_column", joined.period_column) if joined.period_column else \
        ("year_column", joined.year_column)
    grain = pack.grain
    later = f"{grain.count(abs(shift.by))} {'later' if shift.by > 0 else 'earlier'}"

    def span(first: date, last: date) -> str:
        return f"{grain.label(first)} to {grain.label(last)}"

    return [f"key `source.join.{index}.{key}`: got {column!r}; each of the {shift.entities} entities' joined "
            f"{grain.plural} run {later} than its own in the source ({span(*shift.joined_span)} against "
            f"{span(*shift.source_span)}), as many of them: each joined row is read beside the source's row of its "
            f"own {grain.name}, so if its figures are of the {grain.name} {'before' if shift.by > 0 else 'after'} (a "
            f"{grain.name} dated by its end, or by its release), every one meets the wrong row: expected "
            f"{grain.plural} that date the same figures as the source's, or nothing to mend if the two tables cover "
            "these spans"]


def _join_published_later(pack: CriteriaPack, night: date, anchor: date | None, counted: SourceFacts,
                          problems: list[str]) -> tuple[str, set[str]] | None:
    """A joined table whose rows of the source's latest period tonight are published after the night (a longer lag
    than the source's): a required input or a filter's metric with no value for any candidate, where it reads the
    table's columns, is that, said naming the joined table's dating key and the first night that reads them (trial
    27: traffic published 120 days after the year, costs 90, and the default night's inputs were "0 of 1 years of
    output filled in 1984": the rows were there, not yet known); with the metrics it explains. A metric of the
    source's own columns is not (trial 40: temperatures written '72 F' left the warming unknown, and a yearly
    population table, lagged but read by a window that reached its rows, was blamed instead)."""
    reading = {m for p in problems if (m := _read_metric(pack, p)) is not None}
    if anchor is None or not reading:
        return None
    for i, (joined, table) in enumerate(zip(pack.source.join, counted.tables[1:], strict=True)):
        if joined.known_at is not None or table.unseen is None or table.unseen[0] > anchor or (
                table.periods is not None and table.periods[1] >= anchor):
            continue
        blamed = {m for m in reading if _reads_columns(pack, m, joined.columns)}
        if not blamed:
            continue
        key, got = ("published_column", repr(joined.published_column)) if joined.published_column else \
            ("publication_lag_days", str(joined.publication_lag_days))
        period, published = pack.grain.label(table.unseen[0]), table.unseen[1].isoformat()
        own = "" if pack.source.published_column or pack.source.known_at else \
            f"; the source's is {pack.source.publication_lag_days} days"
        sooner = f"(or, if the table is known sooner, the lag it is published with{own})"
        if table.unseen[0] < anchor:  # unseen since an earlier period: the latest's rows come later still
            return (f"key `source.join.{i}.{key}`: got {got}; the joined table {joined.table!r} "
                    f"{_published_to(pack, table, night)}, its rows from {period} on after the night (the first "
                    f"on {published}), so its columns ({', '.join(joined.columns)}) have no value in "
                    f"{pack.grain.label(anchor)}, the source's latest period, for any entity: expected a night on "
                    f"which its {pack.grain.label(anchor)} rows are published {sooner}"), blamed
        return (f"key `source.join.{i}.{key}`: got {got}; the joined table {joined.table!r} has rows of {period}, the "
                f"source's latest period on {night}, but the first is published on {published}, after the night, so "
                f"its columns ({', '.join(joined.columns)}) have no value in {period} for any entity: expected a "
                f"night on or after {published} {sooner}"), blamed
    return None


def _read_metric(pack: CriteriaPack, problem: str) -> str | None:
    """The metric a problem of a key that reads one is about (`_READING_KEYS`: a required input, a hard filter's
    metric); None for a problem of another key."""
    found = re.match(r"key `(required_inputs|hard_filters)\.(\d+)", problem)
    if found is None:
        return None
    n = int(found.group(2))
    if found.group(1) == "required_inputs":
        return pack.required_inputs[n] if n < len(pack.required_inputs) else None
    return pack.hard_filters[n].metric if n < len(pack.hard_filters) else None


def _reads_columns(pack: CriteriaPack, metric: str, columns: Sequence[str]) -> bool:
    """Whether a metric, or a metric a derived one rests on, aggregates one of `columns`."""
    specs = [pack.metrics[m] for m in pack.base_metrics(metric) if m in pack.metrics]
    return any(c in columns for spec in specs for c in (spec.columns or [spec.column or ""]))


def _published_to(pack: CriteriaPack, table: TableFacts, night: date) -> str:
    """What the night reads of a joined table published late: its periods up to the latest published. (Trial 36: a
    lag of 900 days said the table "has rows of 1996, the source's latest period", which was 1998: 1996 was only
    the first period unseen.)"""
    if table.periods is None:
        return f"has no row published by {night}"
    return f"is published only to {pack.grain.label(table.periods[1])} on {night}"


def _join_unmatched(pack: CriteriaPack, index: int, night: date, table: TableFacts, present: list[str],
                    metrics: pl.DataFrame, own_undated: bool = False,
                    spans: tuple[date, date] | None = None) -> str | None:
    """A joined table whose columns are empty for every entity and period of the source: it has no rows, `where`
    keeps none, none is dated or published by the night, or its ids are not the source's (each side's ids shown,
    and leading zeros named), or its ids are and its periods are not: said unless the source's own periods mostly
    do not parse (`own_undated`: its problem is that, and the join's periods, read another way, follow it). Periods
    that do not meet because the two tables cover other years are said with both spans (`spans`: the source's
    first and last period; trial 25: Produc's years moved past Guns' were told to be "read as the source's are")."""
    joined, within = pack.source.join[index], f"source.join.{index}"
    where = (f"PostgreSQL source {joined.query[:60] if joined.query else joined.table!r} (URL from "
             f"{joined.url_env})" if joined.format == "postgres" else f"source file {pack.path_of(joined)}")
    empty = f"{', '.join(present)} empty for all {metrics.height} entities"
    if not table.rows:
        return _no_rows_read(pack, within, joined, empty) or (
            f"key `{within}.path`: {where} has no rows (a header, or a table, and nothing in it; {empty}): "
            "expected the joined table's data")
    if not table.in_scope:
        if text_compared := _text_compared(pack, within, joined, table):
            return text_compared[0]
        conditions = [w.model_dump(by_alias=True, exclude_none=True) for w in joined.where]
        return (f"key `{within}.where`: got {conditions}; it keeps none of the {table.rows} rows of {where}: "
                "expected conditions some rows meet (values are compared as trimmed text, case and all)")
    if joined.published_column and table.dated and not table.published:
        return not_publication_dates(pack, within, table.dated)
    if not table.dated:
        if joined.period_column and not joined.period_format:
            return not_dates(pack, within)
        if joined.year_column and joined.known_at is None and joined.period_column is None:
            return not_years(pack, within)
        return source_problem(pack, f"joined table {joined.table} has no parseable period", no_period=True,
                              within=within)
    if table.first_published is None or table.first_published > night:
        first = "never" if table.first_published is None else table.first_published.isoformat()
        return (f"key `{within}`: got table {joined.table!r} ({where}); none of its rows is published by {night}, "
                f"its first on {first} ({empty} until then): expected a night on or after {first}, or a join whose "
                "rows are known by the night")
    if joined.every_entity:
        return (f"key `{within}`: got table {joined.table!r} ({where}); none of its periods is one of the source's "
                f"({empty}): expected rows dated in the source's periods (the same `grain`, counted alike)")

    ids = join_ids(pack, index)
    if ids.entities and ids.unmatched < ids.entities:  # the ids meet: the periods do not
        if own_undated:
            return None
        column = joined.period_column or joined.year_column
        key = "period_column" if joined.period_column else "year_column"
        if spans is not None and table.periods is not None and (
                table.periods[1] < spans[0] or table.periods[0] > spans[1]):
            def span(first: date, last: date) -> str:
                return f"{pack.grain.label(first)} to {pack.grain.label(last)}"

            return (f"key `{within}`: got table {joined.table!r} ({where}); its periods run {span(*table.periods)} "
                    f"and the source's {span(*spans)}, apart ({empty}): expected a joined table covering the "
                    "source's periods")
        return (f"key `{within}.{key}`: got {column!r}; {ids.entities - ids.unmatched} of the source's "
                f"{ids.entities} entities have ids in the joined table, but none of its rows lies in a period the "
                f"source has ({empty}): expected periods read as the source's are (the same days, years or "
                "`period_format`)")
    padded = zero_padded(ids.unmatched_examples, ids.spare_examples)
    theirs = f" (the joined table's: {ids.spare_examples})" if ids.spare_examples else ""
    said = (f"key `{within}.entity_id`: got {joined.entity_id!r}; no row of the joined table matched an entity and "
            f"period of the source ({empty})")
    if set(joined.entity_columns) <= set(joined.dated_columns):  # (trial 25: a price index keyed by its year)

        if (held := join_entity_column(pack, index)) is not None:  # (trial 33: not one series, the entities')
            return (f"{said}: its id is the column that dates its rows, and its column {held[0]!r} holds the "
                    f"source's ids ({held[1]} of its entities, e.g. {held[2]}): expected `entity_id: {held[0]}`")
        return (f"{said}: its id is the column that dates its rows, a table of one series: expected "
                "`every_entity: true` in place of `entity_id`, which joins the series to every entity by period")
    return said + (padded or f": expected the values of `source.entity_id` ({pack.source.entity_id!r}), e.g. "
                             f"{ids.unmatched_examples[:2]}{theirs}")


def _every_entity_held(pack: CriteriaPack, index: int) -> str | None:
    """A table joined to every entity (`every_entity: true`) one of whose columns holds the source's own ids: its
    rows are each one entity's, and every entity would be given all of them, the weather of three airports pooled
    for each (an events table's aggregates) with check's ok (trial 33); a panel's rows of one period are duplicated
    keys, said before this. None when no column of it holds them."""

    held = join_entity_column(pack, index)
    if held is None:
        return None
    column, entities, examples = held
    return (f"key `source.join.{index}.every_entity`: got true; its column {column!r} holds the ids of {entities} of "
            f"the source's entities (e.g. {examples}), so each of its rows is one entity's, and every entity would be "
            f"given all of them: expected `entity_id: {column}` in place of `every_entity`")


_MANY_IDS = 100
"""Entities from which one row each is no coincidence of a short history but a row's own id taken for an entity's."""
_ROWS_PER_ID = 1.5
"""Rows per entity at or below which the entity column is each row's own id."""
