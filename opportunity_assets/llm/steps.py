"""One model step per role, as the assets call them: build the call, make it, take the answer in by code.

A failed or unaffordable call never fails the candidate: the code's record stands, and a non-fatal error
record (`analyzer_model`, `verifier_model`, `brief_model`) says what the model could not add.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Generic, TypeVar

from opportunity_assets.criteria import CriteriaPack, ModelRole
from opportunity_assets.llm.models import AnalyzerJudgment, BriefWording, VerifierJudgment
from opportunity_assets.llm.roles import (
    Blinder,
    acceptable_line,
    analysis_view,
    apply_verifier,
    load_prompt,
    merge_analyzer,
    verifier_view,
)
from opportunity_assets.records import Analysis, Candidate, RunError, Verification
from opportunity_assets.text import markdown
from resources.model import BudgetExhausted, CallSpec, ModelCallFailed, ModelReply, ModelResource
from resources.store import NIGHT_WIDE

R = TypeVar("R")


@dataclass(frozen=True)
class Judged(Generic[R]):
    record: R
    """The code's record, with what the model may add merged in (or unchanged)."""
    model_error: RunError | None
    reply: ModelReply | None


def _spec(pack: CriteriaPack, role: str, spec: ModelRole, payload: dict, output_type: type, as_of: date,
          candidate_id: str) -> CallSpec:
    return CallSpec(role=role, model=spec.model, prompt=load_prompt(role), payload=payload, output_type=output_type,
                    max_tokens=spec.max_output_tokens, max_input_tokens=spec.max_input_tokens, domain=pack.domain,
                    as_of=as_of, candidate_id=candidate_id, ceiling_usd=pack.caps.cost_ceiling_usd)


def _error(as_of: date, candidate_id: str, node: str, exc: Exception) -> RunError:
    return RunError(as_of=as_of, candidate_id=candidate_id, node=node, error=str(exc))


def judge_analysis(model: ModelResource, pack: CriteriaPack, candidate: Candidate,
                   analysis: Analysis) -> Judged[Analysis]:
    if not model.enabled():
        return Judged(analysis, None, None)
    blinder = Blinder.for_night(candidate.as_of, model.knowledge_cutoff(), [candidate])
    payload = {"role": "analyzer", "analysis": analysis_view(pack, candidate, analysis, blinder)}
    spec = _spec(pack, "analyzer", pack.models.analyzer, payload, AnalyzerJudgment, candidate.as_of, candidate.id)
    try:
        judgment, reply = model.complete(spec, AnalyzerJudgment)
    except (ModelCallFailed, BudgetExhausted) as exc:
        return Judged(analysis, _error(candidate.as_of, candidate.id, "analyzer_model", exc), None)
    return Judged(merge_analyzer(analysis, judgment, blinder), None, reply)


def judge_verification(model: ModelResource, pack: CriteriaPack, candidate: Candidate, analysis: Analysis,
                       verification: Verification) -> Judged[Verification]:
    if not model.enabled():
        return Judged(verification, None, None)
    blinder = Blinder.for_night(candidate.as_of, model.knowledge_cutoff(), [candidate])
    view = verifier_view(pack, candidate, analysis, verification, blinder)
    payload = {"role": "verifier", "analysis": view}
    spec = _spec(pack, "verifier", pack.models.verifier, payload, VerifierJudgment, candidate.as_of, candidate.id)
    try:
        judgment, reply = model.complete(spec, VerifierJudgment)
    except (ModelCallFailed, BudgetExhausted) as exc:
        return Judged(verification, _error(candidate.as_of, candidate.id, "verifier_model", exc), None)
    return Judged(apply_verifier(verification, judgment, view, blinder), None, reply)


@dataclass(frozen=True)
class BriefItem:
    candidate_id: str
    name: str
    section: str
    template: str
    """The code's line, used whenever the model's is missing or breaks a rule."""


def word_brief(model: ModelResource, pack: CriteriaPack, as_of: date, items: list[BriefItem],
               candidates: list[Candidate], stored: list[float]) -> Judged[dict[str, str]]:
    """Model-worded lines by candidate id; only lines that pass code's checks are kept."""
    if not model.enabled() or not items:
        return Judged({}, None, None)
    blinder = Blinder.for_night(as_of, model.knowledge_cutoff(), candidates)
    payload = {"role": "brief", "candidates": [
        {"candidate_id": blinder.hide(i.candidate_id), "name": blinder.hide(i.name), "section": i.section,
         "template": blinder.hide(i.template)} for i in items]}
    spec = _spec(pack, "brief", pack.models.brief, payload, BriefWording, as_of, NIGHT_WIDE)
    try:
        wording, reply = model.complete(spec, BriefWording)
    except (ModelCallFailed, BudgetExhausted) as exc:
        return Judged({}, _error(as_of, NIGHT_WIDE, "brief_model", exc), None)
    ids = {blinder.hide(i.candidate_id): i.candidate_id for i in items}
    names = [n for c in candidates for n in (c.name, c.id)]
    kept = {}
    for line in wording.lines:
        text = blinder.reveal(line.text.strip())
        if line.candidate_id in ids and acceptable_line(text, stored, as_of, names):
            kept[ids[line.candidate_id]] = markdown(text)  # the model's words are text, never the brief's markup
    return Judged(kept, None, reply)
