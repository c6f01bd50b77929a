"""The scanner: hard filters PASS/FAIL/UNCLEAR, data gaps without estimates, the cap, the minimum, ids."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.candidates.logic import ScanReport, candidate_id, scan
from opportunity_assets.candidates.step import coverage_note, required_input_coverage
from opportunity_assets.check.pack import check_pack
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.grounding import numeric_leaves, unsupported_numbers
from opportunity_assets.reasons import not_going_reason
from opportunity_assets.records import Candidate, FilterResult
from opportunity_assets.sources.snapshot import read_snapshot
from tests.conftest import month_rows

Build = Callable[..., CriteriaPack]
AS_OF = date(2015, 1, 30)  # anchor 2014-12: the 12-month window is 2014-01..2014-12
PASS, FAIL, UNCLEAR = FilterResult.PASS, FilterResult.FAIL, FilterResult.UNCLEAR


def run(pack: CriteriaPack, as_of: date = AS_OF) -> tuple[dict[str, Candidate], ScanReport]:
    snapshot = read_snapshot(pack, as_of)
    found, report = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    return {c.id: c for c in found}, report


def city(name: str, **kwargs: Any) -> list[dict[str, Any]]:
    return month_rows(name, **kwargs)


# ---- hard filters ------------------------------------------------------------------------------------------
def test_healthy_market_passes_every_filter(synthetic: Build) -> None:
    found, _ = run(synthetic(city("Alpha")))
    alpha = found["alpha"]
    assert alpha.filters == {"liquidity": PASS, "freshness": PASS, "coverage": PASS}
    assert alpha.went_on is True
    assert alpha.capped is False
    assert alpha.data_gaps == []
    assert all(value is not None for value in alpha.metrics.values())
    assert alpha.anchor_period == date(2014, 12, 1)
    assert alpha.name == "Alpha"
    assert alpha.source == "txhousing"
    assert all(row["published_at"] <= AS_OF.isoformat() for row in alpha.raw_data)


def test_missing_sales_month_makes_liquidity_unclear_never_pass(synthetic: Build) -> None:
    found, report = run(synthetic(city("Holey", overrides={(2014, 6): {"sales": None}})))
    holey = found["holey"]
    assert holey.metrics["sales_12m"] is None  # not 11 months scaled up, not 1650, not 1800
    assert holey.filters["liquidity"] == UNCLEAR
    assert holey.filters["freshness"] == PASS
    assert holey.filters["coverage"] == PASS  # 29 of 30 cells
    assert holey.went_on is True  # UNCLEAR is not a FAIL; the verifier will not confirm it
    assert report.passed_filters == 1
    june = [row for row in holey.raw_data if row["period"] == "2014-06-01"]
    assert len(june) == 1
    assert june[0]["sales"] is None  # the raw row keeps its gap


def test_data_gap_names_metric_and_window(synthetic: Build) -> None:
    found, _ = run(synthetic(city("Holey", overrides={(2014, 6): {"sales": None}})))
    gaps = found["holey"].data_gaps
    assert gaps == ["sales_12m: 11 of 12 months of sales filled in 2014-01..2014-12; needs 12"]


def test_missing_latest_month_gaps_every_window_that_needs_it(synthetic: Build) -> None:
    found, _ = run(synthetic(city("Alpha") + city("Gap", overrides={(2014, 12): {"sales": None}})))
    gap = found["gap"]
    missing = {name for name, value in gap.metrics.items() if value is None}
    assert missing == {"sales_3m", "sales_12m", "sales_peak_3m"}
    assert {g.split(":")[0] for g in gap.data_gaps} == missing
    assert any("2014-10..2014-12" in g and g.startswith("sales_3m:") for g in gap.data_gaps)
    assert gap.metrics["inventory_3m"] == 6.0
    assert gap.metrics["days_since_data"] == 31.0  # November's figure, published 2014-12-30


def test_thin_market_fails_liquidity(synthetic: Build) -> None:
    found, report = run(synthetic(city("Alpha") + city("Thin", sales=40.0)))
    thin = found["thin"]
    assert thin.metrics["sales_12m"] == 480.0
    assert thin.filters["liquidity"] == FAIL
    assert thin.went_on is False
    assert thin.capped is False
    assert report.failed_filters == 1


def test_filter_threshold_is_inclusive(synthetic: Build) -> None:
    found, _ = run(synthetic(city("Edge", sales=50.0) + city("Under", sales=49.9)))
    assert found["edge"].metrics["sales_12m"] == pytest.approx(600.0)
    assert found["edge"].filters["liquidity"] == PASS
    assert found["under"].filters["liquidity"] == FAIL


def test_stale_data_fails_freshness(synthetic: Build) -> None:
    found, _ = run(synthetic(city("Alpha") + city("Stale", months=33)))  # Stale stops at 2014-09
    stale = found["stale"]
    assert stale.metrics["days_since_data"] == 92.0  # 2014-09 published 2014-10-30
    assert stale.filters["freshness"] == FAIL
    assert stale.filters["liquidity"] == UNCLEAR  # 9 of 12 months: no number, not a guess
    assert stale.went_on is False


def test_thin_coverage_fails_coverage(synthetic: Build) -> None:
    holes = {(2014, m): {"inventory": None} for m in (3, 4, 5, 6)}
    found, _ = run(synthetic(city("Patchy", overrides=holes)))
    patchy = found["patchy"]
    assert patchy.metrics["coverage_15m"] == pytest.approx(26 / 30)
    assert patchy.filters["coverage"] == FAIL
    assert patchy.went_on is False


def test_scan_never_fills_a_missing_number(synthetic: Build) -> None:
    rows = city("A", overrides={(2014, 12): {"sales": None}}) + city("B", overrides={(2013, 11): {"inventory": None}})
    found, _ = run(synthetic(rows))
    for candidate in found.values():
        for name, value in candidate.metrics.items():
            if value is None:
                assert any(g.startswith(f"{name}:") for g in candidate.data_gaps)
        assert len(candidate.data_gaps) == sum(v is None for v in candidate.metrics.values())
    assert found["b"].metrics["inventory_3m_prev"] is None


# ---- the cap -----------------------------------------------------------------------------------------------
CAPPED_MARKETS = [("Alpha", 100.0), ("Bravo", 300.0), ("Charlie", 200.0), ("Delta", 200.0), ("Echo", 250.0),
                  ("Foxtrot", 60.0), ("Thin", 40.0)]


BY_SALES = {"caps.max_candidates": 6, "caps.min_candidates": 0, "caps.order_by": "sales_12m"}
"""A cap of 6 by the most liquid markets (the order these gap tests are written against)."""


def capped_source() -> list[dict[str, Any]]:
    return [row for name, sales in CAPPED_MARKETS for row in city(name, sales=sales)]


@pytest.mark.parametrize(("changes", "kept"), [
    ({"caps.order_by": "sales_12m"}, ["bravo", "echo", "charlie"]),  # descending; Charlie and Delta tie: by id
    ({"caps.order_by": "sales_12m", "caps.descending": False}, ["foxtrot", "alpha", "charlie"]),
    ({"caps.order_by": None}, ["alpha", "bravo", "charlie"]),
])
def test_cap_keeps_the_documented_order(synthetic: Build, changes: dict[str, Any], kept: list[str]) -> None:
    pack = synthetic(capped_source(), **{"caps.max_candidates": 3, "caps.min_candidates": 0, **changes})
    found, report = run(pack)
    assert sorted(c.id for c in found.values() if c.went_on) == sorted(kept)
    capped = {c.id for c in found.values() if c.capped}
    assert capped == {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"} - set(kept)
    for cid in capped:
        assert found[cid].went_on is False
        assert FAIL not in found[cid].filters.values()
    assert found["thin"].capped is False  # failed, not capped
    assert report.scanned == 7
    assert report.passed_filters == 6
    assert report.failed_filters == 1
    assert report.capped == 3
    assert report.went_on == 3
    assert any("capped at max_candidates=3" in note and "3 not analyzed tonight" in note for note in report.notes)


def test_cap_note_names_the_order(synthetic: Build) -> None:
    pack = synthetic(capped_source(), **{"caps.max_candidates": 3, "caps.min_candidates": 0,
                                         "caps.order_by": "sales_12m"})
    _, report = run(pack)
    cut = [c.preliminary_score for c in run(pack)[0].values() if c.capped]
    assert report.best_capped_score == max(s for s in cut if s is not None)
    best = min((c for c in run(pack)[0].values() if c.capped and c.preliminary_score == report.best_capped_score),
               key=lambda c: c.id)
    # the best cut is named, not only scored (trial 96: which market, left to sorting a table of every candidate)
    assert report.notes == ["6 passed the filters; capped at max_candidates=3 by sales_12m descending, then id; "
                            f"3 not analyzed tonight; the best score among them {report.best_capped_score:.1f} "
                            f"({best.name})"]


def test_by_default_the_cap_keeps_the_best_by_the_packs_own_formula(synthetic: Build) -> None:
    """The in-depth work goes to the best candidates by the written formula, not to the largest: the big markets
    here have more months of inventory (a worse score) than the small ones."""
    markets = [("Big A", 900.0, 9.5), ("Big B", 850.0, 9.0), ("Big C", 800.0, 8.5),
               ("Small A", 200.0, 4.5), ("Small B", 210.0, 5.0), ("Small C", 220.0, 5.5)]
    rows = [r for name, sales, inventory in markets for r in city(name, sales=sales, inventory=inventory)]
    pack = synthetic(rows, **{"caps.max_candidates": 3, "caps.min_candidates": 0, "caps.order_by": "score"})
    found, report = run(pack)
    assert sorted(c for c, f in found.items() if f.went_on) == ["small-a", "small-b", "small-c"]
    for c in found.values():  # the scan's preliminary score is the analysis's score, computed again
        assert c.preliminary_score == pytest.approx(analyze(pack, c).score)
    best_cut = max(found[c].preliminary_score or 0.0 for c in ("big-a", "big-b", "big-c"))
    assert report.best_capped_score == best_cut
    best_name = next(found[c].name for c in ("big-a", "big-b", "big-c") if found[c].preliminary_score == best_cut)
    assert report.notes == ["6 passed the filters; capped at max_candidates=3 by the formula's preliminary score, "
                            f"best first, then id; 3 not analyzed tonight; the best score among them {best_cut:.1f} "
                            f"({best_name})"]
    by_size, _ = run(synthetic(rows, **{"caps.max_candidates": 3, "caps.min_candidates": 0,
                                        "caps.order_by": "sales_12m"}))
    assert sorted(c for c, f in by_size.items() if f.went_on) == ["big-a", "big-b", "big-c"]


def test_a_pack_without_order_by_caps_by_score() -> None:
    from opportunity_assets.criteria import Caps

    assert Caps().order_by == "score"


def test_missing_order_value_is_placed_by_its_remaining_months(synthetic: Build) -> None:
    """A gap in the cap order's metric never caps a candidate out: it is placed by its remaining months (Holey's
    11 months of 500 place it first), and it takes that place, so the others keep theirs."""
    rows = capped_source() + city("Holey", sales=500.0, overrides={(2014, 6): {"sales": None}})
    found, report = run(synthetic(rows, **BY_SALES))
    assert found["holey"].metrics["sales_12m"] is None
    assert found["holey"].went_on and not found["holey"].capped
    clean, _ = run(synthetic(capped_source() + city("Holey", sales=500.0),
                             **BY_SALES))
    assert {c: (f.went_on, f.capped) for c, f in found.items()} == {c: (f.went_on, f.capped) for c, f in clean.items()}
    assert report.capped == 1


def test_a_gap_placed_past_the_cap_goes_on_besides_the_others(synthetic: Build) -> None:
    rows = capped_source() + city("Holey", sales=10.0, overrides={(2014, 6): {"sales": None}})
    found, report = run(synthetic(rows, **BY_SALES, **{"hard_filters.0.value": 0}))
    assert found["holey"].went_on and not found["holey"].capped
    assert all(found[c].went_on for c in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot"))
    assert report.flagged_past_cap == 1
    assert any("went on past the cap, flagged: Holey" in note for note in report.notes)


def test_an_entity_the_source_stopped_carrying_is_not_judged_and_is_named(synthetic: Build) -> None:
    """Trials 40 and 55: clubs renamed decades ago, whose rows end long before every window, went on past the cap
    every night, flagged for a gap in the cap order's metric; placed last, they still went on as UNCLEAR whenever
    the cap had room (56 baseball clubs, INSUFFICIENT_DATA, named as gaps in every brief). An entity with no row in
    the metrics' windows and a year before them is gone: not judged, never capped or flagged, its reason says since
    when, the scan's note names it, and every other entity's route is as without it."""
    no_freshness = {"hard_filters.0.value": 0, "hard_filters.1.value": 100_000, "hard_filters.2.value": 0}
    rows = capped_source() + city("Gone", sales=900.0, start=(2010, 1), months=12)
    for changes in (BY_SALES, {**BY_SALES, "caps.max_candidates": 50}):  # past the cap, and with room under it
        pack = synthetic(rows, **changes, **no_freshness)
        found, report = run(pack)
        gone = found["gone"]
        assert gone.gone and not gone.went_on and not gone.capped and not gone.flagged
        assert FAIL not in gone.filters.values()
        reason = ("no row in 2012-10..2014-12, the night's latest 27 months (its metrics' windows and a year before "
                  "them): the source no longer records it; not judged")
        assert gone.data_gaps == [reason] and not_going_reason(pack, gone) == reason
        assert (report.scanned, report.gone, report.flagged_past_cap) == (len(CAPPED_MARKETS) + 1, 1, 0)
        assert report.passed_filters + report.failed_filters + report.gone == report.scanned
        (note,) = [n for n in report.notes if "no longer records" in n]
        assert note == ("1 entity has no row in the night's latest 27 months (the metrics' windows and a year before "
                        "them): the source no longer records it, and it was not judged: Gone")
        assert unsupported_numbers(note, list(numeric_leaves(dataclasses.asdict(report))), AS_OF,
                                   names=[c.name for c in found.values()]) == []
        clean, _ = run(synthetic(capped_source(), **changes, **no_freshness))
        assert {c: f.went_on for c, f in found.items() if c != "gone"} == {c: f.went_on for c, f in clean.items()}


def test_an_entity_late_or_refused_in_reach_is_judged_not_gone(synthetic: Build) -> None:
    """Gone is no row at all in the span: a market whose rows stop 20 months before the night's latest (no value in
    any window: every filter on them UNCLEAR) is judged and goes on, its gaps said; one whose only rows in the span
    were refused (a duplicated key) goes on too, flagged as quarantined in reach (issue 11: one entity's bad data
    makes its filters UNCLEAR, never drops it)."""
    duplicated = city("Twice", start=(2013, 6), months=19)
    rows = capped_source() + city("Late", start=(2011, 1), months=29) + city("Twice", start=(2010, 1), months=12) \
        + duplicated + duplicated
    no_freshness = {"hard_filters.0.value": 0, "hard_filters.1.value": 100_000, "hard_filters.2.value": 0}
    found, report = run(synthetic(rows, **{**BY_SALES, "caps.max_candidates": 50}, **no_freshness))
    for cid in ("late", "twice"):
        assert not found[cid].gone and found[cid].went_on, cid
        assert UNCLEAR in found[cid].filters.values(), cid
    assert report.gone == 0 and not any("no longer records" in n for n in report.notes)


def test_a_quarantined_row_out_of_every_window_leaves_its_market_capped_like_any_other(synthetic: Build) -> None:
    """Only a quarantined row or cell in a metric's reach can move a place, so only one may let its market past the
    cap. A daily source's bad rows ten years back let 26 of 36 states past a cap of 10: here Alpha's duplicated
    month and Foxtrot's bad sales cell lie in 2012, 33 and 34 months before the night's latest month (the widest
    window reaches 14), and both are capped as on clean data; Foxtrot's bad cell moved into 2014 goes on, flagged."""
    def source(foxtrot: tuple[int, int]) -> list[dict[str, Any]]:
        rows = [row for name, sales in CAPPED_MARKETS
                for row in city(name, sales=sales, overrides={foxtrot: {"sales": "abc"}} if name == "Foxtrot" else {})]
        return rows + city("Alpha", sales=100.0, start=(2012, 2), months=1)  # a second Alpha 2012-02: both refused

    changes = {"caps.max_candidates": 3, "caps.min_candidates": 0, "caps.order_by": "sales_12m"}
    clean, clean_report = run(synthetic(capped_source(), **changes))
    found, report = run(synthetic(source((2012, 3)), **changes))
    assert report.quarantined == 3 and {e["entity"] for e in report.quarantined_entities} == {"Alpha", "Foxtrot"}
    assert {c: (f.went_on, f.capped) for c, f in found.items()} == \
        {c: (f.went_on, f.capped) for c, f in clean.items()}
    assert found["alpha"].capped and found["foxtrot"].capped
    assert found["foxtrot"].metrics == clean["foxtrot"].metrics and found["alpha"].metrics == clean["alpha"].metrics
    assert report.flagged_past_cap == 0 and report.capped == clean_report.capped == 3
    assert report.notes == clean_report.notes
    reached, report = run(synthetic(source((2014, 6)), **changes))
    assert reached["foxtrot"].went_on and not reached["foxtrot"].capped and reached["alpha"].capped
    assert report.flagged_past_cap == 1 and report.capped == 2
    assert any("went on past the cap, flagged: Foxtrot" in note for note in report.notes)


def test_flagged_markets_past_the_cap_go_on_up_to_max_flagged_the_rest_capped_and_named(synthetic: Build) -> None:
    """A source refused in every entity's reach (a marker in each one's cell) flags every market; past a cap of 2,
    only `caps.max_flagged` of them go on, best placed by their remaining rows (Charlie and Delta), and the rest
    are capped, each saying so, named in the notes and warned of by check. Unset, the bound is the cap."""
    rows = [row for name, sales in CAPPED_MARKETS
            for row in city(name, sales=sales, overrides={(2014, 6): {"sales": "abc"}})]
    changes = {"caps.max_candidates": 2, "caps.min_candidates": 0, "caps.order_by": "sales_12m"}
    found, report = run(synthetic(rows, **changes, **{"caps.max_flagged": 2}))
    assert {c for c, f in found.items() if f.went_on} == {"bravo", "echo", "charlie", "delta"}
    assert {c for c, f in found.items() if f.capped} == {"alpha", "foxtrot", "thin"}
    assert all(f.flagged for c, f in found.items() if c not in ("bravo", "echo"))
    assert report.flagged_past_cap == 2 and report.flagged_capped == 3 and report.capped == 3
    assert any(n.startswith("3 more flagged past the cap were capped, beyond max_flagged=2: Alpha, Foxtrot, Thin")
               for n in report.notes)
    pack = synthetic(rows, **changes, **{"caps.max_flagged": 2})
    assert not_going_reason(pack, found["thin"]).startswith(
        "capped: beyond max_candidates=2 and max_flagged=2 (quarantined rows in reach or a gap in sales_12m")
    (warning,) = [w for w in check_pack(pack, as_of=AS_OF).warnings if "max_flagged" in w]
    assert warning.startswith("key `caps.max_flagged`: 5 candidates past the cap have quarantined rows in reach; "
                              "2 go on flagged, 3 are capped (max_flagged=2)")
    _, report = run(synthetic(rows, **changes))
    assert report.flagged_past_cap == 2 and report.flagged_capped == 3
    # trial 36: "25 go on flagged, 1 are capped"
    four = synthetic(rows, **changes, **{"caps.max_flagged": 4})
    (warning,) = [w for w in check_pack(four, as_of=AS_OF).warnings if "max_flagged" in w]
    assert "; 4 go on flagged, 1 is capped (max_flagged=4)" in warning, warning
    assert pack.caps.flagged_bound == 2 and synthetic(rows, **changes).fingerprint != pack.fingerprint
    wide, report = run(synthetic(rows, **changes, **{"caps.max_flagged": 10}))
    assert all(f.went_on for f in wide.values()) and report.flagged_capped == 0
    # by score: flagged markets are placed by their remaining rows, not "placed last" for want of a score
    _, report = run(synthetic(rows, **{**changes, "caps.order_by": "score", "caps.max_flagged": 1}))
    assert report.flagged_past_cap == 1 and report.flagged_capped == 4
    assert not any("no preliminary score" in n or "gap in score" in n for n in report.notes), report.notes


def test_a_market_with_no_preliminary_score_is_cut_saying_why(synthetic: Build) -> None:
    """No sales a year earlier (`sales_3m / sales_3m_prev - 1` divides by zero for Aaron alone): Aaron had no
    preliminary score, was placed last and cut without a word (no gap, "missing an input", the note silent). Its
    record now says why, its reason too, and the cap's note (the brief's run summary) counts and names it, as it
    does a market with a required input missing (Abel); the others keep their places."""
    import dataclasses

    from opportunity_assets.grounding import numeric_leaves, unsupported_numbers
    from opportunity_assets.reasons import not_going_reason

    no_sales = {(2013, m): {"sales": 0.0, "volume": 0.0, "listings": 0.0} for m in (10, 11, 12)}
    rows = capped_source() + city("Aaron", sales=300.0, overrides=no_sales) + \
        city("Abel", sales=300.0, overrides={(2014, 11): {"inventory": None}})
    pack = synthetic(rows, **{"caps.max_candidates": 3, "caps.min_candidates": 0})
    found, report = run(pack)
    assert sorted(c for c, f in found.items() if f.went_on) == ["alpha", "bravo", "charlie"]
    aaron, abel = found["aaron"], found["abel"]
    assert aaron.capped and abel.capped and aaron.preliminary_score is None is abel.preliminary_score
    assert aaron.data_gaps == ["formula component sales_yoy: undefined: division by zero in `sales_3m / "
                               "sales_3m_prev`: sales_3m_prev is zero"]
    assert not_going_reason(pack, aaron) == ("capped: beyond max_candidates=3, no preliminary score (sales_yoy "
                                             "undefined: sales_3m_prev is zero)")
    assert not_going_reason(pack, abel) == "capped: beyond max_candidates=3, no preliminary score (inventory_3m " \
                                           "missing)"
    assert report.unscored_capped == 2
    (note,) = report.notes
    assert note.endswith("; 5 not analyzed tonight; the best score among them 52.6 (Delta); 2 of them with no "
                         "preliminary score, so no place in that order, placed last: Aaron (sales_yoy undefined: "
                         "sales_3m_prev is zero), Abel (inventory_3m missing)"), note
    # the brief writes the note as it is: every number in it is one the store holds (the scan report's)
    stored = [*numeric_leaves(dataclasses.asdict(report)), *numeric_leaves(pack.model_dump(mode="json"))]
    assert unsupported_numbers(note, stored, AS_OF, names=[c.name for c in found.values()]) == []


def test_the_cap_note_names_one_more_rather_than_others(synthetic: Build) -> None:
    """Trial 47: "4 of them with no preliminary score ...: HI (...), IA (...), RI (...) and others": "others" for
    one. A note names every one where only one would be left over; with two or more left it points to them."""
    no_sales = {(2013, m): {"sales": 0.0, "volume": 0.0, "listings": 0.0} for m in (10, 11, 12)}

    def note(towns: list[str]) -> str:
        rows = capped_source() + [row for town in towns for row in city(town, sales=300.0, overrides=no_sales)]
        (text,) = run(synthetic(rows, **{"caps.max_candidates": 3, "caps.min_candidates": 0}))[1].notes
        return text

    four = note(["Aaron", "Abel", "Acre", "Adam"])
    assert four.endswith("4 of them with no preliminary score, so no place in that order, placed last: Aaron "
                         "(sales_yoy undefined: sales_3m_prev is zero), Abel (sales_yoy undefined: sales_3m_prev "
                         "is zero), Acre (sales_yoy undefined: sales_3m_prev is zero), Adam (sales_yoy undefined: "
                         "sales_3m_prev is zero)"), four
    five = note(["Aaron", "Abel", "Acre", "Adam", "Agnes"])
    assert "Acre (sales_yoy undefined: sales_3m_prev is zero) and others (the night's candidates table" in five
    assert "Adam" not in five


def test_no_cap_no_note(synthetic: Build) -> None:
    _, report = run(synthetic(capped_source(), **{"caps.min_candidates": 0}))
    assert report.capped == 0
    assert report.went_on == 6
    assert report.notes == []
    assert report.below_minimum is False


# ---- the minimum -------------------------------------------------------------------------------------------
def test_below_minimum_is_reported_and_filters_are_not_loosened(synthetic: Build) -> None:
    rows = city("Alpha") + city("Bravo") + city("Charlie") + city("Thin", sales=40.0)
    found, report = run(synthetic(rows))  # min_candidates is 10
    assert report.below_minimum is True
    assert report.passed_filters == 3
    assert report.went_on == 3
    assert any("only 3 of 4 candidates passed the hard filters (min_candidates=10)" in n and "not loosened" in n
               and n.endswith("the most failed: liquidity (1 of 4)") for n in report.notes)
    assert report.failed_by_filter == {"liquidity": 1}
    assert found["thin"].filters["liquidity"] == FAIL
    # trial 51: a source of fewer entities than the minimum, every one passing, has no filter to loosen
    _, report = run(synthetic(city("Alpha") + city("Bravo")))
    assert report.below_minimum is True
    assert report.notes == ["every one of the 2 candidates scanned passed the hard filters, fewer than "
                            "min_candidates=10: the source has no more entities to scan"]
    assert found["thin"].went_on is False


def test_at_minimum_is_not_below(synthetic: Build) -> None:
    _, report = run(synthetic(city("Alpha") + city("Bravo"), **{"caps.min_candidates": 2}))
    assert report.below_minimum is False
    assert report.notes == []


def test_report_carries_quarantine_count_and_anchor(synthetic: Build) -> None:
    rows = city("Alpha", overrides={(2013, 1): {"sales": "abc"}}) + city("Bravo")
    _, report = run(synthetic(rows))
    assert report.quarantined == 1
    assert report.anchor_period == date(2014, 12, 1)
    assert report.as_of == AS_OF


# ---- ids ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("key", "slug"), [
    ("San Antonio", "san-antonio"),
    ("Bryan-College Station", "bryan-college-station"),
    ("NE Tarrant County", "ne-tarrant-county"),
    ("  Fort Worth (Tarrant)  ", "fort-worth-tarrant"),
    ("A|B", "a-b"),
    ("Zone 7", "zone-7"),
    ("!!!", "entity"),
])
def test_candidate_id_is_a_slug(key: str, slug: str) -> None:
    assert candidate_id(key) == slug


def test_candidates_get_slug_ids_and_partition_keys(synthetic: Build) -> None:
    rows = city("San Antonio") + city("Bryan-College Station") + city("Corpus Christi")
    found, _ = run(synthetic(rows))
    assert set(found) == {"san-antonio", "bryan-college-station", "corpus-christi"}
    for cid, candidate in found.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", cid)
        assert candidate.partition_key == f"{AS_OF.isoformat()}|{cid}"
    assert found["san-antonio"].name == "San Antonio"


def test_two_entities_with_one_slug_are_both_kept(synthetic: Build) -> None:
    found, _ = run(synthetic(city("A B") + city("a b")))
    assert {c.id: c.name for c in found.values()} == {"a-b": "A B", "a-b-2": "a b"}


def test_a_few_rows_spelled_otherwise_never_take_the_real_entitys_id(synthetic: Build) -> None:
    """Twelve rows spelled `AUSTIN` took `austin` (it sorts first) and the real Austin became `austin-2`: the key
    with the most rows keeps the plain id, and the scan says the keys share one."""
    rows = city("Austin", months=24) + city("AUSTIN", start=(2014, 1), months=12)
    found, report = run(synthetic(rows))
    assert {c.id: c.name for c in found.values()} == {"austin": "Austin", "austin-2": "AUSTIN"}
    assert "entity keys 'Austin' (24 rows, austin), 'AUSTIN' (12 rows, austin-2) share an id: read as 2 " \
           "entities (if they are one, the source should spell it one way)" in report.notes


def test_the_note_on_keys_sharing_an_id_writes_only_numbers_the_scan_report_holds(synthetic: Build) -> None:
    """The note goes into the brief's run summary, whose every number must be a stored one: its row counts were
    not, and the night stopped at `numbers_in_store` ("numbers not in store: 43, 43, 36") naming no key."""
    rows = city("Austin", months=24) + city("AUSTIN", start=(2014, 1), months=12)
    _, report = run(synthetic(rows))
    note = next(n for n in report.notes if n.startswith("entity keys "))
    assert "(12 rows, austin-2)" in note
    assert unsupported_numbers(note, numeric_leaves(dataclasses.asdict(report)), AS_OF) == []


def test_many_keys_spelt_two_ways_are_one_note_naming_how_many(synthetic: Build) -> None:
    """Trial 26: a category written `INBOUND` for `Inbound` in one year spelt all 504 entities two ways, and the scan
    wrote a note per entity: 504 lines in check and a brief of 15,823 words, the night failing at its word limit
    with a ValueError. Beyond a few sets the note is one, naming how many (a number the scan report holds)."""
    names = ["Austin", "Dallas", "El Paso", "Houston", "Waco"]
    rows = [r for name in names for r in city(name, months=24) + city(name.upper(), start=(2014, 1), months=12)]
    found, report = run(synthetic(rows))
    notes = [n for n in report.notes if n.startswith("entity keys ")]
    assert len(notes) == 1
    assert notes[0].startswith("entity keys share an id in 5 sets, each key read as an entity of its own (e.g. "
                               "'Austin' (24 rows, austin), 'AUSTIN' (12 rows, austin-2); ")
    assert "Waco" not in notes[0]
    assert report.shared_id_sets == 5
    ids = [*found, *(c.name for c in found.values())]  # the brief's check reads ids and names as text
    assert unsupported_numbers(notes[0], numeric_leaves(dataclasses.asdict(report)), AS_OF, ids) == []


def test_entities_with_the_same_slug_keep_distinct_ids(synthetic: Build) -> None:
    """`A B` -> a-b, `A B 2` -> a-b-2, then `a-b` (second a-b) must not become a second a-b-2."""
    pack = synthetic(city("A B") + city("a-b") + city("A B 2"))
    snapshot = read_snapshot(pack, AS_OF)
    found, _ = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history)
    ids = [c.id for c in found]
    assert len(ids) == 3
    assert len(set(ids)) == 3, f"duplicate candidate ids {ids}"
    assert {c.name for c in found} == {"A B", "a-b", "A B 2"}


def test_on_texas_every_preliminary_score_is_the_analysis_score(texas_pack: CriteriaPack) -> None:
    found, _ = run(texas_pack, date(2009, 12, 31))
    assert sum(c.preliminary_score is not None for c in found.values()) > 30
    for c in found.values():
        assert c.preliminary_score == analyze(texas_pack, c).score, c.id


def test_the_same_scan_is_given_again_and_any_other_input_scans_anew(synthetic: Build) -> None:
    """`opportunity run` checks a night, then runs it, on one snapshot: the second scan is the first's result
    (its records are frozen); a different pack or a different frame is scanned again."""
    pack = synthetic(city("Alpha") + city("Beta", sales=80.0))
    snapshot = read_snapshot(pack, AS_OF)
    args = (AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)
    first, report = scan(pack, *args)
    again, same_report = scan(pack, *args)
    assert again == first and all(a is b for a, b in zip(again, first, strict=True)) and same_report is report
    again.clear()  # a caller's list is its own
    assert scan(pack, *args)[0] == first
    capped = pack.model_copy(update={"caps": pack.caps.model_copy(update={"max_candidates": 1,
                                                                         "min_candidates": 0})})
    assert sum(c.went_on for c in scan(capped, *args)[0]) == 1
    copied = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics.clone(), snapshot.history,
                  snapshot.quarantined)[0]
    assert copied == first and all(a is not b for a, b in zip(copied, first, strict=True))


def test_markets_flagged_for_a_gap_in_the_cap_order_alone_are_not_told_of_quarantined_rows(synthetic: Build) -> None:
    """Trial 28: `caps.order_by: earnings` over colleges whose median earnings are NA (a gap; no row refused) was
    warned "1641 candidates past the cap have quarantined rows in reach; ...: mend the source", of a source with no
    quarantined row. Here a month of sales is empty in every market: each sales_12m is a gap, none refused."""
    rows = [row for name, sales in CAPPED_MARKETS
            for row in city(name, sales=sales, overrides={(2014, 6): {"sales": None}})]
    pack = synthetic(rows, **{"caps.max_candidates": 2, "caps.min_candidates": 0, "caps.order_by": "sales_12m",
                              "caps.max_flagged": 2})
    _, report = run(pack)
    assert report.quarantined == 0 and report.flagged_capped > 0
    (warning,) = [w for w in check_pack(pack, as_of=AS_OF).warnings if "max_flagged" in w]
    assert warning == (
        f"key `caps.max_flagged`: {report.flagged_past_cap + report.flagged_capped} candidates past the cap have no "
        "value of sales_12m, the metric `caps.order_by` places them by (no row of theirs is quarantined); "
        f"{report.flagged_past_cap} go on flagged, {report.flagged_capped} are capped (max_flagged=2): expected an "
        "order every candidate has a value of (`caps.order_by: score` places one with no score last), or a "
        "`caps.max_flagged` that analyzes them")


def test_entities_gone_count_in_no_filter_of_the_few_passing_note(synthetic: Build) -> None:
    """Trial 76: a drag race's 160 queens of past seasons (gone, never judged) were counted among the filters'
    failures, "still_on_show (172 of 20)", and the note's 20, the judged entities, was no stored number, so the
    brief's number check stopped the night. Only the judged count, and the report stores the number it writes."""
    gone = [f"Gone{n}" for n in range(8)]  # more gone than judged: "coverage (9 of 7)"
    rows = capped_source() + [row for name in gone for row in city(name, sales=900.0, start=(2010, 1), months=12)]
    pack = synthetic(rows, **{"caps.min_candidates": 30})
    found, report = run(pack)
    assert report.gone == len(gone) and all(FAIL in found[candidate_id(n)].filters.values() for n in gone)
    (note,) = [n for n in report.notes if "were not loosened" in n]
    judged = len(CAPPED_MARKETS)
    assert f"of {judged} candidates passed" in note
    assert all(int(n) <= judged for n in re.findall(r"\((\d+) of \d+\)", note)), note
    assert sum(report.failed_by_filter.values()) <= report.failed_filters * len(report.failed_by_filter)
    stored = [*numeric_leaves(dataclasses.asdict(report)), *numeric_leaves(pack.model_dump(mode="json"))]
    assert unsupported_numbers(note, stored, AS_OF, names=[c.name for c in found.values()]) == []


def test_the_coverage_note_names_whom_a_required_input_is_missing_for(synthetic: Build) -> None:
    """Trial 96: "only 70% of candidates going on have every required input" said how many, and whose only in the
    archive's reasons; the note names each (its missing inputs), the first few by id, the rest pointed to."""
    gaps = {(2014, m): {"inventory": None} for m in (10, 11, 12)}
    rows = capped_source() + city("Aaron", sales=900.0, overrides=gaps) + city("Abel", sales=900.0, overrides=gaps)
    pack = synthetic(rows, **{"caps.max_candidates": 20, "caps.min_candidates": 0})
    found, _ = run(pack)
    candidates = list(found.values())
    assert found["aaron"].went_on and found["aaron"].metrics["inventory_3m"] is None
    share = required_input_coverage(pack.required_inputs, candidates)
    assert coverage_note(pack.required_inputs, candidates, share, 0.9) == (
        f"only {share:.0%} of candidates going on have every required input (threshold 90%); missing: "
        "Aaron (inventory_3m), Abel (inventory_3m)")
    many = [c.model_copy(update={"id": f"m{i}", "name": f"M{i}"}) for i in range(7) for c in [found["aaron"]]]
    assert coverage_note(pack.required_inputs, many, 0.0, 0.9).endswith(
        "M4 (inventory_3m) and others (the night's candidates table names each)")
