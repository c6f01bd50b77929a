"""What the sensor chain and the schedule decide, without Dagster: which nights move on, with which runs.

The chain (DESIGN §3): a scan of `as_of` → one run over that night's candidate partitions → the brief when
every candidate going on has a verification or an error record → the notification run. Each sensor reads the
materialization records of one asset after a stored cursor, so any number of nights can be in flight at
once (a backfill) and none is dropped; a record whose run has not finished yet waits in the cursor until it
has (its blocking checks are known only then). Run keys make every request idempotent per (night, trigger).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

DONE_ERROR_NODES = ("analyze", "verify")
"""Error records that stand for a candidate's verification: its per-candidate work ended there."""


@dataclass(frozen=True)
class SensorCursor:
    """A sensor's position in one asset's materialization records, stored as JSON by the daemon."""

    after_storage_id: int = 0
    """Every record up to this storage id has been read."""
    waiting: tuple[int, ...] = ()
    """Storage ids read but not yet acted on because their run had not finished."""

    def to_json(self) -> str:
        return json.dumps({"after_storage_id": self.after_storage_id, "waiting": list(self.waiting)})

    @classmethod
    def from_json(cls, text: str | None) -> SensorCursor:
        if not text:
            return cls()
        raw = json.loads(text)
        return cls(after_storage_id=int(raw["after_storage_id"]), waiting=tuple(int(i) for i in raw["waiting"]))


@dataclass(frozen=True)
class Materialization:
    """One materialization record as the chain needs it."""

    storage_id: int
    """The record's position in the event log: increasing, so it orders records and serves as a cursor."""
    run_id: str
    """The run that materialized it."""
    partition: str
    """The record's partition key: a date for nightly assets, `<as_of>|<candidate>` for per-candidate ones."""
    timestamp: float = 0.0
    """When the record was stored, in seconds since the epoch."""

    @property
    def as_of(self) -> date:
        return date.fromisoformat(self.partition.split("|", 1)[0])


@dataclass(frozen=True)
class TickInput:
    """What one tick must act on now, and the cursor to store after it."""

    ready: tuple[Materialization, ...]
    """Records whose run has finished, oldest first."""
    cursor: SensorCursor


def split_by_run_state(cursor: SensorCursor, records: Iterable[Materialization],
                       finished_runs: Collection[str]) -> TickInput:
    """Records of finished runs are ready; the others wait in the cursor. The cursor only moves forward."""
    ready: list[Materialization] = []
    waiting: set[int] = set()
    newest = cursor.after_storage_id
    for record in sorted(records, key=lambda r: r.storage_id):
        newest = max(newest, record.storage_id)
        if record.run_id in finished_runs:
            ready.append(record)
        else:
            waiting.add(record.storage_id)
    return TickInput(ready=tuple(ready), cursor=SensorCursor(after_storage_id=newest, waiting=tuple(sorted(waiting))))


def hold(tick: TickInput, nights: Collection[date]) -> TickInput:
    """`tick` with the records of `nights` kept back: they wait in the cursor and are read again next tick, as a
    record of a run not yet finished does."""
    held = {r.storage_id for r in tick.ready if r.as_of in nights}
    return TickInput(ready=tuple(r for r in tick.ready if r.as_of not in nights),
                     cursor=SensorCursor(after_storage_id=tick.cursor.after_storage_id,
                                         waiting=tuple(sorted({*tick.cursor.waiting, *held}))))


def not_yet_briefed(tick: TickInput, briefed: Mapping[date, int]) -> TickInput:
    """`tick` without the records of a night briefed after them (`briefed`: each night's latest brief record's
    storage id): a night the command line ran whole, scan to brief, has nothing left to chain when the daemon
    starts and reads every record from the start (trial 119: each such night analyzed and briefed again). A scan
    newer than its night's brief (scanned again, or stopped before its brief) is chained as before. The records
    dropped are read: the cursor keeps its place."""
    return TickInput(ready=tuple(r for r in tick.ready if briefed.get(r.as_of, 0) < r.storage_id), cursor=tick.cursor)


@dataclass(frozen=True)
class PlannedRun:
    """A run request, before it becomes a `dagster.RunRequest`."""

    job: str
    """Name of the job to launch."""
    run_key: str
    """Idempotence key: the daemon launches one run per key and sensor, however often a tick is re-evaluated."""
    as_of: date
    """The night the run is for."""
    partition_key: str | None = None
    """The night's date for nightly jobs; None for the per-candidate job (it is targeted by `tags`)."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Run tags: the night's (`opportunity/as_of`) and, for the per-candidate run, its partition range."""


AS_OF_TAG = "opportunity/as_of"
"""Run tag naming the night on every run the chain launches (the per-candidate run has no partition tag)."""


def latest_per_night(records: Iterable[Materialization]) -> dict[date, Materialization]:
    latest: dict[date, Materialization] = {}
    for record in records:
        if record.as_of not in latest or record.storage_id > latest[record.as_of].storage_id:
            latest[record.as_of] = record
    return latest


def plan_after_scans(scans: Iterable[Materialization], keys_by_night: Mapping[date, Sequence[str]],
                     range_tags: Mapping[date, Mapping[str, str]], *, per_candidate_job: str,
                     brief_job: str) -> list[PlannedRun]:
    """After a night's scan: one run over its candidate partitions, or straight to the brief when none went on.

    `range_tags[as_of]` are the partition-range tags of that night's keys (one contiguous block)."""
    planned = []
    for as_of, scan in sorted(latest_per_night(scans).items()):
        tags = {AS_OF_TAG: as_of.isoformat()}
        if keys_by_night.get(as_of):
            planned.append(PlannedRun(job=per_candidate_job, run_key=f"candidates|{as_of}|{scan.storage_id}",
                                      as_of=as_of, tags={**range_tags[as_of], **tags}))
        else:
            planned.append(PlannedRun(job=brief_job, run_key=f"brief|{as_of}|scan-{scan.storage_id}", as_of=as_of,
                                      partition_key=as_of.isoformat(), tags=tags))
    return planned


def night_ready(going_on: Collection[str], verified: Collection[str],
                errors: Iterable[tuple[str, str]]) -> bool:
    """Every candidate going on has a verification or an error record of its per-candidate work.

    `errors`: (candidate_id, node) pairs. Errors of model-only nodes do not count: the candidate still
    needs its verification."""
    done = set(verified) | {candidate for candidate, node in errors if node in DONE_ERROR_NODES}
    return set(going_on) <= done


def plan_briefs(verifications: Iterable[Materialization], ready_nights: Collection[date], *,
                brief_job: str) -> list[PlannedRun]:
    """One brief per night and per finished run that touched it, once the night is complete in the store."""
    by_night_run: dict[tuple[date, str], Materialization] = {}
    for record in verifications:
        by_night_run.setdefault((record.as_of, record.run_id), record)
    return [PlannedRun(job=brief_job, run_key=f"brief|{as_of}|{run_id}", as_of=as_of,
                       partition_key=as_of.isoformat(), tags={AS_OF_TAG: as_of.isoformat()})
            for (as_of, run_id) in sorted(by_night_run) if as_of in ready_nights]


def plan_notifications(briefs: Iterable[Materialization], nights_with_pending: Collection[date], *,
                       notify_job: str) -> list[PlannedRun]:
    """A notification run for each newly briefed night that has something not yet delivered on a channel.

    Quiet nights (nothing to act on) and nights already delivered everywhere get no run."""
    return [PlannedRun(job=notify_job, run_key=f"notify|{as_of}|{brief.storage_id}", as_of=as_of,
                       partition_key=as_of.isoformat(), tags={AS_OF_TAG: as_of.isoformat()})
            for as_of, brief in sorted(latest_per_night(briefs).items()) if as_of in nights_with_pending]


# ---- the nightly schedule -------------------------------------------------------------------------------------

def scheduled_as_of(scheduled_at: datetime, timezone: str) -> date:
    """The night a tick scans: the calendar day before the tick, in the schedule's time zone."""
    return scheduled_at.astimezone(ZoneInfo(timezone)).date() - timedelta(days=1)


def check_schedule(hour: int, minute: int, timezone: str, *, year: int = 2025) -> None:
    """Nights are UTC-day partitions: the previous local day must be over in UTC when the tick fires.

    East of UTC, an early hour fires before that (02:00 in Tokyo is 17:00 UTC of the previous day); this
    raises naming the earliest hour that works all year, daylight saving included."""
    zone = ZoneInfo(timezone)
    day = date(year, 1, 1)
    worst = timedelta(0)
    while day.year == year:
        local = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
        ahead = datetime(day.year, day.month, day.day, tzinfo=UTC) - local.astimezone(UTC)
        worst = max(worst, ahead)
        day += timedelta(days=1)
    if worst > timedelta(0):
        offset = timedelta(hours=hour, minutes=minute) + worst
        earliest = f"{int(offset.total_seconds() // 3600):02d}:{int(offset.total_seconds() % 3600 // 60):02d}"
        raise ValueError(f"schedule {hour:02d}:{minute:02d} {timezone} fires before the previous day has ended "
                         f"in UTC (nights are UTC days); choose {earliest} or later")
