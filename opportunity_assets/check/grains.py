"""`opportunity check`: the grain against the rows (pure): rows of a coarser period (years beside months, a joined
table's quarters), a grain finer than the rows' own step, year spans read as months, a period column read as
vintages, weeks that are not ISO or start on Sunday, timestamps zoned elsewhere, coverage bounds that trading days
cannot reach, and dates beside a `known_at` that come after it. Each is one line naming the pack key."""

from __future__ import annotations

import functools
import math
from datetime import date
from pathlib import Path

import polars as pl

from opportunity_assets.check.patterns import YEAR_SPAN, year_span_pattern
from opportunity_assets.check.periods import commonest_values
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import written
from opportunity_assets.periods import FIRST_YEAR, LAST_YEAR, Grain
from opportunity_assets.records import Candidate, FilterResult
from opportunity_assets.sources import postgres, shapes
from opportunity_assets.sources.formats import join_index
from opportunity_assets.sources.probes import (
    dates_beside,
    rows_matching,
    telling_apart,
    vintage_periods,
)
from opportunity_assets.sources.reading import SourceError, literal
from opportunity_assets.sources.sniff import infer_format
from opportunity_assets.sources.spec import (
    SourceSpec,
)


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
        spans = [YEAR_SPAN.match(v) for v in values if v.strip()]
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

    problems = []
    for within, spec in pack.source.keyed:
        if not spec.period_column or spec.period_patterns or (spec.wide is not None and spec.wide.across == "period"):
            continue
        join = join_index(within)
        written, dated, rows, units = _coarser_written(pack, spec.period_column, _GRAIN_ORDER.index(spec.grain), join)
        for unit, name, match, bare in units:
            if not bare or bare == rows or bare <= YEARS_BESIDE * rows:
                continue
            grain = spec.grain  # (a join's own: the main source's, or a coarser one)
            shown = commonest_values(pack, within, written, f"{dated} AND {match}")
            read = f"on `grain: {grain}` a {unit} is read as its first {grain}, {_known(spec, unit, grain)},"
            others = commonest_values(pack, within, written, f"{dated} AND NOT {match}")
            apart = telling_apart(pack, match, join)
            where = (f"`{within}.where: [{{column: {apart[0]}, in: [{', '.join(apart[2])}]}}]` ({apart[0]!r} is "
                     f"{' or '.join(map(repr, apart[1]))} on the {unit}s' rows)" if apart is not None
                     else f"a `{within}.where` keeping the {Grain(grain).plural}' rows alone (a column saying each "
                          f"row's frequency), or the {unit}s' rows out of the file")
            problems.append(f"key `{within}.period_column`: got {spec.period_column!r}; {bare} of its {rows} rows "
                            f"are {name} (e.g. {shown}) beside {Grain(grain).plural} (e.g. {others}): {read} or "
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

    problems = []
    for within, spec in pack.source.keyed:
        join = join_index(within)
        if join is None or not spec.period_column or spec.period_patterns or \
                (spec.wide is not None and spec.wide.across == "period"):
            continue
        written, dated, rows, units = _coarser_written(pack, spec.period_column, _GRAIN_ORDER.index(spec.grain), join)
        found = next(((unit, name, match) for unit, name, match, n in units if rows and n == rows), None)
        if found is None:
            continue
        unit, name, match = found
        grain = spec.grain
        shown = commonest_values(pack, within, written, f"{dated} AND {match}")
        problems.append(f"key `{within}.period_column`: got {spec.period_column!r}; its values are {name} "
                        f"(e.g. {shown}): on `grain: {grain}` a {unit} is read as its first {grain}, "
                        f"{_known(spec, unit, grain)}, and met by the source's rows of that {grain} alone: expected "
                        f"`{within}.grain: {unit}` (each {grain} takes the latest {unit}'s figure known on the night), "
                        f"or a joined table of the source's grain, {Grain(grain).plural}")
    return problems


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


def zoned_in_a_database(pack: CriteriaPack) -> list[str]:
    """A warning: a database's period column of moments that keep no zone (a DuckDB table's `TIMESTAMPTZ`, a
    PostgreSQL table's, view's or query's `timestamptz`) read without `source.time_zone`: each is read as its UTC
    moment and each period runs from UTC midnight, so a reading taken at 23:30 in Toronto on 31 December is the next
    year's (trial 90: an analyst's DuckDB file of Ontario towns, a seventh of its rows at that hour, left 354 of 414
    towns' windows empty on the year's night, and check said ok). The zone cannot be told from the moments; UTC is
    assumed and said so, with the key that names another. A DuckDB view or `query` is not looked into."""
    src = pack.source
    if not src.period_column or src.time_zone is not None or src.wide is not None:
        return []
    if src.format == "postgres":
        zoned = src.period_column in postgres.zoned_columns(src.url_env or "", src.table or "", src.query)
    elif src.query or not src.table or infer_format(pack.source_path, src.format) != "duckdb":
        return []
    else:
        zoned = _duckdb_type(pack.source_path, src.table, src.period_column) == "TIMESTAMP WITH TIME ZONE"
    if not zoned:
        return []
    return [f"key `source.period_column`: got {src.period_column!r}; its moments are a TIMESTAMPTZ, which keeps no "
            f"zone, read as their UTC moments without `source.time_zone`, so each {pack.grain.name} runs from UTC "
            f"midnight (23:30 in Toronto on 31 December is the next {pack.grain.name} in UTC): expected UTC "
            f"{pack.grain.plural} if they are meant, else `time_zone` under `source` naming the zone they are "
            f"counted in (`America/Toronto`)"]


def _duckdb_type(path: Path, table: str, column: str) -> str | None:
    """The declared type of a DuckDB database table's column (`schema.table` or `table`), or None."""
    import duckdb

    schema, _, name = table.rpartition(".")
    try:
        with duckdb.connect() as con:
            con.execute(f"ATTACH {literal(str(path))} AS source_db (READ_ONLY)")
            found = con.execute(
                "SELECT data_type FROM duckdb_columns() WHERE database_name = 'source_db' AND lower(table_name) = ? "
                "AND lower(column_name) = ? AND (? = '' OR lower(schema_name) = ?)",
                [name.lower(), column.lower(), schema.lower(), schema.lower()]).fetchone()
    except duckdb.Error:  # (the read says what is wrong with the file)
        return None
    return str(found[0]) if found else None


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


WEEKEND_SHARE = 0.05
"""A day-grain source with fewer of its rows than this on Saturdays and Sundays is one of trading days (a daily one
has 2 in 7 there)."""


def trading_days(weekend: int, rows: int) -> bool:
    """Whether `rows` dated rows, `weekend` of them on a Saturday or Sunday, are a source of trading days: fewer than
    `WEEKEND_SHARE` of them there (none of no rows)."""
    return rows > 0 and weekend < WEEKEND_SHARE * rows


def _weekdays_at_most(length: int) -> int:
    """The most Mondays to Fridays that `length` consecutive days hold."""
    return 5 * (length // 7) + min(length % 7, 5)


def coverage_past_trading_days(pack: CriteriaPack, history: pl.DataFrame, found: list[Candidate]) -> list[str]:
    """A `coverage` filter on a day grain that refuses every scanned candidate tonight, over a source of trading days
    (fewer than `WEEKEND_SHARE` of the rows the night reads on a Saturday or Sunday: exchange quotes, a
    working-day feed), with a bound above its window's weekdays' share: the weekend days are (nearly) never
    filled, so its coverage is at most about that share (10 of 14 days, 0.714), and the filter refuses every
    candidate on every night while check said ok. A problem naming the filter's value."""
    columns = [c for c in pack.columns if c in history.columns]
    if pack.source.grain != "day" or not columns or history.height == 0:
        return []
    filled = history.filter(pl.any_horizontal([pl.col(c).is_not_null() for c in columns]))
    weekend = int((filled["period"].dt.weekday() > 5).sum())  # Monday 1 to Sunday 7
    if not trading_days(weekend, filled.height):
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


def _weekdays_only(start: int, length: int) -> bool:
    """Whether `length` consecutive days ending on weekday `start` (Monday 0) are each a Monday to Friday."""
    return start <= 4 and length <= start + 1


def outcome_past_trading_days(pack: CriteriaPack, history: pl.DataFrame) -> list[str]:
    """A warning naming `outcome.window_periods` when, on a day grain over a source of trading days (as
    `coverage_past_trading_days` tells one), no weekday's night could measure an outcome: both its windows, the
    `window_periods` days ending at the night's latest day and those ending `horizon_periods` days later, must be
    filled on every day (`outcomes.logic`: a gap otherwise, never estimated), and on no weekday do both hold only
    Mondays to Fridays (trial 133: the NYSE's closes, 5 days 30 on, every backtest night "a gap in a window"). An
    events source counts 0 on a day without events, never a gap: not judged."""
    outcome = pack.outcome
    columns = [c for c in pack.columns if c in history.columns]
    if outcome is None or pack.source.grain != "day" or pack.source.shape == "events" or not columns \
            or history.height == 0:
        return []
    filled = history.filter(pl.any_horizontal([pl.col(c).is_not_null() for c in columns]))
    weekend = int((filled["period"].dt.weekday() > 5).sum())  # Monday 1 to Sunday 7
    if not trading_days(weekend, filled.height):
        return []
    length, horizon = outcome.window_periods, outcome.horizon_periods
    if any(_weekdays_only(day, length) and _weekdays_only((day + horizon) % 7, length) for day in range(5)):
        return []
    weeks = max(1, horizon // 7)
    fix = (f"a horizon of whole weeks ({7 * weeks} or {7 * weeks + 7} days) and a window of at most 5 days"
           if horizon % 7 else "a window of at most 5 days")
    return [f"key `outcome.window_periods`: got {length} (with `horizon_periods: {horizon}`); the source has no row on "
            "a Saturday or Sunday (trading days), and an outcome needs every day of its two windows filled, the "
            f"{length} days ending at the night's latest day and the {length} ending {horizon} days after it: on no "
            "weekday do both hold only weekdays, so no night's outcome can ever be measured (each a gap in the "
            f"backtest): expected {fix}, or `source.grain: week`"]


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
