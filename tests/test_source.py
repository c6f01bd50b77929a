"""The point-in-time source: what is visible on as_of, quarantine of bad rows, unreadable files, bundled data."""

from __future__ import annotations

import csv
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.sources.reading import SourceError
from opportunity_assets.sources.snapshot import read_snapshot
from tests.conftest import COLUMNS, PACK, month_rows, write_csv, write_pack

Build = Callable[..., CriteriaPack]

# month_rows() runs 2012-01..2014-12; December 2014 is published 2014-12-31 + 30 days = 2015-01-30.
AS_OF = date(2015, 1, 30)
DEC_2014 = date(2014, 12, 1)
NOV_2014 = date(2014, 11, 1)


def _metrics(snapshot: Any, entity: str) -> dict[str, Any]:
    rows = snapshot.metrics.filter(pl.col("entity_id") == entity).to_dicts()
    assert len(rows) == 1, f"{entity} not exactly once in metrics"
    return rows[0]


# ---- (a) point in time -------------------------------------------------------------------------------------
def test_rows_published_after_as_of_are_invisible(synthetic: Build) -> None:
    pack = synthetic(month_rows("Alpha", months=42) + month_rows("Beta", months=42))  # through 2015-06
    snapshot = read_snapshot(pack, AS_OF)
    assert snapshot.anchor_period == DEC_2014
    assert snapshot.history["period"].max() == DEC_2014
    assert (snapshot.history["published_at"] <= AS_OF).all()
    assert snapshot.history.filter(pl.col("period") > DEC_2014).height == 0
    # the history reaches integrity.history_periods (72) back, as far as the source goes (from 2012-01 here),
    # periods_ago counted from the anchor
    assert pack.history_reach == 71
    for entity in ("Alpha", "Beta"):
        rows = snapshot.history.filter(pl.col("entity_id") == entity)
        assert rows["periods_ago"].to_list() == list(range(35, -1, -1))
        assert rows["period"].min() == date(2012, 1, 1)
    assert _metrics(snapshot, "Alpha")["sales_12m"] == 1800.0
    assert _metrics(snapshot, "Alpha")["days_since_data"] == 0.0


def test_absurd_future_rows_change_nothing_earlier(synthetic: Build) -> None:
    base = month_rows("Alpha") + month_rows("Beta", sales=80.0)
    before = read_snapshot(synthetic(base), AS_OF)
    future = (month_rows("Alpha", start=(2015, 1), months=6, sales=999_999.0, inventory=99.0, median=9e9)
              + month_rows("Beta", start=(2015, 1), months=3, overrides={(2015, 2): {"sales": "abc"}})
              + month_rows("Gamma", start=(2015, 1), months=12, sales=999_999.0))
    after = read_snapshot(synthetic(base + future), AS_OF)
    assert after.anchor_period == before.anchor_period == DEC_2014
    assert_frame_equal(after.metrics, before.metrics)
    assert_frame_equal(after.history, before.history)
    assert "Gamma" not in after.metrics["entity_id"].to_list()
    assert after.quarantined.height == 0  # a bad row not yet published is not seen at all
    # ... and the future is visible once published
    later = read_snapshot(synthetic(base + future), date(2015, 3, 2))
    assert later.anchor_period == date(2015, 1, 1)
    assert _metrics(later, "Alpha")["sales_peak_3m"] == 999_999.0


@pytest.mark.parametrize(("lag", "first_visible"), [(30, date(2015, 1, 30)), (0, date(2014, 12, 31)),
                                                    (45, date(2015, 2, 14))])
def test_publication_boundary_is_exact(synthetic: Build, lag: int, first_visible: date) -> None:
    pack = synthetic(month_rows("Alpha"), **{"source.publication_lag_days": lag})
    on_the_day = read_snapshot(pack, first_visible)
    day_before = read_snapshot(pack, first_visible - timedelta(days=1))
    assert on_the_day.anchor_period == DEC_2014
    assert day_before.anchor_period == NOV_2014
    assert DEC_2014 in on_the_day.history["period"].to_list()
    assert DEC_2014 not in day_before.history["period"].to_list()
    assert on_the_day.history["published_at"].max() == first_visible


def test_age_counts_days_since_latest_publication(synthetic: Build) -> None:
    pack = synthetic(month_rows("Alpha"))
    # January 2015 is not in the source: on 2015-02-27 the latest figure is still December's (2015-01-30)
    snapshot = read_snapshot(pack, date(2015, 2, 27))
    assert snapshot.anchor_period == DEC_2014
    assert _metrics(snapshot, "Alpha")["days_since_data"] == 28.0


def test_nothing_published_yet(synthetic: Build) -> None:
    snapshot = read_snapshot(synthetic(month_rows("Alpha")), date(2012, 1, 15))
    assert snapshot.anchor_period is None
    assert snapshot.metrics.height == 0
    assert snapshot.history.height == 0


# ---- (b) quarantine ----------------------------------------------------------------------------------------
BAD_CELLS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("not_a_number", {"sales": "abc"}, ["column sales", "abc", "not a number"]),
    ("negative", {"inventory": -2.0}, ["column inventory", "-2", "negative"]),
    ("infinite", {"sales": "inf"}, ["column sales", "not finite"]),
    ("nan", {"median": "nan"}, ["column median", "not finite"]),
]
BAD_ROWS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("month_13", {"month": 13}, ["period unparseable", "month=13"]),
    ("month_x", {"month": "x"}, ["period unparseable", "month=x"]),
    ("year_x", {"year": "20x4"}, ["period unparseable", "year=20x4"]),
    ("missing_city", {"city": ""}, ["missing entity id", "city"]),
    ("blank_city", {"city": "   "}, ["missing entity id", "city"]),
]
NOVEMBER_ROW = 2 + 34  # header is line 1; Alpha's 2014-11 is its 35th row


def _bad_november(synthetic: Build, override: dict[str, Any], fragments: list[str]) -> tuple[Any, Any]:
    clean = read_snapshot(synthetic(month_rows("Alpha") + month_rows("Beta")), AS_OF)
    snapshot = read_snapshot(
        synthetic(month_rows("Alpha", overrides={(2014, 11): override}) + month_rows("Beta")), AS_OF)
    quarantined = snapshot.quarantined.to_dicts()
    assert len(quarantined) == 1
    assert quarantined[0]["source_row"] == NOVEMBER_ROW
    for fragment in fragments:
        assert fragment in quarantined[0]["reason"]
    assert _metrics(snapshot, "Beta") == _metrics(clean, "Beta")  # the other entity is untouched
    return clean, snapshot


@pytest.mark.parametrize(("override", "fragments"), [(o, f) for _, o, f in BAD_CELLS],
                         ids=[name for name, _, _ in BAD_CELLS])
def test_a_bad_cell_is_that_cells_gap_and_its_row_is_listed(synthetic: Build, override: dict[str, Any],
                                                            fragments: list[str]) -> None:
    clean, snapshot = _bad_november(synthetic, override, fragments)
    (column,) = override
    assert "the row is kept" in snapshot.quarantined["reason"][0]
    november = snapshot.history.filter((pl.col("entity_id") == "Alpha") & (pl.col("period") == NOV_2014)).to_dicts()
    assert len(november) == 1 and november[0]["source_row"] == NOVEMBER_ROW
    assert november[0][column] is None
    assert all(november[0][c] is not None for c in ("sales", "volume", "median", "listings", "inventory")
               if c != column)
    # a gap, never a changed number: only the metrics of the bad cell's column lose their value
    before, after = _metrics(clean, "Alpha"), _metrics(snapshot, "Alpha")
    for name, spec in load_criteria(PACK).metrics.items():
        reads_november = column in (spec.columns or [spec.column]) and spec.window[0] <= 1 <= spec.window[1]
        if reads_november and spec.agg == "coverage":
            assert after[name] < before[name], name
        elif reads_november:
            assert after[name] is None, f"{name} should be a gap"
        else:
            assert after[name] == before[name], f"{name}: {before[name]} became {after[name]}"


@pytest.mark.parametrize(("override", "fragments"), [(o, f) for _, o, f in BAD_ROWS],
                         ids=[name for name, _, _ in BAD_ROWS])
def test_a_row_without_a_key_is_quarantined_whole(synthetic: Build, override: dict[str, Any],
                                                  fragments: list[str]) -> None:
    clean, snapshot = _bad_november(synthetic, override, fragments)
    alpha = snapshot.history.filter(pl.col("entity_id") == "Alpha")
    assert NOV_2014 not in alpha["period"].to_list()
    assert alpha.height == 35  # 36 months of history (2012-01 on) less November
    assert NOVEMBER_ROW not in snapshot.history["source_row"].to_list()
    before, after = _metrics(clean, "Alpha"), _metrics(snapshot, "Alpha")
    for name, value in after.items():
        if name == "coverage_15m":
            continue
        assert value is None or value == before[name], f"{name}: {before[name]} became {value}"
    assert after["sales_3m"] is None
    assert after["inventory_3m"] is None
    assert after["sales_12m"] is None
    assert after["sales_3m_prev"] == before["sales_3m_prev"] == 450.0
    assert after["coverage_15m"] == pytest.approx(28 / 30)


def test_duplicated_key_quarantines_every_copy(synthetic: Build) -> None:
    rows = month_rows("Alpha") + month_rows("Beta")
    rows.append({**rows[34], "sales": 10.0})  # a second Alpha 2014-11 with another value
    snapshot = read_snapshot(synthetic(rows), AS_OF)
    quarantined = snapshot.quarantined.to_dicts()
    assert [q["source_row"] for q in quarantined] == [NOVEMBER_ROW, len(rows) + 1]
    for q in quarantined:
        assert "duplicated" in q["reason"]
        assert "Alpha, 2014, 11" in q["reason"]
        assert q["entity_id"] == "Alpha"
        assert q["period"] == NOV_2014
    alpha = _metrics(snapshot, "Alpha")
    assert alpha["sales_3m"] is None  # neither copy is used, nothing is averaged or picked
    assert alpha["sales_3m_prev"] == 450.0
    assert _metrics(snapshot, "Beta")["sales_3m"] == 450.0


def test_na_cell_is_a_gap_not_a_quarantine(synthetic: Build) -> None:
    snapshot = read_snapshot(synthetic(month_rows("Alpha", overrides={(2014, 11): {"sales": None}})), AS_OF)
    assert snapshot.quarantined.height == 0
    alpha = _metrics(snapshot, "Alpha")
    assert alpha["sales_3m"] is None
    assert alpha["inventory_3m"] == 6.0  # the rest of the row is used
    november = snapshot.history.filter(pl.col("period") == NOV_2014).to_dicts()
    assert len(november) == 1
    assert november[0]["sales"] is None


def test_several_bad_rows_each_get_their_reason(synthetic: Build) -> None:
    rows = month_rows("Alpha", overrides={(2014, 10): {"inventory": -1}, (2014, 11): {"sales": "abc"}})
    rows += month_rows("Beta", overrides={(2014, 12): {"month": 13}})
    snapshot = read_snapshot(synthetic(rows), AS_OF)
    reasons = dict(zip(snapshot.quarantined["source_row"].to_list(), snapshot.quarantined["reason"].to_list(),
                       strict=True))
    assert reasons.keys() == {35, 36, 2 + 36 + 35}
    assert "inventory" in reasons[35]
    assert "sales" in reasons[36]
    assert "period unparseable" in reasons[2 + 36 + 35]
    assert snapshot.anchor_period == DEC_2014  # Alpha's December still anchors the night


# ---- (c) unreadable files ----------------------------------------------------------------------------------
def test_empty_file_is_a_source_error(tmp_path: Path) -> None:
    source = tmp_path / "source.csv"
    source.write_bytes(b"")
    pack = load_criteria(write_pack(tmp_path, source))
    with pytest.raises(SourceError, match="empty"):
        read_snapshot(pack, AS_OF)


def test_missing_column_is_a_source_error(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "source.csv", month_rows("Alpha"), columns=[c for c in COLUMNS if c != "inventory"])
    pack = load_criteria(write_pack(tmp_path, source))
    with pytest.raises(SourceError) as exc:
        read_snapshot(pack, AS_OF)
    assert "lacks column(s) ['inventory']" in str(exc.value)
    assert str(source) in str(exc.value)


@pytest.mark.parametrize("written", ["meidan", "mëdïan"])
def test_a_missing_column_written_otherwise_by_the_file_is_offered_the_file_s(tmp_path: Path, written: str) -> None:
    """Trial 34: `period_column: monht` for a file's `month` was told the columns the file has, with no "did you
    mean": two letters swapped in a short name fell under the 0.85 that refuses a JSON record's respelt key. Trial
    110: a Latin-1 export headed `libéré, couleur, année, ...`: `column: libere` was offered nothing, two accents
    putting it under the cutoff of a misspelling; a name the file writes with accents is the same name typed on
    another keyboard."""
    source = write_csv(tmp_path / "source.csv", month_rows("Alpha"))
    source.write_text(source.read_text().replace("median", written, 1))
    pack = load_criteria(write_pack(tmp_path, source))
    with pytest.raises(SourceError) as exc:
        read_snapshot(pack, AS_OF)
    assert f"lacks column(s) ['median'] (did you mean '{written}' for 'median'?)" in str(exc.value), str(exc.value)


@pytest.mark.parametrize("written", ["city, month", "city,month", "[city, month]"])
def test_columns_written_as_one_text_with_commas_are_told_to_be_a_list(tmp_path: Path, written: str) -> None:
    """Trial 114: `entity_id: region, ISO_code` (two columns of a panel's key, written as one text with a comma)
    was told the file lacks the column 'region, ISO_code' and which columns it has, not what was meant: a missing
    name whose parts, split at commas, are each the file's column is offered the list of them."""
    source = write_csv(tmp_path / "source.csv", month_rows("Alpha"))
    pack = load_criteria(write_pack(tmp_path, source, **{"source.entity_id": written}))
    with pytest.raises(SourceError) as exc:
        read_snapshot(pack, AS_OF)
    assert f"lacks column(s) [{written!r}] (did you mean the list [city, month] for {written!r}? a YAML list " \
           "is written in brackets)" in str(exc.value), str(exc.value)


def test_missing_entity_column_is_a_source_error(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "source.csv", month_rows("Alpha"), columns=[c for c in COLUMNS if c != "city"])
    pack = load_criteria(write_pack(tmp_path, source))
    with pytest.raises(SourceError, match=r"lacks column\(s\) \['city'\]"):
        read_snapshot(pack, AS_OF)


def test_source_removed_after_load_is_a_source_error(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "source.csv", month_rows("Alpha"))
    pack = load_criteria(write_pack(tmp_path, source))
    source.unlink()
    with pytest.raises(SourceError, match="not found"):
        read_snapshot(pack, AS_OF)


# ---- (d) the bundled data ----------------------------------------------------------------------------------
def test_bundled_data_on_2015_08_30(texas_pack: CriteriaPack) -> None:
    snapshot = read_snapshot(texas_pack, date(2015, 8, 30))
    assert snapshot.anchor_period == date(2015, 7, 1)
    assert snapshot.metrics.height == 46
    assert snapshot.metrics["entity_id"].n_unique() == 46
    assert snapshot.quarantined.height == 0
    assert (snapshot.history["published_at"] <= date(2015, 8, 30)).all()
    assert snapshot.history["periods_ago"].max() == texas_pack.history_reach


def test_bundled_data_one_day_earlier(texas_pack: CriteriaPack) -> None:
    snapshot = read_snapshot(texas_pack, date(2015, 8, 29))
    assert snapshot.anchor_period == date(2015, 6, 1)
    assert snapshot.history["period"].max() == date(2015, 6, 1)
    # Austin's sales_3m is April..June 2015, read straight from the CSV
    with PACK.parent.joinpath("../txhousing.csv").open() as handle:
        expected = sum(float(r["sales"]) for r in csv.DictReader(handle)
                       if r["city"] == "Austin" and r["year"] == "2015" and r["month"] in {"4", "5", "6"})
    assert _metrics(snapshot, "Austin")["sales_3m"] == pytest.approx(expected)


def test_a_row_dated_after_today_is_quarantined_and_the_default_night_ignores_it(synthetic: Build) -> None:
    from opportunity_assets.candidates.quarantine import short_reason
    from opportunity_assets.check.pack import latest_as_of

    rows = [*month_rows("Alpha"), {**month_rows("Alpha")[0], "year": 2027, "month": 1}]
    pack = synthetic(rows)
    snapshot = read_snapshot(pack, AS_OF, today=date(2026, 12, 1))
    (future,) = snapshot.quarantined.to_dicts()
    assert future["reason"].startswith("period after today: 2027-01 has not happened yet")
    assert short_reason(future["reason"]) == "period after today"  # no date after as_of reaches the brief
    assert snapshot.history["period"].max() == DEC_2014
    # the default night: when the latest month up to today was published, never a night still to come
    assert latest_as_of(pack, today=date(2026, 12, 1)) == date(2015, 1, 30)
    assert latest_as_of(pack, today=date(2015, 1, 20)) == date(2015, 1, 19)  # December not yet published: yesterday


# ---- (e) one parse per command ---------------------------------------------------------------------------
def test_a_kept_source_is_parsed_once_for_its_span_and_its_night(synthetic: Build,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`opportunity run` needs the data's span (its nights) before the night: within `kept_open` the file is
    parsed once, the snapshot is the one a fresh read gives, and the typed table goes with that read."""
    import opportunity_assets.sources.connection as connection
    import opportunity_assets.sources.snapshot as source
    from opportunity_assets.sources.facts import publication_span

    pack = synthetic(month_rows("Alpha") + month_rows("Beta", sales=80.0))
    fresh = read_snapshot(pack, AS_OF, today=date(2026, 12, 1))
    source._LAST.clear()
    opened = []
    real_open = connection.open_pack_source
    monkeypatch.setattr(connection, "open_pack_source", lambda *a, **k: opened.append(1) or real_open(*a, **k))
    with connection.kept_open():
        assert publication_span(pack, date(2026, 12, 1)) == (date(2012, 3, 1), date(2015, 1, 30))
        kept = read_snapshot(pack, AS_OF, today=date(2026, 12, 1))
        assert opened == [1]
        assert not any(connection._KEPT[-1])  # the night's read released it
        source._LAST.clear()
        read_snapshot(pack, AS_OF, today=date(2026, 12, 1))
        assert opened == [1, 1]
    assert_frame_equal(kept.metrics, fresh.metrics)
    assert_frame_equal(kept.history, fresh.history)
    assert_frame_equal(kept.quarantined, fresh.quarantined)


def test_a_check_parses_its_source_once_and_frees_it_as_it_ends(synthetic: Build,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A check asks the typed rows questions after its snapshot, which frees them for the night (an id column of
    structures, a zoned period column): they are held to the check's end, not read a second time (a wide source's
    2.8 s a night until stop 55), then freed; a backfill holds them for all its nights."""
    import opportunity_assets.sources.connection as connection
    import opportunity_assets.sources.snapshot as source
    from opportunity_assets.check.pack import check_pack

    pack = synthetic(month_rows("Alpha") + month_rows("Beta", sales=80.0))
    source._LAST.clear()
    opened = []
    real_open = connection.open_pack_source
    monkeypatch.setattr(connection, "open_pack_source", lambda *a, **k: opened.append(1) or real_open(*a, **k))
    with connection.kept_open():
        assert check_pack(pack, AS_OF, today=date(2026, 12, 1), with_facts=False).problems == []
        assert opened == [1]
        assert not any(connection._KEPT[-1])  # freed for the night
        with connection.held():
            for night in (AS_OF, date(2014, 11, 30)):
                assert check_pack(pack, night, today=date(2026, 12, 1), with_facts=False).problems == []
            assert opened == [1, 1]
            assert any(connection._KEPT[-1])
        assert not any(connection._KEPT[-1])
    assert not connection._HELD


def test_a_query_over_files_is_read_once_by_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 112: a DuckDB `query` over a CSV a year has no one file to digest, so no read was kept: each of a
    check's questions read and typed the files anew (12 reads, 47 s for 8,757 rows). Within a command it is read
    once, as a database is; outside one, each read is fresh."""
    import opportunity_assets.sources.connection as connection
    import opportunity_assets.sources.snapshot as source
    from opportunity_assets.check.pack import check_pack
    from tests.test_shapes import _csv, _pack

    (tmp_path / "years").mkdir()
    for year in (2014, 2015):
        _csv(tmp_path / "years" / f"{year}.csv", ["id", "month", "sales"],
             [[e, f"{year}-{m:02d}", m + k] for m in range(1, 13) for k, e in enumerate(["a", "b"])])
    pack = _pack(tmp_path, {"format": "duckdb", "query": "SELECT * FROM read_csv('years/*.csv')",
                            "period_column": "month", "columns": ["sales"]},
                 {"level_now": {"agg": "last", "column": "sales"}})
    source._LAST.clear()
    opened = []
    real_open = connection.open_pack_source
    monkeypatch.setattr(connection, "open_pack_source", lambda *a, **k: opened.append(1) or real_open(*a, **k))
    with connection.kept_open():
        assert check_pack(pack, date(2016, 1, 31), today=date(2026, 12, 1)).problems == []
        assert opened == [1]
    source._LAST.clear()
    read_snapshot(pack, date(2016, 1, 31), today=date(2026, 12, 1))
    read_snapshot(pack, date(2016, 1, 31), today=date(2026, 12, 1))
    assert opened == [1, 1, 1]


def test_a_kept_source_is_read_again_once_its_file_changes(synthetic: Build, tmp_path: Path) -> None:
    import opportunity_assets.sources.connection as connection
    import opportunity_assets.sources.snapshot as source
    from opportunity_assets.sources.facts import publication_span

    pack = synthetic(month_rows("Alpha") + month_rows("Beta", sales=80.0))
    with connection.kept_open():
        publication_span(pack, date(2026, 12, 1))
        write_csv(pack.source_path, month_rows("Alpha") + month_rows("Beta", sales=90.0))  # same size, new bytes
        source._LAST.clear()
        snapshot = read_snapshot(pack, AS_OF, today=date(2026, 12, 1))
    assert _metrics(snapshot, "Beta")["sales_3m"] == 270.0


def test_one_command_digests_its_file_once(synthetic: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    """A night reads its source four times (span, facts, the check's snapshot, the night's); each read keys on
    the file's digest (0.1 s for a 141 MB file): within `kept_open`, one digest while the file's status is the
    same, a new one once it changed, and every read outside the block digests anew."""
    import hashlib

    import opportunity_assets.sources.connection as connection
    import opportunity_assets.sources.snapshot as source
    from opportunity_assets.sources.facts import publication_span, source_facts

    pack = synthetic(month_rows("Alpha") + month_rows("Beta", sales=80.0))
    digests = []
    real = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda *a, **k: digests.append(1) or real(*a, **k))
    with connection.kept_open():
        publication_span(pack, date(2026, 12, 1))
        source_facts(pack, AS_OF)
        source._LAST.clear()
        read_snapshot(pack, AS_OF, today=date(2026, 12, 1))
        assert len(digests) == 1
        write_csv(pack.source_path, month_rows("Alpha") + month_rows("Beta", sales=100.5))
        source._LAST.clear()
        assert _metrics(read_snapshot(pack, AS_OF, today=date(2026, 12, 1)), "Beta")["sales_3m"] == 301.5
        assert len(digests) == 2
    connection.file_key(pack)
    connection.file_key(pack)
    assert len(digests) == 4


def test_an_unwritable_scratch_folder_is_one_line_naming_it(synthetic: Build, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A read keeps its typed rows in a scratch file under TMPDIR: a folder that cannot hold one is a SourceError
    saying where and what to set, never a traceback."""
    import tempfile

    pack = synthetic(month_rows("Alpha"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing" / "folder"))
    with pytest.raises(SourceError, match=r"no scratch folder in .*missing/folder .*set TMPDIR"):
        read_snapshot(pack, AS_OF, today=date(2026, 12, 1))


def test_a_full_scratch_folder_is_named_as_tmpdir_not_blamed_on_the_source(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 109: TMPDIR on a disk with no room left: the night stopped with "key `source.path`: source file
    .../txhousing.csv could not be read: Could not write file "<TMPDIR>/opportunity-source-.../typed.duckdb": No
    space left on device", blaming a sound source and its key. It names the scratch folder, TMPDIR, and what to do."""
    import subprocess
    import tempfile

    tiny = tmp_path / "tiny"
    tiny.mkdir()
    # a real full disk: a 64 KB tmpfs (the suite runs as root, as its PostgreSQL, Redis and namespaces need)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(tiny)], capture_output=True,
                             text=True)
    assert mounted.returncode == 0, f"could not mount a tmpfs for the full disk: {mounted.stderr}"
    try:
        (tiny / "fill").write_bytes(b"\0" * 60 * 1024)
        monkeypatch.setattr(tempfile, "tempdir", str(tiny))
        pack = write_pack(tmp_path, Path(PACK).parent.parent / "txhousing.csv")
        with pytest.raises(SourceError) as raised:
            read_snapshot(load_criteria(pack), date(2011, 10, 31))
        said = str(raised.value)
        assert said == (f"no room left in the scratch folder {tiny} (TMPDIR), where the source's rows are typed "
                        "while a night reads them: free space there, or set TMPDIR to a folder with room, and run the "
                        "same command again"), said
    finally:
        subprocess.run(["umount", str(tiny)], check=False)
