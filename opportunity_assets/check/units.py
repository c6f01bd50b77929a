"""`opportunity check`: a column's unit the feed changed from a period on, for every entity alike (pure over the
night's history): deaths written in thousands from one month, every entity's figure ×0.001 into it. Each entity's
own history then breaks by the same factor in the same period, and a window across it compares figures in two
units. One line naming the pack key."""

from __future__ import annotations

import math

import polars as pl

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import significant
from opportunity_assets.sources.probes import units_beside

ALIKE = 0.25
"""Most spread of the entities' changes into the period (1.4826 × their MAD, on the log scale) against the size of
their median change, for the move to be one every entity made alike: a feed's change of units moves every figure by
the one factor; a real shock (a recession, a season) moves entities by amounts that differ."""
MIN_ENTITIES = 3
"""Fewest entities with a change into the period for it to be judged."""


def units_changed_alike(pack: CriteriaPack, history: pl.DataFrame) -> list[str]:
    """A warning naming `source.columns`: a column of a panel whose every entity's figure moved by a unit slip's
    size (beyond the square root of `integrity.out_of_range.factor` either way, ×3.2 at the default) into one period,
    alike (`ALIKE`), in the night's history (trial 86: UK lung deaths in thousands from 1979-07, check said ok and
    no entity passed the filters). The largest such move, one line. Not for events (a count's shared moves are its
    events') nor for columns of any value 0 or below (a log change has no meaning there)."""
    src = pack.source
    if src.shape != "panel" or history.is_empty():
        return []
    threshold = 0.5 * math.log(pack.integrity.out_of_range.factor)
    found: list[tuple[float, str, str, float, int, int]] = []
    numeric = [c for c in dict.fromkeys(src.columns) if c in history.columns and history.schema[c].is_numeric()]
    order = history.select(pl.arg_sort_by("entity_id", "period")).to_series()  # sorted once, not per column
    for column in numeric:
        rows = history.select("entity_id", "period", pl.col(column).cast(pl.Float64).alias("v"))[order].drop_nulls()
        if rows.is_empty() or rows["v"].min() <= 0:  # type: ignore[operator]
            continue
        # each row's change from the entity's previous row: a whole-column shift, none across two entities
        steps = rows.with_columns(pl.when(pl.col("entity_id") == pl.col("entity_id").shift(1))
                                  .then(pl.col("v").log() - pl.col("v").log().shift(1)).alias("step")
                                  ).drop_nulls("step")
        moves = steps.group_by("period").agg(pl.col("step").median().alias("median"), pl.len().alias("n"),
                                             (pl.col("step") - pl.col("step").median()).abs().median().alias("mad"))
        alike = moves.filter((pl.col("n") >= MIN_ENTITIES) & (pl.col("median").abs() >= threshold)
                             & (1.4826 * pl.col("mad") <= ALIKE * pl.col("median").abs()))
        if alike.is_empty():  # (most columns: the entities are not counted)
            continue
        entities = rows["entity_id"].n_unique()
        alike = alike.filter(pl.col("n") >= max(MIN_ENTITIES, entities // 2))
        if alike.is_empty():
            continue
        top = alike.sort(pl.col("median").abs(), descending=True).row(0, named=True)
        found.append((abs(top["median"]), column, pack.grain.label(top["period"]), math.exp(top["median"]),
                      int(top["n"]), entities))
    if not found:
        return []
    _, column, period, factor, moved, entities = max(found)
    return [f"key `source.columns`: got {column!r}; every entity's {column} moved alike into {period}, ×"
            f"{significant(factor)} at the median ({moved} of the {entities} entities, their spread a quarter of the "
            f"move or less): the feed's unit of {column} changed then (thousands for units, percent for a share?), and "
            f"each entity's history breaks there, a window across it comparing figures in two units: expected the "
            f"column in one unit in every row (the rows on one side rescaled, in the file or by a `query`)"]


def units_in_a_column(pack: CriteriaPack) -> list[str]:
    """A warning naming `source.where`: a column no key reads, named for a unit or a currency, holding several on the
    rows the night reads (trial 120: coffee prices in `USc/lb` to 2014 and `USD/kg` from 2015 in one long table,
    check said ok though every window across 2015 compared cents a pound with dollars a kilogram). Each unit with
    its rows and periods; the fix a `where` keeping one, or a DuckDB `query` converting them."""
    found = units_beside(pack)
    if found is None:
        return []
    column, units = found
    grain = pack.grain
    held = "; ".join(f"{value!r} on {rows:,} rows, {grain.label(first)}..{grain.label(last)}"
                     for value, rows, first, last in units)
    return [f"key `source.where`: got none for column {column!r}, which no key reads; it holds {len(units)} units "
            f"in the source's rows ({held}), whose figures are read as one: expected the rows of one unit "
            f"kept, `where: [{{column: {column}, in: [{units[0][0]}]}}]`, or a DuckDB `query` converting them to "
            "one"]
