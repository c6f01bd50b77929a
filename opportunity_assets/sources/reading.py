"""What every reader of the source layer shares: names and text quoted into DuckDB SQL, the rows' own column, the
one-line error a source that cannot be read raises, and a table that is not there, named."""

from __future__ import annotations

import difflib

ROW = "__row"
"""`source_rows`' own column: the record's line or position. Internal names start with `__`; a source's never do
(`SourceSpec` refuses them), so no source column can collide with one."""


class SourceError(RuntimeError):
    """The source cannot be read at all (missing or empty file, missing column): one line."""

    def __init__(self, message: str, missing: tuple[str, ...] = (), present: tuple[str, ...] = (),
                 within: str = "source") -> None:
        super().__init__(message)
        self.missing = missing
        """The columns the source lacks, when that is the reason (`check.reading.source_problem` names their key)."""
        self.present = present
        """Then, the columns it has."""
        self.within = within
        """The spec that could not be read: `source`, or a joined table's `source.join.N`, whose keys are named."""


class SourceFormatError(SourceError, ValueError):
    """A file that cannot be opened as its format at all: a reader's own `SourceError`."""


def quote_identifier(identifier: str) -> str:
    """A name as a DuckDB identifier, whatever characters it holds."""
    return '"' + identifier.replace('"', '""') + '"'


def quote_table(name: str) -> str:
    """A table's name as SQL, `schema.table` as the schema and the table each quoted: a warehouse's table lives in a
    schema (`analytics.sales`), as the databases list it, and a name in quotes keeps its case and spaces (`"Region
    Sales"`). Trial 54: such names were refused at load with a name no database had (`analytics_sales`)."""
    return ".".join(quote_identifier(part) for part in name.split(".", 1))


def literal(text: str) -> str:
    """Text as a DuckDB string literal (a path, a column name in a `columns` map)."""
    return "'" + text.replace("'", "''") + "'"


def missing_table(where: str, name: str, tables: list[str], limit: int = 20) -> str:
    """`no table or view `x` in db.duckdb (did you mean `y`?): it has [...]` (`where`: the database, as a message
    names it; at most `limit` tables listed)."""
    lowered = [t.lower() for t in tables]
    # a table of that very name in another schema first (`sales` for `analytics.sales`), then the closest spelling
    schemas = [t for t, low in zip(tables, lowered, strict=True) if low.rsplit(".", 1)[-1] == name.lower()]
    close = schemas[:1] or [tables[lowered.index(c)] for c in difflib.get_close_matches(name.lower(), lowered, n=1)]
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    if len(tables) > limit:
        has = f"it has {tables[:limit]!r}"[:-1] + f", ...] ({len(tables)} in all)"
    else:
        has = f"it has {tables}" if tables else "it has no table or view at all"
    return f"no table or view `{name}` in {where}{hint}: {has}"
