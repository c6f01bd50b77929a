"""Runs whose process is gone are marked failed, with the reason: at the next start of `opportunity` (runs it
executed in-process) and through the daemon's run monitoring (runs it launched). The kill -9 of a real night is in
tests/test_automation.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.events import EngineEventData
from dagster._core.launcher import WorkerStatus

from opportunity_assets import night as nights
from opportunity_assets.run_health import (
    HOST_TAG,
    PID_TAG,
    LocalRunLauncher,
    fail_orphaned_runs,
    process_alive,
    process_tags,
)
from tests.conftest import ROOT
from tests.runs import stand_in_job, started_run


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_process_is_alive_only_while_it_runs_and_only_if_it_predates_the_run() -> None:
    assert process_alive(os.getpid())
    assert not process_alive(_dead_pid())
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    time.sleep(0.5)  # exited, not reaped: a zombie is no worker
    assert not process_alive(zombie.pid)
    zombie.wait()
    # a live process that started after the run did merely reuses a dead run's pid
    assert process_alive(os.getpid(), started_by=datetime.now(UTC))
    assert not process_alive(os.getpid(), started_by=datetime.now(UTC) - timedelta(days=365 * 30))


def test_a_run_whose_process_is_gone_is_marked_failed_with_the_reason_and_a_live_one_is_not(
        tmp_path: Path) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        here = process_tags()
        killed = started_run(instance, {**here, PID_TAG: str(_dead_pid()),
                                         "dagster/partition": "2011-10-31"})
        alive = started_run(instance, here)
        elsewhere = started_run(instance, {HOST_TAG: "another-host", PID_TAG: str(_dead_pid())})
        untagged = started_run(instance, {})  # e.g. a test's in-process run: nothing to judge it by

        lines = fail_orphaned_runs(instance)
        assert lines == [f"marked run {killed.run_id[:8]} (stand_in_job, 2011-10-31) failed: its process (pid "
                         f"{killed.tags[PID_TAG]} on {here[HOST_TAG]}) was killed or crashed mid-way"]
        status = {r.run_id: r.status for r in instance.get_runs()}
        assert status[killed.run_id] == dg.DagsterRunStatus.FAILURE
        assert {status[r.run_id] for r in (alive, elsewhere, untagged)} == {dg.DagsterRunStatus.STARTED}
        failure = instance.all_logs(killed.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
        assert len(failure) == 1 and "is gone: it was killed or crashed mid-way" in failure[0].message
        assert fail_orphaned_runs(instance) == []  # once


def test_a_run_that_finished_after_it_was_listed_in_flight_is_not_marked_failed() -> None:
    """CI under load: a test's instance listed a daemon-launched scan in flight, its worker then finished the run
    and exited, and the run was marked failed ("killed or crashed mid-way") though it had succeeded; the chain
    after it never came. A run whose process is gone is judged by its status as the instance holds it now."""
    with dg.DagsterInstance.ephemeral() as instance:
        here = process_tags()
        finished = started_run(instance, {**here, PID_TAG: str(_dead_pid())})
        listed = instance.get_run_by_id(finished.run_id)  # in flight when it was listed
        assert listed is not None and listed.status == dg.DagsterRunStatus.STARTED
        instance.handle_run_event(finished.run_id, dg.DagsterEvent(
            event_type_value=dg.DagsterEventType.RUN_SUCCESS.value, job_name=finished.job_name,
            message="finished"))
        assert fail_orphaned_runs(instance, [listed]) == []
        assert instance.get_run_by_id(finished.run_id).status == dg.DagsterRunStatus.SUCCESS  # type: ignore[union-attr]


def test_the_launcher_answers_run_monitoring_from_the_pid_its_worker_logged() -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        launcher = LocalRunLauncher()
        launcher.register_instance(instance)
        assert launcher.supports_check_run_worker_health
        run = started_run(instance, {})
        assert launcher.check_run_worker_health(run).status == WorkerStatus.UNKNOWN  # no pid logged yet
        for pid, expected in ((os.getpid(), WorkerStatus.RUNNING), (_dead_pid(), WorkerStatus.FAILED)):
            instance.report_engine_event(f"Started process for run (pid: {pid}).", run,
                                         EngineEventData.in_process(pid))
            assert launcher.check_run_worker_health(run).status == expected


def test_a_worker_launched_from_the_queue_is_alive_before_its_run_has_started() -> None:
    """CI under load (the UI test's backfill): a scan run created by the backfill, launched from the queue seconds
    later, its worker had logged its pid but not yet started the run; judged against the run's creation, the
    worker's later start read as a dead run's pid reused, and a healthy run was marked failed ("killed or crashed
    mid-way"). The worker is judged against when it logged its pid."""
    with dg.DagsterInstance.ephemeral() as instance:
        run = instance.create_run_for_job(stand_in_job, tags={})
        instance.handle_new_event(dg.EventLogEntry(
            error_info=None, level="DEBUG", user_message="", run_id=run.run_id, timestamp=time.time(),
            dagster_event=dg.DagsterEvent(dg.DagsterEventType.RUN_STARTING.value, job_name=run.job_name)))
        time.sleep(1.5)  # queued: its worker starts later than the run's creation, and its clock tick's rounding
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            time.sleep(0.2)
            starting = instance.get_run_by_id(run.run_id)
            assert starting is not None and starting.status == dg.DagsterRunStatus.STARTING
            instance.report_engine_event(f"Started process for run (pid: {worker.pid}).", starting,
                                         EngineEventData.in_process(worker.pid))
            assert fail_orphaned_runs(instance) == []
            launcher = LocalRunLauncher()
            launcher.register_instance(instance)
            assert launcher.check_run_worker_health(starting).status == WorkerStatus.RUNNING
        finally:
            worker.kill()
            worker.wait()
        # its worker gone, the same run is judged dead
        assert len(fail_orphaned_runs(instance)) == 1


def test_the_local_instance_config_names_the_launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((ROOT / "deploy" / "dagster.local.yaml").read_text())
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    instance = nights.local_instance(home)
    assert type(instance.run_launcher) is LocalRunLauncher and instance.run_monitoring_enabled
