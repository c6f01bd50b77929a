"""The Celery app a worker host runs: `celery -A opportunity_assets.celery_app worker -Q dagster -c 1`.

dagster-celery's step task (`execute_plan`) on the broker named by `OPPORTUNITY_CELERY_BROKER`, with the settings
of `distributed.worker_settings` (`OPPORTUNITY_CELERY_VISIBILITY_TIMEOUT`, default an hour). Read when the worker
starts: this module is the worker's entry point and no other code imports it. The worker also needs what a run
needs: `DAGSTER_PG_*` for the instance (each task opens it from the run's instance reference, whose
`{env: ...}` values are resolved here), `OPPORTUNITY_STORE_URL`, the model's and the channels' secrets, and this
code with the definitions the run was launched from.
"""

from __future__ import annotations

import os

from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from opportunity_assets.distributed import (
    BROKER_VARIABLE,
    DEFAULT_VISIBILITY_SECONDS,
    VISIBILITY_VARIABLE,
    worker_settings,
)

_broker = os.environ[BROKER_VARIABLE]
app = make_app({"broker": _broker, "backend": _broker,
                "config_source": worker_settings(int(os.environ.get(VISIBILITY_VARIABLE,
                                                                     DEFAULT_VISIBILITY_SECONDS)))})
execute_plan = create_task(app)
