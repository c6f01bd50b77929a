"""What `opportunity check` counts over a source's typed rows before a night: the rows in scope, dated, published
and seen, the span of publication, the periods' first days and coarser grain, bounded columns' ranges, an events
source copied throughout. Each a query on the connection `connection.opened` gives (kept for a command).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import duckdb

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.periods import GRAINS, Grain
from opportunity_assets.sources import shapes
from opportunity_assets.sources.connection import opened, run
from opportunity_assets.sources.csv_rows import Rejected
from opportunity_assets.sources.formats import TYPED, join_rows
from opportunity_assets.sources.reading import ROW
from opportunity_assets.sources.reading import quote_identifier as _q
from opportunity_assets.sources.spec import SourceSpec


def publication_span(pack: CriteriaPack, up_to: date) -> tuple[date, date] | None:
    """The first and the latest publication date of a dated, well-formed row whose period starts by `up_to`: the
    nights the data supports lie between them. None if there is no such row."""
    published = shapes.PUBLISHED
    sql = (f"SELECT min({published}), max({published}) FROM {TYPED} WHERE {shapes.IN_SCOPE} "
           f"AND {shapes.ENTITY} IS NOT NULL AND {published} IS NOT NULL AND {shapes.PERIOD} <= $up_to::DATE")
    with opened(pack) as (con, _):
        first, last = run(con, pack, sql, {"up_to": up_to}).row(0)
    return None if first is None else (first, last)


def refused_after(pack: CriteriaPack, night: date, up_to: date) -> list[Rejected]:
    """The source's own lines refused when read (a field too many, a stray quote) whose dates name a period first
    published after `night` and by `up_to` (the latest night there is): lines no row-based date (`publication_span`)
    counts, so a default night can stop before them (trial 92: a feed that added a column six months ago)."""
    with opened(pack) as (_, rejected):
        return [r for r in rejected if (published := line_published(pack, r)) is not None
                and night < published <= up_to]


def line_published(pack: CriteriaPack, line: Rejected) -> date | None:
    """When a line the source refused is seen, as a row is: on its own publication date, else once its period is
    published by the lag rule; None for a line dated by no field (seen on every night)."""
    if line.period is None:
        return None
    return line.published or pack.grain.end(line.period) + timedelta(days=pack.source.publication_lag_days)


def latest_published_period(pack: CriteriaPack, night: date) -> date | None:
    """The latest period of a dated, well-formed row published by `night` (the night's anchor); None if none."""
    sql = (f"SELECT max({shapes.PERIOD}) FROM {TYPED} WHERE {shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL "
           f"AND {shapes.PUBLISHED} <= $night::DATE")
    with opened(pack) as (con, _):
        (latest,) = run(con, pack, sql, {"night": night}).row(0)
    return latest if latest is None or isinstance(latest, date) else latest.date()


@dataclass(frozen=True)
class RowsAfter:
    """The rows published by a night whose period lies after a given one: what a few stray rows are told by."""

    rows: int
    entities: int
    names: list[str]
    """The first few entities' ids, alphabetically."""


def rows_after(pack: CriteriaPack, night: date, after: date, limit: int = 3) -> RowsAfter:
    """The dated, well-formed rows published by `night` of a period after `after`: how many, of how many entities,
    and the first `limit` entities' ids."""
    where = (f"{shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL AND {shapes.PUBLISHED} <= $night::DATE "
             f"AND {shapes.PERIOD} > $after::DATE")
    sql = (f"SELECT count(*), count(DISTINCT {shapes.ENTITY}), "
           f"(SELECT list(n ORDER BY n) FROM (SELECT DISTINCT {shapes.ENTITY}::VARCHAR AS n "
           f"FROM {TYPED} WHERE {where} ORDER BY n LIMIT {int(limit)})) FROM {TYPED} WHERE {where}")
    with opened(pack) as (con, _):
        rows, entities, names = run(con, pack, sql, {"night": night, "after": after}).row(0)
    return RowsAfter(rows=int(rows), entities=int(entities), names=list(names or []))


def row_counts(pack: CriteriaPack) -> tuple[int, int]:
    """The source's rows, and those in scope (`source.where`), whatever their dates."""
    with opened(pack) as (con, _):
        ((rows, in_scope),) = run(con, pack, f"SELECT count(*), count(*) FILTER (WHERE {shapes.IN_SCOPE}) "
                                              f"FROM {TYPED}", {}).rows()
    return int(rows), int(in_scope)


def january_only(pack: CriteriaPack) -> bool:
    """Whether every dated row in scope falls in a January, over two years or more (a column of bare years read
    at a finer grain puts every row in January)."""
    with opened(pack) as (con, _):
        return _january(con, pack)


def _january(con: duckdb.DuckDBPyConnection, pack: CriteriaPack) -> bool:
    return _first_days(con, pack) == "year"


def _first_days(con: duckdb.DuckDBPyConnection, pack: CriteriaPack) -> str | None:
    """`year` when every dated row in scope falls in a January, over two years or more (bare years read at a finer
    grain); `quarter` when every one falls on the first day of a month, over two quarters or more, the months 3
    apart (quarters dated by a month's start, `2005-03-01`); `month` when every one falls on the first day of a
    month, over two months or more (months, `Mar-2018` or a Parquet column of month starts, read at a day grain);
    else None. By the week, a year's row lies in the week holding 1 January, which may begin in December (trial 94:
    hawks dated by a bare year, read by the week, each in 1 January's week, 2002-12-30's for 2003's, and check said
    ok): that week's last day is in January's first 7 days. (Months by the week lie 4 to 5 weeks apart:
    `_coarser_rows`.) Each figure is one of the periods' own: it is asked of the distinct periods, not of every
    row."""
    period = shapes.PERIOD
    end = f"({period} + INTERVAL 6 DAY)"  # a week's last day
    sql = (f"SELECT count(DISTINCT year({period})), max(month({period})), "
           f"count(DISTINCT date_trunc('month', {period})), max(day({period})), "
           f"count(DISTINCT month({period}) % 3), count(DISTINCT year({end})), max(month({end})), max(day({end})) "
           f"FROM (SELECT DISTINCT {period} FROM {TYPED} WHERE {shapes.IN_SCOPE} AND {period} IS NOT NULL)")
    ((years, month, months, day, in_quarter, week_years, week_month, week_day),) = run(con, pack, sql, {}).rows()
    if years and years >= 2 and month == 1:
        return "year"
    if pack.grain.name == "week" and week_years and week_years >= 2 and week_month == 1 and week_day <= 7:
        return "year"
    if not (months and months >= 2 and day == 1):
        return None
    return "quarter" if in_quarter == 1 else "month"


@dataclass(frozen=True)
class CoarserRows:
    """A panel whose every entity's rows fall one in each period of a coarser grain, period after period, though
    no one number of the pack's periods lies between them (`_coarser_rows`): months read by the week, 4 or 5 weeks
    apart."""

    grain: str
    """The coarser grain the rows come in."""
    steps: tuple[int, int]
    """The fewest and the most of the pack's periods between an entity's consecutive rows."""
    example: tuple[str, list[date]]
    """The entity with the most rows, and its latest three periods."""


_ONE_ROW_EACH = 0.8
"""The share of an entity's steps between rows that must be exactly one period of the coarser grain (the rest
longer: a month missing here and there)."""


def _coarser_rows(con: duckdb.DuckDBPyConnection, pack: CriteriaPack) -> CoarserRows | None:
    """The finest grain coarser than the pack's whose periods hold one row of each entity, period after period,
    when no row lies a period of the pack's grain after another (trial 32: AirPassengers' months by `grain: week`,
    4 or 5 weeks apart, or R's decimal years by `grain: day`, every window finding one row and each metric a gap
    while check said ok; `check.periods.grain_finer_than_rows` needs one step that divides all, and a snapshot
    cut to the windows' reach, 15 weeks, holds too few rows to judge). A week's rows are placed by its Sunday, so
    a month's first day read in the week before it is still that month's. Panels and events (trial 102: PC price
    listings dated by their month's first day, read by the week, were told `min_rows: 1` for every metric, each
    window of 3 weeks holding one month's listings at most); None otherwise."""
    grain = pack.grain.name
    if pack.source.shape not in ("panel", "events") or grain == "year":
        return None
    shift = "6" if grain == "week" else "0"
    coarser = GRAINS[GRAINS.index(grain) + 1:]
    columns = ", ".join(
        f"count(*) FILTER (WHERE date_trunc('{g}', p + {shift}) = date_trunc('{g}', prev + {shift})), "
        f"count(*) FILTER (WHERE date_trunc('{g}', prev + {shift}) + INTERVAL 1 {g} = date_trunc('{g}', p + {shift}))"
        for g in coarser)
    dated = f"{shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL AND {shapes.PERIOD} IS NOT NULL"

    def steps_among(entities: str) -> str:
        return f"""
            WITH r AS (SELECT DISTINCT {shapes.ENTITY} AS e, {shapes.PERIOD}::DATE AS p FROM {TYPED}
                       WHERE {dated}{entities}),
                 s AS (SELECT e, p, lag(p) OVER (PARTITION BY e ORDER BY p) AS prev FROM r)
            SELECT count(prev), min(date_diff('{grain}', prev, p)), max(date_diff('{grain}', prev, p)), {columns}
            FROM s WHERE prev IS NOT NULL"""

    # a few entities' rows first: rows one period apart there (a panel read at its own grain, nearly every one)
    # settle it without sorting every row by entity and period (0.4 s of 2M daily rows)
    few = f" AND {shapes.ENTITY} IN (SELECT DISTINCT {shapes.ENTITY} FROM {TYPED} WHERE {dated} ORDER BY 1 LIMIT 50)"
    (_, fewest, *_) = run(con, pack, steps_among(few), {}).row(0)
    if fewest is not None and fewest < 2:
        return None
    steps, fewest, most, *counts = run(con, pack, steps_among(""), {}).row(0)
    if not steps or steps < 4 or fewest < 2:
        return None
    for i, g in enumerate(coarser):
        shared, next_one = counts[2 * i], counts[2 * i + 1]
        if shared or next_one < _ONE_ROW_EACH * steps:
            continue  # (two rows in one of its periods, or rows some of its periods apart: a coarser one, perhaps)
        example = run(con, pack, f"""
            SELECT {shapes.ENTITY}, list(DISTINCT {shapes.PERIOD}::DATE ORDER BY {shapes.PERIOD}::DATE DESC)[1:3]
            FROM {TYPED} WHERE {dated} GROUP BY 1 ORDER BY count(DISTINCT {shapes.PERIOD}) DESC, 1 LIMIT 1""",
                      {}).row(0)
        return CoarserRows(grain=g, steps=(int(fewest), int(most)),
                           example=(str(example[0]), sorted(example[1])))
    return None


def visible_rows(pack: CriteriaPack, as_of: date) -> int:
    """Source rows in scope that a night on `as_of` sees: published by then, or of no parseable period (those
    are quarantined, and counted among what the night read)."""
    return source_facts(pack, as_of).tables[0].visible


@dataclass(frozen=True)
class ColumnRange:
    """A bounded column's finite numbers among the rows a night sees: what `check` holds its `bounds` against."""

    numbers: int
    least: float | None
    greatest: float | None
    outside: int
    """Numbers outside the column's bounds (each cell refused: its row quarantined)."""
    refused_entities: int = 0
    """Entities with 3 numbers or more, every one outside the bounds (none of their rows is ever seen)."""
    refused_example: tuple[str, int, float, float] | None = None
    """The first such entity: its id, its numbers, the least and the greatest."""


@dataclass(frozen=True)
class TableFacts:
    """What `opportunity check` counts over one table's typed rows (the main source's or a joined table's)."""

    rows: int
    in_scope: int
    """Rows `where` keeps."""
    dated: int
    """Rows in scope with an entity and a period."""
    published: int
    """Dated rows with a publication date (all of them but those whose `published_column` cell is no date)."""
    visible: int
    """Rows in scope a night on as_of sees: published by then, or with no publication date (refused, and counted
    among what the night read)."""
    first_published: date | None
    """When the first dated row is published."""
    early: int
    """Dated rows seen by as_of that were published before their period ended (a look-ahead, for a panel), or, for
    a snapshot or events under a `period_column` (`shapes.observed_first`), before their own moment."""
    seen_dated: int
    """Dated rows seen by as_of with a publication date: what `early` is counted among."""
    early_example: tuple[date, date] | None
    """An early row's (period, publication date); (its moment's day, publication date) for `shapes.observed_first`."""
    entities: int
    """Entities among the dated rows seen by as_of (approximate: a HyperLogLog count, a cheap pass over millions)."""
    texts: dict[str, tuple[int, int]]
    """Per numeric `where` condition's key under the source (`shapes.numeric_conditions`): its column's cells that
    are text, not numbers, and its cells with a value among the rows it is tested on (a column mostly empty, a
    storm's category, is judged by the cells it has)."""
    ranges: dict[str, ColumnRange] = field(default_factory=dict)
    """Per column with `bounds`, its numbers among the rows the night sees (`visible`), inside the bounds or not."""
    seen_keys: int = 0
    """Entity-periods among the dated rows seen by as_of (by their 64-bit hash): `seen_dated` less the
    revisions, under `published_column`."""
    periods: tuple[date, date] | None = None
    """The first and the last period of the dated rows seen by as_of (None without any)."""
    unseen: tuple[date, date] | None = None
    """The first period of the dated rows not yet published by as_of, and the day its first such row is (None when
    every row is): a joined table published later than the source (trial 27)."""
    early_last: date | None = None
    """The latest period of an `early` row (None without any): the night's latest period when a few rows published
    before their period ends are all it has (trial 79)."""
    revised: int = 0
    """Dated rows seen by as_of that a later row of their event revises (`source.event_id`), each read in its place:
    `seen_dated` less the events the night counts."""


@dataclass(frozen=True)
class SourceFacts:
    tables: list[TableFacts]
    """The main source's, then each joined table's."""
    first_days: str | None
    """`_first_days`: the coarser grain whose first day every dated row of the main source falls on, if any."""
    coarser_rows: CoarserRows | None = None
    """`_coarser_rows`: a panel's rows one in each period of a coarser grain, if so."""
    copies: tuple[int, int, int] | None = None
    """`_copies`: an events source whose every row appears a multiple of k times (k >= 2) in every column read: (k,
    rows, distinct rows); None otherwise."""
    repeats: tuple[int, int] | None = None
    """An events source's (rows, distinct rows) the night sees, equal in every column read; None for another shape."""
    held: list[tuple[date, int]] = field(default_factory=list)
    """`_entities_by_period`: each period of the main source's dated rows the night sees, earliest first, and how
    many entities have a row in it."""


def source_facts(pack: CriteriaPack, as_of: date) -> SourceFacts:
    """The counts `check` reads before a night's snapshot, over the typed rows, in one read of the source. The main
    source's keys seen are its entities by period summed (`_entities_by_period` counts them already)."""
    with opened(pack) as (con, _):
        held = _entities_by_period(con, pack, as_of)
        tables = [_table_facts(con, pack, pack.source, TYPED, as_of, keys=sum(n for _, n in held)),
                  *(_table_facts(con, pack, j, join_rows(i), as_of) for i, j in enumerate(pack.source.join))]
        first_days = _first_days(con, pack)
        coarser = _coarser_rows(con, pack) if first_days is None else None
        sizes = _row_sizes(con, pack, as_of) if pack.source.shape == "events" else None
    return SourceFacts(tables=tables, first_days=first_days, coarser_rows=coarser, held=held,
                       copies=None if sizes is None else _copies_of(sizes),
                       repeats=None if sizes is None else (sum(n * groups for n, groups in sizes),
                                                           sum(groups for _, groups in sizes)))


def _entities_by_period(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, as_of: date) -> list[tuple[date, int]]:
    """Each period of a dated, well-formed row of the main source published by `as_of`, earliest first, and how
    many entities have a row in it."""
    sql = (f"SELECT {shapes.PERIOD}::DATE, count(DISTINCT {shapes.ENTITY}) FROM {TYPED} WHERE {shapes.IN_SCOPE} "
           f"AND {shapes.ENTITY} IS NOT NULL AND {shapes.PERIOD} IS NOT NULL AND {shapes.PUBLISHED} <= $as_of::DATE "
           "GROUP BY 1 ORDER BY 1")
    return [(period, int(n)) for period, n in run(con, pack, sql, {"as_of": as_of}).rows()]


def copied_rows(pack: CriteriaPack, as_of: date) -> tuple[int, int, int] | None:
    """`_copies` of the main source whatever its shape: a panel or snapshot appended to itself has every key's rows
    refused as duplicated keys, and the copies, not the key, are the fault (`check` asks only when most rows the
    night reads are refused so)."""
    with opened(pack) as (con, _):
        return _copies(con, pack, as_of)


_FEWEST_COPIED = 10
"""Fewest distinct rows, each repeated, before a source counts as copied throughout (a few events may agree)."""


def _copies(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, as_of: date) -> tuple[int, int, int] | None:
    """`_copies_of` the rows the night sees."""
    return _copies_of(_row_sizes(con, pack, as_of))


def _row_sizes(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, as_of: date) -> list[tuple[int, int]]:
    """(n, groups): how many groups of rows equal in every column read the night sees have n rows."""
    visible = f"{shapes.IN_SCOPE} AND ({shapes.PUBLISHED} IS NULL OR {shapes.PUBLISHED} <= $as_of::DATE)"
    sizes = run(con, pack, f"""
        SELECT n, count(*) AS groups FROM (
            SELECT count(*) AS n FROM (SELECT hash(*COLUMNS(* EXCLUDE ({ROW}))) AS h FROM {TYPED} WHERE {visible})
            GROUP BY h)
        GROUP BY n""", {"as_of": as_of}).rows()
    return [(int(n), int(groups)) for n, groups in sizes]


def _copies_of(sizes: list[tuple[int, int]]) -> tuple[int, int, int] | None:
    """(k, rows, distinct rows) where every row of a source the night sees appears a multiple of k >= 2
    times, equal in every column read (a file appended to itself: each event counted k times). Two real events may
    agree in the few columns a pack reads, but then some rows appear once, or an odd number of times: it takes every
    group of equal rows to share a factor."""
    factor = math.gcd(*(n for n, _ in sizes)) if sizes else 0
    distinct = sum(groups for _, groups in sizes)
    if factor < 2 or distinct < _FEWEST_COPIED:
        return None
    return factor, sum(n * groups for n, groups in sizes), distinct


def _table_facts(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, spec: SourceSpec, table: str,
                 as_of: date, keys: int | None = None) -> TableFacts:
    """`table`'s counts in one pass; `keys`: its distinct keys (entity, period) seen, if the caller has them (else
    they are counted here)."""
    entity, period, published, scope = shapes.ENTITY, shapes.PERIOD, shapes.PUBLISHED, shapes.IN_SCOPE
    dated = f"{scope} AND {entity} IS NOT NULL AND {period} IS NOT NULL"
    seen = f"{dated} AND {published} <= $as_of::DATE"
    observed = shapes.observed_first(spec)  # rows published before they happened, else before their period ends
    given = "__published_given" if shapes.period_end_first(spec) else published  # (read from the period's end)
    early = f"{seen} AND __published_given < {shapes.OBSERVED}" if observed else \
        f"{seen} AND {given} < {Grain(spec.grain).sql_end(period)}"  # (a join's own grain: a year ends in December)
    example = f"[{shapes.OBSERVED}, __published_given]" if observed else f"[{period}, {given}]"
    conditions = shapes.numeric_conditions(spec)
    texts = "".join(f", count({_q(column)}) FILTER (WHERE {'true' if key.startswith('where.') else scope} AND "
                    f"try_cast({_q(column)} AS DOUBLE) IS NULL) AS __texts_{i}, count({_q(column)}) FILTER (WHERE "
                    f"{'true' if key.startswith('where.') else scope}) AS __compared_{i}"
                    for i, (key, _, column) in enumerate(conditions))
    bounded = [c for c in shapes.cell_columns(spec) if c in spec.bounds]
    visible = f"{scope} AND ({published} IS NULL OR {published} <= $as_of::DATE)"
    for i, column in enumerate(bounded):
        value = shapes.cell(column)
        number = f"{visible} AND isfinite({value})"
        outside = shapes.outside_bounds_sql(spec, column) or "false"
        texts += (f", count(*) FILTER (WHERE {number}) AS __numbers_{i}, min({value}) FILTER (WHERE {number}) "
                  f"AS __least_{i}, max({value}) FILTER (WHERE {number}) AS __greatest_{i}, count(*) FILTER "
                  f"(WHERE {number} AND ({outside})) AS __outside_{i}")
    counted = "NULL" if keys is not None else f"count(DISTINCT hash({entity}, {period})) FILTER (WHERE {seen})"
    row = run(con, pack, f"""
        SELECT count(*) AS __rows, count(*) FILTER (WHERE {scope}) AS __in_scope,
               count(*) FILTER (WHERE {dated}) AS __dated,
               count(*) FILTER (WHERE {dated} AND {published} IS NOT NULL) AS __published,
               count(*) FILTER (WHERE {scope} AND ({published} IS NULL OR {published} <= $as_of::DATE)) AS __visible,
               min({published}) FILTER (WHERE {dated}) AS __first, count(*) FILTER (WHERE {early}) AS __early,
               count(*) FILTER (WHERE {seen}) AS __seen,
               min({example}) FILTER (WHERE {early}) AS __example,
               approx_count_distinct({entity}) FILTER (WHERE {seen}) AS __entities{texts},
               max({period}) FILTER (WHERE {early}) AS __early_last,
               min({period}) FILTER (WHERE {seen}) AS __first_period,
               max({period}) FILTER (WHERE {seen}) AS __last_period,
               {counted} AS __keys,
               min([{period}, {published}]) FILTER (WHERE {dated} AND {published} > $as_of::DATE) AS __unseen
        FROM {table}""", {"as_of": as_of}).row(0)
    example, ranges = row[8], 10 + 2 * len(conditions)  # (the bounded columns' four figures follow the texts')
    refused = {column: _refused_entities(con, pack, spec, table, column, visible, as_of)
               for i, column in enumerate(bounded) if row[ranges + 4 * i + 3]}
    return TableFacts(rows=row[0], in_scope=row[1], dated=row[2], published=row[3], visible=row[4],
                      first_published=row[5], early=row[6], seen_dated=row[7],
                      early_example=(example[0], example[1]) if example else None,
                      entities=min(row[9] or 0, row[7]),  # an estimate: never more ids than rows
                      texts={key: (row[10 + 2 * i], row[11 + 2 * i]) for i, (key, _, _) in enumerate(conditions)},
                      ranges={column: _column_range(row[ranges + 4 * i:ranges + 4 * i + 4], refused.get(column))
                              for i, column in enumerate(bounded)},
                      seen_keys=min((row[-2] if keys is None else keys) or 0, row[7]),
                      periods=None if row[-4] is None else (row[-4], row[-3]),
                      unseen=None if row[-1] is None else (row[-1][0], row[-1][1]),
                      early_last=row[-5],
                      revised=_revised(con, pack, spec, table, seen, as_of))


def _revised(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, spec: SourceSpec, table: str, seen: str,
             as_of: date) -> int:
    """The `seen` rows of `table` that a later row of their event revises (`TableFacts.revised`), in any scope (a
    claim withdrawn); 0 without `source.event_id` (no read)."""
    if not spec.event_id_columns:
        return 0
    latest = shapes.latest_of_events_sql(spec, table, "$as_of::DATE", "current_date")
    ((revised,),) = run(con, pack, f"""
        SELECT count(*) FROM {table} JOIN ({latest}) e USING ({shapes.EVENT})
        WHERE {seen} AND e.{shapes.LATEST} <> {ROW}""", {"as_of": as_of}).rows()
    return int(revised)


def _column_range(figures: tuple[Any, ...], refused: tuple[int, tuple[str, int, float, float] | None] | None
                  ) -> ColumnRange:
    numbers, least, greatest, outside = figures
    entities, example = refused or (0, None)
    return ColumnRange(numbers, least, greatest, outside, refused_entities=entities, refused_example=example)


def _refused_entities(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, spec: SourceSpec, table: str, column: str,
                      visible: str, as_of: date) -> tuple[int, tuple[str, int, float, float] | None]:
    """The entities of `table` with 3 numbers or more of `column` visible, every one outside its bounds, and the
    first of them (id, numbers, least, greatest): read only where some number lies outside. Fewer are a bad record
    or two of a small entity, quarantined as such."""
    value = shapes.cell(column)
    outside = shapes.outside_bounds_sql(spec, column) or "false"
    refused = run(con, pack, f"""
        SELECT {shapes.ENTITY} AS entity, count(*) AS numbers, min({value}) AS least, max({value}) AS greatest
        FROM {table} WHERE {visible} AND {shapes.ENTITY} IS NOT NULL AND isfinite({value})
        GROUP BY {shapes.ENTITY} HAVING count(*) >= 3 AND bool_and({outside}) ORDER BY numbers DESC, entity""",
                   {"as_of": as_of})
    return refused.height, refused.row(0) if refused.height else None
