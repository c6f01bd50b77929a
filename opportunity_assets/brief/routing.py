"""The router: fixed, ordered rules, first match wins. Code, never a model (seed 000).

Errors are not routed: a candidate without both an analysis and a verification is reported in the run
summary's errors instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from opportunity_assets.records import Analysis, Destination, Route, Status, Verdict, Verification


@dataclass(frozen=True)
class Rule:
    name: str
    matches: Callable[[Analysis, Verification], bool]
    destination: Destination
    section_or_tag: str


RULES: tuple[Rule, ...] = (
    Rule("insufficient_data", lambda a, v: a.verdict == Verdict.INSUFFICIENT_DATA, Destination.ARCHIVE, "data_gap"),
    Rule("rejected", lambda a, v: v.status == Status.REJECTED, Destination.ARCHIVE, "failed_verification"),
    Rule("uncertain", lambda a, v: v.status == Status.UNCERTAIN, Destination.BRIEF, "needs_your_judgment"),
    Rule("strong_confirmed", lambda a, v: a.verdict == Verdict.STRONG and v.status == Status.CONFIRMED,
         Destination.BRIEF, "act_on_these"),
    Rule("default", lambda a, v: True, Destination.ARCHIVE, "below_threshold"),
)

BRIEF_SECTIONS = ("act_on_these", "needs_your_judgment")
ARCHIVE_TAGS = ("data_gap", "failed_verification", "below_threshold")


def route(analysis: Analysis, verification: Verification) -> Route:
    if analysis.candidate_id != verification.candidate_id or analysis.as_of != verification.as_of:
        raise ValueError(f"analysis {analysis.as_of}|{analysis.candidate_id} and verification "
                         f"{verification.as_of}|{verification.candidate_id} are not the same candidate")
    rule = next(r for r in RULES if r.matches(analysis, verification))
    return Route(as_of=analysis.as_of, candidate_id=analysis.candidate_id, destination=rule.destination,
                 section_or_tag=rule.section_or_tag, rule=rule.name)
