"""Source files of every common format, opened as one DuckDB relation the point-in-time query reads.

`open_source` registers `source_rows` on a connection: `__row` (the CSV's physical line, or the row's
position from 1 after a header line, so numbers match what a user sees in an editor) and the pack's columns as
text, whatever the file's own types (the query parses them itself, cell by cell). Lines that are not records (a
CSV row with the wrong field count or a broken quote, a JSON line that does not parse) come back as `Rejected`
for the quarantine; the rest of the file is read as usual.

Formats, inferred from the path's extension (`source.format` overrides): CSV (`.csv`, `.tsv`, `.txt`), Parquet
(`.parquet`, `.pq`), JSON Lines (`.jsonl`, `.ndjson`), a table, view or query of a DuckDB database file
(`.duckdb`, `.db`; `source.table` or `source.query`), and a table, view or query of a PostgreSQL database
(`format: postgres`; the URL in the environment variable `source.url_env`), read through psycopg2.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import duckdb
import pyarrow as pa

from opportunity_assets.sources.csv_rows import CsvHeaderError, Rejected, header_of, read_csv_rows

if TYPE_CHECKING:
    from opportunity_assets.criteria import CriteriaPack
    from opportunity_assets.sources.spec import SourceSpec

Format = Literal["csv", "parquet", "jsonl", "duckdb", "postgres"]
_BY_EXTENSION: dict[str, Format] = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet",
                                    ".pq": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".duckdb": "duckdb",
                                    ".db": "duckdb"}
FORMATS: tuple[Format, ...] = ("csv", "parquet", "jsonl", "duckdb", "postgres")
ROW = "__row"
"""`source_rows`' own column: the record's line or position. Internal names start with `__`; a source's never do
(`SourceSpec` refuses them), so no source column can collide with one."""


class SourceFormatError(ValueError):
    """The file cannot be opened as its format at all; the message is one line."""


def infer_format(path: Path, declared: Format | None = None) -> Format:
    """The declared format, or the one the extension names."""
    if declared is not None:
        return declared
    found = _BY_EXTENSION.get(path.suffix.lower())
    if found is None:
        raise SourceFormatError(f"cannot tell the format of {path.name} from its extension; set `source.format` "
                                f"to one of {list(FORMATS)}")
    return found


def quote_identifier(identifier: str) -> str:
    """A name as a DuckDB identifier, whatever characters it holds."""
    return '"' + identifier.replace('"', '""') + '"'


def literal(text: str) -> str:
    """Text as a DuckDB string literal (a path, a column name in a `columns` map)."""
    return "'" + text.replace("'", "''") + "'"


def _as_text(names: list[str]) -> str:
    """A reader's `columns` map reading every named column as text."""
    return "{" + ", ".join(f"{literal(n)}: 'VARCHAR'" for n in names) + "}"


_q = quote_identifier


def _require(present: list[str], needed: list[str], where: Path | str) -> None:
    missing = [c for c in needed if c not in present]
    if missing:
        shown = f"source file {where}" if isinstance(where, Path) else where
        raise SourceFormatError(f"{shown} lacks column(s) {missing}; it has {present}")


def _register_text(con: duckdb.DuckDBPyConnection, lines: list[int], columns: dict[str, list[str | None]],
                   needed: list[str]) -> None:
    table = pa.table({ROW: pa.array(lines, pa.int64()),
                      **{c: pa.array(columns[c], pa.string()) for c in needed}})
    con.register("source_rows_arrow", table)
    con.execute("CREATE OR REPLACE TEMP VIEW source_rows AS SELECT * FROM source_rows_arrow")


_BLANK_LINE = re.compile(rb"\n[ \t\r\f\v]*\n")


def _lines_if_none_blank(path: Path, chunk: int = 1 << 24) -> int:
    """The file's physical lines, or -1 if one is blank (then a record's position is not its line). Counted in C
    over 16 MB blocks: a wide file has millions of lines."""
    count, carry = 0, b"\n"  # as if a line ended just before the file: a blank first line is found too
    with path.open("rb") as f:
        while block := f.read(chunk):
            text = carry + block
            if _BLANK_LINE.search(text):
                return -1
            count += block.count(b"\n")
            carry = text[text.rfind(b"\n"):]
    if carry.strip():  # a last line without its newline is a line too
        return count + 1
    return count if carry == b"\n" or count == 0 else -1


def _json_fast(con: duckdb.DuckDBPyConnection, path: Path, needed: list[str]) -> bool:
    """DuckDB's own JSON Lines reader, kept only when every line is one object, none blank, and each needed key
    has a value somewhere (a key absent from every record is told apart from all-null by the slow path)."""
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE json_fast AS SELECT * FROM read_json({literal(str(path))}, "
                    f"format = 'newline_delimited', columns = {_as_text(needed)})")
        counts = con.execute("SELECT count(*), " + ", ".join(f"count({_q(c)})" for c in needed)
                             + " FROM json_fast").fetchall()[0]
    except duckdb.Error:
        return False
    if counts[0] != _lines_if_none_blank(path) or not all(counts[1:]):
        return False
    cells = ", ".join(_q(c) for c in needed)
    con.execute(f"CREATE OR REPLACE TEMP VIEW source_rows AS SELECT row_number() OVER () AS {ROW}, {cells} "
                "FROM json_fast")
    return True


def _csv_fast(con: duckdb.DuckDBPyConnection, path: Path, header: list[str], needed: list[str],
              delimiter: str) -> bool:
    """DuckDB's own strict CSV reader, kept only when every line after the header is one record (none blank, none
    rejected, no quoted newline): then a record's position is its line. False: use `read_csv_rows`."""
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE csv_fast AS SELECT * FROM read_csv({literal(str(path))}, "
                    f"header = true, auto_detect = false, columns = {_as_text(header)}, "
                    f"delim = {literal(delimiter)}, quote = '\"', escape = '\"', "
                    "strict_mode = true, store_rejects = true, rejects_table = 'csv_rejects', "
                    "rejects_scan = 'csv_reject_scans')")
        ((rejects,),) = con.execute("SELECT count(*) FROM csv_rejects").fetchall()
        ((records,),) = con.execute("SELECT count(*) FROM csv_fast").fetchall()
    except duckdb.Error:
        return False
    if rejects or records != _lines_if_none_blank(path) - 1:
        return False
    cells = ", ".join(_q(c) for c in needed)
    con.execute(f"CREATE OR REPLACE TEMP VIEW source_rows AS "
                f"SELECT row_number() OVER () + 1 AS {ROW}, {cells} FROM csv_fast")
    return True


def _csv(con: duckdb.DuckDBPyConnection, path: Path, needed: list[str], entity: str) -> list[Rejected]:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        header = header_of(path, delimiter)
    except CsvHeaderError as exc:
        raise SourceFormatError(f"source file {path}: {exc}") from None
    if len(header) == 1 and (other := next((d for d in ";\t|" if d in header[0]), None)):
        raise SourceFormatError(f"source file {path}: the header is one column, {header[0][:60]!r}; the file looks "
                                f"delimited by {other!r}, and a .csv must be comma-separated (.tsv: tabs)")
    _require(header, needed, path)
    if _csv_fast(con, path, header, needed, delimiter):
        return []
    rows = read_csv_rows(path, delimiter=delimiter, entity_column=entity)
    _register_text(con, rows.lines, {c: list(rows.columns[c]) for c in needed}, needed)
    return rows.rejected


def _jsonl(con: duckdb.DuckDBPyConnection, path: Path, needed: list[str]) -> list[Rejected]:
    if _json_fast(con, path, needed):
        return []
    lines: list[int] = []
    columns: dict[str, list[str | None]] = {c: [] for c in needed}
    rejected: list[Rejected] = []
    seen: set[str] = set()
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            rejected.append(Rejected(number, f"not a JSON object ({type(exc).__name__})", None))
            continue
        if not isinstance(record, dict):
            rejected.append(Rejected(number, f"a JSON {type(record).__name__}, not an object", None))
            continue
        seen.update(record)
        lines.append(number)
        for c in needed:
            value = record.get(c)
            columns[c].append(None if value is None else value if isinstance(value, str) else json.dumps(value))
    if lines:
        missing = [c for c in needed if c not in seen]
        if missing:
            raise SourceFormatError(f"source file {path} lacks key(s) {missing} in every record; it has "
                                    f"{sorted(seen)}")
    _register_text(con, lines, columns, needed)
    return rejected


def _typed(con: duckdb.DuckDBPyConnection, relation: str, path: Path, needed: list[str]) -> None:
    """A typed relation (Parquet, a DuckDB table or query) as text columns, numbered from 2 as if under a header
    line."""
    try:
        present = [d[0] for d in con.execute(f"SELECT * FROM {relation} LIMIT 0").description or []]
    except duckdb.Error as exc:
        raise SourceFormatError(f"source file {path} could not be opened: {str(exc).splitlines()[0]}") from None
    _require(present, needed, path)
    cells = ", ".join(f"CAST({_q(c)} AS VARCHAR) AS {_q(c)}" for c in needed)
    con.execute(f"CREATE OR REPLACE TEMP VIEW source_rows AS "
                f"SELECT row_number() OVER () + 1 AS {ROW}, {cells} FROM {relation}")


def _postgres(con: duckdb.DuckDBPyConnection, url_env: str, relation: str, needed: list[str]) -> None:
    """Rows of a PostgreSQL table, view or query as text columns, in a stable order (by the needed columns), each
    numbered by its position from 1. psycopg2 is the driver the Dagster instance's storage already uses."""
    import psycopg2

    url = os.environ.get(url_env)
    if not url:
        raise SourceFormatError(f"key `source.url_env`: the environment variable {url_env} is not set; expected "
                                "the PostgreSQL URL (postgresql://user:password@host:port/database)")
    where = f"PostgreSQL source {relation[:80]}"
    try:
        with closing(psycopg2.connect(url, connect_timeout=10)) as pg, pg.cursor() as cur:
            cur.execute(f"SELECT * FROM {relation} AS source LIMIT 0")
            _require([d.name for d in cur.description or []], needed, where)
            cells = ", ".join(f"CAST({_q(c)} AS TEXT)" for c in needed)
            order = ", ".join(str(i + 1) for i in range(len(needed)))
            cur.execute(f"SELECT {cells} FROM {relation} AS source ORDER BY {order}")
            records = cur.fetchall()
    except psycopg2.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SourceFormatError(f"{where} could not be read (URL from {url_env}): {first}") from None
    _register_text(con, list(range(1, len(records) + 1)),
                   {c: [r[i] for r in records] for i, c in enumerate(needed)}, needed)


def describe_location(pack: CriteriaPack) -> str:
    """Where the pack's rows come from, as an error message names it."""
    src = pack.source
    if src.format == "postgres":
        return f"PostgreSQL source {src.query[:60] if src.query else src.table!r} (URL from {src.url_env})"
    return f"source file {pack.source_path}"


def join_rows(index: int) -> str:
    """The relation holding the rows of the pack's join `index` (as `source_rows` holds the main source's)."""
    return f"__join_{index}_rows"


def _open_spec(con: duckdb.DuckDBPyConnection, spec: SourceSpec, path: Path) -> list[Rejected]:
    needed = spec.read_columns
    if spec.format == "postgres":
        _postgres(con, spec.url_env or "", f"({spec.query})" if spec.query else _q(spec.table), needed)
        return []
    if not path.is_file():
        raise SourceFormatError(f"source file {path} not found")
    return open_source(con, path, infer_format(path, spec.format), needed, entity=spec.entity_id, table=spec.table,
                       query=spec.query)


def open_pack_source(con: duckdb.DuckDBPyConnection, pack: CriteriaPack) -> list[Rejected]:
    """Register the pack's `source_rows` (every column its reading needs) on `con`, and each joined table's rows as
    `join_rows(i)`; the lines that are not records (a joined table's reasons name its file)."""
    rejected: list[Rejected] = []
    for i, joined in enumerate(pack.source.join):
        path = pack.path_of(joined)
        refused = _open_spec(con, joined, path)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {join_rows(i)} AS SELECT * FROM source_rows")
        con.execute("USE memory")
        for leftover in ("csv_rejects", "csv_reject_scans"):
            con.execute(f"DROP TABLE IF EXISTS {leftover}")
        if "source_db" in {row[0] for row in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}:
            con.execute("DETACH source_db")
        rejected += [Rejected(r.line, f"join {joined.table} ({path.name}): {r.reason}", r.entity) for r in refused]
    return [*_open_spec(con, pack.source, pack.source_path), *rejected]


def open_source(con: duckdb.DuckDBPyConnection, path: Path, fmt: Format, needed: list[str], *, entity: str,
                table: str, query: str | None = None) -> list[Rejected]:
    """Register `source_rows` on `con` (see the module) from a file; the lines that are not records."""
    if fmt == "postgres":
        raise SourceFormatError("format `postgres` reads a database, not a file: set `source.url_env`")
    if fmt == "csv":
        return _csv(con, path, needed, entity)
    if fmt == "jsonl":
        return _jsonl(con, path, needed)
    if fmt == "parquet":
        _typed(con, f"read_parquet({literal(str(path))})", path, needed)
        return []
    try:
        con.execute(f"ATTACH {literal(str(path))} AS source_db (READ_ONLY)")
    except duckdb.Error as exc:
        raise SourceFormatError(f"source file {path} is not a DuckDB database: {str(exc).splitlines()[0]}") \
            from None
    if query is not None:
        con.execute("USE source_db")
    _typed(con, f"({query})" if query is not None else f"source_db.{_q(table)}", path, needed)
    return []
