"""Figures too regular to have been measured: the data checks that find a feed filled in rather than read.

Each rule asks how likely the entity's own past makes a run of too-regular figures reaching into the judged span,
and finds it below its rule's bound:
- stuck: a column unchanged for a run; `repeated_rows`: a row equal to another period's in every column;
- precision: more decimals than the column ever had; `rounded`: a run on a coarser grid than its past made likely;
- echoed: changes equal, one after another, to the changes a year earlier;
- interpolated: figures on the straight line, or the constant rate, through the two before (a column's run, or
  several columns of the latest row at once: `interpolated_row`).
Pure, as `integrity.py`, which runs them over every column.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from opportunity_assets.formatting import significant
from opportunity_assets.verifications import exact
from opportunity_assets.verifications.integrity_spec import IntegritySpec
from opportunity_assets.verifications.series import (
    FINEST_DECIMALS,
    MIN_SAMPLE,
    Findings,
    Series,
    as_percent,
    band_chance,
    decimals,
    format_number,
    on_grid_each,
    period_changes,
    period_span,
    repeat_probability,
    resolution,
    robust,
    robust_scale,
)


def _read_mask(length: int, reads: frozenset[int] | None) -> np.ndarray:
    """Per index of a series of `length` periods, whether a metric reads it (`reads`: periods back; None: all)."""
    if reads is None:
        return np.ones(length, dtype=bool)
    return np.array([length - 1 - i in reads for i in range(length)], dtype=bool)


def stuck(found: Findings, spec: IntegritySpec, column: str, fits: Sequence[exact.ExactFit] = (),
          reads: frozenset[int] | None = None, silent: np.ndarray | None = None,
          events: np.ndarray | None = None, shared: Mapping[str, float] | None = None, counted: bool = False,
          quotient_of: np.ndarray | None = None) -> None:
    """The longest run of unchanged periods reaching into the judged span, against the column's own chance of
    repeating in the `min_history` periods before the run began (a column is "normally moving" as it moved just
    before, not as it moved years earlier: a calm year repeats a rounded column more often). A run that an exact
    identity of the column reproduces from columns that did move (`fits`) is that identity's value rounded, not a
    frozen feed. `reads` (periods back a metric reads; None: every judged one): a run must hold one of them. Windows
    a year apart on a day grain leave ten months between them no metric reads; a run there moves no figure, and
    over 483 judged days a run of chance 1 in 2,000 turns up somewhere in one entity of five (trial 45: states'
    daily births, 25 of 108 clean picks doubted for such runs, 18 of them for runs between the windows).
    `silent` (an events source's periods without an event of the entity's): a count or a sum of no events is 0 by
    construction, no figure a feed wrote, so a repeat needs an event on both sides (trial 47: a state's three
    quarters without a health-data breach doubted a STRONG as `people` "unchanged at 0", a chance of 5e-9).
    `events`: for an events source's `share`, each period's count of events: a run at 0 or 1 is every one of the
    run's events alike, whose chance is the entity's past share of them to their number, as spread as its past
    periods' shares were (`_all_alike`), not the share's rate of repeats: a share of 3 events a month at 1, a
    species nearly every capture was, had read "9.1% a period, 7.5e-04" over four months (trial 49); three months'
    captures all of a species a quarter of its past captures were is doubted. `shared`: tonight's entities' median
    change into each period (`Candidate.shared_changes`, annual grains): a run into periods where that median is
    no change at all is a value most entities held alike, the domain's own (trial 40: a baseball club's 162 games
    every season, doubted as stuck), not one feed frozen; a feed frozen for one entity leaves the others' median
    moving. `counted`: the column counts an events source's events, whose repeat is at least as likely as two draws of
    the count's own noise, Poisson's at its value, coinciding (`poisson_repeat`): a category's grants at 2 a month for
    three months, on a series that had counted 1 to 46, read its past rate of repeats, 2.7% a month, though counts
    of 2 repeat 21% of the time (trial 92: a clean STRONG doubted). `quotient_of`: for an events source's `avg` or
    `share`, each period's count of events: a quotient that repeats over periods of other counts is other events
    coming to the same figure, no feed sent again (a frozen feed freezes its count too, `counted`'s to judge; trial 97:
    an average age of 40.0 over 5 diagnoses, then over 3, doubted at 5.4e-07, its figures' seven digits read as their
    grid)."""
    series = found.series
    raw = series.values[column]
    read = np.cumsum(_read_mask(series.length, reads))
    written = np.ones(series.length, dtype=bool) if silent is None else ~silent
    run, best = 0, (0, 0)
    for t in range(1, series.length):
        same = math.isfinite(raw[t]) and raw[t] == raw[t - 1] and bool(written[t] and written[t - 1])
        run = run + 1 if same else 0
        held = read[t] - (read[t - run - 1] if t - run >= 1 else 0) > 0  # a read period among t - run .. t
        if t >= series.judged_from and run > best[0] and held:
            best = (run, t)
    run, end = best
    if run < spec.stuck.min_periods:
        return
    start = end - run
    if any(fit.reproduces(start, end) for fit in fits):
        return
    if shared and all(shared.get(str(series.back(t))) == 0.0 for t in range(start + 1, end + 1)):
        return  # most of tonight's entities held it too: the domain's constant (a schedule, a rate set by law)
    indices = list(range(start, end + 1))
    if events is not None and _held_throughout(raw, events, start, float(raw[end])):
        return  # a share never off its bound (a category of men by definition): not a feed that stopped moving
    alike = _all_alike(raw, events, start, end, spec.min_history) if events is not None else None
    if alike is None and quotient_of is not None and len(set(quotient_of[start:end + 1].tolist())) > 1:
        return
    if alike is not None:
        share, count = alike
        chance = share ** count
        why = f": all {count:.0f} events in them alike, each a chance of {share:.1%} as its past periods' shares went"
    else:
        rate = repeat_probability(raw[max(0, start - spec.min_history): start + 1], float(raw[end]))
        if rate is None:
            return
        chance, why = rate ** run, f"; before that it repeated with probability {rate:.1%} a period"
        if counted and (by_chance := poisson_repeat(float(raw[end]))) > rate:
            chance, why = by_chance ** run, (f"; a count of {format_number(float(raw[end]))} events repeats by chance "
                                             f"with probability {by_chance:.1%} a period (Poisson)")
    if chance >= spec.stuck.max_probability:
        return
    found.add("stuck", spec.stuck.effect, column, indices, float(raw[end]), float(run + 1),
              f"{column} unchanged at {format_number(float(raw[end]))} for {run + 1} periods "
              f"({period_span([series.periods[i] for i in indices])}){why}, so a run this long has probability "
              f"{chance:.1e}")


def _held_throughout(raw: np.ndarray, events: np.ndarray, start: int, level: float) -> bool:
    """Whether a share at 0 or 1 was there in every one of its past periods with events before the run, or has none
    (the run is its whole history): trial 97's transmission by sex between men, a category male by definition, was
    doubted as stuck at a male share of 1 for all its 58 to 66 months ("each a chance of 50.0%"). A column that never
    moved is no feed that stopped, as `repeat_probability` says of other columns (no past change, no yardstick)."""
    past = raw[:start][np.isfinite(raw[:start]) & np.isfinite(events[:start]) & (events[:start] > 0)]
    return level in (0.0, 1.0) and bool(np.all(past == level))


def poisson_repeat(level: float) -> float:
    """The chance that two counts drawn at this level (Poisson) are equal: Σ p(k)², about 1 / √(4π·level) for a large
    one (0.21 at 2, 0.03 at 80), 1 at 0."""
    if level <= 0:
        return 1.0
    reach = int(level + 12 * math.sqrt(level) + 12)
    return float(sum(math.exp(2 * (k * math.log(level) - level - math.lgamma(k + 1))) for k in range(reach)))


def _all_alike(raw: np.ndarray, events: np.ndarray, start: int, end: int, history: int) -> tuple[float, float] | None:
    """For a share's run at 0 or 1 from `start` to `end`: the chance, per event, that the run's events were all on
    that side, and their number; the chance is the beta-binomial's of the entity's past periods before the run
    (`history` of them; a past without any on that side read as one in its events plus two), whose shares of few
    events vary more from period to period than their binomial noise (a season: strikes by night in winter), or,
    within that noise, of the share the past's events tell (no surer than their number), then taken to the run's
    count's root so a finding can write it per event; None for a run between the bounds, or without counts."""
    level = float(raw[end])
    counts = events[start: end + 1]
    if level not in (0.0, 1.0) or not np.isfinite(counts).all():
        return None
    past = slice(max(0, start - history), start)
    known = np.isfinite(raw[past]) & np.isfinite(events[past]) & (events[past] > 0)
    shares, sizes = raw[past][known], events[past][known]
    share = (float(np.sum(shares * sizes)) + 1) / (float(np.sum(sizes)) + 2)
    side = share if level == 1.0 else 1 - share
    total = float(counts.sum())
    spread = share * (1 - share)
    if len(sizes) >= 2 and float(np.mean(sizes)) > 1:
        dispersion = float(np.sum(sizes * (shares - share) ** 2)) / spread / (len(sizes) - 1)
        correlation = (dispersion - 1) / (float(np.mean(sizes)) - 1)
        if correlation > 0:
            weight = (1 - min(correlation, 0.99)) / min(correlation, 0.99)  # a + b of the beta
            log_chance = sum(math.log((side * weight + j) / (weight + j)) for n in counts for j in range(int(n)))
            return math.exp(log_chance / total), total
    # Binomial noise alone: the share is known from the past's events, as far as they tell (the beta of its events on
    # that side, plus one, and on the other, plus one), one share for the whole run. A past of 3 events, 2 of them
    # so, is no 60% known: trial 103's Toyota, none of 2 and 49 new models a gas guzzler after 1 of 3, was doubted
    # at 60% to the 51st power, 5e-12; it is 1 in 240. A long past gives its share's power, as before.
    weight = float(np.sum(sizes)) + 2
    log_chance = sum(math.log((side * weight + j) / (weight + j)) for j in range(int(total)))
    return math.exp(log_chance / total), total


def chance_of_repeats(repeated: int, rows: int, rate: float) -> float:
    """The chance of `repeated` repeats or more among `rows` rows where each is a repeat at `rate`: the binomial
    upper tail, summed from its first term while the terms still count. At a rate of 0 any repeat has no chance."""
    if repeated <= rows * rate:
        return 1.0
    if rate <= 0:
        return 0.0
    log_first = (math.lgamma(rows + 1) - math.lgamma(repeated + 1) - math.lgamma(rows - repeated + 1)
                 + repeated * math.log(rate) + (rows - repeated) * math.log1p(-rate))
    term, total, j = math.exp(log_first), 0.0, repeated
    while j <= rows and term > total * 1e-12:
        total += term
        term *= (rows - j) / (j + 1) * rate / (1 - rate)
        j += 1
    return min(total, 1.0)


def _before(table: np.ndarray, filled: np.ndarray, twin_of: Sequence[int | None], t: int, twin: int) -> np.ndarray:
    """The row before row `t` (NaN where not filled), which `_by_change` moves from; all NaN where that row is itself
    the twin of the row before `twin`: a block of old rows republished moves from row to row as it moved then, and
    each step of a replay is no fresh coincidence."""
    if t == 0 or (twin > 0 and twin_of[t - 1] == twin - 1):
        return np.full(table.shape[1], np.nan)
    return np.where(filled[t - 1], table[t - 1], np.nan)


def _chance_of_a_twin(row: np.ndarray, mask: np.ndarray, past: np.ndarray, filled: np.ndarray, twin: int,
                      earlier: int, before: np.ndarray) -> float:
    """The chance that `row` equals one of the entity's `past` rows (the row `twin` it repeats left out) by
    coincidence. In one column, a past row agrees with the row's value at the larger of the share of the column's
    past values that are that value and the rate at which two of its past values coincided (integer sums in a narrow
    range coincide often, each value seen once); a figure written to the dollar that no two past values shared
    makes a coincidence none. Across columns the chances multiply as far as each column says something the columns
    before it did not: taken from the most telling, each column's chance counts to the power of the share of its
    changes the columns before it leave unexplained (1 - R², adjusted), so a mean that is its sum over a fixed
    count, or a minimum and maximum that move with it, is no second and third coincidence (trial 98: a block's
    monthly ozone sum, mean, minimum and maximum equal to its row of two years before, each value seen once,
    doubted as 1 in 10 million). Each of the `earlier` rows with a filled column (the row's twin left out) is one
    more chance: a judged row is compared with every row before it, the judged ones too, and a late row of a short
    past has many more than the past's. `before`: the row before it (NaN where not filled)."""
    others = filled.copy()
    if twin < len(others):
        others[twin] = False
    columns = [int(c) for c in np.flatnonzero(mask)]
    alike = {c: _agreement(row[c], past[:, c][others[:, c]], before[c]) for c in columns}
    if min(alike.values(), default=1.0) <= 0.0:
        return 0.0
    changes = {c: _changes(np.where(others[:, c], past[:, c], np.nan)) for c in columns}
    told: list[np.ndarray] = []
    log_chance = 0.0
    for c in sorted(columns, key=lambda c: alike[c]):
        log_chance += (1.0 - _explained(changes[c], told)) * math.log(min(alike[c], 1.0))
        told.append(changes[c])
    chance = math.exp(log_chance)
    return float(-np.expm1(max(earlier - 1, 1) * np.log1p(-min(chance, 1 - 1e-12))))


def _agreement(value: float, seen: np.ndarray, before: float) -> float:
    """The chance that one past value of a column is `value`: the largest of the share of `seen` that are it, the
    rate at which two of them coincide, and the chance of the value itself after `before` (`_by_change`)."""
    if not len(seen):
        return 1.0
    share = float((seen == value).sum()) / len(seen)
    if len(seen) < 2:
        return share
    _, counts = np.unique(seen, return_counts=True)
    pairs = len(seen) * (len(seen) - 1) / 2
    return max(share, float((counts * (counts - 1) / 2).sum()) / pairs, _by_change(value, before, seen))


def _by_change(value: float, before: float, seen: np.ndarray) -> float:
    """The chance that a row's value in a column is `value`, coming after `before` (its value the period before), as
    the column's past period-on-period changes say: its grid (`resolution`) over their spread (normal, robust SD,
    about their median) at the distance moved. A short past of counts in a narrow range seldom shows two values
    alike, yet they coincide: US births on a Tuesday, about 12,700 written whole and moving by a few hundred a week,
    land on one of 78 earlier Tuesdays several times a year, and "no two past values alike" made a Tuesday equal to
    one six weeks before a 1-in-a-million repeat (trial 130). A dollar figure's spread over its grid makes a
    coincidence as rare as ever, and a row far from the one before it (a row from long ago, republished) is no
    coincidence at any grid. 0 where the past is too short, has no spread or no grid, or no value came before."""
    finite = seen[np.isfinite(seen)]
    if len(finite) < MIN_SAMPLE or not math.isfinite(before):
        return 0.0
    steps = np.diff(finite)
    middle = float(np.median(steps))
    spread = 1.4826 * float(np.median(np.abs(steps - middle))) or float(np.std(steps))
    grid = resolution(finite, math.inf)
    if spread <= 0 or not math.isfinite(grid):
        return 0.0
    return band_chance(grid, spread, value - before - middle)


def _explained(changes: np.ndarray, told: Sequence[np.ndarray]) -> float:
    """The share of a column's past period-on-period `changes` (log scale) that the changes of the columns `told`
    explain linearly, adjusted for their number (0 where too few periods say, or none were told)."""
    if not told:
        return 0.0
    matrix = np.column_stack([changes, *told])
    rows = matrix[np.isfinite(matrix).all(axis=1)]
    n, k = len(rows), len(told)
    if n < max(MIN_SAMPLE, k + 3):
        return 0.0
    y, x = rows[:, 0], np.column_stack([np.ones(n), rows[:, 1:]])
    total = float(((y - y.mean()) ** 2).sum())
    if total == 0.0:
        return 0.0
    residual = float(((y - x @ np.linalg.lstsq(x, y, rcond=None)[0]) ** 2).sum())
    adjusted = 1.0 - (residual / total) * (n - 1) / (n - k - 1)
    return min(max(adjusted, 0.0), 1.0)


def _changes(values: np.ndarray) -> np.ndarray:
    """Period-on-period changes on the column's own scale (`period_changes`; signed where it goes below 0)."""
    finite = values[np.isfinite(values)]
    return period_changes(values, signed=bool(len(finite) and finite.min() < 0))


def repeated_rows(found: Findings, spec: IntegritySpec, columns: Sequence[str],
                  silent: np.ndarray | None = None) -> None:
    """A judged row equal, in every filled column, to another period's row, where the entity's own past rows
    (nearly) never repeat and that many repeats among the judged rows are improbable (binomial) at the chance of a
    coincidence: the larger of the past rows' rate of repeats and the repeating rows' `_chance_of_a_twin`. A dollar
    total makes any repeat improbable; rows of the commonest few events a month (1 strike, 1 bird, none at night)
    make one or two among 18 judged rows likely even where none of 21 past rows happened to repeat. The latest
    such row is reported, with how many there are. `silent`: as `stuck`'s, an events source's periods without an
    event, whose rows of zeros no feed wrote, are no row of either side."""
    series = found.series
    table = np.column_stack([series.values[c] for c in columns])
    filled = np.isfinite(table) & (np.ones(series.length, dtype=bool) if silent is None else ~silent)[:, None]
    # each row's nearest earlier row with the same filled columns and the same values in them, by one pass over
    # the rows keyed by their bytes (-0.0 written as 0.0): a comparison of every pair cost a night 0.4 s
    twin_of: list[int | None] = []
    latest: dict[tuple[bytes, bytes], int] = {}
    for t, (row, mask) in enumerate(zip(table, filled, strict=True)):
        key = (mask.tobytes(), (np.where(mask, row, 0.0) + 0.0).tobytes())
        twin_of.append(latest.get(key) if mask.sum() >= spec.repeated_rows.min_columns else None)
        latest[key] = t

    past = [twin_of[t] is not None for t in range(series.judged_from) if filled[t].sum()]
    rate = (sum(past) + 1) / (len(past) + 2)
    if len(past) < MIN_SAMPLE:
        _repeated_on_a_short_past(found, spec, columns, table, filled, twin_of)
        return
    if rate > spec.repeated_rows.max_rate:
        return
    twins = [(t, twin) for t in range(series.judged_from, series.length) if (twin := twin_of[t]) is not None]
    if not twins:
        return
    judged = int((filled[series.judged_from:].sum(axis=1) >= spec.repeated_rows.min_columns).sum())
    each = max(sum(past) / len(past), float(np.mean([
        _chance_of_a_twin(table[t], filled[t], table[: series.judged_from], filled[: series.judged_from], twin,
                          int(filled[:t].any(axis=1).sum()), _before(table, filled, twin_of, t, twin))
        for t, twin in twins])))
    if chance_of_repeats(len(twins), judged, each) >= spec.repeated_rows.max_probability:
        return  # as many repeats among the judged rows as the entity's own rows make likely
    t, twin = twins[-1]
    more = f"; {len(twins)} judged rows repeat an earlier one" if len(twins) > 1 else ""
    names = ", ".join(c for c, f in zip(columns, filled[t], strict=True) if f)
    found.add("repeated_row", spec.repeated_rows.effect, "row", [twin, t], None, float(len(twins)),
              f"the row for {series.periods[t]} repeats {series.periods[twin]} exactly in all {int(filled[t].sum())} "
              f"filled columns ({names}){more}; {rate:.0%} of the entity's past rows repeated an earlier one",
              f"confirm the {series.periods[t]} row with the source (it repeats {series.periods[twin]})")


def _repeated_on_a_short_past(found: Findings, spec: IntegritySpec, columns: Sequence[str], table: np.ndarray,
                              filled: np.ndarray, twin_of: Sequence[int | None]) -> None:
    """A judged row equal in every filled column to the row just before it, on a past too short for a rate of
    repeats (`repeated_rows`' `MIN_SAMPLE` rows): judged by the chance its rounding allows. In each column, the
    larger of the share of the entity's other moves that were none and the chance of a move under its step (its
    `resolution` over the spread of its other moves, normal); across columns the least of these (the columns may
    move as one), then one chance per judged row. Trial 132: a Swedish municipality's spending, own revenue and
    grants per head, written to 7 decimals on a 9-year panel, carried forward unchanged for a year, reached act-on
    on every night: no rule had the six past changes it asks for."""
    series, rule = found.series, spec.repeated_rows
    judged = [t for t in range(max(series.judged_from, 1), series.length) if filled[t].sum() >= rule.min_columns]
    repeats = [t for t in judged if twin_of[t] == t - 1]
    if not repeats:
        return
    t = repeats[-1]
    chances = []
    for c in np.flatnonzero(filled[t]):
        moves = np.diff(table[:, c][np.isfinite(table[:, c])])
        others = np.delete(moves, np.flatnonzero(moves == 0)[-1:])  # the repeat's own move left out
        moved = np.abs(others[others != 0])
        if len(moved) < 2:
            return  # nothing to judge a move by
        spread = robust_scale(moved, 0.0)  # (every move here is above 0: 1.4826 × their median)
        step = resolution(table[:, c], float(moved.min()), FINEST_DECIMALS)
        chances.append(max(float(np.mean(others == 0)), band_chance(step, spread)))
    chance = -math.expm1(len(judged) * math.log1p(-min(min(chances), 1 - 1e-12)))
    if chance >= rule.max_probability:
        return
    names = ", ".join(columns[int(c)] for c in np.flatnonzero(filled[t]))
    found.add("repeated_row", rule.effect, "row", [t - 1, t], None, 1.0,
              f"the row for {series.periods[t]} repeats {series.periods[t - 1]} exactly in all "
              f"{int(filled[t].sum())} filled columns ({names}), to the last written digit; on a past too short "
              f"for a rate of repeats, its rounding allows that by chance {significant(chance)}",
              f"confirm the {series.periods[t]} row with the source (it repeats {series.periods[t - 1]})")


_ON_GRID_BY_CHANCE = 0.5
"""The chance that a value of a column written with more decimals than its past showed lands on the past's grid
anyway: half its values, where its true step is the coarsest finer one (0.5 of a column in whole numbers, 0.05 of
one in tenths)."""


def precision(found: Findings, spec: IntegritySpec, column: str, shared: Mapping[str, int] | None = None) -> None:
    """A judged value with more decimals than every past value of the column had. Judged where the past values are
    too many to have all fallen on their grid by chance had the column been written finer (`_ON_GRID_BY_CHANCE`
    each, below `precision.max_probability`: ten values at the default 0.001), not `min_history`: a market with 21
    months of inventory in tenths before its judged span, then 4.55271713 (a feed computing it otherwise), went
    unjudged (trial 52: Corpus Christi's first design nights, sales, listings or inventory rescaled). Not where the
    median of tonight's entities writes the column with more decimals than the entity's past in that period too
    (`shared`, `Candidate.shared_decimals`): the feed's format changed for every entity (trial 67: a county panel's
    three columns written with 3 decimals from 1993, 2 before, doubted 8 of 29 clean act-on picks)."""
    series = found.series
    raw = series.values[column]
    past = raw[: series.judged_from]
    if _ON_GRID_BY_CHANCE ** np.isfinite(past).sum() >= spec.precision.max_probability:
        return
    places = decimals(past, spec.precision.max_decimals)
    if places is None:
        return
    judged = raw[series.judged_from:]
    with np.errstate(invalid="ignore"):  # a value with more decimals is off the grid of `places` decimals
        off = np.isfinite(judged) & ~on_grid_each(judged, 10.0 ** -places)
    finer = [series.judged_from + int(i) for i in np.flatnonzero(off)]
    if not finer:
        return
    t = finer[0]
    if shared is not None and shared.get(str(len(raw) - 1 - t), 0) > places:
        return  # written as the feed writes every entity's figure that period
    unit = "whole numbers" if places == 0 else f"at most {places} decimal{'s' if places > 1 else ''}"
    more = f", and {len(finer) - 1} later value{'s' if len(finer) > 2 else ''} too" if len(finer) > 1 else ""
    found.add("precision", spec.precision.effect, column, finer, float(raw[t]), float(len(finer)),
              f"{column} {significant(float(raw[t]), 12)} in {series.periods[t]} has more decimals than any of its "
              f"{int(np.isfinite(past).sum())} values since {series.periods[0]} ({unit}){more}: the figure was "
              f"computed or converted differently",
              f"confirm {column} from {series.periods[t]} on with the source (its unit and how it is computed)")


_SIGNIFICANT = 5
"""Significant figures of a full-precision column's size the finest grid `rounded` judges it on keeps: finer, a
single-precision float's own grid shows (7 figures; Penn World Table's capital stock, 672,745 and up, fell on tenths
three years running where its smaller past had not)."""
_UNREAD_POWER = 3
"""Powers of ten coarser than its own that a column no metric reads must have gone for `rounded` to judge it:
digits lost to a feed that estimates or converts, not a publisher writing counts in round tens."""
_COARSER_GRIDS = 3
"""Grids judged beyond the column's own, at least: 10, 100 and 1,000 times its resolution; for a column in whole
numbers, on up to a tenth of the figures' order of magnitude (a population in whole people, millions of them,
truncated to ten thousands)."""


def rounded(found: Findings, spec: IntegritySpec, column: str, reads: frozenset[int] | None = None,
            computed: bool = True, metrics_read: bool = True) -> None:
    """A run of judged values on a grid coarser than the column's own (sales in whole numbers now all in round tens
    or hundreds: the feed rounds, estimates or converts them), where its past values fell on that grid too rarely
    for such a run by chance: the chance of a value on the grid is the share of its past new values that were
    (Laplace-smoothed), and a run counts where that share raised to the run's length is below
    `precision.max_probability` (as for `stuck`). Only values that moved count (a repeat is `stuck`'s, and says
    nothing of rounding), and a zero is on every grid: it counts neither way. The `precision` rule's effect; judged
    in full in the columns the metrics read: a figure rounded is still the figure, and only there can its lost
    precision move a verdict (the Texas file writes listings, which no metric reads, in round tens for months). In a
    column no metric reads (not `metrics_read`) only grids `_UNREAD_POWER` powers of ten or more coarser count: three
    digits and more gone from a figure written to the unit is the feed estimating or converting its rows, a doubt on
    the figures beside it (trial 139: the sales volume, written to the dollar, floored to 4 significant figures from a
    month on, in 9 plant-nights that reached act-on).
    Judged from `MIN_SAMPLE` past values, not `min_history`: the smoothed share already asks a short past for a
    longer run (an annual panel's twenty years of GDP a head never in round thousands, then 4,000 and 5,000 and
    6,000, had gone unjudged: its past was four values short). `reads`: as `stuck`'s, a run must hold a period a
    metric reads. A past computed to full precision (on no grid of 6 decimals or fewer) is judged against every
    grid from the figures' size down to their `_SIGNIFICANT`-th figure (a millionth at most), the coarsest first
    (trial 104: trade in % of GDP, 15 digits, written in whole numbers from a year on, reached act-on with no
    finding), unless not `computed` (an events source's average or share, a quotient of few events: whole by the
    counts' arithmetic)."""
    series, rule = found.series, spec.precision
    read = _read_mask(series.length, reads)
    raw = series.values[column]
    past = raw[: series.judged_from]
    if np.isfinite(past).sum() < MIN_SAMPLE:
        return
    if decimals(past, 6) is not None:
        own = resolution(past, math.inf)
        whole = own >= 1  # a count's last digits fall alike; decimals dropped when zero may not (a float's 663,268)
        size = float(np.nanmedian(np.abs(past)))
        coarser = max(_COARSER_GRIDS, math.floor(math.log10(size / own)) - 1) if whole and size > own \
            else _COARSER_GRIDS
        grids = [own * 10.0 ** power for power in range(1 if metrics_read else _UNREAD_POWER, coarser + 1)]
        written = format_number(own)
    elif computed:
        whole = False
        size = float(np.nanmedian(np.abs(past)))
        finest = 10.0 ** (math.floor(math.log10(size)) - _SIGNIFICANT + 1) if size > 0 else math.inf
        finest_judged = finest * (1.0 if metrics_read else 10.0 ** _UNREAD_POWER)
        grids = [10.0 ** power for power in range(9, -7, -1) if finest_judged <= 10.0 ** power <= size]
        written = "full precision"
    else:
        return
    previous = np.concatenate([[np.nan], raw[:-1]])
    with np.errstate(invalid="ignore"):
        moved = np.isfinite(raw) & (raw != 0) & (raw != previous)
    past_moved = np.flatnonzero(moved[: series.judged_from])
    worst: tuple[float, float, float, list[int]] | None = None
    for grid in grids:
        on = on_grid_each(np.nan_to_num(raw), grid)
        share = (float(on[past_moved].sum()) + 1) / (len(past_moved) + 2)
        tried = 1
        if whole and not on[past_moved].any():
            # no past value on it: a value lands there by its rounding alone, for each grid tried (a long past's
            # smoothed share, 1 in 50 for 48 values, left a population truncated to ten thousands unjudged)
            share, tried = own / grid, len(grids)
        run: list[int] = []
        best: list[int] = []
        for t in range(series.judged_from, series.length):
            if moved[t]:
                run = [*run, t] if on[t] else []
                best = run if len(run) > len(best) and read[run].any() else best
        chance = share ** len(best) * tried
        if best and chance < rule.max_probability and (worst is None or chance < worst[0]):
            worst = (chance, grid, float(on[past_moved].mean()) if len(past_moved) else 0.0, best)
    if worst is None:
        return
    chance, grid, share, run = worst
    shown = ", ".join(format_number(float(raw[t])) for t in run[-4:])
    found.add("rounded", rule.effect, column, run, float(raw[run[-1]]), float(len(run)),
              f"{column} is a multiple of {format_number(grid)} "
              + (f"in each of its {len(run)} changed values "
                 f"{period_span([series.periods[run[0]], series.periods[run[-1]]])}" if len(run) > 1
                 else f"in {series.periods[run[0]]}")
              + f" ({shown}), a grid {share:.0%} of its "
              f"past values since {series.periods[0]} fell on (written to {written}): a run this long has "
              f"probability {chance:.1e}; the figure is rounded, estimated or converted",
              f"confirm {column} from {series.periods[run[0]]} on with the source (rounded or estimated?)")


def _longest_run(match: np.ndarray, first: int, begun: int | None = None) -> list[int]:
    """The indices of the longest run of `match` holding an index from `first` on (the earliest of equally long
    ones). `begun`: a run already going at `first` is taken whole, back to where it began (not before `begun`):
    otherwise its earlier part stays in the past a run is judged against, and a long run excuses itself."""
    run: list[int] = []
    best: list[int] = []
    for t in range(first, len(match)):
        run = [*run, t] if match[t] else []
        if begun is not None and run == [first]:
            while run[0] - 1 >= begun and match[run[0] - 1]:
                run.insert(0, run[0] - 1)
        best = run if len(run) > len(best) else best
    return best


def echoed(found: Findings, spec: IntegritySpec, column: str) -> None:
    """The longest run of judged changes each equal to the change a year earlier (`Series.per_year` periods) to
    the rounding of the four figures, both moves real (an unchanged pair is `stuck`'s), where such a run is too
    improbable (`EchoRule`): the per-change chance is the larger of the entity's past rate of echoes before the
    run and the rounding band's width against the spread of its past differences from a year earlier (a rate
    smoothed up from none, 1 in 46 past changes, would hide a four-change echo of a year ago behind a floor the
    rounding does not justify). On the log scale; positive figures only (a ratio means nothing across zero)."""
    series, rule = found.series, spec.echoed
    lag, raw = series.per_year, series.values[column]
    if lag < 2 or series.length <= lag + 1 + rule.min_periods:
        return
    past = raw[: series.judged_from]
    if not np.isfinite(past).any():
        return
    step = resolution(past[np.isfinite(past)], math.inf)
    with np.errstate(all="ignore"):
        inverse = np.where(raw > 0, 1 / raw, np.nan)
        change = np.full(series.length, np.nan)
        change[1:] = np.log(raw[1:] * inverse[:-1])
        band = np.full(series.length, np.nan)
        band[1:] = step / 2 * (inverse[1:] + inverse[:-1])
        echo, tolerance = np.full(series.length, np.nan), np.full(series.length, np.nan)
        echo[lag:], tolerance[lag:] = change[lag:] - change[:-lag], band[lag:] + band[:-lag]
        moved = np.isfinite(change) & (change != 0)
        judged = np.zeros(series.length, dtype=bool)
        judged[lag:] = moved[lag:] & moved[:-lag] & np.isfinite(echo[lag:]) & np.isfinite(tolerance[lag:])
        match = judged & (np.abs(echo) <= tolerance)
    best = _longest_run(match, max(series.judged_from, lag + 1))
    if len(best) < rule.min_periods:
        return
    before = np.flatnonzero(judged[: best[0]])
    if len(before) < spec.min_history:
        return
    spread = robust(echo[before], series.periods[int(before[0])])
    if spread is None:
        return
    rate = float(match[before].mean())
    per_change = np.maximum(rate, np.minimum(1.0, 2 * tolerance[best] / (spread.scale * math.sqrt(2 * math.pi))))
    chance = float(np.prod(per_change))
    if chance >= rule.max_probability:
        return
    shown = ", ".join(f"{as_percent(float(change[t]))} in {series.periods[t]} as in {series.periods[t - lag]}"
                      for t in best[-3:])
    found.add("echoed", rule.effect, column, best, float(raw[best[-1]]), float(len(best)),
              f"{column} moved as it did a year earlier in each of its {len(best)} changes "
              f"{period_span([series.periods[best[0]], series.periods[best[-1]]])} ({shown}), to the rounding of the "
              f"figures; its changes since {spread.since} matched a year earlier's so closely {rate:.0%} of the "
              f"time: a run this long has probability {chance:.1e}; last year's figures republished (or rescaled)?",
              f"confirm {column} from {series.periods[best[0]]} on with the source (a year earlier's figures?)")


def _second_differences(raw: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per period, its distance from the straight line through the two periods before (`x[t] - 2x[t-1] + x[t-2]`)
    and from their constant rate (the same on the log scale), each with the band the rounding of the three figures
    to `step[t]` allows (half a step each, weighted 1, 2, 1); NaN where a figure is missing (or not positive, for
    the rate)."""
    n = len(raw)
    line, rate = np.full(n, np.nan), np.full(n, np.nan)
    line_band, rate_band = np.full(n, np.nan), np.full(n, np.nan)
    line_band[2:] = 2 * step[2:]
    with np.errstate(all="ignore"):  # (figures near the float's limit, a signed 1e308, overflow to inf: no line)
        line[2:] = raw[2:] - 2 * raw[1:-1] + raw[:-2]
        positive = np.where(raw > 0, raw, np.nan)
        level, inverse = np.log(positive), 1 / positive
        rate[2:] = level[2:] - 2 * level[1:-1] + level[:-2]
        rate_band[2:] = step[2:] / 2 * (inverse[2:] + 2 * inverse[1:-1] + inverse[:-2])
    return line, line_band, rate, rate_band


@dataclass(frozen=True)
class _Even:
    """One column's periods on the straight line or the constant rate through the two before (`_even`)."""

    match: np.ndarray
    """Per period: on the line or the rate, to the rounding of the three figures, both moves real."""
    judged: np.ndarray
    """Per period: both moves real and the three figures given (a period that could match)."""
    line_band: np.ndarray
    rate_band: np.ndarray
    line: np.ndarray
    rate: np.ndarray


FLOAT_SLACK = 1e-9
"""A figure computed to full precision (on no grid of 6 decimals or fewer) is judged even within this share of the
three figures' size: a float's own rounding, written and read back, is 1e-15 of it, and measured figures lie that
near a line by no chance worth counting (trial 104: trade in % of GDP, 15 digits, filled in by a straight line over
two and three years, reached act-on 16 of 18 times with no finding, the rule judging only figures on a grid)."""


def _even(series: Series, column: str, computed: bool = True) -> _Even | None:
    """The column's periods on the line or the rate through the two before, the rounding the past's or, where a
    judged figure and the one before it are written coarser, theirs (an outage filled in at the publisher's rounding
    beside the real figure before it, written finer); for figures on no grid, a float's (`FLOAT_SLACK`), unless not
    `computed` (an events source's average or share, a quotient of few events: its figures fall on a line by the
    counts' arithmetic); None where its past has no figure."""
    raw = series.values[column]
    past = raw[: series.judged_from]
    if not np.isfinite(past).any():
        return None
    written = resolution(past[np.isfinite(past)], math.inf)
    if math.isfinite(written):
        step = np.full(series.length, written)
    elif not computed:
        return None
    else:
        size = np.abs(np.nan_to_num(raw))
        step = np.zeros(series.length)
        step[2:] = FLOAT_SLACK * np.maximum(np.maximum(size[2:], size[1:-1]), size[:-2])
    for t in range(max(series.judged_from, 2), series.length):  # judged figures written coarser: their rounding
        if math.isfinite(own := resolution(raw[t - 1: t + 1], math.inf)):
            step[t] = max(step[t], own)
    line, line_band, rate, rate_band = _second_differences(raw, step)
    moved = np.zeros(series.length, dtype=bool)
    moved[1:] = np.isfinite(raw[1:]) & np.isfinite(raw[:-1]) & (raw[1:] != raw[:-1])
    judged = np.zeros(series.length, dtype=bool)
    judged[2:] = moved[2:] & moved[1:-1]
    with np.errstate(invalid="ignore"):
        match = judged & ((np.abs(line) <= line_band) | (np.abs(rate) <= rate_band))
    return _Even(match=match, judged=judged, line_band=line_band, rate_band=rate_band, line=line, rate=rate)


def _even_chances(even: _Even, periods: Sequence[str], before: np.ndarray, run: Sequence[int]
                  ) -> tuple[np.ndarray, float, str] | None:
    """Per period of `run`, the chance of a move so even by accident, against the periods `before` it: the larger
    of their rate of such moves and the two rounding bands against the spread of their second differences (on the
    line and on the rate, added); with that rate and the first of those periods. None where their spread is none."""
    since = periods[int(before[0])]
    line_spread, rate_spread = robust(even.line[before], since), robust(even.rate[before], since)
    if line_spread is None:
        return None
    by_rounding = 2 * even.line_band[run] / (line_spread.scale * math.sqrt(2 * math.pi))
    if rate_spread is not None:
        by_rounding = by_rounding + 2 * np.nan_to_num(even.rate_band[run], nan=0.0) / (rate_spread.scale
                                                                                      * math.sqrt(2 * math.pi))
    rate = float(even.match[before].mean())
    return np.maximum(rate, np.minimum(1.0, by_rounding)), rate, since


def interpolated(found: Findings, spec: IntegritySpec, column: str, computed: bool = True) -> None:
    """The longest run of judged periods each on the straight line, or the constant rate, through the two periods
    before it (to the rounding of the three figures; both moves real: an unchanged pair is `stuck`'s), where such
    a run is too improbable (`InterpolatedRule`): per period, the larger of the entity's past rate of moves so even
    before the run and the two rounding bands' widths against the spread of its past second differences (each on
    its own scale, added). `computed`: as `_even`'s."""
    series, rule = found.series, spec.interpolated
    raw = series.values[column]
    if series.length < 2 + rule.min_periods:
        return
    even = _even(series, column, computed)
    if even is None:
        return
    best = _longest_run(even.match, max(series.judged_from, 2), begun=2)
    if len(best) < rule.min_periods:
        return
    before = np.flatnonzero(even.judged[: best[0]])
    if len(before) < spec.min_history:
        return
    chances = _even_chances(even, series.periods, before, best)
    if chances is None:
        return
    each, rate, since = chances
    chance = float(np.prod(each))
    if chance >= rule.max_probability:
        return
    start = best[0] - 2
    shown = ", ".join(format_number(float(v)) for v in raw[start: best[-1] + 1][-6:])
    found.add("interpolated", rule.effect, column, list(range(start, best[-1] + 1)), float(raw[best[-1]]),
              float(len(best)),
              f"{column} moved by an even step or rate in each of its {len(best) + 1} moves "
              f"{period_span([series.periods[start], series.periods[best[-1]]])} ({shown}), to the rounding of the "
              f"figures; its moves since {since} were so even {rate:.0%} of the time: a run this long has probability "
              f"{chance:.1e}; figures filled in (interpolated or carried forward), not measured?",
              f"confirm {column} from {series.periods[start + 1]} on with the source (filled in, not measured?)")


_MOST_ROW_COLUMNS = 10
"""Most columns whose every set `_row_chance` sums over: 2^10 sets take 2 ms, 2^16 a quarter of a second, too long
for each of a wide night's candidates; a wider row is judged by a bound instead."""


def _row_chance(chances: Mapping[str, float], members: Sequence[str]) -> float:
    """The chance that a row is at least as even as this one by accident: that some set of two or more of its
    columns is even at once with a joint chance no larger than that of `members`, each column even by its own
    chance (`chances`) independently of the others; over `_MOST_ROW_COLUMNS` columns, the bound of that joint
    chance times the number of such sets. The sum over sets counts the choice of which columns were the even ones:
    a row's five columns give 26 sets to find one in."""
    observed = math.prod(chances[c] for c in members)
    columns = list(chances)
    if len(columns) > _MOST_ROW_COLUMNS:
        return min(1.0, observed * (2 ** len(columns) - len(columns) - 1))
    total = 0.0
    for mask in range(1 << len(columns)):
        chosen = [c for i, c in enumerate(columns) if mask >> i & 1]
        joint = math.prod(chances[c] for c in chosen)
        if len(chosen) >= 2 and joint <= observed * (1 + 1e-9):
            total += joint * math.prod(1 - chances[c] for c in columns if c not in chosen)
    return min(1.0, total)


def interpolated_row(found: Findings, spec: IntegritySpec, columns: Sequence[str],
                     quotients: frozenset[str] = frozenset()) -> None:
    """The latest periods in which two or more columns each lie on the straight line, or the constant rate, through
    their two periods before, at once: a row filled in (an outage interpolated across the whole row), seen a night
    after it began, when each column holds one such period and `interpolated`'s run of `min_periods` is not there
    yet, or a night after it ended, when a measured figure follows it and each column's run alone is not improbable
    enough. One decision per night: the columns even in the latest judged period two or more are even in (its
    chance times the periods searched back to it), a run back while they all are, each
    column's chance that of its periods in the run (`_even_chances`, against its periods before the run; a column
    not even, its latest period's), the row's `_row_chance`, below `InterpolatedRule.max_probability`. `quotients`:
    the columns `_even` judges only on a grid."""
    series, rule = found.series, spec.interpolated
    first = max(series.judged_from, 2)
    if series.length - 1 < first:
        return
    every = {c: e for c in columns if (e := _even(series, c, c not in quotients)) is not None}
    # the latest judged period two or more columns are even in at once: a row filled in and then a real figure
    # after it (trial 113: a state's four prisoner counts on straight lines over three quarters, the next quarter
    # as measured, each column's run of 3 alone at 6e-6, the row's unjudged)
    latest = next((t for t in range(series.length - 1, first - 1, -1)
                   if sum(bool(e.judged[t] and e.match[t]) for e in every.values()) >= 2), None)
    if latest is None:
        return
    evens = {c: e for c, e in every.items() if e.judged[latest]}
    members = [c for c, e in evens.items() if e.match[latest]]
    run = [latest]
    while run[0] - 1 >= max(series.judged_from, 2) and all(evens[c].match[run[0] - 1] for c in members):
        run.insert(0, run[0] - 1)
    chances: dict[str, float] = {}
    for column, even in evens.items():
        judged = run if column in members else [latest]
        before = np.flatnonzero(even.judged[: judged[0]])
        each = _even_chances(even, series.periods, before, judged) if len(before) >= spec.min_history else None
        if each is None:
            if column in members:
                return
            continue
        chances[column] = float(np.prod(each[0]))
    # (each period searched back from the latest one more chance to find such a row)
    chance = min(1.0, _row_chance(chances, members) * (series.length - latest))
    if chance >= rule.max_probability:
        return
    start = run[0] - 2
    shown = "; ".join(f"{c} " + ", ".join(format_number(float(v)) for v in series.values[c][start: latest + 1][-4:])
                      for c in members)
    also = "" if len(run) == 1 else \
        f", and so in each of the {len(run)} periods {period_span([series.periods[run[0]], series.periods[latest]])}"
    found.add("interpolated", rule.effect, "/".join(members), list(range(start, latest + 1)),
              None, float(len(run)),
              f"{', '.join(members)} in {series.periods[latest]} each lie on the straight line, or the constant rate, "
              f"through their two figures before, to the rounding of the figures ({shown}){also}: by how often each "
              f"column's own past moves were so even, a row this even has probability {chance:.1e} (any "
              f"{len(chances)} of its columns counted as the even ones); a row filled in (interpolated or carried "
              "forward), not measured?",
              f"confirm {', '.join(members)} from {series.periods[start + 1]} on with the source (filled in, not "
              "measured?)")
