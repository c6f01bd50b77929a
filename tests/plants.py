"""Planted defects: copies of a source in which one entity's feed breaks the way real feeds break.

Pure functions over a polars frame of the source (entity, year, month and numeric columns), used by the tests and
by `bench/planted.py`. Each plant starts at a period and leaves every other entity and every earlier period as
it was. `magnitude` is the plant's size: a factor for shifts, slips, spikes and drifts, a number of periods for
stuck, repeated and stale feeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from opportunity_assets.verifications.series import decimals

KINDS = ("level_shift", "unit_slip", "spike", "stuck", "repeated_rows", "drift", "stale", "swapped", "sentinel",
         "lagged", "borrowed")
"""Besides shifts, slips, spikes, drifts, stuck, repeated and stale feeds: `sentinel` (a missing figure written as
the number `magnitude`, e.g. -1, 0 or 9999), `lagged` (the column reports its value of `magnitude` periods earlier:
a misaligned join), `borrowed` (the column carries another entity's figures: a join on the wrong key; `magnitude`
picks the entity, counted in sorted order from this one)."""


@dataclass(frozen=True)
class Plant:
    kind: str
    entity: str
    """Value of the source's entity column."""
    columns: tuple[str, ...]
    start: date
    """First period broken (first of month)."""
    magnitude: float

    def describe(self) -> str:
        return f"{self.kind} x{self.magnitude:g} in {'+'.join(self.columns)} of {self.entity} from {self.start:%Y-%m}"


def _period(frame: pl.DataFrame, year: str, month: str) -> pl.Expr:
    return pl.date(pl.col(year), pl.col(month), 1)


def plant(frame: pl.DataFrame, p: Plant, *, entity: str = "city", year: str = "year",
          month: str = "month", keep_precision: bool = False) -> pl.DataFrame:
    """The source with `p` planted. `keep_precision`: planted values are rounded to the decimals the entity's
    column is written with (a defect that does not also show as a change of precision)."""
    period = _period(frame, year, month)
    mine = pl.col(entity) == p.entity
    after = mine & (period >= p.start)
    months = (period.dt.year() - p.start.year) * 12 + period.dt.month() - p.start.month
    updates: dict[str, pl.Expr] = {}
    for column in p.columns:
        value = pl.col(column)
        if p.kind in ("level_shift", "unit_slip"):
            new = pl.when(after).then(value * p.magnitude).otherwise(value)
        elif p.kind == "spike":
            new = pl.when(mine & (period == p.start)).then(value * p.magnitude).otherwise(value)
        elif p.kind == "drift":  # the column drifts away from the others by `magnitude` a year, compounding
            new = pl.when(after).then(value * (p.magnitude ** ((months + 1) / 12))).otherwise(value)
        elif p.kind == "stuck":  # frozen at the value before the break for `magnitude` periods
            frozen = frame.filter((pl.col(entity) == p.entity) & (_period(frame, year, month) < p.start)) \
                .sort(year, month)[column].drop_nulls()
            last = float(frozen[-1]) if len(frozen) else 0.0
            new = pl.when(after & (months < p.magnitude)).then(pl.lit(last)).otherwise(value)
        elif p.kind == "sentinel":
            new = pl.when(after).then(pl.lit(p.magnitude)).otherwise(value)
        elif p.kind == "lagged":
            earlier = value.shift(int(p.magnitude)).over(entity, order_by=[year, month])
            new = pl.when(after).then(earlier).otherwise(value)
        elif p.kind == "borrowed":
            names = sorted(frame[entity].unique().to_list())
            other = names[(names.index(p.entity) + int(p.magnitude)) % len(names)]
            theirs = frame.filter(pl.col(entity) == other).select(year, month, pl.col(column).alias("__theirs"))
            frame = frame.join(theirs, on=[year, month], how="left")
            new = pl.when(after).then(pl.col("__theirs")).otherwise(value)
            frame = frame.with_columns(new.cast(frame.schema[column]).alias(column)).drop("__theirs")
            continue
        elif p.kind == "stale":
            new = pl.when(after).then(None).otherwise(value)
        elif p.kind == "swapped":  # two columns trade places (a mislabelled feed)
            first, second = p.columns
            other = second if column == first else first
            new = pl.when(after).then(pl.col(other)).otherwise(value)
        elif p.kind == "repeated_rows":
            continue
        else:
            raise ValueError(f"unknown plant kind {p.kind!r}")
        if keep_precision:
            places = decimals(frame.filter(mine)[column].drop_nulls().to_numpy().astype(float), 6)
            new = new.round(places if places is not None else 6)
        updates[column] = new.cast(frame.schema[column])
    if p.kind == "repeated_rows":  # the feed republishes the last good row for `magnitude` periods
        return _repeat(frame, p, entity, year, month)
    return frame.with_columns(**updates)


def _repeat(frame: pl.DataFrame, p: Plant, entity: str, year: str, month: str) -> pl.DataFrame:
    mine = frame.filter(pl.col(entity) == p.entity).sort(year, month)
    before = mine.filter(_period(mine, year, month) < p.start)
    if not before.height:
        return frame
    source = before.tail(1)
    rows = []
    for row in mine.iter_rows(named=True):
        k = (row[year] - p.start.year) * 12 + row[month] - p.start.month
        if 0 <= k < p.magnitude:
            rows.append({**row, **{c: source[c][0] for c in p.columns}})
        else:
            rows.append(row)
    replaced = pl.DataFrame(rows, schema=frame.schema)
    return pl.concat([frame.filter(pl.col(entity) != p.entity), replaced]).sort(entity, year, month)


def read_source(path: str) -> pl.DataFrame:
    return pl.read_csv(path, null_values=["NA"], infer_schema_length=None)


def write_source(frame: pl.DataFrame, path: str) -> None:
    frame.write_csv(path, null_value="NA")

