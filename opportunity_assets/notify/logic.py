"""What a night's notification says, in each channel's format, and who still has to be told. No I/O here.

A message goes out only when the night has candidates to act on; the needs-judgment ones ride along in a
quieter section. Exactly once per (night, candidate, channel): a channel sends only the candidates it could
claim in the sent-log (never sent, failed before, or claimed by a run that died). A candidate that was to act
on, with the same verdict, on the night before (the latest earlier night the store has routed, within a window)
is marked "still strong" instead of being announced as new: decided from the store by night order, so nights run
out of order or in parallel mark it as a run in order would (`previous_night` waits for an earlier night still
running).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from opportunity_assets.formatting import format_score
from opportunity_assets.records import Analysis, Candidate, Route, Verification
from opportunity_assets.text import slack

ACT_SECTION = "act_on_these"
JUDGMENT_SECTION = "needs_your_judgment"
OUTBOX = "outbox"
"""The channel that is always on: a local JSON-lines file."""

CLAIMED, SENT, FAILED = "claimed", "sent", "failed"
"""Sent-log statuses: a run is sending it / it was delivered / every try failed."""

SLACK_ITEMS = 40
"""Act-on items written as their own Slack block (Slack allows 50 blocks per message)."""


@dataclass(frozen=True)
class ActItem:
    """A candidate to act on: STRONG and confirmed by the verifier."""

    candidate_id: str
    name: str
    """The candidate's name as scanned."""
    score: float
    """The analysis's score, 0-100."""
    verdict: str
    """The analysis's verdict (STRONG)."""
    status: str
    """The verification's status (CONFIRMED)."""
    next_action: str
    """The pack's next-action line for this candidate, as the brief writes it."""
    still_strong: bool = False
    """To act on, with the same verdict, on the night before (`previous_night`)."""
    levels: tuple[float, ...] = ()
    """The pack's thresholds, which the score is written on its own side of (`format_score`)."""
    red_flags: tuple[str, ...] = ()
    """The pack's red flags it carries, by name, as the brief's line names them (trial 96: the message dropped
    them)."""


@dataclass(frozen=True)
class JudgmentItem:
    """A candidate that needs a person's judgment (the verifier was UNCERTAIN)."""

    candidate_id: str
    name: str
    verdict: str
    """The analysis's verdict (any: the verifier's doubt is what sends it here)."""
    score: float | None
    """None when the verdict is INSUFFICIENT_DATA."""
    to_resolve: str
    """What would resolve it, in one line."""
    levels: tuple[float, ...] = ()
    """As `ActItem.levels`: a MARGINAL 59.96 under a strong of 60 is no "MARGINAL 60.0"."""
    why: str = ""
    """Why it needs judgment, as the brief's line says it (`brief.render.unresolved`: the doubted finding, the input
    that flips it); trial 96: the message said only what would resolve it."""


@dataclass(frozen=True)
class NightMessage:
    """One night's message for one channel."""

    domain: str
    """The criteria pack's domain."""
    as_of: date
    """The night."""
    act: tuple[ActItem, ...]
    """Candidates this channel sends tonight, best score first."""
    judgment: tuple[JudgmentItem, ...]
    """The night's needs-your-judgment candidates (the quieter section), best score first."""
    brief_url: str | None
    """The night's brief in the Dagster UI, when a base URL is configured."""
    report: str | None = None
    """The night's morning report (PDF), attached by the email channel."""

    @property
    def new(self) -> tuple[ActItem, ...]:
        return tuple(i for i in self.act if not i.still_strong)

    @property
    def still_strong(self) -> tuple[ActItem, ...]:
        return tuple(i for i in self.act if i.still_strong)


@dataclass(frozen=True)
class SentLogEntry:
    """One row of the sent-log: what happened to (night, candidate, channel)."""

    as_of: date
    candidate_id: str
    channel: str
    """outbox, slack, webhook or email."""
    verdict: str
    """The candidate's verdict when it was claimed."""
    status: str
    """claimed, sent or failed."""
    updated_at: datetime
    """Naive UTC."""


def brief_url(base_url: str | None, as_of: date) -> str | None:
    """The brief's partition page in the Dagster UI (its Markdown metadata is on it)."""
    if not base_url:
        return None
    return f"{base_url.rstrip('/')}/assets/brief?view=partitions&partition={quote(as_of.isoformat())}"


def night_items(routes: Iterable[Route], candidates: Iterable[Candidate], analyses: Iterable[Analysis],
                verifications: Iterable[Verification],
                next_actions: Mapping[str, str], levels: tuple[float, ...] = (),
                red_flags: Mapping[str, Sequence[str]] | None = None, why: Mapping[str, str] | None = None,
                ) -> tuple[tuple[ActItem, ...], tuple[JudgmentItem, ...]]:
    """The night's act-on and needs-judgment candidates from the store's records, best score first; `levels`: the
    pack's thresholds, for writing their scores; `red_flags` and `why`, by candidate: the red flags an act-on one
    carries and why a needs-judgment one is there, as the brief says them."""
    red_flags, why = red_flags or {}, why or {}
    names = {c.id: c.name for c in candidates}
    by_a = {a.candidate_id: a for a in analyses}
    by_v = {v.candidate_id: v for v in verifications}
    act: list[ActItem] = []
    judgment: list[JudgmentItem] = []
    for r in routes:
        a, v = by_a.get(r.candidate_id), by_v.get(r.candidate_id)
        if a is None or v is None:
            continue
        name = names.get(r.candidate_id, r.candidate_id)
        if r.section_or_tag == ACT_SECTION and a.score is not None:
            act.append(ActItem(candidate_id=r.candidate_id, name=name, score=a.score, verdict=a.verdict.value,
                               status=v.status.value, next_action=next_actions.get(r.candidate_id, ""),
                               levels=levels, red_flags=tuple(red_flags.get(r.candidate_id, ()))))
        elif r.section_or_tag == JUDGMENT_SECTION:
            judgment.append(JudgmentItem(candidate_id=r.candidate_id, name=name, verdict=a.verdict.value,
                                         score=a.score, to_resolve=v.to_resolve or v.reason, levels=levels,
                                         why=why.get(r.candidate_id, "")))
    act.sort(key=lambda i: (-i.score, i.candidate_id))
    judgment.sort(key=lambda i: (-(i.score if i.score is not None else -1.0), i.candidate_id))
    return tuple(act), tuple(judgment)


# ---- exactly-once bookkeeping --------------------------------------------------------------------------------

def claimable(existing: Mapping[str, SentLogEntry], wanted: Iterable[str], now: datetime,
              expiry: timedelta) -> list[str]:
    """Candidates this run may send on the channel: never logged, failed before, or claimed by a run that has
    not reported for longer than `expiry` (it died between claiming and recording)."""
    out = []
    for candidate_id in sorted(set(wanted)):
        entry = existing.get(candidate_id)
        if (entry is None or entry.status == FAILED
                or (entry.status == CLAIMED and now - entry.updated_at > expiry)):
            out.append(candidate_id)
    return out


STOPPED_UNSENT = "stopped (Ctrl-C or a stop signal) before it was sent: the next run sends it"
STOPPED_SENDING = ("stopped (Ctrl-C or a stop signal) while sending: it may have arrived, so it is not sent again "
                   "before its claim expires (claim_expiry_seconds)")


def stopped_outcome(in_flight: bool) -> tuple[str, str]:
    """The sent-log's status and error for a claim whose run was stopped mid-delivery. No try in flight (stopped
    before the first, between tries or while the email's report was written): `failed`, so the run the stop's line
    asks for sends it (trial 109: it stayed `claimed`, the run again skipped it as sent and exited 0, and the
    message never came). A try in flight: still `claimed`, as a crash leaves it: the receiver may have it."""
    return (CLAIMED, STOPPED_SENDING) if in_flight else (FAILED, STOPPED_UNSENT)


def unresolved_claim(claimed_at: datetime, expiry: timedelta) -> str:
    """What a command says of a claim another run left `claimed` (killed or stopped while sending, kill -9 or OOM
    or a stop mid-request): the receiver may have the message, so it is not sent again before the claim expires,
    and only by a run then (trial 109: the run again said nothing and exited 0, as if it had been sent)."""
    return (f"a run stopped or killed while sending it (claimed {claimed_at:%Y-%m-%d %H:%M:%S} UTC): whether it "
            f"arrived is unknown, and it is not sent again before its claim expires (claim_expiry_seconds): run the "
            f"same command after {claimed_at + expiry:%Y-%m-%d %H:%M:%S} UTC to send it if it never came")


def pending(act_ids: Collection[str], channels: Iterable[str], log: Iterable[SentLogEntry], as_of: date,
            now: datetime, expiry: timedelta) -> set[tuple[str, str]]:
    """(candidate, channel) pairs of the night that a notification run would still send."""
    by_channel: dict[str, dict[str, SentLogEntry]] = {}
    for entry in log:
        if entry.as_of == as_of:
            by_channel.setdefault(entry.channel, {})[entry.candidate_id] = entry
    return {(candidate, channel) for channel in channels
            for candidate in claimable(by_channel.get(channel, {}), act_ids, now, expiry)}


RUNNING, FAILED_RUN = "running", "failed"
"""Run states of a night in the Dagster instance: a run of it is in flight / its latest run failed."""

BETWEEN_RUNS = timedelta(minutes=2)
"""A night scanned this recently, with no run in flight, is between two of its runs (a sensor tick, the run
queue) rather than abandoned."""


@dataclass(frozen=True)
class EarlierNight:
    """A night before tonight that the store has scanned."""

    as_of: date
    scanned_seconds_ago: float
    """Since its latest scan was written."""
    routed: bool
    """Its brief was written after that scan: its routes are final."""
    runs: str | None = None
    """`RUNNING`, `FAILED_RUN`, or None (no run of it known to this instance)."""


@dataclass(frozen=True)
class PreviousNight:
    """What tonight's "still strong" is decided against."""

    as_of: date | None
    """The latest earlier night in the window the store has routed; None: there is none, tonight all is new."""
    waiting_for: date | None = None
    """A later earlier night, scanned but not yet routed and still running: decide once it is routed."""
    passed_over: tuple[date, ...] = ()
    """Later earlier nights scanned and never routed (their run died, stopped at a check, or outlasted the wait):
    decided without them."""


def previous_night(earlier: Iterable[EarlierNight], as_of: date, within: timedelta,
                   between_runs: timedelta = BETWEEN_RUNS) -> PreviousNight:
    """The night before `as_of`, by night order, among `earlier`: the latest one within `within` that is routed.
    A later one not yet routed is still running, so wait for it, while a run of it is in flight or it was scanned
    within `between_runs`; one whose latest run failed (a blocking check, an error) or that was left long ago is
    passed over, and named."""
    passed_over: list[date] = []
    for night in sorted(earlier, key=lambda n: n.as_of, reverse=True):
        if not as_of - within <= night.as_of < as_of:
            continue
        if night.routed:
            return PreviousNight(night.as_of, passed_over=tuple(passed_over))
        if night.runs == RUNNING or (night.runs != FAILED_RUN
                                     and night.scanned_seconds_ago < between_runs.total_seconds()):
            return PreviousNight(None, waiting_for=night.as_of, passed_over=tuple(passed_over))
        passed_over.append(night.as_of)
    return PreviousNight(None, passed_over=tuple(passed_over))


def pass_over_waiting(found: PreviousNight, earlier: Iterable[EarlierNight], as_of: date,
                      within: timedelta) -> PreviousNight:
    """When the wait has run out: the night it waited for is passed over, and the search goes on before it."""
    waited = found.waiting_for
    rest = previous_night([n for n in earlier if waited is None or n.as_of < waited], as_of, within)
    return PreviousNight(rest.as_of, passed_over=tuple(dict.fromkeys(
        (*found.passed_over, *((waited,) if waited else ()), *rest.passed_over))))


def act_verdicts(routes: Iterable[Route], analyses: Iterable[Analysis]) -> dict[str, str]:
    """Per candidate to act on in a night's routes, its verdict: tonight's items with the same verdict are
    "still strong"."""
    verdicts = {a.candidate_id: a.verdict.value for a in analyses}
    return {r.candidate_id: verdicts[r.candidate_id] for r in routes
            if r.section_or_tag == ACT_SECTION and r.candidate_id in verdicts}


def channel_message(domain: str, as_of: date, act: Sequence[ActItem], judgment: Sequence[JudgmentItem],
                    claimed: Collection[str], earlier: Mapping[str, str], url: str | None) -> NightMessage | None:
    """The message one channel sends: its claimed candidates, still-strong ones marked; None if nothing."""
    items = tuple(replace(i, still_strong=earlier.get(i.candidate_id) == i.verdict)
                  for i in act if i.candidate_id in claimed)
    if not items:
        return None
    return NightMessage(domain=domain, as_of=as_of, act=items, judgment=tuple(judgment), brief_url=url)


# ---- formats -------------------------------------------------------------------------------------------------

def headline(m: NightMessage) -> str:
    parts = [f"{len(m.new)} new"] + ([f"{len(m.still_strong)} still strong"] if m.still_strong else [])
    return f"{m.domain}, as of {m.as_of.isoformat()}: {len(m.act)} to act on ({', '.join(parts)})"


def _flagged(i: ActItem) -> str:
    return f" Red flags: {', '.join(i.red_flags)}." if i.red_flags else ""


def _act_text(i: ActItem) -> str:
    mark = "still strong" if i.still_strong else "new"
    return (f"{i.name} — score {format_score(i.score, i.levels)} ({i.verdict}, {i.status}; {mark}).{_flagged(i)} "
            f"Next: {i.next_action}")


def _judgment_text(i: JudgmentItem) -> str:
    verdict = i.verdict if i.score is None else f"{i.verdict} {format_score(i.score, i.levels)}"
    return f"{i.name} ({verdict}): {i.why}. To resolve: {i.to_resolve}" if i.why else \
        f"{i.name} ({verdict}): {i.to_resolve}"


def plain_text(m: NightMessage) -> str:
    lines = [headline(m), "", "Act on these:", *(f"- {_act_text(i)}" for i in m.act)]
    if m.judgment:
        lines += ["", "Needs your judgment:", *(f"- {_judgment_text(i)}" for i in m.judgment)]
    if m.brief_url:
        lines += ["", f"The brief: {m.brief_url}"]
    return "\n".join(lines) + "\n"


def _act_json(i: ActItem) -> dict[str, Any]:
    return {"candidate_id": i.candidate_id, "name": i.name, "score": i.score, "verdict": i.verdict,
            "status": i.status, "still_strong": i.still_strong, "next_action": i.next_action,
            "red_flags": list(i.red_flags)}


def _judgment_json(i: JudgmentItem) -> dict[str, Any]:
    return {"candidate_id": i.candidate_id, "name": i.name, "verdict": i.verdict, "score": i.score,
            "why": i.why, "to_resolve": i.to_resolve}


def webhook_payload(m: NightMessage) -> dict[str, Any]:
    """The generic JSON webhook's body."""
    return {"type": "opportunity.night", "domain": m.domain, "as_of": m.as_of.isoformat(), "summary": headline(m),
            "act_on_these": [_act_json(i) for i in m.act],
            "needs_your_judgment": [_judgment_json(i) for i in m.judgment], "brief_url": m.brief_url}


def _slack_escape(text: str) -> str:
    return slack(text)


def slack_payload(m: NightMessage) -> dict[str, Any]:
    """A Slack incoming-webhook message in Block Kit: one section per candidate to act on, the needs-judgment
    ones in a context block (smaller, grey), a button to the brief. `text` is the notification fallback."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": f"Act on these — {m.as_of.isoformat()}"[:150]}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": _slack_escape(headline(m))}]},
    ]
    for i in m.act[:SLACK_ITEMS]:
        mark = "_still strong_" if i.still_strong else "*new*"  # our markup, around escaped text
        text = (f"*{_slack_escape(i.name)}* — score {format_score(i.score, i.levels)} ({i.verdict}, {i.status}) · "
                f"{mark}{' ' + _slack_escape(_flagged(i).strip()) if i.red_flags else ''}\n"
                f"Next: {_slack_escape(i.next_action)}")
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:2900]}})
    if len(m.act) > SLACK_ITEMS:
        blocks.append({"type": "context", "elements": [
            {"type": "mrkdwn", "text": f"and {len(m.act) - SLACK_ITEMS} more in the brief"}]})
    if m.judgment:
        text = "Needs your judgment: " + "; ".join(_judgment_text(i) for i in m.judgment)
        blocks += [{"type": "divider"},
                   {"type": "context", "elements": [{"type": "mrkdwn", "text": _slack_escape(text)[:2900]}]}]
    if m.brief_url:
        blocks.append({"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "Open the brief"}, "url": m.brief_url}]})
    return {"text": headline(m), "blocks": blocks}


def email_content(m: NightMessage) -> tuple[str, str]:
    """(subject, plain-text body); the body names the attached report."""
    attached = f"\nThe morning report is attached: {PurePath(m.report).name}\n" if m.report else ""
    return f"[opportunity] {headline(m)}", plain_text(m) + attached


def outbox_record(m: NightMessage) -> dict[str, Any]:
    """One line of the outbox file: the JSON payload and the text a person would read."""
    return {**webhook_payload(m), "text": plain_text(m)}
