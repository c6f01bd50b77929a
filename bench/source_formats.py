"""What reading a source costs, by format, side by side in one run: the point-in-time read of a night
(`read_snapshot`) over the Texas file as CSV, Parquet, JSON Lines and a DuckDB table, next to a bare DuckDB
`read_csv` aggregation of the same CSV; then the same at `--copies` x the Texas file (jittered entity names).

    .venv/bin/python bench/source_formats.py [--copies 50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from functools import partial
from pathlib import Path

import duckdb
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opportunity_assets.criteria import load_criteria  # noqa: E402
from opportunity_assets.sources.snapshot import read_snapshot  # noqa: E402
from tests.conftest import write_pack  # noqa: E402

AS_OF = date(2009, 12, 31)


def _best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _files(directory: Path, copies: int) -> dict[str, Path]:
    frame = pl.read_csv(ROOT / "data" / "txhousing.csv", infer_schema_length=0)
    if copies > 1:
        frame = pl.concat([frame.with_columns(pl.col("city") + f" {k}") for k in range(copies)])
    paths = {"csv": directory / "s.csv", "parquet": directory / "s.parquet", "jsonl": directory / "s.jsonl",
             "duckdb": directory / "s.duckdb"}
    frame.write_csv(paths["csv"])
    frame.write_parquet(paths["parquet"])
    frame.write_ndjson(paths["jsonl"])
    con = duckdb.connect(str(paths["duckdb"]))
    con.execute("CREATE TABLE txhousing AS SELECT * FROM frame")
    con.close()
    return paths


def _bare(path: Path) -> None:
    duckdb.connect().execute("SELECT city, sum(try_cast(sales AS DOUBLE)) FROM read_csv($p, all_varchar = true) "
                             "GROUP BY city", {"p": str(path)}).fetchall()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for copies in (1, args.copies):
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            paths = _files(directory, copies)
            rows = pl.read_csv(paths["csv"], infer_schema_length=0).height
            csv_path = paths["csv"]
            bare = _best(partial(_bare, csv_path), args.repeat)
            print(f"{copies} x Texas: {rows:,} rows; bare DuckDB read_csv + group by: {bare * 1000:.0f} ms")
            for fmt, path in paths.items():
                (directory / fmt).mkdir()
                pack = load_criteria(write_pack(directory / fmt, path))
                seconds = _best(partial(read_snapshot, pack, AS_OF, today=date(2026, 12, 1)), args.repeat)
                print(f"  read_snapshot from {fmt:<8} {seconds * 1000:7.0f} ms  ({seconds / bare:4.1f}x bare)")


if __name__ == "__main__":
    main()
