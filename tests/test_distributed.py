"""Nights executed on other hosts: a backfill of 12 month-ends through the sensor chain, every step a Celery task
on one of two workers, each worker in a network namespace of its own (tests/hosts.py), sharing a PostgreSQL server
(the instance, deploy/dagster.yaml; the result store, OPPORTUNITY_STORE_URL) and a Redis broker, both reached over
the veth. One worker is killed (SIGKILL, all its processes) while its step waits in the store; the step goes back
to the queue and the other worker runs it. Compared with the same nights run on one machine (in process, DuckDB)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from collections import Counter
from contextlib import ExitStack
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg
import pytest
import yaml

from opportunity_assets import night as nights
from opportunity_assets.definitions import build_definitions
from opportunity_assets.distributed import BROKER_VARIABLE
from opportunity_assets.metadata import SUMMARY
from opportunity_assets.night import nights_between, resources_of
from opportunity_assets.notify.logic import ACT_SECTION
from resources.store import STORE_URL_VARIABLE
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack
from tests.hosts import STORE_DB, CeleryDaemon, celery_cluster, wait_until, write_definitions
from tests.receivers import HttpReceiver, SmtpReceiver

NIGHTS = nights_between(date(2011, 1, 1), date(2011, 12, 31), "month-end")
WORKERS = ("w1", "w2")
VISIBILITY_SECONDS = 20
"""The workers' visibility timeout: how long a dead worker's step waits before it goes back to the queue."""


def _single_machine(tmp_path: Path, pack: Path) -> tuple[dict[date, str], list[dict[str, Any]]]:
    """The same nights, one after another, in process on a local SQLite instance and a DuckDB store: the briefs
    and the outbox's messages."""
    folder = tmp_path / "single"
    folder.mkdir()
    settings = folder / "automation.yaml"
    settings.write_text("{}")
    defs = build_definitions(criteria_path=str(pack), store_path=str(folder / "results.duckdb"),
                             settings_path=str(settings))
    with nights.local_instance(folder / "dagster_home") as instance:
        for as_of in NIGHTS:
            nights.run_night(defs, instance, as_of)
    pack_loaded, store = resources_of(defs)
    briefs = {as_of: store.brief(pack_loaded.domain, as_of)["markdown"] for as_of in NIGHTS}
    return briefs, _outbox(folder / "outbox.jsonl")


def _outbox(path: Path) -> list[dict[str, Any]]:
    return sorted((json.loads(line) for line in path.read_text().splitlines()), key=lambda m: m["as_of"])


def _settings(path: Path, host: str, webhook: HttpReceiver, smtp: SmtpReceiver) -> Path:
    path.write_text(yaml.safe_dump({"notifications": {
        "attempts": 2, "backoff_seconds": 0.1, "channels": {
            "webhook": {"url": webhook.url("/hook")},
            "email": {"host": host, "port": smtp.port, "starttls": False, "sender": "scanner@example.com",
                      "recipients": ["analyst@example.com"]}}}}))
    return path


def _step_executions(instance: dg.DagsterInstance) -> Counter[tuple[str, str, str]]:
    """(run, step, worker) of every step a worker started, from the engine events dagster-celery's task writes."""
    executions: Counter[tuple[str, str, str]] = Counter()
    for run in instance.get_runs():
        for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
            event = entry.dagster_event
            if event is None or "in celery worker" not in (event.message or ""):
                continue
            worker = event.engine_event_data.metadata["Celery worker"].value
            executions[(run.run_id, str(entry.step_key), str(worker).partition("@")[0])] += 1
    return executions


def _failures(instance: dg.DagsterInstance) -> list[str]:
    """What each run that did not succeed logged of its failure, a line each: the message the status assertion
    shows, so a run that failed once in a loaded CI leaves the why behind (its PostgreSQL goes with the test)."""
    said = []
    for run in instance.get_runs():
        if run.status == dg.DagsterRunStatus.SUCCESS:
            continue
        said.append(f"{run.job_name} {run.tags.get('dagster/partition', '')} {run.status.value}")
        for entry in instance.all_logs(run.run_id):
            event = entry.dagster_event
            error = getattr(event.event_specific_data, "error", None) if event is not None else None
            if event is not None and (event.is_failure or error is not None):
                said.append(f"  {entry.step_key or 'run'}: {event.event_type_value}: {event.message}"
                            + (f"\n{error.to_string()}" if error is not None else ""))
            checked = event.event_specific_data if event is not None and event.event_type_value == \
                dg.DagsterEventType.ASSET_CHECK_EVALUATION.value else None
            if checked is not None and not checked.passed:  # what a failed check found: the analyses it refused
                summary = (checked.metadata or {}).get(SUMMARY)
                said.append(f"  {entry.step_key}: {checked.check_name} failed: {summary.value if summary else ''}")
    return said


def _waiting_on_lock(address: str, url: str) -> bool:
    """Whether a connection from `address` (a worker's host) waits for a lock in the store's database."""
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = "
                                 "'Lock' AND host(client_addr) = %s", [STORE_DB, address]).fetchone()
    return bool(row and row[0])


@pytest.mark.distributed
@pytest.mark.slow
@pytest.mark.timeout(900)  # 150 s alone; beside the suite's other worker on 2 busy cores it passed 300 s once
def test_a_backfill_on_celery_workers_on_other_hosts_matches_one_machine_and_survives_a_killed_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    single_briefs, single_messages = _single_machine(tmp_path, pack)
    assert any(m["act_on_these"] for m in single_messages)  # the nights have something to send

    code = tmp_path / "code"
    code.mkdir()
    with celery_cluster(WORKERS, code, visibility_seconds=VISIBILITY_SECONDS) as (network, workers):
        for name in WORKERS:
            workers.start(name)
        # as far as the network goes, a worker is another host: the suite's own PostgreSQL on 127.0.0.1 is not there
        probe = subprocess.run(["ip", "netns", "exec", network.namespaces["w1"], sys.executable, "-c",
                                "import socket; socket.create_connection(('127.0.0.1', 5432), timeout=2)"],
                               capture_output=True)
        assert probe.returncode != 0
        for variable, value in workers.environment.items():
            monkeypatch.setenv(variable, value)
        home = tmp_path / "dagster_home"
        home.mkdir()
        shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        webhook, smtp = HttpReceiver(host=network.host), SmtpReceiver(host=network.host)
        with ExitStack() as cleanup:
            cleanup.callback(webhook.close)
            cleanup.callback(smtp.close)
            settings = _settings(code / "automation.yaml", network.host, webhook, smtp)
            write_definitions(code, pack=pack, store_path=code / "results.duckdb", settings=settings)
            monkeypatch.syspath_prepend(str(code))
            defs = build_definitions(criteria_path=str(pack), store_path=str(code / "results.duckdb"),
                                     settings_path=str(settings))
            assert defs.resolve_job_def("analyze_night").executor_def.name == "celery"
            workers.wait_ready()
            store_url = workers.environment[STORE_URL_VARIABLE]
            with dg.DagsterInstance.get() as instance:
                daemon = CeleryDaemon(defs, instance, tmp_path / "cursors.json", code)
                cleanup.callback(daemon.close)
                # the backfill: one scan_night run per night, as `dagster job backfill` creates them
                scans = daemon.execute_all([("scan_night", as_of.isoformat(), {}) for as_of in NIGHTS])
                assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in scans)
                # the store's analyses held: every worker's analyze step waits there, w1's is then killed
                with psycopg.connect(store_url) as holder:
                    holder.execute("LOCK TABLE analyses IN EXCLUSIVE MODE")
                    chain = threading.Thread(target=daemon.run_until_quiet, kwargs={"max_ticks": 8})
                    chain.start()
                    wait_until(lambda: _waiting_on_lock(network.addresses["w1"], store_url),
                               "w1's analyze step to wait on the store", seconds=120)
                    workers.kill("w1")
                chain.join(timeout=400)
                assert not chain.is_alive()

                runs = instance.get_runs()
                assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}, "\n".join(_failures(instance))
                acting = {m["as_of"] for m in single_messages if m["act_on_these"]}  # quiet nights notify nothing
                assert Counter(run.job_name for run in runs) == {
                    "scan_night": 12, "analyze_night": 12, "brief_night": 12, "notify_night": len(acting)}
                executions = _step_executions(instance)
                by_step = Counter((run_id, step) for run_id, step, _ in executions.elements())
                retried = [key for key, count in by_step.items() if count > 1]
                assert len(retried) == 1 and retried[0][1] == "analyze_and_verify"  # the killed step, once more
                assert executions[(*retried[0], "w1")] == 1 and executions[(*retried[0], "w2")] == 1
                assert all(count == 1 for key, count in by_step.items() if key not in retried)
                assert {worker for _, _, worker in executions} == set(WORKERS)  # both hosts did work
                for asset in ("analyses", "verifications", "brief", "notifications"):
                    materialized = Counter(r.partition_key for r in instance.fetch_materializations(
                        dg.AssetKey(asset), limit=1000).records)
                    assert set(materialized.values()) == {1}, asset  # nothing lost, nothing twice

            domain = yaml.safe_load(pack.read_text())["domain"]
            with psycopg.connect(store_url) as connection:
                briefs = dict(connection.execute(
                    "SELECT as_of, markdown FROM briefs WHERE domain = %s", [domain]).fetchall())
                sent = connection.execute(
                    "SELECT as_of, candidate_id, channel, status FROM notifications WHERE domain = %s",
                    [domain]).fetchall()
                act = connection.execute("SELECT as_of, candidate_id FROM routes WHERE domain = %s AND "
                                         "section_or_tag = %s", [domain, ACT_SECTION]).fetchall()
            assert briefs == single_briefs  # byte for byte
            assert _outbox(code / "outbox.jsonl") == single_messages
            expected = Counter((as_of, candidate, channel) for as_of, candidate in act
                               for channel in ("outbox", "webhook", "email"))
            assert Counter((as_of, candidate, channel) for as_of, candidate, channel, status in sent
                           if status == "sent") == expected
            posted = Counter((m["as_of"], item["candidate_id"]) for m in webhook.bodies("/hook")
                             for item in m["act_on_these"])
            mailed = Counter(message["Subject"] for _, message in smtp.messages)
            nights_with_act = {as_of for as_of, _ in act}
            assert posted == Counter((as_of.isoformat(), candidate) for as_of, candidate in act)
            assert len(smtp.messages) == len(nights_with_act) and set(mailed.values()) == {1}
            bodies, reports = [], []
            for _, message in smtp.messages:  # the text, then the line naming the attached morning report
                text = message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n").strip()
                text, _, attached = text.rpartition("\nThe morning report is attached: ")
                bodies.append(text.strip())
                reports.append((attached, [part.get_filename() for part in message.iter_attachments()]))
            assert sorted(bodies) == sorted(m["text"].strip() for m in single_messages if m["act_on_these"])
            assert all(name.endswith(".pdf") and files == [name] for name, files in reports)


@pytest.mark.parametrize(("broker", "executor"), [(None, "in_process"), ("  ", "in_process"),
                                                  ("redis://10.0.0.1:6379/0", "celery")])
def test_the_executor_is_chosen_by_the_broker_variable_when_the_definitions_are_built(
        broker: str | None, executor: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if broker is None:
        monkeypatch.delenv(BROKER_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(BROKER_VARIABLE, broker)
    settings = tmp_path / "automation.yaml"
    settings.write_text("{}")
    defs = build_definitions(store_path=str(tmp_path / "results.duckdb"), settings_path=str(settings))
    for job in ("scan_night", "analyze_night", "finish_night", "notify_night"):
        assert defs.resolve_job_def(job).executor_def.name == executor
