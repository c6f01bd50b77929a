"""A column carrying another entity's figures (`verifications.copies`): found across the night's entities, judged
by the chance of a coincidence, never on a column every entity shares or on counts that coincide by chance."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.routing import route
from opportunity_assets.candidates.logic import scan
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.records import Status, Verdict
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications import integrity
from opportunity_assets.verifications.copies import copied_figures, scaled_copies
from opportunity_assets.verifications.integrity_spec import CopyRule
from opportunity_assets.verifications.logic import verify
from tests.conftest import PACK, write_pack
from tests.plants import Plant, read_source, write_source
from tests.test_integrity import AMARILLO_BREAK, NIGHTS, _candidate, _planted_pack

RULE = CopyRule()


def _history(series: dict[str, list[float]], column: str = "x") -> pl.DataFrame:
    """Entity -> values oldest first, as the scan's history frame (periods_ago counted back from the latest)."""
    rows = [{"entity_id": e, "entity_name": e.upper(), "periods_ago": len(v) - 1 - i, column: value}
            for e, v in series.items() for i, value in enumerate(v)]
    return pl.DataFrame(rows, schema={"entity_id": pl.Utf8, "entity_name": pl.Utf8, "periods_ago": pl.Int64,
                                      column: pl.Float64})


def _market(seed: int, level: float, periods: int = 40) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(v) for v in np.round(level * np.exp(np.cumsum(rng.normal(0, 0.05, periods))))]


def test_a_column_copied_from_another_entity_is_found_naming_it() -> None:
    markets = {f"m{i}": _market(i, 300 + 40 * i) for i in range(12)}
    own = markets["m3"]
    markets["m3"] = own[:-3] + markets["m5"][-3:]  # the latest three periods are m5's
    found = copied_figures(_history(markets), ["x"], {"m3", "m5", "m7"}, RULE)
    assert set(found) == {"m3"}  # m5 gave its figures: its series goes on as it was, m3's broke into the run
    copy = found["m3"]["x"]
    # judged over the whole run, three periods, though two are the rule's fewest
    assert copy.others == ["M5"] and copy.periods == 3 and copy.chance < RULE.max_probability
    assert "resolution 1" in copy.basis
    two = dict(markets, m3=own[:-2] + markets["m5"][-2:])  # only two periods: not unlikely enough here
    assert copied_figures(_history(two), ["x"], {"m3"}, RULE) == {}


def test_a_column_every_entity_shares_or_small_counts_alike_by_chance_is_no_copy() -> None:
    index = _market(99, 100.0)  # a national price index, the same for every state
    shared = {f"s{i}": index for i in range(8)}
    assert copied_figures(_history(shared), ["x"], {"s1"}, RULE) == {}
    rng = np.random.default_rng(3)  # counts around 5: three alike in a row happen among 200 entities
    small = {f"e{i}": [float(v) for v in rng.poisson(5, 40)] for i in range(200)}
    small["e1"] = small["e1"][:-3] + small["e2"][-3:]
    assert copied_figures(_history(small), ["x"], {"e1"}, RULE) == {}
    flat = {f"f{i}": _market(i, 500) for i in range(10)}  # unchanged runs are `stuck`'s, not a copy
    flat["f1"] = flat["f1"][:-3] + [7.0] * 3
    flat["f2"] = flat["f2"][:-3] + [7.0] * 3
    assert copied_figures(_history(flat), ["x"], {"f1"}, RULE) == {}


def test_a_shared_series_at_a_new_low_is_still_no_copy() -> None:
    """The US short rate every country's row carries fell in 1991-92 below any figure of the fifteen years before:
    no past coincidence lay near the new figures, and 16 countries were each other's "copy" at a chance of 3e-13.
    Carried equal throughout the past by three or more entities, the series is the domain's."""
    past = _market(99, 100.0)
    index = [*past[:-3], round(min(past) * 0.6), round(min(past) * 0.5), round(min(past) * 0.45)]
    shared = {f"s{i}": index for i in range(8)} | {f"m{i}": _market(i, 300 + 40 * i) for i in range(6)}
    assert copied_figures(_history(shared), ["x"], {"s1"}, RULE) == {}
    markets = {f"m{i}": _market(i, 300 + 40 * i) for i in range(12)}  # a copy taken tonight by two is still one
    markets["m3"] = markets["m3"][:-3] + markets["m5"][-3:]
    markets["m4"] = markets["m4"][:-3] + markets["m5"][-3:]
    assert set(copied_figures(_history(markets), ["x"], {"m3", "m4"}, RULE)) == {"m3", "m4"}


def test_two_entities_equal_as_far_back_as_they_go_are_both_doubted() -> None:
    markets = {f"m{i}": _market(i, 300 + 40 * i) for i in range(12)}
    markets["m3"] = markets["m5"]  # the source lists one market twice
    assert set(copied_figures(_history(markets), ["x"], {"m3", "m5"}, RULE)) == {"m3", "m5"}


def test_the_bundled_data_carries_killeens_figures_as_el_pasos_in_2005(texas_pack: CriteriaPack) -> None:
    """A real defect of the public Texas file, found without tuning: El Paso's sales, volume and median for June to
    September 2005 are Killeen-Fort Hood's, figure for figure (El Paso's series breaks into them, from 559 sales
    in May, and out again to 513 in October; Killeen's goes on as it was). El Paso fails its coverage filter, so
    the copy reaches no brief; Killeen, going on, is not doubted for it."""
    as_of = date(2005, 10, 31)
    snapshot = read_snapshot(texas_pack, as_of)
    found = copied_figures(snapshot.history, texas_pack.columns, {"El Paso", "Killeen-Fort Hood"}, RULE)
    assert set(found) == {"El Paso"} and set(found["El Paso"]) == {"sales", "volume", "median"}
    assert all(c.others == ["Killeen-Fort Hood"] and c.chance < 1e-4 for c in found["El Paso"].values())
    scanned, _ = scan(texas_pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history)
    killeen = next(c for c in scanned if c.id == "killeen-fort-hood")
    assert killeen.went_on and killeen.copies == {}
    assert not any(c.copies for c in scanned if c.went_on)


def test_a_copied_column_is_a_finding_naming_the_other_entity(tmp_path: Path) -> None:
    pack = _planted_pack(tmp_path, Plant("borrowed", "Amarillo", ("sales", "volume", "median", "listings",
                                                                  "inventory"), AMARILLO_BREAK, 9))
    c = _candidate(pack, NIGHTS[-1], "amarillo")
    # inventory, in tenths near 6, coincides between markets now and then: its copy is no evidence
    assert c.went_on and set(c.copies) == {"sales", "volume", "median", "listings"}
    v = verify(pack, c, analyze(pack, c))
    assert v.status == Status.UNCERTAIN
    other = c.copies["volume"].others[0]
    copied = next(f for f in v.data_findings if f.rule == "copied" and f.column == "volume")
    assert copied.check == "inputs" and copied.effect == "doubt"
    # every period of the copy, from the break on: the run is judged as far back as it goes
    assert copied.periods == ["2005-04", "2005-05", "2005-06", "2005-07"] and copied.size == 4
    assert f"in 2005-04..2005-07 are {other}'s figures exactly, period for period" in copied.message
    assert copied.to_resolve == f"confirm 2005-04..2005-07 volume with the source: it matches {other}'s"
    assert integrity.headline(copied, blinded=True) == \
        "volume equals another entity's figures for the 4 periods to 0 periods back"


def test_the_past_runs_near_a_value_are_the_runs_whose_latest_value_is_near_it() -> None:
    """The past is picked by the runs' starting rows (a wide night's history is never shifted whole): the same
    runs as every run of the history, filtered to the band."""
    from opportunity_assets.verifications import copies

    rng = np.random.default_rng(1)
    rows = [{"entity_id": f"e{e}", "periods_ago": p,
             "__value": float(rng.poisson(5)) if rng.random() > 0.05 else float("nan")}
            for e in range(50) for p in range(30)]
    frame = pl.DataFrame(rows).with_columns(pl.col("entity_id").rank("dense").alias("__code")) \
        .sort("__code", "periods_ago").select("entity_id", "__code", "periods_ago", "__value")
    every = copies._windows(frame, 3).filter(pl.col("periods_ago") >= 1)
    for values in ([5.0], [2.0, 9.0], [4.0, 4.2]):
        near = pl.any_horizontal(*((pl.col("__v0") - v).abs() <= 0.1 * abs(v) for v in values))
        expected = every.filter(near).join(frame.select("entity_id", "__code").unique(), on="entity_id") \
            .select("__code", "periods_ago", "__v0", "__v1", "__v2").sort("__code", "periods_ago")
        got = copies._runs_near(frame, 3, values).sort("__code", "periods_ago")  # (each run's entity by its code)
        assert expected.height > 0 and got.select(expected.columns).equals(expected)


def test_a_short_or_degenerate_history_is_judged_without_failing() -> None:
    """A real annual panel (AER::Fatalities' state beer taxes, often unchanged year to year) with three years
    published: states share their three figures, but no past run is whole (a run needs three periods before the
    latest). That is no evidence of a copy, and no crash either; nor are one period, one entity, a column of
    nulls, or fewer periods than a run."""
    from opportunity_assets.verifications import copies

    taxes = {"al": [0.5, 0.6, 0.6], "ar": [0.5, 0.6, 0.6], "az": [0.2, 0.2, 0.3], "ca": [0.2, 0.2, 0.3],
             "co": [0.1, 0.1, 0.1], "ct": [0.6, 0.6, 0.6]}
    history = _history(taxes, "beertax")
    assert copied_figures(history, ["beertax"], set(taxes), RULE) == {}
    frame = history.sort("entity_id", "periods_ago").select(
        "entity_id", pl.col("entity_id").rank("dense").alias("__code"), "periods_ago",
        pl.col("beertax").alias("__value"))
    assert copies._runs_near(frame, 3, [0.6, 0.3]).height == 0  # rows near them, no whole run of three
    nulls = history.with_columns(pl.lit(None, dtype=pl.Float64).alias("empty"))
    assert copied_figures(nulls, ["beertax", "empty"], set(taxes), RULE) == {}
    one_period = history.filter(pl.col("periods_ago") == 0)
    assert copied_figures(one_period, ["beertax"], set(taxes), RULE) == {}
    two_periods = history.filter(pl.col("periods_ago") < RULE.min_periods - 1)
    assert copied_figures(two_periods, ["beertax"], set(taxes), RULE) == {}
    alone = history.filter(pl.col("entity_id") == "al")
    assert copied_figures(alone, ["beertax"], {"al"}, RULE) == {}
    assert copied_figures(history.clear(), ["beertax"], {"al"}, RULE) == {}
    markets = {f"m{i}": _market(i, 300 + 40 * i, periods=4) for i in range(12)}
    markets["m3"] = [900.0, *markets["m5"][1:]]  # one period before the run: a copy is still judged, and found
    found = copied_figures(_history(markets), ["x"], {"m3", "m5"}, RULE)
    assert set(found) == {"m3"} and found["m3"]["x"].others == ["M5"]


def test_a_column_that_is_another_entitys_rescaled_is_found_naming_it_and_the_scale() -> None:
    """An area imputed as 70% of a donor's figures from some period on: no figure equals the donor's, but every
    change does, within the rounding of both; the donor, whose series goes on as it was, is not doubted."""
    markets = {f"m{i}": _market(i, 300 + 40 * i) for i in range(12)}
    markets["m3"] = markets["m3"][:-12] + [float(round(0.7 * v)) for v in markets["m5"][-12:]]
    found = scaled_copies(_history(markets), ["x"], {"m3", "m5", "m7"}, RULE)
    assert set(found) == {"m3"}
    copy = found["m3"]["x"]
    assert copy.others == ["M5"] and copy.periods == 7 and copy.chance < RULE.max_probability
    assert copy.scale is not None and abs(copy.scale - 0.7) < 0.01
    assert copied_figures(_history(markets), ["x"], {"m3"}, RULE) == {}  # no figure equal outright


def test_figures_written_to_seven_decimals_rescaled_from_another_entity_are_found() -> None:
    """Trial 132 (Ecdat MunExp, spending per head to 7 decimals): every entity's step was looked for to 6 decimals
    only and was none, so every entity's changes matched every other's within an infinite band and a copy scaled by
    half was dropped as "a series several share". Written to 7 decimals, the copy is found; written to more than any
    step holds, the float's last digits are the band, never an infinite one."""
    rng = np.random.default_rng(132)
    markets = {f"m{i}": [float(v) for v in np.round(
        (8 + i) * np.exp(np.cumsum(rng.normal(0, 0.05, 40))), 7)] for i in range(12)}
    markets["m3"] = markets["m3"][:-12] + [float(round(0.5 * v, 7)) for v in markets["m5"][-12:]]
    found = scaled_copies(_history(markets), ["x"], {"m3", "m7"}, RULE)
    assert set(found) == {"m3"}
    assert found["m3"]["x"].others == ["M5"] and found["m3"]["x"].chance < RULE.max_probability
    unwritten = {k: [v * (1 + 1e-14 * (i % 7)) + float(np.pi) * 1e-9 for i, v in enumerate(series)]
                 for k, series in markets.items()}  # figures to the float's last digit, no decimal step
    unwritten["m3"] = markets["m3"][:-12] + [0.5 * v for v in unwritten["m5"][-12:]]
    assert set(scaled_copies(_history(unwritten), ["x"], {"m3", "m7"}, RULE)) == {"m3"}


def test_a_column_that_took_a_donors_changes_a_few_periods_ago_is_found_against_their_own_past_gaps() -> None:
    """Trial 58: an area imputed from a donor's changes from some period on (its figure the donor's over the
    donor's figure before, times its own then) matched the donor change for change, but until six changes were the
    donor's no rescaled copy was judged, and it reached act-on. Three changes of figures in the tens of thousands,
    each within the rounding of both, are unlikely against how far apart the two markets' changes lay before; the
    same three changes of two markets whose months have always moved nearly alike are not."""
    markets = {f"m{i}": _market(i, 30_000 + 4_000 * i) for i in range(12)}
    own, donor = markets["m3"], markets["m5"]
    markets["m3"] = own[:-3] + [float(round(v / donor[-4] * own[-4])) for v in donor[-3:]]
    found = scaled_copies(_history(markets), ["x"], {"m3", "m5"}, RULE)
    assert set(found) == {"m3"}
    copy = found["m3"]["x"]
    assert copy.others == ["M5"] and copy.periods == 4 and copy.chance < RULE.max_probability
    assert "changes' gaps from the other's before" in copy.basis
    rng = np.random.default_rng(7)  # two markets whose changes always lay within a hair of each other's
    common = np.cumsum(rng.normal(0, 0.05, 40))
    twins = {"t1": np.round(30_000 * np.exp(common + rng.normal(0, 0.0003, 40))),
             "t2": np.round(40_000 * np.exp(common + rng.normal(0, 0.0003, 40)))}
    twins["t1"][-3:] = np.round(twins["t2"][-3:] / twins["t2"][-4] * twins["t1"][-4])
    alike = dict(markets, **{k: [float(x) for x in v] for k, v in twins.items()})
    assert "x" not in scaled_copies(_history(alike), ["x"], {"t1"}, RULE).get("t1", {})


def test_a_series_several_entities_carry_rescaled_or_a_short_match_is_no_scaled_copy() -> None:
    index = _market(99, 1000.0)  # a national index every area carries, each at its own weight
    shared = {f"s{i}": [float(round(w * v)) for v in index] for i, w in enumerate((0.5, 0.8, 1.3, 2.0))}
    assert scaled_copies(_history(shared), ["x"], {"s1"}, RULE) == {}
    markets = {f"m{i}": _market(i, 300 + 40 * i) for i in range(12)}
    markets["m3"] = markets["m3"][:-5] + [float(round(0.7 * v)) for v in markets["m5"][-5:]]  # 4 changes only
    assert scaled_copies(_history(markets), ["x"], {"m3"}, RULE) == {}


def test_a_markets_whole_history_a_neighbours_rescaled_is_doubted(tmp_path: Path) -> None:
    """Abilene's every row Amarillo's, sales x0.7, volume x0.77, median x1.1, listings x0.8 and months of
    inventory recomputed from them: nothing equals Amarillo's, no break in Abilene's own history and every identity
    holds, so it reached "Act on these" as Amarillo's twin; now its columns are Amarillo's rescaled."""
    frame = read_source(str(PACK.parent.parent / "txhousing.csv"))
    twin = frame.filter(pl.col("city") == "Amarillo").sort("year", "month").with_columns(
        city=pl.lit("Abilene"), sales=(pl.col("sales") * 0.7).round(0), volume=(pl.col("volume") * 0.77).round(0),
        median=(pl.col("median") * 1.1).round(0), listings=(pl.col("listings") * 0.8).round(0))
    twin = twin.with_columns(inventory=(pl.col("listings") / pl.col("sales").rolling_mean(12)).round(1)
                             .fill_null(pl.col("inventory")))
    source = tmp_path / "twin.csv"
    write_source(pl.concat([frame.filter(pl.col("city") != "Abilene"), twin]), str(source))
    pack = load_criteria(write_pack(tmp_path, source, quiet_integrity=False))
    c = _candidate(pack, date(2005, 1, 31), "abilene")
    a = analyze(pack, c)
    v = verify(pack, c, a)
    scaled = [f for f in v.data_findings if f.rule == "copied" and "times" in f.message]
    assert {f.column for f in scaled} >= {"sales", "listings"}
    assert all(f.effect == "doubt" and "Amarillo's figures times" in f.message for f in scaled)
    assert route(a, v).section_or_tag != "act_on_these"


def test_a_copy_of_two_periods_unlikely_by_chance_is_doubted_the_night_it_shows() -> None:
    """Amarillo's median from 2005-04 on is its neighbour's in sorted order: on the night of 2005-06-30 two periods
    match, figure for figure, at a resolution of $100, a chance well below the rule's. Judged once three periods
    matched, the copy reached "Act on these" that night."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        pack = _planted_pack(Path(tmp), Plant("borrowed", "Amarillo", ("median",), AMARILLO_BREAK, 1))
        c = _candidate(pack, NIGHTS[1], "amarillo")
        assert c.went_on and set(c.copies) == {"median"}
        assert c.copies["median"].periods == 2 and c.copies["median"].chance < RULE.max_probability
        a = analyze(pack, c)
        v = verify(pack, c, a)
    assert a.verdict == Verdict.STRONG and v.status == Status.UNCERTAIN
    assert route(a, v).section_or_tag == "needs_your_judgment"
