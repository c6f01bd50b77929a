"""Model roles through the real anthropic SDK against a local Anthropic-compatible server (no network).

What must hold: the roles use their configured (and different) models; a model can never change a number,
score, verdict, status upward or route; uncited findings are noise; faults leave error records and a whole
brief; the budget stops calls; replays send nothing; blinded prompts hold no names and no years; the API key
is never stored or logged.
"""

from __future__ import annotations

import dataclasses
import json
import re
import socket
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from opportunity_assets import night as nights
from opportunity_assets.definitions import build_definitions
from opportunity_assets.llm.models import AnalyzerJudgment, VerifierJudgment
from opportunity_assets.llm.roles import alias, load_prompt
from opportunity_assets.records import RunState
from opportunity_assets.text import plain
from resources.model import AnthropicModel, CallSpec, ModelCallFailed, ModelOff
from resources.store import ResultStore
from tests.conftest import month_rows, write_csv, write_pack
from tests.fake_anthropic import FakeAnthropic

pytestmark = pytest.mark.slow

AS_OF = date(2015, 1, 30)
SECRET = "sk-ant-test-SECRET-0123456789abcdef"
TOWNS = [f"Town {name}" for name in ("Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Gum", "Hazel", "Ivy",
                                     "Juniper", "Kapok", "Larch")]


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


def _source(tmp_path: Path) -> Path:
    rows = []
    for i, town in enumerate(TOWNS):  # a spread of markets: some STRONG, some not
        before, after = 150.0, 150.0 + 12 * i
        rows += month_rows(town, overrides={(2014, m): {"sales": after, "inventory": 6.0 - 0.2 * i}
                                            for m in range(1, 13)}, sales=before)
    return write_pack(tmp_path, write_csv(tmp_path / "towns.csv", rows))


def _night(tmp_path: Path, model: Any, pack: Path, as_of: date = AS_OF,
           instance: dg.DagsterInstance | None = None) -> RunState:
    defs = build_definitions(criteria_path=str(pack), store_path=str(tmp_path / "r.duckdb"), model=model)
    nights.run_night(defs, instance or dg.DagsterInstance.ephemeral(), as_of)
    return nights.state(defs, as_of)


def _model(tmp_path: Path, server: FakeAnthropic, **kwargs: Any) -> AnthropicModel:
    return AnthropicModel(api_key=SECRET, base_url=server.url, store=ResultStore(path=str(tmp_path / "r.duckdb")),
                          max_retry_after_s=0.2, **kwargs)


def _analyzer_call() -> CallSpec:
    """One analyzer call of candidate `x`, with the pack's default limits."""
    return CallSpec(role="analyzer", model="claude-haiku-5-5", prompt=load_prompt("analyzer"), payload={"a": 1},
                    output_type=AnalyzerJudgment, max_tokens=600, max_input_tokens=2500, domain="d", as_of=AS_OF,
                    candidate_id="x", ceiling_usd=1.0)


def _bodies(server: FakeAnthropic, title: str) -> list[dict[str, Any]]:
    return [r.body for r in server.requests
            if r.body.get("output_config", {}).get("format", {}).get("schema", {}).get("title") == title]


def _decisions(run: RunState) -> dict[str, Any]:
    return {"numbers": {a.candidate_id: {k: n.value for k, n in a.numbers.items()} for a in run.analyses},
            "scores": {a.candidate_id: (a.score, a.verdict) for a in run.analyses},
            "routes": {r.candidate_id: (r.destination, r.section_or_tag) for r in run.routes}}


def test_roles_use_their_configured_models_and_the_night_records_usage(tmp_path: Path,
                                                                        server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    run = _night(tmp_path, _model(tmp_path, server), pack)
    analyzer, verifier, brief = (_bodies(server, t) for t in ("AnalyzerJudgment", "VerifierJudgment", "BriefWording"))
    assert len(analyzer) == len(verifier) == len(run.analyses) == 12 and len(brief) == 1
    assert {b["model"] for b in analyzer} == {"claude-haiku-5-5"}
    assert {b["model"] for b in verifier} == {"claude-sonnet-5-5"}
    assert {b["model"] for b in brief} == {"claude-haiku-5-5"}
    # the shared system prompt is sent for caching, and the second call reads it from the cache
    assert all(b["system"][0]["cache_control"] == {"type": "ephemeral"} for b in analyzer)
    rows = ResultStore(path=str(tmp_path / "r.duckdb")).query(
        "SELECT role, prompt_version, sum(cache_read_tokens) AS cache_read FROM model_calls GROUP BY ALL")
    versions = {r["role"]: r["prompt_version"] for r in rows}
    assert versions == {role: load_prompt(role).version for role in ("analyzer", "verifier", "brief")}
    assert all(r["cache_read"] > 0 for r in rows if r["role"] != "brief")
    assert run.cost.calls == 25 and run.cost.usd > 0 and run.cost.input_tokens > 0
    assert run.model_checks.startswith("on") and "Model checks: on" in (run.brief.markdown if run.brief else "")
    assert any(a.startswith("(model) ") for a in run.analyses[0].assumptions)


def test_a_model_cannot_change_numbers_verdicts_statuses_or_routes(tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    (tmp_path / "off").mkdir()
    baseline = _night(tmp_path / "off", ModelOff(), pack)
    server.answer_with("AnalyzerJudgment", lambda r: {
        "assumptions": ["The verdict is STRONG and the score is 99."], "red_flags": [],
        "reasoning": "STRONG. Score 99. Route it to act_on_these.", "verdict": "STRONG", "score": 99.0,
        "numbers": {"sales_3m": 1.0}})
    server.answer_with("VerifierJudgment", lambda r: {
        "findings": [{"check": "assumptions", "cites": "numbers.sales_3m", "finding": "All good: CONFIRMED.",
                      "effect": "note"}], "fatal_assumption": None, "status": "CONFIRMED"})
    run = _night(tmp_path, _model(tmp_path, server), pack)
    assert _decisions(run) == _decisions(baseline)
    assert {v.candidate_id: v.status for v in run.verifications} == {
        v.candidate_id: v.status for v in baseline.verifications}
    assert any(v.status != "CONFIRMED" for v in run.verifications)  # there was something to upgrade


def test_findings_must_cite_the_analysis_and_can_only_downgrade(tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    (tmp_path / "off").mkdir()
    baseline = {v.candidate_id: v.status for v in _night(tmp_path / "off", ModelOff(), pack).verifications}
    server.answer_with("VerifierJudgment", lambda r: {"findings": [
        {"check": "assumptions", "cites": "market conditions", "finding": "Markets could change.", "effect": "reject"},
        {"check": "omissions", "cites": "numbers.not_a_metric", "finding": "Invented field.", "effect": "reject"},
        {"check": "assumptions", "cites": "numbers.inventory_3m", "finding": "Seasonal low.", "effect": "uncertain"},
    ], "fatal_assumption": "Inventory stays low."})
    run = _night(tmp_path, _model(tmp_path, server), pack)
    for v in run.verifications:
        assert v.model_noise == 2 and [f.cites for f in v.model_findings] == ["numbers.inventory_3m"]
        downgraded = {"CONFIRMED": "UNCERTAIN", "UNCERTAIN": "UNCERTAIN", "REJECTED": "REJECTED"}
        expected = downgraded[baseline[v.candidate_id]]
        assert v.status == expected, v.candidate_id
    assert any(baseline[v.candidate_id] == "CONFIRMED" for v in run.verifications)


ERROR_200 = ('raw:200|application/json|{"type": "error", "error": {"type": "overloaded_error", "message": '
             f'"echoing {SECRET}"}}}}')
"""An API error sent with status 200 (a gateway's), its message echoing the key."""

CONTEXT_CUT = "cut:model_context_window_exceeded"
"""The answer cut short because the model's context ran out (a stop reason of its own, beside max_tokens)."""

FAULT_SCRIPTS = [
    (["429:1", "ok"], 2, True),  # rate limited once, retry-after honoured (capped), then answered
    (["429:nan", "ok"], 2, True),  # a retry-after that is no number of seconds: backoff (NaN crashed time.sleep)
    (["529", "529", "529"], 3, False),  # overloaded: two retries, then an error record
    (["500", "ok"], 2, True),
    (["noretry:429"], 1, False),  # the server's x-should-retry: false is obeyed (was sent three times)
    (["noretry:529"], 1, False),
    (["truncate", "ok"], 2, True),  # truncated once: one retry of bad output
    (["truncate", "truncate"], 2, False),
    (["refuse", "refuse"], 2, False),
    (["malformed", "malformed"], 2, False),
    (["malformed", "ok"], 2, True),
    (["slow:0.5"], 1, True),  # a slow answer inside the timeout is just an answer
    # A turn that did not finish: the context ran out mid-answer (was 'answer does not match the schema'), or a
    # server tool paused it (its text was read as the answer)
    ([CONTEXT_CUT, CONTEXT_CUT], 2, False),
    (["stop:pause_turn", "ok"], 2, True),
    # What a gateway in front of the API may answer instead of a well-formed message:
    (["fenced"], 1, True),  # the JSON answer inside prose and a ```json fence: the one object it holds
    (["twice", "ok"], 2, True),  # a key written twice in one object: no answer (the last value was taken), retried
    (["twice", "twice"], 2, False),
    (["thinking"], 1, True),  # a thinking block before the text
    (["nousage"], 1, True),  # no usage reported: billed at the call's worst case (below)
    (["nullusage"], 1, True),
    (["nocontent", "ok"], 2, True),  # no content: a bad answer, retried once
    (["html", "ok"], 2, True),  # a proxy's HTML page with status 200
    (["array", "ok"], 2, True),  # JSON that is no message
    (["notjson", "notjson"], 2, False),  # a cut body, twice: an error record, not a crash
    (["gzip:bare", "gzip:bare"], 2, False),  # compressed, no content-encoding: was named "(UnicodeDecodeError)"
    (["raw:200|application/json|null", "raw:200|application/json|null"], 2, False),  # was "(a NoneType body)"
    (["raw:200|text/html|", "raw:200|text/html|"], 2, False),  # an empty body: was "a web page"
    (["html", "html"], 2, False),  # was "(a str body)"
    # The answer in other content blocks, or content of a shape the SDK does not check (it builds without validating)
    (["tooluse"], 1, True),  # a gateway that turned the output schema into a tool: the tool_use block's input
    (["split"], 1, True),  # the JSON across two text blocks
    (["unknownblock"], 1, True),  # a block type this SDK does not know, before the text
    (['content:"the answer as a bare string"', "ok"], 2, True),  # crashed: 'str' object has no attribute 'type'
    (['content:[{"type": "text"}]', "ok"], 2, True),  # a text block without text crashed the join
    (['content:[{"type": "tool_use", "id": "t", "name": "a", "input": {"assumptions": 5}}]', "ok"], 2, True),
    # A stream nobody asked for (a gateway that always streams): the message its events carry
    (["sse"], 1, True),  # was 'the response is not a message (a str body)', twice, then an error record
    (['raw:200|text/event-stream|data: {"type": "message_start", "message": [1]}\n\ndata: x', "ok"], 2, True),
    # A body the SDK cannot read: nested past the recursion limit (RecursionError escaped the call and the step)
    (["raw:200|application/json|" + "[" * 100_000 + "]" * 100_000, "ok"], 2, True),
    ([ERROR_200, ERROR_200], 2, False),  # was 'answer does not match the schema': the error is named
    # Usage no honest server reports, beside fields the SDK does not know: billed at the worst case (below)
    (["usage:-5000"], 1, True),  # negative: would make the call pay the night back
    (["usage:99999999999"], 1, True),  # more tokens than any context holds
    (["usage:abc"], 1, True),  # not a number: the arithmetic crashed
    (["usage:0"], 1, True),  # no tokens at all (every request holds a prompt): was billed $0.0000
    (["usage:400,600,5000000000,3000000000"], 1, True),  # cache counts past any context: were billed as nothing
]
"""What the local API answers one call, in order: (script, requests the client sends, answered in the end)."""


@pytest.mark.parametrize(("script", "requests", "ok"), FAULT_SCRIPTS)
def test_faults_are_retried_within_bounds(tmp_path: Path, server: FakeAnthropic, script: list[str], requests: int,
                                         ok: bool) -> None:
    model = _model(tmp_path, server)
    model.setup_for_execution(dg.build_init_resource_context())
    spec = CallSpec(role="analyzer", model="claude-haiku-5-5", prompt=load_prompt("analyzer"),
                    payload={"analysis": {"entity": "x"}}, output_type=AnalyzerJudgment, max_tokens=600,
                    max_input_tokens=2500, domain="d", as_of=AS_OF, candidate_id="x", ceiling_usd=1.0)
    server.script(*script)
    if ok:
        answer, reply = model.complete(spec, AnalyzerJudgment)
        assert answer.assumptions and not reply.replayed and reply.usd > 0
    else:
        with pytest.raises(ModelCallFailed) as failed:
            model.complete(spec, AnalyzerJudgment)
        said = {"529": "analyzer: HTTP 529 (overloaded_error) after 3 attempt(s)",
                ERROR_200: "analyzer: an API error with status 200 (overloaded_error), also after one retry",
                "notjson": "analyzer: the response is not a message (its body is not JSON), also after one retry",
                "gzip:bare": "analyzer: the response is not a message (its body is not text: compressed or binary, "
                             "with no content-encoding saying so), also after one retry",
                "raw:200|application/json|null": "analyzer: the response is not a message (its body is JSON null), "
                                                 "also after one retry",
                "raw:200|text/html|": "analyzer: the response is not a message (its body is empty), also after one "
                                      "retry",
                "html": "analyzer: the response is not a message (its body is text, not JSON: a web page, or a "
                        "proxy's or gateway's own reply), also after one retry",
                CONTEXT_CUT: "analyzer: truncated answer (stop_reason model_context_window_exceeded), also after one "
                             "retry",
                "twice": "analyzer: answer names the key 'assumptions' twice in one object: neither value is guessed "
                         "at, also after one retry"}
        assert str(failed.value) == said.get(script[0], str(failed.value)) and SECRET not in str(failed.value)
    assert len(server.requests) == requests
    log = model.drain()  # failed calls are recorded too: their tokens were billed
    records = log.calls
    assert [u.replayed for u in log.uses] == [False] and log.uses[0].key == records[0].key
    assert len(records) == 1 and records[0].attempts == requests and (records[0].response is None) != ok
    if script[0] in ("nousage", "nullusage") or script[0].startswith("usage:"):
        # unreported or unbelievable usage is never free nor unbounded: the call's worst case is billed
        billed = records[0]
        assert (billed.input_tokens, billed.output_tokens, billed.cache_write_tokens, billed.cache_read_tokens) == (
            2500, 600, 0, 0)
        assert records[0].usd == pytest.approx(model.usd("claude-haiku-5-5", 2500, 600, 0, 0))


@pytest.mark.parametrize(("stop_reason", "said"), [
    ("model_context_window_exceeded", "truncated answer (stop_reason model_context_window_exceeded)"),
    ("end_turn", "answer does not match the schema (1 error(s))")])
def test_a_cut_answer_is_never_read_as_the_one_whole_object_inside_it(tmp_path: Path, server: FakeAnthropic,
                                                                      stop_reason: str, said: str) -> None:
    """A verifier answer cut after its one finding held that finding whole: it was read as the answer, a
    verification with no findings, and the skeptic's doubt was lost (and replayed on every re-run)."""
    model = _model(tmp_path, server)
    model.setup_for_execution(dg.build_init_resource_context())
    server.answer_with("VerifierJudgment", lambda r: {"findings": [
        {"check": "assumptions", "cites": "numbers.sales_3m", "finding": "Seasonal.", "effect": "reject"}],
        "fatal_assumption": None})
    spec = dataclasses.replace(_analyzer_call(), role="verifier", model="claude-sonnet-5-5",
                               prompt=load_prompt("verifier"), output_type=VerifierJudgment)
    server.script(f"cut:{stop_reason}", f"cut:{stop_reason}")
    with pytest.raises(ModelCallFailed) as failed:
        model.complete(spec, VerifierJudgment)
    assert str(failed.value) == f"verifier: {said}, also after one retry"
    (record,) = model.drain().calls
    assert record.response is None and record.attempts == 2


def test_a_stored_answer_the_schema_no_longer_takes_is_asked_for_again(tmp_path: Path,
                                                                      server: FakeAnthropic) -> None:
    model = _model(tmp_path, server)
    model.setup_for_execution(dg.build_init_resource_context())
    spec = _analyzer_call()
    model.complete(spec, AnalyzerJudgment)
    stored = model._cache[model.cache_key(spec)]  # as an older, looser schema stored it: a 5000-char assumption
    model._cache[model.cache_key(spec)] = {**stored, "response": json.dumps({"assumptions": ["x" * 5000]})}
    answer, reply = model.complete(spec, AnalyzerJudgment)  # raised ValidationError before
    assert not reply.replayed and answer.assumptions and len(server.requests) == 2


def test_a_read_timeout_is_retried_then_recorded(tmp_path: Path, server: FakeAnthropic) -> None:
    model = _model(tmp_path, server, timeout_s=0.3, max_retries=1)
    model.setup_for_execution(dg.build_init_resource_context())
    spec = _analyzer_call()
    server.script("hang:1", "hang:1")
    with pytest.raises(ModelCallFailed, match=r"analyzer: timed out after 2 attempt.*lost billed at its worst case"):
        model.complete(spec, AnalyzerJudgment)
    assert len(server.requests) == 2
    # the server had both requests and may have answered (and billed) each: never recorded as free
    (record,) = model.drain().calls
    assert (record.input_tokens, record.output_tokens) == (2 * 2500, 2 * 600)
    assert record.usd == pytest.approx(2 * model.usd("claude-haiku-5-5", 2500, 600, 0, 0))


def test_retries_of_lost_answers_stop_at_the_nights_ceiling(tmp_path: Path, server: FakeAnthropic) -> None:
    model = _model(tmp_path, server, timeout_s=0.3, max_retries=2)
    model.setup_for_execution(dg.build_init_resource_context())
    spec = _analyzer_call()
    worst = model.usd("claude-haiku-5-5", 2500, 600, 0, 0)
    server.script("hang:1", "hang:1", "hang:1")
    # the ceiling covers the call's reservation (two attempts at their worst case), not a third lost answer
    with pytest.raises(ModelCallFailed, match=r"analyzer: timed out after 2 attempt"):
        model.complete(dataclasses.replace(spec, ceiling_usd=2.5 * worst), AnalyzerJudgment)
    assert len(server.requests) == 2
    (record,) = model.drain().calls
    assert record.usd == pytest.approx(2 * worst)


def test_calls_in_flight_together_cannot_retry_lost_answers_past_the_ceiling(tmp_path: Path,
                                                                               server: FakeAnthropic) -> None:
    """Each call's retry past its reservation was checked against the ceiling but not reserved: calls retrying at
    the same moment each saw room for one more attempt (trial 93: a gateway that dropped every answer billed a
    night $1.04 against its ceiling of $0.75)."""
    from concurrent.futures import ThreadPoolExecutor

    model = _model(tmp_path, server, timeout_s=0.3, max_retries=2)
    model.setup_for_execution(dg.build_init_resource_context())
    worst = model.usd("claude-haiku-5-5", 2500, 600, 0, 0)
    server.fail_when(lambda body: True, "hang:1")
    # two reservations of two attempts each, and room for one more lost attempt, not two
    specs = [dataclasses.replace(_analyzer_call(), candidate_id=c, ceiling_usd=5.5 * worst) for c in ("x", "y")]

    def call(spec: CallSpec) -> str:
        with pytest.raises(ModelCallFailed) as failed:
            model.complete(spec, AnalyzerJudgment)
        return str(failed.value)

    with ThreadPoolExecutor(2) as pool:
        problems = list(pool.map(call, specs))
    assert all("timed out" in p for p in problems)
    calls = model.drain().calls
    assert len(server.requests) == 5 and sum(c.usd for c in calls) == pytest.approx(5 * worst)
    assert sum(c.usd for c in calls) <= 5.5 * worst


def test_a_redirect_loop_or_a_body_its_encoding_does_not_decode_is_said_so_never_a_lost_answer(
        tmp_path: Path, server: FakeAnthropic) -> None:
    """Both were "connection lost before the answer", each attempt billed at its worst case, and three of them
    stopped the night with "raise the settings' model timeout_s" (trial 93): a redirect loop answered nothing (no
    model ran: it costs nothing and is said as a base URL to fix); a body that does not decode as its
    content-encoding says is an answer no one can read, billed and retried as a bad answer."""
    model = _model(tmp_path, server, max_retries=1)
    model.setup_for_execution(dg.build_init_resource_context())
    server.fail_when(lambda body: '"a": 2' in body["messages"][0]["content"], "redirect")  # the hops too
    with pytest.raises(ModelCallFailed) as failed:
        model.complete(dataclasses.replace(_analyzer_call(), payload={"a": 2}), AnalyzerJudgment)
    assert str(failed.value).startswith("analyzer: not sent after 2 attempt(s) (redirected again and again: a "
                                        "redirect loop)") and "timeout" not in str(failed.value)
    (record,) = model.drain().calls
    assert record.usd == 0.0
    server.script("gzip:lie", "gzip:lie")
    with pytest.raises(ModelCallFailed) as failed:
        model.complete(dataclasses.replace(_analyzer_call(), candidate_id="y"), AnalyzerJudgment)
    assert str(failed.value) == ("analyzer: the response is not a message (its body does not decode as its "
                                 "content-encoding says), also after one retry")
    (record,) = model.drain().calls
    assert record.usd == pytest.approx(2 * model.usd("claude-haiku-5-5", 2500, 600, 0, 0))


def test_a_request_that_never_reached_the_server_costs_nothing(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on: the connection is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    # trial 68: "APIConnectionError after 3 attempt(s)", the SDK's class name; and a base URL that is no URL was
    # billed as if answered, "each answer lost billed at its worst case", though no request left
    for url, why in ((f"http://127.0.0.1:{port}", "Connection refused"),
                     ("notaurl", "Request URL is missing an 'http://' or 'https://' protocol.")):
        model = AnthropicModel(api_key=SECRET, base_url=url, store=ResultStore(path=str(tmp_path / "r.duckdb")),
                               max_retries=1, max_retry_after_s=0.2)
        model.setup_for_execution(dg.build_init_resource_context())
        with pytest.raises(ModelCallFailed) as failed:
            model.complete(_analyzer_call(), AnalyzerJudgment)
        assert str(failed.value) == (f"analyzer: not sent after 2 attempt(s) ({why}); the model's server could not "
                                     "be reached: check ANTHROPIC_BASE_URL (unset for the Anthropic API) and this "
                                     "host's network")
        (record,) = model.drain().calls
        assert (record.input_tokens, record.output_tokens, record.usd) == (0, 0, 0.0)


def test_a_server_that_cannot_be_reached_is_said_once_in_the_brief_with_the_fix(tmp_path: Path) -> None:
    """Trial 68: every call refused a connection, and the brief said only "every model call failed tonight (61
    model errors)": nothing of why or what to set."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    model = AnthropicModel(api_key=SECRET, base_url=f"http://127.0.0.1:{port}",
                           store=ResultStore(path=str(tmp_path / "r.duckdb")), max_retries=0)
    run = _night(tmp_path, model, _source(tmp_path))
    assert run.brief is not None and run.summary.model_errors
    said = [line for line in plain(run.brief.markdown).splitlines() if "ANTHROPIC_BASE_URL" in line]
    assert said == ["- Model calls failed tonight: the model's server could not be reached: check "
                    "ANTHROPIC_BASE_URL (unset for the Anthropic API) and this host's network."], run.brief.markdown
    assert "every model call failed tonight" in run.brief.markdown and not nights_unsupported(run)


def test_a_response_that_drips_is_cut_at_the_timeout_as_a_whole(tmp_path: Path, server: FakeAnthropic) -> None:
    model = _model(tmp_path, server, timeout_s=0.5, max_retries=1)
    model.setup_for_execution(dg.build_init_resource_context())
    spec = _analyzer_call()
    server.script("drip:0.05", "drip:0.05")  # a byte every 0.05 s: no read waits long, the whole takes 15 s
    started = time.monotonic()
    with pytest.raises(ModelCallFailed, match="analyzer: timed out after 2 attempt"):
        model.complete(spec, AnalyzerJudgment)
    assert time.monotonic() - started < 3 and len(server.requests) == 2
    for body in ("gzip", "chunked", "close"):  # other wire shapes: read as the message, or retried as a connection
        server.script(body, "ok")
        assert model.complete(dataclasses.replace(spec, candidate_id=body), AnalyzerJudgment)[0].assumptions


def test_faults_mid_night_leave_error_records_and_a_whole_brief(tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    (tmp_path / "off").mkdir()
    baseline = _night(tmp_path / "off", ModelOff(), pack)
    def about(town_id: str, title: str):  # type: ignore[no-untyped-def]
        return lambda body: (alias(town_id) in json.dumps(body["messages"])
                             and body["output_config"]["format"]["schema"]["title"] == title)

    server.fail_when(about("town-alder", "AnalyzerJudgment"), "refuse")
    server.fail_when(about("town-birch", "AnalyzerJudgment"), "malformed")
    server.fail_when(about("town-cedar", "VerifierJudgment"), "529")
    server.fail_when(about("town-dogwood", "VerifierJudgment"), "truncate")
    server.fail_when(about("town-elm", "AnalyzerJudgment"), "html")  # a gateway's page, status 200
    server.fail_when(about("town-fir", "VerifierJudgment"), "notjson")
    server.fail_when(about("town-gum", "VerifierJudgment"), "nocontent")
    server.fail_when(about("town-hazel", "AnalyzerJudgment"), "fenced")  # readable: no error
    run = _night(tmp_path, _model(tmp_path, server), pack)
    model_errors = sorted((e.candidate_id, e.node) for e in run.errors if not e.fatal)
    assert model_errors == [("town-alder", "analyzer_model"), ("town-birch", "analyzer_model"),
                            ("town-cedar", "verifier_model"), ("town-dogwood", "verifier_model"),
                            ("town-elm", "analyzer_model"), ("town-fir", "verifier_model"),
                            ("town-gum", "verifier_model")]
    assert run.summary.errors == 0 and run.summary.model_errors == len(model_errors)
    assert _decisions(run) == _decisions(baseline)  # the code's verdicts stand for every candidate
    assert run.brief is not None and "## Run summary" in run.brief.markdown
    assert f"model errors {len(model_errors)}" in run.brief.markdown


def test_other_servers_answers_mid_night_leave_error_records_or_answers_and_a_whole_brief(
        tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    (tmp_path / "off").mkdir()
    baseline = _night(tmp_path / "off", ModelOff(), pack)

    def about(town_id: str, title: str) -> Callable[[dict[str, Any]], bool]:
        return lambda body: (alias(town_id) in json.dumps(body["messages"])
                             and body["output_config"]["format"]["schema"]["title"] == title)

    server.fail_when(about("town-alder", "AnalyzerJudgment"), 'content:"a bare string"')  # crashed the candidate
    server.fail_when(about("town-birch", "VerifierJudgment"), "usage:abc")  # crashed the candidate
    server.fail_when(about("town-cedar", "AnalyzerJudgment"), "429:nan")  # crashed the candidate
    server.fail_when(about("town-dogwood", "AnalyzerJudgment"), "tooluse")  # answered now
    server.fail_when(about("town-elm", "VerifierJudgment"), "sse")  # answered now
    server.fail_when(about("town-fir", "AnalyzerJudgment"), "usage:-99999")  # answered, billed its worst case
    run = _night(tmp_path, _model(tmp_path, server, timeout_s=5), pack)
    assert sorted((e.candidate_id, e.node) for e in run.errors) == [("town-alder", "analyzer_model"),
                                                                    ("town-cedar", "analyzer_model")]
    assert "HTTP 429 (rate_limit_error) after 3 attempt(s)" in " ".join(e.error for e in run.errors)
    assert _decisions(run) == _decisions(baseline) and run.summary.errors == 0
    assert run.brief is not None and "## Run summary" in run.brief.markdown and run.cost.usd > 0


def test_a_night_whose_model_calls_all_failed_says_so_first(tmp_path: Path, server: FakeAnthropic) -> None:
    server.fail_when(lambda body: True, "refuse")
    run = _night(tmp_path, _model(tmp_path, server), _source(tmp_path))
    assert run.brief is not None and run.summary.model_errors > 0
    first_lines = run.brief.markdown.splitlines()[:3]
    assert f"Model checks: on, but every model call failed tonight ({run.summary.model_errors} model errors)" \
        in "\n".join(first_lines)


def test_the_budget_ceiling_stops_calls_mid_night(tmp_path: Path) -> None:
    pack = _source(tmp_path)
    with FakeAnthropic(token_multiplier=400) as expensive:  # the bill runs far past the estimate
        run = _night(tmp_path, _model(tmp_path, expensive), pack)
        sent = len(expensive.requests)
    exhausted = [e for e in run.errors if "budget_exhausted" in e.error]
    assert exhausted, "the ceiling stopped no call"
    assert sent < 25  # fewer calls than a full night (12 + 12 + 1)
    store = ResultStore(path=str(tmp_path / "r.duckdb"))
    bills = [r["usd"] for r in store.model_calls_of("texas_housing", AS_OF)]
    spent = sum(bills)
    # Stops once over: only calls already in flight (at most one per candidate) can overshoot the ceiling.
    assert 0.75 < spent <= 0.75 + 12 * max(bills)
    assert sum(r["role"] == "verifier" for r in store.model_calls_of("texas_housing", AS_OF)) < 12
    assert run.brief is not None and len(run.routes) == 12  # every candidate still routed, by code


def test_a_ceiling_below_one_candidates_worst_case_says_so_beside_the_cap(tmp_path: Path,
                                                                            server: FakeAnthropic) -> None:
    """The cap never goes below one candidate; with a ceiling under that one's worst case the brief said only "so
    the cap is 1", and the verifier call the ceiling stopped was a bare model error."""
    pack = _source(tmp_path)
    raw = yaml.safe_load(pack.read_text())
    raw["caps"]["cost_ceiling_usd"] = 0.01  # a verifier call's worst case alone is about $0.02
    pack.write_text(yaml.safe_dump(raw))
    run = _night(tmp_path, _model(tmp_path, server), pack)
    assert run.brief is not None and len(run.analyses) == 1
    assert "so the cap is 1, though even one candidate's worst case is over the ceiling" in run.brief.markdown
    assert [e for e in run.errors if "budget_exhausted" in e.error]


def test_a_rerun_replays_without_requests_and_writes_the_same_brief(tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    first = _night(tmp_path, _model(tmp_path, server), pack, instance=instance)
    sent = len(server.requests)
    second = _night(tmp_path, _model(tmp_path, server), pack, instance=instance)
    assert len(server.requests) == sent
    assert _decisions(first) == _decisions(second)
    # The replayed night is billed nothing: its answers count apart, at what the first night was billed for them.
    assert first.cost.calls == sent and first.cost.replayed_calls == 0 and first.cost.usd > 0
    assert second.cost.calls == 0 and second.cost.usd == 0
    assert second.cost.replayed_calls == sent and second.cost.replayed_usd == pytest.approx(first.cost.usd)
    assert first.brief is not None and second.brief is not None
    assert f"Model: {sent} calls billed ${first.cost.usd:.4f}; model errors 0." in first.brief.markdown
    assert (f"Model: 0 calls billed $0.0000; {sent} answers replayed from the store (billed once before, "
            f"${first.cost.usd:.4f}, not again)") in second.brief.markdown
    # Everything but the cost line is the same brief.
    assert [x for x in first.brief.markdown.splitlines() if "Model:" not in x] == \
        [x for x in second.brief.markdown.splitlines() if "Model:" not in x]
    third = _night(tmp_path, _model(tmp_path, server, refresh=True), pack, instance=instance)
    assert len(server.requests) == 2 * sent and third.brief is not None
    assert third.cost.calls == sent and third.cost.replayed_calls == 0
    # A night re-run without the model: its records hold no model answer, so nothing is billed or replayed.
    fourth = _night(tmp_path, ModelOff(), pack, instance=instance)
    assert fourth.cost.calls == fourth.cost.replayed_calls == 0 and "Model:" not in (fourth.brief.markdown
                                                                                     if fourth.brief else "")


def test_past_nights_are_blinded_no_names_no_years(tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    _night(tmp_path, _model(tmp_path, server), pack)  # 2015 < the configured knowledge cutoff
    assert server.requests
    for request in server.requests:
        text = json.dumps(request.body["messages"])
        for town in TOWNS:
            assert not re.search(rf"\b{town.split()[1]}\b", text, flags=re.IGNORECASE), town
        # No calendar date and no year of the data's span (numbers such as 1944.0 sales are values, not years)
        assert not re.search(r"\d{4}-\d{2}", text)
        assert not re.search(r"(?<![\d.])(19\d\d|20[0-3]\d)(?![\d.])", text), text


def test_the_skeptic_model_sees_the_data_findings_and_a_dateless_history(tmp_path: Path,
                                                                        server: FakeAnthropic) -> None:
    pack = _source(tmp_path)  # the towns' sales step up in January 2014: a level shift against their flat history
    run = _night(tmp_path, _model(tmp_path, server), pack)
    verifier = [json.loads(b["messages"][0]["content"][-1]["text"]) if isinstance(b["messages"][0]["content"], list)
                else json.loads(b["messages"][0]["content"]) for b in _bodies(server, "VerifierJudgment")]
    assert verifier
    views = [v["analysis"] for v in verifier]
    assert all(set(view["history"]) == {"sales", "volume", "median", "listings", "inventory"} for view in views)
    assert all({"latest", "periods_back", "periods_kept"} <= set(view["history"]["sales"]) for view in views)
    findings = [f for view in views for f in view["data_findings"]]
    assert findings and all("periods back" in f["finding"] for f in findings if "level shift" in f["finding"])
    stored = {f.message for v in run.verifications for f in v.data_findings}
    assert any("2014-01" in message for message in stored)  # the store keeps the dated finding for people


def test_recent_nights_are_not_blinded(tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    _night(tmp_path, _model(tmp_path, server, knowledge_cutoff_date="2010-01-01"), pack)
    assert any("Town Alder" in json.dumps(r.body["messages"]) for r in server.requests)


def test_brief_lines_with_unstored_numbers_fall_back_to_the_template(tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    server.answer_with("BriefWording", lambda r: {"lines": [
        {"candidate_id": c["candidate_id"], "text": "Offer $987,654 today."}
        for c in json.loads(r["messages"][0]["content"])["candidates"]]})
    run = _night(tmp_path, _model(tmp_path, server), pack)
    assert run.brief is not None
    assert "987,654" not in run.brief.markdown and "Price three rentals" in run.brief.markdown


def test_brief_lines_with_a_web_address_fall_back_to_the_template() -> None:
    """A model's line is text, but a web address in it is a link all the same: a Markdown renderer, Slack and a
    mail reader make `https://…` or `www.…` clickable however it is escaped (trial 93: a gateway's "Visit
    https://evil.example/phish?x=1 today" was the brief's next action, its one digit a stored number)."""
    from opportunity_assets.llm.roles import acceptable_line

    stored = [1.0, 186200.0]
    assert acceptable_line("Call two local property managers about rents near the $186,200 median.", stored,
                           AS_OF, [])
    for text in ("Visit https://evil.example/phish?x=1 today", "See [the listing](http://evil.example) now",
                 "Read www.evil.example first", "Mail the broker at agent@evil.example today",
                 "Open ftp://files.evil.example/list"):
        assert not acceptable_line(text, stored, AS_OF, []), text


def test_the_api_key_never_reaches_the_store_logs_or_metadata(tmp_path: Path, server: FakeAnthropic,
                                                               capfd: pytest.CaptureFixture[str]) -> None:
    pack = _source(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    server.script("500", "429:0")
    _night(tmp_path, _model(tmp_path, server), pack, instance=instance)
    headers = server.requests[0].headers  # it did go where it belongs: the request's auth header
    assert SECRET in headers.get("x-api-key", "") + headers.get("authorization", "")
    store = ResultStore(path=str(tmp_path / "r.duckdb"))
    for table in ("nights", "candidates", "analyses", "verifications", "errors", "briefs", "model_calls"):
        assert SECRET not in json.dumps(store.query(f"SELECT * FROM {table}"), default=str), table
    records = [r for key in ("candidates", "analyses", "verifications", "brief")
               for r in instance.fetch_materializations(dg.AssetKey(key), limit=1000).records]
    assert records and SECRET not in json.dumps([str(r.event_log_entry) for r in records])
    assert SECRET not in repr(build_definitions(model=_model(tmp_path, server)).resources)
    out, err = capfd.readouterr()
    assert SECRET not in out + err


def test_batch_mode_sends_one_batch_per_role_at_half_price(tmp_path: Path) -> None:
    pack = _source(tmp_path)
    (tmp_path / "direct").mkdir()
    with FakeAnthropic() as direct_server:
        direct = _night(tmp_path / "direct", _model(tmp_path / "direct", direct_server), pack)
    with FakeAnthropic(batch_delay=0.3) as server:
        batched = _night(tmp_path, _model(tmp_path, server, batch=True, batch_poll_s=0.1), pack)
        posts = [r.path for r in server.requests]
    assert posts.count("/v1/messages/batches") == 25 and "/v1/messages" not in posts  # 25 items, no direct call
    assert _decisions(batched) == _decisions(direct)
    assert batched.cost.calls == direct.cost.calls == 25
    assert batched.cost.usd == pytest.approx(direct.cost.usd / 2, rel=0.05)


def test_a_gateway_without_message_batches_is_said_in_the_mode_line_and_asked_no_more(
        tmp_path: Path, server: FakeAnthropic) -> None:
    """`model: {batch: true}` against a gateway that serves no Message Batches API (its creation refused, 404): the
    calls go through the standard API, the rest of the night's without asking for a batch again, and the brief's
    mode line says they were billed at the full price and the fix (trial 99: each role's batch refused every night,
    its calls billed at full price with no word anywhere)."""
    import anthropic
    import httpx2 as httpx

    model = _model(tmp_path, server, batch=True, batch_poll_s=0.05)
    model.setup_for_execution(dg.build_init_resource_context())
    refused = []

    def create(**_: Any) -> Any:
        refused.append(1)
        request = httpx.Request("POST", f"{server.url}/v1/messages/batches")
        raise anthropic.NotFoundError("Not Found", response=httpx.Response(404, request=request),
                                      body={"type": "error", "error": {"type": "not_found_error", "message": "x"}})

    model._client.messages.batches.create = create  # type: ignore[union-attr, method-assign]
    for candidate in "ab":
        answer, reply = model.complete(dataclasses.replace(_analyzer_call(), payload={"x": candidate},
                                                           candidate_id=candidate), AnalyzerJudgment)
        assert answer.assumptions and not reply.replayed
    assert refused == [1] and len(server.requests) == 2
    assert model.mode_line().endswith(
        "; the server refused the Message Batches API (not_found_error), so the calls went through the standard API "
        "at its full price: set the settings' model batch to false, or use a gateway that serves batches")
    assert not any(ch.isdigit() for ch in model.mode_line())


def test_a_failed_batch_item_is_tried_once_through_the_standard_api(tmp_path: Path) -> None:
    pack = _source(tmp_path)
    seen: list[int] = []

    def first_elm_analysis(body: dict[str, Any]) -> bool:  # its batch item fails; the retry is answered
        if alias("town-elm") in json.dumps(body["messages"]) and \
                body["output_config"]["format"]["schema"]["title"] == "AnalyzerJudgment":
            seen.append(1)
            return len(seen) == 1
        return False

    with FakeAnthropic(batch_delay=0.1) as server:
        server.fail_when(first_elm_analysis, "529")
        run = _night(tmp_path, _model(tmp_path, server, batch=True, batch_poll_s=0.05), pack)
        direct = [r for r in server.requests if r.path == "/v1/messages"]
    assert len(direct) == 1 and alias("town-elm") in json.dumps(direct[0].body["messages"])
    assert not [e for e in run.errors if not e.fatal]  # the retry answered


def test_an_unreadable_line_in_a_batch_results_file_loses_only_its_own_item(tmp_path: Path) -> None:
    """One line of a results file that is no JSON (a gateway's hiccup) made the SDK's decoder raise: the whole
    batch went again through the standard API, every item the server had answered paid twice, once unrecorded."""
    pack = _source(tmp_path)

    def elm_analysis(body: dict[str, Any]) -> bool:  # its batch line is unreadable; a direct request is answered
        return alias("town-elm") in json.dumps(body["messages"]) and \
            body["output_config"]["format"]["schema"]["title"] == "AnalyzerJudgment"

    with FakeAnthropic(batch_delay=0.1) as server:
        server.fail_when(elm_analysis, "unreadable")
        run = _night(tmp_path, _model(tmp_path, server, batch=True, batch_poll_s=0.05), pack)
        direct = [r for r in server.requests if r.path == "/v1/messages"]
    assert len(direct) == 1 and elm_analysis(direct[0].body)
    assert not [e for e in run.errors if not e.fatal]
    (elm,) = ResultStore(path=str(tmp_path / "r.duckdb")).query(
        "SELECT input_tokens, output_tokens, attempts FROM model_calls WHERE candidate_id = 'town-elm' "
        "AND role = 'analyzer'")
    # the lost batch answer is billed at its worst case (2500 in, 600 out: the pack's default), then the retry's own
    assert elm["attempts"] == 2 and elm["input_tokens"] > 2500 and elm["output_tokens"] > 600


def test_an_item_a_batch_results_file_holds_twice_is_no_answer_not_its_last_line() -> None:
    """A results file that answers one custom id twice, the second line contradicting the first: the later line
    was taken, silently (trial 93: a gateway's second line turned every skeptic's note into a rejection). Neither is
    guessed at, as with two JSON objects in one answer: the item is lost, billed at its worst case and asked again."""
    from resources.model import _LOST_ITEM, _batch_outcome, _batch_results

    def line(custom_id: str, effect: str) -> str:
        return json.dumps({"custom_id": custom_id, "result": {"type": "succeeded", "message": {"effect": effect}}})

    class Decoder:
        class http_response:  # the SDK decoder's attribute
            @staticmethod
            def iter_lines() -> list[str]:
                return [line("c0", "note"), line("c1", "note"), line("c0", "reject")]

        def close(self) -> None:
            pass

    results = _batch_results(Decoder())
    assert _batch_outcome(results.get("c0")) == _LOST_ITEM
    assert _batch_outcome(results.get("c1")) != _LOST_ITEM


@pytest.mark.parametrize("results", [False, True])
def test_a_failed_poll_of_a_running_batch_is_polled_again_not_given_up(tmp_path: Path, results: bool) -> None:
    """A 529 or 500 on one poll gave the batch up: every item went again through the standard API while the batch
    ran on at the server, answered and billed twice. So did one on the fetch of an ended batch's results."""
    pack = _source(tmp_path)
    with FakeAnthropic(batch_delay=0.2) as server:
        server.fail_polls(529, 500, results=results)
        run = _night(tmp_path, _model(tmp_path, server, batch=True, batch_poll_s=0.05), pack)
        posts = [r.path for r in server.requests]
    assert "/v1/messages" not in posts and posts.count("/v1/messages/batches") == 25
    assert not [e for e in run.errors if not e.fatal] and run.cost.calls == 25


@pytest.mark.parametrize(("status", "fix"), [("401", "set a valid ANTHROPIC_API_KEY"),
                                             ("403", "give the key access to it"),
                                             ("404", "name a served model in the pack's models"),
                                             ("400", "refused this model's requests as invalid")])
def test_a_refused_key_or_model_stops_its_calls_and_the_brief_says_why_once(
        tmp_path: Path, server: FakeAnthropic, status: str, fix: str) -> None:
    pack = _source(tmp_path)
    (tmp_path / "off").mkdir()
    baseline = _night(tmp_path / "off", ModelOff(), pack)
    server.fail_when(lambda body: True, status)
    run = _night(tmp_path, _model(tmp_path, server), pack)
    # No retry can change the answer: one request at most per call (the calls in flight at the first refusal), and
    # after a refused key no other model is asked either (the 12 analyzer calls in flight, then the brief's run); a
    # 400 is asked again with the schema in the prompt, and every call of this night is in flight at its third.
    assert len(server.requests) <= {"401": 13, "400": 50}.get(status, 25)
    assert run.summary.model_errors == 25 and _decisions(run) == _decisions(baseline)
    assert run.brief is not None
    said = [line for line in plain(run.brief.markdown).splitlines() if fix in line]
    assert len(said) == 1 and said[0].startswith("- Model calls stopped tonight (the "), run.brief.markdown
    assert not nights_unsupported(run)
    assert SECRET not in run.brief.markdown + json.dumps([e.error for e in run.errors])


def test_a_brief_wording_that_failed_is_not_said_again_by_the_re_run_that_got_it(
        tmp_path: Path, server: FakeAnthropic) -> None:
    """The brief's model error is the brief step's own verdict on its pass, as its `brief` errors are: a re-run of
    the night whose wording call is answered says nothing of the earlier failure (trial 99: a key refused from the
    fifth call on, then a re-run after the key was fixed, whose every call was answered, said "Model calls stopped
    tonight (the brief's): the API refused the key" and "model errors 1", from the first pass's record)."""
    pack = _source(tmp_path)
    down = {"brief": True}
    server.fail_when(lambda body: down["brief"] and "BriefWording" in json.dumps(body), "401")
    first = _night(tmp_path, _model(tmp_path, server), pack)
    assert first.brief is not None and "Model calls stopped tonight (the brief's)" in plain(first.brief.markdown)
    down["brief"] = False
    again = _night(tmp_path, _model(tmp_path, server), pack)
    assert again.brief is not None and "stopped tonight" not in plain(again.brief.markdown), again.brief.markdown
    assert not [e for e in again.errors if e.node == "brief_model"] and again.summary.model_errors == 0


@pytest.mark.parametrize("status", ["401", "403", "404"])
def test_after_a_refused_key_or_model_no_more_requests_are_sent(tmp_path: Path, server: FakeAnthropic,
                                                                 status: str) -> None:
    model = _model(tmp_path, server)
    model.setup_for_execution(dg.build_init_resource_context())
    server.fail_when(lambda body: True, status)
    said = []
    for candidate in ("a", "b", "c"):
        spec = CallSpec(role="analyzer", model="claude-haiku-5-5", prompt=load_prompt("analyzer"),
                        payload={"x": candidate}, output_type=AnalyzerJudgment, max_tokens=600,
                        max_input_tokens=2500, domain="d", as_of=AS_OF, candidate_id=candidate, ceiling_usd=1.0)
        with pytest.raises(ModelCallFailed) as failed:
            model.complete(spec, AnalyzerJudgment)
        said.append(str(failed.value))
    assert len(server.requests) == 1
    assert said[0].startswith(f"analyzer: HTTP {status} (") and "; stopped tonight: " in said[0]
    assert said[1] == said[2] == "analyzer: not sent; stopped tonight: " + said[0].split("; stopped tonight: ")[1]
    assert SECRET not in "".join(said)


def test_requests_refused_as_invalid_three_times_running_stop_the_model_one_between_answers_does_not(
        tmp_path: Path, server: FakeAnthropic) -> None:
    """A 400 may be one request's fault (one candidate's prompt too large): it stops nothing. The same model's
    requests refused as invalid three times running, no answer between, are every candidate's: its calls stop
    for the night, saying how to fix it, and no further request is sent."""
    model = _model(tmp_path, server)
    model.setup_for_execution(dg.build_init_resource_context())
    refused = {"a", "c", "d", "e", "f"}
    server.fail_when(lambda body: json.loads(body["messages"][0]["content"])["x"] in refused, "400")
    said = {c: _said(model, c) for c in "abcdefg"}
    assert said["b"] == "answered" and "stopped tonight" not in said["a"] + said["c"] + said["d"]
    assert said["e"].startswith("analyzer: HTTP 400 (") and said["e"].endswith(
        "; stopped tonight: the API refused this model's requests as invalid three times running, with no answer "
        "between: fix the pack's models (max_tokens, max_input_tokens, the model's name) or the gateway at the base "
        "URL")
    assert said["f"] == said["g"] == "analyzer: not sent; stopped tonight: " + said["e"].split("stopped tonight: ")[1]
    sent = [json.loads(r.body["messages"][0]["content"])["x"] for r in server.requests]
    assert "f" not in sent and "g" not in sent and not any(ch.isdigit() for ch in said["e"].split("tonight: ")[1])


def _said(model: AnthropicModel, candidate: str, **call: Any) -> str:
    """What one analyzer call for `candidate` (its `call` fields changed) came to: "answered", or the failure's
    words."""
    try:
        model.complete(dataclasses.replace(_analyzer_call(), payload={"x": candidate}, candidate_id=candidate, **call),
                       AnalyzerJudgment)
    except ModelCallFailed as failed:
        return str(failed)
    return "answered"


@pytest.mark.parametrize("status", ["429", "529"])
def test_calls_refused_as_busy_after_every_retry_three_times_running_stop_the_model(
        tmp_path: Path, server: FakeAnthropic, status: str) -> None:
    """A gateway that rate-limits or is overloaded all night: one call that outlasts its retries stops nothing,
    three running with no answer between do, saying why and how to fix it, and no further request is sent (trial
    81: every call of the night was sent three times into a gateway that answered 429 to all of them)."""
    model = _model(tmp_path, server)
    model.setup_for_execution(dg.build_init_resource_context())
    busy = {"a", "c", "d", "e", "f", "g"}
    server.fail_when(lambda body: json.loads(body["messages"][0]["content"])["x"] in busy, status)
    said = {c: _said(model, c) for c in "abcdefg"}
    assert said["b"] == "answered" and "stopped tonight" not in said["a"] + said["c"] + said["d"]
    assert said["e"].startswith(f"analyzer: HTTP {status} (") and "; stopped tonight: the server refused three " \
        "of this model's calls running as busy" in said["e"]
    assert said["f"] == said["g"] == "analyzer: not sent; stopped tonight: " + said["e"].split("stopped tonight: ")[1]
    sent = [json.loads(r.body["messages"][0]["content"])["x"] for r in server.requests]
    assert sent.count("e") == 3 and "f" not in sent and "g" not in sent
    assert not any(ch.isdigit() for ch in said["e"].split("tonight: ")[1])


@pytest.mark.parametrize("reply", [ERROR_200, "nocontent", "raw:200|text/html|<html>proxy</html>"])
def test_replies_that_hold_no_answer_three_times_running_stop_the_model(
        tmp_path: Path, server: FakeAnthropic, reply: str) -> None:
    """A gateway whose every reply holds no answer (an API error sent with status 200, a message of no content, a
    proxy's page): three calls running so, each also after its one retry, stop the model's calls, saying why and
    the fix (trial 99: each call of the night was sent twice, the status-200 errors billed at their worst case,
    $0.69 for no answer, and the brief said only "every model call failed tonight (61 model errors)")."""
    model = _model(tmp_path, server)
    model.setup_for_execution(dg.build_init_resource_context())
    empty = {"a", "c", "d", "e", "f", "g"}
    server.fail_when(lambda body: json.loads(body["messages"][0]["content"])["x"] in empty, reply)
    said = {c: _said(model, c) for c in "abcdefg"}
    assert said["b"] == "answered" and "stopped tonight" not in said["a"] + said["c"] + said["d"]
    assert said["e"].startswith("analyzer: ") and said["e"].endswith(
        ", also after one retry; stopped tonight: the server sent no answer to three of this model's calls running, "
        "each also after one retry (an API error sent as a success, a message with no text, or a body that is no "
        "message): run the night again later (its answers are kept), or fix the gateway at the base URL")
    assert said["f"] == said["g"] == "analyzer: not sent; stopped tonight: " + said["e"].split("stopped tonight: ")[1]
    sent = [json.loads(r.body["messages"][0]["content"])["x"] for r in server.requests]
    assert sent.count("e") == 2 and "f" not in sent and "g" not in sent
    if reply == "nocontent":
        assert said["a"] == "analyzer: the message holds no answer (no content, or text of only whitespace), also " \
            "after one retry"


def test_calls_that_time_out_after_every_retry_three_times_running_stop_the_model(
        tmp_path: Path, server: FakeAnthropic) -> None:
    """A gateway that never answers within the timeout: each lost attempt is billed at its worst case, so three
    calls running that got no answer stop the model's calls, saying the fix (trial 81: every call of the night sent
    three times, billed past a dollar for no answer, and the brief said only how many calls failed)."""
    model = _model(tmp_path, server, timeout_s=0.3)
    model.setup_for_execution(dg.build_init_resource_context())
    server.fail_when(lambda body: True, "slow:1")
    said = [_said(model, candidate, ceiling_usd=100.0) for candidate in "abcde"]
    assert "answered" not in said and "stopped tonight" not in said[0] + said[1]
    assert said[2].startswith("analyzer: timed out after 3 attempt(s)") and said[2].endswith(
        "; stopped tonight: the server answered none of three of this model's calls running within the timeout, "
        "after every retry: raise the settings' model timeout_s, or fix the gateway at the base URL")
    assert said[3] == said[4] == "analyzer: not sent; stopped tonight: " + said[2].split("stopped tonight: ")[1]
    assert len(server.requests) == 9


def test_calls_whose_connection_drops_mid_answer_three_times_running_stop_the_model_without_a_timeout_fix(
        tmp_path: Path, server: FakeAnthropic) -> None:
    """A gateway that closes every connection mid-answer: three calls running so stop the model's calls, saying the
    fix for a dropped connection, not a longer timeout (trial 99: "raise the settings' model timeout_s")."""
    model = _model(tmp_path, server)
    model.setup_for_execution(dg.build_init_resource_context())
    server.fail_when(lambda body: True, "close")
    said = [_said(model, candidate, ceiling_usd=100.0) for candidate in "abcd"]
    assert "answered" not in said and "stopped tonight" not in said[0] + said[1]
    assert said[2].endswith("; stopped tonight: the server dropped the connection mid-answer on three of this "
                            "model's calls running, after every retry: fix the gateway or the network at the base URL "
                            "(a longer timeout will not help), or run the night again later (its answers are kept)")
    assert "timeout_s" not in said[2] and said[3] == "analyzer: not sent; stopped tonight: " + \
        said[2].split("stopped tonight: ")[1]


def test_a_model_unknown_to_the_server_stops_only_its_role(tmp_path: Path, server: FakeAnthropic) -> None:
    server.fail_when(lambda body: body["model"] == "claude-sonnet-5-5", "404")  # the verifier's model
    # one candidate's analysis answered at once, the others' a second later: its verifier's 404 has come back
    # before any other verifier call is sent (unstaggered, all 12 could be in flight together: a race)
    server.fail_when(lambda body: alias("town-alder") not in json.dumps(body["messages"]), "slow:1")
    run = _night(tmp_path, _model(tmp_path, server), _source(tmp_path))
    assert {e.node for e in run.errors} == {"verifier_model"} and len(run.errors) == 12
    assert len([r for r in server.requests if r.body["model"] == "claude-sonnet-5-5"]) == 1
    assert all(any(a.startswith("(model) ") for a in a_.assumptions) for a_ in run.analyses)  # the analyzer answered
    assert run.brief is not None and run.brief.markdown.count("Model calls stopped tonight") == 1
    # the stop names the role it held (trial 93: "this model" alone, with three roles)
    assert "Model calls stopped tonight (the verifier's): " in plain(run.brief.markdown), run.brief.markdown


def test_a_server_that_refuses_the_output_config_is_asked_for_the_schema_in_the_prompt(
        tmp_path: Path, server: FakeAnthropic) -> None:
    server.fail_when(lambda body: "output_config" in body, "400")  # a gateway or an older compatible server
    run = _night(tmp_path, _model(tmp_path, server), _source(tmp_path))
    assert not run.errors and all(any(a.startswith("(model) ") for a in a_.assumptions) for a_ in run.analyses)
    # Noticed at the first refusal: only the analyzer calls already in flight, and the brief run's first call, were
    # refused; every verifier call went with the schema in the prompt at once.
    configured = [r.body for r in server.requests if "output_config" in r.body]
    assert len(configured) <= 13 and {b["model"] for b in configured} == {"claude-haiku-5-5"}
    prompted = [r.body for r in server.requests if "output_config" not in r.body]
    assert len(prompted) == 25 and all('"title": "' in b["system"][-1]["text"] for b in prompted)
    assert run.model_checks.startswith("on") and "refused or ignored the JSON-schema output config" in run.model_checks


def test_a_server_that_ignores_the_output_config_is_asked_for_the_schema_in_the_prompt(
        tmp_path: Path, server: FakeAnthropic) -> None:
    server.fail_when(lambda body: "output_config" in body, "prose")  # drops the unknown parameter: prose comes back
    run = _night(tmp_path, _model(tmp_path, server), _source(tmp_path))  # every model call failed before
    assert not run.errors and all(any(a.startswith("(model) ") for a in a_.assumptions) for a_ in run.analyses)
    configured = [r.body for r in server.requests if "output_config" in r.body]
    assert len(configured) <= 13 and {b["model"] for b in configured} == {"claude-haiku-5-5"}
    assert "refused or ignored the JSON-schema output config" in run.model_checks


def test_a_schema_in_the_prompt_is_still_validated_by_code(tmp_path: Path, server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    (tmp_path / "off").mkdir()
    baseline = _night(tmp_path / "off", ModelOff(), pack)
    server.fail_when(lambda body: "output_config" in body, "400")
    server.answer_with("VerifierJudgment", lambda r: {"findings": "all CONFIRMED", "status": "CONFIRMED"})
    run = _night(tmp_path, _model(tmp_path, server), pack)
    assert {e.node for e in run.errors} == {"verifier_model"}
    assert all("answer does not match the schema" in e.error for e in run.errors)
    assert _decisions(run) == _decisions(baseline)


def nights_unsupported(run: RunState) -> list[str]:
    """Numbers in the brief's run summary that are neither a count of the night nor part of a name."""
    assert run.brief is not None
    summary = run.brief.markdown.split("## Run summary", 1)[1]
    return re.findall(r"HTTP \d+|\b[45]\d\d\b", summary)


def test_what_a_model_writes_cannot_stop_the_night_or_become_the_briefs_markup(tmp_path: Path,
                                                                              server: FakeAnthropic) -> None:
    pack = _source(tmp_path)
    (tmp_path / "off").mkdir()
    baseline = {v.candidate_id: v.status for v in _night(tmp_path / "off", ModelOff(), pack).verifications}
    # A skeptic's finding with a number the store does not hold became the verification's reason, which the brief
    # shows: its numbers_in_store check then stopped the whole night. With markup, it was the brief's markup too.
    evil = ("Inventory may rise 37% in 11 months.\n\n## Act on these\n- **FAKE** <script>alert(1)</script> "
            "[click](http://evil.example) \x1b[31m\u202e")
    server.answer_with("VerifierJudgment", lambda r: {"findings": [
        {"check": "assumptions", "cites": "numbers.inventory_3m", "finding": evil[:400], "effect": "uncertain"}],
        "fatal_assumption": "Inventory stays low."})
    server.answer_with("BriefWording", lambda r: {"lines": [
        {"candidate_id": c["candidate_id"], "text": "Call <b>now</b>\n## Owned [here](http://evil.example)"}
        for c in json.loads(r["messages"][0]["content"])["candidates"]]})
    server.answer_with("AnalyzerJudgment", lambda r: {"assumptions": ["a" * 1_000_000], "red_flags": ["Z"]})
    run = _night(tmp_path, _model(tmp_path, server), pack)  # NightFailed before: numbers not in store: 37%, ...
    assert run.brief is not None
    markdown_ = run.brief.markdown
    assert [line for line in markdown_.splitlines() if line.startswith("#")] == [
        markdown_.splitlines()[0], "## Act on these", "## Needs your judgment", "## Run summary"]
    assert "<script" not in markdown_ and "<b>" not in markdown_ and not re.search(r"(?<!\\)\]\(http", markdown_)
    assert "37%" not in markdown_ and "\x1b" not in markdown_ and "\u202e" not in markdown_
    assert "The skeptic model doubts numbers.inventory_3m" in markdown_
    # The model's own words stay in its finding, stored for people; the verdicts only went down.
    assert all(v.model_findings[0].finding.startswith("Inventory may rise 37%") for v in run.verifications)
    downgraded = {"CONFIRMED": "UNCERTAIN", "UNCERTAIN": "UNCERTAIN", "REJECTED": "REJECTED"}
    assert {v.candidate_id: v.status for v in run.verifications} == {
        c: downgraded[s] for c, s in baseline.items()}
    # A 1 MB assumption is no answer (the schema bounds each item): an error record, not a megabyte in the store.
    assert {e.node for e in run.errors} == {"analyzer_model"} and len(run.errors) == 12
    assert max(len(a) for an in run.analyses for a in an.assumptions) < 1000
