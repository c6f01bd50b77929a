"""`opportunity check`: the tables a pack joins to its source (`source.join`), each held against the source's
entities and periods (pure over the night's counts and rows): ids that match none of the source's (or only with
leading zeros), a join by entity and period whose periods move, rows of no period, duplicated keys, a table
published later than the night, one holding every entity. Each is one line naming `source.join.N`'s key."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

import polars as pl

from opportunity_assets.candidates.quarantine import bad_cells
from opportunity_assets.check import candidates as check_candidates
from opportunity_assets.check.cells import MOSTLY_TEXT, cell_problems, numeric_columns
from opportunity_assets.check.facts import cells_refused
from opportunity_assets.check.patterns import suggested_pattern
from opportunity_assets.check.periods import (
    UNPARSED_PERIODS,
    not_dates,
    not_publication_dates,
    not_years,
    written_periods,
)
from opportunity_assets.check.reading import no_rows_read, source_problem, text_compared_with_numbers
from opportunity_assets.check.written import period_key_of, periods_written_otherwise
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.periods import GRAINS, Grain
from opportunity_assets.sources.formats import join_label
from opportunity_assets.sources.probes import (
    duplicate_facts,
    join_entity_column,
    join_ids,
    join_ids_padded,
    join_shift,
)
from opportunity_assets.sources.reading import SourceError
from opportunity_assets.sources.spec import SourceSpec

if TYPE_CHECKING:
    from opportunity_assets.sources.facts import SourceFacts, TableFacts
    from opportunity_assets.sources.snapshot import SourceSnapshot


def join_undated_at_fault(pack: CriteriaPack, joins_undated: list[tuple[SourceSpec, list[str], str]],
                           problems: list[str]) -> list[str]:
    """Per joined table dated by year, month, ... columns whose few rows of no period (`joins_undated`: the table,
    their reasons, its key) leave a metric unknown for every candidate (a filter's or an input's problem says "rows
    mended", naming them): the period key they are written otherwise in, which `one_cause_once` then says alone.
    Trial 33: the weather read with `day_column: hour` (hour 0, no day) was blamed on the filter it blanked."""
    return [join_rows_undated(pack, joined, reasons, within) for joined, reasons, within in joins_undated
            if any(check_candidates.says_rows_mended(p) and f"join {joined.table}: period unparseable" in p
                   for p in problems)]


def join_rows_undated(pack: CriteriaPack, joined: SourceSpec, reasons: list[str], within: str) -> str:
    """A joined table's rows of no period (`reasons`), as one line naming the period key they are written otherwise
    in (`join_undated_at_fault`; on a source of fewer entities, a warning)."""
    key, column = period_key_of(joined, reasons)
    said = periods_written_otherwise(pack, reasons, within)
    return (f"key `{within}.{key}`: got {column!r}; {said} (each leaves its "
            f"entity's {', '.join(joined.columns)} unknown on every night, as it may lie in any window)")


def _no_id_met(pack: CriteriaPack, index: int) -> bool:
    """Whether no entity of the main source matches an id of the joined table `index`: ids of another kind (ISO
    codes against names), which its duplicated keys, if any, are not the first thing to mend (trial 61: two rows of
    `cze` in one year were told first, the user left to learn later that no code matched any name). A table joined
    to `every_entity` has no ids to meet (trial 102: a federal minimum wage by the month under `grain: year`, its 12
    rows a year refused as duplicated keys, was told "none of its periods is one of the source's")."""
    if pack.source.join[index].every_entity:
        return False
    ids = join_ids(pack, index)
    return bool(ids.entities) and ids.unmatched == ids.entities


def join_keys_duplicated(pack: CriteriaPack, index: int, duplicated: int, present: list[str]) -> str:
    """A joined table most of whose rows (or every row that would match) are refused as duplicated keys: its key at
    fault, named in the join. Trial 25: a table of months joined to a yearly panel (12 rows per state and year) was
    told "none of its rows lies in a period the source has", naming its `year_column`. Rows of several dates in one
    period are a grain finer than the source's, which a join cannot have: its `shape` (each period's latest, or its
    rows aggregated); rows of one period as written, its `entity_id` (or rows sent twice)."""

    joined, within = pack.source.join[index], f"source.join.{index}"
    grain = Grain(joined.grain)  # the join's own: the source's, or a coarser one it declares
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
    example = f"e.g. {copies} rows in {grain.label(period)}" if joined.every_entity else \
        f"e.g. {copies} rows of {entity!r} in {grain.label(period)}"
    shared = f"a {grain.name}" if joined.every_entity else f"an entity and a {grain.name}"  # (one series: no ids)
    if facts.finer * 2 > facts.groups:  # rows of several dates in one period: finer than the source's grain
        others = " or ".join(s for s in ("`shape: snapshot` (each period's latest row)",
                                         "`shape: events` with `aggregates` (its rows aggregated)")
                             if not s.startswith(f"`shape: {joined.shape}`"))
        if grain != pack.grain:
            return (f"key `{within}.grain`: got {joined.grain!r}; {duplicated} rows of the joined table share "
                    f"{shared} with another row ({example}, dated apart within it), each refused as "
                    f"a duplicated key, {gaps}: its rows come more often than its `grain` says: expected the grain "
                    f"they come in, {finer_grains(pack.grain, grain)} (each {pack.grain.name} takes the latest such "
                    f"period's figure known on the night), or {others}")
        return (f"key `{within}.shape`: got {joined.shape!r}; {duplicated} rows of the joined table share "
                f"{shared} with another row ({example}, dated apart within it), each refused as a "
                f"duplicated key, {gaps}: a joined table is read in the source's grain (`grain: {grain.name}`): "
                f"expected one row per entity and {grain.name}, or {others}")
    at = "" if written is None else f", {written!r} each"
    if joined.every_entity:  # one series: no `entity_id` to name or add (trial 123: "`entity_id`: got None")
        return (f"key `{within}.every_entity`: got true; {duplicated} rows of the joined table share {shared} with "
                f"another row ({example}{at}), each refused as a duplicated key, {gaps}: expected one row per "
                f"{grain.name} of the series: a `{within}.where` keeping one series, or each row once (a period sent "
                "twice?)")
    return (f"key `{within}.entity_id`: got {joined.entity_id!r}; {duplicated} rows of the joined table share "
            f"{shared} with another row ({example}{at}), each refused as a duplicated key, {gaps}: "
            f"expected one row per entity and period: an `entity_id` of the columns that tell the rows apart, a "
            f"`{within}.where` keeping one series, or each row once (a period sent twice?)")


def finer_grains(source: Grain, joined: Grain) -> str:
    """The grains from the source's up to (not including) a join's coarser one, in words: "`week` or `month`"."""
    names = [f"`{g}`" for g in GRAINS[GRAINS.index(source.name):GRAINS.index(joined.name)]]
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 2 else names)


def ids_apart(pack: CriteriaPack, index: int) -> tuple[list[str], list[str]]:
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


def ids_padded(pack: CriteriaPack, index: int) -> list[str]:
    """A warning naming the join's `entity_id` when some of its rows' numeric ids match an entity only once leading
    zeros are dropped (`0007` for `7`): those rows join no entity, their columns gaps where they lie, while the
    entity's other rows match, so no entity is unmatched and `ids_apart` says nothing. Trial 54: half a joined
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


def join_periods_unparsed(pack: CriteriaPack, index: int, table: TableFacts, undated: Sequence[str],
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


def join_moved(pack: CriteriaPack, index: int) -> list[str]:
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


def join_published_later(pack: CriteriaPack, night: date, anchor: date | None, counted: SourceFacts,
                          problems: list[str]) -> tuple[str, set[str]] | None:
    """A joined table whose rows of the source's latest period tonight are published after the night (a longer lag
    than the source's): a required input or a filter's metric with no value for any candidate, where it reads the
    table's columns, is that, said naming the joined table's dating key and the first night that reads them (trial
    27: traffic published 120 days after the year, costs 90, and the default night's inputs were "0 of 1 years of
    output filled in 1984": the rows were there, not yet known); with the metrics it explains. A metric of the
    source's own columns is not (trial 40: temperatures written '72 F' left the warming unknown, and a yearly
    population table, lagged but read by a window that reached its rows, was blamed instead)."""
    reading = {m for p in problems if (m := read_metric(pack, p)) is not None}
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
        period, published = Grain(joined.grain).label(table.unseen[0]), table.unseen[1].isoformat()
        own = "" if pack.source.published_column or pack.source.known_at else \
            f"; the source's is {pack.source.publication_lag_days} days"
        sooner = f"(or, if the table is known sooner, the lag it is published with{own})"
        if table.unseen[0] < anchor:  # unseen since an earlier period: the latest's rows come later still
            return (f"key `source.join.{i}.{key}`: got {got}; the joined table {joined.table!r} "
                    f"{_published_to(joined, table, night)}, its rows from {period} on after the night (the first "
                    f"on {published}), so its columns ({', '.join(joined.columns)}) have no value in "
                    f"{pack.grain.label(anchor)}, the source's latest period, for any entity: expected a night on "
                    f"which its {pack.grain.label(anchor)} rows are published {sooner}"), blamed
        return (f"key `source.join.{i}.{key}`: got {got}; the joined table {joined.table!r} has rows of {period}, the "
                f"source's latest period on {night}, but the first is published on {published}, after the night, so "
                f"its columns ({', '.join(joined.columns)}) have no value in {period} for any entity: expected a "
                f"night on or after {published} {sooner}"), blamed
    return None


def read_metric(pack: CriteriaPack, problem: str) -> str | None:
    """The metric a problem of a key that reads one is about (`READING_KEYS`: a required input, a hard filter's
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


def _published_to(joined: SourceSpec, table: TableFacts, night: date) -> str:
    """What the night reads of a joined table published late: its periods up to the latest published. (Trial 36: a
    lag of 900 days said the table "has rows of 1996, the source's latest period", which was 1998: 1996 was only
    the first period unseen.)"""
    if table.periods is None:
        return f"has no row published by {night}"
    return f"is published only to {Grain(joined.grain).label(table.periods[1])} on {night}"


def join_unmatched(pack: CriteriaPack, index: int, night: date, table: TableFacts, present: list[str],
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
        return no_rows_read(pack, within, joined, empty) or (
            f"key `{within}.path`: {where} has no rows (a header, or a table, and nothing in it; {empty}): "
            "expected the joined table's data")
    if not table.in_scope:
        if text_compared := text_compared_with_numbers(pack, within, joined, table):
            return text_compared[0]
        conditions = [w.model_dump(by_alias=True, exclude_none=True) for w in joined.where]
        compared = "values are compared as trimmed text, case and all"
        if all(w.op is not None for w in joined.where):  # (trial 118: `year >= 1983` over `81`..`87`, told text)
            compared = "numbers compared by `op`: is each `value` in the column's own unit?"
        return (f"key `{within}.where`: got {conditions}; it keeps none of the {table.rows} rows of {where}: "
                f"expected conditions some rows meet ({compared})")
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
            def span(grain: Grain, first: date, last: date) -> str:
                return f"{grain.label(first)} to {grain.label(last)}"

            return (f"key `{within}`: got table {joined.table!r} ({where}); its periods run "
                    f"{span(Grain(joined.grain), *table.periods)} and the source's {span(pack.grain, *spans)}, "
                    f"apart ({empty}): expected a joined table covering the source's periods")
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


def every_entity_held(pack: CriteriaPack, index: int) -> str | None:
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


@dataclass(frozen=True)
class JoinedFindings:
    """What the check finds of the pack's joined tables, table by table in `source.join`'s order."""

    problems: list[str]
    """Each a line naming a `source.join.N` key: cells refused, keys duplicated, periods or ids matching none."""
    warnings: list[str]
    """Ids matching only with leading zeros, a join by entity and period whose periods move."""
    facts: list[str]
    """Ids apart that a few rows' spelling explains (the night goes on)."""
    undated: list[tuple[SourceSpec, list[str], str]]
    """Per table dated by year, month, ... columns with a few rows of no period: the table, their reasons (less its
    label) and its key, told once the night's candidates show what they leave unknown (`join_undated_at_fault`)."""


def joined_tables(pack: CriteriaPack, night: date, counted: SourceFacts, snapshot: SourceSnapshot,
                  reasons: list[str], mistaken_bounds: list[str], *, own_undated: bool) -> JoinedFindings:
    """Each joined table held against the night's read: its cells refused (`cell_problems` over `reasons`, the
    night's quarantine reasons, and bounds in another unit among `mistaken_bounds`; a few told as facts by
    `cells_refused`, naming the join's keys), then the first of: most of its
    keys duplicated, most of its periods unparsed, its columns empty on every row the source kept (no id or period
    matched: `join_unmatched`, told beside the main source's own rows of no period when `own_undated`), one table
    holding every entity, ids apart or padded."""
    problems: list[str] = []
    warnings: list[str] = []
    facts: list[str] = []
    undated: list[tuple[SourceSpec, list[str], str]] = []
    history = snapshot.history
    for i, joined in enumerate(pack.source.join):
        label = f"{join_label(pack, joined)}: "
        within, table = f"source.join.{i}", counted.tables[i + 1]
        joined_columns = numeric_columns(joined, within)
        own = [r.removeprefix(label) for r in reasons if r.startswith(label)]
        cells = [bad_cells(r, [*joined_columns, *joined.columns]) for r in own]
        mistaken = cell_problems(joined, joined_columns, cells, table.visible, within)
        problems += mistaken
        separators_said = any(p.startswith((f"key `{within}.decimal_separator`", f"key `{within}.thousands_separator`"))
                              for p in mistaken)
        facts += cells_refused(joined, cells, joined_columns, table.visible, mistaken,
                               separators_said=separators_said, within=within)
        mistaken += [p for p in mistaken_bounds if p.startswith(f"key `{within}.bounds.")]  # its cells refused
        present = [c for c in joined.columns if c in history.columns]
        join_undated = [r for r in own if r.startswith("period unparseable")]
        all_empty = bool(present and history.height and all(
            history[c].null_count() == history.height for c in present))
        duplicated = sum(1 for r in own if r.startswith("duplicated key"))
        if join_undated and joined.year_column and joined.wide is None and not mistaken:
            undated.append((joined, join_undated, within))
        if not mistaken and duplicated and (all_empty or duplicated > MOSTLY_TEXT * table.in_scope) \
                and not (all_empty and _no_id_met(pack, i)):  # (ids of another kind: `join_unmatched` says that)
            problems.append(join_keys_duplicated(pack, i, duplicated, present))
        elif not mistaken and joined.period_column and len(join_undated) > UNPARSED_PERIODS * table.in_scope:
            # many of its periods unparsed: the rest, read another way (`2007-08` a month), may meet the wrong ones
            problems.append(join_periods_unparsed(pack, i, table, join_undated, present if all_empty else []))
        elif present and history.height and not mistaken and all_empty:
            problems += filter(None, [join_unmatched(pack, i, night, table, present, snapshot.metrics,
                                                     own_undated, counted.tables[0].periods)])
        elif table.in_scope and joined.every_entity:
            problems += filter(None, [every_entity_held(pack, i)])
        elif table.in_scope:
            apart, fact = ids_apart(pack, i)
            problems += apart
            facts += fact
            warnings += [] if apart or fact else ids_padded(pack, i)
            warnings += [] if pack.source.joins_by_entity_only[i] else join_moved(pack, i)
    return JoinedFindings(problems, warnings, facts, undated)
