"""`opportunity check`: rows that share a key (pure over the source's counts): many duplicated keys told as the
key or grain that makes them (a series of several per entity, decimal years too coarse, a file appended to
itself), a few told as a warning, rows repeated by nature (events alike), an entity column that names a row
rather than an entity, and an events source's `events_from` after the night."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from opportunity_assets.check import candidates as check_candidates
from opportunity_assets.check.latest import source_key
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.records import Candidate
from opportunity_assets.sources import shapes
from opportunity_assets.sources.facts import copied_rows
from opportunity_assets.sources.formats import describe_location
from opportunity_assets.sources.probes import (
    copies_of_whole_lines,
    duplicate_facts,
    event_ids,
    events_sent_again,
    events_written_twice,
    key_completions,
    revision_dates,
    value_counts,
)
from opportunity_assets.sources.reading import SourceError, quote_identifier
from opportunity_assets.sources.spec import DECIMAL_YEAR, SourceSpec

if TYPE_CHECKING:
    from opportunity_assets.sources.facts import TableFacts
    from opportunity_assets.sources.probes import DuplicateFacts


def copies_by_nature(pack: CriteriaPack, repeats: tuple[int, int] | None) -> list[str]:
    """A warning: an events source half or more of whose rows repeat another in every column the night reads (the
    World Values Survey's answers, a country, a year and a score from 1 to 10: 346,136 rows, 2,523 distinct), while
    `integrity.repeated_events` doubts: its copies are the data's nature, not a feed sent twice, and the rule doubts
    every period of an entity with few past ones ("0.996 of them copies of another ... sent twice?")."""
    rule = pack.integrity.repeated_events
    if repeats is None or rule.effect == "note":
        return []
    rows, distinct = repeats
    if rows < _FEWEST_REPEATED or 2 * distinct > rows:
        return []
    return [f"key `integrity.repeated_events`: got effect {rule.effect!r}; {rows - distinct} of the {rows} events "
            f"the night reads repeat another in every column it reads ({distinct} distinct), so copies are this "
            "source's nature (answers on a scale, a category and a date), and the rule would doubt periods for "
            "them as if a feed had been sent twice: expected `integrity: {repeated_events: {effect: note}}`, or a "
            "column that tells the events apart among those the pack reads (a `count_distinct` of an id)"]


_FEWEST_REPEATED = 100
"""Fewest events before their repeats are judged the source's nature (a few events may all agree)."""


def rows_copied(pack: CriteriaPack, night: date) -> str | None:
    """A panel or snapshot whose every row the night reads appears k >= 2 times, equal in every column read (a file
    appended to itself), said naming the key the rows come from (`source.path`, `.query` or a database's `.table`):
    its keys are all duplicated, but no other shape, grain or entity column would mend it (`shape: events` would
    count each row k times). None otherwise."""

    try:
        copies = copied_rows(pack, night)
    except SourceError:
        return None
    if copies is None:
        return None
    factor, rows, distinct = copies
    said, cause = _copies_from(pack)
    return (f"{said}: each of the {distinct} different rows the night reads appears {factor} times (or a multiple "
            f"of {factor}), equal in every column read: {rows} rows for {distinct}, each refused as a duplicated key "
            f"(one row per entity and period): expected each row once ({cause})")


def _copies_from(pack: CriteriaPack) -> tuple[str, str]:
    """The key the copied rows come from (`source.path`, `.query` or a database's `.table`) and where they are, in
    the words of check's other lines about the source (`source_key`, `describe_location`), and how a source of that
    kind reads its rows twice. Trial 122: a PostgreSQL `query` reading a table twice was told "key `source.path`:
    got 'query'", the provenance name a query gets, for a pack with no `path`."""
    key = source_key(pack.source)
    cause = "a file appended to itself?" if key == "source.path" else \
        "a table appended to itself, or a query reading it twice?"
    return f"key `{key}`: {describe_location(pack)}", cause


_SERIES = "one series of each entity (one pollster's polls, one sensor's readings, say)"
"""What a `where` keeps when rows of several series share their entity and moment."""


def duplicates_blank_inputs(pack: CriteriaPack, found: list[Candidate]) -> bool:
    """Whether a required input has no value for any scanned candidate because a row refused as a duplicated key
    lies in its reach: few such rows, but in every candidate's windows (trial 23: CRAN's package counts at each R
    release, read as a quarterly panel; two releases in one quarter, 6 rows of 29, left the one series' every input
    unknown, and check said ok). The key at fault is then `duplicated_keys`', as when they are most rows."""
    if not found:
        return False
    return any(all(_DUPLICATED_GAP.match(check_candidates.root_gap(c, name)) for c in found)
               for name in pack.required_inputs)


def dated_apart(pack: CriteriaPack) -> bool:
    """Whether most duplicated keys' rows are of several dates in one period (releases on two days of a quarter):
    the key's fault, a grain too coarse or the wrong shape; a period sent twice as written is the rows' own, said
    by the inputs it leaves unknown ("expected the source's rows mended")."""

    try:
        facts = duplicate_facts(pack)
    except SourceError:
        return False
    return facts is not None and facts.finer * 2 > facts.groups


_DUPLICATED_GAP = re.compile(r"^\w+: unknown: source row \d+ is quarantined \(duplicated key")
"""A metric's gap line when a row refused as a duplicated key lies in its window."""


DECIMALS_SEEN = 20
"""Values of a decimal-year column whose decimals `_decimal_years_too_coarse` counts (the most of them)."""


def _decimal_years_too_coarse(pack: CriteriaPack, written: str | None) -> str | None:
    """Why decimal years written with too few decimals for the grain's periods (`1949.2`: a tenth of a year, 36
    days, cannot tell 12 months apart) leave rows sharing a period, or None. Trial 32: AirPassengers rounded to one
    decimal was 72 rows of duplicated keys blamed on `source.grain`, "or `shape: events`", which would add months."""
    src = pack.source
    if DECIMAL_YEAR not in src.period_patterns or written is None or "." not in written or not src.period_column:
        return None
    # the most decimals a value is written with, not the example's: `1981.0` beside `1981.0027397` is a day's index
    # that `repr` wrote short (trial 64: MelTemp's days read by the month were told "written with 1 decimal")
    try:
        values = [written, *value_counts(pack, shapes.written(src.period_column), shapes.IN_SCOPE,
                                         limit=DECIMALS_SEEN)]
    except SourceError:
        values = [written]
    decimals = max(len(v.strip().split(".", 1)[1]) for v in values if "." in v)
    if 10 ** decimals >= 2 * pack.grain.per_year:
        return None
    return (f"its values are written with {decimals} decimal{'' if decimals == 1 else 's'}, too few to tell "
            f"a year's {pack.grain.per_year} {pack.grain.plural} apart ({10 ** -decimals:g} of a year is "
            f"{365 * 10 ** -decimals:.0f} days): expected the column exported with more decimals (R's `time()` "
            "written in full, 1949.0833)")


def duplicated_keys(pack: CriteriaPack, duplicated: int) -> str:
    """Most rows the night reads refused as duplicated keys: the key most likely at fault, said as the pack's shape
    reads its rows (a snapshot's share an entity and an observation moment, a file dated by `known_at` an entity, a
    panel's an entity and a period), with an example and what would tell the rows apart; never the shape the pack
    already has. An id column whose rows carry several names (or one id in all, when they are not of several dates
    in a period) is the id's fault, whatever the shape, and so is a file dated by `known_at` whose ids mostly name
    one row (names that repeat: counties of several states); then `known_at` on a file of dated rows; a snapshot's
    observations of one day, its `period_column`'s (or of one time of day, its `entity_id`'s); a panel's rows of
    several dates in one period, its `grain`'s; of one period as written, its `shape`'s."""

    src, grain = pack.source, pack.grain
    try:
        facts = duplicate_facts(pack)
    except SourceError:
        facts = None
    if facts is None:  # (read a moment ago: only a source changed since gets here)
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an entity and a "
                f"{grain.name} with another row (duplicated keys): expected one row per entity and period")
    entity, copies, period, written, names = facts.example
    observed = src.shape == "snapshot" and src.period_column is not None and src.published_column is None
    moment = f"an observation {'time' if facts.timed else 'day'}" if observed else f"a {grain.name}"
    # (trial 111: rows of no period, a year written `2000r`, among months read by the quarter had no quarter to name)
    at = "" if src.known_at is not None or (period is None and not observed) else f" on {written!r}" if observed \
        else f" in {grain.label(period)}"
    example = f"e.g. {copies} rows of {entity!r}{at}"
    apart = f"`source.where` keeping {_SERIES}, or an `entity_id` that tells the series apart"
    finer = facts.finer * 2 > facts.groups  # most duplicated keys' rows are of several dates in one period
    if dating := _dating_key(src):  # (trial 72: the day column as the id was told `shape: events`)
        key, column = dating
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an entity and a "
                f"{grain.name} with another row ({example}): {column!r} is the column dating the rows (`{key}`), "
                f"read as the entity too, so each entity is a {grain.name} and the series of that {grain.name} "
                "share its key: expected the column naming each entity, whose rows recur period after period")
    if facts.named_apart * 2 > facts.groups or (facts.entities == 1 and src.known_at is None and not finer
                                                  and src.entity is None):
        named = f", named {names}" if names else ""
        why = (f"the rows of one id carry different names (`source.entity_name` {src.entity_name!r})" if names else
               f"every row in scope has the one id {entity!r}")
        column = f" (`entity_id: {src.entity_name}`, the names' column, perhaps)" if names else ""
        shares = "an id" if src.known_at is not None else f"an id and {moment}"
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share {shares} with another "
                f"row ({example}{named}): {why}, so the column does not tell the entities apart ({facts.entities} "
                f"id{'' if facts.entities == 1 else 's'} in all): expected the column of each entity's id{column}")
    if src.known_at is not None and facts.groups * 2 < facts.entities:  # most ids one row: names that repeat
        whole = copies_of_whole_lines(pack)
        if whole is not None and whole[0] == whole[1]:  # ... or rows written twice, equal in every column
            return (f"key `{source_key(src)}`: {describe_location(pack)}: {duplicated} rows share an id with another "
                    f"row ({example}), each equal to it in every column of the source, those the pack does not read "
                    "too: rows written twice, not entities named alike, and each such row is refused: expected each "
                    "row once")
        if whole is not None and whole[2] == whole[1]:  # ... or alike but in the figures: nothing tells which
            return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an id with another row "
                    f"({example}), though most of the {facts.entities} ids name one row each, and they differ only "
                    "in the figures the pack reads: an entity's row sent again with other figures (a revision?), "
                    "or entities named alike, and each such row is refused: expected each entity's row once (the "
                    "rows dated apart by `published_column`, for revisions), or a column unique to each entity")
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an id with another row "
                f"({example}), though most of the {facts.entities} ids name one row each: the column repeats for "
                "different entities (a name, not an id), and each such row is refused: expected a column unique to "
                "each entity (its id or code)")
    if src.known_at is not None:
        return (f"key `source.known_at`: got {src.known_at.isoformat()}; it dates every row alike, one snapshot of "
                f"one row per entity, but {duplicated} rows share an entity with another row ({example}), so no row "
                "can stand for its entity: expected `period_column` in its place, naming the column of each row's "
                "date, for a file of dated rows (or a `source.where` or `source.entity_id` that leaves one row per "
                "entity)")
    latest = f"so no latest observation can be told (a snapshot keeps each {grain.name}'s latest)"
    if observed and not facts.timed:
        return (f"key `source.period_column`: got {src.period_column!r}; {duplicated} rows share an entity and "
                f"{moment} with another row ({example}), {latest}: expected a `period_column` holding each "
                f"observation's time of day as well as its day (a timestamp), or a {apart}, or `shape: events` to "
                f"aggregate them (an `avg` per {grain.name})")
    if observed:
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an entity and {moment} "
                f"with another row ({example}), {latest}: expected an `entity_id` that tells the series apart, or a "
                f"`source.where` keeping {_SERIES}, or `shape: events` to aggregate them (an `avg` per "
                f"{grain.name})")
    if (coarse := _decimal_years_too_coarse(pack, written)) is not None:
        return (f"key `source.period_format`: got {src.period_format!r}; {duplicated} rows share an entity and a "
                f"{grain.name} with another row ({example}, {written!r}): {coarse}")
    if finer:  # rows of several dates in one period: the grain is too coarse
        events = "`shape: events` (rows to aggregate)" if src.wide is None else (
            f"`shape: events` with `aggregates: {{{src.wide.value}: {{agg: avg, column: {src.wide.value}}}}}` (each "
            f"cell an event: the {grain.name}'s average; `sum`, `min`, `max` likewise)")
        shapes_else = " or ".join(s for s in (events,
                                              "`shape: snapshot` (observations, each period's latest kept)")
                                  if not s.startswith(f"`shape: {src.shape}`"))
        return (f"key `source.grain`: got {src.grain!r}; {duplicated} rows share an entity and a {grain.name} with "
                f"another row (duplicated keys, {example}, dated apart within it): expected the grain of one row "
                f"per entity and period, or {shapes_else}")
    if src.shape == "snapshot" and src.period_column is None and src.published_column is None:
        # a snapshot dated by year and month columns: no moment within the period
        return (f"key `source.period_column`: got nothing; {duplicated} rows share an entity and a {grain.name} "
                f"with another row ({example}), and `year_column` dates no moment within it, {latest}: expected "
                f"`period_column` in place of `year_column`, naming the column of each observation's date (or a "
                f"{apart})")
    if src.published_column is not None:  # (a snapshot's: one observation's, trial 27, not `year_column`'s)
        what = f"an observation ({src.period_column!r})" if src.shape == "snapshot" and src.period_column else \
            f"a {grain.name}"
        return (f"key `source.published_column`: got {src.published_column!r}; {duplicated} rows share an entity, "
                f"{what} and a publication date with another row ({example}), so no latest revision can be "
                f"told: expected a column that tells each revision apart (a timestamp), or a {apart}")
    if src.entity is not None and (completions := key_completions(pack)):
        # (trial 110: `entity: PBS` over two drugs' rows was "key `source.entity_id`: got None; ... `entity_id:
        # [Drug]`", a key the pack did not write, and `entity` unnamed)
        ids = completions[0][0] if len(completions[0]) == 1 else f"[{', '.join(completions[0])}]"
        telling = _telling(completions[0])
        return (f"key `source.entity`: got {src.entity!r}; {duplicated} rows share its one entity and a "
                f"{grain.name} with another row ({example}{'' if written is None else ', ' + repr(written)}), and "
                f"{telling} them apart: the source holds several series, not one: expected `entity_id: {ids}` (and "
                f"`entity_name: {ids}`) in place of `entity`")
    if completions := key_completions(pack):  # another column tells the rows apart: the entity is both
        together = [*src.entity_columns, *completions[0]]
        others = f" (or {', '.join(repr(c[0]) for c in completions[1:3])})" if len(completions) > 1 else ""
        telling = _telling(completions[0], others)
        return (f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share an entity and a "
                f"{grain.name} with another row ({example}{'' if written is None else ', ' + repr(written)}), and "
                f"{telling} them apart: expected the entity to be the columns together, "
                f"`entity_id: [{', '.join(together)}]` (and `entity_name` likewise)")
    return (f"key `source.shape`: got {src.shape!r}; {duplicated} rows share an entity and the same period value "
            f"with another row ({example}{'' if written is None else ', ' + repr(written)}): a panel has one row "
            f"per entity and period, and no grain tells these apart: expected `shape: events` (rows to aggregate), "
            f"or a {apart}, or `published_column` if they are revisions of one figure")


def _telling(columns: Sequence[str], others: str = "") -> str:
    """The columns that tell rows apart, as a clause's subject and verb: "column 'Drug' tells", "columns 'a' and
    'b' together tell" (`others`: the alternatives said after a single column)."""
    if len(columns) == 1:
        return f"column {columns[0]!r}{others} tells"
    return f"columns {' and '.join(repr(c) for c in columns)} together tell"


def _dating_key(src: SourceSpec) -> tuple[str, str] | None:
    """The key and column of an entity's column that also dates the rows (`period_column`, `year_column`, ...), or
    None."""
    for key in ("period_column", "year_column", "month_column", "day_column", "quarter_column", "week_column",
                "published_column"):
        if (column := getattr(src, key)) and column in src.entity_columns:
            return key, column
    return None


def revisions_unread(pack: CriteriaPack, duplicated: int) -> str | None:
    """A problem naming `source.published_column` when a column the pack does not read dates the rows of nearly
    every duplicated key apart, each on or after its period's start (`probes.revision_dates`): a figure and its
    revisions, each refused as a duplicated key, so the periods revised are gaps on every night, and check said ok
    (trial 61). None otherwise, and when most duplicated keys' rows are of several dates in one period
    (`dated_apart`): revisions share their period as written, and rows dated apart within it are the grain's or the
    shape's (trial 64: marriages read as a monthly panel by bride and groom were told their ceremony dates were
    releases)."""
    if dated_apart(pack):
        return None
    try:
        found = revision_dates(pack)
    except SourceError:
        return None
    if found is None:
        return None
    grain = pack.grain
    shown = " and ".join(repr(d) for d in found.example)
    return (f"key `source.published_column`: not set; {duplicated} rows share an entity and a {grain.name} with "
            f"another row, each refused as a duplicated key, and column {found.column!r} dates them apart in "
            f"{found.told} of the {found.groups} keys (e.g. {shown}): a figure and its revisions, each dated by its "
            f"release? expected `published_column: {found.column}`, which reads on each night the latest revision "
            "known by it")


def events_sent_again_line(pack: CriteriaPack) -> str | None:
    """A warning naming `source.event_id` when events read by `published_column` are sent again under a later
    publication date with the id of an earlier row, in a column the pack does not read (`probes.events_sent_again`):
    each copy is counted as one more event from the day it is published (trial 63: crash occupants re-sent with their
    outcome revised, a band's 229 occupants read as 329, and check said ok). None otherwise."""
    found = events_sent_again(pack)
    if found is None:
        return None
    one, dates = found.example
    plural = "s are" if found.again != 1 else " is"
    return (f"key `source.event_id`: not set; {found.again} event{plural} sent again under a later "
            f"`published_column` date with the `{found.column}` of an earlier row (e.g. {one}, published "
            f"{' and '.join(dates[:3])}), a column holding one row's own id within each publication: each copy is "
            "counted as an event of its own from the day it is published, beside the first, as if a revision were a "
            f"new event: expected `event_id: {found.column}`, which counts each event once, as its latest row known "
            "on the night")


def events_written_twice_line(pack: CriteriaPack) -> str | None:
    """A warning naming `source.event_id` when rows of an events source are written twice whole, their id in a
    column the pack does not read (`probes.events_written_twice`): each copy is counted as one more event (trial
    76: a feed's batch sent twice doubled a month's counts and sums, and check said ok). None otherwise."""
    found = events_written_twice(pack)
    if found is None:
        return None
    one, lines = found.example
    plural = "s are" if found.again != 1 else " is"
    return (f"key `source.event_id`: not set; {found.again} row{plural} written again, equal in every column of the "
            f"source to an earlier row with the same `{found.column}`, a column holding one row's own id (e.g. "
            f"{one}, on lines {', '.join(str(n) for n in lines[:3])}): each copy is counted as an event of its own, "
            f"as if a batch sent twice were new events: expected `event_id: {found.column}`, which counts each "
            "event once, or each row once in the source")


_SHARED_IDS = 3
"""Fewest ids written on more than one row for their spread over entities to tell a shared figure from ids
(`event_id_lines`)."""


def event_id_lines(pack: CriteriaPack) -> tuple[list[str], list[str]]:
    """Problems and warnings naming `source.event_id` (or `source.event_id.N` of a list) over the ids it reads
    (`probes.event_ids`): a column of it empty in every dated row is a problem, in most of them a warning (each such
    row is an event of its own, so no revision is told: trial 70's column of empty ids counted every correction as one
    more event while check said ok); ids another row writes as the same number otherwise, `000689` or `689.0` beside
    `689` (a correction release exported otherwise), a warning: each spelling an event, the corrected one counted
    twice; ids most of whose rows written again name several entities, a problem: a figure or category events share
    (a carrier), not their own ids. Nothing without `event_id`."""
    try:
        found = event_ids(pack)
    except SourceError:
        return [], []
    if found is None or not found.rows:
        return [], []
    src = pack.source
    problems: list[str] = []
    warnings: list[str] = []
    listed = not isinstance(src.event_id, str)
    for i, (column, empty) in enumerate(found.empty.items()):
        if 2 * empty <= found.rows:
            continue
        key = f"source.event_id.{i}" if listed else "source.event_id"
        held = f"every one of the {found.rows}" if empty == found.rows else f"{empty} of the {found.rows}"
        line = (f"key `{key}`: got {column!r}; the column is empty in {held} dated rows: a row with no id is an event "
                "of its own, so no later row revises it and a correction sent again is counted beside the row it "
                "corrects: expected the column holding each event's own id")
        (problems if empty == found.rows else warnings).append(line)
    if found.written_again >= _SHARED_IDS and 2 * found.across > found.written_again and found.across_example:
        event, written, entities = found.across_example
        problems.append(
            f"key `source.event_id`: got {src.event_id!r}; {found.across} of the {found.written_again} ids written "
            f"on more than one row are written on rows of several entities (e.g. {event!r}: {written} rows of "
            f"{entities} entities), where a revision moves an event seldom: the column holds a figure or a category "
            "many events share, and each id's rows are read as one event, its latest row: expected the column "
            "holding each event's own id (a claim's, a loan's, a flight's number)")
    if found.otherwise and found.example is not None:
        first, other = found.example
        rows = "rows write" if found.otherwise != 1 else "row writes"
        cast = (f": one spelling in every release, e.g. a DuckDB `query` reading "
                f"`TRY_CAST(TRY_CAST({quote_identifier(src.event_id)} AS DOUBLE) AS BIGINT)` as the id"
                if isinstance(src.event_id, str) else "")
        warnings.append(
            f"key `source.event_id`: got {src.event_id!r}; {found.otherwise} {rows} another row's id otherwise, "
            f"the same number with leading zeros or decimals added or dropped (e.g. {other!r} beside {first!r}): "
            "each spelling is read as an event of its own, so a revision written so is counted beside the row it "
            f"revises: expected each event's id written alike{cast}")
    if found.before_own and found.before_example is not None:
        event, given, moment = found.before_example
        rows = "rows" if found.before_own != 1 else "row"
        warnings.append(
            f"key `source.published_column`: got {src.published_column!r}; {found.before_own} {rows} of an event "
            f"another of its rows stands for {'are' if found.before_own != 1 else 'is'} published before the event "
            f"itself (e.g. {event}, published {given} for {moment}): each is older than the row it would revise, so "
            "it revises nothing, silently: expected each row's publication date, on or after its own moment (a "
            "correction's the day it was sent)")
    return problems, warnings


def few_keys_shared(pack: CriteriaPack, duplicated: int) -> list[str]:
    """A warning: a few rows refused as duplicated keys, of one period as written, that another column the pack does
    not read tells apart: entities the id column names alike, not rows sent twice (trial 28: `entity_id: inst_name`
    over the College Scorecard, where 148 names are each several colleges', refused 1046 rows, and check's only word
    was `caps.max_flagged`'s "the commonest reason: duplicated key: mend the source"). Most rows so refused is a
    problem (`duplicated_keys`); a panel, a snapshot or a file dated by `known_at` alike, never events."""

    src, grain = pack.source, pack.grain
    if src.shape == "events" or src.published_column is not None:
        return []
    try:
        facts = duplicate_facts(pack)
        completions = key_completions(pack) if facts is not None and facts.finer * 2 <= facts.groups else []
    except SourceError:
        return []
    if facts is None:
        return []
    entity, copies, period, _, names = facts.example
    at = "" if src.known_at is not None else f" in {grain.label(period)}"
    shares = "an id" if src.known_at is not None else f"an entity and a {grain.name}"
    if not completions:
        return _id_reused(pack, facts, duplicated, f"e.g. {copies} rows of {entity!r}{at}, named {names}", shares)
    together = [*src.entity_columns, *completions[0]]
    telling = f"column {completions[0][0]!r} tells" if len(completions[0]) == 1 else \
        f"columns {' and '.join(repr(c) for c in completions[0])} together tell"
    alone = f" (or `entity_id: {completions[0][0]}` alone, if it is each entity's id)" \
        if len(completions[0]) == 1 and src.known_at is None else ""  # (a known_at file's recurs by itself)
    return [f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share {shares} with another row "
            f"(e.g. {copies} rows of {entity!r}{at}), each refused as a duplicated key, and {telling} them apart: "
            f"the column names several entities alike (a name, not an id)? expected the entity to be the columns "
            f"together, `entity_id: [{', '.join(together)}]`{alone}, or each row once (a period sent twice?)"]


def _id_reused(pack: CriteriaPack, facts: DuplicateFacts, duplicated: int, example: str, shares: str) -> list[str]:
    """A warning: a few rows refused as duplicated keys whose rows carry different names (`source.entity_name`),
    no column the pack does not read telling them apart: one id for several entities (trial 80: a country code
    written for Slovakia and again for Slovenia, year by year, refused 46 rows and left Slovakia out of the night
    with only "quarantined for: duplicated key"). Most duplicated keys must be so named apart."""
    src = pack.source
    named = [c for c in src.name_columns if c not in src.entity_columns]
    if not named or facts.named_apart * 2 <= facts.groups:
        return []
    together = [*src.entity_columns, *named]
    return [f"key `source.entity_id`: got {src.entity_id!r}; {duplicated} rows share {shares} with another row "
            f"({example}), each refused as a duplicated key, and the names' column {' and '.join(map(repr, named))} "
            f"tells them apart: one id written for several entities (a code reused)? The night leaves out each "
            f"such row: expected each entity's own id, or the entity to be the columns together, "
            f"`entity_id: [{', '.join(together)}]`"]


MANY_IDS = 100
"""Entities from which one row each is no coincidence of a short history but a row's own id taken for an entity's."""


ROWS_PER_ID = 1.5
"""Rows per entity at or below which the entity column is each row's own id."""


def rows_appended(pack: CriteriaPack, copies: tuple[int, int, int]) -> str:
    """A line naming the key the rows come from when every different row the night reads appears a whole number of
    times (`SourceFacts.copies`: the factor, the rows, the different rows): a file appended to itself counts each
    event that many times."""
    factor, rows, distinct = copies
    said, cause = _copies_from(pack)
    return (f"{said}: each of the {distinct} different rows the night reads appears {factor} times (or a multiple "
            f"of {factor}), equal in every column read: {rows} rows for {distinct} events, so every count and sum "
            f"would count each {factor} times: expected each event once ({cause}), or, if these are distinct events, "
            "a column that tells them apart among those the pack reads (a `count_distinct` of an id, say)")


def events_from_after(pack: CriteriaPack, night: date) -> list[str]:
    """A warning naming `source.events_from` when it is a day after the night checked: no period the night reads is
    counted from it, so the night reads the source as if it were not set (trial 123: `events_from: 2999-01-01`
    was accepted without a word)."""
    day = pack.source.events_from
    if pack.source.shape != "events" or day is None or day <= night:
        return []
    return [f"key `source.events_from`: got {day}, after the night checked ({night}): no period the night reads is "
            "counted from it, as if it were not set; expected the day the source began recording every entity's "
            "events, on or before the night"]


SUCCESSIVE_IDS = 10
"""Entities of one row each, about one a period, from which they are a figure of each period read as the entity."""


def ids_of_rows(pack: CriteriaPack, main: TableFacts) -> str | None:
    """A line naming `source.entity_id` when its column holds about one value per row the night reads (at least
    `MANY_IDS` values, at most `ROWS_PER_ID` rows each): an order's or a row's own id, naming no entity; or, from
    `SUCCESSIVE_IDS` values, when those rows also come about one a period: each period's own figure read as the
    entity (trial 64: a series of yearly counts keyed by its count was told `min_rows`, "perhaps a period no entity
    has rows in", every year holding its row)."""
    src, grain = pack.source, pack.grain
    if src.known_at is not None or main.seen_dated > ROWS_PER_ID * main.entities:
        return None
    if main.entities >= MANY_IDS:
        return (f"key `source.entity_id`: got {src.entity_id!r}; about {main.entities} values for "
                f"{main.seen_dated} rows the night reads, one row each or nearly: expected the column naming each "
                "entity, whose rows recur period after period (an order's or a row's own id names no entity)")
    spanned = 0 if main.periods is None else grain.between(*main.periods) + 1
    if main.entities < SUCCESSIVE_IDS or main.seen_dated > ROWS_PER_ID * spanned or \
            ROWS_PER_ID * main.seen_dated < spanned:  # (a few rows far apart: places a record was set, trial 64)
        return None
    dating = [c for c in src.entity_columns if c in src.dated_columns]
    what = f"the column dating the rows, {dating[0]!r}, read as the entity too:" if dating else \
        f"each {grain.name}'s own figure (or each row's own id) read as an entity?"
    return (f"key `source.entity_id`: got {src.entity_id!r}; about {main.entities} values for {main.seen_dated} "
            f"rows the night reads over {grain.count(spanned)}, one row each and one a {grain.name} or nearly: "
            f"{what} expected the column naming each entity, whose rows recur period after period, or `entity` "
            "naming the one series of a source of no entity column")
