"""What breadth costs: a whole deterministic night (`opportunity run`, through Dagster) over the Texas file (46
entities) and over `--copies` jittered copies of it (233: 10,718 entities, 2.0M rows), side by side in one run, next
to a bare DuckDB aggregation of the wide file. Each night runs in its own process; its wall time and peak memory
(max RSS, from the kernel's rusage of that process) are printed, with the two ratios the README quotes:

- extra time of the wide night over the 46-entity night, against the bare aggregation's time;
- peak memory of the wide night against the 46-entity night's.

It also times the night's first step alone over each file, in this process: the rows read and typed as a night
reads them (`formats.open_pack_source`: every cell typed and judged, the table kept), and nothing else. Its extra
time over the Texas file's, against the bare aggregation, is a floor no night's ratio goes under.

    .venv/bin/python bench/breadth.py [--copies 233] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opportunity_assets.criteria import load_criteria  # noqa: E402
from opportunity_assets.periods import Grain  # noqa: E402
from opportunity_assets.sources.formats import open_pack_source  # noqa: E402
from opportunity_assets.sources.shapes import typed_sql  # noqa: E402
from tests.conftest import write_pack  # noqa: E402

AS_OF = "2009-12-31"
NUMERIC = ["sales", "volume", "median", "listings", "inventory"]
OWN_HISTORY = {f"integrity.identities.{n}.expected": None for n in (0, 1)}
"""Both nights' packs judge each identity against each entity's own history: a copy's one factor scales months of
inventory and the median price with the counts, so the bundled packs' bands (in the data's own units) no longer hold
for most copies, and the check before a night stops it (`integrity.identities.N.expected`)."""


def wide_file(path: Path, copies: int) -> tuple[int, int]:
    """`copies` copies of the Texas file, each area renamed and scaled by its own factor (seeded): real series,
    as many entities as asked."""
    frame = pl.read_csv(ROOT / "data" / "txhousing.csv", infer_schema_length=0)
    rng = np.random.default_rng(7)
    parts = []
    for k in range(copies):
        factor = float(rng.uniform(0.8, 1.25))
        parts.append(frame.with_columns(pl.col("city") + f" {k}", *[
            (pl.col(c).cast(pl.Float64, strict=False) * factor).round(1).cast(pl.Utf8) for c in NUMERIC]))
    wide = pl.concat(parts)
    wide.write_csv(path)
    return wide["city"].n_unique(), wide.height


POLARS_OWN_ALLOCATOR = "dirty_decay_ms:500,muzzy_decay_ms:1000,abort_conf:false"
"""polars' own jemalloc setting, which `opportunity_assets/__init__.py` overrides (freed pages back at once, not
kept for about 1.5 s): the wide night is also run with it, for what that costs in time and saves at the peak.
(`abort_conf:false`, jemalloc's default, makes it a setting of the user's, which the package keeps.)"""


def night(pack: Path, work: Path, allocator: str | None = None) -> tuple[float, float]:
    """One `opportunity run` in a fresh process with a fresh store: (seconds, peak RSS in MB); `allocator`: a
    `_RJEM_MALLOC_CONF` for it (None: the package's own)."""
    store, home = work / "r.duckdb", work / "home"
    for leftover in (store, Path(f"{store}.lock")):
        leftover.unlink(missing_ok=True)
    started = time.perf_counter()
    process = subprocess.Popen([str(ROOT / ".venv" / "bin" / "opportunity"), "run", "--as-of", AS_OF, "--criteria",
                                str(pack), "--store", str(store), "--dagster-home", str(home)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**{k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}, "CI": "1",
                                    **({"_RJEM_MALLOC_CONF": allocator} if allocator else {})})
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"night on {pack} failed: {process.stderr.read().decode()[-2000:] if process.stderr else ''}")
    return elapsed, usage.ru_maxrss / 1024


def bare(path: Path, threads: int | None) -> float:
    con = duckdb.connect(config={"threads": threads} if threads else {})
    started = time.perf_counter()
    con.execute("SELECT city, count(*), sum(try_cast(sales AS DOUBLE)), avg(try_cast(inventory AS DOUBLE)) "
                "FROM read_csv($p, all_varchar = true) GROUP BY city", {"p": str(path)}).fetchall()
    elapsed = time.perf_counter() - started
    con.close()
    return elapsed


def first_step(pack_path: Path) -> float:
    """The night's step 1 alone: the pack's source read and typed into its table, as `opportunity run` does."""
    pack = load_criteria(pack_path)
    con = duckdb.connect(config={"threads": os.cpu_count() or 1, "preserve_insertion_order": True})
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        open_pack_source(con, pack, lambda spec, relation: typed_sql(spec, Grain(spec.grain), relation), Path(scratch))
        elapsed = time.perf_counter() - started
        con.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=233)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        entities, rows = wide_file(work / "wide.csv", args.copies)
        (work / "small").mkdir()
        (work / "wide").mkdir()
        small_pack = write_pack(work / "small", ROOT / "data" / "txhousing.csv", quiet_integrity=False, **OWN_HISTORY)
        wide_pack = write_pack(work / "wide", work / "wide.csv", quiet_integrity=False, **OWN_HISTORY)
        night(small_pack, work / "small")  # warm the file cache and the imports once
        small, wide, polars_own, bare_1, bare_n, step_small, step_wide = [], [], [], [], [], [], []
        for _ in range(args.repeat):  # interleaved, so load on the machine falls on both alike
            small.append(night(small_pack, work / "small"))
            wide.append(night(wide_pack, work / "wide"))
            polars_own.append(night(wide_pack, work / "wide", POLARS_OWN_ALLOCATOR))
            bare_1.append(bare(work / "wide.csv", 1))
            bare_n.append(bare(work / "wide.csv", None))
            step_small.append(first_step(small_pack))
            step_wide.append(first_step(wide_pack))
    s_time, s_mem = statistics.median(t for t, _ in small), statistics.median(m for _, m in small)
    w_time, w_mem = statistics.median(t for t, _ in wide), statistics.median(m for _, m in wide)
    b1, bn = statistics.median(bare_1), statistics.median(bare_n)
    print(f"| | 46-entity night | {entities:,}-entity night ({rows:,} rows) | bare DuckDB aggregation |")
    print("|---|---|---|---|")
    print(f"| time (median of {args.repeat}) | {s_time:.2f} s | {w_time:.2f} s | {bn:.2f} s ({b1:.2f} s on 1 thread) |")
    print(f"| peak memory | {s_mem:.0f} MB | {w_mem:.0f} MB | |")
    print(f"extra time over the 46-entity night: {w_time - s_time:.2f} s = {(w_time - s_time) / bn:.1f}x the bare "
          f"aggregation ({(w_time - s_time) / b1:.1f}x its 1-thread time); goal <= 2x")
    print(f"peak memory: {w_mem / s_mem:.2f}x the 46-entity night's; goal <= 2x")
    own_time, own_mem = statistics.median(t for t, _ in polars_own), statistics.median(m for _, m in polars_own)
    print(f"the wide night with polars' own allocator setting ({POLARS_OWN_ALLOCATOR}): {own_time:.2f} s, "
          f"{own_mem:.0f} MB = {own_mem / s_mem:.2f}x")
    s_step, w_step = statistics.median(step_small), statistics.median(step_wide)
    print(f"the first step alone (rows read and typed, as a night does; nothing else): {s_step:.2f} s and "
          f"{w_step:.2f} s, extra {w_step - s_step:.2f} s = {(w_step - s_step) / bn:.1f}x the bare aggregation")


if __name__ == "__main__":
    main()
