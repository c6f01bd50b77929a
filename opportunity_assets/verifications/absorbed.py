"""Another entity's events counted as the candidate's: a category recoded, two ids merged, a batch filed under the
wrong key.

An events source's counts and sums add up across entities, so events moved from one entity to another leave a trace
no single entity's history shows: from one period on, the candidate's figures rise by what another entity's fall.
Each move alone can look ordinary (the candidate's +30% inside a noisy count's swing, the other entity's fall one of
the many a feed's small entities make), but the two together, starting in the same period and of the same size, are
rare enough by chance for code to judge. The scan holds every entity, so it looks for them (`absorbed_events`); the
verifier turns what is found into findings (`integrity.check`, rule `absorbed`).

For a candidate going on and each period `t` the metrics read (the break), by column:

- each entity's level before the break is the median of the `BEFORE` periods before it, its noise the robust spread
  of its period-on-period changes there divided by √2 (a count's never below its Poisson noise, √level);
- the candidate's excess is the sum, from `t` to the latest period, of its figures over its level before; another
  entity's shortfall the same sum under its own level;
- the pair counts when the excess and the shortfall each lie `threshold_mads` of their own noise from nothing (their
  noise the run's: n periods, each with the level's own uncertainty), when each one's first period already moved
  that way by two noises while the period before was within three (both began at `t`), and when the two sums agree
  within three noises of their difference and within a quarter of the larger: what moved from one went to the other;
- and only where neither has another partner among tonight's entities: a fall that two rises match, or a rise two
  falls do, is a timetable moving many entities at once, and which one took the events (if any) no code can say.

Breaks are tried latest first; a candidate's column is named with its latest break's partner.

A period's move that most of tonight's entities made alike (the season, a timetable change) is no one entity's: the
candidate's and the other's moves are judged net of the median entity's move from its own level (in proportion, each
entity weighted by its level, so that a few events' chance zeros are no season), so a summer schedule that lifts
every route is not read as any route taking another's flights.

Pure numpy over the scan's history frame (entity_id, entity_name, periods_ago and the columns).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Collection

import numpy as np
import polars as pl

from opportunity_assets.records import AbsorbedEvents
from opportunity_assets.verifications.integrity_spec import AbsorbedRule

BEFORE = 8
"""Periods before the break whose median is each entity's level: two months of weeks, eight months, two years of
quarters; the fewest whose median a one-period oddity does not move."""
FEWEST_BEFORE = 4
"""Fewest periods before the break an entity needs for a level (a feed's first months: as many as there are)."""
_STEP = 2.0
"""Noises the first period of the run must already lie from the level (the period before within `_CALM` of it), for
the move to have begun there, in both entities."""
_CALM = 3.0
"""Noises within which the period before the break must lie of the level (a Poisson count strays 2 of them one period
in twenty: trial 97's test, a merged group's partner 2.1 noises up the month before, went unseen at 2)."""
_AGREE = 3.0
"""Noises of their difference within which the excess and the shortfall agree."""
_SHARE = 0.25
"""And the largest part of the larger sum by which they may differ."""
_FURTHEST = 53
"""Most periods back a break is looked for (a year of weeks): a daily pack's windows a year apart would otherwise
try every day of the year for each candidate (10,000 entities: 0.2 s at 8 breaks, 0.8 s at 53)."""
_MIN_PEERS = 8
"""Fewest entities with a level before a break for their median move to be the season's."""


def absorbed_events(history: pl.DataFrame, columns: Collection[str], counts: Collection[str], going: Collection[str],
                    reach: int, rule: AbsorbedRule) -> dict[str, dict[str, AbsorbedEvents]]:
    """Per entity of `going` (source keys), per column of `columns` (an events source's counts and sums, which add up
    across entities; `counts` those that count events): the other entity whose fall from the same period on matches
    its rise, where the two are each `rule.threshold_mads` of their noise out. Breaks are tried in the latest
    `reach` periods (the metrics' widest window, at most `_FURTHEST`)."""
    out: dict[str, dict[str, AbsorbedEvents]] = {}
    if history.is_empty() or not going or not columns:
        return out
    reach = min(reach, _FURTHEST)
    periods = reach + BEFORE + 1
    recent = history.filter(pl.col("periods_ago") < periods)
    ids = sorted(recent["entity_id"].unique().to_list())
    if len(ids) < 2:
        return out
    row = {entity: i for i, entity in enumerate(ids)}
    names = dict(history.filter(pl.col("periods_ago") == history["periods_ago"].min())
                 .select("entity_id", "entity_name").iter_rows())
    where = (np.array([row[e] for e in recent["entity_id"].to_list()]), recent["periods_ago"].to_numpy())
    mine = [row[e] for e in sorted(going) if e in row]
    for column in columns:
        values = np.full((len(ids), periods), np.nan)
        values[where] = recent[column].cast(pl.Float64).to_numpy()
        # (an events source's entity without a row in a period had no event there: a count and a sum of 0, once it
        # has begun to have them)
        started = np.maximum.accumulate(np.isfinite(values[:, ::-1]), axis=1)[:, ::-1]
        values = np.where(started & ~np.isfinite(values), 0.0, values)
        for t in range(min(reach, periods - FEWEST_BEFORE - 1) + 1):
            found = _at_break(values, t, column in counts, mine, rule)
            for i, (j, rise, fall, rise_sds, fall_sds) in found.items():
                entity = ids[i]
                if column in out.get(entity, {}):
                    continue  # the latest break found first
                out.setdefault(entity, {})[column] = AbsorbedEvents(
                    other=names.get(ids[j], ids[j]), periods=t + 1, rise=rise, fall=fall, rise_sds=rise_sds,
                    fall_sds=fall_sds)
    return out


def _weighted_median(ratios: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per period (column), the median of the entities' ratios (rows), each weighted by its level: an entity of a
    diagnosis a month, whose ratio is 0 or 2 by chance, weighs as little as it says (trial 97: five such of eight
    made the median move 0.25, and a merge of a 30-a-month group into another read as the season)."""
    order = np.argsort(ratios, axis=0)
    ranked, cumulative = np.take_along_axis(ratios, order, axis=0), np.cumsum(weights[order], axis=0)
    middle = np.argmax(cumulative >= cumulative[-1] / 2, axis=0)
    return ranked[middle, np.arange(ratios.shape[1])]


def _at_break(values: np.ndarray, t: int, count: bool, mine: list[int],
              rule: AbsorbedRule) -> dict[int, tuple[int, float, float, float, float]]:
    """For a break at `t` periods back: per candidate row, (the other's row, the candidate's excess, the other's
    shortfall, and each in noises of its own), where exactly one other entity matches it and it matches no other."""
    before = values[:, t + 1:t + 1 + BEFORE]
    kept = np.isfinite(before).sum(axis=1)
    known = kept >= FEWEST_BEFORE
    if known.sum() < 2:
        return {}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (an entity with no period before: not known, never read)
        level = np.nanmedian(before, axis=1)
        changes = np.diff(before, axis=1)
        mad = np.nanmedian(np.abs(changes - np.nanmedian(changes, axis=1, keepdims=True)), axis=1)
    noise = np.nan_to_num(1.4826 * mad / math.sqrt(2))
    if count:
        noise = np.maximum(noise, np.sqrt(np.maximum(level, 1.0)))
    noise = np.maximum(noise, 1e-9 * np.maximum(np.abs(level), 1.0))
    run = values[:, :t + 1]
    n = t + 1
    # the season's move: the median entity's, in proportion to its level, taken out of each entity's expected run
    sizable = known & (level > 0) & np.isfinite(run).all(axis=1)
    season = _weighted_median(run[sizable] / level[sizable, None], level[sizable]) if sizable.sum() >= _MIN_PEERS \
        else np.ones(n)
    expected = level[:, None] * season[None, :]
    moved = np.nansum(run - expected, axis=1)
    spread = noise * np.sqrt(n * (1 + n / np.maximum(kept, 1)))
    first = run[:, t] - expected[:, t]
    prior = values[:, t + 1] - level
    began_up = (first >= _STEP * noise) & (np.abs(prior) <= _CALM * noise)
    began_down = (first <= -_STEP * noise) & (np.abs(prior) <= _CALM * noise)
    z = moved / spread
    falling = np.flatnonzero(known & began_down & (z <= -rule.threshold_mads) & np.isfinite(run).all(axis=1))
    rising = np.flatnonzero(known & began_up & (z >= rule.threshold_mads) & np.isfinite(run).all(axis=1))
    out: dict[int, tuple[int, float, float, float, float]] = {}
    if not len(falling) or not len(rising):
        return out
    # every rising entity against every falling one: a pair counts only where each has no other partner (a fall
    # that several rises match, or a rise several falls do, is a season's or a timetable's, not a move of events)
    rise, fall = moved[rising][:, None], -moved[falling][None, :]
    gap = np.abs(rise - fall)
    agree = (gap <= _AGREE * np.sqrt(spread[rising][:, None] ** 2 + spread[falling][None, :] ** 2)) & \
        (gap <= _SHARE * np.maximum(rise, fall)) & (rising[:, None] != falling[None, :])
    wanted = set(mine)
    for a, b in zip(*np.nonzero(agree), strict=True):
        i, j = int(rising[a]), int(falling[b])
        if i in wanted and agree[a].sum() == 1 and agree[:, b].sum() == 1:
            out[i] = (j, float(moved[i]), float(-moved[j]), float(z[i]), float(-z[j]))
    return out
