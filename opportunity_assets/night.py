"""One night in-process, through the same jobs and assets the UI materializes.

scan_night[as_of] → analyze_night over that night's candidate partitions (one run, a partition range)
→ finish_night[as_of] (brief, archive, notifications). A failed blocking check stops the night before the next
step, as it would stop the downstream steps of a single run. The night's state object is then read back from the
store.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import yaml
from dagster._core.instance.ref import InstanceRef
from filelock import FileLock

from opportunity_assets.brief.render import summarize
from opportunity_assets.brief.step import read_night
from opportunity_assets.candidates.step import night_id
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.instance_storage import pooled_storage, uses_pooled_storage
from opportunity_assets.metadata import SUMMARY
from opportunity_assets.partitions import night_keys, night_range_tags
from opportunity_assets.periods import EVERY, Grain, last_possible_night
from opportunity_assets.records import Brief, Cost, Criteria, RunState, Status, Verdict
from opportunity_assets.run_health import fail_orphaned_runs, process_tags
from opportunity_assets.stopping import STOPPED, names_an_interruption, stops_witnessed
from resources._store_errors import StoreError
from resources.criteria import CriteriaResource
from resources.store import ResultStore

_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}

DAGSTER_RUN_SETTINGS = {
    # One ASSET_MATERIALIZATION_PLANNED event per asset for a night's single-run backfill instead of one per
    # candidate partition (86 events a night on the 46 areas). The maintainers' documented opt-in
    # (dagster-io/dagster#29288); the cost: if a whole run dies, its partitions show as missing, not failed.
    # A candidate's own failure is an error record either way (DESIGN §3).
    "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS": "1",
    # A run's per-partition materializations and planned events written as one batch (on PostgreSQL and on the
    # pooled SQLite storage; Dagster's own SQLite storage writes a batch event by event).
    "DAGSTER_EVENT_BATCH_SIZE": "200",
}
"""Read by whichever process creates and executes runs: `opportunity` applies them to itself; `make dev` and the
deployment (deploy/k8s/values.yaml) set them for the webserver and the daemon."""


def prepare_in_process_runs() -> None:
    """For a process about to run nights in-process (`opportunity`, the benchmarks), once its definitions are
    built: `DAGSTER_RUN_SETTINGS` in its environment (a value already set there wins), and the ~400k objects of
    its imports moved out of the garbage collector's sight (`gc.freeze`): a full collection over them took
    ~0.2 s of each night."""
    for name, value in DAGSTER_RUN_SETTINGS.items():
        os.environ.setdefault(name, value)
    gc.freeze()


class NightFailed(RuntimeError):
    """A step of the night failed or a blocking check did not pass; the message says which and why."""


_OUTPUT_ON_THE_TERMINAL = {"module": "dagster._core.storage.noop_compute_log_manager", "class": "NoOpComputeLogManager"}
"""Compute logs of the runs `opportunity` executes in-process: their stdout and stderr stay on the terminal.
Dagster's default copies them into files for the UI's raw-log view by starting, for each stream of each run, a
`tail` and a Python watcher process: ~0.25 s of a deterministic night on two cores. The UI still shows every
event, materialization, check and error of these runs; runs the daemon or the UI launch keep their raw logs."""


def local_instance(home: str | os.PathLike[str] | None = None) -> dg.DagsterInstance:
    """The persistent instance in DAGSTER_HOME (default `var/dagster_home`), shared with `dagster dev`.

    Its own dagster.yaml applies. Where that file does not configure the storage, or names the pooled one, the
    storage is Dagster's default SQLite one in `home`, with its connections kept (`PooledSqliteStorage`); where
    it does not configure `compute_logs`, the runs' output stays on the terminal (`_OUTPUT_ON_THE_TERMINAL`); where
    it does not configure `telemetry`, Dagster's telemetry is off (`telemetry: {enabled: true}` turns it on).

    Runs of this host left STARTED by a process that is gone (killed mid-way) are marked failed, with the reason,
    one line each on stderr (`run_health.fail_orphaned_runs`)."""
    path = Path(home or os.environ.get("DAGSTER_HOME") or "var/dagster_home").resolve()
    path.mkdir(parents=True, exist_ok=True)
    config = path / "dagster.yaml"
    config.touch(exist_ok=True)
    configured = yaml.safe_load(config.read_text()) or {}
    overrides: dict[str, Any] = {}
    if uses_pooled_storage(configured):
        overrides["storage"] = pooled_storage(str(path))
    if "compute_logs" not in configured:
        overrides["compute_logs"] = _OUTPUT_ON_THE_TERMINAL
    if "telemetry" not in configured:  # no banner and no usage events unless the home's dagster.yaml asks for them
        overrides["telemetry"] = {"enabled": False}
    # Creating a new home's storage (tables, alembic stamps) is not safe in parallel: several `opportunity run`s on
    # an empty home raced to "table runs already exists" or left two alembic heads. One process creates it at a
    # time, under a cross-process lock in the home; afterwards opening is cheap and the lock is held only briefly.
    with FileLock(str(path / ".instance.lock")):
        try:
            instance = dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(path), overrides=overrides))
            instance.get_runs(limit=1)  # touches the run storage: created now, inside the lock
        except Exception as exc:  # a broken home (a half-made first run, two alembic heads, a corrupt file)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ValueError(f"the Dagster home {path} could not be opened ({first}); if an interrupted first run "
                             "left it broken, move it aside and run again to create a new one (the result store "
                             "keeps every night)") from None
    for line in fail_orphaned_runs(instance):
        print(line, file=sys.stderr)
    return instance


def _failure_message(event: dg.DagsterEvent) -> str:
    """The user code's exception (or Dagster's own, e.g. a failed blocking check) rather than the step's wrapper.
    A `dg.Failure` is a step stopping on purpose with a line for the user: its text alone, without the
    `dagster._core.definitions.events.Failure: ` its error record writes before it (trial 36's backtest). An
    interrupted step says so in words (trial 55: a backfill stopped by Ctrl-C ended "candidates:
    dagster._core.errors.DagsterExecutionInterruptedError")."""
    error = event.step_failure_data.error
    if error is None:
        return event.message or "step failed"
    cause = error.cause or error
    message = cause.message.strip()
    if names_an_interruption(cause.cls_name, message):  # (Ctrl-C: Dagster's class name was the message)
        return STOPPED
    if cause.cls_name in (dg.Failure.__name__, StoreError.__name__):  # (the store's: a full disk, trial 68)
        message = re.sub(rf"^[\w.]*\b{cause.cls_name}: ", "", message)
    return message


def execute_job(defs: dg.Definitions, job: str, instance: dg.DagsterInstance, *, partition_key: str | None = None,
                tags: dict[str, str] | None = None, ops: dict[str, Any] | None = None) -> dg.ExecuteInProcessResult:
    """Run one job in-process, quietly; a failed step or blocking check is a `NightFailed` saying which and why.
    `ops`: the run config's per-op config, if any."""
    try:
        with stops_witnessed():  # (a stop Dagster took after its last checkpoint and forgot: raised here)
            result = defs.resolve_job_def(job).execute_in_process(
                instance=instance, partition_key=partition_key, tags={**process_tags(), **(tags or {})},
                raise_on_error=False,
                run_config={**_QUIET, **({"ops": ops} if ops else {})})
    except dg.DagsterUserCodeExecutionError as exc:  # raised while loading, before any step
        raise NightFailed(f"{job}: {exc.user_exception}") from exc
    failed_checks = [_check_failure(ev) for ev in result.get_asset_check_evaluations()
                     if not ev.passed and ev.blocking]
    if failed_checks:
        raise NightFailed(f"{job}: blocking check(s) failed: {'; '.join(failed_checks)}; night stopped")
    if not result.success:
        failures = [e for e in result.all_events if e.is_step_failure]
        detail = "; ".join(f"{e.step_key}: {_failure_message(e)}" for e in failures) or _run_failure(result)
        raise NightFailed(f"{job} failed: {detail}")
    return result


def _run_failure(result: dg.ExecuteInProcessResult) -> str:
    """Why a run failed with no step failing: stopped between steps by Ctrl-C or a stop signal (Dagster's
    "Execution was interrupted unexpectedly", or the interruption as the run's error), said in words as a stopped
    step is (a backfill stopped 4 s in ended "analyze_night failed: run failed"); else Dagster's own line, or "run
    failed"."""
    failures = [e for e in result.all_events if e.is_run_failure]
    said = [e.message or "" for e in failures]
    errors = [error for e in failures if (error := getattr(e.event_specific_data, "error", None)) is not None]
    if any("interrupted" in m.lower() for m in said) or any(names_an_interruption(e.cls_name, e.message or "")
                                                             for e in errors):
        return STOPPED
    return next((m for m in said if m), "run failed")


def _check_failure(evaluation: Any) -> str:
    """A failed check in one line: its name and what it found (`metadata.SUMMARY`)."""
    name = f"{evaluation.asset_key.to_user_string()}.{evaluation.check_name}"
    said = (evaluation.metadata or {}).get(SUMMARY)
    return f"{name} ({said.value})" if said is not None and said.value else name


def run_night(defs: dg.Definitions, instance: dg.DagsterInstance, as_of: date) -> None:
    """Materialize one night: scan, per-candidate run over the night's partitions, brief and archive, then
    the notifications (exactly once per candidate and channel, whoever runs the night: this or the sensors)."""
    key = as_of.isoformat()
    execute_job(defs, "scan_night", instance, partition_key=key)
    keys = night_keys(instance, as_of)
    if keys:
        execute_job(defs, "analyze_night", instance, tags=night_range_tags(keys))
    execute_job(defs, "finish_night", instance, partition_key=key)


def resources_of(defs: dg.Definitions) -> tuple[CriteriaPack, ResultStore]:
    resources = defs.resources or {}
    criteria, store = resources["criteria"], resources["store"]
    assert isinstance(criteria, CriteriaResource) and isinstance(store, ResultStore)
    return criteria.load(), store


def state(defs: dg.Definitions, as_of: date) -> RunState:
    """The night's state object (seed 000's, field for field), read back from the store."""
    pack, store = resources_of(defs)
    night = read_night(store, pack, as_of)
    stored_brief = store.brief(pack.domain, as_of)
    everyone = store.candidates(pack.domain, as_of)
    return RunState(
        run_id=night_id(pack.domain, as_of, pack.fingerprint),
        as_of=as_of,
        criteria=Criteria(domain=pack.domain, hard_filters=[f.name for f in pack.hard_filters],
                          thresholds={"strong": pack.thresholds.strong, "marginal": pack.thresholds.marginal}),
        candidates=everyone,
        analyses=list(night.analyses),
        verifications=list(night.verifications),
        routes=list(night.routes),
        brief=Brief(as_of=as_of, markdown=stored_brief["markdown"], words=stored_brief["words"])
        if stored_brief else None,
        errors=list(night.errors),
        summary=summarize(night),
        cost=Cost.model_validate_json(stored_brief["cost"]) if stored_brief else Cost(),
        model_checks=stored_brief["model_mode"] if stored_brief else "",
    )


def first_night_of(defs: dg.Definitions) -> date:
    """The first night the definitions' partitions hold (`definitions.nights_of`: the pack's or the data's)."""
    nights = defs.resolve_job_def("scan_night").partitions_def
    assert isinstance(nights, dg.DailyPartitionsDefinition)
    return nights.start.date()


def check_night(as_of: date, first: date, today: date | None = None, *, flag: str = "--as-of") -> None:
    """A night that can be run, between `first` (`first_night_of`) and the latest that has ended, or a ValueError in
    one line saying which nights can (naming the command's `flag` that gave it)."""
    last = last_possible_night(today)
    if as_of > last:
        raise ValueError(f"{flag} {as_of} has not ended yet: the latest night that can run is {last}")
    if as_of < first:
        raise ValueError(f"{flag} {as_of} is before the first night, {first} (the first the data supports, or the "
                         "pack's `nights.start`)")


def nights_between(start: date, end: date, every: str) -> list[date]:
    if end < start:
        raise ValueError(f"--end {end} is before --start {start}")
    if every not in EVERY:
        raise ValueError(f"--every {every!r}: expected one of {', '.join(EVERY)}")
    if every == "day":
        return [start + timedelta(days=i) for i in range((end - start).days + 1)]
    grain = Grain(every.removesuffix("-end"))  # type: ignore[arg-type]
    out, period = [], grain.start(start)
    while period <= end:
        if start <= grain.end(period) <= end:
            out.append(grain.end(period))
        period = grain.back(period, -1)
    if not out:  # (trial 55: "no nights in the range", naming neither the range nor `--every`)
        raise ValueError(f"--start {start} --end {end} --every {every}: no {every} night lies in the range, the "
                         f"first after it is {grain.end(grain.start(start))}: expected a range that holds one, or "
                         "another --every")
    return out


@dataclass(frozen=True)
class NightLine:
    as_of: date
    scanned: int
    strong: int
    confirmed: int
    errors: int

    def __str__(self) -> str:
        return (f"{self.as_of}  scanned {self.scanned:3d}  STRONG {self.strong:2d}  CONFIRMED {self.confirmed:2d}  "
                f"errors {self.errors}")


def night_line(run: RunState) -> NightLine:
    return NightLine(as_of=run.as_of, scanned=run.summary.scanned,
                     strong=sum(a.verdict == Verdict.STRONG for a in run.analyses),
                     confirmed=sum(v.status == Status.CONFIRMED for v in run.verifications),
                     errors=run.summary.errors)

