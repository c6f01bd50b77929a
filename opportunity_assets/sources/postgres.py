"""A PostgreSQL source's rows (`format: postgres`), read through psycopg2, and every way that fails in the pack's words.

The URL comes from the environment variable `source.url_env` and is shown only with its password masked
(`postgresql://user:***@host:port/database`, built from its parts). No message carries psycopg2's, libpq's or the
server's own error text: libpq quotes a malformed URL whole, password and all. Each failure names its key:

- `url_env`: the variable does not hold a PostgreSQL URL, or the server at its host and port cannot be reached, turns
  the user or its password away, or has no such database (then the databases it has);
- `table`: the database has no such table or view (then the tables it has, with a "did you mean");
- `query`: the query names a table or column the database lacks (a column spelt in another case: PostgreSQL folds an
  unquoted name to lower case, so `Series_ID` must be written `"Series_ID"`), or is not valid SQL.
"""

from __future__ import annotations

import difflib
import getpass
import os
import re
from collections.abc import Callable
from contextlib import closing, suppress
from dataclasses import dataclass
from typing import Any

import psycopg2
import psycopg2.errorcodes
import psycopg2.extensions

from opportunity_assets.sources.reading import SourceFormatError, missing_table, quote_identifier, quote_table
from opportunity_assets.text import masked_url

CONNECT_TIMEOUT = 10
"""Seconds a connection may take before the server is said not to answer."""
_MIN_SECRET = 4
"""The shortest password `_Scrub` blots out of what the server says (a shorter one would blot out letters of its
names; messages never hold the URL's text but through `text.masked_url`)."""
_SCHEME = re.compile(r"postgres(ql)?://")
_URL_FORM = "postgresql://user:password@host:port/database"


@dataclass(frozen=True)
class Target:
    """Where a URL points, as a message says it: never its password."""

    user: str
    host: str
    port: str
    dbname: str
    has_password: bool

    @property
    def server(self) -> str:
        """`host:port` (`[::1]:5432` for an IPv6 address; a Unix socket's folder as it is)."""
        if self.host.startswith("/"):
            return f"the socket in {self.host} (port {self.port})"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def shown(self) -> str:
        """The URL with `***` for its password, from its parts."""
        password = ":***" if self.has_password else ""
        if self.host.startswith("/"):  # a Unix socket's folder
            return f"postgresql://{self.user}{password}@/{self.dbname}?host={self.host}&port={self.port}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"postgresql://{self.user}{password}@{host}:{self.port}/{self.dbname}"


def _default_user() -> str:
    try:
        return os.environ.get("PGUSER") or getpass.getuser()
    except (KeyError, OSError):  # no user name for this process's uid
        return "(the default user)"


def _secrets(url: str) -> list[str]:
    """Every text of the URL that may be its password, however it is malformed: `_Scrub` blots them out."""
    found = {m.group(2).strip("'") for m in re.finditer(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)", url,
                                                          flags=re.IGNORECASE)}
    rest = url.split("://", 1)[-1]
    if "@" in rest:
        userinfo = rest.rpartition("@")[0]
        found.add(userinfo.partition(":")[2])
    with suppress(psycopg2.Error, ValueError, UnicodeError):
        found.add(psycopg2.extensions.parse_dsn(url).get("password", ""))
    found |= {re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), s) for s in found}
    return sorted((s for s in found if len(s) >= _MIN_SECRET), key=len, reverse=True)


@dataclass(frozen=True)
class _Scrub:
    """Any text of the URL that may be its password, blotted out of what the server or libpq says, where it comes in
    (its error text, the names it lists), never out of the message's own words: a password that is a word of the
    message ("server") must not show as `***` there, which would tell it. Not when it is also the user's, the host's
    or the database's name, which a message names."""

    secrets: tuple[str, ...]

    @classmethod
    def of(cls, url: str, target: Target) -> _Scrub:
        named = {target.user, target.host, target.dbname}
        return cls(tuple(s for s in _secrets(url) if s not in named))

    def __call__(self, said: str) -> str:
        for secret in self.secrets:
            said = said.replace(secret, "***")
        return said

    def each(self, names: list[str]) -> list[str]:
        return [self(n) for n in names]


class _Failed(Exception):
    """What went wrong, in words (`reason`), and what is expected instead (`expected`), under the pack key
    `key` (`url_env`, `table` or `query`)."""

    def __init__(self, key: str, reason: str, expected: str) -> None:
        super().__init__(reason)
        self.key, self.reason, self.expected = key, reason, expected


def _url_problem(url: str, reason: str) -> _Failed:
    shown = masked_url(url)
    holds = f"it holds {shown!r}" if shown is not None else f"it holds {len(url)} characters (not shown)"
    return _Failed("url_env", f"{holds}: {reason}", f"a URL of the form {_URL_FORM} (a special character of the "
                   "password percent-encoded: @ as %40, / as %2F, % as %25)")


def _target(url: str) -> Target:
    """The URL's parts, or `_Failed` (`url_env`) saying why it is no PostgreSQL URL."""
    if any(ord(c) < 32 or c == "\x7f" for c in url):
        raise _url_problem(url, "not a PostgreSQL URL (it holds a control character or a line break)")
    if not _SCHEME.match(url):
        scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", url)
        why = (f"not a PostgreSQL URL (it starts with {scheme.group(1)}://, not postgresql://)" if scheme else
               "not a PostgreSQL URL (no postgresql:// at its start)")
        raise _url_problem(url, why)
    if url.split("://", 1)[1].split("/", 1)[0].count("@") > 1:  # libpq splits at the first: the rest as the host
        raise _url_problem(url, "not a valid PostgreSQL URL (it has more than one `@` before its host: a password's "
                           "@ is written %40)")
    try:
        dsn = psycopg2.extensions.parse_dsn(url)
    except (psycopg2.Error, ValueError, UnicodeError) as exc:
        said = str(exc)
        why = ("a `%` in it does not start a percent-encoded character (write `%` as %25)" if "percent" in said else
               "an IPv6 address in it has no closing `]`" if "IPv6" in said else
               "a parameter after its `?` is not one libpq knows" if "query parameter" in said else
               "spaces in it are not allowed (percent-encode a space as %20)" if "spaces" in said else
               "libpq cannot parse it")
        raise _url_problem(url, f"not a valid PostgreSQL URL ({why})") from None
    ports = dsn.get("port") or os.environ.get("PGPORT") or "5432"
    if not all(p.strip().isdigit() for p in ports.split(",")):
        raise _url_problem(url, "not a valid PostgreSQL URL (its port is not a number: is the `@` between the "
                           "password and the host missing?)")
    user = dsn.get("user") or _default_user()
    return Target(user=user, host=dsn.get("host") or os.environ.get("PGHOST") or "localhost", port=ports,
                  dbname=dsn.get("dbname") or os.environ.get("PGDATABASE") or user,
                  has_password=bool(dsn.get("password")))


def _connect_failed(exc: Exception, url: str, target: Target, scrub: _Scrub) -> _Failed:
    """A connection that failed, in words: libpq's text is read for the kind of failure (and an option's name)."""
    said = scrub(str(exc))
    server, user, dbname = target.server, target.user, target.dbname
    if "password authentication failed" in said:
        return _Failed("url_env", f"the server at {server} turned away user {user!r} with that password (a wrong "
                       "password, or no such user)", "the user's password in the URL")
    if re.search(r'database "(.*)" does not exist', said):
        databases = scrub.each(_databases(url))
        close = difflib.get_close_matches(dbname, databases, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        has = f": it has {_listed(databases)}" if databases else ""
        return _Failed("url_env", f"the server at {server} has no database {dbname!r}{hint}{has}",
                       "the name of a database on that server after the URL's last `/`")
    if re.search(r'role "(.*)" does not exist', said):
        return _Failed("url_env", f"the server at {server} has no user {user!r}", "a user the server has")
    if "no password supplied" in said:
        return _Failed("url_env", f"the server at {server} asks user {user!r} for a password, and the URL has none",
                       f"the password in the URL, {_URL_FORM}")
    if "Connection refused" in said:
        return _Failed("url_env", f"nothing accepts connections at {server} (connection refused: is the server "
                       "running, and on that port?)", "the host and port of a running PostgreSQL server")
    if "translate host name" in said or "Name or service not known" in said or "nodename nor servname" in said:
        return _Failed("url_env", f"the host {target.host!r} is not known (no address was found for it)",
                       "a host name or address that resolves")
    if "timeout expired" in said or "timed out" in said:
        return _Failed("url_env", f"the server at {server} did not answer within {CONNECT_TIMEOUT} seconds",
                       "the host and port of a PostgreSQL server this machine reaches")
    if "No route to host" in said or "Network is unreachable" in said:
        return _Failed("url_env", f"{server} cannot be reached from this machine (no route to it)",
                       "the host and port of a PostgreSQL server this machine reaches")
    if "pg_hba.conf" in said:
        return _Failed("url_env", f"the server at {server} does not let user {user!r} connect to database "
                       f"{dbname!r} from this machine (no pg_hba.conf entry for it)",
                       "a user, database and host the server's pg_hba.conf accepts")
    if "invalid response" in said or "unsupported frontend protocol" in said or "expected authentication" in said:
        return _Failed("url_env", f"what answers at {server} does not speak PostgreSQL's protocol (another service "
                       "on that port?)", "the host and port of a PostgreSQL server")
    if "SSL" in said or "sslmode" in said:
        return _Failed("url_env", f"the server at {server} and the URL disagree on SSL (`sslmode`)",
                       "an `sslmode` the server accepts (`?sslmode=disable` for a server without SSL, `require` for "
                       "one that demands it)")
    if "too many" in said or "connection slots" in said:
        return _Failed("url_env", f"the server at {server} has no free connection (too many clients)",
                       "a server with a free connection (try again later)")
    if "starting up" in said or "shutting down" in said or "in recovery" in said:
        return _Failed("url_env", f"the server at {server} is starting up or shutting down",
                       "a running server (try again in a moment)")
    if target.host.startswith("/") and ("No such file" in said or "Permission denied" in said):
        return _Failed("url_env", f"no server listens on {server}", "the host and port of a running server")
    if m := re.search(r'(?:connection option|invalid) "?([a-z_]+)"? value', said):
        return _Failed("url_env", f"the URL's parameter `{m.group(1)}` has a value libpq does not take",
                       "a value libpq's documentation lists for it")
    return _Failed("url_env", f"no connection could be made to the server at {server} as user {user!r} (database "
                   f"{dbname!r})", "the URL of a PostgreSQL server that accepts the user")


def _listed(names: list[str], limit: int = 20) -> str:
    shown = repr(names[:limit])
    return shown if len(names) <= limit else f"{shown[:-1]}, ...] ({len(names)} in all)"


def _databases(url: str) -> list[str]:
    """The databases the server at the URL has that its user may connect to, best effort (another database of
    the server, `postgres` or `template1`, is asked; [] when neither answers)."""
    try:
        params = psycopg2.extensions.parse_dsn(url)
    except (psycopg2.Error, ValueError, UnicodeError):
        return []
    for dbname in ("postgres", "template1"):
        try:
            with closing(psycopg2.connect(**{**params, "dbname": dbname}, connect_timeout=5)) as pg, \
                    pg.cursor() as cur:
                cur.execute("SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate "
                            "AND has_database_privilege(datname, 'CONNECT') ORDER BY 1")
                return [r[0] for r in cur.fetchall()]
        except psycopg2.Error:
            continue
    return []


def _tables(cur: Any) -> list[str]:
    """The tables, views and materialized views the user sees (a schema outside the search path written before the
    name; `information_schema` has no materialized view, which reads as a table does)."""
    cur.execute("""
        SELECT CASE WHEN table_schema::name = ANY (current_schemas(false)) THEN table_name
                    ELSE table_schema || '.' || table_name END
        FROM information_schema.tables
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg\\_%'
        UNION
        SELECT CASE WHEN schemaname = ANY (current_schemas(false)) THEN matviewname
                    ELSE schemaname || '.' || matviewname END
        FROM pg_matviews
        ORDER BY 1""")
    return [r[0] for r in cur.fetchall()]


def _spelt_otherwise(cur: Any, column: str) -> list[str]:
    """The database's columns named `column` in another case (`Series_ID` for `series_id`)."""
    cur.execute("""
        SELECT DISTINCT column_name FROM information_schema.columns
        WHERE lower(column_name) = lower(%s) AND column_name <> %s
          AND table_schema NOT IN ('pg_catalog', 'information_schema')
        ORDER BY 1""", (column, column))
    return [r[0] for r in cur.fetchall()]


def _read_failed(exc: psycopg2.Error, pg: Any, target: Target, table: str, query: str | None,
                 statement: str, scrub: _Scrub) -> _Failed:
    """A table or query that does not give its rows, in words (the server's text is read for names only).
    `statement`: the SQL that ran, around the query (a syntax error's position is counted in the query)."""
    code = exc.pgcode or ""
    primary = scrub(getattr(exc.diag, "message_primary", None) or "")
    database = f"database {target.dbname!r} at {target.server}"
    key = "query" if query is not None else "table"
    runs = "a SELECT that runs on the database" if query is not None else \
        "the name of the table or view to read (or a `url_env` naming another database)"
    if not code or code.startswith(("08", "57P")):  # no SQLSTATE: the connection broke; 08, 57P: it was cut
        return _Failed("url_env", f"the connection to the server at {target.server} was lost while reading",
                       "a server that stays up while the source is read (try again)")
    with suppress(psycopg2.Error):
        pg.rollback()
    if code == psycopg2.errorcodes.UNDEFINED_TABLE:
        m = re.search(r'relation "(.+)" does not exist', primary)
        name = m.group(1) if m else table
        tables = scrub.each(_safely(lambda: _tables(pg.cursor()), []))
        where = missing_table(database, name, tables)
        if query is None:
            return _Failed("table", f"{where}", runs)
        return _Failed("query", f"it reads {where}", runs)
    if code == psycopg2.errorcodes.INVALID_SCHEMA_NAME:
        m = re.search(r'schema "(.+)" does not exist', primary)
        return _Failed(key, f"it reads a schema {m.group(1) if m else ''!r} that {database} does not have", runs)
    if code == psycopg2.errorcodes.UNDEFINED_COLUMN:
        m = re.search(r'column (?:"([^"]+)"|(\S+)) ', primary)
        column = (m.group(1) or m.group(2).rsplit(".", 1)[-1]) if m else "?"
        others = scrub.each(_safely(lambda: _spelt_otherwise(pg.cursor(), column), []))
        if others and quote_identifier(column) in (query or ""):  # quoted, so read as written, not folded
            written = others[0] if others[0] == others[0].lower() else quote_identifier(others[0])
            return _Failed("query", f"it names a column `{column}` that the tables it reads do not have, but the "
                           f"database has `{others[0]}`: PostgreSQL reads a name in double quotes as written, case "
                           f"and all ({quote_identifier(column)} is not {others[0]})",
                           f"the name as the database writes it, {written}")
        if others:
            return _Failed("query", f"it names a column `{column}` that the tables it reads do not have, but the "
                           f"database has `{others[0]}`: PostgreSQL reads a name written without double quotes in "
                           f"lower case ({others[0]} as {others[0].lower()})",
                           f"the name in double quotes, {quote_identifier(others[0])}")
        hint = re.search(r'column "(?:[^"]*\.)?([^".]+)"', scrub(getattr(exc.diag, "message_hint", None) or ""))
        said = f" (did you mean `{hint.group(1)}`?)" if hint else ""
        return _Failed("query", f"it names a column `{column}` that the tables it reads do not have{said}", runs)
    if code == psycopg2.errorcodes.UNDEFINED_FUNCTION:
        m = re.search(r"(?:function|operator) (.+?) does not exist", primary)
        return _Failed(key, f"it calls {'a function' if 'function' in primary else 'an operator'} "
                       f"`{m.group(1) if m else '?'}` that PostgreSQL does not have for those types", runs)
    if code == psycopg2.errorcodes.SYNTAX_ERROR:
        m = re.search(r'at or near "(.*)"', primary)
        near = f"near `{m.group(1)}`" if m else "at its end" if "end of input" in primary else "somewhere"
        position = getattr(exc.diag, "statement_position", None)
        if position is not None and query is not None and query in statement:
            position = str(int(position) - statement.index(query))
            if int(position) > len(query):  # past its end, in the reader's wrapping (trial 25: "near `)`")
                near, position = "at its end, where it stops short: a WHERE with no condition, say", None
        return _Failed(key, f"it is not valid SQL (a syntax error {near}"
                       f"{'' if position is None else ', character ' + str(position)})", runs)
    if code == psycopg2.errorcodes.AMBIGUOUS_COLUMN:  # trial 79: "(ambiguous column, SQLSTATE 42702)"
        m = re.search(r'column reference "(.+)" is ambiguous', primary)
        column = m.group(1) if m else "?"
        return _Failed(key, f"it gives two columns named `{column}` (a join's `a.{column}` beside `b.{column}`, or "
                       f"`*` with `{column}` again), or names `{column}` where two tables it joins have one, so which "
                       "is meant cannot be told",
                       f"each column named once: one table's `{column}` kept (`a.{column}`), the other's left out or "
                       f"renamed (`b.{column} AS b_{column}`)")
    if code == psycopg2.errorcodes.INSUFFICIENT_PRIVILEGE:
        return _Failed(key, f"user {target.user!r} may not read what it names (permission denied)",
                       "a table the user may SELECT from (GRANT SELECT ON it TO the user)")
    kind = (psycopg2.errorcodes.lookup(code) or "").lower().replace("_", " ") or "an error"
    return _Failed(key, f"it does not give its rows on {database} ({kind}, SQLSTATE {code})", runs)


def _safely(read: Callable[[], list[str]], default: list[str]) -> list[str]:
    try:
        return read()
    except psycopg2.Error:
        return default


_TIMESTAMPTZ = 1184
"""PostgreSQL's type OID of `timestamptz`."""


def zoned_columns(url_env: str, table: str, query: str | None) -> list[str]:
    """The columns of a PostgreSQL table, view or query that are `timestamptz` (moments that keep no zone), from its
    description alone (no row is read); none where it cannot be read (`read_rows` says why)."""
    url = (os.environ.get(url_env) or "").strip()
    if not url:
        return []
    relation = f"({query})" if query is not None else quote_table(table)
    try:
        with closing(psycopg2.connect(url, connect_timeout=CONNECT_TIMEOUT)) as pg, pg.cursor() as cur:
            cur.execute(f"SELECT * FROM {relation} AS source LIMIT 0")
            return [d.name for d in cur.description or [] if d.type_code == _TIMESTAMPTZ]
    except (psycopg2.Error, ValueError, UnicodeError):
        return []


def _set_alike(url_env: str) -> str | None:
    """A set environment variable spelt like the unset `url_env` (trial 125: `T125_PG_ULR` for an exported
    `T125_PG_URL`): its name only, never its value."""
    names = [name for name, value in os.environ.items() if value.strip()]
    found = difflib.get_close_matches(url_env, names, n=1, cutoff=0.8)
    return found[0] if found else None


def read_rows(url_env: str, table: str, query: str | None, needed: list[str], within: str,
              require: Callable[[list[str], str], None]) -> list[tuple[Any, ...]]:
    """The rows of a PostgreSQL table or view (`table`) or query, the `needed` columns as text, in a stable order
    (by those columns). `require(present, where)` refuses a relation that lacks a needed column. Every failure is a
    `SourceFormatError` of one line naming `within`'s key (`source.url_env`, `.table`, `.query`), and never the
    URL's password."""
    url = (os.environ.get(url_env) or "").strip()  # a line break or spaces around it are no part of it
    if not url:
        state = "is not set" if os.environ.get(url_env) is None else "is empty"
        if os.environ.get(url_env) is None and (alike := _set_alike(url_env)):
            state += f" (did you mean {alike}, which is?)"
        raise SourceFormatError(f"key `{within}.url_env`: the environment variable {url_env} {state}; expected "
                                f"the PostgreSQL URL ({_URL_FORM})")
    relation = f"({query})" if query is not None else quote_table(table)
    where = f"PostgreSQL source {relation[:80]}"
    target: Target | None = None
    try:
        target = _target(url)
        scrub = _Scrub.of(url, target)
        try:
            connection = psycopg2.connect(url, connect_timeout=CONNECT_TIMEOUT)
        except (psycopg2.Error, ValueError, UnicodeError) as exc:
            raise _connect_failed(exc, url, target, scrub) from None
        with closing(connection) as pg:
            statement = f"SELECT * FROM {relation} AS source LIMIT 0"
            try:
                with pg.cursor() as cur:
                    # a timestamptz is written as text in the session's zone (the server's, or `PGTZ`'s): in UTC, a
                    # moment is the same day whatever the server or the machine
                    cur.execute("SET TIME ZONE 'UTC'")
                    cur.execute(statement)
                    present = [d.name for d in cur.description or []]
            except psycopg2.Error as exc:
                raise _read_failed(exc, pg, target, table, query, statement, scrub) from None
            require(scrub.each(present), where)
            cells = ", ".join(f"CAST({quote_identifier(c)} AS TEXT)" for c in needed)
            order = ", ".join(str(i + 1) for i in range(len(needed)))
            statement = f"SELECT {cells} FROM {relation} AS source ORDER BY {order}"
            try:
                with pg.cursor() as cur:
                    cur.execute(statement)
                    return cur.fetchall()
            except psycopg2.Error as exc:
                raise _read_failed(exc, pg, target, table, query, statement, scrub) from None
    except _Failed as failed:
        got = {"url_env": f"{url_env!r}" + (f" ({target.shown})" if target is not None else ""),
               "table": repr(table), "query": repr((query or "")[:80])}[failed.key]
        raise SourceFormatError(f"key `{within}.{failed.key}`: got {got}; {failed.reason}: expected "
                                f"{failed.expected}") from None
