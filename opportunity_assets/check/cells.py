"""`opportunity check`'s judgment of the cells as written: a numeric column's cells that are no numbers, and
why (thousands grouped, a decimal comma, a currency or % sign, a clock time, codes for a missing number, negatives
in an unsigned column), a wide source's columns of text, empty or counting, each one line naming the key that
reads them. Pure over what the source layer read (its quarantine, its history, the cells it refused)."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import polars as pl

from opportunity_assets.candidates.quarantine import bad_cells
from opportunity_assets.check.periods import UNPARSED_PERIODS
from opportunity_assets.criteria import MetricSpec
from opportunity_assets.sources.spec import NO_BREAK_SPACES, SourceSpec
from opportunity_assets.text import first_of

MOSTLY_TEXT = 0.5
"""A numeric column with more than this share of its cells in reach not numbers is declared wrongly (a text or
date column): a problem, not a quarantine."""

_GROUPED = re.compile(r"^-?\d{1,3}([,. '\u00a0\u202f]\d{3})+([.,]\d+)?$|^-?\d+,\d+$")
"""A number written with thousands grouped (1,234; 1.234,5; 1 234,5 with a no-break space) or a decimal comma
(4,5)."""

MISSING_TEXTS = frozenset({"N/A", "n/a", "NaN", "nan", "-", "--", "null", "NULL", "None", ".", "?", "#N/A", "na",
                           "..", "...", ":", "n.a.", "N.A."})
"""Texts a spreadsheet or database writes for a missing number (`check` suggests `source.na_values` for them). The
statistics offices' `..` (the World Bank, the ABS, Statistics Canada) and Eurostat's `:` among them: trial 38's
`..` was said once per column as text in a numeric column, beside the line suggesting `na_values` for `n/a`."""

MISSING_CODES = 3
"""At most this many distinct negative whole numbers, each repeated, read as codes for a missing number."""


def numeric_columns(spec: SourceSpec, within: str) -> dict[str, str]:
    """A source's numeric columns read cell by cell, each with its key: `columns`, or for events each aggregate's
    `column` read as a number (a column only counted distinct may be text)."""
    if spec.wide is not None and spec.long is None:  # its one value column is named by `wide.value`, not `columns`
        return {spec.wide.value: f"{within}.wide.value"}
    if spec.shape != "events":
        return {c: f"{within}.columns.{i}" for i, c in enumerate(spec.columns)}
    return {a.column: f"{within}.aggregates.{name}.column" for name, a in spec.aggregates.items()
            if a.column is not None and a.agg != "count_distinct"}


def as_long_values(spec: SourceSpec, columns: dict[str, str], cells: list[dict[str, tuple[str, str]]],
                   within: str = "source") -> tuple[dict[str, str], list[dict[str, tuple[str, str]]]]:
    """A long table's listed names as the one column of the file that holds them all, `long.values`, each row's
    cell under it: its numbers are written one way, so a unit or a mark on every value is one cause, judged against
    every row the night reads (trial 34: `8504.0x` in every row of five names was five facts of about a fifth of
    the rows each, and check said ok on a night of no number). Other sources' columns as they are."""
    if spec.long is None:
        return columns, cells
    values = spec.long.values
    moved = [next(({values: c[n]} for n in columns if n in c), {}) for c in cells]
    return {values: f"{within}.long.values"}, moved


_CURRENCY = re.compile(r"^\s*[-+]?\s*[$€£¥₹]\s*[-+]?\d[\d,. ]*\s*$|^\s*[-+]?\d[\d,. ]*\s*[$€£¥₹]\s*$")
_PERCENT = re.compile(r"^\s*[-+]?\d[\d,.]*\s*%\s*$")
_DRESSED = re.compile(r"^\s*(?P<before>[^\d+\-.,\s<>=~≤≥][^\d+\-.,<>=~≤≥]*?)?\s*[-+]?\d[\d,.]*\s*"
                      r"(?P<after>[^\d+\-.,\s<>=~≤≥][^\d+\-.,<>=~≤≥]*?)?\s*$")
"""One number with a text before or after it that has no digit, sign or separator (`76 ppb`, `#5`, `12 kg`): a
unit or a mark, what `strip_from_numbers` removes. A comparison (`<5`, a value below a detection limit) is no dress:
read without it, it would be another number."""
_CLOCK = re.compile(r"^\s*\d{1,3}:\d{2}(:\d{2}(\.\d+)?)?\s*$")
"""A duration or time of day written h:mm:ss or mm:ss (a race's winning time, `02:09:37`)."""


_LIST = re.compile(r"^\s*\[\s*(-?[\d.eE+-]+\s*(,\s*-?[\d.eE+-]+\s*)*)?\]\s*$")
"""A list of numbers as DuckDB writes a list column as text (`[5, 2, 3]`), or as JSON writes one; `[]` too."""


def numbers_dressed(column: str, written: list[str], spec: SourceSpec | None = None,
                     within: str = "source") -> tuple[str, str] | None:
    """Numbers in a dress, from the cells of a column read as not numbers: an example and what to do (a currency or
    % sign: `strip_from_numbers`, with the thousands separator a cell shows), or None when the cells are text (a
    category, a date). Trial 21: `€1,234.50` was "a currency sign, which no key strips", read only through a
    DuckDB `query` that replaced it."""
    separator = spec.thousands_separator if spec is not None else None
    for cell in written:
        dressing = re.search(r"[$€£¥₹%]", cell) if _CURRENCY.match(cell) or _PERCENT.match(cell) else None
        if dressing is not None:
            grouped = separator is None and re.search(r"\d,\d{3}(?!\d)", cell) is not None
            also = ' and `thousands_separator: ","`' if grouped else ""
            what = "a currency sign" if dressing[0] != "%" else "a % sign"
            read = "" if dressing[0] != "%" else " (a percent: 12.5% reads 12.5, its bounds and filters in percent)"
            return cell, (f"they carry {what}: expected `{within}.strip_from_numbers: [{dressing[0]!r}]`{also}, "
                          f"which removes it before the number is read{read}, or plain numbers (the file exported "
                          "without it)")
        if _CLOCK.match(cell):
            return cell, ("they are durations or times of day written h:mm:ss, which are not read as numbers: "
                          "expected one number in one unit (seconds or minutes, the file exported so)")
        if cell.lstrip().startswith("{") and cell.rstrip().endswith("}"):
            try:
                inner = next(iter(json.loads(cell)), "value")
            except (ValueError, TypeError):
                inner = "value"
            return cell, ("they are JSON objects (nested JSON), which are not read: expected one number per key "
                          f"(the records flattened, `{column}.{inner}` as a key of its own)")
        if _LIST.match(cell):
            path = spec.path if spec is not None else None
            reader = "read_parquet" if path is not None and str(path).lower().endswith(".parquet") else "read_json"
            named = Path(str(path)).name if path is not None else "FILE"
            return cell, ("they are lists, several numbers a cell (a Parquet or JSON list column), which are not "
                          "read: expected one number per cell, the list's own figure made by a DuckDB `query` under "
                          f"`format: duckdb` (`SELECT * REPLACE (list_avg({column}) AS {column}) FROM {reader}("
                          f"'{named}')`, or `list_sum`, `len`), or each item a row of its own (`unnest({column})` "
                          "under `shape: events`)")
    return _unit_most(written, separator, within)


def _unit_most(written: list[str], separator: str | None, within: str) -> tuple[str, str] | None:
    """The text most cells quarantined as not numbers carry beside one number (`_DRESSED`: `76 ppb`, `#5`), with the
    `strip_from_numbers` that reads them, or None when no one text is on two of them and more than half (a survey's
    typed answers, `5 feet 7 inches` beside `5'6`, are text; one `900 homes` is a note). Trial 24: ozone written
    `76 ppb` and chart ranks `#5` were told "expected plain numbers", the key that strips a unit unnamed."""
    dresses: Counter[str] = Counter()
    example: dict[str, str] = {}
    for cell in written:
        if (match := _DRESSED.match(cell)) and bool(match["before"]) != bool(match["after"]):
            dress = (match["before"] or match["after"]).strip()
            dresses[dress] += 1
            example.setdefault(dress, cell)
    if not dresses:
        return None
    dress, carried = dresses.most_common(1)[0]
    if carried < 2 or 2 * carried <= len(written) or _codes(dress, written):
        return None
    grouped = separator is None and re.search(r"\d,\d{3}(?!\d)", example[dress]) is not None
    also = ' and `thousands_separator: ","`' if grouped else ""
    return example[dress], (f"they carry a unit or a mark, {dress!r}: expected `{within}.strip_from_numbers: "
                            f"[{dress!r}]`{also}, which removes it before the number is read, or plain numbers (the "
                            "file exported without it)")


def _number_with_a_note(written: list[str], within: str) -> tuple[str, str] | None:
    """The first of a few cells that is one number with a text beside it (`_DRESSED`: `900 homes`, `11272.0
    births`), too few for `_unit_most` to call the text the column's unit, and what to do: the number is there, so it
    is no missing-number token for `na_values` (trial 135: `11272.0 births`, one cell of a week's births, was told to
    list it in `na_values`). None when no such cell is among them."""
    for cell in written:
        if (match := _DRESSED.match(cell)) and bool(match["before"]) != bool(match["after"]):
            note = (match["before"] or match["after"]).strip()
            return cell, (f"it is a number with {note!r} written beside it: expected plain numbers in the column (the "
                          f"cell written without it at the source), or `{within}.strip_from_numbers: [{note!r}]` if "
                          "the column's cells carry it")
    return None


_FEWEST_PER_CODE = 3
"""How many cells, on average, each distinct value of a category's codes holds at the least (`_codes`)."""
_MOST_CODES = 20
"""How many distinct codes a category holds at the most (`_codes`): a measure in a unit takes many values."""


def _codes(dress: str, written: list[str]) -> bool:
    """Whether cells a letter prefix dresses (`s7`, `A1`, `Q3`) are a category's codes, not numbers in a unit: few
    distinct values, each on several cells. Trial 54: a PostgreSQL ENUM of sectors `s1`..`s9` listed in `columns`
    was told "they carry a unit or a mark, 's'", with `strip_from_numbers: ['s']` to read sector 7 as the number 7.
    A unit is written after the number (`76 ppb`) or is a sign (`#5`, `$5`)."""
    dressed = [w.strip() for w in written if w.strip().startswith(dress)]
    if not dress.isalpha() or not dressed or any(w[len(dress):len(dress) + 1].isspace() for w in dressed):
        return False
    distinct = len(set(dressed))
    return distinct <= _MOST_CODES and len(dressed) >= _FEWEST_PER_CODE * distinct


def grouped_most(written: list[str]) -> list[str]:
    """The cells quarantined as not numbers that read as numbers written with a separator (`1,234`, `4,5`), when such
    cells are most of those quarantined so, or none. A source that groups thousands or writes a decimal comma
    writes every such number so; a few among other text (a survey's typed answers: `5,3` for five feet three,
    beside `5'6` and `5 feet 7 inches`) are that text, and a separator key would mend none of the rest."""
    grouped = [w for w in written if _GROUPED.match(w)]
    return grouped if grouped and 2 * len(grouped) > len(written) else []


def separator_problem(spec: SourceSpec, within: str, column: str, written: list[str], text: int,
                      seen: int) -> str | None:
    """The separator key a column's cells call for when most of `written` (cells read as not numbers) are numbers
    with thousands grouped or a decimal comma (`_separated`), or None. Trial 66: a numeric `where` over `62,0` was
    told the column "holds text" and to list values with `in`, when `decimal_separator: ","` reads it."""
    grouped = grouped_most(written)
    return _separated(spec, within, column, grouped, text, seen) if grouped else None


def _decimal_comma(grouped: list[str]) -> bool:
    """Whether numbers written with one comma (`4,5`, `0,112`) are decimal commas: each has one comma, and one of them
    is no thousands group (a comma not followed by 3 digits, or a first group of 0: no grouped number begins `0,`).
    Trial 32: AirPassengers in thousands, `0,112` to `0,622`, was told `thousands_separator: ","`, reading 112."""
    single = all(re.fullmatch(r"-?\d+,\d+", g) for g in grouped)
    return single and any(not re.fullmatch(r"-?[1-9]\d{0,2},\d{3}", g) for g in grouped)


def separator_wanted(grouped: list[str]) -> tuple[str, str]:
    """The separator key that reads numbers written with thousands grouped or a decimal comma, and the setting their
    first calls for (`1,234`: `thousands_separator: ","`; `1.234,5`: `"."` and `decimal_separator: ","`; `4,5`:
    `decimal_separator: ","`)."""
    example = grouped[0]
    if _decimal_comma(grouped):
        return "decimal_separator", 'decimal_separator: ","'
    if re.fullmatch(r"-?\d{1,3}(\.\d{3})+(,\d+)?", example) is not None:
        return "thousands_separator", 'thousands_separator: "." with decimal_separator: ","'
    # (a no-break space, as a French or Swiss export groups thousands, is read as a space: trial 35)
    mark = next(ch for ch in example if not ch.isdigit() and ch not in "+-")
    mark = " " if mark in NO_BREAK_SPACES else mark
    comma = ' with decimal_separator: ","' if mark != "," and re.search(r",\d+$", example) else ""
    return "thousands_separator", f"thousands_separator: {mark!r}{comma}"


def _separated(spec: SourceSpec, within: str, column: str, grouped: list[str], text: int, seen: int,
               counted: str = "cells the night reads are", lost: str = "") -> str:
    """A numeric column whose cells are mostly numbers written with thousands grouped or a decimal comma: the
    separator key that reads them, with the value its cells call for (`1,234`: `thousands_separator: ","`;
    `1.234,5`: `"."` and `decimal_separator: ","`; `4,5`: `decimal_separator: ","`)."""
    key, wanted = separator_wanted(grouped)
    value = spec.decimal_separator if key == "decimal_separator" else spec.thousands_separator
    said = "not set" if value is None else f"got {value!r}"
    # (trial 95: under `thousands_separator: ","` a decimal comma before three decimals, `11,370`, is a grouped
    # number, read as 11370 without a line, and the key asked for alone is refused beside it at load)
    grouping = (f", without `thousands_separator: {spec.thousands_separator!r}`, which reads a decimal comma before "
                "three decimals as thousands ('1,250' as 1250)"
                if key == "decimal_separator" and spec.thousands_separator == "," else "")
    return (f"key `{within}.{key}`: {said}; {column!r}: {text} of {seen} {counted} not "
            f"numbers, written as {grouped[0]!r}{lost}: expected `{wanted}` to read them{grouping}")


def cell_problems(spec: SourceSpec, columns: dict[str, str], cells: list[dict[str, tuple[str, str]]], seen: int,
                   within: str = "source") -> list[str]:
    """A numeric column whose cells the night reads are mostly text (a text or date column declared numeric) or
    not finite (`inf`, NaN: a division by zero where the file or a `query` was made; check said ok on a night of
    no such figure), or often negative without `signed`: its key (the main source's, or a joined table's)."""
    problems = []
    for column, key in columns.items():
        text = sum(1 for c in cells if c.get(column, ("", ""))[1] == "not a number")
        negative = sum(1 for c in cells if c.get(column, ("", ""))[1] == "negative")
        infinite = [c[column][0] for c in cells if c.get(column, ("", ""))[1] == "not finite"]
        if seen and len(infinite) / seen > MOSTLY_TEXT:
            problems.append(f"key `{key}`: {column!r}: {len(infinite)} of {seen} cells the night reads are not "
                            f"numbers (e.g. {infinite[0]!r}): they are infinite or NaN, which a division by zero "
                            "upstream writes (each is quarantined, a gap): expected finite numbers (the division "
                            "kept from a zero denominator, `NULLIF(x, 0)`, where it is made)")
            continue
        if seen and text / seen > MOSTLY_TEXT:
            written = [c[column][0] for c in cells if c.get(column, ("", ""))[1] == "not a number"]
            grouped = [w for w in written if _GROUPED.match(w)]
            if 2 * len(grouped) > len(written):
                problems.append(_separated(spec, within, column, grouped, text, seen))
                continue
            held = numbers_dressed(column, written, spec, within)
            if held is not None:
                problems.append(f"key `{key}`: {column!r}: {text} of {seen} cells the night reads are not numbers "
                                f"(e.g. {held[0]!r}): {held[1]}")
                continue
            problems.append(f"key `{key}`: {column!r}: {text} of {seen} cells the night reads are not numbers; "
                            "expected a numeric column" + (" (list only numeric columns)" if "columns" in key else
                                                           " (for a category, `agg: share` with a `where` "
                                                           "condition counts its share of rows)"))
        elif seen and negative / seen > UNPARSED_PERIODS and column not in spec.signed:
            written = [c[column][0] for c in cells if c.get(column, ("", ""))[1] == "negative"]
            problems.append(f"key `{within}.signed`: {column!r}: {negative} of {seen} cells the night reads are "
                            f"negative, and each is quarantined: expected {column!r} in `{within}.signed` if its "
                            "values may be below zero (a delay, a change), else a column of counts or amounts"
                            + _missing_codes_hint(spec, within, written))
    return problems


def grouped_in_reach(spec: SourceSpec, columns: dict[str, str], quarantined: pl.DataFrame,
                     history: pl.DataFrame, deepest: int, within: str = "source") -> list[str]:
    """A numeric column whose numbers are written with thousands grouped (or a decimal comma) in the windows'
    reach though not in most of the file: the separator key that reads them. Trial 31: the Dow's closes, written
    `1,003.16` from 1972 on, were 10,467 of 37,931 cells, no column of text for `cell_problems`, yet every close
    in reach; check said ok beside a hint and the night archived the one candidate as a data gap. Counted in
    entity-periods (a snapshot of days read by the week refuses several cells a period), the grouped cells being
    most of those the reach refuses as not numbers (a few `5,3` among typed answers are that text); `deepest`: the
    farthest period back a metric's window reads (the history holds more, for the integrity rules)."""
    in_reach = history.filter(pl.col("periods_ago") <= deepest).select("entity_id", "period")
    near = quarantined.filter(pl.col("period").is_in(in_reach["period"].unique().to_list())).select(
        "entity_id", "period", "reason").rows()
    if not near:  # no cell refused in the reach's periods (a wide night's entity-periods are not gathered)
        return []
    reach = set(in_reach.rows())
    problems = []
    periods: Counter[object] = Counter(entity for entity, _ in reach)
    for column in columns:
        refused: set[tuple[object, object]] = set()
        written: list[str] = []
        for entity, period, reason in near:
            cell = bad_cells(reason, [column]).get(column, ("", ""))
            if (entity, period) in reach and cell[1] == "not a number":
                refused.add((entity, period))
                written.append(cell[0])
        grouped = [w for w in written if _GROUPED.match(w)]
        lost = sorted(str(e) for e, n in Counter(e for e, _ in refused).items() if n == periods[e])
        if len(refused) / len(reach) > MOSTLY_TEXT and 2 * len(grouped) > len(written):
            problems.append(_separated(spec, within, column, grouped, len(refused), len(reach),
                                       "entity-periods in the windows' reach hold cells that are"))
        elif spec.wide is None and lost and len(grouped) >= _FEWEST_GROUPED and len(grouped) >= GROUPED_ALL * len(
                written):  # (a wide source's columns are each an entity's: `wide_columns_of_text` names them)
            shown = first_of([repr(e) for e in lost], 3)
            problems.append(_separated(
                spec, within, column, grouped, len(refused), len(reach),
                "entity-periods in the windows' reach hold cells that are",
                f", every one of {len(lost)} {'entity' if len(lost) == 1 else 'entities'}' ({shown}): the source "
                "groups its large figures"))
    return problems


GROUPED_ALL = 0.9
"""The share of a column's cells refused as not numbers in reach that must be grouped numbers (`1,025`) for
`grouped_in_reach` to name the separator key though they are few: the source groups its large figures, and the
entities whose every figure is large lose the column (trial 60: coffee imports above 999 written `1,234`, 707 of
4,320 cells, every figure of the 31 largest importers lost while check said ok beside a hint)."""
_FEWEST_GROUPED = 3
"""Fewest grouped cells that tell a source's writing: one `5,3` among typed answers is that text."""


def empty_columns(metrics: Mapping[str, MetricSpec], columns: dict[str, str], history: pl.DataFrame,
                  named: str, filled_somewhere: Callable[[list[str]], set[str]], long_values: str | None = None
                  ) -> list[str]:
    """A numeric column a metric reads, empty in every row the night reads though the rows are there and in every
    other row of the source too (`filled_somewhere`: the columns of those asked that any row fills): each metric
    over it has no value for any entity, and check said ok beside "metrics with gaps" (a file exported with the
    column blank, a `query` writing it NULL). A measure begun after the night, or stopped before its reach, is the
    source's own history: its night goes on with gaps. A column a problem already names (`named`: their text; its
    cells refused as text or not finite) is not said again, nor any name of a long source whose values' column
    (`long_values`) a problem names: every name's cells are that column's, refused as one (trial 62: `12.5%` in
    every row of a price index's long table was told besides "'College Tuition' is empty in every row")."""
    if long_values is not None and f"{long_values!r}:" in named:
        return []
    empty = [c for c in columns if c in history.columns and history.height and f"{c!r}:" not in named
             and history[c].null_count() == history.height
             and any(spec.column == c or c in (spec.columns or []) for spec in metrics.values())]
    if not empty:
        return []
    filled = filled_somewhere(empty)
    problems = []
    entities = history["entity_id"].n_unique()
    for column in (c for c in empty if c not in filled):
        reading = [name for name, spec in metrics.items() if spec.column == column or column in (spec.columns or [])]
        shown = first_of(reading, 2, joiner=" and ")
        problems.append(f"key `{columns[column]}`: {column!r} is empty in every row of the source, so {shown} "
                        f"{'has' if len(reading) == 1 else 'have'} no value for any of its {entities} "
                        f"{'entity' if entities == 1 else 'entities'}: expected the column that holds its figures (a "
                        "file exported with it blank, or a `query` writing it NULL)")
    return problems


def empty_event_columns(spec: SourceSpec, metrics: Mapping[str, MetricSpec], entities: int, named: str,
                        filled_somewhere: Callable[[list[str]], set[str]]) -> list[str]:
    """An events source's column an aggregate a metric reads takes its figures from (`sum`, `avg`, `min`, `max`,
    `count_distinct`), empty in every event of the source (`filled_somewhere`: the columns of those asked that any
    event in scope fills): a `sum` or a `count_distinct` of nothing is 0 in every period, a figure the source does
    not hold, an `avg`, `min` or `max` no value. `empty_columns` cannot see it: the panel holds the aggregates, not
    the events' columns. Trial 62: a `sum` of `bytes` and a `count_distinct` of `sender`, both blank in every row
    of the export, were 0 for every candidate while check said ok. A column a problem already names (`named`: its
    cells refused as text) is not said again."""
    if spec.shape != "events":
        return []
    read = {name: a for name, a in spec.aggregates.items() if a.column is not None and f"{a.column!r}:" not in named
            and any(m.agg != "derived" and m.column == name for m in metrics.values())}
    if not read:
        return []
    filled = filled_somewhere(sorted({a.column or "" for a in read.values()}))
    problems = []
    for name, aggregate in read.items():
        if aggregate.column in filled:
            continue
        over = [m for m, spec_ in metrics.items() if spec_.agg != "derived" and spec_.column == name]
        shown = first_of(over, 2, joiner=" and ")
        of = f"its {entities} {'entity' if entities == 1 else 'entities'}"
        said = (f"is 0 in every period and {shown} 0 for every one of {of}, a figure the source does not hold"
                if aggregate.agg in ("sum", "count_distinct") else f"has no value in any period, nor {shown} for any "
                                                                    f"of {of}")
        problems.append(f"key `source.aggregates.{name}.column`: {aggregate.column!r} is empty in every event of "
                        f"the source, so {name} (`{aggregate.agg}`) {said}: expected the column that holds the "
                        "events' figures (a file exported with it blank, or a `query` writing it NULL)")
    return problems


def wide_columns_of_text(spec: SourceSpec, quarantined: pl.DataFrame, history: pl.DataFrame) -> list[str]:
    """A wide source's column (one entity's series) whose cells the night reads are mostly text: a notes or a
    flags column listed among `wide.columns`. Judged per column: pooled with the others under `wide.value`, a
    column of text among four is a quarter of the cells, which `cell_problems` does not call mostly text. Counted
    in periods (a snapshot of days read by the week refuses several cells a period: trial 29's "338 of its 72
    cells"); a column of numbers with thousands grouped, or in a dress (`%`, a unit), is told the key that reads
    them, not to be left out."""
    if spec.wide is None or spec.wide.across != "entity":
        return []
    value = spec.wide.value
    reach = set(history["period"].to_list())  # the quarantine holds every period's rows, the history the night's
    periods: dict[str, set[object]] = {}
    for entity, period in history.select("entity_id", "period").rows():
        periods.setdefault(entity, set()).add(period)
    refused: dict[str, set[object]] = {}
    written: dict[str, list[str]] = {}
    for entity, period, reason in quarantined.select("entity_id", "period", "reason").rows():
        cell = bad_cells(reason, [value]).get(value, ("", ""))
        if period in reach and cell[1] == "not a number":  # a snapshot's or an event's period: several rows
            refused.setdefault(entity, set()).add(period)
            written.setdefault(entity, []).append(cell[0])
    problems = []
    for n, column in enumerate(spec.wide.columns):
        text, seen = len(refused.get(column, ())), len(periods.get(column, set()) | refused.get(column, set()))
        if not seen or text / seen <= MOSTLY_TEXT:
            continue
        key, cells = f"source.wide.columns.{n}", written[column]
        grouped = [w for w in cells if _GROUPED.match(w)]
        mostly_grouped = 2 * len(grouped) > len(cells)
        dressed = None if mostly_grouped else numbers_dressed(column, cells, spec)
        if mostly_grouped:  # numbers, written otherwise: the key that reads them (trial 29)
            problems.append(_separated(spec, "source", column, grouped, text, seen,
                                       f"periods in reach (`{key}`) hold cells that are"))
        elif dressed is not None:
            problems.append(f"key `{key}`: got {column!r}; {text} of its {seen} periods in reach hold cells that are "
                            f"not numbers (e.g. {dressed[0]!r}): {dressed[1]}")
        else:
            problems.append(f"key `{key}`: got {column!r}; {text} of its {seen} periods in reach hold cells that are "
                            "not numbers: expected a column of one entity's figures (list only such columns)")
    return problems


def wide_columns_empty(spec: SourceSpec, history: pl.DataFrame, quarantined: pl.DataFrame) -> list[str]:
    """A wide source's column with no figure in reach while others have some (a series the file has not filled, or
    a heading of empty cells listed among `wide.columns`): its entity scores nothing, every metric a gap, on a
    night that reads every other. A warning naming the column's key (text cells are `wide_columns_of_text`'s). A
    column of no row in reach under a `where` is one the condition kept out, as asked: no warning (trial 34)."""
    if spec.wide is None or spec.wide.across != "entity" or history.is_empty():
        return []
    filled = dict(history.group_by("entity_id").agg(_holds_a_figure(spec, history).sum()).rows())
    refused = set(quarantined["entity_id"].to_list())
    if not any(filled.values()):
        return []
    rows = dict(history.group_by("entity_id").len().rows())
    return [f"key `source.wide.columns.{n}`: got {column!r}; its column has no figure in reach (every cell "
            f"{f'of its {rows[column]} rows ' if rows.get(column) else ''}in reach empty), so {column!r} is scored "
            "on nothing: expected a column of one entity's figures (list only such columns)"
            for n, column in enumerate(spec.wide.columns)
            if not filled.get(column) and column not in refused and (rows.get(column) or not spec.where)]


def _holds_a_figure(spec: SourceSpec, history: pl.DataFrame) -> pl.Expr:
    """Whether a period of the history holds one of the wide column's figures. A panel's or a snapshot's row carries
    `wide.value` itself; an events source's panel carries only its aggregates, named as the pack likes (`nox_avg`
    over `value: nox`: trial 37's traceback), so there a period holds a figure when it read an event, an empty cell
    being none."""
    assert spec.wide is not None
    if spec.wide.value in history.columns:
        return pl.col(spec.wide.value).is_not_null()
    return pl.col("events_read") > 0


def wide_columns_counting(spec: SourceSpec, history: pl.DataFrame) -> list[str]:
    """A wide source's column whose values are the rows' own numbers, counting up by 1 from period to period
    (`rownames`, R's row number, listed among the series: each the line's number, or that less the header's):
    an entity scored on the row's number. A warning naming the column's key. Events are aggregated by the period
    before the night sees them, so no row's own number is left to judge there."""
    if spec.wide is None or spec.wide.across != "entity" or history.is_empty() \
            or spec.wide.value not in history.columns:
        return []
    value, warnings = spec.wide.value, []
    for n, column in enumerate(spec.wide.columns):
        rows = history.filter((pl.col("entity_id") == column) & pl.col(value).is_not_null()).sort("period")
        values, lines = rows[value].to_list(), rows["source_row"].to_list()
        if len(values) >= 6 and all(b - a == 1 for a, b in itertools.pairwise(values)) \
                and len({line - v for v, line in zip(values, lines, strict=True)} - {0, 1}) == 0:
            warnings.append(f"key `source.wide.columns.{n}`: got {column!r}; its values count up by 1 from one "
                            f"period to the next ({', '.join(f'{v:g}' for v in values[:3])}, ...: a row number, such "
                            f"as R's rownames), so {column!r} is scored as an entity: expected it left out of "
                            "`source.wide.columns`, unless it is a series of its own")
    return warnings


def text_cells(columns: dict[str, str], cells: list[dict[str, tuple[str, str]]], seen: int,
               within: str = "source") -> list[str]:
    """A numeric column some of whose cells (no more than `MOSTLY_TEXT` of those read: more is `cell_problems`'s)
    are text that is no grouped number and no missing-number token (those have facts of their own): `$200` in a
    third of the premiums, `155 seats`. Each such cell is quarantined; the fact names the column, the count, an
    example and, for a dressed number, the dress (`numbers_dressed`)."""
    facts = []
    for column in columns:
        written = [c[column][0] for c in cells if c.get(column, ("", ""))[1] == "not a number"]
        written = [w for w in written if not _GROUPED.match(w) and w not in MISSING_TEXTS]
        if not written or (seen and len(written) / seen > MOSTLY_TEXT):
            continue
        held = numbers_dressed(column, written) or _number_with_a_note(written, within)
        example, why = held if held is not None else (written[0], "expected plain numbers in the column (or, for a "
                                                      f"text that means a missing number, `{within}.na_values` "
                                                      "listing it)")
        facts.append(f"cells of {column!r} such as {example!r} ({len(written)}) are quarantined as not numbers: "
                     f"{why}")
    return facts


def negatives_unsigned(spec: SourceSpec, cells: list[dict[str, tuple[str, str]]],
                        problems: Sequence[str] = (), within: str = "source") -> list[str]:
    """Per column not `signed` whose cells the night reads were quarantined as negative (too few for a problem:
    `cell_problems`; a column one of `problems` names for `source.signed` is not said again), how many and an
    example, naming `source.signed`: a temperature below zero, a loss."""
    named = {m[1] for p in problems if (m := re.match(rf"key `{re.escape(within)}\.signed`: '(.+?)': ", p))}
    negative: dict[str, list[str]] = {}
    for c in cells:
        for column, (text, problem) in c.items():
            if problem == "negative" and column not in {*spec.signed, *spec.bounds, *named}:
                negative.setdefault(column, []).append(text)
    return [f"cells of {column!r} below zero ({len(texts)}, e.g. {texts[0]!r}) are quarantined as negative: if its "
            f"values may be below zero, list it in `{within}.signed`" + _missing_codes_hint(spec, within, texts)
            for column, texts in negative.items()]


def _missing_codes(written: list[str]) -> list[str]:
    """The few negative whole numbers a column's quarantined cells repeat (`-1`, `-9`: a survey's codes for "no
    answer", the World Values Survey's in every question), or none: values below zero that are no number at all
    are read as gaps by `na_values`; `signed` would average them in as figures."""
    distinct = sorted({w.strip() for w in written})
    if not distinct or len(distinct) > MISSING_CODES or len(written) < 10 * len(distinct):
        return []
    try:
        return distinct if all(float(w).is_integer() for w in distinct) else []
    except ValueError:
        return []


def _missing_codes_hint(spec: SourceSpec, within: str, written: list[str]) -> str:
    """The other reading of a column's negative cells when they repeat a code or two (`_missing_codes`): a missing
    number, for `na_values` (beside the ones it has), or nothing."""
    codes = _missing_codes(written)
    if not codes:
        return ""
    listed = [*spec.na_values, *(c for c in codes if c not in spec.na_values)]
    return (f"; but its negative cells are only {', '.join(repr(c) for c in codes)}, {len(written)} times: if "
            f"{'that is a code' if len(codes) == 1 else 'those are codes'} for a missing number (a survey's \"no "
            f"answer\"), list {'it' if len(codes) == 1 else 'them'} in `{within}.na_values` instead "
            f"(`na_values: {listed}`): `signed` would count {'it' if len(codes) == 1 else 'them'} as values")
