"""A sheet of an Excel workbook (`.xlsx`, `.xlsm`, `.xls`) or an OpenDocument spreadsheet (`.ods`) as text rows.

Read by python-calamine (Rust's calamine: every one of these formats, no Excel needed, no formula evaluated: a
cell's cached value is read). The sheet's header is its first row holding the pack's columns (a title above the
table is skipped); each later row is a record numbered by its row in the spreadsheet, as a user sees it there.
Each cell becomes the text the source layer parses, as a CSV writes it: a whole number without a decimal part
(Excel stores every number as a float: `2009`, not `2009.0`, for a year or an id), a date as ISO (`2015-07-01`),
a moment as an ISO timestamp, an empty cell as none. Pure: no DuckDB here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

import yaml
from python_calamine import CalamineError, CalamineWorkbook


class WorkbookError(ValueError):
    """The file is no workbook this reader opens; the message is one line."""


class SheetNotFound(WorkbookError):
    """The workbook has not the sheet asked for: the message names the sheets it has."""


@dataclass(frozen=True)
class Sheet:
    """A sheet's header and its records as text, by spreadsheet row."""

    name: str
    header: list[str]
    lines: list[int]
    """Each record's row number in the spreadsheet (the header's is its first)."""
    columns: dict[str, list[str | None]]
    """Per header name, each record's cell as text (None for an empty cell)."""


def holds_every_row(sheet: Sheet, other: Sheet, needed: list[str]) -> bool:
    """Whether every record of `other` is a record of `sheet`, by the `needed` cells: a sheet of every year read
    beside the yearly sheets it gathers (trial 140) leaves no row of theirs unread."""
    def records(of: Sheet) -> set[tuple[str | None, ...]]:
        return set(zip(*(of.columns[c] for c in needed), strict=True))
    return records(other) <= records(sheet)


def sheet_names(path: Path) -> list[str]:
    """The workbook's sheets, in order."""
    return list(_workbook(path).sheet_names)


def _written_otherwise(sheet: str, names: list[str]) -> str:
    """" (did you mean 'Sheet1'? ...)" when one of the workbook's sheets is `sheet` written otherwise by case or
    spaces alone (`SHEET1`, `Sheet 1`): sheet names are matched as written."""
    def bare(name: str) -> str:
        return "".join(name.split()).casefold()
    close = [n for n in names if bare(n) == bare(sheet)]
    return (f" (did you mean {close[0]!r}? a sheet is named as the workbook writes it, case and spaces and all)"
            if close else "")


def sheet_yaml(name: str) -> str:
    """`name` as a pack writes it after `sheet:`, quoted where YAML would read it as anything but that text (a sheet a
    year, `1981`, is a number, which `source.sheet` refuses at load: trial 140 was offered `sheet: 1981`)."""
    try:
        plain = yaml.safe_load(f"sheet: {name}") == {"sheet": name}
    except yaml.YAMLError:
        plain = False
    return name if plain else "'" + name.replace("'", "''") + "'"


_TITLE_ROWS = 30
"""Rows a header is looked for in: a sheet may open with a title, a source line or a note above its table."""


def read_sheet(path: Path, sheet: str | None, needed: list[str]) -> Sheet:
    """The `needed` columns of `sheet` (default: the first) as text, under its header: the first of its first
    `_TITLE_ROWS` rows that holds every needed name (a title above the table is not read), else its first filled
    row. A header cell written twice keeps its first column; a row with no cell filled is skipped, as a blank line
    is."""
    book = _workbook(path)
    names = list(book.sheet_names)
    if not names:
        raise WorkbookError(f"{path.name} holds no sheet")
    if sheet is not None and sheet not in names:
        raise SheetNotFound(f"got {sheet!r}; {path.name} has the sheets {names}{_written_otherwise(sheet, names)}: "
                            "expected one of them")
    chosen = sheet if sheet is not None else names[0]
    try:
        grid = book.get_sheet_by_name(chosen).to_python(skip_empty_area=False)
    except CalamineError as exc:
        raise WorkbookError(f"{path.name}'s sheet {chosen!r} cannot be read ({type(exc).__name__})") from None
    filled = [i for i, row in enumerate(grid[:_TITLE_ROWS]) if any(_text(c) for c in row)]
    if not filled:
        return Sheet(chosen, [], [], {c: [] for c in needed})
    first = next((i for i in filled if set(needed) <= {_text(c) for c in grid[i]}), None)
    if first is None:
        first, header = _two_row_header(grid, filled, needed) or (filled[0], [_text(c) or "" for c in grid[filled[0]]])
    else:
        header = [_text(c) or "" for c in grid[first]]
    where = {name: header.index(name) for name in needed if name in header}
    lines: list[int] = []
    columns: dict[str, list[str | None]] = {c: [] for c in needed}
    for number, row in enumerate(grid[first + 1:], start=first + 2):
        cells = [_text(c) for c in row]
        if not any(cells):
            continue
        lines.append(number)
        for name, index in where.items():
            columns[name].append(cells[index] if index < len(cells) else None)
    return Sheet(chosen, header, lines, columns)


def _two_row_header(grid: Sequence[Sequence[object]], filled: list[int],
                    needed: list[str]) -> tuple[int, list[str]] | None:
    """A header written on two rows, as an office sheet merges it (`Date` merged down over both rows, `Price` merged
    across over `US$/t` and `m/m %` below it): each column named by its lower cell, else its upper one, when no one
    row holds every needed name and two adjacent rows so read do (trial 91: the sheet's title was taken for its
    header and each column called missing). The lower row's index and the names."""
    for upper in filled:
        if upper + 1 >= len(grid):
            break
        top, low = grid[upper], grid[upper + 1]
        width = max(len(top), len(low))
        names = [_text(low[k] if k < len(low) else None) or _text(top[k] if k < len(top) else None) or ""
                 for k in range(width)]
        if set(needed) <= set(names):
            return upper + 1, names
    return None


def _workbook(path: Path) -> CalamineWorkbook:
    """The workbook, read by its extension's reader, else by what its bytes are: a workbook saved under another
    workbook's extension (an `.xlsx` named `.xls`, as a rename or an old macro does) is read (trial 35: it was
    "cannot be opened as a workbook (CalamineError)", the reader's own class name and no way on)."""
    try:
        return CalamineWorkbook.from_path(str(path))
    except (CalamineError, OSError, ValueError):
        pass
    try:
        with path.open("rb") as handle:
            return CalamineWorkbook.from_filelike(handle)
    except (CalamineError, OSError, ValueError):
        raise WorkbookError(f"{path.name} cannot be opened as a workbook, by its extension or by its bytes: a "
                            "file cut short, or another format named as a workbook?") from None


def _text(cell: object) -> str | None:
    """A cell as the text a CSV export writes of it; None for an empty one."""
    if cell is None or cell == "":
        return None
    if isinstance(cell, bool):
        return "true" if cell else "false"
    if isinstance(cell, float):
        if not math.isfinite(cell):
            return str(cell)
        return str(int(cell)) if cell.is_integer() and abs(cell) < 1e15 else repr(cell)
    if isinstance(cell, datetime):
        return cell.isoformat(sep=" ")
    if isinstance(cell, date | time):
        return cell.isoformat()
    if isinstance(cell, timedelta):
        return str(cell)
    text = str(cell).strip()
    return text or None
