"""Runs whose process is gone: a run killed mid-way (kill -9, OOM, a closed laptop) stays STARTED in the
instance forever unless something notices that nobody is running it.

Two ways notice it, both by asking the operating system whether the run's process still exists:
- `fail_orphaned_runs`, at every start of `opportunity` (it opens the instance through `night.local_instance`),
  for the runs `opportunity` executed in-process (tagged with their host and pid by `process_tags`) and the runs
  the daemon launched (whose worker logs its pid);
- `LocalRunLauncher`, Dagster's default launcher that also answers the daemon's run monitoring
  (`run_monitoring: enabled` in `deploy/dagster.local.yaml`): the run worker's health, so the daemon marks a dead
  worker's run failed (and `run_retries` launches it again).

A run on another host is never judged from here: only its own host can see its process.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
from dagster._core.launcher import CheckRunHealthResult, DefaultRunLauncher, WorkerStatus

HOST_TAG = "opportunity/host"
PID_TAG = "opportunity/pid"
_IN_FLIGHT = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


def process_tags() -> dict[str, str]:
    """Tags for a run this process executes in-process: where to look for it later."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}


@dataclass(frozen=True)
class RunProcess:
    """The process that executes a run."""

    host: str | None
    """None: the host is not recorded (a launched run's worker is on the daemon's host)."""
    pid: int
    logged_at: datetime | None = None
    """When a launched run's worker logged its pid, moments after it started: a process with that pid started
    later merely reuses it. None for an in-process run, whose process predates the run."""


def run_process(instance: dg.DagsterInstance, run: dg.DagsterRun) -> RunProcess | None:
    """The run's process: from its tags (in-process runs of `opportunity`) or from the pid its run worker logged
    when it started, the latest worker's (runs the daemon or the UI launched); None when neither is known (not
    started yet)."""
    if PID_TAG in run.tags:
        return RunProcess(host=run.tags.get(HOST_TAG), pid=int(run.tags[PID_TAG]))
    for entry in reversed(instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)):
        event = entry.dagster_event
        if event is None or not (event.message or "").startswith("Started process for run"):
            continue
        pid = event.engine_event_data.metadata.get("pid")
        if pid is not None:
            return RunProcess(host=None, pid=int(pid.value),  # type: ignore[arg-type]
                              logged_at=datetime.fromtimestamp(entry.timestamp, tz=UTC))
    return None


def process_alive(pid: int, started_by: datetime | None = None) -> bool:
    """Whether `pid` is a live (not zombie) process that was already running at `started_by` (a process that
    started later merely reuses a dead run's pid)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():  # Linux: state and start time
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            return False
        if fields[0] in ("Z", "X"):  # a zombie: killed, not yet reaped by its parent
            return False
        if started_by is not None:
            boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                        if line.startswith("btime"))
            process_start = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
            return process_start <= started_by.timestamp() + 1.0  # the clock tick's and btime's rounding
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, another user's
        return True
    return True


def chained_by_its_process(run: dg.DagsterRun, host: str | None = None) -> bool:
    """Whether the run was executed in-process by an `opportunity` command (`process_tags`) still alive on this
    host: that command runs the rest of its night itself (`night.run_night`), so the daemon's sensors leave the
    run's records to it while it lives, and chain them if it dies before the night's brief."""
    if PID_TAG not in run.tags or run.tags.get(HOST_TAG) != (host or socket.gethostname()):
        return False
    pid = run.tags.get(PID_TAG, "")
    return pid.isdigit() and process_alive(int(pid))


def _started_by(instance: dg.DagsterInstance, run_id: str, process: RunProcess) -> datetime | None:
    """The latest moment the run's own process can have started: when a launched worker logged its pid (a worker
    still STARTING has no start time yet, and one launched from the queue starts long after the run was created:
    judged by the creation, a healthy worker under load looked like a reused pid and its run was marked failed);
    else the run's start (or creation)."""
    if process.logged_at is not None:
        return process.logged_at
    record = instance.get_run_record_by_id(run_id)
    if record is None:
        return None
    stamp = record.start_time or record.create_timestamp.timestamp()
    return datetime.fromtimestamp(stamp, tz=UTC)


def is_orphaned(instance: dg.DagsterInstance, run: dg.DagsterRun, host: str | None = None) -> RunProcess | None:
    """The run's dead process, when the run is in flight on this host and nothing runs it any more."""
    if run.status not in _IN_FLIGHT:
        return None
    process = run_process(instance, run)
    if process is None or (process.host is not None and process.host != (host or socket.gethostname())):
        return None
    if process.pid == os.getpid() and process.host is not None:
        return None  # this very process: the run is in flight here
    if process_alive(process.pid, _started_by(instance, run.run_id, process)):
        return None
    # `run` may have been read while its process still ran: a process that finished its run wrote the run's end
    # before it exited, so its status now says whether anything was left in flight (a run that succeeded a moment
    # ago is not marked failed)
    current = instance.get_run_by_id(run.run_id)
    return process if current is not None and current.status in _IN_FLIGHT else None


def describe(run: dg.DagsterRun) -> str:
    """`run 1a2b3c4d (analyze_night, 2011-10-31)`: the run as a user finds it in the UI."""
    night = run.tags.get("dagster/partition") or run.tags.get("dagster/asset_partition_range_start", "")
    return f"run {run.run_id[:8]} ({run.job_name}{', ' + night.split('|')[0] if night else ''})"


def fail_orphaned_runs(instance: dg.DagsterInstance, runs: Iterable[dg.DagsterRun] | None = None) -> list[str]:
    """Mark failed, with the reason, every in-flight run of this host whose process is gone; one line for the
    user per run."""
    if runs is None:
        runs = instance.get_runs(dg.RunsFilter(statuses=_IN_FLIGHT))
    failed = []
    for run in runs:
        dead = is_orphaned(instance, run)
        if dead is None:
            continue
        where = f"pid {dead.pid}" + (f" on {dead.host}" if dead.host else "")
        instance.report_run_failed(run, f"The process running this run ({where}) is gone: it was killed or "
                                        "crashed mid-way. Marked failed when `opportunity` next started; "
                                        "materialize its partitions again to finish them.")
        failed.append(f"marked {describe(run)} failed: its process ({where}) was killed or crashed mid-way")
    return failed


class LocalRunLauncher(DefaultRunLauncher):
    """Dagster's default launcher (a run worker process beside the code server) that also answers run monitoring:
    a worker whose process is gone is FAILED, so the daemon marks its run failed instead of leaving it STARTED."""

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        instance = self._instance
        process = run_process(instance, run)
        if process is None:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, "the run worker has not logged its pid yet")
        if process_alive(process.pid, _started_by(instance, run.run_id, process)):
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(WorkerStatus.FAILED, f"run worker process {process.pid} is gone (killed or "
                                                         "crashed mid-way)")
