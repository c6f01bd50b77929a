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
