"""The night's read of a pack's source: one DuckDB query over its typed rows (any format and shape).

The query derives `published_at` for every row and keeps only rows with `published_at <= as_of`
(in the SQL, before anything else sees them; `shapes.py`). Bad input is quarantined with a reason, never repaired:
a row with an unparseable period, a missing entity id or a duplicated key is refused whole; a non-numeric, negative
or infinite cell becomes that cell's gap (the row's other columns are read) and its row is listed with the reason.
The pack's metrics are computed in the same query, over that as_of-filtered history, in periods of the pack's
grain. `resources/source.py` is the resource over it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import duckdb
import polars as pl

from opportunity_assets.criteria import CriteriaPack, MetricSpec
from opportunity_assets.latest import Latest
from opportunity_assets.periods import Grain
from opportunity_assets.sources import shapes
from opportunity_assets.sources.connection import file_key, opened, release_kept, run
from opportunity_assets.sources.csv_rows import Rejected
from opportunity_assets.sources.facts import line_published
from opportunity_assets.sources.formats import TYPED, join_label, join_rows
from opportunity_assets.sources.reading import ROW, literal
from opportunity_assets.sources.reading import quote_identifier as _q
from opportunity_assets.sources.spec import SourceSpec


@dataclass(frozen=True)
class SourceSnapshot:
    """What the scanner may know on `as_of`, and nothing else."""

    as_of: date
    anchor_period: date | None
    """Latest period (its first day) published by as_of; window period 0. None if nothing is published."""
    first_period: date | None
    """Earliest period of a valid row published by as_of: where the whole history begins, which `history`, cut at
    `history_reach` periods, does not tell. None if nothing is published."""
    history: pl.DataFrame
    """Visible valid rows within the pack's history reach (metric windows, integrity yardstick): entity_id,
    entity_name, period, published_at,
    periods_ago, source_row and the pack's columns; for events, events_read and events_repeated (the period's rows,
    and those repeating another in every column read: `shapes.EVENTS_REPEATED`)."""
    metrics: pl.DataFrame
    """One row per visible entity: entity_id, entity_name and one column per pack metric (null = gap)."""
    quarantined: pl.DataFrame
    """Visible rows refused: source_row, entity, period, reason."""
    before_own: pl.DataFrame = field(default_factory=pl.DataFrame)
    """`history`'s columns over the periods before an entity's own first row where a series joined to every entity
    has figures (`shapes.reaches_before_own`): no figure of the entity's own and no source row, the series' beside
    it. The metrics read them (a year-ago rate of an entity a year old); the scan gives them to the candidate's
    rows, which the verifier recomputes from. Empty for any other source."""


def _metric_sql(name: str, spec: MetricSpec) -> str:
    lo, hi = spec.window
    in_window = f"{_AGO} BETWEEN {lo} AND {hi}"
    if spec.agg == "coverage":
        columns = spec.columns or []
        filled = " + ".join(f"count({_q(c)}) FILTER (WHERE {in_window})" for c in columns)
        return f"({filled}) / {float(len(columns) * (hi - lo + 1))} AS {_q(name)}"
    column = _q(spec.column or "")
    if spec.agg == "age_days":
        # the latest period's value, dated by its publication (a revision of an older period is no fresher data)
        return (f"datediff('day', arg_min({shapes.PUBLISHED}, {_AGO}) FILTER (WHERE {column} IS NOT NULL), "
                f"{shapes.AS_OF})::DOUBLE AS {_q(name)}")
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
          ) -> tuple[tuple[date | None, date | None], pl.DataFrame, pl.DataFrame, pl.DataFrame]:
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
           ) -> tuple[tuple[date | None, date | None], pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The night's latest and first periods, metrics, history and quarantine, over the typed rows
    `connection.opened` made: the rows judged (a view each: one pass over the typed rows, with the rare duplicated
    keys found first), the panel `hist` over them, then one SELECT per result, each with its own column names (a
    metric may share a column's name). A panel of rows is a view too (a table would hold the rows a second time);
    a panel of events is summed once into a table (it is smaller than the events). Sums run on one thread:
    parallel partial sums combine in a varying order, and a night must be reproducible to the last bit (a verdict
    can sit on a threshold); everything else runs on every core."""
    src, grain = pack.source, pack.grain
    con.execute(f"SET VARIABLE as_of = DATE '{as_of.isoformat()}'")
    con.execute(f"SET VARIABLE today = DATE '{today.isoformat()}'")
    _judged(con, pack, src, TYPED, "judged")
    joins = []
    for i, joined in enumerate(src.join):
        _judged(con, pack, joined, join_rows(i), f"judged_{i}")
        joins.append(_panel(joined, Grain(joined.grain), f"judged_{i}"))
    own = _panel(src, grain, "judged")
    if joins:
        run(con, pack, f"CREATE OR REPLACE TEMP TABLE slugs AS {shapes.slugs_sql(TYPED)}", {})
    panel = own if not joins else f"({shapes.joined_sql(src, own, joins, 'slugs', pack.history_reach)})"
    before = shapes.reaches_before_own(src)
    summed = any(s.shape == "events" for s in (src, *src.join))
    if summed:
        con.execute("SET threads = 1")  # events are summed into the panel: one fixed order
        run(con, pack, f"CREATE TEMP TABLE panel AS SELECT * FROM {panel}", {})
        panel = "panel"
    own_rows = f"WHERE NOT {shapes.BEFORE_OWN}" if before else ""
    ((anchor, first),) = run(con, pack, f"SELECT max({shapes.PERIOD}), min({shapes.PERIOD}) FROM {panel} {own_rows}",
                             {}).rows()
    con.execute(f"SET VARIABLE anchor = {'NULL' if anchor is None else literal(anchor.isoformat())}::DATE")
    run(con, pack, f"CREATE TEMP VIEW hist AS SELECT p.*, "
                    f"{grain.sql_between('p.' + shapes.PERIOD, 'getvariable(' + literal('anchor') + ')::DATE')} "
                    f"AS {_AGO} FROM {panel} p", {})
    values = "".join(f", {_q(c)}" for c in pack.columns)
    if src.shape == "events":
        values += f", {shapes.EVENTS_READ} AS events_read, {shapes.EVENTS_REPEATED} AS events_repeated"
    if before:
        values += f", {shapes.BEFORE_OWN} AS before_own"
    history = run(con, pack, f"""
        SELECT {shapes.ENTITY} AS entity_id, {shapes.NAME} AS entity_name, {ROW} AS source_row,
               {shapes.PERIOD} AS period, {shapes.PUBLISHED} AS published_at, {_AGO} AS periods_ago{values}
        FROM hist WHERE {_AGO} <= {pack.history_reach}""", {})
    con.execute("SET threads = 1")  # sums, and the quarantine's order, from here on: one fixed order
    aggregated = [_metric_sql(name, spec) for name, spec in pack.metrics.items() if spec.agg != "derived"]
    metrics = run(con, pack, f"SELECT {shapes.ENTITY} AS entity_id, any_value({shapes.NAME}) AS entity_name, "
                              f"{', '.join(aggregated)} FROM hist GROUP BY {shapes.ENTITY}", {})
    refused = [("judged", "")] + [(f"judged_{i}", f"{join_label(pack, j)}: ") for i, j in enumerate(src.join)]
    quarantine = run(con, pack, " UNION ALL ".join(f"""
        SELECT {ROW} AS source_row, {shapes.ENTITY} AS entity_id, {shapes.PERIOD} AS period,
               {literal(prefix)} || coalesce({shapes.REASON}, {shapes.CELL_REASON}
                                                     || ' (that cell is a gap; the row is kept)') AS reason
        FROM {table} WHERE {shapes.REASON} IS NOT NULL OR {shapes.CELL_REASON} IS NOT NULL"""
                                                 for table, prefix in refused), {})
    return (anchor, first), metrics, history, quarantine


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
        run(con, pack, f"CREATE TEMP TABLE {name}_duplicates AS {duplicates}", {})
    judged = shapes.judged_sql(spec, Grain(spec.grain), typed, None if duplicates is None else f"{name}_duplicates")
    run(con, pack, f"CREATE TEMP VIEW {name} AS {judged}", {})


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


_LAST: Latest[SourceSnapshot] = Latest()
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
    return _LAST.get(key) or _LAST.put(key, _read_snapshot(pack, as_of, today or date.today(),
                                                           None if key is None else key[:-2]))


def earlier_snapshots(pack: CriteriaPack, nights: list[date], today: date | None = None) -> list[SourceSnapshot]:
    """What the scanner knew on each of `nights`, read on the rows a command keeps open (`kept_open`) and left
    open for its own night's `read_snapshot`, which this does not replace as the process's latest read."""
    with opened(pack) as (con, rejected):
        read = [(night, _read(con, pack, night, today or date.today())) for night in nights]
    return [_snapshot(pack, night, *found, rejected) for night, found in read]


def _read_snapshot(pack: CriteriaPack, as_of: date, today: date, files: tuple[Any, ...] | None) -> SourceSnapshot:
    with opened(pack, files) as (con, rejected):
        periods, metrics, history, quarantine = _read(con, pack, as_of, today)
    release_kept()
    return _snapshot(pack, as_of, periods, metrics, history, quarantine, rejected)


def _snapshot(pack: CriteriaPack, as_of: date, periods: tuple[date | None, date | None], metrics: pl.DataFrame,
              history: pl.DataFrame, quarantine: pl.DataFrame, rejected: list[Rejected]) -> SourceSnapshot:
    # a rejected line dated by its fields (`formats.date_rejected`) is seen once its period is published, as a row is
    rejected = [r for r in rejected if (published := line_published(pack, r)) is None or published <= as_of]
    refused = pl.concat([
        quarantine.select("source_row", "entity_id", "period", "reason"),
        pl.DataFrame({"source_row": [r.line for r in rejected], "entity_id": [r.entity for r in rejected],
                      "period": [r.period for r in rejected], "reason": [r.reason for r in rejected]},
                     schema={"source_row": pl.Int64, "entity_id": pl.Utf8, "period": pl.Date,
                             "reason": pl.Utf8})], how="vertical_relaxed")
    history_columns = ["entity_id", "entity_name", "source_row", "period", "published_at", "periods_ago",
                       *pack.columns, *(["events_read", "events_repeated"] if pack.source.shape == "events" else [])]
    before_own = history.clear()
    if "before_own" in history.columns:  # (`shapes.reaches_before_own`: kept apart from what every check counts)
        before_own, history = history.filter(pl.col("before_own")), history.filter(~pl.col("before_own"))
    return SourceSnapshot(
        as_of=as_of,
        anchor_period=periods[0],
        first_period=periods[1],
        history=history.select(history_columns).sort("entity_id", "period"),
        before_own=before_own.select(history_columns).sort("entity_id", "period"),
        metrics=_with_derived(pack, metrics).sort("entity_id"),
        quarantined=_joined_rows_by_key(pack, refused, metrics).sort("source_row"),
    )
