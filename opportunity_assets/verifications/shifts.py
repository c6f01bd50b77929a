"""A level that moved: a column's level shifts, unit changes and one-period spikes (`shifts`), a step over the
last days that stays on a daily grain (`stays`), and a value beyond everything before it (`out_of_range`): the
integrity checks (`integrity.check`) that judge each numeric column's moves against the entity's own past moves.

Changes are measured on a log scale (`series.log_level`); "MADs" are robust standard deviations of the entity's
own changes (`series.yardstick`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from opportunity_assets.formatting import percent_change, times
from opportunity_assets.verifications.integrity_spec import IntegritySpec
from opportunity_assets.verifications.series import (
    MIN_SAMPLE,
    MIN_SCALE,
    Findings,
    Series,
    Yardstick,
    as_percent,
    format_number,
    is_share,
    log_level,
    on_grid_each,
    period_changes,
    period_span,
    robust,
    share_changes,
    share_level,
    share_noise,
    unit_sized,
    unit_step,
    yardstick,
)


@dataclasses.dataclass(frozen=True)
class ColumnFacts:
    """One column of a candidate's, with what its moves are judged by beyond its own values."""

    column: str
    material: frozenset[int] = frozenset()
    """Periods back the score reads: a shift there is judged at `level_shift.material_mads`, the verdict rests on
    it."""
    shared: Mapping[str, float] | None = None
    """Tonight's entities' median change into each period, by periods back (`Candidate.shared_changes`): a move they
    all made is no entity's shift."""
    spread: Mapping[str, float] | None = None
    """Tonight's entities' robust spread of their changes into each period, by periods back
    (`Candidate.shared_spreads`): with `shared`, the yardstick of one period's changes across entities
    (`_with_peers`)."""
    signed: bool = False
    """The pack declares the column may go negative (`series.log_level`)."""
    domain: float | None = None
    """The typical scale of tonight's entities' own changes of the column (`Candidate.typical_scales`), which a short
    history's yardstick is widened toward (`series.widened`)."""
    events: np.ndarray | None = None
    """For an events source's `share`, each period's count of events, whose binomial noise no change of the share is
    judged against less than (`series.share_noise`), on the scale where that noise is the same at any level
    (`series.share_changes`)."""
    unwritten: np.ndarray | None = None
    """For an events source's `sum`, the periods without an event, whose 0 no feed wrote: a change into or out of one
    is the count's, judged on the count (trial 49: a study plot not trapped one month, its captures 5 -> 0 within a
    count's noise, its grams weighed 500 -> 0 "7.8 MADs below, a one-period drop"); they stay in its yardstick, the
    moves its feed has made."""


_FEW_VALUES = 3
"""Fewest earlier values a series too new for a rule's own minimum is judged from (at a stricter bound)."""

BELOW_EVERY = "of the smallest positive"
"""How an `out_of_range` finding below every earlier value words its side (`integrity.headline` reads it)."""


def _seasonal(series: Series, changes: np.ndarray, years: int = 1) -> np.ndarray:
    """Each change against the same change `years` earlier: what is left of it once the season is taken out."""
    out = np.full(series.length, np.nan)
    lag = series.per_year * years
    if lag < series.length:
        out[lag:] = changes[lag:] - changes[:-lag]
    return out


def _season_stick(series: Series, seasonal: np.ndarray, min_history: int, years: int) -> Yardstick | None:
    """The yardstick of the changes against the same change `years` earlier (`_seasonal`); none from fewer than
    `min_history` of them (a short history: too few to excuse a move as the season's, or to judge one by)."""
    stick = yardstick(series, seasonal, min_history, start=min(series.per_year * years, series.length - 1))
    return None if stick is None or stick.count < min_history else stick


def _far(stick: Yardstick, season: Yardstick | None, value: float, seasonal: float) -> float:
    """How far out a change is, in MADs of the entity's own changes; where a year of history exists, it must be
    far out against the same change a year earlier too (a move the season makes every year is not a defect)."""
    z = stick.z(value)
    if season is not None and math.isfinite(seasonal):
        return _far_on_both(z, season.z(seasonal))
    return z


def _seam(change: float, far: float, seasons: tuple[float, float], beside: Sequence[float]) -> float:
    """How far out a change is (`far`, as `_far` has it) or, where further, against the same change one year and
    two years earlier (`seasons`: its distance on each of those yardsticks), on the same side as the change itself
    (`change`: its distance among its period-on-period changes), and alone: the periods either side (`beside`:
    their distances against a year earlier, NaN where none) less than half as far out on that side. A column whose
    months move by a season (sales up 30% every spring) has wide period-on-period changes, and a level that moved
    with them, held after, reads as a few MADs only; the same change a year earlier takes the season out, and two
    years earlier must agree, so that a broken month a year back is no break tonight. Trial 58: a history restated
    (the 24 months before a break x0.6, the break month as published) left Austin's sales +89% into 2006-06, 3.2
    MADs of its period-on-period changes, 5.8 against a year earlier's: no finding. A seam is one period's: a
    trend that turned moves several periods against a year earlier, each as far (an industry's jobs in a
    recession, -2.0%, -3.8%, -2.5% against the year before's changes in three months running), and is no break."""
    seam = _far_on_both(*seasons)
    alone = all(not side * math.copysign(1, seam) >= abs(seam) / 2 for side in beside)
    return seam if seam * change > 0 and abs(seam) > abs(far) and alone else far


def _far_on_both(z: float, other: float) -> float:
    """A change's distance that must hold against two yardsticks: the nearer of the two, if both lie on the same
    side, else none."""
    return math.copysign(min(abs(z), abs(other)), z) if z * other > 0 else 0.0


def _beyond_shared(z: float, stick: Yardstick, change: float, shared: float | None) -> float:
    """How far out a change is once the unusual part of the move tonight's entities made alike into its period
    (`shared`: that move beyond their usual one, if enough had one) is taken out: it must lie far out against the
    entity's own changes with that part taken out too, on the same side (trial 39: the federal tax rise of 1991
    every state took, +7% against a state's typical +0% ± 0.5%, doubted each state's act-on pick as a level
    shift). A defect of one entity's feed is not shared; a usual year's shared move (populations growing 2%) is
    already in the entity's own changes, and taking it out twice would excuse a planted +5%."""
    return z if shared is None else _far_on_both(z, stick.z(change - shared))


def _unusual_shared(shared: Mapping[str, float] | None, unit_slip: float) -> dict[str, float]:
    """Each period's shared move beyond the usual one (the median of the column's shared moves over the kept
    history), by periods back; none where too few periods tell what is usual, and none for a move nearer a unit
    slip's size than none (`unit_sized`): a real event moves a whole domain by tens of percent, a feed changing its
    units moves every entity by the factor alike, and a move every entity made is then the feed's defect, not the
    world's (×0.1 into the latest year would otherwise be excused for each)."""
    usual = robust(np.array(list((shared or {}).values()), dtype=float), "")
    if usual is None:
        return {}
    return {back: move - usual.median for back, move in (shared or {}).items() if not unit_sized(move, unit_slip)}


CORROBORATES = 3.0
"""MADs that make a change unusual on a yardstick without reaching its threshold: where both the entity's own past
and tonight's entities say so, the further of the two is the change's distance (`_with_peers`)."""


def _peer_z(change: float, shared: Mapping[str, float] | None, spread: Mapping[str, float] | None, back: int,
            unit_slip: float) -> float | None:
    """How far a change lies from tonight's entities' changes into its period (`back` periods back), in their
    robust spread (`ColumnFacts.spread`, at least `MIN_SCALE`); None where no spread is known for it, or where the
    entities moved alike by a unit slip's size (`unit_sized`: the feed's own change, no yardstick of an entity's)."""
    median, scale = (shared or {}).get(str(back)), (spread or {}).get(str(back))
    if median is None or scale is None or unit_sized(median, unit_slip):
        return None
    return (change - median) / max(scale, MIN_SCALE)


WIDE_SPREAD = 2.0
"""Times the column's usual spread across entities (the median over its years) that a year's spread must reach for
a move within it to be excused as that year's (`_with_peers`): a re-benchmark, not the usual dispersion of growth
rates."""


def _with_peers(own: float, peer: float, wide: bool) -> float:
    """A change's distance judged on two yardsticks: the entity's own past changes (`own`) and tonight's entities'
    changes into the same period (`peer`, `_peer_z`). Where it is unusual on both (`CORROBORATES` or more, the same
    side), the further of the two. On an annual panel the own yardstick has 8-20 past changes: a planted ×1.15 in a
    state's output read 3.7 MADs of them and 7.9 of the states' changes that year, and reached act-on (trial 67).
    Where the entities' changes spread `wide`ly that year (`WIDE_SPREAD`), a move within them is excused: the nearer
    of the two, none where they disagree in sign (a re-benchmark year that moves every state by −8% to +25%,
    Produc's private capital, read a calm state's +20% as 8 MADs of its own). In a usual year the entity's own
    yardstick stands: a calm country's infant mortality frozen a year (0% against its −3% ± 0.5%) is within the
    countries' usual spread of such changes, and had been excused (stop 49's held-out panels)."""
    near, far = sorted((abs(own), abs(peer)))
    if own * peer > 0 and near >= CORROBORATES:
        return math.copysign(far, own)
    if not wide:
        return own
    return 0.0 if own * peer <= 0 else math.copysign(near, own)


def _unit_change(shared: Mapping[str, float] | None, back: int, unit_slip: float) -> str:
    """What a finding adds where tonight's entities moved alike into its period by a unit slip's size."""
    move = (shared or {}).get(str(back))
    if move is None or not unit_sized(move, unit_slip):
        return ""
    return (f"; tonight's entities moved alike into that period, {as_percent(move)} at the median: a change of the "
            "feed's units?")


def shifts(found: Findings, spec: IntegritySpec, facts: ColumnFacts) -> None:
    """Level shifts and unit changes (period-on-period and year-on-year), and one-period spikes or drops (a
    change far out, reverted the next period). A shift in a period the score reads is judged at
    `level_shift.material_mads`: the verdict rests on it. A move tonight's entities all made is no entity's shift;
    a short history's yardstick is widened toward the domain's; an events source's share is judged on its own
    scale, no narrower than its binomial noise, and a sum's periods without an event are the count's to judge
    (`ColumnFacts`)."""
    column, material, signed = facts.column, facts.material, facts.signed
    shared, events, unwritten = facts.shared, facts.events, facts.unwritten
    series = found.series
    raw = series.values[column]
    share = events is not None and is_share(raw)
    level = share_level(raw) if share else log_level(raw, signed)
    step = share_changes(raw) if share else period_changes(raw, signed)
    stick = yardstick(series, step, spec.min_history, domain=facts.domain)
    if stick is None:
        return
    quantum = 0.0 if share else unit_step(raw, signed)
    if quantum > stick.scale:
        stick = dataclasses.replace(stick, scale=quantum)
    noise = share_noise(events) if share and events is not None else np.full(series.length, np.nan)
    seasonal = _seasonal(series, step)
    season_stick = _season_stick(series, seasonal, spec.min_history, 1)
    two_years = _seasonal(series, step, 2)
    # (a grain with a season only: a year's change has none to widen it)
    two_stick = _season_stick(series, two_years, spec.min_history, 2) \
        if season_stick is not None and series.per_year > 1 else None
    judged = range(max(series.judged_from, 1), series.length)
    unusual = _unusual_shared(shared, spec.out_of_range.factor)
    spreads = list((facts.spread or {}).values())
    usual_spread = float(np.median(spreads)) if len(spreads) >= MIN_SAMPLE else math.inf
    skip = set() if unwritten is None else {int(t) for t in np.flatnonzero(unwritten | np.roll(unwritten, 1))}
    worst: dict[str, tuple[float, int, float, float | None]] = {}  # (distance, period, own, tonight's entities)
    dips: dict[int, Dip] = {}  # the spikes found from their end (`_dip_left`), by their period
    seams: set[int] = set()  # the periods whose change is judged against a year and two years earlier's (`_seam`)
    for t in judged:
        if t in skip or not math.isfinite(step[t]):
            continue
        local = _at_least(stick, noise[t])
        far = _far(local, season_stick, step[t], seasonal[t])
        shift_at = spec.level_shift.material_mads if series.back(t) in material else spec.level_shift.threshold_mads
        if abs(far) < min(shift_at, spec.spike.threshold_mads) and season_stick is not None \
                and two_stick is not None and math.isfinite(seasonal[t] + two_years[t]):
            beside = [season_stick.z(seasonal[u]) if u < series.length else math.nan for u in (t - 1, t + 1)]
            seam = _seam(local.z(step[t]), far, (season_stick.z(seasonal[t]), two_stick.z(two_years[t])), beside)
            if seam != far:
                far = seam
                seams.add(t)
        own = _beyond_shared(far, local, step[t], unusual.get(str(series.back(t))))
        peer = _peer_z(step[t], shared, facts.spread, series.back(t), spec.out_of_range.factor)
        wide = (facts.spread or {}).get(str(series.back(t)), 0.0) >= WIDE_SPREAD * usual_spread
        z = own if peer is None else _with_peers(own, peer, wide)
        if abs(z) >= min(shift_at, spec.spike.threshold_mads):
            after = _at_least(stick, noise[t + 1]).z(step[t + 1]) \
                if t + 1 < series.length and math.isfinite(step[t + 1]) else 0.0
            reverted = after * math.copysign(1, own) <= -0.5 * abs(own)
            rule = "spike" if reverted else "level_shift"
            threshold = spec.spike.threshold_mads if reverted else shift_at
            dip = None if reverted or abs(z) < threshold else _dip_left(level, t, local, shift_at, judged.start)
            if dip is not None and abs(dip.z) >= spec.spike.threshold_mads:
                # no shift: the figure is back where it was before a spike or drop, the finding (one the score reads)
                if dip.period >= judged.start and abs(dip.z) > abs(worst.get("spike", (0.0,))[0]):
                    worst["spike"] = (dip.z, dip.period, dip.z, None)
                    dips[dip.period] = dip
                    if worst.get("level_shift", (0.0, -1))[1] == dip.period:
                        del worst["level_shift"]  # (the dip's own move, judged before its return was seen)
                continue
            if abs(z) >= threshold and abs(z) > abs(worst.get(rule, (0.0, 0, 0.0, None))[0]):
                worst[rule] = (z, t, own, peer)
            if reverted and abs(z) >= threshold:
                skip.add(t + 1)
    for rule, (z, t, own, peer) in sorted(worst.items()):
        where = "above" if z > 0 else "below"
        dip = dips.get(t) if rule == "spike" else None
        what = (f"a one-period {'spike' if z > 0 else 'drop'}, reverted in {series.periods[dip.back]}"
                if dip is not None else
                "a one-period spike, reverted the next period" if rule == "spike" and z > 0 else
                "a one-period drop, reverted the next period" if rule == "spike" else
                "and it stays" if t + 1 < series.length else "in the latest period")
        what += _unit_change(shared, series.back(t), spec.out_of_range.factor)
        if rule == "level_shift" and abs(z) < spec.level_shift.threshold_mads:
            what += (f"; the score reads this period, where {spec.level_shift.material_mads:g} MADs are enough to "
                     "ask for it to be confirmed")
        against = (f"its period-on-period changes since {stick.since} "
                   f"({_typically(stick, noise, t, events) if share else _typically(stick)})")
        if t in seams and season_stick is not None and two_stick is not None:
            against = (f"its changes against the same period's change a year and two years earlier since "
                       f"{two_stick.since} (typically ± {season_stick.scale:.1%} and ± {two_stick.scale:.1%}; "
                       f"{abs(stick.z(step[t])):.1f} MADs of its period-on-period changes, which its season widens "
                       f"to ± {stick.scale:.1%})")
        if peer is not None:
            back = str(series.back(t))
            against += (f", and {abs(peer):.1f} MADs {where} tonight's entities' changes into that period (typically "
                        f"{as_percent((shared or {})[back])} ± {max((facts.spread or {})[back], MIN_SCALE):.1%})")
        moved = f"{moved_by(raw, t)} from the period before" if dip is None else \
            _moved_from(raw, t, dip.before, series.periods)
        found.add(rule, (spec.spike if rule == "spike" else spec.level_shift).effect, column,
                  [t], float(raw[t]), abs(z),
                  f"{column} {format_number(float(raw[t]))} in {series.periods[t]} {moved}: "
                  f"{abs(own):.1f} MADs {where} {against}, {what}")


@dataclasses.dataclass(frozen=True)
class Dip:
    """A one-period spike or drop the figure came back from (`_dip_left`)."""

    before: int
    """The last figure before it, the level it left and came back to (a missing figure may lie between)."""
    period: int
    """The spike's or drop's period."""
    z: float
    """How far its figure lies from `before`'s, in MADs of the entity's period-on-period changes."""
    back: int
    """The period that came back."""


def _dip_left(level: np.ndarray, t: int, stick: Yardstick, shift_at: float, judged_from: int) -> Dip | None:
    """Where the move into `t` is the end of a spike or drop the rule could not judge from its start, that spike:
    the move takes the figure back to within `shift_at` MADs of the last figure before the one figure on the other
    side of it, a figure either before the judged span (Lufkin's listings, 453, then 99 in the month before the
    span, then 491, "moved +396% from the period before ... and it stays") or with no figure right before it
    (Harlingen's 1,997 in 2008-05, none in 2008-06, 198 in 2008-07, 1,967 in 2008-08: the doubt fell on the one
    right figure). `shifts` names it where it is a spike's size and judged, and leaves the move out. One figure, as
    the spike rule has it: two off and back are a level that moved twice, each move judged as one."""
    for before in (t - 2, t - 3):
        if before < 0 or not math.isfinite(level[before]) or abs(stick.z(level[t] - level[before])) >= shift_at:
            continue
        inside = [d for d in range(before + 1, t) if math.isfinite(level[d])]
        if len(inside) != 1 or (level[inside[0]] - level[before]) * (level[t] - level[inside[0]]) >= 0:
            return None  # (no figure between, two, or one on the side it came back from: a level that moved twice)
        period = inside[0]
        if period >= judged_from and math.isfinite(level[period - 1]):
            return None  # (judged from its start already: as a spike, or as no spike)
        return Dip(before, period, stick.z(level[period] - level[before]), t)
    return None


_WEEK = 7
"""Periods in a week at a sub-weekly grain (a day): the cycle `stays` takes out, and its longest window."""
_LINE_WEEKS = 8
"""Weeks of periods before the window whose straight line a daily step is judged beyond (`stays`)."""
_CYCLE_ERRORS = 4.0
"""Standard errors a weekday's median level must lie from the week's mean for `_weekly_cycle` to take it out."""
_YEAR_SLACK = 2
"""Days either side of a year earlier (the same weekday, a year less a day back, or the same date) that `stays` looks
for the same move at: a date's weekday moves by one a year (two past a leap day), and a holiday keeps its date or
its weekday."""


def _weekly_cycle(level: np.ndarray) -> np.ndarray:
    """Each period's weekday's own level (log scale) against the week around it: the median over the kept weeks of
    its gap from the centred week's mean, the seven centred on zero. Births run 25% lower at weekends: a day's
    change carries that cycle, and a step of 20% that stays is inside it. Zeros where no weekday's level lies
    `_CYCLE_ERRORS` standard errors of such a median (1.2533 σ / √weeks, σ the gaps' own robust scale) from the
    week's mean (a sensor, a feed without a week): what a cycle of noise would take out is noise."""
    n = len(level)
    centred = np.full(n, np.nan)
    if n > _WEEK:
        centred[_WEEK // 2: n - _WEEK // 2] = np.convolve(level, np.full(_WEEK, 1.0 / _WEEK), "valid")
    gap = level - centred
    phase = np.arange(n) % _WEEK
    with np.errstate(all="ignore"):
        profile = np.array([np.nanmedian(gap[phase == p]) if np.isfinite(gap[phase == p]).any() else np.nan
                            for p in range(_WEEK)])
    if not np.isfinite(profile).all():
        return np.zeros(n)
    profile -= profile.mean()
    noise = robust(gap - profile[phase], "")
    weeks = np.isfinite(gap).sum() / _WEEK
    if noise is None or np.abs(profile).max() < _CYCLE_ERRORS * 1.2533 * noise.scale / math.sqrt(weeks):
        return np.zeros(n)
    return profile[phase]


@functools.cache
def _step_weights(after: int, before: int) -> np.ndarray:
    """Weights over `before + after` periods whose sum with the levels is the mean of the last `after` beyond the
    straight line through the `before` ahead of them, carried on to those periods (a least-squares line's value
    there is a fixed weighting of the levels it is fit to)."""
    x = np.arange(before + after) - (before - 1) / 2.0
    fit = x[:before]
    weights = np.full(before + after, 1.0 / after)
    weights[:before] = -(1.0 / before + float(x[before:].mean()) * fit / float((fit ** 2).sum()))
    return weights


def stays(found: Findings, spec: IntegritySpec, facts: ColumnFacts) -> None:
    """On a sub-weekly grain (a day), a level that stepped over the last 1 to `_WEEK` periods and stays, each too
    small a change for `shifts` to judge alone: the mean of the last m periods beyond the straight line through
    the `_LINE_WEEKS` weeks before them, each weekday's own level taken out (`_weekly_cycle`), against the same
    statistic at every earlier period of the entity's (how far averaging narrows its noise is measured, not
    assumed; a trend steady over those weeks sits on the line). The window furthest out against its threshold
    (`level_shift`'s, `material_mads` where it holds a period the score reads) is judged; a move the same window
    made a year earlier (give or take `_YEAR_SLACK` days), the same way at least half as far, is the calendar's
    (a holiday every entity keeps), not a defect: within a year the night's shared moves are not known
    (`Candidate.shared_changes`, annual grains only). Trials 45-46: on daily births by state, CO's births ×1.2 or ×1.5
    from one to three days before the night all reached act-on."""
    column, material, signed = facts.column, facts.material, facts.signed
    series = found.series
    year = series.per_year
    recent = set(series.periods[-_WEEK:])
    if year <= 52 or any(f.column == column and f.rule in ("level_shift", "spike", "out_of_range")
                         and recent & set(f.periods) for f in found.items):
        return  # (one finding of a move into the last week; a snow day months back leaves the week judged)
    before = _LINE_WEEKS * _WEEK
    n = series.length
    if n < year + _YEAR_SLACK + before + _WEEK + MIN_SAMPLE:
        return  # no year earlier to tell the calendar's move from a defect
    level = log_level(series.values[column], signed)
    cycle = _weekly_cycle(level)
    level = level - cycle
    worst: tuple[float, float, int, float, Yardstick] | None = None
    for after in range(1, _WEEK + 1):
        weights = _step_weights(after, before)
        step = np.full(n, np.nan)
        step[len(weights) - 1:] = np.correlate(level, weights, "valid")
        stick = robust(step[: n - after], series.periods[len(weights) - 1])
        if stick is None or not math.isfinite(step[-1]):
            continue
        z = stick.z(float(step[-1]))
        earlier = (step[n - 1 - year - _YEAR_SLACK: n - year + 1 + _YEAR_SLACK] - stick.median) / stick.scale
        if (np.isfinite(earlier) & (earlier * z > 0) & (np.abs(earlier) >= abs(z) / 2)).any():
            continue
        shift_at = spec.level_shift.material_mads if material & set(range(after)) else spec.level_shift.threshold_mads
        if abs(z) >= shift_at and (worst is None or abs(z) / shift_at > abs(worst[0]) / worst[1]):
            worst = (z, shift_at, after, float(step[-1]), stick)
    if worst is None:
        return
    z, _, after, moved, stick = worst
    raw = series.values[column][n - after:]
    weekdays = ", each weekday's own level taken out" if cycle.any() else ""
    what = ("" if abs(z) >= spec.level_shift.threshold_mads else
            f"; the score reads these periods, where {spec.level_shift.material_mads:g} MADs are enough to ask for "
            "them to be confirmed")
    found.add("level_shift", spec.level_shift.effect, column, list(range(n - after, n)), float(np.nanmean(raw)),
              abs(z), f"{column} has stood {as_percent(moved)} off its line over the last {after} period"
              f"{'s' if after > 1 else ''} ({period_span(series.periods[n - after:])}), beyond the straight line "
              f"through the {before} before{weekdays}: {abs(z):.1f} MADs "
              f"{'above' if z > 0 else 'below'} the same step at its earlier periods since {stick.since} "
              f"({_typically(stick)}), with no such move a year earlier{what}")


def _at_least(stick: Yardstick, noise: float) -> Yardstick:
    """The yardstick of one change, no narrower than that change's own noise (NaN: none known)."""
    return dataclasses.replace(stick, scale=noise) if math.isfinite(noise) and noise > stick.scale else stick


def _typically(stick: Yardstick, noise: np.ndarray | None = None, t: int = 0,
               events: np.ndarray | None = None) -> str:
    """The yardstick as a finding writes it: a percent on the log scale; for a share, on its arcsine-root scale,
    with the binomial noise of the change's two counts of events where that was the wider."""
    if noise is None or events is None:
        return f"typically {as_percent(stick.median)} ± {stick.scale:.1%}"
    text = f"typically {stick.median:+.2f} ± {stick.scale:.2f} on a share's arcsine-root scale"
    if math.isfinite(noise[t]) and noise[t] > stick.scale:
        text += (f"; ± {noise[t]:.2f} by chance alone for a share of {events[t - 1]:.0f} and then {events[t]:.0f} "
                 "events")
    return text


def _before(values: np.ndarray, accumulate: np.ufunc, empty: float) -> np.ndarray:
    """Per period, `accumulate` (np.fmax, np.fmin, np.add) over the periods before it (`empty` before the first)."""
    out = np.full(len(values), empty)
    out[1:] = accumulate.accumulate(values)[:-1]
    return out


def _record_jumps(size: np.ndarray, finite: np.ndarray, top: np.ndarray) -> np.ndarray:
    """Per period, the largest factor by which a value before it broke the record of the values before that one (1
    where none did): a column whose records have jumped by such factors, the people affected by a data breach, a
    loss, a claim, has tails that heavy, and its next record that far above the last is no unit slip (trial 47:
    Illinois's 4 million people in one quarter, 22 times its largest before, after a quarter of 188,211 that was
    56 times its largest before that)."""
    jumps = np.where(finite & (top > 0) & np.isfinite(top), size / np.where(top > 0, top, 1.0), 1.0)
    return _before(np.fmax(jumps, 1.0), np.fmax, 1.0)


def out_of_range(found: Findings, spec: IntegritySpec, facts: ColumnFacts) -> None:
    """A judged value `factor` times beyond every value before it (in size where the column may go negative), or
    below the smallest positive one before it (a column that may not): a unit slip the period it starts, however
    short or noisy the history; a series with fewer than `min_history` earlier values (but `_FEW_VALUES`) at the
    factor squared. Not judged: a proportion staying within [0, 1] (its swings are bounded, not
    slips), or a count whose values before are too few units for a factor to mean a unit. A column that may go
    negative (`ColumnFacts.signed`, or any value below zero) crosses zero: a value near zero is no slip there. A
    column whose records have jumped by more than the factor before is judged at its largest such jump
    (`_record_jumps`)."""
    rule, series, column = spec.out_of_range, found.series, facts.column
    raw = series.values[column]
    finite = np.isfinite(raw)
    signed = facts.signed or bool((raw[finite] < 0).any())
    size = np.abs(raw) if signed else raw
    seen = _before(finite.astype(float), np.add, 0.0)
    top = _before(np.where(finite, size, -np.inf), np.fmax, -np.inf)
    bottom = _before(np.where(finite & (size > 0), size, np.inf), np.fmin, np.inf)
    fractions = _before((finite & ~on_grid_each(np.nan_to_num(raw), 1.0)).astype(float), np.add, 0.0)
    # a series too new for `min_history` values (an annual panel's first years) is judged from `_FEW_VALUES` on,
    # at the square of the factor: a hundredfold step is no market's move whatever its spread
    needed = np.where(seen >= rule.min_history, rule.factor, rule.factor ** 2)
    with np.errstate(all="ignore"):
        needed = np.fmax(needed, _record_jumps(size, finite, top))
        proportion = (not signed) & (top <= 1) & (raw >= 0) & (raw <= 1)
        few_units = (fractions == 0) & (top < needed)
        over = np.where((top > 0) & ~few_units, size / top, 0.0)
        under = np.where((not signed) & np.isfinite(bottom) & (size > 0), bottom / size, 0.0)
        enough = seen >= min(rule.min_history, _FEW_VALUES)
        judged = finite & enough & ~proportion
        far = np.where(judged, np.fmax(over, under) / needed, 0.0)
        # before the judged span, a slip every figure since has kept: the latest figures are in the slipped unit
        # (trial 67: Produc's unemployment x0.01 from 1978 read on 1985's night as a record low rate, pushed to act-on)
        least = np.fmin.accumulate(np.where(finite, size, np.inf)[::-1])[::-1]
        most = np.fmax.accumulate(np.where(finite, size, -np.inf)[::-1])[::-1]
        kept_over = np.where((top > 0) & ~few_units, least / top, 0.0)
        kept_under = np.where((not signed) & np.isfinite(bottom) & (most > 0), bottom / most, 0.0)
        kept = np.where(judged, np.fmax(kept_over, kept_under) / needed, 0.0)
    start = series.judged_from
    far[:start] = kept[:start] if finite[start:].any() else 0.0
    t = int(np.argmax(far))
    if far[t] < 1.0:
        return
    far = far * needed
    value, high = float(raw[t]), (kept_over[t] >= kept_under[t]) if t < start else (over[t] >= under[t])
    side = f"{times(far[t])} times the largest" if high else f"1/{times(far[t])} {BELOW_EVERY}"
    before = (f"of its {int(seen[t])} earlier values since {series.periods[0]} "
              f"({format_number(float(top[t] if high else bottom[t]))}{' in size' if signed else ''})")
    if t < start:
        found.add("out_of_range", rule.effect, column, list(range(t, len(raw))), value, float(far[t]),
                  f"{column} has been {'at least ' if high else 'at most '}{side} {before} in every figure from "
                  f"{series.periods[t]} ({format_number(value)}) to {series.periods[-1]}: the column in another unit "
                  "since then (a unit slip that stayed?)")
        return
    found.add("out_of_range", rule.effect, column, [t], value, float(far[t]),
              f"{column} {format_number(value)} in {series.periods[t]} is {side} {before}: beyond anything the entity "
              "published before (a unit slip?)")


def _moved_from(raw: np.ndarray, t: int, before: int, labels: Sequence[str]) -> str:
    """How the figure at `t` stands against the one at `before`, named (`Dip`)."""
    then, now = float(raw[before]), float(raw[t])
    moved = f"{percent_change(now / then - 1)} off" if then > 0 and now >= 0 else f"against {format_number(then)}"
    return f"stood {moved} {labels[before]}'s"


def moved_by(raw: np.ndarray, t: int) -> str:
    """How the figure moved from the one before, as the figures say: their relative change where the one before is
    above zero, else the figure it moved from. The yardstick's scale (`log_level`) is no figure's change: its
    offset wrote a fall from 2 to 0 as "-99%" (trial 47), and a signed column's asinh step is no percent at all."""
    before, now = float(raw[t - 1]), float(raw[t])
    if before > 0 and now >= 0:
        return f"moved {percent_change(now / before - 1)}"
    return f"moved from {format_number(before)}"
