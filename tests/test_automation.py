"""Running unattended: the schedule's night, the sensor chain over many nights at once (a backfill), exactly
one message per night however often the sensors re-read, and a night killed with -9 then run again."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import dagster as dg
import pytest
import yaml
from dagster._core.utils import make_new_run_id
from pydantic import ValidationError

from opportunity_assets import night as nights
from opportunity_assets.automation.logic import (
    AS_OF_TAG,
    Materialization,
    SensorCursor,
    TickInput,
    check_schedule,
    night_ready,
    not_yet_briefed,
    plan_after_scans,
    plan_briefs,
    plan_notifications,
    scheduled_as_of,
    split_by_run_state,
)
from opportunity_assets.automation.sensors import build_chain_sensors
from opportunity_assets.automation.settings import ModelSettings, SensorSettings, SettingsError, load_settings
from opportunity_assets.definitions import build_definitions
from opportunity_assets.notify.logic import CLAIMED
from opportunity_assets.partitions import nightly_partitions
from opportunity_assets.report.step import read_report
from opportunity_assets.run_health import PID_TAG, process_tags
from resources.criteria import CriteriaResource
from resources.store import ResultStore
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack
from tests.daemon import QUIET, InProcessDaemon
from tests.receivers import HOLD, HttpReceiver

OCT, NOV, DEC, QUIET_NIGHT = date(2011, 10, 31), date(2011, 11, 30), date(2011, 12, 31), date(2011, 7, 31)
"""Month-ends of the bundled data with a 6-candidate cap: Austin and Collin County to act on in October, Dallas
joins in November, Fort Bend in December; nothing to act on in July."""


# ---- pure decisions --------------------------------------------------------------------------------------------

def _m(storage_id: int, run_id: str, partition: str) -> Materialization:
    return Materialization(storage_id=storage_id, run_id=run_id, partition=partition)


def test_records_of_unfinished_runs_wait_in_the_cursor_and_none_is_dropped() -> None:
    cursor = SensorCursor(after_storage_id=10, waiting=(7,))
    tick = split_by_run_state(cursor, [_m(7, "a", "2011-10-31"), _m(12, "b", "2011-11-30"),
                                       _m(11, "c", "2011-12-31")], finished_runs={"a", "c"})
    assert [r.storage_id for r in tick.ready] == [7, 11]
    assert tick.cursor == SensorCursor(after_storage_id=12, waiting=(12,))
    assert SensorCursor.from_json(tick.cursor.to_json()) == tick.cursor
    assert SensorCursor.from_json(None) == SensorCursor()
    later = split_by_run_state(tick.cursor, [_m(12, "b", "2011-11-30")], finished_runs={"b"})
    assert [r.storage_id for r in later.ready] == [12] and later.cursor == SensorCursor(after_storage_id=12)


def test_a_night_briefed_after_its_records_has_nothing_to_chain() -> None:
    tick = TickInput(ready=(_m(5, "a", "2011-10-31"), _m(9, "b", "2011-11-30"), _m(12, "c", "2011-12-31")),
                     cursor=SensorCursor(after_storage_id=12))
    left = not_yet_briefed(tick, {date(2011, 10, 31): 7, date(2011, 11, 30): 8})
    assert [r.partition for r in left.ready] == ["2011-11-30", "2011-12-31"]  # briefed before its scan; never
    assert left.cursor == tick.cursor


def test_a_scan_leads_to_one_run_over_the_nights_partitions_or_straight_to_its_brief() -> None:
    keys = {OCT: ["2011-10-31|austin", "2011-10-31|dallas"], QUIET_NIGHT: []}
    tags = {OCT: {"dagster/asset_partition_range_start": "2011-10-31|austin",
                  "dagster/asset_partition_range_end": "2011-10-31|dallas"}}
    planned = plan_after_scans([_m(3, "r1", "2011-10-31"), _m(5, "r2", "2011-10-31"), _m(4, "r3", "2011-07-31")],
                               keys, tags, per_candidate_job="analyze_night", brief_job="brief_night")
    assert [(p.job, p.run_key, p.partition_key, dict(p.tags)) for p in planned] == [
        ("brief_night", "brief|2011-07-31|scan-4", "2011-07-31", {AS_OF_TAG: "2011-07-31"}),
        ("analyze_night", "candidates|2011-10-31|5", None, {**tags[OCT], AS_OF_TAG: "2011-10-31"}),
    ]


def test_a_night_is_ready_when_every_candidate_has_a_verification_or_an_error_record() -> None:
    assert night_ready(["a", "b", "c"], ["a"], [("b", "analyze"), ("c", "verify")])
    assert not night_ready(["a", "b"], ["a"], [("b", "analyzer_model")])  # a model note is not the end of b
    assert night_ready([], [], [])
    planned = plan_briefs([_m(1, "run1", "2011-10-31|a"), _m(2, "run1", "2011-10-31|b"),
                           _m(3, "run2", "2011-11-30|a")], ready_nights={OCT}, brief_job="brief_night")
    assert [(p.run_key, p.partition_key) for p in planned] == [("brief|2011-10-31|run1", "2011-10-31")]
    planned = plan_notifications([_m(8, "x", "2011-10-31"), _m(9, "y", "2011-10-31"), _m(7, "z", "2011-07-31")],
                                 nights_with_pending={OCT}, notify_job="notify_night")
    assert [(p.run_key, p.partition_key) for p in planned] == [("notify|2011-10-31|9", "2011-10-31")]


# ---- the schedule ----------------------------------------------------------------------------------------------

def _settings_file(tmp_path: Path, settings: dict[str, object]) -> str:
    path = tmp_path / "automation.yaml"
    path.write_text(yaml.safe_dump(settings))
    return str(path)


def test_the_schedule_scans_the_previous_day_in_its_time_zone(tmp_path: Path) -> None:
    defs = build_definitions(store_path=str(tmp_path / "r.duckdb"), settings_path=_settings_file(
        tmp_path, {"schedule": {"hour": 2, "minute": 30, "timezone": "America/Chicago"}}))
    schedule = defs.resolve_schedule_def("nightly_scan")
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("30 2 * * *", "America/Chicago")
    assert schedule.job_name == "scan_night"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    # 02:30 in Chicago on 10 March 2024 (the night daylight saving starts) is 08:30 UTC: the night is the 9th.
    tick_time = datetime(2024, 3, 10, 2, 30, tzinfo=ZoneInfo("America/Chicago"))
    with dg.instance_for_test() as instance:
        context = dg.build_schedule_context(instance=instance, scheduled_execution_time=tick_time,
                                            repository_def=defs.get_repository_def())
        [request] = schedule.evaluate_tick(context).run_requests or []
    assert (request.partition_key, request.run_key) == ("2024-03-09", "scan|2024-03-09")
    with dg.partition_loading_context(effective_dt=tick_time):  # the night build_schedule_from_partitioned_job
        assert nightly_partitions(date(2000, 3, 1)).get_last_partition_key() == "2024-03-09"  # would pick, in UTC
    assert scheduled_as_of(datetime(2024, 3, 10, 2, 0, tzinfo=UTC), "UTC") == date(2024, 3, 9)
    default = build_definitions(store_path=str(tmp_path / "r.duckdb")).resolve_schedule_def("nightly_scan")
    assert (default.cron_schedule, default.execution_timezone) == ("0 2 * * *", "UTC")


def test_a_schedule_that_fires_before_the_utc_day_ends_is_refused_at_load() -> None:
    with pytest.raises(ValueError, match=r"02:00 Asia/Tokyo .* choose 09:00 or later"):
        check_schedule(2, 0, "Asia/Tokyo")
    check_schedule(9, 0, "Asia/Tokyo")
    with pytest.raises(ValueError, match="choose 11:00 or later"):  # daylight saving: UTC+11 in January
        check_schedule(10, 0, "Australia/Sydney")
    check_schedule(0, 0, "America/Los_Angeles")


# ---- the sensor chain on a real instance -------------------------------------------------------------------------

@pytest.fixture
def http() -> Iterator[HttpReceiver]:
    receiver = HttpReceiver()
    yield receiver
    receiver.close()


def _files(tmp_path: Path, http: HttpReceiver) -> tuple[str, str]:
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    settings = _settings_file(tmp_path, {"sensors": {"minimum_interval_seconds": 5}, "notifications": {
        "ui_base_url": "http://127.0.0.1:3000", "backoff_seconds": 0.05,
        "channels": {"webhook": {"url": http.url("/hook")}}}})
    return str(pack), settings


def _instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dg.DagsterInstance:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return dg.DagsterInstance.get()


def _acts(body: dict[str, object]) -> list[tuple[str, bool]]:
    items = body["act_on_these"]
    assert isinstance(items, list)
    return sorted((i["candidate_id"], i["still_strong"]) for i in items)


@pytest.mark.slow
def test_nights_landing_between_ticks_are_each_briefed_and_notified_once(
        tmp_path: Path, http: HttpReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    pack, settings = _files(tmp_path, http)
    defs = build_definitions(criteria_path=pack, store_path=str(tmp_path / "results.duckdb"), settings_path=settings)
    instance = _instance(tmp_path, monkeypatch)
    for night in (NOV, QUIET_NIGHT, OCT, DEC):  # a backfill: every scan lands before the sensors' first tick
        assert defs.resolve_job_def("scan_night").execute_in_process(
            instance=instance, partition_key=night.isoformat(), run_config=QUIET).success
    daemon = InProcessDaemon(defs, instance, tmp_path / "cursors.json")
    daemon.run_until_quiet()

    assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in daemon.launched)
    assert Counter(run.job_name for run in daemon.launched) == {"analyze_night": 4, "brief_night": 4,
                                                                 "notify_night": 3}
    briefs = instance.fetch_materializations(dg.AssetKey("brief"), limit=100).records
    assert Counter(r.partition_key for r in briefs) == {n.isoformat(): 1 for n in (OCT, NOV, DEC, QUIET_NIGHT)}
    bodies = http.bodies("/hook")
    assert [b["as_of"] for b in bodies] == ["2011-10-31", "2011-11-30", "2011-12-31"]  # nothing for July
    assert [_acts(b) for b in bodies] == [
        [("austin", False), ("collin-county", False)],
        [("austin", True), ("collin-county", True), ("dallas", False)],
        [("austin", True), ("collin-county", True), ("dallas", True), ("fort-bend", False)]]
    assert bodies[0]["brief_url"] == "http://127.0.0.1:3000/assets/brief?view=partitions&partition=2011-10-31"
    per_candidate = next(r for r in daemon.launched
                         if r.job_name == "analyze_night" and r.tags[AS_OF_TAG] == "2011-10-31")
    assert per_candidate.tags["dagster/asset_partition_range_start"].startswith("2011-10-31|")

    # Nothing twice: another tick; a restarted daemon re-reading from old cursors; a re-materialized brief.
    assert daemon.tick() == []
    daemon.reset_cursors()
    assert daemon.run_until_quiet() == 0  # every run key was launched before
    assert defs.resolve_job_def("brief_night").execute_in_process(
        instance=instance, partition_key=NOV.isoformat(), run_config=QUIET).success
    assert daemon.run_until_quiet() == 0  # nothing undelivered for November: no notification run
    assert defs.resolve_job_def("notify_night").execute_in_process(
        instance=instance, partition_key=NOV.isoformat(), run_config=QUIET).success  # forced: the sent-log holds
    assert len(http.bodies("/hook")) == 3
    assert len((tmp_path / "outbox.jsonl").read_text().splitlines()) == 3


@pytest.mark.slow
def test_nights_the_command_line_ran_whole_are_not_chained_again_when_the_daemon_starts(
        tmp_path: Path, http: HttpReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 119: `dagster dev` started on a home where `opportunity run` had run nights launched `analyze_night`
    and `brief_night` again for every one of them (a night's brief written 6 times): the sensors read every
    record from the start, and a night the command line ran whole has a brief after its scan. A night whose scan
    is newer than its brief (scanned again, or stopped before its brief) is chained as before; one an `opportunity`
    command is still running is left to it, and chained once that command has died before its brief."""
    pack, settings = _files(tmp_path, http)
    store, home = tmp_path / "results.duckdb", tmp_path / "dagster_home"
    command = "from opportunity_assets.command import main; raise SystemExit(main())"
    done = subprocess.run([sys.executable, "-c", command, "run", "--as-of", OCT.isoformat(), "--criteria", pack,
                           "--store", str(store), "--dagster-home", str(home), "--settings", settings],
                          capture_output=True, text=True, cwd=ROOT, check=False)  # (its own process, gone now)
    assert done.returncode == 0, done.stderr
    sent = len(http.bodies("/hook"))
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    instance = dg.DagsterInstance.get()
    defs = build_definitions(criteria_path=pack, store_path=str(store), settings_path=settings)
    daemon = InProcessDaemon(defs, instance, tmp_path / "cursors.json")
    assert daemon.run_until_quiet() == 0
    briefs = instance.fetch_materializations(dg.AssetKey("brief"), limit=100).records
    assert Counter(r.partition_key for r in briefs) == {OCT.isoformat(): 1}
    assert len(http.bodies("/hook")) == sent

    assert defs.resolve_job_def("scan_night").execute_in_process(  # scanned again from the UI: chained again
        instance=instance, partition_key=OCT.isoformat(), run_config=QUIET).success
    daemon.run_until_quiet()
    assert Counter(run.job_name for run in daemon.launched) == {"analyze_night": 1, "brief_night": 1}
    assert len(http.bodies("/hook")) == sent

    # A night an `opportunity` command is running, between its scan's run and its next: the command chains it
    # while it lives (here, this process), the daemon once it has died before its brief.
    assert defs.resolve_job_def("scan_night").execute_in_process(
        instance=instance, partition_key=DEC.isoformat(), run_config=QUIET, tags=process_tags()).success
    assert daemon.run_until_quiet() == 0
    assert SensorCursor.from_json(daemon.cursors()["chain_after_scan"]).waiting
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    assert defs.resolve_job_def("scan_night").execute_in_process(
        instance=instance, partition_key=QUIET_NIGHT.isoformat(), run_config=QUIET,
        tags={**process_tags(), PID_TAG: gone.stdout.strip()}).success
    daemon.run_until_quiet()
    assert [r.tags[AS_OF_TAG] for r in daemon.launched if r.job_name == "brief_night"][-1] == "2011-07-31"


def test_a_failed_blocking_check_stops_the_night_at_that_step(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan sensor on stand-in assets: a night whose scan failed `filters_hold` gets no next run."""
    nights = nightly_partitions(QUIET_NIGHT)

    @dg.asset(name="candidates", partitions_def=nights,
              check_specs=[dg.AssetCheckSpec("filters_hold", asset="candidates", blocking=True)])
    def stand_in_scan(context) -> dg.MaterializeResult:  # `context` unannotated: string annotations upset Dagster
        return dg.MaterializeResult(check_results=[dg.AssetCheckResult(
            check_name="filters_hold", passed=context.partition_key != QUIET_NIGHT.isoformat())])

    @dg.asset(name="brief", partitions_def=nights)
    def stand_in_brief() -> None:
        return None

    scan = dg.define_asset_job("scan", [stand_in_scan], partitions_def=nights)
    brief = dg.define_asset_job("brief", [stand_in_brief], partitions_def=nights)
    sensors = build_chain_sensors(per_candidate_job=scan, brief_job=brief, notify_job=brief, channels=["outbox"],
                                  claim_expiry=timedelta(minutes=15), interval_seconds=30, running=True)
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv")
    defs = dg.Definitions(assets=[stand_in_scan, stand_in_brief], jobs=[scan, brief], sensors=sensors[:1],
                          resources={"criteria": CriteriaResource(path=str(pack)),
                                     "store": ResultStore(path=str(tmp_path / "results.duckdb"))})
    instance = _instance(tmp_path, monkeypatch)
    for night in (QUIET_NIGHT, OCT):
        defs.resolve_job_def("scan").execute_in_process(instance=instance, partition_key=night.isoformat(),
                                                        raise_on_error=False)
    context = dg.build_sensor_context(instance=instance, definitions=defs, resources=defs.resources)
    result = sensors[0].evaluate_tick(context)
    assert [(r.job_name, r.partition_key) for r in result.run_requests or []] == [("brief", "2011-10-31")]
    assert SensorCursor.from_json(result.cursor).waiting == ()


def _requested(sensor: dg.SensorDefinition, defs: dg.Definitions, instance: dg.DagsterInstance,
               cursor: str | None = None) -> tuple[list[dg.RunRequest], str | None]:
    context = dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs, resources=defs.resources)
    result = sensor.evaluate_tick(context)
    return list(result.run_requests or []), result.cursor


@pytest.mark.slow
def test_under_the_daemon_a_brief_waits_for_the_night_before_still_running(
        tmp_path: Path, http: HttpReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 42: `opportunity run` waited in its run for an earlier night still running, but the chain's brief
    did not, so November's brief said "new" against September where its message, which waited, said "still
    strong" against October. The sensor holds the request in its cursor instead, up to the settings' wait."""
    pack, settings = _files(tmp_path, http)
    defs = build_definitions(criteria_path=pack, store_path=str(tmp_path / "results.duckdb"), settings_path=settings)
    instance = _instance(tmp_path, monkeypatch)
    daemon = InProcessDaemon(defs, instance, tmp_path / "cursors.json")
    for night in (OCT, NOV):
        assert defs.resolve_job_def("scan_night").execute_in_process(
            instance=instance, partition_key=night.isoformat(), run_config=QUIET).success
    analyses, _ = _requested(defs.resolve_sensor_def("chain_after_scan"), defs, instance)
    by_night = {r.tags[AS_OF_TAG]: r for r in analyses}
    after_verifications = defs.resolve_sensor_def("chain_after_verifications")
    daemon.execute("analyze_night", None, by_night[NOV.isoformat()].tags)  # November finishes first
    # October only scanned, between its runs (the same tick verifies a backfill's nights): no hold
    assert [r.partition_key for r in _requested(after_verifications, defs, instance)[0]] == [NOV.isoformat()]

    instance.add_run(dg.DagsterRun(job_name="analyze_night", run_id=make_new_run_id(),
                                   status=dg.DagsterRunStatus.STARTED, tags=by_night[OCT.isoformat()].tags))
    requested, cursor = _requested(after_verifications, defs, instance)
    assert requested == []  # October's per-candidate run is in flight: November's brief is held
    assert SensorCursor.from_json(cursor).waiting
    jobs = {name: defs.resolve_job_def(name) for name in ("analyze_night", "brief_night", "notify_night")}
    unbounded = build_chain_sensors(per_candidate_job=jobs["analyze_night"], brief_job=jobs["brief_night"],
                                    notify_job=jobs["notify_night"], channels=["webhook"],
                                    claim_expiry=timedelta(minutes=15), interval_seconds=5, running=True)
    assert [r.partition_key for r in _requested(unbounded[1], defs, instance)[0]] == [NOV.isoformat()]  # no wait

    daemon.execute("analyze_night", None, by_night[OCT.isoformat()].tags)
    assert defs.resolve_job_def("brief_night").execute_in_process(
        instance=instance, partition_key=OCT.isoformat(), run_config=QUIET).success
    requested, _ = _requested(after_verifications, defs, instance, cursor)
    assert [r.partition_key for r in requested] == [NOV.isoformat()]  # October briefed after its verifications
    assert defs.resolve_job_def("brief_night").execute_in_process(
        instance=instance, partition_key=NOV.isoformat(), run_config=QUIET).success
    loaded, store = nights.resources_of(defs)
    report = read_report(store, loaded, NOV)
    assert report.last_night == OCT
    assert ("austin", "still strong") in [(c.candidate_id, c.change) for c in report.changes]


# ---- a night killed with -9, then run again ----------------------------------------------------------------------

NIGHT_SCRIPT = """
import sys
from datetime import date
from opportunity_assets import night as nights
from opportunity_assets.definitions import build_definitions
criteria, store, settings, home, as_of = sys.argv[1:]
defs = build_definitions(criteria_path=criteria, store_path=store, settings_path=settings)
nights.run_night(defs, nights.local_instance(home), date.fromisoformat(as_of))
"""


def _night_process(tmp_path: Path, pack: str, settings: str, night: date) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", NIGHT_SCRIPT, pack, str(tmp_path / "results.duckdb"), settings,
                             str(tmp_path / "dagster_home"), night.isoformat()], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _clean_brief(tmp_path: Path, pack: str, night: date) -> str:
    """The brief of an uninterrupted run of the night (its own store, no channel but its own outbox)."""
    clean = tmp_path / "clean"
    clean.mkdir()
    defs = build_definitions(criteria_path=pack, store_path=str(clean / "results.duckdb"),
                             settings_path=_settings_file(clean, {}))
    nights.run_night(defs, dg.DagsterInstance.ephemeral(), night)
    run = nights.state(defs, night)
    assert run.brief is not None
    return run.brief.markdown


@pytest.mark.slow
def test_a_night_killed_in_the_middle_then_run_again_gives_the_same_brief_and_one_message(
        tmp_path: Path, http: HttpReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    pack, settings = _files(tmp_path, http)
    instance = _instance(tmp_path, monkeypatch)
    process = _night_process(tmp_path, pack, settings, OCT)
    deadline = time.monotonic() + 120
    while not instance.get_runs(dg.RunsFilter(job_name="analyze_night", statuses=[dg.DagsterRunStatus.STARTED])):
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "the per-candidate run never started"
        time.sleep(0.02)
    process.kill()  # SIGKILL while the night's per-candidate run is in flight
    assert process.wait(timeout=30) == -9
    store = ResultStore(path=str(tmp_path / "results.duckdb"))
    assert store.brief("texas_housing", OCT) is None and http.received == []
    killed = instance.get_runs(dg.RunsFilter(job_name="analyze_night"))[0]
    assert killed.status == dg.DagsterRunStatus.STARTED  # nobody will ever finish it

    rerun = _night_process(tmp_path, pack, settings, OCT)
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err.decode()
    # the next start marked the killed run failed, with the reason, and said so in one line
    assert instance.get_run_by_id(killed.run_id).status == dg.DagsterRunStatus.FAILURE  # type: ignore[union-attr]
    failure = instance.all_logs(killed.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
    assert "it was killed or crashed mid-way" in failure[0].message
    assert f"marked run {killed.run_id[:8]} (analyze_night, 2011-10-31) failed" in err.decode()
    assert not instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
    stored = store.brief("texas_housing", OCT)
    assert stored is not None and stored["markdown"] == _clean_brief(tmp_path, pack, OCT)
    assert [_acts(b) for b in http.bodies("/hook")] == [[("austin", False), ("collin-county", False)]]
    assert len((tmp_path / "outbox.jsonl").read_text().splitlines()) == 1


@pytest.mark.slow
def test_a_night_killed_while_a_message_is_on_the_wire_is_not_sent_again(
        tmp_path: Path, http: HttpReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    pack, settings = _files(tmp_path, http)
    _instance(tmp_path, monkeypatch)
    http.script.append(HOLD)
    process = _night_process(tmp_path, pack, settings, OCT)
    assert http.arrived.wait(timeout=120), "the webhook was never called"
    process.kill()
    assert process.wait(timeout=30) == -9
    http.release.set()

    rerun = _night_process(tmp_path, pack, settings, OCT)
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err.decode()
    assert len(http.bodies("/hook")) == 1
    assert len((tmp_path / "outbox.jsonl").read_text().splitlines()) == 1  # the outbox went first, once
    rows = ResultStore(path=str(tmp_path / "results.duckdb")).notification_rows("texas_housing", OCT)
    # the killed run's claim stands until it expires (claim_expiry_seconds); only then may it be sent again
    assert {(r["channel"], r["status"]) for r in rows} == {("outbox", "sent"), ("webhook", CLAIMED)}


def test_each_model_key_is_held_to_the_resources_own_bounds() -> None:
    """The `model` section's keys are refused where the resource would refuse them, by the resource's own field
    bounds (written once: a bound changed there cannot drift from the settings'), and nothing else is."""
    from resources.model import AnthropicModel

    bounded = {name: field.metadata for name, field in AnthropicModel.model_fields.items()
               if field.metadata and name in ModelSettings.model_fields}
    assert set(bounded) == {"timeout_s", "max_retries", "max_retry_after_s", "batch_window_s", "batch_poll_s",
                            "batch_timeout_s"}
    for name in bounded:
        with pytest.raises(ValidationError, match=name):
            ModelSettings.model_validate({name: -1})
    assert ModelSettings.model_validate({"max_retries": 5, "timeout_s": 0.5, "batch_window_s": 0}).max_retries == 5


def test_a_settings_file_missing_a_folder_bad_yaml_or_a_misspelt_key_is_one_line_naming_what_to_fix(
        tmp_path: Path) -> None:
    """Trial 68: `--settings` told a missing file as "[Errno 2] No such file or directory", a folder as "[Errno 21]
    Is a directory", a YAML slip as PyYAML's seven lines, and `schedul:` as pydantic's "Extra inputs are not
    permitted"; each is one line naming the file and what to fix, a misspelt key with the key it meant."""
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("schedule: [1\n")
    misspelt = tmp_path / "misspelt.yaml"
    misspelt.write_text("schedul: {}\nnotifications: {atempts: 2}\n")
    for path, said in (
            (tmp_path / "nope.yaml", f"{tmp_path / 'nope.yaml'}: not found; expected the automation settings' YAML "
                                     "file (`--settings`, or $OPPORTUNITY_AUTOMATION)"),
            (tmp_path, f"{tmp_path}: a folder; expected the automation settings' YAML file (`--settings`, or "
                       "$OPPORTUNITY_AUTOMATION)"),
            (bad_yaml, f"{bad_yaml}: not valid YAML (line 2, column 1: expected ',' or ']', but got '<stream "
                       "end>')"),
            (misspelt, f"{misspelt}: notifications.atempts: unknown key (did you mean `attempts`?); schedul: "
                       "unknown key (did you mean `schedule`?)")):
        with pytest.raises(SettingsError) as raised:
            load_settings(path)
        assert str(raised.value) == said and "\n" not in str(raised.value)
        assert "Errno" not in said and "Extra inputs" not in said



def test_a_criteria_pack_given_as_the_settings_is_told_so(tmp_path: Path) -> None:
    """Trial 105: `--settings pack.yaml` (the pack, not the settings) was told "domain: unknown key; expected
    `schedule`, ..." once for each of the pack's keys, one line of 800 characters. Now that it is a pack, once."""
    pack = tmp_path / "pack.yaml"
    pack.write_text("domain: prices\ndescription: x\nsource: {path: p.xlsx}\nmetrics: {}\nformula: {}\n")
    with pytest.raises(SettingsError) as raised:
        load_settings(pack)
    said = str(raised.value)
    assert said.startswith(f"{pack}: got a criteria pack (its keys `domain`, `source`, ...): expected the automation "
                           "settings' YAML file"), said
    assert said.endswith("a pack goes to `--criteria`") and "unknown key" not in said and len(said) < 400, said

def test_the_models_calls_are_set_in_the_automation_settings(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 43: batches, timeouts and retries were the model resource's own settings, which no command, variable
    or file reached: `opportunity run` could never send a night's calls as a batch. The automation settings'
    `model` section sets them (a key left out keeps the resource's default), and a wrong value is named with its
    key before any night."""
    from resources.model import AnthropicModel

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # configured, never called here
    settings = {"model": {"batch": True, "timeout_s": 5, "knowledge_cutoff_date": "2024-01-31"}}
    defs = build_definitions(store_path=str(tmp_path / "r.duckdb"), settings_path=_settings_file(tmp_path, settings))
    model = (defs.resources or {})["model"]
    assert isinstance(model, AnthropicModel)
    assert (model.batch, model.timeout_s, model.max_retries) == (True, 5.0, 2)
    assert model.knowledge_cutoff() == date(2024, 1, 31)
    empty = load_settings(_settings_file(tmp_path, {"model": None, "sensors": None}))  # every key commented out
    assert (empty.model, empty.sensors) == (ModelSettings(), SensorSettings())
    with pytest.raises(SettingsError, match=r"automation.yaml: model.max_retries: Input should be less than or "
                                            r"equal to 5"):
        build_definitions(store_path=str(tmp_path / "r.duckdb"),
                          settings_path=_settings_file(tmp_path, {"model": {"max_retries": 9}}))
