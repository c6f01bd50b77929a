"""A CSV read robustly: every physical line is accounted for, as a record or as a rejected line with its reason.

RFC 4180 lets a quoted field span lines, so one stray quote can swallow the rest of a file into one field (or
invent an entity `"Austin` that takes Austin's id). Here a record may span lines only when the joined lines parse
to exactly the header's field count within `MAX_RECORD_LINES`; otherwise its first line is rejected ("unbalanced
quote") and reading resumes on the next line. A record with the wrong field count is rejected the same way; one
empty field past the header's count is a trailing delimiter, as DuckDB's reader takes it. A line that is not UTF-8
is read as Windows-1252 (a spreadsheet's export: "Montréal" in one byte), and counted (`CsvRows.recoded`). Blank
lines are not records. A field may be of any length. No I/O beyond reading the file; no Dagster.
"""

from __future__ import annotations

import csv
import gzip
import re
import sys
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import BinaryIO, cast

from opportunity_assets.sources.spec import ENTITY_JOINER

MAX_RECORD_LINES = 20
"""Most physical lines one quoted record may span (a multi-line name); past it, the quote is broken."""

_CR = "\ue000"
"""A private-use character standing for a carriage return inside a line while Python's csv module parses it: a
line ends at a newline alone (its `\r` before it dropped), so a `\r` left is the text's own (a tweet's line break,
written unquoted by pandas, whose writer quotes only fields holding its own line terminator), which the csv module
refuses outside quotes ("new-line character seen in unquoted field")."""


def _csv_lines(text: str) -> list[str]:
    """The physical lines of one record's text for the csv module: split at newlines only (not at `\r`, U+2028 or
    the other breaks `str.splitlines` knows, which a text field may hold), each `\r` standing in as `_CR`."""
    parts = text.replace("\r", _CR).split("\n")
    return [f"{part}\n" for part in parts[:-1]] + [parts[-1]]


def _restored(fields: list[str]) -> list[str]:
    return [f.replace(_CR, "\r") for f in fields]


class CsvHeaderError(ValueError):
    """The file has no usable header; the message is one line."""


@dataclass(frozen=True)
class Rejected:
    """A line that is not a record of the file."""

    line: int
    """Physical line number, from 1 (the header is line 1)."""
    reason: str
    entity: str | None
    """The line's value in the entity column as far as it parses (to attribute the line), or None."""
    dated: tuple[tuple[str | None, ...], ...] = ()
    """The line's values in the columns that date it (`read_csv_rows`' `dated_columns`, in their order), as far as
    they parse: one reading when the line has the header's field count, else two, its fields counted from the start
    and from the end (a field too many or too few shifts one side of it); none for a line that does not parse."""
    period: date | None = None
    """The period the line's dates name, where one reading alone names one (`formats.date_rejected`): then the
    line lies in that period, and a night before it is published does not see it. None: undated, every night's."""
    published: date | None = None
    """When the line became known, where a `published_column` dates the source and the reading that named `period`
    names a day in it too; None: once its period is published by the lag rule."""


@dataclass(frozen=True)
class CsvRows:
    header: list[str]
    lines: list[int]
    """Per record, the physical line it starts on."""
    columns: dict[str, list[str]]
    """Per header name, the records' text values."""
    rejected: list[Rejected]
    recoded: list[int] = field(default_factory=list)
    """Lines that were not UTF-8, read as Windows-1252."""


@contextmanager
def _any_field_size() -> Iterator[None]:
    """Python's csv reader refuses a field over 128 KiB (a guard, not a format rule; DuckDB's reader has none)."""
    before = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        yield
    finally:
        csv.field_size_limit(before)


def decoded_line(raw: bytes) -> tuple[str, bool]:
    """The line's text, and whether it had to be read as Windows-1252 (Latin-1 for its five unused bytes)."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        try:
            return raw.decode("cp1252"), True
        except UnicodeDecodeError:
            return raw.decode("latin-1"), True


def header_text(raw: bytes) -> str | None:
    """A first line's text, read as every other line is (UTF-8, else Windows-1252: a spreadsheet's export in Latin-1,
    `Veränderung` in its header, was refused whole as "the header is not UTF-8" until trial 77); None for bytes that
    are no 8-bit text (NULs: UTF-16, a binary file), which another reader or `looks_like` names."""
    if b"\x00" in raw or raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    return decoded_line(raw)[0]


def _lenient_rows(text: str, delimiter: str) -> list[list[str]]:
    """The fields of a line's first physical line, read leniently: as written, then without its quotes."""
    line = text.split("\n", 1)[0].replace("\r", _CR)
    return [_restored(row) for candidate in (line, line.replace('"', ""))
            for row in csv.reader([candidate], delimiter=delimiter)]


def _field(text: str, index: int | None, delimiter: str, width: int) -> str | None:
    """Field `index` of the line's first physical line, read leniently (without its quotes when they break the
    line's field count); None if there is none."""
    if index is None:
        return None
    rows = _lenient_rows(text, delimiter)
    row = next((r for r in rows if len(r) == width), rows[0] if rows else [])
    return (row[index].strip() or None) if index < len(row) else None


def _parse(text: str, delimiter: str) -> list[str] | None:
    """The fields of one record's text, or None if it does not parse as exactly one record."""
    try:
        rows = list(csv.reader(_csv_lines(text), delimiter=delimiter, strict=True))
    except csv.Error:
        return None
    return _restored(rows[0]) if len(rows) == 1 else None


def _header(first: str | None, *, empty: bool, delimiter: str) -> list[str]:
    """The header's column names, or a `CsvHeaderError` saying what is wrong with it and what was expected, in the
    product's words (trial 74: a quote left open was told Python's "unexpected end of data", a repeated name no
    expectation)."""
    if empty or (first is not None and not first.strip()):
        raise CsvHeaderError("no header line: expected the columns' names on the file's first line")
    if first is None:
        raise CsvHeaderError("the header is not UTF-8")
    line = first.removeprefix("\ufeff")
    try:
        header = [h.strip() for h in next(csv.reader([line], delimiter=delimiter, strict=True))]
    except csv.Error:
        shown = repr(line.rstrip("\r\n")[:60])
        raise CsvHeaderError(f"the header does not parse: a quote is left open in it, {shown}: expected the "
                             "columns' names, a name holding the delimiter in quotes") from None
    return header


def refuse_repeats(header: list[str], read: Collection[str] | None = None) -> None:
    """A `CsvHeaderError` if the header names a column twice that the pack reads (`read`; None: any column), which
    of the two holds its figures no reader could say. A repeat the pack does not read is no problem: its cells are
    not read (trial 74: a `sale_id` named twice had stopped a night that never reads it)."""
    # (empty names are no columns a pack reads: a spreadsheet's export of formatted empty columns ends each line
    # in `;;;`, trial 35's whole file refused as "the header repeats column(s) ['']")
    duplicates = sorted({h for h in header if h and header.count(h) > 1 and (read is None or h in read)})
    if duplicates:
        places = " and ".join(str(i + 1) for i, h in enumerate(header) if h == duplicates[0])
        raise CsvHeaderError(f"the header repeats column(s) {duplicates} (columns {places}"
                             f"{' for the first' if len(duplicates) > 1 else ''}): expected each column named once "
                             "(the repeat renamed or removed in the file)")


def unique_names(header: list[str]) -> list[str]:
    """The header's names, a repeat's second and later spellings numbered (`note`, `note (2)`) as a reader's
    `columns` map needs them unique; a name the header repeats is one `refuse_repeats` let through, never read."""
    seen: Counter[str] = Counter()
    named = []
    for name in header:
        seen[name] += 1
        named.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return named


def opened_bytes(path: str | Path) -> BinaryIO:
    """The file's bytes, decompressed if it is gzip (`.gz`: DuckDB's readers take it the same way)."""
    path = Path(path)
    return cast(BinaryIO, gzip.open(path, "rb")) if path.suffix.lower() == ".gz" else path.open("rb")


def read_bytes(path: str | Path) -> bytes:
    with opened_bytes(path) as f:
        return f.read()


_DECODED_CHUNK = 1 << 24
"""How many bytes `not_utf8_lines` decodes at once (whole lines: a character is never cut): a large file is not held
whole, nor its text beside its bytes."""


WRONG_WIDTH = re.compile(r"\d+ fields, expected \d+")
"""The reason of a line refused for its field count, as this module writes it: `10 fields, expected 8 (the
header's)`."""


def read_line(path: str | Path, number: int, limit: int = 80) -> str:
    """The file's physical line `number` (from 1), decoded as UTF-8 (bad bytes replaced), cut to `limit`
    characters: a refused line quoted in a message. An empty string past the file's end."""
    with opened_bytes(path) as f:
        for i, raw in enumerate(f, start=1):
            if i == number:
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                return text if len(text) <= limit else text[:limit - 3] + "..."
    return ""


def not_utf8_lines(path: str | Path) -> list[int]:
    """The file's lines (from 1) that are not UTF-8 text (a reader takes them as Windows-1252). A file that is
    UTF-8 throughout, nearly every file, is decoded in C, 16 MB of whole lines at a time (0.1 s for 2M lines, not
    1.2 s line by line; an 88 MB file held and decoded at once cost `opportunity check` 160 MB more than the night);
    from the first line that fails, line by line to the end."""
    lines_before, carry = 0, b""
    with opened_bytes(path) as f:
        while True:
            chunk = f.read(_DECODED_CHUNK)
            data = carry + chunk
            cut = data.rfind(b"\n") + 1 if chunk else len(data)  # (the last line may end without a newline)
            whole, carry = data[:cut], data[cut:]
            try:
                whole.decode("utf-8")
            except UnicodeDecodeError as exc:
                start = whole.rfind(b"\n", 0, exc.start) + 1
                first = lines_before + whole.count(b"\n", 0, start) + 1
                rest = whole[start:] + carry + f.read()
                return [number for number, raw in enumerate(rest.split(b"\n"), start=first)
                        if decoded_line(raw)[1]]
            if not chunk:
                return []
            lines_before += whole.count(b"\n")


def _ends_in_newline(path: str | Path) -> bool | None:
    """Whether a plain file's last byte is a newline, from that byte alone (None for an empty or gzip file, which
    the caller reads whole)."""
    path = Path(path)
    if path.suffix.lower() == ".gz":
        return None
    with path.open("rb") as f:
        if f.seek(0, 2) == 0:
            return None
        f.seek(-1, 2)
        return f.read(1) == b"\n"


def unfinished(path: str | Path) -> tuple[int, bytes] | None:
    """The number of the file's last line (from 1) when the file does not end with a newline, with the file's bytes
    (read once, for `shortened_last_cell` and `unfinished_record` too), else None, without reading them when its
    last byte says so: a text file cut short (a download or copy that did not finish) ends in the middle of a line.
    A file whose last line is whole but unterminated ends so too; whether that line is a record tells them apart
    (`check`)."""
    if _ends_in_newline(path):
        return None
    data = read_bytes(path)
    if not data or data.endswith(b"\n"):
        return None
    return data.count(b"\n") + 1, data


_LINES_BEFORE = 10
"""The records before an unfinished last line that its last cell is measured against."""


def shortened_last_cell(found: tuple[int, bytes], delimiter: str = ",") -> tuple[int, str, list[str]] | None:
    """(its line, its last cell, that column's cells in the records before) when the file ends without a newline
    in a record as wide as those before it whose last cell is shorter than each of theirs: a file cut short inside
    its last number, which still parses (trial 34: `2015-04-01,unemploy,8526.0` cut to `...,8` was read as 8, and
    check said ok). None otherwise (a whole last line merely unterminated is as long as its column's cells; a row
    empty in a column every record before it fills is a total or a note, no record cut in its last cell).
    `found`: the file's `unfinished`."""
    last, (cut, before) = found[0], _last_and_before(found, delimiter)
    if cut is None or len(before) < _LINES_BEFORE or any(len(r) != len(cut) for r in before):
        return None
    if _a_total_row(cut, before):
        return None
    cells = [r[-1] for r in before]
    return (last, cut[-1], cells[-3:]) if len(cut[-1]) < min(len(c) for c in cells) else None


def _a_total_row(record: list[str], before: list[list[str]]) -> bool:
    """Whether `record`, the file's unterminated last, is a total or a note row rather than one cut short: of the
    width of the records before it, and empty in a column other than its last that each of them fills (`;Total;;`:
    a spreadsheet's export ends so, with no newline; trial 91 was told "a file cut short")."""
    return all(len(r) == len(record) for r in before) and any(
        not cell.strip() and all(r[k].strip() for r in before) for k, cell in enumerate(record[:-1]))


def ends_in_a_total_row(found: tuple[int, bytes], delimiter: str = ",") -> bool:
    """Whether the file's unterminated last line is a total or a note row (`_a_total_row`), no record cut short.
    `found`: the file's `unfinished`."""
    last, before = _last_and_before(found, delimiter)
    return last is not None and len(before) >= _LINES_BEFORE and _a_total_row(last, before)


def _last_and_before(found: tuple[int, bytes], delimiter: str) -> tuple[list[str] | None, list[list[str]]]:
    """The unterminated last line of `found` (the file's `unfinished`) as a record, and the `_LINES_BEFORE` records
    before it (those that parse); (None, []) for one line, a header alone with no newline: no record to be cut
    (trial 59: an IndexError)."""
    tail = found[1].decode("utf-8", errors="replace").rsplit("\n", _LINES_BEFORE + 1)[1:]
    if not tail:
        return None, []
    return (_parse(tail[-1], delimiter),
            [r for line in tail[:-1] if (r := _parse(line.rstrip("\r"), delimiter)) is not None])


def unfinished_line(found: tuple[int, bytes], delimiter: str = ",") -> tuple[int, str] | None:
    """(its line, why it is no record) when the file ends without a newline in a line of another width than the
    header's, or one whose quote never closes: what `read_csv_rows` rejects it for, said whatever night sees it (a
    line dated after the night is not among its quarantined rows: trial 38). None otherwise. `found`: the file's
    `unfinished`."""
    last, data = found
    text = data.decode("utf-8", errors="replace")
    line = text.rsplit("\n", 1)[-1]
    header = _parse(text.split("\n", 1)[0].rstrip("\r"), delimiter)
    if last < 2 or header is None:
        return None
    record = _parse(line, delimiter) if line.count('"') % 2 == 0 else None
    if record is None:
        return last, "unbalanced quote" if line.count('"') % 2 else "does not parse as CSV"
    return None if len(record) == len(header) else (last, f"{len(record)} fields, expected {len(header)} (the "
                                                          "header's)")


def unfinished_record(found: tuple[int, bytes], delimiter: str = ",") -> tuple[int, dict[str, str]] | None:
    """(its line, its fields by the header's names) when the file ends without a newline in a whole record as wide
    as the header: a merely unterminated file, or one cut at the very end of a line, which only the rows tell apart
    (`check`: the record's entity stopping before the others do). None otherwise. `found`: the file's
    `unfinished`."""
    last, data = found
    text = data.decode("utf-8", errors="replace")
    record = _parse(text.rsplit("\n", 1)[-1], delimiter)
    header = _parse(text.split("\n", 1)[0].rstrip("\r"), delimiter)
    if last < 2 or record is None or header is None or len(record) != len(header):
        return None
    return last, dict(zip(header, record, strict=True))


def header_of(path: str | Path, delimiter: str = ",") -> list[str]:
    """The file's column names, from its first line alone."""
    with opened_bytes(path) as f:
        try:
            raw = f.readline()
        except (OSError, EOFError):  # named .gz, not gzip
            raise CsvHeaderError("the file is named .gz but is not gzip") from None
    first = header_text(raw)
    return _header(None if first is None else first.rstrip("\r\n"), empty=not raw, delimiter=delimiter)


TITLE_LINES = 10
"""The lines above a header that `header_below` looks past: a title, a note, a blank line or two."""


def header_below(path: str | Path, needed: Sequence[str], delimiter: str = ",") -> tuple[int, str] | None:
    """(its line, from 1, and the file's first line) when a line within the first `TITLE_LINES` below the first holds
    every `needed` column, the first not: a title or a note above the header, as a report's export writes one (trial
    54: "Clemson daily temperatures, NOAA export" above `date,tmin,tmax` was told to lack every column, "is it the
    right file?"). None otherwise."""
    lines: list[str] = []
    with opened_bytes(path) as f:
        try:
            for _ in range(TITLE_LINES + 1):
                lines.append(decoded_line(f.readline())[0].rstrip("\r\n").removeprefix("\ufeff"))
        except (OSError, EOFError):
            return None
    for number, line in enumerate(lines[1:], start=2):
        fields = _parse(line, delimiter) if line.strip() else None
        if fields is not None and all(c in fields for c in needed):
            return number, lines[0]
    return None


def read_csv_rows(path: str | Path, delimiter: str = ",", entity_column: str | list[str] | None = None,
                  dated_columns: Sequence[str] = (), read: Collection[str] | None = None) -> CsvRows:
    """Every record of the file, by header name, and every rejected line with its reason (attributed to its value
    in `entity_column` where that can be read; of several columns, their values joined by `ENTITY_JOINER`). `read`:
    the columns a pack reads, the only ones the header may not repeat (None: every column)."""
    with _any_field_size():
        return _read_csv_rows(Path(path), delimiter, entity_column, dated_columns, read)


def _entity(text: str, indexes: list[int] | None, delimiter: str, width: int) -> str | None:
    """The entity a rejected line names, as far as each of its columns parses (None if one does not)."""
    if indexes is None:
        return None
    parts = [_field(text, i, delimiter, width) for i in indexes]
    return None if None in parts else ENTITY_JOINER.join(p for p in parts if p is not None)


def _readings(text: str, indexes: list[int] | None, delimiter: str, width: int) -> tuple[tuple[str | None, ...], ...]:
    """The values of the columns at `indexes` in a rejected line (its first physical line, read leniently, without
    its quotes when they break the line's field count, as `_field` reads it: a stray quote before a name, trial 23,
    had left the line undated): one reading if it has `width` fields, else from its start and from its end."""
    if not indexes:
        return ()
    rows = _lenient_rows(text, delimiter)
    row = next((r for r in rows if len(r) == width), rows[0] if rows else [])
    extra = len(row) - width
    starts = tuple((row[i].strip() or None) if i < len(row) else None for i in indexes)
    if extra == 0:
        return (starts,)
    ends = tuple((row[i + extra].strip() or None) if 0 <= i + extra < len(row) else None for i in indexes)
    return (starts, ends)


def _cut_entity(rejected: Rejected, text: str, indexes: list[int] | None, delimiter: str, width: int,
                ids: list[list[str]]) -> Rejected:
    """`rejected`, the file's unterminated last line with fields missing (a file cut short), attributed to the
    entity whose id its last field begins where that field is an id's: a cut field is no id of its own (trial 94:
    `...,Photographic equipment and suppli` was scanned as a ninth entity beside `...and supplies`). An id that
    begins no id of the file's records, or begins several, attributes the line to none."""
    if indexes is None:
        return rejected
    rows = _lenient_rows(text, delimiter)
    row = next((r for r in rows if len(r) == width), rows[0] if rows else [])
    if not row or len(row) >= width or len(row) - 1 not in indexes:
        return rejected
    cut = row[-1].strip()
    whole = {v.strip() for v in ids[indexes.index(len(row) - 1)] if v.strip().startswith(cut)} if cut else set()
    if len(whole) != 1:
        return replace(rejected, entity=None)
    parts = [_field(text, i, delimiter, width) for i in indexes]
    parts[indexes.index(len(row) - 1)] = whole.pop()
    return replace(rejected, entity=None if None in parts else ENTITY_JOINER.join(p for p in parts if p is not None))


def _read_csv_rows(path: Path, delimiter: str, entity_column: str | list[str] | None,
                   dated_columns: Sequence[str], read: Collection[str] | None) -> CsvRows:
    raw_lines = read_bytes(path).split(b"\n")
    unterminated = bool(raw_lines) and raw_lines[-1] != b""
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines: list[str | None] = []
    recoded = []
    for number, raw in enumerate(raw_lines, start=1):
        text, other = decoded_line(raw)
        if number == 1 and header_text(raw) is None:
            lines.append(None)  # a header of no 8-bit text: the file is UTF-16, or not text
            continue
        if other:
            recoded.append(number)
        lines.append(text.removesuffix("\r"))
    header = _header(lines[0] if lines else None, empty=not lines, delimiter=delimiter)
    refuse_repeats(header, read)
    width = len(header)
    wanted = [entity_column] if isinstance(entity_column, str) else entity_column or []
    entity_indexes = [header.index(c) for c in wanted] if wanted and all(c in header for c in wanted) else None
    dated_indexes = [header.index(c) for c in dated_columns] if dated_columns and all(
        c in header for c in dated_columns) else None
    starts: list[int] = []
    values: list[list[str]] = [[] for _ in header]
    rejected: list[Rejected] = []
    i = 1
    while i < len(lines):
        first = lines[i]
        number = i + 1
        if first is None:  # the header line only: every later line was decoded
            i += 1
            continue
        if not first.strip():
            i += 1
            continue
        fields = None
        end = i
        text = first
        while True:
            if text.count('"') % 2 == 0:
                fields = _parse(text, delimiter)
                break
            end += 1
            if end >= len(lines) or end - i >= MAX_RECORD_LINES:
                break
            text = f"{text}\n{lines[end]}"
        if fields is None or (end > i and len(fields) != width):
            # A quote that opens a field on this line and closes nowhere sensible: only this line is lost.
            reason = "unbalanced quote" if first.count('"') % 2 else "does not parse as CSV"
            rejected.append(Rejected(number, reason, _entity(first, entity_indexes, delimiter, width),
                                     _readings(first, dated_indexes, delimiter, width)))
            i += 1
            continue
        if len(fields) == width + 1 and not fields[-1]:
            fields = fields[:-1]  # a trailing delimiter
        if len(fields) != width:
            rejected.append(Rejected(number, f"{len(fields)} fields, expected {width} (the header's)",
                                     _entity(first, entity_indexes, delimiter, width),
                                     _readings(first, dated_indexes, delimiter, width)))
            i = end + 1
            continue
        starts.append(number)
        for column, value in zip(values, fields, strict=True):
            column.append(value)
        i = end + 1
    if unterminated and rejected and rejected[-1].line == len(lines) and lines[-1] is not None:
        rejected[-1] = _cut_entity(rejected[-1], lines[-1], entity_indexes, delimiter, width,
                                   [values[i] for i in entity_indexes or []])
    return CsvRows(header=header, lines=starts, columns=dict(zip(unique_names(header), values, strict=True)),
                   rejected=rejected, recoded=recoded)

