"""The point-in-time source: one DuckDB query per night over the pack's CSV file.

The query derives `published_at` for every row and keeps only rows with `published_at <= as_of`
(in the SQL, before anything else sees them). Bad input is quarantined with a reason, never repaired: a row with
an unparseable period, a missing entity id or a duplicated key is refused whole; a non-numeric, negative or
infinite cell becomes that cell's gap (the row's other columns are read) and its row is listed with the reason.
The pack's metrics are computed in the same query, over that as_of-filtered history.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl

from opportunity_assets.criteria import CriteriaPack, MetricSpec
from opportunity_assets.sources.formats import SourceFormatError, infer_format, open_source
from opportunity_assets.sources.formats import quote_identifier as _q
from opportunity_assets.text import MAX_NAME


class SourceError(RuntimeError):
    """The source cannot be read at all (missing or empty file, missing column)."""


@dataclass(frozen=True)
class SourceSnapshot:
    """What the scanner may know on `as_of`, and nothing else."""

    as_of: date
    anchor_period: date | None
    """Latest period (first of month) published by as_of; window month 0. None if nothing is published."""
    history: pl.DataFrame
    """Visible valid rows within the pack's history reach (metric windows, integrity yardstick): entity_id,
    entity_name, period, published_at,
    months_ago, source_row and the pack's columns."""
    metrics: pl.DataFrame
    """One row per visible entity: entity_id, entity_name and one column per pack metric (null = gap)."""
    quarantined: pl.DataFrame
    """Visible rows refused: source_row, entity, period, reason."""


def _metric_sql(name: str, spec: MetricSpec) -> str:
    lo, hi = spec.window
    in_window = f"months_ago BETWEEN {lo} AND {hi}"
    if spec.agg == "coverage":
        columns = spec.columns or []
        filled = " + ".join(f"count({_q(c)}) FILTER (WHERE {in_window})" for c in columns)
        return f"({filled}) / {float(len(columns) * (hi - lo + 1))} AS {_q(name)}"
    column = _q(spec.column or "")
    if spec.agg == "age_days":
        return (f"datediff('day', max(published_at) FILTER (WHERE {column} IS NOT NULL), $as_of::DATE)"
                f"::DOUBLE AS {_q(name)}")
    count = f"count({column}) FILTER (WHERE {in_window})"
    value = {
        "sum": f"sum({column}) FILTER (WHERE {in_window})",
        "avg": f"avg({column}) FILTER (WHERE {in_window})",
        "min": f"min({column}) FILTER (WHERE {in_window})",
        "max": f"max({column}) FILTER (WHERE {in_window})",
        "last": f"arg_min({column}, months_ago) FILTER (WHERE {in_window} AND {column} IS NOT NULL)",
    }[spec.agg]
    return f"CASE WHEN {count} >= {spec.required_rows} THEN ({value})::DOUBLE END AS {_q(name)}"


def _snapshot_sql(pack: CriteriaPack) -> str:
    src = pack.source
    columns = src.columns
    raw_cells = ",\n".join(f"nullif(nullif(trim({_q(c)}), ''), 'NA') AS {_q('raw_' + c)}" for c in columns)
    typed_cells = ",\n".join(f"try_cast({_q('raw_' + c)} AS DOUBLE) AS {_q(c)}" for c in columns)
    cell_problems = ", ".join(
        f"CASE WHEN {_q('raw_' + c)} IS NOT NULL AND {_q(c)} IS NULL "
        f"THEN 'column {c}: ' || {_q('raw_' + c)} || ' is not a number' "
        f"WHEN {_q(c)} < 0 THEN 'column {c}: ' || {_q('raw_' + c)} || ' is negative' "
        f"WHEN isinf({_q(c)}) OR isnan({_q(c)}) THEN 'column {c}: ' || {_q('raw_' + c)} || ' is not finite' END"
        for c in columns
    )
    # A bad cell is that cell's gap, not the row's: the row's other columns are still read (DESIGN §4).
    cleaned = ", ".join(
        f"CASE WHEN {_q(c)} >= 0 AND NOT isinf({_q(c)}) AND NOT isnan({_q(c)}) THEN {_q(c)} END AS {_q(c)}"
        for c in columns
    )
    metric_cells = ",\n".join(_metric_sql(name, spec) for name, spec in pack.metrics.items())
    value_columns = ", ".join(_q(c) for c in columns)
    return f"""
    WITH raw AS (
        SELECT source_row,
               nullif(trim({_q(src.entity_id)}), '') AS entity_key,
               nullif(trim({_q(src.entity_name)}), '') AS entity_name,
               try_cast(trim({_q(src.year_column)}) AS INTEGER) AS y,
               try_cast(trim({_q(src.month_column)}) AS INTEGER) AS m,
               {_q(src.year_column)} AS raw_year, {_q(src.month_column)} AS raw_month,
               {raw_cells}
        FROM source_rows
    ),
    typed AS (
        SELECT *, {typed_cells},
               CASE WHEN y BETWEEN 1800 AND 2999 AND m BETWEEN 1 AND 12 THEN make_date(y, m, 1) END AS period
        FROM raw
    ),
    dated AS (
        SELECT *, (last_day(period) + INTERVAL ({src.publication_lag_days}) DAY)::DATE AS published_at,
               count(*) OVER (PARTITION BY entity_key, period) AS copies
        FROM typed
    ),
    judged AS (
        SELECT *, CASE
            WHEN entity_key IS NULL THEN 'missing entity id ({src.entity_id})'
            WHEN length(entity_key) > {MAX_NAME} OR length(coalesce(entity_name, '')) > {MAX_NAME}
                THEN 'entity id or name too long: ' || greatest(length(entity_key), length(coalesce(entity_name, '')))
                     || ' characters, at most {MAX_NAME}'
            WHEN period IS NULL
                THEN 'period unparseable: year=' || coalesce(raw_year, '') || ', month=' || coalesce(raw_month, '')
            WHEN period > $today::DATE
                THEN 'period after today: ' || strftime(period, '%Y-%m') || ' has not happened yet (today '
                     || strftime($today::DATE, '%Y-%m-%d') || ')'
            WHEN copies > 1
                THEN 'duplicated key ({src.entity_id}, year, month) = (' || entity_key || ', ' || y || ', ' || m
                     || '): ' || copies || ' rows, none used'
            END AS reason,
            nullif(concat_ws('; ', {cell_problems}), '') AS cell_reason
        FROM dated
        -- point in time: a row is seen only once published; unparseable periods are refused without a date, and
        -- a period after today (a month that has not happened) is refused whatever the night
        WHERE period IS NULL OR published_at <= $as_of::DATE OR period > $today::DATE
    ),
    visible AS (SELECT * REPLACE ({cleaned}) FROM judged WHERE reason IS NULL),
    anchor AS (SELECT max(period) AS t0 FROM visible),
    hist AS (
        SELECT v.*, datediff('month', v.period, anchor.t0) AS months_ago FROM visible v, anchor
    )
    SELECT 'metrics' AS part, entity_key AS entity_id, any_value(entity_name) AS entity_name,
           NULL::BIGINT AS source_row, NULL::DATE AS period, NULL::DATE AS published_at,
           NULL::BIGINT AS months_ago, NULL::VARCHAR AS reason,
           {", ".join(f"NULL::DOUBLE AS {_q(c)}" for c in columns)},
           {metric_cells}
    FROM hist GROUP BY entity_key
    UNION ALL BY NAME
    SELECT 'history' AS part, entity_key AS entity_id, entity_name, source_row, period, published_at,
           months_ago, NULL AS reason, {value_columns}
    FROM hist WHERE months_ago <= {pack.history_reach}
    UNION ALL BY NAME
    SELECT 'quarantine' AS part, entity_key AS entity_id, entity_name, source_row, period, published_at,
           NULL AS months_ago,
           CASE WHEN reason IS NOT NULL THEN reason ELSE cell_reason || ' (that cell is a gap; the row is kept)' END
               AS reason
    FROM judged WHERE reason IS NOT NULL OR cell_reason IS NOT NULL
    UNION ALL BY NAME
    SELECT 'anchor' AS part, NULL AS entity_id, NULL AS entity_name, NULL AS source_row, t0 AS period,
           NULL AS published_at, NULL AS months_ago, NULL AS reason FROM anchor
    """


class PointInTimeSource(dg.ConfigurableResource):
    """Reads a pack's source as it was known on a date. Stateless: one short DuckDB connection per read."""

    def read(self, pack: CriteriaPack, as_of: date) -> SourceSnapshot:
        return read_snapshot(pack, as_of)


def read_snapshot(pack: CriteriaPack, as_of: date, today: date | None = None) -> SourceSnapshot:
    """What the scanner may know on `as_of`. `today` (default: the clock's) dates the rows quarantined for lying in
    the future."""
    path: Path = pack.source_path
    if not path.is_file():
        raise SourceError(f"source file {path} not found")
    if path.stat().st_size == 0:
        raise SourceError(f"source file {path} is empty: no header, no rows")
    # One thread: parallel aggregation sums floats in a varying order, and a night must be reproducible to the
    # last bit (a verdict can sit on a threshold). The source is small; this costs milliseconds.
    con = duckdb.connect(config={"threads": 1})
    src = pack.source
    needed = list(dict.fromkeys([src.entity_id, src.entity_name, src.year_column, src.month_column, *src.columns]))
    try:
        rejected = open_source(con, path, infer_format(path, src.format), needed, entity=src.entity_id,
                               table=src.table)
        cursor = con.execute(_snapshot_sql(pack), {"as_of": as_of, "today": today or date.today()})
        names = [d[0] for d in cursor.description or []]
        frame = pl.DataFrame(cursor.fetchall(), schema=names, orient="row", infer_schema_length=None)
    except SourceFormatError as exc:
        raise SourceError(str(exc)) from None
    except (duckdb.Error, OSError) as exc:
        raise SourceError(f"source file {path} could not be read: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    anchor = frame.filter(pl.col("part") == "anchor")["period"].to_list()
    history_columns = ["entity_id", "entity_name", "source_row", "period", "published_at", "months_ago",
                       *pack.source.columns]
    return SourceSnapshot(
        as_of=as_of,
        anchor_period=anchor[0] if anchor else None,
        history=frame.filter(pl.col("part") == "history").select(history_columns)
        .sort("entity_id", "period"),
        metrics=frame.filter(pl.col("part") == "metrics").select("entity_id", "entity_name", *pack.metrics)
        .sort("entity_id"),
        quarantined=pl.concat([
            frame.filter(pl.col("part") == "quarantine").select("source_row", "entity_id", "period", "reason"),
            pl.DataFrame({"source_row": [r.line for r in rejected], "entity_id": [r.entity for r in rejected],
                          "period": [None] * len(rejected), "reason": [r.reason for r in rejected]},
                         schema={"source_row": pl.Int64, "entity_id": pl.Utf8, "period": pl.Date,
                                 "reason": pl.Utf8})], how="vertical_relaxed").sort("source_row"),
    )
