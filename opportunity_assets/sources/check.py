"""`opportunity check`: a pack against its source's actual data, before any night runs.

The pack's own keys are validated when it loads (criteria.py: names, expressions, templates). Here the data is
read as a night would read it (the latest night the data supports, or `as_of`): the file opens in its format, the
declared columns exist, each numeric column parses, and the facts a new user wants first are counted. Every problem
is one line naming the pack key.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import polars as pl

from opportunity_assets.candidates.quarantine import bad_cells
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.sources.csv_rows import not_utf8_lines
from opportunity_assets.sources.formats import describe_location, infer_format
from opportunity_assets.sources.spec import SourceSpec

MOSTLY_TEXT = 0.5
"""A numeric column with more than this share of its cells in reach not numbers is declared wrongly (a text or
date column): a problem, not a quarantine."""


_GROUPED = re.compile(r"^-?\d{1,3}([,. ']\d{3})+([.,]\d+)?$|^-?\d+,\d+$")
"""A number written with thousands grouped (1,234; 1.234,5) or a decimal comma (4,5)."""
_MISSING_TEXTS = frozenset({"N/A", "n/a", "NaN", "nan", "-", "--", "null", "NULL", "None", ".", "?", "#N/A", "na"})
"""Texts a spreadsheet or database writes for a missing number (`check` suggests `source.na_values` for them)."""

UNPARSED_PERIODS = 0.1
"""A source whose rows in reach have more than this share of periods that do not parse is read with the wrong
period keys (a pattern that fits some values only: `%d/%m/%Y` for 1/13/2002), not with a few bad cells."""


@dataclass(frozen=True)
class CheckReport:
    as_of: date | None
    problems: list[str] = field(default_factory=list)
    """One line each, naming the pack key; empty: the pack can run."""
    facts: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        head = f"{'problems' if self.problems else 'ok'}" + (f" (night {self.as_of})" if self.as_of else "")
        return "\n".join([head, *(f"  problem: {p}" for p in self.problems), *(f"  {f}" for f in self.facts)])


_COLUMN_KEY = re.compile(r"(entity_id|entity_name|_column|\.column|\.columns\.\d+|\.signed\.\d+)$")
"""Source keys whose value is a column name."""


def _naming(spec: Any, path: str) -> Iterator[tuple[str, Any, bool]]:
    """(key, value, written by the user) for every text value under a source spec, `join`s and `aggregates`
    included: where a column name can come from."""
    if isinstance(spec, SourceSpec):
        for name in type(spec).model_fields:
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


def source_problem(pack: CriteriaPack, error: str, *, missing: tuple[str, ...] = (),
                   no_period: bool = False) -> str:
    """A source that could not be read, as one line naming the pack key at fault: the key that names a `missing`
    column (an aggregate's column, the period column), the period keys when `no_period` parses; the source's path
    otherwise."""
    src = pack.source
    if missing:
        wanted = set(missing)
        keys = {v: (k, w) for k, v, w in reversed(list(_naming(src, "source")))
                if v in wanted and _COLUMN_KEY.search(k)}
        period = {"year_column", "month_column", "period_column"}
        if len(keys) == 1:  # one key names what is missing: that key is at fault
            (value, (key, written)), = keys.items()
            return f"key `{key}`: got {value!r}{'' if written else ' (the default)'}; {error}"
        if keys and all(k.rsplit(".", 1)[-1] in period for k, _ in keys.values()) and src.known_at is None:
            named = ", ".join(f"`{k}`" for k, _ in sorted(keys.values()))
            return (f"key `source.period_column`: the period keys {named} name columns the file lacks; {error}; "
                    "a file with no dates is one snapshot: `shape: snapshot` with `source.known_at`")
        if keys:
            named = ", ".join(f"`{k}`" for k, _ in sorted(keys.values()))
            return f"key `source.path`: {error} (named by {named}: is it the right file?)"
    if error.startswith("key `"):  # the reader named the key already
        return error
    if no_period:
        scope = (" (or `source.where` keeps no row: its values are compared as trimmed text, case and all)"
                 if src.where else "")
        if src.known_at is not None:
            return f"key `source.known_at`: got {src.known_at.isoformat()}; {error} (a snapshot is seen from its " \
                   f"known-at date on: expected a date on or before the night)"
        if src.period_column:
            return (f"key `source.period_format`: got {src.period_format!r} for column {src.period_column!r}; "
                    f"{error}: expected a strptime pattern its values parse with (e.g. '%b-%Y' for Mar-2018), "
                    f"or none for ISO dates and quarters like 1998 Q1{scope}")
        return (f"key `source.year_column`: got {src.year_column!r} and `source.month_column` {src.month_column!r}; "
                f"{error}: expected integer year and month columns, or `source.period_column`{scope}")
    return f"key `source.path`: {error}"


def no_period_problem(pack: CriteriaPack, last_night: date) -> str:
    """No row of the source is dated on or before `last_night`: it has no rows, `source.where` keeps none, or no
    period parses."""
    from resources.source import row_counts

    rows, in_scope = row_counts(pack)
    src = pack.source
    if not rows:
        key = "source.query" if src.query else "source.table" if src.format in ("duckdb", "postgres") else \
            "source.path"
        return (f"key `{key}`: {describe_location(pack)} has no rows (a header, or a table, and nothing in it): "
                "expected the data")
    if not in_scope:
        conditions = [w.model_dump(by_alias=True, exclude_none=True) for w in src.where]
        return (f"key `source.where`: got {conditions}; it keeps none of the {rows} rows of "
                f"{describe_location(pack)}: expected conditions some rows meet (values are compared as trimmed "
                "text, case and all)")
    where = pack.source.path or pack.source.table
    return source_problem(pack, f"source {where} has no parseable period on or before {last_night}", no_period=True)


def _periods_unparsed(pack: CriteriaPack, reasons: list[str], seen: int) -> str:
    """Many rows whose period does not parse: the period keys, with an example value."""
    src = pack.source
    example = reasons[0].split(": ", 1)[1].split(";")[0].strip() if ": " in reasons[0] else "?"
    example = example.split("=", 1)[1] if "=" in example else example  # `Date=2/14/2005`: the value
    if src.period_column:
        key, got = "source.period_format", f"{src.period_format!r} for column {src.period_column!r}"
    else:
        key, got = "source.year_column", f"{src.year_column!r} and `source.month_column` {src.month_column!r}"
    return (f"key `{key}`: got {got}; {len(reasons)} of the {seen} rows the night reads have a period that does "
            f"not parse with it (e.g. {example!r}): expected a pattern that parses every row's period (a value that "
            "parses with a day-first and a month-first pattern alike, 1/3/2018, is read as the pattern says: check "
            "the order of day and month)")


def _nothing_published(pack: CriteriaPack, night: date, today: date | None) -> str:
    """No row published by the night: the period keys when no period parses at all, else when data begins."""
    from opportunity_assets.night import last_possible_night
    from resources.source import SourceError, publication_span

    try:
        span = publication_span(pack, last_possible_night(today))
    except SourceError as exc:
        return source_problem(pack, str(exc), missing=exc.missing)
    if span is None:
        return no_period_problem(pack, last_possible_night(today))
    return f"key `source.path`: no row is published by {night}; the first night with data is {span[0]}"


def check_pack(pack: CriteriaPack, as_of: date | None = None, today: date | None = None, *,
               with_facts: bool = True) -> CheckReport:
    """Read the source for `as_of` (default: the latest night it supports) and say what would go wrong; with
    `with_facts`, also what the night would find (a scan: the check before a night, which scans anyway, skips it)."""
    from opportunity_assets.candidates.logic import scan
    from opportunity_assets.night import latest_as_of
    from resources.source import SourceError, january_only, read_snapshot, visible_rows

    try:
        night = as_of or latest_as_of(pack, today)
        # counts over the typed rows before the snapshot, which frees them (`resources.source.kept_open`)
        seen, january = visible_rows(pack, night), pack.grain.name in ("month", "quarter") and january_only(pack)
        snapshot = read_snapshot(pack, night, today=today)
    except SourceProblem as exc:
        return CheckReport(as_of=as_of, problems=[str(exc)])
    except SourceError as exc:
        return CheckReport(as_of=as_of, problems=[source_problem(pack, str(exc), missing=exc.missing)])
    problems = []
    reasons = snapshot.quarantined["reason"].to_list()
    read_rows = snapshot.history.height
    columns = {c: f"source.columns.{i}" for i, c in enumerate(pack.source.columns)} if pack.source.shape != "events" \
        else {a.column: f"source.aggregates.{name}.column" for name, a in pack.source.aggregates.items()
              if a.column is not None}
    read = list(dict.fromkeys([*columns, *pack.columns]))  # an event's own columns, and the panel's
    cells = [bad_cells(r, read) for r in reasons]
    for column, key in columns.items():
        text = sum(1 for c in cells if c.get(column, ("", ""))[1] == "not a number")
        negative = sum(1 for c in cells if c.get(column, ("", ""))[1] == "negative")
        if seen and text / seen > MOSTLY_TEXT:
            problems.append(f"key `{key}`: {column!r}: {text} of {seen} cells the night reads are not numbers; "
                            "expected a numeric column" + (" (list only numeric columns)" if "columns" in key else
                                                           " (for a category, `agg: share` with a `where` "
                                                           "condition counts its share of rows)"))
        elif seen and negative / seen > UNPARSED_PERIODS and column not in pack.source.signed:
            problems.append(f"key `source.signed`: {column!r}: {negative} of {seen} cells the night reads are "
                            f"negative, and each is quarantined: expected {column!r} in `source.signed` if its "
                            "values may be below zero (a delay, a change), else a column of counts or amounts")
    for i, joined in enumerate(pack.source.join):
        present = [c for c in joined.columns if c in snapshot.history.columns]
        if present and snapshot.history.height and all(
                snapshot.history[c].null_count() == snapshot.history.height for c in present):
            problems.append(f"key `source.join.{i}.entity_id`: got {joined.entity_id!r}; no row of the joined "
                            f"table matched an entity and period of the source ({', '.join(present)} empty for all "
                            f"{snapshot.metrics.height} entities): expected the values of `source.entity_id` "
                            f"({pack.source.entity_id!r}), e.g. {snapshot.metrics['entity_name'].head(2).to_list()}")
    duplicated = sum(1 for r in reasons if r.startswith("duplicated key"))
    many_duplicated = duplicated and duplicated > MOSTLY_TEXT * seen
    unparsed = [r for r in reasons if r.startswith("period unparseable")]
    many_unparsed = len(unparsed) > UNPARSED_PERIODS * seen
    if snapshot.anchor_period is None and not many_duplicated and not many_unparsed:
        problems.append(_nothing_published(pack, night, today))  # (many duplicated keys: the grain's problem)
    if many_unparsed:
        problems.append(_periods_unparsed(pack, unparsed, seen))
    if january:
        src = pack.source
        column = f"`source.period_column` {src.period_column!r}" if src.period_column else \
            f"`source.month_column` {src.month_column!r}"
        problems.append(f"key `source.grain`: got {src.grain!r}; every row of {column} falls in a January, year "
                        "after year: expected `grain: year` for a column of years (a finer grain puts every row "
                        "in January)")
    if many_duplicated:
        src = pack.source
        problems.append(f"key `source.grain`: got {src.grain!r}; {duplicated} rows share an entity and a "
                        f"{src.grain} with another row (duplicated keys): expected the grain of one row per entity "
                        "and period, or `shape: events` (rows to aggregate) or `shape: snapshot` (observations)")
    if snapshot.history.height:
        reach = int(snapshot.history.select(pl.col("periods_ago").max()).item())
        grain = pack.grain
        for name, spec in pack.metrics.items():
            if spec.agg not in ("derived", "age_days") and spec.window[1] > reach:
                problems.append(f"key `metrics.{name}.window`: got {list(spec.window)}; expected a window within "
                                f"the source's history: on {night} no entity has more than {reach + 1} "
                                f"{grain.plural} published (windows count {grain.plural}, `source.grain`)")
    if not with_facts:
        return CheckReport(as_of=night, problems=problems)
    found, report = scan(pack, night, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    gaps = Counter(gap.split(":")[0] for c in found for gap in c.data_gaps if ":" in gap)
    entities, quarantined = snapshot.metrics.height, snapshot.quarantined.height
    latest = "none" if snapshot.anchor_period is None else pack.grain.label(snapshot.anchor_period)
    facts = [f"{entities} entit{'y' if entities == 1 else 'ies'}, {read_rows} rows in reach, latest period "
             f"{latest}, {quarantined} quarantined row{'' if quarantined == 1 else 's'}",
             f"{report.passed_filters} pass the hard filters, {report.went_on} would go on "
             f"(cap {pack.caps.max_candidates})"]
    facts += [n for n in report.notes if n.startswith("entity keys ")]  # one id for keys spelled apart
    written = [text for c in cells for text, problem in c.values() if problem == "not a number"]
    grouped = next((w for w in written if _GROUPED.match(w)), None)
    if grouped is not None:
        facts.append(f"cells such as {grouped!r} are quarantined as not numbers: if the source groups thousands or "
                     "writes a decimal comma, say so in `source.thousands_separator` / `source.decimal_separator`")
    tokens = Counter(w for w in written if w in _MISSING_TEXTS)
    if tokens:
        facts.append("cells written " + ", ".join(f"{t!r} ({n})" for t, n in tokens.most_common(4)) + " are "
                     "quarantined as not numbers: if they mean a missing number, list them in `source.na_values`")
    if reasons:
        top = Counter(r.split(" (")[0].split(":")[0] for r in reasons).most_common(3)
        facts.append("quarantined for: " + ", ".join(f"{why} ({n})" for why, n in top))
    for source in (pack.source, *pack.source.join):
        if source.format != "postgres" and infer_format(pack.path_of(source), source.format) == "csv":
            recoded = not_utf8_lines(pack.path_of(source))
            if recoded:
                lines = ", ".join(map(str, recoded[:3])) + (", ..." if len(recoded) > 3 else "")
                facts.append(f"{len(recoded)} lines of {pack.path_of(source).name} are not UTF-8 text, read as "
                             f"Windows-1252 (line {lines}): save the file as UTF-8 if a name reads wrong")
    if gaps:
        facts.append("metrics with gaps: " + ", ".join(f"{name} ({n} entities)" for name, n in gaps.most_common(5)))
    return CheckReport(as_of=night, problems=problems, facts=facts)
