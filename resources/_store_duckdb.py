"""The result store's embedded backend: one DuckDB file, correct for any number of processes on one machine.

DuckDB lets one process hold a file read-write at a time, so each operation is one short transaction under a
cross-process file lock (and a thread lock inside the process), with the file attached around it and detached
after. The store's SQL is DuckDB's own: `?` and `$name` placeholders.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from filelock import FileLock

from resources._store_errors import StoreError

LOCK_ROWS = ""
"""Appended to the claims' SELECT: nothing, the file lock already serializes every transaction."""

_locks: dict[str, threading.RLock] = {}
_locks_guard = threading.Lock()
_schema_ready: set[str] = set()
_process_db: tuple[int, duckdb.DuckDBPyConnection] | None = None


def _attachable() -> duckdb.DuckDBPyConnection:
    """A new connection to this process's in-memory DuckDB, which store files are attached to.

    Opening a DuckDB database costs ~14 ms (it builds the catalog of built-in functions); attaching a file to
    a database already open costs ~2 ms, and detaching it frees the file for other processes as closing does.
    A forked child opens its own."""
    global _process_db
    with _locks_guard:
        if _process_db is None or _process_db[0] != os.getpid():
            _process_db = (os.getpid(), duckdb.connect())
        return _process_db[1].cursor()


def _thread_lock(path: str) -> threading.RLock:
    with _locks_guard:
        return _locks.setdefault(path, threading.RLock())


def key(path: str) -> str:
    """The file a store path names, as one process's sessions know it."""
    return str(Path(path).resolve())


def described(file: str) -> str:
    return file


DUCKDB_MAGIC = b"DUCK"
"""What a DuckDB database file holds at bytes 8 to 12, whatever its version."""


def openable(file: str) -> None:
    """Refuse, in one line naming `--store`, a path that cannot be the store's file: a folder, a path under a file,
    or a file that is no DuckDB database (a source's CSV). DuckDB's own answer was a traceback ending in its text
    ("IO Error: Could not read from file ...: Is a directory", "Catalog Error: Table with name nights does not
    exist!"), after the night's check had run (trial 38)."""
    path = Path(file)
    expected = "expected the path of the result store's DuckDB file (a new one is made with its folder)"
    if path.is_dir():
        raise StoreError(f"--store: got '{file}', a folder: {expected}, e.g. '{path / 'results.duckdb'}'")
    blocking = next((parent for parent in path.parents if parent.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise StoreError(f"--store: got '{file}'; '{blocking}' is a file, not a folder: {expected}")
    if path.is_file():
        with path.open("rb") as head:
            if head.read(12)[8:] != DUCKDB_MAGIC:
                raise StoreError(f"--store: got '{file}', a file that is no DuckDB database (a source's data, an "
                                 f"empty file?): {expected}")


_CREATED = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")
"""A table the store's schema makes (`store._SCHEMA`)."""


def _no_store(con: duckdb.DuckDBPyConnection, alias: str, file: str,
              schema: Sequence[str | Callable[[Callable[[str], Any]], None]]) -> str | None:
    """Why a DuckDB database that holds tables, none of them the store's (the source's own database given as
    `--store`), is refused, or None: the store's tables would be made among the data's (trial 38: `--store
    sales.duckdb` ran, writing `nights`, `candidates`... into the source's file). A store of an older schema holds
    some of them."""
    tables = [name for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? UNION "
                                              "SELECT view_name FROM duckdb_views() WHERE database_name = ? AND NOT "
                                              "internal ORDER BY 1", [alias, alias]).fetchall()]
    made = {table for step in schema if isinstance(step, str) for table in _CREATED.findall(step)}
    if not tables or made & set(tables):
        return None
    shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
    return (f"--store: got '{file}', a DuckDB database of other tables ({shown}) and no result store's (a source's "
            "database?): expected the path of the result store's DuckDB file (a new one is made with its folder)")


_FULL = "No space left on device"
_NOT_WRITABLE = ("Read-only file system", "Permission denied", "Operation not permitted")


def unusable(file: str, exc: BaseException) -> str | None:
    """Why the store's file cannot be used, in one line naming `--store`, for what the disk or the file did rather
    than the code: a folder this process cannot write in (its lock could not be made), a disk that filled up mid-
    night, a file cut short (a copy or a full disk left it so). None for anything else, raised as it is. Trial 68:
    each was a traceback ending in `OSError: [Errno 30] Read-only file system`, or DuckDB's "IO Error: Could not
    read enough bytes" or "CHECKPOINT during DETACH failed ... No space left on device"."""
    folder = str(Path(file).parent)
    text = str(exc)
    if isinstance(exc, OSError):
        if not str(exc.filename or "").startswith(folder):
            return None
        full = exc.errno == errno.ENOSPC
        not_writable = exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
        damaged = False
    elif isinstance(exc, duckdb.Error) and file in text:
        full = _FULL in text
        not_writable = any(said in text for said in _NOT_WRITABLE)
        damaged = isinstance(exc, duckdb.IOException | duckdb.SerializationException) \
            or "not a valid DuckDB database" in text
    else:
        return None
    if full:
        return (f"--store: the disk holding '{file}' is full: free some space and run the same command again (a "
                "night run again replaces its own; the nights stored before are kept)")
    if not_writable:
        return (f"--store: got '{file}', in a folder this process cannot write in ({folder}: read-only, or not "
                "its own): expected a folder it can write in, where the store's file and its lock file are made")
    if damaged:
        return (f"--store: got '{file}', a DuckDB file that is damaged and cannot be read (cut short, as an "
                "interrupted copy or a full disk leaves it): move it aside and run again to make a new store, or "
                "restore it from a copy")
    return None


def vanished(file: str) -> str | None:
    """Why a store file this process made its schema in is refused now it is gone (deleted or moved aside while a
    night ran), in one line naming `--store`; None while it is there. ATTACH would make a new empty file, and the
    night stopped with DuckDB's "Catalog Error: Table with name nights does not exist! Did you mean "pg_tables"?"
    over four lines (trial 109). The schema is forgotten, so the next use (the run again, or a long-lived process's
    next night) makes the store again."""
    if file not in _schema_ready or Path(file).exists():
        return None
    _schema_ready.discard(file)
    return (f"--store: '{file}' disappeared while this process used it (deleted or moved aside mid-night): run the "
            "same command again to make a new store (the nights it held are in the file moved aside, if it was)")


@contextmanager
def transaction(file: str, schema: Sequence[str | Callable[[Callable[[str], Any]], None]]
                ) -> Iterator[duckdb.DuckDBPyConnection]:
    """One transaction on the store file (its folder and schema created on first use), under its locks; what the
    disk or the file refuses is one `StoreError` line (`unusable`)."""
    try:
        with _transaction(file, schema) as con:
            yield con
    except (OSError, duckdb.Error) as exc:
        if (said := unusable(file, exc)) is None:
            raise
        raise StoreError(said) from None


@contextmanager
def _transaction(file: str, schema: Sequence[str | Callable[[Callable[[str], Any]], None]]
                 ) -> Iterator[duckdb.DuckDBPyConnection]:
    openable(file)
    Path(file).parent.mkdir(parents=True, exist_ok=True)
    alias = "store_" + hashlib.sha1(file.encode()).hexdigest()[:16]
    quoted = "'" + file.replace("'", "''") + "'"
    with _thread_lock(file), FileLock(file + ".lock", timeout=120), _attachable() as con:
        if (said := vanished(file)) is not None:
            raise StoreError(said)
        con.execute(f"ATTACH {quoted} AS {alias}")
        if file not in _schema_ready and (refused := _no_store(con, alias, file, schema)) is not None:
            con.execute(f"DETACH {alias}")
            raise StoreError(refused)
        try:
            con.execute(f"USE {alias}")
            if file not in _schema_ready:
                for statement in schema:  # a migration is given the connection's execute
                    statement(con.execute) if callable(statement) else con.execute(statement)
                _schema_ready.add(file)
            con.execute("BEGIN TRANSACTION")
            yield con
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            con.execute("USE memory")
            con.execute(f"DETACH {alias}")


def insert_all(con: object, table: str, names: Sequence[str], rows: Sequence[Sequence[object]],
               conflict: str) -> bool:
    """Insert `rows` in one statement over an Arrow table, if `con` is this backend's and Arrow can type every
    column (a night's 10,718 candidate rows: 0.05 s, against 0.85 s as VALUES lists). False: nothing was done."""
    if not isinstance(con, duckdb.DuckDBPyConnection):
        return False
    try:
        incoming = pa.table({name: pa.array([row[i] for row in rows]) for i, name in enumerate(names)})
    except (pa.ArrowException, TypeError, ValueError):  # e.g. one column holding numbers and text
        return False
    con.register("__incoming_rows", incoming)
    try:
        con.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT * FROM __incoming_rows{conflict}")
    finally:
        con.unregister("__incoming_rows")
    return True
