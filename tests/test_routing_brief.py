"""The router's ordered rules, and the morning brief: word limit, "N more", empty sections, the number check."""

from __future__ import annotations

import dataclasses
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief import render
from opportunity_assets.brief.render import WORD_LIMIT, NightRecords, count_words, render_brief
from opportunity_assets.brief.routing import RULES, route
from opportunity_assets.candidates.logic import scan
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.formatting import HUGE, TINY, format_value, signed, significant
from opportunity_assets.grounding import numeric_leaves, unsupported_numbers
from opportunity_assets.outcomes.logic import format_edge, format_outcome
from opportunity_assets.records import (
    Analysis,
    Brief,
    Cost,
    Destination,
    Perturbation,
    RunError,
    Status,
    Summary,
    Verdict,
    Verification,
)
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications.logic import verify
from tests.conftest import month_rows, write_csv, write_pack

AS_OF = date(2015, 1, 30)


# ---- routing -----------------------------------------------------------------------------------------------
def _analysis(verdict: Verdict, cid: str = "x") -> Analysis:
    score = {Verdict.STRONG: 80.0, Verdict.MARGINAL: 60.0, Verdict.SKIP: 20.0}.get(verdict)
    return Analysis(as_of=AS_OF, candidate_id=cid, numbers={}, calculation=[], components={}, score=score,
                    verdict=verdict, reasoning="", assumptions=[], red_flags=[])


def _verification(status: Status, cid: str = "x", as_of: date = AS_OF) -> Verification:
    return Verification(as_of=as_of, candidate_id=cid, status=status, checks={}, failed_checks=[], reason="",
                        fatal_assumption=None)


def _expected(verdict: Verdict, status: Status) -> tuple[Destination, str, str]:
    if verdict == Verdict.INSUFFICIENT_DATA:
        return Destination.ARCHIVE, "data_gap", "insufficient_data"
    if status == Status.REJECTED:
        return Destination.ARCHIVE, "failed_verification", "rejected"
    if status == Status.UNCERTAIN:
        return Destination.BRIEF, "needs_your_judgment", "uncertain"
    if verdict == Verdict.STRONG:
        return Destination.BRIEF, "act_on_these", "strong_confirmed"
    return Destination.ARCHIVE, "below_threshold", "default"


@pytest.mark.parametrize("status", list(Status))
@pytest.mark.parametrize("verdict", list(Verdict))
def test_route_every_verdict_and_status(verdict: Verdict, status: Status) -> None:
    routed = route(_analysis(verdict), _verification(status))
    assert (routed.destination, routed.section_or_tag, routed.rule) == _expected(verdict, status)
    assert routed.candidate_id == "x"
    assert routed.as_of == AS_OF


def test_route_table_is_complete() -> None:
    """The 12 combinations land in exactly the five documented places."""
    places = {_expected(v, s)[:2] for v in Verdict for s in Status}
    assert places == {(Destination.ARCHIVE, "data_gap"), (Destination.ARCHIVE, "failed_verification"),
                      (Destination.BRIEF, "needs_your_judgment"), (Destination.BRIEF, "act_on_these"),
                      (Destination.ARCHIVE, "below_threshold")}
    assert [r.name for r in RULES] == ["insufficient_data", "rejected", "uncertain", "strong_confirmed", "default"]


def test_route_refuses_records_of_different_candidates() -> None:
    with pytest.raises(ValueError, match="not the same candidate"):
        route(_analysis(Verdict.STRONG, "a"), _verification(Status.CONFIRMED, "b"))
    with pytest.raises(ValueError, match="not the same candidate"):
        route(_analysis(Verdict.STRONG), _verification(Status.CONFIRMED, as_of=date(2015, 1, 31)))


# ---- a night of records ------------------------------------------------------------------------------------
def _strong(name: str, bump: int) -> list[dict[str, Any]]:
    return month_rows(name, sales=150.0 + bump, overrides={(2014, m): {"sales": 200.0 + 3 * bump, "inventory": 4.0}
                                                           for m in range(1, 13)})


def _town(i: int) -> str:
    return f"Town {chr(65 + i // 26)}{chr(65 + i % 26)}"


def _night(directory: Path, rows: list[dict[str, Any]], **changes: Any) -> tuple[CriteriaPack, NightRecords]:
    source = write_csv(directory / "source.csv", rows)
    pack = load_criteria(write_pack(directory, source, **changes))
    snapshot = read_snapshot(pack, AS_OF)
    found, report = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    going_on = [c for c in found if c.went_on]
    analyses = [analyze(pack, c) for c in going_on]
    verifications = [verify(pack, c, a) for c, a in zip(going_on, analyses, strict=True)]
    routes = [route(a, v) for a, v in zip(analyses, verifications, strict=True)]
    return pack, NightRecords(as_of=AS_OF, candidates=going_on, analyses=analyses, verifications=verifications,
                              routes=routes, errors=[], scan_report=dataclasses.asdict(report))


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> tuple[CriteriaPack, NightRecords]:
    """45 STRONG, CONFIRMED markets and 3 one-month spikes: far more than 400 words if all were listed."""
    rows = [row for i in range(45) for row in _strong(_town(i), i)]
    rows += [row for i in range(3) for row in month_rows(f"Spike {chr(65 + i)}",
                                                         overrides={(2014, 11): {"sales": 1500.0 + i}})]
    return _night(tmp_path_factory.mktemp("crowded"), rows, **{"caps.max_candidates": 60})


def _items(markdown: str, section: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index(section) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [line for line in lines[start:end] if line.startswith("- **")]


def test_crowded_night_is_routed_as_expected(crowded: tuple[CriteriaPack, NightRecords]) -> None:
    _, night = crowded
    tags = [r.section_or_tag for r in night.routes]
    assert tags.count("act_on_these") == 45
    assert tags.count("needs_your_judgment") == 3


def test_brief_stays_under_the_word_limit_and_names_what_is_left_out(
        crowded: tuple[CriteriaPack, NightRecords]) -> None:
    pack, night = crowded
    brief, summary = render_brief(pack, night, "off")
    assert brief.words == count_words(brief.markdown)
    assert brief.words < WORD_LIMIT
    act = _items(brief.markdown, "## Act on these")
    judge = _items(brief.markdown, "## Needs your judgment")
    assert act, "the best items are still shown"
    assert len(act) < 45
    # The pointer names the stored total (a number the store holds), not the unstored remainder.
    assert "- more of the 45 in the store: `opportunity archive --section act_on_these`" in brief.markdown
    if len(judge) < 3:
        assert "of the 3 in the store: `opportunity archive --section needs_your_judgment`" in brief.markdown
    assert summary.by_tag["act_on_these"] == 45
    assert summary.by_tag["needs_your_judgment"] == 3
    assert summary.analyzed == 48
    assert "Scanned 48; passed filters 48; capped 0; analyzed 48; errors 0." in brief.markdown
    for line in act + judge:  # whole items, never a sentence cut in half
        assert line.rstrip().endswith(".")


def test_brief_shows_best_scores_first(crowded: tuple[CriteriaPack, NightRecords]) -> None:
    pack, night = crowded
    brief, _ = render_brief(pack, night, "off")
    scores = {a.candidate_id: a.score for a in night.analyses}
    names = {c.id: c.name for c in night.candidates}
    shown = [line.split("**")[1] for line in _items(brief.markdown, "## Act on these")]
    act_ids = sorted((r.candidate_id for r in night.routes if r.section_or_tag == "act_on_these"),
                     key=lambda i: (-(scores[i] or 0.0), i))
    assert shown == [names[i] for i in act_ids[:len(shown)]]


def _stored_numbers(directory: Path, pack: CriteriaPack, night: NightRecords, brief: Brief,
                    summary: Summary) -> list[float]:
    """The numbers the blocking `numbers_in_store` check holds a brief against, the night written to a store as
    the brief asset writes it."""
    from opportunity_assets.brief.step import stored_numbers
    from resources.store import ResultStore

    store = ResultStore(path=str(directory / "results.duckdb"))
    store.write_scan(pack.domain, AS_OF, run_id="test", criteria_fingerprint=pack.fingerprint,
                     criteria=pack.model_dump_json(), anchor_period=date(2014, 12, 1),
                     scan_report=night.scan_report, candidates=night.candidates, quarantined=[])
    store.write_stage(pack.domain, analyses=night.analyses, verifications=night.verifications)
    store.write_routing(pack.domain, AS_OF, routes=night.routes, brief=brief, summary=summary, cost=Cost(),
                        model_mode="off")
    return stored_numbers(store, pack, AS_OF)


def test_every_number_in_the_brief_is_in_the_store(crowded: tuple[CriteriaPack, NightRecords],
                                                   tmp_path: Path) -> None:
    """The blocking `numbers_in_store` check, run as the brief asset runs it, over a crowded night."""
    pack, night = crowded
    brief, summary = render_brief(pack, night, "off")
    stored = _stored_numbers(tmp_path, pack, night, brief, summary)
    assert unsupported_numbers(brief.markdown, stored, AS_OF) == []


def test_a_count_in_what_would_resolve_a_doubt_is_in_the_store(tmp_path: Path) -> None:
    """Trial 41: a column every country carries copied, "confirm 1974 uis with the source: it matches Austria,
    Belgium, Canada and 13 more's", quoted by the brief as what would resolve the doubt, stopped the night at
    `numbers_in_store` ("numbers not in store: 13"): the count is code's, written into the stored verification. A
    verification's own texts (its reason and what would resolve it) are stored as written, and so are their
    numbers; a number in neither is still named."""
    pack, night = _night(tmp_path, [row for i in range(3) for row in _strong(_town(i), i)])
    doubted = night.verifications[0].model_copy(update={
        "status": Status.UNCERTAIN, "reason": "the data is doubted: sales equals 16 other entities'",
        "to_resolve": "confirm 2014-11 sales with the source: it matches Town AB, Town AC, Town AD and 13 more's"})
    verifications = [doubted, *night.verifications[1:]]
    routes = [route(a, v) for a, v in zip(night.analyses, verifications, strict=True)]
    night = dataclasses.replace(night, verifications=verifications, routes=routes)
    assert routes[0].section_or_tag == "needs_your_judgment"
    brief, summary = render_brief(pack, night, "off")
    assert "and 13 more's" in brief.markdown
    stored = _stored_numbers(tmp_path, pack, night, brief, summary)
    assert unsupported_numbers(brief.markdown, stored, AS_OF) == []
    assert unsupported_numbers(brief.markdown + " and 4711 more", stored, AS_OF) == ["4711"]


def test_a_doubt_that_decided_nothing_is_not_why_a_candidate_needs_judgment(tmp_path: Path) -> None:
    """Trial 42: EWR-LAX, MARGINAL and made UNCERTAIN by a fragile verdict (late_share without 2013-W32 turns it
    STRONG), carried a spike finding of `doubt` effect, which only a STRONG verdict takes; its reason read "doubted
    data: flights 104 in 2013-W27 ...; to resolve: check whether the 2013-W32 figure of late_share is a one-off":
    a doubt the status never took beside what would resolve another. A STRONG one's doubt is still its reason, and
    a rejection is told by what rejected it."""
    from opportunity_assets.reasons import candidate_rows
    from opportunity_assets.records import DataFinding

    pack, night = _night(tmp_path, [row for i in range(2) for row in _strong(_town(i), i)])
    spike = DataFinding(rule="spike", check="inputs", column="sales", periods=["2014-06"], periods_back=[5],
                        value=104.0, size=10.3, effect="doubt", message="sales 104 in 2014-06 ...",
                        to_resolve="confirm 2014-06 sales with the source")
    fragile = night.verifications[0].model_copy(update={
        "status": Status.UNCERTAIN, "fatal_assumption": "sales_3m (+5%)", "data_findings": [spike],
        "to_resolve": "confirm sales_3m with the next release or a second source."})
    marginal = night.analyses[0].model_copy(update={"verdict": Verdict.MARGINAL})

    def why(analysis: Analysis, verification: Verification, tag: str) -> str:
        route_ = night.routes[0].model_copy(update={"section_or_tag": tag})
        return candidate_rows(pack, night.candidates[:1], [analysis], [verification], [route_])[0].reason

    assert why(marginal, fragile, "needs_your_judgment") == (
        "UNCERTAIN, fragile: sales_3m (+5%) flips it; to resolve: confirm sales_3m with the next release or a "
        "second source")
    assert why(night.analyses[0], fragile, "needs_your_judgment").startswith(
        "UNCERTAIN, doubted data: sales 104 in 2014-06: 10.3 MADs, one-period spike or drop; to resolve:")
    rejected = fragile.model_copy(update={"status": Status.REJECTED, "failed_checks": ["arithmetic"],
                                          "reason": "Score recomputed as 41.0."})
    assert why(night.analyses[0], rejected, "failed_verification") == \
        "REJECTED, failed arithmetic: Score recomputed as 41.0"


def test_a_score_is_written_on_its_own_side_of_the_thresholds(tmp_path: Path) -> None:
    """Trial 47: "breaches_4q without 2012-Q4 turns it MARGINAL (score → 60.0)" under a strong of 60: the trial
    scored 59.958, written to one decimal on the threshold it is said to be below. A score is written to one
    decimal, or to as many more as keep it on its side of strong and marginal, in the brief's lines, the archive's
    reasons and the verifier's findings alike; the brief's number check reads it back from the stored score."""
    from opportunity_assets.formatting import format_score
    from opportunity_assets.reasons import candidate_rows
    from opportunity_assets.records import Perturbation

    assert format_score(59.958, (60.0, 40.0)) == "59.96" and format_score(59.958) == "60.0"
    assert format_score(69.99996, (70.0, 55.0)) == "69.99996" and format_score(54.96, (70.0, 55.0)) == "54.96"
    assert format_score(70.04, (70.0, 55.0)) == "70.0" and format_score(83.9, (70.0, 55.0)) == "83.9"
    pack, night = _night(tmp_path, [row for i in range(2) for row in _strong(_town(i), i)])
    strong = night.analyses[0].model_copy(update={"score": 70.02})
    trial = Perturbation(input="sales_3m", change="without 2014-11", relative_change=None, score=69.958,
                         verdict=Verdict.MARGINAL, flips=True)
    fragile = night.verifications[0].model_copy(update={
        "status": Status.UNCERTAIN, "fatal_assumption": "sales_3m (without 2014-11)", "sensitivity": [trial]})
    judged = dataclasses.replace(night, analyses=[strong, *night.analyses[1:]],
                                 verifications=[fragile, *night.verifications[1:]],
                                 routes=[route(strong, fragile), *night.routes[1:]])
    brief, summary = render_brief(pack, judged, "off")
    (line,) = _items(brief.markdown, "## Needs your judgment")
    assert "(STRONG 70.0): sales_3m without 2014-11 turns it MARGINAL (score → 69.96)" in line
    assert unsupported_numbers(brief.markdown, _stored_numbers(tmp_path, pack, judged, brief, summary), AS_OF) == []
    marginal = strong.model_copy(update={"verdict": Verdict.MARGINAL, "score": 69.958})
    below = night.routes[0].model_copy(update={"section_or_tag": "below_threshold"})
    (row,) = candidate_rows(pack, night.candidates[:1], [marginal], night.verifications[:1], [below])
    assert row.reason == "MARGINAL: score 69.96 below strong 70.0" and row.score_text == "69.96"


def test_an_act_on_line_names_no_input_as_most_sensitive_where_none_moves_the_score(texas_pack: CriteriaPack
                                                                                   ) -> None:
    """Trial 102: a brief line read "Most sensitive to trade_3y without 2012 (score → 87.4)" of a candidate scored
    87.4, where none of the perturbations moved its score (each input beyond its component's range, clamped): the
    line named a sensitivity that was none."""
    def trial(change: str, score: float) -> Perturbation:
        return Perturbation(input="sales_3m", change=change, relative_change=None, score=score,
                            verdict=Verdict.STRONG, flips=False)

    unmoved = _verification(Status.CONFIRMED).model_copy(update={"sensitivity": [trial("-5%", 87.4),
                                                                                 trial("without 2015-06", 87.41)]})
    assert render._most_sensitive(texas_pack, unmoved, 87.4) == "no single input (no trial moves the score)"
    moved = unmoved.model_copy(update={"sensitivity": [trial("-5%", 87.4), trial("without 2015-06", 81.0)]})
    assert render._most_sensitive(texas_pack, moved, 87.4) == "sales_3m without 2015-06 (score → 81.0)"


def test_night_without_strong_says_so_in_one_line(tmp_path: Path) -> None:
    pack, night = _night(tmp_path, month_rows("Alpha") + month_rows("Bravo"))
    assert {r.section_or_tag for r in night.routes} == {"below_threshold"}
    brief, summary = render_brief(pack, night, "off")
    lines = [line for line in brief.markdown.splitlines() if "No STRONG" in line]
    assert lines == ["No STRONG, confirmed candidate tonight."]
    assert "Nothing tonight." in brief.markdown
    assert _items(brief.markdown, "## Act on these") == []
    assert summary.by_tag["below_threshold"] == 2
    assert brief.words < WORD_LIMIT


def test_brief_reports_errors_and_notes(tmp_path: Path) -> None:
    pack, night = _night(tmp_path, month_rows("Alpha") + month_rows("Bravo"))
    night = dataclasses.replace(night, errors=[RunError(as_of=AS_OF, candidate_id="bravo", node="verify",
                                                        error="boom")])
    brief, summary = render_brief(pack, night, "off")
    assert summary.errors == 1
    assert "Errors: bravo (verify)." in brief.markdown
    # the scan's below-minimum note (every candidate passing: no filter to loosen, trial 51)
    assert "Every one of the 2 candidates scanned passed the hard filters, fewer than min_candidates=10" \
        in brief.markdown


def test_the_run_summary_names_entities_as_the_source_writes_them(tmp_path: Path) -> None:
    """The scan's notes reach the brief as written, only their first letter raised: the flagged line named states
    `in, mn, tn` where the quarantine line above it named them `NY, PA, TX` (`str.capitalize` lowers the rest)."""
    rows = month_rows("Alpha", sales=300.0) + month_rows("Bravo", sales=200.0) + month_rows("NM", sales=50.0) \
        + month_rows("TX", sales=100.0, overrides={(2014, 6): {"sales": "abc"}})
    pack, night = _night(tmp_path, rows, **{"caps.max_candidates": 2, "caps.min_candidates": 0,
                                            "caps.order_by": "sales_12m"})
    assert night.scan_report["flagged_past_cap"] == 1 and night.scan_report["capped"] == 1
    brief, summary = render_brief(pack, night, "off")
    assert "Quarantined source rows: 1, for TX (1: sales not a number)." in brief.markdown
    assert "1 with quarantined rows in reach or a gap in sales_12m went on past the cap, flagged: TX." \
        in brief.markdown
    assert "4 passed the filters; capped at max_candidates=2 by sales_12m descending, then id; 1 not analyzed " \
        "tonight" in brief.markdown
    # TX's filters read its unknown sales as UNCLEAR: it passed none of them for sure, and the count says so
    assert "Scanned 4; passed filters 4 (1 with a filter UNCLEAR: its metric has no value); capped 1;" \
        in brief.markdown
    stored = _stored_numbers(tmp_path, pack, night, brief, summary)
    assert unsupported_numbers(brief.markdown, stored, AS_OF) == []


def test_a_red_flag_quoted_in_the_brief_is_the_pack_s_own_number(tmp_path: Path) -> None:
    """Trial 29: a doubting red flag `dip < -0.15` is quoted in the brief ("decide whether crash (dip < -0.15)
    rules it out"), and -0.15, held by the store only as the pack's text, stopped the night at `numbers_in_store`
    after every candidate was analyzed ("numbers not in store: -0.15")."""
    rows = [row for i in range(4) for row in _strong(_town(i), i)]
    flag = {"name": "any_sales", "when": "sales_12m > -0.37 * 3", "message": "has sales", "effect": "doubt"}
    pack, night = _night(tmp_path, rows, red_flags=[flag])
    brief, summary = render_brief(pack, night, "off")
    assert "(sales_12m > -0.37 * 3) rules it out" in brief.markdown
    stored = _stored_numbers(tmp_path, pack, night, brief, summary)
    assert unsupported_numbers(brief.markdown, stored, AS_OF) == []


# ---- the number check --------------------------------------------------------------------------------------
STORED = [150_000.0, 0.333333, 1800.0, 71.66667, 4.25, -0.05, 62.0]


@pytest.mark.parametrize("text", [
    "Median $150,000.", "Sales +33.3% vs a year ago.", "1,800 sales.", "Score 71.7.", "Score 71.67.",
    "Inventory 4.2 months.", "Inventory 4.25 months.", "Prices -5.0% lower.", "Prices −5% lower.",
    "Freshness 62 days.", "Sales 1800.", "As of 2015-01-30.", "Window 2014-10..2014-12.", "Month 2015-01.",
    "Plain words, no numbers.",
])
def test_supported_numbers_pass(text: str) -> None:
    assert unsupported_numbers(text, STORED, AS_OF) == []


@pytest.mark.parametrize(("text", "flagged"), [
    ("Median $151,000.", ["$151,000"]),
    ("Sales 1,801 a year.", ["1,801"]),
    ("Score 71.6.", ["71.6"]),
    ("Sales +34% vs a year ago.", ["+34%"]),
    ("Up 12 points.", ["12"]),
    ("As of 2015-01-31.", ["2015-01-31"]),
    ("Forecast for 2015-02.", ["2015-02"]),
    ("Score 71.7 and 999.", ["999"]),
])
def test_unsupported_numbers_are_flagged(text: str, flagged: list[str]) -> None:
    assert unsupported_numbers(text, STORED, AS_OF) == flagged


def test_names_with_digits_are_not_numbers() -> None:
    assert unsupported_numbers("sales_3m and inventory_3m_prev moved.", [], AS_OF) == []


def test_numeric_leaves_skip_booleans_and_strings() -> None:
    record = {"a": 1, "b": [2.5, {"c": 3}], "d": True, "e": "42", "f": None}
    assert sorted(numeric_leaves(record)) == [1.0, 2.5, 3.0]


# ---- count_words -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "words"), [
    ("one two three", 3),
    ("- ## — | . -- **", 0),
    ("## Act on these\n- **Alpha** (score 71.7): ok.", 7),
    ("$150,000 +3.3% 2015-01-30", 3),
    ("", 0),
])
def test_count_words_ignores_pure_punctuation(text: str, words: int) -> None:
    assert count_words(text) == words


def test_digits_in_candidate_names_are_names_not_numbers() -> None:
    brief = "- **District 9** (score 71.3): sales +12.0%. Next: visit district-9."
    assert unsupported_numbers(brief, [71.3, 0.12], date(2015, 1, 30), names=["District 9", "district-9"]) == []
    assert unsupported_numbers(brief, [71.3, 0.12], date(2015, 1, 30)) == ["9", "9"]


def test_the_names_a_brief_may_hold_are_those_whose_first_word_it_holds() -> None:
    """A wide night scans ten thousand names; the number check forms (cleaned, escaped, cut) only those whose first
    word's start the brief holds, every form of each, a control character or markup inside the name or not."""
    from opportunity_assets.brief.render import NightRecords, names_in_brief

    night = NightRecords(as_of=date(2015, 1, 31), candidates=[], analyses=[], verifications=[], routes=[], errors=[],
                         scan_report={"quarantined_entities": [{"entity": "Zone\u200b 7"}]})
    scanned = ["District 9", "district-9", "Sector_12", "Ward 40", "98108", "--", "Zone 7"]
    brief = "- **District 9**, Sector\\_12 and Zone 7 (ids district-9): 98108."
    assert names_in_brief(night, scanned, within=brief) == sorted(
        {"District 9", "district-9", "Sector_12", "Sector\\_12", "98108", "--", "Zone 7", "Zone\u200b 7"})
    assert set(names_in_brief(night, scanned)) == set(names_in_brief(night, scanned, within=brief)) | {"Ward 40"}


def test_a_name_that_is_a_number_is_masked_only_where_it_stands_alone() -> None:
    """Entities whose ids are numbers (a county's PID, a coded origin): the name `4` is the name where it stands
    alone, never the 4 of the score 47.9 (masked inside it, the score read as 7.9 and stopped the night)."""
    brief = "- **4** (MARGINAL 47.9): arrivals without 2012-Q2 turns it STRONG (score → 69.4). Scanned 4; capped 1."
    names = ["1", "2", "3", "4", "564"]
    assert unsupported_numbers(brief, [47.9, 69.4, 4.0, 1.0], date(2015, 1, 30), names=names) == []
    assert unsupported_numbers("Score 47.9 and 564.", [47.9], date(2015, 1, 30), names=names) == []
    assert unsupported_numbers("Score 5640.", [], date(2015, 1, 30), names=names) == ["5640"]


@given(st.floats(allow_nan=False, allow_infinity=False),
       st.sampled_from(["number", "usd", "count", "months", "days", "percent", "share"]))
def test_every_number_as_written_passes_the_brief_number_check(value: float, unit: str) -> None:
    """A formula input of any size in any unit, as the brief writes it, is a number the check reads back (an
    income of 5,348 with `unit: number` was written 5.35e+03 and stopped the night at numbers_in_store). No number
    a source holds is written with an exponent; a corrupt one near the float's limit is (`1.7e+308`, not 309
    figures), and read back as one number."""
    shown = format_value(value, unit)
    assert "e" not in shown.lower() or abs(value) >= HUGE or abs(value) < TINY
    assert len(shown) < 40
    assert unsupported_numbers(f"- **X**: income {shown}.", [value], date(2020, 1, 1)) == []


def test_significant_figures_without_exponents() -> None:
    assert [significant(v) for v in (1.7e308, -9e307, 2.5e-305)] == ["1.7e+308", "-9e+307", "2.5e-305"]
    assert [significant(v) for v in (5348.2, 53.48, 5.348, 0.05348, 0.0000123, 5.0, 999.6, -0.5)] == \
        ["5,348", "53.5", "5.35", "0.0535", "0.0000123", "5", "1,000", "-0.5"]
    assert significant(1234.5678, 6) == "1,234.57" and significant(215833.334, 8) == "215,833.33"
    # a backtest's absolute outcome (a change in points, a count) is written the same way: +12,346, not +1.235e+04
    assert [signed(v) for v in (12345.6, -0.03123, 0.0)] == ["+12,346", "-0.03123", "+0"]
    assert format_outcome(12345.6, "absolute") == "+12,346" and format_edge(-2.5e-5, "absolute") == "-0.000025"
    # a share keeps two figures below 10%: a 5.7% default rate is not "6%"
    assert [format_value(v, "share") for v in (0.057, 0.23, 0.0004, 0.05, 0.0)] == ["5.7%", "23%", "0.04%", "5%", "0%"]
