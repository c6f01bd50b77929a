"""Defect kinds `bench/planted.py` does not plant, at moderate magnitudes: does any reach "Act on these"?

    .venv/bin/python bench/unseen_plants.py [--period design|held-out] [--markets 4]

A probe of the skeptic's reach beyond the classes it was measured on: whole rows scaled, counts double-counted,
year-to-date sales in place of monthly, a column clipped, a noisy column, a derived column computed differently
(months of inventory over 3 months of sales; volume as sales x median; the median as the mean price), the median in
thousands, a column in another unit in every row (no break in its own history), volume written negative, a
half-reported month, rows missing, published twice, a period early or frozen whole, and shifts, unit
slips, stuck, lagged, drifting and spiking columns at magnitudes the bench does not use, subtle to gross. Each is
planted into a copy of the Texas source for markets in "Act on these" on clean data (`planted.targets`), and the
nights 0, 1, 3 and 6 months after the first that sees the break run through the same scan, analyze, verify and
route code the assets call. Prints each planted market-night that reached act-on and the count. Design on the
design period; the held-out period is reported, never tuned on.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.planted import AFTER, DESIGN, HELD_OUT, first_night_seeing, night_fates, targets, with_source
from opportunity_assets.candidates.logic import candidate_id
from opportunity_assets.criteria import load_criteria
from opportunity_assets.night import nights_between
from opportunity_assets.periods import MONTH
from resources.criteria import DEFAULT_PACK
from tests.plants import Plant, plant, read_source, write_source

period = pl.date(pl.col("year"), pl.col("month"), 1)
"""The row's period (first of its month)."""
_COUNTS = ("sales", "volume", "listings")


def _scaled(columns: tuple[str, ...], factor: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        return frame.with_columns(**{c: pl.when(after).then((pl.col(c) * factor).round(1 if c == "inventory" else 0))
                                     .otherwise(pl.col(c)) for c in columns})
    return apply


def _ytd_sales(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    ytd = pl.col("sales").cum_sum().over(["city", "year"], order_by="month")
    return frame.with_columns(sales=pl.when(after).then(ytd).otherwise(pl.col("sales")))


def _clipped_listings(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
    cap = 0.9 * float(frame.filter(before).sort("year", "month")["listings"].drop_nulls()[-1])
    return frame.with_columns(listings=pl.when(after).then(pl.min_horizontal("listings", pl.lit(cap)).round(0))
                              .otherwise(pl.col("listings")))


def _jittered_sales(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    noise = pl.Series(np.exp(np.random.default_rng(1).normal(0, 0.15, frame.height)))
    return frame.with_columns(sales=pl.when(after).then((pl.col("sales") * noise).round(0)).otherwise(pl.col("sales")))


def _inventory_over_3_months(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    average = pl.col("sales").rolling_mean(3).over("city", order_by=["year", "month"])
    return frame.with_columns(inventory=pl.when(after).then((pl.col("listings") / average).round(1))
                              .otherwise(pl.col("inventory")))


def _volume_as_sales_times_median(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    recomputed = (pl.col("sales") * pl.col("median") / 1000).round(0) * 1000
    return frame.with_columns(volume=pl.when(after).then(recomputed).otherwise(pl.col("volume")))


def _median_in_thousands(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    return frame.with_columns(median=pl.when(after).then((pl.col("median") / 1000).round(1))
                              .otherwise(pl.col("median")))


def _row_dropped(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
    first = frame.filter(after).select(period.min()).item()
    return frame.filter(~(after & (period == first)))


def _alternate_months_dropped(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    first = frame.filter(after).select(period.min()).item()
    months = pl.col("year") * 12 + pl.col("month") - (first.year * 12 + first.month)
    return frame.filter(~(after & (months % 2 == 0)))  # the first broken month, the third, ...


def _row_published_twice(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    first = frame.filter(after).select(period.min()).item()
    again = frame.filter(after & (period == first)).with_columns((pl.col(c) * 1.3).round(0) for c in _COUNTS)
    return pl.concat([frame, again])


def _a_period_early(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    """Every column's figure of the next period under this one's label (a feed's dates off by one)."""
    columns = ("sales", "volume", "median", "listings", "inventory")
    ordered = frame.sort("city", "year", "month")
    return ordered.with_columns(pl.when(after).then(pl.col(c).shift(-1).over("city")).otherwise(pl.col(c)).alias(c)
                                for c in columns)


def _median_as_mean(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    mean = (pl.col("volume") / pl.col("sales") / 100).round(0) * 100
    return frame.with_columns(median=pl.when(after).then(mean).otherwise(pl.col("median")))


def _frozen_rows(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
    last = frame.filter(before).sort("year", "month").tail(1)
    columns = ("sales", "volume", "median", "listings", "inventory")
    return frame.with_columns(pl.when(after).then(pl.lit(last[c][0])).otherwise(pl.col(c)).alias(c) for c in columns)


def _throughout(columns: tuple[str, ...], factor: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """The columns in another unit in every row of the entity, before the break too: no break in its own history."""
    scaled = _scaled(columns, factor)
    return lambda frame, after, before: scaled(frame, after | before, before)


def _negative_volume(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
    return frame.with_columns(volume=pl.when(after).then(-pl.col("volume")).otherwise(pl.col("volume")))


CUSTOM: dict[str, Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]] = {
    "whole row x1.5": _scaled(("sales", "volume", "median", "listings", "inventory"), 1.5),
    "whole row x0.6": _scaled(("sales", "volume", "median", "listings", "inventory"), 0.6),
    "counts double-counted x1.25": _scaled(_COUNTS, 1.25),
    "counts double-counted x2": _scaled(_COUNTS, 2.0),
    "year-to-date sales": _ytd_sales,
    "listings clipped at 90%": _clipped_listings,
    "sales jittered 15%": _jittered_sales,
    "inventory over 3 months of sales": _inventory_over_3_months,
    "volume recomputed as sales x median": _volume_as_sales_times_median,
    "median in thousands": _median_in_thousands,
    "the first broken month's row missing": _row_dropped,
    "every other month missing": _alternate_months_dropped,
    "the first broken month published twice, counts x1.3": _row_published_twice,
    "every column a period early": _a_period_early,
    "median replaced by the mean price": _median_as_mean,
    "whole rows frozen": _frozen_rows,
    "whole row x10": _scaled(("sales", "volume", "median", "listings", "inventory"), 10.0),
    "listings in tens in every row": _throughout(("listings",), 0.1),
    "median x1.25 in every row": _throughout(("median",), 1.25),
    "volume written negative": _negative_volume,
}
"""Custom plants: (frame, the entity's broken periods, its periods before) -> the frame with the plant."""
PLANTS = [("level_shift", ("sales",), 1.5), ("level_shift", ("listings",), 0.7), ("level_shift", ("inventory",), 1.25),
          ("level_shift", ("median",), 1.4), ("level_shift", ("volume",), 0.6), ("stuck", ("sales",), 4),
          ("stuck", ("inventory",), 4), ("stuck", ("listings",), 2), ("lagged", ("listings",), 2),
          ("lagged", ("sales", "volume", "median", "listings", "inventory"), 1), ("drift", ("sales",), 1.5),
          ("spike", ("volume",), 2.0), ("spike", ("inventory",), 0.7),
          ("sales_half_reported", ("sales", "volume", "listings"), 0.5), ("level_shift", ("sales",), 3.0),
          ("level_shift", ("listings",), 3.0), ("level_shift", ("inventory",), 0.5),
          ("unit_slip", ("volume",), 1000.0), ("level_shift", ("sales", "volume"), 1.5)]
"""`tests/plants.py` kinds at magnitudes `bench/planted.py` does not use, and a half-reported month (the counts of
one period at half), and gross ones: a scored column x3 or at half, a unit slip of volume."""


def planted_copy(clean: pl.DataFrame, name: str, entity: str, start: date) -> pl.DataFrame:
    mine = pl.col("city") == entity
    if name in CUSTOM:
        return CUSTOM[name](clean, mine & (period >= start), mine & (period < start))
    kind, columns, magnitude = next(p for p in PLANTS if _label(p) == name)
    if kind == "sales_half_reported":
        return _scaled(columns, magnitude)(clean, mine & (period == start), mine & (period < start))
    return plant(clean, Plant(kind, entity, columns, start, magnitude), keep_precision=True)


def _label(p: tuple[str, tuple[str, ...], float]) -> str:
    return f"{p[0]} x{p[2]:g} in {'+'.join(p[1])}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--period", choices=("design", "held-out"), default="design")
    parser.add_argument("--markets", type=int, default=4)
    args = parser.parse_args()
    pack = load_criteria(DEFAULT_PACK)
    clean = read_source(str(pack.source_path))
    picks = targets(pack, DESIGN if args.period == "design" else HELD_OUT, args.markets)
    print(f"markets: {', '.join(f'{e} from {m:%Y-%m}' for e, m in picks)}")
    started, total, reached = time.perf_counter(), 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "planted.csv"
        for name in [*CUSTOM, *(_label(p) for p in PLANTS)]:
            for entity, start in picks:
                write_source(planted_copy(clean, name, entity, start), str(path))
                planted = with_source(pack, path)
                first = first_night_seeing(start, pack.source.publication_lag_days)
                for k in AFTER:
                    as_of = nights_between(MONTH.back(first, -k), MONTH.back(first, -k - 1), "month-end")[0]
                    fate = night_fates(planted, as_of, {candidate_id(entity)}).get(candidate_id(entity))
                    if fate is None:
                        continue
                    total += 1
                    if fate.section == "act_on_these":
                        reached += 1
                        print(f"  reached act-on: {name} of {entity} from {start:%Y-%m} on {as_of}", flush=True)
    print(f"{reached} of {total} planted market-nights reached act_on_these ({args.period}; "
          f"{time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
