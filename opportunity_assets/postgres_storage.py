"""The production instance's storage (deploy/dagster.yaml): dagster-postgres's, with its connections held.

dagster-postgres opens a new connection for every statement, except in dagster-webserver, which calls the
storages' `optimize_for_webserver` to hold them: a night on the 46 areas took 6.6 s, 1.2 s with them held.
What it overrides of dagster-postgres: nothing; it makes that same call in every process.
"""

from __future__ import annotations

from typing import Any

from dagster._serdes import ConfigurableClassData
from dagster_postgres import DagsterPostgresStorage
from dagster_postgres.utils import get_token_provider_from_config, pg_url_from_config


class PooledPostgresStorage(DagsterPostgresStorage):
    """dagster-postgres's storage (same config, same tables) with its connections held in every process, as
    dagster-webserver holds them (`optimize_for_webserver`: one connection kept per storage, `max_overflow` more
    at busy moments, recycled hourly), but with no statement timeout: a run's statements are not the UI's.

    In a dagster.yaml:  storage: {custom: {module: opportunity_assets.postgres_storage,
    class: PooledPostgresStorage, config: {postgres_db: {...}}}}  (deploy/dagster.yaml)"""

    HELD_CONNECTIONS_OVERFLOW = 8
    RECYCLE_SECONDS = 3600

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None,  # type: ignore[override]
                          config_value: dict[str, Any]) -> PooledPostgresStorage:
        storage = cls(inst_data=inst_data, postgres_url=pg_url_from_config(config_value),
                      should_autocreate_tables=config_value.get("should_autocreate_tables", True),
                      token_provider=get_token_provider_from_config(config_value))
        for part in (storage.run_storage, storage.event_log_storage, storage.schedule_storage):
            part.optimize_for_webserver(statement_timeout=0, pool_recycle=cls.RECYCLE_SECONDS,
                                        max_overflow=cls.HELD_CONNECTIONS_OVERFLOW)
        return storage
