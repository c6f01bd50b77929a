"""Questions `opportunity check` asks of a source's typed rows to name the key at fault: what duplicated keys have
in common and which column would complete the key, a frequency column that tells rows apart, dates beside the
period, names written as values (a long table), how a joined table's ids and periods meet the source's, and the
examples a problem quotes. Each a read of the source, often with the pack changed to ask (`_with_spec`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.sources import shapes
from opportunity_assets.sources.connection import opened, run
from opportunity_assets.sources.csv_rows import header_of
from opportunity_assets.sources.formats import TYPED, csv_delimiter, join_rows
from opportunity_assets.sources.reading import ROW, SourceError, literal
from opportunity_assets.sources.reading import quote_identifier as _q
from opportunity_assets.sources.sniff import infer_format
from opportunity_assets.sources.spec import Condition, SourceSpec


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
    """Per entity of the main source's rows in scope: `entity_id`, how many `names` its rows carry, its `rows`,
    two names `shown` (its first and last, sorted: no list of a million events' names), its `periods` and those in
    which its rows carry several names (`together`), as
    `check.entities.names_per_row` gives them for a panel's rows. An events panel carries one name per entity, so
    the check of a name column reads the events themselves."""
    per_period = (f"SELECT {shapes.ENTITY} AS entity_id, count(*)::BIGINT AS periods, "
                  "count(*) FILTER (WHERE named > 1)::BIGINT AS together FROM (SELECT "
                  f"{shapes.ENTITY}, count(DISTINCT {shapes.NAME}) AS named FROM {TYPED} WHERE {shapes.IN_SCOPE} "
                  f"AND {shapes.ENTITY} IS NOT NULL GROUP BY {shapes.ENTITY}, {shapes.PERIOD}) GROUP BY 1")
    sql = (f"SELECT * FROM (SELECT {shapes.ENTITY} AS entity_id, count(DISTINCT {shapes.NAME})::BIGINT AS names, "
           f"count(*)::BIGINT AS rows, list_value(min({shapes.NAME}), max({shapes.NAME})) AS shown FROM {TYPED} "
           f"WHERE {shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL GROUP BY 1) JOIN ({per_period}) "
           "USING (entity_id) ORDER BY 1")
    with opened(pack) as (con, _):
        return run(con, pack, sql, {})


def duplicate_facts(pack: CriteriaPack, join: int | None = None) -> DuplicateFacts | None:
    """The main source's duplicated keys (or its joined table `join`'s), described (None for events, or no
    duplicated key at all)."""
    spec, table = (pack.source, TYPED) if join is None else (pack.source.join[join], join_rows(join))
    sql = shapes.duplicate_groups_sql(spec, table)
    if sql is None:
        return None
    with opened(pack) as (con, _):
        groups = run(con, pack, f"SELECT * FROM ({sql}) ORDER BY __period IS NULL, __copies DESC, __names DESC, "
                      "__entity, __written",
                      {})
        ((entities,),) = run(con, pack, f"SELECT count(DISTINCT {shapes.ENTITY}) FROM {table} "
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


WHOLE_LINE_COLUMNS = 64
"""The most source columns `copies_of_whole_lines` compares a row in (a wider table is not judged)."""


def copies_of_whole_lines(pack: CriteriaPack) -> tuple[int, int, int] | None:
    """The main source's duplicated keys whose rows are equal in every column of the source, those the pack does not
    read too (a row written twice, not two entities named alike), and all its duplicated keys; None when there are
    none, or the source cannot list its columns, or has more than `WHOLE_LINE_COLUMNS`. Trial 66: three rows of a
    `known_at` snapshot written twice were told the id "repeats for different entities": the columns the pack reads
    alone cannot tell copies from namesakes (counties named alike in several states agree in them too). One read.
    Third: the duplicated keys whose rows agree in every column the pack does not read as a figure (trial 105: a row
    sent again with one figure revised, in a file of no other column, was told the id "repeats for different
    entities")."""
    columns = source_columns(pack)
    if not columns or len(columns) > WHOLE_LINE_COLUMNS or pack.source.shape == "events":
        return None
    probe, texts = _with_texts(pack, columns)
    if (duplicated := _of_duplicated_keys(probe)) is None:
        return None
    line = f"hash(list_value({', '.join(_q(texts[c]) for c in columns)}))"
    others = [c for c in columns if c not in pack.source.columns]
    rest = f"hash(list_value({', '.join(_q(texts[c]) for c in others)}))" if others else "1"
    sql = f"""
        SELECT count(*) FILTER (WHERE __lines = 1), count(*), count(*) FILTER (WHERE __others = 1) FROM (
            SELECT {shapes.ENTITY}, {shapes.PERIOD}, count(DISTINCT {line}) AS __lines,
                   count(DISTINCT {rest}) AS __others FROM {TYPED}
            WHERE {duplicated} GROUP BY ALL)"""
    try:
        with opened(probe) as (con, _):
            (copies, groups, alike), = run(con, probe, sql, {}).rows()
    except SourceError:
        return None
    return (int(copies), int(groups), int(alike)) if groups else None


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
        keys = run(con, pack, f"SELECT * FROM ({sql}) ORDER BY __periods DESC, __entity, __period", {})
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
            (row,) = run(con, probe, f"SELECT {sides} FROM {table} WHERE {dated}", {}).rows()
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
            (row,) = run(con, probe, f"SELECT count(*), {', '.join(parts)} FROM {TYPED} WHERE {dated}", {}).rows()
    except SourceError:
        return []
    found = []
    for k, column in enumerate(tried):
        n, within, after, latest = row[1 + 4 * k: 5 + 4 * k]
        example = (str(latest[0]).strip(), date.fromisoformat(latest[1][:10]), date.fromisoformat(latest[2][:10])) \
            if latest else None
        found.append(DatesBeside(column, int(row[0]), int(n), int(within), int(after), example))
    return found


UNIT_COLUMN_NAMES = frozenset({"unit", "units", "uom", "unitofmeasure", "unitmeasure", "measureunit", "currency",
                               "currencycode", "ccy"})
"""Names (lower case, letters only) of a column that says each row's unit or currency."""
UNITS_LISTED = 6
"""Most values a unit column may hold for its values to be listed as units (more is a column of something else)."""


def units_beside(pack: CriteriaPack) -> tuple[str, list[tuple[str, int, date, date]]] | None:
    """A column of the main source that no key reads, named for a unit or a currency (`UNIT_COLUMN_NAMES`), that
    holds 2 to `UNITS_LISTED` values on the dated rows in scope: the column, and each value with its rows and its
    first and last period, the commonest first. None when no such column does. A long table whose `unit` says
    `USc/lb` on a grade's rows to 2014 and `USD/kg` from 2015 is read as one series in two units (trial 120). A CSV
    file's columns from its first line (`_csv_header`); one read of the source only where such a column is."""
    src = pack.source
    if src.wide is not None:
        return None
    read = {*src.dated_columns, *src.entity_columns, *src.name_columns, *src.columns,
            *(a.column for a in src.aggregates.values() if a.column), *(c.column for c in src.where)}
    tried = [c for c in _csv_header(pack) if c not in read
             and re.sub(r"[^a-z]", "", c.lower()) in UNIT_COLUMN_NAMES][:KEY_COMPLETIONS_TRIED]
    if not tried:
        return None
    probe, listed = _with_texts(pack, tried)
    dated = f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL"
    try:
        with opened(probe) as (con, _):
            for column in tried:
                text = f"trim({_q(listed[column])})"
                rows = run(con, probe, f"SELECT {text} AS v, count(*) AS n, min({shapes.PERIOD}), "
                                       f"max({shapes.PERIOD}) FROM {TYPED} WHERE {dated} AND {text} <> '' "
                                       f"GROUP BY v ORDER BY n DESC, v LIMIT {UNITS_LISTED + 1}", {}).rows()
                if 2 <= len(rows) <= UNITS_LISTED:
                    return column, [(str(v), int(n), _day(first), _day(last)) for v, n, first, last in rows]
    except SourceError:
        return None
    return None


def csv_file(pack: CriteriaPack) -> Path | None:
    """The main source's file where it is one CSV file (no database, no `query`), else None."""
    src = pack.source
    if src.format == "postgres" or src.query:
        return None
    path = pack.path_of(src)
    return path if infer_format(path, src.format) == "csv" else None


def _csv_header(pack: CriteriaPack) -> list[str]:
    """The main source's columns from its first line, where it is one CSV file (no read of the source: a check reads
    it once); none otherwise, or where the line cannot be read."""
    try:
        path = csv_file(pack)
        if path is None or not path.is_file():
            return []
        return header_of(path, csv_delimiter(path, pack.source.delimiter))
    except Exception:  # (a header that cannot be read: the read that counts says why)
        return []


def _day(value: Any) -> date:
    """A period as the date it starts on."""
    return value.date() if isinstance(value, datetime) else value if isinstance(value, date) else \
        date.fromisoformat(str(value)[:10])


def _unread(columns: list[str], spec: SourceSpec) -> list[str]:
    """Of a table's `columns`, those its spec does not read, the first `KEY_COMPLETIONS_TRIED`: what the probes for
    a column the pack missed try."""
    return [c for c in columns if c not in spec.read_columns][:KEY_COMPLETIONS_TRIED]


def _of_duplicated_keys(probe: CriteriaPack) -> str | None:
    """SQL true for the main source's typed rows in scope whose entity and period another such row shares (a
    duplicated key), or None when the source's shape has no key."""
    duplicates = shapes.duplicates_sql(probe.source, TYPED)
    if duplicates is None:
        return None
    key = f"{shapes.ENTITY}, {shapes.PERIOD}"
    return f"{shapes.IN_SCOPE} AND ({key}) IN (SELECT ({key}) FROM ({duplicates}))"


def key_completions(pack: CriteriaPack) -> list[list[str]]:
    """Columns of the main source that `entity_id` lacks: with each beside it, no two rows in scope share an entity
    and a period, and entities still recur period after period (a row's own id is no entity). A panel keyed by
    state alone whose rows are of several industries names `[Industry]`; when no one column does, the first pair
    that does (`[gender, legal]` beside `state`: prisoners by sex and legal status). Empty for events (every row is
    an event)."""
    src = pack.source
    if src.shape == "events":
        return []
    tried = _unread(source_columns(pack), src)
    found = [[column] for column in tried if _completes(pack, [column])]
    if found:
        return found
    pairs = list(itertools.combinations(tried, 2))[:KEY_PAIRS_TRIED]
    return next(([list(pair)] for pair in pairs if _completes(pack, list(pair))), [])


def _with_texts(pack: CriteriaPack, texts: list[str], **source: Any) -> tuple[CriteriaPack, dict[str, str]]:
    """A probe of the pack whose typed rows carry each column of `texts` as its text (a `where` condition every row but
    one holding NUL meets, after the source's own or `source["where"]`), its source updated by `source`; and the
    typed rows' column holding each one's text."""
    src = pack.source
    kept = source.pop("where", src.where)
    probe = pack.model_copy(update={"source": src.model_copy(update={**source, "where": [
        *kept, *(Condition.model_validate({"column": c, "not_in": ["\x00"]}) for c in texts)]})})
    return probe, {c.column: text for _, c, text in shapes.listed_conditions(probe.source)}


def names_as_values(pack: CriteriaPack, names: list[str], present: list[str]) -> tuple[str, list[str]] | None:
    """The column of the main source, among `present` (its file's columns), whose values hold the most of `names`
    (columns the pack lists that the file lacks), with those it holds: a long table (a row per value, named by that
    column) read as if it had a column each. None when no column holds any, or for events. One read of the source."""
    src = pack.source
    tried = _unread(present, src)
    if src.shape == "events" or src.long is not None or not tried or not names:
        return None

    probe, texts = _with_texts(pack, tried, columns=[], signed=[], bounds={}, wide=None, join=[], where=[])
    held = ", ".join(literal(n) for n in names)
    counts = " UNION ALL ".join(f"SELECT {i} AS k, list(DISTINCT {_q(texts[c])}) AS v FROM {TYPED} WHERE "
                                f"{_q(texts[c])} IN ({held})" for i, c in enumerate(tried))
    try:
        with opened(probe) as (con, _):
            found = run(con, probe, counts, {}).rows()
    except SourceError:
        return None
    best = max(found, key=lambda row: len(row[1] or []), default=None)
    if best is None or not best[1]:
        return None
    return tried[best[0]], [n for n in names if n in set(best[1])]


@dataclass(frozen=True)
class RevisionDates:
    """A column the pack does not read whose dates tell apart the rows of a panel's duplicated keys: a figure's
    revisions, read without `published_column` (`revision_dates`)."""

    column: str
    groups: int
    """Duplicated keys (entity, period) with rows in scope."""
    told: int
    """Of them, those whose rows the column's dates tell apart, each on or after its period's start."""
    example: list[str]
    """The column's dates on the first such key's rows (by entity, then period), earliest first."""


REVISIONS_TOLD = 0.9
"""The share of a panel's duplicated keys a column of dates must tell apart to be read as their publication dates."""


def revision_dates(pack: CriteriaPack) -> RevisionDates | None:
    """The first column of the main source, among those the pack does not read, whose values are dates that tell
    apart the rows of `REVISIONS_TOLD` of a panel's duplicated keys, each on or after its period's start (a figure
    and its revisions, each dated by its release); None for another shape, a source read by `published_column` or
    `known_at`, or no such column. Trial 61: 92 revisions of country figures beside a `released` column were only
    a fact, "quarantined for: duplicated key", and check said ok while the revised periods were gaps. One read."""
    src = pack.source
    if src.shape != "panel" or src.published_column is not None or src.known_at is not None or src.long is not None:
        return None
    tried = _unread(source_columns(pack), src)
    if not tried:
        return None
    probe, listed = _with_texts(pack, tried)
    duplicated = _of_duplicated_keys(probe)
    assert duplicated is not None
    key = f"{shapes.ENTITY}, {shapes.PERIOD}"
    dates = {c: f"try_cast({_q(listed[c])} AS TIMESTAMP)" for c in tried}
    told = ", ".join(f"count(*) FILTER (WHERE __told_{i})" for i in range(len(tried)))
    per_key = ", ".join(f"count(DISTINCT {dates[c]}) = count(*) AND bool_and({dates[c]} >= {shapes.PERIOD}) AS "
                        f"__told_{i}, list({_q(listed[c])} ORDER BY {dates[c]}) AS __dates_{i}"
                        for i, c in enumerate(tried))
    sql = f"""
        WITH keys AS (SELECT {key}, {per_key} FROM {TYPED} WHERE {duplicated} GROUP BY ALL)
        SELECT count(*), {told}, {', '.join(f"arg_min(__dates_{i}, ({key})) FILTER (WHERE __told_{i})"
                                             for i in range(len(tried)))} FROM keys"""
    try:
        with opened(probe) as (con, _):
            (row,) = run(con, probe, sql, {}).rows()
    except SourceError:
        return None
    groups, counts, examples = int(row[0]), row[1:1 + len(tried)], row[1 + len(tried):]
    best = next((i for i, n in enumerate(counts) if groups and n >= REVISIONS_TOLD * groups), None)
    if best is None:
        return None
    return RevisionDates(column=tried[best], groups=groups, told=int(counts[best]),
                         example=[str(d) for d in examples[best] or []][:3])


@dataclass(frozen=True)
class EventsSentAgain:
    """A column the pack does not read that is one row's own id within each publication of an events source read
    by `published_column`, some of its ids sent again under a later one (`events_sent_again`)."""

    column: str
    again: int
    """Rows whose id an earlier publication's row already holds."""
    example: tuple[str, list[str]]
    """One such id and its publication dates, earliest first."""


def _all_whole_or_text(value: str) -> str:
    """SQL aggregate: whether every value is a whole number or a text, as an id is (never an amount like 12.5)."""
    number = f"try_cast({value} AS DOUBLE)"
    return f"bool_and({number} IS NULL OR {number} = round({number}))"


def events_sent_again(pack: CriteriaPack) -> EventsSentAgain | None:
    """The first column of an events source read by `published_column`, among those the pack does not read, that
    holds one row's own id within each publication (a whole number or a text, no row of a publication sharing it,
    about one row per value overall) and holds some ids again under a later publication, every row of an id in one
    period: an event sent again, revised, which the pack counts as one more event (trial 63: 100 crash occupants
    re-sent with their outcome revised made a band's 229 occupants 329, and check said ok). None for another shape
    or no such column. One read."""
    src = pack.source
    if src.shape != "events" or src.published_column is None or src.event_id is not None:
        return None
    tried = _unread(source_columns(pack), src)
    if not tried:
        return None
    probe, listed = _with_texts(pack, tried)
    ids = {c: f"nullif({_q(listed[c])}, '')" for c in tried}
    per_column = ", ".join(
        f"count({ids[c]}), count(DISTINCT ({ids[c]}, {shapes.PUBLISHED})), count(DISTINCT {ids[c]}), "
        f"{_all_whole_or_text(ids[c])}" for c in tried)
    rows = f"FROM {TYPED} WHERE {shapes.IN_SCOPE} AND {shapes.PUBLISHED} IS NOT NULL AND {shapes.PERIOD} IS NOT NULL"
    try:
        with opened(probe) as (con, _):
            (counts,) = run(con, probe, f"SELECT {per_column} {rows}", {}).rows()
            for i, column in enumerate(tried):
                n, pairs, distinct, whole = counts[4 * i:4 * i + 4]
                if not n or pairs != n or distinct >= n or 2 * distinct < n or not whole:
                    continue
                found = run(con, probe, f"""
                    SELECT {ids[column]}, list(DISTINCT CAST({shapes.PUBLISHED} AS VARCHAR)
                                               ORDER BY CAST({shapes.PUBLISHED} AS VARCHAR)),
                           count(DISTINCT {shapes.PERIOD}) = 1 AS one_period
                    {rows} AND {ids[column]} IS NOT NULL GROUP BY 1 HAVING count(*) > 1
                    ORDER BY min({shapes.PUBLISHED}), 1""", {}).rows()
                if found and all(one for _, _, one in found):
                    dates = [d.removesuffix(" 00:00:00") for d in found[0][1]]
                    return EventsSentAgain(column=column, again=int(n - distinct), example=(str(found[0][0]), dates))
    except SourceError:
        return None
    return None


@dataclass(frozen=True)
class EventsWrittenTwice:
    """A column the pack does not read that is one row's own id in an events source, some of whose rows are written
    again whole: equal to their id's first row in every column of the source (`events_written_twice`)."""

    column: str
    again: int
    """Rows equal in every column to an earlier row of their id."""
    example: tuple[str, list[int]]
    """One such id and its rows' lines (their `source_row`s), first first."""


_ID_SHARE = 0.9
"""Of an events source's rows, the share whose value in a column is their own at the least, for the column to be a
row's id (`events_written_twice`): a date or an amount repeats far more often."""


def events_written_twice(pack: CriteriaPack) -> EventsWrittenTwice | None:
    """The first column of an events source (no `event_id`, no `published_column`), among those the pack does not
    read, that holds one row's own id (a whole number or a text, `_ID_SHARE` of the rows their own value) and whose
    ids repeat only on rows equal in every column of the source: a batch of events loaded twice, each copy counted
    as one more event (trial 76: copies a feed sent twice made a month's counts and sums double, and check said ok).
    None for another shape, a source wider than `WHOLE_LINE_COLUMNS`, or no such column. One read."""
    src = pack.source
    if src.shape != "events" or src.published_column is not None or src.event_id is not None:
        return None
    columns = source_columns(pack)
    tried = _unread(columns, src)
    if not tried or len(columns) > WHOLE_LINE_COLUMNS:
        return None
    probe, texts = _with_texts(pack, tried)
    ids = {c: f"nullif({_q(texts[c])}, '')" for c in tried}
    per_column = ", ".join(
        f"count({ids[c]}), count(DISTINCT {ids[c]}), {_all_whole_or_text(ids[c])}" for c in tried)
    rows = f"FROM {TYPED} WHERE {shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL"
    try:
        with opened(probe) as (con, _):
            (counts,) = run(con, probe, f"SELECT {per_column} {rows}", {}).rows()
        found = [(c, n - distinct) for i, c in enumerate(tried) for n, distinct, whole in [counts[3 * i:3 * i + 3]]
                 if n and whole and _ID_SHARE * n <= distinct < n]
        if not found:  # (nearly every source: no column of ids that repeat; the whole lines are read no further)
            return None
        column, again = found[0]
        probe, texts = _with_texts(pack, columns)
        rows = f"FROM {TYPED} WHERE {shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL"
        key = f"nullif({_q(texts[column])}, '')"
        line = f"hash(list_value({', '.join(_q(texts[c]) for c in columns)}))"
        with opened(probe) as (con, _):
            repeated = run(con, probe, f"""
                SELECT {key}, list({ROW} ORDER BY {ROW}), count(DISTINCT {line}) {rows} AND {key} IS NOT NULL
                GROUP BY 1 HAVING count(*) > 1 ORDER BY min({ROW})""", {}).rows()
    except SourceError:
        return None
    if not repeated or any(lines > 1 for _, _, lines in repeated):  # an id's rows that differ: revisions, not copies
        return None
    return EventsWrittenTwice(column=column, again=int(again),
                              example=(str(repeated[0][0]), [int(r) for r in repeated[0][1]]))


@dataclass(frozen=True)
class EventIds:
    """How the rows of an events source read by `source.event_id` hold their ids (`event_ids`)."""

    rows: int
    """Dated rows."""
    empty: dict[str, int]
    """Per column of the id, the dated rows with it empty (each such row an event of its own)."""
    otherwise: int
    """Dated rows whose id another row writes otherwise as the same number, with or without leading zeros or a
    `.0` (`007622` and `7622.0` beside `7622`): two events where the source meant one."""
    example: tuple[str, str] | None
    """One such pair of spellings, the first row's first."""
    before_own: int = 0
    """Rows of an event another row of it stands for, published (as written) before their own moment: a correction
    dated before the row it corrects is older than it, and revises nothing."""
    before_example: tuple[str, str, str] | None = None
    """One such row's (id, publication date as written, moment's day)."""
    written_again: int = 0
    """Ids written on more than one dated row (an event and its revisions)."""
    across: int = 0
    """Of those, ids whose rows name more than one entity: a revision moves an event seldom, a figure or a category
    many events share (a delay in minutes, a carrier) names events of every entity."""
    across_example: tuple[str, int, int] | None = None
    """The id written on the most entities' rows: (id, its rows, their entities)."""


_ID_NUMBER = r"'(^|[^0-9.])0+([0-9])', '\1\2', 'g'"
_ID_DECIMALS = r"'[.]0+($|[^0-9])', '\1', 'g'"


def event_ids(pack: CriteriaPack) -> EventIds | None:
    """The ids `source.event_id` reads, in the dated rows of the main source, whatever `where` says of them (a
    revision is read so): how many rows have each column empty, and how many write an id another row writes as the
    same number otherwise (trial 70: a correction release writing its births' ids `007622` or `7622.0` beside the
    first release's `7622` counted each corrected birth twice, and check said ok). None without `event_id`. One read."""
    columns = pack.source.event_id_columns
    if not columns:
        return None
    probe, texts = _with_texts(pack, columns)
    event = shapes.EVENT
    number = f"regexp_replace(regexp_replace({event}, {_ID_NUMBER}), {_ID_DECIMALS})"
    empty = ", ".join(f"count(*) FILTER (WHERE nullif(trim({_q(texts[c])}), '') IS NULL)" for c in columns)
    dated = f"FROM {TYPED} WHERE {shapes.PERIOD} IS NOT NULL"
    try:
        with opened(probe) as (con, _):
            (counts,) = run(con, probe, f"SELECT count(*), {empty} {dated}", {}).rows()
            found = run(con, probe, f"""
                SELECT any_value(first), min({event}) FILTER (WHERE {event} != first),
                       count(*) FILTER (WHERE {event} != first), min({ROW})
                FROM (SELECT {event}, {ROW}, {number} AS same,
                             first({event} ORDER BY {ROW}) OVER (PARTITION BY {number}) AS first
                      {dated} AND {event} IS NOT NULL)
                GROUP BY same HAVING count(DISTINCT {event}) > 1 ORDER BY 4""", {}).rows()
            before = _before_own(con, probe)
            ((again, across, widest),) = run(con, probe, f"""
                SELECT count(*) FILTER (WHERE n > 1), count(*) FILTER (WHERE entities > 1),
                       first([{event}, n::VARCHAR, entities::VARCHAR] ORDER BY entities DESC, {event})
                           FILTER (WHERE entities > 1)
                FROM (SELECT {event}, count(*) AS n, count(DISTINCT {shapes.ENTITY}) AS entities
                      {dated} AND {event} IS NOT NULL GROUP BY {event})""", {}).rows()
    except SourceError:
        return None
    example = (str(found[0][0]), str(found[0][1])) if found else None
    return EventIds(rows=int(counts[0]), empty={c: int(n) for c, n in zip(columns, counts[1:], strict=True)},
                    otherwise=sum(int(n) for _, _, n, _ in found), example=example,
                    before_own=before[0], before_example=before[1], written_again=int(again), across=int(across),
                    across_example=None if widest is None else (str(widest[0]), int(widest[1]), int(widest[2])))


def _before_own(con: duckdb.DuckDBPyConnection, pack: CriteriaPack) -> tuple[int, tuple[str, str, str] | None]:
    """`EventIds.before_own` and its example, over the typed rows on `con` (events dated by a `period_column` and a
    `published_column` only: none otherwise)."""
    if not shapes.observed_first(pack.source):
        return 0, None
    latest = shapes.latest_of_events_sql(pack.source, TYPED, "current_date", "current_date")
    early = f"t.__published_given < t.{shapes.OBSERVED}"
    rows = run(con, pack, f"""
        SELECT count(*) OVER (), t.{shapes.EVENT}, strftime(t.__published_given, '%Y-%m-%d'),
               strftime(t.{shapes.OBSERVED}, '%Y-%m-%d')
        FROM {TYPED} t JOIN ({latest}) e USING ({shapes.EVENT})
        WHERE e.{shapes.LATEST} <> t.{ROW} AND {early} ORDER BY t.{ROW} LIMIT 1""", {}).rows()
    if not rows:
        return 0, None
    n, event, given, moment = rows[0]
    return int(n), (str(event), str(given), str(moment))


KEY_PAIRS_TRIED = 10
"""Pairs of columns `key_completions` tries at most when no one column completes the key (each a read)."""


def _completes(pack: CriteriaPack, columns: list[str]) -> bool:
    """Whether `columns` beside `entity_id` leave no two rows in scope sharing an entity and a period, with entities
    that still recur (at least two dated rows each, on average). A file dated by `known_at` is one row per entity by
    design, so there the columns must recur by themselves instead (a chain, a state: at least two rows each, on
    average), never each row's own number (trial 100: menu items keyed by their name, 7 names each several chains',
    14 rows refused, and check's only word was "quarantined for: duplicated key": no column could complete a key
    whose entities never recur)."""
    keyed = _keyed_by(pack, [*pack.source.entity_columns, *columns])
    duplicates = shapes.duplicates_sql(keyed.source, TYPED)
    assert duplicates is not None
    dated = f"{shapes.IN_SCOPE} AND {shapes.ENTITY} IS NOT NULL AND {shapes.PERIOD} IS NOT NULL"
    once = pack.source.known_at is not None
    try:
        with opened(keyed) as (con, _):
            ((rows, entities, repeated),) = run(con, keyed, f"""
                SELECT count(*) FILTER (WHERE {dated}), count(DISTINCT {shapes.ENTITY}) FILTER (WHERE {dated}),
                       (SELECT count(*) FROM ({duplicates})) FROM {TYPED}""", {}).rows()
        if once and rows and not repeated:
            recurring = _keyed_by(pack, columns)
            with opened(recurring) as (con, _):
                ((entities,),) = run(con, recurring, f"""
                    SELECT count(DISTINCT {shapes.ENTITY}) FILTER (WHERE {dated}) FROM {TYPED}""", {}).rows()
    except SourceError:
        return False
    return bool(rows) and not repeated and 2 * entities <= rows


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
        entities, unmatched, examples, spare, spares = run(con, pack, sql, {}).row(0)
    return JoinIds(entities=entities, unmatched=unmatched, unmatched_examples=list(examples or []), spare=spare,
                   spare_examples=list(spares or []))


def join_ids_padded(pack: CriteriaPack, index: int) -> tuple[int, int, str, str] | None:
    """Rows of the pack's joined table `index` whose numeric id matches no entity as written but one once leading
    zeros are dropped (`0007` beside the source's `7`, or `7` beside its `0007`): (those rows, the joined rows in
    scope, an example id of theirs, the entity's id it meant), or None when there are none. Only such a table's ids
    of a few rows each may miss while its others match: its entities then each keep part of their joined history."""
    entity, scope = shapes.ENTITY, shapes.IN_SCOPE
    sql = f"""
        WITH main AS (SELECT DISTINCT {shapes.slug_sql(entity)} AS slug FROM {TYPED}
                      WHERE {scope} AND {entity} IS NOT NULL),
             bare AS (SELECT ltrim(slug, '0') AS bare, min(slug) AS slug FROM main
                      WHERE regexp_full_match(slug, '[0-9]+') GROUP BY 1),
             joined AS (SELECT {entity} AS slug FROM {join_rows(index)} WHERE {scope} AND {entity} IS NOT NULL),
             missed AS (SELECT joined.slug, bare.slug AS meant FROM joined JOIN bare
                        ON ltrim(joined.slug, '0') = bare.bare
                        WHERE regexp_full_match(joined.slug, '[0-9]+') AND joined.slug NOT IN (SELECT slug FROM main))
        SELECT (SELECT count(*) FROM missed), (SELECT count(*) FROM joined),
               (SELECT arg_min(slug, slug) FROM missed), (SELECT arg_min(meant, slug) FROM missed)"""
    with opened(pack) as (con, _):
        missed, rows, example, meant = run(con, pack, sql, {}).row(0)
    return (missed, rows, example, meant) if missed else None


def join_entity_column(pack: CriteriaPack, index: int, limit: int = 4) -> tuple[str, int, list[str]] | None:
    """A column of the pack's joined table `index` that its key does not read whose values, slugged as candidate ids
    are, are the ids of at least two and half or more of the main source's entities: the column that says whose
    each row is (trial 33: the weather of three airports joined by `every_entity: true` gave every airport the
    three's pooled weather, check ok). Its name, how many entities it names and a few of their ids, or None. Two
    reads of the source."""
    joined = pack.source.join[index]

    absent = Condition.model_validate({"column": _NO_COLUMN, "not_in": [_NO_COLUMN]})
    try:  # (a table joined to every entity has no id column to ask for: a condition asks instead)
        with opened(_with_spec(pack, index, {"where": [*joined.where, absent]})):
            return None
    except SourceError as exc:
        tried = _unread(list(exc.present), joined)
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
            entities = run(con, probe, f"SELECT count(*) FROM ({main})", {}).item()
            found = run(con, probe, counts, {}).rows()
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
        pairs, shifts, by, alike, periods, ma, mb, ja, jb = run(con, pack, sql, {}).row(0)
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
        return {period: latest for period, latest in run(con, pack, sql, {}).rows() if latest is not None}


def stopped_by_entity(pack: CriteriaPack, match: str, text: str,
                      chance: float) -> list[tuple[str, date, int, int, int]]:
    """The entities whose in-scope rows with the SQL `text` filled stop matching the SQL `match` from some period
    on, though rows go on, where the share of their earlier rows that matched makes that run of misses a chance
    below `chance` (the share Laplace-smoothed: a run of matches is no certainty): (entity, the first period after
    the last match, earlier matches, earlier rows, later rows), least likely first."""
    sql = f"""
    WITH c AS (
        SELECT {shapes.ENTITY} AS e, {shapes.PERIOD} AS p, count(*) FILTER (WHERE {match}) AS hits,
               count({text}) AS n
        FROM {TYPED} WHERE {shapes.IN_SCOPE} AND {shapes.PERIOD} IS NOT NULL AND {shapes.ENTITY} IS NOT NULL
        GROUP BY ALL),
    s AS (
        SELECT e, max(p) FILTER (WHERE hits > 0) AS last_hit FROM c GROUP BY e),
    t AS (
        SELECT e, min(p) FILTER (WHERE p > last_hit) AS since,
               sum(hits) FILTER (WHERE p <= last_hit) AS hb, sum(n) FILTER (WHERE p <= last_hit) AS nb,
               sum(n) FILTER (WHERE p > last_hit) AS na
        FROM c JOIN s USING (e) WHERE last_hit IS NOT NULL GROUP BY e)
    SELECT e, since, hb, nb, na FROM t
    WHERE na > 0 AND na * ln(1 - (hb + 1) / (nb + 2)) < ln({chance!r})
    ORDER BY na * ln(1 - (hb + 1) / (nb + 2)), e"""
    with opened(pack) as (con, _):
        return [(str(e), since, int(hb), int(nb), int(na)) for e, since, hb, nb, na in run(con, pack, sql, {}).rows()]


def value_counts(pack: CriteriaPack, value: str, where: str, *, join: int | None = None,
                 limit: int = 3) -> list[str]:
    """The commonest values of the SQL `value` over the typed rows (an internal column: `shapes.written(column)`, a
    condition's text column) among rows matching the SQL `where`, most rows first: examples a problem quotes.
    `join`: a joined table's rows instead of the main source's."""
    table = TYPED if join is None else join_rows(join)
    sql = (f"SELECT {value} AS v, count(*) AS n FROM {table} WHERE ({where}) AND {value} IS NOT NULL "
           f"GROUP BY v ORDER BY n DESC, v LIMIT {int(limit)}")
    with opened(pack) as (con, _):
        return [str(v) for v, _ in run(con, pack, sql, {}).rows()]


def rows_matching(pack: CriteriaPack, wheres: list[str], *, join: int | None = None) -> list[int]:
    """How many typed rows match each SQL condition of `wheres`, in one pass (`join`: a joined table's rows)."""
    if not wheres:
        return []
    table = TYPED if join is None else join_rows(join)
    sql = f"SELECT {', '.join(f'count(*) FILTER (WHERE {w})' for w in wheres)} FROM {table}"
    with opened(pack) as (con, _):
        (row,) = run(con, pack, sql, {}).rows()
    return [int(n) for n in row]
