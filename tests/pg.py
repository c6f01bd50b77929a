"""A fresh database on the suite's PostgreSQL server (.ci/services.sh starts it; OPPORTUNITY_PG_* name it)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg2
import psycopg2.errors
import pytest


def server() -> dict[str, Any]:
    return {"host": os.environ.get("OPPORTUNITY_PG_HOST", "127.0.0.1"),
            "port": int(os.environ.get("OPPORTUNITY_PG_PORT", "5432")),
            "user": os.environ.get("OPPORTUNITY_PG_USER", "opportunity"),
            "password": os.environ.get("OPPORTUNITY_PG_PASSWORD", "opportunity"),
            "dbname": os.environ.get("OPPORTUNITY_PG_DB", "opportunity")}


@contextmanager
def fresh_database() -> Iterator[dict[str, Any]]:
    """Connection parameters of a new database, dropped afterwards. An unreachable server fails the test."""
    params = server()
    try:
        admin = psycopg2.connect(**params, connect_timeout=5)
    except psycopg2.OperationalError as exc:
        pytest.fail(f"PostgreSQL is not reachable at {params['host']}:{params['port']} as {params['user']} "
                    f"({exc}). Start it with `bash .ci/services.sh` (`make test` does).")
    admin.autocommit = True
    name = f"opportunity_test_{uuid.uuid4().hex[:12]}"
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield {**params, "dbname": name}
    finally:
        for attempt in range(20):  # an autovacuum worker (the superuser's) on it cannot be forced off: it ends soon
            try:
                with admin.cursor() as cursor:
                    cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                break
            except (psycopg2.errors.InsufficientPrivilege, psycopg2.errors.ObjectInUse):
                if attempt == 19:
                    raise
                time.sleep(0.25)
        admin.close()


def url(params: dict[str, Any]) -> str:
    return (f"postgresql://{params['user']}:{params['password']}@{params['host']}:{params['port']}/"
            f"{params['dbname']}")
