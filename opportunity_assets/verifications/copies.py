"""Another entity's figures in a candidate's column: a join on the wrong key, a row copied from a neighbour.

No check on one entity's own history can see this (the copied series is believable: it is real data), so the scan,
which holds every entity, looks for it: a column whose latest `min_periods` values equal another entity's, period
for period, judged over as many latest periods as they go on matching (`_LONGEST_RUN` at most). Whether that is a
defect or a coincidence is judged by code, with the chance of such a coincidence:

- where other entities' figures near these (within 10%) coincided in the `lookback` periods before (small counts,
  or a column every entity shares, such as a national price index), the column's own rate of such coincidences,
  per pair of runs, times the entities near it tonight;
- where none ever did, the chance of hitting the same figures at the column's resolution: the entities near it
  tonight, times one grid step in that 20% band (the latest value), times, for each earlier period, one grid
  step against the spread of the entity's own changes (a rival that matched once must then move as it moved).

A column three or more entities carry equal throughout their kept past (a national rate joined to every country)
is the domain's, not a copy, even where its figures reach a range no past figure was near (rates at a new low).

Pure polars and numpy over the scan's history frame (entity_id, entity_name, periods_ago and the columns); the
verifier turns what is found into findings (`integrity.check`).
"""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np
import polars as pl

from opportunity_assets.formatting import significant
from opportunity_assets.records import CopiedFigures
from opportunity_assets.verifications.integrity_spec import CopyRule
from opportunity_assets.verifications.series import (
    FINEST_DECIMALS,
    band_chance,
    on_grid_each,
    resolution,
    resolutions,
    robust_scale,
)

_LONGEST_RUN = 6
"""Periods a matching run is judged over at most: a run found over `min_periods` is judged over as many latest
periods as it goes back (a copy of three periods is judged on three, whatever the rule's fewest)."""
_SCALED_CHANGES = 6
"""Fewest latest changes a rescaled copy is judged over: matching only within the rounding, a change is weaker
evidence than an equal figure, so twice a run of three."""
_BREAK = 3.0
"""Spreads of its own changes a series' change into a run must lie out for it to be the one that broke into it (a
seamless copy's, `_scaled_copier`): a month's ordinary move is no break."""
_NEAR = 0.1
"""Entities within this relative distance of a value are the ones that could coincide with it by chance."""


def copied_figures(history: pl.DataFrame, columns: Collection[str], going: Collection[str],
                   rule: CopyRule) -> dict[str, dict[str, CopiedFigures]]:
    """Per entity of `going` (source keys), per column: the other entities whose latest figures its own equal,
    when the chance of that is below `rule.max_probability`."""
    out: dict[str, dict[str, CopiedFigures]] = {}
    if history.is_empty() or not going:
        return out
    k = rule.min_periods

    def sorted_rows(periods: int, wanted: Collection[str]) -> pl.DataFrame:
        """The `wanted` columns of the latest `periods` of every entity, by entity (an integer code: cheaper to
        sort and compare than names), then periods."""
        rows = history.select("entity_id", "periods_ago", *wanted).filter(pl.col("periods_ago") < periods) \
            .sort("entity_id", "periods_ago")
        return rows.with_columns((pl.col("entity_id") != pl.col("entity_id").shift()).fill_null(True).cum_sum()
                                 .alias("__code"))

    def column_of(rows: pl.DataFrame, column: str) -> pl.DataFrame:
        return rows.select("entity_id", "__code", "periods_ago", pl.col(column).cast(pl.Float64).alias("__value"))

    recent = sorted_rows(k, columns)  # what matches tonight: one run per entity, a cheap group-by
    matches = {}
    for column in columns:
        latest = _windows(column_of(recent, column), k)
        shared = (latest.group_by(_values(k)).agg(pl.col("entity_id")).filter(pl.col("entity_id").list.len() > 1)
                  ["entity_id"].to_list())
        if matched := {e: sorted(set(group) - {e}) for group in shared for e in group if e in going}:
            matches[column] = (latest, matched)
    if not matches:
        return out
    longest = max(k, _LONGEST_RUN)
    base = sorted_rows(rule.lookback + longest, list(matches))  # the past, only of columns with a match
    codes = base["__code"].to_numpy()  # each entity's rows are a slice: where its code starts, to the next's start
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    spans = {str(key): (int(a), int(b)) for key, a, b in
             zip(base["entity_id"].gather(starts).to_list(), starts, np.r_[starts[1:], len(codes)], strict=True)}
    unlikely: dict[tuple[str, str], tuple[list[str], float, str, int]] = {}
    """(entity, column) -> the others it matches, the chance of that by coincidence (below the rule's), how it was
    judged, and the periods the run spans."""
    for column, (latest, matched) in matches.items():
        frame = column_of(base, column)
        values_by_row = frame["__value"].to_numpy()
        tonight = np.sort(latest["__v0"].to_numpy())
        runs: dict[int, dict[str, tuple[list[str], tuple[float, ...]]]] = {}
        """Periods the run spans -> entity -> the others it matches so far, and its figures, latest first."""
        for entity, others in matched.items():
            mine = _latest_first(values_by_row, spans, entity)
            if sum(_equal_throughout(mine, _latest_first(values_by_row, spans, o)) for o in others) >= 2:
                continue  # the domain's shared series (a national rate every entity carries), no one's copy
            lengths = {o: _run_length(mine, _latest_first(values_by_row, spans, o), longest) for o in others}
            length = max(lengths.values())
            runs.setdefault(length, {})[entity] = ([o for o in others if lengths[o] == length],
                                                   tuple(float(v) for v in mine[:length]))
        for length, found in runs.items():
            past = _Past(_runs_near(frame, length, [v[0] for _, v in found.values()]), frame, spans)
            for entity, (others, values) in sorted(found.items()):
                chance, basis = _chance(past, values, tonight, entity, length)
                if chance < rule.max_probability:
                    unlikely[entity, column] = (others, chance, basis, length)
    columns_of: dict[tuple[str, str], list[str]] = {}
    for (entity, column), (others, _, _, _) in unlikely.items():
        for other in others:
            columns_of.setdefault((entity, other), []).append(column)
    if not unlikely:
        return out
    frames = {column: column_of(base, column) for _, column in unlikely}
    names = dict(history.filter(pl.col("periods_ago") == 0).select("entity_id", "entity_name").iter_rows())
    copier = {pair: _copier([frames[c] for c in cols], *pair) for pair, cols in columns_of.items()}
    for (entity, column), (others, chance, basis, length) in sorted(unlikely.items()):
        if copied := [o for o in others if copier[entity, o]]:
            out.setdefault(entity, {})[column] = CopiedFigures(
                others=sorted(names.get(o, o) for o in copied), periods=length, chance=chance, basis=basis)
    return out


def _latest_first(values: np.ndarray, spans: dict[str, tuple[int, int]], entity: str) -> np.ndarray:
    """An entity's values, latest first (`values` sorted by entity, then periods ago; `spans`: each entity's rows)."""
    first, last = spans.get(entity, (0, 0))
    return values[first:last]


def _run_length(mine: np.ndarray, theirs: np.ndarray, longest: int) -> int:
    """How many of the latest periods (arrays latest first) two series match in, up to `longest`."""
    n = min(len(mine), len(theirs), longest)
    differ = np.flatnonzero(~(mine[:n] == theirs[:n]))
    return int(differ[0]) if len(differ) else n


def _equal_throughout(mine: np.ndarray, theirs: np.ndarray) -> bool:
    """Whether two series (latest first) are equal in every period both report, over more periods than a run is
    judged on: a series three or more entities carry so, before tonight's run as in it, is the domain's (a national
    interest rate joined to every country), however new its figures' range, not a copy one of them took tonight."""
    n = min(len(mine), len(theirs))
    both = np.isfinite(mine[:n]) & np.isfinite(theirs[:n])
    return int(both.sum()) > _LONGEST_RUN and bool(np.all(mine[:n][both] == theirs[:n][both]))


def _copier(frames: list[pl.DataFrame], entity: str, other: str) -> bool:
    """Whether `entity` took `other`'s figures rather than gave its own, over the columns in which the two match
    tonight unlikely by chance (`frames`): where the runs began to match, its own series broke further from its
    past changes than the other's did (a join on the wrong key replaces one entity's figures; the other's go on).
    Two series equal as far back as they go are both doubted: which is which the data cannot say."""
    mine_total = theirs_total = 0.0
    for frame in frames:
        pair = frame.filter(pl.col("entity_id") == entity).join(
            frame.filter(pl.col("entity_id") == other), on="periods_ago", suffix="__other").sort("periods_ago")
        mine, theirs = pair["__value"].to_numpy(), pair["__value__other"].to_numpy()
        differ = np.flatnonzero(~(mine == theirs))
        if not len(differ):
            return True
        start = int(differ[0])  # the latest period before the run (index 0 is the latest period)
        if not (np.isfinite(mine[start]) and np.isfinite(theirs[start])):
            return True
        mine_total += _jump(mine, start)
        theirs_total += _jump(theirs, start)
    return mine_total >= theirs_total


def _jump(values: np.ndarray, start: int) -> float:
    """The change into the run (from index `start` to `start - 1`) in robust spreads of the series' changes."""
    spread = _spread(np.diff(values[np.isfinite(values)]))
    change = abs(float(values[start - 1] - values[start]))
    return change / spread if spread > 0 else (math.inf if change else 0.0)


def _values(k: int) -> list[str]:
    return [f"__v{i}" for i in range(k)]


def _windows(frame: pl.DataFrame, k: int) -> pl.DataFrame:
    """Each entity's run of `k` consecutive periods ending at each period (`periods_ago` its latest), with every
    value present and not all one value: entity_id, periods_ago, __v0 (latest) ... __v{k-1}. `frame` is sorted by
    entity (`__code`) and periods: whole-column shifts (a shift within each entity, `over`, costs several times
    more on a wide night)."""
    values = _values(k)
    shifted = frame.with_columns(
        *(pl.col("__value").shift(-i).alias(f"__v{i}") for i in range(k)),
        *(pl.col("periods_ago").shift(-i).alias(f"__p{i}") for i in range(1, k)),
        *(pl.col("__code").shift(-i).alias(f"__e{i}") for i in range(1, k)))
    whole = pl.all_horizontal(*(pl.col(f"__p{i}") == pl.col("periods_ago") + i for i in range(1, k)),
                              *(pl.col(f"__e{i}") == pl.col("__code") for i in range(1, k)),
                              *(pl.col(v).is_not_null() & pl.col(v).is_not_nan() for v in values))
    moving = pl.any_horizontal(*(pl.col(v) != pl.col("__v0") for v in values[1:]))
    return shifted.filter(whole & moving).select("entity_id", "periods_ago", *values)


def _runs_near(frame: pl.DataFrame, k: int, values: list[float]) -> pl.DataFrame:
    """`_windows` of the past (periods_ago from 1), only those whose latest value lies near one of `values`
    (within `_NEAR`): the rows they start at are picked first, so a wide night's history is never shifted whole.
    Each run's entity is its `__code` (no name copied per run: a wide night's runs near a few dozen values are most
    of its 771k rows)."""
    value = frame["__value"].to_numpy()
    ago = frame["periods_ago"].to_numpy()
    code = frame["__code"].to_numpy()
    bands = np.array(sorted((v - _NEAR * abs(v), v + _NEAR * abs(v)) for v in values))
    position = np.searchsorted(bands[:, 0], value, side="right") - 1  # the last band starting at or below it
    near = (position >= 0) & (value <= np.maximum.accumulate(bands[:, 1])[np.maximum(position, 0)])
    start = np.flatnonzero(near & (ago >= 1))
    start = start[start + k - 1 < len(value)]
    # Masks are built over the starts they index, whatever their number: a short past (fewer periods than a run)
    # can leave rows near a value of which no run is whole, and then none is left to pick.
    whole = np.ones(len(start), dtype=bool)
    for i in range(k):
        whole &= (code[start + i] == code[start]) & (ago[start + i] == ago[start] + i) & np.isfinite(value[start + i])
    start = start[whole]
    moving = np.zeros(len(start), dtype=bool)
    for i in range(1, k):
        moving |= value[start + i] != value[start]
    picked = start[moving]  # (each column gathered once, from the runs kept; an entity by its code, not its name)
    return pl.DataFrame({"__code": code[picked], "periods_ago": ago[picked],
                         **{f"__v{i}": value[picked + i] for i in range(k)}})


class _Past:
    """A column's past runs, sorted by their latest value (a band of values near one is a slice), and its rows by
    entity (an entity's series is a slice): a wide night judges dozens of matches without a scan each."""

    def __init__(self, runs: pl.DataFrame, rows: pl.DataFrame, spans: dict[str, tuple[int, int]]) -> None:
        self.runs = runs.sort("__v0")
        self.latest_values = self.runs["__v0"].to_numpy()
        self.values, self.span = rows["__value"].to_numpy(), spans
        """The values of `rows` (sorted by entity, then periods); `spans`: each entity's rows in them."""
        self.codes = rows["__code"].to_numpy()
        """Each row's entity, as `runs` names it."""

    def code(self, entity: str) -> int:
        """The entity's `__code` in `runs` (-1, no run's, for an entity with no rows)."""
        first, last = self.span.get(entity, (0, 0))
        return int(self.codes[first]) if last > first else -1

    def near(self, value: float) -> pl.DataFrame:
        """The runs whose latest value is within `_NEAR` of `value`."""
        first = int(np.searchsorted(self.latest_values, value - _NEAR * abs(value), side="left"))
        last = int(np.searchsorted(self.latest_values, value + _NEAR * abs(value), side="right"))
        return self.runs.slice(first, last - first)

    def series(self, entity: str) -> np.ndarray:
        """The entity's values, oldest first."""
        return _latest_first(self.values, self.span, entity)[::-1]


def _chance(past: _Past, values: tuple[float, ...], tonight: np.ndarray, entity: str, k: int) -> tuple[float, str]:
    """The chance that some other entity's latest `k` figures (`values`, latest first) equal `entity`'s by
    coincidence, and how it was judged. Only figures near its own count (within `_NEAR`): small counts coincide
    often, large ones seldom. `tonight`: every entity's latest value tonight, sorted."""
    band = _NEAR * abs(values[0])
    rivals = int(np.searchsorted(tonight, values[0] + band, side="right")
                 - np.searchsorted(tonight, values[0] - band, side="left")) - 1  # not itself
    others = past.near(values[0]).filter(pl.col("__code") != past.code(entity))
    if others.height:
        seen = float(others.group_by("periods_ago", *_values(k)).len()
                     .select((pl.col("len") * (pl.col("len") - 1) / 2).sum()).item())
        judged = float(others.group_by("periods_ago").len().select((pl.col("len") * (pl.col("len") - 1) / 2).sum())
                       .item())
        if seen > 0:
            return (min(1.0, seen / judged * rivals),
                    f"other entities' figures near these coincided {seen:.0f} times in {judged:,.0f} pairs of "
                    "runs before")
    mine = past.series(entity)
    changes = np.diff(mine[np.isfinite(mine)])
    moved = np.abs(changes[changes != 0])
    step = resolution(mine[np.isfinite(mine)], float(moved.min()) if len(moved) else 1.0, FINEST_DECIMALS)
    level = min(1.0, step / (2 * _NEAR * abs(values[0]))) if values[0] else 1.0
    spread = _spread(changes)
    follow = band_chance(step, spread) if spread > 0 else 1.0
    return (min(1.0, rivals * level * follow ** (k - 1)),
            f"no other entities' figures near these ever coincided; at its resolution {significant(step)}, against "
            f"its changes' spread {significant(spread)}")


def _spread(changes: np.ndarray) -> float:
    """The robust scale of the entity's own period-on-period changes (`series.robust_scale` about their median)."""
    return robust_scale(changes, float(np.median(changes))) if len(changes) else 0.0


def scaled_copies(history: pl.DataFrame, columns: Collection[str], going: Collection[str],
                  rule: CopyRule) -> dict[str, dict[str, CopiedFigures]]:
    """Per entity of `going`, per column: the other entity whose figures its own are a multiple of, change for change,
    over the latest `_SCALED_CHANGES` period-on-period changes (or 2 × `rule.min_periods`, if more: an area imputed as a
    share of a donor's figures, a history borrowed and rescaled): every change equal to the other's within the rounding
    of both, where the chance of that is below `rule.max_probability`. The chance, per change, is the width of the
    rounding's band against the spread of the entity's own changes (a rival must move as it moves), for every other
    entity tonight. Figures equal outright are `copied_figures`'; a series that three or more entities share so (a
    national index every area carries) is no one entity's defect. Of the two, the one whose own series broke into the
    run is doubted (the donor's goes on as it was), both where they match as far back as they go."""
    out: dict[str, dict[str, CopiedFigures]] = {}
    changes = max(_SCALED_CHANGES, 2 * rule.min_periods)
    if history.is_empty() or not going:
        return out
    entities = sorted(history["entity_id"].unique().to_list(), key=str)
    if len(entities) < 2:
        return out
    names = dict(history.filter(pl.col("periods_ago") == 0).select("entity_id", "entity_name").iter_rows())
    index = {e: i for i, e in enumerate(entities)}
    codes = pl.DataFrame({"entity_id": entities, "__row": np.arange(len(entities))},
                         schema_overrides={"entity_id": history.schema["entity_id"]})
    rows = history.select("entity_id").join(codes, on="entity_id", how="left", maintain_order="left")["__row"] \
        .to_numpy()  # (no Python object per history row: a wide night has 771k)
    ago = history["periods_ago"].to_numpy()
    reach = int(ago.max())
    if reach < changes:
        return out
    for column in columns:
        values = np.full((len(entities), reach + 1), np.nan)
        values[rows, reach - ago] = history[column].cast(pl.Float64).to_numpy()  # oldest first
        steps = _steps(values)
        recent, recent_band = _changes(values[:, -changes - 1:], steps)  # every entity's latest changes only
        # a series that mostly repeats is `stuck`'s (and matches any other that does); a repeat the rounding of a
        # rescaled copy makes (228 and 229 both 160 at 70%) is one change among others
        usable = np.all(np.isfinite(recent), axis=1) & (np.count_nonzero(recent, axis=1) >= changes / 2)
        latest = _latest_changes(values[:, -changes - 1:], steps)
        for me in sorted(index[e] for e in going if e in index):
            if not usable[me]:
                continue
            mine, mine_band = _changes(values[me:me + 1], steps[me:me + 1])
            spread = _spread(mine[0][np.isfinite(mine[0])])
            with np.errstate(invalid="ignore"):
                tolerance = recent_band + recent_band[me]
                close = usable & np.all(np.abs(recent - recent[me]) <= tolerance, axis=1)
            close &= ~np.all(values[:, -changes - 1:] == values[me, -changes - 1:], axis=1)  # `copied_figures`'
            close[me] = False
            found = np.flatnonzero(close)
            if len(found) > 1 or not spread > 0:  # a series several share
                continue
            if len(found) == 1:
                other, run = int(found[0]), changes
                chance = _run_chance(tolerance[other], spread, int(usable.sum()))
                against = f"its changes' spread {significant(spread)}"
            else:
                broke = _broke_into_run(values, steps, latest, me, usable, rule)
                if broke is None:
                    continue
                other, run, chance, spread = broke
                against = f"the spread {significant(spread)} of its changes' gaps from the other's before"
            if chance >= rule.max_probability:
                continue
            theirs, their_band = _changes(values[other:other + 1], steps[other:other + 1])
            if not _scaled_copier(mine[0], theirs[0], mine_band[0] + their_band[0], run < changes):
                continue
            scale = float(np.median(values[me, -run - 1:] / values[other, -run - 1:]))
            out.setdefault(entities[me], {})[column] = CopiedFigures(
                others=[names.get(entities[other], entities[other])], periods=run + 1, chance=chance,
                basis=f"each of its {run} changes within the rounding of both, against {against} on the log scale",
                scale=scale)
    return out


def _run_chance(tolerance: np.ndarray, spread: float, entities: int) -> float:
    """The chance that some other of tonight's `entities` matches a run of changes, each within its `tolerance`
    (the rounding of both series), by chance: each change's chance of falling within its band of a normal spread
    `spread` wide, multiplied over the run and by the entities that could have matched."""
    per_change = np.minimum(1.0, 2 * tolerance / (spread * math.sqrt(2 * math.pi)))
    return min(1.0, (entities - 1) * float(np.prod(per_change)))


def _broke_into_run(values: np.ndarray, steps: np.ndarray, latest: tuple[np.ndarray, np.ndarray], me: int,
                    usable: np.ndarray, rule: CopyRule) -> tuple[int, int, float, float] | None:
    """The one other entity whose changes the entity's latest ones took, where its series broke into that run fewer
    than `changes` changes ago (a market imputed from a donor's changes from some month on): the other, the
    run's changes, the chance of such a run and the spread it was judged against; None where no entity's or several
    entities' runs are unlikely enough. The chance is judged against the entity's own past with the other: the
    spread of the gaps between their changes before the run, so that neighbours whose months move alike (a
    season two markets share) are no copy for matching a few changes; each of `rule.min_periods` or more changes
    within the rounding of both (`latest`: every entity's latest changes and their bands, `_latest_changes`), for
    every other entity tonight. Trial 58: sales, volume and listings imputed from
    a neighbour's changes reached act-on until six changes were the donor's."""
    recent, band = latest
    changes = recent.shape[1]
    with np.errstate(invalid="ignore"):
        tolerance = band + band[me]
        match = np.abs(recent - recent[me]) <= tolerance
    run = np.cumprod(match[:, ::-1], axis=1).sum(axis=1)
    run[me] = 0
    mine = _changes(values[me:me + 1], steps[me:me + 1])[0][0]
    found = []
    for other in np.flatnonzero(usable & (run >= rule.min_periods) & (run < changes)):
        length = int(run[other])
        if np.all(values[other, -length - 1:] == values[me, -length - 1:]):
            continue  # figures equal outright: `copied_figures`'
        theirs = _changes(values[other:other + 1], steps[other:other + 1])[0][0]
        gaps = (mine - theirs)[: len(mine) - length]
        spread = _spread(gaps[np.isfinite(gaps)])
        if not spread > 0:
            continue
        chance = _run_chance(tolerance[other, -length:], spread, int(usable.sum()))
        if chance < rule.max_probability:
            found.append((int(other), length, chance, spread))
    return found[0] if len(found) == 1 else None


def _latest_changes(window: np.ndarray, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's changes over the latest periods (`window`) and the band the rounding leaves each, every figure
    taken as rounded to its own largest power of ten, if coarser than its row's (`steps`): a feed that writes its
    latest figures in thousands (a column imputed and rounded so) leaves them ±500 apart, whatever its past's
    rounding was."""
    own = np.ones_like(window)
    with np.errstate(all="ignore"):
        for power in range(1, 10):
            own = np.where(on_grid_each(window, 10.0 ** power), 10.0 ** power, own)
        inverse = np.where(window > 0, 1 / window, np.nan)
        half = np.fmax(own, steps[:, None]) / 2 * inverse
    return -np.diff(np.log(inverse), axis=1), half[:, 1:] + half[:, :-1]



_FLOAT_STEP = 1e-12
"""A figure written to more decimals still has a step: a float's last digits, this much of its size."""


def _steps(values: np.ndarray) -> np.ndarray:
    """Each entity's step (`series.resolutions` to `FINEST_DECIMALS`); where none holds, `_FLOAT_STEP` of its
    largest figure, never an infinite band every change falls in. Looked for to 6 decimals (`series.DECIMALS`),
    Swedish municipalities' spending per head, written to 7, had no step: every entity's changes matched every
    other's within an infinite band, and a copy scaled by half was "a series several share"; an exact copy's chance
    was read at its smallest change, 1e-4 where its step gives 1e-12 (trial 132)."""
    steps = resolutions(values, FINEST_DECIMALS)
    loose = np.flatnonzero(np.isinf(steps))
    if len(loose):
        steps[loose] = np.nanmax(np.abs(values[loose]), axis=1) * _FLOAT_STEP
    return steps


def _changes(values: np.ndarray, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's period-on-period changes (log), and the band its rounding leaves each (relative: both ends
    rounded to half the row's step, `steps`). Built for the rows asked only: a wide night has 10k entities."""
    with np.errstate(all="ignore"):
        inverse = np.where(values > 0, 1 / values, np.nan)
        return -np.diff(np.log(inverse), axis=1), steps[:, None] / 2 * (inverse[:, 1:] + inverse[:, :-1])


def _scaled_copier(mine: np.ndarray, theirs: np.ndarray, tolerance: np.ndarray, seamless: bool = False) -> bool:
    """Whether the entity whose changes are `mine` took the other's (`theirs`, a multiple of them): going back from
    the latest change, the first that does not match is the change into the run, and there the copier's series
    broke further from its own past changes than the other's did. Matching as far back as both go: True.
    `seamless`: a run that began a few changes ago, where the change into the copied figures may itself be the
    other's (a figure imputed as the donor's over the donor's before, times its own then: no break in either
    series): the entity is excused only where the other's series broke into the run, `_BREAK` spreads or more, and
    further than its own did."""
    with np.errstate(invalid="ignore"):
        match = np.abs(mine - theirs) <= tolerance
    differ = np.flatnonzero(~match)
    if not len(differ):
        return True
    start = int(differ[-1])
    if not (math.isfinite(mine[start]) and math.isfinite(theirs[start])):
        return True

    def jump(changes: np.ndarray) -> float:
        spread = _spread(changes[np.isfinite(changes)])
        return abs(float(changes[start])) / spread if spread > 0 else math.inf

    if seamless:
        return not jump(theirs) >= max(_BREAK, jump(mine))
    return jump(mine) >= jump(theirs)
