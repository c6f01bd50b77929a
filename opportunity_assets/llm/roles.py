"""The model roles' pure parts: prompts, what each role is shown (blinded for past dates), and how code
takes its answers in. The model never changes a number, a score, a verdict, a status upward or a route.

- Analyzer: sees the candidate's sourced inputs and the code's calculation; adds assumptions, red flags and
  a short reasoning, merged after the code's own.
- Verifier: sees only the analysis object; its findings must cite a field or number of that object, or
  they are discarded as noise; a kept finding can only move a status down (CONFIRMED → UNCERTAIN/REJECTED).
- Brief writer: words a line per brief item; a line with a number the store does not hold is replaced by
  the template line.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.grounding import numeric_leaves, unsupported_numbers
from opportunity_assets.llm.models import AnalyzerJudgment, VerifierFinding, VerifierJudgment
from opportunity_assets.records import Analysis, Candidate, ModelFinding, Status, Verification
from opportunity_assets.verifications.integrity import headline, history_summary

PROMPTS = Path(__file__).resolve().parent / "prompts"
ROLES = ("analyzer", "verifier", "brief")


@dataclass(frozen=True)
class Prompt:
    role: str
    text: str
    version: str
    """sha256 of the prompt text (12 hex): recorded with every output it produced."""


@cache
def load_prompt(role: str) -> Prompt:
    if role not in ROLES:
        raise ValueError(f"unknown model role {role!r}; expected one of {ROLES}")
    text = (PROMPTS / f"{role}.md").read_text()
    return Prompt(role=role, text=text, version=hashlib.sha256(text.encode()).hexdigest()[:12])


# ---- blinding (DESIGN §5) --------------------------------------------------------------------------------
_DATE = re.compile(r"\b(19|20)\d{2}(-\d{2}(-\d{2})?)?\b")


def alias(candidate_id: str) -> str:
    """A stable alias that says nothing about the entity: `Market-3F2A`."""
    return "Market-" + hashlib.sha256(candidate_id.encode()).hexdigest()[:4].upper()


@dataclass(frozen=True)
class Blinder:
    """For nights before the model's knowledge cutoff: no entity names, no calendar dates in any prompt.

    Names are replaced by stable aliases (and mapped back by code in answers); dates and years by
    `[date]`; windows are described as months back from the latest period."""

    active: bool
    names: tuple[tuple[str, str], ...] = ()
    """(real text, alias) pairs, longest real text first."""

    @classmethod
    def for_night(cls, as_of: date, cutoff: date, candidates: list[Candidate]) -> Blinder:
        if as_of >= cutoff:
            return cls(active=False)
        pairs = {(c.name, alias(c.id)) for c in candidates} | {(c.id, alias(c.id)) for c in candidates}
        return cls(active=True, names=tuple(sorted(pairs, key=lambda p: -len(p[0]))))

    def hide(self, text: str) -> str:
        if not self.active:
            return text
        for real, fake in self.names:
            text = re.sub(re.escape(real), fake, text, flags=re.IGNORECASE)
        return _DATE.sub("[date]", text)

    def reveal(self, text: str) -> str:
        if not self.active:
            return text
        reverse = {fake: real for real, fake in self.names}
        for fake in sorted(reverse, key=len, reverse=True):
            text = text.replace(fake, reverse[fake])
        return text


def _window(pack: CriteriaPack, metric: str) -> str:
    spec, grain = pack.metrics[metric], pack.grain.name
    if spec.agg == "derived":
        return f"computed from other metrics: {spec.expression}"
    if spec.agg == "age_days":
        return "days since the latest value"
    lo, hi = spec.window
    return f"{grain}s {lo}-{hi} back from the latest published {grain}" if hi != lo else f"{grain} {lo} back"


def analysis_view(pack: CriteriaPack, candidate: Candidate, analysis: Analysis, blinder: Blinder) -> dict[str, Any]:
    """The analysis object as a model may see it: sourced numbers (windows, not dates when blinded), the
    calculation, score, verdict, assumptions and red flags. Never the model-written reasoning."""
    numbers = {
        name: {"value": n.value, "unit": pack.metrics[name].unit, "what": pack.metrics[name].description,
               "window": _window(pack, name),
               **({} if blinder.active else {"period": n.source.period,
                                             "published_at": n.source.published_at.isoformat()})}
        for name, n in analysis.numbers.items()
    }
    return {
        "entity": blinder.hide(candidate.name),
        **({} if blinder.active else {"as_of": analysis.as_of.isoformat()}),
        "domain": pack.description,
        "numbers": numbers,
        "calculation": [{"name": s.name, "expression": s.expression, "substituted": s.substituted,
                         "value": s.value} for s in analysis.calculation],
        "score": analysis.score,
        "thresholds": {"strong": pack.thresholds.strong, "marginal": pack.thresholds.marginal},
        "verdict": analysis.verdict.value,
        "missing": analysis.missing,
        "assumptions": [blinder.hide(a) for a in analysis.assumptions],
        "red_flags": [blinder.hide(f) for f in analysis.red_flags],
    }


def verifier_view(pack: CriteriaPack, candidate: Candidate, analysis: Analysis, verification: Verification,
                  blinder: Blinder) -> dict[str, Any]:
    """What the skeptic model sees: the analysis view, the code's findings on the source data (each with its
    effect), and a compact history of each source column, both without dates or names (periods counted back)."""
    return {
        **analysis_view(pack, candidate, analysis, blinder),
        "data_findings": [{"finding": blinder.hide(headline(f, blinded=True)), "check": f.check, "effect": f.effect}
                          for f in verification.data_findings],
        "history": history_summary(pack, candidate),
    }


def _new_items(existing: list[str], added: list[str]) -> list[str]:
    seen = {a.strip().lower() for a in existing}
    out = []
    for item in added:
        if item.strip() and item.strip().lower() not in seen:
            seen.add(item.strip().lower())
            out.append(item.strip())
    return out


def merge_analyzer(analysis: Analysis, judgment: AnalyzerJudgment, blinder: Blinder) -> Analysis:
    """Code's analysis plus the model's assumptions, red flags and reasoning; nothing else can change."""
    assumptions = _new_items(analysis.assumptions, [blinder.reveal(a) for a in judgment.assumptions])
    flags = _new_items(analysis.red_flags, [blinder.reveal(f) for f in judgment.red_flags])
    reasoning = analysis.reasoning
    if judgment.reasoning.strip():
        reasoning = f"{reasoning} Model: {blinder.reveal(judgment.reasoning.strip())}"
    return analysis.model_copy(update={
        "assumptions": [*analysis.assumptions, *(f"(model) {a}" for a in assumptions)],
        "red_flags": [*analysis.red_flags, *(f"(model) {f}" for f in flags)],
        "reasoning": reasoning,
    })


# ---- verifier findings -----------------------------------------------------------------------------------
_FIELD = re.compile(r"^(numbers|calculation|history)\.(\w+)$|^(assumptions|red_flags|data_findings)\[(\d+)\]$"
                    r"|^(score|verdict)$")


def cites_the_analysis(finding: VerifierFinding, view: dict[str, Any]) -> bool:
    """A finding counts only if it cites a field that exists in the analysis view, or a number written in it."""
    cited = finding.cites.strip().strip("`")
    match = _FIELD.match(cited)
    if match:
        if match.group(1) == "numbers":
            return match.group(2) in view["numbers"]
        if match.group(1) == "calculation":
            return any(step["name"] == match.group(2) for step in view["calculation"])
        if match.group(1) == "history":
            return match.group(2) in view.get("history", {})
        if match.group(3):
            return int(match.group(4)) < len(view.get(match.group(3), []))
        return view.get(match.group(5)) is not None
    if not re.fullmatch(r"[-+]?\$?\d[\d,]*(\.\d+)?%?", cited):
        return False
    return not unsupported_numbers(cited, numeric_leaves(view), date.max)


_DOWN = {Status.CONFIRMED: 0, Status.UNCERTAIN: 1, Status.REJECTED: 2}


def _cited(cites: str) -> str:
    """What a downgrade's reason says the skeptic cited: the field it names, or "a number of the analysis". The
    reason travels to the brief, the notifications and the archive; the model's own words (any number, any
    markup, any length) stay in its finding, stored for people, and never become the reason a reader is given."""
    cited = cites.strip().strip("`")
    return cited if _FIELD.match(cited) else "a number of the analysis"


def apply_verifier(verification: Verification, judgment: VerifierJudgment, view: dict[str, Any],
                   blinder: Blinder) -> Verification:
    """Kept findings may only downgrade the code's status; uncited ones are counted as noise and dropped."""
    kept = [f for f in judgment.findings if cites_the_analysis(f, view)]
    noise = len(judgment.findings) - len(kept)
    status = verification.status
    for f in kept:
        wanted = {"note": status, "uncertain": Status.UNCERTAIN, "reject": Status.REJECTED}[f.effect]
        if _DOWN[wanted] > _DOWN[status]:
            status = wanted
    findings = [ModelFinding(check=f.check, cites=f.cites, finding=blinder.reveal(f.finding), effect=f.effect)
                for f in kept]
    update: dict[str, Any] = {"model_findings": findings, "model_noise": noise, "status": status}
    if status != verification.status:
        decisive = next(f for f in findings if f.effect in ("uncertain", "reject"))
        update["reason"] = f"{verification.reason} The skeptic model doubts {_cited(decisive.cites)}"
        if status == Status.UNCERTAIN and verification.to_resolve is None:
            update["to_resolve"] = f"settle the skeptic's point on {_cited(decisive.cites)}."
    if judgment.fatal_assumption and verification.fatal_assumption is None and kept:
        update["model_fatal_assumption"] = blinder.reveal(judgment.fatal_assumption)
    return verification.model_copy(update=update)


_WEB_ADDRESS = re.compile(r"\b[a-z][a-z0-9+.-]*://|\bwww\.|[\w.+-]+@[\w-]+\.\w", re.IGNORECASE)
"""A link in all but name (`https://…`, `ftp://…`, `www.…`, a mail address): a Markdown renderer, Slack and a mail
reader make it clickable however the line is escaped, so a model could put a link the store never held in front of
the reader."""


def acceptable_line(text: str, stored: list[float], as_of: date, names: list[str], max_words: int = 30) -> bool:
    """A brief line a model wrote is kept only if every number in it is stored, it holds no web or mail address
    (`_WEB_ADDRESS`) and it stays short."""
    return bool(text.strip()) and len(text.split()) <= max_words and not _WEB_ADDRESS.search(text) and \
        not unsupported_numbers(text, stored, as_of, names=names)
