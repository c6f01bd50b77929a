"""Outcomes and the backtest: point in time on both sides of a verdict, pending and gaps, the pack's `outcome:`
section, the report's arithmetic, the asset through Dagster, and no verdict-path module reading outcomes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.candidates.logic import scan
from opportunity_assets.criteria import CriteriaError, CriteriaPack, OutcomeSpec, load_criteria
from opportunity_assets.definitions import build_definitions
from opportunity_assets.outcomes.logic import (
    Outcome,
    OutcomeStatus,
    VerdictOutcome,
    add_months,
    advantage,
    build_report,
    measure_outcome,
    night_medians,
    outcomes_said,
    report_markdown,
)
from opportunity_assets.outcomes.replay import backtest_png_path, backtest_report, measure_night, run_backtest
from opportunity_assets.periods import Grain
from opportunity_assets.records import Status, Verdict
from opportunity_assets.sources.snapshot import read_snapshot
from resources.store import ResultStore
from tests.conftest import ROOT, imported_modules, month_rows, write_csv, write_pack

Build = Callable[..., CriteriaPack]
AS_OF = date(2014, 1, 30)  # December 2013 is published 2013-12-31 + 30 days = 2014-01-30: t0
OUTCOME_DATE = date(2015, 1, 30)  # December 2014 is published exactly then
TODAY = date(2026, 1, 1)
SPEC = OutcomeSpec(metric="median", agg="avg", window_months=3, horizon_months=12)


def _city(name: str, *, later: float, months: int = 36, overrides: dict[tuple[int, int], dict[str, Any]] | None = None
          ) -> list[dict[str, Any]]:
    """2012-01 on: median 100,000 through 2013, `later` from 2014 on."""
    prices = {(y, m): {"median": later} for y in (2014, 2015) for m in range(1, 13)}
    for key, cells in (overrides or {}).items():
        prices[key] = {**prices.get(key, {}), **cells}
    return month_rows(name, months=months, median=100_000.0, overrides=prices)


def _future(names: list[str]) -> list[dict[str, Any]]:
    """Absurd rows for 2015: published after the outcome date of AS_OF, so never read for it."""
    return [r for n in names for r in month_rows(n, start=(2015, 1), months=12, sales=99_999.0, inventory=0.1,
                                                 median=9e9)]


def _pack(synthetic: Build, rows: list[dict[str, Any]], **changes: Any) -> CriteriaPack:
    return synthetic(rows, **{"outcome": SPEC.model_dump(), **changes})


# ---- point in time ---------------------------------------------------------------------------------------------
def test_outcomes_never_use_rows_published_after_the_outcome_date(synthetic: Build) -> None:
    base = _city("Alpha", later=110_000.0) + _city("Beta", later=95_000.0)
    measured = measure_night(_pack(synthetic, base), AS_OF, ["alpha", "beta"], today=TODAY)
    with_future = measure_night(_pack(synthetic, base + _future(["Alpha", "Beta"])), AS_OF, ["alpha", "beta"],
                                today=TODAY)
    assert with_future == measured
    alpha = measured["alpha"]
    assert alpha.status == OutcomeStatus.KNOWN and alpha.value == pytest.approx(0.10)
    assert measured["beta"].value == pytest.approx(-0.05)
    assert (alpha.start_window, alpha.end_window) == ("2013-10..2013-12", "2014-10..2014-12")
    assert alpha.outcome_date == OUTCOME_DATE and alpha.end_published_at == OUTCOME_DATE
    # ... and the later window's rows are what decides it (the comparison above is not vacuous)
    moved = _city("Alpha", later=110_000.0, overrides={(2014, 12): {"median": 140_000.0}})
    assert measure_night(_pack(synthetic, moved), AS_OF, ["alpha"], today=TODAY)["alpha"].value == pytest.approx(0.20)


def test_a_verdict_never_uses_rows_after_its_as_of(synthetic: Build) -> None:
    names = [f"Town {i:02d}" for i in range(6)]
    past = [r for i, n in enumerate(names) for r in month_rows(n, months=24, sales=150.0 + 9 * i)]  # to 2013-12
    later = [r for i, n in enumerate(names) for r in month_rows(n, start=(2014, 1), months=12, sales=150.0 + 9 * i,
                                                                   median=120_000.0)]

    def verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        pack = _pack(synthetic, rows)
        snapshot = read_snapshot(pack, AS_OF)
        found, _ = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history)
        return [analyze(pack, c).model_dump() for c in found if c.went_on]

    blind = verdicts(past)
    assert blind == verdicts(past + later + _future(names))  # the outcome window and beyond change nothing
    assert all(n["source"]["published_at"] <= AS_OF for a in blind for n in a["numbers"].values())
    # the same rows after as_of do decide the outcome
    pack = _pack(synthetic, past + later)
    assert measure_night(pack, AS_OF, ["town-00"], today=TODAY)["town-00"].value == pytest.approx(-0.20)


def test_a_row_published_after_the_window_date_is_refused() -> None:
    rows = [{"period": f"2014-{m:02d}-01", "published_at": "2015-01-30", "median": 1.0} for m in (10, 11, 12)]
    late = [*rows[:2], {"period": "2014-12-01", "published_at": "2015-01-31", "median": 1.0}]
    start = [{"period": f"2013-{m:02d}-01", "published_at": "2014-01-30", "median": 1.0} for m in (10, 11, 12)]
    common: dict[str, Any] = {"as_of": AS_OF, "candidate_id": "alpha", "anchor": date(2013, 12, 1),
                              "start_rows": start, "end_anchor": date(2014, 12, 1), "today": TODAY}
    assert measure_outcome(SPEC, end_rows=rows, **common).value == 0.0
    with pytest.raises(ValueError, match="published 2015-01-31"):
        measure_outcome(SPEC, end_rows=late, **common)


# ---- no outcome yet, no outcome at all ----------------------------------------------------------------------------
def test_pending_until_the_horizon_has_passed(synthetic: Build) -> None:
    pack = _pack(synthetic, _city("Alpha", later=110_000.0))
    before = measure_night(pack, AS_OF, ["alpha"], today=OUTCOME_DATE.replace(day=29))["alpha"]
    assert before.status == OutcomeStatus.PENDING and before.value is None and "after today" in before.reason
    assert measure_night(pack, AS_OF, ["alpha"], today=OUTCOME_DATE)["alpha"].status == OutcomeStatus.KNOWN
    # the source has not published t0 + 12 months (2015-01) by the outcome date
    late = measure_night(pack, date(2014, 3, 2), ["alpha"], today=TODAY)["alpha"]
    assert late.status == OutcomeStatus.PENDING and "2015-01 was not published by the outcome date 2015-03-02" \
        in late.reason


def test_a_period_the_source_skips_is_a_gap_not_pending_forever() -> None:
    """Trial 55: the terrorism extract holds no 1993 at all; every night whose outcome window ended in 1993 read
    "pending" ("1993 was not published by the outcome date 1994-12-31") in a design period 30 years old, as if it
    would come. Pending while the source has published nothing past the window; a gap once it has. The known
    figures are written as the brief writes them (2,059,424, not 2.05942e+06)."""
    start = [{"period": f"2013-{m:02d}-01", "published_at": "2014-01-30", "median": 2_059_424.0} for m in (10, 11, 12)]
    common: dict[str, Any] = {"as_of": AS_OF, "candidate_id": "a", "anchor": date(2013, 12, 1), "start_rows": start,
                              "end_rows": [], "end_anchor": date(2014, 11, 1), "today": TODAY}
    skipped = measure_outcome(SPEC, **common, latest=date(2015, 6, 1))
    assert skipped.status == OutcomeStatus.GAP and skipped.value is None
    assert skipped.reason == ("2014-12 was not published by the outcome date 2015-01-30, and the source has published "
                              "to 2015-06 since: a period it skips, or published late")
    assert measure_outcome(SPEC, **common).status == OutcomeStatus.PENDING  # nothing known past it: it may come
    assert measure_outcome(SPEC, **common, latest=date(2014, 11, 1)).status == OutcomeStatus.PENDING
    end = [{**r, "period": r["period"].replace("2013", "2014"), "published_at": "2015-01-30"} for r in start]
    known = measure_outcome(SPEC, **{**common, "end_rows": end, "end_anchor": date(2014, 12, 1)})
    assert known.reason == "avg median 2,059,424 over 2013-10..2013-12 → 2,059,424 over 2014-10..2014-12 (known on " \
                           "2015-01-30)"


def test_a_missing_month_in_either_window_is_a_gap_not_an_estimate(synthetic: Build) -> None:
    rows = (_city("Alpha", later=110_000.0, overrides={(2013, 11): {"median": None}})
            + _city("Beta", later=110_000.0, overrides={(2014, 11): {"median": None}}))
    measured = measure_night(_pack(synthetic, rows), AS_OF, ["alpha", "beta", "gamma"], today=TODAY)
    assert measured["alpha"].status == OutcomeStatus.GAP and "2013-11" in measured["alpha"].reason
    assert measured["beta"].status == OutcomeStatus.GAP and "2014-11" in measured["beta"].reason
    assert measured["gamma"].status == OutcomeStatus.GAP  # not scanned that night at all
    assert all(o.value is None for o in measured.values())


def test_outcome_variants_and_dates() -> None:
    start = [{"period": f"2013-{m:02d}-01", "published_at": "2014-01-30", "median": v}
             for m, v in ((10, 4.0), (11, 0.0), (12, 2.0))]
    end = [{"period": f"2014-{m:02d}-01", "published_at": "2015-01-30", "median": v}
           for m, v in ((10, 1.0), (11, 1.0), (12, 7.0))]
    common: dict[str, Any] = {"as_of": AS_OF, "candidate_id": "a", "anchor": date(2013, 12, 1), "start_rows": start,
                              "end_rows": end, "end_anchor": date(2014, 12, 1), "today": TODAY}
    assert measure_outcome(SPEC.model_copy(update={"change": "difference"}), **common).value == pytest.approx(1.0)
    assert measure_outcome(SPEC.model_copy(update={"agg": "last"}), **common).value == pytest.approx(2.5)
    assert measure_outcome(SPEC.model_copy(update={"agg": "sum", "window_periods": 1}), **common).value == 2.5
    zero = measure_outcome(SPEC.model_copy(update={"agg": "min"}), **common)
    assert zero.status == OutcomeStatus.GAP and "undefined" in zero.reason
    assert advantage(0.05, 0.02, "higher_is_better") == pytest.approx(0.03)
    assert advantage(0.05, 0.02, "lower_is_better") == pytest.approx(-0.03)
    assert add_months(date(2008, 2, 29), 12) == date(2009, 2, 28)
    assert add_months(date(2009, 1, 31), 1) == date(2009, 2, 28)
    assert add_months(date(2009, 12, 31), 12) == date(2010, 12, 31)


# ---- the pack's outcome section ----------------------------------------------------------------------------------
def test_outcome_section_is_validated_and_leaves_the_fingerprint_alone(tmp_path: Path, texas_pack: CriteriaPack
                                                                       ) -> None:
    source = write_csv(tmp_path / "s.csv", month_rows("Alpha"))
    assert texas_pack.outcome is not None and texas_pack.outcome.design_until == date(2009, 12, 31)
    without = load_criteria(write_pack(tmp_path, source, outcome=None))
    with_outcome = load_criteria(write_pack(tmp_path, source, outcome={"metric": "median", "horizon_months": 6}))
    assert with_outcome.outcome is not None and with_outcome.outcome.window_periods == 3
    assert with_outcome.fingerprint == without.fingerprint  # measuring afterwards never changes a verdict's id
    for bad, fragments in [({"metric": "price"}, ["outcome.metric", "'price'", "source.columns"]),
                           ({"metric": "median", "window_months": 0}, ["outcome.window_periods", "0"]),
                           ({"metric": "median", "agg": "mean"}, ["outcome.agg", "'mean'"]),
                           ({"metric": "median", "horizon": 12}, ["outcome.horizon", "unknown key"])]:
        with pytest.raises(CriteriaError) as exc:
            load_criteria(write_pack(tmp_path, source, outcome=bad))
        assert all(f in str(exc.value) for f in fragments), str(exc.value)


def test_outcome_windows_in_months_on_another_grain_are_refused(tmp_path: Path) -> None:
    """Trial 14: `outcome: {window_months: 1}` on a weekly source of aluminium premiums loaded and measured the
    outcome over one week, silently: the months' names count the grain's periods. On another grain than the month
    they are refused, naming the key and the periods they would count; on a month grain they read as before."""
    source = write_csv(tmp_path / "s.csv", month_rows("Alpha"))
    for key, value in (("window_months", 1), ("horizon_months", 12)):
        with pytest.raises(CriteriaError) as exc:
            load_criteria(write_pack(tmp_path, source, outcome={"metric": "median", key: value},
                                     **{"source.grain": "quarter"}))
        periods = key.replace("_months", "_periods")
        plural = "" if value == 1 else "s"
        assert str(exc.value).endswith(
            f"key `outcome.{key}`: got {value}; expected `{periods}` counting quarters (`source.grain`): `{key}` "
            f"counts the grain's periods, so {value} would be {value} quarter{plural}, not {value} month{plural}")
    monthly = load_criteria(write_pack(tmp_path, source, outcome={"metric": "median", "window_months": 2}))
    assert monthly.outcome is not None and monthly.outcome.window_periods == 2
    quarterly = load_criteria(write_pack(tmp_path, source, outcome={"metric": "median", "window_periods": 2},
                                         **{"source.grain": "quarter"}))
    assert quarterly.outcome is not None and quarterly.outcome.window_periods == 2


# ---- outcomes never feed a verdict -------------------------------------------------------------------------------
VERDICT_PATH = ["opportunity_assets.candidates.assets", "opportunity_assets.candidates.step",
                "opportunity_assets.candidates.logic", "opportunity_assets.analyses.logic",
                "opportunity_assets.verifications.logic", "opportunity_assets.per_candidate.assets",
                "opportunity_assets.per_candidate.pipeline", "opportunity_assets.brief.assets",
                "opportunity_assets.brief.step", "opportunity_assets.brief.render",
                "opportunity_assets.brief.routing", "resources.source",
                "opportunity_assets.sources.snapshot"]


def _module_file(name: str) -> Path | None:
    base = ROOT / Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _project_imports(name: str) -> set[str]:
    file = _module_file(name)
    assert file is not None, name
    return {m for m in imported_modules(file, name)
            if m.split(".")[0] in ("opportunity_assets", "resources") and _module_file(m)}


def test_no_verdict_path_module_imports_the_outcomes_package() -> None:
    reached, todo = set(), list(VERDICT_PATH)
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo += sorted(_project_imports(module))
    assert "opportunity_assets.candidates.logic" in reached and "resources.store" in reached  # the walk works
    assert not [m for m in reached if m.startswith("opportunity_assets.outcomes")]
    for module in VERDICT_PATH:  # nor reads the outcomes table (the brief may read judgments: it shows them)
        text = (_module_file(module) or Path()).read_text()
        assert not [s for s in ("store.outcomes", "write_outcomes", "FROM outcomes", "JOIN outcomes") if s in text]
        if not module.startswith("opportunity_assets.brief"):
            assert "judgments" not in text, module


# ---- the backtest's arithmetic -----------------------------------------------------------------------------------
def _row(as_of: date, cid: str, verdict: Verdict | None, status: Status | None, value: float | None) -> VerdictOutcome:
    outcome = Outcome(as_of=as_of, candidate_id=cid, outcome_date=add_months(as_of, 12),
                      status=OutcomeStatus.KNOWN if value is not None else OutcomeStatus.PENDING, value=value,
                      start_value=1.0, end_value=None if value is None else 1.0 + value, start_window="w",
                      end_window="w", end_published_at=None, reason="test")
    return VerdictOutcome(as_of=as_of, candidate_id=cid, verdict=verdict, verification=status, outcome=outcome)


def test_backtest_hit_rate_lift_and_periods() -> None:
    d1, d2, d3 = date(2009, 11, 30), date(2009, 12, 31), date(2010, 1, 31)
    rows = [
        # d1: median of (0.10, 0.02, 0.00, -0.04) = 0.01; STRONG mean 0.06 beats it
        _row(d1, "a", Verdict.STRONG, Status.CONFIRMED, 0.10), _row(d1, "b", Verdict.STRONG, Status.UNCERTAIN, 0.02),
        _row(d1, "c", Verdict.SKIP, Status.CONFIRMED, 0.00), _row(d1, "d", Verdict.SKIP, Status.CONFIRMED, -0.04),
        # d2: median 0.03; the only STRONG (-0.01) loses
        _row(d2, "a", Verdict.STRONG, Status.REJECTED, -0.01), _row(d2, "c", Verdict.MARGINAL, Status.CONFIRMED, 0.03),
        _row(d2, "d", Verdict.SKIP, Status.CONFIRMED, 0.05), _row(d2, "e", Verdict.SKIP, None, None),
        # d3 (held out): one STRONG at the median exactly: not a hit
        _row(d3, "a", Verdict.STRONG, Status.CONFIRMED, 0.02), _row(d3, "b", Verdict.SKIP, Status.CONFIRMED, 0.02),
    ]
    spec = SPEC.model_copy(update={"design_until": date(2009, 12, 31)})
    report = build_report(domain="x", fingerprint="f", spec=spec, rows=rows, nights=[d1, d2, d3, date(2010, 2, 28)],
                          missing=[date(2010, 2, 28)])
    design, held_out = report.periods
    assert (design.label, design.nights, held_out.label, held_out.nights) == ("design", 2, "held-out", 1)
    hit = design.hit_rate
    assert (hit.dates, hit.hits, hit.picks, hit.picks_beat) == (2, 1, 3, 2)
    assert hit.mean_advantage == pytest.approx(((0.09 + 0.01) / 2 + -0.04) / 2)
    strong = next(g for g in design.by_verdict if g.group == "STRONG")
    assert (strong.known, strong.mean) == (3, pytest.approx(0.11 / 3))
    skip = next(g for g in design.by_verdict if g.group == "SKIP")
    assert (skip.known, skip.pending) == (3, 1)
    lift = design.lift
    assert (lift.confirmed.known, lift.doubted.known) == (1, 2)
    assert lift.lift == pytest.approx(0.09 - (0.01 + -0.04) / 2)
    assert lift.interval is not None and lift.interval[0] <= lift.interval[1]
    assert (held_out.hit_rate.dates, held_out.hit_rate.hits) == (1, 0)
    assert held_out.lift.lift is None  # no doubted STRONG: not measurable, not zero
    assert report.missing == [date(2010, 2, 28)]


def test_a_backtest_of_differences_says_its_figures_are_in_the_columns_unit() -> None:
    """Trial 78: deadly earthquakes counted over ten years, `change: difference`: the report read "mean advantage
    -1.562" and a table of "-0.2917" with no word of what they count, where relative changes carry % and pp."""
    d = date(2009, 11, 30)
    rows = [_row(d, "a", Verdict.STRONG, Status.CONFIRMED, 2.0), _row(d, "b", Verdict.SKIP, Status.CONFIRMED, -1.0),
            _row(d, "c", Verdict.SKIP, Status.CONFIRMED, 0.0)]
    spec = SPEC.model_copy(update={"change": "difference"})
    text = report_markdown(build_report(domain="x", fingerprint="f", spec=spec, rows=rows, nights=[d], missing=[]))
    assert "figures are differences of the avg of median over 3 months, in the unit of median, not percent." in text
    relative = report_markdown(build_report(domain="x", fingerprint="f", spec=SPEC, rows=rows, nights=[d], missing=[]))
    assert "figures are" not in relative
    # trial 122: a survey's average a year at a time read "over 1 years"
    yearly = spec.model_copy(update={"window_periods": 1, "horizon_periods": 1})
    text = report_markdown(build_report(domain="x", fingerprint="f", spec=yearly, rows=rows, nights=[d], missing=[],
                                        grain=Grain("year")))
    assert "1 year after as_of" in text and "the avg of median over 1 year, in the unit" in text


def test_the_median_candidate_is_every_one_that_passed_the_filters_whatever_the_cap() -> None:
    """A cap by score analyzes the best-scored: their median is itself a high scorer. The night's median candidate
    is taken over every candidate that passed the hard filters, capped ones too (no verdict, not in any verdict's
    group); the median analyzed candidate is reported beside it."""
    d = date(2011, 5, 31)
    analyzed = [_row(d, "a", Verdict.STRONG, Status.CONFIRMED, 0.05), _row(d, "b", Verdict.MARGINAL, Status.CONFIRMED,
                                                                         0.07),
                _row(d, "c", Verdict.SKIP, Status.CONFIRMED, 0.06)]
    capped = [_row(d, "x", None, None, -0.02), _row(d, "y", None, None, 0.00)]
    (period,) = build_report(domain="x", fingerprint="f", spec=SPEC, rows=analyzed + capped, nights=[d],
                             missing=[]).periods
    assert night_medians(analyzed + capped) == {d: 0.05} and night_medians(analyzed + capped, analyzed_only=True) \
        == {d: 0.06}
    hit = period.hit_rate
    assert (hit.dates, hit.hits, hit.hits_vs_analyzed) == (1, 0, 0)  # 0.05 is the median: equal does not beat
    more = [capped[0], _row(d, "z", None, None, -0.01), _row(d, "w", None, None, -0.03)]  # median now 0.02
    (period,) = build_report(domain="x", fingerprint="f", spec=SPEC, rows=analyzed + more, nights=[d],
                             missing=[]).periods
    assert (period.hit_rate.hits, period.hit_rate.rate, period.hit_rate.hits_vs_analyzed) == (1, 1.0, 0)
    assert sum(g.known for g in period.by_verdict) == 3  # capped candidates have no verdict to score
    assert "median analyzed candidate on 0" in report_markdown(build_report(
        domain="x", fingerprint="f", spec=SPEC, rows=analyzed + capped, nights=[d], missing=[]))


def test_nights_of_one_candidate_hold_no_strong_pick_against_a_median_and_say_why() -> None:
    """Trial 51: a source of one entity (an island's turnip prices), 13 weekly nights, each one STRONG candidate.
    The backtest printed "STRONG beat the night's median candidate ... on 0 of 13 dates (0%) ... mean advantage
    +0.00 pp (90% interval +0.00 pp to +0.00 pp)" and a verifier lift of +0.00 pp, as if measured: the pick is its
    own median. A night needs two candidates with a known outcome to hold its picks against them; without one the
    report says so, and the verdicts' own means stand."""
    nights = [date(2022, 1, 2) + timedelta(weeks=w) for w in range(4)]
    rows = [_row(d, "island", Verdict.STRONG, Status.CONFIRMED if w % 2 else Status.UNCERTAIN, 0.1 * (w - 1))
            for w, d in enumerate(nights)]
    report = build_report(domain="x", fingerprint="f", spec=SPEC, rows=rows, nights=nights, missing=[])
    (period,) = report.periods
    assert (period.hit_rate.dates, period.hit_rate.picks, period.hit_rate.interval) == (0, 0, None)
    strong = next(g for g in period.by_verdict if g.group == "STRONG")
    assert (strong.known, strong.mean, strong.mean_advantage) == (4, pytest.approx(0.05), None)
    assert period.lift.lift is None
    text = report_markdown(report)
    assert ("- STRONG's 4 known outcomes cannot be held against the night's median candidate: no night of a STRONG "
            "pick had 2 candidates or more with a known outcome (a source of one entity is its own median); read "
            "the verdicts' own means above.") in text
    assert ("- Verifier lift: not measurable (STRONG with a known outcome: 2 CONFIRMED, 2 REJECTED/UNCERTAIN, on no "
            "night of 2 candidates or more with a known outcome).") in text
    # a second candidate on a night makes that night's pick comparable again
    other = _row(nights[0], "other", Verdict.SKIP, Status.CONFIRMED, -0.3)
    (period,) = build_report(domain="x", fingerprint="f", spec=SPEC, rows=[*rows, other], nights=nights,
                             missing=[]).periods
    assert (period.hit_rate.dates, period.hit_rate.hits) == (1, 1)


def test_nights_that_repeat_an_earlier_nights_latest_period_are_counted_once() -> None:
    """Trial 122: UN migrant stocks published for 1990, 1995, ..., 2015 and 2017, backtested at year-ends: five
    nights in a row read the same latest period, so the same picks and outcomes, and the report said "STRONG beat
    the night's median candidate on 20 of 20 dates" with an interval resampling those copies, where 4 periods
    were judged. A night whose latest period (t0) an earlier night of the range already read is left out of the
    figures, named in the header; rows measured before outcomes carried t0 are never merged."""
    d1, d2, d3 = date(2001, 12, 31), date(2002, 12, 31), date(2006, 12, 31)
    t0, t1 = date(2000, 1, 1), date(2005, 1, 1)

    def night(day: date, anchor: date | None, values: tuple[float, float, float]) -> list[VerdictOutcome]:
        rows = [_row(day, "a", Verdict.STRONG, Status.CONFIRMED, values[0]),
                _row(day, "b", Verdict.SKIP, Status.CONFIRMED, values[1]),
                _row(day, "c", Verdict.SKIP, Status.CONFIRMED, values[2])]
        return [r.model_copy(update={"outcome": r.outcome.model_copy(update={"anchor": anchor})}) for r in rows]

    rows = night(d1, t0, (0.1, 0.0, -0.1)) + night(d2, t0, (0.1, 0.0, -0.1)) + night(d3, t1, (-0.1, 0.0, 0.1))
    report = build_report(domain="x", fingerprint="f", spec=SPEC, rows=rows, nights=[d1, d2, d3], missing=[])
    (period,) = report.periods
    assert report.repeated == [d2]
    assert (period.nights, period.hit_rate.dates, period.hit_rate.hits, period.hit_rate.picks) == (2, 2, 1, 2)
    assert ("1 repeats an earlier night's latest period (2002-12-31) and is left out: each period counted once, "
            "on its first night") in report_markdown(report)
    unanchored = [r.model_copy(update={"outcome": r.outcome.model_copy(update={"anchor": None})}) for r in rows]
    legacy = build_report(domain="x", fingerprint="f", spec=SPEC, rows=unanchored, nights=[d1, d2, d3], missing=[])
    assert legacy.repeated == [] and legacy.periods[0].hit_rate.dates == 3
    measured = measure_outcome(SPEC, as_of=AS_OF, candidate_id="alpha", anchor=date(2013, 12, 1), start_rows=[],
                               end_rows=[], end_anchor=None, today=TODAY)
    assert measured.anchor == date(2013, 12, 1)


# ---- through Dagster ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_backtest_runs_then_reuses_nights_and_shows_the_plot(tmp_path: Path) -> None:
    # Letters, not numbers, in the names: the brief's number check reads digits in a name as numbers.
    rows = [r for i, letter in enumerate("ABCDEFGHIJKL")
            for r in _city(f"Town {letter}", later=100_000.0 * (1 + 0.01 * i),
                           overrides={(2013, m): {"sales": 150.0 + 20 * i} for m in (10, 11, 12)})]
    source = write_csv(tmp_path / "s.csv", rows)
    pack_file = write_pack(tmp_path, source, outcome=SPEC.model_dump())
    (tmp_path / "other").mkdir()
    store = tmp_path / "results.duckdb"
    defs = build_definitions(criteria_path=str(pack_file), store_path=str(store))
    instance = dg.DagsterInstance.ephemeral()
    dates = [date(2014, 1, 31), date(2014, 2, 28)]
    said: list[str] = []
    report = run_backtest(defs, instance, dates, every="month-end", say=said.append)
    assert [line.split()[1] for line in said] == ["ran", "ran"]
    (period,) = report.periods
    # January is published on 2014-03-02: both nights read December 2013, counted once (trial 122)
    assert report.missing == [] and report.repeated == [dates[1]] and period.nights == 1
    assert sum(g.known for g in period.by_verdict) == 12  # 12 towns, every outcome known
    stored = ResultStore(path=str(store)).outcomes("texas_housing", dates)
    assert {(r["candidate_id"], round(r["value"], 6)) for r in stored if r["as_of"] == dates[0]} == {
        (f"town-{letter}", round(0.01 * i, 6)) for i, letter in enumerate("abcdefghijkl")}
    assert backtest_png_path(str(store), "texas_housing", dates).read_bytes().startswith(b"\x89PNG")
    event = instance.get_latest_materialization_event(dg.AssetKey("backtest"))
    assert event is not None and event.asset_materialization is not None
    assert "data:image/png;base64," in str(event.asset_materialization.metadata["report"].value)

    # outcomes measured by another `outcome:` definition are not this one's (same verdicts, other yardstick)
    other = load_criteria(write_pack(tmp_path / "other", source, outcome={**SPEC.model_dump(), "horizon_periods": 6}))
    assert other.fingerprint == load_criteria(pack_file).fingerprint
    assert backtest_report(ResultStore(path=str(store)), other, dates).missing == dates

    said.clear()
    assert run_backtest(defs, instance, dates, every="month-end", say=said.append) == report
    assert [line.split()[1] for line in said] == ["reused", "reused"]
    with pytest.raises(dg.Failure, match="no night of these criteria"):
        defs.resolve_job_def("outcomes_night").execute_in_process(instance=instance, partition_key="2014-03-31",
                                                                   raise_on_error=True)


def test_a_backtest_night_says_how_many_outcomes_are_known_pending_or_gaps() -> None:
    """Trial 107: every backtest night's line said "outcomes measured", those whose horizon lay past the data's end
    too, all of whose outcomes stayed pending and counted in no hit rate."""
    known, pending, gap = OutcomeStatus.KNOWN, OutcomeStatus.PENDING, OutcomeStatus.GAP
    assert outcomes_said([known] * 28 + [gap] * 2) == "outcomes 28 known, 2 with a gap in a window (never measured)"
    assert outcomes_said([pending] * 3) == \
        "outcomes 3 pending (their horizon's data not published yet: in no hit rate)"
    assert outcomes_said([]) == "no outcome to measure (no candidate analyzed)"


def test_a_backtest_night_whose_every_outcome_is_a_gap_names_window_periods() -> None:
    """Trial 135: PBC patients' visits every 6 months or so, read by quarter; `outcome: {metric: bili, agg: last,
    window_periods: 2}` needs both quarters of each window filled, so all 840 outcomes of 28 nights were gaps, each
    night's line "157 with a gap in a window (never measured)" naming no key, and check said ok. A night whose every
    outcome is a gap names `outcome.window_periods`."""
    gap = OutcomeStatus.GAP
    spec = OutcomeSpec(metric="bili", agg="last", window_periods=2, horizon_periods=4)
    assert outcomes_said([gap] * 3, spec, "quarters") == (
        "outcomes 3 with a gap in a window (never measured): every one, as `outcome.window_periods` 2 needs each of "
        "its 2 quarters filled at both ends (rows only some quarters: a shorter window)")
    assert outcomes_said([OutcomeStatus.KNOWN] + [gap] * 3, spec, "quarters") == \
        "outcomes 1 known, 3 with a gap in a window (never measured)"
