"""The `candidates` step without Dagster: read the source as known on as_of, scan, store, check what was stored. A
problem `opportunity check` finds with the night (`check/`) stops it before anything is stored.

The asset registers the night's candidate partitions and reports what this returns; the benchmark's plain night
calls it as it is.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeGuard

from opportunity_assets import schemas
from opportunity_assets.candidates.logic import SHOWN_FLAGGED, ScanReport, first_named, scan_read
from opportunity_assets.check.cut_short import file_cut_short
from opportunity_assets.check.latest import cut_short, latest_refused_note, stale_night_note
from opportunity_assets.check.pack import NightRefused
from opportunity_assets.cost import load_prices, worst_case
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import significant
from opportunity_assets.reasons import CandidateRow, candidate_rows
from opportunity_assets.records import Candidate
from opportunity_assets.sources.partial_period import cut_short_words
from opportunity_assets.text import clip_quoted, markdown
from resources.model import ModelResource
from resources.source import PointInTimeSource
from resources.store import ResultStore

_OVER_CEILING = (", though even one candidate's worst case is over the ceiling: calls that would cross it are not "
                 "sent (budget_exhausted)")
"""Said beside a cap of one the ceiling cannot cover ("so the cap is 1" alone read as if one candidate fit, and its
unsent calls were a bare model error). Digit-free: every number in the brief must be a stored one."""


def night_id(domain: str, as_of: date, fingerprint: str) -> str:
    """The night's run id in the state object: it names the as_of, the domain and the criteria version."""
    return f"{domain}-{as_of.isoformat()}-{fingerprint}"


def _read_as(source: dict[str, Any]) -> tuple[str, str, str]:
    """Which table a stored or loaded pack's `source` reads, from which file, and by which entity key (its column
    or columns, or its one `entity`)."""
    key = source.get("entity_id") if source.get("entity") is None else f"entity {source['entity']}"
    return str(source.get("table")), str(source.get("path")), repr(key)


def domain_night(store: ResultStore, domain: str, as_of: date) -> dict[str, Any] | None:
    """The domain's night on as_of if the store holds one, else its stored night nearest it: the one a pack of this
    domain must have made (`another_packs_night`)."""
    if (stored := store.night(domain, as_of)) is not None:
        return stored
    near = store.nights_near(domain, as_of, 1)
    return store.night(domain, near[0]) if near else None


def another_packs_night(stored: dict[str, Any] | None, pack: CriteriaPack, as_of: date) -> str | None:
    """A night this store holds for the pack's `domain` that another pack made: one reading another table or file
    by another entity key (a pack copied as a template, its `domain` not renamed). Writing tonight would replace
    that pack's night, its candidates and routes, with nothing said (trial 36: a school panel's 1,778 candidates
    became a cholera file's 2), or, on a night of its own, mix the two packs' nights under one domain: its archive,
    its backtest, a brief's night before (trial 44: a house-sales pack named `nc_crime` stored its 2015 night beside
    the crime pack's 1988 one, said nothing). A pack edited between two nights keeps its key, or its table and
    file, and replaces its night as before."""
    if stored is None:
        return None
    (table, path, key), (our_table, our_path, our_key) = (_read_as(json.loads(stored["criteria"])["source"]),
                                                          _read_as(pack.source.model_dump()))
    if key == our_key or (table, path) == (our_table, our_path):
        return None
    harm = "replace the other pack's" if stored["as_of"] == as_of else \
        "sit among the other pack's, one archive and one history for both"
    return (f"key `domain`: got {pack.domain!r}; the store already holds this domain's night {stored['as_of']}, "
            f"made by a pack reading {table!r} ({path}) by {key}, and this pack reads {our_table!r} ({our_path}) "
            f"by {our_key}: the night would {harm}: expected a `domain` of this pack's own (each pack sharing a "
            "store needs one)")


def stored_by(stored: dict[str, Any] | None, pack: CriteriaPack) -> TypeGuard[dict[str, Any]]:
    """Whether the store's night record `stored` was made by this very pack (its fingerprint)."""
    return stored is not None and stored.get("criteria_fingerprint") == pack.fingerprint


def edited_mid_night(stored: dict[str, Any] | None, pack: CriteriaPack, as_of: date) -> str | None:
    """Why a night's later step (analyses, the brief) refuses to go on with `pack`, in one line: the night was
    scanned by another version of it, the pack file edited while the night ran. Each step loads the pack anew, so
    the night was stored half one, half the other: `nights` recorded a strong of 70 and its pack, the verdicts and
    the brief were a strong of 90's (Austin "MARGINAL 88.1"), and nothing said so (trial 109). None when the scan
    was this pack's, or there is none."""
    if stored is None or stored_by(stored, pack):
        return None
    return (f"criteria pack {pack.domain}: edited while the night {as_of} ran (scanned by its version "
            f"{stored.get('criteria_fingerprint')}, now {pack.fingerprint}): run the same command again to run the "
            "whole night with the pack as it is now")


_TOLERANCE = 1e-9
"""Relative difference below which a metric read again is the same figure (a sum's last bits)."""


def _same(then: float | None, now: float | None) -> bool:
    return then == now or (then is not None and now is not None and math.isclose(then, now, rel_tol=_TOLERANCE,
                                                                                abs_tol=_TOLERANCE))


def _written(value: float | None) -> str:
    return "no value" if value is None else significant(value, 6)


_READ_ALIKE_BESIDE = ("columns", "path", "delimiter")
"""Source keys an edit may change and the rows still be read alike, entity by entity and period by period: the
columns listed (one renamed with the file), where the file lies, how its fields are separated."""


def comparable_metrics(stored: dict[str, Any] | None, pack: CriteriaPack) -> list[str]:
    """The metrics of `pack` whose figures on a night the store holds can be held against tonight's: every one when
    this very pack stored it (its fingerprint); when the pack was edited since, over a source read alike but for
    `_READ_ALIKE_BESIDE`, those defined as they were, every input of a derived one too. Trial 73: a file replaced
    by a newer download, past figures revised and a column renamed, the pack edited for the new name alone: the
    night run again replaced the figures it stored with nothing said, where the unedited pack was warned of."""
    if stored is None:
        return []
    if stored_by(stored, pack):
        return list(pack.metrics)
    try:
        then = json.loads(stored["criteria"])
    except (KeyError, TypeError, ValueError):
        return []
    now = json.loads(pack.model_dump_json())
    if not isinstance(then, dict) or then.get("domain") != now["domain"] or not isinstance(then.get("source"), dict):
        return []
    def read_as(source: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in source.items() if key not in _READ_ALIKE_BESIDE}

    if read_as(then["source"]) != read_as(now["source"]):
        return []
    before: dict[str, Any] = then["metrics"] if isinstance(then.get("metrics"), dict) else {}
    same = {name for name, spec in now["metrics"].items() if before.get(name) == spec}
    while derived_apart := {name for name in same if pack.metrics[name].expression is not None
                            and not pack.metrics[name].parsed.names <= same}:
        same -= derived_apart
    return [name for name in pack.metrics if name in same]


def changed_since_stored(stored: dict[str, Any] | None, then: list[Candidate], now: list[Candidate],
                         pack: CriteriaPack) -> str | None:
    """A night this pack stored, run again on a source that gives it other figures (trial 63: a year's figures
    revised over the first ones, no `published_column`: the night's brief replaced by another, nothing said). The
    same pack (its fingerprint) read what was published by the night then and now: where they differ, the source's
    rows of those periods were changed in place since, and a past night can no longer be told as it was. `then`:
    the stored night's candidates; `now`: tonight's scan of it. A pack edited since is held to the metrics it left
    as they were (`comparable_metrics`)."""
    compared = comparable_metrics(stored, pack)
    if stored is None or not compared:
        return None
    before, after = {c.id: c for c in then}, {c.id: c for c in now}
    changed = sorted(i for i in before.keys() & after.keys()
                     if any(not _same(before[i].metrics.get(m), after[i].metrics.get(m)) for m in compared))
    gone, new = sorted(before.keys() - after.keys()), sorted(after.keys() - before.keys())
    if not (changed or gone or new):
        return None
    said = []
    if changed:
        first = before[changed[0]]
        metric = next(m for m in compared if not _same(first.metrics.get(m), after[first.id].metrics.get(m)))
        said.append(f"{len(changed)} of {len(before)} candidates' metrics differ ({first.name}'s {metric} "
                    f"{_written(first.metrics.get(metric))} then, {_written(after[first.id].metrics.get(metric))} "
                    "now)")
    if gone:
        said.append(f"{len(gone)} candidate{'s' if len(gone) != 1 else ''} of then not in the source now (e.g. "
                    f"{before[gone[0]].name})")
    if new:
        said.append(f"{len(new)} new (e.g. {after[new[0]].name})")
    published = pack.source.published_column
    fix = ("each revision as a row of its own beside the first, with its own date in "
           f"`{published}`, so that a past night reads what was known on it" if published is not None else
           "a `published_column` giving each row's publication date, a revision a row of its own beside the first, "
           "so that a past night reads what was known on it")
    edited = "" if stored_by(stored, pack) else \
        f" before an edit (held to the {len(compared)} metrics it left as they were)"
    return (f"key `source.published_column`: night {stored['as_of']} is stored, by this pack{edited}, with other "
            f"figures than the source gives it now: {'; '.join(said)}: rows of periods published by then were "
            "changed in place since (revised, removed or added), and the night run again reads the source as it is "
            "now, "
            f"replacing the brief it gave then: expected {fix}")


def gone_since_night_before(before: dict[str, Any] | None, then: list[Candidate], now: list[Candidate],
                             pack: CriteriaPack, held: Callable[[list[str]], set[str]]) -> str | None:
    """A new night whose source no longer holds an entity this pack scanned on its latest stored night before it
    (trial 86: a monthly file re-published without one of its entities; the next night's brief went on without it,
    nothing said, where a night run again was warned of). `before`: that stored night; `then`: its candidates;
    `now`: tonight's scan; `held`: of the ids gone from the scan, those the source still has rows of (an entity
    whose latest row fell out of the history's reach, or whose rows tonight are all refused, was not removed).
    Only a night this very pack stored (its fingerprint): an edit may leave entities out."""
    if not stored_by(before, pack):
        return None
    missing = sorted({c.id: c for c in then}.keys() - {c.id for c in now})
    kept = held(missing) if missing else set()
    gone = [i for i in missing if i not in kept]
    if not gone:
        return None
    first = next(c for c in then if c.id == gone[0])
    entities = f"{len(gone)} entit{'ies' if len(gone) != 1 else 'y'}"
    return (f"key `source.path`: {entities} of night {before['as_of']}, the latest this pack stored before this one, "
            f"{'have' if len(gone) != 1 else 'has'} no row the night reads now (e.g. {first.name}): "
            "its rows were removed from the source since (an entity the publisher dropped, or a file replaced by "
            "another extract?), and tonight's brief goes on without it, the stored nights kept as read then: "
            "expected the source's rows of every entity it held, or the entity left out by the pack (`where`)")


def stored_as_read_then(stored: dict[str, Any] | None, pack: CriteriaPack) -> str:
    """Said after a problem that stops a night this pack stored before: the night ran then, on the same pack, so
    the source has changed since (trial 63: a file replaced by a shorter one was told "the night is too early for
    the pack")."""
    if not stored_by(stored, pack):
        return ""
    return (f" (the store holds night {stored['as_of']}, run by this pack on the source as it was then: the source "
            "has changed since, a file replaced by a shorter one, rows removed or rewritten?)")


def required_input_coverage(required: list[str], candidates: list[Candidate]) -> float:
    going_on = [c for c in candidates if c.went_on]
    if not going_on:
        return 1.0
    return sum(all(c.metrics.get(name) is not None for name in required) for c in going_on) / len(going_on)


def coverage_note(required: list[str], candidates: list[Candidate], coverage: float, threshold: float) -> str:
    """The coverage shortfall's note, naming the candidates going on that lack a required input and which (trial
    96: "only 70% of candidates going on have every required input", whose, only in the archive's reasons); the
    first `SHOWN_FLAGGED` by id, the rest pointed to."""
    lacking = sorted(((c.id, c.name, [n for n in required if c.metrics.get(n) is None]) for c in candidates
                      if c.went_on), key=lambda t: t[0])
    named = first_named([t for t in lacking if t[2]], lambda t: f"{markdown(t[1])} ({', '.join(t[2])})",
                        SHOWN_FLAGGED)
    return (f"only {coverage:.0%} of candidates going on have every required input (threshold {threshold:.0%})"
            + (f"; missing: {named}" if named else ""))


@dataclass(frozen=True)
class ScanStep:
    """What a night's scan found and stored, and its checks' findings."""

    report: ScanReport
    """Counts and notes, a coverage shortfall and a model-cost cap among the notes."""
    coverage: float
    """Share of the candidates going on with every required input."""
    going_on: list[str]
    """Partition keys of the candidates going on, sorted: the night's candidate partitions."""
    filter_failures: list[dict[str, Any]]
    """`filters_hold`: stored candidates that went on although a filter failed, or whose filter results do not
    match their stored metrics."""
    checked: int
    """Candidates read back from the store for that check."""
    rows: list[CandidateRow]
    """Every scanned candidate as stored: its filters, the cap, and why it goes on or not (`reasons.py`)."""
    quarantined: list[dict[str, Any]]
    """The night's quarantined source rows as stored: source_row, entity_id, period, reason."""


def with_latest_cut_short(pack: CriteriaPack, as_of: date, anchor: date | None,
                          found: list[Candidate]) -> list[Candidate]:
    """The scanned candidates, those going on told the night's latest period cut short in the feed, if it is
    (`sources.partial_period`: an events extract's end), for the verifier to doubt: a night-wide fact of the
    source's, outside the scan's frames."""
    cut = cut_short(pack, as_of, anchor)
    if cut is None or not cut.feed_cut:
        return found
    said = cut_short_words(pack, cut)
    return [c.model_copy(update={"latest_cut_short": said}) if c.went_on else c for c in found]


def scan_and_store(pack: CriteriaPack, source: PointInTimeSource, store: ResultStore, model: ModelResource,
                   as_of: date) -> ScanStep:
    """Candidates known on as_of: hard filters PASS/FAIL/UNCLEAR, data gaps, the cap (lowered to what the model
    cost ceiling affords when the model is on). No ranking. Replaces the night's scan in the store."""
    if problems := source.problems(pack, as_of):  # `opportunity run` stopped before; the schedule and the UI here
        raise NightRefused(f"{pack.domain}, night {as_of}: " + "; ".join(map(clip_quoted, problems)))
    if foreign := another_packs_night(domain_night(store, pack.domain, as_of), pack, as_of):
        raise NightRefused(f"{pack.domain}, night {as_of}: {foreign}")
    snapshot = source.read(pack, as_of)
    found, report = scan_read(pack, as_of, snapshot)
    cost_facts: dict[str, float] = {}
    if model.enabled():  # the night's worst-case model cost must fit the pack's ceiling before any call
        estimate = worst_case(pack, load_prices(), report.went_on, model_checks_on=True)
        affordable = estimate.candidates_within(pack.caps.cost_ceiling_usd)
        if affordable < report.went_on:
            capped_pack = pack.model_copy(update={"caps": pack.caps.model_copy(
                update={"max_candidates": max(affordable, 1)})})
            found, report = scan_read(capped_pack, as_of, snapshot)
            report = dataclasses.replace(report, notes=[*report.notes, (
                f"model cost ceiling ${pack.caps.cost_ceiling_usd:.2f}: worst case "
                f"${estimate.worst_case_usd:.2f} for {estimate.candidates} candidates, so the cap is "
                f"{report.went_on}{_OVER_CEILING if affordable == 0 else ''}")])
            cost_facts = {"model_worst_case_usd": estimate.worst_case_usd, "model_worst_case_candidates":
                          estimate.candidates}
    found = with_latest_cut_short(pack, as_of, snapshot.anchor_period, found)
    coverage = required_input_coverage(pack.required_inputs, found)
    notes = list(report.notes)
    if (refused := latest_refused_note(pack, as_of, snapshot.anchor_period, snapshot.quarantined)) is not None:
        notes.insert(0, refused)
    elif (stale := stale_night_note(pack, as_of, snapshot.anchor_period, snapshot.quarantined,
                                    snapshot.history)) is not None:
        notes.insert(0, stale)
    # A file cut short, said by the night itself: its pre-night check stops on problems only, and a scheduled
    # night has no command to warn, nor has one whose file was cut after the command's check (trial 142: a CSV
    # truncated in place stored a third of its markets, told as one quarantined row).
    notes += file_cut_short(pack, snapshot.quarantined, snapshot.history)
    if report.went_on and coverage < pack.coverage.min_required_inputs_share:
        notes.append(coverage_note(pack.required_inputs, found, coverage, pack.coverage.min_required_inputs_share))
    report = dataclasses.replace(report, notes=notes)
    rows = candidate_rows(pack, found)
    with store.session():
        store.write_scan(
            pack.domain, as_of, run_id=night_id(pack.domain, as_of, pack.fingerprint),
            criteria_fingerprint=pack.fingerprint, criteria=pack.model_dump_json(),
            anchor_period=report.anchor_period,
            scan_report={**dataclasses.asdict(report), "coverage": coverage, **cost_facts},
            candidates=found, quarantined=(quarantined := snapshot.quarantined.to_dicts()),
            reasons={r.candidate_id: r.reason for r in rows if not r.went_on},
        )
    # The filters are checked on the records as written (a wide night's 10k records are not parsed back: the
    # store's round trip is its own tests' concern).
    return ScanStep(report=report, coverage=coverage,
                    going_on=sorted(c.partition_key for c in found if c.went_on),
                    filter_failures=schemas.failures(schemas.FilterRows, schemas.filter_frame(pack, found)),
                    checked=len(found), rows=rows, quarantined=quarantined)
