"""`opportunity check`: what the night's entities say about the pack's entity keys (pure): a name column that most
entities share (every state named 'Measles') or a few names each shown for several entities (counties of several
states), a total row read as an entity of its own ('Total', 'All states'), and ids written both with and without
leading zeros ('01001' and '1001': one county read as two), a key column that names the measure a row holds, and a
name column finer than the id (a precinct named by each of its neighbourhoods).
Each is a warning naming its key: the night's numbers stand, but its brief names the wrong thing, or scores a sum
of other entities beside them."""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from datetime import date
from typing import Any

import numpy as np
import polars as pl

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import significant
from opportunity_assets.sources import shapes
from opportunity_assets.sources.probes import value_counts
from opportunity_assets.sources.shapes import entity_slug
from opportunity_assets.sources.spec import ENTITY_JOINER

SHARED_NAMES_FROM = 3
"""Entities from which a name most of them share is the name column's fault, not a coincidence of two towns."""
TOTAL_WORDS = frozenset({"total", "totals", "grand total", "sum", "subtotal", "all", "overall", "all states",
                         "all areas", "all industries", "all regions", "national", "nationwide"})
"""Values of an entity key (trimmed, lower case) that a spreadsheet writes on a total row."""


def names_shared(pack: CriteriaPack, entities: pl.DataFrame) -> list[str]:
    """`source.entity_name` whose values most of the night's entities share with another (`entities`: one row per
    entity, `entity_id` and `entity_name`), or else some names each shown for several entities
    (`_names_repeated`)."""
    src = pack.source
    if src.name_columns == src.entity_columns:
        return []
    if entities.height < SHARED_NAMES_FROM:
        return _names_repeated(pack, entities)
    names = Counter(as_shown(str(n)) for n in entities["entity_name"].to_list())
    shared = sum(n for n in names.values() if n > 1)
    if 2 * shared <= entities.height:
        return _names_repeated(pack, entities)
    name, count = names.most_common(1)[0]
    ids = [str(i) for i, n in entities.select("entity_id", "entity_name").iter_rows() if as_shown(str(n)) == name][:2]
    return [f"key `source.entity_name`: got {src.entity_name!r}; {shared} of the {entities.height} entities share "
            f"their name with another ({count} are named {name!r}: {', '.join(repr(i) for i in ids)}, ...), so the "
            f"brief cannot tell them apart: expected the column of each entity's own name (`entity_name: "
            f"{src.entity_id}`, the id's own, perhaps)"]


NAMES_CHANGE_FROM = 3
"""Rows of an entity from which a name on every other row of them is the name column's fault (a row's number)."""


def names_per_row(history: pl.DataFrame) -> pl.DataFrame:
    """Per entity of a panel's rows (`history`: the rows the night reads, `entity_id` and `entity_name`): how many
    `names` they carry, its `rows`, the first two names `shown` (sorted), its `periods` and those in which it carries
    several names (`together`): what `names_changing` judges (an events source's are counted over its events,
    `probes.names_per_entity`)."""
    per = history.group_by("entity_id").agg(pl.col("entity_name").n_unique().alias("names"), pl.len().alias("rows"),
                                             pl.col("entity_name").sort().head(2).alias("shown"))
    periods = history.group_by("entity_id", "period").agg(pl.col("entity_name").n_unique().alias("named")) \
        .group_by("entity_id").agg(pl.len().alias("periods"), (pl.col("named") > 1).sum().alias("together"))
    return per.join(periods, on="entity_id", how="left")


def names_changing(pack: CriteriaPack, per: pl.DataFrame) -> list[str]:
    """`source.entity_name` naming most entities differently on half their rows or more (`per`: one row per entity,
    `names_per_row`'s; entities of `NAMES_CHANGE_FROM` rows or more): a row's own number or date taken for the name
    column (`entity_name: rownames`), so the brief shows one row's value, '1836' for East Asia, or one event's,
    '6' for the women of a survey. A company renamed once or twice is no such entity."""
    src = pack.source
    if src.name_columns == src.entity_columns or not per.height:
        return []
    per = per.filter(pl.col("rows") >= NAMES_CHANGE_FROM).sort("entity_id")
    changing = per.filter(2 * pl.col("names") >= pl.col("rows"))
    if not per.height or 2 * changing.height <= per.height:
        return []
    row = changing.row(0, named=True)
    entity, names, shown = row["entity_id"], row["names"], list(row["shown"])
    rows = "events" if src.shape == "events" else "rows"
    return [f"key `source.entity_name`: got {src.entity_name!r}; {changing.height} of the {per.height} entities are "
            f"named differently on half their {rows} or more ({entity!r} has {names} names, e.g. "
            f"{', '.join(repr(str(n)) for n in shown)}), so the brief shows one row's: expected the column of each "
            f"entity's own name, the same in its rows (`entity_name: {src.entity_id}`, the id's own, perhaps)"]


NAMES_FINER_FROM = 4
"""Names of one entity from which its name column is a finer key than its id (a neighbourhood for a precinct's id),
not a name changed once or twice."""


def names_finer(pack: CriteriaPack, per: pl.DataFrame) -> list[str]:
    """`source.entity_name` under which most entities carry `NAMES_FINER_FROM` names or more, each name on several of
    their rows (`per`: `names_per_row`'s, or an events source's counted over its events): a column finer than the id
    taken for the name (Minneapolis's uses of force by precinct, named by neighbourhood), so the brief shows one
    neighbourhood for a whole precinct. A name on nearly every row apart is `names_changing`'s."""
    src = pack.source
    if src.name_columns == src.entity_columns or not per.height:
        return []
    per = per.filter(pl.col("rows") >= NAMES_CHANGE_FROM).sort("entity_id")
    finer = per.filter((pl.col("names") >= NAMES_FINER_FROM) & (2 * pl.col("names") < pl.col("rows")))
    # most entities so, or the entities holding most rows (trial 30: a count of locations taken for the id of
    # restaurants, `entity_name: business_name`: half its 135 numbers carry one name, the other half 4 to 75,
    # holding 82% of the inspections; check said ok, and the brief named one restaurant for each number's many)
    held = int(finer["rows"].sum()) if finer.height else 0
    if not per.height or (2 * finer.height <= per.height and 2 * held <= int(per["rows"].sum())):
        return []
    row = finer.sort("names", descending=True).row(0, named=True) if 2 * finer.height <= per.height \
        else finer.row(0, named=True)
    entity, names, shown = row["entity_id"], row["names"], list(row["shown"])
    rows = "events" if src.shape == "events" else "rows"
    key = [*src.entity_columns, *(c for c in src.name_columns if c not in src.entity_columns)]
    most = "" if 2 * finer.height > per.height else f", holding {held} of the {int(per['rows'].sum())} {rows},"
    return [f"key `source.entity_name`: got {src.entity_name!r}; {finer.height} of the {per.height} entities{most} "
            f"carry {NAMES_FINER_FROM} names or more over their {rows} ({entity!r} has {names}, e.g. "
            f"{', '.join(repr(str(n)) for n in shown)}), so the brief shows one of them for the whole entity: expected "
            f"the column of each entity's own name (`entity_name: {src.entity_id}`, the id's own, perhaps), or, if "
            f"each name is an entity of its own, both as the key (`entity_id: [{', '.join(key)}]`)"]


def names_together(pack: CriteriaPack, per: pl.DataFrame) -> list[str]:
    """`source.entity_name` under which most entities carry several names in one period, in half their periods or
    more (`per`: `names_per_row`'s, or an events source's counted over its events): a name column finer than the id,
    each name on many rows, too few names for `names_finer` (trial 110: arrests by `entity_id: couleur` named by
    `[couleur, sexe]`, the brief naming all white arrestees 'White / Male'). A rename, one name after another, is
    no such entity."""
    src = pack.source
    if src.name_columns == src.entity_columns or not per.height or "together" not in per.columns:
        return []
    per = per.filter(pl.col("rows") >= NAMES_CHANGE_FROM).sort("entity_id")
    together = per.filter((pl.col("names") > 1) & (pl.col("together") > 0)
                          & (2 * pl.col("together") >= pl.col("periods")))
    if not per.height or 2 * together.height <= per.height:
        return []
    row = together.row(0, named=True)
    shown, grain = [str(n) for n in row["shown"]], f"{pack.grain.name}s"
    key = [*src.entity_columns, *(c for c in src.name_columns if c not in src.entity_columns)]
    return [f"key `source.entity_name`: got {src.entity_name!r}; {together.height} of the {per.height} entities "
            f"carry several names in one period, in half their {grain} or more ({row['entity_id']!r} is named "
            f"{' and '.join(repr(n) for n in shown)} in {row['together']} of its {row['periods']} {grain}), so the "
            "brief shows one of them for the whole entity: expected the column of each entity's own name "
            f"(`entity_name: {src.entity_id}`, the id's own, perhaps), or, if each name is an entity of its own, both "
            f"as the key (`entity_id: [{', '.join(key)}]`)"]


def _names_repeated(pack: CriteriaPack, metrics: pl.DataFrame) -> list[str]:
    """A warning when names are each shown for several entities (counties of several states keyed by an id and
    named by the county alone): the brief, the archive and the UI write them alike, and a reader cannot tell which
    HAMILTON to act on."""
    src = pack.source
    if not metrics.height:
        return []
    # names as the brief shows them: 'Élan' composed (NFC) and decomposed (NFD), or with a trailing space, print
    # alike (trial 90: two municipalities so named, no word, where 'ADAMS' twice was one)
    shown_as = pl.col("entity_name").cast(pl.Utf8).map_elements(as_shown, return_dtype=pl.Utf8)
    shared = (metrics.with_columns(shown_as.alias("shown"))
              .group_by("shown").agg(pl.col("entity_id").sort().alias("ids"), pl.len().alias("n"),
                                     pl.col("entity_name").cast(pl.Utf8).unique().sort().alias("written"))
              .filter(pl.col("n") > 1).sort(["n", "shown"], descending=[True, False]))
    if not shared.height:
        return []
    name, ids = shared["shown"][0], shared["ids"][0].to_list()
    ids_shown = ", ".join(map(str, ids[:3])) + (", ..." if len(ids) > 3 else "")
    return [f"key `source.entity_name`: got {src.entity_name!r}; {shared.height} name"
            f"{'s are each' if shared.height > 1 else ' is'} shown for several entities (e.g. {name!r} for "
            f"{len(ids)} ids: {ids_shown}{written_alike(shared['written'][0].to_list())}), so the brief writes them "
            "alike: expected a column naming each entity apart (a county with its state, say), as the file writes it"]


def as_shown(text: str) -> str:
    """A text as the brief, the archive and the UI show it to a reader: in Unicode's composed form (NFC: 'É' one
    character, not 'E' and a combining accent), its runs of spaces one and its ends trimmed. Two texts shown alike
    cannot be told apart by whoever reads them, whatever their bytes."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def written_alike(spellings: list[str]) -> str:
    """What tells apart texts that `as_shown` shows alike (`spellings`: as written), for a message: nothing when
    they are one text, else the Unicode forms (NFC and NFD) or the spaces in which they differ."""
    if len(set(spellings)) < 2:
        return ""
    if len({unicodedata.normalize("NFC", s) for s in spellings}) < len(set(spellings)):
        return (", written in Unicode's composed and decomposed forms (NFC and NFD), which print alike: DuckDB's "
                "`nfc_normalize` writes them one way")
    return f", written with other spaces: {', '.join(repr(s) for s in spellings[:3])}"


def total_rows(pack: CriteriaPack, entities: pl.DataFrame, history: pl.DataFrame | None = None) -> list[str]:
    """Entities whose id (or a column of it) reads as a total row's (`Total`, `All states`): a sum of other entities
    scored beside them. One warning per key column, naming the `where` that would leave them out; else one naming
    ids whose name in any row (`history`'s, `entity_id` and `entity_name`; else `entities`') reads as a total's."""
    src = pack.source
    columns = src.entity_columns
    found: dict[str, list[str]] = {}
    for entity in (str(e) for e in entities["entity_id"].to_list()):
        parts = entity.split(ENTITY_JOINER) if len(columns) > 1 else [entity]
        if len(parts) != len(columns):
            continue
        for column, part in zip(columns, parts, strict=True):
            if part.strip().lower() in TOTAL_WORDS:
                found.setdefault(column, []).append(part)
    if src.wide is not None and src.wide.across == "entity" and found:  # the total is a column to leave unlisted
        written = sorted({v for values in found.values() for v in values})
        n = src.wide.columns.index(written[0])
        return [f"key `source.wide.columns.{n}`: got {written[0]!r}; its column reads as a total, a sum of the other "
                "columns' entities that would be scored beside them: expected it left out of `source.wide.columns`, "
                "unless it is an entity of its own"]
    out = _totals_by_name(pack, entities if history is None else history) if not found else []
    for column, values in found.items():
        written = sorted(set(values))
        examples = [e for e in (str(x) for x in entities["entity_id"].to_list())
                    if any(v in e.split(ENTITY_JOINER) for v in written)][:2]
        out.append(f"key `source.where`: entity {examples[0]!r}{' and others' if len(examples) > 1 else ''} reads "
                   f"as a total row ({column!r} is {written[0]!r}), a sum of other entities that would be scored "
                   f"beside them: expected `where: [{{column: {column}, not_in: {written}}}]` to leave it out, unless "
                   f"it is an entity of its own")
    return out


SUM_SHARE_TOLERANCE = 0.002
"""How near half of a period's sum over the entities (its own figure included) an entity's figure must be to be the
sum of the others: a total row holds it to rounding; a large entity of its own moves off it by percents."""


def totals_by_sum(pack: CriteriaPack, history: pl.DataFrame) -> list[str]:
    """A warning naming `source.where`: an entity of a panel whose figure of a column of counts or amounts is the sum
    of the other entities' in nearly every period (half the period's sum over all of them, its own included,
    within `SUM_SHARE_TOLERANCE`, in 90% of 3 periods or more with 4 entities or more): a total row scored beside
    its parts whatever its name ('United States' among the states, a code '0'; trial 85: a total row named by no
    total word competed silently). Columns of any negative value, and sources of events, are not judged."""
    src = pack.source
    if src.shape != "panel" or len(src.entity_columns) != 1 or src.wide is not None or history.is_empty():
        return []
    for column in src.columns:
        if column not in history.columns or not history.schema[column].is_numeric():
            continue
        rows = history.select("entity_id", "entity_name", "period", pl.col(column).cast(pl.Float64).alias("v")) \
            .drop_nulls()
        if rows.is_empty() or rows["v"].min() < 0:  # type: ignore[operator]
            continue
        sums = rows.group_by("period").agg(pl.col("v").sum().alias("s"), pl.len().alias("n"))
        half = rows.join(sums.filter((pl.col("n") >= 4) & (pl.col("s") > 0)), on="period") \
            .with_columns(((pl.col("v") / pl.col("s") - 0.5).abs() <= SUM_SHARE_TOLERANCE).alias("half"))
        if not half["half"].any():  # no figure half its period's sum: no entity's share to count
            continue
        found = half.group_by("entity_id").agg(pl.col("half").mean().alias("share"), pl.len().alias("periods"),
                                               pl.col("entity_name").first().alias("name")) \
            .filter((pl.col("periods") >= 3) & (pl.col("share") >= 0.9)).sort("entity_id")
        if found.is_empty():
            continue
        top = found.row(0, named=True)
        entity, name, periods = top["entity_id"], top["name"], top["periods"]
        named = "" if name == entity else f" ({name!r})"
        return [f"key `source.where`: entity {entity!r}{named} has the sum of every other entity's {column} in "
                f"{periods} periods (half of each period's sum over them all), a total row that would be scored "
                f"beside its parts: expected `where: [{{column: {src.entity_columns[0]}, not_in: {[entity]}}}]` to "
                "leave it out, unless it is an entity of its own"]
    return []


_TOTAL_LAST_WORDS = frozenset({"total", "totals", "subtotal"})
"""A name's last word that makes it a total's (`Texas total`); a first word does not (`Total Wine`, `All Saints`)."""
_FOOTNOTE = re.compile(r"(\s*(\(\w{1,2}\)|\[\w{1,2}\]|\*+|†|‡))+$")
"""A footnote mark a statistics office writes after a name: `Texas (a)`, `Texas [1]`, `Texas*`."""


def _reads_as_total(name: str) -> bool:
    """Whether a name is a total row's, as a statistics office writes one beside its parts: 'Sweden, total',
    'Total, all industries', 'Texas total', 'Stockholm total*' (a footnote mark aside), or a total's own word."""
    text = _FOOTNOTE.sub("", name).strip().lower()
    if any(part.strip() in TOTAL_WORDS for part in text.split(",")):
        return True
    words = re.findall(r"[^\W_]+", text)
    return len(words) > 1 and words[-1] in _TOTAL_LAST_WORDS


def _totals_by_name(pack: CriteriaPack, entities: pl.DataFrame) -> list[str]:
    """Entities keyed by a code whose name reads as a total's (`_reads_as_total`; trial 85: a country's row, code
    '0', named 'Sweden, total', scored beside its municipalities): one warning naming the `where` that leaves their
    codes out, in every row however the name is spelt in each."""
    src = pack.source
    if src.name_columns == src.entity_columns or len(src.entity_columns) != 1 or src.wide is not None:
        return []
    named = entities.select("entity_id", "entity_name").unique().sort("entity_id", "entity_name")
    totals = list({str(i): str(n) for i, n in named.iter_rows() if n is not None and _reads_as_total(str(n))}.items())
    if not totals:
        return []
    column, (first, name) = src.entity_columns[0], totals[0]
    several = len(totals) > 1
    return [f"key `source.where`: entity {first!r} ({name!r}){' and others' if several else ''} "
            f"read{'' if several else 's'} as a total row ({src.entity_name!r} is {name!r}), a sum of other entities "
            f"that would be scored beside them: expected `where: [{{column: {column}, not_in: "
            f"{sorted(i for i, _ in totals)}}}]` to leave {'them' if several else 'it'} out, unless "
            f"{'each' if several else 'it'} is an entity of its own"]


DATED_IDS_FROM = 10
"""Entities from which ids that are all dates are the dates read as entities, not a coincidence of codes."""
_DATE_ID = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(-\d{1,2}-\d{2}(-\d{2})?)?$|^(\d{1,2})-(\d{1,2})-(\d{4})$")
"""An id's slug (`entity_slug`) that is a date, ISO (`2016-10-13`, with a time of day `2016-10-13-09-30`) or a US
or European one (`10-13-2016` of `10/13/2016`, `13-10-2016`)."""


def _is_date(slug: str) -> bool:
    match = _DATE_ID.match(slug)
    if match is None:
        return False
    year, first, second = (match.group(1), match.group(2), match.group(3)) if match.group(1) else \
        (match.group(8), match.group(6), match.group(7))
    for month, day in ((first, second), (second, first)):
        try:
            date(int(year), int(month), int(day))
        except ValueError:
            continue
        return True
    return False


def ids_of_dates(pack: CriteriaPack, entities: pl.DataFrame) -> list[str]:
    """A warning naming `source.entity_id` when nearly every id of `DATED_IDS_FROM` or more is a date: each day read
    as an entity of its own, with a row or a few and no history to judge (trial 64: stevedata AppleStock's closes
    keyed by `Date`, `10/13/2016`, each day a candidate of one row, and check said ok)."""
    src = pack.source
    if src.entity is not None or src.wide is not None or len(src.entity_columns) != 1:
        return []
    ids = [str(e) for e in entities["entity_id"].to_list()]
    dated = [e for e in ids if _is_date(entity_slug(e))]
    if len(ids) < DATED_IDS_FROM or 10 * len(dated) < 9 * len(ids):
        return []
    names = dated[:2]
    return [f"key `source.entity_id`: got {src.entity_id!r}; {len(dated)} of its {len(ids)} ids are dates (e.g. "
            f"{', '.join(repr(n) for n in names)}), so each day is read as an entity of its own, with no history to "
            "judge it by: expected the column naming each entity, the dates its `period_column` (or `entity` "
            "naming the one series of a source of no entity column)"]


_STRUCTURED = re.compile(r"\s*(\{.*\}|\[.*\])\s*", re.DOTALL)
"""A value written as a structure: a DuckDB STRUCT, LIST or MAP, or a JSON object or array, as text."""


def ids_of_structures(pack: CriteriaPack) -> list[str]:
    """A warning naming `source.entity_id` when nearly every id of the rows is a structure written as text (a
    STRUCT, LIST or MAP column, a JSON object: `{'lat': 45.4, 'lon': -75.7}`), each read as an entity's id and name
    and compared as text, a field changed anywhere in it another entity (trial 90: a municipality's STRUCT location
    as the key, and check said nothing)."""
    src = pack.source
    if src.entity is not None or src.wide is not None or len(src.entity_columns) != 1:
        return []
    ids = value_counts(pack, shapes.ENTITY, shapes.IN_SCOPE, limit=20)
    structured = [i for i in ids if _STRUCTURED.fullmatch(i)]
    if not ids or 10 * len(structured) < 9 * len(ids):
        return []
    column = src.entity_columns[0]
    return [f"key `source.entity_id`: got {src.entity_id!r}; its values are structures written as text (e.g. "
            f"{structured[0][:80]!r}): a STRUCT, LIST or JSON object read as each entity's id and name, compared as "
            "text: expected a column of names or codes (a DuckDB `query` takes one field out, `SELECT *, "
            f"{column}.name AS name FROM ...`, then `entity_id: name`)"]


_LEADING_ZEROS = re.compile(r"(?<![0-9])0+(?=[0-9])")


def ids_zero_padded(pack: CriteriaPack, entities: pl.DataFrame) -> list[str]:
    """Entity ids that differ only by leading zeros ('01001' and '1001', a FIPS code some rows of a spreadsheet
    export lost its zero in): read as two entities, each with part of the one's rows, so each one's windows have
    gaps and its figures are halves. A warning naming `source.entity_id`, with how many ids are split so."""
    groups: dict[str, set[str]] = {}
    for entity in {str(e) for e in entities["entity_id"].to_list()}:
        groups.setdefault(_LEADING_ZEROS.sub("", entity), set()).add(entity)
    split = sorted((sorted(ids, key=lambda i: (len(i), i)) for ids in groups.values() if len(ids) > 1),
                   key=lambda ids: ids[0])
    if not split:
        return []
    shown = " and ".join(repr(i) for i in split[0][::-1])
    many = "s are" if len(split) > 1 else " is"
    return [f"key `source.entity_id`: got {pack.source.entity_id!r}; {len(split)} id{many} "
            f"written both with and without leading zeros (e.g. {shown}), each read as {len(split[0])} entities "
            f"that share its rows (their windows with gaps, their figures parts of one): expected each id written one "
            f"way throughout the source (its leading zeros kept, or dropped, in every row)"]


def without_padded_twins(entities: pl.DataFrame) -> pl.DataFrame:
    """`entities` (one row per entity, `entity_id` first) with one id of each group written both with and without
    leading zeros (`ids_zero_padded`'s): the name such twins share is that warning's, not a name shown for several
    entities (trial 40: `' 6073'` in a year of `06073`'s rows was told twice, by `source.entity_id` and by
    `source.entity_name`)."""
    kept: dict[str, str] = {}
    for entity in sorted({str(e) for e in entities["entity_id"].to_list()}):
        kept.setdefault(_LEADING_ZEROS.sub("", entity), entity)
    return entities.filter(pl.col("entity_id").cast(pl.String).is_in(list(kept.values())))


MEASURE_APART = 1000.0
"""Times apart the typical sizes of a column under two values of one key column must be, with no overlap between
their entities' ranges, before that key column reads as the name of the measure each row holds."""


def measure_in_key(pack: CriteriaPack, history: pl.DataFrame) -> list[str]:
    """A warning: a column of a key of several columns that names the measure a row holds (`[country, category]`
    over export quality indexes near 1 and trade values in millions), not a part of the entity: one numeric column's
    values under two of its values lie `MEASURE_APART` times apart or more, every entity's own range under one below
    every entity's under the other. Each such "entity" is then a measure of a country, scored on ranges and filters
    meant for one measure (trial 20: the formula's level range, right for the indexes, gave every trade value its
    whole weight). `long` reads such a table, each measure a column. A column each of whose values is one entity's
    names the entities, and one the other columns determine (a country's one continent) is an attribute of theirs:
    neither is a measure (trial 23: `[country, continent]` over gapminder told 'country' a measure, China's
    population 10,000 times Aruba's)."""
    src = pack.source
    columns = src.entity_columns
    if len(columns) < 2 or src.long is not None or src.wide is not None or history.is_empty():
        return []
    sizes = (history.select("entity_id", *[pl.col(c).abs() for c in src.columns])
             .group_by("entity_id").agg([pl.col(c).drop_nans().min().alias(f"{c}\x00lo") for c in src.columns]
                                        + [pl.col(c).drop_nans().max().alias(f"{c}\x00hi") for c in src.columns]
                                        + [pl.col(c).drop_nans().median().alias(c) for c in src.columns]))
    parts = [str(e).split(ENTITY_JOINER) for e in sizes["entity_id"].to_list()]
    out = []
    for k, key_column in enumerate(columns):
        values = [p[k] if len(p) == len(columns) else None for p in parts]
        named = [v for v in values if v is not None]
        if len(set(named)) < 2 or len(set(named)) == len(named) or _determined(parts, k, len(columns)):
            continue  # (each value one entity's, or one per value of the other columns: no measure)
        for column in src.columns:
            groups: dict[str, tuple[list[float], float, float]] = {}
            for value, median, low, high in zip(values, sizes[column], sizes[f"{column}\x00lo"],
                                                sizes[f"{column}\x00hi"], strict=True):
                if value is None or median is None or median <= 0:
                    continue
                medians, lo, hi = groups.get(value, ([], float("inf"), 0.0))
                groups[value] = ([*medians, median], min(lo, low), max(hi, high))
            if len(groups) < 2:
                continue
            typical = {v: sorted(m)[len(m) // 2] for v, (m, _, _) in groups.items()}
            small, large = min(typical, key=typical.__getitem__), max(typical, key=typical.__getitem__)
            if typical[large] < MEASURE_APART * typical[small] or groups[small][2] >= groups[large][1] \
                    or not _clustered(sorted(typical.values())):
                continue
            apart = 10 ** math.floor(math.log10(typical[large] / typical[small]))
            out.append(
                f"key `source.entity_id`: got {src.entity_id!r}; {column} under {key_column!r} {large!r} (typically "
                f"{significant(typical[large])}) is over {apart:,} times its size under {small!r} (typically "
                f"{significant(typical[small])}), no entity's range reaching the other's: is {key_column!r} the name "
                f"of the measure each row holds, each scored on ranges and filters meant for one? expected `long: "
                f"{{names: {key_column}, values: {column}}}` with `columns` naming the measures read, if so")
            break
    return out


def ids_renamed(pack: CriteriaPack, history: pl.DataFrame) -> list[str]:
    """A warning: entity keys that differ only in spaces, punctuation, case or accents, the rows of one ending before
    the other's begin: one entity renamed mid-history, read as two, each with part of its history, so no window
    reaches across the rename (trial 26: UN migrant stocks writing `Viet Nam` to 2005, `Vietnam` after). Keys of one
    candidate id too (`GBP` to 1985, `gbp` after, read as `gbp` and `gbp-2`): the scan's note alone had said so, a
    fact beside check's ok (trials 35 and 38)."""
    groups, apart = _spellings(pack, history), _ids_apart(pack)
    renamed = [(before, after) for spelt in groups.values() if len(spelt) > 1
               for before, after in itertools.pairwise(sorted(spelt)) if before[1] < after[0] and apart(before, after)]
    if not renamed:
        return []
    (_, last, old), (first, _, new) = renamed[0]
    label, src = pack.grain.label, pack.source
    differ = "entity key differs" if len(renamed) == 1 else "entity keys differ"
    return [f"key `source.entity_id`: got {src.entity_id!r}; {len(renamed)} {differ} from another only in spaces, "
            f"punctuation, case or accents, its rows beginning after the other's end (e.g. {old!r} to "
            f"{label(last)}, {new!r} from {label(first)}"
            f"{written_alike([old, new]) if as_shown(old) == as_shown(new) else ''}): {_read_as_two('spelling')}"]


def _ids_apart(pack: CriteriaPack) -> Callable[[tuple[Any, ...], tuple[Any, ...]], bool]:
    """Which pairs of spellings the detectors of spellings judge: every pair where `source.entity_id` names the
    keys; of a wide source's columns, those whose ids differ only (columns sharing an id are the scan's note, and
    a column is no `entity_id`'s value)."""
    if pack.source.wide is not None and pack.source.wide.across == "entity":
        return lambda one, other: entity_slug(one[2]) != entity_slug(other[2])
    return lambda one, other: True


def ids_spelt_two_ways(pack: CriteriaPack, history: pl.DataFrame) -> list[str]:
    """A warning: entity keys that differ only in spaces, punctuation, case or accents, whose rows share periods (one
    ending after the other begins, so not `ids_renamed`'s rename): one entity spelt two ways at once, read as two,
    each with part of its rows (trial 30: restaurant inspections writing `MCDONALD'S` and `MCDONALDS`, `FIRE ISLAND
    RUSTIC BAKE SHOP` and `... BAKESHOP`, in the same years; check said ok; trial 38: house sales' `3 bedrooms`
    written `3 Bedrooms` through 2012, one candidate id apart, `3-bedrooms-2`; `Zürich` beside `Zurich` is one too)."""
    groups, apart = _spellings(pack, history), _ids_apart(pack)
    both = [(one, other) for spelt in groups.values() if len(spelt) > 1
            for one, other in itertools.combinations(sorted(spelt), 2) if one[1] >= other[0] and apart(one, other)]
    if not both:
        return []
    (first, last, one), (first_other, last_other, other) = both[0]
    src = pack.source

    def label(a: date, b: date) -> str:  # (one period: 'in 2018', not 'in 2018 to 2018')
        return pack.grain.label(a) if a == b else f"{pack.grain.label(a)} to {pack.grain.label(b)}"

    pairs = "1 pair of entity keys differs" if len(both) == 1 else f"{len(both)} pairs of entity keys differ"
    return [f"key `source.entity_id`: got {src.entity_id!r}; {pairs} only in spaces, punctuation, case or accents, "
            f"their rows in the same {pack.grain.plural} (e.g. {one!r} in {label(first, last)}, {other!r} in "
            f"{label(first_other, last_other)}{written_alike([one, other]) if as_shown(one) == as_shown(other) else ''}"
            "): each read as an entity of its own with part of the "
            "rows: expected one spelling in the source (a DuckDB `query` can `replace` one with the other), if "
            "each pair is one entity"]


CONTINUED_BY_CHANCE = 0.02
"""The most an entity's figures may be matched by chance (the share of the entities reporting then whose figure
lies as near, multiplied over the columns) for a new key continuing a vanished one to be called one entity
renamed: pet licences per ZIP code are near many others', a country's population is near few."""
CONTINUED_MIN_PERIODS = 3
"""Periods of the vanished entity's figures before its figures' own step is judged."""


def ids_continued(pack: CriteriaPack, history: pl.DataFrame) -> list[str]:
    """A warning: an entity key whose rows end before the source's last period, and another's, spelt otherwise
    (`Portugal`, then `PRT`), that begin in the very next period with figures continuing the first's: each column
    within three times the median step the first entity's figures took from period to period, where few other
    entities reporting in its last period lie that near its figures by chance (their shares multiplied, at most
    `CONTINUED_BY_CHANCE`), and each of the two pairs with no other. One entity renamed mid-history, read as two:
    no window reaches across the change. Keys that differ only in spelling are `ids_renamed`'s."""
    src, several = pack.source, len(pack.source.entity_columns) > 1
    columns = [c for c in src.columns if c in history.columns and history.schema[c].is_numeric()]
    history = _with_events(history)
    if history.is_empty() or not columns:
        return []
    rows = (history.select("entity_id", "period", *[pl.col(c).cast(pl.Float64).fill_nan(None) for c in columns])
            .drop_nulls(["entity_id", "period"]).sort("entity_id", "period"))
    periods = rows["period"].unique().sort().to_list()
    following = dict(itertools.pairwise(periods))
    spans = rows.group_by("entity_id").agg(pl.col("period").min().alias("first"), pl.col("period").max().alias("last"))
    begins = spans.filter(pl.col("first") > periods[0])
    starting = set(begins["first"].to_list())
    ends = spans.filter((pl.col("last") < periods[-1])
                        & pl.col("last").replace_strict(following, default=None).is_in(starting))
    if ends.is_empty():
        return []
    # each entity's figures, only where a key ends and another begins the next period (a wide night: none)
    figures = rows.group_by("entity_id").agg(
        *[pl.col(c).first().alias(f"{c}\x00first") for c in columns],
        *[pl.col(c).last().alias(f"{c}\x00last") for c in columns],
        *[pl.col(c).drop_nulls().diff().abs().median().alias(f"{c}\x00step") for c in columns],
        *[pl.col(c).drop_nulls().len().alias(f"{c}\x00n") for c in columns])
    begins, ends = (frame.join(figures, on="entity_id", how="left", maintain_order="left") for frame in (begins, ends))
    levels = {(period, c): np.sort(frame[c].drop_nulls().to_numpy())
              for (period,), frame in rows.filter(pl.col("period").is_in(ends["last"].unique().to_list()))
              .partition_by("period", as_dict=True).items() for c in columns}
    newcomers = {period: frame for (period,), frame in begins.partition_by("first", as_dict=True).items()}
    found = []
    for at, trail in _distinct_trails(ends, columns, levels, tried=ends.height).items():
        old = ends.row(at, named=True)
        starters = newcomers[following[old["last"]]]
        filled, near = np.zeros(starters.height, bool), np.ones(starters.height, bool)
        for c, (last, step) in trail.items():
            first = starters[f"{c}\x00first"].to_numpy(allow_copy=True).astype(float)  # null: NaN
            filled |= ~np.isnan(first)
            near &= np.isnan(first) | (np.abs(first - last) <= step)
        (matched,) = np.nonzero(filled & near)
        if len(matched) != 1:  # none, or several alike: no one entity continued
            continue
        new = starters.row(int(matched[0]), named=True)
        if _spelt(old["entity_id"], several) != _spelt(new["entity_id"], several):
            firsts = {c: new[f"{c}\x00first"] for c in trail}
            found.append((old, new, [f"{c} {significant(trail[c][0])} then {significant(first)}"
                                     for c, first in firsts.items() if first is not None]))
    news = Counter(n["entity_id"] for _, n, _ in found)
    found = [(o, n, s) for o, n, s in found if news[n["entity_id"]] == 1]
    if not found:
        return _only_gap_filled(pack, rows, spans, ends, begins, following)
    old, new, shown = found[0]
    label = pack.grain.label
    said = "1 entity key begins" if len(found) == 1 else f"{len(found)} entity keys begin"
    return [f"key `source.entity_id`: got {src.entity_id!r}; {said} where another's rows end, its figures "
            f"continuing the other's (e.g. {old['entity_id']!r} to {label(old['last'])}, {new['entity_id']!r} from "
            f"{label(new['first'])}: {', '.join(shown[:3])}): {_read_as_two('name')}"]


BALANCED_FROM = 10
"""Entities reported on both sides of a change of period from which a panel whose only key ending then and only
key beginning the next period is one entity renamed, whatever its figures did."""


def _only_gap_filled(pack: CriteriaPack, rows: pl.DataFrame, spans: pl.DataFrame, ends: pl.DataFrame,
                     begins: pl.DataFrame, following: dict[date, date]) -> list[str]:
    """A warning: the one entity key whose rows end in a period and the one whose rows begin in the very next,
    every other entity reported in the first also reported in the next (at least `BALANCED_FROM` of them): one
    entity renamed, whatever its figures did across the change (trial 30: the GTD's `Iraq` to 2012, `Republic of
    Iraq` from 2013, 1,435 incidents then 2,852: no figure continued, and check said ok). Judged change by change,
    not over the whole history: a league's clubs renamed in other years, or joining it, hid trial 40's `Tampa Bay
    Devil Rays` to 2007 and `Tampa Bay Rays` from 2008 while the 28 other clubs played on."""
    src = pack.source
    found = []
    for old in ends.iter_rows(named=True):
        last, nxt = old["last"], following[old["last"]]
        starters = begins.filter(pl.col("first") == nxt)
        if starters.height != 1 or spans.filter(pl.col("last") == last).height != 1:
            continue
        seen = (rows.filter(pl.col("period").is_in([last, nxt])).group_by("entity_id")
                .agg(pl.col("period").min().alias("from"), pl.col("period").max().alias("to")))
        both = seen.filter(pl.col("from") == last).filter(pl.col("to") == nxt).height
        only = seen.filter(pl.col("from") == pl.col("to"))
        new = starters.row(0, named=True)
        if both >= BALANCED_FROM and sorted(only["entity_id"].to_list()) == sorted([old["entity_id"],
                                                                                     new["entity_id"]]):
            found.append((old, new, both))
    if not found:
        return []
    old, new, both = max(found, key=lambda pair: pair[0]["last"])
    label = pack.grain.label
    said = "1 entity key begins" if len(found) == 1 else f"{len(found)} entity keys begin"
    return [f"key `source.entity_id`: got {src.entity_id!r}; {said} where another's rows end, the only key ending "
            f"in its {pack.grain.name} and the only one beginning the next (the other {both} entities reported in "
            f"both; e.g. {old['entity_id']!r} to {label(old['last'])}, {new['entity_id']!r} from "
            f"{label(new['first'])}): {_read_as_two('name')}"]


def _distinct_trail(span: dict[str, Any], columns: list[str], levels: dict[tuple[date, str], np.ndarray], *,
                    tried: int = 1) -> dict[str, tuple[float, float]]:
    """(One key at a time: what `_distinct_trails` gives every key at once, and is tested against.) Per column, an
    entity's figure in its last period and three times the median step of its figures (`span`:
    its row of `ids_continued`'s spans), where those figures are matched so near by at most `CONTINUED_BY_CHANCE` of
    the other entities reporting in that period (`levels`: their figures, sorted), their shares multiplied, over
    the `tried` keys ending early that are judged so, each a chance of a coincidence (trial 36's `where: lunch >
    10` ended and began hundreds of small schools' rows, and five coincidences were named renames); else nothing."""
    trail, chance = {}, 1.0
    for c in columns:
        last, step, n = span[f"{c}\x00last"], span[f"{c}\x00step"], span[f"{c}\x00n"]
        level = levels.get((span["last"], c))
        if last is None or step is None or n < CONTINUED_MIN_PERIODS or level is None or len(level) < 2:
            continue
        near = np.searchsorted(level, last + 3 * step, "right") - np.searchsorted(level, last - 3 * step, "left")
        # the entity's own figure is among them; with several keys tried, no fewer than one other is counted: none
        # lying near among this night's few is no sign that none would (a coincidence's chance is not 0)
        chance *= max(near - 1, 1 if tried > 1 else 0) / (len(level) - 1)
        trail[c] = (float(last), 3 * float(step))
    return trail if trail and chance <= CONTINUED_BY_CHANCE / tried else {}


def _distinct_trails(ends: pl.DataFrame, columns: list[str], levels: dict[tuple[date, str], np.ndarray], *,
                     tried: int) -> dict[int, dict[str, tuple[float, float]]]:
    """`_distinct_trail` of every row of `ends` (`ids_continued`'s keys ending early) at once, by row position,
    only those with a trail: one search of each period's sorted figures per column, not one per key (trial 117:
    15,494 patients' keys ending early, 0.9 s of a check one by one). The same floats, multiplied in the same order."""
    bound = CONTINUED_BY_CHANCE / tried
    at_least = 1 if tried > 1 else 0
    by_period: dict[date, list[int]] = {}
    for at, period in enumerate(ends["last"].to_list()):
        by_period.setdefault(period, []).append(at)
    chance = np.ones(ends.height)
    kept: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for c in columns:
        last = ends[f"{c}\x00last"].cast(pl.Float64).to_numpy(allow_copy=True)  # null: NaN (no NaN is left a value)
        step = ends[f"{c}\x00step"].cast(pl.Float64).to_numpy(allow_copy=True)
        valid = ~np.isnan(last) & ~np.isnan(step) & (ends[f"{c}\x00n"].to_numpy(allow_copy=True)
                                                     >= CONTINUED_MIN_PERIODS)
        for period, positions in by_period.items():
            where = np.asarray(positions)
            level = levels.get((period, c))
            if level is None or len(level) < 2:
                valid[where] = False
                continue
            mine = where[valid[where]]
            if not len(mine):
                continue
            near = (np.searchsorted(level, last[mine] + 3 * step[mine], "right")
                    - np.searchsorted(level, last[mine] - 3 * step[mine], "left"))
            chance[mine] = chance[mine] * (np.maximum(near - 1, at_least) / (len(level) - 1))
        kept[c] = (valid, last, step)
    some = np.zeros(ends.height, bool)
    for valid, _, _ in kept.values():
        some |= valid
    trails = {}
    for at in np.nonzero(some & (chance <= bound))[0].tolist():
        trails[at] = {c: (float(last[at]), 3 * float(step[at])) for c, (valid, last, step) in kept.items()
                      if valid[at]}
    return trails


def _read_as_two(written: str) -> str:
    """The end of a rename's warning: what reading one entity as two costs, and the fix (`written`: what the source
    should hold one of, a `spelling` or a `name`)."""
    return ("each read as an entity of its own with part of the history, no window reaching across the change: "
            f"expected one {written} in the source (a DuckDB `query` can `replace` one with the other), if each is "
            "one entity renamed")


def _spellings(pack: CriteriaPack, history: pl.DataFrame) -> dict[str, list[tuple[date, date, str]]]:
    """The entity keys of `history` by their spelling without spaces, punctuation, case and accents (`_spelt`), each
    with its rows' first and last period: (first, last, key). An events source's periods of no event are its rows
    too (a count of 0, from its first event on): its keys' spans are the periods of their events."""
    several = len(pack.source.entity_columns) > 1
    history = _with_events(history)
    if history.is_empty():
        return {}
    spans = (history.group_by("entity_id").agg(pl.col("period").min().alias("first"),
                                               pl.col("period").max().alias("last")).sort("entity_id"))
    groups: dict[str, list[tuple[date, date, str]]] = {}
    for key, first, last in spans.iter_rows():
        if key is not None and first is not None:
            groups.setdefault(_spelt(key, several), []).append((first, last, str(key)))
    return groups


def _with_events(history: pl.DataFrame) -> pl.DataFrame:
    """`history` without an events source's periods of no event: a count of 0 the source never wrote, from an
    entity's first event on, so a key whose events stopped (renamed, or merged into another) still has rows to the
    latest period, and no key's rows end (trial 95: an inbox's `small / plain` written `small / plain5` from a week
    on, its old key's weeks of zeros to the last, and check said ok). A panel's or a snapshot's rows are its own."""
    return history.filter(pl.col("events_read") > 0) if "events_read" in history.columns else history


def _spelt(key: str, several: bool = False) -> str:
    """A key without its spaces, punctuation, case and accents (what `ids_renamed` compares): its slug without the
    `-` between words (`shapes.entity_slug`: an export that lost its accents writes `Sor-Ostlandet` for
    `Sør-Østlandet`, one region read as two; trial 35: check said ok). A key of `several` columns is folded column
    by column, the columns kept apart (trial 83: districts `3 / 11` and `31 / 1`, two seats, were both `311`). The
    ordinal indicators `º` and `ª`, letters to Unicode, go as the degree sign `°` an export writes for them does
    (trial 115: `Castor n°1` beside `Castor nº1`, read as two with check's ok)."""
    if several:
        return ENTITY_JOINER.join(_spelt(part) for part in str(key).split(ENTITY_JOINER))
    return entity_slug(str(key).translate(_ORDINAL_INDICATORS)).replace("-", "")


_ORDINAL_INDICATORS = str.maketrans({"\u00ba": " ", "\u00aa": " "})
"""`º` and `ª`, which `_spelt` reads as the punctuation they stand beside a number as (`°`)."""


def _clustered(sizes: list[float]) -> bool:
    """Whether ascending typical sizes fall into levels apart, as measures' do (indexes near 1, trade values in
    millions), not along a continuum, as countries' do: the widest step between two neighbours spans at least half
    the whole spread, in orders of magnitude (trial 26: migrants by `[category, area]`, 272 countries from the
    Falklands' 19 to Mexico's 10.6 million, no step wider than a few times, were told 'area' named a measure)."""
    steps = [math.log10(b / a) for a, b in itertools.pairwise(sizes)]
    return bool(steps) and max(steps) >= 0.5 * math.log10(sizes[-1] / sizes[0])


def _determined(parts: list[list[str]], k: int, width: int) -> bool:
    """Whether the entities' ids (split into their `width` key columns) hold one value of column `k` for each value
    of the other columns together: the others determine it, as a country its continent."""
    seen: dict[tuple[str, ...], set[str]] = {}
    for p in parts:
        if len(p) == width:
            seen.setdefault((*p[:k], *p[k + 1:]), set()).add(p[k])
    return all(len(values) == 1 for values in seen.values())
