"""The `brief` and `archive` step without Dagster: route every candidate of the night by fixed rules, write the
brief, and check what was written.

Fan-in reads everything from the store (never an in-memory list of the run): a candidate that went on but
has no verification and no error record gets an error record here, so the summary always adds up:
passed filters = capped + analyzed + errors. The asset reports what `route_and_brief` returns; the benchmark's
plain night calls it as it is.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from opportunity_assets import schemas
from opportunity_assets.brief.render import NightRecords, count_words, names_in_brief, next_action, render_brief
from opportunity_assets.brief.routing import route
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.grounding import numeric_leaves, unsupported_numbers, written_numbers
from opportunity_assets.history import ACT, Change, last_night_within, since_last_night
from opportunity_assets.llm.steps import BriefItem, word_brief
from opportunity_assets.reasons import CandidateRow, candidate_rows, night_rows, stored_rows
from opportunity_assets.records import Brief, Cost, RunError, Summary
from opportunity_assets.text import clean
from resources.model import ModelResource
from resources.store import NIGHT_WIDE, ResultStore


def brief_items(pack: CriteriaPack, night: NightRecords) -> list[BriefItem]:
    """The lines a model may word: each brief item with the code's own line as the fallback."""
    by_c = {c.id: c for c in night.candidates}
    by_a = {a.candidate_id: a for a in night.analyses}
    by_v = {v.candidate_id: v for v in night.verifications}
    items = []
    for r in night.routes:
        if r.section_or_tag == "act_on_these":
            template = next_action(pack, by_c[r.candidate_id], by_a[r.candidate_id])
        elif r.section_or_tag == "needs_your_judgment":
            v = by_v[r.candidate_id]
            template = v.to_resolve or v.reason
        else:
            continue
        items.append(BriefItem(r.candidate_id, by_c[r.candidate_id].name, r.section_or_tag, template))
    return items


def read_night(store: ResultStore, pack: CriteriaPack, as_of: date) -> NightRecords:
    """The night's records as stored: scan report, candidates going on, analyses, verifications, routes, error
    records and the latest judgments. A night never scanned is a clear error."""
    night = store.night(pack.domain, as_of)
    if night is None:
        raise ValueError(f"no scan stored for {pack.domain} on {as_of}: materialize candidates for {as_of} first")
    return NightRecords(
        as_of=as_of, candidates=store.candidates(pack.domain, as_of, went_on_only=True),
        analyses=store.analyses(pack.domain, as_of), verifications=store.verifications(pack.domain, as_of),
        routes=store.routes(pack.domain, as_of), errors=store.errors(pack.domain, as_of),
        scan_report=json.loads(night["scan_report"]), judgments=store.latest_judgments(pack.domain, as_of),
    )


def stored_numbers(store: ResultStore, pack: CriteriaPack, as_of: date,
                   night: NightRecords | None = None) -> list[float]:
    """Every number the store holds for the night (numeric fields only, never digits inside prose).
    `night`: the night's records as already read from the store in this transaction (saves reading twice)."""
    night_row = store.night(pack.domain, as_of) or {}
    brief = store.brief(pack.domain, as_of) or {}
    night = night or read_night(store, pack, as_of)
    records: list[object] = [json.loads(night_row.get("criteria") or "{}"), night.scan_report,
                             json.loads(brief.get("summary") or "{}"), json.loads(brief.get("cost") or "{}")]
    records += [a.model_dump() for a in night.analyses] + [v.model_dump() for v in night.verifications]
    records += [c.metrics for c in night.candidates]
    numbers = [*numeric_leaves(records), *pack.written_numbers]
    # a verification's own texts, code's words, which the brief quotes as stored (its reason, what would resolve it)
    numbers += [n for v in night.verifications for text in (v.reason, v.to_resolve or "")
                for n in written_numbers(text)]
    numbers += [n for note in night.scan_report.get("notes", []) for n in written_numbers(str(note))]  # (the scan's)
    if pack.grain.name == "year":  # a year grain's period labels are bare years (`without 2008`): stored labels
        labels = [n.source.period for a in night.analyses for n in a.numbers.values()]
        labels += [p.change for v in night.verifications for p in v.sensitivity]
        labels += [f"{period} {f.to_resolve}" for v in night.verifications for f in v.data_findings
                   for period in f.periods]  # "confirm 1980..1982 emp with the source"
        numbers += [float(y) for label in labels for y in re.findall(r"\b\d{4}\b", label)]
    return numbers


@dataclass(frozen=True)
class BriefStep:
    """The night's brief as stored, and its checks' findings."""

    brief: Brief
    summary: Summary
    cost: Cost
    """What the model answers in the night's records cost: billed now apart from replayed."""
    model_mode: str
    """The brief's line on how the model took part (or that it did not)."""
    worded_lines: int
    """Brief lines the model worded and code accepted."""
    archived: int
    """Candidates of the night in the archive."""
    words: int
    """`word_limit`: words of the brief as stored."""
    unsupported: list[str]
    """`numbers_in_store`: numbers in the stored brief that no stored number explains."""
    route_failures: list[dict[str, Any]]
    """`routes_valid`: stored routes that are not a known (destination, section or tag) pair."""
    rows: list[CandidateRow]
    """Every candidate of the night, scanned or routed, with where it went and why (`reasons.py`)."""
    last_night: date | None
    """The latest earlier night with a brief (within `history.last_night_within`), None when there is none."""
    changes: list[Change]
    """Since last night: tonight's act-on candidates, new or still strong, and last night's that dropped, with why."""


def last_night_act(store: ResultStore, pack: CriteriaPack,
                   as_of: date) -> tuple[date | None, dict[str, tuple[str, float | None]]]:
    """The latest earlier night that has a brief (within `history.last_night_within` the pack's grain), and its
    act-on candidates: id → (name, score)."""
    domain = pack.domain
    since = as_of - last_night_within(pack.source.grain)
    routed = [n for n in store.earlier_nights(domain, before=as_of, since=since) if n["routed"]]
    if not routed:
        return None, {}
    last = routed[0]["as_of"]
    scores = {a.candidate_id: a.score for a in store.analyses(domain, last)}
    names = {c.id: clean(c.name) for c in store.candidates(domain, last, went_on_only=True)}
    return last, {r.candidate_id: (names.get(r.candidate_id, r.candidate_id), scores.get(r.candidate_id))
                  for r in store.routes(domain, last) if r.section_or_tag == ACT}


def route_and_brief(pack: CriteriaPack, store: ResultStore, model: ModelResource, as_of: date) -> BriefStep:
    """Route the night's verified candidates, write routes, brief and archive, and check what was written."""
    with store.session():  # read the night and decide the routes in one connection
        night = read_night(store, pack, as_of)
        # `brief` errors, and the brief's wording call's (`brief_model`), are this step's own verdict on an earlier
        # pass: recomputed now, never inherited (trial 99: a re-run whose wording was answered still said "Model
        # calls stopped tonight (the brief's)" from the first pass's refused key).
        own = ("brief", "brief_model")
        stale = [(e.as_of, e.candidate_id, e.node) for e in night.errors if e.node in own]
        night = dataclasses.replace(night, errors=[e for e in night.errors if e.node not in own])
        verified = {v.candidate_id: v for v in night.verifications}
        analyzed = {a.candidate_id: a for a in night.analyses}
        errored = {e.candidate_id for e in night.errors if e.fatal}
        unfinished = [RunError(as_of=as_of, candidate_id=c.id, node="brief",
                               error="no analysis and verification recorded for this candidate")
                      for c in night.candidates
                      if c.id not in errored and (c.id not in verified or c.id not in analyzed)]
        if unfinished or stale:
            store.write_stage(pack.domain, errors=unfinished, cleared=stale)
        routes = [route(analyzed[cid], v) for cid, v in sorted(verified.items())
                  if cid in analyzed and cid not in errored]
        night = dataclasses.replace(night, routes=routes, errors=[*night.errors, *unfinished])
        # What the model's wording is checked against; no model, no wording to check.
        numbers_before = stored_numbers(store, pack, as_of, night) if model.enabled() else []

    # The model words the brief's lines outside the store's lock: a call takes seconds.
    worded = word_brief(model, pack, as_of, brief_items(pack, night), list(night.candidates), numbers_before)
    errors = [*night.errors, *([worded.model_error] if worded.model_error else [])]
    night = dataclasses.replace(night, errors=errors)

    with store.session():  # write routes and brief, then check what was written
        store.write_stage(pack.domain, errors=[worded.model_error] if worded.model_error else [],
                          model_log=model.drain(), renewed=[(as_of, NIGHT_WIDE, "brief")])
        usage = store.model_cost(pack.domain, as_of)
        cost = Cost(calls=usage["calls"], input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"],
                    usd=round(usage["usd"], 6), replayed_calls=usage["replayed_calls"],
                    replayed_usd=round(usage["replayed_usd"], 6))
        brief, summary = render_brief(pack, night, model.mode_line(), wording=worded.record, cost=cost)
        routed = candidate_rows(pack, night.candidates, night.analyses, night.verifications, routes, night.errors)
        store.write_routing(pack.domain, as_of, routes=routes, brief=brief, summary=summary, cost=cost,
                            model_mode=model.mode_line(), reasons={r.candidate_id: r.reason for r in routed})
        stored = store.brief(pack.domain, as_of) or {}
        words = count_words(stored.get("markdown", ""))
        scanned = store.scanned_rows(pack.domain, as_of)
        unsupported = unsupported_numbers(stored.get("markdown", ""), stored_numbers(store, pack, as_of, night), as_of,
                                          names=names_in_brief(night, [str(row[key]) for row in scanned for key in
                                                                       ("name", "candidate_id") if row.get(key)],
                                                               within=stored.get("markdown", "")))
        route_failures = schemas.failures(schemas.RouteRows, schemas.route_frame(store.routes(pack.domain, as_of)))
        archived = store.archive(pack.domain, as_of=as_of)
        rows = night_rows(pack, stored_rows(pack, scanned), night.candidates,
                          night.analyses, night.verifications, routes, night.errors)
        last_night, last_act = last_night_act(store, pack, as_of)
    return BriefStep(brief=brief, summary=summary, cost=cost, model_mode=model.mode_line(),
                     worded_lines=len(worded.record), archived=len(archived), words=words, unsupported=unsupported,
                     route_failures=route_failures, rows=rows, last_night=last_night,
                     changes=since_last_night(last_act, rows))
