"""Benchmark: one night on the PostgreSQL result store against the same night on the DuckDB store, side by side in
one run. Prints numbers; asserts nothing.

The night is bench/night_overhead.py's: the bundled Texas data, all 46 areas, deterministic mode, as of
2015-08-30. Each repetition runs it once on each store, in turn (so both see the same machine load): through
Dagster (`opportunity run`'s path, on a SQLite instance of its own) and as the plain step functions (the store's
share stands out more). The PostgreSQL store is a new database on the server OPPORTUNITY_PG_* name (the test
suite's, from .ci/services.sh), dropped afterwards; `--url` uses one you name instead.

    .venv/bin/python bench/store_backends.py [--repeat 7] [--url postgresql://...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import dagster as dg
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.night_overhead import AS_OF, all_areas_pack, plain_night
from opportunity_assets import night as nights
from opportunity_assets.criteria import load_criteria
from opportunity_assets.definitions import build_definitions
from resources.model import ModelOff
from resources.store import STORE_URL_VARIABLE, ResultStore

warnings.filterwarnings("ignore")


@contextmanager
def scratch_database() -> Iterator[str]:
    server = (f"postgresql://{os.environ.get('OPPORTUNITY_PG_USER', 'opportunity')}:"
              f"{os.environ.get('OPPORTUNITY_PG_PASSWORD', 'opportunity')}@"
              f"{os.environ.get('OPPORTUNITY_PG_HOST', '127.0.0.1')}:{os.environ.get('OPPORTUNITY_PG_PORT', '5432')}/")
    name = f"opportunity_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server + os.environ.get("OPPORTUNITY_PG_DB", "opportunity"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield server + name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def definitions(pack_path: Path, folder: Path) -> dg.Definitions:
    """The night's definitions, the store chosen as `opportunity` chooses it: by OPPORTUNITY_STORE_URL."""
    return build_definitions(criteria_path=str(pack_path), store_path=str(folder / "results.duckdb"),
                             model=ModelOff())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--url", default=None, help="a PostgreSQL database to use (default: a scratch one)")
    args = parser.parse_args()
    os.environ.pop(STORE_URL_VARIABLE, None)
    with tempfile.TemporaryDirectory() as tmp, (nullcontext(args.url) if args.url else scratch_database()) as url:
        tmp_path = Path(tmp)
        pack_path = all_areas_pack(tmp_path)
        pack = load_criteria(pack_path)
        nights.prepare_in_process_runs()
        backends = {"DuckDB": definitions(pack_path, tmp_path / "duckdb")}
        os.environ[STORE_URL_VARIABLE] = url  # from here on, definitions built use the PostgreSQL store
        backends["PostgreSQL"] = definitions(pack_path, tmp_path / "postgres")
        instances = {name: nights.local_instance(tmp_path / f"home_{name}") for name in backends}
        dagster_times: dict[str, list[float]] = {name: [] for name in backends}
        plain_times: dict[str, list[float]] = {name: [] for name in backends}
        for name in backends:  # first nights: schema, caches, imports
            nights.run_night(backends[name], instances[name], AS_OF)
            analyzed = plain_night(backends[name], pack, AS_OF)
        for _ in range(args.repeat):
            for name in backends:
                start = time.perf_counter()
                nights.run_night(backends[name], instances[name], AS_OF)
                dagster_times[name].append(time.perf_counter() - start)
                start = time.perf_counter()
                plain_night(backends[name], pack, AS_OF)
                plain_times[name].append(time.perf_counter() - start)
        stores = {name: (defs.resources or {})["store"] for name, defs in backends.items()}
        briefs = {name: store.brief(pack.domain, AS_OF) for name, store in stores.items()}
        print(f"night {AS_OF}, 46 areas scanned, {analyzed} analyzed + verified, deterministic mode; "
              f"median of {args.repeat}, the stores in turn:")
        for label, times in (("through Dagster (SQLite instance)", dagster_times),
                             ("plain step functions, no Dagster", plain_times)):
            duck, postgres = (statistics.median(times[name]) for name in ("DuckDB", "PostgreSQL"))
            print(f"  {label}:")
            print(f"    DuckDB store:      {duck * 1000:8.1f} ms   (range {min(times['DuckDB']) * 1000:.0f}–"
                  f"{max(times['DuckDB']) * 1000:.0f})")
            print(f"    PostgreSQL store:  {postgres * 1000:8.1f} ms   (range {min(times['PostgreSQL']) * 1000:.0f}–"
                  f"{max(times['PostgreSQL']) * 1000:.0f})")
            print(f"    ratio PostgreSQL / DuckDB: {postgres / duck:.2f} x")
        same = all(b is not None for b in briefs.values()) and len({b["markdown"] for b in briefs.values()}) == 1
        store = stores["PostgreSQL"]
        assert isinstance(store, ResultStore)
        print(f"  the brief is the same byte for byte on both stores: {'yes' if same else 'NO'} "
              f"(PostgreSQL store: {store.location})")
        for instance in instances.values():
            instance.dispose()


if __name__ == "__main__":
    main()
