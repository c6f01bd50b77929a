"""The report step without Dagster: read a night's stored records (brief, candidates, analyses, verifications,
routes, error records, and the act-on candidates' earlier nights) into a `Report`, and write it.

The brief asset writes the night's report as HTML beside the store (`report_path`; ~0.1 s); the notification step
writes the PDF there for the email channel to attach (~0.7 s, so only a deployment that emails pays it every
night); `opportunity run --report PATH` writes either wherever it is asked.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

from opportunity_assets.brief.step import last_night_act
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.history import last_night_within, since_last_night
from opportunity_assets.reasons import night_rows, stored_rows
from opportunity_assets.records import Summary
from opportunity_assets.report.render import History, Report, write_report
from opportunity_assets.report.svg import HistoryPoint
from resources.store import ResultStore


def report_path(store_path: str, domain: str, as_of: date, suffix: str) -> Path:
    """Where the night's report goes: `reports/<domain>-<as_of><suffix>` beside the result store (`.html`, written
    with the brief; `.pdf`, written for the email channel)."""
    return Path(store_path).resolve().parent / "reports" / f"{domain}-{as_of.isoformat()}{suffix}"


def read_report(store: ResultStore, pack: CriteriaPack, as_of: date, *, rendered_at: datetime | None = None) -> Report:
    """The night's report from the store. A night without a brief is a clear error."""
    with store.session():
        brief = store.brief(pack.domain, as_of)
        if brief is None:
            raise ValueError(f"no brief stored for {pack.domain} on {as_of}: materialize brief first")
        analyses = store.analyses(pack.domain, as_of)
        routes = store.routes(pack.domain, as_of)
        rows = night_rows(pack, stored_rows(pack, store.scanned_rows(pack.domain, as_of)),
                          store.candidates(pack.domain, as_of, went_on_only=True), analyses,
                          store.verifications(pack.domain, as_of), routes, store.errors(pack.domain, as_of))
        scores = {a.candidate_id: a.score or 0.0 for a in analyses}
        act = sorted((r.candidate_id for r in routes if r.section_or_tag == "act_on_these"),
                     key=lambda i: (-scores.get(i, 0.0), i))
        history = store.score_history(pack.domain, act, up_to=as_of)
        last_night, last_act = last_night_act(store, pack, as_of)
    names = {r.candidate_id: r.name for r in rows}
    histories = [History(candidate_id=i, name=names[i],
                         points=[HistoryPoint(as_of=h["as_of"], verdict=h["verdict"], score=h["score"])
                                 for h in history if h["candidate_id"] == i]) for i in act]
    return Report(domain=pack.domain, as_of=as_of, description=pack.description, brief_markdown=brief["markdown"],
                  summary=Summary.model_validate(json.loads(brief["summary"])),
                  thresholds={"strong": pack.thresholds.strong, "marginal": pack.thresholds.marginal},
                  rows=rows, histories=histories, rendered_at=rendered_at or datetime.now(UTC).replace(tzinfo=None),
                  model_checks=brief.get("model_mode") or "", last_night=last_night,
                  last_night_within_days=last_night_within(pack.source.grain).days,
                  changes=since_last_night(last_act, rows))


def write_night_report(store: ResultStore, pack: CriteriaPack, as_of: date, path: str | Path) -> Path:
    """Read the night's report from the store and write it at `path` (PDF or HTML by the extension)."""
    return write_report(read_report(store, pack, as_of), path)
