"""Identities that hold exactly, to the rounding of a derived column (`verifications/exact.py`): pure, on synthetic
series, then on the bundled Texas rows, where months of inventory is listings / 12-month average sales in tenths."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from opportunity_assets import expressions
from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.routing import route
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.records import Candidate
from opportunity_assets.verifications import exact, integrity
from opportunity_assets.verifications.logic import verify
from opportunity_assets.verifications.series import series_of
from tests.plants import Plant
from tests.test_integrity import AMARILLO_BREAK, NIGHTS, _candidate, _planted_pack


@pytest.mark.parametrize(("ratio", "column", "other"), [
    ("inventory / (listings / avg(sales, 12))", "inventory", "listings / avg(sales, 12)"),
    ("volume / (sales * median)", "volume", "sales * median"),
    ("(a + b) / total", "total", "a + b"),
])
def test_the_rounded_side_is_a_bare_column_of_the_division(ratio: str, column: str, other: str) -> None:
    form = exact.rounded_form(expressions.parse_series(ratio))
    assert form is not None and (form.column, form.other.text) == (column, other)


@pytest.mark.parametrize("ratio", ["a * b", "a / a", "a / 2", "(a + b) / (c - d)", "a - b / c"])
def test_no_rounded_side_without_a_bare_column_against_others(ratio: str) -> None:
    assert exact.rounded_form(expressions.parse_series(ratio)) is None


def _derived(periods: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A ratio that moves (2% a period) and the column that is it, written in tenths."""
    rng = np.random.default_rng(seed)
    other = 5 * np.exp(np.cumsum(rng.normal(0, 0.02, periods)))
    return np.round(other, 1), other


def test_an_exact_column_off_by_more_than_its_rounding_is_found_and_nothing_else() -> None:
    column, other = _derived(60)
    fit = exact.fit(column, other, 0.1, past_until=45, min_history=24)
    assert fit is not None and fit.checked == fit.held == 45
    assert fit.factor[0] <= 1.0 <= fit.factor[1]
    assert all(fit.holds(t) for t in range(60))
    broken = column.copy()
    broken[50] += 0.2  # two tenths: what a 3-4% change of one input makes of a figure near 5
    fit = exact.fit(broken, other, 0.1, past_until=45, min_history=24)
    assert fit is not None
    assert [t for t in range(60) if not fit.holds(t)] == [50]
    assert fit.off[50] == pytest.approx(abs(broken[50] - other[50]) / 0.1, abs=0.1)  # in steps from the value


def test_a_ratio_that_only_stays_near_its_value_is_not_exact() -> None:
    rng = np.random.default_rng(5)
    _, other = _derived(60)
    noisy = np.round(other * np.exp(rng.normal(0, 0.03, 60)), 1)  # within 3%: an identity, but not an exact one
    assert exact.fit(noisy, other, 0.1, past_until=45, min_history=24) is None


def test_a_short_past_must_hold_throughout_and_be_finely_rounded() -> None:
    column, other = _derived(20)
    assert exact.fit(column, other, 0.1, past_until=8, min_history=24) is not None  # 8 periods, step 2% of ~5
    assert exact.fit(column, other, 0.1, past_until=5, min_history=24) is None  # too few
    coarse = np.round(other)  # whole numbers near 5: a step of 20%, holding by luck is easy
    assert exact.fit(coarse, other, 1.0, past_until=8, min_history=24) is None
    missed = column.copy()
    missed[3] += 0.2
    assert exact.fit(missed, other, 0.1, past_until=8, min_history=24) is None  # a short past allows no miss
    assert exact.fit(missed, other, 0.1, past_until=45, min_history=6) is None  # 1 of 8: under the 98% share


def test_one_miss_in_fifty_past_periods_is_tolerated() -> None:
    column, other = _derived(80)
    column[10] += 0.3
    fit = exact.fit(column, other, 0.1, past_until=60, min_history=24)
    assert fit is not None and (fit.held, fit.checked) == (59, 60)


def _findings(pack: CriteriaPack, c: Candidate) -> list:
    return [f for f in verify(pack, c, analyze(pack, c)).data_findings if f.effect != "note"]


def test_texas_months_of_inventory_is_exact_and_no_clean_night_doubts_it(texas_pack: CriteriaPack) -> None:
    for as_of in (date(2003, 1, 31), *NIGHTS, date(2009, 12, 31)):
        c = _candidate(texas_pack, as_of, "amarillo")
        series = series_of(c, texas_pack.columns, texas_pack.max_window + 1, texas_pack.grain)
        assert series is not None
        identity = next(i for i in texas_pack.integrity.identities if i.name == "months_of_inventory")
        fit = integrity._exact_fit(series, texas_pack.integrity, identity)
        assert fit is not None and fit.held == fit.checked, as_of
        assert not [f for f in integrity.check(texas_pack, c) if f.rule.startswith("exact:")]


@pytest.mark.parametrize("p", [
    Plant("level_shift", "Amarillo", ("sales", "volume"), AMARILLO_BREAK, 1.3),
    Plant("lagged", "Amarillo", ("inventory",), AMARILLO_BREAK, 1),
    Plant("borrowed", "Amarillo", ("inventory",), AMARILLO_BREAK, 1),
], ids=lambda p: f"{p.kind}-{'+'.join(p.columns)}")
def test_a_subtle_break_of_an_input_of_the_identity_is_doubted_on_the_first_night(tmp_path: Path, p: Plant) -> None:
    """Sales and volume 30% up together (within Amarillo's own monthly noise, their own identity intact), inventory a
    month late or another market's: the exact identity is off by more than its rounding on the first night."""
    pack = _planted_pack(tmp_path, p)
    c = _candidate(pack, NIGHTS[0], "amarillo")
    found = [f for f in _findings(pack, c) if f.rule == "exact:months_of_inventory"]
    assert found and found[0].periods[-1] == "2005-04" and found[0].check == "inputs", p.describe()
    assert found[0].size is not None and found[0].size > 0.5
    assert "is not listings / avg(sales, 12)" in found[0].message and "within rounding" in found[0].message
    assert found[0].column == "inventory" and "its identity months_of_inventory gives" in integrity.headline(found[0])
    assert route(analyze(pack, c), verify(pack, c, analyze(pack, c))).section_or_tag != "act_on_these"


def test_a_repeat_the_identity_reproduces_is_not_a_stuck_feed() -> None:
    """Inventory in tenths repeats three times while listings and sales move: listings / 12-month average sales,
    rounded, gives those very repeats; a frozen copy of the same figure that the identity does not give is stuck."""
    rng = np.random.default_rng(11)
    periods = 60
    sales = np.round(500 * np.exp(rng.normal(0, 0.04, periods)))
    listings = np.round(3000 * np.exp(np.cumsum(rng.normal(0, 0.004, periods))))
    other = listings / np.convolve(sales, np.ones(12) / 12, mode="full")[:periods]
    other[:11] = np.nan
    inventory = np.round(other, 1)
    fit = exact.fit(inventory, other, 0.1, past_until=45, min_history=24)
    assert fit is not None
    runs = [t for t in range(46, periods) if inventory[t] == inventory[t - 1] == inventory[t - 2]]
    assert runs, "the sample must hold a run of repeats for the test to say anything"
    t = runs[0]
    assert fit.reproduces(t - 2, t)
    frozen = inventory.copy()
    frozen[t + 1:] = frozen[t]
    moved = [u for u in range(t + 1, periods) if abs(other[u] - frozen[t]) > 0.05 + 1e-9]
    assert moved, "the identity's value must move off the frozen figure for the test to say anything"
    refit = exact.fit(frozen, other, 0.1, past_until=45, min_history=24)
    assert refit is not None and not refit.reproduces(t - 2, moved[0])


@pytest.mark.parametrize("p", [
    Plant("level_shift", "Amarillo", ("listings",), date(1990, 1, 1), 10.0),
    Plant("level_shift", "Amarillo", ("listings",), date(1990, 1, 1), 0.5),
], ids=lambda p: f"listings-x{p.magnitude:g}")
def test_a_column_in_another_unit_throughout_is_off_the_domains_band(tmp_path: Path, p: Plant) -> None:
    """Listings in another unit in every row of the market: its own past holds months of inventory exactly, but at a
    factor of 0.1 (or 2), where the domain's is 1; the entity's own yardstick cannot see a slip it always had, the
    domain's band does, and the market stays out of "Act on these"."""
    pack = _planted_pack(tmp_path, p)
    c = _candidate(pack, NIGHTS[0], "amarillo")
    found = [f for f in _findings(pack, c) if f.rule == "identity:months_of_inventory"]
    assert found and "outside the domain's band 0.97-1.03" in found[0].message, p.describe()
    assert route(analyze(pack, c), verify(pack, c, analyze(pack, c))).section_or_tag != "act_on_these"
