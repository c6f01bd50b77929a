"""The `notifications` step without Dagster: tonight's act-on-these candidates on every configured channel.

Each channel claims its candidates in the store's sent-log first, so nothing is sent twice; a channel that fails
after its bounded retries is recorded as failed, and the other channels still deliver.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from opportunity_assets.brief.render import next_action, red_flag_names, unresolved
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.history import last_night_within
from opportunity_assets.notify.channels import Tries
from opportunity_assets.notify.logic import (
    FAILED,
    SENT,
    ActItem,
    EarlierNight,
    JudgmentItem,
    PreviousNight,
    act_verdicts,
    brief_url,
    channel_message,
    headline,
    night_items,
    pass_over_waiting,
    previous_night,
    stopped_outcome,
)
from opportunity_assets.report.render import ReportError
from opportunity_assets.report.step import report_path, write_night_report
from resources.notifier import Notifier
from resources.store import ResultStore


def utc_now() -> datetime:
    """Naive UTC, as the sent-log stores times."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class NotifyStep:
    """What each channel did with tonight's message."""

    act_on_these: int
    needs_your_judgment: int
    rows: list[dict[str, str | int | None]]
    """Per channel: `channel`, `status` (sent, failed, already sent), `attempts`, `error`, `message` (headline)."""
    url: str | None
    """The brief in the Dagster UI, when its address is configured."""
    previous: PreviousNight
    """The night "still strong" was decided against, and the unfinished nights passed over."""
    report: Path | None = None
    """The PDF report the email channel attached."""
    report_error: str | None = None
    """Why no report was attached to an email that wanted one."""
    act: tuple[ActItem, ...] = ()
    """Tonight's act-on candidates, as the message names them."""
    judgment: tuple[JudgmentItem, ...] = ()
    """Tonight's needs-judgment candidates, as the message names them."""
    earlier: Mapping[str, str] = field(default_factory=dict)
    """The night before's act-on verdicts: an act-on candidate with the same verdict is "still strong"."""

    @property
    def failed(self) -> list[str]:
        """`channels_delivered`: channels that did not take the message."""
        return [str(r["channel"]) for r in self.rows if r["status"] == FAILED]


def earlier_nights(store: ResultStore, domain: str, as_of: date, within: timedelta,
                   run_states: Mapping[date, str]) -> list[EarlierNight]:
    """The nights the store scanned in the `within` before `as_of`, each with its runs' state in the instance."""
    return [EarlierNight(**row, runs=run_states.get(row["as_of"]))
            for row in store.earlier_nights(domain, before=as_of, since=as_of - within)]


def wait_for_previous_night(store: ResultStore, domain: str, as_of: date, *, within: timedelta,
                            wait_seconds: float, run_states: Callable[[], Mapping[date, str]] = dict,
                            poll_seconds: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> PreviousNight:
    """The night before `as_of` in the store (`previous_night`), after waiting up to `wait_seconds` for a later
    earlier night that is still running. `run_states`: each night's runs in the Dagster instance (`RUNNING`,
    `FAILED_RUN`). When the wait runs out, that night is passed over too."""
    deadline = time.monotonic() + wait_seconds
    while True:
        earlier = earlier_nights(store, domain, as_of, within, run_states())
        found = previous_night(earlier, as_of, within)
        if found.waiting_for is None:
            return found
        if time.monotonic() >= deadline:
            return pass_over_waiting(found, earlier, as_of, within)
        sleep(poll_seconds)


def notify_channels(pack: CriteriaPack, store: ResultStore, notifier: Notifier, as_of: date, run_id: str,
                    run_states: Callable[[], Mapping[date, str]] = dict) -> NotifyStep:
    """Claim, send and record tonight's message on each channel (nothing when there is nothing to act on)."""
    # the deployment's window, widened to the pack's grain as the brief's "since last night" is
    within = max(timedelta(days=notifier.still_strong_within_days), last_night_within(pack.source.grain))
    previous = wait_for_previous_night(store, pack.domain, as_of, within=within,
                                       wait_seconds=notifier.earlier_night_wait_seconds, run_states=run_states)
    with store.session():
        if store.brief(pack.domain, as_of) is None:
            raise ValueError(f"no brief stored for {pack.domain} on {as_of}: materialize brief first")
        candidates = store.candidates(pack.domain, as_of, went_on_only=True)
        analyses = store.analyses(pack.domain, as_of)
        verifications = store.verifications(pack.domain, as_of)
        by_candidate = {c.id: c for c in candidates}
        by_analysis = {a.candidate_id: a for a in analyses}
        act, judgment = night_items(
            store.routes(pack.domain, as_of), candidates, analyses, verifications,
            {a.candidate_id: next_action(pack, by_candidate[a.candidate_id], a)
             for a in analyses if a.candidate_id in by_candidate}, pack.thresholds.levels,
            red_flags={a.candidate_id: red_flag_names(pack, a) for a in analyses},
            why={v.candidate_id: unresolved(pack, by_analysis[v.candidate_id], v) for v in verifications
                 if v.candidate_id in by_analysis})
        earlier = act_verdicts(store.routes(pack.domain, previous.as_of), store.analyses(pack.domain, previous.as_of)) \
            if previous.as_of else {}
    url = brief_url(notifier.ui_base_url, as_of)
    report, report_error = None, None
    verdicts = {i.candidate_id: i.verdict for i in act}
    rows: list[dict[str, str | int | None]] = []
    for channel in notifier.channel_names() if act else []:
        claimed = store.claim_notifications(pack.domain, as_of, channel, verdicts, run_id=run_id,
                                            now=utc_now(), expiry=timedelta(seconds=notifier.claim_expiry_seconds))
        message = channel_message(pack.domain, as_of, act, judgment, claimed, earlier, url)
        if message is None:
            rows.append({"channel": channel, "status": "already sent", "attempts": 0, "error": None})
            continue
        tries = Tries()
        try:
            if channel == "email":
                report, report_error = _email_report(pack, store, as_of)
                message = replace(message, report=str(report)) if report else message
            delivery = notifier.deliver(channel, message, tries)
        except BaseException:  # a stop (Ctrl-C, SIGTERM, Dagster's interruption): the claim says how far it got
            status, error = stopped_outcome(tries.in_flight)
            store.record_notifications(pack.domain, as_of, channel, claimed, status=status, attempts=tries.begun,
                                       error=error, run_id=run_id, now=utc_now())
            raise
        status = SENT if delivery.delivered else FAILED
        store.record_notifications(pack.domain, as_of, channel, claimed, status=status, attempts=delivery.attempts,
                                   error=delivery.error, run_id=run_id, now=utc_now())
        rows.append({"channel": channel, "status": status, "attempts": delivery.attempts, "error": delivery.error,
                     "message": headline(message)})
    return NotifyStep(act_on_these=len(act), needs_your_judgment=len(judgment), rows=rows, url=url,
                      previous=previous, report=report, report_error=report_error, act=act, judgment=judgment,
                      earlier=earlier)


def _email_report(pack: CriteriaPack, store: ResultStore, as_of: date) -> tuple[Path | None, str | None]:
    """The night's PDF report beside the store, for the email to attach; (None, why) when it cannot be written
    (the message still goes, without it)."""
    try:
        return write_night_report(store, pack, as_of, report_path(store.path, pack.domain, as_of, ".pdf")), None
    except ReportError as exc:
        return None, str(exc)
