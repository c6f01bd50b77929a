"""The local Dagster instance's storage: Dagster's own SQLite storages, with their connections kept.

Dagster's SQLite run, event-log and schedule storages build a new SQLAlchemy engine for every statement and
close it after: each statement opens its SQLite file again and starts with an empty compiled-statement cache.
That is about 9 ms an event, and a night on the 46 areas writes ~150 of them. `PooledSqliteStorage` is the same
storage, over the same files and schema, with one engine (and its small connection pool) per database file
for the life of the process. History written with it reads the same without it, and the other way round.
A new run's event-log file is also made without loading Dagster's ~180 alembic revision scripts twice (~60 ms
a run): the same statements, taken once per process from a file Dagster's own code made in memory.

Its event-log storage answers `get_dynamic_partitions` and `has_dynamic_partition` from memory while the index
file is unchanged: Dagster queries both for each candidate partition a night records metadata for, reading every
key each time, so nights slowed with history. And it stores the batches Dagster hands it (a step's per-partition
materializations, a run's planned events) in one transaction per file, as PostgreSQL's storage does, where
SQLite's wrote event by event.

The PostgreSQL counterpart is `postgres_storage.py`, a module of its own: importing dagster-postgres costs
~0.3 s, which a process on SQLite need not pay.

What it overrides of Dagster (pinned exactly in pyproject.toml; `tests/test_instance_storage.py` runs against
it): the SQLite storages' connection context managers, `has_table`, `get_dynamic_partitions`,
`has_dynamic_partition`, `store_event_batch`, and the factories that name the concrete class.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from typing import Any

from dagster._core.definitions.events import AssetKey
from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS, BATCH_WRITABLE_EVENTS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sqlite_storage import (
    DagsterSqliteStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

_run_file_template: tuple[tuple[str, ...], tuple[str, ...]] | None = None
"""What a new run's event-log file holds (its statements, its alembic stamp), once known in this process."""

_PARTITION_KEYS = "SELECT partition FROM dynamic_partitions WHERE partitions_def_name = ? ORDER BY id"
"""Dagster's `get_dynamic_partitions` query (sql_event_log.py), keys only."""

RUN_SHARD_ENGINES = 8
"""Engines kept for per-run event-log files (one file per run), least recently used dropped first. A night
touches three runs; a long-lived webserver would otherwise keep one engine per run it ever showed."""


class _Engines:
    """One SQLAlchemy engine per SQLite file, created on first use and kept: every pinned one, and at most `limit`
    others, the least recently used dropped first. An engine's pool is SQLAlchemy's default for a SQLite file: a
    few connections, reused.

    After a fork the parent's connections are left to the parent (SQLite connections must not cross a fork):
    the child starts with engines of its own."""

    def __init__(self, limit: int | None = None, **engine_options: Any) -> None:
        self._limit = limit
        self._options = engine_options
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._pinned: set[str] = set()
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def get(self, conn_string: str, *, pinned: bool = False) -> Engine:
        with self._lock:
            if self._pid != os.getpid():
                for engine in self._engines.values():
                    engine.dispose(close=False)
                self._engines.clear()
                self._pinned.clear()
                self._pid = os.getpid()
            if conn_string not in self._engines:
                self._engines[conn_string] = create_engine(conn_string, **self._options)
            engine = self._engines[conn_string]
            if pinned:
                self._pinned.add(conn_string)
            else:
                self._engines.move_to_end(conn_string)
                self._evict()
            return engine

    def _evict(self) -> None:
        others = [key for key in self._engines if key not in self._pinned]
        while self._limit is not None and len(others) > self._limit:
            self._engines.pop(others.pop(0)).dispose()

    def __len__(self) -> int:
        return len(self._engines)

    def dispose(self) -> None:
        with self._lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()
            self._pinned.clear()


@contextmanager
def _transaction(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as conn, conn.begin():
        yield conn


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """`SqliteEventLogStorage` keeping one engine per shard: the cross-run index and the recent runs' files."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engines = _Engines(RUN_SHARD_ENGINES, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
        self._partition_keys: dict[str, tuple[int, tuple[tuple[str, ...], frozenset[str]]]] = {}
        self._watcher: tuple[int, sqlite3.Connection] | None = None
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None,  # type: ignore[override]
                          config_value: dict[str, Any]) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:  # as Dagster's: one statement at a time per storage
            engine = self._engines.get(self.conn_string_for_shard(shard), pinned=shard == INDEX_SHARD_NAME)
            if shard not in self._initialized_dbs:
                made_here = shard != INDEX_SHARD_NAME and self._create_run_file(shard)
                if not made_here:  # the index, or a file that exists: Dagster's own check (and migration)
                    self._initdb(engine)
                self._initialized_dbs.add(shard)
            with _transaction(engine) as conn:
                yield conn

    def _create_run_file(self, run_id: str) -> bool:
        """Make a new run's event-log file with what Dagster's `_initdb` puts in it: tables, indexes, alembic
        stamp, WAL. False if the file exists already (or another process made it first): `_initdb` then checks it.

        `_initdb` loads the ~180 alembic revision scripts twice for each new file (~60 ms a run); the statements
        are instead taken once per process from a file `_initdb` made in memory. The file is made under a
        temporary name and linked into place, so no process ever sees it half made."""
        path = self.path_for_shard(run_id)
        if os.path.exists(path):
            return False
        schema, stamp = self._run_file_template()
        partial = f"{path}.{os.getpid()}-{threading.get_ident()}.partial"
        try:
            with closing(sqlite3.connect(partial, isolation_level=None)) as con:
                con.execute("BEGIN")  # one commit for the whole file, not one per CREATE
                for statement in schema:
                    con.execute(statement)
                con.executemany("INSERT INTO alembic_version (version_num) VALUES (?)", [(v,) for v in stamp])
                con.execute("COMMIT")
                con.execute("PRAGMA journal_mode=WAL")
            os.link(partial, path)
        except OSError:  # FileExistsError: made meanwhile; others: a file system without hard links
            return False
        finally:
            with suppress(FileNotFoundError):
                os.unlink(partial)
        return True

    def _run_file_template(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The statements of a run's event-log file as Dagster's own `_initdb` makes it, and its alembic stamp:
        read from a file `_initdb` makes in memory, the first time in this process."""
        global _run_file_template
        if _run_file_template is None:
            memory = create_engine("sqlite://", poolclass=StaticPool)
            try:
                self._initdb(memory)
                with memory.connect() as conn:
                    schema = tuple(sql for (sql,) in conn.exec_driver_sql(
                        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"))
                    stamp = tuple(v for (v,) in conn.exec_driver_sql("SELECT version_num FROM alembic_version"))
                _run_file_template = (schema, stamp)
            finally:
                memory.dispose()
        return _run_file_template

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """What `store_event` does for each event, in one transaction on the run's file and one on the index.

        Dagster hands a step's per-partition materializations (86 a night) and a run's planned events here as
        batches; SQLite's storage wrote them one by one, each in two or three commits, reading the index's table
        columns and updating its asset's row each time. Here every event goes into both files, in the batch's
        order, and asset tags and asset check records are written as `store_event` writes them; an asset's row
        is updated by the last event of each type it has in the batch (an event's type fixes which columns it
        sets, so the row ends as it would have). A batch with events Dagster does not batch is stored event by
        event."""
        if not all(event.dagster_event_type in BATCH_WRITABLE_EVENTS for event in events):
            super().store_event_batch(events)
            return
        rows = [self._event_to_row(event) for event in events]
        for run_id in dict.fromkeys(event.run_id for event in events):
            with self.run_connection(run_id) as conn:
                conn.execute(SqlEventLogStorageTable.insert(), [row for row in rows if row["run_id"] == run_id])
        with self.index_transaction() as conn:
            inserted = conn.execute(
                SqlEventLogStorageTable.insert().returning(SqlEventLogStorageTable.c.id, sort_by_parameter_order=True),
                rows)
            stored = list(zip(events, [int(event_id) for (event_id,) in inserted], strict=True))
            asset_events = [(event, event_id) for event, event_id in stored if event.dagster_event_type in ASSET_EVENTS]
            self._store_asset_event_tags(conn, [e for e, _ in asset_events], [i for _, i in asset_events])
            for event, event_id in _last_of_each_type_per_asset(asset_events):
                self._store_asset_event(conn, event, event_id)
        for event, event_id in stored:
            if event.dagster_event_type in ASSET_CHECK_EVENTS:
                self.store_asset_check_event(event, event_id)

    def get_dynamic_partitions(self, partitions_def_name: str) -> Sequence[str]:
        """Dagster's answer, from memory while the index file has not changed since it was read (`_known_keys`)."""
        return list(self._known_keys(partitions_def_name)[0])

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        """Dagster's answer (is the key among the definition's keys), from the same memory."""
        return partition_key in self._known_keys(partitions_def_name)[1]

    def _known_keys(self, partitions_def_name: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """The definition's keys in Dagster's order, and as a set; read again only when the index file changed.

        Dagster reads every key on each `get_dynamic_partitions`, and checks a range's two ends with a query each
        on `has_dynamic_partition`; the per-candidate step makes both for each partition whose metadata it
        records (`add_asset_metadata` checks the key). A night on an instance holding 10,000 candidate partitions
        of earlier nights took 2.5 s instead of 1.1 s. SQLite's `data_version` changes with every commit to the
        file by any other connection, in any process; the connection that reads it here never writes, so no
        change goes unseen. It reads the keys too, with Dagster's query, without SQLAlchemy's row processing
        (10,000 keys in 3 ms instead of 16): every commit of an event changes the file, so a night reads them
        again several times."""
        with self._db_lock:
            watcher = self._watcher_connection()
            version = int(watcher.execute("PRAGMA data_version").fetchone()[0])
            known = self._partition_keys.get(partitions_def_name)
            if known is None or known[0] != version:
                self._check_partitions_table()
                # A commit after `version` was read may be in these keys: the next call sees a new version.
                keys = tuple(key for (key,) in watcher.execute(_PARTITION_KEYS, (partitions_def_name,)))
                known = (version, (keys, frozenset(keys)))
                self._partition_keys[partitions_def_name] = known
            return known[1]

    def _watcher_connection(self) -> sqlite3.Connection:
        if self._watcher is None or self._watcher[0] != os.getpid():
            path = self.path_for_shard(INDEX_SHARD_NAME)
            self._watcher = (os.getpid(), sqlite3.connect(path, check_same_thread=False))
        return self._watcher[1]

    def has_table(self, table_name: str) -> bool:
        engine = self._engines.get(self.conn_string_for_shard(INDEX_SHARD_NAME), pinned=True)
        with engine.connect() as conn:
            return bool(engine.dialect.has_table(conn, table_name))

    def dispose(self) -> None:
        super().dispose()
        self._engines.dispose()
        if self._watcher is not None and self._watcher[0] == os.getpid():
            self._watcher[1].close()
        self._watcher = None


def _last_of_each_type_per_asset(events: Sequence[tuple[EventLogEntry, int]]) -> list[tuple[EventLogEntry, int]]:
    """Per asset, in order of first appearance: its last event of each type, in the batch's order."""
    per_asset: dict[AssetKey | None, dict[str, tuple[int, tuple[EventLogEntry, int]]]] = {}
    for position, (event, event_id) in enumerate(events):
        dagster_event = event.get_dagster_event()
        per_asset.setdefault(dagster_event.asset_key, {})[dagster_event.event_type_value] = (
            position, (event, event_id))
    return [kept for kinds in per_asset.values() for _, kept in sorted(kinds.values(), key=lambda k: k[0])]


class _OneFileKept:
    """Dagster's one-file SQLite storages (runs, schedules), keeping their one engine. Mixed in first."""

    _conn_string: str

    def __init__(self, conn_string: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engines = _Engines()
        super().__init__(conn_string, inst_data)  # type: ignore[call-arg]  # the Dagster storage's

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value: dict[str, Any]) -> Any:
        return cls.from_local(inst_data=inst_data, **config_value)  # type: ignore[attr-defined]

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        with _transaction(self._engines.get(self._conn_string, pinned=True)) as conn:
            yield conn

    def dispose(self) -> None:
        super().dispose()  # type: ignore[misc]
        self._engines.dispose()


# (mypy: Dagster's own `from_config_value` signatures already differ between these bases)
class PooledSqliteRunStorage(_OneFileKept, SqliteRunStorage):  # type: ignore[misc]
    """`SqliteRunStorage` keeping its one engine."""


class PooledSqliteScheduleStorage(_OneFileKept, SqliteScheduleStorage):  # type: ignore[misc]
    """`SqliteScheduleStorage` keeping its one engine."""


class PooledSqliteStorage(DagsterSqliteStorage):
    """Dagster's default SQLite storage (same folders under `base_dir`), built from the pooled storages above.

    In a dagster.yaml:  storage: {custom: {module: opportunity_assets.instance_storage,
    class: PooledSqliteStorage, config: {base_dir: {env: DAGSTER_HOME}}}}"""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self.base_dir = base_dir
        self._run_storage = PooledSqliteRunStorage.from_local(_runs_directory(base_dir))
        self._event_log_storage = PooledSqliteEventLogStorage(_event_logs_directory(base_dir))
        self._schedule_storage = PooledSqliteScheduleStorage.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        super(DagsterSqliteStorage, self).__init__()  # not DagsterSqliteStorage's: it builds the stock three

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None,  # type: ignore[override]
                          config_value: dict[str, Any]) -> PooledSqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)


def pooled_storage(base_dir: str) -> dict[str, Any]:
    """The `storage` entry of an instance's config that selects `PooledSqliteStorage` in `base_dir`."""
    return {"custom": {"module": __name__, "class": PooledSqliteStorage.__name__,
                       "config": {"base_dir": base_dir}}}


def uses_pooled_storage(instance_config: dict[str, Any]) -> bool:
    """Whether a dagster.yaml (parsed) leaves the storage to Dagster's SQLite default or names this one."""
    if not {"storage", "run_storage", "event_log_storage", "schedule_storage"} & set(instance_config):
        return True
    custom = (instance_config.get("storage") or {}).get("custom") or {}
    return bool(custom.get("module") == __name__ and custom.get("class") == PooledSqliteStorage.__name__)
