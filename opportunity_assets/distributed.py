"""Nights executed on other hosts: dagster-celery's executor, chosen at wiring time, and its workers' settings.

With `OPPORTUNITY_CELERY_BROKER` set (a Redis URL, e.g. `redis://broker.internal:6379/0`), every step of the
jobs the daemon or the UI launches is a Celery task on that broker, run by whichever worker takes it
(`celery -A opportunity_assets.celery_app worker -Q dagster`, `opportunity_assets/celery_app.py`); the run's own
process only orchestrates. Unset or blank: the in-process executor, as `make run` and `make dev` use. Only the
variable's presence is looked at when the definitions are built; its value reaches the executor through Dagster's
`{env: ...}` config when a run starts, and the workers read it when they start.

What the hosts share: the Dagster instance (PostgreSQL, deploy/dagster.yaml: the run's steps write their events
there), the result store (`OPPORTUNITY_STORE_URL`), the broker, and this code with its pack and settings files.
"""

from __future__ import annotations

import os
from typing import Any

import dagster as dg

BROKER_VARIABLE = "OPPORTUNITY_CELERY_BROKER"
"""The Redis URL of the Celery broker (and of its result backend)."""
VISIBILITY_VARIABLE = "OPPORTUNITY_CELERY_VISIBILITY_TIMEOUT"
"""Seconds after which a step's message taken by a worker that never acknowledged it goes back to the queue."""
DEFAULT_VISIBILITY_SECONDS = 3600
QUEUE = "dagster"
"""dagster-celery's default queue: the workers listen on it (`-Q dagster`)."""


def broker_configured() -> bool:
    """Whether this deployment runs steps on Celery workers (the variable set and not blank)."""
    return bool(os.environ.get(BROKER_VARIABLE, "").strip())


def executor_for_environment() -> dg.ExecutorDefinition:
    """The celery executor on the configured broker, or the in-process executor when none is configured."""
    if not broker_configured():
        return dg.in_process_executor
    from dagster_celery import celery_executor

    return celery_executor.configured({"broker": {"env": BROKER_VARIABLE}, "backend": {"env": BROKER_VARIABLE}})


def worker_settings(visibility_seconds: int) -> dict[str, Any]:
    """The Celery settings of a worker: a step is never lost with its worker, and not run twice while it lives.

    A worker acknowledges a step's message only once the step has finished (`task_acks_late`), and takes one
    message at a time (`worker_prefetch_multiplier`). A worker's pool process that dies hands its message back at
    once (`task_reject_on_worker_lost`); a whole worker that dies (its host, SIGKILL) leaves the message
    unacknowledged on Redis, which another worker puts back on the queue once `visibility_seconds` have passed
    since it was taken, checking every tenth of that (at most every minute). A step must therefore finish within
    `visibility_seconds` (the default hour is far above a night's longest step, including the notifications' wait
    for an earlier night, `earlier_night_wait_seconds`): one still running then would be taken a second time."""
    sweep = max(1, min(60, visibility_seconds // 10))
    return {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_default_queue": QUEUE,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {"visibility_timeout": visibility_seconds,
                                     "unacked_restore_interval": sweep, "unacked_restore_throttle": 1},
        "result_backend_transport_options": {"visibility_timeout": visibility_seconds},
    }
