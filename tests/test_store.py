"""The result store on both backends (DuckDB file, PostgreSQL database): concurrent writers lose nothing, writes
replace their keys, the schema is made and migrated by the store, values come back as they went in, and two
workers claiming one notification never both get it."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import date, datetime, timedelta
from pathlib import Path

import dagster as dg
import duckdb
import psycopg
import pytest
import yaml

from opportunity_assets import night as nights
from opportunity_assets.definitions import build_definitions
from opportunity_assets.notify.logic import CLAIMED, FAILED, SENT
from opportunity_assets.records import RunError, RunState
from resources._store_errors import StoreError
from resources.model import AnthropicModel, CallRecord, ModelLog, ModelUse
from resources.store import STORE_URL_VARIABLE, ResultStore
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack
from tests.fake_anthropic import FakeAnthropic
from tests.stores import BACKENDS, new_database

NIGHT = date(2015, 1, 31)
NOW = datetime(2015, 2, 1, 6, 30, 15, 123456)
EXPIRY = timedelta(minutes=10)

Stores = Callable[[], ResultStore]
"""A new handle on the test's one store (as another process or run would open it)."""


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "duckdb":
        yield lambda: ResultStore(path=str(tmp_path / "results.duckdb"))
        return
    with new_database() as url:
        yield lambda: ResultStore(path=str(tmp_path / "results.duckdb"), url=url)


def _writer(path: str, url: str | None, worker: int, batches: int) -> None:
    store = ResultStore(path=path, url=url)
    for batch in range(batches):
        store.write_stage("d", errors=[RunError(as_of=date(2015, 1, 1), candidate_id=f"w{worker}-b{batch}-{i}",
                                                node="analyze", error="x" * 500) for i in range(5)])


def test_parallel_processes_lose_no_writes(stores: Stores) -> None:
    store = stores()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(store.path, store.url, w, 8)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(timeout=120)
        assert p.exitcode == 0
    rows = store.query("SELECT count(*) AS n, count(DISTINCT candidate_id) AS d FROM errors")
    assert rows == [{"n": 4 * 8 * 5, "d": 4 * 8 * 5}]


def test_rewriting_the_same_keys_replaces_them(stores: Stores) -> None:
    store = stores()
    for text in ("first", "second"):
        store.write_stage("d", errors=[RunError(as_of=date(2015, 1, 1), candidate_id="a", node="analyze", error=text)])
    assert [e.error for e in store.errors("d", date(2015, 1, 1))] == ["second"]


def test_cleared_removes_exactly_the_superseded_error_records(stores: Stores) -> None:
    store = stores()
    night, other_night = date(2015, 1, 31), date(2015, 2, 28)
    store.write_stage("d", errors=[RunError(as_of=as_of, candidate_id=c, node=node, error="x")
                                   for as_of in (night, other_night) for c in ("a", "b", "c")
                                   for node in ("analyze", "analyzer_model")])
    store.write_stage("d", cleared=[(night, "a", "analyze"), (night, "b", "analyzer_model"), (night, "zz", "analyze")])
    left = {(e.candidate_id, e.node) for e in store.errors("d", night)}
    assert left == {("a", "analyzer_model"), ("b", "analyze"), ("c", "analyze"), ("c", "analyzer_model")}
    assert len(store.errors("d", other_night)) == 6


def _call(key: str, candidate: str, usd: float) -> CallRecord:
    return CallRecord(key=key, domain="d", as_of=NIGHT, candidate_id=candidate, role="analyzer", model="m",
                      prompt_version="v1", request="{}", response='{"ok": true}', input_tokens=100, output_tokens=7,
                      cache_write_tokens=3, cache_read_tokens=11, usd=usd, attempts=1, error=None)


def test_the_model_call_cache_and_its_cost_replace_their_keys(stores: Stores) -> None:
    store = stores()
    first = ModelLog(calls=[_call("k1", "a", 0.1), _call("k2", "b", 0.2)],
                     uses=[ModelUse("d", NIGHT, "a", "analyzer", "k1", False),
                           ModelUse("d", NIGHT, "b", "analyzer", "k2", False)])
    store.write_stage("d", model_log=first)
    again = ModelLog(calls=[_call("k2", "b", 0.7)], uses=[ModelUse("d", NIGHT, "a", "analyzer", "k1", True),
                                                          ModelUse("d", NIGHT, "b", "analyzer", "k2", False)])
    store.write_stage("d", model_log=again, renewed=[(NIGHT, "a", "analyzer"), (NIGHT, "b", "analyzer")])
    assert sorted((c["key"], c["usd"]) for c in store.model_calls_of("d", NIGHT)) == [("k1", 0.1), ("k2", 0.7)]
    assert store.model_cost("d", NIGHT) == {"calls": 1, "input_tokens": 114, "output_tokens": 7, "usd": 0.7,
                                            "replayed_calls": 1, "replayed_usd": 0.1}
    store.write_stage("d", errors=[RunError(as_of=NIGHT, candidate_id="a", node="analyze", error="x")])
    assert store.query("SELECT candidate_id FROM model_uses") == [{"candidate_id": "b"}]  # a's use went with it


def _outcome(candidate: str, value: float | None) -> dict[str, object]:
    return {"candidate_id": candidate, "criteria_fingerprint": "f", "outcome_definition": "{}", "verdict": "STRONG",
            "verification": None, "status": "measured", "value": value, "record": "{}"}


def test_outcomes_and_judgments_of_a_range_of_nights(stores: Stores) -> None:
    store = stores()
    later = date(2015, 2, 28)
    store.write_outcomes("d", NIGHT, [_outcome("a", 0.1 + 0.2), _outcome("b", None)])
    store.write_outcomes("d", later, [_outcome("a", -1e-300)])
    store.write_outcomes("d", NIGHT, [_outcome("a", 2.5)])  # a night's outcomes are replaced whole
    assert [(r["as_of"], r["candidate_id"], r["value"]) for r in store.outcomes("d", [NIGHT, later])] == [
        (NIGHT, "a", 2.5), (later, "a", -1e-300)]
    assert store.outcomes("d", []) == []
    for as_of, decision, minutes in ((NIGHT, "pass", 0), (NIGHT, "pursue", 5), (later, "unsure", 1)):
        store.write_judgment("d", as_of, "a", decision=decision, who="ann", note=None,
                             judged_at=NOW + timedelta(minutes=minutes))
    store.write_judgment("d", NIGHT, "b", decision="pass", who="bob", note="50% sure?", judged_at=NOW)
    assert store.latest_judgments("d", NIGHT) == {"a": "pursue", "b": "pass"}
    assert store.latest_judgments("d", later) == {"a": "unsure", "b": "pass"}  # the latest night's wins
    judged = store.judgments("d", start=NIGHT, end=NIGHT)
    assert [(j["candidate_id"], j["judged_at"], j["note"]) for j in judged] == [
        ("a", NOW, None), ("a", NOW + timedelta(minutes=5), None), ("b", NOW, "50% sure?")]
    assert len(store.judgments("d")) == 4 and store.judgments("d", start=later)[0]["decision"] == "unsure"


def test_raw_queries_take_either_placeholder_and_literal_percent_signs(stores: Stores) -> None:
    store = stores()
    assert store.query("SELECT '50%' AS p, 'why?' AS q, CAST(? AS INTEGER) AS r", [3]) == [
        {"p": "50%", "q": "why?", "r": 3}]
    assert store.query("SELECT CAST($n AS INTEGER) + CAST($n AS INTEGER) AS twice", {"n": 2}) == [{"twice": 4}]
    assert store.query("SELECT 'a%b' AS t") == [{"t": "a%b"}]


def test_claims_are_exactly_once_and_a_failed_or_expired_claim_is_claimed_again(stores: Stores) -> None:
    store = stores()
    wanted = {"a": "STRONG", "b": "STRONG", "c": "STRONG"}
    assert store.claim_notifications("d", NIGHT, "slack", wanted, run_id="r1", now=NOW, expiry=EXPIRY) == [
        "a", "b", "c"]
    assert store.claim_notifications("d", NIGHT, "slack", wanted, run_id="r2", now=NOW, expiry=EXPIRY) == []
    assert store.claim_notifications("d", NIGHT, "email", {"a": "STRONG"}, run_id="r2", now=NOW,
                                     expiry=EXPIRY) == ["a"]  # another channel: its own claims
    store.record_notifications("d", NIGHT, "slack", ["a"], status=SENT, attempts=1, error=None, run_id="r1", now=NOW)
    store.record_notifications("d", NIGHT, "slack", ["b"], status=FAILED, attempts=3, error="HTTP 500",
                               run_id="r1", now=NOW)
    later = NOW + EXPIRY + timedelta(seconds=1)  # c's claim is stale: its run died before recording
    assert store.claim_notifications("d", NIGHT, "slack", wanted, run_id="r3", now=later, expiry=EXPIRY) == ["b", "c"]
    rows = {r["candidate_id"]: (r["status"], r["attempts"], r["run_id"], r["updated_at"])
            for r in store.notification_rows("d", NIGHT) if r["channel"] == "slack"}
    assert rows == {"a": (SENT, 1, "r1", NOW), "b": (CLAIMED, 0, "r3", later), "c": (CLAIMED, 0, "r3", later)}
    assert [(e.candidate_id, e.channel, e.status) for e in store.notification_log("d", as_of=NIGHT,
                                                                                  channel="slack")] == [
        ("a", "slack", SENT), ("b", "slack", CLAIMED), ("c", "slack", CLAIMED)]
    assert len(store.notification_log("d", up_to=NIGHT - timedelta(days=1))) == 0


@pytest.mark.parametrize("earlier", ["none", "failed"])
def test_a_claim_waits_for_one_in_flight_and_then_gets_nothing(stores: Stores, earlier: str) -> None:
    """Run A claims (a new row, or a failed one's again) and holds its transaction open; run B claims the same
    candidate meanwhile, must wait for A's commit, and then finds it claimed. Without row locks or unique claims
    B would read the old state and send too."""
    first, second = stores(), stores()
    if earlier == "failed":
        first.claim_notifications("d", NIGHT, "slack", {"a": "STRONG"}, run_id="r0", now=NOW, expiry=EXPIRY)
        first.record_notifications("d", NIGHT, "slack", ["a"], status=FAILED, attempts=3, error="x", run_id="r0",
                                   now=NOW)
    a_claimed, b_started = threading.Event(), threading.Event()
    results: dict[str, list[str]] = {}

    def run_a() -> None:
        with first.session():
            results["a"] = first.claim_notifications("d", NIGHT, "slack", {"a": "STRONG"}, run_id="rA", now=NOW,
                                                     expiry=EXPIRY)
            a_claimed.set()
            assert b_started.wait(10)
            threading.Event().wait(0.5)  # B is now waiting for this transaction

    def run_b() -> None:
        assert a_claimed.wait(10)
        b_started.set()
        results["b"] = second.claim_notifications("d", NIGHT, "slack", {"a": "STRONG"}, run_id="rB", now=NOW,
                                                  expiry=EXPIRY)

    threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert results == {"a": ["a"], "b": []}
    assert [(r["run_id"], r["status"]) for r in second.notification_rows("d", NIGHT)] == [("rA", CLAIMED)]


def _claimer(path: str, url: str | None, worker: int, start: multiprocessing.synchronize.Barrier,
             out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    store = ResultStore(path=path, url=url)
    store.ready()
    won = []
    for night in range(10):
        start.wait(30)
        won += [(night, c) for c in store.claim_notifications(
            "d", NIGHT + timedelta(days=night), "slack", {f"c{i}": "STRONG" for i in range(5)},
            run_id=f"w{worker}", now=NOW, expiry=EXPIRY)]
    out.put((worker, won))


def test_processes_racing_to_claim_the_same_notifications_claim_each_exactly_once(stores: Stores) -> None:
    store = stores()
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(3), context.Queue()
    workers = [context.Process(target=_claimer, args=(store.path, store.url, w, start, out)) for w in range(3)]
    for p in workers:
        p.start()
    won = dict(out.get(timeout=120) for _ in workers)
    for p in workers:
        p.join(timeout=30)
        assert p.exitcode == 0
    claims = [claim for worker in won.values() for claim in worker]
    assert sorted(claims) == sorted((night, f"c{i}") for night in range(10) for i in range(5))  # once each
    stored = store.query("SELECT as_of, candidate_id, run_id FROM notifications")
    assert {(r["as_of"], r["candidate_id"]): r["run_id"] for r in stored} == {
        (NIGHT + timedelta(days=night), c): f"w{w}" for w, claimed in won.items() for night, c in claimed}


def test_the_store_migrates_a_store_made_before_briefs_had_updated_at(stores: Stores) -> None:
    store = stores()
    old = ("CREATE TABLE briefs (domain VARCHAR, as_of DATE, markdown VARCHAR, words INTEGER, summary VARCHAR, "
           "cost VARCHAR, model_mode VARCHAR, PRIMARY KEY (domain, as_of))")
    if store.url is None:
        with duckdb.connect(store.path) as con:
            con.execute(old)
            con.execute("INSERT INTO briefs VALUES ('d', '2015-01-31', '# old', 2, '{}', '{}', 'off')")
    else:
        with psycopg.connect(store.url, autocommit=True) as con:
            con.execute(old)
            con.execute("INSERT INTO briefs VALUES ('d', '2015-01-31', '# old', 2, '{}', '{}', 'off')")
    assert store.brief("d", NIGHT) == {"domain": "d", "as_of": NIGHT, "markdown": "# old", "words": 2,
                                       "summary": "{}", "cost": "{}", "model_mode": "off", "updated_at": None}
    assert store.query("SELECT count(*) AS n FROM archive") == [{"n": 0}]


def _quarantine_row(row: int, entity: str, reason: str) -> dict[str, object]:
    return {"source_row": row, "entity_id": entity, "period": date(2012, 12, 31), "reason": reason}


def _scan_with(store: ResultStore, quarantined: list[dict[str, object]]) -> None:
    store.write_scan("d", NIGHT, run_id="r", criteria_fingerprint="f", criteria="{}", anchor_period=None,
                     scan_report={}, candidates=[], quarantined=quarantined)


def test_one_source_row_quarantined_for_several_entities_is_stored_once_for_each(stores: Stores) -> None:
    """Trial 29: a wide line's bad cells of gold and silver (or a joined table's row numbered as one of the main
    source's) are two quarantine records of one source row; the second broke the key, and the night stopped with
    DuckDB's 'Current transaction is aborted (please ROLLBACK)'."""
    store = stores()
    refused = [_quarantine_row(9129, "gold", "duplicated key"), _quarantine_row(9129, "silver", "duplicated key"),
               _quarantine_row(9130, "gold", "join cpi: duplicated key")]
    for _ in range(2):  # a night scanned again replaces its records
        _scan_with(store, refused)
    assert [(q["source_row"], q["entity_id"]) for q in store.quarantined("d", NIGHT)] == [
        (9129, "gold"), (9129, "silver"), (9130, "gold")]


def test_the_store_migrates_a_quarantine_keyed_by_source_row(stores: Stores) -> None:
    store = stores()
    old = ("CREATE TABLE quarantine (domain VARCHAR, as_of DATE, source_row BIGINT, entity_id VARCHAR, period DATE, "
           "reason VARCHAR, PRIMARY KEY (domain, as_of, source_row))")
    rows = ("INSERT INTO quarantine VALUES ('d', '2015-01-31', 7, 'a', NULL, 'x'), "
            "('d', '2015-01-31', 8, 'b', NULL, 'y')")
    if store.url is None:
        with duckdb.connect(store.path) as con:
            con.execute(old)
            con.execute(rows)
    else:
        with psycopg.connect(store.url, autocommit=True) as con:
            con.execute(old)
            con.execute(rows)
    assert [(q["source_row"], q["entity_id"]) for q in store.quarantined("d", NIGHT)] == [(7, "a"), (8, "b")]
    _scan_with(store, [_quarantine_row(9, "gold", "x"), _quarantine_row(9, "silver", "x")])
    assert [(q["source_row"], q["entity_id"]) for q in stores().quarantined("d", NIGHT)] == [
        (9, "gold"), (9, "silver")]


def test_both_backends_give_back_the_same_values(tmp_path: Path) -> None:
    """Dates, timestamps to the microsecond, doubles to the last bit, NULLs: the same Python values and types
    from either backend, so everything made from them (a brief) is the same."""
    with new_database() as url:
        read = []
        for store in (ResultStore(path=str(tmp_path / "r.duckdb")), ResultStore(path=str(tmp_path / "r.duckdb"),
                                                                               url=url)):
            store.write_outcomes("d", NIGHT, [_outcome("a", 0.1 + 0.2), _outcome("b", 1 / 3), _outcome("c", None),
                                              _outcome("é-ü", 1.7976931348623157e308)])
            store.write_judgment("d", NIGHT, "a", decision="pass", who="ann", note="ß", judged_at=NOW)
            store.write_stage("d", model_log=ModelLog(calls=[_call("k", "a", 0.000123456789012345)]))
            read.append([store.outcomes("d", [NIGHT]), store.judgments("d"), store.model_calls_of("d", NIGHT)])
    duck, postgres = read
    assert repr(duck[0]) == repr(postgres[0]) and repr(duck[1]) == repr(postgres[1])
    assert [{k: v for k, v in c.items() if k != "created_at"} for c in duck[2]] == [
        {k: v for k, v in c.items() if k != "created_at"} for c in postgres[2]]
    assert type(postgres[2][0]["created_at"]) is type(duck[2][0]["created_at"]) is datetime


def test_a_wrong_or_unreachable_store_url_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    for url, problem in (("postgresql://opportunity:s3cret@127.0.0.1:1/opportunity", "Connection refused"),
                         ("mysql://opportunity:s3cret@127.0.0.1/opportunity", "is not a PostgreSQL URL"),
                         ("opportunity:s3cret@127.0.0.1:5432/opportunity", "'opportunity:***@127.0.0.1:5432/"),
                         ("s3cret", "'(a value that is no URL: not shown)' is not a PostgreSQL URL"),
                         ("host=127.0.0.1 password=s3cret", "password=***")):
        with pytest.raises(StoreError) as raised:
            ResultStore(url=url).ready()
        message = str(raised.value)
        assert message.startswith(f"{STORE_URL_VARIABLE}: ") and problem in message
        assert "s3cret" not in message and "\n" not in message
    with new_database() as url:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute("DROP SCHEMA public")
        with pytest.raises(StoreError, match=f"^{STORE_URL_VARIABLE}: the result store's tables cannot be made in "
                                             "postgresql://opportunity:\\*\\*\\*@"):
            ResultStore(url=url).ready()
    home = tmp_path / "dagster_home"
    done = subprocess.run([sys.executable, "-m", "opportunity_assets.cli", "run", "--as-of", "2011-10-31",
                           "--dagster-home", str(home), "--store", str(tmp_path / "r.duckdb")],
                          env={**os.environ, STORE_URL_VARIABLE: "postgresql://opportunity:s3cret@127.0.0.1:1/x"},
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"opportunity: {STORE_URL_VARIABLE}: the result store at ")
    assert len(done.stderr.splitlines()) == 1 and "s3cret" not in done.stderr
    assert not home.exists()  # no night started: not even the Dagster instance was opened


def test_a_store_path_that_is_a_folder_or_another_file_is_one_line_naming_store(tmp_path: Path) -> None:
    """Trial 38: `--store /tmp/x` (a folder) and `--store sales.csv` (the source) ended in a traceback and DuckDB's
    own text, and `--store sales.duckdb` (the source's database) wrote the store's tables among its data; a path
    that is no store's file is one line naming `--store`, before anything is written."""
    data = tmp_path / "sales.csv"
    data.write_text("sale_id,sold_on\n1,2010-01-04\n")
    empty = tmp_path / "new.duckdb"
    empty.touch()
    for path, problem in ((tmp_path, "a folder"), (data, "no DuckDB database"), (empty, "no DuckDB database"),
                          (data / "results.duckdb", "is a file, not a folder")):
        with pytest.raises(StoreError) as raised:
            ResultStore(path=str(path)).ready()
        message = str(raised.value)
        assert message.startswith(f"--store: got '{path}'") and problem in message and "\n" not in message
    assert data.read_text() == "sale_id,sold_on\n1,2010-01-04\n"
    source = tmp_path / "sales.duckdb"
    with duckdb.connect(str(source)) as con:
        con.execute("CREATE TABLE sales AS SELECT 1 AS sale_id")
    with pytest.raises(StoreError, match=r"a DuckDB database of other tables \(sales\) and no result store's"):
        ResultStore(path=str(source)).ready()
    with duckdb.connect(str(source)) as con:
        assert [t for (t,) in con.execute("SHOW TABLES").fetchall()] == ["sales"]
    ResultStore(path=str(tmp_path / "new" / "results.duckdb")).ready()  # a new file, with its folder
    done = subprocess.run([sys.executable, "-m", "opportunity_assets.cli", "archive", "--store", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith(f"opportunity: --store: got '{tmp_path}', a folder")
    assert len(done.stderr.splitlines()) == 1


def test_a_store_cut_short_in_a_folder_not_writable_or_on_a_full_disk_is_one_line_naming_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 68: a store file cut short (an interrupted copy), a store in a read-only folder and a disk that
    filled up mid-night each ended in a traceback or DuckDB's text ("IO Error: Could not read enough bytes",
    `OSError: [Errno 30] Read-only file system`, "CHECKPOINT during DETACH failed"); each is one line naming
    `--store` and what to do, and an error of the code's own is still raised as it is."""
    import errno

    from resources import _store_duckdb

    whole = tmp_path / "whole.duckdb"
    ResultStore(path=str(whole)).ready()
    cut = tmp_path / "cut.duckdb"
    cut.write_bytes(whole.read_bytes()[:whole.stat().st_size // 2])
    with pytest.raises(StoreError, match=r"^--store: got '.*cut\.duckdb', a DuckDB file that is damaged .*: move "
                                         r"it aside and run again to make a new store, or restore it from a copy$"):
        ResultStore(path=str(cut)).ready()
    done = subprocess.run([sys.executable, "-m", "opportunity_assets.cli", "archive", "--store", str(cut)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith(f"opportunity: --store: got '{cut}', a DuckDB file")
    assert len(done.stderr.splitlines()) == 1
    lock = str(tmp_path / "ro" / "results.duckdb.lock")
    said = _store_duckdb.unusable(str(tmp_path / "ro" / "results.duckdb"),
                                  OSError(errno.EROFS, "Read-only file system", lock))
    assert said is not None and "in a folder this process cannot write in" in said
    full = str(tmp_path / "full.duckdb")
    said = _store_duckdb.unusable(full, duckdb.IOException(
        f'IO Error: Could not write file "{full}": No space left on device'))
    assert said is not None and said.startswith(f"--store: the disk holding '{full}' is full: free some space")
    assert _store_duckdb.unusable(full, duckdb.BinderException("Binder Error: no column x")) is None
    assert _store_duckdb.unusable(full, OSError(errno.EROFS, "Read-only file system", "/elsewhere/x")) is None

    insert = _store_duckdb.insert_all

    def disk_full(con: object, table: str, *args: object, **kwargs: object) -> bool:
        if table == "analyses":  # the per-candidate step's first write
            raise duckdb.IOException(f'IO Error: Could not write file "{full}": No space left on device')
        return insert(con, table, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_store_duckdb, "insert_all", disk_full)
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    defs = build_definitions(criteria_path=str(pack), store_path=full)
    with pytest.raises(nights.NightFailed) as failed:
        nights.run_night(defs, dg.DagsterInstance.ephemeral(), date(2011, 10, 31))
    assert str(failed.value) == (f"analyze_night failed: analyze_and_verify: --store: the disk holding '{full}' is "
                                 "full: free some space and run the same command again (a night run again "
                                 "replaces its own; the nights stored before are kept)")


def _runs_differ(backend: str, first: RunState, again: RunState) -> str:
    """What differed between two runs of one night on one store (CI's run of f966443 once sent a second message:
    the first run's act-on list lacked Austin), for the failure to say which records moved."""
    said = [f"{backend}: the night run again gave another brief"]
    for name in ("candidates", "analyses", "verifications", "routes", "errors"):
        before = {json.dumps(r.model_dump(mode="json"), sort_keys=True) for r in getattr(first, name)}
        after = {json.dumps(r.model_dump(mode="json"), sort_keys=True) for r in getattr(again, name)}
        said += [f"{name} only in the first run: {r[:1500]}" for r in sorted(before - after)]
        said += [f"{name} only in the second run: {r[:1500]}" for r in sorted(after - before)]
    return "\n".join([*said, "first brief:", first.brief.markdown if first.brief else "(none)"])


@pytest.mark.slow
def test_a_night_on_postgresql_writes_the_brief_byte_for_byte_as_on_duckdb(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same night through Dagster with the store chosen by OPPORTUNITY_STORE_URL, and without it."""
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    night = date(2011, 10, 31)
    runs = {}
    with new_database() as url:
        for backend in BACKENDS:
            if backend == "postgres":
                monkeypatch.setenv(STORE_URL_VARIABLE, url)
            folder = tmp_path / backend
            defs = build_definitions(criteria_path=str(pack), store_path=str(folder / "results.duckdb"))
            nights.run_night(defs, dg.DagsterInstance.ephemeral(), night)
            first = nights.state(defs, night)
            nights.run_night(defs, dg.DagsterInstance.ephemeral(), night)  # idempotent: the same records again
            again = nights.state(defs, night)
            assert again.brief == first.brief, _runs_differ(backend, first, again)
            runs[backend] = (again, (folder / "outbox.jsonl").read_text().splitlines())
        with psycopg.connect(url) as con:
            assert con.execute("SELECT count(*) FROM briefs").fetchone() == (1,)
    (duck, duck_outbox), (postgres, postgres_outbox) = runs["duckdb"], runs["postgres"]
    assert duck.brief is not None and postgres.brief is not None
    assert postgres.brief.markdown.encode() == duck.brief.markdown.encode()
    assert json.loads(postgres.model_dump_json()) == json.loads(duck.model_dump_json())
    assert not (tmp_path / "postgres" / "results.duckdb").exists()
    assert len(duck_outbox) == len(postgres_outbox) == 1  # sent once, re-run or not
    assert json.loads(postgres_outbox[0]) == json.loads(duck_outbox[0])


@pytest.mark.slow
def test_a_rerun_replays_the_model_calls_from_either_store(stores: Stores, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The model-call cache: a night re-run with the model on sends no request and bills nothing anew."""
    store = stores()
    if store.url is not None:
        monkeypatch.setenv(STORE_URL_VARIABLE, store.url)
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    night = date(2011, 10, 31)
    with FakeAnthropic() as server:
        model = AnthropicModel(api_key="test-key", base_url=server.url, store=store, max_retry_after_s=0.2)
        defs = build_definitions(criteria_path=str(pack), store_path=store.path, model=model)
        instance = dg.DagsterInstance.ephemeral()
        nights.run_night(defs, instance, night)
        sent = len(server.requests)
        first = nights.state(defs, night)
        nights.run_night(defs, instance, night)
        second = nights.state(defs, night)
    resent = [_asked(r.body) for r in server.requests[sent:]]
    assert sent > 0 and not resent, (f"{sent} calls, then {resent} sent again; first run's errors {first.errors}, "
                                      f"second's {second.errors}")
    assert first.cost.calls == sent and second.cost.calls == 0 and second.cost.replayed_calls == sent
    assert second.cost.replayed_usd == first.cost.usd > 0
    assert len(store.model_calls_of("texas_housing", night)) == sent


def _asked(body: dict) -> str:
    """A recorded request in a few words: its role and entity (what a failed replay sent again)."""
    payload = json.loads(body["messages"][0]["content"])
    return f"{payload.get('role')} {(payload.get('analysis') or {}).get('entity', '')}".strip()


def test_the_kubernetes_values_give_the_store_url_from_the_secret_to_the_code_server_and_every_run_pod() -> None:
    text = (ROOT / "deploy" / "k8s" / "values.yaml").read_text()
    values = yaml.safe_load(text)
    code_server = values["dagster-user-deployments"]["deployments"][0]
    run_pods = values["runLauncher"]["config"]["k8sRunLauncher"]
    assert code_server["envSecrets"] == run_pods["envSecrets"] == [{"name": "opportunity-secrets"}]
    assert f"{STORE_URL_VARIABLE}, the result store's URL with its password" in text
    assert STORE_URL_VARIABLE not in json.dumps(run_pods.get("envVars", []))  # a secret: never a plain value here


def test_score_history_reads_the_candidates_nights_in_order(stores: Stores) -> None:
    from opportunity_assets.records import Analysis, Verdict

    store = stores()

    def analysis(as_of: date, cid: str, score: float | None) -> Analysis:
        verdict = Verdict.INSUFFICIENT_DATA if score is None else Verdict.STRONG
        return Analysis(as_of=as_of, candidate_id=cid, numbers={}, calculation=[], components={}, score=score,
                        verdict=verdict, reasoning="r", assumptions=[], red_flags=[])

    later = date(2015, 2, 28)
    store.write_stage("d", analyses=[analysis(NIGHT, "a", 71.5), analysis(NIGHT, "b", None),
                                     analysis(NIGHT, "c", 50.0), analysis(later, "a", 80.25)])
    rows = store.score_history("d", ["b", "a", "a"], up_to=later)
    assert [(r["as_of"], r["candidate_id"], r["verdict"], r["score"]) for r in rows] == [
        (NIGHT, "a", "STRONG", 71.5), (NIGHT, "b", "INSUFFICIENT_DATA", None), (later, "a", "STRONG", 80.25)]
    assert store.score_history("d", ["a"], up_to=NIGHT)[-1]["as_of"] == NIGHT
    assert store.score_history("d", [], up_to=later) == []


def test_briefed_nights_are_latest_first_with_their_act_on_count(stores: Stores) -> None:
    from opportunity_assets.records import Brief, Cost, Destination, Route, Summary

    store = stores()
    summary = Summary(scanned=2, passed_filters=2, capped=0, analyzed=2, by_tag={}, errors=0)
    for as_of, acting in ((NIGHT, ["a", "b"]), (date(2015, 2, 28), []), (date(2015, 3, 31), ["a"])):
        routes = [Route(as_of=as_of, candidate_id=c, destination=Destination.BRIEF, section_or_tag="act_on_these",
                        rule="r") for c in acting]
        routes.append(Route(as_of=as_of, candidate_id="z", destination=Destination.ARCHIVE,
                            section_or_tag="below_threshold", rule="r"))
        store.write_routing("d", as_of, routes=routes, brief=Brief(as_of=as_of, markdown="m", words=1),
                            summary=summary, cost=Cost(), model_mode="off")
    assert [(r["as_of"], r["act_on"]) for r in store.briefed_nights("d")] == [
        (date(2015, 3, 31), 1), (date(2015, 2, 28), 0), (NIGHT, 2)]
    assert len(store.briefed_nights("d", limit=2)) == 2 and store.briefed_nights("other") == []


def test_a_store_file_deleted_while_a_process_uses_it_is_one_line_then_made_again(tmp_path: Path) -> None:
    """Trial 109: the store's DuckDB file deleted (or moved aside) mid-night: the process, having made the schema
    once, attached a new empty file and the night stopped with DuckDB's "Catalog Error: Table with name nights does
    not exist! Did you mean "pg_tables"?" over four lines. It is one line naming `--store` and what to do, and the
    next use makes the store again (a long-lived process, `dagster dev`, goes on)."""
    path = tmp_path / "results.duckdb"
    store = ResultStore(path=str(path))
    store.ready()
    assert store.night("texas_housing", date(2011, 10, 31)) is None
    path.unlink()
    with pytest.raises(StoreError) as raised:
        store.night("texas_housing", date(2011, 10, 31))
    said = str(raised.value)
    assert "\n" not in said and said.startswith(f"--store: '{path}' disappeared while this process used it") \
        and "run the same command again" in said, said
    assert store.night("texas_housing", date(2011, 10, 31)) is None  # made again
