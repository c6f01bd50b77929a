"""Tables shaped otherwise than a panel, read as one by YAML alone: long (one value per row, named by another column,
`source.long`) and wide by period (a column per year or month, `source.wide.period`), alone and together (the World
Bank's and Eurostat's downloads: a row per country and indicator, a column per year)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from opportunity_assets.candidates.logic import scan, scan_read
from opportunity_assets.check.pack import check_pack
from opportunity_assets.criteria import CriteriaError, CriteriaPack
from opportunity_assets.records import FilterResult
from opportunity_assets.sources.snapshot import read_snapshot
from tests.test_shapes import TODAY, _csv, _pack

_METRICS = {"level_now": {"agg": "last", "column": "sales"},
            "listings_6m": {"agg": "avg", "column": "listings", "window": [0, 5]}}
_MONTHS = [f"2015-{m:02d}" for m in range(1, 13)] + [f"2016-{m:02d}" for m in range(1, 13)]


def _panel() -> list[tuple[str, str, float | None, float | None]]:
    """(entity, month, sales, listings) of three entities over two years; Bravo's listings of 2016-03 missing."""
    return [(entity, month, 100.0 * (e + 1) + i, None if (entity, month) == ("Bravo", "2016-03") else 10.0 * e + i)
            for e, entity in enumerate(["Alpha", "Bravo", "Charlie"]) for i, month in enumerate(_MONTHS)]


def _read(pack: CriteriaPack, as_of: date = date(2016, 12, 31)) -> tuple[list[Any], list[Any]]:
    """(the night's metrics, every entity's history of both columns), in a stable order."""
    snapshot = read_snapshot(pack, as_of, today=TODAY)
    history = snapshot.history.sort("entity_id", "period").select("entity_id", "period", "sales", "listings").rows()
    return snapshot.metrics.sort("entity_id").rows(), history


def test_one_panel_written_as_is_long_or_wide_by_month_reads_the_same(tmp_path: Path) -> None:
    """A long table (`entity, month, variable, value`: tidy data, a statistics office's download) and a table with
    a column per month needed reshaping in Python first. Read by `long` and by `wide.period`, each gives the panel
    its rows say: the same metrics and history as the panel written as is, a missing value a gap in each."""
    rows = _panel()
    as_is = _pack(tmp_path, {"path": _csv(tmp_path / "panel.csv", ["id", "month", "sales", "listings"],
                                          [list(r) for r in rows]),
                             "period_column": "month", "columns": ["sales", "listings"]}, _METRICS)
    expected = _read(as_is)
    assert len(expected[0]) == 3 and len(expected[1]) == 69  # 2016-12 is published after the night

    long_rows = [[e, m, name, value] for e, m, sales, listings in rows
                 for name, value in (("sales", sales), ("listings", listings)) if value is not None]
    long_rows.append(["Alpha", "2016-12", "inventory", 4.5])  # a name not listed: out of scope
    (tmp_path / "long").mkdir()
    long = _pack(tmp_path / "long", {"path": _csv(tmp_path / "long" / "long.csv", ["id", "month", "variable", "value"],
                                                  long_rows),
                                     "period_column": "month", "long": {"names": "variable", "values": "value"},
                                     "columns": ["sales", "listings"]}, _METRICS)
    assert _read(long) == expected

    by_month = {(e, m): (s, li) for e, m, s, li in rows}
    wide_rows = [[e, name, *("" if (v := by_month[e, m][k]) is None else v for m in _MONTHS)]
                 for e in ("Alpha", "Bravo", "Charlie") for k, name in enumerate(["sales", "listings"])]
    (tmp_path / "wide").mkdir()
    wide = _pack(tmp_path / "wide", {"path": _csv(tmp_path / "wide" / "wide.csv", ["id", "variable", *_MONTHS],
                                                  wide_rows),
                                     "wide": {"columns": _MONTHS, "period": "month", "value": "value"},
                                     "long": {"names": "variable", "values": "value"},
                                     "columns": ["sales", "listings"]}, _METRICS)
    assert wide.source.period_column == "month"
    assert _read(wide) == expected
    assert check_pack(long, as_of=date(2016, 12, 31), today=TODAY).problems == []
    assert check_pack(wide, as_of=date(2016, 12, 31), today=TODAY).problems == []


def test_a_long_source_refuses_one_value_alone(tmp_path: Path) -> None:
    """A bad cell, or a value sent twice, refuses that value of that entity and period: its other values of the
    period are read, and the quarantine says which name's row it was."""
    rows = [["a", 2014, "income", 100], ["a", 2014, "rent", 10], ["a", 2015, "income", 110],
            ["a", 2015, "rent", "ten"], ["a", 2016, "income", 120], ["a", 2016, "rent", 12], ["a", 2016, "rent", 13],
            ["b", 2016, "income", 90], ["b", 2016, "rent", 9]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "acs.csv", ["id", "year", "variable", "estimate"], rows),
                            "year_column": "year", "grain": "year", "long": {"names": "variable", "values": "estimate"},
                            "columns": ["income", "rent"]},
                 {"level_now": {"agg": "last", "column": "income"}, "rent_now": {"agg": "last", "column": "rent"}})
    snapshot = read_snapshot(pack, date(2017, 6, 30), today=TODAY)
    history = snapshot.history.sort("entity_id", "period").select("entity_id", "period", "income", "rent").rows()
    assert history == [("a", date(2014, 1, 1), 100.0, 10.0), ("a", date(2015, 1, 1), 110.0, None),
                       ("a", date(2016, 1, 1), 120.0, None), ("b", date(2016, 1, 1), 90.0, 9.0)]
    assert snapshot.quarantined.select("source_row", "entity_id", "reason").sort("source_row").rows() == [
        (5, "a", "column rent: ten is not a number (that cell is a gap; the row is kept)"),
        (7, "a", "duplicated key (id, year, variable) = (a, 2016, rent): 2 rows, none used"),
        (8, "a", "duplicated key (id, year, variable) = (a, 2016, rent): 2 rows, none used")]


def test_a_long_source_s_values_written_with_a_mark_are_one_problem_naming_long_values(tmp_path: Path) -> None:
    """Trial 34: every value of a long table written `8504.0x` (five names, each a fifth of the rows) was five facts,
    "cells of 'pce' such as '506.7x' (574) ...", one a name, and check said ok on a night of no number. The names
    share one column of the file: its cells are judged as one, once, a problem naming `source.long.values`; a few
    such cells are still one fact."""
    def report(mark: object) -> Any:
        rows = [["a", f"2015-{m:02d}", name, f"{m}.5{mark(m, name) if callable(mark) else mark}"]
                for m in range(1, 13) for name in ("pce", "pop", "rate")]
        name = _csv(tmp_path / "econ.csv", ["id", "month", "variable", "value"], rows)
        pack = _pack(tmp_path, {"path": name, "period_column": "month", "columns": ["pce", "pop", "rate"],
                                "long": {"names": "variable", "values": "value"}},
                     {"level_now": {"agg": "last", "column": "pce"}})
        return check_pack(pack, as_of=date(2015, 12, 31), today=TODAY)

    every = report("x")
    assert every.problems == [
        "key `source.long.values`: 'value': 33 of 33 cells the night reads are not numbers (e.g. '1.5x'): they carry "
        "a unit or a mark, 'x': expected `source.strip_from_numbers: ['x']`, which removes it before the number is "
        "read, or plain numbers (the file exported without it)"], every.problems
    assert not [f for f in every.facts if f.startswith("cells of")], every.facts
    few = report(lambda m, name: "x" if (m, name) == (3, "pop") else "")
    assert few.problems == [], few.problems
    assert [f for f in few.facts if f.startswith("cells of")] == [
        "cells of 'value' such as '3.5x' (1) are quarantined as not numbers: it is a number with 'x' written beside "
        "it: expected plain numbers in the column (the cell written without it at the source), or "
        "`source.strip_from_numbers: ['x']` if the column's cells carry it"], few.facts


def test_a_long_source_s_value_sent_twice_leaves_only_that_name_s_metrics_unknown(tmp_path: Path) -> None:
    """Trial 22: validate's samplonomy sends Induston's exports of 2018Q2 twice. That value alone is refused, yet
    the scan read the duplicated key as a whole row refused: Induston's GDP of the same quarter, read and in its
    history, was "unknown: source row 871 is quarantined (duplicated key), in its reach", and its growth a gap.
    Now only the metrics of the name sent twice are unknown, and the refusal names that name."""
    rows = [["a", q, name, 100 + i] for i, q in enumerate(["2018Q1", "2018Q2", "2018Q3", "2018Q4"])
            for name in ("gdp", "export")]
    rows.append(["a", "2018Q2", "export", 999])
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "s.csv", ["region", "period", "measure", "value"], rows),
                            "entity_id": "region", "entity_name": "region", "grain": "quarter",
                            "period_column": "period", "long": {"names": "measure", "values": "value"},
                            "columns": ["gdp", "export"]},
                 {"level_now": {"agg": "sum", "column": "gdp", "window": [0, 3]},
                  "export_4q": {"agg": "sum", "column": "export", "window": [0, 3]}})
    snapshot = read_snapshot(pack, date(2019, 3, 31), today=TODAY)
    (found,), _ = scan(pack, date(2019, 3, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                       snapshot.quarantined)
    assert found.metrics["level_now"] == 406.0 and found.metrics["export_4q"] is None
    assert found.data_gaps[0].startswith("export_4q: unknown: source row ")
    assert not any(gap.startswith("level_now") for gap in found.data_gaps)
    assert [(r.period, r.columns) for r in found.refused] == [("2018-Q2", ["export"])] * 2


def test_a_long_source_s_revised_value_is_seen_as_it_was_known(tmp_path: Path) -> None:
    """Vintages of one name: the latest published by as_of wins, name by name."""
    rows = [["a", "2015-01", "sales", 100, "2015-02-10"], ["a", "2015-01", "listings", 7, "2015-02-10"],
            ["a", "2015-01", "sales", 150, "2015-04-01"]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "v.csv", ["id", "month", "name", "value", "published"], rows),
                            "period_column": "month", "published_column": "published",
                            "long": {"names": "name", "values": "value"}, "columns": ["sales", "listings"]},
                 _METRICS)
    before = read_snapshot(pack, date(2015, 3, 1), today=TODAY).history
    after = read_snapshot(pack, date(2015, 4, 30), today=TODAY).history
    assert before.select("sales", "listings").rows() == [(100.0, 7.0)]
    assert after.select("sales", "listings").rows() == [(150.0, 7.0)]


def test_a_long_table_joins_by_entity_and_period(tmp_path: Path) -> None:
    """A joined table may be long too: its listed names join as columns."""
    main = _csv(tmp_path / "m.csv", ["id", "year", "month", "sales"], [["a", 2015, m, 10 * m] for m in range(1, 7)])
    joined = _csv(tmp_path / "j.csv", ["code", "month", "what", "value"],
                  [["A", f"2015-{m:02d}", w, m + (w == "permits") * 100] for m in range(1, 7)
                   for w in ("permits", "starts")])
    pack = _pack(tmp_path, {"path": main, "columns": ["sales"],
                            "join": [{"table": "j", "path": joined, "entity_id": "code", "period_column": "month",
                                      "long": {"names": "what", "values": "value"},
                                      "columns": ["permits", "starts"]}]},
                 {"level_now": {"agg": "last", "column": "permits"}})
    history = read_snapshot(pack, date(2015, 8, 31), today=TODAY).history
    assert history.select("sales", "permits", "starts").rows()[-1] == (60.0, 106.0, 6.0)


def test_a_long_source_s_name_spelt_otherwise_is_a_problem_naming_its_key(tmp_path: Path) -> None:
    rows = [["a", f"2015-{m:02d}", name, m] for m in range(1, 13) for name in ("SP.POP.TOTL", "SP.URB.GROW")]
    name = _csv(tmp_path / "wb.csv", ["id", "month", "indicator", "value"], rows)

    def problems(columns: list[str]) -> list[str]:
        pack = _pack(tmp_path, {"path": name, "period_column": "month", "columns": columns,
                                "long": {"names": "indicator", "values": "value"}},
                     {"level_now": {"agg": "last", "column": columns[0]}})
        return check_pack(pack, as_of=date(2015, 12, 31), today=TODAY).problems

    meant = ("key `source.columns.1`: got 'sp.urb.grow'; no row of 'indicator' (`long.names`) names it (did you mean "
             "'SP.URB.GROW'? names are compared as trimmed text, case and all), so every period of it would be a gap")
    (spelt,) = problems(["SP.POP.TOTL", "sp.urb.grow"])
    assert spelt.startswith(meant), spelt
    (alone,) = problems(["SP.POP.TOTX"])  # no listed name held: no row in scope, and said so by its key
    assert alone.startswith("key `source.columns.0`: got 'SP.POP.TOTX'; no row of 'indicator' (`long.names`) names "
                            "it (did you mean 'SP.POP.TOTL'?"), alone


def test_a_long_source_s_listed_name_also_spelt_otherwise_is_a_warning_naming_its_key(tmp_path: Path) -> None:
    """Trial 62: a price index's long table naming `College Tuition` to 2018 and `College tuition` from 2019 (an
    export renamed by case) read the listed name's rows alone: the latest year's every value a gap, its 12 rows
    left out without a line, and check said ok beside "metrics with gaps"."""
    rows = [["a", f"{y}-{m:02d}", "College Tuition" if y < 2019 else "College tuition", m] for y in (2017, 2018, 2019)
            for m in range(1, 13)] + [["a", f"{y}-{m:02d}", "Apparel", m] for y in (2017, 2018, 2019)
                                      for m in range(1, 13)]
    name = _csv(tmp_path / "cpi.csv", ["id", "month", "category", "value"], rows)
    pack = _pack(tmp_path, {"path": name, "period_column": "month", "columns": ["Apparel", "College Tuition"],
                            "long": {"names": "category", "values": "value"}},
                 {"level_now": {"agg": "last", "column": "College Tuition"}})
    report = check_pack(pack, as_of=date(2020, 1, 31), today=TODAY)
    assert [w for w in report.warnings if "spelt otherwise" in w] == [
        "key `source.columns.1`: got 'College Tuition'; 'category' (`long.names`) writes it in 24 rows and also "
        "'College tuition' in 12, spelt otherwise by case, spaces, punctuation or accents, whose rows the night "
        "leaves out (names are compared as trimmed text, case and all): expected one spelling in the source (a "
        "DuckDB `query` can `replace` one with the other), if they are one"], report.warnings


def test_a_row_per_entity_with_a_column_per_year_is_read_by_wide_period(tmp_path: Path) -> None:
    """`wide.period` alone: one kind of value, a row per entity, a column per year (a bare year's header)."""
    years = ["2012", "2013", "2014"]
    rows = [["ABW", "Aruba", 101, 102, ""], ["AFG", "Afghanistan", 30, 31, 32]]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "pop.csv", ["code", "name", *years], rows), "entity_id": "code",
                            "entity_name": "name", "grain": "year",
                            "wide": {"columns": years, "period": "year", "value": "population"}},
                 {"level_now": {"agg": "last", "column": "population"}})
    assert pack.source.columns == ["population"]
    snapshot = read_snapshot(pack, date(2015, 6, 30), today=TODAY)
    assert snapshot.history.sort("entity_id", "period").select("entity_id", "period", "population").rows() == [
        ("ABW", date(2012, 1, 1), 101.0), ("ABW", date(2013, 1, 1), 102.0), ("ABW", date(2014, 1, 1), None),
        ("AFG", date(2012, 1, 1), 30.0), ("AFG", date(2013, 1, 1), 31.0), ("AFG", date(2014, 1, 1), 32.0)]
    frame = pl.read_csv(tmp_path / "pop.csv", infer_schema_length=0)
    frame.write_parquet(tmp_path / "pop.parquet")
    parquet = _pack(tmp_path, {**pack.source.model_dump(include={"entity_id", "entity_name", "grain"}),
                               "path": "pop.parquet",
                               "wide": {"columns": years, "period": "year", "value": "population"}},
                    {"level_now": {"agg": "last", "column": "population"}})
    assert read_snapshot(parquet, date(2015, 6, 30), today=TODAY).history.sort("entity_id", "period").select(
        "entity_id", "period", "population").rows() == snapshot.history.sort("entity_id", "period").select(
        "entity_id", "period", "population").rows()


_WB = {"columns": ["2012", "2013"], "period": "year", "value": "value"}


@pytest.mark.parametrize(("source", "message"), [
    ({"entity_id": None, "entity_name": None, "wide": {**_WB, "entity": "country"}},
     "key `source.wide`: "),
    ({"wide": _WB, "year_column": "year"},
     "key `source.year_column`: got 'year'; expected no `year_column` beside `wide.period`"),
    ({"wide": _WB, "columns": ["value"]}, "key `source.columns`: got ['value']; expected no `columns` beside"),
    ({"wide": _WB, "quarter_column": "q"},
     "key `source.quarter_column`: got 'q'; expected no `quarter_column` beside `wide.period`"),
    ({"wide": _WB, "long": {"names": "indicator", "values": "v"}, "columns": ["SP.POP.TOTL"]},
     "key `source.long.values`: got 'v'; expected 'value', the name `wide.value` gives"),
    ({"long": {"names": "indicator", "values": "value"}, "period_column": "year", "columns": ["indicator"]},
     "key `source.columns.0`: got 'indicator'; expected a value of `long.names`"),
    ({"long": {"names": "indicator", "values": "value"}, "period_column": "year", "columns": ["year"]},
     "key `source.columns.0`: got 'year'; expected a value of `long.names`"),
    ({"long": {"names": "indicator", "values": "value"}, "period_column": "year", "shape": "events",
      "aggregates": {"n": {"agg": "count"}}},
     "key `source.long`: got {'names': 'indicator', 'values': 'value'}; expected no `long` for events"),
    ({"long": {"names": "indicator", "values": "indicator"}, "period_column": "year", "columns": ["x"]},
     "key `source.long`: "),
    # trial 22: `entity_id: measure` over samplonomy's region x measure table was told `shape: events` first
    ({"long": {"names": "indicator", "values": "value"}, "period_column": "year", "columns": ["x"],
      "entity_id": "indicator", "entity_name": "indicator"},
     "key `source.entity_id`: got 'indicator'; expected the column of each entity's id: 'indicator' is "
     "`long.names`, the column naming which value each row holds, not an entity"),
    ({"long": {"names": "indicator", "values": "value"}, "period_column": "year", "columns": ["x"],
      "entity_id": ["id", "value"]},
     "key `source.entity_id`: got ['id', 'value']; expected the column of each entity's id: 'value' is "
     "`long.values`, the column of the value each row holds, not an entity"),
    ({"entity_id": None, "entity_name": None, "wide": {**_WB, "period": None, "entity": "country"},
      "period_column": "year", "long": {"names": "indicator", "values": "value"}, "columns": ["x"]},
     "key `source.long`: got {'names': 'indicator', 'values': 'value'}; expected no `long` beside `wide.entity`"),
])
def test_long_and_wide_period_keys_are_checked_at_load(tmp_path: Path, source: dict[str, Any], message: str) -> None:
    name = _csv(tmp_path / "wb.csv", ["id", "indicator", "2012", "2013"], [["a", "SP.POP.TOTL", 1, 2]])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "grain": "year", **source}, {"level_now": {"agg": "last", "column": "x"}})
    assert message in str(caught.value), str(caught.value)
    assert "\n" not in str(caught.value)


def test_headers_that_are_no_periods_name_the_wide_columns_and_the_pattern_that_reads_them(tmp_path: Path) -> None:
    """R writes a column named 2000 as `X2000`: the headers, not a `period_column` the user never wrote, are named,
    with the pattern that reads them; under it the night reads them."""
    years = ["X2012", "X2013", "X2014"]
    name = _csv(tmp_path / "pop.csv", ["code", *years], [["ABW", 101, 102, 103], ["AFG", 30, 31, 32]])
    source = {"path": name, "entity_id": "code", "entity_name": "code", "grain": "year",
              "wide": {"columns": years, "period": "year", "value": "population"}}
    metrics = {"level_now": {"agg": "last", "column": "population"}}
    (problem,) = check_pack(_pack(tmp_path, source, metrics), as_of=date(2015, 6, 30), today=TODAY).problems
    assert problem.startswith("key `source.period_format`: got none for the headers of `source.wide.columns`; ") \
        and problem.endswith("'X%Y' parses them"), problem
    fixed = _pack(tmp_path, {**source, "period_format": "X%Y"}, metrics)
    assert read_snapshot(fixed, date(2015, 6, 30), today=TODAY).metrics.sort("entity_id").select(
        "entity_id", "level_now").rows() == [("ABW", 103.0), ("AFG", 32.0)]


def test_a_row_a_year_with_a_column_a_month_is_read_by_its_year_column(tmp_path: Path) -> None:
    """Trial 110: PBS drug costs as statistics offices print a monthly series, `Drug, Year, Jan, ..., Dec` (fpp2's
    a10 and h02). `wide.period` with `year_column: Year` was refused ("its periods are its columns' headers", which
    name no year), and only a DuckDB `query` unpivoting the file read it. Now `year_column` beside `wide.period`
    dates each header's month in its row's year, in YAML alone; without it, `period_format: '%b'` and check each name
    `year_column` as what is missing."""
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    rows = [[drug, year, *[round(base + year - 2000 + m / 10, 2) for m in range(12)]]
            for drug, base in (("A10", 3.0), ("H02", 0.5)) for year in (2000, 2001, 2002)]
    name = _csv(tmp_path / "pbs.csv", ["Drug", "Year", *months], rows)
    source = {"path": name, "entity_id": "Drug", "entity_name": "Drug",
              "wide": {"columns": months, "period": "month", "value": "cost"}}
    metrics = {"level_now": {"agg": "last", "column": "cost"}, "year_before": {"agg": "sum", "column": "cost",
                                                                             "window": [12, 23]}}
    read = _pack(tmp_path, {**source, "year_column": "Year"}, metrics)
    assert check_pack(read, as_of=date(2003, 3, 31), today=TODAY).problems == []
    snapshot = read_snapshot(read, date(2003, 3, 31), today=TODAY)
    # the latest month is 2002-12 (A10: 3.0 + 2 + 1.1), the year before it is 2001's twelve months, summed
    assert snapshot.metrics.sort("entity_id").select("entity_id", "level_now", "year_before").rows() == [
        ("A10", 6.1, pytest.approx(sum(4.0 + m / 10 for m in range(12)))),
        ("H02", 3.6, pytest.approx(sum(1.5 + m / 10 for m in range(12))))]
    periods = snapshot.history.filter(pl.col("entity_id") == "A10")["period"]
    assert (periods.min(), periods.max(), periods.len()) == (date(2000, 1, 1), date(2002, 12, 1), 36)
    missing = ("its headers are month names, which name no year (['Jan', 'Feb', 'Mar', ...]): for a row a year and a "
               "column a month, `year_column` naming the column of each row's year (`year_column: Year`) beside "
               "`wide.period`, and each header's month is read in that year")
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {**source, "period_format": "%b"}, metrics)
    assert str(caught.value).endswith(
        "key `source.period_format`: got '%b'; it names no year (`%Y`, `%y`), so every value would be read in 1900: "
        "the headers of `source.wide.columns` are " + missing.removeprefix("its headers are ")), str(caught.value)
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {**source, "period_column": "Year"}, metrics)
    assert str(caught.value).endswith(
        "key `source.period_column`: got 'Year'; expected no `period_column` beside `wide.period`: " + missing), \
        str(caught.value)
    (problem,) = check_pack(_pack(tmp_path, source, metrics), as_of=date(2003, 3, 31), today=TODAY).problems
    assert problem == "key `source.wide.columns`: " + missing, problem


def test_a_row_a_year_with_a_column_a_quarter_is_read_by_its_year_column(tmp_path: Path) -> None:
    """As a month's: `Region, Year, Q1, Q2, Q3, Q4` (a quarterly table as printed), `year_column` beside
    `wide.period` dates each quarter in its row's year; without it, check names `year_column`."""
    quarters = ["Q1", "Q2", "Q3", "Q4"]
    rows = [[region, year, *[base + 10 * (year - 2000) + q for q in range(4)]]
            for region, base in (("North", 100), ("South", 50)) for year in (2000, 2001, 2002)]
    name = _csv(tmp_path / "gdp.csv", ["Region", "Year", *quarters], rows)
    source = {"path": name, "entity_id": "Region", "entity_name": "Region", "grain": "quarter",
              "wide": {"columns": quarters, "period": "quarter", "value": "gdp"}}
    metrics = {"level_now": {"agg": "last", "column": "gdp"},
               "year_before": {"agg": "sum", "column": "gdp", "window": [4, 7]}}
    read = _pack(tmp_path, {**source, "year_column": "Year"}, metrics)
    assert check_pack(read, as_of=date(2003, 6, 30), today=TODAY).problems == []
    snapshot = read_snapshot(read, date(2003, 6, 30), today=TODAY)
    # the latest quarter is 2002 Q4 (North: 100 + 20 + 3), the year before it 2001's four quarters
    assert snapshot.metrics.sort("entity_id").select("entity_id", "level_now", "year_before").rows() == [
        ("North", 123.0, 110.0 + 111 + 112 + 113), ("South", 73.0, 60.0 + 61 + 62 + 63)]
    periods = snapshot.history.filter(pl.col("entity_id") == "North")["period"]
    assert (periods.min(), periods.max(), periods.len()) == (date(2000, 1, 1), date(2002, 10, 1), 12)
    (problem,) = check_pack(_pack(tmp_path, source, metrics), as_of=date(2003, 6, 30), today=TODAY).problems
    assert problem == ("key `source.wide.columns`: its headers are quarters, which name no year (['Q1', 'Q2', 'Q3', "
                       "...]): for a row a year and a column a quarter, `year_column` naming the column of each "
                       "row's year (`year_column: Year`) beside `wide.period`, and each header's quarter is read in "
                       "that year"), problem


def test_wide_columns_listed_otherwise_than_the_headers_name_the_wide_columns_not_the_file(tmp_path: Path) -> None:
    """Trial 62: US spending by category, a column per year that R wrote `X1940`, listed as `'1940'`...: check said
    "key `source.path`: ... lacks column(s) ['1940', ...] (did you mean 'X1940' for '1940', ...?) ... is it the right
    file?", the right file blamed for the list's spelling. Headers the list names otherwise, each with a close
    match, are the list's: `source.wide.columns`, and the pattern that reads them as written."""
    headers = ["X2012", "X2013", "X2014"]
    name = _csv(tmp_path / "pop.csv", ["code", *headers], [["ABW", 101, 102, 103], ["AFG", 30, 31, 32]])
    source = {"path": name, "entity_id": "code", "entity_name": "code", "grain": "year",
              "wide": {"columns": ["2012", "2013", "2014"], "period": "year", "value": "population"}}
    (problem,) = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "population"}}),
                            as_of=date(2015, 6, 30), today=TODAY).problems
    assert problem.startswith("key `source.wide.columns`: got ['2012', '2013', '2014']; source file "), problem
    assert problem.endswith("(did you mean 'X2012' for '2012', 'X2013' for '2013', 'X2014' for '2014'?); it has "
                            "['code', 'X2012', 'X2013', 'X2014']: expected the headers as the file writes them "
                            "(`period_format` reads a period from a header written with more than its period)"), \
        problem
    # trial 62's leftover: `Year 2012`, which no spelling is close to, holds the listed name as a word of its own
    name = _csv(tmp_path / "pop.csv", ["code", "Year 2012", "Year 2013", "Year 2014"], [["ABW", 101, 102, 103]])
    (problem,) = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "population"}}),
                            as_of=date(2015, 6, 30), today=TODAY).problems
    assert problem.startswith("key `source.wide.columns`: got ['2012', '2013', '2014']; ") and \
        "(did you mean 'Year 2012' for '2012', 'Year 2013' for '2013', 'Year 2014' for '2014'?)" in problem, problem


def test_a_period_column_written_after_a_word_is_read_by_the_pattern_check_names(tmp_path: Path) -> None:
    """A fiscal year written `FY2015` is no date; check names the pattern with the word in it."""
    name = _csv(tmp_path / "fy.csv", ["id", "fiscal", "level"], [["a", f"FY{y}", y - 2000] for y in range(2010, 2016)])
    pack = _pack(tmp_path, {"path": name, "period_column": "fiscal", "grain": "year", "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"}})
    (problem,) = check_pack(pack, as_of=date(2016, 6, 30), today=TODAY).problems
    assert problem.startswith("key `source.period_format`: got none for column 'fiscal'; ") and \
        problem.endswith("'FY%Y' parses them"), problem


def test_a_long_source_s_misspelt_names_column_is_named_by_its_key(tmp_path: Path) -> None:
    name = _csv(tmp_path / "l.csv", ["id", "month", "indicator", "value"], [["a", "2015-01", "sales", 1]])
    pack = _pack(tmp_path, {"path": name, "period_column": "month", "columns": ["sales"],
                            "long": {"names": "indicatr", "values": "value"}},
                 {"level_now": {"agg": "last", "column": "sales"}})
    (problem,) = check_pack(pack, as_of=date(2015, 6, 30), today=TODAY).problems
    assert problem.startswith("key `source.long.names`: got 'indicatr'; "), problem


def test_a_folder_of_files_one_naming_a_share_s_column_otherwise_is_told_so(tmp_path: Path) -> None:
    """Trial 37: daily returns of four stocks in two files, the second's header `return` for `ret`, read by
    `read_csv('parts/*.csv', union_by_name = true)`: half the stocks had no `ret`, and check warned of the share's
    condition, "'ret' is empty in 5056 of the 10112 events ... if an empty ret is unknown rather than a no, take the
    share among the events that have one". The query is named, with the entities whose rows lack the column."""
    (tmp_path / "parts").mkdir()
    days = [f"2015-{m:02d}-{d:02d}" for m in range(1, 7) for d in (5, 15, 25)]
    _csv(tmp_path / "parts" / "a.csv", ["day", "stock", "ret"], [[d, s, 0.01] for s in ("ge", "ibm") for d in days])
    _csv(tmp_path / "parts" / "b.csv", ["day", "stock", "return"], [[d, "mobil", 0.02] for d in days])
    pack = _pack(tmp_path, {"format": "duckdb", "query": "SELECT * FROM read_csv('parts/*.csv', union_by_name = "
                            "true)", "entity_id": "stock", "entity_name": "stock", "shape": "events",
                            "period_column": "day",
                            "aggregates": {"level": {"agg": "count"},
                                           "up": {"agg": "share", "where": [{"column": "ret", "op": ">",
                                                                             "value": 0}]}}},
                 {"level_now": {"agg": "last", "column": "level"}})
    warnings = check_pack(pack, as_of=date(2015, 7, 31), today=TODAY).warnings
    assert "key `source.query`: 'ret' is empty in every row of 1 entity (e.g. ['mobil']) and in no row of the " \
           "other 2: expected the column in every file the query reads (one whose header names it otherwise, read " \
           "by `union_by_name`, gives its rows none)" in warnings, warnings
    assert not any("aggregates.up.where" in w for w in warnings), warnings


def _fares_over(tmp_path: Path, query: str) -> CriteriaPack:
    """A pack of routes' fares summed from the events a DuckDB `query` over files gives (`day`, `route`, `fare`)."""
    return _pack(tmp_path, {"format": "duckdb", "query": query, "entity_id": "route", "entity_name": "route",
                            "shape": "events", "period_column": "day",
                            "aggregates": {"fares": {"agg": "sum", "column": "fare"}}},
                 {"level_now": {"agg": "last", "column": "fares"}})


def test_a_folder_of_files_of_different_columns_read_by_position_names_the_query(tmp_path: Path) -> None:
    """Trial 54: monthly exports, one with a column more, read by `read_csv('parts/*.csv')` without
    `union_by_name`: "key `source.path`: the DuckDB query ... could not be read: Invalid Input Error: Schema mismatch
    between globbed files", DuckDB's own words under a key the pack does not have."""
    (tmp_path / "parts").mkdir()
    for month, fare in (("01", "fare"), ("02", "fare_usd")):
        _csv(tmp_path / "parts" / f"2015-{month}.csv", ["day", "route", fare],
             [[f"2015-{month}-{d:02d}", r, 10] for r in ("a", "b") for d in (3, 13)])
    query = "SELECT * FROM read_csv('parts/*.csv')"
    pack = _fares_over(tmp_path, query)
    assert check_pack(pack, as_of=date(2015, 3, 31), today=TODAY).problems == [
        f"key `source.query`: got {query!r}; the files it reads do not all have the same columns (2015-02.csv "
        "lacks 'fare'): expected `union_by_name = true` in its `read_csv` or `read_parquet`, which reads each "
        "file's columns by name"]


def test_a_folder_of_exports_one_of_them_in_latin_1_names_the_file_and_its_encoding(tmp_path: Path) -> None:
    """Trial 82: yearly exports read by `read_csv('parts/*.csv', union_by_name = true)`, the latest year's file
    written in Latin-1 (`révisé`): "key `source.query`: ...; it does not run on the files of ... (CSV Error on Line:
    2): expected a SELECT that runs on ...", DuckDB's words, naming neither the file nor its encoding."""
    (tmp_path / "parts").mkdir()
    for year in (2015, 2016):
        text = "day,route,fare,note\n" + "".join(f"{year}-0{m}-03,{r},10,r\u00e9vis\u00e9\n" for m in (1, 2)
                                                  for r in ("a", "b"))
        (tmp_path / "parts" / f"{year}.csv").write_bytes(text.encode("latin-1" if year == 2016 else "utf-8"))
    query = "SELECT * FROM read_csv('parts/*.csv', union_by_name = true)"
    pack = _fares_over(tmp_path, query)
    assert check_pack(pack, as_of=date(2016, 3, 31), today=TODAY).problems == [
        f"key `source.query`: got {query!r}; a file it reads, 2016.csv, is not UTF-8 (an export in Latin-1 or "
        "Windows-1252): expected that file saved as UTF-8, or `encoding = 'latin-1'` in the `read_csv` when every "
        "file it reads is written so"]


def test_a_folder_of_exports_one_of_them_with_a_malformed_line_names_the_query(tmp_path: Path) -> None:
    """Trial 82: yearly exports read by `read_csv('parts/*.csv', union_by_name = true)`, one line of the latest
    year's with a field too many (or its last line cut short): DuckDB's reader read that file as one column named
    by its whole header, `day,route,fare`, and its rows were quarantined as "missing entity id" while check said
    ok, the night's latest period a year older."""
    (tmp_path / "parts").mkdir()
    for year in (2015, 2016):
        lines = [f"{year}-0{m}-03,{r},10" for m in (1, 2, 3) for r in ("a", "b")]
        if year == 2016:
            lines[2] += ",extra"
        (tmp_path / "parts" / f"{year}.csv").write_text("day,route,fare\n" + "\n".join(lines) + "\n")
    query = "SELECT * FROM read_csv('parts/*.csv', union_by_name = true)"
    pack = _fares_over(tmp_path, query)
    assert check_pack(pack, as_of=date(2016, 4, 30), today=TODAY).problems == [
        f"key `source.query`: got {query!r}; a file it reads was read as one column, its header 'day,route,fare' "
        "unsplit, its rows ('2016-01-03,a,10', ...) left with no 'day', 'route' or 'fare': DuckDB's reader could "
        "not split that file's lines (a line with a field too many or too few, or cut short): expected that "
        "file's lines mended, or `null_padding = true` in its `read_csv`"]


def test_a_folder_of_exports_one_named_off_the_pattern_names_the_query(tmp_path: Path) -> None:
    """Trial 82: yearly exports read by `read_csv('parts/*.csv', union_by_name = true)`, the latest year's saved as
    `Parts-2016-final.CSV`: the glob, case-sensitive, never read it, and check said ok on a night a year older."""
    (tmp_path / "parts").mkdir()
    for year, name in ((2015, "2015.csv"), (2016, "Parts-2016-final.CSV")):
        lines = [f"{year}-0{m}-03,{r},10" for m in (1, 2, 3) for r in ("a", "b")]
        (tmp_path / "parts" / name).write_text("day,route,fare\n" + "\n".join(lines) + "\n")
    query = "SELECT * FROM read_csv('parts/*.csv', union_by_name = true)"
    pack = _fares_over(tmp_path, query)
    assert "key `source.query`: reads 'parts/*.csv', which leaves 1 file of that folder with its extension unread " \
           "('Parts-2016-final.CSV'): expected a pattern that matches every export meant (a glob is case-sensitive), " \
           "or those files renamed to it" in check_pack(pack, as_of=date(2015, 4, 30), today=TODAY).warnings


def test_a_folder_of_parquet_files_of_different_columns_read_by_position_names_the_query(tmp_path: Path) -> None:
    """Trial 73: a folder of yearly Parquet files, the later ones naming a column otherwise, read by
    `read_parquet('parts/*.parquet')` without `union_by_name`, said DuckDB's own words ("Failed to read file ...:
    schema mismatch in glob: column ... was read from the original file ..."), read_parquet's wording of what
    read_csv calls a "Schema mismatch between globbed files"."""
    (tmp_path / "parts").mkdir()
    for year, column in ((2015, "route"), (2016, "transmission")):
        pl.DataFrame({"day": [date(year, 3, 1), date(year, 4, 1)], "state": ["a", "b"], column: ["x", "y"]}
                     ).write_parquet(tmp_path / "parts" / f"{year}.parquet")
    query = "SELECT * FROM read_parquet('parts/*.parquet')"
    pack = _pack(tmp_path, {"format": "duckdb", "query": query, "entity_id": "state", "entity_name": "state",
                            "shape": "events", "period_column": "day",
                            "aggregates": {"cases": {"agg": "count"},
                                           "routes": {"agg": "count_distinct", "column": "route"}}},
                 {"level_now": {"agg": "last", "column": "cases"}})
    assert check_pack(pack, as_of=date(2016, 12, 31), today=TODAY).problems == [
        f"key `source.query`: got {query!r}; the files it reads do not all have the same columns (2016.parquet "
        "lacks 'route'): expected `union_by_name = true` in its `read_csv` or `read_parquet`, which reads each "
        "file's columns by name"]


@pytest.mark.parametrize("aggregate", [{"agg": "count_distinct", "column": "route"},
                                       {"agg": "share", "where": [{"column": "route", "in": ["x"]}]}])
def test_a_text_column_some_yearly_files_name_otherwise_names_the_query(tmp_path: Path,
                                                                        aggregate: dict[str, Any]) -> None:
    """Trial 73: yearly Parquet files read by `read_parquet('parts/*.parquet', union_by_name = true)`, the later
    ones naming `transmission` otherwise: a `count_distinct` of it was 0 in every later quarter while check said ok
    (only numeric columns were looked for by file), and a share over it was told its empty cells were categories
    unknown here and there. Each now names `source.query`, the periods the column is empty in."""
    (tmp_path / "parts").mkdir()
    for year in range(2010, 2017):
        column = "route" if year < 2014 else "transmission"
        days = [date(year, m, 5) for m in range(1, 13) for _ in range(3)]
        pl.DataFrame({"day": days, "state": ["a", "b", "c"] * 12, column: ["x", "y", "z"] * 12}
                     ).write_parquet(tmp_path / "parts" / f"{year}.parquet")
    source = {"format": "duckdb", "query": "SELECT * FROM read_parquet('parts/*.parquet', union_by_name = true)",
              "entity_id": "state", "entity_name": "state", "shape": "events", "period_column": "day",
              "grain": "quarter", "aggregates": {"cases": {"agg": "count"}, "routes": aggregate}}
    metrics = {"level_now": {"agg": "last", "column": "cases", "window": [0, 0]},
               "routes_now": {"agg": "last", "column": "routes", "window": [0, 0]}}
    warnings = check_pack(_pack(tmp_path, source, metrics), as_of=date(2016, 12, 31), today=TODAY).warnings
    assert [w for w in warnings if w.startswith(
        "key `source.query`: 'route' is empty in every row of 12 quarters after its first value (e.g. 2014-Q1, "
        "2014-Q2, 2014-Q3, ...), and filled in 16: expected the column in every file the query reads")], warnings
    assert not [w for w in warnings if "aggregates.routes.where" in w], warnings


def test_a_single_series_own_empty_days_are_no_file_lacking_its_column(tmp_path: Path) -> None:
    """Trial 54: one station's daily temperatures in a file a year, a few days without a reading scattered among
    them, were told "'tmin' is empty in every row of 17 days after its first value ... expected the column in every
    file the query reads"; a file a year whose header names the column otherwise still is."""
    (tmp_path / "years").mkdir()
    gaps = {date(2015, 2, 8), date(2015, 6, 11), date(2015, 6, 12), date(2016, 3, 1)}
    for year, name in ((2015, "tmin"), (2016, "tmin"), (2017, "tmin")):
        days = [date(year, 1, 1) + timedelta(days=n) for n in range(365)]
        _csv(tmp_path / "years" / f"{year}.csv", ["day", "id", name], [[d, "c", "" if d in gaps else 40] for d in days])
    source = {"format": "duckdb", "query": "SELECT * FROM read_csv('years/*.csv', union_by_name = true)",
              "period_column": "day", "grain": "day", "publication_lag_days": 1,
              "columns": ["tmin"]}
    metrics = {"level_now": {"agg": "avg", "column": "tmin", "window": [0, 6], "min_rows": 1}}
    warnings = check_pack(_pack(tmp_path, source, metrics), as_of=date(2017, 12, 31), today=TODAY).warnings
    assert not [w for w in warnings if "source.query" in w], warnings
    _csv(tmp_path / "years" / "2016.csv", ["day", "id", "t_min"],
         [[date(2016, 1, 1) + timedelta(days=n), "c", 40] for n in range(366)])
    warnings = check_pack(_pack(tmp_path, source, metrics), as_of=date(2017, 12, 31), today=TODAY).warnings
    assert [w for w in warnings if w.startswith("key `source.query`: 'tmin' is empty in every row of ")], warnings


def test_a_wide_source_s_one_empty_line_is_no_file_lacking_its_column(tmp_path: Path) -> None:
    """Trial 57: Ansett's weekly passengers, three classes side by side (`wide` by entity, a `query` dating the
    rows), one week of 283 empty in every class, were told "'passengers' is empty in every row of 1 week after its
    first value ... expected the column in every file the query reads": that week's one line is a row per class, not
    several lines. Several lines of one week, all empty, still are a file lacking the column."""
    rows = [[k, "" if k == 13 else 2 + k % 3, "" if k == 13 else 20 + k % 5] for k in range(1, 41)]
    name = _csv(tmp_path / "classes.csv", ["rownames", "First.Class", "Economy.Class"], rows)
    source = {"format": "duckdb", "query": f"SELECT *, DATE '1987-06-29' + to_weeks(rownames - 1) AS date FROM "
              f"'{name}'", "entity_id": None, "entity_name": None, "period_column": "date", "grain": "week",
              "publication_lag_days": 7,
              "wide": {"columns": ["First.Class", "Economy.Class"], "entity": "class", "value": "passengers"}}
    metrics = {"level_now": {"agg": "last", "column": "passengers"}}
    warnings = check_pack(_pack(tmp_path, source, metrics), as_of=date(1988, 4, 10), today=TODAY).warnings
    assert not [w for w in warnings if "source.query" in w], warnings


def test_a_file_whose_column_holds_text_is_no_file_lacking_the_column(tmp_path: Path) -> None:
    """Trial 54: a year's file writing its wages `13.78 GBP` was told both `strip_from_numbers: ['GBP']` and
    "'wage' is empty in every row of 1 year ... expected the column in every file the query reads (one whose header
    names it otherwise ...)": its file has the column, its cells refused as no numbers."""
    (tmp_path / "trips").mkdir()
    for month in ("01", "02", "03"):
        _csv(tmp_path / "trips" / f"2015-{month}.csv", ["day", "route", "fare"],
             [[f"2015-{month}-{d:02d}", r, "10 GBP" if month == "02" else 10] for r in ("a", "b") for d in (3, 13)])
    pack = _fares_over(tmp_path, "SELECT * FROM read_csv('trips/*.csv', union_by_name = true)")
    report = check_pack(pack, as_of=date(2015, 4, 30), today=TODAY)
    assert not [w for w in report.warnings if "source.query" in w], report.warnings
    assert [f for f in report.facts if "strip_from_numbers: ['GBP']" in f], report.facts


def test_a_folder_of_files_one_naming_an_aggregated_column_otherwise_is_told_so(tmp_path: Path) -> None:
    """Trial 37: a folder of monthly exports read by `union_by_name`, one month's file writing `fare_usd` for `fare`,
    or one stock's file `return` for `ret`: every row of that month (or that stock) had no value of a column the pack
    sums or reads, and check said only "metrics with gaps". The query is named, with the periods or entities whose
    rows lack the column; a measure begun later (empty before its first value) is not told."""
    (tmp_path / "trips").mkdir()
    for month, fare in (("01", "fare"), ("02", "fare"), ("03", "fare_usd"), ("04", "fare")):
        _csv(tmp_path / "trips" / f"2015-{month}.csv", ["day", "route", fare, "tip"],
             [[f"2015-{month}-{d:02d}", r, 10, 1 if month >= "02" else ""] for r in ("a", "b") for d in (3, 13)])
    pack = _pack(tmp_path, {"format": "duckdb", "query": "SELECT * FROM read_csv('trips/*.csv', union_by_name = "
                            "true)", "entity_id": "route", "entity_name": "route", "shape": "events",
                            "period_column": "day",
                            "aggregates": {"fares": {"agg": "sum", "column": "fare"},
                                           "tips": {"agg": "sum", "column": "tip"}}},
                 {"level_now": {"agg": "last", "column": "fares"}})
    warnings = [w for w in check_pack(pack, as_of=date(2015, 5, 31), today=TODAY).warnings if "query" in w]
    assert warnings == [
        "key `source.query`: 'fare' is empty in every row of 1 month after its first value (e.g. 2015-03), and "
        "filled in 3: expected the column in every file the query reads (one whose header names it otherwise, read "
        "by `union_by_name`, gives its rows none)"], warnings
    (tmp_path / "parts").mkdir()
    _csv(tmp_path / "parts" / "a.csv", ["month", "stock", "ret"],
         [[f"2015-{m:02d}", s, 0.01] for s in ("ge", "ibm") for m in range(1, 7)])
    _csv(tmp_path / "parts" / "b.csv", ["month", "stock", "return"], [[f"2015-{m:02d}", "mobil", 0.02]
                                                                        for m in range(1, 7)])
    panel = _pack(tmp_path, {"format": "duckdb", "query": "SELECT * FROM read_csv('parts/*.csv', union_by_name = "
                             "true)", "entity_id": "stock", "entity_name": "stock", "period_column": "month",
                             "columns": ["ret"], "signed": ["ret"]},
                  {"level_now": {"agg": "last", "column": "ret"}})
    warnings = [w for w in check_pack(panel, as_of=date(2015, 7, 31), today=TODAY).warnings if "query" in w]
    assert warnings == [
        "key `source.query`: 'ret' is empty in every row of 1 entity (e.g. ['mobil']) and in no row of the other 2: "
        "expected the column in every file the query reads (one whose header names it otherwise, read by "
        "`union_by_name`, gives its rows none)"], warnings


def test_a_duckdb_query_over_files_reads_a_folder_of_monthly_exports(tmp_path: Path) -> None:
    """Monthly exports, a file each (`exports/2015-01.csv`, ...), or a hive-partitioned Parquet folder, needed
    concatenating first. `format: duckdb` with a `query` and no `path` runs the query over the files it names,
    relative to the pack (globs, `union_by_name`, `hive_partitioning`): the same rows as one file."""
    rows = [[e, f"2015-{m:02d}", 10 * m + i] for m in range(1, 7) for i, e in enumerate(["a", "b"])]
    whole = _pack(tmp_path, {"path": _csv(tmp_path / "all.csv", ["id", "month", "level"], rows),
                             "period_column": "month", "columns": ["level"]},
                  {"level_now": {"agg": "last", "column": "level"}})
    (tmp_path / "exports").mkdir()
    for m in range(1, 7):
        _csv(tmp_path / "exports" / f"2015-{m:02d}.csv", ["id", "month", "level"], [r for r in rows
                                                                                    if r[1] == f"2015-{m:02d}"])
        lake = tmp_path / "lake" / f"month=2015-{m:02d}"
        lake.mkdir(parents=True)
        pl.DataFrame({"id": ["a", "b"], "level": [10 * m, 10 * m + 1]}).write_parquet(lake / "part-0.parquet")
    expected = read_snapshot(whole, date(2015, 7, 31), today=TODAY).history.select(
        "entity_id", "period", "level").sort("entity_id", "period").rows()
    assert len(expected) == 12
    for query in ("SELECT * FROM read_csv('exports/*.csv', all_varchar = true)",
                  "SELECT id, month, level FROM read_parquet('lake/*/*.parquet', hive_partitioning = true)"):
        pack = _pack(tmp_path, {"format": "duckdb", "query": query, "period_column": "month",
                                "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})
        assert read_snapshot(pack, date(2015, 7, 31), today=TODAY).history.select(
            "entity_id", "period", "level").sort("entity_id", "period").rows() == expected, query
        assert check_pack(pack, as_of=date(2015, 7, 31), today=TODAY).problems == []
    missing = _pack(tmp_path, {"format": "duckdb", "query": "SELECT * FROM read_csv('export/*.csv')",
                               "period_column": "month", "columns": ["level"]},
                    {"level_now": {"agg": "last", "column": "level"}})
    assert check_pack(missing, as_of=date(2015, 7, 31), today=TODAY).problems == [
        f"key `source.query`: got \"SELECT * FROM read_csv('export/*.csv')\"; it reads 'export/*.csv', which names "
        f"no file of {tmp_path} (paths are relative to the pack): expected a SELECT that runs on the files of "
        f"{tmp_path}"]
    with pytest.raises(CriteriaError, match=r"key `source.path`: got nothing; expected the source file, relative to "
                       r"the pack \(or `format: duckdb` and a `query`"):
        _pack(tmp_path, {"query": "SELECT 1", "period_column": "month", "columns": ["level"]},
              {"level_now": {"agg": "last", "column": "level"}})


def test_a_long_table_read_as_a_panel_names_the_long_key(tmp_path: Path) -> None:
    """A long file read without `long`: its names are no columns; the column holding them is named, with `long`."""
    rows = [["a", f"2015-{m:02d}", name, m] for m in range(1, 13) for name in ("sales", "listings")]
    name = _csv(tmp_path / "l.csv", ["id", "month", "variable", "value"], rows)
    pack = _pack(tmp_path, {"path": name, "period_column": "month", "columns": ["sales", "listings"]},
                 {"level_now": {"agg": "last", "column": "sales"}})
    assert check_pack(pack, as_of=date(2015, 12, 31), today=TODAY).problems == [
        "key `source.columns.0`: got 'sales'; the file has no such column, but its column 'variable' holds ['sales', "
        "'listings'] as values: a long table (one value per row, named by 'variable'): expected `long: {names: "
        "variable, values: <the column of the numbers, one of ['value']>}` beside `columns`"]


def test_a_joined_table_with_a_column_per_year_joins_by_entity_and_year(tmp_path: Path) -> None:
    """A World Bank table joined to a yearly panel: `wide.period` (and `long`) in a join; a column per entity is
    refused there, naming why."""
    main = _csv(tmp_path / "m.csv", ["id", "year", "sales"], [["ABW", y, y - 2000] for y in range(2010, 2015)])
    years = [str(y) for y in range(2010, 2015)]
    joined = _csv(tmp_path / "wb.csv", ["country", "indicator", *years],
                  [["ABW", "SP.POP.TOTL", *range(100, 105)], ["ABW", "SP.URB.GROW", *range(5)]])
    source = {"path": main, "year_column": "year", "grain": "year", "columns": ["sales"]}
    join = {"table": "wb", "path": joined, "entity_id": "country",
            "wide": {"columns": years, "period": "year", "value": "value"},
            "long": {"names": "indicator", "values": "value"}, "columns": ["SP.POP.TOTL", "SP.URB.GROW"]}
    pack = _pack(tmp_path, {**source, "join": [join]}, {"level_now": {"agg": "last", "column": "SP.POP.TOTL"}})
    history = read_snapshot(pack, date(2015, 6, 30), today=TODAY).history
    assert history.select("period", "sales", "SP.POP.TOTL", "SP.URB.GROW").rows()[-2:] == [
        (date(2013, 1, 1), 13.0, 103.0, 3.0), (date(2014, 1, 1), 14.0, 104.0, 4.0)]
    with pytest.raises(CriteriaError, match=r"key `source.join.0.wide`: unknown key.*`wide.entity`, a column per "):
        _pack(tmp_path, {**source, "join": [{**join, "wide": {"columns": ["a"], "entity": "c", "value": "v"}}]},
              {"level_now": {"agg": "last", "column": "sales"}})


def _tweets_like(tmp_path: Path, bad: str) -> CriteriaPack:
    """Monthly rows with a free-text column before the date (a tweet's), and one bad line of entity `a` (`bad`)."""
    lines = ["id,note,month,level"] + [f"{e},fine,2015-{m:02d},{m}" for m in range(1, 13) for e in ("a", "b")]
    lines.insert(7, bad)  # between a's 2015-03 and b's
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    return _pack(tmp_path, {"path": "t.csv", "period_column": "month", "publication_lag_days": 0,
                            "columns": ["level"]},
                 {"level_now": {"agg": "last", "column": "level"},
                  "level_3m": {"agg": "sum", "column": "level", "window": [0, 2]}},
                 hard_filters=[{"name": "enough", "metric": "level_3m", "op": ">=", "value": 0}])


def test_a_line_with_a_field_too_many_is_dated_by_the_reading_that_names_a_period(tmp_path: Path) -> None:
    """Trial 17: one tweet with an unquoted comma in its text was quarantined with no period, so its device's every
    metric was unknown on every night (10,718 tweets blanked by one line). The line's date, read from its end past
    the text's extra field, names 2015-03 (read from its start, ` and more`, no date): the line is that period's,
    unseen before it is published, and its entity's metrics are unknown only where a window reaches it."""
    pack = _tweets_like(tmp_path, "a,fine, and more,2015-03,99")
    before = read_snapshot(pack, date(2015, 2, 28), today=TODAY)
    assert before.quarantined.height == 0
    during = read_snapshot(pack, date(2015, 4, 30), today=TODAY)
    assert during.quarantined.select("source_row", "entity_id", "period").rows() == [(8, "a", date(2015, 3, 1))]
    after = read_snapshot(pack, date(2015, 12, 31), today=TODAY)
    found, _ = scan(pack, date(2015, 12, 31), after.anchor_period, after.metrics, after.history, after.quarantined)
    assert {c.id: c.filters["enough"] for c in found} == {"a": FilterResult.PASS, "b": FilterResult.PASS}
    found, _ = scan(pack, date(2015, 4, 30), during.anchor_period, during.metrics, during.history,
                    during.quarantined)
    assert {c.id: c.filters["enough"] for c in found} == {"a": FilterResult.UNCLEAR, "b": FilterResult.PASS}


def test_a_line_with_a_field_too_many_is_dated_when_the_period_column_is_called_period(tmp_path: Path) -> None:
    """Trial 22: samplonomy's period column is called `period`. A line with a field too many, `2014Q4` read from its
    start, was left undated, its region's every metric unknown on every night: the readings' periods were computed
    under the name `period`, and the column's own text (`2014Q4`, `balance`) was read in their place, two periods."""
    lines = ["region,period,measure,value"] + [f"{e},2015Q{q},gdp,{q}" for q in range(1, 5) for e in ("a", "b")]
    lines.insert(4, "a,2015Q2,gdp,7,extra")
    (tmp_path / "s.csv").write_text("\n".join(lines) + "\n")
    pack = _pack(tmp_path, {"path": "s.csv", "entity_id": "region", "entity_name": "region", "grain": "quarter",
                            "period_column": "period", "publication_lag_days": 0,
                            "long": {"names": "measure", "values": "value"}, "columns": ["gdp"]},
                 {"level_now": {"agg": "last", "column": "gdp"}})
    quarantined = read_snapshot(pack, date(2015, 12, 31), today=TODAY).quarantined
    assert quarantined.select("source_row", "entity_id", "period").rows() == [(5, "a", date(2015, 4, 1))]


def test_a_line_with_a_field_too_many_is_dated_under_a_published_column_and_seen_once_published(
        tmp_path: Path) -> None:
    """Trial 38: under `published_column` (house sales known 14 days after them) a line with a field too many was
    left undated, its home size's every metric unknown on every night. It is now its period's, as under the lag
    rule, and unseen until the day its own reading says it was published."""
    lines = ["id,note,month,published,level"] + [
        f"{e},fine,2015-{m:02d},2015-{m:02d}-28,{m}" for m in range(1, 13) for e in ("a", "b")]
    lines.insert(7, "a,fine, and more,2015-03,2015-05-10,99")
    (tmp_path / "p.csv").write_text("\n".join(lines) + "\n")
    pack = _pack(tmp_path, {"path": "p.csv", "period_column": "month", "published_column": "published",
                            "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})
    assert read_snapshot(pack, date(2015, 5, 9), today=TODAY).quarantined.height == 0
    seen = read_snapshot(pack, date(2015, 5, 10), today=TODAY).quarantined
    assert seen.select("source_row", "entity_id", "period").rows() == [(8, "a", date(2015, 3, 1))]


def test_a_line_whose_two_readings_both_name_a_period_stays_undated(tmp_path: Path) -> None:
    """Read from its start and from its end, this line names two periods: which is its own cannot be told, so it is
    every night's, as before."""
    pack = _tweets_like(tmp_path, "a,x,2015-04,2015-03,99")
    (row,) = read_snapshot(pack, date(2015, 12, 31), today=TODAY).quarantined.select("period").rows()
    assert row == (None,)


def test_a_line_with_a_stray_quote_is_dated_by_its_fields_read_without_it(tmp_path: Path) -> None:
    """Trial 23: a line `200,"Bahrain,Asia,1952,...` (a quote opened before a name and closed nowhere) was
    quarantined with no period, its country's every metric unknown on every night, though its fields, read without
    the quote, name its year as every other line's do: it is now that period's line."""
    pack = _tweets_like(tmp_path, 'a,"fine,2015-03,99')
    quarantined = read_snapshot(pack, date(2015, 12, 31), today=TODAY).quarantined
    assert quarantined.select("source_row", "entity_id", "period", "reason").rows() == [
        (8, "a", date(2015, 3, 1), "unbalanced quote")]


def test_a_shifted_reading_outside_the_files_periods_does_not_leave_a_line_undated(tmp_path: Path) -> None:
    """Trial 23: gapminder's `1,234,567` written unquoted in the population column gave a line two fields too many;
    read from its end, its year was `1`, beside 1954 read from its start, so the line stayed undated and Bulgaria's
    every metric was unknown on every night. A reading outside the periods the parsed rows span (2010 to 2015 here)
    is no date: the line is 2012's."""
    lines = ["id,year,pop,level"] + [f"{e},{y},{y - 2000},{y}" for y in range(2010, 2016) for e in ("a", "b")]
    lines.insert(6, "a,2012,1,234,567,7")
    (tmp_path / "y.csv").write_text("\n".join(lines) + "\n")
    pack = _pack(tmp_path, {"path": "y.csv", "grain": "year", "year_column": "year", "publication_lag_days": 0,
                            "columns": ["pop", "level"]},
                 {"level_now": {"agg": "last", "column": "level"}})
    quarantined = read_snapshot(pack, date(2015, 12, 31), today=TODAY).quarantined
    assert quarantined.select("source_row", "entity_id", "period").rows() == [(7, "a", date(2012, 1, 1))]


def test_a_table_of_one_series_joins_every_entity_by_period(tmp_path: Path) -> None:
    """Trial 16: the weather by date could not be joined to every station (a join needs an entity id). A joined
    table with `every_entity: true` (an interest rate, a price index, the weather) gives each period's row to every
    entity of that period, point in time by its own dates: a rate not yet published is a gap."""
    main = _csv(tmp_path / "m.csv", ["id", "month", "sales"],
                [[e, f"2015-{m:02d}", m + 10 * k] for m in range(1, 7) for k, e in enumerate(["a", "b"])])
    rates = _csv(tmp_path / "rates.csv", ["date", "rate", "published"],
                 [[f"2015-{m:02d}-01", m / 10, f"2015-{m + 1:02d}-05" if m < 6 else "2015-08-20"]
                  for m in range(1, 7)])
    join = {"table": "rates", "path": rates, "every_entity": True, "period_column": "date",
            "published_column": "published", "columns": ["rate"]}
    pack = _pack(tmp_path, {"path": main, "period_column": "month", "publication_lag_days": 0, "columns": ["sales"],
                            "join": [join]}, {"level_now": {"agg": "last", "column": "sales"}})
    history = read_snapshot(pack, date(2015, 7, 31), today=TODAY).history.sort("entity_id", "period")
    assert history.filter(pl.col("period") >= date(2015, 5, 1)).select("entity_id", "period", "rate").rows() == [
        ("a", date(2015, 5, 1), 0.5), ("a", date(2015, 6, 1), None),  # June's rate is published in August
        ("b", date(2015, 5, 1), 0.5), ("b", date(2015, 6, 1), None)]
    assert check_pack(pack, as_of=date(2015, 7, 31), today=TODAY).problems == []
    with pytest.raises(CriteriaError, match=r"key `source.join.0.entity_id`: got 'code'; expected no `entity_id` "
                                            r"beside `every_entity: true`"):
        _pack(tmp_path, {"path": main, "period_column": "month", "columns": ["sales"],
                         "join": [{**join, "entity_id": "code"}]}, {"level_now": {"agg": "last", "column": "sales"}})


def test_a_row_refused_in_a_table_joined_to_every_entity_is_every_entitys_gap_named(tmp_path: Path) -> None:
    """Trial 101: the latest rate of a table joined to every entity, refused as no number, left every entity's
    average of it told "2 of 3 months of rate filled" (the rate was in the file), and the run summary named an entity
    `every-entity`. The gap names the refused row, as for an entity's own; the summary says "every entity"; and a
    refusal that is everyone's lets no entity past the cap."""
    main = _csv(tmp_path / "m.csv", ["id", "month", "sales"],
                [[e, f"2015-{m:02d}", m + 10 * k] for m in range(1, 7) for k, e in enumerate(["a", "b", "c"])])
    rates = _csv(tmp_path / "rates.csv", ["date", "rate"],
                 [[f"2015-{m:02d}-01", m / 10 if m < 6 else "1,2x"] for m in range(1, 7)])
    join = {"table": "rates", "path": rates, "every_entity": True, "period_column": "date",
            "publication_lag_days": 0, "columns": ["rate"]}
    pack = _pack(tmp_path, {"path": main, "period_column": "month", "publication_lag_days": 0, "columns": ["sales"],
                            "join": [join]},
                 {"level_now": {"agg": "last", "column": "sales"},
                  "rate_now": {"agg": "avg", "column": "rate", "window": [0, 2]}})
    pack = pack.model_copy(update={"caps": pack.caps.model_copy(update={"max_candidates": 2})})
    snapshot = read_snapshot(pack, date(2015, 6, 30), today=TODAY)
    found, report = scan(pack, date(2015, 6, 30), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    assert [c.data_gaps for c in found] == [
        ["rate_now: unknown: source row 7 is quarantined (join rates: rate not a number), in its reach"]] * 3
    assert report.quarantined_entities == [
        {"entity": "every entity", "rows": 1, "why": "join rates: rate not a number"}]
    assert [c.went_on for c in found] == [False, True, True] and not any(c.flagged for c in found)


@pytest.mark.parametrize("grain", ["month", "year", "events"])
def test_a_series_joined_to_every_entity_reaches_back_before_an_entitys_first_row(tmp_path: Path, grain: str) -> None:
    """Trial 107: a president's first quarters had no year-ago GDP. A table joined by `every_entity` met only the
    periods an entity had a row in, so a window reaching before its first row was a gap, its filter UNCLEAR, for a
    figure the file held. The series is every entity's: a window reaching before an entity's first row reads it
    there (the entity's own columns stay gaps), from the same table, monthly or (carried as for a month) yearly;
    and the verifier, recomputing from the rows the candidate is given, confirms the same figure."""
    from opportunity_assets.analyses.logic import analyze
    from opportunity_assets.verifications.logic import verify

    main = _csv(tmp_path / "m.csv", ["id", "month", "sales"],
                [["a", f"2015-{m:02d}", 50 + m] for m in range(1, 13)]
                + [["b", f"2015-{m:02d}", 60 + m] for m in range(10, 13)])
    events = {"shape": "events", "aggregates": {"sales": {"agg": "sum", "column": "sales"}}} \
        if grain == "events" else {"columns": ["sales"]}  # (a sale of each month: an event a month)
    monthly = grain != "year"
    rates = _csv(tmp_path / "rates.csv", ["date", "rate"],
                 [[f"2015-{m:02d}-01", m / 10] for m in range(1, 13)] if monthly else
                 [["2014-01-01", 0.25], ["2015-01-01", 0.5]])
    join = {"table": "rates", "path": rates, "every_entity": True, "period_column": "date",
            "publication_lag_days": 0, "columns": ["rate"], **({} if monthly else {"grain": "year"})}
    metrics = {"level_now": {"agg": "last", "column": "sales"},
               "rate_before": {"agg": "last", "column": "rate", "window": [6, 6]}}
    pack = _pack(tmp_path, {"path": main, "period_column": "month", "publication_lag_days": 0, **events,
                            "join": [join]}, metrics,
                 hard_filters=[{"name": "rates", "metric": "rate_before", "op": ">=", "value": 0}],
                 required_inputs=["level_now", "rate_before"], formula={"components": [
                     {"name": "level", "expression": "level_now", "direction": "higher_is_better", "range": [0, 100],
                      "weight": 0.5, "label": "level"},
                     {"name": "rate", "expression": "rate_before * 100", "direction": "higher_is_better",
                      "range": [0, 100], "weight": 0.5, "label": "rate"}]})
    as_of = date(2016, 1, 15)  # (an events feed's January would be known empty, and latest, at its end)
    snapshot = read_snapshot(pack, as_of, today=TODAY)
    before = 0.6 if monthly else 0.5  # 2015-06's rate, or 2015's
    assert snapshot.metrics.sort("entity_id").select("entity_id", "level_now", "rate_before").rows() == [
        ("a", 62.0, before), ("b", 72.0, before)]
    assert snapshot.history.filter(pl.col("entity_id") == "b")["period"].to_list() == [
        date(2015, m, 1) for m in (10, 11, 12)]  # its own rows, as every check reads them
    earlier = snapshot.before_own.filter(pl.col("entity_id") == "b")
    assert earlier.filter(pl.col("period") == date(2015, 6, 1)).select("sales", "rate", "source_row").rows() == [
        (None, before, None)]
    assert earlier["period"].max() == date(2015, 9, 1) and snapshot.before_own["entity_id"].unique().to_list() == ["b"]
    found, _ = scan_read(pack, as_of, snapshot)
    (going,) = [c for c in found if c.id == "b"]
    assert going.filters == {"rates": FilterResult.PASS} and going.went_on and not going.data_gaps
    verification = verify(pack, going, analyze(pack, going))
    assert verification.status.value == "CONFIRMED", verification.checks


def test_a_one_row_table_known_at_a_date_joins_every_entity_every_period(tmp_path: Path) -> None:
    """`every_entity` with `known_at`: one row of constants (a tax rate, a fee schedule) beside every entity and
    period, once known."""
    main = _csv(tmp_path / "m.csv", ["id", "month", "sales"],
                [[e, f"2015-{m:02d}", m] for m in range(1, 4) for e in ("a", "b")])
    fees = _csv(tmp_path / "fees.csv", ["fee"], [[2.5]])
    join = {"table": "fees", "path": fees, "every_entity": True, "shape": "snapshot", "known_at": "2015-02-15",
            "columns": ["fee"]}
    pack = _pack(tmp_path, {"path": main, "period_column": "month", "publication_lag_days": 0, "columns": ["sales"],
                            "join": [join]}, {"level_now": {"agg": "last", "column": "sales"}})
    before = read_snapshot(pack, date(2015, 2, 1), today=TODAY).history
    after = read_snapshot(pack, date(2015, 3, 31), today=TODAY).history
    assert before["fee"].to_list() == [None, None]
    assert after.sort("entity_id", "period")["fee"].to_list() == [2.5] * 6


@pytest.mark.parametrize("written", [["true", "false"], ["True", "False"], ["TRUE", "FALSE"], ["yes", "no"],
                                     ["Yes", "No"], ["on", "off"]])
def test_a_truth_value_listed_in_a_condition_matches_it_in_any_case(tmp_path: Path, written: list[str]) -> None:
    """Trial 17: a boolean is text as each format spells it, `false` from Parquet and JSON Lines, `False` from
    pandas' CSV, so `where: {column: is_retweet, in: [true]}` (YAML's true, read as 'True') kept no row of one and
    every row of the other. `true` and `false` now match in any case; other values are compared as written. Trial
    33: `in: [yes]` over a survey's `yes` and `no`, read by YAML as true, was "got ['True']; 'True' matches no row":
    a truth value matches the words YAML reads as it, `yes` and `on`, too."""
    rows = [["a", f"2015-{m:02d}-0{d}", written[d % 2]] for m in range(1, 4) for d in (1, 2, 3)]
    name = _csv(tmp_path / "e.csv", ["id", "day", "retweet"], rows)
    pack = _pack(tmp_path, {"path": name, "period_column": "day", "shape": "events", "publication_lag_days": 0,
                            "aggregates": {"n": {"agg": "count"},
                                           "retweets": {"agg": "count", "where": [{"column": "retweet",
                                                                                   "in": [True]}]}}},
                 {"level_now": {"agg": "last", "column": "retweets"}})
    history = read_snapshot(pack, date(2015, 3, 31), today=TODAY).history
    assert history.select("n", "retweets").rows() == [(3.0, 1.0), (3.0, 1.0), (3.0, 1.0)]
    assert check_pack(pack, as_of=date(2015, 3, 31), today=TODAY).problems == []


def _quarterly(tmp_path: Path, headers: list[str], years: list[Any] | None = None) -> str:
    """A row a year and a column a quarter (trial 111: six quarterly series, `Series, Year, Q1, ..., Q4`), written
    with `headers` and, per row, `years` (2000 to 2002 for each of two series by default)."""
    years = years or [2000, 2001, 2002] * 2
    rows = [[series, year, *[10 * i + q for q in range(len(headers))]]
            for i, (series, year) in enumerate(zip(["Gas"] * 3 + ["Wool"] * 3, years, strict=True))]
    return _csv(tmp_path / "quarters.csv", ["Series", "Year", *headers], rows)


def test_a_row_a_year_s_month_headed_sept_is_september(tmp_path: Path) -> None:
    """Trial 111: a year-row table headed `Jan, ..., Aug, Sept, Oct, ...` (how many offices shorten September)
    quarantined every September as a period unparseable, and check told `year_column`, which the pack had: `Sept`
    is September, in a header or a `month_column`."""
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec"]
    name = _csv(tmp_path / "m.csv", ["Series", "Year", *months],
                [["Gas", year, *range(12)] for year in (2000, 2001)])
    pack = _pack(tmp_path, {"path": name, "entity_id": "Series", "entity_name": "Series", "year_column": "Year",
                            "wide": {"columns": months, "period": "month", "value": "level"}},
                 {"level_now": {"agg": "last", "column": "level"}})
    assert check_pack(pack, as_of=date(2002, 3, 31), today=TODAY).problems == []
    periods = read_snapshot(pack, date(2002, 3, 31), today=TODAY).history["period"]
    assert (periods.len(), date(2001, 9, 1) in periods.to_list()) == (24, True)


def test_month_headers_under_a_quarter_grain_with_a_year_unread_name_the_grain(tmp_path: Path) -> None:
    """Trial 111: months read under `grain: quarter` (three rows a quarter) with one row's year written `2000r`:
    check stopped on a traceback (the duplicated rows of no period had no quarter to name). Now the grain."""
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    name = _csv(tmp_path / "m.csv", ["Series", "Year", *months],
                [["Gas", year, *range(12)] for year in ("2000r", 2001, 2002)])
    pack = _pack(tmp_path, {"path": name, "entity_id": "Series", "entity_name": "Series", "year_column": "Year",
                            "grain": "quarter", "wide": {"columns": months, "period": "month", "value": "level"}},
                 {"level_now": {"agg": "last", "column": "level"}})
    problems = check_pack(pack, as_of=date(2003, 6, 30), today=TODAY).problems
    assert any(p.startswith("key `source.grain`: got 'quarter'; ") for p in problems), problems


@pytest.mark.parametrize(("headers", "neither"), [
    (["Qtr1", "Qtr2", "Qtr3", "Qtr4"], "'Qtr1', 'Qtr2', 'Qtr3', 'Qtr4'"),
    (["Q1", "Q2", "Q3", "Q4", "Total"], "'Total'"),
    (["Jan-Mar", "Apr-Jun", "Jul-Sep", "Oct-Dec"], "'Jan-Mar', 'Apr-Jun', 'Jul-Sep', 'Oct-Dec'")])
def test_year_row_headers_neither_months_nor_quarters_name_those_headers(tmp_path: Path, headers: list[str],
                                                                         neither: str) -> None:
    """Trial 111: beside `year_column`, headers `Qtr1`, a `Total` among `Q1..Q4`, or `Jan-Mar` were refused as
    "expected no `year_column` beside `wide.period`", though `year_column` is how such a table is read: the
    headers are at fault, each named."""
    name = _quarterly(tmp_path, headers)
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "entity_id": "Series", "entity_name": "Series", "year_column": "Year",
                         "grain": "quarter", "wide": {"columns": headers, "period": "quarter", "value": "level"}},
              {"level_now": {"agg": "last", "column": "level"}})
    assert str(caught.value).endswith(
        f"key `source.wide.columns`: got {headers!r}; expected beside `year_column` ('Year') month names (Jan, ..., "
        f"Dec) or quarters (Q1, ..., Q4), each read in its row's year: {neither} (neither) left out of the list, or "
        "renamed"), str(caught.value)


def test_a_year_row_table_s_year_written_as_text_names_the_year_column(tmp_path: Path) -> None:
    """Trial 111: `Series, Year, Q1, ..., Q4` with years written `FY2000` (or `2000-01`) was told "for a row a year
    and a column a quarter, `year_column` naming the column of each row's year", which the pack had: the year
    column's values are at fault."""
    name = _quarterly(tmp_path, ["Q1", "Q2", "Q3", "Q4"], [f"FY{y}" for y in (2000, 2001, 2002)] * 2)
    pack = _pack(tmp_path, {"path": name, "entity_id": "Series", "entity_name": "Series", "year_column": "Year",
                            "grain": "quarter", "wide": {"columns": ["Q1", "Q2", "Q3", "Q4"], "period": "quarter",
                                                         "value": "level"}},
                 {"level_now": {"agg": "last", "column": "level"}})
    (problem, *_) = check_pack(pack, as_of=date(2003, 6, 30), today=TODAY).problems
    assert problem.startswith("key `source.year_column`: got 'Year'; ") and "'FY2000" in problem and \
        "each header of `source.wide.columns` read as a quarter in it" in problem, problem


@pytest.mark.parametrize(("key", "value"), [("columns", ["level"]), ("known_at", "2011-01-01")])
def test_a_key_refused_beside_a_year_row_table_is_not_told_the_year_column_it_has(tmp_path: Path, key: str,
                                                                                  value: Any) -> None:
    """Trial 111: `columns: [level]` (or `known_at`) beside `wide.period` and `year_column` was refused, told to
    add `year_column: Year`, which the pack had."""
    name = _quarterly(tmp_path, ["Q1", "Q2", "Q3", "Q4"])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "entity_id": "Series", "entity_name": "Series", "year_column": "Year",
                         "grain": "quarter", key: value,
                         "wide": {"columns": ["Q1", "Q2", "Q3", "Q4"], "period": "quarter", "value": "level"}},
              {"level_now": {"agg": "last", "column": "level"}})
    assert f"key `source.{key}`: got {value!r}; expected no `{key}` beside `wide.period`: its periods are its " \
        "columns' headers, each read in its row's year (`year_column`), its values `wide.value` ('level')" \
        in str(caught.value), str(caught.value)


@pytest.mark.parametrize(("wide", "said"), [
    ({"period": "year", "value": "level"}, "`source.wide.period`: got 'year'; expected a name of its own for the "
     "column the headers become, not `source.year_column`'s ('Year')"),
    ({"period": "Series", "value": "level"}, "`source.wide.period`: got 'Series'; expected a name of its own for "
     "the column the headers become, not `source.entity_id`'s ('Series')"),
    ({"period": "quarter", "value": "Year"}, "`source.wide.value`: got 'Year'; expected a name of its own for the "
     "column the values become, not `source.year_column`'s ('Year')")])
def test_a_wide_name_that_is_a_column_the_pack_reads_names_the_wide_key(tmp_path: Path, wide: dict[str, Any],
                                                                       said: str) -> None:
    """Trial 111: `wide.period: year` beside `year_column: Year` (or `Series`, the id) was told a headers' problem
    or "every year below 100"; the name clashes with a column the pack reads."""
    name = _quarterly(tmp_path, ["Q1", "Q2", "Q3", "Q4"])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "entity_id": "Series", "entity_name": "Series", "year_column": "Year",
                         "grain": "quarter", "wide": {"columns": ["Q1", "Q2", "Q3", "Q4"], **wide}},
              {"level_now": {"agg": "last", "column": wide["value"]}})
    assert str(caught.value).endswith(said), str(caught.value)


def test_a_grain_finer_than_a_year_row_table_s_quarters_names_the_headers_not_a_quarter_column(
        tmp_path: Path) -> None:
    """Trial 111: `grain: month` over `Series, Year, Q1, ..., Q4` was told "a year and a quarter column date a
    quarter", a column the pack has not: its quarters are the headers of `wide.columns`."""
    name = _quarterly(tmp_path, ["Q1", "Q2", "Q3", "Q4"])
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": name, "entity_id": "Series", "entity_name": "Series", "year_column": "Year",
                         "grain": "month", "wide": {"columns": ["Q1", "Q2", "Q3", "Q4"], "period": "quarter",
                                                    "value": "level"}},
              {"level_now": {"agg": "last", "column": "level"}})
    assert str(caught.value).endswith(
        "key `source.grain`: got 'month'; expected `quarter` or coarser: a year (`year_column`) and the quarters "
        "of `source.wide.columns` date a quarter"), str(caught.value)


def test_a_series_joined_to_every_entity_is_never_another_entitys_figures(tmp_path: Path) -> None:
    """Trial 128 (Nightingale's Crimean deaths by cause, the army's monthly strength joined by `every_entity`): with
    six months of history the army's figures were doubted as `copied` ("army equals another entity's figures for
    the 6 periods"): a series every entity carries is told from a copy only over more periods than a run is judged
    on. A column the pack joins to every entity is every entity's by its own declaration: never a copy."""
    from opportunity_assets.analyses.logic import analyze
    from opportunity_assets.verifications.logic import verify

    army = [8571, 9120, 15004, 23333, 22010, 21498]
    main = _csv(tmp_path / "m.csv", ["id", "month", "deaths"],
                [[e, f"1855-{m:02d}", 40 * (k + 1) + (m * 7 + k * 13) % 23]
                 for m in range(1, 7) for k, e in enumerate(["a", "b", "c", "d"])])
    joined = _csv(tmp_path / "army.csv", ["date", "army"], [[f"1855-{m:02d}-01", army[m - 1]] for m in range(1, 7)])
    join = {"table": "army", "path": joined, "every_entity": True, "period_column": "date",
            "publication_lag_days": 0, "columns": ["army"]}
    metrics = {"level_now": {"agg": "last", "column": "deaths"}, "army_now": {"agg": "last", "column": "army"}}
    pack = _pack(tmp_path, {"path": main, "period_column": "month", "publication_lag_days": 0, "columns": ["deaths"],
                            "join": [join]}, metrics)
    as_of = date(1855, 7, 31)
    found, _ = scan_read(pack, as_of, read_snapshot(pack, as_of, today=TODAY))
    copied = {c.id: sorted({f.column for f in verify(pack, c, analyze(pack, c)).data_findings if f.rule == "copied"})
              for c in found if c.went_on}
    assert copied == {"a": [], "b": [], "c": [], "d": []}, copied
