"""The skeptic judges an entity's moves against its peers' too: a change net of the move tonight's entities made
alike into its period (`shifts.peer_relative`), and a column they carry alike (`peers.in_step`). Trial 53."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from opportunity_assets.candidates.logic import scan
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications import integrity_spec, peers, shifts
from opportunity_assets.verifications.series import Findings, Series, Yardstick
from opportunity_assets.verifications.shifts import ColumnFacts
from tests.test_shapes import _csv
from tests.test_shapes import _pack as _shapes_pack

_QUARTERS = 48


def _shared_moves(seed: int) -> np.ndarray:
    """Per quarter, the median move of the night's entities: the season, the weather, a national index (±10% a
    quarter, no two years alike)."""
    return np.random.default_rng(seed).normal(0.0, 0.1, _QUARTERS)


def _quarterly_rules(moves: np.ndarray, factor: float, *, own: np.ndarray | None = None,
                     given: np.ndarray | None = None) -> list[str]:
    """The shift rules found on an entity that moves with `moves` (plus ±1.5% of its own, or `own`), ×`factor` from
    its second-latest quarter on, judged with `given` (default `moves`) as the night's shared moves."""
    rng = np.random.default_rng(7)
    steps = moves + (rng.normal(0.0, 0.015, _QUARTERS) if own is None else own)
    values = 100.0 * np.exp(np.cumsum(steps))
    values[-2:] *= factor
    series = Series(periods=[f"q{i}" for i in range(_QUARTERS)], values={"x": values}, judged_from=_QUARTERS - 4,
                    per_year=4)
    shared = moves if given is None else given
    found = Findings(series)
    shifts.shifts(found, integrity_spec.IntegritySpec(),
                  ColumnFacts("x", peers={str(_QUARTERS - 1 - t): float(shared[t]) for t in range(1, _QUARTERS)}))
    return [f.rule for f in found.items]


def test_a_shift_hidden_in_a_shared_season_is_found_net_of_the_peers_move() -> None:
    """Trial 53: Western Australia's takings swing with the season every state shares (±20% a quarter), which widens
    its own yardstick to ±8%: takings ×1.2 reached act-on. Net of tonight's entities' median move into each quarter
    its changes are ±2%, and the ×1.2 is far outside them; clean quarters are not. Without the shared moves it is
    judged by its own yardstick, as before."""
    moves = _shared_moves(1)
    assert _quarterly_rules(moves, 1.0) == []
    assert _quarterly_rules(moves, 1.2) == ["level_shift"]
    assert _quarterly_rules(moves, 1.2, given=np.zeros(_QUARTERS)) == []  # no shared move: its own yardstick


def test_peers_whose_moves_are_unrelated_narrow_nothing() -> None:
    """A column tonight's entities do not move together gains nothing by the netting: its net changes are no narrower
    than its own, and it is judged as before (no new doubt of a clean move, the same finding of a gross one)."""
    own = np.random.default_rng(3).normal(0.0, 0.05, _QUARTERS)
    unrelated = _shared_moves(2)
    assert _quarterly_rules(np.zeros(_QUARTERS), 1.0, own=own, given=unrelated) == []
    assert _quarterly_rules(np.zeros(_QUARTERS), 1.2, own=own, given=unrelated) == []
    assert _quarterly_rules(np.zeros(_QUARTERS), 3.0, own=own, given=unrelated) == ["level_shift"]


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


def test_the_scan_gives_every_grain_its_shared_moves_and_levels(tmp_path: Path) -> None:
    """A monthly panel's candidates carry tonight's entities' median change into each period of the kept history
    (before, annual grains only), and the value most of them carry alike where they do (an index)."""
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
    moves = candidate.shared_changes["x"]
    assert moves["0"] == pytest.approx(season[4] - season[3], abs=5e-3)  # April into May 2020, the latest known
    assert moves["12"] == pytest.approx(moves["0"], abs=1e-6)
    assert "x" not in candidate.shared_levels  # each entity's own figures
    assert candidate.shared_levels["index"]["0"] == 50.0 + 64


def test_a_unit_change_every_entity_made_alike_is_not_taken_out_as_a_shared_move() -> None:
    """Every entity ×0.1 into a quarter is the feed's change of units, not the world's: that move is not netted out
    (`shifts._unit_sized`), and the entity's fall is still its level shift."""
    moves = _shared_moves(1)
    moves[-2] += math.log(0.1)
    assert _quarterly_rules(moves, 1.0) == ["level_shift"]


def test_a_net_move_the_entity_made_a_year_earlier_is_its_own_season() -> None:
    """Trial 53: an employment industry whose staff drop every January while the others' do not was doubted at 4.5
    MADs of its changes net of theirs. A net move the entity made a year earlier the same way at least half as far is
    its own season: that change is judged by its own yardsticks (a year earlier among them) instead."""
    stick = Yardstick(median=0.0, scale=0.01, count=40, since="q0")
    net = np.zeros(12)
    net[-1] = -0.05
    assert shifts.PeerRelative(net, np.zeros(12), stick, 4).holds(11)
    net[-5] = -0.03
    assert not shifts.PeerRelative(net, np.zeros(12), stick, 4).holds(11)
    net[-5] = 0.03  # the other way: no season of its own
    assert shifts.PeerRelative(net, np.zeros(12), stick, 4).holds(11)
