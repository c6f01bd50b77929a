"""`opportunity check`: a source that cannot be read, or reads other than its pack says, told as the pack key at
fault (pure): the read's error said as `source_problem` (a column missing, a table absent, a file of no rows), a
source with no parseable period, JSON keys spelt otherwise than the pack's columns, rows published before the
period they describe, and text compared with numbers. Each is one line naming the key, the value and what was
expected."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import TYPE_CHECKING, Any

import polars as pl

from opportunity_assets.check.cells import (
    MOSTLY_TEXT,
    numbers_dressed,
    separator_problem,
)
from opportunity_assets.check.periods import (
    commonest_values,
    not_dates,
    not_parsed_by,
    not_publication_dates,
    not_years,
    spec_at,
)
from opportunity_assets.check.values import (
    listed_values_unmatched,
    long_names_unmatched,
)
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.periods import Grain
from opportunity_assets.sources import shapes
from opportunity_assets.sources.connection import SCRATCH_FULL, opened
from opportunity_assets.sources.csv_rows import WRONG_WIDTH, read_line
from opportunity_assets.sources.facts import source_facts
from opportunity_assets.sources.formats import csv_delimiter, describe_location, join_label, respelt_in
from opportunity_assets.sources.probes import csv_file, names_as_values
from opportunity_assets.sources.reading import quote_identifier
from opportunity_assets.sources.sniff import infer_format
from opportunity_assets.sources.spec import SourceSpec

if TYPE_CHECKING:
    from opportunity_assets.sources.facts import SourceFacts, TableFacts


_COLUMN_KEY = re.compile(r"((entity_id|entity_name|event_id)(\.\d+)?|_column|\.column|\.columns\.\d+|"
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
        if keys and src.wide is not None and all(k.startswith(f"{within}.wide.columns.") for k, _ in keys.values()) \
                and all(f"for {v!r}" in error for v in keys):
            # every header listed has a close match in the file (R's `X2012` for `2012`): the list's spelling, not
            # the file, is at fault (trial 62 was asked "is it the right file?")
            pattern = (" (`period_format` reads a period from a header written with more than its period)"
                       if src.wide.across == "period" else "")
            return (f"key `{within}.wide.columns`: got {[c for c in src.wide.columns if c in wanted]}; {error}: "
                    f"expected the headers as the file writes them{pattern}")
        if keys:
            named = ", ".join(f"`{k}`" for k, _ in sorted(keys.values()))
            if src.query:  # (no `path` to blame, or a folder's files the query reads: the SELECT is at fault)
                return f"key `{within}.query`: {error} (named by {named}: does the SELECT keep them?)"
            if src.format == "postgres":
                return f"key `{within}.table`: {error} (named by {named}: is it the right table?)"
            return f"key `{within}.path`: {error} (named by {named}: is it the right file?)"
    if error.startswith(("key `", SCRATCH_FULL)):  # the reader named the key already, or none is at fault
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


def no_rows_read(pack: CriteriaPack, within: str, spec: SourceSpec, empty: str = "") -> str | None:
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


def _every_line_too_wide(pack: CriteriaPack) -> str | None:
    """A CSV file none of whose lines is read, each refused for its field count (`csv_rows`: "5 fields, expected 4
    (the header's)"), in one line naming `source.path` with the first such line; None otherwise. Trial 118: names
    holding a comma unquoted (`Subject 1, 79.6 kg`), or fractional seconds after a comma (`08:15:30,250`), made every
    line a field too many, and check said the file "has no rows (a header, or a table, and nothing in it)"."""
    path = csv_file(pack)
    if path is None:
        return None
    with opened(pack) as (_, rejected):
        wide = [r for r in rejected if WRONG_WIDTH.match(r.reason)]
    if not wide:
        return None
    first = wide[0]
    text = read_line(path, first.line)
    delimiter = csv_delimiter(path, pack.source.delimiter)
    return (f"key `source.path`: {describe_location(pack)} has no row read: every one of its {len(wide)} lines is "
            f"refused for its field count (line {first.line}, {text!r}: {first.reason}): a field holding the "
            f"delimiter {delimiter!r} unquoted (a name such as 'Springfield, IL', a decimal comma, fractional "
            f"seconds written after a comma)? expected such a field in double quotes, or the file's own `delimiter`")


def no_period_problem(pack: CriteriaPack, last_night: date) -> str:
    """No row of the source is dated on or before `last_night`: it has no rows, `source.where` keeps none, no
    period parses, or no publication date does (`source.published_column`)."""

    facts = source_facts(pack, last_night).tables[0]
    rows, in_scope = facts.rows, facts.in_scope
    src = pack.source
    if not rows:
        return no_rows_read(pack, "source", src) or _every_line_too_wide(pack) or (
            f"key `source.path`: {describe_location(pack)} has no rows (a header, or a table, and nothing in it): "
            "expected the data")
    if not in_scope:
        if text_compared := text_compared_with_numbers(pack, "source", src, facts):
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


def before_the_night(pack: CriteriaPack, facts: SourceFacts) -> list[str]:
    """What the counts over the typed rows show before any night is read (`facts.source_facts`): a numeric
    `where` comparison over a column of text, and rows published before their period ends: most rows, or most
    periods' first estimate among their revisions (trial 25: each quarter's first estimate published before the
    quarter ended, half the rows, was said ok)."""
    problems = []
    for (within, spec), table in zip(pack.source.keyed, facts.tables, strict=True):
        problems += text_compared_with_numbers(pack, within, spec, table)
        problems += _published_before_observed(within, spec, table)
        keys = min(table.seen_keys or table.seen_dated, table.seen_dated)
        if spec.published_column and spec.shape == "panel" and keys and \
                table.early > MOSTLY_TEXT * keys and table.early_example is not None:
            period, published = table.early_example
            revised = f" (of {keys} entity-periods, each with its revisions)" if keys < table.seen_dated else ""
            problems.append(
                f"key `{within}.published_column`: got {spec.published_column!r}; {table.early} of the "
                f"{table.seen_dated} rows the night reads{revised} have published_at before the period it describes "
                f"ends (e.g. {Grain(spec.grain).label(period)} published {published.isoformat()}): a look-ahead (a "
                "figure for a period is known once the period is over): expected the date each row became known, or no "
                "`published_column` (a row is then known `publication_lag_days` after its period ends)")
        elif (thin := _early_latest_period(pack, within, spec, table, facts.held)) is not None:
            problems.append(thin)
    return problems


def _early_latest_period(pack: CriteriaPack, within: str, spec: SourceSpec, table: TableFacts,
                         held: list[tuple[date, int]]) -> str | None:
    """A panel's latest period the night sees made by a few rows published before their period ended, too few
    for the look-ahead above, that fewer than half the entities of the period before have: each is read from its
    period's end, but the other entities' windows count back from it, every metric a gap (trial 79: 20 of 738
    firms' figures for 1985 dated 1984-06-30 made 1985 the latest period of the night of 1986-01-31, when the others'
    were published in April, and check said ok with 718 gaps)."""
    if within != "source" or not spec.published_column or spec.shape != "panel" or len(held) < 2 or \
            table.early_example is None or table.early_last != held[-1][0] or 2 * held[-1][1] >= held[-2][1]:
        return None
    grain = pack.grain
    (last, few), (before, many) = held[-1], held[-2]
    period, published = table.early_example
    return (f"key `{within}.published_column`: got {spec.published_column!r}; {table.early} of the "
            f"{table.seen_dated} rows the night reads have published_at before the period they describe ends (e.g. "
            f"{grain.label(period)} published {published.isoformat()}), and the night's latest {grain.name}, "
            f"{grain.label(last)}, is one only {few} of the entities have a row of ({many} have "
            f"{grain.label(before)}), so the other entities' windows count back from a {grain.name} they have no row "
            f"of, each metric a gap: expected the date each row became known (a figure is published once its period "
            f"is over), or a night once most entities' {grain.label(last)} is published")


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


def text_among_numbers_compared(pack: CriteriaPack, facts: SourceFacts) -> list[str]:
    """Warnings: a numeric `where` comparison over a column of numbers with some cells of text, fewer than
    `text_compared_with_numbers` refuses. Each such row fails the comparison unread, out of the night or the
    aggregate, with no line in the quarantine (trial 125: a tenth of survey answers coded 0/1 exported as 'yes' and
    'no' under `{column: abany, op: ">=", value: 0}` read fewer answers and a lower share, and check said ok)."""
    warnings = []
    for (within, spec), table in zip(pack.source.keyed, facts.tables, strict=True):
        for key, condition, column in shapes.numeric_conditions(spec):
            texts, rows = table.texts[key]
            if not texts or texts > MOSTLY_TEXT * rows:
                continue
            examples = sorted(commonest_values(pack, within, quote_identifier(column),
                                               f"try_cast({quote_identifier(column)} AS DOUBLE) IS NULL", limit=4))
            written = condition.model_dump(by_alias=True, exclude_none=True)
            warnings.append(
                f"key `{within}.{key}`: got {written}; {texts} of {rows} cells of {condition.column!r} are text, not "
                f"numbers (e.g. {examples}), which a numeric comparison (`op` {condition.op!r}) never meets, so their "
                "rows fail it unread: expected numbers in every cell (the text recoded, or listed in "
                f"`{within}.na_values` if it means no value), or `in: [...]` listing the values to match, compared as "
                "trimmed text")
    return warnings


def text_compared_with_numbers(pack: CriteriaPack, within: str, spec: SourceSpec, table: TableFacts) -> list[str]:
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
            separated = separator_problem(spec, within, condition.column, examples, texts, rows)
            if separated is not None:  # numbers with a separator: the key that reads them, once
                if condition.column not in shapes.cell_columns(spec):  # (else its own column's line says it)
                    problems.append(separated)
                continue
            problems.append(
                f"key `{within}.{key}`: got {written}; {condition.column!r} holds text, not numbers ({texts} of "
                f"{rows} cells, e.g. {examples}): a numeric comparison (`op` {condition.op!r}) matches none of "
                f"them, so every row would fail it: expected `in: [...]` (or `not_in`) listing the values to "
                "match, compared as trimmed text")
    return problems
