"""The DuckDB connection a read of a pack's source runs on: its typed rows (`formats.open_pack_source`) in a
scratch database file, opened for one read, or kept for a command (`kept_open`) while the pack and its files'
bytes are the same. No query of a night here (`snapshot.py` runs those)."""

from __future__ import annotations

import hashlib
import itertools
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.periods import Grain
from opportunity_assets.sources import shapes
from opportunity_assets.sources.archives import ArchiveError
from opportunity_assets.sources.csv_rows import Rejected
from opportunity_assets.sources.formats import describe_location, open_pack_source, unreadable
from opportunity_assets.sources.reading import SourceError, literal


@dataclass(frozen=True)
class _Opened:
    """A connection holding a source's typed rows, the lines that were not records, and the scratch directory
    its rows' database file lives in (removed with the connection)."""

    con: duckdb.DuckDBPyConnection
    rejected: list[Rejected]
    scratch: tempfile.TemporaryDirectory[str]

    def close(self) -> None:
        self.con.close()
        self.scratch.cleanup()


_KEPT: list[dict[tuple[Any, ...], _Opened]] = []
"""While `kept_open` runs: the connection holding the latest source file read, by its key (`file_key`)."""
_KEPT_IN_USE = threading.RLock()
"""One read at a time on a kept connection (a DuckDB connection is not for two threads at once)."""
_COMMANDS: list[int] = []
"""While `kept_open` runs: a number no other `kept_open` block of the process had, which a database's read is kept
by (`file_key`)."""
_NUMBERS = itertools.count()
_HELD: list[bool] = []
"""While `held` runs: whether a release was asked for within it (its end releases)."""
_DIGESTS: dict[tuple[Any, ...], str] = {}
"""While `kept_open` runs: each file's digest by its path and status (inode, size, change times), so that one
command digests a wide file once, not at each of its four reads."""


@contextmanager
def kept_open() -> Iterator[None]:
    """Within this block a source file read for its span (`publication_span`, which a command's definitions need
    first) stays in its typed table until the next snapshot is read from it, while the pack and the file's bytes
    are the same: one command parses a wide file once, not twice. The snapshot read closes it (the night's
    in-memory work then runs without it). Outside the block every read opens the file anew and nothing stays in
    memory (a long-lived process, such as the UI's code server, holds no source). A block inside another is the
    outer one: a check that keeps its source for itself (`check_pack`) keeps it for the command it runs in."""
    if _KEPT:
        yield
        return
    _KEPT.append({})
    _COMMANDS.append(next(_NUMBERS))
    try:
        yield
    finally:
        _COMMANDS.pop()
        for opened in _KEPT.pop().values():
            opened.close()
        if not _KEPT:
            _DIGESTS.clear()


@contextmanager
def held() -> Iterator[None]:
    """Within this block `release_kept` waits for the block's end: a check that asks the typed rows more questions
    after its snapshot (a warning's counts) reads a wide source once, not twice (10,718 entities: 2.8 s), and a
    backfill's nights read it once between them, not once each."""
    _HELD.append(False)
    try:
        yield
    finally:
        asked = _HELD.pop()
        if asked:
            release_kept()


def release_kept() -> None:
    """Close the kept source (the snapshot read: the night's in-memory work runs without it); within `held`, at the
    block's end."""
    if _HELD:
        _HELD[-1] = True
        return
    with _KEPT_IN_USE:
        for kept in _KEPT:
            for opened in kept.values():
                opened.close()
            kept.clear()


def file_key(pack: CriteriaPack) -> tuple[Any, ...] | None:
    """What the typed table depends on: the pack and its files' bytes as they are now (a digest: a file rewritten
    within a clock tick has the same change time; SHA-256, which CPUs hash in hardware, 0.1 s for a 141 MB file
    against BLAKE2b's 0.25 s; within one command, `_digest` reuses it while the file's status is the same). For a
    database, whose rows may change between two reads, the command (`kept_open`): one command reads it once, its
    check and its nights the same rows (trial 54: a 1M-row PostgreSQL table was read and typed anew at each of a
    night's reads, 625 s), and no read outlives the command; none outside one. The same for a DuckDB `query` over
    the files it names (`SourceSpec.over_files`): there is no one file to digest (trial 112: a query over a CSV a
    year was read and typed anew by each of a check's 12 questions, 47 s for 8,757 rows)."""
    sources = [pack.source, *pack.source.join]
    if any(s.format == "postgres" or s.over_files for s in sources):
        return (pack.model_dump_json(), _COMMANDS[-1]) if _COMMANDS else None
    try:
        digests = [_digest(pack.path_of(source)) for source in sources]
    except (OSError, ArchiveError):
        return None
    return (pack.model_dump_json(), str(pack.source_path), *digests)


def _digest(path: Path) -> str:
    """The file's SHA-256; within `kept_open`, once while its status is the same."""
    with path.open("rb") as handle:
        status = os.fstat(handle.fileno())
        seen = (str(path), status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
        if _KEPT and seen in _DIGESTS:
            return _DIGESTS[seen]
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    if _KEPT:
        _DIGESTS[seen] = digest
    return digest


@contextmanager
def opened(pack: CriteriaPack, files: tuple[Any, ...] | None = None
            ) -> Iterator[tuple[duckdb.DuckDBPyConnection, list[Rejected]]]:
    """A DuckDB connection holding the pack's typed rows (`formats.TYPED`, and each joined table's), and the lines
    that were not records. Every failure to read is a one-line SourceError naming the source. `files`: the pack's
    `file_key`, if the caller has it (a digest of a wide file costs 0.1 s)."""
    if not _KEPT:
        with _opened_once(pack, None) as opened:
            yield opened
        return
    with _KEPT_IN_USE, _opened_once(pack, files or file_key(pack)) as opened:
        yield opened


SCRATCH_FULL = "no room left in the scratch folder"
"""How a full scratch folder's line begins: no pack key is at fault (`check.reading.source_problem` names none)."""


def scratch_full(error: str, scratch: str) -> SourceError | None:
    """The source's reading stopped by a full scratch folder (TMPDIR, where its rows are typed into a DuckDB file),
    in one line naming TMPDIR and what to do; None for any other error. Trial 109: "key `source.path`: source file
    .../txhousing.csv could not be read: Could not write file ".../typed.duckdb": No space left on device" blamed
    a sound source and its key."""
    if scratch not in error or "No space left on device" not in error:
        return None
    return SourceError(f"{SCRATCH_FULL} {Path(scratch).parent} (TMPDIR), where the source's rows "
                       "are typed while a night reads them: free space there, or set TMPDIR to a folder with room, "
                       "and run the same command again")


@contextmanager
def _opened_once(pack: CriteriaPack, key: tuple[Any, ...] | None
                 ) -> Iterator[tuple[duckdb.DuckDBPyConnection, list[Rejected]]]:
    """`opened`, with the kept connection of `key` if there is one (and keeping this one under it if not)."""
    if key is not None and key in _KEPT[-1]:
        kept = _KEPT[-1][key]
        yield kept.con, list(kept.rejected)
        return
    src = pack.source
    where = describe_location(pack)
    if src.format != "postgres" and not src.over_files:
        try:
            path: Path = pack.source_path
        except ArchiveError as exc:  # the archive changed since the pack was loaded
            raise SourceError(f"key `source.{exc.key}`: {exc}") from None
        if not path.is_file():
            raise SourceError(f"source file {path} not found")
        if path.stat().st_size == 0:
            raise SourceError(f"source file {path} is empty: no header, no rows")
    # Every core reads the rows: each row's cells are its own, and scans keep the file's order
    # (`preserve_insertion_order`, DuckDB's default), so every row number is the same as on one thread. The sums
    # of a night run on one (`source._night`).
    try:
        scratch = tempfile.TemporaryDirectory(prefix="opportunity-source-")
    except OSError as exc:
        raise SourceError(f"{where} could not be read: no scratch folder in {tempfile.gettempdir()} "
                          f"({exc.strerror}); set TMPDIR to a writable folder") from None
    opened = _Opened(duckdb.connect(config={"threads": os.cpu_count() or 1, "preserve_insertion_order": True}), [],
                     scratch)
    # A timestamp with a time zone (Parquet's, a DuckDB TIMESTAMPTZ) is written as text in the session's zone, which
    # DuckDB takes from the machine: the pack's `time_zone`, else UTC, so a moment is the same day on every machine
    opened.con.execute(f"SET TimeZone = {literal(pack.source.time_zone or 'UTC')}")
    keeping = False
    try:
        try:
            opened.rejected.extend(open_pack_source(
                opened.con, pack, lambda spec, relation: shapes.typed_sql(spec, Grain(spec.grain), relation),
                Path(opened.scratch.name)))
        except duckdb.Error as exc:
            raise scratch_full(str(exc), opened.scratch.name) or unreadable(pack, exc) from None
        except OSError as exc:
            raise scratch_full(str(exc), opened.scratch.name) or SourceError(
                f"{where} could not be read: {str(exc).splitlines()[0]}") from None
        if key is not None:  # one source kept: a new one replaces it
            for old in _KEPT[-1].values():
                old.close()
            _KEPT[-1].clear()
            _KEPT[-1][key] = opened
            keeping = True
        yield opened.con, list(opened.rejected)
    finally:
        if not keeping:
            opened.close()


def run(con: duckdb.DuckDBPyConnection, pack: CriteriaPack, sql: str, params: dict[str, Any]) -> pl.DataFrame:
    """`sql` on `con` as a polars frame (none for a statement); a DuckDB error becomes a one-line `SourceError`
    naming the source."""
    try:
        relation = con.sql(sql, params=params or None)
        if relation is None:  # a statement (CREATE ... AS): no rows
            return pl.DataFrame()
        frame = pl.from_arrow(relation.to_arrow_table())  # columnar, no Python object per cell
        assert isinstance(frame, pl.DataFrame)
        return frame
    except duckdb.Error as exc:
        raise unreadable(pack, exc) from None
