"""The human's judgment: `opportunity judge` records a decision on one candidate of one stored night.

Judgments are the calibration gate's labels (pursue: it should have been STRONG; pass: it should not; unsure: no
label) and the brief shows judged candidates as judged. Bad input writes nothing: the night must have a stored
run and the candidate must be one it scanned.
"""

from __future__ import annotations

import difflib
from datetime import date, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from opportunity_assets.criteria import CriteriaPack
from resources.store import ResultStore


class JudgmentError(ValueError):
    """A judgment that cannot be recorded; nothing was written."""


class Decision(StrEnum):
    PURSUE = "pursue"
    PASS = "pass"
    UNSURE = "unsure"


class Judgment(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    as_of: date
    candidate_id: str
    decision: Decision
    who: str
    note: str | None
    judged_at: datetime
    """When it was recorded (UTC); the latest judgment of a candidate and night is its label."""


def record_judgment(store: ResultStore, pack: CriteriaPack, *, as_of: date, candidate: str, decision: Decision,
                    who: str, note: str | None, now: datetime) -> Judgment:
    """Validate, then write. `candidate` is an id, or the name the brief shows when one candidate of the night
    bears it. Raises JudgmentError (and writes nothing) for a night without a stored run, a candidate that night
    did not scan, or an empty `who`."""
    if not store.exists():
        raise JudgmentError(f"no result store at {store.location}: no night has run there, nothing to judge")
    if not who.strip():
        raise JudgmentError("who: empty; expected a name (--who)")
    if store.night(pack.domain, as_of) is None:
        nearest = store.nights_near(pack.domain, as_of)
        hint = (f"; nights with a run nearby: {', '.join(str(n) for n in nearest)}" if nearest
                else "; the store has no night of this domain")
        # a night that has not ended cannot be run either (trial 55: "Run `opportunity run --as-of 2030-12-31`")
        then = (f"; {as_of} has not ended yet" if as_of >= now.date()
                else f". Run `opportunity run --as-of {as_of}` first")
        raise JudgmentError(f"no run stored for {pack.domain} on {as_of}: nothing to judge{hint}{then}")
    scanned = {c.id: c.name for c in store.candidates(pack.domain, as_of)}
    by_name = [cid for cid, name in scanned.items() if name.strip().lower() == candidate.strip().lower()]
    if candidate not in scanned and len(by_name) == 1:
        candidate = by_name[0]  # the name the brief shows, as `archive --candidate` takes it (trial 55)
    if candidate not in scanned:
        close = by_name or difflib.get_close_matches(candidate, list(scanned), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise JudgmentError(f"unknown candidate {candidate!r}: not among the {len(scanned)} candidates scanned on "
                            f"{as_of}{hint}")
    judgment = Judgment(as_of=as_of, candidate_id=candidate, decision=decision, who=who.strip(),
                        note=note or None, judged_at=now)
    store.write_judgment(pack.domain, as_of, candidate, decision=judgment.decision.value, who=judgment.who,
                         note=judgment.note, judged_at=judgment.judged_at)
    return judgment
