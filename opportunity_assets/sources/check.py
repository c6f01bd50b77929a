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

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.sources.spec import SourceSpec

MOSTLY_TEXT = 0.5
"""A numeric column with more than this share of its cells in reach not numbers is declared wrongly (a text or
date column): a problem, not a quarantine."""


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


def _not_a_number(reason: str, column: str) -> bool:
    """Whether a quarantine reason says this column's cell is not a number (reasons list cells as `column X: …`)."""
    marker = f"column {column}: "
    return marker in reason and "is not a number" in reason.split(marker, 1)[1].split(";")[0]


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
    """No period in the source parses on or before `last_night`."""
    where = pack.source.path or pack.source.table
    return source_problem(pack, f"source {where} has no parseable period on or before {last_night}", no_period=True)


def _periods_unparsed(pack: CriteriaPack, reasons: list[str], read: int) -> str:
    """Many rows whose period does not parse: the period keys, with an example value."""
    src = pack.source
    example = reasons[0].split(": ", 1)[1].split(";")[0].strip() if ": " in reasons[0] else "?"
    example = example.split("=", 1)[1] if "=" in example else example  # `Date=2/14/2005`: the value
    if src.period_column:
        key, got = "source.period_format", f"{src.period_format!r} for column {src.period_column!r}"
    else:
        key, got = "source.year_column", f"{src.year_column!r} and `source.month_column` {src.month_column!r}"
    return (f"key `{key}`: got {got}; {len(reasons)} rows in reach have a period that does not parse (e.g. "
            f"{example!r}), beside {read} that do: expected keys every row's period parses with (a value that "
            f"parses with a day-first and a month-first pattern alike is read as the pattern says)")


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


def check_pack(pack: CriteriaPack, as_of: date | None = None, today: date | None = None) -> CheckReport:
    """Read the source for `as_of` (default: the latest night it supports) and say what would go wrong."""
    from opportunity_assets.candidates.logic import scan
    from opportunity_assets.night import latest_as_of
    from resources.source import SourceError, read_snapshot

    try:
        night = as_of or latest_as_of(pack, today)
        snapshot = read_snapshot(pack, night, today=today)
    except SourceProblem as exc:
        return CheckReport(as_of=as_of, problems=[str(exc)])
    except SourceError as exc:
        return CheckReport(as_of=as_of, problems=[source_problem(pack, str(exc), missing=exc.missing)])
    problems = []
    reasons = snapshot.quarantined["reason"].to_list()
    read_rows = snapshot.history.height
    for column in pack.columns:
        bad = sum(1 for r in reasons if _not_a_number(r, column))
        cells = read_rows
        if cells and bad / cells > MOSTLY_TEXT:
            problems.append(f"key `source.columns`: {column!r}: {bad} of {cells} cells in reach are not numbers; "
                            "expected a numeric column (list only numeric columns)")
    for name, aggregate in pack.source.aggregates.items():
        raw = aggregate.column
        if raw is None or name not in snapshot.history.columns or not snapshot.history.height:
            continue
        bad = sum(1 for r in reasons if _not_a_number(r, raw))
        if bad and snapshot.history[name].null_count() == snapshot.history.height:
            problems.append(f"key `source.aggregates.{name}.column`: got {raw!r}; {bad} rows in reach are not "
                            f"numbers there and no entity has a value of {name}: expected a numeric column (for a "
                            "category, `agg: share` with a `where` condition counts its share of rows)")
    for i, joined in enumerate(pack.source.join):
        present = [c for c in joined.columns if c in snapshot.history.columns]
        if present and snapshot.history.height and all(
                snapshot.history[c].null_count() == snapshot.history.height for c in present):
            problems.append(f"key `source.join.{i}.entity_id`: got {joined.entity_id!r}; no row of the joined "
                            f"table matched an entity and period of the source ({', '.join(present)} empty for all "
                            f"{snapshot.metrics.height} entities): expected the values of `source.entity_id` "
                            f"({pack.source.entity_id!r}), e.g. {snapshot.metrics['entity_name'].head(2).to_list()}")
    duplicated = sum(1 for r in reasons if r.startswith("duplicated key"))
    many_duplicated = duplicated and duplicated > MOSTLY_TEXT * (duplicated + read_rows)
    if snapshot.anchor_period is None and not many_duplicated:  # every row a duplicated key: the grain's problem
        problems.append(_nothing_published(pack, night, today))
    unparsed = [r for r in reasons if r.startswith("period unparseable")]
    if len(unparsed) > UNPARSED_PERIODS * (len(unparsed) + read_rows):
        problems.append(_periods_unparsed(pack, unparsed, read_rows))
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
    found, report = scan(pack, night, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    gaps = Counter(gap.split(":")[0] for c in found for gap in c.data_gaps if ":" in gap)
    facts = [f"{snapshot.metrics.height} entities, {read_rows} rows in reach, latest period "
             f"{snapshot.anchor_period}, {snapshot.quarantined.height} quarantined rows",
             f"{report.passed_filters} pass the hard filters, {report.went_on} would go on "
             f"(cap {pack.caps.max_candidates})"]
    if reasons:
        top = Counter(r.split(" (")[0].split(":")[0] for r in reasons).most_common(3)
        facts.append("quarantined for: " + ", ".join(f"{why} ({n})" for why, n in top))
    if gaps:
        facts.append("metrics with gaps: " + ", ".join(f"{name} ({n} entities)" for name, n in gaps.most_common(5)))
    return CheckReport(as_of=night, problems=problems, facts=facts)
