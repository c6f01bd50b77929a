"""Columns tonight's entities hold in proportion (`verifications.proportions`): a size in other units throughout
stands off its proportion to the entity's other sizes across tonight's entities (`off_ratio`). Trial 67's annual
panels."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np

from opportunity_assets.verifications import integrity, integrity_spec, proportions
from opportunity_assets.verifications.series import Findings, Series, format_number
from tests.test_integrity import _candidate
from tests.test_shapes import _csv
from tests.test_shapes import _pack as _shapes_pack


def _off_ratio(now: dict[str, np.ndarray], entity: int, skip: tuple[str, ...] = ()) -> list[str]:
    """The messages `proportions.off_ratio` writes on entity `entity`'s latest row (its figures `now[c][entity]`, the
    eleven years before it alike) against tonight's entities' latest figures `now`."""
    values = {c: np.full(12, v[entity]) for c, v in now.items()}
    series = Series(periods=[str(1980 + i) for i in range(12)], values=values, judged_from=9, per_year=1)
    found = Findings(series)
    proportions.off_ratio(found, integrity_spec.IntegritySpec(), proportions.ratios(now, skip))
    return [f"{f.rule} {f.column} {f.effect}: {f.message}" for f in found.items]


def _states() -> dict[str, np.ndarray]:
    """Twelve states' sizes over two orders of magnitude, held in proportion (output, employment and capital within
    ±20% of each state's size), and a rate beside them that no size says anything of."""
    rng = np.random.default_rng(7)
    size = np.exp(rng.uniform(np.log(300.0), np.log(40_000.0), 12))
    return {"gsp": np.round(size * 30 * rng.uniform(0.85, 1.2, 12)), "emp": np.round(size * rng.uniform(0.85, 1.2, 12)),
            "pcap": np.round(size * 45 * rng.uniform(0.85, 1.2, 12)), "unemp": np.round(rng.uniform(3.0, 11.0, 12), 1)}


def test_a_size_in_other_units_throughout_stands_off_its_proportion_to_the_entitys_other_sizes() -> None:
    """Trial 67: a state's output ×10 in every row spreads no wider than the states' sizes do (over two orders of
    magnitude) and has no break in its own history: it reached act-on. Against the state's employment and capital,
    which tonight's states hold in proportion to it, it is ten times every other state's; the column named is the
    one off against its partners, not a partner off against it alone."""
    states = _states()
    assert proportions.ratios(states).keys() == {"gsp", "emp"} and "unemp" not in proportions.ratios(states)["gsp"]
    assert all(_off_ratio(states, e) == [] for e in range(12))
    slipped = {c: v.copy() for c, v in states.items()}
    slipped["gsp"][4] *= 10
    (message,) = _off_ratio(slipped, 4)
    assert message.startswith(f"off_ratio gsp doubt: gsp {format_number(slipped['gsp'][4])} in 1991 stands to its ")
    assert " stands to its emp (" in message and " times the proportion tonight's 12 entities hold at the median, " \
        in message and ", and off against its pcap too: gsp in other units than theirs" in message
    slipped["unemp"][4] *= 10  # a rate in another unit is no size's partner
    assert len(_off_ratio(slipped, 4)) == 1
    pair = {c: slipped[c] for c in ("gsp", "emp")}  # no third size to tell which of the two
    (message,) = _off_ratio(pair, 4)
    assert message.startswith("off_ratio gsp doubt: ") and message.endswith(
        ": gsp or emp in other units than theirs (a unit slip?)")
    assert _off_ratio(slipped, 4, skip=("gsp",)) == []


def test_the_scan_gives_the_verifier_the_proportions_tonights_entities_hold(tmp_path: Path) -> None:
    """End to end through the scan: twelve states' output, employment and capital growing alike, one state's output
    ×10 in every row: its own history is smooth, its proportion to its other sizes is not; the others' stay clean."""
    states = _states()
    states["gsp"][4] *= 10
    rows = [[f"s{e}", 1983 + i, *(round(float(states[c][e]) * 1.03 ** i, 1) for c in ("gsp", "emp", "pcap"))]
            for e in range(12) for i in range(12)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "gsp", "emp", "pcap"], rows), "grain": "year",
              "year_column": "year", "columns": ["gsp", "emp", "pcap"], "publication_lag_days": 120}
    pack = _shapes_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "gsp"},
                                           "level_then": {"agg": "last", "column": "gsp", "window": [2, 2]}})
    slipped = _candidate(pack, date(1995, 5, 31), "s4")
    assert set(slipped.peer_ratios["gsp"]) == {"emp", "pcap"}
    assert [(f.rule, f.column) for f in integrity.check(pack, slipped)] == [("off_ratio", "gsp")]
    assert [f.rule for f in integrity.check(pack, _candidate(pack, date(1995, 5, 31), "s5"))] == []

