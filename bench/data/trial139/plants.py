"""Trial 139: 11 defect kinds no skeptic trial planted (none of `bench/planted.py`'s classes, none of
`bench/unseen_plants.py`'s CUSTOM, NEW or NEWER kinds), subtle and GROSS, into copies of the bundled Texas source for
4 design-period act-on markets (`planted.targets(pack, DESIGN, 6)`: Corpus Christi 2002-12, Abilene 2004-02, Amarillo
2005-04, Austin 2006-06), each broken from its act-on night's latest month; nights 0, 1, 3 and 6 months after the
first that sees the break (all <= 2009-12-31: the held-out period is never read), through the same scan, analyze,
verify and route code the assets call (`planted.plant_night`). A night whose published rows of the market are still
the clean ones is not counted; a plant that changes no row of the market is a no-op.

The kinds: a market's rows relabelled from a look-alike market (that one stopping), alone or beside its own (two
series under one name); a month published twice, the copy carrying another month's figures; a row where only sales
was updated (the rest last month's); flows shifted by a quarter / half a month (a calendar cut-off moved), inventory
recomputed; a long number truncated (volume floored to 4 significant figures; listings of 4+ digits losing their last
digit, inventory recomputed from them); months of inventory alone seasonally adjusted; the latest month published as
a 3-month average, revised the next month (vintage: a file per night); the latest month's listings undercounted at
first release, inventory recomputed, revised the next month (vintage); inventory computed from a stale listings
snapshot (1 / 6 months old) beside current listings; inventory floored, not rounded (to 0.5 / whole months); a
feed-wide definitional change (every market's sales and volume x1.1 / x1.3 from the break, inventory recomputed).

Prints every plant-night reaching act-on and the table per kind x magnitude (with and without the checks' effects,
the rules that fired on the others); writes /tmp/t139/misses.json and /tmp/t139/plants.json.

    PYTHONPATH=. .venv/bin/python bench/data/trial139/plants.py [KIND ...]
"""
from __future__ import annotations

import json
import math
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import date
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import first_night_seeing, plant_night, print_tally, with_source  # noqa: E402
from bench.unseen_plants import _recompute_inventory, _round_as, first_difference, period  # noqa: E402
from opportunity_assets.candidates.logic import candidate_id  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402
from opportunity_assets.night import nights_between  # noqa: E402
from opportunity_assets.periods import MONTH  # noqa: E402
from opportunity_assets.sources.snapshot import read_snapshot  # noqa: E402
from resources.criteria import DEFAULT_PACK  # noqa: E402
from tests.plants import read_source, write_source  # noqa: E402

PACK = load_criteria(DEFAULT_PACK)
CLEAN = read_source(str(PACK.source_path))
PICKS = [("Corpus Christi", date(2002, 12, 1)), ("Abilene", date(2004, 2, 1)), ("Amarillo", date(2005, 4, 1)),
         ("Austin", date(2006, 6, 1))]
"""`planted.targets(PACK, DESIGN, 6)`: act-on on clean data on the night whose latest month is the break."""
AFTER = (0, 1, 3, 6)
LAST_NIGHT = date(2009, 12, 31)
Plant = Callable[[pl.DataFrame, str, date, date], pl.DataFrame]
"""(clean frame, entity, break month, the night's latest published month) -> the planted frame."""
VINTAGE = {"latest month a 3-month average (revised next month)",
           "latest month's listings undercounted at first release (revised next month)"}
"""Kinds whose file differs night by night: only the night's latest month is broken (a preliminary figure)."""


def _shift(p: date, months: int) -> date:
    return MONTH.back(p, -months)


def _mine(entity: str) -> pl.Expr:
    return pl.col("city") == entity


def _lookalike(frame: pl.DataFrame, entity: str, start: date) -> str:
    """The market whose sales over the 12 months before the break are nearest this one's (in log)."""
    year = frame.filter((period < start) & (period >= _shift(start, -12)))
    sizes = dict(year.group_by("city").agg(pl.col("sales").sum()).iter_rows())
    mine = sizes.pop(entity)
    return min((c for c, s in sizes.items() if s), key=lambda c: abs(math.log(sizes[c] / mine)))


def relabelled(both: bool) -> Plant:
    """From the break, the look-alike market's rows published under this market's name (the look-alike stops); with
    `both`, beside this market's own rows (two series under one name), else in place of them."""
    def go(frame, entity, start, latest):
        other = _lookalike(frame, entity, start)
        theirs = (pl.col("city") == other) & (period >= start)
        keep = ~theirs if both else ~theirs & ~(_mine(entity) & (period >= start))
        return pl.concat([frame.filter(keep), frame.filter(theirs).with_columns(city=pl.lit(entity))])
    return go


def copy_of_another_month(apart: int) -> Plant:
    """The break month published twice: its row, then (appended) a copy labelled the break month carrying the
    figures of `apart` months before."""
    def go(frame, entity, start, latest):
        source = frame.filter(_mine(entity) & (period == _shift(start, -apart)))
        copy = source.with_columns(year=pl.lit(start.year, dtype=pl.Int64), month=pl.lit(start.month, dtype=pl.Int64),
                                   date=pl.lit(start.year + (start.month - 1) / 12))
        return pl.concat([frame, copy])
    return go


def only_sales_updated(every: bool) -> Plant:
    """An upsert that updated sales only: volume, median, listings and inventory are the month before's, in the break
    month (or `every` month from it)."""
    def go(frame, entity, start, latest):
        hit = _mine(entity) & ((period >= start) if every else (period == start))
        ordered = frame.sort("city", "year", "month")
        return ordered.with_columns(pl.when(hit).then(pl.col(c).shift(1).over("city")).otherwise(pl.col(c)).alias(c)
                                    for c in ("volume", "median", "listings", "inventory"))
    return go


def flows_shifted(share: float) -> Plant:
    """A month's cut-off moved `share` of a month earlier from the break: sales and volume the blend of the month's
    and the month before's, months of inventory recomputed by the publisher."""
    def go(frame, entity, start, latest):
        after = _mine(entity) & (period >= start)
        ordered = frame.sort("city", "year", "month")
        out = ordered.with_columns(pl.when(after).then(_round_as(c, (1 - share) * pl.col(c)
                                                                 + share * pl.col(c).shift(1).over("city")))
                                   .otherwise(pl.col(c)).alias(c) for c in ("sales", "volume"))
        return _recompute_inventory(out, after)
    return go


def truncated(gross: bool) -> Plant:
    """A long number truncated: volume floored to 4 significant figures; (gross) listings of 4+ digits lose their last
    digit (a 3-digit field), months of inventory recomputed from them."""
    def go(frame, entity, start, latest):
        after = _mine(entity) & (period >= start)
        if not gross:
            unit = (10.0 ** (pl.col("volume").log10().floor() - 3))
            return frame.with_columns(volume=pl.when(after).then((pl.col("volume") / unit).floor() * unit)
                                      .otherwise(pl.col("volume")))
        out = frame.with_columns(listings=pl.when(after & (pl.col("listings") >= 1000))
                                 .then((pl.col("listings") / 10).floor()).otherwise(pl.col("listings")))
        return _recompute_inventory(out, after)
    return go


def inventory_adjusted(power: float) -> Plant:
    """Months of inventory alone seasonally adjusted from the break (its calendar month's mean over the market's
    years before against their overall mean, to `power`); listings and sales raw."""
    def go(frame, entity, start, latest):
        past = frame.filter(_mine(entity) & (period < start))
        factors = (past.group_by("month").agg(pl.col("inventory").mean().alias("__f"))
                   .with_columns(pl.col("__f") / pl.col("__f").mean()))
        out = frame.join(factors, on="month", how="left")
        return out.with_columns(inventory=pl.when(_mine(entity) & (period >= start))
                                .then((pl.col("inventory") / pl.col("__f") ** power).round(1))
                                .otherwise(pl.col("inventory"))).drop("__f")
    return go


def preliminary_average(columns: tuple[str, ...]) -> Plant:
    """Each night, the latest published month of the market (from the break) the 3-month average of the columns
    (a publisher smoothing its preliminary figure), revised to the real one the next month."""
    def go(frame, entity, start, latest):
        hit = _mine(entity) & (period == latest) & pl.lit(latest >= start)
        ordered = frame.sort("city", "year", "month")
        return ordered.with_columns(pl.when(hit).then(_round_as(c, pl.col(c).rolling_mean(3).over("city")))
                                    .otherwise(pl.col(c)).alias(c) for c in columns)
    return go


def listings_undercounted(factor: float) -> Plant:
    """Each night, the latest published month's listings x`factor` (late entries missing at first release) and months
    of inventory computed from them, revised the next month."""
    def go(frame, entity, start, latest):
        hit = _mine(entity) & (period == latest) & pl.lit(latest >= start)
        out = frame.with_columns(listings=pl.when(hit).then((pl.col("listings") * factor).round(0))
                                 .otherwise(pl.col("listings")))
        return _recompute_inventory(out, hit)
    return go


def stale_listings_inventory(months: int) -> Plant:
    """Months of inventory computed by the publisher from the listings of `months` months before (a stale snapshot
    joined) over the current 12-month average sales, from the break; the listings column itself current."""
    def go(frame, entity, start, latest):
        after = _mine(entity) & (period >= start)
        ordered = frame.sort("city", "year", "month")
        average = pl.col("sales").rolling_mean(12).over("city", order_by=["year", "month"])
        return ordered.with_columns(inventory=pl.when(after).then(
            (pl.col("listings").shift(months).over("city", order_by=["year", "month"]) / average).round(1))
            .otherwise(pl.col("inventory")))
    return go


def inventory_floored(step: float) -> Plant:
    """Months of inventory floored to a multiple of `step`, not rounded (a cast to an integer type), from the break."""
    def go(frame, entity, start, latest):
        after = _mine(entity) & (period >= start)
        return frame.with_columns(inventory=pl.when(after).then(((pl.col("inventory") / step + 1e-9).floor() * step)
                                                                .round(1)).otherwise(pl.col("inventory")))
    return go


def feed_wide(factor: float) -> Plant:
    """A definitional change across the feed (pending sales counted as closed): every market's sales and volume
    x`factor` from the break month, months of inventory recomputed by the publisher."""
    def go(frame, entity, start, latest):
        after = period >= start
        out = frame.with_columns(pl.when(after).then(_round_as(c, pl.col(c) * factor)).otherwise(pl.col(c)).alias(c)
                                 for c in ("sales", "volume"))
        return _recompute_inventory(out, after)
    return go


KINDS: dict[str, tuple[tuple[str, Plant], tuple[str, Plant]]] = {
    "rows relabelled from a look-alike market": (("in place of its own", relabelled(False)),
                                                 ("beside its own (two series)", relabelled(True))),
    "a month published twice, the copy another month's": (("the month before's", copy_of_another_month(1)),
                                                           ("12 months before's", copy_of_another_month(12))),
    "only sales updated, the rest last month's": (("the break month", only_sales_updated(False)),
                                                  ("every month from it", only_sales_updated(True))),
    "flows' cut-off moved, inventory recomputed": (("a quarter month", flows_shifted(0.25)),
                                                   ("half a month", flows_shifted(0.5))),
    "a long number truncated": (("volume floored to 4 sig. figures", truncated(False)),
                                ("listings 4+ digits lose the last, inventory recomputed", truncated(True))),
    "inventory alone seasonally adjusted": (("half", inventory_adjusted(0.5)), ("fully", inventory_adjusted(1.0))),
    "latest month a 3-month average (revised next month)": (("sales", preliminary_average(("sales",))),
                                                            ("sales, volume, listings, inventory", preliminary_average(
                                                                ("sales", "volume", "listings", "inventory")))),
    "latest month's listings undercounted at first release (revised next month)": (
        ("x0.9", listings_undercounted(0.9)), ("x0.7", listings_undercounted(0.7))),
    "inventory from a stale listings snapshot": (("1 month old", stale_listings_inventory(1)),
                                                 ("6 months old", stale_listings_inventory(6))),
    "inventory floored, not rounded": (("to 0.5 month", inventory_floored(0.5)),
                                       ("to whole months", inventory_floored(1.0))),
    "feed-wide definitional change, inventory recomputed": (("sales, volume x1.1", feed_wide(1.1)),
                                                             ("x1.3", feed_wide(1.3))),
}


def nights(start: date) -> list[tuple[int, date]]:
    """(months after, night) for the plant-nights of a break month, none past the design period."""
    first = first_night_seeing(start, PACK.source.publication_lag_days)
    out = [(k, nights_between(_shift(first, k), _shift(first, k + 1), "month-end")[0]) for k in AFTER]
    return [(k, n) for k, n in out if n <= LAST_NIGHT]


def main() -> None:
    tally: dict = defaultdict(Counter)
    misses, everything = [], []
    clean_fate: dict = {}
    only = set(sys.argv[1:])
    latest_of: dict[date, date] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "txhousing.csv"
        for kind, variants in KINDS.items():
            if only and kind not in only:
                continue
            for mag, (label, fn) in zip(("subtle", "GROSS"), variants, strict=True):
                t = tally[(kind, mag)]
                for entity, start in PICKS:
                    written = None
                    for k, as_of in nights(start):
                        if as_of not in latest_of:
                            latest_of[as_of] = read_snapshot(PACK, as_of).anchor_period
                        if written is None or kind in VINTAGE:
                            out = fn(CLEAN, entity, start, latest_of[as_of])
                            differs = first_difference(CLEAN, out, entity)
                            write_source(out, str(path))
                            written = with_source(PACK, path)
                        if differs is None:
                            t["no-op"] += 1
                            continue
                        if as_of < first_night_seeing(differs, PACK.source.publication_lag_days):
                            t["unbroken"] += 1
                            continue
                        before = t["reached"], t["quiet"]
                        rules_before = Counter({r: n for r, n in t.items() if r.startswith("rule:")})
                        clean = plant_night(t, written, PACK, clean_fate, candidate_id(entity), as_of)
                        fired = [r[5:] for r, n in t.items() if r.startswith("rule:") and n > rules_before[r]]
                        everything.append((kind, mag, label, entity, str(start), k, str(as_of),
                                           t["quiet"] > before[1], t["reached"] > before[0], fired))
                        if clean is not None:
                            misses.append((kind, mag, label, entity, str(start), k, str(as_of), clean))
                            print(f"  MISSED {kind} {mag} [{label}] in {entity} from {start:%Y-%m} on {as_of} (+{k});"
                                  f" clean: {clean}", flush=True)
    print_tally(tally, clean=True)
    Path("/tmp/t139").mkdir(exist_ok=True)
    Path("/tmp/t139/misses.json").write_text(json.dumps(misses))
    Path("/tmp/t139/plants.json").write_text(json.dumps(everything))


if __name__ == "__main__":
    main()
