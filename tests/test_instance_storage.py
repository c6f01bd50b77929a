"""The instance storages with their connections kept: same history as Dagster's own, bounded, fork-safe, fresh."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import date
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.events import BATCH_WRITABLE_EVENTS, DagsterEventType
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.local_compute_log_manager import LocalComputeLogManager
from dagster._core.storage.noop_compute_log_manager import NoOpComputeLogManager
from sqlalchemy import event

from opportunity_assets import instance_storage
from opportunity_assets import night as nights
from opportunity_assets.definitions import build_definitions
from opportunity_assets.instance_storage import (
    RUN_SHARD_ENGINES,
    PooledSqliteEventLogStorage,
    PooledSqliteRunStorage,
    uses_pooled_storage,
)
from opportunity_assets.partitions import CANDIDATE_PARTITIONS
from tests.conftest import PACK, ROOT

NIGHT = date(2009, 12, 31)


def _history(instance: dg.DagsterInstance) -> dict[str, object]:
    """What the UI shows of the instance: runs, each asset's materialized partitions, the candidate partitions."""
    assets = ("candidates", "analyses", "verifications", "brief", "archive", "notifications")
    return {
        "runs": sorted((r.job_name, r.status.value) for r in instance.get_runs()),
        "materialized": {a: sorted(instance.get_materialized_partitions(dg.AssetKey(a))) for a in assets},
        "partitions": sorted(instance.get_dynamic_partitions(CANDIDATE_PARTITIONS)),
    }


@pytest.mark.slow
def test_history_written_with_kept_connections_reads_the_same_with_dagsters_own_storage(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    defs = build_definitions(criteria_path=str(PACK), store_path=str(tmp_path / "results.duckdb"))
    with nights.local_instance(home) as pooled:
        assert type(pooled.event_log_storage) is PooledSqliteEventLogStorage
        nights.run_night(defs, pooled, NIGHT)
        written = _history(pooled)
    assert len(written["runs"]) == 3 and written["partitions"]  # type: ignore[arg-type]

    (home / "dagster.yaml").write_text(yaml.safe_dump({"storage": {"sqlite": {"base_dir": str(home)}}}))
    with dg.DagsterInstance.from_config(str(home)) as stock:
        assert type(stock.event_log_storage) is SqliteEventLogStorage
        assert _history(stock) == written
        nights.run_night(defs, stock, NIGHT)  # and the other way round: a night written by Dagster's own
        rewritten = _history(stock)

    (home / "dagster.yaml").write_text("")
    with nights.local_instance(home) as pooled_again:
        assert _history(pooled_again) == rewritten
        assert len(rewritten["runs"]) == 6  # type: ignore[arg-type]


def test_one_engine_per_file_kept_and_the_per_run_files_bounded(tmp_path: Path) -> None:
    storage = PooledSqliteEventLogStorage(str(tmp_path / "runs"))
    runs = [f"run-{i}" for i in range(RUN_SHARD_ENGINES + 3)]
    for run_id in runs:
        with storage.run_connection(run_id) as conn:
            conn.exec_driver_sql("SELECT 1")
    with storage.index_connection():
        pass
    assert len(storage._engines) == RUN_SHARD_ENGINES + 1

    engine_of = storage._engines.get
    recent, evicted = storage.conn_string_for_shard(runs[-1]), storage.conn_string_for_shard(runs[0])
    assert engine_of(recent) is engine_of(recent)
    before = set(map(id, storage._engines._engines.values()))
    assert id(engine_of(evicted)) not in before  # an evicted file gets a new engine
    assert len(storage._engines) == RUN_SHARD_ENGINES + 1

    storage.dispose()
    assert len(storage._engines) == 0


def _file_schema(path: Path) -> tuple[list[tuple[str, str, str]], list[tuple[str]], str]:
    with closing(sqlite3.connect(path)) as con:
        return (con.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall(),
                con.execute("SELECT version_num FROM alembic_version").fetchall(),
                con.execute("PRAGMA journal_mode").fetchone()[0])


def test_a_new_run_file_is_what_dagster_itself_would_make(tmp_path: Path) -> None:
    with SqliteEventLogStorage(str(tmp_path / "stock")).run_connection("run-a"):
        pass
    with PooledSqliteEventLogStorage(str(tmp_path / "pooled")).run_connection("run-a"):
        pass
    stock = _file_schema(tmp_path / "stock" / "run-a.db")
    assert _file_schema(tmp_path / "pooled" / "run-a.db") == stock
    assert stock[1] and stock[2] == "wal"


def test_storages_creating_the_same_run_file_at_once_make_one(tmp_path: Path) -> None:
    storages = [PooledSqliteEventLogStorage(str(tmp_path)) for _ in range(6)]
    barrier = threading.Barrier(len(storages))

    def create(storage: PooledSqliteEventLogStorage) -> int:
        barrier.wait()
        with storage.run_connection("run-a") as conn:
            return len(conn.exec_driver_sql("SELECT version_num FROM alembic_version").fetchall())

    with ThreadPoolExecutor(len(storages)) as pool:
        assert list(pool.map(create, storages)) == [1] * len(storages)  # one stamp, no "already exists"


def test_a_forked_process_opens_its_own_connections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = PooledSqliteEventLogStorage(str(tmp_path / "runs"))
    with storage.index_connection():
        pass
    parents = storage._engines.get(storage.conn_string_for_shard("index"), pinned=True)
    parents_pool = parents.pool
    monkeypatch.setattr(instance_storage.os, "getpid", lambda: -1)
    childs = storage._engines.get(storage.conn_string_for_shard("index"), pinned=True)
    assert childs is not parents
    assert parents_pool.checkedin() == 1  # the parent's connection is left open, for the parent


def test_which_instance_configs_get_the_pooled_storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert uses_pooled_storage({})
    assert uses_pooled_storage({"run_coordinator": {"module": "m", "class": "C"}})
    assert uses_pooled_storage(yaml.safe_load((ROOT / "deploy" / "dagster.local.yaml").read_text()))
    assert not uses_pooled_storage(yaml.safe_load((ROOT / "deploy" / "dagster.yaml").read_text()))
    assert not uses_pooled_storage({"storage": {"sqlite": {"base_dir": "x"}}})
    assert not uses_pooled_storage({"event_log_storage": {"module": "m", "class": "C"}})

    # dagster.local.yaml names its folder by $DAGSTER_HOME; an explicit home wins over a different $DAGSTER_HOME
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    (home / "dagster.yaml").write_text((ROOT / "deploy" / "dagster.local.yaml").read_text())
    monkeypatch.setenv("DAGSTER_HOME", str(elsewhere))
    with nights.local_instance(home) as instance:
        assert type(instance.run_storage) is PooledSqliteRunStorage
    assert (home / "history" / "runs.db").exists() and not elsewhere.exists()


def test_runs_of_opportunity_leave_their_output_on_the_terminal_unless_the_home_says_otherwise(tmp_path: Path) -> None:
    with nights.local_instance(tmp_path / "default") as instance:
        assert type(instance.compute_log_manager) is NoOpComputeLogManager
    home = tmp_path / "captured"
    home.mkdir()
    (home / "dagster.yaml").write_text(yaml.safe_dump({"compute_logs": {
        "module": "dagster._core.storage.local_compute_log_manager", "class": "LocalComputeLogManager",
        "config": {"base_dir": str(home / "logs")}}}))
    with nights.local_instance(home) as instance:
        assert type(instance.compute_log_manager) is LocalComputeLogManager
        assert type(instance.event_log_storage) is PooledSqliteEventLogStorage  # the storage is still pooled


def test_partition_keys_are_read_again_exactly_when_the_file_changed(tmp_path: Path) -> None:
    ours, another_process = (PooledSqliteEventLogStorage(str(tmp_path)) for _ in range(2))
    reads: list[str] = []  # statements on the index that read the keys or the table (not `data_version`)

    def traced(sql: str) -> None:
        if "dynamic_partitions" in sql:
            reads.append(sql)

    index = ours._engines.get(ours.conn_string_for_shard("index"), pinned=True)
    event.listen(index, "before_cursor_execute", lambda _c, _cur, sql, *_: traced(sql))
    ours._watcher_connection().set_trace_callback(traced)

    def keys() -> list[str]:
        reads.clear()
        return list(ours.get_dynamic_partitions("night_candidates"))

    assert keys() == [] and reads
    assert keys() == [] and not reads  # nothing committed since: no query
    another_process.add_dynamic_partitions("night_candidates", ["2015-08-30|austin", "2015-08-30|dallas"])
    assert keys() == ["2015-08-30|austin", "2015-08-30|dallas"] and reads
    another_process.delete_dynamic_partition("night_candidates", "2015-08-30|austin")
    assert keys() == ["2015-08-30|dallas"]
    ours.add_dynamic_partitions("night_candidates", ["2015-08-31|austin"])  # its own writes too
    assert keys() == ["2015-08-30|dallas", "2015-08-31|austin"]
    assert keys() == ["2015-08-30|dallas", "2015-08-31|austin"] and not reads

    def has(key: str) -> bool:
        reads.clear()
        return ours.has_dynamic_partition("night_candidates", key)

    assert has("2015-08-31|austin") and not has("2015-08-30|austin") and not reads
    another_process.add_dynamic_partitions("night_candidates", ["2015-08-30|austin"])
    assert has("2015-08-30|austin") and reads
    another_process.delete_dynamic_partition("night_candidates", "2015-08-31|austin")
    assert not has("2015-08-31|austin")
    assert not has("2015-08-31|austin") and not reads
    another_process.add_dynamic_partitions("night_candidates", ["2015-09-30|abilene", "2015-08-31|austin"])
    assert keys() == SqliteEventLogStorage.get_dynamic_partitions(ours, "night_candidates")  # Dagster's own answer
    assert keys()[-2:] == ["2015-09-30|abilene", "2015-08-31|austin"]  # in the order they were added


def _tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table of a SQLite file, in rowid order, without the columns the database stamps itself."""
    with closing(sqlite3.connect(path)) as con:
        tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        dump = {}
        for table in tables:
            columns = ", ".join(f'"{c[1]}"' for c in con.execute(f"PRAGMA table_info({table})")
                                if c[1] not in ("create_timestamp", "update_timestamp", "migration_completed"))
            dump[table] = con.execute(f"SELECT {columns} FROM {table} ORDER BY rowid").fetchall()
        return dump


def _a_runs_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[EventLogEntry]:
    """The events of one run over five partitions of two checked assets, as Dagster records them (with a planned
    event per partition, whatever an earlier test left in the environment)."""
    monkeypatch.delenv("DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS", raising=False)
    areas = dg.DynamicPartitionsDefinition(name="areas")

    @dg.multi_asset(partitions_def=areas, can_subset=True, backfill_policy=dg.BackfillPolicy.single_run(),
                    specs=[dg.AssetSpec("scores"), dg.AssetSpec("reviews", deps=["scores"])],
                    check_specs=[dg.AssetCheckSpec("sane", asset="scores"), dg.AssetCheckSpec("sane", asset="reviews")])
    def score_and_review(context):  # type: ignore[no-untyped-def]  # (string annotations upset Dagster)
        for key in context.partition_keys:
            context.add_asset_metadata({"score": len(key)}, asset_key="scores", partition_key=key)
        yield dg.MaterializeResult(asset_key="scores", tags={"dagster/data_version": "v1"},
                                   check_results=[dg.AssetCheckResult(asset_key="scores", check_name="sane",
                                                                      passed=True)])
        yield dg.MaterializeResult(asset_key="reviews", check_results=[
            dg.AssetCheckResult(asset_key="reviews", check_name="sane", passed=False)])

    keys = ["abilene", "amarillo", "austin", "beaumont", "brazoria"]
    with dg.DagsterInstance.ephemeral(tempdir=str(tmp_path / "recorded")) as instance:
        instance.add_dynamic_partitions("areas", keys)
        result = dg.materialize([score_and_review], instance=instance, tags={
            "dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]})
        return list(instance.all_logs(result.run_id))


def _store(storage: SqliteEventLogStorage, units: list[list[EventLogEntry]], *, batched: bool) -> None:
    for unit in units:
        if batched and len(unit) > 1:
            storage.store_event_batch(unit)
        else:
            for e in unit:
                storage.store_event(e)
    storage.dispose()


def _same_files(stock: Path, pooled: Path) -> None:
    files = sorted(p.name for p in stock.glob("*.db"))
    assert files == sorted(p.name for p in pooled.glob("*.db")) and "index.db" in files
    for name in files:
        assert _tables(pooled / name) == _tables(stock / name), name


def test_batched_events_are_stored_row_for_row_as_dagster_stores_them_one_by_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = _a_runs_events(tmp_path, monkeypatch)
    # as Dagster hands them over: each run of consecutive batchable events is one batch
    units: list[list[EventLogEntry]] = []
    for e in events:
        if units and e.dagster_event_type in BATCH_WRITABLE_EVENTS and units[-1][-1].dagster_event_type in \
                BATCH_WRITABLE_EVENTS:
            units[-1].append(e)
        else:
            units.append([e])
    assert sorted(len(u) for u in units if len(u) > 1) == [5, 5, 12]  # planned (+ checks'); two materializations
    _store(SqliteEventLogStorage(str(tmp_path / "stock")), units, batched=False)
    _store(PooledSqliteEventLogStorage(str(tmp_path / "pooled")), units, batched=True)
    _same_files(tmp_path / "stock", tmp_path / "pooled")

    # a batch mixing assets and event types, into new files: the assets' rows are made in the same order and
    # end with the same values (each type of event sets its own columns: materialization, run, timestamp)
    def of(kind: DagsterEventType, asset: str | None) -> list[EventLogEntry]:
        return [e for e in events if e.dagster_event_type == kind and (
            asset is None or e.get_dagster_event().asset_key == dg.AssetKey(asset))]

    planned, made = DagsterEventType.ASSET_MATERIALIZATION_PLANNED, DagsterEventType.ASSET_MATERIALIZATION
    mixed = [of(planned, "scores")[0], of(made, "reviews")[0], of(made, "reviews")[1], of(made, "scores")[0],
             of(planned, "scores")[1], of(DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED, None)[0]]
    _store(SqliteEventLogStorage(str(tmp_path / "stock_mixed")), [mixed], batched=False)
    _store(PooledSqliteEventLogStorage(str(tmp_path / "pooled_mixed")), [mixed], batched=True)
    _same_files(tmp_path / "stock_mixed", tmp_path / "pooled_mixed")
    assert [row[1] for row in _tables(tmp_path / "pooled_mixed" / "index.db")["asset_keys"]] == [
        '["scores"]', '["reviews"]']


def test_a_batch_with_events_dagster_does_not_batch_is_stored_event_by_event(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = _a_runs_events(tmp_path, monkeypatch)
    pooled = PooledSqliteEventLogStorage(str(tmp_path / "pooled"))
    pooled.store_event_batch(events)  # run start, step events, check evaluations, ...
    pooled.dispose()
    _store(SqliteEventLogStorage(str(tmp_path / "stock")), [events], batched=False)
    _same_files(tmp_path / "stock", tmp_path / "pooled")


def test_the_local_instance_keeps_telemetry_off_unless_its_home_turns_it_on(tmp_path: Path) -> None:
    from opportunity_assets.night import local_instance

    assert local_instance(tmp_path / "new").telemetry_enabled is False
    (tmp_path / "on").mkdir()
    (tmp_path / "on" / "dagster.yaml").write_text("telemetry:\n  enabled: true\n")
    assert local_instance(tmp_path / "on").telemetry_enabled is True


HOME_RACES, RACING_PROCESSES = 3, 4
"""`test_parallel_first_use_of_a_new_home_creates_it_once`: empty homes, each opened by this many processes at once."""


def test_parallel_first_use_of_a_new_home_creates_it_once(tmp_path: Path) -> None:
    """Four processes open the same empty home at once, three times over: without the creation lock this failed
    every time here ("table runs already exists", alembic errors); with it, every process opens the home."""
    import subprocess
    import sys

    code = ("import sys; from opportunity_assets.night import local_instance; "
            "local_instance(sys.argv[1]).get_runs(limit=1)")
    for attempt in range(HOME_RACES):
        home = tmp_path / f"home{attempt}"
        procs = [subprocess.Popen([sys.executable, "-c", code, str(home)], stderr=subprocess.PIPE, text=True)
                 for _ in range(RACING_PROCESSES)]
        errors = [p.communicate()[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * RACING_PROCESSES, errors


def test_a_broken_home_is_one_line_with_the_fix(tmp_path: Path) -> None:
    from opportunity_assets.night import local_instance

    local_instance(tmp_path / "home")
    (tmp_path / "home" / "history" / "runs.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(ValueError, match="could not be opened") as exc:
        local_instance(tmp_path / "home")
    assert "move it aside" in str(exc.value) and "\n" not in str(exc.value)
