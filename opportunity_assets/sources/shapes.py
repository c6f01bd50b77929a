"""The SQL that turns `source_rows` (every needed column as text, `formats.py`) into the entity × period panel.

Three steps, each a SELECT the point-in-time query (`snapshot.py`) builds on. The source's own column
names appear only where its cells are read; everything computed has an internal name (`__…`), and the panel
names its value columns after the pack's `columns`.

1. `rows_sql`: every source row, in the source's order, with whether it is in scope (`source.where`), its entity,
   its period at the pack's grain, when it became known (`published_at`), a version that orders vintages or
   observations, its typed cells and what is wrong with it. Nothing here depends on the night: `typed_sql` is the
   table of it a night keeps (`formats.open_pack_source` makes it).
2. `judged_sql`: the night's judgment of each row in scope (`AS_OF`, `TODAY`): refused whole (and why), or seen. A
   row published after as_of is not seen at all: the filter sits here, before any aggregation.
3. `panel_sql`: the seen rows as one row per entity and period: the latest vintage or observation of a panel or
   snapshot, or a period's events aggregated (and periods without events filled: no event is a count of 0).
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime

from opportunity_assets.periods import FIRST_YEAR, LAST_YEAR, Grain
from opportunity_assets.sources.reading import ROW, literal
from opportunity_assets.sources.reading import quote_identifier as _q
from opportunity_assets.sources.spec import (
    DECIMAL_YEAR,
    ENTITY_JOINER,
    NO_BREAK_SPACES,
    UNIX_SCALES,
    AggregateSpec,
    Condition,
    JoinSpec,
    LongSpec,
    SourceSpec,
    is_unix,
    since,
)
from opportunity_assets.text import MAX_NAME

# Internal column names start with `__` (a source's never do): no source column can collide with one.
ENTITY, NAME, PERIOD, PUBLISHED = "__entity", "__name", "__period", "__published"
"""The panel's key columns (with `ROW`, the first source row behind a panel row)."""
REASON, CELL_REASON = "__reason", "__cell_reason"
"""Why a row is refused whole; what is wrong with its cells (each then a gap)."""
IN_SCOPE = "__in_scope"
EVENTS_READ, EVENTS_REPEATED = "__events", "__repeated"
"""An events panel's count of rows per entity and period, and of those that repeat another of them in every column
the night reads (a feed loaded twice): the verifier's `integrity.repeated_events` reads them."""
"""Whether a row is in the source's scope (`source.where`): kept as a flag so step 1 keeps every row, in order."""
AS_OF, TODAY = "getvariable('as_of')::DATE", "getvariable('today')::DATE"
"""The night and the real date, as session variables (`SET VARIABLE as_of = DATE '…'`): a query that creates a
table takes no prepared parameters."""
_VERSION, _DATE_PROBLEM, _COPIES, _SLUG = "__version", "__date_problem", "__copies", "__slug"
EVENT, LATEST = "__event", "__latest"
"""An event's own id (`source.event_id`), NULL where the source has none or the row's is empty; the row standing for
it on the night (`latest_of_events_sql`)."""
VARIABLE = "__variable"
"""A long source's row's name of its value (`long.names`, trimmed): part of its key."""


def _text(column: str) -> str:
    """A column's trimmed text; empty and NA are no value."""
    return f"nullif(nullif(trim({_q(column)}), ''), 'NA')"


def _number_text(src: SourceSpec, column: str) -> str:
    """A numeric column's text as DuckDB reads a number: missing texts NULL, thousands unseparated, a decimal point."""
    text = _missing_as_null(column, src.na_values)
    for dressing in src.strip_from_numbers:  # (`€1,234.50`: the sign, then the separator)
        text = f"trim(replace({text}, {literal(dressing)}, ''))"
    if src.thousands_separator is not None:
        text = _ungrouped(text, src.thousands_separator, src.decimal_separator)
    if src.decimal_separator != ".":
        text = f"replace({text}, {literal(src.decimal_separator)}, '.')"
    return text


def _ungrouped(text: str, separator: str, decimal: str) -> str:
    """SQL for a cell's text without its thousands separators where it is a grouped number (`1,234`, `-12,345.6`,
    `1,23,456`: a first group of 1 to 3 digits not led by 0, the last of 3), else as written, so that a text no
    grouping writes stays no number, quarantined: a decimal comma (`12,5`, `0,325`) under `thousands_separator:
    ","` was read as 125 and 325 (trial 38: a European export's rates, every one read a thousand times too large,
    and check blamed a formula range). A space separator is also a locale's no-break spaces (trial 35)."""
    separators = [separator, *(NO_BREAK_SPACES if separator == " " else ())]
    group = "[" + "".join(f"\\{c}" if c in "]\\^-" else c for c in separators) + "]"
    grouped = f"[+-]?[1-9][0-9]{{0,2}}({group}[0-9]{{2,3}})*{group}[0-9]{{3}}([{decimal}][0-9]*)?"
    return (f"CASE WHEN regexp_full_match(trim({text}), {literal(grouped)}) THEN regexp_replace({text}, "
            f"{literal(group)}, '', 'g') ELSE {text} END")


def _missing_as_null(column: str, tokens: list[str]) -> str:
    """A numeric column's text, NULL where it says the number is missing (`source.na_values`; `NA` by default)."""
    if not tokens:
        return _q(column)
    return f"CASE WHEN trim({_q(column)}) IN ({', '.join(literal(t.strip()) for t in tokens)}) THEN NULL " \
           f"ELSE {_q(column)} END"


def _strptime_sql(text: str, pattern: str | list[str]) -> str:
    """SQL for the TIMESTAMP a text names by a strptime pattern, or by the first of a list that parses it."""
    patterns = [pattern] if isinstance(pattern, str) else pattern
    parsed = [_unix_time_sql(text, UNIX_SCALES[p]) if is_unix(p) else _decimal_year_sql(text) if p == DECIMAL_YEAR
              else _since_sql(text, counted) if (counted := since(p)) is not None
              else _two_digit_year_sql(f"try_strptime({text}, {literal(p)})", p) for p in patterns]
    return parsed[0] if len(parsed) == 1 else f"coalesce({', '.join(parsed)})"


def _two_digit_year_sql(parsed: str, pattern: str) -> str:
    """`parsed` (a pattern's TIMESTAMP), a century earlier where the pattern writes the year in two digits (`%y`)
    and the year read lies after today's: strptime reads 00-68 as 2000-2068, so NLS's survey of `68` would be
    2068, a period after today, where a two-digit year means the latest year of its digits not after this one
    (1968). The year is the `today` variable's, else the clock's (the rows are typed before a night sets it)."""
    if "%y" not in pattern:
        return parsed
    this_year = f"year(coalesce({TODAY}, current_date))"
    return f"(CASE WHEN year({parsed}) > {this_year} THEN {parsed} - INTERVAL 100 YEAR ELSE {parsed} END)"


def _unix_time_sql(text: str, per_second: int) -> str:
    """SQL for the UTC TIMESTAMP a text of Unix time names in units of 1/`per_second` s since 1970 (`1469278482`,
    `1469278482.5` in seconds; `1469278482000` in milliseconds), or NULL. At most 11 digits' worth of seconds (the
    year 5138), so the microseconds fit a BIGINT: milliseconds read as seconds are no date."""
    digits = 11 + len(str(per_second)) - 1
    units = f"try_cast({text} AS DOUBLE)"
    return f"CASE WHEN regexp_full_match({text}, '-?[0-9]{{1,{digits}}}(\\.[0-9]*)?') " \
           f"THEN make_timestamp(CAST(round({units} * {10**6 / per_second!r}) AS BIGINT)) END"


def _since_sql(text: str, counted: tuple[int, datetime]) -> str:
    """SQL for the TIMESTAMP a count of units from a first moment names (`since`: `107` days since 2020-02-29 is
    2020-06-15), or NULL: a number, whole or decimal (`79.0`, as a column with gaps is exported), within 10 million
    units, so that no count in the wrong unit overflows."""
    per_unit, origin = counted
    count = f"try_cast(trim({text}) AS DOUBLE)"
    return (f"CASE WHEN regexp_full_match(trim({text}), '-?[0-9]{{1,7}}(\\.[0-9]*)?') THEN "
            f"TIMESTAMP '{origin.isoformat(sep=' ')}' + to_microseconds(CAST(round({count} * {per_unit * 10**6}) "
            "AS BIGINT)) END")


def _decimal_year_sql(text: str) -> str:
    """SQL for the TIMESTAMP a decimal year names (`1981.25`, `1991.0833`: the year plus the fraction of it gone),
    or NULL: a quarter's, else a month's, first day when the value lies within its written precision (half its last
    decimal) of that period's index, k/4 or k/12 (`1960.8` is the fourth quarter, `1949.08` February: trial 32's
    AirPassengers rounded to 2 decimals read 48 months into the month before, each a duplicated key); else the day
    that fraction of the year's days reaches, rounded up (February's 1/12 of 365 days, 30.4, is its first day, not
    31 January's)."""
    value = f"try_cast({text} AS DOUBLE)"
    year = f"floor({value})::INTEGER"
    days = f"(make_date({year} + 1, 1, 1) - make_date({year}, 1, 1))"
    half = f"(0.5 * pow(10, -length(split_part(trim({text}), '.', 2))))"

    def start(per_year: int) -> tuple[str, str]:
        """Whether the value lies within its precision of a period's index, and that period's first day."""
        index = f"(({value} - {year}) * {per_year})"
        return (f"abs({index} - round({index})) <= {half} * {per_year} + 1e-9",
                f"make_date({year}, 1, 1) + to_months(CAST(round({index}) * {12 // per_year} AS INTEGER))")

    (quarter, quarter_day), (month, month_day) = start(4), start(12)
    return (f"CASE WHEN regexp_full_match(trim({text}), '[0-9]{{4}}(\\.[0-9]*)?') THEN (CASE WHEN {quarter} THEN "
            f"{quarter_day} WHEN {month} THEN {month_day} ELSE make_date({year}, 1, 1) + "
            f"CAST(ceil(({value} - {year}) * {days} - 1e-6) AS INTEGER) END)::TIMESTAMP END")


def _iso_week_sql(text: str) -> str:
    """SQL for the Monday of the ISO week a text names as `1991 W06`, `1991-W06` or `1991W06` (tsibble's yearweek),
    or NULL: a week the year has not (`2016 W53`) is no date, not the next year's first week."""
    week = f"regexp_replace({text}, '^([0-9]{{4}}) ?-? ?[Ww]([0-9]{{2}})$', '\\1 W\\2')"
    monday = f"try_strptime({week}, '%G W%V')::DATE"
    return f"CASE WHEN regexp_matches({text}, '^[0-9]{{4}} ?-? ?[Ww][0-9]{{2}}$') " \
           f"AND strftime({monday}, '%G W%V') = {week} THEN {monday} END"


def _moment_sql(text: str, zoned: bool) -> str:
    """SQL for the TIMESTAMP an ISO date or timestamp text names, or NULL. `zoned` (a pack's `time_zone`, the
    session's zone): an offset it carries (`+10:00`, `Z`) is turned into the zone's wall-clock time; else the time
    is read as written, its offset dropped. Only text that starts with a year of four digits, as ISO writes it
    (`_iso_year`). Zoned, a moment ending in a zone's abbreviation but UTC or GMT (`00:30 BST`) is none: DuckDB
    reads one by a table of its own, BST as Bangladesh's (trial 114: a UK feed's rows known a day early), and an
    abbreviation names no one clock (IST: India, Ireland or Israel)."""
    if not zoned:
        return _iso_year(text, f"try_cast({text} AS TIMESTAMP)")
    cast = f"try_cast({text} AS TIMESTAMPTZ)::TIMESTAMP"
    abbreviated = f"regexp_matches({text}, '\\s[A-Za-z]{{2,5}}$') AND NOT regexp_matches({text}, '\\s(UTC|GMT)$', 'i')"
    return _iso_year(text, f"(CASE WHEN NOT ({abbreviated}) THEN {cast} END)")


def _iso_year(text: str, parsed: str) -> str:
    """`parsed`, a reading of `text` without a pattern, where the text starts with a year of four digits, else
    NULL: DuckDB's cast also reads a year of one or two digits first, so a US date of a two-digit year, `10/1/09`,
    was 9 January of the year 10 and `9-12` December of the year 9 (trial 60: HHS breach reports read in Januaries
    of the first century, check telling `grain: year`), where no pattern was given to say so."""
    return f"(CASE WHEN regexp_matches({text}, '^[0-9]{{4}}') THEN {parsed} END)"


def date_sql(column: str, pattern: str | list[str] | None = None, zoned: bool = False) -> str:
    """SQL for the DATE a text cell names, or NULL: by `pattern` (strptime; a list: the first that parses it) if
    given, else an ISO date or timestamp (`zoned`: `_moment_sql`), `2015-07`, `2015 Q3` / `2015-Q3` / `2015Q3` /
    `Q3 2015`, a bare year, or an ISO week, `1991 W06` / `1991-W06` / `1991W06` (its Monday).
    Years outside `periods.FIRST_YEAR`..`LAST_YEAR` are no date."""
    t = _text(column)
    if pattern is not None:
        parsed = f"{_strptime_sql(t, pattern)}::DATE"
    else:
        month = _iso_year(t, f"try_strptime({t}, '%Y-%m')")
        parsed = (f"coalesce({_moment_sql(t, zoned)}::DATE, {month}::DATE, "
                  f"CASE WHEN regexp_matches({t}, '^[0-9]{{4}} ?-? ?[Qq][1-4]$') "
                  f"THEN make_date(left({t}, 4)::INTEGER, (right({t}, 1)::INTEGER - 1) * 3 + 1, 1) END, "
                  f"CASE WHEN regexp_matches({t}, '^[Qq][1-4] ?-? ?[0-9]{{4}}$') "
                  f"THEN make_date(right({t}, 4)::INTEGER, (substr({t}, 2, 1)::INTEGER - 1) * 3 + 1, 1) END, "
                  f"CASE WHEN regexp_matches({t}, '^[0-9]{{4}}$') THEN make_date({t}::INTEGER, 1, 1) END, "
                  f"{_iso_week_sql(t)})")
    return f"(CASE WHEN year({parsed}) BETWEEN {FIRST_YEAR} AND {LAST_YEAR} THEN {parsed} END)"


def published_sql(column: str, zoned: bool = False) -> str:
    """SQL for the DATE a publication cell names, or NULL: an ISO date or timestamp only (`zoned`: `_moment_sql`).
    A bare year (`1988`), a month (`2015-07`) or a quarter names no day a row became known (read as its first day,
    every row would be known before its period ended: a look-ahead)."""
    parsed = f"{_moment_sql(_text(column), zoned)}::DATE"
    return f"(CASE WHEN year({parsed}) BETWEEN {FIRST_YEAR} AND {LAST_YEAR} THEN {parsed} END)"


_LATIN_LETTERS = {"ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "ð": "d", "þ": "th", "ł": "l", "đ": "d", "ı": "i",
                  "ħ": "h", "ŀ": "l"}
"""Latin letters no accent makes (no decomposition takes them to a base letter), written as their base letters:
`Trøndelag` is `trondelag`, as `Zürich` is `zurich` (their ids read `tr-ndelag` and `z-rich`: trial 35)."""


def entity_slug(key: str) -> str:
    """An entity key's slug, its candidate id (`candidates.logic.candidate_id`): lowercase, accents and other marks
    dropped (`São Paulo` is `sao-paulo`), the Latin letters `_LATIN_LETTERS` names written plain, runs of anything
    but letters and digits one `-`; letters of other scripts are kept (`москва`). A joined table's ids are matched
    by it: `AL` is `al`. `slug_sql` is the same in SQL, to the character (a test compares them over every code
    point)."""
    if key.isascii():  # (nearly every key: no mark to drop, no other letter to keep; 10 times faster)
        return re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-") or "entity"
    bare = unicodedata.normalize("NFD", key.lower())
    text = unicodedata.normalize("NFC", "".join(c for c in bare if not unicodedata.category(c).startswith("M")))
    for letter, plain in _LATIN_LETTERS.items():
        text = text.replace(letter, plain)
    return re.sub(r"[\W_]+", "-", text).strip("-") or "entity"


def slug_sql(text: str) -> str:
    """SQL for `entity_slug` of a text (NULL stays NULL): DuckDB's `strip_accents` drops every mark, as
    `entity_slug` does."""
    plain = f"strip_accents(lower({text}))"
    for letter, written in _LATIN_LETTERS.items():
        plain = f"replace({plain}, {literal(letter)}, {literal(written)})"
    slug = f"trim(regexp_replace({plain}, '[^\\p{{L}}\\p{{N}}]+', '-', 'g'), '-')"
    return f"(CASE WHEN {text} IS NOT NULL THEN coalesce(nullif({slug}, ''), 'entity') END)"


def _timestamp_sql(column: str, pattern: str | list[str] | None, zoned: bool) -> str:
    """The full moment a text cell names (an observation's order within its period)."""
    t = _text(column)
    if pattern is not None:
        return _strptime_sql(t, pattern)
    return f"coalesce({_moment_sql(t, zoned)}, {date_sql(column, zoned=zoned)}::TIMESTAMP)"


def listed_sql(text: str, values: list[str]) -> str:
    """SQL for whether a text is one of `values` (as written, trimmed), a truth value in any case and spelling:
    `true` and `false` match `True`, `TRUE`, `yes` and `no` alike, as Parquet, JSON Lines, pandas' CSV, a
    spreadsheet and a survey each spell them (and YAML reads an unquoted `yes` as `true`)."""
    truths = sorted({s for v in values for s in TRUTH_WORDS.get(v.strip().lower(), ())})
    others = [v for v in values if v.strip().lower() not in TRUTH_WORDS]
    tests = ([f"{text} IN ({', '.join(literal(v) for v in others)})"] if others else []) + \
        ([f"lower({text}) IN ({', '.join(literal(v) for v in truths)})"] if truths else [])
    return f"({' OR '.join(tests)})" if tests else "false"


TRUTH_WORDS = {"true": ("true", "yes", "on"), "false": ("false", "no", "off")}
"""Listed values that match a cell in any case and any of these spellings (`listed_sql`): the words YAML reads as
each truth value."""


def condition_sql(condition: Condition, src: SourceSpec) -> str:
    """A `where` condition as a SQL boolean (never NULL: an empty cell does not match). A numeric comparison reads
    the cell as the source's numbers are read (`_compared_number`)."""
    t = _text(condition.column)
    if condition.in_ is not None:
        test = listed_sql(t, condition.in_)
    elif condition.not_in is not None:
        test = f"NOT {listed_sql(t, condition.not_in)}"
    else:
        test = f"try_cast({_compared_number(src, condition.column)} AS DOUBLE) {condition.op} {condition.value!r}"
    return f"coalesce({test}, false)"


def _compared_number(src: SourceSpec, column: str) -> str:
    """The text of a cell a numeric `where` compares, read as the source's numbers are (`strip_from_numbers`, the
    separators; NULL where empty or a missing text): trial 33's delays written `14.0min`, told to set
    `strip_from_numbers: ['min']`, then had a `where` `dep_delay > 15` that read the cell's raw text and matched
    no row, with no key left to set."""
    return f"nullif(trim({_number_text(src, column)}), '')"


def listed_conditions(src: SourceSpec) -> list[tuple[str, Condition, str]]:
    """Each `in` / `not_in` condition of the source's `where` and its aggregates' `where`: its key under the source
    (`where.0`, `aggregates.large.where.0`), the condition, and the typed rows' column holding the text it compares
    (one per source column), whose values `check` holds the listed ones against."""
    found = [(f"where.{i}", c) for i, c in enumerate(src.where) if c.op is None]
    found += [(f"aggregates.{name}.where.{i}", c)
              for name, spec in src.aggregates.items() for i, c in enumerate(spec.where) if c.op is None]
    columns = list(dict.fromkeys(c.column for _, c in found))
    return [(key, c, f"__listed_{columns.index(c.column)}") for key, c in found]


def numeric_conditions(src: SourceSpec) -> list[tuple[str, Condition, str]]:
    """Each numeric comparison (`op`) of the source's `where` and its aggregates' `where`: its key under the
    source (`where.0`, `aggregates.large.where.0`), the condition, and the typed rows' column holding the cell's text
    as a number is read (NULL where empty or NA; a `strip_from_numbers` text removed), among which `check` counts
    the cells that are not numbers."""
    found = [(f"where.{i}", c, f"__text_where_{i}") for i, c in enumerate(src.where) if c.op is not None]
    found += [(f"aggregates.{name}.where.{i}", c, f"__text_agg_{name}_{i}")
              for name, spec in src.aggregates.items() for i, c in enumerate(spec.where) if c.op is not None]
    return found


def cell_columns(src: SourceSpec) -> list[str]:
    """The numeric source columns read cell by cell: the panel's columns, or the event columns aggregated as
    numbers (a column only counted distinct may be text)."""
    if src.shape != "events":
        return list(src.columns)
    return sorted({a.column for a in src.aggregates.values() if a.column and a.agg != "count_distinct"})


def distinct_columns(src: SourceSpec) -> list[str]:
    """Event columns read as text only, for `count_distinct`."""
    numeric = set(cell_columns(src))
    return sorted({a.column for a in src.aggregates.values()
                   if a.agg == "count_distinct" and a.column and a.column not in numeric})


def cell(column: str) -> str:
    """The internal name of a source column's typed cell."""
    return _q(f"__v_{column}")


def outside_bounds_sql(src: SourceSpec, column: str) -> str | None:
    """SQL true where the column's typed cell lies outside its bounds (`SourceSpec.floor` and `ceiling`: negative
    where not `signed`, beyond declared `bounds`); None where it has neither."""
    tests = [f"{cell(column)} {op} {bound!r}" for op, bound in (("<", src.floor(column)), (">", src.ceiling(column)))
             if bound is not None]
    return " OR ".join(tests) or None


def value_of(src: SourceSpec, column: str) -> str:
    """The internal name of a source column's value in the typed rows: its number (`cell`), or for an event column
    only counted distinct, its text (`_raw`)."""
    return cell(column) if src.shape != "events" or column in cell_columns(src) else _raw(column)


def missing_of(src: SourceSpec, column: str) -> str:
    """SQL true where a column's cell is missing in the typed rows, empty or `na_values` (a row with a cell of text
    that is no number is not: it is refused, with its own reason)."""
    if column in cell_columns(src):
        return f"({cell(column)} IS NULL AND {CELL_REASON} IS NULL)"
    return f"{value_of(src, column)} IS NULL"


def _raw(column: str) -> str:
    """The internal name of a source column's text as read (a number's, before it is parsed)."""
    return _q(f"__raw_{column}")


def _shown(column: str) -> str:
    """The internal name of a numeric cell's text as the file writes it, kept where the source reads its numbers
    otherwise (`dressed`): a refused cell is quoted as its user sees it, `'-7,7 %'`, not `'-7.7'` (trial 77: an
    export's `3.923,0`, without `thousands_separator`, was told `'3.923.0' is not a number`)."""
    return _q(f"__shown_{column}")


def dressed(src: SourceSpec) -> bool:
    """Whether the source reads its numbers from text other than DuckDB's: a sign or separator taken off, a decimal
    comma made a point."""
    return bool(src.strip_from_numbers) or src.thousands_separator is not None or src.decimal_separator != "."


def _as_written(column: str) -> str:
    """The internal name of a key column's text as written (a period, a year, a publication date), kept for the
    reasons that quote it: a refused row's key, a duplicated key."""
    return _q(f"__written_{column}")


def written(column: str) -> str:
    """The typed rows' column holding a key column's text as written (a period, a year, a publication date): what
    `check` quotes as an example of a column's values."""
    return _as_written(column)


def _quoted(column: str) -> str:
    """A key column's text as a reason quotes it (`year=2015`), from its `_as_written` column."""
    return f"{literal(column + '=')} || coalesce({_as_written(column)}, '')"


def _number(column: str) -> str:
    """The internal name of a year or month column parsed as a number (`_parsed_keys`)."""
    return _q(f"__n_{column}")


def _parsed_keys(src: SourceSpec) -> str:
    """The year, month and day columns parsed as numbers, once per row, for `_whole` to test and use (a parse repeated
    in each of the period's tests cost a wide source a quarter of its typing). DuckDB's cast reads a number with
    spaces around it; a quarter written `Q3` is 3 (a wide table's headers `Q1` ... `Q4` beside its year column)."""
    if src.known_at is not None or src.period_column is not None:
        return ""
    keys = [c for c in (src.year_column, src.month_column, src.day_column, src.quarter_column, src.week_column) if c]
    return "".join(f", {_quarter_number(c) if c == src.quarter_column else f'try_cast({_q(c)} AS DOUBLE)'} "
                   f"AS {_number(c)}" for c in keys)


def _quarter_number(column: str) -> str:
    """SQL for a quarter column's number: `3`, `3.0` or `Q3` (`q3`) are 3."""
    return (f"coalesce(try_cast({_q(column)} AS DOUBLE), "
            f"try_cast(regexp_extract(trim({_q(column)}), '^[Qq]([1-4])$', 1) AS DOUBLE))")


def _whole(column: str) -> str:
    """SQL for the column's value as a whole number, or NULL: `2009` and `2009.0` are 2009, `2009.5` is no year
    (an integer cast would round it to 2010, into another period). Reads the number `_parsed_keys` made."""
    number = _number(column)
    return f"(CASE WHEN {number} = floor({number}) AND abs({number}) < 1e9 THEN {number}::INTEGER END)"


def _period_sql(src: SourceSpec, grain: Grain) -> tuple[str, str]:
    """(SQL for the period start over the source's columns, SQL for the text a reason quotes over their
    `_as_written` copies: evaluated only for a row that needs it)."""
    if src.known_at is not None:
        return grain.sql_start(f"DATE '{src.known_at.isoformat()}'"), "''"
    if src.period_column is not None:
        day = date_sql(src.period_column, src.period_format, src.time_zone is not None)
        return grain.sql_start(day), _quoted(src.period_column)
    year = _whole(src.year_column or "")
    quoted = _quoted(src.year_column or "")
    if src.quarter_column is not None:
        quarter = _whole(src.quarter_column)
        start = (f"CASE WHEN {year} BETWEEN {FIRST_YEAR} AND {LAST_YEAR} AND {quarter} BETWEEN 1 AND 4 "
                 f"THEN make_date({year}, 3 * {quarter} - 2, 1) END")
        return grain.sql_start(start), f"{quoted} || ', ' || {_quoted(src.quarter_column)}"
    if src.week_column is not None:  # the ISO week's Monday; a week 53 the year has not is no date
        week = _whole(src.week_column)
        written = f"printf('%d W%02d', {year}, {week})"
        monday = f"try_strptime({written}, '%G W%V')::DATE"
        start = (f"CASE WHEN {year} BETWEEN {FIRST_YEAR} AND {LAST_YEAR} AND {week} BETWEEN 1 AND 53 "
                 f"AND strftime({monday}, '%G W%V') = {written} THEN {monday} END")
        return grain.sql_start(start), f"{quoted} || ', ' || {_quoted(src.week_column)}"
    if src.month_column is None:
        return f"CASE WHEN {year} BETWEEN {FIRST_YEAR} AND {LAST_YEAR} THEN make_date({year}, 1, 1) END", quoted
    month = _month(src.month_column)
    quoted += f" || ', ' || {_quoted(src.month_column)}"
    day = "1" if src.day_column is None else _whole(src.day_column)
    if src.day_column is not None:
        quoted += f" || ', ' || {_quoted(src.day_column)}"
    # a day the month has not (30 February) is no date: `try` makes it NULL, its row unparseable (a month's first
    # day always is one: no `try`, which costs a typed read of 2M rows about a second)
    made = f"make_date({year}, {month}, {day})"
    start = (f"CASE WHEN {year} BETWEEN {FIRST_YEAR} AND {LAST_YEAR} AND {month} BETWEEN 1 AND 12 "
             f"THEN {made if src.day_column is None else f'try({made})'} END")
    return grain.sql_start(start), quoted


def _month(column: str) -> str:
    """SQL for a month column's month, 1-12: a whole number (`_whole`), or a month's name in English, written in
    full or short, in any case (`January`, `jan`, `SEP`, and `Sept`, which strptime's `%b` lacks), as a table with
    `Year` and `Month` columns writes it."""
    text = f"trim({_q(column)})"
    named = (f"coalesce(month(try_strptime({text}, '%b')), month(try_strptime({text}, '%B')), "
             f"CASE WHEN lower({text}) = 'sept' THEN 9 END)")
    return f"(CASE WHEN {_number(column)} IS NOT NULL THEN {_whole(column)} ELSE {named} END)"


def periods_sql(src: SourceSpec, grain: Grain, relation: str) -> str:
    """Each row of `relation` (the source's dating columns as text, and any others) with `PERIOD`, its period's
    start at the grain, or NULL where its dates name none (a rejected line's, `formats.date_rejected`): an internal
    name, as a source's period column may be called `period`."""
    period, _ = _period_sql(src, grain)
    parsed = _parsed_keys(src)
    return f"SELECT *, {period} AS {PERIOD} FROM (SELECT *{parsed} FROM {relation})"


def versioned(src: SourceSpec) -> bool:
    """Whether rows of one entity and period may differ in version (vintages by `published_column`, a snapshot's
    observations by their moment), the latest winning; otherwise two such rows are a duplicated key."""
    return src.published_column is not None or (src.shape == "snapshot" and src.period_column is not None)


OBSERVED = "__observed"
"""A snapshot's or an events row's own moment (its `period_column`), as a DATE, where a `published_column` dates
it too: a row is never seen before it happened (`published_at` is the later of the two), and `check` counts the
rows published before it (`observed_first`)."""


def observed_first(src: SourceSpec) -> bool:
    """Whether `src`'s rows carry `OBSERVED`: a snapshot or events under both a `period_column` (each row's moment)
    and a `published_column` (when it became known), which may wrongly name a day before the moment."""
    return src.shape in ("snapshot", "events") and src.period_column is not None and \
        src.published_column is not None


def period_end_first(src: SourceSpec) -> bool:
    """Whether `src`'s rows are read from their period's last day at the earliest: a panel's (or a joined panel's)
    under a `published_column`, whose figure for a period cannot be known before the period is over (trial 61: a
    few rows of 2016 dated 2016-03-01, too few for check's look-ahead problem, made 2016 the latest period of the
    night of 2016-06-30). `check` counts such rows by the date given (`__published_given`)."""
    return src.shape == "panel" and src.published_column is not None


def rows_sql(src: SourceSpec, grain: Grain, relation: str = "source_rows") -> str:
    """Step 1 (see the module): one row per source row, read from `relation` (a joined table's rows are in their
    own). Text is built only where a reason needs it: a cell's parse and a key's are tested first. A snapshot's
    rows under a `published_column` are versioned by their moment first, then by publication: the period's latest
    observation stands for it, as its latest vintage known (trial 27: a weighing's revision published after a later
    weighing stood for the month in its place)."""
    period, period_text = _period_sql(src, grain)
    observed = ""
    if src.published_column is not None:
        zoned = src.time_zone is not None
        given, version = published_sql(src.published_column, zoned), published_sql(src.published_column, zoned)
        published = "__published_given"
        if observed_first(src):
            moment = _timestamp_sql(src.period_column or "", src.period_format, zoned)
            observed = f", {moment}::DATE AS {OBSERVED}"
            published = f"CASE WHEN __published_given < {OBSERVED} THEN {OBSERVED} ELSE __published_given END"
            if src.shape == "snapshot":
                version = f"[{moment}, {version}::TIMESTAMP]"
        elif period_end_first(src):
            end = grain.sql_end(PERIOD)
            published = f"CASE WHEN __published_given < {end} THEN {end} ELSE __published_given END"
        published_problem = (f"WHEN {PUBLISHED} IS NULL THEN {literal(src.published_column + ' unparseable: ')} "
                             f"|| coalesce({_as_written(src.published_column)}, '')")
    else:
        given, published_problem = "NULL::DATE", ""
        published = f"DATE '{src.known_at.isoformat()}'" if src.known_at is not None else \
            f"({grain.sql_end(PERIOD)} + INTERVAL ({src.publication_lag_days}) DAY)::DATE"
        version = "NULL::TIMESTAMP"
    if versioned(src) and src.published_column is None:
        version = _timestamp_sql(src.period_column or "", src.period_format, src.time_zone is not None)
    cells = cell_columns(src)
    written = "".join(f", {_q(c)} AS {_as_written(c)}" for c in src.dated_columns)
    raw_cells = "".join([*(f", {_number_text(src, c)} AS {_raw(c)}" for c in cells),
                         *(f", {_q(c)} AS {_shown(c)}" for c in cells if dressed(src)),
                         *(f", {_text(c)} AS {_raw(c)}" for c in distinct_columns(src))])
    # DuckDB's cast reads a number with spaces around it, and no number from '', ' ' or 'NA': `_text`'s trimming
    # is needed only to quote a bad cell
    typed_cells = "".join(f", try_cast({_raw(c)} AS DOUBLE) AS {cell(c)}" for c in cells)

    def bad(c: str) -> str:
        outside = f" OR {test}" if (test := outside_bounds_sql(src, c)) else ""
        return f"({cell(c)} IS NULL AND {_raw(c)} IS NOT NULL{outside} OR isinf({cell(c)}) OR isnan({cell(c)}))"

    def problem(c: str) -> str:
        text = f"nullif(nullif(trim({_raw(c)}), ''), 'NA')"
        said = f"{literal('column ' + c + ': ')} || {f'trim({_shown(c)})' if dressed(src) else text}"
        low, high = src.floor(c), src.ceiling(c)
        outside = ""
        if low is not None:
            below = " is negative" if low == 0 and c not in src.bounds else f" is below {low:g}, its bounds low"
            outside = f"WHEN {cell(c)} < {low!r} THEN {said} || {literal(below)} "
        outside += "" if high is None else \
            f"WHEN {cell(c)} > {high!r} THEN {said} || {literal(f' is above {high:g}, its bounds high')} "
        # not finite before the bounds: `-inf` read as negative was told to list its column in `signed`, which
        # would quarantine it all the same (trial 59)
        return (f"CASE WHEN {text} IS NOT NULL AND {cell(c)} IS NULL THEN {said} || ' is not a number' "
                f"WHEN isinf({cell(c)}) OR isnan({cell(c)}) THEN {said} || ' is not finite' {outside}END")

    problems = (f"CASE WHEN {' OR '.join(bad(c) for c in cells)} "
                f"THEN nullif(concat_ws('; ', {', '.join(problem(c) for c in cells)}), '') END") if cells else "NULL"
    flags = "".join(f", {condition_sql(c, src)} AS {_match(name, i)}"
                    for name, spec in src.aggregates.items() for i, c in enumerate(spec.where))
    flags += "".join(f", {_compared_number(src, c.column)} AS {_q(text)}" for _, c, text in numeric_conditions(src))
    flags += "".join(f", {_text(c.column)} AS {_q(text)}"
                     for text, c in {text: c for _, c, text in listed_conditions(src)}.items())
    entity = entity_of(src)
    if isinstance(src, JoinSpec):  # a joined table's ids are slugs: they match the main source's by slug
        entity = slug_sql(entity)
    scope = " AND ".join([*(condition_sql(c, src) for c in src.where), *_long_scope(src.long, src.columns)]) or "true"
    variable = "" if src.long is None else f", nullif(trim({_q(src.long.names)}), '') AS {VARIABLE}"
    if src.event_id_columns:
        variable += f", {entity_sql(src.event_id_columns)} AS {EVENT}"
    shown = f" EXCLUDE ({', '.join(_shown(c) for c in cells)})" if cells and dressed(src) else ""
    return f"""
    SELECT *{shown}, {problems} AS {CELL_REASON},
           CASE WHEN {PERIOD} IS NULL THEN 'period unparseable: ' || {period_text}
                {published_problem} END AS {_DATE_PROBLEM}
    FROM (
        SELECT *{typed_cells}, {published} AS {PUBLISHED}
        FROM (
            SELECT {ROW},
                   {entity} AS {ENTITY},
                   {entity_of(src, name=True)} AS {NAME},
                   {period} AS {PERIOD}, {given} AS __published_given,
                   {version} AS {_VERSION}{observed}, {scope} AS {IN_SCOPE}{variable}{written}{raw_cells}{flags}
            FROM {f"(SELECT *{parsed} FROM {relation})" if (parsed := _parsed_keys(src)) else relation}
        )
    )"""


def wide_sql(src: SourceSpec, relation: str) -> str:
    """A wide source's rows as a panel's, over its rows as text: one row per line and column of `wide.columns`,
    the column's header its entity or period (`wide.entity`, `wide.period`), its cell the value (`wide.value`), an
    empty cell kept empty (a gap, not a missing row); the line's other columns (its period, or its entity) on each.
    Read as events (a daily series by the week), a cell is an event and an empty one (or one of `na_values`) none:
    a `count` counts the figures."""
    wide = src.wide
    assert wide is not None
    names = ", ".join(literal(c) for c in wide.columns) if wide.counted_from is None else \
        ", ".join(_counted_period(wide.counted_from, c, k, wide.counted_in or src.grain)
                  for c, k in zip(wide.columns, wide.counts, strict=True))
    cells = ", ".join(_q(c) for c in wide.columns)
    rows = (f"(SELECT * EXCLUDE ({cells}), unnest([{names}]) AS {_q(wide.header)}, "
            f"unnest([{cells}]) AS {_q(wide.value)} FROM {relation})")
    if src.shape != "events":
        return rows
    return f"(SELECT * FROM {rows} WHERE nullif(trim({_missing_as_null(wide.value, src.na_values)}), '') IS NOT NULL)"


def _counted_period(counted_from: str, header: str, count: int, grain: str) -> str:
    """SQL for the period text of a wide column counted from a row's date (`wide.counted_from`): the ISO day
    `count - 1` periods of `grain` (`wide.counted_in`) after that date (`wk3` of a song that entered on 2000-02-26:
    2000-03-11), or, where the date is no ISO date, the date as written and the header (`2/26/2000 + wk3`), which
    parses as no period (its row quarantined, quoting it)."""
    day = f"try_cast(trim({_q(counted_from)}) AS DATE)"
    later = f"({day} + INTERVAL ({(count - 1) * (7 if grain == 'week' else 1)}) " \
        f"{'DAY' if grain in ('day', 'week') else grain.upper()})::DATE"
    return f"coalesce(strftime({later}, '%Y-%m-%d'), trim({_q(counted_from)}) || {literal(' + ' + header)})"


def long_sql(long: LongSpec, columns: list[str], relation: str) -> str:
    """A long source's rows with a text column per name of `columns`, over its rows as text: a row's value
    (`long.values`) in the column its name (`long.names`, trimmed) gives, the others empty. A row stays one row,
    keyed by its name too (`VARIABLE`), so a bad cell or a duplicated row refuses that value alone; the panel
    (`panel_sql`) puts an entity's values of a period in one row."""
    name = f"trim({_q(long.names)})"
    cells = ", ".join(f"CASE WHEN {name} = {literal(c)} THEN {_q(long.values)} END AS {_q(c)}" for c in columns)
    return f"(SELECT *, {cells} FROM {relation})"


def _long_scope(long: LongSpec | None, columns: list[str]) -> list[str]:
    """A long source's scope condition: a row of a name not in `columns` is not read."""
    if long is None:
        return []
    return [f"coalesce(trim({_q(long.names)}) IN ({', '.join(literal(c) for c in columns)}), false)"]


def typed_sql(src: SourceSpec, grain: Grain, relation: str = "source_rows") -> str:
    """Step 1 as the table a night reads (`formats.TYPED`), without what step 2 can do without: the text only
    step 1 reads (numbers, periods and publication dates as written: each is already a typed cell and, if bad, a
    reason), the name when it is the id's column, the version when rows have none. On a wide source that is half
    the rows' size; `judged_sql` puts the name and version back."""
    given = [] if observed_first(src) or period_end_first(src) else ["__published_given"]
    scratch = [*given, *(f"__raw_{c}" for c in cell_columns(src))]
    if _name_is_id(src):
        scratch.append(NAME)
    if not versioned(src):
        scratch.append(_VERSION)
    if src.wide is not None:
        relation = wide_sql(src, relation)
    if src.long is not None:
        relation = long_sql(src.long, src.columns, relation)
    return f"SELECT * EXCLUDE ({', '.join(_q(c) for c in scratch)}) FROM ({rows_sql(src, grain, relation)})"


def _name_is_id(src: SourceSpec) -> bool:
    return src.name_columns == src.entity_columns


def entity_of(src: SourceSpec, *, name: bool = False) -> str:
    """A row's entity id (or, with `name`, its name): from its columns (`entity_sql`), or the one `entity` of a
    source of one series, the same for every row."""
    columns = src.name_columns if name else src.entity_columns
    return literal(src.entity) if not columns and src.entity is not None else entity_sql(columns)


def entity_sql(columns: list[str]) -> str:
    """An entity's id (or name) from its columns: the trimmed text of one, or of several joined by `ENTITY_JOINER`;
    NULL when a column of it is empty (the row's entity is missing)."""
    parts = [f"nullif(trim({_q(c)}), '')" for c in columns]
    if len(parts) == 1:
        return parts[0]
    return (f"(CASE WHEN {' OR '.join(f'{p} IS NULL' for p in parts)} THEN NULL "
            f"ELSE concat_ws({literal(ENTITY_JOINER)}, {', '.join(parts)}) END)")


def _match(aggregate: str, index: int) -> str:
    return _q(f"__match_{aggregate}_{index}")


def _key(src: SourceSpec) -> tuple[str, ...]:
    """What makes a row of `typed` one of its kind: entity and period, the version where rows have one, and a long
    source's name of its value."""
    return (ENTITY, PERIOD, *((_VERSION,) if versioned(src) else ()), *((VARIABLE,) if src.long else ()))


def duplicates_sql(src: SourceSpec, typed: str) -> str | None:
    """The keys (entity, period and version) that more than one in-scope row of `typed` holds, with how many: a
    panel's or snapshot's duplicated rows, all refused (step 2). None for events: every row is an event."""
    if src.shape == "events":
        return None
    # Keys are grouped by their 64-bit hash first (a small table, even over millions of rows); only rows whose hash
    # repeats, usually none, are grouped by the key itself.
    columns = ", ".join(_key(src))
    return f"""
    SELECT {columns}, count(*) AS {_COPIES} FROM {typed}
    WHERE {IN_SCOPE} AND hash({columns}) IN (
        SELECT hash({columns}) FROM {typed} WHERE {IN_SCOPE} GROUP BY ALL HAVING count(*) > 1)
    GROUP BY ALL HAVING count(*) > 1"""


def duplicate_groups_sql(src: SourceSpec, typed: str) -> str | None:
    """Per key that more than one in-scope row of `typed` holds (`duplicates_sql`): what tells which key is at
    fault (`check`). `__copies` rows; `__names`, how many names they carry (several: the id column does not tell the
    entities apart); `__periods`, how many period values as written (several: a finer grain would); `__timed`,
    whether their moment has a time of day (a snapshot's); an example of each, and the period. None for events."""
    duplicates = duplicates_sql(src, typed)
    if duplicates is None:
        return None
    same = " AND ".join(f"r.{c} IS NOT DISTINCT FROM d.{c}" for c in _key(src))
    names = "1" if _name_is_id(src) else f"count(DISTINCT r.{NAME})"
    some_names = "[]::VARCHAR[]" if _name_is_id(src) else \
        f"list_sort(list_distinct(list(r.{NAME})))[1:4]"
    period_columns = [c for c in src.dated_columns if c != src.published_column]
    written = " || ', ' || ".join(f"coalesce(r.{_as_written(c)}, '')" for c in period_columns) or "NULL::VARCHAR"
    timed = f"bool_or(r.{_VERSION} <> date_trunc('day', r.{_VERSION}))" if versioned(src) and \
        src.published_column is None else "false"
    return f"""
    SELECT r.{ENTITY} AS __entity, d.{_COPIES} AS __copies, {names} AS __names, {some_names} AS __some_names,
           count(DISTINCT {written}) AS __periods, min({written}) AS __written, {timed} AS __timed,
           d.{PERIOD} AS __period
    FROM {typed} r JOIN ({duplicates}) d ON {same}
    WHERE r.{IN_SCOPE}
    GROUP BY r.{ENTITY}, {", ".join(f"d.{c}" for c in _key(src)[1:])}, d.{_COPIES}"""


def periods_in_vintages_sql(src: SourceSpec, typed: str) -> str | None:
    """Per entity and period of `typed`'s in-scope rows of a panel under `published_column`: how many periods as
    written its rows hold (`__periods`, several when a grain coarser than the rows' reads each row of a finer period
    as a revision of its own: quarters read by the year, the latest published quarter standing for the year) and up
    to four of them (`__written`). None without a published column or a period column read as written."""
    dated = [c for c in src.dated_columns if c != src.published_column]
    if src.published_column is None or src.shape != "panel" or not dated:
        return None
    written = " || ', ' || ".join(f"coalesce({_as_written(c)}, '')" for c in dated)
    return f"""
    SELECT {ENTITY} AS __entity, {PERIOD} AS __period, count(DISTINCT {written}) AS __periods,
           list_sort(list(DISTINCT {written}))[1:4] AS __written
    FROM {typed} WHERE {IN_SCOPE} AND {PERIOD} IS NOT NULL AND {ENTITY} IS NOT NULL GROUP BY ALL"""


ID_TOO_LONG = "entity id or name too long: "
"""The reason of a row refused for its id or name itself (longer than `text.MAX_NAME`)."""


def judged_sql(src: SourceSpec, grain: Grain, typed: str, duplicates: str | None) -> str:
    """Step 2 (see the module): the in-scope rows of `typed` (step 1's table) judged for the night; refusals carry
    `REASON`. `duplicates`: the relation of `duplicates_sql` (small: usually empty), None for events."""
    key = f"({', '.join(src.key_columns)})"
    restored = "".join([f", r.{ENTITY} AS {NAME}" if _name_is_id(src) else "",
                        "" if versioned(src) else f", NULL::TIMESTAMP AS {_VERSION}"])
    too_long = f"greatest(length(r.{ENTITY}), length(coalesce(r.{ENTITY if _name_is_id(src) else NAME}, '')))"
    duplicated, joined = "", ""
    written = " || ', ' || ".join([*(f"coalesce(r.{_as_written(c)}, '')" for c in src.dated_columns),
                                   *([f"r.{VARIABLE}"] if src.long is not None else [])] or ["''"])
    if duplicates is not None:
        same = " AND ".join(f"r.{c} IS NOT DISTINCT FROM d.{c}" for c in _key(src))
        joined = f" LEFT JOIN {duplicates} d ON {same}"
        duplicated = f"""
            WHEN d.{_COPIES} IS NOT NULL
                THEN {literal('duplicated key ' + key + ' = (')} || r.{ENTITY} || ', ' || {written} || '): '
                     || d.{_COPIES} || ' rows, none used'"""
    published_later, later = "", ""
    if src.published_column is not None:  # (a date the lag rule gives may lie ahead: a period not yet published)
        later = f"OR r.{PUBLISHED} > {TODAY}"
        published_later = f"""
            WHEN r.{PUBLISHED} > {TODAY}
                THEN {literal(f'{NOT_COME_YET}{src.published_column} ')} || strftime(r.{PUBLISHED},
                     '%Y-%m-%d') || ' has not come yet (today ' || strftime({TODAY}, '%Y-%m-%d') || ')'"""
    latest, revised = "", ""
    if src.event_id_columns:  # the row standing for its event on the night, whatever the scope (`where`) says of it
        latest = f" LEFT JOIN ({latest_of_events_sql(src, typed)}) e ON e.{EVENT} = r.{EVENT}"
        # (a row refused for its dates is judged all the same: quarantined with why, never standing for its event)
        revised = (f" AND (r.{_DATE_PROBLEM} IS NOT NULL OR r.{PERIOD} > {TODAY} {later} OR e.{LATEST} IS NULL "
                   f"OR e.{LATEST} = r.{ROW})")
    header = _header_again_sql(src)
    # (the header's line is no entity's: none called `region` whose rows have no period)
    rows = "r.*" if header is None else f"r.* REPLACE (CASE WHEN {header} THEN NULL ELSE r.{ENTITY} END AS {ENTITY})"
    again = "" if header is None else f"\n            WHEN {header} THEN {literal(HEADER_AGAIN)}"
    return f"""
    SELECT {rows}{restored}, CASE{again}
            WHEN r.{ENTITY} IS NULL THEN {literal('missing entity id (' + ', '.join(src.entity_columns) + ')')}
            WHEN {too_long} > {MAX_NAME}
                THEN {literal(ID_TOO_LONG)} || {too_long} || ' characters, at most {MAX_NAME}'
            WHEN r.{_DATE_PROBLEM} IS NOT NULL THEN r.{_DATE_PROBLEM}
            WHEN r.{PERIOD} > {TODAY}
                THEN 'period after today: ' || {grain.sql_label('r.' + PERIOD)} || ' has not happened yet (today '
                     || strftime({TODAY}, '%Y-%m-%d') || ')'{published_later}{duplicated}
            END AS {REASON}
    FROM {typed} r{joined}{latest}
    -- point in time: a row is seen only once published; an undated row is refused without a date, and a period
    -- after today (one that has not happened), or a publication date after it (trial 27: 2030 for 2024, a typo,
    -- left the row unseen on every night with no word), is refused whatever the night. An event's row that a
    -- later one known on the night revises (`source.event_id`) is not read: the latest stands for the event, so a
    -- revision out of scope (a claim withdrawn, `where` reading only open ones) withdraws it. A row of no period
    -- whose publication date lies after the night is unseen like any other (trial 103: a revision of 2000-06-01
    -- whose year was mistyped blanked its district on 1999-06-30)
    WHERE r.{IN_SCOPE} AND (r.{_DATE_PROBLEM} IS NOT NULL AND NOT coalesce(r.{PUBLISHED} > {AS_OF}, false)
                            OR r.{PUBLISHED} <= {AS_OF} OR r.{PERIOD} > {TODAY} {later}){revised}"""


def latest_of_events_sql(src: SourceSpec, typed: str, as_of: str = AS_OF, today: str = TODAY) -> str:
    """Each event's (`source.event_id`) row standing for it on the night (`LATEST`), among the rows of `typed` in
    any scope whose dates are read and known by `as_of` (SQL of a date): its latest `published_column` date as
    given, then the row furthest down the source; without one, the row furthest down. Neither the lag rule's date
    nor the day a row is seen from (`PUBLISHED`, never before its moment) is its release: each orders by the moment
    the row dates, so a correction moving an event to an earlier period lost to the row it corrects once both were
    seen (trial 69: appended at the end without a `published_column`; an event announced before its day, moved
    earlier by a later release)."""
    latest = f"{_VERSION} DESC, {ROW} DESC" if src.published_column is not None else f"{ROW} DESC"
    return f"""
        SELECT {EVENT}, {ROW} AS {LATEST} FROM {typed}
        WHERE {EVENT} IS NOT NULL AND {_DATE_PROBLEM} IS NULL AND {PUBLISHED} <= {as_of} AND {PERIOD} <= {today}
        QUALIFY row_number() OVER (PARTITION BY {EVENT} ORDER BY {latest}) = 1"""


NOT_COME_YET = "published after today: "
"""The start of the reason a row whose publication date lies after today is refused with, on every night (a typo,
2031 for 2021): no vintage any night has known (`candidates.logic` keeps the vintage published before it)."""


HEADER_AGAIN = "header repeated mid-file (two exports joined?): its line holds the columns' names"
"""The reason a line repeating the header is quarantined with, as two exports concatenated write it mid-file."""


def _header_again_sql(src: SourceSpec) -> str | None:
    """SQL true for a row of `typed` whose id and date cells hold their own columns' names: the header again,
    mid-file (trial 35: two exports concatenated read as a row of an entity called 'region' with no period, said
    three ways). A source with no id column (one `entity`, `wide` by entity) is judged by its date cells alone
    (trial 66: a series' header again was 'period unparseable', told a `period_format`, and blanked the series on
    every night); None for one with neither."""
    dated = [f"trim(CAST(r.{_as_written(c)} AS VARCHAR)) = {literal(c)}" for c in src.dated_columns]
    if not src.entity_columns:
        return " AND ".join(dated) or None
    names = literal(ENTITY_JOINER.join(src.entity_columns))
    return " AND ".join([f"r.{ENTITY} = {slug_sql(names) if isinstance(src, JoinSpec) else names}", *dated])


def seen_sql(src: SourceSpec, judged: str) -> str:
    """The judged rows with no refusal, each bad cell (not a number, negative where not `signed`, outside its
    `bounds`, not finite) turned into that cell's gap: the row's other columns are still read (DESIGN §4)."""
    cells = cell_columns(src)
    if not cells:
        return f"SELECT * FROM {judged} WHERE {REASON} IS NULL"

    def clean(c: str) -> str:
        ok = f"NOT isinf({cell(c)}) AND NOT isnan({cell(c)})" + "".join(
            f" AND {cell(c)} {op} {bound!r}" for op, bound in ((">=", src.floor(c)), ("<=", src.ceiling(c)))
            if bound is not None)
        return f"CASE WHEN {ok} THEN {cell(c)} END AS {cell(c)}"

    return f"SELECT * REPLACE ({', '.join(clean(c) for c in cells)}) FROM {judged} WHERE {REASON} IS NULL"


def aggregate_match_sql(name: str, spec: AggregateSpec) -> str:
    """Whether a typed row is one an aggregate reads: all of its `where` conditions, as the typed rows flag them."""
    return " AND ".join(_match(name, i) for i in range(len(spec.where))) or "true"


def _aggregate_sql(name: str, spec: AggregateSpec, numeric: set[str]) -> str:
    """One aggregate's SQL; `numeric`: the columns read as numbers (`cell_columns`), whose distinct values are their
    numbers (the text as written is not kept for them past the typed rows)."""
    match = aggregate_match_sql(name, spec)
    if spec.agg == "share":
        return f"avg(CASE WHEN {match} THEN 1.0 ELSE 0.0 END) AS {_q(name)}"
    if spec.agg == "count":
        return f"count(*) FILTER (WHERE {match})::DOUBLE AS {_q(name)}"
    column = spec.column or ""
    distinct = cell(column) if column in numeric else _raw(column)
    value = {"sum": f"fsum({cell(column)})", "avg": f"favg({cell(column)})", "min": f"min({cell(column)})",
             "max": f"max({cell(column)})", "count_distinct": f"count(DISTINCT {distinct})"}[spec.agg]
    return f"({value} FILTER (WHERE {match}))::DOUBLE AS {_q(name)}"


def slugs_sql(typed: str) -> str:
    """The slug of each entity id of the main source's typed rows `typed` (`raw`, `slug`): a small table
    `joined_sql` matches joined tables by (a regular expression per distinct id, not per row)."""
    return (f"SELECT {ENTITY} AS __raw, {slug_sql(ENTITY)} AS {_SLUG} "
            f"FROM (SELECT DISTINCT {ENTITY} FROM {typed} WHERE {ENTITY} IS NOT NULL)")


CARRIED = 2
"""Periods of a coarser joined table's own grain its latest known figure is carried past the coarser period a
source period falls in (`joined_sql`): a population of 2011, published in spring 2012, is read by the months of
2012 and of January to March 2013, whose own years' figures are not yet known; a table that stopped earlier leaves
those months a gap, not a figure years old."""


BEFORE_OWN = "__before_own"
"""True on a row `joined_sql` adds before an entity's own first row, where only a series joined to every entity
has figures (`reaches_before_own`)."""


def reaches_before_own(src: SourceSpec) -> bool:
    """Whether the source joins a series to every entity by period (`every_entity`, not dated by `known_at`): that
    series is every entity's, so an entity's windows read it in periods before its own first row too (trial 107: a
    president's first quarters had no year-ago GDP)."""
    return any(every and not by_entity for every, by_entity in zip(src.joins_every_entity, src.joins_by_entity_only,
                                                                   strict=True))


def _before_own_sql(src: SourceSpec, own: str, joins: list[str], reach: int) -> str:
    """Rows of no figure of the entity's own, one per period of the source's grid before its first row and within
    `reach` periods of the source's latest (`own`: the panel's relation, each row flagged BEFORE_OWN false): the
    grid is the periods any entity has a row in, and those of each series of the source's grain joined to every
    entity, so that `joined_sql` gives each of them that series' figure."""
    grain = Grain(src.grain)
    periods = [f"SELECT {PERIOD} FROM {own}"] + [
        f"SELECT {PERIOD} FROM {relation}" for relation, every, by_entity, coarser in zip(
            joins, src.joins_every_entity, src.joins_by_entity_only, src.joins_coarser, strict=True)
        if every and not by_entity and not coarser]
    latest = f"(SELECT max({PERIOD}) FROM {own})"
    events = f", 0.0 AS {EVENTS_READ}, 0.0 AS {EVENTS_REPEATED}" if src.shape == "events" else ""
    return f"""
        SELECT f.{ENTITY}, f.{NAME}, g.{PERIOD}, true AS {BEFORE_OWN}{events}
        FROM (SELECT {ENTITY}, arg_min({NAME}, {PERIOD}) AS {NAME}, min({PERIOD}) AS __first FROM {own}
              GROUP BY {ENTITY}) f
        JOIN (SELECT DISTINCT {PERIOD} FROM ({' UNION ALL '.join(periods)})
              WHERE {grain.sql_between(PERIOD, latest)} <= {reach}) g ON g.{PERIOD} < f.__first"""


def joined_sql(src: SourceSpec, panel: str, joins: list[str], slugs: str, reach: int) -> str:
    """The main panel with each joined table's panel beside it (`joins`: their relations, in `src.join` order):
    by entity and period, or by entity alone for a table dated by `known_at` (its latest snapshot), or, for a
    table of a coarser grain (`SourceSpec.joins_coarser`), by entity and the latest of its periods that begins by
    the source's period (an as-of join over the rows known by as_of: a month of 2012 takes 2012's population once
    it is published, 2011's before), at most `CARRIED` of its periods before the one the source period falls in.
    Entities match by slug, as candidate ids are made: a joined table's ids are slugs already (`rows_sql`), the
    main source's are looked up in `slugs` (`slugs_sql`). A joined value not known by as_of is a gap; a row is as
    recent as the latest of the values it carries. A series joined to every entity reaches back before an entity's
    own first row (`reaches_before_own`): rows flagged BEFORE_OWN carry its figures there, within `reach` periods."""
    select, clauses, published = [f"p.{c}" for c in (ENTITY, NAME, PERIOD, ROW)], [], [f"p.{PUBLISHED}"]
    select += [f"p.{_q(c)}" for c in src.columns]
    if src.shape == "events":
        select += [f"p.{EVENTS_READ}", f"p.{EVENTS_REPEATED}"]
    for i, (joined, relation, by_entity, every, coarser) in enumerate(zip(
            src.join, joins, src.joins_by_entity_only, src.joins_every_entity, src.joins_coarser, strict=True)):
        alias = f"j{i}"
        if by_entity:
            relation = (f"(SELECT * FROM {relation} QUALIFY row_number() OVER (PARTITION BY {ENTITY} "
                        f"ORDER BY {PERIOD} DESC) = 1)")
        entity = [] if every else [f"{alias}.{ENTITY} = p.{_SLUG}"]
        if coarser and not by_entity:
            clauses.append(f"ASOF LEFT JOIN {relation} {alias} ON "
                           f"{' AND '.join([*entity, f'p.{PERIOD} >= {alias}.{PERIOD}'])}")
            since = f"date_trunc('{joined.grain}', p.{PERIOD}) - INTERVAL {CARRIED} {joined.grain.upper()}"
            carried = f"{alias}.{PERIOD} >= {since}"
            select += [f"CASE WHEN {carried} THEN {alias}.{_q(c)} END AS {_q(c)}" for c in joined.columns]
            published.append(f"CASE WHEN {carried} THEN {alias}.{PUBLISHED} END")
            continue
        keys = entity + ([] if by_entity else [f"{alias}.{PERIOD} = p.{PERIOD}"])
        on = " AND ".join(keys) or "true"
        clauses.append(f"LEFT JOIN {relation} {alias} ON {on}")
        select += [f"{alias}.{_q(c)}" for c in joined.columns]
        published.append(f"{alias}.{PUBLISHED}")
    latest = f"greatest({', '.join(published)})" if len(published) > 1 else published[0]
    if not reaches_before_own(src):
        slugged = f"(SELECT m.*, s.{_SLUG} FROM {panel} m LEFT JOIN {slugs} s ON s.__raw = m.{ENTITY})"
        return f"SELECT {', '.join(select)}, {latest} AS {PUBLISHED} FROM {slugged} p {' '.join(clauses)}"
    select.append(f"p.{BEFORE_OWN}")
    rows = f"(SELECT * FROM __own UNION ALL BY NAME {_before_own_sql(src, '__own', joins, reach)})"
    slugged = f"(SELECT m.*, s.{_SLUG} FROM {rows} m LEFT JOIN {slugs} s ON s.__raw = m.{ENTITY})"
    return (f"WITH __own AS MATERIALIZED (SELECT *, false AS {BEFORE_OWN} FROM {panel} o) "
            f"SELECT {', '.join(select)}, {latest} AS {PUBLISHED} FROM {slugged} p {' '.join(clauses)}")


QUIET_CHANCE = 0.01
"""Least chance, at the feed's own rate of events, of a run of periods without any entity's event for an events
source to read them as periods of no event (`panel_sql`): below it the silence is an outage or a stop, not a fact
(a gap in the run, and no latest period after the feed's latest event)."""
RATE_PERIODS = 8
"""Fewest latest periods an events feed's rate is measured over (an annual grain's year is one)."""


def panel_sql(src: SourceSpec, grain: Grain, seen: str) -> str:
    """Step 3 (see the module): `seen` (the night's rows with no refusal, bad cells already gaps) as the panel:
    ENTITY, NAME, PERIOD, PUBLISHED, ROW and one column per `src.columns`, named as the pack names it; for events,
    also EVENTS_READ and EVENTS_REPEATED."""
    keys = f"{ENTITY}, {NAME}, {PERIOD}, {PUBLISHED}, {ROW}"
    if src.long is not None:  # a row per value: the latest vintage of each, then an entity's of a period in one row
        latest = seen if not versioned(src) else f"""(SELECT * FROM {seen} QUALIFY row_number() OVER (
            PARTITION BY {ENTITY}, {PERIOD}, {VARIABLE} ORDER BY {_VERSION} DESC NULLS LAST) = 1)"""
        values = ", ".join(f"max({cell(c)}) AS {_q(c)}" for c in src.columns)
        return f"""
        SELECT {ENTITY}, any_value({NAME}) AS {NAME}, {PERIOD}, max({PUBLISHED}) AS {PUBLISHED}, min({ROW}) AS {ROW},
               {values}
        FROM {latest} GROUP BY {ENTITY}, {PERIOD}"""
    if src.shape != "events":
        values = ", ".join(f"{cell(c)} AS {_q(c)}" for c in src.columns)
        if not versioned(src):  # one row per entity and period already: any other was refused as a duplicate
            return f"SELECT {keys}, {values} FROM {seen}"
        return f"""
        SELECT {keys}, {values} FROM {seen}
        QUALIFY row_number() OVER (PARTITION BY {ENTITY}, {PERIOD} ORDER BY {_VERSION} DESC NULLS LAST) = 1"""
    numeric = set(cell_columns(src))
    aggregates = ", ".join(_aggregate_sql(name, spec, numeric) for name, spec in src.aggregates.items())
    # No event in a period is a fact, not a gap: counts and sums are 0, the rest has no value.
    zero = {"count", "sum", "count_distinct"}
    # ... unless no entity had one in a run of periods the feed's own rate before it makes improbable
    # (`QUIET_CHANCE`): a month a field study did not trap is no month of zero captures, but a gap on every plot.
    filled = ", ".join(f"CASE WHEN o.__outage THEN NULL ELSE coalesce(e.{_q(n)}, 0.0) END AS {_q(n)}"
                       if s.agg in zero else f"e.{_q(n)}" for n, s in src.aggregates.items())
    step = f"INTERVAL 1 {grain.name.upper()}"
    lagged = f"({grain.sql_end('g.' + PERIOD)} + INTERVAL ({src.publication_lag_days}) DAY)::DATE"
    # A period without an entity's events is known empty by the lag rule, or as soon as the feed has published an
    # event (of any entity) of that period or a later one: under `published_column` a quiet week in a window was a
    # gap for the 30 days of the default lag (events dated by the lag rule reach no period sooner than it: the same);
    # also a period without ANY entity's event, over the feed's every period (trial 65: a quiet day of the whole
    # feed, 1 in 7 at its rate, was still every entity's gap for those 30 days).
    empty = f"least({lagged}, r.__reached)"
    beyond = f"({grain.sql_end(f'__latest + {step} * (__longest + 1)')} + INTERVAL ({src.publication_lag_days}) DAY)"
    # The grid runs past the latest period with an event into the periods the lag rule knows, where a run that long
    # without any entity's event is a chance the feed's own rate allows (`QUIET_CHANCE`): London's murders, ~2.7 a
    # week, have a week without one 7% of the time, a week of zeros; a field study trapping ~116 animals a month
    # never has a month without one by chance (a month not trapped), nor has a feed that stopped: its night stays at
    # its latest event, and the check says how far behind it is. The rate is the events of the feed's latest year of
    # periods (at least `RATE_PERIODS`: `feed`'s, as a silence inside the history is judged), known on as_of (trial
    # 51's fix read later rows to learn that the feed went on: reverted).
    recent = max(grain.per_year, RATE_PERIODS)
    # each entity's periods from its first event, or from `events_from` where the source records every entity's events
    first = f"min({PERIOD})" if src.events_from is None else \
        f"least(min({PERIOD}), DATE '{grain.start(src.events_from).isoformat()}')"
    return f"""
        WITH events AS (
            SELECT {ENTITY}, any_value({NAME}) AS {NAME}, {PERIOD}, max({PUBLISHED}) AS {PUBLISHED},
                   min({ROW}) AS {ROW}, {aggregates}, count(*)::DOUBLE AS {EVENTS_READ},
                   (count(*) - count(DISTINCT hash(*COLUMNS(* EXCLUDE ({ROW})))))::DOUBLE AS {EVENTS_REPEATED}
            FROM {seen} GROUP BY {ENTITY}, {PERIOD}
        ),
        feed AS (
            SELECT p.{PERIOD}, coalesce(t.__n, 0) AS __n
            FROM (SELECT unnest(range(min({PERIOD}), max({PERIOD}) + {step}, {step}))::DATE AS {PERIOD} FROM events) p
            LEFT JOIN (SELECT {PERIOD}, sum({EVENTS_READ}) AS __n FROM events GROUP BY {PERIOD}) t USING ({PERIOD})
        ),
        runs AS (
            SELECT {PERIOD}, __n,
                   avg(__n) OVER (ORDER BY {PERIOD} ROWS BETWEEN {recent} PRECEDING AND 1 PRECEDING) AS __rate,
                   row_number() OVER (ORDER BY {PERIOD})
                   - row_number() OVER (PARTITION BY __n = 0 ORDER BY {PERIOD}) AS __run
            FROM feed
        ),
        outages AS (
            SELECT {PERIOD}, true AS __outage FROM (
                SELECT {PERIOD}, count(*) OVER (PARTITION BY __run) AS __length,
                       first_value(__rate) OVER (PARTITION BY __run ORDER BY {PERIOD}) AS __before
                FROM runs WHERE __n = 0)
            WHERE exp(-__before * __length) < {QUIET_CHANCE}
        ),
        quiet AS (
            SELECT max({PERIOD}) AS __latest,
                   least({recent}, floor({math.log(1 / QUIET_CHANCE)} / avg(__n))::INTEGER) AS __longest
            FROM (SELECT {PERIOD}, __n FROM feed ORDER BY {PERIOD} DESC LIMIT {recent})
        ),
        spans AS (
            SELECT {ENTITY}, any_value({NAME}) AS {NAME}, {first} AS __first,
                   (SELECT CASE WHEN {beyond} <= {AS_OF} THEN __latest ELSE __latest + {step} * __longest END
                    FROM quiet) AS __last
            FROM events GROUP BY {ENTITY}
        ),
        grid AS (
            SELECT {ENTITY}, {NAME}, unnest(range(__first, __last + {step}, {step}))::DATE AS {PERIOD} FROM spans
        ),
        reached AS (
            SELECT {PERIOD}, min(__first) OVER (ORDER BY {PERIOD} DESC ROWS UNBOUNDED PRECEDING) AS __reached
            FROM feed LEFT JOIN (SELECT {PERIOD}, min({PUBLISHED}) AS __first FROM events GROUP BY {PERIOD})
                 USING ({PERIOD})
        )
        SELECT g.{ENTITY}, g.{NAME}, g.{PERIOD}, coalesce(e.{PUBLISHED}, {empty}) AS {PUBLISHED}, e.{ROW}, {filled},
               coalesce(e.{EVENTS_READ}, 0.0) AS {EVENTS_READ}, coalesce(e.{EVENTS_REPEATED}, 0.0) AS {EVENTS_REPEATED}
        FROM grid g LEFT JOIN events e USING ({ENTITY}, {PERIOD}) LEFT JOIN reached r USING ({PERIOD})
             LEFT JOIN outages o ON o.{PERIOD} = g.{PERIOD}
        WHERE coalesce(e.{PUBLISHED}, {empty}) <= {AS_OF}"""
