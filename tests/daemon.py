"""The Dagster daemon's sensor loop, in this process, for tests that must not wait for a real daemon.

Each tick evaluates every sensor of the definitions with its stored cursor, launches each requested run
unless that sensor already launched a run with the same run key (the daemon's rule: it looks for a run
tagged `dagster/run_key` + `dagster/sensor_name`), executes it in process, then stores the new cursor.
Cursors live in a JSON file so that another process can carry on where a killed one stopped. The real
daemon is exercised by tests/test_ui.py (`dagster dev`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


class InProcessDaemon:
    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance, cursor_file: Path) -> None:
        self.defs, self.instance, self.cursor_file = defs, instance, cursor_file
        self.launched: list[dg.DagsterRun] = []

    def cursors(self) -> dict[str, str | None]:
        return json.loads(self.cursor_file.read_text()) if self.cursor_file.exists() else {}

    def reset_cursors(self) -> None:
        self.cursor_file.unlink(missing_ok=True)

    def _already_launched(self, sensor: str, run_key: str) -> bool:
        runs = self.instance.get_runs(dg.RunsFilter(tags={"dagster/run_key": run_key}))
        return any(r.tags.get("dagster/sensor_name") == sensor for r in runs)

    def execute(self, job_name: str, partition_key: str | None, tags: dict[str, str]) -> dg.DagsterRun:
        """One requested run, executed in process."""
        job = self.defs.resolve_job_def(job_name)
        return job.execute_in_process(instance=self.instance, partition_key=partition_key, run_config=QUIET,
                                      tags=tags, raise_on_error=False).dagster_run

    def execute_all(self, runs: Sequence[tuple[str, str | None, dict[str, str]]]) -> list[dg.DagsterRun]:
        """A sensor's requested runs (job, partition, tags), one after another."""
        return [self.execute(*run) for run in runs]

    def tick(self) -> list[dg.RunRequest]:
        """One evaluation of every sensor; returns the requests it launched (not the ones skipped by run key)."""
        cursors = self.cursors()
        launched: list[dg.RunRequest] = []
        for sensor in self.defs.sensors or []:
            assert isinstance(sensor, dg.SensorDefinition)
            context = dg.build_sensor_context(instance=self.instance, cursor=cursors.get(sensor.name),
                                              definitions=self.defs, resources=self.defs.resources,
                                              sensor_name=sensor.name)
            data = sensor.evaluate_tick(context)
            requests = []
            for request in data.run_requests or []:
                assert request.run_key and request.job_name
                if not self._already_launched(sensor.name, request.run_key):
                    requests.append(request)
            self.launched += self.execute_all([
                (r.job_name, r.partition_key,
                 {**r.tags, "dagster/run_key": r.run_key or "", "dagster/sensor_name": sensor.name})
                for r in requests if r.job_name])
            launched += requests
            cursors[sensor.name] = data.cursor
            self.cursor_file.write_text(json.dumps(cursors))
        return launched

    def run_until_quiet(self, max_ticks: int = 12) -> int:
        """Tick until a tick launches nothing; returns how many runs were launched."""
        total = 0
        for _ in range(max_ticks):
            launched = self.tick()
            if not launched:
                return total
            total += len(launched)
        raise AssertionError(f"the sensors still launched runs after {max_ticks} ticks")
