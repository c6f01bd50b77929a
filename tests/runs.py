"""Runs in a Dagster instance as other processes leave them, for tests of what reads the instance's run records."""

from __future__ import annotations

import time

import dagster as dg


@dg.op
def _noop() -> None:
    pass


@dg.job
def stand_in_job() -> None:
    """A job with nothing to do: the tests only need its runs' records."""
    _noop()


def started_run(instance: dg.DagsterInstance, tags: dict[str, str]) -> dg.DagsterRun:
    """A run that has started and not finished: STARTED, as a process killed mid-way leaves it."""
    run = instance.create_run_for_job(stand_in_job, tags=tags)
    instance.handle_new_event(dg.EventLogEntry(
        error_info=None, level="DEBUG", user_message="", run_id=run.run_id, timestamp=time.time(),
        dagster_event=dg.DagsterEvent(dg.DagsterEventType.RUN_START.value, job_name=run.job_name)))
    started = instance.get_run_by_id(run.run_id)
    assert started is not None and started.status == dg.DagsterRunStatus.STARTED
    return started
