"""Which format a file's name says it is: the formats the source layer reads and the extensions that name them (a
`.gz` after one is compression). The lowest module of the layer: the spec, the archives and the readers ask it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Format = Literal["csv", "parquet", "jsonl", "excel", "duckdb", "postgres"]
FORMATS: tuple[Format, ...] = ("csv", "parquet", "jsonl", "excel", "duckdb", "postgres")
DUCKDB_SUFFIXES = (".duckdb", ".db")
"""Extensions of a DuckDB database file (`sniff.infer_format`)."""
DATA_FILE_SUFFIXES = tuple(f"{e}{z}" for e in (".csv", ".tsv", ".txt", ".parquet", ".jsonl", ".ndjson", ".json")
                           for z in ("", ".gz"))
"""Extensions of a data file a DuckDB `query` reads by name (`FROM 'sales.csv'`), no database of its own."""
_BY_EXTENSION: dict[str, Format] = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet",
                                    ".pq": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
                                    ".xlsx": "excel", ".xlsm": "excel", ".xls": "excel", ".ods": "excel",
                                    **dict.fromkeys(DUCKDB_SUFFIXES, "duckdb")}


def suffix_of(path: Path) -> str:
    """The extension that names the format: `.csv`, or `.csv.gz` for a compressed file."""
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return Path(path.stem).suffix.lower() + suffix
    return suffix


def format_named_by(path: Path) -> Format | None:
    """The format the path's extension names (a `.gz` after it is compression), if it names one."""
    return _BY_EXTENSION.get(suffix_of(path).removesuffix(".gz"))
