"""Quarantined cells and rows in the scan: a bad cell is its entity's gap, the entity goes on flagged (never capped
out by it), and the run summary names the entities and why."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from opportunity_assets.candidates.logic import scan
from opportunity_assets.candidates.quarantine import by_entity, short_reason, summary_line
from opportunity_assets.check.pack import check_pack
from opportunity_assets.records import FilterResult
from opportunity_assets.sources.snapshot import read_snapshot
from tests.conftest import month_rows
from tests.test_shapes import TODAY, _csv, _pack

AS_OF = date(2015, 1, 30)


def test_reasons_lose_their_raw_values() -> None:
    assert short_reason("column sales: abc is not a number; column volume: -1 is negative (that cell is a gap; "
                        "the row is kept)") == "sales not a number, volume negative"
    assert short_reason("period unparseable: year=20x4, month=11") == "period unparseable"
    assert short_reason("duplicated key (city, year, month) = (A, 2014, 11): 2 rows, none used") == "duplicated key"


def test_a_joined_tables_reason_keeps_its_own_why() -> None:
    """Trial 25: a joined table's duplicated key, its bad cells and its NULL ids were all `join guns` in the gaps
    and the brief: its table, and why."""
    assert short_reason("join guns (guns.duckdb): duplicated key (state, year) = (alabama, 1986): 2 rows, none "
                        "used") == "join guns: duplicated key"
    assert short_reason("join rates (PostgreSQL, URL from RATES_URL): column rate: n/a is not a number (that cell is "
                        "a gap; the row is kept)") == "join rates: rate not a number"


def test_the_summary_names_the_first_entities_and_points_to_the_rest() -> None:
    rows = [{"entity_id": e, "reason": "column sales: x is not a number"} for e in ("b", "a", "a", "c", "d")]
    rows.append({"entity_id": None, "reason": "missing entity id (city)"})
    entities = by_entity(rows, {"a": "Alpha", "b": "Bravo"})
    assert [e["entity"] for e in entities] == ["Alpha", "(no entity id)", "Bravo", "c", "d"]
    assert entities[0] == {"entity": "Alpha", "rows": 2, "why": "sales not a number"}
    line = summary_line(entities, 6)
    assert line.startswith("Quarantined source rows: 6, for Alpha (2: sales not a number), (no entity id) (1: ")
    assert line.endswith("; and other entities (the store's quarantine has every row)")


def test_an_entitys_rows_refused_for_several_reasons_are_said_with_each() -> None:
    """Trial 38: a spreadsheet export's "Total" row and its header repeated mid-file, both of no entity, were
    "(no entity id) (2: header repeated mid-file)" in the brief: the commonest reason stood for both rows."""
    rows = [{"entity_id": None, "reason": "header repeated mid-file"},
            {"entity_id": None, "reason": "missing entity id (maturity)"}]
    assert by_entity(rows, {}) == [{"entity": "(no entity id)", "rows": 2,
                                    "why": "header repeated mid-file and missing entity id"}]
    rows += [{"entity_id": None, "reason": "10 fields, expected 8 (the header's)"}] * 2
    assert by_entity(rows, {})[0]["why"] == "wrong field count, header repeated mid-file and others"


def test_a_bad_cell_never_caps_its_market_out(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Three markets pass, the cap is 2. Big's one bad sales cell empties its 12-month sales (liquidity UNCLEAR):
    it still goes on, in its own place, and Small stays capped as on clean data."""
    clean_rows = month_rows("Big", sales=300.0) + month_rows("Mid", sales=200.0) + month_rows("Small", sales=100.0)
    bad_rows = month_rows("Big", sales=300.0, overrides={(2014, 6): {"sales": "n/a?"}}) + clean_rows[36:]
    results = {}
    for label, rows in (("clean", clean_rows), ("bad", bad_rows)):
        pack = synthetic(rows, **{"caps.max_candidates": 2, "caps.min_candidates": 0})
        snapshot = read_snapshot(pack, AS_OF)
        found, report = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                             snapshot.quarantined)
        results[label] = ({c.id: (c.went_on, c.capped) for c in found}, {c.id: c for c in found}, report)
    clean, bad = results["clean"][0], results["bad"][0]
    assert clean == bad == {"big": (True, False), "mid": (True, False), "small": (False, True)}
    big, report = results["bad"][1]["big"], results["bad"][2]
    assert big.filters["liquidity"] == FilterResult.UNCLEAR
    assert any("quarantined (sales not a number)" in gap for gap in big.data_gaps)
    assert report.quarantined == 1
    assert report.quarantined_entities == [{"entity": "Big", "rows": 1, "why": "sales not a number"}]


def test_a_year_or_month_with_a_fraction_is_no_period(synthetic) -> None:  # type: ignore[no-untyped-def]
    """`2009.5` is no year (an integer cast rounded it to 2010, into another market-month); `2014.0` is 2014."""
    rows = month_rows("Big", overrides={(2014, 5): {"year": "2014.5"}, (2014, 6): {"year": "2014.0"},
                                        (2014, 7): {"month": "7.5"}})
    snapshot = read_snapshot(synthetic(rows), AS_OF)
    reasons = dict(zip(snapshot.quarantined["source_row"].to_list(), snapshot.quarantined["reason"].to_list(),
                       strict=True))
    lines = {(r["year"], r["month"]): i + 2 for i, r in enumerate(rows)}
    assert reasons == {lines["2014.5", 5]: "period unparseable: year=2014.5, month=5",
                       lines[2014, "7.5"]: "period unparseable: year=2014, month=7.5"}
    assert date(2014, 6, 1) in snapshot.history.filter(snapshot.history["entity_id"] == "Big")["period"].to_list()


def test_a_packs_missing_value_texts_are_gaps_not_bad_cells(synthetic) -> None:  # type: ignore[no-untyped-def]
    """`N/A` and `-` for a missing number are quarantined as bad cells by default, and gaps once the pack names
    them in `source.na_values` (NA and an empty cell always are)."""
    rows = month_rows("Big", overrides={(2014, 5): {"sales": "N/A"}, (2014, 6): {"inventory": " - "},
                                        (2014, 7): {"median": "NA"}})
    default = read_snapshot(synthetic(rows), AS_OF)
    assert sorted(r.split(":")[0] for r in default.quarantined["reason"].to_list()) == ["column inventory",
                                                                                      "column sales"]
    named = read_snapshot(synthetic(rows, **{"source.na_values": ["NA", "N/A", "-"]}), AS_OF)
    assert named.quarantined.height == 0
    big = named.history.filter(named.history["entity_id"] == "Big")
    may = big.filter(big["period"] == date(2014, 5, 1))
    assert may["sales"].to_list() == [None] and may["inventory"].to_list() == [6.0]


def test_a_missing_value_code_listed_as_a_number_is_read_as_its_text(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Trial 35: a survey's codes for no answer written unquoted, `na_values: [NA, 77, -1]` (YAML reads them as
    numbers), were refused as "key `source.na_values.1`: got 77; expected one name or text", once per code. A
    number listed is now the text it is written as, and its cells are gaps, as quoted codes' are."""
    rows = month_rows("Big", overrides={(2014, 5): {"sales": "77"}, (2014, 6): {"inventory": "-1"}})
    pack = synthetic(rows, **{"source.na_values": ["NA", 77, -1]})
    assert pack.source.na_values == ["NA", "77", "-1"]
    assert read_snapshot(pack, AS_OF).quarantined.height == 0


def test_check_suggests_na_values_for_the_texts_of_a_missing_number(synthetic) -> None:  # type: ignore[no-untyped-def]
    rows = month_rows("Big", overrides={(2014, 5): {"sales": "N/A"}, (2014, 6): {"sales": "N/A"},
                                        (2014, 7): {"inventory": "-"}})
    facts = check_pack(synthetic(rows), as_of=AS_OF).facts
    assert "cells written 'N/A' (2), '-' (1) are quarantined as not numbers: if they mean a missing number, list " \
           "them in `source.na_values`" in facts


def test_check_suggests_na_values_for_a_statistics_offices_missing_marks(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Trial 38: a spreadsheet export writing `n/a`, `-` and `..` for a missing number was told `na_values` for the
    first two, and `..` once per column as text in a numeric column: one cause said three times."""
    rows = month_rows("Big", overrides={(2014, 5): {"sales": ".."}, (2014, 6): {"inventory": ".."},
                                        (2014, 7): {"sales": "n/a"}})
    facts = check_pack(synthetic(rows), as_of=AS_OF).facts
    assert "cells written '..' (2), 'n/a' (1) are quarantined as not numbers: if they mean a missing number, list " \
           "them in `source.na_values`" in facts
    assert not [f for f in facts if "such as '..'" in f]


def test_check_suggests_na_values_for_nan_cells_too(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Trial 12: `NaN` (numpy's missing number) parses as a number that is not finite, so check's hint for the
    texts of a missing number passed it over; `na_values: [NaN]` makes it a gap."""
    rows = month_rows("Big", overrides={(2014, 5): {"sales": "NaN"}, (2014, 6): {"inventory": "NaN"}})
    facts = check_pack(synthetic(rows), as_of=AS_OF).facts
    assert "cells written 'NaN' (2) are quarantined as not numbers: if they mean a missing number, list them in " \
           "`source.na_values`" in facts
    assert read_snapshot(synthetic(rows, **{"source.na_values": ["NA", "NaN"]}), AS_OF).quarantined.height == 0


def test_check_names_a_few_cells_of_text_in_a_numeric_column(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Trial 14: a third of the aluminium premiums written `$200`, and NYC planes' seats `182 seats` in some rows,
    were quarantined with no line naming a cell: check's only hints were for `N/A`-like texts and grouped numbers,
    and its one for a currency sign came when most cells carried one. Each column's such cells are now a fact, with
    the dress where it is one; the texts of a missing number keep their own fact, and no line of this kind. One
    number with a note beside it (`900 homes`; trial 135's `11272.0 births`) is no missing-number token: it is told
    the key that strips the note, not `na_values`."""
    rows = month_rows("Big", overrides={(2014, 5): {"sales": "$120"}, (2014, 6): {"sales": "$130"},
                                        (2014, 7): {"listings": "900 homes"}, (2014, 8): {"inventory": "N/A"}})
    facts = check_pack(synthetic(rows), as_of=AS_OF).facts
    assert "cells of 'sales' such as '$120' (2) are quarantined as not numbers: they carry a currency sign: " \
           "expected `source.strip_from_numbers: ['$']`, which removes it before the number is read, or plain " \
           "numbers (the file exported without it)" in facts, facts
    assert "cells of 'listings' such as '900 homes' (1) are quarantined as not numbers: it is a number with 'homes' " \
           "written beside it: expected plain numbers in the column (the cell written without it at the source), or " \
           "`source.strip_from_numbers: ['homes']` if the column's cells carry it" in facts, facts
    assert not [f for f in facts if f.startswith("cells of 'inventory'")], facts


def test_thousands_and_decimal_separators_are_read_as_the_pack_says(synthetic) -> None:  # type: ignore[no-untyped-def]
    """`1,234` was not a number and `4,5` neither: a pack names how its numbers are written."""
    rows = month_rows("Big", overrides={(2014, 5): {"sales": "1,234", "volume": "1,234,000"}})
    plain = read_snapshot(synthetic(rows), AS_OF)
    assert plain.quarantined.height == 1  # by default a comma is no part of a number
    assert "cells such as '1,234' are quarantined as not numbers: if the source groups thousands or writes a " \
           "decimal comma, say so in `source.thousands_separator` / `source.decimal_separator` (these call for " \
           "`thousands_separator: ','`)" in check_pack(synthetic(rows), as_of=AS_OF).facts
    grouped = read_snapshot(synthetic(rows, **{"source.thousands_separator": ","}), AS_OF)
    may = grouped.history.filter(grouped.history["period"] == date(2014, 5, 1))
    assert grouped.quarantined.height == 0 and may["sales"].to_list() == [1234.0] and \
        may["volume"].to_list() == [1_234_000.0]
    european = [{k: str(v).replace(".", ",") if k in ("sales", "volume", "median", "listings", "inventory") else v
                 for k, v in row.items()} for row in month_rows("Big", inventory=6.5)]
    european[28]["median"] = "150.000,5"  # 2014-05
    read = read_snapshot(synthetic(european, **{"source.thousands_separator": ".", "source.decimal_separator": ","}),
                         AS_OF)
    may = read.history.filter(read.history["period"] == date(2014, 5, 1))
    assert read.quarantined.height == 0 and may["inventory"].to_list() == [6.5] and may["median"].to_list() == \
        [150_000.5]


def test_a_thousands_separator_removes_only_a_grouping_never_a_decimal_comma(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Trial 38: a European export's decimal commas (`12,5`, `0,325`) under `thousands_separator: ","` were read as
    125 and 325, every figure a hundred or a thousand times too large, and check blamed a formula's range. Only a
    grouped number loses its separators (`1,234`, `1,23,456`, `-12,345.6`); another text stays no number,
    quarantined, and check names the separators."""
    rows = month_rows("Big", overrides={(2014, 3): {"inventory": "12,5"}, (2014, 4): {"inventory": "0,325"},
                                        (2014, 5): {"sales": "1,234", "volume": "1,23,456", "median": "-12,345.6"}})
    read = read_snapshot(synthetic(rows, **{"source.thousands_separator": ",", "source.signed": ["median"]}), AS_OF)
    assert sorted(read.quarantined["period"].to_list()) == [date(2014, 3, 1), date(2014, 4, 1)]
    may = read.history.filter(read.history["period"] == date(2014, 5, 1)).row(0, named=True)
    assert (may["sales"], may["volume"], may["median"]) == (1234.0, 123456.0, -12345.6)


def test_thousands_grouped_by_a_no_break_space_are_read_as_spaced(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Trial 35: a French export groups thousands with a no-break space (`2 400,50`, U+202F; U+00A0 elsewhere):
    every such cell was quarantined, check saying "not numbers; expected a numeric column (list only numeric
    columns)" of a numeric column, and `thousands_separator: " "` read none of them. Both spaces are now the
    space that key names, and check names the key for them."""
    rows = [{k: str(v).replace(".", ",") if k in ("sales", "volume", "median", "listings", "inventory") else v
             for k, v in row.items()} for row in month_rows("Big")]
    for k, row in enumerate(rows):
        one, other = ("\u202f", "\u00a0")[::1 if k % 2 else -1]
        row["volume"] = f"22{one}500{other}000"
    french = {"source.decimal_separator": ","}
    problems = check_pack(synthetic(rows, **french), as_of=AS_OF).problems
    assert any(p.startswith("key `source.thousands_separator`: not set; 'volume': ") and
               p.endswith("expected `thousands_separator: ' '` to read them") for p in problems), problems
    read = read_snapshot(synthetic(rows, **french, **{"source.thousands_separator": " "}), AS_OF)
    assert read.quarantined.height == 0 and set(read.history["volume"].to_list()) == {22_500_000.0}


def test_a_header_repeated_mid_file_is_quarantined_as_such(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Trial 35: two exports concatenated repeat the header mid-file. Its line was read as a row of an entity called
    `city` (the id column's name) whose period did not parse, and check said so three ways: "period unparseable",
    "1 quarantined row has no period (source row 38 of 'city'): its entity's metrics are unknown on every night" and
    "1 row of `source.year_column` 'year' is written otherwise than the rest (e.g. 'year')". Now the line is
    quarantined as the header again, of no entity, and every real row is read as before."""
    rows = month_rows("Big") + month_rows("Small", sales=40.0)
    pack = synthetic(rows)
    read = read_snapshot(pack, AS_OF).history.height
    text = pack.path_of(pack.source).read_text()
    header, *lines = text.splitlines()
    pack.path_of(pack.source).write_text("\n".join([header, *lines[:36], header, *lines[36:]]) + "\n")
    snapshot = read_snapshot(pack, AS_OF)
    quarantined = snapshot.quarantined.to_dicts()
    assert [(q["source_row"], q["entity_id"], q["reason"]) for q in quarantined] == [
        (38, None, "header repeated mid-file (two exports joined?): its line holds the columns' names")]
    assert snapshot.history.height == read
    report = check_pack(pack, AS_OF)
    assert report.problems == []
    said = [f for f in report.facts if "quarantined" in f or "written otherwise" in f][1:]  # (after the counts)
    assert said == ["quarantined for: header repeated mid-file (1: source row 38)"], said


def test_a_header_repeated_mid_file_of_one_series_is_quarantined_as_such(synthetic) -> None:  # type: ignore[no-untyped-def]
    """Trial 66: a source of one series (`entity: <name>`, no id column) with its header repeated mid-file read the
    line as a row of period 'year' and check warned naming `source.period_format` ("expected a strptime pattern"), a
    key with nothing wrong; the one series' every metric was unknown on every night, as its undated row might lie in
    any window. Now the line is quarantined as the header again, its date cells holding their own columns' names."""
    rows = [{k: v for k, v in r.items() if k != "city"} for r in month_rows("Big")]
    pack = synthetic(rows, **{"source.entity_id": None, "source.entity_name": None, "source.entity": "Big"})
    read = read_snapshot(pack, AS_OF).history.height
    header, *lines = pack.path_of(pack.source).read_text().splitlines()
    pack.path_of(pack.source).write_text("\n".join([header, *lines[:18], header, *lines[18:]]) + "\n")
    snapshot = read_snapshot(pack, AS_OF)
    assert [(q["source_row"], q["reason"]) for q in snapshot.quarantined.to_dicts()] == [
        (20, "header repeated mid-file (two exports joined?): its line holds the columns' names")]
    assert snapshot.history.height == read
    report = check_pack(pack, AS_OF)
    assert report.problems == [] and not any("period_format" in w for w in report.warnings), report.warnings


def test_a_main_row_refused_whole_leaves_a_joined_tables_figures_of_its_period_known(tmp_path: Path) -> None:
    """Trial 40: a weather line with a field too many (events counted by the month) left the joined table's
    population of that month unknown, so the city's `big_city` filter read UNCLEAR ("population missing"),
    though the joined row was read and joined as usual beside the month's other events. A whole main row refused
    leaves the main source's own columns unknown where the period is still read; a panel's refused row, whose
    period then has no row to join to, still leaves every column unknown."""
    lines = ["id,day,temp"] + [f"a,2017-{m:02d}-{d:02d},{10 + m}" for m in range(1, 13) for d in (5, 20)]
    lines[20] += ",extra"  # 2017-10-05: a field too many, the month's other event still read
    (tmp_path / "w.csv").write_text("\n".join(lines) + "\n")
    _csv(tmp_path / "pop.csv", ["id", "month", "pop"], [["a", f"2017-{m:02d}", 100 + m] for m in range(1, 13)])
    metrics = {"level_now": {"agg": "last", "column": "pop", "window": [0, 0]},
               "days_3m": {"agg": "sum", "column": "days", "window": [0, 2]},
               "pop_3m": {"agg": "avg", "column": "pop", "window": [0, 2]}}
    pack = _pack(tmp_path, {"path": "w.csv", "shape": "events", "period_column": "day",
                            "aggregates": {"days": {"agg": "count"}, "temp": {"agg": "avg", "column": "temp"}},
                            "join": [{"table": "pop", "path": "pop.csv", "entity_id": "id",
                                      "period_column": "month", "columns": ["pop"]}]}, metrics)
    snapshot = read_snapshot(pack, date(2018, 1, 31), today=TODAY)
    (found,), _ = scan(pack, date(2018, 1, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                       snapshot.quarantined)
    assert found.metrics["pop_3m"] == 111.0 and found.metrics["days_3m"] is None, found.metrics
    assert [gap.split(":")[0] for gap in found.data_gaps if "in its reach" in gap] == ["days_3m"], found.data_gaps

    panel = ["id,month,sales"] + [f"a,2017-{m:02d},{m}" for m in range(1, 13)]
    panel[10] += ",extra"  # 2017-10: the month's only row refused
    (tmp_path / "p.csv").write_text("\n".join(panel) + "\n")
    pack = _pack(tmp_path, {"path": "p.csv", "period_column": "month", "columns": ["sales"],
                            "join": [{"table": "pop", "path": "pop.csv", "entity_id": "id",
                                      "period_column": "month", "columns": ["pop"]}]},
                 {"level_now": {"agg": "last", "column": "pop", "window": [0, 0]},
                  "pop_3m": {"agg": "avg", "column": "pop", "window": [0, 2], "min_rows": 2}})
    snapshot = read_snapshot(pack, date(2018, 1, 31), today=TODAY)
    (found,), _ = scan(pack, date(2018, 1, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                       snapshot.quarantined)
    assert found.metrics["pop_3m"] is None, found.metrics


def test_a_footnote_line_below_the_table_is_no_candidate(tmp_path: Path) -> None:
    """Trial 118: a note below a CSV's table, `Source: Boeckmann, Sheiner and Beal (1994), NONMEM Users Guide`,
    split at its commas, was quarantined (a wrong field count, no period) and check said it "blanks no metric", yet
    its second field, 'Sheiner and Beal (1994)', was scanned as a candidate, passed the filters UNCLEAR and was
    archived a data gap beside the real subjects. A refused line of no period makes no entity of its own: no night
    reads it (check says so) until its period is mended."""
    lines = ["id,month,sales"] + [f"{e},2017-{m:02d},{m}" for e in ("a", "b") for m in range(1, 13)]
    lines += ["", "Notes:", "Source: Boeckmann, Sheiner and Beal (1994), a guide", "\"Made up, in part.\""]
    (tmp_path / "p.csv").write_text("\n".join(lines) + "\n")
    pack = _pack(tmp_path, {"path": "p.csv", "period_column": "month", "columns": ["sales"]},
                 {"level_now": {"agg": "last", "column": "sales", "window": [0, 0]}})
    snapshot = read_snapshot(pack, date(2018, 1, 31), today=TODAY)
    assert snapshot.quarantined.height >= 2, "the notes are quarantined"
    found, _ = scan(pack, date(2018, 1, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                    snapshot.quarantined)
    assert sorted(c.name for c in found) == ["a", "b"], [c.name for c in found]


def test_an_entity_whose_every_row_is_misdated_is_still_a_candidate(tmp_path: Path) -> None:
    """Seed 000 (include the candidate, flag the filter UNCLEAR) beside trial 118's footnote: a note line is refused
    for its shape, and makes no entity; a well-formed row whose period does not parse is its entity's, and a market
    whose every row is dated `2017-13` is still a candidate, named, its metric a gap."""
    lines = ["id,month,sales"] + [f"a,2017-{m:02d},{m}" for m in range(1, 13)] + [f"b,2017-13,{m}" for m in range(3)]
    lines += ["Source: a survey, by hand, in part"]
    (tmp_path / "p.csv").write_text("\n".join(lines) + "\n")
    pack = _pack(tmp_path, {"path": "p.csv", "period_column": "month", "columns": ["sales"]},
                 {"level_now": {"agg": "last", "column": "sales", "window": [0, 0]}})
    snapshot = read_snapshot(pack, date(2018, 1, 31), today=TODAY)
    found, _ = scan(pack, date(2018, 1, 31), snapshot.anchor_period, snapshot.metrics, snapshot.history,
                    snapshot.quarantined)
    assert sorted(c.name for c in found) == ["a", "b"], [c.name for c in found]
    (b,) = [c for c in found if c.name == "b"]
    assert b.metrics["level_now"] is None
