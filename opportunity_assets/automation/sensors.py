"""The chain's sensors: each reads one asset's materialization records after its stored cursor (never
`@asset_sensor`, which drops events when several nights land between ticks) and requests the next runs.

    candidates[as_of]      → chain_after_scan          → the night's per-candidate run (or its brief)
    verifications[as_of|…] → chain_after_verifications → brief[as_of] once the store has the whole night
    brief[as_of]           → chain_after_brief         → notifications[as_of] when something is undelivered

The decisions are in `automation/logic.py`; here is only reading Dagster's records and the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

import dagster as dg

from opportunity_assets.automation.logic import (
    Materialization,
    PlannedRun,
    SensorCursor,
    TickInput,
    night_ready,
    plan_after_scans,
    plan_briefs,
    plan_notifications,
    split_by_run_state,
)
from opportunity_assets.notify.logic import ACT_SECTION, pending
from opportunity_assets.notify.step import utc_now
from opportunity_assets.partitions import CANDIDATE_PARTITIONS, keys_of_night, night_range_tags
from resources.criteria import CriteriaResource
from resources.store import ResultStore

if TYPE_CHECKING:  # define_asset_job's type has no public name
    from dagster._core.definitions.target import ExecutableDefinition as Job

RECORDS_PER_TICK = 500


def _nights_where(criteria: CriteriaResource, store: ResultStore, ready: Sequence[Materialization],
                  holds: Callable[[str, date], bool]) -> set[date]:
    """The nights among `ready` records for which `holds(domain, as_of)`, read in one store session."""
    nights = sorted({r.as_of for r in ready})
    if not nights:
        return set()
    domain = criteria.load().domain
    with store.session():
        return {as_of for as_of in nights if holds(domain, as_of)}
"""Materialization records read per tick; a longer backlog is read over the next ticks."""


@dataclass(frozen=True)
class ChainTick:
    """What one sensor tick acts on."""

    ready: tuple[Materialization, ...]
    """Records of finished runs whose blocking checks on the asset passed."""
    cursor: SensorCursor
    """The cursor to store after this tick."""


def _failed_blocking_check(instance: dg.DagsterInstance, run_id: str, asset_key: dg.AssetKey) -> str | None:
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        if entry.dagster_event is None:
            continue
        evaluation = entry.dagster_event.asset_check_evaluation_data
        if evaluation.asset_key == asset_key and evaluation.blocking and not evaluation.passed:
            return evaluation.check_name
    return None


def read_chain_tick(context: dg.SensorEvaluationContext, asset_key: dg.AssetKey) -> ChainTick:
    """The records to act on this tick: new ones after the cursor plus earlier ones whose run has now finished.

    A record of a run that failed a blocking check on the asset stops its night here, as in a single run."""
    instance = context.instance
    cursor = SensorCursor.from_json(context.cursor)
    fetched = list(instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset_key, after_storage_id=cursor.after_storage_id),
        limit=RECORDS_PER_TICK, ascending=True).records)
    if cursor.waiting:
        fetched += instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=asset_key, storage_ids=list(cursor.waiting)),
            limit=len(cursor.waiting)).records
    records = [Materialization(storage_id=r.storage_id, run_id=r.run_id, partition=r.partition_key)
               for r in fetched if r.partition_key]
    run_ids = sorted({r.run_id for r in records})
    runs = instance.get_runs(dg.RunsFilter(run_ids=run_ids)) if run_ids else []
    in_progress = {run.run_id for run in runs if not run.is_finished}
    tick: TickInput = split_by_run_state(cursor, records, set(run_ids) - in_progress)
    blocked = {run_id: check for run_id in {r.run_id for r in tick.ready}
               if (check := _failed_blocking_check(instance, run_id, asset_key))}
    for run_id, check in sorted(blocked.items()):
        context.log.warning(f"{asset_key.to_user_string()} failed blocking check {check} in run {run_id}: "
                            "its nights stop here")
    return ChainTick(ready=tuple(r for r in tick.ready if r.run_id not in blocked), cursor=tick.cursor)


def _requests(planned: Sequence[PlannedRun]) -> list[dg.RunRequest]:
    return [dg.RunRequest(job_name=p.job, run_key=p.run_key, partition_key=p.partition_key, tags=dict(p.tags))
            for p in planned]


def _status(running: bool) -> dg.DefaultSensorStatus:
    return dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED


def build_chain_sensors(*, per_candidate_job: Job, brief_job: Job, notify_job: Job, channels: Sequence[str],
                        claim_expiry: timedelta, interval_seconds: int,
                        running: bool) -> list[dg.SensorDefinition]:
    """The three sensors of the chain, targeting the given jobs; `channels`: the configured channel names."""

    @dg.sensor(name="chain_after_scan", jobs=[per_candidate_job, brief_job], minimum_interval_seconds=interval_seconds,
               default_status=_status(running),
               description="After a night's scan: one run over that night's candidate partitions (or the brief "
                           "when no candidate went on).")
    def chain_after_scan(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        tick = read_chain_tick(context, dg.AssetKey("candidates"))
        registered = context.instance.get_dynamic_partitions(CANDIDATE_PARTITIONS) if tick.ready else []
        keys = {record.as_of: keys_of_night(registered, record.as_of) for record in tick.ready}
        planned = plan_after_scans(tick.ready, keys, {d: night_range_tags(k) for d, k in keys.items() if k},
                                   per_candidate_job=per_candidate_job.name, brief_job=brief_job.name)
        return dg.SensorResult(run_requests=_requests(planned), cursor=tick.cursor.to_json())

    @dg.sensor(name="chain_after_verifications", jobs=[brief_job], minimum_interval_seconds=interval_seconds,
               default_status=_status(running),
               description="The brief of a night once every candidate going on has a verification or an error "
                           "record in the store.")
    def chain_after_verifications(context: dg.SensorEvaluationContext, criteria: CriteriaResource,
                                  store: ResultStore) -> dg.SensorResult:
        tick = read_chain_tick(context, dg.AssetKey("verifications"))

        def whole(domain: str, as_of: date) -> bool:
            going_on = [c.id for c in store.candidates(domain, as_of, went_on_only=True)]
            verified = [v.candidate_id for v in store.verifications(domain, as_of)]
            errors = [(e.candidate_id, e.node) for e in store.errors(domain, as_of)]
            if not night_ready(going_on, verified, errors):
                context.log.info(f"{as_of}: not every candidate is verified yet; waiting")
                return False
            return True

        ready = _nights_where(criteria, store, tick.ready, whole)
        planned = plan_briefs(tick.ready, ready, brief_job=brief_job.name)
        return dg.SensorResult(run_requests=_requests(planned), cursor=tick.cursor.to_json())

    @dg.sensor(name="chain_after_brief", jobs=[notify_job], minimum_interval_seconds=interval_seconds,
               default_status=_status(running),
               description="Notify a briefed night's act-on-these candidates on every channel not yet delivered. "
                           "Quiet nights send nothing.")
    def chain_after_brief(context: dg.SensorEvaluationContext, criteria: CriteriaResource,
                          store: ResultStore) -> dg.SensorResult:
        tick = read_chain_tick(context, dg.AssetKey("brief"))

        def undelivered(domain: str, as_of: date) -> bool:
            act = [r.candidate_id for r in store.routes(domain, as_of) if r.section_or_tag == ACT_SECTION]
            return bool(pending(act, channels, store.notification_log(domain, as_of=as_of), as_of, utc_now(),
                                claim_expiry))

        with_pending = _nights_where(criteria, store, tick.ready, undelivered)
        planned = plan_notifications(tick.ready, with_pending, notify_job=notify_job.name)
        return dg.SensorResult(run_requests=_requests(planned), cursor=tick.cursor.to_json())

    return [chain_after_scan, chain_after_verifications, chain_after_brief]
