"""The point-in-time source: one DuckDB query per night over the pack's source (any format and shape).

The query derives `published_at` for every row and keeps only rows with `published_at <= as_of`
(in the SQL, before anything else sees them; `opportunity_assets/sources/shapes.py`). Bad input is quarantined
with a reason, never repaired: a row with an unparseable period, a missing entity id or a duplicated key is
refused whole; a non-numeric, negative or infinite cell becomes that cell's gap (the row's other columns are read)
and its row is listed with the reason. The pack's metrics are computed in the same query, over that as_of-filtered
history, in periods of the pack's grain.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import dagster as dg
import duckdb
import polars as pl

from opportunity_assets.criteria import CriteriaPack, MetricSpec
from opportunity_assets.periods import GRAINS, Grain
from opportunity_assets.sources import shapes
from opportunity_assets.sources.csv_rows import Rejected
from opportunity_assets.sources.formats import ROW, TYPED, describe_location, join_label, join_rows, literal
from opportunity_assets.sources.formats import quote_identifier as _q
from opportunity_assets.sources.spec import SourceSpec
from resources._source_connection import SourceError, file_key, kept_open, opened, release_kept

__all__ = [
    "DuplicateFacts",
    "PointInTimeSource",
    "SourceError",
    "SourceFacts",
    "SourceSnapshot",
    "TableFacts",
    "duplicate_facts",
    "earlier_snapshots",
    "january_only",
    "kept_open",
    "publication_span",
    "read_snapshot",
    "row_counts",
    "source_facts",
    "telling_apart",
    "value_counts",
    "visible_rows",
]


@dataclass(frozen=True)
class SourceSnapshot:
    """What the scanner may know on `as_of`, and nothing else."""

    as_of: date
    anchor_period: date | None
    """Latest period (its first day) published by as_of; window period 0. None if nothing is published."""
    history: pl.DataFrame
    """Visible valid rows within the pack's history reach (metric windows, integrity yardstick): entity_id,
    entity_name, period, published_at,
    periods_ago, source_row and the pack's columns; for events, events_read and events_repeated (the period's rows,
    and those repeating another in every column read: `shapes.EVENTS_REPEATED`)."""
    metrics: pl.DataFrame
    """One row per visible entity: entity_id, entity_name and one column per pack metric (null = gap)."""
    quarantined: pl.DataFrame
    """Visible rows refused: source_row, entity, period, reason."""


def _metric_sql(name: str, spec: MetricSpec) -> str:
    lo, hi = spec.window
    in_window = f"{_AGO} BETWEEN {lo} AND {hi}"
    if spec.agg == "coverage":
        columns = spec.columns or []
        filled = " + ".join(f"count({_q(c)}) FILTER (WHERE {in_window})" for c in columns)
        return f"({filled}) / {float(len(columns) * (hi - lo + 1))} AS {_q(name)}"
    column = _q(spec.column or "")
    if spec.agg == "age_days":
        return (f"datediff('day', max({shapes.PUBLISHED}) FILTER (WHERE {column} IS NOT NULL), {shapes.AS_OF})"
                f"::DOUBLE AS {_q(name)}")
    count = f"count({column}) FILTER (WHERE {in_window})"
    value = {
        # compensated sums: the same value to the last bit whatever order the plan feeds the rows in
        "sum": f"fsum({column}) FILTER (WHERE {in_window})",
        "avg": f"favg({column}) FILTER (WHERE {in_window})",
        "min": f"min({column}) FILTER (WHERE {in_window})",
        "max": f"max({column}) FILTER (WHERE {in_window})",
        "last": f"arg_min({column}, {_AGO}) FILTER (WHERE {in_window} AND {column} IS NOT NULL)",
    }[spec.agg]
    return f"CASE WHEN {count} >= {spec.required_rows} THEN ({value})::DOUBLE END AS {_q(name)}"


_AGO = "__ago"
"""Periods back from the night's latest published period (the history's `periods_ago`)."""


def _read(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, as_of: date, today: date
          ) -> tuple[date | None, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """`_night` on `con`, which is left as it was given (a kept connection serves the next read)."""
    try:
        return _night(con, pack, as_of, today)
    finally:
        judged = ["judged", *(f"judged_{i}" for i in range(len(pack.source.join)))]
        for view in ("hist", *judged):
            con.execute(f"DROP VIEW IF EXISTS {view}")
        for table in ("panel", "slugs", *(f"{name}_duplicates" for name in judged)):
            con.execute(f"DROP TABLE IF EXISTS {table}")
        con.execute(f"SET threads = {os.cpu_count() or 1}")


def _night(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, as_of: date, today: date
           ) -> tuple[date | None, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The night's anchor, metrics, history and quarantine, over the typed rows `_source_connection` made: the rows
    judged (a view each: one pass over the typed rows, with the rare duplicated keys found first), the panel `hist`
    over them, then one SELECT per result, each with its own column names (a metric may share a
    column's name). A panel of rows is a view too (a table would hold the rows a second time); a panel of
    events is summed once into a table (it is smaller than the events). Sums run on one thread: parallel partial
    sums combine in a varying order, and a night must be reproducible to the last bit (a verdict can sit on a
    threshold); everything else runs on every core."""
    src, grain = pack.source, pack.grain
    con.execute(f"SET VARIABLE as_of = DATE '{as_of.isoformat()}'")
    con.execute(f"SET VARIABLE today = DATE '{today.isoformat()}'")
    _judged(con, pack, src, TYPED, "judged")
    joins = []
    for i, joined in enumerate(src.join):
        _judged(con, pack, joined, join_rows(i), f"judged_{i}")
        joins.append(_panel(joined, grain, f"judged_{i}"))
    own = _panel(src, grain, "judged")
    if joins:
        _run(con, pack, f"CREATE OR REPLACE TEMP TABLE slugs AS {shapes.slugs_sql(TYPED)}", {})
    panel = own if not joins else f"({shapes.joined_sql(src, own, joins, 'slugs')})"
    summed = any(s.shape == "events" for s in (src, *src.join))
    if summed:
        con.execute("SET threads = 1")  # events are summed into the panel: one fixed order
        _run(con, pack, f"CREATE TEMP TABLE panel AS SELECT * FROM {panel}", {})
        panel = "panel"
    ((anchor,),) = _run(con, pack, f"SELECT max({shapes.PERIOD}) FROM {panel}", {}).rows()
    con.execute(f"SET VARIABLE anchor = {'NULL' if anchor is None else literal(anchor.isoformat())}::DATE")
    _run(con, pack, f"CREATE TEMP VIEW hist AS SELECT p.*, "
                    f"{grain.sql_between('p.' + shapes.PERIOD, 'getvariable(' + literal('anchor') + ')::DATE')} "
                    f"AS {_AGO} FROM {panel} p", {})
    values = "".join(f", {_q(c)}" for c in pack.columns)
    if src.shape == "events":
        values += f", {shapes.EVENTS_READ} AS events_read, {shapes.EVENTS_REPEATED} AS events_repeated"
    history = _run(con, pack, f"""
        SELECT {shapes.ENTITY} AS entity_id, {shapes.NAME} AS entity_name, {ROW} AS source_row,
               {shapes.PERIOD} AS period, {shapes.PUBLISHED} AS published_at, {_AGO} AS periods_ago{values}
        FROM hist WHERE {_AGO} <= {pack.history_reach}""", {})
    con.execute("SET threads = 1")  # sums, and the quarantine's order, from here on: one fixed order
    aggregated = [_metric_sql(name, spec) for name, spec in pack.metrics.items() if spec.agg != "derived"]
    metrics = _run(con, pack, f"SELECT {shapes.ENTITY} AS entity_id, any_value({shapes.NAME}) AS entity_name, "
                              f"{', '.join(aggregated)} FROM hist GROUP BY {shapes.ENTITY}", {})
    refused = [("judged", "")] + [(f"judged_{i}", f"{join_label(pack, j)}: ") for i, j in enumerate(src.join)]
    quarantine = _run(con, pack, " UNION ALL ".join(f"""
        SELECT {ROW} AS source_row, {shapes.ENTITY} AS entity_id, {shapes.PERIOD} AS period,
               {literal(prefix)} || coalesce({shapes.REASON}, {shapes.CELL_REASON}
                                                     || ' (that cell is a gap; the row is kept)') AS reason
        FROM {table} WHERE {shapes.REASON} IS NOT NULL OR {shapes.CELL_REASON} IS NOT NULL"""
                                                 for table, prefix in refused), {})
    return anchor, metrics, history, quarantine


def _joined_rows_by_key(pack: CriteriaPack, quarantine: pl.DataFrame, metrics: pl.DataFrame) -> pl.DataFrame:
    """The quarantine with each joined table's row under the main source's key of its entity (a joined table's ids
    are slugs, `shapes.rows_sql`: its `AL` is the main source's `al`), so that the candidate it concerns sees it."""
    labels = tuple(f"{join_label(pack, j)}: " for j in pack.source.join)
    if not labels or quarantine.is_empty():
        return quarantine
    keys: dict[str, str] = {}
    for key in sorted(metrics["entity_id"].drop_nulls().to_list(), reverse=True):  # the first key of a slug wins
        keys[shapes.entity_slug(key)] = key
    joined = pl.col("reason").str.starts_with(labels[0])
    for label in labels[1:]:
        joined = joined | pl.col("reason").str.starts_with(label)
    slug = pl.col("entity_id").map_elements(shapes.entity_slug, return_dtype=pl.Utf8)
    return quarantine.with_columns(
        pl.when(joined & pl.col("entity_id").is_not_null()).then(slug.replace(keys)).otherwise(pl.col("entity_id"))
        .alias("entity_id"))


def _panel(spec: SourceSpec, grain: Grain, judged: str) -> str:
    """The panel of a spec's judged rows, as a subquery (`shapes.panel_sql` over `shapes.seen_sql`)."""
    return f"(WITH seen AS ({shapes.seen_sql(spec, judged)}) SELECT * FROM ({shapes.panel_sql(spec, grain, 'seen')}))"


def _judged(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, spec: SourceSpec, typed: str, name: str) -> None:
    """The view `name`: the rows of the table `typed` judged for the night (`shapes.judged_sql`)."""
    duplicates = shapes.duplicates_sql(spec, typed)
    if duplicates is not None:
        _run(con, pack, f"CREATE TEMP TABLE {name}_duplicates AS {duplicates}", {})
    judged = shapes.judged_sql(spec, pack.grain, typed, None if duplicates is None else f"{name}_duplicates")
    _run(con, pack, f"CREATE TEMP VIEW {name} AS {judged}", {})


def _with_derived(pack: CriteriaPack, metrics: pl.DataFrame) -> pl.DataFrame:
    """The aggregated metrics with the derived ones computed beside them, by code (`CriteriaPack.with_derived`)."""
    aggregated = [name for name, spec in pack.metrics.items() if spec.agg != "derived"]
    frame = metrics.select("entity_id", "entity_name", *aggregated)
    if not pack.derived_order:
        return frame
    rows = [{**row, **pack.with_derived({n: row[n] for n in aggregated})} for row in frame.iter_rows(named=True)]
    return pl.DataFrame(rows, schema={"entity_id": pl.Utf8, "entity_name": pl.Utf8,
                                      **dict.fromkeys(pack.metrics, pl.Float64)}).select("entity_id", "entity_name",
                                                                                         *pack.metrics)


class PointInTimeSource(dg.ConfigurableResource):
    """Reads a pack's source as it was known on a date. Stateless: one short DuckDB connection per read."""

    def read(self, pack: CriteriaPack, as_of: date) -> SourceSnapshot:
        return read_snapshot(pack, as_of)

    def problems(self, pack: CriteriaPack, as_of: date) -> list[str]:
        """What `opportunity check` finds wrong with the pack on this night, one line each naming the key: the
        night's own read and scan are the check's (both are kept for the process)."""
        from opportunity_assets.sources.check import check_pack

        return check_pack(pack, as_of, with_facts=False).problems


def _run(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, sql: str, params: dict[str, Any]) -> pl.DataFrame:
    try:
        relation = con.sql(sql, params=params or None)
        if relation is None:  # a statement (CREATE ... AS): no rows
            return pl.DataFrame()
        frame = pl.from_arrow(relation.to_arrow_table())  # columnar, no Python object per cell
        assert isinstance(frame, pl.DataFrame)
        return frame
    except duckdb.Error as exc:
        raise SourceError(f"{describe_location(pack)} could not be read: {str(exc).splitlines()[0]}") from None


def publication_span(pack: CriteriaPack, up_to: date) -> tuple[date, date] | None:
    """The first and the latest publication date of a dated, well-formed row whose period starts by `up_to`: the
    nights the data supports lie between them. None if there is no such row."""
    published = shapes.PUBLISHED
    sql = (f"SELECT min({published}), max({published}) FROM {TYPED} WHERE {shapes.IN_SCOPE} "
           f"AND {shapes.ENTITY} IS NOT NULL AND {published} IS NOT NULL AND {shapes.PERIOD} <= $up_to::DATE")
    with opened(pack) as (con, _):
        first, last = _run(con, pack, sql, {"up_to": up_to}).row(0)
    return None if first is None else (first, last)


def first_period(pack: CriteriaPack, as_of: date) -> date | None:
    """The earliest period of a dated row in scope published by `as_of`: where the whole history begins, which the
    night's snapshot, cut at `history_reach` periods, does not tell (None without such a row)."""
    sql = (f"SELECT min({shapes.PERIOD}) FROM {TYPED} WHERE {shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL "
           f"AND {shapes.PUBLISHED} <= $as_of::DATE")
    with opened(pack) as (con, _):
        (first,) = _run(con, pack, sql, {"as_of": as_of}).row(0)
    return first


def row_counts(pack: CriteriaPack) -> tuple[int, int]:
    """The source's rows, and those in scope (`source.where`), whatever their dates."""
    with opened(pack) as (con, _):
        ((rows, in_scope),) = _run(con, pack, f"SELECT count(*), count(*) FILTER (WHERE {shapes.IN_SCOPE}) "
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
    else None."""
    period = shapes.PERIOD
    sql = (f"SELECT count(DISTINCT year({period})), max(month({period})), "
           f"count(DISTINCT date_trunc('month', {period})), max(day({period})), "
           f"count(DISTINCT month({period}) % 3) FROM {TYPED} WHERE {shapes.IN_SCOPE} AND {period} IS NOT NULL")
    ((years, month, months, day, in_quarter),) = _run(con, pack, sql, {}).rows()
    if years and years >= 2 and month == 1:
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
    while check said ok; `check_periods.grain_finer_than_rows` needs one step that divides all, and a snapshot
    cut to the windows' reach, 15 weeks, holds too few rows to judge). A week's rows are placed by its Sunday, so
    a month's first day read in the week before it is still that month's. Panels only; None otherwise."""
    grain = pack.grain.name
    if pack.source.shape != "panel" or grain == "year":
        return None
    shift = "6" if grain == "week" else "0"
    coarser = GRAINS[GRAINS.index(grain) + 1:]
    columns = ", ".join(
        f"count(*) FILTER (WHERE date_trunc('{g}', p + {shift}) = date_trunc('{g}', prev + {shift})), "
        f"count(*) FILTER (WHERE date_trunc('{g}', prev + {shift}) + INTERVAL 1 {g} = date_trunc('{g}', p + {shift}))"
        for g in coarser)
    sql = f"""
        WITH r AS (SELECT DISTINCT {shapes.ENTITY} AS e, {shapes.PERIOD}::DATE AS p FROM {TYPED}
                   WHERE {shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL AND {shapes.PERIOD} IS NOT NULL),
             s AS (SELECT e, p, lag(p) OVER (PARTITION BY e ORDER BY p) AS prev FROM r)
        SELECT count(prev), min(date_diff('{grain}', prev, p)), max(date_diff('{grain}', prev, p)), {columns}
        FROM s WHERE prev IS NOT NULL"""
    steps, fewest, most, *counts = _run(con, pack, sql, {}).row(0)
    if not steps or steps < 4 or fewest < 2:
        return None
    for i, g in enumerate(coarser):
        shared, next_one = counts[2 * i], counts[2 * i + 1]
        if shared or next_one < _ONE_ROW_EACH * steps:
            continue  # (two rows in one of its periods, or rows some of its periods apart: a coarser one, perhaps)
        example = _run(con, pack, f"""
            SELECT {shapes.ENTITY}, list({shapes.PERIOD}::DATE ORDER BY {shapes.PERIOD} DESC)[1:3] FROM {TYPED}
            WHERE {shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL AND {shapes.PERIOD} IS NOT NULL
            GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1""", {}).row(0)
        return CoarserRows(grain=g, steps=(int(fewest), int(most)),
                           example=(str(example[0]), sorted(example[1])))
    return None


@dataclass(frozen=True)
class DuplicateFacts:
    """What the main source's duplicated keys have in common (`shapes.duplicate_groups_sql`), whatever the night:
    `check` names the key at fault from it."""

    groups: int
    """Keys held by more than one row in scope."""
    entities: int
    """Distinct ids among the rows in scope."""
    named_apart: int
    """Keys whose rows carry more than one name (`entity_name`): the id column does not tell entities apart."""
    finer: int
    """Keys whose rows' period values differ as written: a finer grain would tell them apart."""
    timed: bool
    """A duplicated moment has a time of day (a snapshot's observations)."""
    example: tuple[str, int, date, str | None, list[str]]
    """The key held by the most rows: its id, its rows, its period, its period as written (None without a period
    column) and up to four of its names (when the name is another column than the id, and they differ)."""


def names_per_entity(pack: CriteriaPack) -> pl.DataFrame:
    """Per entity of the main source's rows in scope: `entity_id`, how many `names` its rows carry, its `rows` and
    two names `shown` (its first and last, sorted: no list of a million events' names), as
    `check_entities.names_per_row` gives them for a panel's rows. An events panel carries one name per entity, so
    the check of a name column reads the events themselves."""
    sql = (f"SELECT {shapes.ENTITY} AS entity_id, count(DISTINCT {shapes.NAME})::BIGINT AS names, "
           f"count(*)::BIGINT AS rows, list_value(min({shapes.NAME}), max({shapes.NAME})) AS shown FROM {TYPED} "
           f"WHERE {shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL GROUP BY 1 ORDER BY 1")
    with opened(pack) as (con, _):
        return _run(con, pack, sql, {})


def duplicate_facts(pack: CriteriaPack, join: int | None = None) -> DuplicateFacts | None:
    """The main source's duplicated keys (or its joined table `join`'s), described (None for events, or no
    duplicated key at all)."""
    spec, table = (pack.source, TYPED) if join is None else (pack.source.join[join], join_rows(join))
    sql = shapes.duplicate_groups_sql(spec, table)
    if sql is None:
        return None
    with opened(pack) as (con, _):
        groups = _run(con, pack, f"SELECT * FROM ({sql}) ORDER BY __copies DESC, __names DESC, __entity, __written",
                      {})
        ((entities,),) = _run(con, pack, f"SELECT count(DISTINCT {shapes.ENTITY}) FROM {table} "
                                         f"WHERE {shapes.IN_SCOPE}", {}).rows()
    if groups.is_empty():
        return None
    first = groups.row(0, named=True)
    return DuplicateFacts(groups=groups.height, entities=int(entities),
                          named_apart=groups.filter(pl.col("__names") > 1).height,
                          finer=groups.filter(pl.col("__periods") > 1).height, timed=bool(groups["__timed"].any()),
                          example=(str(first["__entity"]), int(first["__copies"]), first["__period"],
                                   first["__written"],
                                   [str(n) for n in first["__some_names"] or []] if first["__names"] > 1 else []))


@dataclass(frozen=True)
class VintagePeriods:
    """Keys (entity, period) of a panel under `published_column` whose rows are of several periods as written
    (`shapes.periods_in_vintages_sql`): each row read as a revision of the coarser period."""

    keys: int
    """Entity-periods with rows in scope."""
    several: int
    """Those whose rows are of more than one period as written."""
    example: tuple[str, date, list[str]]
    """The first such key: its id, its period and up to four periods as written."""


def vintage_periods(pack: CriteriaPack) -> VintagePeriods | None:
    """The main source's `VintagePeriods`, None when it has none (no published column, or one period as written per
    key everywhere)."""
    sql = shapes.periods_in_vintages_sql(pack.source, TYPED)
    if sql is None:
        return None
    with opened(pack) as (con, _):
        keys = _run(con, pack, f"SELECT * FROM ({sql}) ORDER BY __periods DESC, __entity, __period", {})
    several = keys.filter(pl.col("__periods") > 1)
    if several.is_empty():
        return None
    first = several.row(0, named=True)
    return VintagePeriods(keys=keys.height, several=several.height,
                          example=(str(first["__entity"]), first["__period"], [str(w) for w in first["__written"]]))


_NO_COLUMN = "\x00"
"""A column no source has: asking for it makes the reader say which columns the source has (`source_columns`)."""
KEY_COMPLETIONS_TRIED = 12
"""Columns of the source `key_completions` tries at most (each a read of the source)."""


def _keyed_by(pack: CriteriaPack, columns: list[str]) -> CriteriaPack:
    """The pack with its main source's entity named by `columns` (nothing else changed, nothing validated)."""
    return pack.model_copy(update={"source": pack.source.model_copy(update={"entity_id": columns})})


def source_columns(pack: CriteriaPack) -> list[str]:
    """The main source's columns as its file or table has them (empty when the source cannot say)."""
    try:
        with opened(_keyed_by(pack, [*pack.source.entity_columns, _NO_COLUMN])):
            return []
    except SourceError as exc:
        return list(exc.present)


def _with_spec(pack: CriteriaPack, join: int | None, update: dict[str, Any]) -> CriteriaPack:
    """The pack with `update` made to its main source (`join` None) or to its joined table `join` (nothing else
    changed, nothing validated)."""
    src = pack.source
    if join is None:
        return pack.model_copy(update={"source": src.model_copy(update=update)})
    joins = [j.model_copy(update=update) if i == join else j for i, j in enumerate(src.join)]
    return pack.model_copy(update={"source": src.model_copy(update={"join": joins})})


TELLING_VALUES = 3
"""Values on either side from which a column tells rows apart by more than a code (a frequency `A` / `Q`): a row's
own number tells every row from every other."""


def telling_apart(pack: CriteriaPack, condition: str,
                  join: int | None = None) -> tuple[str, list[str], list[str]] | None:
    """A column of the main source (or of its joined table `join`) that does not date its rows, whose values on the
    typed rows in scope matching the SQL `condition` are none of its values on the other dated rows, each side of
    `TELLING_VALUES` values at most: a statistics office's frequency column ('A' on its annual rows, 'Q' on its
    quarters'), with both sides' values, sorted. None when no column does. Two reads of the source."""
    spec = pack.source if join is None else pack.source.join[join]
    try:
        with opened(_with_spec(pack, join, {"entity_id": [*spec.entity_columns, _NO_COLUMN]})):
            return None
    except SourceError as exc:
        tried = [c for c in exc.present if c not in spec.dated_columns][:KEY_COMPLETIONS_TRIED]
    if not tried:
        return None
    from opportunity_assets.sources.spec import Condition

    probe = _with_spec(pack, join, {"where": [*spec.where, *(Condition.model_validate({"column": c, "not_in": ["\x00"]})
                                                            for c in tried)]})
    listed = {c.column: text for _, c, text in shapes.listed_conditions(probe.source if join is None
                                                                         else probe.source.join[join])}
    table = TYPED if join is None else join_rows(join)
    dated = f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL"
    sides = ", ".join(f"list(DISTINCT {_q(listed[c])}) FILTER (WHERE {condition}), "
                      f"list(DISTINCT {_q(listed[c])}) FILTER (WHERE NOT ({condition}))" for c in tried)
    try:
        with opened(probe) as (con, _):
            (row,) = _run(con, probe, f"SELECT {sides} FROM {table} WHERE {dated}", {}).rows()
    except SourceError:
        return None
    for k, column in enumerate(tried):
        these, others = sorted(row[2 * k] or []), sorted(row[2 * k + 1] or [])
        if these and others and len(these) <= TELLING_VALUES and len(others) <= TELLING_VALUES \
                and not set(these) & set(others):
            return column, these, others
    return None


@dataclass(frozen=True)
class DatesBeside:
    """A column of the main source that no key reads, whose cells are dates (`dates_beside`): how many of the dated
    typed rows in scope carry one (`dated`), fall within their own period up to the moment it is read as known
    (`within`), and lie after that moment (`after`), with the latest such row's date, period and that moment."""

    column: str
    rows: int
    dated: int
    within: int
    after: int
    example: tuple[str, date, date] | None


def dates_beside(pack: CriteriaPack) -> list[DatesBeside]:
    """Each column of the main source (panel or events by the quarter or the year, dated by its period and the lag
    rule alone: no `published_column`, no `known_at`) that no key reads, `KEY_COMPLETIONS_TRIED` at most, held
    against the rows' periods: a column of dates is the moment each row happened, and one later than the moment its
    period is read as known is a look-ahead (trial 29: football matches dated by their season's first year, `Year:
    2007` for a match on 2008-05-17, read as known on 2008-01-30). Two reads of the source, so only where a period
    is long enough to be named for a season or a fiscal year that spans two (a month's rows are months)."""
    src = pack.source
    if src.published_column or src.known_at is not None or src.shape == "snapshot" or src.wide is not None \
            or pack.grain.name not in ("quarter", "year"):
        return []
    read = {*src.dated_columns, *src.entity_columns, *src.name_columns, *src.columns,
            *(a.column for a in src.aggregates.values() if a.column), *(c.column for c in src.where)}
    tried = [c for c in source_columns(pack) if c not in read][:KEY_COMPLETIONS_TRIED]
    if not tried:
        return []
    from opportunity_assets.sources.spec import Condition

    probe = _with_spec(pack, None, {"where": [*src.where, *(Condition.model_validate({"column": c, "not_in": ["\x00"]})
                                                          for c in tried)]})
    listed = {c.column: text for _, c, text in shapes.listed_conditions(probe.source)}
    moment = ("coalesce(try_cast({0} AS TIMESTAMP), try_cast(try_cast({0} AS TIMESTAMPTZ) AS TIMESTAMP), "
              "try_cast(try_cast({0} AS DATE) AS TIMESTAMP))")
    period, known = shapes.PERIOD, shapes.PUBLISHED
    parts = []
    for c in tried:
        at = moment.format(f"nullif(trim({_q(listed[c])}), '')")
        parts.append(f"count({at}), count(*) FILTER (WHERE {at} >= {period} AND {at} < {known} + INTERVAL 1 DAY), "
                     f"count(*) FILTER (WHERE {at} >= {known} + INTERVAL 1 DAY), "
                     f"arg_max([{_q(listed[c])}, {period}::VARCHAR, {known}::VARCHAR], {at}) "
                     f"FILTER (WHERE {at} >= {known} + INTERVAL 1 DAY)")
    dated = f"{shapes.IN_SCOPE} AND {period} IS NOT NULL AND {known} IS NOT NULL"
    try:
        with opened(probe) as (con, _):
            (row,) = _run(con, probe, f"SELECT count(*), {', '.join(parts)} FROM {TYPED} WHERE {dated}", {}).rows()
    except SourceError:
        return []
    found = []
    for k, column in enumerate(tried):
        n, within, after, latest = row[1 + 4 * k: 5 + 4 * k]
        example = (str(latest[0]).strip(), date.fromisoformat(latest[1][:10]), date.fromisoformat(latest[2][:10])) \
            if latest else None
        found.append(DatesBeside(column, int(row[0]), int(n), int(within), int(after), example))
    return found


def key_completions(pack: CriteriaPack) -> list[list[str]]:
    """Columns of the main source that `entity_id` lacks: with each beside it, no two rows in scope share an entity
    and a period, and entities still recur period after period (a row's own id is no entity). A panel keyed by
    state alone whose rows are of several industries names `[Industry]`; when no one column does, the first pair
    that does (`[gender, legal]` beside `state`: prisoners by sex and legal status). Empty for events (every row is
    an event)."""
    src = pack.source
    if src.shape == "events":
        return []
    tried = [c for c in source_columns(pack) if c not in src.read_columns][:KEY_COMPLETIONS_TRIED]
    found = [[column] for column in tried if _completes(pack, [column])]
    if found:
        return found
    pairs = list(itertools.combinations(tried, 2))[:KEY_PAIRS_TRIED]
    return next(([list(pair)] for pair in pairs if _completes(pack, list(pair))), [])


def names_as_values(pack: CriteriaPack, names: list[str], present: list[str]) -> tuple[str, list[str]] | None:
    """The column of the main source, among `present` (its file's columns), whose values hold the most of `names`
    (columns the pack lists that the file lacks), with those it holds: a long table (a row per value, named by that
    column) read as if it had a column each. None when no column holds any, or for events. One read of the source."""
    src = pack.source
    tried = [c for c in present if c not in src.read_columns][:KEY_COMPLETIONS_TRIED]
    if src.shape == "events" or src.long is not None or not tried or not names:
        return None
    from opportunity_assets.sources.spec import Condition

    probe = pack.model_copy(update={"source": src.model_copy(update={
        "columns": [], "signed": [], "bounds": {}, "wide": None, "join": [],
        "where": [Condition.model_validate({"column": c, "not_in": ["\x00"]}) for c in tried]})})
    listed = [text for _, _, text in shapes.listed_conditions(probe.source)]
    held = ", ".join(literal(n) for n in names)
    counts = " UNION ALL ".join(f"SELECT {i} AS k, list(DISTINCT {_q(text)}) AS v FROM {TYPED} WHERE {_q(text)} IN "
                                f"({held})" for i, text in enumerate(listed))
    try:
        with opened(probe) as (con, _):
            found = _run(con, probe, counts, {}).rows()
    except SourceError:
        return None
    best = max(found, key=lambda row: len(row[1] or []), default=None)
    if best is None or not best[1]:
        return None
    return tried[best[0]], [n for n in names if n in set(best[1])]


KEY_PAIRS_TRIED = 10
"""Pairs of columns `key_completions` tries at most when no one column completes the key (each a read)."""


def _completes(pack: CriteriaPack, columns: list[str]) -> bool:
    """Whether `columns` beside `entity_id` leave no two rows in scope sharing an entity and a period, with entities
    that still recur (at least two dated rows each, on average)."""
    keyed = _keyed_by(pack, [*pack.source.entity_columns, *columns])
    duplicates = shapes.duplicates_sql(keyed.source, TYPED)
    assert duplicates is not None
    dated = f"{shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL AND {shapes.PERIOD} IS NOT NULL"
    try:
        with opened(keyed) as (con, _):
            ((rows, entities, repeated),) = _run(con, keyed, f"""
                SELECT count(*) FILTER (WHERE {dated}), count(DISTINCT {shapes.ENTITY}) FILTER (WHERE {dated}),
                       (SELECT count(*) FROM ({duplicates})) FROM {TYPED}""", {}).rows()
    except SourceError:
        return False
    return bool(rows) and not repeated and 2 * entities <= rows


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


def source_facts(pack: CriteriaPack, as_of: date) -> SourceFacts:
    """The counts `check` reads before a night's snapshot, over the typed rows, in one read of the source."""
    with opened(pack) as (con, _):
        tables = [_table_facts(con, pack, spec, table, as_of) for spec, table in
                  [(pack.source, TYPED), *((j, join_rows(i)) for i, j in enumerate(pack.source.join))]]
        first_days = _first_days(con, pack)
        coarser = _coarser_rows(con, pack) if first_days is None else None
        sizes = _row_sizes(con, pack, as_of) if pack.source.shape == "events" else None
    return SourceFacts(tables=tables, first_days=first_days, coarser_rows=coarser,
                       copies=None if sizes is None else _copies_of(sizes),
                       repeats=None if sizes is None else (sum(n * groups for n, groups in sizes),
                                                           sum(groups for _, groups in sizes)))


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
    sizes = _run(con, pack, f"""
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
                 as_of: date) -> TableFacts:
    entity, period, published, scope = shapes.ENTITY, shapes.PERIOD, shapes.PUBLISHED, shapes.IN_SCOPE
    dated = f"{scope} AND {entity} IS NOT NULL AND {period} IS NOT NULL"
    seen = f"{dated} AND {published} <= $as_of::DATE"
    observed = shapes.observed_first(spec)  # rows published before they happened, else before their period ends
    early = f"{seen} AND __published_given < {shapes.OBSERVED}" if observed else \
        f"{seen} AND {published} < {pack.grain.sql_end(period)}"
    example = f"[{shapes.OBSERVED}, __published_given]" if observed else f"[{period}, {published}]"
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
    row = _run(con, pack, f"""
        SELECT count(*) AS __rows, count(*) FILTER (WHERE {scope}) AS __in_scope,
               count(*) FILTER (WHERE {dated}) AS __dated,
               count(*) FILTER (WHERE {dated} AND {published} IS NOT NULL) AS __published,
               count(*) FILTER (WHERE {scope} AND ({published} IS NULL OR {published} <= $as_of::DATE)) AS __visible,
               min({published}) FILTER (WHERE {dated}) AS __first, count(*) FILTER (WHERE {early}) AS __early,
               count(*) FILTER (WHERE {seen}) AS __seen,
               min({example}) FILTER (WHERE {early}) AS __example,
               approx_count_distinct({entity}) FILTER (WHERE {seen}) AS __entities{texts},
               min({period}) FILTER (WHERE {seen}) AS __first_period,
               max({period}) FILTER (WHERE {seen}) AS __last_period,
               count(DISTINCT hash({entity}, {period})) FILTER (WHERE {seen}) AS __keys,
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
                      seen_keys=min(row[-2] or 0, row[7]),
                      periods=None if row[-4] is None else (row[-4], row[-3]),
                      unseen=None if row[-1] is None else (row[-1][0], row[-1][1]))


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
    refused = _run(con, pack, f"""
        SELECT {shapes.ENTITY} AS entity, count(*) AS numbers, min({value}) AS least, max({value}) AS greatest
        FROM {table} WHERE {visible} AND {shapes.ENTITY} IS NOT NULL AND isfinite({value})
        GROUP BY {shapes.ENTITY} HAVING count(*) >= 3 AND bool_and({outside}) ORDER BY numbers DESC, entity""",
                   {"as_of": as_of})
    return refused.height, refused.row(0) if refused.height else None


@dataclass(frozen=True)
class JoinIds:
    """How a joined table's ids meet the main source's entities, by slug as a night joins them (any period)."""

    entities: int
    """The main source's entities (rows in scope with an id)."""
    unmatched: int
    """Of them, those no joined row in scope has the id of."""
    unmatched_examples: list[str]
    """Their ids as written, the most rows first."""
    spare: int
    """Joined ids (slugs) no entity of the main source has."""
    spare_examples: list[str]


def join_ids(pack: CriteriaPack, index: int, limit: int = 4) -> JoinIds:
    """`JoinIds` of the pack's join `index`, over every row of both tables (not only a night's)."""
    entity, scope = shapes.ENTITY, shapes.IN_SCOPE
    sql = f"""
        WITH main AS (SELECT {shapes.slug_sql(entity)} AS slug, min({entity}) AS written, count(*) AS n
                      FROM {TYPED} WHERE {scope} AND {entity} IS NOT NULL GROUP BY slug),
             joined AS (SELECT DISTINCT {entity} AS slug FROM {join_rows(index)}
                        WHERE {scope} AND {entity} IS NOT NULL),
             unmatched AS (SELECT * FROM main WHERE slug NOT IN (SELECT slug FROM joined)),
             spare AS (SELECT slug FROM joined WHERE slug NOT IN (SELECT slug FROM main))
        SELECT (SELECT count(*) FROM main), (SELECT count(*) FROM unmatched),
               (SELECT list(written ORDER BY n DESC, written) FROM (SELECT * FROM unmatched ORDER BY n DESC, written
                                                                   LIMIT {int(limit)})),
               (SELECT count(*) FROM spare),
               (SELECT list(slug ORDER BY slug) FROM (SELECT slug FROM spare ORDER BY slug LIMIT {int(limit)}))"""
    with opened(pack) as (con, _):
        entities, unmatched, examples, spare, spares = _run(con, pack, sql, {}).row(0)
    return JoinIds(entities=entities, unmatched=unmatched, unmatched_examples=list(examples or []), spare=spare,
                   spare_examples=list(spares or []))


def join_entity_column(pack: CriteriaPack, index: int, limit: int = 4) -> tuple[str, int, list[str]] | None:
    """A column of the pack's joined table `index` that its key does not read whose values, slugged as candidate ids
    are, are the ids of at least two and half or more of the main source's entities: the column that says whose
    each row is (trial 33: the weather of three airports joined by `every_entity: true` gave every airport the
    three's pooled weather, check ok). Its name, how many entities it names and a few of their ids, or None. Two
    reads of the source."""
    joined = pack.source.join[index]
    from opportunity_assets.sources.spec import Condition

    absent = Condition.model_validate({"column": _NO_COLUMN, "not_in": [_NO_COLUMN]})
    try:  # (a table joined to every entity has no id column to ask for: a condition asks instead)
        with opened(_with_spec(pack, index, {"where": [*joined.where, absent]})):
            return None
    except SourceError as exc:
        tried = [c for c in exc.present if c not in joined.read_columns][:KEY_COMPLETIONS_TRIED]
    if not tried:
        return None
    probe = _with_spec(pack, index, {"where": [
        *joined.where, *(Condition.model_validate({"column": c, "not_in": [_NO_COLUMN]}) for c in tried)]})
    listed = {c.column: text for _, c, text in shapes.listed_conditions(probe.source.join[index])}
    main = (f"SELECT {shapes.slug_sql(shapes.ENTITY)} AS slug, min({shapes.ENTITY}) AS written FROM {TYPED} "
            f"WHERE {shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL GROUP BY slug")
    counts = " UNION ALL ".join(
        f"SELECT {k} AS k, count(*) AS n, list(written ORDER BY written)[1:{int(limit)}] AS ids FROM ({main}) "
        f"WHERE slug IN (SELECT DISTINCT {shapes.slug_sql(_q(listed[c]))} FROM {join_rows(index)} "
        f"WHERE {shapes.IN_SCOPE})" for k, c in enumerate(tried))
    try:
        with opened(probe) as (con, _):
            entities = _run(con, probe, f"SELECT count(*) FROM ({main})", {}).item()
            found = _run(con, probe, counts, {}).rows()
    except SourceError:
        return None
    k, n, ids = max(found, key=lambda row: row[1])
    if n < 2 or 2 * n < entities:
        return None
    return tried[k], int(n), list(ids or [])


@dataclass(frozen=True)
class JoinShift:
    """A joined table whose every entity's periods are the source's own moved by `by` periods (`join_shift`)."""

    by: int
    entities: int
    source_span: tuple[date, date]
    joined_span: tuple[date, date]


def join_shift(pack: CriteriaPack, index: int) -> JoinShift | None:
    """Whether each entity the pack's join `index` matches has as many periods there as in the source, its first and
    its last both moved by one number of periods, the same for at least 2 entities and fewer than the periods (trial
    27: traffic dated 1971-85 beside costs of 1970-84, each year's figures read beside the year before's, silently).
    Over every row of both tables; None otherwise."""
    entity, period, scope = shapes.ENTITY, shapes.PERIOD, shapes.IN_SCOPE
    unit = pack.grain.name

    def spans(table: str, slug: str) -> str:
        return (f"SELECT {slug} AS slug, min({period}) AS a, max({period}) AS b, count(DISTINCT {period}) AS n "
                f"FROM {table} WHERE {scope} AND {entity} IS NOT NULL AND {period} IS NOT NULL GROUP BY slug")

    sql = f"""
        WITH main AS ({spans(TYPED, shapes.slug_sql(entity))}), joined AS ({spans(join_rows(index), entity)}),
             pairs AS (SELECT date_diff('{unit}', m.a, j.a) AS d, date_diff('{unit}', m.b, j.b) AS e, m.n = j.n AS same,
                              m.n, m.a AS ma, m.b AS mb, j.a AS ja, j.b AS jb FROM main m JOIN joined j USING (slug))
        SELECT count(*), count(DISTINCT d), min(d), bool_and(d = e AND same), min(n), min(ma), max(mb), min(ja),
               max(jb) FROM pairs"""
    with opened(pack) as (con, _):
        pairs, shifts, by, alike, periods, ma, mb, ja, jb = _run(con, pack, sql, {}).row(0)
    if pairs < 2 or shifts != 1 or not by or not alike or abs(by) >= periods:
        return None
    return JoinShift(by=int(by), entities=int(pairs), source_span=(ma, mb), joined_span=(ja, jb))


def latest_by_period(pack: CriteriaPack, value: str, where: str, periods: list[date]) -> dict[date, Any]:
    """The greatest value of the SQL `value` over the main source's typed rows matching the SQL `where`, per period
    of `periods` (a period without such a row is left out): how far into each period the rows reach."""
    listed = ", ".join(f"DATE '{p.isoformat()}'" for p in periods)
    sql = (f"SELECT {shapes.PERIOD}, max({value}) FROM {TYPED} WHERE ({where}) AND {shapes.PERIOD} IN ({listed}) "
           f"GROUP BY {shapes.PERIOD}")
    with opened(pack) as (con, _):
        return {period: latest for period, latest in _run(con, pack, sql, {}).rows() if latest is not None}


def value_counts(pack: CriteriaPack, value: str, where: str, *, join: int | None = None,
                 limit: int = 3) -> list[str]:
    """The commonest values of the SQL `value` over the typed rows (an internal column: `shapes.written(column)`, a
    condition's text column) among rows matching the SQL `where`, most rows first: examples a problem quotes.
    `join`: a joined table's rows instead of the main source's."""
    table = TYPED if join is None else join_rows(join)
    sql = (f"SELECT {value} AS v, count(*) AS n FROM {table} WHERE ({where}) AND {value} IS NOT NULL "
           f"GROUP BY v ORDER BY n DESC, v LIMIT {int(limit)}")
    with opened(pack) as (con, _):
        return [str(v) for v, _ in _run(con, pack, sql, {}).rows()]


def rows_matching(pack: CriteriaPack, wheres: list[str], *, join: int | None = None) -> list[int]:
    """How many typed rows match each SQL condition of `wheres`, in one pass (`join`: a joined table's rows)."""
    if not wheres:
        return []
    table = TYPED if join is None else join_rows(join)
    sql = f"SELECT {', '.join(f'count(*) FILTER (WHERE {w})' for w in wheres)} FROM {table}"
    with opened(pack) as (con, _):
        (row,) = _run(con, pack, sql, {}).rows()
    return [int(n) for n in row]


_LAST: list[tuple[tuple[Any, ...], SourceSnapshot]] = []
"""The process's latest read and its key: `opportunity run` checks the data, then runs the night on the same
snapshot, without reading a wide source twice."""


def _read_key(pack: CriteriaPack, as_of: date, today: date) -> tuple[Any, ...] | None:
    """What a snapshot depends on: the pack, its files (`file_key`), the night and the date."""
    files = file_key(pack)
    return None if files is None else (*files, as_of, today)


def read_snapshot(pack: CriteriaPack, as_of: date, today: date | None = None) -> SourceSnapshot:
    """What the scanner may know on `as_of`. `today` (default: the clock's) dates the rows quarantined for lying in
    the future. The latest read is kept for the process (frames are immutable), and reused while nothing it
    depends on changed."""
    key = _read_key(pack, as_of, today or date.today())
    if key is not None and _LAST and _LAST[0][0] == key:
        return _LAST[0][1]
    snapshot = _read_snapshot(pack, as_of, today or date.today(), None if key is None else key[:-2])
    _LAST[:] = [(key, snapshot)] if key is not None else []
    return snapshot


def earlier_snapshots(pack: CriteriaPack, nights: list[date], today: date | None = None) -> list[SourceSnapshot]:
    """What the scanner knew on each of `nights`, read on the rows a command keeps open (`kept_open`) and left
    open for its own night's `read_snapshot`, which this does not replace as the process's latest read."""
    with opened(pack) as (con, rejected):
        read = [(night, _read(con, pack, night, today or date.today())) for night in nights]
    return [_snapshot(pack, night, *found, rejected) for night, found in read]


def _read_snapshot(pack: CriteriaPack, as_of: date, today: date, files: tuple[Any, ...] | None) -> SourceSnapshot:
    with opened(pack, files) as (con, rejected):
        anchor, metrics, history, quarantine = _read(con, pack, as_of, today)
    release_kept()
    return _snapshot(pack, as_of, anchor, metrics, history, quarantine, rejected)


def _snapshot(pack: CriteriaPack, as_of: date, anchor: date | None, metrics: pl.DataFrame, history: pl.DataFrame,
              quarantine: pl.DataFrame, rejected: list[Rejected]) -> SourceSnapshot:
    # a rejected line dated by its fields (`formats.date_rejected`) is seen once its period is published, as a row is
    lag = timedelta(days=pack.source.publication_lag_days)
    rejected = [r for r in rejected if r.period is None or pack.grain.end(r.period) + lag <= as_of]
    refused = pl.concat([
        quarantine.select("source_row", "entity_id", "period", "reason"),
        pl.DataFrame({"source_row": [r.line for r in rejected], "entity_id": [r.entity for r in rejected],
                      "period": [r.period for r in rejected], "reason": [r.reason for r in rejected]},
                     schema={"source_row": pl.Int64, "entity_id": pl.Utf8, "period": pl.Date,
                             "reason": pl.Utf8})], how="vertical_relaxed")
    history_columns = ["entity_id", "entity_name", "source_row", "period", "published_at", "periods_ago",
                       *pack.columns, *(["events_read", "events_repeated"] if pack.source.shape == "events" else [])]
    return SourceSnapshot(
        as_of=as_of,
        anchor_period=anchor,
        history=history.select(history_columns).sort("entity_id", "period"),
        metrics=_with_derived(pack, metrics).sort("entity_id"),
        quarantined=_joined_rows_by_key(pack, refused, metrics).sort("source_row"),
    )
