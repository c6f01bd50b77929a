"""The chain's sensors: each reads one asset's materialization records after its stored cursor (never
`@asset_sensor`, which drops events when several nights land between ticks) and requests the next runs.

    candidates[as_of]      → chain_after_scan          → the night's per-candidate run (or its brief)
    verifications[as_of|…] → chain_after_verifications → brief[as_of] once the store has the whole night
    brief[as_of]           → chain_after_brief         → notifications[as_of] when something is undelivered

The decisions are in `automation/logic.py`; here is only reading Dagster's records and the store.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING

import dagster as dg

from opportunity_assets.automation.logic import (
    Materialization,
    PlannedRun,
    SensorCursor,
    TickInput,
    hold,
    night_ready,
    not_yet_briefed,
    plan_after_scans,
    plan_briefs,
    plan_notifications,
    split_by_run_state,
)
from opportunity_assets.history import last_night_within
from opportunity_assets.notify.assets import night_run_states
from opportunity_assets.notify.logic import ACT_SECTION, pending, previous_night
from opportunity_assets.notify.step import earlier_nights, utc_now
from opportunity_assets.partitions import CANDIDATE_PARTITIONS, keys_of_night, night_range_tags
from opportunity_assets.run_health import chained_by_its_process
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


def _failed_blocking_check(instance: dg.DagsterInstance, run_id: str, asset_key: dg.AssetKey) -> str | None:
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        if entry.dagster_event is None:
            continue
        evaluation = entry.dagster_event.asset_check_evaluation_data
        if evaluation.asset_key == asset_key and evaluation.blocking and not evaluation.passed:
            return evaluation.check_name
    return None


def read_chain_tick(context: dg.SensorEvaluationContext, asset_key: dg.AssetKey) -> TickInput:
    """The records to act on this tick: new ones after the cursor plus earlier ones whose run has now finished
    (each of a finished run whose blocking checks on the asset passed), and the cursor to store after it.

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
    records = [Materialization(storage_id=r.storage_id, run_id=r.run_id, partition=r.partition_key,
                               timestamp=r.timestamp) for r in fetched if r.partition_key]
    run_ids = sorted({r.run_id for r in records})
    runs = instance.get_runs(dg.RunsFilter(run_ids=run_ids)) if run_ids else []
    # (a run of an `opportunity` command still alive waits too: the command chains its own night)
    in_progress = {run.run_id for run in runs if not run.is_finished or chained_by_its_process(run)}
    tick: TickInput = split_by_run_state(cursor, records, set(run_ids) - in_progress)
    blocked = {run_id: check for run_id in {r.run_id for r in tick.ready}
               if (check := _failed_blocking_check(instance, run_id, asset_key))}
    for run_id, check in sorted(blocked.items()):
        context.log.warning(f"{asset_key.to_user_string()} failed blocking check {check} in run {run_id}: "
                            "its nights stop here")
    return TickInput(ready=tuple(r for r in tick.ready if r.run_id not in blocked), cursor=tick.cursor)


def briefed_nights(context: dg.SensorEvaluationContext, tick: TickInput) -> TickInput:
    """`tick` less the records of nights briefed after them (`logic.not_yet_briefed`), said in the sensor's log."""
    briefed = {}
    for as_of in sorted({r.as_of for r in tick.ready}):
        latest = context.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("brief"), asset_partitions=[as_of.isoformat()]),
            limit=1, ascending=False).records
        if latest:
            briefed[as_of] = latest[0].storage_id
    left = not_yet_briefed(tick, briefed)
    for as_of in sorted({r.as_of for r in tick.ready} - {r.as_of for r in left.ready}):
        context.log.info(f"{as_of}: briefed after these records already (a night run whole): nothing to chain")
    return left


def hold_briefs(context: dg.SensorEvaluationContext, criteria: CriteriaResource, store: ResultStore, tick: TickInput,
                nights: Collection[date], wait: timedelta) -> TickInput:
    """`tick` with the records of those `nights` whose brief must wait for an earlier night with a run in flight
    kept back in the cursor, for up to `wait` after their latest record.

    A brief says what changed "since last night"; written while the night before is still running, it compares
    with the one before that, and says "new" where the notification, which waits
    (`notify.step.wait_for_previous_night`), says "still strong" (trial 42). `opportunity run` waits inside its
    run; under the daemon a brief run waiting would hold a slot the earlier night's own runs may be queued for, so
    the sensor holds the request instead, and a held night is read again on the next tick. When the wait runs out
    the brief goes ahead and passes over the earlier night, as a run's wait does. Only a run in flight holds (not a
    night scanned moments ago between its runs, as the notification's wait counts it): a backfill's nights, each
    verified by the same tick, would otherwise be briefed one a tick, a 12-night backfill's briefs over 12 ticks."""
    newest = {as_of: max(r.timestamp for r in tick.ready if r.as_of == as_of)
              for as_of in nights if any(r.as_of == as_of for r in tick.ready)}
    if not newest:
        return tick
    pack = criteria.load()
    within = last_night_within(pack.source.grain)
    states = night_run_states(context.instance, timedelta(days=2))()
    now = time.time()
    with store.session():
        held = {as_of for as_of, stored in newest.items() if now - stored < wait.total_seconds()
                and previous_night(earlier_nights(store, pack.domain, as_of, within, states), as_of, within,
                                   between_runs=timedelta(0)).waiting_for is not None}
    for as_of in sorted(held):
        context.log.info(f"{as_of}: its brief waits for an earlier night still running")
    return hold(tick, held)


def _requests(planned: Sequence[PlannedRun]) -> list[dg.RunRequest]:
    return [dg.RunRequest(job_name=p.job, run_key=p.run_key, partition_key=p.partition_key, tags=dict(p.tags))
            for p in planned]


def _status(running: bool) -> dg.DefaultSensorStatus:
    return dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED


def build_chain_sensors(*, per_candidate_job: Job, brief_job: Job, notify_job: Job, channels: Sequence[str],
                        claim_expiry: timedelta, interval_seconds: int, running: bool,
                        earlier_night_wait: timedelta = timedelta(0)) -> list[dg.SensorDefinition]:
    """The three sensors of the chain, targeting the given jobs; `channels`: the configured channel names;
    `earlier_night_wait`: how long a brief is held for an earlier night still running (`hold_briefs`)."""

    @dg.sensor(name="chain_after_scan", jobs=[per_candidate_job, brief_job], minimum_interval_seconds=interval_seconds,
               default_status=_status(running),
               description="After a night's scan: one run over that night's candidate partitions (or the brief "
                           "when no candidate went on).")
    def chain_after_scan(context: dg.SensorEvaluationContext, criteria: CriteriaResource,
                         store: ResultStore) -> dg.SensorResult:
        tick = briefed_nights(context, read_chain_tick(context, dg.AssetKey("candidates")))
        registered = context.instance.get_dynamic_partitions(CANDIDATE_PARTITIONS) if tick.ready else []
        keys = {record.as_of: keys_of_night(registered, record.as_of) for record in tick.ready}
        tick = hold_briefs(context, criteria, store, tick, {d for d, k in keys.items() if not k}, earlier_night_wait)
        planned = plan_after_scans(tick.ready, keys, {d: night_range_tags(k) for d, k in keys.items() if k},
                                   per_candidate_job=per_candidate_job.name, brief_job=brief_job.name)
        return dg.SensorResult(run_requests=_requests(planned), cursor=tick.cursor.to_json())

    @dg.sensor(name="chain_after_verifications", jobs=[brief_job], minimum_interval_seconds=interval_seconds,
               default_status=_status(running),
               description="The brief of a night once every candidate going on has a verification or an error "
                           "record in the store.")
    def chain_after_verifications(context: dg.SensorEvaluationContext, criteria: CriteriaResource,
                                  store: ResultStore) -> dg.SensorResult:
        tick = briefed_nights(context, read_chain_tick(context, dg.AssetKey("verifications")))

        def whole(domain: str, as_of: date) -> bool:
            going_on = [c.id for c in store.candidates(domain, as_of, went_on_only=True)]
            verified = [v.candidate_id for v in store.verifications(domain, as_of)]
            errors = [(e.candidate_id, e.node) for e in store.errors(domain, as_of)]
            if not night_ready(going_on, verified, errors):
                context.log.info(f"{as_of}: not every candidate is verified yet; waiting")
                return False
            return True

        whole_nights = _nights_where(criteria, store, tick.ready, whole)
        tick = hold_briefs(context, criteria, store, tick, whole_nights, earlier_night_wait)
        ready = whole_nights & {r.as_of for r in tick.ready}
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
