"""The product as its users run it: `dagster dev` (webserver + daemon) on 127.0.0.1 with the local instance
config, a backfill of `candidates` from the shell that the sensors carry through every night to its brief and
notification, and the UI in a real headless Chromium: the asset graph and a brief's Markdown metadata.

Screenshots are saved under var/artifacts/ (ui_asset_graph.png, ui_brief_markdown.png)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
import yaml
from playwright.sync_api import Page, sync_playwright

from opportunity_assets.night import local_instance
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "var" / "artifacts"
FIRST, LAST = "2011-10-30", "2011-10-31"
"""The backfilled range: two nights, both with Austin and Collin County to act on."""


@dataclass(frozen=True)
class DagsterDev:
    url: str
    folder: Path
    """Holds defs.py, the results store, the outbox and dagster_home."""
    env: dict[str, str]

    def instance(self) -> dg.DagsterInstance:
        return local_instance(self.env["DAGSTER_HOME"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/server_info", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def dagster_dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DagsterDev]:
    folder = tmp_path_factory.mktemp("ui")
    home = folder / "dagster_home"
    home.mkdir()
    local = yaml.safe_load((ROOT / "deploy" / "dagster.local.yaml").read_text())
    (home / "dagster.yaml").write_text(yaml.safe_dump({**local, "nux": {"enabled": False}}))
    url = f"http://127.0.0.1:{_free_port()}"
    pack = write_pack(folder, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    (folder / "automation.yaml").write_text(yaml.safe_dump({
        "schedule": {"enabled": False}, "sensors": {"minimum_interval_seconds": 1},
        "notifications": {"ui_base_url": url}}))
    (folder / "defs.py").write_text(
        "from opportunity_assets.definitions import build_definitions\n\n"
        f"defs = build_definitions(criteria_path={str(pack)!r}, store_path={str(folder / 'results.duckdb')!r}, "
        f"settings_path={str(folder / 'automation.yaml')!r})\n")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    log = (folder / "dagster_dev.log").open("wb")
    process = subprocess.Popen([str(Path(sys.executable).parent / "dagster"), "dev", "-f", "defs.py",
                                "-h", "127.0.0.1", "-p", url.rsplit(":", 1)[1]],
                               cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not _answers(url):
            assert process.poll() is None, (folder / "dagster_dev.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "dagster dev did not answer within 120 s"
            time.sleep(0.5)
        yield DagsterDev(url=url, folder=folder, env=env)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
        log.close()


def _wait_for_chain(dev: DagsterDev, nights: int, timeout: float) -> list[dg.DagsterRun]:
    """Until every night has its notification run finished and nothing is queued or running."""
    deadline = time.monotonic() + timeout
    with dev.instance() as instance:
        while True:
            runs = list(instance.get_runs())
            notified = [r for r in runs if r.job_name == "notify_night" and r.is_finished]
            if len(notified) >= nights and all(r.is_finished for r in runs):
                return runs
            assert time.monotonic() < deadline, (
                f"chain not done in {timeout} s: {sorted((r.job_name, r.status.value) for r in runs)}\n"
                + (dev.folder / "dagster_dev.log").read_text()[-3000:])
            time.sleep(1)


def _screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    return path


def test_a_shell_backfill_cascades_to_briefs_and_messages_and_the_ui_shows_them(dagster_dev: DagsterDev) -> None:
    dev = dagster_dev
    backfill = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "job", "backfill", "-f", "defs.py", "-j", "scan_night",
         "--from", FIRST, "--to", LAST, "--noprompt"],
        cwd=dev.folder, env=dev.env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert backfill.returncode == 0 and "Launched backfill job" in backfill.stdout, backfill.stdout + backfill.stderr

    runs = _wait_for_chain(dev, nights=2, timeout=240)
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs), [(r.job_name, r.status) for r in runs]
    assert Counter(r.job_name for r in runs) == {"scan_night": 2, "analyze_night": 2, "brief_night": 2,
                                                 "notify_night": 2}
    assert {r.tags.get("dagster/sensor_name") for r in runs if r.job_name != "scan_night"} == {
        "chain_after_scan", "chain_after_verifications", "chain_after_brief"}
    assert all(r.tags["llm"] == "anthropic" for r in runs if r.job_name in ("analyze_night", "brief_night"))
    with dev.instance() as instance:
        briefs = instance.fetch_materializations(dg.AssetKey("brief"), limit=10).records
    assert Counter(r.partition_key for r in briefs) == {FIRST: 1, LAST: 1}  # one brief per backfilled date
    messages = [json.loads(line) for line in (dev.folder / "outbox.jsonl").read_text().splitlines()]
    assert sorted(m["as_of"] for m in messages) == [FIRST, LAST]
    link = next(m["brief_url"] for m in messages if m["as_of"] == LAST)
    assert link == f"{dev.url}/assets/brief?view=partitions&partition={LAST}"

    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        browser = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1400, "height": 1000})
        page = browser.new_page()
        page.goto(f"{dev.url}/assets/notifications?view=lineage&lineageScope=upstream&lineageDepth=4",
                  wait_until="networkidle")
        for name in ("candidates", "analyses", "verifications", "brief", "notifications", "nightly_scan",
                     "per_candidate", "nightly_brief"):  # the chain's assets and their groups, as drawn
            page.get_by_text(name, exact=True).filter(visible=True).first.wait_for(timeout=30_000)
        _screenshot(page, "ui_asset_graph.png")

        page.goto(link, wait_until="networkidle")  # the link a notification carries
        page.get_by_text("[Show Markdown]").first.click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("heading", name=f"Morning brief — texas_housing, as of {LAST}").wait_for(timeout=30_000)
        text = dialog.inner_text()
        assert "Act on these" in text and "Needs your judgment" in text and "Run summary" in text
        assert "Austin" in text and "Collin County" in text
        _screenshot(page, "ui_brief_markdown.png")
        browser.close()
