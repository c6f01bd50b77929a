"""The nightly schedule: at a configured local time, scan the previous calendar day in that time zone.

Not `build_schedule_from_partitioned_job`: that one takes its time zone from the partitions (UTC days) and
refuses another, and the time zone must be configurable. The tick's as_of is computed the same way (the
day before the tick) by `scheduled_as_of`; `check_schedule` rejects a time that fires before that day has
ended in UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import dagster as dg

from opportunity_assets.automation.logic import AS_OF_TAG, check_schedule, scheduled_as_of
from opportunity_assets.automation.settings import ScheduleSettings

if TYPE_CHECKING:  # define_asset_job's type has no public name
    from dagster._core.definitions.target import ExecutableDefinition as Job



def build_nightly_schedule(scan_job: Job, settings: ScheduleSettings) -> dg.ScheduleDefinition:
    check_schedule(settings.hour, settings.minute, settings.timezone)
    timezone = settings.timezone

    @dg.schedule(
        name="nightly_scan",
        job=scan_job,
        cron_schedule=f"{settings.minute} {settings.hour} * * *",
        execution_timezone=timezone,
        default_status=dg.DefaultScheduleStatus.RUNNING if settings.enabled else dg.DefaultScheduleStatus.STOPPED,
        description=f"Every day at {settings.hour:02d}:{settings.minute:02d} {timezone}: scan the previous day; "
                    "the sensors take the night from there.",
    )
    def nightly_scan(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
        as_of = scheduled_as_of(context.scheduled_execution_time or datetime.now(UTC), timezone)
        return dg.RunRequest(run_key=f"scan|{as_of}", partition_key=as_of.isoformat(),
                             tags={AS_OF_TAG: as_of.isoformat()})

    return nightly_scan
