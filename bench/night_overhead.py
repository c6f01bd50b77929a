"""Benchmark: one night over all 46 areas through Dagster vs the same computation in plain Python, and a
24-month-end backfill. Prints numbers; asserts nothing (timing belongs here, not in unit tests).

The plain night calls the step functions the assets call (`*/step.py`, `per_candidate/pipeline.py`), so the
difference is Dagster's alone; the core computation (bare domain functions, no checks) is printed beside it.

    .venv/bin/python bench/night_overhead.py [--repeat 5] [--postgres] [--history 10000]

`--postgres` also runs the night on the production instance of `deploy/dagster.yaml`, in the database that the
DAGSTER_PG_* variables name (use a scratch one: the runs stay there). `--history N` also times the night on an
instance that already holds N candidate partitions of earlier nights (~43 a night): a cost that grows with history.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import date
from pathlib import Path

import dagster as dg
import yaml

from opportunity_assets import night as nights
from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.render import NightRecords, render_brief
from opportunity_assets.brief.routing import route
from opportunity_assets.brief.step import route_and_brief
from opportunity_assets.candidates.logic import scan
from opportunity_assets.candidates.step import scan_and_store
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.definitions import build_definitions
from opportunity_assets.notify.step import notify_channels
from opportunity_assets.partitions import CANDIDATE_PARTITIONS
from opportunity_assets.per_candidate.assets import PerCandidateConfig
from opportunity_assets.per_candidate.pipeline import Stages, run_candidates, store_checked
from opportunity_assets.records import Cost
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications.logic import verify
from resources.criteria import DEFAULT_PACK
from resources.store import ResultStore

warnings.filterwarnings("ignore")
AS_OF = date(2015, 8, 30)
ROOT = Path(__file__).resolve().parent.parent


def all_areas_pack(directory: Path) -> Path:
    raw = yaml.safe_load(DEFAULT_PACK.read_text())
    raw["source"]["path"] = str(DEFAULT_PACK.parent.parent / "txhousing.csv")
    raw["caps"]["max_candidates"] = 46  # every area that passes the filters goes on
    path = directory / "all_areas.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def plain_night(defs: dg.Definitions, pack: CriteriaPack, as_of: date) -> int:
    """The night's own work without Dagster: the step functions the four assets call, in the same order, with the
    same resources (so the same store writes, read-backs and checks, the same thread pool, the same outbox
    message). What it leaves out is Dagster's alone: runs, events, partitions, per-partition metadata."""
    resources = defs.resources or {}
    store, model = resources["store"], resources["model"]
    scanned = scan_and_store(pack, resources["source"], store, model, as_of)
    stages = Stages(analyze=True, verify=True)
    night = run_candidates(store, model, pack, scanned.going_on, stages, max_workers=PerCandidateConfig().max_workers)
    store_checked(store, model, pack, night, stages)
    route_and_brief(pack, store, model, as_of)
    notify_channels(pack, store, resources["notifier"], as_of, run_id="plain")
    return len(scanned.going_on)


def core_night(pack: CriteriaPack, as_of: date, store: ResultStore | None = None) -> int:
    """The night's core computation alone, as the bare domain functions: scan, analyze, verify, route, render;
    with `store`, the records persisted. No checks, no read-backs, no notification. A lower bound."""
    snapshot = read_snapshot(pack, as_of)
    candidates, report = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history)
    going_on = [c for c in candidates if c.went_on]
    analyses = [analyze(pack, c) for c in going_on]
    verifications = [verify(pack, c, a) for c, a in zip(going_on, analyses, strict=True)]
    routes = [route(a, v) for a, v in zip(analyses, verifications, strict=True)]
    night = NightRecords(as_of, going_on, analyses, verifications, routes, [], dataclasses.asdict(report))
    brief, summary = render_brief(pack, night, "off")
    if store is not None:
        store.write_scan(pack.domain, as_of, run_id="bench", criteria_fingerprint=pack.fingerprint,
                         criteria=pack.model_dump_json(), anchor_period=report.anchor_period,
                         scan_report=dataclasses.asdict(report), candidates=candidates, quarantined=[])
        store.write_stage(pack.domain, analyses=analyses)
        store.write_stage(pack.domain, verifications=verifications)
        store.write_routing(pack.domain, as_of, routes=routes, brief=brief, summary=summary, cost=Cost(),
                            model_mode="off")
    return len(going_on)


def empty_graph(candidates: int) -> dg.Definitions:
    """The night's graph with nothing in it: the same assets, partitions, checks, jobs and runs, but no work, no
    store and no per-partition metadata. Its time is what Dagster itself costs for this shape of night."""
    daily = dg.DailyPartitionsDefinition(start_date="2000-01-01")
    per_candidate = dg.DynamicPartitionsDefinition(name=CANDIDATE_PARTITIONS)  # run_night reads these

    def passed(asset: str, *checks: str) -> list[dg.AssetCheckResult]:
        return [dg.AssetCheckResult(asset_key=asset, check_name=c, passed=True) for c in checks]

    @dg.asset(name="candidates", partitions_def=daily, check_specs=[
        dg.AssetCheckSpec(c, asset="candidates") for c in ("filters_hold", "required_input_coverage")])
    def scan(context) -> dg.MaterializeResult:  # `context` unannotated: string annotations upset Dagster
        keys = [f"{context.partition_key}|{i:02d}" for i in range(candidates)]
        if not context.instance.has_dynamic_partition(per_candidate.name, keys[0]):
            context.instance.add_dynamic_partitions(per_candidate.name, keys)
        return dg.MaterializeResult(check_results=passed("candidates", "filters_hold", "required_input_coverage"))

    @dg.multi_asset(name="analyze_and_verify", partitions_def=per_candidate, can_subset=True,
                    backfill_policy=dg.BackfillPolicy.single_run(), specs=[
                        dg.AssetSpec("analyses", skippable=True,
                                     deps=[dg.AssetDep("candidates", partition_mapping=dg.AllPartitionMapping())]),
                        dg.AssetSpec("verifications", skippable=True, deps=["analyses"])],
                    check_specs=[dg.AssetCheckSpec("verdicts_consistent", asset="analyses"),
                                 dg.AssetCheckSpec("five_checks_reported", asset="verifications")])
    def per_candidate_step():
        yield dg.MaterializeResult(asset_key="analyses", check_results=passed("analyses", "verdicts_consistent"))
        yield dg.MaterializeResult(asset_key="verifications",
                                   check_results=passed("verifications", "five_checks_reported"))

    on_verifications = [dg.AssetDep("verifications", partition_mapping=dg.AllPartitionMapping())]

    @dg.multi_asset(partitions_def=daily, specs=[dg.AssetSpec("brief", deps=on_verifications),
                                                 dg.AssetSpec("archive", deps=on_verifications)],
                    check_specs=[dg.AssetCheckSpec("word_limit", asset="brief"),
                                 dg.AssetCheckSpec("numbers_in_store", asset="brief"),
                                 dg.AssetCheckSpec("routes_valid", asset="archive")])
    def brief_and_archive():
        yield dg.MaterializeResult(asset_key="brief", check_results=passed("brief", "word_limit", "numbers_in_store"))
        yield dg.MaterializeResult(asset_key="archive", check_results=passed("archive", "routes_valid"))

    @dg.asset(name="notifications", partitions_def=daily, deps=["brief"],
              check_specs=[dg.AssetCheckSpec("channels_delivered", asset="notifications")])
    def notify() -> dg.MaterializeResult:
        return dg.MaterializeResult(check_results=passed("notifications", "channels_delivered"))

    return dg.Definitions(
        assets=[scan, per_candidate_step, brief_and_archive, notify], executor=dg.in_process_executor,
        jobs=[dg.define_asset_job("scan_night", [scan], partitions_def=daily),
              dg.define_asset_job("analyze_night", [per_candidate_step]),
              dg.define_asset_job("finish_night", [brief_and_archive, notify], partitions_def=daily)])


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--backfill-months", type=int, default=24)
    parser.add_argument("--postgres", action="store_true", help="also on deploy/dagster.yaml (DAGSTER_PG_*)")
    parser.add_argument("--history", type=int, default=0, help="also with this many earlier candidate partitions")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        pack_path = all_areas_pack(tmp_path)
        pack = load_criteria(pack_path)
        defs = build_definitions(criteria_path=str(pack_path), store_path=str(tmp_path / "night.duckdb"))
        nights.prepare_in_process_runs()  # as `opportunity` does (it helps the plain runs as much)
        plain_defs = build_definitions(criteria_path=str(pack_path), store_path=str(tmp_path / "plain.duckdb"))
        analyzed = plain_night(plain_defs, pack, AS_OF)
        plain = timed(lambda: plain_night(plain_defs, pack, AS_OF), args.repeat)
        core = timed(lambda: core_night(pack, AS_OF), args.repeat)
        core_store = ResultStore(path=str(tmp_path / "core.duckdb"))
        core_stored = timed(lambda: core_night(pack, AS_OF, core_store), args.repeat)

        instance = nights.local_instance(tmp_path / "dagster_home")  # the persistent SQLite instance of `make run`
        first = timed(lambda: nights.run_night(defs, instance, AS_OF), 1)[0]
        warm = timed(lambda: nights.run_night(defs, instance, AS_OF), args.repeat)
        memory = dg.DagsterInstance.ephemeral()
        nights.run_night(defs, memory, AS_OF)
        in_memory = timed(lambda: nights.run_night(defs, memory, AS_OF), args.repeat)

        empty = empty_graph(analyzed)
        empty_instance = nights.local_instance(tmp_path / "empty_home")
        empty_sqlite = timed(lambda: nights.run_night(empty, empty_instance, AS_OF), args.repeat + 1)[1:]
        empty_memory_instance = dg.DagsterInstance.ephemeral()
        empty_memory = timed(lambda: nights.run_night(empty, empty_memory_instance, AS_OF), args.repeat + 1)[1:]

        p, c, cs = statistics.median(plain), statistics.median(core), statistics.median(core_stored)
        d, m = statistics.median(warm), statistics.median(in_memory)
        es, em = statistics.median(empty_sqlite), statistics.median(empty_memory)
        print(f"night {AS_OF}, 46 areas scanned, {analyzed} analyzed + verified, median of {args.repeat}:")
        print(f"  plain Python, the assets' step functions, no Dagster: {p * 1000:8.1f} ms   (the baseline)")
        print(f"    core computation alone (no checks, read-backs, notification): {c * 1000:.1f} ms; "
              f"with its records stored: {cs * 1000:.1f} ms")
        print(f"  Dagster, SQLite instance, all assets + checks:        {d * 1000:8.1f} ms   "
              f"(first {first * 1000:.0f} ms)")
        print(f"  Dagster, in-memory instance:                          {m * 1000:8.1f} ms")
        print(f"  ratio Dagster (SQLite) / plain:                       {d / p:8.2f} x   (goal <= 3x; "
              f"{d / cs:.2f} x the core computation + store)")
        print(f"  ratio Dagster (in-memory) / plain:                    {m / p:8.2f} x")
        briefs = [(night_defs.resources or {})["store"].brief(pack.domain, AS_OF) for night_defs in (defs, plain_defs)]
        same = briefs[0] is not None and briefs[1] is not None and briefs[0]["markdown"] == briefs[1]["markdown"]
        print(f"  the plain night's brief is the Dagster night's, word for word: {'yes' if same else 'NO'}")
        print(f"  the same graph with empty assets (Dagster's own cost for this night's shape: "
              f"{analyzed} x 2 partitions, 3 runs, 8 checks):")
        print(f"    SQLite instance:                                    {es * 1000:8.1f} ms   ({es / p:.2f} x)")
        print(f"    in-memory instance:                                 {em * 1000:8.1f} ms   ({em / p:.2f} x)")

        if args.postgres:
            pg_home = tmp_path / "postgres_home"
            pg_home.mkdir()
            (pg_home / "dagster.yaml").write_text((ROOT / "deploy" / "dagster.yaml").read_text())
            pg_instance = dg.DagsterInstance.from_config(str(pg_home))
            pg = timed(lambda: nights.run_night(defs, pg_instance, AS_OF), args.repeat + 1)[1:]
            pg_instance.dispose()
            print(f"  Dagster, PostgreSQL instance (deploy/dagster.yaml): {statistics.median(pg) * 1000:8.1f} ms   "
                  f"({statistics.median(pg) / p:.2f} x)")

        if args.history:
            earlier = [f"{night}|area{i:02d}" for night in nights.nights_between(date(2000, 1, 1), AS_OF, "day")
                       for i in range(43)][: args.history]
            instance.add_dynamic_partitions(CANDIDATE_PARTITIONS, earlier)
            grown = timed(lambda: nights.run_night(defs, instance, AS_OF), args.repeat)
            print(f"  Dagster, SQLite instance already holding {len(earlier)} earlier candidate partitions: "
                  f"{statistics.median(grown) * 1000:8.1f} ms")

        if not args.backfill_months:
            return
        backfill_defs = build_definitions(store_path=str(tmp_path / "backfill.duckdb"))
        backfill_instance = nights.local_instance(tmp_path / "backfill_home")
        months = nights.nights_between(date(2008, 1, 1), date(2009, 12, 31), "month-end")[: args.backfill_months]
        start = time.perf_counter()
        for as_of in months:
            nights.run_night(backfill_defs, backfill_instance, as_of)
        total = time.perf_counter() - start
        print(f"backfill of {len(months)} month-ends (2008-01..2009-12, bundled pack): {total:.1f} s "
              f"({total / len(months) * 1000:.0f} ms a night)")


if __name__ == "__main__":
    main()
