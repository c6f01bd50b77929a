"""The result store under concurrent writers: several processes, one DuckDB file, no lost or torn writes."""

from __future__ import annotations

import multiprocessing
from datetime import date
from pathlib import Path

from opportunity_assets.records import RunError
from resources.store import ResultStore


def _writer(path: str, worker: int, batches: int) -> None:
    store = ResultStore(path=path)
    for batch in range(batches):
        store.write_stage("d", errors=[RunError(as_of=date(2015, 1, 1), candidate_id=f"w{worker}-b{batch}-{i}",
                                                node="analyze", error="x" * 500) for i in range(5)])


def test_parallel_processes_lose_no_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "results.duckdb")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(path, w, 8)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(timeout=120)
        assert p.exitcode == 0
    rows = ResultStore(path=path).query("SELECT count(*) AS n, count(DISTINCT candidate_id) AS d FROM errors")
    assert rows == [{"n": 4 * 8 * 5, "d": 4 * 8 * 5}]


def test_rewriting_the_same_keys_replaces_them(tmp_path: Path) -> None:
    store = ResultStore(path=str(tmp_path / "r.duckdb"))
    for text in ("first", "second"):
        store.write_stage("d", errors=[RunError(as_of=date(2015, 1, 1), candidate_id="a", node="analyze", error=text)])
    assert [e.error for e in store.errors("d", date(2015, 1, 1))] == ["second"]


def test_cleared_removes_exactly_the_superseded_error_records(tmp_path: Path) -> None:
    store = ResultStore(path=str(tmp_path / "r.duckdb"))
    night, other_night = date(2015, 1, 31), date(2015, 2, 28)
    store.write_stage("d", errors=[RunError(as_of=as_of, candidate_id=c, node=node, error="x")
                                   for as_of in (night, other_night) for c in ("a", "b", "c")
                                   for node in ("analyze", "analyzer_model")])
    store.write_stage("d", cleared=[(night, "a", "analyze"), (night, "b", "analyzer_model"), (night, "zz", "analyze")])
    left = {(e.candidate_id, e.node) for e in store.errors("d", night)}
    assert left == {("a", "analyzer_model"), ("b", "analyze"), ("c", "analyze"), ("c", "analyzer_model")}
    assert len(store.errors("d", other_night)) == 6
