"""The `notifications` step without Dagster: tonight's act-on-these candidates on every configured channel.

Each channel claims its candidates in the store's sent-log first, so nothing is sent twice; a channel that fails
after its bounded retries is recorded as failed, and the other channels still deliver.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from opportunity_assets.brief.render import next_action
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.notify.logic import (
    FAILED,
    SENT,
    brief_url,
    channel_message,
    earlier_verdicts,
    headline,
    night_items,
)
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

    @property
    def failed(self) -> list[str]:
        """`channels_delivered`: channels that did not take the message."""
        return [str(r["channel"]) for r in self.rows if r["status"] == FAILED]


def notify_channels(pack: CriteriaPack, store: ResultStore, notifier: Notifier, as_of: date,
                    run_id: str) -> NotifyStep:
    """Claim, send and record tonight's message on each channel (nothing when there is nothing to act on)."""
    with store.session():
        if store.brief(pack.domain, as_of) is None:
            raise ValueError(f"no brief stored for {pack.domain} on {as_of}: materialize brief first")
        candidates = store.candidates(pack.domain, as_of, went_on_only=True)
        analyses = store.analyses(pack.domain, as_of)
        by_candidate = {c.id: c for c in candidates}
        act, judgment = night_items(
            store.routes(pack.domain, as_of), candidates, analyses, store.verifications(pack.domain, as_of),
            {a.candidate_id: next_action(pack, by_candidate[a.candidate_id], a)
             for a in analyses if a.candidate_id in by_candidate})
        log = store.notification_log(pack.domain, up_to=as_of)
    url = brief_url(notifier.ui_base_url, as_of)
    verdicts = {i.candidate_id: i.verdict for i in act}
    rows: list[dict[str, str | int | None]] = []
    for channel in notifier.channel_names() if act else []:
        claimed = store.claim_notifications(pack.domain, as_of, channel, verdicts, run_id=run_id,
                                            now=utc_now(), expiry=timedelta(seconds=notifier.claim_expiry_seconds))
        message = channel_message(pack.domain, as_of, act, judgment, claimed,
                                  earlier_verdicts(log, as_of, channel,
                                                   timedelta(days=notifier.still_strong_within_days)), url)
        if message is None:
            rows.append({"channel": channel, "status": "already sent", "attempts": 0, "error": None})
            continue
        delivery = notifier.deliver(channel, message)
        status = SENT if delivery.delivered else FAILED
        store.record_notifications(pack.domain, as_of, channel, claimed, status=status, attempts=delivery.attempts,
                                   error=delivery.error, run_id=run_id, now=utc_now())
        rows.append({"channel": channel, "status": status, "attempts": delivery.attempts, "error": delivery.error,
                     "message": headline(message)})
    return NotifyStep(act_on_these=len(act), needs_your_judgment=len(judgment), rows=rows, url=url)
