"""`opportunity check`'s judgment of the values a pack names: `bounds` against the numbers of their column, and the
`in` / `not_in` values of a condition against the texts of theirs. Each finding is one line naming the pack key.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from opportunity_assets.check.periods import spec_at
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import significant
from opportunity_assets.periods import Grain
from opportunity_assets.sources import shapes
from opportunity_assets.sources.excel import WorkbookError, holds_every_row, read_sheet, sheet_names
from opportunity_assets.sources.extensions import format_named_by
from opportunity_assets.sources.formats import TYPED, files_the_pattern_misses, join_index
from opportunity_assets.sources.probes import rows_matching, stopped_by_entity, value_counts
from opportunity_assets.sources.reading import ROW, literal, quote_identifier
from opportunity_assets.sources.spec import Condition, SourceSpec

if TYPE_CHECKING:
    from opportunity_assets.sources.facts import SourceFacts

UNIT_APART = 50.0
"""Bounds reaching this many times further from zero than every value of their column does (a share's values
against `[0, 100]`), or values this far beyond the bounds (percents against `[0, 1]`), are in another unit."""

_VALUES_SHOWN = 1000
"""The commonest values of a condition's column among which a value it lists that matches no row is looked for."""


def bounds_in_another_unit(pack: CriteriaPack, facts: SourceFacts) -> tuple[list[str], list[str]]:
    """`bounds` against the numbers of their column the night reads (`TableFacts.ranges`): problems and warnings.

    A problem: most numbers lie outside the bounds, each cell refused and its row quarantined (`[0, 1]` on a
    column in percent), as a mostly negative column without `signed` is one. A warning: every number of some
    entity lies outside them (its rows are quarantined and its metrics gaps, but one entity's data never stops
    the others' night), or every number lies `UNIT_APART` times or more nearer zero than the bounds on that side
    (`[0, 100]` on a share): they refuse nothing, so they guard nothing, and spoil nothing either."""
    problems, warnings = [], []
    for (within, spec), table in zip(pack.source.keyed, facts.tables, strict=True):
        for column, seen in table.ranges.items():
            if not seen.numbers or seen.least is None or seen.greatest is None:
                continue
            low, high = spec.bounds[column]
            got = f"key `{within}.bounds.{column}`: got [{_bound(low)}, {_bound(high)}]"
            lies = f"[{significant(seen.least)}, {significant(seen.greatest)}]"
            if seen.outside * 2 > seen.numbers:
                beyond = (high is not None and high > 0 and seen.greatest >= UNIT_APART * high) or \
                    (low is not None and low < 0 and seen.least <= UNIT_APART * low)
                percent = beyond and high is not None and 0 < high <= 1 < seen.greatest <= 100
                unit = ("is the column in percent (0–100)? " if percent else
                        "is the column in another unit? " if beyond else "")
                problems.append(f"{got}; {seen.outside} of the {seen.numbers} numbers the night reads lie outside "
                                f"it, each quarantined (the values lie within {lies}): {unit}expected bounds in the "
                                "column's unit, that its values lie within")
                continue
            if seen.refused_example is not None:  # one entity's feed, or bounds too tight for it: it alone
                entity, numbers, least, greatest = seen.refused_example
                some = "every number of" if seen.refused_entities == 1 else \
                    f"every number of each of {seen.refused_entities} entities, e.g. of"
                warnings.append(f"{got}; {some} {entity!r} ({numbers} numbers, within [{significant(least)}, "
                                f"{significant(greatest)}]) lies outside it, each row quarantined, so that entity's "
                                "metrics are gaps (the others go on): expected bounds its values lie within (or a "
                                "`where` that leaves it out)")
                continue
            if any(bound is not None and value != 0 and bound / value >= UNIT_APART  # a side's bound, its extreme
                   for bound, value in ((high, seen.greatest), (low, seen.least))):
                share = high is not None and high >= UNIT_APART and seen.least >= 0 and seen.greatest <= 1
                unit = "is the column a share (0–1)? " if share else \
                    f"is the column in another unit (its values {UNIT_APART:g} times or more nearer zero)? "
                warnings.append(f"{got}; every value lies within {lies}: {unit}expected bounds in the column's "
                                "unit (bounds that far refuse no wrong value)")
    return problems, warnings


def _bound(value: float | None) -> str:
    return "null" if value is None else f"{value:g}"


def _bare(text: str) -> str:
    """A text as its letters and digits alone, lower case and without accents: `Jeuné ` is `jeune`, as `Engine
    Shut Down` is `engineshutdown`."""
    folded = "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))
    return re.sub(r"[^0-9a-z]+", "", folded)


def _number(text: str) -> float | None:
    """A text's value as a plain number (`6`, ` 6.0 `, `-1e3`), else None (`six`, `nan`, `inf`)."""
    try:
        number = float(text.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _near(value: str, values: list[str]) -> str | None:
    """The column's value `value` was likely meant as: the same but for case, spaces and punctuation (`Engine
    Shutdown` for `Engine Shut Down`), else a close spelling, else the one word it abbreviates or that abbreviates
    it (`Sunday` for `Sun`). A number is meant as the column's same number (`10.0` for `10`); over a column of
    decimals, never as another spelt with its digits (`1.0`)."""
    number = _number(value)
    if number is not None:
        equal = next((v for v in values if _number(v) == number), None)
        if equal is not None or _of_numbers(values) or any("." in v for v in values if _number(v) is not None):
            return equal
    same = [v for v in values if _bare(v) == _bare(value) and _bare(v)]
    if same:
        return same[0]
    lowered = {v.lower(): v for v in reversed(values)}
    close = difflib.get_close_matches(value.lower(), list(lowered), n=1, cutoff=0.8)
    return lowered[close[0]] if close else _abbreviation(value, values)


def _of_numbers(values: list[str]) -> bool:
    """Whether a column's values (its commonest) are numbers, nine in ten or more: a listed number is then meant as
    one of them or as a threshold, never as another number spelt with its digits (trial 130: `in: [12000]` over
    daily births was told "did you mean '12700'")."""
    return bool(values) and 10 * sum(_number(v) is not None for v in values) >= 9 * len(values)


def _as_numbers(condition: Condition, listed: list[str], values: list[str]) -> str:
    """What a line about `listed` values no row holds adds when they are numbers over a column of numbers: `in`
    compares text, `op` / `value` numbers (trial 130: a share of busy days `in: [12000]` over daily births, every
    share 0)."""
    if not _of_numbers(values) or any(_number(v) is None for v in listed):
        return ""
    return (f"; a listed number is compared as text, not as a number: to compare numbers, expected `{{column: "
            f"{condition.column}, op: '>=', value: {listed[0].strip()}}}` (or another `op`)")


def _abbreviation(value: str, values: list[str]) -> str | None:
    """The one value of the column that is `value` cut to its first 3 or 4 letters, or that `value` is so cut from
    (`Sunday` for `Sun`, `Feb` for `February`): the way days and months are written short. Trial 36: a weekend
    share `in: [Sat, Sunday]` over a column writing `Sun` was said as a fact, exit 0, and counted Saturdays only."""
    def cut_from(short: str, long: str) -> bool:
        return short.isalpha() and long.isalpha() and 3 <= len(short) <= 4 and len(short) < len(long) \
            and long.startswith(short)

    word = _bare(value)
    cut = [v for v in values if cut_from(word, _bare(v)) or cut_from(_bare(v), word)]
    return cut[0] if len(cut) == 1 else None


def _listed(condition: Condition) -> tuple[str, list[str]]:
    """An `in` / `not_in` condition's test and its values, but an empty or NA one (it stands for an empty cell)."""
    test = "in" if condition.in_ is not None else "not_in"
    values = condition.in_ if condition.in_ is not None else condition.not_in or []
    return test, [v for v in values if v.strip() not in ("", "NA")]


def listed_values_unmatched(pack: CriteriaPack, within: str, spec: SourceSpec) -> tuple[list[str], list[str]]:
    """(problems, facts) of the `in` / `not_in` values that no row of the source holds, in any night: a value
    spelt otherwise than the column's (`night` for `Night`: every share 0, and check said ok) is a problem, unless
    the list holds the column's spelling too (`[Female, female]`: a fact, it changes nothing), and so is
    a list none of whose values any row holds (the condition keeps no row, or drops none); another value no row
    holds (a category the data lacks) is a fact. An empty or NA value stands for an empty cell and is passed over."""

    join = join_index(within)
    problems, facts = [], []
    for key, condition, column in shapes.listed_conditions(spec):
        test, listed = _listed(condition)
        if not listed:
            continue
        text = quote_identifier(column)
        held = set(value_counts(pack, text, shapes.listed_sql(text, listed), join=join, limit=4 * len(listed)))
        lowered = {h.strip().lower() for h in held}  # (a truth value matched in any case and spelling)
        unmatched = [v for v in listed if v not in held
                     and not lowered & set(shapes.TRUTH_WORDS.get(v.strip().lower(), ()))]
        if not unmatched:
            continue
        values = value_counts(pack, text, "true", join=join, limit=_VALUES_SHOWN)
        spelt = {v: n for v in unmatched if (n := _near(v, values)) is not None}
        near = {v: n for v, n in spelt.items() if n not in listed}  # (the column's own spelling listed beside it:
        # the other changes nothing, a fact; trial 101's `in: [Female, female]` was "did you mean 'Female'")
        said = (f"key `{within}.{key}.{test}`: got {listed}; {', '.join(map(repr, unmatched))} "
                f"match{'es' if len(unmatched) == 1 else ''} no row of {condition.column!r}")
        holds = f"it holds e.g. {values[:6]}" if values else "it holds no value"
        numbers = _as_numbers(condition, unmatched, values)
        if near:
            meant = ", ".join(f"{n!r} for {v!r}" for v, n in near.items())
            problems.append(f"{said} (did you mean {meant}? values are compared as trimmed text, case and all): "
                            f"{holds}: expected the values as the column writes them{numbers}")
        elif len(unmatched) == len(listed):
            effect = "keeps no row" if test == "in" else "drops no row"
            problems.append(f"{said}, so the condition {effect}: {holds}: expected values the column holds (compared "
                            f"as trimmed text, case and all){numbers}")
        else:
            beside = ", ".join(f"{n!r}" for n in dict.fromkeys(spelt.values()))
            also = f"; the list holds the column's own {beside} as well, so they change nothing" if spelt else ""
            facts.append(f"{said} ({holds}{also})")
    return problems, facts


def listed_values_spelt_two_ways(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning per `in` / `not_in` condition one of whose values the column holds, and also holds spelt otherwise
    by case, spaces, punctuation or accents (`Young` beside `young` and `Youngé`), those spellings not listed: each
    compares as trimmed text, case and all, so their rows fall on the other side of the condition. Trial 51: a
    share `in: [young]` over a column writing `Young` in 208 rows and `young` in 141 counted the 141, and check
    said ok (a value no row holds at all is `listed_values_unmatched`' problem)."""

    join = join_index(within)
    warnings = []
    for key, condition, column in shapes.listed_conditions(spec):
        test, listed = _listed(condition)
        listed = [v for v in listed if v.strip().lower() not in shapes.TRUTH_WORDS]
        if not listed:
            continue
        text = quote_identifier(column)
        values = value_counts(pack, text, "true", join=join, limit=_VALUES_SHOWN)
        held = [v for v in listed if v.strip() in values]
        others = [(v, w) for v in held for w in values
                  if w not in listed and w != v.strip() and _bare(w) and _bare(w) == _bare(v)]
        if not others:
            continue
        spelt = list(dict.fromkeys(w for _, w in others))
        meant = list(dict.fromkeys(v for v, _ in others))
        rows_listed, rows_spelt = rows_matching(
            pack, [shapes.listed_sql(text, meant), shapes.listed_sql(text, spelt)], join=join)
        side = "out of" if test == "in" else "in"
        warnings.append(
            f"key `{within}.{key}.{test}`: got {listed}; {condition.column!r} writes {meant[0]!r} in {rows_listed} "
            f"rows and also {', '.join(map(repr, spelt[:3]))}{', ...' if len(spelt) > 3 else ''} in {rows_spelt}, "
            f"spelt otherwise by case, spaces, punctuation or accents, which the condition leaves {side} it (values "
            f"are compared as trimmed text, case and all): expected every spelling of the category listed, "
            f"`{test}: {[*listed, *spelt]}`, if they are one")
    return warnings


RECODED_CHANCE = 0.001
"""Below this chance, at the rate listed values matched an aggregate's rows before, of no row matching them in the
periods since, the values stopped (`listed_values_stopped`)."""


def listed_values_stopped(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning per aggregate's `in` / `not_in` condition whose values an entity's rows stop holding from some
    period on, though it still has rows, where its own past rate of them makes that silence improbable
    (`RECODED_CHANCE`), and that hold from then on values no row held before: the category recoded
    (`successful` written `1`, for one entity or every one), each later row on the other side of the condition
    (trial 92: a grant-success share dropped to 0 from one month on, and check said nothing). Events of the main
    source only, where a period tells before from after."""
    if within != "source" or spec.shape != "events":
        return []
    warnings = []
    for key, condition, column in shapes.listed_conditions(spec):
        test, listed = _listed(condition)
        if not key.startswith("aggregates.") or not listed:
            continue
        text = quote_identifier(column)
        found = stopped_by_entity(pack, shapes.listed_sql(text, listed), text, RECODED_CHANCE)
        if not found:
            continue
        entity, since, hits, before, after = found[0]
        new = value_counts(pack, text, f"{shapes.ENTITY} = {literal(entity)} AND {shapes.PERIOD} >= DATE "
                           f"'{since.isoformat()}' AND {text} NOT IN (SELECT {text} FROM {TYPED} WHERE "
                           f"{shapes.PERIOD} < DATE '{since.isoformat()}' AND {text} IS NOT NULL)", limit=4)
        if not new:
            continue
        more = f", and {len(found) - 1} other entit{'y' if len(found) == 2 else 'ies'} alike" if len(found) > 1 else ""
        warnings.append(
            f"key `{within}.{key}.{test}`: got {listed}; no row of {condition.column!r} of {entity!r} holds "
            f"{'it' if len(listed) == 1 else 'them'} from {pack.grain.label(since)} on ({after:,} rows, where "
            f"{hits / before:.0%} of its {before:,} rows before did){more}, and from then on they hold values no row "
            f"held before (e.g. {new}): the category recoded?: expected the new values listed too, "
            f"`{test}: {[*listed, *new[:2]]}`, if they are that category")
    return warnings


EMPTY_IN_A_SHARE = 0.1
"""A share's condition column empty in more than this fraction of the events: they count as not matching, so the
share reads low by up to that much (the share of loans graded A among loans of which a tenth have no grade)."""


def shares_over_empty_cells(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning per `share` whose condition column is empty in more than `EMPTY_IN_A_SHARE` of the events in
    scope: an empty cell never matches, so the share's denominator counts events whose category is unknown as
    not in it. The way to a share among the events that have one: two counts and a derived metric."""

    join = join_index(within)
    texts = {c.column: text for _, c, text in [*shapes.listed_conditions(spec), *shapes.numeric_conditions(spec)]}
    tested = [(name, i, c) for name, a in spec.aggregates.items() if a.agg == "share"
              for i, c in enumerate(a.where)]
    columns = list(dict.fromkeys(c.column for _, _, c in tested))
    if not columns:
        return []
    counts = rows_matching(pack, [shapes.IN_SCOPE, *(f"{shapes.IN_SCOPE} AND {quote_identifier(texts[c])} IS NULL"
                                                      for c in columns)], join=join)
    events, empty = counts[0], dict(zip(columns, counts[1:], strict=True))
    warnings, said = [], set()
    for name, i, condition in tested:
        if not events or empty[condition.column] <= EMPTY_IN_A_SHARE * events or name in said:
            continue
        said.add(name)
        column = condition.column
        if spec.over_files and (lacking := entities_lacking(pack, within, column, texts[column])
                                or _periods_lacking(pack, within, column, texts[column])) is not None:
            warnings.append(lacking)
            continue
        warnings.append(
            f"key `{within}.aggregates.{name}.where.{i}`: {column!r} is empty in {empty[column]} of the {events} "
            f"events, and an empty cell never matches, so share {name!r} counts them as not matching (its "
            f"denominator is every event): if an empty {column} is unknown rather than a no, take the share among "
            f"the events that have one: an `agg: count` with this `where`, an `agg: count` with `{{column: "
            f"{column}, not_in: ['']}}`, and a derived metric dividing the two")
    return warnings


def shares_of_every_event(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning per `share` whose `where` every event in scope meets: the share is 1 in every period, a constant
    that tells no entity from another (trial 103: `in: [Y, N]` over a yes/no column, every event in it, and check
    said ok). A `where` no event meets is said by the values it lists (`listed_values_unmatched`)."""
    shares = [(name, a) for name, a in spec.aggregates.items() if a.agg == "share" and a.where]
    if not shares:
        return []
    counts = rows_matching(pack, [shapes.IN_SCOPE, *(f"{shapes.IN_SCOPE} AND {shapes.aggregate_match_sql(name, a)}"
                                                      for name, a in shares)], join=join_index(within))
    events = counts[0]
    return [f"key `{within}.aggregates.{name}.where`: every one of the {events} events in scope meets it, so share "
            f"{name!r} is 1 in every period, the same for every entity: expected a condition that some events meet "
            "and others do not (the category whose share is meant)"
            for (name, _), matched in zip(shares, counts[1:], strict=True) if events and matched == events]


_EMPTY_READ = {"sum": ("adds nothing", "reads theirs as 0 (a total short by their {column})"),
               "count_distinct": ("is no value", "reads none of theirs (a count short by any {column} only they hold)")}
"""What an empty cell is to a `sum` and a `count_distinct`, and what the aggregate then reads of its events."""


def aggregates_over_empty_cells(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning per `sum` or `count_distinct` whose column is empty in more than `EMPTY_IN_A_SHARE` of the events
    in scope: an empty cell adds nothing to a sum and is no value to count, so the figure reads low,
    with no gap to say so (an `avg`, `min` or `max` reads the events that have one). Trial 74: a quarter of Ames'
    sale prices blank made each neighbourhood's volume a quarter short, and check said ok; a column empty in every
    event is `cells.empty_event_columns`' problem."""
    read = [(name, a) for name, a in spec.aggregates.items() if a.agg in _EMPTY_READ and a.column is not None]
    if within != "source" or spec.shape != "events" or not read:
        return []
    columns = list(dict.fromkeys(a.column or "" for _, a in read))
    counts = rows_matching(pack, [shapes.IN_SCOPE, *(f"{shapes.IN_SCOPE} AND {shapes.missing_of(spec, c)}"
                                                      for c in columns)])
    events, empty = counts[0], dict(zip(columns, counts[1:], strict=True))
    warnings = []
    for name, aggregate in read:
        column = aggregate.column or ""
        if not events or empty[column] <= EMPTY_IN_A_SHARE * events or empty[column] == events:
            continue
        cell, reads = _EMPTY_READ[aggregate.agg]
        warnings.append(
            f"key `{within}.aggregates.{name}.column`: {column!r} is empty in {empty[column]} of the {events} events, "
            f"and an empty cell {cell}, so {aggregate.agg} {name!r} {reads.format(column=column)}: expected it "
            f"written in the source (an export that left it blank?), or, if they have none, an `agg: count` with "
            f"`{{column: {column}, not_in: ['']}}` beside it, saying how many events the figure is of")
    return warnings


def entities_lacking(pack: CriteriaPack, within: str, column: str, text: str) -> str | None:
    """A query over files whose `column` is empty in every row of some entities and in none of the others' (a
    folder of CSVs read by `read_csv(..., union_by_name = true)`, one file naming the column otherwise: trial 37's
    `ret` and `return`, told of a share's denominator instead), naming the query. None when the empty cells are
    spread among the entities: a category unknown here and there."""
    empty, filled = _empty_and_filled(pack, within, shapes.ENTITY, text, empty_shown=1000)
    if not empty or not filled or filled & set(empty):
        return None
    return (f"key `{within}.query`: {column!r} is empty in every row of {len(empty)} "
            f"{'entity' if len(empty) == 1 else 'entities'} (e.g. "
            f"{sorted(empty)[:3]}) and in no row of the other {len(filled)}: expected the column in every file the "
            "query reads (one whose header names it otherwise, read by `union_by_name`, gives its rows none)")


def files_left_by_the_query(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning per glob of a query over files that leaves files of its folder with its extension unread (a file
    name that breaks the exports' pattern, `Macro-2004-final.CSV` beside `macro_*.csv`): their rows are none of the
    night's, and the night's latest period may be older than the folder's."""
    if not spec.over_files:
        return []
    out = []
    for pattern, missed in files_the_pattern_misses(spec.query or "", pack.path_of(spec)):
        shown = ", ".join(repr(m) for m in missed[:3]) + (", ..." if len(missed) > 3 else "")
        out.append(f"key `{within}.query`: reads {pattern!r}, which leaves {len(missed)} file"
                   f"{'' if len(missed) == 1 else 's'} of that folder with its extension unread ({shown}): "
                   "expected a pattern that matches every export meant (a glob is case-sensitive), or those files "
                   "renamed to it")
    return out


def sheets_left_unread(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning when a workbook's other sheets hold the pack's columns too (a sheet a year, as an office keeps a
    table): one sheet is read, the others' rows are none of the night's, and check said ok (trial 91: seven yearly
    sheets of sugar prices, the night's latest period the first sheet's December). A sheet whose every row the sheet
    read holds is not named (trial 140: `All years` read beside the yearly sheets it gathers)."""
    if spec.path is None or (spec.format or format_named_by(Path(spec.path))) != "excel":
        return []
    path = pack.path_of(spec)
    needed = spec.read_columns
    try:
        names = sheet_names(path)
        chosen = read_sheet(path, spec.sheet, needed)
        read = chosen.name
        others = [read_sheet(path, n, needed) for n in names if n != read]
        alike = [o.name for o in others if set(needed) <= set(o.header) and not holds_every_row(chosen, o, needed)]
    except (WorkbookError, OSError):
        return []  # (the read's own problem says it)
    if not alike:
        return []
    shown = ", ".join(repr(n) for n in alike[:4]) + (", ..." if len(alike) > 4 else "")
    which = f"got {read!r}, the one read" if spec.sheet else f"none, so the first sheet, {read!r}, is the one read"
    return [f"key `{within}.sheet`: {which}, and {len(alike)} other sheet{'' if len(alike) == 1 else 's'} of "
            f"{path.name} hold{'s' if len(alike) == 1 else ''} the pack's columns too ({shown}): their rows are none "
            "of the night's: expected the rows of every sheet meant in one sheet under one header, or each sheet "
            "saved as CSV and read by a `query` over them, `SELECT * FROM read_csv('sheets/*.csv', union_by_name = "
            "true)` under `format: duckdb`"]


def columns_missing_from_files(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning per column a query over files reads as numbers (`shapes.cell_columns`: a panel's `columns`, the
    events' aggregated columns) that is empty in every row of some entities and in no row of the others, or in every
    row of some periods after its first value: a file that lacks the column, or names it otherwise, read by
    `union_by_name`, gives its rows none, and check said only "metrics with gaps" (trial 37). Periods empty before
    the column's first value are a measure begun later, not a file lacking it. So is a column only counted
    distinct, read as text (trial 73: yearly Parquet files, the later ones naming `transmission` otherwise, made a
    `count_distinct` of it 0 in every later quarter while check said ok). A share's condition column is
    `shares_over_empty_cells`'."""
    if not spec.over_files:
        return []
    conditioned = {c.column for _, c, _ in shapes.listed_conditions(spec)}
    read = [(c, f"__v_{c}") for c in shapes.cell_columns(spec)]
    read += [(c, f"__raw_{c}") for c in shapes.distinct_columns(spec) if c not in conditioned]
    warnings = []
    for column, text in read:
        lacking = entities_lacking(pack, within, column, text) or _periods_lacking(pack, within, column, text)
        if lacking is not None:
            warnings.append(lacking)
    return warnings


FILE_RUN = 7
"""Consecutive periods of one row each, every one empty, that read as a file lacking a column rather than a series'
own gaps (a station's day or two without a reading)."""


def _periods_lacking(pack: CriteriaPack, within: str, column: str, text: str) -> str | None:
    """`columns_missing_from_files`' line for a column empty in every row of some periods after its first value: a
    period of several rows all empty, or a run of `FILE_RUN` periods. Trial 54: one station's daily temperatures in a
    file a year, 17 days without a minimum scattered over 91 years, were told "expected the column in every file"."""
    empty, filled = _empty_and_filled(pack, within, shapes.PERIOD, text)
    lacking = sorted(p for p in set(empty) - filled if filled and p > min(filled))
    if not lacking or not (_several_rows(pack, within, lacking) or _longest_run(pack, lacking) >= FILE_RUN):
        return None
    grain = Grain(spec_at(pack, within).grain)  # (a join's own grain)
    shown = ", ".join(grain.label(date.fromisoformat(p)) for p in lacking[:3])
    periods = grain.name if len(lacking) == 1 else grain.plural
    return (f"key `{within}.query`: {column!r} is empty in every row of {len(lacking)} {periods} after "
            f"its first value (e.g. {shown}{', ...' if len(lacking) > 3 else ''}), and filled in {len(filled)}: "
            "expected the column in every file the query reads (one whose header names it otherwise, read by "
            "`union_by_name`, gives its rows none)")


def _several_rows(pack: CriteriaPack, within: str, periods: list[str]) -> bool:
    """Whether the source's lines in scope of `periods` are more than the periods: some period holds several lines.
    Lines, not panel rows: a wide source's one line of a week is a row per entity (trial 57: Ansett's three classes
    side by side, one week of the 283 empty in each, was told "expected the column in every file the query reads")."""
    listed = ", ".join(f"DATE {literal(p)}" for p in periods)
    lines = value_counts(pack, ROW, f"{shapes.IN_SCOPE} AND {shapes.PERIOD} IN ({listed})", join=join_index(within),
                         limit=len(periods) + 1)
    return len(lines) > len(periods)


def _longest_run(pack: CriteriaPack, periods: list[str]) -> int:
    """The most consecutive periods of the grain among `periods` (ISO dates of period starts, sorted)."""
    longest = run = 0
    before: date | None = None
    for text in periods:
        start = date.fromisoformat(text)
        run = run + 1 if before is not None and pack.grain.back(start, 1) == before else 1
        longest, before = max(longest, run), start
    return longest


def _empty_and_filled(pack: CriteriaPack, within: str, by: str, text: str, *, empty_shown: int = 100_000
                      ) -> tuple[list[str], set[str]]:
    """The values of `by` (an entity, a period) with rows in scope whose typed cell `text` is empty (the commonest
    `empty_shown`), and those with rows whose cell is filled: where a column is missing from some files. A cell
    refused as no number (`13.78 GBP`) is written, so filled: its file has the column (trial 54: a year's wages
    with a currency were told "expected the column in every file", beside the line naming `strip_from_numbers`)."""
    join, cell = join_index(within), quote_identifier(text)
    refused = f"contains(coalesce({shapes.CELL_REASON}, ''), {literal('column ' + text.removeprefix('__v_') + ': ')})"
    empty = value_counts(pack, by, f"{shapes.IN_SCOPE} AND {cell} IS NULL AND NOT {refused}", join=join,
                         limit=empty_shown)
    filled = set(value_counts(pack, by, f"{shapes.IN_SCOPE} AND ({cell} IS NOT NULL OR {refused})", join=join,
                              limit=100_000))
    return empty, filled


def long_names_unmatched(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """The `columns` of a long source (`long.names` values read as columns) that no row's name is, in any night:
    each is a column every period of which is a gap, a problem naming its key, with the name it was likely meant as
    (`SP.POP.TOTl` for `SP.POP.TOTL`) or the names the column holds."""

    if spec.long is None:
        return []
    join = join_index(within)
    held = set(value_counts(pack, shapes.VARIABLE, f"{shapes.VARIABLE} IN ({', '.join(map(literal, spec.columns))})",
                            join=join, limit=len(spec.columns)))
    unmatched = [(i, c) for i, c in enumerate(spec.columns) if c not in held]
    if not unmatched:
        return []
    values = value_counts(pack, shapes.VARIABLE, "true", join=join, limit=_VALUES_SHOWN)
    holds = f"it holds e.g. {values[:6]}" if values else "it holds no name"
    problems = []
    for i, column in unmatched:
        near = _near(column, values)
        meant = f" (did you mean {near!r}? names are compared as trimmed text, case and all)" if near else ""
        problems.append(f"key `{within}.columns.{i}`: got {column!r}; no row of {spec.long.names!r} (`long.names`) "
                        f"names it{meant}, so every period of it would be a gap: {holds}: expected names as the "
                        "column writes them")
    return problems


def long_names_spelt_two_ways(pack: CriteriaPack, within: str, spec: SourceSpec) -> list[str]:
    """A warning per `columns` name of a long source that `long.names` holds, and also holds spelt otherwise by
    case, spaces, punctuation or accents, that spelling not listed: names compare as trimmed text, case and all, so
    its rows are out of scope, a gap in every period it names. Trial 62: `College Tuition` to 2018 and `College
    tuition` from 2019, the latest year's every value a gap while check said ok (a name no row holds at all is
    `long_names_unmatched`' problem; `listed_values_spelt_two_ways` is the same for a `where`)."""

    if spec.long is None:
        return []
    join = join_index(within)
    values = value_counts(pack, shapes.VARIABLE, "true", join=join, limit=_VALUES_SHOWN)
    warnings = []
    for i, column in enumerate(spec.columns):
        spelt = [v for v in values if v not in spec.columns and v != column and _bare(v) and _bare(v) == _bare(column)]
        if column not in values or not spelt:
            continue
        rows_listed, rows_spelt = rows_matching(
            pack, [f"{shapes.VARIABLE} IN ({', '.join(map(literal, names))})" for names in ([column], spelt)],
            join=join)
        warnings.append(
            f"key `{within}.columns.{i}`: got {column!r}; {spec.long.names!r} (`long.names`) writes it in "
            f"{rows_listed} rows and also {', '.join(map(repr, spelt[:3]))}{', ...' if len(spelt) > 3 else ''} in "
            f"{rows_spelt}, spelt otherwise by case, spaces, punctuation or accents, whose rows the night leaves out "
            "(names are compared as trimmed text, case and all): expected one spelling in the source (a DuckDB "
            "`query` can `replace` one with the other), if they are one")
    return warnings


_SHORTEST_DAYS = {"week": 7, "month": 28, "quarter": 90, "year": 365}
"""The fewest days a period of each grain coarser than a day spans."""


def ages_within_a_period(pack: CriteriaPack) -> list[str]:
    """A warning per hard filter keeping an `age_days` metric under a bound shorter than half the grain's period:
    a period's figures are replaced only a period later, so the latest value ages through the whole period
    between two publications, and such a filter passes on the first nights after each publication only, refusing
    every candidate on the rest (trial 98: `fresh <= 2`, meant as months, on a monthly panel: check said ok on the
    night a month was published, and month-end nights went on with no candidate, "the most failed: fresh")."""
    days = _SHORTEST_DAYS.get(pack.grain.name)
    if days is None:
        return []
    grain = pack.grain.name
    out = []
    for i, f in enumerate(pack.hard_filters):
        spec = pack.metrics.get(f.metric)
        if spec is None or spec.agg != "age_days" or f.op not in ("<=", "<") or 2 * f.value >= days:
            continue
        nights = max(math.floor(f.value) + 1 if f.op == "<=" else math.ceil(f.value), 0)  # ages 0, 1, ... passing
        out.append(f"key `hard_filters.{i}.value`: got {f.value:g}; `{f.metric}` counts days (`age_days`), and a "
                   f"{grain}'s figures are replaced only a {grain} later, so `{f.name}` passes a candidate on the "
                   f"first {nights} night{'s' if nights != 1 else ''} after its {grain} is published and refuses every "
                   f"candidate on the rest (about {days - nights} of each {grain}'s {days}+): expected a bound in "
                   f"days of at least a {grain}, {days} or more (`{f.value:g}` {grain}s is {f.value * days:g} days)")
    return out


def ages_of_counts(pack: CriteriaPack) -> list[str]:
    """A warning per `age_days` metric over an events `count`, `count_distinct` or `sum`: a period without events
    is a count (or sum) of 0, not an empty cell, so its latest value is always the latest period's and its age
    never grows; a freshness filter on it never refuses (the bundled NYC pack dated its routes by `flights`, trial
    28; trial 130's births by a `sum`). An `avg`, `min` or `max` of a column is empty without events, and dates
    them."""
    src = pack.source
    if src.shape != "events":
        return []
    out = []
    for name, spec in pack.metrics.items():
        aggregate = src.aggregates.get(spec.column or "")
        if spec.agg != "age_days" or aggregate is None or aggregate.agg not in ("count", "count_distinct", "sum"):
            continue
        filters = [f"`hard_filters.{i}`" for i, f in enumerate(pack.hard_filters) if f.metric == name]
        never = f", so {' and '.join(filters)} on it never refuses" if filters else ""
        dated = sorted(n for n, a in src.aggregates.items() if a.agg in ("avg", "min", "max"))
        offer = f" (here {', '.join(repr(n) for n in dated)})" if dated else ""
        out.append(f"key `metrics.{name}.column`: got {spec.column!r}; an events `{aggregate.agg}` is 0 in a period "
                   f"without events, never empty, so its latest value is always the latest period's and its age "
                   f"never grows{never}: expected an aggregate that is empty without events, an `avg`, `min` "
                   f"or `max` of a column{offer}, to date the events by")
    return out
