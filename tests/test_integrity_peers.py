"""The skeptic judges a column tonight's entities carry alike (a national index in every state's rows) against their
figure (`peers.in_step`). Trial 53 (its change judged net of the peers' move, `shifts.peer_relative`, was withdrawn:
49 more clean held-out Texas picks doubted, none planted caught)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from opportunity_assets.candidates.logic import scan
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications import integrity, integrity_spec, peers, shifts
from opportunity_assets.verifications.series import Findings, Series
from opportunity_assets.verifications.shifts import ColumnFacts
from tests.test_integrity import _annual_tax_candidate
from tests.test_shapes import _csv
from tests.test_shapes import _pack as _shapes_pack


def _index_rules(values: np.ndarray, shared: np.ndarray) -> list[str]:
    """The messages `peers.in_step` writes on an entity's column against the value the night's entities carry."""
    series = Series(periods=[f"q{i}" for i in range(len(values))], values={"CPI": values},
                    judged_from=len(values) - 4, per_year=4)
    found = Findings(series)
    peers.in_step(found, integrity_spec.IntegritySpec(), "CPI",
                  {str(len(shared) - 1 - t): float(v) for t, v in enumerate(shared)})
    return [f.message for f in found.items]


def test_a_column_every_entity_carries_alike_is_judged_against_the_others_figure() -> None:
    """Trial 53: the Australian accommodation source's CPI is one national index repeated in every state's rows. A
    state's CPI frozen, a quarter late or ×10 in every row reached act-on: +0.9% a quarter is within its own MADs'
    floor, and ×10 throughout has no break at all. Against the figure the other states carry it is plain."""
    index = np.round(67.0 * np.exp(np.cumsum(np.full(30, 0.009))), 1)
    assert _index_rules(index.copy(), index) == []
    frozen = index.copy()
    frozen[-2:] = frozen[-3]
    (message,) = _index_rules(frozen, index)
    assert message.startswith(f"CPI {frozen[-1]:g} in q29 is not the {index[-1]:g} most of tonight's entities carry "
                              "alike, as it was in 26 of its 26 past periods with one since q0: it moved +0.0% into "
                              "it while theirs moved +0.")
    late = index.copy()
    late[-3:] = index[-4:-1]
    assert len(_index_rules(late, index)) == 1
    (unit,) = _index_rules(10 * index, index)
    assert "is 10 times the" in unit and "in other units than theirs throughout (a unit slip?)" in unit
    assert _index_rules(1.05 * index, index) == []  # a fixed multiple but no unit slip: a rebased index


def test_a_constant_every_entity_keeps_is_no_index_to_follow() -> None:
    """A value most entities hold alike that never moves (a schedule of 162 games, a rate set by law) is no series
    the entity's must follow: its own change away from it is judged by its own history, not doubted here."""
    constant = np.full(30, 162.0)
    changed = constant.copy()
    changed[-1] = 154.0
    assert _index_rules(changed, constant) == []


def test_the_scan_gives_every_grain_the_levels_its_entities_carry_alike(tmp_path: Path) -> None:
    """A monthly panel's candidates carry the value most of tonight's entities carry alike in each period of the kept
    history where they do (an index); the median change into each period stays an annual grain's (within a year
    each entity's own season moves it apart from it)."""
    months = [f"{2015 + m // 12}-{m % 12 + 1:02d}" for m in range(66)]
    season = np.log([1.0, 0.9, 1.1, 1.2, 1.0, 0.8, 1.05, 1.15, 0.95, 1.0, 0.9, 1.1])
    rows: list[list[object]] = [[f"s{e}", month, float(100 * (1 + e)) * math.exp(season[m % 12]), 50.0 + m]
                                for e in range(10) for m, month in enumerate(months)]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "x", "index"], rows), "period_column": "month",
              "period_format": "%Y-%m", "grain": "month", "columns": ["x", "index"], "publication_lag_days": 10}
    pack = _shapes_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "x"},
                                           "level_then": {"agg": "last", "column": "x", "window": [2, 2]}})
    snapshot = read_snapshot(pack, date(2020, 6, 30))
    found, _ = scan(pack, date(2020, 6, 30), snapshot.anchor_period, snapshot.metrics, snapshot.history)
    candidate = next(c for c in found if c.went_on)
    assert candidate.shared_changes == {}
    assert "x" not in candidate.shared_levels  # each entity's own figures
    assert candidate.shared_levels["index"]["0"] == 50.0 + 64




def _annual_shift(changes: list[float], move: float, shared: float | None = None,
                  spread: float | None = None, usual: float | None = None) -> list[str]:
    """The messages `shifts.shifts` writes on an annual series of `changes` (log) then `move` into its second-latest
    year, held the latest; with tonight's entities' median change into that year (`shared`) and their spread about
    it (`spread`), and in the eight years before a spread of `usual` about no change, every judged year read by the
    score."""
    level = 100.0 * np.exp(np.cumsum([0.0, *changes, move, 0.0]))
    series = Series(periods=[str(1960 + i) for i in range(len(level))], values={"x": level},
                    judged_from=len(level) - 3, per_year=1)
    found = Findings(series)
    before = range(2, 10) if usual is not None else range(0)
    back = {"1": shared, **{str(b): 0.0 for b in before}} if shared is not None else None
    width = {"1": spread, **{str(b): usual for b in before if usual is not None}} if spread is not None else None
    shifts.shifts(found, integrity_spec.IntegritySpec(),
                  ColumnFacts("x", frozenset(range(3)), shared=back, spread=width))
    return [f.message for f in found.items]


_NOISY = [0.04, -0.04, 0.0, 0.05, -0.05] * 3
"""Fifteen annual changes within ± 5%: a scale of about 5.9%, a short history's."""
_CALM = [0.005, -0.005, 0.0, 0.004, -0.004] * 3
"""Fifteen annual changes within ± 0.5%."""


def test_a_move_unusual_for_the_entity_and_far_from_tonights_entities_is_a_shift() -> None:
    """Trial 67: on an annual panel the entity's own yardstick is 8-20 past changes; a planted ×1.15-×1.22 in a
    state's output read 3.4-3.7 MADs of them, under the 4 a scored period needs, and reached act-on, while the
    states' changes into that year lay within ± 2%. Unusual for the entity (3 MADs or more) and far out against
    tonight's entities that year, it is a shift; either alone is not."""
    assert _annual_shift(_NOISY, 0.2) == []  # 3.4 MADs of its own: under 4
    (message,) = _annual_shift(_NOISY, 0.2, shared=0.02, spread=0.02)
    assert message == ("x 122.1 in 1976 moved +22% from the period before: 3.4 MADs above its period-on-period "
                       "changes since 1961 (typically +0% ± 5.9%), and 8.9 MADs above tonight's entities' changes "
                       "into that period (typically +2% ± 2.0%), and it stays")
    assert _annual_shift(_NOISY, 0.12, shared=0.02, spread=0.01) == []  # 2.0 MADs of its own: its usual move
    assert _annual_shift(_NOISY, 0.2, shared=0.17, spread=0.04) == []  # 0.75 MADs from the states: its own 3.4 stand


def test_tonights_entities_moving_alike_are_told_by_the_scale_their_distance_is_counted_in() -> None:
    """Trial 104 (stevedata PPGE): most of 20 countries' capital openness stayed put into 2015 (a spread of 0), and
    Greece's fall with its capital controls read "100.5 MADs below tonight's entities' changes into that period
    (typically +0% ± 0.0%)": no distance is counted in a scale of 0. The finding names the floor it was counted in."""
    (message,) = _annual_shift(_NOISY, 0.2, shared=0.0, spread=0.0)
    assert message.endswith("39.6 MADs above tonight's entities' changes into that period (typically +0% ± 0.5%), "
                            "and it stays")


def test_a_move_within_a_year_tonights_entities_spread_unusually_wide_is_no_shift() -> None:
    """Trial 67: Produc's private capital is re-benchmarked every five years, and in those years the states move by
    -8% to +25%; a calm state's +20% was 8 MADs and more of its own changes, and doubted 8 of 62 clean act-on
    picks. A move within the spread tonight's entities made into such a year (twice their usual spread or more) is
    theirs. In a usual year the entity's own yardstick stands, however far the entities' growth rates spread as a
    rule (stop 49's held-out panels: a country's infant mortality frozen a year, 0% against its -3% ± 0.5%, within
    the countries' usual spread, had been excused and reached act-on); so it does where the usual spread is not
    known. A unit-sized move every entity made alike is the feed's, never an excuse."""
    assert _annual_shift(_CALM, 0.18) != []
    assert _annual_shift(_CALM, 0.18, shared=0.06, spread=0.10, usual=0.01) == []
    assert _annual_shift(_CALM, 0.18, shared=0.06, spread=0.10, usual=0.08) != []  # their usual spread: its own
    assert _annual_shift(_CALM, 0.18, shared=0.06, spread=0.10) != []
    assert _annual_shift(_CALM, 0.18, shared=0.0, spread=0.01, usual=0.01) != []
    slip = math.log(0.1)
    (message,) = _annual_shift(_CALM, slip, shared=slip, spread=0.01, usual=0.01)
    assert "tonight's entities moved alike into that period" in message


def test_the_scan_gives_the_spread_of_tonights_entities_changes_into_each_year(tmp_path: Path) -> None:
    """Each candidate going on carries, beside the median change into each judged year, the robust spread of the
    scanned entities' changes about it: 1.4826 × their median absolute deviation, each change on its entity's own
    log scale."""
    moves = [0.0, 0.01, -0.01, 0.03, -0.03, 0.05, -0.05, 0.08, -0.08, 0.2]  # ten states' moves into 1993
    rows = [[f"s{e}", year, round(100.0 * (1 + e) * math.exp(moves[e] if year == 1993 else 0.0), 6)]
            for e in range(10) for year in range(1985, 1994)]
    candidate = _annual_tax_candidate(tmp_path, rows)
    deviations = np.abs(np.array(moves) - np.median(moves))
    assert candidate.shared_spreads["tax"]["0"] == pytest.approx(1.4826 * float(np.median(deviations)), rel=0.02)
    assert sorted(candidate.shared_spreads["tax"]) == sorted(candidate.shared_changes["tax"])
    assert candidate.shared_spreads["tax"]["1"] < 1e-3


def _off_level(latest: np.ndarray, entity: int) -> list[str]:
    """The messages `peers.off_level` writes on entity `entity`'s series (its latest figure `latest[entity]`, the
    eleven years before it at that level) against tonight's entities' latest figures `latest`."""
    values = np.full(12, latest[entity])
    series = Series(periods=[str(1980 + i) for i in range(12)], values={"x": values}, judged_from=9, per_year=1)
    found = Findings(series)
    peers.off_level(found, integrity_spec.IntegritySpec(), "x", peers.levels(latest))
    return [f"{f.rule} {f.effect}: {f.message}" for f in found.items]


def test_a_figure_far_outside_the_band_tonights_entities_hold_and_beyond_every_other_is_in_other_units() -> None:
    """Trial 67: a state's income a head, or its unemployment rate, ×10 in every row left no break in its own
    history and reached act-on. Against the levels tonight's entities hold (rates within a band) it is plain; a
    column of sizes spreads its entities over orders of magnitude, and a figure ×10 the largest there, or one far out
    but not beyond every other's, is no unit slip."""
    rates = np.array([4.1, 5.0, 6.2, 5.5, 7.9, 3.6, 4.8, 6.6, 5.2, 9.1, 4.4, 5.9])
    assert all(_off_level(rates, e) == [] for e in range(len(rates)))
    slipped = rates.copy()
    slipped[3] *= 10
    (message,) = _off_level(slipped, 3)
    assert message == ("off_level doubt: x 55 in 1991 is 7.6 MADs above the levels of tonight's 12 entities "
                       "(typically 5.539, spread by a factor of 1.35) and 6.0 times above every other entity's "
                       "(9.1): in other units than theirs (a unit slip?)")
    tenth = rates.copy()
    tenth[0] /= 10
    assert _off_level(tenth, 0)[0].startswith("off_level doubt: x 0.41 in 1991 is ")
    two = slipped.copy()
    two[7] *= 10  # another as far out: the first is beyond every other entity's but one
    assert _off_level(two, 3) == []
    sizes = np.array([120.0, 4_500.0, 38.0, 980.0, 15_000.0, 260.0, 7.5, 2_100.0, 640.0, 55.0, 31_000.0, 410.0])
    sizes[10] *= 10
    assert _off_level(sizes, 10) == []


def test_a_figure_most_entities_carry_alike_is_judged_by_in_step_not_by_its_level(tmp_path: Path) -> None:
    """A national index every state's rows carry (one figure, most entities alike) has no spread of levels: a state
    carrying it at a fixed multiple (a regional index at 1.06 of the national) is `in_step`'s to judge, and holds;
    no `off_level` for it, whose floor of a spread would read 6% as 12 MADs."""
    index = 67.0 * np.exp(np.cumsum(np.full(12, 0.009)))
    rows = [[f"s{e}", 1983 + i, round(float(v) * (1.06 if e == 0 else 1.0), 4)]
            for e in range(10) for i, v in enumerate(index)]
    from tests.test_integrity import _candidate

    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "tax"], rows), "grain": "year", "year_column": "year",
              "columns": ["tax"], "publication_lag_days": 120}
    pack = _shapes_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "tax"},
                                           "level_then": {"agg": "last", "column": "tax", "window": [2, 2]}})
    candidate = _candidate(pack, date(1995, 5, 31), "s0")
    assert candidate.shared_levels["tax"] and candidate.peers["tax"]["level_scale"] < 0.01
    assert [f.rule for f in integrity.check(pack, candidate)] == []


def test_the_largest_entity_far_above_a_tight_cluster_is_no_unit_slip_unless_a_slips_size_beyond_the_next() -> None:
    """Stop 49's held-out firms: seven of ten firms invest within 20% of each other, so the largest firm's real
    figure, 10 times theirs, lies 12 MADs out and above every other firm's; but only 1.4 times the next firm's, where
    a unit slip would stand at least its square root (×3.2) beyond every other entity."""
    firms = np.array([569.0, 410.0, 56.0, 48.0, 62.0, 51.0, 58.0, 55.0, 53.0, 60.0])
    assert _off_level(firms, 0) == []
    slipped = firms.copy()
    slipped[1] *= 10  # the second firm's figure in other units: 7.2 times the largest's
    (message,) = _off_level(slipped, 1)
    assert " and 7.2 times above every other entity's (569): " in message
