"""Pandera schemas of the asset checks: valid frames from real records pass, tampered ones fail by name."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from opportunity_assets import schemas
from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.routing import route
from opportunity_assets.candidates.logic import scan
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.records import (
    Analysis,
    Candidate,
    CheckOutcome,
    Destination,
    FilterResult,
    Route,
    Status,
    Verdict,
    Verification,
)
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications.logic import verify
from tests.conftest import month_rows, write_csv, write_pack

AS_OF = date(2015, 1, 30)


class Night:
    def __init__(self, pack: CriteriaPack, candidates: list[Candidate]) -> None:
        self.pack = pack
        self.candidates = {c.id: c for c in candidates}
        self.analyses = {c.id: analyze(pack, c) for c in candidates}
        self.verifications = {c.id: verify(pack, c, self.analyses[c.id]) for c in candidates}
        self.routes = {c.id: route(self.analyses[c.id], self.verifications[c.id]) for c in candidates}


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Night:
    directory = tmp_path_factory.mktemp("schemas")
    rows = (month_rows("Alpha")
            + month_rows("Bravo", overrides={(2014, m): {"sales": 200.0, "inventory": 4.0} for m in range(1, 13)})
            + month_rows("Marg", inventory=4.0)
            + month_rows("Spike", overrides={(2014, 11): {"sales": 1500.0}})
            + month_rows("Gap", overrides={(2014, 12): {"sales": None}})
            + month_rows("Tiny", sales=40.0))
    pack = load_criteria(write_pack(directory, write_csv(directory / "source.csv", rows)))
    snapshot = read_snapshot(pack, AS_OF)
    found, _ = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history)
    return Night(pack, found)


def _checks_named(failures: list[dict[str, Any]]) -> set[str]:
    return {f["check"] for f in failures}


def test_real_records_cover_every_kind(night: Night) -> None:
    assert {a.verdict for a in night.analyses.values()} == set(Verdict)
    assert {v.status for v in night.verifications.values()} == set(Status)
    assert {r.section_or_tag for r in night.routes.values()} == {"act_on_these", "needs_your_judgment", "data_gap",
                                                                 "failed_verification", "below_threshold"}
    assert {r for c in night.candidates.values() for r in c.filters.values()} == set(FilterResult)


# ---- valid frames ------------------------------------------------------------------------------------------
def test_valid_filter_rows(night: Night) -> None:
    frame = schemas.filter_frame(night.pack, list(night.candidates.values()))
    assert frame.height == len(night.candidates) * len(night.pack.hard_filters)
    assert schemas.failures(schemas.FilterRows, frame) == []


def test_valid_analysis_rows(night: Night) -> None:
    assert schemas.failures(schemas.AnalysisRows, schemas.analysis_frame(night.pack, list(night.analyses.values()))) \
        == []


def test_valid_verification_rows(night: Night) -> None:
    assert schemas.failures(schemas.VerificationRows, schemas.verification_frame(list(night.verifications.values()))) \
        == []


def test_valid_route_rows(night: Night) -> None:
    assert schemas.failures(schemas.RouteRows, schemas.route_frame(list(night.routes.values()))) == []


# ---- tampered frames ---------------------------------------------------------------------------------------
def test_went_on_candidate_with_a_failed_filter(night: Night) -> None:
    tiny = night.candidates["tiny"]
    assert tiny.filters["liquidity"] == FilterResult.FAIL
    tampered = [*(c for c in night.candidates.values() if c.id != "tiny"), tiny.model_copy(update={"went_on": True})]
    failures = schemas.failures(schemas.FilterRows, schemas.filter_frame(night.pack, tampered))
    assert _checks_named(failures) == {"went_on_never_failed"}


def test_filter_result_contradicting_its_value(night: Night) -> None:
    alpha = night.candidates["alpha"]
    lied = alpha.model_copy(update={"filters": {**alpha.filters, "liquidity": FilterResult.FAIL}, "went_on": False})
    failures = schemas.failures(schemas.FilterRows, schemas.filter_frame(night.pack, [lied]))
    assert _checks_named(failures) == {"result_matches_value"}
    unclear = alpha.model_copy(update={"filters": {**alpha.filters, "coverage": FilterResult.UNCLEAR}})
    assert _checks_named(schemas.failures(schemas.FilterRows, schemas.filter_frame(night.pack, [unclear]))) \
        == {"result_matches_value"}


def test_missing_value_reported_as_pass(night: Night) -> None:
    gap = night.candidates["gap"]
    assert gap.filters["liquidity"] == FilterResult.UNCLEAR
    passed = gap.model_copy(update={"filters": {**gap.filters, "liquidity": FilterResult.PASS}})
    assert "result_matches_value" in _checks_named(
        schemas.failures(schemas.FilterRows, schemas.filter_frame(night.pack, [passed])))


def _analysis_failures(night: Night, cid: str, **changes: Any) -> set[str]:
    analyses = [a.model_copy(update=changes) if a.candidate_id == cid else a for a in night.analyses.values()]
    return _checks_named(schemas.failures(schemas.AnalysisRows, schemas.analysis_frame(night.pack, analyses)))


@pytest.mark.parametrize(("cid", "changes", "check"), [
    ("bravo", {"verdict": Verdict.MARGINAL}, "verdict_matches_thresholds"),
    ("alpha", {"verdict": Verdict.STRONG}, "verdict_matches_thresholds"),
    ("marg", {"score": 75.0}, "verdict_matches_thresholds"),
    ("alpha", {"score": None}, "no_score_iff_insufficient"),
    ("gap", {"score": 50.0}, "no_score_iff_insufficient"),
    ("bravo", {"score": 101.0}, "score_within_scale"),
])
def test_verdict_inconsistent_with_score(night: Night, cid: str, changes: dict[str, Any], check: str) -> None:
    assert check in _analysis_failures(night, cid, **changes)


def test_negative_score_is_refused(night: Night) -> None:
    failures = _analysis_failures(night, "alpha", score=-1.0)
    assert "greater_than_or_equal_to(0)" in failures


def test_duplicate_analysis_is_refused(night: Night) -> None:
    analyses: list[Analysis] = [*night.analyses.values(), night.analyses["alpha"]]
    failures = schemas.failures(schemas.AnalysisRows, schemas.analysis_frame(night.pack, analyses))
    assert "multiple_fields_uniqueness" in _checks_named(failures)
    verifications = [*night.verifications.values(), night.verifications["alpha"]]
    assert "multiple_fields_uniqueness" in _verification_failures(verifications)


def test_one_candidate_on_two_nights_is_no_duplicate(night: Night) -> None:
    """A run over a range of candidate partitions may span nights (a range picked in the UI, a backfill's runs on
    Celery workers), each night with its own `alpha`: each night's analysis is its own, not a duplicate, which
    failed the blocking check `verdicts_consistent` and stopped the run."""
    alpha = night.analyses["alpha"]
    analyses = [*night.analyses.values(), alpha.model_copy(update={"as_of": alpha.as_of - timedelta(days=31)})]
    assert schemas.failures(schemas.AnalysisRows, schemas.analysis_frame(night.pack, analyses)) == []
    checked = night.verifications["alpha"]
    verifications = [*night.verifications.values(), checked.model_copy(update={"as_of": checked.as_of
                                                                             - timedelta(days=31)})]
    assert _verification_failures(verifications) == set()


def _verification_failures(verifications: list[Verification]) -> set[str]:
    return _checks_named(schemas.failures(schemas.VerificationRows, schemas.verification_frame(verifications)))


def test_confirmed_verification_with_a_failed_check(night: Night) -> None:
    rejected = night.verifications["tiny"]
    assert rejected.status == Status.REJECTED
    confirmed = rejected.model_copy(update={"status": Status.CONFIRMED})
    assert _verification_failures([confirmed]) == {"confirmed_only_if_all_pass"}


def test_confirmed_verification_with_an_open_check(night: Night) -> None:
    open_ = night.verifications["gap"]
    assert any(c.passed is None for c in open_.checks.values())
    assert _verification_failures([open_.model_copy(update={"status": Status.CONFIRMED})]) \
        == {"confirmed_only_if_all_pass"}


def test_clean_verification_not_confirmed(night: Night) -> None:
    clean = night.verifications["bravo"]
    assert clean.status == Status.CONFIRMED
    assert _verification_failures([clean.model_copy(update={"status": Status.UNCERTAIN})]) \
        == {"confirmed_only_if_all_pass"}


def test_verification_missing_a_check(night: Night) -> None:
    clean = night.verifications["bravo"]
    four = clean.model_copy(update={"checks": {k: v for k, v in clean.checks.items() if k != "omissions"}})
    assert _verification_failures([four]) == {"equal_to(5)"}
    extra = clean.model_copy(update={"checks": {**{k: v for k, v in clean.checks.items() if k != "omissions"},
                                                "vibes": CheckOutcome(passed=True, finding="fine")}})
    assert "equal_to(5)" in _verification_failures([extra])


def _route_failures(routes: list[Route]) -> list[dict[str, Any]]:
    return schemas.failures(schemas.RouteRows, schemas.route_frame(routes))


def test_route_section_in_the_wrong_destination(night: Night) -> None:
    act = night.routes["bravo"]
    assert (act.destination, act.section_or_tag) == (Destination.BRIEF, "act_on_these")
    routes = [r for r in night.routes.values() if r.candidate_id != "bravo"]
    routes.append(act.model_copy(update={"destination": Destination.ARCHIVE}))
    failures = _route_failures(routes)
    assert _checks_named(failures) == {"section_belongs_to_destination"}
    assert "bravo" in failures[0]["failure_case"]


def test_archive_tag_in_the_brief(night: Night) -> None:
    archived = night.routes["alpha"]
    assert archived.destination == Destination.ARCHIVE
    moved = archived.model_copy(update={"destination": Destination.BRIEF})
    assert _checks_named(_route_failures([moved])) == {"section_belongs_to_destination"}


def test_unknown_route_tag(night: Night) -> None:
    odd = night.routes["alpha"].model_copy(update={"section_or_tag": "maybe_later"})
    assert any(f["check"].startswith("isin") for f in _route_failures([odd]))
