"""`opportunity check`: a CSV or JSON Lines file cut short (a download or copy that did not finish), told as a
warning naming `source.path` (pure over the file's last bytes and the night's rows): a last line quarantined, a
last cell shorter than its column's, or a last whole record whose entity's rows stop before the source's."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.sources.csv_rows import (
    ends_in_a_total_row,
    shortened_last_cell,
    unfinished,
    unfinished_line,
    unfinished_record,
)
from opportunity_assets.sources.formats import NOT_JSON, csv_delimiter, join_label, json_array
from opportunity_assets.sources.sniff import infer_format


def file_cut_short(pack: CriteriaPack, quarantined: pl.DataFrame, history: pl.DataFrame) -> list[str]:
    """A warning naming `source.path` when the CSV or JSON Lines file ends in the middle of a line that is
    quarantined (too few fields, a quote that never closes, JSON that does not parse): a file cut short. Trial 17:
    dslabs' tweets cut in half said only "6 fields, expected 9 (source row 11292)", and check said ok on a night
    years before the data's end (Parquet and gzip cut short are problems: they do not read at all; here the rows
    before the cut do). A CSV's last line that parses is judged by its last cell and its entity's rows."""
    src = pack.source
    if src.format == "postgres":
        return []
    path = pack.path_of(src)
    fmt = infer_format(path, src.format)
    if fmt not in ("csv", "jsonl") or (found := unfinished(path)) is None:  # (a newline at its end: no record cut)
        return []
    if fmt == "jsonl" and json_array(found[1]) is not None:
        return []  # a whole JSON array read as one (`json.dump` writes no newline after its `]`: trial 54)
    last = found[0]
    labels = tuple(f"{join_label(pack, j)}: " for j in src.join)  # (a joined table's rows are numbered its own way)
    reasons = [r for r in quarantined.filter(pl.col("source_row") == last)["reason"].to_list()
               if not r.startswith(labels)]
    unseen = ""
    if not reasons and fmt == "jsonl" and (record := _no_json(found)) is not None:
        reasons, unseen = [record], ", once its own date is published (after this night)"
    if not reasons:
        if fmt != "csv":
            return []
        delimiter = csv_delimiter(path, src.delimiter)
        if (line := unfinished_line(found, delimiter)) is None:
            return _last_cell_cut_short(path, found, delimiter) \
                or _last_entity_cut_short(pack, found, delimiter, history)
        reasons, unseen = [line[1]], ", once its own date is published (after this night)"
    if fmt == "csv" and ends_in_a_total_row(found, csv_delimiter(path, src.delimiter)):
        return []  # (a total row quarantined, as any is: no record cut)
    reason = reasons[0]
    return [f"key `source.path`: source file {path} ends in the middle of a record: its last line, "
            f"{last}, has no newline at its end and is quarantined ({reason}){unseen}: a file cut short (a download "
            "or copy that did not finish)? The night reads only the rows before it: expected the whole file"]


def _no_json(found: tuple[int, bytes]) -> str | None:
    """Why an unterminated last JSON line is no record, as the reader says it (`formats._jsonl`), or None: said
    whatever night sees the line (one dated after the night is not among its quarantined rows: trial 38)."""
    try:
        json.loads(found[1].rsplit(b"\n", 1)[-1])
    except ValueError:
        return NOT_JSON
    return None


def _last_cell_cut_short(path: Path, found: tuple[int, bytes], delimiter: str) -> list[str]:
    """A warning naming `source.path` when a CSV file ends, with no newline, inside its last record's last cell:
    the record parses, its number shorter than the column's before it (`8` for `8526.0`), read as written.
    `found`: the file's `csv_rows.unfinished`."""
    cut = shortened_last_cell(found, delimiter)
    if cut is None:
        return []
    last, cell, before = cut
    return [f"key `source.path`: source file {path} ends in the middle of a record: its last line, {last}, has no "
            f"newline at its end and its last cell, {cell!r}, is shorter than that column's in the lines before it "
            f"(e.g. {before}): a file cut short (a download or copy that did not finish)? The night reads {cell!r} "
            "as written: expected the whole file"]


def _last_entity_cut_short(pack: CriteriaPack, found: tuple[int, bytes], delimiter: str,
                           history: pl.DataFrame) -> list[str]:
    """A warning naming `source.path` when a CSV file ends, with no newline, at the end of a whole record whose
    entity's rows stop before the source's latest period: a file of rows by entity cut at a line's end, the rest of
    that entity's history and every later entity's lost (trial 36: cholera deaths cut after `...,1849-09-12,Wed`
    read Diarrhaea's last weeks as no deaths, and check said ok). A file merely unterminated ends on a row whose
    entity runs to the end. An entity with no row in the night's reach stops before it (unless a `where` may have
    kept its rows out). `found`: the file's `csv_rows.unfinished`."""
    src = pack.source
    if not isinstance(src.entity_id, str) or history.is_empty():
        return []
    path, whole = pack.path_of(src), unfinished_record(found, delimiter)
    if whole is None or src.entity_id not in whole[1]:
        return []
    last, record = whole
    entity = record[src.entity_id].strip()
    rows = history.filter(pl.col("source_row").is_not_null())
    own, first, latest = rows.filter(pl.col("entity_id") == entity)["period"].max(), rows["period"].min(), \
        rows["period"].max()
    if not isinstance(first, date) or not isinstance(latest, date) or (own is None and src.where) \
            or (isinstance(own, date) and own >= latest):
        return []
    label = pack.grain.label
    stop = f"at {label(own)}" if isinstance(own, date) else f"before {label(first)}"
    return [f"key `source.path`: source file {path} ends without a newline in line {last}, a whole record of "
            f"{entity!r}, whose rows stop {stop} while the source's go on to {label(latest)}: a file cut short at "
            f"the end of a line (a download or copy that did not finish)? The night reads {entity!r} after them as "
            "without rows: expected the whole file"]
