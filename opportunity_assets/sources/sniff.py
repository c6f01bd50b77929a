"""What a source file is, from its name and its first bytes (pure): the format its extension names (`source.format`
overrides), and what a file named one thing really holds (another format, a compressed file of another kind, a
workbook, a database, binary data), each told as one line naming the key and what to do."""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from opportunity_assets.sources.extensions import FORMATS, Format, format_named_by, suffix_of
from opportunity_assets.sources.reading import (
    SourceFormatError,
)

if TYPE_CHECKING:
    pass


def infer_format(path: Path, declared: Format | None = None, *, within: str = "source") -> Format:
    """The declared format, or the one the extension names. `within`: the source's key (`source.join.0` for a
    joined table), named when the extension says nothing."""
    if declared is not None:
        return declared
    found = format_named_by(path)
    if found is None:
        raise SourceFormatError(_format_unknown(path, within))
    return found


_READ = "CSV, Parquet, JSON Lines, an Excel or OpenDocument workbook, or a DuckDB database"


_EXPORTED = f"the data exported as one that is, {_READ} (pandas' `to_parquet`, say)"


def _format_unknown(path: Path, within: str) -> str:
    """Why an extension that names no format read here is refused, by what the file's bytes are: one of the formats
    read (`format` names it), or another (Feather, SQLite, SPSS: trial 37 was told to set `format` to one of
    ['csv', 'parquet', ...], none of which reads them), which wants an export instead."""
    fmt, what = looks_like(path)
    if fmt is None and not first_bytes(path):  # (no bytes to tell by: a file not there yet, or empty)
        return (f"cannot tell the format of {path.name} from its extension; set `{within}.format` to one of "
                f"{list(FORMATS)}")
    if fmt is not None:
        return (f"cannot tell the format of {path.name} from its extension, and its bytes are {what}: expected "
                f"`{within}.format: {fmt}`, which reads it")
    if what in _COMPRESSED:
        return (f"cannot tell the format of {path.name} from its extension, and its bytes are {what}, a compression "
                f"no reader here opens: expected {_decompressed(path, what)}")
    return (f"cannot tell the format of {path.name} from its extension, and its bytes are {what}, which no format "
            f"here reads: expected {_EXPORTED}")


_FORMAT_NAMES: dict[Format, str] = {"csv": "CSV text", "parquet": "a Parquet file", "jsonl": "JSON Lines text",
                                    "excel": "an Excel workbook",
                                    "duckdb": "a DuckDB database", "postgres": "a PostgreSQL database"}


def first_bytes(path: Path, size: int = 4096) -> bytes:
    """The file's first bytes ("" if it cannot be read)."""
    try:
        with path.open("rb") as f:
            return f.read(size)
    except OSError:
        return b""


_OTHER_FORMATS = ((b"ARROW1", "an Arrow IPC (Feather) file"), (b"FEA1", "a Feather file"),
                  (b"$FL2", "an SPSS data file (.sav)"), (b"$FL3", "an SPSS data file (.zsav)"),
                  (b"<stata_dta>", "a Stata data file (.dta)"), (b"RDX", "an R data file (.RData)"))
"""Formats a statistics user's file comes in that no reader here takes, by the bytes each opens with."""


_UNREAD = {"an SQLite database", *(what for _, what in _OTHER_FORMATS)}
"""How `looks_like` describes a file of a format no reader here takes: such a file wants an export."""


_COMPRESSIONS = ((b"\x28\xb5\x2f\xfd", "zstd", "zstd -d"), (b"\xfd7zXZ\x00", "xz", "xz -d"),
                 (b"BZh", "bzip2", "bunzip2"))
"""Compressions other than gzip, by the bytes a compressed file opens with, and the command that undoes each (a
warehouse's exports come as `.csv.zst`; trial 54's was told "binary data of another format ... (pandas'
`to_parquet`, say)", as if the data were in some other format)."""


_COMPRESSED = {f"{name}-compressed data": undo for _, name, undo in _COMPRESSIONS}
"""How `looks_like` describes such a file, and the command that decompresses it."""


def _decompressed(path: Path, looks: str) -> str:
    """The fix for a file compressed in a way no reader here opens (`_COMPRESSED`): decompressed, or gzipped."""
    return (f"the file decompressed (`{_COMPRESSED[looks]} {path.name}`), or gzipped instead (`.csv.gz`, "
            "`.jsonl.gz`: gzip is the one compression read here)")


def looks_like(path: Path) -> tuple[Format | None, str]:
    """What the file's first bytes say it is, whatever its name: the format this layer would read it as (None for
    none), and how a message describes it ("CSV text (first line 'city,year,...')", "a Parquet file")."""
    head = first_bytes(path)
    if not head:
        return None, "an empty file"
    if head.startswith(b"PAR1"):
        return "parquet", "a Parquet file"
    if head[8:12] == b"DUCK":
        return "duckdb", "a DuckDB database"
    if head.startswith(b"SQLite format 3\x00"):
        return None, "an SQLite database"
    for magic, other in _OTHER_FORMATS:
        if head.startswith(magic):
            return None, other
    for magic, name, _ in _COMPRESSIONS:
        if head.startswith(magic):
            return None, f"{name}-compressed data"
    if head.startswith(b"PK\x03\x04"):
        if _zipped(path, ("xl/workbook.xml", "content.xml")):
            return "excel", "an Excel workbook"
        if not zipfile.is_zipfile(path):  # its directory, at the end, is missing
            part = _first_member(head).startswith(_WORKBOOK_PARTS)
            return None, (f"{'a workbook' if part else 'a ZIP archive'} cut short (a ZIP archive whose end is "
                          "missing: a download or copy that did not finish?): expected the whole file")
        return None, "a ZIP archive (named .zip, the data file it holds is read)"
    if head.startswith(b"\xd0\xcf\x11\xe0"):  # an OLE2 compound file: Excel 97-2003's .xls
        return "excel", "an Excel 97-2003 workbook"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # a byte order mark of UTF-16 (UTF-32's begins so too)
        text = head[:len(head) // 4 * 4].decode("utf-16", "replace")
        first = next((line for line in text.removeprefix("\ufeff").splitlines() if line.strip()), "")
        shown = first[:60] + ("..." if len(first) > 60 else "")
        return None, (f"UTF-16 text (first line {shown!r}), as a spreadsheet's \"Unicode text\" export writes it: "
                      "save it as CSV UTF-8")
    if head.startswith(b"\x1f\x8b"):
        try:
            with gzip.open(path, "rb") as f:
                inner = f.read(4096)
        except (OSError, EOFError):
            return None, "gzip-compressed data"
        found, text = _text_kind(inner)
        return found, f"gzip-compressed {text}" if found else "gzip-compressed data"
    found, text = _text_kind(head)
    return found, text or "binary data of another format"


_WORKBOOK_PARTS = ("[Content_Types].xml", "_rels/", "docProps/", "xl/", "mimetype", "META-INF/")
"""The names a workbook's archive opens with (Excel's parts, OpenDocument's `mimetype`), the first member's name
being readable in a file cut short (trial 35: an `.xlsx` cut short was told to be named `.zip`)."""


def _first_member(head: bytes) -> str:
    """The name of a ZIP archive's first member, from its local header (its length at byte 26, the name at 30)."""
    size = int.from_bytes(head[26:28], "little") if len(head) >= 30 else 0
    return head[30:30 + size].decode("utf-8", "replace")


def _zipped(path: Path, members: tuple[str, ...]) -> bool:
    """Whether a ZIP archive holds one of `members` (a workbook's own part: Excel's, or OpenDocument's)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name in members for name in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _text_kind(head: bytes) -> tuple[Format | None, str]:
    """(`csv` or `jsonl`, a description with the first line) for text; (None, "") for binary data."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:  # cut inside a character at the end of the block, or not UTF-8 text
        text = head[:exc.start].decode("utf-8") if exc.start >= len(head) - 3 else head.decode("cp1252", "replace")
    if any(ord(c) < 32 and c not in "\t\r\n\f" for c in text):
        return None, ""
    first = next((line for line in text.removeprefix("\ufeff").splitlines() if line.strip()), "")
    shown = first[:60] + ("..." if len(first) > 60 else "")
    if first.lstrip().startswith(("{", "[")):
        return "jsonl", f"JSON Lines text (first line {shown!r})"
    delimited = any(d in first for d in ",;\t|")
    return "csv", f"{'CSV ' if delimited else ''}text (first line {shown!r})"


def not_its_format(path: Path, fmt: Format, declared: Format | None, within: str) -> SourceFormatError:
    """A file that is not `fmt`: what it looks like, and the key to change. A declared `format` is blamed by name;
    a format taken from the extension is the file's (the caller names the path)."""
    found, looks = looks_like(path)
    extension = suffix_of(path)
    if declared is not None:
        says = f", and its extension says {extension}" if extension else ""
        own = _EXPORTED if looks in _UNREAD else "the file's own format"
        fix = (f"`format: {found}`" + (" (or no `format`: the extension says so)" if format_named_by(path) == found
                                       else "")) if found else own
        return SourceFormatError(f"key `{within}.format`: got {declared!r}; source file {path} is not "
                                 f"{_FORMAT_NAMES[fmt]}: it looks like {looks}{says}: expected {fix}")
    fix = f" (`{within}.format: {found}` reads it as such)" if found else \
        f", which no format here reads: expected {_EXPORTED}" if looks in _UNREAD else \
        f", a compression no reader here opens: expected {_decompressed(path, looks)}" if looks in _COMPRESSED else ""
    return SourceFormatError(f"source file {path} is named {extension} but is not {_FORMAT_NAMES[fmt]}: it looks "
                             f"like {looks}{fix}")
