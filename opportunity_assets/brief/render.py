"""The morning brief: a template filled by code from the store's records, under a hard word limit.

Sections: act on these / needs your judgment / run summary. Everything archived stays queryable, so the
brief can afford to be short: when it would run over the limit it names how many more items are in the
store rather than cutting a sentence in half.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from opportunity_assets.brief.routing import ARCHIVE_TAGS
from opportunity_assets.candidates.quarantine import shown_name, summary_line
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import format_score, format_value
from opportunity_assets.records import (
    MODEL_STOPPED,
    MODEL_UNREACHABLE,
    Analysis,
    Brief,
    Candidate,
    Cost,
    Route,
    RunError,
    Summary,
    Verification,
)
from opportunity_assets.text import clean, markdown
from opportunity_assets.verifications.integrity import headline

WORD_LIMIT = 400
"""The brief must stay under this many words (enforced here, checked again by an asset check)."""


def count_words(markdown: str) -> int:
    """Words a reader reads: whitespace-separated tokens with a letter or a digit in them."""
    return sum(1 for token in markdown.split() if re.search(r"[A-Za-z0-9]", token))


@dataclass(frozen=True)
class NightRecords:
    """Everything the brief reads, all from the store (never from an in-memory list of the run)."""

    as_of: date
    candidates: Sequence[Candidate]
    analyses: Sequence[Analysis]
    verifications: Sequence[Verification]
    routes: Sequence[Route]
    errors: Sequence[RunError]
    scan_report: dict[str, Any]
    judgments: Mapping[str, str] = field(default_factory=dict)
    """Per candidate, the decision of the user's latest judgment on a night up to as_of (`opportunity judge`)."""


def summarize(night: NightRecords) -> Summary:
    tags = Counter(r.section_or_tag for r in night.routes)
    return Summary(
        scanned=int(night.scan_report["scanned"]),
        passed_filters=int(night.scan_report["passed_filters"]),
        capped=int(night.scan_report["capped"]),
        analyzed=len(night.routes),
        by_tag={tag: tags.get(tag, 0) for tag in ("act_on_these", "needs_your_judgment", *ARCHIVE_TAGS)},
        errors=len({e.candidate_id for e in night.errors if e.fatal}),
        model_errors=sum(1 for e in night.errors if not e.fatal),
    )


def next_action(pack: CriteriaPack, candidate: Candidate, analysis: Analysis,
                escape: Callable[[str], str] = clean) -> str:
    """The pack's template filled in; `escape` writes the name for its channel (Markdown in the brief)."""
    fields: dict[str, str] = {"name": escape(candidate.name)}
    for name, spec in pack.metrics.items():
        number = analysis.numbers.get(name)
        fields[name] = format_value(number.value, spec.unit) if number else "n/a"
    return pack.next_action.format(**fields)


def _strongest_number(pack: CriteriaPack, analysis: Analysis) -> str:
    """The component that contributes most to the score, written as its raw value."""
    steps = {s.name: s.value for s in analysis.calculation}
    top = max(pack.formula.components, key=lambda c: c.weight * analysis.components.get(c.name, 0.0))
    return f"{top.label} {format_value(steps[top.name], top.unit)}"


def _most_sensitive(pack: CriteriaPack, v: Verification, score: float) -> str:
    """The verifier's trial that moved the score most, as the brief writes it; none where no trial moves the score
    as the brief writes scores (trial 102: "Most sensitive to trade_3y without 2012 (score → 87.4)" of a score of
    87.4, every input beyond its component's range)."""
    if not v.sensitivity:
        return "no single input"
    trial = max(v.sensitivity, key=lambda t: abs(t.score - score))
    moved = format_score(trial.score, pack.thresholds.levels)
    if moved == format_score(score, pack.thresholds.levels):
        return "no single input (no trial moves the score)"
    return f"{trial.input} {trial.change} (score → {moved})"


def red_flag_names(pack: CriteriaPack, a: Analysis) -> list[str]:
    """The pack's red flags the analysis raised, by name (the brief's "Red flags:" and the night's message)."""
    rules = {r.name for r in pack.red_flags}
    return [flag.split(":", 1)[0] for flag in a.red_flags if flag.split(":", 1)[0] in rules]


def _flags(pack: CriteriaPack, a: Analysis, v: Verification) -> str:
    """The red flags an act-on candidate carries, by name, and the data findings noted on it."""
    names = red_flag_names(pack, a)
    notes = [headline(f) for f in v.data_findings if f.effect == "note" and not f.rule.startswith("red_flag:")]
    out = f" Red flags: {', '.join(names)}." if names else ""
    return out + (f" Data note: {'; '.join(notes[:2])}." if notes else "")


def _act_line(pack: CriteriaPack, c: Candidate, a: Analysis, v: Verification, worded: str | None) -> str:
    assert a.score is not None
    return (f"- **{markdown(c.name)}** (score {format_score(a.score, pack.thresholds.levels)}): "
            f"{_strongest_number(pack, a)}. Most sensitive to {_most_sensitive(pack, v, a.score)}.{_flags(pack, a, v)} "
            f"Next: {worded or next_action(pack, c, a, markdown)}")


def unresolved(pack: CriteriaPack, a: Analysis, v: Verification) -> str:
    """Why a needs-your-judgment candidate is there, in one clause: its first doubted finding, else the input move
    that flips its verdict, else the checks the verifier could not resolve (the brief's line and the night's
    message alike)."""
    levels = pack.thresholds.levels
    flips = [t for t in v.sensitivity if t.flips]
    doubts = [f for f in v.data_findings if f.effect == "doubt"]
    if doubts and a.verdict.value == "STRONG":
        more = f" (and {len(doubts) - 1} more)" if len(doubts) > 1 else ""
        return f"doubted data: {headline(doubts[0])}{more}"
    if flips and a.score is not None:
        score = a.score
        worst = max(flips, key=lambda t: abs(t.score - score))
        return (f"{worst.input} {worst.change} turns it {worst.verdict.value} "
                f"(score → {format_score(worst.score, levels)})")
    return "; ".join(chk.finding.rstrip(".") for chk in v.checks.values() if chk.passed is None) or v.reason


def _judgment_line(pack: CriteriaPack, c: Candidate, a: Analysis, v: Verification, worded: str | None) -> str:
    levels = pack.thresholds.levels
    verdict = a.verdict.value if a.score is None else f"{a.verdict.value} {format_score(a.score, levels)}"
    return (f"- **{markdown(c.name)}** ({verdict}): {unresolved(pack, a, v)}. To resolve: "
            f"{worded or v.to_resolve or v.reason}")


def _judged_suffix(night: NightRecords, candidate_id: str) -> str:
    """Marks a candidate the user has judged. The decision only, no date: a judgment is recorded after its night,
    and no date in the brief may lie after as_of."""
    decision = night.judgments.get(candidate_id)
    return f" *(you judged: {decision})*" if decision else ""


def _summary_lines(night: NightRecords, summary: Summary) -> list[str]:
    archived = ", ".join(f"{tag} {summary.by_tag[tag]}" for tag in ARCHIVE_TAGS)
    unclear = int(night.scan_report.get("unclear", 0))
    unclear_said = f" ({unclear} with a filter UNCLEAR: its metric has no value)" if unclear else ""
    lines = [f"Scanned {summary.scanned}; passed filters {summary.passed_filters}{unclear_said}; "
             f"capped {summary.capped}; analyzed {summary.analyzed}; errors {summary.errors}. Archived: {archived}."]
    quarantined = int(night.scan_report.get("quarantined", 0))
    if quarantined:
        lines.append(summary_line(list(night.scan_report.get("quarantined_entities", [])), quarantined) + ".")
    # The first letter only: `str.capitalize` lowers the rest, and the notes name entities ("IN", "El Paso").
    lines += [_sentence(str(note)) for note in night.scan_report.get("notes", [])]
    if summary.errors:
        failed = sorted({f"{e.candidate_id} ({e.node})" for e in night.errors if e.fatal})
        lines.append("Errors: " + ", ".join(failed) + ".")
    lines += _model_stops(night.errors)
    return lines


def _model_stops(errors: Iterable[RunError]) -> list[str]:
    """Why the night stopped calling a model (a refused key, an unknown model), or got no call through (its server
    not reached), each said once with its fix, however many model error records it left: the records name the
    calls, the brief names the cause."""
    errors = list(errors)
    stops: dict[str, set[str]] = {}
    for e in errors:
        if not e.fatal and MODEL_STOPPED in e.error:
            stops.setdefault(e.error.split(MODEL_STOPPED, 1)[1], set()).add(e.node.removesuffix("_model"))
    unreachable = any(not e.fatal and e.error.endswith(MODEL_UNREACHABLE) for e in errors)
    return [f"Model calls stopped tonight ({_roles(roles)}): {markdown(stop)}." for stop, roles in sorted(stops.items())
            ] + ([f"Model calls failed tonight: {markdown(MODEL_UNREACHABLE)}."] if unreachable else [])


def _roles(roles: set[str]) -> str:
    """The model roles a stop held, in words: "the verifier's", "the analyzer's and the verifier's" (trial 93: a stop
    said "this model" and a user with three roles could not tell which)."""
    named = [f"the {role}'s" for role in sorted(roles)]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + f" and {named[-1]}"


def _sentence(note: str) -> str:
    """A scan note as a sentence of the brief: its first letter upper case, the rest as written, a full stop."""
    return note[:1].upper() + note[1:] + "."


def _section(lines: list[str], more: int, section: str, empty: str) -> list[str]:
    """Items shown, then where the rest are. It names the stored total, not the remainder: every number in
    the brief must be one the store holds."""
    out = list(lines)
    if more:
        out.append(f"- {'more' if lines else 'all'} of the {len(lines) + more} in the store: "
                   f"`opportunity archive --section {section}`")
    return out or [empty]


def _assemble(as_of: date, pack: CriteriaPack, model_mode: str, act: list[str], act_more: int,
              judge: list[str], judge_more: int, summary_lines: Iterable[str]) -> str:
    out = [f"# Morning brief — {pack.domain}, as of {as_of.isoformat()}", "", f"Model checks: {model_mode}.", "",
           "## Act on these",
           *_section(act, act_more, "act_on_these", "No STRONG, confirmed candidate tonight."),
           "", "## Needs your judgment",
           *_section(judge, judge_more, "needs_your_judgment", "Nothing tonight."),
           "", RUN_SUMMARY, *(f"- {line}" for line in summary_lines)]
    return "\n".join(out) + "\n"


RUN_SUMMARY = "## Run summary"


def run_summary(brief: str) -> str:
    """The brief's run summary section as written, its lines' names and reasons with its counts (the `brief`
    asset's `summary`: trial 96 found a JSON object of counts there, `{"by_tag": {...}, "capped": 29}`)."""
    _, found, rest = brief.partition(RUN_SUMMARY)
    return rest.split("\n## ", 1)[0].strip() if found else ""


def _cost_line(cost: Cost, model_errors: int) -> str:
    billed = f"Model: {cost.calls} calls billed ${cost.usd:.4f}"
    if cost.replayed_calls:
        billed += (f"; {cost.replayed_calls} answers replayed from the store (billed once before, "
                   f"${cost.replayed_usd:.4f}, not again)")
    return f"{billed}; model errors {model_errors}."


def render_brief(pack: CriteriaPack, night: NightRecords, model_mode: str,
                 wording: Mapping[str, str] | None = None, cost: Cost | None = None) -> tuple[Brief, Summary]:
    """The brief from the night's records. `wording`: model-worded next-action / to-resolve lines by candidate,
    already checked by code; `cost`: the night's model usage for the summary line."""
    summary = summarize(night)
    wording = wording or {}
    by_id_c = {c.id: c for c in night.candidates}
    by_id_a = {a.candidate_id: a for a in night.analyses}
    by_id_v = {v.candidate_id: v for v in night.verifications}

    def section(tag: str) -> list[str]:
        ids = [r.candidate_id for r in night.routes if r.section_or_tag == tag]
        ids.sort(key=lambda i: (-(by_id_a[i].score or 0.0), i))  # display order only: best score first
        return ids

    act_ids, judge_ids = section("act_on_these"), section("needs_your_judgment")
    act = [_act_line(pack, by_id_c[i], by_id_a[i], by_id_v[i], wording.get(i)) for i in act_ids]
    judge = [_judgment_line(pack, by_id_c[i], by_id_a[i], by_id_v[i], wording.get(i)) for i in judge_ids]
    act = [line + _judged_suffix(night, i) for line, i in zip(act, act_ids, strict=True)]
    judge = [line + _judged_suffix(night, i) for line, i in zip(judge, judge_ids, strict=True)]
    failed = {(e.candidate_id, e.node) for e in night.errors if not e.fatal}
    if model_mode.startswith("on") and night.routes and all(
            (r.candidate_id, node) in failed for r in night.routes for node in ("analyzer_model", "verifier_model")):
        model_mode = (f"on, but every model call failed tonight ({summary.model_errors} model errors): the verdicts, "
                      "checks and routes below are code's alone")
    summary_lines = _summary_lines(night, summary)
    if cost is not None and (cost.calls or cost.replayed_calls):
        summary_lines.append(_cost_line(cost, summary.model_errors))
    n_act, n_judge = len(act), len(judge)
    markdown = _assemble(night.as_of, pack, model_mode, act, 0, judge, 0, summary_lines)
    # Over the limit: drop an item from the section showing more (needs-judgment on a tie), naming how many
    # more the store holds, until the brief fits.
    while count_words(markdown) >= WORD_LIMIT and (n_judge or n_act):
        if n_judge >= n_act:
            n_judge -= 1
        else:
            n_act -= 1
        markdown = _assemble(night.as_of, pack, model_mode, act[:n_act], len(act) - n_act, judge[:n_judge],
                             len(judge) - n_judge, summary_lines)
    words = count_words(markdown)
    if words >= WORD_LIMIT:
        raise ValueError(f"brief has {words} words even without items; the limit is {WORD_LIMIT}")
    return Brief(as_of=night.as_of, markdown=markdown, words=words), summary


def names_in_brief(night: NightRecords, scanned: Iterable[str] = (), within: str | None = None) -> list[str]:
    """Every entity name and id the brief may write, in each form it writes them: the candidates going on, those
    that did not (`scanned`: the run summary names the ones the cap cut with no preliminary score) and the entities
    with quarantined rows. A name is not a number: ZIP code 98108 is a name. `within`: only the names this text
    may hold (the start of their first word is in it: every form keeps it), not a wide night's ten thousand."""
    quarantined = [str(e["entity"]) for e in night.scan_report.get("quarantined_entities", [])]
    raw = [*(n for c in night.candidates for n in (c.name, c.id)), *scanned, *quarantined]
    if within is not None:
        raw = [name for name in raw if (word := _WORD.search(name)) is None or word.group()[:8] in within]
    return sorted({form for name in raw for form in (name, clean(name), markdown(clean(name)), shown_name(name))})


_WORD = re.compile(r"[^\W_]+")
"""A run of letters and digits: what no form of a name (cleaned, escaped, cut) breaks at its start."""
