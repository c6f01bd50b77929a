"""The result store's shared backend: PostgreSQL (psycopg 3), for runs on several processes or machines.

Concurrency is the server's: each operation is one transaction on a connection of this process's own small
pool, and nothing is locked on this side. The notification claims lock the rows they read
(`SELECT ... FOR UPDATE`) and insert new claims with `ON CONFLICT DO NOTHING`, so of two workers claiming one
(night, candidate, channel) exactly one gets it. The store's SQL is written with DuckDB's placeholders (`?`,
`$name`); they become psycopg's (`%s`, `%(name)s`) here.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

from opportunity_assets.text import masked_url
from resources._store_errors import STORE_URL_VARIABLE, StoreError

LOCK_ROWS = " FOR UPDATE"
"""Appended to the claims' SELECT: the rows read stay locked until the claiming transaction ends."""

_IDLE_KEPT = 4
"""Connections kept open per store and process between transactions (a new one costs ~15 ms)."""
_SCHEMA_LOCK = 7_354_100_214
"""The advisory lock that makes one process at a time create or migrate a database's schema."""

_guard = threading.Lock()
_idle: dict[str, list[psycopg.Connection[Any]]] = {}
_pid = os.getpid()
_schema_ready: set[str] = set()
_TOKENS = re.compile(r"'(?:[^']|'')*'|\?|\$([A-Za-z_]\w*)|%")


def described(url: str) -> str:
    """The URL without its password, for messages, however it is written (`user:password@host` without a scheme,
    a `password=` setting: `text.masked_url`); a value that is no URL is not shown at all (it may be a password)."""
    shown = masked_url(url)
    if shown is not None:
        return shown
    return url if re.fullmatch(r"postgres(ql)?://[^@]*", url) else "(a value that is no URL: not shown)"


def _dialect(statement: str) -> str:
    """A schema statement for PostgreSQL: text compares and sorts byte by byte (`COLLATE "C"`), as in DuckDB, so
    that every ORDER BY gives the same order on both (a database's own collation may sort `collin-county` after
    `college-station`). An added column is added only where it is missing: `ALTER TABLE ... ADD COLUMN IF NOT
    EXISTS` takes the table's exclusive lock even when the column exists, and a process migrating while another
    writes the night's tables deadlocked (two Celery workers scanning two nights at once)."""
    statement = re.sub(r"\bVARCHAR\b", 'VARCHAR COLLATE "C"', statement)
    added = re.fullmatch(r"ALTER TABLE (\w+) ADD COLUMN IF NOT EXISTS (\w+) (.+)", statement)
    if added is None:
        return statement
    table, column, kind = added.groups()
    return (f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = "
            f"current_schema() AND table_name = '{table}' AND column_name = '{column}') THEN "
            f"ALTER TABLE {table} ADD COLUMN {column} {kind}; END IF; END $$")


@functools.lru_cache(maxsize=1024)
def _pyformat(sql: str) -> str:
    """DuckDB's placeholders as psycopg's; a literal `%` doubled. Quoted literals are left as they are."""
    def swap(token: re.Match[str]) -> str:
        text = token.group(0)
        if text == "?":
            return "%s"
        if token.group(1):
            return f"%({token.group(1)})s"
        return text.replace("%", "%%")

    return _TOKENS.sub(swap, sql)


class _Connection:
    """A psycopg connection that takes the store's SQL: `execute(sql, params)` returns the cursor."""

    def __init__(self, con: psycopg.Connection[Any]) -> None:
        self._con = con

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> psycopg.Cursor[Any]:
        return self._con.execute(_pyformat(sql), params or ())  # () too: `%%` is read as `%` only with params


def _opened(url: str) -> psycopg.Connection[Any]:
    if not re.match(r"postgres(ql)?://", url):
        raise StoreError(f"{STORE_URL_VARIABLE}: {described(url)!r} is not a PostgreSQL URL; expected "
                         "postgresql://USER:PASSWORD@HOST:PORT/DATABASE")
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10, application_name="opportunity-scanner")
    except psycopg.Error as exc:
        raise StoreError(f"{STORE_URL_VARIABLE}: the result store at {described(url)} cannot be opened "
                         f"({_first_line(exc)})") from None


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0].strip()


def _checkout(url: str) -> psycopg.Connection[Any]:
    """An idle connection of this process to the store, or a new one. A forked child opens its own."""
    global _pid
    with _guard:
        if _pid != os.getpid():  # the parent's connections are the parent's (psycopg never closes them here)
            _idle.clear()
            _schema_ready.clear()
            _pid = os.getpid()
        idle = _idle.setdefault(url, [])
        while idle:
            con = idle.pop()
            if not con.closed and not con.broken:
                return con
    return _opened(url)


def _give_back(url: str, con: psycopg.Connection[Any]) -> None:
    with _guard:
        idle = _idle.setdefault(url, [])
        if con.closed or con.broken or len(idle) >= _IDLE_KEPT:
            con.close()
        else:
            idle.append(con)


@contextmanager
def transaction(url: str, schema: Sequence[str | Callable[[Callable[[str], Any]], None]]) -> Iterator[_Connection]:
    """One transaction on the store's database (its schema created or migrated by the first use in this
    process, one process at a time)."""
    con = _checkout(url)
    try:
        if url not in _schema_ready:
            try:
                with con.transaction():
                    con.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
                    for statement in schema:  # a migration is given an execute in this dialect
                        if callable(statement):
                            statement(lambda sql: con.execute(_dialect(sql)))
                        else:
                            con.execute(_dialect(statement))
            except psycopg.Error as exc:  # e.g. a role that may not create tables there
                raise StoreError(f"{STORE_URL_VARIABLE}: the result store's tables cannot be made in "
                                 f"{described(url)} ({_first_line(exc)})") from None
            _schema_ready.add(url)
        with con.transaction():
            yield _Connection(con)
    finally:
        _give_back(url, con)
