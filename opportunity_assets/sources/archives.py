"""A ZIP archive as a source file: the one data file it holds (or the one `member` names), extracted once per
process and version of the archive into a scratch folder named after it (`…/sales.zip/sales.csv`). Every reader
and check then opens a plain file, its format from the member's own extension, and a message's path says where the
file came from. Pure: no DuckDB here.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from opportunity_assets.sources.extensions import format_named_by

SUFFIX = ".zip"
_SHOWN = 8
"""Members a message names at most."""


class ArchiveError(ValueError):
    """The archive cannot give the file to read; the message is one line, after the pack key at fault."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        """The source key at fault: `path` (the archive) or `member` (which file of it)."""


def is_archive(path: str | None) -> bool:
    """Whether a source's `path` names a ZIP archive (by its extension, as every format is named)."""
    return bool(path) and str(path).lower().endswith(SUFFIX)


def data_files(names: list[str]) -> list[str]:
    """The archive's members a source can be: files (not folders) of a format this layer reads, by extension,
    leaving out a Mac's `__MACOSX/` copies and hidden files (a README, a licence or a PDF beside the data is not
    one)."""
    return [n for n in names if not n.endswith("/") and not n.startswith("__MACOSX/")
            and not PurePosixPath(n).name.startswith(".") and format_named_by(Path(n)) is not None]


_READ_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})
"""The compression methods zipfile reads."""
_LOCK = threading.Lock()
_EXTRACTED: dict[tuple[str, str | None], tuple[tuple[int, int], Path]] = {}
"""By archive and member asked for: the archive's version (change time and size) and the file extracted from it."""
_SCRATCH: list[Path] = []


def extracted(archive: Path, member: str | None) -> Path:
    """The file `member` of `archive` (default: its one data file) as a plain file, extracted on first use and again
    when the archive changes. Raises ArchiveError naming the key at fault."""
    try:
        status = archive.stat()
    except OSError as exc:
        raise ArchiveError("path", f"source file {archive} cannot be read ({exc.strerror})") from None
    version = (status.st_mtime_ns, status.st_size)
    with _LOCK:
        known = _EXTRACTED.get((str(archive), member))
        if known is not None and known[0] == version and known[1].is_file():
            return known[1]
        target = _extract(archive, member, len(_EXTRACTED))
        if known is not None:  # an older version's copy: its archive changed since
            shutil.rmtree(known[1].parent.parent, ignore_errors=True)
        _EXTRACTED[(str(archive), member)] = (version, target)
        return target


def member_read(archive: Path, member: str | None) -> str | None:
    """The member a night reads of `archive` (`_chosen`), by its listing alone, nothing extracted; None where the
    archive cannot tell (the key at fault is said when it is read)."""
    try:
        with zipfile.ZipFile(archive) as opened:
            return _chosen(opened.namelist(), member, archive)
    except (ArchiveError, zipfile.BadZipFile, OSError):
        return None


def _chosen(names: list[str], member: str | None, archive: Path) -> str:
    """The member to read: the one named (its whole path in the archive, or its file name if only one member has
    it), or the archive's one data file (a `.txt` one only where no other is: a README.txt is notes)."""
    files = data_files(names)
    if len(files) > 1:  # text named `.txt` beside data in another format is notes (a README.txt)
        files = [n for n in files if not n.lower().endswith(".txt")] or files
    if member is not None:
        matching = [n for n in names if n == member] or [
            n for n in names if not n.endswith("/") and PurePosixPath(n).name == member]
        if len(matching) == 1:
            return matching[0]
        held = files or [n for n in names if not n.endswith("/")]
        why = f"{len(matching)} members of {archive.name} are named so" if matching else \
            f"{archive.name} holds no such file"
        raise ArchiveError("member", f"got {member!r}; {why}; it holds {_listed(held)}: expected one of them, "
                                     "by its path in the archive")
    if len(files) == 1:
        return files[0]
    if not files:
        others = [n for n in names if not n.endswith("/")]
        raise ArchiveError("path", f"source file {archive} is a ZIP archive holding no data file (CSV, Parquet, JSON "
                                   f"Lines, an Excel workbook or a DuckDB database, by extension): it holds "
                                   f"{_listed(others)}; expected an archive holding the data")
    raise ArchiveError("member", f"got nothing; {archive.name} holds {len(files)} data files, {_listed(files)}: "
                                 "expected `member:` naming the one to read")


def _listed(names: list[str]) -> str:
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return f"{names[:_SHOWN]}{more}" if names else "nothing"


def _extract(archive: Path, member: str | None, serial: int) -> Path:
    try:
        with zipfile.ZipFile(archive) as opened:
            name = _chosen(opened.namelist(), member, archive)
            method = opened.getinfo(name).compress_type
            if method not in _READ_METHODS:  # deflate64, implode: zipfile has no decompressor for them
                raise ArchiveError("path", f"source file {archive}: {name} is compressed by method {method}, which "
                                           "Python's zipfile cannot read: expected an archive compressed by deflate, "
                                           "bzip2 or lzma (or stored)")
            folder = _scratch() / str(serial) / archive.name
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / PurePosixPath(name).name
            with opened.open(name) as inside, target.open("wb") as out:
                shutil.copyfileobj(inside, out, 1 << 20)
            return target
    except zipfile.BadZipFile as exc:
        raise ArchiveError("path", f"source file {archive} is no readable ZIP archive ({exc}): expected a whole "
                                   "archive (a download cut short?)") from None
    except (EOFError, zlib.error) as exc:
        raise ArchiveError("path", f"source file {archive}: its data ends before its archive says "
                                   f"({type(exc).__name__}): expected a whole archive (a download cut short?)"
                           ) from None
    except RuntimeError as exc:  # zipfile's "File ... is encrypted, password required for extraction"
        raise ArchiveError("path", f"source file {archive}: {str(exc).splitlines()[0]}: expected an archive "
                                   "without a password") from None
    except OSError as exc:
        raise ArchiveError("path", f"source file {archive} could not be extracted into {tempfile.gettempdir()} "
                                   f"({exc.strerror}): set TMPDIR to a folder with room") from None


def _scratch() -> Path:
    """This process's folder of extracted files, removed when it ends."""
    if not _SCRATCH:
        folder = Path(tempfile.mkdtemp(prefix="opportunity-archives-"))
        atexit.register(shutil.rmtree, folder, True)
        _SCRATCH.append(folder)
    return _SCRATCH[0]
