"""The production instance config (deploy/dagster.yaml) on a real PostgreSQL server: a night goes through the
sensor chain with runs, events and sensor cursors stored in PostgreSQL.

The server is started by .ci/services.sh (`make test` runs it); OPPORTUNITY_PG_* name it (defaults: the role
and database that script creates on 127.0.0.1:5432). An unreachable server fails this test: never skipped."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg2
import pytest
import yaml
from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

from opportunity_assets.definitions import build_definitions
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack
from tests.daemon import QUIET, InProcessDaemon
from tests.pg import fresh_database

NIGHT = date(2011, 10, 31)


@pytest.fixture
def database() -> Iterator[dict[str, Any]]:
    """A fresh database on the test server for this test, dropped afterwards."""
    with fresh_database() as params:
        yield params


@pytest.mark.slow
def test_a_night_runs_through_the_sensor_chain_on_the_production_instance_config(
        database: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = yaml.safe_load((ROOT / "deploy" / "dagster.yaml").read_text())
    assert config["storage"]["custom"]["class"] == "PooledPostgresStorage"
    assert config["storage"]["custom"]["config"]["postgres_db"]["scheme"] == "postgresql+psycopg2"
    limits = config["run_coordinator"]["config"]["tag_concurrency_limits"]
    assert {"key": "llm", "limit": 2} in limits
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    for variable, value in (("USERNAME", database["user"]), ("PASSWORD", database["password"]),
                            ("HOST", database["host"]), ("DB", database["dbname"]), ("PORT", str(database["port"]))):
        monkeypatch.setenv(f"DAGSTER_PG_{variable}", value)
    monkeypatch.setenv("DAGSTER_HOME", str(home))

    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    settings = tmp_path / "automation.yaml"
    settings.write_text("{}")
    defs = build_definitions(criteria_path=str(pack), store_path=str(tmp_path / "results.duckdb"),
                             settings_path=str(settings))
    with dg.DagsterInstance.get() as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        held = instance.event_log_storage._engine.pool  # type: ignore[attr-defined]
        assert held.size() == 1  # connections held (dagster-postgres alone: a new one per statement)
        assert instance.run_coordinator.__class__.__name__ == "QueuedRunCoordinator"
        assert defs.resolve_job_def("scan_night").execute_in_process(
            instance=instance, partition_key=NIGHT.isoformat(), run_config=QUIET).success
        daemon = InProcessDaemon(defs, instance, tmp_path / "cursors.json")
        daemon.run_until_quiet()
        assert sorted(run.job_name for run in daemon.launched) == ["analyze_night", "brief_night", "notify_night"]
        assert instance.get_runs(dg.RunsFilter(job_name="analyze_night"))[0].tags["llm"] == "anthropic"

    with psycopg2.connect(**database) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT status, count(*) FROM runs GROUP BY status")
        assert dict(cursor.fetchall()) == {"SUCCESS": 4}
        cursor.execute("SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "
                       "AND asset_key = %s AND partition = %s", ['["brief"]', NIGHT.isoformat()])
        assert cursor.fetchone() == (1,)
        cursor.execute("SELECT count(*) FROM dynamic_partitions WHERE partitions_def_name = 'night_candidates'")
        row = cursor.fetchone()
        # the cap's 6, and Longview-Marshall: a gap in its 12-month sales, so never capped out (it goes on flagged)
        assert row is not None and row[0] == 7
    assert len((tmp_path / "outbox.jsonl").read_text().splitlines()) == 1
