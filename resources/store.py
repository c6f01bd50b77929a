"""The result store: every record of every night, keyed by (domain, as_of, candidate).

Two backends behind this one surface, chosen by configuration: a DuckDB file (the default: `make run`, one
machine; resources/_store_duckdb.py) or a PostgreSQL database that runs on several machines share, named by a URL
from `EnvVar("OPPORTUNITY_STORE_URL")` (resources/_store_postgres.py). Parallel runs must neither corrupt nor
lose writes: each operation is one short transaction; assets batch their writes, one transaction per asset and
night, not per row. Every write replaces its keys (`INSERT ... ON CONFLICT DO UPDATE`), so re-running a night is
idempotent. The schema below is both backends' (each creates and migrates it on first use); the SQL is written
once, in what DuckDB and PostgreSQL both run, with DuckDB's placeholders.

The archive is a view: `SELECT * FROM archive WHERE as_of = ? AND tag = ?` in any DuckDB or PostgreSQL client.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field

from opportunity_assets.notify.logic import CLAIMED, SentLogEntry, claimable
from opportunity_assets.records import (
    Analysis,
    Brief,
    Candidate,
    Cost,
    Route,
    RunError,
    Summary,
    Verification,
)
from resources import _store_duckdb
from resources._store_errors import STORE_URL_VARIABLE

_TABLES: dict[str, tuple[str, str]] = {
    # table: (its columns, in order; its key)
    "nights": ("domain VARCHAR, as_of DATE, run_id VARCHAR, criteria_fingerprint VARCHAR, criteria VARCHAR, "
               "anchor_period DATE, scan_report VARCHAR, updated_at TIMESTAMP DEFAULT current_timestamp",
               "domain, as_of"),
    "candidates": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, name VARCHAR, went_on BOOLEAN, capped BOOLEAN, "
                   "filters VARCHAR, record VARCHAR", "domain, as_of, candidate_id"),
    "quarantine": ("domain VARCHAR, as_of DATE, source_row BIGINT, entity_id VARCHAR, period DATE, reason VARCHAR, "
                   "entry INTEGER", "domain, as_of, entry"),
    "analyses": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, verdict VARCHAR, score DOUBLE PRECISION, "
                 "record VARCHAR", "domain, as_of, candidate_id"),
    "verifications": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, status VARCHAR, fatal_assumption VARCHAR, "
                      "record VARCHAR", "domain, as_of, candidate_id"),
    "errors": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, node VARCHAR, error VARCHAR",
               "domain, as_of, candidate_id, node"),
    "routes": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, destination VARCHAR, section_or_tag VARCHAR, "
               "rule VARCHAR", "domain, as_of, candidate_id"),
    "briefs": ("domain VARCHAR, as_of DATE, markdown VARCHAR, words INTEGER, summary VARCHAR, cost VARCHAR, "
               "model_mode VARCHAR", "domain, as_of"),
    "model_calls": ("key VARCHAR, domain VARCHAR, as_of DATE, candidate_id VARCHAR, role VARCHAR, model VARCHAR, "
                    "prompt_version VARCHAR, request VARCHAR, response VARCHAR, input_tokens INTEGER, "
                    "output_tokens INTEGER, cache_write_tokens INTEGER, cache_read_tokens INTEGER, "
                    "usd DOUBLE PRECISION, attempts INTEGER, error VARCHAR, "
                    "created_at TIMESTAMP DEFAULT current_timestamp", "key"),
    "model_uses": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, role VARCHAR, key VARCHAR, replayed BOOLEAN",
                   "domain, as_of, candidate_id, role"),
    "outcomes": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, criteria_fingerprint VARCHAR, "
                 "outcome_definition VARCHAR, verdict VARCHAR, verification VARCHAR, status VARCHAR, "
                 "value DOUBLE PRECISION, record VARCHAR", "domain, as_of, candidate_id"),
    "judgments": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, judged_at TIMESTAMP, decision VARCHAR, "
                  "who VARCHAR, note VARCHAR", "domain, as_of, candidate_id, judged_at"),
    "notifications": ("domain VARCHAR, as_of DATE, candidate_id VARCHAR, channel VARCHAR, verdict VARCHAR, "
                      "status VARCHAR, attempts INTEGER, error VARCHAR, run_id VARCHAR, updated_at TIMESTAMP",
                      "domain, as_of, candidate_id, channel"),
}
_ADDED_COLUMNS = (("briefs", "updated_at TIMESTAMP"), ("routes", "reason VARCHAR"), ("candidates", "reason VARCHAR"))
"""Columns added since a table was first made: (table, column), in order (ALTER TABLE ... ADD COLUMN IF NOT EXISTS)."""
_ARCHIVE = """CREATE OR REPLACE VIEW archive AS
    SELECT r.domain, r.as_of, r.candidate_id, c.name, r.section_or_tag AS tag, r.rule, a.verdict, a.score,
           v.status, v.fatal_assumption, r.reason
    FROM routes r
    JOIN candidates c USING (domain, as_of, candidate_id)
    JOIN analyses a USING (domain, as_of, candidate_id)
    JOIN verifications v USING (domain, as_of, candidate_id)
    WHERE r.destination = 'archive'"""


def _quarantine_keyed_by_entry(execute: Callable[[str], Any]) -> None:
    """A store made when the night's quarantine was keyed by source row, rebuilt keyed by its entries: one source
    row may be quarantined several times in a night (a wide line's cells of two entities or two periods, a joined
    table's row numbered as one of the main source's), and the second record broke the key, stopping the night with
    DuckDB's "transaction is aborted". `execute` runs one statement in the backend's dialect."""
    found = execute("SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
                    "AND table_schema = current_schema() AND table_name = 'quarantine'").fetchall()
    if not found or "entry" in {row[0] for row in found}:
        return
    columns, key = _TABLES["quarantine"]
    execute(f"CREATE TABLE quarantine_keyed ({columns}, PRIMARY KEY ({key}))")
    execute("INSERT INTO quarantine_keyed SELECT domain, as_of, source_row, entity_id, period, reason, "
            "CAST(row_number() OVER (PARTITION BY domain, as_of ORDER BY source_row) - 1 AS INTEGER) FROM quarantine")
    execute("DROP TABLE quarantine")
    execute("ALTER TABLE quarantine_keyed RENAME TO quarantine")


SchemaStep = str | Callable[[Callable[[str], Any]], None]
"""A schema statement, or a migration given the backend's `execute` of one statement in its dialect."""
_SCHEMA: tuple[SchemaStep, ...] = (
    _quarantine_keyed_by_entry,
    *(f"CREATE TABLE IF NOT EXISTS {table} ({columns}, PRIMARY KEY ({key}))"
      for table, (columns, key) in _TABLES.items()),
    *(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column}" for table, column in _ADDED_COLUMNS),
    _ARCHIVE)


def _columns(table: str) -> list[str]:
    """The table's column names, in order."""
    return [c.split()[0] for c in _TABLES[table][0].split(", ")] + [
        column.split()[0] for added, column in _ADDED_COLUMNS if added == table]


_open = threading.local()
"""This thread's open session connections, by store."""


def _chunks(rows: Sequence[Sequence[Any]], size: int = 500) -> Iterator[Sequence[Sequence[Any]]]:
    """Rows in slices small enough for one statement's parameters."""
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


def _insert(con: Any, table: str, rows: Sequence[Sequence[Any]], *, columns: Sequence[str] | None = None,
            replace: bool = False, returning: str | None = None) -> list[Any]:
    """Inserts of `columns` (default: all, in order): on DuckDB one statement over an Arrow table, else multi-row
    VALUES (DuckDB runs `executemany` row by row, ~20x slower for a night's records). `replace`: a row replaces
    the one with its key. `returning`: a row whose key is taken is left out, and this column of the rows inserted
    is returned."""
    names = list(columns or _columns(table))
    conflict = _replacing(table, names) if replace else ""
    if returning:
        conflict = f" ON CONFLICT ({_TABLES[table][1]}) DO NOTHING RETURNING {returning}"
    elif rows and _store_duckdb.insert_all(con, table, names, rows, conflict):
        return []
    inserted = []
    for chunk in _chunks(rows):
        placeholders = ", ".join("(" + ", ".join("?" * len(row)) + ")" for row in chunk)
        cursor = con.execute(f"INSERT INTO {table} ({', '.join(names)}) VALUES {placeholders}{conflict}",
                             [value for row in chunk for value in row])
        if returning:
            inserted += [row[0] for row in cursor.fetchall()]
    return inserted


def _stored(candidate: Candidate) -> Candidate:
    """The record kept of a scanned candidate: whole for one going on; for the others without their window rows
    (their metrics, filters, gaps and score say what the scan saw, and the source keeps the rows). A night of ten
    thousand entities would otherwise store fifteen rows of each, 39 MB a night."""
    return candidate if candidate.went_on or not candidate.raw_data else candidate.model_copy(update={"raw_data": []})


def _replacing(table: str, columns: Sequence[str]) -> str:
    """An INSERT's ending that makes each row replace the one with its key (`INSERT OR REPLACE`, in SQL that
    PostgreSQL runs too)."""
    key = _TABLES[table][1]
    return f" ON CONFLICT ({key}) DO UPDATE SET " + ", ".join(
        f"{c} = EXCLUDED.{c}" for c in columns if c not in key.split(", "))


def _where(*conditions: tuple[str, Any]) -> tuple[str, list[Any]]:
    """`WHERE` over the (condition, parameter) pairs whose parameter is given (None: that filter is off)."""
    given = [(sql, value) for sql, value in conditions if value is not None]
    return "WHERE " + " AND ".join(sql for sql, _ in given), [value for _, value in given]


NIGHT_WIDE = "*night*"
"""The candidate id of a night-wide model call (the brief's wording)."""

_ROLES_OF = {"analyze": ("analyzer", "verifier"), "verify": ("verifier",), "analyzer_model": ("analyzer",),
             "verifier_model": ("verifier",), "brief_model": ("brief",)}
"""An error record of a node replaces the model uses of these roles (a failed stage's records are removed; a
failed model step's use is its failed call, or none where no call was sent)."""


class ResultStore(dg.ConfigurableResource):
    """The result store. On the DuckDB file at `path` by default; on PostgreSQL when `url` is set."""

    path: str = Field(default="var/results.duckdb", description="DuckDB file, created with its folder. Files kept "
                      "beside the store (the outbox, backtest plots) go in its folder on either backend.")
    url: str | None = Field(default=None, repr=False, description=f"PostgreSQL URL (postgresql://USER:PASSWORD@HOST:"
                            f"PORT/DATABASE), from EnvVar('{STORE_URL_VARIABLE}') at wiring time: the shared store. "
                            "Unset: the DuckDB file.")

    # ---- plumbing -----------------------------------------------------------------------------------------
    @contextmanager
    def session(self) -> Iterator[None]:
        """Group several reads and writes of this thread into one connection and one transaction.

        An asset that reads a night and writes its results does both in a session or two. Keep sessions short:
        on DuckDB other processes wait for the file's lock meanwhile.
        """
        with self._connect():
            yield

    def ready(self) -> None:
        """Open the store once, creating or migrating its schema: a `StoreError` in one line if it cannot be (for
        the CLI, before a night starts)."""
        with self._connect():
            pass

    def exists(self) -> bool:
        """Whether there is a store to read: the DuckDB file exists; a PostgreSQL store always does."""
        return self._url() is not None or Path(self.path).is_file()

    @property
    def location(self) -> str:
        """Where the records are, for people: the DuckDB file, or the PostgreSQL URL without its password."""
        backend, target = self._backend()
        return backend.described(target)

    def _url(self) -> str | None:
        """The PostgreSQL URL, or None for the DuckDB file. Outside a run (the CLI) `url` is still the `EnvVar`,
        read here, when the store is used."""
        if isinstance(self.url, dg.EnvVar):
            return (self.url.get_value() or "").strip() or None
        return self.url

    def _backend(self) -> tuple[Any, str]:
        """The backend module and what it opens: the PostgreSQL URL, or the DuckDB file."""
        url = self._url()
        if url is None:
            return _store_duckdb, _store_duckdb.key(self.path)
        from resources import _store_postgres  # psycopg only where it is used

        return _store_postgres, url

    @contextmanager
    def _connect(self) -> Iterator[Any]:
        """This thread's session connection on the store, or a new one in one transaction of its own."""
        backend, target = self._backend()
        name = f"{backend.__name__} {target}"
        open_here: dict[str, Any] = _open.__dict__.setdefault("connections", {})
        if name in open_here:  # inside this thread's session: same connection, same transaction
            yield open_here[name]
            return
        with backend.transaction(target, _SCHEMA) as con:
            open_here[name] = con
            try:
                yield con
            finally:
                open_here.pop(name, None)

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Read-only SQL over the store's tables and the `archive` view, as dicts. Write what both backends run
        (standard SQL; `?` or `$name` placeholders)."""
        with self._connect() as con:
            cursor = con.execute(sql, params or [])
            names = [d[0] for d in cursor.description or []]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    # ---- writes (one transaction each) ---------------------------------------------------------------------
    def write_scan(self, domain: str, as_of: date, *, run_id: str, criteria_fingerprint: str, criteria: str,
                   anchor_period: date | None, scan_report: dict[str, Any], candidates: Sequence[Candidate],
                   quarantined: Sequence[dict[str, Any]], reasons: Mapping[str, str] | None = None) -> None:
        """Replace the night's scan. Per-candidate records of candidates no longer going on are removed. `reasons`:
        why each candidate that did not go on stayed out, by id (`scanned_rows` reads them back)."""
        going_on = [c.id for c in candidates if c.went_on]
        with self._connect() as con:
            key = [domain, as_of]
            con.execute("INSERT INTO nights (domain, as_of, run_id, criteria_fingerprint, criteria, anchor_period, "
                        "scan_report, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, current_timestamp)"
                        + _replacing("nights", _columns("nights")),
                        [*key, run_id, criteria_fingerprint, criteria, anchor_period,
                         json.dumps(scan_report, default=str)])
            for table in ("candidates", "quarantine"):
                con.execute(f"DELETE FROM {table} WHERE domain = ? AND as_of = ?", key)
            for table in ("analyses", "verifications", "errors", "routes", "model_uses"):
                con.execute(f"DELETE FROM {table} WHERE domain = ? AND as_of = ? "
                            f"AND NOT candidate_id = ANY(CAST(? AS VARCHAR[]))", [*key, [*going_on, NIGHT_WIDE]])
            if candidates:
                _insert(con, "candidates", rows=[
                    [*key, c.id, c.name, c.went_on, c.capped, json.dumps(c.filters), _stored(c).model_dump_json(),
                     (reasons or {}).get(c.id)]
                    for c in candidates])
            if quarantined:
                _insert(con, "quarantine", rows=[
                    [*key, q["source_row"], q["entity_id"], q["period"], q["reason"], entry]
                    for entry, q in enumerate(quarantined)])

    def write_stage(self, domain: str, *, analyses: Sequence[Analysis] = (),
                    verifications: Sequence[Verification] = (), errors: Sequence[RunError] = (),
                    cleared: Sequence[tuple[date, str, str]] = (), model_log: Any = None,
                    renewed: Sequence[tuple[date, str, str]] = ()) -> None:
        """One stage's results for a batch of candidates, in one transaction.

        `cleared` (as_of, candidate, node): old error records that this batch's successes supersede. An error
        removes that candidate's stale results of its stage and later (an old analysis must not be verified).
        `model_log`: the step's `resources.model.ModelLog` (calls sent, answers taken). A record written replaces
        its role's model use: the analyzer's with an analysis, the verifier's with a verification; `renewed`
        (as_of, candidate, role) names other uses this write replaces (the night's brief).
        """
        stale_tables = {"analyze": ("analyses", "verifications"), "verify": ("verifications",)}
        with self._connect() as con:
            for chunk in _chunks(cleared):  # one statement, not one a candidate (~40 ms a night)
                con.execute("DELETE FROM errors USING (VALUES " + ", ".join(["(?::DATE, ?, ?)"] * len(chunk))
                            + ") AS done(as_of, candidate_id, node) WHERE errors.domain = ? AND errors.as_of = "
                            "done.as_of AND errors.candidate_id = done.candidate_id AND errors.node = done.node",
                            [value for key in chunk for value in key] + [domain])
            for e in errors:
                for table in stale_tables.get(e.node, ()):
                    con.execute(f"DELETE FROM {table} WHERE domain = ? AND as_of = ? AND candidate_id = ?",
                                [domain, e.as_of, e.candidate_id])
            if analyses:
                _insert(con, "analyses", replace=True, rows=[
                    [domain, a.as_of, a.candidate_id, a.verdict.value, a.score, a.model_dump_json()]
                    for a in analyses])
            if verifications:
                _insert(con, "verifications", replace=True, rows=[
                    [domain, v.as_of, v.candidate_id, v.status.value, v.fatal_assumption, v.model_dump_json()]
                    for v in verifications])
            calls, uses = (model_log.calls, model_log.uses) if model_log is not None else ((), ())
            if calls:  # resources.model.CallRecord rows, in the table's column order
                _insert(con, "model_calls", columns=_columns("model_calls")[:-1], replace=True,  # not created_at
                        rows=[list(dataclasses.astuple(c)) for c in calls])
            stale_uses = {*renewed, *((a.as_of, a.candidate_id, "analyzer") for a in analyses),
                          *((v.as_of, v.candidate_id, "verifier") for v in verifications),
                          *((e.as_of, e.candidate_id, role) for e in errors for role in _ROLES_OF.get(e.node, ()))}
            for chunk in _chunks(sorted(stale_uses)):
                con.execute("DELETE FROM model_uses USING (VALUES " + ", ".join(["(?::DATE, ?, ?)"] * len(chunk))
                            + ") AS old(as_of, candidate_id, role) WHERE model_uses.domain = ? AND model_uses.as_of "
                            "= old.as_of AND model_uses.candidate_id = old.candidate_id AND model_uses.role = "
                            "old.role", [value for key in chunk for value in key] + [domain])
            if uses:
                _insert(con, "model_uses", replace=True, rows=[
                    [u.domain, u.as_of, u.candidate_id, u.role, u.key, u.replayed] for u in uses])
            if errors:
                _insert(con, "errors", replace=True, rows=[
                    [domain, e.as_of, e.candidate_id, e.node, e.error] for e in errors])

    def write_routing(self, domain: str, as_of: date, *, routes: Sequence[Route], brief: Brief, summary: Summary,
                      cost: Cost, model_mode: str, reasons: Mapping[str, str] | None = None) -> None:
        """The night's routes, each with why in words (`reasons`, by candidate id: the archive's `reason`), and
        its brief."""
        with self._connect() as con:
            con.execute("DELETE FROM routes WHERE domain = ? AND as_of = ?", [domain, as_of])
            if routes:
                _insert(con, "routes", rows=[
                    [domain, r.as_of, r.candidate_id, r.destination.value, r.section_or_tag, r.rule,
                     (reasons or {}).get(r.candidate_id)]
                    for r in routes])
            con.execute("INSERT INTO briefs (domain, as_of, markdown, words, summary, cost, model_mode, updated_at) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, current_timestamp)" + _replacing("briefs", _columns("briefs")), [
                domain, as_of, brief.markdown, brief.words, summary.model_dump_json(), cost.model_dump_json(),
                model_mode])

    # ---- model calls: the replay cache and the audit log -------------------------------------------------------
    def model_calls_of(self, domain: str, as_of: date) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM model_calls WHERE domain = ? AND as_of = ?", [domain, as_of])

    def model_cost(self, domain: str, as_of: date) -> dict[str, Any]:
        """What the answers in the night's records cost, billed apart from replayed: `calls`, tokens and `usd` of
        the calls sent when their record was last written; `replayed_calls` and `replayed_usd` of the answers
        taken from the store instead (billed once, by an earlier run, at that price)."""
        return self.query(
            "SELECT count(*) FILTER (WHERE NOT u.replayed) AS calls, "
            "coalesce(sum(c.input_tokens + c.cache_write_tokens + c.cache_read_tokens) FILTER (WHERE NOT u.replayed),"
            " 0) AS input_tokens, coalesce(sum(c.output_tokens) FILTER (WHERE NOT u.replayed), 0) AS output_tokens, "
            "coalesce(sum(c.usd) FILTER (WHERE NOT u.replayed), 0) AS usd, "
            "count(*) FILTER (WHERE u.replayed) AS replayed_calls, "
            "coalesce(sum(c.usd) FILTER (WHERE u.replayed), 0) AS replayed_usd "
            "FROM model_uses u JOIN model_calls c ON c.key = u.key WHERE u.domain = ? AND u.as_of = ?",
            [domain, as_of])[0]

    # ---- reads ---------------------------------------------------------------------------------------------
    def night(self, domain: str, as_of: date) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM nights WHERE domain = ? AND as_of = ?", [domain, as_of])
        return rows[0] if rows else None

    def nights_near(self, domain: str, as_of: date, most: int = 3) -> list[date]:
        """The domain's stored nights nearest `as_of`, nearest first (then earlier first): what a command asked
        for a night the store does not hold offers instead."""
        return [r["as_of"] for r in self.query("SELECT as_of FROM nights WHERE domain = ? ORDER BY "
                                               f"abs(as_of - CAST(? AS DATE)), as_of LIMIT {int(most)}",
                                               [domain, as_of])]

    def candidates(self, domain: str, as_of: date, *, went_on_only: bool = False) -> list[Candidate]:
        rows = self.query("SELECT record FROM candidates WHERE domain = ? AND as_of = ? "
                          + ("AND went_on " if went_on_only else "") + "ORDER BY candidate_id", [domain, as_of])
        return [Candidate.model_validate_json(r["record"]) for r in rows]

    def capped_ids(self, domain: str, as_of: date) -> list[str]:
        """The candidates that passed the hard filters but fell beyond the cap (not analyzed)."""
        return [r["candidate_id"] for r in self.query(
            "SELECT candidate_id FROM candidates WHERE domain = ? AND as_of = ? AND capped ORDER BY candidate_id",
            [domain, as_of])]

    def scanned_rows(self, domain: str, as_of: date) -> list[dict[str, Any]]:
        """The candidates that did not go on, as the scan stored them: id, name, filters (JSON), capped, reason;
        their records only where no reason was stored (a night stored before reasons were)."""
        return self.query("SELECT candidate_id, name, filters, capped, reason, "
                          "CASE WHEN reason IS NULL THEN record END AS record FROM candidates "
                          "WHERE domain = ? AND as_of = ? AND NOT went_on ORDER BY candidate_id", [domain, as_of])

    def analyses(self, domain: str, as_of: date) -> list[Analysis]:
        rows = self.query("SELECT record FROM analyses WHERE domain = ? AND as_of = ? ORDER BY candidate_id",
                          [domain, as_of])
        return [Analysis.model_validate_json(r["record"]) for r in rows]

    def verifications(self, domain: str, as_of: date) -> list[Verification]:
        rows = self.query("SELECT record FROM verifications WHERE domain = ? AND as_of = ? ORDER BY candidate_id",
                          [domain, as_of])
        return [Verification.model_validate_json(r["record"]) for r in rows]

    def errors(self, domain: str, as_of: date) -> list[RunError]:
        rows = self.query("SELECT as_of, candidate_id, node, error FROM errors WHERE domain = ? AND as_of = ? "
                          "ORDER BY candidate_id, node", [domain, as_of])
        return [RunError(**r) for r in rows]

    def routes(self, domain: str, as_of: date) -> list[Route]:
        rows = self.query("SELECT as_of, candidate_id, destination, section_or_tag, rule FROM routes "
                          "WHERE domain = ? AND as_of = ? ORDER BY candidate_id", [domain, as_of])
        return [Route(**r) for r in rows]

    def earlier_nights(self, domain: str, before: date, since: date) -> list[dict[str, Any]]:
        """Nights in [since, before) that the store has scanned, latest first: `as_of`, `scanned_seconds_ago` and
        `routed` (a brief was written after its latest scan)."""
        return self.query(
            "SELECT n.as_of, CAST(extract(EPOCH FROM current_timestamp::TIMESTAMP - n.updated_at) AS BIGINT) "
            "AS scanned_seconds_ago, "
            "coalesce(b.updated_at >= n.updated_at, false) AS routed "
            "FROM nights n LEFT JOIN briefs b USING (domain, as_of) "
            "WHERE n.domain = ? AND n.as_of >= ? AND n.as_of < ? ORDER BY n.as_of DESC", [domain, since, before])

    def briefed_nights(self, domain: str, *, limit: int = 30) -> list[dict[str, Any]]:
        """The latest nights with a brief, latest first: `as_of` and `act_on` (candidates routed to act on)."""
        return self.query(
            "SELECT b.as_of, count(r.candidate_id) FILTER (WHERE r.section_or_tag = 'act_on_these') AS act_on "
            "FROM briefs b LEFT JOIN routes r ON r.domain = b.domain AND r.as_of = b.as_of WHERE b.domain = ? "
            "GROUP BY b.as_of ORDER BY b.as_of DESC LIMIT ?", [domain, limit])

    def score_history(self, domain: str, candidate_ids: Sequence[str], *, up_to: date) -> list[dict[str, Any]]:
        """The candidates' stored analyses on every night up to `up_to`, oldest first: `as_of`, `candidate_id`,
        `verdict` and `score` (the report's and the UI's history plots)."""
        ids = list(dict.fromkeys(candidate_ids))
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)  # one placeholder each: the same SQL on DuckDB and PostgreSQL
        return self.query(f"SELECT as_of, candidate_id, verdict, score FROM analyses WHERE domain = ? "
                          f"AND candidate_id IN ({marks}) AND as_of <= ? ORDER BY as_of, candidate_id",
                          [domain, *ids, up_to])

    def brief(self, domain: str, as_of: date) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM briefs WHERE domain = ? AND as_of = ?", [domain, as_of])
        return rows[0] if rows else None

    def quarantined(self, domain: str, as_of: date) -> list[dict[str, Any]]:
        return self.query("SELECT source_row, entity_id, period, reason FROM quarantine "
                          "WHERE domain = ? AND as_of = ? ORDER BY entry", [domain, as_of])

    def archive(self, domain: str, *, as_of: date | None = None, tag: str | None = None,
                candidate: str | None = None) -> list[dict[str, Any]]:
        where, params = _where(("domain = ?", domain), ("as_of = ?", as_of), ("tag = ?", tag),
                               ("candidate_id = ?", candidate))
        return self.query(f"SELECT * FROM archive {where} ORDER BY as_of, candidate_id", params)

    def section(self, domain: str, section: str, *, as_of: date | None = None,
                candidate: str | None = None) -> list[dict[str, Any]]:
        """The candidates routed to a brief section (act_on_these, needs_your_judgment), best score first; one
        candidate's alone, by its id, when given. Each with its name and the router's reason, as the archive's rows
        (trial 68: ids, verdicts and scores only, nothing of why a candidate needs judgment)."""
        where, params = _where(("r.domain = ?", domain), ("r.section_or_tag = ?", section), ("r.as_of = ?", as_of),
                               ("r.candidate_id = ?", candidate))
        return self.query("SELECT r.as_of, r.candidate_id, c.name, r.section_or_tag AS section, a.verdict, a.score, "
                          "v.status, r.reason FROM routes r JOIN candidates c USING (domain, as_of, candidate_id) "
                          "JOIN analyses a USING (domain, as_of, candidate_id) "
                          f"JOIN verifications v USING (domain, as_of, candidate_id) {where} "
                          "ORDER BY r.as_of, a.score DESC NULLS LAST, r.candidate_id", params)

    # ---- judgment quality: outcomes (known only after the fact) and the human's judgments -----------------------
    # Nothing on a verdict's path calls these: outcomes and judgments never feed a verdict (tests/test_outcomes.py).
    def write_outcomes(self, domain: str, as_of: date, rows: Sequence[Mapping[str, Any]]) -> None:
        """Replace the night's outcomes. A row: candidate_id, criteria_fingerprint, outcome_definition (the pack's
        `outcome:` as JSON), verdict, verification, status, value and record (the whole outcome as JSON)."""
        with self._connect() as con:
            con.execute("DELETE FROM outcomes WHERE domain = ? AND as_of = ?", [domain, as_of])
            if rows:
                _insert(con, "outcomes", rows=[
                    [domain, as_of, r["candidate_id"], r["criteria_fingerprint"], r["outcome_definition"],
                     r["verdict"], r["verification"], r["status"], r["value"], r["record"]] for r in rows])

    def outcomes(self, domain: str, nights: Sequence[date]) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM outcomes WHERE domain = ? AND as_of = ANY(CAST(? AS DATE[])) "
                          "ORDER BY as_of, candidate_id", [domain, list(nights)])

    def write_judgment(self, domain: str, as_of: date, candidate_id: str, *, decision: str, who: str,
                       note: str | None, judged_at: datetime) -> None:
        """Append a judgment; earlier ones stay (the latest per candidate and night is the label)."""
        with self._connect() as con:
            con.execute("INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [domain, as_of, candidate_id, judged_at, decision, who, note])

    def judgments(self, domain: str, *, start: date | None = None, end: date | None = None) -> list[dict[str, Any]]:
        """Every judgment of nights in [start, end], oldest first."""
        where, params = _where(("domain = ?", domain), ("as_of >= ?", start), ("as_of <= ?", end))
        return self.query(f"SELECT * FROM judgments {where} ORDER BY as_of, candidate_id, judged_at", params)

    def latest_judgments(self, domain: str, as_of: date) -> dict[str, str]:
        """Per candidate, the decision of its latest judgment on a night up to as_of (what a brief shows)."""
        rows = self.query("SELECT DISTINCT ON (candidate_id) candidate_id, decision FROM judgments "
                          "WHERE domain = ? AND as_of <= ? ORDER BY candidate_id, as_of DESC, judged_at DESC",
                          [domain, as_of])
        return {r["candidate_id"]: r["decision"] for r in rows}

    # ---- notifications: the sent-log, exactly once per (night, candidate, channel) --------------------------------
    def notification_log(self, domain: str, *, as_of: date | None = None, up_to: date | None = None,
                         channel: str | None = None) -> list[SentLogEntry]:
        where, params = _where(("domain = ?", domain), ("as_of = ?", as_of), ("as_of <= ?", up_to),
                               ("channel = ?", channel))
        rows = self.query("SELECT as_of, candidate_id, channel, verdict, status, updated_at FROM notifications "
                          f"{where} ORDER BY as_of, candidate_id, channel", params)
        return [SentLogEntry(**r) for r in rows]

    def notification_rows(self, domain: str, as_of: date) -> list[dict[str, Any]]:
        """The night's sent-log as stored (attempts, last error, run), for metadata and for people."""
        return self.query("SELECT * FROM notifications WHERE domain = ? AND as_of = ? ORDER BY channel, candidate_id",
                          [domain, as_of])

    def claim_notifications(self, domain: str, as_of: date, channel: str, verdicts: Mapping[str, str], *,
                            run_id: str, now: datetime, expiry: timedelta) -> list[str]:
        """Claim candidates (id → verdict) for sending on `channel`, in one transaction: only the ones `claimable`
        allows, so two runs never both send one. Returns the claimed ids.

        The rows read are locked until the claim commits (DuckDB: the file's lock; PostgreSQL: `FOR UPDATE`), so a
        claim made meanwhile is seen; a candidate with no row yet is claimed by inserting one, and of two runs
        inserting it at once the second inserts nothing (`ON CONFLICT DO NOTHING`) and does not claim it."""
        backend, _ = self._backend()
        with self._connect() as con:
            rows = con.execute("SELECT as_of, candidate_id, channel, verdict, status, updated_at FROM notifications "
                               "WHERE domain = ? AND as_of = ? AND channel = ?" + backend.LOCK_ROWS,
                               [domain, as_of, channel]).fetchall()
            existing = {row[1]: SentLogEntry(*row) for row in rows}
            claimed = claimable(existing, verdicts, now, expiry)
            claim = {c: [domain, as_of, c, channel, verdicts[c], CLAIMED, 0, None, run_id, now] for c in claimed}
            again = [c for c in claimed if c in existing]
            if again:
                _insert(con, "notifications", replace=True, rows=[claim[c] for c in again])
            new = [claim[c] for c in claimed if c not in existing]
            won = set(again) | set(_insert(con, "notifications", rows=new, returning="candidate_id") if new else ())
        return [c for c in claimed if c in won]

    def record_notifications(self, domain: str, as_of: date, channel: str, candidate_ids: Sequence[str], *,
                             status: str, attempts: int, error: str | None, run_id: str, now: datetime) -> None:
        """The outcome of a claimed send: `sent` or `failed` (a failed one may be claimed again later)."""
        with self._connect() as con:
            con.execute("UPDATE notifications SET status = ?, attempts = ?, error = ?, run_id = ?, updated_at = ? "
                        "WHERE domain = ? AND as_of = ? AND channel = ? AND candidate_id = ANY(CAST(? AS VARCHAR[]))",
                        [status, attempts, error, run_id, now, domain, as_of, channel, list(candidate_ids)])
