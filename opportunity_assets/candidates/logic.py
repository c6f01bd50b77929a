"""The scanner: hard filters, data gaps and the cap. It never estimates a number and never ranks.

Pure: takes the source snapshot (already as_of-filtered by the query) and the pack, returns records.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import polars as pl

from opportunity_assets import expressions
from opportunity_assets.analyses.logic import formula_score, formula_scores, undefined_components, why_unscored
from opportunity_assets.candidates.quarantine import (
    bad_cells,
    by_entity,
    duplicated_name,
    joined_reason,
    short_reason,
)
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import format_score
from opportunity_assets.latest import Latest, identical_frames
from opportunity_assets.periods import rows_in_window, window_label
from opportunity_assets.records import Candidate, FilterResult, Refusal, RepeatedEvents
from opportunity_assets.sources.formats import join_label
from opportunity_assets.sources.shapes import ID_TOO_LONG, NOT_COME_YET, cell_columns, entity_slug
from opportunity_assets.sources.spec import EVERY_ENTITY
from opportunity_assets.text import MAX_NAME, clean, markdown
from opportunity_assets.verifications.absorbed import absorbed_events
from opportunity_assets.verifications.copies import copied_figures, scaled_copies
from opportunity_assets.verifications.integrity import MIN_PEERS, night_peers
from opportunity_assets.verifications.proportions import ratios
from opportunity_assets.verifications.series import COUNT_OFFSET, MIN_SAMPLE, MIN_SCALE, on_grid_each

if TYPE_CHECKING:
    from opportunity_assets.sources.snapshot import SourceSnapshot


@dataclass(frozen=True)
class ScanReport:
    """What the night's scan says about itself (run summary, metadata, asset checks)."""

    as_of: date
    anchor_period: date | None
    scanned: int
    failed_filters: int
    passed_filters: int
    """Candidates with no FAIL (PASS or UNCLEAR filters), before the cap."""
    capped: int
    went_on: int
    quarantined: int
    below_minimum: bool
    notes: list[str]
    quarantined_entities: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Per entity with quarantined rows: entity (name), rows, why (the commonest reason, without raw values)."""
    flagged_past_cap: int = 0
    """Candidates with a quarantined row or cell in a metric's reach, or a gap in the cap order's metric, that went
    on although their place was past the cap (never silently capped out). A quarantined row outside every metric
    window changes no metric, so nothing of its place: it is capped like any other."""
    unclear: int = 0
    """Of the candidates that passed the filters, those with a filter UNCLEAR (its metric has no value): none
    FAILed, so they went on, but not every filter passed."""
    flagged_capped: int = 0
    """Flagged candidates past the cap beyond `caps.max_flagged`: capped, each named in the candidates table."""
    best_capped_score: float | None = None
    """The best preliminary score among the candidates the cap cut (None: none cut, or none of them scored)."""
    failed_by_filter: dict[str, int] = dataclasses.field(default_factory=dict)
    """Per hard filter, the candidates it FAILed (a night where few pass says which filter held them back)."""
    unscored_capped: int = 0
    """Candidates the cap cut with no preliminary score (a required input missing or undefined, a formula component
    undefined): placed last by `caps.order_by: score`, and the cap's note names them with why."""
    gone: int = 0
    """Entities with no row, read or refused, in the night's latest `carried_span` periods (`Candidate.gone`):
    counted in `scanned`, never judged; the scan's note names the first few."""
    carried_span: int = 0
    """`CriteriaPack.carried_span`: the number the note on the entities gone writes."""
    judged: int = 0
    """The entities the night judged: those scanned less the ones gone (`failed_filters` + `passed_filters`): the
    number the note on too few passing writes, held here so that the brief's run summary writes only stored ones."""
    shared_id_sets: int = 0
    """Sets of entity keys that share a candidate id: the number the scan's note on many of them writes."""
    shared_ids: dict[str, int] = dataclasses.field(default_factory=dict)
    """Per entity key that shares its candidate id's slug with another (`Austin` and `AUSTIN`), its rows: the numbers
    the scan's note on them writes, held here so that the brief's run summary writes only stored numbers."""


def candidate_id(entity_key: str) -> str:
    """Stable, partition-key-safe id: the key's slug (`shapes.entity_slug`), lowercase, accents dropped, runs of
    anything but letters and digits one `-`."""
    return entity_slug(entity_key)


def _ids(entity_keys: list[str], history: pl.DataFrame) -> tuple[dict[str, str], list[str], dict[str, int]]:
    """Each entity key's candidate id, a note per set of keys that share one (`AUSTIN` and `Austin`: one entity
    spelled two ways, or two entities) and the rows of each such key. The key with the most rows takes the plain id,
    so that the real Austin keeps `austin` when a few rows spell it otherwise (an events source's: the most
    events); the others take `-2`, `-3`, by rows, then key."""
    groups: dict[str, list[str]] = {}
    for key in entity_keys:
        groups.setdefault(candidate_id(key), []).append(key)
    shared = {slug: keys for slug, keys in groups.items() if len(keys) > 1}
    rows: dict[str, int] = {}
    # an events source's keys are counted in events: its panel holds a period of no event after a key's first, so
    # its rows made one sale spelt 'OLD TOWN' 2 "rows" and took the plain id from Old Town's 234 sales (trial 74)
    events = "events_read" in history.columns
    if shared and not history.is_empty():
        wanted = [k for keys in shared.values() for k in keys]
        within = history.filter(pl.col("entity_id").is_in(wanted)).group_by("entity_id")
        counted = within.agg(pl.col("events_read").sum().alias("n")) if events else within.len(name="n")
        rows = {str(k): int(n) for k, n in counted.iter_rows()}
    ids: dict[str, str] = {}
    spelled_sets = []
    used = set(groups)
    for slug, keys in groups.items():
        ranked = sorted(keys, key=lambda k: (-rows.get(k, 0), k))
        ids[ranked[0]] = slug
        for n, key in enumerate(ranked[1:], start=2):
            cid = f"{slug}-{n}"
            while cid in used:  # a key that is itself spelled `austin-2`
                cid += "-x"
            used.add(cid)
            ids[key] = cid
        if len(ranked) > 1:
            # quoted, not repr'd: repr doubles markdown's escape (`'oil\\_brent'`, read as a backslash and a `_`)
            spelled_sets.append(", ".join(f"'{markdown(clean(k))}' ({_counted(rows.get(k, 0), events)}, {ids[k]})"
                                          for k in ranked))
    return ids, _spelling_notes(spelled_sets, shared), {key: rows.get(key, 0) for keys in shared.values()
                                                         for key in keys}


def _counted(n: int, events: bool) -> str:
    """A key's rows as a note on keys sharing an id says them: `24 rows`, or an events source's `1 event`."""
    return f"{n} {'event' if events else 'row'}{'' if n == 1 else 's'}"


SPELLING_NOTES = 3
"""Sets of entity keys sharing an id said one by one; more are one note with the first few (a column whose case
changed in one year, `INBOUND` for `Inbound`, spells every entity two ways: 504 notes stopped the brief at its word
limit and filled check's output)."""


def _spelling_notes(spelled_sets: list[str], shared: dict[str, list[str]]) -> list[str]:
    """The scan's notes on keys sharing an id: one per set, or, beyond `SPELLING_NOTES` sets, one for them all,
    naming how many (the scan report's `shared_id_sets`, a stored number) and the first few."""
    if len(spelled_sets) <= SPELLING_NOTES:
        return [f"entity keys {spelled} share an id: read as {len(keys)} entities (if they are one, the source "
                "should spell it one way)" for spelled, keys in zip(spelled_sets, shared.values(), strict=True)]
    first = "; ".join(spelled_sets[:SPELLING_NOTES])
    return [f"entity keys share an id in {len(spelled_sets)} sets, each key read as an entity of its own (e.g. "
            f"{first}; and others): if each set is one entity, the source should spell it one way (a column whose "
            "case or spelling changed mid-history?)"]


def _gap(pack: CriteriaPack, metric: str, rows: list[dict[str, Any]], labels: Mapping[str, str],
         values: dict[str, float | None]) -> str:
    """Why `metric` has no value for a candidate of `rows` (its rows in the windows). `labels`: each metric's
    window as the night's periods (`window_label`), said once a night, not once a gap (a sparse source of 135,800
    entities has 300,000 gaps)."""
    spec = pack.metrics[metric]
    label = labels[metric]
    if spec.agg == "derived":  # the input that is a gap, or why its arithmetic has no value
        why = expressions.why_undefined(spec.parsed, values)
        if why is not None and why.missing is None:
            return f"{metric}: undefined: {why}"
        return f"{metric}: no value: its input {why.missing} is a gap" if why is not None else \
            f"{metric}: no value for {spec.expression}"
    if spec.agg == "age_days":
        return f"{metric}: no published {spec.column} value"
    if spec.agg == "coverage":
        return f"{metric}: no rows in {label}"
    filled = sum(1 for row in rows_in_window(rows, spec.window) if row.get(spec.value_column) is not None)
    length = spec.window[1] - spec.window[0] + 1
    if pack.source.shape == "events" and pack.source.events_from is None and rows and \
            max(int(r["periods_ago"]) for r in rows) < spec.window[1]:
        # (trial 78: a region's 30 years of earthquakes a gap, its first quake inside them, told only "filled in")
        first = date.fromisoformat(min(str(r["period"]) for r in rows))
        return (f"{metric}: {filled} of {pack.grain.count(length)} of {spec.column} known in {label}: nothing is "
                f"known of the entity before its first event, in {pack.grain.label(first)} (`source.events_from` "
                "says from when the source records every entity's events, each period without one a 0)")
    return f"{metric}: {filled} of {pack.grain.count(length)} of {spec.column} filled in {label}; " \
           f"needs {spec.required_rows}"


def _fed(pack: CriteriaPack, cells: set[str]) -> set[str]:
    """The panel columns refused cells leave unknown: the cells' own, or for events the aggregates that read them
    (an amount that is no number leaves the period's sum and average unknown; its count still stands)."""
    if pack.source.shape != "events":
        return cells
    return (cells & set(pack.columns)) | {name for name, a in pack.source.aggregates.items()
                                          if a.column in cells or any(w.column in cells for w in a.where)}


def _refused_cells(pack: CriteriaPack, reason: str, columns: list[str]) -> list[str]:
    """The cells of `columns` a quarantine reason refuses: its bad cells, or the one value a long table's duplicated
    key refuses (`source.long`: a name sent twice); none, the whole row. A joined table's refused row holds its own
    columns only, so it refuses those (trial 25: a joined table's period sent twice left the main source's every
    metric of that period unknown)."""
    names = [c for spec in (pack.source, *pack.source.join) if spec.long is not None for c in spec.columns]
    name = duplicated_name(reason, names)
    if name is not None:
        return [name]
    joined = joined_reason(reason)
    own = next((j.columns for j in pack.source.join if joined is not None and joined[0] == f"join {j.table}"), None)
    if own is None:
        return list(bad_cells(reason, columns))
    return list(bad_cells(reason, [c for c in columns if c in own])) or [c for c in columns if c in own]


def _own_columns(pack: CriteriaPack) -> set[str] | None:
    """The panel columns a main source's row refused whole leaves unknown in a period the entity's panel still has
    (an events source's other events of that period): the main source's own, not its joined tables', whose rows
    of that period were read and joined as usual (trial 40: a weather line with a field too many left the joined
    yearly population unknown, its filter UNCLEAR); None, every column, where no table is joined."""
    joined = {c for spec in pack.source.join for c in spec.columns}
    return set(pack.columns) - joined if joined else None


def _quarantined_metrics(pack: CriteriaPack, refused: list[dict[str, Any]], rows: list[dict[str, Any]],
                         anchor: date | None) -> dict[str, str]:
    """The aggregated metrics a refused row or cell of the entity leaves unknown, each with its gap line: a cell of
    the metric's column in its window (a whole row: every column; a row of unknown period: any window), or, for
    `age_days`, newer than the column's latest value; not a vintage dated after today of a period the night reads
    (`shapes.NOT_COME_YET`). The others keep their values."""
    if not refused:
        return {}
    events = cell_columns(pack.source) if pack.source.shape == "events" else []
    read = {row["periods_ago"] for row in rows}
    judged = []  # per refused row: the panel columns it leaves unknown (None: all), its periods back (None: unknown)
    for r in refused:
        period = r.get("period")
        if period is not None and anchor is not None and period > anchor:
            continue  # after the night's latest period: in no window
        back = pack.grain.between(period, anchor) if period is not None and anchor is not None else None
        if back in read and NOT_COME_YET in str(r["reason"]):
            # a vintage dated after today, none any night has known: the one published before it stands (trial 61:
            # a 2018 revision dated 2031 left 2018's figure, published in 2019, a gap on the night of 2019-12-31)
            continue
        cells = _fed(pack, set(_refused_cells(pack, str(r["reason"]), [*pack.columns, *events]))) or (
            _own_columns(pack) if back in read else None)
        judged.append((r, cells, back))
    out: dict[str, str] = {}
    for name, spec in pack.metrics.items():
        if spec.agg == "derived":
            continue
        columns = set(spec.columns or []) if spec.agg == "coverage" else {spec.column or ""}
        latest = None if spec.agg != "age_days" else min(
            (row["periods_ago"] for row in rows if row.get(spec.value_column) is not None), default=None)
        for r, cells, back in judged:
            if cells is not None and not cells & columns:
                continue
            if back is not None:
                if spec.agg == "age_days":
                    if latest is not None and back >= latest:  # not newer than the latest value
                        continue
                elif not spec.window[0] <= back <= spec.window[1]:
                    continue
            out[name] = (f"{name}: unknown: source row {r['source_row']} is quarantined "
                         f"({short_reason(str(r['reason']))}), in its reach")
            break
    return out


def _refusals(pack: CriteriaPack, refused: list[dict[str, Any]], rows: list[dict[str, Any]],
              anchor: date | None) -> list[Refusal]:
    """The entity's refused rows with a period in the metrics' reach (0 to the widest window back), oldest first;
    not a vintage dated after today of a period the night reads (`shapes.NOT_COME_YET`), which refuses nothing the
    night knows: the vintage published before it stands, as in `_quarantined_metrics` (trial 138: a revision dated
    2030 had the skeptic's `refused` check doubt an act-on cow on a night of 1989, "the whole row in 1989-W10
    refused when read", over a figure no night could know)."""
    if anchor is None:
        return []
    read = {row["periods_ago"] for row in rows}
    out = []
    for r in refused:
        period = r.get("period")
        if period is None or not 0 <= (back := pack.grain.between(period, anchor)) <= pack.max_window:
            continue
        reason = str(r["reason"])
        if back in read and NOT_COME_YET in reason:
            continue
        out.append((period, Refusal(period=pack.grain.label(period),
                                    columns=_refused_cells(pack, reason, pack.columns), why=short_reason(reason))))
    return [refusal for _, refusal in sorted(out, key=lambda item: item[0])]


EVERY_ENTITY_ID = entity_slug(EVERY_ENTITY)
"""The entity id of a refused row of a table joined to every entity (`every_entity: true`)."""


def _refused_for_every_entity(pack: CriteriaPack, refused: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The refused rows of the tables joined to every entity: each is every entity's, its columns in its period
    unknown for all of them, the gap naming the row (trial 101: a rate refused as no number left every entity's
    average of it told "2 of 3 months of rate filled", though the rate was in the file, and the run summary named an
    entity `every-entity`)."""
    return refused.get(EVERY_ENTITY_ID, []) if any(pack.source.joins_every_entity) else []


def _undefined_components(pack: CriteriaPack, values: dict[str, float | None]) -> list[str]:
    """A gap line per formula component with no value although every required input has one (a division by zero
    for this candidate only): its preliminary score is a gap too, said in its record."""
    return [f"formula component {name}: undefined: {why}" for name, why in undefined_components(pack, values)]


def _refused_whole(pack: CriteriaPack, metrics: pl.DataFrame, bad_rows: list[dict[str, Any]]) -> list[str]:
    """The main source's entity keys whose every row the night reads is refused, so that the panel has no row of
    them: each is still a candidate, named by its key, its metrics gaps that name the refused rows and its filters
    UNCLEAR (seed 000: include the candidate and flag the filter UNCLEAR), never left out without a line (trial 89:
    two states whose every row was a duplicated key were gone from the night, 46 entities scanned of check's 48).
    A joined table's refused rows make no entity of their own (its ids may be ones the source has none of), nor
    does a row refused for its id itself (longer than `MAX_NAME`: no candidate's id or partition key can hold it),
    nor a lone line of no period (trial 118: a note below a CSV's table, split at its commas, was a candidate named
    by its second field). Two or more rows of one key are an entity's, dated or not: a market whose every row is
    dated `2017-13` is still a candidate, UNCLEAR."""
    joined = tuple(f"{join_label(pack, j)}: " for j in pack.source.join)
    known = set(metrics["entity_id"].to_list())
    rows = Counter(str(r["entity_id"]) for r in bad_rows if r.get("entity_id"))
    return sorted({str(r["entity_id"]) for r in bad_rows if r.get("entity_id") and str(r["entity_id"]) not in known
                   and (r.get("period") is not None or rows[str(r["entity_id"])] > 1)
                   and len(str(r["entity_id"])) <= MAX_NAME and not str(r.get("reason") or "").startswith(
                       (ID_TOO_LONG, *joined))})


def _carried_entities(pack: CriteriaPack, anchor: date | None, history: pl.DataFrame,
                      bad_rows: list[dict[str, Any]]) -> set[str] | None:
    """The entity keys with a row in the last `CriteriaPack.carried_span` periods (an events source's: an event;
    its panel holds every entity's every period, a silence summed as 0), or a refused one there (or of no period):
    the others the source stopped recording. None on a night with no published period (no entity is told from
    another)."""
    if anchor is None:
        return None
    span = pack.carried_span
    start = pack.grain.back(anchor, span - 1)
    refused = {str(r["entity_id"]) for r in bad_rows
               if r.get("entity_id") and (r.get("period") is None or r["period"] >= start)}
    recent = pl.col("periods_ago") < span
    if pack.source.shape == "events" and pack.source.events_from is None:  # (else every period of it is recorded)
        recent = recent & (pl.col("events_read") > 0)
    return set(history.filter(recent)["entity_id"].unique().to_list()) | refused


def _record(pack: CriteriaPack) -> str:
    """What an entity needs in the span to be judged: a row, or an events source's event (`_carried_entities`)."""
    return "event" if pack.source.shape == "events" else "row"


def gone_gap(pack: CriteriaPack, anchor: date | None) -> str:
    """Why an entity the source stopped carrying is not judged (`Candidate.gone`): its one data gap, and its reason
    for not going on."""
    span = pack.carried_span
    return (f"no {_record(pack)} in {window_label(anchor, (0, span - 1), pack.grain)}, the night's latest "
            f"{pack.grain.count(span)} (its metrics' windows and a year before them): the source no longer records "
            "it; not judged")


def gone_note(pack: CriteriaPack, ids: list[str], names: dict[str, str], *, ahead: bool = False) -> str:
    """The scan's note on the entities gone (`ids`, at least one; `names` by id), the first few named; `ahead`: as
    check says it before the night. The periods by count alone: a year grain's bare years are numbers the brief
    may not write unstored (`ScanReport.carried_span` stores the count)."""
    one = len(ids) == 1
    them = "it" if one else "them"
    judged = f"the night would not judge {them}" if ahead else f"{'it was' if one else 'they were'} not judged"
    named = _first_named(ids, names)
    if ahead:
        named = named.replace("the night's candidates table names each", "its candidates table will name each")
    return (f"{len(ids)} {'entity has' if one else 'entities have'} no {_record(pack)} in the night's latest "
            f"{pack.grain.count(pack.carried_span)} (the metrics' windows and a year before them): the source no "
            f"longer records {them}, and {judged}: {named}")


def _gone(pack: CriteriaPack, as_of: date, cid: str, row: dict[str, Any], anchor: date | None,
          gap: str | None = None) -> Candidate:
    """The record of an entity the source no longer records (`Candidate.gone`): its metrics (a panel's all gaps, an
    events source's counts 0) and filters as they read, one gap saying why, never going on (trial 55: 56 baseball
    clubs gone for up to a century went on as UNCLEAR every night the cap had room, named as gaps in every brief).
    `gap`: `gone_gap(pack, anchor)`, the same for every such entity of a night, worked out once (trial 117: 14,337
    patients gone, 0.6 s of a check saying it again)."""
    values = {name: row[name] for name in pack.metrics}
    return Candidate(as_of=as_of, id=cid, name=clean(row["entity_name"] or "") or clean(row["entity_id"]) or cid,
                     raw_data=[], source=pack.source.table, metrics=values, anchor_period=anchor,
                     data_gaps=[gap if gap is not None else gone_gap(pack, anchor)], filters=_judge(pack, values),
                     went_on=False, gone=True)


def _judge(pack: CriteriaPack, metrics: dict[str, float | None]) -> dict[str, FilterResult]:
    results = {}
    for hard_filter in pack.hard_filters:
        value = metrics.get(hard_filter.metric)
        if value is None:
            results[hard_filter.name] = FilterResult.UNCLEAR  # a missing input is never a PASS
        else:
            results[hard_filter.name] = FilterResult.PASS if hard_filter.holds(value) else FilterResult.FAIL
    return results


def _pairs(history: pl.DataFrame, columns: list[str], back: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each column's values `back + 1` and `back` periods before the night's latest, of every entity with both
    periods: (before, now), one entity a position."""
    before = [f"__before_{i}" for i in range(len(columns))]  # internal names: no source column starts with `__`
    pairs = history.filter(pl.col("periods_ago") == back).select("entity_id", *columns).join(
        history.filter(pl.col("periods_ago") == back + 1).select(
            "entity_id", *(pl.col(c).alias(b) for c, b in zip(columns, before, strict=True))), on="entity_id")

    def values(name: str) -> np.ndarray:
        return pairs[name].cast(pl.Float64).fill_null(float("nan")).to_numpy()

    return {c: values(b) for c, b in zip(columns, before, strict=True)}, {c: values(c) for c in columns}


def _peers(history: pl.DataFrame, columns: list[str], sizeless: set[str]
           ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, dict[str, float]]]]:
    """The night's cross-section (`integrity.night_peers`) over every entity with both latest periods, and the pairs
    of columns they hold in proportion (`proportions.ratios`; `sizeless` columns, a share or a signed one, in none)."""
    before, now = _pairs(history, columns, 0)
    return night_peers(before, now), ratios(now, sizeless)


TYPICAL_SAMPLE = 1_000
"""Most entities a median across them is taken of (`_sampled`)."""


def _sampled(history: pl.DataFrame) -> pl.DataFrame:
    """The history of a fixed sample of `TYPICAL_SAMPLE` entities (by the id's hash), or all where there are no more:
    a median across entities, or a value most of them hold, is told by a thousand (a wide night has 10,718)."""
    ids = history["entity_id"].unique()
    if len(ids) <= TYPICAL_SAMPLE:
        return history
    ids = pl.DataFrame({"id": ids}).sort(pl.col("id").hash(seed=0)).head(TYPICAL_SAMPLE)["id"]
    return history.filter(pl.col("entity_id").is_in(ids.implode()))


def _shared_changes(history: pl.DataFrame, columns: list[str], periods: int, signed: set[str],
                    shares: frozenset[str] = frozenset()
                    ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """`Candidate.shared_changes` and `Candidate.shared_spreads`: the median of the scanned entities' changes into
    each of the latest `periods` periods (the verifier's reach), and their robust spread about it, where `MIN_PEERS`
    or more had one: the judged periods, and the history's, which tell what a usual year's shared move is. Each
    change on its entity's own scale (`_log_level`, as `series.log_level` takes the entity's own), between
    consecutive kept periods, every period's median in one pass (a daily source has thousands of periods), of
    `_sampled` entities; only rows known on the night are in the scan's history."""
    ordered = _sampled(history).filter(pl.col("periods_ago") <= periods).sort("entity_id", "periods_ago",
                                                                    descending=[False, True])
    levels = ordered.select("entity_id", "periods_ago",
                            *(_log_level(c, c in signed, c in shares).alias(c) for c in columns))
    consecutive = pl.col("periods_ago").shift(1).over("entity_id") == pl.col("periods_ago") + 1
    changes = levels.select("periods_ago", *(
        pl.when(consecutive).then(pl.col(c) - pl.col(c).shift(1).over("entity_id")).fill_nan(None).alias(c)
        for c in columns))
    changes = changes.with_columns(pl.when(pl.col(c).is_finite()).then(pl.col(c)).alias(c) for c in columns)
    cross = changes.filter(pl.col("periods_ago") < periods).group_by("periods_ago").agg(
        *(pl.col(c).median().alias(c) for c in columns), *(pl.col(c).count().alias(f"__n_{c}") for c in columns),
        *((pl.col(c) - pl.col(c).median()).abs().median().alias(f"__mad_{c}") for c in columns))
    shared: dict[str, dict[str, float]] = {}
    spreads: dict[str, dict[str, float]] = {}
    for row in cross.sort("periods_ago").iter_rows(named=True):
        for column in columns:
            if row[f"__n_{column}"] >= MIN_PEERS and row[column] is not None:
                shared.setdefault(column, {})[str(row["periods_ago"])] = float(row[column])
                spreads.setdefault(column, {})[str(row["periods_ago"])] = 1.4826 * float(row[f"__mad_{column}"])
    return shared, spreads


def _shared_levels(history: pl.DataFrame, columns: list[str], periods: int) -> dict[str, dict[str, float]]:
    """`Candidate.shared_levels`: per column, the value more than half the scanned entities hold alike in each of the
    latest `periods` periods, where `MIN_PEERS` or more have one (a national index repeated in every state's
    rows), by periods back, of `_sampled` entities; none for a period whose entities' values differ."""
    recent = _sampled(history).filter(pl.col("periods_ago") < periods)
    shared: dict[str, dict[str, float]] = {}
    for column in columns:
        value = pl.col(column).cast(pl.Float64).fill_nan(None)
        mode = pl.col("v").mode().first()
        held = recent.select("periods_ago", value.alias("v")).drop_nulls().group_by("periods_ago").agg(
            mode.alias("mode"), pl.len().alias("count"), (pl.col("v") == mode).sum().alias("held"))
        kept = held.filter((pl.col("count") >= MIN_PEERS) & (2 * pl.col("held") > pl.col("count")))
        for back, mode in kept.select("periods_ago", "mode").iter_rows():
            shared.setdefault(column, {})[str(back)] = float(mode)
    return shared


def _shared_decimals(history: pl.DataFrame, columns: list[str], periods: int, most: int) -> dict[str, dict[str, int]]:
    """`Candidate.shared_decimals`: per column, the decimals (0 to `most`, `most + 1` for more) the median of the
    scanned entities' figures is written with in each of the latest `periods` periods, where `MIN_PEERS` or more have
    one, by periods back, of `_sampled` entities: a figure is written with the fewest decimals that put it on their
    grid (`series.on_grid_each`, as `regularity.precision` reads the entity's own)."""
    recent = _sampled(history).filter(pl.col("periods_ago") < periods)
    shared: dict[str, dict[str, int]] = {}
    for column in columns:
        values = recent[column].cast(pl.Float64).to_numpy()
        written = sum((~on_grid_each(values, 10.0 ** -places)).astype(int) for places in range(most + 1))
        figures = pl.DataFrame({"periods_ago": recent["periods_ago"], "d": written}).filter(np.isfinite(values))
        held = figures.group_by("periods_ago").agg(pl.col("d").median().alias("d"), pl.len().alias("count"))
        for back, places in held.filter(pl.col("count") >= MIN_PEERS).select("periods_ago", "d").iter_rows():
            shared.setdefault(column, {})[str(back)] = int(places)
    return shared


def _log_level(column: str, signed: bool, share: bool = False) -> pl.Expr:
    """`series.log_level` of each entity's values of a column, within each entity: log(x + 1% of its median
    positive value, at least half a unit for a count), or asinh(x / its median size) for a column that is `signed`
    or goes below zero; for an events source's `share` whose values stay within [0, 1], arcsin(√x), the scale its
    changes are judged on (`series.share_changes`)."""
    value = pl.col(column).cast(pl.Float64)
    if share:
        within = (value.min().over("entity_id") >= 0) & (value.max().over("entity_id") <= 1)
        return pl.when(within).then(value.sqrt().arcsin()).otherwise(_log_level(column, signed))
    size = value.abs().filter(value != 0).median().over("entity_id")
    offset = (0.01 * value.filter(value > 0).median()).fill_null(1.0)
    whole = (value.drop_nulls() == value.drop_nulls().round(0)).all()
    offset = pl.when(whole).then(pl.max_horizontal(offset, pl.lit(COUNT_OFFSET))).otherwise(offset).over("entity_id")
    crosses = pl.lit(signed) | (value.min().over("entity_id") < 0)
    with_offset = pl.when(value + offset > 0).then((value + offset).log())
    return pl.when(crosses).then((value / size).arcsinh()).otherwise(with_offset)


def _typical_scales(history: pl.DataFrame, columns: list[str], signed: set[str],
                    shares: frozenset[str] = frozenset()) -> dict[str, float]:
    """`Candidate.typical_scales`: per column, the median of the scanned entities' own robust scales of their
    period-on-period changes (on `series.log_level`'s scale, `signed` as the pack declares, between consecutive
    kept periods), of the entities with `MIN_SAMPLE` changes or more, where `MIN_PEERS` or more had them: each
    entity's own noise, not one period's spread across entities (which one entity's broken latest value widens on
    a panel of eight, and a season every entity shares narrows). `shares`: an events source's `share` columns
    (`_log_level`)."""
    out: dict[str, float] = {}
    ordered = _sampled(history).sort("entity_id", "periods_ago", descending=[False, True])
    consecutive = pl.col("periods_ago").shift(1).over("entity_id") == pl.col("periods_ago") + 1
    for column in columns:
        level = ordered.select("entity_id", "periods_ago",
                               _log_level(column, column in signed, column in shares).alias("level"))
        changes = level.select("entity_id", pl.when(consecutive).then(
            pl.col("level") - pl.col("level").shift(1).over("entity_id")).alias("change"))
        changes = changes.filter(pl.col("change").is_finite())
        spread = (changes.with_columns((pl.col("change") - pl.col("change").median().over("entity_id")).abs()
                                       .alias("off"))
                  .group_by("entity_id").agg(pl.col("off").median().alias("mad"), pl.len().alias("count"))
                  .filter(pl.col("count") >= MIN_SAMPLE))
        if spread.height >= MIN_PEERS:
            out[column] = max(1.4826 * float(spread["mad"].median()), MIN_SCALE)  # type: ignore[arg-type]
    return out


def _raw_rows(history: pl.DataFrame, columns: list[str]) -> dict[str, list[dict[str, Any]]]:
    """History rows as records, per entity key, oldest first (built in polars: a wide night has millions)."""
    if history.is_empty():
        return {}
    frame = history.select("entity_id", pl.col("period").cast(pl.Utf8), pl.col("published_at").cast(pl.Utf8),
                           "periods_ago", "source_row", *columns)
    by_entity: dict[str, list[dict[str, Any]]] = {}
    for row in frame.to_dicts():
        by_entity.setdefault(row.pop("entity_id"), []).append(row)
    return by_entity


def _repeated_events(pack: CriteriaPack, history: pl.DataFrame, going: set[str]) -> dict[str, list[RepeatedEvents]]:
    """Per entity going on, an events source's periods with a row: its rows and its copies (`shapes.EVENTS_REPEATED`),
    oldest first; none for a panel or a snapshot."""
    if "events_repeated" not in history.columns:
        return {}
    frame = history.filter(pl.col("entity_id").is_in(sorted(going)) & (pl.col("events_read") > 0)) \
        .sort("entity_id", "period").select("entity_id", "period", "events_read", "events_repeated")
    out: dict[str, list[RepeatedEvents]] = {}
    for entity, period, events, repeated in frame.iter_rows():
        out.setdefault(entity, []).append(RepeatedEvents(period=pack.grain.label(period), events=int(events),
                                                         repeated=int(repeated)))
    return out


def _over_remaining_rows(pack: CriteriaPack, candidate: Candidate, metric: str) -> float | None:
    """The metric over the window's filled rows only (a sum scaled to the whole window): the place in the cap
    order of a candidate whose value is a gap because some of its rows were quarantined. Ordering only: it is
    never a metric, an input or a number anyone reads."""
    spec = pack.metrics[metric]
    if spec.agg == "derived":
        inputs = {name: candidate.metrics.get(name) if candidate.metrics.get(name) is not None
                  else _over_remaining_rows(pack, candidate, name) for name in pack.base_metrics(metric)}
        return pack.with_derived(inputs).get(metric)
    if spec.agg in ("coverage", "age_days"):
        return candidate.metrics.get(metric)
    cells = sorted((int(r["periods_ago"]), float(r[spec.value_column]))
                   for r in rows_in_window(candidate.raw_data, spec.window) if r.get(spec.value_column) is not None)
    if not cells:
        return None
    values = [v for _, v in cells]
    length = spec.window[1] - spec.window[0] + 1
    return {"sum": sum(values) / len(values) * length, "avg": sum(values) / len(values), "min": min(values),
            "max": max(values), "last": cells[0][1]}[spec.agg]


def _cap_value(pack: CriteriaPack, candidate: Candidate, flagged: set[str]) -> float | None:
    """What the cap orders by, best first, for one candidate: its preliminary score, or the `order_by` metric
    (negated when ascending). A flagged candidate's gap in that metric, or in the formula's inputs, is filled from
    its remaining rows, so its gap does not move anyone else."""
    if pack.caps.order_by == "score":
        if candidate.preliminary_score is not None or candidate.id not in flagged:
            return candidate.preliminary_score
        filled = {name: candidate.metrics.get(name) if candidate.metrics.get(name) is not None
                  else _over_remaining_rows(pack, candidate, name) for name in pack.required_inputs}
        return formula_score(pack, filled)
    assert pack.caps.order_by is not None
    value = candidate.metrics.get(pack.caps.order_by)
    if value is None and candidate.id in flagged:
        value = _over_remaining_rows(pack, candidate, pack.caps.order_by)
    if value is None:
        return None
    return value if pack.caps.descending else -value


def _cap_key(pack: CriteriaPack, candidate: Candidate, flagged: set[str]) -> tuple[int, float, str]:
    """Documented cap order: `caps.order_by` best first, then id; no value at all, last."""
    if pack.caps.order_by is None:
        return (0, 0.0, candidate.id)
    value = _cap_value(pack, candidate, flagged)
    return (1, 0.0, candidate.id) if value is None else (0, -value, candidate.id)


SHOWN_FLAGGED = 5
"""Flagged candidates past the cap that its notes name; the count says how many in all."""


T = TypeVar("T")

OTHERS_NAMED = " and others (the night's candidates table names each)"
"""What a note says of the candidates it does not name (`first_named`)."""


def first_named(items: Sequence[T], write: Callable[[T], str], shown: int, more: str = OTHERS_NAMED) -> str:
    """The first `shown` of `items`, each as `write` puts it (Markdown), and `more` pointing to the rest, never
    counted (every number in the brief is one the store holds): all of them where only one would be left, which
    "others" would misname (trial 47: "HI, IA, RI and others" for four, one more)."""
    named = len(items) if len(items) <= shown + 1 else shown
    return ", ".join(write(item) for item in items[:named]) + (more if len(items) > named else "")


def _first_named(ids: list[str], names: dict[str, str]) -> str:
    """The first `SHOWN_FLAGGED` of `ids` by name (`first_named`)."""
    return first_named(ids, lambda cid: markdown(names[cid]), SHOWN_FLAGGED)


SHOWN_UNSCORED = 3
"""Candidates cut with no preliminary score that the cap's note names, with why; its count says how many in all."""


def _unscored_note(pack: CriteriaPack, unscored: list[Candidate]) -> str:
    """The cap note's tail on the candidates it cut with no preliminary score: how many, and the first few by id,
    each with why (`why_unscored`: no constant of the pack, no value; the brief's numbers are checked)."""
    if not unscored:
        return ""
    named = first_named(unscored, lambda c: f"{markdown(c.name)} ({', '.join(why_unscored(pack, c.metrics))})",
                        SHOWN_UNSCORED, " and others (the night's candidates table gives each one's reason)")
    return f"; {len(unscored)} of them with no preliminary score, so no place in that order, placed last: {named}"


_LAST: Latest[tuple[list[Candidate], ScanReport]] = Latest(identical_frames)
"""The process's latest scan, by its inputs (the frames by identity, held here so no other frame takes their id):
`opportunity run` checks the night, then runs it, on the same snapshot; a wide night need not scan twice."""


def scan(pack: CriteriaPack, as_of: date, anchor: date | None, metrics: pl.DataFrame, history: pl.DataFrame,
         quarantined: pl.DataFrame | None = None, *, window_rows: bool = False,
         before_own: pl.DataFrame | None = None) -> tuple[list[Candidate], ScanReport]:
    """`quarantined`: the source's quarantine list (source_row, entity_id, period, reason), if any. A candidate
    going on carries its rows (`Candidate.raw_data`); the others carry none, unless `window_rows` (the replay of
    outcomes reads every candidate's windows): a wide night would hold fifteen rows of ten thousand candidates
    for nothing. `before_own`: the rows of a series joined to every entity before an entity's own first row
    (`SourceSnapshot.before_own`), which its metrics read and its rows carry. Pure (the records are frozen): the
    latest result is kept and given again for the same inputs."""
    key = (pack, as_of, anchor, metrics, history, quarantined, window_rows, before_own)
    found, report = _LAST.get(key) or _LAST.put(key, _scan(pack, as_of, anchor, metrics, history, quarantined,
                                                           window_rows, before_own))
    return list(found), report


def scan_read(pack: CriteriaPack, as_of: date, read: SourceSnapshot) -> tuple[list[Candidate], ScanReport]:
    """`scan` over a night's read of the source: its anchor, metrics, history, quarantine and the rows a series
    joined to every entity adds before an entity's own (`SourceSnapshot.before_own`)."""
    return scan(pack, as_of, read.anchor_period, read.metrics, read.history, read.quarantined,
                before_own=read.before_own)


def scan_aside(pack: CriteriaPack, as_of: date, anchor: date | None, metrics: pl.DataFrame, history: pl.DataFrame,
               quarantined: pl.DataFrame | None = None, before_own: pl.DataFrame | None = None) -> list[Candidate]:
    """The candidates of a night read beside the one a command runs (`check`'s earlier nights), leaving the kept
    latest scan in place: the night's own scan step is still given the check's."""
    return _scan(pack, as_of, anchor, metrics, history, quarantined, False, before_own)[0]


def _rows_of(history: pl.DataFrame, before_own: pl.DataFrame | None, keep: pl.Expr) -> pl.DataFrame:
    """The history rows `keep` selects, with those a series joined to every entity adds before each entity's own
    first row that it selects too, in order (entity, period): candidates' rows, as their metrics read them."""
    rows = history.filter(keep)
    if before_own is None or before_own.is_empty():
        return rows
    return pl.concat([rows, before_own.select(history.columns).filter(keep)]).sort("entity_id", "period")


def _scan(pack: CriteriaPack, as_of: date, anchor: date | None, metrics: pl.DataFrame, history: pl.DataFrame,
          quarantined: pl.DataFrame | None, window_rows: bool, before_own: pl.DataFrame | None
          ) -> tuple[list[Candidate], ScanReport]:
    # The rows of the metric windows are read for a candidate with a gap (its gaps are told from them) or with
    # quarantined rows (its place in the cap order comes from its remaining rows), and for every one if asked; one
    # going on gets its whole history, for the verifier (built after the cap: a wide night has millions).
    bad_rows = quarantined.to_dicts() if quarantined is not None else []
    needed = metrics.filter(pl.any_horizontal(pl.col(list(pack.metrics)).is_null()))["entity_id"].to_list()
    needed += [str(r["entity_id"]) for r in bad_rows if r.get("entity_id")]
    in_windows = pl.col("periods_ago") <= pack.max_window
    windows = history.filter(in_windows)
    raw = _raw_rows(_rows_of(history, before_own, in_windows if window_rows
                             else in_windows & pl.col("entity_id").is_in(needed)), pack.columns)
    peers, proportions = _peers(windows, pack.columns,
                                set(pack.source.signed_panel_columns) | set(pack.source.share_columns))
    judged: list[Candidate] = []
    keys: dict[str, str] = {}
    """Candidate id -> the source's entity key."""
    bad: dict[str, list[dict[str, Any]]] = {}
    bad_items: dict[str, list[dict[str, Any]]] = {}
    for r in bad_rows:
        if r.get("entity_id"):
            bad_items.setdefault(str(r["entity_id"]), []).append(r)
    for b in by_entity(bad_rows, {}):  # by entity key here; named for the report below
        bad.setdefault(b["entity"], []).append(b)
    everyones = _refused_for_every_entity(pack, bad_items)
    refused = _refused_whole(pack, metrics, bad_rows)
    if refused:
        metrics = pl.concat([metrics, pl.DataFrame({"entity_id": refused, "entity_name": refused},
                                                   schema={"entity_id": pl.Utf8, "entity_name": pl.Utf8})],
                            how="diagonal_relaxed")
    ordered = metrics.sort("entity_id")
    scores = formula_scores(pack, {name: ordered[name].to_list() for name in pack.required_inputs})
    ids, spellings, shared_ids = _ids(ordered["entity_id"].to_list(), history)
    reached: set[str] = set()
    """Candidates with a quarantined row or cell in a metric's reach (`_quarantined_metrics`)."""
    grain = pack.grain
    labels = {name: window_label(anchor, spec.window, grain) for name, spec in pack.metrics.items()}
    carrying = _carried_entities(pack, anchor, history, bad_rows)
    gone_reason = gone_gap(pack, anchor) if carrying is not None else None
    for row, score in zip(ordered.iter_rows(named=True), scores, strict=True):
        cid = ids[row["entity_id"]]
        keys[cid] = row["entity_id"]
        values = {name: row[name] for name in pack.metrics}
        if carrying is not None and row["entity_id"] not in carrying:
            judged.append(_gone(pack, as_of, cid, row, anchor, gone_reason))
            continue
        rows = raw.get(row["entity_id"], [])
        mine = bad_items.get(row["entity_id"], [])
        own = mine + everyones
        unknown = _quarantined_metrics(pack, own, rows, anchor)
        if unknown:  # a refused row or cell in a metric's reach: its value is not known, never a FAIL
            if not everyones or _quarantined_metrics(pack, mine, rows, anchor):
                reached.add(cid)  # (a row refused for every entity singles none out: no place past the cap)
            values = pack.with_derived({n: None if n in unknown else v for n, v in values.items()
                                        if pack.metrics[n].agg != "derived"})
        filters = _judge(pack, values)
        judged.append(Candidate(
            as_of=as_of, id=cid, name=clean(row["entity_name"] or "") or clean(row["entity_id"]) or cid, raw_data=rows,
            source=pack.source.table, metrics=values, anchor_period=anchor,
            data_gaps=[unknown[name] if name in unknown else _gap(pack, name, rows, labels, values)
                       for name, value in values.items() if value is None]
            + (_undefined_components(pack, values) if score is None else [])
            + [f"{b['rows']} source row(s) quarantined ({b['why']})" for b in bad.get(row["entity_id"], [])],
            filters=filters, went_on=FilterResult.FAIL not in filters.values(),
            preliminary_score=score, refused=_refusals(pack, own, rows, anchor),
        ))

    # A gap in the cap order's metric among an entity's rows in reach flags it; an entity with no row in the windows
    # (one a source stopped carrying lately; those gone longer are not judged: `_gone`) has no value to place it by,
    # and is placed last like any other (trial 40: baseball clubs renamed decades ago went on past the cap every
    # night, INSUFFICIENT_DATA).
    order_gap = {c.id for c in judged if pack.caps.order_by not in (None, "score")
                 and c.metrics.get(pack.caps.order_by) is None and raw.get(keys[c.id])}
    # Only a quarantined row or cell in a metric's reach can have moved a candidate's place (it made that metric a
    # gap); one outside every window changed nothing the cap reads, so its candidate is placed and capped as on
    # clean data (a daily source's bad rows ten years back must not let every such entity past the cap).
    flagged = reached | order_gap
    passing = sorted((c for c in judged if c.went_on), key=lambda c: _cap_key(pack, c, flagged))
    past_cap = [c.id for c in passing[pack.caps.max_candidates:]]
    # One entity's bad rows never move another's route: a flagged candidate (quarantined rows in reach, or a gap in
    # the cap order's metric) keeps its place by its remaining rows and is not capped out; past the cap it goes on
    # besides the others, who keep theirs; up to `caps.max_flagged` of them, best placed first: a source refused
    # everywhere (a marker in every entity's latest cell) must not fan a wide night out to every entity. The rest
    # are capped, and named.
    flagged_on = [cid for cid in past_cap if cid in flagged]
    extra, over = flagged_on[:pack.caps.flagged_bound], flagged_on[pack.caps.flagged_bound:]
    cut = {cid for cid in past_cap if cid not in flagged} | set(over)
    past = set(flagged_on)
    candidates = [c.model_copy(update={"went_on": c.id not in cut, "capped": c.id in cut, "flagged": c.id in past})
                  if c.id in cut or c.id in past else c for c in judged]
    going = {keys[c.id] for c in candidates if c.went_on}
    full = _raw_rows(_rows_of(history, before_own, pl.col("entity_id").is_in(sorted(going))), pack.columns)
    copyable = [c for c in pack.columns if c not in pack.source.every_entitys_columns]  # (a series all carry: none)
    copies = copied_figures(history, copyable, going, pack.integrity.copied)
    for entity, scaled in scaled_copies(history, copyable, going, pack.integrity.copied).items():
        copies[entity] = {**scaled, **copies.get(entity, {})}  # figures equal outright are said so first
    repeats = _repeated_events(pack, history, going)
    absorbed = absorbed_events(history, pack.source.added_columns, pack.source.counted_columns, going,
                               pack.max_window, pack.integrity.absorbed)
    reach, signed = pack.history_reach, pack.source.signed_panel_columns
    shares = frozenset(pack.source.share_columns)
    # (annual grains only: within a year the shared move carries each entity's own season, which differs: the
    # ACT's takings barely rise into a December quarter that lifts every other state's)
    shared, spreads = _shared_changes(history, pack.columns, reach, signed, shares) \
        if going and pack.grain.per_year == 1 else ({}, {})
    levels = _shared_levels(history, pack.columns, reach) if going else {}
    written = _shared_decimals(history, pack.columns, reach, pack.integrity.precision.max_decimals) if going else {}
    # The cross-section goes to the verifier with each candidate going on (one dict, shared: records are frozen).
    typical = _typical_scales(history, pack.columns, signed, shares) if going else {}
    candidates = [c.model_copy(update={"raw_data": full.get(keys[c.id], []), "peers": peers, "peer_ratios": proportions,
                                       "shared_changes": shared,
                                       "shared_spreads": spreads,
                                       "shared_levels": levels, "shared_decimals": written,
                                       "typical_scales": typical,
                                       "copies": copies.get(keys[c.id], {}),
                                       "absorbed": absorbed.get(keys[c.id], {}),
                                       "repeated_events": repeats.get(keys[c.id], [])}) if c.went_on
                  else c if window_rows or not c.raw_data else c.model_copy(update={"raw_data": []})
                  for c in candidates]

    notes = list(spellings)
    cut_scores = [c.preliminary_score for c in judged if c.id in cut and c.preliminary_score is not None]
    best_cut = max(cut_scores) if cut_scores else None
    # by score, a candidate with none has no place in the order: placed last, and named with why (never cut unsaid)
    unscored = [c for c in passing if c.id in cut and c.id not in past and c.preliminary_score is None] \
        if pack.caps.order_by == "score" else []
    if cut:
        order = ("the formula's preliminary score, best first, then id" if pack.caps.order_by == "score" else
                 f"{pack.caps.order_by} {'descending' if pack.caps.descending else 'ascending'}, then id"
                 if pack.caps.order_by else "id")
        # the best cut by name (trial 96: "the best score among them 76.4", which market left to a table's sort)
        best_by = min((c for c in judged if c.id in cut and c.preliminary_score == best_cut), key=lambda c: c.id,
                      default=None)
        best = (f"; the best score among them {format_score(best_cut, pack.thresholds.levels)}"
                + (f" ({markdown(best_by.name)})" if best_by is not None else "") if best_cut is not None else "")
        notes.append(f"{len(passing)} passed the filters; capped at max_candidates={pack.caps.max_candidates} "
                     f"by {order}; {len(cut)} not analyzed tonight{best}" + _unscored_note(pack, unscored))
    named = {c.id: c.name for c in judged}
    gap = f" or a gap in {pack.caps.order_by}" if pack.caps.order_by not in (None, "score") else ""
    if extra:
        notes.append(f"{len(extra)} with quarantined rows in reach{gap} went on past the cap, flagged: "
                     f"{_first_named(extra, named)}")
    if over:
        notes.append(f"{len(over)} more flagged past the cap were capped, beyond max_flagged="
                     f"{pack.caps.flagged_bound}: {_first_named(over, named)}")
    gone = [c.id for c in judged if c.gone]
    if gone:
        notes.append(gone_note(pack, gone, named))
    carried = [c for c in judged if not c.gone]
    below = len(passing) < pack.caps.min_candidates
    # the judged only: an entity gone is never judged, whatever its filters read (trial 76: "still_on_show (172 of 20)")
    failing = Counter(name for c in carried for name, result in c.filters.items() if result == FilterResult.FAIL)
    if below and len(passing) == len(carried):  # (trial 51: one island's prices, told every night to loosen nothing)
        every = "the one candidate" if len(carried) == 1 else f"every one of the {len(carried)} candidates"
        notes.append(f"{every} scanned passed the hard filters, fewer than min_candidates={pack.caps.min_candidates}: "
                     "the source has no more entities to scan")
    elif below:
        most = "; the most failed: " + ", ".join(f"{name} ({n} of {len(carried)})" for name, n in
                                                 failing.most_common(2)) if failing else ""
        notes.append(f"only {len(passing)} of {len(carried)} candidates passed the hard filters (min_candidates="
                     f"{pack.caps.min_candidates}); the filters were not loosened{most}")
    report = ScanReport(
        as_of=as_of, anchor_period=anchor, scanned=len(judged),
        failed_filters=len(carried) - len(passing), passed_filters=len(passing), capped=len(cut), gone=len(gone),
        judged=len(carried),
        carried_span=pack.carried_span,
        went_on=len(passing) - len(cut), quarantined=len(bad_rows), below_minimum=below, notes=notes,
        quarantined_entities=by_entity(bad_rows, {keys[c.id]: c.name for c in judged} | (
            {EVERY_ENTITY_ID: EVERY_ENTITY} if everyones else {})),
        unclear=sum(FilterResult.UNCLEAR in c.filters.values() for c in passing),
        flagged_past_cap=len(extra), flagged_capped=len(over), best_capped_score=best_cut,
        failed_by_filter=dict(failing), unscored_capped=len(unscored), shared_ids=shared_ids,
        shared_id_sets=len({candidate_id(k) for k in shared_ids}),
    )
    return candidates, report
