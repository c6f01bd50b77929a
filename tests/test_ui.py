"""The product as its users run it: `dagster dev` (webserver + daemon) on 127.0.0.1 with the local instance
config, a backfill of `candidates` from the shell that the sensors carry through every night to its brief and
notification, and the UI in a real headless Chromium: the asset graph and a brief's Markdown metadata; then a
user's path: a night launched from `scan_night`'s page, carried by the chain, and from its brief to why a candidate
was archived in two clicks.

Screenshots are saved under var/artifacts/ (ui_asset_graph.png, ui_brief_markdown.png) and, for the user's path,
under the test's temporary folder (their paths are printed: `pytest -s` or `-rP` shows them)."""

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
from playwright.sync_api import BrowserContext, Page, Playwright, sync_playwright

from opportunity_assets.night import local_instance
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "var" / "artifacts"
FIRST, LAST = "2011-10-30", "2011-10-31"
"""The backfilled range: two nights, both with Austin and Collin County to act on."""
FROM_THE_UI = "2011-11-30"
"""The night launched from the UI: Dallas joins the act-on candidates; San Antonio is archived (below threshold)."""
ARCHIVED_TAGS = ("below_threshold", "data_gap", "failed_verification")


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


def _wait_for_night(dev: DagsterDev, night: str, timeout: float) -> list[dg.DagsterRun]:
    """Until the night's notification run has finished and nothing is queued or running."""
    deadline = time.monotonic() + timeout
    with dev.instance() as instance:
        while True:
            runs = list(instance.get_runs())
            if any(r.job_name == "notify_night" and r.tags.get("dagster/partition") == night and r.is_finished
                   for r in runs) and all(r.is_finished for r in runs):
                return runs
            assert time.monotonic() < deadline, (
                f"{night} not notified in {timeout} s: {sorted((r.job_name, r.status.value) for r in runs)}\n"
                + (dev.folder / "dagster_dev.log").read_text()[-3000:])
            time.sleep(1)


def _browser(playwright: Playwright, profile: str) -> BrowserContext:
    return playwright.chromium.launch_persistent_context(
        profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, viewport={"width": 1400, "height": 1000})


def _screenshot(page: Page, name: str, folder: Path = ARTIFACTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
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
        browser = _browser(playwright, profile)
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


def test_a_night_launched_from_the_ui_runs_as_scan_night_and_its_brief_leads_to_why_in_two_clicks(
        dagster_dev: DagsterDev) -> None:
    """The README's one UI path: Jobs → scan_night → Materialize… → a date → Launch; the chain does the rest. Then
    a user's path from the brief's partition page (the notification's link) to why a candidate was archived:
    click 1 opens the brief's `candidate_pages`, click 2 follows an archived candidate's link to its
    `verifications` partition, where the reason is shown as the archive's table gives it."""
    dev = dagster_dev
    shots = dev.folder / "screenshots"
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        browser = _browser(playwright, profile)
        page = browser.new_page()
        page.goto(f"{dev.url}/jobs", wait_until="networkidle")
        page.get_by_role("link", name="scan_night").first.click()
        page.get_by_role("button", name="Materialize…").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_text("Show all partitions").click()  # the dialog opens on the last 90 days
        dates = dialog.locator("input:not([type=checkbox])").first  # the partition selection, as text
        dates.fill(FROM_THE_UI)
        dates.press("Enter")
        launch = dialog.get_by_role("button", name="Launch 1 run")
        _screenshot(page, "1_launch_from_scan_night.png", shots)
        launch.click()
        dialog.wait_for(state="hidden")

        runs = _wait_for_night(dev, FROM_THE_UI, timeout=240)
        tonight = [r for r in runs if FROM_THE_UI in (r.tags.get("dagster/partition") or "")
                   or (r.tags.get("dagster/asset_partition_range_start") or "").startswith(FROM_THE_UI)]
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in tonight), [(r.job_name, r.status) for r in tonight]
        assert Counter(r.job_name for r in tonight) == {"scan_night": 1, "analyze_night": 1, "brief_night": 1,
                                                        "notify_night": 1}  # not __ASSET_JOB
        [scan] = [r for r in tonight if r.job_name == "scan_night"]
        assert "dagster/sensor_name" not in scan.tags and "dagster/schedule_name" not in scan.tags  # the UI's

        with dev.instance() as instance:
            [record] = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("archive"), asset_partitions=[FROM_THE_UI]),
                limit=1).records
        table = record.asset_materialization.metadata["candidates"].value  # the archive's table: who, and why
        archived = next(row.data for row in table.records if row.data["tag"] in ARCHIVED_TAGS)
        name, reason = str(archived["candidate"]), str(archived["reason"])

        clicks = 0
        page.goto(f"{dev.url}/assets/brief?view=partitions&partition={FROM_THE_UI}", wait_until="networkidle")
        _screenshot(page, "2_brief.png", shots)
        row = page.locator("tr", has=page.get_by_text("candidate_pages", exact=True))
        row.get_by_text("[Show Markdown]").click()
        clicks += 1
        links = page.get_by_role("dialog")
        links.get_by_role("link", name=name, exact=True).wait_for(timeout=30_000)
        _screenshot(page, "3_brief_candidate_pages.png", shots)
        links.get_by_role("link", name=name, exact=True).click()
        clicks += 1
        page.get_by_text(f"{FROM_THE_UI}|{archived['id']}", exact=True).first.wait_for(timeout=30_000)
        why = page.get_by_text(reason, exact=True)
        why.wait_for(timeout=30_000)
        assert why.is_visible() and page.get_by_text(f"archive: {archived['tag']}", exact=True).is_visible()
        assert clicks <= 3 and "/assets/verifications" in page.url
        path = _screenshot(page, "4_why_archived.png", shots)

        page.goto(f"{dev.url}/assets/brief?view=checks&checkDetail=numbers_in_store", wait_until="networkidle")
        page.get_by_text(FROM_THE_UI, exact=True).first.wait_for(timeout=30_000)  # each result on its night
        _screenshot(page, "5_check_on_its_night.png", shots)
        browser.close()
    print(f"screenshots: {', '.join(str(p) for p in sorted(shots.glob('*.png')))} ({path.name}: {name}, {reason})")
