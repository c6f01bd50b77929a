"""A 24-night backfill on Celery workers, with 1 worker and with 2, in one run: the wall time of each and the ratio.

The deployment of tests/test_distributed.py (tests/hosts.py): each worker (`-c 1`) in a network namespace of its own,
a PostgreSQL server and a Redis broker on a private bridge, the instance on deploy/dagster.yaml, the result store
on PostgreSQL. Each pass starts a new cluster, backfills the 24 month-ends 2010-2011 of the six most liquid Texas
markets (one scan_night run per night) and runs the sensor chain until it launches nothing more (analyze, brief,
notify per night; 4 runs orchestrated at once, 2 of them tagged `llm`, as the run queue allows). Timed: from the
backfill's first run to the chain's last. Needs root and `.ci/services.sh`'s packages.

    .venv/bin/python bench/celery_backfill.py
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
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
        saved = dict(os.environ)
        os.environ.update({**cluster.environment, "DAGSTER_HOME": str(home)})
        sys.path.insert(0, str(folder))
        try:
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
                assert len(scans) == len(NIGHTS) and len(runs) == 4 * len(NIGHTS), len(runs)
                assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}
        finally:
            sys.path.remove(str(folder))
            sys.modules.pop("night_definitions", None)
            os.environ.clear()
            os.environ.update(saved)
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="celery-bench-") as scratch:
        one = _backfill(1, Path(scratch) / "one")
        print(f"{len(NIGHTS)} nights, 1 worker:  {one:.1f} s ({one / len(NIGHTS):.2f} s a night)", flush=True)
        two = _backfill(2, Path(scratch) / "two")
        print(f"{len(NIGHTS)} nights, 2 workers: {two:.1f} s ({two / len(NIGHTS):.2f} s a night)")
        print(f"ratio 1 worker / 2 workers: {one / two:.2f}x")


if __name__ == "__main__":
    main()
