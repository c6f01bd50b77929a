"""Notifications: exact payloads per channel, exactly-once bookkeeping, "still strong", retries with backoff,
failure injection on real receivers (HTTP and SMTP on 127.0.0.1), quiet nights."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import date, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import dagster as dg
import pytest
import yaml

from opportunity_assets import night as nights
from opportunity_assets.automation.settings import EnvRef, NotificationSettings
from opportunity_assets.definitions import build_definitions
from opportunity_assets.notify import channels
from opportunity_assets.notify.logic import (
    CLAIMED,
    FAILED,
    FAILED_RUN,
    RUNNING,
    SENT,
    ActItem,
    EarlierNight,
    JudgmentItem,
    NightMessage,
    PreviousNight,
    SentLogEntry,
    act_verdicts,
    brief_url,
    channel_message,
    claimable,
    email_content,
    pass_over_waiting,
    pending,
    plain_text,
    previous_night,
    slack_payload,
    webhook_payload,
)
from opportunity_assets.report.step import read_report
from opportunity_assets.text import plain
from resources.notifier import Notifier, notifier_from_settings
from resources.store import ResultStore
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack
from tests.receivers import BAD, FAIL, HOLD, MOVED, MOVED_KEEP, OK, STALL, HttpReceiver, SmtpReceiver
from tests.runs import started_run

AS_OF = date(2011, 11, 30)
AUSTIN = ActItem(candidate_id="austin", name="Austin", score=75.04, verdict="STRONG", status="CONFIRMED",
                 next_action="Price three rentals near the $187,000 median in Austin; check the gross yield.")
DALLAS = ActItem(candidate_id="dallas", name="Dallas & <Fort Worth>", score=71.5, verdict="STRONG",
                 status="CONFIRMED", next_action="Price three rentals in Dallas.", red_flags=("thin_market",))
HOUSTON = JudgmentItem(candidate_id="houston", name="Houston", verdict="MARGINAL", score=68.25,
                       to_resolve="confirm inventory_3m with the next release or a second source.",
                       why="inventory_3m -10% turns it SKIP (score → 41.0)")
URL = "http://scanner.internal:3000/assets/brief?view=partitions&partition=2011-11-30"
MESSAGE = NightMessage(domain="texas_housing", as_of=AS_OF, act=(replace(AUSTIN, still_strong=True), DALLAS),
                       judgment=(HOUSTON,), brief_url=URL)
HEADLINE = "texas_housing, as of 2011-11-30: 2 to act on (1 new, 1 still strong)"


# ---- formats --------------------------------------------------------------------------------------------------

def test_slack_message_is_block_kit_with_a_quiet_judgment_section_and_a_link() -> None:
    assert slack_payload(MESSAGE) == {"text": HEADLINE, "blocks": [
        {"type": "header", "text": {"type": "plain_text", "text": "Act on these — 2011-11-30"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": HEADLINE}]},
        {"type": "section", "text": {"type": "mrkdwn", "text":
            "*Austin* — score 75.0 (STRONG, CONFIRMED) · _still strong_\n"
            "Next: Price three rentals near the $187,000 median in Austin; check the gross yield."}},
        {"type": "section", "text": {"type": "mrkdwn", "text":
            "*Dallas &amp; &lt;Fort Worth&gt;* — score 71.5 (STRONG, CONFIRMED) · *new* Red flags: thin_market.\n"
            "Next: Price three rentals in Dallas."}},
        {"type": "divider"},
        {"type": "context", "elements": [{"type": "mrkdwn", "text":
            "Needs your judgment: Houston (MARGINAL 68.2): inventory_3m -10% turns it SKIP (score → 41.0). To "
            "resolve: confirm inventory_3m with the next release or a second source."}]},
        {"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "Open the brief"}, "url": URL}]},
    ]}


def test_webhook_payload_and_email_carry_the_same_facts() -> None:
    assert webhook_payload(MESSAGE) == {
        "type": "opportunity.night", "domain": "texas_housing", "as_of": "2011-11-30", "summary": HEADLINE,
        "act_on_these": [
            {"candidate_id": "austin", "name": "Austin", "score": 75.04, "verdict": "STRONG", "status": "CONFIRMED",
             "still_strong": True, "next_action": AUSTIN.next_action, "red_flags": []},
            {"candidate_id": "dallas", "name": "Dallas & <Fort Worth>", "score": 71.5, "verdict": "STRONG",
             "status": "CONFIRMED", "still_strong": False, "next_action": DALLAS.next_action,
             "red_flags": ["thin_market"]}],
        "needs_your_judgment": [{"candidate_id": "houston", "name": "Houston", "verdict": "MARGINAL",
                                 "score": 68.25, "why": HOUSTON.why, "to_resolve": HOUSTON.to_resolve}],
        "brief_url": URL}
    subject, body = email_content(MESSAGE)
    assert subject == f"[opportunity] {HEADLINE}"
    assert body == plain_text(MESSAGE) == (
        f"{HEADLINE}\n\nAct on these:\n"
        f"- Austin — score 75.0 (STRONG, CONFIRMED; still strong). Next: {AUSTIN.next_action}\n"
        f"- Dallas & <Fort Worth> — score 71.5 (STRONG, CONFIRMED; new). Red flags: thin_market. Next: "
        f"{DALLAS.next_action}\n\n"
        f"Needs your judgment:\n- Houston (MARGINAL 68.2): {HOUSTON.why}. To resolve: {HOUSTON.to_resolve}\n\n"
        f"The brief: {URL}\n")


def test_the_brief_link_is_the_partition_page_only_with_a_base_url() -> None:
    assert brief_url("http://scanner.internal:3000/", AS_OF) == URL
    assert brief_url(None, AS_OF) is None


# ---- exactly once and still strong ------------------------------------------------------------------------------

NOW = datetime(2011, 12, 1, 3, 0)


def _entry(candidate: str, status: str, *, as_of: date = AS_OF, channel: str = "slack", verdict: str = "STRONG",
           age: timedelta = timedelta(0)) -> SentLogEntry:
    return SentLogEntry(as_of=as_of, candidate_id=candidate, channel=channel, verdict=verdict, status=status,
                        updated_at=NOW - age)


def test_only_unsent_failed_or_abandoned_claims_can_be_claimed() -> None:
    existing = {"sent": _entry("sent", SENT), "failed": _entry("failed", FAILED),
                "claimed_now": _entry("claimed_now", CLAIMED, age=timedelta(seconds=30)),
                "claimed_long_ago": _entry("claimed_long_ago", CLAIMED, age=timedelta(hours=1))}
    wanted = ["new", "sent", "failed", "claimed_now", "claimed_long_ago"]
    assert claimable(existing, wanted, NOW, timedelta(minutes=15)) == ["claimed_long_ago", "failed", "new"]


def test_pending_is_per_channel() -> None:
    log = [_entry("austin", SENT, channel="outbox"), _entry("austin", FAILED, channel="slack"),
           _entry("dallas", SENT, channel="slack"), _entry("dallas", SENT, channel="outbox", as_of=date(2011, 1, 1))]
    assert pending(["austin", "dallas"], ["outbox", "slack"], log, AS_OF, NOW, timedelta(minutes=15)) == {
        ("austin", "slack"), ("dallas", "outbox")}
    assert pending([], ["outbox", "slack"], log, AS_OF, NOW, timedelta(minutes=15)) == set()


def test_still_strong_is_decided_against_the_latest_earlier_routed_night() -> None:
    october, september, june = date(2011, 10, 31), date(2011, 9, 30), date(2011, 6, 30)
    window = timedelta(days=70)

    def night(as_of: date, routed: bool, seconds_ago: float = 3600.0, runs: str | None = None) -> EarlierNight:
        return EarlierNight(as_of=as_of, scanned_seconds_ago=seconds_ago, routed=routed, runs=runs)

    assert previous_night([night(september, True), night(october, True)], AS_OF, window) == PreviousNight(october)
    assert previous_night([night(june, True)], AS_OF, window) == PreviousNight(None)  # too old
    # October not yet routed and a run of it in flight: wait for it (September is not "the night before")
    running = [night(september, True), night(october, False, runs=RUNNING)]
    assert previous_night(running, AS_OF, window) == PreviousNight(None, waiting_for=october)
    # scanned a minute ago, no run in flight: between two of its runs (a sensor tick), wait too
    assert previous_night([night(september, True), night(october, False, 60)], AS_OF, window) == \
        PreviousNight(None, waiting_for=october)
    # its latest run failed (a blocking check), or it was left long ago: passed over and named
    for left in (night(october, False, 60, runs=FAILED_RUN), night(october, False)):
        assert previous_night([night(september, True), left], AS_OF, window) == \
            PreviousNight(september, passed_over=(october,))
    # a running night older than a routed one does not matter
    assert previous_night([night(september, False, runs=RUNNING), night(october, True)], AS_OF, window) == \
        PreviousNight(october)
    # tonight and later nights are never "before"
    assert previous_night([night(AS_OF, True), night(date(2011, 12, 31), False, 1)], AS_OF, window) == \
        PreviousNight(None)
    # the wait ran out: the night waited for is passed over, and the search goes on before it
    assert pass_over_waiting(previous_night(running, AS_OF, window), running, AS_OF, window) == \
        PreviousNight(september, passed_over=(october,))


def test_still_strong_means_to_act_on_the_night_before_with_the_same_verdict() -> None:
    from opportunity_assets.records import Analysis, Destination, Route, Verdict

    def analysis(candidate: str, verdict: Verdict) -> Analysis:
        return Analysis.model_construct(candidate_id=candidate, verdict=verdict)

    def route(candidate: str, tag: str) -> Route:
        return Route(as_of=AS_OF, candidate_id=candidate, destination=Destination.BRIEF, section_or_tag=tag,
                     rule="test")

    earlier = act_verdicts([route("austin", "act_on_these"), route("dallas", "act_on_these"),
                            route("houston", "needs_your_judgment"), route("ghost", "act_on_these")],
                           [analysis("austin", Verdict.STRONG), analysis("dallas", Verdict.MARGINAL),
                            analysis("houston", Verdict.STRONG)])
    assert earlier == {"austin": "STRONG", "dallas": "MARGINAL"}  # houston was only in needs-your-judgment
    dallas = ActItem(candidate_id="dallas", name="Dallas", score=71.5, verdict="STRONG", status="CONFIRMED",
                     next_action="x")
    message = channel_message("d", AS_OF, [AUSTIN, dallas], [], {"austin", "dallas"}, earlier, None)
    assert message is not None
    assert [(i.candidate_id, i.still_strong) for i in message.act] == [("austin", True), ("dallas", False)]
    assert channel_message("d", AS_OF, [AUSTIN], [HOUSTON], set(), earlier, None) is None


# ---- retries ----------------------------------------------------------------------------------------------------

def test_the_notifications_metadata_names_who_the_message_named_and_why() -> None:
    """Trial 68: `notifications[d]` said `act_on_these: 8` and nothing of who; its `candidates` table names each,
    new or still strong, with its score and next action, then the needs-judgment ones with what would resolve it."""
    from opportunity_assets.notify.logic import ActItem, JudgmentItem
    from opportunity_assets.tables import notified_table

    act = (ActItem("austin", "Austin", 88.06, "STRONG", "CONFIRMED", "Price three rentals in Austin"),
           ActItem("irving", "Irving", 85.5, "STRONG", "CONFIRMED", "Price three rentals in Irving",
                   red_flags=("falling_prices",)))
    judgment = (JudgmentItem("midland", "Midland", "STRONG", 95.5, "confirm 2010-11 sales with the source",
                             why="doubted data: volume_per_sale 1.401 in 2010-11"),
                JudgmentItem("laredo", "Laredo", "INSUFFICIENT_DATA", None, "sales_3m missing"))
    rows = notified_table(act, judgment, {"irving": "STRONG"}).rows
    assert [(r["candidate"], r["section"], r["mark"], r["score"]) for r in rows] == [
        ("Austin", "act_on_these", "new", "88.1"), ("Irving", "act_on_these", "still strong", "85.5"),
        ("Midland", "needs_your_judgment", None, "95.5"), ("Laredo", "needs_your_judgment", None, None)]
    assert rows[0]["why"] == "STRONG, CONFIRMED; next: Price three rentals in Austin"
    assert rows[1]["why"] == "STRONG, CONFIRMED; red flags: falling_prices; next: Price three rentals in Irving"
    # why it is doubted, as the brief says, beside what would resolve it (trial 96: only the latter)
    assert rows[2]["why"] == ("STRONG; doubted data: volume_per_sale 1.401 in 2010-11; to resolve: confirm 2010-11 "
                              "sales with the source")


def test_retries_back_off_exponentially_and_stop_on_a_request_that_cannot_succeed() -> None:
    waits: list[float] = []
    failures = iter([channels.DeliveryError("HTTP 500", retryable=True)] * 2)

    def flaky() -> None:
        error = next(failures, None)
        if error:
            raise error

    assert channels.with_retries("slack", flaky, attempts=3, backoff_seconds=1.5, sleep=waits.append) == \
        channels.Delivery(channel="slack", delivered=True, attempts=3, error=None)
    assert waits == [1.5, 3.0]

    def bad() -> None:
        raise channels.DeliveryError("HTTP 400 Bad Request", retryable=False)

    waits.clear()
    assert channels.with_retries("webhook", bad, attempts=5, backoff_seconds=1, sleep=waits.append) == \
        channels.Delivery(channel="webhook", delivered=False, attempts=1, error="HTTP 400 Bad Request")
    assert waits == []


# ---- real receivers ---------------------------------------------------------------------------------------------

@pytest.fixture
def http() -> Iterator[HttpReceiver]:
    receiver = HttpReceiver(stall_seconds=1.5)
    yield receiver
    receiver.close()


@pytest.fixture
def smtp() -> Iterator[SmtpReceiver]:
    receiver = SmtpReceiver(stall_seconds=1.5)
    yield receiver
    receiver.close()


def _settings(http: HttpReceiver, smtp: SmtpReceiver, **overrides: object) -> dict[str, object]:
    return {"ui_base_url": "http://scanner.internal:3000", "attempts": 3, "backoff_seconds": 0.05,
            "timeout_seconds": 0.5, "channels": {
                "slack": {"webhook_url": {"env": "TEST_SLACK_WEBHOOK_URL"}},
                "webhook": {"url": http.url("/hook"), "bearer_token": {"env": "TEST_WEBHOOK_TOKEN"}},
                "email": {"host": "127.0.0.1", "port": smtp.port, "starttls": False, "sender": "scanner@test.local",
                          "recipients": ["analyst@test.local", "lead@test.local"]}}, **overrides}


@pytest.fixture
def secrets(http: HttpReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_SLACK_WEBHOOK_URL", http.url("/slack"))
    monkeypatch.setenv("TEST_WEBHOOK_TOKEN", "s3cret-token")


def test_every_channel_delivers_its_exact_payload_with_secrets_from_the_environment(
        http: HttpReceiver, smtp: SmtpReceiver, secrets: None, tmp_path: Path) -> None:
    settings = NotificationSettings.model_validate(_settings(http, smtp))
    assert isinstance(settings.channels.slack and settings.channels.slack.webhook_url, EnvRef)
    notifier = notifier_from_settings(settings, str(tmp_path / "results.duckdb"))
    assert isinstance(notifier.slack and notifier.slack.webhook_url, dg.EnvVar)  # resolved when a run starts
    live = notifier.process_config_and_initialize()
    assert isinstance(live, Notifier) and live.channel_names() == ["outbox", "slack", "webhook", "email"]
    outcomes = [live.deliver(channel, MESSAGE) for channel in live.channel_names()]
    assert [(o.channel, o.delivered, o.attempts) for o in outcomes] == [
        ("outbox", True, 1), ("slack", True, 1), ("webhook", True, 1), ("email", True, 1)]
    assert http.bodies("/slack") == [slack_payload(MESSAGE)]
    assert http.bodies("/hook") == [webhook_payload(MESSAGE)]
    hook = next(r for r in http.received if r.path == "/hook")
    assert hook.headers["Authorization"] == "Bearer s3cret-token"
    assert hook.headers["Content-Type"] == "application/json"
    [(recipients, mail)] = smtp.messages
    assert recipients == ["analyst@test.local", "lead@test.local"]
    assert (mail["From"], mail["To"], mail["Subject"]) == (
        "scanner@test.local", "analyst@test.local, lead@test.local", f"[opportunity] {HEADLINE}")
    assert isinstance(mail, EmailMessage)
    assert mail.get_content().replace("\r\n", "\n") == plain_text(MESSAGE)  # SMTP carries CRLF lines
    [line] = (tmp_path / "outbox.jsonl").read_text().splitlines()
    assert yaml.safe_load(line) == {**webhook_payload(MESSAGE), "text": plain_text(MESSAGE)}


def test_each_channels_failures_are_retried_then_reported(http: HttpReceiver, smtp: SmtpReceiver,
                                                          tmp_path: Path) -> None:
    http.script.extend([FAIL, FAIL, FAIL])
    assert channels.with_retries("slack", lambda: channels.post_json(http.url("/slack"), {}, timeout=0.5),
                                 attempts=3, backoff_seconds=0.01) == channels.Delivery(
        channel="slack", delivered=False, attempts=3, error="HTTP 500 Internal Server Error")
    http.script.extend([STALL, OK])
    delivery = channels.with_retries("webhook", lambda: channels.post_json(http.url("/hook"), {}, timeout=0.3),
                                     attempts=3, backoff_seconds=0.01)
    assert (delivery.delivered, delivery.attempts) == (True, 2)
    http.script.append(BAD)
    delivery = channels.with_retries("webhook", lambda: channels.post_json(http.url("/hook"), {}, timeout=0.3),
                                     attempts=3, backoff_seconds=0.01)
    assert (delivery.delivered, delivery.attempts, delivery.error) == (False, 1, "HTTP 400 Bad Request")
    assert len(http.received) == 3 + 2 + 1
    for moved in (MOVED, MOVED_KEEP):  # followed, a 302 turned the POST into a bodiless GET answered 200
        http.script.append(moved)
        delivery = channels.with_retries("webhook", lambda: channels.post_json(http.url("/hook"), {}, timeout=0.3),
                                         attempts=3, backoff_seconds=0.01)
        assert (delivery.delivered, delivery.attempts) == (False, 1)
        assert delivery.error is not None and "redirects, and a POST is not followed" in delivery.error
    assert [r.path for r in http.received].count("/moved") == 0
    smtp.script.extend([FAIL, FAIL])

    def mail() -> None:
        channels.send_email(host="127.0.0.1", port=smtp.port, sender="a@test.local", recipients=["b@test.local"],
                            subject="s", body="b", timeout=2, starttls=False, username=None, password=None)

    delivery = channels.with_retries("email", mail, attempts=2, backoff_seconds=0.01)
    assert (delivery.delivered, delivery.attempts) == (False, 2)
    assert delivery.error is not None and "554" in delivery.error and "refused by policy" in delivery.error
    smtp.script.append(FAIL)
    assert channels.with_retries("email", mail, attempts=2, backoff_seconds=0.01).attempts == 2
    assert smtp.attempts == 4 and len(smtp.messages) == 1


# ---- the asset, on whole nights -----------------------------------------------------------------------------------

def _defs(tmp_path: Path, notifications: dict[str, object]) -> dg.Definitions:
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv",
                      **SIX_MOST_LIQUID)
    settings = tmp_path / "automation.yaml"
    settings.write_text(yaml.safe_dump({"notifications": notifications}))
    return build_definitions(criteria_path=str(pack), store_path=str(tmp_path / "results.duckdb"),
                             settings_path=str(settings))


def _notifications_metadata(instance: dg.DagsterInstance, as_of: date) -> tuple[dict[str, object], bool]:
    record = instance.fetch_materializations(dg.AssetRecordsFilter(
        asset_key=dg.AssetKey("notifications"), asset_partitions=[as_of.isoformat()]), limit=1).records[0]
    assert record.asset_materialization is not None
    metadata = {k: v.value for k, v in record.asset_materialization.metadata.items()}
    check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("notifications"), "channels_delivered")])
    evaluation = next(iter(check.values())).evaluation
    assert evaluation is not None
    return metadata, evaluation.passed


@pytest.mark.slow
def test_a_failing_channel_is_recorded_and_retried_later_while_the_others_deliver_once(
        http: HttpReceiver, smtp: SmtpReceiver, secrets: None, tmp_path: Path) -> None:
    defs = _defs(tmp_path, _settings(http, smtp))
    instance = dg.DagsterInstance.ephemeral()
    night = date(2011, 10, 31)
    http.script.extend([FAIL, FAIL, FAIL, STALL, OK])  # slack: 3 × HTTP 500; webhook: a timeout, then delivered
    smtp.script.append(FAIL)  # email: refused once, then delivered
    nights.run_night(defs, instance, night)

    store = ResultStore(path=str(tmp_path / "results.duckdb"))
    log = {(r["candidate_id"], r["channel"]): (r["status"], r["attempts"])
           for r in store.notification_rows("texas_housing", night)}
    assert log == {(c, ch): outcome for c in ("austin", "collin-county") for ch, outcome in
                   {"outbox": (SENT, 1), "slack": (FAILED, 3), "webhook": (SENT, 2), "email": (SENT, 2)}.items()}
    assert len(http.bodies("/slack")) == 3 and len(http.bodies("/hook")) == 2 and len(smtp.messages) == 1
    metadata, delivered = _notifications_metadata(instance, night)
    assert not delivered  # the failed channel shows as a failed check in the UI
    assert "| slack | failed | 3 | HTTP 500 Internal Server Error |" in str(metadata["channels"])
    named = [dict(r.data) for r in metadata["candidates"].records]  # trial 68: who, not how many
    assert [(r["candidate"], r["section"], r["mark"]) for r in named if r["section"] == "act_on_these"] == [
        ("Austin", "act_on_these", "new"), ("Collin County", "act_on_these", "new")]
    assert all(r["why"].startswith("STRONG, CONFIRMED; next: Price three rentals") for r in named[:2])
    assert [{i["candidate_id"] for i in b["act_on_these"]} for b in http.bodies("/hook")] == [
        {"austin", "collin-county"}] * 2
    # why each needs-judgment one is there, as the brief's line says it, beside what resolves it (trial 96)
    judged = http.bodies("/hook")[0]["needs_your_judgment"]
    brief = store.brief("texas_housing", night)
    assert judged and brief and all(i["why"] and f"{i['why']}. To resolve:" in plain(brief["markdown"])
                                    for i in judged), judged

    # Slack is healthy again; materializing the notifications again delivers Slack only, once.
    defs.resolve_job_def("notify_night").execute_in_process(instance=instance, partition_key=night.isoformat())
    assert len(http.bodies("/slack")) == 4 and len(http.bodies("/hook")) == 2 and len(smtp.messages) == 1
    assert {r["status"] for r in store.notification_rows("texas_housing", night)} == {SENT}
    assert _notifications_metadata(instance, night)[1]
    assert len((tmp_path / "outbox.jsonl").read_text().splitlines()) == 1


@pytest.mark.slow
def test_a_quiet_night_sends_nothing_and_the_brief_still_records_it(
        http: HttpReceiver, smtp: SmtpReceiver, secrets: None, tmp_path: Path) -> None:
    defs = _defs(tmp_path, _settings(http, smtp))
    instance = dg.DagsterInstance.ephemeral()
    quiet = date(2011, 7, 31)
    nights.run_night(defs, instance, quiet)
    run = nights.state(defs, quiet)
    assert run.brief is not None and "No STRONG, confirmed candidate tonight." in run.brief.markdown
    assert http.received == [] and smtp.messages == [] and not (tmp_path / "outbox.jsonl").exists()
    metadata, delivered = _notifications_metadata(instance, quiet)
    assert delivered and metadata["act_on_these"] == 0
    assert metadata["channels"] == "Nothing to act on tonight: no message."


# ---- new against still strong, by night order ---------------------------------------------------------------------

def _outbox_marks(tmp_path: Path) -> list[tuple[str, list[tuple[str, bool]]]]:
    lines = (tmp_path / "outbox.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return [(r["as_of"], sorted((i["candidate_id"], i["still_strong"]) for i in r["act_on_these"])) for r in records]


class _Night(threading.Thread):
    """A night run in another thread, as a parallel `opportunity run` would; its exception is kept."""

    def __init__(self, defs: dg.Definitions, as_of: date) -> None:
        super().__init__(daemon=True)
        self.defs, self.as_of, self.error = defs, as_of, None

    def run(self) -> None:
        try:
            with dg.DagsterInstance.ephemeral() as instance:  # disposed in its own thread
                nights.run_night(self.defs, instance, self.as_of)
        except BaseException as exc:
            self.error = exc


def _until(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.mark.slow
def test_a_night_that_overtakes_its_predecessor_waits_for_it_and_marks_as_in_order(tmp_path: Path) -> None:
    defs = _defs(tmp_path, {"earlier_night_wait_seconds": 120})
    store = ResultStore(path=str(tmp_path / "results.duckdb"))
    october, november = date(2011, 10, 31), date(2011, 11, 30)
    instance = dg.DagsterInstance.ephemeral()
    nights.execute_job(defs, "scan_night", instance, partition_key=october.isoformat())  # October has started
    overtaking = _Night(defs, november)
    overtaking.start()
    _until(lambda: bool(store.analyses("texas_housing", november)))  # November is analyzed before October
    time.sleep(1.0)
    # and waits to brief (trial 42: its brief said "new" against no night while its message, which waited, said
    # "still strong"), and so to notify
    assert overtaking.is_alive() and store.brief("texas_housing", november) is None
    assert not (tmp_path / "outbox.jsonl").exists()
    nights.run_night(defs, instance, october)
    overtaking.join(timeout=120)
    assert overtaking.error is None and not overtaking.is_alive()
    # as a run in night order marks them (tests/test_automation.py: October, then November). The lines' order is not
    # promised: November waits for October's brief (which decides "still strong"), not for October's message.
    assert sorted(_outbox_marks(tmp_path)) == [
        ("2011-10-31", [("austin", False), ("collin-county", False)]),
        ("2011-11-30", [("austin", True), ("collin-county", True), ("dallas", False)])]
    # the brief's "since last night" and the report say what the message said
    loaded, _ = nights.resources_of(defs)
    report = read_report(store, loaded, november)
    assert report.last_night == october
    assert sorted((c.candidate_id, c.change) for c in report.changes) == [
        ("austin", "still strong"), ("collin-county", "still strong"), ("dallas", "new")]


@pytest.mark.slow
def test_an_earlier_night_still_running_after_the_wait_is_passed_over_and_named(tmp_path: Path) -> None:
    defs = _defs(tmp_path, {"earlier_night_wait_seconds": 1})
    october, november = date(2011, 10, 31), date(2011, 11, 30)
    nights.execute_job(defs, "scan_night", dg.DagsterInstance.ephemeral(), partition_key=october.isoformat())
    instance = dg.DagsterInstance.ephemeral()
    nights.run_night(defs, instance, november)  # October never finishes
    assert _outbox_marks(tmp_path) == [("2011-11-30", [("austin", False), ("collin-county", False),
                                                       ("dallas", False)])]
    metadata, _ = _notifications_metadata(instance, november)
    assert metadata["passed_over_unrouted"] == "2011-10-31"
    assert metadata["still_strong_against"] == "no earlier night: all new"


def test_a_nights_runs_in_the_instance_say_running_or_failed() -> None:
    from opportunity_assets.notify.assets import night_run_states

    with dg.DagsterInstance.ephemeral() as instance:
        september, october = date(2011, 9, 30), date(2011, 10, 31)
        failed = started_run(instance, {"dagster/partition": september.isoformat()})
        instance.report_run_failed(failed, "a blocking check failed")
        # October's per-candidate run, by its partition range
        started_run(instance, {"dagster/asset_partition_range_start": f"{october.isoformat()}|austin"})
        started_run(instance, {"dagster/partition": "not a night"})
        assert night_run_states(instance, timedelta(days=2))() == {september: FAILED_RUN, october: RUNNING}


@pytest.mark.slow
def test_a_run_stopped_between_tries_leaves_its_message_to_the_run_again(http: HttpReceiver, tmp_path: Path) -> None:
    """Trial 109: Ctrl-C (or SIGTERM) after a channel's claim but before its message was sent (between tries, or
    before the first) left the claim `claimed`: the run again the stop's line asks for skipped it as sent and exited
    0, and the message never came (for 15 minutes, then only if someone ran it again). A stop with no try in flight
    records the claim `failed`, so the run again sends it, once."""
    import signal
    import subprocess
    import sys

    from opportunity_assets.cli import main
    from opportunity_assets.notify.logic import STOPPED_UNSENT

    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    settings = tmp_path / "automation.yaml"
    settings.write_text(yaml.safe_dump({"notifications": {"attempts": 2, "backoff_seconds": 30, "timeout_seconds": 5,
                                                          "channels": {"webhook": {"url": http.url("/hook")}}}}))
    command = ["run", "--as-of", "2011-10-31", "--criteria", str(pack), "--settings", str(settings),
               "--store", str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]
    http.script.append(FAIL)  # the first try fails; the stop comes while the run waits to try again
    process = subprocess.Popen([sys.executable, "-c", "import sys; from opportunity_assets.command import main; "
                                "sys.exit(main())", *command], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    _until(lambda: len(http.bodies("/hook")) == 1 or process.poll() is not None)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode in (2, 130) and "Traceback" not in err, err
    store = ResultStore(path=str(tmp_path / "r.duckdb"))
    night = date(2011, 10, 31)
    assert {(r["channel"], r["status"], r["error"]) for r in store.notification_rows("texas_housing", night)
            if r["channel"] == "webhook"} == {("webhook", FAILED, STOPPED_UNSENT)}

    assert main(command) == 0  # run again, as the stop's line says: the webhook's message goes, once
    assert len(http.bodies("/hook")) == 2
    assert {r["status"] for r in store.notification_rows("texas_housing", night)} == {SENT}


@pytest.mark.slow
def test_a_run_killed_while_sending_is_named_by_the_run_again_not_passed_as_sent(
        http: HttpReceiver, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 109: a run killed (kill -9, OOM) or stopped while its webhook request was on the wire leaves the claim
    `claimed` (the receiver may have the message: it is not sent again before the claim expires). The run again
    printed the brief, said nothing and exited 0, as if every channel had delivered. It sends nothing twice, and says
    which channel's message may not have come, since when, and when a run would send it again: exit 1."""
    import signal
    import subprocess
    import sys

    from opportunity_assets.cli import main

    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    settings = tmp_path / "automation.yaml"
    settings.write_text(yaml.safe_dump({"notifications": {"timeout_seconds": 30, "claim_expiry_seconds": 900,
                                                          "channels": {"webhook": {"url": http.url("/hook")}}}}))
    command = ["run", "--as-of", "2011-10-31", "--criteria", str(pack), "--settings", str(settings),
               "--store", str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]
    http.script.append(HOLD)  # the request arrives and is held: the run is killed with it on the wire
    process = subprocess.Popen([sys.executable, "-c", "import sys; from opportunity_assets.command import main; "
                                "sys.exit(main())", *command], cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _until(lambda: http.arrived.is_set() or process.poll() is not None)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    http.release.set()

    assert main(command) == 1
    err = capsys.readouterr().err
    assert len(http.bodies("/hook")) == 1  # not sent twice
    line = next(line for line in err.splitlines() if "channel webhook" in line)
    assert line.startswith("opportunity: 2011-10-31: channel webhook: a run stopped or killed while sending it (") \
        and "whether it arrived is unknown" in line and "run the same command after" in line, err
