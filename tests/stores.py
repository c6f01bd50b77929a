"""Result stores for tests, on either backend: a DuckDB file, or a new database of its own on the PostgreSQL server
the suite uses (`.ci/services.sh` starts it; OPPORTUNITY_PG_* name it, as in tests/test_postgres.py). An
unreachable server fails the test that asks for one: never skipped."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

BACKENDS = ("duckdb", "postgres")


def server_url(database: str | None = None) -> str:
    user = os.environ.get("OPPORTUNITY_PG_USER", "opportunity")
    password = os.environ.get("OPPORTUNITY_PG_PASSWORD", "opportunity")
    host = os.environ.get("OPPORTUNITY_PG_HOST", "127.0.0.1")
    port = os.environ.get("OPPORTUNITY_PG_PORT", "5432")
    return (f"postgresql://{user}:{password}@{host}:{port}/"
            f"{database or os.environ.get('OPPORTUNITY_PG_DB', 'opportunity')}")


@contextmanager
def new_database() -> Iterator[str]:
    """The URL of a new, empty database (`opportunity_store_<random>`), dropped afterwards."""
    try:
        admin = psycopg.connect(server_url(), autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL is not reachable ({exc}). Start it with `bash .ci/services.sh` (`make test` does).")
    name = f"opportunity_store_{uuid.uuid4().hex[:12]}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield server_url(name)
        finally:
            _drop(admin, name)


def _drop(admin: psycopg.Connection, name: str) -> None:
    """Drop the database, its connections with it; again a moment later where a backend the role may not end (an
    autovacuum worker on the new tables) held it (a CI run once failed so: "must be a member of the role whose
    process is being terminated")."""
    for attempt in range(20):
        try:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        except psycopg.errors.InsufficientPrivilege:
            if attempt == 19:
                raise
            time.sleep(0.5)
