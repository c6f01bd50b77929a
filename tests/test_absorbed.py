"""Another entity's events counted as the candidate's (`verifications.absorbed`, rule `integrity.absorbed`): found by
the scan, which holds every entity, doubted by the verifier, in words."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.routing import route
from opportunity_assets.candidates.logic import scan
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.records import AbsorbedEvents, DataFinding, Verdict
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications import integrity
from opportunity_assets.verifications.absorbed import absorbed_events
from opportunity_assets.verifications.integrity_spec import AbsorbedRule
from opportunity_assets.verifications.logic import verify
from tests.conftest import PACK

PERIODS = 30


def _history(levels: dict[str, float], seed: int = 1,
             moved: tuple[str, str, int] | None = None, season: float = 1.0) -> pl.DataFrame:
    """Poisson counts of events per entity and period (`periods_ago` 0 the latest); `moved`: (from, to, periods
    back) the first entity's events counted as the second's from that period on; `season`: every entity's level
    times this over the latest 4 periods."""
    rng = np.random.default_rng(seed)
    counts = {e: rng.poisson(level * np.where(np.arange(PERIODS) < 4, season, 1.0)).astype(float)
              for e, level in levels.items()}
    if moved is not None:
        source, target, back = moved
        counts[target][:back + 1] += counts[source][:back + 1]
        counts[source][:back + 1] = 0.0
    return pl.DataFrame([{"entity_id": e, "entity_name": e.upper(), "periods_ago": back, "n": counts[e][back]}
                         for e in levels for back in range(PERIODS)])


LEVELS = {f"e{i:02d}": float(level) for i, level in enumerate([20, 35, 50, 80, 120, 150, 200, 260, 300, 400,
                                                                 25, 45, 60, 90, 110, 170, 230, 280, 350, 500])}


def _found(history: pl.DataFrame, going: list[str]) -> dict[str, dict[str, AbsorbedEvents]]:
    return absorbed_events(history, ["n"], ["n"], going, 7, AbsorbedRule())


def test_a_rise_matching_another_entitys_fall_from_the_same_period_is_found() -> None:
    """e09's 400 events a period counted as e07's from 3 periods back: e07 is up by about 1,600, e09 down by as
    much, both from the same period, and no other pair moved so."""
    history = _history(LEVELS, moved=("e09", "e07", 3))
    found = _found(history, list(LEVELS))
    assert list(found) == ["e07"]
    record = found["e07"]["n"]
    assert (record.other, record.periods) == ("E09", 4)
    assert abs(record.rise - 1600) < 150 and abs(record.fall - 1600) < 100
    assert record.rise_sds > 4 and record.fall_sds > 4


def test_clean_counts_a_season_and_an_ambiguous_fall_find_nothing() -> None:
    for seed in range(5):  # Poisson noise alone, several draws
        assert _found(_history(LEVELS, seed=seed), list(LEVELS)) == {}
    # the latest 4 periods 40% up for every entity: no entity's rise is another's fall
    assert _found(_history(LEVELS, season=1.4), list(LEVELS)) == {}
    # a season lifting everyone does not hide a move of events beyond it
    assert list(_found(_history(LEVELS, moved=("e09", "e07", 3), season=1.4), list(LEVELS))) == ["e07"]
    # an entity that stopped while two others of its size rose by as much: which one took its events, if any, is
    # not the code's to say
    twins = {**LEVELS, "f1": 200.0, "f2": 200.0, "gone": 200.0}
    history = _history(twins, moved=("gone", "f1", 3))
    doubled = history.with_columns(pl.when((pl.col("entity_id") == "f2") & (pl.col("periods_ago") <= 3))
                                   .then(pl.col("n") * 2).otherwise(pl.col("n")).alias("n"))
    assert "f1" in _found(history, list(twins)) and _found(doubled, list(twins)) == {}


def test_entities_of_a_few_events_are_no_season() -> None:
    """Trial 97 (MASS Aids2, diagnoses by state and transmission category a month): five of the eight groups with a
    level averaged one diagnosis a month, their chance zeros made the median entity's move 0.25, and a 30-a-month
    group merged into another read as that season. Each entity's move weighs by its level."""
    levels = {**{f"tiny{i}": 0.7 for i in range(10)}, "a": 20.0, "b": 30.0, "c": 25.0, "d": 40.0, "e": 35.0}
    for seed in range(12):  # (the median unweighted: 7 of the 12 draws found)
        found = _found(_history(levels, seed=seed, moved=("b", "a", 3)), list(levels))
        assert list(found) == ["a"] and found["a"]["n"].other == "B", (seed, found)


def test_only_candidates_going_on_and_events_that_add_up_are_judged() -> None:
    history = _history(LEVELS, moved=("e09", "e07", 3))
    assert _found(history, ["e01", "e02"]) == {}
    events = load_criteria(PACK.parent / "nyc_routes.yaml").source
    assert (events.added_columns, events.counted_columns) == (["flights"], ["flights"])  # not a share or an average
    assert load_criteria(PACK).source.added_columns == []  # a panel's columns need not add up


def _moved_night(pack: CriteriaPack, tmp_path: Path, source: str, target: str, start: date) -> CriteriaPack:
    flights = pl.read_parquet(pack.source_path)
    moved = (pl.col("route") == source) & (pl.col("date").str.to_date() >= start)
    path = tmp_path / "flights.parquet"
    flights.with_columns(route=pl.when(moved).then(pl.lit(target)).otherwise("route")).write_parquet(path)
    return pack.model_copy(update={"source": pack.source.model_copy(update={"path": str(path)})})


def _fate(pack: CriteriaPack, as_of: date, cid: str) -> tuple[Verdict, str, list[DataFinding]]:
    snapshot = read_snapshot(pack, as_of)
    found, _ = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)
    (candidate,) = [c for c in found if c.id == cid]
    a = analyze(pack, candidate)
    v = verify(pack, candidate, a)
    return a.verdict, route(a, v).section_or_tag, [f for f in v.data_findings if f.rule == "absorbed"]


def test_another_routes_flights_counted_as_a_picks_own_keep_it_out_of_act_on(tmp_path: Path) -> None:
    """JFK-ATL's flights recoded as EWR-ATL's from 2013-W08 (the same destination from another airport: a category
    recoded): EWR-ATL's schedule grows 45% in three weeks, and it was STRONG + CONFIRMED in "Act on these"; each
    week's rise is JFK-ATL's fall, which no other route matches."""
    pack = load_criteria(PACK.parent / "nyc_routes.yaml")
    planted = _moved_night(pack, tmp_path, "JFK-ATL", "EWR-ATL", date(2013, 2, 18))
    night = date(2013, 3, 17)
    assert _fate(pack, night, "ewr-atl") == (Verdict.STRONG, "act_on_these", [])
    verdict, section, (finding,) = _fate(planted, night, "ewr-atl")
    assert (verdict, section) == (Verdict.STRONG, "needs_your_judgment")
    assert (finding.effect, finding.check, finding.periods) == ("doubt", "inputs", ["2013-W08", "2013-W09", "2013-W10"])
    assert finding.message == (
        "flights rose by 113.8 over its level before in 2013-W08..2013-W10 (6.1 robust SDs of its own noise) as "
        "JFK-ATL's fell by 107.6 from the same period (8.8 of its own), and no other entity's moved so: JFK-ATL's "
        "events counted as this one's (a category recoded, two ids merged?)")
    assert finding.to_resolve == "confirm 2013-W08..2013-W10 flights with the source: JFK-ATL's fell by as much"
    assert integrity.headline(finding) == "flights up by what another entity's fell, 3 periods to 2013-W10"
    # a note reports it and moves nothing
    noted = planted.model_copy(update={"integrity": planted.integrity.model_copy(update={
        "absorbed": AbsorbedRule(effect="note")})})
    assert _fate(noted, night, "ewr-atl")[:2] == (Verdict.STRONG, "act_on_these")
