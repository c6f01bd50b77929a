"""The analyzer (formula, INSUFFICIENT_DATA, provenance) and the verifier (five checks, tampering, combine)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opportunity_assets.analyses.logic import analyze, formula_score, formula_scores, verdict_for
from opportunity_assets.brief.routing import route
from opportunity_assets.candidates.logic import scan
from opportunity_assets.criteria import CriteriaPack, MetricSpec, load_criteria
from opportunity_assets.records import (
    Analysis,
    Candidate,
    CheckOutcome,
    Destination,
    FilterResult,
    Status,
    Verdict,
    Verification,
)
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications.logic import CHECKS, combine, recompute_metric, verify
from opportunity_assets.verifications.stand_in import seasonal_stand_ins
from tests.conftest import month_rows, write_csv, write_pack

AS_OF = date(2015, 1, 30)  # anchor 2014-12
YEAR_2014 = range(1, 13)


def _improving(name: str, before: float, after: float) -> list[dict[str, Any]]:
    """Sales up a third in 2014 and months of inventory down from 6 to 4: every component at its best."""
    return month_rows(name, sales=before,
                      overrides={(2014, m): {"sales": after, "inventory": 4.0} for m in YEAR_2014})


MARKETS: dict[str, list[dict[str, Any]]] = {
    "alpha": month_rows("Alpha"),  # flat, 6 months of inventory: SKIP
    "marg": month_rows("Marg", inventory=4.0),  # flat, 4 months of inventory: MARGINAL
    "bravo": _improving("Bravo", 150.0, 200.0),  # robust STRONG
    "thin": _improving("Thin", 60.0, 80.0),  # STRONG, 960 sales a year: thin_market holds
    "spike": month_rows("Spike", overrides={(2014, 11): {"sales": 1500.0}}),  # the known-bad candidate
    "gap": month_rows("Gap", overrides={(2014, 12): {"sales": None}}),  # sales_3m missing
    "zero": month_rows("Zero", overrides={(2013, m): {"sales": 0.0} for m in (10, 11, 12)}),  # 0 a year ago
    "holey": month_rows("Holey", overrides={(2014, 6): {"sales": None}}),  # liquidity UNCLEAR
    "tiny": month_rows("Tiny", sales=40.0),  # liquidity FAIL
}


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> tuple[CriteriaPack, dict[str, Candidate]]:
    directory = tmp_path_factory.mktemp("analyze_verify")
    source = write_csv(directory / "source.csv", [row for rows in MARKETS.values() for row in rows])
    pack = load_criteria(write_pack(directory, source, **{"caps.min_candidates": 0}))
    snapshot = read_snapshot(pack, AS_OF)
    found, _ = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history)
    return pack, {c.id: c for c in found}


@pytest.fixture(scope="module")
def pack(night: tuple[CriteriaPack, dict[str, Candidate]]) -> CriteriaPack:
    return night[0]


@pytest.fixture(scope="module")
def candidates(night: tuple[CriteriaPack, dict[str, Candidate]]) -> dict[str, Candidate]:
    return night[1]


@pytest.fixture(scope="module")
def analyses(pack: CriteriaPack, candidates: dict[str, Candidate]) -> dict[str, Analysis]:
    return {cid: analyze(pack, c) for cid, c in candidates.items()}


def _verify(pack: CriteriaPack, candidate: Candidate, analysis: Analysis) -> Verification:
    verification = verify(pack, candidate, analysis)
    assert set(verification.checks) == set(CHECKS)
    return verification


# ---- (a) INSUFFICIENT_DATA ---------------------------------------------------------------------------------
def test_missing_required_input_gives_insufficient_data(analyses: dict[str, Analysis]) -> None:
    gap = analyses["gap"]
    assert gap.verdict == Verdict.INSUFFICIENT_DATA
    assert gap.score is None
    assert gap.missing == ["sales_3m"]
    assert "sales_3m" not in gap.numbers
    assert {"sales_12m", "sales_peak_3m"}.isdisjoint(gap.numbers)  # also gaps: no number either
    assert gap.components == {}
    assert gap.calculation == []
    assert "sales_3m" in gap.reasoning
    assert "Nothing was estimated" in gap.reasoning
    assert any(flag.startswith("data gap: sales_3m:") for flag in gap.red_flags)


def test_undefined_arithmetic_gives_insufficient_data(analyses: dict[str, Analysis]) -> None:
    zero = analyses["zero"]
    assert zero.verdict == Verdict.INSUFFICIENT_DATA
    assert zero.score is None
    assert len(zero.missing) == 1
    assert zero.missing[0].startswith("sales_yoy")
    assert "division by zero" in zero.missing[0]
    assert zero.numbers["sales_3m_prev"].value == 0.0  # a real zero is reported, not hidden


def test_insufficient_data_is_verified_and_routed_to_data_gap(pack: CriteriaPack, candidates: dict[str, Candidate],
                                                              analyses: dict[str, Analysis]) -> None:
    for cid in ("gap", "zero"):
        verification = _verify(pack, candidates[cid], analyses[cid])
        assert verification.checks["arithmetic"].passed is True
        assert verification.checks["inputs"].passed is True
        assert verification.status != Status.REJECTED
        routed = route(analyses[cid], verification)
        assert (routed.destination, routed.section_or_tag) == (Destination.ARCHIVE, "data_gap")


# ---- (b) provenance ----------------------------------------------------------------------------------------
def test_every_number_is_sourced_by_as_of_from_its_candidate(pack: CriteriaPack, candidates: dict[str, Candidate],
                                                             analyses: dict[str, Analysis]) -> None:
    for cid, analysis in analyses.items():
        assert analysis.candidate_id == cid
        assert analysis.as_of == AS_OF
        for name, number in analysis.numbers.items():
            assert number.source.entity == cid
            assert number.source.table == pack.source.table
            assert number.source.published_at <= AS_OF
            assert number.value == candidates[cid].metrics[name]
        assert set(analysis.numbers) == {n for n, v in candidates[cid].metrics.items() if v is not None}


def test_number_sources_name_their_window(analyses: dict[str, Analysis]) -> None:
    numbers = analyses["bravo"].numbers
    assert numbers["sales_3m"].source.period == "2014-10..2014-12"
    assert numbers["sales_3m"].source.published_at == AS_OF
    assert numbers["sales_3m_prev"].source.period == "2013-10..2013-12"
    assert numbers["sales_3m_prev"].source.published_at == date(2014, 1, 30)
    assert numbers["sales_12m"].source.period == "2014-01..2014-12"


# ---- (c) verdicts ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("cid", "score", "verdict"), [
    ("alpha", 100 * (0.35 * 0.25 / 0.55 + 0.25 * (1 - 2 / 6) + 0.40 * 0.5), Verdict.SKIP),
    ("marg", 100 * (0.35 * 0.25 / 0.55 + 0.25 * 1.0 + 0.40 * 0.5), Verdict.MARGINAL),
    ("spike", 100 * (0.35 * 1.0 + 0.25 * (1 - 2 / 6) + 0.40 * 0.5), Verdict.STRONG),
    ("bravo", 100.0, Verdict.STRONG),
])
def test_score_follows_the_formula(analyses: dict[str, Analysis], cid: str, score: float, verdict: Verdict) -> None:
    analysis = analyses[cid]
    assert analysis.score == pytest.approx(score)
    assert analysis.verdict == verdict
    assert analysis.missing == []
    assert analysis.calculation[-1].name == "score"
    assert analysis.calculation[-1].value == analysis.score


def test_verdicts_are_consistent_with_thresholds(pack: CriteriaPack, analyses: dict[str, Analysis]) -> None:
    seen = set()
    for analysis in analyses.values():
        if analysis.score is None:
            assert analysis.verdict == Verdict.INSUFFICIENT_DATA
            continue
        assert 0 <= analysis.score <= pack.formula.scale
        if analysis.score >= pack.thresholds.strong:
            expected = Verdict.STRONG
        elif analysis.score >= pack.thresholds.marginal:
            expected = Verdict.MARGINAL
        else:
            expected = Verdict.SKIP
        assert analysis.verdict == expected
        seen.add(expected)
    assert seen == {Verdict.STRONG, Verdict.MARGINAL, Verdict.SKIP}


@pytest.mark.parametrize(("score", "verdict"), [(70.0, Verdict.STRONG), (69.999, Verdict.MARGINAL),
                                                (55.0, Verdict.MARGINAL), (54.999, Verdict.SKIP),
                                                (100.0, Verdict.STRONG), (0.0, Verdict.SKIP)])
def test_verdict_for_thresholds_are_inclusive(pack: CriteriaPack, score: float, verdict: Verdict) -> None:
    assert verdict_for(score, pack) == verdict


# ---- (d) the known-bad candidate ---------------------------------------------------------------------------
def test_one_month_spike_is_strong_but_uncertain(pack: CriteriaPack, candidates: dict[str, Candidate],
                                                 analyses: dict[str, Analysis]) -> None:
    spike = analyses["spike"]
    assert spike.verdict == Verdict.STRONG
    assert any(flag.startswith("sales_spike:") for flag in spike.red_flags)
    verification = _verify(pack, candidates["spike"], spike)
    assert verification.status == Status.UNCERTAIN
    assert verification.fatal_assumption == "sales_3m (without 2014-11)"
    assert verification.failed_checks == ["assumptions"]
    assert verification.checks["assumptions"].passed is False
    assert all(verification.checks[name].passed is True for name in CHECKS if name != "assumptions")
    assert verification.to_resolve is not None and "2014-11" in verification.to_resolve
    flip = next(t for t in verification.sensitivity if t.change == "without 2014-11")
    assert flip.flips is True
    assert flip.verdict != Verdict.STRONG
    routed = route(spike, verification)
    assert (routed.destination, routed.section_or_tag) == (Destination.BRIEF, "needs_your_judgment")
    assert routed.section_or_tag != "act_on_these"


# ---- (e) the verifier ----------------------------------------------------------------------------------------
def test_robust_strong_is_confirmed(pack: CriteriaPack, candidates: dict[str, Candidate],
                                    analyses: dict[str, Analysis]) -> None:
    verification = _verify(pack, candidates["bravo"], analyses["bravo"])
    assert verification.status == Status.CONFIRMED
    assert all(verification.checks[name].passed is True for name in CHECKS)
    assert verification.failed_checks == []
    assert verification.fatal_assumption is None
    assert verification.to_resolve is None
    assert verification.sensitivity and not any(t.flips for t in verification.sensitivity)
    assert verification.key_assumption is not None
    routed = route(analyses["bravo"], verification)
    assert (routed.destination, routed.section_or_tag) == (Destination.BRIEF, "act_on_these")


def test_independent_recomputation_matches_the_scanner_sql(pack: CriteriaPack,
                                                           candidates: dict[str, Candidate]) -> None:
    """Every candidate's metrics, from its rows (a candidate not going on carries none unless the scan is asked
    for its windows, as the replay of outcomes does)."""
    assert [c.id for c in candidates.values() if not c.went_on and not c.raw_data] == ["tiny"]
    snapshot = read_snapshot(pack, AS_OF)
    windows, _ = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history, window_rows=True)
    assert all(c.raw_data for c in windows)
    for candidate in windows:
        for name, spec in pack.metrics.items():
            truth = recompute_metric(spec, candidate.raw_data, AS_OF)
            stored = candidate.metrics[name]
            if stored is None:
                assert truth is None, f"{candidate.id}.{name}"
            else:
                assert truth == pytest.approx(stored, rel=1e-12), f"{candidate.id}.{name}"


def _bump(analysis: Analysis, name: str, **number_changes: Any) -> Analysis:
    number = analysis.numbers[name]
    if "published_at" in number_changes or "entity" in number_changes:
        changed = number.model_copy(update={"source": number.source.model_copy(update=number_changes)})
    else:
        changed = number.model_copy(update=number_changes)
    return analysis.model_copy(update={"numbers": {**analysis.numbers, name: changed}})


def _tampered(analysis: Analysis, how: str) -> Analysis:
    if how == "number_value":
        return _bump(analysis, "sales_3m", value=analysis.numbers["sales_3m"].value + 100)
    if how == "look_ahead":
        return _bump(analysis, "median_3m", published_at=AS_OF + timedelta(days=1))
    if how == "other_entity":
        return _bump(analysis, "sales_12m", entity="alpha")
    if how == "score":
        return analysis.model_copy(update={"score": (analysis.score or 0) - 10})
    if how == "verdict":
        return analysis.model_copy(update={"verdict": Verdict.MARGINAL})
    if how == "component":
        return analysis.model_copy(update={"components": {**analysis.components, "sales_yoy": 0.5}})
    if how == "claims_insufficient":
        return analysis.model_copy(update={"verdict": Verdict.INSUFFICIENT_DATA, "score": None, "components": {},
                                           "calculation": [], "missing": ["sales_3m"]})
    if how == "drops_omission_number":
        return analysis.model_copy(update={"numbers": {k: v for k, v in analysis.numbers.items()
                                                       if k != "median_3m"}})
    if how == "drops_required_input":
        return analysis.model_copy(update={"numbers": {k: v for k, v in analysis.numbers.items()
                                                       if k != "inventory_3m"}})
    raise AssertionError(how)


@pytest.mark.parametrize(("how", "failed", "finding"), [
    ("number_value", "inputs", "sales_3m = 700 but the source gives 600"),
    ("look_ahead", "inputs", "look-ahead"),
    ("other_entity", "inputs", "txhousing/alpha"),
    ("drops_required_input", "inputs", "inventory_3m neither reported nor declared missing"),
    ("score", "arithmetic", "score: analysis 90"),
    ("verdict", "arithmetic", "verdict"),
    ("component", "arithmetic", "sales_yoy normalised"),
    ("claims_insufficient", "arithmetic", "INSUFFICIENT_DATA"),
    ("drops_omission_number", "omissions", "price_trend"),
])
def test_verifier_catches_tampering(pack: CriteriaPack, candidates: dict[str, Candidate],
                                    analyses: dict[str, Analysis], how: str, failed: str, finding: str) -> None:
    verification = _verify(pack, candidates["bravo"], _tampered(analyses["bravo"], how))
    assert verification.status == Status.REJECTED
    assert failed in verification.failed_checks
    assert verification.checks[failed].passed is False
    assert finding in verification.checks[failed].finding
    assert failed in verification.reason


def test_verifier_catches_an_unreported_red_flag(pack: CriteriaPack, candidates: dict[str, Candidate],
                                                 analyses: dict[str, Analysis]) -> None:
    thin = analyses["thin"]
    assert thin.verdict == Verdict.STRONG
    assert any(flag.startswith("thin_market:") for flag in thin.red_flags)
    assert _verify(pack, candidates["thin"], thin).status == Status.CONFIRMED
    hidden = thin.model_copy(update={"red_flags": [f for f in thin.red_flags if not f.startswith("thin_market:")]})
    verification = _verify(pack, candidates["thin"], hidden)
    assert verification.status == Status.REJECTED
    assert verification.failed_checks == ["omissions"]
    assert "thin_market" in verification.checks["omissions"].finding


def test_verifier_catches_an_invented_number(pack: CriteriaPack, candidates: dict[str, Candidate],
                                             analyses: dict[str, Analysis]) -> None:
    holey = analyses["holey"]
    assert "sales_12m" not in holey.numbers
    invented = holey.model_copy(update={"numbers": {**holey.numbers,
                                                    "sales_12m": holey.numbers["sales_3m"].model_copy(
                                                        update={"value": 1800.0})}})
    verification = _verify(pack, candidates["holey"], invented)
    assert verification.status == Status.REJECTED
    assert "invented" in verification.checks["inputs"].finding


def test_unclear_filter_leaves_constraints_unresolved(pack: CriteriaPack, candidates: dict[str, Candidate],
                                                      analyses: dict[str, Analysis]) -> None:
    holey = candidates["holey"]
    assert holey.filters["liquidity"] == FilterResult.UNCLEAR
    assert holey.went_on is True
    assert analyses["holey"].score is not None
    verification = _verify(pack, holey, analyses["holey"])
    assert verification.checks["constraints"].passed is None
    assert "liquidity UNCLEAR" in verification.checks["constraints"].finding
    assert verification.status == Status.UNCERTAIN
    assert verification.to_resolve is not None and "constraints" in verification.to_resolve
    assert route(analyses["holey"], verification).section_or_tag == "needs_your_judgment"


def test_failed_filter_fails_constraints(pack: CriteriaPack, candidates: dict[str, Candidate],
                                         analyses: dict[str, Analysis]) -> None:
    tiny = candidates["tiny"]
    assert tiny.filters["liquidity"] == FilterResult.FAIL
    verification = _verify(pack, tiny, analyses["tiny"])
    assert verification.checks["constraints"].passed is False
    assert verification.status == Status.REJECTED


def test_a_recorded_pass_that_does_not_hold_fails_constraints(pack: CriteriaPack, candidates: dict[str, Candidate],
                                                              analyses: dict[str, Analysis]) -> None:
    lied = candidates["tiny"].model_copy(update={"filters": {**candidates["tiny"].filters,
                                                             "liquidity": FilterResult.PASS}, "went_on": True})
    verification = _verify(pack, lied, analyses["tiny"])
    assert verification.checks["constraints"].passed is False
    assert "recomputed FAIL" in verification.checks["constraints"].finding


# ---- recompute_metric --------------------------------------------------------------------------------------
RAW = [{"period": f"2014-{m:02d}-01", "published_at": (date(2014, m, 28) + timedelta(days=33)).isoformat(),
        "periods_ago": 12 - m, "sales": float(m * 10), "inventory": None if m == 11 else 5.0}
       for m in range(1, 13)]


@pytest.mark.parametrize(("spec", "expected"), [
    (MetricSpec(agg="sum", column="sales", window=(0, 2)), 100.0 + 110.0 + 120.0),
    (MetricSpec(agg="avg", column="sales", window=(0, 2)), 110.0),
    (MetricSpec(agg="max", column="sales", window=(0, 2)), 120.0),
    (MetricSpec(agg="min", column="sales", window=(0, 2)), 100.0),
    (MetricSpec(agg="last", column="sales", window=(0, 2)), 120.0),
    (MetricSpec(agg="last", column="inventory", window=(0, 2), min_rows=1), 5.0),
    (MetricSpec(agg="avg", column="inventory", window=(0, 2)), None),  # 2 of 3 filled
    (MetricSpec(agg="avg", column="inventory", window=(0, 2), min_rows=2), 5.0),
    (MetricSpec(agg="coverage", columns=["sales", "inventory"], window=(0, 2)), 5 / 6),
    (MetricSpec(agg="sum", column="sales", window=(12, 14)), None),  # no rows that far back
])
def test_recompute_metric(spec: MetricSpec, expected: float | None) -> None:
    value = recompute_metric(spec, RAW, date(2015, 1, 30))
    assert value == (None if expected is None else pytest.approx(expected))


def test_recompute_age_days() -> None:
    spec = MetricSpec(agg="age_days", column="inventory")
    latest = max(date.fromisoformat(r["published_at"]) for r in RAW if r["inventory"] is not None)
    assert recompute_metric(spec, RAW, date(2015, 2, 10)) == float((date(2015, 2, 10) - latest).days)


def test_leave_one_month_out_keeps_the_scale_of_a_sum() -> None:
    spec = MetricSpec(agg="sum", column="sales", window=(0, 2))
    assert recompute_metric(spec, RAW, date(2015, 1, 30), drop_period="2014-12-01") == pytest.approx(
        (100.0 + 110.0) * 3 / 2)
    avg = MetricSpec(agg="avg", column="sales", window=(0, 2))
    assert recompute_metric(avg, RAW, date(2015, 1, 30), drop_period="2014-10-01") == pytest.approx(115.0)


# ---- combine -----------------------------------------------------------------------------------------------
def _checks(**overrides: bool | None) -> dict[str, CheckOutcome]:
    return {name: CheckOutcome(passed=overrides.get(name, True), finding=name) for name in CHECKS}


@pytest.mark.parametrize(("overrides", "status", "failed"), [
    ({}, Status.CONFIRMED, []),
    ({"arithmetic": False}, Status.REJECTED, ["arithmetic"]),
    ({"inputs": False}, Status.REJECTED, ["inputs"]),
    ({"omissions": False}, Status.REJECTED, ["omissions"]),
    ({"constraints": False}, Status.REJECTED, ["constraints"]),
    ({"assumptions": False}, Status.UNCERTAIN, ["assumptions"]),
    ({"constraints": None}, Status.UNCERTAIN, []),
    ({"omissions": None, "assumptions": None}, Status.UNCERTAIN, []),
    ({"assumptions": False, "constraints": None}, Status.UNCERTAIN, ["assumptions"]),
    ({"assumptions": False, "inputs": False}, Status.REJECTED, ["inputs", "assumptions"]),
    ({"inputs": False, "constraints": None}, Status.REJECTED, ["inputs"]),
    ({name: None for name in CHECKS}, Status.UNCERTAIN, []),
])
def test_combine(overrides: dict[str, bool | None], status: Status, failed: list[str]) -> None:
    got_status, got_failed, reason = combine(_checks(**overrides))
    assert got_status == status
    assert got_failed == failed
    if status == Status.CONFIRMED:
        assert reason == "All five checks pass."
    for name, value in overrides.items():
        if value is None and status == Status.UNCERTAIN:
            assert name in reason
        if value is False and (status == Status.UNCERTAIN or name != "assumptions"):
            assert name in reason


def test_every_market_is_scanned(night: tuple[CriteriaPack, dict[str, Candidate]]) -> None:
    pack, found = night
    assert isinstance(pack.source_path, Path) and pack.source_path.is_file()
    assert set(found) == set(MARKETS)
    assert {cid for cid, c in found.items() if not c.went_on} == {"tiny"}


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(st.one_of(st.none(), st.sampled_from([0.0, -0.0, 4.0, 10.0, -0.25, 0.30]),
                                        st.floats(min_value=-1e6, max_value=1e6)), min_size=4, max_size=4),
                     min_size=1, max_size=40))
def test_the_scans_scores_at_once_are_each_candidates_formula_score(texas_pack: CriteriaPack,
                                                                     rows: list[list[float | None]]) -> None:
    """The cap orders a wide night by scores computed for every candidate at once: each is `formula_score`'s (the
    analysis's) to the last bit, None where it is None (a missing input, a division by zero)."""
    names = texas_pack.required_inputs
    assert len(names) == 4
    one_by_one = [formula_score(texas_pack, dict(zip(names, row, strict=True))) for row in rows]
    at_once = formula_scores(texas_pack, {name: [row[i] for row in rows] for i, name in enumerate(names)})
    assert [None if s is None else s.hex() for s in at_once] == [None if s is None else s.hex() for s in one_by_one]


def _seasonal_pack(tmp_path: Path, rows: list[list[Any]]) -> CriteriaPack:
    from tests.test_shapes import _csv
    from tests.test_shapes import _pack as _shapes_pack

    source = {"path": _csv(tmp_path / "trips.csv", ["id", "month", "trips"], rows), "grain": "month",
              "period_column": "month", "publication_lag_days": 0, "columns": ["trips"]}
    metrics = {"q_now": {"agg": "sum", "column": "trips", "window": [0, 2]},
               "q_prev": {"agg": "sum", "column": "trips", "window": [12, 14]}}
    return _shapes_pack(tmp_path, source, metrics, required_inputs=["q_now", "q_prev"],
                        hard_filters=[{"name": "enough", "metric": "q_now", "op": ">=", "value": 0}],
                        formula={"components": [{"name": "growth", "expression": "q_now / q_prev - 1",
                                                 "direction": "higher_is_better", "range": [0, 0.20], "weight": 1.0,
                                                 "label": "quarter on a year ago"}]})


def test_a_month_left_out_of_a_seasonal_series_is_stood_in_for_by_its_season_not_the_other_months(
        tmp_path: Path) -> None:
    """Trial 126 (ABS departures, a December peak): leaving November out of an October-December quarter put the
    average of October and December in its place, raised the quarter by a quarter and read "without 2014-11 turns
    it STRONG" for a MARGINAL whose November matched the year before; 189 of 262 clean STRONG nights were fragile so.
    Where the entity's own past says its season predicts a month left out better than the window's other months do,
    the month reads its season a year away, moved as the other months moved: here the quarter's own growth, so
    nothing flips."""
    season = [1.1, 0.8, 1.0, 1.2, 0.9, 1.0, 1.3, 1.1, 0.9, 1.0, 0.6, 2.0]  # a December peak after a low November
    noise = np.random.default_rng(126).normal(0, 0.01, 36)
    rows = [["east", f"{y}-{m:02d}-01",
             round(1000 * season[m - 1] * 1.12 ** (y - 2012) * (1 + noise[12 * (y - 2012) + m - 1]), 1)]
            for y in range(2012, 2015) for m in range(1, 13)]
    pack = _seasonal_pack(tmp_path, rows)
    as_of = date(2015, 1, 31)
    snapshot = read_snapshot(pack, as_of)
    (candidate,) = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history)[0]
    analysis = analyze(pack, candidate)
    assert analysis.verdict == Verdict.MARGINAL
    verification = verify(pack, candidate, analysis)
    assert verification.checks["assumptions"].passed is True, verification.checks["assumptions"].finding
    assert route(analysis, verification).section_or_tag == "below_threshold"
    november = next(r["period"] for r in candidate.raw_data if r["period"].startswith("2014-11"))
    spec = pack.metrics["q_now"]
    stood_in = seasonal_stand_ins(spec, candidate.raw_data, 12)[november]
    truth = recompute_metric(spec, candidate.raw_data, as_of)
    assert truth is not None
    assert recompute_metric(spec, candidate.raw_data, as_of, drop_period=november, stand_in=stood_in) == \
        pytest.approx(truth, rel=0.01)
    assert seasonal_stand_ins(spec, candidate.raw_data, 1) == {}  # a grain with no season keeps the average


def test_a_noisy_count_with_no_season_keeps_the_other_months_average_as_its_stand_in(tmp_path: Path) -> None:
    """Stop 62: stood in everywhere, the season a year away made every STRONG of a noisy count with no season (pet
    licences by ZIP code) fragile: one count scaled by a ratio of other counts moves more than their average. Where
    the entity's own past says the average predicts a month left out better, the average stands in."""
    counts = np.random.default_rng(62).poisson(40, 48)
    rows = [["east", f"{y}-{m:02d}-01", int(counts[12 * (y - 2011) + m - 1])]
            for y in range(2011, 2015) for m in range(1, 13)]
    pack = _seasonal_pack(tmp_path, rows)
    as_of = date(2015, 1, 31)
    snapshot = read_snapshot(pack, as_of)
    (candidate,) = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history)[0]
    for name in ("q_now", "q_prev"):
        assert seasonal_stand_ins(pack.metrics[name], candidate.raw_data, 12) == {}, name
    november = next(r["period"] for r in candidate.raw_data if r["period"].startswith("2014-11"))
    others = [float(r["trips"]) for r in candidate.raw_data if r["periods_ago"] in (0, 2)]
    assert recompute_metric(pack.metrics["q_now"], candidate.raw_data, as_of, drop_period=november) == \
        pytest.approx(sum(others) * 3 / 2)
