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


SHOWN = 3
"""Items of a list a check's one-line summary shows (the UI's check page has them all)."""

SUMMARY = "in_one_line"
"""The check metadata entry that says what the check found in one plain line (`night.NightFailed` quotes it)."""


def check_metadata(night: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """An asset check's metadata: the night it judged first (a text value the check's page shows beside the
    result), then `values` as `as_metadata` writes them, then all of it in one plain line (`SUMMARY`)."""
    return {"night": dg.MetadataValue.text(night), **as_metadata(values),
            SUMMARY: dg.MetadataValue.text("; ".join(f"{key.replace('_', ' ')}: {_one_line(value)}"
                                                     for key, value in values.items()))}


def _one_line(value: Any) -> str:
    if isinstance(value, Markdown) and value.items:
        shown = ", ".join(value.items[:SHOWN])
        return shown + (f", and {len(value.items) - SHOWN} more" if len(value.items) > SHOWN else "")
    return " ".join((value.text if isinstance(value, Markdown) else str(value)).split())
