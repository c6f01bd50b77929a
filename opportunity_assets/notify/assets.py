"""`notifications[as_of]`: tell people about the night's candidates to act on, once per channel.

Launched by the chain's last sensor after a brief (or materialized by hand to retry a failed channel). Each
channel claims its candidates in the store's sent-log first, so nothing is sent twice; a channel that fails
after its bounded retries is recorded as failed and the `channels_delivered` check turns red in the UI,
while the other channels still deliver.
"""

from datetime import UTC, date, datetime, timedelta

import dagster as dg

from opportunity_assets.brief.render import next_action
from opportunity_assets.notify.logic import (
    FAILED,
    SENT,
    brief_url,
    channel_message,
    earlier_verdicts,
    headline,
    night_items,
)
from opportunity_assets.partitions import nightly_partitions
from resources.criteria import CriteriaResource
from resources.notifier import Notifier
from resources.store import ResultStore


def utc_now() -> datetime:
    """Naive UTC, as the sent-log stores times."""
    return datetime.now(UTC).replace(tzinfo=None)


@dg.asset(
    partitions_def=nightly_partitions,
    deps=["brief"],
    group_name="nightly",
    kinds={"python"},
    check_specs=[dg.AssetCheckSpec("channels_delivered", asset="notifications",
                                   description="Every configured channel took tonight's message (a failed "
                                               "channel is retried when this is materialized again).")],
)
def notifications(context: dg.AssetExecutionContext, criteria: CriteriaResource, store: ResultStore,
                  notifier: Notifier) -> dg.MaterializeResult:
    """Tonight's act-on-these candidates (and, quieter, the needs-judgment ones) on every configured channel."""
    as_of = date.fromisoformat(context.partition_key)
    pack = criteria.load()
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
        claimed = store.claim_notifications(pack.domain, as_of, channel, verdicts, run_id=context.run.run_id,
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
                                   error=delivery.error, run_id=context.run.run_id, now=utc_now())
        rows.append({"channel": channel, "status": status, "attempts": delivery.attempts, "error": delivery.error,
                     "message": headline(message)})
        if not delivery.delivered:
            context.log.error(f"notification on {channel} failed after {delivery.attempts} tries: {delivery.error}")
    failed = [r["channel"] for r in rows if r["status"] == FAILED]
    table = "\n".join(f"| {r['channel']} | {r['status']} | {r['attempts']} | {r['error'] or ''} |" for r in rows)
    return dg.MaterializeResult(
        metadata={
            "act_on_these": len(act), "needs_your_judgment": len(judgment),
            "channels": dg.MetadataValue.md("| channel | status | tries | error |\n|---|---|---|---|\n" + table
                                            if rows else "Nothing to act on tonight: no message."),
            "brief_url": dg.MetadataValue.url(url) if url else "no ui_base_url configured",
        },
        check_results=[dg.AssetCheckResult(check_name="channels_delivered", passed=not failed,
                                           metadata={"failed": ", ".join(map(str, failed)) or "none"})],
    )
