"""A candidate across nights (pure): its stored scores and verdicts as plot points and a small SVG for the UI, and
what changed since last night among the candidates to act on: new, still strong, dropped (and why).

"Last night" is the latest earlier night in the store that has a brief, within `last_night_within` the pack's grain
(the same window as the notifications' "still strong"). An earlier night still running is waited for before the
brief is written: inside the run in `finish_night`, by the chain's sensors holding the brief's request under the
daemon (`brief.assets.build_brief_and_archive`, `automation.sensors.hold_briefs`)."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from opportunity_assets.formatting import format_score
from opportunity_assets.reasons import CandidateRow
from opportunity_assets.records import Analysis
from opportunity_assets.report.svg import HistoryPoint, score_history
from opportunity_assets.tables import Markdown, Table

LAST_NIGHT_WITHIN = timedelta(days=45)
"""The shortest window: a month-end night reaches the month-end before it (31 days), with two weeks to spare."""
LONGEST_PERIOD_DAYS = {"day": 1, "week": 7, "month": 31, "quarter": 92, "year": 366}
ACT = "act_on_these"
NEW, STILL_STRONG, DROPPED = "new", "still strong", "dropped"


def last_night_within(grain: str) -> timedelta:
    """How far back "last night" is looked for: 45 days, or the grain's longest period and two weeks when longer.
    A quarterly source's nights come a quarter apart (Australian accommodation's quarter-ends, 92 days): in 45 days
    none found its night before, so every candidate was "new" and none ever "dropped" (trial 42)."""
    return max(LAST_NIGHT_WITHIN, timedelta(days=LONGEST_PERIOD_DAYS.get(grain, 0) + 14))


def points(stored: Iterable[Mapping[str, Any]], tonight: Analysis | None = None) -> list[HistoryPoint]:
    """Stored analyses (`ResultStore.score_history` rows of one candidate) and tonight's, oldest first; tonight's
    replaces a stored one of the same night."""
    by_night = {row["as_of"]: HistoryPoint(as_of=row["as_of"], verdict=row["verdict"], score=row["score"])
                for row in stored}
    if tonight is not None:
        by_night[tonight.as_of] = HistoryPoint(as_of=tonight.as_of, verdict=tonight.verdict.value, score=tonight.score)
    return [by_night[night] for night in sorted(by_night)]


def history_markdown(history: Sequence[HistoryPoint], thresholds: Mapping[str, float], *, rows: int = 12) -> Markdown:
    """The score across nights as an SVG image (a data URI the UI's Markdown shows), then the latest nights as a
    table: night, verdict, score."""
    image = base64.b64encode(score_history(history, thresholds).encode()).decode()
    lines = [f"![score across nights](data:image/svg+xml;base64,{image})", "", "| night | verdict | score |",
             "|---|---|---|"]
    levels = tuple(thresholds.values())
    lines += [f"| {p.as_of.isoformat()} | {p.verdict} | {'' if p.score is None else format_score(p.score, levels)} |"
              for p in reversed(history[-rows:])]
    more = len(history) - rows
    return Markdown("\n".join(lines) + (f"\n\n{more} earlier nights in the store." if more > 0 else ""))


@dataclass(frozen=True)
class Change:
    """A candidate to act on last night or tonight."""

    candidate_id: str
    name: str
    change: str
    """`new`, `still strong` or `dropped`."""
    last_night: float | None
    """Its score last night, when it was to act on then."""
    tonight: float | None
    """Its score tonight, when analyzed tonight."""
    why: str
    """For a dropped one, tonight's reason (or that it was not scanned); else tonight's reason too."""


def since_last_night(last_act: Mapping[str, tuple[str, float | None]], tonight: Sequence[CandidateRow]) -> list[Change]:
    """`last_act`: last night's act-on candidates, id → (name, score). New and still strong first (best score
    first), then dropped."""
    rows = {r.candidate_id: r for r in tonight}
    changes = []
    for r in tonight:
        if r.tag == ACT:
            before = last_act.get(r.candidate_id)
            changes.append(Change(r.candidate_id, r.name, STILL_STRONG if before else NEW,
                                  before[1] if before else None, r.score, r.reason))
    for cid, (name, score) in last_act.items():
        row = rows.get(cid)
        if row is None or row.tag != ACT:
            changes.append(Change(cid, row.name if row else name, DROPPED, score, row.score if row else None,
                                  row.reason if row else "not scanned tonight"))
    order = {NEW: 0, STILL_STRONG: 0, DROPPED: 1}
    return sorted(changes, key=lambda c: (order[c.change], -(c.tonight or c.last_night or 0.0), c.candidate_id))


def changes_table(changes: Sequence[Change]) -> Table:
    return Table(columns=(("candidate", "string"), ("id", "string"), ("change", "string"),
                          ("last_night", "float"), ("tonight", "float"), ("why", "string")),
                 rows=tuple({"candidate": c.name, "id": c.candidate_id, "change": c.change,
                             "last_night": None if c.last_night is None else round(c.last_night, 1),
                             "tonight": None if c.tonight is None else round(c.tonight, 1), "why": c.why}
                            for c in changes))


def last_night_line(last: date | None, changes: Sequence[Change], within: timedelta = LAST_NIGHT_WITHIN) -> str:
    if last is None:
        return f"no earlier night with a brief within {within.days} days: every candidate is new"
    counts = {kind: sum(c.change == kind for c in changes) for kind in (NEW, STILL_STRONG, DROPPED)}
    return f"against {last.isoformat()}: " + ", ".join(f"{n} {kind}" for kind, n in counts.items())
