"""A 24-night backfill on Celery workers, with 1 worker and with 2, in one run: the wall time of each and the ratio.

The deployment of tests/test_distributed.py (tests/hosts.py): each worker (`-c 1`) in a network namespace of its own,
a PostgreSQL server and a Redis broker on a private bridge, the instance on deploy/dagster.yaml, the result store
on PostgreSQL. Each pass starts a new cluster, backfills the 24 month-ends 2010-2011 of the six most liquid Texas
markets (one scan_night run per night) and runs the sensor chain until it launches nothing more (analyze, brief,
notify per night with something to send; 4 runs orchestrated at once, 2 of them tagged `llm`, as the run queue
allows). Timed: from the backfill's first run to the chain's last. Needs root and `.ci/services.sh`'s packages.

    .venv/bin/python bench/celery_backfill.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dagster as dg

from opportunity_assets.definitions import build_definitions
from opportunity_assets.night import nights_between
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack
from tests.hosts import CeleryDaemon, celery_cluster, write_definitions

NIGHTS = nights_between(date(2010, 1, 1), date(2011, 12, 31), "month-end")


def _backfill(workers: int, folder: Path) -> float:
    """Seconds for the whole backfill through the chain on `workers` workers."""
    folder.mkdir()
    pack = write_pack(folder, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    settings = folder / "automation.yaml"
    settings.write_text("{}")
    names = [f"w{i}" for i in range(1, workers + 1)]
    with celery_cluster(names, folder, visibility_seconds=3600) as (_, cluster):
        for name in names:
            cluster.start(name)
        home = folder / "dagster_home"
        home.mkdir()
        shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
        os.environ.update({**cluster.environment, "DAGSTER_HOME": str(home)})  # this process is the pass's own
        sys.path.insert(0, str(folder))
        write_definitions(folder, pack=pack, store_path=folder / "results.duckdb", settings=settings)
        defs = build_definitions(criteria_path=str(pack), store_path=str(folder / "results.duckdb"),
                                 settings_path=str(settings))
        cluster.wait_ready()
        with dg.DagsterInstance.get() as instance:
            daemon = CeleryDaemon(defs, instance, folder / "cursors.json", folder)
            try:
                started = time.perf_counter()
                scans = daemon.execute_all([("scan_night", as_of.isoformat(), {}) for as_of in NIGHTS])
                daemon.run_until_quiet(max_ticks=8)
                elapsed = time.perf_counter() - started
            finally:
                daemon.close()
            runs = instance.get_runs()
            launched = Counter(run.job_name for run in runs)
            assert len(scans) == launched["analyze_night"] == launched["brief_night"] == len(NIGHTS), launched
            assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}
    return elapsed


def _pass_in_its_own_process(workers: int) -> float:
    """One pass in a new Python process (each cluster's services reuse the same addresses, and a process keeps its
    store connections by URL)."""
    done = subprocess.run([sys.executable, __file__, "--workers", str(workers)], check=True, capture_output=True,
                          text=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, help="one pass with this many workers; prints its seconds")
    args = parser.parse_args()
    if args.workers:
        with tempfile.TemporaryDirectory(prefix="celery-bench-") as scratch:
            print(_backfill(args.workers, Path(scratch) / "pass"))
        return
    one = _pass_in_its_own_process(1)
    print(f"{len(NIGHTS)} nights, 1 worker:  {one:.1f} s ({one / len(NIGHTS):.2f} s a night)", flush=True)
    two = _pass_in_its_own_process(2)
    print(f"{len(NIGHTS)} nights, 2 workers: {two:.1f} s ({two / len(NIGHTS):.2f} s a night)")
    print(f"ratio 1 worker / 2 workers: {one / two:.2f}x")


if __name__ == "__main__":
    main()
