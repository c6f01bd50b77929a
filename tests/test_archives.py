"""A source in a ZIP archive (`sources.archives`): the file a download ships zipped is read as the plain file is,
and every way the archive can fail to give it is one line naming the key."""

from __future__ import annotations

import os
import zipfile
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from opportunity_assets.criteria import CriteriaError, load_criteria
from opportunity_assets.sources.archives import data_files, extracted
from tests.conftest import ROOT, scanned, write_pack

TEXAS = ROOT / "data" / "txhousing.csv"
AS_OF = date(2009, 12, 31)


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _scan(pack_path: Path) -> tuple[dict[str, object], list[tuple[object, ...]], list[dict[str, object]]]:
    return scanned(pack_path, AS_OF)


def _in(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    return folder


def test_a_zipped_csv_scans_as_the_csv_does_beside_a_readme_and_a_macs_copies(tmp_path: Path) -> None:
    """The archive's one data file is read, whatever else a download ships beside it (a README, a licence, a
    Mac's `__MACOSX/` copies, a folder): its candidates, quarantine and metrics are the plain file's."""
    folder = _in(tmp_path, "zip")
    archive = _zip(folder / "tx.zip", {"README.txt": b"Texas housing, from ggplot2\n", "LICENSE": b"GPL-2\n",
                                       "data/": b"", "data/txhousing.csv": TEXAS.read_bytes(),
                                       "__MACOSX/data/._txhousing.csv": b"\x00\x05\x16\x07"})
    assert _scan(write_pack(folder, archive)) == _scan(write_pack(_in(tmp_path, "csv"), TEXAS))


def test_a_member_is_named_by_its_path_or_its_name_and_its_format_is_its_own(tmp_path: Path) -> None:
    """An archive of several data files reads the one `member` names (its path in the archive, or its file name
    when no other member has it); a Parquet member is read as Parquet, by its own extension."""
    parquet = tmp_path / "tx.parquet"
    pl.read_csv(TEXAS, infer_schema_length=0).write_parquet(parquet)
    folder = _in(tmp_path, "zip")
    archive = _zip(folder / "tx.zip", {"2015/txhousing.parquet": parquet.read_bytes(),
                                       "2015/other.csv": b"city,year\nX,2000\n"})
    expected = _scan(write_pack(_in(tmp_path, "csv"), TEXAS))
    assert _scan(write_pack(folder, archive, **{"source.member": "2015/txhousing.parquet"})) == expected
    assert _scan(write_pack(folder, archive, **{"source.member": "txhousing.parquet"})) == expected


def test_an_archive_of_several_data_files_names_member_and_lists_them(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "tx.zip", {"a.csv": b"city\n", "b/c.csv": b"city\n", "notes.md": b"#\n"})
    with pytest.raises(CriteriaError) as caught:
        load_criteria(write_pack(tmp_path, archive))
    assert str(caught.value).endswith(
        "key `source.member`: got nothing; tx.zip holds 2 data files, ['a.csv', 'b/c.csv']: expected `member:` "
        "naming the one to read")
    with pytest.raises(CriteriaError) as caught:
        load_criteria(write_pack(tmp_path, archive, **{"source.member": "txhousing.csv"}))
    assert str(caught.value).endswith(
        "key `source.member`: got 'txhousing.csv'; tx.zip holds no such file; it holds ['a.csv', 'b/c.csv']: "
        "expected one of them, by its path in the archive")


@pytest.mark.parametrize("case", ["no data file", "cut short", "not a zip", "member beside a csv"])
def test_an_archive_that_cannot_give_the_file_is_one_line_naming_the_key(tmp_path: Path, case: str) -> None:
    whole = _zip(tmp_path / "whole.zip", {"txhousing.csv": TEXAS.read_bytes()}).read_bytes()
    archive = tmp_path / "tx.zip"
    if case == "no data file":
        _zip(archive, {"README.md": b"the data is elsewhere\n", "doc.pdf": b"%PDF"})
    elif case == "cut short":
        archive.write_bytes(whole[: len(whole) // 2])
    elif case == "not a zip":
        archive.write_bytes(TEXAS.read_bytes())
    pack = write_pack(tmp_path, TEXAS, **{"source.member": "txhousing.csv"}) if case == "member beside a csv" \
        else write_pack(tmp_path, archive)
    with pytest.raises(CriteriaError) as caught:
        load_criteria(pack)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    said = message.split(": ", 1)[1]
    assert said == {
        "no data file": f"key `source.path`: source file {archive} is a ZIP archive holding no data file (CSV, "
                        "Parquet, JSON Lines, an Excel workbook or a DuckDB database, by extension): it holds "
                        "['README.md', 'doc.pdf']; expected an archive holding the data",
        "cut short": f"key `source.path`: source file {archive} is no readable ZIP archive (File is not a zip "
                     "file): expected a whole archive (a download cut short?)",
        "not a zip": f"key `source.path`: source file {archive} is no readable ZIP archive (File is not a zip "
                     "file): expected a whole archive (a download cut short?)",
        "member beside a csv": "key `source.member`: got 'txhousing.csv'; expected no `member` but for a ZIP archive "
                               "(a `path` ending .zip, the file of it to read)",
    }[case]


def test_a_joined_table_may_be_zipped_and_its_problem_names_its_key(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "rates.zip", {"a.csv": b"city\n", "b.csv": b"city\n"})
    pack = write_pack(tmp_path, TEXAS, **{"source.join": [
        {"table": "rates", "path": str(archive), "entity_id": "city", "year_column": "year",
         "month_column": "month", "columns": ["rate"]}]})
    with pytest.raises(CriteriaError) as caught:
        load_criteria(pack)
    assert "key `source.join.0.member`: got nothing; rates.zip holds 2 data files, ['a.csv', 'b.csv']" \
        in str(caught.value)


def test_the_file_is_extracted_once_and_again_when_the_archive_changes(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "tx.zip", {"t.csv": b"city\nA\n"})
    first = extracted(archive, None)
    assert first.read_bytes() == b"city\nA\n" and first.parent.name == "tx.zip"
    assert extracted(archive, None) == first  # the same copy while the archive is the same
    _zip(archive, {"t.csv": b"city\nB\n"})
    os.utime(archive, ns=(1, 1))  # a new version, whatever the clock's resolution
    second = extracted(archive, None)
    assert second.read_bytes() == b"city\nB\n" and not first.exists()


def test_data_files_are_those_of_a_format_read_and_not_a_macs_copies() -> None:
    assert data_files(["a/", "a/x.csv", "a/x.csv.gz", "y.parquet", "z.xlsx", "README", "notes.txt.md",
                       "__MACOSX/a/._x.csv", ".hidden.csv", "doc.pdf"]) == ["a/x.csv", "a/x.csv.gz", "y.parquet",
                                                                            "z.xlsx"]


def test_a_zip_archive_named_csv_says_to_name_it_zip(tmp_path: Path) -> None:
    from opportunity_assets.check.pack import check_pack

    misnamed = _zip(tmp_path / "tx.csv", {"txhousing.csv": TEXAS.read_bytes()})
    [problem] = check_pack(load_criteria(write_pack(tmp_path, misnamed))).problems
    assert problem == (f"key `source.path`: source file {misnamed} is named .csv but is not CSV text: it looks like a "
                       "ZIP archive (named .zip, the data file it holds is read)")
