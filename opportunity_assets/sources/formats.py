"""Source files of every common format, read into one DuckDB table the point-in-time query reads.

`open_pack_source` reads each source's rows as text (`source_rows`: `__row`, the CSV's physical line or the row's
position from 1 after a header line, so numbers match what a user sees in an editor, and the pack's columns as
text, whatever the file's own types) into a table of typed rows (`shapes.typed_sql`: the query parses every cell
itself), then drops the text: only the typed table stays. Lines that are not records (a CSV row with the wrong
field count or a broken quote, a JSON line that does not parse) come back as `Rejected` for the quarantine; the
rest of the file is read as usual.

Formats, inferred from the path's extension (`source.format` overrides): CSV (`.csv`, `.tsv`, `.txt`), Parquet
(`.parquet`, `.pq`), JSON Lines (`.jsonl`, `.ndjson`) or one JSON array of records (`.json`: either), a table,
view or query of a DuckDB database file
(`.duckdb`, `.db`; `source.table` or `source.query`), a DuckDB query over files (`format: duckdb`, a `query` and
no `path`: globs, hive-partitioned Parquet), and a table, view or query of a PostgreSQL database
(`format: postgres`; the URL in the environment variable `source.url_env`), read through psycopg2.
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import functools
import json
import os
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from opportunity_assets.sources import shapes
from opportunity_assets.sources.csv_rows import (
    CsvHeaderError,
    Rejected,
    decoded_line,
    header_below,
    header_of,
    not_utf8_lines,
    opened_bytes,
    read_bytes,
    read_csv_rows,
    refuse_repeats,
    unique_names,
)
from opportunity_assets.sources.excel import SheetNotFound, WorkbookError, read_sheet, sheet_names, sheet_yaml
from opportunity_assets.sources.extensions import Format, suffix_of
from opportunity_assets.sources.reading import (
    ROW,
    SourceError,
    SourceFormatError,
    literal,
    missing_table,
    quote_identifier,
    quote_table,
)
from opportunity_assets.sources.sniff import first_bytes, infer_format, looks_like, not_its_format
from opportunity_assets.sources.spec import ENTITY_JOINER

if TYPE_CHECKING:
    from opportunity_assets.criteria import CriteriaPack
    from opportunity_assets.periods import Grain
    from opportunity_assets.sources.spec import SourceSpec


def _as_text(names: list[str]) -> str:
    """A reader's `columns` map reading every named column as text."""
    return "{" + ", ".join(f"{literal(n)}: 'VARCHAR'" for n in names) + "}"


_q = quote_identifier


COMPRESSED = "typed"
"""The database the typed rows live in: a scratch file (`open_pack_source`'s `scratch`), which DuckDB writes in
compressed row groups as it fills the table and keeps in its buffer pool. A wide source's 2M rows take 42 MB there
against 227 MB in an in-memory table, and never need the uncompressed size at once."""


@dataclass(frozen=True)
class Into:
    """Where `open_source` puts a source's rows: the view `table` of the table (in `COMPRESSED`) of
    `typed(relation)`, a SELECT over the rows as text (`relation`: `__row` and the needed columns). Only that table
    stays: the text goes."""

    table: str
    typed: Callable[[str], str]
    row_per_line: bool = True
    """Whether each record makes one typed row (a wide source's makes one per entity column: its rows cannot be
    numbered by their place in the table, so the fast CSV reader, which numbers them so, is not used)."""

    @property
    def stored(self) -> str:
        """The compressed table under the view `table`."""
        return f"{COMPRESSED}.main.{self.table}"

    def fill(self, con: duckdb.DuckDBPyConnection, relation: str) -> None:
        """The table of the typed rows over `relation` (`keep` names it)."""
        con.execute(f"CREATE OR REPLACE TABLE {self.stored} AS {self.typed(relation)}")

    def keep(self, con: duckdb.DuckDBPyConnection, *, numbered_from: int | None = None) -> None:
        """Write the filled table out (a checkpoint) and name it `table`; `numbered_from`: its rows are in the file's
        order, numbered from this line (a table's `rowid` follows insertion order, `preserve_insertion_order`)."""
        con.execute(f"CHECKPOINT {COMPRESSED}")
        rows = "*" if numbered_from is None else f"* REPLACE (rowid + {numbered_from} AS {ROW})"
        con.execute(f"CREATE OR REPLACE TEMP VIEW {self.table} AS SELECT {rows} FROM {self.stored}")

    def make(self, con: duckdb.DuckDBPyConnection, relation: str) -> None:
        self.fill(con, relation)
        self.keep(con)


def _require(present: list[str], needed: list[str], where: Path | str) -> None:
    missing = [c for c in needed if c not in present]
    if missing:
        shown = f"source file {where}" if isinstance(where, Path) else where
        raise SourceFormatError(f"{shown} lacks column(s) {missing}{_hint(missing, present)}; it has {present}",
                                tuple(missing), tuple(present))


def _hint(missing: list[str], present: list[str]) -> str:
    """The clause " (did you mean ...?)" offering the file's column (a JSON record's key) each missing one likely
    misspells, or nothing: a name in another case or a letter off ('Source' for 'source', PostgreSQL's 'action'
    for 'Action', JSON Lines' 'location' for 'LOCATION', trial 64)."""
    listed = [f"the list {found} for {c!r}" for c in missing if (found := _listed_as(c, present)) is not None]
    close = [f"{found!r} for {c!r}" for c in missing if (found := _hinted(c, present)) is not None]
    note = " a YAML list is written in brackets" if listed else ""
    return f" (did you mean {', '.join(listed + close)}?{note})" if listed or close else ""


def _listed_as(missing: str, present: list[str]) -> str | None:
    """The YAML list `[region, ISO_code]` a missing name is, when split at its commas into two or more of the
    file's columns (trial 114: `entity_id: region, ISO_code`, brackets left out, read as one name), else None."""
    parts = [p.strip() for p in missing.strip().strip("[]").split(",")]
    return f"[{', '.join(parts)}]" if len(parts) > 1 and all(p in present for p in parts) else None


_HINT_CUTOFF = 0.75
"""How close a file's column must be to a missing one to be offered for it: looser than `spelt_as`, which refuses
records on its word; a hint only names a column, and two letters swapped in a short name (`monht` for `month`,
0.8) are a misspelling."""


def _hinted(missing: str, present: list[str]) -> str | None:
    """The file's column a missing one likely misspells, to offer it (trial 34: `period_column: monht` was given no
    "did you mean 'month'", `spelt_as`'s 0.85 missing two letters swapped in five)."""
    close = difflib.get_close_matches(missing, [c for c in present if len(c) >= 4], n=1, cutoff=_HINT_CUTOFF)
    return spelt_as(missing, present) or (close[0] if close and close[0] != missing else None) or \
        _unaccented_as(missing, present) or _holding_as_a_word(missing, present)


def _unaccented(name: str) -> str:
    """A name without its accents, in lower case: `libéré` and `Libere` alike."""
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)).casefold()


def _unaccented_as(missing: str, present: list[str]) -> str | None:
    """The one column of the file a missing name is once accents and case are set aside (trial 110: `libere` for a
    Latin-1 export's `libéré`, two accents under the cutoff of a misspelling), or None."""
    same = [c for c in present if c != missing and _unaccented(c) == _unaccented(missing)]
    return same[0] if len(same) == 1 else None


def _holding_as_a_word(missing: str, present: list[str]) -> str | None:
    """The one column of the file whose header holds the missing name as a word of its own, with more beside it
    (`Year 1940` for `1940`, `1940 (est.)`): a wide table's headers written with more than their period, which no
    spelling is close to (trial 62: `Year 1940` was told "is it the right file?"). None where no column, or several,
    hold it."""
    holding = [c for c in present if c != missing and missing in re.split(r"[^0-9A-Za-z]+", c)]
    return holding[0] if len(holding) == 1 else None


def _register_text(con: duckdb.DuckDBPyConnection, lines: list[int], columns: dict[str, list[str | None]],
                   needed: list[str]) -> None:
    table = pa.table({ROW: pa.array(lines, pa.int64()),
                      **{c: pa.array(columns[c], pa.string()) for c in needed}})
    con.register("source_rows_arrow", table)
    con.execute("CREATE OR REPLACE TEMP VIEW source_rows AS SELECT * FROM source_rows_arrow")


def _physical_lines(path: Path, chunk: int = 1 << 24) -> int:
    """The file's physical lines (a last line without its newline counts), counted in C over 16 MB blocks. A fast
    reader's records can equal them (one per line, after a header) only if no line is blank, rejected or a quoted
    record's continuation: DuckDB skips blank lines and rejects others, so every such line makes the counts differ."""
    count, last = 0, b"\n"
    with opened_bytes(path) as f:
        while block := f.read(chunk):
            count += block.count(b"\n")
            last = block[-1:]
    return count if last == b"\n" else count + 1


def spelt_as(written: str, needed: Sequence[str]) -> str | None:
    """The needed key a JSON key spells otherwise, by case or a letter or two ('Weight' or 'wieght' for 'weight',
    'PCE' for 'pce'), or None (a needed key itself, or none close: within difflib's 0.85, four letters or more).
    Answered once per key and needed keys: every record of a file asks again (nlswork's `ind_code` is close to
    `idcode` in each of its 28,534 records: 61 s of difflib per read, uncached)."""
    return _spelt_as(written, tuple(needed))


@functools.lru_cache(maxsize=65536)
def _spelt_as(written: str, needed: tuple[str, ...]) -> str | None:
    if written in needed:
        return None
    same = [c for c in needed if c.casefold() == written.casefold()]
    close = same or difflib.get_close_matches(written, [c for c in needed if len(c) >= 4], n=1, cutoff=0.85)
    return close[0] if close else None


def respelt(keys: Iterable[str], needed: Sequence[str], together: Container[tuple[str, str]]) -> dict[str, str]:
    """For a JSON record with `keys`, each needed key it lacks but has spelt otherwise (`{'weight': 'Weight'}`),
    where no record of the file has both (`together`: the pairs (key written, needed key) found in one record: a
    key of its own sits beside the needed one, a misspelling replaces it). Such a record's figure is no gap."""
    present = set(keys)
    found = {}
    for key in present:
        if (needed_key := spelt_as(key, needed)) is not None and needed_key not in present \
                and (key, needed_key) not in together:
            found[needed_key] = key
    return found


def respelt_reason(spelt: Mapping[str, str], seen: Mapping[str, int], records: int) -> str:
    """The quarantine reason of a record with needed keys spelt otherwise (`respelt`); `respelt_in` reads it."""
    said = "; ".join(f"key {written!r} for {key!r} (as {seen[key]} of {records} records spell it)"
                     for key, written in sorted(spelt.items()))
    return f"{said}: its figure is no gap, and the record is not read"


_RESPELT = re.compile(r"key ('[^']*'|\"[^\"]*\") for ('[^']*'|\"[^\"]*\") \(as \d+ of \d+ records spell it\)")


def respelt_in(reason: str) -> list[tuple[str, str]]:
    """The (key written, needed key) pairs a `respelt_reason` names; none for another reason."""
    if not reason.endswith(": its figure is no gap, and the record is not read"):
        return []
    return [(ast.literal_eval(written), ast.literal_eval(key)) for written, key in _RESPELT.findall(reason)]


def _together(keys: Iterable[str], needed: Sequence[str]) -> set[tuple[str, str]]:
    """The pairs (key, the needed key it spells otherwise) that one record's `keys` hold both of."""
    present = set(keys)
    return {(k, c) for k in present if (c := spelt_as(k, needed)) is not None and c in present}


def _json_fast(con: duckdb.DuckDBPyConnection, path: Path, needed: list[str]) -> bool:
    """DuckDB's own JSON Lines reader, kept only when every line is one object, none blank, each needed key has a
    value somewhere (a key absent from every record is told apart from all-null by the slow path), and no record
    lacking one has it spelt otherwise (`respelt`: the slow path refuses that record)."""
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE json_fast AS SELECT * FROM read_json({literal(str(path))}, "
                    f"format = 'newline_delimited', columns = {_as_text(needed)})")
        empty = " AND ".join(f"{_q(c)} IS NULL" for c in needed)
        counts = con.execute("SELECT count(*), " + ", ".join(f"count({_q(c)})" for c in needed)
                             + f", count(*) FILTER (WHERE {empty}) FROM json_fast").fetchall()[0]
    except duckdb.Error:
        return False
    # a line `null` (or a record of nulls) is a row of every key empty to DuckDB: the slow path tells them apart
    if counts[0] != _physical_lines(path) or not all(counts[1:-1]) or counts[-1]:
        return False
    if min(counts[1:-1]) < counts[0]:  # some record lacks a needed key: under another name? (one pass, in DuckDB)
        try:
            shapes = [keys for (keys,) in con.execute(f"SELECT DISTINCT json_keys(json) FROM read_ndjson_objects("
                                                      f"{literal(str(path))})").fetchall()]
        except duckdb.Error:
            return False
        together = set().union(*(_together(keys, needed) for keys in shapes))
        if any(respelt(keys, needed, together) for keys in shapes):
            return False
    cells = ", ".join(_q(c) for c in needed)
    con.execute(f"CREATE OR REPLACE TEMP VIEW source_rows AS SELECT rowid + 1 AS {ROW}, {cells} FROM json_fast")
    return True


def _csv_fast(con: duckdb.DuckDBPyConnection, path: Path, header: list[str], needed: list[str],
              delimiter: str, into: Into) -> bool:
    """DuckDB's own strict CSV reader, straight into the typed rows, kept only when every line after the header
    was one record (none blank, none rejected, no quoted newline): then a record's position is its line, and its
    `rowid` (the table keeps the file's order, `preserve_insertion_order`) numbers it in the view `into.table`.
    False: the table is dropped; use `read_csv_rows`. The file's text is never held whole."""
    cells, named = ", ".join(_q(c) for c in needed), _as_text(unique_names(header))
    relation = (f"(SELECT NULL::BIGINT AS {ROW}, {cells} FROM read_csv({literal(str(path))}, header = true, "
                f"auto_detect = false, columns = {named}, delim = {literal(delimiter)}, quote = '\"', "
                "escape = '\"', strict_mode = true, store_rejects = true, rejects_table = 'csv_rejects', "
                "rejects_scan = 'csv_reject_scans'))")
    try:
        into.fill(con, relation)
        ((rejects,),) = con.execute("SELECT count(*) FROM csv_rejects").fetchall()
        ((records,),) = con.execute(f"SELECT count(*) FROM {into.stored}").fetchall()
    except duckdb.Error:
        con.execute(f"DROP TABLE IF EXISTS {into.stored}")
        return False
    if rejects or records != _physical_lines(path) - 1:
        con.execute(f"DROP TABLE {into.stored}")
        return False
    # The view numbers the rows (an UPDATE would keep a second copy of the column as the table's update versions).
    into.keep(con, numbered_from=2)
    return True


_SEP_HINT = re.compile(r"\s*sep=(.)\s*")
"""Excel's first line naming a CSV's delimiter (`sep=;`), written above the header by an export that asks for it
(trial 35: the file was told it lacks every column, "it has ['sep=', '']: is it the right file?")."""


def _other_than_csv(path: Path) -> bool:
    """Whether a file read as CSV whose header lacks the pack's columns is another format's: JSON Lines (its
    "header" a record), a format read here (Parquet, a workbook, a DuckDB database: trial 40's Parquet file named
    `.csv` was told it "has ['PAR1\\x15\\x04...']"), or binary data, whose "header" is its first bytes, NULs and all
    (trial 37: an SPSS file under `format: csv` was told it "has ['$FL2@(#) SPSS DATA FILE\\x00\\x00...']")."""
    found, looks = looks_like(path)
    return found != "csv" and looks != "an empty file"


def csv_delimiter(path: Path, given: str | None) -> str:
    """The character between a CSV file's fields: the pack's `delimiter`, else a tab for `.tsv`, else a comma."""
    return given or ("\t" if path.name.lower().endswith((".tsv", ".tsv.gz")) else ",")


def _gzip_misnamed(path: Path, within: str) -> SourceFormatError | None:
    """The problem of a gzipped file whose name does not end `.gz`, so it is read as plain text (trial 112: a
    gzipped JSON Lines file named `.jsonl` was told it "has no rows"); None for any other file."""
    looks = looks_like(path)[1]
    if not looks.startswith("gzip-compressed") or path.suffix.lower() == ".gz":
        return None
    return SourceFormatError(f"key `{within}.path`: got {path.name!r}; source file {path} is {looks}, but its name "
                             f"ends {suffix_of(path) or 'without .gz'}: expected a name ending .gz ({path.name}.gz), "
                             "which is read gzipped")


def _csv(con: duckdb.DuckDBPyConnection, path: Path, needed: list[str], entity: list[str], into: Into,
         declared: Format | None, within: str, delimiter: str | None, dated: Sequence[str] = ()) -> list[Rejected]:
    given, delimiter = delimiter, csv_delimiter(path, delimiter)
    try:
        header = header_of(path, delimiter)
        refuse_repeats(header, needed)
    except CsvHeaderError as exc:
        found, looks = looks_like(path)
        if found in ("parquet", "duckdb", "jsonl", "excel") or (found is None and looks != "an empty file"):
            raise not_its_format(path, "csv", declared, within) from None
        if looks.startswith("gzip-compressed") and path.suffix.lower() == ".gz":  # named so, and holding nothing
            raise SourceFormatError(f"source file {path} is gzip-compressed and holds nothing once decompressed: "
                                    "no header, no rows: expected the data") from None
        if (misnamed := _gzip_misnamed(path, within)) is not None:  # compressed, its name not saying so
            raise misnamed from None
        raise SourceFormatError(f"source file {path}: {exc}") from None
    if any(c not in header for c in needed) and (hint := _SEP_HINT.fullmatch(delimiter.join(header))) is not None:
        raise SourceFormatError(f"key `{within}.path`: source file {path} opens with {hint[0]!r}, Excel's line naming "
                                "the delimiter, above the header, which no reader here takes: expected the file "
                                f"without that line (delete it), read with `delimiter: {hint[1]!r}`")
    if len(header) == 1 and (other := next((d for d in ",;\t|" if d in header[0] and d != delimiter), None)):
        default = "" if given else f" (the default for {suffix_of(path) or 'a CSV file'})"
        raise SourceFormatError(f"key `{within}.delimiter`: got {delimiter!r}{default}; source file {path}: the header "
                                f"is one column, {header[0][:60]!r}; the file looks delimited by {other!r}: expected "
                                f"`delimiter: {other!r}`")
    if any(c not in header for c in needed) and _other_than_csv(path):
        raise not_its_format(path, "csv", declared, within)
    if any(c not in header for c in needed) and (below := header_below(path, needed, delimiter)) is not None:
        line, title = below
        # (trial 77: a Latin-1 export was offered a query DuckDB stops at its first accent, "CSV Error on Line: 3")
        encoding = ", encoding = 'latin-1'" if not_utf8_lines(path) else ""
        raise SourceFormatError(
            f"key `{within}.path`: source file {path} opens with {line - 1} line{'s' if line > 2 else ''} above its "
            f"header (line 1: {title[:60]!r}), and the pack's columns are on line {line}: expected the file without "
            f"the lines above its header (delete them), or a DuckDB `query` reading it from there, `SELECT * FROM "
            f"read_csv('{path.name}', skip = {line - 1}{encoding})` under `format: duckdb`")
    _require(header, needed, path)
    if into.row_per_line and _csv_fast(con, path, header, needed, delimiter, into):
        return []
    rows = read_csv_rows(path, delimiter=delimiter, entity_column=entity, dated_columns=dated, read=needed)
    _register_text(con, rows.lines, {c: list(rows.columns[c]) for c in needed}, needed)
    into.make(con, "source_rows")
    return rows.rejected


def _nested_clause(path: Path, missing: list[str], nested: dict[str, str]) -> str:
    """The end of a missing key's line when records hold it inside an object (`{"attitudes": {"imbgeco": 5}}`,
    as an API nests its fields): where, and the DuckDB `query` that reads it out; empty otherwise (trial 35: the
    key was said to be in no record, its object listed among the keys with no word of what it held)."""
    found = [(key, nested[key]) for key in missing if key in nested]
    if not found:
        return ""
    key, outer = found[0]
    picked = ", ".join(f"{o}.{k} AS {k}" for k, o in found)
    return (f"; {key!r} is nested in {outer!r} (`{{\"{outer}\": {{\"{key}\": ...}}}}`), and the source reads a "
            f"record's top-level keys alone: expected flat records, or `format: duckdb` with no `path` and `query: "
            f"\"SELECT *, {picked} FROM read_json('{path.name}')\"`")


def _jsonl(con: duckdb.DuckDBPyConnection, path: Path, needed: list[str], entity: list[str],
           declared: Format | None, within: str, series: Sequence[str] = (),
           dated: Sequence[str] = ()) -> list[Rejected]:
    """JSON Lines (or a JSON array) read record by record: a line that is no object, or a record writing a key the
    pack reads otherwise, is rejected, dated by its `dated` columns where it names them (`_json_dated`)."""
    if _json_fast(con, path, needed):
        return []
    lines: list[int] = []
    columns: dict[str, list[str | None]] = {c: [] for c in needed}
    rejected: list[Rejected] = []
    seen: Counter[str] = Counter()
    odd: list[tuple[int, list[str]]] = []  # (position, keys) of records with a key spelling a needed one otherwise
    together: set[tuple[str, str]] = set()
    spelling: dict[str, str | None] = {}  # each key's `spelt_as`, once
    wanted, nested = set(needed), dict[str, str]()  # a needed key found inside an object: the key holding it
    for number, record in _json_records(path):
        if isinstance(record, ValueError):
            rejected.append(Rejected(number, NOT_JSON, None,
                                     _json_dated(getattr(record, "doc", None), dated)))
            continue
        if not isinstance(record, dict):
            rejected.append(Rejected(number, f"a JSON {_JSON_KINDS.get(type(record), 'value')}, not an object", None))
            continue
        if (twice := _written_twice(record, needed)) is not None:
            rejected.append(Rejected(number, twice, _cell(record, entity, ENTITY_JOINER),
                                     (tuple(_text(record.get(c)) for c in dated),) if dated and not
                                     set(dated) & set(getattr(record, "twice", {})) else ()))
            continue
        seen.update(record.keys())
        for key, value in record.items():
            if isinstance(value, dict):
                nested.update((inner, key) for inner in value if inner in wanted and inner not in nested)
        for key in record:
            if key not in spelling:
                spelling[key] = spelt_as(key, needed)
            if spelling[key] is not None:
                odd.append((len(lines), list(record)))
                together |= _together(record, needed)
                break
        lines.append(number)
        for c in needed:
            value = record.get(c)
            columns[c].append(None if value is None else value if isinstance(value, str) else json.dumps(value))
    if not lines and (misnamed := _gzip_misnamed(path, within)) is not None:
        raise misnamed
    if not lines and rejected and looks_like(path)[0] != "jsonl":  # CSV read as JSON Lines: no line an object
        raise not_its_format(path, "jsonl", declared, within)
    if lines:
        missing = [c for c in needed if c not in seen]
        if missing:
            raise SourceFormatError(f"source file {path} lacks key(s) {missing} in every record"
                                    f"{_hint(missing, sorted(seen))}; it has "
                                    f"{sorted(seen)}{_nested_clause(path, missing, nested)}", tuple(missing),
                                    tuple(seen))  # (the keys as first written: a CSV header's order)
    refused = {}
    for position, keys in odd:
        spelt = respelt(keys, needed, together)
        if spelt and set(spelt) <= set(series):  # a wide record: only those entities' cells are not read
            rejected += [Rejected(lines[position], respelt_reason({key: written}, seen, len(lines)), key)
                         for key, written in sorted(spelt.items())]
        elif spelt:
            parts = [columns[c][position] if c in columns else None for c in entity]
            refused[position] = Rejected(lines[position], respelt_reason(spelt, seen, len(lines)),
                                         None if None in parts else ENTITY_JOINER.join(str(p) for p in parts),
                                         (tuple(columns[c][position] if c in columns else None for c in dated),)
                                         if dated else ())
    if refused:
        kept = [i for i in range(len(lines)) if i not in refused]
        lines = [lines[i] for i in kept]
        columns = {c: [values[i] for i in kept] for c, values in columns.items()}
    if refused or series:
        rejected = sorted([*rejected, *refused.values()], key=lambda r: r.line)
    _register_text(con, lines, columns, needed)
    return rejected


def _json_dated(text: str | None, dated: Sequence[str]) -> tuple[tuple[str | None, ...], ...]:
    """The one reading of a JSON line that does not parse (cut short, a stray character): each `dated` column's
    value where the text writes `"column": value` (trial 23: CRAN's one series, a release's line cut short, was
    every night's, its every metric unknown on every night); none if a column is not found."""
    if not dated or text is None:
        return ()
    values = []
    for column in dated:
        found = re.search(rf'"{re.escape(column)}"\s*:\s*("(?:[^"\\]|\\.)*"|[-+\w.]+)', text)
        if found is None:
            return ()
        try:
            value = json.loads(found.group(1))
        except json.JSONDecodeError:
            return ()
        values.append(value if isinstance(value, str) else json.dumps(value))
    return (tuple(values),)


NOT_JSON = "not a JSON object (no JSON: cut short, or a stray character?)"
"""The reason of a JSON line that does not parse, in words (trial 54: it was Python's own name for the error,
"(JSONDecodeError)", on the terminal and in the store's quarantine reasons)."""
_JSON_KINDS = {list: "list", type(None): "null", str: "string", int: "number", float: "number", bool: "true or false"}
"""How a JSON line that is no object is named in its row's quarantine reason."""


def json_array(data: bytes, pairs: bool = False) -> list[Any] | None:
    """The items of a file's bytes that are one JSON array (a JSON document of records, as an API or `json.dump`
    writes them, not JSON Lines), else None; `pairs`: each object a `_Record`."""
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"["):
        return None
    try:
        document = json.loads(text, object_pairs_hook=_object if pairs else None)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return document if isinstance(document, list) else None


def _broken_array(path: Path, data: bytes) -> SourceFormatError | None:
    """A file that opens a JSON array (`[`, as `json.dump` writes one, its first line no JSON value by itself) and
    does not parse as one, said in words: cut short before its closing `]`, or no JSON where it stops parsing. Trial
    54: such a file was read line by line as JSON Lines, each line "not a JSON object (JSONDecodeError)", and told
    "has no rows". None for a file that is no array, or JSON Lines whose lines are lists."""
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n").rstrip()
    if not text.startswith(b"[") or _json_value(text.split(b"\n", 1)[0]):
        return None
    if not text.endswith(b"]"):  # (a cut inside a number parses no further than the number)
        lines = text.count(b"\n") + 1
        return SourceFormatError(f"source file {path} is a JSON array cut short: it ends at line {lines} before its "
                                 "closing `]` (a download or copy that did not finish?): expected the whole file")
    try:
        json.loads(text)
    except UnicodeDecodeError:
        return SourceFormatError(f"source file {path} opens a JSON array but is not UTF-8 text: expected the file "
                                 "saved as UTF-8")
    except json.JSONDecodeError as exc:
        return SourceFormatError(f"source file {path} opens a JSON array that is no JSON at line {exc.lineno}, "
                                 f"column {exc.colno}: expected the array written whole (as `json.dump` writes it), "
                                 "or JSON Lines, one record a line")
    return None


def _json_value(line: bytes) -> bool:
    """Whether a line is a JSON value by itself (a JSON Lines file's line)."""
    try:
        json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return True


class _Record(dict[str, Any]):
    """A JSON object as `json` reads it (a key written twice keeps its last value), with the values of each key it
    writes more than once (`twice`)."""

    twice: dict[str, list[Any]]


def _object(pairs: list[tuple[str, Any]]) -> _Record:
    """A JSON object from its pairs as written (`json`'s `object_pairs_hook`), its keys written twice kept aside."""
    record = _Record(pairs)
    counts = Counter(key for key, _ in pairs)
    record.twice = {key: [v for k, v in pairs if k == key] for key, n in counts.items() if n > 1}
    return record


def _written_twice(record: dict[str, Any], needed: Sequence[str]) -> str | None:
    """The reason of a record writing a key the pack reads more than once (`{"sales": 5, "sales": 7}`: an export
    appending a corrected field, two objects merged), whose value cannot be told (trial 72: the last was read, with
    no line named); None otherwise."""
    twice = getattr(record, "twice", {})
    key = next((k for k in needed if k in twice), None)
    if key is None:
        return None
    values = ", ".join(json.dumps(v) for v in twice[key])
    times = "twice" if len(twice[key]) == 2 else f"{len(twice[key])} times"
    return f"key {key!r} written {times} in the record ({values}): which is meant cannot be told, and the record is " \
        "not read"


def _text(value: Any) -> str | None:
    """A JSON value as the source's text rows hold it: a text as written, another value as JSON, null as None."""
    return None if value is None else value if isinstance(value, str) else json.dumps(value)


def _cell(record: dict[str, Any], columns: Sequence[str], joiner: str) -> str | None:
    """A record's entity as its columns name it (joined, for a key of several), None where one is empty or written
    twice."""
    twice = getattr(record, "twice", {})
    parts = [None if c in twice else _text(record.get(c)) for c in columns]
    return None if not parts or None in parts else joiner.join(str(p) for p in parts)


def _json_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(position, the record or the error that kept it from parsing) of each record: a JSON Lines file's lines
    (blank ones skipped, numbered as an editor shows them), or a JSON array's items, numbered from 1. A record
    keeps aside the values of a key it writes twice (`_Record`)."""
    data = read_bytes(path)
    items = json_array(data, pairs=True)
    if items is not None:
        yield from enumerate(items, start=1)
        return
    if (broken := _broken_array(path, data)) is not None:
        raise broken
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        # a line that is not UTF-8 is read as Windows-1252, as a CSV line is (trial 31: a name in one byte a
        # letter, `"mâle"`, was quarantined as "not a JSON object")
        try:
            yield number, json.loads(decoded_line(raw)[0], object_pairs_hook=_object)
        except json.JSONDecodeError as exc:
            yield number, exc


def _typed(con: duckdb.DuckDBPyConnection, relation: str, path: Path, needed: list[str],
           failed: Callable[[duckdb.Error], SourceFormatError], entity: list[str], shown: str | None = None) -> None:
    """A typed relation (Parquet, a DuckDB table or query) as text columns, numbered from 2 as if under a header
    line. `failed`: the one-line problem, naming its pack key, when the relation cannot give its rows; `shown`: how
    a missing column's message names the relation (a query over files has no file: the pack's folder is none). An
    `entity` column of floating-point numbers (pandas writes a whole-number column with a gap so) names a whole
    number as an integer, `6` and not `6.0`, as a CSV or another table writes that id."""
    try:
        description = con.execute(f"SELECT * FROM {relation} LIMIT 0").description or []
    except duckdb.Error as exc:
        raise failed(exc) from None
    present = [d[0] for d in description]
    _require(present, needed, shown or path)
    floats = {d[0] for d in description if str(d[1]).upper() in ("FLOAT", "DOUBLE")} & set(entity)
    cells = ", ".join((f"CASE WHEN {_q(c)} = trunc({_q(c)}) AND abs({_q(c)}) < 1e15 THEN "
                       f"CAST(CAST({_q(c)} AS BIGINT) AS VARCHAR) ELSE CAST({_q(c)} AS VARCHAR) END AS {_q(c)}")
                      if c in floats else f"CAST({_q(c)} AS VARCHAR) AS {_q(c)}" for c in needed)
    con.execute(f"CREATE OR REPLACE TEMP VIEW source_rows AS "
                f"SELECT row_number() OVER () + 1 AS {ROW}, {cells} FROM {relation}")


def _postgres(con: duckdb.DuckDBPyConnection, spec: SourceSpec, needed: list[str], within: str = "source") -> None:
    """Rows of a PostgreSQL table, view or query as text columns, in a stable order (by the needed columns), each
    numbered by its position from 1 (`sources.postgres`: psycopg2, the driver the Dagster instance's storage already
    uses; every failure one line naming its key, never the URL's password)."""
    from opportunity_assets.sources.postgres import read_rows

    records = read_rows(spec.url_env or "", spec.table, spec.query, needed, within,
                        lambda present, where: _require(present, needed, where))
    _register_text(con, list(range(1, len(records) + 1)),
                   {c: [r[i] for r in records] for i, c in enumerate(needed)}, needed)


def describe_location(pack: CriteriaPack) -> str:
    """Where the pack's rows come from, as an error message names it."""
    src = pack.source
    if src.format == "postgres":
        return f"PostgreSQL source {src.query[:60] if src.query else src.table!r} (URL from {src.url_env})"
    if src.over_files:
        return f"the DuckDB query {src.query[:60] if src.query else ''!r} (over files in {pack.source_path})"
    return f"source file {pack.source_path}"


_GLOBBED_APART = re.compile(r"Schema mismatch between globbed files|schema mismatch in glob", re.IGNORECASE)
"""DuckDB's words for files of one pattern whose columns differ (read_csv's and read_parquet's default: the first
file's columns, by position): read_csv's "Schema mismatch between globbed files", read_parquet's "Failed to read
file ...: schema mismatch in glob" (trial 73: a folder of yearly Parquet files, one naming a column otherwise, reached
the user in DuckDB's words)."""
_GLOBBED_FILE = re.compile(r'^Current file: (.+)$|could not be found in file "(.+?)"', re.MULTILINE)
_GLOBBED_COLUMN = re.compile(r'Column with name: "(.+?)" is missing|schema mismatch in glob: column "(.+?)"')


def unreadable(pack: CriteriaPack, exc: duckdb.Error) -> SourceError:
    """The engine failing while the source's rows are read or probed, in the pack's words: a `query` of the main
    source (no joined table's query to share the blame) is `source.query`, with files of different columns named and
    `union_by_name` offered; any other source is named by where it is, the engine's reason shortened and without its
    label ("Invalid Input Error: "). Trial 54: a glob over CSV files, one with a column more, said "key `source.path`:
    the DuckDB query ... could not be read: Invalid Input Error: Schema mismatch between globbed files"."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    reason = _short_reason(_ENGINE_LABEL.sub("", first))
    src = pack.source
    if src.query is None or any(j.query for j in src.join):
        return SourceError(f"{describe_location(pack)} could not be read: {reason}")
    file, column = _GLOBBED_FILE.search(str(exc)), _GLOBBED_COLUMN.search(str(exc))
    lacking = (f" ({Path(file.group(1) or file.group(2)).name} lacks {column.group(1) or column.group(2)!r})"
               if file and column else "")
    why = (f"the files it reads do not all have the same columns{lacking}: expected `union_by_name = true` in its "
           "`read_csv` or `read_parquet`, which reads each file's columns by name"
           if _GLOBBED_APART.search(first) else
           f"it does not give its rows ({_not_converted(first) or reason}): expected a SELECT that runs")
    return SourceFormatError(f"key `source.query`: got {src.query[:80]!r}; {why}")


def join_label(pack: CriteriaPack, joined: SourceSpec) -> str:
    """How a joined table's quarantine reasons name it: `join permits (permits.csv): …`, or for a table in
    PostgreSQL `join permits (PostgreSQL, URL from PERMITS_URL): …`."""
    where = f"PostgreSQL, URL from {joined.url_env}" if joined.format == "postgres" else pack.path_of(joined).name
    return f"join {joined.table} ({where})"


def join_index(within: str) -> int | None:
    """The join a source key names (`source.join.2` -> 2), None for the main source (`source`)."""
    return None if within == "source" else int(within.rsplit(".", 1)[1])


def join_rows(index: int) -> str:
    """The table of the rows of the pack's join `index` (as `TYPED` holds the main source's)."""
    return f"__join_{index}_rows"


TYPED = "__typed_rows"
"""The view of the main source's typed rows that `open_pack_source` makes (step 1 of `shapes.py`, over a
compressed table: `Into`)."""


def _open_spec(con: duckdb.DuckDBPyConnection, spec: SourceSpec, path: Path, into: Into,
               within: str = "source") -> list[Rejected]:
    needed = spec.read_columns
    rejected: list[Rejected] = []
    if spec.format == "postgres":
        _postgres(con, spec, needed, within)
        into.make(con, "source_rows")
    elif spec.over_files:
        _over_files(con, spec.query or "", path, needed, within, spec.entity_columns)
        into.make(con, "source_rows")
    else:
        if not path.is_file():
            raise SourceFormatError(f"source file {path} not found")
        # (a line of a wide source whose columns are entities is every entity's)
        entity = [] if spec.wide is not None and spec.wide.across == "entity" else spec.entity_columns
        rejected = open_source(con, path, infer_format(path, spec.format, within=within), needed, entity=entity,
                               table=spec.table, query=spec.query, into=into, declared=spec.format, within=within,
                               delimiter=spec.delimiter, sheet=spec.sheet,
                               series=spec.wide.columns if spec.wide is not None and spec.wide.across == "entity"
                               else (), dated=_rejected_dating(spec))
    _release_text(con)
    if spec.entity is not None:  # a source of one series: every line, parsed or not, is its one entity's
        rejected = [replace(r, entity=spec.entity) for r in rejected]
    return rejected


def _rejected_dating(spec: SourceSpec) -> list[str]:
    """The columns that date a source's rejected lines (`date_rejected`): its period's, and under `published_column`
    its publication's. None with `known_at`, which dates every row alike. Trial 38: under `published_column` a house
    sale's line with a field too many was left undated, its home size's every metric unknown on every night."""
    if spec.known_at is not None:
        return []
    return [c for c in spec.dated_columns if c in spec.read_columns]


def date_rejected(con: duckdb.DuckDBPyConnection, spec: SourceSpec, grain: Grain,
                  rejected: list[Rejected]) -> list[Rejected]:
    """The rejected lines, each with the period its dates name where one reading of its fields alone names one
    (`Rejected.dated`): a line with a field too many, an unquoted comma in a tweet's text, has its dates read from
    its start and from its end, and a shifted reading is seldom a date where the right one, like every other line's,
    is. Both naming one, the one within the periods the parsed rows span (`_own_period`); both within it, or neither
    naming one: undated, as a line that does not parse is (every night's, to its entity). Under a `published_column`,
    also the day the reading that named the period says it was published (`Rejected.published`). `TYPED` holds the
    parsed rows."""
    columns = _rejected_dating(spec)
    readings = [(n, k, values) for n, r in enumerate(rejected) for k, values in enumerate(r.dated)
                if len(values) == len(columns)]
    if not readings or not columns:
        return rejected
    frame = pa.table({"__n": [n for n, _, _ in readings], "__k": [k for _, k, _ in readings],
                      **{c: [values[i] for _, _, values in readings] for i, c in enumerate(columns)}},
                     schema=pa.schema([("__n", pa.int64()), ("__k", pa.int64()),
                                       *((c, pa.string()) for c in columns)]))
    published = "NULL::DATE" if spec.published_column is None else \
        shapes.published_sql(spec.published_column, spec.time_zone is not None)
    con.register("rejected_dates", frame)
    try:
        found = con.execute(f"SELECT __n, {shapes.PERIOD}, {published} FROM "
                            f"({shapes.periods_sql(spec, grain, 'rejected_dates')}) WHERE {shapes.PERIOD} IS NOT NULL "
                            "ORDER BY __n, __k").fetchall()
    finally:
        con.unregister("rejected_dates")
    (span,) = con.execute(f"SELECT min({shapes.PERIOD}), max({shapes.PERIOD}) FROM {TYPED}").fetchall()
    named: dict[int, list[tuple[date, date | None]]] = {}
    for n, period, known in found:
        named.setdefault(n, []).append((period, known))
    dated = {n: (own, next((k for p, k in pairs if p == own and k is not None), None)) for n, pairs in named.items()
             if (own := _own_period(sorted({p for p, _ in pairs}), span)) is not None}
    return [replace(r, period=dated[n][0], published=dated[n][1]) if n in dated else r
            for n, r in enumerate(rejected)]


def _own_period(named: list[date], span: tuple[date | None, date | None]) -> date | None:
    """The period a rejected line's readings name: the one, or of two the one within `span`, the periods the
    source's parsed rows name (trial 23: `1,234,567` unquoted in a population column read the year from the end as
    1, beside 1954 from the start, in a file of 1950 to 2007: its country's every metric was unknown on every
    night); None if neither or both lie within it."""
    if len(named) == 1:
        return named[0]
    low, high = span
    within = [d for d in named if low is not None and high is not None and low <= d <= high]
    return within[0] if len(within) == 1 else None


def _release_text(con: duckdb.DuckDBPyConnection) -> None:
    """Drop everything but the typed table: the text a source was read as, a reader's leftovers, an attached
    database file."""
    con.execute("USE memory")
    con.execute("DROP VIEW IF EXISTS source_rows")
    for table in ("json_fast", "csv_rejects", "csv_reject_scans"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.unregister("source_rows_arrow")  # a registered Arrow table, if any (none: a no-op)
    if "source_db" in {row[0] for row in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}:
        con.execute("DETACH source_db")


def open_pack_source(con: duckdb.DuckDBPyConnection, pack: CriteriaPack,
                     typed: Callable[[SourceSpec, str], str], scratch: Path) -> list[Rejected]:
    """Read the pack's source into `TYPED`, and each joined table's into `join_rows(i)`: `typed(spec, relation)` is
    the SELECT of a spec's typed rows over its rows as text; the rows are kept in a database file in the directory
    `scratch` (`COMPRESSED`; the caller removes it once `con` is closed). The lines that are not records (a joined
    table's reasons name its file)."""
    con.execute(f"ATTACH {literal(str(scratch / 'typed.duckdb'))} AS {COMPRESSED}")
    rejected: list[Rejected] = []
    for i, joined in enumerate(pack.source.join):
        path, within = pack.path_of(joined), f"source.join.{i}"
        try:
            into = Into(join_rows(i), functools.partial(typed, joined), row_per_line=joined.wide is None)
            refused = _open_spec(con, joined, path, into, within)
        except SourceFormatError as exc:  # said of the join's own keys (`check.reading.source_problem`), not of
            # the main source's, whoever reports it
            raise SourceFormatError(str(exc), exc.missing, exc.present, within) from None
        rejected += [Rejected(r.line, f"{join_label(pack, joined)}: {r.reason}", r.entity) for r in refused]
    main = Into(TYPED, functools.partial(typed, pack.source), row_per_line=pack.source.wide is None)
    own = date_rejected(con, pack.source, pack.grain, _open_spec(con, pack.source, pack.source_path, main))
    return [*own, *rejected]


def open_source(con: duckdb.DuckDBPyConnection, path: Path, fmt: Format, needed: list[str], *, entity: list[str],
                table: str, query: str | None = None, into: Into, declared: Format | None = None,
                within: str = "source", delimiter: str | None = None, sheet: str | None = None,
                series: Sequence[str] = (), dated: Sequence[str] = ()) -> list[Rejected]:
    """Read a file's rows (see the module) into `into`'s table; the lines that are not records. `declared`: the
    pack's `format` (None: from the extension); `within`: the source's key, `source` or `source.join.N`, that a
    problem names. No message carries DuckDB's own error text."""
    if fmt == "postgres":
        raise SourceFormatError(f"format `postgres` reads a database, not a file: set `{within}.url_env`")
    try:
        return _open_file(con, path, fmt, needed, entity=entity, table=table, query=query, into=into,
                          declared=declared, within=within, delimiter=delimiter, sheet=sheet, series=series,
                          dated=dated)
    except (EOFError, zlib.error):  # a gzipped file cut short (the readers read it whole)
        raise SourceFormatError(_cut_short(path)) from None


def _cut_short(path: Path) -> str:
    """Why a gzipped file ends before its compressed data does, in one line."""
    return (f"source file {path} is gzip-compressed but cut short: it ends before its compressed data does (a "
            "download or copy that did not finish): expected the whole file (copy or write it again)")


def _open_file(con: duckdb.DuckDBPyConnection, path: Path, fmt: Format, needed: list[str], *, entity: list[str],
               table: str, query: str | None, into: Into, declared: Format | None, within: str,
               delimiter: str | None, sheet: str | None, series: Sequence[str] = (),
               dated: Sequence[str] = ()) -> list[Rejected]:
    """`open_source` for a file."""
    if fmt == "csv":
        return _csv(con, path, needed, entity, into, declared, within, delimiter, dated)
    if fmt == "excel":
        _excel(con, path, needed, sheet, declared, within)
        rejected = []
    elif fmt == "jsonl":
        rejected = _jsonl(con, path, needed, entity, declared, within, series, dated)
    elif fmt == "parquet":
        _parquet(path, declared, within)
        _typed(con, f"read_parquet({literal(str(path))})", path, needed,
               lambda _: SourceFormatError(f"source file {path} is a Parquet file that cannot be read: its metadata "
                                           "is damaged (write it again)"), entity)
        rejected = []
    else:
        _attach(con, path, declared, within)
        if query is not None:
            con.execute("USE source_db")
            _named_twice(_query_columns(con, query), query, needed, within)
            _typed(con, f"({query})", path, needed, functools.partial(_query_failed, con, path, query, within),
                   entity)
        else:
            _require_table(con, path, table, within)
            _typed(con, f"source_db.{quote_table(table)}", path, needed,
                   lambda exc: SourceFormatError(_table_failed(path, table, within, exc, Path.cwd())), entity)
        rejected = []
    into.make(con, "source_rows")
    return rejected


def _table_failed(path: Path, table: str, within: str, exc: duckdb.Error, cwd: Path) -> str:
    """Why a DuckDB file's table or view gives no rows, naming `table`: a view over a table the file no longer has,
    or over a file named relative to where the command runs (DuckDB reads a view's path from the working directory,
    not the pack's folder); else a damaged table (trial 106: both views were told "a damaged table or view", and
    the second read when `check` ran beside the CSV, but not from another folder, as a schedule runs it)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    missing, no_file, column = _NO_SUCH.search(first), _NO_FILE.search(first), _NO_COLUMN.search(first)
    got = f"key `{within}.table`: got {table!r}; "
    if missing and missing.group(1) in ("Table", "View"):
        return (f"{got}it is a view over a {missing.group(1).lower()} `{missing.group(2)}` that {path.name} does not "
                "have (dropped or renamed since the view was made): expected the view made again over a table the "
                "file has, or `table` naming that table itself")
    if no_file:
        named = no_file.group(1)
        where = f"no file (looked for from the folder the command runs in, {cwd})" if not Path(named).is_absolute() \
            else "no file"
        return (f"{got}it is a view over {named!r}, which names {where}: a view reads its files from the working "
                "directory, not the pack's folder; expected the view made again with the file's absolute path, or "
                "the file read by `path` itself")
    if column:
        return (f"{got}it is a view naming a column `{column.group(1)}` that the table it reads does not have: "
                "expected the view made again over the table's columns")
    return f"{got}{path.name} cannot give its rows (a damaged table or view): expected a table that reads"


def _over_files(con: duckdb.DuckDBPyConnection, query: str, folder: Path, needed: list[str], within: str,
                entity: list[str]) -> None:
    """A DuckDB query over files (`SourceSpec.over_files`) as the rows as text: the files it names are looked for
    in the pack's `folder`, each row numbered by its position in the query's result."""
    con.execute(f"SET file_search_path = {literal(str(folder))}")
    columns = _query_columns(con, query)  # (one bind of the query, its files sniffed once, for both judgments)
    _named_twice(columns, query, needed, within)
    _header_unsplit(con, columns, query, needed, within)
    _typed(con, f"({query})", folder, needed, functools.partial(_query_failed, con, folder, query, within), entity,
           shown=f"the result of `{within}.query`")


def _excel(con: duckdb.DuckDBPyConnection, path: Path, needed: list[str], sheet: str | None,
           declared: Format | None, within: str) -> None:
    """A workbook's sheet (`sources/excel.py`) as the rows as text, each numbered by its spreadsheet row."""
    if looks_like(path)[0] != "excel":
        raise not_its_format(path, "excel", declared, within)
    try:
        read = read_sheet(path, sheet, needed)
    except SheetNotFound as exc:
        raise SourceFormatError(f"key `{within}.sheet`: {exc}") from None
    except WorkbookError as exc:
        raise SourceFormatError(f"source file {path}: {exc}") from None
    if sheet is None and (missing := [c for c in needed if c not in read.header]):
        holding = next((name for name in sheet_names(path)[1:]
                        if all(c in read_sheet(path, name, needed).header for c in needed)), None)
        if holding is not None:  # the first sheet is a cover or a note: the table is on another
            raise SourceFormatError(f"key `{within}.sheet`: got none, so the first sheet, {read.name!r}, is read, "
                                    f"and it lacks column(s) {missing}; sheet {holding!r} has them all: expected "
                                    f"`sheet: {sheet_yaml(holding)}`")
    _require(read.header, needed, f"sheet {read.name!r} of source file {path}")
    _register_text(con, read.lines, read.columns, needed)


def _parquet(path: Path, declared: Format | None, within: str) -> None:
    """A Parquet file begins and ends with `PAR1`: a file that does not is another format, or cut short."""
    if not first_bytes(path, 4).startswith(b"PAR1"):
        raise not_its_format(path, "parquet", declared, within)
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(f.tell() - 4, 0))
        tail = f.read()
    if tail != b"PAR1":
        raise SourceFormatError(f"source file {path} is a Parquet file cut short (no footer at its end): expected "
                                "the whole file (copy or write it again)")


def _attach(con: duckdb.DuckDBPyConnection, path: Path, declared: Format | None, within: str) -> None:
    """The database file as `source_db`, read only: a file that is not one, or cannot be opened, said in words."""
    if first_bytes(path, 12)[8:12] != b"DUCK":
        raise not_its_format(path, "duckdb", declared, within)
    try:
        con.execute(f"ATTACH {literal(str(path))} AS source_db (READ_ONLY)")
    except duckdb.Error as exc:
        said = str(exc).lower()
        why = ("it is locked by another process that has it open for writing: close that program, or read a copy"
               if "lock" in said else
               "it was written by a version of DuckDB this one does not read: export it from that version again"
               if "version" in said or "serializ" in said else
               "it is damaged (its header or blocks do not read): write it again")
        raise SourceFormatError(f"source file {path} is a DuckDB database that cannot be opened: {why}") from None


def database_tables(path: Path) -> list[str] | None:
    """The tables and views of a DuckDB database file (`_tables`), or None where it is no such file."""
    if not path.is_file():
        return None
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {literal(str(path))} AS source_db (READ_ONLY)")
        return _tables(con)
    except duckdb.Error:
        return None
    finally:
        con.close()


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables and views of `source_db` (a schema other than `main` written before the name)."""
    rows = con.execute("""
        SELECT CASE WHEN schema_name = 'main' THEN table_name ELSE schema_name || '.' || table_name END
        FROM duckdb_tables() WHERE database_name = 'source_db'
        UNION
        SELECT CASE WHEN schema_name = 'main' THEN view_name ELSE schema_name || '.' || view_name END
        FROM duckdb_views() WHERE database_name = 'source_db' AND NOT internal
        ORDER BY 1""").fetchall()
    return [r[0] for r in rows]


def _require_table(con: duckdb.DuckDBPyConnection, path: Path, table: str, within: str) -> None:
    tables = _tables(con)
    if table.lower() not in {t.lower() for t in tables}:
        raise SourceFormatError(f"key `{within}.table`: got {table!r}; {missing_table(path.name, table, tables)}: "
                                "expected the name of the table or view to read (or `path` names another file)")


_NO_SUCH = re.compile(r"(Table|View|Schema|Table Function|Scalar Function|Macro Function|Aggregate Function|Type) "
                      r"with name \"?([^\s\"!]+)\"? does not exist")
_NO_COLUMN = re.compile(r'Referenced column "?([^"]+?)"? not found')
_ENGINE_LABEL = re.compile(r"^[A-Za-z ]+ Error: ")
_NO_FILE = re.compile(r'No files found that match the pattern "([^"]+)"')
_EXTENSION = re.compile(r"required extension '(\w+)|exists in the (\w+) extension")
_EXTENSION_WAYS = {
    "excel": "a workbook is read by `path` (`.xlsx`, or `format: excel`, with `sheet`), not by a query",
    "sqlite_scanner": "a SQLite table is read once exported to CSV or Parquet (`sqlite3 -header -csv file.db "
                      "'SELECT * FROM t' > t.csv`)",
    "spatial": "a workbook is read by `path` (`format: excel`); other files once exported to CSV or Parquet",
}
"""Why a query calling on a DuckDB extension the installation lacks cannot run, and the way the pack reads such
a file instead (trial 102: `read_xlsx('mw.xlsx')` in a `query` was told DuckDB's "An error occurred while trying
to automatically install the required extension 'excel:", cut mid-sentence)."""
_NOT_UTF8 = re.compile(r"This file is not utf-8 encoded\.(?s:.*?)^\s*file = (.+)$", re.MULTILINE)


_NO_MATCH = re.compile(r"No function matches the given name and argument types '([^(']+)\((.*)\)'")
_NO_COMPARE = re.compile(r"Cannot compare values of type (\w+) and type (\w+)")
_NO_CONVERSION = re.compile(r"Could not convert string '(.*?)' to (\w+)(?: when casting from source column (\w+))?")
_TYPE_WORDS = (
    (re.compile(r"^(VARCHAR|STRING_LITERAL|TEXT|CHAR|BPCHAR)$"), "text"),
    (re.compile(r"^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?(8|16|32|64|128)?|INTEGER_LITERAL)$"), "a whole number"),
    (re.compile(r"^(DOUBLE|FLOAT[48]?|REAL|DECIMAL.*|NUMERIC.*)$"), "a number"),
    (re.compile(r"^DATE$"), "a date"),
    (re.compile(r"^(TIMESTAMP.*|DATETIME)$"), "a timestamp"),
    (re.compile(r"^(TIME|TIME WITH TIME ZONE)$"), "a time of day"),
    (re.compile(r"^INTERVAL$"), "an interval"),
    (re.compile(r"^BOOL(EAN)?$"), "true or false"),
)
"""DuckDB's type names (and its literals' `INTEGER_LITERAL`, `STRING_LITERAL`) in a user's words."""


def _in_words(types: list[str]) -> str:
    """DuckDB's types of an operation's arguments, in words: `text and a whole number` for `VARCHAR, INTEGER_LITERAL`
    (a list, a struct, a type not named here: a value of that type, its name lower-cased)."""
    words = [next((w for pattern, w in _TYPE_WORDS if pattern.match(t.strip().upper())),
                  f"a {t.strip().split('(')[0].lower()} value") for t in types]
    return " and ".join(words) if len(words) <= 2 else ", ".join(words[:-1]) + " and " + words[-1]


def _arguments(types: str) -> list[str]:
    """DuckDB's list of an operation's argument types split at its own commas, not a type's: `DECIMAL(21,1),
    INTEGER` is two (trial 102: `to_months(trend * 1.0)` was told "`to_months(DECIMAL` to a 21 value and a 1)
    value")."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(types):
        depth += (char in "([") - (char in ")]")
        if char == "," and depth == 0:
            parts.append(types[start:i])
            start = i + 1
    return [*parts, types[start:]]


def _types_unmatched(first: str) -> str | None:
    """Why an operation does not take its arguments' types, in words, or None: DuckDB's "No function matches the
    given name and argument types '+(DATE, BIGINT)'. You might need to add explicit type casts." (a date plus a
    count of days, written as in a spreadsheet)."""
    match = _NO_MATCH.search(first)
    if match is None:
        return None
    types = [t for t in _arguments(match.group(2)) if t.strip()]
    dated = any(t.strip().upper() in ("DATE", "TIMESTAMP") for t in types)
    hint = " (a date plus days: `day + INTERVAL (n) DAY`)" if dated and match.group(1) in "+-" else ""
    return (f"it applies `{match.group(1)}` to {_in_words(types) if types else 'no value'}, which it does not take: "
            f"each to be cast to what the operation needs{hint}")


def _not_converted(first: str) -> str | None:
    """A cast of text the query makes that a cell does not take, in words, or None: DuckDB's "Could not convert
    string 'Abilene' to INT32 when casting from source column city"."""
    match = _NO_CONVERSION.search(first)
    if match is None:
        return None
    column = f"column `{match.group(3)}`" if match.group(3) else "a text"
    return (f"it casts {column} to {_in_words([match.group(2)])}, and a cell of it, {match.group(1)!r}, is none: "
            "`TRY_CAST` makes such a cell empty")


def _text_as_numbers(con: duckdb.DuckDBPyConnection, first: str, query: str) -> str | None:
    """Why a query does arithmetic or a comparison on text, in words, or None: DuckDB's "No function matches the
    given name and argument types '-(VARCHAR, DOUBLE)'" or "Cannot compare values of type VARCHAR and type
    INTEGER_LITERAL" (trial 31: `tmax - tmin` over a temperature column stored as text, `75F` in a few cells). The
    database's text columns the query names whose cells are mostly numbers, and the cast that reads them; else the
    types, and the casts a date or numbers written as text take."""
    match, compared = _NO_MATCH.search(first), _NO_COMPARE.search(first)
    types = ([t.strip() for t in _arguments(match.group(2))] if match else
             [compared.group(1), compared.group(2)] if compared else [])
    if "VARCHAR" not in types:
        return None
    words = _in_words(types)
    done = f"it applies `{match.group(1)}` to {words}" if match else \
        f"it compares {words.replace(' and ', ' with ', 1)}"
    names = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query)}
    numeric: list[str] = []
    try:
        for schema, table, column in con.execute(
                "SELECT schema_name, table_name, column_name FROM duckdb_columns() WHERE database_name = 'source_db' "
                "AND data_type = 'VARCHAR' ORDER BY 3").fetchall():
            if column.lower() not in names or column in numeric:
                continue
            cells, read = con.execute(f"SELECT count({_q(column)}), count(TRY_CAST({_q(column)} AS DOUBLE)) FROM "
                                      f"(SELECT {_q(column)} FROM source_db.{_q(schema)}.{_q(table)} LIMIT 1000)"
                                      ).fetchone() or (0, 0)
            if cells and 2 * read > cells:  # numbers, a few cells of text among them
                numeric.append(column)
    except duckdb.Error:
        numeric = []
    if not numeric:
        return (f"{done}: a column it names is stored as text, to be cast to what the "
                "operation needs (`CAST(x AS DATE)` for dates written as text, `TRY_CAST(x AS DOUBLE)` for numbers)")
    shown = ", ".join(f"`{c}`" for c in numeric[:3])
    return (f"{done}: {shown} {'is a column' if len(numeric) == 1 else 'are columns'} of numbers stored as text "
            f"in the database: read {'its' if len(numeric) == 1 else 'their'} numbers with "
            f"`TRY_CAST({numeric[0]} AS DOUBLE)`, a cell that is no number then empty")


def _short_reason(reason: str, limit: int = 200) -> str:
    """An engine's one-line reason, whole up to `limit` characters, else cut at its last sentence's end within
    them, or its last word's (`...`): a reason cut mid-word loses its fix ("You might need to add explicit type
    casts.")."""
    if len(reason) <= limit:
        return reason
    head = reason[:limit]
    end = head.rfind(". ")
    return head[:end + 1] if end > 0 else head.rsplit(" ", 1)[0] + " ..."


def _past_its_end(error: str, query: str) -> bool:
    """Whether DuckDB's syntax error points just past the query, at the parenthesis the reader wraps it in (trial
    29: `... FROM matches WHERE` was "syntax error at or near ")"", a parenthesis the query does not hold, as
    PostgreSQL's was in trial 25): its `LINE 1:` shows the statement, a caret under the character."""
    shown = re.search(r"^(LINE \d+: )(.*)\n( *)\^", error, re.MULTILINE)
    if shown is None or not query.strip():
        return False
    line, at = shown.group(2), len(shown.group(3)) - len(shown.group(1))
    tail = query.rstrip()[-20:]
    return line[at:at + 1] == ")" and line[:at].rstrip().endswith(tail.rstrip())


_TIMES = {2: "two", 3: "three"}


def _query_columns(con: duckdb.DuckDBPyConnection, query: str) -> list[str]:
    """The columns a DuckDB query gives, by name, as binding it says (nothing read but what binding sniffs); none
    for a query that does not run, which `_typed` says why of."""
    try:
        return list(con.sql(query).columns)
    except duckdb.Error:
        return []


def _named_twice(columns: list[str], query: str, needed: list[str], within: str) -> None:
    """A DuckDB query giving a column the pack reads twice, by name: DuckDB renames the second (`wage_1`), so the
    first is read and the other left unsaid (trial 79: `SELECT *, wage * 2 AS wage` read the table's `wage`, the
    query's own silently not, and check said ok; PostgreSQL refuses it). A query that does not run says why in
    `_typed`."""
    twice = [c for c in dict.fromkeys(columns) if columns.count(c) > 1 and c in needed]
    if twice:
        column = twice[0]
        times = _TIMES.get(columns.count(column), str(columns.count(column)))
        raise SourceFormatError(
            f"key `{within}.query`: got {query[:80]!r}; it gives {times} columns named `{column}` (a join's "
            f"`a.{column}` beside `b.{column}`, or `*` with `{column}` again), and only the first would be read: "
            f"expected each column named once: the one meant kept, the other left out or renamed "
            f"(`b.{column} AS b_{column}`)")


_QUOTED = re.compile(r"'((?:[^']|'')*)'")


def files_the_pattern_misses(query: str, folder: Path) -> list[tuple[str, list[str]]]:
    """Each glob a query over files reads (`'exports/*.csv'`) with the files of its folder that share its extension
    (in any case) but not its pattern: a month exported as `Macro-2004-final.CSV` beside `macro_*.csv`, never read
    (trial 82: the night's latest period a year older, told "a feed that stopped?"). Globs across folders (`**`,
    `*/`) are left."""
    out = []
    for text in (m.group(1).replace("''", "'") for m in _QUOTED.finditer(query)):
        head, _, base = text.rpartition("/")
        if not any(c in base for c in "*?[") or any(c in head for c in "*?[") or "." not in base:
            continue
        where = (folder / head) if head else folder
        if not where.is_dir():
            continue
        extension = base.rsplit(".", 1)[1].lower()
        missed = sorted(f.name for f in where.iterdir() if f.is_file() and "." in f.name
                        and f.name.rsplit(".", 1)[1].lower() == extension and not fnmatch.fnmatchcase(f.name, base))
        if missed:
            out.append((text, missed))
    return out


def _header_unsplit(con: duckdb.DuckDBPyConnection, columns: list[str], query: str, needed: list[str],
                    within: str) -> None:
    """A query over files one of whose files DuckDB's reader read as one column named by its whole header
    (`month,series,value`): a line with a field too many or too few, or a last line cut short, and `read_csv` gave
    up splitting that file, its rows left with none of the pack's columns (trial 82: quarantined as "missing entity
    id" while check said ok). A query that does not run says why in `_typed`."""
    header = next((c for c in columns if c not in needed and any(
        sep in c and sum(part.strip() in needed for part in c.split(sep)) >= min(2, len(needed))
        for sep in ",;\t|")), None)
    if header is None:
        return
    try:
        found = con.execute(f"SELECT {_q(header)} FROM ({query}) WHERE {_q(header)} IS NOT NULL LIMIT 1").fetchone()
    except duckdb.Error:
        found = None
    row = f" ({str(found[0])[:60]!r}, ...)" if found else ""
    names = [repr(p.strip()) for p in re.split(r"[,;\t|]", header) if p.strip() in needed]
    listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
    raise SourceFormatError(
        f"key `{within}.query`: got {query[:80]!r}; a file it reads was read as one column, its header "
        f"{header[:60]!r} unsplit, its rows{row} left with no {listed}: DuckDB's reader could not split that "
        "file's lines (a line with a field too many or too few, or cut short): expected that file's lines mended, "
        "or `null_padding = true` in its `read_csv`")


def _query_failed(con: duckdb.DuckDBPyConnection, path: Path, query: str, within: str,
                  exc: duckdb.Error) -> SourceFormatError:
    """Why a query over a DuckDB file does not run, in the pack's words: the table or column it names that is not
    there, or a syntax error's short reason."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    missing, column = _NO_SUCH.search(first), _NO_COLUMN.search(first)
    on = path.name if not path.is_dir() else f"the files of {path}"
    if (no_file := _NO_FILE.search(first)) is not None:  # a query over files (`SourceSpec.over_files`)
        why = f"it reads {no_file.group(1)!r}, which names no file of {path} (paths are relative to the pack)"
    elif (latin := _NOT_UTF8.search(str(exc))) is not None:  # trial 82: one export of a folder in Latin-1
        why = (f"a file it reads, {Path(latin.group(1).strip()).name}, is not UTF-8 (an export in Latin-1 or "
               "Windows-1252): expected that file saved as UTF-8, or `encoding = 'latin-1'` in the `read_csv` when "
               "every file it reads is written so")
        return SourceFormatError(f"key `{within}.query`: got {query[:80]!r}; {why}")
    elif (extension := _EXTENSION.search(first)) is not None:
        name = extension.group(1) or extension.group(2)
        way = _EXTENSION_WAYS.get(name, "a file of another format is read once exported to CSV or Parquet")
        why = f"it calls on DuckDB's `{name}` extension, which this installation does not have nor could install: {way}"
        return SourceFormatError(f"key `{within}.query`: got {query[:80]!r}; {why}")
    elif missing and missing.group(1) in ("Table", "View"):
        why = f"it reads {missing_table(path.name, missing.group(2), _tables(con))}"
    elif missing:
        why = f"it calls a {missing.group(1).lower()} `{missing.group(2)}` that DuckDB does not have"
    elif column:
        why = f"it names a column `{column.group(1)}` that the tables it reads do not have"
    elif (texts := _text_as_numbers(con, first, query)) is not None:
        why = texts
    elif (unmatched := _types_unmatched(first) or _not_converted(first)) is not None:
        why = unmatched
    elif isinstance(exc, duckdb.ParserException) and _past_its_end(str(exc), query):
        why = "it is not valid SQL (a syntax error at its end, where it stops short: a WHERE with no condition, say)"
    elif isinstance(exc, duckdb.ParserException):
        why = f"it is not valid SQL ({_short_reason(_ENGINE_LABEL.sub('', first))})"
    else:
        why = f"it does not run on {on} ({_short_reason(_ENGINE_LABEL.sub('', first))})"
    return SourceFormatError(f"key `{within}.query`: got {query[:80]!r}; {why}: expected a SELECT that runs on {on}")
