"""`notifications[as_of]`: tell people about the night's candidates to act on, once per channel.

Launched by the chain's last sensor after a brief (or materialized by hand to retry a failed channel). The work
is `step.py`'s; a channel that failed after its bounded retries turns the `channels_delivered` check red in the UI.
"""

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import dagster as dg
from dagster._core.storage.dagster_run import IN_PROGRESS_RUN_STATUSES

from opportunity_assets.metadata import check_metadata, table_value
from opportunity_assets.notify.logic import FAILED_RUN, RUNNING
from opportunity_assets.notify.step import notify_channels
from opportunity_assets.tables import notified_table
from resources.criteria import CriteriaResource
from resources.notifier import Notifier
from resources.store import ResultStore


def night_run_states(instance: dg.DagsterInstance, within: timedelta) -> Callable[[], dict[date, str]]:
    """Per night, the state of its latest run in this instance (created within `within`): `RUNNING` while one
    is in flight, `FAILED_RUN` when the latest failed (a blocking check, an error); absent otherwise."""

    def read() -> dict[date, str]:
        since = datetime.now(UTC) - within
        states: dict[date, str] = {}
        seen: set[date] = set()
        for record in instance.get_run_records(dg.RunsFilter(created_after=since), limit=2000):  # newest first
            run = record.dagster_run
            key = run.tags.get("dagster/partition") or run.tags.get("dagster/asset_partition_range_start", "")
            try:
                night = date.fromisoformat(key.split("|")[0])
            except ValueError:
                continue
            if night in seen:
                continue  # only the night's latest run counts
            seen.add(night)
            if run.status in IN_PROGRESS_RUN_STATUSES:
                states[night] = RUNNING
            elif run.status in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED):
                states[night] = FAILED_RUN
        return states

    return read


def build_notifications(nights: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    """`notifications`, partitioned by the deployment's nights (`partitions.nightly_partitions`)."""

    @dg.asset(
        partitions_def=nights,
        deps=["brief"],
        group_name="nightly_brief",
        kinds={"python"},
        check_specs=[dg.AssetCheckSpec("channels_delivered", asset="notifications", partitions_def=nights,
                                       description="Every configured channel took tonight's message (a failed "
                                                   "channel is retried when this is materialized again).")],
    )
    def notifications(context: dg.AssetExecutionContext, criteria: CriteriaResource, store: ResultStore,
                      notifier: Notifier) -> dg.MaterializeResult:
        """Tonight's act-on-these candidates (and, quieter, the needs-judgment ones) on every configured channel."""
        step = notify_channels(criteria.load(), store, notifier, date.fromisoformat(context.partition_key),
                               context.run.run_id, run_states=night_run_states(context.instance, timedelta(days=2)))
        failed = step.failed
        previous = step.previous
        if previous.passed_over:
            context.log.warning(f"earlier night(s) {', '.join(map(str, previous.passed_over))} scanned but not routed "
                                f"within {notifier.earlier_night_wait_seconds} s: new against still strong is decided "
                                f"against {previous.as_of or 'no earlier night'}")
        if step.report_error:
            context.log.warning(f"the email goes without its report: {step.report_error}")
        for r in step.rows:
            if r["channel"] in failed:
                context.log.error(f"notification on {r['channel']} failed after {r['attempts']} tries: {r['error']}")
        table = "\n".join(f"| {r['channel']} | {r['status']} | {r['attempts']} | {r['error'] or ''} |"
                          for r in step.rows)
        return dg.MaterializeResult(
            metadata={
                "act_on_these": step.act_on_these, "needs_your_judgment": step.needs_your_judgment,
                "candidates": table_value(notified_table(step.act, step.judgment, step.earlier)),
                "channels": dg.MetadataValue.md("| channel | status | tries | error |\n|---|---|---|---|\n" + table
                                                if step.rows else "Nothing to act on tonight: no message."),
                "brief_url": dg.MetadataValue.url(step.url) if step.url else "no ui_base_url configured",
                "still_strong_against": str(previous.as_of) if previous.as_of else "no earlier night: all new",
                **({"report_attached": dg.MetadataValue.path(str(step.report))} if step.report else {}),
                **({"report_not_attached": step.report_error} if step.report_error else {}),
                **({"passed_over_unrouted": ", ".join(map(str, previous.passed_over))} if previous.passed_over else {}),
            },
            check_results=[dg.AssetCheckResult(check_name="channels_delivered", passed=not failed,
                                               metadata=check_metadata(context.partition_key, {
                                                   "channels": ", ".join(str(r["channel"]) for r in step.rows)
                                                   or "none",
                                                   "failed": ", ".join(failed) or "none"}))],
        )

    return notifications
