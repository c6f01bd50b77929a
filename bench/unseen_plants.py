"""Defect kinds `bench/planted.py` does not plant, at moderate magnitudes: does any reach "Act on these"?

    .venv/bin/python bench/unseen_plants.py [--period design|held-out] [--markets 4]

A probe of the skeptic's reach beyond the classes it was measured on: whole rows scaled, counts double-counted,
year-to-date sales in place of monthly, a column clipped, a noisy column, a derived column computed differently
(months of inventory over 3 months of sales; volume as sales x median; the median as the mean price), the median in
thousands, a column in another unit in every row (no break in its own history), volume written negative, a
half-reported month, rows missing, published twice, a period early or frozen whole, and shifts, unit
slips, stuck, lagged, drifting and spiking columns at magnitudes the bench does not use, subtle to gross. And
(`NEW`, `--kinds new`; each at a moderate and a gross magnitude): a decimal point shifted in only some rows, a
column rounded to a coarse grid, a missing figure written as 0 for one month, a column copied from another of the
entity's, a switch to seasonally adjusted figures, a running total in a non-sales column, values capped at a
ceiling, two months' values swapped in time, the whole history a neighbour's (scaled), a sign flipped, a month
double-counted then corrected, a drift of listings and inventory together by 3% or 8% a month, revised rows
published beside the first ones, a row's fields shifted a column, moving averages in place of the month's
figure, a thousands separator read as a decimal point, a field too narrow for the figure. And (`NEWER`, `--kinds
newer`; most at a moderate and a gross magnitude): defects upstream of months of inventory that the publisher
recomputed from the broken counts (its exact identity holds): two markets merged or a sub-area split off, flows cut
off early or over a 5-week month, sales by contract date (1 or 3 months early), a nowcast from last year's month
(x1.1, x2) or the whole row a year old (counts x1.02), sales carried forward +1% or +5% a month, listings a nowcast
(last value +-1%, +-5%), a 4- or 12-month outage interpolated, sales imputed as a seasonal or a 12-month mean, a
4-4-5 or 4-5-4 week calendar, a history restated (the 2 years before x0.9, x0.6), sales imputed from a donor
market's changes, listings as new listings (x0.3); and money columns in a drifting currency (2%, 6% a month), sales
rounded to fives or 25s and the median in $2,500 or $25,000 brackets (grids that are no power of ten), months of
inventory over 6 months of sales or in weeks, the median as its year-over-year % change, volume as its log, months
of inventory inverted, sales and listings swapped. Each is planted into a
copy of the Texas source for markets in "Act on these" on clean data (`planted.targets`), and the nights 0, 1, 3
and 6 months after the first that sees the break run through the same scan, analyze, verify and route code the
assets call; a night whose published rows of the market are still the clean ones (a cap that has not bound yet) is
not counted. Prints each planted market-night that reached act-on and the count. Design on the design period; the
held-out period is reported, never tuned on.

    .venv/bin/python bench/unseen_plants.py --period design --kinds new        # only the kinds of `NEW`
    .venv/bin/python bench/unseen_plants.py --period design --kinds newer      # only the kinds of `NEWER`
    .venv/bin/python bench/unseen_plants.py --kinds "rounded" "moving average"  # names containing either
"""

from __future__ import annotations

import argparse
import math
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
_COLUMNS = ("sales", "volume", "median", "listings", "inventory")


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


# ---- more kinds real feeds have (issue 11, skeptic22): each at a moderate and a gross magnitude -------------------
def _first(frame: pl.DataFrame, after: pl.Expr) -> date:
    """The entity's first broken period."""
    return frame.filter(after).select(period.min()).item()


def _round_as(column: str, value: pl.Expr) -> pl.Expr:
    """`value` written as the file writes the column: volume in thousands, inventory in tenths, else whole."""
    return (value / 1000).round(0) * 1000 if column == "volume" else value.round(1 if column == "inventory" else 0)


def _months_since(first: date) -> pl.Expr:
    return pl.col("year") * 12 + pl.col("month") - (first.year * 12 + first.month)


def _every_kth_row(column: str, factor: float, k: int) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """A decimal point shifted in only some rows (the first broken month, then every `k`-th): mixed units in a run."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        hit = after & (_months_since(_first(frame, after)) % k == 0)
        return frame.with_columns(pl.when(hit).then((pl.col(column) * factor).round(1 if column == "inventory" else 0))
                                  .otherwise(pl.col(column)).alias(column))
    return apply


def _rounded(column: str, step: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Precision lost: the column rounded to a coarse grid from the break on."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        coarse = (pl.col(column) / step).round(0) * step
        return frame.with_columns(pl.when(after).then(coarse).otherwise(pl.col(column)).alias(column))
    return apply


def _zero_one_month(column: str) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """A missing figure written as 0 in one column for the first broken month only."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        hit = after & (period == _first(frame, after))
        return frame.with_columns(pl.when(hit).then(0.0).otherwise(pl.col(column)).alias(column))
    return apply


def _copied_column(into: str, source: str, months: int | None) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr],
                                                                           pl.DataFrame]:
    """A column carrying another column of the same entity (listings = sales) for `months` (None: from the break on)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        hit = after if months is None else after & (_months_since(_first(frame, after)) < months)
        return frame.with_columns(pl.when(hit).then(pl.col(source)).otherwise(pl.col(into)).alias(into))
    return apply


def _seasonally_adjusted(power: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """The feed switches to seasonally adjusted sales and volume: each month divided by its calendar month's factor
    (its mean over the entity's years before the break against their overall mean), to the `power` (1: fully)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        past = frame.filter(before)
        factors = (past.group_by("month").agg(pl.col("sales").mean().alias("f"))
                   .with_columns(pl.col("f") / pl.col("f").mean()))
        out = frame.join(factors, on="month", how="left")
        adjust = pl.col("f") ** power
        return out.with_columns(pl.when(after).then(_round_as(c, pl.col(c) / adjust))
                                .otherwise(pl.col(c)).alias(c) for c in ("sales", "volume")).drop("f")
    return apply


def _running_total(column: str, year_to_date: bool) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """A non-sales column written as a running total: year to date, or since the month before the break."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        first = _first(frame, after)
        ordered = frame.sort("city", "year", "month")
        if year_to_date:
            total = pl.col(column).cum_sum().over(["city", "year"], order_by="month")
        else:
            since = pl.when(_months_since(first) >= -1).then(pl.col(column)).otherwise(0.0)
            total = since.cum_sum().over("city", order_by=["year", "month"])
        return ordered.with_columns(pl.when(after).then(total).otherwise(pl.col(column)).alias(column))
    return apply


def _capped(column: str, share: float | None) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Values capped at a ceiling from the break on: `share` of the largest of the two years before, or (None) a
    field too narrow for the figure, capped at the largest number of one digit fewer (999 for 1,500)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        past = frame.filter(before).sort("year", "month")[column].drop_nulls()
        if share is not None:
            cap = round(share * float(past.tail(24).max()))  # type: ignore[arg-type]
        else:
            cap = 10 ** math.floor(math.log10(float(past[-1]))) - 1
        return frame.with_columns(pl.when(after).then(pl.min_horizontal(column, pl.lit(float(cap))))
                                  .otherwise(pl.col(column)).alias(column))
    return apply


def _swapped_in_time(columns: tuple[str, ...], apart: int) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr],
                                                                        pl.DataFrame]:
    """The first broken month's values and those of `apart` months before it swapped (rows misdated)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        months = _months_since(_first(frame, after))
        entity = pl.col("city") == frame.filter(after)["city"][0]
        ordered = frame.sort("city", "year", "month")
        return ordered.with_columns(
            pl.when(entity & (months == 0)).then(pl.col(c).shift(apart).over("city"))
            .when(entity & (months == -apart)).then(pl.col(c).shift(-apart).over("city"))
            .otherwise(pl.col(c)).alias(c) for c in columns)
    return apply


def _neighbour_scaled(factor: float, factors: dict[str, float] | None = None
                      ) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Every row of the entity, from its first, another entity's (the next in sorted order), its counts x`factor`
    (months of inventory and the median, ratios of counts and prices, are that entity's as they are); or each
    column by its own of `factors`, months of inventory recomputed from the scaled listings and sales."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        me = frame.filter(after)["city"][0]
        names = sorted(frame["city"].unique().to_list())
        other = names[(names.index(me) + 1) % len(names)]
        scale = factors or dict.fromkeys(_COUNTS, factor)
        theirs = frame.filter(pl.col("city") == other).with_columns(
            _round_as(c, pl.col(c) * f) for c, f in scale.items()).with_columns(city=pl.lit(me))
        if factors is not None:
            theirs = _recompute_inventory(theirs, pl.lit(True))
        return pl.concat([frame.filter(pl.col("city") != me), theirs.select(frame.columns)])
    return apply


def _sign_flipped(column: str, months: int | None) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        hit = after if months is None else after & (_months_since(_first(frame, after)) < months)
        return frame.with_columns(pl.when(hit).then(-pl.col(column)).otherwise(pl.col(column)).alias(column))
    return apply


def _recompute_inventory(frame: pl.DataFrame, after: pl.Expr) -> pl.DataFrame:
    """Months of inventory as the publisher computes it (listings / 12-month average sales, in tenths), from the
    break on: a defect upstream of it shows in it as the publisher's own figure would."""
    ordered = frame.sort("city", "year", "month")
    average = pl.col("sales").rolling_mean(12).over("city", order_by=["year", "month"])
    return ordered.with_columns(inventory=pl.when(after).then((pl.col("listings") / average).round(1))
                                .otherwise(pl.col("inventory")))


def _double_counted_then_corrected(factor: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """One month's sales and volume counted `factor` times, the next month's written net of the excess (a
    correction), months of inventory recomputed from them."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        months = _months_since(_first(frame, after))
        ordered = frame.sort("city", "year", "month")
        fixed = ordered.with_columns(
            pl.when(after & (months == 0)).then((pl.col(c) * factor).round(0))
            .when(after & (months == 1)).then(pl.max_horizontal(
                pl.col(c) - (pl.col(c).shift(1).over("city") * (factor - 1)).round(0), pl.lit(0.0)))
            .otherwise(pl.col(c)).alias(c) for c in ("sales", "volume"))
        return _recompute_inventory(fixed, after)
    return apply


def _drift_per_month(columns: tuple[str, ...], rate: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr],
                                                                         pl.DataFrame]:
    """The columns drifting by `rate` a month, compounding, for a year from the break (then staying off)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        months = pl.min_horizontal(_months_since(_first(frame, after)) + 1, pl.lit(12))
        return frame.with_columns(pl.when(after).then((pl.col(c) * (1 + rate) ** months)
                                                      .round(1 if c == "inventory" else 0))
                                  .otherwise(pl.col(c)).alias(c) for c in columns)
    return apply


def _revised_twice(months: int, factor: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """The latest `months` rows before and at the break each published again with revised counts (x`factor`) and
    no publication date: two rows for one month."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        months_since = _months_since(_first(frame, after))
        entity = pl.col("city") == frame.filter(after)["city"][0]
        again = frame.filter(entity & (months_since <= 0) & (months_since > -months)).with_columns(
            (pl.col(c) * factor).round(0) for c in _COUNTS)
        return pl.concat([frame, again])
    return apply


def _fields_shifted(months: int | None) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """A field missing from the row: every value one column to the right (sales empty, volume holds the sales ...)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        hit = after if months is None else after & (_months_since(_first(frame, after)) < months)
        columns = ("sales", "volume", "median", "listings", "inventory")
        shifted = [pl.lit(None, dtype=pl.Float64), *(pl.col(c) for c in columns[:-1])]
        return frame.with_columns(pl.when(hit).then(new).otherwise(pl.col(c)).alias(c)
                                  for c, new in zip(columns, shifted, strict=True))
    return apply


def _moving_average(column: str, months: int) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """The feed publishes the column's `months`-month moving average in place of the month's figure (smoothed)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        ordered = frame.sort("city", "year", "month")
        average = pl.col(column).rolling_mean(months).over("city", order_by=["year", "month"])
        return ordered.with_columns(pl.when(after).then(_round_as(column, average)).otherwise(pl.col(column))
                                    .alias(column))
    return apply


def _separator_misread(column: str) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """A thousands separator read as a decimal point ("1,082" as 1.082): values of 1,000 or more divided by 1,000,
    smaller ones right (mixed units where the column crosses 1,000)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        return frame.with_columns(pl.when(after & (pl.col(column) >= 1000)).then(pl.col(column) / 1000)
                                  .otherwise(pl.col(column)).alias(column))
    return apply


def _leading_digits_lost(column: str, digits: int) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """A field too narrow: only the column's last `digits` digits are written (1,082 as 82 at 2 digits)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        return frame.with_columns(pl.when(after).then(pl.col(column) % 10 ** digits).otherwise(pl.col(column))
                                  .alias(column))
    return apply


NEW: dict[str, Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]] = {
    "median /10 in every third row": _every_kth_row("median", 0.1, 3),
    "sales x10 in every other row": _every_kth_row("sales", 10.0, 2),
    "sales rounded to tens": _rounded("sales", 10.0),
    "sales rounded to hundreds": _rounded("sales", 100.0),
    "volume 0 for one month": _zero_one_month("volume"),
    "sales 0 for one month": _zero_one_month("sales"),
    "listings = sales for one month": _copied_column("listings", "sales", 1),
    "listings = sales from the break on": _copied_column("listings", "sales", None),
    "sales and volume half seasonally adjusted": _seasonally_adjusted(0.5),
    "sales and volume seasonally adjusted": _seasonally_adjusted(1.0),
    "volume year-to-date": _running_total("volume", True),
    "listings a running total": _running_total("listings", False),
    "sales capped at 90% of their 2-year high": _capped("sales", 0.9),
    "listings capped at 10^k - 1": _capped("listings", None),
    "sales swapped with the month before": _swapped_in_time(("sales",), 1),
    "whole row swapped with 6 months before": _swapped_in_time(("sales", "volume", "median", "listings",
                                                                "inventory"), 6),
    "whole history a neighbour's, counts x0.8": _neighbour_scaled(0.8),
    "whole history a neighbour's": _neighbour_scaled(1.0),
    "whole history a neighbour's, each column scaled apart": _neighbour_scaled(1.0, {
        "sales": 0.7, "volume": 0.77, "median": 1.1, "listings": 0.8}),
    "median sign flipped for one month": _sign_flipped("median", 1),
    "sales sign flipped": _sign_flipped("sales", None),
    "sales double-counted x1.3 once, then corrected": _double_counted_then_corrected(1.3),
    "sales double-counted x2 once, then corrected": _double_counted_then_corrected(2.0),
    "listings and inventory drift -3% a month": _drift_per_month(("listings", "inventory"), -0.03),
    "listings and inventory drift -8% a month": _drift_per_month(("listings", "inventory"), -0.08),
    "the break month revised x1.03, published twice": _revised_twice(1, 1.03),
    "3 months revised x1.2, published twice": _revised_twice(3, 1.2),
    "one row's fields shifted a column right": _fields_shifted(1),
    "fields shifted a column right from the break": _fields_shifted(None),
    "sales as a 3-month moving average": _moving_average("sales", 3),
    "sales as a 12-month moving average": _moving_average("sales", 12),
    "listings with a thousands separator read as a decimal point": _separator_misread("listings"),
    "sales with a thousands separator read as a decimal point": _separator_misread("sales"),
    "listings' last 3 digits only": _leading_digits_lost("listings", 3),
    "sales' last 2 digits only": _leading_digits_lost("sales", 2),
}
"""Kinds neither bench planted before, each at a moderate magnitude and a gross one (`--kinds new` runs these)."""
CUSTOM.update(NEW)


# ---- still more kinds real feeds have (issue 11, probe23): corruption the publisher carried into its own months of
# inventory (recomputed from the broken counts: the exact identity holds), imputation, definitions, calendars -------
def _with_inventory(plant_: Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame], *, before_break: int = 0
                    ) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """`plant_`, then months of inventory recomputed by the publisher from the broken columns, from the break on (and
    in the entity's `before_break` months before it: a restated history)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        since = before & (_months_since(_first(frame, after)) >= -before_break)
        return _recompute_inventory(plant_(frame, after, before), after | since)
    return apply


def _neighbour(frame: pl.DataFrame, after: pl.Expr, step: int = 1) -> str:
    me = frame.filter(after)["city"][0]
    names = sorted(frame["city"].unique().to_list())
    return names[(names.index(me) + step) % len(names)]


def _merged(share: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Two markets merged from the break: the next market's counts added (scaled so its 12 months of sales before the
    break are `share` of this one's), the median the sales-weighted mean of the two, months of inventory recomputed."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        other = _neighbour(frame, after)
        first = _first(frame, after)
        last_year = (_months_since(first) < 0) & (_months_since(first) >= -12)
        mine = float(frame.filter(before & last_year)["sales"].sum())
        theirs_sales = float(frame.filter((pl.col("city") == other) & last_year)["sales"].sum())
        k = share * mine / theirs_sales
        theirs = frame.filter(pl.col("city") == other).select(
            "year", "month", *(pl.col(c).fill_null(0.0).alias(f"__{c}") for c in ("sales", "volume", "median",
                                                                                   "listings")))
        out = frame.join(theirs, on=["year", "month"], how="left")
        weight = pl.col("__sales") * k
        merged = {
            "sales": (pl.col("sales") + weight).round(0),
            "volume": _round_as("volume", pl.col("volume") + pl.col("__volume") * k),
            "median": ((pl.col("median") * pl.col("sales") + pl.col("__median") * weight)
                       / (pl.col("sales") + weight) / 100).round(0) * 100,
            "listings": (pl.col("listings") + pl.col("__listings") * k).round(0)}
        out = out.with_columns(pl.when(after).then(v).otherwise(pl.col(c)).alias(c) for c, v in merged.items())
        return _recompute_inventory(out.drop(f"__{c}" for c in ("sales", "volume", "median", "listings")), after)
    return apply


def _flows_cut(factor: float, columns: tuple[str, ...] = ("sales", "volume")
               ) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """The columns x`factor` from the break (a month's flows cut off early, a sub-area split off), months of
    inventory recomputed from them."""
    return _with_inventory(_scaled(columns, factor))


def _early(columns: tuple[str, ...], months: int) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """The columns by contract date, not closing date, from the break: each month's figure `months` later's (pending
    sales reported as sales), months of inventory recomputed from them."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        ordered = frame.sort("city", "year", "month")
        return ordered.with_columns(pl.when(after).then(pl.col(c).shift(-months).over("city")).otherwise(pl.col(c))
                                    .alias(c) for c in columns)
    return _with_inventory(apply)


def _written(column: str, value: pl.Expr) -> pl.Expr:
    """`_round_as`, the median in hundreds as the file writes it."""
    return (value / 100).round(0) * 100 if column == "median" else _round_as(column, value)


def _a_year_old(columns: tuple[str, ...], factor: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """A nowcast from last year: the columns' same month a year earlier from the break, the counts among them
    x`factor` (no row repeats), months of inventory recomputed from them (or, one of the columns, a year old too)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        ordered = frame.sort("city", "year", "month")
        return ordered.with_columns(pl.when(after).then(_written(c, pl.col(c).shift(12).over("city")
                                                                 * (factor if c in _COUNTS else 1.0)))
                                    .otherwise(pl.col(c)).alias(c) for c in columns)
    return apply if "inventory" in columns else _with_inventory(apply)


def _carried_forward(column: str, rate: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """A delayed feed nowcast: the column's last value before the break, grown by `rate` a month, compounding (no
    month repeats), months of inventory recomputed from it."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        last = float(frame.filter(before).sort("year", "month")[column].drop_nulls()[-1])
        grown = pl.lit(last) * (1 + rate) ** (_months_since(_first(frame, after)) + 1)
        return frame.with_columns(pl.when(after).then(_round_as(column, grown)).otherwise(pl.col(column)).alias(column))
    return _with_inventory(apply)


def _per_month(frame: pl.DataFrame, after: pl.Expr, factors: np.ndarray) -> pl.DataFrame:
    """The frame with `__f`: `factors[k]` in the entity's k-th broken month (1 elsewhere)."""
    first = _first(frame, after)
    table = pl.DataFrame({"__k": list(range(len(factors))), "__f": factors.astype(float)})
    out = frame.with_columns(__k=pl.when(after).then(_months_since(first)).otherwise(-1))
    return out.join(table, on="__k", how="left").with_columns(pl.col("__f").fill_null(1.0)).drop("__k")


def _nowcast(column: str, noise: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """The column a nowcast from the break: its last value before it, plus noise (`noise` relative SD, seeded) so
    that no month repeats; months of inventory recomputed from it."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        last = float(frame.filter(before).sort("year", "month")[column].drop_nulls()[-1])
        out = _per_month(frame, after, 1 + np.random.default_rng(23).normal(0, noise, 240))
        return out.with_columns(pl.when(after).then(_round_as(column, pl.lit(last) * pl.col("__f")))
                                .otherwise(pl.col(column)).alias(column)).drop("__f")
    return _with_inventory(apply)


def _interpolated(months: int) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """An outage of `months` months back-filled by linear interpolation between the real values either side, in
    sales, volume, median and listings, written at each column's precision; months of inventory recomputed."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        ordered = frame.sort("city", "year", "month")
        k = _months_since(_first(ordered, after))
        hit = after & (k < months)
        out = ordered
        for c in ("sales", "volume", "median", "listings"):
            start = pl.col(c).shift(1).over("city")  # the month before, carried along the gap below
            end = pl.col(c).shift(-(months)).over("city")
            left = ordered.with_columns(s=start, e=end).filter(after & (k == 0))
            a, b = float(left["s"][0]), float(left["e"][0])
            value = pl.lit(a) + (b - a) * (k + 1) / (months + 1)
            out = out.with_columns(pl.when(hit).then(_written(c, value))
                                   .otherwise(pl.col(c)).alias(c))
        return out
    return _with_inventory(apply)


def _seasonal_mean(years: int | None) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Sales (and volume) imputed from the break: the mean of the same calendar month over the entity's `years`
    years before it (None: the mean of its 12 months before, one value for every month), months of inventory
    recomputed."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        first = _first(frame, after)
        if years is None:
            past = frame.filter(before & (_months_since(first) >= -12))
            means = pl.DataFrame({"month": list(range(1, 13))}).with_columns(
                __s=pl.lit(past.select(pl.col("sales").mean()).item()),
                __v=pl.lit(past.select(pl.col("volume").mean()).item()))
        else:
            past = frame.filter(before & (_months_since(first) >= -12 * years))
            means = past.group_by("month").agg(pl.col("sales").mean().alias("__s"), pl.col("volume").mean()
                                               .alias("__v"))
        out = frame.join(means, on="month", how="left")
        return out.with_columns(pl.when(after).then(_round_as("sales", pl.col("__s"))).otherwise(pl.col("sales"))
                                .alias("sales"),
                                pl.when(after).then(_round_as("volume", pl.col("__v"))).otherwise(pl.col("volume"))
                                .alias("volume")).drop("__s", "__v")
    return _with_inventory(apply)


def _week_calendar(weeks: tuple[int, int, int]) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Sales and volume counted over a 4-4-5 week retail calendar from the break: each month of a quarter x its
    weeks over 13/3, months of inventory recomputed."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        share = pl.Series([w * 3 / sum(weeks) for w in weeks])
        factor = pl.lit(share).gather((pl.col("month") - 1) % 3)
        return frame.with_columns(pl.when(after).then(_round_as(c, pl.col(c) * factor)).otherwise(pl.col(c)).alias(c)
                                  for c in ("sales", "volume"))
    return _with_inventory(apply)


def _currency_walk(sd: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """The money columns (median, volume) converted at a rate walking at random (`sd` a month, seeded) from the break:
    volume / (sales x median) holds, each column moves a little more than it did."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        walk = np.exp(np.cumsum(np.random.default_rng(11).normal(0, sd, 240)))
        out = _per_month(frame, after, walk)
        return out.with_columns(pl.when(after).then(_written("median", pl.col("median") * pl.col("__f")))
                                .otherwise(pl.col("median")).alias("median"),
                                pl.when(after).then(_round_as("volume", pl.col("volume") * pl.col("__f")))
                                .otherwise(pl.col("volume")).alias("volume")).drop("__f")
    return apply


def _restated(factor: float, months: int) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """History restated at the break: sales and volume of the `months` months before it x`factor` (a methodology
    applied backwards only), months of inventory recomputed in every row. The break month itself is as it was."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        hit = before & (_months_since(_first(frame, after)) >= -months)
        return frame.with_columns(pl.when(hit).then(_round_as(c, pl.col(c) * factor)).otherwise(pl.col(c)).alias(c)
                                  for c in ("sales", "volume"))
    return _with_inventory(apply, before_break=months)


def _donor_imputed(step: int) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Sales, volume and listings imputed from the break by a donor market's changes (the `step`-th next market's
    figure over its own of the month before the break, times this one's then), months of inventory recomputed."""
    def apply(frame: pl.DataFrame, after: pl.Expr, before: pl.Expr) -> pl.DataFrame:
        columns = ("sales", "volume", "listings")
        mine = frame.filter(before).sort("year", "month").tail(1)
        for k in range(step, step + frame["city"].n_unique()):  # the first donor from `step` on with the month
            donor = frame.filter(pl.col("city") == _neighbour(frame, after, k))
            base = donor.filter((pl.col("year") == mine["year"][0]) & (pl.col("month") == mine["month"][0]))
            if base.height and all(base[c][0] for c in columns):
                break
        theirs = donor.select("year", "month", *(pl.col(c).alias(f"__{c}") for c in columns))
        out = frame.join(theirs, on=["year", "month"], how="left")
        return out.with_columns(pl.when(after).then(_round_as(c, pl.col(f"__{c}") / float(base[c][0])
                                                              * float(mine[c][0])))
                                .otherwise(pl.col(c)).alias(c) for c in columns).drop(f"__{c}" for c in columns)
    return _with_inventory(apply)


def _replaced(column: str, value: Callable[[pl.Expr], pl.Expr]) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr],
                                                                           pl.DataFrame]:
    """The column replaced from the break by a transform of itself (its year-over-year % change, its log, ...)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        ordered = frame.sort("city", "year", "month")
        return ordered.with_columns(pl.when(after).then(value(pl.col(column))).otherwise(pl.col(column)).alias(column))
    return apply


def _inventory_over(months: int, unit: float) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Months of inventory computed another way from the break: listings over `months` months' average sales, in
    units `unit` times a month (weeks: 52/12)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        ordered = frame.sort("city", "year", "month")
        average = pl.col("sales").rolling_mean(months).over("city", order_by=["year", "month"])
        return ordered.with_columns(inventory=pl.when(after).then((pl.col("listings") / average * unit).round(1))
                                    .otherwise(pl.col("inventory")))
    return apply


def _swapped_columns(first: str, second: str) -> Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]:
    """Two columns' labels swapped from the break (months of inventory as published)."""
    def apply(frame: pl.DataFrame, after: pl.Expr, _: pl.Expr) -> pl.DataFrame:
        return frame.with_columns(pl.when(after).then(pl.col(second)).otherwise(pl.col(first)).alias(first),
                                  pl.when(after).then(pl.col(first)).otherwise(pl.col(second)).alias(second))
    return apply




NEWER: dict[str, Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]] = {
    "merged with a neighbour 0.2 its size, inventory recomputed": _merged(0.2),
    "merged with a neighbour its size, inventory recomputed": _merged(1.0),
    "a sub-area split off, counts x0.85, inventory recomputed": _flows_cut(0.85, _COUNTS),
    "a sub-area split off, counts x0.5, inventory recomputed": _flows_cut(0.5, _COUNTS),
    "flows cut off at day 24 (x0.8), inventory recomputed": _flows_cut(0.8),
    "flows over a 5-week month (x1.25), inventory recomputed": _flows_cut(1.25),
    "sales and volume by contract date (1 month early), inventory recomputed": _early(("sales", "volume"), 1),
    "sales and volume by contract date (3 months early), inventory recomputed": _early(("sales", "volume"), 3),
    "sales and volume a year old x1.1 (nowcast), inventory recomputed": _a_year_old(("sales", "volume"), 1.1),
    "sales and volume a year old x2 (nowcast), inventory recomputed": _a_year_old(("sales", "volume"), 2.0),
    "whole row a year old, counts x1.02": _a_year_old(_COLUMNS, 1.02),
    "sales carried forward +1% a month, inventory recomputed": _carried_forward("sales", 0.01),
    "sales carried forward +5% a month, inventory recomputed": _carried_forward("sales", 0.05),
    "listings a nowcast (last value +-1%), inventory recomputed": _nowcast("listings", 0.01),
    "listings a nowcast (last value +-5%), inventory recomputed": _nowcast("listings", 0.05),
    "a 4-month outage interpolated, inventory recomputed": _interpolated(4),
    "a 12-month outage interpolated, inventory recomputed": _interpolated(12),
    "sales imputed as the calendar month's 3-year mean, inventory recomputed": _seasonal_mean(3),
    "sales imputed as the 12-month mean, inventory recomputed": _seasonal_mean(None),
    "sales on a 4-4-5 week calendar, inventory recomputed": _week_calendar((4, 4, 5)),
    "sales on a 4-5-4 week calendar, inventory recomputed": _week_calendar((4, 5, 4)),
    "median and volume in a currency walking 2% a month": _currency_walk(0.02),
    "median and volume in a currency walking 6% a month": _currency_walk(0.06),
    "sales rounded to fives": _rounded("sales", 5.0),
    "sales rounded to 25s": _rounded("sales", 25.0),
    "median in $2,500 brackets": _rounded("median", 2500.0),
    "median in $25,000 brackets": _rounded("median", 25000.0),
    "the 2 years before restated, sales x0.9, inventory recomputed": _restated(0.9, 24),
    "the 2 years before restated, sales x0.6, inventory recomputed": _restated(0.6, 24),
    "sales, volume, listings imputed from a neighbour's changes, inventory recomputed": _donor_imputed(1),
    "sales, volume, listings imputed from a far market's changes, inventory recomputed": _donor_imputed(7),
    "listings as new listings (x0.3), inventory recomputed": _flows_cut(0.3, ("listings",)),
    "inventory over 6 months of sales": _inventory_over(6, 1.0),
    "inventory in weeks": _inventory_over(12, 52 / 12),
    "median as its year-over-year % change": _replaced("median", lambda c: ((c / c.shift(12).over("city") - 1)
                                                                             * 100).round(1)),
    "volume as its natural log": _replaced("volume", lambda c: c.log().round(2)),
    "inventory inverted (sales per 100 listings)": _replaced(
        "inventory", lambda c: (pl.col("sales").rolling_mean(12).over("city") / pl.col("listings") * 100).round(1)),
    "sales and listings swapped": _swapped_columns("sales", "listings"),
}
"""Kinds none of the above covers (`--kinds newer`), most at a moderate and a gross magnitude: corruption upstream of
months of inventory that the publisher recomputed (its exact identity holds), markets merged or split, imputation
(nowcasts, interpolation, means, a donor's changes), another calendar or currency, coarser non-decimal grids, a
restated history, definitions changed (contract date, new listings, inventory in weeks), transformed columns."""
CUSTOM.update(NEWER)
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


def first_difference(clean: pl.DataFrame, planted: pl.DataFrame, entity: str) -> date | None:
    """The entity's earliest period whose rows differ between the two frames (a value, a row added or missing); None
    where none does (a cap that never binds, a running total's first month: no defect published yet)."""
    def rows(frame: pl.DataFrame) -> dict[date, list[tuple]]:
        out: dict[date, list[tuple]] = {}
        for row in frame.filter(pl.col("city") == entity).iter_rows(named=True):
            out.setdefault(date(row["year"], row["month"], 1), []).append(tuple(
                None if row[c] is None else float(row[c]) for c in _COLUMNS))
        return {k: sorted(v, key=repr) for k, v in out.items()}
    before, after = rows(clean), rows(planted)
    return min((p for p in before.keys() | after.keys() if before.get(p) != after.get(p)), default=None)


def _label(p: tuple[str, tuple[str, ...], float]) -> str:
    return f"{p[0]} x{p[2]:g} in {'+'.join(p[1])}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--period", choices=("design", "held-out"), default="design")
    parser.add_argument("--markets", type=int, default=4)
    parser.add_argument("--kinds", nargs="*", default=[],
                        help="only kinds whose name contains one of these (`new`, `newer`: the kinds of issue 11)")
    args = parser.parse_args()
    pack = load_criteria(DEFAULT_PACK)
    clean = read_source(str(pack.source_path))
    picks = targets(pack, DESIGN if args.period == "design" else HELD_OUT, args.markets)
    print(f"markets: {', '.join(f'{e} from {m:%Y-%m}' for e, m in picks)}")
    started, total, reached, unbroken = time.perf_counter(), 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "planted.csv"
        names = [*CUSTOM, *(_label(p) for p in PLANTS)]
        if args.kinds:
            groups = {"new": NEW, "newer": NEWER}
            names = [n for n in names if any(n in groups[k] if k in groups else k in n for k in args.kinds)]
        for name in names:
            for entity, start in picks:
                broken = planted_copy(clean, name, entity, start)
                write_source(broken, str(path))
                planted = with_source(pack, path)
                first = first_night_seeing(start, pack.source.publication_lag_days)
                differs = first_difference(clean, broken, entity)
                for k in AFTER:
                    as_of = nights_between(MONTH.back(first, -k), MONTH.back(first, -k - 1), "month-end")[0]
                    if differs is None or as_of < first_night_seeing(differs, pack.source.publication_lag_days):
                        unbroken += 1  # the published rows are the clean ones yet: no defect to catch
                        continue
                    fate = night_fates(planted, as_of, {candidate_id(entity)}).get(candidate_id(entity))
                    if fate is None:
                        continue
                    total += 1
                    if fate.section == "act_on_these":
                        reached += 1
                        print(f"  reached act-on: {name} of {entity} from {start:%Y-%m} on {as_of}", flush=True)
    print(f"{reached} of {total} planted market-nights reached act_on_these ({args.period}; "
          f"{time.perf_counter() - started:.0f} s; {unbroken} nights not counted: their published rows were clean)")


if __name__ == "__main__":
    main()
