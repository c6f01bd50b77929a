"""Why each candidate of a night ended where it did, in words: a row per candidate for the report's tables and the
UI's (`candidates`, `archive`). Pure: records in, rows out.

The reason names the thing itself, never a count: the filter that failed and its value against the bound, the
missing input of an INSUFFICIENT_DATA verdict, the checks a REJECTED verification failed, the red flags by name, the
doubt that sent a candidate to your judgment.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from opportunity_assets.analyses.logic import why_unscored
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import format_score, format_value, significant
from opportunity_assets.records import Analysis, Candidate, FilterResult, Route, RunError, Verdict, Verification
from opportunity_assets.text import clean
from opportunity_assets.verifications.integrity import headline

NOT_ANALYZED = "not_analyzed"
"""The tag of a candidate that did not go on (a failed filter, or the cap)."""
ERROR = "error"
"""The tag of a candidate that went on but has no verdict (an analyze, verify or brief error)."""
PENDING = "pending"
"""The tag of a candidate that went on and has not been routed yet (the scan's own table)."""


@dataclass(frozen=True)
class CandidateRow:
    """One candidate's fate on one night."""

    candidate_id: str
    name: str
    """As scanned, cleaned of control characters (the renderer escapes it for its format)."""
    filters: Mapping[str, str]
    """Hard filter → PASS / FAIL / UNCLEAR."""
    capped: bool
    went_on: bool
    verdict: str | None
    score: float | None
    """The analysis's score (a candidate going on but not analyzed yet: the scan's preliminary score)."""
    status: str | None
    tag: str
    """The route's section or tag; `not_analyzed`, `error` or `pending` otherwise."""
    reason: str
    levels: tuple[float, ...] = ()
    """The pack's thresholds, which the score is written on its own side of (`format_score`)."""

    @property
    def score_text(self) -> str:
        return "" if self.score is None else format_score(self.score, self.levels)


def _bound(pack: CriteriaPack, metric: str, value: float) -> str:
    spec = pack.metrics.get(metric)
    return format_value(value, spec.unit) if spec else significant(value)


def filter_reasons(pack: CriteriaPack, candidate: Candidate) -> list[str]:
    """Each filter that did not PASS: `liquidity failed: sales_12m 540 (needs >= 600)`, or for UNCLEAR the metric
    that is missing and the scan's gap line for it."""
    out = []
    for f in pack.hard_filters:
        result = candidate.filters.get(f.name)
        value = candidate.metrics.get(f.metric)
        if result == FilterResult.FAIL and value is not None:
            out.append(f"{f.name} failed: {f.metric} {_bound(pack, f.metric, value)} "
                       f"(needs {f.op} {_bound(pack, f.metric, f.value)})")
        elif result == FilterResult.FAIL:
            out.append(f"{f.name} failed")
        elif result == FilterResult.UNCLEAR:
            gaps = [g for g in candidate.data_gaps if g.startswith(f"{f.metric}:")]
            out.append(f"{f.name} unclear: {gaps[0] if gaps else f'{f.metric} missing'}")
    return out


def _red_flag_names(pack: CriteriaPack, analysis: Analysis) -> list[str]:
    rules = {r.name for r in pack.red_flags}
    return [flag.split(":", 1)[0] for flag in analysis.red_flags if flag.split(":", 1)[0] in rules]


def _missing(analysis: Analysis, candidate: Candidate) -> str:
    parts = []
    for name in analysis.missing:
        gaps = [g.split(":", 1)[1].strip() for g in candidate.data_gaps if g.startswith(f"{name}:")]
        parts.append(f"{name} ({gaps[0]})" if gaps else name)
    return "missing input " + ", ".join(parts) if parts else "an input is missing"


def _deciding(verification: Verification, effect: str, analysis: Analysis | None = None) -> list[str]:
    """The data findings of `effect` that decided the status, in a few words each. A doubt decides only a STRONG
    verdict's (`analysis`; `verifications.logic.verify`): a MARGINAL candidate made UNCERTAIN by a fragile verdict
    was told "doubted data" by a finding that decided nothing, beside what would resolve the fragility (trial 42);
    and a rejection is told by what rejected it, never by a doubt."""
    if analysis is not None and analysis.verdict != Verdict.STRONG:
        return []
    return [headline(f) for f in verification.data_findings
            if f.effect == effect and not f.rule.startswith("red_flag:")]


def _routed_reason(pack: CriteriaPack, candidate: Candidate, a: Analysis, v: Verification, tag: str) -> str:
    flags = _red_flag_names(pack, a)
    flagged = f"; red flags: {', '.join(flags)}" if flags else ""
    if tag == "data_gap":
        return f"INSUFFICIENT_DATA: {_missing(a, candidate)}{flagged}"
    if tag == "failed_verification":
        rejecting = _deciding(v, "reject")
        failed = ", ".join(v.failed_checks) or "a check"
        detail = f": {rejecting[0]}" if rejecting else f": {v.reason.rstrip('.')}"
        return f"REJECTED, failed {failed}{detail}{flagged}"
    if tag == "needs_your_judgment":
        doubts = _deciding(v, "doubt", a)
        why = (f"doubted data: {doubts[0]}" if doubts else
               f"fragile: {v.fatal_assumption} flips it" if v.fatal_assumption else v.reason.rstrip("."))
        return f"UNCERTAIN, {why}; to resolve: {(v.to_resolve or v.reason).rstrip('.')}{flagged}"
    if tag == "act_on_these":
        return f"STRONG and confirmed (score {format_score(a.score or 0.0, pack.thresholds.levels)}){flagged}"
    # below_threshold: the router's default, a MARGINAL or SKIP verdict (a STRONG one is routed before it)
    below = (f"score {format_score(a.score or 0.0, pack.thresholds.levels)} below strong "
             f"{format_score(pack.thresholds.strong)}")
    return f"{a.verdict.value}: {below}{flagged}"


def not_going_reason(pack: CriteriaPack, candidate: Candidate) -> str:
    """Why a candidate that did not go on stayed out: the cap and its preliminary score, or its filters. It never
    changes after the scan (the store keeps it: `ResultStore.scanned_rows`)."""
    if candidate.gone:  # its one gap says since when (`candidates.logic.gone_gap`)
        return candidate.data_gaps[0]
    if candidate.capped:
        prelim = (f", preliminary score {format_score(candidate.preliminary_score, pack.thresholds.levels)}"
                  if candidate.preliminary_score is not None
                  else f", no preliminary score ({', '.join(why_unscored(pack, candidate.metrics)) or 'no value'})")
        gap = f" or a gap in {pack.caps.order_by}" if pack.caps.order_by not in (None, "score") else ""
        flagged = (f" and max_flagged={pack.caps.flagged_bound} (quarantined rows in reach{gap}, placed by its "
                   "remaining rows)" if candidate.flagged else "")
        return f"capped: beyond max_candidates={pack.caps.max_candidates}{flagged}{prelim}"
    return "; ".join(filter_reasons(pack, candidate)) or "did not go on"


def stored_rows(pack: CriteriaPack, stored: Iterable[Mapping[str, Any]]) -> list[CandidateRow]:
    """The rows of candidates that did not go on, from what the scan stored (`ResultStore.scanned_rows`: id,
    name, filters, capped, reason; a night stored before reasons were, its record)."""
    rows = []
    for row in stored:
        reason = row["reason"]
        if reason is None:
            reason = not_going_reason(pack, Candidate.model_validate_json(row["record"]))
        rows.append(CandidateRow(candidate_id=row["candidate_id"], name=clean(row["name"]),
                                 filters=dict(json.loads(row["filters"])), capped=bool(row["capped"]), went_on=False,
                                 verdict=None, score=None, status=None, tag=NOT_ANALYZED, reason=reason,
                                 levels=pack.thresholds.levels))
    return rows


def night_rows(pack: CriteriaPack, not_going: Iterable[CandidateRow], going: Iterable[Candidate],
               analyses: Iterable[Analysis] = (), verifications: Iterable[Verification] = (),
               routes: Iterable[Route] = (), errors: Iterable[RunError] = ()) -> list[CandidateRow]:
    """Every scanned candidate's row, by id: the stored rows of those that did not go on (a wide night's thousands,
    never parsed back into records) beside the rows of those that did."""
    return sorted([*not_going, *candidate_rows(pack, going, analyses, verifications, routes, errors)],
                  key=lambda r: r.candidate_id)


def candidate_rows(pack: CriteriaPack, candidates: Iterable[Candidate], analyses: Iterable[Analysis] = (),
                   verifications: Iterable[Verification] = (), routes: Iterable[Route] = (),
                   errors: Iterable[RunError] = ()) -> list[CandidateRow]:
    """Every scanned candidate's row, in the scan's order (by id). Before routing (the scan's own table) a
    candidate going on is `pending`."""
    by_a = {a.candidate_id: a for a in analyses}
    by_v = {v.candidate_id: v for v in verifications}
    by_r = {r.candidate_id: r for r in routes}
    fatal: dict[str, RunError] = {}
    for e in errors:
        if e.fatal:
            fatal.setdefault(e.candidate_id, e)
    rows = []
    for c in sorted(candidates, key=lambda c: c.id):
        a, v, r = by_a.get(c.id), by_v.get(c.id), by_r.get(c.id)
        if not c.went_on:
            tag, score, reason = NOT_ANALYZED, None, not_going_reason(pack, c)
        elif c.id in fatal:
            tag, score = ERROR, a.score if a else None
            reason = f"error at {fatal[c.id].node}: {clean(fatal[c.id].error)}"
        elif r is not None and a is not None and v is not None:
            tag, score = r.section_or_tag, a.score
            reason = _routed_reason(pack, c, a, v, tag)
        else:
            tag, score = PENDING, (a.score if a else c.preliminary_score)
            unclear = filter_reasons(pack, c)
            reason = "goes on to analysis" + (f" ({'; '.join(unclear)})" if unclear else "")
        rows.append(CandidateRow(
            candidate_id=c.id, name=clean(c.name), filters={k: str(v_) for k, v_ in c.filters.items()},
            capped=c.capped, went_on=c.went_on, verdict=a.verdict.value if a else None, score=score,
            status=v.status.value if v else None, tag=tag, reason=reason, levels=pack.thresholds.levels))
    return rows

