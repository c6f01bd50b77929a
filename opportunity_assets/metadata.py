"""`tables.py`'s tables and Markdown as Dagster metadata (the UI draws a table metadata value as a table)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg

from opportunity_assets.tables import Markdown, Table


def table_value(table: Table) -> dg.TableMetadataValue:
    schema = dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind in table.columns])
    return dg.MetadataValue.table(records=[dg.TableRecord(dict(row)) for row in table.rows], schema=schema)


def as_metadata(values: Mapping[str, Any]) -> dict[str, Any]:
    """The same entries, in the same order, with tables and Markdown as Dagster's values."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Table):
            out[key] = table_value(value)
        elif isinstance(value, Markdown):
            out[key] = dg.MetadataValue.md(value.text)
        else:
            out[key] = value
    return out


def check_metadata(night: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """An asset check's metadata: the night it judged first (a text value the check's page shows beside the
    result), then `values` as `as_metadata` writes them."""
    return {"night": dg.MetadataValue.text(night), **as_metadata(values)}
