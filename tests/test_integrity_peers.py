"""The skeptic judges a column tonight's entities carry alike (a national index in every state's rows) against their
figure (`peers.in_step`). Trial 53 (its change judged net of the peers' move, `shifts.peer_relative`, was withdrawn:
49 more clean held-out Texas picks doubted, none planted caught)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np

from opportunity_assets.candidates.logic import scan
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications import integrity_spec, peers
from opportunity_assets.verifications.series import Findings, Series
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


